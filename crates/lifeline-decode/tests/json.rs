//! The tree reader against serde_json, which wrote every text the app
//! reads and read every tool call's arguments: the same values, and a
//! refusal where it refuses (`model::tool_line` depends on both).

use lifeline_decode::json::{parse, Json};
use proptest::prelude::*;
use serde_json::Value;

/// Our tree as serde_json's: a number through serde_json's own reading of
/// its text, and a key given twice keeping its last value, as a
/// serde_json map keeps it.
fn value(json: Json<'_>) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(b),
        Json::Number(text) => serde_json::from_str(text).expect("a number serde_json reads"),
        Json::Text(text) => Value::String(text.into_owned()),
        Json::Array(items) => Value::Array(items.into_iter().map(value).collect()),
        Json::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k.into_owned(), value(v)))
                .collect(),
        ),
    }
}

fn agree(text: &str) {
    let theirs = serde_json::from_str::<Value>(text);
    let ours = parse(text).map(value);
    match (&theirs, &ours) {
        (Ok(theirs), Ok(ours)) => assert_eq!(theirs, ours, "{text:?}"),
        (Err(_), Err(_)) => {}
        _ => panic!("{text:?}: serde_json {theirs:?}, ours {ours:?}"),
    }
}

fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[a-z\"\\\\/\u{0}-\u{1f}\u{e4}\u{1F600}]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-c]{1,2}", inner), 0..6)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Whatever serde_json writes, compact or pretty, reads back the same.
    #[test]
    fn what_serde_json_writes_reads_the_same(v in any_value(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&v).unwrap()
        } else {
            serde_json::to_string(&v).unwrap()
        };
        prop_assert_eq!(parse(&text).map(value), Ok(v));
    }

    /// A written text damaged anywhere (a byte taken out, or one of JSON's
    /// own put in) is read or refused as serde_json reads or refuses it.
    #[test]
    fn a_damaged_text_reads_as_serde_json_reads_it(
        v in any_value(),
        at in any::<prop::sample::Index>(),
        put in prop::sample::select(vec!["", "\"", "\\", ",", ":", "{", "}", "[", "]", "-", "0", "1", ".", "e", "E", "+", " ", "\\u", "d800", "n", "t"]),
    ) {
        let text = serde_json::to_string(&v).unwrap();
        let mut bytes = text.into_bytes();
        let at = at.index(bytes.len() + 1);
        if put.is_empty() {
            if at < bytes.len() {
                bytes.remove(at);
            }
        } else {
            bytes.splice(at..at, put.bytes());
        }
        if let Ok(text) = String::from_utf8(bytes) {
            agree(&text);
        }
    }

    /// Any text at all: no panic, and the same answer.
    #[test]
    fn any_text_reads_as_serde_json_reads_it(text in "[\\[\\]{}\",:0-9eE.+\\-a-z\\\\ ]{0,24}") {
        agree(&text);
    }

    /// Numbers near where serde_json's floats overflow: the same refusals.
    #[test]
    fn numbers_out_of_range_are_refused_as_serde_json_refuses_them(
        negative in any::<bool>(),
        integer in "[1-9][0-9]{0,24}|0",
        fraction in proptest::option::of("[0-9]{1,24}"),
        exponent in proptest::option::of((any::<bool>(), 250i64..330)),
    ) {
        let mut text = String::new();
        if negative {
            text.push('-');
        }
        text.push_str(&integer);
        if let Some(fraction) = fraction {
            text.push('.');
            text.push_str(&fraction);
        }
        if let Some((minus, e)) = exponent {
            text.push_str(if minus { "e-" } else { "e" });
            text.push_str(&e.to_string());
        }
        agree(&text);
    }
}

#[test]
fn the_corners_of_json_read_as_serde_json_reads_them() {
    let long = "9".repeat(400);
    for text in [
        "1e308",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "17976931348623157e292",
        "18446744073709551615e289",
        "18446744073709551616e289",
        "1e309",
        "0e999999999999",
        "1e-999999999999",
        "1e999999999999",
        "-1e2147483647",
        "1e2147483648",
        "0.0000e400",
        &long,
        &format!("{long}.5"),
        &format!("0.{long}e308"),
        "18446744073709551616",
        "-9223372036854775809",
        "-0",
        "01",
        "1.",
        ".5",
        "+1",
        "\"\\ud83d\\ude00\"",
        "\"\\ud83d\"",
        "\"\\udc00\"",
        "\"\\ud83dx\"",
        "\"a\u{1}\"",
        "{\"a\":1,\"a\":2}",
        "[1,]",
        "{\"a\":1,}",
        " \t\n\r[] ",
        "[]x",
        "nul",
        "truex",
        "",
        " ",
        "\u{feff}1",
    ] {
        agree(text);
    }
    let deep = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    for depth in [1, 127, 128, 129, 100_000] {
        agree(&deep(depth));
    }
}

/// The string reader skips plain text eight bytes at a time: what ends a
/// run (a quote, a backslash, a control character) is found wherever it
/// sits in a word, and the bytes beside those values (space, `!`, `#`,
/// `[`, `]`, DEL, non-ASCII) are not taken for one.
#[test]
fn a_string_reads_the_same_wherever_a_character_sits() {
    let specials = ['"', '\\', '\0', '\u{1f}', '\n', ' ', '!', '#', '[', ']'];
    let others = ['\u{7f}', '\u{9f}', 'é', '😀'];
    for c in specials.into_iter().chain(others) {
        for at in 0..=24 {
            let mut s = String::from("abcdefghijklmnopqrstuvwx");
            s.insert(at, c);
            agree(&serde_json::to_string(&s).expect("a string"));
            agree(&format!("\"{s}\""));
            agree(&format!("[\"{s}\",\"{s}\"]"));
        }
    }
}
