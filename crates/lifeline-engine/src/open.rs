//! Many sessions: which one this tab shows, new sessions, names, the
//! session list and its search.
//!
//! The rule for runtimes: up to [`MAX_RUNNING_SESSIONS`] sessions hold a
//! runtime at once. Opening another leaves the open one running in the
//! background (its turn, queued messages and model request go on; the
//! list shows it working) and starts or resumes the one opened. With the
//! most already running, the idle one shown least recently is set aside
//! first: its runtime stops by its captured identity, its workspace,
//! transcript and files stay, and its next opening starts it again on the
//! same workspace. When every running session works, or the open one is
//! still starting its runtime, another is not opened and the page is told
//! why (`Phrase::RunningLimit`, `Phrase::SwitchWhileWorking`).

use lifeline_core::phrase::Phrase;
use lifeline_core::session::{Environment, SessionState, Sessions};
use lifeline_core::session_record::{Purpose, ResumeCause};
use lifeline_core::view::{delta_session, session_list, session_matches, ViewDelta};
use lifeline_core::{Millis, Projection, SessionId, WorkspaceId};
use lifeline_protocol::{ControllerToPage, Level};

use crate::Engine;

/// Search answers name at most this many sessions.
const MAX_MATCHES: usize = 200;

impl Engine {
    /// The page asked for this session (a click, or its address at load).
    pub fn handle_open_session(&mut self, session: SessionId, now: Millis) {
        if self.projection().is_none() {
            // Before recovery: the session to show once the journal is read.
            self.preferred = Some(session);
            return;
        }
        self.list_dirty = true;
        let known = self
            .projection()
            .and_then(|p| p.sessions.get(&session))
            .is_some_and(|s| !s.deleted);
        if !known || self.session == Some(session) {
            return self.publish_sessions();
        }
        if self.core.is_some() && !self.make_room_to_switch(Some(session)) {
            return self.publish_sessions();
        }
        self.show(session);
        self.bring_up(session, now);
        self.pump(now);
    }

    /// The reader chose another language. The shell words phrases in it
    /// from now on; what the page shows worded already is posted again:
    /// the card, the status line, the turns the core ended, and the
    /// notices on the page (their expiry unchanged).
    pub fn handle_reword(&mut self, now: Millis) {
        self.card_dirty = true;
        for shown in self.notices.clone() {
            self.post(ControllerToPage::Notice {
                key: shown.key,
                level: shown.level,
                message: Some(shown.message),
            });
        }
        let ended: Vec<ViewDelta> = match (self.session, self.projection()) {
            (Some(session), Some(p)) => lifeline_core::view::session_deltas(p, session)
                .into_iter()
                .filter(|d| {
                    matches!(
                        d,
                        ViewDelta::Turn {
                            ending: Some(_),
                            ..
                        }
                    )
                })
                .collect(),
            _ => Vec::new(),
        };
        if !ended.is_empty() {
            self.post(ControllerToPage::View {
                reset: false,
                deltas: ended,
            });
        }
        self.pump(now);
    }

    /// New session: its own workspace in the worker sandbox, the open
    /// session's profile to begin with, started at once.
    pub fn handle_new_session(&mut self, now: Millis) {
        if self.role == lifeline_protocol::Role::Follower {
            return self.notice("sessions", Level::Info, Phrase::AnotherTabInControl);
        }
        if self.core.is_none() || self.sessions.is_none() {
            return;
        }
        let profile = self
            .session
            .and_then(|s| self.sessions.as_ref()?.selected_profile(s));
        let (Some(profile), Some(session), Some(workspace)) = (
            profile,
            self.mint(SessionId::from_u128, now),
            self.mint(WorkspaceId::from_u128, now),
        ) else {
            return;
        };
        if !self.make_room_to_switch(None) {
            return self.publish_sessions();
        }
        // The session layer records its creation; the journal opens the
        // session first, and the pump writes both in one batch.
        self.with_sessions(|s| s.create(session, workspace, Environment::Worker, profile));
        if !self.open_session_as(session, workspace, now) {
            return self.pump(now);
        }
        self.show(session);
        self.bring_up(session, now);
        self.pump(now);
    }

    /// The user named a session.
    pub fn handle_rename_session(&mut self, session: SessionId, title: String, now: Millis) {
        if self.role == lifeline_protocol::Role::Follower {
            return self.notice("sessions", Level::Info, Phrase::AnotherTabInControl);
        }
        if let Some(Err(refusal)) = self.with_sessions(|s| s.rename(session, &title)) {
            self.notice("sessions", Level::Warning, Phrase::Refused { refusal });
        }
        self.pump(now);
    }

    /// Sessions whose title or transcript holds every word of `query`.
    pub fn handle_search_sessions(&mut self, query: String) {
        let matches = match self.projection() {
            Some(p) => search(p, &query),
            None => Vec::new(),
        };
        self.post(ControllerToPage::SessionSearch { query, matches });
    }

    /// Room for `target` (a session to open, or a new one) to run beside
    /// the sessions running now; false, said to the page, when there is
    /// none or the open session is still starting its runtime.
    fn make_room_to_switch(&mut self, target: Option<SessionId>) -> bool {
        let starting = self.launching.is_some()
            || self.adopting.is_some()
            || self.rejoining.is_some()
            || self.session.is_some_and(|open| {
                matches!(
                    self.sessions.as_ref().and_then(|s| s.state(open)),
                    Some(SessionState::Starting { .. } | SessionState::Cancelling { .. })
                )
            });
        if starting {
            self.notice("sessions", Level::Warning, Phrase::SwitchWhileWorking);
            return false;
        }
        self.make_room(target, None)
    }

    /// This tab shows `session` from now on: its transcript from scratch,
    /// its card, no workspace-only access of the one before.
    fn show(&mut self, session: SessionId) {
        self.session = Some(session);
        self.shown.retain(|s| *s != session);
        self.shown.push(session);
        self.inspecting = false;
        self.post(ControllerToPage::Workspace { listing: None });
        let deltas = self
            .projection()
            .map(|p| lifeline_core::view::session_deltas(p, session))
            .unwrap_or_default();
        self.post(ControllerToPage::View {
            reset: true,
            deltas,
        });
        self.card_dirty = true;
        self.list_dirty = true;
        self.refresh_facts();
        self.show_live();
    }

    /// Whether the journal holds a turn of `session` that has not ended.
    pub(crate) fn turn_open(&self, session: SessionId) -> bool {
        self.core.as_ref().is_some_and(|c| {
            lifeline_core::agent::open_turn(c.pending_projection(), session).is_some()
        })
    }

    /// Starts the session just opened the way `start_sessions` starts the
    /// first: a new one launches, a detached one resumes on its workspace.
    fn bring_up(&mut self, session: SessionId, now: Millis) {
        // Left running without this engine's hold on it (Start fresh keeps
        // the old session's runtime): stopped first, then resumed.
        let stale = !self.active.contains(&session);
        let turn_open = self.turn_open(session);
        self.with_sessions(|s| {
            if stale && s.state(session) == Some(&SessionState::Running) {
                let _ = s.set_aside(session);
            }
            start_or_resume(s, session, turn_open, now);
        });
    }

    /// Tells the page the session list when it may have changed.
    pub(crate) fn publish_sessions(&mut self) {
        if !std::mem::take(&mut self.list_dirty) {
            return;
        }
        let Some(list) = self.projection().map(session_list) else {
            return;
        };
        self.post(ControllerToPage::Sessions {
            open: self.session,
            list,
        });
    }

    /// Only the open session's part of a batch goes to the page.
    pub(crate) fn open_deltas(&self, p: &Projection, deltas: Vec<ViewDelta>) -> Vec<ViewDelta> {
        let open = self.session;
        deltas
            .into_iter()
            .filter(|d| delta_session(p, d).is_none_or(|s| Some(s) == open))
            .collect()
    }
}

/// The session a tab shows first: the one its address names, else the one
/// opened last; never a deleted one.
/// A new session launches with its profile; a detached one resumes on its
/// retained workspace, or, when another profile was chosen since it ran
/// and no turn of it is open (`turn_open`: nothing to go on with), launches
/// there with the chosen one (nobody asked to resume it); any other waits
/// for the user (or is already up). A resumed session with a choice
/// pending switches once its turn ends.
pub(crate) fn start_or_resume(s: &mut Sessions, session: SessionId, turn_open: bool, now: Millis) {
    match s.state(session) {
        Some(SessionState::New) => {
            let _ = s.begin(session, Purpose::Launch, None, None, now);
        }
        Some(SessionState::Detached) if s.switch_pending(session) && !turn_open => {
            let _ = s.begin(session, Purpose::Launch, None, None, now);
        }
        Some(SessionState::Detached) => {
            let _ = s.begin(
                session,
                Purpose::Resume,
                Some(ResumeCause::Automatic),
                None,
                now,
            );
        }
        _ => {}
    }
}

/// The session a tab shows: `preferred` while it is there, else the one
/// opened last.
pub(crate) fn pick_session(p: &Projection, preferred: Option<SessionId>) -> Option<SessionId> {
    preferred
        .filter(|id| p.sessions.get(id).is_some_and(|s| !s.deleted))
        .or_else(|| opened_last(p, None))
}

/// The session opened last, other than `except` (one being deleted, which
/// is usually the one opened last itself).
pub(crate) fn opened_last(p: &Projection, except: Option<SessionId>) -> Option<SessionId> {
    p.sessions
        .values()
        .filter(|s| !s.deleted && Some(s.session) != except)
        .max_by_key(|s| (s.opened_at, s.session))
        .map(|s| s.session)
}

fn search(p: &Projection, query: &str) -> Vec<SessionId> {
    session_list(p)
        .into_iter()
        .map(|item| item.session)
        .filter(|s| session_matches(p, *s, query))
        .take(MAX_MATCHES)
        .collect()
}

/// Records that change a row of the session list: a session opened, a turn
/// recorded or ended, a lifecycle record, a command's outcome.
pub(crate) fn affects_list(record: &lifeline_core::JournalRecord) -> bool {
    use lifeline_core::JournalRecord as R;
    matches!(
        record,
        R::SessionOpened { .. }
            | R::TurnRecorded { .. }
            | R::TurnFinished { .. }
            | R::Session { .. }
    ) || lifeline_core::recovery::affects_card(record)
}
