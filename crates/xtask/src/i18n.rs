//! The German column of the page's catalog as a bundle asset.
//!
//! The page's wasm carries only English (its size budget is nearly spent);
//! German is fetched as `i18n/de.json` when a reader asks for it. This file
//! compiles the very catalog the page compiles, so the asset cannot drift
//! from the keys: same source, same order, same fingerprint.

use std::path::Path;

/// What catalog.rs expects as its parent module.
#[derive(Clone, Copy)]
#[allow(dead_code)]
enum Locale {
    En,
    De,
}

#[allow(dead_code)]
#[path = "../../../web/src/i18n/catalog.rs"]
mod catalog;

use catalog::{t, Msg};

/// The asset's bytes: the key list's fingerprint, then one German text per
/// key in key order.
pub fn german_json() -> String {
    let mut entries = vec![serde_json::Value::from(Msg::FINGERPRINT)];
    entries.extend(
        Msg::ALL
            .iter()
            .map(|m| serde_json::Value::from(t(Locale::De, *m))),
    );
    serde_json::Value::Array(entries).to_string()
}

/// Writes `i18n/de.json` into the bundle at `dir`.
pub fn write(dir: &Path) -> Result<(), String> {
    let folder = dir.join("i18n");
    std::fs::create_dir_all(&folder).map_err(|e| format!("cannot create {folder:?}: {e}"))?;
    std::fs::write(folder.join("de.json"), german_json())
        .map_err(|e| format!("cannot write the German catalog: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_asset_has_the_fingerprint_then_every_german_text_in_key_order() {
        let parsed: Vec<serde_json::Value> = serde_json::from_str(&german_json()).unwrap();
        assert_eq!(parsed.len(), Msg::COUNT + 1);
        assert_eq!(Msg::ALL.len(), Msg::COUNT);
        assert_eq!(parsed[0], serde_json::Value::from(Msg::FINGERPRINT));
        assert_eq!(parsed[1 + Msg::Sessions as usize], "Sitzungen");
        assert_eq!(parsed[1 + Msg::Language as usize], "Sprache");
        let last = *Msg::ALL.last().unwrap();
        assert_eq!(parsed[Msg::COUNT], t(Locale::De, last));
        assert_ne!(t(Locale::De, last), t(Locale::En, last));
    }

    #[test]
    fn the_fingerprint_follows_the_key_list() {
        assert_eq!(catalog::fnv1a(b""), 0x811c_9dc5);
        assert_eq!(catalog::fnv1a(b"a"), 0xe40c_292c);
        assert_ne!(
            catalog::fnv1a(b"Sessions,Rename,"),
            catalog::fnv1a(b"Rename,Sessions,")
        );
    }
}
