//! The controller worker's shell: carries out the core's effects (IndexedDB
//! writes, port messages, timers, worker spawns through the page) and feeds
//! it the events that come back. It decides nothing about recovery.
//!
//! A controller is either the **leader** (its page holds the origin's leader
//! lock; it holds the writer lock and the journal's writer epoch, runs
//! `lifeline_core::Controller` and the built-in agent) or a **follower** (it
//! folds the journal read-only and applies the leader's broadcasts after its
//! cursor). A follower is promoted when its page takes the leader lock.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use lifeline_core::agent;
use lifeline_core::phrase::{JournalFault, Phrase};
use lifeline_core::view::{batch_deltas, session_deltas};
use lifeline_core::{
    ClientId, ClientMessage, ClientRequest, Controller, ControllerConfig, ControllerEffect,
    ControllerError, ExitClaim, Generation, JournalEntry, Liveness, PortId, Projection,
    ProjectionSnapshot, Rejection, RequestId, RetentionPolicy, RuntimeId, RuntimeIdentity,
    SessionId, StartCause, TimerId, TurnId,
};
use lifeline_protocol::{
    decode, encode, Broadcast, ControllerToPage, JournalStatus, Level, Role, RuntimeStatus, Status,
    StorageStatus, PROTOCOL_VERSION,
};
use wasm_bindgen::{prelude::*, JsCast};
use wasm_bindgen_futures::spawn_local;
use web_sys::{BroadcastChannel, Event, MessageEvent, MessagePort};

use crate::journal::{database_exists, Journal, JournalError, Loaded, WriterEpoch, DATABASE_NAME};

mod lifecycle;
mod recovery;
use crate::web::{hold_lock_for_life, now, random_bytes, scope, Timeout};

/// The shell is the core's only client; tabs see views, not client messages.
const SELF: ClientId = ClientId(1);
/// The leader writes after holding this lock; a dead worker releases it.
const WRITER_LOCK: &str = "lifeline-writer";
/// Followers hear the leader's durable entries here.
const CHANNEL: &str = "lifeline-journal";
/// A snapshot is written after this many new journal positions.
const SNAPSHOT_EVERY: u64 = 2_000;
/// Entries a follower reads per round trip when it fills a gap.
const GAP_READ: usize = 10_000;
/// How many contradicting entries recovery sets aside before it stops.
const MAX_REFUSED: usize = 64;
/// What a command may run for and print, for the built-in agent's commands.
const COMMAND_WALL_TIME_MS: u64 = 30 * 60 * 1000;
const COMMAND_OUTPUT_BYTES: u64 = 64 << 20;

pub fn post(message: &ControllerToPage) {
    // A failed postMessage to our own page means the page is gone; nobody
    // is left to tell.
    let _ = scope().post_message(&JsValue::from_str(&encode(message)));
}

pub fn notice(key: &str, level: Level, message: Phrase) {
    post(&ControllerToPage::Notice {
        key: key.into(),
        level,
        message: Some(message),
    });
}

/// Clears the notice under `key`.
pub fn clear_notice(key: &str) {
    post(&ControllerToPage::Notice {
        key: key.into(),
        level: Level::Info,
        message: None,
    });
}

fn journal_fault(e: &JournalError) -> Phrase {
    Phrase::Journal { fault: e.fault() }
}

/// Inputs that arrive before recovery finished; replayed in order after it.
enum Early {
    Runtime {
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        text: String,
    },
    Closed {
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        how: Ended,
    },
    Exited {
        runtime: RuntimeId,
        generation: Generation,
        crashed: bool,
        detail: String,
    },
    TerminateFailed {
        runtime: RuntimeId,
        generation: Generation,
        detail: String,
    },
}

/// How the shell learned that a runtime's worker ended.
#[derive(Clone, Copy)]
enum Ended {
    PortClosed,
    LockReleased,
}

/// A message listener kept alive as long as what it listens to.
type Listener = Closure<dyn FnMut(MessageEvent)>;

struct Port {
    generation: Generation,
    id: PortId,
    /// Waiting for the runtime's life lock (started once it dialed in).
    life_watched: Cell<bool>,
    port: MessagePort,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_close: Closure<dyn FnMut(Event)>,
}

pub struct Shell {
    role: Cell<Role>,
    journal: RefCell<Option<Rc<Journal>>>,
    journal_status: RefCell<JournalStatus>,
    epoch: Cell<Option<WriterEpoch>>,
    core: RefCell<Option<Controller>>,
    /// A follower's read-only fold of the journal.
    follower: RefCell<Option<Projection>>,
    follower_queue: RefCell<Vec<Vec<JournalEntry>>>,
    follower_busy: Cell<bool>,
    ports: RefCell<BTreeMap<RuntimeId, Port>>,
    timers: RefCell<BTreeMap<TimerId, Timeout>>,
    /// The last `PortId` handed out; never reused.
    last_port: Cell<u64>,
    early: RefCell<Vec<Early>>,
    session: Cell<Option<SessionId>>,
    next_request: Cell<u64>,
    /// A runtime start was asked for and its answer is not in yet.
    starting_runtime: Cell<bool>,
    /// A quota notice is on the page and must be cleared when writes succeed.
    quota_noticed: Cell<bool>,
    channel: RefCell<Option<(BroadcastChannel, Option<Listener>)>>,
    storage: RefCell<Option<StorageStatus>>,
    last_snapshot: Cell<u64>,
    snapshotting: Cell<bool>,
    /// Writing stopped for good (superseded, version change): say so once.
    stopped: RefCell<Option<Phrase>>,
    /// The start cause, kept for leading after a repair.
    cause: Cell<Option<StartCause>>,
    last_status: RefCell<String>,
    pumping: Cell<bool>,
    // ----- sessions and turns (lifecycle.rs) -----
    sessions: RefCell<Option<lifeline_core::session::Sessions>>,
    config: RefCell<Option<Rc<crate::config::ConfigStore>>>,
    /// Prompt texts until their turn is recorded (queued, or waiting for a
    /// start).
    prompts: RefCell<BTreeMap<TurnId, String>>,
    launching: RefCell<Option<lifecycle::Launching>>,
    /// The lost launch an attempt waits for before launching anew.
    adopting: RefCell<Option<lifecycle::PendingLaunch>>,
    /// The rejoin an attempt waits for: attempt, runtime, generation.
    rejoining: Cell<Option<(lifeline_core::StartupAttemptId, RuntimeId, Generation)>>,
    active: RefCell<Option<lifecycle::Active>>,
    /// Session records whose durability an attempt waits for.
    awaiting_record: RefCell<BTreeMap<RequestId, lifeline_core::StartupAttemptId>>,
    /// Runtimes an attempt stops; their exit settles its cleanup.
    stopping: RefCell<BTreeMap<RuntimeId, lifeline_core::StartupAttemptId>>,
    live: RefCell<Option<lifecycle::Live>>,
    /// What the recovery inspector was last told about the world.
    facts: RefCell<lifeline_core::recovery::Facts>,
    /// Workspace-only access is open.
    inspecting: Cell<bool>,
    last_card: RefCell<String>,
    /// The projection changed in a way the card may show.
    card_dirty: Cell<bool>,
    /// What the card last sent was built from.
    card_inputs: RefCell<Option<recovery::CardInputs>>,
    /// After a controller restart: the commands that were running, until
    /// the page is told which of them continued.
    restart: RefCell<Option<lifeline_core::restart::RestartTally>>,
    /// Prompts that arrived before the session layer was up.
    early_prompts: RefCell<Vec<(TurnId, String)>>,
    /// What a recorded provider request sends once it is durable.
    conversations: RefCell<
        BTreeMap<lifeline_core::ProviderRequestId, Vec<lifeline_core::model::ModelMessage>>,
    >,
}

pub type Shared = Rc<Shell>;

impl Shell {
    pub fn new() -> Shared {
        Rc::new(Shell {
            role: Cell::new(Role::Follower),
            journal: RefCell::new(None),
            journal_status: RefCell::new(JournalStatus::Opening),
            epoch: Cell::new(None),
            core: RefCell::new(None),
            follower: RefCell::new(None),
            follower_queue: RefCell::new(Vec::new()),
            follower_busy: Cell::new(false),
            ports: RefCell::new(BTreeMap::new()),
            timers: RefCell::new(BTreeMap::new()),
            last_port: Cell::new(0),
            early: RefCell::new(Vec::new()),
            session: Cell::new(None),
            next_request: Cell::new(0),
            starting_runtime: Cell::new(false),
            quota_noticed: Cell::new(false),
            channel: RefCell::new(None),
            storage: RefCell::new(None),
            last_snapshot: Cell::new(0),
            snapshotting: Cell::new(false),
            stopped: RefCell::new(None),
            cause: Cell::new(None),
            last_status: RefCell::new(String::new()),
            pumping: Cell::new(false),
            sessions: RefCell::new(None),
            config: RefCell::new(None),
            prompts: RefCell::new(BTreeMap::new()),
            launching: RefCell::new(None),
            rejoining: Cell::new(None),
            adopting: RefCell::new(None),
            active: RefCell::new(None),
            awaiting_record: RefCell::new(BTreeMap::new()),
            stopping: RefCell::new(BTreeMap::new()),
            live: RefCell::new(None),
            conversations: RefCell::new(BTreeMap::new()),
            early_prompts: RefCell::new(Vec::new()),
            facts: RefCell::new(Default::default()),
            inspecting: Cell::new(false),
            last_card: RefCell::new(String::new()),
            card_dirty: Cell::new(true),
            card_inputs: RefCell::new(None),
            restart: RefCell::new(None),
        })
    }

    // ----- start ---------------------------------------------------------

    pub fn start(self: &Rc<Self>, role: Role, cause: StartCause) {
        self.role.set(role);
        let shell = self.clone();
        spawn_local(async move {
            if shell.open_journal().await.is_err() {
                return;
            }
            shell.refresh_storage().await;
            match role {
                Role::Leader => shell.lead(cause).await,
                Role::Follower => shell.follow().await,
            }
        });
    }

    pub fn promote(self: &Rc<Self>) {
        if self.role.get() == Role::Leader {
            return;
        }
        self.role.set(Role::Leader);
        self.follower.borrow_mut().take();
        if let Some((channel, _)) = self.channel.borrow_mut().take() {
            channel.close();
        }
        self.publish_status();
        let shell = self.clone();
        spawn_local(async move {
            if shell.journal.borrow().is_none() && shell.open_journal().await.is_err() {
                return;
            }
            // The previous leader's tab is gone, and every worker with it.
            shell.lead(StartCause::HostLoss).await;
        });
    }

    async fn open_journal(self: &Rc<Self>) -> Result<(), ()> {
        match Journal::open(DATABASE_NAME).await {
            Ok(journal) => {
                let weak = Rc::downgrade(self);
                journal.on_lost(move |e| {
                    if let Some(shell) = weak.upgrade() {
                        shell.journal_lost(e);
                    }
                });
                *self.journal_status.borrow_mut() = JournalStatus::Open {
                    schema_version: journal.version(),
                    id: None,
                };
                *self.journal.borrow_mut() = Some(Rc::new(journal));
                self.publish_status();
                Ok(())
            }
            Err(e) => {
                *self.journal_status.borrow_mut() = JournalStatus::Unavailable {
                    reason: journal_fault(&e),
                };
                notice("journal", Level::Error, journal_fault(&e));
                self.publish_status();
                Err(())
            }
        }
    }

    pub(crate) fn journal(&self) -> Option<Rc<Journal>> {
        self.journal.borrow().clone()
    }

    async fn refresh_storage(&self) {
        let estimate = crate::storage::estimate().await;
        let persisted = crate::storage::persisted().await.unwrap_or(false);
        if let Ok(e) = estimate {
            *self.storage.borrow_mut() = Some(StorageStatus {
                usage: e.usage,
                quota: e.quota,
                persisted,
            });
        }
        self.publish_status();
    }

    pub fn storage_persisted(&self, persisted: bool) {
        if let Some(s) = self.storage.borrow_mut().as_mut() {
            s.persisted = persisted;
        }
        self.publish_status();
    }

    /// Writing stopped for good; this tab must be reloaded to go on.
    fn stop(&self, reason: Phrase) {
        if self.halt(&reason, true) {
            *self.journal_status.borrow_mut() = JournalStatus::Unavailable {
                reason: reason.clone(),
            };
            notice("journal", Level::Error, reason);
            self.publish_status();
        }
    }

    /// Ends writing: no core, no timers, prompts refused with `reason`
    /// from now on; closes the journal unless it is kept for reading
    /// (export). False if writing had already stopped.
    fn halt(&self, reason: &Phrase, close: bool) -> bool {
        if self.stopped.borrow().is_some() {
            return false;
        }
        *self.stopped.borrow_mut() = Some(reason.clone());
        self.core.borrow_mut().take();
        for (_, t) in std::mem::take(&mut *self.timers.borrow_mut()) {
            t.cancel();
        }
        if close {
            if let Some(j) = self.journal.borrow_mut().take() {
                j.close();
            }
        }
        // Messages not yet recorded go back to the page's message box:
        // none is dropped silently.
        let held: Vec<TurnId> = self.prompts.borrow_mut().keys().copied().collect();
        self.prompts.borrow_mut().clear();
        let early = std::mem::take(&mut *self.early_prompts.borrow_mut());
        for turn in held.into_iter().chain(early.into_iter().map(|(t, _)| t)) {
            post(&ControllerToPage::PromptRefused {
                turn,
                message: reason.clone(),
            });
        }
        true
    }

    /// The journal's connection is gone for good (a storage event): an
    /// upgrade by a newer build stops this tab; a deletion or a close by
    /// the browser says the history is gone, or unreachable, and the page
    /// offers a new journal.
    fn journal_lost(self: &Rc<Self>, error: JournalError) {
        if error == JournalError::VersionChange {
            return self.stop(journal_fault(&error));
        }
        self.gone(&error);
        if error == JournalError::ConnectionLost {
            // A close says nothing about the data; the browser's list of
            // databases tells whether it was wiped.
            let shell = self.clone();
            spawn_local(async move {
                if database_exists(DATABASE_NAME).await == Some(false) {
                    shell.gone(&JournalError::Removed);
                }
            });
        }
    }

    fn gone(&self, error: &JournalError) {
        let reason = journal_fault(error);
        self.halt(&reason, true);
        *self.journal_status.borrow_mut() = JournalStatus::Gone { reason };
        self.publish_status();
    }

    /// A record writing needs is damaged: the rest is shown read-only from
    /// `projection`, the journal stays open for Export, and the page offers
    /// [`Shell::repair_journal`].
    fn read_only(&self, projection: Projection) {
        let reason = journal_fault(&JournalError::WriterUnreadable);
        self.halt(&reason, false);
        let session = self.pick_session(&projection);
        self.session.set(session);
        post(&ControllerToPage::View {
            reset: true,
            deltas: session
                .map(|s| session_deltas(&projection, s))
                .unwrap_or_default(),
        });
        *self.follower.borrow_mut() = Some(projection);
        *self.journal_status.borrow_mut() = JournalStatus::ReadOnly { reason };
        // No card: its actions would all be refused, for a reason (another
        // tab leads) that is not this one; the banner says what is.
        post(&ControllerToPage::Recovery { card: None });
        *self.last_card.borrow_mut() = String::new();
        self.publish_status();
    }

    /// The page's Repair journal: sets the damaged writer record aside
    /// (kept in quarantine) and leads as if just started.
    pub fn repair_journal(self: &Rc<Self>) {
        let read_only = matches!(
            *self.journal_status.borrow(),
            JournalStatus::ReadOnly { .. }
        );
        let (Some(journal), true, Some(cause)) = (self.journal(), read_only, self.cause.get())
        else {
            return;
        };
        // Not read-only while it runs: a second click is not a second repair.
        let read_only = std::mem::replace(
            &mut *self.journal_status.borrow_mut(),
            JournalStatus::Opening,
        );
        self.publish_status();
        let shell = self.clone();
        spawn_local(async move {
            match journal.repair_writer(now().0).await {
                Ok(epoch) => {
                    shell.follower.borrow_mut().take();
                    shell.stopped.borrow_mut().take();
                    shell.lead_as(journal, epoch, cause).await;
                }
                Err(e) => {
                    *shell.journal_status.borrow_mut() = read_only;
                    shell.publish_status();
                    notice("journal", Level::Error, journal_fault(&e));
                }
            }
        });
    }

    /// Folds the journal without writing (a follower, or a leader that
    /// cannot write), saying how many values could not be read.
    async fn fold_read_only(&self, journal: &Journal) -> Result<Projection, JournalError> {
        let loaded = journal.load().await?;
        if !loaded.quarantined.is_empty() {
            notice(
                "quarantine",
                Level::Warning,
                Phrase::FollowerUnreadable {
                    count: u32::try_from(loaded.quarantined.len()).unwrap_or(u32::MAX),
                },
            );
        }
        let (mut projection, _) = Projection::salvage(
            RetentionPolicy::default(),
            loaded.snapshot,
            &loaded.tail,
            MAX_REFUSED,
        );
        projection.position = projection.position.max(loaded.last_position);
        Ok(projection)
    }

    // ----- leader --------------------------------------------------------

    async fn lead(self: &Rc<Self>, cause: StartCause) {
        self.publish_status();
        if let Err(e) = hold_lock_for_life(WRITER_LOCK).await {
            notice("lock", Level::Error, e);
            return;
        }
        let Some(journal) = self.journal() else {
            return;
        };
        self.cause.set(Some(cause));
        match journal.claim_writer().await {
            Ok(epoch) => self.lead_as(journal, epoch, cause).await,
            Err(JournalError::WriterUnreadable) => match self.fold_read_only(&journal).await {
                Ok(projection) => self.read_only(projection),
                Err(e) => self.stop(journal_fault(&e)),
            },
            Err(e) => self.stop(journal_fault(&e)),
        }
    }

    /// Leads under a claimed `epoch`: recovers from the journal and starts
    /// the core.
    async fn lead_as(self: &Rc<Self>, journal: Rc<Journal>, epoch: WriterEpoch, cause: StartCause) {
        self.epoch.set(Some(epoch));
        *self.journal_status.borrow_mut() = JournalStatus::Open {
            schema_version: journal.version(),
            id: journal.id(),
        };
        let loaded = match journal.load().await {
            Ok(loaded) => loaded,
            Err(e) => return self.stop(journal_fault(&e)),
        };
        let projection = self.salvage(&journal, epoch, loaded).await;
        let entropy = match random_bytes::<32>() {
            Ok(bytes) => bytes.to_vec(),
            Err(detail) => return self.stop(Phrase::NoRandomness { detail }),
        };
        let config = ControllerConfig {
            entropy,
            ..ControllerConfig::default()
        };
        self.last_snapshot.set(projection.position);
        let snapshot = ProjectionSnapshot {
            v: lifeline_core::V1,
            position: projection.position,
            projection,
        };
        let core = match Controller::recover_from_snapshot(config, snapshot, &[], cause, now()) {
            Ok(core) => core,
            Err(e) => {
                return self.stop(Phrase::Journal {
                    fault: JournalFault::NotRecovered {
                        detail: e.to_string(),
                    },
                })
            }
        };
        if cause == StartCause::ControllerRestart {
            *self.restart.borrow_mut() = Some(lifeline_core::restart::RestartTally::new(
                core.pending_projection(),
            ));
        }
        let session = self.pick_session(core.pending_projection());
        self.session.set(session);
        post(&ControllerToPage::View {
            reset: true,
            deltas: session
                .map(|s| session_deltas(core.projection(), s))
                .unwrap_or_default(),
        });
        *self.core.borrow_mut() = Some(core);
        self.register_ports();
        self.card_dirty.set(true);
        self.open_channel(false);
        let shell = self.clone();
        spawn_local(async move { shell.start_sessions().await });
        let early = std::mem::take(&mut *self.early.borrow_mut());
        for input in early {
            match input {
                Early::Runtime {
                    runtime,
                    generation,
                    port,
                    text,
                } => self.runtime_message(runtime, generation, port, &text),
                Early::Closed {
                    runtime,
                    generation,
                    port,
                    how,
                } => self.worker_ended(runtime, generation, port, how),
                Early::Exited {
                    runtime,
                    generation,
                    crashed,
                    detail,
                } => self.runtime_exited(runtime, generation, crashed, detail),
                Early::TerminateFailed {
                    runtime,
                    generation,
                    detail,
                } => self.terminate_failed(runtime, generation, &detail),
            }
        }
        self.pump();
    }

    /// Folds what the journal holds, setting aside what cannot be read and
    /// saying so; never deletes a readable record.
    async fn salvage(&self, journal: &Journal, epoch: WriterEpoch, loaded: Loaded) -> Projection {
        let Loaded {
            snapshot,
            snapshot_note,
            tail,
            quarantined,
            last_position,
        } = loaded;
        if let Some(note) = snapshot_note {
            notice("snapshot", Level::Info, note);
        }
        if !quarantined.is_empty() {
            let positions: Vec<String> = quarantined
                .iter()
                .take(8)
                .map(|q| match q.position {
                    Some(p) => format!("position {p} in {} ({})", q.store, q.reason),
                    None => format!("{} key {} ({})", q.store, q.key, q.reason),
                })
                .collect();
            notice(
                "quarantine",
                Level::Warning,
                Phrase::RecordsQuarantined {
                    count: u32::try_from(quarantined.len()).unwrap_or(u32::MAX),
                    detail: format!(
                        "{}{}",
                        positions.join("; "),
                        if quarantined.len() > 8 { "; …" } else { "" }
                    ),
                },
            );
            if let Err(e) = journal.quarantine(&quarantined, epoch).await {
                notice(
                    "quarantine-move",
                    Level::Warning,
                    Phrase::QuarantineNotMoved {
                        detail: e.to_string(),
                    },
                );
            }
        }
        let policy = RetentionPolicy::default();
        let (mut projection, refused) = Projection::salvage(policy, snapshot, &tail, MAX_REFUSED);
        // The recovery card reports what could not be read as missing.
        self.facts.borrow_mut().quarantined =
            u32::try_from(quarantined.len() + refused.len()).unwrap_or(u32::MAX);
        if !refused.is_empty() {
            let detail: Vec<String> = refused.iter().take(8).map(|r| r.to_string()).collect();
            notice(
                "replay",
                Level::Warning,
                Phrase::ReplayRefused {
                    count: u32::try_from(refused.len()).unwrap_or(u32::MAX),
                    detail: detail.join("; "),
                },
            );
        }
        // Positions held by unreadable records are never written over.
        projection.position = projection.position.max(last_position);
        projection
    }

    fn pick_session(&self, projection: &Projection) -> Option<SessionId> {
        projection
            .sessions
            .values()
            .max_by_key(|s| (s.opened_at, s.session))
            .map(|s| s.session)
    }

    fn request_id(&self) -> RequestId {
        let n = self.next_request.get() + 1;
        self.next_request.set(n);
        RequestId(n)
    }

    /// Hands a request to the core; a refusal is reported and left alone.
    fn ask(&self, core: &mut Controller, make: impl FnOnce(RequestId) -> ClientRequest) -> bool {
        match core.handle_client(SELF, make(self.request_id()), now()) {
            Ok(()) => true,
            Err(rejection) => {
                self.rejected(&rejection);
                false
            }
        }
    }

    fn rejected(&self, rejection: &Rejection) {
        let level = match rejection {
            Rejection::Busy => Level::Info,
            _ => Level::Warning,
        };
        notice(
            "request",
            level,
            Phrase::RequestRejected {
                detail: rejection.to_string(),
            },
        );
    }

    /// Carries out effects until the core and the agent are quiet.
    pub fn pump(self: &Rc<Self>) {
        if self.pumping.replace(true) {
            return;
        }
        for _ in 0..10_000 {
            let effect = self
                .core
                .borrow_mut()
                .as_mut()
                .and_then(|c| c.poll_effect());
            if let Some(effect) = effect {
                self.execute(effect);
                continue;
            }
            if self.drive_sessions() {
                continue;
            }
            if !(self.check_ready()
                || self.check_rejoin()
                || self.check_adoption()
                || self.check_active_runtime()
                || self.drive_turn())
            {
                break;
            }
        }
        self.pumping.set(false);
        self.publish_status();
        self.publish_recovery();
        self.report_restart();
    }

    /// Tells the page what the restart did to the commands that were
    /// running, once every one of them has either continued (its runtime
    /// dialed back in) or not (its runtime was retired).
    fn report_restart(&self) {
        let summary = {
            let tally = self.restart.borrow();
            let core = self.core.borrow();
            let (Some(tally), Some(core)) = (tally.as_ref(), core.as_ref()) else {
                return;
            };
            tally.settle(core.projection(), |r| core.is_attached(r))
        };
        if let Some(s) = summary {
            self.restart.borrow_mut().take();
            post(&ControllerToPage::Restarted {
                running: s.running,
                continued: s.continued,
            });
        }
    }

    /// Shows `session`'s transcript from scratch (after Start fresh).
    fn show_session(&self, session: SessionId) {
        if let Some(core) = self.core.borrow().as_ref() {
            post(&ControllerToPage::View {
                reset: true,
                deltas: session_deltas(core.projection(), session),
            });
        }
    }

    fn execute(self: &Rc<Self>, effect: ControllerEffect) {
        match effect {
            ControllerEffect::Persist(batch) => {
                let (Some(journal), Some(epoch)) = (self.journal(), self.epoch.get()) else {
                    return;
                };
                let shell = self.clone();
                spawn_local(async move {
                    let result = journal.write_batch(&batch, epoch).await;
                    shell.persisted(batch, result);
                });
            }
            ControllerEffect::SendToRuntime { runtime, message } => {
                let ports = self.ports.borrow();
                let Some(p) = ports.get(&runtime) else {
                    // No port yet: the core resends on the next hello.
                    return;
                };
                let text = match serde_json::to_string(&message) {
                    Ok(t) => t,
                    Err(_) => return,
                };
                let _ = p.port.post_message(&JsValue::from_str(&text));
            }
            ControllerEffect::NotifyClient { message, .. } => self.notified(message),
            ControllerEffect::SetTimer { timer, at } => {
                let delay = at.0.saturating_sub(now().0);
                let weak = Rc::downgrade(self);
                let handle = Timeout::new(delay, move || {
                    if let Some(shell) = weak.upgrade() {
                        shell.timers.borrow_mut().remove(&timer);
                        if let Some(core) = shell.core.borrow_mut().as_mut() {
                            core.handle_timer(timer, now());
                        }
                        shell.pump();
                    }
                });
                if let Some(handle) = handle {
                    if let Some(old) = self.timers.borrow_mut().insert(timer, handle) {
                        old.cancel();
                    }
                }
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
                post(&ControllerToPage::SpawnRuntime {
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
            } => post(&ControllerToPage::TerminateRuntime {
                runtime,
                generation,
            }),
        }
    }

    fn notified(self: &Rc<Self>, message: ClientMessage) {
        self.session_notified(&message);
        match message {
            ClientMessage::RuntimeStarted { .. } => self.starting_runtime.set(false),
            ClientMessage::Rejected { rejection, .. } => {
                self.starting_runtime.set(false);
                self.rejected(&rejection);
            }
            _ => {}
        }
    }

    fn persisted(
        self: &Rc<Self>,
        batch: lifeline_core::PersistBatch,
        result: Result<(), JournalError>,
    ) {
        match result {
            Ok(()) => {
                {
                    let mut guard = self.core.borrow_mut();
                    let Some(core) = guard.as_mut() else {
                        return;
                    };
                    if let Err(e) = core.handle_persist_complete(batch.batch, now()) {
                        notice(
                            "persist",
                            Level::Warning,
                            Phrase::PersistConfirmFailed {
                                detail: e.to_string(),
                            },
                        );
                    }
                    self.card_records(&batch.entries);
                    let deltas = batch_deltas(core.projection(), &batch.entries);
                    if !deltas.is_empty() {
                        post(&ControllerToPage::View {
                            reset: false,
                            deltas,
                        });
                    }
                }
                // Cleared once when writes succeed again, not on every batch.
                if self.quota_noticed.replace(false) {
                    clear_notice("quota");
                }
                self.broadcast(batch.entries);
                self.maybe_snapshot();
            }
            Err(JournalError::Superseded) => {
                return self.stop(journal_fault(&JournalError::Superseded))
            }
            Err(
                e @ (JournalError::VersionChange
                | JournalError::Removed
                | JournalError::ConnectionLost),
            ) => return self.journal_lost(e),
            Err(JournalError::WriterUnreadable) => {
                // Damaged while open: keep showing what is durable.
                let projection = self.core.borrow().as_ref().map(|c| c.projection().clone());
                if let Some(projection) = projection {
                    self.read_only(projection);
                }
                return;
            }
            Err(e) => {
                if let Some(core) = self.core.borrow_mut().as_mut() {
                    let _ = core.handle_persist_failed(batch.batch, &e.to_string(), now());
                }
                let key = if e == JournalError::QuotaExceeded {
                    self.quota_noticed.set(true);
                    "quota"
                } else {
                    "persist"
                };
                notice(key, Level::Error, journal_fault(&e));
                let shell = self.clone();
                spawn_local(async move {
                    // A browser that wiped the database without telling the
                    // connection still stops listing it.
                    if database_exists(DATABASE_NAME).await == Some(false) {
                        shell.journal_lost(JournalError::Removed);
                    }
                    shell.refresh_storage().await
                });
            }
        }
        self.pump();
    }

    fn maybe_snapshot(self: &Rc<Self>) {
        let (Some(journal), Some(epoch)) = (self.journal(), self.epoch.get()) else {
            return;
        };
        let snapshot = {
            let guard = self.core.borrow();
            let Some(core) = guard.as_ref() else {
                return;
            };
            if core.projection().position < self.last_snapshot.get() + SNAPSHOT_EVERY
                || self.snapshotting.get()
            {
                return;
            }
            core.snapshot()
        };
        self.snapshotting.set(true);
        self.last_snapshot.set(snapshot.position);
        let shell = self.clone();
        spawn_local(async move {
            if let Err(e) = journal.put_snapshot(&snapshot, epoch).await {
                // Startup replays more of the journal; nothing is lost.
                notice(
                    "snapshot",
                    Level::Info,
                    Phrase::SnapshotNotSaved {
                        detail: e.to_string(),
                    },
                );
            }
            shell.snapshotting.set(false);
        });
    }

    // ----- runtimes ------------------------------------------------------

    pub fn runtime_port(
        self: &Rc<Self>,
        runtime: RuntimeId,
        generation: Generation,
        port: MessagePort,
    ) {
        let id = PortId(self.last_port.get() + 1);
        self.last_port.set(id.0);
        // Before recovery the core cannot judge it yet: `register_ports`
        // does once it can.
        let refused = self
            .core
            .borrow_mut()
            .as_mut()
            .and_then(|c| c.handle_port_opened(runtime, generation, id).err());
        if let Some(e) = refused {
            return refuse_port(runtime, &port, &e);
        }
        // Every listener names the port it listens to, so the core can tell
        // the runtime's current port from an old or a made-up one.
        let weak = Rc::downgrade(self);
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let Some(shell) = weak.upgrade() else { return };
            match event.data().as_string() {
                Some(text) => shell.runtime_message(runtime, generation, id, &text),
                None => notice(
                    "runtime-message",
                    Level::Warning,
                    Phrase::RuntimeNotJson {
                        runtime: runtime.to_string(),
                    },
                ),
            }
        });
        port.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let weak = Rc::downgrade(self);
        let on_close = Closure::<dyn FnMut(Event)>::new(move |_: Event| {
            if let Some(shell) = weak.upgrade() {
                shell.port_closed(runtime, generation, id);
            }
        });
        // The `close` event is newer than web-sys's `MessagePort`; where a
        // browser lacks it the property is inert and heartbeats still show
        // a silent runtime as not responding.
        let _ = js_sys::Reflect::set(
            &port,
            &JsValue::from_str("onclose"),
            on_close.as_ref().unchecked_ref(),
        );
        let old = self.ports.borrow_mut().insert(
            runtime,
            Port {
                generation,
                id,
                life_watched: Cell::new(false),
                port,
                _on_message: on_message,
                _on_close: on_close,
            },
        );
        if let Some(old) = old {
            // A late message on the old port must not pass for the new one.
            silence(&old);
        }
    }

    /// Hands the core the ports that arrived while it was recovering.
    fn register_ports(&self) {
        let refused: Vec<(RuntimeId, ControllerError)> = {
            let ports = self.ports.borrow();
            let mut core = self.core.borrow_mut();
            let Some(core) = core.as_mut() else { return };
            ports
                .iter()
                .filter_map(|(runtime, p)| {
                    core.handle_port_opened(*runtime, p.generation, p.id)
                        .err()
                        .map(|e| (*runtime, e))
                })
                .collect()
        };
        for (runtime, e) in refused {
            if let Some(p) = self.ports.borrow_mut().remove(&runtime) {
                silence(&p);
                refuse_port(runtime, &p.port, &e);
            }
        }
    }

    fn runtime_message(
        self: &Rc<Self>,
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        text: &str,
    ) {
        if self.core.borrow().is_none() {
            if self.stopped.borrow().is_none() && self.role.get() == Role::Leader {
                self.early.borrow_mut().push(Early::Runtime {
                    runtime,
                    generation,
                    port,
                    text: text.to_string(),
                });
            }
            return;
        }
        let message = match decode::<lifeline_core::RuntimeToController>(text) {
            Ok(m) => m,
            Err(e) => {
                notice(
                    "runtime-message",
                    Level::Warning,
                    Phrase::RuntimeMessageRejected {
                        runtime: runtime.to_string(),
                        detail: e.to_string(),
                    },
                );
                return;
            }
        };
        let result = self
            .core
            .borrow_mut()
            .as_mut()
            .map(|c| c.handle_port_message(runtime, generation, port, message, now()));
        self.watch_life(runtime, generation, port);
        if let Some(Err(ControllerError::Malformed { detail })) = result {
            notice(
                "runtime-message",
                Level::Warning,
                Phrase::RuntimeMessageRejected {
                    runtime: runtime.to_string(),
                    detail,
                },
            );
        }
        self.pump();
    }

    /// Once the runtime dialed in on `port` it holds its life lock (it
    /// takes it before its hello); waiting for that lock tells when its
    /// worker ends, in every browser with Web Locks.
    fn watch_life(self: &Rc<Self>, runtime: RuntimeId, generation: Generation, port: PortId) {
        let attached = self
            .core
            .borrow()
            .as_ref()
            .is_some_and(|c| c.is_attached(runtime));
        let start = attached
            && self
                .ports
                .borrow()
                .get(&runtime)
                .is_some_and(|p| p.id == port && !p.life_watched.replace(true));
        if !start {
            return;
        }
        let weak = Rc::downgrade(self);
        spawn_local(async move {
            let name = lifeline_protocol::runtime_life_lock(runtime, generation);
            if crate::web::wait_for_release(&name).await.is_ok() {
                if let Some(shell) = weak.upgrade() {
                    shell.worker_ended(runtime, generation, port, Ended::LockReleased);
                }
            }
        });
    }

    /// The runtime's end of `port` went away (its worker ended).
    fn port_closed(self: &Rc<Self>, runtime: RuntimeId, generation: Generation, port: PortId) {
        self.worker_ended(runtime, generation, port, Ended::PortClosed);
    }

    fn worker_ended(
        self: &Rc<Self>,
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        how: Ended,
    ) {
        {
            let mut ports = self.ports.borrow_mut();
            if ports.get(&runtime).is_some_and(|p| p.id == port) {
                if let Some(p) = ports.remove(&runtime) {
                    silence(&p);
                }
            }
        }
        if self.core.borrow().is_none() {
            if self.stopped.borrow().is_none() && self.role.get() == Role::Leader {
                self.early.borrow_mut().push(Early::Closed {
                    runtime,
                    generation,
                    port,
                    how,
                });
            }
            return;
        }
        let result = self.core.borrow_mut().as_mut().map(|c| match how {
            Ended::PortClosed => c.handle_port_closed(runtime, generation, port, now()),
            Ended::LockReleased => c.handle_life_lock_released(runtime, generation, port, now()),
        });
        if let Some(Ok(())) = result {
            self.runtime_lost(runtime, generation, "its worker ended".into());
        }
        self.pump();
    }

    /// The page says a runtime's worker exited. Only the core knows how
    /// much that counts (`lifeline_core::controller::watch`).
    pub fn runtime_exited(
        self: &Rc<Self>,
        runtime: RuntimeId,
        generation: Generation,
        crashed: bool,
        detail: String,
    ) {
        if self.core.borrow().is_none() {
            if self.role.get() == Role::Leader {
                self.early.borrow_mut().push(Early::Exited {
                    runtime,
                    generation,
                    crashed,
                    detail,
                });
            }
            return;
        }
        let claim = self
            .core
            .borrow_mut()
            .as_mut()
            .map(|c| c.handle_exit_claim(runtime, generation, crashed, now()));
        if claim == Some(ExitClaim::Believed) {
            {
                let mut ports = self.ports.borrow_mut();
                if ports
                    .get(&runtime)
                    .is_some_and(|p| p.generation == generation)
                {
                    if let Some(p) = ports.remove(&runtime) {
                        silence(&p);
                    }
                }
            }
            if crashed {
                self.runtime_lost(runtime, generation, detail);
            } else {
                self.stopped_runtime(runtime, Ok(()));
            }
        }
        self.pump();
    }

    /// A person asked to stop a runtime that does not answer.
    pub fn stop_unresponsive(self: &Rc<Self>, runtime: RuntimeId, generation: Generation) {
        let result = self
            .core
            .borrow_mut()
            .as_mut()
            .map(|c| c.handle_stop_unresponsive(runtime, generation, now()));
        if let Some(Err(e)) = result {
            notice(
                "request",
                Level::Info,
                Phrase::RequestRejected {
                    detail: e.to_string(),
                },
            );
        }
        self.pump();
    }

    pub fn terminate_failed(
        self: &Rc<Self>,
        runtime: RuntimeId,
        generation: Generation,
        detail: &str,
    ) {
        if self.core.borrow().is_none() {
            if self.role.get() == Role::Leader {
                self.early.borrow_mut().push(Early::TerminateFailed {
                    runtime,
                    generation,
                    detail: detail.to_string(),
                });
            }
            return;
        }
        if let Some(core) = self.core.borrow_mut().as_mut() {
            let _ = core.handle_cleanup_failed(runtime, generation, detail, now());
        }
        self.stopped_runtime(runtime, Err(detail.to_string()));
        self.pump();
    }

    // ----- the page's requests ---------------------------------------------

    // ----- followers -----------------------------------------------------

    async fn follow(self: &Rc<Self>) {
        let Some(journal) = self.journal() else {
            return;
        };
        // Listen first so nothing written during the load is missed; what
        // arrives meanwhile waits in the queue and is deduplicated by position.
        self.open_channel(true);
        let projection = match self.fold_read_only(&journal).await {
            Ok(p) => p,
            Err(e) => return self.stop(journal_fault(&e)),
        };
        if self.role.get() != Role::Follower {
            return;
        }
        let session = self.pick_session(&projection);
        self.session.set(session);
        post(&ControllerToPage::View {
            reset: true,
            deltas: session
                .map(|s| session_deltas(&projection, s))
                .unwrap_or_default(),
        });
        *self.follower.borrow_mut() = Some(projection);
        self.publish_status();
        self.card_dirty.set(true);
        self.publish_recovery();
        // Reads only: whether the keys the session's profile names exist.
        if let Ok(config) = crate::config::ConfigStore::open().await {
            if self.config.borrow().is_none() {
                *self.config.borrow_mut() = Some(Rc::new(config));
            }
        }
        self.refresh_facts();
        self.drain_follower_queue();
    }

    fn open_channel(self: &Rc<Self>, listen: bool) {
        let Ok(channel) = BroadcastChannel::new(CHANNEL) else {
            notice("channel", Level::Warning, Phrase::NoBroadcastChannel);
            return;
        };
        let handler = listen.then(|| {
            let weak = Rc::downgrade(self);
            let handler = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
                let Some(shell) = weak.upgrade() else { return };
                let Some(text) = event.data().as_string() else {
                    return;
                };
                match decode::<Broadcast>(&text) {
                    Ok(Broadcast::Entries { protocol, entries })
                        if protocol == PROTOCOL_VERSION =>
                    {
                        shell.follower_queue.borrow_mut().push(entries);
                        shell.drain_follower_queue();
                    }
                    Ok(_) => notice("channel", Level::Warning, Phrase::OtherBuild),
                    Err(e) => notice(
                        "channel",
                        Level::Warning,
                        Phrase::BroadcastRejected {
                            detail: e.to_string(),
                        },
                    ),
                }
            });
            channel.set_onmessage(Some(handler.as_ref().unchecked_ref()));
            handler
        });
        if let Some((old, _)) = self.channel.borrow_mut().replace((channel, handler)) {
            old.close();
        }
    }

    fn broadcast(&self, entries: Vec<JournalEntry>) {
        if let Some((channel, _)) = self.channel.borrow().as_ref() {
            let message = Broadcast::Entries {
                protocol: PROTOCOL_VERSION,
                entries,
            };
            let _ = channel.post_message(&JsValue::from_str(&encode(&message)));
        }
    }

    /// Applies queued broadcasts after the cursor, reading any gap from the
    /// journal first (the leader writes before it broadcasts).
    fn drain_follower_queue(self: &Rc<Self>) {
        if self.follower_busy.get() || self.follower.borrow().is_none() {
            return;
        }
        self.follower_busy.set(true);
        let shell = self.clone();
        spawn_local(async move {
            loop {
                let batch = {
                    let mut q = shell.follower_queue.borrow_mut();
                    if q.is_empty() {
                        break;
                    }
                    q.remove(0)
                };
                let cursor = match shell.follower.borrow().as_ref() {
                    Some(p) => p.position,
                    None => break,
                };
                let mut entries: Vec<JournalEntry> = Vec::new();
                let first = batch.iter().map(|e| e.position).min().unwrap_or(0);
                if first > cursor + 1 {
                    let Some(journal) = shell.journal() else {
                        break;
                    };
                    let mut after = cursor;
                    loop {
                        match journal.entries_after(after, GAP_READ).await {
                            Ok(tail) => {
                                let next = tail.last_position(after);
                                entries.extend(
                                    tail.entries.into_iter().filter(|e| e.position < first),
                                );
                                if next == after || next >= first {
                                    break;
                                }
                                after = next;
                            }
                            Err(e) => {
                                notice(
                                    "follow",
                                    Level::Warning,
                                    Phrase::CatchUpFailed {
                                        detail: e.to_string(),
                                    },
                                );
                                break;
                            }
                        }
                    }
                }
                entries.extend(batch);
                shell.follower_apply(entries);
            }
            shell.follower_busy.set(false);
        });
    }

    fn follower_apply(self: &Rc<Self>, mut entries: Vec<JournalEntry>) {
        entries.sort_by_key(|e| e.position);
        let mut guard = self.follower.borrow_mut();
        let Some(p) = guard.as_mut() else { return };
        let mut applied = Vec::new();
        for e in entries {
            if e.position <= p.position {
                continue; // already seen: no duplicates
            }
            if e.position != p.position + 1 {
                // A hole the journal could not fill: bridge it, say so.
                notice(
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
                    notice(
                        "follow",
                        Level::Warning,
                        Phrase::EntryNotBelieved {
                            detail: err.to_string(),
                        },
                    );
                    p.position = e.position;
                }
            }
        }
        if self.session.get().is_none() {
            self.session.set(self.pick_session(p));
        }
        let deltas = batch_deltas(p, &applied);
        drop(guard);
        if !deltas.is_empty() {
            post(&ControllerToPage::View {
                reset: false,
                deltas,
            });
        }
        self.publish_status();
        self.card_records(&applied);
        self.publish_recovery();
        let lifecycle = applied.iter().any(|e| {
            matches!(
                e.record,
                lifeline_core::JournalRecord::Session { .. }
                    | lifeline_core::JournalRecord::SessionOpened { .. }
            )
        });
        if lifecycle {
            self.refresh_facts();
        }
    }

    // ----- status --------------------------------------------------------

    pub fn publish_status(&self) {
        let role = self.role.get();
        let (writer, runtime, busy, position) = {
            let core = self.core.borrow();
            match core.as_ref() {
                Some(core) if self.stopped.borrow().is_none() => {
                    let p = core.projection();
                    let session = self.session.get();
                    let runtime = session
                        .and_then(|s| p.sessions.get(&s))
                        .and_then(|s| p.workspaces.get(&s.workspace))
                        .and_then(|lease| p.leases.get(lease))
                        .and_then(|l| l.current())
                        .map(|r| {
                            let liveness = core.liveness(r.runtime);
                            RuntimeStatus {
                                runtime: r.runtime,
                                generation: r.generation,
                                attached: liveness != Liveness::Detached,
                                not_responding: matches!(liveness, Liveness::NotResponding { .. }),
                            }
                        });
                    let busy = session.is_some_and(|s| agent::busy(core.pending_projection(), s));
                    (true, runtime, busy || self.lifecycle_status().1, p.position)
                }
                _ => {
                    let f = self.follower.borrow();
                    let p = f.as_ref();
                    let busy = p
                        .zip(self.session.get())
                        .is_some_and(|(p, s)| agent::busy(p, s));
                    (false, None, busy, p.map_or(0, |p| p.position))
                }
            }
        };
        let status = Status {
            role,
            writer,
            journal: self.journal_status.borrow().clone(),
            session: self.session.get(),
            runtime,
            storage: self.storage.borrow().clone(),
            busy,
            lifecycle: self.lifecycle_status().0,
            position,
        };
        let message = ControllerToPage::Status(Box::new(status));
        let text = encode(&message);
        if *self.last_status.borrow() != text {
            let _ = scope().post_message(&JsValue::from_str(&text));
            *self.last_status.borrow_mut() = text;
        }
    }
}

/// Stops listening to a port and closes it.
fn silence(p: &Port) {
    p.port.set_onmessage(None);
    let _ = js_sys::Reflect::set(&p.port, &JsValue::from_str("onclose"), &JsValue::NULL);
    p.port.close();
}

/// A port the core would not take as the runtime's own is closed unheard.
fn refuse_port(runtime: RuntimeId, port: &MessagePort, e: &ControllerError) {
    port.close();
    notice(
        "runtime-port",
        Level::Warning,
        Phrase::RuntimeMessageRejected {
            runtime: runtime.to_string(),
            detail: e.to_string(),
        },
    );
}
