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
    /// The provider is overloaded (503, Anthropic's 529 or
    /// `overloaded_error`): it refused the work, which is safe to send again.
    Overloaded,
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
            ErrorClass::Overloaded => "The provider is overloaded: try again in a little while.",
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
    /// How long the provider asked to wait before a new attempt
    /// ([`WaitHeaders::wait_ms`]); `None` when it did not say.
    pub retry_after_ms: Option<u64>,
}

/// The headers of a refused response that say when to come back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitHeaders<'a> {
    /// `Retry-After`.
    pub retry_after: Option<&'a str>,
    /// The response's own `Date`, for a `Retry-After` that is a date.
    pub date: Option<&'a str>,
    /// OpenAI's `x-ratelimit-reset-requests`.
    pub rate_limit_reset: Option<&'a str>,
}

impl<'a> WaitHeaders<'a> {
    /// Only a `Retry-After` header.
    pub fn retry_after(value: &'a str) -> Self {
        WaitHeaders {
            retry_after: Some(value),
            ..WaitHeaders::default()
        }
    }

    /// The wait they name, in milliseconds: `Retry-After` first (seconds,
    /// or a date measured against `Date`), else the rate-limit reset.
    pub fn wait_ms(&self) -> Option<u64> {
        self.retry_after
            .and_then(|value| retry_after_ms(value, self.date))
            .or_else(|| self.rate_limit_reset.and_then(rate_limit_reset_ms))
    }
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
/// not), `waits` the response's headers that name a wait, `api_key` the key
/// the request carried, so that it can be kept out of the message.
pub fn classify_http(
    status: u16,
    body: &str,
    waits: WaitHeaders,
    api_key: Option<&str>,
) -> ProviderError {
    let class = match status {
        401 | 403 => ErrorClass::Auth,
        429 => ErrorClass::RateLimit,
        404 => ErrorClass::NotFound,
        503 | 529 => ErrorClass::Overloaded,
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
        retry_after_ms: waits.wait_ms(),
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
        retry_after_ms: None,
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
    let class = if kind.contains("overloaded") {
        ErrorClass::Overloaded
    } else if kind.contains("rate_limit") || kind.contains("insufficient_quota") {
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
        // api_error, server_error, and anything unknown:
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
        retry_after_ms: None,
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

/// How long a `Retry-After` header asks to wait, in milliseconds: delta
/// seconds, or an HTTP-date. A date is measured against the same response's
/// `Date` header, never against this machine's clock: both come from the
/// server's clock, so a skewed client clock cannot turn "in 5 s" into an
/// hour or into nothing. A date without a `Date` header is not honoured
/// (`None`: the caller falls back to its own backoff).
pub fn retry_after_ms(value: &str, date: Option<&str>) -> Option<u64> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(seconds.saturating_mul(1000));
    }
    if let Ok(seconds) = value.parse::<f64>() {
        return (0.0..1e12)
            .contains(&seconds)
            .then(|| (seconds * 1000.0).ceil() as u64);
    }
    let until = http_date_seconds(value)?;
    let now = http_date_seconds(date?)?;
    Some(until.saturating_sub(now).saturating_mul(1000))
}

/// The wait an OpenAI-style rate-limit reset header names
/// (`x-ratelimit-reset-requests: 6m0s`, `1s`, `250ms`), in milliseconds;
/// used when a 429 carries no `Retry-After`.
pub fn rate_limit_reset_ms(value: &str) -> Option<u64> {
    let mut rest = value.trim();
    let mut total = 0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ms" => 1.0,
            "s" => 1000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            _ => return None,
        };
        rest = &rest[unit_end..];
        total += number * scale;
    }
    (total < 1e12).then(|| total.ceil() as u64)
}

/// Seconds since 1970 of an IMF-fixdate (`Wed, 21 Oct 2015 07:28:00 GMT`),
/// the only HTTP-date form servers may send today.
fn http_date_seconds(value: &str) -> Option<u64> {
    let mut parts = value.split_ascii_whitespace();
    let _weekday = parts.next()?;
    let day: u64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: u64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (clock.next()??, clock.next()??, clock.next()??);
    if parts.next()? != "GMT" || !(1970..10_000).contains(&year) || !(1..=31).contains(&day) {
        return None;
    }
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm), year >= 1970.
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).checked_sub(719_468)?;
    Some(days * 86_400 + h * 3600 + m * 60 + s)
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
    fn retry_after_accepts_seconds_and_dates_against_the_date_header() {
        assert_eq!(retry_after_ms(" 30 ", None), Some(30_000));
        assert_eq!(retry_after_ms("1.5", None), Some(1500));
        assert_eq!(retry_after_ms("-3", None), None);
        assert_eq!(retry_after_ms("NaN", None), None);
        let date = Some("Wed, 21 Oct 2015 07:28:00 GMT");
        assert_eq!(
            retry_after_ms("Wed, 21 Oct 2015 07:28:03 GMT", date),
            Some(3000)
        );
        // Across a month and a year boundary.
        assert_eq!(
            retry_after_ms(
                "Fri, 01 Jan 2016 00:00:02 GMT",
                Some("Thu, 31 Dec 2015 23:59:58 GMT")
            ),
            Some(4000)
        );
        // A date in the past means now; without a Date header, not honoured.
        assert_eq!(
            retry_after_ms("Wed, 21 Oct 2015 07:27:00 GMT", date),
            Some(0)
        );
        assert_eq!(retry_after_ms("Wed, 21 Oct 2015 07:28:03 GMT", None), None);
        assert_eq!(retry_after_ms("Wed, 21 Foo 2015 07:28:03 GMT", date), None);
        assert_eq!(http_date_seconds("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            http_date_seconds("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
    }

    #[test]
    fn rate_limit_resets_are_durations() {
        assert_eq!(rate_limit_reset_ms("1s"), Some(1000));
        assert_eq!(rate_limit_reset_ms("6m0s"), Some(360_000));
        assert_eq!(rate_limit_reset_ms("250ms"), Some(250));
        assert_eq!(rate_limit_reset_ms("1.5s"), Some(1500));
        assert_eq!(rate_limit_reset_ms(""), None);
        assert_eq!(rate_limit_reset_ms("soon"), None);
        assert_eq!(rate_limit_reset_ms("3d"), None);
    }

    #[test]
    fn retry_after_comes_first_and_the_rate_limit_reset_stands_in_for_it() {
        let both = WaitHeaders {
            retry_after: Some("2"),
            date: None,
            rate_limit_reset: Some("6m0s"),
        };
        assert_eq!(both.wait_ms(), Some(2_000));
        let dated = WaitHeaders {
            retry_after: Some("Wed, 21 Oct 2015 07:28:03 GMT"),
            date: Some("Wed, 21 Oct 2015 07:28:00 GMT"),
            rate_limit_reset: None,
        };
        assert_eq!(dated.wait_ms(), Some(3_000));
        let reset_only = WaitHeaders {
            rate_limit_reset: Some("250ms"),
            ..WaitHeaders::default()
        };
        assert_eq!(reset_only.wait_ms(), Some(250));
        // An unreadable Retry-After leaves the reset to say it.
        let unreadable = WaitHeaders {
            retry_after: Some("soon"),
            date: None,
            rate_limit_reset: Some("1s"),
        };
        assert_eq!(unreadable.wait_ms(), Some(1_000));
        assert_eq!(WaitHeaders::default().wait_ms(), None);
        assert_eq!(
            classify_http(429, "", both, None).retry_after_ms,
            Some(2_000)
        );
    }

    #[test]
    fn overload_statuses_are_their_own_class() {
        for status in [503, 529] {
            assert_eq!(
                classify_http(status, "", WaitHeaders::default(), None).class,
                ErrorClass::Overloaded
            );
        }
        assert_eq!(
            classify_http(500, "", WaitHeaders::default(), None).class,
            ErrorClass::Server
        );
        let e = classify_http(
            429,
            "",
            WaitHeaders::retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            None,
        );
        assert_eq!(e.retry_after_ms, None);
    }

    #[test]
    fn stream_errors_are_classified_by_type() {
        let cases = [
            (
                r#"{"type":"overloaded_error","message":"Overloaded"}"#,
                ErrorClass::Overloaded,
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
