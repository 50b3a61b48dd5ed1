//! [`SettledCommand`]: what the projection keeps of a command that settled
//! for good and left the recent window.
//!
//! A settled command runs no more (its terminal event and a certain
//! outcome are recorded) and, once its turn has ended, no agent reads it:
//! it is shown (its block in the transcript, its output read from the
//! journal), named (by its key, by a runtime resending its events, by a
//! recovery record or a re-issue) and deleted with its session. This is
//! what those need, about a third of the whole view (600 of 2,000 bytes in
//! the recovery bench): its binding, outcome history, exposure and terminal
//! event stay in the journal. Keeping settled commands this small keeps the
//! snapshot, and so every start, from growing with the history at the rate
//! it did.
//!
//! Architecture Invariant: a command is in `Projection::settled` or in
//! `Projection::commands`, never both; it moves to `settled` only with a
//! terminal event, a certain terminal outcome, its turn ended and its
//! session no model conversation (whose tool results go into every later
//! provider request), and never moves back.

use serde::{Deserialize, Serialize};

use crate::command::Binding;
use crate::event::OutputSummary;
use crate::id::{
    CommandId, Digest, ErrorStamp, EventSeq, Generation, IdempotencyKey, Millis, RuntimeId,
    SessionId,
};
use crate::outcome::Outcome;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettledCommand {
    pub command: CommandId,
    pub key: IdempotencyKey,
    pub session: SessionId,
    pub runtime: RuntimeId,
    pub generation: Generation,
    pub line: String,
    /// Of the binding's encoding: a repeated admission under the same key
    /// is told from a different one without keeping the binding.
    pub binding: Digest,
    pub admitted_at: Millis,
    pub admitted_position: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Millis>,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The terminal event's sequence number and digest: a runtime that
    /// sends it again is told durable, one that sends something else under
    /// it is a conflict.
    pub last_seq: EventSeq,
    pub terminal: Digest,
    #[serde(default, skip_serializing_if = "is_default")]
    pub stdout: OutputSummary,
    #[serde(default, skip_serializing_if = "is_default")]
    pub stderr: OutputSummary,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<ErrorStamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reissue_of: Option<CommandId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reissued_as: Option<CommandId>,
}

impl SettledCommand {
    /// Its last output event; the terminal event follows it.
    pub fn through(&self) -> EventSeq {
        EventSeq(self.last_seq.0.saturating_sub(1))
    }

    /// Whether `binding` is the one this command was admitted with.
    pub fn bound_to(&self, binding: &Binding) -> bool {
        binding_digest(binding) == self.binding
    }
}

pub(crate) fn binding_digest(binding: &Binding) -> Digest {
    // A binding always encodes (strings, numbers and sets of strings).
    Digest::of(&serde_json::to_vec(binding).unwrap_or_default())
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}
