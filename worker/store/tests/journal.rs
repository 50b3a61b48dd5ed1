//! The journal store, exercised in a real IndexedDB inside a dedicated worker
//! of headless Chromium (where the controller runs in production).
//!
//! Histories come from the real `lifeline_core::Controller` and `Runtime`
//! state machines: every `Persist` effect goes through
//! `Journal::write_batch` before `handle_persist_complete`, exactly as the
//! worker shell does it.

use std::collections::{BTreeMap, VecDeque};

use idb::{DatabaseEvent, Factory, KeyPath, ObjectStoreParams, TransactionMode};
use lifeline_core::schema::limits;
use lifeline_core::*;
use lifeline_store::durability::{self, Durability};
use lifeline_store::journal::{
    database_exists, durability_for, read_snapshot_text, store, Journal, JournalError, Load,
    Loaded, Quarantined, WriterEpoch, SCHEMA_VERSION,
};
use lifeline_store::storage;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

mod common;
use common::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

// ---------------------------------------------------------------------------
// Helpers

/// [`Journal::load`] with the snapshot reader, as a controller that has
/// fetched it.
async fn load(journal: &Journal) -> Result<Loaded, JournalError> {
    match journal.load(Some(read_snapshot_text)).await? {
        Load::Loaded(loaded) => Ok(loaded),
        Load::SnapshotReaderNeeded => panic!("a load given a reader asked for one"),
    }
}

const CLIENT: ClientId = ClientId(1);

/// The real controller and runtime, with the journal as the only store.
struct World {
    now: Millis,
    config: ControllerConfig,
    controller: Controller,
    journal: Journal,
    epoch: WriterEpoch,
    /// Every entry whose batch `write_batch` confirmed.
    written: Vec<JournalEntry>,
    runtimes: BTreeMap<RuntimeId, Runtime>,
    to_runtime: VecDeque<(RuntimeId, ControllerToRuntime)>,
    to_controller: VecDeque<(RuntimeId, RuntimeToController)>,
    inbox: Vec<ClientMessage>,
    next_request: u64,
    batches: usize,
}

impl World {
    async fn new(name: &str) -> World {
        delete_db(name).await;
        let journal = Journal::open(name).await.unwrap();
        let epoch = journal.claim_writer().await.unwrap();
        let config = ControllerConfig {
            entropy: name.as_bytes().to_vec(),
            retention: RetentionPolicy {
                inline_output_bytes: 64,
                ..RetentionPolicy::default()
            },
            ..ControllerConfig::default()
        };
        let now = Millis(1_000);
        World {
            now,
            controller: Controller::new(config.clone(), now),
            config,
            journal,
            epoch,
            written: Vec::new(),
            runtimes: BTreeMap::new(),
            to_runtime: VecDeque::new(),
            to_controller: VecDeque::new(),
            inbox: Vec::new(),
            next_request: 0,
            batches: 0,
        }
    }

    async fn settle(&mut self) {
        for _ in 0..100_000 {
            let mut progress = false;
            let now = self.now;
            for effect in self.controller.drain_effects() {
                progress = true;
                match effect {
                    ControllerEffect::Persist(batch) => {
                        self.journal.write_batch(&batch, self.epoch).await.unwrap();
                        self.batches += 1;
                        self.written.extend(batch.entries.iter().cloned());
                        self.controller
                            .handle_persist_complete(batch.batch, now)
                            .unwrap();
                    }
                    ControllerEffect::SendToRuntime { runtime, message } => {
                        self.to_runtime.push_back((runtime, message))
                    }
                    ControllerEffect::NotifyClient { message, .. } => self.inbox.push(message),
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
                    }
                    _ => {}
                }
            }
            for (rid, rt) in self.runtimes.iter_mut() {
                for effect in rt.drain_effects() {
                    progress = true;
                    if let RuntimeEffect::Send(m) = effect {
                        self.to_controller.push_back((*rid, m));
                    }
                }
            }
            while let Some((rid, m)) = self.to_runtime.pop_front() {
                progress = true;
                if let Some(rt) = self.runtimes.get_mut(&rid) {
                    let _ = rt.handle_controller(m, now);
                }
            }
            while let Some((rid, m)) = self.to_controller.pop_front() {
                progress = true;
                let _ = self.controller.handle_runtime(rid, m, now);
            }
            if !progress {
                return;
            }
        }
        panic!("the world did not settle");
    }

    async fn request(&mut self, make: impl FnOnce(RequestId) -> ClientRequest) -> RequestId {
        self.next_request += 1;
        let request = RequestId(self.next_request);
        let now = self.now;
        self.controller
            .handle_client(CLIENT, make(request), now)
            .unwrap();
        self.settle().await;
        request
    }

    /// Starts a runtime and admits one command; returns (runtime, command).
    async fn start_command(&mut self, workspace: u128, line: &str) -> (RuntimeId, CommandId) {
        let workspace: WorkspaceId = id(workspace);
        let request = self
            .request(|request| ClientRequest::StartRuntime { request, workspace })
            .await;
        let (lease, runtime, generation) = self
            .inbox
            .iter()
            .find_map(|m| match m {
                ClientMessage::RuntimeStarted {
                    request: q,
                    lease,
                    runtime,
                    generation,
                    ..
                } if *q == request => Some((*lease, *runtime, *generation)),
                _ => None,
            })
            .expect("runtime started");
        let binding = Binding {
            workspace,
            lease,
            generation,
            runtime,
            session: id(0x5e55),
            working_directory: "/".into(),
            capabilities: Default::default(),
            budget: Budget {
                deadline: Millis(1 << 40),
                max_output_bytes: 1 << 30,
            },
            command_line: line.into(),
        };
        self.next_request += 1;
        let key: IdempotencyKey = id(0x4b45_0000 + self.next_request as u128);
        let request = self
            .request(|request| ClientRequest::Admit {
                request,
                key,
                binding,
            })
            .await;
        let command = self
            .inbox
            .iter()
            .find_map(|m| match m {
                ClientMessage::Admitted {
                    request: q,
                    command,
                    ..
                } if *q == request => Some(*command),
                _ => None,
            })
            .expect("admitted");
        (runtime, command)
    }

    async fn output(&mut self, runtime: RuntimeId, command: CommandId, text: &str) {
        let now = self.now;
        self.runtimes
            .get_mut(&runtime)
            .unwrap()
            .handle_process(
                command,
                ProcessOutput::Stdout {
                    data: text.to_string(),
                },
                now,
            )
            .unwrap();
        self.settle().await;
    }

    async fn exit(&mut self, runtime: RuntimeId, command: CommandId, code: i32) {
        let now = self.now;
        self.runtimes
            .get_mut(&runtime)
            .unwrap()
            .handle_process(command, ProcessOutput::Exit { code }, now)
            .unwrap();
        self.settle().await;
    }

    fn full_replay(&self) -> Projection {
        Projection::rebuild(self.config.retention, &self.written).unwrap()
    }

    /// The fold of every entry written when a snapshot at `position` was
    /// loaded and the rest read after it: the full replay, but for the
    /// recent window, which a snapshot empties.
    fn folded_through(&self, position: u64) -> Projection {
        let (before, after) = self.written.split_at(position as usize);
        let mut p = Projection::rebuild(self.config.retention, before).unwrap();
        p.empty_window();
        for entry in after {
            p.apply(entry).unwrap();
        }
        p
    }
}

/// A short, varied history: lease, runtime, two commands with output (one
/// long enough for an artifact), ACKs, exits.
async fn some_history(world: &mut World) {
    let (rt, a) = world.start_command(0x77, "echo one").await;
    world.output(rt, a, "one\n").await;
    world.exit(rt, a, 0).await;
    let (rt, b) = world.start_command(0x78, "seq 1 100").await;
    for i in 0..5 {
        world
            .output(rt, b, &format!("line {i} {}\n", "x".repeat(40)))
            .await;
    }
    world.exit(rt, b, 1).await;
}

// ---------------------------------------------------------------------------
// Schema and migrations

#[wasm_bindgen_test]
async fn a_fresh_database_gets_every_store_and_index_of_schema_2() {
    let name = "lifeline-test-fresh";
    delete_db(name).await;
    let journal = Journal::open(name).await.unwrap();
    assert_eq!(journal.version(), 2);
    assert_eq!(SCHEMA_VERSION, 2);
    journal.close();

    let db = raw(name).await;
    let mut names = db.store_names();
    names.sort();
    let mut expected: Vec<String> = store::ALL.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(names, expected);
    let tx = db
        .transaction(&store::ALL, TransactionMode::ReadOnly)
        .unwrap();
    for name in [store::COMMANDS, store::EVENTS, store::EVIDENCE] {
        assert_eq!(
            tx.object_store(name).unwrap().index_names(),
            vec![store::POSITION_INDEX.to_string()],
            "{name} has the position index"
        );
    }
    let records = tx.object_store(store::RECORDS).unwrap();
    assert_eq!(
        records.key_path().unwrap(),
        Some(KeyPath::new_single("position"))
    );
    let quarantine = tx.object_store(store::QUARANTINE).unwrap();
    assert!(quarantine.auto_increment());
    assert_eq!(quarantine.key_path().unwrap(), None);
    db.close();
}

/// A database exactly as the version 1 build created it, held open by a
/// connection without a versionchange handler.
async fn create_v1(name: &str) -> idb::Database {
    let mut request = Factory::new().unwrap().open(name, Some(1)).unwrap();
    request.on_upgrade_needed(|event| {
        let db = event.database().unwrap();
        let keyed = |path: &str| {
            let mut p = ObjectStoreParams::new();
            p.key_path(Some(KeyPath::new_single(path)));
            p
        };
        db.create_object_store("commands", keyed("command_id"))
            .unwrap();
        let mut events = ObjectStoreParams::new();
        events.key_path(Some(KeyPath::new_array(vec!["command_id", "seq"])));
        db.create_object_store("events", events).unwrap();
        db.create_object_store("artifacts", keyed("digest"))
            .unwrap();
        db.create_object_store("snapshots", keyed("position"))
            .unwrap();
        db.create_object_store("evidence", keyed("evidence_id"))
            .unwrap();
        db.create_object_store("meta", keyed("key")).unwrap();
    });
    request.await.unwrap()
}

#[wasm_bindgen_test]
async fn a_version_1_database_is_migrated_without_losing_its_records() {
    let name = "lifeline-test-migrate";
    delete_db(name).await;
    let v1 = create_v1(name).await;
    let tx = v1
        .transaction(&["commands"], TransactionMode::ReadWrite)
        .unwrap();
    tx.object_store("commands")
        .unwrap()
        .put(
            &object(&[
                ("command_id", "01JD0000000000000000000001".into()),
                ("outcome", "admitted".into()),
                ("line", "echo hello".into()),
            ]),
            None,
        )
        .unwrap();
    assert!(tx.commit().unwrap().await.unwrap().is_committed());
    v1.close();

    let journal = Journal::open(name).await.unwrap();
    assert_eq!(journal.version(), 2);
    // The v1 record has no position: it is kept but is not a journal entry.
    let loaded = load(&journal).await.unwrap();
    assert!(loaded.tail.is_empty());
    assert!(loaded.quarantined.is_empty());
    assert_eq!(loaded.last_position, 0);
    journal.close();

    let db = raw(name).await;
    assert_eq!(db.store_names().len(), store::ALL.len());
    let tx = db
        .transaction(&store::ALL, TransactionMode::ReadOnly)
        .unwrap();
    for name in [store::COMMANDS, store::EVENTS, store::EVIDENCE] {
        assert_eq!(
            tx.object_store(name).unwrap().index_names(),
            vec![store::POSITION_INDEX.to_string()]
        );
    }
    db.close();
    let kept = raw_get(name, store::COMMANDS, "01JD0000000000000000000001")
        .await
        .expect("the v1 record survived the migration");
    assert_eq!(field(&kept, "line").as_string().unwrap(), "echo hello");
}

#[wasm_bindgen_test]
async fn a_database_from_a_newer_build_is_refused_not_misread() {
    let name = "lifeline-test-newer";
    delete_db(name).await;
    let newer = Factory::new()
        .unwrap()
        .open(name, Some(SCHEMA_VERSION + 1))
        .unwrap()
        .await
        .unwrap();
    newer.close();
    let error = Journal::open(name).await.unwrap_err();
    assert_eq!(error, JournalError::NewerSchema);
    assert!(error.to_string().contains("newer Lifeline"));
}

#[wasm_bindgen_test]
async fn an_older_connection_that_will_not_close_blocks_the_upgrade_promptly() {
    let name = "lifeline-test-blocked";
    delete_db(name).await;
    // idb's Database has no versionchange handler: it never closes by itself.
    let old = create_v1(name).await;
    assert_eq!(
        Journal::open(name).await.unwrap_err(),
        JournalError::Blocked
    );
    old.close();
    // The abandoned open completes now and closes itself; a new open works.
    let journal = Journal::open(name).await.unwrap();
    assert_eq!(journal.version(), SCHEMA_VERSION);
    journal.close();
}

#[wasm_bindgen_test]
async fn another_tab_upgrading_closes_our_connection_and_tells_us() {
    let name = "lifeline-test-versionchange";
    delete_db(name).await;
    let journal = Journal::open(name).await.unwrap();
    let told = std::rc::Rc::new(std::cell::Cell::new(false));
    let seen = told.clone();
    journal.on_version_change(move || seen.set(true));
    let lost = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let heard = lost.clone();
    journal.on_lost(move |e| heard.borrow_mut().push(e));
    // A "newer build" opens at the next version; it is not blocked by us.
    let newer = Factory::new()
        .unwrap()
        .open(name, Some(SCHEMA_VERSION + 1))
        .unwrap()
        .await
        .unwrap();
    assert!(told.get());
    // An upgrade keeps the data: this is not a deletion.
    assert_eq!(*lost.borrow(), vec![JournalError::VersionChange]);
    assert_eq!(
        load(&journal).await.unwrap_err(),
        JournalError::VersionChange
    );
    assert_eq!(
        journal.claim_writer().await.unwrap_err(),
        JournalError::VersionChange
    );
    newer.close();
}

#[wasm_bindgen_test]
async fn a_database_deleted_under_us_is_told_apart_from_an_upgrade() {
    let name = "lifeline-test-deleted";
    let mut world = World::new(name).await;
    some_history(&mut world).await;
    let journal = world.journal.clone();
    let lost = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let heard = lost.clone();
    journal.on_lost(move |e| heard.borrow_mut().push(e));
    assert_eq!(database_exists(name).await, Some(true));
    // What "Clear site data" or another tab's deleteDatabase does: the
    // deletion waits for our connection, which closes at once.
    Factory::new().unwrap().delete(name).unwrap().await.unwrap();
    assert_eq!(*lost.borrow(), vec![JournalError::Removed]);
    assert_eq!(database_exists(name).await, Some(false));
    let next = world.written.len() as u64 + 1;
    let batch = PersistBatch {
        v: V1,
        batch: BatchId(next),
        entries: vec![JournalEntry {
            v: V1,
            position: next,
            at: Millis(5),
            record: JournalRecord::LeaseGranted {
                workspace: id(0xDDD1),
                lease: id(0xDDD2),
            },
        }],
        artifacts: vec![],
        purge: None,
    };
    let error = journal.write_batch(&batch, world.epoch).await.unwrap_err();
    assert_eq!(error, JournalError::Removed);
    assert!(error.to_string().contains("history is gone"), "{error}");
    assert!(error.to_string().contains("Start a new journal"), "{error}");
    assert_eq!(load(&journal).await.unwrap_err(), JournalError::Removed);
    // Opening again makes a new, empty journal with an identity of its own.
    let first = journal.id().expect("the first claim stamped an identity");
    let again = Journal::open(name).await.unwrap();
    again.claim_writer().await.unwrap();
    assert!(load(&again).await.unwrap().tail.is_empty());
    assert_ne!(again.id().unwrap(), first);
    again.close();
}

#[wasm_bindgen_test]
async fn the_journal_identity_is_stamped_once_and_kept() {
    let name = "lifeline-test-identity";
    delete_db(name).await;
    let journal = Journal::open(name).await.unwrap();
    assert_eq!(journal.id(), None, "unknown before a claim");
    journal.claim_writer().await.unwrap();
    let id = journal.id().unwrap();
    assert_eq!(id.len(), 32);
    journal.close();
    let journal = Journal::open(name).await.unwrap();
    journal.claim_writer().await.unwrap();
    assert_eq!(journal.id(), Some(id));
    journal.close();
}

#[wasm_bindgen_test]
async fn a_damaged_writer_record_leaves_the_rest_readable_and_repair_keeps_it() {
    let name = "lifeline-test-damaged-meta";
    let mut world = World::new(name).await;
    some_history(&mut world).await;
    world.journal.close();
    // The writer record as a disk error or a bug could leave it.
    raw_put(
        name,
        store::META,
        &[object(&[
            ("key", "writer".into()),
            ("epoch", "seven".into()),
        ])],
    )
    .await;

    let journal = Journal::open(name).await.unwrap();
    assert_eq!(
        journal.claim_writer().await.unwrap_err(),
        JournalError::WriterUnreadable
    );
    // Everything else loads, and nothing was moved or deleted.
    let loaded = load(&journal).await.unwrap();
    assert_eq!(loaded.tail, world.written);
    assert!(loaded.quarantined.is_empty());
    // No write gets past a fence it cannot read.
    let next = world.written.len() as u64 + 1;
    let batch = PersistBatch {
        v: V1,
        batch: BatchId(next),
        entries: vec![JournalEntry {
            v: V1,
            position: next,
            at: Millis(5),
            record: JournalRecord::LeaseGranted {
                workspace: id(0xEEE1),
                lease: id(0xEEE2),
            },
        }],
        artifacts: vec![],
        purge: None,
    };
    assert_eq!(
        journal.write_batch(&batch, world.epoch).await.unwrap_err(),
        JournalError::WriterUnreadable
    );
    assert_eq!(raw_count(name, store::QUARANTINE).await, 0);

    // Repair sets the damaged value aside, kept as it was, and writes again.
    let at = 1_764_000_000_000;
    let epoch = journal.repair_writer(at).await.unwrap();
    assert_eq!(epoch, WriterEpoch(at));
    assert_eq!(raw_count(name, store::QUARANTINE).await, 1);
    let db = raw(name).await;
    let tx = db
        .transaction(&[store::QUARANTINE], TransactionMode::ReadOnly)
        .unwrap();
    let kept = tx
        .object_store(store::QUARANTINE)
        .unwrap()
        .get_all(None, None)
        .unwrap()
        .await
        .unwrap();
    db.close();
    assert_eq!(field(&kept[0], "store").as_string().unwrap(), "meta");
    assert_eq!(
        field(&field(&kept[0], "value"), "epoch")
            .as_string()
            .unwrap(),
        "seven"
    );
    journal.write_batch(&batch, epoch).await.unwrap();
    let loaded = load(&journal).await.unwrap();
    assert_eq!(loaded.tail.len(), world.written.len() + 1);
    assert_eq!(loaded.tail[..world.written.len()], world.written[..]);
    assert!(journal.id().is_some());
    // The next claim goes on from the repaired epoch.
    assert_eq!(journal.claim_writer().await.unwrap(), WriterEpoch(at + 1));
    journal.close();
}

// ---------------------------------------------------------------------------
// Writing

#[wasm_bindgen_test]
async fn every_record_kind_lands_in_its_store_and_reads_back_equal() {
    let name = "lifeline-test-stores";
    let mut world = World::new(name).await;
    some_history(&mut world).await;
    let journal = world.journal.clone();
    let loaded = load(&journal).await.unwrap();
    assert!(loaded.quarantined.is_empty());
    assert_eq!(loaded.tail, world.written);
    assert_eq!(loaded.last_position, world.written.len() as u64);

    // Each kind went to its store, with its natural key and position.
    for entry in &world.written {
        let (store_name, key): (&str, JsValue) = match &entry.record {
            JournalRecord::CommandAdmitted(c) => (store::COMMANDS, c.command.to_string().into()),
            JournalRecord::Event(e) => (
                store::EVENTS,
                js_sys::Array::of2(&e.command.to_string().into(), &(e.seq.0 as f64).into()).into(),
            ),
            JournalRecord::Recovery(r) => (store::EVIDENCE, r.stamp.to_string().into()),
            _ => (store::RECORDS, (entry.position as f64).into()),
        };
        let value = raw_get(name, store_name, key).await.expect("stored");
        assert_eq!(
            field(&value, "position").as_f64(),
            Some(entry.position as f64)
        );
        let json = field(&value, "json").as_string().unwrap();
        assert_eq!(&decode::<JournalEntry>(json.as_bytes()).unwrap(), entry);
    }
    // Output beyond the inline bound went to an artifact, checked on read.
    let digest = world
        .written
        .iter()
        .find_map(|e| match &e.record {
            JournalRecord::ArtifactStored { digest, .. } => Some(*digest),
            _ => None,
        })
        .expect("an artifact was stored");
    let data = journal.artifact(&digest).await.unwrap().unwrap();
    assert_eq!(Digest::of(data.as_bytes()), digest);
    assert_eq!(
        journal.artifact(&Digest::of(b"absent")).await.unwrap(),
        None
    );
    raw_put(
        name,
        store::ARTIFACTS,
        &[object(&[
            ("digest", digest.to_string().into()),
            ("data", "tampered".into()),
        ])],
    )
    .await;
    assert!(matches!(
        journal.artifact(&digest).await.unwrap_err(),
        JournalError::Corrupt(_)
    ));
    journal.close();
}

#[wasm_bindgen_test]
async fn a_second_claim_supersedes_the_first_and_its_write_leaves_nothing() {
    let name = "lifeline-test-fence";
    let mut world = World::new(name).await;
    some_history(&mut world).await;
    let journal = world.journal.clone();
    let before = load(&journal).await.unwrap();

    let first = world.epoch;
    let second = journal.claim_writer().await.unwrap();
    assert_eq!(second, WriterEpoch(first.0 + 1));

    // A batch the first writer still had in hand.
    let next = world.written.len() as u64 + 1;
    let batch = PersistBatch {
        v: V1,
        batch: BatchId(next),
        entries: vec![JournalEntry {
            v: V1,
            position: next,
            at: Millis(5),
            record: JournalRecord::LeaseGranted {
                workspace: id(0xAAA1),
                lease: id(0xAAA2),
            },
        }],
        artifacts: vec![],
        purge: None,
    };
    let error = journal.write_batch(&batch, first).await.unwrap_err();
    assert_eq!(error, JournalError::Superseded);
    assert!(error.to_string().contains("took over"));
    assert_eq!(load(&journal).await.unwrap(), before, "nothing was written");
    assert_eq!(
        journal
            .put_snapshot(&world.controller.snapshot(), first)
            .await
            .unwrap_err(),
        JournalError::Superseded
    );
    // The new writer writes the same batch.
    journal.write_batch(&batch, second).await.unwrap();
    assert_eq!(load(&journal).await.unwrap().last_position, next);
    journal.close();
}

#[wasm_bindgen_test]
async fn a_claim_held_under_the_writer_lock_writes_without_reading_the_fence_until_a_new_claim() {
    use lifeline_store::writer_lock::WriterLock;
    let name = "lifeline-test-held";
    let mut world = World::new(name).await;
    some_history(&mut world).await;
    world.journal.close();
    let lock = WriterLock::hold_for_life("lifeline-test-held-writer")
        .await
        .unwrap();
    let journal = Journal::open(name).await.unwrap();
    let held = journal.claim_writer_held(&lock).await.unwrap();
    let batch = |position: u64, n: u128| PersistBatch {
        v: V1,
        batch: BatchId(position),
        entries: vec![JournalEntry {
            v: V1,
            position,
            at: Millis(5),
            record: JournalRecord::LeaseGranted {
                workspace: id(0xB000 + n),
                lease: id(0xC000 + n),
            },
        }],
        artifacts: vec![],
        purge: None,
    };
    let next = world.written.len() as u64 + 1;
    journal.write_batch(&batch(next, 1), held).await.unwrap();
    // Only a writer without the lock could move the epoch; one that did
    // anyway (here: another connection of this test) is not seen, because
    // the held claim no longer reads the fence — which is why a claim is
    // held only by the worker the browser granted the lock to.
    raw_put(
        name,
        store::META,
        &[object(&[
            ("key", "writer".into()),
            ("epoch", "seven".into()),
        ])],
    )
    .await;
    journal
        .write_batch(&batch(next + 1, 2), held)
        .await
        .unwrap();
    journal
        .put_snapshot(&world.controller.snapshot(), held)
        .await
        .unwrap();
    assert_eq!(load(&journal).await.unwrap().last_position, next + 1);
    // A claim through this journal that is not held (a repair) ends the
    // trust: writes under the held epoch read the fence again, and it is
    // no longer theirs.
    let repaired = journal.repair_writer(1_000_000).await.unwrap();
    assert_eq!(
        journal
            .write_batch(&batch(next + 2, 3), held)
            .await
            .unwrap_err(),
        JournalError::Superseded
    );
    journal
        .write_batch(&batch(next + 2, 3), repaired)
        .await
        .unwrap();
    assert_eq!(load(&journal).await.unwrap().last_position, next + 2);
    journal.close();
}

#[wasm_bindgen_test]
async fn a_write_to_a_journal_nobody_claimed_is_refused() {
    let name = "lifeline-test-unclaimed";
    delete_db(name).await;
    let journal = Journal::open(name).await.unwrap();
    let batch = PersistBatch {
        v: V1,
        batch: BatchId(1),
        entries: vec![JournalEntry {
            v: V1,
            position: 1,
            at: Millis(5),
            record: JournalRecord::LeaseGranted {
                workspace: id(0xBBB1),
                lease: id(0xBBB2),
            },
        }],
        artifacts: vec![],
        purge: None,
    };
    for epoch in [WriterEpoch(0), WriterEpoch(1)] {
        assert_eq!(
            journal.write_batch(&batch, epoch).await.unwrap_err(),
            JournalError::Superseded
        );
    }
    assert!(load(&journal).await.unwrap().tail.is_empty());
    journal.close();
}

#[wasm_bindgen_test]
async fn a_request_failing_mid_transaction_leaves_nothing_of_the_batch() {
    let name = "lifeline-test-atomic";
    delete_db(name).await;
    let journal = Journal::open(name).await.unwrap();
    let epoch = journal.claim_writer().await.unwrap();
    let mut entries = vec![JournalEntry {
        v: V1,
        position: 1,
        at: Millis(1),
        record: JournalRecord::LeaseGranted {
            workspace: id(0xCCC1),
            lease: id(0xCCC2),
        },
    }];
    for g in 1..=3u64 {
        if g > 1 {
            entries.push(JournalEntry {
                v: V1,
                position: entries.len() as u64 + 1,
                at: Millis(1),
                record: JournalRecord::RuntimeRetired {
                    lease: id(0xCCC2),
                    runtime: id(0xCD00 + g as u128 - 1),
                    generation: Generation(g - 1),
                    cause: RetireCause::Replaced,
                },
            });
        }
        entries.push(JournalEntry {
            v: V1,
            position: entries.len() as u64 + 1,
            at: Millis(1),
            record: JournalRecord::RuntimeAssigned {
                lease: id(0xCCC2),
                runtime: id(0xCD00 + g as u128),
                generation: Generation(g),
                execution: id(0xCE00 + g as u128),
            },
        });
    }
    let batch = PersistBatch {
        v: V1,
        batch: BatchId(1),
        entries,
        artifacts: vec![],
        purge: None,
    };
    // The third put is followed by a request that fails asynchronously
    // (ConstraintError), which aborts the transaction.
    journal.fail_next_write_after(3);
    let error = journal.write_batch(&batch, epoch).await.unwrap_err();
    assert!(
        matches!(&error, JournalError::Operation(d) if d.contains("ConstraintError")),
        "{error:?}"
    );
    assert_eq!(raw_count(name, store::RECORDS).await, 0, "nothing was kept");
    assert!(raw_get(name, store::META, "injected-fault").await.is_none());
    // Retrying the same batch (keyed by position) writes it once.
    journal.write_batch(&batch, epoch).await.unwrap();
    journal.write_batch(&batch, epoch).await.unwrap();
    let loaded = load(&journal).await.unwrap();
    assert_eq!(loaded.tail, batch.entries);
    Projection::rebuild(RetentionPolicy::default(), &loaded.tail).unwrap();
    journal.close();
}

#[wasm_bindgen_test]
async fn an_invalid_batch_is_refused_before_anything_is_written() {
    let name = "lifeline-test-invalid";
    delete_db(name).await;
    let journal = Journal::open(name).await.unwrap();
    let epoch = journal.claim_writer().await.unwrap();
    let batch = PersistBatch {
        v: V1,
        batch: BatchId(1),
        entries: vec![JournalEntry {
            v: V1,
            position: 2, // not the batch's first position
            at: Millis(1),
            record: JournalRecord::LeaseGranted {
                workspace: id(0xDDD1),
                lease: id(0xDDD2),
            },
        }],
        artifacts: vec![],
        purge: None,
    };
    assert!(matches!(
        journal.write_batch(&batch, epoch).await.unwrap_err(),
        JournalError::Invalid(_)
    ));
    assert_eq!(raw_count(name, store::RECORDS).await, 0);
    journal.close();
}

#[wasm_bindgen_test]
fn durability_follows_the_record_kind() {
    let entry = |position: u64, record: JournalRecord| JournalEntry {
        v: V1,
        position,
        at: Millis(1),
        record,
    };
    let batch = |entries: Vec<JournalEntry>| PersistBatch {
        v: V1,
        batch: BatchId(1),
        entries,
        artifacts: vec![],
        purge: None,
    };
    let chunk = |inline: &str| OutputChunk {
        offset: 0,
        len: inline.len() as u64,
        inline: inline.into(),
        artifact: None,
        dropped: 0,
    };
    let event = |position: u64, body: RetainedBody| {
        entry(
            position,
            JournalRecord::Event(EventRecord {
                v: V1,
                command: id(0xE1),
                seq: EventSeq(position),
                digest: Digest::of(b"e"),
                body,
            }),
        )
    };
    let stdout = event(1, RetainedBody::Stdout(chunk("out")));
    let stderr = event(2, RetainedBody::Stderr(chunk("err")));
    let artifact = entry(
        3,
        JournalRecord::ArtifactStored {
            digest: Digest::of(b"x"),
            len: 1,
        },
    );
    let terminal = event(
        4,
        RetainedBody::Terminal(TerminalResult {
            v: V1,
            status: TerminalStatus::Completed,
            exit_code: Some(0),
            message: String::new(),
        }),
    );
    let lifecycle = event(
        5,
        RetainedBody::Lifecycle {
            phase: "started".into(),
        },
    );
    let ack = entry(
        6,
        JournalRecord::Acknowledged {
            command: id(0xE1),
            attempt: id(0xE2),
            via: AckSource::Event,
        },
    );
    let exposed = entry(
        7,
        JournalRecord::DispatchExposed {
            command: id(0xE1),
            attempt: id(0xE2),
            runtime: id(0xE3),
            generation: Generation(1),
        },
    );
    assert_eq!(
        durability_for(&batch(vec![stdout.clone()])),
        Durability::Relaxed
    );
    assert_eq!(
        durability_for(&batch(vec![
            stdout.clone(),
            stderr.clone(),
            artifact.clone()
        ])),
        Durability::Relaxed
    );
    for strict in [terminal, lifecycle, ack, exposed] {
        assert_eq!(
            durability_for(&batch(vec![strict.clone()])),
            Durability::Strict
        );
        // One strict record makes the whole batch strict.
        assert_eq!(
            durability_for(&batch(vec![stdout.clone(), strict])),
            Durability::Strict
        );
    }
    assert_eq!(
        durability_for(&batch(vec![entry(
            1,
            JournalRecord::LeaseGranted {
                workspace: id(0xE4),
                lease: id(0xE5),
            }
        )])),
        Durability::Strict
    );
}

#[wasm_bindgen_test]
async fn the_browser_grants_the_durability_asked_for() {
    let name = "lifeline-test-durability";
    delete_db(name).await;
    let journal = Journal::open(name).await.unwrap();
    journal.close();
    let db: web_sys::IdbDatabase = raw(name).await.into();
    for d in [Durability::Strict, Durability::Relaxed] {
        let tx = durability::readwrite(&db, &[store::META], d).unwrap();
        assert_eq!(durability::of(&tx).as_deref(), Some(d.as_str()));
        tx.abort().unwrap();
    }
    db.close();
}

// ---------------------------------------------------------------------------
// Reading

#[wasm_bindgen_test]
async fn snapshot_and_tail_fold_to_the_same_projection_as_full_replay() {
    let name = "lifeline-test-snapshot";
    let mut world = World::new(name).await;
    some_history(&mut world).await;
    let journal = world.journal.clone();
    // As the controller would: its projection at the confirmed position.
    let first = world.controller.snapshot();
    assert_eq!(first.position, world.written.len() as u64);
    journal.put_snapshot(&first, world.epoch).await.unwrap();
    let (rt, c) = world.start_command(0x79, "echo tail").await;
    world.output(rt, c, "tail output\n").await;
    let second = world.controller.snapshot();
    journal.put_snapshot(&second, world.epoch).await.unwrap();
    world.exit(rt, c, 0).await;
    let third = world.controller.snapshot();
    journal.put_snapshot(&third, world.epoch).await.unwrap();
    world.more_history().await;

    let loaded = load(&journal).await.unwrap();
    assert!(loaded.quarantined.is_empty());
    assert_eq!(loaded.snapshot_note, None);
    assert_eq!(loaded.snapshot.as_ref().unwrap().position, third.position);
    assert!(!loaded.tail.is_empty());
    assert_eq!(loaded.tail[0].position, third.position + 1);
    assert_eq!(loaded.last_position, world.written.len() as u64);
    let resumed = Projection::from_snapshot(loaded.snapshot.unwrap(), &loaded.tail).unwrap();
    assert_eq!(resumed, world.folded_through(third.position));
    assert_eq!(world.full_replay(), *world.controller.projection());
    // Only the newest two snapshots are kept.
    assert_eq!(raw_count(name, store::SNAPSHOTS).await, 2);
    assert!(raw_get(name, store::SNAPSHOTS, first.position as f64)
        .await
        .is_none());
    journal.close();
}

#[wasm_bindgen_test]
async fn a_load_without_a_reader_reads_nothing_but_says_a_snapshot_is_there() {
    let name = "lifeline-test-snapshot-reader";
    let mut world = World::new(name).await;
    some_history(&mut world).await;
    let journal = world.journal.clone();
    // No snapshot yet: the whole journal loads without a reader.
    let Load::Loaded(replayed) = journal.load(None).await.unwrap() else {
        panic!("a journal without snapshots asked for a snapshot reader");
    };
    assert_eq!(replayed.snapshot, None);
    assert_eq!(replayed.tail.len(), world.written.len());
    assert_eq!(replayed, load(&journal).await.unwrap());

    let snapshot = world.controller.snapshot();
    journal.put_snapshot(&snapshot, world.epoch).await.unwrap();
    world.more_history().await;
    assert_eq!(
        journal.load(None).await.unwrap(),
        Load::SnapshotReaderNeeded
    );
    // Asking was a read only: with the reader, everything is there.
    let loaded = load(&journal).await.unwrap();
    assert!(loaded.quarantined.is_empty());
    assert_eq!(loaded.snapshot.unwrap().position, snapshot.position);
    assert_eq!(loaded.tail[0].position, snapshot.position + 1);
    assert_eq!(loaded.last_position, world.written.len() as u64);
    journal.close();
}

impl World {
    /// More history after the last snapshot: a second command on a new lease.
    async fn more_history(&mut self) {
        let (rt, c) = self.start_command(0x7A, "echo after").await;
        self.output(rt, c, "after\n").await;
        self.exit(rt, c, 0).await;
    }
}

#[wasm_bindgen_test]
async fn an_unreadable_snapshot_falls_back_to_the_previous_one_then_to_replay() {
    let name = "lifeline-test-snapshot-fallback";
    let mut world = World::new(name).await;
    some_history(&mut world).await;
    let journal = world.journal.clone();
    let older = world.controller.snapshot();
    journal.put_snapshot(&older, world.epoch).await.unwrap();
    let (rt, c) = world.start_command(0x79, "echo more").await;
    world.exit(rt, c, 0).await;
    let newer = world.controller.snapshot();
    journal.put_snapshot(&newer, world.epoch).await.unwrap();
    world.more_history().await;

    raw_put(
        name,
        store::SNAPSHOTS,
        &[object(&[
            ("position", (newer.position as f64).into()),
            ("json", "{\"v\":1,".into()),
        ])],
    )
    .await;
    let loaded = load(&journal).await.unwrap();
    assert_eq!(loaded.snapshot.as_ref().unwrap().position, older.position);
    let note = loaded.snapshot_note.clone().unwrap();
    assert_eq!(
        note,
        lifeline_core::phrase::Phrase::SnapshotFallback {
            bad: newer.position,
            loaded: older.position,
        }
    );
    assert_eq!(loaded.quarantined.len(), 1);
    assert_eq!(loaded.quarantined[0].store, store::SNAPSHOTS);
    assert_eq!(loaded.quarantined[0].position, Some(newer.position));
    let resumed = Projection::from_snapshot(loaded.snapshot.unwrap(), &loaded.tail).unwrap();
    assert_eq!(resumed, world.folded_through(older.position));

    // A snapshot of a future schema is not misread either.
    let json = String::from_utf8(encode(&older).unwrap()).unwrap();
    assert!(json.starts_with("{\"v\":4,"));
    raw_put(
        name,
        store::SNAPSHOTS,
        &[object(&[
            ("position", (older.position as f64).into()),
            ("json", json.replacen("{\"v\":4,", "{\"v\":99,", 1).into()),
        ])],
    )
    .await;
    let loaded = load(&journal).await.unwrap();
    assert_eq!(loaded.snapshot, None);
    // Both snapshots unreadable: the journal is replayed from its start.
    assert!(
        matches!(
            loaded.snapshot_note,
            Some(lifeline_core::phrase::Phrase::SnapshotsUnreadable { count: 2, .. })
        ),
        "{:?}",
        loaded.snapshot_note
    );
    assert_eq!(loaded.quarantined.len(), 2);
    assert!(loaded.quarantined[1].reason.contains("99"));
    assert_eq!(loaded.tail, world.written);
    journal.close();
}

#[wasm_bindgen_test]
async fn corrupt_records_are_quarantined_and_the_rest_loads() {
    let name = "lifeline-test-quarantine";
    let mut world = World::new(name).await;
    some_history(&mut world).await;
    let journal = world.journal.clone();
    let written = world.written.clone();
    let find = |store_name: &str| {
        written
            .iter()
            .find(|e| journal_store(e) == store_name)
            .expect("an entry of that kind")
            .clone()
    };

    // 1. Bad JSON in `records` (the LeaseGranted at position 1).
    let lease = find(store::RECORDS);
    raw_put(
        name,
        store::RECORDS,
        &[object(&[
            ("position", (lease.position as f64).into()),
            ("json", "{not json".into()),
        ])],
    )
    .await;
    // 2. A future schema version in `events`.
    let event = find(store::EVENTS);
    let JournalRecord::Event(e) = &event.record else {
        unreachable!()
    };
    let json = String::from_utf8(encode(&event).unwrap()).unwrap();
    raw_put(
        name,
        store::EVENTS,
        &[object(&[
            ("position", (event.position as f64).into()),
            ("command_id", e.command.to_string().into()),
            ("seq", (e.seq.0 as f64).into()),
            ("json", json.replacen("\"v\":1", "\"v\":99", 1).into()),
        ])],
    )
    .await;
    // 3. A command stored at a position its entry does not have.
    let admitted = find(store::COMMANDS);
    let JournalRecord::CommandAdmitted(c) = &admitted.record else {
        unreachable!()
    };
    let mut moved = admitted.clone();
    moved.position += 1000;
    let json = String::from_utf8(encode(&moved).unwrap()).unwrap();
    raw_put(
        name,
        store::COMMANDS,
        &[object(&[
            ("position", (admitted.position as f64).into()),
            ("command_id", c.command.to_string().into()),
            ("json", json.into()),
        ])],
    )
    .await;

    let loaded = load(&journal).await.unwrap();
    let bad = [lease.position, event.position, admitted.position];
    let expected: Vec<JournalEntry> = written
        .iter()
        .filter(|e| !bad.contains(&e.position))
        .cloned()
        .collect();
    assert_eq!(loaded.tail, expected, "everything else loads");
    assert_eq!(loaded.last_position, written.len() as u64);
    let mut q = loaded.quarantined.clone();
    q.sort_by_key(|q| q.position);
    assert_eq!(
        q.iter()
            .map(|q| (q.store.as_str(), q.position))
            .collect::<Vec<_>>(),
        {
            let mut v = vec![
                (store::RECORDS, Some(lease.position)),
                (store::EVENTS, Some(event.position)),
                (store::COMMANDS, Some(admitted.position)),
            ];
            v.sort_by_key(|(_, p)| *p);
            v
        }
    );
    let reason = |s: &str| q.iter().find(|q| q.store == s).unwrap().reason.clone();
    assert!(
        reason(store::RECORDS).contains("malformed"),
        "{}",
        reason(store::RECORDS)
    );
    assert!(
        reason(store::EVENTS).contains("schema version 99"),
        "{}",
        reason(store::EVENTS)
    );
    assert!(
        reason(store::COMMANDS).contains("stored at position"),
        "{}",
        reason(store::COMMANDS)
    );
    assert_eq!(
        q.iter().find(|q| q.store == store::RECORDS).unwrap().key,
        lease.position.to_string()
    );
    // Reasons never quote the stored text.
    assert!(q.iter().all(|q| !q.reason.contains("not json")));

    // A follower reading the same range sees the same.
    let tail = journal.entries_after(0, 10_000).await.unwrap();
    assert_eq!(tail.entries, expected);
    assert_eq!(tail.quarantined.len(), 3);

    // Moving them aside: into `quarantine`, gone from where they were.
    journal
        .quarantine(&loaded.quarantined, world.epoch)
        .await
        .unwrap();
    assert_eq!(raw_count(name, store::QUARANTINE).await, 3);
    let again = load(&journal).await.unwrap();
    assert!(again.quarantined.is_empty());
    assert_eq!(again.tail, expected);
    assert!(raw_get(name, store::RECORDS, lease.position as f64)
        .await
        .is_none());
    // Quarantining is fenced too.
    let stale: Vec<Quarantined> = Vec::new();
    journal.claim_writer().await.unwrap();
    assert_eq!(
        journal.quarantine(&stale, world.epoch).await.unwrap_err(),
        JournalError::Superseded
    );
    journal.close();
}

fn journal_store(e: &JournalEntry) -> &'static str {
    lifeline_store::journal::store_for(&e.record)
}

#[wasm_bindgen_test]
async fn a_long_history_reads_back_in_chunks_and_pages() {
    // More values in `events` (10_098) than one READ_CHUNK, interleaved with
    // `records`, written in the largest batches the core makes. (Entries
    // are hand-built: each is valid alone, which is all the store checks;
    // folding them is covered by the controller-driven tests.)
    let name = "lifeline-test-long";
    delete_db(name).await;
    let journal = Journal::open(name).await.unwrap();
    let epoch = journal.claim_writer().await.unwrap();
    let command: CommandId = id(0xF00D);
    let mut all = Vec::new();
    let mut seq = 0;
    for position in 1..=10_200u64 {
        let record = if position % 100 == 0 {
            JournalRecord::ArtifactStored {
                digest: Digest::of(&position.to_le_bytes()),
                len: 1,
            }
        } else {
            seq += 1;
            let text = format!("{position}\n");
            JournalRecord::Event(EventRecord {
                v: V1,
                command,
                seq: EventSeq(seq),
                digest: Digest::of(text.as_bytes()),
                body: RetainedBody::Stdout(OutputChunk {
                    offset: 0,
                    len: text.len() as u64,
                    inline: text,
                    artifact: None,
                    dropped: 0,
                }),
            })
        };
        all.push(JournalEntry {
            v: V1,
            position,
            at: Millis(position),
            record,
        });
    }
    for chunk in all.chunks(limits::MAX_BATCH_ENTRIES) {
        let batch = PersistBatch {
            v: V1,
            batch: BatchId(chunk[0].position),
            entries: chunk.to_vec(),
            artifacts: vec![],
            purge: None,
        };
        assert_eq!(durability_for(&batch), Durability::Relaxed);
        journal.write_batch(&batch, epoch).await.unwrap();
    }
    let loaded = load(&journal).await.unwrap();
    assert!(loaded.quarantined.is_empty());
    assert_eq!(loaded.last_position, 10_200);
    assert!(loaded.tail == all, "the whole history reads back in order");
    // A follower pages through it; pages end where every store was read.
    let mut after = 0;
    let mut paged = Vec::new();
    loop {
        let tail = journal.entries_after(after, 4_000).await.unwrap();
        assert!(tail.entries.len() <= 4_000);
        if tail.entries.is_empty() {
            break;
        }
        assert_eq!(tail.entries[0].position, after + 1, "no gaps between pages");
        after = tail.last_position(after);
        paged.extend(tail.entries);
    }
    assert!(paged == all);
    let middle = journal.entries_after(6_000, 150).await.unwrap();
    assert_eq!(middle.entries.len(), 150);
    assert_eq!(middle.entries, all[6_000..6_150].to_vec());
    // One command's events: all of them, or a count after a sequence
    // number (a kept head is read that way, from the first events on).
    let events: Vec<EventRecord> = all
        .iter()
        .filter_map(|e| match &e.record {
            JournalRecord::Event(ev) => Some(ev.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(events.len(), 10_098);
    let every = journal
        .command_events(command, EventSeq::ZERO, None)
        .await
        .unwrap();
    assert!(every == events, "every event, by sequence");
    let some = journal
        .command_events(command, EventSeq(6_000), Some(256))
        .await
        .unwrap();
    assert_eq!(some, events[6_000..6_256].to_vec());
    let past = journal
        .command_events(command, EventSeq(10_098), Some(256))
        .await
        .unwrap();
    assert!(past.is_empty());
    journal.close();
}

// ---------------------------------------------------------------------------
// Storage

#[wasm_bindgen_test]
async fn the_worker_can_see_its_storage_estimate_and_persistence() {
    let estimate = storage::estimate().await.unwrap();
    assert!(estimate.quota > 0);
    assert!(estimate.usage <= estimate.quota);
    // Headless Chromium does not grant persistence unasked.
    let _ = storage::persisted().await.unwrap();
}

#[wasm_bindgen_test]
fn error_messages_are_actionable() {
    let quota = JournalError::QuotaExceeded.to_string();
    assert!(quota.contains("journal is intact"), "{quota}");
    assert!(quota.contains("refused until space is freed"), "{quota}");
    assert!(JournalError::VersionChange.to_string().contains("reload"));
    assert!(JournalError::Superseded
        .to_string()
        .contains("wrote nothing"));
}
