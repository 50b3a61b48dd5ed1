//! The controller's messages as the page receives them: every phrase
//! already worded in the reader's language (`lifeline-words`, run in the
//! controller), so the page carries no phrase decoder and no wording code.

pub type Card = lifeline_core::recovery::Card<String>;
pub type ControllerToPage = lifeline_protocol::ControllerToPage<String>;
pub type JournalStatus = lifeline_protocol::JournalStatus<String>;
pub type ProfileSummary = lifeline_protocol::ProfileSummary<String>;
pub type Status = lifeline_protocol::Status<String>;
pub type ViewDelta = lifeline_core::ViewDelta<String>;
