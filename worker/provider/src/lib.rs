//! The provider worker: calls the model a session uses, a remote provider
//! over `fetch` ([`remote`]) or a local GGUF model through llama.cpp
//! ([`local`]), for the controller, which starts this worker when a session
//! first asks a model and keeps it for the requests after.
//!
//! Nothing here decides what a request means: the engine journals each
//! request before it is posted here and never resends one whose outcome is
//! uncertain; `lifeline_engine::failure` classifies what was observed. This
//! worker moves bytes and reports, in order, every arrival of response
//! bytes, each text delta, a local model's load, and how the request ended
//! (`lifeline_protocol::provider`).
//!
//! | module | what it holds |
//! |---|---|
//! | [`remote`] | one request to an HTTP provider, streamed |
//! | [`local`] | one request to a local model, streamed |

// Talc instead of the default dlmalloc: the same single-threaded heap in
// fewer bytes of wasm.
#[cfg(target_family = "wasm")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

pub mod local;
pub mod remote;

use std::cell::RefCell;

use lifeline_core::flat::FlatSet;
use lifeline_core::profile::{Provider, Secret, Tool};
use lifeline_core::{ModelMessage, ProviderRequestId};
use lifeline_engine::Slots;
use lifeline_protocol::provider::{ControllerToProvider, ProviderToController};
use lifeline_protocol::{encode, SecretText, PROTOCOL_VERSION};
use wasm_bindgen::{prelude::*, JsCast};
use wasm_bindgen_futures::spawn_local;
use web_sys::{AbortController, DedicatedWorkerGlobalScope, MessageEvent};

thread_local! {
    /// The requests still out, by the id the engine gave them: Stop aborts
    /// through these.
    static OUT: RefCell<Slots<ProviderRequestId, AbortController>> = RefCell::new(Slots::new());
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(message: &ProviderToController) {
    // Posting a string to the worker's own parent cannot fail in a way this
    // worker could report anywhere else; the controller's timeouts end a
    // request it never hears of.
    let _ = scope().post_message(&JsValue::from_str(&encode(message)));
}

/// A line in the console for a developer: what this worker refused and why.
fn log(line: &str) {
    web_sys::console::warn_1(&JsValue::from_str(line));
}

#[wasm_bindgen]
pub fn run_provider() {
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(|event: MessageEvent| {
        let Some(text) = event.data().as_string() else {
            return log("provider worker: a message that is not a JSON string was ignored");
        };
        match lifeline_codec::decode_message::<ControllerToProvider>(&text) {
            Ok(ControllerToProvider::Fetch {
                request,
                provider,
                api_key,
                conversation,
                tools,
            }) => fetch(request, provider, api_key, conversation, tools),
            Ok(ControllerToProvider::Abort { request }) => {
                if let Some(abort) = OUT.with(|out| out.borrow().get(&request).cloned()) {
                    abort.abort();
                }
            }
            // The controller's timeouts end whatever request this was. The
            // decoder's words are not logged: they may quote a field, and a
            // `Fetch` carries the key.
            Err(_) => log("provider worker: a message from the controller did not decode"),
        }
    });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    spawn_local(async {
        // Held before `Ready`, so the controller that waits for it after
        // `Ready` waits for this worker's end.
        let watched = lifeline_locks::hold_for_life(&scope().name()).await.is_ok();
        post(&ProviderToController::Ready {
            protocol: PROTOCOL_VERSION,
            watched,
        });
    });
}

fn fetch(
    request: ProviderRequestId,
    provider: Provider,
    api_key: Option<SecretText>,
    conversation: Vec<ModelMessage>,
    tools: FlatSet<Tool>,
) {
    // The same id twice would be a second send of a recorded request: the
    // engine never asks for it, and this worker does not carry it out.
    if OUT.with(|out| out.borrow().contains(&request)) {
        return log("provider worker: a request already out was asked for again");
    }
    let Ok(abort) = AbortController::new() else {
        return post(&ProviderToController::Ended {
            request,
            result: Err(remote::no_abort()),
        });
    };
    OUT.with(|out| out.borrow_mut().insert(request, abort.clone()));
    spawn_local(async move {
        let api_key = api_key.map(|k| Secret::new(k.0));
        let result = remote::send(
            &provider,
            api_key.as_ref(),
            &conversation,
            &tools,
            &abort,
            || post(&ProviderToController::Bytes { request }),
            |delta| {
                post(&ProviderToController::Text {
                    request,
                    delta: delta.to_owned(),
                })
            },
            |load| {
                post(&match load {
                    local::Load::Progress { read, total } => ProviderToController::Loading {
                        request,
                        read,
                        total,
                    },
                    local::Load::Loaded => ProviderToController::Loaded { request },
                })
            },
        )
        .await;
        OUT.with(|out| out.borrow_mut().remove(&request));
        post(&ProviderToController::Ended { request, result });
    });
}
