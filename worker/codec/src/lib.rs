//! Decoding JSON text in the browser: the same readers as natively
//! (`lifeline_decode`, through `schema::read` and `lifeline_protocol::decode`),
//! plus the one thing only the browser has, a string IndexedDB gave back.
//!
//! Why no `JSON.parse` and no serde `Deserializer` over its value any more:
//! serde's derived decoders were about a third of the controller's wasm,
//! compiled per type and per reader, and what reads a [`lifeline_decode::Json`]
//! tree is compiled once per type (docs/benchmarks.md, "Fourteenth stop").
//!
//! What goes out is still written with serde_json (`schema::encode`,
//! `lifeline_protocol::encode`): its encoders are small, and the journal's
//! digests are over those exact bytes.
//!
//! Architecture Invariant: everything decoded here passes the same checks as
//! natively (`schema::read`: size, a JSON object, version, validate;
//! `lifeline_protocol::decode`: size); nothing from outside can panic.

use js_sys::JsString;
use lifeline_core::schema::{self, Schema, SchemaError};
use lifeline_decode::{Decode, Object};
use lifeline_protocol::DecodeError;
use serde::de::DeserializeOwned;
use serde::Serialize;

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
            len: units,
            max: T::MAX_BYTES,
        });
    }
    schema::read(&String::from(text))
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
