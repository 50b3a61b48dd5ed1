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
        // A refused attempt proves the command did not start, so another
        // may follow: a runtime that held too many commands takes it once
        // one of them has finished (`room_made`). A refusal for a cancel
        // leaves `cancel` set: never again.
        let ready = matches!(c.outcome, Outcome::Admitted | Outcome::NotDispatched)
            && matches!(c.exposure, Exposure::None | Exposure::Refused { .. })
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
        let capacity = reason == DispatchRefusal::Capacity;
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
        if capacity {
            // Offered again once a command's end on that runtime makes room
            // (`events`), or else on a heartbeat after `room_retry_ms`: the
            // end's room may have been taken, or the order may have reached
            // the runtime before the message that freed its place.
            let runtime = self.working.command(command).map(|c| c.binding.runtime);
            if let Some(link) = runtime.and_then(|r| self.links.get_mut(&r)) {
                link.room_retry_at
                    .get_or_insert(now.plus(self.config.room_retry_ms));
            }
        }
    }

    /// A command on `runtime` ended: the runtime lets it go once its
    /// events are durable (the `EventsDurable` just sent), which frees a
    /// place for what it refused for want of room, offered again after
    /// that message on the same port. Each offer is a new attempt, so
    /// nothing waits on the old retry time: one refused again sets it anew.
    pub(super) fn room_made(&mut self, runtime: RuntimeId, generation: Generation, now: Millis) {
        let waiting = self
            .links
            .get_mut(&runtime)
            .and_then(|l| l.room_retry_at.take());
        if waiting.is_some() {
            self.dispatch_ready(runtime, generation, now);
        }
    }

    /// On a heartbeat: offers again what `runtime` refused for want of
    /// room, once `room_retry_ms` have passed since it did.
    pub(super) fn retry_refused_for_room(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        now: Millis,
    ) {
        let Some(link) = self.links.get_mut(&runtime) else {
            return;
        };
        if link.room_retry_at.is_some_and(|at| at <= now) {
            link.room_retry_at = None;
            self.dispatch_ready(runtime, generation, now);
        }
    }
}
