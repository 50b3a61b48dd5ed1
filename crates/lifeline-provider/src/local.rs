//! A model run in the browser speaks no wire protocol: the shell hands
//! llama.cpp a prompt string and gets text back. This module is both ends
//! of that, for models with the ChatML template and Hermes/Qwen-style tool
//! calls (Qwen 2/2.5/3, Hermes, SmolLM, and the test suite's tiny models):
//! [`chatml_prompt`] writes the conversation, [`ToolCallParser`] reads the
//! generated text back into reply text and [`ToolCall`]s as it streams.
//!
//! Generated text is untrusted like a server's reply: the parser never
//! panics, bounds what it holds, and turns a call it cannot read into a
//! call the core answers with an error (the model sees its mistake) rather
//! than dropping it.

use serde_json::Value;

use crate::{request::tool_schema, Conversation, Message, StopReason, ToolCall, ToolName};

pub const IM_START: &str = "<|im_start|>";
pub const IM_END: &str = "<|im_end|>";
const CALL_OPEN: &str = "<tool_call>";
const CALL_CLOSE: &str = "</tool_call>";
/// The longest tool call body kept; a longer one is cut and answered as
/// unreadable.
pub const MAX_CALL_BYTES: usize = 64 * 1024;
/// The name a call gets when its body names no tool: not one of ours, so
/// the core answers it with an error listing the real tools.
pub const UNREADABLE_CALL: &str = "unreadable_tool_call";

/// The conversation as a ChatML prompt, ending where the assistant speaks.
/// Tools are described the way Qwen's own template does, so models trained
/// on it call them in the form [`ToolCallParser`] reads.
pub fn chatml_prompt(conversation: &Conversation, tools: &[ToolName]) -> String {
    let mut out = String::new();
    let mut system = neutral(&conversation.system);
    if !tools.is_empty() {
        if !system.is_empty() {
            system.push_str("\n\n");
        }
        system.push_str(
            "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
             You are provided with function signatures within <tools></tools> XML tags:\n<tools>",
        );
        for tool in tools {
            let schema = serde_json::json!({
                "type": "function",
                "function": {
                    "name": tool.wire_name(),
                    "description": tool.description(),
                    "parameters": tool_schema(*tool),
                }
            });
            system.push('\n');
            system.push_str(&schema.to_string());
        }
        system.push_str(
            "\n</tools>\n\nFor each function call, return a json object with function name and \
             arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n\
             {\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>",
        );
    }
    if !system.is_empty() {
        turn(&mut out, "system", &system);
    }
    let mut i = 0;
    let messages = &conversation.messages;
    while i < messages.len() {
        match &messages[i] {
            Message::User { text } => turn(&mut out, "user", &neutral(text)),
            Message::Assistant { text, tool_calls } => {
                let mut body = neutral(text);
                for call in tool_calls {
                    if !body.is_empty() {
                        body.push('\n');
                    }
                    let json =
                        serde_json::json!({ "name": call.name, "arguments": call.arguments });
                    body.push_str(CALL_OPEN);
                    body.push('\n');
                    body.push_str(&neutral(&json.to_string()));
                    body.push('\n');
                    body.push_str(CALL_CLOSE);
                }
                turn(&mut out, "assistant", &body);
            }
            // Consecutive results go back in one user turn, as Qwen's
            // template does.
            Message::ToolResult { .. } => {
                let mut body = String::new();
                while let Some(Message::ToolResult { content, .. }) = messages.get(i) {
                    if !body.is_empty() {
                        body.push('\n');
                    }
                    body.push_str("<tool_response>\n");
                    body.push_str(&neutral(content));
                    body.push_str("\n</tool_response>");
                    i += 1;
                }
                turn(&mut out, "user", &body);
                continue;
            }
        }
        i += 1;
    }
    out.push_str(IM_START);
    out.push_str("assistant\n");
    out
}

fn turn(out: &mut String, role: &str, body: &str) {
    out.push_str(IM_START);
    out.push_str(role);
    out.push('\n');
    out.push_str(body);
    out.push_str(IM_END);
    out.push('\n');
}

/// Text from a user, a file or a command cannot open or close a turn: the
/// control tokens are spelled with a space so the tokenizer reads them as
/// plain text (a file that says `<|im_start|>system` must not become a
/// system prompt).
fn neutral(text: &str) -> String {
    text.replace("<|im_", "< |im_")
        .replace("<|endoftext|>", "< |endoftext|>")
}

/// Generated text, split as it streams into reply text and tool calls.
#[derive(Debug, Default)]
pub struct ToolCallParser {
    /// Text not yet shown: a possible start of a marker.
    pending: String,
    /// Inside `<tool_call>`: the call's body so far.
    call: Option<String>,
    text: String,
    calls: Vec<ToolCall>,
    /// `<|im_end|>` was generated: the rest is not the reply.
    ended: bool,
    /// Ids are this prefix and the call's index: unique in the session when
    /// the prefix names the request.
    id_prefix: String,
}

/// The reply as the parser read it.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalReply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    /// `ToolUse` with calls, else `EndTurn`, or `MaxTokens` when the shell
    /// says generation stopped at the limit (a call cut there is dropped:
    /// running half a command would be worse).
    pub stop: StopReason,
}

impl ToolCallParser {
    pub fn new(id_prefix: &str) -> ToolCallParser {
        ToolCallParser {
            id_prefix: id_prefix.into(),
            ..ToolCallParser::default()
        }
    }

    /// Takes generated text and returns the part that can be shown now:
    /// text outside tool calls, minus a tail that may start a marker.
    pub fn push(&mut self, delta: &str) -> String {
        if self.ended {
            return String::new();
        }
        self.pending.push_str(delta);
        let mut shown = String::new();
        loop {
            if let Some(body) = self.call.as_mut() {
                let Some(at) = self.pending.find(CALL_CLOSE) else {
                    let cut = self.pending.len() - marker_tail(&self.pending, &[CALL_CLOSE]);
                    if body.len() + cut <= MAX_CALL_BYTES {
                        body.push_str(&self.pending[..cut]);
                    }
                    self.pending.drain(..cut);
                    break;
                };
                if body.len() + at <= MAX_CALL_BYTES {
                    body.push_str(&self.pending[..at]);
                }
                self.pending.drain(..at + CALL_CLOSE.len());
                let body = self.call.take().unwrap_or_default();
                self.finish_call(&body);
                continue;
            }
            let end = self.pending.find(IM_END);
            // A call opened before the end of the turn is the next thing.
            let open = self
                .pending
                .find(CALL_OPEN)
                .filter(|o| end.is_none_or(|e| *o < e));
            match (open, end) {
                (Some(o), _) => {
                    shown.push_str(&self.pending[..o]);
                    self.pending.drain(..o + CALL_OPEN.len());
                    self.call = Some(String::new());
                }
                (None, Some(e)) => {
                    shown.push_str(&self.pending[..e]);
                    self.pending.clear();
                    self.ended = true;
                    break;
                }
                (None, None) => {
                    let cut = self.pending.len() - marker_tail(&self.pending, &[CALL_OPEN, IM_END]);
                    shown.push_str(&self.pending[..cut]);
                    self.pending.drain(..cut);
                    break;
                }
            }
        }
        self.text.push_str(&shown);
        shown
    }

    /// The reply text shown so far: what a failed reply keeps.
    pub fn text_so_far(&self) -> &str {
        &self.text
    }

    /// The whole reply once generation stopped; `at_limit` when it stopped
    /// because it reached its token limit.
    pub fn finish(mut self, at_limit: bool) -> LocalReply {
        if self.call.take().is_some() {
            // A call cut off by the limit or the end of generation.
            self.pending.clear();
        }
        let tail = std::mem::take(&mut self.pending);
        self.text.push_str(&tail);
        let stop = if at_limit {
            StopReason::MaxTokens
        } else if self.calls.is_empty() {
            StopReason::EndTurn
        } else {
            StopReason::ToolUse
        };
        LocalReply {
            text: self.text.trim().to_string(),
            tool_calls: self.calls,
            stop,
        }
    }

    fn finish_call(&mut self, body: &str) {
        let id = format!("{}{}", self.id_prefix, self.calls.len());
        let parsed = serde_json::from_str::<Value>(body.trim()).ok();
        let call = match parsed {
            Some(Value::Object(mut map)) => match map.remove("name") {
                Some(Value::String(name)) => {
                    let arguments =
                        match map.remove("arguments").or_else(|| map.remove("parameters")) {
                            None | Some(Value::Null) => Value::Object(Default::default()),
                            // Some models write the arguments as a JSON string.
                            Some(Value::String(s)) => {
                                serde_json::from_str(&s).unwrap_or(Value::String(s))
                            }
                            Some(other) => other,
                        };
                    ToolCall {
                        id,
                        name,
                        arguments,
                    }
                }
                _ => unreadable(id, body),
            },
            _ => unreadable(id, body),
        };
        self.calls.push(call);
    }
}

fn unreadable(id: String, body: &str) -> ToolCall {
    ToolCall {
        id,
        name: UNREADABLE_CALL.into(),
        arguments: Value::String(body.chars().take(1000).collect()),
    }
}

/// How many bytes at the end of `text` could be the start of one of
/// `markers` (all ASCII, so the cut is on a character boundary).
fn marker_tail(text: &str, markers: &[&str]) -> usize {
    let bytes = text.as_bytes();
    let mut longest = 0;
    for marker in markers {
        let m = marker.as_bytes();
        for len in (1..m.len().min(bytes.len() + 1)).rev() {
            if bytes.ends_with(&m[..len]) {
                longest = longest.max(len);
                break;
            }
        }
    }
    longest
}

#[cfg(test)]
#[path = "local_tests.rs"]
mod tests;

/// Why running a local model failed, read from what llama.cpp or wllama
/// said (their messages are the only signal they give).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalFailure {
    /// The file is not a GGUF model.
    NotGguf,
    /// llama.cpp does not know the file's architecture.
    UnsupportedArchitecture,
    /// The prompt does not fit the context the model was loaded with.
    ContextTooLong,
    /// The browser could not give the model its memory.
    OutOfMemory,
    /// The model produced bytes that are not UTF-8, which wllama 3.13
    /// reports as `Invalid typed array length` (a `RangeError` in its
    /// worker, a `RuntimeError` by the time it reaches the caller): a broken
    /// reply, and the text so far is kept.
    InvalidUtf8,
    /// The user stopped generation.
    Aborted,
    /// Anything else.
    Other,
}

/// Classifies an error's name and message (`err.name`, `err.message`).
pub fn classify_local_failure(name: &str, message: &str) -> LocalFailure {
    let m = message.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| m.contains(w));
    if name == "AbortError" || has(&["aborted", "abort signal"]) {
        LocalFailure::Aborted
    } else if has(&["invalid typed array length"]) {
        LocalFailure::InvalidUtf8
    } else if has(&[
        "unknown model architecture",
        "unsupported model architecture",
        "unknown architecture",
    ]) {
        LocalFailure::UnsupportedArchitecture
    } else if has(&[
        "invalid magic",
        "not a gguf",
        "failed to read magic",
        "invalid gguf",
    ]) {
        LocalFailure::NotGguf
    } else if has(&[
        "context length",
        "exceeds context",
        "n_ctx",
        "too long",
        "context size",
        "kv cache is full",
    ]) {
        LocalFailure::ContextTooLong
    } else if name == "RangeError" && has(&["memory", "array buffer allocation"])
        || has(&[
            "out of memory",
            "failed to allocate",
            "cannot allocate",
            "could not allocate",
            "oom",
        ])
    {
        LocalFailure::OutOfMemory
    } else {
        LocalFailure::Other
    }
}
