//! Ending a generation: retirement, termination and its retries, and the
//! confirmed loss that settles the commands it held.
//!
//! Retiring stops new work for a generation and settles what was never sent
//! to it; only a confirmed end (`runtime_gone`) settles what may be running,
//! because a retired worker may still be alive, dial back (see `link`) and
//! deliver its evidence. Terminations are retried until confirmed: a runtime
//! given up on would leave its commands `running` forever.

use crate::id::{CommandId, Generation, LeaseId, Millis, RuntimeId};
use crate::journal::{GoneCause, JournalRecord, RecoveryKind, RetireCause, RuntimeRef};
use crate::outcome::{Outcome, OutcomeEvent};
use crate::projection::{Exposure, RuntimeStatus};

use super::evidence::clip;
use super::link::Link;
use super::{Controller, ControllerEffect, ControllerError, TimerId};

impl Controller {
    pub(super) fn cleanup_failed(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        reason: &str,
        now: Millis,
    ) -> Result<(), ControllerError> {
        let (_, status) = self.fenced_runtime(runtime, generation)?;
        let requested = self
            .working
            .runtime(runtime)
            .is_some_and(|(_, r)| r.termination_requested);
        // A failure to carry out a termination nobody asked for is no
        // evidence of anything (the page's word, see `watch`).
        if matches!(status, RuntimeStatus::Gone { .. }) || !requested {
            return Ok(());
        }
        let outcomes = self
            .non_terminal_on(runtime, generation)
            .into_iter()
            .filter_map(|c| self.unchanged(c))
            .collect();
        let attempts = {
            let link = self
                .links
                .entry(runtime)
                .or_insert_with(|| Link::new(generation, now));
            link.terminate_attempts += 1;
            link.terminate_attempts
        };
        let max = self.config.max_terminate_attempts;
        // Never giving up: until the runtime is confirmed gone (or dials back
        // with its evidence) its commands cannot settle, so a runtime that
        // died while its termination kept failing left them `running`
        // forever (found by the simulation, seed 2357). Past the limit the
        // retries slow down and are no longer journaled, which keeps the
        // journal bounded.
        if attempts <= max {
            let rref = self.runtime_ref(runtime);
            self.evidence(
                now,
                RecoveryKind::CleanupFailure,
                rref,
                format!(
                    "termination of runtime {runtime} generation {generation} failed (attempt {attempts}): {}; its commands may still be running{}",
                    clip(reason),
                    if attempts < max {
                        "; retrying"
                    } else {
                        "; retrying less often, further failures are not recorded"
                    }
                ),
                outcomes,
            );
        }
        let shift = attempts.saturating_sub(max.saturating_sub(1)).min(5);
        self.defer(ControllerEffect::SetTimer {
            timer: TimerId::TerminateRetry {
                runtime,
                generation,
            },
            at: now.plus(self.config.terminate_retry_ms.saturating_mul(1 << shift)),
        });
        self.flush();
        Ok(())
    }

    /// Records that `runtime` is no longer its lease's current generation,
    /// once: a runtime already retired keeps its first recorded cause.
    fn retire_if_current(
        &mut self,
        lease: LeaseId,
        runtime: RuntimeId,
        generation: Generation,
        status: RuntimeStatus,
        cause: RetireCause,
        now: Millis,
    ) {
        if status == RuntimeStatus::Current {
            self.record(
                now,
                JournalRecord::RuntimeRetired {
                    lease,
                    runtime,
                    generation,
                    cause,
                },
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn retire_and_terminate(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        cause: RetireCause,
        kind: RecoveryKind,
        command: Option<CommandId>,
        observed: String,
        now: Millis,
    ) {
        let Some((l, view)) = self.working.runtime(runtime) else {
            return;
        };
        let lease = l.lease;
        let (status, requested) = (view.status, view.termination_requested);
        if matches!(status, RuntimeStatus::Gone { .. }) {
            return;
        }
        self.retire_if_current(lease, runtime, generation, status, cause, now);
        // A retired generation is never given work, so what was never sent
        // to it never will be: settle it now, not when the runtime is
        // confirmed gone, which a failing cleanup may never confirm (found
        // by the simulation, seed 875).
        let mut never_sent = Vec::new();
        for command in self.non_terminal_on(runtime, generation) {
            let c = &self.working.commands[&command];
            if matches!(c.exposure, Exposure::None | Exposure::Refused { .. })
                && c.outcome == Outcome::Admitted
            {
                never_sent.extend(self.change(now, command, OutcomeEvent::NeverExposed));
            }
        }
        if requested {
            return;
        }
        self.record(
            now,
            JournalRecord::TerminationRequested {
                runtime,
                generation,
                command,
            },
        );
        let outcomes = self
            .non_terminal_on(runtime, generation)
            .into_iter()
            .filter_map(|c| {
                never_sent
                    .iter()
                    .find(|r| r.command == c)
                    .cloned()
                    .or_else(|| self.unchanged(c))
            })
            .collect();
        let rref = self.runtime_ref(runtime);
        self.evidence(now, kind, rref, observed, outcomes);
        if let Some(link) = self.links.get_mut(&runtime) {
            link.set_attached(false);
        }
        self.defer(ControllerEffect::TerminateRuntime {
            runtime,
            generation,
        });
    }

    /// The generation is confirmed dead: settle every command it held.
    pub(super) fn runtime_gone(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        cause: GoneCause,
        kind: RecoveryKind,
        observed: String,
        now: Millis,
    ) -> Result<(), ControllerError> {
        let (lease, status) = self.fenced_runtime(runtime, generation)?;
        if matches!(status, RuntimeStatus::Gone { .. }) {
            return Ok(());
        }
        self.retire_if_current(lease, runtime, generation, status, RetireCause::Gone, now);
        self.record(
            now,
            JournalRecord::RuntimeGone {
                lease,
                runtime,
                generation,
                cause,
            },
        );
        let mut outcomes = Vec::new();
        for command in self.non_terminal_on(runtime, generation) {
            let c = &self.working.commands[&command];
            // Even our own termination, with a cancel pending, is no proof of
            // how the command ended: it may have completed and its terminal
            // event been lost. Without terminal evidence it is `lost`, never
            // `cancelled` or `timed_out` (found by the simulation, seed 7).
            let event = match (c.exposure, c.outcome) {
                (_, Outcome::Dispatched | Outcome::Running) => Some(OutcomeEvent::RuntimeGone),
                (Exposure::Exposed { .. }, Outcome::Admitted | Outcome::NotDispatched) => {
                    Some(OutcomeEvent::ExposureUncertain)
                }
                (Exposure::None | Exposure::Refused { .. }, Outcome::Admitted) => {
                    Some(OutcomeEvent::NeverExposed)
                }
                _ => None,
            };
            let r = match event {
                Some(e) => self.change(now, command, e),
                None => self.unchanged(command),
            };
            outcomes.extend(r);
        }
        self.links.remove(&runtime);
        self.watch.answered(runtime);
        self.evidence(
            now,
            kind,
            Some(RuntimeRef {
                lease,
                runtime,
                generation,
            }),
            observed,
            outcomes,
        );
        Ok(())
    }
}
