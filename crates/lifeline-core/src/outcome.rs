//! The ten command outcomes and the only transitions between them.
//!
//! Every outcome change the controller makes goes through [`transition`], and
//! replay checks each recorded change against it again, so a journal can
//! never describe a path the table forbids.

use core::fmt;
use lifeline_decode::Decode;
use lifeline_encode::Encode;

use serde::{Deserialize, Serialize};

/// What the journal can honestly say about a command.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Durably admitted; not yet exposed to transport.
    Admitted,
    /// Proven never exposed to transport (recovery found no exposure record,
    /// or the runtime refused it). Safe to dispatch while its generation lives.
    NotDispatched,
    /// The runtime's acknowledgement is recorded.
    Dispatched,
    /// Exposed to transport but no acknowledgement is recorded, and the link
    /// or the controller was lost. Never dispatched again automatically.
    MayHaveStarted,
    /// The runtime reported progress after acknowledging.
    Running,
    Completed,
    Failed,
    Cancelled,
    TimedOut,
    /// Acknowledged, and the runtime is confirmed gone without terminal evidence.
    Lost,
}

impl Outcome {
    pub const ALL: [Outcome; 10] = [
        Outcome::Admitted,
        Outcome::NotDispatched,
        Outcome::Dispatched,
        Outcome::MayHaveStarted,
        Outcome::Running,
        Outcome::Completed,
        Outcome::Failed,
        Outcome::Cancelled,
        Outcome::TimedOut,
        Outcome::Lost,
    ];

    /// Terminal outcomes are final: no event moves a command out of them.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Outcome::Completed
                | Outcome::Failed
                | Outcome::Cancelled
                | Outcome::TimedOut
                | Outcome::Lost
        )
    }

    /// Wire spelling (`not_dispatched`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Admitted => "admitted",
            Outcome::NotDispatched => "not_dispatched",
            Outcome::Dispatched => "dispatched",
            Outcome::MayHaveStarted => "may_have_started",
            Outcome::Running => "running",
            Outcome::Completed => "completed",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
            Outcome::TimedOut => "timed_out",
            Outcome::Lost => "lost",
        }
    }

    /// The text the UI shows (`not dispatched`), fixed by the design brief.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Admitted => "admitted",
            Outcome::NotDispatched => "not dispatched",
            Outcome::Dispatched => "dispatched",
            Outcome::MayHaveStarted => "may have started",
            Outcome::Running => "running",
            Outcome::Completed => "completed",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
            Outcome::TimedOut => "timed out",
            Outcome::Lost => "lost",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a command finished, as reported by the runtime.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(rename_all = "snake_case")]
pub enum TerminalStatus {
    Completed,
    Failed,
    Cancelled,
    TimedOut,
}

impl TerminalStatus {
    pub fn outcome(self) -> Outcome {
        match self {
            TerminalStatus::Completed => Outcome::Completed,
            TerminalStatus::Failed => Outcome::Failed,
            TerminalStatus::Cancelled => Outcome::Cancelled,
            TerminalStatus::TimedOut => Outcome::TimedOut,
        }
    }
}

/// Why a command is being stopped.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(rename_all = "snake_case")]
pub enum CancelReason {
    /// A client asked.
    User,
    /// The command's budget deadline passed.
    Deadline,
}

impl CancelReason {
    pub fn outcome(self) -> Outcome {
        match self {
            CancelReason::User => Outcome::Cancelled,
            CancelReason::Deadline => Outcome::TimedOut,
        }
    }

    pub fn status(self) -> TerminalStatus {
        match self {
            CancelReason::User => TerminalStatus::Cancelled,
            CancelReason::Deadline => TerminalStatus::TimedOut,
        }
    }
}

/// A fact that may change an outcome.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(rename_all = "snake_case", tag = "kind", content = "reason")]
pub enum OutcomeEvent {
    /// Recovery found no exposure record: the dispatch never reached transport.
    NeverExposed,
    /// Exposed, no acknowledgement recorded, and the link, the ACK wait or the
    /// controller was lost.
    ExposureUncertain,
    /// The runtime explicitly refused the dispatch (it did not start it).
    DispatchRefused,
    /// A runtime acknowledgement (or evidence implying one) was recorded.
    Acknowledged,
    /// The runtime reported progress.
    Started,
    /// The runtime reported a terminal event.
    Finished(TerminalStatus),
    /// A cancel settled before the runtime accepted the command: either it was
    /// never exposed, or the live runtime of its generation fenced it unseen.
    StoppedBeforeStart(CancelReason),
    /// The runtime is confirmed gone and left no terminal evidence.
    RuntimeGone,
}

impl OutcomeEvent {
    /// Every event, for exhaustive tests and the documented table.
    pub fn all() -> Vec<OutcomeEvent> {
        let mut v = vec![
            OutcomeEvent::NeverExposed,
            OutcomeEvent::ExposureUncertain,
            OutcomeEvent::DispatchRefused,
            OutcomeEvent::Acknowledged,
            OutcomeEvent::Started,
        ];
        for s in [
            TerminalStatus::Completed,
            TerminalStatus::Failed,
            TerminalStatus::Cancelled,
            TerminalStatus::TimedOut,
        ] {
            v.push(OutcomeEvent::Finished(s));
        }
        for r in [CancelReason::User, CancelReason::Deadline] {
            v.push(OutcomeEvent::StoppedBeforeStart(r));
        }
        v.push(OutcomeEvent::RuntimeGone);
        v
    }
}

/// A transition the table does not allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct IllegalTransition {
    pub from: Outcome,
    pub event: OutcomeEvent,
}

impl fmt::Display for IllegalTransition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "illegal outcome transition: {:?} does not apply to a command that is {}",
            self.event, self.from
        )
    }
}

impl std::error::Error for IllegalTransition {}

/// The outcome machine. Terminal outcomes accept nothing.
pub fn transition(from: Outcome, event: OutcomeEvent) -> Result<Outcome, IllegalTransition> {
    use Outcome::*;
    use OutcomeEvent as E;
    let to = match (from, event) {
        (Admitted, E::NeverExposed) => Some(NotDispatched),
        (Admitted | NotDispatched, E::ExposureUncertain) => Some(MayHaveStarted),
        (Admitted | NotDispatched, E::DispatchRefused) => Some(NotDispatched),
        (Admitted | NotDispatched | MayHaveStarted, E::Acknowledged) => Some(Dispatched),
        (Dispatched, E::Started) => Some(Running),
        (Dispatched | Running, E::Finished(status)) => Some(status.outcome()),
        (Admitted | NotDispatched | MayHaveStarted, E::StoppedBeforeStart(r)) => Some(r.outcome()),
        (Dispatched | Running, E::RuntimeGone) => Some(Lost),
        _ => None,
    };
    to.ok_or(IllegalTransition { from, event })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table written out by hand, independently of `transition`.
    fn allowed() -> Vec<(Outcome, OutcomeEvent, Outcome)> {
        use CancelReason::*;
        use Outcome::*;
        use OutcomeEvent as E;
        let mut t = vec![
            (Admitted, E::NeverExposed, NotDispatched),
            (Admitted, E::ExposureUncertain, MayHaveStarted),
            (NotDispatched, E::ExposureUncertain, MayHaveStarted),
            (Admitted, E::DispatchRefused, NotDispatched),
            (NotDispatched, E::DispatchRefused, NotDispatched),
            (Admitted, E::Acknowledged, Dispatched),
            (NotDispatched, E::Acknowledged, Dispatched),
            (MayHaveStarted, E::Acknowledged, Dispatched),
            (Dispatched, E::Started, Running),
            (Dispatched, E::RuntimeGone, Lost),
            (Running, E::RuntimeGone, Lost),
        ];
        for from in [Dispatched, Running] {
            t.push((from, E::Finished(TerminalStatus::Completed), Completed));
            t.push((from, E::Finished(TerminalStatus::Failed), Failed));
            t.push((from, E::Finished(TerminalStatus::Cancelled), Cancelled));
            t.push((from, E::Finished(TerminalStatus::TimedOut), TimedOut));
        }
        for from in [Admitted, NotDispatched, MayHaveStarted] {
            t.push((from, E::StoppedBeforeStart(User), Cancelled));
            t.push((from, E::StoppedBeforeStart(Deadline), TimedOut));
        }
        t
    }

    #[test]
    fn transition_matches_the_table_exhaustively() {
        let table = allowed();
        let mut legal = 0;
        for from in Outcome::ALL {
            for event in OutcomeEvent::all() {
                let expected = table
                    .iter()
                    .find(|(f, e, _)| *f == from && *e == event)
                    .map(|(_, _, to)| *to);
                match (transition(from, event), expected) {
                    (Ok(to), Some(exp)) => {
                        assert_eq!(to, exp, "{from:?} + {event:?}");
                        legal += 1;
                    }
                    (Err(err), None) => assert_eq!(err, IllegalTransition { from, event }),
                    (got, exp) => panic!("{from:?} + {event:?}: got {got:?}, table says {exp:?}"),
                }
            }
        }
        assert_eq!(legal, table.len());
    }

    #[test]
    fn terminal_outcomes_are_final() {
        for from in Outcome::ALL.into_iter().filter(|o| o.is_terminal()) {
            for event in OutcomeEvent::all() {
                assert!(transition(from, event).is_err());
            }
        }
    }

    #[test]
    fn only_an_acknowledgement_makes_a_command_dispatched() {
        for from in Outcome::ALL {
            for event in OutcomeEvent::all() {
                if transition(from, event) == Ok(Outcome::Dispatched) {
                    assert_eq!(event, OutcomeEvent::Acknowledged);
                }
            }
        }
    }

    #[test]
    fn may_have_started_never_returns_to_a_dispatchable_outcome() {
        for event in OutcomeEvent::all() {
            if let Ok(to) = transition(Outcome::MayHaveStarted, event) {
                assert!(!matches!(to, Outcome::Admitted | Outcome::NotDispatched));
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn random_event_sequences_stay_inside_the_table(events in proptest::collection::vec(0usize..17, 0..64)) {
            let all = OutcomeEvent::all();
            let table = allowed();
            let mut state = Outcome::Admitted;
            for i in events {
                let event = all[i % all.len()];
                if let Ok(to) = transition(state, event) {
                    proptest::prop_assert!(table.contains(&(state, event, to)));
                    state = to;
                }
            }
        }
    }
}
