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
            self.artifacts.insert(a.digest(), a.data().to_owned());
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
                        self.unwritten = Some(std::sync::Arc::unwrap_or_clone(b));
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
        Ok(self.admitted(request))
    }

    /// The command an admission (or a re-issue) answered `request` with,
    /// and whether it existed already.
    fn admitted(&self, request: RequestId) -> (CommandId, bool) {
        self.inbox
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
            .expect("admitted reply")
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

/// `p` as its snapshot holds it: the recent window emptied.
fn windowless(p: &Projection) -> Projection {
    let mut p = p.clone();
    p.empty_window();
    p
}

/// The fold of `w`'s journal when a snapshot was written after its first
/// `cut` entries and the rest was read after it.
fn folded_through_snapshot(w: &World, cut: usize) -> Projection {
    let mut p = windowless(&Projection::rebuild(w.config.retention, &w.journal[..cut]).unwrap());
    for entry in &w.journal[cut..] {
        p.apply(entry).unwrap();
    }
    p
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
    assert_eq!(w.history(command), NOT_DISPATCHED_THEN_RAN);
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
    // Read back (issue 13: Download output, View full output): the inline
    // head, then the artifact, whole or in ranges.
    {
        use lifeline_core::stored_output::StoredOutput;
        let stored = StoredOutput::of(&p, command).expect("its inline head is held");
        let read = |offset: u64, len: u64| {
            let plan = stored.plan(offset, len);
            let read: Vec<_> = StoredOutput::digests(&plan)
                .into_iter()
                .map(|d| (d, w.artifacts.get(&d).cloned()))
                .collect();
            String::from_utf8(stored.assemble(&plan, &read).unwrap()).unwrap()
        };
        let whole = read(0, u64::MAX);
        assert_eq!(whole.len(), 60);
        assert_eq!(whole[16..], big[6..]);
        for (offset, len) in [(0, 16), (10, 20), (16, 44), (50, 100)] {
            let end = (offset + len).min(60);
            assert_eq!(read(offset as u64, len as u64), whole[offset..end]);
        }
    }

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
    // And a snapshot plus the tail gives the same projection (the recent
    // window emptied where the snapshot was written).
    let half = w.journal.len() / 2;
    let snap = Projection::rebuild(w.config.retention, &w.journal[..half])
        .unwrap()
        .snapshot();
    let bytes = encode(&snap).unwrap();
    let snap: ProjectionSnapshot = decode(&bytes).unwrap();
    assert_eq!(
        Projection::from_snapshot(snap, &w.journal[half..]).unwrap(),
        folded_through_snapshot(&w, half)
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
        agent: TurnAgent::BuiltIn,
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
                    ending: None,
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

/// Stop is pressed while `command` runs, and the runtime finishes it
/// before the cancel reaches it (the cancel goes out once it is durable).
fn finish_before_the_cancel_arrives(w: &mut World, s: Started, command: CommandId) {
    w.hold_persist = true;
    let (_, r) = w.request(|request| ClientRequest::Cancel {
        request,
        command,
        generation: s.generation,
    });
    r.expect("cancel accepted");
    w.exit(s.runtime, command, 0);
    w.hold_persist = false;
    w.settle();
    let c = w.c().projection().command(command).cloned().unwrap();
    assert!(
        c.stop_requested() && c.outcome == Outcome::Completed,
        "{:?}",
        c.outcome
    );
}

/// Stop raced a command's end: the runtime finished it before the cancel
/// reached it. The command stays completed, and the plan goes no further.
#[test]
fn a_command_that_finishes_after_stop_ends_the_built_in_turn() {
    let mut w = World::new();
    let s = w.start_runtime(id(0x3003));
    open_session(&mut w, s);
    let turn: TurnId = id(0x7003);
    record_turn(&mut w, turn, "please\n$ echo a\n$ echo b");
    let first = waiting_on(drive(&mut w, s, turn));
    finish_before_the_cancel_arrives(&mut w, s, first);
    let step = drive(&mut w, s, turn);
    let Some(lifeline_core::agent::Step::Finish { status, reply }) = step else {
        panic!("the turn should end after Stop, got {step:?}");
    };
    assert_eq!(status, TurnStatus::Cancelled);
    assert!(reply.contains("`echo a` completed"), "{reply}");
    assert!(reply.contains("1 later command was not run"), "{reply}");
    let p = w.replayed();
    assert_eq!(p.commands.len(), 1, "`echo b` was never admitted");
    assert_eq!(p.command(first).unwrap().outcome, Outcome::Completed);
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
        agent: TurnAgent::BuiltIn,
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
    assert_eq!(shown(&streamed), shown(&full));
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
fn settled_commands_beyond_the_recent_window_keep_no_output_and_read_it_when_shown() {
    use lifeline_core::view::{output_read, session_deltas, OutputRead, ViewDelta};
    let mut w = World::new();
    let window = w.config.retention.settled_with_events;
    let s = w.start_runtime(id(0x3006));
    open_session(&mut w, s);
    let commands = turns_printing(&mut w, s, 0x7100, window + 3, |n| {
        vec![format!("out {n}\n"), "more\n".into()]
    });
    let p = w.replayed();
    // Settled for good, its turn ended: kept small, its output in the
    // journal only, so the snapshot does not grow with it.
    assert!(p.command(commands[0]).is_none());
    let oldest = p
        .settled_command(commands[0])
        .expect("the oldest command is kept small");
    let through = oldest.through();
    assert_eq!(through.next(), oldest.last_seq);
    assert_eq!(oldest.line, "echo 0");
    let newest = p.command(*commands.last().unwrap()).unwrap();
    assert!(newest.settled.is_none() && newest.events.len() as u64 == through.0);
    assert_eq!(p.recently_settled.len(), window);
    // The view says the output is being read; the read's events give it whole.
    let loading = |d: &ViewDelta| {
        matches!(d, ViewDelta::Settled { command, stdout, read: OutputRead::Loading, .. }
            if *command == commands[0] && stdout.is_empty())
    };
    assert!(session_deltas(&p, id(SESSION)).iter().any(loading));
    assert!(session_deltas(&p, id(SESSION)).iter().any(|d| matches!(d,
        ViewDelta::Command { command, line, outcome: Outcome::Completed, exit_code: Some(0), turn: Some(_), .. }
            if *command == commands[0] && line == "echo 0")));
    let events = events_of(&w, commands[0]);
    assert!(matches!(output_read(&p, commands[0], Ok(&events)),
        Some(ViewDelta::Settled { stdout, read: OutputRead::Shown, not_shown: 0, .. }) if stdout == "out 0\nmore\n"));
    assert!(matches!(
        output_read(&p, commands[0], Err(())),
        Some(ViewDelta::Settled {
            read: OutputRead::Unreadable,
            ..
        })
    ));
    // A command still in the window is shown from memory: nothing to read.
    assert_eq!(
        output_read(&p, *commands.last().unwrap(), Ok(&events)),
        None
    );
    // Joining its stream: every event is a gap here (the journal has them),
    // and the outcome is said.
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
        ClientMessage::Gap { command, to, .. } if *command == commands[0] && *to == through.next())));
    assert!(w.inbox.iter().any(|(_, m)| matches!(m,
        ClientMessage::Joined { command, outcome: Outcome::Completed, .. } if *command == commands[0])));
    // The same fold from a snapshot gives the same projection, but for the
    // recent window, which the snapshot emptied: none of its events is in
    // the snapshot, and those commands' output is read when shown.
    let half = w.journal.len() / 2;
    let snapshot = Projection::rebuild(w.config.retention, &w.journal[..half])
        .unwrap()
        .snapshot();
    assert!(snapshot.projection.recently_settled.is_empty());
    assert!(snapshot
        .projection
        .commands
        .values()
        .all(|c| c.terminal.is_none() || c.events.is_empty()));
    let resumed = Projection::from_snapshot(snapshot, &w.journal).unwrap();
    assert_eq!(resumed, folded_through_snapshot(&w, half));
    // The window fills again with what settled after the snapshot.
    assert!(!resumed.recently_settled.is_empty());
    assert!(resumed
        .recently_settled
        .iter()
        .all(|c| p.recently_settled.contains(c)));
}

/// A command kept small still answers for itself: its key admits it again
/// only with the same binding, its runtime's resend of its terminal event
/// is told durable and a different one is a conflict, a cancel finds it
/// settled, and it is not re-issued.
#[test]
fn a_command_kept_small_still_answers_for_its_key_its_events_and_cancels() {
    let mut w = World::new();
    let window = w.config.retention.settled_with_events;
    let s = w.start_runtime(id(0x300a));
    open_session(&mut w, s);
    let commands = echo_turns(&mut w, s, 0x7500, window + 2);
    let c = commands[0];
    let small = w
        .c()
        .projection()
        .settled_command(c)
        .expect("kept small")
        .clone();
    let admitted = w
        .journal
        .iter()
        .find_map(|e| match &e.record {
            JournalRecord::CommandAdmitted(r) if r.command == c => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    // The same key and binding: the same command, not a second one.
    assert_eq!(
        w.admit(admitted.key, admitted.binding.clone()),
        Ok((c, true))
    );
    // The same key with another binding is refused; nothing new is admitted.
    let mut other = admitted.binding.clone();
    other.command_line = "echo something else".into();
    assert!(matches!(
        w.admit(admitted.key, other),
        Err(Rejection::IdReused { .. })
    ));
    // Its runtime sends its terminal event again: durable; something else
    // under the same number: a conflict; anything after it: refused.
    let terminal = events_of(&w, c).into_iter().last().unwrap();
    let RetainedBody::Terminal(result) = terminal.body.clone() else {
        panic!("the last event is the terminal one");
    };
    let now = w.now;
    let event = |seq: EventSeq, body: EventBody| RuntimeToController::Event {
        runtime: s.runtime,
        generation: s.generation,
        command: c,
        seq,
        body,
    };
    w.sent.clear();
    w.c()
        .handle_runtime(
            s.runtime,
            event(small.last_seq, EventBody::Terminal(result)),
            now,
        )
        .unwrap();
    w.settle();
    assert!(w.sent.iter().any(|(_, m)| matches!(m,
        ControllerToRuntime::EventsDurable { command, through, .. } if *command == c && *through == small.last_seq)));
    let other = EventBody::Stdout {
        data: "not what was recorded".into(),
    };
    assert_eq!(
        w.c()
            .handle_runtime(s.runtime, event(small.last_seq, other.clone()), now),
        Err(ControllerError::ConflictingDuplicate {
            command: c,
            seq: small.last_seq
        })
    );
    assert!(matches!(
        w.c()
            .handle_runtime(s.runtime, event(small.last_seq.next(), other), now),
        Err(ControllerError::Malformed { .. })
    ));
    w.settle();
    // A cancel finds it settled; a re-issue is refused.
    let (request, r) = w.request(|request| ClientRequest::Cancel {
        request,
        command: c,
        generation: s.generation,
    });
    r.unwrap();
    assert!(w.inbox.iter().any(|(_, m)| matches!(m,
        ClientMessage::CancelSettlement { request: q, settlement: Settlement::Settled { outcome: Outcome::Completed }, .. } if *q == request)));
    let (_, r) = w.request(|request| ClientRequest::Reissue {
        request,
        key: id(0x7fff),
        original: c,
        binding: admitted.binding.clone(),
    });
    assert!(matches!(r, Err(Rejection::NotReissuable { .. })), "{r:?}");
    // It is still kept small, and the conflict is on record naming it.
    let p = w.replayed();
    assert!(p.command(c).is_none() && p.settled_command(c).is_some());
    assert!(p.evidence.iter().any(
        |e| e.kind == RecoveryKind::StreamConflict && e.outcomes.iter().any(|o| o.command == c)
    ));
    assert_eq!(&p, w.c().projection());
}

/// `n` turns of one `echo` each, run to completion: turn `i` is
/// `first + i` and prints `out {i}`.
fn echo_turns(w: &mut World, s: Started, first: u128, n: usize) -> Vec<CommandId> {
    turns_printing(w, s, first, n, |i| vec![format!("out {i}\n")])
}

/// `n` turns of one command each, run to completion: turn `i` is
/// `first + i`, and its command prints `output(i)`, a write per line.
fn turns_printing(
    w: &mut World,
    s: Started,
    first: u128,
    n: usize,
    output: impl Fn(usize) -> Vec<String>,
) -> Vec<CommandId> {
    let mut commands = Vec::new();
    for i in 0..n {
        let turn: TurnId = id(first + i as u128);
        record_turn(w, turn, &format!("$ echo {i}"));
        let c = waiting_on(drive(w, s, turn));
        for line in output(i) {
            w.stdout(s.runtime, c, &line);
        }
        w.exit(s.runtime, c, 0);
        drive(w, s, turn);
        commands.push(c);
    }
    commands
}

/// Version 3 snapshots leave out the key index (rebuilt from the commands
/// on load) and the empty parts of output summaries; version 4 writes each
/// settled command as one text. Version 3 (settled commands as objects)
/// and version 2 (with the index and whole summaries too) still read to
/// the same projection; the rebuilt index names every command, whole and
/// kept small, by its key.
#[test]
fn a_snapshot_leaves_out_the_key_index_and_empty_summary_parts_and_version_2_still_reads() {
    let mut w = World::new();
    let window = w.config.retention.settled_with_events;
    let s = w.start_runtime(id(0x300e));
    open_session(&mut w, s);
    echo_turns(&mut w, s, 0x7900, window + 3);
    // One command still running: a snapshot holds it whole.
    let turn: TurnId = id(0x79ff);
    record_turn(&mut w, turn, "$ echo running");
    let running = waiting_on(drive(&mut w, s, turn));
    w.stdout(s.runtime, running, "partial\n");
    // As its snapshot holds it: the recent window emptied.
    let p = windowless(&w.replayed());
    assert!(!p.settled.is_empty() && p.commands.contains_key(&running));
    let text = String::from_utf8(lifeline_core::schema::encode(&p.snapshot()).unwrap()).unwrap();
    assert!(text.starts_with(r#"{"v":4,"#));
    for left_out in [
        "\"keys\"",
        "\"dropped_from\"",
        "\"dropped_bytes\"",
        "\"truncated_at\":null",
    ] {
        assert!(!text.contains(left_out), "{left_out}");
    }
    let read: ProjectionSnapshot = lifeline_core::schema::decode(text.as_bytes()).unwrap();
    assert_eq!(read.projection, p);
    assert_eq!(
        read.projection.keys.len(),
        p.commands.len() + p.settled.len()
    );
    // Settled commands one text each: one JSON value a command.
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let lines = value["projection"]["settled_lines"].as_array().unwrap();
    assert_eq!(lines.len(), p.settled.len());
    assert!(lines.iter().all(|l| l.is_string()));
    assert!(value["projection"].get("settled").is_none());
    // As version 3 wrote it: settled commands as a map of objects, under
    // the old name.
    let text = text.replacen(r#"{"v":4,"#, r#"{"v":3,"#, 1).replacen(
        &format!(
            r#""settled_lines":{}"#,
            serde_json::to_string(lines).unwrap()
        ),
        &format!(
            r#""settled":{}"#,
            serde_json::to_string(&p.settled).unwrap()
        ),
        1,
    );
    assert!(text.contains(r#""settled":{""#));
    let v3: ProjectionSnapshot = lifeline_core::schema::decode(text.as_bytes()).unwrap();
    assert_eq!(v3.projection, p);
    // As version 2 wrote it: the index, and every summary whole (the text
    // is edited, not re-encoded, so that tags stay first).
    let keys = serde_json::to_string(&p.keys).unwrap();
    let mut old = text.replacen(r#"{"v":3,"#, r#"{"v":2,"#, 1).replacen(
        r#""projection":{"#,
        &format!(r#""projection":{{"keys":{keys},"#),
        1,
    );
    let mut at = 0;
    while let Some(found) = old[at..].find(r#""inline_bytes":"#) {
        let digits = at + found + r#""inline_bytes":"#.len();
        let end = digits + old[digits..].find(|c: char| !c.is_ascii_digit()).unwrap();
        if old[end..].starts_with('}') {
            old.insert_str(
                end,
                r#","truncated_at":null,"artifacts":[],"dropped_bytes":0,"dropped_from":null"#,
            );
        }
        at = end;
    }
    assert!(old.contains(r#""dropped_from":null"#) && old.contains(r#""keys":{"#));
    let old: ProjectionSnapshot = lifeline_core::schema::decode(old.as_bytes()).unwrap();
    assert_eq!(old.projection, p);
}

/// A snapshot writes the identities it has seen 64 to a string (one each
/// made them most of its values); one to a string, as written before, still
/// reads, and a string that is not whole identities is refused.
#[test]
fn seen_identities_are_written_64_to_a_string_and_read_either_way() {
    let mut w = World::new();
    let s = w.start_runtime(id(0x300b));
    open_session(&mut w, s);
    echo_turns(&mut w, s, 0x7600, 20);
    let p = windowless(&w.replayed());
    let text = String::from_utf8(lifeline_core::schema::encode(&p.snapshot()).unwrap()).unwrap();
    let start = text.find("\"seen\":[").unwrap() + "\"seen\":".len();
    let end = start + text[start..].find(']').unwrap() + 1;
    let seen: Vec<String> = serde_json::from_str(&text[start..end]).unwrap();
    assert!(seen.len() >= 2, "{seen:?}");
    assert_eq!(seen[0].len(), 64 * 32);
    assert!(seen.iter().all(|t| t.len() % 32 == 0));
    let with = |array: &str| format!("{}{array}{}", &text[..start], &text[end..]);
    let one_each: Vec<&str> = seen
        .iter()
        .flat_map(|t| (0..t.len()).step_by(32).map(move |at| &t[at..at + 32]))
        .collect();
    let old = with(&serde_json::to_string(&one_each).unwrap());
    let old: ProjectionSnapshot = lifeline_core::schema::decode(old.as_bytes()).unwrap();
    assert_eq!(old.projection, p);
    for bad in [r#"["abc"]"#, r#"[""]"#] {
        assert!(lifeline_core::schema::decode::<ProjectionSnapshot>(with(bad).as_bytes()).is_err());
    }
}

/// The whole kept output of a settled command whose output is in the
/// journal (here one kept small): its inline head is read from its events
/// first, then the artifacts after it, and the download is every byte.
/// Events that cannot be read, or do not hold the whole head, give a
/// notice, not a download missing its head.
#[test]
fn a_download_of_output_in_the_journal_reads_its_head_from_the_events_first() {
    use lifeline_core::stored_output::StoredOutput;
    let mut w = World::new();
    let window = w.config.retention.settled_with_events;
    let s = w.start_runtime(id(0x300c));
    open_session(&mut w, s);
    let lines = ["line one\n", "line two\n", "line three\n"];
    let commands = turns_printing(&mut w, s, 0x7700, window + 1, |_| {
        lines.iter().map(|l| l.to_string()).collect()
    });
    let c = commands[0];
    let p = w.replayed();
    assert!(p.settled_command(c).is_some());
    // Past the inline budget (16 bytes here): some of it is in artifacts.
    assert!(!p.settled_command(c).unwrap().stdout.artifacts.is_empty());
    assert!(StoredOutput::of(&p, c).is_none());
    assert!(StoredOutput::head_in_journal(&p, c));
    let events = events_of(&w, c);
    let (mut e, saved) = download_through_engine(&w, &p, c, &events);
    assert_eq!(saved.bytes.as_deref(), Some(lines.concat().as_bytes()));
    // Unreadable, or short of the head: a notice, nothing saved.
    for answer in [Err(()), Ok(events[events.len() - 1..].to_vec())] {
        assert_download_refused(&mut e, c, answer);
    }
}

/// What a download through the engine came to.
struct Downloaded {
    /// The kept output the engine planned the artifact reads from.
    stored: Option<lifeline_core::stored_output::StoredOutput>,
    bytes: Option<Vec<u8>>,
    /// How many of the command's events it was given to read.
    read: usize,
}

/// Download output of `c` through a follower engine on `p`, whose reads
/// are answered from `w`: its events first (`events`), then its artifacts.
fn download_through_engine(
    w: &World,
    p: &Projection,
    c: CommandId,
    events: &[EventRecord],
) -> (lifeline_engine::Engine, Downloaded) {
    use lifeline_engine::{Effect, Engine, KeptRead};
    use lifeline_protocol::Role;
    let mut e = Engine::new(Role::Follower, b"kept");
    e.handle_start(Role::Follower);
    e.follow(p.clone());
    while e.poll_effect().is_some() {}
    e.handle_read_kept(c, KeptRead::Download);
    // The journal's answers, in chunks of the engine's size, until it asks
    // for no more.
    let mut out = effects_of(&mut e);
    let (mut asked, mut read) = (0, 0);
    while let [Effect::ReadKeptHead {
        command,
        read: KeptRead::Download,
        got,
    }] = out.as_slice()
    {
        assert_eq!(*command, c);
        asked += 1;
        let next = events
            .iter()
            .filter(|x| got.last().is_none_or(|g| x.seq > g.seq))
            .take(lifeline_engine::HEAD_READ_EVENTS)
            .cloned()
            .collect::<Vec<_>>();
        read += next.len();
        e.handle_kept_head_read(c, KeptRead::Download, got.clone(), Ok(next));
        out = effects_of(&mut e);
    }
    assert!(asked > 0, "the head is read from the journal");
    let Some(Effect::ReadArtifacts {
        stored,
        plan,
        digests,
        ..
    }) = out.pop()
    else {
        panic!("the artifacts are read next");
    };
    let artifacts: Vec<(Digest, Option<String>)> = digests
        .iter()
        .map(|d| (*d, w.artifacts.get(d).cloned()))
        .collect();
    e.handle_artifacts_read(c, KeptRead::Download, &stored, &plan, &artifacts);
    let bytes = effects_of(&mut e).into_iter().find_map(|x| match x {
        Effect::SaveOutput { bytes, .. } => Some(bytes),
        _ => None,
    });
    (
        e,
        Downloaded {
            stored: Some(*stored),
            bytes,
            read,
        },
    )
}

/// `answer` to a download's read of `c`'s events, the journal holding no
/// more after it, ends in a notice: nothing is read further or saved.
fn assert_download_refused(
    e: &mut lifeline_engine::Engine,
    c: CommandId,
    answer: Result<Vec<EventRecord>, ()>,
) {
    use lifeline_engine::{Effect, KeptRead};
    use lifeline_protocol::ControllerToPage;
    e.handle_kept_head_read(c, KeptRead::Download, Vec::new(), answer);
    let mut out = effects_of(e);
    if let [Effect::ReadKeptHead { got, .. }] = out.as_slice() {
        e.handle_kept_head_read(c, KeptRead::Download, got.clone(), Ok(Vec::new()));
        out = effects_of(e);
    }
    assert!(out
        .iter()
        .any(|x| matches!(x, Effect::Page(ControllerToPage::Notice { .. }))));
    assert!(!out
        .iter()
        .any(|x| matches!(x, Effect::ReadArtifacts { .. } | Effect::SaveOutput { .. })));
}

fn effects_of(e: &mut lifeline_engine::Engine) -> Vec<lifeline_engine::Effect> {
    std::iter::from_fn(|| e.poll_effect()).collect()
}

/// A world that keeps four events a command, and a command of turn
/// `turn` on runtime `runtime` still running after printing `lines`, a
/// write each.
fn running_and_printed(runtime: u128, turn: u128, lines: &[String]) -> (World, Started, CommandId) {
    let mut w = World::new();
    w.config.retention.retained_events = 4;
    w.controller = Some(Controller::new(w.config.clone(), w.now));
    let s = w.start_runtime(id(runtime));
    open_session(&mut w, s);
    let turn: TurnId = id(turn);
    record_turn(&mut w, turn, "$ echo running");
    let c = waiting_on(drive(&mut w, s, turn));
    for line in lines {
        w.stdout(s.runtime, c, line);
    }
    (w, s, c)
}

/// A running command whose first events retention let go (View full
/// output or Download output while it runs): its inline head is read from
/// the journal's events up to where retention let go, then from the events
/// the projection still holds, and the download is every byte. Events that
/// do not reach that far give a notice. If the command settled while they
/// were read, the projection's own head answers.
#[test]
fn a_running_commands_output_reads_the_head_retention_let_go_from_the_journal() {
    use lifeline_core::stored_output::StoredOutput;
    // Three bytes a write: the 16-byte inline head spans six events.
    let lines: Vec<String> = (0..10).map(|i| format!("l{i}\n")).collect();
    let (mut w, s, c) = running_and_printed(0x300d, 0x7800, &lines);
    let p = w.replayed();
    let view = p.command(c).unwrap();
    assert!(view.settled.is_none());
    assert!(view.evicted_through.0 > 3, "{:?}", view.evicted_through);
    assert!(!view.stdout.artifacts.is_empty());
    assert!(StoredOutput::of(&p, c).is_none());
    assert!(StoredOutput::head_in_journal(&p, c));
    let events = events_of(&w, c);
    let (mut e, saved) = download_through_engine(&w, &p, c, &events);
    assert_eq!(saved.bytes.as_deref(), Some(lines.concat().as_bytes()));
    // Events that stop short of where retention let go: a notice.
    let short: Vec<EventRecord> = events
        .iter()
        .filter(|ev| ev.seq.0 < view.evicted_through.0)
        .cloned()
        .collect();
    assert_download_refused(&mut e, c, Ok(short));
    // Settled while its events were read: the same output.
    w.exit(s.runtime, c, 0);
    let settled = w.replayed();
    assert!(settled.command(c).unwrap().terminal.is_some());
    assert!(StoredOutput::of(&settled, c).is_none());
    assert_eq!(StoredOutput::with_head(&settled, c, &events), saved.stored);
}

/// A command that has printed for long (here 3,000 events, about 150 s
/// of a real one's flushes): a read of its output takes the head from its
/// first events and stops there, instead of reading every event again for
/// each page of View full output.
#[test]
fn a_long_commands_head_is_read_from_its_first_events_only() {
    use lifeline_engine::HEAD_READ_EVENTS;
    let lines: Vec<String> = (0..3_000).map(|i| format!("{i}\n")).collect();
    let (w, _, c) = running_and_printed(0x300e, 0x7801, &lines);
    let p = w.replayed();
    let events = events_of(&w, c);
    assert!(events.len() > 10 * HEAD_READ_EVENTS);
    let (_, saved) = download_through_engine(&w, &p, c, &events);
    assert_eq!(saved.bytes.as_deref(), Some(lines.concat().as_bytes()));
    assert!(
        saved.read <= HEAD_READ_EVENTS,
        "{} of {} events read for a head in the first few",
        saved.read,
        events.len()
    );
}

fn events_of(w: &World, command: CommandId) -> Vec<EventRecord> {
    w.journal
        .iter()
        .filter_map(|e| match &e.record {
            JournalRecord::Event(ev) if ev.command == command => Some(ev.clone()),
            _ => None,
        })
        .collect()
}

/// Commands of a turn still open stay whole (its agent reads them to take
/// the next step) even out of the window, and are kept small when it ends.
/// A snapshot written before commands were kept small (whole views, and,
/// older still, the collapsed text inline without `in_journal`) still reads
/// and shows its text, and its settled commands are kept small on loading.
#[test]
fn a_turns_commands_are_kept_small_when_it_ends_and_old_snapshots_still_read() {
    use lifeline_core::view::{session_deltas, OutputRead, ViewDelta};
    let mut w = World::new();
    let window = w.config.retention.settled_with_events;
    let s = w.start_runtime(id(0x3009));
    open_session(&mut w, s);
    let turn: TurnId = id(0x7400);
    let n = window + 3;
    let prompt: Vec<String> = (0..n).map(|i| format!("$ echo {i}")).collect();
    record_turn(&mut w, turn, &prompt.join("\n"));
    let mut commands = Vec::new();
    for i in 0..n {
        let c = waiting_on(drive(&mut w, s, turn));
        w.stdout(s.runtime, c, &format!("out {i}\n"));
        w.exit(s.runtime, c, 0);
        commands.push(c);
    }
    // Every command ran; the turn is still open until the agent says so.
    let open = w.replayed();
    assert!(open.turns[&turn].end.is_none());
    let oldest = open
        .command(commands[0])
        .expect("whole while its turn is open");
    assert!(oldest.settled.as_ref().is_some_and(|s| s.in_journal));
    assert!(open.settled.is_empty());
    // Written the way an older build wrote it: the text inline, and the
    // recent window whole.
    let mut old = ProjectionSnapshot {
        v: lifeline_core::schema::SnapshotVersion::CURRENT,
        position: open.position,
        projection: open.clone(),
    };
    for (i, c) in commands.iter().enumerate() {
        let c = old.projection.commands.get_mut(c).unwrap();
        if let Some(s) = c.settled.as_mut() {
            s.in_journal = false;
            s.stdout = format!("out {i}\n");
        }
    }
    let bytes = lifeline_core::schema::encode(&old).unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains("in_journal"));
    // This build writes version 4, which a build that knows only 1 refuses
    // (and replays its journal) rather than read commands kept small as
    // missing; it reads version 1, and refuses a version it does not know.
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.starts_with(r#"{"v":4,"#));
    assert!(serde_json::from_str::<lifeline_core::V1>("4").is_err());
    let refused = text.replacen(r#"{"v":4,"#, r#"{"v":5,"#, 1);
    assert!(matches!(
        lifeline_core::schema::decode::<ProjectionSnapshot>(refused.as_bytes()),
        Err(lifeline_core::schema::SchemaError::UnsupportedVersion { found, .. }) if found == "5"
    ));
    let bytes = text.replacen(r#"{"v":4,"#, r#"{"v":1,"#, 1).into_bytes();
    let old: ProjectionSnapshot = lifeline_core::schema::decode(&bytes).unwrap();
    assert!(session_deltas(&old.projection, id(SESSION)).iter().any(|d| matches!(d,
        ViewDelta::Settled { command, stdout, read: OutputRead::Shown, .. } if *command == commands[0] && stdout == "out 0\n")));
    let position = old.position;
    // The turn ends: its settled commands out of the window are kept small,
    // in the live fold and in one resumed from the old snapshot alike.
    assert!(matches!(
        drive(&mut w, s, turn),
        Some(lifeline_core::agent::Step::Finish { .. })
    ));
    let ended = w.replayed();
    assert_eq!(ended.settled.len(), n - window);
    assert!(ended.command(commands[0]).is_none());
    let tail: Vec<JournalEntry> = w
        .journal
        .iter()
        .filter(|e| e.position > position)
        .cloned()
        .collect();
    let resumed = Projection::from_snapshot(old, &tail).unwrap();
    assert_eq!(resumed.settled, ended.settled);
    // A snapshot whose settled commands were whole once the turn had ended
    // is kept small on loading.
    let mut whole = ended.snapshot();
    let before = Projection::rebuild(w.config.retention, &w.journal[..position as usize]).unwrap();
    for c in &commands[..n - window] {
        whole.projection.settled.remove(c);
        whole
            .projection
            .commands
            .insert(*c, before.command(*c).unwrap().clone());
    }
    let loaded = Projection::from_snapshot(whole, &[]).unwrap();
    assert_eq!(loaded, windowless(&ended));
}

/// Engine-level: a transcript shown from scratch reads its collapsed
/// commands' output from the journal, at most `MAX_READS` at a time; an
/// answer for a view no longer shown is dropped, and every read settles.
#[test]
fn a_shown_transcript_reads_collapsed_output_four_at_a_time_and_drops_stale_answers() {
    use lifeline_core::view::{OutputRead, ViewDelta};
    use lifeline_engine::{Effect, Engine, MAX_READS};
    use lifeline_protocol::{ControllerToPage, Role};
    let mut w = World::new();
    let window = w.config.retention.settled_with_events;
    let s = w.start_runtime(id(0x3007));
    open_session(&mut w, s);
    let commands = echo_turns(&mut w, s, 0x7200, window + 6);
    let p = w.replayed();
    let events_of = |c: CommandId| -> Vec<EventRecord> {
        w.journal
            .iter()
            .filter_map(|e| match &e.record {
                JournalRecord::Event(ev) if ev.command == c => Some(ev.clone()),
                _ => None,
            })
            .collect()
    };
    // Effects out: the reads asked for and the Settled deltas shown.
    fn drain(e: &mut Engine, reads: &mut Vec<(u64, CommandId)>, shown: &mut Vec<ViewDelta>) {
        while let Some(effect) = e.poll_effect() {
            match effect {
                Effect::ReadOutput { view, command } => reads.push((view, command)),
                Effect::Page(ControllerToPage::View { deltas, .. }) => shown.extend(
                    deltas
                        .into_iter()
                        .filter(|d| matches!(d, ViewDelta::Settled { .. })),
                ),
                _ => {}
            }
        }
    }
    let mut e = Engine::new(Role::Follower, b"reads");
    e.handle_start(Role::Follower);
    e.follow(p.clone());
    let (mut reads, mut shown) = (Vec::new(), Vec::new());
    drain(&mut e, &mut reads, &mut shown);
    let loading = shown
        .iter()
        .filter(|d| {
            matches!(
                d,
                ViewDelta::Settled {
                    read: OutputRead::Loading,
                    ..
                }
            )
        })
        .count();
    assert_eq!(loading, 6, "the six collapsed commands are shown loading");
    assert_eq!(reads.len(), MAX_READS, "at most {MAX_READS} reads at once");
    assert_eq!(e.output_reads(), (MAX_READS, 6 - MAX_READS));
    // The page shows the transcript again (a new view): the answer to the
    // old view's first read is dropped, its slot goes to the new view.
    e.follow(p.clone());
    let (old_view, first) = reads.remove(0);
    shown.clear();
    drain(&mut e, &mut reads, &mut shown);
    e.handle_output_read(old_view, first, Ok(events_of(first)));
    drain(&mut e, &mut reads, &mut shown);
    assert!(
        !shown.iter().any(|d| matches!(
            d,
            ViewDelta::Settled {
                read: OutputRead::Shown,
                ..
            }
        )),
        "a stale answer is not shown"
    );
    // Answer everything; the new view's reads are shown, one unreadable.
    let mut unreadable = 0;
    while let Some((view, command)) = (!reads.is_empty()).then(|| reads.remove(0)) {
        if command == commands[1] && view != old_view && unreadable == 0 {
            unreadable += 1;
            e.handle_output_read(view, command, Err(()));
        } else {
            e.handle_output_read(view, command, Ok(events_of(command)));
        }
        drain(&mut e, &mut reads, &mut shown);
        assert!(e.output_reads().0 <= MAX_READS);
    }
    assert_eq!(e.output_reads(), (0, 0), "every read settled");
    for (n, c) in commands.iter().take(6).enumerate() {
        let last = shown
            .iter()
            .rev()
            .find(|d| matches!(d, ViewDelta::Settled { command, .. } if command == c))
            .expect("each collapsed command got an answer");
        if n == 1 {
            assert!(matches!(
                last,
                ViewDelta::Settled {
                    read: OutputRead::Unreadable,
                    ..
                }
            ));
        } else {
            assert!(
                matches!(last, ViewDelta::Settled { stdout, read: OutputRead::Shown, .. } if *stdout == format!("out {n}\n")),
                "{last:?}"
            );
        }
    }
}

/// The snapshot grows by a small constant per settled command, not by its
/// output: what each part of a collapsed command costs, encoded.
#[test]
fn a_snapshot_grows_by_a_small_constant_per_settled_command() {
    let mut w = World::new();
    let window = w.config.retention.settled_with_events;
    let s = w.start_runtime(id(0x3008));
    open_session(&mut w, s);
    let size = |w: &World| {
        lifeline_core::schema::encode(&w.replayed().snapshot())
            .unwrap()
            .len()
    };
    let mut commands = Vec::new();
    let mut before = 0;
    let n = window + 40;
    for i in 0..n {
        if i == window {
            before = size(&w);
        }
        let turn: TurnId = id(0x7300 + i as u128);
        record_turn(&mut w, turn, &format!("$ seq {i} 100"));
        let c = waiting_on(drive(&mut w, s, turn));
        for line in 0..20 {
            w.stdout(
                s.runtime,
                c,
                &format!("{i:05}:{line:03} the quick brown fox jumps over the lazy dog\n"),
            );
        }
        w.exit(s.runtime, c, 0);
        drive(&mut w, s, turn);
        commands.push(c);
    }
    let per_command = (size(&w) - before) / (n - window);
    let p = w.replayed();
    let c = p.settled_command(commands[0]).unwrap();
    let part = |v: &dyn erased::Encode| v.len();
    let parts = [
        ("stdout summary", part(&c.stdout)),
        ("kept small", part(c)),
        ("turn", part(&p.turns.values().next().unwrap())),
    ];
    println!("snapshot bytes per settled command (with its turn): {per_command}; parts of one: {parts:?}");
    // 20 lines of output (1.3 KB) are not in it, nor its binding, outcome
    // history or terminal event (this world's inline budget is small, so
    // each line is also an artifact placement in the summary: that part
    // still grows with a command's output).
    let without_summary = part(c) - part(&c.stdout);
    assert!(without_summary < 700, "{parts:?}");
    assert!(
        per_command < 10_000,
        "{per_command} bytes per command: {parts:?}"
    );
}

mod erased {
    /// The encoded length of any serializable value.
    pub trait Encode {
        fn len(&self) -> usize;
    }
    impl<T: serde::Serialize> Encode for T {
        fn len(&self) -> usize {
            serde_json::to_string(self).map_or(0, |s| s.len())
        }
    }
}

// ----- model-backed turns ----------------------------------------------------

use lifeline_core::ending::TurnEnding;
use lifeline_core::model::{next_model_step, tool_key};
use lifeline_core::profile::{AgentBudget, ProfileRef, Tool};

fn model_agent(budget: AgentBudget) -> TurnAgent {
    TurnAgent::Model {
        profile: ProfileRef {
            id: id(0xf00d),
            revision: 3,
        },
        provider: "OpenAI-compatible".into(),
        model: "test-model".into(),
        budget,
        tools: Tool::ALL.into_iter().collect(),
    }
}

fn record_model_turn(w: &mut World, turn: TurnId, prompt: &str, budget: AgentBudget) {
    let (_, r) = w.request(|request| ClientRequest::RecordTurn {
        request,
        session: id(SESSION),
        turn,
        prompt: prompt.into(),
        plan: Vec::new(),
        agent: model_agent(budget),
    });
    r.expect("model turn recorded");
}

/// What the controller shell does for a model turn: derive the next step,
/// admit tools and finish turns itself; hand back requests and waits.
fn drive_model(
    w: &mut World,
    s: Started,
    turn: TurnId,
    live: Option<ProviderRequestId>,
) -> Option<ModelStep> {
    loop {
        let projection = w.c().projection().clone();
        let step = next_model_step(&projection, turn, live, w.now)?;
        match step {
            ModelStep::AdmitTool { key, ref line, .. } => {
                let binding = w.binding(s, line);
                w.admit(key, binding).expect("tool admitted");
            }
            ModelStep::Finish {
                status,
                ref reply,
                ref ending,
            } => {
                let (reply, ending) = (reply.clone(), ending.clone());
                let (_, r) = w.request(|request| ClientRequest::FinishTurn {
                    request,
                    turn,
                    status,
                    reply,
                    ending,
                });
                r.expect("turn finishes");
                return Some(step);
            }
            ModelStep::Request { .. } | ModelStep::Wait => return Some(step),
        }
    }
}

fn send_request(w: &mut World, pr: ProviderRequestId, turn: TurnId, step: u32) {
    let (request, r) = w.request(|request| ClientRequest::RecordProviderRequest {
        request,
        provider_request: pr,
        turn,
        step,
    });
    r.expect("provider request recorded");
    // The shell sends only after this answer, which comes once it is durable.
    assert!(w.inbox.iter().any(|(_, m)| matches!(m,
        ClientMessage::ProviderRequestRecorded { request: q, existing: false, .. } if *q == request)));
    assert!(w.journal.iter().any(
        |e| matches!(e.record, JournalRecord::ProviderRequested { request, .. } if request == pr)
    ));
}

fn tool_call(id_: &str, name: &str, args: serde_json::Value) -> ToolCallRecord {
    ToolCallRecord {
        id: id_.into(),
        name: name.into(),
        arguments: args.to_string(),
    }
}

fn reply(
    w: &mut World,
    pr: ProviderRequestId,
    text: &str,
    tool_calls: Vec<ToolCallRecord>,
    tokens: (u64, u64),
) -> Result<(), Rejection> {
    w.request(|request| ClientRequest::RecordProviderReply {
        request,
        provider_request: pr,
        text: text.into(),
        tool_calls,
        stop: "tool_calls".into(),
        input_tokens: tokens.0,
        output_tokens: tokens.1,
    })
    .1
}

fn fail(
    w: &mut World,
    pr: ProviderRequestId,
    class: ProviderFailureClass,
    message: &str,
    partial: &str,
) -> Result<(), Rejection> {
    w.request(|request| ClientRequest::RecordProviderFailure {
        request,
        provider_request: pr,
        class,
        message: message.into(),
        partial_text: partial.into(),
        reason: None,
    })
    .1
}

fn provider_requests_in_journal(w: &World) -> usize {
    w.journal
        .iter()
        .filter(|e| matches!(e.record, JournalRecord::ProviderRequested { .. }))
        .count()
}

/// The history of a command proven not dispatched (never exposed, or
/// refused) that was then dispatched, as a new attempt, and ran to the end.
const NOT_DISPATCHED_THEN_RAN: [Outcome; 5] = [
    Outcome::Admitted,
    Outcome::NotDispatched,
    Outcome::Dispatched,
    Outcome::Running,
    Outcome::Completed,
];

fn command_with_key(w: &mut World, key: IdempotencyKey) -> CommandId {
    *w.c().projection().keys.get(&key).expect("command admitted")
}

fn model_world(n: u128) -> (World, Started) {
    let mut w = World::new();
    let s = w.start_runtime(id(0x3100 + n));
    open_session(&mut w, s);
    (w, s)
}

/// A model session's collapsed tool commands keep their output in the
/// projection: every later provider request carries it, and the turn
/// driver cannot wait for the journal.
#[test]
fn a_model_sessions_tool_results_survive_leaving_the_recent_window() {
    let (mut w, s) = model_world(9);
    let window = w.config.retention.settled_with_events;
    let turn: TurnId = id(0x7209);
    record_model_turn(&mut w, turn, "count", AgentBudget::default());
    assert!(matches!(
        drive_model(&mut w, s, turn, None),
        Some(ModelStep::Request { step: 1, .. })
    ));
    let pr1: ProviderRequestId = id(0xa091);
    send_request(&mut w, pr1, turn, 1);
    let n = window + 3;
    let calls: Vec<ToolCallRecord> = (0..n)
        .map(|i| {
            tool_call(
                &format!("call_{i}"),
                "run_command",
                serde_json::json!({ "command": format!("echo out-{i}") }),
            )
        })
        .collect();
    reply(&mut w, pr1, "Counting.", calls, (10, 5)).unwrap();
    for i in 0..n {
        drive_model(&mut w, s, turn, None);
        let command = command_with_key(&mut w, tool_key(turn, pr1, i));
        w.stdout(s.runtime, command, &format!("out-{i}\n"));
        w.exit(s.runtime, command, 0);
    }
    let first = command_with_key(&mut w, tool_key(turn, pr1, 0));
    let p = w.replayed();
    let settled = p
        .command(first)
        .unwrap()
        .settled
        .as_ref()
        .expect("collapsed");
    assert!(!settled.in_journal && settled.stdout == "out-0\n");
    let Some(ModelStep::Request { conversation, .. }) = drive_model(&mut w, s, turn, None) else {
        panic!("after the tools settle the model is asked again");
    };
    assert!(
        matches!(&conversation[2], ModelMessage::ToolResult { content, .. } if content.starts_with("out-0\n")),
        "{:?}",
        conversation[2]
    );
}

/// A model turn `turn` whose first request `request` asked for one tool
/// command, admitted and waited on: that command.
fn running_tool_command(
    w: &mut World,
    s: Started,
    turn: TurnId,
    request: ProviderRequestId,
) -> CommandId {
    record_model_turn(w, turn, "list", AgentBudget::default());
    drive_model(w, s, turn, None);
    send_request(w, request, turn, 1);
    let call = tool_call(
        "c1",
        "run_command",
        serde_json::json!({ "command": "echo x" }),
    );
    reply(w, request, "", vec![call], (1, 1)).unwrap();
    assert_eq!(drive_model(w, s, turn, None), Some(ModelStep::Wait));
    command_with_key(w, tool_key(turn, request, 0))
}

/// Stop in a model turn that waits on none of its own commands (its model
/// asked for a tool not admitted yet, as after its runtime crashed) while
/// an earlier command of the session still runs: the turn ends now, and
/// that command is cancelled beside it. Cancelling only the other command
/// left the turn open to ask its model again later (found by the engine
/// simulation, seed 125465 of 160,000).
#[test]
fn stop_ends_a_model_turn_that_waits_on_no_command_of_its_own() {
    use lifeline_core::ending::TurnEnding;
    use lifeline_core::stop::{plan, StopPlan};
    let (mut w, s) = model_world(12);
    let other = w.admit(id(0xf4), w.binding(s, "sleep 5")).unwrap().0;
    let turn: TurnId = id(0x720c);
    record_model_turn(&mut w, turn, "list", AgentBudget::default());
    drive_model(&mut w, s, turn, None);
    let request: ProviderRequestId = id(0xa0c2);
    send_request(&mut w, request, turn, 1);
    let call = tool_call(
        "c1",
        "run_command",
        serde_json::json!({ "command": "echo x" }),
    );
    reply(&mut w, request, "", vec![call], (1, 1)).unwrap();
    // Not driven: the tool is still to be admitted.
    let p = w.c().pending_projection().clone();
    assert!(p.keys.get(&tool_key(turn, request, 0)).is_none());
    assert_eq!(
        plan(&p, id(SESSION), None, w.now),
        StopPlan::FinishTurn {
            turn,
            ending: TurnEnding::StoppedBetweenSteps,
            cancel: vec![(other, s.generation)],
        }
    );
}

/// A tool command whose first events retention let go while it ran: the
/// model is told how many of its bytes come before what it is shown, not
/// given the middle of the output as if it were the start; the transcript,
/// once the command left the recent window, reads its whole head from the
/// journal instead of showing the text kept for the model as all of it.
#[test]
fn a_tool_result_says_how_much_output_came_before_what_retention_kept() {
    use lifeline_core::view::{output_read, session_deltas, OutputRead, ViewDelta};
    let mut w = World::new();
    w.config.retention.retained_events = 4;
    // Out of the recent window as soon as it settles.
    w.config.retention.settled_with_events = 0;
    w.controller = Some(Controller::new(w.config.clone(), w.now));
    let s = w.start_runtime(id(0x3120));
    open_session(&mut w, s);
    let turn: TurnId = id(0x7220);
    let command = running_tool_command(&mut w, s, turn, id(0xa0c1));
    // Ten writes of two bytes; the first 16 are the inline head.
    for line in "abcdefghij".chars() {
        w.stdout(s.runtime, command, &format!("{line}\n"));
    }
    w.exit(s.runtime, command, 0);
    let p = w.replayed();
    let c = p.command(command).unwrap();
    assert_eq!(c.stdout.inline_bytes, 16);
    assert!(c.evicted_through.0 > 0);
    let Some(ModelStep::Request { conversation, .. }) = drive_model(&mut w, s, turn, None) else {
        panic!("after the tool settles the model is asked again");
    };
    let Some(ModelMessage::ToolResult { content, .. }) = conversation.last() else {
        panic!("{conversation:?}");
    };
    // Kept: the last four writes, of which "g\nh\n" is inline.
    assert_eq!(
        content,
        "[12 earlier bytes not shown]\ng\nh\n[output truncated: 4 more bytes not shown]\n[completed, exit status 0]"
    );
    let p = w.replayed();
    let c = p.command(command).unwrap();
    assert_eq!(c.settled.as_ref().unwrap().stdout, "g\nh\n");
    assert!(c.kept_text().is_none());
    let deltas = session_deltas(&p, id(SESSION));
    assert!(
        deltas.iter().any(|d| matches!(d,
        ViewDelta::Settled { command: shown, read: OutputRead::Loading, .. } if shown == &command))
    );
    let read = output_read(&p, command, Ok(&events_of(&w, command)));
    assert!(
        matches!(&read, Some(ViewDelta::Settled { stdout, read: OutputRead::Shown, .. }) if stdout == "a\nb\nc\nd\ne\nf\ng\nh\n"),
        "{read:?}"
    );
}

/// Stop raced a tool command's end: the model is not asked again (found
/// by the engine simulation, seed 23427 of 40,000).
#[test]
fn a_tool_command_that_finishes_after_stop_ends_the_model_turn() {
    let (mut w, s) = model_world(10);
    let turn: TurnId = id(0x720a);
    let command = running_tool_command(&mut w, s, turn, id(0xa0a1));
    finish_before_the_cancel_arrives(&mut w, s, command);
    assert_eq!(
        drive_model(&mut w, s, turn, None),
        Some(ModelStep::Finish {
            status: TurnStatus::Cancelled,
            reply: TurnEnding::StoppedBetweenSteps.to_string(),
            ending: Some(TurnEnding::StoppedBetweenSteps),
        })
    );
    assert_eq!(
        provider_requests_in_journal(&w),
        1,
        "the model was not asked again"
    );
}

/// Stop during a model turn cancels every command of the session still on
/// its way, not the first one found: here the turn's tool command and
/// another (a turn left open when its execution failed admits its own).
/// Found by the engine simulation (seed 390639 of 400,000): Stop cancelled
/// the other command, and the turn's own ran on, and so did the turn.
#[test]
fn stop_in_a_model_turn_cancels_every_command_of_the_session_on_its_way() {
    use lifeline_core::stop::{plan, StopPlan};
    let (mut w, s) = model_world(11);
    let other = w.admit(id(0xf3), w.binding(s, "sleep 5")).unwrap().0;
    let turn: TurnId = id(0x720b);
    let tool = running_tool_command(&mut w, s, turn, id(0xa0b1));
    let p = w.c().pending_projection().clone();
    let StopPlan::Cancel(mut cancelled) = plan(&p, id(SESSION), None, w.now) else {
        panic!("Stop cancels the commands on their way");
    };
    cancelled.sort();
    let mut both = vec![(other, s.generation), (tool, s.generation)];
    both.sort();
    assert_eq!(cancelled, both);
}

#[test]
fn model_tool_call_is_admitted_once_under_its_derived_key_and_its_result_goes_back() {
    let (mut w, s) = model_world(1);
    let turn: TurnId = id(0x7201);
    record_model_turn(
        &mut w,
        turn,
        "write hello to notes.txt",
        AgentBudget::default(),
    );
    let Some(ModelStep::Request {
        step: 1,
        conversation,
    }) = drive_model(&mut w, s, turn, None)
    else {
        panic!("first step is a request");
    };
    assert_eq!(
        conversation,
        vec![ModelMessage::User {
            text: "write hello to notes.txt".into()
        }]
    );
    let pr1: ProviderRequestId = id(0xa001);
    send_request(&mut w, pr1, turn, 1);
    assert_eq!(
        drive_model(&mut w, s, turn, Some(pr1)),
        Some(ModelStep::Wait)
    );
    let calls = vec![
        tool_call(
            "call_a",
            "write_file",
            serde_json::json!({"path": "notes.txt", "content": "hello"}),
        ),
        tool_call("call_b", "format_disk", serde_json::json!({})),
    ];
    reply(&mut w, pr1, "I'll write it.", calls.clone(), (10, 5)).unwrap();
    assert_eq!(drive_model(&mut w, s, turn, None), Some(ModelStep::Wait));
    let command = command_with_key(&mut w, tool_key(turn, pr1, 0));
    assert_eq!(
        w.c()
            .projection()
            .command(command)
            .unwrap()
            .binding
            .command_line,
        "echo -n 'hello' > 'notes.txt'"
    );
    assert_eq!(w.starts_of(command), 1);
    w.exit(s.runtime, command, 0);
    let Some(ModelStep::Request {
        step: 2,
        conversation,
    }) = drive_model(&mut w, s, turn, None)
    else {
        panic!("after the tools settle the model is asked again");
    };
    assert_eq!(conversation.len(), 4, "{conversation:?}");
    assert_eq!(
        conversation[1],
        ModelMessage::Assistant {
            text: "I'll write it.".into(),
            tool_calls: calls
        }
    );
    match &conversation[2] {
        ModelMessage::ToolResult {
            call_id,
            content,
            is_error: false,
            ..
        } => {
            assert_eq!(call_id, "call_a");
            assert!(content.contains("[completed, exit status 0]"), "{content}");
        }
        other => panic!("{other:?}"),
    }
    match &conversation[3] {
        ModelMessage::ToolResult {
            call_id,
            content,
            is_error: true,
            ..
        } => {
            assert_eq!(call_id, "call_b");
            assert!(content.contains("unknown tool `format_disk`"), "{content}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        w.replayed().commands.len(),
        1,
        "the unknown tool ran nothing"
    );
    let pr2: ProviderRequestId = id(0xa002);
    send_request(&mut w, pr2, turn, 2);
    reply(
        &mut w,
        pr2,
        "Done: notes.txt says hello.",
        Vec::new(),
        (30, 8),
    )
    .unwrap();
    assert_eq!(
        drive_model(&mut w, s, turn, None),
        Some(ModelStep::Finish {
            status: TurnStatus::Completed,
            reply: "Done: notes.txt says hello.".into(),
            ending: None,
        })
    );
    assert_eq!(w.starts_of(command), 1);
    // A later turn's conversation carries the whole session.
    let next: TurnId = id(0x7202);
    record_model_turn(&mut w, next, "thanks", AgentBudget::default());
    let Some(ModelStep::Request {
        step: 1,
        conversation,
    }) = drive_model(&mut w, s, next, None)
    else {
        panic!("a request");
    };
    assert_eq!(conversation.len(), 6, "{conversation:?}");
    assert_eq!(
        conversation.last(),
        Some(&ModelMessage::User {
            text: "thanks".into()
        })
    );
}

#[test]
fn controller_restart_mid_model_turn_rederives_the_same_step_and_admits_nothing_twice() {
    let (mut w, s) = model_world(2);
    let turn: TurnId = id(0x7203);
    record_model_turn(&mut w, turn, "count", AgentBudget::default());
    let pr1: ProviderRequestId = id(0xa011);
    send_request(&mut w, pr1, turn, 1);
    let calls = vec![
        tool_call("c1", "run_command", serde_json::json!({"command": "seq 3"})),
        tool_call("c2", "list_files", serde_json::json!({})),
    ];
    reply(&mut w, pr1, "", calls, (1, 1)).unwrap();
    // The controller dies after the reply is durable, before any admission.
    w.crash_controller();
    w.restart_controller(StartCause::ControllerRestart);
    assert_eq!(drive_model(&mut w, s, turn, None), Some(ModelStep::Wait));
    let seq = command_with_key(&mut w, tool_key(turn, pr1, 0));
    w.stdout(s.runtime, seq, "1\n2\n");
    // And again while the first tool runs.
    w.crash_controller();
    w.restart_controller(StartCause::ControllerRestart);
    let projection = w.c().projection().clone();
    assert_eq!(
        next_model_step(&projection, turn, None, w.now),
        Some(ModelStep::Wait),
        "waits on the same command"
    );
    assert_eq!(w.replayed().commands.len(), 1);
    let binding = w.binding(s, "seq 3");
    assert_eq!(
        w.admit(tool_key(turn, pr1, 0), binding),
        Ok((seq, true)),
        "the derived key finds the command"
    );
    w.stdout(s.runtime, seq, "3\n");
    w.exit(s.runtime, seq, 0);
    assert_eq!(drive_model(&mut w, s, turn, None), Some(ModelStep::Wait));
    let ls = command_with_key(&mut w, tool_key(turn, pr1, 1));
    w.exit(s.runtime, ls, 0);
    let before = drive_model(&mut w, s, turn, None);
    w.crash_controller();
    w.restart_controller(StartCause::ControllerRestart);
    let after = drive_model(&mut w, s, turn, None);
    assert_eq!(before, after, "the same request is derived after a restart");
    let Some(ModelStep::Request {
        step: 2,
        conversation,
    }) = after
    else {
        panic!("{after:?}");
    };
    assert!(matches!(&conversation[2],
        ModelMessage::ToolResult { content, is_error: false, .. } if content.starts_with("1\n2\n3\n")));
    assert_eq!(w.starts_of(seq), 1);
    assert_eq!(w.starts_of(ls), 1);
    assert_eq!(w.replayed().commands.len(), 2);
}

#[test]
fn a_request_without_outcome_after_a_reload_interrupts_the_turn_and_is_never_resent() {
    use lifeline_core::view::{session_deltas, ProviderRequestStatus, ViewDelta};
    let (mut w, s) = model_world(3);
    let turn: TurnId = id(0x7204);
    record_model_turn(&mut w, turn, "hello?", AgentBudget::default());
    let pr1: ProviderRequestId = id(0xa021);
    send_request(&mut w, pr1, turn, 1);
    // A second request is refused while the first has no outcome.
    let (_, r) = w.request(|request| ClientRequest::RecordProviderRequest {
        request,
        provider_request: id(0xa022),
        turn,
        step: 2,
    });
    assert!(
        matches!(r, Err(Rejection::ProviderStepRefused { step: 2, .. })),
        "{r:?}"
    );
    w.lose_host();
    let s2 = w.start_runtime(s.workspace);
    assert_eq!(
        drive_model(&mut w, s2, turn, None),
        Some(ModelStep::Finish {
            status: TurnStatus::Interrupted,
            reply: TurnEnding::ReplyLost.to_string(),
            ending: Some(TurnEnding::ReplyLost),
        })
    );
    assert_eq!(provider_requests_in_journal(&w), 1, "nothing was resent");
    assert_eq!(next_model_step(&w.replayed(), turn, None, w.now), None);
    let (_, r) = w.request(|request| ClientRequest::RecordProviderRequest {
        request,
        provider_request: id(0xa023),
        turn,
        step: 1,
    });
    assert_eq!(r, Err(Rejection::TurnEnded { turn }));
    // A reply that turns up late is refused: the turn has ended.
    assert_eq!(
        reply(&mut w, pr1, "late", Vec::new(), (1, 1)),
        Err(Rejection::TurnEnded { turn })
    );
    assert!(session_deltas(&w.replayed(), id(SESSION)).iter().any(|d| matches!(d,
        ViewDelta::ProviderRequest { request, status: ProviderRequestStatus::Uncertain, .. } if *request == pr1)));
}

#[test]
fn a_cut_stream_keeps_the_partial_text_and_other_failures_give_advice() {
    let cases = [
        (ProviderFailureClass::Cut, TurnStatus::Interrupted, true),
        (
            ProviderFailureClass::Malformed,
            TurnStatus::Interrupted,
            true,
        ),
        (ProviderFailureClass::Cancelled, TurnStatus::Cancelled, true),
        (ProviderFailureClass::Auth, TurnStatus::Failed, false),
        (ProviderFailureClass::RateLimit, TurnStatus::Failed, false),
    ];
    for (n, (class, status, keeps_partial)) in cases.into_iter().enumerate() {
        let (mut w, s) = model_world(10 + n as u128);
        let turn: TurnId = id(0x7300 + n as u128);
        record_model_turn(&mut w, turn, "tell me", AgentBudget::default());
        let pr: ProviderRequestId = id(0xa100 + n as u128);
        send_request(&mut w, pr, turn, 1);
        fail(&mut w, pr, class, "stream ended", "Half an ans").unwrap();
        let Some(ModelStep::Finish {
            status: got,
            reply,
            ending,
        }) = drive_model(&mut w, s, turn, Some(pr))
        else {
            panic!("{class:?} finishes the turn");
        };
        assert_eq!(got, status, "{class:?}");
        // The page words the ending in the reader's language; the English
        // reply is for the export and the model's next conversation.
        assert_eq!(ending, Some(TurnEnding::ProviderFailed { class }));
        assert_eq!(reply.starts_with("Half an ans"), keeps_partial, "{reply}");
        assert!(reply.contains("stream ended"), "{reply}");
        assert!(reply.contains(class.advice()), "{reply}");
        assert_eq!(provider_requests_in_journal(&w), 1);
        // The failure is durable with a minted error stamp.
        assert!(w.journal.iter().any(|e| matches!(&e.record,
            JournalRecord::ProviderFailed { request, partial_text, .. } if *request == pr && partial_text == "Half an ans")));
    }
}

#[test]
fn each_model_budget_stops_the_turn_and_names_itself() {
    let base = AgentBudget::default();
    let write = |i: u32| {
        tool_call(
            &format!("c{i}"),
            "run_command",
            serde_json::json!({"command": format!("echo {i}")}),
        )
    };
    // Steps: one request allowed; its tool round cannot be followed by another.
    let (mut w, s) = model_world(20);
    let turn: TurnId = id(0x7401);
    record_model_turn(
        &mut w,
        turn,
        "go",
        AgentBudget {
            max_steps: 1,
            ..base
        },
    );
    let pr: ProviderRequestId = id(0xa201);
    send_request(&mut w, pr, turn, 1);
    reply(&mut w, pr, "", vec![write(1)], (1, 1)).unwrap();
    let step = drive_model(&mut w, s, turn, None);
    assert!(
        matches!(&step, Some(ModelStep::Finish { status: TurnStatus::Failed, reply, ending: Some(e) })
        if *e == TurnEnding::StepBudget { max: 1 } && reply.contains("budget")),
        "{step:?}"
    );
    assert_eq!(w.replayed().commands.len(), 0);

    // Commands: the second tool call of a reply is over the budget.
    let (mut w, s) = model_world(21);
    let turn: TurnId = id(0x7402);
    record_model_turn(
        &mut w,
        turn,
        "go",
        AgentBudget {
            max_commands: 1,
            ..base
        },
    );
    let pr: ProviderRequestId = id(0xa202);
    send_request(&mut w, pr, turn, 1);
    reply(&mut w, pr, "", vec![write(1), write(2)], (1, 1)).unwrap();
    assert_eq!(drive_model(&mut w, s, turn, None), Some(ModelStep::Wait));
    let first = command_with_key(&mut w, tool_key(turn, pr, 0));
    w.exit(s.runtime, first, 0);
    let step = drive_model(&mut w, s, turn, None);
    assert!(
        matches!(&step, Some(ModelStep::Finish { status: TurnStatus::Failed, reply, ending: Some(e) })
        if *e == TurnEnding::CommandBudget { max: 1 } && reply.contains("budget")),
        "{step:?}"
    );
    assert_eq!(w.replayed().commands.len(), 1);

    // Tokens: the reply's tokens spend the budget before its tool runs.
    let (mut w, s) = model_world(22);
    let turn: TurnId = id(0x7403);
    record_model_turn(
        &mut w,
        turn,
        "go",
        AgentBudget {
            max_tokens: 100,
            ..base
        },
    );
    let pr: ProviderRequestId = id(0xa203);
    send_request(&mut w, pr, turn, 1);
    reply(&mut w, pr, "", vec![write(1)], (60, 40)).unwrap();
    let step = drive_model(&mut w, s, turn, None);
    assert!(
        matches!(
            &step,
            Some(ModelStep::Finish {
                status: TurnStatus::Failed,
                ending: Some(TurnEnding::TokenBudget { max: 100, .. }),
                ..
            })
        ),
        "{step:?}"
    );

    // Wall time: checked before the next request.
    let (mut w, s) = model_world(23);
    let turn: TurnId = id(0x7404);
    record_model_turn(
        &mut w,
        turn,
        "go",
        AgentBudget {
            max_wall_ms: 5_000,
            ..base
        },
    );
    assert!(matches!(
        drive_model(&mut w, s, turn, None),
        Some(ModelStep::Request { .. })
    ));
    w.now = w.now.plus(5_000);
    let step = drive_model(&mut w, s, turn, None);
    assert!(
        matches!(&step, Some(ModelStep::Finish { status: TurnStatus::Failed, reply, ending: Some(e) })
        if *e == TurnEnding::TimeBudget { seconds: 5 } && reply.contains("budget")),
        "{step:?}"
    );
    assert_eq!(provider_requests_in_journal(&w), 0);
}

#[test]
fn the_same_turn_id_with_a_different_agent_or_content_is_refused() {
    let (mut w, _) = model_world(30);
    let turn: TurnId = id(0x7501);
    record_model_turn(&mut w, turn, "hi", AgentBudget::default());
    record_model_turn(&mut w, turn, "hi", AgentBudget::default());
    let other_budget = AgentBudget {
        max_steps: 2,
        ..AgentBudget::default()
    };
    for (prompt, agent) in [
        ("hi", TurnAgent::BuiltIn),
        ("hi", model_agent(other_budget)),
        ("hello", model_agent(AgentBudget::default())),
    ] {
        let (_, r) = w.request(|request| ClientRequest::RecordTurn {
            request,
            session: id(SESSION),
            turn,
            prompt: prompt.into(),
            plan: Vec::new(),
            agent,
        });
        assert_eq!(r, Err(Rejection::TurnConflict { turn }));
    }
    // A model turn with a plan is refused outright.
    let (_, r) = w.request(|request| ClientRequest::RecordTurn {
        request,
        session: id(SESSION),
        turn: id(0x7502),
        prompt: "$ ls".into(),
        plan: vec!["ls".into()],
        agent: model_agent(AgentBudget::default()),
    });
    assert!(matches!(r, Err(Rejection::InvalidBinding { .. })), "{r:?}");
    // Provider requests belong to model turns only.
    let built_in: TurnId = id(0x7503);
    record_turn(&mut w, built_in, "$ ls");
    let (_, r) = w.request(|request| ClientRequest::RecordProviderRequest {
        request,
        provider_request: id(0xa301),
        turn: built_in,
        step: 1,
    });
    assert_eq!(r, Err(Rejection::NotModelTurn { turn: built_in }));
    assert_eq!(w.replayed().turns.len(), 2);
    // Old journals: a turn recorded without an agent is the built-in agent's.
    let old = r#"{"type":"turn_recorded","session":"000000000000000000000005N5","turn":"0000000000000000000000005Z","prompt":"$ ls","plan":["ls"]}"#;
    let record: JournalRecord = serde_json::from_str(old).unwrap();
    assert!(matches!(
        record,
        JournalRecord::TurnRecorded {
            agent: TurnAgent::BuiltIn,
            ..
        }
    ));
}

#[test]
fn a_provider_outcome_is_recorded_once_identical_repeats_accepted_different_refused() {
    let (mut w, _) = model_world(40);
    let turn: TurnId = id(0x7601);
    record_model_turn(&mut w, turn, "hi", AgentBudget::default());
    let pr: ProviderRequestId = id(0xa401);
    send_request(&mut w, pr, turn, 1);
    // Repeating the request record is harmless; the same id for another step is not.
    let (_, r) = w.request(|request| ClientRequest::RecordProviderRequest {
        request,
        provider_request: pr,
        turn,
        step: 1,
    });
    r.unwrap();
    assert!(w.inbox.iter().any(|(_, m)| matches!(
        m,
        ClientMessage::ProviderRequestRecorded { existing: true, .. }
    )));
    let (_, r) = w.request(|request| ClientRequest::RecordProviderRequest {
        request,
        provider_request: pr,
        turn,
        step: 2,
    });
    assert!(matches!(r, Err(Rejection::IdReused { .. })), "{r:?}");
    let calls = vec![tool_call("c", "list_files", serde_json::json!({}))];
    reply(&mut w, pr, "a", calls.clone(), (1, 2)).unwrap();
    reply(&mut w, pr, "a", calls.clone(), (1, 2)).expect("identical repeat accepted");
    assert_eq!(
        reply(&mut w, pr, "b", calls.clone(), (1, 2)),
        Err(Rejection::ProviderOutcomeConflict {
            provider_request: pr
        })
    );
    assert_eq!(
        fail(&mut w, pr, ProviderFailureClass::Cut, "x", ""),
        Err(Rejection::ProviderOutcomeConflict {
            provider_request: pr
        })
    );
    let replies = w
        .journal
        .iter()
        .filter(|e| matches!(e.record, JournalRecord::ProviderReplied { .. }))
        .count();
    assert_eq!(replies, 1);
    // A failure repeated identically is accepted too (its stamp is not compared).
    let turn2: TurnId = id(0x7602);
    record_model_turn(&mut w, turn2, "again", AgentBudget::default());
    let pr2: ProviderRequestId = id(0xa402);
    send_request(&mut w, pr2, turn2, 1);
    fail(&mut w, pr2, ProviderFailureClass::Server, "503", "").unwrap();
    fail(&mut w, pr2, ProviderFailureClass::Server, "503", "").expect("identical repeat");
    assert_eq!(
        fail(&mut w, pr2, ProviderFailureClass::Server, "500", ""),
        Err(Rejection::ProviderOutcomeConflict {
            provider_request: pr2
        })
    );
    assert_eq!(
        reply(&mut w, id(0xa4ff), "x", Vec::new(), (0, 0)),
        Err(Rejection::UnknownProviderRequest {
            provider_request: id(0xa4ff)
        })
    );
}

#[test]
fn provider_records_over_the_limits_are_refused_on_write_and_on_read() {
    use lifeline_core::schema::limits;
    let (mut w, _) = model_world(50);
    let turn: TurnId = id(0x7701);
    record_model_turn(&mut w, turn, "hi", AgentBudget::default());
    let pr: ProviderRequestId = id(0xa501);
    send_request(&mut w, pr, turn, 1);
    let call = |args: String| ToolCallRecord {
        id: "c".into(),
        name: "run_command".into(),
        arguments: args,
    };
    let too_long_text = "x".repeat(limits::MAX_REPLY_TEXT_BYTES + 1);
    let too_many = vec![call("{}".into()); limits::MAX_TOOL_CALLS + 1];
    let too_big_args = vec![call("x".repeat(limits::MAX_TOOL_ARGUMENTS_BYTES + 1))];
    for (text, calls) in [
        (too_long_text.as_str(), Vec::new()),
        ("", too_many),
        ("", too_big_args),
    ] {
        let r = reply(&mut w, pr, text, calls, (0, 0));
        assert!(matches!(r, Err(Rejection::InvalidBinding { .. })), "{r:?}");
    }
    let long_message = "m".repeat(limits::MAX_PROVIDER_MESSAGE_BYTES + 1);
    let r = fail(&mut w, pr, ProviderFailureClass::Server, &long_message, "");
    assert!(matches!(r, Err(Rejection::InvalidBinding { .. })), "{r:?}");
    assert!(w.c().projection().provider_requests[&pr].outcome.is_none());
    // A stored record over the limit is refused when read back.
    let entry = JournalEntry {
        v: V1,
        position: 1,
        at: Millis(1),
        record: JournalRecord::ProviderFailed {
            request: pr,
            class: ProviderFailureClass::Server,
            message: long_message,
            partial_text: String::new(),
            stamp: id(0xbad),
            reason: None,
        },
    };
    let bytes = serde_json::to_vec(&entry).unwrap();
    assert!(matches!(
        decode::<JournalEntry>(&bytes),
        Err(SchemaError::Invalid { .. })
    ));
    assert!(encode(&entry).is_err());
}

/// Folds deltas into the latest state of each thing they name, with output
/// appended: what a tab shows after applying them in order.
fn shown(deltas: &[lifeline_core::view::ViewDelta]) -> BTreeMap<String, String> {
    use lifeline_core::view::ViewDelta;
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for d in deltas {
        let key = match d {
            ViewDelta::Session { session, .. } => format!("session {session}"),
            ViewDelta::Turn { turn, .. } => format!("turn {turn}"),
            ViewDelta::Command { command, .. } => format!("command {command}"),
            ViewDelta::ProviderRequest { request, .. } => format!("request {request}"),
            ViewDelta::Output { command, text, .. }
            | ViewDelta::Settled {
                command,
                stdout: text,
                ..
            } => {
                let k = format!("output {command}");
                if matches!(d, ViewDelta::Settled { .. }) {
                    out.insert(k, text.clone());
                } else {
                    out.entry(k).or_default().push_str(text);
                }
                continue;
            }
            ViewDelta::Gap { command, .. } => format!("gap {command}"),
        };
        out.insert(key, format!("{d:?}"));
    }
    out
}

#[test]
fn model_turn_deltas_from_batches_add_up_to_the_session_view() {
    use lifeline_core::view::{batch_deltas, session_deltas, ProviderRequestStatus, ViewDelta};
    let (mut w, s) = model_world(60);
    let turn: TurnId = id(0x7801);
    record_model_turn(&mut w, turn, "look around", AgentBudget::default());
    let pr1: ProviderRequestId = id(0xa601);
    send_request(&mut w, pr1, turn, 1);
    reply(
        &mut w,
        pr1,
        "Listing.",
        vec![tool_call("c", "list_files", serde_json::json!({}))],
        (1, 1),
    )
    .unwrap();
    drive_model(&mut w, s, turn, None);
    let ls = command_with_key(&mut w, tool_key(turn, pr1, 0));
    w.stdout(s.runtime, ls, "a.txt\n");
    w.exit(s.runtime, ls, 0);
    let pr2: ProviderRequestId = id(0xa602);
    send_request(&mut w, pr2, turn, 2);
    fail(
        &mut w,
        pr2,
        ProviderFailureClass::RateLimit,
        "429 slow down",
        "",
    )
    .unwrap();
    drive_model(&mut w, s, turn, None);
    // A second turn left uncertain by a reload.
    let turn2: TurnId = id(0x7802);
    record_model_turn(&mut w, turn2, "again", AgentBudget::default());
    let pr3: ProviderRequestId = id(0xa603);
    send_request(&mut w, pr3, turn2, 1);
    w.lose_host();
    drive_model(&mut w, s, turn2, None);
    let p = w.replayed();
    let full = session_deltas(&p, id(SESSION));
    // Batch by batch, each read against the projection after that batch.
    let mut streamed = Vec::new();
    for n in 1..=w.journal.len() {
        let at = Projection::rebuild(w.config.retention, &w.journal[..n]).unwrap();
        streamed.extend(batch_deltas(&at, &w.journal[n - 1..n]));
    }
    assert_eq!(shown(&streamed), shown(&full));
    let status = |r: ProviderRequestId| {
        full.iter().find_map(|d| match d {
            ViewDelta::ProviderRequest {
                request,
                status,
                failure,
                text,
                ..
            } if *request == r => Some((*status, failure.clone(), text.clone())),
            _ => None,
        })
    };
    assert_eq!(status(pr1).unwrap().0, ProviderRequestStatus::Replied);
    assert_eq!(status(pr1).unwrap().2.as_deref(), Some("Listing."));
    let (st, failure, _) = status(pr2).unwrap();
    assert_eq!(st, ProviderRequestStatus::Failed);
    let failure = failure.unwrap();
    assert_eq!(failure.class, ProviderFailureClass::RateLimit);
    // The provider's own words, shown as they were recorded.
    assert_eq!(
        failure.message,
        lifeline_core::phrase::Phrase::Recorded {
            text: "429 slow down".into()
        }
    );
    assert_eq!(status(pr3).unwrap().0, ProviderRequestStatus::Uncertain);
    assert!(full.iter().any(|d| matches!(d,
        ViewDelta::Command { turn: Some(t), outcome: Outcome::Completed, .. } if *t == turn)));
    assert!(full.iter().any(|d| matches!(d,
        ViewDelta::Turn { turn: t, status: Some(TurnStatus::Failed), reply: Some(r), .. } if *t == turn && r.contains("429 slow down"))));
}

/// Reference 003 criteria 2 and 3 where the session layer meets the journal:
/// lifecycle records are answered only once durable, survive a controller
/// restart (the session comes back bound but detached), and a stop names
/// the captured generation so it can never reach a replacement.
#[test]
fn session_records_survive_a_controller_restart_and_stops_are_fenced_by_generation() {
    use lifeline_core::session::{Environment, SessionState, Sessions};
    use lifeline_core::session_record::SessionRecord;
    let mut w = World::new();
    let s1 = w.start_runtime(id(0xB5));
    open_session(&mut w, s1);
    let created = SessionRecord::Created {
        session: id(SESSION),
        workspace: s1.workspace,
        environment: Environment::Worker,
        profile: id(0x9f),
    };
    let started = SessionRecord::ExecutionStarted {
        session: id(SESSION),
        execution: w
            .c()
            .projection()
            .runtime(s1.runtime)
            .map(|(_, r)| r.execution)
            .expect("assigned"),
        generation: s1.generation,
        runtime: s1.runtime,
        attempt: id(0xa1),
        profile: None,
        resumed_from: None,
        note: None,
        environment: Some(Environment::Worker),
    };
    // Held persist: no answer before the record is durable.
    w.hold_persist = true;
    for record in [created, started] {
        w.next_request += 1;
        let request = RequestId(w.next_request);
        let now = w.now;
        w.c()
            .handle_client(
                CLIENT,
                ClientRequest::RecordSession { request, record },
                now,
            )
            .expect("accepted");
        w.settle();
        let answered = |w: &World| {
            w.inbox.iter().any(
                |(_, m)| matches!(m, ClientMessage::SessionRecorded { request: q } if *q == request),
            )
        };
        assert!(!answered(&w), "answered before durable");
        let batch = w.unwritten.take().expect("a batch in flight");
        w.write(batch);
        w.settle();
        assert!(answered(&w));
    }
    w.hold_persist = false;
    // A record for a session the journal does not hold is refused.
    let (_, r) = w.request(|request| ClientRequest::RecordSession {
        request,
        record: SessionRecord::Archived {
            session: id(0xdead),
        },
    });
    assert!(matches!(r, Err(Rejection::UnknownSession { .. })));

    w.crash_controller();
    w.restart_controller(StartCause::ControllerRestart);
    let lifecycle = w.c().projection().lifecycles[&id(SESSION)].clone();
    assert_eq!(lifecycle.len(), 2);
    let sessions = Sessions::recover(b"t", &lifecycle);
    assert_eq!(sessions.state(id(SESSION)), Some(&SessionState::Detached));
    assert_eq!(
        sessions.binding(id(SESSION)).map(|b| b.runtime),
        Some(s1.runtime)
    );

    // A replacement generation; then stops naming the old one.
    let s2 = w.start_runtime(id(0xB5));
    assert_ne!(s2.runtime, s1.runtime);
    let (_, r) = w.request(|request| ClientRequest::StopRuntime {
        request,
        runtime: s2.runtime,
        generation: s1.generation,
    });
    assert!(
        matches!(r, Err(Rejection::RuntimeNotCurrent { .. })),
        "{r:?}"
    );
    w.terminations.clear();
    let (_, r) = w.request(|request| ClientRequest::StopRuntime {
        request,
        runtime: s1.runtime,
        generation: s1.generation,
    });
    r.expect("the old generation may be stopped");
    assert!(w.terminations.iter().all(|(rt, _)| *rt != s2.runtime));
    assert!(
        w.c().is_attached(s2.runtime),
        "the replacement keeps running"
    );
}

/// Reference 001, lost launch acknowledgements: a generation the journal
/// assigned but no session binding names is found before any relaunch, and
/// is no longer a candidate once it is bound or replaced.
#[test]
fn a_launch_whose_acknowledgement_was_lost_is_found_before_any_relaunch() {
    use lifeline_core::session::unacknowledged_launch;
    let mut w = World::new();
    let ws: WorkspaceId = id(0xB6);
    assert_eq!(unacknowledged_launch(w.c().projection(), ws, None), None);
    let s1 = w.start_runtime(ws);
    // The controller dies before the launch was acknowledged to the session
    // layer; the new one finds the recorded launch.
    w.crash_controller();
    w.restart_controller(StartCause::ControllerRestart);
    let found = unacknowledged_launch(w.c().projection(), ws, None).expect("found");
    assert_eq!((found.0, found.1), (s1.runtime, s1.generation));
    // Bound to a session, it is that session's runtime, not a lost launch.
    assert_eq!(
        unacknowledged_launch(w.c().projection(), ws, Some(s1.runtime)),
        None
    );
    // Replaced, the old one is not current any more; the new one is.
    let s2 = w.start_runtime(ws);
    let found = unacknowledged_launch(w.c().projection(), ws, Some(s1.runtime)).expect("found");
    assert_eq!(found.0, s2.runtime);
}

impl World {
    /// The (muted) runtime's link is lost and then the runtime dies: its
    /// unacknowledged commands are left uncertain, and a new generation
    /// runs on the same workspace.
    fn replace_lost_runtime(&mut self, rt: Started) -> Started {
        let now = self.now;
        self.c().handle_transport_lost(rt.runtime, now).unwrap();
        self.settle();
        self.runtimes.remove(&rt.runtime);
        self.cut(rt.runtime);
        self.c()
            .handle_runtime_crashed(rt.runtime, rt.generation, now)
            .unwrap();
        self.settle();
        self.start_runtime(rt.workspace)
    }

    fn reissue(
        &mut self,
        key: IdempotencyKey,
        original: CommandId,
        binding: Binding,
    ) -> Result<(CommandId, bool), Rejection> {
        let (request, r) = self.request(|request| ClientRequest::Reissue {
            request,
            key,
            original,
            binding,
        });
        r?;
        Ok(self.admitted(request))
    }
}

/// A re-issue is one admission record that carries its link: no crash can
/// leave an unlinked command that could be re-issued again, and the core
/// refuses every re-issue the user did not deliberately ask for.
#[test]
fn a_reissue_is_one_linked_admission_and_runs_only_an_uncertain_command_once() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xA3));
    let (settled, _) = w.admit(id(0xD1), w.binding(rt, "true")).unwrap();
    w.exit(rt.runtime, settled, 0);
    assert_eq!(w.outcome(settled), Outcome::Completed);
    w.mute.insert(rt.runtime);
    let (command, _) = w.admit(id(0xD0), w.binding(rt, "touch once")).unwrap();
    let fresh = w.replace_lost_runtime(rt);
    assert_eq!(w.outcome(command), Outcome::MayHaveStarted);

    // Refused: a command that is not uncertain, another command line.
    let not_uncertain = w.reissue(id(0xD2), settled, w.binding(fresh, "true"));
    assert!(
        matches!(not_uncertain, Err(Rejection::NotReissuable { .. })),
        "{not_uncertain:?}"
    );
    let other_line = w.reissue(id(0xD3), command, w.binding(fresh, "rm -r /"));
    assert!(
        matches!(other_line, Err(Rejection::NotReissuable { .. })),
        "{other_line:?}"
    );

    let before = w.journal.len();
    let (replacement, existing) = w
        .reissue(id(0xD4), command, w.binding(fresh, "touch once"))
        .unwrap();
    assert!(!existing);
    // The admission itself names the original, in one record.
    let admitted: Vec<&CommandRecord> = w.journal[before..]
        .iter()
        .filter_map(|e| match &e.record {
            JournalRecord::CommandAdmitted(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(admitted.len(), 1);
    assert_eq!(admitted[0].command, replacement);
    assert_eq!(admitted[0].reissue_of, Some(command));
    let p = w.replayed();
    assert_eq!(p.command(command).unwrap().reissued_as, Some(replacement));
    assert_eq!(p.command(replacement).unwrap().reissue_of, Some(command));
    assert_eq!(w.starts_of(replacement), 1);

    // The same request again (a client retrying) is the same command.
    let again = w
        .reissue(id(0xD4), command, w.binding(fresh, "touch once"))
        .unwrap();
    assert_eq!(again, (replacement, true));
    // A second, different re-issue of the same command is refused: the
    // user's one deliberate repeat happened.
    let twice = w.reissue(id(0xD5), command, w.binding(fresh, "touch once"));
    assert!(
        matches!(twice, Err(Rejection::NotReissuable { .. })),
        "{twice:?}"
    );
    // The key of a plain admission cannot pass for a re-issue.
    let reused = w.reissue(id(0xD1), command, w.binding(fresh, "touch once"));
    assert!(
        matches!(reused, Err(Rejection::IdReused { .. })),
        "{reused:?}"
    );

    // After a controller restart the link is folded from the journal.
    w.crash_controller();
    w.restart_controller(StartCause::ControllerRestart);
    let p = w.replayed();
    assert_eq!(p.command(command).unwrap().reissued_as, Some(replacement));
    assert_eq!(w.outcome(command), Outcome::MayHaveStarted);
    assert_eq!(w.starts_of(command), 1, "the original never ran again");
}

/// A journal that links one command to two re-issues is not believed.
#[test]
fn a_second_reissue_link_in_the_journal_is_refused_on_replay() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xA4));
    w.mute.insert(rt.runtime);
    let (command, _) = w.admit(id(0xE0), w.binding(rt, "touch twice")).unwrap();
    let now = w.now;
    w.c().handle_transport_lost(rt.runtime, now).unwrap();
    w.settle();
    let mut p = w.replayed();
    let admitted = |n: u128, key: u128| JournalEntry {
        v: V1,
        position: p.position + n as u64,
        at: Millis(1),
        record: JournalRecord::CommandAdmitted(CommandRecord {
            v: V1,
            command: id(0xE100 + n),
            key: id(key),
            binding: w.binding(rt, "touch twice"),
            admitted_at: Millis(1),
            reissue_of: Some(command),
        }),
    };
    let (first, second) = (admitted(1, 0xE1), admitted(2, 0xE2));
    p.apply(&first).expect("the first link is believed");
    let err = p.apply(&second).unwrap_err().to_string();
    assert!(err.contains("already re-issued"), "{err}");
}

/// Stop decides from the projection and what is live: the waiting command
/// by identity and generation, once; a turn between steps ends saying what
/// did not run; a request in flight is aborted; with no turn, the user's
/// running re-issue is cancelled.
#[test]
fn stop_plans_what_is_in_flight_and_never_asks_twice() {
    use lifeline_core::stop::{plan, StopPlan};
    let mut w = World::new();
    let s = w.start_runtime(id(0x3101));
    open_session(&mut w, s);
    let session: SessionId = id(SESSION);
    let now = w.now;
    assert_eq!(
        plan(w.c().projection(), session, None, now),
        StopPlan::Nothing
    );

    let turn: TurnId = id(0x7101);
    record_turn(&mut w, turn, "$ sleep 9\n$ echo a\n$ echo b");
    // Between recording and the first admission: nothing runs yet.
    let p = w.c().pending_projection().clone();
    assert_eq!(
        plan(&p, session, None, now),
        StopPlan::FinishTurn {
            turn,
            ending: TurnEnding::StoppedBefore {
                line: "sleep 9".into(),
                left: 3
            },
            cancel: Vec::new(),
        }
    );
    let live: ProviderRequestId = id(0x9101);
    assert_eq!(
        plan(&p, session, Some(live), now),
        StopPlan::AbortRequest(live)
    );

    let waiting = waiting_on(drive(&mut w, s, turn));
    let p = w.c().pending_projection().clone();
    assert_eq!(
        plan(&p, session, None, now),
        StopPlan::Cancel(vec![(waiting, s.generation)])
    );
    w.cancel(waiting, s.generation).expect("cancel accepted");
    let p = w.c().pending_projection().clone();
    assert_eq!(
        plan(&p, session, None, now),
        StopPlan::Nothing,
        "a cancel already asked for is not asked again"
    );
}

#[test]
fn stop_cancels_a_running_reissue_outside_any_turn() {
    use lifeline_core::stop::{plan, StopPlan};
    let mut w = World::new();
    let rt = w.start_runtime(id(0xA5));
    w.mute.insert(rt.runtime);
    let (command, _) = w.admit(id(0xF0), w.binding(rt, "sleep 5")).unwrap();
    let fresh = w.replace_lost_runtime(rt);
    let (replacement, _) = w
        .reissue(id(0xF1), command, w.binding(fresh, "sleep 5"))
        .unwrap();
    let (session, now): (SessionId, _) = (id(SESSION), w.now);
    let p = w.c().pending_projection().clone();
    assert!(lifeline_core::agent::busy(&p, session));
    assert_eq!(
        plan(&p, session, None, now),
        StopPlan::Cancel(vec![(replacement, fresh.generation)]),
        "only the re-issue, never the uncertain original"
    );
    w.cancel(replacement, fresh.generation).unwrap();
    w.settle();
    let p = w.c().pending_projection().clone();
    assert_eq!(plan(&p, session, None, now), StopPlan::Nothing);
}

/// A re-issue stands outside any turn; a tab that rebuilds its view (a
/// reload, a follower joining) shows it, linked both ways, as the batches did.
#[test]
fn a_reissue_is_in_the_rebuilt_view_linked_both_ways() {
    use lifeline_core::view::{batch_deltas, session_deltas, ViewDelta};
    let mut w = World::new();
    let rt = w.start_runtime(id(0xA6));
    open_session(&mut w, rt);
    w.mute.insert(rt.runtime);
    let turn: TurnId = id(0x7006);
    record_turn(&mut w, turn, "$ touch x");
    let command = waiting_on(drive(&mut w, rt, turn));
    let fresh = w.replace_lost_runtime(rt);
    let (replacement, _) = w
        .reissue(id(0xF3), command, w.binding(fresh, "touch x"))
        .unwrap();
    w.exit(fresh.runtime, replacement, 0);
    let p = w.replayed();
    let links = |ds: &[ViewDelta]| -> Vec<(CommandId, Option<CommandId>, Option<CommandId>)> {
        let mut last = BTreeMap::new();
        for d in ds {
            if let ViewDelta::Command {
                command,
                reissue_of,
                reissued_as,
                ..
            } = d
            {
                last.insert(*command, (*command, *reissue_of, *reissued_as));
            }
        }
        last.into_values().collect()
    };
    let full = links(&session_deltas(&p, id(SESSION)));
    assert_eq!(links(&batch_deltas(&p, &w.journal)), full);
    assert!(
        full.contains(&(command, None, Some(replacement))),
        "{full:?}"
    );
    assert!(
        full.contains(&(replacement, Some(command), None)),
        "{full:?}"
    );
}

// ----- Checkpoint failure and cleanup failure, asserted outcome by outcome ----

impl World {
    /// The shell's transaction for the batch being written aborts (quota,
    /// version change): nothing of it reaches the journal.
    fn fail_write(&mut self, reason: &str) -> PersistBatch {
        let batch = self.unwritten.take().expect("a batch being written");
        let now = self.now;
        self.c()
            .handle_persist_failed(batch.batch, reason, now)
            .expect("the in-flight batch");
        self.settle();
        batch
    }

    /// Every outcome any client was told for `command`, in order.
    fn told(&self, command: CommandId) -> Vec<Outcome> {
        self.inbox
            .iter()
            .filter_map(|(_, m)| match m {
                ClientMessage::Outcome {
                    command: c,
                    outcome,
                    ..
                } if *c == command => Some(*outcome),
                _ => None,
            })
            .collect()
    }

    fn armed(&self, timer: TimerId) -> Vec<Millis> {
        self.timers
            .iter()
            .filter(|(t, _)| *t == timer)
            .map(|(_, at)| *at)
            .collect()
    }
}

#[test]
fn a_failed_checkpoint_shows_nothing_and_is_retried_unchanged_until_written() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xF1));
    w.hold_persist = true;
    let key: IdempotencyKey = id(0xF00D);
    let now = w.now;
    let binding = w.binding(rt, "echo once");
    w.c()
        .handle_client(
            CLIENT,
            ClientRequest::Admit {
                request: RequestId(500),
                key,
                binding,
            },
            now,
        )
        .unwrap();
    w.settle();
    let journal_before = w.journal.clone();
    let first = w.fail_write("QuotaExceededError");
    let command = first
        .entries
        .iter()
        .find_map(|e| match &e.record {
            JournalRecord::CommandAdmitted(r) => Some(r.command),
            _ => None,
        })
        .expect("the failed batch held the admission");
    assert_eq!(w.journal, journal_before, "nothing of it is durable");
    assert!(
        !w.inbox.iter().any(|(_, m)| matches!(m,
            ClientMessage::Admitted { request, .. } if *request == RequestId(500))),
        "the client is not told of an admission that is not durable"
    );
    assert!(w.told(command).is_empty());
    assert_eq!(w.dispatches_of(command), 0);
    assert_eq!(w.starts_of(command), 0);

    // Each retry writes exactly the batch that failed; after
    // `persist_failures_before_degraded` failures new admissions are refused.
    let degraded_after = w.config.persist_failures_before_degraded;
    for failure in 2..=degraded_after {
        w.fire(TimerId::PersistRetry { batch: first.batch });
        assert_eq!(w.unwritten.as_ref(), Some(&first), "retried unchanged");
        w.fail_write("QuotaExceededError");
        assert_eq!(w.journal, journal_before, "failure {failure}");
    }
    assert!(w.c().degraded().is_some());
    let now = w.now;
    let binding = w.binding(rt, "echo refused");
    let refused = w.c().handle_client(
        CLIENT,
        ClientRequest::Admit {
            request: RequestId(501),
            key: id(0xF00E),
            binding,
        },
        now,
    );
    assert!(
        matches!(refused, Err(Rejection::JournalUnavailable { .. })),
        "{refused:?}"
    );
    w.settle();

    w.fire(TimerId::PersistRetry { batch: first.batch });
    assert_eq!(w.unwritten.as_ref(), Some(&first));
    w.hold_persist = false;
    w.settle();
    assert!(w.c().degraded().is_none());
    assert!(w.inbox.iter().any(|(_, m)| matches!(m,
        ClientMessage::Admitted { request, command: c, existing: false, .. }
            if *request == RequestId(500) && *c == command)));
    // One piece of evidence for the whole episode, recorded once the journal
    // took writes again; the command was not durable when it failed, so it
    // lists no outcome.
    let evidence = w.evidence(RecoveryKind::CheckpointFailure);
    assert_eq!(evidence.len(), 1);
    assert!(evidence[0].outcomes.is_empty());
    assert!(evidence[0].observed.contains("QuotaExceededError"));
    assert!(evidence[0].observed.contains("nothing in it is durable"));

    assert_eq!(w.dispatches_of(command), 1);
    assert_eq!(w.starts_of(command), 1);
    w.stdout(rt.runtime, command, "once\n");
    w.exit(rt.runtime, command, 0);
    assert_eq!(
        w.history(command),
        vec![
            Outcome::Admitted,
            Outcome::Dispatched,
            Outcome::Running,
            Outcome::Completed
        ]
    );
    assert_eq!(w.told(command), w.history(command));
    assert_eq!(w.exposures_in_journal(command), 1);
    assert_eq!(stdout_text(&w, &w.events_in_journal(command)), "once\n");
    assert_eq!(w.replayed(), *w.c().projection());
}

#[test]
fn a_failed_terminal_checkpoint_keeps_the_outcome_unshown_and_survives_a_crash_without_replay() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xF2));
    let (command, _) = w.admit(id(0xF01D), w.binding(rt, "echo end")).unwrap();
    w.stdout(rt.runtime, command, "end\n");
    assert_eq!(w.outcome(command), Outcome::Running);
    w.hold_persist = true;
    w.exit(rt.runtime, command, 0);
    let failed = w.fail_write("AbortError: version change");
    assert!(
        failed.entries.iter().any(|e| matches!(&e.record,
        JournalRecord::OutcomeChanged { command: c, to: Outcome::Completed, .. } if *c == command))
    );
    assert_eq!(
        w.outcome(command),
        Outcome::Running,
        "durable outcome unchanged"
    );
    assert!(!w.told(command).contains(&Outcome::Completed));
    assert!(
        w.runtimes[&rt.runtime].unacknowledged(command) >= 1,
        "the runtime keeps the terminal event: it was never confirmed durable"
    );
    let evidence = w.evidence(RecoveryKind::CheckpointFailure);
    assert!(
        evidence.is_empty(),
        "the evidence waits for the journal too"
    );

    // The controller dies before the retry; its replacement learns the end
    // from the runtime again, without running anything again.
    w.crash_controller();
    w.hold_persist = false;
    w.restart_controller(StartCause::ControllerRestart);
    assert_eq!(w.outcome(command), Outcome::Completed);
    assert_eq!(
        w.history(command),
        vec![
            Outcome::Admitted,
            Outcome::Dispatched,
            Outcome::Running,
            Outcome::Completed
        ]
    );
    assert_eq!(w.starts_of(command), 1);
    assert_eq!(w.dispatches_of(command), 1);
    assert_eq!(w.exposures_in_journal(command), 1);
    assert_eq!(stdout_text(&w, &w.events_in_journal(command)), "end\n");
    let terminals = w
        .events_in_journal(command)
        .iter()
        .filter(|e| matches!(e.body, RetainedBody::Terminal(_)))
        .count();
    assert_eq!(terminals, 1);
    assert!(w.evidence(RecoveryKind::CheckpointFailure).is_empty());
}

#[test]
fn cleanup_failure_claims_nothing_and_the_living_old_runtime_still_settles_its_command() {
    let mut w = World::new();
    let old = w.start_runtime(id(0xF3));
    let (command, _) = w.admit(id(0xF02D), w.binding(old, "sleep 5")).unwrap();
    assert_eq!(w.outcome(command), Outcome::Running);
    let new = w.start_runtime(old.workspace);
    assert_eq!(new.generation, Generation(2));
    assert_eq!(w.terminations, vec![(old.runtime, old.generation)]);

    let max = w.config.max_terminate_attempts;
    let retry = TimerId::TerminateRetry {
        runtime: old.runtime,
        generation: old.generation,
    };
    for attempt in 1..=max + 2 {
        let now = w.now;
        w.c()
            .handle_cleanup_failed(old.runtime, old.generation, "terminate() threw", now)
            .unwrap();
        w.settle();
        assert_eq!(w.outcome(command), Outcome::Running, "attempt {attempt}");
        assert!(
            !w.armed(retry).is_empty(),
            "retried after attempt {attempt}"
        );
        w.fire(retry);
        assert_eq!(w.terminations.len() as u32, attempt + 1);
    }
    let evidence = w.evidence(RecoveryKind::CleanupFailure);
    assert_eq!(evidence.len() as u32, max, "journaled up to the limit only");
    for e in &evidence {
        assert_eq!(
            e.outcomes,
            vec![Resolution {
                command,
                attempt: e.outcomes[0].attempt,
                before: Outcome::Running,
                after: Outcome::Running,
            }],
            "a failed cleanup claims nothing about the command"
        );
    }

    // The old worker is alive after all: its own evidence settles the command.
    w.exit(old.runtime, command, 0);
    assert_eq!(w.outcome(command), Outcome::Completed);
    let now = w.now;
    w.c()
        .handle_runtime_terminated(old.runtime, old.generation, now)
        .unwrap();
    w.settle();
    assert_eq!(
        w.history(command),
        vec![
            Outcome::Admitted,
            Outcome::Dispatched,
            Outcome::Running,
            Outcome::Completed
        ]
    );
    assert_eq!(w.starts_of(command), 1);
    assert_eq!(w.dispatches_of(command), 1);
    assert!(
        !w.sent.iter().any(|(r, m)| *r == new.runtime
            && matches!(m, ControllerToRuntime::Dispatch { order, .. } if order.command == command)),
        "never handed to the replacement"
    );
    assert!(w.journal.iter().any(|e| matches!(&e.record,
        JournalRecord::RuntimeGone { runtime, .. } if *runtime == old.runtime)));
}

#[test]
fn a_dead_runtime_whose_termination_keeps_failing_is_retried_until_its_command_is_lost() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xF4));
    let (command, _) = w.admit(id(0xF03D), w.binding(rt, "sleep 5")).unwrap();
    let (never_sent, _) = {
        // Admitted while the runtime is unreachable: never exposed.
        w.cut(rt.runtime);
        let now = w.now;
        w.c().handle_transport_lost(rt.runtime, now).unwrap();
        w.settle();
        w.admit(id(0xF04D), w.binding(rt, "echo later")).unwrap()
    };
    // The worker died with its port; it never dials back.
    w.runtimes.remove(&rt.runtime);
    w.fire(TimerId::ReattachDeadline {
        runtime: rt.runtime,
        generation: rt.generation,
    });
    assert_eq!(w.terminations, vec![(rt.runtime, rt.generation)]);
    // Retiring the generation settles what was never sent to it at once.
    assert_eq!(w.outcome(never_sent), Outcome::NotDispatched);
    let timeout = w.evidence(RecoveryKind::ReattachTimeout);
    assert!(timeout[0].outcomes.contains(&Resolution {
        command: never_sent,
        attempt: None,
        before: Outcome::Admitted,
        after: Outcome::NotDispatched,
    }));

    let max = w.config.max_terminate_attempts;
    let retry = TimerId::TerminateRetry {
        runtime: rt.runtime,
        generation: rt.generation,
    };
    let mut waits = Vec::new();
    for _ in 0..max + 3 {
        let now = w.now;
        w.c()
            .handle_cleanup_failed(rt.runtime, rt.generation, "terminate() threw", now)
            .unwrap();
        w.settle();
        assert_eq!(w.outcome(command), Outcome::Running);
        let at = *w.armed(retry).last().expect("retry armed");
        waits.push(at.0 - now.0);
        w.fire(retry);
    }
    assert!(
        waits.windows(2).all(|p| p[1] >= p[0]) && waits.last() > waits.first(),
        "retries slow down past the limit: {waits:?}"
    );
    assert_eq!(w.evidence(RecoveryKind::CleanupFailure).len() as u32, max);
    let now = w.now;
    w.c()
        .handle_runtime_terminated(rt.runtime, rt.generation, now)
        .unwrap();
    w.settle();
    assert_eq!(
        w.history(command),
        vec![
            Outcome::Admitted,
            Outcome::Dispatched,
            Outcome::Running,
            Outcome::Lost
        ]
    );
    assert_eq!(w.outcome(never_sent), Outcome::NotDispatched);
    assert_eq!(w.starts_of(command), 1);
    assert_eq!(w.starts_of(never_sent), 0);
    assert_eq!(w.dispatches_of(never_sent), 0);
}

// ----- Cancellation details pinned by `cargo xtask mutants` ------------------

#[test]
fn a_cancel_whose_dispatch_never_arrived_is_cancelled_on_the_runtimes_word_without_a_termination() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xA9));
    // The port breaks unnoticed by the controller: the dispatch is exposed
    // and sent, and lost on the way.
    w.cut(rt.runtime);
    let (command, _) = w.admit(id(0xF9), w.binding(rt, "touch never")).unwrap();
    assert_eq!(w.dispatches_of(command), 1);
    assert_eq!(w.exposures_in_journal(command), 1);
    w.reconnect(rt.runtime);
    assert_eq!(w.starts_of(command), 0);
    assert_eq!(w.outcome(command), Outcome::Admitted);

    // The runtime never accepted it and fences the id: proof it did not run,
    // so the cancel settles it without terminating anything.
    assert_eq!(
        w.cancel(command, rt.generation),
        Ok(Settlement::Pending {
            reason: CancelReason::User
        })
    );
    assert_eq!(w.outcome(command), Outcome::Cancelled);
    assert_eq!(
        w.history(command),
        vec![Outcome::Admitted, Outcome::Cancelled]
    );
    w.fire(TimerId::CancelGrace { command });
    assert!(w.terminations.is_empty(), "nothing left to stop");
    assert!(w.evidence(RecoveryKind::CancelEscalation).is_empty());
    assert_eq!(w.starts_of(command), 0);
    assert_eq!(w.dispatches_of(command), 1, "never sent again");
}

#[test]
fn a_cancel_after_its_runtime_died_records_nothing_and_answers_not_running() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xAA));
    // The process starts but its ACK never reaches the controller.
    w.mute.insert(rt.runtime);
    let (command, _) = w.admit(id(0xFA), w.binding(rt, "touch maybe")).unwrap();
    assert_eq!(w.starts_of(command), 1);
    w.runtimes.remove(&rt.runtime);
    w.cut(rt.runtime);
    let now = w.now;
    w.c()
        .handle_runtime_crashed(rt.runtime, rt.generation, now)
        .unwrap();
    w.settle();
    assert_eq!(w.outcome(command), Outcome::MayHaveStarted);

    // No cancel was pending when it died. Nothing is left to stop: the
    // cancel is answered as it stands, journals nothing and arms nothing.
    let (journal, timers) = (w.journal.len(), w.timers.len());
    assert_eq!(
        w.cancel(command, rt.generation),
        Ok(Settlement::NotRunning {
            outcome: Outcome::MayHaveStarted
        })
    );
    assert_eq!(w.journal.len(), journal, "no cancel recorded");
    assert_eq!(w.timers.len(), timers, "no cancel grace armed");
    assert_eq!(w.outcome(command), Outcome::MayHaveStarted);
}

#[test]
fn a_retired_runtime_that_dials_back_is_never_given_the_work_it_was_never_sent() {
    let mut w = World::new();
    let old = w.start_runtime(id(0xAB));
    let (running, _) = w.admit(id(0xFB0), w.binding(old, "sleep 60")).unwrap();
    assert_eq!(w.outcome(running), Outcome::Running);
    w.cut(old.runtime);
    let now = w.now;
    w.c().handle_transport_lost(old.runtime, now).unwrap();
    w.settle();
    // Admitted while its runtime is away: bound to it, never exposed.
    let (command, _) = w.admit(id(0xFB), w.binding(old, "touch later")).unwrap();
    assert_eq!(w.outcome(command), Outcome::Admitted);
    assert_eq!(w.dispatches_of(command), 0);

    // Replacing the runtime retires its generation, which settles what was
    // never sent to it; its termination is not confirmed yet.
    let new = w.start_runtime(old.workspace);
    assert_eq!(w.outcome(command), Outcome::NotDispatched);
    assert_eq!(w.outcome(running), Outcome::Running);
    assert_eq!(w.terminations, vec![(old.runtime, old.generation)]);
    // The retirement's evidence lists each of its commands as it changed.
    let replaced = w.evidence(RecoveryKind::RuntimeReplaced);
    let listed: BTreeMap<CommandId, (Outcome, Outcome)> = replaced
        .last()
        .expect("retirement evidence")
        .outcomes
        .iter()
        .map(|r| (r.command, (r.before, r.after)))
        .collect();
    assert_eq!(
        listed,
        BTreeMap::from([
            (command, (Outcome::Admitted, Outcome::NotDispatched)),
            (running, (Outcome::Running, Outcome::Running)),
        ])
    );

    // The old worker is alive and dials back: it is heard (it may still
    // deliver evidence for its own commands) but given no work.
    w.reconnect(old.runtime);
    assert!(w.c().is_attached(old.runtime));
    assert_eq!(w.dispatches_of(command), 0);
    assert_eq!(w.exposures_in_journal(command), 0);
    assert_eq!(w.starts_of(command), 0);
    assert_eq!(w.outcome(command), Outcome::NotDispatched);
    assert_ne!(new.runtime, old.runtime);
}

// ----- Dispatch and hello checks pinned by `cargo xtask mutants` -------------

impl World {
    /// The worker behind `rt` holds at most `max_commands` commands at once
    /// (it dials in again with that limit).
    fn limit_runtime(&mut self, rt: Started, max_commands: usize) {
        let identity = self.runtimes[&rt.runtime].identity();
        let now = self.now;
        let mut worker = Runtime::new(
            RuntimeConfig {
                max_commands,
                ..RuntimeConfig::new(identity)
            },
            now,
        );
        worker.handle_connected(now);
        self.runtimes.insert(rt.runtime, worker);
        self.settle();
    }

    /// A hello for `runtime` as the controller receives it on that
    /// runtime's port, with the identity fields given.
    fn hello(
        &mut self,
        lease: LeaseId,
        runtime: RuntimeId,
        generation: Generation,
        execution: ExecutionId,
    ) -> Result<(), ControllerError> {
        let now = self.now;
        let hello = Hello {
            v: V1,
            lease,
            runtime,
            generation,
            execution,
            streams: Vec::new(),
        };
        let r = self
            .c()
            .handle_runtime(runtime, RuntimeToController::Hello(hello), now);
        self.settle();
        r
    }
}

#[test]
fn a_dispatch_the_runtime_refuses_is_recorded_not_dispatched_and_never_uncertain() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xAC));
    w.limit_runtime(rt, 1);
    let (busy, _) = w.admit(id(0xFC1), w.binding(rt, "sleep 60")).unwrap();
    assert_eq!(w.outcome(busy), Outcome::Running);

    // The runtime is full: it refuses the second dispatch, which proves the
    // command did not start there.
    let (refused, _) = w.admit(id(0xFC2), w.binding(rt, "touch full")).unwrap();
    assert_eq!(w.dispatches_of(refused), 1);
    assert_eq!(w.starts_of(refused), 0);
    assert_eq!(w.outcome(refused), Outcome::NotDispatched);
    assert_eq!(
        w.history(refused),
        vec![Outcome::Admitted, Outcome::NotDispatched]
    );
    assert!(w.journal.iter().any(|e| matches!(&e.record,
        JournalRecord::DispatchRefused { command, reason: DispatchRefusal::Capacity, .. }
            if *command == refused)));

    // Its ACK timeout finds a recorded refusal, not an unanswered dispatch.
    let attempt = w
        .sent
        .iter()
        .find_map(|(_, m)| match m {
            ControllerToRuntime::Dispatch { order, .. } if order.command == refused => {
                Some(order.attempt)
            }
            _ => None,
        })
        .expect("dispatched once");
    w.fire(TimerId::AckTimeout {
        command: refused,
        attempt,
    });
    assert_eq!(w.outcome(refused), Outcome::NotDispatched);
    assert!(w.evidence(RecoveryKind::AckTimeout).is_empty());
    assert_eq!(w.outcome(busy), Outcome::Running);

    // Once the busy command has finished, the refused one is dispatched
    // again and runs, once: it does not wait for ever on a runtime with
    // room.
    w.exit(rt.runtime, busy, 0);
    assert_eq!(w.outcome(busy), Outcome::Completed);
    assert_eq!(w.dispatches_of(refused), 2);
    assert_eq!(w.starts_of(refused), 1);
    assert_eq!(w.outcome(refused), Outcome::Running);
    w.exit(rt.runtime, refused, 0);
    assert_eq!(w.history(refused), NOT_DISPATCHED_THEN_RAN);
    assert_eq!(
        w.replayed().command(refused).unwrap().outcome,
        Outcome::Completed
    );
}

#[test]
fn a_hello_that_does_not_match_the_journal_is_rejected_with_its_reason_and_never_attaches() {
    let mut w = World::new();
    let a = w.start_runtime(id(0xAD1));
    let b = w.start_runtime(id(0xAD2));
    assert_ne!(a.lease, b.lease);
    let execution = w.runtimes[&a.runtime].identity().execution;
    // A's port broke; it has not dialed back.
    w.cut(a.runtime);
    let now = w.now;
    w.c().handle_transport_lost(a.runtime, now).unwrap();
    w.settle();
    assert!(!w.c().is_attached(a.runtime));

    let rejected = |reason| Err(ControllerError::HelloRejected { reason });
    // A's identity under another lease is not A.
    assert_eq!(
        w.hello(b.lease, a.runtime, a.generation, execution),
        rejected(HelloRejection::UnknownRuntime)
    );
    assert!(!w.c().is_attached(a.runtime));
    // A's identity from another execution (a worker started for another
    // run of the session) is not A either.
    assert_eq!(
        w.hello(a.lease, a.runtime, a.generation, id(0xE0E)),
        rejected(HelloRejection::WrongExecution)
    );
    assert!(!w.c().is_attached(a.runtime));
    // An identity the journal never assigned: on a known lease it is an
    // unknown runtime, on an unknown lease an unknown lease.
    let stranger: RuntimeId = id(0xBAD);
    assert_eq!(
        w.hello(a.lease, stranger, Generation(1), execution),
        rejected(HelloRejection::UnknownRuntime)
    );
    assert_eq!(
        w.hello(id(0xBAD1), stranger, Generation(1), execution),
        rejected(HelloRejection::UnknownLease)
    );
    assert!(w.sent.iter().any(|(r, m)| *r == stranger
        && matches!(
            m,
            ControllerToRuntime::HelloRejected {
                reason: HelloRejection::UnknownLease,
                ..
            }
        )));

    // The same hello under its own lease is A dialing back.
    assert_eq!(w.hello(a.lease, a.runtime, a.generation, execution), Ok(()));
    assert!(w.c().is_attached(a.runtime));
}

// ----- Transport loss and reattachment pinned by `cargo xtask mutants` ------

#[test]
fn a_runtime_dialing_back_is_told_exactly_which_of_its_events_are_durable() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xAE));
    let (command, _) = w.admit(id(0xFE), w.binding(rt, "sleep 60")).unwrap();
    w.stdout(rt.runtime, command, "one\n");
    w.stdout(rt.runtime, command, "two\n");
    let durable = w.c().projection().command(command).unwrap().last_seq;
    assert!(durable > EventSeq::ZERO);
    let events = w.events_in_journal(command).len();

    w.cut(rt.runtime);
    let now = w.now;
    w.c().handle_transport_lost(rt.runtime, now).unwrap();
    w.settle();
    w.reconnect(rt.runtime);
    assert!(w.c().is_attached(rt.runtime));
    // The answer to its hello names the last durable event of each command
    // it listed, so it resends only what came after.
    let told = w
        .sent
        .iter()
        .rev()
        .find_map(|(r, m)| match m {
            ControllerToRuntime::HelloAccepted { durable, .. } if *r == rt.runtime => {
                Some(durable.clone())
            }
            _ => None,
        })
        .expect("hello accepted");
    assert_eq!(
        told,
        vec![DurablePosition {
            command,
            through: durable
        }]
    );
    assert_eq!(w.events_in_journal(command).len(), events);
    assert_eq!(w.outcome(command), Outcome::Running);
}

#[test]
fn a_transport_loss_is_recorded_once_and_gives_the_runtime_the_full_time_to_dial_back() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xAF));
    let (command, _) = w.admit(id(0xFF), w.binding(rt, "sleep 60")).unwrap();
    assert_eq!(w.outcome(command), Outcome::Running);
    w.now = w.now.plus(4_000);
    let lost_at = w.now;
    w.cut(rt.runtime);
    w.c().handle_transport_lost(rt.runtime, lost_at).unwrap();
    w.settle();
    let losses = w.evidence(RecoveryKind::TransportLoss);
    assert_eq!(losses.len(), 1);
    assert_eq!(
        losses[0].outcomes,
        vec![Resolution {
            command,
            attempt: losses[0].outcomes[0].attempt,
            before: Outcome::Running,
            after: Outcome::Running,
        }],
        "an acknowledged command awaits reattachment"
    );
    let deadline = TimerId::ReattachDeadline {
        runtime: rt.runtime,
        generation: rt.generation,
    };
    assert!(
        w.armed(deadline)
            .contains(&lost_at.plus(w.config.reattach_timeout_ms)),
        "armed from the loss: {:?}",
        w.armed(deadline)
    );

    // A second report of the same broken port is not a second loss: nothing
    // is journaled and the deadline is not moved.
    let (journal, timers) = (w.journal.len(), w.timers.len());
    w.now = w.now.plus(100);
    let now = w.now;
    w.c().handle_transport_lost(rt.runtime, now).unwrap();
    w.settle();
    assert_eq!(w.journal.len(), journal);
    assert_eq!(w.timers.len(), timers);
    assert_eq!(w.outcome(command), Outcome::Running);
}

// ----- Stale timers pinned by `cargo xtask mutants` -------------------------

#[test]
fn a_cancel_that_settles_within_its_grace_period_terminates_nothing() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xB1));
    let (a, _) = w.admit(id(0xB1A), w.binding(rt, "sleep 100")).unwrap();
    let (b, _) = w.admit(id(0xB1B), w.binding(rt, "sleep 200")).unwrap();
    assert_eq!(
        w.cancel(a, rt.generation),
        Ok(Settlement::Pending {
            reason: CancelReason::User
        })
    );
    w.exit(rt.runtime, a, 137);
    assert_eq!(w.outcome(a), Outcome::Cancelled);

    // The grace period ends after the cancel took effect: nothing to escalate.
    let journal = w.journal.len();
    w.fire(TimerId::CancelGrace { command: a });
    assert!(w.terminations.is_empty());
    assert!(w.evidence(RecoveryKind::CancelEscalation).is_empty());
    assert_eq!(w.journal.len(), journal);
    assert_eq!(w.outcome(b), Outcome::Running);
    assert!(w.c().is_attached(rt.runtime));
}

#[test]
fn a_deadline_timer_fired_early_for_a_settled_or_cancelled_command_is_not_armed_again() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xB2));
    let mut binding = w.binding(rt, "echo done");
    binding.budget.deadline = w.now.plus(60_000);
    let (done, _) = w.admit(id(0xB2A), binding.clone()).unwrap();
    w.exit(rt.runtime, done, 0);
    assert_eq!(w.outcome(done), Outcome::Completed);
    binding.command_line = "sleep 100".into();
    let (stopping, _) = w.admit(id(0xB2B), binding).unwrap();
    assert_eq!(
        w.cancel(stopping, rt.generation),
        Ok(Settlement::Pending {
            reason: CancelReason::User
        })
    );

    // The shell fires both deadlines early (its clock ran ahead): a timer
    // that no longer matches the state is ignored, not armed again.
    let (journal, timers) = (w.journal.len(), w.timers.len());
    let now = w.now;
    for command in [done, stopping] {
        w.c().handle_timer(TimerId::Deadline { command }, now);
    }
    w.settle();
    assert_eq!(w.timers.len(), timers, "no deadline armed again");
    assert_eq!(w.journal.len(), journal);
    assert_eq!(w.outcome(done), Outcome::Completed);
    assert_eq!(w.outcome(stopping), Outcome::Running);
}

#[test]
fn a_detached_runtime_is_not_watched_for_silence_until_it_dials_back() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xB3));
    let liveness = TimerId::Liveness {
        runtime: rt.runtime,
        generation: rt.generation,
    };
    let first = *w.armed(liveness).last().expect("armed at its hello");
    let (command, _) = w.admit(id(0xB3A), w.binding(rt, "sleep 100")).unwrap();
    // Heard from well after its hello, then its port breaks.
    w.now = w.now.plus(1_000);
    w.stdout(rt.runtime, command, "still here\n");
    w.cut(rt.runtime);
    let now = w.now;
    w.c().handle_transport_lost(rt.runtime, now).unwrap();
    w.settle();

    // Its liveness check comes due while it is detached: it lapses.
    let timers = w.timers.len();
    w.fire(liveness);
    assert_eq!(w.now, first);
    assert_eq!(w.timers.len(), timers, "not armed again while detached");
    assert_eq!(w.c().liveness(rt.runtime), Liveness::Detached);

    // Dialing back starts the watch again, once.
    w.reconnect(rt.runtime);
    assert_eq!(w.c().liveness(rt.runtime), Liveness::Responding);
    assert_eq!(
        w.armed(liveness),
        vec![first, w.now.plus(w.config.heartbeat_timeout_ms)]
    );
}

#[test]
fn a_runtime_that_dialed_back_in_time_is_kept_when_its_reattach_deadline_passes() {
    let mut w = World::new();
    let rt = w.start_runtime(id(0xB4));
    let (command, _) = w.admit(id(0xB4A), w.binding(rt, "sleep 100")).unwrap();
    w.cut(rt.runtime);
    let now = w.now;
    w.c().handle_transport_lost(rt.runtime, now).unwrap();
    w.settle();
    w.reconnect(rt.runtime);
    assert!(w.c().is_attached(rt.runtime));

    // Both deadlines (from its spawn and from the loss) pass with the
    // runtime attached and current: nothing happens to it.
    let journal = w.journal.len();
    w.fire(TimerId::ReattachDeadline {
        runtime: rt.runtime,
        generation: rt.generation,
    });
    assert!(w.terminations.is_empty());
    assert!(w.evidence(RecoveryKind::ReattachTimeout).is_empty());
    assert_eq!(w.journal.len(), journal);
    assert!(w.c().is_attached(rt.runtime));
    assert_eq!(w.outcome(command), Outcome::Running);
}

#[test]
fn a_termination_retry_due_after_the_runtime_is_confirmed_gone_asks_for_nothing() {
    let mut w = World::new();
    let old = w.start_runtime(id(0xB5));
    let (command, _) = w.admit(id(0xB5A), w.binding(old, "sleep 100")).unwrap();
    w.start_runtime(old.workspace);
    assert_eq!(w.terminations, vec![(old.runtime, old.generation)]);
    let now = w.now;
    w.c()
        .handle_cleanup_failed(old.runtime, old.generation, "terminate() threw", now)
        .unwrap();
    w.settle();
    let retry = TimerId::TerminateRetry {
        runtime: old.runtime,
        generation: old.generation,
    };
    assert_eq!(w.armed(retry).len(), 1);

    // The worker ends before the retry is due (the first request was carried
    // out after all): the retry finds nothing to terminate.
    let now = w.now;
    w.c()
        .handle_runtime_terminated(old.runtime, old.generation, now)
        .unwrap();
    w.settle();
    assert_eq!(w.outcome(command), Outcome::Lost);
    w.fire(retry);
    assert_eq!(
        w.terminations,
        vec![(old.runtime, old.generation)],
        "a gone runtime is not terminated again"
    );
}

/// Stop in a model turn whose own tool command the runtime refused (it
/// held too many): the command was provably never started and is never
/// dispatched again, so the turn waits on it while its runtime lives.
/// Stop cancels it with the session's other commands, and the turn ends.
#[test]
fn stop_cancels_a_model_turns_refused_tool_command_with_the_sessions_others() {
    use lifeline_core::stop::{plan, StopPlan};
    let (mut w, s) = model_world(13);
    w.limit_runtime(s, 1);
    let other = w.admit(id(0xf5), w.binding(s, "sleep 5")).unwrap().0;
    assert_eq!(w.outcome(other), Outcome::Running);
    let turn: TurnId = id(0x720d);
    let refused = running_tool_command(&mut w, s, turn, id(0xa0d1));
    assert_eq!(w.outcome(refused), Outcome::NotDispatched);
    let p = w.c().pending_projection().clone();
    let StopPlan::Cancel(cancel) = plan(&p, id(SESSION), None, w.now) else {
        panic!("{:?}", plan(&p, id(SESSION), None, w.now));
    };
    assert!(cancel.contains(&(refused, s.generation)), "{cancel:?}");
    assert!(cancel.contains(&(other, s.generation)), "{cancel:?}");
    for (command, generation) in cancel {
        w.cancel(command, generation).unwrap();
    }
    // Never sent, the refused command is cancelled at once; room made by
    // the other's end does not start it.
    assert_eq!(w.outcome(refused), Outcome::Cancelled);
    w.exit(s.runtime, other, 0);
    assert_eq!(w.starts_of(refused), 0);
    assert!(
        matches!(
            drive_model(&mut w, s, turn, None),
            Some(ModelStep::Finish {
                status: TurnStatus::Cancelled,
                ..
            })
        ),
        "the turn ends as cancelled"
    );
    assert_eq!(drive_model(&mut w, s, turn, None), None);
}
