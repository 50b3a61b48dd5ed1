//! The recovery actions a person can take on a stopped or uncertain
//! session (reference 004: inspect → summarize → select → link). A domain
//! value: the card (`recovery`) offers them, the environment says which a
//! folder blocks, the page words them; none of those is imported here.

use lifeline_decode::Decode;
use lifeline_encode::Encode;
use serde::{Deserialize, Serialize};

/// A recovery action the card can offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Resume,
    ContinueFromHistory,
    StartFresh,
    InspectWorkspace,
    Archive,
    /// Brings an archived session back; offered only on one.
    Unarchive,
}

impl Action {
    pub const ALL: [Action; 6] = [
        Action::Resume,
        Action::ContinueFromHistory,
        Action::StartFresh,
        Action::InspectWorkspace,
        Action::Archive,
        Action::Unarchive,
    ];
    pub fn label(self) -> &'static str {
        match self {
            Action::Resume => "Resume",
            Action::ContinueFromHistory => "Continue from history",
            Action::StartFresh => "Start fresh",
            Action::InspectWorkspace => "Inspect workspace",
            Action::Archive => "Archive",
            Action::Unarchive => "Unarchive",
        }
    }
    /// Needs a second, explicit confirmation.
    pub fn confirms(self) -> bool {
        matches!(self, Action::StartFresh | Action::Archive)
    }
}
