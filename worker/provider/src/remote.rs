//! Calling a model provider: `fetch` with a streaming body, fed chunk by
//! chunk to `lifeline_provider::StreamDecoder`.
//!
//! The wire formats and error classes live in the sans-IO `lifeline-provider`
//! crate; this module only moves bytes and maps its results onto the core's
//! journal vocabulary. Nothing here retries or times out: it reports what
//! happened (response bytes arrived, the status and the wait a refusal
//! asked for, where the exchange failed), and the engine decides.

use js_sys::{Reflect, Uint8Array};
use lifeline_core::flat::FlatSet;
use lifeline_core::journal::ToolCallRecord;
use lifeline_core::model::ModelMessage;
use lifeline_core::profile::{Provider, Secret, Tool};
use lifeline_engine::failure::{
    fetch_failed, no_body, read_failed, refused, stream_failed, unsent, Unsent,
};
use lifeline_engine::{ProviderFailure, ProviderReply};
use lifeline_provider::{
    build_request, Conversation, Endpoint, Message, ProviderKind, Reply, StreamDecoder,
    StreamEvent, ToolCall, ToolName, WaitHeaders,
};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, ReadableStreamDefaultReader, RequestInit, Response};

/// The largest error body read from a failed response.
const MAX_ERROR_BODY: usize = 16 * 1024;
/// The system prompt every model turn starts with.
pub const SYSTEM_PROMPT: &str = "You are the agent of Lifeline, working in the user's workspace (a folder in this browser). Use the tools to read, write and list files and to run commands in the workspace's small shell (echo cat ls pwd mkdir rm cp mv touch head tail wc grep seq sleep true false env sha256sum, with | && ; > >>). Be brief.";

/// How a request ended without a complete reply.
pub type Failure = ProviderFailure;

/// Sends one recorded request for `provider` and streams its reply in the
/// engine's terms. `on_bytes` hears of every arrival of response bytes (the
/// headers first), `on_text` sees each text delta, `on_load` a local
/// model's load; `abort` cancels it.
pub async fn send(
    provider: &Provider,
    api_key: Option<&Secret>,
    messages: &[ModelMessage],
    tools: &FlatSet<Tool>,
    abort: &AbortController,
    on_bytes: impl FnMut(),
    on_text: impl FnMut(&str),
    on_load: impl FnMut(crate::local::Load),
) -> Result<ProviderReply, Failure> {
    let (kind, base_url, model) = match provider {
        // The engine sends only model-backed turns.
        Provider::BuiltIn => return Err(unsent(Unsent::BuiltIn)),
        Provider::OpenAiCompatible { base_url, model } => {
            (ProviderKind::OpenAiCompatible, base_url, model)
        }
        Provider::Anthropic { base_url, model } => (ProviderKind::Anthropic, base_url, model),
        Provider::Local { .. } => {
            let Some(Ok(local)) = provider.local_model() else {
                return Err(unsent(Unsent::LocalSettingsUnreadable));
            };
            return crate::local::send(
                &local.file,
                &local.sampling,
                messages,
                tools,
                abort,
                on_bytes,
                on_text,
                on_load,
            )
            .await;
        }
    };
    let reply = stream(
        &endpoint(kind, base_url, model),
        api_key.map(|k| k.expose()),
        &conversation(messages),
        &tool_names(tools),
        abort,
        on_bytes,
        on_text,
    )
    .await?;
    Ok(ProviderReply {
        text: reply.text.clone(),
        tool_calls: tool_records(&reply),
        stop: stop_text(&reply),
        input_tokens: reply.usage.input_tokens,
        output_tokens: reply.usage.output_tokens,
    })
}

/// The browser would not make an `AbortController`: nothing was sent.
pub fn no_abort() -> Failure {
    unsent(Unsent::NoAbortController)
}

fn endpoint(kind: ProviderKind, base_url: &str, model: &str) -> Endpoint {
    Endpoint {
        kind,
        base_url: base_url.to_string(),
        model: model.to_string(),
        max_tokens: 4096,
    }
}

pub(crate) fn tool_names(tools: &FlatSet<Tool>) -> Vec<ToolName> {
    tools
        .iter()
        .map(|t| match t {
            Tool::ReadFile => ToolName::ReadFile,
            Tool::WriteFile => ToolName::WriteFile,
            Tool::ListFiles => ToolName::ListFiles,
            Tool::RunCommand => ToolName::RunCommand,
        })
        .collect()
}

/// The core's conversation in the provider crate's shape. Arguments that
/// are not JSON go back to the model as a string so it sees its own mistake.
pub(crate) fn conversation(messages: &[ModelMessage]) -> Conversation {
    let messages = messages
        .iter()
        .map(|m| match m {
            ModelMessage::User { text } => Message::User { text: text.clone() },
            ModelMessage::Assistant { text, tool_calls } => Message::Assistant {
                text: text.clone(),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| ToolCall {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: serde_json::from_slice(c.arguments.as_bytes())
                            .unwrap_or_else(|_| serde_json::Value::String(c.arguments.clone())),
                    })
                    .collect(),
            },
            ModelMessage::ToolResult {
                call_id,
                name,
                content,
                is_error,
            } => Message::ToolResult {
                call_id: call_id.clone(),
                name: name.clone(),
                content: content.clone(),
                is_error: *is_error,
            },
        })
        .collect();
    Conversation {
        system: SYSTEM_PROMPT.into(),
        messages,
    }
}

fn tool_records(reply: &Reply) -> Vec<ToolCallRecord> {
    reply
        .tool_calls
        .iter()
        .map(|c| ToolCallRecord {
            id: c.id.clone(),
            name: c.name.clone(),
            arguments: c.arguments.to_string(),
        })
        .collect()
}

fn stop_text(reply: &Reply) -> String {
    match &reply.stop {
        Some(lifeline_provider::StopReason::EndTurn) => "end_turn".into(),
        Some(lifeline_provider::StopReason::ToolUse) => "tool_use".into(),
        Some(lifeline_provider::StopReason::MaxTokens) => "max_tokens".into(),
        Some(lifeline_provider::StopReason::Other(s)) => s.clone(),
        None => String::new(),
    }
}

/// Sends one request and streams its reply. `on_text` sees each text delta
/// (for the live preview); `abort` cancels it (Stop).
async fn stream(
    endpoint: &Endpoint,
    api_key: Option<&str>,
    conversation: &Conversation,
    tools: &[ToolName],
    abort: &AbortController,
    mut on_bytes: impl FnMut(),
    mut on_text: impl FnMut(&str),
) -> Result<Reply, Failure> {
    let request = build_request(endpoint, api_key, conversation, tools)
        .map_err(|e| unsent(Unsent::NotBuilt(e)))?;
    let headers = Headers::new().map_err(|_| unsent(Unsent::NoHeaders))?;
    for (name, value) in &request.headers {
        if headers.set(name, value).is_err() {
            // Never echo the value: it may be the key.
            return Err(unsent(Unsent::HeaderRefused { name: name.clone() }));
        }
    }
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(&request.body));
    init.set_signal(Some(&abort.signal()));
    let scope: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    let response = match JsFuture::from(scope.fetch_with_str_and_init(&request.url, &init)).await {
        Ok(r) => r.unchecked_into::<Response>(),
        Err(e) => {
            let (name, message) = thrown(&e);
            return Err(fetch_failed(&name, &message, api_key));
        }
    };
    on_bytes();
    if !response.ok() {
        let status = response.status();
        let header = |name: &str| response.headers().get(name).ok().flatten();
        let (retry_after, date, reset) = (
            header("retry-after"),
            header("date"),
            header("x-ratelimit-reset-requests"),
        );
        let body = match response.text() {
            Ok(p) => JsFuture::from(p)
                .await
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or_default(),
            Err(_) => String::new(),
        };
        let body: String = body.chars().take(MAX_ERROR_BODY).collect();
        let waits = WaitHeaders {
            retry_after: retry_after.as_deref(),
            date: date.as_deref(),
            rate_limit_reset: reset.as_deref(),
        };
        return Err(refused(status, &body, waits, api_key));
    }
    let Some(body) = response.body() else {
        return Err(no_body());
    };
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut decoder = StreamDecoder::new(endpoint.kind).redacting(api_key);
    loop {
        let chunk = match JsFuture::from(reader.read()).await {
            Ok(c) => c,
            Err(e) => {
                let (name, message) = thrown(&e);
                let partial = &decoder.partial().text;
                return Err(read_failed(&name, &message, api_key, partial));
            }
        };
        let done = Reflect::get(&chunk, &JsValue::from_str("done"))
            .ok()
            .and_then(|d| d.as_bool())
            .unwrap_or(true);
        if done {
            break;
        }
        let Ok(value) = Reflect::get(&chunk, &JsValue::from_str("value")) else {
            continue;
        };
        on_bytes();
        let bytes = Uint8Array::new(&value).to_vec();
        if let Err(e) = decoder.feed(&bytes) {
            let _ = reader.cancel();
            return Err(stream_failed(e));
        }
        // One message to the controller per chunk, however many events it
        // held: each crosses two workers and becomes a page update.
        let mut text = String::new();
        while let Some(event) = decoder.poll_event() {
            if let StreamEvent::TextDelta(delta) = event {
                text.push_str(&delta);
            }
        }
        if !text.is_empty() {
            on_text(&text);
        }
    }
    decoder.finish().map_err(stream_failed)
}

/// What a thrown error was called and said (`failure` decides what it
/// means).
fn thrown(e: &JsValue) -> (String, String) {
    let get = |key: &str| {
        Reflect::get(e, &JsValue::from_str(key))
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    (get("name"), get("message"))
}
