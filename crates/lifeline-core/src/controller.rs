//! The controller state machine (the control plane), sans-IO.
//!
//! Two projections are kept: `durable`, folded only from confirmed batches,
//! and `working`, which also includes records still being written. Decisions
//! are made on `working` so that two inputs in one write window see each
//! other; everything observable outside the controller (client
//! notifications, dispatches, acknowledgements of events) is held until the
//! batch carrying its evidence is confirmed. One batch is in flight at a time
//! so that a failed write can be retried as-is without leaving a hole.
//!
//! This file holds the controller's vocabulary (config, timers, effects,
//! errors), its state and every input (`handle_*`) and output
//! (`poll_effect`): reading it shows everything the shell can do to a
//! controller. What each input means lives in a module named after the
//! concept, all `impl Controller` over the same private state:
//!
//! | module | owns |
//! |---|---|
//! | `batch` | the open and in-flight persist batch, effects held until it is durable, write failures |
//! | `evidence` | outcome changes through the transition table and the recovery evidence explaining them |
//! | `clients` | client requests, joins at a cursor, notifications from confirmed entries |
//! | `turns` | sessions, turns and provider requests the agent layer records |
//! | `admit` | admission under an idempotency key, re-issue checks |
//! | `dispatch` | exposure before send, dispatch to an attached runtime, ACKs and refusals |
//! | `link` | a runtime from its spawn to its hello, fencing by generation, transport loss |
//! | `events` | sequenced runtime events and the stream positions runtimes report |
//! | `cancel` | cancelling one exact command and the runtime's reply |
//! | `retire` | ending a generation: retirement, termination and its retries, confirmed loss |
//! | `recover` | the recovery procedure after a controller restart or host loss |
//! | `timers` | what each timer does when it fires, if it still matches the state |
//! | `watch` | whose word counts about a runtime: its port, its silence, the page's claims |

use lifeline_decode::Decode;
use lifeline_encode::Encode;
use std::collections::VecDeque;
use std::sync::Arc;

use crate::flat::{FlatMap, FlatSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::id::{
    AttemptId, CommandId, EventSeq, ExecutionId, Generation, IdMinter, LeaseId, Millis, RuntimeId,
    WorkspaceId,
};
use crate::journal::{
    BatchId, GoneCause, JournalEntry, JournalRecord, PersistBatch, RecoveryKind, ReplayError,
    RetireCause,
};
use crate::message::{
    ClientId, ClientMessage, ClientRequest, ControllerToRuntime, HelloRejection, Rejection,
    RuntimeToController,
};
use crate::outcome::Outcome;
use crate::projection::{Projection, ProjectionSnapshot, RetentionPolicy, RuntimeStatus};
use crate::schema::limits;

use batch::{InFlight, OpenBatch};
use link::Link;

mod admit;
mod batch;
mod cancel;
mod clients;
mod dispatch;
mod events;
mod evidence;
mod link;
mod recover;
mod retire;
mod timers;
mod turns;
mod watch;
pub use watch::{ExitClaim, Liveness, PortId};

/// Tunables. Every duration is in milliseconds of the caller's clock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct ControllerConfig {
    /// Fresh random bytes from the shell; ids are minted from them.
    pub entropy: Vec<u8>,
    pub retention: RetentionPolicy,
    /// How long an exposed dispatch may wait for its ACK before it is
    /// reported as `may_have_started`.
    pub ack_timeout_ms: u64,
    /// How long a cancelled command may take to stop before its runtime is terminated.
    pub cancel_grace_ms: u64,
    /// Silence after which an attached runtime is shown as not responding.
    /// Silence alone never makes it lost: a busy worker is silent too (see
    /// `watch`).
    pub heartbeat_timeout_ms: u64,
    /// How long a runtime whose transport was lost may take to dial back.
    pub reattach_timeout_ms: u64,
    pub persist_retry_ms: u64,
    pub persist_retry_max_ms: u64,
    /// Consecutive failed writes after which new admissions are refused.
    pub persist_failures_before_degraded: u32,
    pub terminate_retry_ms: u64,
    /// How long commands a runtime refused for want of room wait, at most,
    /// to be offered again while its own commands go on running: each
    /// offer is a few journal records, so not one on every heartbeat.
    #[serde(default = "default_room_retry_ms")]
    pub room_retry_ms: u64,
    /// Failed terminations journaled and retried every `terminate_retry_ms`;
    /// later ones are retried with a backoff and not journaled.
    pub max_terminate_attempts: u32,
    pub max_commands: usize,
    pub max_clients: usize,
    pub max_subscriptions_per_client: usize,
    /// Unwritten entries beyond which outside input is refused (backpressure).
    pub max_open_entries: usize,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            entropy: Vec::new(),
            retention: RetentionPolicy::default(),
            ack_timeout_ms: 5_000,
            cancel_grace_ms: 3_000,
            // Three missed beats of the runtime's 500 ms heartbeat.
            heartbeat_timeout_ms: 1_500,
            reattach_timeout_ms: 15_000,
            persist_retry_ms: 250,
            persist_retry_max_ms: 8_000,
            persist_failures_before_degraded: 3,
            terminate_retry_ms: 1_000,
            room_retry_ms: default_room_retry_ms(),
            max_terminate_attempts: 5,
            max_commands: 100_000,
            max_clients: 64,
            max_subscriptions_per_client: 1024,
            max_open_entries: 4 * limits::MAX_BATCH_ENTRIES,
        }
    }
}

fn default_room_retry_ms() -> u64 {
    1_000
}

/// What the shell knows about how this controller came to start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum StartCause {
    /// The previous controller died but the page (and its runtimes) lived.
    ControllerRestart,
    /// The page was reloaded or closed: every runtime worker died with it.
    HostLoss,
}

/// A timer the shell should fire at `at`. Each names the identities it was
/// armed for; a timer that no longer matches the state is ignored.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(tag = "timer", rename_all = "snake_case")]
pub enum TimerId {
    AckTimeout {
        command: CommandId,
        attempt: AttemptId,
    },
    Deadline {
        command: CommandId,
    },
    CancelGrace {
        command: CommandId,
    },
    Liveness {
        runtime: RuntimeId,
        generation: Generation,
    },
    ReattachDeadline {
        runtime: RuntimeId,
        generation: Generation,
    },
    TerminateRetry {
        runtime: RuntimeId,
        generation: Generation,
    },
    PersistRetry {
        batch: BatchId,
    },
}

/// Work for the shell, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum ControllerEffect {
    /// Write in one transaction, then call `handle_persist_complete` or `_failed`.
    /// Shared with the controller, which keeps it until it is written (to
    /// retry it): every byte of output passes through here, so not copied.
    Persist(Arc<PersistBatch>),
    SendToRuntime {
        runtime: RuntimeId,
        message: ControllerToRuntime,
    },
    NotifyClient {
        client: ClientId,
        message: ClientMessage,
    },
    SetTimer {
        timer: TimerId,
        at: Millis,
    },
    /// Start a runtime worker with this identity; it dials in with a hello.
    SpawnRuntime {
        workspace: WorkspaceId,
        lease: LeaseId,
        runtime: RuntimeId,
        generation: Generation,
        execution: ExecutionId,
    },
    /// Terminate exactly this worker, then call `handle_runtime_terminated`
    /// or `handle_cleanup_failed`.
    TerminateRuntime {
        runtime: RuntimeId,
        generation: Generation,
    },
}

/// An input the controller refused. Nothing was recorded for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum ControllerError {
    Malformed {
        detail: String,
    },
    UnknownRuntime {
        runtime: RuntimeId,
    },
    StaleGeneration {
        runtime: RuntimeId,
        generation: Generation,
    },
    RuntimeRetired {
        runtime: RuntimeId,
    },
    NotAttached {
        runtime: RuntimeId,
    },
    HelloRejected {
        reason: HelloRejection,
    },
    UnknownCommand {
        command: CommandId,
    },
    /// The command is bound to another runtime or generation.
    WrongRuntime {
        command: CommandId,
        runtime: RuntimeId,
    },
    UnknownAttempt {
        command: CommandId,
        attempt: AttemptId,
    },
    SequenceGap {
        command: CommandId,
        expected: EventSeq,
        got: EventSeq,
    },
    ConflictingDuplicate {
        command: CommandId,
        seq: EventSeq,
    },
    UnknownBatch {
        batch: BatchId,
    },
    Backpressure,
    /// The message or event came from a port that does not (or no longer)
    /// speak for this runtime and generation.
    StalePort {
        runtime: RuntimeId,
    },
    /// The runtime already has an open port; a second one is not its own.
    PortInUse {
        runtime: RuntimeId,
    },
    /// Only a runtime that stopped answering can be stopped this way.
    Responding {
        runtime: RuntimeId,
    },
}

impl ControllerError {
    /// A stable code for what was refused: what the page shows beside the
    /// runtime it came from (the identifiers and detail stay in logs).
    pub fn code(&self) -> &'static str {
        use ControllerError as E;
        match self {
            E::Malformed { .. } => "malformed",
            E::UnknownRuntime { .. } => "unknown_runtime",
            E::StaleGeneration { .. } => "stale_generation",
            E::RuntimeRetired { .. } => "runtime_retired",
            E::NotAttached { .. } => "not_attached",
            E::HelloRejected { .. } => "hello_rejected",
            E::UnknownCommand { .. } => "unknown_command",
            E::WrongRuntime { .. } => "wrong_runtime",
            E::UnknownAttempt { .. } => "unknown_attempt",
            E::SequenceGap { .. } => "sequence_gap",
            E::ConflictingDuplicate { .. } => "conflicting_duplicate",
            E::UnknownBatch { .. } => "unknown_batch",
            E::Backpressure => "backpressure",
            E::StalePort { .. } => "stale_port",
            E::PortInUse { .. } => "port_in_use",
            E::Responding { .. } => "responding",
        }
    }
}

impl fmt::Display for ControllerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControllerError::Malformed { detail } => write!(f, "malformed runtime message: {detail}"),
            ControllerError::UnknownRuntime { runtime } => {
                write!(f, "runtime {runtime} is not in the journal")
            }
            ControllerError::StaleGeneration {
                runtime,
                generation,
            } => write!(
                f,
                "runtime {runtime} spoke as generation {generation}, which the journal does not hold for it"
            ),
            ControllerError::RuntimeRetired { runtime } => {
                write!(f, "runtime {runtime} was retired; its messages are refused")
            }
            ControllerError::NotAttached { runtime } => {
                write!(f, "runtime {runtime} must send a hello first")
            }
            ControllerError::HelloRejected { reason } => write!(f, "hello rejected: {reason}"),
            ControllerError::UnknownCommand { command } => {
                write!(f, "command {command} is not in the journal")
            }
            ControllerError::WrongRuntime { command, runtime } => write!(
                f,
                "command {command} is not bound to runtime {runtime} at this generation"
            ),
            ControllerError::UnknownAttempt { command, attempt } => write!(
                f,
                "attempt {attempt} is not the recorded exposure of command {command}"
            ),
            ControllerError::SequenceGap {
                command,
                expected,
                got,
            } => write!(
                f,
                "event {got} for command {command} skips ahead; expected {expected} (resend requested)"
            ),
            ControllerError::ConflictingDuplicate { command, seq } => write!(
                f,
                "event {seq} for command {command} differs from the recorded event {seq}; kept the recorded one"
            ),
            ControllerError::UnknownBatch { batch } => {
                write!(f, "persist batch {} is not the one in flight", batch.0)
            }
            ControllerError::Backpressure => {
                write!(f, "too many unwritten records; resend later")
            }
            ControllerError::StalePort { runtime } => {
                write!(f, "not the current port of runtime {runtime}; ignored")
            }
            ControllerError::PortInUse { runtime } => write!(
                f,
                "runtime {runtime} already has an open port; a second one was refused"
            ),
            ControllerError::Responding { runtime } => {
                write!(f, "runtime {runtime} is answering; it was not stopped")
            }
        }
    }
}

impl std::error::Error for ControllerError {}

/// The control plane. See the crate docs for the effect discipline.
#[derive(Clone, Debug)]
pub struct Controller {
    config: ControllerConfig,
    minter: IdMinter,
    durable: Projection,
    working: Projection,
    open: OpenBatch,
    in_flight: Option<InFlight>,
    /// Batches are cut only by [`Controller::cut_batch`] (see
    /// [`Controller::hold_batches`]).
    held: bool,
    effects: VecDeque<ControllerEffect>,
    links: FlatMap<RuntimeId, Link>,
    clients: FlatMap<ClientId, FlatSet<CommandId>>,
    degraded: Option<String>,
    watch: watch::Watch,
}

impl Controller {
    /// A controller over an empty journal.
    pub fn new(config: ControllerConfig, now: Millis) -> Controller {
        let durable = Projection::new(config.retention);
        Controller::start(config, durable, None, now)
    }

    /// Rebuilds from the durably confirmed entries and runs the recovery
    /// procedure for `cause`. Outcomes it changes are recorded with evidence
    /// in the first `Persist` effect.
    pub fn recover(
        config: ControllerConfig,
        entries: &[JournalEntry],
        cause: StartCause,
        now: Millis,
    ) -> Result<Controller, ReplayError> {
        let durable = Projection::rebuild(config.retention, entries)?;
        Ok(Controller::start(config, durable, Some(cause), now))
    }

    /// Like [`Controller::recover`], from a snapshot plus the entries after it.
    pub fn recover_from_snapshot(
        config: ControllerConfig,
        snapshot: ProjectionSnapshot,
        tail: &[JournalEntry],
        cause: StartCause,
        now: Millis,
    ) -> Result<Controller, ReplayError> {
        let durable = Projection::from_snapshot(snapshot, tail)?;
        Ok(Controller::start(config, durable, Some(cause), now))
    }

    fn start(
        config: ControllerConfig,
        durable: Projection,
        cause: Option<StartCause>,
        now: Millis,
    ) -> Controller {
        let context = durable.position ^ now.0.rotate_left(32);
        let mut c = Controller {
            minter: IdMinter::new(&config.entropy, context),
            working: durable.clone(),
            durable,
            config,
            open: OpenBatch::default(),
            in_flight: None,
            held: false,
            effects: VecDeque::new(),
            links: FlatMap::new(),
            clients: FlatMap::new(),
            degraded: None,
            watch: watch::Watch::default(),
        };
        if let Some(cause) = cause {
            c.recover_procedure(cause, now);
        }
        c.flush();
        c
    }

    // ----- queries -------------------------------------------------------

    /// What the journal durably says (what clients may be told).
    pub fn projection(&self) -> &Projection {
        &self.durable
    }

    /// Durable state plus records not yet confirmed.
    pub fn pending_projection(&self) -> &Projection {
        &self.working
    }

    /// Durable outcome of a command.
    pub fn outcome(&self, command: CommandId) -> Option<Outcome> {
        self.durable.outcome(command)
    }

    pub fn snapshot(&self) -> ProjectionSnapshot {
        self.durable.snapshot()
    }

    pub fn in_flight_batch(&self) -> Option<BatchId> {
        self.in_flight.as_ref().map(|f| f.batch.batch)
    }

    pub fn is_attached(&self, runtime: RuntimeId) -> bool {
        self.links.get(&runtime).is_some_and(|l| l.attached)
    }

    /// Set while writes keep failing; admissions are refused meanwhile.
    pub fn degraded(&self) -> Option<&str> {
        self.degraded.as_deref()
    }

    pub fn config(&self) -> &ControllerConfig {
        &self.config
    }

    pub fn poll_effect(&mut self) -> Option<ControllerEffect> {
        self.effects.pop_front()
    }

    pub fn drain_effects(&mut self) -> Vec<ControllerEffect> {
        self.effects.drain(..).collect()
    }

    // ----- persistence ---------------------------------------------------

    /// The shell wrote batch `batch` in one transaction.
    pub fn handle_persist_complete(
        &mut self,
        batch: BatchId,
        now: Millis,
    ) -> Result<(), ControllerError> {
        match &self.in_flight {
            Some(f) if f.batch.batch == batch => {}
            _ => return Err(ControllerError::UnknownBatch { batch }),
        }
        let Some(flight) = self.in_flight.take() else {
            return Err(ControllerError::UnknownBatch { batch });
        };
        for e in &flight.batch.entries {
            if let Err(err) = self.durable.apply(e) {
                panic!("confirmed batch does not apply to the durable projection: {err}");
            }
        }
        self.degraded = None;
        self.effects.extend(flight.after);
        self.notify_entries(&flight.batch.entries);
        // Exposure waits for durable admission, so `admitted` is a state the
        // journal can really be found in.
        for e in &flight.batch.entries {
            if let JournalRecord::CommandAdmitted(rec) = &e.record {
                self.try_dispatch(rec.command, now);
            }
        }
        self.flush();
        Ok(())
    }

    /// The shell's transaction for `batch` aborted; nothing of it was written.
    pub fn handle_persist_failed(
        &mut self,
        batch: BatchId,
        reason: &str,
        now: Millis,
    ) -> Result<(), ControllerError> {
        self.persist_failed(batch, reason, now)
    }

    // ----- clients -------------------------------------------------------

    /// A request from a client. Every request is answered with a
    /// `NotifyClient`; a rejection is also returned.
    pub fn handle_client(
        &mut self,
        client: ClientId,
        request: ClientRequest,
        now: Millis,
    ) -> Result<(), Rejection> {
        let request_id = request.request();
        let result = self.client_inner(client, request, now);
        if let Err(rejection) = &result {
            self.effects.push_back(ControllerEffect::NotifyClient {
                client,
                message: ClientMessage::Rejected {
                    request: request_id,
                    rejection: rejection.clone(),
                },
            });
        }
        self.flush();
        result
    }

    /// The client's port closed; its subscriptions end.
    pub fn handle_client_gone(&mut self, client: ClientId) {
        self.clients.remove(&client);
    }

    // ----- runtime messages ----------------------------------------------

    /// A message that arrived on the port of runtime `from`.
    pub fn handle_runtime(
        &mut self,
        from: RuntimeId,
        message: RuntimeToController,
        now: Millis,
    ) -> Result<(), ControllerError> {
        let result = self.runtime_inner(from, message, now);
        self.flush();
        result
    }

    // ----- liveness, loss and cleanup ------------------------------------

    /// The runtime's port broke. It may still be alive and dial back.
    pub fn handle_transport_lost(
        &mut self,
        runtime: RuntimeId,
        now: Millis,
    ) -> Result<(), ControllerError> {
        let result = self.transport_lost(runtime, now);
        self.flush();
        result
    }

    /// The runtime worker died on its own (error event, trap).
    pub fn handle_runtime_crashed(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        now: Millis,
    ) -> Result<(), ControllerError> {
        let r = self.runtime_gone(
            runtime,
            generation,
            GoneCause::Crashed,
            RecoveryKind::RuntimeCrash,
            format!("runtime {runtime} generation {generation} crashed"),
            now,
        );
        self.flush();
        r
    }

    /// The shell confirmed a `TerminateRuntime` effect.
    pub fn handle_runtime_terminated(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        now: Millis,
    ) -> Result<(), ControllerError> {
        let kind = match self.working.runtime(runtime).map(|(_, r)| r.status) {
            Some(RuntimeStatus::Retired {
                cause: RetireCause::Replaced,
            }) => RecoveryKind::RuntimeReplaced,
            Some(RuntimeStatus::Retired {
                cause: RetireCause::ReattachTimeout,
            }) => RecoveryKind::ReattachTimeout,
            _ => RecoveryKind::CancelEscalation,
        };
        let r = self.runtime_gone(
            runtime,
            generation,
            GoneCause::Terminated,
            kind,
            format!("runtime {runtime} generation {generation} confirmed terminated"),
            now,
        );
        self.flush();
        r
    }

    /// The shell could not terminate the runtime. Nothing is assumed stopped.
    pub fn handle_cleanup_failed(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        reason: &str,
        now: Millis,
    ) -> Result<(), ControllerError> {
        self.cleanup_failed(runtime, generation, reason, now)
    }

    // ----- timers --------------------------------------------------------

    /// A timer the controller asked for has fired. Stale timers are ignored.
    pub fn handle_timer(&mut self, timer: TimerId, now: Millis) {
        self.timer_inner(timer, now);
        self.flush();
    }
}
