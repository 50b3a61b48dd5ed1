//! The Lifeline UI (Leptos, client-side rendered).
//!
//! Thin components render state; all IO with workers and the service worker
//! lives in [`host`]. Recovery semantics are decided in `lifeline-core`, never
//! here.

mod app;
mod environment;
mod export;
mod host;
mod i18n;
mod profiles;
mod recovery;
mod transcript;

use wasm_bindgen::prelude::*;

#[wasm_bindgen(start)]
pub fn main() {
    leptos::mount::mount_to_body(app::App);
}
