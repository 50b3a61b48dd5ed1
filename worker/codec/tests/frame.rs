//! A runtime's messages through their frame (`lifeline_codec::frame`): what
//! the runtime posts, read back as the controller reads it, and each way
//! something else coming through a runtime's port is refused.

use js_sys::{Array, ArrayBuffer, Uint8Array};
use lifeline_codec::frame::{frame, read, FrameError};
use lifeline_core::{EventBody, EventSeq, Generation, RuntimeToController};
use lifeline_protocol::MAX_MESSAGE_BYTES;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

fn event(body: EventBody) -> RuntimeToController {
    RuntimeToController::Event {
        runtime: "01JF8Z4V0W7N3B5K9Q2M6XR8TD".parse().unwrap(),
        generation: Generation(1),
        command: "01JF8Z6C4R5XK2N7W3Q9YB0T1M".parse().unwrap(),
        seq: EventSeq(2),
        body,
    }
}

fn stdout(data: &str) -> RuntimeToController {
    event(EventBody::Stdout { data: data.into() })
}

fn buffer(bytes: &[u8]) -> JsValue {
    Uint8Array::from(bytes).buffer().into()
}

fn json(message: &RuntimeToController) -> JsValue {
    buffer(lifeline_protocol::encode(message).as_bytes())
}

#[wasm_bindgen_test]
fn an_output_event_crosses_as_two_buffers_and_reads_back_whole() {
    let message = stdout("1\n\"2\"\n\u{e9}\n");
    let (sent, moved) = frame(message.clone());
    let parts = Array::from(&sent);
    assert_eq!(parts.length(), 2, "its JSON, and its text beside it");
    assert_eq!(moved.length(), 2, "both buffers are moved, not copied");
    let text = Uint8Array::new(&parts.get(1)).to_vec();
    assert_eq!(
        text,
        "1\n\"2\"\n\u{e9}\n".as_bytes(),
        "raw UTF-8, not escaped"
    );
    assert_eq!(read(sent), Ok(message));
}

#[wasm_bindgen_test]
fn any_other_message_crosses_as_one_buffer() {
    for message in [
        event(EventBody::Lifecycle {
            phase: "started".into(),
        }),
        // An empty output event has no text to move beside it.
        stdout(""),
    ] {
        let (sent, moved) = frame(message.clone());
        assert!(sent.is_instance_of::<ArrayBuffer>());
        assert_eq!(moved.length(), 1);
        assert_eq!(read(sent), Ok(message));
    }
}

#[wasm_bindgen_test]
fn what_is_not_a_buffer_is_not_this_protocol() {
    let text = lifeline_protocol::encode(&stdout("x"));
    for data in [
        JsValue::from_str(&text),
        JsValue::NULL,
        Array::of3(&json(&stdout("")), &buffer(b"x"), &buffer(b"y")).into(),
        Array::of2(&JsValue::from_str(&text), &buffer(b"x")).into(),
    ] {
        assert_eq!(read(data), Err(FrameError::NotBuffer));
    }
}

#[wasm_bindgen_test]
fn buffers_that_are_not_a_message_are_malformed() {
    let empty = stdout("");
    // A message's JSON, but for one byte that is not UTF-8 in a string.
    let mut not_utf8 = lifeline_protocol::encode(&stdout("xyzzy")).into_bytes();
    let at = not_utf8
        .windows(5)
        .position(|w| w == b"xyzzy")
        .expect("the text");
    not_utf8[at + 2] = 0xff;
    // A message's JSON, then blanks (which JSON allows) past the limit.
    let mut oversized = lifeline_protocol::encode(&empty).into_bytes();
    oversized.resize(MAX_MESSAGE_BYTES + 1, b' ');
    let cases: [(&str, JsValue); 7] = [
        ("bytes that are not UTF-8", buffer(&not_utf8)),
        ("UTF-8 that is not a message", buffer(b"{\"hello\":1}")),
        ("a message over the protocol's limit", buffer(&oversized)),
        (
            "a text beside a message with no place for one",
            Array::of2(
                &json(&event(EventBody::Lifecycle {
                    phase: "started".into(),
                })),
                &buffer(b"x"),
            )
            .into(),
        ),
        (
            "a text beside an output event that has one",
            Array::of2(&json(&stdout("y")), &buffer(b"x")).into(),
        ),
        (
            "a text beside that is not UTF-8",
            Array::of2(&json(&empty), &buffer(&[0xc3])).into(),
        ),
        (
            "a second part that is not a buffer",
            Array::of2(&json(&empty), &JsValue::from_str("x")).into(),
        ),
    ];
    for (what, data) in cases {
        assert_eq!(read(data), Err(FrameError::Malformed), "{what}");
    }
}
