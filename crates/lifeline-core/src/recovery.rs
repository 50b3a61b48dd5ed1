//! The recovery inspector and the shared recovery view model (reference 001's
//! inspect → summarize → select → link flow; reference 004, requirements 005
//! and 006).
//!
//! [`inspect`] reads what the journal proves plus facts the shell observed
//! without activating anything (does the workspace folder exist, are the
//! credentials present, how durable is storage) and says, per dimension,
//! what survived. [`card`] turns that report and the session's lifecycle
//! into the one view model every renderer uses: the active record, its
//! summary, cause and details, the actions possible now (with the reason
//! when one is not), and one busy state shared by automatic and manual
//! recovery. The UI renders it; it never decides any of this.
//!
//! Correlation is by session, execution, attempt and durable error stamp —
//! never by message text or by session alone. The active record is the
//! failure the session's state names (its stamp); any other failure stays
//! visible as a distinct historical record.

use lifeline_decode::Decode;
use lifeline_encode::Encode;
use serde::{Deserialize, Serialize};

use crate::environment::{EnvironmentState, FolderAccess};
use crate::event::EventKind;
use crate::id::{CommandId, ErrorStamp, ExecutionId, ProviderRequestId, SessionId, TurnId};
use crate::journal::JournalRecord;
use crate::outcome::Outcome;
use crate::phrase::Phrase;
use crate::projection::{Projection, RuntimeStatus};
use crate::session::{SessionState, Sessions, Trace};
use crate::session_record::{FailureCause, Purpose, SessionRecord};

/// The five things that can survive or not (reference 000).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    Conversation,
    Workspace,
    Credentials,
    Processes,
    Attachments,
}

impl Dimension {
    pub const ALL: [Dimension; 5] = [
        Dimension::Conversation,
        Dimension::Workspace,
        Dimension::Credentials,
        Dimension::Processes,
        Dimension::Attachments,
    ];
    pub fn label(self) -> &'static str {
        match self {
            Dimension::Conversation => "Conversation",
            Dimension::Workspace => "Workspace",
            Dimension::Credentials => "Credentials",
            Dimension::Processes => "Processes",
            Dimension::Attachments => "Attachments",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Survived,
    Missing,
    Uncertain,
    Lost,
    NotApplicable,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Survived => "survived",
            Verdict::Missing => "missing",
            Verdict::Uncertain => "uncertain",
            Verdict::Lost => "lost",
            Verdict::NotApplicable => "not applicable",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct Row<T = Phrase> {
    pub dimension: Dimension,
    pub verdict: Verdict,
    /// What the verdict rests on, for a person.
    pub evidence: T,
}

/// What the shell observed without reviving anything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct Facts {
    /// Whether the session's workspace folder exists; `None` if not checked.
    pub workspace_exists: Option<bool>,
    pub workspace_files: Option<u32>,
    /// Credentials the session's profile refers to: (present, total).
    pub credentials: Option<(u32, u32)>,
    /// The runtime the session is bound to is attached now.
    pub runtime_attached: bool,
    /// This tab is attached to the journal (leader or following live).
    pub attached: bool,
    /// Storage is persistent (not best-effort), and bytes used / quota.
    pub storage: Option<(bool, u64, u64)>,
    /// The provider requests this tab holds: the one streaming now, and
    /// any whose reply or failure is being recorded. None of them is lost
    /// (a reply being written once showed the card "lost while streaming"
    /// until its batch was confirmed).
    pub owned_requests: Vec<ProviderRequestId>,
    /// Journal entries set aside as unreadable at recovery.
    pub quarantined: u32,
    /// A local folder's access, observed without prompting; `None` for the
    /// worker sandbox or when not checked.
    pub folder_access: Option<FolderAccess>,
    /// Every other session that may hold a runtime at once works: this
    /// one cannot start one (Resume, Continue from history).
    pub no_room_to_start: bool,
    /// Nor can a new session start beside this one (Start fresh).
    pub no_room_for_another: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct UncertainCommand {
    pub command: CommandId,
    pub line: String,
    pub outcome: Outcome,
    /// A user verdict already recorded for it.
    pub verdict: Option<bool>,
    /// The command that re-issued it, if any.
    pub reissued_as: Option<CommandId>,
}

/// The inspector's answer for one session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct Report<T = Phrase> {
    pub session: SessionId,
    pub rows: Vec<Row<T>>,
    pub uncertain_commands: Vec<UncertainCommand>,
    pub uncertain_requests: Vec<(TurnId, ProviderRequestId)>,
    /// What is missing: history not retained, output never recorded.
    pub missing: Vec<T>,
    pub storage: Option<T>,
    /// Which environment state exists and what teardown and reopening are
    /// possible; `None` for a session without a recorded environment.
    pub environment: Option<EnvironmentState>,
}

/// A count for a phrase (counts beyond `u32` do not occur in one browser).
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn uncertain(outcome: Outcome) -> bool {
    matches!(outcome, Outcome::MayHaveStarted | Outcome::Lost)
}

/// Verdicts and re-issues recorded for the session's commands.
/// User verdicts (command, done) and re-issues (command, replacement).
type Resolutions = (Vec<(CommandId, bool)>, Vec<(CommandId, CommandId)>);

fn resolutions(records: &[SessionRecord]) -> Resolutions {
    let mut verdicts = Vec::new();
    let mut reissued = Vec::new();
    for r in records {
        match r {
            SessionRecord::Verdict { command, done, .. } => verdicts.push((*command, *done)),
            SessionRecord::Reissued {
                command,
                replacement,
                ..
            } => reissued.push((*command, *replacement)),
            _ => {}
        }
    }
    (verdicts, reissued)
}

/// Inspects a session without activating anything.
pub fn inspect(
    projection: &Projection,
    session: SessionId,
    trace: Option<&Trace>,
    facts: &Facts,
) -> Report {
    let empty = Vec::new();
    let records = projection.lifecycles.get(&session).unwrap_or(&empty);
    let (verdicts, reissued) = resolutions(records);
    let mut uncertain_commands: Vec<UncertainCommand> = projection
        .commands
        .values()
        .filter(|c| c.binding.session == session && uncertain(c.outcome))
        .map(|c| UncertainCommand {
            command: c.command,
            line: c.binding.command_line.clone(),
            outcome: c.outcome,
            verdict: verdicts
                .iter()
                .rev()
                .find(|(k, _)| *k == c.command)
                .map(|(_, d)| *d),
            // The link in the re-issue's own admission; older journals
            // linked it with a separate session record.
            reissued_as: c.reissued_as.or_else(|| {
                reissued
                    .iter()
                    .rev()
                    .find(|(k, _)| *k == c.command)
                    .map(|(_, r)| *r)
            }),
        })
        .collect();
    crate::order::by_key(&mut uncertain_commands, |u| u.command.as_u128());
    let turns: Vec<TurnId> = projection
        .sessions
        .get(&session)
        .map(|s| s.turns.clone())
        .unwrap_or_default();
    let uncertain_requests: Vec<(TurnId, ProviderRequestId)> = turns
        .iter()
        .filter_map(|t| projection.turns.get(t))
        .flat_map(|t| t.requests.iter().map(move |r| (t.turn, *r)))
        .filter(|(_, r)| {
            !facts.owned_requests.contains(r)
                && projection
                    .provider_requests
                    .get(r)
                    .is_some_and(|v| v.outcome.is_none())
        })
        .collect();

    let mut missing = Vec::new();
    let evicted = evicted_commands(projection, session);
    if evicted > 0 {
        missing.push(Phrase::OutputEvicted {
            commands: count(evicted),
        });
    }
    if facts.quarantined > 0 {
        missing.push(Phrase::RecordsSetAside {
            records: facts.quarantined,
        });
    }
    let lost_output = uncertain_commands
        .iter()
        .filter(|u| u.outcome == Outcome::Lost)
        .count();
    if lost_output > 0 {
        missing.push(Phrase::OutputNeverRecorded {
            commands: count(lost_output),
        });
    }

    let conversation = if turns.is_empty() {
        Row {
            dimension: Dimension::Conversation,
            verdict: Verdict::NotApplicable,
            evidence: Phrase::NoMessagesYet,
        }
    } else if !uncertain_requests.is_empty() {
        Row {
            dimension: Dimension::Conversation,
            verdict: Verdict::Uncertain,
            evidence: Phrase::TurnsRepliesLost {
                turns: count(turns.len()),
                lost: count(uncertain_requests.len()),
            },
        }
    } else if facts.quarantined > 0 {
        Row {
            dimension: Dimension::Conversation,
            verdict: Verdict::Missing,
            evidence: Phrase::TurnsSomeUnreadable {
                turns: count(turns.len()),
            },
        }
    } else {
        Row {
            dimension: Dimension::Conversation,
            verdict: Verdict::Survived,
            evidence: Phrase::TurnsRecorded {
                turns: count(turns.len()),
            },
        }
    };
    let bound = trace.and_then(|t| t.token).is_some();
    let workspace = match facts.workspace_exists {
        Some(true) => Row {
            dimension: Dimension::Workspace,
            verdict: Verdict::Survived,
            evidence: match facts.workspace_files {
                Some(entries) => Phrase::WorkspaceThereEntries { entries },
                None => Phrase::WorkspaceThere,
            },
        },
        Some(false) if bound => Row {
            dimension: Dimension::Workspace,
            verdict: Verdict::Missing,
            evidence: Phrase::WorkspaceGone,
        },
        Some(false) => Row {
            dimension: Dimension::Workspace,
            verdict: Verdict::NotApplicable,
            evidence: Phrase::NoWorkspaceYet,
        },
        None => Row {
            dimension: Dimension::Workspace,
            verdict: Verdict::Uncertain,
            evidence: Phrase::NotChecked,
        },
    };
    let credentials = match facts.credentials {
        None | Some((_, 0)) => Row {
            dimension: Dimension::Credentials,
            verdict: Verdict::NotApplicable,
            evidence: Phrase::NoStoredKey,
        },
        Some((present, total)) if present == total => Row {
            dimension: Dimension::Credentials,
            verdict: Verdict::Survived,
            evidence: Phrase::KeysPresent { total },
        },
        Some((present, total)) => Row {
            dimension: Dimension::Credentials,
            verdict: Verdict::Missing,
            evidence: Phrase::KeysMissing {
                missing: total - present,
                total,
            },
        },
    };
    let any_lost = uncertain_commands
        .iter()
        .any(|u| u.outcome == Outcome::Lost);
    let any_may = uncertain_commands
        .iter()
        .any(|u| u.outcome == Outcome::MayHaveStarted);
    let processes = if !bound && uncertain_commands.is_empty() {
        Row {
            dimension: Dimension::Processes,
            verdict: Verdict::NotApplicable,
            evidence: Phrase::NoRuntimeRan,
        }
    } else if facts.runtime_attached && uncertain_commands.is_empty() {
        Row {
            dimension: Dimension::Processes,
            verdict: Verdict::Survived,
            evidence: Phrase::RuntimeAttached,
        }
    } else if any_may {
        Row {
            dimension: Dimension::Processes,
            verdict: Verdict::Uncertain,
            evidence: Phrase::CommandMayHaveStarted,
        }
    } else if any_lost || !facts.runtime_attached {
        Row {
            dimension: Dimension::Processes,
            verdict: Verdict::Lost,
            evidence: Phrase::RuntimeStopped,
        }
    } else {
        Row {
            dimension: Dimension::Processes,
            verdict: Verdict::Survived,
            evidence: Phrase::RuntimeAttached,
        }
    };
    let attachments = Row {
        dimension: Dimension::Attachments,
        verdict: if facts.attached {
            Verdict::Survived
        } else {
            Verdict::Lost
        },
        evidence: if facts.attached {
            Phrase::TabAttached
        } else {
            Phrase::TabNotAttached
        },
    };
    let storage = facts
        .storage
        .map(|(persisted, used, quota)| Phrase::Storage {
            persisted,
            used,
            quota,
        });
    let environment = records.iter().find_map(|r| match r {
        SessionRecord::Created { environment, .. } => Some(crate::environment::state(
            environment,
            facts.folder_access,
            facts.workspace_exists,
        )),
        _ => None,
    });
    Report {
        session,
        rows: vec![conversation, workspace, credentials, processes, attachments],
        uncertain_commands,
        uncertain_requests,
        missing,
        storage,
        environment,
    }
}

pub use crate::action::Action;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct ActionView<T = Phrase> {
    pub action: Action,
    /// `None` when possible now; otherwise why not.
    pub unavailable: Option<T>,
}

/// Identifies one card for the reveal-once rule: revealed once per session
/// and error stamp (or uncertainty) when the chat becomes visible.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct RevealKey {
    pub session: SessionId,
    pub stamp: Option<ErrorStamp>,
    /// For a card without a failure record: the newest uncertain item.
    pub uncertain: Option<String>,
}

/// The shared recovery view model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct Card<T = Phrase> {
    pub key: RevealKey,
    pub summary: T,
    pub cause: Option<T>,
    pub details: Vec<T>,
    pub report: Report<T>,
    pub actions: Vec<ActionView<T>>,
    /// One busy state for automatic and manual recovery alike.
    pub busy: Option<T>,
    /// Earlier failures not correlated with the active one, newest first.
    pub history: Vec<T>,
    /// The workspace-only view is open (the agent is stopped).
    pub inspecting: bool,
    /// Whether an uncertain command can be re-issued now: `None` when it
    /// can, otherwise why not (the page disables Re-issue with it).
    #[serde(default = "Option::default")]
    pub reissue: Option<T>,
}

impl<T> Card<T> {
    /// The same card with every phrase worded by `word` (the controller
    /// words phrases in the reader's language before the page sees them).
    pub fn word<U>(self, word: &mut impl FnMut(T) -> U) -> Card<U> {
        Card {
            key: self.key,
            summary: word(self.summary),
            cause: self.cause.map(&mut *word),
            details: self.details.into_iter().map(&mut *word).collect(),
            report: self.report.word(word),
            actions: self
                .actions
                .into_iter()
                .map(|a| ActionView {
                    action: a.action,
                    unavailable: a.unavailable.map(&mut *word),
                })
                .collect(),
            busy: self.busy.map(&mut *word),
            history: self.history.into_iter().map(&mut *word).collect(),
            inspecting: self.inspecting,
            reissue: self.reissue.map(&mut *word),
        }
    }
}

impl<T> Report<T> {
    pub fn word<U>(self, word: &mut impl FnMut(T) -> U) -> Report<U> {
        Report {
            session: self.session,
            rows: self
                .rows
                .into_iter()
                .map(|r| Row {
                    dimension: r.dimension,
                    verdict: r.verdict,
                    evidence: word(r.evidence),
                })
                .collect(),
            uncertain_commands: self.uncertain_commands,
            uncertain_requests: self.uncertain_requests,
            missing: self.missing.into_iter().map(&mut *word).collect(),
            storage: self.storage.map(&mut *word),
            environment: self.environment,
        }
    }
}

/// A durable failure record of the session.
struct FailureRecord<'a> {
    stamp: ErrorStamp,
    execution: Option<ExecutionId>,
    cause: &'a FailureCause,
}

/// Whether `projection` holds the record of `session`'s failure `stamp`.
pub fn failure_recorded(projection: &Projection, session: SessionId, stamp: ErrorStamp) -> bool {
    projection
        .lifecycles
        .get(&session)
        .is_some_and(|records| failures(records).iter().any(|f| f.stamp == stamp))
}

fn failures(records: &[SessionRecord]) -> Vec<FailureRecord<'_>> {
    records
        .iter()
        .filter_map(|r| match r {
            SessionRecord::StartupFailed {
                stamp,
                execution,
                cause,
                ..
            } => Some(FailureRecord {
                stamp: *stamp,
                execution: *execution,
                cause,
            }),
            SessionRecord::ExecutionFailed {
                stamp,
                execution,
                cause,
                ..
            } => Some(FailureRecord {
                stamp: *stamp,
                execution: Some(*execution),
                cause,
            }),
            _ => None,
        })
        .collect()
}

/// Builds the card, or `None` when there is nothing to recover from.
pub fn card(
    projection: &Projection,
    session: SessionId,
    trace: Option<&Trace>,
    facts: &Facts,
    inspecting: bool,
) -> Option<Card> {
    let report = inspect(projection, session, trace, facts);
    let empty = Vec::new();
    let records = projection.lifecycles.get(&session).unwrap_or(&empty);
    let all_failures = failures(records);
    let state = trace.map(|t| &t.state);
    // The active record: the failure the session's state names, by stamp.
    let active_stamp = match state {
        Some(SessionState::Failed(f)) => Some(f.stamp),
        _ => None,
    };
    let active = active_stamp.and_then(|s| all_failures.iter().find(|f| f.stamp == s));
    let open_uncertain: Vec<&UncertainCommand> = report
        .uncertain_commands
        .iter()
        .filter(|u| u.verdict.is_none() && u.reissued_as.is_none())
        .collect();
    let archived = matches!(state, Some(SessionState::Archived));
    let stopped = matches!(
        state,
        Some(SessionState::Failed(_) | SessionState::Detached | SessionState::Cancelled)
    );
    let busy = match state {
        Some(SessionState::Starting { .. }) => Some(Phrase::BusyStarting),
        Some(SessionState::Cancelling { .. }) => Some(Phrase::BusyCancelling),
        _ => None,
    };
    // A launch (a session's first start, or a new execution with a chosen
    // profile) is no recovery: it alone brings no card, which would say
    // "Recovering" for as long as a model loads. The lifecycle line beside
    // the composer says the session starts. A resume, or a start beside
    // something to recover, keeps the card and its busy state.
    let recovering_start = busy.is_some()
        && !matches!(
            state,
            Some(SessionState::Starting {
                purpose: Purpose::Launch,
                ..
            })
        );
    let legacy_interrupted = trace.is_none()
        && projection.sessions.get(&session).is_some_and(|s| {
            s.turns.iter().any(|t| {
                projection.turns.get(t).is_some_and(|t| {
                    t.end
                        .as_ref()
                        .is_some_and(|e| e.status == crate::journal::TurnStatus::Interrupted)
                })
            })
        });
    if !stopped
        && open_uncertain.is_empty()
        && report.uncertain_requests.is_empty()
        && !recovering_start
        && !inspecting
        && !legacy_interrupted
        && !archived
    {
        return None;
    }
    let bound = trace.and_then(|t| t.token).is_some();
    let running = matches!(state, Some(SessionState::Running));
    let running_turn = trace.and_then(|t| t.active_turn).is_some();
    let has_history = projection
        .sessions
        .get(&session)
        .is_some_and(|s| !s.turns.is_empty());
    let why_busy = busy.clone();
    // A folder the browser will ask about again is not checked yet, but the
    // click that inspects it may ask (the page does, before sending it).
    let needs_permission = report
        .environment
        .as_ref()
        .is_some_and(|e| e.needs_permission());
    // Starting a runtime needs room beside the sessions working elsewhere.
    let full = |a: Action| match a {
        Action::StartFresh => facts.no_room_for_another,
        _ => facts.no_room_to_start,
    };
    let unavailable =
        |a: Action| -> Option<Phrase> {
            if let Some(b) = &why_busy {
                return Some(Phrase::WaitOrStop {
                    starting: *b == Phrase::BusyStarting,
                });
            }
            // An archived session still leaves a way forward: bring it
            // back, or go on in a new session.
            if archived && !matches!(a, Action::Unarchive | Action::StartFresh) {
                return Some(Phrase::SessionArchived);
            }
            match a {
                Action::Resume | Action::ContinueFromHistory | Action::StartFresh if full(a) => {
                    Some(Phrase::RunningLimit)
                }
                Action::Resume => {
                    if !bound {
                        Some(Phrase::NeverRan)
                    } else if !stopped {
                        Some(Phrase::SessionRunning)
                    } else if report.rows.iter().any(|r| {
                        r.dimension == Dimension::Workspace && r.verdict == Verdict::Missing
                    }) {
                        Some(Phrase::WorkspaceGoneStartFresh)
                    } else {
                        None
                    }
                }
                Action::ContinueFromHistory => {
                    if !has_history {
                        Some(Phrase::NoHistory)
                    } else if running_turn {
                        Some(Phrase::AgentWorking)
                    } else {
                        None
                    }
                }
                Action::StartFresh => None,
                Action::InspectWorkspace => {
                    // Reading the files is safe whenever no turn is changing
                    // them: before deciding what to repeat after a crash,
                    // whether or not a new runtime has been started since.
                    if running_turn {
                        Some(Phrase::AgentRunningLive)
                    } else if !needs_permission
                        && report.rows.iter().any(|r| {
                            r.dimension == Dimension::Workspace && r.verdict != Verdict::Survived
                        })
                    {
                        Some(Phrase::NoWorkspaceFolder)
                    } else {
                        None
                    }
                }
                Action::Archive => {
                    if running_turn {
                        Some(Phrase::AgentWorkingStopFirst)
                    } else {
                        None
                    }
                }
                Action::Unarchive => None,
            }
        };
    let actions: Vec<ActionView> = Action::ALL
        .into_iter()
        // Archive and Unarchive are one switch: only the one that applies.
        .filter(|a| match a {
            Action::Archive => !archived,
            Action::Unarchive => archived,
            _ => true,
        })
        .map(|action| ActionView {
            action,
            // The environment's reason is the more specific one: a folder
            // the browser forgot stays unusable whatever else changes.
            unavailable: report
                .environment
                .as_ref()
                .and_then(|e| e.blocks(action))
                .map(Phrase::from)
                .or_else(|| unavailable(action)),
        })
        .collect();
    let (summary, cause) = match (active, state) {
        (Some(f), _) => (
            match f.cause {
                FailureCause::AgentFailed { .. } => Phrase::SummaryAgentFailed,
                FailureCause::RuntimeLost { .. } => Phrase::SummaryRuntimeLost,
                FailureCause::CleanupFailed { .. } => Phrase::SummaryCleanupFailed,
                FailureCause::Credential { .. } => Phrase::SummaryCredential,
                FailureCause::ProfileBlocked { .. } | FailureCause::ProfileDeleted => {
                    Phrase::SummaryProfile
                }
                FailureCause::Launch { .. } => Phrase::SummaryLaunchFailed,
                FailureCause::Load { .. } => Phrase::SummaryRecoveryFailed,
            },
            Some(Phrase::Cause {
                cause: f.cause.clone(),
            }),
        ),
        // A failure state whose record was not retained (older journals):
        // a safe generic summary, never a guess.
        (None, Some(SessionState::Failed(f))) => (
            Phrase::SummaryUnknownFailure,
            Some(Phrase::Cause {
                cause: f.cause.clone(),
            }),
        ),
        (None, Some(SessionState::Detached)) => (Phrase::SummaryDetached, None),
        (None, Some(SessionState::Cancelled)) => (Phrase::SummaryCancelled, None),
        (None, Some(SessionState::Archived)) => (Phrase::SummaryArchived, None),
        _ if !open_uncertain.is_empty() || !report.uncertain_requests.is_empty() => {
            (Phrase::SummaryUncertain, None)
        }
        _ if legacy_interrupted => (Phrase::SummaryInterruptedEarlier, None),
        _ => (Phrase::SummaryRecovery, None),
    };
    let mut details = Vec::new();
    if let Some(f) = active {
        details.push(Phrase::ErrorStampIs { stamp: f.stamp });
        if let Some(execution) = f.execution {
            details.push(Phrase::ExecutionIs { execution });
        }
    }
    for u in &report.uncertain_commands {
        details.push(Phrase::UncertainCommand {
            line: u.line.clone(),
            outcome: u.outcome,
            verdict: u.verdict,
            reissued: u.reissued_as.is_some(),
        });
    }
    for (turn, request) in &report.uncertain_requests {
        details.push(Phrase::ReplyLost {
            request: *request,
            turn: *turn,
        });
    }
    details.extend(report.missing.iter().cloned());
    if let Some(s) = &report.storage {
        details.push(Phrase::StorageDetail {
            storage: Box::new(s.clone()),
        });
    }
    // Distinct historical failures stay visible; none is merged with the
    // active one by its text.
    let history = all_failures
        .iter()
        .rev()
        .filter(|f| Some(f.stamp) != active_stamp)
        .take(5)
        .map(|f| Phrase::EarlierFailure {
            cause: f.cause.clone(),
            stamp: f.stamp,
        })
        .collect();
    let key = RevealKey {
        session,
        stamp: active_stamp,
        uncertain: if active_stamp.is_none() {
            open_uncertain
                .last()
                .map(|u| u.command.to_string())
                .or_else(|| report.uncertain_requests.last().map(|(_, r)| r.to_string()))
        } else {
            None
        },
    };
    // Re-issue runs in the session's live runtime; when there is none the
    // card names the action that gives one (or why none can).
    let resume_reason = actions
        .iter()
        .find(|a| a.action == Action::Resume)
        .and_then(|a| a.unavailable.clone());
    let reissue = if let Some(b) = &why_busy {
        Some(Phrase::WaitOrStop {
            starting: *b == Phrase::BusyStarting,
        })
    } else if archived {
        Some(Phrase::SessionArchived)
    } else if running_turn {
        Some(Phrase::ReissueAgentWorking)
    } else if running {
        None
    } else if resume_reason.is_none() {
        Some(Phrase::ReissueNeedsRunning)
    } else {
        resume_reason
    };
    Some(Card {
        key,
        summary,
        cause,
        details,
        report,
        actions,
        busy,
        history,
        inspecting,
        reissue,
    })
}

/// Builds the first prompt of a continuation from history, with provenance:
/// which parts are original recorded history, which are a summary, and the
/// uncertain actions for the agent to inspect rather than repeat.
/// Every line of recorded text inside the quote: a quoted `$ ` line is
/// history, never a command the built-in agent would plan again.
fn quoted(text: &str) -> String {
    text.replace('\n', "\n> ")
}

pub fn continuation_prompt(projection: &Projection, session: SessionId, report: &Report) -> String {
    const MAX_TURNS: usize = 8;
    const MAX_BYTES: usize = 16 * 1024;
    let mut out = String::from(
        "[Recovery: continuing from recorded history]\n\n## Original recorded history (verbatim, most recent turns)\n",
    );
    let turns: Vec<TurnId> = projection
        .sessions
        .get(&session)
        .map(|s| s.turns.clone())
        .unwrap_or_default();
    let skipped = turns.len().saturating_sub(MAX_TURNS);
    for t in turns
        .iter()
        .skip(skipped)
        .filter_map(|t| projection.turns.get(t))
    {
        let mut prompt: String = t.prompt.chars().take(2000).collect();
        if prompt.len() < t.prompt.len() {
            prompt.push_str(" …");
        }
        out.push_str(&format!("\n> user: {}\n", quoted(&prompt)));
        if let Some(end) = &t.end {
            let reply: String = end.reply.chars().take(2000).collect();
            out.push_str(&format!(
                "> agent ({}): {}\n",
                end.status.as_str(),
                quoted(&reply)
            ));
        } else {
            out.push_str("> agent: (no reply recorded)\n");
        }
    }
    out.push_str("\n## Summary (reconstructed, not original)\n");
    match skipped {
        0 => {}
        1 => out.push_str("1 earlier turn is not repeated here.\n"),
        n => out.push_str(&format!("{n} earlier turns are not repeated here.\n")),
    }
    for r in &report.rows {
        out.push_str(&format!(
            "- {}: {} — {}\n",
            r.dimension.label(),
            r.verdict.label(),
            crate::phrase::row_evidence_english(&r.evidence).unwrap_or_default()
        ));
    }
    out.push_str("\n## Uncertain actions: inspect, do not repeat blindly\n");
    if report.uncertain_commands.is_empty() && report.uncertain_requests.is_empty() {
        out.push_str("None.\n");
    }
    for u in &report.uncertain_commands {
        out.push_str(&format!("- command `{}`: {}\n", u.line, u.outcome.label()));
    }
    for (_, r) in &report.uncertain_requests {
        out.push_str(&format!("- model request {r}: reply lost, not resent\n"));
    }
    if out.len() > MAX_BYTES {
        let mut cut = MAX_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str("\n[truncated]\n");
    }
    out
}

/// Whether a durable record can change what [`card`] shows for any session.
/// Everything can except a command's ordinary output and the artifacts that
/// hold it: those arrive many times a second while a command prints, and
/// rebuilding the card for each batch slowed the output path. Output reaches
/// the card only by evicting a command's oldest events from the projection,
/// which [`evicted_commands`] counts, so a shell that skips rebuilding for
/// output must still compare that count.
pub fn affects_card(record: &JournalRecord) -> bool {
    match record {
        // A terminal event settles older commands, which evicts their events.
        JournalRecord::Event(e) => e.body.kind() == EventKind::Terminal,
        JournalRecord::ArtifactStored { .. } => false,
        _ => true,
    }
}

/// How many of the session's commands no longer keep their oldest output
/// events in detail (the card lists them as missing).
pub fn evicted_commands(projection: &Projection, session: SessionId) -> usize {
    let whole = projection
        .commands
        .values()
        .filter(|c| c.binding.session == session && c.evicted_through.0 > 0)
        .count();
    // Kept small, a command keeps none of its events.
    let small = projection
        .settled
        .values()
        .filter(|c| c.session == session && c.through().0 > 0)
        .count();
    whole + small
}

/// Why a tab that follows another one offers no recovery action.
pub const FOLLOWING: Phrase = Phrase::AnotherTabInControl;

/// The session layer as a following tab knows it: it runs none of its own,
/// so it folds the session's lifecycle records, which say what the leading
/// tab's session layer said durably.
pub fn follower_sessions(projection: &Projection, session: SessionId) -> Sessions {
    Sessions::recover(
        &[],
        projection.lifecycles.get(&session).into_iter().flatten(),
    )
}

/// The card as a tab that follows another one shows it. It has only the
/// journal, so what the leading tab knows in memory is read from the
/// records instead: the session's state from its lifecycle records, its
/// runtime as attached while the journal names that generation current,
/// and a reply without an outcome in a turn still open as the one the
/// leading tab is streaming (not as lost). Every action is unavailable,
/// with the reason: only the leading tab writes the journal.
pub fn follower_card(projection: &Projection, session: SessionId, facts: &Facts) -> Option<Card> {
    let sessions = follower_sessions(projection, session);
    let mut trace = sessions.trace(session);
    let mut facts = facts.clone();
    facts.runtime_attached = sessions.binding(session).is_some_and(|b| {
        projection.runtime(b.runtime).is_some_and(|(_, r)| {
            r.generation == b.generation && r.status == RuntimeStatus::Current
        })
    });
    if let Some(t) = trace.as_mut() {
        // Folded records call every bound session detached, which is true
        // of a restarted controller that holds none of it; here the leading
        // tab holds it for as long as the journal names its runtime current.
        if t.state == SessionState::Detached && facts.runtime_attached {
            t.state = SessionState::Running;
        }
    }
    let live = projection.sessions.get(&session).and_then(|s| {
        s.turns
            .iter()
            .rev()
            .filter_map(|t| projection.turns.get(t))
            .filter(|t| t.end.is_none())
            .flat_map(|t| t.requests.iter().rev())
            .find(|r| {
                projection
                    .provider_requests
                    .get(r)
                    .is_some_and(|v| v.outcome.is_none())
            })
            .copied()
    });
    facts.owned_requests = live.into_iter().collect();
    let mut card = card(projection, session, trace.as_ref(), &facts, false)?;
    for a in &mut card.actions {
        a.unavailable = Some(FOLLOWING);
    }
    card.reissue = Some(FOLLOWING);
    Some(card)
}

#[cfg(test)]
#[path = "recovery_tests.rs"]
mod tests;
