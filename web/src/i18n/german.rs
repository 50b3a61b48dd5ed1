//! The German texts, fetched when a reader asks for German.
//!
//! The page's wasm is the one module every visit downloads and compiles,
//! and its size budget is nearly spent; the German column of the catalog
//! is a static asset instead (`i18n/de.json`, written by `cargo xtask
//! build` from `catalog.rs`, precached by the service worker with the rest
//! of the bundle, so German works offline). The asset is a JSON array: the
//! key list's fingerprint, then one text per key in key order.
//!
//! Native builds (tests, xtask) have the German column inline and never
//! fetch.

use super::Msg;
use std::sync::OnceLock;

const ASSET: &str = "i18n/de.json";

/// Leaked once: the texts live as long as the page, like the English ones.
static TEXTS: OnceLock<Box<[&'static str]>> = OnceLock::new();

/// The German text of the key at `index`, once the asset has arrived.
#[cfg_attr(any(test, not(target_arch = "wasm32")), allow(dead_code))]
pub fn text(index: usize) -> Option<&'static str> {
    TEXTS.get()?.get(index).copied()
}

/// German can be shown without waiting.
pub fn ready() -> bool {
    cfg!(any(test, not(target_arch = "wasm32"))) || TEXTS.get().is_some()
}

/// Fetches and checks the asset. `false`: missing, unreadable, or written
/// for another key list; nothing is kept then.
pub async fn load() -> bool {
    fetch().await.is_some()
}

async fn fetch() -> Option<()> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let window = web_sys::window()?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_str(ASSET))
        .await
        .ok()?
        .dyn_into()
        .ok()?;
    if !response.ok() {
        return None;
    }
    let parsed = JsFuture::from(response.json().ok()?).await.ok()?;
    let array: js_sys::Array = parsed.dyn_into().ok()?;
    if array.length() as usize != Msg::COUNT + 1
        || array.get(0).as_f64() != Some(f64::from(Msg::FINGERPRINT))
    {
        return None;
    }
    let mut texts = Vec::with_capacity(Msg::COUNT);
    for value in array.iter().skip(1) {
        texts.push(value.as_string()?);
    }
    if TEXTS.get().is_none() {
        let _ = TEXTS.set(
            texts
                .into_iter()
                .map(|s| &*Box::leak(s.into_boxed_str()))
                .collect(),
        );
    }
    Some(())
}
