//! The journal's schema: its stores and keys, every migration, and how an
//! entry is laid out as a stored value.
//!
//! # Schema (version 2)
//!
//! Every value that holds a [`JournalEntry`] is
//! `{ position, <natural key fields>, json }`, where `json` is the entry as
//! [`lifeline_core::schema::encode`] writes it (with `"v": 1`). The store is
//! chosen by the record's kind:
//!
//! | store | key | holds |
//! |---|---|---|
//! | `commands` | `command_id` | `CommandAdmitted` entries |
//! | `events` | `[command_id, seq]` | `Event` entries |
//! | `evidence` | `evidence_id` (the error stamp) | `Recovery` entries |
//! | `records` | `position` | every other record kind |
//! | `artifacts` | `digest` (hex) | `{ digest, data }`: output named by `ArtifactStored` |
//! | `snapshots` | `position` | `{ position, json }`: projection snapshots, newest [`super::SNAPSHOTS_KEPT`] kept |
//! | `meta` | `key` | `{ key, ... }`: the writer epoch (`{ key: "writer", epoch }`) and the journal's identity (`{ key: "id", id }`, stamped by the first claim) |
//! | `quarantine` | auto-increment | records that could not be read, moved aside with the reason |
//!
//! `commands`, `events` and `evidence` have an index `position`, so the tail
//! after position P is read with `getAll(IDBKeyRange.lowerBound(P, true),
//! READ_CHUNK)` on the index (and on `records` itself) and merged by
//! position — no per-record cursor stepping.
//!
//! Migrations run inside the `versionchange` transaction, one step per
//! version, so a database at any older version reaches the current one by the
//! same path a fresh install takes. A database written by a *newer* build is
//! never opened by this one: IndexedDB refuses with a `VersionError`, which we
//! turn into an instruction for the user instead of misreading newer records.
//! Schema 1 records (no `position` field) are left where they are: they are
//! outside the `position` index and therefore outside the journal.

use js_sys::{Array, Object, Reflect, JSON};
use lifeline_core::schema::encode;
use lifeline_core::{JournalEntry, JournalRecord};
use wasm_bindgen::JsValue;
use web_sys::{IdbDatabase, IdbIndexParameters, IdbObjectStoreParameters, IdbTransaction};

use super::JournalError;
use crate::idb::Step;

/// The version this build writes: one more than the last migration.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Object stores and indexes.
pub mod store {
    /// `CommandAdmitted` entries, keyed by command id. (v1)
    pub const COMMANDS: &str = "commands";
    /// `Event` entries, keyed by `[command id, sequence]`. (v1)
    pub const EVENTS: &str = "events";
    /// Content-addressed output artifacts, keyed by SHA-256 digest (hex). (v1)
    pub const ARTIFACTS: &str = "artifacts";
    /// Projection snapshots, keyed by journal position. (v1)
    pub const SNAPSHOTS: &str = "snapshots";
    /// `Recovery` entries, keyed by evidence id (the error stamp). (v1)
    pub const EVIDENCE: &str = "evidence";
    /// Small facts about the journal itself (the writer epoch). (v1)
    pub const META: &str = "meta";
    /// Every other journal entry, keyed by position. (v2)
    pub const RECORDS: &str = "records";
    /// Values that could not be read, moved aside (auto-increment key). (v2)
    pub const QUARANTINE: &str = "quarantine";

    /// Index on `position` in `commands`, `events` and `evidence`. (v2)
    pub const POSITION_INDEX: &str = "position";

    pub const ALL: [&str; 8] = [
        COMMANDS, EVENTS, ARTIFACTS, SNAPSHOTS, EVIDENCE, META, RECORDS, QUARANTINE,
    ];
    /// Stores that hold journal entries.
    pub const ENTRIES: [&str; 4] = [COMMANDS, EVENTS, EVIDENCE, RECORDS];
}

/// Largest integer a JavaScript number carries exactly.
pub(super) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The store a record kind lives in.
pub fn store_for(record: &JournalRecord) -> &'static str {
    match record {
        JournalRecord::CommandAdmitted(_) => store::COMMANDS,
        JournalRecord::Event(_) => store::EVENTS,
        JournalRecord::Recovery(_) => store::EVIDENCE,
        _ => store::RECORDS,
    }
}

/// Property names, made into JS strings once.
pub(super) struct Keys {
    pub(super) position: JsValue,
    pub(super) json: JsValue,
    pub(super) command_id: JsValue,
    pub(super) seq: JsValue,
    pub(super) evidence_id: JsValue,
    pub(super) digest: JsValue,
    pub(super) data: JsValue,
    pub(super) key: JsValue,
    pub(super) epoch: JsValue,
}

impl Keys {
    pub(super) fn new() -> Keys {
        let s = JsValue::from_str;
        Keys {
            position: s("position"),
            json: s("json"),
            command_id: s("command_id"),
            seq: s("seq"),
            evidence_id: s("evidence_id"),
            digest: s("digest"),
            data: s("data"),
            key: s("key"),
            epoch: s("epoch"),
        }
    }
}

/// An open journal database. Cheap to clone; the connection closes when the
pub(super) fn set(object: &Object, key: &JsValue, value: &JsValue) {
    // Setting a data property on a fresh plain object cannot throw.
    let _ = Reflect::set(object, key, value);
}

pub(super) fn safe_number(n: u64) -> Result<JsValue, JournalError> {
    if n > MAX_SAFE_INTEGER {
        return Err(JournalError::Invalid(format!(
            "{n} is above what IndexedDB keys carry exactly"
        )));
    }
    Ok(JsValue::from_f64(n as f64))
}

/// `(store, value)` for one entry.
pub(super) fn entry_row(
    entry: &JournalEntry,
    keys: &Keys,
) -> Result<(&'static str, JsValue), JournalError> {
    let json = encode(entry).map_err(|e| JournalError::Invalid(e.to_string()))?;
    // serde_json writes UTF-8.
    let json = String::from_utf8(json).map_err(|e| JournalError::Invalid(e.to_string()))?;
    let value = Object::new();
    set(&value, &keys.position, &safe_number(entry.position)?);
    match &entry.record {
        JournalRecord::CommandAdmitted(c) => {
            set(
                &value,
                &keys.command_id,
                &JsValue::from_str(&c.command.to_string()),
            );
        }
        JournalRecord::Event(e) => {
            set(
                &value,
                &keys.command_id,
                &JsValue::from_str(&e.command.to_string()),
            );
            set(&value, &keys.seq, &safe_number(e.seq.0)?);
        }
        JournalRecord::Recovery(r) => {
            set(
                &value,
                &keys.evidence_id,
                &JsValue::from_str(&r.stamp.to_string()),
            );
        }
        _ => {}
    }
    set(&value, &keys.json, &JsValue::from_str(&json));
    Ok((store_for(&entry.record), value.into()))
}

pub(super) fn printable(key: &JsValue) -> String {
    JSON::stringify(key)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| "?".into())
}

/// The primary key of a value in `store`, from its key path, as JSON.
pub(super) fn printable_key(store_name: &str, value: &JsValue, keys: &Keys) -> String {
    let get = |k: &JsValue| Reflect::get(value, k).unwrap_or(JsValue::UNDEFINED);
    let key = match store_name {
        store::COMMANDS => get(&keys.command_id),
        store::EVENTS => Array::of2(&get(&keys.command_id), &get(&keys.seq)).into(),
        store::EVIDENCE => get(&keys.evidence_id),
        _ => get(&keys.position),
    };
    printable(&key)
}

pub(super) fn printable_key_of_entry(entry: &JournalEntry) -> String {
    match &entry.record {
        JournalRecord::CommandAdmitted(c) => format!("\"{}\"", c.command),
        JournalRecord::Event(e) => format!("[\"{}\",{}]", e.command, e.seq.0),
        JournalRecord::Recovery(r) => format!("\"{}\"", r.stamp),
        _ => entry.position.to_string(),
    }
}

/// Every migration, in order (see [`crate::idb::Step`]). Shipped: never
/// edit a step; a new schema is a new step at the end.
pub(super) const MIGRATIONS: [Step; 2] = [create_v1, index_positions_v2];

/// The stores of the first release.
fn create_v1(database: &IdbDatabase, _: &IdbTransaction) -> Result<(), JsValue> {
    database.create_object_store_with_optional_parameters(store::COMMANDS, &keyed("command_id"))?;
    let events = IdbObjectStoreParameters::new();
    events.set_key_path(&Array::of2(&"command_id".into(), &"seq".into()));
    database.create_object_store_with_optional_parameters(store::EVENTS, &events)?;
    database.create_object_store_with_optional_parameters(store::ARTIFACTS, &keyed("digest"))?;
    database.create_object_store_with_optional_parameters(store::SNAPSHOTS, &keyed("position"))?;
    database
        .create_object_store_with_optional_parameters(store::EVIDENCE, &keyed("evidence_id"))?;
    database.create_object_store_with_optional_parameters(store::META, &keyed("key"))?;
    Ok(())
}

/// Reading the tail by position instead of stepping a cursor per record:
/// a `position` index on the keyed entry stores, `records` for every other
/// kind, and `quarantine` for values set aside.
fn index_positions_v2(database: &IdbDatabase, transaction: &IdbTransaction) -> Result<(), JsValue> {
    let params = IdbIndexParameters::new();
    params.set_unique(false);
    for name in [store::COMMANDS, store::EVENTS, store::EVIDENCE] {
        transaction
            .object_store(name)?
            .create_index_with_str_and_optional_parameters(
                store::POSITION_INDEX,
                "position",
                &params,
            )?;
    }
    database.create_object_store_with_optional_parameters(store::RECORDS, &keyed("position"))?;
    let quarantine = IdbObjectStoreParameters::new();
    quarantine.set_auto_increment(true);
    database.create_object_store_with_optional_parameters(store::QUARANTINE, &quarantine)?;
    Ok(())
}

fn keyed(path: &str) -> IdbObjectStoreParameters {
    let params = IdbObjectStoreParameters::new();
    params.set_key_path(&JsValue::from_str(path));
    params
}
