//! A runtime's link, from its spawn to its hello and the loss of its
//! transport, and the fencing every runtime-scoped input goes through.
//!
//! A runtime is heard only while attached, and only as the generation the
//! journal holds for it: its hello is checked against the journal before the
//! link is attached, and a message from a runtime not attached is answered
//! with a request to dial in again rather than refused forever. The link is
//! live state, not durable: a restarted controller starts detached and waits
//! for each runtime to dial back.

use crate::id::{
    CommandId, EventSeq, ExecutionId, Generation, LeaseId, Millis, RuntimeId, WorkspaceId,
};
use crate::journal::{AckSource, JournalRecord, RecoveryKind, RetireCause};
use crate::message::{
    ClientId, ClientMessage, ControllerToRuntime, DurablePosition, Hello, HelloRejection,
    Rejection, RequestId, RuntimeToController,
};
use crate::outcome::{Outcome, OutcomeEvent};
use crate::projection::{Exposure, RuntimeStatus};

use super::{Controller, ControllerEffect, ControllerError, TimerId};
use crate::flat::FlatMap;

/// Live state of a runtime link; deliberately not durable.
#[derive(Clone, Debug)]
pub(super) struct Link {
    pub(super) generation: Generation,
    pub(super) attached: bool,
    pub(super) last_heard: Millis,
    pub(super) terminate_attempts: u32,
    /// The resend asked for each command since this link attached: the
    /// events after this sequence number. A resend is its whole tail, so a
    /// gap seen in it must not ask for the same tail again: each event of a
    /// resent tail that still had a gap asked for another, and traffic grew
    /// geometrically (found by the randomized fault run: 81 requests became
    /// 6,561, then millions). At most one per command on this runtime.
    pub(super) resend_asked: FlatMap<CommandId, EventSeq>,
    /// When commands it refused for want of room are offered again on a
    /// heartbeat, should no command's end on it have made room first (see
    /// `dispatch::refused`).
    pub(super) room_retry_at: Option<Millis>,
}

impl Link {
    pub(super) fn new(generation: Generation, now: Millis) -> Link {
        Link {
            generation,
            attached: false,
            last_heard: now,
            terminate_attempts: 0,
            resend_asked: FlatMap::new(),
            room_retry_at: None,
        }
    }

    /// Attached or detached again: whatever it was asked is forgotten (a
    /// runtime that dials in says what it holds in its hello).
    pub(super) fn set_attached(&mut self, attached: bool) {
        self.attached = attached;
        self.resend_asked.clear();
    }
}

impl Controller {
    pub(super) fn start_runtime(
        &mut self,
        client: ClientId,
        request: RequestId,
        workspace: WorkspaceId,
        now: Millis,
    ) -> Result<(), Rejection> {
        if let Some(detail) = &self.degraded {
            return Err(Rejection::JournalUnavailable {
                detail: detail.clone(),
            });
        }
        if !self.has_room() {
            return Err(Rejection::Busy);
        }
        let lease = match self.working.workspaces.get(&workspace) {
            Some(lease) => *lease,
            None => {
                if self.working.is_seen(workspace.as_u128()) {
                    return Err(Rejection::IdReused {
                        id: workspace.to_string(),
                    });
                }
                let lease = self.mint(now, LeaseId::from_u128);
                self.record(now, JournalRecord::LeaseGranted { workspace, lease });
                lease
            }
        };
        let (current, next_generation) = {
            let l = &self.working.leases[&lease];
            (
                l.current().map(|r| (r.runtime, r.generation)),
                l.runtimes
                    .last()
                    .map_or(Generation::FIRST, |r| r.generation.next()),
            )
        };
        if let Some((old, old_generation)) = current {
            self.retire_and_terminate(
                old,
                old_generation,
                RetireCause::Replaced,
                RecoveryKind::RuntimeReplaced,
                None,
                format!(
                    "runtime {old} generation {old_generation} replaced by generation {next_generation}; termination requested"
                ),
                now,
            );
        }
        let runtime = self.mint(now, RuntimeId::from_u128);
        let execution = self.mint(now, ExecutionId::from_u128);
        self.record(
            now,
            JournalRecord::RuntimeAssigned {
                lease,
                runtime,
                generation: next_generation,
                execution,
            },
        );
        self.links.insert(runtime, Link::new(next_generation, now));
        self.defer(ControllerEffect::SpawnRuntime {
            workspace,
            lease,
            runtime,
            generation: next_generation,
            execution,
        });
        // A worker that never dials in is handled like one that never dials back.
        self.defer(ControllerEffect::SetTimer {
            timer: TimerId::ReattachDeadline {
                runtime,
                generation: next_generation,
            },
            at: now.plus(self.config.reattach_timeout_ms),
        });
        self.reply(
            client,
            ClientMessage::RuntimeStarted {
                request,
                workspace,
                lease,
                runtime,
                generation: next_generation,
                execution,
            },
        );
        Ok(())
    }

    pub(super) fn runtime_inner(
        &mut self,
        from: RuntimeId,
        message: RuntimeToController,
        now: Millis,
    ) -> Result<(), ControllerError> {
        message
            .validate()
            .map_err(|detail| ControllerError::Malformed { detail })?;
        let (runtime, generation) = message.sender();
        if runtime != from {
            return Err(ControllerError::Malformed {
                detail: format!("message names runtime {runtime} but arrived from {from}"),
            });
        }
        if let RuntimeToController::Hello(hello) = message {
            return self.hello(hello, now);
        }
        let (_, status) = self.fenced_runtime(runtime, generation)?;
        // Evidence from a retired but living runtime about its own commands
        // is accepted (see `hello`); once it is recorded gone, nothing is.
        if matches!(status, RuntimeStatus::Gone { .. }) {
            return Err(ControllerError::RuntimeRetired { runtime });
        }
        match self.links.get_mut(&runtime) {
            Some(link) if link.attached => {
                link.last_heard = now;
                self.heard(runtime, generation, now);
            }
            _ => {
                // It is alive and talking on a port we stopped listening to:
                // ask it to dial in again rather than refuse it forever.
                self.send(
                    runtime,
                    ControllerToRuntime::HelloRequired {
                        runtime,
                        generation,
                    },
                );
                return Err(ControllerError::NotAttached { runtime });
            }
        }
        match message {
            RuntimeToController::Hello(_) => Ok(()),
            RuntimeToController::Ack {
                command, attempt, ..
            } => {
                let exposure = self.bound_command(command, runtime, generation)?;
                match exposure {
                    Exposure::Exposed { attempt: a } if a == attempt => {
                        self.acknowledge(command, attempt, AckSource::Ack, now);
                        Ok(())
                    }
                    Exposure::Acknowledged { attempt: a } if a == attempt => Ok(()),
                    _ => Err(ControllerError::UnknownAttempt { command, attempt }),
                }
            }
            RuntimeToController::Refuse {
                command,
                attempt,
                refusal,
                ..
            } => {
                let exposure = self.bound_command(command, runtime, generation)?;
                if exposure != (Exposure::Exposed { attempt }) {
                    return Err(ControllerError::UnknownAttempt { command, attempt });
                }
                self.refused(command, attempt, refusal, now);
                Ok(())
            }
            RuntimeToController::Event {
                command, seq, body, ..
            } => self.event(runtime, generation, command, seq, body, now),
            RuntimeToController::Heartbeat { streams, .. } => {
                self.streams(runtime, generation, &streams, AckSource::Heartbeat, now);
                self.retry_refused_for_room(runtime, generation, now);
                Ok(())
            }
            RuntimeToController::CancelReply { command, reply, .. } => {
                self.bound_command(command, runtime, generation)?;
                self.cancel_reply(runtime, generation, command, reply, now);
                Ok(())
            }
        }
    }

    pub(super) fn bound_command(
        &self,
        command: CommandId,
        runtime: RuntimeId,
        generation: Generation,
    ) -> Result<Exposure, ControllerError> {
        let c = self
            .working
            .command(command)
            .ok_or(ControllerError::UnknownCommand { command })?;
        if c.binding.runtime != runtime || c.binding.generation != generation {
            return Err(ControllerError::WrongRuntime { command, runtime });
        }
        Ok(c.exposure)
    }

    fn hello(&mut self, hello: Hello, now: Millis) -> Result<(), ControllerError> {
        let rejection = match self.working.runtime(hello.runtime) {
            None if self.working.leases.contains_key(&hello.lease) => {
                Some(HelloRejection::UnknownRuntime)
            }
            None => Some(HelloRejection::UnknownLease),
            Some((l, _)) if l.lease != hello.lease => Some(HelloRejection::UnknownRuntime),
            Some((l, r)) if r.generation != hello.generation => {
                Some(HelloRejection::StaleGeneration {
                    current: l.current().map(|c| c.generation),
                })
            }
            Some((_, r)) if r.execution != hello.execution => Some(HelloRejection::WrongExecution),
            // A retired runtime that is still alive (its termination failed or
            // is pending) may dial back to deliver evidence for its own
            // commands; it is never given new work. Only a gone one is refused.
            Some((_, r)) if matches!(r.status, RuntimeStatus::Gone { .. }) => {
                Some(HelloRejection::Retired)
            }
            Some(_) => None,
        };
        let (runtime, generation) = (hello.runtime, hello.generation);
        if let Some(reason) = rejection {
            self.send(
                runtime,
                ControllerToRuntime::HelloRejected {
                    runtime,
                    generation,
                    reason: reason.clone(),
                },
            );
            return Err(ControllerError::HelloRejected { reason });
        }
        let link = self
            .links
            .entry(runtime)
            .or_insert_with(|| Link::new(generation, now));
        link.set_attached(true);
        link.last_heard = now;
        self.watch.dialed_in(runtime);
        // Only durable positions: the runtime resends everything after them
        // and anything still being written is dropped here as a duplicate.
        let durable = hello
            .streams
            .iter()
            .map(|s| DurablePosition {
                command: s.command,
                through: match self.durable.command(s.command) {
                    Some(c) => Some(c.last_seq).filter(|_| c.binding.runtime == runtime),
                    None => self
                        .durable
                        .settled_command(s.command)
                        .filter(|c| c.runtime == runtime)
                        .map(|c| c.last_seq),
                }
                .unwrap_or(EventSeq::ZERO),
            })
            .collect();
        self.send(
            runtime,
            ControllerToRuntime::HelloAccepted {
                runtime,
                generation,
                durable,
            },
        );
        self.timer(
            TimerId::Liveness {
                runtime,
                generation,
            },
            now.plus(self.config.heartbeat_timeout_ms),
        );
        self.streams(runtime, generation, &hello.streams, AckSource::Hello, now);
        // A cancel sent on a lost port is sent again on the new one.
        for command in self.non_terminal_on(runtime, generation) {
            if let Some(cs) = self.working.command(command).and_then(|c| c.cancel) {
                self.send_after(
                    runtime,
                    ControllerToRuntime::Cancel {
                        runtime,
                        generation,
                        command,
                        reason: cs.reason,
                    },
                );
            }
        }
        self.dispatch_ready(runtime, generation, now);
        Ok(())
    }

    pub(super) fn transport_lost(
        &mut self,
        runtime: RuntimeId,
        now: Millis,
    ) -> Result<(), ControllerError> {
        let Some((_, view)) = self.working.runtime(runtime) else {
            return Err(ControllerError::UnknownRuntime { runtime });
        };
        let (generation, status) = (view.generation, view.status);
        match self.links.get_mut(&runtime) {
            Some(link) if link.attached => link.set_attached(false),
            _ => return Ok(()),
        }
        let mut outcomes = Vec::new();
        for command in self.non_terminal_on(runtime, generation) {
            let c = &self.working.commands[&command];
            let uncertain = matches!(c.exposure, Exposure::Exposed { .. })
                && matches!(c.outcome, Outcome::Admitted | Outcome::NotDispatched);
            let r = if uncertain {
                self.change(now, command, OutcomeEvent::ExposureUncertain)
            } else {
                self.unchanged(command)
            };
            outcomes.extend(r);
        }
        let rref = self.runtime_ref(runtime);
        self.evidence(
            now,
            RecoveryKind::TransportLoss,
            rref,
            format!(
                "transport to runtime {runtime} generation {generation} lost; dispatches without a recorded ACK may have started; acknowledged commands await reattachment"
            ),
            outcomes,
        );
        if status == RuntimeStatus::Current {
            self.defer(ControllerEffect::SetTimer {
                timer: TimerId::ReattachDeadline {
                    runtime,
                    generation,
                },
                at: now.plus(self.config.reattach_timeout_ms),
            });
        }
        Ok(())
    }

    /// The journal's lease and status of `runtime`, only if it is of
    /// `generation`: every runtime-scoped input is fenced through here.
    pub(super) fn fenced_runtime(
        &self,
        runtime: RuntimeId,
        generation: Generation,
    ) -> Result<(LeaseId, RuntimeStatus), ControllerError> {
        let Some((lease, view)) = self.working.runtime(runtime) else {
            return Err(ControllerError::UnknownRuntime { runtime });
        };
        if view.generation != generation {
            return Err(ControllerError::StaleGeneration {
                runtime,
                generation,
            });
        }
        Ok((lease.lease, view.status))
    }
}
