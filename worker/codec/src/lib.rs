//! Decoding JSON text in the browser: the browser's own `JSON.parse`, then
//! serde's derived decoders reading the parsed value ([`value`]).
//!
//! Why not serde_json here: every type decoded with serde_json compiles a
//! decoder that carries the JSON parser inline, for each type and each
//! reader. Through a parsed JS value the per-type decoder is much smaller
//! and the parser is the browser's. Measured on the page (which decodes the
//! controller's and runtimes' messages): 329.3 → 305.1 KB gzip.
//!
//! What goes out is still written with serde_json (`schema::encode`,
//! `lifeline_protocol::encode`): its encoders are small, and the journal's
//! digests are over those exact bytes.
//!
//! Architecture Invariant: everything decoded here passes the same checks as
//! `lifeline_core::schema::decode` (size, a JSON object, version, validate)
//! or `lifeline_protocol::decode` (size); nothing from outside can panic.

use js_sys::{JsString, Reflect, JSON};
use lifeline_core::schema::{self, Schema, SchemaError, Version};
use lifeline_protocol::{DecodeError, MAX_MESSAGE_BYTES};
use serde::de::DeserializeOwned;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

mod value;

use value::from_value;

/// Decodes one durable record (a journal entry, a snapshot, a profile).
pub fn decode_record<T: Schema>(text: &str) -> Result<T, SchemaError> {
    schema::precheck::<T>(text.as_bytes())?;
    let value = parse(text).map_err(|detail| SchemaError::Malformed {
        schema: T::NAME.to_string(),
        detail,
    })?;
    from_parsed(value)
}

fn from_parsed<T: Schema>(value: JsValue) -> Result<T, SchemaError> {
    match from_value::<T>(value.clone()) {
        Ok(record) => schema::accept(record),
        Err(e) => Err(schema::refusal(
            T::NAME,
            version_of(&value, T::VERSIONS),
            e.to_string(),
        )),
    }
}

/// Decodes one durable record from the string IndexedDB gave back, without
/// copying it into wasm memory and back out for `JSON.parse`: at 100k
/// journal events the snapshot is 2 MB of text, and each copy re-encodes it
/// (UTF-16 to UTF-8 and back). Same checks as [`decode_record`].
pub fn decode_stored<T: Schema>(text: &JsString) -> Result<T, SchemaError> {
    match parse_stored(text, T::NAME, T::MAX_BYTES)? {
        Some(value) => from_parsed(value),
        None => decode_record(&String::from(text)),
    }
}

/// The checks and the parse of [`decode_stored`], once for every type;
/// `None` for a text that may be near the limit and needs its exact length
/// in bytes, which takes the copy after all.
fn parse_stored(text: &JsString, schema: &str, max: usize) -> Result<Option<JsValue>, SchemaError> {
    let units = text.length() as usize;
    // One UTF-16 unit is one to three bytes of UTF-8.
    if units.saturating_mul(3) > max {
        return Ok(None);
    }
    let first = (0..units as u32)
        .map(|i| text.char_code_at(i))
        .find(|&c| !matches!(c as u32, 0x09 | 0x0A | 0x0C | 0x0D | 0x20))
        .map(|c| u8::try_from(c as u32).unwrap_or(0));
    schema::opens_object(schema, first)?;
    parse_string(text)
        .map(Some)
        .map_err(|e| SchemaError::Malformed {
            schema: schema.to_string(),
            detail: syntax_error(e),
        })
}

/// Decodes one message from a peer (the page, a runtime, the controller).
pub fn decode_message<T: DeserializeOwned>(text: &str) -> Result<T, DecodeError> {
    if text.len() > MAX_MESSAGE_BYTES {
        return Err(DecodeError::TooLarge { bytes: text.len() });
    }
    let value = parse(text).map_err(|detail| DecodeError::Malformed { detail })?;
    from_value(value).map_err(|e| DecodeError::Malformed {
        detail: e.to_string(),
    })
}

/// Decodes JSON text the store checks itself (a profile): the error names
/// what did not fit, for a message of the caller's own.
pub fn decode_value<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    from_value(parse(text)?).map_err(|e| e.to_string())
}

/// One top-level field of a JSON object, as a number, when that much is
/// readable.
pub fn number_field(text: &str, field: &str) -> Option<f64> {
    Reflect::get(&parse(text).ok()?, &JsValue::from_str(field))
        .ok()?
        .as_f64()
}

/// `JSON.parse`, with its `SyntaxError` as the error's text.
fn parse(text: &str) -> Result<JsValue, String> {
    JSON::parse(text).map_err(syntax_error)
}

fn syntax_error(e: JsValue) -> String {
    match e.dyn_ref::<js_sys::Error>() {
        Some(error) => String::from(error.message()),
        None => "it is not JSON".to_string(),
    }
}

#[wasm_bindgen]
extern "C" {
    /// `JSON.parse` of a string that is already JavaScript's.
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    fn parse_string(text: &JsString) -> Result<JsValue, JsValue>;
}

/// The `"v"` field of a parsed record, for naming why it did not decode.
fn version_of(value: &JsValue, versions: &[u64]) -> Version {
    let v = Reflect::get(value, &JsValue::from_str("v")).unwrap_or(JsValue::UNDEFINED);
    if v.is_undefined() || v.is_null() {
        Version::Missing
    } else if v
        .as_f64()
        .is_some_and(|v| versions.iter().any(|&known| known as f64 == v))
    {
        Version::Current
    } else {
        Version::Other(
            JSON::stringify(&v)
                .ok()
                .and_then(|s| s.as_string())
                .unwrap_or_else(|| "?".to_string()),
        )
    }
}
