//! The app shell: session sidebar, notices, transcript and composer, details
//! pane. Thin components over [`Ui`] signals; all IO is in [`io`].
//! Accessible names follow DESIGN.md; the end-to-end tests find things by them.

use crate::i18n::{self, text, tf, tr, Msg};
use crate::io;
use crate::profiles::Profiles;
use crate::transcript;
use crate::ui::{handler, set_if_changed, Connection, Offline, Persist, Ui};
use crate::worded::JournalStatus;
use leptos::prelude::*;
use lifeline_protocol::{Level, PageToController, Role};

#[component]
pub fn App() -> impl IntoView {
    let ui = Ui::new();
    i18n::init(ui.notices);
    if let Some(owner) = Owner::current() {
        transcript::init(ui.transcript, owner);
    }
    io::start(ui);
    // The service worker's install revalidates the whole bundle and hashes
    // each asset (its precache, sw.js), beside the first visit's own work:
    // registered once the status line has settled, it never delays "Connected".
    let registered = StoredValue::new(false);
    Effect::new(move |_| {
        if ui.settled() && !registered.get_value() {
            registered.set_value(true);
            // In a task of its own: the status line shows the settled state
            // first (this effect may run before the one writing the line).
            let offline = ui.offline;
            set_timeout(
                move || io::register_service_worker(offline),
                std::time::Duration::ZERO,
            );
        }
    });
    crate::sessions::watch_address();

    // Only phone and tablet widths hide these panes; on desktop CSS shows them
    // regardless, so the flags just mean "opened by the user".
    let sessions_open = RwSignal::new(false);
    let details_open = RwSignal::new(false);
    let sessions_toggle = NodeRef::<leptos::html::Button>::new();
    let details_toggle = NodeRef::<leptos::html::Button>::new();
    drawer(sessions_open, sessions_toggle, "#sessions .pane-close");
    drawer(details_open, details_toggle, "#details .pane-close");
    let any_open = move || sessions_open.get() || details_open.get();
    let close_all = move || {
        sessions_open.set(false);
        details_open.set(false);
    };

    // The first render waits until the controller has its Start (or cannot
    // get one, or FIRST_RENDER_WAIT_MS have passed). Rendered at once, it
    // is one task of 60-100 ms on a first visit, during which the page
    // cannot hand the controller the Start it waits on: the controller's
    // recovery then runs beside the render instead of after it.
    // Set once: setting it again would render everything again.
    let shown = RwSignal::new(false);
    let show = move || set_if_changed(shown, true);
    Effect::new(move |_| {
        if ui.started.get() || matches!(ui.connection(), Connection::Failed(_)) {
            show();
        }
    });
    set_timeout(show, std::time::Duration::from_millis(FIRST_RENDER_WAIT_MS));

    move || {
        shown.get().then(|| view! {
            // Escape closes whichever drawer is open (focus is inside the page
            // while one is: opening it moved focus into it).
            <div
                on:keydown=handler(move |event: web_sys::KeyboardEvent| {
                    if event.key() == "Escape" && any_open() {
                        close_all();
                    }
                })
                class="shell"
                class:sessions-open=move || sessions_open.get()
                class:details-open=move || details_open.get()
            >
                <header class="topbar">
                    <button
                        type="button"
                        class="pane-toggle sessions-toggle"
                        node_ref=sessions_toggle
                        aria-controls="sessions"
                        aria-expanded=move || sessions_open.get().to_string()
                        on:click=handler(move |_| sessions_open.update(|open| *open = !*open))
                    >
                        {text(Msg::Sessions)}
                    </button>
                    <h1>"Lifeline"</h1>
                    <ConnectionStatus ui />
                    <Profiles ui />
                    // On a phone it reads "Details"; its name stays the pane's.
                    <button
                        type="button"
                        class="pane-toggle details-toggle"
                        node_ref=details_toggle
                        aria-controls="details"
                        aria-label=text(Msg::SessionDetails)
                        aria-expanded=move || details_open.get().to_string()
                        on:click=handler(move |_| details_open.update(|open| *open = !*open))
                    >
                        <span class="long">{text(Msg::SessionDetails)}</span>
                        <span class="short">{text(Msg::Details)}</span>
                    </button>
                </header>
                // A tap outside an open drawer closes it.
                <div class="scrim" hidden=move || !any_open() on:click=handler(move |_| close_all())></div>
                <crate::sessions::SessionList ui open=sessions_open />
                <main class="chat">
                    <Notices ui />
                    <Transcript ui />
                    <Composer ui />
                </main>
                <DetailsPane ui open=details_open />
            </div>
            // Outside the shell: its Escape closes the dialog, not a drawer.
            <crate::sessions::DeleteDialog s=ui.sessions />
        })
    }
}

/// The longest the first render waits for the controller's Start.
const FIRST_RENDER_WAIT_MS: u64 = 250;

/// A drawer's focus: opening it moves focus into it (to its close button),
/// closing it by any way (its button, Escape, a tap outside) returns focus
/// to the toggle that opened it.
fn drawer(open: RwSignal<bool>, toggle: NodeRef<leptos::html::Button>, inside: &'static str) {
    Effect::new(move |was: Option<bool>| {
        let now = open.get();
        if was.is_some_and(|was| was != now) {
            let target: Option<web_sys::HtmlElement> = if now {
                document()
                    .query_selector(inside)
                    .ok()
                    .flatten()
                    .and_then(|e| wasm_bindgen::JsCast::dyn_into(e).ok())
            } else {
                toggle.get_untracked().map(Into::into)
            };
            if let Some(target) = target {
                let _ = target.focus();
            }
        }
        now
    });
}

#[component]
fn ConnectionStatus(ui: Ui) -> impl IntoView {
    let connection = Memo::new(move |_| ui.connection());
    let text = move || connection.get().text();
    view! {
        <p class="connection" role="status" title=text data-state=move || connection.get().state()>
            {text}
        </p>
    }
}

/// A runtime the controller reports as not responding, and the one way
/// to end that: stopping it (the controller has the page terminate its
/// worker; its command is then settled as the core decides).
#[component]
fn RuntimeWatch(ui: Ui) -> impl IntoView {
    let unresponsive = Memo::new(move |_| ui.unresponsive());
    let stop = move |_| {
        if let Some((runtime, generation)) = unresponsive.get_untracked() {
            io::request(PageToController::StopRuntime {
                runtime,
                generation,
            });
        }
    };
    view! {
        <Show when=move || unresponsive.get().is_some()>
            <div class="notice" data-level="warning" role="alert">
                <p>{text(Msg::RuntimeNotResponding)}</p>
                <button type="button" on:click=handler(stop)>{text(Msg::StopRuntime)}</button>
            </div>
        </Show>
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
    let dismissed = RwSignal::new(crate::ui::storage_notice_dismissed());
    let unpersisted = move || {
        !dismissed.get()
            && ui.status.with(|s| {
                s.as_ref()
                    .and_then(|s| s.storage.as_ref())
                    .is_some_and(|s| !s.persisted)
            })
    };
    let persist_note = move || match ui.persist.get() {
        Persist::Idle => String::new(),
        Persist::Asking => tr(Msg::PersistAsking).into(),
        Persist::Refused => tr(Msg::PersistRefused).into(),
        Persist::Failed(reason) => tf(Msg::PersistFailed, &[&reason]),
    };
    view! {
        <div class="notices" aria-live="polite">
            {move || {
                ui.failure
                    .get()
                    .map(|reason| {
                        view! {
                            <div class="notice" data-level="error">
                                <p>{move || tf(Msg::Stopped, &[&reason])}</p>
                                <button type="button" on:click=handler(|_| io::reload())>
                                    {text(Msg::Reload)}
                                </button>
                            </div>
                        }
                    })
            }}
            <JournalBanner ui />
            <Show when=unpersisted>
                <div class="notice" data-level="warning">
                    <p>{text(Msg::StorageNotice)}</p>
                    <button
                        type="button"
                        disabled=move || ui.persist.get() == Persist::Asking
                        on:click=handler(|_| io::keep_data())
                    >
                        {text(Msg::KeepData)}
                    </button>
                    <button
                        type="button"
                        class="dismiss"
                        on:click=handler(move |_| {
                            crate::ui::dismiss_storage_notice();
                            dismissed.set(true);
                        })
                    >
                        {text(Msg::Dismiss)}
                    </button>
                    <p class="notice-detail">{persist_note}</p>
                </div>
            </Show>
            <RuntimeWatch ui />
            // Keyed by the notice, not by its text: a row whose text
            // changes (a retry's countdown, every second) keeps its
            // elements, so a press on Retry now and the focus on it last.
            <For each=move || ui.notices.get() key=|n| n.key.clone() let:notice>
                <NoticeRow ui key=notice.key />
            </For>
        </div>
    }
}

/// What happened to the journal and the one way on: a new journal when it
/// is gone, Repair when it is damaged (Export works meanwhile).
#[component]
fn JournalBanner(ui: Ui) -> impl IntoView {
    let journal = Memo::new(move |_| ui.status.with(|s| s.as_ref().map(|s| s.journal.clone())));
    move || {
        let (reason, gone) = match journal.get() {
            Some(JournalStatus::Gone { reason }) => (reason, true),
            Some(JournalStatus::ReadOnly { reason }) => (reason, false),
            _ => return None,
        };
        let (label, act): (Msg, fn()) = if gone {
            (Msg::NewJournal, io::new_journal)
        } else {
            (Msg::RepairJournal, io::repair_journal)
        };
        Some(view! {
            <div class="notice journal-banner" data-level="error" role="alert">
                <p>{reason}</p>
                <button type="button" class="primary" on:click=handler(move |_| act())>
                    {text(label)}
                </button>
            </div>
        })
    }
}

#[component]
fn NoticeRow(ui: Ui, key: String) -> impl IntoView {
    let shown = {
        let key = key.clone();
        move || {
            ui.notices.with(|list| {
                list.iter()
                    .find(|n| n.key == key)
                    .map(|n| (n.level, n.message.clone()))
            })
        }
    };
    let level = {
        let shown = shown.clone();
        move || shown().map(|(level, _)| level_name(level))
    };
    // A provider request waiting to be sent again can be sent now (the
    // engine's notice key; Stop in the composer ends the wait instead).
    let retry = (key == "controller:provider-retry").then(|| {
        view! {
            <button type="button" on:click=handler(move |_| crate::io::retry_now())>
                {text(Msg::RetryNow)}
            </button>
        }
    });
    view! {
        <div class="notice" data-level=level>
            <p>{move || shown().map(|(_, message)| message)}</p>
            {retry}
            <button
                type="button"
                class="dismiss"
                on:click=handler(move |_| ui.notices.update(|list| list.retain(|n| n.key != key)))
            >
                {text(Msg::Dismiss)}
            </button>
        </div>
    }
}

#[component]
fn Transcript(ui: Ui) -> impl IntoView {
    let t = ui.transcript;
    let empty = move || t.turns.with(Vec::is_empty) && t.loose.with(Vec::is_empty);
    // The blocks are a module of their own, fetched once there is
    // something to show or the first turn could come.
    let wanted = crate::lazy::blocks_wanted(ui, move || !empty());
    // Up anywhere: a press that began in the transcript may end outside it,
    // or in another window (the release never comes: the page loses focus).
    fn released(_: web_sys::Event) {
        transcript::log_pressed(false);
    }
    for event in ["pointerup", "pointercancel", "blur"] {
        let _ = window_event_listener_untyped(event, released);
    }
    view! {
        <crate::export::ImportedView />
        <div
            class="transcript"
            role="log"
            aria-label=text(Msg::Transcript)
            tabindex="0"
            hidden=crate::evidence::importing
            node_ref=t.log
            on:click=handler(transcript::clicked)
            on:pointerdown=handler(|_| transcript::log_pressed(true))
            on:scroll=handler(move |event| {
                let element = event_target::<web_sys::Element>(&event);
                transcript::log_scrolled(&element);
            })
        >
            <crate::recovery::RecoveryCard ui />
            <crate::recovery::WorkspaceBrowser ui />
            <Show when=empty>
                <p class="empty">
                    {text(Msg::NoTurnsYet)}
                </p>
            </Show>
            {move || wanted.get().then(|| crate::lazy::shown(move || transcript::blocks(t)))}
            <transcript::JumpToLatest />
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
    // While a turn runs, Send queues the message: the engine holds it and
    // runs it after the turn (or refuses it with the reason).
    let can_send = move || {
        ui.can_write() && !crate::evidence::importing() && !ui.draft.with(|d| d.trim().is_empty())
    };
    // `busy` covers a starting session too; the lifecycle check keeps Stop
    // usable should a status say `starting` without it.
    let can_stop = move || writer() && (ui.busy() || ui.starting());
    let locked = move || following() || ui.failure.with(Option::is_some);
    view! {
        <form
            class="composer"
            on:submit=handler(move |event: leptos::ev::SubmitEvent| {
                event.prevent_default();
                if can_send() {
                    io::send_prompt();
                }
            })
        >
            <Show when=following>
                <p id="composer-following" class="composer-note">
                    {text(Msg::FollowingNote)}
                </p>
            </Show>
            <p id="composer-refused" class="composer-note" data-level="error" aria-live="polite">
                {move || ui.refused.get()}
            </p>
            <Lifecycle ui />
            <Queue ui can_cancel=writer />
            <textarea
                aria-label=text(Msg::Message)
                aria-describedby=move || if following() { "composer-following composer-refused composer-hint" } else { "composer-refused composer-hint" }
                rows="2"
                placeholder=text(Msg::MessagePlaceholder)
                disabled=locked
                prop:value=move || ui.draft.get()
                on:input:target=move |event| ui.draft.set(event.target().value())
                on:keydown=handler(move |event: web_sys::KeyboardEvent| {
                    if event.key() == "Enter" && !event.shift_key() && !event.is_composing() {
                        event.prevent_default();
                        if can_send() {
                            io::send_prompt();
                        }
                    }
                })
            ></textarea>
            <div class="composer-actions">
                <p id="composer-hint" class="composer-hint">
                    {move || tr(if ui.busy() { Msg::HintQueues } else { Msg::HintSends })}
                </p>
                <button type="submit" class="primary" disabled=move || !can_send()>
                    {text(Msg::Send)}
                </button>
                <button type="button" disabled=move || !can_stop() on:click=handler(|_| io::stop_turn())>
                    {text(Msg::Stop)}
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
                "starting" => parts.push(tr(Msg::StartingSession).to_owned()),
                "cancelling" => parts.push(tr(Msg::Stopping).to_owned()),
                "cancelled" => parts.push(tr(Msg::StartCancelled).to_owned()),
                _ => {}
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

/// The messages waiting for the running turn, in the order they will run;
/// each can be taken back until it starts. The list is the engine's queue:
/// an entry leaves it exactly when the engine runs or drops it.
#[component]
fn Queue(ui: Ui, can_cancel: impl Fn() -> bool + Copy + Send + Sync + 'static) -> impl IntoView {
    // Rebuilt whole when it changes: a handful of lines, and no keyed list
    // (each costs the page's wasm, which has a size budget).
    move || {
        let waiting = ui.status.with(|s| {
            s.as_ref()
                .and_then(|s| s.lifecycle.as_ref())
                .map(|l| l.waiting.clone())
                .unwrap_or_default()
        });
        let count = match waiting.len() {
            0 => return None,
            1 => tr(Msg::OneWaiting).to_owned(),
            n => tf(Msg::ManyWaiting, &[&n.to_string()]),
        };
        // Static inside: this closure runs again on any change, the
        // locale's included.
        let (badge, cancel, locked) = (tr(Msg::Queued), tr(Msg::Cancel), !can_cancel());
        let items = waiting
            .into_iter()
            .map(|w| {
                view! {
                    <li>
                        <span class="queued-badge">{badge}</span>
                        <span class="queued-text">{w.text}</span>
                        <button type="button" disabled=locked on:click=handler(move |_| io::withdraw_prompt(w.turn))>
                            {cancel}
                        </button>
                    </li>
                }
            })
            .collect_view();
        Some(view! {
            <div class="queue">
                <p id="queue-head" class="queue-head">{count}</p>
                <ol class="queue-list" aria-label=tr(Msg::QueuedMessages) aria-describedby="queue-head">
                    {items}
                </ol>
            </div>
        })
    }
}

#[component]
fn DetailsPane(ui: Ui, open: RwSignal<bool>) -> impl IntoView {
    let connection = move || match ui.connection() {
        Connection::Failed(_) => "failed",
        _ => "",
    };
    // Its content is a module of its own, fetched once it can be seen and
    // has something to show.
    let wanted = crate::lazy::pane_wanted(ui, io::Pane::Details, open);
    view! {
        // Focusable, so a click inside it keeps focus in the drawer and
        // Escape reaches the shell's handler.
        <aside
            id="details"
            class="details"
            tabindex="-1"
            aria-label=text(Msg::SessionDetails)
            data-connection=connection
        >
            {crate::ui::pane_heading(Msg::Details, Msg::CloseDetails, open)}
            {move || wanted.get().then(|| crate::lazy::shown(move || details(ui)))}
        </aside>
    }
}

/// The details pane's content, in a module of its own ([`crate::lazy`]):
/// the environment and language pickers, what the app and the open session
/// store, the session's Archive, Unarchive and Delete, the evidence's
/// export and import, and the technical details. None of it is needed to
/// send a first message, and a phone shows it only when asked.
#[leptos::wasm_split::wasm_split(details, fallible, wasm_split_path = leptos::wasm_split)]
fn details(ui: Ui) -> Result<AnyView, leptos::wasm_split::SplitLoaderError> {
    let role = move || {
        tr(match ui.role.get() {
            Some(Role::Leader) => Msg::RoleLeader,
            Some(Role::Follower) => Msg::RoleFollower,
            None => Msg::RoleDeciding,
        })
    };
    let runtime = move || {
        ui.status
            .with(|s| match s.as_ref().and_then(|s| s.runtime.as_ref()) {
                Some(r) => {
                    let id = r.runtime.to_string();
                    tf(
                        Msg::RuntimeLine,
                        &[
                            &id[..8.min(id.len())],
                            &r.generation.to_string(),
                            tr(if r.not_responding {
                                Msg::NotResponding
                            } else if r.attached {
                                Msg::Attached
                            } else {
                                Msg::NotAttached
                            }),
                        ],
                    )
                }
                None => tr(Msg::None).to_owned(),
            })
    };
    let journal = move || {
        ui.status.with(|s| match s.as_ref().map(|s| &s.journal) {
            Some(JournalStatus::Open { schema_version, .. }) => {
                tf(Msg::JournalOpen, &[&schema_version.to_string()])
            }
            Some(JournalStatus::Opening) => tr(Msg::JournalOpening).to_owned(),
            Some(
                JournalStatus::Unavailable { reason }
                | JournalStatus::Gone { reason }
                | JournalStatus::ReadOnly { reason },
            ) => tf(Msg::Unavailable, &[reason]),
            None => tr(Msg::JournalNotOpen).to_owned(),
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
                Some(st) => {
                    let l = i18n::locale();
                    tf(
                        Msg::StorageLine,
                        &[
                            &i18n::bytes(l, st.usage),
                            &i18n::bytes(l, st.quota),
                            tr(if st.persisted {
                                Msg::Persisted
                            } else {
                                Msg::BestEffort
                            }),
                        ],
                    )
                }
                None => tr(Msg::Unknown).to_owned(),
            })
    };
    let offline_text = move || match ui.offline.get() {
        Offline::Pending => tr(Msg::OfflinePreparing).to_owned(),
        Offline::Ready => tr(Msg::OfflineReady).to_owned(),
        Offline::Unavailable(reason) => tf(Msg::Unavailable, &[&reason]),
    };
    // The open session: its storage and its Archive, Unarchive and Delete.
    let current = move || {
        let id = ui.sessions.open.get()?;
        ui.sessions.item(id).map(|i| (i.session, i.bytes))
    };
    // Its actions are built again only for another session: a keyboard
    // user's focus on them outlives its bytes growing with every event.
    // (None or one: a vector, as the session list's memo, so that both
    // share one memo's code.)
    let listed = Memo::new(move |_| current().map(|(id, _)| id).into_iter().collect::<Vec<_>>());
    Ok(view! {
        <crate::environment::EnvironmentSelect ui />
        <i18n::LanguageSelect />
        <dl>
            <dt>{text(Msg::Storage)}</dt>
            <dd data-field="storage">{storage}</dd>
            <dt>{text(Msg::SessionStorage)}</dt>
            <dd data-field="session-storage">
                {move || current().map(|(_, b)| i18n::bytes(i18n::locale(), b)).unwrap_or_default()}
            </dd>
            <dt>{text(Msg::OfflineStart)}</dt>
            <dd data-field="offline">{offline_text}</dd>
            <dt>{text(Msg::Tokens)}</dt>
            <dd data-field="tokens">
                {move || i18n::tokens(i18n::locale(), Msg::TokensInOut, ui.transcript.tokens.get()).unwrap_or_else(|| tr(Msg::Unknown).to_owned())}
            </dd>
        </dl>
        {move || listed.get().into_iter().map(|id| crate::sessions::session_actions(ui.sessions, id)).collect_view()}
        <crate::export::EvidenceControls ui />
        // What a first-time user does not need, one click away.
        <details class="technical">
            <summary>{text(Msg::TechnicalDetails)}</summary>
            <dl>
                <dt>{text(Msg::Role)}</dt>
                <dd data-field="role">{role}</dd>
                <dt>{text(Msg::Runtime)}</dt>
                <dd data-field="runtime">{runtime}</dd>
                <dt>{text(Msg::Journal)}</dt>
                <dd data-field="journal">{journal}</dd>
                <dt>{text(Msg::Position)}</dt>
                <dd data-field="position">{position}</dd>
                <dt>{text(Msg::ControllerRestarts)}</dt>
                <dd data-field="restarts">{move || ui.restarts.get().to_string()}</dd>
            </dl>
        </details>
    }
    .into_any())
}
