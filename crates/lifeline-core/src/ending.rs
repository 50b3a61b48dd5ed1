//! Why the core, not the agent, ended a turn.
//!
//! A turn's end is recorded with a reply. When the agent (built-in or a
//! model) had the last word, the reply is its text. When the core ended the
//! turn — Stop between steps, a session left for another, a lost model
//! reply, a cancelled or uncertain tool command, a spent budget, a failed
//! model request — the record
//! also holds a [`TurnEnding`], so the page words it in the reader's
//! language (`Phrase::TurnEnded`). The reply keeps the English
//! ([`TurnEnding`]'s `Display`): the export, and the conversation a model is
//! sent, read it. Records written before endings existed have none, and
//! their reply is shown as written.

use core::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::outcome::Outcome;
use crate::provider_failure::ProviderFailureClass;

/// A turn ended by the core, with what the reader needs to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnEnding {
    /// Stop before the built-in agent's planned command `line`; `left`
    /// planned commands (that one included) did not run.
    StoppedBefore { line: String, left: u64 },
    /// Stop between two steps of the agent.
    StoppedBetweenSteps,
    /// The session was left (Start fresh, Archive, another environment)
    /// before the turn finished.
    SessionLeft,
    /// A model reply was streaming when the page or worker stopped.
    ReplyLost,
    /// The user cancelled the model's tool command `line`.
    CommandCancelled { line: String },
    /// The model's tool command `line` ended `outcome` (lost, never sent,
    /// or unknown); it was not run again.
    CommandUncertain { line: String, outcome: Outcome },
    /// The turn sent its budget of `max` model requests.
    StepBudget { max: u64 },
    /// The turn admitted its budget of `max` commands.
    CommandBudget { max: u64 },
    /// The turn used `used` tokens of its budget of `max`.
    TokenBudget { max: u64, used: u64 },
    /// The turn ran for its time budget of `seconds`.
    TimeBudget { seconds: u64 },
    /// The turn's model request failed as `class`; the request's own view
    /// shows what was said and what arrived.
    ProviderFailed { class: ProviderFailureClass },
}

// Stored as one string, `kind a b line` (`stopped_before 2 0 echo a`):
// the deserialisers already read strings, so an ending adds no serde
// visitor to the controller's wasm (its budget); the kind keeps it legible
// in an exported journal.
const KINDS: [&str; 11] = [
    "stopped_before",
    "stopped_between_steps",
    "session_left",
    "reply_lost",
    "command_cancelled",
    "command_uncertain",
    "command_budget",
    "token_budget",
    "time_budget",
    "step_budget",
    "provider_failed",
];

impl TurnEnding {
    fn encode(&self) -> String {
        use TurnEnding as E;
        let none = String::new();
        let (kind, line, a, b) = match self {
            E::StoppedBefore { line, left } => (0, line, *left, 0),
            E::StoppedBetweenSteps => (1, &none, 0, 0),
            E::SessionLeft => (2, &none, 0, 0),
            E::ReplyLost => (3, &none, 0, 0),
            E::CommandCancelled { line } => (4, line, 0, 0),
            E::CommandUncertain { line, outcome } => {
                let i = Outcome::ALL.iter().position(|o| o == outcome);
                (5, line, i.unwrap_or(0) as u64, 0)
            }
            E::CommandBudget { max } => (6, &none, *max, 0),
            E::TokenBudget { max, used } => (7, &none, *max, *used),
            E::TimeBudget { seconds } => (8, &none, *seconds, 0),
            E::StepBudget { max } => (9, &none, *max, 0),
            E::ProviderFailed { class } => {
                return format!("{} 0 0 {}", KINDS[10], class.as_str());
            }
        };
        format!("{} {a} {b} {line}", KINDS[kind])
    }

    fn decode(text: &str) -> Option<TurnEnding> {
        use TurnEnding as E;
        let mut parts = text.splitn(4, ' ');
        let name = parts.next()?;
        let kind = KINDS.iter().position(|k| *k == name)?;
        let a: u64 = parts.next()?.parse().ok()?;
        let b: u64 = parts.next()?.parse().ok()?;
        let line = parts.next()?.to_string();
        Some(match kind {
            0 => E::StoppedBefore { line, left: a },
            1 => E::StoppedBetweenSteps,
            2 => E::SessionLeft,
            3 => E::ReplyLost,
            4 => E::CommandCancelled { line },
            5 => E::CommandUncertain {
                line,
                outcome: *Outcome::ALL.get(usize::try_from(a).ok()?)?,
            },
            6 => E::CommandBudget { max: a },
            7 => E::TokenBudget { max: a, used: b },
            8 => E::TimeBudget { seconds: a },
            9 => E::StepBudget { max: a },
            _ => E::ProviderFailed {
                class: *ProviderFailureClass::ALL
                    .iter()
                    .find(|c| c.as_str() == line)?,
            },
        })
    }
}

impl Serialize for TurnEnding {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.encode())
    }
}

impl<'de> Deserialize<'de> for TurnEnding {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        TurnEnding::decode(&text)
            .ok_or_else(|| serde::de::Error::custom("an unreadable turn ending"))
    }
}

impl lifeline_encode::Encode for TurnEnding {
    fn encode(&self, w: &mut lifeline_encode::Writer) {
        w.str(&self.encode());
    }
}

impl lifeline_decode::Decode for TurnEnding {
    fn decode(json: lifeline_decode::Json<'_>) -> Result<Self, lifeline_decode::Error> {
        TurnEnding::decode(&String::decode(json)?)
            .ok_or_else(|| lifeline_decode::Error::invalid("an unreadable turn ending"))
    }
}

/// The English, kept in the record's reply for the export and the model's
/// conversation; the page words the ending from its catalogs.
impl fmt::Display for TurnEnding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use TurnEnding as E;
        const BUDGET: &str = "Nothing after that was run. Raise the limit under the profile's “Budget per turn”, or send a message to continue.";
        match self {
            E::StoppedBefore { line, left: 1 } => {
                write!(f, "Stopped before `{line}` ran; 1 planned command was not run.")
            }
            E::StoppedBefore { line, left } => write!(
                f,
                "Stopped before `{line}` ran; {left} planned commands were not run."
            ),
            E::StoppedBetweenSteps => f.write_str("Stopped before the agent's next step."),
            E::SessionLeft => f.write_str(
                "The session was left before this turn finished; nothing more ran in it.",
            ),
            E::ReplyLost => f.write_str("The model's reply was lost (the page or worker stopped while it was streaming); nothing was resent. Send the message again to ask anew."),
            E::CommandCancelled { line } => write!(f, "Stopped: you cancelled `{line}`."),
            E::CommandUncertain { line, outcome } => write!(
                f,
                "Stopped: the tool command `{line}` {}, so I did not run it again. Send a message to continue from here.",
                match outcome {
                    Outcome::Lost => "was lost: it started but its runtime died before it finished",
                    Outcome::NotDispatched => "was never sent to a runtime, and its runtime is gone",
                    _ => "may have started: its outcome is unknown",
                }
            ),
            E::StepBudget { max } => write!(
                f,
                "Stopped: the turn used its model request budget ({max}). {BUDGET}"
            ),
            E::CommandBudget { max } => write!(
                f,
                "Stopped: the turn used its command budget ({max}). {BUDGET}"
            ),
            E::TokenBudget { max, used } => write!(
                f,
                "Stopped: the turn used its token budget ({max}; {used} used). {BUDGET}"
            ),
            E::TimeBudget { seconds } => write!(
                f,
                "Stopped: the turn used its time budget ({seconds} s). {BUDGET}"
            ),
            E::ProviderFailed { class } if class.broke_off() => f.write_str("The model's reply did not finish; what arrived is shown above, and nothing was resent (the request may have reached the model). Send the message again to ask anew."),
            E::ProviderFailed { class: ProviderFailureClass::Cancelled } => f.write_str("Stopped while the model was replying; what arrived is shown above."),
            E::ProviderFailed { .. } => f.write_str("The model request failed, as shown above; nothing more ran in this turn. Send the message again once the cause is fixed."),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{JournalRecord, TurnStatus};

    #[test]
    fn a_record_written_before_endings_decodes_without_one() {
        let old = r#"{"type":"turn_finished","turn":"00000000000000000000000007","status":"cancelled","reply":"Stopped before the agent's next step."}"#;
        let record: JournalRecord = serde_json::from_str(old).expect("an old record decodes");
        let JournalRecord::TurnFinished {
            status,
            reply,
            ending,
            ..
        } = record
        else {
            panic!("not a turn end: {record:?}");
        };
        assert_eq!(status, TurnStatus::Cancelled);
        assert_eq!(reply, "Stopped before the agent's next step.");
        assert_eq!(ending, None);
    }

    /// The ending names its class by `as_str` and finds it again in
    /// `ALL`: a class missing there would make its endings unreadable.
    #[test]
    fn every_provider_failure_class_is_listed_once() {
        use crate::provider_failure::ProviderFailureClass as C;
        for class in C::ALL {
            // No wildcard: a new class must be placed here, and in ALL.
            let n = match class {
                C::Auth => 0,
                C::RateLimit => 1,
                C::ContextLength => 2,
                C::Transport => 3,
                C::Server => 4,
                C::InvalidRequest => 5,
                C::NotFound => 6,
                C::Cut => 7,
                C::Malformed => 8,
                C::Cancelled => 9,
                C::Overloaded => 10,
                C::ConnectTimeout => 11,
                C::IdleTimeout => 12,
                C::NoFinish => 13,
            };
            assert_eq!(C::ALL[n], class);
            let ending = TurnEnding::ProviderFailed { class };
            let json = serde_json::to_string(&ending).unwrap();
            assert_eq!(serde_json::from_str::<TurnEnding>(&json).unwrap(), ending);
        }
    }

    #[test]
    fn every_ending_survives_the_journal_and_keeps_its_english() {
        let all = [
            TurnEnding::StoppedBefore {
                line: "echo a".into(),
                left: 1,
            },
            TurnEnding::StoppedBefore {
                line: "echo b".into(),
                left: 3,
            },
            TurnEnding::StoppedBetweenSteps,
            TurnEnding::SessionLeft,
            TurnEnding::ReplyLost,
            TurnEnding::CommandCancelled {
                line: "sleep 9".into(),
            },
            TurnEnding::CommandUncertain {
                line: "touch x".into(),
                outcome: Outcome::NotDispatched,
            },
            TurnEnding::StepBudget { max: 8 },
            TurnEnding::CommandBudget { max: 4 },
            TurnEnding::TokenBudget { max: 10, used: 12 },
            TurnEnding::TimeBudget { seconds: 60 },
            TurnEnding::ProviderFailed {
                class: ProviderFailureClass::RateLimit,
            },
            TurnEnding::ProviderFailed {
                class: ProviderFailureClass::NoFinish,
            },
        ];
        for ending in all {
            let json = serde_json::to_string(&ending).unwrap();
            assert_eq!(serde_json::from_str::<TurnEnding>(&json).unwrap(), ending);
            assert!(!ending.to_string().contains("(s)"), "{ending}");
        }
        assert_eq!(
            TurnEnding::StoppedBefore {
                line: "echo a".into(),
                left: 1
            }
            .to_string(),
            "Stopped before `echo a` ran; 1 planned command was not run."
        );
        assert_eq!(
            serde_json::to_string(&TurnEnding::StoppedBefore {
                line: "echo a b".into(),
                left: 2
            })
            .unwrap(),
            r#""stopped_before 2 0 echo a b""#
        );
        for bad in [
            r#""nonsense 0 0 ""#,
            r#""command_uncertain 99 0 x""#,
            r#""stopped_before x 0 echo""#,
            r#""session_left 0""#,
            "[2,\"\",0,0]",
        ] {
            assert!(serde_json::from_str::<TurnEnding>(bad).is_err(), "{bad}");
        }
    }
}
