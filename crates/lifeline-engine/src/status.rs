//! The status line: who writes, the journal, the runtime, storage, and the
//! session's lifecycle, sent to the page only when it changed.

use lifeline_core::agent;
use lifeline_core::session::SessionState;
use lifeline_core::session_record::{Purpose, ResumeCause};
use lifeline_core::Liveness;
use lifeline_protocol::{ControllerToPage, RuntimeStatus, SessionStatus, Status};

use crate::Engine;

impl Engine {
    /// Says where things stand, after every input; unchanged lines are
    /// dropped by the shell, which compares what it would send.
    pub(crate) fn publish_status(&mut self) {
        let (mut lifecycle, starting) = self.lifecycle_status();
        let (writer, runtime, busy, position) = match (&self.core, &self.fold) {
            (Some(core), _) if self.stopped.is_none() => {
                let p = core.projection();
                let runtime = self
                    .session
                    .and_then(|s| p.sessions.get(&s))
                    .and_then(|s| p.workspaces.get(&s.workspace))
                    .and_then(|lease| p.leases.get(lease))
                    .and_then(|l| l.current())
                    .map(|r| {
                        let liveness = core.liveness(r.runtime);
                        RuntimeStatus {
                            runtime: r.runtime,
                            generation: r.generation,
                            attached: liveness != Liveness::Detached,
                            not_responding: matches!(liveness, Liveness::NotResponding { .. }),
                        }
                    });
                let busy = self
                    .session
                    .is_some_and(|s| agent::busy(core.pending_projection(), s));
                (true, runtime, busy || starting, p.position)
            }
            (_, fold) => {
                let busy = fold
                    .as_ref()
                    .zip(self.session)
                    .is_some_and(|(p, s)| agent::busy(p, s));
                (false, None, busy, fold.as_ref().map_or(0, |p| p.position))
            }
        };
        if let (Some(l), Some(r)) = (lifecycle.as_mut(), runtime.as_ref()) {
            l.takes_messages |= r.attached;
        }
        let status = Status {
            role: self.role,
            writer,
            journal: self.journal.clone(),
            session: self.session,
            runtime,
            storage: self.storage.clone(),
            busy,
            lifecycle,
            position,
        };
        // The shell drops a status identical to the last one it sent.
        self.post(ControllerToPage::Status(Box::new(status)));
    }

    /// The lifecycle part of the status line, and whether a start or a
    /// cancel is under way (the session is busy).
    fn lifecycle_status(&self) -> (Option<SessionStatus>, bool) {
        let (Some(s), Some(session)) = (self.sessions.as_ref(), self.session) else {
            return (None, false);
        };
        let Some(trace) = s.trace(session) else {
            return (None, false);
        };
        let (state, can_resume, busy) = match &trace.state {
            SessionState::New => ("new", false, false),
            SessionState::Starting { .. } => ("starting", false, true),
            SessionState::Running => ("running", false, false),
            SessionState::Detached => ("detached", true, false),
            SessionState::Cancelling { .. } => ("cancelling", false, true),
            SessionState::Cancelled => ("cancelled", trace.token.is_some(), false),
            SessionState::Failed(_) => ("failed", trace.token.is_some(), false),
            SessionState::Archived => ("archived", false, false),
        };
        let status = SessionStatus {
            state: state.into(),
            // Whether its runtime is attached is added by the caller.
            takes_messages: match trace.state {
                SessionState::Running
                | SessionState::Failed(_)
                | SessionState::Cancelled
                | SessionState::Archived => true,
                SessionState::Starting {
                    purpose: Purpose::Launch,
                    ..
                } => trace.token.is_some(),
                // A resume the person asked for, by Resume or a message,
                // in a page that was taking them; the resume a controller
                // starts by itself (after a reload) is this page's first
                // start.
                SessionState::Starting {
                    purpose: Purpose::Resume,
                    ..
                } => matches!(
                    trace.resume_cause,
                    Some(ResumeCause::User | ResumeCause::Prompt)
                ),
                _ => false,
            },
            can_resume,
            selected_profile: s.selected_profile(session),
            execution_profile: s
                .binding(session)
                .and_then(|b| b.profile.as_ref().map(|p| p.id)),
            queued: trace.queued.len(),
            waiting: self.waiting(&trace.queued),
            folder: s
                .environment(session)
                .and_then(lifeline_core::environment::FolderRef::of),
        };
        (Some(status), busy)
    }
}
