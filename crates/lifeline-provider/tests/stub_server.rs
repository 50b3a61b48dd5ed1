//! The crate end to end over real sockets: a stub server speaking each
//! provider's wire format on 127.0.0.1, a plain HTTP client (ureq) sending what
//! `build_request` built and feeding the body to `StreamDecoder` in small
//! reads, as the worker will with `fetch`.
//!
//! Synchronisation is the socket's lifecycle only: each server thread serves
//! one connection and returns the request it saw when it is joined.

mod common;

use common::*;
use lifeline_provider::{
    build_request, classify_http, Conversation, Endpoint, ErrorClass, HttpRequest, Message,
    ProviderError, ProviderKind, Reply, StopReason, StreamDecoder, StreamError, StreamErrorKind,
    StreamEvent, ToolName, WaitHeaders,
};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

const KEY: &str = "sk-stub-PLANTED-9876";

/// What the stub answers.
enum Answer {
    /// 200 with `text/event-stream`, chunked, one TCP write per part.
    /// `terminate: false` closes the socket before the final empty chunk,
    /// as a dropped connection would.
    Stream { parts: Vec<String>, terminate: bool },
    /// A JSON error, delimited by connection close.
    Error {
        status: u16,
        body: String,
        retry_after: Option<&'static str>,
    },
}

/// The request as the stub received it.
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn start_stub(expected_path: &'static str, answer: Answer) -> (String, JoinHandle<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        let seen = read_request(&stream);
        let mut stream = stream;
        if seen.path != expected_path {
            let body = r#"{"error":{"message":"no such route"}}"#;
            write!(
                stream,
                "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            return seen;
        }
        match answer {
            Answer::Stream { parts, terminate } => {
                stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
                    )
                    .unwrap();
                for part in parts {
                    // The client may already have given up (malformed
                    // scenarios); that is not the server's failure.
                    let chunk = format!("{:x}\r\n{part}\r\n", part.len());
                    if stream.write_all(chunk.as_bytes()).is_err() {
                        return seen;
                    }
                    let _ = stream.flush();
                }
                if terminate {
                    let _ = stream.write_all(b"0\r\n\r\n");
                }
            }
            Answer::Error {
                status,
                body,
                retry_after,
            } => {
                let retry = retry_after
                    .map(|value| format!("retry-after: {value}\r\n"))
                    .unwrap_or_default();
                write!(
                    stream,
                    "HTTP/1.1 {status} Error\r\ncontent-type: application/json\r\n{retry}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
            }
        }
        let _ = stream.shutdown(std::net::Shutdown::Both);
        seen
    });
    (base, server)
}

fn read_request(stream: &TcpStream) -> Seen {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let mut words = line.split_whitespace();
    let method = words.next().unwrap_or("").to_owned();
    let path = words.next().unwrap_or("").to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (name, value) = trimmed.split_once(':').expect("a header line");
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .map(|(_, value)| value.parse().unwrap())
        .expect("the client sends a content-length");
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    Seen {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).expect("a JSON body"),
    }
}

#[derive(Debug)]
enum Outcome {
    Reply(Reply),
    Stream(StreamError),
    Http(ProviderError),
}

/// The client half, doing what the controller worker will do with `fetch`.
fn call(request: &HttpRequest, kind: ProviderKind) -> (Outcome, Vec<StreamEvent>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        // A safety net against a hung test, not synchronisation.
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into();
    let mut builder = agent.post(&request.url);
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    let response = builder.send(&request.body).expect("the stub answers");
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let mut body = response.into_body().into_reader();
    if status != 200 {
        let mut text = String::new();
        body.read_to_string(&mut text).unwrap();
        let error = classify_http(
            status,
            &text,
            WaitHeaders {
                retry_after: retry_after.as_deref(),
                ..WaitHeaders::default()
            },
            Some(KEY),
        );
        return (Outcome::Http(error), Vec::new());
    }
    let mut decoder = StreamDecoder::new(kind).redacting(Some(KEY));
    let mut events = Vec::new();
    let mut buffer = [0u8; 7];
    loop {
        // A read error is the body ending early, as a rejected fetch read is.
        let read = body.read(&mut buffer).unwrap_or(0);
        if read == 0 {
            break;
        }
        let fed = decoder.feed(&buffer[..read]);
        while let Some(event) = decoder.poll_event() {
            events.push(event);
        }
        if let Err(error) = fed {
            return (Outcome::Stream(error), events);
        }
    }
    let outcome = match decoder.finish() {
        Ok(reply) => Outcome::Reply(reply),
        Err(error) => Outcome::Stream(error),
    };
    (outcome, events)
}

fn conversation() -> Conversation {
    Conversation {
        system: "Be brief.".into(),
        messages: vec![Message::User {
            text: "write a greeting".into(),
        }],
    }
}

fn parts(events: &[&str]) -> Vec<String> {
    events.iter().map(|event| event.to_string()).collect()
}

fn run(kind: ProviderKind, answer: Answer) -> (Outcome, Vec<StreamEvent>, Seen) {
    let path = match kind {
        ProviderKind::OpenAiCompatible => "/v1/chat/completions",
        ProviderKind::Anthropic => "/v1/messages",
    };
    let (base, server) = start_stub(path, answer);
    let base_url = match kind {
        ProviderKind::OpenAiCompatible => format!("{base}/v1"),
        ProviderKind::Anthropic => base,
    };
    let endpoint = Endpoint {
        kind,
        base_url,
        model: "stub-model".into(),
        max_tokens: 256,
    };
    let request = build_request(&endpoint, Some(KEY), &conversation(), &ToolName::ALL).unwrap();
    let (outcome, events) = call(&request, kind);
    let seen = server.join().expect("the stub thread");
    check_request(kind, &seen);
    (outcome, events, seen)
}

fn check_request(kind: ProviderKind, seen: &Seen) {
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.header("content-type"), Some("application/json"));
    assert_eq!(seen.body["model"], json!("stub-model"));
    assert_eq!(seen.body["stream"], json!(true));
    assert_eq!(seen.body["tools"].as_array().map(Vec::len), Some(4));
    match kind {
        ProviderKind::OpenAiCompatible => {
            assert_eq!(seen.path, "/v1/chat/completions");
            assert_eq!(
                seen.header("authorization"),
                Some(format!("Bearer {KEY}").as_str())
            );
            assert_eq!(seen.header("x-api-key"), None);
            assert_eq!(seen.body["messages"][0]["role"], json!("system"));
        }
        ProviderKind::Anthropic => {
            assert_eq!(seen.path, "/v1/messages");
            assert_eq!(seen.header("x-api-key"), Some(KEY));
            assert_eq!(seen.header("authorization"), None);
            assert_eq!(seen.header("anthropic-version"), Some("2023-06-01"));
            assert_eq!(
                seen.header("anthropic-dangerous-direct-browser-access"),
                Some("true")
            );
            assert_eq!(seen.body["system"], json!("Be brief."));
        }
    }
}

fn expect_reply(outcome: Outcome) -> Reply {
    match outcome {
        Outcome::Reply(reply) => reply,
        other => panic!("expected a reply, got {other:?}"),
    }
}

fn expect_stream_error(outcome: Outcome) -> StreamError {
    match outcome {
        Outcome::Stream(error) => error,
        other => panic!("expected a stream error, got {other:?}"),
    }
}

fn expect_http_error(outcome: Outcome) -> ProviderError {
    match outcome {
        Outcome::Http(error) => error,
        other => panic!("expected an HTTP error, got {other:?}"),
    }
}

fn malformed_after_first_text(events: &[&str], text_events: usize) -> Vec<String> {
    let mut out = parts(&events[..text_events]);
    out.push("data: {\"this is\": not json}\n\n".into());
    out.extend(parts(&events[text_events..]));
    out
}

// ---- OpenAI-compatible ----

#[test]
fn openai_stub_full_text_reply() {
    let answer = Answer::Stream {
        parts: parts(OPENAI_TEXT),
        terminate: true,
    };
    let (outcome, events, _) = run(ProviderKind::OpenAiCompatible, answer);
    let reply = expect_reply(outcome);
    assert_eq!(reply.text, OPENAI_TEXT_REPLY);
    assert_eq!(reply.stop, Some(StopReason::EndTurn));
    assert_eq!(reply.usage.input_tokens, 12);
    let streamed: String = events
        .iter()
        .map(|event| match event {
            StreamEvent::TextDelta(text) => text.as_str(),
            StreamEvent::ToolCall(_) => "",
        })
        .collect();
    assert_eq!(streamed, OPENAI_TEXT_REPLY);
}

#[test]
fn openai_stub_tool_call_reply() {
    let answer = Answer::Stream {
        parts: parts(OPENAI_TOOLS),
        terminate: true,
    };
    let (outcome, events, _) = run(ProviderKind::OpenAiCompatible, answer);
    let reply = expect_reply(outcome);
    assert_eq!(reply.stop, Some(StopReason::ToolUse));
    assert_eq!(reply.tool_calls.len(), 2);
    assert_eq!(reply.tool_calls[0].name, "write_file");
    assert_eq!(
        reply.tool_calls[0].arguments,
        json!({ "path": "greeting.txt", "content": "hi\n" })
    );
    let calls = events
        .iter()
        .filter(|event| matches!(event, StreamEvent::ToolCall(_)))
        .count();
    assert_eq!(calls, 2);
}

#[test]
fn openai_stub_stream_cut_mid_reply_keeps_partial_text() {
    let answer = Answer::Stream {
        parts: parts(&OPENAI_TEXT[..4]),
        terminate: false,
    };
    let (outcome, _, _) = run(ProviderKind::OpenAiCompatible, answer);
    let error = expect_stream_error(outcome);
    assert_eq!(error.kind, StreamErrorKind::Unfinished);
    assert_eq!(error.partial.text, OPENAI_TEXT_REPLY);
}

#[test]
fn openai_stub_malformed_chunk_is_an_error_with_partial() {
    let answer = Answer::Stream {
        parts: malformed_after_first_text(OPENAI_TEXT, 2),
        terminate: true,
    };
    let (outcome, _, _) = run(ProviderKind::OpenAiCompatible, answer);
    let error = expect_stream_error(outcome);
    assert!(
        matches!(error.kind, StreamErrorKind::Malformed { .. }),
        "{:?}",
        error.kind
    );
    assert_eq!(error.partial.text, "Hello");
}

#[test]
fn openai_stub_http_401_is_auth_without_the_key() {
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}}}"#
    );
    let answer = Answer::Error {
        status: 401,
        body,
        retry_after: None,
    };
    let (outcome, _, _) = run(ProviderKind::OpenAiCompatible, answer);
    let error = expect_http_error(outcome);
    assert_eq!(error.class, ErrorClass::Auth);
    assert_eq!(error.status, Some(401));
    assert!(error
        .message
        .starts_with("Incorrect API key provided: [redacted]"));
    assert!(!format!("{error:?} {error}").contains("PLANTED"));
}

#[test]
fn openai_stub_429_carries_retry_after() {
    let answer = Answer::Error {
        status: 429,
        body: r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#.into(),
        retry_after: Some("7"),
    };
    let (outcome, _, _) = run(ProviderKind::OpenAiCompatible, answer);
    let error = expect_http_error(outcome);
    assert_eq!(error.class, ErrorClass::RateLimit);
    assert_eq!(error.retry_after_ms, Some(7_000));
    assert_eq!(error.message, "Rate limit reached");
}

// ---- Anthropic ----

#[test]
fn anthropic_stub_full_text_reply() {
    let answer = Answer::Stream {
        parts: parts(ANTHROPIC_TEXT),
        terminate: true,
    };
    let (outcome, _, _) = run(ProviderKind::Anthropic, answer);
    let reply = expect_reply(outcome);
    assert_eq!(reply.text, ANTHROPIC_TEXT_REPLY);
    assert_eq!(reply.stop, Some(StopReason::EndTurn));
    assert_eq!(reply.usage.output_tokens, 15);
}

#[test]
fn anthropic_stub_tool_call_reply() {
    let answer = Answer::Stream {
        parts: parts(ANTHROPIC_TOOLS),
        terminate: true,
    };
    let (outcome, _, _) = run(ProviderKind::Anthropic, answer);
    let reply = expect_reply(outcome);
    assert_eq!(reply.stop, Some(StopReason::ToolUse));
    let names: Vec<&str> = reply.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["write_file", "list_files"]);
    assert_eq!(reply.tool_calls[0].id, "toolu_01");
}

#[test]
fn anthropic_stub_stream_cut_mid_reply_keeps_partial_text() {
    let answer = Answer::Stream {
        parts: parts(&ANTHROPIC_TEXT[..4]),
        terminate: false,
    };
    let (outcome, _, _) = run(ProviderKind::Anthropic, answer);
    let error = expect_stream_error(outcome);
    assert_eq!(error.kind, StreamErrorKind::Unfinished);
    assert_eq!(error.partial.text, "Hello");
}

#[test]
fn anthropic_stub_malformed_chunk_is_an_error_with_partial() {
    let answer = Answer::Stream {
        parts: malformed_after_first_text(ANTHROPIC_TEXT, 4),
        terminate: true,
    };
    let (outcome, _, _) = run(ProviderKind::Anthropic, answer);
    let error = expect_stream_error(outcome);
    assert!(
        matches!(error.kind, StreamErrorKind::Malformed { .. }),
        "{:?}",
        error.kind
    );
    assert_eq!(error.partial.text, "Hello");
}

#[test]
fn anthropic_stub_http_401_is_auth_without_the_key() {
    let body = format!(
        r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key {KEY}"}}}}"#
    );
    let answer = Answer::Error {
        status: 401,
        body,
        retry_after: None,
    };
    let (outcome, _, _) = run(ProviderKind::Anthropic, answer);
    let error = expect_http_error(outcome);
    assert_eq!(error.class, ErrorClass::Auth);
    assert_eq!(error.message, "invalid x-api-key [redacted]");
    assert!(!format!("{error:?}").contains("PLANTED"));
}

#[test]
fn anthropic_stub_429_carries_retry_after() {
    let answer = Answer::Error {
        status: 429,
        body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#.into(),
        retry_after: Some("30"),
    };
    let (outcome, _, _) = run(ProviderKind::Anthropic, answer);
    let error = expect_http_error(outcome);
    assert_eq!(error.class, ErrorClass::RateLimit);
    assert_eq!(error.retry_after_ms, Some(30_000));
}
