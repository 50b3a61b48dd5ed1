//! IO between the page and its workers: spawns the controller and the runtime,
//! relays a `MessageChannel` between them (the reverse dial), and reports the
//! connection as it is proven by a real round trip.

use leptos::prelude::*;
use lifeline_protocol::{
    decode, encode, ControllerToPage, JournalStatus, PageToController, PageToRuntime,
    RuntimeIdentity, RuntimeToPage, PROTOCOL_VERSION,
};
use std::{cell::RefCell, rc::Rc};
use wasm_bindgen::{prelude::*, JsCast};
use web_sys::{ErrorEvent, MessageChannel, MessageEvent, Worker, WorkerOptions, WorkerType};

/// How long the first round trip may take before the UI says so. Worker start
/// includes fetching and compiling wasm, hence generous.
const PROBE_TIMEOUT_MS: i32 = 10_000;

#[derive(Clone, Debug, PartialEq)]
pub enum Connection {
    Connecting,
    Connected {
        runtime: RuntimeIdentity,
        journal: JournalStatus,
    },
    Failed(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Offline {
    Pending,
    Ready,
    Unavailable(String),
}

#[derive(Default)]
struct Boot {
    controller_ready: Option<JournalStatus>,
    runtime_ready: bool,
    relayed: bool,
    answered: bool,
}

struct Workers {
    controller: Worker,
    runtime: Worker,
    boot: RefCell<Boot>,
    connection: RwSignal<Connection>,
}

fn spawn(url: &str) -> Result<Worker, JsValue> {
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    Worker::new_with_options(url, &options)
}

fn fail(connection: RwSignal<Connection>, reason: String) {
    connection.set(Connection::Failed(reason));
}

/// Starts both workers and the first round trip; `connection` follows it.
pub fn start(connection: RwSignal<Connection>) {
    let (controller, runtime) = match (spawn("./controller.js"), spawn("./runtime.js")) {
        (Ok(controller), Ok(runtime)) => (controller, runtime),
        (Err(error), _) | (_, Err(error)) => {
            return fail(connection, format!("could not start a worker: {error:?}"));
        }
    };
    let workers = Rc::new(Workers {
        controller,
        runtime,
        boot: RefCell::default(),
        connection,
    });
    listen(
        &workers.controller,
        &workers,
        "controller",
        on_controller_message,
    );
    listen(&workers.runtime, &workers, "runtime", on_runtime_message);

    let timeout = {
        let workers = workers.clone();
        Closure::once_into_js(move || {
            if !workers.boot.borrow().answered
                && matches!(workers.connection.get_untracked(), Connection::Connecting)
            {
                fail(
                    workers.connection,
                    format!(
                        "no answer from the runtime within {} s",
                        PROBE_TIMEOUT_MS / 1000
                    ),
                );
            }
        })
    };
    let _ = window().set_timeout_with_callback_and_timeout_and_arguments_0(
        timeout.unchecked_ref(),
        PROBE_TIMEOUT_MS,
    );
}

fn listen(
    worker: &Worker,
    workers: &Rc<Workers>,
    name: &'static str,
    handler: fn(&Rc<Workers>, &str),
) {
    let on_message = {
        let workers = workers.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            match event.data().as_string() {
                Some(text) => handler(&workers, &text),
                None => fail(
                    workers.connection,
                    format!("the {name} worker sent something that is not a message"),
                ),
            }
        })
    };
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let on_error = {
        let connection = workers.connection;
        Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
            fail(
                connection,
                format!("the {name} worker stopped: {}", event.message()),
            );
        })
    };
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
}

fn on_controller_message(workers: &Rc<Workers>, text: &str) {
    match decode::<ControllerToPage>(text) {
        Ok(ControllerToPage::Ready { protocol, journal }) => {
            if protocol != PROTOCOL_VERSION {
                return fail(
                    workers.connection,
                    "the controller comes from another build; reload the page".to_owned(),
                );
            }
            workers.boot.borrow_mut().controller_ready = Some(journal);
            relay_when_both_ready(workers);
        }
        Ok(ControllerToPage::ProbeAnswered { runtime, .. }) => {
            let journal = workers.boot.borrow().controller_ready.clone();
            workers.boot.borrow_mut().answered = true;
            workers.connection.set(Connection::Connected {
                runtime,
                journal: journal.unwrap_or(JournalStatus::Unavailable {
                    reason: "unknown".to_owned(),
                }),
            });
        }
        Ok(ControllerToPage::ProbeFailed { reason, .. }) => fail(workers.connection, reason),
        Ok(ControllerToPage::Error { message }) => fail(workers.connection, message),
        Err(error) => fail(workers.connection, format!("from the controller: {error}")),
    }
}

fn on_runtime_message(workers: &Rc<Workers>, text: &str) {
    match decode::<RuntimeToPage>(text) {
        Ok(RuntimeToPage::Ready { .. }) => {
            workers.boot.borrow_mut().runtime_ready = true;
            relay_when_both_ready(workers);
        }
        Ok(RuntimeToPage::Error { message }) => {
            fail(workers.connection, format!("runtime: {message}"))
        }
        Err(error) => fail(workers.connection, format!("from the runtime: {error}")),
    }
}

/// Relays a fresh channel between the two workers and sends the first probe.
/// Port messages queue until the receiver listens, so the order of the two
/// hand-overs does not matter.
fn relay_when_both_ready(workers: &Rc<Workers>) {
    {
        let mut boot = workers.boot.borrow_mut();
        if boot.relayed || boot.controller_ready.is_none() || !boot.runtime_ready {
            return;
        }
        boot.relayed = true;
    }
    let result = (|| -> Result<(), JsValue> {
        let channel = MessageChannel::new()?;
        let attach = encode(&PageToController::AttachRuntime {
            protocol: PROTOCOL_VERSION,
        });
        workers.controller.post_message_with_transfer(
            &JsValue::from_str(&attach),
            &js_sys::Array::of1(&channel.port1()),
        )?;
        let dial = encode(&PageToRuntime::Dial {
            protocol: PROTOCOL_VERSION,
            generation: 1,
        });
        workers.runtime.post_message_with_transfer(
            &JsValue::from_str(&dial),
            &js_sys::Array::of1(&channel.port2()),
        )?;
        let probe = encode(&PageToController::Probe { probe: 1 });
        workers.controller.post_message(&JsValue::from_str(&probe))
    })();
    if let Err(error) = result {
        fail(
            workers.connection,
            format!("could not connect the workers: {error:?}"),
        );
    }
}

/// Registers the service worker that makes the app start offline.
pub fn register_service_worker(offline: RwSignal<Offline>) {
    let container = window().navigator().service_worker();
    let promise = container.register("./sw.js");
    wasm_bindgen_futures::spawn_local(async move {
        let registered = wasm_bindgen_futures::JsFuture::from(promise).await;
        if let Err(error) = registered {
            let reason = error
                .dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
                .unwrap_or_else(|| format!("{error:?}"));
            return offline.set(Offline::Unavailable(reason));
        }
        match container.ready() {
            Ok(ready) => match wasm_bindgen_futures::JsFuture::from(ready).await {
                Ok(_) => offline.set(Offline::Ready),
                Err(error) => offline.set(Offline::Unavailable(format!("{error:?}"))),
            },
            Err(error) => offline.set(Offline::Unavailable(format!("{error:?}"))),
        }
    });
}
