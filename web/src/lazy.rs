//! Views whose code is in a module of its own: `#[wasm_split]` marks where
//! the page's module is cut (`cargo xtask build` splits it), and a view
//! behind such a cut is fetched the first time it is shown, not with the
//! page. Each cut is a view most visits never show, a pane's content,
//! which a phone shows only when the pane is opened, or the transcript's
//! blocks, which show nothing before the first turn.
//!
//! The service worker precaches the split modules with the page, so they
//! load offline too. A fetch that fails anyway is said where the view
//! would be, with a way to try again; nothing else on the page waits.

use leptos::prelude::*;
use leptos::wasm_split::SplitLoaderError;
use std::future::Future;
use std::pin::Pin;

use crate::i18n::{text, Msg};
use crate::io::{self, Pane};
use crate::ui::{handler, set_if_changed, Ui};

/// A split view's module, loading.
type Loading = Pin<Box<dyn Future<Output = Result<AnyView, SplitLoaderError>> + Send>>;

/// Shows the view `load` makes once its module has loaded; until then
/// nothing, and if it cannot load, why, with "Try again".
pub fn shown<F>(load: impl Fn() -> F + Send + Sync + 'static) -> impl IntoView
where
    F: Future<Output = Result<AnyView, SplitLoaderError>> + Send + 'static,
{
    // Boxed, so that every split view shares one instance of the
    // suspense and its rendering code rather than one per view.
    loading(Box::new(move || Box::pin(load()) as Loading))
}

fn loading(load: Box<dyn Fn() -> Loading + Send + Sync>) -> impl IntoView {
    let attempt = Trigger::new();
    move || {
        attempt.track();
        let view = load();
        Suspend::new(async move {
            view.await.unwrap_or_else(|_| {
                view! {
                    <p role="alert">{text(Msg::NotLoaded)}</p>
                    <button type="button" on:click=handler(move |_| attempt.notify())>
                        {text(Msg::TryAgain)}
                    </button>
                }
                .into_any()
            })
        })
    }
}

/// Whether a pane's split content is wanted: where the pane is a drawer,
/// the first time `open` is set; where style.css lays it beside the chat,
/// once the status line has settled. What a pane shows comes from the
/// controller's messages, which come later than the page's first render,
/// and its modules fetched before then would compete with the first
/// visit's own (the page's, the controller's and the runtime's). Once
/// wanted, always: a drawer closed keeps what it loaded.
pub fn pane_wanted(ui: Ui, pane: Pane, open: RwSignal<bool>) -> RwSignal<bool> {
    let beside = RwSignal::new(io::is_beside(pane));
    io::on_beside(pane, move || set_if_changed(beside, true));
    wanted_once(move || open.get() || (beside.get() && ui.settled()))
}

/// Whether the transcript's blocks are wanted: once there is something to
/// show (a reload with history), or else once the status line has settled,
/// so that the first turn does not wait for them.
pub fn blocks_wanted(ui: Ui, shown: impl Fn() -> bool + Send + Sync + 'static) -> RwSignal<bool> {
    wanted_once(move || shown() || ui.settled())
}

/// A flag set the first time `now` holds, and never cleared.
fn wanted_once(now: impl Fn() -> bool + Send + Sync + 'static) -> RwSignal<bool> {
    let wanted = RwSignal::new(false);
    Effect::new(move |_| {
        if now() {
            set_if_changed(wanted, true);
        }
    });
    wanted
}
