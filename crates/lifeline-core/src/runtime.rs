//! The runtime state machine (one runtime worker), sans-IO.
//!
//! A runtime knows its own identity and generation and refuses orders meant
//! for any other, so a replacement can never run an older generation's
//! command. It acknowledges a dispatch before starting it, numbers each
//! command's events densely, and keeps every event until the controller says
//! it is durable, so that after a reverse dial it can resend exactly the
//! unacknowledged tail.

use lifeline_decode::Decode;
use lifeline_encode::Encode;
use std::collections::VecDeque;

use crate::flat::{FlatMap, FlatSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::command::Binding;
use crate::event::{EventBody, TerminalResult};
use crate::id::{
    AttemptId, CommandId, EventSeq, ExecutionId, Generation, LeaseId, Millis, RuntimeId,
};
use crate::journal::DispatchRefusal;
use crate::message::{
    CancelReply, ControllerToRuntime, DispatchOrder, DurablePosition, Hello, HelloRejection,
    RuntimeToController, StreamPosition,
};
use crate::outcome::{CancelReason, TerminalStatus};
use crate::schema::{limits, V1};

/// Who this runtime is. Fixed for the worker's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct RuntimeIdentity {
    pub lease: LeaseId,
    pub runtime: RuntimeId,
    pub generation: Generation,
    pub execution: ExecutionId,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct RuntimeConfig {
    pub identity: RuntimeIdentity,
    pub heartbeat_interval_ms: u64,
    /// Commands held at once (accepted and not yet fully durable).
    pub max_commands: usize,
    /// Unacknowledged events held per command before output is refused.
    pub max_buffered_events: usize,
    /// Finished command ids remembered so a duplicate dispatch is not rerun.
    pub max_remembered: usize,
}

impl RuntimeConfig {
    pub fn new(identity: RuntimeIdentity) -> RuntimeConfig {
        RuntimeConfig {
            identity,
            // Fast enough that three missed beats (the controller's
            // `heartbeat_timeout_ms`) show a stuck worker within 2 s.
            heartbeat_interval_ms: 500,
            max_commands: 256,
            max_buffered_events: 16_384,
            max_remembered: 100_000,
        }
    }
}

/// Output from a command's process, reported by the shell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProcessOutput {
    Stdout { data: String },
    Stderr { data: String },
    Tool { name: String, detail: String },
    Lifecycle { phase: String },
    Checkpoint { label: String },
    Exit { code: i32 },
    StartFailed { message: String },
}

/// Work for the runtime's shell, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum RuntimeEffect {
    Send(RuntimeToController),
    /// Start the command; report output with `handle_process`.
    StartProcess {
        command: CommandId,
        binding: Binding,
    },
    /// Kill exactly this command's process; then report `Exit`.
    KillProcess {
        command: CommandId,
    },
    SetTimer {
        at: Millis,
    },
    /// The controller refused this runtime; the worker should stop.
    Shutdown {
        reason: HelloRejection,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum RuntimeError {
    /// The message names another runtime or generation; nothing was done.
    NotForMe {
        runtime: RuntimeId,
        generation: Generation,
    },
    Refused {
        command: CommandId,
        refusal: DispatchRefusal,
    },
    UnknownCommand {
        command: CommandId,
    },
    AlreadyExited {
        command: CommandId,
    },
    /// Too many unacknowledged events; the shell should pause the process.
    BufferFull {
        command: CommandId,
    },
    /// The controller asked for events this runtime already let go of.
    CannotResend {
        command: CommandId,
        after: EventSeq,
        durable_through: EventSeq,
    },
    Rejected,
    Malformed {
        detail: String,
    },
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::NotForMe {
                runtime,
                generation,
            } => write!(
                f,
                "message for runtime {runtime} generation {generation} refused by another runtime"
            ),
            RuntimeError::Refused { command, refusal } => {
                write!(f, "dispatch of {command} refused: {refusal}")
            }
            RuntimeError::UnknownCommand { command } => {
                write!(f, "this runtime holds no command {command}")
            }
            RuntimeError::AlreadyExited { command } => write!(f, "command {command} already exited"),
            RuntimeError::BufferFull { command } => write!(
                f,
                "command {command} has too many events the controller has not confirmed"
            ),
            RuntimeError::CannotResend {
                command,
                after,
                durable_through,
            } => write!(
                f,
                "resend of {command} after {after} requested, but events through {durable_through} were confirmed durable and released"
            ),
            RuntimeError::Rejected => write!(f, "the controller rejected this runtime"),
            RuntimeError::Malformed { detail } => write!(f, "malformed controller message: {detail}"),
        }
    }
}

impl std::error::Error for RuntimeError {}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum LinkState {
    Disconnected,
    /// Hello sent; waiting for the controller's answer.
    Dialing,
    Attached,
    Rejected,
}

#[derive(Clone, Debug)]
struct Run {
    attempt: AttemptId,
    exited: bool,
    last_seq: EventSeq,
    durable_through: EventSeq,
    buffer: VecDeque<(EventSeq, EventBody)>,
    cancel: Option<CancelReason>,
}

/// One runtime worker's protocol state.
#[derive(Clone, Debug)]
pub struct Runtime {
    config: RuntimeConfig,
    link: LinkState,
    runs: FlatMap<CommandId, Run>,
    /// Cancelled before they were ever accepted: never to run here.
    fenced: FlatSet<CommandId>,
    /// Orders refused for want of room: a copy of one that arrives later
    /// is refused again, so that a refusal stays proof that it never ran
    /// (the controller may dispatch the command again, as a new attempt).
    refused: FlatSet<AttemptId>,
    finished: VecDeque<CommandId>,
    finished_set: FlatSet<CommandId>,
    effects: VecDeque<RuntimeEffect>,
}

impl Runtime {
    /// A freshly spawned worker. It dials in when the shell reports a port.
    pub fn new(mut config: RuntimeConfig, now: Millis) -> Runtime {
        config.max_commands = config.max_commands.min(limits::MAX_STREAMS_PER_MESSAGE);
        let mut r = Runtime {
            config,
            link: LinkState::Disconnected,
            runs: FlatMap::new(),
            fenced: FlatSet::new(),
            refused: FlatSet::new(),
            finished: VecDeque::new(),
            finished_set: FlatSet::new(),
            effects: VecDeque::new(),
        };
        r.effects.push_back(RuntimeEffect::SetTimer {
            at: now.plus(r.config.heartbeat_interval_ms),
        });
        r
    }

    /// Whether it holds as many commands as it takes: a dispatch now is
    /// refused for want of room.
    pub fn is_full(&self) -> bool {
        self.runs.len() >= self.config.max_commands
    }

    pub fn identity(&self) -> RuntimeIdentity {
        self.config.identity
    }

    pub fn link(&self) -> LinkState {
        self.link
    }

    /// Whether this runtime ever accepted `command` (including finished ones it remembers).
    pub fn accepted(&self, command: CommandId) -> bool {
        self.runs.contains_key(&command) || self.finished_set.contains(&command)
    }

    /// Last sequence emitted for a command it still holds.
    pub fn last_seq(&self, command: CommandId) -> Option<EventSeq> {
        self.runs.get(&command).map(|r| r.last_seq)
    }

    /// Events emitted but not yet confirmed durable.
    pub fn unacknowledged(&self, command: CommandId) -> usize {
        self.runs.get(&command).map_or(0, |r| r.buffer.len())
    }

    pub fn poll_effect(&mut self) -> Option<RuntimeEffect> {
        self.effects.pop_front()
    }

    pub fn drain_effects(&mut self) -> Vec<RuntimeEffect> {
        self.effects.drain(..).collect()
    }

    fn send(&mut self, message: RuntimeToController) {
        self.effects.push_back(RuntimeEffect::Send(message));
    }

    fn streams(&self) -> Vec<StreamPosition> {
        self.runs
            .iter()
            .map(|(command, r)| StreamPosition {
                command: *command,
                attempt: r.attempt,
                last_seq: r.last_seq,
                durable_through: r.durable_through,
            })
            .collect()
    }

    /// The shell gave this worker a (new) port to the controller: dial in.
    pub fn handle_connected(&mut self, _now: Millis) {
        if self.link == LinkState::Rejected {
            return;
        }
        self.link = LinkState::Dialing;
        self.send_hello();
    }

    fn send_hello(&mut self) {
        let id = self.config.identity;
        let hello = Hello {
            v: V1,
            lease: id.lease,
            runtime: id.runtime,
            generation: id.generation,
            execution: id.execution,
            streams: self.streams(),
        };
        self.send(RuntimeToController::Hello(hello));
    }

    /// The port broke. Commands keep running; events keep buffering.
    pub fn handle_disconnected(&mut self, _now: Millis) {
        if self.link != LinkState::Rejected {
            self.link = LinkState::Disconnected;
        }
    }

    /// The heartbeat timer fired.
    pub fn handle_timer(&mut self, now: Millis) {
        // An unanswered hello is said again: until the controller hears it,
        // nothing this runtime buffered (terminal evidence included) can be
        // delivered, and a repeated hello is harmless to the controller.
        if self.link == LinkState::Dialing {
            self.send_hello();
        }
        if self.link == LinkState::Attached {
            let id = self.config.identity;
            let streams = self.streams();
            self.send(RuntimeToController::Heartbeat {
                runtime: id.runtime,
                generation: id.generation,
                streams,
            });
        }
        if self.link != LinkState::Rejected {
            self.effects.push_back(RuntimeEffect::SetTimer {
                at: now.plus(self.config.heartbeat_interval_ms),
            });
        }
    }

    pub fn handle_controller(
        &mut self,
        message: ControllerToRuntime,
        _now: Millis,
    ) -> Result<(), RuntimeError> {
        let id = self.config.identity;
        let (runtime, generation) = message.target();
        if let ControllerToRuntime::Dispatch { order, .. } = &message {
            let refusal = if runtime != id.runtime || order.binding.runtime != id.runtime {
                Some(DispatchRefusal::WrongRuntime)
            } else if generation != id.generation || order.binding.generation != id.generation {
                Some(DispatchRefusal::StaleGeneration {
                    runtime_generation: id.generation,
                })
            } else if order.execution != id.execution {
                Some(DispatchRefusal::WrongExecution)
            } else {
                None
            };
            if let Some(refusal) = refusal {
                self.refuse(order, refusal);
                return Err(RuntimeError::Refused {
                    command: order.command,
                    refusal,
                });
            }
        } else if runtime != id.runtime || generation != id.generation {
            return Err(RuntimeError::NotForMe {
                runtime,
                generation,
            });
        }
        if self.link == LinkState::Rejected {
            return Err(RuntimeError::Rejected);
        }
        match message {
            ControllerToRuntime::HelloAccepted { durable, .. } => {
                self.accepted_hello(&durable);
                Ok(())
            }
            ControllerToRuntime::HelloRejected { reason, .. } => {
                self.link = LinkState::Rejected;
                let running: Vec<CommandId> = self
                    .runs
                    .iter()
                    .filter(|(_, r)| !r.exited)
                    .map(|(c, _)| *c)
                    .collect();
                for command in running {
                    self.effects
                        .push_back(RuntimeEffect::KillProcess { command });
                }
                self.effects.push_back(RuntimeEffect::Shutdown { reason });
                Ok(())
            }
            ControllerToRuntime::Dispatch { order, .. } => self.dispatch(order),
            ControllerToRuntime::Cancel {
                command, reason, ..
            } => {
                self.cancel(command, reason);
                Ok(())
            }
            ControllerToRuntime::EventsDurable {
                command, through, ..
            } => {
                self.durable(command, through);
                Ok(())
            }
            ControllerToRuntime::Resend { command, after, .. } => self.resend(command, after),
            ControllerToRuntime::HelloRequired { .. } => {
                self.link = LinkState::Dialing;
                self.send_hello();
                Ok(())
            }
        }
    }

    fn refuse(&mut self, order: &DispatchOrder, refusal: DispatchRefusal) {
        let id = self.config.identity;
        self.send(RuntimeToController::Refuse {
            runtime: id.runtime,
            generation: id.generation,
            command: order.command,
            attempt: order.attempt,
            refusal,
        });
    }

    fn ack(&mut self, command: CommandId, attempt: AttemptId) {
        let id = self.config.identity;
        self.send(RuntimeToController::Ack {
            runtime: id.runtime,
            generation: id.generation,
            command,
            attempt,
        });
    }

    fn accepted_hello(&mut self, durable: &[DurablePosition]) {
        self.link = LinkState::Attached;
        for d in durable {
            self.durable(d.command, d.through);
        }
        let tails: Vec<(CommandId, Vec<(EventSeq, EventBody)>)> = self
            .runs
            .iter()
            .map(|(c, r)| (*c, r.buffer.iter().cloned().collect()))
            .collect();
        for (command, events) in tails {
            for (seq, body) in events {
                self.send_event(command, seq, body);
            }
        }
    }

    fn dispatch(&mut self, order: DispatchOrder) -> Result<(), RuntimeError> {
        let command = order.command;
        if self.fenced.contains(&command) {
            let refusal = DispatchRefusal::CancelledBeforeAccept;
            self.refuse(&order, refusal);
            return Err(RuntimeError::Refused { command, refusal });
        }
        if let Some(run) = self.runs.get(&command) {
            // A repeated order: acknowledge again, never start twice.
            let attempt = run.attempt;
            self.ack(command, attempt);
            return Ok(());
        }
        if self.finished_set.contains(&command) {
            return Ok(());
        }
        let known = self.refused.contains(&order.attempt);
        if known || self.is_full() {
            let refusal = DispatchRefusal::Capacity;
            if known || self.refused.len() < self.config.max_remembered {
                self.refused.insert(order.attempt);
                self.refuse(&order, refusal);
            }
            // Otherwise it cannot promise to refuse a copy later, so it
            // does not claim a refusal: unanswered, the dispatch is
            // uncertain to the controller.
            return Err(RuntimeError::Refused { command, refusal });
        }
        self.runs.insert(
            command,
            Run {
                attempt: order.attempt,
                exited: false,
                last_seq: EventSeq::ZERO,
                durable_through: EventSeq::ZERO,
                buffer: VecDeque::new(),
                cancel: None,
            },
        );
        // The ACK goes out before the process starts, so an ACK never
        // describes work that was not accepted.
        self.ack(command, order.attempt);
        self.effects.push_back(RuntimeEffect::StartProcess {
            command,
            binding: order.binding,
        });
        self.emit(
            command,
            EventBody::Lifecycle {
                phase: "started".into(),
            },
            true,
        )
    }

    fn cancel(&mut self, command: CommandId, reason: CancelReason) {
        let id = self.config.identity;
        let reply = match self.runs.get_mut(&command) {
            Some(run) if run.exited => CancelReply::AlreadyFinished,
            Some(run) => {
                if run.cancel.is_none() {
                    run.cancel = Some(reason);
                    self.effects
                        .push_back(RuntimeEffect::KillProcess { command });
                }
                CancelReply::Stopping
            }
            None if self.finished_set.contains(&command) => CancelReply::AlreadyFinished,
            None => {
                if self.fenced.len() < self.config.max_remembered {
                    self.fenced.insert(command);
                    CancelReply::NeverAccepted
                } else {
                    // Cannot promise to refuse it later, so do not claim it.
                    CancelReply::Stopping
                }
            }
        };
        self.send(RuntimeToController::CancelReply {
            runtime: id.runtime,
            generation: id.generation,
            command,
            reply,
        });
    }

    fn durable(&mut self, command: CommandId, through: EventSeq) {
        let Some(run) = self.runs.get_mut(&command) else {
            return;
        };
        let through = through.min(run.last_seq);
        if through > run.durable_through {
            run.durable_through = through;
        }
        while run.buffer.front().is_some_and(|(s, _)| *s <= through) {
            run.buffer.pop_front();
        }
        if run.exited && run.durable_through == run.last_seq {
            self.runs.remove(&command);
            self.remember(command);
        }
    }

    fn remember(&mut self, command: CommandId) {
        if self.finished_set.insert(command) {
            self.finished.push_back(command);
        }
        while self.finished.len() > self.config.max_remembered {
            if let Some(old) = self.finished.pop_front() {
                self.finished_set.remove(&old);
            }
        }
    }

    fn resend(&mut self, command: CommandId, after: EventSeq) -> Result<(), RuntimeError> {
        let Some(run) = self.runs.get(&command) else {
            return Err(RuntimeError::UnknownCommand { command });
        };
        if after < run.durable_through {
            return Err(RuntimeError::CannotResend {
                command,
                after,
                durable_through: run.durable_through,
            });
        }
        let events: Vec<(EventSeq, EventBody)> = run
            .buffer
            .iter()
            .filter(|(s, _)| *s > after)
            .cloned()
            .collect();
        for (seq, body) in events {
            self.send_event(command, seq, body);
        }
        Ok(())
    }

    fn send_event(&mut self, command: CommandId, seq: EventSeq, body: EventBody) {
        if self.link != LinkState::Attached {
            return;
        }
        let id = self.config.identity;
        self.send(RuntimeToController::Event {
            runtime: id.runtime,
            generation: id.generation,
            command,
            seq,
            body,
        });
    }

    fn emit(
        &mut self,
        command: CommandId,
        body: EventBody,
        force: bool,
    ) -> Result<(), RuntimeError> {
        let max = self.config.max_buffered_events;
        let Some(run) = self.runs.get_mut(&command) else {
            return Err(RuntimeError::UnknownCommand { command });
        };
        if run.exited {
            return Err(RuntimeError::AlreadyExited { command });
        }
        if !force && run.buffer.len() >= max {
            return Err(RuntimeError::BufferFull { command });
        }
        let seq = run.last_seq.next();
        run.last_seq = seq;
        if matches!(body, EventBody::Terminal(_)) {
            run.exited = true;
        }
        run.buffer.push_back((seq, body.clone()));
        self.send_event(command, seq, body);
        Ok(())
    }

    /// Output or exit of a command's process.
    pub fn handle_process(
        &mut self,
        command: CommandId,
        output: ProcessOutput,
        _now: Millis,
    ) -> Result<(), RuntimeError> {
        let cancel = match self.runs.get(&command) {
            None => return Err(RuntimeError::UnknownCommand { command }),
            Some(r) if r.exited => return Err(RuntimeError::AlreadyExited { command }),
            Some(r) => r.cancel,
        };
        let text_ok = |field: &str, s: &str| -> Result<(), RuntimeError> {
            crate::schema::check_text(field, s, limits::MAX_TEXT_BYTES)
                .map_err(|detail| RuntimeError::Malformed { detail })
        };
        match output {
            ProcessOutput::Stdout { data } => self.output(command, data, true),
            ProcessOutput::Stderr { data } => self.output(command, data, false),
            ProcessOutput::Tool { name, detail } => {
                text_ok("tool name", &name)?;
                text_ok("tool detail", &detail)?;
                self.emit(command, EventBody::Tool { name, detail }, false)
            }
            ProcessOutput::Lifecycle { phase } => {
                text_ok("lifecycle phase", &phase)?;
                self.emit(command, EventBody::Lifecycle { phase }, false)
            }
            ProcessOutput::Checkpoint { label } => {
                text_ok("checkpoint label", &label)?;
                self.emit(command, EventBody::Checkpoint { label }, false)
            }
            ProcessOutput::Exit { code } => {
                let (status, message) = match cancel {
                    Some(reason) => (
                        reason.status(),
                        format!("stopped after cancel ({reason:?})"),
                    ),
                    None if code == 0 => (TerminalStatus::Completed, String::new()),
                    None => (TerminalStatus::Failed, format!("exit code {code}")),
                };
                let result = TerminalResult {
                    v: V1,
                    status,
                    exit_code: Some(code),
                    message,
                };
                self.emit(command, EventBody::Terminal(result), true)
            }
            ProcessOutput::StartFailed { message } => {
                let mut end = message.len().min(limits::MAX_TEXT_BYTES);
                while !message.is_char_boundary(end) {
                    end -= 1;
                }
                let result = TerminalResult {
                    v: V1,
                    status: cancel.map_or(TerminalStatus::Failed, |r| r.status()),
                    exit_code: None,
                    message: message[..end].to_string(),
                };
                self.emit(command, EventBody::Terminal(result), true)
            }
        }
    }

    fn output(
        &mut self,
        command: CommandId,
        data: String,
        stdout: bool,
    ) -> Result<(), RuntimeError> {
        let mut rest = data.as_str();
        while !rest.is_empty() {
            let mut end = rest.len().min(limits::MAX_OUTPUT_CHUNK_BYTES);
            while !rest.is_char_boundary(end) {
                end -= 1;
            }
            let piece = rest[..end].to_string();
            rest = &rest[end..];
            let body = if stdout {
                EventBody::Stdout { data: piece }
            } else {
                EventBody::Stderr { data: piece }
            };
            self.emit(command, body, false)?;
        }
        Ok(())
    }
}
