//! The first-visit baseline's page: the least a Leptos CSR page that talks
//! to a worker can be. It mounts, starts a module worker, shows
//! "Connected" when the worker says it is ready (the worker has opened
//! IndexedDB, as the app's controller has before it answers), and shows
//! "completed" when the worker answers a sent message. The first-visit
//! bench (e2e/bench/run.mjs) times the app and this page the same way, in
//! the same browser run, so the ratio is the app's own cost.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

#[wasm_bindgen(start)]
pub fn main() {
    leptos::mount::mount_to_body(App);
}

#[component]
fn App() -> impl IntoView {
    let connected = RwSignal::new(false);
    let completed = RwSignal::new(false);
    let message = RwSignal::new(String::new());
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    let worker = Worker::new_with_options("./minimal-worker.js", &options).ok();
    if let Some(worker) = &worker {
        let on_message =
            Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
                match event.data().as_string().as_deref() {
                    Some("ready") => connected.set(true),
                    Some("completed") => completed.set(true),
                    _ => {}
                }
            });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        // The page lives as long as the worker: the handler is never dropped.
        on_message.forget();
    }
    let send = move |_| {
        if let Some(worker) = &worker {
            let _ = worker.post_message(&JsValue::from_str(&message.get_untracked()));
        }
    };
    view! {
        <header>
            <h1>"Baseline"</h1>
            <p role="status">{move || if connected.get() { "Connected" } else { "Connecting…" }}</p>
        </header>
        <main>
            <textarea aria-label="Message" on:input:target=move |ev| message.set(ev.target().value())></textarea>
            <button on:click=send>"Send"</button>
            <Show when=move || completed.get()>
                <p>"completed"</p>
            </Show>
        </main>
    }
}
