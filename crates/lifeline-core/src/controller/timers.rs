//! What each timer does when it fires.
//!
//! A timer names the identities it was armed for and the shell may fire it
//! early, late or after the state moved on, so each arm first checks that it
//! still matches the journal and the live links, and otherwise does nothing
//! (not even arm itself again).

use std::sync::Arc;

use crate::id::Millis;
use crate::journal::{RecoveryKind, RetireCause};
use crate::outcome::{CancelReason, Outcome, OutcomeEvent};
use crate::projection::{Exposure, RuntimeStatus};

use super::{Controller, ControllerEffect, TimerId};

impl Controller {
    pub(super) fn timer_inner(&mut self, timer: TimerId, now: Millis) {
        match timer {
            TimerId::AckTimeout { command, attempt } => {
                let Some(c) = self.working.command(command) else {
                    return;
                };
                if c.exposure == (Exposure::Exposed { attempt })
                    && matches!(c.outcome, Outcome::Admitted | Outcome::NotDispatched)
                {
                    let runtime = c.binding.runtime;
                    let outcomes = self
                        .change(now, command, OutcomeEvent::ExposureUncertain)
                        .into_iter()
                        .collect();
                    let rref = self.runtime_ref(runtime);
                    self.evidence(
                        now,
                        RecoveryKind::AckTimeout,
                        rref,
                        format!(
                            "no ACK for command {command} attempt {attempt} within {} ms; it may have started and will not be dispatched again",
                            self.config.ack_timeout_ms
                        ),
                        outcomes,
                    );
                }
            }
            TimerId::Deadline { command } => {
                let Some(c) = self.working.command(command) else {
                    return;
                };
                if c.outcome.is_terminal() || c.cancel.is_some() {
                    return;
                }
                let deadline = c.binding.budget.deadline;
                if now < deadline {
                    self.timer(timer, deadline);
                    return;
                }
                self.cancel_command(command, CancelReason::Deadline, now);
            }
            TimerId::CancelGrace { command } => {
                let Some(c) = self.working.command(command) else {
                    return;
                };
                if c.outcome.is_terminal() || c.cancel.is_none() {
                    return;
                }
                let (runtime, generation) = (c.binding.runtime, c.binding.generation);
                self.retire_and_terminate(
                    runtime,
                    generation,
                    RetireCause::Escalation,
                    RecoveryKind::CancelEscalation,
                    Some(command),
                    format!(
                        "cancel of command {command} not settled within {} ms; terminating runtime {runtime} generation {generation}; every command on it is listed",
                        self.config.cancel_grace_ms
                    ),
                    now,
                );
            }
            TimerId::Liveness {
                runtime,
                generation,
            } => {
                let Some(link) = self.links.get(&runtime) else {
                    return;
                };
                if !link.attached || link.generation != generation {
                    return;
                }
                let (last_heard, due) = (
                    link.last_heard,
                    link.last_heard.plus(self.config.heartbeat_timeout_ms),
                );
                if now >= due {
                    // Not a loss: a worker in a busy loop is silent with its
                    // port open. Its port closing, or its termination, is.
                    self.watch.went_silent(runtime, last_heard);
                } else {
                    self.timer(timer, due);
                }
            }
            TimerId::ReattachDeadline {
                runtime,
                generation,
            } => {
                let attached = self.is_attached(runtime);
                let current = self.working.runtime(runtime).is_some_and(|(_, r)| {
                    r.generation == generation && r.status == RuntimeStatus::Current
                });
                if attached || !current {
                    return;
                }
                self.retire_and_terminate(
                    runtime,
                    generation,
                    RetireCause::ReattachTimeout,
                    RecoveryKind::ReattachTimeout,
                    None,
                    format!(
                        "runtime {runtime} generation {generation} did not dial back within {} ms; termination requested; its acknowledged commands stay as recorded until it is confirmed gone",
                        self.config.reattach_timeout_ms
                    ),
                    now,
                );
            }
            TimerId::TerminateRetry {
                runtime,
                generation,
            } => {
                let pending = self.working.runtime(runtime).is_some_and(|(_, r)| {
                    r.generation == generation
                        && r.termination_requested
                        && !matches!(r.status, RuntimeStatus::Gone { .. })
                });
                if pending {
                    self.effects.push_back(ControllerEffect::TerminateRuntime {
                        runtime,
                        generation,
                    });
                }
            }
            TimerId::PersistRetry { batch } => {
                if let Some(f) = &self.in_flight {
                    if f.batch.batch == batch {
                        let again = Arc::clone(&f.batch);
                        self.effects.push_back(ControllerEffect::Persist(again));
                    }
                }
            }
        }
    }
}
