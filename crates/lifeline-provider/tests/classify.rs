//! classify_http / classify_transport: the class table, message extraction,
//! and that a planted key never survives into an error.

use lifeline_provider::{
    classify_http, classify_transport, ErrorClass, WaitHeaders, MAX_MESSAGE_CHARS,
};

#[test]
fn classify_http_table() {
    let openai_context = r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    let anthropic_context = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
    let llama_context = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#;
    let plain_400 = r#"{"error":{"message":"Unsupported parameter: 'max_tokens'","type":"invalid_request_error"}}"#;
    let cases: &[(u16, &str, ErrorClass)] = &[
        (401, "", ErrorClass::Auth),
        (403, "forbidden", ErrorClass::Auth),
        (429, "", ErrorClass::RateLimit),
        (404, "", ErrorClass::NotFound),
        (400, openai_context, ErrorClass::ContextLength),
        (400, anthropic_context, ErrorClass::ContextLength),
        (400, llama_context, ErrorClass::ContextLength),
        (413, "too many tokens in request", ErrorClass::ContextLength),
        (
            422,
            "maximum context length exceeded",
            ErrorClass::ContextLength,
        ),
        (400, plain_400, ErrorClass::InvalidRequest),
        (413, "payload too large", ErrorClass::InvalidRequest),
        (405, "", ErrorClass::InvalidRequest),
        (422, "bad", ErrorClass::InvalidRequest),
        (500, "", ErrorClass::Server),
        (502, "<html>bad gateway</html>", ErrorClass::Server),
        (503, "", ErrorClass::Overloaded),
        (
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ErrorClass::Overloaded,
        ),
        (200, "", ErrorClass::Server),
        (302, "", ErrorClass::Server),
    ];
    for &(status, body, class) in cases {
        let error = classify_http(status, body, WaitHeaders::default(), None);
        assert_eq!(error.class, class, "{status} {body}");
        assert_eq!(error.status, Some(status));
        assert!(!error.message.is_empty());
        assert!(!error.class.advice().is_empty());
    }
}

#[test]
fn classify_http_extracts_the_nested_message() {
    let openai = r#"{"error":{"message":"Incorrect model","type":"invalid_request_error"}}"#;
    assert_eq!(
        classify_http(400, openai, WaitHeaders::default(), None).message,
        "Incorrect model"
    );
    let anthropic =
        r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}"#;
    assert_eq!(
        classify_http(404, anthropic, WaitHeaders::default(), None).message,
        "model: claude-x"
    );
    let ollama = r#"{"error":"model \"llama9\" not found, try pulling it first"}"#;
    assert_eq!(
        classify_http(404, ollama, WaitHeaders::default(), None).message,
        "model \"llama9\" not found, try pulling it first"
    );
    assert_eq!(
        classify_http(502, "Bad Gateway\n", WaitHeaders::default(), None).message,
        "Bad Gateway"
    );
    let empty = classify_http(503, "", WaitHeaders::default(), None).message;
    assert!(empty.contains("503"), "{empty}");
}

#[test]
fn classify_http_reads_retry_after_seconds() {
    assert_eq!(
        classify_http(429, "", WaitHeaders::retry_after("17"), None).retry_after_ms,
        Some(17_000)
    );
    assert_eq!(
        classify_http(429, "", WaitHeaders::retry_after("soon"), None).retry_after_ms,
        None
    );
    assert_eq!(
        classify_http(429, "", WaitHeaders::default(), None).retry_after_ms,
        None
    );
}

#[test]
fn planted_key_in_a_401_body_never_reaches_the_error() {
    let key = "sk-ant-api03-PLANTED-key_0123456789";
    let bodies = [
        format!(
            r#"{{"error":{{"message":"Invalid API key: {key}","type":"authentication_error"}}}}"#
        ),
        format!("raw text echoing Bearer {key} back"),
        format!("{}{key}", "x".repeat(490)),
    ];
    for body in bodies {
        let error = classify_http(401, &body, WaitHeaders::default(), Some(key));
        assert_eq!(error.class, ErrorClass::Auth);
        let shown = format!(
            "{error:?} {error} {}",
            serde_json::to_string(&error).unwrap()
        );
        assert!(!shown.contains("PLANTED"), "{shown}");
        assert!(error.message.contains("[redacted]"), "{}", error.message);
        assert!(error.message.chars().count() <= MAX_MESSAGE_CHARS);
    }
    let transport = classify_transport(&format!("fetch failed for key {key}"), Some(key));
    assert!(!format!("{transport:?}").contains("PLANTED"));
}

#[test]
fn messages_are_truncated_to_500_chars() {
    let body = format!(r#"{{"error":{{"message":"{}"}}}}"#, "é".repeat(2000));
    let message = classify_http(500, &body, WaitHeaders::default(), None).message;
    assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS);
    let html = "<html>".repeat(1000);
    assert!(
        classify_http(502, &html, WaitHeaders::default(), None)
            .message
            .chars()
            .count()
            <= MAX_MESSAGE_CHARS
    );
}

#[test]
fn transport_failures_are_transport() {
    let error = classify_transport("TypeError: Failed to fetch", None);
    assert_eq!(error.class, ErrorClass::Transport);
    assert_eq!(error.status, None);
    assert_eq!(error.message, "TypeError: Failed to fetch");
    assert!(error.class.advice().contains("OLLAMA_ORIGINS"));
    assert!(!classify_transport("", None).message.is_empty());
}

#[test]
fn error_class_serializes_snake_case() {
    assert_eq!(
        serde_json::to_string(&ErrorClass::ContextLength).unwrap(),
        "\"context_length\""
    );
    assert_eq!(
        serde_json::from_str::<ErrorClass>("\"rate_limit\"").unwrap(),
        ErrorClass::RateLimit
    );
}
