//! All IO of the page: the leader election, the controller worker and its
//! replacement when it dies, the runtime workers and the channels relayed
//! between them (the reverse dial), persistent storage, the service worker.
//!
//! Everything a worker sends is untrusted: it is decoded with
//! [`lifeline_protocol::decode`], and a malformed message becomes an error
//! notice, never a panic. State the components read lives in [`Ui`] signals;
//! the page's own bookkeeping lives in a thread-local [`Host`].

use crate::i18n::{self, Msg};
use crate::transcript::{self, TranscriptSignals};
use leptos::prelude::*;
use lifeline_core::{
    Generation, ProfileId, RuntimeId, RuntimeIdentity, StartCause, TurnId, WorkspaceId,
};
use lifeline_protocol::{
    check_version, decode, encode, ControllerToPage, JournalStatus, Level, PageToController,
    PageToRuntime, ProfileInput, ProfileSummary, Role, RuntimeToPage, SecretText, SessionStatus,
    Status, PROTOCOL_VERSION,
};
use std::cell::RefCell;
use std::collections::VecDeque;
use wasm_bindgen::{prelude::*, JsCast};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{ErrorEvent, Event, MessageChannel, MessageEvent, Worker, WorkerOptions, WorkerType};

/// The controller beats every second; this much silence means it is dead
/// or stuck.
const HEARTBEAT_TIMEOUT_MS: f64 = 5_000.0;
/// A worker's first `Ready` includes fetching and compiling its wasm.
const READY_TIMEOUT_MS: f64 = 20_000.0;
/// At most this many controller restarts within [`RESTART_WINDOW_MS`].
const MAX_RESTARTS: usize = 5;
const RESTART_WINDOW_MS: f64 = 60_000.0;
const TICK_MS: i32 = 1_000;
/// A request of the person's counts as arrived once the controller has
/// beaten this many times after the page posted it: by then it sat in the
/// worker's queue for at least two whole beat intervals, and the worker
/// takes its messages in order with its timers. An inference, not a
/// receipt (the protocol has none): a request newer than that may have
/// died with the worker, and is reported if it did.
const ARRIVAL_BEATS: u64 = 3;
/// A tick this late means the page itself was stalled (or throttled in the
/// background): silence during it is no evidence against a worker.
const STALL_MS: f64 = 3_000.0;
const LEADER_LOCK: &str = "lifeline-leader";
/// `localStorage`: the identity of the last journal that held something.
const JOURNAL_SEEN_KEY: &str = "lifeline-journal";

#[derive(Clone, Debug, PartialEq)]
pub enum Offline {
    Pending,
    Ready,
    Unavailable(String),
}

/// The page's request for persistent storage.
#[derive(Clone, Debug, PartialEq)]
pub enum Persist {
    Idle,
    Asking,
    Refused,
    Failed(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct NoticeItem {
    pub key: String,
    pub level: Level,
    pub message: NoticeText,
    /// Raised on every change, so the list re-renders a changed notice.
    pub revision: u64,
}

/// A notice's text: composed here, or a phrase from the controller that
/// is worded in the current locale when it renders.
#[derive(Clone, Debug, PartialEq)]
pub enum NoticeText {
    Text(String),
    Phrase(lifeline_core::phrase::Phrase),
}

impl NoticeText {
    /// The text in the current locale (tracked for phrases).
    pub fn render(&self) -> String {
        match self {
            NoticeText::Text(s) => s.clone(),
            NoticeText::Phrase(p) => i18n::phrase(i18n::locale(), p),
        }
    }
}

/// What the status line says.
#[derive(Clone, Debug, PartialEq)]
pub enum Connection {
    Connecting,
    Recovering,
    Connected,
    Following,
    Failed(String),
}

impl Connection {
    /// The status line in the current locale (tracked).
    pub fn text(&self) -> String {
        let msg = match self {
            Connection::Connecting => Msg::Connecting,
            Connection::Recovering => Msg::Recovering,
            Connection::Connected => Msg::Connected,
            Connection::Following => Msg::Following,
            Connection::Failed(reason) => return i18n::tf(Msg::NotConnected, &[reason]),
        };
        i18n::tr(msg).to_owned()
    }

    pub fn state(&self) -> &'static str {
        match self {
            Connection::Connecting => "connecting",
            Connection::Recovering => "recovering",
            Connection::Connected => "connected",
            Connection::Following => "following",
            Connection::Failed(_) => "failed",
        }
    }
}

/// The signals the components read (all `Copy`).
#[derive(Clone, Copy)]
pub struct Ui {
    /// From the leader election; `None` until the lock answered.
    pub role: RwSignal<Option<Role>>,
    /// The current controller has our `Start`.
    pub started: RwSignal<bool>,
    /// Unrecoverable without a reload.
    pub failure: RwSignal<Option<String>>,
    pub status: RwSignal<Option<Status>>,
    pub notices: RwSignal<Vec<NoticeItem>>,
    pub restarts: RwSignal<u32>,
    /// Why the last prompt was not recorded.
    pub refused: RwSignal<Option<String>>,
    pub draft: RwSignal<String>,
    pub offline: RwSignal<Offline>,
    pub persist: RwSignal<Persist>,
    pub transcript: TranscriptSignals,
    /// Every profile as the controller last listed it (never a secret).
    pub profiles: RwSignal<Vec<ProfileSummary>>,
    /// Profiles the controller could not read, phrased for a person.
    pub profile_errors: RwSignal<Vec<String>>,
    /// The controller has sent a profile list since it started.
    pub profiles_loaded: RwSignal<bool>,
    /// The recovery card the core built, if there is anything to recover.
    pub recovery: RwSignal<Option<lifeline_core::recovery::Card>>,
    /// Workspace-only access: the stopped session's files.
    pub workspace: RwSignal<Option<lifeline_protocol::WorkspaceListing>>,
}

impl Ui {
    pub fn new() -> Self {
        Self {
            role: RwSignal::new(None),
            started: RwSignal::new(false),
            failure: RwSignal::new(None),
            status: RwSignal::new(None),
            notices: RwSignal::new(Vec::new()),
            restarts: RwSignal::new(0),
            refused: RwSignal::new(None),
            draft: RwSignal::new(String::new()),
            offline: RwSignal::new(Offline::Pending),
            persist: RwSignal::new(Persist::Idle),
            transcript: TranscriptSignals::new(),
            profiles: RwSignal::new(Vec::new()),
            profile_errors: RwSignal::new(Vec::new()),
            profiles_loaded: RwSignal::new(false),
            recovery: RwSignal::new(None),
            workspace: RwSignal::new(None),
        }
    }

    /// The connection as the status line states it (tracked).
    pub fn connection(&self) -> Connection {
        if let Some(reason) = self.failure.get() {
            return Connection::Failed(reason);
        }
        let status = self.status.get();
        match status.as_ref().map(|s| &s.journal) {
            Some(JournalStatus::Unavailable { reason }) => {
                let reason = i18n::phrase(i18n::locale(), reason);
                return Connection::Failed(i18n::tf(Msg::JournalUnavailable, &[&reason]));
            }
            // The banner above the transcript explains and offers the way on.
            Some(JournalStatus::Gone { .. }) => {
                return Connection::Failed(i18n::tr(Msg::JournalGoneStatus).to_owned())
            }
            Some(JournalStatus::ReadOnly { .. }) => {
                return Connection::Failed(i18n::tr(Msg::JournalReadOnlyStatus).to_owned())
            }
            _ => {}
        }
        if !self.started.get() {
            return Connection::Connecting;
        }
        match self.role.get() {
            None => Connection::Connecting,
            Some(Role::Follower) => Connection::Following,
            Some(Role::Leader) => match status {
                Some(s) if s.role == Role::Leader && s.writer => {
                    // Only a session's first start waits for its runtime.
                    // Once it ran, the line is about the controller, which
                    // is there and takes messages: a stopped session is
                    // resumed by a message, and a runtime that went silent,
                    // died or is dialing back is shown on its own (beside
                    // the composer, in the details) while that is settled.
                    let settled = s.lifecycle.as_ref().is_some_and(|l| {
                        matches!(
                            l.state.as_str(),
                            "running" | "failed" | "cancelled" | "archived"
                        )
                    });
                    if settled || s.runtime.as_ref().is_some_and(|r| r.attached) {
                        Connection::Connected
                    } else {
                        Connection::Connecting
                    }
                }
                _ => Connection::Recovering,
            },
        }
    }

    /// This tab may send prompts now (tracked).
    pub fn can_write(&self) -> bool {
        self.connection() == Connection::Connected
    }

    pub fn busy(&self) -> bool {
        self.status.with(|s| s.as_ref().is_some_and(|s| s.busy))
    }

    /// The session's lifecycle as the controller last reported it (tracked).
    pub fn lifecycle(&self) -> Option<SessionStatus> {
        self.status
            .with(|s| s.as_ref().and_then(|s| s.lifecycle.clone()))
    }

    /// The runtime the controller reports as not responding, if any
    /// (tracked).
    pub fn unresponsive(&self) -> Option<(RuntimeId, Generation)> {
        self.status.with(|s| {
            s.as_ref()
                .and_then(|s| s.runtime.as_ref())
                .filter(|r| r.not_responding)
                .map(|r| (r.runtime, r.generation))
        })
    }

    /// The session is starting (Stop cancels the start) (tracked).
    pub fn starting(&self) -> bool {
        self.status.with(|s| {
            s.as_ref()
                .and_then(|s| s.lifecycle.as_ref())
                .is_some_and(|l| l.state == "starting")
        })
    }
}

struct ControllerSlot {
    worker: Worker,
    epoch: u32,
    cause: StartCause,
    ready: bool,
    started: bool,
    spawned_at: f64,
    last_beat: f64,
    /// The number of the last heartbeat it sent.
    beat: u64,
    /// The person's requests posted to it that it cannot be known to have
    /// received yet: the beat when each was posted and the control used.
    unconfirmed: Vec<(u64, Msg)>,
}

struct RuntimeSlot {
    worker: Worker,
    identity: RuntimeIdentity,
    workspace: WorkspaceId,
    /// The environment its commands see. Held until the worker's `Start`
    /// carries it (the runtime keeps it for its life) and then dropped: a
    /// controller restart re-dials without it. Never logged or shown.
    env: Vec<(String, SecretText)>,
    /// A resume: the workspace must already exist.
    existing_workspace: bool,
    /// The session runs in this local folder, not the sandbox.
    folder: Option<lifeline_core::FolderId>,
    ready: bool,
    spawned_at: f64,
    /// The controller epoch this runtime last got a port to.
    dialed: Option<u32>,
}

type RuntimeKey = (RuntimeId, Generation);

impl RuntimeSlot {
    fn key(&self) -> RuntimeKey {
        (self.identity.runtime, self.identity.generation)
    }
}

struct Host {
    ui: Ui,
    role: Option<Role>,
    controller: Option<ControllerSlot>,
    epoch: u32,
    restart_times: VecDeque<f64>,
    /// A handful at most: one per session execution still alive.
    runtimes: Vec<RuntimeSlot>,
    /// Reports for the controller that arose while none was listening.
    outbox: Vec<PageToController>,
    /// Prompts sent but not yet seen in the transcript, in the order they
    /// were sent: sent again to a replacement controller, given back to
    /// the message box if refused or if none can take them.
    prompts: Vec<(TurnId, String)>,
    last_tick: f64,
    /// The "history gone since the last visit" notice was shown.
    gone_noticed: bool,
}

thread_local! {
    static HOST: RefCell<Option<Host>> = const { RefCell::new(None) };
}

fn with_host<R>(f: impl FnOnce(&mut Host) -> R) -> Option<R> {
    HOST.with(|h| h.try_borrow_mut().ok()?.as_mut().map(f))
}

fn now() -> f64 {
    js_sys::Date::now()
}

pub(crate) fn describe(error: &JsValue) -> String {
    if let Some(e) = error.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    error.as_string().unwrap_or_else(|| format!("{error:?}"))
}

fn spawn_worker(url: &str) -> Result<Worker, String> {
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    Worker::new_with_options(url, &options).map_err(|e| describe(&e))
}

/// What a worker's `error` event says (a module that failed to load fires a
/// plain `Event`).
fn error_detail(event: &Event) -> String {
    match event.dyn_ref::<ErrorEvent>() {
        Some(e) if !e.message().is_empty() => e.message(),
        // Also a runtime's exit detail, which the journal keeps: English.
        _ => "the worker failed to load or crashed".to_owned(),
    }
}

/// Posts `message` to the controller and then, if given, `buffer` as a
/// transferred binary message of its own (evidence import). False if the
/// controller is not there to take it.
pub fn send_with_buffer(message: PageToController, buffer: Option<js_sys::ArrayBuffer>) -> bool {
    with_host(|h| {
        if !h.send(message) {
            h.notice(
                "export",
                Level::Error,
                i18n::now(Msg::ControllerNotRunning).into(),
            );
            return false;
        }
        let (Some(buffer), Some(c)) = (buffer, h.controller.as_ref()) else {
            return true;
        };
        c.worker
            .post_message_with_transfer(&buffer, &js_sys::Array::of1(&buffer))
            .is_ok()
    })
    .unwrap_or(false)
}

/// A notice of the page's own (an empty message clears it).
pub fn page_notice(key: &str, message: String) {
    with_host(|h| h.notice(key, Level::Error, message));
}

/// Starts everything: the election, the first controller, the watchdog.
pub fn start(ui: Ui) {
    HOST.with(|h| {
        *h.borrow_mut() = Some(Host {
            ui,
            role: None,
            controller: None,
            epoch: 0,
            restart_times: VecDeque::new(),
            runtimes: Vec::new(),
            outbox: Vec::new(),
            prompts: Vec::new(),
            last_tick: now(),
            gone_noticed: false,
        })
    });
    with_host(|h| h.spawn_controller(StartCause::HostLoss));
    elect();
    let tick = Closure::<dyn FnMut()>::new(|| {
        with_host(Host::tick);
    });
    let _ = window().set_interval_with_callback_and_timeout_and_arguments_0(
        tick.as_ref().unchecked_ref(),
        TICK_MS,
    );
    // The watchdog lives as long as the page.
    tick.forget();
}

impl Host {
    fn fail(&mut self, reason: String) {
        if self.ui.failure.get_untracked().is_none() {
            self.ui.failure.set(Some(reason));
        }
    }

    fn notice(&self, key: &str, level: Level, message: String) {
        let text = (!message.is_empty()).then_some(NoticeText::Text(message));
        self.set_notice(key, level, text);
    }

    /// Sets (or with `None` clears) the notice under `key`.
    fn set_notice(&self, key: &str, level: Level, message: Option<NoticeText>) {
        self.ui.notices.update(|list| {
            let revision = list.iter().map(|n| n.revision).max().unwrap_or(0) + 1;
            match message {
                None => list.retain(|n| n.key != key),
                Some(message) => {
                    if let Some(n) = list.iter_mut().find(|n| n.key == key) {
                        n.level = level;
                        n.message = message;
                        n.revision = revision;
                    } else {
                        list.push(NoticeItem {
                            key: key.to_owned(),
                            level,
                            message,
                            revision,
                        });
                    }
                }
            }
        });
    }

    // ---- the controller ----

    fn spawn_controller(&mut self, cause: StartCause) {
        self.epoch += 1;
        let epoch = self.epoch;
        let worker = match spawn_worker("./controller.js") {
            Ok(w) => w,
            Err(e) => return self.fail(i18n::now_f(Msg::ControllerSpawnFailed, &[&e])),
        };
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            if let Some(buffer) = event.data().dyn_ref::<js_sys::ArrayBuffer>() {
                // An exported archive, right after its `ExportReady`.
                let current = with_host(|h| h.current(epoch).is_some()).unwrap_or(false);
                if current {
                    crate::export::received_buffer(buffer.clone());
                }
                return;
            }
            let data = event.data().as_string();
            with_host(|h| h.controller_message(epoch, data));
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let on_error = Closure::<dyn FnMut(Event)>::new(move |event: Event| {
            // Handled here: the page restarts the controller.
            event.prevent_default();
            let detail = error_detail(&event);
            with_host(|h| h.controller_died(epoch, detail));
        });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        // Each handler checks its epoch, so a stale worker's events are ignored;
        // they stay allocated for the page's life (restarts are bounded).
        on_message.forget();
        on_error.forget();
        let at = now();
        self.controller = Some(ControllerSlot {
            worker,
            epoch,
            cause,
            ready: false,
            started: false,
            spawned_at: at,
            last_beat: at,
            beat: 0,
            unconfirmed: Vec::new(),
        });
    }

    fn current(&mut self, epoch: u32) -> Option<&mut ControllerSlot> {
        self.controller.as_mut().filter(|c| c.epoch == epoch)
    }

    fn controller_message(&mut self, epoch: u32, data: Option<String>) {
        let Some(controller) = self.current(epoch) else {
            return;
        };
        controller.last_beat = now();
        let Some(text) = data else {
            return self.notice(
                "controller-message",
                Level::Error,
                i18n::now(Msg::ControllerNotMessage).into(),
            );
        };
        let message = match decode::<ControllerToPage>(&text) {
            Ok(m) => m,
            Err(e) => {
                return self.notice(
                    "controller-message",
                    Level::Error,
                    i18n::now_f(Msg::FromController, &[&e.to_string()]),
                )
            }
        };
        match message {
            ControllerToPage::Ready { protocol } => {
                if let Err(e) = check_version(protocol) {
                    if let Some(c) = self.controller.take() {
                        c.worker.terminate();
                    }
                    return self.fail(format!("the controller {e}"));
                }
                if let Some(c) = self.current(epoch) {
                    c.ready = true;
                }
                self.send_start();
                // Messages the previous controller had not recorded yet go
                // again under the same turn ids: one it did record is
                // recognised by its id and not recorded twice.
                for (turn, text) in self.prompts.clone() {
                    self.send(PageToController::Prompt { turn, text });
                }
            }
            ControllerToPage::Heartbeat { beat } => {
                if let Some(c) = self.current(epoch) {
                    c.beat = beat;
                    c.unconfirmed.retain(|(at, _)| beat < at + ARRIVAL_BEATS);
                }
            }
            ControllerToPage::Status(status) => {
                self.journal_seen(&status);
                if self
                    .ui
                    .status
                    .with_untracked(|s| s.as_ref() != Some(&*status))
                {
                    self.ui.status.set(Some(*status));
                }
            }
            ControllerToPage::SpawnRuntime {
                identity,
                workspace,
                env,
                existing_workspace,
                folder,
            } => self.spawn_runtime(identity, workspace, env, (existing_workspace, folder)),
            ControllerToPage::RuntimeEnvironment {
                runtime,
                generation,
                env,
            } => self.runtime_environment((runtime, generation), env),
            ControllerToPage::TerminateRuntime {
                runtime,
                generation,
            } => self.terminate_runtime((runtime, generation)),
            ControllerToPage::View { reset, deltas } => {
                for delta in &deltas {
                    if let lifeline_core::ViewDelta::Turn { turn, .. } = delta {
                        self.prompts.retain(|(t, _)| t != turn);
                    }
                }
                transcript::apply(reset, deltas);
            }
            ControllerToPage::Profiles { profiles, errors } => {
                if self.ui.profiles.with_untracked(|p| *p != profiles) {
                    self.ui.profiles.set(profiles);
                }
                if self.ui.profile_errors.with_untracked(|e| *e != errors) {
                    self.ui.profile_errors.set(errors);
                }
                self.ui.profiles_loaded.set(true);
            }
            ControllerToPage::Streaming { turn, text } => transcript::streaming(turn, text),
            ControllerToPage::Recovery { card } => {
                let card = card.map(|c| *c);
                if self.ui.recovery.with_untracked(|c| *c != card) {
                    self.ui.recovery.set(card);
                }
            }
            ControllerToPage::Restarted { running, continued } => self.notice(
                "controller-restart",
                Level::Warning,
                i18n::restart_summary(i18n::locale_untracked(), running, continued),
            ),
            ControllerToPage::Workspace { listing } => self.ui.workspace.set(listing),
            ControllerToPage::ExportReady {
                session,
                file_name,
                bytes,
            } => crate::export::expect_download(session, file_name, bytes),
            ControllerToPage::Imported {
                file_name,
                session,
                title,
                reset,
                deltas,
            } => crate::export::imported(file_name, session, title, reset, deltas),
            ControllerToPage::Notice {
                key,
                level,
                message,
            } => self.set_notice(
                &format!("controller:{key}"),
                level,
                message.map(NoticeText::Phrase),
            ),
            ControllerToPage::PromptRefused { turn, message } => {
                self.ui
                    .refused
                    .set(Some(i18n::phrase(i18n::locale_untracked(), &message)));
                self.give_back(turn);
                transcript::content_changed();
            }
        }
    }

    /// Puts a sent message that was not recorded back into the box.
    fn give_back(&mut self, turn: TurnId) {
        let Some(i) = self.prompts.iter().position(|(t, _)| *t == turn) else {
            return;
        };
        let (_, text) = self.prompts.remove(i);
        self.ui.draft.update(|draft| {
            if draft.trim().is_empty() {
                *draft = text;
            } else {
                draft.insert(0, '\n');
                draft.insert_str(0, &text);
            }
        });
    }

    /// Puts every sent message not yet recorded back into the box, in the
    /// order they were sent.
    fn give_back_all(&mut self) {
        while let Some((turn, _)) = self.prompts.last() {
            let turn = *turn;
            self.give_back(turn);
        }
    }

    /// What a status says about the journal itself: a journal that is gone
    /// takes no message, so every one not yet recorded goes back to the
    /// box; a journal other than the one this browser remembers means the
    /// history of an earlier visit is gone. The memory is `localStorage`,
    /// which survives deleting only the database but not "Clear site
    /// data": after that nothing is known, and nothing is claimed.
    fn journal_seen(&mut self, status: &Status) {
        match &status.journal {
            JournalStatus::Gone { .. } => self.give_back_all(),
            JournalStatus::Open { id: Some(id), .. } if status.role == Role::Leader => {
                let storage = window().local_storage().ok().flatten();
                let seen = storage
                    .as_ref()
                    .and_then(|s| s.get_item(JOURNAL_SEEN_KEY).ok().flatten());
                if seen.as_ref().is_some_and(|seen| seen != id) && !self.gone_noticed {
                    self.gone_noticed = true;
                    self.notice(
                        "history-gone",
                        Level::Warning,
                        i18n::now(Msg::HistoryGone).into(),
                    );
                }
                // Remembered once it holds something: an empty journal's
                // loss is no loss to report.
                if status.position > 0 && seen.as_ref() != Some(id) {
                    if let Some(s) = storage {
                        let _ = s.set_item(JOURNAL_SEEN_KEY, id);
                    }
                }
            }
            _ => {}
        }
    }

    /// Sends `Start` once the controller is ready and the election answered.
    fn send_start(&mut self) {
        let Some(role) = self.role else { return };
        let Some(c) = self.controller.as_mut() else {
            return;
        };
        if !c.ready || c.started {
            return;
        }
        let start = encode(&PageToController::Start {
            protocol: PROTOCOL_VERSION,
            role,
            cause: c.cause,
        });
        if let Err(e) = c.worker.post_message(&JsValue::from_str(&start)) {
            let detail = i18n::now_f(Msg::ControllerStartFailed, &[&describe(&e)]);
            let epoch = c.epoch;
            return self.controller_died(epoch, detail);
        }
        c.started = true;
        self.ui.started.set(true);
        for message in std::mem::take(&mut self.outbox) {
            self.send(message);
        }
        let keys: Vec<RuntimeKey> = self.runtimes.iter().map(RuntimeSlot::key).collect();
        for key in keys {
            self.relay(key);
        }
    }

    /// Posts to the controller; reports about runtimes wait for the next one
    /// if none is listening. False if the message was not sent.
    ///
    /// A request the person made stays unconfirmed until the controller
    /// has beaten [`ARRIVAL_BEATS`] times since; if it dies before, the
    /// person is told (prompts are tracked by their turn instead).
    fn send(&mut self, message: PageToController) -> bool {
        let Some(c) = self.controller.as_mut().filter(|c| c.started) else {
            if matches!(
                message,
                PageToController::RuntimeExited { .. } | PageToController::TerminateFailed { .. }
            ) {
                self.outbox.push(message);
            }
            return false;
        };
        match c.worker.post_message(&JsValue::from_str(&encode(&message))) {
            Ok(()) => {
                if let Some(label) = asked(&message) {
                    c.unconfirmed.push((c.beat, label));
                }
                true
            }
            Err(e) => {
                self.notice(
                    "controller-post",
                    Level::Error,
                    i18n::now_f(Msg::ControllerUnreachable, &[&describe(&e)]),
                );
                false
            }
        }
    }

    fn controller_died(&mut self, epoch: u32, reason: String) {
        let Some(old) = self.controller.take_if(|c| c.epoch == epoch) else {
            return;
        };
        old.worker.set_onmessage(None);
        old.worker.set_onerror(None);
        old.worker.terminate();
        self.ui.started.set(false);
        self.ui.status.set(None);
        self.unconfirmed(old.unconfirmed);
        // An export or import it was carrying ended with it.
        crate::export::controller_gone();
        let at = now();
        self.restart_times.push_back(at);
        while self
            .restart_times
            .front()
            .is_some_and(|t| at - t > RESTART_WINDOW_MS)
        {
            self.restart_times.pop_front();
        }
        if self.restart_times.len() > MAX_RESTARTS {
            self.notice("controller-restart", Level::Warning, String::new());
            // No controller will take them: back to the box.
            self.give_back_all();
            return self.fail(i18n::now_f(
                Msg::ControllerTooManyRestarts,
                &[&self.restart_times.len().to_string(), &reason],
            ));
        }
        self.ui.restarts.update(|n| *n += 1);
        self.notice(
            "controller-restart",
            Level::Warning,
            i18n::now(Msg::RestartChecking).into(),
        );
        self.spawn_controller(StartCause::ControllerRestart);
    }

    /// Tells the person which of their requests to a controller that died
    /// may not have reached it; prompts are not among them (they are sent
    /// again under their turn ids).
    fn unconfirmed(&self, requests: Vec<(u64, Msg)>) {
        let mut seen: Vec<Msg> = Vec::new();
        let mut names = String::new();
        for (_, msg) in requests {
            if !seen.contains(&msg) {
                if !names.is_empty() {
                    names.push_str(", ");
                }
                names.push_str(i18n::now(msg));
                seen.push(msg);
            }
        }
        if !names.is_empty() {
            self.notice(
                "unconfirmed",
                Level::Warning,
                i18n::now_f(Msg::MaybeNotReceived, &[&names]),
            );
        }
    }

    fn tick(&mut self) {
        let at = now();
        let stalled = at - self.last_tick > STALL_MS;
        self.last_tick = at;
        if stalled {
            if let Some(c) = self.controller.as_mut() {
                c.last_beat = at;
                c.spawned_at = c.spawned_at.max(at - READY_TIMEOUT_MS / 2.0);
            }
            for r in &mut self.runtimes {
                r.spawned_at = r.spawned_at.max(at - READY_TIMEOUT_MS / 2.0);
            }
            return;
        }
        if let Some(c) = self.controller.as_ref() {
            let epoch = c.epoch;
            if !c.ready && at - c.spawned_at > READY_TIMEOUT_MS {
                self.controller_died(
                    epoch,
                    i18n::now_f(
                        Msg::ControllerNoStart,
                        &[&(READY_TIMEOUT_MS as u64 / 1000).to_string()],
                    ),
                );
            } else if c.ready && at - c.last_beat > HEARTBEAT_TIMEOUT_MS {
                self.controller_died(
                    epoch,
                    i18n::now_f(
                        Msg::ControllerNoHeartbeat,
                        &[&(HEARTBEAT_TIMEOUT_MS as u64 / 1000).to_string()],
                    ),
                );
            }
        }
        let late: Vec<RuntimeKey> = self
            .runtimes
            .iter()
            .filter(|r| !r.ready && at - r.spawned_at > READY_TIMEOUT_MS)
            .map(RuntimeSlot::key)
            .collect();
        for key in late {
            self.runtime_crashed(
                key,
                format!(
                    "the runtime worker did not start within {} s",
                    READY_TIMEOUT_MS / 1000.0
                ),
            );
        }
    }

    // ---- leadership ----

    fn elected(&mut self, role: Role) {
        self.role = Some(role);
        self.ui.role.set(Some(role));
        self.send_start();
    }

    fn promoted(&mut self) {
        let was = self.role;
        self.role = Some(Role::Leader);
        self.ui.role.set(Some(Role::Leader));
        if was == Some(Role::Follower) && self.controller.as_ref().is_some_and(|c| c.started) {
            self.send(PageToController::Promote);
        } else {
            self.send_start();
        }
    }

    // ---- runtimes ----

    fn runtime(&mut self, key: RuntimeKey) -> Option<&mut RuntimeSlot> {
        self.runtimes.iter_mut().find(|r| r.key() == key)
    }

    fn take_runtime(&mut self, key: RuntimeKey) -> Option<RuntimeSlot> {
        let i = self.runtimes.iter().position(|r| r.key() == key)?;
        Some(self.runtimes.swap_remove(i))
    }

    fn spawn_runtime(
        &mut self,
        identity: RuntimeIdentity,
        workspace: WorkspaceId,
        env: Vec<(String, SecretText)>,
        (existing_workspace, folder): (bool, Option<lifeline_core::FolderId>),
    ) {
        let key = (identity.runtime, identity.generation);
        if self.runtime(key).is_some() {
            return self.notice(
                "runtime-spawn",
                Level::Warning,
                i18n::now_f(
                    Msg::RuntimeAskedAgain,
                    &[
                        &identity.runtime.to_string(),
                        &identity.generation.to_string(),
                    ],
                ),
            );
        }
        let worker = match spawn_worker("./runtime.js") {
            Ok(w) => w,
            Err(e) => {
                self.send(PageToController::RuntimeExited {
                    runtime: key.0,
                    generation: key.1,
                    crashed: true,
                    detail: format!("could not start the runtime worker: {e}"),
                });
                return;
            }
        };
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let data = event.data().as_string();
            with_host(|h| h.runtime_message(key, data));
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let on_error = Closure::<dyn FnMut(Event)>::new(move |event: Event| {
            event.prevent_default();
            let detail = error_detail(&event);
            with_host(|h| h.runtime_crashed(key, detail));
        });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_message.forget();
        on_error.forget();
        self.runtimes.push(RuntimeSlot {
            worker,
            identity,
            workspace,
            env,
            existing_workspace,
            folder,
            ready: false,
            spawned_at: now(),
            dialed: None,
        });
    }

    /// A resume rejoined this runtime with its profile's current
    /// environment: hand it over (or, before `Start`, start with it).
    fn runtime_environment(&mut self, key: RuntimeKey, env: Vec<(String, SecretText)>) {
        let Some(slot) = self.runtime(key) else {
            return self.notice(
                "runtime-environment",
                Level::Warning,
                i18n::now_f(
                    Msg::RuntimeEnvUnknown,
                    &[&key.0.to_string(), &key.1.to_string()],
                ),
            );
        };
        if !slot.ready {
            slot.env = env;
            return;
        }
        let message = encode(&PageToRuntime::Environment { env });
        if let Err(e) = slot.worker.post_message(&JsValue::from_str(&message)) {
            self.runtime_crashed(
                key,
                format!("could not hand it its environment: {}", describe(&e)),
            );
        }
    }

    fn runtime_message(&mut self, key: RuntimeKey, data: Option<String>) {
        if self.runtime(key).is_none() {
            return;
        }
        let Some(text) = data else {
            return self.notice(
                "runtime-message",
                Level::Error,
                i18n::now(Msg::RuntimeNotMessage).into(),
            );
        };
        match decode::<RuntimeToPage>(&text) {
            Ok(RuntimeToPage::Ready { protocol }) => {
                if let Err(e) = check_version(protocol) {
                    return self.runtime_crashed(key, format!("the runtime worker {e}"));
                }
                let Some(slot) = self.runtime(key) else {
                    return;
                };
                if slot.ready {
                    return;
                }
                let start = encode(&PageToRuntime::Start {
                    protocol: PROTOCOL_VERSION,
                    identity: slot.identity,
                    workspace: slot.workspace,
                    // Sent once: the runtime keeps its environment for its
                    // life, so the page need not hold the secrets any longer.
                    env: std::mem::take(&mut slot.env),
                    existing_workspace: slot.existing_workspace,
                    folder: slot.folder,
                });
                if let Err(e) = slot.worker.post_message(&JsValue::from_str(&start)) {
                    return self
                        .runtime_crashed(key, format!("could not start it: {}", describe(&e)));
                }
                slot.ready = true;
                self.relay(key);
            }
            Ok(RuntimeToPage::Error { message }) => {
                self.notice(
                    "runtime-error",
                    Level::Error,
                    i18n::now_f(Msg::RuntimeFailed, &[&message]),
                );
                self.runtime_crashed(key, message);
            }
            Err(e) => self.notice(
                "runtime-message",
                Level::Error,
                i18n::now_f(Msg::FromRuntime, &[&e.to_string()]),
            ),
        }
    }

    /// Hands a fresh channel to the runtime and the current controller, once
    /// per controller.
    fn relay(&mut self, key: RuntimeKey) {
        let Some(c) = self.controller.as_ref().filter(|c| c.started) else {
            return;
        };
        let Some(slot) = self.runtimes.iter_mut().find(|r| r.key() == key) else {
            return;
        };
        if !slot.ready || slot.dialed == Some(c.epoch) {
            return;
        }
        let result = (|| -> Result<(), JsValue> {
            let channel = MessageChannel::new()?;
            let port = encode(&PageToController::RuntimePort {
                runtime: key.0,
                generation: key.1,
            });
            c.worker.post_message_with_transfer(
                &JsValue::from_str(&port),
                &js_sys::Array::of1(&channel.port1()),
            )?;
            slot.worker.post_message_with_transfer(
                &JsValue::from_str(&encode(&PageToRuntime::Dial)),
                &js_sys::Array::of1(&channel.port2()),
            )
        })();
        slot.dialed = Some(c.epoch);
        if let Err(e) = result {
            self.notice(
                "runtime-relay",
                Level::Error,
                i18n::now_f(Msg::RuntimeRelayFailed, &[&describe(&e)]),
            );
        }
    }

    fn runtime_crashed(&mut self, key: RuntimeKey, detail: String) {
        let Some(slot) = self.take_runtime(key) else {
            return;
        };
        slot.worker.set_onmessage(None);
        slot.worker.set_onerror(None);
        slot.worker.terminate();
        self.send(PageToController::RuntimeExited {
            runtime: key.0,
            generation: key.1,
            crashed: true,
            detail,
        });
    }

    fn terminate_runtime(&mut self, key: RuntimeKey) {
        let detail = match self.take_runtime(key) {
            Some(slot) => {
                slot.worker.set_onmessage(None);
                slot.worker.set_onerror(None);
                slot.worker.terminate();
                "terminated at the controller's request".to_owned()
            }
            None => "no such worker in this tab".to_owned(),
        };
        self.send(PageToController::RuntimeExited {
            runtime: key.0,
            generation: key.1,
            crashed: false,
            detail,
        });
    }
}

/// What the person asked for with `message`, named by the control they
/// used (a file of the workspace browser by the browser itself); `None`
/// for a prompt (tracked by its turn and sent again) and for the page's
/// own reports.
fn asked(message: &PageToController) -> Option<Msg> {
    Some(match message {
        PageToController::Stop => Msg::Stop,
        PageToController::StopRuntime { .. } => Msg::StopRuntime,
        PageToController::Resume => Msg::Resume,
        PageToController::Recover { action } => i18n::action(*action),
        PageToController::CommandVerdict { done: true, .. } => Msg::MarkDone,
        PageToController::CommandVerdict { done: false, .. } => Msg::MarkNotDone,
        PageToController::Reissue { .. } => Msg::Reissue,
        PageToController::SaveProfile { .. } => Msg::SaveProfile,
        PageToController::DeleteProfile { .. } => Msg::Delete,
        PageToController::SelectProfile { .. } => Msg::UseForSession,
        PageToController::Export { .. } => Msg::ExportEvidence,
        PageToController::Import { .. } => Msg::ImportEvidence,
        PageToController::RepairJournal => Msg::RepairJournal,
        PageToController::CloseWorkspace => Msg::CloseWorkspace,
        PageToController::ChooseEnvironment { .. } => Msg::EnvStartThere,
        PageToController::StoragePersisted { .. } => Msg::KeepData,
        PageToController::ReadWorkspaceFile { .. } => Msg::Workspace,
        PageToController::Prompt { .. }
        | PageToController::Start { .. }
        | PageToController::Promote
        | PageToController::RuntimePort { .. }
        | PageToController::RuntimeExited { .. }
        | PageToController::TerminateFailed { .. } => return None,
    })
}

// ---- leader election (Web Locks; web-sys binds them only under an unstable cfg) ----

fn never_resolves() -> JsValue {
    js_sys::Promise::new(&mut |_, _| {}).into()
}

fn elect() {
    let result = (|| -> Result<(), String> {
        let navigator = window().navigator();
        let locks = js_sys::Reflect::get(&navigator, &"locks".into()).map_err(|e| describe(&e))?;
        if locks.is_undefined() || locks.is_null() {
            return Err(i18n::now(Msg::NoWebLocks).into());
        }
        let request: js_sys::Function = js_sys::Reflect::get(&locks, &"request".into())
            .map_err(|e| describe(&e))?
            .dyn_into()
            .map_err(|_| "navigator.locks.request is not a function".to_string())?;
        let options = js_sys::Object::new();
        js_sys::Reflect::set(&options, &"ifAvailable".into(), &JsValue::TRUE)
            .map_err(|e| describe(&e))?;
        let wait = {
            let (locks, request) = (locks.clone(), request.clone());
            move || {
                // Queue behind the leading tab; granted when it lets go.
                let on_grant = Closure::once_into_js(|_lock: JsValue| -> JsValue {
                    with_host(Host::promoted);
                    never_resolves()
                });
                watch(request.call2(&locks, &LEADER_LOCK.into(), &on_grant));
            }
        };
        let on_answer = Closure::once_into_js(move |lock: JsValue| -> JsValue {
            if lock.is_null() || lock.is_undefined() {
                with_host(|h| h.elected(Role::Follower));
                wait();
                JsValue::UNDEFINED
            } else {
                with_host(|h| h.elected(Role::Leader));
                // Held for the page's lifetime.
                never_resolves()
            }
        });
        watch(request.call3(&locks, &LEADER_LOCK.into(), &options, &on_answer));
        Ok(())
    })();
    if let Err(reason) = result {
        with_host(|h| h.fail(reason));
    }
}

/// Reports a lock request that throws or rejects.
fn watch(call: Result<JsValue, JsValue>) {
    let promise = match call.map(|v| v.dyn_into::<js_sys::Promise>()) {
        Ok(Ok(p)) => p,
        Ok(Err(_)) => return,
        Err(e) => {
            let reason = i18n::now_f(Msg::ElectionFailed, &[&describe(&e)]);
            with_host(|h| h.fail(reason));
            return;
        }
    };
    spawn_local(async move {
        if let Err(e) = JsFuture::from(promise).await {
            let reason = i18n::now_f(Msg::ElectionFailed, &[&describe(&e)]);
            with_host(|h| h.fail(reason));
        }
    });
}

// ---- actions the components call ----

fn mint_turn() -> Option<TurnId> {
    mint(TurnId::from_u128)
}

/// A fresh identity from the browser's random source; never reused.
pub fn mint<T, E>(make: fn(u128) -> Result<T, E>) -> Option<T> {
    let crypto = window().crypto().ok()?;
    for _ in 0..4 {
        let mut bytes = [0u8; 16];
        crypto.get_random_values_with_u8_array(&mut bytes).ok()?;
        if let Ok(id) = make(u128::from_le_bytes(bytes)) {
            return Some(id);
        }
    }
    None
}

/// Sends the Message box as a prompt under a fresh turn identity.
pub fn send_prompt() {
    with_host(|h| {
        let text = h.ui.draft.get_untracked();
        if text.trim().is_empty() {
            return;
        }
        let Some(turn) = mint_turn() else {
            h.ui.refused
                .set(Some(i18n::now(Msg::NotSentNoRandomness).into()));
            return;
        };
        if h.send(PageToController::Prompt {
            turn,
            text: text.clone(),
        }) {
            h.prompts.push((turn, text));
            h.ui.draft.set(String::new());
            h.ui.refused.set(None);
        } else {
            h.ui.refused
                .set(Some(i18n::now(Msg::NotSentNoController).into()));
        }
    });
}

pub fn stop_turn() {
    with_host(|h| h.send(PageToController::Stop));
}

/// Starts a new journal after the old one is gone: a new controller opens
/// the database again (empty if it was wiped, as it was if it is still
/// there). The runtimes belonged to the old journal and are ended; the
/// message box is left alone.
pub fn new_journal() {
    with_host(|h| {
        for slot in h.runtimes.drain(..) {
            slot.worker.set_onmessage(None);
            slot.worker.set_onerror(None);
            slot.worker.terminate();
        }
        h.outbox.clear();
        if let Some(old) = h.controller.take() {
            old.worker.set_onmessage(None);
            old.worker.set_onerror(None);
            old.worker.terminate();
            h.unconfirmed(old.unconfirmed);
            crate::export::controller_gone();
        }
        h.ui.started.set(false);
        h.ui.status.set(None);
        h.ui.refused.set(None);
        h.ui.recovery.set(None);
        h.ui.workspace.set(None);
        h.ui.notices
            .update(|list| list.retain(|n| !n.key.starts_with("controller:")));
        h.spawn_controller(StartCause::HostLoss);
    });
}

/// Asks the controller to set the damaged writer record aside and write.
pub fn repair_journal() {
    with_host(|h| h.send(PageToController::RepairJournal));
}

/// Resumes the session's retained execution. False if not sent.
/// Any page → controller request of the recovery card. False if not sent.
pub fn request(message: PageToController) -> bool {
    with_host(|h| h.send(message)).unwrap_or(false)
}

/// Sends a profile to be stored. The key inside `profile`, if any, goes to
/// the controller and nowhere else. False if not sent.
pub fn save_profile(profile: ProfileInput) -> bool {
    with_host(|h| h.send(PageToController::SaveProfile { profile })).unwrap_or(false)
}

pub fn delete_profile(profile: ProfileId) -> bool {
    with_host(|h| h.send(PageToController::DeleteProfile { profile })).unwrap_or(false)
}

pub fn select_profile(profile: ProfileId) -> bool {
    with_host(|h| h.send(PageToController::SelectProfile { profile })).unwrap_or(false)
}

/// Asks the browser to keep this origin's data (only a window may ask).
pub fn keep_data() {
    let Some(ui) = with_host(|h| h.ui) else {
        return;
    };
    ui.persist.set(Persist::Asking);
    let promise = window().navigator().storage().persist();
    spawn_local(async move {
        let answer = match promise {
            Ok(p) => JsFuture::from(p).await,
            Err(e) => Err(e),
        };
        match answer {
            Ok(value) => {
                let persisted = value.as_bool() == Some(true);
                ui.persist.set(if persisted {
                    Persist::Idle
                } else {
                    Persist::Refused
                });
                with_host(|h| h.send(PageToController::StoragePersisted { persisted }));
            }
            Err(e) => ui.persist.set(Persist::Failed(describe(&e))),
        }
    });
}

pub fn reload() {
    let _ = window().location().reload();
}

/// Registers the service worker that makes the app start offline.
pub fn register_service_worker(offline: RwSignal<Offline>) {
    let container = window().navigator().service_worker();
    let promise = container.register("./sw.js");
    spawn_local(async move {
        if let Err(error) = JsFuture::from(promise).await {
            return offline.set(Offline::Unavailable(describe(&error)));
        }
        match container.ready() {
            Ok(ready) => match JsFuture::from(ready).await {
                Ok(_) => offline.set(Offline::Ready),
                Err(error) => offline.set(Offline::Unavailable(describe(&error))),
            },
            Err(error) => offline.set(Offline::Unavailable(describe(&error))),
        }
    });
}
