//! Leading and following: recovery from what the journal holds, persist
//! results, what a storage fault means, snapshots, and a follower's fold
//! of the leader's broadcasts.
//!
//! A storage fault is read here and nowhere else: an upgrade by a newer
//! build stops this tab; a deleted or closed database says the history is
//! gone and offers a new journal; a damaged writer record keeps what is
//! durable on screen read-only and offers a repair; any other failed write
//! leaves the core degraded and the database is checked again. In every
//! case a prompt not yet recorded goes back to the page's message box.

use lifeline_core::phrase::{JournalFault, Phrase};
use lifeline_core::view::{batch_deltas, session_deltas};
use lifeline_core::{
    Controller, ControllerConfig, ControllerEffect, JournalEntry, JournalRecord, Millis,
    PersistBatch, Projection, ProjectionSnapshot, RuntimeIdentity, StartCause, TurnId,
};
use lifeline_protocol::{ControllerToPage, JournalStatus, Level, Role};

use std::sync::Arc;

use crate::{Early, Effect, Engine, StoreFailure, SNAPSHOT_EVERY};

/// What a leader recovers from.
pub struct Recovered {
    /// The salvaged fold of the journal (unreadable values set aside).
    pub projection: Projection,
    /// Values set aside as unreadable, reported as missing on the card.
    pub unreadable: u32,
    pub cause: StartCause,
    /// Fresh random bytes for the core's identities.
    pub entropy: Vec<u8>,
}

impl Engine {
    /// The journal opened (schema version; the database's identity once a
    /// writer claimed it).
    pub fn handle_journal_open(&mut self, schema_version: u32, id: Option<String>) {
        self.journal = JournalStatus::Open { schema_version, id };
        self.publish_status();
    }

    /// The journal could not be opened or read: nothing can be shown.
    pub fn handle_journal_unavailable(&mut self, fault: JournalFault) {
        let reason = Phrase::Journal { fault };
        self.journal = JournalStatus::Unavailable {
            reason: reason.clone(),
        };
        self.notice("journal", Level::Error, reason);
        self.publish_status();
    }

    /// The writer lock could not be held.
    pub fn handle_lock_failed(&mut self, reason: Phrase) {
        self.notice("lock", Level::Error, reason);
    }

    /// Starts leading from what the journal holds.
    pub fn lead(&mut self, recovered: Recovered, now: Millis) {
        let Recovered {
            projection,
            unreadable,
            cause,
            entropy,
        } = recovered;
        self.cause = Some(cause);
        self.stopped = None;
        self.fold = None;
        // Leading again (after Repair journal) starts from the journal
        // alone: nothing of an earlier leadership's sessions, starts or
        // requests carries over.
        self.sessions = None;
        self.launching = None;
        self.preparing.clear();
        self.adopting = None;
        self.rejoining = None;
        self.active.clear();
        self.awaiting_record.clear();
        self.stopping.clear();
        self.live.clear();
        self.conversations.clear();
        self.attempt_timers.clear();
        self.inspecting = false;
        self.restart = None;
        self.card_dirty = true;
        self.facts.quarantined = unreadable;
        self.last_snapshot = projection.position;
        let config = ControllerConfig {
            entropy,
            ..ControllerConfig::default()
        };
        let snapshot = ProjectionSnapshot {
            v: lifeline_core::schema::SnapshotVersion::CURRENT,
            position: projection.position,
            projection,
        };
        let mut core = match Controller::recover_from_snapshot(config, snapshot, &[], cause, now) {
            Ok(core) => core,
            Err(e) => {
                self.effects.push_back(Effect::Log(e.to_string()));
                return self.stop(Phrase::Journal {
                    fault: JournalFault::NotRecovered {
                        position: e.position,
                    },
                });
            }
        };
        // Every change one input makes is written as one batch (cut when
        // the pump is quiet): a re-issue and its link, a session's
        // transition and its execution record.
        core.hold_batches();
        if cause == StartCause::ControllerRestart {
            self.restart = Some(lifeline_core::restart::RestartTally::new(
                core.pending_projection(),
            ));
        }
        self.session = crate::open::pick_session(core.pending_projection(), self.preferred);
        let deltas = self
            .session
            .map(|s| session_deltas(core.projection(), s))
            .unwrap_or_default();
        self.post(ControllerToPage::View {
            reset: true,
            deltas,
        });
        self.core = Some(core);
        self.resume_cleanups();
        self.register_ports(now);
        self.card_dirty = true;
        self.effects.push_back(Effect::OpenProfiles);
        for input in std::mem::take(&mut self.early) {
            match input {
                Early::Message {
                    runtime,
                    generation,
                    port,
                    message,
                } => self.handle_runtime_message(runtime, generation, port, message, now),
                Early::Ended {
                    runtime,
                    generation,
                    port,
                    how,
                } => self.worker_ended(runtime, generation, port, how, now),
                Early::Exited {
                    runtime,
                    generation,
                    crashed,
                    detail,
                } => self.handle_runtime_exited(runtime, generation, crashed, detail, now),
                Early::TerminateFailed {
                    runtime,
                    generation,
                    detail,
                } => self.handle_terminate_failed(runtime, generation, &detail, now),
            }
        }
        self.pump(now);
    }

    /// The page said which role this tab has.
    pub fn handle_start(&mut self, role: Role) {
        self.role = role;
        self.publish_status();
    }

    /// At startup the writer record could not be read: read-only, and a
    /// repair leads with `cause`.
    pub fn handle_writer_unreadable(&mut self, projection: Projection, cause: StartCause) {
        self.cause = Some(cause);
        self.read_only(projection);
    }

    /// The writer record is damaged: the rest is shown read-only from
    /// `projection`, the journal stays open for Export, and the page offers
    /// Repair journal ([`Engine::handle_repair`]).
    fn read_only(&mut self, projection: Projection) {
        let reason = Phrase::Journal {
            fault: JournalFault::WriterUnreadable,
        };
        self.halt(&reason, false);
        self.session = crate::open::pick_session(&projection, self.preferred);
        let deltas = self
            .session
            .map(|s| session_deltas(&projection, s))
            .unwrap_or_default();
        self.post(ControllerToPage::View {
            reset: true,
            deltas,
        });
        self.fold = Some(projection);
        self.publish_sessions();
        self.journal = JournalStatus::ReadOnly { reason };
        // No card: its actions would all be refused, for a reason (another
        // tab leads) that is not this one; the banner says what is.
        self.post(ControllerToPage::Recovery { card: None });
        self.publish_status();
    }

    /// The page's Repair journal: only a read-only leader repairs, once.
    pub fn handle_repair(&mut self) {
        let read_only = matches!(self.journal, JournalStatus::ReadOnly { .. });
        if !read_only || self.cause.is_none() {
            return;
        }
        // Not read-only while it runs: a second click is not a second repair.
        self.journal = JournalStatus::Opening;
        self.publish_status();
        self.effects.push_back(Effect::RepairJournal);
    }

    /// The cause to lead with after a repair.
    pub fn start_cause(&self) -> Option<StartCause> {
        self.cause
    }

    pub fn handle_repair_failed(&mut self, fault: JournalFault) {
        let reason = Phrase::Journal { fault };
        self.journal = JournalStatus::ReadOnly {
            reason: Phrase::Journal {
                fault: JournalFault::WriterUnreadable,
            },
        };
        self.publish_status();
        self.notice("journal", Level::Error, reason);
    }

    /// Writing stopped for good; this tab must be reloaded to go on.
    pub fn stop(&mut self, reason: Phrase) {
        if self.halt(&reason, true) {
            self.journal = JournalStatus::Unavailable {
                reason: reason.clone(),
            };
            self.notice("journal", Level::Error, reason);
            self.publish_status();
        }
    }

    /// Ends writing: no core, no timers, prompts refused with `reason` from
    /// now on; closes the journal unless it is kept for reading (export).
    /// False if writing had already stopped.
    fn halt(&mut self, reason: &Phrase, close: bool) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        self.stopped = Some(reason.clone());
        // A message whose turn was recorded but never confirmed durable is
        // as unrecorded as one still held (found by the engine simulation:
        // a write that failed for good took such a message with it).
        let unconfirmed: Vec<TurnId> = self
            .core
            .as_ref()
            .map(|c| {
                let durable = &c.projection().turns;
                c.pending_projection()
                    .turns
                    .keys()
                    .filter(|t| !durable.contains_key(t))
                    .copied()
                    .collect()
            })
            .unwrap_or_default();
        self.core = None;
        // Nothing starts once nothing can be recorded: the sessions were
        // this leadership's (leading again rebuilds them from the journal).
        // Found by the engine simulation (seed 141009 of 150,000): with
        // the writer record damaged, opening a session resumed it, a
        // fourth runtime past the running limit that no record would show.
        self.sessions = None;
        self.attempt_timers.clear();
        self.effects.push_back(Effect::CancelTimers);
        if close {
            self.effects.push_back(Effect::CloseJournal);
        }
        for (_, live) in self.live.take_all() {
            self.effects.push_back(Effect::Abort(live.request));
        }
        // Messages not yet recorded go back to the page's message box: none
        // is dropped silently.
        // A continuation is the card's, not typed: nothing to give back.
        let held: Vec<_> = self
            .held_prompts()
            .chain(unconfirmed)
            .filter(|t| !self.continuations.contains(t))
            .collect();
        self.prompts.clear();
        self.early_prompts.clear();
        self.continuations.clear();
        for turn in held {
            self.post(ControllerToPage::PromptRefused {
                turn,
                message: reason.clone(),
            });
        }
        true
    }

    /// The journal's connection is gone for good (a storage event).
    pub fn handle_journal_lost(&mut self, fault: JournalFault) {
        if fault == JournalFault::VersionChange {
            return self.stop(Phrase::Journal { fault });
        }
        let closed = fault == JournalFault::ConnectionLost;
        self.gone(fault);
        if closed {
            // A close says nothing about the data; the browser's list of
            // databases tells whether it was wiped.
            self.effects.push_back(Effect::CheckStorage);
        }
    }

    fn gone(&mut self, fault: JournalFault) {
        let reason = Phrase::Journal { fault };
        self.halt(&reason, true);
        self.journal = JournalStatus::Gone { reason };
        self.publish_status();
    }

    /// A batch's write ended.
    pub fn handle_persisted(
        &mut self,
        batch: Arc<PersistBatch>,
        result: Result<(), StoreFailure>,
        now: Millis,
    ) {
        match result {
            Ok(()) => {
                let Some(core) = self.core.as_mut() else {
                    return;
                };
                let confirm = core.handle_persist_complete(batch.batch, now);
                let deltas = batch_deltas(core.projection(), &batch.entries);
                let deltas = match self.core.as_ref() {
                    Some(core) => self.open_deltas(core.projection(), deltas),
                    None => deltas,
                };
                if let Err(e) = confirm {
                    self.notice(
                        "persist",
                        Level::Warning,
                        Phrase::PersistConfirmFailed {
                            code: e.code().into(),
                        },
                    );
                }
                self.card_records(&batch.entries);
                if !deltas.is_empty() {
                    self.post(ControllerToPage::View {
                        reset: false,
                        deltas,
                    });
                }
                self.persist_fault = None;
                // Cleared once when writes succeed again, not every batch.
                if std::mem::take(&mut self.quota_noticed) {
                    self.clear_notice("quota");
                }
                self.tombstones_written(&batch);
                self.effects.push_back(Effect::Broadcast(batch));
                self.maybe_snapshot();
            }
            Err(StoreFailure { fault, detail }) => match fault {
                JournalFault::Superseded => {
                    return self.stop(Phrase::Journal {
                        fault: JournalFault::Superseded,
                    })
                }
                JournalFault::VersionChange
                | JournalFault::Removed
                | JournalFault::ConnectionLost => return self.handle_journal_lost(fault),
                JournalFault::WriterUnreadable => {
                    // Damaged while open: keep showing what is durable.
                    if let Some(projection) = self.core.as_ref().map(|c| c.projection().clone()) {
                        self.read_only(projection);
                    }
                    return;
                }
                fault => {
                    if let Some(core) = self.core.as_mut() {
                        let _ = core.handle_persist_failed(batch.batch, &detail, now);
                    }
                    self.persist_fault = Some(fault.clone());
                    let key = if fault == JournalFault::QuotaExceeded {
                        self.quota_noticed = true;
                        "quota"
                    } else {
                        "persist"
                    };
                    self.notice(key, Level::Error, Phrase::Journal { fault });
                    // A browser that wiped the database without telling the
                    // connection still stops listing it.
                    self.effects.push_back(Effect::CheckStorage);
                }
            },
        }
        self.pump(now);
    }

    fn maybe_snapshot(&mut self) {
        let Some(core) = self.core.as_ref() else {
            return;
        };
        if core.projection().position < self.last_snapshot + SNAPSHOT_EVERY || self.snapshotting {
            return;
        }
        let snapshot = core.snapshot();
        self.snapshotting = true;
        self.last_snapshot = snapshot.position;
        self.effects.push_back(Effect::Snapshot(snapshot));
    }

    /// A snapshot write ended; a failed one only means startup replays more.
    pub fn handle_snapshot_written(&mut self, result: Result<(), JournalFault>) {
        self.snapshotting = false;
        if let Err(fault) = result {
            self.notice("snapshot", Level::Info, Phrase::SnapshotNotSaved { fault });
        }
    }

    /// What the browser says about the origin's storage.
    pub fn handle_storage(&mut self, usage: u64, quota: u64, persisted: Option<bool>) {
        let persisted =
            persisted.unwrap_or_else(|| self.storage.as_ref().is_some_and(|s| s.persisted));
        self.storage = Some(lifeline_protocol::StorageStatus {
            usage,
            quota,
            persisted,
        });
        self.publish_status();
        self.publish_card();
    }

    /// The page asked for persistent storage and got this answer.
    pub fn handle_storage_persisted(&mut self, persisted: bool) {
        if let Some(s) = self.storage.as_mut() {
            s.persisted = persisted;
        }
        self.publish_status();
    }

    pub(crate) fn controller_effect(&mut self, effect: ControllerEffect, now: Millis) {
        match effect {
            ControllerEffect::Persist(batch) => self.effects.push_back(Effect::Persist(batch)),
            ControllerEffect::SendToRuntime { runtime, message } => {
                // No port yet: the core resends on the next hello.
                if let Some(p) = self.ports.get(&runtime) {
                    let port = p.port;
                    self.effects.push_back(Effect::SendToRuntime {
                        runtime,
                        port,
                        message,
                    });
                }
            }
            ControllerEffect::NotifyClient { message, .. } => self.notified(message, now),
            ControllerEffect::SetTimer { timer, at } => {
                self.set_timer(crate::TimerKey::Controller(timer), at)
            }
            ControllerEffect::SpawnRuntime {
                workspace,
                lease,
                runtime,
                generation,
                execution,
            } => {
                let (env, existing_workspace) = self.launch_env(runtime);
                let folder = self.folder_of(workspace);
                self.post(ControllerToPage::SpawnRuntime {
                    identity: RuntimeIdentity {
                        lease,
                        runtime,
                        generation,
                        execution,
                    },
                    workspace,
                    env,
                    existing_workspace,
                    folder,
                })
            }
            ControllerEffect::TerminateRuntime {
                runtime,
                generation,
            } => self.post(ControllerToPage::TerminateRuntime {
                runtime,
                generation,
            }),
        }
    }

    fn notified(&mut self, message: lifeline_core::ClientMessage, now: Millis) {
        if let lifeline_core::ClientMessage::Rejected { rejection, .. } = &message {
            let rejection = rejection.clone();
            self.rejected(&rejection);
        }
        self.session_notified(message, now);
    }

    // ----- following -------------------------------------------------------

    /// Starts following from the journal's fold.
    pub fn follow(&mut self, projection: Projection) {
        if self.role != Role::Follower {
            return;
        }
        self.session = crate::open::pick_session(&projection, self.preferred);
        let deltas = self
            .session
            .map(|s| session_deltas(&projection, s))
            .unwrap_or_default();
        self.post(ControllerToPage::View {
            reset: true,
            deltas,
        });
        self.fold = Some(projection);
        self.publish_status();
        self.card_dirty = true;
        self.list_dirty = true;
        self.publish_sessions();
        self.publish_card();
        self.refresh_facts();
    }

    /// The follower's cursor: broadcasts at or before it are seen already.
    pub fn follower_position(&self) -> Option<u64> {
        match self.role {
            Role::Follower => self.fold.as_ref().map(|p| p.position),
            Role::Leader => None,
        }
    }

    /// Applies the leader's durable entries after the cursor (a gap the
    /// journal could not fill is bridged and said so).
    pub fn handle_followed(&mut self, mut entries: Vec<JournalEntry>) {
        if self.role != Role::Follower {
            return;
        }
        let Some(mut p) = self.fold.take() else {
            return;
        };
        lifeline_core::order::by_key(&mut entries, |e| e.position.into());
        let mut applied = Vec::new();
        for e in entries {
            if e.position <= p.position {
                continue; // already seen: no duplicates
            }
            if e.position != p.position + 1 {
                self.notice(
                    "follow",
                    Level::Warning,
                    Phrase::FollowGap {
                        from: p.position + 1,
                        to: e.position - 1,
                    },
                );
                p.position = e.position - 1;
            }
            match p.apply(&e) {
                Ok(()) => applied.push(e),
                Err(err) => {
                    self.effects.push_back(Effect::Log(err.to_string()));
                    self.notice(
                        "follow",
                        Level::Warning,
                        Phrase::EntryNotBelieved {
                            position: err.position,
                        },
                    );
                    p.position = e.position;
                }
            }
        }
        if self.session.is_none() {
            self.session = crate::open::pick_session(&p, self.preferred);
        }
        let deltas = batch_deltas(&p, &applied);
        let deltas = self.open_deltas(&p, deltas);
        self.fold = Some(p);
        if !deltas.is_empty() {
            self.post(ControllerToPage::View {
                reset: false,
                deltas,
            });
        }
        self.publish_status();
        self.card_records(&applied);
        self.publish_sessions();
        self.publish_card();
        let lifecycle = applied.iter().any(|e| {
            matches!(
                e.record,
                JournalRecord::Session { .. } | JournalRecord::SessionOpened { .. }
            )
        });
        if lifecycle {
            self.refresh_facts();
        }
    }

    /// This tab's page took the leader lock: the previous leader's tab is
    /// gone, and every worker with it. The shell leads next.
    pub fn handle_promote(&mut self) -> bool {
        if self.role == Role::Leader {
            return false;
        }
        self.role = Role::Leader;
        self.fold = None;
        self.publish_status();
        true
    }
}
