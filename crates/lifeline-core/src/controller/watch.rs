//! Watching runtimes: which port speaks for a runtime, what its silence
//! means, and how much the page's word about it counts.
//!
//! Evidence that a runtime is gone comes from two places only: the end of
//! the worker behind its own port, or the controller's own termination
//! request being carried out. The shell learns of that end in two ways,
//! both bound to the port the runtime dialed in on: the port's `close` event
//! where the browser has it, and the release of the Web Lock the runtime
//! holds for its life (`lifeline_protocol::runtime_life_lock`), which the
//! browser gives up when the worker crashes, closes itself or is
//! terminated, and never while it is only busy. Silence is
//! not evidence: a worker busy in a loop does not beat and keeps its port
//! open, so silence makes it *not responding*, which a person can end by
//! stopping it. The page spawns the workers and sees their `error` events,
//! but any script in the page can post what it likes to the controller, so
//! its claim about a runtime that dialed in (said a hello this controller
//! accepted) is only a hint; it is believed for a runtime that never dialed
//! in (a failed spawn or a workspace that would not open, which only the
//! page can know: such a runtime was given no command, so believing it
//! settles no command) and for a termination the controller asked for.

use crate::flat::{FlatMap, FlatSet};
use lifeline_decode::Decode;
use lifeline_encode::Encode;

use serde::{Deserialize, Serialize};

use super::{Controller, ControllerEffect, ControllerError, TimerId};
use crate::id::{Generation, Millis, RuntimeId};
use crate::journal::{RecoveryKind, RetireCause};
use crate::message::RuntimeToController;
use crate::projection::RuntimeStatus;

/// One port the shell handed over for a runtime, numbered by the shell; a
/// number is never reused within one controller's life.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
pub struct PortId(pub u64);

/// What the controller made of the page's report that a runtime exited.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum ExitClaim {
    /// Recorded: the termination the controller asked for was carried out,
    /// or a runtime that never dialed in failed to start.
    Believed,
    /// The runtime dialed in over its own port, which speaks for it;
    /// nothing was recorded and its liveness is checked again soon.
    Hint,
    /// About a runtime or generation that is unknown, gone or whose port
    /// already closed.
    Ignored,
}

/// How a runtime looks to a person.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "liveness", rename_all = "snake_case")]
pub enum Liveness {
    /// Not attached (starting, dialing back, or gone).
    Detached,
    Responding,
    /// Attached, its port open, and silent since `since`.
    NotResponding {
        since: Millis,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PortState {
    generation: Generation,
    port: PortId,
    open: bool,
}

/// Live, not durable: a restarted controller is handed new ports.
#[derive(Clone, Debug, Default)]
pub(super) struct Watch {
    ports: FlatMap<RuntimeId, PortState>,
    /// Attached runtimes that stopped answering, since their last word.
    silent: FlatMap<RuntimeId, Millis>,
    /// Runtimes whose hello this controller accepted.
    dialed: FlatSet<RuntimeId>,
}

impl Watch {
    pub(super) fn went_silent(&mut self, runtime: RuntimeId, last_heard: Millis) {
        self.silent.entry(runtime).or_insert(last_heard);
    }

    pub(super) fn dialed_in(&mut self, runtime: RuntimeId) {
        self.dialed.insert(runtime);
        self.silent.remove(&runtime);
    }

    /// Forgets a silence; true if there was one.
    pub(super) fn answered(&mut self, runtime: RuntimeId) -> bool {
        self.silent.remove(&runtime).is_some()
    }

    fn current(&self, runtime: RuntimeId, generation: Generation, port: PortId) -> bool {
        self.ports.get(&runtime)
            == Some(&PortState {
                generation,
                port,
                open: true,
            })
    }
}

impl Controller {
    /// The shell was handed `port` for `runtime` at `generation`. The first
    /// open port speaks for the runtime; a second one while it is open is
    /// refused (the page relays one per controller), so a port made up in
    /// the page cannot take over a runtime's voice. A port for a runtime the
    /// journal does not hold, or holds as gone, is taken: its hello is then
    /// answered with `HelloRejected`, which shuts that worker down.
    pub fn handle_port_opened(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
    ) -> Result<(), ControllerError> {
        if self
            .watch
            .ports
            .get(&runtime)
            .is_some_and(|p| p.open && p.generation == generation)
        {
            return Err(ControllerError::PortInUse { runtime });
        }
        self.watch.ports.insert(
            runtime,
            PortState {
                generation,
                port,
                open: true,
            },
        );
        Ok(())
    }

    /// A message that arrived on `port`, which the shell was handed for
    /// `runtime` at `generation`. Ignored unless that port is still the
    /// runtime's open port and the message speaks as that runtime and
    /// generation.
    pub fn handle_port_message(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        message: RuntimeToController,
        now: Millis,
    ) -> Result<(), ControllerError> {
        if !self.watch.current(runtime, generation, port) {
            return Err(ControllerError::StalePort { runtime });
        }
        let (r, g) = message.sender();
        if (r, g) != (runtime, generation) {
            return Err(ControllerError::Malformed {
                detail: format!(
                    "message names runtime {r} generation {g} on the port of runtime {runtime} generation {generation}"
                ),
            });
        }
        self.handle_runtime(runtime, message, now)
    }

    /// The runtime's own port closed: its worker is gone (unless this was
    /// an old port, which says nothing). Settles its commands now; a
    /// termination is still asked for, so that nothing it might run goes on.
    /// `Ok` only if this recorded the end (not for a runtime already gone).
    pub fn handle_port_closed(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        now: Millis,
    ) -> Result<(), ControllerError> {
        self.worker_ended(runtime, generation, port, "the port to it closed", now)
    }

    /// The life lock of the runtime that dialed in on `port` was released:
    /// its worker ended. Settled as [`Controller::handle_port_closed`].
    pub fn handle_life_lock_released(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        now: Millis,
    ) -> Result<(), ControllerError> {
        self.worker_ended(
            runtime,
            generation,
            port,
            "the browser released the lock it holds for its life",
            now,
        )
    }

    fn worker_ended(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        how: &str,
        now: Millis,
    ) -> Result<(), ControllerError> {
        if !self.watch.current(runtime, generation, port) {
            return Err(ControllerError::StalePort { runtime });
        }
        if let Some(p) = self.watch.ports.get_mut(&runtime) {
            p.open = false;
        }
        let (gone, requested) = self
            .working
            .runtime(runtime)
            .map_or((true, false), |(_, r)| {
                (
                    matches!(r.status, RuntimeStatus::Gone { .. }),
                    r.termination_requested,
                )
            });
        if gone {
            // Settled already (a termination confirmed first): nothing new.
            return Err(ControllerError::RuntimeRetired { runtime });
        }
        if requested {
            return self.handle_runtime_terminated(runtime, generation, now);
        }
        let r = self.runtime_gone(
            runtime,
            generation,
            crate::journal::GoneCause::Crashed,
            RecoveryKind::RuntimeCrash,
            format!(
                "the worker of runtime {runtime} generation {generation} ended without being asked to (it crashed, closed itself or was terminated): {how}"
            ),
            now,
        );
        if r.is_ok() {
            self.defer(ControllerEffect::TerminateRuntime {
                runtime,
                generation,
            });
        }
        self.flush();
        r
    }

    /// The page says the worker of `runtime` at `generation` exited
    /// (`crashed`: on its own; otherwise it terminated it). See the module
    /// docs for when that is believed.
    pub fn handle_exit_claim(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        crashed: bool,
        now: Millis,
    ) -> ExitClaim {
        let Some((_, view)) = self.working.runtime(runtime) else {
            return ExitClaim::Ignored;
        };
        if view.generation != generation || matches!(view.status, RuntimeStatus::Gone { .. }) {
            return ExitClaim::Ignored;
        }
        let requested = view.termination_requested;
        let port = self
            .watch
            .ports
            .get(&runtime)
            .filter(|p| p.generation == generation)
            .map(|p| p.open);
        let claim = match port {
            // Closing settled it already.
            Some(false) => return ExitClaim::Ignored,
            _ if !crashed && requested => ExitClaim::Believed,
            // Attached without a port the controller tracks (a driver that
            // delivers its messages some other way) counts as dialed in.
            _ if self.watch.dialed.contains(&runtime) || self.is_attached(runtime) => {
                ExitClaim::Hint
            }
            _ => ExitClaim::Believed,
        };
        match claim {
            ExitClaim::Believed if !crashed && requested => {
                let _ = self.handle_runtime_terminated(runtime, generation, now);
            }
            ExitClaim::Believed => {
                let _ = self.handle_runtime_crashed(runtime, generation, now);
            }
            ExitClaim::Hint => {
                // Look again a heartbeat timeout from now rather than at the
                // next scheduled check.
                self.timer(
                    TimerId::Liveness {
                        runtime,
                        generation,
                    },
                    now.plus(self.config.heartbeat_timeout_ms),
                );
            }
            ExitClaim::Ignored => {}
        }
        claim
    }

    /// Whether `runtime` is attached and answering.
    pub fn liveness(&self, runtime: RuntimeId) -> Liveness {
        if !self.is_attached(runtime) {
            return Liveness::Detached;
        }
        match self.watch.silent.get(&runtime) {
            Some(since) => Liveness::NotResponding { since: *since },
            None => Liveness::Responding,
        }
    }

    /// A person asked to stop a runtime that is not responding: its worker
    /// is terminated (an effect); its commands are settled only once that
    /// is confirmed (`handle_runtime_terminated`) or its port closes.
    pub fn handle_stop_unresponsive(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        now: Millis,
    ) -> Result<(), ControllerError> {
        self.fenced_runtime(runtime, generation)?;
        let requested = self
            .working
            .runtime(runtime)
            .is_some_and(|(_, r)| r.termination_requested);
        if requested {
            // A second click while the first is carried out.
            return Ok(());
        }
        let Liveness::NotResponding { since } = self.liveness(runtime) else {
            return Err(ControllerError::Responding { runtime });
        };
        self.retire_and_terminate(
            runtime,
            generation,
            RetireCause::Stopped,
            RecoveryKind::SessionStopped,
            None,
            format!(
                "runtime {runtime} generation {generation} did not answer for {} ms; stopped at the user's request",
                now.0.saturating_sub(since.0)
            ),
            now,
        );
        self.flush();
        Ok(())
    }

    /// A word from an attached runtime ends its silence; checks resume.
    pub(super) fn heard(&mut self, runtime: RuntimeId, generation: Generation, now: Millis) {
        if self.watch.answered(runtime) {
            self.timer(
                TimerId::Liveness {
                    runtime,
                    generation,
                },
                now.plus(self.config.heartbeat_timeout_ms),
            );
        }
    }
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
