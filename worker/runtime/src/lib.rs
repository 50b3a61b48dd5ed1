//! The runtime worker shell: has a runtime identity and a generation, dials
//! the controller through the port the page hands it, and answers on it.

use lifeline_protocol::{
    check_version, decode, encode, runtime_id_from_bytes, ControllerToRuntime, PageToRuntime,
    RuntimeIdentity, RuntimeToController, RuntimeToPage, PROTOCOL_VERSION,
};
use std::{cell::RefCell, rc::Rc};
use wasm_bindgen::{prelude::*, JsCast};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, MessagePort};

struct Runtime {
    id: String,
    identity: Option<RuntimeIdentity>,
    port: Option<MessagePort>,
}

type Shared = Rc<RefCell<Runtime>>;

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post_to_page(message: &RuntimeToPage) {
    let _ = scope().post_message(&JsValue::from_str(&encode(message)));
}

fn send(port: &MessagePort, message: &RuntimeToController) {
    // A closed port means the controller died; the page will relay a new
    // port and we dial again, so there is nothing to do here.
    let _ = port.post_message(&JsValue::from_str(&encode(message)));
}

fn random_id() -> Result<String, JsValue> {
    let mut bytes = [0u8; 16];
    scope()
        .crypto()?
        .get_random_values_with_u8_array(&mut bytes)?;
    Ok(runtime_id_from_bytes(bytes))
}

/// Entry point, called by `runtime.js` once the module is instantiated.
#[wasm_bindgen]
pub fn run_runtime() -> Result<(), JsValue> {
    let shared: Shared = Rc::new(RefCell::new(Runtime {
        id: random_id()?,
        identity: None,
        port: None,
    }));
    let on_page = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        handle_page_message(&shared, &event);
    });
    scope().set_onmessage(Some(on_page.as_ref().unchecked_ref()));
    on_page.forget();
    post_to_page(&RuntimeToPage::Ready {
        protocol: PROTOCOL_VERSION,
    });
    Ok(())
}

fn handle_page_message(shared: &Shared, event: &MessageEvent) {
    let message = match event.data().as_string() {
        Some(text) => decode::<PageToRuntime>(&text).map_err(|error| error.to_string()),
        None => Err("message rejected: expected a JSON string".to_owned()),
    };
    let (protocol, generation) = match message {
        Ok(PageToRuntime::Dial {
            protocol,
            generation,
        }) => (protocol, generation),
        Err(message) => return post_to_page(&RuntimeToPage::Error { message }),
    };
    if let Err(error) = check_version(protocol) {
        return post_to_page(&RuntimeToPage::Error {
            message: error.to_string(),
        });
    }
    let Some(port) = event.ports().get(0).dyn_into::<MessagePort>().ok() else {
        return post_to_page(&RuntimeToPage::Error {
            message: "dial arrived without a port to the controller".to_owned(),
        });
    };
    let identity = {
        let mut state = shared.borrow_mut();
        // The generation is fixed for the life of this worker: a page that
        // asks an existing runtime to be another generation is confused.
        let existing = state.identity.as_ref().map(|identity| identity.generation);
        if let Some(existing) = existing.filter(|existing| *existing != generation) {
            drop(state);
            return post_to_page(&RuntimeToPage::Error {
                message: format!(
                    "this runtime is generation {existing}, not {generation}; start a new runtime instead"
                ),
            });
        }
        let identity = RuntimeIdentity {
            id: state.id.clone(),
            generation,
        };
        state.identity = Some(identity.clone());
        if let Some(old) = state.port.replace(port.clone()) {
            old.close();
        }
        identity
    };
    let on_controller = {
        let shared = shared.clone();
        let port = port.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            handle_controller_message(&shared, &port, &event);
        })
    };
    port.set_onmessage(Some(on_controller.as_ref().unchecked_ref()));
    on_controller.forget();
    send(
        &port,
        &RuntimeToController::Hello {
            protocol: PROTOCOL_VERSION,
            runtime: identity,
        },
    );
}

fn handle_controller_message(shared: &Shared, port: &MessagePort, event: &MessageEvent) {
    let message = match event.data().as_string() {
        Some(text) => decode::<ControllerToRuntime>(&text).map_err(|error| error.to_string()),
        None => Err("message rejected: expected a JSON string".to_owned()),
    };
    match message {
        Ok(ControllerToRuntime::Probe { probe }) => {
            let Some(runtime) = shared.borrow().identity.clone() else {
                return;
            };
            send(port, &RuntimeToController::ProbeAnswered { probe, runtime });
        }
        Err(message) => send(port, &RuntimeToController::Error { message }),
    }
}
