//! Runtime ports and what a runtime's end means.
//!
//! Every port a runtime dials in on gets a [`PortId`] that is never reused,
//! and every input from a port names it, so the core tells the runtime's
//! current port from an old or a made-up one. Before recovery finished the
//! inputs wait in order and are replayed once the core can judge them.

use lifeline_core::phrase::Phrase;
use lifeline_core::session_record::RuntimeEnd;
use lifeline_core::{ControllerError, ExitClaim, Generation, Millis, PortId, RuntimeId};
use lifeline_protocol::{Level, Role};

use crate::{Early, Effect, Engine, PortEntry};

/// How the shell learned that a runtime's worker ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The port's `close` event.
    PortClosed,
    /// The runtime's life lock was released.
    LockReleased,
}

impl Engine {
    /// Inputs wait for recovery only in a leader that may still write.
    fn waits_for_recovery(&self) -> bool {
        self.core.is_none() && self.stopped.is_none() && self.role == Role::Leader
    }

    /// A runtime's port arrived (through the page). Returns the identity
    /// the shell files its handle under; a port the core refuses is closed
    /// at once ([`Effect::ClosePort`]).
    pub fn handle_port_opened(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        now: Millis,
    ) -> PortId {
        self.last_port += 1;
        let port = PortId(self.last_port);
        // Before recovery the core cannot judge it yet: `register_ports`
        // does once it can.
        let refused = self
            .core
            .as_mut()
            .and_then(|c| c.handle_port_opened(runtime, generation, port).err());
        if let Some(e) = refused {
            self.refuse_port(runtime, port, &e);
            return port;
        }
        let old = self.ports.insert(
            runtime,
            PortEntry {
                generation,
                port,
                life_watched: false,
            },
        );
        if let Some(old) = old {
            // A late message on the old port must not pass for the new one.
            self.effects.push_back(Effect::ClosePort(old.port));
        }
        self.pump(now);
        port
    }

    fn refuse_port(&mut self, runtime: RuntimeId, port: PortId, e: &ControllerError) {
        self.effects.push_back(Effect::ClosePort(port));
        self.notice(
            "runtime-port",
            Level::Warning,
            Phrase::RuntimeMessageRejected {
                runtime: runtime.to_string(),
                code: e.code().into(),
            },
        );
    }

    /// Hands the core the ports that arrived while it was recovering.
    pub(crate) fn register_ports(&mut self, _now: Millis) {
        let Some(core) = self.core.as_mut() else {
            return;
        };
        let refused: Vec<(RuntimeId, PortId, ControllerError)> = self
            .ports
            .iter()
            .filter_map(|(runtime, p)| {
                core.handle_port_opened(*runtime, p.generation, p.port)
                    .err()
                    .map(|e| (*runtime, p.port, e))
            })
            .collect();
        for (runtime, port, e) in refused {
            self.ports.remove(&runtime);
            self.refuse_port(runtime, port, &e);
        }
    }

    /// A message from a runtime's port (decoded by the shell).
    pub fn handle_runtime_message(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        message: lifeline_core::RuntimeToController,
        now: Millis,
    ) {
        if self.core.is_none() {
            if self.waits_for_recovery() {
                self.early.push(Early::Message {
                    runtime,
                    generation,
                    port,
                    message,
                });
            }
            return;
        }
        let result = self
            .core
            .as_mut()
            .map(|c| c.handle_port_message(runtime, generation, port, message, now));
        self.watch_life(runtime, generation, port);
        if let Some(Err(e @ ControllerError::Malformed { .. })) = result {
            self.runtime_message_rejected(runtime, e.code());
        }
        self.pump(now);
    }

    /// A runtime's message could not be read (or was refused): `code`
    /// says which. The decoder's own words are not shown: they name
    /// nothing a person can act on, and may quote the message.
    pub fn runtime_message_rejected(&mut self, runtime: RuntimeId, code: &str) {
        self.notice(
            "runtime-message",
            Level::Warning,
            Phrase::RuntimeMessageRejected {
                runtime: runtime.to_string(),
                code: code.into(),
            },
        );
    }

    /// Once the runtime dialed in on `port` it holds its life lock (taken
    /// before its hello); waiting for that lock tells when its worker ends,
    /// in every browser with Web Locks.
    fn watch_life(&mut self, runtime: RuntimeId, generation: Generation, port: PortId) {
        let attached = self.core.as_ref().is_some_and(|c| c.is_attached(runtime));
        let Some(entry) = self.ports.get_mut(&runtime) else {
            return;
        };
        if !attached || entry.port != port || entry.life_watched {
            return;
        }
        entry.life_watched = true;
        self.effects.push_back(Effect::WatchLife {
            runtime,
            generation,
            port,
        });
    }

    /// The runtime's end of `port` went away, or its life lock was released.
    pub fn handle_worker_ended(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        how: Ended,
        now: Millis,
    ) {
        self.worker_ended(runtime, generation, port, how, now);
    }

    pub(crate) fn worker_ended(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        how: Ended,
        now: Millis,
    ) {
        if self.ports.get(&runtime).is_some_and(|p| p.port == port) {
            self.ports.remove(&runtime);
            self.effects.push_back(Effect::ClosePort(port));
        }
        if self.core.is_none() {
            if self.waits_for_recovery() {
                self.early.push(Early::Ended {
                    runtime,
                    generation,
                    port,
                    how,
                });
            }
            return;
        }
        let result = self.core.as_mut().map(|c| match how {
            Ended::PortClosed => c.handle_port_closed(runtime, generation, port, now),
            Ended::LockReleased => c.handle_life_lock_released(runtime, generation, port, now),
        });
        if let Some(Ok(())) = result {
            let end = RuntimeEnd::WorkerEnded;
            self.runtime_lost(runtime, generation, end.to_string(), Some(end), now);
        }
        self.pump(now);
    }

    /// The page says a runtime's worker exited. Only the core knows how
    /// much that counts (`lifeline_core::controller::watch`).
    pub fn handle_runtime_exited(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        crashed: bool,
        detail: String,
        now: Millis,
    ) {
        if self.core.is_none() {
            if self.role == Role::Leader {
                self.early.push(Early::Exited {
                    runtime,
                    generation,
                    crashed,
                    detail,
                });
            }
            return;
        }
        let claim = self
            .core
            .as_mut()
            .map(|c| c.handle_exit_claim(runtime, generation, crashed, now));
        if claim == Some(ExitClaim::Believed) {
            if let Some(p) = self
                .ports
                .get(&runtime)
                .filter(|p| p.generation == generation)
            {
                let port = p.port;
                self.ports.remove(&runtime);
                self.effects.push_back(Effect::ClosePort(port));
            }
            if crashed {
                self.runtime_lost(runtime, generation, detail, None, now);
            } else {
                self.stopped_runtime(runtime, Ok(()), now);
            }
        }
        self.pump(now);
    }

    /// A person asked to stop a runtime that does not answer.
    pub fn handle_stop_unresponsive(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        now: Millis,
    ) {
        let result = self
            .core
            .as_mut()
            .map(|c| c.handle_stop_unresponsive(runtime, generation, now));
        if let Some(Err(e)) = result {
            let said = match e {
                ControllerError::Responding { .. } => Phrase::RuntimeAnswers,
                other => Phrase::StopRuntimeRefused {
                    code: other.code().into(),
                },
            };
            self.notice("request", Level::Info, said);
        }
        self.pump(now);
    }

    /// The page could not terminate a runtime's worker.
    pub fn handle_terminate_failed(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        detail: &str,
        now: Millis,
    ) {
        if self.core.is_none() {
            if self.role == Role::Leader {
                self.early.push(Early::TerminateFailed {
                    runtime,
                    generation,
                    detail: detail.to_string(),
                });
            }
            return;
        }
        if let Some(core) = self.core.as_mut() {
            let _ = core.handle_cleanup_failed(runtime, generation, detail, now);
        }
        self.stopped_runtime(runtime, Err(detail.to_string()), now);
        self.pump(now);
    }
}
