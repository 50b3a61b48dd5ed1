//! What a provider request's failure was: its class, the short label and
//! the advice the English export and logs use (the page words both from
//! its catalog), and whether the reply broke off.

use lifeline_decode::Decode;
use lifeline_encode::Encode;
use serde::{Deserialize, Serialize};

/// Why a provider request ended without a complete reply.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(rename_all = "snake_case")]
pub enum ProviderFailureClass {
    /// The key was refused (401/403).
    Auth,
    /// Too many requests or tokens (429).
    RateLimit,
    /// The conversation does not fit the model's context window.
    ContextLength,
    /// The request never got an HTTP answer (network, CORS, DNS, TLS).
    Transport,
    /// The provider failed (5xx, overloaded).
    Server,
    /// The provider refused the request as malformed (400).
    InvalidRequest,
    /// No such model or endpoint (404).
    NotFound,
    /// The stream ended in the middle of the reply.
    Cut,
    /// The reply could not be understood.
    Malformed,
    /// The user stopped the turn while the request was out.
    Cancelled,
    /// The provider is overloaded (503, 529, `overloaded_error`).
    Overloaded,
    /// No response headers arrived in time; the request may have reached
    /// the provider, so it is not resent.
    ConnectTimeout,
    /// The stream went quiet mid-reply for longer than the idle timeout.
    IdleTimeout,
    /// The stream ended cleanly but without the provider's finish reason.
    NoFinish,
}

impl ProviderFailureClass {
    pub const ALL: [ProviderFailureClass; 14] = {
        use ProviderFailureClass as C;
        [
            C::Auth,
            C::RateLimit,
            C::ContextLength,
            C::Transport,
            C::Server,
            C::InvalidRequest,
            C::NotFound,
            C::Cut,
            C::Malformed,
            C::Cancelled,
            C::Overloaded,
            C::ConnectTimeout,
            C::IdleTimeout,
            C::NoFinish,
        ]
    };

    /// Whether the reply broke off, or may have reached the provider: what
    /// arrived is kept and nothing is resent.
    pub fn broke_off(self) -> bool {
        use ProviderFailureClass as C;
        matches!(
            self,
            C::Cut | C::Malformed | C::IdleTimeout | C::ConnectTimeout | C::NoFinish
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderFailureClass::Auth => "auth",
            ProviderFailureClass::RateLimit => "rate_limit",
            ProviderFailureClass::ContextLength => "context_length",
            ProviderFailureClass::Transport => "transport",
            ProviderFailureClass::Server => "server",
            ProviderFailureClass::InvalidRequest => "invalid_request",
            ProviderFailureClass::NotFound => "not_found",
            ProviderFailureClass::Cut => "cut",
            ProviderFailureClass::Malformed => "malformed",
            ProviderFailureClass::Cancelled => "cancelled",
            ProviderFailureClass::Overloaded => "overloaded",
            ProviderFailureClass::ConnectTimeout => "connect_timeout",
            ProviderFailureClass::IdleTimeout => "idle_timeout",
            ProviderFailureClass::NoFinish => "no_finish",
        }
    }

    /// A short human label ("rate limited").
    pub fn label(self) -> &'static str {
        match self {
            ProviderFailureClass::Auth => "authentication failed",
            ProviderFailureClass::RateLimit => "rate limited",
            ProviderFailureClass::ContextLength => "conversation too long",
            ProviderFailureClass::Transport => "could not connect",
            ProviderFailureClass::Server => "provider error",
            ProviderFailureClass::InvalidRequest => "request refused",
            ProviderFailureClass::NotFound => "model or endpoint not found",
            ProviderFailureClass::Cut => "dropped mid-reply",
            ProviderFailureClass::Malformed => "reply not understood",
            ProviderFailureClass::Cancelled => "cancelled",
            ProviderFailureClass::Overloaded => "provider overloaded",
            ProviderFailureClass::ConnectTimeout => "no answer in time",
            ProviderFailureClass::IdleTimeout => "reply stalled",
            ProviderFailureClass::NoFinish => "reply ended unfinished",
        }
    }

    /// One actionable sentence for the user.
    pub fn advice(self) -> &'static str {
        match self {
            ProviderFailureClass::Auth => {
                "Check the API key in the profile, then send the message again."
            }
            ProviderFailureClass::RateLimit => {
                "Wait a minute (or raise the provider account's limits), then send the message again."
            }
            ProviderFailureClass::ContextLength => {
                "Start a new session, or choose a model with a larger context window, and send a shorter message."
            }
            ProviderFailureClass::Transport => {
                "Either the server is down (or not at the profile's base URL), or it does not allow this page's origin (CORS); the browser cannot tell which. Check both, then send the message again."
            }
            ProviderFailureClass::Server => {
                "The provider had a problem on its side; try again in a little while."
            }
            ProviderFailureClass::InvalidRequest => {
                "The provider refused the request as sent; check the profile's model and settings, or start a new session."
            }
            ProviderFailureClass::NotFound => {
                "Check the model name and base URL in the profile."
            }
            ProviderFailureClass::Cut => {
                "The connection dropped mid-reply; nothing was resent. Send the message again to ask anew."
            }
            ProviderFailureClass::Malformed => {
                "The provider sent something this app cannot read; check that the base URL points at a compatible API."
            }
            ProviderFailureClass::Cancelled => "Send a new message when you are ready.",
            ProviderFailureClass::Overloaded => {
                "The provider is overloaded and kept refusing after the retries; try again in a few minutes."
            }
            ProviderFailureClass::ConnectTimeout => {
                "The provider did not answer in time; it may have received the message, so nothing was resent. Check the server, then send the message again."
            }
            ProviderFailureClass::IdleTimeout => {
                "The reply stopped arriving mid-way; nothing was resent. Send the message again to ask anew, or raise the profile's “Idle time in a reply” for a slow model."
            }
            ProviderFailureClass::NoFinish => {
                "The provider ended the reply without saying it was finished; nothing was resent. Send the message again to ask anew."
            }
        }
    }
}
