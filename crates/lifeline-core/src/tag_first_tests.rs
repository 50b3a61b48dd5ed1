//! The tag-first decoder against serde's own buffered one (the decoder
//! every journal so far was read with), on the same text.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::TagFirst;
use crate::environment::Environment;
use crate::session_record::SessionRecord;
use crate::JournalRecord;

/// Encodes `value`, decodes the text both ways, and holds both to the value
/// and the re-encoded text to the same bytes.
pub(crate) fn same_both_ways<T>(value: &T)
where
    T: TagFirst + Serialize + DeserializeOwned + PartialEq + Debug,
{
    let text = serde_json::to_string(value).unwrap();
    let (tag_first, buffered) = both::<T>(&text);
    let tag_first = tag_first.unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(&tag_first, value, "{text}");
    assert_eq!(&buffered.unwrap(), value, "{text}");
    assert_eq!(serde_json::to_string(&tag_first).unwrap(), text);
}

fn both<T: TagFirst + DeserializeOwned>(text: &str) -> (Result<T, String>, Result<T, String>) {
    (
        serde_json::from_str::<T>(text).map_err(|e| e.to_string()),
        T::buffered(&mut serde_json::Deserializer::from_str(text)).map_err(|e| e.to_string()),
    )
}

fn same<T: TagFirst + DeserializeOwned + PartialEq + Debug>(text: &str) -> T {
    let (tag_first, buffered) = both::<T>(text);
    let tag_first = tag_first.unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(Ok(&tag_first), buffered.as_ref(), "{text}");
    tag_first
}

const SESSION: &str = "01JF8Z30QG5J7M9N1Q3S5V7W9Y";
const WORKSPACE: &str = "01JF8Z2K8D3M5P7R9T1V3X5Z7B";
const OTHER: &str = "01JF8Z6C4R5XK2N7W3Q9YB0T1M";

#[test]
fn a_field_added_later_reads_the_same_when_absent() {
    // `agent` came with model turns; older journals have none.
    let turn = format!(
        r#"{{"type":"turn_recorded","session":"{SESSION}","turn":"{OTHER}","prompt":"hi","plan":["ls"]}}"#
    );
    let JournalRecord::TurnRecorded { agent, .. } = same::<JournalRecord>(&turn) else {
        panic!("a turn");
    };
    assert_eq!(agent, Default::default());
    same_both_ways(&same::<JournalRecord>(&turn));
}

#[test]
fn nested_tagged_enums_read_the_same() {
    // `Session` holds a `SessionRecord` (also tagged by "type"), which
    // holds an `Environment` (tagged by "kind").
    let created = format!(
        r#"{{"type":"session","record":{{"type":"created","session":"{SESSION}","workspace":"{WORKSPACE}","environment":{{"kind":"local_folder","folder":"{OTHER}","name":"notes"}},"profile":"{OTHER}"}}}}"#
    );
    let record = same::<JournalRecord>(&created);
    assert!(matches!(
        &record,
        JournalRecord::Session {
            record: SessionRecord::Created {
                environment: Environment::LocalFolder { .. },
                ..
            }
        }
    ));
    same_both_ways(&record);
    assert_eq!(
        serde_json::to_string(&record).unwrap(),
        created,
        "written exactly as before"
    );
}

#[test]
fn a_unit_variant_ignores_other_fields_like_serde_does() {
    assert_eq!(
        same::<Environment>(r#"{"kind":"worker","note":[1,2]}"#),
        Environment::Worker
    );
}

#[test]
fn a_tag_that_is_not_first_is_refused_by_name() {
    let reordered =
        format!(r#"{{"workspace":"{WORKSPACE}","type":"lease_granted","lease":"{OTHER}"}}"#);
    let (tag_first, buffered) = both::<JournalRecord>(&reordered);
    let refusal = tag_first.unwrap_err();
    assert!(
        refusal.contains("JournalRecord must have its \"type\" field first"),
        "{refusal}"
    );
    // serde's buffered decoder read it; nothing this app writes looks so.
    assert!(buffered.is_ok());
}

#[test]
fn what_serde_refused_is_still_refused() {
    for text in [
        r#"{"workspace":"x"}"#,
        r#"{}"#,
        r#"{"type":"no_such_record"}"#,
        r#"{"type":7}"#,
        r#"["lease_granted"]"#,
        r#""lease_granted""#,
        r#"{"type":"lease_granted","workspace":"not an id","lease":"x"}"#,
    ] {
        let (tag_first, buffered) = both::<JournalRecord>(text);
        assert!(tag_first.is_err(), "{text}");
        if text != r#"["lease_granted"]"# {
            // serde also read a tagged enum from a sequence; nothing writes one.
            assert!(buffered.is_err(), "{text}");
        }
    }
    let (tag_first, buffered) = both::<JournalRecord>("{}");
    assert_eq!(tag_first.unwrap_err(), buffered.unwrap_err());
    let (tag_first, _) = both::<JournalRecord>(r#"{"type":"no_such_record"}"#);
    assert!(tag_first
        .unwrap_err()
        .contains("unknown variant `no_such_record`"));
}
