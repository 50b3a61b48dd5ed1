//! The recovery procedure run once when a controller starts over a journal.
//!
//! Nothing is replayed: after host loss every runtime died with the page,
//! after a controller restart they may be alive and dial back. Either way
//! each non-terminal command is settled or listed with evidence, and the
//! timers that died with the previous controller are armed again.

use crate::id::{CommandId, Generation, Millis, RuntimeId};
use crate::journal::{GoneCause, RecoveryKind, Resolution};
use crate::outcome::{Outcome, OutcomeEvent};
use crate::projection::{Exposure, RuntimeStatus};

use super::link::Link;
use super::{Controller, ControllerEffect, StartCause, TimerId};

impl Controller {
    pub(super) fn recover_procedure(&mut self, cause: StartCause, now: Millis) {
        let position = self.working.position;
        let runtimes: Vec<(RuntimeId, Generation, RuntimeStatus, bool)> = self
            .working
            .leases
            .values()
            .flat_map(|l| l.runtimes.iter())
            .map(|r| (r.runtime, r.generation, r.status, r.termination_requested))
            .collect();
        match cause {
            StartCause::HostLoss => {
                for (runtime, generation, status, _) in &runtimes {
                    if !matches!(status, RuntimeStatus::Gone { .. }) {
                        let _ = self.runtime_gone(
                            *runtime,
                            *generation,
                            GoneCause::HostLoss,
                            RecoveryKind::HostLoss,
                            format!(
                                "host lost (page reload or close) before journal position {}: runtime {runtime} generation {generation} died with it",
                                position + 1
                            ),
                            now,
                        );
                    }
                }
                let outcomes = self
                    .working
                    .commands
                    .values()
                    .filter(|c| !c.outcome.is_terminal())
                    .map(|c| Resolution {
                        command: c.command,
                        attempt: c.exposure.attempt(),
                        before: c.outcome,
                        after: c.outcome,
                    })
                    .collect();
                self.evidence(
                    now,
                    RecoveryKind::HostLoss,
                    None,
                    format!(
                        "controller started after host loss at journal position {position}; nothing was replayed"
                    ),
                    outcomes,
                );
            }
            StartCause::ControllerRestart => {
                let commands: Vec<CommandId> = self
                    .working
                    .commands
                    .values()
                    .filter(|c| !c.outcome.is_terminal())
                    .map(|c| c.command)
                    .collect();
                let mut outcomes = Vec::new();
                for command in commands {
                    let c = &self.working.commands[&command];
                    let event = match (c.exposure, c.outcome) {
                        (Exposure::None | Exposure::Refused { .. }, Outcome::Admitted) => {
                            Some(OutcomeEvent::NeverExposed)
                        }
                        (Exposure::Exposed { .. }, Outcome::Admitted | Outcome::NotDispatched) => {
                            Some(OutcomeEvent::ExposureUncertain)
                        }
                        _ => None,
                    };
                    let r = match event {
                        Some(e) => self.change(now, command, e),
                        None => self.unchanged(command),
                    };
                    outcomes.extend(r);
                }
                self.evidence(
                    now,
                    RecoveryKind::ControllerRestart,
                    None,
                    format!(
                        "controller restarted at journal position {position}; unexposed commands may be dispatched, exposed ones without an ACK may have started, acknowledged ones await their runtime"
                    ),
                    outcomes,
                );
                for (runtime, generation, status, requested) in &runtimes {
                    match status {
                        RuntimeStatus::Current => {
                            self.links.insert(*runtime, Link::new(*generation, now));
                            self.defer(ControllerEffect::SetTimer {
                                timer: TimerId::ReattachDeadline {
                                    runtime: *runtime,
                                    generation: *generation,
                                },
                                at: now.plus(self.config.reattach_timeout_ms),
                            });
                        }
                        RuntimeStatus::Retired { .. } if *requested => {
                            // Whether the earlier request ran is unknown; asking again is harmless.
                            self.defer(ControllerEffect::TerminateRuntime {
                                runtime: *runtime,
                                generation: *generation,
                            });
                        }
                        _ => {}
                    }
                }
            }
        }
        // Timers died with the previous controller.
        let rearm: Vec<(CommandId, Millis, bool)> = self
            .working
            .commands
            .values()
            .filter(|c| !c.outcome.is_terminal())
            .map(|c| (c.command, c.binding.budget.deadline, c.cancel.is_some()))
            .collect();
        for (command, deadline, cancelled) in rearm {
            self.defer(ControllerEffect::SetTimer {
                timer: TimerId::Deadline { command },
                at: deadline,
            });
            if cancelled {
                self.defer(ControllerEffect::SetTimer {
                    timer: TimerId::CancelGrace { command },
                    at: now.plus(self.config.cancel_grace_ms),
                });
            }
        }
    }
}
