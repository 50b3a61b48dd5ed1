//! Acceptance criteria of reference 002, one test each.
//!
//! Each test drives the real `Controller` and `Runtime` state machines. The
//! "journal" is a `Vec` of the entries whose persist batches were confirmed;
//! a controller crash throws away everything else it held, and recovery sees
//! only that `Vec`. Transport is a pair of queues that a test can cut.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use lifeline_core::*;

const CLIENT: ClientId = ClientId(1);

fn id<T: std::str::FromStr>(n: u128) -> T
where
    T::Err: std::fmt::Debug,
{
    // Any non-zero 128-bit value is a valid id; go through the text form so
    // the test also exercises parsing.
    let alphabet = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let mut text = [b'0'; 26];
    let mut x = n.max(1);
    for slot in text.iter_mut().rev() {
        *slot = alphabet[(x & 31) as usize];
        x >>= 5;
    }
    std::str::from_utf8(&text).unwrap().parse().unwrap()
}

#[derive(Clone, Copy, Debug)]
struct Started {
    workspace: WorkspaceId,
    lease: LeaseId,
    runtime: RuntimeId,
    generation: Generation,
}

struct World {
    now: Millis,
    config: ControllerConfig,
    /// Confirmed entries only: what IndexedDB holds.
    journal: Vec<JournalEntry>,
    artifacts: BTreeMap<Digest, String>,
    controller: Option<Controller>,
    runtimes: BTreeMap<RuntimeId, Runtime>,
    /// Runtimes whose port to the controller is up.
    connected: BTreeSet<RuntimeId>,
    /// Runtimes whose outgoing messages are lost (the port still "works").
    mute: BTreeSet<RuntimeId>,
    to_runtime: VecDeque<(RuntimeId, ControllerToRuntime)>,
    to_controller: VecDeque<(RuntimeId, RuntimeToController)>,
    inbox: Vec<(ClientId, ClientMessage)>,
    timers: Vec<(TimerId, Millis)>,
    unwritten: Option<PersistBatch>,
    /// When set, batches wait in `unwritten` until the test writes them.
    hold_persist: bool,
    sent: Vec<(RuntimeId, ControllerToRuntime)>,
    processes: Vec<(RuntimeId, CommandId)>,
    kills: Vec<(RuntimeId, CommandId)>,
    terminations: Vec<(RuntimeId, Generation)>,
    controller_errors: Vec<ControllerError>,
    runtime_errors: Vec<RuntimeError>,
    next_request: u64,
}

impl World {
    fn new() -> World {
        let config = ControllerConfig {
            entropy: b"acceptance".to_vec(),
            retention: RetentionPolicy {
                inline_output_bytes: 16,
                ..RetentionPolicy::default()
            },
            ..ControllerConfig::default()
        };
        let now = Millis(1_000);
        World {
            now,
            controller: Some(Controller::new(config.clone(), now)),
            config,
            journal: Vec::new(),
            artifacts: BTreeMap::new(),
            runtimes: BTreeMap::new(),
            connected: BTreeSet::new(),
            mute: BTreeSet::new(),
            to_runtime: VecDeque::new(),
            to_controller: VecDeque::new(),
            inbox: Vec::new(),
            timers: Vec::new(),
            unwritten: None,
            hold_persist: false,
            sent: Vec::new(),
            processes: Vec::new(),
            kills: Vec::new(),
            terminations: Vec::new(),
            controller_errors: Vec::new(),
            runtime_errors: Vec::new(),
            next_request: 0,
        }
    }

    fn c(&mut self) -> &mut Controller {
        self.controller.as_mut().expect("controller is down")
    }

    fn write(&mut self, batch: PersistBatch) {
        // What the shell does: check, then append in one transaction.
        let bytes = encode(&batch).expect("batch encodes");
        let batch: PersistBatch = decode(&bytes).expect("batch decodes");
        assert_eq!(
            batch.batch.0,
            self.journal.len() as u64 + 1,
            "dense journal"
        );
        for a in &batch.artifacts {
            self.artifacts.insert(a.digest, a.data.clone());
        }
        self.journal.extend(batch.entries.iter().cloned());
        let now = self.now;
        self.c()
            .handle_persist_complete(batch.batch, now)
            .expect("in-flight batch");
    }

    fn pump(&mut self) -> bool {
        let mut progress = false;
        let now = self.now;
        if let Some(c) = self.controller.as_mut() {
            let effects = c.drain_effects();
            progress |= !effects.is_empty();
            for e in effects {
                match e {
                    ControllerEffect::Persist(b) => {
                        assert!(self.unwritten.is_none(), "one batch in flight");
                        self.unwritten = Some(b);
                    }
                    ControllerEffect::SendToRuntime { runtime, message } => {
                        self.sent.push((runtime, message.clone()));
                        if self.connected.contains(&runtime) {
                            self.to_runtime.push_back((runtime, message));
                        }
                    }
                    ControllerEffect::NotifyClient { client, message } => {
                        self.inbox.push((client, message))
                    }
                    ControllerEffect::SetTimer { timer, at } => self.timers.push((timer, at)),
                    ControllerEffect::SpawnRuntime {
                        lease,
                        runtime,
                        generation,
                        execution,
                        ..
                    } => {
                        let identity = RuntimeIdentity {
                            lease,
                            runtime,
                            generation,
                            execution,
                        };
                        let mut rt = Runtime::new(RuntimeConfig::new(identity), now);
                        rt.handle_connected(now);
                        self.runtimes.insert(runtime, rt);
                        self.connected.insert(runtime);
                    }
                    ControllerEffect::TerminateRuntime {
                        runtime,
                        generation,
                    } => self.terminations.push((runtime, generation)),
                }
            }
        }
        if !self.hold_persist && self.controller.is_some() {
            if let Some(b) = self.unwritten.take() {
                self.write(b);
                progress = true;
            }
        }
        let ids: Vec<RuntimeId> = self.runtimes.keys().copied().collect();
        for rid in ids {
            let effects = self.runtimes.get_mut(&rid).unwrap().drain_effects();
            progress |= !effects.is_empty();
            for e in effects {
                match e {
                    RuntimeEffect::Send(m) => {
                        if self.connected.contains(&rid) && !self.mute.contains(&rid) {
                            self.to_controller.push_back((rid, m));
                        }
                    }
                    RuntimeEffect::StartProcess { command, .. } => {
                        self.processes.push((rid, command))
                    }
                    RuntimeEffect::KillProcess { command } => self.kills.push((rid, command)),
                    RuntimeEffect::SetTimer { .. } | RuntimeEffect::Shutdown { .. } => {}
                }
            }
        }
        while let Some((rid, m)) = self.to_runtime.pop_front() {
            progress = true;
            if let Some(rt) = self.runtimes.get_mut(&rid) {
                if let Err(e) = rt.handle_controller(m, now) {
                    self.runtime_errors.push(e);
                }
            }
        }
        if self.controller.is_some() {
            while let Some((rid, m)) = self.to_controller.pop_front() {
                progress = true;
                if let Err(e) = self.c().handle_runtime(rid, m, now) {
                    self.controller_errors.push(e);
                }
            }
        }
        progress
    }

    fn settle(&mut self) {
        for _ in 0..10_000 {
            if !self.pump() {
                return;
            }
        }
        panic!("world did not settle");
    }

    fn request(
        &mut self,
        make: impl FnOnce(RequestId) -> ClientRequest,
    ) -> (RequestId, Result<(), Rejection>) {
        self.next_request += 1;
        let request = RequestId(self.next_request);
        let now = self.now;
        let r = self.c().handle_client(CLIENT, make(request), now);
        self.settle();
        (request, r)
    }

    fn start_runtime(&mut self, workspace: WorkspaceId) -> Started {
        let (request, r) =
            self.request(|request| ClientRequest::StartRuntime { request, workspace });
        r.expect("start runtime");
        self.inbox
            .iter()
            .find_map(|(_, m)| match m {
                ClientMessage::RuntimeStarted {
                    request: q,
                    workspace,
                    lease,
                    runtime,
                    generation,
                    ..
                } if *q == request => Some(Started {
                    workspace: *workspace,
                    lease: *lease,
                    runtime: *runtime,
                    generation: *generation,
                }),
                _ => None,
            })
            .expect("runtime started reply")
    }

    fn binding(&self, s: Started, command_line: &str) -> Binding {
        Binding {
            workspace: s.workspace,
            lease: s.lease,
            generation: s.generation,
            runtime: s.runtime,
            session: id(0x5e55),
            working_directory: "/".into(),
            capabilities: ["fs.read".to_string(), "fs.write".to_string()]
                .into_iter()
                .collect(),
            budget: Budget {
                deadline: Millis(10_000_000),
                max_output_bytes: 1 << 20,
            },
            command_line: command_line.into(),
        }
    }

    fn admit(
        &mut self,
        key: IdempotencyKey,
        binding: Binding,
    ) -> Result<(CommandId, bool), Rejection> {
        let (request, r) = self.request(|request| ClientRequest::Admit {
            request,
            key,
            binding,
        });
        r?;
        Ok(self
            .inbox
            .iter()
            .find_map(|(_, m)| match m {
                ClientMessage::Admitted {
                    request: q,
                    command,
                    existing,
                    ..
                } if *q == request => Some((*command, *existing)),
                _ => None,
            })
            .expect("admitted reply"))
    }

    fn cancel(
        &mut self,
        command: CommandId,
        generation: Generation,
    ) -> Result<Settlement, Rejection> {
        let (request, r) = self.request(|request| ClientRequest::Cancel {
            request,
            command,
            generation,
        });
        r?;
        Ok(self
            .inbox
            .iter()
            .find_map(|(_, m)| match m {
                ClientMessage::CancelSettlement {
                    request: q,
                    settlement,
                    ..
                } if *q == request => Some(*settlement),
                _ => None,
            })
            .expect("cancel reply"))
    }

    fn process(&mut self, runtime: RuntimeId, command: CommandId, output: ProcessOutput) {
        let now = self.now;
        self.runtimes
            .get_mut(&runtime)
            .expect("runtime alive")
            .handle_process(command, output, now)
            .expect("process output accepted");
        self.settle();
    }

    fn stdout(&mut self, runtime: RuntimeId, command: CommandId, data: &str) {
        self.process(
            runtime,
            command,
            ProcessOutput::Stdout {
                data: data.to_string(),
            },
        );
    }

    fn exit(&mut self, runtime: RuntimeId, command: CommandId, code: i32) {
        self.process(runtime, command, ProcessOutput::Exit { code });
    }

    fn fire(&mut self, timer: TimerId) {
        let at = self
            .timers
            .iter()
            .filter(|(t, _)| *t == timer)
            .map(|(_, at)| *at)
            .max()
            .expect("timer was armed");
        self.now = self.now.max(at);
        let now = self.now;
        self.c().handle_timer(timer, now);
        self.settle();
    }

    /// The controller worker dies: everything not in the journal is gone,
    /// and runtimes lose their ports.
    fn crash_controller(&mut self) {
        self.controller = None;
        self.unwritten = None;
        self.to_runtime.clear();
        self.to_controller.clear();
        self.timers.clear();
        let now = self.now;
        for rid in std::mem::take(&mut self.connected) {
            if let Some(rt) = self.runtimes.get_mut(&rid) {
                rt.handle_disconnected(now);
            }
        }
    }

    /// A new controller from the journal; surviving runtimes dial back in.
    fn restart_controller(&mut self, cause: StartCause) {
        self.now = self.now.plus(10);
        let now = self.now;
        let c = Controller::recover(self.config.clone(), &self.journal, cause, now)
            .expect("journal replays");
        self.controller = Some(c);
        self.settle();
        if cause == StartCause::ControllerRestart {
            let ids: Vec<RuntimeId> = self.runtimes.keys().copied().collect();
            for rid in ids {
                self.connected.insert(rid);
                self.runtimes.get_mut(&rid).unwrap().handle_connected(now);
            }
            self.settle();
        }
    }

    /// Page reload: every worker dies.
    fn lose_host(&mut self) {
        self.crash_controller();
        self.runtimes.clear();
        self.restart_controller(StartCause::HostLoss);
    }

    fn cut(&mut self, runtime: RuntimeId) {
        self.connected.remove(&runtime);
        self.to_runtime.retain(|(r, _)| *r != runtime);
        self.to_controller.retain(|(r, _)| *r != runtime);
        let now = self.now;
        if let Some(rt) = self.runtimes.get_mut(&runtime) {
            rt.handle_disconnected(now);
        }
    }

    fn reconnect(&mut self, runtime: RuntimeId) {
        self.connected.insert(runtime);
        let now = self.now;
        self.runtimes
            .get_mut(&runtime)
            .unwrap()
            .handle_connected(now);
        self.settle();
    }

    fn outcome(&self, command: CommandId) -> Outcome {
        self.controller
            .as_ref()
            .expect("controller")
            .outcome(command)
            .expect("command known")
    }

    fn replayed(&self) -> Projection {
        Projection::rebuild(self.config.retention, &self.journal).expect("journal replays")
    }

    fn history(&self, command: CommandId) -> Vec<Outcome> {
        let p = self.replayed();
        let c = p.command(command).expect("command");
        std::iter::once(Outcome::Admitted)
            .chain(c.history.iter().map(|s| s.to))
            .collect()
    }

    fn dispatches_of(&self, command: CommandId) -> usize {
        self.sent
            .iter()
            .filter(|(_, m)| matches!(m, ControllerToRuntime::Dispatch { order, .. } if order.command == command))
            .count()
    }

    fn starts_of(&self, command: CommandId) -> usize {
        self.processes.iter().filter(|(_, c)| *c == command).count()
    }

    fn exposures_in_journal(&self, command: CommandId) -> usize {
        self.journal
            .iter()
            .filter(|e| matches!(&e.record, JournalRecord::DispatchExposed { command: c, .. } if *c == command))
            .count()
    }

    fn evidence(&self, kind: RecoveryKind) -> Vec<RecoveryEvidence> {
        self.journal
            .iter()
            .filter_map(|e| match &e.record {
                JournalRecord::Recovery(ev) if ev.kind == kind => Some(ev.clone()),
                _ => None,
            })
            .collect()
    }

    fn events_in_journal(&self, command: CommandId) -> Vec<EventRecord> {
        self.journal
            .iter()
            .filter_map(|e| match &e.record {
                JournalRecord::Event(r) if r.command == command => Some(r.clone()),
                _ => None,
            })
            .collect()
    }
}

/// Reassembles stdout from inline text and the artifacts holding the rest.
fn stdout_text(w: &World, events: &[EventRecord]) -> String {
    let mut out = String::new();
    for e in events {
        if let RetainedBody::Stdout(c) = &e.body {
            assert_eq!(c.offset, out.len() as u64, "no bytes missing or repeated");
            out.push_str(&c.inline);
            if let Some(a) = &c.artifact {
                out.push_str(&w.artifacts[&a.digest]);
            }
            assert_eq!(c.dropped, 0);
        }
    }
    out
}

#[test]
fn controller_crash_before_dispatch_resumes_the_admitted_command() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xA1));
    // Admission becomes durable; the exposure that follows is still being
    // written when the controller dies.
    w.hold_persist = true;
    w.settle();
    let key: IdempotencyKey = id(0xBEEF);
    let now = w.now;
    let binding = w.binding(rt, "echo resumed");
    w.c()
        .handle_client(
            CLIENT,
            ClientRequest::Admit {
                request: RequestId(99),
                key,
                binding,
            },
            now,
        )
        .unwrap();
    w.settle();
    let admission = w.unwritten.take().expect("admission batch");
    w.write(admission);
    w.settle();
    let exposure = w
        .unwritten
        .take()
        .expect("exposure batch follows durable admission");
    assert!(exposure
        .entries
        .iter()
        .any(|e| matches!(e.record, JournalRecord::DispatchExposed { .. })));
    let command = w.replayed().keys[&key];
    assert_eq!(
        w.dispatches_of(command),
        0,
        "nothing sent before exposure is durable"
    );
    w.crash_controller();
    w.hold_persist = false;

    assert_eq!(w.exposures_in_journal(command), 0);
    assert_eq!(w.replayed().outcome(command), Some(Outcome::Admitted));

    w.restart_controller(StartCause::ControllerRestart);

    let restart = w.evidence(RecoveryKind::ControllerRestart);
    assert_eq!(restart.len(), 1);
    assert!(restart[0].outcomes.contains(&Resolution {
        command,
        attempt: None,
        before: Outcome::Admitted,
        after: Outcome::NotDispatched,
    }));
    // The surviving runtime dialled back in and the command was dispatched.
    assert_eq!(w.dispatches_of(command), 1);
    assert_eq!(w.starts_of(command), 1);
    assert_eq!(w.outcome(command), Outcome::Running);
    w.stdout(rt.runtime, command, "resumed\n");
    w.exit(rt.runtime, command, 0);
    assert_eq!(w.outcome(command), Outcome::Completed);
    assert_eq!(
        w.history(command),
        vec![
            Outcome::Admitted,
            Outcome::NotDispatched,
            Outcome::Dispatched,
            Outcome::Running,
            Outcome::Completed
        ]
    );
    assert_eq!(w.starts_of(command), 1, "ran exactly once");
    // Re-admitting the same key returns the same command.
    let (again, existing) = w.admit(key, w.binding(rt, "echo resumed")).unwrap();
    assert_eq!((again, existing), (command, true));
    assert_eq!(w.replayed(), *w.c().projection());
}

#[test]
fn lost_ack_after_dispatch_gives_may_have_started_and_never_a_replacement() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xA2));
    // The runtime receives the dispatch, ACKs and starts, but nothing it
    // says reaches the controller.
    w.mute.insert(rt.runtime);
    let key: IdempotencyKey = id(0xC0FFEE);
    let (command, _) = w.admit(key, w.binding(rt, "touch once")).unwrap();
    assert_eq!(w.starts_of(command), 1);
    assert_eq!(
        w.outcome(command),
        Outcome::Admitted,
        "no ACK recorded, not dispatched"
    );
    let now = w.now;
    w.c().handle_transport_lost(rt.runtime, now).unwrap();
    w.settle();
    assert_eq!(w.outcome(command), Outcome::MayHaveStarted);
    let loss = w.evidence(RecoveryKind::TransportLoss);
    assert_eq!(loss.len(), 1);
    assert_eq!(loss[0].outcomes[0].before, Outcome::Admitted);
    assert_eq!(loss[0].outcomes[0].after, Outcome::MayHaveStarted);

    // The runtime dies before it can dial back. Nothing is re-dispatched:
    // not to a replacement, not after a controller restart, not after host loss.
    w.runtimes.remove(&rt.runtime);
    w.cut(rt.runtime);
    let now = w.now;
    w.c()
        .handle_runtime_crashed(rt.runtime, rt.generation, now)
        .unwrap();
    w.settle();
    assert_eq!(w.outcome(command), Outcome::MayHaveStarted);
    let replacement = w.start_runtime(rt.workspace);
    assert_eq!(replacement.generation, Generation(2));
    w.crash_controller();
    w.restart_controller(StartCause::ControllerRestart);
    assert_eq!(w.outcome(command), Outcome::MayHaveStarted);
    w.lose_host();
    assert_eq!(w.outcome(command), Outcome::MayHaveStarted);
    assert_eq!(w.dispatches_of(command), 1, "never sent again");
    assert_eq!(w.exposures_in_journal(command), 1);
    assert_eq!(w.starts_of(command), 1);

    // Only an explicit re-issue under a new key runs it again, as a new command.
    let fresh = w.start_runtime(rt.workspace);
    let err = w.admit(key, w.binding(fresh, "touch once")).unwrap_err();
    match &err {
        Rejection::BindingMismatch(m) => {
            assert_eq!(m.existing, command);
            assert_eq!(
                m.fields,
                vec![BindingField::Generation, BindingField::Runtime]
            );
        }
        other => panic!("expected binding mismatch, got {other:?}"),
    }
    assert!(err.to_string().contains("generation, runtime identity"));
    let (reissued, existing) = w
        .admit(id(0xC0FFEF), w.binding(fresh, "touch once"))
        .unwrap();
    assert!(!existing);
    assert_ne!(reissued, command);
    assert_eq!(w.starts_of(reissued), 1);
    assert_eq!(w.outcome(command), Outcome::MayHaveStarted);
}

#[test]
fn replacement_runtime_cannot_accept_execution_id_from_older_generation() {
    let mut w = World::new();
    let old = w.start_runtime(id(0xA3));
    let (command, _) = w.admit(id(0xD1), w.binding(old, "sleep 60")).unwrap();
    assert_eq!(w.outcome(command), Outcome::Running);
    let old_order = w
        .sent
        .iter()
        .find_map(|(_, m)| match m {
            ControllerToRuntime::Dispatch { order, .. } => Some(order.clone()),
            _ => None,
        })
        .unwrap();

    let new = w.start_runtime(old.workspace);
    assert_eq!(new.generation, Generation(2));
    assert_eq!(w.terminations, vec![(old.runtime, old.generation)]);
    let new_execution = w.runtimes[&new.runtime].identity().execution;
    assert_ne!(new_execution, old_order.execution);

    // The old generation's order, however it is addressed, is refused by the
    // replacement and nothing starts there.
    let now = w.now;
    let attempts = [
        (old.runtime, old.generation, old_order.clone()),
        (new.runtime, old.generation, old_order.clone()),
        (new.runtime, new.generation, old_order.clone()),
    ];
    let replacement = w.runtimes.get_mut(&new.runtime).unwrap();
    for (runtime, generation, order) in attempts {
        let err = replacement
            .handle_controller(
                ControllerToRuntime::Dispatch {
                    runtime,
                    generation,
                    order,
                },
                now,
            )
            .unwrap_err();
        assert!(matches!(err, RuntimeError::Refused { .. }), "{err:?}");
    }
    let refusals: Vec<RuntimeEffect> = replacement.drain_effects();
    assert!(refusals
        .iter()
        .all(|e| matches!(e, RuntimeEffect::Send(RuntimeToController::Refuse { .. }))));
    assert_eq!(refusals.len(), 3);
    assert!(!replacement.accepted(command));
    assert!(!w.processes.iter().any(|(r, _)| *r == new.runtime));

    // The controller, too, fences the old generation: a hello claiming the
    // new generation, bindings and cancels naming the wrong generation are
    // refused. The retired runtime's own hello is heard only so it can hand
    // over evidence for its own command: it is never given new work.
    let old_identity = w.runtimes[&old.runtime].identity();
    let now = w.now;
    let hello = |generation, execution| {
        RuntimeToController::Hello(Hello {
            v: V1,
            lease: old.lease,
            runtime: old.runtime,
            generation,
            execution,
            streams: vec![],
        })
    };
    let dispatches_before = w.dispatches_of(command);
    w.c()
        .handle_runtime(
            old.runtime,
            hello(old.generation, old_identity.execution),
            now,
        )
        .unwrap();
    w.settle();
    assert_eq!(w.dispatches_of(command), dispatches_before);
    let err = w
        .c()
        .handle_runtime(old.runtime, hello(new.generation, new_execution), now)
        .unwrap_err();
    assert_eq!(
        err,
        ControllerError::HelloRejected {
            reason: HelloRejection::StaleGeneration {
                current: Some(Generation(2))
            }
        }
    );
    let stale = w.admit(id(0xD2), w.binding(old, "echo stale")).unwrap_err();
    assert!(matches!(
        stale,
        Rejection::StaleBinding {
            field: BindingField::Generation,
            ..
        }
    ));
    let wrong = w.cancel(command, new.generation).unwrap_err();
    assert!(matches!(wrong, Rejection::StaleGeneration { .. }));

    // Once the old generation is confirmed gone, its command is lost, not moved.
    let now = w.now;
    w.c()
        .handle_runtime_terminated(old.runtime, old.generation, now)
        .unwrap();
    w.settle();
    assert_eq!(w.outcome(command), Outcome::Lost);
    assert_eq!(w.dispatches_of(command), 1);
    // Once it is gone, nothing from it is heard any more.
    let now = w.now;
    let err = w
        .c()
        .handle_runtime(
            old.runtime,
            hello(old.generation, old_identity.execution),
            now,
        )
        .unwrap_err();
    assert_eq!(
        err,
        ControllerError::HelloRejected {
            reason: HelloRejection::Retired
        }
    );
}

#[test]
fn reattachment_resumes_at_next_sequence_without_duplication_or_omission() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xA4));
    let (command, _) = w.admit(id(0xE1), w.binding(rt, "seq 1 9")).unwrap();
    let mut expected = vec![];
    for i in 1..=3 {
        let line = format!("line {i}\n");
        w.stdout(rt.runtime, command, &line);
        expected.push(line);
    }
    // The next events are being written when the controller dies.
    w.hold_persist = true;
    w.stdout(rt.runtime, command, "line 4\n");
    expected.push("line 4\n".into());
    w.crash_controller();
    w.hold_persist = false;
    // While no controller listens, the runtime keeps working and buffering.
    for i in 5..=6 {
        let line = format!("line {i}\n");
        w.stdout(rt.runtime, command, &line);
        expected.push(line);
    }
    let durable_before = w.events_in_journal(command).last().unwrap().seq;
    assert_eq!(durable_before, EventSeq(4), "lifecycle start + three lines");

    w.restart_controller(StartCause::ControllerRestart);
    // A second interruption: transport loss, reattachment.
    w.cut(rt.runtime);
    let now = w.now;
    w.c().handle_transport_lost(rt.runtime, now).unwrap();
    w.settle();
    w.stdout(rt.runtime, command, "line 7\n");
    expected.push("line 7\n".into());
    w.reconnect(rt.runtime);
    for i in 8..=9 {
        let line = format!("line {i}\n");
        w.stdout(rt.runtime, command, &line);
        expected.push(line);
    }
    w.exit(rt.runtime, command, 0);

    let events = w.events_in_journal(command);
    let seqs: Vec<u64> = events.iter().map(|e| e.seq.0).collect();
    assert_eq!(
        seqs,
        (1..=11).collect::<Vec<_>>(),
        "dense, each exactly once"
    );
    assert_eq!(stdout_text(&w, &events), expected.concat());
    assert_eq!(w.outcome(command), Outcome::Completed);
    assert_eq!(w.runtimes[&rt.runtime].unacknowledged(command), 0);

    // A resend of a recorded event is dropped; a conflicting one is refused
    // with evidence; a gap is refused and a resend requested.
    let now = w.now;
    let resend = RuntimeToController::Event {
        runtime: rt.runtime,
        generation: rt.generation,
        command,
        seq: EventSeq(5),
        body: EventBody::Stdout {
            data: "line 4\n".into(),
        },
    };
    w.c().handle_runtime(rt.runtime, resend, now).unwrap();
    let conflict = RuntimeToController::Event {
        runtime: rt.runtime,
        generation: rt.generation,
        command,
        seq: EventSeq(5),
        body: EventBody::Stdout {
            data: "something else".into(),
        },
    };
    assert_eq!(
        w.c().handle_runtime(rt.runtime, conflict, now),
        Err(ControllerError::ConflictingDuplicate {
            command,
            seq: EventSeq(5)
        })
    );
    let gap = RuntimeToController::Event {
        runtime: rt.runtime,
        generation: rt.generation,
        command,
        seq: EventSeq(13),
        body: EventBody::Stdout { data: "x".into() },
    };
    assert!(matches!(
        w.c().handle_runtime(rt.runtime, gap, now),
        Err(ControllerError::SequenceGap {
            expected: EventSeq(12),
            got: EventSeq(13),
            ..
        })
    ));
    let after_terminal = RuntimeToController::Event {
        runtime: rt.runtime,
        generation: rt.generation,
        command,
        seq: EventSeq(12),
        body: EventBody::Stdout {
            data: "late".into(),
        },
    };
    assert!(matches!(
        w.c().handle_runtime(rt.runtime, after_terminal, now),
        Err(ControllerError::Malformed { .. })
    ));
    w.settle();
    assert_eq!(w.evidence(RecoveryKind::StreamConflict).len(), 1);
    assert_eq!(w.events_in_journal(command).len(), 11);

    // A client joining at cursor 4 gets 5.. exactly once, from durable evidence.
    w.inbox.clear();
    let (request, r) = w.request(|request| ClientRequest::Join {
        request,
        cursor: Cursor {
            v: V1,
            command,
            after: EventSeq(4),
        },
    });
    r.unwrap();
    let seen: Vec<u64> = w
        .inbox
        .iter()
        .filter_map(|(_, m)| match m {
            ClientMessage::Event { seq, .. } => Some(seq.0),
            _ => None,
        })
        .collect();
    assert_eq!(seen, (5..=11).collect::<Vec<_>>());
    assert!(w.inbox.iter().any(|(_, m)| matches!(m, ClientMessage::Joined { request: q, through: EventSeq(11), outcome: Outcome::Completed, .. } if *q == request)));
}

#[test]
fn cancellation_and_timeout_settle_one_exact_command_and_cannot_target_reused_id() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xA5));
    let (a, _) = w.admit(id(0xF1), w.binding(rt, "sleep 100")).unwrap();
    let (b, _) = w.admit(id(0xF2), w.binding(rt, "sleep 200")).unwrap();
    assert_eq!(
        (w.outcome(a), w.outcome(b)),
        (Outcome::Running, Outcome::Running)
    );

    // Unknown ids and stale generations never reach a command.
    let unknown: CommandId = id(0xDEAD);
    assert_eq!(
        w.cancel(unknown, rt.generation),
        Err(Rejection::UnknownCommand { command: unknown })
    );
    assert!(matches!(
        w.cancel(a, Generation(7)),
        Err(Rejection::StaleGeneration { .. })
    ));
    assert!(w.kills.is_empty());

    // Cancel A: only A's process is killed; its terminal settles it.
    assert_eq!(
        w.cancel(a, rt.generation),
        Ok(Settlement::Pending {
            reason: CancelReason::User
        })
    );
    assert_eq!(w.kills, vec![(rt.runtime, a)]);
    assert_eq!(
        w.cancel(a, rt.generation),
        Ok(Settlement::Pending {
            reason: CancelReason::User
        }),
        "idempotent while pending"
    );
    assert_eq!(w.kills.len(), 1);
    w.exit(rt.runtime, a, 137);
    assert_eq!(w.outcome(a), Outcome::Cancelled);
    assert_eq!(w.outcome(b), Outcome::Running);
    let settled = w.cancel(a, rt.generation);
    assert_eq!(
        settled,
        Ok(Settlement::Settled {
            outcome: Outcome::Cancelled
        })
    );
    assert_eq!(w.cancel(a, rt.generation), settled, "same settlement again");

    // Re-issuing A's work makes a new id; cancelling the old id touches only A.
    let (a2, existing) = w.admit(id(0xF3), w.binding(rt, "sleep 100")).unwrap();
    assert!(!existing && a2 != a);
    // An idempotency key may not reuse an id the journal already holds.
    let reused_key: IdempotencyKey = a.to_string().parse().unwrap();
    assert!(matches!(
        w.admit(reused_key, w.binding(rt, "sleep 1")),
        Err(Rejection::IdReused { .. })
    ));
    assert_eq!(w.cancel(a, rt.generation), settled);
    assert_eq!(w.outcome(a2), Outcome::Running);
    assert_eq!(w.kills.len(), 1);

    // Timeout: T's deadline passes, the cancel goes unanswered (stuck
    // process), the grace period escalates to terminating the runtime.
    let mut tb = w.binding(rt, "sleep 999");
    tb.budget.deadline = w.now.plus(1_000);
    let (t, _) = w.admit(id(0xF4), tb).unwrap();
    assert_eq!(w.outcome(t), Outcome::Running);
    w.fire(TimerId::Deadline { command: t });
    assert_eq!(w.kills.last(), Some(&(rt.runtime, t)));
    assert_eq!(
        w.outcome(t),
        Outcome::Running,
        "a timeout is not proof it stopped"
    );
    w.fire(TimerId::CancelGrace { command: t });
    assert_eq!(w.terminations, vec![(rt.runtime, rt.generation)]);
    assert_eq!(
        w.outcome(t),
        Outcome::Running,
        "not until termination is confirmed"
    );
    let now = w.now;
    w.c()
        .handle_runtime_terminated(rt.runtime, rt.generation, now)
        .unwrap();
    w.settle();

    // Termination proves T stopped, not how: it may have completed and the
    // terminal event been lost. Without terminal evidence it is `lost`.
    assert_eq!(w.outcome(t), Outcome::Lost);
    assert_eq!(w.outcome(a), Outcome::Cancelled);
    assert_eq!(w.outcome(b), Outcome::Lost);
    assert_eq!(w.outcome(a2), Outcome::Lost);
    let settlements_of_t = w
        .journal
        .iter()
        .filter(|e| matches!(&e.record, JournalRecord::OutcomeChanged { command, to, .. } if *command == t && to.is_terminal()))
        .count();
    assert_eq!(settlements_of_t, 1, "exactly one settlement for T");
    // The termination is reported honestly: every command it caught is listed.
    let escalation = w.evidence(RecoveryKind::CancelEscalation);
    let gone = escalation.last().unwrap();
    let caught: BTreeMap<CommandId, (Outcome, Outcome)> = gone
        .outcomes
        .iter()
        .map(|r| (r.command, (r.before, r.after)))
        .collect();
    assert_eq!(caught[&t], (Outcome::Running, Outcome::Lost));
    assert_eq!(caught[&b], (Outcome::Running, Outcome::Lost));
    assert_eq!(caught[&a2], (Outcome::Running, Outcome::Lost));
    assert!(!caught.contains_key(&a));
    assert_eq!(
        w.cancel(t, rt.generation),
        Ok(Settlement::Settled {
            outcome: Outcome::Lost
        })
    );
}

#[test]
fn terminal_evidence_survives_live_stream_loss_controller_restart_and_runtime_teardown() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xA6));
    let (command, _) = w.admit(id(0x7E1), w.binding(rt, "cat big.txt")).unwrap();
    // A live subscriber...
    let (_, r) = w.request(|request| ClientRequest::Join {
        request,
        cursor: Cursor {
            v: V1,
            command,
            after: EventSeq::ZERO,
        },
    });
    r.unwrap();
    w.stdout(rt.runtime, command, "0123456789");
    // ...whose stream is lost before the rest happens.
    w.c().handle_client_gone(CLIENT);
    w.inbox.clear();
    let big = "abcdefghij".repeat(5);
    w.stdout(rt.runtime, command, &big);
    w.exit(rt.runtime, command, 0);
    assert!(w.inbox.is_empty(), "nobody is listening");
    assert_eq!(w.outcome(command), Outcome::Completed);

    // Controller restart, then runtime teardown (replacement + termination),
    // then even host loss.
    w.crash_controller();
    w.restart_controller(StartCause::ControllerRestart);
    let replacement = w.start_runtime(rt.workspace);
    assert_eq!(w.terminations, vec![(rt.runtime, rt.generation)]);
    w.runtimes.remove(&rt.runtime);
    let now = w.now;
    w.c()
        .handle_runtime_terminated(rt.runtime, rt.generation, now)
        .unwrap();
    w.settle();
    assert_eq!(replacement.generation, Generation(2));
    w.lose_host();

    let p = w.replayed();
    assert_eq!(
        *w.c().projection(),
        p,
        "live projection is the journal's fold"
    );
    let view = p.command(command).unwrap();
    assert_eq!(view.outcome, Outcome::Completed);
    let terminal = view.terminal.as_ref().expect("terminal evidence retained");
    match &terminal.body {
        RetainedBody::Terminal(t) => {
            assert_eq!(t.status, TerminalStatus::Completed);
            assert_eq!(t.exit_code, Some(0));
        }
        other => panic!("terminal event expected, got {other:?}"),
    }
    // Bounded retention: the reader can tell where inline output stops and
    // which artifact holds the rest.
    assert_eq!(view.stdout.total_bytes, 60);
    assert_eq!(view.stdout.inline_bytes, 16);
    assert_eq!(view.stdout.truncated_at, Some(16));
    let placement = &view.stdout.artifacts[0];
    assert_eq!(placement.offset, 16);
    assert_eq!(w.artifacts[&placement.digest], big[6..]);

    // A new client at cursor 0 gets the whole stream, terminal last.
    w.inbox.clear();
    let (_, r) = w.request(|request| ClientRequest::Join {
        request,
        cursor: Cursor {
            v: V1,
            command,
            after: EventSeq::ZERO,
        },
    });
    r.unwrap();
    let kinds: Vec<(u64, EventKind)> = w
        .inbox
        .iter()
        .filter_map(|(_, m)| match m {
            ClientMessage::Event { seq, body, .. } => Some((seq.0, body.kind())),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            (1, EventKind::Lifecycle),
            (2, EventKind::Stdout),
            (3, EventKind::Stdout),
            (4, EventKind::Terminal)
        ]
    );
    // And a snapshot plus the tail gives the same projection.
    let half = w.journal.len() / 2;
    let snap = Projection::rebuild(w.config.retention, &w.journal[..half])
        .unwrap()
        .snapshot();
    let bytes = encode(&snap).unwrap();
    let snap: ProjectionSnapshot = decode(&bytes).unwrap();
    assert_eq!(
        Projection::from_snapshot(snap, &w.journal[half..]).unwrap(),
        p
    );
}

#[test]
fn a_cancel_pending_when_its_runtime_died_answers_not_running_with_the_honest_outcome() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xA7));
    // The dispatch is exposed and the process starts, but nothing the
    // runtime says reaches the controller: no ACK is ever recorded.
    w.mute.insert(rt.runtime);
    let (command, _) = w.admit(id(0xF5), w.binding(rt, "touch maybe")).unwrap();
    assert_eq!(w.starts_of(command), 1);
    assert_eq!(
        w.cancel(command, rt.generation),
        Ok(Settlement::Pending {
            reason: CancelReason::User
        })
    );
    let now = w.now;
    w.c().handle_transport_lost(rt.runtime, now).unwrap();
    w.settle();
    assert_eq!(w.outcome(command), Outcome::MayHaveStarted);

    // The runtime dies: nothing is left to stop, and nothing pretends the
    // cancel took effect. The command keeps its uncertain outcome.
    w.runtimes.remove(&rt.runtime);
    w.cut(rt.runtime);
    let now = w.now;
    w.c()
        .handle_runtime_crashed(rt.runtime, rt.generation, now)
        .unwrap();
    w.settle();
    assert_eq!(w.outcome(command), Outcome::MayHaveStarted);
    let settled = w.cancel(command, rt.generation);
    assert_eq!(
        settled,
        Ok(Settlement::NotRunning {
            outcome: Outcome::MayHaveStarted
        })
    );
    assert_eq!(
        w.cancel(command, rt.generation),
        settled,
        "same answer again"
    );
    assert_eq!(w.dispatches_of(command), 1);
}

// ----- the built-in agent on top of the recovery core -----------------------

const SESSION: u128 = 0x5e55;

fn open_session(w: &mut World, s: Started) {
    let (_, r) = w.request(|request| ClientRequest::OpenSession {
        request,
        session: id(SESSION),
        workspace: s.workspace,
        title: "test".into(),
    });
    r.expect("session opens");
}

fn record_turn(w: &mut World, turn: TurnId, prompt: &str) {
    let plan = lifeline_core::agent::plan(prompt).expect("plans").commands;
    let (_, r) = w.request(|request| ClientRequest::RecordTurn {
        request,
        session: id(SESSION),
        turn,
        prompt: prompt.into(),
        plan,
    });
    r.expect("turn recorded");
}

/// What the controller shell does after every notification: derive the next
/// step from the durable projection and carry it out.
fn drive(w: &mut World, s: Started, turn: TurnId) -> Option<lifeline_core::agent::Step> {
    use lifeline_core::agent::{next_step, plan_key, Step};
    loop {
        let projection = w.c().projection().clone();
        let step = next_step(&projection, turn)?;
        match step {
            Step::Admit { index, ref line } => {
                let binding = w.binding(s, line);
                w.admit(plan_key(turn, index), binding).expect("admits");
            }
            Step::Wait { .. } => return Some(step),
            Step::Finish { status, ref reply } => {
                let reply = reply.clone();
                let (_, r) = w.request(|request| ClientRequest::FinishTurn {
                    request,
                    turn,
                    status,
                    reply,
                });
                r.expect("turn finishes");
                return Some(step);
            }
        }
    }
}

fn waiting_on(step: Option<lifeline_core::agent::Step>) -> CommandId {
    match step {
        Some(lifeline_core::agent::Step::Wait { command }) => command,
        other => panic!("expected the agent to wait on a command, got {other:?}"),
    }
}

#[test]
fn built_in_agent_runs_planned_commands_in_order_and_stops_at_the_first_failure() {
    let mut w = World::new();
    let s = w.start_runtime(id(0x3001));
    open_session(&mut w, s);
    let turn: TurnId = id(0x7001);
    record_turn(&mut w, turn, "please\n$ echo a\n$ false\n$ echo c");
    let first = waiting_on(drive(&mut w, s, turn));
    w.stdout(s.runtime, first, "a\n");
    w.exit(s.runtime, first, 0);
    let second = waiting_on(drive(&mut w, s, turn));
    assert_ne!(first, second);
    w.exit(s.runtime, second, 1);
    let step = drive(&mut w, s, turn);
    let Some(lifeline_core::agent::Step::Finish { status, reply }) = step else {
        panic!("turn should finish, got {step:?}");
    };
    assert_eq!(status, TurnStatus::Failed);
    assert!(
        reply.contains("`false` failed with exit status 1"),
        "{reply}"
    );
    assert!(reply.contains("1 later command was not run"), "{reply}");
    let p = w.replayed();
    assert_eq!(p.commands.len(), 2, "the third command was never admitted");
    assert_eq!(
        p.turns[&turn].end.as_ref().unwrap().status,
        TurnStatus::Failed
    );
    assert_eq!(lifeline_core::agent::next_step(&p, turn), None);
}

#[test]
fn host_loss_mid_turn_interrupts_it_and_nothing_runs_again() {
    let mut w = World::new();
    let s = w.start_runtime(id(0x3002));
    open_session(&mut w, s);
    let turn: TurnId = id(0x7002);
    record_turn(
        &mut w,
        turn,
        "$ echo start >> marks.txt\n$ sleep 30\n$ echo never",
    );
    let mark = waiting_on(drive(&mut w, s, turn));
    w.exit(s.runtime, mark, 0);
    let sleep = waiting_on(drive(&mut w, s, turn));
    w.stdout(s.runtime, sleep, "");
    assert_eq!(w.starts_of(sleep), 1);
    w.lose_host();
    let after = w.outcome(sleep);
    assert!(
        matches!(after, Outcome::Lost | Outcome::MayHaveStarted),
        "{after:?}"
    );
    // A fresh runtime generation does not change what the turn may do.
    let s2 = w.start_runtime(s.workspace);
    let step = drive(&mut w, s2, turn);
    let Some(lifeline_core::agent::Step::Finish { status, reply }) = step else {
        panic!("turn should finish, got {step:?}");
    };
    assert_eq!(status, TurnStatus::Interrupted);
    assert!(reply.contains("`sleep 30`"), "{reply}");
    assert!(reply.contains("did not run it again"), "{reply}");
    assert_eq!(w.starts_of(mark), 1, "the mark was written once");
    assert_eq!(w.starts_of(sleep), 1, "sleep was not re-run");
    assert_eq!(
        w.replayed().commands.len(),
        2,
        "`echo never` never admitted"
    );
}

#[test]
fn controller_restart_mid_turn_finds_the_same_command_and_continues() {
    let mut w = World::new();
    let s = w.start_runtime(id(0x3003));
    open_session(&mut w, s);
    let turn: TurnId = id(0x7003);
    record_turn(&mut w, turn, "$ seq 3\n$ echo done");
    let seq = waiting_on(drive(&mut w, s, turn));
    w.stdout(s.runtime, seq, "1\n");
    w.crash_controller();
    w.restart_controller(StartCause::ControllerRestart);
    assert_eq!(
        waiting_on(drive(&mut w, s, turn)),
        seq,
        "same command, not a new one"
    );
    w.stdout(s.runtime, seq, "2\n3\n");
    w.exit(s.runtime, seq, 0);
    let echo = waiting_on(drive(&mut w, s, turn));
    w.exit(s.runtime, echo, 0);
    let step = drive(&mut w, s, turn);
    assert!(
        matches!(
            step,
            Some(lifeline_core::agent::Step::Finish {
                status: TurnStatus::Completed,
                ..
            })
        ),
        "{step:?}"
    );
    assert_eq!(w.starts_of(seq), 1);
    // The same turn id with another prompt is refused; with the same prompt it is the original.
    let (_, r) = w.request(|request| ClientRequest::RecordTurn {
        request,
        session: id(SESSION),
        turn,
        prompt: "$ rm -r /".into(),
        plan: vec!["rm -r /".into()],
    });
    assert_eq!(r, Err(Rejection::TurnConflict { turn }));
    record_turn(&mut w, turn, "$ seq 3\n$ echo done");
    assert_eq!(w.replayed().turns.len(), 1);
}

#[test]
fn transcript_deltas_from_batches_add_up_to_the_session_view() {
    use lifeline_core::view::{batch_deltas, session_deltas, ViewDelta};
    let mut w = World::new();
    let s = w.start_runtime(id(0x3004));
    open_session(&mut w, s);
    let turn: TurnId = id(0x7004);
    record_turn(&mut w, turn, "$ echo hi");
    let echo = waiting_on(drive(&mut w, s, turn));
    w.stdout(s.runtime, echo, "hi\n");
    w.exit(s.runtime, echo, 0);
    drive(&mut w, s, turn);
    let p = w.replayed();
    let full = session_deltas(&p, id(SESSION));
    let streamed = batch_deltas(&p, &w.journal);
    let output = |ds: &[ViewDelta]| -> String {
        ds.iter()
            .filter_map(|d| match d {
                ViewDelta::Output { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(output(&full), "hi\n");
    assert_eq!(output(&streamed), "hi\n");
    let last_command = |ds: &[ViewDelta]| {
        ds.iter()
            .rev()
            .find_map(|d| match d {
                ViewDelta::Command {
                    outcome,
                    turn: t,
                    exit_code,
                    ..
                } => Some((*outcome, *t, *exit_code)),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(
        last_command(&full),
        (Outcome::Completed, Some(turn), Some(0))
    );
    assert_eq!(last_command(&streamed), last_command(&full));
    assert!(full.iter().any(|d| matches!(d,
        ViewDelta::Turn { status: Some(TurnStatus::Completed), reply: Some(r), .. } if r.contains("`echo hi` completed"))));
}

#[test]
fn salvage_sets_aside_unreadable_entries_and_loads_the_rest() {
    let mut w = World::new();
    let s = w.start_runtime(id(0x3005));
    open_session(&mut w, s);
    let a = w.admit(id(0xa1), w.binding(s, "echo a")).unwrap().0;
    let b = w.admit(id(0xa2), w.binding(s, "echo b")).unwrap().0;
    w.stdout(s.runtime, b, "b\n");
    let journal = w.journal.clone();
    let admitted_a = journal
        .iter()
        .position(|e| matches!(&e.record, JournalRecord::CommandAdmitted(c) if c.command == a))
        .unwrap();
    // The entry for `a`'s admission is quarantined: it is simply absent.
    let mut damaged = journal.clone();
    let lost_position = damaged.remove(admitted_a).position;
    let (p, errors) = Projection::salvage(w.config.retention, None, &damaged, 16);
    assert!(p.command(b).is_some(), "later commands still load");
    assert!(p.command(a).is_none());
    assert_eq!(p.position, journal.last().unwrap().position);
    assert!(
        errors.iter().any(|e| e.position == lost_position),
        "{errors:?}"
    );
    // Entries about `a` after its admission are refused and reported, not believed.
    assert!(errors.len() >= 2, "{errors:?}");
    let (clean, none) = Projection::salvage(w.config.retention, None, &journal, 16);
    assert!(none.is_empty());
    assert_eq!(clean, w.replayed());
}

#[test]
fn settled_commands_beyond_the_recent_window_keep_only_collapsed_output() {
    use lifeline_core::view::{session_deltas, ViewDelta};
    let mut w = World::new();
    let window = w.config.retention.settled_with_events;
    let s = w.start_runtime(id(0x3006));
    open_session(&mut w, s);
    let mut commands = Vec::new();
    for n in 0..window + 3 {
        let turn: TurnId = id(0x7100 + n as u128);
        record_turn(&mut w, turn, &format!("$ echo {n}"));
        let c = waiting_on(drive(&mut w, s, turn));
        w.stdout(s.runtime, c, &format!("out {n}\n"));
        w.stdout(s.runtime, c, "more\n");
        w.exit(s.runtime, c, 0);
        drive(&mut w, s, turn);
        commands.push(c);
    }
    let p = w.replayed();
    let oldest = p.command(commands[0]).unwrap();
    let settled = oldest
        .settled
        .as_ref()
        .expect("the oldest command is collapsed");
    assert!(oldest.events.is_empty());
    assert_eq!(settled.stdout, "out 0\nmore\n");
    let through = settled.through;
    assert_eq!(through.next(), oldest.terminal.as_ref().unwrap().seq);
    let newest = p.command(*commands.last().unwrap()).unwrap();
    assert!(newest.settled.is_none() && newest.events.len() as u64 == through.0);
    assert_eq!(p.recently_settled.len(), window);
    // The view shows collapsed output whole; a client joining gets a gap, not silence.
    assert!(session_deltas(&p, id(SESSION)).iter().any(|d| matches!(d,
        ViewDelta::Settled { command, stdout, .. } if *command == commands[0] && stdout == "out 0\nmore\n")));
    let (_, r) = w.request(|request| ClientRequest::Join {
        request,
        cursor: Cursor {
            v: V1,
            command: commands[0],
            after: EventSeq::ZERO,
        },
    });
    r.unwrap();
    assert!(w.inbox.iter().any(|(_, m)| matches!(m,
        ClientMessage::Gap { command, to, .. } if *command == commands[0] && *to == through)));
    // The same fold from a snapshot gives the same projection.
    let snapshot = Projection::rebuild(w.config.retention, &w.journal[..w.journal.len() / 2])
        .unwrap()
        .snapshot();
    let resumed = Projection::from_snapshot(snapshot, &w.journal).unwrap();
    assert_eq!(resumed, p);
}
