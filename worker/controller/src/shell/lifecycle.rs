//! The leader's session lifecycle and agent turns: carries out
//! `lifeline_core::session::Sessions` effects (profile lookups and the
//! launch checkpoint against the config store, runtime launches and stops
//! through the core, timers) and drives model-backed turns (the provider
//! `fetch` lives in `crate::provider`). Every continuation goes back through
//! `Sessions`, which drops it when its attempt no longer owns the session.

use std::rc::Rc;

use lifeline_core::environment::FolderAccess;
use lifeline_core::journal::TurnAgent;
use lifeline_core::model::{self, ModelMessage, ModelStep, TurnStep};
use lifeline_core::profile::{
    AgentBudget, EnvValue, EnvVar, Profile, ProfileLookup, Provider, Secret, OWNER,
};
use lifeline_core::session::{
    Environment, ExecutionBinding, FailureCause, LaunchFailure, Prepared, PromptDisposition,
    Purpose, ResumeCause, SessionEffect, SessionState, Sessions,
};
use lifeline_core::{
    agent, Binding, Budget, ClientMessage, ClientRequest, CredentialId, ExecutionId, Generation,
    ProfileId, ProviderRequestId, RequestId, RuntimeId, SessionId, StartupAttemptId, TurnId,
    TurnStatus, WorkspaceId,
};
use lifeline_protocol::{
    ControllerToPage, KeyInput, Level, ProfileInput, ProfileSummary, SecretText, SessionStatus,
};
use wasm_bindgen_futures::spawn_local;
use web_sys::AbortController;

use super::{notice, post, Shell, COMMAND_OUTPUT_BYTES, COMMAND_WALL_TIME_MS};
use crate::config::ConfigStore;
use crate::provider;
use crate::web::{after, now, random_bytes, random_u128};
use lifeline_core::phrase::Phrase;
use lifeline_core::stop::StopPlan;

/// What a running execution works with, from the launch checkpoint.
pub(super) struct Active {
    pub session: SessionId,
    pub binding: ExecutionBinding,
    pub prepared: Prepared,
}

/// A runtime start an attempt asked for.
pub(super) struct Launching {
    pub attempt: StartupAttemptId,
    pub request: RequestId,
    pub env: Vec<(String, Secret)>,
    pub existing_workspace: bool,
    /// Set once the core assigned it.
    pub runtime: Option<(RuntimeId, Generation)>,
}

/// A provider request this controller owns: recorded (or being recorded)
/// and possibly streaming.
pub(super) struct Live {
    pub request: ProviderRequestId,
    pub turn: TurnId,
    pub abort: AbortController,
}

/// A launch waiting for a lost launch to dial in: what it launches with
/// if it does not (its environment holds secrets, kept only until then).
pub(super) struct PendingLaunch {
    attempt: StartupAttemptId,
    workspace: WorkspaceId,
    env: Vec<(String, Secret)>,
    existing_workspace: bool,
    found: (RuntimeId, Generation, ExecutionId),
}

pub(super) fn mint<T>(make: fn(u128) -> Result<T, lifeline_core::IdError>) -> Option<T> {
    random_u128().ok().and_then(|raw| make(raw).ok())
}

fn provider_kind(p: &Provider) -> Option<(lifeline_provider::ProviderKind, &str, &str)> {
    match p {
        Provider::BuiltIn => None,
        Provider::OpenAiCompatible { base_url, model } => Some((
            lifeline_provider::ProviderKind::OpenAiCompatible,
            base_url,
            model,
        )),
        Provider::Anthropic { base_url, model } => {
            Some((lifeline_provider::ProviderKind::Anthropic, base_url, model))
        }
    }
}

fn wire_env(env: &[(String, Secret)]) -> Vec<(String, SecretText)> {
    env.iter()
        .map(|(k, v)| (k.clone(), SecretText(v.expose().to_string())))
        .collect()
}

impl Shell {
    fn config(&self) -> Option<Rc<ConfigStore>> {
        self.config.borrow().clone()
    }

    /// After recovery: the config store, the default profile, the session
    /// layer rebuilt from its records, and a session to work in.
    pub(super) async fn start_sessions(self: &Rc<Self>) {
        let config = match ConfigStore::open().await {
            Ok(c) => Rc::new(c),
            Err(e) => {
                notice(
                    "profiles",
                    Level::Error,
                    Phrase::ProfilesCannotOpen {
                        detail: e.to_string(),
                    },
                );
                return;
            }
        };
        *self.config.borrow_mut() = Some(config.clone());
        let Some(id) = mint(ProfileId::from_u128) else {
            return;
        };
        let default = match config.ensure_default_profile(id).await {
            Ok(p) => p,
            Err(e) => {
                notice(
                    "profiles",
                    Level::Error,
                    Phrase::NoProfileMade {
                        detail: e.to_string(),
                    },
                );
                return;
            }
        };
        let entropy = random_bytes::<32>().map(|b| b.to_vec()).unwrap_or_default();
        let (records, session, workspace) = {
            let guard = self.core.borrow();
            let Some(core) = guard.as_ref() else { return };
            let p = core.pending_projection();
            let records: Vec<_> = p.lifecycles.values().flatten().cloned().collect();
            let session = self.session.get();
            let workspace = session
                .and_then(|s| p.sessions.get(&s))
                .map(|s| s.workspace);
            (records, session, workspace)
        };
        let mut sessions = Sessions::recover(&entropy, &records);
        match (session, workspace) {
            (Some(s), Some(w)) => {
                // A session from before lifecycles were recorded starts
                // without a binding: its next message launches anew.
                sessions.create(s, w, Environment::Worker, default.id);
            }
            _ => {
                let Some((session, workspace)) = self.open_session() else {
                    return;
                };
                self.session.set(Some(session));
                sessions.create(session, workspace, Environment::Worker, default.id);
            }
        }
        // Bring the session up the way it was left: a new one launches with
        // its profile; a bound one rejoins its retained runtime (falling
        // back to a new generation on the same workspace only when the
        // journal confirms the old one gone). A failed one waits for the
        // user.
        if let Some(session) = self.session.get() {
            let now = now();
            match sessions.state(session) {
                Some(SessionState::New) => {
                    let _ = sessions.begin(session, Purpose::Launch, None, None, now);
                }
                Some(SessionState::Detached) => {
                    let _ = sessions.begin(
                        session,
                        Purpose::Resume,
                        Some(ResumeCause::Automatic),
                        None,
                        now,
                    );
                }
                _ => {}
            }
        }
        *self.sessions.borrow_mut() = Some(sessions);
        self.pump();
        self.refresh_facts();
        let early = std::mem::take(&mut *self.early_prompts.borrow_mut());
        for (turn, text) in early {
            self.prompt(turn, text);
        }
        self.publish_profiles().await;
    }

    /// Opens a new session on a new workspace in the journal, under fresh
    /// identities; `None` if either could not be minted or the core refused.
    pub(super) fn open_session(self: &Rc<Self>) -> Option<(SessionId, WorkspaceId)> {
        let (session, workspace) = (mint(SessionId::from_u128)?, mint(WorkspaceId::from_u128)?);
        let mut guard = self.core.borrow_mut();
        let core = guard.as_mut()?;
        self.ask(core, |request| ClientRequest::OpenSession {
            request,
            session,
            workspace,
            title: "Session".into(),
        })
        .then_some((session, workspace))
    }

    // ----- the page's requests ---------------------------------------------

    pub fn prompt(self: &Rc<Self>, turn: TurnId, text: String) {
        let refuse = |message: Phrase| post(&ControllerToPage::PromptRefused { turn, message });
        if self.role.get() != lifeline_protocol::Role::Leader {
            return refuse(Phrase::FollowingCannotSend);
        }
        if let Some(reason) = self.stopped.borrow().clone() {
            return refuse(reason);
        }
        if text.trim().is_empty() {
            return refuse(Phrase::MessageEmpty);
        }
        if text.len() > lifeline_core::schema::limits::MAX_PROMPT_BYTES {
            return refuse(Phrase::MessageTooLong {
                bytes: text.len() as u64,
                limit: lifeline_core::schema::limits::MAX_PROMPT_BYTES as u64,
            });
        }
        if let Some(core) = self.core.borrow().as_ref() {
            if let Some(degraded) = core.degraded() {
                return refuse(Phrase::JournalDegraded {
                    detail: degraded.to_string(),
                });
            }
            // The same turn again (a page resending after a controller
            // restart): it is in the journal, so it is not submitted twice.
            if core.pending_projection().turns.contains_key(&turn) {
                return;
            }
        }
        if self.sessions.borrow().is_none() {
            // Recovery is still running: held, and submitted once sessions
            // are up (see start_sessions).
            self.early_prompts.borrow_mut().push((turn, text));
            return;
        }
        let disposition = {
            let mut guard = self.sessions.borrow_mut();
            let (Some(sessions), Some(session)) = (guard.as_mut(), self.session.get()) else {
                return refuse(Phrase::NoSessionToSend);
            };
            self.prompts.borrow_mut().insert(turn, text);
            sessions.submit_prompt(session, turn, now())
        };
        match disposition {
            Ok(PromptDisposition::Queued { position }) => notice(
                "queue",
                Level::Info,
                Phrase::MessageWaits {
                    waiting: u32::try_from(position).unwrap_or(u32::MAX),
                },
            ),
            Ok(_) => {}
            Err(refusal) => {
                self.prompts.borrow_mut().remove(&turn);
                return refuse(Phrase::Refused { refusal });
            }
        }
        self.pump();
    }

    /// Stop: cancels a start in progress, else the running turn.
    pub fn stop_turn(self: &Rc<Self>) {
        let cancelled = {
            let mut guard = self.sessions.borrow_mut();
            match (guard.as_mut(), self.session.get()) {
                (Some(s), Some(session)) => s.cancel(session, now()),
                _ => return,
            }
        };
        if cancelled != lifeline_core::session::CancelOutcome::NoAttempt {
            return self.pump();
        }
        let Some(session) = self.session.get() else {
            return;
        };
        let live = self.live.borrow().as_ref().map(|l| l.request);
        let plan = match self.core.borrow().as_ref() {
            Some(core) => {
                lifeline_core::stop::plan(core.pending_projection(), session, live, now())
            }
            None => return,
        };
        match plan {
            StopPlan::AbortRequest(request) => {
                // The fetch ends with an AbortError, recorded as cancelled
                // with its partial text.
                if let Some(l) = self.live.borrow().as_ref().filter(|l| l.request == request) {
                    l.abort.abort();
                }
                return;
            }
            StopPlan::Cancel(commands) => {
                if let Some(core) = self.core.borrow_mut().as_mut() {
                    for (command, generation) in commands {
                        self.ask(core, |request| ClientRequest::Cancel {
                            request,
                            command,
                            generation,
                        });
                    }
                }
            }
            StopPlan::FinishTurn { turn, reply } => {
                if let Some(core) = self.core.borrow_mut().as_mut() {
                    self.ask(core, |request| ClientRequest::FinishTurn {
                        request,
                        turn,
                        status: TurnStatus::Cancelled,
                        reply,
                    });
                }
            }
            StopPlan::Nothing => return,
        }
        self.pump();
    }

    pub fn resume(self: &Rc<Self>) {
        let result = {
            let mut guard = self.sessions.borrow_mut();
            let (Some(s), Some(session)) = (guard.as_mut(), self.session.get()) else {
                return;
            };
            s.begin(
                session,
                Purpose::Resume,
                Some(ResumeCause::User),
                None,
                now(),
            )
        };
        if let Err(refusal) = result {
            notice("resume", Level::Warning, Phrase::Refused { refusal });
        }
        self.pump();
    }

    // ----- session effects ---------------------------------------------------

    /// Carries out one session effect; returns false when there was none.
    pub(super) fn drive_sessions(self: &Rc<Self>) -> bool {
        let effect = self
            .sessions
            .borrow_mut()
            .as_mut()
            .and_then(|s| s.poll_effect());
        let Some(effect) = effect else {
            return false;
        };
        self.execute_session(effect);
        true
    }

    fn with_sessions<R>(&self, f: impl FnOnce(&mut Sessions) -> R) -> Option<R> {
        self.sessions.borrow_mut().as_mut().map(f)
    }

    fn execute_session(self: &Rc<Self>, effect: SessionEffect) {
        match effect {
            SessionEffect::LookupProfile { attempt, profile } => {
                let Some(config) = self.config() else { return };
                let shell = self.clone();
                spawn_local(async move {
                    let lookup = config.lookup_profile(profile).await;
                    shell.with_sessions(|s| s.handle_profile(attempt, lookup, now()));
                    shell.pump();
                });
            }
            SessionEffect::ResolveCredentials {
                attempt,
                credentials,
            } => {
                let Some(config) = self.config() else { return };
                let shell = self.clone();
                spawn_local(async move {
                    let mut resolved = Vec::with_capacity(credentials.len());
                    for id in credentials {
                        resolved.push((id, config.resolve_credential(id).await));
                    }
                    shell.with_sessions(|s| s.handle_credentials(attempt, resolved, now()));
                    shell.pump();
                });
            }
            SessionEffect::LoadExecution {
                attempt,
                runtime,
                generation,
                ..
            } => self.rejoining.set(Some((attempt, runtime, generation))),
            SessionEffect::Launch {
                attempt,
                workspace,
                environment,
                existing_workspace,
                env,
                ..
            } => {
                let shell = self.clone();
                spawn_local(async move {
                    // A local folder is the user's: it is never created or
                    // checked for in the sandbox, only observed (no prompt;
                    // the page asks on the click that resumes).
                    if let Environment::LocalFolder { folder, name } = environment {
                        let access = lifeline_opfs::folders::observe(folder).await;
                        if access != FolderAccess::Granted {
                            shell.with_sessions(|s| {
                                s.handle_launch_failed(
                                    attempt,
                                    LaunchFailure::Folder { name, access },
                                    now(),
                                )
                            });
                            return shell.pump();
                        }
                    } else if existing_workspace
                        && !crate::storage::workspace_exists(workspace).await
                    {
                        shell.with_sessions(|s| {
                            s.handle_launch_failed(attempt, LaunchFailure::WorkspaceMissing, now())
                        });
                        return shell.pump();
                    }
                    shell.launch(attempt, workspace, env, existing_workspace);
                });
            }
            SessionEffect::SetTimer { attempt, timer, at } => {
                let weak = Rc::downgrade(self);
                let delay = at.0.saturating_sub(now().0);
                after(delay, move || {
                    if let Some(shell) = weak.upgrade() {
                        shell.with_sessions(|s| s.handle_timer(attempt, timer, now()));
                        shell.pump();
                    }
                });
            }
            SessionEffect::ReplaceLostLaunch { attempt, .. } => self.replace_lost_launch(attempt),
            SessionEffect::CancelWaits { attempt } => {
                if self
                    .adopting
                    .borrow()
                    .as_ref()
                    .is_some_and(|p| p.attempt == attempt)
                {
                    self.adopting.borrow_mut().take();
                }
                if self.rejoining.get().is_some_and(|(a, _, _)| a == attempt) {
                    self.rejoining.set(None);
                }
                let mut launching = self.launching.borrow_mut();
                if launching.as_ref().is_some_and(|l| l.attempt == attempt) {
                    *launching = None;
                    self.starting_runtime.set(false);
                }
            }
            SessionEffect::CancelRuntime {
                attempt,
                runtime,
                generation,
                ..
            } => self.stop_runtime(Some(attempt), runtime, generation, false),
            SessionEffect::TerminateRuntime {
                attempt,
                runtime,
                generation,
                ..
            } => self.stop_runtime(attempt, runtime, generation, true),
            SessionEffect::Record(record) => {
                let attempt = match &record {
                    lifeline_core::session::SessionRecord::ExecutionStarted { attempt, .. }
                    | lifeline_core::session::SessionRecord::ExecutionRejoined {
                        attempt, ..
                    } => Some(*attempt),
                    _ => None,
                };
                let request = self.request_id();
                let result = self.core.borrow_mut().as_mut().map(|core| {
                    core.handle_client(
                        super::SELF,
                        ClientRequest::RecordSession { request, record },
                        now(),
                    )
                });
                match result {
                    Some(Ok(())) => {
                        if let Some(a) = attempt {
                            self.awaiting_record.borrow_mut().insert(request, a);
                        }
                    }
                    Some(Err(rejection)) => self.rejected(&rejection),
                    None => {}
                }
            }
            SessionEffect::AdmitPrompt {
                session,
                turn,
                execution,
                generation,
            } => self.admit_prompt(session, turn, execution, generation),
            SessionEffect::Publish { .. } => {
                self.publish_status();
                self.refresh_facts();
            }
            SessionEffect::Activate {
                session,
                binding,
                prepared,
                rejoined,
            } => {
                if rejoined {
                    post(&ControllerToPage::RuntimeEnvironment {
                        runtime: binding.runtime,
                        generation: binding.generation,
                        env: wire_env(&prepared.env),
                    });
                }
                if prepared.note.is_some() {
                    notice("resume", Level::Info, Phrase::ResumedWithoutProfile);
                }
                *self.active.borrow_mut() = Some(Active {
                    session,
                    binding,
                    prepared,
                });
            }
            SessionEffect::RemoveWorkspace { workspace, .. } => {
                spawn_local(async move {
                    if let Err(e) = crate::storage::remove_workspace(workspace).await {
                        notice(
                            "workspace",
                            Level::Warning,
                            Phrase::WorkspaceNotDeleted {
                                detail: e.to_string(),
                            },
                        );
                    }
                });
            }
        }
    }

    /// A rejoin waits for its runtime to dial in: checked after every pump
    /// round (a hello is a runtime message, which pumps); the core's
    /// `AttemptTimer::Rejoin` ends the wait.
    pub(super) fn check_rejoin(self: &Rc<Self>) -> bool {
        let verdict = {
            let rejoining = self.rejoining.get();
            let core = self.core.borrow();
            let (Some((attempt, runtime, generation)), Some(core)) = (rejoining, core.as_ref())
            else {
                return false;
            };
            lifeline_core::session::rejoin_verdict(
                core.projection(),
                runtime,
                generation,
                core.is_attached(runtime),
            )
            .map(|result| (attempt, result))
        };
        let Some((attempt, result)) = verdict else {
            return false;
        };
        self.rejoining.set(None);
        self.with_sessions(|s| s.handle_loaded(attempt, result, now()));
        true
    }

    /// Before a launch: a launch whose acknowledgement was lost is looked
    /// for first (see `session::unacknowledged_launch`).
    fn launch(
        self: &Rc<Self>,
        attempt: StartupAttemptId,
        workspace: WorkspaceId,
        env: Vec<(String, Secret)>,
        existing_workspace: bool,
    ) {
        let candidate = {
            let core = self.core.borrow();
            let sessions = self.sessions.borrow();
            let bound = self
                .session
                .get()
                .and_then(|s| sessions.as_ref()?.binding(s).map(|b| b.runtime));
            core.as_ref().and_then(|c| {
                lifeline_core::session::unacknowledged_launch(c.projection(), workspace, bound)
            })
        };
        match candidate {
            Some((runtime, generation, execution)) => {
                *self.adopting.borrow_mut() = Some(PendingLaunch {
                    attempt,
                    workspace,
                    env,
                    existing_workspace,
                    found: (runtime, generation, execution),
                });
                self.with_sessions(|s| s.wait_for_lost_launch(attempt, runtime, generation, now()));
                self.pump();
            }
            None => self.start_runtime(attempt, workspace, env, existing_workspace),
        }
    }

    /// The wait for a lost launch (see `session::unacknowledged_launch`):
    /// checked after every pump round; if it dialed in, this attempt adopts
    /// it (the existing run is found) and gives it the current environment;
    /// the core's `AttemptTimer::Adoption` ends the wait otherwise
    /// (`SessionEffect::ReplaceLostLaunch`).
    pub(super) fn check_adoption(self: &Rc<Self>) -> bool {
        let verdict = {
            let pending = self.adopting.borrow();
            let core = self.core.borrow();
            let (Some(p), Some(core)) = (pending.as_ref(), core.as_ref()) else {
                return false;
            };
            let (runtime, generation, _) = p.found;
            lifeline_core::session::adoption_verdict(
                core.projection(),
                runtime,
                generation,
                core.is_attached(runtime),
            )
        };
        let Some(adopt) = verdict else {
            return false;
        };
        let Some(p) = self.adopting.borrow_mut().take() else {
            return false;
        };
        self.with_sessions(|s| s.end_lost_launch_wait(p.attempt));
        let (runtime, generation, execution) = p.found;
        if !adopt {
            self.start_runtime(p.attempt, p.workspace, p.env, p.existing_workspace);
            return true;
        }
        post(&ControllerToPage::RuntimeEnvironment {
            runtime,
            generation,
            env: wire_env(&p.env),
        });
        *self.launching.borrow_mut() = Some(Launching {
            attempt: p.attempt,
            request: self.request_id(),
            env: p.env,
            existing_workspace: p.existing_workspace,
            runtime: Some((runtime, generation)),
        });
        notice(
            "launch",
            Level::Info,
            Phrase::EarlierLaunchAnswered {
                runtime: runtime.to_string(),
                generation: generation.0,
            },
        );
        self.with_sessions(|s| s.handle_launched(p.attempt, execution, generation, runtime, now()));
        true
    }

    /// The core ended the wait for a lost launch: its outcome is unknown,
    /// said so, and only now does a new generation replace it.
    fn replace_lost_launch(self: &Rc<Self>, attempt: StartupAttemptId) {
        // Only this attempt's wait: another attempt's stays as it is.
        let pending = self.adopting.borrow_mut().take_if(|p| p.attempt == attempt);
        let Some(p) = pending else {
            return;
        };
        let (runtime, generation, _) = p.found;
        notice(
            "launch",
            Level::Warning,
            Phrase::EarlierLaunchRetired {
                runtime: runtime.to_string(),
                generation: generation.0,
            },
        );
        self.start_runtime(attempt, p.workspace, p.env, p.existing_workspace);
    }

    fn start_runtime(
        self: &Rc<Self>,
        attempt: StartupAttemptId,
        workspace: WorkspaceId,
        env: Vec<(String, Secret)>,
        existing_workspace: bool,
    ) {
        let request = self.request_id();
        let result = self.core.borrow_mut().as_mut().map(|core| {
            core.handle_client(
                super::SELF,
                ClientRequest::StartRuntime { request, workspace },
                now(),
            )
        });
        match result {
            Some(Ok(())) => {
                self.starting_runtime.set(true);
                *self.launching.borrow_mut() = Some(Launching {
                    attempt,
                    request,
                    env,
                    existing_workspace,
                    runtime: None,
                });
            }
            Some(Err(rejection)) => {
                self.with_sessions(|s| {
                    s.handle_launch_failed(
                        attempt,
                        LaunchFailure::Failed {
                            detail: rejection.to_string(),
                        },
                        now(),
                    )
                });
            }
            None => {}
        }
        self.pump();
    }

    /// The page needs the launch environment with the spawn order.
    pub(super) fn launch_env(&self, runtime: RuntimeId) -> (Vec<(String, SecretText)>, bool) {
        let launching = self.launching.borrow();
        match launching.as_ref() {
            Some(l) if l.runtime.is_none_or(|(r, _)| r == runtime) => {
                (wire_env(&l.env), l.existing_workspace)
            }
            _ => (Vec::new(), false),
        }
    }

    fn stop_runtime(
        self: &Rc<Self>,
        attempt: Option<StartupAttemptId>,
        runtime: RuntimeId,
        generation: Generation,
        escalate: bool,
    ) {
        if let Some(a) = attempt {
            self.stopping.borrow_mut().insert(runtime, a);
        }
        let request = self.request_id();
        let result = self.core.borrow_mut().as_mut().map(|core| {
            core.handle_client(
                super::SELF,
                ClientRequest::StopRuntime {
                    request,
                    runtime,
                    generation,
                },
                now(),
            )
        });
        match result {
            Some(Ok(())) => {}
            // Not (or no longer) a generation the journal holds: there is
            // nothing left to stop.
            Some(Err(_)) if !escalate => self.stopped_runtime(runtime, Ok(())),
            _ => {}
        }
        if escalate {
            post(&ControllerToPage::TerminateRuntime {
                runtime,
                generation,
            });
        }
    }

    /// A runtime this controller asked to stop has exited (or could not be
    /// terminated): settles the owning attempt's cleanup.
    pub(super) fn stopped_runtime(self: &Rc<Self>, runtime: RuntimeId, result: Result<(), String>) {
        let attempt = self.stopping.borrow_mut().remove(&runtime);
        if let Some(attempt) = attempt {
            self.with_sessions(|s| s.handle_cleanup(attempt, result, now()));
        }
    }

    /// A runtime exited on its own: the execution it carried has failed
    /// (resources retained), or the start waiting for it has.
    pub(super) fn runtime_lost(
        self: &Rc<Self>,
        runtime: RuntimeId,
        generation: Generation,
        detail: String,
    ) {
        if self.stopping.borrow().contains_key(&runtime) {
            return self.stopped_runtime(runtime, Ok(()));
        }
        let launching = self
            .launching
            .borrow()
            .as_ref()
            .filter(|l| l.runtime == Some((runtime, generation)))
            .map(|l| l.attempt);
        if let Some(attempt) = launching {
            self.launching.borrow_mut().take();
            self.with_sessions(|s| {
                s.handle_launch_failed(
                    attempt,
                    LaunchFailure::Failed {
                        detail: detail.clone(),
                    },
                    now(),
                )
            });
            return;
        }
        let active = self
            .active
            .borrow()
            .as_ref()
            .filter(|a| a.binding.runtime == runtime && a.binding.generation == generation)
            .map(|a| (a.session, a.binding.execution));
        if let Some((session, execution)) = active {
            self.active.borrow_mut().take();
            self.with_sessions(|s| {
                s.handle_execution_failed(
                    session,
                    execution,
                    generation,
                    FailureCause::RuntimeLost { detail },
                    now(),
                )
            });
        }
    }

    /// Answers from the core that the session layer waits for.
    pub(super) fn session_notified(self: &Rc<Self>, message: &ClientMessage) {
        match message {
            ClientMessage::RuntimeStarted {
                request,
                runtime,
                generation,
                execution,
                ..
            } => {
                let attempt = {
                    let mut launching = self.launching.borrow_mut();
                    match launching.as_mut() {
                        Some(l) if l.request == *request => {
                            l.runtime = Some((*runtime, *generation));
                            Some(l.attempt)
                        }
                        _ => None,
                    }
                };
                if let Some(attempt) = attempt {
                    self.with_sessions(|s| {
                        s.handle_launched(attempt, *execution, *generation, *runtime, now())
                    });
                }
            }
            ClientMessage::SessionRecorded { request } => {
                let attempt = self.awaiting_record.borrow_mut().remove(request);
                if let Some(attempt) = attempt {
                    self.with_sessions(|s| s.handle_recorded(attempt));
                }
            }
            ClientMessage::ProviderRequestRecorded {
                provider_request,
                existing,
                ..
            } => self.send_provider_request(*provider_request, *existing),
            ClientMessage::TurnFinished { turn, .. } => self.turn_finished(*turn),
            _ => {}
        }
    }

    /// The journal may record the running execution's runtime retired or
    /// gone without the page seeing the worker exit (it closed itself, its
    /// port went silent and the reattach window passed). The session layer
    /// hears of it here, fenced by the captured execution and generation.
    pub(super) fn check_active_runtime(self: &Rc<Self>) -> bool {
        let stopped = {
            let active = self.active.borrow();
            let core = self.core.borrow();
            let (Some(a), Some(core)) = (active.as_ref(), core.as_ref()) else {
                return false;
            };
            let status = core
                .projection()
                .runtime(a.binding.runtime)
                .filter(|(_, v)| v.generation == a.binding.generation)
                .map(|(_, v)| v.status);
            match status {
                Some(lifeline_core::RuntimeStatus::Current) => None,
                Some(lifeline_core::RuntimeStatus::Retired { cause }) => {
                    Some(format!("the journal retired it ({cause:?})"))
                }
                Some(lifeline_core::RuntimeStatus::Gone { cause }) => {
                    Some(format!("the journal records it gone ({cause:?})"))
                }
                None => Some("the journal does not know it".to_string()),
            }
            .map(|detail| (a.binding.runtime, a.binding.generation, detail))
        };
        let Some((runtime, generation, detail)) = stopped else {
            return false;
        };
        self.runtime_lost(runtime, generation, detail);
        true
    }

    /// A launched runtime that attached is ready.
    pub(super) fn check_ready(self: &Rc<Self>) -> bool {
        let ready = {
            let launching = self.launching.borrow();
            let core = self.core.borrow();
            match (launching.as_ref(), core.as_ref()) {
                (
                    Some(Launching {
                        attempt,
                        runtime: Some((r, _)),
                        ..
                    }),
                    Some(core),
                ) if core.is_attached(*r) => Some(*attempt),
                _ => None,
            }
        };
        let Some(attempt) = ready else { return false };
        self.launching.borrow_mut().take();
        self.starting_runtime.set(false);
        self.with_sessions(|s| s.handle_ready(attempt));
        true
    }

    // ----- turns ---------------------------------------------------------------

    fn admit_prompt(
        self: &Rc<Self>,
        session: SessionId,
        turn: TurnId,
        execution: ExecutionId,
        generation: Generation,
    ) {
        let Some(text) = self.prompts.borrow_mut().remove(&turn) else {
            return;
        };
        let agent_and_plan = {
            let active = self.active.borrow();
            let Some(a) = active.as_ref().filter(|a| a.binding.execution == execution) else {
                return self.refuse_turn(
                    session,
                    turn,
                    execution,
                    generation,
                    Phrase::SessionStoppedResend,
                );
            };
            match (&a.prepared.provider, a.binding.profile.clone()) {
                (Provider::BuiltIn, _) | (_, None) => agent::plan(&text)
                    .map(|plan| (TurnAgent::BuiltIn, plan.commands))
                    .map_err(|error| Phrase::Plan { error }),
                (provider, Some(profile)) => Ok((
                    TurnAgent::Model {
                        profile,
                        provider: provider.label().into(),
                        model: provider.model().unwrap_or_default().into(),
                        budget: a.prepared.budget,
                        tools: a.prepared.capabilities.tools.clone(),
                    },
                    Vec::new(),
                )),
            }
        };
        let (agent_kind, plan) = match agent_and_plan {
            Ok(x) => x,
            Err(message) => return self.refuse_turn(session, turn, execution, generation, message),
        };
        let result = self.core.borrow_mut().as_mut().map(|core| {
            core.handle_client(
                super::SELF,
                ClientRequest::RecordTurn {
                    request: self.request_id(),
                    session,
                    turn,
                    prompt: text,
                    plan,
                    agent: agent_kind,
                },
                now(),
            )
        });
        if let Some(Err(rejection)) = result {
            self.refuse_turn(
                session,
                turn,
                execution,
                generation,
                Phrase::RequestRejected {
                    detail: rejection.to_string(),
                },
            );
        }
    }

    fn refuse_turn(
        self: &Rc<Self>,
        session: SessionId,
        turn: TurnId,
        execution: ExecutionId,
        generation: Generation,
        message: Phrase,
    ) {
        post(&ControllerToPage::PromptRefused { turn, message });
        self.with_sessions(|s| {
            s.handle_turn_finished(session, turn, execution, generation, None, now())
        });
    }

    /// The turn's end is durable: tell the session layer (a failed model
    /// turn is a recoverable failure of its execution).
    fn turn_finished(self: &Rc<Self>, turn: TurnId) {
        let info = {
            let guard = self.core.borrow();
            let Some(core) = guard.as_ref() else { return };
            core.projection().turns.get(&turn).map(|t| {
                let failure = (t.agent.is_model()
                    && t.end
                        .as_ref()
                        .is_some_and(|e| e.status == TurnStatus::Failed))
                .then(|| t.end.as_ref().map(|e| e.reply.clone()).unwrap_or_default());
                (t.session, failure)
            })
        };
        let Some((session, failure)) = info else {
            return;
        };
        let binding = self
            .active
            .borrow()
            .as_ref()
            .filter(|a| a.session == session)
            .map(|a| (a.binding.execution, a.binding.generation));
        let Some((execution, generation)) = binding else {
            return;
        };
        let failure = failure.map(|f| f.chars().take(1000).collect::<String>());
        self.with_sessions(|s| {
            s.handle_turn_finished(session, turn, execution, generation, failure, now())
        });
    }

    /// Drives the open turn one step. Returns true when it asked the core
    /// for something.
    pub(super) fn drive_turn(self: &Rc<Self>) -> bool {
        let Some(session) = self.session.get() else {
            return false;
        };
        let live = self.live.borrow().as_ref().map(|l| l.request);
        let step = {
            let guard = self.core.borrow();
            let Some(core) = guard.as_ref() else {
                return false;
            };
            let p = core.pending_projection();
            let Some(turn) = agent::open_turn(p, session) else {
                return false;
            };
            model::next_turn_step(p, turn, live, now()).map(|s| (turn, s))
        };
        let Some((turn, step)) = step else {
            return false;
        };
        match step {
            TurnStep::BuiltIn(agent::Step::Admit { index, line }) => {
                self.admit_command(turn, agent::plan_key(turn, index), line)
            }
            TurnStep::Model(ModelStep::AdmitTool { key, line, .. }) => {
                self.admit_command(turn, key, line)
            }
            TurnStep::BuiltIn(agent::Step::Finish { status, reply })
            | TurnStep::Model(ModelStep::Finish { status, reply }) => {
                let mut guard = self.core.borrow_mut();
                let Some(core) = guard.as_mut() else {
                    return false;
                };
                self.ask(core, |request| ClientRequest::FinishTurn {
                    request,
                    turn,
                    status,
                    reply,
                })
            }
            TurnStep::Model(ModelStep::Request { step, conversation }) => {
                self.record_provider_request(turn, step, conversation)
            }
            TurnStep::BuiltIn(agent::Step::Wait { .. }) | TurnStep::Model(ModelStep::Wait) => false,
        }
    }

    fn admit_command(
        self: &Rc<Self>,
        turn: TurnId,
        key: lifeline_core::IdempotencyKey,
        line: String,
    ) -> bool {
        let binding = {
            let active = self.active.borrow();
            let guard = self.core.borrow();
            let (Some(a), Some(core)) = (active.as_ref(), guard.as_ref()) else {
                return false;
            };
            let p = core.pending_projection();
            let Some(workspace) = p.sessions.get(&a.session).map(|s| s.workspace) else {
                return false;
            };
            let Some((lease, _)) = p.runtime(a.binding.runtime) else {
                return false;
            };
            Binding {
                workspace,
                lease: lease.lease,
                generation: a.binding.generation,
                runtime: a.binding.runtime,
                session: a.session,
                working_directory: "/".into(),
                capabilities: a.prepared.capabilities.command_capabilities(),
                budget: Budget {
                    deadline: now().plus(COMMAND_WALL_TIME_MS),
                    max_output_bytes: COMMAND_OUTPUT_BYTES,
                },
                command_line: line,
            }
        };
        let _ = turn;
        let mut guard = self.core.borrow_mut();
        let Some(core) = guard.as_mut() else {
            return false;
        };
        self.ask(core, |request| ClientRequest::Admit {
            request,
            key,
            binding,
        })
    }

    fn record_provider_request(
        self: &Rc<Self>,
        turn: TurnId,
        step: u32,
        conversation: Vec<ModelMessage>,
    ) -> bool {
        if self.live.borrow().is_some() {
            return false;
        }
        let (Some(id), Ok(abort)) = (mint(ProviderRequestId::from_u128), AbortController::new())
        else {
            return false;
        };
        // Owned from here: the step is not "lost" while it is being recorded.
        *self.live.borrow_mut() = Some(Live {
            request: id,
            turn,
            abort,
        });
        self.conversations.borrow_mut().insert(id, conversation);
        let asked = {
            let mut guard = self.core.borrow_mut();
            let Some(core) = guard.as_mut() else {
                return false;
            };
            self.ask(core, |request| ClientRequest::RecordProviderRequest {
                request,
                provider_request: id,
                turn,
                step,
            })
        };
        if !asked {
            self.live.borrow_mut().take();
            self.conversations.borrow_mut().remove(&id);
        }
        asked
    }

    /// The request record is durable: send it, once.
    fn send_provider_request(self: &Rc<Self>, id: ProviderRequestId, existing: bool) {
        let conversation = self.conversations.borrow_mut().remove(&id);
        let owned = self.live.borrow().as_ref().is_some_and(|l| l.request == id);
        let (Some(conversation), false, true) = (conversation, existing, owned) else {
            return;
        };
        let call = {
            let active = self.active.borrow();
            active.as_ref().and_then(|a| {
                provider_kind(&a.prepared.provider).map(|(kind, base, model)| {
                    (
                        provider::endpoint(kind, base, model),
                        a.prepared.api_key.clone(),
                        provider::tool_names(&a.prepared.capabilities.tools),
                    )
                })
            })
        };
        let Some((endpoint, api_key, tools)) = call else {
            self.record_provider_outcome(
                id,
                Err(provider::Failure {
                    class: lifeline_core::journal::ProviderFailureClass::InvalidRequest,
                    message: "this execution has no model provider; resume the session".into(),
                    partial_text: String::new(),
                }),
            );
            return;
        };
        let abort = match self.live.borrow().as_ref() {
            Some(l) => l.abort.clone(),
            None => return,
        };
        let turn = self.live.borrow().as_ref().map(|l| l.turn);
        let shell = self.clone();
        spawn_local(async move {
            let conversation = provider::conversation(&conversation);
            let mut preview = String::new();
            let result = provider::stream(
                &endpoint,
                api_key.as_ref().map(|k| k.expose()),
                &conversation,
                &tools,
                &abort,
                |delta| {
                    preview.push_str(delta);
                    if let Some(turn) = turn {
                        post(&ControllerToPage::Streaming {
                            turn,
                            text: preview.clone(),
                        });
                    }
                },
            )
            .await;
            shell.record_provider_outcome(id, result);
        });
    }

    fn record_provider_outcome(
        self: &Rc<Self>,
        id: ProviderRequestId,
        result: Result<lifeline_provider::Reply, provider::Failure>,
    ) {
        let request = self.request_id();
        let message = match result {
            Ok(reply) => ClientRequest::RecordProviderReply {
                request,
                provider_request: id,
                text: reply.text.clone(),
                tool_calls: provider::tool_records(&reply),
                stop: provider::stop_text(&reply),
                input_tokens: reply.usage.input_tokens,
                output_tokens: reply.usage.output_tokens,
            },
            Err(f) => ClientRequest::RecordProviderFailure {
                request,
                provider_request: id,
                class: f.class,
                message: f.message,
                partial_text: f.partial_text,
            },
        };
        let result = self
            .core
            .borrow_mut()
            .as_mut()
            .map(|core| core.handle_client(super::SELF, message, now()));
        // Ownership ends once the outcome is in the journal's hands; a
        // refusal (the turn ended meanwhile) leaves the request uncertain.
        if self.live.borrow().as_ref().is_some_and(|l| l.request == id) {
            self.live.borrow_mut().take();
        }
        if let Some(Err(rejection)) = result {
            self.rejected(&rejection);
        }
        self.pump();
    }

    // ----- profiles --------------------------------------------------------------

    pub(super) async fn publish_profiles(&self) {
        let Some(config) = self.config() else { return };
        let listed = match config.list_profiles().await {
            Ok(l) => l,
            Err(e) => {
                notice(
                    "profiles",
                    Level::Error,
                    Phrase::ProfilesUnreadable {
                        detail: e.to_string(),
                    },
                );
                return;
            }
        };
        let mut profiles = Vec::new();
        let mut errors = Vec::new();
        for p in listed {
            match p {
                Ok(p) => profiles.push(summary(&p)),
                Err(e) => errors.push(e),
            }
        }
        post(&ControllerToPage::Profiles { profiles, errors });
        self.publish_status();
    }

    pub fn save_profile(self: &Rc<Self>, input: ProfileInput) {
        let Some(config) = self.config() else {
            return notice("profiles", Level::Error, Phrase::ProfilesNotOpen);
        };
        let shell = self.clone();
        spawn_local(async move {
            match save(&config, input).await {
                Ok(name) => notice("profiles", Level::Info, Phrase::ProfileSaved { name }),
                Err(e) => notice("profiles", Level::Error, e),
            }
            shell.publish_profiles().await;
        });
    }

    pub fn delete_profile(self: &Rc<Self>, id: ProfileId) {
        let Some(config) = self.config() else { return };
        let shell = self.clone();
        spawn_local(async move {
            // The profile's own keys go with it; nothing else refers to them.
            if let ProfileLookup::Found(p) = config.lookup_profile(id).await {
                for c in p.credential_refs() {
                    let _ = config.delete_credential(c).await;
                }
            }
            if let Err(e) = config.delete_profile(id).await {
                notice(
                    "profiles",
                    Level::Error,
                    Phrase::ProfileNotDeleted {
                        detail: e.to_string(),
                    },
                );
            }
            shell.publish_profiles().await;
        });
    }

    pub fn select_profile(self: &Rc<Self>, id: ProfileId) {
        let result = {
            let mut guard = self.sessions.borrow_mut();
            let (Some(s), Some(session)) = (guard.as_mut(), self.session.get()) else {
                return;
            };
            // A session that already ran switches at once (a new execution
            // on the same workspace); a new one uses it for its first message.
            s.select_profile(session, id).and_then(|()| {
                if s.binding(session).is_some()
                    && s.trace(session).is_some_and(|t| t.owner.is_none())
                {
                    s.begin(session, Purpose::Launch, None, None, now())
                        .map(|_| ())
                } else {
                    Ok(())
                }
            })
        };
        if let Err(r) = result {
            notice("profiles", Level::Warning, Phrase::Refused { refusal: r });
        }
        self.pump();
    }

    /// The lifecycle part of the status line.
    pub(super) fn lifecycle_status(&self) -> (Option<SessionStatus>, bool) {
        let guard = self.sessions.borrow();
        let (Some(s), Some(session)) = (guard.as_ref(), self.session.get()) else {
            return (None, false);
        };
        let Some(trace) = s.trace(session) else {
            return (None, false);
        };
        let (state, message, can_resume, busy) = match &trace.state {
            SessionState::New => ("new", None, false, false),
            SessionState::Starting { .. } => ("starting", None, false, true),
            SessionState::Running => ("running", None, false, false),
            SessionState::Detached => ("detached", None, true, false),
            SessionState::Cancelling { .. } => ("cancelling", None, false, true),
            SessionState::Cancelled => ("cancelled", None, trace.token.is_some(), false),
            SessionState::Failed(f) => (
                "failed",
                Some(f.cause.to_string()),
                trace.token.is_some(),
                false,
            ),
            SessionState::Archived => ("archived", None, false, false),
        };
        let status = SessionStatus {
            state: state.into(),
            message,
            can_resume,
            selected_profile: s.selected_profile(session),
            execution_profile: s
                .binding(session)
                .and_then(|b| b.profile.as_ref().map(|p| p.id)),
            queued: trace.queued.len(),
            folder: s
                .environment(session)
                .and_then(lifeline_core::environment::FolderRef::of),
        };
        (Some(status), busy)
    }
}

fn summary(p: &Profile) -> ProfileSummary {
    let key_env = p.env.iter().find_map(|v| match v.value {
        EnvValue::Secret(id) if Some(id) == p.api_key => Some(v.name.clone()),
        _ => None,
    });
    ProfileSummary {
        id: p.id,
        revision: p.revision,
        name: p.name.clone(),
        provider: p.provider.clone(),
        has_key: p.api_key.is_some(),
        env: p
            .env
            .iter()
            .filter_map(|v| match &v.value {
                EnvValue::Literal(s) => Some((v.name.clone(), s.clone())),
                EnvValue::Secret(_) => None,
            })
            .collect(),
        key_env,
        capabilities: p.capabilities.clone(),
        budget: p.budget,
    }
}

/// Creates or edits a profile. The key is stored first under a fresh
/// credential id, so a failed profile write leaves the old profile whole.
async fn save(config: &ConfigStore, input: ProfileInput) -> Result<String, Phrase> {
    let existing = match input.id {
        Some(id) => match config.lookup_profile(id).await {
            ProfileLookup::Found(p) => Some(p),
            ProfileLookup::Deleted => return Err(Phrase::ProfileDeletedMeanwhile),
            // An unreadable record may be repaired by saving over it.
            ProfileLookup::Failed { .. } => None,
        },
        None => None,
    };
    let id = match input.id.or_else(|| mint(ProfileId::from_u128)) {
        Some(id) => id,
        None => return Err(Phrase::NoIdMade),
    };
    let old_key = existing.as_ref().and_then(|p| p.api_key);
    let (api_key, new_key) = match input.api_key {
        KeyInput::Keep => (old_key, None),
        KeyInput::Clear => (None, None),
        KeyInput::Set(secret) => {
            let Some(cid) = mint(CredentialId::from_u128) else {
                return Err(Phrase::NoIdMade);
            };
            let label = format!("{} key", input.name.trim());
            config
                .put_credential(cid, &label, &Secret::new(secret.0))
                .await
                .map_err(|e| Phrase::KeyNotStored {
                    detail: e.to_string(),
                })?;
            (Some(cid), Some(cid))
        }
    };
    let mut env: Vec<EnvVar> = input
        .env
        .into_iter()
        .map(|(name, value)| EnvVar {
            name,
            value: EnvValue::Literal(value),
        })
        .collect();
    if let Some(name) = input.key_env.filter(|n| !n.trim().is_empty()) {
        let Some(key) = api_key else {
            return Err(Phrase::NoKeyForCommands);
        };
        env.push(EnvVar {
            name: name.trim().to_string(),
            value: EnvValue::Secret(key),
        });
    }
    let profile = Profile {
        id,
        revision: existing.as_ref().map_or(1, |p| p.revision + 1),
        owner: OWNER.into(),
        name: input.name.trim().to_string(),
        provider: input.provider,
        api_key,
        env,
        capabilities: input.capabilities,
        budget: AgentBudget {
            max_steps: input.budget.max_steps.max(1),
            max_commands: input.budget.max_commands,
            max_tokens: input.budget.max_tokens.max(1),
            max_wall_ms: input.budget.max_wall_ms.max(1000),
        },
    };
    if let Err(e) = profile.validate() {
        if let Some(k) = new_key {
            let _ = config.delete_credential(k).await;
        }
        return Err(Phrase::ProfileInvalid {
            detail: e.to_string(),
        });
    }
    if let Err(e) = config.put_profile(&profile).await {
        if let Some(k) = new_key {
            let _ = config.delete_credential(k).await;
        }
        return Err(Phrase::ProfileNotSaved {
            detail: e.to_string(),
        });
    }
    // The replaced key is no longer referenced by anything.
    if old_key != api_key {
        if let Some(old) = old_key {
            let _ = config.delete_credential(old).await;
        }
    }
    Ok(profile.name)
}
