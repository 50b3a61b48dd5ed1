use super::*;

/// Writes GGUF headers the way llama.cpp's writer does.
#[derive(Default)]
struct File(Vec<u8>);

impl File {
    fn header(version: u32, tensors: u64, pairs: u64) -> File {
        let mut f = File(b"GGUF".to_vec());
        f.u32(version).u64(tensors).u64(pairs);
        f
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    fn kv_str(&mut self, k: &str, v: &str) -> &mut Self {
        self.str(k).u32(STRING).str(v)
    }
    fn kv_u32(&mut self, k: &str, v: u32) -> &mut Self {
        self.str(k).u32(4).u32(v)
    }
    fn tensor(&mut self, name: &str, dims: &[u64]) -> &mut Self {
        self.str(name).u32(dims.len() as u32);
        for d in dims {
            self.u64(*d);
        }
        self.u32(1).u64(0)
    }
}

/// A header like the test suite's tiny llama: a vocabulary array before
/// the context length, and tensors.
fn tiny() -> Vec<u8> {
    let mut f = File::header(3, 2, 5);
    f.kv_str("general.architecture", "llama")
        .kv_str("general.name", "tiny")
        .str("tokenizer.ggml.tokens")
        .u32(ARRAY)
        .u32(STRING)
        .u64(3)
        .str("<unk>")
        .str("<s>")
        .str("a")
        .str("tokenizer.ggml.scores")
        .u32(ARRAY)
        .u32(6)
        .u64(3)
        .u32(0)
        .u32(0)
        .u32(0)
        .kv_u32("llama.context_length", 1024)
        .tensor("token_embd.weight", &[64, 366])
        .tensor("output_norm.weight", &[64]);
    f.0
}

#[test]
fn reads_the_facts_a_profile_shows() {
    let facts = read_header(&tiny()).unwrap();
    assert_eq!(
        facts,
        GgufFacts {
            version: 3,
            architecture: "llama".into(),
            name: Some("tiny".into()),
            context_length: Some(1024),
            parameters: 64 * 366 + 64,
            tensors: 2,
        }
    );
}

#[test]
fn every_prefix_asks_for_more_and_never_panics() {
    let bytes = tiny();
    for cut in 0..bytes.len() {
        match read_header(&bytes[..cut]) {
            Err(GgufError::Truncated { need }) => {
                assert!(
                    need > cut as u64 && need <= bytes.len() as u64,
                    "{cut}: {need}"
                )
            }
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    // Data after the header is not looked at.
    let mut more = bytes.clone();
    more.extend_from_slice(&[0xff; 100]);
    assert_eq!(read_header(&more), read_header(&bytes));
}

#[test]
fn a_file_that_is_not_gguf_is_refused_at_once() {
    assert_eq!(read_header(b"PK\x03\x04 zip"), Err(GgufError::NotGguf));
    assert_eq!(read_header(b"<html>"), Err(GgufError::NotGguf));
    assert_eq!(read_header(b"X"), Err(GgufError::NotGguf));
    assert_eq!(read_header(b"GG"), Err(GgufError::Truncated { need: 4 }));
    assert!(GgufError::NotGguf.to_string().contains("not a GGUF model"));
}

#[test]
fn old_and_unknown_versions_are_named() {
    assert_eq!(
        read_header(&File::header(1, 0, 0).0),
        Err(GgufError::Version(1))
    );
    assert_eq!(
        read_header(&File::header(99, 0, 0).0),
        Err(GgufError::Version(99))
    );
}

#[test]
fn a_header_without_architecture_is_refused() {
    let mut f = File::header(3, 0, 1);
    f.kv_str("general.name", "x");
    assert_eq!(read_header(&f.0), Err(GgufError::NoArchitecture));
}

#[test]
fn the_context_length_is_the_architectures_own() {
    let mut f = File::header(2, 0, 3);
    f.kv_u32("bert.context_length", 512)
        .kv_u32("qwen2.context_length", 32768)
        .kv_str("general.architecture", "qwen2");
    let facts = read_header(&f.0).unwrap();
    assert_eq!(facts.context_length, Some(32768));
    assert_eq!(facts.name, None);
}

#[test]
fn hostile_lengths_are_refused_without_allocating() {
    // A string claiming 2^64-1 bytes.
    let mut f = File::header(3, 0, 1);
    f.u64(u64::MAX);
    assert!(matches!(
        read_header(&f.0),
        Err(GgufError::Malformed(_)) | Err(GgufError::Truncated { .. })
    ));
    // An array of 2^62 u64s: its size overflows.
    let mut f = File::header(3, 0, 1);
    f.str("k").u32(ARRAY).u32(10).u64(1 << 62);
    assert!(matches!(read_header(&f.0), Err(GgufError::Malformed(_))));
    // A count of pairs far beyond the bytes: ends as truncated, quickly.
    let f = File::header(3, u64::MAX, u64::MAX);
    assert!(matches!(
        read_header(&f.0),
        Err(GgufError::Truncated { .. })
    ));
    // Five dimensions, an unknown type, arrays nested too deep.
    let mut f = File::header(3, 1, 1);
    f.kv_str("general.architecture", "llama")
        .tensor("t", &[1, 1, 1, 1, 1]);
    assert!(matches!(read_header(&f.0), Err(GgufError::Malformed(_))));
    let mut f = File::header(3, 0, 1);
    f.str("k").u32(77);
    assert!(matches!(read_header(&f.0), Err(GgufError::Malformed(_))));
    let mut f = File::header(3, 0, 1);
    f.str("k").u32(ARRAY);
    for _ in 0..5 {
        f.u32(ARRAY).u64(1);
    }
    f.u32(4).u64(0);
    assert!(matches!(read_header(&f.0), Err(GgufError::Malformed(_))));
    // Dimensions whose product overflows.
    let mut f = File::header(3, 1, 1);
    f.kv_str("general.architecture", "llama")
        .tensor("t", &[u64::MAX, 2]);
    assert!(matches!(read_header(&f.0), Err(GgufError::Malformed(_))));
}

#[test]
fn long_or_invalid_strings_are_skipped_not_kept() {
    let mut f = File::header(3, 0, 2);
    f.kv_str("general.architecture", "llama")
        .kv_str("general.name", &"n".repeat(300));
    assert_eq!(read_header(&f.0).unwrap().name, None);
    let mut f = File::header(3, 0, 1);
    f.str("general.architecture").u32(STRING).u64(2);
    f.0.extend_from_slice(&[0xff, 0xfe]);
    assert_eq!(read_header(&f.0), Err(GgufError::NoArchitecture));
}
