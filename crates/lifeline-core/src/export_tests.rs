//! Evidence export and import: columns, membership, round trip, limits,
//! corrupt lines, the archive, and the planted-secret scan.

use std::marker::PhantomData;

use super::*;
use crate::agent::plan_key;
use crate::command::tests::id;
use crate::command::{Binding, Budget, CommandRecord};
use crate::event::{retain_output, EventRecord, TerminalResult};
use crate::id::{EventSeq, Generation};
use crate::journal::{AckSource, TurnAgent, TurnStatus};
use crate::outcome::{Outcome, OutcomeEvent, TerminalStatus};
use crate::phrase::Phrase;
use crate::profile::{launch_environment, AgentBudget, EnvValue, EnvVar, ProfileRef, Secret};
use crate::session::Environment;
use crate::session_record::SessionRecord;
use crate::view::{session_deltas, ViewDelta};

const PLANTED: &str = "sk-lifeline-PLANTED-export-5c1d";

#[derive(Default)]
struct J {
    entries: Vec<JournalEntry>,
    artifacts: BTreeMap<Digest, String>,
}

impl J {
    fn push(&mut self, record: JournalRecord) {
        let position = self.entries.len() as u64 + 1;
        let entry = JournalEntry {
            v: V1,
            position,
            at: Millis(1_000 + position),
            record,
        };
        entry.validate().expect("a valid test entry");
        self.entries.push(entry);
    }

    /// A session on its own workspace, runtime and turn running `lines`,
    /// each printing `output` (kept inline up to 16 bytes, then as an
    /// artifact), the way the controller writes them.
    fn session(&mut self, base: u128, title: &str, lines: &[&str], output: &str) -> SessionId {
        let session: SessionId = id(base + 1);
        let workspace: WorkspaceId = id(base + 2);
        let lease: LeaseId = id(base + 4);
        let runtime: RuntimeId = id(base + 5);
        let turn: TurnId = id(base + 7);
        self.push(JournalRecord::SessionOpened {
            session,
            workspace,
            title: title.into(),
        });
        self.push(JournalRecord::Session {
            record: SessionRecord::Created {
                session,
                workspace,
                environment: Environment::Worker,
                profile: id(base + 3),
            },
        });
        self.push(JournalRecord::LeaseGranted { workspace, lease });
        self.push(JournalRecord::RuntimeAssigned {
            lease,
            runtime,
            generation: Generation(1),
            execution: id(base + 6),
        });
        let prompt: String = lines.iter().map(|l| format!("$ {l}\n")).collect();
        self.push(JournalRecord::TurnRecorded {
            session,
            turn,
            prompt,
            plan: lines.iter().map(|l| l.to_string()).collect(),
            agent: TurnAgent::BuiltIn,
        });
        for (i, line) in lines.iter().enumerate() {
            let command: CommandId = id(base + 10 + i as u128);
            let attempt = id(base + 40 + i as u128);
            self.push(JournalRecord::CommandAdmitted(CommandRecord {
                v: V1,
                command,
                key: plan_key(turn, i),
                binding: Binding {
                    workspace,
                    lease,
                    generation: Generation(1),
                    runtime,
                    session,
                    working_directory: "/".into(),
                    capabilities: Default::default(),
                    budget: Budget {
                        deadline: Millis(1 << 40),
                        max_output_bytes: 1 << 20,
                    },
                    command_line: line.to_string(),
                },
                admitted_at: Millis(5),
                reissue_of: None,
            }));
            self.push(JournalRecord::DispatchExposed {
                command,
                attempt,
                runtime,
                generation: Generation(1),
            });
            self.push(JournalRecord::Acknowledged {
                command,
                attempt,
                via: AckSource::Ack,
            });
            self.push(JournalRecord::OutcomeChanged {
                command,
                event: OutcomeEvent::Acknowledged,
                from: Outcome::Admitted,
                to: Outcome::Dispatched,
            });
            self.push(JournalRecord::OutcomeChanged {
                command,
                event: OutcomeEvent::Started,
                from: Outcome::Dispatched,
                to: Outcome::Running,
            });
            let (chunk, blob) =
                retain_output(&crate::event::HashedText::new(output), 0, 16, 1 << 20);
            if let Some(blob) = blob {
                if !self.artifacts.contains_key(&blob.digest()) {
                    self.push(JournalRecord::ArtifactStored {
                        digest: blob.digest(),
                        len: blob.data().len() as u64,
                    });
                    self.artifacts.insert(blob.digest(), blob.into_data());
                }
            }
            self.push(JournalRecord::Event(EventRecord {
                v: V1,
                command,
                seq: EventSeq(1),
                digest: Digest::of(output.as_bytes()),
                body: RetainedBody::Stdout(chunk),
            }));
            self.push(JournalRecord::Event(EventRecord {
                v: V1,
                command,
                seq: EventSeq(2),
                digest: Digest::of(b"terminal"),
                body: RetainedBody::Terminal(TerminalResult {
                    v: V1,
                    status: TerminalStatus::Completed,
                    exit_code: Some(0),
                    message: String::new(),
                }),
            }));
            self.push(JournalRecord::OutcomeChanged {
                command,
                event: OutcomeEvent::Finished(TerminalStatus::Completed),
                from: Outcome::Running,
                to: Outcome::Completed,
            });
        }
        self.push(JournalRecord::TurnFinished {
            turn,
            status: TurnStatus::Completed,
            reply: format!("Ran {} commands.", lines.len()),
            ending: None,
        });
        session
    }
}

/// Two sessions; the second prints what the first did, so its artifact was
/// stored (deduplicated) by the first session's batch.
fn two_sessions() -> (J, SessionId, SessionId) {
    let mut j = J::default();
    let big: String = (1..=2000).map(|n| format!("{n}\n")).collect();
    let a = j.session(0x1000, "first", &["echo hi > a.txt", "seq 1 2000"], &big);
    let b = j.session(0x2000, "second", &["seq 1 2000"], &big);
    (j, a, b)
}

fn objects(lines: &[String]) -> Vec<serde_json::Map<String, serde_json::Value>> {
    lines
        .iter()
        .map(|l| match serde_json::from_str(l).expect("valid JSON") {
            serde_json::Value::Object(o) => o,
            other => panic!("not an object: {other}"),
        })
        .collect()
}

#[test]
fn every_line_is_one_flat_object_with_the_same_columns() {
    let (j, a, _) = two_sessions();
    let lines = export_lines(&j.entries, a);
    assert!(!lines.is_empty());
    for (line, o) in lines.iter().zip(objects(&lines)) {
        assert!(!line.contains('\n'));
        let keys: Vec<&str> = o.keys().map(String::as_str).collect();
        let mut want = COLUMNS.to_vec();
        want.sort();
        let mut got = keys.clone();
        got.sort();
        assert_eq!(got, want, "{line}");
        assert!(o["position"].is_u64() && o["at_ms"].is_u64());
        assert!(o["kind"].is_string() && o["session"].is_string());
        assert!(o["record"].is_object());
        for nullable in ["turn", "command", "outcome", "text", "artifact"] {
            assert!(
                o[nullable].is_null() || o[nullable].is_string(),
                "{nullable}"
            );
        }
        assert_eq!(o["kind"], o["record"]["type"]);
    }
}

#[test]
fn a_session_export_holds_its_entries_and_no_other_sessions() {
    let (j, a, b) = two_sessions();
    let la = session_lines(&j.entries, a);
    let lb = session_lines(&j.entries, b);
    // Every entry is in one export, except the shared artifact's, in both.
    assert_eq!(la.len() + lb.len(), j.entries.len() + 1);
    assert!(la.iter().all(|l| l.session == a) && lb.iter().all(|l| l.session == b));
    let kinds =
        |ls: &[ExportLine<&JournalRecord>], k: &str| ls.iter().filter(|l| l.kind == k).count();
    assert_eq!(kinds(&la, "command_admitted"), 2);
    assert_eq!(kinds(&lb, "command_admitted"), 1);
    assert_eq!(kinds(&la, "session_opened"), 1);
    assert_eq!(kinds(&la, "session"), 1);
    // The terminal event carries its status; commands carry their turn.
    assert!(la
        .iter()
        .any(|l| l.kind == "event" && l.outcome.as_deref() == Some("completed")));
    assert!(la
        .iter()
        .filter(|l| l.command.is_some())
        .all(|l| l.turn.is_some()));
    // B's output is the same artifact A stored: B's export names it too and
    // carries the entry that stored it.
    let digest = *j.artifacts.keys().next().unwrap();
    assert_eq!(artifact_digests(&j.entries, b), vec![digest]);
    assert!(lb
        .iter()
        .any(|l| l.kind == "artifact_stored" && l.artifact == Some(digest)));
    assert!(lb
        .iter()
        .any(|l| l.kind == "event" && l.artifact == Some(digest)));
    assert!(export_lines(&j.entries, id(0x9999)).is_empty());
}

/// A turn the core ended reaches the page as its ending, to be worded in
/// the reader's language, with its English as the reply; an export keeps it.
#[test]
fn a_turn_the_core_ended_crosses_to_the_page_and_the_export_as_its_ending() {
    use crate::ending::TurnEnding;
    let mut j = J::default();
    let session = j.session(0x3000, "ended", &["echo a"], "a\n");
    let turn: TurnId = id(0x3100);
    j.push(JournalRecord::TurnRecorded {
        session,
        turn,
        prompt: "$ echo b\n$ echo c\n".into(),
        plan: vec!["echo b".into(), "echo c".into()],
        agent: TurnAgent::BuiltIn,
    });
    let ending = TurnEnding::StoppedBefore {
        line: "echo b".into(),
        left: 2,
    };
    j.push(JournalRecord::TurnFinished {
        turn,
        status: TurnStatus::Cancelled,
        reply: ending.to_string(),
        ending: Some(ending.clone()),
    });
    let policy = RetentionPolicy::default();
    let whole = Projection::rebuild(policy, &j.entries).unwrap();
    let deltas = session_deltas(&whole, session);
    let endings: Vec<_> = deltas
        .iter()
        .filter_map(|d| match d {
            ViewDelta::Turn {
                turn: t,
                reply,
                ending,
                ..
            } => Some((*t, reply.clone(), ending.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(endings.len(), 2);
    // The agent's own reply has no ending.
    assert_eq!(endings[0].2, None);
    assert_eq!(
        endings[1],
        (
            turn,
            Some("Stopped before `echo b` ran; 2 planned commands were not run.".into()),
            Some(Phrase::TurnEnded { ending })
        )
    );
    let lines = export_lines(&j.entries, session);
    let entries = import_lines(lines.iter().map(String::as_str)).unwrap();
    let imported = Projection::rebuild(policy, &entries).unwrap();
    assert_eq!(session_deltas(&imported, session), deltas);
}

#[test]
fn an_imported_export_folds_to_the_same_transcript_as_the_original() {
    let (j, a, b) = two_sessions();
    let policy = RetentionPolicy::default();
    let whole = Projection::rebuild(policy, &j.entries).unwrap();
    for session in [a, b] {
        let lines = export_lines(&j.entries, session);
        let entries = import_lines(lines.iter().map(String::as_str)).unwrap();
        assert_eq!(entries.len(), lines.len());
        assert!(entries
            .iter()
            .enumerate()
            .all(|(i, e)| e.position == i as u64 + 1));
        let imported = Projection::rebuild(policy, &entries).unwrap();
        assert_eq!(
            session_deltas(&imported, session),
            session_deltas(&whole, session)
        );
        // The same as folding the session's own entries, renumbered.
        let own: Vec<JournalEntry> = session_lines(&j.entries, session)
            .into_iter()
            .enumerate()
            .map(|(i, l)| JournalEntry {
                v: V1,
                position: i as u64 + 1,
                at: Millis(l.at_ms),
                record: l.record.clone(),
            })
            .collect();
        assert_eq!(imported, Projection::rebuild(policy, &own).unwrap());
        // Through the archive and the text form too.
        let artifacts: Vec<(Digest, String)> = artifact_digests(&j.entries, session)
            .into_iter()
            .map(|d| (d, j.artifacts[&d].clone()))
            .collect();
        let tar = bundle(&lines, &artifacts, 1_700_000_000);
        let (jsonl, files) = unbundle(&tar).unwrap();
        assert_eq!(files.len(), artifacts.len());
        let done = import_session(&jsonl, policy).unwrap();
        assert_eq!(done.session, session);
        // An import keeps every settled command's events (it has no journal
        // to read them back from); with fewer commands than the recent
        // window the fold is otherwise the same.
        let mut got = done.projection;
        assert_eq!(got.policy.settled_with_events, usize::MAX);
        got.policy = policy;
        assert_eq!(got, imported);
        assert_eq!(done.lines, lines.len());
    }
}

#[test]
fn a_corrupt_line_is_named_by_its_number() {
    let (j, a, b) = two_sessions();
    let mut lines = export_lines(&j.entries, a);
    let policy = RetentionPolicy::default();
    // Not JSON.
    let mut bad = lines.clone();
    bad[3] = "{not json".into();
    let e = import_lines(bad.iter().map(String::as_str)).unwrap_err();
    assert!(matches!(e, ImportError::Line { line: 4, .. }), "{e}");
    assert!(e.to_string().starts_with("line 4: "), "{e}");
    // Valid JSON whose record fails the schema checks.
    let assigned = lines
        .iter()
        .position(|l| l.contains("\"runtime_assigned\""))
        .unwrap();
    // Edited in the text: records keep their tag first (serde writes it
    // first), which a `serde_json::Value` (sorted keys) would not.
    let generation = objects(&lines)[assigned]["record"]["generation"].clone();
    bad = lines.clone();
    bad[assigned] = bad[assigned].replacen(
        &format!("\"generation\":{generation}"),
        "\"generation\":0",
        1,
    );
    assert_ne!(bad[assigned], lines[assigned]);
    let e = import_lines(bad.iter().map(String::as_str)).unwrap_err();
    assert!(
        matches!(&e, ImportError::Line { line, detail } if *line == assigned + 1 && detail.contains("generation")),
        "{e}"
    );
    // A line from another session.
    bad = lines.clone();
    bad.insert(5, export_lines(&j.entries, b)[0].clone());
    let e = import_lines(bad.iter().map(String::as_str)).unwrap_err();
    assert!(matches!(e, ImportError::Line { line: 6, .. }), "{e}");
    // Well-formed lines that do not fold: a dropped admission.
    let admitted = lines
        .iter()
        .position(|l| l.contains("\"command_admitted\""))
        .unwrap();
    lines.remove(admitted);
    let text = lines.join("\n");
    let e = import_session(&text, policy).unwrap_err();
    assert!(
        matches!(e, ImportError::Line { line, .. } if line == admitted + 1),
        "{e}"
    );
    // Reordered lines.
    let mut swapped = export_lines(&j.entries, a);
    swapped.swap(0, 1);
    let e = import_lines(swapped.iter().map(String::as_str)).unwrap_err();
    assert!(matches!(e, ImportError::Line { line: 2, .. }), "{e}");
    // No session at all.
    assert!(matches!(
        import_session("\n\n", policy),
        Err(ImportError::Session(_))
    ));
}

#[test]
fn imports_are_bounded() {
    let long = "x".repeat(MAX_LINE_BYTES + 1);
    assert!(matches!(
        import_lines([long.as_str()]),
        Err(ImportError::LineTooLong { line: 1, .. })
    ));
    let (j, a, _) = two_sessions();
    let lines = export_lines(&j.entries, a);
    let e = parse(lines.iter().map(String::as_str), 3, &json_line).unwrap_err();
    assert_eq!(e, ImportError::TooManyLines { limit: 3 });
    assert_eq!(
        parse(lines.iter().map(String::as_str), lines.len(), &json_line)
            .unwrap()
            .len(),
        lines.len()
    );
    let huge = vec![0u8; MAX_ARCHIVE_BYTES + 1];
    assert!(matches!(untar(&huge), Err(ImportError::Archive(_))));
}

#[test]
fn the_archive_is_plain_ustar_with_valid_checksums() {
    let files: [(&str, &[u8]); 2] = [("session.jsonl", b"{}\n"), ("artifacts/ab", b"")];
    let tar = tar(&files, 42);
    assert_eq!(tar.len() % 512, 0);
    assert_eq!(&tar[257..263], b"ustar\0");
    assert_eq!(tar.len(), 512 + 512 + 512 + 1024);
    let read = untar(&tar).unwrap();
    assert_eq!(read.len(), 2);
    assert_eq!(read[0], ("session.jsonl".to_string(), &b"{}\n"[..]));
    let mut damaged = tar.clone();
    damaged[0] ^= 1;
    assert!(untar(&damaged).is_err());
    let mut cut = tar.clone();
    cut.truncate(600);
    assert!(untar(&cut).is_err());
    // An artifact whose content does not match its name is refused.
    let forged = super::tar(&[("session.jsonl", b""), ("artifacts/00", b"x")], 0);
    assert!(unbundle(&forged).is_err());
}

/// Autoref probe: does `T` implement `Serialize`?
struct Probe<T>(PhantomData<T>);
trait Serializes {
    fn serializes(&self) -> bool {
        true
    }
}
impl<T: Serialize> Serializes for Probe<T> {}
trait DoesNot {
    fn serializes(&self) -> bool {
        false
    }
}
impl<T> DoesNot for &Probe<T> {}

#[test]
// The borrows are the autoref probe itself, not noise.
#[allow(clippy::needless_borrow)]
fn a_planted_secret_never_reaches_an_export() {
    // A `Secret` value cannot be serialised at all, and its Debug hides it.
    assert!(!(&Probe::<Secret>(PhantomData)).serializes());
    assert!((&Probe::<ProfileRef>(PhantomData)).serializes());
    let secret = Secret::new(PLANTED.into());
    assert!(!format!("{secret:?}").contains(PLANTED));
    // A profile whose key and an env var hold it: the launch environment
    // carries it, the records the controller writes carry only references.
    let cred = id(0x4001);
    let env = vec![EnvVar {
        name: "TOKEN".into(),
        value: EnvValue::Secret(cred),
    }];
    let launched = launch_environment(&[("PWD", "/".into())], &env, &[(cred, secret)]).unwrap();
    assert!(launched.iter().any(|(_, v)| v.expose() == PLANTED));
    let (mut j, a, _) = two_sessions();
    let profile = ProfileRef {
        id: id(0x5001),
        revision: 3,
    };
    j.push(JournalRecord::Session {
        record: SessionRecord::ProfileSelected {
            session: a,
            profile: profile.id,
        },
    });
    j.push(JournalRecord::TurnRecorded {
        session: a,
        turn: id(0x1900),
        prompt: "hello".into(),
        plan: vec![],
        agent: TurnAgent::Model {
            profile,
            provider: "openai".into(),
            model: "m".into(),
            budget: AgentBudget::default(),
            tools: Default::default(),
        },
    });
    let lines = export_lines(&j.entries, a);
    assert!(lines.iter().any(|l| l.contains("\"profile_selected\"")));
    let all = lines.join("\n");
    assert!(!all.contains(PLANTED));
    let artifacts: Vec<(Digest, String)> = j.artifacts.clone().into_iter().collect();
    let tar = bundle(&lines, &artifacts, 0);
    assert!(!tar.windows(PLANTED.len()).any(|w| w == PLANTED.as_bytes()));
}

/// `LIFELINE_EXPORT_SAMPLE=<dir>` writes a sample archive's files there
/// (for reading them with DuckDB by hand).
#[test]
fn sample_for_duckdb() {
    let Some(dir) = std::env::var_os("LIFELINE_EXPORT_SAMPLE") else {
        return;
    };
    let (j, a, _) = two_sessions();
    let lines = export_lines(&j.entries, a);
    let dir = std::path::PathBuf::from(dir);
    std::fs::write(dir.join(SESSION_FILE), lines.join("\n") + "\n").unwrap();
}

/// The two passes the controller makes over the journal, batch by batch,
/// never holding it whole: the same lines and artifacts as one pass over
/// all of it, for every batch size — including the artifact B names but A's
/// batch stored, which only the first pass can know belongs to B.
#[test]
fn a_batched_two_pass_export_equals_the_whole_journal_export() {
    let (j, a, b) = two_sessions();
    for session in [a, b, id(0x9999)] {
        for size in [1, 2, 3, 7, 64, j.entries.len()] {
            let mut scan = Scan::new(session);
            for batch in j.entries.chunks(size) {
                scan.feed(batch);
            }
            let selection = scan.finish();
            let lines: Vec<String> = j
                .entries
                .chunks(size)
                .flat_map(|batch| selection.lines(batch))
                .collect();
            assert_eq!(lines, export_lines(&j.entries, session), "batch {size}");
            assert_eq!(
                selection.artifact_digests(),
                artifact_digests(&j.entries, session)
            );
            assert_eq!(selection.is_empty(), lines.is_empty());
        }
    }
}

/// A model turn's tokens are the sum of its recorded replies: the page
/// gets them with the turn, again after each reply, and from scratch.
#[test]
fn a_model_turn_carries_the_tokens_of_its_replies_to_the_page() {
    use crate::view::{batch_deltas, ViewDelta};
    let (mut j, a, _) = two_sessions();
    let turn: TurnId = id(0x1a00);
    j.push(JournalRecord::TurnRecorded {
        session: a,
        turn,
        prompt: "hello".into(),
        plan: vec![],
        agent: TurnAgent::Model {
            profile: ProfileRef {
                id: id(0x5001),
                revision: 1,
            },
            provider: "anthropic".into(),
            model: "m".into(),
            budget: AgentBudget::default(),
            tools: Default::default(),
        },
    });
    let call = r#"[{"id":"c1","name":"run_command","arguments":"{}"}]"#;
    for (step, base, calls, input, output) in [
        (1u32, 0x1a10u128, call, 1200u64, 30u64),
        (2, 0x1a20, "[]", 34, 26),
    ] {
        j.push(JournalRecord::ProviderRequested {
            request: id(base),
            turn,
            step,
        });
        // The shape every journal has written since model turns began.
        let old = format!(
            r#"{{"type":"provider_replied","request":"{}","text":"t","tool_calls":{calls},"stop":"end_turn","input_tokens":{input},"output_tokens":{output}}}"#,
            crate::id::ProviderRequestId::from_u128(base).unwrap()
        );
        j.push(serde_json::from_str(&old).expect("a recorded reply decodes"));
    }
    let tokens = |deltas: &[ViewDelta]| -> Vec<(u64, u64)> {
        deltas
            .iter()
            .filter_map(|d| match d {
                ViewDelta::Turn {
                    turn: t,
                    input_tokens,
                    output_tokens,
                    ..
                } if *t == turn => Some((*input_tokens, *output_tokens)),
                _ => None,
            })
            .collect()
    };
    let policy = RetentionPolicy::default();
    let whole = Projection::rebuild(policy, &j.entries).unwrap();
    assert_eq!(tokens(&session_deltas(&whole, a)), vec![(1234, 56)]);
    let last = &j.entries[j.entries.len() - 1..];
    assert_eq!(tokens(&batch_deltas(&whole, last)), vec![(1234, 56)]);
    // Before any reply the turn has none.
    let first = Projection::rebuild(policy, &j.entries[..j.entries.len() - 4]).unwrap();
    assert_eq!(tokens(&session_deltas(&first, a)), vec![(0, 0)]);
}

/// A settled command whose events did not all replay (one was set aside
/// as unreadable, and the terminal event after the hole was refused)
/// still shows the outcome its own record gives, and its row says why it
/// has no output and no exit status. A command read whole says nothing.
#[test]
fn a_command_whose_events_did_not_replay_says_so_on_its_row() {
    let mut j = J::default();
    let session = j.session(0x900, "holes", &["echo a"], "a\n");
    let row = |p: &Projection| {
        session_deltas(p, session)
            .into_iter()
            .find_map(|d| match d {
                ViewDelta::Command {
                    outcome,
                    exit_code,
                    evidence,
                    ..
                } => Some((outcome, exit_code, evidence)),
                _ => None,
            })
            .expect("the command's row")
    };
    let policy = RetentionPolicy::default();
    let whole = Projection::rebuild(policy, &j.entries).unwrap();
    assert_eq!(row(&whole), (Outcome::Completed, Some(0), None));

    let is_event = |e: &JournalEntry, terminal: bool| match &e.record {
        JournalRecord::Event(ev) => matches!(ev.body, RetainedBody::Terminal(_)) == terminal,
        _ => false,
    };
    for terminal in [false, true] {
        let mut damaged = j.entries.clone();
        damaged.retain(|e| !is_event(e, terminal));
        let (p, refused) = Projection::salvage(policy, None, &damaged, 64);
        let hole = j
            .entries
            .iter()
            .find(|e| is_event(e, terminal))
            .expect("the event")
            .position;
        // The hole is reported as missing, and only the hole: an entry
        // after it that is there but refused is reported as refused.
        let missing: Vec<String> = refused
            .iter()
            .filter(|r| r.detail.contains("missing"))
            .map(|r| r.to_string())
            .collect();
        assert_eq!(
            missing,
            [format!(
                "journal entry at position {hole} cannot be replayed: entry {hole} is missing"
            )]
        );
        assert!(
            terminal || refused.iter().any(|r| r.position == hole + 1),
            "the terminal event after the hole is refused: {refused:?}"
        );
        assert_eq!(
            row(&p),
            (Outcome::Completed, None, Some(Phrase::EventsUnreadable)),
            "terminal event lost: {terminal}"
        );
    }
}
