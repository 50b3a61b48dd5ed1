//! The durable record of a session's lifecycle: launches, resumes,
//! failures with their causes, archive, verdicts. The journal holds it
//! ([`crate::journal::JournalRecord::Session`]); [`crate::session::Sessions`]
//! emits it and folds it back after a restart.

use lifeline_decode::Decode;
use lifeline_encode::Encode;
use serde::{Deserialize, Serialize};

use crate::environment::Environment;
use crate::id::{
    CommandId, CredentialId, ErrorStamp, ExecutionId, Generation, ProfileId, RuntimeId, SessionId,
    StartupAttemptId, WorkspaceId,
};
use crate::profile::{CredentialFailure, ProfileBlock, ProfileRef};

/// Why a session is being started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// A first launch, or Start fresh: uses the session's selected profile.
    Launch,
    /// Resume the retained execution: uses the profile recorded for it.
    Resume,
}

/// What led to a resume; kept on a failure even when an internal retry
/// failed for another reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum ResumeCause {
    /// The user pressed Resume.
    User,
    /// A prompt arrived for a stopped session (lazy resume).
    Prompt,
    /// The controller started and found the session bound but detached
    /// (automatic resume; the same presentation and busy state as a manual
    /// one).
    Automatic,
}

/// Why rejoining a retained execution failed, as classified by the shell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LoadError {
    /// The execution's backend cannot be rejoined at all.
    Unsupported,
    /// The retained runtime does not advertise reattachment.
    CapabilityAbsent,
    /// The journal confirms the retained runtime generation is gone.
    UnknownSession,
    Timeout,
    Cancelled,
    Auth,
    Transport {
        detail: String,
    },
    Unclassified {
        detail: String,
    },
}

impl LoadError {
    /// Only positive classifications permit launching a new execution in
    /// place of the retained one; anything else returns the load error.
    pub fn permits_fallback(&self) -> bool {
        matches!(
            self,
            LoadError::Unsupported | LoadError::CapabilityAbsent | LoadError::UnknownSession
        )
    }
}

impl core::fmt::Display for LoadError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LoadError::Unsupported => f.write_str("the execution cannot be rejoined"),
            LoadError::CapabilityAbsent => f.write_str("the runtime cannot be reattached"),
            LoadError::UnknownSession => f.write_str("the runtime of this session is gone"),
            LoadError::Timeout => f.write_str("the runtime did not answer in time"),
            LoadError::Cancelled => f.write_str("the resume was cancelled"),
            LoadError::Auth => f.write_str("the runtime refused the session's identity"),
            LoadError::Transport { detail } => {
                write!(f, "the runtime could not be reached: {detail}")
            }
            LoadError::Unclassified { detail } => write!(f, "rejoining failed: {detail}"),
        }
    }
}

/// Why a launch failed in the shell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LaunchFailure {
    /// The retained workspace is not there. It is never recreated empty.
    WorkspaceMissing,
    /// The session's local folder cannot be used now: the browser needs the
    /// user's permission again, or no longer knows the folder.
    Folder {
        name: String,
        access: crate::environment::FolderAccess,
    },
    /// The runtime did not start; `detail` is the browser's words (or, in
    /// records written before `Refused`, the journal's English refusal).
    Failed { detail: String },
    /// The journal refused to start the runtime (`code`:
    /// [`crate::message::RejectionKind::as_str`]).
    Refused { code: String },
}

/// What went wrong, durably, with what the user can do about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FailureCause {
    ProfileBlocked {
        block: ProfileBlock,
    },
    ProfileDeleted,
    Credential {
        credential: CredentialId,
        failure: CredentialFailure,
    },
    Launch {
        failure: LaunchFailure,
    },
    Load {
        error: LoadError,
    },
    CleanupFailed {
        detail: String,
    },
    /// A turn failed (a provider error, a budget): recoverable, resources kept.
    AgentFailed {
        detail: String,
    },
    /// The execution's runtime worker stopped on its own (a crash). The
    /// workspace is kept; Resume starts a new generation on it.
    RuntimeLost {
        /// The browser's words, or the English of `end`.
        detail: String,
        /// How the app learned it, when it did (the page words it);
        /// records written before it have none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        end: Option<RuntimeEnd>,
    },
}

/// How the app learned that a session's runtime ended, when it was not
/// the browser's report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeEnd {
    /// The worker behind its port ended (its lock released, its port
    /// closed).
    WorkerEnded,
    /// The journal retired its generation.
    Retired,
    /// The journal records its generation gone.
    Gone,
    /// The journal does not know its generation.
    Unknown,
}

impl RuntimeEnd {
    pub const ALL: [RuntimeEnd; 4] = [
        RuntimeEnd::WorkerEnded,
        RuntimeEnd::Retired,
        RuntimeEnd::Gone,
        RuntimeEnd::Unknown,
    ];
}

impl core::fmt::Display for RuntimeEnd {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            RuntimeEnd::WorkerEnded => "its worker ended",
            RuntimeEnd::Retired => "the journal retired it",
            RuntimeEnd::Gone => "the journal records it gone",
            RuntimeEnd::Unknown => "the journal does not know it",
        })
    }
}

impl core::fmt::Display for FailureCause {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            FailureCause::ProfileBlocked { block } => block.fmt(f),
            FailureCause::ProfileDeleted => f.write_str(
                "the selected profile was deleted; choose another profile for this session",
            ),
            FailureCause::Credential { credential, failure } => match failure {
                CredentialFailure::Missing => write!(
                    f,
                    "credential {credential} that this session needs is missing; add the key again in Profiles, then resume"
                ),
                failure => write!(
                    f,
                    "credential {credential} could not be read ({failure}); enter the key again in Profiles, then resume"
                ),
            },
            FailureCause::Launch { failure: LaunchFailure::WorkspaceMissing } => f.write_str(
                "the session's workspace is gone from this browser's storage; it was not recreated. Start fresh to continue in a new workspace",
            ),
            FailureCause::Launch {
                failure: LaunchFailure::Folder { name, access },
            } => match access {
                crate::environment::FolderAccess::NeedsPermission => write!(
                    f,
                    "the browser needs your permission again to use the folder \u{201c}{name}\u{201d}; press Resume and allow it"
                ),
                _ => write!(
                    f,
                    "the folder \u{201c}{name}\u{201d} is no longer available in this browser (moved, deleted or forgotten); Start fresh, or choose it again under Environment"
                ),
            },
            FailureCause::Launch { failure: LaunchFailure::Failed { detail } } => {
                write!(f, "the runtime could not start: {detail}")
            }
            FailureCause::Launch { failure: LaunchFailure::Refused { code } } => write!(
                f,
                "the runtime could not start: the journal refused it ({code}); Resume tries again"
            ),
            FailureCause::Load { error } => write!(f, "resume failed: {error}"),
            FailureCause::CleanupFailed { detail } => write!(
                f,
                "stopping did not finish: {detail}; the session's workspace is kept. Reload the page to stop the runtime"
            ),
            FailureCause::AgentFailed { detail } => write!(f, "the turn failed: {detail}"),
            FailureCause::RuntimeLost { detail, .. } => write!(
                f,
                "the runtime worker stopped ({detail}); the workspace is kept. Resume to continue in a new runtime"
            ),
        }
    }
}

/// Durable records of session lifecycles. The shell writes them to the
/// journal; [`crate::session::Sessions::recover`] folds them back after a restart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionRecord {
    Created {
        session: SessionId,
        workspace: WorkspaceId,
        environment: Environment,
        profile: ProfileId,
    },
    ProfileSelected {
        session: SessionId,
        profile: ProfileId,
    },
    /// The session token: the execution the session is bound to now.
    ExecutionStarted {
        session: SessionId,
        execution: ExecutionId,
        generation: Generation,
        runtime: RuntimeId,
        attempt: StartupAttemptId,
        profile: Option<ProfileRef>,
        resumed_from: Option<ExecutionId>,
        note: Option<String>,
        /// Where this execution runs (reference 000: recorded on each
        /// execution). Absent in journals from before it was recorded.
        #[serde(default)]
        environment: Option<Environment>,
    },
    /// A resume rejoined the retained execution itself.
    ExecutionRejoined {
        session: SessionId,
        execution: ExecutionId,
        generation: Generation,
        attempt: StartupAttemptId,
        /// The profile it runs with from now on.
        profile: Option<ProfileRef>,
    },
    /// A recoverable failure of the execution: its resources are retained.
    ExecutionFailed {
        stamp: ErrorStamp,
        session: SessionId,
        execution: ExecutionId,
        generation: Generation,
        cause: FailureCause,
    },
    /// A startup or resume attempt failed before dispatch.
    StartupFailed {
        stamp: ErrorStamp,
        session: SessionId,
        attempt: StartupAttemptId,
        execution: Option<ExecutionId>,
        purpose: Purpose,
        resume_cause: Option<ResumeCause>,
        cause: FailureCause,
    },
    /// An explicit cancellation: an outcome of its own, not a failure.
    StartupCancelled {
        session: SessionId,
        attempt: StartupAttemptId,
    },
    Archived {
        session: SessionId,
    },
    /// Archive undone: the session is back as it was left, its runtime
    /// stopped (archive stopped it), its workspace and history kept.
    Unarchived {
        session: SessionId,
    },
    /// Older journals only: a delete that kept the session's records.
    /// Deletes now write [`SessionRecord::Tombstone`].
    Deleted {
        session: SessionId,
        workspace_removed: bool,
    },
    /// Deleted for good. Written in the same transaction that removes the
    /// session's other records, outputs and artifacts from the journal, so
    /// only this stays: recovery, snapshots and followers fold it and never
    /// show the session again. `workspace` is the sandbox workspace still
    /// to remove from OPFS (`None` for a local folder the user opened,
    /// which is never touched); [`SessionRecord::WorkspaceRemoved`] says it
    /// was, and until then every start tries again.
    Tombstone {
        session: SessionId,
        workspace: Option<WorkspaceId>,
    },
    /// The deleted session's sandbox workspace is gone from OPFS.
    WorkspaceRemoved {
        session: SessionId,
    },
    /// The user's verdict on an uncertain command after checking it: done
    /// or not done. The command's own evidence is unchanged.
    Verdict {
        session: SessionId,
        command: CommandId,
        done: bool,
    },
    /// An uncertain command was deliberately run again under a new
    /// idempotency key, as `replacement`. Older journals only: the link is
    /// now part of the replacement's admission record
    /// ([`crate::command::CommandRecord::reissue_of`]), written in one batch.
    Reissued {
        session: SessionId,
        command: CommandId,
        replacement: CommandId,
    },
    /// Start fresh: the work goes on in `successor`; this session's
    /// evidence stays.
    Succeeded {
        session: SessionId,
        successor: SessionId,
    },
    /// The user named the session (until then its first prompt names it).
    Renamed {
        session: SessionId,
        title: String,
    },
}

impl SessionRecord {
    pub fn session(&self) -> SessionId {
        match self {
            SessionRecord::Created { session, .. }
            | SessionRecord::ProfileSelected { session, .. }
            | SessionRecord::ExecutionStarted { session, .. }
            | SessionRecord::ExecutionRejoined { session, .. }
            | SessionRecord::ExecutionFailed { session, .. }
            | SessionRecord::StartupFailed { session, .. }
            | SessionRecord::StartupCancelled { session, .. }
            | SessionRecord::Archived { session }
            | SessionRecord::Unarchived { session }
            | SessionRecord::Deleted { session, .. }
            | SessionRecord::Tombstone { session, .. }
            | SessionRecord::WorkspaceRemoved { session }
            | SessionRecord::Verdict { session, .. }
            | SessionRecord::Reissued { session, .. }
            | SessionRecord::Succeeded { session, .. }
            | SessionRecord::Renamed { session, .. } => *session,
        }
    }
}
