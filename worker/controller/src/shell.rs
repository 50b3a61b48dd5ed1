//! The controller worker's shell: carries out the engine's effects
//! (IndexedDB writes, port messages, timers, fetches, folder observations,
//! worker spawns through the page) and feeds every result back as an input.
//! It keeps handles — the journal, the profile store, ports, timers, abort
//! controllers, the broadcast channel — keyed by the identities the effects
//! carry, and decides nothing: `lifeline_engine::Engine` does.
//!
//! A controller is either the **leader** (its page holds the origin's leader
//! lock; it holds the writer lock and the journal's writer epoch) or a
//! **follower** (it folds the journal read-only and applies the leader's
//! broadcasts after its cursor). A follower is promoted when its page takes
//! the leader lock.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::task::{Poll, Waker};

use lifeline_codec::frame::FrameError;
use lifeline_core::phrase::Phrase;
use lifeline_core::{Generation, JournalEntry, Millis, PortId, Projection, RuntimeId, StartCause};
use lifeline_engine::salvage::{salvage, Reader, SetAside};
use lifeline_engine::{Effect, Ended, Engine, Recovered, Slots, StoreFailure, TimerKey};
use lifeline_protocol::{encode, Broadcast, ControllerToPage, Level, Role, PROTOCOL_VERSION};
use wasm_bindgen::{prelude::*, JsCast};
use wasm_bindgen_futures::spawn_local;
use web_sys::{BroadcastChannel, Event, MessageEvent, MessagePort};

use crate::config::{ConfigError, ConfigStore};
use crate::journal::{database_exists, Journal, JournalError, Loaded, WriterEpoch, DATABASE_NAME};
use crate::web::{hold_lock_for_life, now, random_bytes, scope, Timeout};

mod load;
mod observe;
mod profiles;

/// The leader writes after holding this lock; a dead worker releases it.
const WRITER_LOCK: &str = "lifeline-writer";
/// Followers hear the leader's durable entries here.
const CHANNEL: &str = "lifeline-journal";
/// Entries a follower reads per round trip when it fills a gap.
const GAP_READ: usize = 10_000;

pub fn post(message: ControllerToPage) {
    post_worded(&crate::words::word(message));
}

/// Posts a message already worded for the page.
pub fn post_worded(message: &ControllerToPage<String>) {
    // A failed postMessage to our own page means the page is gone; nobody
    // is left to tell.
    let text = encode(message);
    let _ = scope().post_message(&JsValue::from_str(&text));
}

/// A notice about the shell's own IO (the engine words everything else).
pub fn notice(key: &str, level: Level, message: Phrase) {
    post(ControllerToPage::Notice {
        key: key.into(),
        level,
        message: Some(message),
    });
}

/// Clears the notice under `key`.
pub fn clear_notice(key: &str) {
    post(ControllerToPage::Notice {
        key: key.into(),
        level: Level::Info,
        message: None,
    });
}

fn journal_fault(e: &JournalError) -> Phrase {
    Phrase::Journal { fault: e.fault() }
}

fn store_failure(e: JournalError) -> StoreFailure {
    StoreFailure {
        fault: e.fault(),
        detail: e.to_string(),
    }
}

/// A message listener kept alive as long as what it listens to.
type Listener = Closure<dyn FnMut(MessageEvent)>;

/// A runtime's port and its listeners.
struct Port {
    port: MessagePort,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_close: Closure<dyn FnMut(Event)>,
}

pub struct Shell {
    engine: RefCell<Engine>,
    journal: RefCell<Option<Rc<Journal>>>,
    epoch: Cell<Option<WriterEpoch>>,
    config: RefCell<Option<Rc<ConfigStore>>>,
    /// The profile store being opened beside the journal (see `start`).
    config_opening: RefCell<Option<EarlyConfig>>,
    ports: RefCell<Slots<PortId, Port>>,
    timers: RefCell<Slots<TimerKey, Timeout>>,
    channel: RefCell<Option<(BroadcastChannel, Option<Listener>)>>,
    follower_queue: RefCell<Vec<Vec<JournalEntry>>>,
    follower_busy: Cell<bool>,
    running: Cell<bool>,
    last_status: RefCell<String>,
    last_card: RefCell<String>,
}

pub type Shared = Rc<Shell>;

/// An open of the profile store under way: its result once it is in, and
/// who waits for it meanwhile.
type EarlyConfig = Rc<RefCell<(Option<Result<ConfigStore, ConfigError>>, Option<Waker>)>>;

impl Shell {
    pub fn new() -> Shared {
        let entropy = random_bytes::<32>().map(|b| b.to_vec()).unwrap_or_default();
        Rc::new(Shell {
            engine: RefCell::new(Engine::new(Role::Follower, &entropy)),
            journal: RefCell::new(None),
            epoch: Cell::new(None),
            config: RefCell::new(None),
            config_opening: RefCell::new(None),
            ports: RefCell::new(Slots::new()),
            timers: RefCell::new(Slots::new()),
            channel: RefCell::new(None),
            follower_queue: RefCell::new(Vec::new()),
            follower_busy: Cell::new(false),
            running: Cell::new(false),
            last_status: RefCell::new(String::new()),
            last_card: RefCell::new(String::new()),
        })
    }

    /// Reads a command's events after `after` (`limit` at most) from the
    /// journal and hands them to `answer` (`Err` when they could not be
    /// read, or there is no journal).
    fn read_events(
        self: &Rc<Self>,
        command: lifeline_core::CommandId,
        after: lifeline_core::EventSeq,
        limit: Option<u32>,
        answer: impl FnOnce(&mut Engine, Result<Vec<lifeline_core::event::EventRecord>, ()>) + 'static,
    ) {
        let shell = self.clone();
        let journal = self.journal();
        spawn_local(async move {
            let events = match journal {
                Some(journal) => journal
                    .command_events(command, after, limit)
                    .await
                    .map_err(|_| ()),
                None => Err(()),
            };
            shell.input(|e, _| answer(e, events));
        });
    }

    /// Hands the engine one input, then carries out what it asks.
    pub fn input(self: &Rc<Self>, f: impl FnOnce(&mut Engine, Millis)) {
        let mut f = Some(f);
        self.input_dyn(&mut |e, now| {
            if let Some(f) = f.take() {
                f(e, now);
            }
        });
    }

    /// One copy of the input path, not one per call site: the worker's
    /// wasm has a size budget.
    fn input_dyn(self: &Rc<Self>, f: &mut dyn FnMut(&mut Engine, Millis)) {
        let at = now();
        {
            let mut engine = self.engine.borrow_mut();
            f(&mut engine, at);
            engine.expire_notices(at);
        }
        self.run();
    }

    /// Carries out the engine's effects until it has none.
    fn run(self: &Rc<Self>) {
        if self.running.replace(true) {
            return;
        }
        loop {
            let effect = self.engine.borrow_mut().poll_effect();
            match effect {
                Some(effect) => self.execute(effect),
                None => break,
            }
        }
        self.running.set(false);
    }

    /// Posts to the page, dropping a status line or a card identical to
    /// the last one sent (the engine republishes both after every input).
    fn post_changed(&self, message: ControllerToPage) {
        let last = match message {
            ControllerToPage::Status(_) => &self.last_status,
            ControllerToPage::Recovery { .. } => &self.last_card,
            _ => return post(message),
        };
        // Compared as worded: in another language the same card is news.
        let text = encode(&crate::words::word(message));
        if *last.borrow() != text {
            let _ = scope().post_message(&JsValue::from_str(&text));
            *last.borrow_mut() = text;
        }
    }

    pub(crate) fn journal(&self) -> Option<Rc<Journal>> {
        self.journal.borrow().clone()
    }

    fn config(&self) -> Option<Rc<ConfigStore>> {
        self.config.borrow().clone()
    }

    // ----- start ---------------------------------------------------------

    pub fn start(self: &Rc<Self>, role: Role, cause: StartCause) {
        self.input(|e, _| e.handle_start(role));
        // Both roles read the profile store right after the journal (a
        // leader's session launches with its profile): opened meanwhile,
        // not after it, it is off a first visit's path to Connected.
        self.open_config_early();
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

    /// The reader chose another language (already set in `words`): what
    /// the page shows worded is posted again.
    pub fn language(self: &Rc<Self>) {
        self.input(|e, now| e.handle_reword(now));
        let shell = self.clone();
        spawn_local(async move { shell.publish_profiles().await });
    }

    pub fn promote(self: &Rc<Self>) {
        let mut promoted = false;
        self.input(|e, _| promoted = e.handle_promote());
        if !promoted {
            return;
        }
        if let Some((channel, _)) = self.channel.borrow_mut().take() {
            channel.close();
        }
        let shell = self.clone();
        spawn_local(async move {
            if shell.journal().is_none() && shell.open_journal().await.is_err() {
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
                        shell.input(|engine, _| engine.handle_journal_lost(e.fault()));
                    }
                });
                let version = journal.version();
                *self.journal.borrow_mut() = Some(Rc::new(journal));
                self.input(|e, _| e.handle_journal_open(version, None));
                Ok(())
            }
            Err(err) => {
                self.input(|e, _| e.handle_journal_unavailable(err.fault()));
                Err(())
            }
        }
    }

    async fn refresh_storage(self: &Rc<Self>) {
        let estimate = crate::storage::estimate().await;
        let persisted = crate::storage::persisted().await.ok();
        if let Ok(estimate) = estimate {
            self.input(|e, _| e.handle_storage(estimate.usage, estimate.quota, persisted));
        }
    }

    /// Folds the journal without writing (a follower, or a leader that
    /// cannot write), saying how many values could not be read.
    async fn fold_read_only(&self, journal: &Journal) -> Result<Projection, Phrase> {
        let loaded = load::load(journal).await?;
        Ok(self.fold(loaded, Reader::Follower).0)
    }

    /// Folds what was read, carrying out what `salvage` says about what
    /// could not be.
    fn fold(&self, loaded: Loaded, reader: Reader) -> (Projection, u32) {
        let set_aside: Vec<SetAside<'_>> = loaded
            .quarantined
            .iter()
            .map(|q| SetAside {
                place: &q.store,
                key: &q.key,
                position: q.position,
                reason: &q.reason,
            })
            .collect();
        let salvaged = salvage(
            loaded.snapshot,
            &loaded.tail,
            &set_aside,
            loaded.last_position,
            reader,
        );
        for line in &salvaged.logs {
            crate::web::log(line);
        }
        for (key, level, phrase) in salvaged.notices {
            notice(key, level, phrase);
        }
        (salvaged.projection, salvaged.unreadable)
    }

    // ----- leader --------------------------------------------------------

    async fn lead(self: &Rc<Self>, cause: StartCause) {
        let lock = match hold_lock_for_life(WRITER_LOCK).await {
            Ok(lock) => lock,
            Err(e) => return self.input(|engine, _| engine.handle_lock_failed(e)),
        };
        let Some(journal) = self.journal() else {
            return;
        };
        match journal.claim_writer_held(&lock).await {
            Ok(epoch) => self.lead_as(journal, epoch, cause).await,
            Err(JournalError::WriterUnreadable) => {
                let folded = self.fold_read_only(&journal).await;
                self.input(|e, _| match folded {
                    Ok(projection) => e.handle_writer_unreadable(projection, cause),
                    Err(reason) => e.stop(reason),
                });
            }
            Err(err) => self.input(|e, _| e.stop(journal_fault(&err))),
        }
    }

    /// Leads under a claimed `epoch`: recovers from the journal and starts
    /// the engine's core.
    async fn lead_as(self: &Rc<Self>, journal: Rc<Journal>, epoch: WriterEpoch, cause: StartCause) {
        self.epoch.set(Some(epoch));
        let (version, id) = (journal.version(), journal.id());
        self.input(|e, _| e.handle_journal_open(version, id));
        let loaded = match load::load(&journal).await {
            Ok(loaded) => loaded,
            Err(reason) => return self.input(|e, _| e.stop(reason)),
        };
        let (projection, unreadable) = self.salvage(&journal, epoch, loaded).await;
        let entropy = match random_bytes::<32>() {
            Ok(bytes) => bytes.to_vec(),
            Err(detail) => {
                crate::web::log(&detail);
                return self.input(|e, _| e.stop(Phrase::NoRandomness));
            }
        };
        self.open_channel(false);
        self.input(|e, now| {
            e.lead(
                Recovered {
                    projection,
                    unreadable,
                    cause,
                    entropy,
                },
                now,
            )
        });
    }

    /// Folds what the journal holds, setting aside what cannot be read and
    /// saying so; never deletes a readable record. Also counts what was set
    /// aside, for the card.
    async fn salvage(
        &self,
        journal: &Journal,
        epoch: WriterEpoch,
        mut loaded: Loaded,
    ) -> (Projection, u32) {
        if let Some(note) = loaded.snapshot_note.take() {
            notice("snapshot", Level::Info, note);
        }
        if !loaded.quarantined.is_empty() {
            if let Err(e) = journal.quarantine(&loaded.quarantined, epoch).await {
                notice(
                    "quarantine-move",
                    Level::Warning,
                    Phrase::QuarantineNotMoved { fault: e.fault() },
                );
            }
        }
        self.fold(loaded, Reader::Leader)
    }

    fn open_config_early(&self) {
        let early: EarlyConfig = Rc::new(RefCell::new((None, None)));
        let filled = early.clone();
        spawn_local(async move {
            let opened = ConfigStore::open().await;
            let waiting = {
                let mut slot = filled.borrow_mut();
                slot.0 = Some(opened);
                slot.1.take()
            };
            if let Some(waker) = waiting {
                waker.wake();
            }
        });
        *self.config_opening.borrow_mut() = Some(early);
    }

    /// The profile store: the one opened beside the journal, or a new open.
    async fn open_config(&self) -> Result<ConfigStore, ConfigError> {
        // Taken first, so that no borrow of the cell is held across an await.
        let early = self.config_opening.borrow_mut().take();
        let Some(early) = early else {
            return ConfigStore::open().await;
        };
        std::future::poll_fn(|cx| {
            let mut slot = early.borrow_mut();
            match slot.0.take() {
                Some(opened) => Poll::Ready(opened),
                None => {
                    slot.1 = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }

    /// Opens the profile store and makes sure the default profile exists,
    /// then brings the engine's sessions up.
    async fn open_profiles(self: &Rc<Self>) {
        let config = match self.open_config().await {
            Ok(c) => Rc::new(c),
            Err(e) => {
                let reason = Phrase::ProfilesCannotOpen { fault: e.fault() };
                return self.input(|engine, _| engine.handle_profiles_unavailable(reason));
            }
        };
        *self.config.borrow_mut() = Some(config.clone());
        let Some(id) = profiles::mint(lifeline_core::ProfileId::from_u128) else {
            return;
        };
        let default = match config.ensure_default_profile(id).await {
            Ok(p) => p,
            Err(e) => {
                let reason = Phrase::NoProfileMade { fault: e.fault() };
                return self.input(|engine, _| engine.handle_profiles_unavailable(reason));
            }
        };
        let entropy = random_bytes::<32>().map(|b| b.to_vec()).unwrap_or_default();
        self.input(|e, now| e.start_sessions(default.id, &entropy, now));
        self.publish_profiles().await;
    }

    // ----- effects -------------------------------------------------------

    fn execute(self: &Rc<Self>, effect: Effect) {
        match effect {
            Effect::Page(message) => self.post_changed(message),
            Effect::Log(line) => crate::web::log(&line),
            Effect::Persist(batch) => {
                let (Some(journal), Some(epoch)) = (self.journal(), self.epoch.get()) else {
                    return;
                };
                let shell = self.clone();
                spawn_local(async move {
                    let result = journal.write_batch(&batch, epoch).await;
                    shell.input(|e, now| {
                        e.handle_persisted(batch, result.map_err(store_failure), now)
                    });
                });
            }
            Effect::SendToRuntime { port, message, .. } => {
                if let Some(p) = self.ports.borrow().get(&port) {
                    let text = lifeline_protocol::encode(&message);
                    let _ = p.port.post_message(&JsValue::from_str(&text));
                }
            }
            Effect::SetTimer { key, at } => {
                let delay = at.0.saturating_sub(now().0);
                let weak = Rc::downgrade(self);
                let handle = Timeout::new(delay, move || {
                    if let Some(shell) = weak.upgrade() {
                        shell.timers.borrow_mut().remove(&key);
                        shell.input(|e, now| e.handle_timer(key, now));
                    }
                });
                if let Some(handle) = handle {
                    if let Some(old) = self.timers.borrow_mut().insert(key, handle) {
                        old.cancel();
                    }
                }
            }
            Effect::CancelTimers => {
                for (_, t) in self.timers.borrow_mut().take_all() {
                    t.cancel();
                }
            }
            Effect::CloseJournal => {
                if let Some(j) = self.journal.borrow_mut().take() {
                    j.close();
                }
            }
            Effect::ClosePort(id) => {
                if let Some(p) = self.ports.borrow_mut().remove(&id) {
                    silence(&p);
                }
            }
            Effect::WatchLife {
                runtime,
                generation,
                port,
            } => {
                let weak = Rc::downgrade(self);
                spawn_local(async move {
                    let name = lifeline_protocol::runtime_life_lock(runtime, generation);
                    if lifeline_locks::wait_for_release(&name).await.is_ok() {
                        if let Some(shell) = weak.upgrade() {
                            shell.input(|e, now| {
                                e.handle_worker_ended(
                                    runtime,
                                    generation,
                                    port,
                                    Ended::LockReleased,
                                    now,
                                )
                            });
                        }
                    }
                });
            }
            Effect::OpenProfiles => {
                let shell = self.clone();
                spawn_local(async move { shell.open_profiles().await });
            }
            Effect::LookupProfile { attempt, profile } => {
                let Some(config) = self.config() else { return };
                let shell = self.clone();
                spawn_local(async move {
                    let lookup = config.lookup_profile(profile).await;
                    shell.input(|e, now| e.handle_profile(attempt, lookup, now));
                });
            }
            Effect::ResolveCredentials {
                attempt,
                credentials,
            } => {
                let Some(config) = self.config() else { return };
                let shell = self.clone();
                spawn_local(async move {
                    let mut resolved = Vec::with_capacity(credentials.len());
                    for id in credentials {
                        resolved.push((id, config.resolve_credential(id).await));
                    }
                    shell.input(|e, now| e.handle_credentials(attempt, resolved, now));
                });
            }
            Effect::ObserveWorkspace {
                attempt,
                workspace,
                environment,
            } => {
                let shell = self.clone();
                spawn_local(async move {
                    let observed = observe::workspace(&environment, workspace).await;
                    shell.input(|e, now| {
                        e.handle_workspace_observed(attempt, &environment, observed, now)
                    });
                });
            }
            Effect::RemoveWorkspace { session, workspace } => {
                let shell = self.clone();
                spawn_local(async move {
                    let result = crate::storage::remove_workspace(workspace).await;
                    shell.input(|e, now| e.handle_workspace_removed(session, result, now));
                });
            }
            Effect::Fetch {
                request,
                provider,
                api_key,
                conversation,
                tools,
            } => crate::provider::fetch(self, request, provider, api_key, conversation, tools),
            Effect::Abort(request) => crate::provider::abort(self, request),
            Effect::ObserveFacts {
                session,
                workspace,
                environment,
                profile,
            } => {
                let config = self.config();
                let shell = self.clone();
                spawn_local(async move {
                    let facts = observe::facts(config, workspace, environment, profile).await;
                    shell.input(|e, _| e.handle_facts(session, facts));
                });
            }
            Effect::ListWorkspace {
                session,
                workspace,
                environment,
                file,
            } => {
                let shell = self.clone();
                spawn_local(async move {
                    let listing = observe::list(session, workspace, &environment, file).await;
                    shell.input(|e, _| {
                        e.handle_workspace_listing(session, workspace, &environment, listing)
                    });
                });
            }
            Effect::ReadArtifacts {
                command,
                read,
                stored,
                plan,
                digests,
            } => crate::export::read_artifacts(self, command, read, stored, plan, digests),
            Effect::SaveOutput {
                session,
                file_name,
                bytes,
            } => crate::export::save_output(session, file_name, &bytes),
            Effect::Snapshot(snapshot) => {
                let (Some(journal), Some(epoch)) = (self.journal(), self.epoch.get()) else {
                    return;
                };
                let shell = self.clone();
                spawn_local(async move {
                    let result = journal.put_snapshot(&snapshot, epoch).await;
                    shell.input(|e, _| e.handle_snapshot_written(result.map_err(|e| e.fault())));
                });
            }
            Effect::ReadKeptHead { command, read, got } => {
                let after = got.last().map_or(lifeline_core::EventSeq::ZERO, |e| e.seq);
                let limit = Some(lifeline_engine::HEAD_READ_EVENTS as u32);
                self.read_events(command, after, limit, move |e, next| {
                    e.handle_kept_head_read(command, read, got, next)
                })
            }
            // Every read is answered, read or not: the engine holds a slot
            // for it until then.
            Effect::ReadOutput { view, command } => self.read_events(
                command,
                lifeline_core::EventSeq::ZERO,
                None,
                move |e, events| e.handle_output_read(view, command, events),
            ),
            Effect::Broadcast(batch) => {
                if let Some((channel, _)) = self.channel.borrow().as_ref() {
                    let message = Broadcast::Entries {
                        protocol: PROTOCOL_VERSION,
                        entries: &batch.entries[..],
                    };
                    let _ = channel.post_message(&JsValue::from_str(&encode(&message)));
                }
            }
            Effect::CheckStorage => {
                let shell = self.clone();
                spawn_local(async move {
                    // A browser that wiped the database without telling the
                    // connection still stops listing it.
                    if database_exists(DATABASE_NAME).await == Some(false) {
                        shell.input(|e, _| {
                            e.handle_journal_lost(lifeline_core::phrase::JournalFault::Removed)
                        });
                    }
                    shell.refresh_storage().await;
                });
            }
            Effect::RepairJournal => {
                let (Some(journal), Some(cause)) =
                    (self.journal(), self.engine.borrow().start_cause())
                else {
                    return;
                };
                let shell = self.clone();
                spawn_local(async move {
                    match journal.repair_writer(now().0).await {
                        Ok(epoch) => shell.lead_as(journal, epoch, cause).await,
                        Err(err) => shell.input(|e, _| e.handle_repair_failed(err.fault())),
                    }
                });
            }
        }
    }

    // ----- runtimes ------------------------------------------------------

    pub fn runtime_port(
        self: &Rc<Self>,
        runtime: RuntimeId,
        generation: Generation,
        port: MessagePort,
    ) {
        let id = self
            .engine
            .borrow_mut()
            .handle_port_opened(runtime, generation, now());
        // Every listener names the port it listens to, so the engine can
        // tell the runtime's current port from an old or a made-up one.
        let weak = Rc::downgrade(self);
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let Some(shell) = weak.upgrade() else { return };
            match lifeline_codec::frame::read(event.data()) {
                Ok(message) => shell.input(|e, now| {
                    e.handle_runtime_message(runtime, generation, id, message, now)
                }),
                Err(FrameError::Malformed) => {
                    shell.input(|e, _| e.runtime_message_rejected(runtime, "malformed"))
                }
                Err(FrameError::NotBuffer) => notice(
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
                shell.input(|e, now| {
                    e.handle_worker_ended(runtime, generation, id, Ended::PortClosed, now)
                });
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
        self.ports.borrow_mut().insert(
            id,
            Port {
                port,
                _on_message: on_message,
                _on_close: on_close,
            },
        );
        // A refused port is closed by the effect the engine queued.
        self.run();
    }

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
            Err(reason) => return self.input(|e, _| e.stop(reason)),
        };
        // Reads only: whether the keys the session's profile names exist.
        if let Ok(config) = self.open_config().await {
            if self.config.borrow().is_none() {
                *self.config.borrow_mut() = Some(Rc::new(config));
            }
        }
        self.input(|e, _| e.follow(projection));
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
                match lifeline_codec::decode_message::<Broadcast>(&text) {
                    Ok(Broadcast::Entries { protocol, entries })
                        if protocol == PROTOCOL_VERSION =>
                    {
                        shell.follower_queue.borrow_mut().push(entries);
                        shell.drain_follower_queue();
                    }
                    Ok(_) => notice("channel", Level::Warning, Phrase::OtherBuild),
                    Err(e) => {
                        crate::web::log(&e.to_string());
                        notice("channel", Level::Warning, Phrase::BroadcastRejected);
                    }
                }
            });
            channel.set_onmessage(Some(handler.as_ref().unchecked_ref()));
            handler
        });
        if let Some((old, _)) = self.channel.borrow_mut().replace((channel, handler)) {
            old.close();
        }
    }

    /// Applies queued broadcasts after the cursor, reading any gap from the
    /// journal first (the leader writes before it broadcasts).
    fn drain_follower_queue(self: &Rc<Self>) {
        if self.follower_busy.get() || self.engine.borrow().follower_position().is_none() {
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
                let Some(cursor) = shell.engine.borrow().follower_position() else {
                    break;
                };
                let first = batch.iter().map(|e| e.position).min().unwrap_or(0);
                let mut entries = Vec::new();
                if first > cursor + 1 {
                    let Some(journal) = shell.journal() else {
                        break;
                    };
                    entries = read_gap(&journal, cursor, first).await;
                }
                entries.extend(batch);
                shell.input(|e, _| e.handle_followed(entries));
            }
            shell.follower_busy.set(false);
        });
    }
}

/// Reads the entries after `cursor` and before `first` from the journal.
async fn read_gap(journal: &Journal, cursor: u64, first: u64) -> Vec<JournalEntry> {
    let mut entries = Vec::new();
    let mut after = cursor;
    loop {
        match journal.entries_after(after, GAP_READ).await {
            Ok(tail) => {
                let next = tail.last_position(after);
                entries.extend(tail.entries.into_iter().filter(|e| e.position < first));
                if next == after || next >= first {
                    break;
                }
                after = next;
            }
            Err(e) => {
                notice(
                    "follow",
                    Level::Warning,
                    Phrase::CatchUpFailed { fault: e.fault() },
                );
                break;
            }
        }
    }
    entries
}

/// Stops listening to a port and closes it.
fn silence(p: &Port) {
    p.port.set_onmessage(None);
    let _ = js_sys::Reflect::set(&p.port, &JsValue::from_str("onclose"), &JsValue::NULL);
    p.port.close();
}
