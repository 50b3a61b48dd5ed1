//! Carrying out the session layer's effects: profile lookups and the launch
//! checkpoint (through the shell), runtime launches and stops (through the
//! core), rejoin and lost-launch adoption waits, readiness, and cleanup.
//! Every continuation goes back through [`Sessions`], which drops it when
//! its attempt no longer owns the session.

use lifeline_core::environment::FolderAccess;
use lifeline_core::phrase::Phrase;
use lifeline_core::profile::{CredentialFailure, ProfileLookup, Secret};
use lifeline_core::session::{Environment, ExecutionBinding, Prepared, SessionEffect, Sessions};
use lifeline_core::session_record::{
    FailureCause, LaunchFailure, Purpose, ResumeCause, RuntimeEnd, SessionRecord,
};
use lifeline_core::{
    ClientMessage, ClientRequest, CredentialId, ExecutionId, FolderId, Generation, Millis,
    ProfileId, RequestId, RuntimeId, RuntimeStatus, SessionId, StartupAttemptId, WorkspaceId,
};
use lifeline_protocol::{ControllerToPage, Level, SecretText};

use crate::{Effect, Engine, TimerKey};

/// What a running execution works with, from the launch checkpoint.
pub(crate) struct Active {
    pub session: SessionId,
    pub binding: ExecutionBinding,
    pub prepared: Prepared,
}

/// What a launch starts with (its environment holds secrets, kept only
/// until the runtime has it).
pub(crate) struct Launch {
    pub workspace: WorkspaceId,
    pub env: Vec<(String, Secret)>,
    pub existing_workspace: bool,
}

/// A runtime start an attempt asked for.
pub(crate) struct Launching {
    pub attempt: StartupAttemptId,
    pub request: RequestId,
    pub env: Vec<(String, Secret)>,
    pub existing_workspace: bool,
    /// Set once the core assigned it.
    pub runtime: Option<(RuntimeId, Generation)>,
}

/// A launch waiting for a lost launch to dial in.
pub(crate) struct PendingLaunch {
    attempt: StartupAttemptId,
    launch: Launch,
    found: (RuntimeId, Generation, ExecutionId),
}

pub(crate) fn wire_env(env: &[(String, Secret)]) -> Vec<(String, SecretText)> {
    env.iter()
        .map(|(k, v)| (k.clone(), SecretText(v.expose().to_string())))
        .collect()
}

impl Engine {
    /// The profile store is open and `default` exists: the session layer is
    /// rebuilt from its records and brought up the way it was left.
    pub fn start_sessions(&mut self, default: ProfileId, entropy: &[u8], now: Millis) {
        let Some(core) = self.core.as_ref() else {
            return;
        };
        if self.sessions.is_some() {
            return;
        }
        let p = core.pending_projection();
        let records: Vec<_> = p.lifecycles.values().flatten().cloned().collect();
        let workspace = self
            .session
            .and_then(|s| p.sessions.get(&s))
            .map(|s| s.workspace);
        let mut sessions = Sessions::recover(entropy, &records);
        match (self.session, workspace) {
            // A session from before lifecycles were recorded starts without
            // a binding: its next message launches anew.
            (Some(s), Some(w)) => sessions.create(s, w, Environment::Worker, default),
            _ => {
                let Some((session, workspace)) = self.open_session(now) else {
                    return;
                };
                self.session = Some(session);
                sessions.create(session, workspace, Environment::Worker, default);
            }
        }
        // A new session launches with its profile; a bound one rejoins its
        // retained runtime (falling back to a new generation on the same
        // workspace only when the journal confirms the old one gone). A
        // failed one waits for the user.
        if let Some(session) = self.session {
            let turn_open = self.turn_open(session);
            crate::open::start_or_resume(&mut sessions, session, turn_open, now);
        }
        self.sessions = Some(sessions);
        self.pump(now);
        self.refresh_facts();
        for (turn, text) in std::mem::take(&mut self.early_prompts) {
            self.handle_prompt(turn, text, now);
        }
    }

    /// The profile store could not be opened or has no default profile.
    pub fn handle_profiles_unavailable(&mut self, reason: Phrase) {
        self.notice("profiles", Level::Error, reason);
    }

    /// Opens a new session on a new workspace in the journal, under fresh
    /// identities; `None` if the core refused.
    pub(crate) fn open_session(&mut self, now: Millis) -> Option<(SessionId, WorkspaceId)> {
        let session = self.mint(SessionId::from_u128, now)?;
        let workspace = self.mint(WorkspaceId::from_u128, now)?;
        self.open_session_as(session, workspace, now)
            .then_some((session, workspace))
    }

    /// Opens `session` on `workspace` in the journal; false if the core
    /// refused (the refusal is reported).
    pub(crate) fn open_session_as(
        &mut self,
        session: SessionId,
        workspace: WorkspaceId,
        now: Millis,
    ) -> bool {
        self.ask(
            |request| ClientRequest::OpenSession {
                request,
                session,
                workspace,
                title: "Session".into(),
            },
            now,
        )
    }

    pub(crate) fn with_sessions<R>(&mut self, f: impl FnOnce(&mut Sessions) -> R) -> Option<R> {
        self.sessions.as_mut().map(f)
    }

    pub(crate) fn session_effect(&mut self, effect: SessionEffect, now: Millis) {
        match effect {
            SessionEffect::LookupProfile { attempt, profile } => self
                .effects
                .push_back(Effect::LookupProfile { attempt, profile }),
            SessionEffect::ResolveCredentials {
                attempt,
                credentials,
            } => self.effects.push_back(Effect::ResolveCredentials {
                attempt,
                credentials,
            }),
            SessionEffect::LoadExecution {
                attempt,
                runtime,
                generation,
                ..
            } => self.rejoining = Some((attempt, runtime, generation)),
            SessionEffect::Launch {
                attempt,
                workspace,
                environment,
                existing_workspace,
                env,
                ..
            } => {
                let launch = Launch {
                    workspace,
                    env,
                    existing_workspace,
                };
                // A local folder is the user's: it is never created or
                // checked for in the sandbox, only observed (no prompt; the
                // page asks on the click that resumes).
                if matches!(environment, Environment::LocalFolder { .. }) || existing_workspace {
                    self.preparing.insert(attempt, launch);
                    self.effects.push_back(Effect::ObserveWorkspace {
                        attempt,
                        workspace,
                        environment,
                    });
                } else {
                    self.launch(attempt, launch, now);
                }
            }
            SessionEffect::SetTimer { attempt, timer, at } => {
                self.next_timer += 1;
                self.attempt_timers
                    .insert(self.next_timer, (attempt, timer));
                self.set_timer(TimerKey::Attempt(self.next_timer), at);
            }
            SessionEffect::ReplaceLostLaunch { attempt, .. } => {
                self.replace_lost_launch(attempt, now)
            }
            SessionEffect::CancelWaits { attempt } => {
                if self.adopting.as_ref().is_some_and(|p| p.attempt == attempt) {
                    self.adopting = None;
                }
                if self.rejoining.is_some_and(|(a, _, _)| a == attempt) {
                    self.rejoining = None;
                }
                self.preparing.remove(&attempt);
                if self
                    .launching
                    .as_ref()
                    .is_some_and(|l| l.attempt == attempt)
                {
                    self.launching = None;
                }
            }
            SessionEffect::CancelRuntime {
                attempt,
                runtime,
                generation,
                ..
            } => self.stop_runtime(Some(attempt), runtime, generation, false, now),
            SessionEffect::TerminateRuntime {
                attempt,
                runtime,
                generation,
                ..
            } => self.stop_runtime(attempt, runtime, generation, true, now),
            SessionEffect::Record(record) => {
                let attempt = match &record {
                    SessionRecord::ExecutionStarted { attempt, .. }
                    | SessionRecord::ExecutionRejoined { attempt, .. } => Some(*attempt),
                    _ => None,
                };
                let result = self.submit(
                    |request| ClientRequest::RecordSession { request, record },
                    now,
                );
                match result {
                    Some((request, Ok(()))) => {
                        if let Some(a) = attempt {
                            self.awaiting_record.insert(request, a);
                        }
                    }
                    Some((_, Err(rejection))) => self.rejected(&rejection),
                    None => {}
                }
            }
            SessionEffect::AdmitPrompt {
                session,
                turn,
                execution,
                generation,
            } => self.admit_prompt(session, turn, execution, generation, now),
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
                    self.post(ControllerToPage::RuntimeEnvironment {
                        runtime: binding.runtime,
                        generation: binding.generation,
                        env: wire_env(&prepared.env),
                    });
                }
                if prepared.note.is_some() {
                    self.notice("resume", Level::Info, Phrase::ResumedWithoutProfile);
                }
                self.active.insert(
                    session,
                    Active {
                        session,
                        binding,
                        prepared,
                    },
                );
            }
            SessionEffect::ReturnPrompts { turns, .. } => {
                for turn in turns {
                    // Once per prompt this engine holds; a continuation is
                    // the card's, not typed: the card offers it again.
                    let held = self.prompts.remove(&turn).is_some();
                    if self.continuations.remove(&turn).is_some() || !held {
                        continue;
                    }
                    self.post(ControllerToPage::PromptRefused {
                        turn,
                        message: Phrase::SessionStoppedResend,
                    });
                }
            }
            SessionEffect::RemoveWorkspace { session, workspace } => self
                .effects
                .push_back(Effect::RemoveWorkspace { session, workspace }),
        }
    }

    /// The profile an attempt asked for.
    pub fn handle_profile(
        &mut self,
        attempt: StartupAttemptId,
        lookup: ProfileLookup,
        now: Millis,
    ) {
        self.with_sessions(|s| s.handle_profile(attempt, lookup, now));
        self.pump(now);
    }

    /// The credentials an attempt asked for, decrypted (or not).
    pub fn handle_credentials(
        &mut self,
        attempt: StartupAttemptId,
        resolved: Vec<(CredentialId, Result<Secret, CredentialFailure>)>,
        now: Millis,
    ) {
        self.with_sessions(|s| s.handle_credentials(attempt, resolved, now));
        self.pump(now);
    }

    /// What the shell saw where a launch will run.
    pub fn handle_workspace_observed(
        &mut self,
        attempt: StartupAttemptId,
        environment: &Environment,
        observed: crate::WorkspaceObserved,
        now: Millis,
    ) {
        let Some(launch) = self.preparing.remove(&attempt) else {
            return self.pump(now);
        };
        let failure = match (environment, observed) {
            (Environment::LocalFolder { name, .. }, crate::WorkspaceObserved::Folder(access))
                if access != FolderAccess::Granted =>
            {
                Some(LaunchFailure::Folder {
                    name: name.clone(),
                    access,
                })
            }
            (Environment::Worker, crate::WorkspaceObserved::Sandbox(exists))
                if launch.existing_workspace && exists != Some(true) =>
            {
                Some(LaunchFailure::WorkspaceMissing)
            }
            _ => None,
        };
        match failure {
            Some(failure) => {
                self.with_sessions(|s| s.handle_launch_failed(attempt, failure, now));
            }
            None => self.launch(attempt, launch, now),
        }
        self.pump(now);
    }

    /// A rejoin waits for its runtime to dial in: checked after every pump
    /// round; the core's `AttemptTimer::Rejoin` ends the wait.
    pub(crate) fn check_rejoin(&mut self, now: Millis) -> bool {
        let (Some((attempt, runtime, generation)), Some(core)) = (self.rejoining, &self.core)
        else {
            return false;
        };
        let Some(result) = lifeline_core::session::rejoin_verdict(
            core.projection(),
            runtime,
            generation,
            core.is_attached(runtime),
        ) else {
            return false;
        };
        self.rejoining = None;
        self.with_sessions(|s| s.handle_loaded(attempt, result, now));
        true
    }

    /// Before a launch: a launch whose acknowledgement was lost is looked
    /// for first (see `session::unacknowledged_launch`).
    fn launch(&mut self, attempt: StartupAttemptId, launch: Launch, now: Millis) {
        let bound = self
            .session
            .and_then(|s| self.sessions.as_ref()?.binding(s).map(|b| b.runtime));
        let candidate = self.core.as_ref().and_then(|c| {
            lifeline_core::session::unacknowledged_launch(c.projection(), launch.workspace, bound)
        });
        match candidate {
            Some((runtime, generation, execution)) => {
                self.adopting = Some(PendingLaunch {
                    attempt,
                    launch,
                    found: (runtime, generation, execution),
                });
                self.with_sessions(|s| s.wait_for_lost_launch(attempt, runtime, generation, now));
            }
            None => self.start_runtime(attempt, launch, now),
        }
    }

    /// The wait for a lost launch: if it dialed in, this attempt adopts it
    /// and gives it the current environment; the core's
    /// `AttemptTimer::Adoption` ends the wait otherwise
    /// (`SessionEffect::ReplaceLostLaunch`).
    pub(crate) fn check_adoption(&mut self, now: Millis) -> bool {
        let (Some(p), Some(core)) = (&self.adopting, &self.core) else {
            return false;
        };
        let (runtime, generation, execution) = p.found;
        let Some(adopt) = lifeline_core::session::adoption_verdict(
            core.projection(),
            runtime,
            generation,
            core.is_attached(runtime),
        ) else {
            return false;
        };
        let Some(p) = self.adopting.take() else {
            return false;
        };
        self.with_sessions(|s| s.end_lost_launch_wait(p.attempt));
        if !adopt {
            self.start_runtime(p.attempt, p.launch, now);
            return true;
        }
        self.post(ControllerToPage::RuntimeEnvironment {
            runtime,
            generation,
            env: wire_env(&p.launch.env),
        });
        let request = self.request_id();
        self.launching = Some(Launching {
            attempt: p.attempt,
            request,
            env: p.launch.env,
            existing_workspace: p.launch.existing_workspace,
            runtime: Some((runtime, generation)),
        });
        self.notice(
            "launch",
            Level::Info,
            Phrase::EarlierLaunchAnswered {
                runtime: runtime.to_string(),
                generation: generation.0,
            },
        );
        self.with_sessions(|s| s.handle_launched(p.attempt, execution, generation, runtime, now));
        true
    }

    /// The core ended the wait for a lost launch: its outcome is unknown,
    /// said so, and only now does a new generation replace it.
    fn replace_lost_launch(&mut self, attempt: StartupAttemptId, now: Millis) {
        // Only this attempt's wait: another attempt's stays as it is.
        if self.adopting.as_ref().is_none_or(|p| p.attempt != attempt) {
            return;
        }
        let Some(p) = self.adopting.take() else {
            return;
        };
        let (runtime, generation, _) = p.found;
        self.notice(
            "launch",
            Level::Warning,
            Phrase::EarlierLaunchRetired {
                runtime: runtime.to_string(),
                generation: generation.0,
            },
        );
        self.start_runtime(attempt, p.launch, now);
    }

    fn start_runtime(&mut self, attempt: StartupAttemptId, launch: Launch, now: Millis) {
        let workspace = launch.workspace;
        let result = self.submit(
            |request| ClientRequest::StartRuntime { request, workspace },
            now,
        );
        match result {
            Some((request, Ok(()))) => {
                self.launching = Some(Launching {
                    attempt,
                    request,
                    env: launch.env,
                    existing_workspace: launch.existing_workspace,
                    runtime: None,
                });
            }
            Some((_, Err(rejection))) => {
                self.with_sessions(|s| {
                    s.handle_launch_failed(
                        attempt,
                        LaunchFailure::Refused {
                            code: rejection.kind().as_str().to_owned(),
                        },
                        now,
                    )
                });
            }
            None => {}
        }
    }

    /// The page needs the launch environment with the spawn order.
    pub(crate) fn launch_env(&self, runtime: RuntimeId) -> (Vec<(String, SecretText)>, bool) {
        match self.launching.as_ref() {
            Some(l) if l.runtime.is_none_or(|(r, _)| r == runtime) => {
                (wire_env(&l.env), l.existing_workspace)
            }
            _ => (Vec::new(), false),
        }
    }

    /// The local folder a workspace's session runs in, if it runs in one.
    pub(crate) fn folder_of(&self, workspace: WorkspaceId) -> Option<FolderId> {
        let (core, sessions) = (self.core.as_ref()?, self.sessions.as_ref()?);
        core.pending_projection()
            .sessions
            .values()
            .filter(|v| v.workspace == workspace)
            .find_map(|v| sessions.environment(v.session)?.folder())
    }

    fn stop_runtime(
        &mut self,
        attempt: Option<StartupAttemptId>,
        runtime: RuntimeId,
        generation: Generation,
        escalate: bool,
        now: Millis,
    ) {
        if let Some(a) = attempt {
            self.stopping.insert(runtime, a);
        }
        let result = self.submit(
            |request| ClientRequest::StopRuntime {
                request,
                runtime,
                generation,
            },
            now,
        );
        // Not (or no longer) a generation the journal holds: there is
        // nothing left to stop.
        if let Some((_, Err(_))) = result {
            if !escalate {
                self.stopped_runtime(runtime, Ok(()), now);
            }
        }
        if escalate {
            self.post(ControllerToPage::TerminateRuntime {
                runtime,
                generation,
            });
        }
    }

    /// A runtime this engine asked to stop has exited (or could not be
    /// terminated): settles the owning attempt's cleanup.
    pub(crate) fn stopped_runtime(
        &mut self,
        runtime: RuntimeId,
        result: Result<(), String>,
        now: Millis,
    ) {
        if let Some(attempt) = self.stopping.remove(&runtime) {
            self.with_sessions(|s| s.handle_cleanup(attempt, result, now));
        }
    }

    /// A runtime exited on its own: the execution it carried has failed
    /// (resources retained), or the start waiting for it has.
    pub(crate) fn runtime_lost(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        detail: String,
        end: Option<RuntimeEnd>,
        now: Millis,
    ) {
        if self.stopping.contains_key(&runtime) {
            return self.stopped_runtime(runtime, Ok(()), now);
        }
        let launching = self
            .launching
            .as_ref()
            .filter(|l| l.runtime == Some((runtime, generation)))
            .map(|l| l.attempt);
        if let Some(attempt) = launching {
            self.launching = None;
            self.with_sessions(|s| {
                s.handle_launch_failed(attempt, LaunchFailure::Failed { detail }, now)
            });
            return;
        }
        let active = self
            .active
            .iter()
            .map(|(_, a)| a)
            .find(|a| a.binding.runtime == runtime && a.binding.generation == generation)
            .map(|a| (a.session, a.binding.execution));
        if let Some((session, execution)) = active {
            self.active.remove(&session);
            self.with_sessions(|s| {
                s.handle_execution_failed(
                    session,
                    execution,
                    generation,
                    FailureCause::RuntimeLost { detail, end },
                    now,
                )
            });
        }
    }

    /// Answers from the core that the session layer and the turn driver
    /// wait for.
    pub(crate) fn session_notified(&mut self, message: ClientMessage, now: Millis) {
        match message {
            ClientMessage::RuntimeStarted {
                request,
                runtime,
                generation,
                execution,
                ..
            } => {
                let attempt = match self.launching.as_mut() {
                    Some(l) if l.request == request => {
                        l.runtime = Some((runtime, generation));
                        Some(l.attempt)
                    }
                    _ => None,
                };
                if let Some(attempt) = attempt {
                    self.with_sessions(|s| {
                        s.handle_launched(attempt, execution, generation, runtime, now)
                    });
                }
            }
            ClientMessage::SessionRecorded { request } => {
                if let Some(attempt) = self.awaiting_record.remove(&request) {
                    self.with_sessions(|s| s.handle_recorded(attempt, now));
                }
            }
            ClientMessage::ProviderRequestRecorded {
                provider_request,
                existing,
                ..
            } => self.send_provider_request(provider_request, existing, now),
            ClientMessage::TurnFinished { turn, .. } => self.turn_finished(turn, now),
            _ => {}
        }
    }

    /// The journal may record the running execution's runtime retired or
    /// gone without this worker seeing it exit. The session layer hears of
    /// it here, fenced by the captured execution and generation.
    pub(crate) fn check_active_runtime(&mut self, now: Millis) -> bool {
        let Some(core) = &self.core else {
            return false;
        };
        let ended = self.active.iter().find_map(|(_, a)| {
            let status = core
                .projection()
                .runtime(a.binding.runtime)
                .filter(|(_, v)| v.generation == a.binding.generation)
                .map(|(_, v)| v.status);
            // The recorded detail keeps the journal's cause as evidence; the
            // page words `end`.
            let (end, detail) = match status {
                Some(RuntimeStatus::Current) => return None,
                Some(RuntimeStatus::Retired { cause }) => {
                    let end = RuntimeEnd::Retired;
                    (end, format!("{end} ({cause:?})"))
                }
                Some(RuntimeStatus::Gone { cause }) => {
                    let end = RuntimeEnd::Gone;
                    (end, format!("{end} ({cause:?})"))
                }
                None => (RuntimeEnd::Unknown, RuntimeEnd::Unknown.to_string()),
            };
            Some((a.binding.runtime, a.binding.generation, end, detail))
        });
        let Some((runtime, generation, end, detail)) = ended else {
            return false;
        };
        self.runtime_lost(runtime, generation, detail, Some(end), now);
        true
    }

    /// A launched runtime that attached is ready.
    pub(crate) fn check_ready(&mut self, _now: Millis) -> bool {
        let ready = match (self.launching.as_ref(), self.core.as_ref()) {
            (
                Some(Launching {
                    attempt,
                    runtime: Some((r, _)),
                    ..
                }),
                Some(core),
            ) if core.is_attached(*r) => *attempt,
            _ => return false,
        };
        self.launching = None;
        self.with_sessions(|s| s.handle_ready(ready));
        true
    }

    pub fn handle_resume(&mut self, now: Millis) {
        let Some(session) = self.session else {
            return;
        };
        if !self.make_room(Some(session), None) {
            return self.pump(now);
        }
        let result = self.with_sessions(|s| {
            s.begin(session, Purpose::Resume, Some(ResumeCause::User), None, now)
        });
        if let Some(Err(refusal)) = result {
            self.notice("resume", Level::Warning, Phrase::Refused { refusal });
        }
        self.pump(now);
    }

    /// The user picked a profile for this session.
    pub fn handle_select_profile(&mut self, id: ProfileId, now: Millis) {
        let Some(session) = self.session else {
            return;
        };
        if !self.make_room(Some(session), None) {
            return self.pump(now);
        }
        // A session that already ran switches at once (a new execution on
        // the same workspace); a new one uses it for its first message.
        let result = self.with_sessions(|s| {
            s.select_profile(session, id).and_then(|()| {
                if s.binding(session).is_some()
                    && s.trace(session).is_some_and(|t| t.owner.is_none())
                {
                    s.begin(session, Purpose::Launch, None, None, now)
                        .map(|_| ())
                } else {
                    Ok(())
                }
            })
        });
        if let Some(Err(r)) = result {
            self.notice("profiles", Level::Warning, Phrase::Refused { refusal: r });
        }
        self.pump(now);
    }
}
