//! The first-visit baseline's worker: opens an IndexedDB database, says
//! "ready", and answers every message with "completed". The least a worker
//! that keeps a journal must do before the page may say "Connected".

use wasm_bindgen::prelude::*;
use web_sys::{DedicatedWorkerGlobalScope, IdbOpenDbRequest, MessageEvent};

#[wasm_bindgen]
pub fn run_minimal_worker() -> Result<(), JsValue> {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(|_event: MessageEvent| {
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let _ = scope.post_message(&JsValue::from_str("completed"));
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let factory = scope
        .indexed_db()?
        .ok_or_else(|| JsValue::from_str("no IndexedDB in this worker"))?;
    let request: IdbOpenDbRequest = factory.open_with_u32("lifeline-bench-minimal", 1)?;
    let on_open = Closure::<dyn Fn()>::new(|| {
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let _ = scope.post_message(&JsValue::from_str("ready"));
    });
    request.set_onsuccess(Some(on_open.as_ref().unchecked_ref()));
    on_open.forget();
    Ok(())
}
