//! The simulation proper: the real `lifeline_core` controller and runtime
//! state machines, driven by simulated time, an in-memory journal, a lossy
//! transport, simulated processes and a fault injector, with the invariants
//! of `docs/simulation.md` checked after every step.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use lifeline_core::{
    AttemptId, BatchId, Binding, Budget, CancelReason, ClientId, ClientMessage, ClientRequest,
    CommandId, Controller, ControllerConfig, ControllerEffect, ControllerToRuntime, Cursor,
    DispatchRefusal, EventSeq, Generation, IdempotencyKey, JournalEntry, JournalRecord, LeaseId,
    Millis, Outcome, OutcomeEvent, ProcessOutput, RecoveryKind, RequestId, RetainedBody,
    RetentionPolicy, Runtime, RuntimeConfig, RuntimeEffect, RuntimeId, RuntimeIdentity,
    RuntimeToController, SessionId, StartCause, TerminalStatus, TimerId, WorkspaceId, V1,
};

use crate::client::StreamView;
use crate::clock::Clock;
use crate::faults::{Boundary, Coverage, Fault, FaultPlan, Injector, Paths};
use crate::journal::{BatchFate, JournalStore};
use crate::net::{Network, PortId};
use crate::rng::Rng;
use crate::world::{ProcessEnd, Script, World};

/// Simulated milliseconds of client activity (faults are injected only then).
const ACTIVE_MS: u64 = 2_000;
/// Quiet period afterwards in which everything must settle.
const QUIET_MS: u64 = 8_000;
/// The quiet period of a run with small runtimes, whose commands wait for
/// each other's places and so settle one after another.
const SMALL_QUIET_MS: u64 = 16_000;
/// The simulated runtimes' heartbeat.
const HEARTBEAT_MS: u64 = 400;
/// How long an ended process's terminal event, or its runtime's death,
/// may take to become durable at the end of a run: a few heartbeats, a
/// resend and a retried write.
const SETTLING_MS: u64 = 3_000;
const CLIENTS: usize = 2;

/// Controller incarnation counter (a crashed controller's pending events are void).
type Inc = u64;

#[derive(Clone, Debug)]
enum Ev {
    ToController {
        inc: Inc,
        port: PortId,
        from: RuntimeId,
        msg: RuntimeToController,
    },
    ToRuntime {
        port: PortId,
        to: RuntimeId,
        msg: ControllerToRuntime,
    },
    PersistDone {
        inc: Inc,
        batch: BatchId,
    },
    CtlTimer {
        inc: Inc,
        timer: TimerId,
    },
    RtTimer {
        runtime: RuntimeId,
    },
    Process {
        runtime: RuntimeId,
        command: CommandId,
        step: usize,
    },
    KilledExit {
        runtime: RuntimeId,
        command: CommandId,
    },
    CrashNoticed {
        inc: Inc,
        runtime: RuntimeId,
        generation: Generation,
    },
    TerminateDone {
        inc: Inc,
        runtime: RuntimeId,
        generation: Generation,
        ok: bool,
    },
    Redial {
        runtime: RuntimeId,
    },
    ControllerStart {
        cause: StartCause,
    },
    ClientAct {
        client: usize,
    },
    ClientRejoin {
        client: usize,
    },
}

struct Proc {
    script: Script,
    done: bool,
    run_idx: usize,
}

struct RtSlot {
    rt: Runtime,
    generation: Generation,
    port: Option<PortId>,
    procs: BTreeMap<CommandId, Proc>,
    /// Its latest messages, which a zombie's port may deliver again.
    sent: Vec<RuntimeToController>,
    /// Everything it sends before this time waits until then (a busy
    /// worker): long enough for the controller's ACK timeout to fire.
    stalled_until: u64,
}

#[derive(Default)]
struct ClientState {
    attached: bool,
    next_request: u64,
    streams: BTreeMap<CommandId, StreamView>,
    last_position: BTreeMap<CommandId, u64>,
    terminal_seen: BTreeMap<CommandId, Outcome>,
    /// Admissions this client made: request -> key.
    pending_admits: BTreeMap<u64, IdempotencyKey>,
    /// Per command: the stdout byte offset the client expects next, and
    /// whether the core announced a gap (evicted events) since.
    out: BTreeMap<CommandId, (u64, bool)>,
}

/// What the oracle knows about one command from the durable journal alone.
#[derive(Clone, Debug)]
struct CmdOracle {
    binding: Binding,
    outcome: Outcome,
    exposures: Vec<(AttemptId, RuntimeId, Generation)>,
    acked: bool,
    last_seq: u64,
    /// Journal position at which `not_dispatched` was last claimed.
    not_dispatched_at: Option<u64>,
    /// Journal position of each exposure, by attempt.
    exposure_positions: BTreeMap<AttemptId, u64>,
    /// Uncertain or undispatched outcomes the journal gives a reason for
    /// (recovery evidence listing the command with that outcome, or the
    /// runtime's recorded refusal).
    reasons: BTreeSet<Outcome>,
    /// When its last refusal, for want of room, was recorded: it waits
    /// for a place.
    room_refused: Option<u64>,
    /// The durable cancel request, if any: why and when.
    cancel: Option<(CancelReason, u64)>,
}

/// Summary of one run.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Steps executed.
    pub steps: u64,
    /// Commands admitted.
    pub commands: usize,
    /// Outcomes at the end, by kind.
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Boundary coverage.
    pub coverage: Coverage,
    /// Durable journal entries.
    pub journal_len: usize,
    /// Process starts in the world.
    pub starts: usize,
    /// A cheap fingerprint of the whole run (for determinism checks).
    pub fingerprint: u64,
    /// Known core findings this run ran into.
    pub known: BTreeSet<&'static str>,
    /// Indirect recovery paths taken.
    pub paths: Paths,
}

/// One simulation run.
pub struct Sim {
    seed: u64,
    rng: Rng,
    clock: Clock<Ev>,
    journal: JournalStore<BatchId, JournalEntry>,
    fail_batches: BTreeSet<BatchId>,
    net: Network,
    injector: Injector,
    world: World,
    config: ControllerConfig,
    ctl: Option<Controller>,
    inc: Inc,
    runtimes: BTreeMap<RuntimeId, RtSlot>,
    /// Runtime incarnations by id, to know which generation an id had.
    generations: BTreeMap<RuntimeId, Generation>,
    workspace: WorkspaceId,
    session: SessionId,
    /// What the page knows: the current runtime to bind commands to.
    known_runtime: Option<(LeaseId, RuntimeId, Generation)>,
    starting_runtime: bool,
    /// A host loss struck while the controller was down.
    host_lost_while_down: bool,
    clients: Vec<ClientState>,
    keys: Vec<(IdempotencyKey, Binding)>,
    /// Last real-world action token handed out (one per new admission).
    next_token: u64,
    key_to_command: BTreeMap<IdempotencyKey, CommandId>,
    // Oracle over the durable journal.
    seen_entries: usize,
    last_position: u64,
    commands: BTreeMap<CommandId, CmdOracle>,
    gone: BTreeSet<(RuntimeId, Generation)>,
    retired: BTreeSet<(RuntimeId, Generation)>,
    durable_copy: Vec<JournalEntry>,
    violations: Vec<String>,
    /// Artifact contents by digest, as the controller wrote them.
    artifacts: BTreeMap<lifeline_core::Digest, String>,
    /// The controller message a runtime is handling right now.
    trigger: Option<ControllerToRuntime>,
    /// Ports of dead runtimes that still deliver.
    zombie_ports: BTreeSet<PortId>,
    /// Commands a client cancelled (with the right generation).
    user_cancelled: BTreeSet<CommandId>,
    /// Commands still `admitted` / `not_dispatched` when the quiet period began.
    unsettled_at_quiet: Option<BTreeSet<CommandId>>,
    paths: Paths,
    /// Known core findings seen in this run (not failures unless `strict`).
    known: BTreeSet<&'static str>,
    strict: bool,
    /// The dispatch being delivered to a runtime right now (command, attempt).
    delivering: Option<(CommandId, AttemptId)>,
    step: u64,
    trace: Option<Vec<String>>,
    fingerprint: u64,
    active_end: u64,
}

fn mix(h: u64, x: u64) -> u64 {
    (h ^ x)
        .wrapping_mul(0x100_0000_01B3)
        .rotate_left(17)
        .wrapping_add(0x9E37_79B9)
}

fn nonzero(x: u64) -> u128 {
    (u128::from(x) << 20) | 1
}

impl Sim {
    /// A third of the seeds run small runtimes, which refuse what does not
    /// fit: a refused command must still run, once, when one has finished.
    /// Decided without the rng, so that the other seeds keep their
    /// schedules.
    fn small_runtimes(&self) -> bool {
        self.seed % 3 == 1
    }

    fn quiet_ms(&self) -> u64 {
        if self.small_runtimes() {
            SMALL_QUIET_MS
        } else {
            QUIET_MS
        }
    }

    /// A run fully determined by `seed`. `trace` records a step trace.
    pub fn new(seed: u64, trace: bool) -> Sim {
        let mut rng = Rng::new(seed);
        let plan = FaultPlan::random(&mut rng);
        let mut entropy = vec![0u8; 16];
        for b in entropy.iter_mut() {
            *b = rng.next_u64() as u8;
        }
        let config = ControllerConfig {
            entropy,
            retention: RetentionPolicy {
                inline_output_bytes: *rng.pick(&[8, 64, 4096]),
                retained_events: *rng.pick(&[2, 4, 2048]),
                dedup_window: 4096,
                retained_evidence: 64,
                settled_with_events: 4,
            },
            ack_timeout_ms: 300,
            cancel_grace_ms: 300,
            heartbeat_timeout_ms: 1_500,
            reattach_timeout_ms: 1_200,
            persist_retry_ms: 20,
            persist_retry_max_ms: 200,
            persist_failures_before_degraded: 5,
            terminate_retry_ms: 100,
            max_terminate_attempts: 4,
            ..ControllerConfig::default()
        };
        let workspace = WorkspaceId::from_u128(nonzero(rng.next_u64())).unwrap();
        let session = SessionId::from_u128(nonzero(rng.next_u64())).unwrap();
        let net = Network::new(plan.net);
        let mut sim = Sim {
            seed,
            rng,
            clock: Clock::new(),
            journal: JournalStore::new(),
            fail_batches: BTreeSet::new(),
            net,
            injector: Injector::new(plan),
            world: World::default(),
            config: config.clone(),
            ctl: Some(Controller::new(config, Millis(0))),
            inc: 1,
            runtimes: BTreeMap::new(),
            generations: BTreeMap::new(),
            workspace,
            session,
            known_runtime: None,
            starting_runtime: false,
            host_lost_while_down: false,
            clients: (0..CLIENTS)
                .map(|_| ClientState {
                    attached: true,
                    ..ClientState::default()
                })
                .collect(),
            keys: Vec::new(),
            next_token: 0,
            key_to_command: BTreeMap::new(),
            seen_entries: 0,
            last_position: 0,
            commands: BTreeMap::new(),
            gone: BTreeSet::new(),
            retired: BTreeSet::new(),
            durable_copy: Vec::new(),
            violations: Vec::new(),
            artifacts: BTreeMap::new(),
            trigger: None,
            zombie_ports: BTreeSet::new(),
            user_cancelled: BTreeSet::new(),
            unsettled_at_quiet: None,
            paths: Paths::default(),
            known: BTreeSet::new(),
            strict: false,
            delivering: None,
            step: 0,
            trace: trace.then(Vec::new),
            fingerprint: seed,
            active_end: ACTIVE_MS,
        };
        sim.ctl_effects();
        for c in 0..CLIENTS {
            let at = sim.rng.range(1, 20);
            sim.clock.schedule_at(at, Ev::ClientAct { client: c });
        }
        sim
    }

    /// Makes known core findings fail the run too (for their reproductions).
    pub fn strict(mut self) -> Sim {
        self.strict = true;
        self
    }

    /// A known core finding (see docs/simulation.md, Findings). Every
    /// finding so far is fixed, so nothing reports one now; the next open
    /// finding is reported through here while its fix is pending.
    #[allow(dead_code)]
    fn finding(&mut self, id: &'static str, text: String) {
        if self.strict {
            self.violation(format!("[{id}] {text}"));
        } else {
            self.log(|| format!("KNOWN FINDING [{id}]: {text}"));
            self.known.insert(id);
        }
    }

    /// The fault plan of this run.
    pub fn plan(&self) -> &FaultPlan {
        &self.injector.plan
    }

    /// The recorded trace (if tracing).
    pub fn trace(&self) -> &[String] {
        self.trace.as_deref().unwrap_or(&[])
    }

    fn log(&mut self, text: impl FnOnce() -> String) {
        if let Some(t) = &mut self.trace {
            let line = format!("[{:>6}ms #{:>5}] {}", self.clock.now(), self.step, text());
            t.push(line);
        }
    }

    fn violation(&mut self, text: String) {
        self.violations.push(format!(
            "step {} at {}ms: {}",
            self.step,
            self.clock.now(),
            text
        ));
    }

    fn now(&self) -> Millis {
        Millis(self.clock.now())
    }

    fn active(&self) -> bool {
        self.clock.now() < self.active_end
    }

    fn strike(&mut self, boundary: Boundary, choices: &[Fault]) -> Option<Fault> {
        if !self.active() {
            return None;
        }
        let f = self.injector.strike(&mut self.rng, boundary, choices);
        if let Some(f) = f {
            self.log(|| format!("FAULT {f:?} at boundary '{boundary}'"));
        }
        f
    }

    /// Runs to completion. `Err` carries the violation and the seed.
    pub fn run(&mut self) -> Result<Report, String> {
        let end = self.active_end + self.quiet_ms();
        while let Some((at, ev)) = self.clock.pop() {
            if at > end {
                break;
            }
            if at >= self.active_end && self.unsettled_at_quiet.is_none() {
                let waiting = self
                    .commands
                    .iter()
                    .filter(|(_, c)| {
                        matches!(c.outcome, Outcome::Admitted | Outcome::NotDispatched)
                    })
                    .map(|(id, _)| *id)
                    .collect();
                self.unsettled_at_quiet = Some(waiting);
            }
            self.step += 1;
            self.fingerprint = mix(self.fingerprint, at ^ (self.step << 40));
            self.handle(ev);
            self.check_step();
            if !self.violations.is_empty() {
                return Err(self.failure());
            }
        }
        self.check_end();
        if !self.violations.is_empty() {
            return Err(self.failure());
        }
        let mut outcomes = BTreeMap::new();
        for c in self.commands.values() {
            *outcomes.entry(c.outcome.as_str()).or_insert(0) += 1;
        }
        Ok(Report {
            steps: self.step,
            commands: self.commands.len(),
            outcomes,
            coverage: self.injector.coverage.clone(),
            journal_len: self.journal.durable().len(),
            starts: self.world.runs.values().map(Vec::len).sum(),
            fingerprint: mix(self.fingerprint, self.journal.durable().len() as u64),
            known: self.known.clone(),
            paths: self.paths.clone(),
        })
    }

    fn failure(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "simulation seed {} violated an invariant:", self.seed);
        for v in &self.violations {
            let _ = writeln!(s, "  {v}");
        }
        let _ = writeln!(s, "plan: {:?}", self.injector.plan);
        let _ = writeln!(
            s,
            "replay: LIFELINE_SIM_SEED={} cargo test -p lifeline-tests --test simulation -- --nocapture",
            self.seed
        );
        s
    }

    // ----- event dispatch --------------------------------------------------

    fn handle(&mut self, ev: Ev) {
        let now = self.now();
        match ev {
            Ev::ToController {
                inc,
                port,
                from,
                msg,
            } => {
                if inc != self.inc || self.ctl.is_none() || !self.net.is_live(port) {
                    return;
                }
                // A zombie: its worker is dead, or replaced, yet its old port
                // still delivers. Once its generation is durably gone the core
                // must ignore it (the journal checks catch anything recorded).
                let zombie = self.zombie_ports.contains(&port) && self.gone.contains(&msg.sender());
                self.log(|| {
                    format!(
                        "ctl <- {from}{}: {}",
                        if zombie { " (zombie)" } else { "" },
                        short_rt(&msg)
                    )
                });
                let r = self.ctl.as_mut().unwrap().handle_runtime(from, msg, now);
                if let Err(e) = r {
                    self.log(|| format!("ctl refused: {e}"));
                }
                if zombie {
                    self.paths.zombie_after_gone += 1;
                    if self.ctl.as_ref().is_some_and(|c| c.is_attached(from)) {
                        self.violation(format!(
                            "zombie runtime {from}, whose generation is recorded gone, was attached"
                        ));
                    }
                }
                self.ctl_effects();
            }
            Ev::ToRuntime { port, to, msg } => {
                if !self.net.is_live(port) || !self.runtimes.contains_key(&to) {
                    return;
                }
                if let ControllerToRuntime::Dispatch { order, .. } = &msg {
                    let command = order.command;
                    match self.strike(
                        Boundary::AfterSendBeforeAck,
                        &[
                            Fault::CrashRuntime,
                            Fault::CrashController,
                            Fault::HostLoss,
                            Fault::ClientCancel,
                            Fault::TransportLoss,
                        ],
                    ) {
                        Some(Fault::CrashRuntime) => return self.crash_runtime(to),
                        Some(Fault::CrashController) => return self.crash_controller(false),
                        Some(Fault::HostLoss) => return self.crash_controller(true),
                        Some(Fault::ClientCancel) => self.client_cancel(0, command),
                        Some(Fault::TransportLoss) => return self.transport_loss(to),
                        _ => {}
                    }
                    if !self.runtimes.contains_key(&to) {
                        return;
                    }
                }
                if let ControllerToRuntime::Cancel { .. } = &msg {
                    match self.strike(
                        Boundary::DuringCancellation,
                        &[
                            Fault::CrashRuntime,
                            Fault::CrashController,
                            Fault::TransportLoss,
                        ],
                    ) {
                        Some(Fault::CrashRuntime) => return self.crash_runtime(to),
                        Some(Fault::CrashController) => return self.crash_controller(false),
                        Some(Fault::TransportLoss) => return self.transport_loss(to),
                        _ => {}
                    }
                }
                self.log(|| format!("rt {to} <- {}", short_ctl(&msg)));
                self.delivering = match &msg {
                    ControllerToRuntime::Dispatch { order, .. } => {
                        Some((order.command, order.attempt))
                    }
                    _ => None,
                };
                self.trigger = Some(msg.clone());
                let slot = self.runtimes.get_mut(&to).unwrap();
                let r = slot.rt.handle_controller(msg, now);
                if let Err(e) = r {
                    self.log(|| format!("rt refused: {e}"));
                }
                self.rt_effects(to);
                self.trigger = None;
            }
            Ev::PersistDone { inc, batch } => {
                if inc != self.inc || self.ctl.is_none() {
                    return;
                }
                self.persist_done(batch);
            }
            Ev::CtlTimer { inc, timer } => {
                if inc != self.inc || self.ctl.is_none() {
                    return;
                }
                self.log(|| format!("ctl timer {timer:?}"));
                self.ctl.as_mut().unwrap().handle_timer(timer, now);
                self.ctl_effects();
            }
            Ev::RtTimer { runtime } => {
                if let Some(slot) = self.runtimes.get_mut(&runtime) {
                    slot.rt.handle_timer(now);
                    self.rt_effects(runtime);
                }
            }
            Ev::Process {
                runtime,
                command,
                step,
            } => self.process_step(runtime, command, step),
            Ev::KilledExit { runtime, command } => {
                if let Some(slot) = self.runtimes.get_mut(&runtime) {
                    let r = slot
                        .rt
                        .handle_process(command, ProcessOutput::Exit { code: 143 }, now);
                    self.log(|| format!("rt {runtime}: {command} exit 143 after kill ({r:?})"));
                    self.rt_effects(runtime);
                }
            }
            Ev::CrashNoticed {
                inc,
                runtime,
                generation,
            } => {
                if inc != self.inc || self.ctl.is_none() {
                    return;
                }
                self.log(|| format!("shell: runtime {runtime} gen {generation} crashed"));
                let r = self
                    .ctl
                    .as_mut()
                    .unwrap()
                    .handle_runtime_crashed(runtime, generation, now);
                if let Err(e) = r {
                    self.log(|| format!("ctl: {e}"));
                }
                if self.known_runtime.is_some_and(|k| k.1 == runtime) {
                    self.known_runtime = None;
                }
                self.ctl_effects();
            }
            Ev::TerminateDone {
                inc,
                runtime,
                generation,
                ok,
            } => {
                if inc != self.inc || self.ctl.is_none() {
                    return;
                }
                let ctl = self.ctl.as_mut().unwrap();
                let r = if ok {
                    ctl.handle_runtime_terminated(runtime, generation, now)
                } else {
                    ctl.handle_cleanup_failed(runtime, generation, "simulated cleanup failure", now)
                };
                self.log(|| format!("shell: terminate {runtime} ok={ok} -> {r:?}"));
                if self.known_runtime.is_some_and(|k| k.1 == runtime) {
                    self.known_runtime = None;
                }
                self.ctl_effects();
            }
            Ev::Redial { runtime } => {
                if self.ctl.is_none() {
                    return;
                }
                let port = self.net.open_port();
                if let Some(slot) = self.runtimes.get_mut(&runtime) {
                    if slot.port.is_some() {
                        return;
                    }
                    slot.port = Some(port);
                    slot.rt.handle_connected(now);
                    self.log(|| format!("rt {runtime} dials in on port {port}"));
                    self.rt_effects(runtime);
                }
            }
            Ev::ControllerStart { cause } => self.controller_start(cause),
            Ev::ClientAct { client } => self.client_act(client),
            Ev::ClientRejoin { client } => self.client_rejoin(client),
        }
    }

    // ----- controller side ---------------------------------------------------

    fn ctl_effects(&mut self) {
        loop {
            let Some(ctl) = self.ctl.as_mut() else { return };
            let Some(effect) = ctl.poll_effect() else {
                return;
            };
            self.ctl_effect(effect);
        }
    }

    fn ctl_effect(&mut self, effect: ControllerEffect) {
        let now = self.now();
        match effect {
            ControllerEffect::Persist(batch) => {
                let records = &batch.entries;
                let has = |f: &dyn Fn(&JournalRecord) -> bool| records.iter().any(|e| f(&e.record));
                let admit = has(&|r| matches!(r, JournalRecord::CommandAdmitted(_)));
                let exposed = has(&|r| matches!(r, JournalRecord::DispatchExposed { .. }));
                let ack = has(&|r| matches!(r, JournalRecord::Acknowledged { .. }));
                let terminal = has(&|r| {
                    matches!(
                        r,
                        JournalRecord::Event(e) if matches!(e.body, RetainedBody::Terminal(_))
                    )
                });
                let cancel = has(&|r| matches!(r, JournalRecord::CancelRequested { .. }));
                let id = batch.batch;
                self.log(|| {
                    let kinds: Vec<String> =
                        batch.entries.iter().map(|e| short_rec(&e.record)).collect();
                    format!("persist batch {} [{}]", id.0, kinds.join(", "))
                });
                for a in &batch.artifacts {
                    self.artifacts.insert(a.digest(), a.data().to_owned());
                }
                self.journal.begin(id, batch.entries.clone());
                let delay = self.rng.range(1, 8);
                self.clock.schedule_in(
                    delay,
                    Ev::PersistDone {
                        inc: self.inc,
                        batch: id,
                    },
                );
                let persist_faults = [Fault::CrashController, Fault::HostLoss, Fault::FailPersist];
                let with_rt = [
                    Fault::CrashController,
                    Fault::HostLoss,
                    Fault::FailPersist,
                    Fault::CrashRuntime,
                ];
                let mut strikes = Vec::new();
                if admit {
                    strikes.push(self.strike(Boundary::BeforeAdmitPersist, &persist_faults));
                }
                if exposed {
                    strikes.push(self.strike(Boundary::AfterAdmitBeforeExposurePersist, &with_rt));
                }
                if ack {
                    strikes.push(self.strike(Boundary::AfterAckBeforeAckPersist, &with_rt));
                }
                if terminal {
                    strikes.push(self.strike(Boundary::BeforeTerminalPersist, &persist_faults));
                }
                if cancel {
                    strikes.push(self.strike(Boundary::DuringCancellation, &with_rt));
                }
                for s in strikes.into_iter().flatten() {
                    match s {
                        Fault::FailPersist => {
                            self.fail_batches.insert(id);
                        }
                        Fault::CrashController => return self.crash_controller(false),
                        Fault::HostLoss => return self.crash_controller(true),
                        Fault::CrashRuntime => {
                            if let Some(r) = self.runtimes.keys().next_back().copied() {
                                self.crash_runtime(r);
                            }
                        }
                        _ => {}
                    }
                }
            }
            ControllerEffect::SendToRuntime { runtime, message } => {
                let mut force_drop = false;
                let mut force_dup = false;
                let mut misroute = false;
                match &message {
                    ControllerToRuntime::Dispatch { order, .. } => {
                        // Exposure before send: the record must already be durable.
                        let exposed = self.durable_has(|r| {
                            matches!(r, JournalRecord::DispatchExposed { command, attempt, .. }
                                if *command == order.command && *attempt == order.attempt)
                        });
                        if !exposed {
                            self.violation(format!(
                                "dispatch of {} attempt {} sent before its exposure record was durable",
                                order.command, order.attempt
                            ));
                        }
                        match self.strike(
                            Boundary::AfterExposureBeforeSend,
                            &[
                                Fault::CrashController,
                                Fault::HostLoss,
                                Fault::DropMessage,
                                Fault::DuplicateMessage,
                                Fault::CrashRuntime,
                                Fault::ClientCancel,
                            ],
                        ) {
                            Some(Fault::CrashController) => return self.crash_controller(false),
                            Some(Fault::HostLoss) => return self.crash_controller(true),
                            Some(Fault::DropMessage) => force_drop = true,
                            Some(Fault::DuplicateMessage) => {
                                force_dup = true;
                                misroute = true;
                            }
                            Some(Fault::CrashRuntime) => self.crash_runtime(runtime),
                            Some(Fault::ClientCancel) => self.client_cancel(1, order.command),
                            _ => {}
                        }
                    }
                    ControllerToRuntime::Cancel { .. } => {
                        match self.strike(
                            Boundary::DuringCancellation,
                            &[
                                Fault::DropMessage,
                                Fault::DuplicateMessage,
                                Fault::HostLoss,
                                Fault::CrashController,
                            ],
                        ) {
                            Some(Fault::DropMessage) => force_drop = true,
                            Some(Fault::DuplicateMessage) => force_dup = true,
                            Some(Fault::HostLoss) => return self.crash_controller(true),
                            Some(Fault::CrashController) => return self.crash_controller(false),
                            _ => {}
                        }
                    }
                    _ => {}
                }
                self.log(|| format!("ctl -> {runtime}: {}", short_ctl(&message)));
                let Some(port) = self.runtimes.get(&runtime).and_then(|s| s.port) else {
                    return;
                };
                let delays = self
                    .net
                    .transmit(&mut self.rng, force_drop, force_dup && !misroute);
                for d in delays {
                    self.clock.schedule_in(
                        d,
                        Ev::ToRuntime {
                            port,
                            to: runtime,
                            msg: message.clone(),
                        },
                    );
                }
                if misroute {
                    // A crossed wire: a copy reaches another live runtime,
                    // which must refuse it (generation fencing).
                    let other = self
                        .runtimes
                        .iter()
                        .find(|(id, s)| **id != runtime && s.port.is_some())
                        .map(|(id, s)| (*id, s.port.unwrap()));
                    let (to, port) = other.unwrap_or((runtime, port));
                    self.clock.schedule_in(
                        self.rng.range(1, 30),
                        Ev::ToRuntime {
                            port,
                            to,
                            msg: message,
                        },
                    );
                }
            }
            ControllerEffect::NotifyClient { client, message } => {
                self.notify_client(client, message);
            }
            ControllerEffect::SetTimer { timer, at } => {
                self.clock.schedule_at(
                    at.0,
                    Ev::CtlTimer {
                        inc: self.inc,
                        timer,
                    },
                );
            }
            ControllerEffect::SpawnRuntime {
                workspace: _,
                lease,
                runtime,
                generation,
                execution,
            } => {
                self.log(|| format!("spawn runtime {runtime} gen {generation}"));
                let identity = RuntimeIdentity {
                    lease,
                    runtime,
                    generation,
                    execution,
                };
                let mut config = RuntimeConfig::new(identity);
                config.heartbeat_interval_ms = HEARTBEAT_MS;
                if self.small_runtimes() {
                    config.max_commands = 1 + (self.seed / 3 % 2) as usize;
                }
                let rt = Runtime::new(config, now);
                let port = self.net.open_port();
                self.generations.insert(runtime, generation);
                self.runtimes.insert(
                    runtime,
                    RtSlot {
                        rt,
                        generation,
                        port: Some(port),
                        procs: BTreeMap::new(),
                        sent: Vec::new(),
                        stalled_until: 0,
                    },
                );
                self.known_runtime = Some((lease, runtime, generation));
                self.starting_runtime = false;
                self.runtimes
                    .get_mut(&runtime)
                    .unwrap()
                    .rt
                    .handle_connected(now);
                self.rt_effects(runtime);
            }
            ControllerEffect::TerminateRuntime {
                runtime,
                generation,
            } => {
                let stubborn =
                    self.injector.plan.stubborn_cleanup && self.active() && self.rng.chance(900);
                let strike = if stubborn {
                    self.injector
                        .record(Boundary::DuringCleanup, Fault::FailCleanup);
                    self.log(|| "FAULT FailCleanup (stubborn cleanup)".to_string());
                    Some(Fault::FailCleanup)
                } else {
                    self.strike(
                        Boundary::DuringCleanup,
                        &[Fault::FailCleanup, Fault::CrashController, Fault::HostLoss],
                    )
                };
                let fail = match strike {
                    Some(Fault::FailCleanup) => true,
                    Some(Fault::CrashController) => return self.crash_controller(false),
                    Some(Fault::HostLoss) => return self.crash_controller(true),
                    _ => false,
                };
                self.log(|| format!("terminate {runtime} gen {generation} (fail={fail})"));
                if !fail {
                    let matches = self
                        .runtimes
                        .get(&runtime)
                        .is_some_and(|s| s.generation == generation);
                    if matches {
                        self.kill_runtime_leaving_zombie(runtime);
                    }
                }
                let d = self.rng.range(1, 20);
                self.clock.schedule_in(
                    d,
                    Ev::TerminateDone {
                        inc: self.inc,
                        runtime,
                        generation,
                        ok: !fail,
                    },
                );
            }
        }
    }

    fn persist_done(&mut self, batch: BatchId) {
        let now = self.now();
        let fail = self.fail_batches.remove(&batch)
            || (self.active() && self.rng.chance(self.injector.plan.persist_fail));
        if fail {
            self.journal.resolve_next(BatchFate::Failed);
            self.log(|| format!("persist batch {} FAILED", batch.0));
            let r = self
                .ctl
                .as_mut()
                .unwrap()
                .handle_persist_failed(batch, "simulated abort", now);
            if let Err(e) = r {
                self.violation(format!(
                    "persist failure of the in-flight batch refused: {e}"
                ));
            }
            self.ctl_effects();
            return;
        }
        let terminal = self.journal.in_flight().next().is_some_and(|(_, es)| {
            es.iter().any(|e| {
                matches!(&e.record, JournalRecord::OutcomeChanged { to, .. } if to.is_terminal())
            })
        });
        self.journal.resolve_next(BatchFate::Committed);
        self.log(|| format!("persist batch {} committed", batch.0));
        self.absorb_durable();
        if terminal {
            match self.strike(
                Boundary::AfterTerminalPersistBeforeNotify,
                &[
                    Fault::CrashController,
                    Fault::HostLoss,
                    Fault::ClientDisconnect,
                ],
            ) {
                Some(Fault::CrashController) => return self.crash_controller(false),
                Some(Fault::HostLoss) => return self.crash_controller(true),
                Some(Fault::ClientDisconnect) => self.client_detach(0),
                _ => {}
            }
        }
        let r = self
            .ctl
            .as_mut()
            .unwrap()
            .handle_persist_complete(batch, now);
        if let Err(e) = r {
            self.violation(format!("confirmation of the in-flight batch refused: {e}"));
        }
        self.ctl_effects();
    }

    fn durable_has(&self, f: impl Fn(&JournalRecord) -> bool) -> bool {
        self.journal.durable().iter().any(|e| f(&e.record))
    }

    fn crash_controller(&mut self, host_loss: bool) {
        if self.ctl.is_none() {
            // The controller is already down and being restarted; a host
            // loss now still takes every runtime (and its processes) with
            // it, and the restart becomes a host-loss recovery.
            if host_loss {
                self.log(|| "HOST LOSS while the controller is down".to_string());
                let ids: Vec<RuntimeId> = self.runtimes.keys().copied().collect();
                for id in ids {
                    self.kill_runtime(id);
                }
                self.known_runtime = None;
                self.host_lost_while_down = true;
            }
            return;
        }
        let committed = self.journal.crash(&mut self.rng);
        self.log(|| {
            format!(
                "CRASH controller{} ({} in-flight batch(es) committed)",
                if host_loss { " + HOST LOSS" } else { "" },
                committed
            )
        });
        self.absorb_durable();
        self.ctl = None;
        self.inc += 1;
        self.fail_batches.clear();
        self.starting_runtime = false;
        for c in self.clients.iter_mut() {
            c.attached = false;
        }
        let ids: Vec<RuntimeId> = self.runtimes.keys().copied().collect();
        for id in ids {
            if host_loss {
                self.kill_runtime(id);
            } else if let Some(slot) = self.runtimes.get_mut(&id) {
                if let Some(p) = slot.port.take() {
                    self.net.break_port(p);
                }
                slot.rt.handle_disconnected(Millis(self.clock.now()));
            }
        }
        if host_loss {
            self.known_runtime = None;
        }
        let d = self.rng.range(5, 60);
        self.clock.schedule_in(
            d,
            Ev::ControllerStart {
                cause: if host_loss {
                    StartCause::HostLoss
                } else {
                    StartCause::ControllerRestart
                },
            },
        );
    }

    fn controller_start(&mut self, cause: StartCause) {
        let now = self.now();
        let cause = if std::mem::take(&mut self.host_lost_while_down) {
            StartCause::HostLoss
        } else {
            cause
        };
        let mut config = self.config.clone();
        for b in config.entropy.iter_mut() {
            *b = self.rng.next_u64() as u8;
        }
        match Controller::recover(config, self.journal.durable(), cause, now) {
            Ok(ctl) => {
                self.log(|| format!("controller recovered ({cause:?})"));
                self.ctl = Some(ctl);
            }
            Err(e) => {
                self.violation(format!("durable journal cannot be recovered: {e}"));
                return;
            }
        }
        self.ctl_effects();
        let ids: Vec<RuntimeId> = self.runtimes.keys().copied().collect();
        for id in ids {
            let d = self.rng.range(1, 30);
            self.clock.schedule_in(d, Ev::Redial { runtime: id });
        }
        for c in 0..CLIENTS {
            let d = self.rng.range(1, 40);
            self.clock.schedule_in(d, Ev::ClientRejoin { client: c });
        }
    }

    // ----- runtime side ------------------------------------------------------

    /// The worker dies but, some of the time, its port does not: the
    /// messages it sent last arrive again later, while the controller that
    /// should ignore them lives on (a zombie).
    fn kill_runtime_leaving_zombie(&mut self, runtime: RuntimeId) {
        let rate = self.injector.plan.zombie;
        if self.ctl.is_some() && self.active() && self.rng.chance(rate) {
            if let Some(slot) = self.runtimes.get_mut(&runtime) {
                if let Some(port) = slot.port.take() {
                    let sent = std::mem::take(&mut slot.sent);
                    self.zombie_ports.insert(port);
                    let n = self.rng.range(1, 5);
                    for _ in 0..n.min(sent.len() as u64) {
                        let msg = self.rng.pick(&sent).clone();
                        let d = self.rng.range(1, 1_500);
                        self.clock.schedule_in(
                            d,
                            Ev::ToController {
                                inc: self.inc,
                                port,
                                from: runtime,
                                msg,
                            },
                        );
                    }
                    self.log(|| format!("runtime {runtime} leaves a zombie port {port}"));
                }
            }
        }
        self.kill_runtime(runtime);
    }

    fn kill_runtime(&mut self, runtime: RuntimeId) {
        if let Some(slot) = self.runtimes.remove(&runtime) {
            if let Some(p) = slot.port {
                self.net.break_port(p);
            }
            self.world
                .runtime_died(slot.generation.0, &runtime.to_string(), self.clock.now());
            self.log(|| format!("runtime {runtime} gen {} is dead", slot.generation));
        }
    }

    fn crash_runtime(&mut self, runtime: RuntimeId) {
        let Some(generation) = self.runtimes.get(&runtime).map(|s| s.generation) else {
            return;
        };
        self.log(|| format!("CRASH runtime {runtime} gen {generation}"));
        self.kill_runtime_leaving_zombie(runtime);
        if self.rng.chance(800) {
            let d = self.rng.range(1, 50);
            self.clock.schedule_in(
                d,
                Ev::CrashNoticed {
                    inc: self.inc,
                    runtime,
                    generation,
                },
            );
        } else if self.ctl.is_some() {
            // Silent death: the shell only sees the port close.
            let now = self.now();
            let _ = self
                .ctl
                .as_mut()
                .unwrap()
                .handle_transport_lost(runtime, now);
            self.ctl_effects();
            if self.known_runtime.is_some_and(|k| k.1 == runtime) {
                self.known_runtime = None;
            }
        }
    }

    fn transport_loss(&mut self, runtime: RuntimeId) {
        let now = self.now();
        let Some(slot) = self.runtimes.get_mut(&runtime) else {
            return;
        };
        if let Some(p) = slot.port.take() {
            self.net.break_port(p);
        }
        slot.rt.handle_disconnected(now);
        self.log(|| format!("TRANSPORT LOSS to runtime {runtime}"));
        if let Some(ctl) = self.ctl.as_mut() {
            let _ = ctl.handle_transport_lost(runtime, now);
        }
        self.ctl_effects();
        let d = self.rng.range(5, 200);
        self.clock.schedule_in(d, Ev::Redial { runtime });
    }

    fn rt_effects(&mut self, runtime: RuntimeId) {
        loop {
            let Some(slot) = self.runtimes.get_mut(&runtime) else {
                return;
            };
            let Some(effect) = slot.rt.poll_effect() else {
                return;
            };
            self.rt_effect(runtime, effect);
        }
    }

    fn rt_effect(&mut self, runtime: RuntimeId, effect: RuntimeEffect) {
        let now = self.now();
        let generation = self.runtimes[&runtime].generation;
        match effect {
            RuntimeEffect::Send(msg) => {
                let mut force_drop = false;
                let mut force_dup = false;
                let boundary = match &msg {
                    RuntimeToController::Ack { .. } => Some(Boundary::AfterSendBeforeAck),
                    RuntimeToController::Hello(_) => Some(Boundary::DuringReattach),
                    RuntimeToController::CancelReply { .. } => Some(Boundary::DuringCancellation),
                    RuntimeToController::Event {
                        body: lifeline_core::EventBody::Terminal(_),
                        ..
                    } => Some(Boundary::BeforeTerminalPersist),
                    _ => None,
                };
                let mut stall = None;
                if let Some(b) = boundary {
                    let delayable = matches!(msg, RuntimeToController::Ack { .. });
                    let choices: &[Fault] = if delayable {
                        &[
                            Fault::DropMessage,
                            Fault::DuplicateMessage,
                            Fault::CrashController,
                            Fault::CrashRuntime,
                            Fault::DelayMessage,
                        ]
                    } else {
                        &[
                            Fault::DropMessage,
                            Fault::DuplicateMessage,
                            Fault::CrashController,
                            Fault::CrashRuntime,
                        ]
                    };
                    match self.strike(b, choices) {
                        Some(Fault::DelayMessage) => stall = Some(Fault::DelayMessage),
                        Some(Fault::DropMessage) => force_drop = true,
                        Some(Fault::DuplicateMessage) => force_dup = true,
                        Some(Fault::CrashController) => {
                            self.crash_controller(false);
                        }
                        Some(Fault::CrashRuntime) => return self.crash_runtime(runtime),
                        _ => {}
                    }
                }
                if let Some(Fault::DelayMessage) = stall {
                    if let Some(slot) = self.runtimes.get_mut(&runtime) {
                        let until = now.0 + self.config.ack_timeout_ms + self.rng.range(50, 600);
                        slot.stalled_until = slot.stalled_until.max(until);
                    }
                }
                let Some(slot) = self.runtimes.get_mut(&runtime) else {
                    return;
                };
                let Some(port) = slot.port else {
                    return;
                };
                if slot.sent.len() >= 8 {
                    slot.sent.remove(0);
                }
                slot.sent.push(msg.clone());
                let stalled = slot.stalled_until.saturating_sub(now.0);
                self.log(|| format!("rt {runtime} -> ctl: {}", short_rt(&msg)));
                let delays = self.net.transmit(&mut self.rng, force_drop, force_dup);
                for d in delays {
                    self.clock.schedule_in(
                        d + stalled,
                        Ev::ToController {
                            inc: self.inc,
                            port,
                            from: runtime,
                            msg: msg.clone(),
                        },
                    );
                }
            }
            RuntimeEffect::StartProcess { command, binding } => {
                let key = command.to_string();
                let prior = self.world.starts(&key);
                if prior > 0 {
                    self.violation(format!(
                        "command {command} started a second time (runtime {runtime} gen {generation})"
                    ));
                }
                let Some(script) = Script::parse(&binding.command_line) else {
                    self.violation(format!(
                        "{command} started with a command line no client issued: {:?}",
                        binding.command_line
                    ));
                    return;
                };
                // Starts are counted per real-world action, not per command
                // id: a replay under a fresh id is the same action again, and
                // the simulated clients never re-issue one.
                if let Some(earlier) = self.world.actions.get(&script.token) {
                    let earlier = earlier.join(", ");
                    self.violation(format!(
                        "action t{} ran twice: as {command} on {runtime} gen {generation}, earlier as {earlier}, and no client re-issued it",
                        script.token
                    ));
                }
                if binding.generation != generation || binding.runtime != runtime {
                    self.violation(format!(
                        "runtime {runtime} gen {generation} started {command} bound to {} gen {}",
                        binding.runtime, binding.generation
                    ));
                }
                let exposed = self.durable_has(|r| {
                    matches!(r, JournalRecord::DispatchExposed { command: c, runtime: rr, generation: g, .. }
                        if *c == command && *rr == runtime && *g == generation)
                });
                if !exposed {
                    self.violation(format!(
                        "{command} started without a durable exposure record for this runtime and generation"
                    ));
                }
                if let Some(c) = self.commands.get(&command).cloned() {
                    if c.room_refused.is_some() {
                        self.paths.ran_after_no_room += 1;
                    }
                    // A dispatch exposed before a `not_dispatched` claim must never start.
                    let attempt = self.delivering.filter(|d| d.0 == command).map(|d| d.1);
                    let exposed_at = attempt.and_then(|a| c.exposure_positions.get(&a).copied());
                    if let (Some(nd), Some(ex)) = (c.not_dispatched_at, exposed_at) {
                        if ex < nd {
                            self.violation(format!(
                                "{command} started from attempt exposed at position {ex}, before it was declared not_dispatched at {nd}"
                            ));
                        }
                    }
                    if c.outcome.is_terminal() {
                        self.violation(format!(
                            "{command} started although its durable outcome is already {}",
                            c.outcome
                        ));
                    }
                }
                let run_idx = self
                    .world
                    .start(&key, script.token, generation.0, self.clock.now());
                self.world.run_mut(&key, run_idx).runtime = runtime.to_string();
                self.log(|| {
                    format!("WORLD: {command} started on {runtime} gen {generation}: {script:?}")
                });
                let interval = script.interval;
                self.runtimes.get_mut(&runtime).unwrap().procs.insert(
                    command,
                    Proc {
                        script,
                        done: false,
                        run_idx,
                    },
                );
                self.clock.schedule_in(
                    interval,
                    Ev::Process {
                        runtime,
                        command,
                        step: 0,
                    },
                );
            }
            RuntimeEffect::KillProcess { command } => {
                self.check_kill(runtime, generation, command);
                let key = command.to_string();
                let slot = self.runtimes.get_mut(&runtime).unwrap();
                if let Some(p) = slot.procs.get_mut(&command) {
                    if !p.done {
                        p.done = true;
                        let idx = p.run_idx;
                        let now = self.clock.now();
                        self.world.ended(&key, idx, ProcessEnd::Killed, now);
                        self.log(|| format!("WORLD: {command} killed"));
                        let d = self.rng.range(1, 10);
                        self.clock
                            .schedule_in(d, Ev::KilledExit { runtime, command });
                    }
                }
            }
            RuntimeEffect::SetTimer { at } => {
                self.clock.schedule_at(at.0, Ev::RtTimer { runtime });
            }
            RuntimeEffect::Shutdown { reason } => {
                self.log(|| format!("rt {runtime} shuts down: {reason}"));
                self.kill_runtime(runtime);
                let _ = now;
            }
        }
    }

    /// A runtime kills a process only on the controller's cancel of that
    /// very command, for a cancel a client really asked for or a deadline
    /// that really passed, or when the controller refuses the whole runtime.
    fn check_kill(&mut self, runtime: RuntimeId, generation: Generation, command: CommandId) {
        let now = self.clock.now();
        match self.trigger.clone() {
            Some(ControllerToRuntime::Cancel {
                command: target,
                generation: g,
                reason,
                ..
            }) => {
                if target != command || g != generation {
                    self.violation(format!(
                        "runtime {runtime} gen {generation} killed {command} on a cancel for {target} gen {g}"
                    ));
                    return;
                }
                let durable = self.commands.get(&command).and_then(|c| c.cancel);
                let deadline = self.commands.get(&command).map(|c| c.binding.budget.deadline.0);
                match (reason, durable) {
                    (_, None) => self.violation(format!(
                        "{command} killed on a cancel the journal does not hold"
                    )),
                    (CancelReason::User, _) if !self.user_cancelled.contains(&command) => self
                        .violation(format!("{command} killed for a user cancel no client asked for")),
                    (CancelReason::User, _) => self.paths.user_kill += 1,
                    (CancelReason::Deadline, _) if deadline.is_none_or(|d| now < d) => {
                        self.violation(format!(
                            "{command} killed for its deadline {deadline:?} at {now}ms, before it"
                        ))
                    }
                    (CancelReason::Deadline, _) => self.paths.deadline_kill += 1,
                }
            }
            // The controller refused this runtime: it shuts down with every process.
            Some(ControllerToRuntime::HelloRejected { .. }) => {}
            other => self.violation(format!(
                "runtime {runtime} gen {generation} killed {command} without a cancel for it (while handling {:?})",
                other.as_ref().map(short_ctl)
            )),
        }
    }

    fn process_step(&mut self, runtime: RuntimeId, command: CommandId, step: usize) {
        let now = self.now();
        let Some(slot) = self.runtimes.get_mut(&runtime) else {
            return;
        };
        let Some(p) = slot.procs.get_mut(&command) else {
            return;
        };
        if p.done {
            return;
        }
        let key = command.to_string();
        let idx = p.run_idx;
        if step < p.script.chunks.len() {
            let chunk = p.script.chunks[step].clone();
            let interval = p.script.interval;
            match self.strike(
                Boundary::WhileRunning,
                &[
                    Fault::CrashRuntime,
                    Fault::CrashController,
                    Fault::HostLoss,
                    Fault::ClientCancel,
                    Fault::ClientDisconnect,
                    Fault::TransportLoss,
                ],
            ) {
                Some(Fault::CrashRuntime) => return self.crash_runtime(runtime),
                Some(Fault::CrashController) => self.crash_controller(false),
                Some(Fault::HostLoss) => return self.crash_controller(true),
                Some(Fault::ClientCancel) => self.client_cancel(0, command),
                Some(Fault::ClientDisconnect) => self.client_detach(1),
                Some(Fault::TransportLoss) => self.transport_loss(runtime),
                _ => {}
            }
            let Some(slot) = self.runtimes.get_mut(&runtime) else {
                return;
            };
            if slot.procs.get(&command).is_none_or(|p| p.done) {
                return;
            }
            self.world.run_mut(&key, idx).emitted.push(chunk.clone());
            let r = slot
                .rt
                .handle_process(command, ProcessOutput::Stdout { data: chunk }, now);
            if let Err(e) = r {
                self.log(|| format!("rt output refused: {e}"));
            }
            self.clock.schedule_in(
                interval,
                Ev::Process {
                    runtime,
                    command,
                    step: step + 1,
                },
            );
        } else if p.script.hang {
            // Runs until killed: nothing more to schedule.
            return;
        } else {
            let code = p.script.exit_code;
            p.done = true;
            let r = slot
                .rt
                .handle_process(command, ProcessOutput::Exit { code }, now);
            self.world
                .ended(&key, idx, ProcessEnd::Exited(code), self.clock.now());
            self.log(|| format!("WORLD: {command} exited {code}"));
            if let Err(e) = r {
                self.log(|| format!("rt exit refused: {e}"));
            }
        }
        self.rt_effects(runtime);
    }

    // ----- clients ----------------------------------------------------------

    fn request(&mut self, client: usize, req: ClientRequest) {
        let now = self.now();
        let Some(ctl) = self.ctl.as_mut() else {
            return;
        };
        if !self.clients[client].attached {
            return;
        }
        let r = ctl.handle_client(ClientId(client as u64 + 1), req, now);
        if let Err(e) = &r {
            let text = e.to_string();
            self.log(|| format!("client {client} request rejected: {text}"));
            if let lifeline_core::Rejection::CursorAhead {
                command,
                after,
                durable,
            } = e
            {
                self.violation(format!(
                    "client {client} had seen {command} through {after}, beyond the durable {durable}: it was shown a non-durable event"
                ));
            }
            if matches!(e, lifeline_core::Rejection::StaleBinding { .. }) {
                self.known_runtime = None;
            }
        }
        self.ctl_effects();
    }

    fn next_request(&mut self, client: usize) -> RequestId {
        self.clients[client].next_request += 1;
        RequestId(self.clients[client].next_request)
    }

    fn client_act(&mut self, client: usize) {
        if !self.active() {
            return;
        }
        let d = self.rng.range(20, 160);
        self.clock.schedule_in(d, Ev::ClientAct { client });
        if self.ctl.is_none() || !self.clients[client].attached {
            return;
        }
        let roll = self.rng.below(100);
        match self.known_runtime {
            None => {
                if client == 0 && !self.starting_runtime {
                    self.starting_runtime = true;
                    let request = self.next_request(client);
                    let workspace = self.workspace;
                    self.log(|| "client 0 starts a runtime".to_string());
                    self.request(client, ClientRequest::StartRuntime { request, workspace });
                }
            }
            Some((lease, runtime, generation)) => {
                if roll < 45 && self.keys.len() < 12 {
                    let mut krng = self.rng.fork();
                    let key = IdempotencyKey::from_u128(nonzero(krng.next_u64())).unwrap();
                    self.next_token += 1;
                    let script = Script::random(&mut krng, self.next_token);
                    // Short deadlines alone settle every command sooner or
                    // later and so hide commands the core forgot: mix in
                    // deadlines that fall in the quiet period and ones past
                    // the end of the run.
                    // (The run's own quiet period: a small runtimes' run has
                    // a longer one, and a deadline meant to fall past the
                    // end must not fall just before it, its kill's terminal
                    // event still on its way; seed 526924.)
                    let quiet = self.quiet_ms();
                    let deadline = self.clock.now()
                        + match krng.below(3) {
                            0 => krng.range(300, 2_500),
                            1 => krng.range(2_500, quiet),
                            _ => krng.range(ACTIVE_MS + quiet, 10 * (ACTIVE_MS + quiet)),
                        };
                    let binding = Binding {
                        workspace: self.workspace,
                        lease,
                        generation,
                        runtime,
                        session: self.session,
                        working_directory: "/".into(),
                        capabilities: Default::default(),
                        budget: Budget {
                            deadline: Millis(deadline),
                            max_output_bytes: *krng.pick(&[4, 1 << 20]),
                        },
                        command_line: script.command_line(),
                    };
                    self.keys.push((key, binding.clone()));
                    self.admit(client, key, binding);
                } else if roll < 52 && !self.keys.is_empty() {
                    // An idempotent retry of an earlier admission.
                    let (key, binding) = self.rng.pick(&self.keys).clone();
                    self.admit(client, key, binding);
                } else if roll < 62 {
                    let cmds: Vec<CommandId> = self.key_to_command.values().copied().collect();
                    if !cmds.is_empty() {
                        let c = *self.rng.pick(&cmds);
                        if self.rng.chance(300) {
                            self.client_stale_cancel(client, c);
                        } else if self.injector.plan.allows(Fault::ClientCancel) {
                            self.client_cancel(client, c);
                        }
                    }
                } else if roll < 66 && self.injector.plan.allows(Fault::ClientDisconnect) {
                    self.client_detach(client);
                } else if roll < 68 && client == 0 && self.injector.plan.allows(Fault::FailCleanup)
                {
                    // Replace the current runtime (retire + terminate the old one).
                    if !self.starting_runtime {
                        self.starting_runtime = true;
                        let request = self.next_request(client);
                        let workspace = self.workspace;
                        self.log(|| "client 0 replaces the runtime".to_string());
                        self.request(client, ClientRequest::StartRuntime { request, workspace });
                    }
                } else if roll < 70 && self.injector.plan.allows(Fault::CrashRuntime) {
                    if self.injector.take_crash() {
                        self.crash_runtime(runtime);
                    }
                } else if roll < 71
                    && self.injector.plan.allows(Fault::CrashController)
                    && self.injector.take_crash()
                {
                    self.crash_controller(false);
                }
            }
        }
    }

    fn admit(&mut self, client: usize, key: IdempotencyKey, binding: Binding) {
        let request = self.next_request(client);
        self.clients[client].pending_admits.insert(request.0, key);
        self.log(|| format!("client {client} admits key {key}: {}", binding.command_line));
        self.request(
            client,
            ClientRequest::Admit {
                request,
                key,
                binding,
            },
        );
    }

    fn client_cancel(&mut self, client: usize, command: CommandId) {
        let Some(generation) = self.commands.get(&command).map(|c| c.binding.generation) else {
            return;
        };
        if !self.clients[client].attached {
            return;
        }
        let request = self.next_request(client);
        self.user_cancelled.insert(command);
        self.log(|| format!("client {client} cancels {command}"));
        self.request(
            client,
            ClientRequest::Cancel {
                request,
                command,
                generation,
            },
        );
    }

    /// A client that holds an outdated (or not yet valid) generation for the
    /// command: the core must refuse the cancel and record nothing.
    fn client_stale_cancel(&mut self, client: usize, command: CommandId) {
        let now = self.now();
        let Some(actual) = self.commands.get(&command).map(|c| c.binding.generation) else {
            return;
        };
        if !self.clients[client].attached {
            return;
        }
        let generation = if actual.0 > 1 && self.rng.chance(500) {
            Generation(actual.0 - 1)
        } else {
            actual.next()
        };
        let request = self.next_request(client);
        self.log(|| {
            format!("client {client} cancels {command} with stale generation {generation}")
        });
        let Some(ctl) = self.ctl.as_mut() else {
            return;
        };
        let before = ctl.pending_projection().position;
        let cancel_before = ctl.pending_projection().command(command).map(|c| c.cancel);
        let r = ctl.handle_client(
            ClientId(client as u64 + 1),
            ClientRequest::Cancel {
                request,
                command,
                generation,
            },
            now,
        );
        let after = ctl.pending_projection().position;
        let cancel_after = ctl.pending_projection().command(command).map(|c| c.cancel);
        self.paths.stale_cancel += 1;
        if !matches!(r, Err(lifeline_core::Rejection::StaleGeneration { .. })) {
            self.violation(format!(
                "cancel of {command} (generation {actual}) with stale generation {generation} answered {r:?}"
            ));
        }
        if after != before || cancel_after != cancel_before {
            self.violation(format!(
                "cancel of {command} with stale generation {generation} recorded something"
            ));
        }
        self.ctl_effects();
    }

    fn client_detach(&mut self, client: usize) {
        if !self.clients[client].attached {
            return;
        }
        self.clients[client].attached = false;
        if let Some(ctl) = self.ctl.as_mut() {
            ctl.handle_client_gone(ClientId(client as u64 + 1));
        }
        self.log(|| format!("client {client} detaches"));
        let d = self.rng.range(10, 400);
        self.clock.schedule_in(d, Ev::ClientRejoin { client });
    }

    fn client_rejoin(&mut self, client: usize) {
        if self.ctl.is_none() {
            return;
        }
        if self.clients[client].attached {
            return;
        }
        self.clients[client].attached = true;
        self.log(|| format!("client {client} rejoins"));
        let joins: Vec<(CommandId, u64)> = self.clients[client]
            .streams
            .iter()
            .map(|(c, v)| (*c, v.next - 1))
            .collect();
        for (command, after) in joins {
            self.join(client, command, after);
        }
    }

    fn join(&mut self, client: usize, command: CommandId, after: u64) {
        let request = self.next_request(client);
        self.request(
            client,
            ClientRequest::Join {
                request,
                cursor: Cursor {
                    v: V1,
                    command,
                    after: EventSeq(after),
                },
            },
        );
    }

    fn notify_client(&mut self, client: ClientId, message: ClientMessage) {
        let idx = (client.0 - 1) as usize;
        if idx >= CLIENTS || !self.clients[idx].attached {
            return;
        }
        match message {
            ClientMessage::Admitted {
                request,
                key,
                command,
                ..
            } => {
                self.clients[idx].pending_admits.remove(&request.0);
                if let Some(prev) = self.key_to_command.insert(key, command) {
                    if prev != command {
                        self.violation(format!(
                            "idempotency key {key} answered with {command} after {prev}"
                        ));
                    }
                }
                if !self.commands.contains_key(&command) {
                    self.violation(format!(
                        "client told {command} is admitted before its admission was durable"
                    ));
                }
                if let std::collections::btree_map::Entry::Vacant(v) =
                    self.clients[idx].streams.entry(command)
                {
                    v.insert(StreamView::at(1));
                    self.join(idx, command, 0);
                }
            }
            ClientMessage::Outcome {
                command,
                outcome,
                position,
                ..
            } => {
                let durable = self.journal.durable().iter().any(|e| {
                    e.position == position
                        && match &e.record {
                            JournalRecord::OutcomeChanged { command: c, to, .. } => {
                                *c == command && *to == outcome
                            }
                            JournalRecord::CommandAdmitted(r) => {
                                r.command == command && outcome == Outcome::Admitted
                            }
                            _ => false,
                        }
                });
                if !durable {
                    self.violation(format!(
                        "client {idx} told {command} is {outcome} (position {position}) before that was durable"
                    ));
                }
                let c = &mut self.clients[idx];
                if let Some(last) = c.last_position.get(&command) {
                    if position <= *last {
                        let last = *last;
                        self.violation(format!(
                            "client {idx} got outcome position {position} for {command} after {last}"
                        ));
                    }
                }
                let c = &mut self.clients[idx];
                c.last_position.insert(command, position);
                self.seen_outcome(idx, command, outcome);
                if outcome == Outcome::Admitted && !self.clients[idx].streams.contains_key(&command)
                {
                    self.clients[idx].streams.insert(command, StreamView::at(1));
                    self.join(idx, command, 0);
                }
            }
            ClientMessage::Event { command, seq, body } => {
                let durable = self.durable_has(|r| {
                    matches!(r, JournalRecord::Event(e) if e.command == command && e.seq == seq)
                });
                if !durable {
                    self.violation(format!(
                        "client {idx} shown event {seq} of {command} before it was durable"
                    ));
                }
                let view = self.clients[idx]
                    .streams
                    .entry(command)
                    .or_insert_with(|| StreamView::at(1));
                if let Err(e) = view.event(seq.0) {
                    self.violation(format!("client {idx} stream of {command}: {e:?}"));
                }
                self.check_output(idx, command, &body);
            }
            ClientMessage::Gap { command, from, to } => {
                self.clients[idx].out.entry(command).or_default().1 = true;
                let view = self.clients[idx]
                    .streams
                    .entry(command)
                    .or_insert_with(|| StreamView::at(1));
                if let Err(e) = view.gap(from.0, to.0 + 1) {
                    self.violation(format!("client {idx} stream of {command}: {e:?}"));
                }
            }
            ClientMessage::Joined {
                command,
                through,
                outcome,
                ..
            } => {
                let next = self.clients[idx]
                    .streams
                    .get(&command)
                    .map_or(1, |v| v.next);
                if next != through.0 + 1 {
                    self.violation(format!(
                        "client {idx} joined {command} through {through} but its stream is at {}",
                        next - 1
                    ));
                }
                let known = self.commands.get(&command).is_some_and(|c| {
                    c.outcome == outcome
                        || self.durable_copy.iter().any(|e| matches!(&e.record,
                            JournalRecord::OutcomeChanged { command: cc, to, .. } if *cc == command && *to == outcome))
                        || outcome == Outcome::Admitted
                });
                if !known {
                    self.violation(format!(
                        "client {idx} joined {command} as {outcome}, which the durable journal never said"
                    ));
                }
                self.seen_outcome(idx, command, outcome);
            }
            ClientMessage::RuntimeStarted { .. }
            | ClientMessage::Rejected { .. }
            | ClientMessage::CancelSettlement { .. }
            | ClientMessage::Evidence(_)
            | ClientMessage::SessionOpened { .. }
            | ClientMessage::TurnRecorded { .. }
            | ClientMessage::TurnFinished { .. }
            | ClientMessage::ProviderRequestRecorded { .. }
            | ClientMessage::ProviderOutcomeRecorded { .. }
            | ClientMessage::SessionRecorded { .. }
            | ClientMessage::RuntimeStopping { .. } => {}
        }
    }

    /// What a client is shown of a command's output against what its
    /// process really emitted: every byte at its offset, no byte twice, no
    /// byte skipped unless the core said so (a `Gap`, or bytes it reports
    /// as dropped), and, once the command ended, all of it.
    fn check_output(&mut self, idx: usize, command: CommandId, body: &RetainedBody) {
        let key = command.to_string();
        let emitted: String = self
            .world
            .run(&key)
            .map(|r| r.emitted.concat())
            .unwrap_or_default();
        let ended = self.world.run(&key).map(|r| r.end);
        let (expected, gap) = self.clients[idx]
            .out
            .get(&command)
            .copied()
            .unwrap_or_default();
        match body {
            RetainedBody::Stdout(chunk) | RetainedBody::Stderr(chunk) => {
                self.clients[idx]
                    .out
                    .insert(command, (chunk.offset + chunk.len, false));
                if chunk.offset != expected && !(gap && chunk.offset > expected) {
                    self.violation(format!(
                        "client {idx} shown {command}'s output at byte {} when it had bytes up to {expected}: output {}",
                        chunk.offset,
                        if chunk.offset < expected { "duplicated or reordered" } else { "lost without a gap" }
                    ));
                    return;
                }
                let start = chunk.offset as usize;
                let inline_end = start + chunk.inline.len();
                if emitted.get(start..inline_end) != Some(chunk.inline.as_str()) {
                    self.violation(format!(
                        "client {idx} shown {:?} as {command}'s output at byte {start}; the process emitted {:?}",
                        chunk.inline, emitted
                    ));
                }
                if let Some(a) = &chunk.artifact {
                    match self.artifacts.get(&a.digest) {
                        None => self.violation(format!(
                            "client {idx} shown an artifact of {command} that was never written"
                        )),
                        Some(data) => {
                            let end = inline_end + data.len();
                            if emitted.get(inline_end..end) != Some(data.as_str()) {
                                self.violation(format!(
                                    "{command}'s artifact at byte {inline_end} holds {data:?}; the process emitted {emitted:?}"
                                ));
                            }
                        }
                    }
                }
                if chunk.offset + chunk.len > emitted.len() as u64 {
                    self.violation(format!(
                        "client {idx} shown {command}'s output through byte {}; the process emitted only {}",
                        chunk.offset + chunk.len,
                        emitted.len()
                    ));
                }
            }
            RetainedBody::Terminal(_) => {
                let finished = matches!(ended, Some(ProcessEnd::Exited(_) | ProcessEnd::Killed));
                // After an announced gap the bytes it covered are unknown
                // to the client; the core reported them as missing.
                if finished && !gap && expected != emitted.len() as u64 {
                    self.violation(format!(
                        "{command} ended after emitting {} bytes, yet client {idx} was shown {expected}: output {}",
                        emitted.len(),
                        if expected < emitted.len() as u64 { "lost" } else { "duplicated" }
                    ));
                } else if ended == Some(ProcessEnd::Exited(0)) {
                    self.paths.output_compared += 1;
                }
            }
            _ => {}
        }
    }

    fn seen_outcome(&mut self, idx: usize, command: CommandId, outcome: Outcome) {
        if let Some(t) = self.clients[idx].terminal_seen.get(&command).copied() {
            if t != outcome {
                self.violation(format!(
                    "client {idx} saw {command} change from terminal {t} to {outcome}"
                ));
            }
        } else if outcome.is_terminal() {
            self.clients[idx].terminal_seen.insert(command, outcome);
        }
    }

    // ----- invariants ----------------------------------------------------------

    /// Folds newly durable entries into the oracle, checking each.
    fn absorb_durable(&mut self) {
        let new: Vec<JournalEntry> = self.journal.durable()[self.seen_entries..].to_vec();
        self.seen_entries = self.journal.durable().len();
        let retiring = new
            .iter()
            .any(|e| matches!(e.record, JournalRecord::RuntimeRetired { .. }));
        for e in new {
            self.fingerprint = mix(self.fingerprint, e.position);
            if e.position != self.last_position + 1 {
                self.violation(format!(
                    "journal position {} follows {}: positions must be dense",
                    e.position, self.last_position
                ));
            }
            self.last_position = e.position;
            self.absorb(&e);
            self.durable_copy.push(e);
        }
        if retiring {
            // A retired generation is never given work: a command bound to
            // it and never exposed will never be dispatched, and must not be
            // left claiming to wait for it.
            let waiting: Vec<CommandId> = self
                .commands
                .iter()
                .filter(|(_, c)| {
                    c.outcome == Outcome::Admitted
                        && c.exposures.is_empty()
                        && self
                            .retired
                            .contains(&(c.binding.runtime, c.binding.generation))
                })
                .map(|(id, _)| *id)
                .collect();
            for command in waiting {
                self.violation(format!(
                    "{command} is still admitted although the generation it is bound to was retired: it will never be dispatched"
                ));
            }
        }
    }

    fn absorb(&mut self, e: &JournalEntry) {
        match &e.record {
            JournalRecord::CommandAdmitted(rec) => {
                if self.commands.contains_key(&rec.command) {
                    self.violation(format!("{} admitted twice", rec.command));
                }
                self.commands.insert(
                    rec.command,
                    CmdOracle {
                        binding: rec.binding.clone(),
                        outcome: Outcome::Admitted,
                        exposures: Vec::new(),
                        acked: false,
                        last_seq: 0,
                        not_dispatched_at: None,
                        exposure_positions: BTreeMap::new(),
                        reasons: BTreeSet::new(),
                        room_refused: None,
                        cancel: None,
                    },
                );
            }
            JournalRecord::DispatchExposed {
                command,
                attempt,
                runtime,
                generation,
            } => {
                if let Some(c) = self.commands.get_mut(command) {
                    if c.outcome == Outcome::MayHaveStarted || c.outcome.is_terminal() {
                        let o = c.outcome;
                        self.violation(format!(
                            "{command} exposed for dispatch again although it is {o}: an uncertain or settled command is never dispatched again"
                        ));
                        return;
                    }
                    c.exposures.push((*attempt, *runtime, *generation));
                    c.exposure_positions.insert(*attempt, e.position);
                    if c.binding.generation != *generation || c.binding.runtime != *runtime {
                        let b = (c.binding.runtime, c.binding.generation);
                        self.violation(format!(
                            "{command} exposed to {runtime} gen {generation} but bound to {} gen {}",
                            b.0, b.1
                        ));
                    }
                } else {
                    self.violation(format!("{command} exposed before durable admission"));
                }
            }
            JournalRecord::Acknowledged { command, .. } => {
                let key = command.to_string();
                if self.world.starts(&key) == 0 {
                    self.violation(format!(
                        "{command} recorded as acknowledged but the runtime never accepted it"
                    ));
                }
                if let Some(c) = self.commands.get_mut(command) {
                    c.acked = true;
                    if self
                        .gone
                        .contains(&(c.binding.runtime, c.binding.generation))
                    {
                        self.violation(format!(
                            "ACK for {command} accepted after its generation was recorded gone"
                        ));
                    }
                }
            }
            JournalRecord::Event(ev) => {
                let command = ev.command;
                let Some(c) = self.commands.get_mut(&command) else {
                    self.violation(format!("event for unknown command {command}"));
                    return;
                };
                let last = c.last_seq;
                c.last_seq = ev.seq.0;
                let bound = (c.binding.runtime, c.binding.generation);
                if ev.seq.0 != last + 1 {
                    self.violation(format!(
                        "durable event {} of {command} follows {last}: duplicate or gap",
                        ev.seq
                    ));
                }
                if self.gone.contains(&bound) {
                    self.violation(format!(
                        "event {} of {command} accepted from {} gen {} after it was recorded gone (stale generation)",
                        ev.seq, bound.0, bound.1
                    ));
                }
            }
            JournalRecord::RuntimeGone {
                runtime,
                generation,
                ..
            } => {
                self.gone.insert((*runtime, *generation));
            }
            JournalRecord::Recovery(ev) => {
                for r in &ev.outcomes {
                    if let Some(c) = self.commands.get_mut(&r.command) {
                        c.reasons.insert(r.after);
                    }
                }
                if ev.kind == RecoveryKind::AckTimeout {
                    for r in &ev.outcomes {
                        // The ACK, not the dispatch, was late or lost.
                        if self.world.starts(&r.command.to_string()) > 0 {
                            self.paths.ack_timeout += 1;
                        }
                        if r.after != Outcome::MayHaveStarted
                            || !matches!(r.before, Outcome::Admitted | Outcome::NotDispatched)
                        {
                            self.violation(format!(
                                "ACK timeout of {} recorded {} -> {}; it must make an unacknowledged dispatch may_have_started",
                                r.command, r.before, r.after
                            ));
                        }
                    }
                }
            }
            JournalRecord::DispatchRefused {
                command, reason, ..
            } => {
                if let Some(c) = self.commands.get_mut(command) {
                    c.reasons.insert(Outcome::NotDispatched);
                    c.room_refused = (*reason == DispatchRefusal::Capacity).then_some(e.at.0);
                }
            }
            JournalRecord::CancelRequested {
                command, reason, ..
            } => {
                let at = e.at.0;
                let deadline = self.commands.get_mut(command).map(|c| {
                    c.cancel = Some((*reason, at));
                    c.binding.budget.deadline.0
                });
                if let Some(deadline) = deadline {
                    if *reason == CancelReason::Deadline && at < deadline {
                        self.violation(format!(
                            "{command} cancelled for its deadline at {at}ms, before the deadline {deadline}ms"
                        ));
                    }
                }
            }
            JournalRecord::RuntimeRetired {
                runtime,
                generation,
                ..
            } => {
                self.retired.insert((*runtime, *generation));
            }
            JournalRecord::OutcomeChanged {
                command,
                event,
                from,
                to,
            } => {
                let key = command.to_string();
                let starts = self.world.starts(&key);
                let run = self.world.run(&key).cloned();
                let Some(c) = self.commands.get_mut(command) else {
                    self.violation(format!("outcome change for unknown command {command}"));
                    return;
                };
                let prior = c.outcome;
                c.outcome = *to;
                let deadline = c.binding.budget.deadline.0;
                let exposed = !c.exposures.is_empty();
                let acked = c.acked;
                if *to == Outcome::NotDispatched {
                    c.not_dispatched_at = Some(e.position);
                }
                if *to == Outcome::TimedOut && e.at.0 < deadline {
                    self.violation(format!(
                        "{command} timed out at {}ms, before its deadline {deadline}ms",
                        e.at.0
                    ));
                }
                if prior != *from {
                    self.violation(format!(
                        "{command}: outcome change records from {from} but the journal says {prior}"
                    ));
                }
                if prior.is_terminal() {
                    self.violation(format!(
                        "{command}: terminal outcome {prior} changed to {to}"
                    ));
                }
                if lifeline_core::transition(prior, *event) != Ok(*to) {
                    self.violation(format!("{command}: illegal {prior} + {event:?} -> {to}"));
                }
                let ended = run.as_ref().map(|r| r.end);
                let mut bad = None;
                match to {
                    Outcome::NotDispatched if starts > 0 => {
                        bad = Some("reported not_dispatched but its process started".to_string())
                    }
                    Outcome::Dispatched | Outcome::Running | Outcome::Lost if starts == 0 => {
                        bad = Some(format!("reported {to} but its process never started"))
                    }
                    Outcome::MayHaveStarted if !exposed => {
                        bad = Some("may_have_started without any exposure".into())
                    }
                    Outcome::MayHaveStarted if acked => {
                        bad = Some("may_have_started although an ACK is durable".into())
                    }
                    Outcome::Completed if ended != Some(ProcessEnd::Exited(0)) => {
                        bad = Some(format!("completed but the process ended {ended:?}"))
                    }
                    Outcome::Failed
                        if !matches!(ended, Some(ProcessEnd::Exited(c)) if c != 0)
                            && ended != Some(ProcessEnd::Killed) =>
                    {
                        bad = Some(format!("failed but the process ended {ended:?}"))
                    }
                    Outcome::Cancelled | Outcome::TimedOut
                        if matches!(ended, Some(ProcessEnd::Exited(_))) =>
                    {
                        bad = Some(format!(
                            "{to} but the process exited on its own ({ended:?})"
                        ))
                    }
                    _ => {}
                }
                if to.is_terminal() && ended == Some(ProcessEnd::Running) {
                    bad = Some(format!("durably {to} but its process is still running"));
                }
                if let Some(b) = bad {
                    self.violation(format!("{command} ({event:?}): {b}"));
                }
                if matches!(
                    event,
                    OutcomeEvent::Finished(TerminalStatus::Completed | TerminalStatus::Failed)
                ) && !matches!(
                    ended,
                    Some(ProcessEnd::Exited(_)) | Some(ProcessEnd::Killed)
                ) {
                    self.violation(format!("{command}: finished but the world says {ended:?}"));
                }
            }
            _ => {}
        }
    }

    /// Checks run after every step.
    fn check_step(&mut self) {
        self.absorb_durable();
        // The journal only grows and never changes what it holds.
        if self.journal.durable().len() != self.durable_copy.len()
            || self
                .journal
                .durable()
                .last()
                .zip(self.durable_copy.last())
                .is_some_and(|(a, b)| a != b)
        {
            self.violation("durable journal shrank or was rewritten".into());
        }
        // A second start is caught as it happens (`StartProcess`), and a
        // terminal outcome while the process runs as it becomes durable
        // (`absorb`): a process never runs again once it ended.
    }

    /// Liveness, checked at the end of the run, after the quiet period: every
    /// command settled, none forgotten, and every command whose deadline
    /// passed really ended.
    fn check_end(&mut self) {
        let end = self.active_end + self.quiet_ms();
        // Enough for a deadline to fire, its cancel to be refused a grace
        // period, the runtime to be terminated (with retries) or to dial back.
        let margin = self.config.cancel_grace_ms
            + self.config.heartbeat_timeout_ms
            + self.config.reattach_timeout_ms
            + self.config.terminate_retry_ms * u64::from(self.config.max_terminate_attempts);
        if self.ctl.is_none() {
            self.violation("no controller is running at the end of the quiet period".into());
        }
        let mut problems = Vec::new();
        for (command, c) in &self.commands {
            let key = command.to_string();
            let run = self.world.run(&key);
            let (runtime, generation) = (c.binding.runtime, c.binding.generation);
            let alive = self
                .runtimes
                .get(&runtime)
                .is_some_and(|s| s.generation == generation);
            let current = !self.retired.contains(&(runtime, generation))
                && !self.gone.contains(&(runtime, generation));
            let deadline = c.binding.budget.deadline.0;
            let o = c.outcome;
            let problem = match o {
                o if o.is_terminal() => None,
                Outcome::Admitted => Some("still admitted: never dispatched, never settled".to_string()),
                Outcome::NotDispatched | Outcome::MayHaveStarted if !c.reasons.contains(&o) => {
                    Some(format!("{o} without a recorded reason"))
                }
                // Refused for want of room, it waits for a place while its
                // runtime really holds as many commands as it takes, or
                // for the heartbeat that offers it again, but not past its
                // deadline.
                Outcome::NotDispatched
                    if current
                        && alive
                        && c.room_refused.is_some_and(|at| {
                            at + self.config.room_retry_ms + 2 * HEARTBEAT_MS > end
                                || self.runtimes.get(&runtime).is_some_and(|s| s.rt.is_full())
                        }) =>
                {
                    (deadline + margin <= end).then(|| {
                        format!("still {o}, refused for want of room, past its deadline {deadline}ms")
                    })
                }
                Outcome::NotDispatched if current && alive => Some(
                    "not_dispatched although its runtime generation is current and alive: it was never dispatched"
                        .to_string(),
                ),
                Outcome::NotDispatched | Outcome::MayHaveStarted => None,
                _ => {
                    let running = alive && run.is_some_and(|r| r.end == ProcessEnd::Running);
                    // A process may end just before the run does, its
                    // terminal event (or its runtime's death) still on its
                    // way to the journal: with small runtimes, whose
                    // commands wait for each other's places (seeds 77851
                    // and 424219 of 600,000), and in any run when a crash
                    // struck its runtime in the last moments (seed 573245).
                    let settling = run.is_some_and(|r| {
                        (self.small_runtimes() || r.end == ProcessEnd::DiedWithRuntime)
                            && r.ended_at.is_some_and(|at| at + SETTLING_MS > end)
                    });
                    if !running && settling {
                        None
                    } else if !running {
                        Some(format!(
                            "still {o} although its process {}",
                            match run.map(|r| r.end) {
                                None => "never started".to_string(),
                                Some(e) => format!("ended ({e:?})"),
                            }
                        ))
                    } else if let Some((reason, at)) = c.cancel.filter(|(_, at)| at + margin <= end) {
                        Some(format!(
                            "still {o}: its process runs although a cancel ({reason:?}) was recorded at {at}ms"
                        ))
                    } else if deadline + margin <= end {
                        Some(format!("still {o} and running past its deadline {deadline}ms"))
                    } else {
                        None
                    }
                }
            };
            if let Some(p) = problem {
                problems.push(format!(
                    "{command} {p} after {}ms of quiet",
                    self.quiet_ms()
                ));
            }
            // Ground truth, whatever the journal says: past its deadline a
            // command's process no longer runs.
            if run.is_some_and(|r| r.end == ProcessEnd::Running)
                && alive
                && deadline + margin <= end
            {
                problems.push(format!(
                    "{command}'s process is still running {}ms after its deadline",
                    end - deadline
                ));
            }
        }
        // Every attached client has been shown each settled command it
        // follows to the end.
        for (idx, client) in self.clients.iter().enumerate() {
            if !client.attached {
                continue;
            }
            for (command, view) in &client.streams {
                if let Some(c) = self.commands.get(command) {
                    if c.outcome.is_terminal() && view.next <= c.last_seq {
                        problems.push(format!(
                            "client {idx} was never shown events {}..={} of {command}, which is {}",
                            view.next, c.last_seq, c.outcome
                        ));
                    }
                }
            }
        }
        if let Some(waiting) = &self.unsettled_at_quiet {
            self.paths.settled_in_quiet += waiting
                .iter()
                .filter(|c| {
                    self.commands
                        .get(c)
                        .is_some_and(|o| o.outcome.is_terminal())
                })
                .count() as u64;
        }
        for p in problems {
            self.violation(p);
        }
    }
}

fn short_ctl(m: &ControllerToRuntime) -> String {
    match m {
        ControllerToRuntime::HelloAccepted { .. } => "hello_accepted".into(),
        ControllerToRuntime::HelloRejected { reason, .. } => format!("hello_rejected({reason})"),
        ControllerToRuntime::Dispatch {
            order, generation, ..
        } => {
            format!("dispatch {} gen {generation}", order.command)
        }
        ControllerToRuntime::Cancel {
            command, reason, ..
        } => {
            format!("cancel {command} {reason:?}")
        }
        ControllerToRuntime::EventsDurable {
            command, through, ..
        } => {
            format!("events_durable {command} {through}")
        }
        ControllerToRuntime::Resend { command, after, .. } => {
            format!("resend {command} after {after}")
        }
        ControllerToRuntime::HelloRequired { .. } => "hello_required".into(),
    }
}

fn short_rt(m: &RuntimeToController) -> String {
    match m {
        RuntimeToController::Hello(h) => {
            format!("hello gen {} ({} streams)", h.generation, h.streams.len())
        }
        RuntimeToController::Ack { command, .. } => format!("ack {command}"),
        RuntimeToController::Refuse {
            command, refusal, ..
        } => {
            format!("refuse {command}: {refusal}")
        }
        RuntimeToController::Event {
            command, seq, body, ..
        } => {
            format!("event {command} #{seq} {:?}", body.kind())
        }
        RuntimeToController::Heartbeat { streams, .. } => {
            format!("heartbeat ({} streams)", streams.len())
        }
        RuntimeToController::CancelReply { command, reply, .. } => {
            format!("cancel_reply {command} {reply:?}")
        }
    }
}

fn short_rec(r: &JournalRecord) -> String {
    match r {
        JournalRecord::CommandAdmitted(c) => format!("admitted {}", c.command),
        JournalRecord::DispatchExposed { command, .. } => format!("exposed {command}"),
        JournalRecord::Acknowledged { command, via, .. } => format!("ack {command} via {via:?}"),
        JournalRecord::Event(e) => format!("event {} #{} {:?}", e.command, e.seq, e.body.kind()),
        JournalRecord::OutcomeChanged { command, to, .. } => format!("{command} -> {to}"),
        JournalRecord::CancelRequested {
            command, reason, ..
        } => {
            format!("cancel {command} {reason:?}")
        }
        other => {
            let s = format!("{other:?}");
            s.split([' ', '(', '{']).next().unwrap_or("?").to_string()
        }
    }
}
