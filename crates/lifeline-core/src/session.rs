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
//!
//! Here: the states and effects, and the `Sessions` fold and queries. The
//! durable records and their failure causes are in [`crate::session_record`],
//! below the journal. `attempt.rs` holds startup attempts (begin, every
//! continuation, failure, Stop while starting, cleanup, timers); `queue.rs`
//! prompts and turns; `retire.rs` what ends or replaces a session.

use lifeline_decode::Decode;
use lifeline_encode::Encode;
use std::collections::VecDeque;

use crate::flat::FlatMap;

use serde::{Deserialize, Serialize};

use crate::id::{
    CommandId, CredentialId, ErrorStamp, ExecutionId, Generation, IdError, IdMinter, Millis,
    ProfileId, RuntimeId, SessionId, StartupAttemptId, TurnId, WorkspaceId,
};
use crate::profile::{
    launch_environment, resolve_for_resume, AgentBudget, Capabilities, CredentialFailure,
    LaunchProfile, ProfileBlock, ProfileLookup, ProfileRef, Provider, Secret,
};
use crate::session_record::{
    FailureCause, LaunchFailure, LoadError, Purpose, ResumeCause, SessionRecord,
};

mod attempt;
mod queue;
mod retire;

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
/// Sessions whose runtime may live at once in a tab: the open one and
/// the ones left working in the background. Each is a worker with its own
/// wasm instance and workspace handles; opening one more sets aside an
/// idle one, and is refused while all of them work.
pub const MAX_RUNNING_SESSIONS: usize = 3;

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

/// The execution a session is bound to (its stored token).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct ExecutionBinding {
    pub execution: ExecutionId,
    pub generation: Generation,
    pub runtime: RuntimeId,
    pub profile: Option<ProfileRef>,
}

/// A failure shown with recovery controls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct Failure {
    pub stamp: ErrorStamp,
    pub attempt: Option<StartupAttemptId>,
    pub execution: Option<ExecutionId>,
    pub cause: FailureCause,
}

/// Where a session stands, as published to the UI.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
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
    /// A chosen profile waits for the start or turn under way to end.
    pub switch_pending: bool,
    /// What led to the resume under way, if one is.
    pub resume_cause: Option<ResumeCause>,
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
    /// A profile was chosen that the session could not start with yet (a
    /// start was under way with the one it had, or a turn ran): it starts
    /// with it as soon as it can, before any other message runs. Not
    /// durable: after a restart the card decides how the session goes on.
    switch_pending: bool,
}

/// Every session's lifecycle in this controller.
#[derive(Debug)]
pub struct Sessions {
    entries: FlatMap<SessionId, Entry>,
    effects: VecDeque<SessionEffect>,
    minter: IdMinter,
    used: std::collections::BTreeSet<u128>,
}

impl Sessions {
    /// `entropy` should be fresh random bytes; tests pass a seed.
    pub fn new(entropy: &[u8]) -> Sessions {
        Sessions {
            entries: FlatMap::new(),
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
        // A choice made while a start or a turn was under way waited in
        // memory; what is durable says the same: the execution ran with
        // another profile than the one now selected. (An execution recorded
        // without its profile is taken to have run with the selected one.)
        for e in s.entries.values_mut() {
            e.switch_pending = e
                .binding
                .as_ref()
                .and_then(|b| b.profile.as_ref())
                .is_some_and(|p| p.id != e.selected);
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
                    switch_pending: false,
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
                    SessionRecord::Deleted { .. } | SessionRecord::Tombstone { .. } => {
                        e.state = SessionState::Archived;
                        e.deleted = true;
                        e.queue.clear();
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
                    | SessionRecord::WorkspaceRemoved { .. }
                    | SessionRecord::Reissued { .. }
                    | SessionRecord::Succeeded { .. }
                    | SessionRecord::Renamed { .. } => {}
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

    /// Whether a chosen profile waits for what is under way to end.
    pub fn switch_pending(&self, session: SessionId) -> bool {
        self.entries.get(&session).is_some_and(|e| e.switch_pending)
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
            switch_pending: e.switch_pending,
            resume_cause: e.attempt.as_ref().and_then(|a| a.resume_cause),
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
            // Applied now by a start the engine begins, unless a start or a
            // turn is under way: then as soon as it ends.
            if let Some(e) = self.entries.get_mut(&session) {
                e.switch_pending = e.attempt.is_some() || e.active_turn.is_some();
            }
        }
        Ok(())
    }

    pub fn set_auto_run(&mut self, session: SessionId, on: bool) {
        if let Some(e) = self.entries.get_mut(&session) {
            e.auto_run = on;
        }
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
