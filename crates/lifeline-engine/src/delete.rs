//! Archive, Unarchive and Delete for any session of the list, and the
//! cleanup a delete leaves for after its tombstone is durable.
//!
//! Delete is for good and ownership-checked: only a session this journal
//! holds, never while anything of it runs (the page is told why and Stop is
//! there). The session layer stops its idle runtime by captured identity
//! and writes the tombstone; the core plans what the journal removes with
//! it (`Projection::purge_plan`) and the shell removes it in the
//! tombstone's own transaction. The sandbox workspace is removed from OPFS
//! only after that commit, and every start tries again while the
//! tombstone still names it; a folder the user opened is never touched.

use lifeline_core::agent;
use lifeline_core::message::ClientRequest;
use lifeline_core::phrase::Phrase;
use lifeline_core::recovery::Action;
use lifeline_core::session::Refusal;
use lifeline_core::session_record::SessionRecord;
use lifeline_core::view::session_offers;
use lifeline_core::{JournalRecord, Millis, PersistBatch, SessionId, WorkspaceId};
use lifeline_protocol::{Level, Role};

use crate::effect::{Effect, TimerKey};
use crate::Engine;

/// A failed workspace removal is tried again this much later (a runtime
/// that was just stopped may still hold its files open), then at the next
/// start.
const CLEANUP_RETRY_MS: u64 = 2_000;

impl Engine {
    /// Archive or Unarchive from the session list or the Details pane, for
    /// any session, open or not.
    /// Only an action the session's list item offers now runs
    /// (`view::session_offers`), as only an action the card offers does.
    pub fn handle_session_action(&mut self, session: SessionId, action: Action, now: Millis) {
        if self.role == Role::Follower {
            return self.notice("sessions", Level::Info, Phrase::AnotherTabInControl);
        }
        let offered = self
            .projection()
            .is_some_and(|p| session_offers(p, session) == Some(action));
        if !offered {
            return self.notice(
                "sessions",
                Level::Warning,
                Phrase::ActionNotPossible {
                    action,
                    reason: Box::new(Phrase::NotOffered),
                },
            );
        }
        let archive = action == Action::Archive;
        if archive && self.session == Some(session) {
            // Archived sessions cannot be inspected (004 005).
            self.close_workspace_view();
        }
        let result = self.with_sessions(|s| {
            if archive {
                s.archive(session)
            } else {
                s.unarchive(session)
            }
        });
        match result {
            Some(Err(refusal)) => {
                self.notice("sessions", Level::Warning, Phrase::Refused { refusal })
            }
            Some(Ok(())) if archive => {
                self.active.remove(&session);
                self.abort_left_request(session, now);
            }
            _ => {}
        }
        self.list_dirty = true;
        self.card_dirty = true;
        self.pump(now);
    }

    /// Delete, after the page's confirmation.
    pub fn handle_delete_session(&mut self, session: SessionId, now: Millis) {
        if self.role == Role::Follower {
            return self.notice("sessions", Level::Info, Phrase::AnotherTabInControl);
        }
        let Some(p) = self.core.as_ref().map(|c| c.pending_projection()) else {
            return;
        };
        let refusal = match p.sessions.get(&session) {
            None => Some(Refusal::UnknownSession),
            Some(s) if s.deleted => Some(Refusal::Deleted),
            Some(_) => None,
        };
        if let Some(refusal) = refusal {
            return self.notice("sessions", Level::Warning, Phrase::Refused { refusal });
        }
        let open = self.session == Some(session);
        let running = agent::open_turn(p, session).is_some()
            || p.session_busy(session)
            || (open
                && (self.held_prompts().next().is_some()
                    || self.launching.is_some()
                    || self.adopting.is_some()
                    || self.rejoining.is_some()))
            || self.live.contains(&session);
        if running {
            return self.notice("sessions", Level::Warning, Phrase::AgentWorkingStopFirst);
        }
        if open {
            self.close_workspace_view();
        }
        match self.with_sessions(|s| s.delete(session)) {
            Some(Ok(_)) => {}
            Some(Err(Refusal::Busy { .. } | Refusal::TurnRunning)) => {
                return self.notice("sessions", Level::Warning, Phrase::AgentWorkingStopFirst)
            }
            Some(Err(refusal)) => {
                return self.notice("sessions", Level::Warning, Phrase::Refused { refusal })
            }
            None => return,
        }
        self.active.remove(&session);
        self.list_dirty = true;
        if open {
            // The tab goes on with the session used last, or a new one.
            let next = self.core.as_ref().and_then(|c| {
                let p = c.pending_projection();
                crate::open::opened_last(p, Some(session))
            });
            return match next {
                Some(next) => self.handle_open_session(next, now),
                None => self.handle_new_session(now),
            };
        }
        self.pump(now);
    }

    /// A durable batch with tombstones: their sandbox workspaces may go now.
    pub(crate) fn tombstones_written(&mut self, batch: &PersistBatch) {
        if batch.purge.is_some() {
            // The purge wrote the only snapshot, at the batch's end.
            if let Some(last) = batch.entries.last() {
                self.last_snapshot = last.position;
            }
        }
        for e in &batch.entries {
            if let JournalRecord::Session {
                record:
                    SessionRecord::Tombstone {
                        session,
                        workspace: Some(workspace),
                    },
            } = &e.record
            {
                self.effects.push_back(Effect::RemoveWorkspace {
                    session: *session,
                    workspace: *workspace,
                });
            }
        }
    }

    /// At the start of leading: workspaces deleted sessions still name.
    pub(crate) fn resume_cleanups(&mut self) {
        let Some(p) = self.core.as_ref().map(|c| c.pending_projection()) else {
            return;
        };
        let pending: Vec<(SessionId, WorkspaceId)> = p
            .sessions
            .values()
            .filter_map(|s| Some((s.session, s.clean?)))
            .collect();
        for (session, workspace) in pending {
            self.effects
                .push_back(Effect::RemoveWorkspace { session, workspace });
        }
    }

    /// The shell removed (or failed to remove) a deleted session's sandbox
    /// workspace.
    pub fn handle_workspace_removed(
        &mut self,
        session: SessionId,
        result: Result<(), String>,
        now: Millis,
    ) {
        let pending = self
            .core
            .as_ref()
            .and_then(|c| c.pending_projection().sessions.get(&session))
            .is_some_and(|s| s.clean.is_some());
        if !pending || self.role == Role::Follower {
            return;
        }
        match result {
            Ok(()) => {
                let record = SessionRecord::WorkspaceRemoved { session };
                let result = self.submit(
                    |request| ClientRequest::RecordSession { request, record },
                    now,
                );
                self.answered(result);
            }
            Err(detail) => {
                self.notice(
                    "workspace",
                    Level::Warning,
                    Phrase::WorkspaceNotDeleted { detail },
                );
                if !self.cleanup_retried.contains(&session) {
                    self.cleanup_retried.push(session);
                    self.effects.push_back(Effect::SetTimer {
                        key: TimerKey::Cleanup(session),
                        at: Millis(now.0 + CLEANUP_RETRY_MS),
                    });
                }
            }
        }
        self.pump(now);
    }

    /// The retry of a failed removal.
    pub(crate) fn retry_cleanup(&mut self, session: SessionId) {
        let workspace = self
            .core
            .as_ref()
            .and_then(|c| c.pending_projection().sessions.get(&session)?.clean);
        if let Some(workspace) = workspace {
            self.effects
                .push_back(Effect::RemoveWorkspace { session, workspace });
        }
    }
}
