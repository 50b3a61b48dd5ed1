//! The session list: every session of the journal as the controller lists
//! it (order, title, status, environment and links are the core's), New
//! session, Rename, search, and the open session in the address
//! (`#/s/<id>`), so a reload returns to it and Back works.

use std::str::FromStr;

use crate::i18n::{text, tf, tr, Msg};
use crate::io;
use crate::ui::{handler, Ui};
use leptos::prelude::*;
use lifeline_core::view::{SessionItem, SessionStatus};
use lifeline_core::SessionId;
use lifeline_protocol::PageToController;
use wasm_bindgen::JsCast;

/// What the controller last said about the sessions.
#[derive(Clone, Copy)]
pub struct SessionsUi {
    pub list: RwSignal<Vec<SessionItem>>,
    pub open: RwSignal<Option<SessionId>>,
    /// The search box's text, and the sessions matching it once answered.
    pub query: RwSignal<String>,
    pub matches: RwSignal<Option<Vec<SessionId>>>,
    /// The session whose Delete asks for confirmation.
    pub deleting: RwSignal<Option<SessionId>>,
}

impl SessionsUi {
    /// The listed item of session `id`, if it is listed (tracked). One
    /// function, not one per reader: a closure over the list per reader
    /// cost the page's wasm more than the copy costs here.
    pub fn item(&self, id: SessionId) -> Option<SessionItem> {
        self.list
            .with(|l| l.iter().find(|i| i.session == id).cloned())
    }

    pub fn new() -> SessionsUi {
        SessionsUi {
            list: RwSignal::new(Vec::new()),
            open: RwSignal::new(None),
            query: RwSignal::new(String::new()),
            matches: RwSignal::new(None),
            deleting: RwSignal::new(None),
        }
    }
}

const PREFIX: &str = "#/s/";

/// The session the address names, if any.
pub fn addressed() -> Option<SessionId> {
    let hash = web_sys::window()?.location().hash().ok()?;
    SessionId::from_str(hash.strip_prefix(PREFIX)?).ok()
}

/// Puts `session` in the address: a new history entry when the open
/// session changed, else the entry corrected in place.
fn address(session: SessionId, push: bool) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let url = format!("{PREFIX}{session}");
    if let Ok(history) = window.history() {
        let _ = if push {
            history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
        } else {
            history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
        };
    }
}

/// The controller's list arrived.
pub fn listed(ui: &SessionsUi, open: Option<SessionId>, list: Vec<SessionItem>) {
    let before = ui.open.get_untracked();
    if let Some(open) = open {
        if addressed() != Some(open) {
            address(open, before.is_some() && before != Some(open));
        }
    }
    if before != open {
        ui.open.set(open);
    }
    if ui.list.with_untracked(|l| *l != list) {
        ui.list.set(list);
    }
}

/// The controller answered a search.
pub fn searched(ui: &SessionsUi, query: String, matches: Vec<SessionId>) {
    // An answer to an older query is not shown.
    if ui.query.with_untracked(|q| *q == query) {
        ui.matches.set(Some(matches));
    }
}

/// Back, Forward or an edited address: open the session it names.
pub fn watch_address() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let on_change = wasm_bindgen::closure::Closure::<dyn Fn()>::new(|| {
        if let Some(session) = addressed() {
            io::request(PageToController::OpenSession { session });
        }
    });
    let _ =
        window.add_event_listener_with_callback("hashchange", on_change.as_ref().unchecked_ref());
    on_change.forget();
}

fn status_text(status: SessionStatus) -> &'static str {
    tr(match status {
        SessionStatus::Ready => Msg::SessionReady,
        SessionStatus::Running => Msg::SessionRunning,
        SessionStatus::Failed => Msg::SessionFailed,
        SessionStatus::Uncertain => Msg::SessionUncertain,
        SessionStatus::Archived => Msg::SessionArchived,
    })
}

fn status_key(status: SessionStatus) -> &'static str {
    match status {
        SessionStatus::Ready => "ready",
        SessionStatus::Running => "running",
        SessionStatus::Failed => "failed",
        SessionStatus::Uncertain => "uncertain",
        SessionStatus::Archived => "archived",
    }
}

fn title_of(item: &SessionItem) -> String {
    if item.title.is_empty() {
        tr(Msg::UntitledSession).to_owned()
    } else {
        item.title.clone()
    }
}

#[component]
pub fn SessionList(ui: Ui, open: RwSignal<bool>) -> impl IntoView {
    let s = ui.sessions;
    let search = move |ev: leptos::ev::Event| {
        let query = event_target_value(&ev);
        s.query.set(query.clone());
        s.matches.set(None);
        if !query.trim().is_empty() {
            io::request(PageToController::SearchSessions { query });
        }
    };
    // The list itself is a module of its own, fetched once the pane can be
    // seen and has something to show.
    let wanted = crate::lazy::pane_wanted(ui, io::Pane::Sessions, open);
    view! {
        <nav id="sessions" class="sessions" aria-label=text(Msg::Sessions)>
            {crate::ui::pane_heading(Msg::Sessions, Msg::CloseSessions, open)}
            <button
                type="button"
                class="primary"
                aria-describedby="sessions-note"
                on:click=handler(move |_| {
                    io::request(PageToController::NewSession);
                    open.set(false);
                })
            >
                {text(Msg::NewSession)}
            </button>
            <input
                type="search"
                class="session-search"
                aria-label=text(Msg::SearchSessions)
                placeholder=text(Msg::SearchSessions)
                prop:value=move || s.query.get()
                on:input=handler(search)
            />
            {move || wanted.get().then(|| crate::lazy::shown(move || rows(s, open)))}
            <p id="sessions-note" class="empty">
                {text(Msg::BackgroundNote)}
            </p>
        </nav>
    }
}

/// The sessions listed, in a module of its own ([`crate::lazy`]): a phone
/// shows them only when asked.
#[leptos::wasm_split::wasm_split(sessions, fallible, wasm_split_path = leptos::wasm_split)]
fn rows(
    s: SessionsUi,
    open: RwSignal<bool>,
) -> Result<AnyView, leptos::wasm_split::SplitLoaderError> {
    // The list as it is, or only the sessions the search matched.
    let shown = move || {
        let list = s.list.get();
        match s.matches.get() {
            Some(matches) if !s.query.with(|q| q.trim().is_empty()) => list
                .into_iter()
                .filter(|i| matches.contains(&i.session))
                .collect(),
            _ => list,
        }
    };
    let ids = Memo::new(move |_| shown().into_iter().map(|i| i.session).collect::<Vec<_>>());
    Ok(view! {
        <p class="empty" hidden=move || !ids.with(Vec::is_empty)>
            {move || {
                tr(if s.query.with(|q| q.trim().is_empty()) {
                    Msg::NoSessionYet
                } else {
                    Msg::NoSessionMatches
                })
            }}
        </p>
        // Rows are built again only when the sessions listed change: a
        // row stays, with its focus and a name being typed, while its
        // item changes (its status, its bytes as the journal grows,
        // another session's title in its links).
        <ul class="session-list" hidden=move || ids.with(Vec::is_empty)>
            {move || ids.get().into_iter().map(|id| session_row(s, id, open)).collect_view()}
        </ul>
    }
    .into_any())
}

/// One row (a plain function, not a component: the UI's wasm has a
/// size budget), reading its item from the list.
fn session_row(s: SessionsUi, id: SessionId, open: RwSignal<bool>) -> impl IntoView {
    let read =
        move |f: fn(&SessionItem) -> String| move || s.item(id).as_ref().map(f).unwrap_or_default();
    let current = move || s.open.get() == Some(id);
    let meta = read(|item| {
        let place = match &item.folder {
            Some(name) => tf(Msg::SessionInFolder, &[name]),
            None => tr(Msg::SessionInSandbox).to_owned(),
        };
        format!("{} · {place}", status_text(item.status))
    });
    // What it continued and where it was continued, by the other sessions'
    // titles as they are now.
    let links = move || {
        let (from, into) = s
            .item(id)
            .map(|i| (i.continued_from, i.continued_in))
            .unwrap_or_default();
        let name = |other: SessionId| {
            s.item(other)
                .as_ref()
                .map(title_of)
                .unwrap_or_else(|| tr(Msg::UntitledSession).to_owned())
        };
        [
            from.map(|other| tf(Msg::ContinuedFrom, &[&name(other)])),
            into.map(|other| tf(Msg::ContinuedIn, &[&name(other)])),
        ]
        .into_iter()
        .flatten()
        .map(|l| view! { <span class="session-link">{l}</span> })
        .collect_view()
    };
    let renaming = RwSignal::new(false);
    let draft = RwSignal::new(String::new());
    let save = move || {
        io::request(PageToController::RenameSession {
            session: id,
            title: draft.get_untracked(),
        });
        renaming.set(false);
    };
    view! {
        <li class="session" data-status=move || s.item(id).map(|i| status_key(i.status))>
            <a
                href=format!("{PREFIX}{id}")
                aria-current=move || current().then_some("page")
                on:click=handler(move |_| open.set(false))
            >
                {read(title_of)}
            </a>
            <span class="session-meta">{meta}</span>
            {links}
            {session_actions(s, id)}
            {move || {
                if renaming.get() {
                    Some(
                        view! {
                            <form
                                class="session-rename-form"
                                on:submit=handler(move |ev: leptos::ev::SubmitEvent| {
                                    ev.prevent_default();
                                    save();
                                })
                            >
                                <input
                                    type="text"
                                    aria-label=text(Msg::SessionName)
                                    prop:value=move || draft.get()
                                    on:input=handler(move |ev| draft.set(event_target_value(&ev)))
                                />
                                <button type="submit">{text(Msg::SaveName)}</button>
                                <button type="button" on:click=handler(move |_| renaming.set(false))>
                                    {text(Msg::Cancel)}
                                </button>
                            </form>
                        }
                            .into_any(),
                    )
                } else if current() {
                    Some(
                        view! {
                            <button
                                type="button"
                                class="session-rename"
                                on:click=handler(move |_| {
                                    // The draft starts from the title as it is now.
                                    draft.set(untrack(read(|i| i.title.clone())));
                                    renaming.set(true);
                                })
                            >
                                {text(Msg::Rename)}
                            </button>
                        }
                            .into_any(),
                    )
                } else {
                    None
                }
            }}
        </li>
    }
}

/// The action the session's item offers (Archive or Unarchive: the core
/// decides), and Delete (which asks first), for any session: in its row of
/// the list and in the Details pane.
pub fn session_actions(s: SessionsUi, id: SessionId) -> impl IntoView {
    // Read from the list when shown and when pressed: the row or pane that
    // holds these buttons is not built again when the action changes. A
    // session no longer listed offers none (its row is on its way out).
    let action = move || s.item(id).map(|i| i.action);
    view! {
        <span class="session-actions">
            <button
                type="button"
                on:click=handler(move |_| {
                    if let Some(action) = action() {
                        io::request(PageToController::SessionAction { session: id, action });
                    }
                })
            >
                {move || action().map_or("", |a| tr(crate::i18n::action(a)))}
            </button>
            <button type="button" aria-haspopup="dialog" on:click=handler(move |_| ask_delete(s, id))>
                {text(Msg::Delete)}
            </button>
        </span>
    }
}

/// Delete's confirmation: names the session, says what goes for good and
/// that a folder the user opened is never touched. Its buttons are a
/// `method="dialog"` form's, so Cancel and Escape close it natively (the
/// session asked about stays in `deleting` until the next Delete).
#[component]
pub fn DeleteDialog(s: SessionsUi) -> impl IntoView {
    let title = move || s.item(s.deleting.get()?).as_ref().map(title_of);
    let confirm = move |_| {
        if let Some(session) = s.deleting.get_untracked() {
            io::request(PageToController::DeleteSession { session });
        }
    };
    view! {
        <dialog
            id="delete-session"
            class="delete-session"
            aria-labelledby="delete-title"
            aria-describedby="delete-what"
        >
            <h2 id="delete-title">
                {move || tf(Msg::DeleteQuestion, &[&title().unwrap_or_default()])}
            </h2>
            <p id="delete-what">{text(Msg::DeleteWhat)}</p>
            <form method="dialog" class="confirm">
                <button class="danger" on:click=handler(confirm)>
                    {text(Msg::DeleteSession)}
                </button>
                <button>{text(Msg::Cancel)}</button>
            </form>
        </dialog>
    }
}

/// Opens the confirmation for `id`.
fn ask_delete(s: SessionsUi, id: SessionId) {
    s.deleting.set(Some(id));
    let dialog = document()
        .get_element_by_id("delete-session")
        .and_then(|d| d.dyn_into::<web_sys::HtmlDialogElement>().ok());
    if let Some(d) = dialog {
        let _ = d.show_modal();
    }
}
