//! The controller state machine (the control plane), sans-IO.
//!
//! Two projections are kept: `durable`, folded only from confirmed batches,
//! and `working`, which also includes records still being written. Decisions
//! are made on `working` so that two inputs in one write window see each
//! other; everything observable outside the controller (client
//! notifications, dispatches, acknowledgements of events) is held until the
//! batch carrying its evidence is confirmed. One batch is in flight at a time
//! so that a failed write can be retried as-is without leaving a hole.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::command::{BindingField, BindingMismatch, CommandRecord};
use crate::event::{retain_output, ArtifactBlob, EventBody, EventRecord, RetainedBody};
use crate::id::{
    AttemptId, CommandId, ErrorStamp, EventSeq, ExecutionId, Generation, IdError, IdMinter,
    LeaseId, Millis, ProviderRequestId, RuntimeId, SessionId, TurnId, WorkspaceId,
};
use crate::journal::{
    AckSource, BatchId, GoneCause, JournalEntry, JournalRecord, PersistBatch, RecoveryEvidence,
    RecoveryKind, ReplayError, Resolution, RetireCause, RuntimeRef, TurnAgent,
};
use crate::message::{
    validate_request, CancelReply, ClientId, ClientMessage, ClientRequest, ControllerToRuntime,
    DispatchOrder, DispatchRefusal, DurablePosition, Hello, HelloRejection, Rejection, RequestId,
    RuntimeToController, Settlement, StreamPosition,
};
use crate::outcome::{transition, CancelReason, Outcome, OutcomeEvent};
use crate::projection::{
    Exposure, Projection, ProjectionSnapshot, ProviderOutcome, RetentionPolicy, RuntimeStatus,
};
use crate::schema::{limits, Schema, V1};

mod watch;
pub use watch::{ExitClaim, Liveness, PortId};

/// Tunables. Every duration is in milliseconds of the caller's clock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
            max_terminate_attempts: 5,
            max_commands: 100_000,
            max_clients: 64,
            max_subscriptions_per_client: 1024,
            max_open_entries: 4 * limits::MAX_BATCH_ENTRIES,
        }
    }
}

/// What the shell knows about how this controller came to start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartCause {
    /// The previous controller died but the page (and its runtimes) lived.
    ControllerRestart,
    /// The page was reloaded or closed: every runtime worker died with it.
    HostLoss,
}

/// A timer the shell should fire at `at`. Each names the identities it was
/// armed for; a timer that no longer matches the state is ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum ControllerEffect {
    /// Write in one transaction, then call `handle_persist_complete` or `_failed`.
    Persist(PersistBatch),
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Clone, Debug, Default)]
struct OpenBatch {
    entries: Vec<JournalEntry>,
    artifacts: Vec<ArtifactBlob>,
    after: Vec<ControllerEffect>,
}

#[derive(Clone, Debug)]
struct InFlight {
    batch: PersistBatch,
    after: Vec<ControllerEffect>,
    failures: u32,
}

/// Live state of a runtime link; deliberately not durable.
#[derive(Clone, Debug)]
struct Link {
    generation: Generation,
    attached: bool,
    last_heard: Millis,
    terminate_attempts: u32,
}

/// The control plane. See the crate docs for the effect discipline.
#[derive(Clone, Debug)]
pub struct Controller {
    config: ControllerConfig,
    minter: IdMinter,
    durable: Projection,
    working: Projection,
    open: OpenBatch,
    in_flight: Option<InFlight>,
    effects: VecDeque<ControllerEffect>,
    links: BTreeMap<RuntimeId, Link>,
    clients: BTreeMap<ClientId, BTreeSet<CommandId>>,
    degraded: Option<String>,
    watch: watch::Watch,
}

const MAX_REASON_BYTES: usize = 512;

fn clip(text: &str) -> String {
    let mut end = text.len().min(MAX_REASON_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
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
            effects: VecDeque::new(),
            links: BTreeMap::new(),
            clients: BTreeMap::new(),
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

    // ----- plumbing ------------------------------------------------------

    fn mint<T>(&mut self, now: Millis, make: fn(u128) -> Result<T, IdError>) -> T {
        for _ in 0..1024 {
            let raw = self.minter.mint_raw(now);
            if !self.working.is_seen(raw) {
                if let Ok(id) = make(raw) {
                    return id;
                }
            }
        }
        panic!("id minter produced 1024 identities already in the journal");
    }

    fn record(&mut self, now: Millis, record: JournalRecord) {
        let entry = JournalEntry {
            v: V1,
            position: self.working.position + 1,
            at: now,
            record,
        };
        if let Err(e) = self.working.apply(&entry) {
            panic!("controller produced a record its own journal refuses: {e}");
        }
        self.open.entries.push(entry);
    }

    /// Holds an effect until everything recorded so far is durable.
    fn defer(&mut self, effect: ControllerEffect) {
        if !self.open.entries.is_empty() {
            self.open.after.push(effect);
        } else if let Some(f) = &mut self.in_flight {
            f.after.push(effect);
        } else {
            self.effects.push_back(effect);
        }
    }

    fn has_room(&self) -> bool {
        self.open.entries.len() < self.config.max_open_entries
    }

    fn flush(&mut self) {
        if self.in_flight.is_some() || self.open.entries.is_empty() {
            return;
        }
        let take_all = self.open.entries.len() <= limits::MAX_BATCH_ENTRIES;
        let entries: Vec<JournalEntry> = if take_all {
            std::mem::take(&mut self.open.entries)
        } else {
            let rest = self.open.entries.split_off(limits::MAX_BATCH_ENTRIES);
            std::mem::replace(&mut self.open.entries, rest)
        };
        let (artifacts, keep): (Vec<ArtifactBlob>, Vec<ArtifactBlob>) =
            std::mem::take(&mut self.open.artifacts)
                .into_iter()
                .partition(|a| {
                    entries.iter().any(|e| {
                        matches!(&e.record, JournalRecord::ArtifactStored { digest, .. } if *digest == a.digest)
                    })
                });
        self.open.artifacts = keep;
        let after = if take_all {
            std::mem::take(&mut self.open.after)
        } else {
            Vec::new()
        };
        let batch = PersistBatch {
            v: V1,
            batch: BatchId(entries[0].position),
            entries,
            artifacts,
        };
        if let Err(e) = batch.validate() {
            panic!("controller built an invalid persist batch: {e}");
        }
        self.effects
            .push_back(ControllerEffect::Persist(batch.clone()));
        self.in_flight = Some(InFlight {
            batch,
            after,
            failures: 0,
        });
    }

    fn send(&mut self, runtime: RuntimeId, message: ControllerToRuntime) {
        self.effects
            .push_back(ControllerEffect::SendToRuntime { runtime, message });
    }

    fn send_after(&mut self, runtime: RuntimeId, message: ControllerToRuntime) {
        self.defer(ControllerEffect::SendToRuntime { runtime, message });
    }

    fn timer(&mut self, timer: TimerId, at: Millis) {
        self.effects
            .push_back(ControllerEffect::SetTimer { timer, at });
    }

    fn reply(&mut self, client: ClientId, message: ClientMessage) {
        self.defer(ControllerEffect::NotifyClient { client, message });
    }

    /// Records an outcome change if the table allows it.
    fn change(
        &mut self,
        now: Millis,
        command: CommandId,
        event: OutcomeEvent,
    ) -> Option<Resolution> {
        let c = self.working.command(command)?;
        let from = c.outcome;
        let attempt = c.exposure.attempt();
        let to = transition(from, event).ok()?;
        self.record(
            now,
            JournalRecord::OutcomeChanged {
                command,
                event,
                from,
                to,
            },
        );
        Some(Resolution {
            command,
            attempt,
            before: from,
            after: to,
        })
    }

    fn unchanged(&self, command: CommandId) -> Option<Resolution> {
        let c = self.working.command(command)?;
        Some(Resolution {
            command,
            attempt: c.exposure.attempt(),
            before: c.outcome,
            after: c.outcome,
        })
    }

    fn evidence(
        &mut self,
        now: Millis,
        kind: RecoveryKind,
        runtime: Option<RuntimeRef>,
        observed: String,
        outcomes: Vec<Resolution>,
    ) {
        let stamp = self.mint(now, ErrorStamp::from_u128);
        self.record(
            now,
            JournalRecord::Recovery(RecoveryEvidence {
                v: V1,
                stamp,
                kind,
                at: now,
                runtime,
                observed: clip(&observed),
                outcomes,
            }),
        );
    }

    fn runtime_ref(&self, runtime: RuntimeId) -> Option<RuntimeRef> {
        self.working.runtime(runtime).map(|(l, r)| RuntimeRef {
            lease: l.lease,
            runtime,
            generation: r.generation,
        })
    }

    fn non_terminal_on(&self, runtime: RuntimeId, generation: Generation) -> Vec<CommandId> {
        self.working
            .commands_on(runtime, generation)
            .into_iter()
            .filter(|c| self.working.outcome(*c).is_some_and(|o| !o.is_terminal()))
            .collect()
    }

    fn notify_all(&mut self, message: ClientMessage) {
        for client in self.clients.keys().copied().collect::<Vec<_>>() {
            self.effects.push_back(ControllerEffect::NotifyClient {
                client,
                message: message.clone(),
            });
        }
    }

    fn notify_entries(&mut self, entries: &[JournalEntry]) {
        for e in entries {
            match &e.record {
                JournalRecord::CommandAdmitted(rec) => self.notify_all(ClientMessage::Outcome {
                    command: rec.command,
                    outcome: Outcome::Admitted,
                    event: None,
                    position: e.position,
                }),
                JournalRecord::OutcomeChanged {
                    command, event, to, ..
                } => self.notify_all(ClientMessage::Outcome {
                    command: *command,
                    outcome: *to,
                    event: Some(*event),
                    position: e.position,
                }),
                JournalRecord::Recovery(ev) => self.notify_all(ClientMessage::Evidence(ev.clone())),
                JournalRecord::Event(rec) => {
                    let subscribers: Vec<ClientId> = self
                        .clients
                        .iter()
                        .filter(|(_, subs)| subs.contains(&rec.command))
                        .map(|(c, _)| *c)
                        .collect();
                    for client in subscribers {
                        self.effects.push_back(ControllerEffect::NotifyClient {
                            client,
                            message: ClientMessage::Event {
                                command: rec.command,
                                seq: rec.seq,
                                body: rec.body.clone(),
                            },
                        });
                    }
                }
                _ => {}
            }
        }
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
        let (failures, commands, entry_count) = match &mut self.in_flight {
            Some(f) if f.batch.batch == batch => {
                f.failures += 1;
                let mut commands: Vec<CommandId> = f
                    .batch
                    .entries
                    .iter()
                    .filter_map(|e| match &e.record {
                        JournalRecord::CommandAdmitted(r) => Some(r.command),
                        JournalRecord::OutcomeChanged { command, .. } => Some(*command),
                        JournalRecord::Event(r) => Some(r.command),
                        JournalRecord::DispatchExposed { command, .. } => Some(*command),
                        _ => None,
                    })
                    .collect();
                commands.sort();
                commands.dedup();
                (f.failures, commands, f.batch.entries.len())
            }
            _ => return Err(ControllerError::UnknownBatch { batch }),
        };
        if failures == 1 {
            let outcomes = commands
                .iter()
                .filter_map(|c| {
                    self.durable.command(*c).map(|v| Resolution {
                        command: *c,
                        attempt: v.exposure.attempt(),
                        before: v.outcome,
                        after: v.outcome,
                    })
                })
                .collect();
            self.evidence(
                now,
                RecoveryKind::CheckpointFailure,
                None,
                format!(
                    "write of batch {} ({entry_count} entries) failed: {}; nothing in it is durable, clients were not told, and it is being retried unchanged",
                    batch.0,
                    clip(reason)
                ),
                outcomes,
            );
        }
        if failures >= self.config.persist_failures_before_degraded {
            self.degraded = Some(clip(reason));
        }
        let shift = failures.saturating_sub(1).min(16);
        let backoff = self
            .config
            .persist_retry_ms
            .saturating_mul(1u64 << shift)
            .min(self.config.persist_retry_max_ms);
        self.timer(TimerId::PersistRetry { batch }, now.plus(backoff));
        Ok(())
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

    fn client_inner(
        &mut self,
        client: ClientId,
        request: ClientRequest,
        now: Millis,
    ) -> Result<(), Rejection> {
        if !self.clients.contains_key(&client) {
            if self.clients.len() >= self.config.max_clients {
                return Err(Rejection::TooManyClients {
                    limit: self.config.max_clients,
                });
            }
            self.clients.insert(client, BTreeSet::new());
        }
        validate_request(&request).map_err(|detail| Rejection::InvalidBinding { detail })?;
        match request {
            ClientRequest::StartRuntime { request, workspace } => {
                self.start_runtime(client, request, workspace, now)
            }
            ClientRequest::Admit {
                request,
                key,
                binding,
            } => self.admit(client, request, key, binding, None, now),
            ClientRequest::Reissue {
                request,
                key,
                original,
                binding,
            } => {
                // A repeat of the same re-issue answers like a repeated admit.
                match self
                    .working
                    .keys
                    .get(&key)
                    .and_then(|c| self.working.command(*c))
                {
                    Some(c) if c.reissue_of != Some(original) => {
                        return Err(Rejection::IdReused {
                            id: key.to_string(),
                        })
                    }
                    Some(_) => {}
                    None => self.check_reissue(original, &binding)?,
                }
                self.admit(client, request, key, binding, Some(original), now)
            }
            ClientRequest::Cancel {
                request,
                command,
                generation,
            } => {
                let c = self
                    .working
                    .command(command)
                    .ok_or(Rejection::UnknownCommand { command })?;
                if c.binding.generation != generation {
                    return Err(Rejection::StaleGeneration {
                        command,
                        requested: generation,
                        actual: c.binding.generation,
                    });
                }
                if !self.has_room() {
                    return Err(Rejection::Busy);
                }
                let settlement = self.cancel_command(command, CancelReason::User, now);
                self.reply(
                    client,
                    ClientMessage::CancelSettlement {
                        request,
                        command,
                        settlement,
                    },
                );
                Ok(())
            }
            ClientRequest::Join { request, cursor } => self.join(client, request, cursor),
            ClientRequest::OpenSession {
                request,
                session,
                workspace,
                title,
            } => self.open_session(client, request, session, workspace, title, now),
            ClientRequest::RecordTurn {
                request,
                session,
                turn,
                prompt,
                plan,
                agent,
            } => self.record_turn(client, request, session, turn, prompt, plan, agent, now),
            ClientRequest::FinishTurn {
                request,
                turn,
                status,
                reply,
            } => {
                let t = self
                    .working
                    .turns
                    .get(&turn)
                    .ok_or(Rejection::UnknownTurn { turn })?;
                if t.end.is_some() {
                    return Err(Rejection::TurnEnded { turn });
                }
                self.writable()?;
                self.record(
                    now,
                    JournalRecord::TurnFinished {
                        turn,
                        status,
                        reply,
                    },
                );
                self.reply(client, ClientMessage::TurnFinished { request, turn });
                Ok(())
            }
            ClientRequest::RecordProviderRequest {
                request,
                provider_request,
                turn,
                step,
            } => self.record_provider_request(client, request, provider_request, turn, step, now),
            ClientRequest::RecordProviderReply {
                request,
                provider_request,
                text,
                tool_calls,
                stop,
                input_tokens,
                output_tokens,
            } => {
                let outcome = ProviderOutcome::Replied {
                    text,
                    tool_calls,
                    stop,
                    input_tokens,
                    output_tokens,
                    position: 0,
                };
                self.record_provider_outcome(client, request, provider_request, outcome, now)
            }
            ClientRequest::RecordProviderFailure {
                request,
                provider_request,
                class,
                message,
                partial_text,
            } => {
                let outcome = ProviderOutcome::Failed {
                    class,
                    message,
                    partial_text,
                    stamp: ErrorStamp::from_u128(1).expect("1 is a valid id"),
                    position: 0,
                };
                self.record_provider_outcome(client, request, provider_request, outcome, now)
            }
            ClientRequest::RecordSession { request, record } => {
                let session = record.session();
                if !self.working.sessions.contains_key(&session) {
                    return Err(Rejection::UnknownSession { session });
                }
                self.writable()?;
                self.record(now, JournalRecord::Session { record });
                self.reply(client, ClientMessage::SessionRecorded { request });
                Ok(())
            }
            ClientRequest::StopRuntime {
                request,
                runtime,
                generation,
            } => {
                // Fenced by the captured generation: a stop for an older
                // generation never reaches a replacement.
                if self.fenced_runtime(runtime, generation).is_err() {
                    return Err(Rejection::RuntimeNotCurrent {
                        runtime,
                        generation,
                    });
                }
                self.writable()?;
                self.retire_and_terminate(
                    runtime,
                    generation,
                    RetireCause::Stopped,
                    RecoveryKind::SessionStopped,
                    None,
                    "its session stopped it".into(),
                    now,
                );
                self.reply(
                    client,
                    ClientMessage::RuntimeStopping {
                        request,
                        runtime,
                        generation,
                    },
                );
                Ok(())
            }
        }
    }

    fn record_provider_request(
        &mut self,
        client: ClientId,
        request: RequestId,
        provider_request: ProviderRequestId,
        turn: TurnId,
        step: u32,
        now: Millis,
    ) -> Result<(), Rejection> {
        if let Some(r) = self.working.provider_requests.get(&provider_request) {
            if r.turn != turn || r.step != step {
                return Err(Rejection::IdReused {
                    id: provider_request.to_string(),
                });
            }
            self.reply(
                client,
                ClientMessage::ProviderRequestRecorded {
                    request,
                    provider_request,
                    existing: true,
                },
            );
            return Ok(());
        }
        let t = self
            .working
            .turns
            .get(&turn)
            .ok_or(Rejection::UnknownTurn { turn })?;
        if t.end.is_some() {
            return Err(Rejection::TurnEnded { turn });
        }
        if !t.agent.is_model() {
            return Err(Rejection::NotModelTurn { turn });
        }
        self.working
            .provider_step_allowed(turn, step)
            .map_err(|detail| Rejection::ProviderStepRefused { turn, step, detail })?;
        self.writable()?;
        if self.working.is_seen(provider_request.as_u128()) {
            return Err(Rejection::IdReused {
                id: provider_request.to_string(),
            });
        }
        self.record(
            now,
            JournalRecord::ProviderRequested {
                request: provider_request,
                turn,
                step,
            },
        );
        self.reply(
            client,
            ClientMessage::ProviderRequestRecorded {
                request,
                provider_request,
                existing: false,
            },
        );
        Ok(())
    }

    /// Records a reply or a failure (the failure's stamp is minted here).
    fn record_provider_outcome(
        &mut self,
        client: ClientId,
        request: RequestId,
        provider_request: ProviderRequestId,
        outcome: ProviderOutcome,
        now: Millis,
    ) -> Result<(), Rejection> {
        let r = self
            .working
            .provider_requests
            .get(&provider_request)
            .ok_or(Rejection::UnknownProviderRequest { provider_request })?;
        if let Some(recorded) = &r.outcome {
            if !recorded.same_content(&outcome) {
                return Err(Rejection::ProviderOutcomeConflict { provider_request });
            }
            self.reply(
                client,
                ClientMessage::ProviderOutcomeRecorded {
                    request,
                    provider_request,
                    existing: true,
                },
            );
            return Ok(());
        }
        let turn = r.turn;
        if self
            .working
            .turns
            .get(&turn)
            .is_some_and(|t| t.end.is_some())
        {
            return Err(Rejection::TurnEnded { turn });
        }
        self.writable()?;
        let record = match outcome {
            ProviderOutcome::Replied {
                text,
                tool_calls,
                stop,
                input_tokens,
                output_tokens,
                ..
            } => JournalRecord::ProviderReplied {
                request: provider_request,
                text,
                tool_calls,
                stop,
                input_tokens,
                output_tokens,
            },
            ProviderOutcome::Failed {
                class,
                message,
                partial_text,
                ..
            } => JournalRecord::ProviderFailed {
                request: provider_request,
                class,
                message,
                partial_text,
                stamp: self.mint(now, ErrorStamp::from_u128),
            },
        };
        self.record(now, record);
        self.reply(
            client,
            ClientMessage::ProviderOutcomeRecorded {
                request,
                provider_request,
                existing: false,
            },
        );
        Ok(())
    }

    /// Refuses new work while writes keep failing or too much is unwritten.
    fn writable(&self) -> Result<(), Rejection> {
        if let Some(detail) = &self.degraded {
            return Err(Rejection::JournalUnavailable {
                detail: detail.clone(),
            });
        }
        if !self.has_room() {
            return Err(Rejection::Busy);
        }
        Ok(())
    }

    fn open_session(
        &mut self,
        client: ClientId,
        request: RequestId,
        session: SessionId,
        workspace: WorkspaceId,
        title: String,
        now: Millis,
    ) -> Result<(), Rejection> {
        if let Some(s) = self.working.sessions.get(&session) {
            if s.workspace != workspace {
                return Err(Rejection::IdReused {
                    id: session.to_string(),
                });
            }
            self.reply(
                client,
                ClientMessage::SessionOpened {
                    request,
                    session,
                    existing: true,
                },
            );
            return Ok(());
        }
        self.writable()?;
        if self.working.is_seen(session.as_u128()) {
            return Err(Rejection::IdReused {
                id: session.to_string(),
            });
        }
        if self.working.sessions.len() >= limits::MAX_SESSIONS
            || self
                .working
                .sessions
                .values()
                .any(|s| s.workspace == workspace)
        {
            return Err(Rejection::IdReused {
                id: workspace.to_string(),
            });
        }
        self.record(
            now,
            JournalRecord::SessionOpened {
                session,
                workspace,
                title,
            },
        );
        self.reply(
            client,
            ClientMessage::SessionOpened {
                request,
                session,
                existing: false,
            },
        );
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn record_turn(
        &mut self,
        client: ClientId,
        request: RequestId,
        session: SessionId,
        turn: TurnId,
        prompt: String,
        plan: Vec<String>,
        agent: TurnAgent,
        now: Millis,
    ) -> Result<(), Rejection> {
        if let Some(t) = self.working.turns.get(&turn) {
            if t.session != session || t.prompt != prompt || t.plan != plan || t.agent != agent {
                return Err(Rejection::TurnConflict { turn });
            }
            self.reply(
                client,
                ClientMessage::TurnRecorded {
                    request,
                    turn,
                    existing: true,
                },
            );
            return Ok(());
        }
        if !self.working.sessions.contains_key(&session) {
            return Err(Rejection::UnknownSession { session });
        }
        self.writable()?;
        if self.working.is_seen(turn.as_u128()) {
            return Err(Rejection::IdReused {
                id: turn.to_string(),
            });
        }
        self.record(
            now,
            JournalRecord::TurnRecorded {
                session,
                turn,
                prompt,
                plan,
                agent,
            },
        );
        self.reply(
            client,
            ClientMessage::TurnRecorded {
                request,
                turn,
                existing: false,
            },
        );
        Ok(())
    }

    fn start_runtime(
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
        self.links.insert(
            runtime,
            Link {
                generation: next_generation,
                attached: false,
                last_heard: now,
                terminate_attempts: 0,
            },
        );
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

    /// A re-issue runs only an uncertain command, once, in its own session
    /// and with its own command line: anything else would be a replay the
    /// user did not ask for.
    fn check_reissue(
        &self,
        original: CommandId,
        binding: &crate::command::Binding,
    ) -> Result<(), Rejection> {
        let refuse = |detail: &str| Rejection::NotReissuable {
            command: original,
            detail: detail.into(),
        };
        let o = self
            .working
            .command(original)
            .ok_or(Rejection::UnknownCommand { command: original })?;
        if !matches!(o.outcome, Outcome::MayHaveStarted | Outcome::Lost) {
            return Err(refuse(
                "only a command whose outcome is uncertain is re-issued",
            ));
        }
        if let Some(replacement) = o.reissued_as {
            return Err(Rejection::NotReissuable {
                command: original,
                detail: format!("it was already re-issued as {replacement}"),
            });
        }
        if o.binding.session != binding.session || o.binding.command_line != binding.command_line {
            return Err(refuse(
                "a re-issue runs the same command line in the same session",
            ));
        }
        Ok(())
    }

    fn admit(
        &mut self,
        client: ClientId,
        request: RequestId,
        key: crate::id::IdempotencyKey,
        binding: crate::command::Binding,
        reissue_of: Option<CommandId>,
        now: Millis,
    ) -> Result<(), Rejection> {
        if let Some(existing) = self.working.keys.get(&key).copied() {
            let bound = &self.working.commands[&existing].binding;
            let fields = bound.differences(&binding);
            if !fields.is_empty() {
                return Err(Rejection::BindingMismatch(BindingMismatch {
                    key,
                    existing,
                    fields,
                }));
            }
            self.reply(
                client,
                ClientMessage::Admitted {
                    request,
                    key,
                    command: existing,
                    existing: true,
                },
            );
            return Ok(());
        }
        if let Some(detail) = &self.degraded {
            return Err(Rejection::JournalUnavailable {
                detail: detail.clone(),
            });
        }
        if self.working.is_seen(key.as_u128()) {
            return Err(Rejection::IdReused {
                id: key.to_string(),
            });
        }
        match self.working.workspaces.get(&binding.workspace) {
            Some(lease) if *lease == binding.lease => {}
            Some(lease) => {
                return Err(Rejection::StaleBinding {
                    field: BindingField::Lease,
                    detail: format!("the workspace's lease is {lease}"),
                })
            }
            None => {
                return Err(Rejection::StaleBinding {
                    field: BindingField::Workspace,
                    detail: "the workspace has no lease; start a runtime first".into(),
                })
            }
        }
        let current = self.working.leases[&binding.lease]
            .current()
            .map(|r| (r.runtime, r.generation));
        match current {
            None => {
                return Err(Rejection::StaleBinding {
                    field: BindingField::Runtime,
                    detail: "the lease has no current runtime".into(),
                })
            }
            Some((_, g)) if g != binding.generation => {
                return Err(Rejection::StaleBinding {
                    field: BindingField::Generation,
                    detail: format!("the current generation is {g}"),
                })
            }
            Some((r, _)) if r != binding.runtime => {
                return Err(Rejection::StaleBinding {
                    field: BindingField::Runtime,
                    detail: format!("the current runtime is {r}"),
                })
            }
            Some(_) => {}
        }
        if self.working.commands.len() >= self.config.max_commands {
            return Err(Rejection::JournalFull {
                limit: self.config.max_commands,
            });
        }
        if !self.has_room() {
            return Err(Rejection::Busy);
        }
        let command = self.mint(now, CommandId::from_u128);
        let deadline = binding.budget.deadline;
        self.record(
            now,
            JournalRecord::CommandAdmitted(CommandRecord {
                v: V1,
                command,
                key,
                binding,
                admitted_at: now,
                reissue_of,
            }),
        );
        self.defer(ControllerEffect::SetTimer {
            timer: TimerId::Deadline { command },
            at: deadline,
        });
        self.reply(
            client,
            ClientMessage::Admitted {
                request,
                key,
                command,
                existing: false,
            },
        );
        Ok(())
    }

    fn join(
        &mut self,
        client: ClientId,
        request: RequestId,
        cursor: crate::event::Cursor,
    ) -> Result<(), Rejection> {
        let command = cursor.command;
        let c = self
            .durable
            .command(command)
            .ok_or(Rejection::UnknownCommand { command })?;
        if cursor.after > c.last_seq {
            return Err(Rejection::CursorAhead {
                command,
                after: cursor.after,
                durable: c.last_seq,
            });
        }
        let subs = self.clients.entry(client).or_default();
        if !subs.contains(&command) && subs.len() >= self.config.max_subscriptions_per_client {
            return Err(Rejection::TooManyClients {
                limit: self.config.max_subscriptions_per_client,
            });
        }
        subs.insert(command);
        let mut out = Vec::new();
        if cursor.after < c.evicted_through {
            out.push(ClientMessage::Gap {
                command,
                from: cursor.after.next(),
                to: c.evicted_through,
            });
        }
        for e in c.events_after(cursor.after) {
            out.push(ClientMessage::Event {
                command,
                seq: e.seq,
                body: e.body.clone(),
            });
        }
        out.push(ClientMessage::Joined {
            request,
            command,
            through: c.last_seq,
            outcome: c.outcome,
        });
        for message in out {
            self.effects
                .push_back(ControllerEffect::NotifyClient { client, message });
        }
        Ok(())
    }

    /// Cancels one exact command. Callers have checked its generation.
    fn cancel_command(
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

    // ----- dispatch ------------------------------------------------------

    fn try_dispatch(&mut self, command: CommandId, now: Millis) {
        let Some(c) = self.working.command(command) else {
            return;
        };
        let ready = matches!(c.outcome, Outcome::Admitted | Outcome::NotDispatched)
            && c.exposure == Exposure::None
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

    fn dispatch_ready(&mut self, runtime: RuntimeId, generation: Generation, now: Millis) {
        for command in self.working.commands_on(runtime, generation) {
            self.try_dispatch(command, now);
        }
    }

    fn acknowledge(&mut self, command: CommandId, attempt: AttemptId, via: AckSource, now: Millis) {
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

    fn runtime_inner(
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
                Ok(())
            }
            RuntimeToController::CancelReply { command, reply, .. } => {
                self.bound_command(command, runtime, generation)?;
                self.cancel_reply(runtime, generation, command, reply, now);
                Ok(())
            }
        }
    }

    fn bound_command(
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

    fn refused(
        &mut self,
        command: CommandId,
        attempt: AttemptId,
        reason: DispatchRefusal,
        now: Millis,
    ) {
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
        let link = self.links.entry(runtime).or_insert(Link {
            generation,
            attached: false,
            last_heard: now,
            terminate_attempts: 0,
        });
        link.attached = true;
        link.last_heard = now;
        self.watch.dialed_in(runtime);
        // Only durable positions: the runtime resends everything after them
        // and anything still being written is dropped here as a duplicate.
        let durable = hello
            .streams
            .iter()
            .map(|s| DurablePosition {
                command: s.command,
                through: self
                    .durable
                    .command(s.command)
                    .filter(|c| c.binding.runtime == runtime)
                    .map_or(EventSeq::ZERO, |c| c.last_seq),
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

    /// A runtime's view of its streams (hello or heartbeat). Listing a
    /// command proves the runtime accepted it.
    fn streams(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        streams: &[StreamPosition],
        via: AckSource,
        now: Millis,
    ) {
        for s in streams {
            let Some(c) = self.working.command(s.command) else {
                continue;
            };
            if c.binding.runtime != runtime || c.binding.generation != generation {
                continue;
            }
            if c.exposure == (Exposure::Exposed { attempt: s.attempt }) {
                self.acknowledge(s.command, s.attempt, via, now);
            }
            if via != AckSource::Heartbeat {
                continue;
            }
            let working_last = self
                .working
                .command(s.command)
                .map_or(EventSeq::ZERO, |c| c.last_seq);
            let durable_last = self
                .durable
                .command(s.command)
                .map_or(EventSeq::ZERO, |c| c.last_seq);
            if s.last_seq > working_last {
                self.send(
                    runtime,
                    ControllerToRuntime::Resend {
                        runtime,
                        generation,
                        command: s.command,
                        after: working_last,
                    },
                );
            }
            if durable_last > s.durable_through {
                self.send(
                    runtime,
                    ControllerToRuntime::EventsDurable {
                        runtime,
                        generation,
                        command: s.command,
                        through: durable_last,
                    },
                );
            }
        }
    }

    fn event(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        command: CommandId,
        seq: EventSeq,
        body: EventBody,
        now: Millis,
    ) -> Result<(), ControllerError> {
        let exposure = self.bound_command(command, runtime, generation)?;
        let c = &self.working.commands[&command];
        let last = c.last_seq;
        let digest = body.digest();
        if seq <= last {
            return match c.digest_of(seq) {
                Some(d) if d != digest => {
                    if self.has_room() {
                        let outcomes = self.unchanged(command).into_iter().collect();
                        let rref = self.runtime_ref(runtime);
                        self.evidence(
                            now,
                            RecoveryKind::StreamConflict,
                            rref,
                            format!(
                                "runtime sent a different event {seq} for command {command}; the recorded event was kept"
                            ),
                            outcomes,
                        );
                    }
                    Err(ControllerError::ConflictingDuplicate { command, seq })
                }
                // Same content (or older than the dedup window): a resend.
                _ => {
                    let durable_last = self
                        .durable
                        .command(command)
                        .map_or(EventSeq::ZERO, |c| c.last_seq);
                    if seq <= durable_last {
                        self.send(
                            runtime,
                            ControllerToRuntime::EventsDurable {
                                runtime,
                                generation,
                                command,
                                through: durable_last,
                            },
                        );
                    }
                    Ok(())
                }
            };
        }
        if seq != last.next() {
            self.send(
                runtime,
                ControllerToRuntime::Resend {
                    runtime,
                    generation,
                    command,
                    after: last,
                },
            );
            return Err(ControllerError::SequenceGap {
                command,
                expected: last.next(),
                got: seq,
            });
        }
        if self.working.commands[&command].terminal.is_some() {
            return Err(ControllerError::Malformed {
                detail: format!("event {seq} for command {command} after its terminal event"),
            });
        }
        if !self.has_room() {
            return Err(ControllerError::Backpressure);
        }
        match exposure {
            Exposure::Exposed { attempt } => {
                self.acknowledge(command, attempt, AckSource::Event, now)
            }
            Exposure::Acknowledged { .. } => {}
            Exposure::None | Exposure::Refused { .. } => {
                return Err(ControllerError::Malformed {
                    detail: format!(
                        "event for command {command}, which this runtime never accepted"
                    ),
                })
            }
        }
        let c = &self.working.commands[&command];
        let policy = self.working.policy;
        let retained_inline = c.stdout.inline_bytes + c.stderr.inline_bytes;
        let retained_total = (c.stdout.total_bytes - c.stdout.dropped_bytes)
            + (c.stderr.total_bytes - c.stderr.dropped_bytes);
        let inline_room = policy.inline_output_bytes.saturating_sub(retained_inline);
        let budget_room = c
            .binding
            .budget
            .max_output_bytes
            .saturating_sub(retained_total);
        let (stdout_offset, stderr_offset) = (c.stdout.total_bytes, c.stderr.total_bytes);
        let mut blob = None;
        let retained = match &body {
            EventBody::Stdout { data } => {
                let (chunk, b) = retain_output(data, stdout_offset, inline_room, budget_room);
                blob = b;
                RetainedBody::Stdout(chunk)
            }
            EventBody::Stderr { data } => {
                let (chunk, b) = retain_output(data, stderr_offset, inline_room, budget_room);
                blob = b;
                RetainedBody::Stderr(chunk)
            }
            EventBody::Tool { name, detail } => RetainedBody::Tool {
                name: name.clone(),
                detail: detail.clone(),
            },
            EventBody::Lifecycle { phase } => RetainedBody::Lifecycle {
                phase: phase.clone(),
            },
            EventBody::Checkpoint { label } => RetainedBody::Checkpoint {
                label: label.clone(),
            },
            EventBody::Terminal(t) => RetainedBody::Terminal(t.clone()),
        };
        if let Some(b) = blob {
            // Content-addressed: the same bytes from any command are stored once.
            if !self.working.artifacts.contains_key(&b.digest) {
                self.record(
                    now,
                    JournalRecord::ArtifactStored {
                        digest: b.digest,
                        len: b.data.len() as u64,
                    },
                );
                self.open.artifacts.push(b);
            }
        }
        let terminal = match &body {
            EventBody::Terminal(t) => Some(t.status),
            _ => None,
        };
        self.record(
            now,
            JournalRecord::Event(EventRecord {
                v: V1,
                command,
                seq,
                digest,
                body: retained,
            }),
        );
        let outcome = self.working.outcome(command);
        match terminal {
            Some(status) => {
                if matches!(outcome, Some(Outcome::Dispatched | Outcome::Running)) {
                    self.change(now, command, OutcomeEvent::Finished(status));
                }
            }
            None => {
                if outcome == Some(Outcome::Dispatched) {
                    self.change(now, command, OutcomeEvent::Started);
                }
            }
        }
        self.send_after(
            runtime,
            ControllerToRuntime::EventsDurable {
                runtime,
                generation,
                command,
                through: seq,
            },
        );
        Ok(())
    }

    fn cancel_reply(
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

    fn transport_lost(&mut self, runtime: RuntimeId, now: Millis) -> Result<(), ControllerError> {
        let Some((_, view)) = self.working.runtime(runtime) else {
            return Err(ControllerError::UnknownRuntime { runtime });
        };
        let (generation, status) = (view.generation, view.status);
        match self.links.get_mut(&runtime) {
            Some(link) if link.attached => link.attached = false,
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
            let link = self.links.entry(runtime).or_insert(Link {
                generation,
                attached: false,
                last_heard: now,
                terminate_attempts: 0,
            });
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
    fn retire_and_terminate(
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
            link.attached = false;
        }
        self.defer(ControllerEffect::TerminateRuntime {
            runtime,
            generation,
        });
    }

    /// The journal's lease and status of `runtime`, only if it is of
    /// `generation`: every runtime-scoped input is fenced through here.
    fn fenced_runtime(
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

    /// The generation is confirmed dead: settle every command it held.
    fn runtime_gone(
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

    fn recover_procedure(&mut self, cause: StartCause, now: Millis) {
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
                            self.links.insert(
                                *runtime,
                                Link {
                                    generation: *generation,
                                    attached: false,
                                    last_heard: now,
                                    terminate_attempts: 0,
                                },
                            );
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

    // ----- timers --------------------------------------------------------

    /// A timer the controller asked for has fired. Stale timers are ignored.
    pub fn handle_timer(&mut self, timer: TimerId, now: Millis) {
        self.timer_inner(timer, now);
        self.flush();
    }

    fn timer_inner(&mut self, timer: TimerId, now: Millis) {
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
                        let again = f.batch.clone();
                        self.effects.push_back(ControllerEffect::Persist(again));
                    }
                }
            }
        }
    }
}
