//! Dispatch and acknowledgement.
//!
//! A dispatch is recorded as exposed before it is sent, so that after a crash
//! the journal can say "may have started" instead of guessing; only the
//! runtime's ACK (or evidence implying one) makes a command `dispatched`, and
//! a refusal from the runtime proves it did not run.

use crate::id::{AttemptId, CommandId, Generation, Millis, RuntimeId};
use crate::journal::{AckSource, DispatchRefusal, JournalRecord};
use crate::message::{ControllerToRuntime, DispatchOrder};
use crate::outcome::{Outcome, OutcomeEvent};
use crate::projection::{Exposure, RuntimeStatus};

use super::{Controller, ControllerEffect, TimerId};

impl Controller {
    pub(super) fn try_dispatch(&mut self, command: CommandId, now: Millis) {
        let Some(c) = self.working.command(command) else {
            return;
        };
        let ready = matches!(c.outcome, Outcome::Admitted | Outcome::NotDispatched)
            && c.exposure == Exposure::None
            && c.cancel.is_none();
        let (runtime, generation) = (c.binding.runtime, c.binding.generation);
        if !ready || !self.is_attached(runtime) {
            return;
        }
        let Some((_, view)) = self.working.runtime(runtime) else {
            return;
        };
        if view.generation != generation || view.status != RuntimeStatus::Current {
            return;
        }
        let execution = view.execution;
        let binding = c.binding.clone();
        let attempt = self.mint(now, AttemptId::from_u128);
        // Written before the send: after this, a crash means "may have started".
        self.record(
            now,
            JournalRecord::DispatchExposed {
                command,
                attempt,
                runtime,
                generation,
            },
        );
        self.send_after(
            runtime,
            ControllerToRuntime::Dispatch {
                runtime,
                generation,
                order: DispatchOrder {
                    command,
                    attempt,
                    execution,
                    binding,
                },
            },
        );
        self.defer(ControllerEffect::SetTimer {
            timer: TimerId::AckTimeout { command, attempt },
            at: now.plus(self.config.ack_timeout_ms),
        });
    }

    pub(super) fn dispatch_ready(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        now: Millis,
    ) {
        for command in self.working.commands_on(runtime, generation) {
            self.try_dispatch(command, now);
        }
    }

    pub(super) fn acknowledge(
        &mut self,
        command: CommandId,
        attempt: AttemptId,
        via: AckSource,
        now: Millis,
    ) {
        self.record(
            now,
            JournalRecord::Acknowledged {
                command,
                attempt,
                via,
            },
        );
        let outcome = self.working.outcome(command);
        if matches!(
            outcome,
            Some(Outcome::Admitted | Outcome::NotDispatched | Outcome::MayHaveStarted)
        ) {
            self.change(now, command, OutcomeEvent::Acknowledged);
        }
    }

    pub(super) fn refused(
        &mut self,
        command: CommandId,
        attempt: AttemptId,
        reason: DispatchRefusal,
        now: Millis,
    ) {
        self.record(
            now,
            JournalRecord::DispatchRefused {
                command,
                attempt,
                reason,
            },
        );
        if matches!(
            self.working.outcome(command),
            Some(Outcome::Admitted | Outcome::NotDispatched)
        ) {
            self.change(now, command, OutcomeEvent::DispatchRefused);
        }
    }
}
