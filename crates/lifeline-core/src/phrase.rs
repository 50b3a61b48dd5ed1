//! Structured phrases: every text the core and the controller compose for a
//! person, as a message identity with typed arguments.
//!
//! The core has no locale. It says *which* message and with *what*
//! arguments; the page renders each phrase from its catalogs in the reader's
//! language (`web/src/i18n/`, an exhaustive `match`, so a new phrase
//! without a translation does not compile). [`Phrase`]'s `Display` is the
//! English rendering, for native tests, logs and the evidence export.
//!
//! Free text that came from outside (a browser's error message, a file
//! name, a command line, a provider's error) stays an argument and is never
//! translated.

use core::fmt;
use lifeline_decode::Decode;
use lifeline_encode::Encode;

use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::agent::PlanError;
use crate::ending::TurnEnding;
use crate::environment::FolderAccess;
use crate::export::ImportFault;
use crate::id::{
    CredentialId, ErrorStamp, ExecutionId, ProviderRequestId, StartupAttemptId, TurnId,
};
use crate::journal::{DispatchRefusal, FailureReason, ProviderFailureClass, RecoveryKind};
use crate::message::{Rejection, RejectionKind};
use crate::outcome::Outcome;
use crate::profile::{
    CredentialFailure, InvalidProfile, LocalFile, ModelFileFault, ProfileBlock, Provider, Sampling,
};
use crate::session::Refusal;
use crate::session_record::{FailureCause, LaunchFailure, LoadError, RuntimeEnd};
use crate::store_fault::{StoreFault, StoredKind};
use crate::wire::{nested, Arg, Reader};
pub use crate::wire::{Wire, WireError};

/// What the journal could not do, as the controller's `JournalError` says
/// it, with its free-text details as arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JournalFault {
    Unavailable {
        detail: String,
    },
    NewerSchema {
        schema: u32,
    },
    Blocked,
    Operation {
        detail: String,
    },
    QuotaExceeded,
    Superseded,
    VersionChange,
    Corrupt {
        detail: String,
    },
    Invalid {
        detail: String,
    },
    Closed,
    /// Recovery from the journal failed.
    /// The entry at `position` contradicts the journal before it.
    NotRecovered {
        position: u64,
    },
    /// The database was deleted while the app was open.
    Removed,
    /// The browser closed the database by itself.
    ConnectionLost,
    /// The `meta` writer record is unreadable: read-only until repaired.
    WriterUnreadable,
}

/// A text for a person, before it has words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(into = "Wire", try_from = "Wire")]
pub enum Phrase {
    // ---- the recovery card: summaries ----
    SummaryAgentFailed,
    SummaryRuntimeLost,
    SummaryCleanupFailed,
    SummaryCredential,
    SummaryProfile,
    SummaryRecoveryFailed,
    /// The session's runtime did not start (a launch, fresh or a resume).
    SummaryLaunchFailed,
    SummaryUnknownFailure,
    SummaryDetached,
    SummaryCancelled,
    SummaryArchived,
    SummaryUncertain,
    SummaryInterruptedEarlier,
    SummaryRecovery,
    // ---- busy ----
    BusyStarting,
    BusyCancelling,
    // ---- why an action is not possible now ----
    /// The busy state, then "Wait for it, or press Stop."
    WaitOrStop {
        starting: bool,
    },
    SessionArchived,
    NeverRan,
    SessionRunning,
    WorkspaceGoneStartFresh,
    NoHistory,
    AgentWorking,
    AgentRunningLive,
    NoWorkspaceFolder,
    AgentWorkingStopFirst,
    /// A local folder the browser no longer has.
    FolderGone {
        name: String,
    },
    /// This browser cannot open local folders.
    FoldersUnsupported,
    /// A following tab offers no recovery action.
    AnotherTabInControl,
    /// Workspace-only access to a folder the browser will ask about again.
    FolderNeedsPermissionToRead {
        name: String,
    },
    /// The environment cannot change during a turn.
    EnvironmentWhileWorking,
    /// The open session is starting its runtime: another opens once it is
    /// up (or the start is stopped).
    SwitchWhileWorking,
    /// Opening another session would start one runtime more than may run
    /// at once ([`crate::session::MAX_RUNNING_SESSIONS`]), and every
    /// running session is working.
    RunningLimit,
    /// "Stop runtime" on a runtime that answers again: it was not stopped.
    RuntimeAnswers,
    /// "Stop runtime" named a runtime that is no longer the session's
    /// (`code`: [`crate::controller::ControllerError::code`]).
    StopRuntimeRefused {
        code: String,
    },
    /// A session list action its item does not offer now.
    NotOffered,
    /// What the latest recovery procedure naming a command observed, as the
    /// transcript shows it on that command (the journal's `observed` text
    /// is the record's own English, for the evidence export).
    Observed {
        kind: RecoveryKind,
    },
    /// Why a provider request failed, as the app recorded it.
    FailedBecause {
        reason: FailureReason,
    },
    /// Text recorded before its reason was (the provider's, the browser's
    /// or an older build's words), shown as it is.
    Recorded {
        text: String,
    },
    // ---- rows' evidence ----
    NoMessagesYet,
    TurnsRepliesLost {
        turns: u32,
        lost: u32,
    },
    TurnsSomeUnreadable {
        turns: u32,
    },
    TurnsRecorded {
        turns: u32,
    },
    WorkspaceThere,
    WorkspaceThereEntries {
        entries: u32,
    },
    WorkspaceGone,
    NoWorkspaceYet,
    NotChecked,
    NoStoredKey,
    KeysPresent {
        total: u32,
    },
    KeysMissing {
        missing: u32,
        total: u32,
    },
    NoRuntimeRan,
    RuntimeAttached,
    CommandMayHaveStarted,
    RuntimeStopped,
    TabAttached,
    TabNotAttached,
    // ---- what is missing ----
    OutputEvicted {
        commands: u32,
    },
    RecordsSetAside {
        records: u32,
    },
    OutputNeverRecorded {
        commands: u32,
    },
    // ---- storage ----
    Storage {
        persisted: bool,
        used: u64,
        quota: u64,
    },
    // ---- details and history ----
    ErrorStampIs {
        stamp: ErrorStamp,
    },
    ExecutionIs {
        execution: ExecutionId,
    },
    /// `resolution`: `Some(true)` marked done, `Some(false)` marked not
    /// done; `reissued` when re-issued; otherwise check before repeating.
    UncertainCommand {
        line: String,
        outcome: Outcome,
        verdict: Option<bool>,
        reissued: bool,
    },
    ReplyLost {
        request: ProviderRequestId,
        turn: TurnId,
    },
    StorageDetail {
        storage: Box<Phrase>,
    },
    EarlierFailure {
        cause: FailureCause,
        stamp: ErrorStamp,
    },
    // ---- causes and refusals ----
    Cause {
        cause: FailureCause,
    },
    Refused {
        refusal: Refusal,
    },
    Journal {
        fault: JournalFault,
    },
    // ---- controller notices ----
    ActionNotPossible {
        action: Action,
        reason: Box<Phrase>,
    },
    NothingToRecover,
    WorkspaceCannotOpen,
    WorkspaceUnreadable {
        detail: String,
    },
    NotUncertain,
    ReissueNeedsRunning,
    ReissueAgentWorking,
    ProfilesCannotOpen {
        fault: StoreFault,
    },
    NoProfileMade {
        fault: StoreFault,
    },
    MessageWaits {
        waiting: u32,
    },
    ResumedWithoutProfile,
    WorkspaceNotDeleted {
        detail: String,
    },
    EarlierLaunchAnswered {
        runtime: String,
        generation: u64,
    },
    EarlierLaunchRetired {
        runtime: String,
        generation: u64,
    },
    ProfilesUnreadable {
        fault: StoreFault,
    },
    ProfilesNotOpen,
    ProfileSaved {
        name: String,
    },
    ProfileNotSaved {
        fault: StoreFault,
    },
    ProfileDeletedMeanwhile,
    ProfileNotDeleted {
        fault: StoreFault,
    },
    NoIdMade,
    KeyNotStored {
        fault: StoreFault,
    },
    NoKeyForCommands,
    /// A profile setting refused, with what it must be.
    ProfileInvalid {
        invalid: InvalidProfile,
    },
    MessageTooLong {
        bytes: u64,
        limit: u64,
    },
    /// Writes keep failing (`fault`: the last failure); a message waits.
    JournalDegraded {
        fault: JournalFault,
    },
    Plan {
        error: PlanError,
    },
    SessionStoppedResend,
    NoSessionToSend,
    FollowingCannotSend,
    MessageEmpty,
    /// The core refused what the engine asked of it; `limit` is the
    /// number the kind names (journal full, too many clients), else 0.
    RequestRejected {
        rejection: RejectionKind,
        limit: u64,
    },
    NoWebLocks,
    /// What the browser refused is in the worker's log.
    NoRandomness,
    /// Which step of the Web Locks call failed is in the worker's log.
    LockFailed,
    SnapshotFallback {
        bad: u64,
        loaded: u64,
    },
    SnapshotsUnreadable {
        count: u32,
        newest: u64,
    },
    SnapshotNotSaved {
        fault: JournalFault,
    },
    /// Which records and why are in the worker's log and the quarantine
    /// store.
    RecordsQuarantined {
        count: u32,
    },
    QuarantineNotMoved {
        fault: JournalFault,
    },
    /// Why each was refused is in the worker's log; the entries stay in
    /// the journal.
    ReplayRefused {
        count: u32,
        first: u64,
    },
    /// `code`: [`crate::controller::ControllerError::code`].
    PersistConfirmFailed {
        code: String,
    },
    RuntimeNotJson {
        runtime: String,
    },
    /// `code`: [`crate::controller::ControllerError::code`].
    RuntimeMessageRejected {
        runtime: String,
        code: String,
    },
    FollowerUnreadable {
        count: u32,
    },
    NoBroadcastChannel,
    OtherBuild,
    BroadcastRejected,
    CatchUpFailed {
        fault: JournalFault,
    },
    FollowGap {
        from: u64,
        to: u64,
    },
    EntryNotBelieved {
        position: u64,
    },
    PageNotJson,
    /// A message from the page this build cannot read (the decoder's words
    /// are in the worker's log).
    PageMessageRejected,
    PageMessageTooLarge {
        bytes: u64,
        max: u64,
    },
    /// The page and the worker come from different builds.
    PageOtherBuild {
        theirs: u32,
        ours: u32,
    },
    PortMissing,
    /// Code fetched when first needed (a module split off the controller)
    /// could not be loaded; what needed it was not begun.
    NotLoaded,
    /// The code that reads the journal's snapshot (a module split off the
    /// controller) could not be loaded: the history was not opened, and
    /// nothing of it was read or changed.
    HistoryNotLoaded,
    ExportNoJournal,
    Exporting,
    ExportFailed {
        fault: JournalFault,
    },
    ExportNoSession,
    ExportHandOff {
        detail: String,
    },
    ExportedWithGaps {
        unreadable: u32,
        missing: u32,
    },
    ImportTooLarge {
        file: String,
        bytes: u64,
        limit: u64,
    },
    UnaskedFile,
    ImportTruncated {
        file: String,
        got: u64,
        expected: u64,
    },
    ImportFailed {
        file: String,
        fault: ImportFault,
    },
    // ---- turn endings ----
    /// The core, not the agent, ended a turn.
    TurnEnded {
        ending: TurnEnding,
    },
    // ---- a provider request waiting to be sent again ----
    RetryRateLimited {
        seconds: u32,
    },
    RetryOverloaded {
        seconds: u32,
    },
    RetryNotConnected {
        seconds: u32,
    },
    /// A file picked for a local model profile that cannot be one.
    LocalModelRefused {
        fault: ModelFileFault,
    },
    /// A local model file's header facts, as the profile form shows them.
    LocalModelFacts {
        name: String,
        bytes: u64,
        architecture: String,
        parameters: u64,
        trained: u64,
        context: u32,
    },
    /// A command's full output cannot be read back from this tab's memory.
    OutputUnavailable,
    /// Reading a command's full output found artifacts missing from storage.
    OutputMissing {
        missing: u32,
    },
    /// The runtime reported the command finished, but its terminal event
    /// (and any event after a hole) did not replay from the journal.
    EventsUnreadable,
    /// The runtime refused the command's dispatch, so it has not started:
    /// why a command shows as not dispatched.
    DispatchRefused {
        refusal: DispatchRefusal,
    },
    /// A local model is loading for the running turn: `read` of its file's
    /// `total` bytes, `seconds` since the load began.
    LocalModelLoading {
        read: u64,
        total: u64,
        seconds: u32,
    },
}

const JOURNAL_REMOVED: &str = "the stored history is gone: the site's data was cleared or the journal was deleted while Lifeline was open. Unrecorded messages stay in the message box. Start a new journal to go on";
const JOURNAL_CONNECTION_LOST: &str = "the browser closed the journal (site data cleared, or a disk error), so the stored history cannot be reached. Unrecorded messages stay in the message box. Start a new journal to go on; the history loads again if it is still there";
const JOURNAL_WRITER_UNREADABLE: &str = "the journal's writer record is unreadable, so nothing can be written safely. The history is shown read-only and nothing was deleted: export the evidence, then choose Repair journal (the damaged record is kept)";

impl fmt::Display for JournalFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JournalFault::Unavailable { detail } => write!(
                f,
                "the journal could not be opened or was closed by the browser ({detail}); history cannot be kept in this browser profile until it is available again — reload to retry"
            ),
            JournalFault::NewerSchema { schema } => write!(
                f,
                "the journal was written by a newer Lifeline (schema above {schema}); reload to get the newer version — nothing was changed"
            ),
            JournalFault::Blocked => f.write_str(
                "another Lifeline tab is holding an older journal open; close or reload the other tabs",
            ),
            JournalFault::Operation { detail } => write!(
                f,
                "journal operation failed: {detail}; nothing of it was written — it can be retried"
            ),
            JournalFault::QuotaExceeded => f.write_str(
                "the browser's storage for Lifeline is full: the journal is intact and everything already recorded is kept, but new work is refused until space is freed (delete old sessions or artifacts, or free disk space)",
            ),
            JournalFault::Superseded => f.write_str(
                "another Lifeline controller (another tab or a restarted worker) took over the journal; this one wrote nothing and must stop writing — reload this tab to follow it",
            ),
            JournalFault::VersionChange => f.write_str(
                "a newer Lifeline in another tab is upgrading the journal, so this tab closed its connection; reload this tab to continue",
            ),
            JournalFault::Corrupt { detail } => write!(
                f,
                "the journal is damaged: {detail}; records already written are kept — export the evidence and start a fresh profile if this persists"
            ),
            JournalFault::Invalid { detail } => write!(
                f,
                "refused to write an invalid record ({detail}); this is a bug in Lifeline — nothing was written"
            ),
            JournalFault::Closed => f.write_str("the journal connection was closed by this tab"),
            JournalFault::NotRecovered { position } => write!(
                f,
                "the journal could not be recovered: its entry at position {position} contradicts what comes before it"
            ),
            JournalFault::Removed => f.write_str(JOURNAL_REMOVED),
            JournalFault::ConnectionLost => f.write_str(JOURNAL_CONNECTION_LOST),
            JournalFault::WriterUnreadable => f.write_str(JOURNAL_WRITER_UNREADABLE),
        }
    }
}

/// The English of a recovery summary row's evidence: the page words it
/// from its catalogs; the continuation prompt (text for the model) needs
/// it in the worker too, where the rest of [`Phrase`]'s English is not
/// linked. `None` for a phrase that is not row evidence.
pub fn row_evidence_english(p: &Phrase) -> Option<String> {
    struct Row<'a>(&'a Phrase);
    impl fmt::Display for Row<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write_row_evidence(self.0, f)
        }
    }
    let mut out = String::new();
    fmt::write(&mut out, format_args!("{}", Row(p))).ok()?;
    (!out.is_empty()).then_some(out)
}

fn write_row_evidence(p: &Phrase, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    use Phrase as P;
    match p {
        P::NoMessagesYet => f.write_str("no messages yet"),
        P::TurnsRepliesLost { turns, lost } => write!(
            f,
            "turns recorded: {turns}; model replies lost while streaming: {lost} — never resent"
        ),
        P::TurnsSomeUnreadable { turns } => {
            let s = plural(*turns as u64, "", "s");
            write!(f, "{turns} turn{s} recorded; some records unreadable")
        }
        P::TurnsRecorded { turns } => {
            let s = plural(*turns as u64, "", "s");
            write!(f, "{turns} turn{s} recorded in the journal")
        }
        P::WorkspaceThere => f.write_str("the workspace folder is there"),
        P::WorkspaceThereEntries { entries } => {
            let what = plural(*entries as u64, "entry", "entries");
            write!(f, "the workspace folder is there ({entries} {what})")
        }
        P::WorkspaceGone => f.write_str("the workspace folder is gone from this browser's storage"),
        P::NoWorkspaceYet => f.write_str("nothing has run yet, so there is no workspace folder"),
        P::NotChecked => f.write_str("not checked"),
        P::NoStoredKey => f.write_str("the profile uses no stored key"),
        P::KeysPresent { total } => {
            let s = plural(*total as u64, "", "s");
            write!(f, "{total} stored key{s} present, encrypted")
        }
        P::KeysMissing { missing, total } => {
            write!(f, "stored keys missing: {missing} of {total}")
        }
        P::NoRuntimeRan => f.write_str("no runtime has run for this session"),
        P::RuntimeAttached => f.write_str("the runtime is attached"),
        P::CommandMayHaveStarted => {
            f.write_str("a command may have started before its runtime stopped")
        }
        P::RuntimeStopped => f.write_str("the runtime that ran this session stopped"),
        P::TabAttached => f.write_str("this tab is attached to the journal"),
        P::TabNotAttached => f.write_str("this tab is not attached to the journal"),
        _ => Ok(()),
    }
}

/// English marks only the singular: 0 takes the plural.
fn plural(count: u64, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 {
        one
    } else {
        many
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn plural2(
    count: u64,
    one: (&'static str, &'static str),
    many: (&'static str, &'static str),
) -> (&'static str, &'static str) {
    if count == 1 {
        one
    } else {
        many
    }
}

/// What a recovery procedure of `kind` means for a command it names.
#[cfg(not(target_arch = "wasm32"))]
fn observed_english(kind: RecoveryKind) -> &'static str {
    use RecoveryKind as K;
    match kind {
        K::ControllerRestart => "the controller restarted; this command's state comes from the journal",
        K::HostLoss => "the page was reloaded or closed while this ran; its runtime ended with it",
        K::TransportLoss => "the connection to its runtime was lost; unless it was acknowledged, it may have started",
        K::RuntimeCrash => "its runtime crashed",
        K::CheckpointFailure => "a journal write failed and is being retried unchanged; nothing in it was shown as done",
        K::CleanupFailure => "stopping its runtime failed; it may still be running",
        K::AckTimeout => "its runtime did not acknowledge it in time; it may have started and is not sent again",
        K::CancelEscalation => "cancelling it did not finish in time, so its runtime was terminated",
        K::ReattachTimeout => "its runtime did not reconnect in time; it is being terminated",
        K::RuntimeReplaced => "its runtime was replaced by a new one",
        K::SessionStopped => "its session was stopped",
        K::StreamConflict => "its runtime sent a different version of a recorded event; the recorded one was kept",
    }
}

/// Why a runtime refused a command, as its row says it.
#[cfg(not(target_arch = "wasm32"))]
fn dispatch_refused_english(refusal: DispatchRefusal) -> &'static str {
    match refusal {
        DispatchRefusal::Capacity => {
            "its runtime had no room for another command, so it has not started; it is offered again when there is room"
        }
        DispatchRefusal::WrongRuntime
        | DispatchRefusal::StaleGeneration { .. }
        | DispatchRefusal::WrongExecution => {
            "the runtime it was sent to had been replaced and refused it, so it has not started there"
        }
        DispatchRefusal::CancelledBeforeAccept => {
            "its cancellation reached the runtime first, so it never started"
        }
    }
}

// The English of every phrase is for tests, logs and the export, all native;
// in the workers it would be ~4 KB of gzip wasm nobody reads.
#[cfg(not(target_arch = "wasm32"))]
impl fmt::Display for Phrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Phrase as P;
        match self {
            P::SummaryAgentFailed => f.write_str("The last turn failed. The workspace and keys are kept."),
            P::SummaryRuntimeLost => f.write_str("The runtime stopped. The workspace is kept."),
            P::SummaryCleanupFailed => f.write_str("Stopping did not finish."),
            P::SummaryCredential => f.write_str("A key this session needs is missing."),
            P::SummaryProfile => f.write_str("The session's profile cannot be used."),
            P::SummaryRecoveryFailed => f.write_str("Recovery failed."),
            P::SummaryLaunchFailed => f.write_str("The session's runtime did not start."),
            P::SummaryUnknownFailure => f.write_str("Something stopped this session."),
            P::SummaryDetached => f.write_str(
                "The session stopped when the page or its worker did. Its history and workspace are kept.",
            ),
            P::SummaryCancelled => f.write_str("The start was cancelled."),
            P::SummaryArchived => {
                f.write_str("This session is archived: Unarchive it, or Start fresh.")
            }
            P::SummaryUncertain => {
                f.write_str("Some actions may or may not have happened. Nothing was repeated.")
            }
            P::SummaryInterruptedEarlier => {
                f.write_str("Something stopped this session earlier; details are in its history.")
            }
            P::SummaryRecovery => f.write_str("Recovery"),
            P::BusyStarting => f.write_str("Recovering: starting the session…"),
            P::BusyCancelling => f.write_str("Stopping the start…"),
            P::WaitOrStop { starting } => write!(
                f,
                "{} Wait for it, or press Stop.",
                if *starting { P::BusyStarting } else { P::BusyCancelling }
            ),
            P::SessionArchived => f.write_str("the session is archived; Unarchive it first"),
            P::NeverRan => f.write_str(
                "this session has never run, so there is nothing to resume; send a message",
            ),
            P::SessionRunning => f.write_str("the session is running"),
            P::WorkspaceGoneStartFresh => f.write_str("the workspace is gone; Start fresh instead"),
            P::NoHistory => f.write_str("there is no recorded history to continue from"),
            P::AgentWorking => f.write_str("the agent is working on a message"),
            P::AgentRunningLive => {
                f.write_str("the agent is running; its workspace is live, not stopped")
            }
            P::NoWorkspaceFolder => f.write_str("there is no workspace folder to inspect"),
            P::AgentWorkingStopFirst => {
                f.write_str("the agent is working on a message; stop it first")
            }
            P::FolderGone { name } => write!(
                f,
                "the folder \u{201c}{name}\u{201d} is no longer available in this browser; choose a folder under Environment"
            ),
            P::FolderNeedsPermissionToRead { name } => write!(
                f,
                "the browser needs your permission to read the folder \u{201c}{name}\u{201d}; press Inspect workspace again and allow it"
            ),
            P::EnvironmentWhileWorking => f.write_str(
                "the agent is working on a message; choose the environment when it is done, or press Stop",
            ),
            P::SwitchWhileWorking => f.write_str(
                "this session is starting its runtime; open another once it is up, or press Stop",
            ),
            P::RunningLimit => write!(
                f,
                "{} sessions are working, the most that run at once; open another when one of them is done, or stop one",
                crate::session::MAX_RUNNING_SESSIONS
            ),
            P::RuntimeAnswers => {
                f.write_str("the runtime answers again, so it was not stopped")
            }
            P::StopRuntimeRefused { code } => write!(
                f,
                "the runtime was not stopped: it is no longer the one this session runs ({code})"
            ),
            P::AnotherTabInControl => f.write_str(
                "another tab is in control; act there, or close that tab and this one takes over",
            ),
            P::NotOffered => f.write_str("the session does not offer it now"),
            P::Observed { kind } => f.write_str(observed_english(*kind)),
            P::FailedBecause { reason } => reason.fmt(f),
            P::Recorded { text } => f.write_str(text),
            P::FoldersUnsupported => f.write_str(
                "this browser cannot open local folders; open Lifeline in a browser that can",
            ),
            P::NoMessagesYet
            | P::TurnsRepliesLost { .. }
            | P::TurnsSomeUnreadable { .. }
            | P::TurnsRecorded { .. }
            | P::WorkspaceThere
            | P::WorkspaceThereEntries { .. }
            | P::WorkspaceGone
            | P::NoWorkspaceYet
            | P::NotChecked
            | P::NoStoredKey
            | P::KeysPresent { .. }
            | P::KeysMissing { .. }
            | P::NoRuntimeRan
            | P::RuntimeAttached
            | P::CommandMayHaveStarted
            | P::RuntimeStopped
            | P::TabAttached
            | P::TabNotAttached => write_row_evidence(self, f),
            P::OutputEvicted { commands } => {
                let (s, its) = plural2(*commands as u64, ("", "its"), ("s", "their"));
                write!(
                    f,
                    "older output events of {commands} command{s} are not kept in detail ({its} collapsed output is)"
                )
            }
            P::RecordsSetAside { records } => {
                let (s, was) = plural2(*records as u64, ("", "was"), ("s", "were"));
                write!(
                    f,
                    "{records} journal record{s} could not be read and {was} set aside"
                )
            }
            P::OutputNeverRecorded { commands } => write!(
                f,
                "output after the last recorded event of {commands} lost command{} was never recorded",
                plural(*commands as u64, "", "s")
            ),
            P::Storage {
                persisted,
                used,
                quota,
            } => write!(
                f,
                "{}; {used} of {quota} bytes used",
                if *persisted {
                    "persistent storage"
                } else {
                    "best-effort storage (the browser may clear it under pressure)"
                }
            ),
            P::ErrorStampIs { stamp } => write!(f, "Error stamp {stamp}"),
            P::ExecutionIs { execution } => write!(f, "Execution {execution}"),
            P::UncertainCommand {
                line,
                outcome,
                verdict,
                reissued,
            } => write!(
                f,
                "`{line}` {}{}",
                outcome.label(),
                match (verdict, reissued) {
                    (Some(true), _) => " — you marked it done",
                    (Some(false), _) => " — you marked it not done",
                    (None, true) => " — re-issued",
                    (None, false) => " — check before repeating it",
                }
            ),
            P::ReplyLost { request, turn } => write!(
                f,
                "The model's reply to request {request} (turn {turn}) was lost; it was not resent"
            ),
            P::StorageDetail { storage } => write!(f, "Storage: {storage}"),
            P::EarlierFailure { cause, stamp } => write!(f, "{cause} (stamp {stamp})"),
            P::Cause { cause } => cause.fmt(f),
            P::Refused { refusal } => refusal.fmt(f),
            P::Journal { fault } => fault.fmt(f),
            P::ActionNotPossible { action, reason } => {
                write!(f, "{} is not possible now: {reason}", action.label())
            }
            P::NothingToRecover => f.write_str("there is nothing to recover"),
            P::WorkspaceCannotOpen => {
                f.write_str("the workspace cannot be opened: the session is gone or archived")
            }
            P::WorkspaceUnreadable { detail } => {
                write!(f, "the workspace cannot be read: {detail}")
            }
            P::NotUncertain => f.write_str("that command is not uncertain"),
            P::ReissueNeedsRunning => {
                f.write_str("Re-issue needs a running session: Resume first, then re-issue")
            }
            P::ReissueAgentWorking => {
                f.write_str("the agent is working on a message; re-issue when it is done")
            }
            P::ProfilesCannotOpen { fault } => {
                write!(f, "profiles and keys cannot be opened: {fault}")
            }
            P::NoProfileMade { fault } => write!(f, "no profile could be made: {fault}"),
            P::MessageWaits { waiting } => {
                write!(f, "your message waits for the agent ({waiting} waiting)")
            }
            P::ResumedWithoutProfile => f.write_str(
                "the profile this session ran with was deleted; it resumes without that profile's environment variables",
            ),
            P::WorkspaceNotDeleted { detail } => {
                write!(f, "the workspace folder could not be deleted: {detail}")
            }
            P::EarlierLaunchAnswered {
                runtime,
                generation,
            } => write!(
                f,
                "an earlier launch (runtime {runtime}, generation {generation}) had not been acknowledged; it answered and is used — nothing was launched twice"
            ),
            P::EarlierLaunchRetired {
                runtime,
                generation,
            } => write!(
                f,
                "an earlier launch (runtime {runtime}, generation {generation}) was recorded but never answered; whether it ran is unknown. It is retired and a new runtime starts"
            ),
            P::ProfilesUnreadable { fault } => write!(f, "profiles cannot be read: {fault}"),
            P::ProfilesNotOpen => f.write_str("profiles are not open yet; try again in a moment"),
            P::ProfileSaved { name } => write!(f, "profile {name:?} saved"),
            P::ProfileNotSaved { fault } => write!(f, "the profile was not saved: {fault}"),
            P::ProfileDeletedMeanwhile => f.write_str("that profile was deleted meanwhile"),
            P::ProfileNotDeleted { fault } => write!(f, "the profile was not deleted: {fault}"),
            P::NoIdMade => f.write_str("no identifier could be made"),
            P::KeyNotStored { fault } => write!(f, "the key was not stored: {fault}"),
            P::NoKeyForCommands => f.write_str(
                "there is no API key to give commands; enter one or clear that field",
            ),
            P::ProfileInvalid { invalid } => write!(f, "the profile is not valid: {invalid}"),
            P::MessageTooLong { bytes, limit } => {
                write!(f, "the message is {bytes} bytes; the limit is {limit}")
            }
            P::JournalDegraded { fault } => {
                write!(f, "the journal cannot be written: {fault}")
            }
            P::Plan { error } => error.fmt(f),
            P::SessionStoppedResend => f.write_str(
                "the session stopped before the message could be given to the agent; send it again",
            ),
            P::NoSessionToSend => f.write_str("there is no session to send to"),
            P::FollowingCannotSend => f.write_str(
                "this tab is following another tab that holds the journal; send from that tab, or close it and this one takes over",
            ),
            P::MessageEmpty => f.write_str("the message is empty"),
            P::RequestRejected { rejection, limit } => match rejection {
                RejectionKind::Busy => f.write_str(
                    "the journal is catching up with earlier writes; try again shortly",
                ),
                RejectionKind::JournalFull => write!(
                    f,
                    "the journal holds its limit of {limit} commands; archive or delete old sessions first"
                ),
                RejectionKind::JournalUnavailable => f.write_str(
                    "the journal cannot be written now, so nothing new is started; what is recorded is kept",
                ),
                RejectionKind::TooManyClients => write!(
                    f,
                    "{limit} tabs or clients are already attached; close one first"
                ),
                RejectionKind::NotReissuable => f.write_str(
                    "this command cannot be re-issued (it is not uncertain, or it was re-issued already); nothing was run",
                ),
                other => write!(
                    f,
                    "Lifeline refused a request its journal does not match ({}); nothing was run or sent twice",
                    other.as_str()
                ),
            },
            P::NoWebLocks => f.write_str(
                "this browser has no Web Locks; two tabs could not be kept from writing the journal at once",
            ),
            P::NoRandomness => f.write_str(
                "this browser gives the app no secure randomness, so it cannot mint identities that are never reused",
            ),
            P::LockFailed => f.write_str(
                "the browser's Web Locks failed, so this tab cannot tell whether another one writes the journal; reload the page",
            ),
            P::SnapshotFallback { bad, loaded } => write!(
                f,
                "snapshot at position {bad} is unreadable; loaded the previous snapshot at position {loaded} and the entries after it"
            ),
            P::SnapshotsUnreadable { count, newest } => {
                let (s, at) = plural2(*count as u64, ("", "at"), ("s", "newest at"));
                write!(
                    f,
                    "{count} snapshot{s} unreadable ({at} position {newest}); the journal is replayed from its first entry"
                )
            }
            P::SnapshotNotSaved { fault } => write!(
                f,
                "a projection snapshot was not saved ({fault}); the next start replays more of the journal"
            ),
            P::RecordsQuarantined { count } => {
                let (s, was) = plural2(*count as u64, ("", "was"), ("s", "were"));
                write!(
                    f,
                    "{count} journal record{s} could not be read and {was} set aside in quarantine, where they are kept; the rest of the history loaded"
                )
            }
            P::QuarantineNotMoved { fault } => {
                write!(f, "the unreadable records stay where they are: {fault}")
            }
            P::ReplayRefused { count, first } => {
                if *count == 1 {
                    write!(f, "the journal entry at position {first} is missing or could not be replayed, and is not believed; nothing was deleted")
                } else {
                    write!(f, "{count} journal entries, the first at position {first}, are missing or could not be replayed, and are not believed; nothing was deleted")
                }
            }
            P::PersistConfirmFailed { code } => write!(
                f,
                "a write the browser confirmed could not be applied ({code}); it is in the journal and is read again at the next start"
            ),
            P::RuntimeNotJson { runtime } => write!(
                f,
                "runtime {runtime} sent a message that is not JSON text in a buffer; it was ignored"
            ),
            P::RuntimeMessageRejected { runtime, code } => write!(
                f,
                "a message from runtime {runtime} was not believed ({code}); nothing in it was recorded"
            ),
            P::FollowerUnreadable { count } => {
                let (s, them) = plural2(*count as u64, ("", "it"), ("s", "them"));
                write!(
                    f,
                    "{count} journal record{s} could not be read; the tab that leads sets {them} aside"
                )
            }
            P::NoBroadcastChannel => f.write_str(
                "this browser has no BroadcastChannel; other tabs will not follow live",
            ),
            P::OtherBuild => {
                f.write_str("another tab runs a different Lifeline build; reload both tabs")
            }
            P::BroadcastRejected => f.write_str("a message from another tab could not be read; it was ignored"),
            P::CatchUpFailed { fault } => {
                write!(f, "could not read the journal to catch up: {fault}")
            }
            P::FollowGap { from, to } => write!(
                f,
                "journal entries {from} to {to} could not be read while following"
            ),
            P::EntryNotBelieved { position } => write!(
                f,
                "the journal entry at position {position} from the leading tab is not believed; it stays in the journal"
            ),
            P::PageNotJson => {
                f.write_str("the page sent a message that is not a JSON string; it was ignored")
            }
            P::PageMessageRejected => f.write_str(
                "a message from the page could not be read and was ignored; reload the page",
            ),
            P::PageMessageTooLarge { bytes, max } => write!(
                f,
                "a message from the page had {bytes} bytes, more than the {max} allowed; it was ignored"
            ),
            P::PageOtherBuild { theirs, ours } => write!(
                f,
                "the page speaks protocol {theirs} and its worker {ours}; reload the page so both come from the same build"
            ),
            P::PortMissing => f.write_str(
                "a runtime port message arrived without its port; the runtime cannot dial in",
            ),
            P::NotLoaded => f.write_str(
                "part of the app could not be loaded, so nothing was done; check the connection and try again",
            ),
            P::HistoryNotLoaded => f.write_str(
                "the part of the app that reads the saved history could not be loaded, so the history was not opened; nothing was read or changed — check the connection and reload",
            ),
            P::ExportNoJournal => f.write_str("Export failed: the journal is not open."),
            P::Exporting => f.write_str("Exporting evidence…"),
            P::ExportFailed { fault } => write!(f, "Export failed: {fault}"),
            P::ExportNoSession => f.write_str("Export failed: the journal has no such session."),
            P::ExportHandOff { detail } => {
                write!(f, "Export failed: could not hand the file to the page: {detail}")
            }
            P::ExportedWithGaps {
                unreadable,
                missing,
            } => match (unreadable, missing) {
                (0, m) => write!(f, "Exported, but {m} artifacts were missing from storage."),
                (u, 0) => write!(
                    f,
                    "Exported, but {u} unreadable journal values were left out."
                ),
                (u, m) => write!(
                    f,
                    "Exported, but {u} unreadable journal values were left out and {m} artifacts were missing from storage."
                ),
            },
            P::ImportTooLarge { file, bytes, limit } => write!(
                f,
                "Import refused: {file} is {bytes} bytes; the limit is {limit}."
            ),
            P::UnaskedFile => f.write_str("The page sent a file nobody asked for; it was ignored."),
            P::ImportTruncated {
                file,
                got,
                expected,
            } => write!(
                f,
                "Import failed: {file} arrived with {got} of {expected} bytes."
            ),
            P::ImportFailed { file, fault } => {
                use crate::export::ImportFault as F;
                write!(f, "Import of {file} failed: ")?;
                match fault {
                    F::NotAnArchive => f.write_str("it is not a Lifeline evidence archive"),
                    F::TooManyLines { limit } => {
                        write!(f, "it has more than {limit} lines, the most this build imports")
                    }
                    F::LineTooLong { line, bytes, limit } => {
                        write!(f, "line {line} is {bytes} bytes; the limit is {limit}")
                    }
                    F::BadLine { line } => {
                        write!(f, "line {line} is not a record this build can read")
                    }
                    F::NoSession => f.write_str("its lines do not open exactly one session"),
                }
            }
            P::TurnEnded { ending } => write!(f, "{ending}"),
            P::RetryRateLimited { seconds } => {
                write!(f, "rate limited — retrying in {seconds} s")
            }
            P::RetryOverloaded { seconds } => {
                write!(f, "the provider is overloaded — retrying in {seconds} s")
            }
            P::RetryNotConnected { seconds } => {
                write!(f, "could not connect — retrying in {seconds} s")
            }
            P::LocalModelRefused { fault } => {
                use crate::profile::ModelFileFault as F;
                f.write_str("this file cannot be used as a local model: ")?;
                match fault {
                    F::NotGguf => f.write_str("it is not a GGUF model"),
                    F::Version { version } => {
                        write!(f, "GGUF version {version} is not supported (2 and 3 are)")
                    }
                    F::Truncated => f.write_str("it ends inside its GGUF header"),
                    F::Damaged => f.write_str("its GGUF header is damaged"),
                    F::NoArchitecture => f.write_str("its GGUF header names no model architecture"),
                    F::Unreadable { detail } => {
                        write!(f, "the browser could not read or keep it ({detail})")
                    }
                }
            }
            P::LocalModelFacts {
                name,
                bytes,
                architecture,
                parameters,
                trained,
                context,
            } => write!(
                f,
                "{name}: {bytes} bytes, {architecture}, {parameters} parameters, trained context {trained} tokens; loaded with a context of {context} tokens"
            ),
            P::OutputUnavailable => f.write_str(
                "the full output of that command cannot be read here; export the session's evidence to get it",
            ),
            P::OutputMissing { missing } => write!(
                f,
                "the full output cannot be shown: {missing} of its stored parts are missing from storage"
            ),
            P::EventsUnreadable => f.write_str(
                "some of this command's records could not be read back from the journal: its output and exit status are not shown (the notices say which records)",
            ),
            P::DispatchRefused { refusal } => f.write_str(dispatch_refused_english(*refusal)),
            P::LocalModelLoading {
                read,
                total,
                seconds,
            } => write!(
                f,
                "loading the local model: {read} of {total} bytes, {seconds} s"
            ),
        }
    }
}

// ---- the wire form ----
//
// A phrase crosses the protocol as a compact array `[kind, [texts],
// [numbers], [phrases]]` rather than serde's derived enum form: the page
// decodes one small struct instead of a visitor per variant (the derived
// form, buffered inside the protocol's internally tagged messages, cost
// the UI's wasm budget tens of KB). The variant list below is the one
// place that gives each phrase its kind number; `encode`'s `match` is
// exhaustive, so a new phrase must be listed to compile.

impl Arg for Option<RuntimeEnd> {
    fn put(&self, w: &mut Wire) {
        let i = self.map_or(0, |e| {
            1 + RuntimeEnd::ALL.iter().position(|a| *a == e).unwrap_or(0)
        });
        w.2.push(i as u64);
    }
    fn take(r: &mut Reader) -> Result<Self, WireError> {
        match usize::take(r)? {
            0 => Ok(None),
            i => RuntimeEnd::ALL
                .get(i - 1)
                .copied()
                .map(Some)
                .ok_or(WireError),
        }
    }
}

impl Arg for Box<Phrase> {
    fn put(&self, w: &mut Wire) {
        w.3.push(encode(self));
    }
    fn take(r: &mut Reader) -> Result<Self, WireError> {
        decode(r.p()?).map(Box::new)
    }
}

impl Arg for Outcome {
    fn put(&self, w: &mut Wire) {
        let i = Outcome::ALL.iter().position(|o| o == self).unwrap_or(0);
        w.2.push(i as u64);
    }
    fn take(r: &mut Reader) -> Result<Self, WireError> {
        let i = usize::take(r)?;
        Outcome::ALL.get(i).copied().ok_or(WireError)
    }
}

impl Arg for ProviderFailureClass {
    fn put(&self, w: &mut Wire) {
        let i = ProviderFailureClass::ALL
            .iter()
            .position(|c| c == self)
            .unwrap_or(0);
        w.2.push(i as u64);
    }
    fn take(r: &mut Reader) -> Result<Self, WireError> {
        let i = usize::take(r)?;
        ProviderFailureClass::ALL.get(i).copied().ok_or(WireError)
    }
}

impl Arg for Action {
    fn put(&self, w: &mut Wire) {
        let i = Action::ALL.iter().position(|a| a == self).unwrap_or(0);
        w.2.push(i as u64);
    }
    fn take(r: &mut Reader) -> Result<Self, WireError> {
        let i = usize::take(r)?;
        Action::ALL.get(i).copied().ok_or(WireError)
    }
}

macro_rules! id_arg {
    ($($t:ty),*) => {$(
        impl Arg for $t {
            fn put(&self, w: &mut Wire) {
                w.1.push(self.to_string());
            }
            fn take(r: &mut Reader) -> Result<Self, WireError> {
                r.s()?.parse().map_err(|_| WireError)
            }
        }
    )*};
}
id_arg!(
    ErrorStamp,
    ExecutionId,
    ProviderRequestId,
    TurnId,
    CredentialId,
    StartupAttemptId
);

nested!(ProfileBlock {
    0 => Unreadable { detail },
    1 => OtherOwner { owner },
    2 => Store { fault },
    3 => Invalid { invalid },
});
nested!(InvalidProfile {
    0 => OtherOwner { owner },
    1 => Name,
    2 => BaseUrl,
    3 => ModelName,
    4 => LocalName,
    5 => LocalSettingsTooLong,
    6 => LocalSettingsUnreadable,
    7 => LocalFileFacts,
    8 => LocalModelNameTooLong,
    9 => LocalStoredName,
    10 => LocalFileEmpty,
    11 => TemperatureText,
    12 => TopPText,
    13 => MaxTokensText,
    14 => ContextText,
    15 => Temperature,
    16 => TopP,
    17 => Context { most },
    18 => MaxTokens,
    19 => Attempts,
    20 => RetryPeriod,
    21 => Timeouts,
    22 => TooManyEnv,
    23 => EnvName { name },
    24 => EnvReserved { name },
    25 => EnvTwice { name },
    26 => EnvValueTooLong { name },
});
nested!(DispatchRefusal {
    0 => WrongRuntime,
    1 => StaleGeneration { runtime_generation },
    2 => WrongExecution,
    3 => CancelledBeforeAccept,
    4 => Capacity,
});
nested!(RejectionKind {
    0 => BindingMismatch,
    1 => InvalidBinding,
    2 => StaleBinding,
    3 => UnknownCommand,
    4 => StaleGeneration,
    5 => IdReused,
    6 => CursorAhead,
    7 => JournalFull,
    8 => JournalUnavailable,
    9 => TooManyClients,
    10 => Busy,
    11 => TurnConflict,
    12 => UnknownSession,
    13 => RuntimeNotCurrent,
    14 => UnknownTurn,
    15 => TurnEnded,
    16 => NotModelTurn,
    17 => ProviderStepRefused,
    18 => UnknownProviderRequest,
    19 => ProviderOutcomeConflict,
    20 => NotReissuable,
});
nested!(RecoveryKind {
    0 => ControllerRestart,
    1 => HostLoss,
    2 => TransportLoss,
    3 => RuntimeCrash,
    4 => CheckpointFailure,
    5 => CleanupFailure,
    6 => AckTimeout,
    7 => CancelEscalation,
    8 => ReattachTimeout,
    9 => RuntimeReplaced,
    10 => SessionStopped,
    11 => StreamConflict,
});
nested!(ImportFault {
    0 => NotAnArchive,
    1 => TooManyLines { limit },
    2 => LineTooLong { line, bytes, limit },
    3 => BadLine { line },
    4 => NoSession,
});
nested!(ModelFileFault {
    0 => NotGguf,
    1 => Version { version },
    2 => Truncated,
    3 => Damaged,
    4 => NoArchitecture,
    5 => Unreadable { detail },
});
nested!(StoredKind {
    0 => Profiles,
    1 => Credentials,
});
nested!(StoreFault {
    0 => Unavailable { detail },
    1 => NewerSchema { schema },
    2 => Blocked,
    3 => VersionChange,
    4 => Closed,
    5 => QuotaExceeded,
    6 => Operation { detail },
    7 => InvalidProfile { detail },
    8 => StaleRevision { stored, offered },
    9 => TooMany { what, max },
    10 => InvalidLabel { len, max },
    11 => InvalidSecret { len, max },
    12 => Crypto { detail },
    13 => Corrupt { detail },
});
nested!(CredentialFailure {
    0 => Missing,
    1 => Unreadable { detail },
    2 => Store { fault },
    3 => Malformed { reason },
    4 => KeyGone,
    5 => KeyDamaged,
    6 => NoCrypto { detail },
    7 => Undecryptable,
    8 => NotText,
});
nested!(FolderAccess {
    0 => Granted,
    1 => NeedsPermission,
    2 => Gone,
    3 => Unsupported,
});
nested!(LaunchFailure {
    0 => WorkspaceMissing,
    1 => Failed { detail },
    2 => Folder { name, access },
    3 => Refused { code },
});
nested!(LoadError {
    0 => Unsupported,
    1 => CapabilityAbsent,
    2 => UnknownSession,
    3 => Timeout,
    4 => Cancelled,
    5 => Auth,
    6 => Transport { detail },
    7 => Unclassified { detail },
});
nested!(FailureCause {
    0 => ProfileBlocked { block },
    1 => ProfileDeleted,
    2 => Credential { credential, failure },
    3 => Launch { failure },
    4 => Load { error },
    5 => CleanupFailed { detail },
    6 => AgentFailed { detail },
    7 => RuntimeLost { detail, end },
});
nested!(Refusal {
    0 => UnknownSession,
    1 => Archived,
    2 => Busy { attempt },
    3 => CancellationPending { attempt },
    4 => NothingToResume,
    5 => QueueFull,
    6 => AlreadyRunning,
    7 => TurnRunning,
    8 => Deleted,
});
nested!(JournalFault {
    0 => Unavailable { detail },
    1 => NewerSchema { schema },
    2 => Blocked,
    3 => Operation { detail },
    4 => QuotaExceeded,
    5 => Superseded,
    6 => VersionChange,
    7 => Corrupt { detail },
    8 => Invalid { detail },
    9 => Closed,
    10 => NotRecovered { position },
    11 => Removed,
    12 => ConnectionLost,
    13 => WriterUnreadable,
});
nested!(TurnEnding {
    0 => StoppedBefore { line, left },
    1 => StoppedBetweenSteps,
    2 => SessionLeft,
    3 => ReplyLost,
    4 => CommandCancelled { line },
    5 => CommandUncertain { line, outcome },
    6 => CommandBudget { max },
    7 => TokenBudget { max, used },
    8 => TimeBudget { seconds },
    9 => StepBudget { max },
    10 => ProviderFailed { class },
});
nested!(PlanError {
    0 => Empty,
    1 => TooManyCommands { count },
    2 => CommandTooLong { line },
    3 => PromptTooLong { bytes },
});

macro_rules! phrase_wire {
    ($($k:literal => $v:ident $({ $($f:ident),* })?,)*) => {
        /// A phrase in its wire form.
        pub fn encode(p: &Phrase) -> Wire {
            match p {
                $(Phrase::$v $({ $($f),* })? => {
                    #[allow(unused_mut)]
                    let mut w = Wire($k, Vec::new(), Vec::new(), Vec::new());
                    $($( $f.put(&mut w); )*)?
                    w
                })*
            }
        }

        /// A phrase from its wire form.
        pub fn decode(w: Wire) -> Result<Phrase, WireError> {
            let Wire(kind, s, n, p) = w;
            let r = &mut Reader {
                s: s.into_iter(),
                n: n.into_iter(),
                p: p.into_iter(),
            };
            let _ = &r;
            Ok(match kind {
                $($k => Phrase::$v $({ $($f: Arg::take(r)?),* })?,)*
                _ => return Err(WireError),
            })
        }
    };
}

phrase_wire! {
    0 => SummaryAgentFailed,
    1 => SummaryRuntimeLost,
    2 => SummaryCleanupFailed,
    3 => SummaryCredential,
    4 => SummaryProfile,
    5 => SummaryRecoveryFailed,
    6 => SummaryUnknownFailure,
    7 => SummaryDetached,
    8 => SummaryCancelled,
    9 => SummaryArchived,
    10 => SummaryUncertain,
    11 => SummaryInterruptedEarlier,
    12 => SummaryRecovery,
    13 => BusyStarting,
    14 => BusyCancelling,
    15 => WaitOrStop { starting },
    16 => SessionArchived,
    17 => NeverRan,
    18 => SessionRunning,
    19 => WorkspaceGoneStartFresh,
    20 => NoHistory,
    21 => AgentWorking,
    22 => AgentRunningLive,
    23 => NoWorkspaceFolder,
    24 => AgentWorkingStopFirst,
    25 => NoMessagesYet,
    26 => TurnsRepliesLost { turns, lost },
    27 => TurnsSomeUnreadable { turns },
    28 => TurnsRecorded { turns },
    29 => WorkspaceThere,
    30 => WorkspaceThereEntries { entries },
    31 => WorkspaceGone,
    32 => NoWorkspaceYet,
    33 => NotChecked,
    34 => NoStoredKey,
    35 => KeysPresent { total },
    36 => KeysMissing { missing, total },
    37 => NoRuntimeRan,
    38 => RuntimeAttached,
    39 => CommandMayHaveStarted,
    40 => RuntimeStopped,
    41 => TabAttached,
    42 => TabNotAttached,
    43 => OutputEvicted { commands },
    44 => RecordsSetAside { records },
    45 => OutputNeverRecorded { commands },
    46 => Storage { persisted, used, quota },
    47 => ErrorStampIs { stamp },
    48 => ExecutionIs { execution },
    49 => UncertainCommand { line, outcome, verdict, reissued },
    50 => ReplyLost { request, turn },
    51 => StorageDetail { storage },
    52 => EarlierFailure { cause, stamp },
    53 => Cause { cause },
    54 => Refused { refusal },
    55 => Journal { fault },
    56 => ActionNotPossible { action, reason },
    57 => NothingToRecover,
    58 => WorkspaceCannotOpen,
    59 => WorkspaceUnreadable { detail },
    60 => NotUncertain,
    61 => ReissueNeedsRunning,
    62 => ReissueAgentWorking,
    63 => ProfilesCannotOpen { fault },
    64 => NoProfileMade { fault },
    65 => MessageWaits { waiting },
    66 => ResumedWithoutProfile,
    67 => WorkspaceNotDeleted { detail },
    68 => EarlierLaunchAnswered { runtime, generation },
    69 => EarlierLaunchRetired { runtime, generation },
    70 => ProfilesUnreadable { fault },
    71 => ProfilesNotOpen,
    72 => ProfileSaved { name },
    73 => ProfileNotSaved { fault },
    74 => ProfileDeletedMeanwhile,
    75 => ProfileNotDeleted { fault },
    76 => NoIdMade,
    77 => KeyNotStored { fault },
    78 => NoKeyForCommands,
    79 => ProfileInvalid { invalid },
    80 => MessageTooLong { bytes, limit },
    81 => JournalDegraded { fault },
    82 => Plan { error },
    83 => SessionStoppedResend,
    84 => NoSessionToSend,
    85 => FollowingCannotSend,
    86 => MessageEmpty,
    88 => RequestRejected { rejection, limit },
    89 => NoWebLocks,
    90 => NoRandomness,
    91 => LockFailed,
    92 => SnapshotFallback { bad, loaded },
    93 => SnapshotsUnreadable { count, newest },
    94 => SnapshotNotSaved { fault },
    95 => RecordsQuarantined { count },
    96 => QuarantineNotMoved { fault },
    97 => ReplayRefused { count, first },
    98 => PersistConfirmFailed { code },
    99 => RuntimeNotJson { runtime },
    100 => RuntimeMessageRejected { runtime, code },
    101 => FollowerUnreadable { count },
    102 => NoBroadcastChannel,
    103 => OtherBuild,
    104 => BroadcastRejected,
    105 => CatchUpFailed { fault },
    106 => FollowGap { from, to },
    107 => EntryNotBelieved { position },
    108 => PageNotJson,
    109 => PageMessageRejected,
    110 => PortMissing,
    111 => ExportNoJournal,
    112 => Exporting,
    113 => ExportFailed { fault },
    114 => ExportNoSession,
    115 => ExportHandOff { detail },
    116 => ExportedWithGaps { unreadable, missing },
    117 => ImportTooLarge { file, bytes, limit },
    118 => UnaskedFile,
    119 => ImportTruncated { file, got, expected },
    120 => ImportFailed { file, fault },
    121 => FolderGone { name },
    122 => FoldersUnsupported,
    123 => AnotherTabInControl,
    124 => FolderNeedsPermissionToRead { name },
    125 => EnvironmentWhileWorking,
    126 => TurnEnded { ending },
    127 => RetryRateLimited { seconds },
    128 => RetryOverloaded { seconds },
    129 => RetryNotConnected { seconds },
    130 => SwitchWhileWorking,
    131 => NotOffered,
    132 => FailedBecause { reason },
    133 => Recorded { text },
    134 => RunningLimit,
    135 => RuntimeAnswers,
    136 => StopRuntimeRefused { code },
    137 => Observed { kind },
    138 => PageMessageTooLarge { bytes, max },
    139 => PageOtherBuild { theirs, ours },
    140 => NotLoaded,
    141 => SummaryLaunchFailed,
    160 => OutputUnavailable,
    161 => OutputMissing { missing },
    162 => EventsUnreadable,
    163 => DispatchRefused { refusal },
    164 => HistoryNotLoaded,
    200 => LocalModelRefused { fault },
    201 => LocalModelFacts { name, bytes, architecture, parameters, trained, context },
    202 => LocalModelLoading { read, total, seconds },
}

impl From<crate::environment::Blocked> for Phrase {
    fn from(b: crate::environment::Blocked) -> Phrase {
        match b {
            crate::environment::Blocked::FolderGone { name } => Phrase::FolderGone { name },
            crate::environment::Blocked::FoldersUnsupported => Phrase::FoldersUnsupported,
        }
    }
}

impl From<Phrase> for Wire {
    fn from(p: Phrase) -> Wire {
        encode(&p)
    }
}

impl TryFrom<Wire> for Phrase {
    type Error = WireError;
    fn try_from(w: Wire) -> Result<Phrase, WireError> {
        decode(w)
    }
}

impl Phrase {
    /// What the page is told of a refusal by the core.
    pub fn rejected(rejection: &Rejection) -> Phrase {
        Phrase::RequestRejected {
            rejection: rejection.kind(),
            limit: rejection.limit(),
        }
    }

    /// What the profile form says about a local model: the facts read from
    /// its header and the context it is loaded with. The controller builds
    /// it; the page only words it.
    pub fn local_model_facts(file: &LocalFile, sampling: &Sampling) -> Phrase {
        Phrase::LocalModelFacts {
            name: file.name.clone(),
            bytes: file.size,
            architecture: file.architecture.clone(),
            parameters: file.parameters,
            trained: file.context_length,
            context: sampling.context_tokens,
        }
    }

    /// [`Phrase::local_model_facts`] of a local profile's provider; `None`
    /// for other providers and for a spec that does not decode.
    pub fn local_facts(provider: &Provider) -> Option<Phrase> {
        let model = provider.local_model()?.ok()?;
        Some(Phrase::local_model_facts(&model.file, &model.sampling))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_profile_says_its_header_facts() {
        use crate::profile::LocalModel;
        let model = LocalModel {
            file: LocalFile {
                name: "tiny.gguf".into(),
                size: 270_000,
                stored_as: "3f2a-tiny.gguf".into(),
                architecture: "llama".into(),
                parameters: 120_000,
                context_length: 32_768,
                model_name: None,
            },
            sampling: Sampling::for_model(32_768),
        };
        let facts = Phrase::LocalModelFacts {
            name: "tiny.gguf".into(),
            bytes: 270_000,
            architecture: "llama".into(),
            parameters: 120_000,
            trained: 32_768,
            context: 4096,
        };
        assert_eq!(
            Phrase::local_model_facts(&model.file, &model.sampling),
            facts
        );
        assert_eq!(Phrase::local_facts(&model.provider()), Some(facts));
        assert_eq!(Phrase::local_facts(&Provider::BuiltIn), None);
        let unreadable = Provider::Local {
            name: "x".into(),
            spec: "{".into(),
        };
        assert_eq!(Phrase::local_facts(&unreadable), None);
    }

    /// The continuation prompt's English for a row is the phrase's English,
    /// not a second wording; anything else is not row evidence.
    #[test]
    fn row_evidence_english_is_the_phrases_english() {
        let rows = [
            Phrase::NoMessagesYet,
            Phrase::TurnsRepliesLost { turns: 3, lost: 1 },
            Phrase::TurnsSomeUnreadable { turns: 2 },
            Phrase::TurnsRecorded { turns: 2 },
            Phrase::WorkspaceThere,
            Phrase::WorkspaceThereEntries { entries: 5 },
            Phrase::WorkspaceGone,
            Phrase::NoWorkspaceYet,
            Phrase::NotChecked,
            Phrase::NoStoredKey,
            Phrase::KeysPresent { total: 2 },
            Phrase::KeysMissing {
                missing: 1,
                total: 2,
            },
            Phrase::NoRuntimeRan,
            Phrase::RuntimeAttached,
            Phrase::CommandMayHaveStarted,
            Phrase::RuntimeStopped,
            Phrase::TabAttached,
            Phrase::TabNotAttached,
        ];
        for p in rows {
            assert_eq!(row_evidence_english(&p), Some(p.to_string()), "{p:?}");
        }
        assert_eq!(row_evidence_english(&Phrase::SummaryArchived), None);
    }

    #[test]
    fn the_english_rendering_is_what_the_tests_expect() {
        assert_eq!(
            Phrase::TurnsRecorded { turns: 2 }.to_string(),
            "2 turns recorded in the journal"
        );
        assert_eq!(
            Phrase::WorkspaceThereEntries { entries: 3 }.to_string(),
            "the workspace folder is there (3 entries)"
        );
        assert_eq!(
            Phrase::KeysMissing {
                missing: 1,
                total: 2
            }
            .to_string(),
            "stored keys missing: 1 of 2"
        );
        assert_eq!(
            Phrase::WaitOrStop { starting: true }.to_string(),
            "Recovering: starting the session… Wait for it, or press Stop."
        );
        assert_eq!(
            Phrase::Storage {
                persisted: false,
                used: 10,
                quota: 100
            }
            .to_string(),
            "best-effort storage (the browser may clear it under pressure); 10 of 100 bytes used"
        );
        assert_eq!(
            Phrase::UncertainCommand {
                line: "sleep 60".into(),
                outcome: Outcome::MayHaveStarted,
                verdict: None,
                reissued: false
            }
            .to_string(),
            "`sleep 60` may have started — check before repeating it"
        );
        assert_eq!(
            Phrase::Refused {
                refusal: Refusal::Archived
            }
            .to_string(),
            "the session is archived; Unarchive it first"
        );
        assert_eq!(
            Phrase::Cause {
                cause: FailureCause::AgentFailed {
                    detail: "HTTP 500".into()
                }
            }
            .to_string(),
            "the turn failed: HTTP 500"
        );
        assert_eq!(
            Phrase::ActionNotPossible {
                action: Action::Resume,
                reason: Box::new(Phrase::NeverRan)
            }
            .to_string(),
            "Resume is not possible now: this session has never run, so there is nothing to resume; send a message"
        );
        assert_eq!(
            Phrase::ExportedWithGaps {
                unreadable: 2,
                missing: 0
            }
            .to_string(),
            "Exported, but 2 unreadable journal values were left out."
        );
    }

    #[test]
    fn phrases_cross_the_wire_as_they_are() {
        let p = Phrase::ActionNotPossible {
            action: Action::Archive,
            reason: Box::new(Phrase::WaitOrStop { starting: false }),
        };
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<Phrase>(&json).unwrap(), p);
        let j = Phrase::Journal {
            fault: JournalFault::QuotaExceeded,
        };
        let json = serde_json::to_string(&j).unwrap();
        assert_eq!(serde_json::from_str::<Phrase>(&json).unwrap(), j);
    }
}
