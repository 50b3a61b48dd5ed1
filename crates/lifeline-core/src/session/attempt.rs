//! Startup attempts: beginning one, its continuations after each blocking
//! step (profile, credentials, load, launch, readiness, the durable record),
//! its failure, Stop while it starts, cleanup and its timers. Every
//! continuation first checks that its attempt still owns the session.

use super::*;

impl Sessions {
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
        // A start takes the choice: a launch with the chosen profile, a
        // resume with the recorded one (criterion 6), which the person
        // asked for after choosing. An automatic resume (the app came back
        // and rejoins what ran) was asked for by nobody: the choice stays,
        // and applies once the resumed execution has no turn open.
        if resume_cause != Some(ResumeCause::Automatic) {
            e.switch_pending = false;
        }
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
    pub(super) fn owner_of(&self, attempt: StartupAttemptId) -> Option<SessionId> {
        self.entries
            .iter()
            .find(|(_, e)| e.attempt.as_ref().is_some_and(|a| a.id == attempt))
            .map(|(s, _)| *s)
    }

    pub(super) fn attempt_mut(&mut self, session: SessionId) -> &mut Attempt {
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

    pub(super) fn after_profile(
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
                ProfileLookup::Failed { fault } => {
                    self.fail(
                        session,
                        FailureCause::ProfileBlocked {
                            block: ProfileBlock::Store { fault },
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
    pub(super) fn checkpoint(
        &mut self,
        session: SessionId,
        attempt: StartupAttemptId,
        launch: LaunchProfile,
    ) {
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

    pub(super) fn launch(
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
    pub(super) fn load(
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
    /// then queued ones if auto-run is on. If another profile was chosen
    /// meanwhile, the session starts again with it first, taking that
    /// prompt along.
    pub fn handle_recorded(&mut self, attempt: StartupAttemptId, now: Millis) -> Handled {
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
        let (prompt, purpose) = e
            .attempt
            .take()
            .map_or((None, Purpose::Launch), |a| (a.prompt, a.purpose));
        // A resume goes on with the turn its execution left open; a pending
        // profile applies once that turn ends.
        let switch = e.switch_pending && purpose == Purpose::Launch;
        e.binding = Some(binding.clone());
        e.state = SessionState::Running;
        self.effects.push_back(SessionEffect::Activate {
            session,
            binding,
            prepared,
            rejoined,
        });
        self.publish(session);
        if switch
            && self
                .begin(session, Purpose::Launch, None, prompt, now)
                .is_ok()
        {
            return Handled::Applied;
        }
        match prompt {
            Some(turn) => self.admit(session, turn),
            None => self.run_queue(session),
        }
        Handled::Applied
    }

    /// Fails the owning attempt before dispatch: a durable, stamped record
    /// correlated to session, attempt and execution. A runtime this attempt
    /// launched is cleaned up with its captured identity; the retained one
    /// it tried to rejoin is not touched.
    pub(super) fn fail(&mut self, session: SessionId, cause: FailureCause, now: Millis) {
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

    pub(super) fn after_cancel(&mut self, session: SessionId) {
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
}
