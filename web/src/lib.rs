//! The Lifeline UI (Leptos, client-side rendered).
//!
//! Thin components render state ([`ui`], [`evidence`], [`transcript`]);
//! all IO with workers, storage, folders, downloads and the service worker
//! lives in [`io`]. Recovery semantics are decided in `lifeline-core`, never
//! here.

// Talc instead of the default dlmalloc: the same single-threaded heap in
// fewer bytes of wasm.
#[cfg(target_family = "wasm")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

mod app;
mod copied;
mod environment;
mod evidence;
mod export;
mod i18n;
mod io;
mod lazy;
mod profiles;
mod recovery;
mod sessions;
mod transcript;
mod ui;
mod worded;

use wasm_bindgen::prelude::*;

#[wasm_bindgen(start)]
pub fn main() {
    leptos::mount::mount_to_body(app::App);
}
