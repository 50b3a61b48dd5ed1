//! The service worker that makes the app start offline.

use crate::ui::Offline;
use leptos::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use super::describe;

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
