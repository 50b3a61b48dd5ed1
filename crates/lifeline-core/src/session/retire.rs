//! What ends or replaces a session: a verdict on an uncertain command,
//! Start fresh, another environment, Archive, Unarchive and Delete, each
//! after the running runtime is stopped by its captured identity.

use super::*;

/// A session's name is at most this long (in characters).
pub const MAX_TITLE_CHARS: usize = 80;

impl Sessions {
    /// Records the user's verdict on an uncertain command.
    pub fn record_verdict(
        &mut self,
        session: SessionId,
        command: CommandId,
        done: bool,
    ) -> Result<(), Refusal> {
        self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        self.record(SessionRecord::Verdict {
            session,
            command,
            done,
        });
        Ok(())
    }

    /// Start fresh: a new session on a new workspace, linked from this one.
    /// The old session's evidence and workspace stay; it is not archived.
    /// `environment` is where the successor runs; `None` keeps this
    /// session's (a local folder stays the same folder: it is the user's,
    /// and a fresh conversation in it is what Start fresh means there).
    pub fn start_fresh(
        &mut self,
        session: SessionId,
        successor: SessionId,
        workspace: WorkspaceId,
        environment: Option<Environment>,
        now: Millis,
    ) -> Result<StartupAttemptId, Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        if let Some(a) = &e.attempt {
            return Err(Refusal::Busy { attempt: a.id });
        }
        let profile = e.selected;
        let environment = environment.unwrap_or_else(|| e.environment.clone());
        self.return_queue(session);
        self.create(successor, workspace, environment, profile);
        self.record(SessionRecord::Succeeded { session, successor });
        self.begin(successor, Purpose::Launch, None, None, now)
    }

    /// The user chose another environment: the work goes on in a new
    /// session there, linked from this one, whose runtime (if any) is
    /// stopped with its captured identity. This session's evidence and
    /// files stay where they are; a folder is never moved or copied.
    pub fn choose_environment(
        &mut self,
        session: SessionId,
        successor: SessionId,
        workspace: WorkspaceId,
        environment: Environment,
        now: Millis,
    ) -> Result<StartupAttemptId, Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        if let Some(a) = &e.attempt {
            return Err(Refusal::Busy { attempt: a.id });
        }
        self.retire(session)?;
        self.start_fresh(session, successor, workspace, Some(environment), now)
    }

    /// Archive: ownership verified, the running runtime stopped with its
    /// captured identity, the workspace and credentials kept.
    pub fn archive(&mut self, session: SessionId) -> Result<(), Refusal> {
        self.retire(session)?;
        self.return_queue(session);
        self.record(SessionRecord::Archived { session });
        self.publish(session);
        Ok(())
    }

    /// Unarchive: the session comes back stopped, as archive left it; a
    /// deleted one never does. Unarchiving one that is not archived
    /// changes nothing.
    pub fn unarchive(&mut self, session: SessionId) -> Result<(), Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        if e.deleted {
            return Err(Refusal::Deleted);
        }
        if e.state == SessionState::Archived {
            self.record(SessionRecord::Unarchived { session });
            self.publish(session);
        }
        Ok(())
    }

    /// Delete, for good: never while the session starts or runs a turn
    /// (the caller offers Stop); its runtime, if any, stopped by its
    /// captured identity; then the tombstone, which tells the journal to
    /// remove everything else of the session in the same transaction. The
    /// sandbox workspace is named for removal once that is durable; a
    /// local folder the user opened is never touched. Returns whether a
    /// workspace is to be removed.
    pub fn delete(&mut self, session: SessionId) -> Result<bool, Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        if e.deleted {
            return Err(Refusal::Deleted);
        }
        if let Some(a) = &e.attempt {
            return Err(Refusal::Busy { attempt: a.id });
        }
        if let Some(c) = &e.cancelling {
            return Err(Refusal::CancellationPending { attempt: c.id });
        }
        if e.active_turn.is_some() || !e.queue.is_empty() {
            return Err(Refusal::TurnRunning);
        }
        if e.state != SessionState::Archived {
            self.retire(session)?;
        }
        let e = &self.entries[&session];
        let workspace = e.environment.owned_by_lifeline().then_some(e.workspace);
        self.record(SessionRecord::Tombstone { session, workspace });
        self.publish(session);
        Ok(workspace.is_some())
    }

    /// The user named the session. Blank names are refused (the first
    /// prompt names a session until it is renamed); long ones are cut.
    pub fn rename(&mut self, session: SessionId, title: &str) -> Result<bool, Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        if e.deleted {
            return Err(Refusal::Deleted);
        }
        let title: String = title.trim().chars().take(MAX_TITLE_CHARS).collect();
        if title.is_empty() {
            return Ok(false);
        }
        self.record(SessionRecord::Renamed { session, title });
        Ok(true)
    }

    /// Another session was opened, and one runtime lives at a time: this
    /// session's runtime, idle, is stopped by its captured identity and the
    /// session waits detached; opening it again (or its next message)
    /// starts it anew on the same workspace. A session that is starting or
    /// running a turn is not set aside: the caller says why not.
    pub fn set_aside(&mut self, session: SessionId) -> Result<(), Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        if let Some(a) = &e.attempt {
            return Err(Refusal::Busy { attempt: a.id });
        }
        if e.active_turn.is_some() || !e.queue.is_empty() {
            return Err(Refusal::TurnRunning);
        }
        if e.state != SessionState::Running {
            return Ok(());
        }
        self.retire(session)?;
        if let Some(e) = self.entries.get_mut(&session) {
            e.state = SessionState::Detached;
        }
        self.publish(session);
        Ok(())
    }

    pub(super) fn retire(&mut self, session: SessionId) -> Result<(), Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        if e.state == SessionState::Archived {
            return Err(Refusal::Archived);
        }
        if let Some(c) = &e.cancelling {
            return Err(Refusal::CancellationPending { attempt: c.id });
        }
        if e.attempt.is_some() {
            self.cancel(session, Millis(0));
            let e = &self.entries[&session];
            if let Some(c) = &e.cancelling {
                return Err(Refusal::CancellationPending { attempt: c.id });
            }
        }
        if let Some(b) = self.entries[&session].binding.clone() {
            self.effects.push_back(SessionEffect::TerminateRuntime {
                attempt: None,
                execution: b.execution,
                generation: b.generation,
                runtime: b.runtime,
            });
        }
        Ok(())
    }
}
