//! Decoding JSON text in the browser: the same readers as natively
//! (`lifeline_decode`, through `schema::read` and `lifeline_protocol::decode`),
//! plus the one thing only the browser has, a string IndexedDB gave back.
//!
//! Why no `JSON.parse` and no serde `Deserializer` over its value any more:
//! serde's derived decoders were about a third of the controller's wasm,
//! compiled per type and per reader, and what reads a [`lifeline_decode::Json`]
//! tree is compiled once per type (docs/benchmarks.md, "Fourteenth stop").
//!
//! What goes out is written by `lifeline_encode` (`schema::encode`,
//! `lifeline_protocol::encode`), the same text serde_json wrote.
//!
//! Architecture Invariant: everything decoded here passes the same checks as
//! natively (`schema::read`: size, a JSON object, version, validate;
//! `lifeline_protocol::decode`: size); nothing from outside can panic.

pub mod frame;

use js_sys::{JsString, Uint8Array};
use lifeline_core::schema::{self, Schema, SchemaError};
use lifeline_decode::{Decode, Object};
use lifeline_protocol::DecodeError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::wasm_bindgen;

/// Decodes one durable record (a journal entry, a snapshot, a profile).
pub fn decode_record<T: Schema>(text: &str) -> Result<T, SchemaError> {
    schema::read(text)
}

/// Decodes one durable record from the string IndexedDB gave back. A text
/// longer in UTF-16 units than the limit is in bytes is refused before it
/// is copied into wasm memory: each unit is at least one byte of UTF-8.
pub fn decode_stored<T: Schema>(text: &JsString) -> Result<T, SchemaError> {
    let units = text.length() as usize;
    if units > T::MAX_BYTES {
        return Err(SchemaError::TooLarge {
            schema: T::NAME.to_string(),
            // What the error says is the size in bytes, as when the text is
            // read: counted now, without copying the text into wasm memory.
            len: utf8_len(text),
            max: T::MAX_BYTES,
        });
    }
    match utf8_of(text) {
        Some(text) => schema::read(&text),
        None => Err(SchemaError::Malformed {
            schema: T::NAME.to_string(),
            detail: "the browser gave back text that could not be read as UTF-8".to_string(),
        }),
    }
}

/// Below this many UTF-16 units a string is copied by wasm-bindgen's own
/// conversion: one call into JavaScript, where `utf8_of` makes four.
const LARGE: usize = 4096;

/// `text` as UTF-8 in wasm memory. A long one is written by the browser's
/// `TextEncoder.encodeInto` straight into the string's buffer: wasm-bindgen's
/// conversion copies an ASCII string one character at a time in
/// JavaScript, which took 3.3–4.5 ms of the 17 ms a 0.8 MB snapshot took
/// to read and decode.
fn utf8_of(text: &JsString) -> Option<String> {
    let units = text.length() as usize;
    if units < LARGE {
        return Some(String::from(text));
    }
    let encoder = Utf8Encoder::new();
    // One byte per unit is enough for ASCII; what did not fit is written
    // again into room for its worst case, three bytes a unit.
    let mut bytes: Vec<u8> = Vec::with_capacity(units);
    let mut read = 0;
    loop {
        let rest = match read {
            0 => text.clone(),
            _ => text.slice(read as u32, units as u32),
        };
        let spare = bytes.capacity() - bytes.len();
        // SAFETY: the view covers the vector's spare capacity and is used
        // only by `encodeInto`, before anything can allocate (and so grow,
        // and detach, wasm memory); the length grows by what it wrote.
        let took = unsafe {
            let view = Uint8Array::view_mut_raw(bytes.as_mut_ptr().add(bytes.len()), spare);
            let done = encoder.encode_into(&rest, &view);
            bytes.set_len(bytes.len() + (done.written() as usize).min(spare));
            done.read() as usize
        };
        read += took;
        if read >= units {
            break;
        }
        if took == 0 && spare >= 4 {
            // Room for any character and none taken: never, by the
            // standard; refused rather than read cut short.
            return None;
        }
        bytes.reserve((units - read) * 3);
    }
    // `encodeInto` writes well-formed UTF-8 (a lone surrogate becomes
    // U+FFFD, as in wasm-bindgen's conversion); checked all the same.
    String::from_utf8(bytes).ok()
}

/// How many bytes `text` takes as UTF-8, encoded a piece at a time into
/// one small buffer. Only for a text already refused as too large: it costs
/// a pass over the whole text, but never memory in proportion to it.
fn utf8_len(text: &JsString) -> usize {
    const PIECE: usize = 64 * 1024;
    let units = text.length() as usize;
    let encoder = Utf8Encoder::new();
    let buffer = Uint8Array::new_with_length(PIECE as u32);
    let (mut read, mut written) = (0, 0);
    while read < units {
        let rest = text.slice(read as u32, units as u32);
        let done = encoder.encode_into(&rest, &buffer);
        let took = done.read() as usize;
        if took == 0 {
            // Room for any character and none taken: never, by the
            // standard. One byte a unit is the least the rest can be.
            return written + (units - read);
        }
        read += took;
        written += done.written() as usize;
    }
    written
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = TextEncoder)]
    type Utf8Encoder;
    #[wasm_bindgen(constructor, js_class = "TextEncoder")]
    fn new() -> Utf8Encoder;
    #[wasm_bindgen(method, js_class = "TextEncoder", js_name = encodeInto)]
    fn encode_into(this: &Utf8Encoder, source: &JsString, into: &Uint8Array) -> EncodeInto;

    type EncodeInto;
    #[wasm_bindgen(method, getter)]
    fn read(this: &EncodeInto) -> f64;
    #[wasm_bindgen(method, getter)]
    fn written(this: &EncodeInto) -> f64;
}

/// Decodes one message from a peer (the page, a runtime, the controller).
pub fn decode_message<T: Decode + DeserializeOwned + Serialize>(
    text: &str,
) -> Result<T, DecodeError> {
    lifeline_protocol::decode(text)
}

/// Decodes JSON text the store checks itself (a profile): the error names
/// what did not fit, for a message of the caller's own.
pub fn decode_value<T: Decode>(text: &str) -> Result<T, String> {
    lifeline_decode::from_str(text).map_err(|e| e.to_string())
}

/// One top-level field of a JSON object, as a whole number, when that much
/// is readable.
pub fn whole_field(text: &str, field: &'static str) -> Option<u64> {
    let mut object = Object::of(lifeline_decode::json::parse(text).ok()?).ok()?;
    u64::decode(object.take(field).ok()??).ok()
}
