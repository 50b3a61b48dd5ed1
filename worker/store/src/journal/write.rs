//! Writing persist batches and snapshots.
//!
//! [`Journal::write_batch`] puts a whole [`PersistBatch`] in one readwrite
//! transaction and resolves only on its `complete` event: that is the
//! acknowledgement the core gets. The same transaction reads `meta` `writer`
//! first (the [fence](super::fence)); if another controller claimed the
//! journal since, nothing of the batch is kept
//! ([`JournalError::Superseded`]).
//!
//! The durability each transaction asks for ([`durability_for`]):
//!
//! | batch holds | durability | why |
//! |---|---|---|
//! | only `Event`s with stdout/stderr bodies and `ArtifactStored` (+ their artifacts) | `relaxed` | output: losing the tail of it to an OS crash or power loss is acceptable, and it is most of the write volume |
//! | anything else: admissions, dispatch exposure, ACKs, refusals, terminal and other events, outcome changes, runtime lifecycle, cancel/termination requests, recovery evidence, sessions and turns, any kind added later | `strict` | these decide what may be replayed and what the user is told; they must survive power loss once acknowledged |
//! | `claim_writer`, `quarantine` | `strict` | the fence and moving records aside |
//! | `put_snapshot` | `relaxed` | derived data: a lost snapshot falls back to the previous one or to replay |
//!
//! Chromium commits transactions to its backing store in order, so a strict
//! commit also makes every relaxed one before it durable; a crash can only
//! cut off relaxed output at the journal's tail, never leave a hole.

use js_sys::{Array, Object};
use lifeline_core::journal::Purge;
use lifeline_core::schema::{encode, limits};
use lifeline_core::{JournalRecord, PersistBatch, ProjectionSnapshot, RetainedBody, Schema};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::IdbKeyRange;

use super::fence::WriterEpoch;
use super::schema::{entry_row, safe_number, set, store};
use super::{Durability, Journal, JournalError};
use crate::idb;

/// Snapshots kept; older ones are deleted when a new one is written.
pub const SNAPSHOTS_KEPT: usize = 2;

/// The durability a persist batch is written with (see the module table).
pub fn durability_for(batch: &PersistBatch) -> Durability {
    let output_only = batch.entries.iter().all(|e| match &e.record {
        JournalRecord::Event(event) => {
            matches!(
                event.body,
                RetainedBody::Stdout(_) | RetainedBody::Stderr(_)
            )
        }
        JournalRecord::ArtifactStored { .. } => true,
        _ => false,
    });
    if output_only {
        Durability::Relaxed
    } else {
        Durability::Strict
    }
}

impl Journal {
    /// Writes one persist batch in one transaction; resolves when its
    /// `complete` event fired. Nothing of the batch is kept when this fails.
    pub async fn write_batch(
        &self,
        batch: &PersistBatch,
        epoch: WriterEpoch,
    ) -> Result<(), JournalError> {
        self.usable()?;
        // Assert before writing: a batch that fails its own checks is a bug.
        batch.validate().map_err(JournalError::Invalid)?;
        let keys = &self.inner.keys;
        let mut rows: Vec<(&'static str, JsValue)> =
            Vec::with_capacity(batch.entries.len() + batch.artifacts.len());
        for entry in &batch.entries {
            rows.push(entry_row(entry, keys)?);
        }
        for artifact in &batch.artifacts {
            let value = Object::new();
            set(
                &value,
                &keys.digest,
                &JsValue::from_str(&artifact.digest().to_string()),
            );
            set(&value, &keys.data, &JsValue::from_str(artifact.data()));
            rows.push((store::ARTIFACTS, value.into()));
        }
        let mut names: Vec<&str> = Vec::with_capacity(4);
        for (name, _) in &rows {
            if !names.contains(name) {
                names.push(name);
            }
        }
        if batch.purge.is_some() {
            for name in store::ENTRIES
                .into_iter()
                .chain([store::ARTIFACTS, store::SNAPSHOTS])
            {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }

        // From here to `finish` nothing but IndexedDB requests is issued:
        // the fence commits the transaction as soon as it has read, so
        // every put must be issued in this task.
        let (tx, fence, stores) = self
            .fenced("write", &names, durability_for(batch), epoch, true)
            .await?;
        #[cfg(feature = "fault-injection")]
        let fault = self.inner.fault.take();
        #[cfg(feature = "fault-injection")]
        let meta = fault.map(|_| {
            tx.store(store::META)
                .expect("the fault hook breaks writes through `meta`: claim without holding")
        });
        for (_i, (name, value)) in rows.iter().enumerate() {
            #[cfg(feature = "fault-injection")]
            if fault == Some(_i) {
                inject_fault(meta.as_ref(), keys);
            }
            if let Err(e) = stores.get(name).put(value) {
                return Err(self.abandon(tx, "write", &e).await);
            }
        }
        #[cfg(feature = "fault-injection")]
        if fault.is_some_and(|f| f >= rows.len()) {
            inject_fault(meta.as_ref(), keys);
        }
        if let Some(purge) = &batch.purge {
            if let Err(e) = remove(&stores, purge, keys) {
                return Err(self.abandon(tx, "write", &e).await);
            }
        }
        fence.all_issued(&tx);
        self.finish("write", tx, Some(&fence)).await
    }

    /// Test hook: the next [`Journal::write_batch`] makes a request fail
    /// inside its transaction after `puts` puts (a duplicate `add` in
    /// `meta`, which fails with `ConstraintError` and aborts it). Only in
    /// builds with the `fault-injection` feature, which the crate's own
    /// tests turn on: the bundle has no way to break a write on purpose.
    #[cfg(feature = "fault-injection")]
    pub fn fail_next_write_after(&self, puts: usize) {
        self.inner.fault.set(Some(puts));
    }

    /// Writes a projection snapshot (relaxed) and deletes all but the newest
    /// [`SNAPSHOTS_KEPT`].
    pub async fn put_snapshot(
        &self,
        snapshot: &ProjectionSnapshot,
        epoch: WriterEpoch,
    ) -> Result<(), JournalError> {
        self.usable()?;
        let json = encode(snapshot).map_err(|e| JournalError::Invalid(e.to_string()))?;
        if json.len() > limits::MAX_SNAPSHOT_BYTES {
            // It could never be read back; replay from the entries instead.
            return Err(JournalError::Invalid(format!(
                "the snapshot at position {} is {} bytes, above the {} a record may have",
                snapshot.position,
                json.len(),
                limits::MAX_SNAPSHOT_BYTES
            )));
        }
        let position = safe_number(snapshot.position)?;
        let json = String::from_utf8(json).map_err(|e| JournalError::Invalid(e.to_string()))?;
        let keys = &self.inner.keys;
        let value = Object::new();
        set(&value, &keys.position, &position);
        set(&value, &keys.json, &JsValue::from_str(&json));

        let (tx, fence, stores) = self
            .fenced(
                "snapshot",
                &[store::SNAPSHOTS],
                Durability::Relaxed,
                epoch,
                false,
            )
            .await?;
        let snapshots = stores.get(store::SNAPSHOTS);
        if let Err(e) = snapshots.put(&value) {
            return Err(self.abandon(tx, "snapshot", &e).await);
        }
        // If the fence aborted the transaction this request fails, and
        // `finish` reports why.
        if let Ok(request) = snapshots.get_all_keys() {
            if let Ok(stored) = idb::request(&request).await {
                let stored: Array = stored.unchecked_into();
                let n = stored.length() as usize;
                for old in stored.iter().take(n.saturating_sub(SNAPSHOTS_KEPT)) {
                    let _ = snapshots.delete(&old);
                }
                // A delete wrote a newer snapshot meanwhile and removed
                // every older one: this one may hold the deleted session.
                let newest = stored.iter().last().and_then(|k| k.as_f64());
                if newest.is_some_and(|k| k > snapshot.position as f64) {
                    let _ = snapshots.delete(&position);
                }
            }
        }
        self.finish("snapshot", tx, Some(&fence)).await
    }
}

/// A deleted session's records, outputs, evidence and artifacts, removed
/// in its tombstone's transaction, and the snapshot that stands for them:
/// every older snapshot holds the session, so it is the only one left.
fn remove(
    stores: &super::fence::Stores<'_>,
    purge: &Purge,
    keys: &super::schema::Keys,
) -> Result<(), JsValue> {
    let records = stores.get(store::RECORDS);
    for position in &purge.records {
        records.delete(&JsValue::from_f64(*position as f64))?;
    }
    let (commands, events) = (stores.get(store::COMMANDS), stores.get(store::EVENTS));
    for command in &purge.commands {
        let id = JsValue::from_str(&command.to_string());
        commands.delete(&id)?;
        // `[id]` sorts before every `[id, seq]` and `[id, []]` after them.
        let range = IdbKeyRange::bound(&Array::of1(&id), &Array::of2(&id, &Array::new()))?;
        events.delete(&range)?;
    }
    let evidence = stores.get(store::EVIDENCE);
    for stamp in &purge.evidence {
        evidence.delete(&JsValue::from_str(&stamp.to_string()))?;
    }
    let artifacts = stores.get(store::ARTIFACTS);
    for digest in &purge.artifacts {
        artifacts.delete(&JsValue::from_str(&digest.to_string()))?;
    }
    let snapshots = stores.get(store::SNAPSHOTS);
    snapshots.clear()?;
    if let Some((position, json)) = &purge.snapshot {
        let value = Object::new();
        set(&value, &keys.position, &JsValue::from_f64(*position as f64));
        set(&value, &keys.json, &JsValue::from_str(json));
        snapshots.put(&value)?;
    }
    Ok(())
}

/// A second `add` of one key: a request that fails inside the transaction
/// and aborts it, as a full disk or a corrupt store would.
#[cfg(feature = "fault-injection")]
fn inject_fault(meta: Option<&web_sys::IdbObjectStore>, keys: &super::schema::Keys) {
    let Some(meta) = meta else {
        return;
    };
    let value = Object::new();
    set(&value, &keys.key, &JsValue::from_str("injected-fault"));
    let _ = meta.add(&value);
    let _ = meta.add(&value);
}
