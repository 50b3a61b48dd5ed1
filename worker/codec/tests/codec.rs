//! The browser's decoder against serde_json's, on the same text: what the
//! journal and the workers read in production against what the native
//! tests and the simulation read.

use js_sys::JsString;
use lifeline_codec::{decode_message, decode_record, decode_stored};
use lifeline_core::schema::{decode, encode, Schema, SchemaError};
use lifeline_core::{CommandRecord, EventRecord, JournalEntry, RecoveryEvidence};
use lifeline_protocol::{DecodeError, PageToController, MAX_MESSAGE_BYTES};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

const ENTRY: &str = r#"{"v":1,"position":7,"at":1700000000000,"record":{"type":"lease_granted","workspace":"01JF8Z2K8D3M5P7R9T1V3X5Z7B","lease":"01JF8Z4V0W7N3B5K9Q2M6XR8TD"}}"#;

#[wasm_bindgen_test]
fn a_record_decodes_the_same_through_both_decoders() {
    let native: JournalEntry = decode(ENTRY.as_bytes()).expect("serde_json reads it");
    let browser: JournalEntry = decode_record(ENTRY).expect("the browser reads it");
    assert_eq!(native, browser);
    // A record whose tag is not its first field (serde writes it first)
    // reads the same: the tree is read by name, not in order.
    let reordered = ENTRY.replace(
        r#"{"type":"lease_granted","workspace":"01JF8Z2K8D3M5P7R9T1V3X5Z7B","#,
        r#"{"workspace":"01JF8Z2K8D3M5P7R9T1V3X5Z7B","type":"lease_granted","#,
    );
    assert_ne!(reordered, ENTRY);
    assert_eq!(decode_record::<JournalEntry>(&reordered), Ok(native));
}

/// Every record the contract document shows, and entries whose records nest
/// tagged enums (newtype variants, a record inside a record, a field added
/// later and absent), decode to the same value through both decoders and
/// encode again to the same text.
#[wasm_bindgen_test]
fn tagged_records_decode_the_same_through_both_decoders() {
    fn same<T: Schema + PartialEq + std::fmt::Debug>(text: &str) {
        let native: T = decode(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
        let browser: T = decode_record(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(native, browser, "{text}");
        assert_eq!(
            decode::<T>(&encode(&browser).unwrap()).unwrap(),
            browser,
            "{text}"
        );
    }
    let doc = include_str!("../../../docs/command-contract.md");
    let mut seen = 0;
    for block in doc.split("<!-- example: ").skip(1) {
        let (name, rest) = block.split_once(" -->\n```json\n").unwrap();
        let text = rest.split_once("\n```").unwrap().0;
        match name {
            "command record" => same::<CommandRecord>(text),
            "event record (stdout)" | "event record (terminal)" => same::<EventRecord>(text),
            "recovery evidence" => same::<RecoveryEvidence>(text),
            "journal entry (exposure)" | "journal entry (outcome change)" => {
                same::<JournalEntry>(text)
            }
            _ => continue,
        }
        seen += 1;
    }
    assert_eq!(seen, 6, "the contract document's examples");
    let entry =
        |record: &str| format!(r#"{{"v":1,"position":7,"at":1700000000000,"record":{record}}}"#);
    let (s, w, o) = (
        "01JF8Z30QG5J7M9N1Q3S5V7W9Y",
        "01JF8Z2K8D3M5P7R9T1V3X5Z7B",
        "01JF8Z6C4R5XK2N7W3Q9YB0T1M",
    );
    for record in [
        format!(
            r#"{{"type":"session","record":{{"type":"created","session":"{s}","workspace":"{w}","environment":{{"kind":"local_folder","folder":"{o}","name":"notes"}},"profile":"{o}"}}}}"#
        ),
        format!(
            r#"{{"type":"turn_recorded","session":"{s}","turn":"{o}","prompt":"hi","plan":["ls"]}}"#
        ),
        format!(r#"{{"type":"session_opened","session":"{s}","workspace":"{w}","title":"t"}}"#),
    ] {
        same::<JournalEntry>(&entry(&record));
    }
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

/// The text is read, not a JavaScript number: an integer past 2^53 is
/// neither rounded nor refused, as natively.
#[wasm_bindgen_test]
fn a_number_beyond_what_javascript_holds_exactly_reads_exactly() {
    let big = ENTRY.replace(r#""position":7"#, r#""position":9007199254740993"#);
    let entry = decode_record::<JournalEntry>(&big).expect("it reads");
    assert_eq!(entry.position, 9_007_199_254_740_993);
    assert_eq!(Ok(entry), decode::<JournalEntry>(big.as_bytes()));
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

/// The journal's reader decodes the string IndexedDB gave back, checking
/// its length before copying it into wasm: it must accept and refuse
/// exactly what the text decoder does, near the size limit and with text
/// that is not ASCII too (where UTF-16 units and UTF-8 bytes differ).
#[wasm_bindgen_test]
fn a_stored_string_decodes_like_its_text() {
    let max = lifeline_core::schema::limits::MAX_RECORD_BYTES;
    let cases = [
        ENTRY.to_string(),
        format!(" \n\t{ENTRY}"),
        ENTRY.replace("lease_granted", "no_such_record"),
        ENTRY.replace(r#""v":1,"#, r#""v":2,"#),
        ENTRY.replace(r#""position":7"#, r#""position":"seven""#),
        "[1]".to_string(),
        "  {not json".to_string(),
        String::new(),
        "   ".to_string(),
        // Within the limit in bytes, but more than a third of it in units:
        // read through the exact path, and accepted.
        format!("{ENTRY}{}", " ".repeat(max / 3)),
        // Within the limit in units, over it in bytes (three each).
        format!("{ENTRY}{}", "\u{2028}".repeat(max / 3 + 1)),
        // Over it in units.
        format!("{ENTRY}{}", " ".repeat(max)),
        // Over it in units, with characters of two, three and four bytes:
        // the error names the same size in bytes either way.
        format!("{ENTRY}{}", "é\u{2028}😀 ".repeat(max / 5 + 1)),
    ];
    for text in &cases {
        let stored = decode_stored::<JournalEntry>(&JsString::from(text.as_str()));
        let record = decode_record::<JournalEntry>(text);
        assert_eq!(stored, record, "{}", &text[..text.len().min(80)]);
    }
    assert!(decode_stored::<JournalEntry>(&JsString::from(ENTRY)).is_ok());
    assert!(matches!(
        decode_stored::<JournalEntry>(&JsString::from(cases[10].as_str())),
        Err(SchemaError::TooLarge { .. })
    ));
    let mixed = &cases[11];
    assert!(
        mixed.encode_utf16().count() > max,
        "over the limit in units"
    );
    assert!(
        matches!(
            decode_stored::<JournalEntry>(&JsString::from(mixed.as_str())),
            Err(SchemaError::TooLarge { len, .. }) if len == mixed.len()
        ),
        "the size said is the size in bytes"
    );
}

/// A snapshot with one settled command, whose command line is `line`.
fn snapshot_settling(line: &str) -> lifeline_core::ProjectionSnapshot {
    use lifeline_core::event::OutputSummary;
    use lifeline_core::projection::{Projection, RetentionPolicy};
    use lifeline_core::settled::SettledCommand;
    use lifeline_core::*;
    let mut with_settled = Projection::new(RetentionPolicy::default());
    let command = CommandId::from_u128(0xC0).unwrap();
    with_settled.settled.insert(
        command,
        SettledCommand {
            command,
            key: IdempotencyKey::from_u128(0xC1).unwrap(),
            session: SessionId::from_u128(0xC2).unwrap(),
            runtime: RuntimeId::from_u128(0xC3).unwrap(),
            generation: Generation(2),
            line: line.to_string(),
            binding: Digest::of(b"binding"),
            admitted_at: Millis(1_000),
            admitted_position: 7,
            finished_at: Some(Millis(1_500)),
            outcome: Outcome::Completed,
            exit_code: Some(0),
            last_seq: EventSeq(3),
            terminal: Digest::of(b"terminal"),
            stdout: OutputSummary {
                total_bytes: 2,
                inline_bytes: 2,
                ..OutputSummary::default()
            },
            stderr: OutputSummary::default(),
            evidence: Vec::new(),
            reissue_of: None,
            reissued_as: None,
        },
    );
    with_settled.snapshot()
}

/// A long stored string is written into wasm memory by the browser's
/// `TextEncoder.encodeInto`: in one step when it is ASCII, in more when it
/// is not (the room it was given, a byte a unit, runs out), and a lone
/// surrogate becomes U+FFFD, as wasm-bindgen's conversion of a short one
/// makes it.
#[wasm_bindgen_test]
fn a_long_stored_string_decodes_like_its_text() {
    use lifeline_core::ProjectionSnapshot;
    let text_of = |line: &str| {
        let snapshot = snapshot_settling(line);
        (
            String::from_utf8(encode(&snapshot).unwrap()).unwrap(),
            snapshot,
        )
    };
    for line in [
        "a".repeat(5_000),
        format!("{}é{}", "a".repeat(4_500), "b".repeat(600)),
        "é😀".repeat(3_000),
        format!("{}😀", "a".repeat(6_000)),
    ] {
        let (text, snapshot) = text_of(&line);
        let stored = decode_stored::<ProjectionSnapshot>(&JsString::from(text.as_str()))
            .expect("a long snapshot reads");
        assert_eq!(stored.projection.settled, snapshot.projection.settled);
    }
    let (text, _) = text_of(&format!("{}\u{FFFD}x", "a".repeat(5_000)));
    let at = text.find('\u{FFFD}').unwrap();
    let lone = JsString::from(&text[..at])
        .concat(&JsString::from_char_code1(0xD800))
        .concat(&JsString::from(&text[at + '\u{FFFD}'.len_utf8()..]));
    assert_eq!(lone.length(), JsString::from(text.as_str()).length());
    let read = decode_stored::<ProjectionSnapshot>(&lone).expect("reads");
    assert_eq!(Ok(read), decode_record::<ProjectionSnapshot>(&text));
}

/// A snapshot of version 1 (before commands were kept small), 2 (before
/// the key index was left out), 3 (before settled commands were one text
/// each) or 4 reads through the browser's decoder, settled commands in
/// either form; any other version is refused as one this build does not
/// know, not as malformed.
#[wasm_bindgen_test]
fn snapshots_of_versions_1_to_4_read_and_others_are_refused_by_version() {
    use lifeline_core::projection::{Projection, RetentionPolicy};
    use lifeline_core::*;
    let empty = Projection::new(RetentionPolicy::default()).snapshot();
    let text = String::from_utf8(encode(&empty).unwrap()).unwrap();
    assert!(text.starts_with(r#"{"v":4,"#), "{text}");
    let with = |v: &str| text.replacen(r#"{"v":4,"#, &format!(r#"{{"v":{v},"#), 1);
    for v in ["1", "2", "3", "4"] {
        let read = decode_record::<ProjectionSnapshot>(&with(v)).expect("reads");
        assert_eq!(read.projection, empty.projection);
        assert!(decode_stored::<ProjectionSnapshot>(&JsString::from(with(v).as_str())).is_ok());
    }
    assert!(matches!(
        decode_record::<ProjectionSnapshot>(&with("5")),
        Err(SchemaError::UnsupportedVersion { found, .. }) if found == "5"
    ));
    // Settled commands: one text each (4), or a map of objects (1 to 3).
    let snapshot = snapshot_settling("grep -c \"ä b\" notes.txt");
    let lines = String::from_utf8(encode(&snapshot).unwrap()).unwrap();
    assert!(lines.contains(r#""settled_lines":[""#), "{lines}");
    let objects = lines.replacen(r#"{"v":4,"#, r#"{"v":3,"#, 1).replacen(
        &lines[lines.find(r#""settled_lines":["#).unwrap()..lines.find(r#""],"#).unwrap() + 2],
        &format!(
            r#""settled":{}"#,
            serde_json::to_string(&snapshot.projection.settled).unwrap()
        ),
        1,
    );
    assert!(objects.contains(r#""settled":{""#), "{objects}");
    for text in [&lines, &objects] {
        for read in [
            decode_record::<ProjectionSnapshot>(text).unwrap(),
            decode_stored::<ProjectionSnapshot>(&JsString::from(text.as_str())).unwrap(),
        ] {
            assert_eq!(read.projection.settled, snapshot.projection.settled);
            assert_eq!(read.projection.keys.len(), 1);
        }
    }
    // A settled command's text that does not read is named, not quoted.
    let damaged = lines.replacen(" completed ", " finished ", 1);
    let refusal = decode_record::<ProjectionSnapshot>(&damaged).unwrap_err();
    assert!(
        refusal.to_string().contains("settled command") && !refusal.to_string().contains("grep"),
        "{refusal}"
    );
    // A version-4 snapshot damaged elsewhere is named for the damage.
    let damaged = text.replacen(r#""position":0"#, r#""position":"zero""#, 1);
    assert_ne!(damaged, text);
    for refusal in [
        decode_record::<ProjectionSnapshot>(&damaged).unwrap_err(),
        lifeline_core::schema::decode::<ProjectionSnapshot>(damaged.as_bytes()).unwrap_err(),
    ] {
        assert!(
            matches!(refusal, SchemaError::Malformed { .. }),
            "{refusal}"
        );
    }
}

/// Every shape the derive reads, through the codec in the browser (where
/// `usize` is 32 bits) and through serde_json, on the same text: the same
/// value, or a refusal from both. What the app's records and messages use
/// is covered above; this covers the shapes between them.
#[wasm_bindgen_test]
fn every_shape_reads_as_serde_json_reads_it() {
    use lifeline_decode::Decode;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[derive(Deserialize, Decode, Debug, PartialEq)]
    struct Id(String);

    #[derive(Deserialize, Decode, Debug, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Shape {
        Unit,
        Newtype(u32),
        Tuple(i32, bool),
        Struct { width: u64, label: Option<String> },
    }

    #[derive(Deserialize, Decode, Debug, PartialEq)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Tagged {
        Plain,
        Fields { count: usize },
        Wrapped(Id2),
    }

    /// Names only: read by a name's place (`lifeline_decode::unit_variant`).
    #[derive(Deserialize, Decode, Debug, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Names {
        First,
        #[serde(rename = "2nd")]
        Second,
        ThirdOne,
    }

    #[derive(Deserialize, Decode, Debug, PartialEq)]
    struct Id2 {
        id: String,
    }

    #[derive(Deserialize, Decode, Debug, PartialEq)]
    struct All {
        small: u8,
        signed: i64,
        size: usize,
        flag: bool,
        #[serde(default)]
        absent: Option<u64>,
        null: Option<u64>,
        #[serde(rename = "renamed")]
        named: String,
        id: Id,
        list: Vec<Shape>,
        tagged: Vec<Tagged>,
        names: Vec<Names>,
        map: BTreeMap<String, i32>,
        pair: (u16, String),
        unit: (),
    }

    fn same<T: serde::de::DeserializeOwned + Decode + PartialEq + std::fmt::Debug>(text: &str) {
        let native = serde_json::from_str::<T>(text);
        let browser = lifeline_codec::decode_value::<T>(text);
        match (native, browser) {
            (Ok(native), Ok(browser)) => assert_eq!(native, browser, "{text}"),
            (Err(_), Err(_)) => {}
            (native, browser) => panic!("{text}: serde_json {native:?}, codec {browser:?}"),
        }
    }

    let all = r#"{"small":7,"signed":-3,"size":4294967295,"flag":true,"null":null,
        "renamed":"r\u00e4\"","id":"01J","list":["unit",{"newtype":4},{"tuple":[-1,false]},
        {"struct":{"width":2,"label":null}},{"struct":{"width":18446744073709551615,"label":"l"}}],
        "tagged":[{"kind":"plain","extra":1},{"count":3,"kind":"fields"},{"kind":"wrapped","id":"x"}],
        "names":["first","2nd",{"third_one":null}],
        "map":{"b":2,"a":-1},"pair":[9,"x"],"unit":null,"extra":"ignored"}"#;
    same::<All>(all);
    assert!(lifeline_codec::decode_value::<All>(all).is_ok());
    for (from, to) in [
        (r#""small":7"#, r#""small":300"#),
        (r#""small":7"#, r#""small":-1"#),
        (r#""small":7"#, r#""small":7.5"#),
        (r#""small":7"#, r#""small":7e0"#),
        (r#""small":7"#, r#""small":"7""#),
        (r#""size":4294967295"#, r#""size":4294967296"#),
        (r#""signed":-3"#, r#""signed":-0"#),
        (r#""small":7"#, r#""small":-0"#),
        (r#""signed":-3"#, r#""signed":-9223372036854775808"#),
        (r#""signed":-3"#, r#""signed":-9223372036854775809"#),
        (r#""flag":true"#, r#""flag":1"#),
        (r#""null":null"#, r#""null":5"#),
        (r#""renamed":"r"#, r#""named":"r"#),
        (r#""unit":null"#, r#""unit":0"#),
        (r#"["unit","#, r#"["other","#),
        (r#"{"newtype":4}"#, r#"{"newtype":4,"unit":null}"#),
        (r#"{"newtype":4}"#, r#"{"newtype":-4}"#),
        (r#"{"tuple":[-1,false]}"#, r#"{"tuple":[-1]}"#),
        (r#""kind":"plain""#, r#""kind":"other""#),
        (r#""kind":"plain""#, r#""kind":7"#),
        (r#"{"count":3,"kind":"fields"}"#, r#"{"count":3}"#),
        (r#""pair":[9,"x"]"#, r#""pair":{"0":9}"#),
        (r#""2nd""#, r#""second""#),
        (r#""2nd""#, r#""First""#),
        (r#""2nd""#, r#"2"#),
        (r#"{"third_one":null}"#, r#"{"third_one":1}"#),
        (
            r#"{"third_one":null}"#,
            r#"{"third_one":null,"first":null}"#,
        ),
        (r#""map":{"b":2,"a":-1}"#, r#""map":[]"#),
        (r#""map":{"b":2,"a":-1}"#, r#""map":{"b":2,"b":-1}"#),
        (r#""list":["#, r#""list":{"#),
        (r#""small":7,"#, r#""small":7,"small":8,"#),
    ] {
        let changed = all.replacen(from, to, 1);
        assert_ne!(changed, all, "{from}");
        same::<All>(&changed);
    }
    // Whatever else: the refusal says what did not fit, never a panic.
    let refusal =
        lifeline_codec::decode_value::<All>(&all.replacen(r#""small":7"#, r#""small":"7""#, 1))
            .unwrap_err();
    assert!(refusal.contains("invalid type"), "{refusal}");
    let refusal =
        lifeline_codec::decode_value::<All>(&all.replacen(r#""small":7"#, r#""small":7.5"#, 1))
            .unwrap_err();
    assert!(refusal.contains("expected an integer"), "{refusal}");
}
