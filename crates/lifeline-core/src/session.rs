//! Sessions, executions and startup attempts: what a session keeps when a
//! turn fails, and how startup and resume attempts stay isolated
//! (reference 003; reference 004, requirement 007).
//!
//! A session (one conversation) runs in executions; each execution is one
//! runtime generation on the session's retained workspace. An *attempt* is
//! one try at starting or resuming a session. Attempts are process-local
//! (004: "attempt ownership is process-local"): a controller that restarts
//! forgets them and rebuilds the rest from the durable [`SessionRecord`]s.
//!
//! [`Sessions`] is sans-IO like the rest of the core: calls in
//! (`begin`, `handle_*`, `cancel`), [`SessionEffect`]s out (`poll_effect`).
//! The rules it keeps:
//!
//! * An attempt is registered — identity, cancel handle (its identity) and
//!   originating prompt — before any asynchronous launch or readiness work.
//! * Every `handle_*` is a continuation after a blocking step: it first
//!   checks that its attempt still owns the session and otherwise does
//!   nothing at all ([`Handled::Stale`]). So a late success cannot store a
//!   token or admit a prompt, and a late failure cannot write an error or
//!   stop a replacement.
//! * Cancellation invalidates the attempt first, then cancels its waits,
//!   then cancels the runtime it launched with bounded escalation, and stays
//!   pending until that owned cleanup settles. A cancelled prompt is dropped,
//!   never queued.
//! * Fallback from rejoining a retained execution to launching a new one
//!   happens only on a positive classification ([`LoadError::permits_fallback`]).
//! * A failed turn retains the workspace, the runtime and the credential
//!   references; only Delete removes a workspace, and only one Lifeline owns.
//! * Secrets are resolved at the launch checkpoint and nowhere earlier.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use crate::id::{
    CommandId, CredentialId, ErrorStamp, ExecutionId, Generation, IdError, IdMinter, Millis,
    ProfileId, RuntimeId, SessionId, StartupAttemptId, TurnId, WorkspaceId,
};
use crate::profile::{
    launch_environment, resolve_for_resume, AgentBudget, Capabilities, CredentialFailure,
    LaunchProfile, ProfileBlock, ProfileLookup, ProfileRef, Provider, Secret,
};

/// How long a launched runtime has to become ready.
pub const READINESS_TIMEOUT_MS: u64 = 15_000;
/// How long a runtime has to stop when asked before it is terminated.
pub const CANCEL_GRACE_MS: u64 = 2_000;
/// How long termination has before cleanup counts as failed.
pub const TERMINATE_GRACE_MS: u64 = 3_000;
/// How long a launch waits for a runtime whose launch acknowledgement was
/// lost to dial in before its outcome is called unknown and it is replaced.
pub const ADOPTION_TIMEOUT_MS: u64 = 5_000;
/// How long a rejoin waits for the retained runtime to dial back in.
pub const REJOIN_TIMEOUT_MS: u64 = 5_000;
/// Internal retries of a transport failure while rejoining a runtime.
pub const LOAD_RETRIES: u8 = 1;
/// Queued prompts per session.
pub const MAX_QUEUED_PROMPTS: usize = 32;

/// Lost launch acknowledgements (reference 001): a runtime generation the
/// journal assigned to `workspace` and still holds as current, which no
/// session binding names (`bound`), may be a launch whose acknowledgement
/// was lost — the controller died between recording it and hearing from it.
/// Before launching anything on the workspace, the shell looks for it: if it
/// answers it is adopted (the existing run is found); if not, its outcome is
/// reported as unknown and only then is it replaced. Never an unnoticed
/// second launch.
pub fn unacknowledged_launch(
    projection: &crate::projection::Projection,
    workspace: WorkspaceId,
    bound: Option<RuntimeId>,
) -> Option<(RuntimeId, Generation, ExecutionId)> {
    let lease = projection.workspaces.get(&workspace)?;
    let current = projection.leases.get(lease)?.current()?;
    (Some(current.runtime) != bound).then_some((
        current.runtime,
        current.generation,
        current.execution,
    ))
}

/// Whether the wait for a lost launch has its answer: `Some(true)` when it
/// dialed in (adopt it: the existing run is found), `Some(false)` when the
/// journal no longer holds it as its lease's current generation (nothing to
/// wait for), `None` while waiting, until [`AttemptTimer::Adoption`].
pub fn adoption_verdict(
    projection: &crate::projection::Projection,
    runtime: RuntimeId,
    generation: Generation,
    attached: bool,
) -> Option<bool> {
    match rejoin_verdict(projection, runtime, generation, attached) {
        Some(Ok(())) => Some(true),
        Some(Err(_)) => Some(false),
        None => None,
    }
}

/// Whether a rejoin of `runtime` at `generation` has its answer: the
/// retained runtime counts only while the journal holds it as its lease's
/// current generation and it is `attached`; a generation the journal holds
/// as replaced, retired or gone is a positive "unknown session" (which
/// permits a new launch on the same workspace). `None`: still waiting, until
/// [`AttemptTimer::Rejoin`] fires.
pub fn rejoin_verdict(
    projection: &crate::projection::Projection,
    runtime: RuntimeId,
    generation: Generation,
    attached: bool,
) -> Option<Result<(), LoadError>> {
    match projection.runtime(runtime) {
        Some((_, view))
            if view.generation == generation
                && view.status == crate::projection::RuntimeStatus::Current =>
        {
            attached.then_some(Ok(()))
        }
        _ => Some(Err(LoadError::UnknownSession)),
    }
}

pub use crate::environment::Environment;

/// Why a session is being started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// A first launch, or Start fresh: uses the session's selected profile.
    Launch,
    /// Resume the retained execution: uses the profile recorded for it.
    Resume,
}

/// What led to a resume; kept on a failure even when an internal retry
/// failed for another reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    Failed {
        detail: String,
    },
}

/// What went wrong, durably, with what the user can do about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
        detail: String,
    },
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
                CredentialFailure::Unreadable { detail } => write!(
                    f,
                    "credential {credential} could not be read ({detail}); enter the key again in Profiles, then resume"
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
            FailureCause::Load { error } => write!(f, "resume failed: {error}"),
            FailureCause::CleanupFailed { detail } => write!(
                f,
                "stopping did not finish: {detail}; the session's workspace is kept. Reload the page to stop the runtime"
            ),
            FailureCause::AgentFailed { detail } => write!(f, "the turn failed: {detail}"),
            FailureCause::RuntimeLost { detail } => write!(
                f,
                "the runtime worker stopped ({detail}); the workspace is kept. Resume to continue in a new runtime"
            ),
        }
    }
}

/// Durable records of session lifecycles. The shell writes them to the
/// journal; [`Sessions::recover`] folds them back after a restart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    Deleted {
        session: SessionId,
        workspace_removed: bool,
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
            | SessionRecord::Verdict { session, .. }
            | SessionRecord::Reissued { session, .. }
            | SessionRecord::Succeeded { session, .. } => *session,
        }
    }
}

/// The execution a session is bound to (its stored token).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionBinding {
    pub execution: ExecutionId,
    pub generation: Generation,
    pub runtime: RuntimeId,
    pub profile: Option<ProfileRef>,
}

/// A failure shown with recovery controls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub stamp: ErrorStamp,
    pub attempt: Option<StartupAttemptId>,
    pub execution: Option<ExecutionId>,
    pub cause: FailureCause,
}

/// Where a session stands, as published to the UI.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SessionState {
    /// Never launched.
    New,
    Starting {
        attempt: StartupAttemptId,
        purpose: Purpose,
    },
    Running,
    /// Bound to a retained execution, but this controller (restarted) holds
    /// none of what it ran with: the next message or Resume rejoins it,
    /// through the launch checkpoint again.
    Detached,
    /// Cancelled while starting; pending until owned cleanup settles.
    Cancelling {
        attempt: StartupAttemptId,
    },
    Cancelled,
    Failed(Failure),
    Archived,
}

/// Timers the shell sets for an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttemptTimer {
    Readiness,
    /// The retained runtime did not dial back in time: a timeout, never a
    /// fallback to a new launch.
    Rejoin,
    /// A lost launch did not dial in: its outcome is unknown and a new
    /// generation replaces it ([`SessionEffect::ReplaceLostLaunch`]).
    Adoption,
    CancelGrace,
    TerminateGrace,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionEffect {
    /// Look the profile up in the profile store; answer with
    /// [`Sessions::handle_profile`].
    LookupProfile {
        attempt: StartupAttemptId,
        profile: ProfileId,
    },
    /// The wait for a lost launch ended without it dialing in: start a new
    /// generation (after saying the earlier one's outcome is unknown).
    ReplaceLostLaunch {
        attempt: StartupAttemptId,
        runtime: RuntimeId,
        generation: Generation,
    },
    /// Try to rejoin the retained execution's live runtime; answer with
    /// [`Sessions::handle_loaded`].
    LoadExecution {
        attempt: StartupAttemptId,
        execution: ExecutionId,
        generation: Generation,
        runtime: RuntimeId,
    },
    /// The launch checkpoint: decrypt these credentials now and not before;
    /// answer with [`Sessions::handle_credentials`].
    ResolveCredentials {
        attempt: StartupAttemptId,
        credentials: Vec<CredentialId>,
    },
    /// Start a runtime on the session's retained workspace; answer with
    /// [`Sessions::handle_launched`].
    Launch {
        attempt: StartupAttemptId,
        session: SessionId,
        workspace: WorkspaceId,
        environment: Environment,
        /// The workspace must already exist (a resume): never create it.
        existing_workspace: bool,
        profile: Option<ProfileRef>,
        capabilities: Capabilities,
        budget: AgentBudget,
        /// Environment variables for commands, secrets included where the
        /// profile maps them. Held in memory only.
        env: Vec<(String, Secret)>,
        /// The provider's key, for the controller's own requests.
        api_key: Option<Secret>,
    },
    SetTimer {
        attempt: StartupAttemptId,
        timer: AttemptTimer,
        at: Millis,
    },
    /// Stop waiting for anything on behalf of this attempt.
    CancelWaits { attempt: StartupAttemptId },
    /// Ask the runtime this attempt launched to stop (captured identity).
    CancelRuntime {
        attempt: StartupAttemptId,
        execution: ExecutionId,
        generation: Generation,
        runtime: RuntimeId,
    },
    /// Escalation: terminate the worker. Answer with
    /// [`Sessions::handle_cleanup`].
    TerminateRuntime {
        attempt: Option<StartupAttemptId>,
        execution: ExecutionId,
        generation: Generation,
        runtime: RuntimeId,
    },
    /// Write to the journal. `ExecutionStarted` and `ExecutionRejoined` are
    /// answered with [`Sessions::handle_recorded`].
    Record(SessionRecord),
    /// Give the agent this prompt in this execution.
    AdmitPrompt {
        session: SessionId,
        turn: TurnId,
        execution: ExecutionId,
        generation: Generation,
    },
    Publish {
        session: SessionId,
        state: SessionState,
    },
    /// These prompts will never run here (their start failed or was
    /// stopped, or the session was archived, deleted or succeeded by
    /// another): give them back to the user.
    ReturnPrompts {
        session: SessionId,
        turns: Vec<TurnId>,
    },
    /// The session now runs in `binding`: keep `prepared` for its turns and,
    /// for a rejoined runtime, give it `prepared.env` for later commands.
    Activate {
        session: SessionId,
        binding: ExecutionBinding,
        prepared: Prepared,
        rejoined: bool,
    },
    /// Delete the workspace folder. Only for a Lifeline-owned workspace.
    RemoveWorkspace {
        session: SessionId,
        workspace: WorkspaceId,
    },
}

/// What a continuation did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handled {
    Applied,
    /// Its attempt no longer owns the session; nothing happened.
    Stale,
}

/// Why a request was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    UnknownSession,
    Archived,
    /// Deleted for good.
    Deleted,
    /// Another attempt owns the session.
    Busy {
        attempt: StartupAttemptId,
    },
    /// A cancellation's cleanup has not settled; a new attempt may start
    /// only after it has.
    CancellationPending {
        attempt: StartupAttemptId,
    },
    /// Resume needs a retained execution.
    NothingToResume,
    QueueFull,
    AlreadyRunning,
    /// A relaunch waits until the running turn has ended.
    TurnRunning,
}

impl core::fmt::Display for Refusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Refusal::UnknownSession => f.write_str("there is no such session"),
            Refusal::Archived => f.write_str("the session is archived; Unarchive it first"),
            Refusal::Deleted => f.write_str("the session was deleted; start a new one"),
            Refusal::Busy { .. } => f.write_str("the session is already starting"),
            Refusal::CancellationPending { .. } => f.write_str(
                "the previous start is still being cancelled; try again when it has stopped",
            ),
            Refusal::NothingToResume => {
                f.write_str("the session has nothing to resume; send a message to start it")
            }
            Refusal::QueueFull => write!(f, "at most {MAX_QUEUED_PROMPTS} messages can wait"),
            Refusal::AlreadyRunning => f.write_str("the session is already running"),
            Refusal::TurnRunning => f.write_str(
                "the agent is working on a message; the new profile applies once you stop it or it ends",
            ),
        }
    }
}

/// What became of a prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptDisposition {
    /// Given to the running execution ([`SessionEffect::AdmitPrompt`]).
    Admitted,
    /// Waiting behind the active turn or a start.
    Queued { position: usize },
    /// The session was not running: this prompt started an attempt and is
    /// admitted only if that attempt succeeds.
    Starting { attempt: StartupAttemptId },
}

/// What cancel did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CancelOutcome {
    /// Pending until the attempt's cleanup settles.
    Cancelling {
        attempt: StartupAttemptId,
    },
    /// Nothing had been launched; cancelled at once.
    Cancelled {
        attempt: StartupAttemptId,
    },
    AlreadyCancelling {
        attempt: StartupAttemptId,
    },
    /// No attempt: the caller stops the running turn instead.
    NoAttempt,
}

/// A snapshot for tests and the status line: what 004 asks tests to trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    pub accepted_prompts: Vec<TurnId>,
    pub token: Option<(ExecutionId, Generation)>,
    pub active_turn: Option<TurnId>,
    pub state: SessionState,
    pub owner: Option<StartupAttemptId>,
    pub queued: Vec<TurnId>,
}

/// What the launch checkpoint produced: everything an execution runs with,
/// secrets included. Held only in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prepared {
    pub profile: Option<ProfileRef>,
    pub provider: Provider,
    pub capabilities: Capabilities,
    pub budget: AgentBudget,
    pub env: Vec<(String, Secret)>,
    pub api_key: Option<Secret>,
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Profile,
    Credentials {
        launch: LaunchProfile,
    },
    Loading {
        retries_left: u8,
        prepared: Prepared,
        /// When the wait for the retained runtime ends.
        deadline: Millis,
    },
    Launching {
        prepared: Prepared,
        resumed_from: Option<ExecutionId>,
    },
    Ready {
        launched: ExecutionBinding,
        prepared: Prepared,
        resumed_from: Option<ExecutionId>,
    },
    Persisting {
        rejoined: bool,
        binding: ExecutionBinding,
        prepared: Prepared,
    },
}

#[derive(Clone, Debug)]
struct Attempt {
    id: StartupAttemptId,
    purpose: Purpose,
    resume_cause: Option<ResumeCause>,
    prompt: Option<TurnId>,
    phase: Phase,
    /// A runtime this attempt launched and so owns the cleanup of.
    launched: Option<ExecutionBinding>,
    /// A lost launch this attempt waits for before launching anew, and
    /// when the wait ends.
    adopting: Option<(RuntimeId, Generation, Millis)>,
}

#[derive(Clone, Debug)]
struct Cancelling {
    id: StartupAttemptId,
    runtime: ExecutionBinding,
    terminated: bool,
}

#[derive(Clone, Debug)]
struct Entry {
    workspace: WorkspaceId,
    environment: Environment,
    selected: ProfileId,
    binding: Option<ExecutionBinding>,
    state: SessionState,
    attempt: Option<Attempt>,
    cancelling: Option<Cancelling>,
    queue: VecDeque<TurnId>,
    accepted: Vec<TurnId>,
    active_turn: Option<TurnId>,
    auto_run: bool,
    /// Deleted for good: never brought back.
    deleted: bool,
}

/// Every session's lifecycle in this controller.
#[derive(Debug)]
pub struct Sessions {
    entries: BTreeMap<SessionId, Entry>,
    effects: VecDeque<SessionEffect>,
    minter: IdMinter,
    used: std::collections::BTreeSet<u128>,
}

impl Sessions {
    /// `entropy` should be fresh random bytes; tests pass a seed.
    pub fn new(entropy: &[u8]) -> Sessions {
        Sessions {
            entries: BTreeMap::new(),
            effects: VecDeque::new(),
            minter: IdMinter::new(entropy, 0x5e55),
            used: Default::default(),
        }
    }

    /// Rebuilds from durable records after a controller restart. Attempts
    /// are not durable: one that was in flight is simply gone, and the
    /// session shows what the records prove.
    pub fn recover<'a>(
        entropy: &[u8],
        records: impl IntoIterator<Item = &'a SessionRecord>,
    ) -> Sessions {
        let mut s = Sessions::new(entropy);
        for record in records {
            s.fold(record);
        }
        s
    }

    fn fold(&mut self, record: &SessionRecord) {
        match record {
            SessionRecord::Created {
                session,
                workspace,
                environment,
                profile,
            } => {
                self.entries.entry(*session).or_insert_with(|| Entry {
                    workspace: *workspace,
                    environment: environment.clone(),
                    selected: *profile,
                    binding: None,
                    state: SessionState::New,
                    attempt: None,
                    cancelling: None,
                    queue: VecDeque::new(),
                    accepted: Vec::new(),
                    active_turn: None,
                    auto_run: true,
                    deleted: false,
                });
            }
            record => {
                let Some(e) = self.entries.get_mut(&record.session()) else {
                    return;
                };
                match record {
                    SessionRecord::Created { .. } => {}
                    SessionRecord::ProfileSelected { profile, .. } => e.selected = *profile,
                    SessionRecord::ExecutionStarted {
                        execution,
                        generation,
                        runtime,
                        attempt,
                        profile,
                        ..
                    } => {
                        self.used.insert(attempt.as_u128());
                        e.binding = Some(ExecutionBinding {
                            execution: *execution,
                            generation: *generation,
                            runtime: *runtime,
                            profile: profile.clone(),
                        });
                        // Live, these are applied by handle_recorded; folded
                        // at recovery they mean "bound, but this process
                        // holds none of what it ran with".
                        e.state = SessionState::Detached;
                    }
                    SessionRecord::ExecutionRejoined {
                        attempt,
                        execution,
                        profile,
                        ..
                    } => {
                        self.used.insert(attempt.as_u128());
                        if let Some(b) = e.binding.as_mut().filter(|b| b.execution == *execution) {
                            b.profile = profile.clone();
                        }
                        e.state = SessionState::Detached;
                    }
                    SessionRecord::ExecutionFailed {
                        stamp,
                        execution,
                        cause,
                        ..
                    } => {
                        self.used.insert(stamp.as_u128());
                        e.state = SessionState::Failed(Failure {
                            stamp: *stamp,
                            attempt: None,
                            execution: Some(*execution),
                            cause: cause.clone(),
                        });
                    }
                    SessionRecord::StartupFailed {
                        stamp,
                        attempt,
                        execution,
                        cause,
                        ..
                    } => {
                        self.used.insert(stamp.as_u128());
                        self.used.insert(attempt.as_u128());
                        e.state = SessionState::Failed(Failure {
                            stamp: *stamp,
                            attempt: Some(*attempt),
                            execution: *execution,
                            cause: cause.clone(),
                        });
                    }
                    SessionRecord::StartupCancelled { attempt, .. } => {
                        self.used.insert(attempt.as_u128());
                        e.state = SessionState::Cancelled;
                    }
                    SessionRecord::Archived { .. } => e.state = SessionState::Archived,
                    SessionRecord::Deleted { .. } => {
                        e.state = SessionState::Archived;
                        e.deleted = true;
                    }
                    SessionRecord::Unarchived { .. } if !e.deleted => {
                        // Archive stopped its runtime: a bound session is
                        // detached (the next message or Resume brings it
                        // up on its workspace), an unbound one is new.
                        e.state = if e.binding.is_some() {
                            SessionState::Detached
                        } else {
                            SessionState::New
                        };
                    }
                    SessionRecord::Unarchived { .. } => {}
                    SessionRecord::Verdict { .. }
                    | SessionRecord::Reissued { .. }
                    | SessionRecord::Succeeded { .. } => {}
                }
            }
        }
    }

    pub fn poll_effect(&mut self) -> Option<SessionEffect> {
        self.effects.pop_front()
    }

    pub fn drain_effects(&mut self) -> Vec<SessionEffect> {
        self.effects.drain(..).collect()
    }

    pub fn state(&self, session: SessionId) -> Option<&SessionState> {
        self.entries.get(&session).map(|e| &e.state)
    }

    pub fn binding(&self, session: SessionId) -> Option<&ExecutionBinding> {
        self.entries.get(&session)?.binding.as_ref()
    }

    /// The profile new launches (not resumes) of the session use.
    pub fn selected_profile(&self, session: SessionId) -> Option<ProfileId> {
        self.entries.get(&session).map(|e| e.selected)
    }

    pub fn environment(&self, session: SessionId) -> Option<&Environment> {
        self.entries.get(&session).map(|e| &e.environment)
    }

    pub fn trace(&self, session: SessionId) -> Option<Trace> {
        let e = self.entries.get(&session)?;
        Some(Trace {
            accepted_prompts: e.accepted.clone(),
            token: e.binding.as_ref().map(|b| (b.execution, b.generation)),
            active_turn: e.active_turn,
            state: e.state.clone(),
            owner: e.attempt.as_ref().map(|a| a.id),
            queued: e.queue.iter().copied().collect(),
        })
    }

    fn mint<T>(&mut self, now: Millis, make: fn(u128) -> Result<T, IdError>) -> T {
        loop {
            let raw = self.minter.mint_raw(now);
            if self.used.insert(raw) {
                if let Ok(id) = make(raw) {
                    return id;
                }
            }
        }
    }

    fn record(&mut self, record: SessionRecord) {
        self.fold(&record);
        self.effects.push_back(SessionEffect::Record(record));
    }

    fn publish(&mut self, session: SessionId) {
        if let Some(e) = self.entries.get(&session) {
            self.effects.push_back(SessionEffect::Publish {
                session,
                state: e.state.clone(),
            });
        }
    }

    /// Creates a session record. Identities come from the caller (the
    /// client chose them), so a repeat is harmless.
    pub fn create(
        &mut self,
        session: SessionId,
        workspace: WorkspaceId,
        environment: Environment,
        profile: ProfileId,
    ) {
        if self.entries.contains_key(&session) {
            return;
        }
        self.record(SessionRecord::Created {
            session,
            workspace,
            environment,
            profile,
        });
        self.publish(session);
    }

    /// The profile new launches (not resumes) of this session use.
    pub fn select_profile(
        &mut self,
        session: SessionId,
        profile: ProfileId,
    ) -> Result<(), Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        if e.state == SessionState::Archived {
            return Err(Refusal::Archived);
        }
        if e.selected != profile {
            self.record(SessionRecord::ProfileSelected { session, profile });
        }
        Ok(())
    }

    pub fn set_auto_run(&mut self, session: SessionId, on: bool) {
        if let Some(e) = self.entries.get_mut(&session) {
            e.auto_run = on;
        }
    }

    /// Registers an attempt before any asynchronous work and asks for the
    /// profile it needs.
    pub fn begin(
        &mut self,
        session: SessionId,
        purpose: Purpose,
        resume_cause: Option<ResumeCause>,
        prompt: Option<TurnId>,
        now: Millis,
    ) -> Result<StartupAttemptId, Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        match &e.state {
            SessionState::Archived => return Err(Refusal::Archived),
            // A running session may be relaunched (another profile) on its
            // retained workspace, between turns; it cannot be resumed.
            SessionState::Running if purpose == Purpose::Resume => {
                return Err(Refusal::AlreadyRunning)
            }
            SessionState::Running if e.active_turn.is_some() => return Err(Refusal::TurnRunning),
            _ => {}
        }
        if let Some(c) = &e.cancelling {
            return Err(Refusal::CancellationPending { attempt: c.id });
        }
        if let Some(a) = &e.attempt {
            return Err(Refusal::Busy { attempt: a.id });
        }
        if purpose == Purpose::Resume && e.binding.is_none() {
            return Err(Refusal::NothingToResume);
        }
        let profile = match (purpose, &e.binding) {
            // Criterion 6: the profile recorded for the retained execution,
            // even if the session has since selected another.
            (Purpose::Resume, Some(b)) => b.profile.as_ref().map(|p| p.id),
            _ => Some(e.selected),
        };
        let id = self.mint(now, StartupAttemptId::from_u128);
        let e = self.entries.get_mut(&session).expect("checked above");
        e.attempt = Some(Attempt {
            id,
            purpose,
            resume_cause,
            prompt,
            phase: Phase::Profile,
            launched: None,
            adopting: None,
        });
        e.state = SessionState::Starting {
            attempt: id,
            purpose,
        };
        self.publish(session);
        match profile {
            Some(profile) => self.effects.push_back(SessionEffect::LookupProfile {
                attempt: id,
                profile,
            }),
            // The execution launched without a profile: nothing to look up.
            None => self.after_profile(session, id, ProfileLookup::Deleted, None, now),
        }
        Ok(id)
    }

    /// The session this attempt owns, if it still owns one.
    fn owner_of(&self, attempt: StartupAttemptId) -> Option<SessionId> {
        self.entries
            .iter()
            .find(|(_, e)| e.attempt.as_ref().is_some_and(|a| a.id == attempt))
            .map(|(s, _)| *s)
    }

    fn attempt_mut(&mut self, session: SessionId) -> &mut Attempt {
        self.entries
            .get_mut(&session)
            .and_then(|e| e.attempt.as_mut())
            .expect("caller checked ownership")
    }

    pub fn handle_profile(
        &mut self,
        attempt: StartupAttemptId,
        lookup: ProfileLookup,
        now: Millis,
    ) -> Handled {
        let Some(session) = self.owner_of(attempt) else {
            return Handled::Stale;
        };
        if self.attempt_mut(session).phase != Phase::Profile {
            return Handled::Stale;
        }
        let recorded = self.entries[&session]
            .binding
            .as_ref()
            .and_then(|b| b.profile.clone());
        self.after_profile(session, attempt, lookup, recorded, now);
        Handled::Applied
    }

    fn after_profile(
        &mut self,
        session: SessionId,
        attempt: StartupAttemptId,
        lookup: ProfileLookup,
        recorded: Option<ProfileRef>,
        now: Millis,
    ) {
        let purpose = self.attempt_mut(session).purpose;
        let launch = match purpose {
            Purpose::Resume => match resolve_for_resume(recorded.as_ref(), lookup) {
                Ok(l) => l,
                Err(block) => {
                    self.fail(session, FailureCause::ProfileBlocked { block }, now);
                    return;
                }
            },
            Purpose::Launch => match lookup {
                ProfileLookup::Found(p) => {
                    match resolve_for_resume(Some(&p.reference()), ProfileLookup::Found(p)) {
                        Ok(l) => l,
                        Err(block) => {
                            self.fail(session, FailureCause::ProfileBlocked { block }, now);
                            return;
                        }
                    }
                }
                ProfileLookup::Deleted => {
                    self.fail(session, FailureCause::ProfileDeleted, now);
                    return;
                }
                ProfileLookup::Failed { detail } => {
                    self.fail(
                        session,
                        FailureCause::ProfileBlocked {
                            block: ProfileBlock::Unreadable { detail },
                        },
                        now,
                    );
                    return;
                }
            },
        };
        self.checkpoint(session, attempt, launch);
    }

    /// The launch checkpoint: from here on secrets may be read. A resume
    /// passes it too, so a rejoined execution runs with the recorded
    /// profile's current definitions (criterion 6).
    fn checkpoint(&mut self, session: SessionId, attempt: StartupAttemptId, launch: LaunchProfile) {
        let mut credentials: Vec<CredentialId> = Vec::new();
        if let Some(key) = launch.api_key {
            credentials.push(key);
        }
        for var in &launch.env {
            if let crate::profile::EnvValue::Secret(id) = var.value {
                if !credentials.contains(&id) {
                    credentials.push(id);
                }
            }
        }
        self.attempt_mut(session).phase = Phase::Credentials { launch };
        self.effects.push_back(SessionEffect::ResolveCredentials {
            attempt,
            credentials,
        });
    }

    /// The answer to [`SessionEffect::ResolveCredentials`]: one result per
    /// credential asked for. Any failure fails the attempt; nothing is ever
    /// substituted.
    pub fn handle_credentials(
        &mut self,
        attempt: StartupAttemptId,
        resolved: Vec<(CredentialId, Result<Secret, CredentialFailure>)>,
        now: Millis,
    ) -> Handled {
        let Some(session) = self.owner_of(attempt) else {
            return Handled::Stale;
        };
        let Phase::Credentials { launch } = self.attempt_mut(session).phase.clone() else {
            return Handled::Stale;
        };
        let mut secrets = Vec::new();
        for (credential, result) in resolved {
            match result {
                Ok(secret) => secrets.push((credential, secret)),
                Err(failure) => {
                    self.fail(
                        session,
                        FailureCause::Credential {
                            credential,
                            failure,
                        },
                        now,
                    );
                    return Handled::Applied;
                }
            }
        }
        let missing = |credential| FailureCause::Credential {
            credential,
            failure: CredentialFailure::Missing,
        };
        let api_key = match launch.api_key {
            Some(id) => match secrets.iter().find(|(c, _)| *c == id) {
                Some((_, s)) => Some(s.clone()),
                None => {
                    self.fail(session, missing(id), now);
                    return Handled::Applied;
                }
            },
            None => None,
        };
        let reserved = [("LIFELINE_SESSION", session.to_string())];
        let env = match launch_environment(&reserved, &launch.env, &secrets) {
            Ok(env) => env,
            Err(credential) => {
                self.fail(session, missing(credential), now);
                return Handled::Applied;
            }
        };
        let prepared = Prepared {
            profile: launch.profile,
            provider: launch.provider,
            capabilities: launch.capabilities,
            budget: launch.budget,
            env,
            api_key,
            note: launch.note,
        };
        let e = &self.entries[&session];
        let purpose = e.attempt.as_ref().map_or(Purpose::Launch, |a| a.purpose);
        match (purpose, e.binding.clone()) {
            (Purpose::Resume, Some(b)) => {
                // Rejoin first; a new execution only on a positive
                // classification that the retained one is gone.
                self.load(session, attempt, &b, LOAD_RETRIES, prepared, now);
            }
            // A relaunch or a continuation links the new execution to the
            // one it replaces.
            (_, binding) => {
                let from = binding.map(|b| b.execution);
                self.launch(session, attempt, prepared, from)
            }
        }
        Handled::Applied
    }

    fn launch(
        &mut self,
        session: SessionId,
        attempt: StartupAttemptId,
        prepared: Prepared,
        resumed_from: Option<ExecutionId>,
    ) {
        let e = &self.entries[&session];
        let effect = SessionEffect::Launch {
            attempt,
            session,
            workspace: e.workspace,
            environment: e.environment.clone(),
            existing_workspace: e.binding.is_some(),
            profile: prepared.profile.clone(),
            capabilities: prepared.capabilities.clone(),
            budget: prepared.budget,
            env: prepared.env.clone(),
            api_key: prepared.api_key.clone(),
        };
        self.attempt_mut(session).phase = Phase::Launching {
            prepared,
            resumed_from,
        };
        self.effects.push_back(effect);
    }

    /// Before launching, the shell found a generation whose launch
    /// acknowledgement may have been lost (`unacknowledged_launch`): the
    /// attempt waits for it to dial in, on a timer, instead of launching a
    /// second one unnoticed.
    pub fn wait_for_lost_launch(
        &mut self,
        attempt: StartupAttemptId,
        runtime: RuntimeId,
        generation: Generation,
        now: Millis,
    ) -> Handled {
        let Some(session) = self.owner_of(attempt) else {
            return Handled::Stale;
        };
        let a = self.attempt_mut(session);
        if !matches!(a.phase, Phase::Launching { .. }) {
            return Handled::Stale;
        }
        let deadline = now.plus(ADOPTION_TIMEOUT_MS);
        a.adopting = Some((runtime, generation, deadline));
        self.effects.push_back(SessionEffect::SetTimer {
            attempt,
            timer: AttemptTimer::Adoption,
            at: deadline,
        });
        Handled::Applied
    }

    /// The wait for a lost launch ended before its timer: the runtime was
    /// adopted, or the journal no longer holds it.
    pub fn end_lost_launch_wait(&mut self, attempt: StartupAttemptId) -> Handled {
        let Some(session) = self.owner_of(attempt) else {
            return Handled::Stale;
        };
        match self.attempt_mut(session).adopting.take() {
            Some(_) => Handled::Applied,
            None => Handled::Stale,
        }
    }

    /// Asks the shell to rejoin the retained runtime, and arms the timer
    /// that ends the wait.
    fn load(
        &mut self,
        session: SessionId,
        attempt: StartupAttemptId,
        binding: &ExecutionBinding,
        retries_left: u8,
        prepared: Prepared,
        now: Millis,
    ) {
        let deadline = now.plus(REJOIN_TIMEOUT_MS);
        self.attempt_mut(session).phase = Phase::Loading {
            retries_left,
            prepared,
            deadline,
        };
        self.effects.push_back(SessionEffect::LoadExecution {
            attempt,
            execution: binding.execution,
            generation: binding.generation,
            runtime: binding.runtime,
        });
        self.effects.push_back(SessionEffect::SetTimer {
            attempt,
            timer: AttemptTimer::Rejoin,
            at: deadline,
        });
    }

    /// The answer to [`SessionEffect::LoadExecution`].
    pub fn handle_loaded(
        &mut self,
        attempt: StartupAttemptId,
        result: Result<(), LoadError>,
        now: Millis,
    ) -> Handled {
        let Some(session) = self.owner_of(attempt) else {
            return Handled::Stale;
        };
        let Phase::Loading {
            retries_left,
            prepared,
            ..
        } = self.attempt_mut(session).phase.clone()
        else {
            return Handled::Stale;
        };
        let binding = self.entries[&session]
            .binding
            .clone()
            .expect("a resume attempt starts only with a binding");
        match result {
            Ok(()) => {
                let mut rejoined = binding.clone();
                // Later process starts in this execution keep the identity
                // of the profile it was resumed with.
                rejoined.profile = prepared.profile.clone().or(binding.profile.clone());
                let rejoined_profile = rejoined.profile.clone();
                self.attempt_mut(session).phase = Phase::Persisting {
                    rejoined: true,
                    binding: rejoined,
                    prepared,
                };
                self.effects
                    .push_back(SessionEffect::Record(SessionRecord::ExecutionRejoined {
                        session,
                        execution: binding.execution,
                        generation: binding.generation,
                        attempt,
                        profile: rejoined_profile,
                    }));
            }
            Err(error) if error.permits_fallback() => {
                self.launch(session, attempt, prepared, Some(binding.execution));
            }
            // The retry keeps this attempt's identity; a failure after it
            // reports the later, more specific cause.
            Err(LoadError::Transport { .. }) if retries_left > 0 => {
                self.load(session, attempt, &binding, retries_left - 1, prepared, now);
            }
            Err(error) => self.fail(session, FailureCause::Load { error }, now),
        }
        Handled::Applied
    }

    /// The runtime for [`SessionEffect::Launch`] exists (its execution and
    /// generation are durable in the command journal). From here the attempt
    /// owns its cleanup.
    pub fn handle_launched(
        &mut self,
        attempt: StartupAttemptId,
        execution: ExecutionId,
        generation: Generation,
        runtime: RuntimeId,
        now: Millis,
    ) -> Handled {
        let Some(session) = self.owner_of(attempt) else {
            // A late launch of an attempt that no longer owns the session:
            // the caller must still stop what it started.
            self.effects.push_back(SessionEffect::TerminateRuntime {
                attempt: Some(attempt),
                execution,
                generation,
                runtime,
            });
            return Handled::Stale;
        };
        // A launch that was found (adopted) or made ends any wait for one.
        self.attempt_mut(session).adopting = None;
        let Phase::Launching {
            prepared,
            resumed_from,
        } = self.attempt_mut(session).phase.clone()
        else {
            return Handled::Stale;
        };
        let launched = ExecutionBinding {
            execution,
            generation,
            runtime,
            profile: prepared.profile.clone(),
        };
        let a = self.attempt_mut(session);
        a.launched = Some(launched.clone());
        a.phase = Phase::Ready {
            launched,
            prepared,
            resumed_from,
        };
        self.effects.push_back(SessionEffect::SetTimer {
            attempt,
            timer: AttemptTimer::Readiness,
            at: now.plus(READINESS_TIMEOUT_MS),
        });
        Handled::Applied
    }

    pub fn handle_launch_failed(
        &mut self,
        attempt: StartupAttemptId,
        failure: LaunchFailure,
        now: Millis,
    ) -> Handled {
        let Some(session) = self.owner_of(attempt) else {
            return Handled::Stale;
        };
        if !matches!(
            self.attempt_mut(session).phase,
            Phase::Launching { .. } | Phase::Ready { .. }
        ) {
            return Handled::Stale;
        }
        self.fail(session, FailureCause::Launch { failure }, now);
        Handled::Applied
    }

    /// The launched runtime answered: store the token, then admit the prompt.
    pub fn handle_ready(&mut self, attempt: StartupAttemptId) -> Handled {
        let Some(session) = self.owner_of(attempt) else {
            return Handled::Stale;
        };
        let Phase::Ready {
            launched,
            prepared,
            resumed_from,
        } = self.attempt_mut(session).phase.clone()
        else {
            return Handled::Stale;
        };
        let note = prepared.note.clone();
        let environment = self.entries.get(&session).map(|e| e.environment.clone());
        self.attempt_mut(session).phase = Phase::Persisting {
            rejoined: false,
            binding: launched.clone(),
            prepared,
        };
        self.effects
            .push_back(SessionEffect::Record(SessionRecord::ExecutionStarted {
                session,
                execution: launched.execution,
                generation: launched.generation,
                runtime: launched.runtime,
                attempt,
                profile: launched.profile.clone(),
                resumed_from,
                note,
                environment,
            }));
        Handled::Applied
    }

    /// The token record is durable: hand the shell what the execution runs
    /// with, publish Running, admit the prompt that started this attempt,
    /// then queued ones if auto-run is on.
    pub fn handle_recorded(&mut self, attempt: StartupAttemptId) -> Handled {
        let Some(session) = self.owner_of(attempt) else {
            return Handled::Stale;
        };
        let Phase::Persisting {
            binding,
            prepared,
            rejoined,
        } = self.attempt_mut(session).phase.clone()
        else {
            return Handled::Stale;
        };
        let e = self.entries.get_mut(&session).expect("owned");
        let prompt = e.attempt.take().and_then(|a| a.prompt);
        e.binding = Some(binding.clone());
        e.state = SessionState::Running;
        self.effects.push_back(SessionEffect::Activate {
            session,
            binding,
            prepared,
            rejoined,
        });
        self.publish(session);
        match prompt {
            Some(turn) => self.admit(session, turn),
            None => self.run_queue(session),
        }
        Handled::Applied
    }

    fn admit(&mut self, session: SessionId, turn: TurnId) {
        let e = self.entries.get_mut(&session).expect("caller checked");
        let Some(b) = &e.binding else { return };
        let effect = SessionEffect::AdmitPrompt {
            session,
            turn,
            execution: b.execution,
            generation: b.generation,
        };
        e.accepted.push(turn);
        e.active_turn = Some(turn);
        self.effects.push_back(effect);
    }

    fn run_queue(&mut self, session: SessionId) {
        let e = self.entries.get_mut(&session).expect("caller checked");
        if !e.auto_run || e.active_turn.is_some() || e.state != SessionState::Running {
            return;
        }
        if let Some(turn) = e.queue.pop_front() {
            self.admit(session, turn);
        }
    }

    /// Runs the next queued prompt by hand (auto-run off).
    pub fn run_next(&mut self, session: SessionId) -> Result<Option<TurnId>, Refusal> {
        let e = self
            .entries
            .get_mut(&session)
            .ok_or(Refusal::UnknownSession)?;
        if e.state != SessionState::Running || e.active_turn.is_some() {
            return Ok(None);
        }
        let Some(turn) = e.queue.pop_front() else {
            return Ok(None);
        };
        self.admit(session, turn);
        Ok(Some(turn))
    }

    /// A prompt from the user. A stopped session resumes lazily with this
    /// prompt as the attempt's originating prompt.
    pub fn submit_prompt(
        &mut self,
        session: SessionId,
        turn: TurnId,
        now: Millis,
    ) -> Result<PromptDisposition, Refusal> {
        let e = self
            .entries
            .get_mut(&session)
            .ok_or(Refusal::UnknownSession)?;
        if e.accepted.contains(&turn) || e.queue.contains(&turn) {
            // The same turn identity again (a reconnecting client): the
            // original stands.
            return Ok(PromptDisposition::Admitted);
        }
        match e.state.clone() {
            SessionState::Archived => Err(Refusal::Archived),
            SessionState::Running if e.active_turn.is_none() && e.queue.is_empty() => {
                self.admit(session, turn);
                Ok(PromptDisposition::Admitted)
            }
            SessionState::Running
            | SessionState::Starting { .. }
            | SessionState::Cancelling { .. } => {
                if e.queue.len() >= MAX_QUEUED_PROMPTS {
                    return Err(Refusal::QueueFull);
                }
                e.queue.push_back(turn);
                Ok(PromptDisposition::Queued {
                    position: e.queue.len(),
                })
            }
            SessionState::New => {
                let attempt = self.begin(session, Purpose::Launch, None, Some(turn), now)?;
                Ok(PromptDisposition::Starting { attempt })
            }
            SessionState::Cancelled | SessionState::Failed(_) | SessionState::Detached => {
                let purpose = if e.binding.is_some() {
                    Purpose::Resume
                } else {
                    Purpose::Launch
                };
                let cause = (purpose == Purpose::Resume).then_some(ResumeCause::Prompt);
                let attempt = self.begin(session, purpose, cause, Some(turn), now)?;
                Ok(PromptDisposition::Starting { attempt })
            }
        }
    }

    /// A turn ended. `failed` turns are a recoverable failure of the
    /// execution they ran in — fenced by that captured execution and
    /// generation, so a late report about an earlier one changes nothing.
    pub fn handle_turn_finished(
        &mut self,
        session: SessionId,
        turn: TurnId,
        execution: ExecutionId,
        generation: Generation,
        failure: Option<String>,
        now: Millis,
    ) -> Handled {
        let Some(e) = self.entries.get_mut(&session) else {
            return Handled::Stale;
        };
        if e.active_turn == Some(turn) {
            e.active_turn = None;
        }
        let current = e
            .binding
            .as_ref()
            .is_some_and(|b| b.execution == execution && b.generation == generation);
        if let Some(detail) = failure {
            if !current || e.attempt.is_some() {
                return Handled::Stale;
            }
            self.execution_failed(session, FailureCause::AgentFailed { detail }, now);
            return Handled::Applied;
        }
        self.run_queue(session);
        Handled::Applied
    }

    /// A failure report about an execution (its runtime died, a provider
    /// failed). Applies only to the execution the session is bound to now.
    pub fn handle_execution_failed(
        &mut self,
        session: SessionId,
        execution: ExecutionId,
        generation: Generation,
        cause: FailureCause,
        now: Millis,
    ) -> Handled {
        let Some(e) = self.entries.get(&session) else {
            return Handled::Stale;
        };
        let current = e
            .binding
            .as_ref()
            .is_some_and(|b| b.execution == execution && b.generation == generation);
        if !current || e.attempt.is_some() || e.state != SessionState::Running {
            return Handled::Stale;
        }
        self.execution_failed(session, cause, now);
        Handled::Applied
    }

    /// Criterion 1: the failed execution is stopped as far as the agent
    /// goes; its runtime, workspace and credential references are retained
    /// for Resume. No cleanup effect is issued.
    fn execution_failed(&mut self, session: SessionId, cause: FailureCause, now: Millis) {
        let stamp = self.mint(now, ErrorStamp::from_u128);
        let b = self.entries[&session]
            .binding
            .clone()
            .expect("current binding checked");
        self.entries.get_mut(&session).expect("exists").active_turn = None;
        self.record(SessionRecord::ExecutionFailed {
            stamp,
            session,
            execution: b.execution,
            generation: b.generation,
            cause,
        });
        self.publish(session);
    }

    /// Fails the owning attempt before dispatch: a durable, stamped record
    /// correlated to session, attempt and execution. A runtime this attempt
    /// launched is cleaned up with its captured identity; the retained one
    /// it tried to rejoin is not touched.
    fn fail(&mut self, session: SessionId, cause: FailureCause, now: Millis) {
        let stamp = self.mint(now, ErrorStamp::from_u128);
        let e = self.entries.get_mut(&session).expect("owned");
        let Some(a) = e.attempt.take() else { return };
        // The prompt that started this attempt is not dispatched; it is
        // not queued either: it goes back to the user, who sees the failure
        // and decides.
        if let Some(turn) = a.prompt {
            self.effects.push_back(SessionEffect::ReturnPrompts {
                session,
                turns: vec![turn],
            });
        }
        if let Some(launched) = &a.launched {
            self.effects
                .push_back(SessionEffect::CancelWaits { attempt: a.id });
            self.effects.push_back(SessionEffect::TerminateRuntime {
                attempt: Some(a.id),
                execution: launched.execution,
                generation: launched.generation,
                runtime: launched.runtime,
            });
        }
        let execution = a
            .launched
            .as_ref()
            .map(|l| l.execution)
            .or_else(|| self.entries[&session].binding.as_ref().map(|b| b.execution));
        self.record(SessionRecord::StartupFailed {
            stamp,
            session,
            attempt: a.id,
            execution,
            purpose: a.purpose,
            resume_cause: a.resume_cause,
            cause,
        });
        self.publish(session);
    }

    /// Stop while starting (004 §007): invalidate the attempt first, then
    /// cancel its waits, then stop what it launched with bounded escalation.
    /// Pending until that cleanup settles.
    pub fn cancel(&mut self, session: SessionId, now: Millis) -> CancelOutcome {
        let Some(e) = self.entries.get_mut(&session) else {
            return CancelOutcome::NoAttempt;
        };
        if let Some(c) = &e.cancelling {
            return CancelOutcome::AlreadyCancelling { attempt: c.id };
        }
        let Some(a) = e.attempt.take() else {
            return CancelOutcome::NoAttempt;
        };
        // The prompt that started it goes back to the user: never queued
        // as a recovery step. Unrelated queued prompts stay where they are.
        if let Some(turn) = a.prompt {
            self.effects.push_back(SessionEffect::ReturnPrompts {
                session,
                turns: vec![turn],
            });
        }
        self.effects
            .push_back(SessionEffect::CancelWaits { attempt: a.id });
        let launched = a.launched.clone().or_else(|| match &a.phase {
            Phase::Persisting {
                binding,
                rejoined: false,
                ..
            } => Some(binding.clone()),
            _ => None,
        });
        match launched {
            Some(runtime) => {
                self.effects.push_back(SessionEffect::CancelRuntime {
                    attempt: a.id,
                    execution: runtime.execution,
                    generation: runtime.generation,
                    runtime: runtime.runtime,
                });
                self.effects.push_back(SessionEffect::SetTimer {
                    attempt: a.id,
                    timer: AttemptTimer::CancelGrace,
                    at: now.plus(CANCEL_GRACE_MS),
                });
                let e = self.entries.get_mut(&session).expect("exists");
                e.cancelling = Some(Cancelling {
                    id: a.id,
                    runtime,
                    terminated: false,
                });
                e.state = SessionState::Cancelling { attempt: a.id };
                self.publish(session);
                CancelOutcome::Cancelling { attempt: a.id }
            }
            None => {
                self.record(SessionRecord::StartupCancelled {
                    session,
                    attempt: a.id,
                });
                self.after_cancel(session);
                CancelOutcome::Cancelled { attempt: a.id }
            }
        }
    }

    fn after_cancel(&mut self, session: SessionId) {
        let e = self.entries.get_mut(&session).expect("exists");
        // A rejoin that was cancelled leaves the retained execution as it
        // was; the session goes back to what its records say.
        e.state = SessionState::Cancelled;
        self.publish(session);
    }

    /// The owned cleanup of a cancelled attempt settled.
    pub fn handle_cleanup(
        &mut self,
        attempt: StartupAttemptId,
        result: Result<(), String>,
        now: Millis,
    ) -> Handled {
        let Some(session) = self
            .entries
            .iter()
            .find(|(_, e)| e.cancelling.as_ref().is_some_and(|c| c.id == attempt))
            .map(|(s, _)| *s)
        else {
            return Handled::Stale;
        };
        let c = self
            .entries
            .get_mut(&session)
            .and_then(|e| e.cancelling.take())
            .expect("found above");
        match result {
            Ok(()) => {
                self.record(SessionRecord::StartupCancelled { session, attempt });
                self.after_cancel(session);
            }
            Err(detail) => {
                // Truthful: the cancellation did not finish. The failure
                // keeps recovery controls.
                let stamp = self.mint(now, ErrorStamp::from_u128);
                self.record(SessionRecord::StartupFailed {
                    stamp,
                    session,
                    attempt,
                    execution: Some(c.runtime.execution),
                    purpose: Purpose::Launch,
                    resume_cause: None,
                    cause: FailureCause::CleanupFailed { detail },
                });
                self.publish(session);
            }
        }
        Handled::Applied
    }

    /// A timer set by [`SessionEffect::SetTimer`] fired.
    pub fn handle_timer(
        &mut self,
        attempt: StartupAttemptId,
        timer: AttemptTimer,
        now: Millis,
    ) -> Handled {
        match timer {
            AttemptTimer::Adoption => {
                let Some(session) = self.owner_of(attempt) else {
                    return Handled::Stale;
                };
                let a = self.attempt_mut(session);
                match a.adopting {
                    Some((runtime, generation, deadline)) if now >= deadline => {
                        a.adopting = None;
                        self.effects.push_back(SessionEffect::ReplaceLostLaunch {
                            attempt,
                            runtime,
                            generation,
                        });
                        Handled::Applied
                    }
                    _ => Handled::Stale,
                }
            }
            AttemptTimer::Rejoin => {
                let Some(session) = self.owner_of(attempt) else {
                    return Handled::Stale;
                };
                // A timer of an earlier wait (before a retry) is stale.
                match self.attempt_mut(session).phase {
                    Phase::Loading { deadline, .. } if now >= deadline => {
                        self.handle_loaded(attempt, Err(LoadError::Timeout), now)
                    }
                    _ => Handled::Stale,
                }
            }
            AttemptTimer::Readiness => {
                let Some(session) = self.owner_of(attempt) else {
                    return Handled::Stale;
                };
                if !matches!(self.attempt_mut(session).phase, Phase::Ready { .. }) {
                    return Handled::Stale;
                }
                self.fail(
                    session,
                    FailureCause::Load {
                        error: LoadError::Timeout,
                    },
                    now,
                );
                Handled::Applied
            }
            AttemptTimer::CancelGrace | AttemptTimer::TerminateGrace => {
                let Some((session, c)) = self.entries.iter_mut().find_map(|(s, e)| {
                    e.cancelling
                        .as_mut()
                        .filter(|c| c.id == attempt)
                        .map(|c| (*s, c))
                }) else {
                    return Handled::Stale;
                };
                if timer == AttemptTimer::CancelGrace && !c.terminated {
                    c.terminated = true;
                    let r = c.runtime.clone();
                    let _ = session;
                    self.effects.push_back(SessionEffect::TerminateRuntime {
                        attempt: Some(attempt),
                        execution: r.execution,
                        generation: r.generation,
                        runtime: r.runtime,
                    });
                    self.effects.push_back(SessionEffect::SetTimer {
                        attempt,
                        timer: AttemptTimer::TerminateGrace,
                        at: now.plus(TERMINATE_GRACE_MS),
                    });
                    return Handled::Applied;
                }
                if timer == AttemptTimer::TerminateGrace {
                    return self.handle_cleanup(
                        attempt,
                        Err("the runtime did not stop after it was terminated".into()),
                        now,
                    );
                }
                Handled::Stale
            }
        }
    }

    /// Records the user's verdict on an uncertain command.
    pub fn record_verdict(
        &mut self,
        session: SessionId,
        command: CommandId,
        done: bool,
    ) -> Result<(), Refusal> {
        self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        self.record(SessionRecord::Verdict {
            session,
            command,
            done,
        });
        Ok(())
    }

    /// Start fresh: a new session on a new workspace, linked from this one.
    /// The old session's evidence and workspace stay; it is not archived.
    /// `environment` is where the successor runs; `None` keeps this
    /// session's (a local folder stays the same folder: it is the user's,
    /// and a fresh conversation in it is what Start fresh means there).
    pub fn start_fresh(
        &mut self,
        session: SessionId,
        successor: SessionId,
        workspace: WorkspaceId,
        environment: Option<Environment>,
        now: Millis,
    ) -> Result<StartupAttemptId, Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        if let Some(a) = &e.attempt {
            return Err(Refusal::Busy { attempt: a.id });
        }
        let profile = e.selected;
        let environment = environment.unwrap_or_else(|| e.environment.clone());
        self.return_queue(session);
        self.create(successor, workspace, environment, profile);
        self.record(SessionRecord::Succeeded { session, successor });
        self.begin(successor, Purpose::Launch, None, None, now)
    }

    /// The user chose another environment: the work goes on in a new
    /// session there, linked from this one, whose runtime (if any) is
    /// stopped with its captured identity. This session's evidence and
    /// files stay where they are; a folder is never moved or copied.
    pub fn choose_environment(
        &mut self,
        session: SessionId,
        successor: SessionId,
        workspace: WorkspaceId,
        environment: Environment,
        now: Millis,
    ) -> Result<StartupAttemptId, Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        if let Some(a) = &e.attempt {
            return Err(Refusal::Busy { attempt: a.id });
        }
        self.retire(session)?;
        self.start_fresh(session, successor, workspace, Some(environment), now)
    }

    /// Archive: ownership verified, the running runtime stopped with its
    /// captured identity, the workspace and credentials kept.
    pub fn archive(&mut self, session: SessionId) -> Result<(), Refusal> {
        self.retire(session)?;
        self.return_queue(session);
        self.record(SessionRecord::Archived { session });
        self.publish(session);
        Ok(())
    }

    /// Unarchive: the session comes back stopped, as archive left it; a
    /// deleted one never does. Unarchiving one that is not archived
    /// changes nothing.
    pub fn unarchive(&mut self, session: SessionId) -> Result<(), Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        if e.deleted {
            return Err(Refusal::Deleted);
        }
        if e.state == SessionState::Archived {
            self.record(SessionRecord::Unarchived { session });
            self.publish(session);
        }
        Ok(())
    }

    /// Delete: as archive, and the workspace folder is removed only when
    /// Lifeline owns it. A local folder the user opened is never touched.
    pub fn delete(&mut self, session: SessionId) -> Result<bool, Refusal> {
        self.retire(session)?;
        self.return_queue(session);
        let e = &self.entries[&session];
        let owned = e.environment.owned_by_lifeline();
        if owned {
            self.effects.push_back(SessionEffect::RemoveWorkspace {
                session,
                workspace: e.workspace,
            });
        }
        self.record(SessionRecord::Deleted {
            session,
            workspace_removed: owned,
        });
        self.publish(session);
        Ok(owned)
    }

    /// A session that will run nothing more gives its queued prompts back:
    /// none waits forever unseen.
    fn return_queue(&mut self, session: SessionId) {
        let Some(e) = self.entries.get_mut(&session) else {
            return;
        };
        if e.queue.is_empty() {
            return;
        }
        let turns: Vec<TurnId> = e.queue.drain(..).collect();
        self.effects
            .push_back(SessionEffect::ReturnPrompts { session, turns });
    }

    fn retire(&mut self, session: SessionId) -> Result<(), Refusal> {
        let e = self.entries.get(&session).ok_or(Refusal::UnknownSession)?;
        if e.state == SessionState::Archived {
            return Err(Refusal::Archived);
        }
        if let Some(c) = &e.cancelling {
            return Err(Refusal::CancellationPending { attempt: c.id });
        }
        if e.attempt.is_some() {
            self.cancel(session, Millis(0));
            let e = &self.entries[&session];
            if let Some(c) = &e.cancelling {
                return Err(Refusal::CancellationPending { attempt: c.id });
            }
        }
        if let Some(b) = self.entries[&session].binding.clone() {
            self.effects.push_back(SessionEffect::TerminateRuntime {
                attempt: None,
                execution: b.execution,
                generation: b.generation,
                runtime: b.runtime,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
