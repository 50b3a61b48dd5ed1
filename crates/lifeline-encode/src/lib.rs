//! Writing Lifeline's types as JSON text: each type's [`Encode`] appends
//! itself to a [`Writer`].
//!
//! Why not serde_json with serde's derived `Serialize` in the browser: its
//! code is generic over the serializer and its error, and compiled per type
//! and per field type; it was 86 KB of the controller's raw wasm (22 KB
//! gzip, docs/benchmarks.md, "Sixteenth stop"). `#[derive(Encode)]` reads
//! the same `#[serde]` attributes as serde's derive, so a type is written
//! down once, and emits one function per type that is generic over
//! nothing; a writer cannot fail, so no error path is compiled at all.
//!
//! The text is serde_json's, byte for byte (compact, fields in declaration
//! order, the same escapes): the journal's digests are over these bytes,
//! and records written before still read the same. Debug builds (every
//! native test and simulation, and the in-browser tests) check it:
//! [`to_string`] also writes each value with serde_json and compares.
//!
//! Architecture Invariant: writing never fails and never panics in a
//! release build; what a value holds is written, escaped, never cut.

mod primitive;

pub use lifeline_decode_derive::Encode;

/// A type written as JSON text.
pub trait Encode {
    fn encode(&self, w: &mut Writer);
}

/// A map's key, written as an object's key: a string in JSON, whatever
/// the key's type (serde_json quotes integer keys).
pub trait EncodeKey {
    fn encode_key(&self, w: &mut Writer);
}

/// `value` as JSON text. Debug builds check it against serde_json.
pub fn to_string<T: Encode + serde::Serialize + ?Sized>(value: &T) -> String {
    let mut w = Writer::default();
    value.encode(&mut w);
    #[cfg(debug_assertions)]
    same_as_serde_json(value, &w.text);
    w.text
}

/// [`to_string`], as bytes.
pub fn to_vec<T: Encode + serde::Serialize + ?Sized>(value: &T) -> Vec<u8> {
    to_string(value).into_bytes()
}

#[cfg(debug_assertions)]
fn same_as_serde_json<T: serde::Serialize + ?Sized>(value: &T, ours: &str) {
    if let Ok(theirs) = serde_json::to_string(value) {
        assert_eq!(ours, theirs, "lifeline_encode, then serde_json");
    }
}

/// JSON text being written. Separators are decided from the text itself
/// (a comma unless the object or array was just opened), so a writer has
/// no state beyond its text and a skipped field needs no bookkeeping.
#[derive(Default)]
pub struct Writer {
    text: String,
}

impl Writer {
    /// Text that needs no escaping, as is: punctuation, and the derive's
    /// `{"tag":"name"` fragments, checked when they were generated.
    pub fn raw(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// An object's key (`"name":`, written whole by the derive), after a
    /// comma unless it is the object's first.
    pub fn key(&mut self, key: &str) {
        self.separate(b'{');
        self.text.push_str(key);
    }

    /// Before an array's item: a comma unless it is the array's first.
    pub fn item(&mut self) {
        self.separate(b'[');
    }

    /// Before a map's key: a comma unless it is the object's first.
    pub fn item_key(&mut self) {
        self.separate(b'{');
    }

    fn separate(&mut self, open: u8) {
        if self.text.as_bytes().last() != Some(&open) {
            self.text.push(',');
        }
    }

    /// A string, quoted and escaped as serde_json escapes it: `"`, `\` and
    /// the control characters, nothing else.
    pub fn str(&mut self, text: &str) {
        self.text.reserve(text.len() + 2);
        self.text.push('"');
        let bytes = text.as_bytes();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let escape = match b {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0c => "\\f",
                0x00..=0x1f => "",
                _ => continue,
            };
            // Every byte escaped is ASCII, so `start..i` is on character
            // boundaries.
            self.text.push_str(&text[start..i]);
            if escape.is_empty() {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                self.text.push_str("\\u00");
                self.text.push(char::from(HEX[usize::from(b >> 4)]));
                self.text.push(char::from(HEX[usize::from(b & 0xf)]));
            } else {
                self.text.push_str(escape);
            }
            start = i + 1;
        }
        self.text.push_str(&text[start..]);
        self.text.push('"');
    }

    /// What `value` displays as, as a string (serde's `collect_str`).
    pub fn display(&mut self, value: &dyn std::fmt::Display) {
        self.str(&value.to_string());
    }

    pub fn u64(&mut self, value: u64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut rest = value;
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        // Only ASCII digits were written.
        self.text
            .push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
    }

    pub fn i64(&mut self, value: i64) {
        if value < 0 {
            self.text.push('-');
        }
        self.u64(value.unsigned_abs());
    }

    pub fn bool(&mut self, value: bool) {
        self.text.push_str(if value { "true" } else { "false" });
    }

    pub fn null(&mut self) {
        self.text.push_str("null");
    }

    /// Where the next value will start, for [`Writer::merge_object`].
    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// An internally tagged newtype variant: the object its content wrote
    /// from `at` joins the one the tag opened, as serde merges them.
    pub fn merge_object(&mut self, at: usize) {
        let written = self.text.get(at..).unwrap_or_default();
        debug_assert!(
            written.starts_with('{'),
            "an internally tagged variant's content is an object"
        );
        if written.starts_with("{}") {
            self.text.truncate(at);
            self.text.push('}');
        } else if written.starts_with('{') {
            self.text.replace_range(at..at + 1, ",");
        }
    }

    /// The text written.
    pub fn finish(self) -> String {
        self.text
    }
}

/// An array of `items`, borrowed or made one at a time.
pub fn seq<T: Encode>(w: &mut Writer, items: impl IntoIterator<Item = T>) {
    w.raw("[");
    for item in items {
        w.item();
        item.encode(w);
    }
    w.raw("]");
}

/// An object of `entries`.
pub fn map<'a, K: EncodeKey + 'a, V: Encode + 'a>(
    w: &mut Writer,
    entries: impl IntoIterator<Item = (&'a K, &'a V)>,
) {
    w.raw("{");
    for (key, value) in entries {
        w.item_key();
        key.encode_key(w);
        w.raw(":");
        value.encode(w);
    }
    w.raw("}");
}

#[cfg(test)]
mod tests;
