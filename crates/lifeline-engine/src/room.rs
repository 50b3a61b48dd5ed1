//! The limit on live runtimes: at most [`MAX_RUNNING_SESSIONS`] sessions
//! hold one at a time (the open session and those working in the
//! background). A session about to start one gets room by setting aside
//! the idle session shown least recently: its runtime stops by its
//! captured identity, its workspace, transcript and files stay, and its
//! next opening starts it again. When every other running session works,
//! the start is refused and the page is told why
//! (`Phrase::RunningLimit`); the card offers no start it would refuse.

use lifeline_core::agent;
use lifeline_core::phrase::Phrase;
use lifeline_core::session::{SessionState, MAX_RUNNING_SESSIONS};
use lifeline_core::SessionId;
use lifeline_protocol::Level;

use crate::Engine;

/// What giving `session` room takes.
enum Room {
    Free,
    /// This idle session gives its runtime up first.
    SetAside(SessionId),
    Full,
}

impl Engine {
    /// Room for `session` (or a new one) to hold a runtime; `keep` stays
    /// running whatever it does. False, said to the page, when there is
    /// none.
    pub(crate) fn make_room(
        &mut self,
        session: Option<SessionId>,
        keep: Option<SessionId>,
    ) -> bool {
        match self.room(session, keep) {
            Room::Free => true,
            Room::SetAside(idle) => {
                if matches!(self.with_sessions(|s| s.set_aside(idle)), Some(Ok(()))) {
                    self.active.remove(&idle);
                    self.list_dirty = true;
                    true
                } else {
                    self.notice("sessions", Level::Warning, Phrase::RunningLimit);
                    false
                }
            }
            Room::Full => {
                self.notice("sessions", Level::Warning, Phrase::RunningLimit);
                false
            }
        }
    }

    /// Whether [`Engine::make_room`] would find room, for the card.
    pub(crate) fn has_room(&self, session: Option<SessionId>, keep: Option<SessionId>) -> bool {
        !matches!(self.room(session, keep), Room::Full)
    }

    fn room(&self, session: Option<SessionId>, keep: Option<SessionId>) -> Room {
        let running = self.running_sessions(session);
        if running.len() < MAX_RUNNING_SESSIONS {
            return Room::Free;
        }
        running
            .into_iter()
            .filter(|s| Some(*s) != keep && !self.working(*s))
            .min_by_key(|s| self.shown.iter().position(|x| x == s))
            .map_or(Room::Full, Room::SetAside)
    }

    /// Sessions holding (or starting, or stopping) a runtime, but `except`.
    fn running_sessions(&self, except: Option<SessionId>) -> Vec<SessionId> {
        let (Some(p), Some(sessions)) = (self.projection(), self.sessions.as_ref()) else {
            return Vec::new();
        };
        p.sessions
            .keys()
            .copied()
            .filter(|s| Some(*s) != except)
            .filter(|s| {
                matches!(
                    sessions.state(*s),
                    Some(
                        SessionState::Running
                            | SessionState::Starting { .. }
                            | SessionState::Cancelling { .. }
                    )
                )
            })
            .collect()
    }

    /// The agent works in `session`: a turn open, a prompt queued, a start
    /// under way, a model request live.
    fn working(&self, session: SessionId) -> bool {
        let turn = self
            .core
            .as_ref()
            .is_some_and(|c| agent::open_turn(c.pending_projection(), session).is_some());
        let trace = self.sessions.as_ref().and_then(|s| s.trace(session));
        let queued = trace.as_ref().is_some_and(|t| !t.queued.is_empty());
        let starting = trace
            .as_ref()
            .is_some_and(|t| !matches!(t.state, SessionState::Running));
        turn || queued || starting || self.live.contains(&session)
    }
}
