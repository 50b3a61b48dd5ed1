//! Which of the page's layouts the browser applies: `style.css` lays the
//! session list beside the chat from 640 px up and the details pane from
//! 1024 px up, and each in a drawer below (`@media (max-width: 639.98px)`
//! and `@media (max-width: 1023.98px)`).

use wasm_bindgen::prelude::*;

/// A pane that is a drawer on narrower screens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    Sessions,
    Details,
}

impl Pane {
    /// Where style.css lays the pane beside the chat: exactly where its
    /// drawer rule does not apply.
    fn beside(self) -> &'static str {
        match self {
            Pane::Sessions => "not all and (max-width: 639.98px)",
            Pane::Details => "not all and (max-width: 1023.98px)",
        }
    }

    fn query(self) -> Option<web_sys::MediaQueryList> {
        web_sys::window()?.match_media(self.beside()).ok().flatten()
    }
}

/// Whether `pane` is laid beside the chat now.
pub fn is_beside(pane: Pane) -> bool {
    pane.query().is_some_and(|query| query.matches())
}

/// Calls `then` whenever `pane` comes to be laid beside the chat (a window
/// widened, a tablet turned), for the page's life.
pub fn on_beside(pane: Pane, then: impl Fn() + 'static) {
    let Some(query) = pane.query() else {
        return;
    };
    let listener = Closure::<dyn Fn()>::new(move || {
        if is_beside(pane) {
            then();
        }
    });
    // A listener that cannot be added leaves the pane to load when it
    // opens, as on a phone.
    let _ = query.add_event_listener_with_callback("change", listener.as_ref().unchecked_ref());
    listener.forget();
}
