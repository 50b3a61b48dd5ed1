//! The wire formats of the model backends, without any IO.
//!
//! Two protocols cover the backends a profile can name: OpenAI-compatible
//! Chat Completions (Ollama, llama.cpp server, LM Studio, OpenAI) and
//! Anthropic Messages. This crate turns a [`Conversation`] into an
//! [`HttpRequest`] the controller worker sends with `fetch`, decodes the
//! server-sent-event reply incrementally with [`StreamDecoder`], and turns a
//! failed response into a [`ProviderError`] whose [`ErrorClass`] tells the
//! user what to do.
//!
//! The worker owns the network and the clock; this crate owns the bytes. That
//! split keeps every wire detail natively testable, down to a reply cut at any
//! byte, and keeps the crate free of browser APIs.
//!
//! Everything that comes back from a server is untrusted: decoding never
//! panics, every buffer has a limit ([`Limits`]), and an exceeded limit is a
//! [`StreamErrorKind::TooLarge`] error rather than unbounded growth. The API
//! key appears only in request headers; [`HttpRequest`]'s `Debug` redacts it
//! and error messages built from response bodies have it replaced.

mod error;
pub mod gguf;
pub mod local;
mod request;
mod stream;

pub use error::{
    classify_http, classify_transport, rate_limit_reset_ms, retry_after_ms, ErrorClass,
    ProviderError, WaitHeaders, MAX_MESSAGE_CHARS,
};
pub use request::{build_request, tool_schema, BuildError, HttpRequest};
pub use stream::{Limits, StreamDecoder, StreamError, StreamErrorKind, StreamEvent};

use serde::{Deserialize, Serialize};

/// Which wire protocol a backend speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProviderKind {
    /// Chat Completions with tool calls: Ollama, llama.cpp server, LM Studio,
    /// OpenAI and anything else that copies that API.
    #[serde(rename = "openai_compatible")]
    OpenAiCompatible,
    /// Anthropic Messages.
    #[serde(rename = "anthropic")]
    Anthropic,
}

/// Where and how to reach a model. The API key is deliberately not here: it
/// lives in the credential store and is passed to [`build_request`] only for
/// the moment of building the headers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    pub kind: ProviderKind,
    /// What the user typed, e.g. `http://localhost:11434/v1` or
    /// `https://api.anthropic.com`; [`build_request`] appends the route.
    pub base_url: String,
    pub model: String,
    pub max_tokens: u32,
}

/// The tools the agent offers a model; they map onto the runtime's files and
/// shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    ReadFile,
    WriteFile,
    ListFiles,
    RunCommand,
}

impl ToolName {
    pub const ALL: [ToolName; 4] = [
        ToolName::ReadFile,
        ToolName::WriteFile,
        ToolName::ListFiles,
        ToolName::RunCommand,
    ];

    /// The name a model sees and answers with.
    pub fn wire_name(self) -> &'static str {
        match self {
            ToolName::ReadFile => "read_file",
            ToolName::WriteFile => "write_file",
            ToolName::ListFiles => "list_files",
            ToolName::RunCommand => "run_command",
        }
    }

    /// The tool a model's call names, if it is one of ours; models do invent
    /// tools, and the caller must answer those with an error result.
    pub fn from_wire_name(name: &str) -> Option<ToolName> {
        ToolName::ALL
            .into_iter()
            .find(|tool| tool.wire_name() == name)
    }

    /// What the model is told the tool does.
    pub fn description(self) -> &'static str {
        match self {
            ToolName::ReadFile => "Read a UTF-8 text file from the session's workspace.",
            ToolName::WriteFile => {
                "Create or overwrite a UTF-8 text file in the session's workspace."
            }
            ToolName::ListFiles => "List the files and folders in a folder of the workspace.",
            ToolName::RunCommand => {
                "Run a command line in the workspace's built-in shell (echo cat ls pwd mkdir rm \
                 cp mv touch head tail wc grep seq sleep true false env sha256sum, with | && || \
                 ; > >>) and return its output and exit status."
            }
        }
    }
}

/// One tool call requested by the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id; the tool result must quote it back.
    pub id: String,
    /// As the model wrote it, which may not be one of [`ToolName`].
    pub name: String,
    /// Always a JSON object when it came from [`StreamDecoder`].
    pub arguments: serde_json::Value,
}

/// One turn of the conversation, in a provider-neutral shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        text: String,
    },
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    ToolResult {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Conversation {
    /// Empty means no system prompt is sent.
    pub system: String,
    pub messages: Vec<Message>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    /// A reason this crate does not map, as the provider spelled it
    /// (at most 64 characters).
    Other(String),
}

/// A model's reply, complete or as far as it arrived.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Reply {
    pub text: String,
    /// Only calls whose arguments arrived completely.
    pub tool_calls: Vec<ToolCall>,
    /// `None` until the provider said why it stopped.
    pub stop: Option<StopReason>,
    pub usage: Usage,
}
