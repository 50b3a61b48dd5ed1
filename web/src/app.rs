//! The app shell: session sidebar, transcript and composer, details pane.
//! Accessible names follow DESIGN.md; the end-to-end tests find things by them.

use crate::host::{self, Connection, Offline};
use leptos::prelude::*;
use lifeline_protocol::JournalStatus;

#[component]
pub fn App() -> impl IntoView {
    let connection = RwSignal::new(Connection::Connecting);
    let offline = RwSignal::new(Offline::Pending);
    host::start(connection);
    host::register_service_worker(offline);

    // Only phone and tablet widths hide these panes; on desktop CSS shows them
    // regardless, so the flags just mean "opened by the user".
    let sessions_open = RwSignal::new(false);
    let details_open = RwSignal::new(false);

    view! {
        <div
            class="shell"
            class:sessions-open=move || sessions_open.get()
            class:details-open=move || details_open.get()
        >
            <header class="topbar">
                <button
                    type="button"
                    class="pane-toggle sessions-toggle"
                    aria-controls="sessions"
                    aria-expanded=move || sessions_open.get().to_string()
                    on:click=move |_| sessions_open.update(|open| *open = !*open)
                >
                    "Sessions"
                </button>
                <h1>"Lifeline"</h1>
                <ConnectionStatus connection />
                <button
                    type="button"
                    class="pane-toggle details-toggle"
                    aria-controls="details"
                    aria-expanded=move || details_open.get().to_string()
                    on:click=move |_| details_open.update(|open| *open = !*open)
                >
                    "Session details"
                </button>
            </header>
            <SessionList open=sessions_open />
            <main class="chat">
                <div class="transcript" role="log" aria-label="Transcript" tabindex="0">
                    <p class="empty">
                        "No session yet. Sessions and the built-in local agent arrive in a later build; this one proves the workers, the journal and offline start."
                    </p>
                </div>
                <Composer />
            </main>
            <DetailsPane connection offline />
        </div>
    }
}

#[component]
fn ConnectionStatus(connection: RwSignal<Connection>) -> impl IntoView {
    let text = move || match connection.get() {
        Connection::Connecting => "Connecting…".to_owned(),
        Connection::Connected { .. } => "Connected".to_owned(),
        Connection::Failed(reason) => format!("Not connected: {reason}"),
    };
    let state = move || match connection.get() {
        Connection::Connecting => "connecting",
        Connection::Connected { .. } => "connected",
        Connection::Failed(_) => "failed",
    };
    view! {
        <p class="connection" role="status" data-state=state>
            {text}
        </p>
    }
}

#[component]
fn SessionList(open: RwSignal<bool>) -> impl IntoView {
    view! {
        <nav id="sessions" class="sessions" aria-label="Sessions">
            <div class="pane-heading">
                <h2>"Sessions"</h2>
                <button
                    type="button"
                    class="pane-close"
                    aria-label="Close sessions"
                    on:click=move |_| open.set(false)
                >
                    "×"
                </button>
            </div>
            <button type="button" class="primary" disabled=true aria-describedby="sessions-note">
                "New session"
            </button>
            <p id="sessions-note" class="empty">
                "Creating sessions is not available in this build yet."
            </p>
        </nav>
    }
}

#[component]
fn Composer() -> impl IntoView {
    view! {
        <form class="composer" on:submit=|event| event.prevent_default()>
            <textarea
                aria-label="Message"
                rows="2"
                disabled=true
                placeholder="Start a session to send a message"
            ></textarea>
            <div class="composer-actions">
                <button type="submit" class="primary" disabled=true>
                    "Send"
                </button>
                <button type="button" disabled=true>
                    "Stop"
                </button>
            </div>
        </form>
    }
}

#[component]
fn DetailsPane(connection: RwSignal<Connection>, offline: RwSignal<Offline>) -> impl IntoView {
    let runtime = move || match connection.get() {
        Connection::Connected { runtime, .. } => {
            format!(
                "{} (generation {})",
                &runtime.id[..8.min(runtime.id.len())],
                runtime.generation
            )
        }
        Connection::Connecting => "starting".to_owned(),
        Connection::Failed(_) => "not reachable".to_owned(),
    };
    let journal = move || match connection.get() {
        Connection::Connected {
            journal: JournalStatus::Open { schema_version },
            ..
        } => format!("IndexedDB, schema {schema_version}"),
        Connection::Connected {
            journal: JournalStatus::Unavailable { reason },
            ..
        } => format!("unavailable: {reason}"),
        _ => "not open yet".to_owned(),
    };
    let offline_text = move || match offline.get() {
        Offline::Pending => "preparing".to_owned(),
        Offline::Ready => "ready".to_owned(),
        Offline::Unavailable(reason) => format!("unavailable: {reason}"),
    };
    view! {
        <aside id="details" class="details" aria-label="Session details">
            <h2>"Details"</h2>
            <label for="environment">"Environment"</label>
            <select id="environment">
                <option value="local" selected=true>
                    "Built-in local agent (offline)"
                </option>
            </select>
            <dl>
                <dt>"Runtime"</dt>
                <dd data-field="runtime">{runtime}</dd>
                <dt>"Journal"</dt>
                <dd data-field="journal">{journal}</dd>
                <dt>"Offline start"</dt>
                <dd data-field="offline">{offline_text}</dd>
            </dl>
        </aside>
    }
}
