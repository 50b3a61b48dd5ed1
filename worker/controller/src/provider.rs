//! The provider worker, as the controller keeps it: started when the
//! engine first asks for a provider request (`Effect::Fetch`), kept for the
//! requests after, and given up when it ends.
//!
//! The worker holds a Web Lock named for it (its `name`) for its whole life,
//! so its end is known however it comes: a crash, the browser ending it, a
//! close. Each request still out then ends, as `failure::worker_ended`
//! says from whether the worker had been handed it: one posted may have
//! reached the provider (uncertain, never resent), one still waiting for
//! the worker to listen was never sent.
//!
//! Every callback names the worker it came from (its generation): one from
//! a worker already given up is ignored.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use lifeline_core::flat::FlatSet;
use lifeline_core::profile::{Provider, Secret, Tool};
use lifeline_core::{ModelMessage, ProviderRequestId};
use lifeline_engine::failure::{fetch_failed, too_large_to_send, worker_ended};
use lifeline_engine::ProviderFailure;
use lifeline_protocol::provider::{ControllerToProvider, ProviderToController};
use lifeline_protocol::{check_version, encode, SecretText, MAX_MESSAGE_BYTES};
use wasm_bindgen::{prelude::*, JsCast};
use wasm_bindgen_futures::spawn_local;
use web_sys::{Event, MessageEvent, Worker, WorkerOptions, WorkerType};

use crate::shell::Shell;
use crate::web::{log, random_bytes};

thread_local! {
    /// The provider worker, once a session has asked a model.
    static WORKER: RefCell<Option<ProviderWorker>> = const { RefCell::new(None) };
    /// The last provider worker's generation.
    static GENERATION: Cell<u32> = const { Cell::new(0) };
}

/// A provider worker this controller started.
struct ProviderWorker {
    worker: Worker,
    generation: u32,
    /// The Web Lock it holds for its life.
    lock: String,
    /// It said `Ready`: it listens.
    ready: bool,
    /// Requests posted to it that have not ended.
    posted: Vec<ProviderRequestId>,
    /// Requests waiting for it to listen, in order, with their message.
    waiting: Vec<(ProviderRequestId, String)>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(Event)>,
}

fn with<T>(f: impl FnOnce(&mut ProviderWorker) -> T) -> Option<T> {
    WORKER.with(|w| w.borrow_mut().as_mut().map(f))
}

/// The engine hears how `request` ended.
fn end(shell: &Rc<Shell>, request: ProviderRequestId, failure: ProviderFailure) {
    shell.input(|e, now| e.handle_provider_outcome(request, Err(failure), now));
}

/// The worker could not take a request: nothing was sent.
fn unsent(shell: &Rc<Shell>, request: ProviderRequestId, detail: &str) {
    let failure = fetch_failed("", &format!("the provider worker {detail}"), None);
    end(shell, request, failure);
}

/// Hands one recorded request to the provider worker, starting it if there
/// is none.
pub fn fetch(
    shell: &Rc<Shell>,
    request: ProviderRequestId,
    provider: Provider,
    api_key: Option<Secret>,
    conversation: Vec<ModelMessage>,
    tools: FlatSet<Tool>,
) {
    let message = encode(&ControllerToProvider::Fetch {
        request,
        provider,
        api_key: api_key.map(|k| SecretText(k.expose().to_owned())),
        conversation,
        tools,
    });
    // The worker would refuse it unread, so nothing could say which
    // request it was: refused here, by its id.
    if message.len() > MAX_MESSAGE_BYTES {
        return end(shell, request, too_large_to_send(message.len()));
    }
    if WORKER.with(|w| w.borrow().is_none()) {
        if let Err(detail) = start(shell) {
            return unsent(shell, request, &format!("could not be started: {detail}"));
        }
    }
    let posted = with(|p| {
        if !p.ready {
            p.waiting.push((request, message));
            return Ok(());
        }
        p.worker
            .post_message(&JsValue::from_str(&message))
            .map(|()| p.posted.push(request))
            .map_err(|e| lifeline_store::exception_name(&e))
    });
    match posted {
        Some(Ok(())) => {}
        Some(Err(detail)) => unsent(
            shell,
            request,
            &format!("could not be handed the request: {detail}"),
        ),
        None => unsent(shell, request, "is gone"),
    }
}

/// Stop: a request still waiting for the worker ends here, unsent; one
/// posted is aborted by the worker, which then reports how it ended.
pub fn abort(shell: &Rc<Shell>, request: ProviderRequestId) {
    let waited = with(|p| {
        if p.posted.contains(&request) {
            let abort = encode(&ControllerToProvider::Abort { request });
            let _ = p.worker.post_message(&JsValue::from_str(&abort));
            return false;
        }
        let before = p.waiting.len();
        p.waiting.retain(|(r, _)| *r != request);
        p.waiting.len() != before
    });
    if waited == Some(true) {
        // What `fetch` says of an abort before any response: stopped.
        end(shell, request, fetch_failed("AbortError", "", None));
    }
}

fn start(shell: &Rc<Shell>) -> Result<(), String> {
    let suffix: String = random_bytes::<8>()?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let lock = format!("lifeline-provider-{suffix}");
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    options.set_name(&lock);
    let worker = Worker::new_with_options("./provider.js", &options)
        .map_err(|e| lifeline_store::exception_name(&e))?;
    let generation = GENERATION.with(|g| {
        g.set(g.get().wrapping_add(1));
        g.get()
    });
    let weak = Rc::downgrade(shell);
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        if let Some(shell) = weak.upgrade() {
            said(&shell, generation, event.data().as_string());
        }
    });
    let weak = Rc::downgrade(shell);
    let on_error = Closure::<dyn FnMut(Event)>::new(move |event: Event| {
        event.prevent_default();
        if let Some(shell) = weak.upgrade() {
            ended(&shell, generation, "an error event");
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    WORKER.with(|w| {
        *w.borrow_mut() = Some(ProviderWorker {
            worker,
            generation,
            lock,
            ready: false,
            posted: Vec::new(),
            waiting: Vec::new(),
            _on_message: on_message,
            _on_error: on_error,
        })
    });
    Ok(())
}

fn is_current(generation: u32) -> bool {
    with(|p| p.generation == generation).unwrap_or(false)
}

fn said(shell: &Rc<Shell>, generation: u32, text: Option<String>) {
    if !is_current(generation) {
        return;
    }
    // Our own worker's message that does not decode is a bug, for a
    // developer's console; the engine's timeouts end its request.
    let message = match text.map(|t| lifeline_codec::decode_message::<ProviderToController>(&t)) {
        Some(Ok(m)) => m,
        Some(Err(e)) => return log(&format!("the provider worker's message was refused: {e}")),
        None => return log("the provider worker sent a message that is not a JSON string"),
    };
    match message {
        ProviderToController::Ready { protocol, watched } => match check_version(protocol) {
            Ok(()) => ready(shell, generation, watched),
            Err(e) => ended(shell, generation, &format!("it {e}")),
        },
        ProviderToController::Bytes { request } => {
            shell.input(|e, now| e.handle_provider_bytes(request, now))
        }
        ProviderToController::Text { request, delta } => {
            shell.input(|e, _| e.handle_provider_text(request, &delta))
        }
        ProviderToController::Loading {
            request,
            read,
            total,
        } => shell.input(|e, now| e.handle_model_loading(request, read, total, now)),
        ProviderToController::Loaded { request } => {
            shell.input(|e, now| e.handle_model_loaded(request, now))
        }
        ProviderToController::Ended { request, result } => {
            with(|p| p.posted.retain(|r| *r != request));
            shell.input(|e, now| e.handle_provider_outcome(request, result, now))
        }
    }
}

/// The worker listens: what waited for it goes out, in order, and its end
/// is watched through its life lock.
fn ready(shell: &Rc<Shell>, generation: u32, watched: bool) {
    let Some((lock, refused)) = with(|p| {
        let mut refused = Vec::new();
        if !p.ready {
            p.ready = true;
            for (request, message) in std::mem::take(&mut p.waiting) {
                match p.worker.post_message(&JsValue::from_str(&message)) {
                    Ok(()) => p.posted.push(request),
                    Err(e) => refused.push((request, lifeline_store::exception_name(&e))),
                }
            }
        }
        (p.lock.clone(), refused)
    }) else {
        return;
    };
    for (request, detail) in refused {
        unsent(
            shell,
            request,
            &format!("could not be handed the request: {detail}"),
        );
    }
    // Without its lock only an error event tells of its end; a silent end
    // leaves its requests to the engine's timeouts.
    if !watched {
        return;
    }
    let weak = Rc::downgrade(shell);
    spawn_local(async move {
        if lifeline_locks::wait_for_release(&lock).await.is_ok() {
            if let Some(shell) = weak.upgrade() {
                ended(&shell, generation, "its life lock was released");
            }
        }
    });
}

/// The worker is gone: its requests end (see the module's comment) and the
/// next request starts a new one.
fn ended(shell: &Rc<Shell>, generation: u32, how: &str) {
    if !is_current(generation) {
        return;
    }
    let Some(p) = WORKER.with(|w| w.borrow_mut().take()) else {
        return;
    };
    p.worker.set_onmessage(None);
    p.worker.set_onerror(None);
    p.worker.terminate();
    // How it ended is for a developer; what it means is the engine's.
    log(&format!("the provider worker stopped: {how}"));
    let posted = p.posted.iter().map(|r| (*r, true));
    let waiting = p.waiting.iter().map(|(r, _)| (*r, false));
    for (request, handed_over) in posted.chain(waiting) {
        end(shell, request, worker_ended(handed_over));
    }
}
