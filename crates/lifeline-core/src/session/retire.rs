//! What ends or replaces a session: a verdict on an uncertain command,
//! Start fresh, another environment, Archive, Unarchive and Delete, each
//! after the running runtime is stopped by its captured identity.

use super::*;

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

    /// Delete: as archive, and the workspace folder is removed only when
    /// Lifeline owns it. A local folder the user opened is never touched.
    pub fn delete(&mut self, session: SessionId) -> Result<bool, Refusal> {
        self.retire(session)?;
        self.return_queue(session);
        let e = &self.entries[&session];
        let owned = e.environment.owned_by_lifeline();
        if owned {
            self.effects.push_back(SessionEffect::RemoveWorkspace {
                session,
                workspace: e.workspace,
            });
        }
        self.record(SessionRecord::Deleted {
            session,
            workspace_removed: owned,
        });
        self.publish(session);
        Ok(owned)
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
