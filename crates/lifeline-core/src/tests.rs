//! Cross-module tests: schemas and the contract document, the runtime, and a
//! randomized fault run of controller + runtime + journal whose invariants
//! are checked after every step.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use proptest::prelude::*;

use crate::command::tests::{binding, id};
use crate::*;

// ----- schemas ---------------------------------------------------------------

fn sample_terminal() -> TerminalResult {
    TerminalResult {
        v: V1,
        status: TerminalStatus::Completed,
        exit_code: Some(0),
        message: String::new(),
    }
}

/// The examples in docs/command-contract.md, generated from the types.
pub(crate) fn examples() -> Vec<(&'static str, String)> {
    let command: CommandId = "01JF8Z6C4R5XK2N7W3Q9YB0T1M".parse().unwrap();
    let runtime: RuntimeId = "01JF8Z4V0W7N3B5K9Q2M6XR8TD".parse().unwrap();
    let attempt: AttemptId = "01JF8Z6C9D2P4S6V8X0Z2B4D6F".parse().unwrap();
    let mut b = binding();
    b.workspace = "01JF8Z2K8D3M5P7R9T1V3X5Z7B".parse().unwrap();
    b.lease = "01JF8Z2K8H4N6Q8S0V2W4Y6A8C".parse().unwrap();
    b.runtime = runtime;
    b.session = "01JF8Z30QG5J7M9N1Q3S5V7W9Y".parse().unwrap();
    let (session, workspace) = (b.session, b.workspace);
    b.working_directory = "/project".into();
    b.capabilities = ["fs.read", "fs.write"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    b.budget = Budget {
        deadline: Millis(1_767_225_600_000),
        max_output_bytes: 1_048_576,
    };
    b.command_line = "seq 1 3 > nums.txt && wc -l nums.txt".into();
    let record = CommandRecord {
        v: V1,
        command,
        key: "01JF8Z6BZJ3H5K7M9P1R3T5V7X".parse().unwrap(),
        binding: b,
        admitted_at: Millis(1_767_225_000_000),
        reissue_of: None,
    };
    let (chunk, blob) = crate::event::retain_output(
        &crate::event::HashedText::new("3 nums.txt\n"),
        0,
        4,
        1_048_576,
    );
    let stdout = EventRecord {
        v: V1,
        command,
        seq: EventSeq(2),
        digest: EventBody::Stdout {
            data: "3 nums.txt\n".into(),
        }
        .digest(),
        body: RetainedBody::Stdout(chunk),
    };
    let _ = blob;
    let terminal = EventRecord {
        v: V1,
        command,
        seq: EventSeq(3),
        digest: EventBody::Terminal(sample_terminal()).digest(),
        body: RetainedBody::Terminal(sample_terminal()),
    };
    let cursor = Cursor {
        v: V1,
        command,
        after: EventSeq(1),
    };
    let evidence = RecoveryEvidence {
        v: V1,
        stamp: "01JF8Z9E1G3J5M7N9Q1S3V5W7Y".parse().unwrap(),
        kind: RecoveryKind::TransportLoss,
        at: Millis(1_767_225_030_000),
        runtime: Some(RuntimeRef {
            lease: record.binding.lease,
            runtime,
            generation: Generation(1),
        }),
        observed: "transport to runtime lost; dispatches without a recorded ACK may have started"
            .into(),
        outcomes: vec![Resolution {
            command,
            attempt: Some(attempt),
            before: Outcome::Admitted,
            after: Outcome::MayHaveStarted,
        }],
    };
    let entry = JournalEntry {
        v: V1,
        position: 42,
        at: Millis(1_767_225_000_010),
        record: JournalRecord::DispatchExposed {
            command,
            attempt,
            runtime,
            generation: Generation(1),
        },
    };
    let changed = JournalEntry {
        v: V1,
        position: 43,
        at: Millis(1_767_225_000_020),
        record: JournalRecord::OutcomeChanged {
            command,
            event: OutcomeEvent::Acknowledged,
            from: Outcome::Admitted,
            to: Outcome::Dispatched,
        },
    };
    let hello = Hello {
        v: V1,
        lease: record.binding.lease,
        runtime,
        generation: Generation(1),
        execution: "01JF8Z4V1A3C5E7G9J1M3N5Q7S".parse().unwrap(),
        streams: vec![StreamPosition {
            command,
            attempt,
            last_seq: EventSeq(3),
            durable_through: EventSeq(1),
        }],
    };
    let pretty = |v: serde_json::Result<String>| v.unwrap();
    vec![
        (
            "command record",
            pretty(serde_json::to_string_pretty(&record)),
        ),
        (
            "event record (stdout)",
            pretty(serde_json::to_string_pretty(&stdout)),
        ),
        (
            "event record (terminal)",
            pretty(serde_json::to_string_pretty(&terminal)),
        ),
        (
            "terminal result",
            pretty(serde_json::to_string_pretty(&sample_terminal())),
        ),
        ("cursor", pretty(serde_json::to_string_pretty(&cursor))),
        (
            "recovery evidence",
            pretty(serde_json::to_string_pretty(&evidence)),
        ),
        (
            "journal entry (exposure)",
            pretty(serde_json::to_string_pretty(&entry)),
        ),
        (
            "journal entry (outcome change)",
            pretty(serde_json::to_string_pretty(&changed)),
        ),
        (
            "journal entry (tombstone)",
            pretty(serde_json::to_string_pretty(&JournalEntry {
                v: V1,
                position: 97,
                at: Millis(1_767_225_100_000),
                record: JournalRecord::Session {
                    record: crate::session_record::SessionRecord::Tombstone {
                        session,
                        workspace: Some(workspace),
                    },
                },
            })),
        ),
        (
            "runtime hello",
            pretty(serde_json::to_string_pretty(&hello)),
        ),
    ]
}

fn decode_named(name: &str, bytes: &[u8]) -> Result<(), SchemaError> {
    match name {
        "command record" => decode::<CommandRecord>(bytes).map(|_| ()),
        "event record (stdout)" | "event record (terminal)" => {
            decode::<EventRecord>(bytes).map(|_| ())
        }
        "terminal result" => decode::<TerminalResult>(bytes).map(|_| ()),
        "cursor" => decode::<Cursor>(bytes).map(|_| ()),
        "recovery evidence" => decode::<RecoveryEvidence>(bytes).map(|_| ()),
        "journal entry (exposure)"
        | "journal entry (outcome change)"
        | "journal entry (tombstone)" => decode::<JournalEntry>(bytes).map(|_| ()),
        "runtime hello" => decode::<Hello>(bytes).map(|_| ()),
        other => panic!("no schema for example {other}"),
    }
}

/// Blocks in the contract document introduced by `<!-- example: NAME -->`.
fn doc_examples() -> Vec<(String, String)> {
    let doc = include_str!("../../../docs/command-contract.md");
    let mut out = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line
            .trim()
            .strip_prefix("<!-- example: ")
            .and_then(|r| r.strip_suffix(" -->"))
        else {
            continue;
        };
        assert_eq!(
            lines.next(),
            Some("```json"),
            "example {name} opens a json block"
        );
        let mut body = Vec::new();
        for l in lines.by_ref() {
            if l == "```" {
                break;
            }
            body.push(l);
        }
        out.push((name.to_string(), body.join("\n")));
    }
    out
}

#[test]
fn contract_document_examples_are_exact() {
    let generated = examples();
    let documented = doc_examples();
    let names: Vec<&str> = documented.iter().map(|(n, _)| n.as_str()).collect();
    let expected: Vec<&str> = generated.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names, expected,
        "the document shows every example, in order"
    );
    for ((name, text), (_, want)) in documented.iter().zip(&generated) {
        decode_named(name, text.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            text, want,
            "example {name} differs from what this build writes"
        );
    }
}

fn event_name(e: OutcomeEvent) -> String {
    let json = serde_json::to_value(e).unwrap();
    let kind = json["kind"].as_str().unwrap().to_string();
    match json.get("reason").and_then(|r| r.as_str()) {
        Some(r) => format!("{kind}({r})"),
        None => kind,
    }
}

#[test]
fn contract_document_transition_table_is_exact() {
    let doc = include_str!("../../../docs/command-contract.md");
    let start = doc.find("<!-- transitions -->").expect("table start");
    let end = doc.find("<!-- /transitions -->").expect("table end");
    let mut documented = BTreeSet::new();
    for line in doc[start..end].lines().skip(3) {
        let cells: Vec<&str> = line
            .split('|')
            .map(|c| c.trim().trim_matches('`'))
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(cells.len(), 3, "row {line:?}");
        assert!(documented.insert((
            cells[0].to_string(),
            cells[1].to_string(),
            cells[2].to_string()
        )));
    }
    let mut code = BTreeSet::new();
    for from in Outcome::ALL {
        for event in OutcomeEvent::all() {
            if let Ok(to) = transition(from, event) {
                code.insert((
                    from.as_str().to_string(),
                    event_name(event),
                    to.as_str().to_string(),
                ));
            }
        }
    }
    assert_eq!(documented, code);
}

#[test]
#[ignore = "prints the contract examples for docs/command-contract.md"]
fn print_contract_examples() {
    for (name, json) in examples() {
        println!("<!-- example: {name} -->\n```json\n{json}\n```\n");
    }
}

#[test]
fn every_example_round_trips() {
    for (name, json) in examples() {
        decode_named(name, json.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let (_, json) = &examples()[0];
    let rec: CommandRecord = decode(json.as_bytes()).unwrap();
    assert_eq!(
        decode::<CommandRecord>(&encode(&rec).unwrap()).unwrap(),
        rec
    );
}

#[test]
fn future_versions_are_rejected_by_name() {
    let (_, json) = &examples()[0];
    let future = json.replacen("\"v\": 1", "\"v\": 2", 1);
    let err = decode::<CommandRecord>(future.as_bytes()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unsupported schema version 2 for command record; this build understands 1"
    );
    let missing = json.replacen("\"v\": 1,", "", 1);
    assert_eq!(
        decode::<CommandRecord>(missing.as_bytes()).unwrap_err(),
        SchemaError::MissingVersion {
            schema: "command record".into()
        }
    );
    // A future record whose body also changed is named by its version,
    // not by the first field that no longer fits (`decode` parses the body
    // first and only looks at the version when that fails).
    let reshaped = future.replacen("\"/project\"", "[\"/project\"]", 1);
    assert_ne!(reshaped, future);
    assert!(matches!(
        decode::<CommandRecord>(reshaped.as_bytes()),
        Err(SchemaError::UnsupportedVersion { .. })
    ));
    let not_an_object = decode::<CommandRecord>(b"[1]").unwrap_err();
    assert!(
        not_an_object.to_string().contains("expected a JSON object"),
        "{not_an_object}"
    );
    // A nested record with a future version is refused too, not misread.
    let (_, terminal) = &examples()[2];
    let nested = terminal.replace("\"v\": 1,\n    \"status\"", "\"v\": 2,\n    \"status\"");
    assert_ne!(&nested, terminal);
    let err = decode::<EventRecord>(nested.as_bytes()).unwrap_err();
    assert!(
        err.to_string().contains("unsupported schema version 2"),
        "{err}"
    );
}

#[test]
fn invalid_records_are_refused_after_reading() {
    let (_, json) = &examples()[0];
    let bad = json.replace("\"/project\"", "\"relative\"");
    assert!(matches!(
        decode::<CommandRecord>(bad.as_bytes()),
        Err(SchemaError::Invalid { .. })
    ));
    let (_, entry) = &examples()[7];
    let lie = entry.replace("\"to\": \"dispatched\"", "\"to\": \"completed\"");
    assert!(matches!(
        decode::<JournalEntry>(lie.as_bytes()),
        Err(SchemaError::Invalid { .. })
    ));
    assert!(matches!(
        decode::<Cursor>(b"[1,2,3]"),
        Err(SchemaError::Malformed { .. })
    ));
}

proptest! {
    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode::<CommandRecord>(&bytes);
        let _ = decode::<EventRecord>(&bytes);
        let _ = decode::<TerminalResult>(&bytes);
        let _ = decode::<Cursor>(&bytes);
        let _ = decode::<RecoveryEvidence>(&bytes);
        let _ = decode::<JournalEntry>(&bytes);
        let _ = decode::<PersistBatch>(&bytes);
        let _ = decode::<ProjectionSnapshot>(&bytes);
        let _ = decode::<Hello>(&bytes);
        // Messages, read as their receivers read them.
        let text = String::from_utf8_lossy(&bytes);
        let _ = lifeline_decode::from_str::<RuntimeToController>(&text);
        let _ = lifeline_decode::from_str::<ControllerToRuntime>(&text);
        let _ = lifeline_decode::from_str::<ClientRequest>(&text);
    }

    #[test]
    fn decoding_mutated_examples_never_panics(which in 0usize..9, at in 0usize..2000, byte in any::<u8>()) {
        let all = examples();
        let (name, json) = &all[which % all.len()];
        let mut bytes = json.clone().into_bytes();
        let i = at % bytes.len();
        bytes[i] = byte;
        let _ = decode_named(name, &bytes);
    }
}

// ----- runtime ---------------------------------------------------------------

fn identity(generation: u64) -> RuntimeIdentity {
    RuntimeIdentity {
        lease: id(2),
        runtime: id(3 + generation as u128 * 100),
        generation: Generation(generation),
        execution: id(5 + generation as u128 * 100),
    }
}

fn order(id_: RuntimeIdentity, command: u128) -> ControllerToRuntime {
    let mut b = binding();
    b.runtime = id_.runtime;
    b.generation = id_.generation;
    ControllerToRuntime::Dispatch {
        runtime: id_.runtime,
        generation: id_.generation,
        order: DispatchOrder {
            command: id(command),
            attempt: id(command + 1),
            execution: id_.execution,
            binding: b,
        },
    }
}

fn attached(generation: u64) -> Runtime {
    let mut rt = Runtime::new(RuntimeConfig::new(identity(generation)), Millis(0));
    rt.handle_connected(Millis(0));
    let i = identity(generation);
    rt.handle_controller(
        ControllerToRuntime::HelloAccepted {
            runtime: i.runtime,
            generation: i.generation,
            durable: vec![],
        },
        Millis(0),
    )
    .unwrap();
    rt.drain_effects();
    rt
}

#[test]
fn runtime_acknowledges_before_starting_and_never_starts_twice() {
    let mut rt = attached(1);
    rt.handle_controller(order(identity(1), 1000), Millis(1))
        .unwrap();
    let effects = rt.drain_effects();
    assert!(matches!(
        effects[0],
        RuntimeEffect::Send(RuntimeToController::Ack { .. })
    ));
    assert!(matches!(effects[1], RuntimeEffect::StartProcess { .. }));
    rt.handle_controller(order(identity(1), 1000), Millis(2))
        .unwrap();
    let again = rt.drain_effects();
    assert_eq!(again.len(), 1);
    assert!(matches!(
        again[0],
        RuntimeEffect::Send(RuntimeToController::Ack { .. })
    ));
}

#[test]
fn runtime_refuses_other_generations_and_fences_cancelled_ids() {
    let mut rt = attached(2);
    let err = rt
        .handle_controller(order(identity(1), 1000), Millis(1))
        .unwrap_err();
    assert!(matches!(err, RuntimeError::Refused { .. }));
    let i = identity(2);
    let stale_cancel = ControllerToRuntime::Cancel {
        runtime: i.runtime,
        generation: Generation(1),
        command: id(1000),
        reason: CancelReason::User,
    };
    assert!(matches!(
        rt.handle_controller(stale_cancel, Millis(1)),
        Err(RuntimeError::NotForMe { .. })
    ));
    rt.drain_effects();
    rt.handle_controller(
        ControllerToRuntime::Cancel {
            runtime: i.runtime,
            generation: i.generation,
            command: id(2000),
            reason: CancelReason::User,
        },
        Millis(2),
    )
    .unwrap();
    assert!(matches!(
        rt.drain_effects()[..],
        [RuntimeEffect::Send(RuntimeToController::CancelReply {
            reply: CancelReply::NeverAccepted,
            ..
        })]
    ));
    let err = rt.handle_controller(order(i, 2000), Millis(3)).unwrap_err();
    assert_eq!(
        err,
        RuntimeError::Refused {
            command: id(2000),
            refusal: DispatchRefusal::CancelledBeforeAccept
        }
    );
}

#[test]
fn runtime_buffers_until_durable_and_resends_the_tail() {
    let mut rt = attached(1);
    let command: CommandId = id(1000);
    rt.handle_controller(order(identity(1), 1000), Millis(1))
        .unwrap();
    for n in 0..4 {
        rt.handle_process(
            command,
            ProcessOutput::Stdout {
                data: format!("{n}"),
            },
            Millis(2),
        )
        .unwrap();
    }
    assert_eq!(rt.last_seq(command), Some(EventSeq(5)));
    rt.handle_disconnected(Millis(3));
    rt.drain_effects();
    rt.handle_connected(Millis(4));
    let i = identity(1);
    rt.handle_controller(
        ControllerToRuntime::HelloAccepted {
            runtime: i.runtime,
            generation: i.generation,
            durable: vec![DurablePosition {
                command,
                through: EventSeq(3),
            }],
        },
        Millis(5),
    )
    .unwrap();
    let resent: Vec<u64> = rt
        .drain_effects()
        .into_iter()
        .filter_map(|e| match e {
            RuntimeEffect::Send(RuntimeToController::Event { seq, .. }) => Some(seq.0),
            _ => None,
        })
        .collect();
    assert_eq!(resent, vec![4, 5]);
    assert_eq!(rt.unacknowledged(command), 2);
    assert!(matches!(
        rt.handle_controller(
            ControllerToRuntime::Resend {
                runtime: i.runtime,
                generation: i.generation,
                command,
                after: EventSeq(1),
            },
            Millis(6)
        ),
        Err(RuntimeError::CannotResend { .. })
    ));
    rt.handle_process(command, ProcessOutput::Exit { code: 0 }, Millis(7))
        .unwrap();
    rt.handle_controller(
        ControllerToRuntime::EventsDurable {
            runtime: i.runtime,
            generation: i.generation,
            command,
            through: EventSeq(6),
        },
        Millis(8),
    )
    .unwrap();
    assert_eq!(rt.last_seq(command), None, "forgotten once fully durable");
    assert!(rt.accepted(command), "but remembered as accepted");
}

#[test]
fn rejected_runtime_kills_its_processes_and_shuts_down() {
    let mut rt = attached(1);
    rt.handle_controller(order(identity(1), 1000), Millis(1))
        .unwrap();
    rt.drain_effects();
    let i = identity(1);
    rt.handle_controller(
        ControllerToRuntime::HelloRejected {
            runtime: i.runtime,
            generation: i.generation,
            reason: HelloRejection::Retired,
        },
        Millis(2),
    )
    .unwrap();
    let effects = rt.drain_effects();
    assert!(effects.contains(&RuntimeEffect::KillProcess { command: id(1000) }));
    assert!(matches!(
        effects.last(),
        Some(RuntimeEffect::Shutdown { .. })
    ));
}

// ----- randomized fault run ----------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    Admit {
        key: u8,
        line: u8,
    },
    Cancel {
        which: u8,
        stale: bool,
    },
    Output {
        which: u8,
    },
    Exit {
        which: u8,
        code: i32,
    },
    /// Everything works for a moment: write, deliver, repeat until quiet.
    Tick,
    Deliver,
    PersistOk,
    PersistFail,
    CrashController,
    HostLoss,
    Cut,
    Reconnect,
    TransportLost,
    RuntimeCrash,
    Replace,
    Terminated,
    CleanupFailed,
    Timer {
        which: u8,
    },
    Heartbeat,
    /// A message a buggy or stale runtime might send.
    Forge {
        which: u8,
        seq: u8,
        kind: u8,
    },
    Join {
        which: u8,
        after: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..6, 0u8..2).prop_map(|(key, line)| Op::Admit { key, line }),
        1 => (any::<u8>(), any::<bool>()).prop_map(|(which, stale)| Op::Cancel { which, stale }),
        3 => any::<u8>().prop_map(|which| Op::Output { which }),
        3 => (any::<u8>(), 0i32..2).prop_map(|(which, code)| Op::Exit { which, code }),
        12 => Just(Op::Tick),
        4 => Just(Op::Deliver),
        4 => Just(Op::PersistOk),
        1 => Just(Op::PersistFail),
        1 => Just(Op::CrashController),
        1 => Just(Op::HostLoss),
        1 => Just(Op::Cut),
        1 => Just(Op::Reconnect),
        1 => Just(Op::TransportLost),
        1 => Just(Op::RuntimeCrash),
        1 => Just(Op::Replace),
        1 => Just(Op::Terminated),
        1 => Just(Op::CleanupFailed),
        2 => any::<u8>().prop_map(|which| Op::Timer { which }),
        1 => Just(Op::Heartbeat),
        1 => (any::<u8>(), 0u8..4).prop_map(|(which, after)| Op::Join { which, after }),
        2 => (any::<u8>(), 0u8..8, 0u8..7).prop_map(|(which, seq, kind)| Op::Forge { which, seq, kind }),
    ]
}

const C: ClientId = ClientId(7);

struct Sim {
    now: Millis,
    config: ControllerConfig,
    journal: Vec<JournalEntry>,
    controller: Option<Controller>,
    runtimes: BTreeMap<RuntimeId, Runtime>,
    connected: BTreeSet<RuntimeId>,
    to_runtime: VecDeque<(RuntimeId, ControllerToRuntime)>,
    to_controller: VecDeque<(RuntimeId, RuntimeToController)>,
    unwritten: Option<PersistBatch>,
    timers: Vec<TimerId>,
    terminations: Vec<(RuntimeId, Generation)>,
    starts: BTreeMap<CommandId, usize>,
    /// The attempts sent for each command, in order.
    dispatches: BTreeMap<CommandId, Vec<AttemptId>>,
    workspace: WorkspaceId,
    request: u64,
}

impl Sim {
    fn new() -> Sim {
        let config = ControllerConfig {
            entropy: b"sim".to_vec(),
            retention: RetentionPolicy {
                inline_output_bytes: 8,
                retained_events: 4,
                dedup_window: 4,
                retained_evidence: 8,
                settled_with_events: 2,
            },
            ..ControllerConfig::default()
        };
        Sim {
            now: Millis(1),
            controller: Some(Controller::new(config.clone(), Millis(1))),
            config,
            journal: Vec::new(),
            runtimes: BTreeMap::new(),
            connected: BTreeSet::new(),
            to_runtime: VecDeque::new(),
            to_controller: VecDeque::new(),
            unwritten: None,
            timers: Vec::new(),
            terminations: Vec::new(),
            starts: BTreeMap::new(),
            dispatches: BTreeMap::new(),
            workspace: id(0x77),
            request: 0,
        }
    }

    fn drain(&mut self) {
        let now = self.now;
        if let Some(c) = self.controller.as_mut() {
            for e in c.drain_effects() {
                match e {
                    ControllerEffect::Persist(b) => {
                        self.unwritten = Some(std::sync::Arc::unwrap_or_clone(b))
                    }
                    ControllerEffect::SendToRuntime { runtime, message } => {
                        if let ControllerToRuntime::Dispatch { order, .. } = &message {
                            let sent = self.dispatches.entry(order.command).or_default();
                            // A command is offered again only as a new attempt,
                            // and only once the journal holds the runtime's
                            // refusal of every earlier one: proof it never ran.
                            assert!(
                                !sent.contains(&order.attempt),
                                "attempt {} of {} sent twice",
                                order.attempt,
                                order.command
                            );
                            for earlier in sent.iter() {
                                let refused = self.journal.iter().any(|e| {
                                    matches!(&e.record, JournalRecord::DispatchRefused { command, attempt, .. }
                                        if *command == order.command && attempt == earlier)
                                });
                                assert!(
                                    refused,
                                    "command {} dispatched again while attempt {earlier} was not refused",
                                    order.command
                                );
                            }
                            sent.push(order.attempt);
                        }
                        if self.connected.contains(&runtime) {
                            self.to_runtime.push_back((runtime, message));
                        }
                    }
                    ControllerEffect::NotifyClient { message, .. } => {
                        // Durable evidence before live projection.
                        if let ClientMessage::Outcome {
                            command,
                            outcome,
                            position,
                            ..
                        } = &message
                        {
                            let entry = &self.journal[*position as usize - 1];
                            match &entry.record {
                                JournalRecord::OutcomeChanged { command: c, to, .. } => {
                                    assert_eq!((c, to), (command, outcome))
                                }
                                JournalRecord::CommandAdmitted(r) => {
                                    assert_eq!(r.command, *command)
                                }
                                other => panic!("outcome notification for {other:?}"),
                            }
                        }
                        if let ClientMessage::Event { command, seq, .. } = &message {
                            let p =
                                Projection::rebuild(self.config.retention, &self.journal).unwrap();
                            let durable = match p.command(*command) {
                                Some(c) => c.last_seq,
                                None => p.settled_command(*command).unwrap().last_seq,
                            };
                            assert!(*seq <= durable, "event notified before durable");
                        }
                    }
                    ControllerEffect::SetTimer { timer, .. } => self.timers.push(timer),
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
        for (rid, rt) in self.runtimes.iter_mut() {
            for e in rt.drain_effects() {
                match e {
                    RuntimeEffect::Send(m) if self.connected.contains(rid) => {
                        self.to_controller.push_back((*rid, m))
                    }
                    RuntimeEffect::StartProcess { command, .. } => {
                        *self.starts.entry(command).or_default() += 1
                    }
                    _ => {}
                }
            }
        }
    }

    fn deliver(&mut self) {
        let now = self.now;
        while let Some((rid, m)) = self.to_runtime.pop_front() {
            if let Some(rt) = self.runtimes.get_mut(&rid) {
                let _ = rt.handle_controller(m, now);
            }
        }
        if let Some(c) = self.controller.as_mut() {
            while let Some((rid, m)) = self.to_controller.pop_front() {
                let _ = c.handle_runtime(rid, m, now);
            }
        }
    }

    fn running_command(&self, which: u8) -> Option<(RuntimeId, CommandId)> {
        let all: Vec<(RuntimeId, CommandId)> = self
            .runtimes
            .iter()
            .flat_map(|(r, rt)| {
                let c = self.controller.as_ref();
                c.into_iter()
                    .flat_map(|c| {
                        c.pending_projection()
                            .commands
                            .keys()
                            .copied()
                            .collect::<Vec<_>>()
                    })
                    .filter(move |cmd| rt.last_seq(*cmd).is_some())
                    .map(move |cmd| (*r, cmd))
            })
            .collect();
        (!all.is_empty()).then(|| all[which as usize % all.len()])
    }

    fn current(&self) -> Option<(LeaseId, RuntimeId, Generation)> {
        let p = self.controller.as_ref()?.pending_projection();
        let lease = *p.workspaces.get(&self.workspace)?;
        let r = p.leases[&lease].current()?;
        Some((lease, r.runtime, r.generation))
    }

    fn client(&mut self, make: impl FnOnce(RequestId) -> ClientRequest) {
        self.request += 1;
        let now = self.now;
        let req = make(RequestId(self.request));
        if let Some(c) = self.controller.as_mut() {
            let _ = c.handle_client(C, req, now);
        }
    }

    fn step(&mut self, op: Op) {
        self.now = self.now.plus(100);
        let now = self.now;
        match op {
            Op::Admit { key, line } => {
                if let Some((lease, runtime, generation)) = self.current() {
                    let mut b = binding();
                    b.workspace = self.workspace;
                    b.lease = lease;
                    b.runtime = runtime;
                    b.generation = generation;
                    b.command_line = format!("run {line}");
                    b.budget.deadline = Millis(20_000);
                    let key: IdempotencyKey = id(0x1000 + key as u128);
                    self.client(|request| ClientRequest::Admit {
                        request,
                        key,
                        binding: b,
                    });
                }
            }
            Op::Cancel { which, stale } => {
                let cmds: Vec<(CommandId, Generation)> = self
                    .controller
                    .iter()
                    .flat_map(|c| c.pending_projection().commands.values())
                    .map(|c| (c.command, c.binding.generation))
                    .collect();
                if !cmds.is_empty() {
                    let (command, g) = cmds[which as usize % cmds.len()];
                    let generation = if stale { g.next() } else { g };
                    self.client(|request| ClientRequest::Cancel {
                        request,
                        command,
                        generation,
                    });
                }
            }
            Op::Output { which } => {
                if let Some((r, c)) = self.running_command(which) {
                    let _ = self.runtimes.get_mut(&r).unwrap().handle_process(
                        c,
                        ProcessOutput::Stdout {
                            data: "out put\n".into(),
                        },
                        now,
                    );
                }
            }
            Op::Exit { which, code } => {
                if let Some((r, c)) = self.running_command(which) {
                    let _ = self.runtimes.get_mut(&r).unwrap().handle_process(
                        c,
                        ProcessOutput::Exit { code },
                        now,
                    );
                }
            }
            Op::Tick => {
                for _ in 0..8 {
                    self.drain();
                    if let (Some(b), Some(c)) = (self.unwritten.take(), self.controller.as_mut()) {
                        self.journal.extend(b.entries.iter().cloned());
                        c.handle_persist_complete(b.batch, now).unwrap();
                    }
                    self.drain();
                    self.deliver();
                    self.check();
                }
            }
            Op::Deliver => self.deliver(),
            Op::PersistOk => {
                if let (Some(b), Some(c)) = (self.unwritten.take(), self.controller.as_mut()) {
                    self.journal.extend(b.entries.iter().cloned());
                    c.handle_persist_complete(b.batch, now).unwrap();
                }
            }
            Op::PersistFail => {
                if let (Some(b), Some(c)) = (self.unwritten.take(), self.controller.as_mut()) {
                    c.handle_persist_failed(b.batch, "QuotaExceededError", now)
                        .unwrap();
                }
            }
            Op::CrashController | Op::HostLoss => {
                self.controller = None;
                self.unwritten = None;
                self.to_runtime.clear();
                self.to_controller.clear();
                self.timers.clear();
                self.connected.clear();
                let cause = if matches!(op, Op::HostLoss) {
                    self.runtimes.clear();
                    StartCause::HostLoss
                } else {
                    StartCause::ControllerRestart
                };
                self.controller = Some(
                    Controller::recover(self.config.clone(), &self.journal, cause, now).unwrap(),
                );
                for (rid, rt) in self.runtimes.iter_mut() {
                    rt.handle_disconnected(now);
                    rt.handle_connected(now);
                    self.connected.insert(*rid);
                }
            }
            Op::Cut => {
                if let Some((_, r, _)) = self.current() {
                    self.connected.remove(&r);
                    if let Some(rt) = self.runtimes.get_mut(&r) {
                        rt.handle_disconnected(now);
                    }
                }
            }
            Op::Reconnect => {
                if let Some((_, r, _)) = self.current() {
                    if let Some(rt) = self.runtimes.get_mut(&r) {
                        self.connected.insert(r);
                        rt.handle_connected(now);
                    }
                }
            }
            Op::TransportLost => {
                if let (Some((_, r, _)), Some(c)) = (self.current(), self.controller.as_mut()) {
                    let _ = c.handle_transport_lost(r, now);
                }
            }
            Op::RuntimeCrash => {
                if let Some((_, r, g)) = self.current() {
                    self.runtimes.remove(&r);
                    self.connected.remove(&r);
                    let _ = self
                        .controller
                        .as_mut()
                        .unwrap()
                        .handle_runtime_crashed(r, g, now);
                }
            }
            Op::Replace => {
                let workspace = self.workspace;
                self.client(|request| ClientRequest::StartRuntime { request, workspace });
            }
            Op::Terminated | Op::CleanupFailed => {
                if let Some((r, g)) = self.terminations.pop() {
                    let c = self.controller.as_mut().unwrap();
                    if matches!(op, Op::Terminated) {
                        self.runtimes.remove(&r);
                        self.connected.remove(&r);
                        let _ = c.handle_runtime_terminated(r, g, now);
                    } else {
                        let _ = c.handle_cleanup_failed(r, g, "still running", now);
                    }
                }
            }
            Op::Timer { which } => {
                if !self.timers.is_empty() {
                    let t = self.timers.remove(which as usize % self.timers.len());
                    self.now = self.now.plus(20_000);
                    let now = self.now;
                    if let Some(c) = self.controller.as_mut() {
                        c.handle_timer(t, now);
                    }
                }
            }
            Op::Heartbeat => {
                for rt in self.runtimes.values_mut() {
                    rt.handle_timer(now);
                }
            }
            Op::Forge { which, seq, kind } => {
                let Some(c) = self.controller.as_mut() else {
                    return;
                };
                let cmds: Vec<(CommandId, RuntimeId, Generation, Option<AttemptId>)> = c
                    .pending_projection()
                    .commands
                    .values()
                    .map(|v| {
                        (
                            v.command,
                            v.binding.runtime,
                            v.binding.generation,
                            v.exposure.attempt(),
                        )
                    })
                    .collect();
                if cmds.is_empty() {
                    return;
                }
                let (command, runtime, generation, attempt) = cmds[which as usize % cmds.len()];
                let attempt = attempt.unwrap_or_else(|| id(0x9999));
                let seq = EventSeq(seq as u64);
                let message = match kind {
                    0 => RuntimeToController::Ack {
                        runtime,
                        generation,
                        command,
                        attempt,
                    },
                    1 => RuntimeToController::Event {
                        runtime,
                        generation,
                        command,
                        seq,
                        body: EventBody::Stdout {
                            data: format!("forged {seq}"),
                        },
                    },
                    2 => RuntimeToController::Event {
                        runtime,
                        generation,
                        command,
                        seq,
                        body: EventBody::Terminal(sample_terminal()),
                    },
                    3 => RuntimeToController::Refuse {
                        runtime,
                        generation,
                        command,
                        attempt,
                        refusal: DispatchRefusal::Capacity,
                    },
                    4 => RuntimeToController::CancelReply {
                        runtime,
                        generation,
                        command,
                        reply: CancelReply::NeverAccepted,
                    },
                    5 => RuntimeToController::Heartbeat {
                        runtime,
                        generation,
                        streams: vec![StreamPosition {
                            command,
                            attempt,
                            last_seq: seq,
                            durable_through: EventSeq::ZERO,
                        }],
                    },
                    _ => RuntimeToController::Event {
                        runtime,
                        generation: generation.next(),
                        command,
                        seq,
                        body: EventBody::Lifecycle { phase: "x".into() },
                    },
                };
                let _ = c.handle_runtime(runtime, message, now);
            }
            Op::Join { which, after } => {
                let cmds: Vec<CommandId> = self
                    .controller
                    .iter()
                    .flat_map(|c| c.projection().commands.keys().copied())
                    .collect();
                if !cmds.is_empty() {
                    let command = cmds[which as usize % cmds.len()];
                    self.client(|request| ClientRequest::Join {
                        request,
                        cursor: Cursor {
                            v: V1,
                            command,
                            after: EventSeq(after as u64),
                        },
                    });
                }
            }
        }
        self.drain();
        self.check();
    }

    fn check(&self) {
        let replayed = Projection::rebuild(self.config.retention, &self.journal)
            .expect("the journal only ever holds legal transitions");
        if let Some(c) = &self.controller {
            assert_eq!(
                c.projection(),
                &replayed,
                "durable projection is the journal's fold"
            );
        }
        for (command, n) in &self.starts {
            assert!(*n <= 1, "command {command} started {n} times");
        }
        // Kept small or whole, never both; every key names one of them.
        for c in replayed.settled.values() {
            assert!(!replayed.commands.contains_key(&c.command));
            assert!(c.outcome.is_terminal() && c.outcome != Outcome::Lost);
        }
        for (key, command) in &replayed.keys {
            let whole = replayed.command(*command).map(|c| c.key);
            let small = replayed.settled_command(*command).map(|c| c.key);
            assert_eq!(whole.or(small), Some(*key));
        }
        for c in replayed.commands.values() {
            if c.outcome == Outcome::Dispatched || c.outcome == Outcome::Running {
                assert!(matches!(c.exposure, Exposure::Acknowledged { .. }));
            }
            let mut at = Outcome::Admitted;
            for step in &c.history {
                assert_eq!(transition(at, step.event), Ok(step.to));
                at = step.to;
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_faults_never_break_journal_invariants(ops in proptest::collection::vec(op(), 1..80)) {
        let mut sim = Sim::new();
        sim.step(Op::Replace);
        sim.step(Op::PersistOk);
        sim.step(Op::Deliver);
        for op in ops {
            sim.step(op);
        }
        // Every record reads back the same through `lifeline_decode`.
        for entry in &sim.journal {
            let text = serde_json::to_string(&entry.record).unwrap();
            prop_assert_eq!(&lifeline_decode::from_str::<JournalRecord>(&text).unwrap(), &entry.record);
        }
        // Snapshot at any point plus the tail equals full replay with the
        // recent window emptied at that point, as a snapshot empties it.
        for cut in [0, sim.journal.len() / 3, sim.journal.len() / 2, sim.journal.len()] {
            let mut at_cut = Projection::rebuild(sim.config.retention, &sim.journal[..cut]).unwrap();
            let snap = at_cut.snapshot();
            at_cut.empty_window();
            for entry in &sim.journal[cut..] {
                at_cut.apply(entry).unwrap();
            }
            let snap: ProjectionSnapshot = decode(&encode(&snap).unwrap()).unwrap();
            prop_assert_eq!(&Projection::from_snapshot(snap, &sim.journal[cut..]).unwrap(), &at_cut);
        }
    }
}

/// The case the randomized run found once a refused command could be offered
/// again: a refusal (here from a runtime lying about room) is proof the attempt
/// never ran, so a new attempt follows, never the same one, and only after the
/// refusal is durable. `Sim` checks both on every dispatch; this pins the path.
#[test]
fn a_refused_command_is_offered_again_only_as_a_new_attempt() {
    let mut sim = refused_for_room();
    for op in [Op::Reconnect, Op::Admit { key: 0, line: 0 }, Op::Tick] {
        sim.step(op);
    }
    let attempts: Vec<usize> = sim.dispatches.values().map(Vec::len).collect();
    assert_eq!(attempts, [2], "one command, offered twice");
}

/// One command, admitted and exposed (the exposure's batch still in
/// flight), that its runtime then refuses for room.
fn refused_for_room() -> Sim {
    let mut sim = Sim::new();
    for op in [
        Op::Replace,
        Op::PersistOk,
        Op::Deliver,
        Op::Admit { key: 0, line: 0 },
        Op::Cut,
        Op::PersistOk,
        Op::Forge {
            which: 0,
            seq: 0,
            kind: 3,
        },
    ] {
        sim.step(op);
    }
    sim
}

/// A command its runtime refused says why on its row for as long as the
/// refusal stands: "not dispatched" alone reads as stuck or failed. Once it
/// is offered again, the row no longer says it.
#[test]
fn a_refused_command_says_why_until_it_is_offered_again() {
    let mut sim = refused_for_room();
    let row = |sim: &Sim| {
        let p = Projection::rebuild(sim.config.retention, &sim.journal).unwrap();
        crate::view::batch_deltas(&p, &sim.journal)
            .into_iter()
            .rev()
            .find_map(|d| match d {
                ViewDelta::Command {
                    outcome, evidence, ..
                } => Some((outcome, evidence)),
                _ => None,
            })
            .expect("the command's row")
    };
    // The exposure's batch is still in flight; the refusal's follows.
    sim.step(Op::PersistOk);
    sim.step(Op::PersistOk);
    assert!(sim.unwritten.is_none());
    assert_eq!(
        row(&sim),
        (
            Outcome::NotDispatched,
            Some(crate::phrase::Phrase::DispatchRefused {
                refusal: DispatchRefusal::Capacity
            })
        )
    );
    for op in [
        Op::Reconnect,
        Op::Admit { key: 0, line: 0 },
        Op::Tick,
        Op::PersistOk,
    ] {
        sim.step(op);
    }
    assert_eq!(sim.dispatches.values().map(Vec::len).sum::<usize>(), 2);
    let (outcome, evidence) = row(&sim);
    assert_ne!(outcome, Outcome::NotDispatched);
    assert_eq!(evidence, None, "{outcome:?}");
}

/// Guards the randomized run against testing nothing: over a fixed set of
/// seeds, every one of the ten outcomes and every recovery kind that the
/// operations can cause must be reached.
#[test]
fn random_faults_reach_every_outcome() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = proptest::collection::vec(op(), 40..120);
    let mut outcomes = BTreeSet::new();
    let mut kinds = BTreeSet::new();
    for _ in 0..300 {
        let ops = strategy.new_tree(&mut runner).unwrap().current();
        let mut sim = Sim::new();
        sim.step(Op::Replace);
        sim.step(Op::PersistOk);
        sim.step(Op::Deliver);
        for op in ops {
            sim.step(op);
        }
        let p = Projection::rebuild(sim.config.retention, &sim.journal).unwrap();
        for c in p.commands.values() {
            outcomes.insert(Outcome::Admitted);
            outcomes.extend(c.history.iter().map(|s| s.to));
        }
        for e in &sim.journal {
            if let JournalRecord::Recovery(ev) = &e.record {
                kinds.insert(ev.kind);
            }
        }
    }
    assert_eq!(outcomes.len(), 10, "reached only {outcomes:?}");
    for kind in [
        RecoveryKind::ControllerRestart,
        RecoveryKind::HostLoss,
        RecoveryKind::TransportLoss,
        RecoveryKind::RuntimeCrash,
        RecoveryKind::CheckpointFailure,
        RecoveryKind::CleanupFailure,
        RecoveryKind::CancelEscalation,
        RecoveryKind::RuntimeReplaced,
    ] {
        assert!(
            kinds.contains(&kind),
            "never reached {kind:?}; reached {kinds:?}"
        );
    }
}

/// Copy output claims the whole output only when the page holds all of it:
/// never while it is still read from the journal or could not be read,
/// whatever else is stored.
#[test]
fn a_copy_claims_the_whole_output_only_when_it_is_shown_and_nothing_more_is_stored() {
    use crate::view::{CopyClaim, OutputRead};
    for more_stored in [false, true] {
        assert_eq!(
            OutputRead::Loading.copy_claim(more_stored),
            CopyClaim::StillLoading
        );
        assert_eq!(
            OutputRead::Unreadable.copy_claim(more_stored),
            CopyClaim::Unreadable
        );
    }
    assert_eq!(OutputRead::Shown.copy_claim(false), CopyClaim::Whole);
    assert_eq!(OutputRead::Shown.copy_claim(true), CopyClaim::OnlyShown);
}

#[test]
fn integers_javascript_cannot_hold_are_found_outside_strings_only() {
    use crate::schema::{first_unsafe_integer, MAX_SAFE_INTEGER};
    let safe = format!(r#"{{"a":{MAX_SAFE_INTEGER},"b":-{MAX_SAFE_INTEGER},"c":[1,2]}}"#);
    assert_eq!(first_unsafe_integer(safe.as_bytes()), None);
    let big = MAX_SAFE_INTEGER + 1;
    assert_eq!(
        first_unsafe_integer(format!(r#"{{"a":[0,{big}]}}"#).as_bytes()),
        Some(big.to_string())
    );
    assert_eq!(
        first_unsafe_integer(format!(r#"{{"a":-{}}}"#, u64::MAX).as_bytes()),
        Some(u64::MAX.to_string())
    );
    // Digits in strings (an escaped quote included) and floats are not integers.
    let strings = format!(r#"{{"s":"\"{big}","t":"{big}","f":12345678901234567.5,"e":1.5e300}}"#);
    assert_eq!(first_unsafe_integer(strings.as_bytes()), None);
}

#[test]
fn a_record_with_an_integer_javascript_would_round_is_not_written() {
    let (_, json) = &examples()[0];
    let mut record: CommandRecord = decode(json.as_bytes()).unwrap();
    record.binding.budget.deadline = Millis(u64::MAX / 2);
    let err = encode(&record).unwrap_err();
    assert!(
        matches!(&err, SchemaError::Invalid { detail, .. } if detail.contains("JavaScript")),
        "{err}"
    );
    record.binding.budget.deadline = Millis(crate::schema::MAX_SAFE_INTEGER);
    assert!(encode(&record).is_ok());
}

/// A gap asks for the runtime's tail once, however many events after it
/// arrive: each event of a resent tail that still had a gap used to ask for
/// the tail again, and the randomized run above once grew 81 requests into
/// 6,561 and then millions, until it ran out of memory.
#[test]
fn a_gap_asks_for_the_runtimes_tail_once() {
    let mut sim = Sim::new();
    for op in [
        Op::Replace,
        Op::PersistOk,
        Op::Deliver,
        Op::Admit { key: 0, line: 0 },
        Op::Tick,
    ] {
        sim.step(op);
    }
    for _ in 0..6 {
        sim.step(Op::Output { which: 0 });
    }
    sim.drain();
    let events = |sim: &Sim| {
        sim.to_controller
            .iter()
            .filter(|(_, m)| matches!(m, RuntimeToController::Event { .. }))
            .count()
    };
    assert_eq!(events(&sim), 6, "six output events on their way");
    // The first is lost: the five after it each show the gap.
    let first = sim
        .to_controller
        .iter()
        .position(|(_, m)| matches!(m, RuntimeToController::Event { .. }))
        .expect("an event");
    sim.to_controller.remove(first);
    let resends = |sim: &Sim| {
        sim.to_runtime
            .iter()
            .filter(|(_, m)| matches!(m, ControllerToRuntime::Resend { .. }))
            .count()
    };
    sim.deliver();
    sim.drain();
    assert_eq!(resends(&sim), 1, "one request for the tail");
    // The runtime answers with its whole tail, which the controller now
    // takes in order: nothing more is asked, and every event is recorded.
    sim.step(Op::Tick);
    assert_eq!(resends(&sim), 0);
    let recorded = sim.controller.as_ref().and_then(|c| {
        c.pending_projection()
            .commands
            .values()
            .next()
            .map(|c| c.last_seq)
    });
    // Its start (recorded during the first tick) and the six outputs.
    assert_eq!(recorded, Some(EventSeq(7)));
}
