//! The persist batch: what the controller has recorded and not yet had
//! confirmed, and the effects that must wait for it.
//!
//! Everything a client, a runtime or the shell may observe is derived from
//! durable records, so an effect that depends on a record is held behind
//! the batch carrying it (`defer`) and released only by its confirmation.
//! One batch is in flight at a time: a failed write is retried unchanged, so
//! the journal never gets a hole, and new admissions are refused while
//! writes keep failing.

use std::sync::Arc;

use crate::event::ArtifactBlob;
use crate::id::{CommandId, IdError, Millis, RuntimeId};
use crate::journal::{
    BatchId, JournalEntry, JournalRecord, PersistBatch, RecoveryKind, Resolution,
};
use crate::message::{ClientId, ClientMessage, ControllerToRuntime, Rejection};
use crate::schema::{limits, Schema, V1};

use super::evidence::clip;
use super::{Controller, ControllerEffect, ControllerError, TimerId};

#[derive(Clone, Debug, Default)]
pub(super) struct OpenBatch {
    pub(super) entries: Vec<JournalEntry>,
    pub(super) artifacts: Vec<ArtifactBlob>,
    pub(super) after: Vec<ControllerEffect>,
    /// A delete's removal, for the batch holding its tombstone.
    pub(super) purge: Option<crate::journal::Purge>,
}

#[derive(Clone, Debug)]
pub(super) struct InFlight {
    pub(super) batch: Arc<PersistBatch>,
    pub(super) after: Vec<ControllerEffect>,
    pub(super) failures: u32,
}

impl Controller {
    pub(super) fn mint<T>(&mut self, now: Millis, make: fn(u128) -> Result<T, IdError>) -> T {
        for _ in 0..1024 {
            let raw = self.minter.mint_raw(now);
            if !self.working.is_seen(raw) {
                if let Ok(id) = make(raw) {
                    return id;
                }
            }
        }
        panic!("id minter produced 1024 identities already in the journal");
    }

    pub(super) fn record(&mut self, now: Millis, record: JournalRecord) {
        let entry = JournalEntry {
            v: V1,
            position: self.working.position + 1,
            at: now,
            record,
        };
        if let Err(e) = self.working.apply(&entry) {
            panic!("controller produced a record its own journal refuses: {e}");
        }
        self.open.entries.push(entry);
    }

    /// Holds an effect until everything recorded so far is durable.
    pub(super) fn defer(&mut self, effect: ControllerEffect) {
        if !self.open.entries.is_empty() {
            self.open.after.push(effect);
        } else if let Some(f) = &mut self.in_flight {
            f.after.push(effect);
        } else {
            self.effects.push_back(effect);
        }
    }

    pub(super) fn has_room(&self) -> bool {
        self.open.entries.len() < self.config.max_open_entries
    }

    /// From now on a batch is cut only when the caller says so
    /// ([`Controller::cut_batch`]), not after every input: a caller that
    /// hands the controller several requests for one change of its own (the
    /// engine: a session's transition and the records it causes) gets them
    /// written in one transaction, so no crash can separate them.
    pub fn hold_batches(&mut self) {
        self.held = true;
    }

    /// Cuts the records made so far into the next batch if none is in
    /// flight. True if a `Persist` effect was emitted.
    pub fn cut_batch(&mut self) -> bool {
        let before = self.effects.len();
        let held = std::mem::replace(&mut self.held, false);
        self.flush();
        self.held = held;
        self.effects.len() > before
    }

    pub(super) fn flush(&mut self) {
        if self.held || self.in_flight.is_some() || self.open.entries.is_empty() {
            return;
        }
        let take_all = self.open.entries.len() <= limits::MAX_BATCH_ENTRIES;
        let entries: Vec<JournalEntry> = if take_all {
            std::mem::take(&mut self.open.entries)
        } else {
            let rest = self.open.entries.split_off(limits::MAX_BATCH_ENTRIES);
            std::mem::replace(&mut self.open.entries, rest)
        };
        let (artifacts, keep): (Vec<ArtifactBlob>, Vec<ArtifactBlob>) =
            std::mem::take(&mut self.open.artifacts)
                .into_iter()
                .partition(|a| {
                    entries.iter().any(|e| {
                        matches!(&e.record, JournalRecord::ArtifactStored { digest, .. } if *digest == a.digest())
                    })
                });
        self.open.artifacts = keep;
        let after = if take_all {
            std::mem::take(&mut self.open.after)
        } else {
            Vec::new()
        };
        // Only a batch that takes every open entry ends where `working`
        // is, so only it can carry the snapshot the removal needs.
        let purge = if take_all {
            self.open.purge.take().and_then(|mut p| {
                let json = crate::schema::encode(&self.working.snapshot()).ok()?;
                if json.len() > limits::MAX_SNAPSHOT_BYTES {
                    // No snapshot can hold it: the entries stay, hidden by
                    // the tombstone, rather than leave holes a fold from
                    // the start would trip over.
                    return None;
                }
                p.snapshot = Some((self.working.position, String::from_utf8(json).ok()?));
                Some(p)
            })
        } else {
            None
        };
        let batch = PersistBatch {
            v: V1,
            batch: BatchId(entries[0].position),
            entries,
            artifacts,
            purge,
        };
        if let Err(e) = batch.validate() {
            panic!("controller built an invalid persist batch: {e}");
        }
        let batch = Arc::new(batch);
        self.effects
            .push_back(ControllerEffect::Persist(Arc::clone(&batch)));
        self.in_flight = Some(InFlight {
            batch,
            after,
            failures: 0,
        });
    }

    pub(super) fn send(&mut self, runtime: RuntimeId, message: ControllerToRuntime) {
        self.effects
            .push_back(ControllerEffect::SendToRuntime { runtime, message });
    }

    pub(super) fn send_after(&mut self, runtime: RuntimeId, message: ControllerToRuntime) {
        self.defer(ControllerEffect::SendToRuntime { runtime, message });
    }

    pub(super) fn timer(&mut self, timer: TimerId, at: Millis) {
        self.effects
            .push_back(ControllerEffect::SetTimer { timer, at });
    }

    pub(super) fn reply(&mut self, client: ClientId, message: ClientMessage) {
        self.defer(ControllerEffect::NotifyClient { client, message });
    }

    pub(super) fn persist_failed(
        &mut self,
        batch: BatchId,
        reason: &str,
        now: Millis,
    ) -> Result<(), ControllerError> {
        let (failures, commands, entry_count) = match &mut self.in_flight {
            Some(f) if f.batch.batch == batch => {
                f.failures += 1;
                let mut commands: Vec<CommandId> = f
                    .batch
                    .entries
                    .iter()
                    .filter_map(|e| match &e.record {
                        JournalRecord::CommandAdmitted(r) => Some(r.command),
                        JournalRecord::OutcomeChanged { command, .. } => Some(*command),
                        JournalRecord::Event(r) => Some(r.command),
                        JournalRecord::DispatchExposed { command, .. } => Some(*command),
                        _ => None,
                    })
                    .collect();
                crate::order::dedup_by_key(&mut commands, |c| c.as_u128());
                (f.failures, commands, f.batch.entries.len())
            }
            _ => return Err(ControllerError::UnknownBatch { batch }),
        };
        if failures == 1 {
            let outcomes = commands
                .iter()
                .filter_map(|c| {
                    self.durable.command(*c).map(|v| Resolution {
                        command: *c,
                        attempt: v.exposure.attempt(),
                        before: v.outcome,
                        after: v.outcome,
                    })
                })
                .collect();
            self.evidence(
                now,
                RecoveryKind::CheckpointFailure,
                None,
                format!(
                    "write of batch {} ({entry_count} entries) failed: {}; nothing in it is durable, clients were not told, and it is being retried unchanged",
                    batch.0,
                    clip(reason)
                ),
                outcomes,
            );
        }
        if failures >= self.config.persist_failures_before_degraded {
            self.degraded = Some(clip(reason));
        }
        let shift = failures.saturating_sub(1).min(16);
        let backoff = self
            .config
            .persist_retry_ms
            .saturating_mul(1u64 << shift)
            .min(self.config.persist_retry_max_ms);
        self.timer(TimerId::PersistRetry { batch }, now.plus(backoff));
        Ok(())
    }

    /// Refuses new work while writes keep failing or too much is unwritten.
    pub(super) fn writable(&self) -> Result<(), Rejection> {
        if let Some(detail) = &self.degraded {
            return Err(Rejection::JournalUnavailable {
                detail: detail.clone(),
            });
        }
        if !self.has_room() {
            return Err(Rejection::Busy);
        }
        Ok(())
    }
}
