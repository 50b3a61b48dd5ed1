//! The browser's decoder against serde_json's, on the same text: what the
//! journal and the workers read in production against what the native
//! tests and the simulation read.

use lifeline_codec::{decode_message, decode_record};
use lifeline_core::schema::{decode, SchemaError};
use lifeline_core::JournalEntry;
use lifeline_protocol::{DecodeError, PageToController, MAX_MESSAGE_BYTES};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

const ENTRY: &str = r#"{"v":1,"position":7,"at":1700000000000,"record":{"type":"lease_granted","workspace":"01JF8Z2K8D3M5P7R9T1V3X5Z7B","lease":"01JF8Z4V0W7N3B5K9Q2M6XR8TD"}}"#;

#[wasm_bindgen_test]
fn a_record_decodes_the_same_through_both_decoders() {
    let native: JournalEntry = decode(ENTRY.as_bytes()).expect("serde_json reads it");
    let browser: JournalEntry = decode_record(ENTRY).expect("the browser reads it");
    assert_eq!(native, browser);
    // The tag need not come first: JSON.parse keeps the object whole.
    let reordered = ENTRY.replace(
        r#"{"type":"lease_granted","workspace":"01JF8Z2K8D3M5P7R9T1V3X5Z7B","#,
        r#"{"workspace":"01JF8Z2K8D3M5P7R9T1V3X5Z7B","type":"lease_granted","#,
    );
    assert_ne!(reordered, ENTRY);
    assert_eq!(decode_record::<JournalEntry>(&reordered).unwrap(), native);
}

#[wasm_bindgen_test]
fn refusals_are_named_like_the_native_decoder_names_them() {
    let cases = [
        ENTRY.replace(r#""v":1,"#, r#""v":2,"#),
        ENTRY.replace(r#""v":1,"#, ""),
        "[1]".to_string(),
        "{not json".to_string(),
        ENTRY.replace("lease_granted", "no_such_record"),
        // A future record whose body changed too is named by its version.
        ENTRY
            .replace(r#""v":1,"#, r#""v":"two","#)
            .replace(r#""position":7"#, r#""position":"seven""#),
    ];
    for text in &cases {
        let native = decode::<JournalEntry>(text.as_bytes()).unwrap_err();
        let browser = decode_record::<JournalEntry>(text).unwrap_err();
        assert_eq!(
            std::mem::discriminant(&native),
            std::mem::discriminant(&browser),
            "{text}: {native} / {browser}"
        );
    }
    assert!(matches!(
        decode_record::<JournalEntry>(&ENTRY.replace(r#""v":1,"#, r#""v":2,"#)),
        Err(SchemaError::UnsupportedVersion { found, .. }) if found == "2"
    ));
}

#[wasm_bindgen_test]
fn a_number_beyond_what_javascript_holds_exactly_is_refused_not_rounded() {
    let big = ENTRY.replace(r#""position":7"#, r#""position":9007199254740993"#);
    assert!(matches!(
        decode_record::<JournalEntry>(&big),
        Err(SchemaError::Malformed { .. })
    ));
}

#[wasm_bindgen_test]
fn limits_hold_before_any_parsing() {
    let padding = " ".repeat(lifeline_core::schema::limits::MAX_RECORD_BYTES);
    assert!(matches!(
        decode_record::<JournalEntry>(&format!("{ENTRY}{padding}")),
        Err(SchemaError::TooLarge { .. })
    ));
    let message = " ".repeat(MAX_MESSAGE_BYTES + 1);
    assert!(matches!(
        decode_message::<PageToController>(&message),
        Err(DecodeError::TooLarge { .. })
    ));
    assert!(matches!(
        decode_message::<PageToController>("{\"type\":\"nonsense\"}"),
        Err(DecodeError::Malformed { .. })
    ));
}
