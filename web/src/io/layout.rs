//! Which of the page's layouts the browser applies: `style.css` shows the
//! details pane beside the chat from 1024 px up, and hides it in a drawer
//! below (`@media (max-width: 1023.98px)`).

use wasm_bindgen::prelude::*;

/// The desktop layout's media query: exactly where style.css's drawer
/// rule does not apply.
const DESKTOP: &str = "not all and (max-width: 1023.98px)";

fn desktop() -> Option<web_sys::MediaQueryList> {
    web_sys::window()?.match_media(DESKTOP).ok().flatten()
}

/// Whether the desktop layout applies now.
pub fn is_desktop() -> bool {
    desktop().is_some_and(|query| query.matches())
}

/// Calls `then` whenever the desktop layout comes to apply (a window
/// widened, a tablet turned), for the page's life.
pub fn on_desktop(then: impl Fn() + 'static) {
    let Some(query) = desktop() else {
        return;
    };
    let listener = Closure::<dyn Fn()>::new(move || {
        if is_desktop() {
            then();
        }
    });
    // A listener that cannot be added leaves the pane to open from its
    // button, as on a phone.
    let _ = query.add_event_listener_with_callback("change", listener.as_ref().unchecked_ref());
    listener.forget();
}
