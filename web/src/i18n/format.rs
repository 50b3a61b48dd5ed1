//! Wording on the page: filling a key's parameters, the core's enums as
//! keys. Phrases arrive worded by the controller (`lifeline-words`).

use lifeline_core::journal::ProviderFailureClass;
use lifeline_core::recovery::{Action, Dimension, Verdict};
use lifeline_core::{Outcome, ProviderRequestStatus, TurnStatus};
pub use lifeline_words::{bytes, fill, num};

use super::{t, Locale, Msg};

/// `msg` in `locale`, filled with `args`.
#[inline(never)]
pub fn tf_in(locale: Locale, msg: Msg, args: &[&str]) -> String {
    fill(t(locale, msg), args)
}

// Core enums to keys: their English texts equal the core's `label()`s.

pub fn outcome(o: Outcome) -> Msg {
    match o {
        Outcome::Admitted => Msg::OutcomeAdmitted,
        Outcome::NotDispatched => Msg::OutcomeNotDispatched,
        Outcome::Dispatched => Msg::OutcomeDispatched,
        Outcome::MayHaveStarted => Msg::OutcomeMayHaveStarted,
        Outcome::Running => Msg::OutcomeRunning,
        Outcome::Completed => Msg::TurnCompleted,
        Outcome::Failed => Msg::TurnFailed,
        Outcome::Cancelled => Msg::TurnCancelled,
        Outcome::TimedOut => Msg::OutcomeTimedOut,
        Outcome::Lost => Msg::OutcomeLost,
    }
}

pub fn turn_status(s: TurnStatus) -> Msg {
    match s {
        TurnStatus::Completed => Msg::TurnCompleted,
        TurnStatus::Failed => Msg::TurnFailed,
        TurnStatus::Interrupted => Msg::TurnInterrupted,
        TurnStatus::Cancelled => Msg::TurnCancelled,
    }
}

/// A provider failure's label and advice, from its class (the core's
/// English `label()` and `advice()` are the same texts).
pub fn provider_failure(class: ProviderFailureClass) -> (Msg, Msg) {
    use ProviderFailureClass as C;
    match class {
        C::Auth => (Msg::ProviderAuth, Msg::AdviceAuth),
        C::RateLimit => (Msg::ProviderRateLimit, Msg::AdviceRateLimit),
        C::ContextLength => (Msg::ProviderContextLength, Msg::AdviceContextLength),
        C::Transport => (Msg::ProviderTransport, Msg::AdviceTransport),
        C::Server => (Msg::ProviderServer, Msg::AdviceServer),
        C::InvalidRequest => (Msg::ProviderInvalidRequest, Msg::AdviceInvalidRequest),
        C::NotFound => (Msg::ProviderNotFound, Msg::AdviceNotFound),
        C::Cut => (Msg::ProviderCut, Msg::AdviceCut),
        C::Malformed => (Msg::ProviderMalformed, Msg::AdviceMalformed),
        C::Cancelled => (Msg::ProviderCancelled, Msg::AdviceCancelled),
        C::Overloaded => (Msg::ProviderOverloaded, Msg::AdviceOverloaded),
        C::ConnectTimeout => (Msg::ProviderConnectTimeout, Msg::AdviceConnectTimeout),
        C::IdleTimeout => (Msg::ProviderIdleTimeout, Msg::AdviceIdleTimeout),
        C::NoFinish => (Msg::ProviderNoFinish, Msg::AdviceNoFinish),
    }
}

pub fn request_status(s: ProviderRequestStatus) -> Msg {
    match s {
        ProviderRequestStatus::Waiting => Msg::RequestWaiting,
        ProviderRequestStatus::Replied => Msg::RequestReplied,
        ProviderRequestStatus::Failed => Msg::TurnFailed,
        ProviderRequestStatus::Uncertain => Msg::RequestUncertain,
    }
}

pub fn action(a: Action) -> Msg {
    match a {
        Action::Resume => Msg::Resume,
        Action::ContinueFromHistory => Msg::ContinueFromHistory,
        Action::StartFresh => Msg::StartFresh,
        Action::InspectWorkspace => Msg::InspectWorkspace,
        Action::Archive => Msg::Archive,
        Action::Unarchive => Msg::Unarchive,
    }
}

/// The button that confirms `a` (only those that `confirms()` ask).
pub fn confirm(a: Action) -> Msg {
    match a {
        Action::StartFresh => Msg::ConfirmStartFresh,
        Action::Archive => Msg::ConfirmArchive,
        _ => Msg::Confirm,
    }
}

pub fn dimension(d: Dimension) -> Msg {
    match d {
        Dimension::Conversation => Msg::Conversation,
        Dimension::Workspace => Msg::Workspace,
        Dimension::Credentials => Msg::Credentials,
        Dimension::Processes => Msg::Processes,
        Dimension::Attachments => Msg::Attachments,
    }
}

pub fn verdict(v: Verdict) -> Msg {
    match v {
        Verdict::Survived => Msg::Survived,
        Verdict::Missing => Msg::Missing,
        Verdict::Uncertain => Msg::Uncertain,
        Verdict::Lost => Msg::Lost,
        Verdict::NotApplicable => Msg::NotApplicable,
    }
}

/// Input and output tokens, `msg` holding `{0}` and `{1}`; `None` when the
/// provider reported none.
pub fn tokens(l: Locale, msg: Msg, (input, output): (u64, u64)) -> Option<String> {
    (input > 0 || output > 0).then(|| fill(t(l, msg), &[&num(l, input), &num(l, output)]))
}

/// The notice once the restarted controller knows how many of the commands
/// that were running continued.
pub fn restart_summary(l: Locale, running: u32, continued: u32) -> String {
    match (running, continued) {
        (0, _) => t(l, Msg::RestartNoneRunning).into(),
        (1, 1) => t(l, Msg::RestartOneContinued).into(),
        (1, _) => t(l, Msg::RestartOneStopped).into(),
        (r, c) if c >= r => tf_in(l, Msg::RestartAllContinued, &[&r.to_string()]),
        (r, c) => tf_in(
            l,
            Msg::RestartSomeContinued,
            &[&c.to_string(), &r.to_string()],
        ),
    }
}
