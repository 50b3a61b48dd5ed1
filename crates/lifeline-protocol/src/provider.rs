//! Messages between the controller and its provider worker, and the two
//! results a provider request ends with.
//!
//! Calling a model (request building, the HTTP stream and its decoder, a
//! local model's llama.cpp) is a quarter of the controller's code, and a
//! first visit with the built-in agent never runs it. So it runs in a
//! worker of its own, which the controller starts when a session first asks
//! a model and keeps for later requests. The engine decides exactly as
//! before: the controller shell hands the worker what `Effect::Fetch` says
//! and gives the engine back what the worker reports, in order.
//!
//! What a failure means (its class, where in the exchange it happened) is
//! still decided by `lifeline_engine::failure`, from the facts the worker
//! observed, in the worker: [`ProviderFailure`] arrives already decided.
//! A worker that ends with a request out is a reply lost mid-exchange, which
//! the controller reports as such and the engine never resends.
//!
//! Architecture Invariant: the key crosses only inside
//! [`ControllerToProvider::Fetch`], as a [`SecretText`] whose `Debug` hides
//! it; nothing the worker sends back carries it (`lifeline_provider` redacts
//! it from every text it returns).

use lifeline_core::flat::FlatSet;
use lifeline_core::journal::{FailureReason, ProviderFailureClass, ToolCallRecord};
use lifeline_core::profile::{Provider, Tool};
use lifeline_core::{ModelMessage, ProviderRequestId};
use lifeline_decode::Decode;
use lifeline_encode::Encode;
use serde::{Deserialize, Serialize};

use crate::SecretText;

/// A complete reply from a provider.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct ProviderReply {
    pub text: String,
    pub tool_calls: Vec<ToolCallRecord>,
    pub stop: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// How a provider request ended without a complete reply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct ProviderFailure {
    pub class: ProviderFailureClass,
    pub message: String,
    pub partial_text: String,
    /// Where in the exchange it failed, as the shell saw it.
    pub at: FailedAt,
    /// How long the provider asked to wait (`Retry-After`, or a rate-limit
    /// reset header), when it did.
    pub retry_after_ms: Option<u64>,
    /// Why, when the app knows (recorded beside `message`, which is its
    /// English with the outside words): the page words it.
    pub reason: Option<FailureReason>,
}

/// Where a provider request failed: the fact a retry decision rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum FailedAt {
    /// No response byte arrived: the connection failed (or the request was
    /// never sent).
    NoResponse,
    /// The provider answered with this HTTP error status, before any reply.
    Status(u16),
    /// Inside the reply, after its first byte (or aborted).
    Reply,
}

/// Controller → provider worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ControllerToProvider {
    /// Send one recorded request (it is durable before this is posted) and
    /// stream its reply.
    Fetch {
        request: ProviderRequestId,
        provider: Provider,
        api_key: Option<SecretText>,
        conversation: Vec<ModelMessage>,
        tools: FlatSet<Tool>,
    },
    /// Stop: abort the request if it is still out.
    Abort { request: ProviderRequestId },
}

/// Provider worker → controller, each naming the request it is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ProviderToController {
    /// First message: the worker listens from now on. `watched`: it holds
    /// the Web Lock named by its worker `name` for its life, so the lock's
    /// release tells the controller it ended.
    Ready { protocol: u32, watched: bool },
    /// Response bytes arrived (the headers first).
    Bytes { request: ProviderRequestId },
    /// A piece of the reply's text, for the live preview.
    Text {
        request: ProviderRequestId,
        delta: String,
    },
    /// A local model's load: `read` of the file's `total` bytes so far.
    Loading {
        request: ProviderRequestId,
        read: u64,
        total: u64,
    },
    /// A local model has loaded.
    Loaded { request: ProviderRequestId },
    /// The request ended: the last message about it.
    Ended {
        request: ProviderRequestId,
        result: Result<ProviderReply, ProviderFailure>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode, encode};

    fn request() -> ProviderRequestId {
        ProviderRequestId::from_u128(0x0193_0000_0000_7000_8000_0000_0000_0042).unwrap()
    }

    #[test]
    fn a_fetch_round_trips_and_its_debug_hides_the_key() {
        let fetch = ControllerToProvider::Fetch {
            request: request(),
            provider: Provider::OpenAiCompatible {
                base_url: "https://api.example.com/v1".into(),
                model: "m".into(),
            },
            api_key: Some(SecretText("sk-very-secret".into())),
            conversation: vec![
                ModelMessage::User { text: "hi".into() },
                ModelMessage::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCallRecord {
                        id: "c1".into(),
                        name: "list_files".into(),
                        arguments: "{}".into(),
                    }],
                },
                ModelMessage::ToolResult {
                    call_id: "c1".into(),
                    name: "list_files".into(),
                    content: "a.txt".into(),
                    is_error: false,
                },
            ],
            tools: [Tool::ListFiles].into_iter().collect(),
        };
        let text = encode(&fetch);
        assert_eq!(decode::<ControllerToProvider>(&text).unwrap(), fetch);
        assert!(!format!("{fetch:?}").contains("sk-very-secret"));
    }

    #[test]
    fn every_ending_round_trips() {
        let endings = [
            Ok(ProviderReply {
                text: "done".into(),
                tool_calls: Vec::new(),
                stop: "end_turn".into(),
                input_tokens: 12,
                output_tokens: 3,
            }),
            Err(ProviderFailure {
                class: ProviderFailureClass::RateLimit,
                message: "slow down".into(),
                partial_text: String::new(),
                at: FailedAt::Status(429),
                retry_after_ms: Some(2_000),
                reason: None,
            }),
            Err(ProviderFailure {
                class: ProviderFailureClass::Cut,
                message: "the reply stopped".into(),
                partial_text: "half a".into(),
                at: FailedAt::Reply,
                retry_after_ms: None,
                reason: Some(FailureReason::ReplyStopped),
            }),
        ];
        for result in endings {
            let message = ProviderToController::Ended {
                request: request(),
                result,
            };
            let text = encode(&message);
            assert_eq!(decode::<ProviderToController>(&text).unwrap(), message);
        }
    }

    #[test]
    fn a_message_with_a_field_it_does_not_know_is_refused() {
        let text = encode(&ProviderToController::Bytes { request: request() });
        let text = text.replacen("}}", ",\"extra\":1}}", 1);
        assert!(decode::<ProviderToController>(&text).is_err());
    }
}
