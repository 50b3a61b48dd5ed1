//! What a provider request's failure means, from what the shell observed.
//!
//! The shell moves the bytes and reports facts: what a thrown error was
//! called and said, whether the reply had started (a remote response's
//! first byte, a local model's load), the status and headers of a refusal,
//! the stream decoder's error. Here those facts become the failure the
//! engine records: its class (what the page's label and advice say, and
//! whether a retry may follow), where in the exchange it happened
//! ([`FailedAt`]: before any response nothing was generated and the
//! request may be retried; inside the reply it is never resent) and the
//! recorded message (the outside words — the provider's, the browser's,
//! llama.cpp's — with what the app knows around them, kept as evidence).
//! What the app knows is also recorded as a [`FailureReason`](R), which
//! the page words in the reader's language; a failure that is only the
//! outside words (an HTTP error, a browser's network message) has none and
//! is shown as said.

use lifeline_core::journal::{FailureReason as R, ProviderFailureClass as C};
use lifeline_provider::local::{classify_local_failure, LocalFailure};
use lifeline_provider::{
    classify_http, classify_transport, BuildError, ErrorClass, ProviderError, StreamError,
    StreamErrorKind, WaitHeaders,
};

use crate::effect::{FailedAt, ProviderFailure};

/// A request the shell could not make at all: nothing was sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unsent {
    /// The engine sends only model-backed turns.
    BuiltIn,
    /// A local profile whose model settings do not decode.
    LocalSettingsUnreadable,
    /// The browser would not make an `AbortController`.
    NoAbortController,
    /// The browser would not make a `Headers`.
    NoHeaders,
    /// A header value the browser cannot send (never echoed: it may be the
    /// key).
    HeaderRefused { name: String },
    /// The provider crate could not build the request from the profile.
    NotBuilt(BuildError),
    /// Loading wllama or starting its generation threw, before the model
    /// was asked anything.
    LocalNotStarted { name: String, message: String },
}

/// The failure of a request that was never sent.
pub fn unsent(u: Unsent) -> ProviderFailure {
    let (class, reason) = match u {
        Unsent::BuiltIn => (C::InvalidRequest, R::BuiltIn),
        Unsent::LocalSettingsUnreadable => (C::InvalidRequest, R::LocalSettingsUnreadable),
        Unsent::NoAbortController => (C::Transport, R::NoAbortController),
        Unsent::NoHeaders => (C::InvalidRequest, R::NoHeaders),
        Unsent::HeaderRefused { name } => (C::InvalidRequest, R::HeaderRefused { name }),
        Unsent::NotBuilt(e) => (
            C::InvalidRequest,
            match e {
                BuildError::InvalidBaseUrl { base_url } => R::InvalidBaseUrl { url: base_url },
                BuildError::EmptyModel => R::NoModel,
                BuildError::ZeroMaxTokens => R::ZeroMaxTokens,
                BuildError::InvalidApiKey => R::KeyUnsendable,
            },
        ),
        Unsent::LocalNotStarted { name, message } => {
            return local_failed(&name, &message, "", false)
        }
    };
    because(class, reason, "", FailedAt::NoResponse)
}

/// A failure whose reason the app knows: recorded with its English.
pub fn because(class: C, reason: R, partial: &str, at: FailedAt) -> ProviderFailure {
    ProviderFailure {
        message: reason.to_string(),
        reason: Some(reason),
        ..failure(class, String::new(), partial, at)
    }
}

/// `fetch` itself rejected: no response byte arrived. An abort is the
/// user's Stop; anything else is a transport failure (network, CORS, DNS,
/// TLS), which the engine may retry.
pub fn fetch_failed(name: &str, message: &str, api_key: Option<&str>) -> ProviderFailure {
    transport_or_cancel(name, message, api_key, "", FailedAt::NoResponse)
}

/// Reading the reply's body threw after it had started: whatever broke
/// it, the reply was dropped mid-way (uncertain, never resent), not a
/// server that could not be reached.
pub fn read_failed(
    name: &str,
    message: &str,
    api_key: Option<&str>,
    partial: &str,
) -> ProviderFailure {
    let mut f = transport_or_cancel(name, message, api_key, partial, FailedAt::Reply);
    if f.class == C::Transport {
        f.class = C::Cut;
    }
    f
}

fn transport_or_cancel(
    name: &str,
    message: &str,
    api_key: Option<&str>,
    partial: &str,
    at: FailedAt,
) -> ProviderFailure {
    if name == "AbortError" {
        return because(C::Cancelled, R::Stopped, partial, at);
    }
    // The browser said nothing: the app says where it stopped.
    if message.trim().is_empty() {
        let reason = match at {
            FailedAt::Reply => R::ReplyStopped,
            _ => R::RequestFailed,
        };
        return because(C::Transport, reason, partial, at);
    }
    let p = classify_transport(message, api_key);
    failure(C::Transport, words(&p), partial, at)
}

/// The provider answered with an error status before any reply.
pub fn refused(
    status: u16,
    body: &str,
    waits: WaitHeaders,
    api_key: Option<&str>,
) -> ProviderFailure {
    let e = classify_http(status, body, waits, api_key);
    let mut f = failure(class(e.class), words(&e), "", FailedAt::Status(status));
    f.retry_after_ms = e.retry_after_ms;
    f
}

/// The provider worker ended with this request out. One it had been
/// handed may have reached the provider: the reply is lost mid-way
/// (uncertain, never resent). One still waiting for the worker to listen
/// was never sent, and may be sent again.
pub fn worker_ended(handed_over: bool) -> ProviderFailure {
    if handed_over {
        because(C::Cut, R::WorkerEnded, "", FailedAt::Reply)
    } else {
        because(C::Transport, R::WorkerEnded, "", FailedAt::NoResponse)
    }
}

/// The request is larger than any message between workers may be
/// (`lifeline_protocol::MAX_MESSAGE_BYTES`), so it was not sent; far past
/// any model's context too, and sending it again would not change that.
pub fn too_large_to_send(bytes: usize) -> ProviderFailure {
    let reason = R::ContextTooLong {
        detail: format!("{bytes} bytes of conversation"),
    };
    because(C::ContextLength, reason, "", FailedAt::NoResponse)
}

/// A successful status without a body to read.
pub fn no_body() -> ProviderFailure {
    because(C::NoFinish, R::NoBody, "", FailedAt::Reply)
}

/// The stream decoder refused the reply, with the text that had arrived.
pub fn stream_failed(e: StreamError) -> ProviderFailure {
    let partial = e.partial.text;
    let (class_, reason) = match e.kind {
        StreamErrorKind::Unfinished => (C::NoFinish, R::Unfinished),
        StreamErrorKind::Malformed { detail } => (C::Malformed, R::Malformed { detail }),
        StreamErrorKind::TooLarge { what } => (
            C::Malformed,
            R::TooLarge {
                what: what.to_owned(),
            },
        ),
        // The provider's own words.
        StreamErrorKind::Provider(p) => {
            return failure(class(p.class), words(&p), &partial, FailedAt::Reply)
        }
    };
    because(class_, reason, &partial, FailedAt::Reply)
}

/// A local model's failure, as wllama named and described it. Before the
/// model was loaded nothing was generated (no response: a local request is
/// never retried, see `retry::refused_before_work`); after, the reply had
/// started and is never resent.
pub fn local_failed(name: &str, message: &str, partial: &str, loaded: bool) -> ProviderFailure {
    let detail = || message.to_owned();
    let (class, reason) = match classify_local_failure(name, message) {
        LocalFailure::Aborted => (C::Cancelled, R::Stopped),
        LocalFailure::NotGguf => (C::InvalidRequest, R::NotGguf { detail: detail() }),
        LocalFailure::UnsupportedArchitecture => (
            C::InvalidRequest,
            R::UnsupportedArchitecture { detail: detail() },
        ),
        LocalFailure::ContextTooLong => (C::ContextLength, R::ContextTooLong { detail: detail() }),
        LocalFailure::OutOfMemory => (C::Server, R::OutOfMemory { detail: detail() }),
        LocalFailure::InvalidUtf8 => (C::Malformed, R::InvalidUtf8),
        LocalFailure::Other if message.trim().is_empty() => (
            C::Server,
            R::LocalFailed {
                name: name.to_owned(),
            },
        ),
        // wllama's own words.
        LocalFailure::Other => {
            return failure(C::Server, format!("{name}: {message}"), partial, at(loaded))
        }
    };
    because(class, reason, partial, at(loaded))
}

fn at(loaded: bool) -> FailedAt {
    if loaded {
        FailedAt::Reply
    } else {
        FailedAt::NoResponse
    }
}

fn class(c: ErrorClass) -> C {
    match c {
        ErrorClass::Auth => C::Auth,
        ErrorClass::RateLimit => C::RateLimit,
        ErrorClass::ContextLength => C::ContextLength,
        ErrorClass::Transport => C::Transport,
        ErrorClass::Server => C::Server,
        ErrorClass::Overloaded => C::Overloaded,
        ErrorClass::InvalidRequest => C::InvalidRequest,
        ErrorClass::NotFound => C::NotFound,
    }
}

/// The provider's words without the provider crate's advice: the journal's
/// class carries the advice, worded for the page.
fn words(e: &ProviderError) -> String {
    match e.status {
        Some(status) => format!("HTTP {status}: {}", e.message),
        None => e.message.clone(),
    }
}

fn failure(class: C, message: String, partial: &str, at: FailedAt) -> ProviderFailure {
    ProviderFailure {
        class,
        message,
        partial_text: partial.to_owned(),
        at,
        retry_after_ms: None,
        reason: None,
    }
}

#[cfg(test)]
#[path = "failure_tests.rs"]
mod tests;
