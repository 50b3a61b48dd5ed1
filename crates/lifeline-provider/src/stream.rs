use crate::error::{classify_stream_error, sanitize};
use crate::{ProviderError, ProviderKind, Reply, StopReason, ToolCall};
use serde_json::{Map, Value};
use sse_parse::{Event, SseParser};
use std::collections::VecDeque;
use std::fmt;

/// Bounds on what one reply may make the decoder hold. A reply beyond them is
/// a [`StreamErrorKind::TooLarge`] error: a runaway or hostile server must not
/// be able to grow a worker's memory without end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_text_bytes: usize,
    pub max_tool_calls: usize,
    /// Per tool call, as the JSON text arrived.
    pub max_argument_bytes: usize,
    /// One server-sent event as buffered by the SSE parser (a line plus the
    /// event's data so far), which is also what one JSON chunk may cost.
    pub max_event_bytes: usize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        max_text_bytes: 1 << 20,
        max_tool_calls: 32,
        max_argument_bytes: 256 << 10,
        // JSON escaping can double a text delta, and one delta may carry a
        // whole argument string.
        max_event_bytes: 2 << 20,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// Ids and names are short in every real protocol; a long one is garbage.
const MAX_NAME_BYTES: usize = 256;

/// More tokens than any real reply: a count above it is garbage, read as
/// unknown. It also keeps every sum of counts far below 2^53, the largest
/// number a journal record may hold.
const MAX_TOKENS: u64 = 1_000_000_000_000;

/// A usage count the provider reported, if it is a plausible one. Usage is
/// evidence, not reply content: an unreadable count is left unknown rather
/// than ending the reply.
fn token_count(usage: &Map<String, Value>, key: &str) -> Option<u64> {
    usage
        .get(key)
        .and_then(Value::as_u64)
        .filter(|n| *n <= MAX_TOKENS)
}
const MAX_STOP_REASON_CHARS: usize = 64;
/// Anthropic has at most a handful of blocks open at once; more is garbage.
const MAX_OPEN_BLOCKS: usize = 64;
/// Input is handed to the SSE parser in slices of this size, so that its
/// buffer stays within `max_event_bytes` plus one slice however large a
/// chunk the caller feeds.
const FEED_SLICE: usize = 64 << 10;
/// How much of an offending chunk an error message quotes.
const SNIPPET_CHARS: usize = 120;

/// Something the UI can show before the reply is complete.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    /// Emitted once the call's arguments are complete and parsed.
    ToolCall(ToolCall),
}

/// A reply that did not arrive whole. `partial` keeps what did arrive, so the
/// UI can show it and the turn can be recorded as uncertain rather than lost.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamError {
    pub kind: StreamErrorKind,
    pub partial: Reply,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StreamErrorKind {
    /// The body ended cleanly, after at least one event, before the
    /// stream's terminator: the provider never said it had finished.
    Unfinished,
    Malformed {
        detail: String,
    },
    /// The provider reported an error inside the stream.
    Provider(ProviderError),
    /// A [`Limits`] bound was exceeded; `what` names it.
    TooLarge {
        what: &'static str,
    },
}

impl fmt::Display for StreamErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamErrorKind::Unfinished => {
                f.write_str("the reply stream ended without the provider's finish reason")
            }
            StreamErrorKind::Malformed { detail } => {
                write!(f, "the provider sent a malformed stream: {detail}")
            }
            StreamErrorKind::Provider(error) => fmt::Display::fmt(error, f),
            StreamErrorKind::TooLarge { what } => {
                write!(f, "the reply exceeded this app's limit on {what}")
            }
        }
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.kind, f)
    }
}

impl std::error::Error for StreamError {}

/// Keeps the key out of `Debug` output of the decoder.
#[derive(Clone, Default)]
struct Secret(Option<String>);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "[redacted]"
        } else {
            "None"
        })
    }
}

#[derive(Clone, Debug)]
enum State {
    Open,
    /// The stream's own terminator arrived; later bytes are ignored.
    Done,
    Failed(StreamErrorKind),
}

/// A Chat Completions tool call whose fragments are still arriving.
#[derive(Clone, Debug)]
struct PendingCall {
    index: u64,
    id: Option<String>,
    name: String,
    arguments: String,
}

/// An open Anthropic content block.
#[derive(Clone, Debug)]
struct Block {
    index: u64,
    kind: BlockKind,
}

#[derive(Clone, Debug)]
enum BlockKind {
    Text,
    Tool {
        id: String,
        name: String,
        json: String,
        /// Some proxies put the whole input in the start event instead of
        /// streaming it.
        initial: Option<Value>,
    },
    /// Thinking, server tools and whatever Anthropic adds later: not ours to
    /// show, but their deltas must not be mistaken for errors.
    Other,
}

/// Incremental decoder of one streamed reply. Feed it the response body as it
/// arrives, in chunks of any size; the result does not depend on where the
/// chunks split.
#[derive(Clone, Debug)]
pub struct StreamDecoder {
    kind: ProviderKind,
    limits: Limits,
    sse: SseParser,
    reply: Reply,
    events: VecDeque<StreamEvent>,
    state: State,
    saw_finish_reason: bool,
    /// Bytes arrived, and whether any of them made an event: a body with
    /// bytes but no event is not an event stream at all (a JSON answer
    /// from a server that ignored `stream: true`, an HTML error page).
    saw_bytes: bool,
    saw_event: bool,
    pending_calls: Vec<PendingCall>,
    open_blocks: Vec<Block>,
    secret: Secret,
}

// The error carries the partial reply by value so that the caller owns what
// arrived; an error happens at most once per reply, so its size costs nothing.
#[allow(clippy::result_large_err)]
impl StreamDecoder {
    pub fn new(kind: ProviderKind) -> Self {
        StreamDecoder::with_limits(kind, Limits::DEFAULT)
    }

    pub fn with_limits(kind: ProviderKind, limits: Limits) -> Self {
        StreamDecoder {
            kind,
            limits,
            sse: SseParser::new().max_buffer(limits.max_event_bytes),
            reply: Reply::default(),
            events: VecDeque::new(),
            state: State::Open,
            saw_finish_reason: false,
            saw_bytes: false,
            saw_event: false,
            pending_calls: Vec::new(),
            open_blocks: Vec::new(),
            secret: Secret::default(),
        }
    }

    /// Replaces `api_key` in messages of error events, should a provider echo
    /// it back.
    pub fn redacting(mut self, api_key: Option<&str>) -> Self {
        self.secret = Secret(api_key.filter(|key| !key.is_empty()).map(str::to_owned));
        self
    }

    /// After an error the decoder stays failed and every further call returns
    /// the same error. Bytes after the stream's terminator are ignored.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), StreamError> {
        match &self.state {
            State::Failed(kind) => return Err(self.error(kind.clone())),
            State::Done => return Ok(()),
            State::Open => {}
        }
        self.saw_bytes |= !bytes.is_empty();
        for slice in bytes.chunks(FEED_SLICE) {
            self.sse.feed(slice);
            if self.sse.overflows() > 0 {
                return Err(self.fail(StreamErrorKind::TooLarge {
                    what: "the size of one stream event",
                }));
            }
            while let Some(event) = self.sse.next_event() {
                self.saw_event = true;
                let handled = match self.kind {
                    ProviderKind::OpenAiCompatible => self.openai_event(&event),
                    ProviderKind::Anthropic => self.anthropic_event(&event),
                };
                if let Err(kind) = handled {
                    return Err(self.fail(kind));
                }
                if matches!(self.state, State::Done) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    pub fn poll_event(&mut self) -> Option<StreamEvent> {
        self.events.pop_front()
    }

    pub fn partial(&self) -> &Reply {
        &self.reply
    }

    /// Call when the body has ended. Only a stream that reached its proper end
    /// is a reply; anything else is an error carrying what did arrive.
    ///
    /// One leniency: a Chat Completions stream that sent a `finish_reason` and
    /// then ended without `data: [DONE]` counts as complete. Older llama.cpp
    /// servers end that way, and by then the model has said everything; at
    /// worst the usage chunk is missing.
    pub fn finish(mut self) -> Result<Reply, StreamError> {
        match &self.state {
            State::Failed(kind) => return Err(self.error(kind.clone())),
            State::Done => return Ok(self.reply),
            State::Open => {}
        }
        // Whole events were all handled in `feed`; this only drops an
        // unterminated one, as the SSE algorithm says.
        self.sse.finish();
        if self.kind == ProviderKind::OpenAiCompatible && self.saw_finish_reason {
            return Ok(self.reply);
        }
        if self.saw_bytes && !self.saw_event {
            return Err(self.fail(StreamErrorKind::Malformed {
                detail: "the body held no event-stream event (does this server stream replies?)"
                    .into(),
            }));
        }
        Err(self.fail(StreamErrorKind::Unfinished))
    }

    fn error(&self, kind: StreamErrorKind) -> StreamError {
        StreamError {
            kind,
            partial: self.reply.clone(),
        }
    }

    fn fail(&mut self, kind: StreamErrorKind) -> StreamError {
        self.state = State::Failed(kind.clone());
        self.error(kind)
    }

    fn push_text(&mut self, text: &str) -> Result<(), StreamErrorKind> {
        if text.is_empty() {
            return Ok(());
        }
        if self.reply.text.len() + text.len() > self.limits.max_text_bytes {
            return Err(StreamErrorKind::TooLarge {
                what: "the length of the reply text",
            });
        }
        self.reply.text.push_str(text);
        self.events
            .push_back(StreamEvent::TextDelta(text.to_owned()));
        Ok(())
    }

    fn tool_calls_in_flight(&self) -> usize {
        self.reply.tool_calls.len() + self.pending_calls.len()
    }

    fn check_call_count(&self) -> Result<(), StreamErrorKind> {
        if self.tool_calls_in_flight() >= self.limits.max_tool_calls {
            return Err(StreamErrorKind::TooLarge {
                what: "the number of tool calls in one reply",
            });
        }
        Ok(())
    }

    fn push_call(&mut self, call: ToolCall) {
        self.reply.tool_calls.push(call.clone());
        self.events.push_back(StreamEvent::ToolCall(call));
    }

    // ---- OpenAI-compatible Chat Completions ----

    fn openai_event(&mut self, event: &Event) -> Result<(), StreamErrorKind> {
        let data = event.data.trim();
        // Keep-alives: some servers send empty data lines between chunks.
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.complete_openai_calls()?;
            self.state = State::Done;
            return Ok(());
        }
        let chunk = parse_json(data)?;
        if let Some(error) = chunk.get("error") {
            let error = classify_stream_error(error, self.secret.0.as_deref());
            return Err(StreamErrorKind::Provider(error));
        }
        let Some(chunk) = chunk.as_object() else {
            return Err(malformed("a stream chunk is not a JSON object", data));
        };
        if let Some(usage) = chunk.get("usage").and_then(Value::as_object) {
            if let Some(tokens) = token_count(usage, "prompt_tokens") {
                self.reply.usage.input_tokens = tokens;
            }
            if let Some(tokens) = token_count(usage, "completion_tokens") {
                self.reply.usage.output_tokens = tokens;
            }
        }
        // A field that would change the reply but has a shape this decoder
        // cannot read ends the reply as malformed: skipping it would lose
        // text or a call without a word.
        let unreadable = |what: &str| malformed(&format!("{what} has an unreadable shape"), data);
        let choice = match chunk.get("choices") {
            Some(Value::Array(choices)) => choices.first(),
            None | Some(Value::Null) => None,
            Some(_) => return Err(unreadable("`choices`")),
        };
        let Some(choice) = choice else {
            return Ok(());
        };
        if let Some(delta) = choice.get("delta").filter(|delta| !delta.is_null()) {
            match delta.get("content") {
                Some(Value::String(text)) => self.push_text(text)?,
                None | Some(Value::Null) => {}
                Some(_) => return Err(unreadable("a delta's `content`")),
            }
            match delta.get("tool_calls") {
                Some(Value::Array(fragments)) => {
                    for fragment in fragments {
                        self.openai_fragment(fragment)?;
                    }
                }
                None | Some(Value::Null) => {}
                Some(_) => return Err(unreadable("a delta's `tool_calls`")),
            }
        }
        let reason = match choice.get("finish_reason") {
            Some(Value::String(reason)) => Some(reason.as_str()),
            None | Some(Value::Null) => None,
            Some(_) => return Err(unreadable("`finish_reason`")),
        };
        if let Some(reason) = reason {
            self.reply.stop = Some(match reason {
                "stop" => StopReason::EndTurn,
                "tool_calls" | "function_call" => StopReason::ToolUse,
                "length" => StopReason::MaxTokens,
                other => StopReason::Other(shorten(other, MAX_STOP_REASON_CHARS)),
            });
            self.saw_finish_reason = true;
            // Calls are completed here rather than when the next index shows
            // up: servers do not promise to send one call's fragments before
            // the next call's.
            self.complete_openai_calls()?;
        }
        Ok(())
    }

    fn openai_fragment(&mut self, fragment: &Value) -> Result<(), StreamErrorKind> {
        let index = fragment.get("index").and_then(Value::as_u64);
        let id = fragment
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let function = fragment.get("function");
        let name = function
            .and_then(|function| function.get("name"))
            .and_then(Value::as_str)
            .filter(|name| !name.is_empty());
        let arguments = match function.and_then(|function| function.get("arguments")) {
            Some(Value::String(text)) => text.clone(),
            None | Some(Value::Null) => String::new(),
            // Not the protocol, but some servers send the object itself.
            Some(other) => other.to_string(),
        };
        check_name(id, "a tool call id")?;
        check_name(name, "a tool call name")?;

        // Servers that omit the index still give each new call an id, and
        // continue a call with neither.
        let position = match (index, id) {
            (Some(index), _) => self.pending_calls.iter().position(|c| c.index == index),
            (None, Some(id)) => self
                .pending_calls
                .iter()
                .position(|c| c.id.as_deref() == Some(id)),
            (None, None) => self.pending_calls.len().checked_sub(1),
        };
        let position = match position {
            Some(position) => position,
            None => {
                self.check_call_count()?;
                let index = index.unwrap_or_else(|| {
                    self.pending_calls
                        .iter()
                        .map(|c| c.index.saturating_add(1))
                        .max()
                        .unwrap_or(0)
                });
                self.pending_calls.push(PendingCall {
                    index,
                    id: None,
                    name: String::new(),
                    arguments: String::new(),
                });
                self.pending_calls.len() - 1
            }
        };
        let max_argument_bytes = self.limits.max_argument_bytes;
        let call = &mut self.pending_calls[position];
        if let (None, Some(id)) = (&call.id, id) {
            call.id = Some(id.to_owned());
        }
        if let (true, Some(name)) = (call.name.is_empty(), name) {
            call.name = name.to_owned();
        }
        if call.arguments.len() + arguments.len() > max_argument_bytes {
            return Err(StreamErrorKind::TooLarge {
                what: "the arguments of one tool call",
            });
        }
        call.arguments.push_str(&arguments);
        Ok(())
    }

    fn complete_openai_calls(&mut self) -> Result<(), StreamErrorKind> {
        let mut pending = std::mem::take(&mut self.pending_calls);
        pending.sort_unstable_by_key(|call| call.index);
        for call in pending {
            if call.name.is_empty() {
                return Err(StreamErrorKind::Malformed {
                    detail: format!("tool call {} has no name", call.index),
                });
            }
            let arguments = parse_arguments(&call.name, &call.arguments)?;
            // The tool result must quote an id back, and a few servers send
            // none; one unique within the reply is enough.
            let id = call.id.unwrap_or_else(|| format!("call_{}", call.index));
            self.push_call(ToolCall {
                id,
                name: call.name,
                arguments,
            });
        }
        Ok(())
    }

    // ---- Anthropic Messages ----

    fn anthropic_event(&mut self, event: &Event) -> Result<(), StreamErrorKind> {
        let data = parse_json(&event.data)?;
        // The event line names the event; a proxy that drops event lines
        // still leaves the same name in the data's "type".
        let name = if event.event != "message" {
            event.event.as_str()
        } else {
            data.get("type").and_then(Value::as_str).unwrap_or("")
        };
        match name {
            "message_start" => {
                let usage = data
                    .get("message")
                    .and_then(|message| message.get("usage"))
                    .and_then(Value::as_object);
                if let Some(usage) = usage {
                    self.anthropic_usage(usage);
                }
            }
            "content_block_start" => self.anthropic_block_start(&data)?,
            "content_block_delta" => self.anthropic_block_delta(&data)?,
            "content_block_stop" => self.anthropic_block_stop(&data)?,
            "message_delta" => {
                let reason = match data.get("delta").and_then(|d| d.get("stop_reason")) {
                    Some(Value::String(reason)) => Some(reason.as_str()),
                    None | Some(Value::Null) => None,
                    Some(_) => {
                        return Err(malformed(
                            "a message_delta's `stop_reason` has an unreadable shape",
                            &event.data,
                        ))
                    }
                };
                if let Some(reason) = reason {
                    self.reply.stop = Some(match reason {
                        "end_turn" => StopReason::EndTurn,
                        "tool_use" => StopReason::ToolUse,
                        "max_tokens" => StopReason::MaxTokens,
                        other => StopReason::Other(shorten(other, MAX_STOP_REASON_CHARS)),
                    });
                }
                if let Some(usage) = data.get("usage").and_then(Value::as_object) {
                    self.anthropic_usage(usage);
                }
            }
            "message_stop" => self.state = State::Done,
            "error" => {
                let error = data.get("error").unwrap_or(&data);
                let error = classify_stream_error(error, self.secret.0.as_deref());
                return Err(StreamErrorKind::Provider(error));
            }
            // "ping", and event types Anthropic may add: its versioning policy
            // says clients must ignore unknown events.
            _ => {}
        }
        Ok(())
    }

    fn anthropic_usage(&mut self, usage: &Map<String, Value>) {
        if let Some(tokens) = token_count(usage, "input_tokens") {
            self.reply.usage.input_tokens = tokens;
        }
        // Cumulative in message_delta, so the last value is the total.
        if let Some(tokens) = token_count(usage, "output_tokens") {
            self.reply.usage.output_tokens = tokens;
        }
    }

    fn anthropic_block_start(&mut self, data: &Value) -> Result<(), StreamErrorKind> {
        let index = block_index(data)?;
        if self.open_blocks.iter().any(|block| block.index == index) {
            return Err(StreamErrorKind::Malformed {
                detail: format!("content block {index} was started twice"),
            });
        }
        if self.open_blocks.len() >= MAX_OPEN_BLOCKS {
            return Err(StreamErrorKind::TooLarge {
                what: "the number of open content blocks",
            });
        }
        let block = data.get("content_block");
        let field = |name: &str| {
            block
                .and_then(|block| block.get(name))
                .and_then(Value::as_str)
        };
        let kind = match field("type") {
            Some("text") => {
                self.push_text(field("text").unwrap_or(""))?;
                BlockKind::Text
            }
            Some("tool_use") => {
                self.check_call_count()?;
                let (Some(id), Some(name)) = (field("id"), field("name")) else {
                    return Err(StreamErrorKind::Malformed {
                        detail: format!("tool_use block {index} lacks an id or a name"),
                    });
                };
                check_name(Some(id), "a tool call id")?;
                check_name(Some(name), "a tool call name")?;
                let initial = block
                    .and_then(|block| block.get("input"))
                    .filter(|input| input.as_object().is_some_and(|input| !input.is_empty()))
                    .cloned();
                if let Some(initial) = &initial {
                    if initial.to_string().len() > self.limits.max_argument_bytes {
                        return Err(StreamErrorKind::TooLarge {
                            what: "the arguments of one tool call",
                        });
                    }
                }
                BlockKind::Tool {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    json: String::new(),
                    initial,
                }
            }
            _ => BlockKind::Other,
        };
        self.open_blocks.push(Block { index, kind });
        Ok(())
    }

    fn anthropic_block_delta(&mut self, data: &Value) -> Result<(), StreamErrorKind> {
        let index = block_index(data)?;
        let Some(position) = self.open_blocks.iter().position(|b| b.index == index) else {
            return Err(StreamErrorKind::Malformed {
                detail: format!("a delta arrived for content block {index}, which is not open"),
            });
        };
        let delta = data.get("delta");
        let field = |name: &str| {
            delta
                .and_then(|delta| delta.get(name))
                .and_then(Value::as_str)
        };
        // A delta for our text or a tool call that cannot be read would
        // lose part of the reply: it ends the reply as malformed.
        let unreadable = || StreamErrorKind::Malformed {
            detail: format!("a delta for content block {index} has an unreadable shape"),
        };
        match (field("type"), &mut self.open_blocks[position].kind) {
            (Some("text_delta"), BlockKind::Text) => {
                let text = field("text").ok_or_else(unreadable)?.to_owned();
                self.push_text(&text)?;
            }
            (Some("input_json_delta"), BlockKind::Tool { json, .. }) => {
                let part = field("partial_json").ok_or_else(unreadable)?;
                if json.len() + part.len() > self.limits.max_argument_bytes {
                    return Err(StreamErrorKind::TooLarge {
                        what: "the arguments of one tool call",
                    });
                }
                json.push_str(part);
            }
            (Some("text_delta" | "input_json_delta"), _) => {
                return Err(StreamErrorKind::Malformed {
                    detail: format!("content block {index} got a delta of another block type"),
                });
            }
            (None, BlockKind::Text | BlockKind::Tool { .. }) => return Err(unreadable()),
            // thinking_delta, signature_delta, citations and later additions.
            _ => {}
        }
        Ok(())
    }

    fn anthropic_block_stop(&mut self, data: &Value) -> Result<(), StreamErrorKind> {
        let index = block_index(data)?;
        let Some(position) = self.open_blocks.iter().position(|b| b.index == index) else {
            return Err(StreamErrorKind::Malformed {
                detail: format!("content block {index} was stopped but never started"),
            });
        };
        let block = self.open_blocks.remove(position);
        if let BlockKind::Tool {
            id,
            name,
            json,
            initial,
        } = block.kind
        {
            let arguments = match (json.trim().is_empty(), initial) {
                (true, Some(initial)) => initial,
                _ => parse_arguments(&name, &json)?,
            };
            self.push_call(ToolCall {
                id,
                name,
                arguments,
            });
        }
        Ok(())
    }
}

fn parse_json(data: &str) -> Result<Value, StreamErrorKind> {
    serde_json::from_str(data)
        .map_err(|error| malformed(&format!("a stream chunk is not JSON ({error})"), data))
}

fn malformed(what: &str, data: &str) -> StreamErrorKind {
    StreamErrorKind::Malformed {
        detail: format!("{what}: {}", sanitize(&shorten(data, SNIPPET_CHARS), None)),
    }
}

/// Empty arguments mean none: models call argument-less tools that way.
fn parse_arguments(name: &str, json: &str) -> Result<Value, StreamErrorKind> {
    if json.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_str::<Value>(json) {
        Ok(value @ Value::Object(_)) => Ok(value),
        _ => Err(StreamErrorKind::Malformed {
            detail: format!(
                "the arguments of tool call `{}` are not a JSON object: {}",
                shorten(name, MAX_NAME_BYTES),
                sanitize(&shorten(json, SNIPPET_CHARS), None)
            ),
        }),
    }
}

fn block_index(data: &Value) -> Result<u64, StreamErrorKind> {
    data.get("index")
        .and_then(Value::as_u64)
        .ok_or_else(|| StreamErrorKind::Malformed {
            detail: "a content block event has no index".to_owned(),
        })
}

fn check_name(value: Option<&str>, what: &'static str) -> Result<(), StreamErrorKind> {
    match value {
        Some(value) if value.len() > MAX_NAME_BYTES => Err(StreamErrorKind::TooLarge { what }),
        _ => Ok(()),
    }
}

fn shorten(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Usage;

    fn usage_of(kind: ProviderKind, stream: &str) -> Usage {
        let mut decoder = StreamDecoder::new(kind);
        decoder.feed(stream.as_bytes()).expect("a readable stream");
        decoder.finish().expect("a complete stream").usage
    }

    fn openai(usage: &str) -> String {
        format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"Hi\"}},\"finish_reason\":\"stop\"}}],\"usage\":null}}\n\n\
             data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{usage}}}\n\n\
             data: [DONE]\n\n"
        )
    }

    fn anthropic(start: &str, delta: &str) -> String {
        format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{start}}}}}\n\n\
             event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"Hi\"}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n\
             event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\",\"stop_sequence\":null}},\"usage\":{delta}}}\n\n\
             event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
        )
    }

    fn tokens(input_tokens: u64, output_tokens: u64) -> Usage {
        Usage {
            input_tokens,
            output_tokens,
        }
    }

    #[test]
    fn openai_usage_comes_from_the_final_chunk() {
        let stream = openai(r#"{"prompt_tokens":1234,"completion_tokens":56,"total_tokens":1290}"#);
        assert_eq!(
            usage_of(ProviderKind::OpenAiCompatible, &stream),
            tokens(1234, 56)
        );
    }

    #[test]
    fn anthropic_usage_takes_input_from_the_start_and_output_from_the_last_delta() {
        let stream = anthropic(
            r#"{"input_tokens":2095,"output_tokens":1}"#,
            r#"{"output_tokens":503}"#,
        );
        assert_eq!(
            usage_of(ProviderKind::Anthropic, &stream),
            tokens(2095, 503)
        );
    }

    #[test]
    fn absurd_or_unreadable_counts_are_unknown_and_the_reply_stands() {
        let huge = format!(
            r#"{{"prompt_tokens":{},"completion_tokens":18446744073709551615}}"#,
            MAX_TOKENS + 1
        );
        assert_eq!(
            usage_of(ProviderKind::OpenAiCompatible, &openai(&huge)),
            tokens(0, 0)
        );
        let odd = openai(r#"{"prompt_tokens":-3,"completion_tokens":"7"}"#);
        assert_eq!(usage_of(ProviderKind::OpenAiCompatible, &odd), tokens(0, 0));
        let edge = format!(r#"{{"prompt_tokens":{MAX_TOKENS},"completion_tokens":1.5}}"#);
        assert_eq!(
            usage_of(ProviderKind::OpenAiCompatible, &openai(&edge)),
            tokens(MAX_TOKENS, 0)
        );
        // A later absurd count does not erase an earlier plausible one.
        let stream = anthropic(
            r#"{"input_tokens":10,"output_tokens":1}"#,
            r#"{"output_tokens":1e300}"#,
        );
        assert_eq!(usage_of(ProviderKind::Anthropic, &stream), tokens(10, 1));
    }
}
