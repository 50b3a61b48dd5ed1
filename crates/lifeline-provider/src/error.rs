use serde::{Deserialize, Serialize};
use std::fmt;

/// Error messages are shown in the UI and recorded; a provider can answer with
/// a whole HTML error page, which helps no one at full length.
pub const MAX_MESSAGE_CHARS: usize = 500;

/// What kind of failure, chosen by what the user can do about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    Auth,
    RateLimit,
    ContextLength,
    Transport,
    Server,
    InvalidRequest,
    NotFound,
}

impl ErrorClass {
    /// One sentence telling the user what to do next.
    pub fn advice(self) -> &'static str {
        match self {
            ErrorClass::Auth => "Check the API key in the profile's credential.",
            ErrorClass::RateLimit => {
                "The provider is rate limiting this key: wait a moment, then send again."
            }
            ErrorClass::ContextLength => {
                "The conversation is too long for the model: start a new session or shorten \
                 the message."
            }
            ErrorClass::Transport => {
                "The provider could not be reached: check the base URL, that the server is \
                 running, and that it allows this origin (CORS, e.g. OLLAMA_ORIGINS for Ollama)."
            }
            ErrorClass::Server => "The provider failed on its side: try again later.",
            ErrorClass::InvalidRequest => {
                "The provider refused the request: check the model name and the profile's \
                 settings."
            }
            ErrorClass::NotFound => {
                "The provider does not know this route or model: check the base URL and the \
                 model name."
            }
        }
    }
}

/// A failed provider call, safe to show and to record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderError {
    pub class: ErrorClass,
    /// `None` when no HTTP status was received (transport failure, or an error
    /// event inside a stream that had started with 200).
    pub status: Option<u16>,
    /// The provider's own words, with the API key replaced by `[redacted]`,
    /// at most [`MAX_MESSAGE_CHARS`] characters.
    pub message: String,
    pub retry_after_seconds: Option<u64>,
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "HTTP {status}: {}", self.message)?,
            None => f.write_str(&self.message)?,
        }
        write!(f, " — {}", self.class.advice())
    }
}

impl std::error::Error for ProviderError {}

/// Classifies a non-2xx response. `body` is whatever the server sent (JSON or
/// not), `retry_after` the raw `retry-after` header, `api_key` the key the
/// request carried, so that it can be kept out of the message.
pub fn classify_http(
    status: u16,
    body: &str,
    retry_after: Option<&str>,
    api_key: Option<&str>,
) -> ProviderError {
    let class = match status {
        401 | 403 => ErrorClass::Auth,
        429 => ErrorClass::RateLimit,
        404 => ErrorClass::NotFound,
        400 | 413 | 422 if mentions_context_length(body) => ErrorClass::ContextLength,
        400..=499 => ErrorClass::InvalidRequest,
        _ => ErrorClass::Server,
    };
    let raw = extract_message(body);
    let message = if raw.trim().is_empty() {
        format!("the server answered HTTP {status} without a message")
    } else {
        sanitize(&raw, api_key)
    };
    ProviderError {
        class,
        status: Some(status),
        message,
        retry_after_seconds: retry_after.and_then(parse_retry_after),
    }
}

/// Classifies a request that got no response at all (`fetch` rejected).
pub fn classify_transport(detail: &str, api_key: Option<&str>) -> ProviderError {
    let message = if detail.trim().is_empty() {
        "the request failed before any response arrived".to_owned()
    } else {
        sanitize(detail, api_key)
    };
    ProviderError {
        class: ErrorClass::Transport,
        status: None,
        message,
        retry_after_seconds: None,
    }
}

/// Classifies an error object sent inside a stream that had already started
/// (OpenAI `{"error":{...}}` chunk, Anthropic `error` event). There is no
/// status then, so the error's type and message decide.
pub(crate) fn classify_stream_error(
    error: &serde_json::Value,
    api_key: Option<&str>,
) -> ProviderError {
    let field = |name: &str| {
        error
            .get(name)
            .and_then(|value| value.as_str())
            .unwrap_or("")
            .to_ascii_lowercase()
    };
    let kind = format!("{} {}", field("type"), field("code"));
    let raw = match error.get("message").and_then(|value| value.as_str()) {
        Some(message) => message.to_owned(),
        None => match error.as_str() {
            Some(message) => message.to_owned(),
            None => error.to_string(),
        },
    };
    let class = if kind.contains("rate_limit") || kind.contains("insufficient_quota") {
        ErrorClass::RateLimit
    } else if kind.contains("authentication")
        || kind.contains("permission")
        || kind.contains("invalid_api_key")
    {
        ErrorClass::Auth
    } else if kind.contains("not_found") {
        ErrorClass::NotFound
    } else if mentions_context_length(&kind) || mentions_context_length(&raw) {
        ErrorClass::ContextLength
    } else if kind.contains("invalid_request") {
        ErrorClass::InvalidRequest
    } else {
        // overloaded_error, api_error, server_error, and anything unknown:
        // the stream had been accepted, so the failure is the provider's.
        ErrorClass::Server
    };
    let message = if raw.trim().is_empty() {
        "the provider reported an error in the stream without a message".to_owned()
    } else {
        sanitize(&raw, api_key)
    };
    ProviderError {
        class,
        status: None,
        message,
        retry_after_seconds: None,
    }
}

fn mentions_context_length(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "maximum context length",
        "prompt is too long",
        "too many tokens",
        // llama.cpp: "the request exceeds the available context size"
        "context size",
        "context window",
        "context length",
    ]
    .iter()
    .any(|phrase| text.contains(phrase))
}

/// Both providers nest the message as `{"error":{"message":...}}`; Ollama's
/// native routes use `{"error":"..."}`. Anything else is shown as it came.
fn extract_message(body: &str) -> String {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(body) else {
        return body.to_owned();
    };
    let error = value.get("error");
    let nested = error
        .and_then(|error| error.get("message"))
        .and_then(|m| m.as_str());
    let flat = error.and_then(|error| error.as_str());
    let top = value.get("message").and_then(|m| m.as_str());
    match nested.or(flat).or(top) {
        Some(message) => message.to_owned(),
        None => body.to_owned(),
    }
}

/// Seconds only: an HTTP-date would need a clock, which this crate has not.
fn parse_retry_after(value: &str) -> Option<u64> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(seconds);
    }
    let seconds = value.parse::<f64>().ok()?;
    if (0.0..1e15).contains(&seconds) {
        Some(seconds.ceil() as u64)
    } else {
        None
    }
}

/// Makes provider-supplied text safe to show and record: the key replaced
/// before anything is cut (so no fragment of it survives at the cut), masked
/// keys such as OpenAI's `sk-abc*****wxyz` dropped too (they still give away
/// the key's ends), control characters flattened, and the length bounded.
pub(crate) fn sanitize(text: &str, api_key: Option<&str>) -> String {
    let mut text = text.to_owned();
    if let Some(key) = api_key.map(str::trim).filter(|key| !key.is_empty()) {
        text = text.replace(key, "[redacted]");
    }
    let masked_removed: Vec<&str> = text
        .split(' ')
        .map(|word| {
            if word.contains("***") {
                "[redacted]"
            } else {
                word
            }
        })
        .collect();
    let text: String = masked_removed
        .join(" ")
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let text = text.trim();
    if text.chars().count() <= MAX_MESSAGE_CHARS {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(MAX_MESSAGE_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_replaces_the_key_before_truncating() {
        let key = "sk-secret-0123456789";
        let text = format!("{}{key}", "x".repeat(495));
        let out = sanitize(&text, Some(key));
        assert!(!out.contains("sk-secret"));
        assert!(out.chars().count() <= MAX_MESSAGE_CHARS);
    }

    #[test]
    fn sanitize_drops_masked_keys() {
        let out = sanitize(
            "Incorrect API key provided: sk-ab*********wxyz. See docs.",
            None,
        );
        assert_eq!(out, "Incorrect API key provided: [redacted] See docs.");
    }

    #[test]
    fn retry_after_accepts_seconds_and_ignores_dates() {
        assert_eq!(parse_retry_after(" 30 "), Some(30));
        assert_eq!(parse_retry_after("1.5"), Some(2));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-3"), None);
        assert_eq!(parse_retry_after("NaN"), None);
    }

    #[test]
    fn stream_errors_are_classified_by_type() {
        let cases = [
            (
                r#"{"type":"overloaded_error","message":"Overloaded"}"#,
                ErrorClass::Server,
            ),
            (
                r#"{"type":"rate_limit_error","message":"slow"}"#,
                ErrorClass::RateLimit,
            ),
            (
                r#"{"type":"authentication_error","message":"x"}"#,
                ErrorClass::Auth,
            ),
            (
                r#"{"type":"permission_error","message":"x"}"#,
                ErrorClass::Auth,
            ),
            (
                r#"{"type":"invalid_request_error","message":"bad"}"#,
                ErrorClass::InvalidRequest,
            ),
            (
                r#"{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens"}"#,
                ErrorClass::ContextLength,
            ),
            (
                r#"{"type":"not_found_error","message":"x"}"#,
                ErrorClass::NotFound,
            ),
            (r#"{"type":"api_error","message":"x"}"#, ErrorClass::Server),
            (
                r#"{"message":"boom","type":"server_error","code":null}"#,
                ErrorClass::Server,
            ),
            (r#""just a string""#, ErrorClass::Server),
        ];
        for (json, class) in cases {
            let value: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(classify_stream_error(&value, None).class, class, "{json}");
        }
    }
}
