//! Cancelling one exact command, and the runtime's reply.
//!
//! A cancel names a command and generation, never "whatever runs now"; a
//! command never sent is settled at once; a sent one is asked to stop and
//! given a grace period (see `timers`), and is `cancelled` only on the
//! runtime's own word: a termination proves it stopped, not how it ended.

use crate::id::{CommandId, Generation, Millis, RuntimeId};
use crate::journal::JournalRecord;
use crate::message::{CancelReply, ControllerToRuntime, Settlement};
use crate::outcome::{CancelReason, Outcome, OutcomeEvent};
use crate::projection::{Exposure, RuntimeStatus};

use super::{Controller, ControllerEffect, TimerId};

impl Controller {
    /// Cancels one exact command. Callers have checked its generation.
    pub(super) fn cancel_command(
        &mut self,
        command: CommandId,
        reason: CancelReason,
        now: Millis,
    ) -> Settlement {
        let Some(c) = self.working.command(command) else {
            return Settlement::NotRunning {
                outcome: Outcome::Lost,
            };
        };
        if c.outcome.is_terminal() {
            return Settlement::Settled { outcome: c.outcome };
        }
        if let Some(cs) = c.cancel {
            let gone = self
                .working
                .runtime(c.binding.runtime)
                .is_some_and(|(_, r)| {
                    r.generation == c.binding.generation
                        && matches!(r.status, RuntimeStatus::Gone { .. })
                });
            return if gone {
                Settlement::NotRunning { outcome: c.outcome }
            } else {
                Settlement::Pending { reason: cs.reason }
            };
        }
        let (outcome, exposure, runtime, generation) = (
            c.outcome,
            c.exposure,
            c.binding.runtime,
            c.binding.generation,
        );
        let gone = self
            .working
            .runtime(runtime)
            .is_some_and(|(_, r)| matches!(r.status, RuntimeStatus::Gone { .. }));
        match exposure {
            Exposure::None | Exposure::Refused { .. } => {
                self.record(
                    now,
                    JournalRecord::CancelRequested {
                        command,
                        generation,
                        reason,
                    },
                );
                match self.change(now, command, OutcomeEvent::StoppedBeforeStart(reason)) {
                    Some(r) => Settlement::Settled { outcome: r.after },
                    None => Settlement::Pending { reason },
                }
            }
            Exposure::Exposed { .. } | Exposure::Acknowledged { .. } if gone => {
                Settlement::NotRunning { outcome }
            }
            Exposure::Exposed { .. } | Exposure::Acknowledged { .. } => {
                self.record(
                    now,
                    JournalRecord::CancelRequested {
                        command,
                        generation,
                        reason,
                    },
                );
                if self.is_attached(runtime) {
                    self.send_after(
                        runtime,
                        ControllerToRuntime::Cancel {
                            runtime,
                            generation,
                            command,
                            reason,
                        },
                    );
                }
                self.defer(ControllerEffect::SetTimer {
                    timer: TimerId::CancelGrace { command },
                    at: now.plus(self.config.cancel_grace_ms),
                });
                Settlement::Pending { reason }
            }
        }
    }

    pub(super) fn cancel_reply(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        command: CommandId,
        reply: CancelReply,
        now: Millis,
    ) {
        let Some(c) = self.working.command(command) else {
            return;
        };
        match reply {
            CancelReply::Stopping => {}
            CancelReply::NeverAccepted => {
                // The live runtime of the command's own generation says it
                // never accepted it and has fenced it: proof it did not run.
                if let (Some(cs), Exposure::Exposed { .. }) = (c.cancel, c.exposure) {
                    self.change(now, command, OutcomeEvent::StoppedBeforeStart(cs.reason));
                }
            }
            CancelReply::AlreadyFinished => {
                if c.terminal.is_none() {
                    let after = c.last_seq;
                    self.send(
                        runtime,
                        ControllerToRuntime::Resend {
                            runtime,
                            generation,
                            command,
                            after,
                        },
                    );
                }
            }
        }
    }
}
