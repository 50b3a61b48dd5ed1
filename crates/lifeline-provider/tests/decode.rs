//! StreamDecoder on recorded-shape streams of both protocols.

// StreamError carries the partial reply by value (see src/stream.rs).
#![allow(clippy::result_large_err)]

mod common;

use common::*;
use lifeline_provider::{
    ErrorClass, Limits, ProviderKind, Reply, StopReason, StreamDecoder, StreamErrorKind,
    StreamEvent, ToolCall, Usage,
};
use serde_json::json;

const OPENAI: ProviderKind = ProviderKind::OpenAiCompatible;
const ANTHROPIC: ProviderKind = ProviderKind::Anthropic;

fn whole(kind: ProviderKind, events: &[&str]) -> Reply {
    let bytes = joined(events);
    decode(kind, [bytes.as_slice()])
        .0
        .expect("a complete stream")
}

fn text_deltas(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::TextDelta(text) => Some(text.clone()),
            StreamEvent::ToolCall(_) => None,
        })
        .collect()
}

/// Every two-way split, and one byte per feed, must decode to the same reply
/// and the same text.
fn assert_chunking_invariant(kind: ProviderKind, events: &[&str]) {
    let bytes = joined(events);
    let expected = whole(kind, events);
    for cut in 0..=bytes.len() {
        let (reply, polled) = decode(kind, [&bytes[..cut], &bytes[cut..]]);
        assert_eq!(reply.as_ref(), Ok(&expected), "split at byte {cut}");
        assert_eq!(
            text_deltas(&polled).concat(),
            expected.text,
            "split at {cut}"
        );
    }
    let (reply, _) = decode(kind, bytes.chunks(1));
    assert_eq!(reply, Ok(expected));
}

fn written_greeting() -> ToolCall {
    ToolCall {
        id: "call_abc".into(),
        name: "write_file".into(),
        arguments: json!({ "path": "greeting.txt", "content": "hi\n" }),
    }
}

// ---- OpenAI-compatible ----

#[test]
fn openai_text_stream_builds_reply_with_stop_and_usage() {
    let bytes = joined(OPENAI_TEXT);
    let (reply, events) = decode(OPENAI, [bytes.as_slice()]);
    assert_eq!(
        reply,
        Ok(Reply {
            text: OPENAI_TEXT_REPLY.into(),
            tool_calls: vec![],
            stop: Some(StopReason::EndTurn),
            usage: Usage {
                input_tokens: 12,
                output_tokens: 5
            },
        })
    );
    assert_eq!(text_deltas(&events), ["Hello", " wörld 世界"]);
}

#[test]
fn openai_tool_calls_are_assembled_from_fragments_by_index() {
    let bytes = joined(OPENAI_TOOLS);
    let (reply, events) = decode(OPENAI, [bytes.as_slice()]);
    let reply = reply.unwrap();
    let ls = ToolCall {
        id: "call_def".into(),
        name: "run_command".into(),
        arguments: json!({ "command": "ls" }),
    };
    assert_eq!(reply.text, "Writing it.");
    assert_eq!(reply.tool_calls, vec![written_greeting(), ls.clone()]);
    assert_eq!(reply.stop, Some(StopReason::ToolUse));
    assert_eq!(
        reply.usage,
        Usage {
            input_tokens: 40,
            output_tokens: 22
        }
    );
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("Writing it.".into()),
            StreamEvent::ToolCall(written_greeting()),
            StreamEvent::ToolCall(ls),
        ]
    );
}

#[test]
fn openai_tool_call_is_emitted_only_when_complete() {
    let mut decoder = StreamDecoder::new(OPENAI);
    // Everything up to, not including, the finish_reason chunk.
    for event in &OPENAI_TOOLS[..6] {
        decoder.feed(event.as_bytes()).unwrap();
    }
    assert_eq!(
        decoder.poll_event(),
        Some(StreamEvent::TextDelta("Writing it.".into()))
    );
    assert_eq!(decoder.poll_event(), None);
    assert!(decoder.partial().tool_calls.is_empty());
    decoder.feed(OPENAI_TOOLS[6].as_bytes()).unwrap();
    assert!(matches!(
        decoder.poll_event(),
        Some(StreamEvent::ToolCall(_))
    ));
    assert_eq!(decoder.partial().tool_calls.len(), 2);
}

#[test]
fn openai_every_chunking_gives_the_same_reply() {
    assert_chunking_invariant(OPENAI, OPENAI_TEXT);
    assert_chunking_invariant(OPENAI, OPENAI_TOOLS);
}

#[test]
fn openai_done_ends_the_stream_and_later_bytes_are_ignored() {
    let mut bytes = joined(OPENAI_TEXT);
    bytes.extend_from_slice(b"data: not json at all\n\n");
    let (reply, _) = decode(OPENAI, [bytes.as_slice()]);
    assert_eq!(reply.unwrap().text, OPENAI_TEXT_REPLY);
}

#[test]
fn openai_stream_without_done_after_finish_reason_is_complete() {
    // Older llama.cpp servers: finish_reason, then the body just ends.
    let bytes = joined(&OPENAI_TEXT[..5]);
    let (reply, _) = decode(OPENAI, [bytes.as_slice()]);
    let reply = reply.unwrap();
    assert_eq!(reply.text, OPENAI_TEXT_REPLY);
    assert_eq!(reply.stop, Some(StopReason::EndTurn));
}

#[test]
fn openai_stream_cut_mid_reply_keeps_partial_text() {
    let mut bytes = joined(&OPENAI_TEXT[..4]);
    // And half of the next chunk: an unterminated event is dropped, not parsed.
    bytes.extend_from_slice(&OPENAI_TEXT[4].as_bytes()[..30]);
    let (reply, _) = decode(OPENAI, [bytes.as_slice()]);
    let error = reply.unwrap_err();
    assert_eq!(error.kind, StreamErrorKind::Unfinished);
    assert_eq!(error.partial.text, OPENAI_TEXT_REPLY);
    assert_eq!(error.partial.stop, None);
}

#[test]
fn openai_cut_during_tool_call_keeps_only_completed_calls() {
    let bytes = joined(&OPENAI_TOOLS[..5]);
    let error = decode(OPENAI, [bytes.as_slice()]).0.unwrap_err();
    assert_eq!(error.kind, StreamErrorKind::Unfinished);
    assert_eq!(error.partial.text, "Writing it.");
    assert!(error.partial.tool_calls.is_empty());
}

#[test]
fn openai_malformed_chunk_is_an_error_with_partial() {
    let mut bytes = joined(&OPENAI_TEXT[..2]);
    bytes.extend_from_slice(b"data: {\"choices\": [oops\n\n");
    bytes.extend_from_slice(&joined(&OPENAI_TEXT[2..]));
    let error = decode(OPENAI, [bytes.as_slice()]).0.unwrap_err();
    let StreamErrorKind::Malformed { detail } = &error.kind else {
        panic!("expected Malformed, got {:?}", error.kind);
    };
    assert!(detail.contains("not JSON"), "{detail}");
    assert_eq!(error.partial.text, "Hello");
}

#[test]
fn openai_failed_decoder_returns_the_same_error_forever() {
    let mut decoder = StreamDecoder::new(OPENAI);
    decoder.feed(OPENAI_TEXT[1].as_bytes()).unwrap();
    let first = decoder.feed(b"data: [1,2\n\n").unwrap_err();
    let again = decoder.feed(OPENAI_TEXT[3].as_bytes()).unwrap_err();
    assert_eq!(first, again);
    assert_eq!(decoder.partial().text, "Hello");
    assert_eq!(decoder.finish().unwrap_err(), first);
}

#[test]
fn openai_error_chunk_is_a_provider_error() {
    let mut bytes = joined(&OPENAI_TEXT[..2]);
    bytes.extend_from_slice(
        b"data: {\"error\":{\"message\":\"Rate limit reached for requests\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}\n\n",
    );
    let error = decode(OPENAI, [bytes.as_slice()]).0.unwrap_err();
    let StreamErrorKind::Provider(provider) = &error.kind else {
        panic!("expected Provider, got {:?}", error.kind);
    };
    assert_eq!(provider.class, ErrorClass::RateLimit);
    assert_eq!(provider.status, None);
    assert_eq!(provider.message, "Rate limit reached for requests");
    assert_eq!(error.partial.text, "Hello");
}

#[test]
fn openai_error_chunk_message_has_the_key_redacted() {
    let mut decoder = StreamDecoder::new(OPENAI).redacting(Some("sk-planted-123"));
    let error = decoder
        .feed(b"data: {\"error\":{\"message\":\"bad key sk-planted-123\",\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}\n\n")
        .unwrap_err();
    let StreamErrorKind::Provider(provider) = &error.kind else {
        panic!("expected Provider, got {:?}", error.kind);
    };
    assert_eq!(provider.class, ErrorClass::Auth);
    assert!(!format!("{error:?} {decoder:?}").contains("sk-planted-123"));
}

#[test]
fn openai_tool_arguments_that_are_not_an_object_are_malformed_naming_the_tool() {
    let stream = [
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"read_file\",\"arguments\":\"[\\\"a\\\"]\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    ];
    let error = decode(OPENAI, [joined(&stream).as_slice()]).0.unwrap_err();
    let StreamErrorKind::Malformed { detail } = error.kind else {
        panic!("expected Malformed");
    };
    assert!(detail.contains("`read_file`"), "{detail}");
}

#[test]
fn openai_fragments_without_index_or_id_are_accepted() {
    // Ollama-style: each call whole in one chunk, no index; and one call with
    // empty arguments and no id at all.
    let stream = [
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"x\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"ls\"}}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"list_files\",\"arguments\":\"\"}}]}}]}\n\n",
        "data: [DONE]\n\n",
    ];
    let reply = decode(OPENAI, [joined(&stream).as_slice()]).0.unwrap();
    let calls: Vec<_> = reply
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("a", "read_file", json!({ "path": "x" })),
            ("b", "run_command", json!({ "command": "ls" })),
            ("call_0", "list_files", json!({})),
        ]
    );
}

#[test]
fn openai_unknown_finish_reason_is_kept_shortened() {
    let long = "x".repeat(500);
    let chunk = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"{long}\"}}]}}\n\ndata: [DONE]\n\n"
    );
    let reply = decode(OPENAI, [chunk.as_bytes()]).0.unwrap();
    let Some(StopReason::Other(reason)) = reply.stop else {
        panic!("expected Other");
    };
    assert!(reason.chars().count() <= 65);
}

#[test]
fn openai_limits_are_errors_not_growth() {
    let limits = Limits {
        max_text_bytes: 8,
        max_tool_calls: 1,
        max_argument_bytes: 10,
        max_event_bytes: 400,
    };
    let feed_all = |events: &[&str]| {
        let mut decoder = StreamDecoder::with_limits(OPENAI, limits);
        let bytes = joined(events);
        decoder.feed(&bytes).and_then(|()| decoder.finish())
    };

    let text = feed_all(OPENAI_TEXT).unwrap_err();
    assert!(matches!(text.kind, StreamErrorKind::TooLarge { .. }));
    assert_eq!(text.partial.text, "Hello", "what fitted is kept");

    // The second call's first fragment exceeds the count of one.
    let tools = [OPENAI_TOOLS[1], OPENAI_TOOLS[4]];
    let count = feed_all(&tools).unwrap_err();
    assert!(
        matches!(count.kind, StreamErrorKind::TooLarge { what } if what.contains("number of tool calls"))
    );

    let arguments = feed_all(&OPENAI_TOOLS[1..4]).unwrap_err();
    assert!(
        matches!(arguments.kind, StreamErrorKind::TooLarge { what } if what.contains("arguments"))
    );

    let huge = format!("data: {}\n\n", "x".repeat(1000));
    let event = feed_all(&[&huge]).unwrap_err();
    assert!(
        matches!(event.kind, StreamErrorKind::TooLarge { what } if what.contains("stream event"))
    );
}

#[test]
fn one_huge_feed_is_bounded_by_the_event_limit() {
    // 5 MiB without a line break, in a single feed call.
    let mut decoder = StreamDecoder::new(OPENAI);
    let mut bytes = b"data: ".to_vec();
    bytes.resize(5 << 20, b'a');
    let error = decoder.feed(&bytes).unwrap_err();
    assert!(matches!(error.kind, StreamErrorKind::TooLarge { .. }));
}

// ---- Anthropic ----

#[test]
fn anthropic_text_stream_builds_reply_with_stop_and_usage() {
    let bytes = joined(ANTHROPIC_TEXT);
    let (reply, events) = decode(ANTHROPIC, [bytes.as_slice()]);
    assert_eq!(
        reply,
        Ok(Reply {
            text: ANTHROPIC_TEXT_REPLY.into(),
            tool_calls: vec![],
            stop: Some(StopReason::EndTurn),
            usage: Usage {
                input_tokens: 25,
                output_tokens: 15
            },
        })
    );
    assert_eq!(text_deltas(&events), ["Hello", " wörld 世界"]);
}

#[test]
fn anthropic_tool_use_is_assembled_from_json_deltas() {
    let bytes = joined(ANTHROPIC_TOOLS);
    let (reply, events) = decode(ANTHROPIC, [bytes.as_slice()]);
    let reply = reply.unwrap();
    let write = ToolCall {
        id: "toolu_01".into(),
        ..written_greeting()
    };
    let list = ToolCall {
        id: "toolu_02".into(),
        name: "list_files".into(),
        arguments: json!({}),
    };
    assert_eq!(reply.text, "Writing it.");
    assert_eq!(reply.tool_calls, vec![write.clone(), list.clone()]);
    assert_eq!(reply.stop, Some(StopReason::ToolUse));
    assert_eq!(
        reply.usage,
        Usage {
            input_tokens: 80,
            output_tokens: 61
        }
    );
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("Writing it.".into()),
            StreamEvent::ToolCall(write),
            StreamEvent::ToolCall(list),
        ]
    );
}

#[test]
fn anthropic_every_chunking_gives_the_same_reply() {
    assert_chunking_invariant(ANTHROPIC, ANTHROPIC_TEXT);
    assert_chunking_invariant(ANTHROPIC, ANTHROPIC_TOOLS);
}

#[test]
fn anthropic_message_stop_is_required() {
    // Everything but message_stop, even with the stop reason already in.
    let bytes = joined(&ANTHROPIC_TEXT[..7]);
    let error = decode(ANTHROPIC, [bytes.as_slice()]).0.unwrap_err();
    assert_eq!(error.kind, StreamErrorKind::Unfinished);
    assert_eq!(error.partial.stop, Some(StopReason::EndTurn));
}

#[test]
fn anthropic_stream_cut_mid_reply_keeps_partial_text() {
    let bytes = joined(&ANTHROPIC_TEXT[..4]);
    let error = decode(ANTHROPIC, [bytes.as_slice()]).0.unwrap_err();
    assert_eq!(error.kind, StreamErrorKind::Unfinished);
    assert_eq!(error.partial.text, "Hello");
    assert_eq!(error.partial.usage.input_tokens, 25);
}

#[test]
fn anthropic_malformed_chunk_is_an_error_with_partial() {
    let mut bytes = joined(&ANTHROPIC_TEXT[..4]);
    bytes.extend_from_slice(
        b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n",
    );
    let error = decode(ANTHROPIC, [bytes.as_slice()]).0.unwrap_err();
    assert!(
        matches!(error.kind, StreamErrorKind::Malformed { .. }),
        "{:?}",
        error.kind
    );
    assert_eq!(error.partial.text, "Hello");
}

#[test]
fn anthropic_delta_for_a_block_never_started_is_malformed() {
    let mut bytes = joined(&ANTHROPIC_TEXT[..1]);
    bytes.extend_from_slice(ANTHROPIC_TEXT[3].as_bytes());
    let error = decode(ANTHROPIC, [bytes.as_slice()]).0.unwrap_err();
    assert!(matches!(error.kind, StreamErrorKind::Malformed { .. }));
}

#[test]
fn anthropic_tool_input_that_is_not_an_object_is_malformed_naming_the_tool() {
    let mut events = ANTHROPIC_TOOLS[..5].to_vec();
    events.push("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \"}}\n\n");
    events.push(ANTHROPIC_TOOLS[8]);
    let error = decode(ANTHROPIC, [joined(&events).as_slice()])
        .0
        .unwrap_err();
    let StreamErrorKind::Malformed { detail } = error.kind else {
        panic!("expected Malformed");
    };
    assert!(detail.contains("`write_file`"), "{detail}");
    assert_eq!(error.partial.text, "Writing it.");
}

#[test]
fn anthropic_error_event_is_a_provider_error() {
    let cases = [
        ("overloaded_error", "Overloaded", ErrorClass::Overloaded),
        ("rate_limit_error", "Too many", ErrorClass::RateLimit),
        (
            "authentication_error",
            "invalid x-api-key",
            ErrorClass::Auth,
        ),
        (
            "invalid_request_error",
            "prompt is too long: 201000 tokens > 200000 maximum",
            ErrorClass::ContextLength,
        ),
        (
            "invalid_request_error",
            "bad field",
            ErrorClass::InvalidRequest,
        ),
        ("not_found_error", "model: nope", ErrorClass::NotFound),
        ("api_error", "Internal", ErrorClass::Server),
    ];
    for (kind, message, class) in cases {
        let mut bytes = joined(&ANTHROPIC_TEXT[..4]);
        bytes.extend_from_slice(
            format!("event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"{kind}\",\"message\":\"{message}\"}}}}\n\n")
                .as_bytes(),
        );
        let error = decode(ANTHROPIC, [bytes.as_slice()]).0.unwrap_err();
        let StreamErrorKind::Provider(provider) = &error.kind else {
            panic!("expected Provider for {kind}");
        };
        assert_eq!(provider.class, class, "{kind}: {message}");
        assert_eq!(provider.message, message);
        assert_eq!(error.partial.text, "Hello");
    }
}

#[test]
fn anthropic_unknown_events_and_blocks_are_ignored() {
    let mut events = ANTHROPIC_TEXT[..2].to_vec();
    events.extend([
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
        "event: brand_new_event\ndata: {\"type\":\"brand_new_event\"}\n\n",
    ]);
    events.extend(&ANTHROPIC_TEXT[2..]);
    assert_eq!(whole(ANTHROPIC, &events).text, ANTHROPIC_TEXT_REPLY);
}

#[test]
fn anthropic_without_event_lines_uses_the_data_type() {
    let stripped: Vec<String> = ANTHROPIC_TOOLS
        .iter()
        .map(|event| {
            event
                .lines()
                .filter(|l| !l.starts_with("event:"))
                .collect::<Vec<_>>()
                .join("\n")
                + "\n\n"
        })
        .collect();
    let stripped: Vec<&str> = stripped.iter().map(String::as_str).collect();
    assert_eq!(
        whole(ANTHROPIC, &stripped),
        whole(ANTHROPIC, ANTHROPIC_TOOLS)
    );
}

#[test]
fn anthropic_limits_are_errors_not_growth() {
    let limits = Limits {
        max_text_bytes: 8,
        max_tool_calls: 1,
        max_argument_bytes: 10,
        max_event_bytes: 1000,
    };
    let feed_all = |events: &[&str]| {
        let mut decoder = StreamDecoder::with_limits(ANTHROPIC, limits);
        decoder
            .feed(&joined(events))
            .and_then(|()| decoder.finish())
    };
    let text = feed_all(ANTHROPIC_TEXT).unwrap_err();
    assert!(matches!(text.kind, StreamErrorKind::TooLarge { what } if what.contains("text")));
    assert_eq!(text.partial.text, "Hello");

    let mut tools = ANTHROPIC_TOOLS.to_vec();
    tools.remove(2); // the text, which would exceed the text limit first
    let error = feed_all(&tools).unwrap_err();
    assert!(matches!(error.kind, StreamErrorKind::TooLarge { what } if what.contains("arguments")));

    let only_calls = [
        ANTHROPIC_TOOLS[0],
        ANTHROPIC_TOOLS[9],
        ANTHROPIC_TOOLS[10],
        ANTHROPIC_TOOLS[9]
            .replace("\"index\":2", "\"index\":3")
            .leak(),
    ];
    let error = feed_all(&only_calls).unwrap_err();
    assert!(
        matches!(error.kind, StreamErrorKind::TooLarge { what } if what.contains("number of tool calls"))
    );
}

// ---- both ----

#[test]
fn arbitrary_bytes_never_panic() {
    // A fixed xorshift stream: no dependency, reproducible.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet: &[u8] = b"data: event:{}[]\",:\n\n0123456789abc\\\xff\xe4\r";
    for kind in [OPENAI, ANTHROPIC] {
        for _ in 0..300 {
            let mut decoder = StreamDecoder::new(kind);
            for _ in 0..(next() % 20) {
                let len = (next() % 64) as usize;
                let chunk: Vec<u8> = (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect();
                let _ = decoder.feed(&chunk);
                while decoder.poll_event().is_some() {}
            }
            let _ = decoder.finish();
        }
        // Recorded streams with bytes flipped.
        for events in [OPENAI_TOOLS, ANTHROPIC_TOOLS] {
            let original = joined(events);
            for _ in 0..200 {
                let mut bytes = original.clone();
                let at = (next() % bytes.len() as u64) as usize;
                bytes[at] = (next() % 256) as u8;
                let _ = decode(kind, [bytes.as_slice()]);
            }
        }
    }
}

#[test]
fn finish_on_an_empty_body_is_unfinished() {
    for kind in [OPENAI, ANTHROPIC] {
        let error = StreamDecoder::new(kind).finish().unwrap_err();
        assert_eq!(error.kind, StreamErrorKind::Unfinished);
        assert_eq!(error.partial, Reply::default());
    }
}

#[test]
fn a_body_with_bytes_but_no_event_is_not_an_event_stream() {
    // A server that ignored `stream: true` and answered JSON, or an HTML
    // page: not "ended unfinished" but "not understood".
    for body in [
        "{\"choices\":[{\"message\":{\"content\":\"hi\"}}]}",
        "{malformed json: <<<chaos>>>",
        "<html><body>Bad gateway</body></html>\n",
    ] {
        for kind in [OPENAI, ANTHROPIC] {
            let error = decode(kind, [body.as_bytes()]).0.unwrap_err();
            assert!(
                matches!(&error.kind, StreamErrorKind::Malformed { detail } if detail.contains("no event-stream event")),
                "{body}: {:?}",
                error.kind
            );
            assert_eq!(error.partial, Reply::default());
        }
    }
    // A comment alone is no event either, but a stream that had events and
    // then ended is unfinished, not malformed.
    let bytes = joined(&OPENAI_TEXT[..2]);
    let error = decode(OPENAI, [bytes.as_slice()]).0.unwrap_err();
    assert_eq!(error.kind, StreamErrorKind::Unfinished);
}

// ---- Unreadable shapes end the reply (never skipped silently) ----

/// `bad` spliced after the first text of each protocol's stream ends the
/// reply as malformed, with the text before it kept.
fn assert_unreadable(kind: ProviderKind, prefix: &[&str], bad: &str, partial: &str) {
    let mut bytes = joined(prefix);
    bytes.extend_from_slice(bad.as_bytes());
    let error = decode(kind, [bytes.as_slice()]).0.unwrap_err();
    assert!(
        matches!(error.kind, StreamErrorKind::Malformed { .. }),
        "{bad}: {:?}",
        error.kind
    );
    assert_eq!(error.partial.text, partial, "{bad}");
}

#[test]
fn openai_unreadable_shapes_are_malformed_not_skipped() {
    for bad in [
        "data: {\"choices\":{\"delta\":{\"content\":\"x\"}}}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":42}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":{\"text\":\"x\"}}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":{\"index\":0}}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":7}]}\n\n",
        "data: not json at all\n\n",
    ] {
        assert_unreadable(OPENAI, &OPENAI_TEXT[..2], bad, "Hello");
    }
    // What the protocol allows stays readable: null content, no choices.
    let mut bytes = joined(&OPENAI_TEXT[..2]);
    bytes.extend_from_slice(b"data: {\"choices\":[{\"delta\":{\"content\":null}}]}\n\n");
    bytes.extend_from_slice(b"data: {\"choices\":[],\"usage\":null}\n\n");
    bytes.extend_from_slice(&joined(&OPENAI_TEXT[2..]));
    assert!(decode(OPENAI, [bytes.as_slice()]).0.is_ok());
}

#[test]
fn anthropic_unreadable_shapes_are_malformed_not_skipped() {
    for bad in [
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":5}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"text\":\"lost\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":[1]}}\n\n",
        "event: content_block_delta\ndata: {not json\n\n",
    ] {
        assert_unreadable(ANTHROPIC, &ANTHROPIC_TEXT[..4], bad, "Hello");
    }
}
