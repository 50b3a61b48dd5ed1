//! The controller worker shell.
//!
//! It owns the journal (IndexedDB) and the controller side of the runtime
//! protocol. This shell only carries out IO — opening the database, moving
//! messages between ports — and translates events; recovery semantics belong
//! to `lifeline-core`.

pub mod journal;

use lifeline_protocol::{
    check_version, decode, encode, ControllerToPage, ControllerToRuntime, JournalStatus,
    PageToController, RuntimeIdentity, RuntimeToController, PROTOCOL_VERSION,
};
use std::{cell::RefCell, rc::Rc};
use wasm_bindgen::{prelude::*, JsCast};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, MessagePort};

#[derive(Default)]
struct Controller {
    /// The port to the runtime worker, relayed by the page. Replaced wholesale
    /// when the page relays a new one; the old one is closed first so a late
    /// message on it cannot be mistaken for the new runtime's.
    runtime_port: Option<MessagePort>,
    runtime: Option<RuntimeIdentity>,
    _database: Option<idb::Database>,
}

type Shared = Rc<RefCell<Controller>>;

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post_to_page(message: &ControllerToPage) {
    // A failed postMessage to our own page means the page is gone; there is
    // nobody left to tell.
    let _ = scope().post_message(&JsValue::from_str(&encode(message)));
}

fn text_of(event: &MessageEvent) -> Result<String, String> {
    event
        .data()
        .as_string()
        .ok_or_else(|| "message rejected: expected a JSON string".to_owned())
}

/// Entry point, called by `controller.js` once the module is instantiated.
#[wasm_bindgen]
pub fn run_controller() {
    let shared: Shared = Rc::default();
    let on_page = {
        let shared = shared.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            handle_page_message(&shared, &event);
        })
    };
    scope().set_onmessage(Some(on_page.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_page.forget();

    wasm_bindgen_futures::spawn_local(async move {
        let journal = match journal::open(journal::DATABASE_NAME).await {
            Ok(database) => {
                shared.borrow_mut()._database = Some(database);
                JournalStatus::Open {
                    schema_version: journal::SCHEMA_VERSION,
                }
            }
            Err(error) => JournalStatus::Unavailable {
                reason: error.to_string(),
            },
        };
        post_to_page(&ControllerToPage::Ready {
            protocol: PROTOCOL_VERSION,
            journal,
        });
    });
}

fn handle_page_message(shared: &Shared, event: &MessageEvent) {
    let message = text_of(event)
        .and_then(|text| decode::<PageToController>(&text).map_err(|error| error.to_string()));
    match message {
        Ok(PageToController::AttachRuntime { protocol }) => {
            if let Err(error) = check_version(protocol) {
                post_to_page(&ControllerToPage::Error {
                    message: error.to_string(),
                });
                return;
            }
            let Some(port) = event.ports().get(0).dyn_into::<MessagePort>().ok() else {
                post_to_page(&ControllerToPage::Error {
                    message: "attach_runtime arrived without a port; the runtime cannot dial in"
                        .to_owned(),
                });
                return;
            };
            attach_runtime(shared, port);
        }
        Ok(PageToController::Probe { probe }) => {
            let state = shared.borrow();
            match &state.runtime_port {
                Some(port) => {
                    let text = encode(&ControllerToRuntime::Probe { probe });
                    if let Err(error) = port.post_message(&JsValue::from_str(&text)) {
                        post_to_page(&ControllerToPage::ProbeFailed {
                            probe,
                            reason: format!("the runtime port refused the message: {error:?}"),
                        });
                    }
                }
                None => post_to_page(&ControllerToPage::ProbeFailed {
                    probe,
                    reason: "no runtime has dialled in yet".to_owned(),
                }),
            }
        }
        Err(message) => post_to_page(&ControllerToPage::Error { message }),
    }
}

fn attach_runtime(shared: &Shared, port: MessagePort) {
    let on_runtime = {
        let shared = shared.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            handle_runtime_message(&shared, &event);
        })
    };
    port.set_onmessage(Some(on_runtime.as_ref().unchecked_ref()));
    on_runtime.forget();
    let mut state = shared.borrow_mut();
    if let Some(old) = state.runtime_port.replace(port) {
        old.close();
    }
    state.runtime = None;
}

fn handle_runtime_message(shared: &Shared, event: &MessageEvent) {
    let message = text_of(event)
        .and_then(|text| decode::<RuntimeToController>(&text).map_err(|error| error.to_string()));
    match message {
        Ok(RuntimeToController::Hello { protocol, runtime }) => match check_version(protocol) {
            Ok(()) => shared.borrow_mut().runtime = Some(runtime),
            Err(error) => post_to_page(&ControllerToPage::Error {
                message: format!("runtime refused: {error}"),
            }),
        },
        Ok(RuntimeToController::ProbeAnswered { probe, runtime }) => {
            // Only the runtime that said hello on this port may answer for it.
            let known = shared.borrow().runtime.clone();
            if known.as_ref() == Some(&runtime) {
                post_to_page(&ControllerToPage::ProbeAnswered { probe, runtime });
            } else {
                post_to_page(&ControllerToPage::ProbeFailed {
                    probe,
                    reason: "a runtime answered without dialling in first".to_owned(),
                });
            }
        }
        Ok(RuntimeToController::Error { message }) => post_to_page(&ControllerToPage::Error {
            message: format!("runtime: {message}"),
        }),
        Err(message) => post_to_page(&ControllerToPage::Error {
            message: format!("from the runtime: {message}"),
        }),
    }
}
