use crate::{Conversation, Endpoint, Message, ProviderKind, ToolName};
use serde_json::{json, Map, Value};
use std::fmt;

const ANTHROPIC_DEFAULT_BASE: &str = "https://api.anthropic.com";
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Headers whose values are credentials; matched case-insensitively.
const SECRET_HEADERS: [&str; 2] = ["authorization", "x-api-key"];

/// A request for the worker to send with `fetch`. Always a POST.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub url: String,
    /// Lower-case names, in the order they should be set.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// By hand, so that a request that ends up in a log or a panic message never
/// carries the key.
impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Headers<'a>(&'a [(String, String)]);
        impl fmt::Debug for Headers<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut list = f.debug_list();
                for (name, value) in self.0 {
                    let secret = SECRET_HEADERS
                        .iter()
                        .any(|secret| name.eq_ignore_ascii_case(secret));
                    let shown = if secret { "[redacted]" } else { value.as_str() };
                    list.entry(&(name, shown));
                }
                list.finish()
            }
        }
        f.debug_struct("HttpRequest")
            .field("method", &"POST")
            .field("url", &self.url)
            .field("headers", &Headers(&self.headers))
            .field("body", &self.body)
            .finish()
    }
}

/// Why no request could be built. None of the messages contain the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// Not an `http://` or `https://` URL.
    InvalidBaseUrl {
        base_url: String,
    },
    EmptyModel,
    /// Both providers refuse a reply budget of zero tokens.
    ZeroMaxTokens,
    /// Characters a header value cannot carry (control characters, spaces,
    /// non-ASCII); `fetch` would throw, so say it before sending.
    InvalidApiKey,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::InvalidBaseUrl { base_url } => write!(
                f,
                "the base URL {base_url:?} is not an http:// or https:// URL"
            ),
            BuildError::EmptyModel => f.write_str("the profile names no model"),
            BuildError::ZeroMaxTokens => f.write_str("the profile's max tokens is zero"),
            BuildError::InvalidApiKey => f.write_str(
                "the API key contains characters an HTTP header cannot carry (spaces, line \
                 breaks or non-ASCII); paste it again",
            ),
        }
    }
}

impl std::error::Error for BuildError {}

/// The JSON schema of a tool's arguments.
pub fn tool_schema(tool: ToolName) -> Value {
    let string = |description: &str| json!({ "type": "string", "description": description });
    match tool {
        ToolName::ReadFile => json!({
            "type": "object",
            "properties": { "path": string("Path relative to the workspace root.") },
            "required": ["path"],
            "additionalProperties": false,
        }),
        ToolName::WriteFile => json!({
            "type": "object",
            "properties": {
                "path": string("Path relative to the workspace root."),
                "content": string("The whole new content of the file."),
            },
            "required": ["path", "content"],
            "additionalProperties": false,
        }),
        // No "required" list at all: some servers' grammar converters choke on
        // an empty one.
        ToolName::ListFiles => json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Folder relative to the workspace root.",
                    "default": ".",
                },
            },
            "additionalProperties": false,
        }),
        ToolName::RunCommand => json!({
            "type": "object",
            "properties": { "command": string("The command line to run.") },
            "required": ["command"],
            "additionalProperties": false,
        }),
    }
}

/// Builds the streaming request for one model turn.
pub fn build_request(
    endpoint: &Endpoint,
    api_key: Option<&str>,
    conversation: &Conversation,
    tools: &[ToolName],
) -> Result<HttpRequest, BuildError> {
    if endpoint.model.trim().is_empty() {
        return Err(BuildError::EmptyModel);
    }
    if endpoint.max_tokens == 0 {
        return Err(BuildError::ZeroMaxTokens);
    }
    // An empty key field means "no key" (local servers), not an empty header.
    let api_key = api_key.filter(|key| !key.is_empty());
    if let Some(key) = api_key {
        if !key.bytes().all(|byte| byte.is_ascii_graphic()) {
            return Err(BuildError::InvalidApiKey);
        }
    }
    match endpoint.kind {
        ProviderKind::OpenAiCompatible => openai_request(endpoint, api_key, conversation, tools),
        ProviderKind::Anthropic => anthropic_request(endpoint, api_key, conversation, tools),
    }
}

fn base_url(endpoint: &Endpoint, default: Option<&str>) -> Result<String, BuildError> {
    let trimmed = endpoint.base_url.trim().trim_end_matches('/');
    let base = match (trimmed.is_empty(), default) {
        (true, Some(default)) => default,
        _ => trimmed,
    };
    let lower = base.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    match rest {
        Some(host) if !host.is_empty() && !base.chars().any(char::is_whitespace) => {
            Ok(base.to_owned())
        }
        _ => Err(BuildError::InvalidBaseUrl {
            base_url: endpoint.base_url.clone(),
        }),
    }
}

fn header(name: &str, value: &str) -> (String, String) {
    (name.to_owned(), value.to_owned())
}

fn openai_request(
    endpoint: &Endpoint,
    api_key: Option<&str>,
    conversation: &Conversation,
    tools: &[ToolName],
) -> Result<HttpRequest, BuildError> {
    let url = format!("{}/chat/completions", base_url(endpoint, None)?);
    let mut headers = vec![header("content-type", "application/json")];
    if let Some(key) = api_key {
        headers.push(header("authorization", &format!("Bearer {key}")));
    }

    let mut messages = Vec::with_capacity(conversation.messages.len() + 1);
    if !conversation.system.is_empty() {
        messages.push(json!({ "role": "system", "content": conversation.system }));
    }
    for message in &conversation.messages {
        messages.push(match message {
            Message::User { text } => json!({ "role": "user", "content": text }),
            Message::Assistant { text, tool_calls } => {
                let mut out = Map::new();
                out.insert("role".into(), "assistant".into());
                // Chat Completions wants null, not "", beside tool calls.
                let content = if text.is_empty() && !tool_calls.is_empty() {
                    Value::Null
                } else {
                    Value::String(text.clone())
                };
                out.insert("content".into(), content);
                if !tool_calls.is_empty() {
                    let calls = tool_calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": {
                                    "name": call.name,
                                    "arguments": call.arguments.to_string(),
                                },
                            })
                        })
                        .collect();
                    out.insert("tool_calls".into(), Value::Array(calls));
                }
                Value::Object(out)
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => {
                // Chat Completions has no error flag on a tool message; the
                // model still has to learn that the tool failed.
                let content = if *is_error {
                    format!("Error: {content}")
                } else {
                    content.clone()
                };
                json!({ "role": "tool", "tool_call_id": call_id, "content": content })
            }
        });
    }

    let mut body = Map::new();
    body.insert("model".into(), endpoint.model.clone().into());
    body.insert("stream".into(), true.into());
    body.insert("stream_options".into(), json!({ "include_usage": true }));
    body.insert("max_tokens".into(), endpoint.max_tokens.into());
    body.insert("messages".into(), Value::Array(messages));
    if !tools.is_empty() {
        let tools = tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.wire_name(),
                        "description": tool.description(),
                        "parameters": tool_schema(*tool),
                    },
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    Ok(HttpRequest {
        url,
        headers,
        body: Value::Object(body).to_string(),
    })
}

fn anthropic_request(
    endpoint: &Endpoint,
    api_key: Option<&str>,
    conversation: &Conversation,
    tools: &[ToolName],
) -> Result<HttpRequest, BuildError> {
    let base = base_url(endpoint, Some(ANTHROPIC_DEFAULT_BASE))?;
    // Users paste either the bare host or the ".../v1" they know from other
    // clients; both must reach the same route.
    let url = if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    };
    let mut headers = vec![header("content-type", "application/json")];
    if let Some(key) = api_key {
        headers.push(header("x-api-key", key));
    }
    headers.push(header("anthropic-version", ANTHROPIC_VERSION));
    // Without it Anthropic refuses CORS requests from a page or worker.
    headers.push(header("anthropic-dangerous-direct-browser-access", "true"));

    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in &conversation.messages {
        let (role, blocks) = match message {
            Message::User { text } => ("user", vec![json!({ "type": "text", "text": text })]),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::with_capacity(tool_calls.len() + 1);
                // Anthropic rejects empty text blocks.
                if !text.is_empty() {
                    blocks.push(json!({ "type": "text", "text": text }));
                }
                for call in tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": call.arguments,
                    }));
                }
                ("assistant", blocks)
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": content,
                    "is_error": is_error,
                })],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        // Roles must alternate, and all results of one assistant turn belong
        // in the one user message that follows it.
        match messages.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect();

    let mut body = Map::new();
    body.insert("model".into(), endpoint.model.clone().into());
    body.insert("max_tokens".into(), endpoint.max_tokens.into());
    body.insert("stream".into(), true.into());
    if !conversation.system.is_empty() {
        body.insert("system".into(), conversation.system.clone().into());
    }
    body.insert("messages".into(), Value::Array(messages));
    if !tools.is_empty() {
        let tools = tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.wire_name(),
                    "description": tool.description(),
                    "input_schema": tool_schema(*tool),
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    Ok(HttpRequest {
        url,
        headers,
        body: Value::Object(body).to_string(),
    })
}
