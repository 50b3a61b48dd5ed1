//! Store benchmarks, run by `cargo xtask bench` in a dedicated worker of
//! headless Chromium — where the controller and its journal run.
//!
//! The JavaScript side (`bench/static/bench-worker.js`) times the baselines
//! (raw IndexedDB, Dexie) on the very entries these functions generate, so
//! candidate and baselines put the same values with the same durability.
//! Everything here is deterministic: same arguments, same entries.

use std::collections::VecDeque;
use std::str::FromStr;

use js_sys::Reflect;
use lifeline_core::schema::limits;
use lifeline_core::*;
use lifeline_store::journal::{durability_for, read_snapshot_text, Journal, JournalError, Load};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Journal positions between snapshots, as the controller shell writes them.
pub const SNAPSHOT_EVERY: u64 = 2_000;
/// Output events per command in a recovery history.
pub const EVENTS_PER_COMMAND: u32 = 100;

fn now() -> f64 {
    js_sys::global()
        .unchecked_into::<web_sys::WorkerGlobalScope>()
        .performance()
        .map(|p| p.now())
        .unwrap_or(0.0)
}

fn fail(e: JournalError) -> JsValue {
    JsValue::from_str(&e.to_string())
}

fn id<T: FromStr>(n: u128) -> T
where
    T::Err: std::fmt::Debug,
{
    let alphabet = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let mut text = [b'0'; 26];
    let mut x = n.max(1);
    for slot in text.iter_mut().rev() {
        *slot = alphabet[(x & 31) as usize];
        x >>= 5;
    }
    std::str::from_utf8(&text).unwrap().parse().unwrap()
}

// ---------------------------------------------------------------------------
// Append throughput

/// `total` events of one command, from position 1. Output (stdout) events
/// are written `relaxed`; with `strict` they are lifecycle events, which the
/// journal writes `strict`.
fn event_entries(total: u32, strict: bool) -> Vec<JournalEntry> {
    let command: CommandId = id(0xBE4C);
    let mut offset = 0u64;
    (1..=total as u64)
        .map(|i| {
            let text = format!("{i:08} the quick brown fox jumps over the lazy dog: output\n");
            let len = text.len() as u64;
            let body = if strict {
                RetainedBody::Lifecycle {
                    phase: text.trim_end().to_string(),
                }
            } else {
                RetainedBody::Stdout(OutputChunk {
                    offset,
                    len,
                    inline: text.clone(),
                    artifact: None,
                    dropped: 0,
                })
            };
            offset += len;
            JournalEntry {
                v: V1,
                position: i,
                at: Millis(1_700_000_000_000 + i),
                record: JournalRecord::Event(EventRecord {
                    v: V1,
                    command,
                    seq: EventSeq(i),
                    digest: Digest::of(text.as_bytes()),
                    body,
                }),
            }
        })
        .collect()
}

fn event_batches(batch_size: u32, total: u32, strict: bool) -> Vec<PersistBatch> {
    event_entries(total, strict)
        .chunks(batch_size.max(1) as usize)
        .map(|chunk| PersistBatch {
            v: V1,
            batch: BatchId(chunk[0].position),
            entries: chunk.to_vec(),
            artifacts: vec![],
            purge: None,
        })
        .collect()
}

/// The same batches as JSON (an array of arrays of entries), for the
/// JavaScript baselines to parse before their timed loop.
#[wasm_bindgen]
pub fn event_batches_json(batch_size: u32, total: u32, strict: bool) -> Result<String, JsValue> {
    let entries: Vec<Vec<JournalEntry>> = event_batches(batch_size, total, strict)
        .into_iter()
        .map(|b| b.entries)
        .collect();
    serde_json::to_string(&entries).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// The durability the journal gives these batches ("relaxed"/"strict").
#[wasm_bindgen]
pub fn event_batches_durability(strict: bool) -> String {
    durability_for(&event_batches(1, 1, strict)[0])
        .as_str()
        .to_string()
}

/// Opens a fresh journal `name`, claims it holding a writer lock as the
/// controller does, then times writing the batches through
/// `Journal::write_batch` (validation, encoding, the writer fence as the
/// app has it and the puts, each batch acknowledged on `complete`).
/// Milliseconds.
#[wasm_bindgen]
pub async fn journal_append(
    name: String,
    batch_size: u32,
    total: u32,
    strict: bool,
) -> Result<f64, JsValue> {
    let batches = event_batches(batch_size, total, strict);
    let journal = Journal::open(&name).await.map_err(fail)?;
    // Held for the bench worker's life, like the controller's: a name of
    // its own per run, since it is never let go.
    thread_local!(static RUNS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) });
    let run = RUNS.with(|r| r.replace(r.get() + 1));
    let lock =
        lifeline_store::writer_lock::WriterLock::hold_for_life(&format!("bench-writer-{run}"))
            .await
            .map_err(|e| JsValue::from_str(&format!("{e:?}")))?;
    let epoch = journal.claim_writer_held(&lock).await.map_err(fail)?;
    let start = now();
    for batch in &batches {
        journal.write_batch(batch, epoch).await.map_err(fail)?;
    }
    let elapsed = now() - start;
    journal.close();
    Ok(elapsed)
}

// ---------------------------------------------------------------------------
// Recovery

/// A history made by the real controller and runtime: one runtime, commands
/// of [`EVENTS_PER_COMMAND`] output lines each, every batch confirmed, and a
/// snapshot every [`SNAPSHOT_EVERY`] positions as the shell takes them.
struct History {
    now: Millis,
    controller: Controller,
    runtime: Option<Runtime>,
    runtime_id: Option<RuntimeId>,
    entries: Vec<JournalEntry>,
    artifacts: Vec<ArtifactBlob>,
    snapshots: VecDeque<ProjectionSnapshot>,
    last_snapshot: u64,
    to_runtime: VecDeque<ControllerToRuntime>,
    to_controller: VecDeque<RuntimeToController>,
    inbox: Vec<ClientMessage>,
    request: u64,
}

impl History {
    fn new() -> History {
        let config = ControllerConfig {
            entropy: b"lifeline-bench".to_vec(),
            ..ControllerConfig::default()
        };
        History {
            now: Millis(1_700_000_000_000),
            controller: Controller::new(config, Millis(1_700_000_000_000)),
            runtime: None,
            runtime_id: None,
            entries: Vec::new(),
            artifacts: Vec::new(),
            snapshots: VecDeque::new(),
            last_snapshot: 0,
            to_runtime: VecDeque::new(),
            to_controller: VecDeque::new(),
            inbox: Vec::new(),
            request: 0,
        }
    }

    fn settle(&mut self) {
        loop {
            let mut progress = false;
            let now = self.now;
            for effect in self.controller.drain_effects() {
                progress = true;
                match effect {
                    ControllerEffect::Persist(batch) => {
                        self.entries.extend(batch.entries.iter().cloned());
                        self.artifacts.extend(batch.artifacts.iter().cloned());
                        self.controller
                            .handle_persist_complete(batch.batch, now)
                            .expect("in-flight batch");
                        let position = self.controller.projection().position;
                        if position >= self.last_snapshot + SNAPSHOT_EVERY {
                            self.last_snapshot = position;
                            self.snapshots.push_back(self.controller.snapshot());
                            if self.snapshots.len() > 2 {
                                self.snapshots.pop_front();
                            }
                        }
                    }
                    ControllerEffect::SendToRuntime { message, .. } => {
                        self.to_runtime.push_back(message)
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
                        self.runtime = Some(rt);
                        self.runtime_id = Some(runtime);
                    }
                    _ => {}
                }
            }
            if let Some(rt) = self.runtime.as_mut() {
                for effect in rt.drain_effects() {
                    progress = true;
                    if let RuntimeEffect::Send(m) = effect {
                        self.to_controller.push_back(m);
                    }
                }
                while let Some(m) = self.to_runtime.pop_front() {
                    progress = true;
                    let _ = rt.handle_controller(m, now);
                }
            }
            if let Some(rid) = self.runtime_id {
                while let Some(m) = self.to_controller.pop_front() {
                    progress = true;
                    let _ = self.controller.handle_runtime(rid, m, now);
                }
            }
            if !progress {
                return;
            }
        }
    }

    fn client(&mut self, make: impl FnOnce(RequestId) -> ClientRequest) -> RequestId {
        self.request += 1;
        let request = RequestId(self.request);
        let now = self.now;
        self.controller
            .handle_client(ClientId(1), make(request), now)
            .expect("request accepted");
        self.settle();
        request
    }

    fn generate(events: u32) -> History {
        let mut h = History::new();
        let workspace: WorkspaceId = id(0x77);
        let request = h.client(|request| ClientRequest::StartRuntime { request, workspace });
        let (lease, runtime, generation) = h
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
        let commands = events.div_ceil(EVENTS_PER_COMMAND);
        let mut left = events;
        for c in 0..commands {
            h.now = h.now.plus(1);
            let binding = Binding {
                workspace,
                lease,
                generation,
                runtime,
                session: id(0x5E55),
                working_directory: "/".into(),
                capabilities: Default::default(),
                budget: Budget {
                    // Far away, and still a number JavaScript holds exactly
                    // (schema::encode refuses anything larger).
                    deadline: Millis(lifeline_core::schema::MAX_SAFE_INTEGER),
                    max_output_bytes: 1 << 30,
                },
                command_line: format!("seq {c} {EVENTS_PER_COMMAND}"),
            };
            let key: IdempotencyKey = id(0x1_0000 + c as u128);
            let request = h.client(|request| ClientRequest::Admit {
                request,
                key,
                binding,
            });
            let command = h
                .inbox
                .iter()
                .rev()
                .find_map(|m| match m {
                    ClientMessage::Admitted {
                        request: q,
                        command,
                        ..
                    } if *q == request => Some(*command),
                    _ => None,
                })
                .expect("admitted");
            h.inbox.clear();
            let n = left.min(EVENTS_PER_COMMAND);
            left -= n;
            let now = h.now;
            let rt = h.runtime.as_mut().expect("runtime");
            for i in 0..n {
                rt.handle_process(
                    command,
                    ProcessOutput::Stdout {
                        data: format!(
                            "{c:05}:{i:03} the quick brown fox jumps over the lazy dog\n"
                        ),
                    },
                    now,
                )
                .expect("output accepted");
            }
            rt.handle_process(command, ProcessOutput::Exit { code: 0 }, now)
                .expect("exit accepted");
            h.settle();
        }
        h
    }
}

/// Generates a history of `events` output events with the real controller,
/// writes it into a fresh journal `name` (in batches of the largest size the
/// core makes, so writing is not what is measured) and the controller's last
/// two snapshots. Returns JSON: entries, events, the snapshot position and
/// size, and why a snapshot was not written, if it was not.
#[wasm_bindgen]
pub async fn recovery_prepare(name: String, events: u32) -> Result<String, JsValue> {
    let history = History::generate(events);
    let journal = Journal::open(&name).await.map_err(fail)?;
    let epoch = journal.claim_writer().await.map_err(fail)?;
    for chunk in history.entries.chunks(limits::MAX_BATCH_ENTRIES) {
        let artifacts = history
            .artifacts
            .iter()
            .filter(|a| {
                chunk.iter().any(|e| {
                    matches!(&e.record, JournalRecord::ArtifactStored { digest, .. } if *digest == a.digest())
                })
            })
            .cloned()
            .collect();
        let batch = PersistBatch {
            v: V1,
            batch: BatchId(chunk[0].position),
            entries: chunk.to_vec(),
            artifacts,
            purge: None,
        };
        journal.write_batch(&batch, epoch).await.map_err(fail)?;
    }
    let mut snapshot_position = 0;
    let mut snapshot_bytes = 0;
    let mut refused = None;
    for snapshot in &history.snapshots {
        snapshot_bytes = encode(snapshot).map(|b| b.len()).unwrap_or(0);
        match journal.put_snapshot(snapshot, epoch).await {
            Ok(()) => snapshot_position = snapshot.position,
            Err(e) => refused = Some(e.to_string()),
        }
    }
    journal.close();
    let info = serde_json::json!({
        "entries": history.entries.len(),
        "events": events,
        "snapshot_position": snapshot_position,
        "snapshot_bytes": snapshot_bytes,
        "snapshot_refused": refused,
    });
    Ok(info.to_string())
}

fn js_heap() -> Option<f64> {
    let performance = Reflect::get(&js_sys::global(), &"performance".into()).ok()?;
    let memory = Reflect::get(&performance, &"memory".into()).ok()?;
    Reflect::get(&memory, &"usedJSHeapSize".into())
        .ok()?
        .as_f64()
}

fn wasm_bytes() -> f64 {
    let memory = wasm_bindgen::memory();
    Reflect::get(&memory, &"buffer".into())
        .ok()
        .and_then(|b| Reflect::get(&b, &"byteLength".into()).ok())
        .and_then(|n| n.as_f64())
        .unwrap_or(0.0)
}

/// Times decoding the snapshot of `projection` and every tail entry, once
/// with serde_json and serde's derive (the reference, and the store's
/// decoder before `lifeline-codec`) and once with the browser's decoder.
fn decode_both(projection: &Projection, tail: &[JournalEntry]) -> Result<(f64, f64), JsValue> {
    let encode_err = |e: schema::SchemaError| JsValue::from_str(&e.to_string());
    let snapshot = schema::encode(&projection.snapshot()).map_err(encode_err)?;
    let entries = tail
        .iter()
        .map(schema::encode)
        .collect::<Result<Vec<_>, _>>()
        .map_err(encode_err)?;
    let texts: Vec<&str> = std::iter::once(&snapshot)
        .chain(&entries)
        .map(|b| std::str::from_utf8(b).unwrap_or(""))
        .collect();
    let t0 = now();
    let native = serde_json::from_str::<ProjectionSnapshot>(texts[0]).is_ok()
        && texts[1..]
            .iter()
            .all(|t| serde_json::from_str::<JournalEntry>(t).is_ok());
    let t1 = now();
    let browser = lifeline_codec::decode_record::<ProjectionSnapshot>(texts[0]).is_ok()
        && texts[1..]
            .iter()
            .all(|t| lifeline_codec::decode_record::<JournalEntry>(t).is_ok());
    let t2 = now();
    if !(native && browser) {
        return Err(JsValue::from_str(
            "a record did not decode in the decoder comparison",
        ));
    }
    Ok((t1 - t0, t2 - t1))
}

/// What a starting controller does with journal `name`: open, load (newest
/// snapshot + tail) and fold. Returns JSON timings (ms) and memory.
#[wasm_bindgen]
pub async fn recovery_measure(name: String) -> Result<String, JsValue> {
    let heap_before = js_heap();
    let wasm_before = wasm_bytes();
    let t0 = now();
    let journal = Journal::open(&name).await.map_err(fail)?;
    let t1 = now();
    let loaded = match journal.load(Some(read_snapshot_text)).await.map_err(fail)? {
        Load::Loaded(loaded) => loaded,
        Load::SnapshotReaderNeeded => return Err("a load given a reader asked for one".into()),
    };
    let t2 = now();
    let tail = loaded.tail.len();
    let snapshot_position = loaded.snapshot.as_ref().map_or(0, |s| s.position);
    let projection = match loaded.snapshot {
        Some(snapshot) => Projection::from_snapshot(snapshot, &loaded.tail),
        None => Projection::rebuild(RetentionPolicy::default(), &loaded.tail),
    }
    .map_err(|e| JsValue::from_str(&e.to_string()))?;
    let t3 = now();
    journal.close();
    // The same records decoded by both decoders, in this worker: serde_json
    // (what the store used before `lifeline-codec`) and the browser's
    // (`lifeline_codec`: `lifeline_decode`'s tree and readers).
    // Memory first: the comparison below allocates copies of everything.
    let wasm_after_fold = wasm_bytes();
    let (serde_json_ms, browser_ms) = decode_both(&projection, &loaded.tail)?;
    let info = serde_json::json!({
        "decode_serde_json_ms": serde_json_ms,
        "decode_browser_ms": browser_ms,
        "open_ms": t1 - t0,
        "load_ms": t2 - t1,
        "fold_ms": t3 - t2,
        "total_ms": t3 - t0,
        "tail": tail,
        "snapshot_position": snapshot_position,
        "position": projection.position,
        "commands": projection.commands.len(),
        "quarantined": loaded.quarantined.len(),
        "wasm_bytes_before": wasm_before,
        "wasm_bytes": wasm_after_fold,
        "js_heap_before": heap_before,
        "js_heap": js_heap(),
    });
    // Kept alive until the memory was read.
    drop(projection);
    Ok(info.to_string())
}
