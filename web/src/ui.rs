//! The signals the components read and the values in them. The IO in
//! [`crate::io`] writes them; the components only render them and call
//! its actions.

use crate::i18n::{self, Msg};
use crate::transcript::TranscriptSignals;
use crate::worded::{Card, JournalStatus, ProfileSummary, Status};
use leptos::prelude::*;
use lifeline_core::{Generation, RuntimeId};
use lifeline_protocol::{Level, Role, SessionStatus};

#[derive(Clone, Debug, PartialEq)]
pub enum Offline {
    Pending,
    Ready,
    Unavailable(String),
}

/// The page's request for persistent storage.
#[derive(Clone, Debug, PartialEq)]
pub enum Persist {
    Idle,
    Asking,
    Refused,
    Failed(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct NoticeItem {
    pub key: String,
    pub level: Level,
    /// Worded in the locale it arrived in.
    pub message: String,
    /// Raised on every change: a profile save tells a warning that came
    /// after it from one it had seen (`profiles`). The list keys its rows
    /// by `key` alone, so a changed notice keeps its elements.
    pub revision: u64,
}

/// What the status line says.
#[derive(Clone, Debug, PartialEq)]
pub enum Connection {
    Connecting,
    Recovering,
    Connected,
    Following,
    Failed(String),
}

impl Connection {
    /// The status line in the current locale (tracked).
    pub fn text(&self) -> String {
        let msg = match self {
            Connection::Connecting => Msg::Connecting,
            Connection::Recovering => Msg::Recovering,
            Connection::Connected => Msg::Connected,
            Connection::Following => Msg::Following,
            Connection::Failed(reason) => return i18n::tf(Msg::NotConnected, &[reason]),
        };
        i18n::tr(msg).to_owned()
    }

    pub fn state(&self) -> &'static str {
        match self {
            Connection::Connecting => "connecting",
            Connection::Recovering => "recovering",
            Connection::Connected => "connected",
            Connection::Following => "following",
            Connection::Failed(_) => "failed",
        }
    }
}

/// The signals the components read (all `Copy`).
#[derive(Clone, Copy)]
pub struct Ui {
    /// From the leader election; `None` until the lock answered.
    pub role: RwSignal<Option<Role>>,
    /// The current controller has our `Start`.
    pub started: RwSignal<bool>,
    /// Unrecoverable without a reload.
    pub failure: RwSignal<Option<String>>,
    pub status: RwSignal<Option<Status>>,
    pub notices: RwSignal<Vec<NoticeItem>>,
    pub restarts: RwSignal<u32>,
    /// Why the last prompt was not recorded.
    pub refused: RwSignal<Option<String>>,
    pub draft: RwSignal<String>,
    pub offline: RwSignal<Offline>,
    pub persist: RwSignal<Persist>,
    pub transcript: TranscriptSignals,
    /// Every profile as the controller last listed it (never a secret).
    pub profiles: RwSignal<Vec<ProfileSummary>>,
    /// Profiles the controller could not read, phrased for a person.
    pub profile_errors: RwSignal<Vec<String>>,
    /// The controller has sent a profile list since it started.
    pub profiles_loaded: RwSignal<bool>,
    /// The recovery card the core built, if there is anything to recover.
    pub recovery: RwSignal<Option<Card>>,
    /// Workspace-only access: the stopped session's files.
    pub workspace: RwSignal<Option<lifeline_protocol::WorkspaceListing>>,
    /// The profile form's local model (`Provider::Local`'s name and spec,
    /// both empty for none), as the controller built it from a picked file
    /// or as the edited profile has it. Two string signals, not a signal of
    /// `Option<Provider>`: a signal of a type of its own costs the page's
    /// wasm more than this form's code.
    pub local_name: RwSignal<String>,
    pub local_spec: RwSignal<String>,
    /// What the form says about it: its facts, or why a picked file cannot
    /// be a model.
    pub local_said: RwSignal<String>,
    /// Its sampling settings as typed (`Sampling::texts` order): the
    /// controller reads and checks them.
    pub local_sampling: [RwSignal<String>; 4],
    /// The session list and the open session.
    pub sessions: crate::sessions::SessionsUi,
}

impl Ui {
    pub fn new() -> Self {
        Self {
            role: RwSignal::new(None),
            started: RwSignal::new(false),
            failure: RwSignal::new(None),
            status: RwSignal::new(None),
            notices: RwSignal::new(Vec::new()),
            restarts: RwSignal::new(0),
            refused: RwSignal::new(None),
            draft: RwSignal::new(String::new()),
            offline: RwSignal::new(Offline::Pending),
            persist: RwSignal::new(Persist::Idle),
            transcript: TranscriptSignals::new(),
            profiles: RwSignal::new(Vec::new()),
            profile_errors: RwSignal::new(Vec::new()),
            profiles_loaded: RwSignal::new(false),
            recovery: RwSignal::new(None),
            workspace: RwSignal::new(None),
            local_name: RwSignal::new(String::new()),
            local_spec: RwSignal::new(String::new()),
            local_said: RwSignal::new(String::new()),
            local_sampling: [(); 4].map(|_| RwSignal::new(String::new())),
            sessions: crate::sessions::SessionsUi::new(),
        }
    }

    /// The connection as the status line states it (tracked).
    pub fn connection(&self) -> Connection {
        if let Some(reason) = self.failure.get() {
            return Connection::Failed(reason);
        }
        let status = self.status.get();
        match status.as_ref().map(|s| &s.journal) {
            Some(JournalStatus::Unavailable { reason }) => {
                return Connection::Failed(i18n::tf(Msg::JournalUnavailable, &[reason]));
            }
            // The banner above the transcript explains and offers the way on.
            Some(JournalStatus::Gone { .. }) => {
                return Connection::Failed(i18n::tr(Msg::JournalGoneStatus).to_owned())
            }
            Some(JournalStatus::ReadOnly { .. }) => {
                return Connection::Failed(i18n::tr(Msg::JournalReadOnlyStatus).to_owned())
            }
            _ => {}
        }
        if !self.started.get() {
            return Connection::Connecting;
        }
        match self.role.get() {
            None => Connection::Connecting,
            Some(Role::Follower) => Connection::Following,
            Some(Role::Leader) => match status {
                // The controller says when it takes messages
                // (`SessionStatus::takes_messages`); a runtime that went
                // silent, died or is dialing back is shown on its own,
                // beside the composer and in the details.
                Some(s) if s.role == Role::Leader && s.writer => {
                    if s.lifecycle.as_ref().is_some_and(|l| l.takes_messages) {
                        Connection::Connected
                    } else {
                        Connection::Connecting
                    }
                }
                _ => Connection::Recovering,
            },
        }
    }

    /// The status line has settled: connected, following, or failed, no
    /// longer connecting or recovering (tracked).
    pub fn settled(&self) -> bool {
        !matches!(
            self.connection(),
            Connection::Connecting | Connection::Recovering
        )
    }

    /// This tab may send prompts now (tracked).
    pub fn can_write(&self) -> bool {
        self.connection() == Connection::Connected
    }

    pub fn busy(&self) -> bool {
        self.status.with(|s| s.as_ref().is_some_and(|s| s.busy))
    }

    /// The session's lifecycle as the controller last reported it (tracked).
    pub fn lifecycle(&self) -> Option<SessionStatus> {
        self.status
            .with(|s| s.as_ref().and_then(|s| s.lifecycle.clone()))
    }

    /// The runtime the controller reports as not responding, if any
    /// (tracked).
    pub fn unresponsive(&self) -> Option<(RuntimeId, Generation)> {
        self.status.with(|s| {
            s.as_ref()
                .and_then(|s| s.runtime.as_ref())
                .filter(|r| r.not_responding)
                .map(|r| (r.runtime, r.generation))
        })
    }

    /// The session is starting (Stop cancels the start) (tracked).
    pub fn starting(&self) -> bool {
        self.status.with(|s| {
            s.as_ref()
                .and_then(|s| s.lifecycle.as_ref())
                .is_some_and(|l| l.state == "starting")
        })
    }
}

/// The `localStorage` key that keeps the person's dismissal of the
/// storage notice: a preference of this browser, not a fact of the journal.
const STORAGE_NOTICE_KEY: &str = "lifeline.storage-notice-dismissed";

/// Sets `signal` only if `value` differs: a set notifies every reader,
/// equal or not.
pub fn set_if_changed<T: PartialEq + Send + Sync + 'static>(signal: RwSignal<T>, value: T) {
    if signal.with_untracked(|v| *v != value) {
        signal.set(value);
    }
}

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The person dismissed the "storage is best-effort" notice before.
pub fn storage_notice_dismissed() -> bool {
    local_storage()
        .and_then(|s| s.get_item(STORAGE_NOTICE_KEY).ok().flatten())
        .is_some()
}

/// Remembers the dismissal (where storage allows; else for this page).
pub fn dismiss_storage_notice() {
    if let Some(s) = local_storage() {
        let _ = s.set_item(STORAGE_NOTICE_KEY, "1");
    }
}

/// An event handler, boxed: every handler of one event then shares one
/// instance of the code that attaches, clones and removes it, where each
/// closure's own type made one of its own.
pub fn handler<E: 'static>(f: impl FnMut(E) + 'static) -> Box<dyn FnMut(E)> {
    Box::new(f)
}

/// A pane's heading and the button that closes it where it is a drawer
/// (style.css shows the button only there).
pub fn pane_heading(title: Msg, close: Msg, open: RwSignal<bool>) -> impl IntoView {
    view! {
        <div class="pane-heading">
            <h2>{i18n::text(title)}</h2>
            <button
                type="button"
                class="pane-close"
                aria-label=i18n::text(close)
                on:click=handler(move |_| open.set(false))
            >
                "×"
            </button>
        </div>
    }
}
