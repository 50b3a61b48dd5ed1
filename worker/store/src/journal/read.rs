//! Reading the journal back: the newest readable snapshot and the tail
//! after it, a follower's gap, and artifacts.
//!
//! Every value read is decoded with [`lifeline_core::schema::decode`] and
//! checked against the fields it is stored under (position, natural key,
//! store for its kind). A value that fails is reported as [`Quarantined`] and
//! skipped; the rest loads. Reasons never quote record contents.

use js_sys::{Array, JsString, Reflect};
use lifeline_codec::decode_stored as decode;
use lifeline_core::phrase::Phrase;
use lifeline_core::schema::SchemaError;
use lifeline_core::{Digest, JournalEntry, JournalRecord, ProjectionSnapshot};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{IdbKeyRange, IdbObjectStore, IdbRequest, IdbTransaction};

use super::schema::{
    printable, printable_key, printable_key_of_entry, store, store_for, Keys, MAX_SAFE_INTEGER,
};
use super::{Journal, JournalError, Quarantined};
use crate::idb;

/// Values read per `getAll` request when reading the tail.
pub const READ_CHUNK: u32 = 10_000;

/// Reads a stored snapshot's JSON text: [`read_snapshot_text`], passed in
/// by whoever loads. A first visit has no snapshot to read, and most
/// histories never reach one ([`lifeline_core`] writes one every 2,000
/// positions), so the controller keeps this reader in a module of its own,
/// fetched only when [`Journal::load`] says a snapshot is there; it is
/// 56 KB of the controller's code, 14 KB of it gzip (docs/benchmarks.md,
/// "Twenty-third stop").
pub type ReadSnapshot = fn(&JsString) -> Result<ProjectionSnapshot, SchemaError>;

/// The one [`ReadSnapshot`].
pub fn read_snapshot_text(text: &JsString) -> Result<ProjectionSnapshot, SchemaError> {
    decode(text)
}

/// What [`Journal::load`] gives.
#[derive(Clone, Debug, PartialEq)]
pub enum Load {
    Loaded(Loaded),
    /// The journal holds a snapshot and no reader was given: nothing was
    /// read beyond the snapshots' keys. Load again with one.
    SnapshotReaderNeeded,
}

/// What [`Journal::load`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// The newest readable snapshot.
    pub snapshot: Option<ProjectionSnapshot>,
    /// Set when a newer snapshot was unreadable: which one was used instead,
    /// or that the journal must be replayed from the start.
    pub snapshot_note: Option<Phrase>,
    /// Readable entries after the snapshot's position (or all), by position.
    pub tail: Vec<JournalEntry>,
    /// Values that were skipped, unreadable snapshots included.
    pub quarantined: Vec<Quarantined>,
    /// The highest position the journal holds, readable or not (or the
    /// snapshot's): the next batch must start after it.
    pub last_position: u64,
}

/// What [`Journal::entries_after`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tail {
    pub entries: Vec<JournalEntry>,
    pub quarantined: Vec<Quarantined>,
}

impl Tail {
    /// The position to ask after next time (`after` when nothing was found).
    pub fn last_position(&self, after: u64) -> u64 {
        self.entries
            .iter()
            .map(|e| e.position)
            .chain(self.quarantined.iter().filter_map(|q| q.position))
            .fold(after, u64::max)
    }
}

impl Journal {
    /// The newest readable snapshot (read by `read`) and every entry after
    /// it, in one transaction; or, when there is a snapshot and no `read`,
    /// [`Load::SnapshotReaderNeeded`].
    pub async fn load(&self, read: Option<ReadSnapshot>) -> Result<Load, JournalError> {
        let mut names = vec![store::SNAPSHOTS];
        names.extend(store::ENTRIES);
        let transaction = self.readonly(&names)?;
        let keys = &self.inner.keys;
        let snapshots = self.store(&transaction, store::SNAPSHOTS, "load")?;
        let stored: Array = self
            .request(snapshots.get_all_keys(), "load snapshots")
            .await?
            .unchecked_into();
        let mut snapshot = None;
        let mut quarantined = Vec::new();
        let mut unreadable = Vec::new();
        for key in stored.iter().collect::<Vec<_>>().into_iter().rev() {
            let Some(read) = read else {
                return Ok(Load::SnapshotReaderNeeded);
            };
            let value = self.request(snapshots.get(&key), "load snapshot").await?;
            match read_snapshot(&key, &value, keys, read) {
                Ok(s) => {
                    snapshot = Some(s);
                    break;
                }
                Err(q) => {
                    unreadable.push(q.position.unwrap_or(0));
                    quarantined.push(q);
                }
            }
        }
        let snapshot_note = match (&snapshot, unreadable.as_slice()) {
            (_, []) => None,
            (Some(s), bad) => Some(Phrase::SnapshotFallback {
                bad: bad[0],
                loaded: s.position,
            }),
            (None, bad) => Some(Phrase::SnapshotsUnreadable {
                count: u32::try_from(bad.len()).unwrap_or(u32::MAX),
                newest: bad[0],
            }),
        };
        let after = snapshot
            .as_ref()
            .map_or(0, |s: &ProjectionSnapshot| s.position);
        let tail = self.read_tail(&transaction, after, None).await?;
        quarantined.extend(tail.quarantined);
        let last_position = tail
            .entries
            .iter()
            .map(|e| e.position)
            .chain(
                quarantined
                    .iter()
                    .filter(|q| q.store != store::SNAPSHOTS)
                    .filter_map(|q| q.position),
            )
            .fold(after, u64::max);
        Ok(Load::Loaded(Loaded {
            snapshot,
            snapshot_note,
            tail: tail.entries,
            quarantined,
            last_position,
        }))
    }

    /// Up to `limit` entries after position `after`, by position, with the
    /// unreadable values among them (for a follower filling a gap).
    pub async fn entries_after(&self, after: u64, limit: usize) -> Result<Tail, JournalError> {
        let transaction = self.readonly(&store::ENTRIES)?;
        self.read_tail(&transaction, after, Some(limit.max(1)))
            .await
    }

    async fn read_tail(
        &self,
        transaction: &IdbTransaction,
        after: u64,
        limit: Option<usize>,
    ) -> Result<Tail, JournalError> {
        struct Source {
            name: &'static str,
            /// `getAll` on the position index (or on `records` itself).
            reader: Reader,
            lower: JsValue,
            remaining: usize,
            /// Highest position read when the source stopped at its limit
            /// (values above it were not looked at).
            cut: Option<f64>,
            done: bool,
        }
        enum Reader {
            Index(web_sys::IdbIndex),
            Store(IdbObjectStore),
        }
        impl Reader {
            fn get_all(&self, range: &IdbKeyRange, count: u32) -> Result<IdbRequest, JsValue> {
                match self {
                    Reader::Index(i) => i.get_all_with_key_and_limit(range, count),
                    Reader::Store(s) => s.get_all_with_key_and_limit(range, count),
                }
            }
        }

        let keys = &self.inner.keys;
        let total = limit.unwrap_or(usize::MAX);
        let mut sources = Vec::with_capacity(store::ENTRIES.len());
        for name in store::ENTRIES {
            let s = self.store(transaction, name, "read")?;
            let reader = if name == store::RECORDS {
                Reader::Store(s)
            } else {
                Reader::Index(
                    s.index(store::POSITION_INDEX)
                        .map_err(|e| self.failure("read", &e))?,
                )
            };
            sources.push(Source {
                name,
                reader,
                lower: JsValue::from_f64(after as f64),
                remaining: total,
                cut: None,
                done: false,
            });
        }

        let mut entries: Vec<JournalEntry> = Vec::new();
        let mut quarantined: Vec<Quarantined> = Vec::new();
        while sources.iter().any(|s| !s.done) {
            // One round: a request on every unfinished store, then collect.
            let mut round = Vec::new();
            for (i, source) in sources.iter().enumerate().filter(|(_, s)| !s.done) {
                let count = source.remaining.min(READ_CHUNK as usize) as u32;
                let range = IdbKeyRange::lower_bound_with_open(&source.lower, true)
                    .map_err(|e| self.failure("read", &e))?;
                let request = source
                    .reader
                    .get_all(&range, count)
                    .map_err(|e| self.failure("read", &e))?;
                round.push((i, count, request));
            }
            for (i, count, request) in round {
                let values: Array = idb::request(&request)
                    .await
                    .map_err(|e| self.failure("read", &e))?
                    .unchecked_into();
                let source = &mut sources[i];
                let n = values.length();
                for value in values.iter() {
                    match read_entry(source.name, &value, keys) {
                        Ok(entry) => entries.push(entry),
                        Err(q) => quarantined.push(q),
                    }
                }
                source.remaining -= n as usize;
                if n < count {
                    source.done = true;
                } else {
                    let last = values.get(n - 1);
                    source.lower = Reflect::get(&last, &keys.position).unwrap_or(JsValue::NULL);
                    if source.remaining == 0 {
                        source.done = true;
                        // A non-numeric position sorts after every number, so
                        // every numeric position of this store was read.
                        source.cut = Some(source.lower.as_f64().unwrap_or(f64::INFINITY));
                    }
                }
            }
        }

        lifeline_core::order::by_key(&mut entries, |e| e.position.into());
        let mut merged: Vec<JournalEntry> = Vec::with_capacity(entries.len());
        for entry in entries {
            if merged
                .last()
                .is_some_and(|last| last.position == entry.position)
            {
                let value_store = store_for(&entry.record);
                quarantined.push(Quarantined {
                    store: value_store.to_string(),
                    key: printable_key_of_entry(&entry),
                    position: Some(entry.position),
                    reason: format!("another record already holds position {}", entry.position),
                });
            } else {
                merged.push(entry);
            }
        }
        if limit.is_some() {
            // Positions above the lowest store cut were not read everywhere.
            let cut = sources
                .iter()
                .filter_map(|s| s.cut)
                .fold(f64::INFINITY, f64::min);
            let mut keep = merged.len().min(total);
            if cut.is_finite() {
                keep = keep.min(merged.partition_point(|e| (e.position as f64) <= cut));
            }
            merged.truncate(keep);
            let reached = if keep == total {
                merged.last().map_or(cut, |e| e.position as f64)
            } else {
                cut
            };
            quarantined.retain(|q| q.position.is_none_or(|p| (p as f64) <= reached));
        }
        lifeline_core::order::by_key(&mut quarantined, |q| q.position.unwrap_or(u64::MAX).into());
        Ok(Tail {
            entries: merged,
            quarantined,
        })
    }

    /// Command `command`'s events after sequence number `after`, by
    /// sequence, `limit` of them at most: the `events` store's key range
    /// `[command, after + 1] ..= [command, MAX_SAFE_INTEGER]`, in one
    /// `getAll` (a settled command's events no longer change, and a
    /// running one's later events are the projection's to add). A value
    /// that does not read is left out (the load reported and quarantines
    /// it).
    pub async fn command_events(
        &self,
        command: lifeline_core::CommandId,
        after: lifeline_core::EventSeq,
        limit: Option<u32>,
    ) -> Result<Vec<lifeline_core::event::EventRecord>, JournalError> {
        let transaction = self.readonly(&[store::EVENTS])?;
        let events = self.store(&transaction, store::EVENTS, "read")?;
        let id = JsValue::from_str(&command.to_string());
        let range = IdbKeyRange::bound(
            &Array::of2(&id, &JsValue::from_f64(after.0 as f64 + 1.0)),
            &Array::of2(&id, &JsValue::from_f64(MAX_SAFE_INTEGER as f64)),
        )
        .map_err(|e| self.failure("read", &e))?;
        let request = match limit {
            Some(limit) => events.get_all_with_key_and_limit(&range, limit),
            None => events.get_all_with_key(&range),
        }
        .map_err(|e| self.failure("read", &e))?;
        let values: Array = idb::request(&request)
            .await
            .map_err(|e| self.failure("read", &e))?
            .unchecked_into();
        let keys = &self.inner.keys;
        Ok(values
            .iter()
            .filter_map(|value| match read_entry(store::EVENTS, &value, keys) {
                Ok(JournalEntry {
                    record: JournalRecord::Event(event),
                    ..
                }) if event.command == command => Some(event),
                _ => None,
            })
            .collect())
    }

    /// The content of artifact `digest`, checked against the digest.
    pub async fn artifact(&self, digest: &Digest) -> Result<Option<String>, JournalError> {
        let transaction = self.readonly(&[store::ARTIFACTS])?;
        let artifacts = self.store(&transaction, store::ARTIFACTS, "read")?;
        let value = self
            .request(
                artifacts.get(&JsValue::from_str(&digest.to_string())),
                "read artifact",
            )
            .await?;
        if value.is_undefined() {
            return Ok(None);
        }
        let data = Reflect::get(&value, &self.inner.keys.data)
            .ok()
            .and_then(|d| d.as_string())
            .ok_or_else(|| JournalError::Corrupt(format!("artifact {digest} has no text data")))?;
        // Assert after reading: content addressing is checked, not trusted.
        if Digest::of(data.as_bytes()) != *digest {
            return Err(JournalError::Corrupt(format!(
                "artifact {digest} does not match its digest"
            )));
        }
        Ok(Some(data))
    }
}

/// A reason for a decode failure that never quotes the record.
fn reason_for(error: &SchemaError) -> String {
    match error {
        SchemaError::TooLarge { len, max, .. } => {
            format!("the record is {len} bytes; the limit is {max}")
        }
        SchemaError::Malformed { schema, .. } => {
            format!("not a readable {schema}: its JSON is malformed or its fields do not match")
        }
        SchemaError::MissingVersion { schema } => {
            format!("the {schema} has no \"v\" schema version")
        }
        SchemaError::UnsupportedVersion { schema, found } => {
            let found = if found.len() <= 20 && found.bytes().all(|b| b.is_ascii_digit()) {
                found.as_str()
            } else {
                "another value"
            };
            format!(
                "the {schema} has schema version {found}, which this build does not understand (it reads \"v\": 1)"
            )
        }
        // Validation messages name ids, lengths and limits, not contents.
        SchemaError::Invalid { schema, detail } => {
            let mut detail = detail.clone();
            if detail.len() > 200 {
                let mut end = 200;
                while !detail.is_char_boundary(end) {
                    end -= 1;
                }
                detail.truncate(end);
                detail.push('…');
            }
            format!("invalid {schema}: {detail}")
        }
    }
}

fn position_of(value: &JsValue, keys: &Keys) -> Option<u64> {
    Reflect::get(value, &keys.position)
        .ok()
        .and_then(|p| p.as_f64())
        .filter(|p| p.fract() == 0.0 && *p >= 1.0 && *p <= MAX_SAFE_INTEGER as f64)
        .map(|p| p as u64)
}

/// Decodes and checks one stored entry (assert after reading).
fn read_entry(
    store_name: &'static str,
    value: &JsValue,
    keys: &Keys,
) -> Result<JournalEntry, Quarantined> {
    let position = position_of(value, keys);
    let refuse = |reason: String| Quarantined {
        store: store_name.to_string(),
        key: printable_key(store_name, value, keys),
        position,
        reason,
    };
    let Some(stored_position) = position else {
        return Err(refuse(
            "its position field is not a journal position".into(),
        ));
    };
    let Some(json) = json_of(value, keys) else {
        return Err(refuse("it has no json field".into()));
    };
    let entry: JournalEntry = decode(&json).map_err(|e| refuse(reason_for(&e)))?;
    if entry.position != stored_position {
        return Err(refuse(format!(
            "it is stored at position {stored_position} but the entry says {}",
            entry.position
        )));
    }
    let home = store_for(&entry.record);
    if home != store_name {
        return Err(refuse(format!(
            "the entry belongs in {home}, not {store_name}"
        )));
    }
    let text = |k: &JsValue| Reflect::get(value, k).ok().and_then(|v| v.as_string());
    let key_matches = match &entry.record {
        JournalRecord::CommandAdmitted(c) => text(&keys.command_id) == Some(c.command.to_string()),
        JournalRecord::Event(e) => {
            text(&keys.command_id) == Some(e.command.to_string())
                && Reflect::get(value, &keys.seq).ok().and_then(|s| s.as_f64())
                    == Some(e.seq.0 as f64)
        }
        JournalRecord::Recovery(r) => text(&keys.evidence_id) == Some(r.stamp.to_string()),
        _ => true,
    };
    if !key_matches {
        return Err(refuse(
            "it is stored under a key that is not the entry's own".into(),
        ));
    }
    Ok(entry)
}

/// A stored value's JSON text, left in JavaScript for `JSON.parse`.
fn json_of(value: &JsValue, keys: &Keys) -> Option<JsString> {
    Reflect::get(value, &keys.json).ok()?.dyn_into().ok()
}

fn read_snapshot(
    key: &JsValue,
    value: &JsValue,
    keys: &Keys,
    read: ReadSnapshot,
) -> Result<ProjectionSnapshot, Quarantined> {
    let position = key
        .as_f64()
        .filter(|p| p.fract() == 0.0 && *p >= 0.0)
        .map(|p| p as u64);
    let refuse = |reason: String| Quarantined {
        store: store::SNAPSHOTS.to_string(),
        key: printable(key),
        position,
        reason,
    };
    let Some(json) = json_of(value, keys) else {
        return Err(refuse("it has no json field".into()));
    };
    let snapshot = read(&json).map_err(|e| refuse(reason_for(&e)))?;
    if Some(snapshot.position) != position {
        return Err(refuse(format!(
            "it is stored at position {} but the snapshot says {}",
            printable(key),
            snapshot.position
        )));
    }
    Ok(snapshot)
}
