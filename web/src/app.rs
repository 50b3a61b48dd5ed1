//! The app shell: session sidebar, notices, transcript and composer, details
//! pane. Thin components over [`Ui`] signals; all IO is in [`host`].
//! Accessible names follow DESIGN.md; the end-to-end tests find things by them.

use crate::host::{self, Connection, NoticeItem, Offline, Persist, Ui};
use crate::profiles::Profiles;
use crate::transcript::{self, CommandView, RequestView, TurnItem, TurnView};
use leptos::prelude::*;
use lifeline_core::{ProviderRequestStatus, TurnId};
use lifeline_protocol::{JournalStatus, Level, Role};

#[component]
pub fn App() -> impl IntoView {
    let ui = Ui::new();
    if let Some(owner) = Owner::current() {
        transcript::init(ui.transcript, owner);
    }
    host::start(ui);
    host::register_service_worker(ui.offline);

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
                <ConnectionStatus ui />
                <Profiles ui />
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
            <SessionList ui open=sessions_open />
            <main class="chat">
                <Notices ui />
                <Transcript ui />
                <Composer ui />
            </main>
            <DetailsPane ui />
        </div>
    }
}

#[component]
fn ConnectionStatus(ui: Ui) -> impl IntoView {
    let connection = Memo::new(move |_| ui.connection());
    view! {
        <p class="connection" role="status" data-state=move || connection.get().state()>
            {move || connection.get().text()}
        </p>
    }
}

#[component]
fn SessionList(ui: Ui, open: RwSignal<bool>) -> impl IntoView {
    let title = ui.transcript.title;
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
            {move || match title.get() {
                Some(title) => {
                    view! {
                        <ul class="session-list">
                            <li aria-current="page">{title}</li>
                        </ul>
                    }
                        .into_any()
                }
                None => view! { <p class="empty">"No session yet."</p> }.into_any(),
            }}
            <p id="sessions-note" class="empty">
                "More than one session arrives in a later build."
            </p>
        </nav>
    }
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Info => "info",
        Level::Warning => "warning",
        Level::Error => "error",
    }
}

#[component]
fn Notices(ui: Ui) -> impl IntoView {
    let unpersisted = move || {
        ui.status.with(|s| {
            s.as_ref()
                .and_then(|s| s.storage.as_ref())
                .is_some_and(|s| !s.persisted)
        })
    };
    let persist_note = move || {
        match ui.persist.get() {
        Persist::Idle => String::new(),
        Persist::Asking => "Asking the browser…".into(),
        Persist::Refused => {
            "The browser declined; this history stays best-effort. Browsers often grant it to installed or frequently used sites.".into()
        }
        Persist::Failed(reason) => format!("Could not ask the browser: {reason}"),
    }
    };
    view! {
        <div class="notices" aria-live="polite">
            {move || {
                ui.failure
                    .get()
                    .map(|reason| {
                        view! {
                            <div class="notice" data-level="error">
                                <p>{format!("Lifeline stopped: {reason}.")}</p>
                                <button type="button" on:click=|_| host::reload()>
                                    "Reload"
                                </button>
                            </div>
                        }
                    })
            }}
            <Show when=unpersisted>
                <div class="notice" data-level="warning">
                    <p>{host::STORAGE_NOTICE}</p>
                    <button
                        type="button"
                        disabled=move || ui.persist.get() == Persist::Asking
                        on:click=|_| host::keep_data()
                    >
                        "Keep data on this device"
                    </button>
                    <p class="notice-detail">{persist_note}</p>
                </div>
            </Show>
            <For
                each=move || ui.notices.get()
                key=|n| (n.key.clone(), n.message.clone(), level_name(n.level))
                let:notice
            >
                <NoticeRow ui notice />
            </For>
        </div>
    }
}

#[component]
fn NoticeRow(ui: Ui, notice: NoticeItem) -> impl IntoView {
    let key = notice.key.clone();
    view! {
        <div class="notice" data-level=level_name(notice.level)>
            <p>{notice.message}</p>
            <button
                type="button"
                class="dismiss"
                on:click=move |_| ui.notices.update(|list| list.retain(|n| n.key != key))
            >
                "Dismiss"
            </button>
        </div>
    }
}

#[component]
fn Transcript(ui: Ui) -> impl IntoView {
    let t = ui.transcript;
    let empty = move || t.turns.with(Vec::is_empty) && t.loose.with(Vec::is_empty);
    view! {
        <crate::export::ImportedView />
        <div
            class="transcript"
            role="log"
            aria-label="Transcript"
            tabindex="0"
            hidden=crate::export::importing
            node_ref=t.log
            on:scroll=move |event| {
                let element = event_target::<web_sys::Element>(&event);
                transcript::log_scrolled(transcript::is_at_bottom(&element));
            }
        >
            <crate::recovery::RecoveryCard ui />
            <crate::recovery::WorkspaceBrowser ui />
            <Show when=empty>
                <p class="empty">
                    "No turns yet. Type a message below. Each line that starts with “$ ” runs as a command in this browser, for example: $ echo hi"
                </p>
            </Show>
            <For each=move || t.turns.get() key=|turn| (turn.id, turn.epoch) let:turn>
                <TurnBlock turn streaming=t.streaming />
            </For>
            <For each=move || t.loose.get() key=|command| (command.id, command.epoch) let:command>
                <CommandBlock command />
            </For>
        </div>
    }
}

#[component]
fn TurnBlock(turn: TurnView, streaming: RwSignal<Option<(TurnId, String)>>) -> impl IntoView {
    let preview = move || {
        streaming.with(|s| {
            s.as_ref()
                .filter(|(t, _)| *t == turn.id)
                .map(|(_, text)| text.clone())
        })
    };
    view! {
        <div class="turn">
            <div class="prompt">
                <p class="who">"You"</p>
                <p class="prompt-text">{move || turn.prompt.get()}</p>
            </div>
            <For each=move || turn.items.get() key=TurnItem::key let:item>
                {match item {
                    TurnItem::Request(request) => view! { <RequestBlock request /> }.into_any(),
                    TurnItem::Command(command) => view! { <CommandBlock command /> }.into_any(),
                }}
            </For>
            {move || {
                preview()
                    .map(|text| {
                        // Not announced as it grows: the recorded reply is.
                        view! {
                            <div class="streaming" role="group" aria-labelledby=format!("streaming-{}", turn.id)>
                                <p class="who" id=format!("streaming-{}", turn.id)>
                                    "Streaming (not yet saved)"
                                </p>
                                <p class="reply-text" aria-live="off">{text}</p>
                            </div>
                        }
                    })
            }}
            {move || {
                turn.status
                    .get()
                    .map(|status| {
                        view! {
                            <div class="reply" data-status=status.as_str()>
                                <p class="who">{format!("Agent · turn {}", status.as_str())}</p>
                                <p class="reply-text">{move || turn.reply.get()}</p>
                            </div>
                        }
                    })
            }}
        </div>
    }
}

/// One provider request of a model turn: its step, durable status, text and
/// the tools it called. Rendered from the journal, like everything else.
#[component]
fn RequestBlock(request: RequestView) -> impl IntoView {
    let status = move || request.status.get();
    view! {
        <div class="request" data-status=move || status().as_str()>
            <p class="who">
                {move || format!("Model · step {} · {}", request.step.get(), status().as_str())}
            </p>
            {move || request.text.get().filter(|t| !t.is_empty()).map(|t| view! { <p class="reply-text">{t}</p> })}
            {move || {
                let calls = request.tool_calls.get();
                (!calls.is_empty()).then(|| view! { <p class="note">{format!("Called: {}", calls.join(", "))}</p> })
            }}
            {move || {
                request
                    .failure
                    .get()
                    .map(|f| {
                        view! {
                            <p class="evidence">{format!("{}: {} {}", f.label, f.message, f.advice)}</p>
                        }
                    })
            }}
            <Show when=move || status() == ProviderRequestStatus::Uncertain>
                <p class="evidence">
                    "No reply was recorded: the model may have answered. It was not asked again."
                </p>
            </Show>
        </div>
    }
}

#[component]
fn CommandBlock(command: CommandView) -> impl IntoView {
    let outcome = move || command.outcome.get();
    view! {
        <div
            class="command"
            role="group"
            aria-label=move || format!("Command: {}", command.line.get())
            data-outcome=move || outcome().as_str()
        >
            <div class="command-head">
                <code class="command-line">{move || command.line.get()}</code>
                <span class="outcome" data-outcome=move || outcome().as_str()>
                    {move || outcome().label()}
                </span>
                {move || {
                    command.exit_code.get().map(|code| view! { <span class="exit">{format!("exit {code}")}</span> })
                }}
            </div>
            {move || command.evidence.get().map(|note| view! { <p class="evidence">{note}</p> })}
            <Show when=move || command.gap.get() || command.trimmed.get()>
                <p class="note">"Earlier output is in the journal and not shown here."</p>
            </Show>
            {move || {
                let n = command.not_shown.get();
                (n > 0).then(|| view! { <p class="note">{format!("{n} bytes of output are stored but not shown")}</p> })
            }}
            // Output is not read out as it streams; the outcome badge is.
            <pre class="output" tabindex="0" aria-live="off" node_ref=command.output></pre>
        </div>
    }
}

#[component]
fn Composer(ui: Ui) -> impl IntoView {
    let following =
        move || ui.role.get() == Some(Role::Follower) && ui.failure.with(Option::is_none);
    let writer = move || {
        ui.role.get() == Some(Role::Leader)
            && ui.started.get()
            && ui.status.with(|s| s.as_ref().is_some_and(|s| s.writer))
    };
    let can_send = move || {
        ui.can_write()
            && !ui.busy()
            && !crate::export::importing()
            && !ui.draft.with(|d| d.trim().is_empty())
    };
    // `busy` covers a starting session too; the lifecycle check keeps Stop
    // usable should a status say `starting` without it.
    let can_stop = move || writer() && (ui.busy() || ui.starting());
    let locked = move || following() || ui.failure.with(Option::is_some);
    view! {
        <form
            class="composer"
            on:submit=move |event| {
                event.prevent_default();
                if can_send() {
                    host::send_prompt();
                }
            }
        >
            <Show when=following>
                <p id="composer-following" class="composer-note">
                    "Another tab is running Lifeline, so this one follows it read-only. Close that tab to take over here."
                </p>
            </Show>
            <p id="composer-refused" class="composer-note" data-level="error" aria-live="polite">
                {move || ui.refused.get()}
            </p>
            <Lifecycle ui />
            <textarea
                aria-label="Message"
                aria-describedby=move || if following() { "composer-following composer-refused" } else { "composer-refused" }
                rows="2"
                placeholder="Message, or $ command"
                disabled=locked
                prop:value=move || ui.draft.get()
                on:input:target=move |event| ui.draft.set(event.target().value())
                on:keydown=move |event: web_sys::KeyboardEvent| {
                    if event.key() == "Enter" && !event.shift_key() && !event.is_composing() {
                        event.prevent_default();
                        if can_send() {
                            host::send_prompt();
                        }
                    }
                }
            ></textarea>
            <div class="composer-actions">
                <button type="submit" class="primary" disabled=move || !can_send()>
                    "Send"
                </button>
                <button type="button" disabled=move || !can_stop() on:click=|_| host::stop_turn()>
                    "Stop"
                </button>
            </div>
        </form>
    }
}

/// The session's lifecycle next to the composer: starting, stopping, and
/// prompts waiting. Status only: in a mounted chat the recovery card inside
/// the transcript is the one place that explains a failure and acts on it
/// (reference 004, requirement 006), so nothing here offers Resume.
#[component]
fn Lifecycle(ui: Ui) -> impl IntoView {
    let lifecycle = Memo::new(move |_| ui.lifecycle());
    let line = move || {
        lifecycle.with(|l| {
            let Some(l) = l else { return String::new() };
            let mut parts = Vec::new();
            match l.state.as_str() {
                "starting" => parts.push("Starting the session…".to_owned()),
                "cancelling" => parts.push("Stopping…".to_owned()),
                "cancelled" => parts.push("Start cancelled.".to_owned()),
                _ => {}
            }
            match l.queued {
                0 => {}
                1 => parts.push("1 message waiting".to_owned()),
                n => parts.push(format!("{n} messages waiting")),
            }
            parts.join(" · ")
        })
    };
    view! {
        <div class="lifecycle" data-state=move || lifecycle.with(|l| l.as_ref().map(|l| l.state.clone()))>
            <p class="lifecycle-line" role="status">{line}</p>
        </div>
    }
}

/// Decimal units, one decimal place: `1.2 MB`, `10.0 GB`.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[component]
fn DetailsPane(ui: Ui) -> impl IntoView {
    let role = move || match ui.role.get() {
        Some(Role::Leader) => "leader (this tab writes the journal)",
        Some(Role::Follower) => "follower (read-only)",
        None => "deciding",
    };
    let runtime = move || {
        ui.status
            .with(|s| match s.as_ref().and_then(|s| s.runtime.as_ref()) {
                Some(r) => {
                    let id = r.runtime.to_string();
                    format!(
                        "{} (generation {}), {}",
                        &id[..8.min(id.len())],
                        r.generation,
                        if r.attached {
                            "attached"
                        } else {
                            "not attached"
                        }
                    )
                }
                None => "none".to_owned(),
            })
    };
    let journal = move || {
        ui.status.with(|s| match s.as_ref().map(|s| &s.journal) {
            Some(JournalStatus::Open { schema_version }) => {
                format!("IndexedDB, schema {schema_version}")
            }
            Some(JournalStatus::Opening) => "opening".to_owned(),
            Some(JournalStatus::Unavailable { reason }) => format!("unavailable: {reason}"),
            None => "not open yet".to_owned(),
        })
    };
    let position = move || {
        ui.status
            .with(|s| s.as_ref().map_or(0, |s| s.position))
            .to_string()
    };
    let storage = move || {
        ui.status
            .with(|s| match s.as_ref().and_then(|s| s.storage.as_ref()) {
                Some(st) => format!(
                    "{} of {} used, {}",
                    bytes(st.usage),
                    bytes(st.quota),
                    if st.persisted {
                        "persisted"
                    } else {
                        "best-effort"
                    }
                ),
                None => "unknown".to_owned(),
            })
    };
    let offline_text = move || match ui.offline.get() {
        Offline::Pending => "preparing".to_owned(),
        Offline::Ready => "ready".to_owned(),
        Offline::Unavailable(reason) => format!("unavailable: {reason}"),
    };
    let connection = move || match ui.connection() {
        Connection::Failed(_) => "failed",
        _ => "",
    };
    view! {
        <aside id="details" class="details" aria-label="Session details" data-connection=connection>
            <h2>"Details"</h2>
            <label for="environment">"Environment"</label>
            <select id="environment">
                <option value="local" selected=true>
                    "Built-in local agent (offline)"
                </option>
            </select>
            <dl>
                <dt>"Role"</dt>
                <dd data-field="role">{role}</dd>
                <dt>"Runtime"</dt>
                <dd data-field="runtime">{runtime}</dd>
                <dt>"Journal"</dt>
                <dd data-field="journal">{journal}</dd>
                <dt>"Position"</dt>
                <dd data-field="position">{position}</dd>
                <dt>"Storage"</dt>
                <dd data-field="storage">{storage}</dd>
                <dt>"Controller restarts"</dt>
                <dd data-field="restarts">{move || ui.restarts.get().to_string()}</dd>
                <dt>"Offline start"</dt>
                <dd data-field="offline">{offline_text}</dd>
            </dl>
            <crate::export::EvidenceControls ui />
        </aside>
    }
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn sizes_read_like_the_brief() {
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(1_200_000), "1.2 MB");
        assert_eq!(bytes(10_000_000_000), "10.0 GB");
    }
}
