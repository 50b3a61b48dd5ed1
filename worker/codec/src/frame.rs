//! How a runtime's message crosses its port to the controller: its JSON as
//! UTF-8 bytes in a transferred `ArrayBuffer`, and an output event's text
//! beside it as a second buffer, raw, rather than escaped inside the JSON.
//! Both ends are here, so the runtime's framing and the controller's
//! reading cannot drift apart.
//!
//! Why bytes and not a string: output is most of what goes this way, and a
//! string was converted from UTF-8 in the runtime and back again in the
//! controller (docs/benchmarks.md, "Twenty-fourth stop").
//!
//! Which message may take a text back is the core's to say
//! (`RuntimeToController::put_output_text`); this reads the buffers only.

use js_sys::{Array, ArrayBuffer, Uint8Array};
use lifeline_core::RuntimeToController;
use lifeline_protocol::MAX_MESSAGE_BYTES;
use wasm_bindgen::{JsCast, JsValue};

/// Why what came through a runtime's port is not a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Not a buffer, nor a pair whose first part is one: not this
    /// protocol at all.
    NotBuffer,
    /// Buffers, but not a message: not UTF-8, over the size limit, not a
    /// message's JSON, or a text beside a message with no place for it.
    Malformed,
}

/// What a runtime posts for `message`, and the buffers it moves with it.
pub fn frame(mut message: RuntimeToController) -> (JsValue, Array) {
    let beside = message.take_output_text();
    let json = bytes(&lifeline_protocol::encode(&message));
    match beside {
        None => (json.clone().into(), Array::of1(&json)),
        Some(text) => {
            let parts = Array::of2(&json, &bytes(&text));
            (parts.clone().into(), parts)
        }
    }
}

/// The message a runtime's port delivered as `data`.
pub fn read(data: JsValue) -> Result<RuntimeToController, FrameError> {
    let (json, beside) = match data.dyn_ref::<Array>() {
        Some(parts) if parts.length() == 2 => (parts.get(0), Some(parts.get(1))),
        Some(_) => return Err(FrameError::NotBuffer),
        None => (data, None),
    };
    if !json.is_instance_of::<ArrayBuffer>() {
        return Err(FrameError::NotBuffer);
    }
    let text = utf8(&json).ok_or(FrameError::Malformed)?;
    let mut message =
        crate::decode_message::<RuntimeToController>(&text).map_err(|_| FrameError::Malformed)?;
    if let Some(beside) = beside {
        let text = utf8(&beside).ok_or(FrameError::Malformed)?;
        message
            .put_output_text(text)
            .map_err(|_| FrameError::Malformed)?;
    }
    Ok(message)
}

fn bytes(text: &str) -> ArrayBuffer {
    Uint8Array::from(text.as_bytes()).buffer()
}

/// A buffer's text, if it is a buffer of UTF-8 within the protocol's size
/// limit (checked before it is copied into wasm memory).
fn utf8(buffer: &JsValue) -> Option<String> {
    let buffer = buffer.dyn_ref::<ArrayBuffer>()?;
    if buffer.byte_length() as usize > MAX_MESSAGE_BYTES {
        return None;
    }
    String::from_utf8(Uint8Array::new(buffer).to_vec()).ok()
}
