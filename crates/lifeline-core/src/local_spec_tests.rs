//! The JSON reader (`lifeline_decode`) through `LocalModel::from_spec`,
//! against serde_json, which wrote every spec: the grammar's corners,
//! damaged texts and any text at all.

use crate::profile::{LocalFile, LocalModel, Sampling};
use proptest::prelude::*;

fn read(spec: &str) -> Option<LocalModel> {
    LocalModel::from_spec(spec)
}

fn model() -> LocalModel {
    LocalModel {
        file: LocalFile {
            name: "tiny \"q\" \\ ä 😀.gguf".into(),
            size: 9_007_199_254_740_991,
            stored_as: "01JF8Z2K8D3M5P7R9T1V3X5Z7B.gguf".into(),
            architecture: "llama".into(),
            parameters: 0,
            context_length: 2048,
            model_name: Some("Tiny\n\tModel".into()),
        },
        sampling: Sampling {
            temperature_percent: 0,
            top_p_percent: 100,
            max_tokens: u32::MAX,
            context_tokens: 512,
        },
    }
}

/// The same value from both, or a refusal from both.
fn agree(text: &str) {
    let serde: Option<LocalModel> = serde_json::from_str(text).ok();
    assert_eq!(read(text), serde, "{text}");
}

#[test]
fn what_the_app_writes_reads_back() {
    let written = serde_json::to_string(&model()).unwrap();
    assert_eq!(read(&written), Some(model()));
    let provider = model().provider();
    assert_eq!(provider.local_model(), Some(Ok(model())));
}

#[test]
fn edited_texts_read_as_serde_would_read_them() {
    let written = serde_json::to_string(&model()).unwrap();
    let sampling = written.find(r#","sampling""#).unwrap();
    let cases = [
        // Older specs, before sampling was kept: its default.
        format!("{}}}", &written[..sampling]),
        written.replace(r#""model_name":"Tiny\n\tModel""#, r#""model_name":null"#),
        written.replace(r#","model_name":"Tiny\n\tModel""#, ""),
        written.replace(
            r#"{"file":{"#,
            r#"{"later":[1,{"x":true}],"file":{"extra":1,"#,
        ),
        format!("  \n{written}\t "),
        written.replace(r#""parameters":0"#, r#""parameters":"0""#),
        written.replace(r#""parameters":0"#, r#""parameters":-1"#),
        written.replace(r#""parameters":0"#, r#""parameters":1.5"#),
        written.replace(r#""model_name":"Tiny\n\tModel""#, r#""model_name":7"#),
        written.replace(r#""max_tokens":4294967295"#, r#""max_tokens":4294967296"#),
        written.replace(r#""top_p_percent":100,"#, ""),
        written.replace(r#""architecture":"llama","#, ""),
        format!("{}null}}", &written[..sampling + r#","sampling":"#.len()]),
        format!("[{written}]"),
        written[..written.len() - 1].to_string(),
        format!("{written}x"),
        String::new(),
        "null".into(),
        "{}".into(),
    ];
    for case in &cases {
        assert_ne!(case, &written);
        agree(case);
    }
    assert!(read(&cases[0]).is_some_and(|m| m.sampling == Sampling::default()));
    assert!(read(&cases[1]).is_some_and(|m| m.file.model_name.is_none()));
}

/// A whole number beyond 2^53 reads exactly, as serde_json reads it: the
/// text is read, not a JavaScript number.
#[test]
fn a_number_javascript_cannot_hold_reads_exactly() {
    let written = serde_json::to_string(&model()).unwrap();
    let huge = written.replace("9007199254740991", "9007199254740993");
    agree(&huge);
    assert_eq!(
        read(&huge).map(|m| m.file.size),
        Some(9_007_199_254_740_993)
    );
}

prop_compose! {
    fn any_model()(
        name in any::<String>(),
        size in any::<u64>(),
        stored_as in "[0-9A-Z]{26}\\.gguf",
        architecture in any::<String>(),
        parameters in any::<u64>(),
        context_length in any::<u32>(),
        model_name in proptest::option::of(any::<String>()),
        sampling in (any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>()),
    ) -> LocalModel {
        LocalModel {
            file: LocalFile {
                name,
                size,
                stored_as,
                architecture,
                parameters,
                context_length: context_length.into(),
                model_name,
            },
            sampling: Sampling {
                temperature_percent: sampling.0,
                top_p_percent: sampling.1,
                max_tokens: sampling.2,
                context_tokens: sampling.3,
            },
        }
    }
}

proptest! {
    #[test]
    fn every_model_reads_back_as_written(model in any_model()) {
        let written = serde_json::to_string(&model).unwrap();
        prop_assert_eq!(read(&written), Some(model));
    }

    /// A damaged spec (cut short, a byte changed) never panics, and reads
    /// as serde_json reads it.
    #[test]
    fn a_damaged_spec_reads_as_serde_reads_it(
        model in any_model(),
        cut in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(b"{}[]\":,0-.9nul \\x".to_vec()),
    ) {
        let written = serde_json::to_string(&model).unwrap();
        let mut bytes = written.clone().into_bytes();
        let at = at.index(bytes.len());
        bytes[at] = byte;
        if let Ok(changed) = String::from_utf8(bytes) {
            agree(&changed);
        }
        let cut = cut.index(written.len());
        if let Some(short) = written.get(..cut) {
            agree(short);
        }
    }

    #[test]
    fn any_text_is_read_or_refused_without_a_panic(text in any::<String>()) {
        agree(&text);
    }
}

/// JSON's corners, each put where the spec has a string, a number or a
/// field, read as serde_json reads them.
#[test]
fn the_corners_of_json_read_as_serde_reads_them() {
    let written = serde_json::to_string(&model()).unwrap();
    let name = r#""name":"tiny \"q\" \\ ä 😀.gguf""#;
    let size = r#""size":9007199254740991"#;
    assert!(written.contains(name) && written.contains(size));
    let strings = [
        r#""\ud83d\ude00""#,
        r#""\ud83d""#,
        r#""\ude00""#,
        r#""\ud83dx""#,
        r#""\ud83d\u0041""#,
        r#""\u00e4\u0000\/\b\f\n\r\t""#,
        r#""\x""#,
        r#""\u12""#,
        "\"tab\there\"",
        "\"new\nline\"",
        r#""""#,
    ];
    for string in strings {
        agree(&written.replacen(name, &format!(r#""name":{string}"#), 1));
    }
    let numbers = [
        "0",
        "-0",
        "00",
        "01",
        "1.0",
        "1e2",
        "1E+2",
        "1e-2",
        "-1",
        "- 1",
        "1.",
        ".5",
        "1e",
        "18446744073709551616",
        "true",
        "false",
        "nul",
        "null",
        "[]",
        "[1,[2,{}]]",
        "[1,]",
        "{}",
        r#"{"a":1,}"#,
        " 7 ",
    ];
    for number in numbers {
        agree(&written.replacen(size, &format!(r#""size":{number}"#), 1));
    }
    // A known field twice is refused, an unknown one twice is not.
    agree(&written.replacen(size, &format!("{size},{size}"), 1));
    agree(&written.replacen(size, &format!(r#"{size},"x":1,"x":2"#), 1));
    // Nesting: the same up to 127 objects and arrays in all. Deeper is
    // refused here, not recursed into; serde_json skips an unknown field's
    // value at any depth, and the spec's known fields are two deep.
    let deep = |depth: usize| {
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        written.replacen(size, &format!(r#"{size},"deep":{deep}"#), 1)
    };
    for depth in [1, 100, 124, 125] {
        agree(&deep(depth));
        assert!(read(&deep(depth)).is_some());
    }
    for depth in [126, 5000, 1_000_000] {
        assert_eq!(read(&deep(depth)), None);
    }
}
