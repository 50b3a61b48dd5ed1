//! The Lifeline UI (Leptos, client-side rendered).
//!
//! Thin components render state ([`ui`], [`evidence`], [`transcript`]);
//! all IO with workers, storage, folders, downloads and the service worker
//! lives in [`io`]. Recovery semantics are decided in `lifeline-core`, never
//! here.

// The default allocator (dlmalloc), unlike the workers' talc: Leptos'
// `send_wrapper` calls `std::thread::current()`, which allocates through
// `System` (dlmalloc) whatever the global allocator is, so talc here was
// a second allocator linked beside it (docs/benchmarks.md, "Eighteenth
// stop": −0.6 KB gzip without it).

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
