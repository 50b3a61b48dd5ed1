//! The phrases' German column, installed once the controller has fetched
//! it (`i18n/words-de.json`: the key list's fingerprint, then one text per
//! key in key order). Fetching is the worker's IO; what is accepted is
//! decided here. Native builds have the column inline and never install.

use crate::Msg;
use std::sync::OnceLock;

/// Where the bundle keeps the asset, relative to the worker's script.
pub const ASSET: &str = "i18n/words-de.json";

/// Leaked once: the texts live as long as the worker, like the English ones.
static TEXTS: OnceLock<Box<[&'static str]>> = OnceLock::new();

/// The German text of the key at `index`, once installed.
#[cfg_attr(any(test, not(target_arch = "wasm32")), allow(dead_code))]
pub(crate) fn text(index: usize) -> Option<&'static str> {
    TEXTS.get()?.get(index).copied()
}

/// German phrases can be worded without fetching.
pub fn ready() -> bool {
    cfg!(any(test, not(target_arch = "wasm32"))) || TEXTS.get().is_some()
}

/// Takes the asset's fingerprint and texts. False, and nothing kept, when
/// they were written for another key list (a stale or foreign asset would
/// put texts under the wrong keys).
pub fn install(fingerprint: u32, texts: Vec<String>) -> bool {
    if fingerprint != Msg::FINGERPRINT || texts.len() != Msg::COUNT {
        return false;
    }
    if TEXTS.get().is_none() {
        let _ = TEXTS.set(
            texts
                .into_iter()
                .map(|s| &*Box::leak(s.into_boxed_str()))
                .collect(),
        );
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_asset_for_another_key_list_is_refused() {
        let texts = vec![String::new(); Msg::COUNT];
        assert!(!install(Msg::FINGERPRINT ^ 1, texts));
        assert!(!install(
            Msg::FINGERPRINT,
            vec![String::new(); Msg::COUNT - 1]
        ));
    }

    #[test]
    fn the_fingerprint_follows_the_key_list() {
        use crate::fnv1a;
        assert_eq!(Msg::COUNT, Msg::ALL.len());
        assert_eq!(fnv1a(b""), 0x811c_9dc5);
        assert_eq!(fnv1a(b"a"), 0xe40c_292c);
        assert_ne!(fnv1a(b"Sessions,Rename,"), fnv1a(b"Rename,Sessions,"));
    }
}
