//! The German columns of the two catalogs as bundle assets.
//!
//! The page's and the controller's wasm carry only English (their size
//! budgets are nearly spent); German is fetched when a reader asks for it:
//! `i18n/de.json` for the page's labels, `i18n/words-de.json` for the
//! phrases the controller words. This file compiles the very catalog the
//! page compiles, and links the phrases' catalog, so the assets cannot
//! drift from the keys: same source, same order, same fingerprint.

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

/// An asset's bytes: the key list's fingerprint, then one German text per
/// key in key order.
fn column<'a>(fingerprint: u32, texts: impl Iterator<Item = &'a str>) -> String {
    let mut entries = vec![serde_json::Value::from(fingerprint)];
    entries.extend(texts.map(serde_json::Value::from));
    serde_json::Value::Array(entries).to_string()
}

/// The page's labels.
pub fn german_json() -> String {
    column(Msg::FINGERPRINT, Msg::ALL.iter().map(|m| t(Locale::De, *m)))
}

/// The phrases the controller words.
pub fn words_json() -> String {
    use lifeline_words::{Locale as L, Msg as W};
    column(
        W::FINGERPRINT,
        W::ALL.iter().map(|m| lifeline_words::t(L::De, *m)),
    )
}

/// Writes `i18n/de.json` and `i18n/words-de.json` into the bundle at `dir`.
pub fn write(dir: &Path) -> Result<(), String> {
    let folder = dir.join("i18n");
    std::fs::create_dir_all(&folder).map_err(|e| format!("cannot create {folder:?}: {e}"))?;
    std::fs::write(folder.join("de.json"), german_json())
        .map_err(|e| format!("cannot write the German catalog: {e}"))?;
    let words = dir.join(lifeline_words::german::ASSET);
    std::fs::write(&words, words_json())
        .map_err(|e| format!("cannot write the phrases' German catalog {words:?}: {e}"))
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
    fn the_phrases_asset_has_their_fingerprint_then_every_german_text() {
        use lifeline_words::{Locale as L, Msg as W};
        let parsed: Vec<serde_json::Value> = serde_json::from_str(&words_json()).unwrap();
        assert_eq!(parsed.len(), W::COUNT + 1);
        assert_eq!(parsed[0], serde_json::Value::from(W::FINGERPRINT));
        assert_ne!(W::FINGERPRINT, Msg::FINGERPRINT);
        for (i, m) in W::ALL.iter().enumerate() {
            assert_eq!(parsed[1 + i], lifeline_words::t(L::De, *m));
        }
        // What the controller checks before it takes the asset.
        let texts = parsed[1..]
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        assert!(lifeline_words::german::install(W::FINGERPRINT, texts));
    }
}
