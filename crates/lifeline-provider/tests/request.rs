//! build_request golden tests for both protocols.

use lifeline_provider::{
    build_request, tool_schema, BuildError, Conversation, Endpoint, HttpRequest, Message,
    ProviderKind, ToolCall, ToolName,
};
use serde_json::{json, Value};

const KEY: &str = "sk-test-SECRET-4242";

fn endpoint(kind: ProviderKind, base_url: &str) -> Endpoint {
    Endpoint {
        kind,
        base_url: base_url.into(),
        model: "some-model".into(),
        max_tokens: 1024,
    }
}

/// A user asks, the model calls two tools, both results come back, and the
/// user follows up: every message shape in one conversation.
fn tool_conversation() -> Conversation {
    Conversation {
        system: "You are careful.".into(),
        messages: vec![
            Message::User {
                text: "write a greeting".into(),
            },
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "call_1".into(),
                        name: "write_file".into(),
                        arguments: json!({ "path": "greeting.txt", "content": "hi\n" }),
                    },
                    ToolCall {
                        id: "call_2".into(),
                        name: "run_command".into(),
                        arguments: json!({ "command": "cat greeting.txt" }),
                    },
                ],
            },
            Message::ToolResult {
                call_id: "call_1".into(),
                name: "write_file".into(),
                content: "wrote 3 bytes".into(),
                is_error: false,
            },
            Message::ToolResult {
                call_id: "call_2".into(),
                name: "run_command".into(),
                content: "cat: no such file".into(),
                is_error: true,
            },
            Message::Assistant {
                text: "Done.".into(),
                tool_calls: vec![],
            },
            Message::User {
                text: "thanks".into(),
            },
        ],
    }
}

fn body(request: &HttpRequest) -> Value {
    serde_json::from_str(&request.body).expect("the body is JSON")
}

/// Chat Completions carries arguments as a JSON string; parsing it back keeps
/// the golden test independent of key order.
fn with_parsed_arguments(mut body: Value) -> Value {
    for message in body["messages"].as_array_mut().unwrap() {
        let calls = message.get_mut("tool_calls").and_then(Value::as_array_mut);
        for call in calls.into_iter().flatten() {
            let text = call["function"]["arguments"]
                .as_str()
                .expect("a JSON string");
            call["function"]["arguments"] = serde_json::from_str(text).unwrap();
        }
    }
    body
}

fn headers(request: &HttpRequest) -> Vec<(&str, &str)> {
    request
        .headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect()
}

#[test]
fn openai_request_golden_with_tool_calls_and_results() {
    let request = build_request(
        &endpoint(ProviderKind::OpenAiCompatible, "http://localhost:11434/v1/"),
        Some(KEY),
        &tool_conversation(),
        &[ToolName::WriteFile, ToolName::RunCommand],
    )
    .unwrap();
    assert_eq!(request.url, "http://localhost:11434/v1/chat/completions");
    assert_eq!(
        headers(&request),
        [
            ("content-type", "application/json"),
            ("authorization", "Bearer sk-test-SECRET-4242"),
        ]
    );
    assert_eq!(
        with_parsed_arguments(body(&request)),
        json!({
            "model": "some-model",
            "stream": true,
            "stream_options": { "include_usage": true },
            "max_tokens": 1024,
            "messages": [
                { "role": "system", "content": "You are careful." },
                { "role": "user", "content": "write a greeting" },
                {
                    "role": "assistant",
                    "content": null,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {
                                "name": "write_file",
                                "arguments": { "path": "greeting.txt", "content": "hi\n" },
                            },
                        },
                        {
                            "id": "call_2",
                            "type": "function",
                            "function": {
                                "name": "run_command",
                                "arguments": { "command": "cat greeting.txt" },
                            },
                        },
                    ],
                },
                { "role": "tool", "tool_call_id": "call_1", "content": "wrote 3 bytes" },
                { "role": "tool", "tool_call_id": "call_2", "content": "Error: cat: no such file" },
                { "role": "assistant", "content": "Done." },
                { "role": "user", "content": "thanks" },
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "write_file",
                        "description": ToolName::WriteFile.description(),
                        "parameters": tool_schema(ToolName::WriteFile),
                    },
                },
                {
                    "type": "function",
                    "function": {
                        "name": "run_command",
                        "description": ToolName::RunCommand.description(),
                        "parameters": tool_schema(ToolName::RunCommand),
                    },
                },
            ],
        })
    );
}

#[test]
fn openai_request_without_key_tools_or_system_omits_them() {
    let conversation = Conversation {
        system: String::new(),
        messages: vec![Message::User { text: "hi".into() }],
    };
    let request = build_request(
        &endpoint(ProviderKind::OpenAiCompatible, "https://api.openai.com/v1"),
        None,
        &conversation,
        &[],
    )
    .unwrap();
    assert_eq!(request.url, "https://api.openai.com/v1/chat/completions");
    assert_eq!(headers(&request), [("content-type", "application/json")]);
    let body = body(&request);
    assert_eq!(
        body["messages"],
        json!([{ "role": "user", "content": "hi" }])
    );
    assert!(body.get("tools").is_none());
    // An empty key field is "no key", not an empty bearer token.
    let empty = build_request(
        &endpoint(ProviderKind::OpenAiCompatible, "https://api.openai.com/v1"),
        Some(""),
        &conversation,
        &[],
    )
    .unwrap();
    assert_eq!(empty.headers.len(), 1);
}

#[test]
fn anthropic_request_golden_with_tool_use_and_grouped_results() {
    let request = build_request(
        &endpoint(ProviderKind::Anthropic, ""),
        Some(KEY),
        &tool_conversation(),
        &[ToolName::ReadFile, ToolName::ListFiles],
    )
    .unwrap();
    assert_eq!(request.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(
        headers(&request),
        [
            ("content-type", "application/json"),
            ("x-api-key", KEY),
            ("anthropic-version", "2023-06-01"),
            ("anthropic-dangerous-direct-browser-access", "true"),
        ]
    );
    assert_eq!(
        body(&request),
        json!({
            "model": "some-model",
            "max_tokens": 1024,
            "stream": true,
            "system": "You are careful.",
            "messages": [
                { "role": "user", "content": [{ "type": "text", "text": "write a greeting" }] },
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "call_1",
                            "name": "write_file",
                            "input": { "path": "greeting.txt", "content": "hi\n" },
                        },
                        {
                            "type": "tool_use",
                            "id": "call_2",
                            "name": "run_command",
                            "input": { "command": "cat greeting.txt" },
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "call_1",
                            "content": "wrote 3 bytes",
                            "is_error": false,
                        },
                        {
                            "type": "tool_result",
                            "tool_use_id": "call_2",
                            "content": "cat: no such file",
                            "is_error": true,
                        },
                    ],
                },
                { "role": "assistant", "content": [{ "type": "text", "text": "Done." }] },
                { "role": "user", "content": [{ "type": "text", "text": "thanks" }] },
            ],
            "tools": [
                {
                    "name": "read_file",
                    "description": ToolName::ReadFile.description(),
                    "input_schema": tool_schema(ToolName::ReadFile),
                },
                {
                    "name": "list_files",
                    "description": ToolName::ListFiles.description(),
                    "input_schema": tool_schema(ToolName::ListFiles),
                },
            ],
        })
    );
}

#[test]
fn anthropic_url_accepts_bare_host_or_v1() {
    let url = |base: &str| {
        build_request(
            &endpoint(ProviderKind::Anthropic, base),
            None,
            &Conversation::default(),
            &[],
        )
        .unwrap()
        .url
    };
    assert_eq!(
        url("https://api.anthropic.com"),
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(
        url("https://api.anthropic.com/"),
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(
        url("http://127.0.0.1:8080/v1"),
        "http://127.0.0.1:8080/v1/messages"
    );
    assert_eq!(
        url("http://127.0.0.1:8080/v1/"),
        "http://127.0.0.1:8080/v1/messages"
    );
    assert_eq!(url("   "), "https://api.anthropic.com/v1/messages");
}

#[test]
fn tool_schemas_name_their_required_arguments() {
    let required = |tool| tool_schema(tool).get("required").cloned();
    assert_eq!(required(ToolName::ReadFile), Some(json!(["path"])));
    assert_eq!(
        required(ToolName::WriteFile),
        Some(json!(["path", "content"]))
    );
    assert_eq!(required(ToolName::RunCommand), Some(json!(["command"])));
    assert_eq!(required(ToolName::ListFiles), None);
    assert_eq!(
        tool_schema(ToolName::ListFiles)["properties"]["path"]["default"],
        json!(".")
    );
    for tool in ToolName::ALL {
        assert_eq!(ToolName::from_wire_name(tool.wire_name()), Some(tool));
        assert_eq!(serde_json::to_value(tool).unwrap(), json!(tool.wire_name()));
    }
    assert_eq!(ToolName::from_wire_name("rm_rf"), None);
}

#[test]
fn request_debug_redacts_credentials() {
    for kind in [ProviderKind::OpenAiCompatible, ProviderKind::Anthropic] {
        let request = build_request(
            &endpoint(kind, "http://localhost:1/v1"),
            Some(KEY),
            &tool_conversation(),
            &[],
        )
        .unwrap();
        let debug = format!("{request:?} {request:#?}");
        assert!(!debug.contains("SECRET"), "{debug}");
        assert!(debug.contains("[redacted]"));
        assert!(debug.contains("content-type"));
        assert!(
            !request.body.contains("SECRET"),
            "the key is only in headers"
        );
    }
    // Header names are matched without regard to case.
    let request = HttpRequest {
        url: "http://x".into(),
        headers: vec![
            ("Authorization".into(), "Bearer abc".into()),
            ("X-Api-Key".into(), "def".into()),
        ],
        body: String::new(),
    };
    let debug = format!("{request:?}");
    assert!(!debug.contains("abc") && !debug.contains("def"), "{debug}");
}

#[test]
fn invalid_endpoints_and_keys_are_build_errors() {
    let conversation = Conversation::default();
    let build =
        |endpoint: Endpoint, key: Option<&str>| build_request(&endpoint, key, &conversation, &[]);
    let openai = |base: &str| endpoint(ProviderKind::OpenAiCompatible, base);
    assert!(matches!(
        build(openai(""), None),
        Err(BuildError::InvalidBaseUrl { .. })
    ));
    assert!(matches!(
        build(openai("localhost:11434/v1"), None),
        Err(BuildError::InvalidBaseUrl { .. })
    ));
    assert!(matches!(
        build(openai("http://"), None),
        Err(BuildError::InvalidBaseUrl { .. })
    ));
    let mut no_model = openai("http://localhost:1");
    no_model.model = " ".into();
    assert_eq!(build(no_model, None), Err(BuildError::EmptyModel));
    let mut zero = openai("http://localhost:1");
    zero.max_tokens = 0;
    assert_eq!(build(zero, None), Err(BuildError::ZeroMaxTokens));
    let bad_key = build(openai("http://localhost:1"), Some("sk-abc\ndef"));
    assert_eq!(bad_key, Err(BuildError::InvalidApiKey));
    assert!(!bad_key.unwrap_err().to_string().contains("sk-abc"));
}

#[test]
fn data_types_round_trip_through_serde() {
    let conversation = tool_conversation();
    let json = serde_json::to_string(&conversation).unwrap();
    assert_eq!(
        serde_json::from_str::<Conversation>(&json).unwrap(),
        conversation
    );
    let endpoint = endpoint(ProviderKind::OpenAiCompatible, "http://x/v1");
    assert_eq!(
        serde_json::to_value(&endpoint).unwrap()["kind"],
        json!("openai_compatible")
    );
    assert_eq!(
        serde_json::to_value(ProviderKind::Anthropic).unwrap(),
        json!("anthropic")
    );
}
