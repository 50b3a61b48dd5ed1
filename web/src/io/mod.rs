//! All IO of the page, in one place: the components call the actions
//! here and read the signals of [`crate::ui`]; nothing here renders.
//!
//! | module | what it holds |
//! |---|---|
//! | this one | the page's bookkeeping (a thread-local `Host`), notices of the page's own, the actions the components call |
//! | `supervisor` | the controller worker: spawning, its messages, posting to it, noticing its death and replacing it, requests it may not have received |
//! | `election` | the leader election over the Web Lock `lifeline-leader` |
//! | `runtimes` | the runtime workers and the channels relayed between them and the controller (the reverse dial) |
//! | [`folders`] | the folder picker and access to local folders |
//! | `download` | saving an exported archive |
//! | `storage` | asking the browser to keep this origin's data |
//! | `sw` | the service worker that makes the app start offline |
//! | `layout` | which of style.css's layouts applies (each pane beside the chat, or in a drawer) |
//!
//! Everything a worker sends is untrusted: it is decoded with
//! `lifeline_codec::decode_message`, and a malformed message becomes an error
//! notice, never a panic. State the components read lives in
//! [`Ui`](crate::ui::Ui) signals; the page's own bookkeeping lives in the
//! thread-local `Host`.

mod download;
mod election;
pub mod folders;
mod layout;
mod runtimes;
mod storage;
mod supervisor;
mod sw;

pub use layout::{is_beside, on_beside, Pane};
pub use storage::keep_data;
pub use sw::register_service_worker;

use crate::i18n::{self, Msg};
use crate::ui::{NoticeItem, Ui};
use leptos::prelude::*;
use lifeline_core::{ProfileId, StartCause, TurnId};
use lifeline_protocol::{Level, PageToController, ProfileInput, Role};
use runtimes::RuntimeSlot;
use std::cell::RefCell;
use std::collections::VecDeque;
use supervisor::ControllerSlot;
use wasm_bindgen::{prelude::*, JsCast};
use web_sys::{ErrorEvent, Event, Worker, WorkerOptions, WorkerType};

const TICK_MS: i32 = 1_000;

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

/// The workers boot.js starts before the page's own wasm, so that their
/// modules download and compile while the page's does: the globals it
/// leaves them in.
const EARLY_CONTROLLER: &str = "lifelineEarlyController";
const EARLY_RUNTIME: &str = "lifelineEarlyRuntime";

/// A worker boot.js started and the events it sent before the page took
/// it over; taken once (later workers are the page's own).
fn adopt_early(key: &str) -> Option<(Worker, js_sys::Array)> {
    let global = js_sys::global();
    let key = JsValue::from_str(key);
    let early = js_sys::Reflect::get(&global, &key).ok()?;
    let _ = js_sys::Reflect::delete_property(global.unchecked_ref::<js_sys::Object>(), &key);
    let field = |name: &str| js_sys::Reflect::get(&early, &JsValue::from_str(name)).ok();
    let worker = field("worker")?.dyn_into::<Worker>().ok()?;
    let said = field("said")?.dyn_into::<js_sys::Array>().ok()?;
    Some((worker, said))
}

/// Hands what an early worker said before the page listened to the page's
/// own handlers, in order, once the host is free again (the caller runs
/// inside `with_host`): a microtask, so before any later event's task.
fn replay(said: js_sys::Array, on_message: &JsValue, on_error: &JsValue) {
    if said.length() == 0 {
        return;
    }
    let message: js_sys::Function = on_message.clone().unchecked_into();
    let error: js_sys::Function = on_error.clone().unchecked_into();
    wasm_bindgen_futures::spawn_local(async move {
        for event in said.iter() {
            let handler = if event.is_instance_of::<web_sys::MessageEvent>() {
                &message
            } else {
                &error
            };
            let _ = handler.call1(&JsValue::NULL, &event);
        }
    });
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

/// Hands a file picked for a local model to the controller, which copies
/// it into the private file system and answers with its header facts
/// (`ControllerToPage::LocalModel`). False if no controller is there.
pub fn send_model_file(file: &web_sys::File) -> bool {
    let message = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&message, &"importModel".into(), file);
    with_host(|h| {
        h.controller
            .as_ref()
            .is_some_and(|c| c.worker.post_message(&message).is_ok())
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
    election::elect();
    let tick = Closure::<dyn FnMut()>::new(|| {
        with_host(Host::tick);
    });
    let _ = window().set_interval_with_callback_and_timeout_and_arguments_0(
        tick.as_ref().unchecked_ref(),
        TICK_MS,
    );
    // The watchdog lives as long as the page.
    tick.forget();
    // The controller words the phrases: a change of language reaches it
    // here, a new controller hears it in its Start.
    leptos::prelude::Effect::new(move |previous: Option<i18n::Locale>| {
        let locale = i18n::locale();
        if previous.is_some_and(|p| p != locale) {
            with_host(|h| {
                h.send(PageToController::Language {
                    locale: locale.tag().to_owned(),
                })
            });
        }
        locale
    });
}

impl Host {
    fn fail(&mut self, reason: String) {
        if self.ui.failure.get_untracked().is_none() {
            self.ui.failure.set(Some(reason));
        }
    }

    fn notice(&self, key: &str, level: Level, message: String) {
        let text = (!message.is_empty()).then_some(message);
        self.set_notice(key, level, text);
    }

    /// Sets (or with `None` clears) the notice under `key`.
    fn set_notice(&self, key: &str, level: Level, message: Option<String>) {
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

/// Takes back a message still waiting for the running turn: it is not
/// sent again after a controller restart either.
pub fn withdraw_prompt(turn: TurnId) {
    with_host(|h| {
        h.prompts.retain(|(t, _)| *t != turn);
        h.send(PageToController::WithdrawPrompt { turn })
    });
}

pub fn stop_turn() {
    with_host(|h| h.send(PageToController::Stop));
}

pub fn retry_now() {
    with_host(|h| h.send(PageToController::RetryNow));
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
            download::controller_gone();
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

pub fn reload() {
    let _ = window().location().reload();
}
