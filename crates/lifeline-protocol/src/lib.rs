//! Wire messages between the page, the controller worker and runtime workers.
//!
//! Every message crosses a `postMessage` boundary as a JSON string. Anything
//! arriving from another context is untrusted: [`decode`] bounds its size and
//! returns a typed error instead of panicking, so a malformed message is
//! rejected with an explanation and never takes a worker down.
//!
//! The recovery semantics (commands, events, cursors) live in `lifeline-core`;
//! this crate only frames the conversation between the three contexts.

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::fmt;

/// Bumped whenever a message changes shape; peers with another version refuse
/// each other rather than misreading fields.
pub const PROTOCOL_VERSION: u32 = 1;

/// Upper bound on an encoded message. Output streams are chunked well below
/// this, so anything larger is a bug or hostile input, not data to parse.
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;

/// Page → controller.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum PageToController {
    /// Sent together with a transferred `MessagePort` whose other end belongs
    /// to the runtime worker (the page relays the reverse dial).
    AttachRuntime { protocol: u32 },
    /// A round trip through the runtime: page → controller → runtime →
    /// controller → page. The connection status shown to the user is the
    /// answer to this, never an assumption.
    Probe { probe: u64 },
}

/// Controller → page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ControllerToPage {
    /// The controller's module has loaded and its message handler is
    /// installed; messages sent earlier could have been lost.
    Ready {
        protocol: u32,
        journal: JournalStatus,
    },
    ProbeAnswered {
        probe: u64,
        runtime: RuntimeIdentity,
    },
    ProbeFailed {
        probe: u64,
        reason: String,
    },
    /// Something the controller could not accept or carry out, phrased for a
    /// person: what happened and what to do.
    Error {
        message: String,
    },
}

/// Page → runtime (used only to hand the runtime its identity and port).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum PageToRuntime {
    /// Sent with a transferred `MessagePort` leading to the controller.
    Dial { protocol: u32, generation: u64 },
}

/// Runtime → page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum RuntimeToPage {
    Ready { protocol: u32 },
    Error { message: String },
}

/// Controller → runtime, over the relayed port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ControllerToRuntime {
    Probe { probe: u64 },
}

/// Runtime → controller, over the relayed port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum RuntimeToController {
    /// First message on a new port: who is dialling in.
    Hello {
        protocol: u32,
        runtime: RuntimeIdentity,
    },
    ProbeAnswered {
        probe: u64,
        runtime: RuntimeIdentity,
    },
    Error {
        message: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeIdentity {
    /// Random 128-bit identity, lower-case hex; minted once per worker.
    pub id: String,
    pub generation: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case", deny_unknown_fields)]
pub enum JournalStatus {
    Open { schema_version: u32 },
    Unavailable { reason: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    TooLarge { bytes: usize },
    Malformed { detail: String },
    VersionMismatch { theirs: u32 },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::TooLarge { bytes } => write!(
                f,
                "message rejected: {bytes} bytes exceeds the {MAX_MESSAGE_BYTES}-byte limit"
            ),
            DecodeError::Malformed { detail } => write!(f, "message rejected: {detail}"),
            DecodeError::VersionMismatch { theirs } => write!(
                f,
                "peer speaks protocol {theirs}, this build speaks {PROTOCOL_VERSION}; reload the page so both sides come from the same build"
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

pub fn encode<T: Serialize>(message: &T) -> String {
    // Serialising these plain enums cannot fail: no maps with non-string keys,
    // no floats, no custom serialisers.
    serde_json::to_string(message).expect("protocol messages always serialise")
}

pub fn decode<T: DeserializeOwned>(text: &str) -> Result<T, DecodeError> {
    if text.len() > MAX_MESSAGE_BYTES {
        return Err(DecodeError::TooLarge { bytes: text.len() });
    }
    serde_json::from_str(text).map_err(|error| DecodeError::Malformed {
        detail: error.to_string(),
    })
}

/// Checks a peer's declared protocol version.
pub fn check_version(theirs: u32) -> Result<(), DecodeError> {
    if theirs == PROTOCOL_VERSION {
        Ok(())
    } else {
        Err(DecodeError::VersionMismatch { theirs })
    }
}

/// Lower-case hex of 16 random bytes supplied by the caller (the shells use
/// `crypto.getRandomValues`); this crate has no randomness of its own.
pub fn runtime_id_from_bytes(bytes: [u8; 16]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let runtime = RuntimeIdentity {
            id: runtime_id_from_bytes([7; 16]),
            generation: 3,
        };
        let message = ControllerToPage::ProbeAnswered {
            probe: 9,
            runtime: runtime.clone(),
        };
        let text = encode(&message);
        assert_eq!(decode::<ControllerToPage>(&text).unwrap(), message);
        let hello = RuntimeToController::Hello {
            protocol: PROTOCOL_VERSION,
            runtime,
        };
        assert_eq!(
            decode::<RuntimeToController>(&encode(&hello)).unwrap(),
            hello
        );
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        for text in [
            "",
            "{",
            "null",
            "{\"type\":\"probe\"}",
            "{\"type\":\"nope\"}",
            "[1,2]",
        ] {
            assert!(matches!(
                decode::<PageToController>(text),
                Err(DecodeError::Malformed { .. })
            ));
        }
        let extra = "{\"type\":\"probe\",\"probe\":1,\"secret\":2}";
        assert!(decode::<PageToController>(extra).is_err());
    }

    #[test]
    fn oversized_input_is_refused_before_parsing() {
        let text = " ".repeat(MAX_MESSAGE_BYTES + 1);
        assert_eq!(
            decode::<PageToController>(&text),
            Err(DecodeError::TooLarge {
                bytes: MAX_MESSAGE_BYTES + 1
            })
        );
    }

    #[test]
    fn version_mismatch_is_explained() {
        let error = check_version(PROTOCOL_VERSION + 1).unwrap_err();
        assert!(error.to_string().contains("reload the page"));
        assert!(check_version(PROTOCOL_VERSION).is_ok());
    }

    #[test]
    fn runtime_ids_are_32_hex_digits() {
        let id = runtime_id_from_bytes([0xab; 16]);
        assert_eq!(id.len(), 32);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
    }
}
