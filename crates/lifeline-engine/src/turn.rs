//! Prompts, Stop, the turn driver and provider requests.
//!
//! A prompt is held until its turn is recorded and then belongs to the
//! journal; the next step of an open turn is always derived from the
//! projection (`lifeline_core::model::next_turn_step`). A provider request
//! is recorded before it is sent and sent once: a request whose reply was
//! lost stays uncertain and is never resent.

use lifeline_core::agent;
use lifeline_core::ending::TurnEnding;
use lifeline_core::journal::{FailureReason, TurnAgent};
use lifeline_core::model::{ModelStep, TurnStep};
use lifeline_core::phrase::Phrase;
use lifeline_core::profile::Provider;
use lifeline_core::stop::StopPlan;
use lifeline_core::{
    Binding, Budget, ClientRequest, ExecutionId, Generation, IdempotencyKey, Millis, ModelMessage,
    ProviderFailureClass, ProviderRequestId, SessionId, TurnId, TurnStatus,
};
use lifeline_protocol::{ControllerToPage, Level, Role};

use crate::failure::because;
use crate::retry::Due;
use crate::{
    Effect, Engine, FailedAt, ProviderFailure, ProviderReply, TimerKey, COMMAND_OUTPUT_BYTES,
    COMMAND_WALL_TIME_MS,
};

/// The provider request this engine owns.
pub(crate) struct Live {
    pub request: ProviderRequestId,
    pub turn: TurnId,
    /// The reply's text so far, as the page shows it while it streams.
    pub preview: String,
    /// Its fetch has begun (an abort reaches it).
    pub sent: bool,
    /// Stop was pressed: it is never sent (again).
    pub stopped: bool,
    /// The attempt sent last (1 for the first).
    pub attempt: u32,
    /// When the first attempt went out: the retry bound counts from here.
    pub first_sent: Millis,
    /// What the request waits for, with its deadline's start.
    pub wait: Wait,
    /// What each attempt sends (empty until it is sent).
    pub conversation: Vec<ModelMessage>,
    /// The timeouts it was sent with, which hold until it ends: its
    /// session may fail meanwhile and no longer hold a profile (found by
    /// the engine simulation, seed 191386 of 400,000: the 3 s wait for a
    /// response became the default 60 s, and the session's next turn
    /// waited behind it).
    pub budget: lifeline_core::profile::AgentBudget,
}

pub(crate) use crate::retry::Wait;

/// The notice key of the retry wait's status line (the page shows "Retry
/// now" beside it, as `controller:provider-retry`).
pub(crate) const RETRY_NOTICE: &str = "provider-retry";
/// The notice key of a local model's load progress.
const LOAD_NOTICE: &str = "model-load";

/// Whether a command of `session` is still on its way to an outcome (not
/// settled, and not stuck uncertain or undispatched for good).
fn running_in(p: &lifeline_core::Projection, session: SessionId) -> bool {
    p.commands.values().any(|c| {
        c.binding.session == session
            && matches!(
                c.outcome,
                lifeline_core::Outcome::Admitted
                    | lifeline_core::Outcome::Dispatched
                    | lifeline_core::Outcome::Running
            )
    })
}

/// The longest failure text a session's failure keeps.
const MAX_FAILURE_CHARS: usize = 1000;

impl Engine {
    /// A message from the page's message box.
    pub fn handle_prompt(&mut self, turn: TurnId, text: String, now: Millis) {
        if let Some(message) = self.prompt_refusal(&text) {
            return self.post(ControllerToPage::PromptRefused { turn, message });
        }
        // The same turn again (a page resending after a controller
        // restart): it is in the journal, so it is not submitted twice.
        if self
            .core
            .as_ref()
            .is_some_and(|c| c.pending_projection().turns.contains_key(&turn))
        {
            return;
        }
        if self.sessions.is_none() {
            // Recovery is still running: held, and submitted once sessions
            // are up (see start_sessions).
            self.early_prompts.push((turn, text));
            return;
        }
        let Some(session) = self.session else {
            return self.post(ControllerToPage::PromptRefused {
                turn,
                message: Phrase::NoSessionToSend,
            });
        };
        // A message to a session without a runtime starts one.
        let starts = self.sessions.as_ref().is_some_and(|s| {
            use lifeline_core::session::SessionState as S;
            matches!(
                s.state(session),
                Some(S::New | S::Detached | S::Failed(_) | S::Cancelled)
            )
        });
        if starts && !self.make_room(Some(session), None) {
            return self.post(ControllerToPage::PromptRefused {
                turn,
                message: Phrase::RunningLimit,
            });
        }
        self.prompts.insert(turn, text);
        let disposition = self.with_sessions(|s| s.submit_prompt(session, turn, now));
        // A queued prompt is shown in the composer's queue (the status
        // line's `waiting`) for exactly as long as it waits, not as a
        // notice that outlives it.
        match disposition {
            Some(Ok(_)) | None => {}
            Some(Err(refusal)) => {
                self.prompts.remove(&turn);
                return self.post(ControllerToPage::PromptRefused {
                    turn,
                    message: Phrase::Refused { refusal },
                });
            }
        }
        self.pump(now);
    }

    /// The person took back a prompt still waiting behind the running
    /// turn; one that already runs or started a session is not affected.
    pub fn handle_withdraw_prompt(&mut self, turn: TurnId, now: Millis) {
        let before = self.early_prompts.len();
        self.early_prompts.retain(|(t, _)| *t != turn);
        let withdrawn = before != self.early_prompts.len()
            || self.session.is_some_and(|session| {
                self.with_sessions(|s| s.withdraw_prompt(session, turn)) == Some(true)
            });
        if withdrawn {
            self.prompts.remove(&turn);
        }
        self.pump(now);
    }

    fn prompt_refusal(&self, text: &str) -> Option<Phrase> {
        if self.role != Role::Leader {
            return Some(Phrase::FollowingCannotSend);
        }
        if let Some(reason) = &self.stopped {
            return Some(reason.clone());
        }
        if text.trim().is_empty() {
            return Some(Phrase::MessageEmpty);
        }
        let limit = lifeline_core::schema::limits::MAX_PROMPT_BYTES;
        if text.len() > limit {
            return Some(Phrase::MessageTooLong {
                bytes: text.len() as u64,
                limit: limit as u64,
            });
        }
        let degraded = self.core.as_ref().is_some_and(|c| c.degraded().is_some());
        // The core is degraded only after failed writes, each of which set
        // the fault.
        self.persist_fault
            .clone()
            .filter(|_| degraded)
            .map(|fault| Phrase::JournalDegraded { fault })
    }

    /// Stop: cancels a start in progress, else whatever the turn waits for
    /// (`lifeline_core::stop::plan`).
    pub fn handle_stop(&mut self, now: Millis) {
        let Some(session) = self.session else {
            return;
        };
        // A start in progress is cancelled, and the turn left open from
        // before it ends too: one press stops everything (found by the
        // engine simulation: a turn outlived the Stop that cancelled only
        // its session's restart). While recovery still reads the profile
        // store no start is in progress, and the turn is stopped all the
        // same (found by the engine simulation, seed 92699 of 150,000: a
        // Stop pressed then was dropped, and the turn went on once its
        // session was resumed).
        self.with_sessions(|s| s.cancel(session, now));
        // A request still live for an earlier turn of the session (one
        // left open when its execution failed) ends too: Stop ends
        // everything the session runs.
        let open = self
            .core
            .as_ref()
            .and_then(|c| agent::open_turn(c.pending_projection(), session));
        let earlier = self
            .live
            .get(&session)
            .filter(|l| Some(l.turn) != open)
            .map(|l| l.request);
        if let Some(request) = earlier {
            self.stop_live(request, now);
        }
        // The open turn's own request, if it has one: the earlier turn's
        // (stopped above) is not this turn's, and with it as the plan's the
        // open turn was never ended (found by the engine simulation: a
        // message to a session failed with a model request still live, then
        // Stop: the new turn ran on after the earlier request's abort).
        let live = self
            .live
            .get(&session)
            .filter(|l| Some(l.turn) == open)
            .map(|l| l.request);
        let plan = match self.core.as_ref() {
            Some(core) => lifeline_core::stop::plan(core.pending_projection(), session, live, now),
            None => return,
        };
        match plan {
            // The fetch ends with an abort, recorded as cancelled with its
            // partial text.
            StopPlan::AbortRequest(request) => {
                if self.stop_live(request, now) {
                    return;
                }
            }
            StopPlan::Cancel(commands) => self.cancel_all(commands, now),
            StopPlan::FinishTurn {
                turn,
                ending,
                cancel,
            } => {
                self.ask(
                    |request| ClientRequest::FinishTurn {
                        request,
                        turn,
                        status: TurnStatus::Cancelled,
                        reply: ending.to_string(),
                        ending: Some(ending),
                    },
                    now,
                );
                self.cancel_all(cancel, now);
            }
            StopPlan::Nothing => {}
        }
        self.pump(now);
    }

    /// Asks the core to cancel each of `commands`, by identity and
    /// generation.
    fn cancel_all(&mut self, commands: Vec<(lifeline_core::CommandId, Generation)>, now: Millis) {
        for (command, generation) in commands {
            self.ask(
                |request| ClientRequest::Cancel {
                    request,
                    command,
                    generation,
                },
                now,
            );
        }
    }

    /// Ends the live request `request` because the user no longer wants
    /// it (Stop, or its session left or archived). True when it ended here
    /// and the engine has pumped; otherwise a fetch in flight was aborted
    /// (its outcome ends it) or one not sent yet is never sent.
    pub(crate) fn stop_live(&mut self, request: ProviderRequestId, now: Millis) -> bool {
        let session = self.live_session(request);
        match session.and_then(|s| self.live.get_mut(&s)) {
            // Waiting to send it again: nothing is in flight, so the wait and
            // the request end here (found by the engine simulation: a session
            // left by Start fresh in a retry wait sent its request again, and
            // its local model's load then hung where no Stop could reach it).
            Some(l) if matches!(l.wait, Wait::Retry { .. }) => {
                l.wait = Wait::Nothing;
                l.stopped = true;
                self.handle_provider_outcome(
                    request,
                    Err(because(
                        ProviderFailureClass::Cancelled,
                        FailureReason::StoppedWaitingToRetry,
                        "",
                        FailedAt::NoResponse,
                    )),
                    now,
                );
                true
            }
            // A local model still loading has generated nothing: the request
            // ends here as stopped, for certain, even if the load itself
            // cannot be interrupted at once; the abort tears the load down
            // and its late report is not news.
            Some(l) if matches!(l.wait, Wait::Loading { .. }) => {
                l.wait = Wait::Nothing;
                l.stopped = true;
                self.effects.push_back(Effect::Abort(request));
                self.ended_early.push(request);
                self.load_ended(
                    request,
                    FailureReason::StoppedWhileLoading,
                    ProviderFailureClass::Cancelled,
                    now,
                );
                true
            }
            Some(l) if l.sent => {
                // The abort's outcome ends it; no timeout may overtake the
                // user's Stop, and a refusal that arrives before the abort is
                // not retried.
                l.wait = Wait::Nothing;
                l.stopped = true;
                self.effects.push_back(Effect::Abort(request));
                false
            }
            // Recorded, not sent yet: it is never sent (found by the engine
            // simulation: an abort before the fetch began was lost, and the
            // request went out after Stop).
            Some(l) => {
                l.stopped = true;
                false
            }
            None => false,
        }
    }

    pub(crate) fn admit_prompt(
        &mut self,
        session: SessionId,
        turn: TurnId,
        execution: ExecutionId,
        generation: Generation,
        now: Millis,
    ) {
        let Some(text) = self.prompts.remove(&turn) else {
            return;
        };
        let Some(a) = self
            .active
            .get(&session)
            .filter(|a| a.binding.execution == execution)
        else {
            return self.refuse_turn(
                session,
                turn,
                execution,
                generation,
                Phrase::SessionStoppedResend,
                now,
            );
        };
        let agent_and_plan = match (&a.prepared.provider, a.binding.profile.clone()) {
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
        };
        let (agent_kind, plan) = match agent_and_plan {
            Ok(x) => x,
            Err(message) => {
                return self.refuse_turn(session, turn, execution, generation, message, now)
            }
        };
        let result = self.submit(
            |request| ClientRequest::RecordTurn {
                request,
                session,
                turn,
                prompt: text,
                plan,
                agent: agent_kind,
            },
            now,
        );
        if let Some((_, Err(rejection))) = result {
            self.refuse_turn(
                session,
                turn,
                execution,
                generation,
                Phrase::rejected(&rejection),
                now,
            );
        }
    }

    fn refuse_turn(
        &mut self,
        session: SessionId,
        turn: TurnId,
        execution: ExecutionId,
        generation: Generation,
        message: Phrase,
        now: Millis,
    ) {
        // A continuation is the card's, not typed: its refusal is a notice,
        // and the card offers it again.
        if self.continuations.remove(&turn).is_some() {
            self.notice("recovery", Level::Warning, message);
        } else {
            self.post(ControllerToPage::PromptRefused { turn, message });
        }
        self.with_sessions(|s| {
            s.handle_turn_finished(session, turn, execution, generation, None, now)
        });
    }

    /// The turn's end is durable: tell the session layer (a failed model
    /// turn is a recoverable failure of its execution).
    pub(crate) fn turn_finished(&mut self, turn: TurnId, now: Millis) {
        let Some(core) = self.core.as_ref() else {
            return;
        };
        let Some((session, failure)) = core.projection().turns.get(&turn).map(|t| {
            let failed = t.agent.is_model()
                && t.end
                    .as_ref()
                    .is_some_and(|e| e.status == TurnStatus::Failed);
            let failure = failed.then(|| {
                t.end
                    .as_ref()
                    .map(|e| e.reply.chars().take(MAX_FAILURE_CHARS).collect::<String>())
                    .unwrap_or_default()
            });
            (t.session, failure)
        }) else {
            return;
        };
        // A session left with its turn running (Start fresh, another
        // environment) is no longer this engine's to hold, but its session
        // layer still waits for the turn: told, under its last binding, and
        // its idle runtime stops. Found by the engine simulation: such a
        // session, opened again, queued every message behind a turn that
        // had ended long before.
        let held = self
            .active
            .get(&session)
            .map(|a| (a.binding.execution, a.binding.generation));
        let left = held.is_none() && self.session != Some(session);
        let binding = held.or_else(|| {
            let b = self.sessions.as_ref()?.binding(session)?;
            Some((b.execution, b.generation))
        });
        let Some((execution, generation)) = binding else {
            return;
        };
        self.with_sessions(|s| {
            if left {
                s.handle_left_turn_finished(session, turn, execution, generation, failure, now)
            } else {
                s.handle_turn_finished(session, turn, execution, generation, failure, now)
            }
        });
    }

    /// Drives every running session's turn one step, the open one's first
    /// (a session left working in the background goes on as if it were
    /// open); true when it asked the core for something.
    pub(crate) fn drive_turn(&mut self, now: Millis) -> bool {
        let open = self.session;
        let running: Vec<SessionId> = open
            .into_iter()
            .chain(
                self.active
                    .iter()
                    .map(|(s, _)| *s)
                    .filter(|s| Some(*s) != open),
            )
            .collect();
        for session in running {
            if self.drive_session_turn(session, now) {
                return true;
            }
        }
        self.end_left_turn(now)
    }

    /// A session left for another (Start fresh, another environment,
    /// Archive) or set aside runs nothing more: its open turn ends once
    /// what it waits for has settled, saying it was left. Found by the engine simulation:
    /// only the open session's turn was driven, so a left turn stayed open
    /// forever.
    fn end_left_turn(&mut self, now: Millis) -> bool {
        let Some(core) = self.core.as_ref() else {
            return false;
        };
        let p = core.pending_projection();
        let live: Vec<TurnId> = self.live.iter().map(|(_, l)| l.turn).collect();
        let ending = p
            .sessions
            .keys()
            .filter(|s| Some(**s) != self.session && !self.active.contains(s))
            .filter_map(|s| agent::open_turn(p, *s).map(|t| (*s, t)))
            .filter(|(_, t)| !live.contains(t))
            .find_map(|(session, turn)| {
                match ending_of(lifeline_core::model::next_turn_step(p, turn, None, now)) {
                    Some((status, reply, ending)) => Some((turn, status, reply, ending)),
                    // A command still on its way ends it later; a lost
                    // reply, an uncertain command or a step not taken
                    // ends it now (nothing more will run in a left session).
                    None if running_in(p, session) => None,
                    None => Some((
                        turn,
                        TurnStatus::Interrupted,
                        TurnEnding::SessionLeft.to_string(),
                        Some(TurnEnding::SessionLeft),
                    )),
                }
            });
        let Some((turn, status, reply, ending)) = ending else {
            return false;
        };
        self.finish(turn, status, reply, ending, now)
    }

    fn finish(
        &mut self,
        turn: TurnId,
        status: TurnStatus,
        reply: String,
        ending: Option<TurnEnding>,
        now: Millis,
    ) -> bool {
        self.ask(
            |request| ClientRequest::FinishTurn {
                request,
                turn,
                status,
                reply,
                ending,
            },
            now,
        )
    }

    fn drive_session_turn(&mut self, session: SessionId, now: Millis) -> bool {
        let live = self.live.get(&session).map(|l| l.request);
        let Some(core) = self.core.as_ref() else {
            return false;
        };
        let p = core.pending_projection();
        let Some(turn) = agent::open_turn(p, session) else {
            return self.switch_when_idle(session, now);
        };
        // An older turn left open behind the newest is not driven on, but
        // it still ends once its own last step has (found by the engine
        // simulation, seed 1879968 of 1,900,000: Stop ended such a turn's
        // request, a queued message became the newest turn in the same
        // batch, and the stopped turn stayed open for 18 s).
        let older = agent::open_turns(p, session)
            .filter(|t| *t != turn)
            .find_map(|t| {
                let own = self
                    .live
                    .get(&session)
                    .filter(|l| l.turn == t)
                    .map(|l| l.request);
                ending_of(lifeline_core::model::next_turn_step(p, t, own, now)).map(|e| (t, e))
            });
        if let Some((t, (status, reply, ending))) = older {
            return self.finish(t, status, reply, ending, now);
        }
        let Some(step) = lifeline_core::model::next_turn_step(p, turn, live, now) else {
            return false;
        };
        match step {
            TurnStep::BuiltIn(agent::Step::Admit { index, line }) => {
                self.admit_command(session, agent::plan_key(turn, index), line, now)
            }
            TurnStep::Model(ModelStep::AdmitTool { key, line, .. }) => {
                self.admit_command(session, key, line, now)
            }
            TurnStep::BuiltIn(agent::Step::Finish { status, reply }) => {
                self.finish(turn, status, reply, None, now)
            }
            TurnStep::Model(ModelStep::Finish {
                status,
                reply,
                ending,
            }) => self.finish(turn, status, reply, ending, now),
            TurnStep::Model(ModelStep::Request { step, conversation }) => {
                self.record_provider_request(session, turn, step, conversation, now)
            }
            TurnStep::BuiltIn(agent::Step::Wait { .. }) | TurnStep::Model(ModelStep::Wait) => false,
        }
    }

    /// A profile chosen while a resume was under way applies once the
    /// resumed execution has no turn open (the session layer cannot see
    /// the journal's open turn; this is where it is known).
    fn switch_when_idle(&mut self, session: SessionId, now: Millis) -> bool {
        use lifeline_core::session::SessionState;
        let idle = self.sessions.as_ref().is_some_and(|s| {
            s.switch_pending(session)
                && s.trace(session).is_some_and(|t| {
                    t.state == SessionState::Running && t.owner.is_none() && t.active_turn.is_none()
                })
        });
        idle && self
            .with_sessions(|s| {
                s.begin(
                    session,
                    lifeline_core::session_record::Purpose::Launch,
                    None,
                    None,
                    now,
                )
            })
            .is_some_and(|r| r.is_ok())
    }

    /// The binding a command of `session`'s running execution gets.
    pub(crate) fn command_binding(
        &self,
        session: SessionId,
        working_directory: String,
        command_line: String,
        now: Millis,
    ) -> Option<Binding> {
        let (a, core) = (self.active.get(&session)?, self.core.as_ref()?);
        let p = core.pending_projection();
        let workspace = p.sessions.get(&a.session)?.workspace;
        let (lease, _) = p.runtime(a.binding.runtime)?;
        Some(Binding {
            workspace,
            lease: lease.lease,
            generation: a.binding.generation,
            runtime: a.binding.runtime,
            session: a.session,
            working_directory,
            capabilities: a.prepared.capabilities.command_capabilities(),
            budget: Budget {
                deadline: now.plus(COMMAND_WALL_TIME_MS),
                max_output_bytes: COMMAND_OUTPUT_BYTES,
            },
            command_line,
        })
    }

    fn admit_command(
        &mut self,
        session: SessionId,
        key: IdempotencyKey,
        line: String,
        now: Millis,
    ) -> bool {
        let Some(binding) = self.command_binding(session, "/".into(), line, now) else {
            return false;
        };
        self.ask(
            |request| ClientRequest::Admit {
                request,
                key,
                binding,
            },
            now,
        )
    }

    /// One provider request is live per session. A local model answers one
    /// request at a time, so a local step waits while another session's
    /// local request is live.
    fn record_provider_request(
        &mut self,
        session: SessionId,
        turn: TurnId,
        step: u32,
        conversation: Vec<ModelMessage>,
        now: Millis,
    ) -> bool {
        let local = |a: Option<&crate::lifecycle::Active>| {
            a.is_some_and(|a| matches!(a.prepared.provider, Provider::Local { .. }))
        };
        let local_busy = local(self.active.get(&session))
            && self
                .live
                .iter()
                .any(|(s, _)| *s != session && local(self.active.get(s)));
        if self.live.contains(&session) || local_busy {
            return false;
        }
        let Some(id) = self.mint(ProviderRequestId::from_u128, now) else {
            return false;
        };
        // Owned from here: the step is not "lost" while it is being recorded.
        self.live.insert(
            session,
            Live {
                request: id,
                turn,
                preview: String::new(),
                sent: false,
                stopped: false,
                attempt: 0,
                first_sent: now,
                wait: Wait::Nothing,
                conversation: Vec::new(),
                budget: self
                    .active
                    .get(&session)
                    .map_or_else(Default::default, |a| a.prepared.budget),
            },
        );
        self.conversations.insert(id, conversation);
        let asked = self.ask(
            |request| ClientRequest::RecordProviderRequest {
                request,
                provider_request: id,
                turn,
                step,
            },
            now,
        );
        if !asked {
            self.live.remove(&session);
            self.conversations.remove(&id);
        }
        asked
    }

    /// The request record is durable: send it, once.
    pub(crate) fn send_provider_request(
        &mut self,
        id: ProviderRequestId,
        existing: bool,
        now: Millis,
    ) {
        let conversation = self.conversations.remove(&id);
        let session = self.live_session(id);
        let (Some(conversation), false, Some(session)) = (conversation, existing, session) else {
            // Not sent by this engine: nothing is in flight for Stop to
            // abort, and the turn's next step is derived from the journal
            // again (found by the engine simulation: a request recorded as
            // existing stayed "live" forever, and Stop aborted nothing).
            if let Some(session) = session {
                self.live.remove(&session);
            }
            return;
        };
        if let Some(l) = self.live.get_mut(&session) {
            if l.stopped {
                return self.handle_provider_outcome(
                    id,
                    Err(because(
                        ProviderFailureClass::Cancelled,
                        FailureReason::StoppedBeforeSent,
                        "",
                        FailedAt::NoResponse,
                    )),
                    now,
                );
            }
            l.conversation = conversation;
            l.first_sent = now;
        }
        self.send_attempt(session, now);
    }

    /// Sends the live request's next attempt.
    fn send_attempt(&mut self, session: SessionId, now: Millis) {
        let call = self
            .active
            .get(&session)
            .filter(|a| !matches!(a.prepared.provider, Provider::BuiltIn))
            .map(|a| {
                (
                    a.prepared.provider.clone(),
                    a.prepared.api_key.clone(),
                    a.prepared.capabilities.tools.clone(),
                    a.prepared.budget,
                )
            });
        let Some(l) = self.live.get_mut(&session) else {
            return;
        };
        let id = l.request;
        let Some((provider, api_key, tools, budget)) = call else {
            return self.handle_provider_outcome(
                id,
                Err(because(
                    ProviderFailureClass::InvalidRequest,
                    FailureReason::NoProvider,
                    "",
                    FailedAt::NoResponse,
                )),
                now,
            );
        };
        let connect_ms = budget.connect_timeout_ms;
        l.budget = budget;
        l.sent = true;
        l.attempt += 1;
        l.preview.clear();
        l.wait = Wait::Response { since: now };
        let conversation = l.conversation.clone();
        if l.attempt > 1 && self.session == Some(session) {
            self.clear_notice(RETRY_NOTICE);
        }
        self.set_timer(TimerKey::Provider(session), now.plus(connect_ms));
        self.effects.push_back(Effect::Fetch {
            request: id,
            provider,
            api_key,
            conversation,
            tools,
        });
    }

    /// Response bytes of the live request arrived (its headers count): the
    /// connect timeout is over, and the idle timeout starts again.
    pub fn handle_provider_bytes(&mut self, id: ProviderRequestId, now: Millis) {
        let Some(session) = self.live_session(id) else {
            return;
        };
        let idle_ms = self.budget(session).idle_timeout_ms;
        let Some(l) = self.live.get_mut(&session) else {
            return;
        };
        match l.wait {
            Wait::Response { .. } | Wait::Loading { .. } => {
                let loading = matches!(l.wait, Wait::Loading { .. });
                l.wait = Wait::Bytes { last: now };
                self.set_timer(TimerKey::Provider(session), now.plus(idle_ms));
                if loading {
                    self.clear_notice(LOAD_NOTICE);
                }
            }
            // The timer is not moved for every chunk: when it fires, it
            // looks at the last byte and sets itself again.
            Wait::Bytes { .. } => l.wait = Wait::Bytes { last: now },
            Wait::Nothing | Wait::Retry { .. } => {}
        }
    }

    /// The live request's local model is loading: `read` of its file's
    /// `total` bytes so far. The connect timeout waits until it is loaded.
    pub fn handle_model_loading(
        &mut self,
        id: ProviderRequestId,
        read: u64,
        total: u64,
        now: Millis,
    ) {
        let Some(session) = self.live_session(id) else {
            return;
        };
        let Some(l) = self.live.get_mut(&session) else {
            return;
        };
        let (since, moved) = match l.wait {
            Wait::Response { since } => (since, true),
            Wait::Loading {
                since, read: was, ..
            } => (since, read != was),
            _ => return,
        };
        let first = !matches!(l.wait, Wait::Loading { .. });
        // A report without new bytes (the start, repeated) is no progress.
        let last = match l.wait {
            Wait::Loading { last, .. } if !moved => last,
            _ => now,
        };
        l.wait = Wait::Loading {
            since,
            last,
            read,
            total,
        };
        if first {
            // The timer then moves the count each second (see
            // `provider_timer`).
            self.set_timer(TimerKey::Provider(session), now.plus(1000));
            self.load_notice(session, read, total, since, now);
        }
    }

    /// The live request's local model is loaded: what follows is a
    /// response, bounded by the connect timeout like a server's.
    pub fn handle_model_loaded(&mut self, id: ProviderRequestId, now: Millis) {
        let Some(session) = self.live_session(id) else {
            return;
        };
        let connect_ms = self.budget(session).connect_timeout_ms;
        let Some(l) = self.live.get_mut(&session) else {
            return;
        };
        let was_loading = matches!(l.wait, Wait::Loading { .. });
        if was_loading || matches!(l.wait, Wait::Response { .. }) {
            l.wait = Wait::Response { since: now };
            self.set_timer(TimerKey::Provider(session), now.plus(connect_ms));
        }
        if was_loading {
            self.clear_notice(LOAD_NOTICE);
        }
    }

    fn load_notice(
        &mut self,
        session: SessionId,
        read: u64,
        total: u64,
        since: Millis,
        now: Millis,
    ) {
        let seconds = u32::try_from(now.0.saturating_sub(since.0) / 1000).unwrap_or(u32::MAX);
        let phrase = Phrase::LocalModelLoading {
            read,
            total,
            seconds,
        };
        if self.session == Some(session) {
            self.notice(LOAD_NOTICE, Level::Info, phrase);
        }
    }

    /// The live request ended while its local model was loading: nothing
    /// was generated, so it failed before any response and is never
    /// uncertain (and, not being refused before work, never retried).
    fn load_ended(
        &mut self,
        id: ProviderRequestId,
        reason: FailureReason,
        class: ProviderFailureClass,
        now: Millis,
    ) {
        self.clear_notice(LOAD_NOTICE);
        self.handle_provider_outcome(
            id,
            Err(because(class, reason, "", FailedAt::NoResponse)),
            now,
        );
    }

    /// "Retry now" on the page: the wait for the next attempt ends early.
    pub fn handle_retry_now(&mut self, now: Millis) {
        let Some(session) = self.session else {
            return;
        };
        let waiting = self
            .live
            .get(&session)
            .is_some_and(|l| matches!(l.wait, Wait::Retry { .. }));
        if waiting {
            self.send_attempt(session, now);
            self.pump(now);
        }
    }

    /// The page now shows another session: the live request's status
    /// (its retry wait or load, each set again by its next second's tick)
    /// and its reply so far are shown only with its own session.
    pub(crate) fn show_live(&mut self) {
        self.clear_notice(RETRY_NOTICE);
        self.clear_notice(LOAD_NOTICE);
        let shown = self.session.and_then(|s| self.live.get(&s));
        if let Some(l) = shown.filter(|l| !l.preview.is_empty()) {
            let (turn, text) = (l.turn, l.preview.clone());
            self.post(ControllerToPage::Streaming { turn, text });
        }
    }

    /// The session whose live request `id` is.
    pub(crate) fn live_session(&self, id: ProviderRequestId) -> Option<SessionId> {
        self.live
            .iter()
            .find(|(_, l)| l.request == id)
            .map(|(s, _)| *s)
    }

    /// The timeouts of `session`'s live request (the default ones if it
    /// has none).
    fn budget(&self, session: SessionId) -> lifeline_core::profile::AgentBudget {
        self.live
            .get(&session)
            .map_or_else(Default::default, |l| l.budget)
    }

    /// [`TimerKey::Provider`] fired: whatever deadline the live request has
    /// passed ends its wait; one not reached yet is set again.
    pub(crate) fn provider_timer(&mut self, session: SessionId, now: Millis) {
        let budget = self.budget(session);
        let (connect_ms, idle_ms) = (budget.connect_timeout_ms, budget.idle_timeout_ms);
        let Some(l) = self.live.get(&session) else {
            return;
        };
        let (request, wait, preview) = (l.request, l.wait, l.preview.clone());
        if let Wait::Loading {
            since,
            last,
            read,
            total,
        } = wait
        {
            return match crate::retry::loading(since, last, now) {
                Some((_, next)) => {
                    self.load_notice(session, read, total, since, now);
                    self.set_timer(TimerKey::Provider(session), next);
                }
                None => {
                    if let Some(l) = self.live.get_mut(&session) {
                        l.wait = Wait::Nothing;
                    }
                    self.effects.push_back(Effect::Abort(request));
                    self.ended_early.push(request);
                    let reason = FailureReason::LoadStalled {
                        seconds: crate::retry::LOAD_STALL_MS / 1000,
                        read,
                        total,
                    };
                    self.load_ended(request, reason, ProviderFailureClass::ConnectTimeout, now);
                }
            };
        }
        let class = match crate::retry::due(wait, connect_ms, idle_ms, now) {
            Due::Nothing => return,
            Due::Later(at) => return self.set_timer(TimerKey::Provider(session), at),
            Due::Send => return self.send_attempt(session, now),
            Due::Countdown { at, class } => return self.retry_countdown(session, at, class, now),
            Due::Timeout(class) => class,
        };
        // The fetch is aborted and its end recorded now, with the text that
        // arrived; the aborted fetch's own report is then not news.
        self.effects.push_back(Effect::Abort(request));
        self.ended_early.push(request);
        let seconds = (if class == ProviderFailureClass::IdleTimeout {
            idle_ms
        } else {
            connect_ms
        }) / 1000;
        let reason = if class == ProviderFailureClass::IdleTimeout {
            FailureReason::NoByteFor { seconds }
        } else {
            FailureReason::NoResponseWithin { seconds }
        };
        self.handle_provider_outcome(
            request,
            Err(because(class, reason, &preview, FailedAt::Reply)),
            now,
        );
    }

    /// Shows the retry wait's remaining seconds and wakes at the next one.
    fn retry_countdown(
        &mut self,
        session: SessionId,
        at: Millis,
        class: ProviderFailureClass,
        now: Millis,
    ) {
        let (seconds, next) = crate::retry::countdown(at, now);
        let phrase = match class {
            ProviderFailureClass::RateLimit => Phrase::RetryRateLimited { seconds },
            ProviderFailureClass::Transport => Phrase::RetryNotConnected { seconds },
            _ => Phrase::RetryOverloaded { seconds },
        };
        if self.session == Some(session) {
            self.notice(RETRY_NOTICE, Level::Warning, phrase);
        }
        self.set_timer(TimerKey::Provider(session), next);
    }

    /// A refused attempt is sent again if the bound allows: recorded as a
    /// retry, with its wait. False when it ends the request instead.
    fn retry_later(&mut self, session: SessionId, f: &ProviderFailure, now: Millis) -> bool {
        let budget = match self.active.get(&session) {
            Some(a) => a.prepared.budget,
            None => return false,
        };
        let Some(l) = self.live.get(&session) else {
            return false;
        };
        if !(l.sent && !l.stopped && crate::retry::refused_before_work(f)) {
            return false;
        }
        let (id, attempt) = (l.request, l.attempt);
        let elapsed = now.0.saturating_sub(l.first_sent.0);
        let Some(wait_ms) =
            crate::retry::next_wait_ms(&budget, attempt, elapsed, f.retry_after_ms, id.as_u128())
        else {
            return false;
        };
        let recorded = self.ask(
            |request| ClientRequest::RecordProviderRetry {
                request,
                provider_request: id,
                attempt,
                class: f.class,
                message: f.message.clone(),
                wait_ms,
            },
            now,
        );
        if !recorded {
            return false;
        }
        let at = now.plus(wait_ms);
        if let Some(l) = self.live.get_mut(&session) {
            l.wait = Wait::Retry { at, class: f.class };
        }
        if wait_ms == 0 {
            self.send_attempt(session, now);
        } else {
            self.retry_countdown(session, at, f.class, now);
        }
        true
    }

    /// More of a streaming reply's text arrived.
    pub fn handle_provider_text(&mut self, id: ProviderRequestId, delta: &str) {
        let Some(session) = self.live_session(id) else {
            return;
        };
        let Some(live) = self.live.get_mut(&session) else {
            return;
        };
        live.preview.push_str(delta);
        let (turn, text) = (live.turn, live.preview.clone());
        if self.session == Some(session) {
            self.post(ControllerToPage::Streaming { turn, text });
        }
    }

    /// A provider request ended: its outcome goes to the journal, unless the
    /// provider refused it before any work and the bound allows another
    /// attempt.
    pub fn handle_provider_outcome(
        &mut self,
        id: ProviderRequestId,
        result: Result<ProviderReply, ProviderFailure>,
        now: Millis,
    ) {
        let session = self.live_session(id);
        let early = self.ended_early.iter().position(|r| *r == id);
        if let (Some(i), None) = (early, session) {
            self.ended_early.swap_remove(i);
            return;
        }
        let live = session.and_then(|s| self.live.get(&s));
        // A failure that could not say what text had arrived (its provider
        // worker ended with it) keeps what the engine was streamed: the
        // text that arrived is evidence, whoever reports the failure.
        let mut result = result;
        if let (Err(f), Some(l)) = (&mut result, live) {
            if f.partial_text.is_empty() {
                f.partial_text.clone_from(&l.preview);
            }
        }
        let shown = session.is_some() && session == self.session;
        if shown && live.is_some_and(|l| matches!(l.wait, Wait::Loading { .. })) {
            self.clear_notice(LOAD_NOTICE);
        }
        if let (Some(session), Err(f)) = (session, &result) {
            if self.retry_later(session, f, now) {
                return self.pump(now);
            }
        }
        if shown {
            self.clear_notice(RETRY_NOTICE);
        }
        let make = |request| match result {
            Ok(reply) => ClientRequest::RecordProviderReply {
                request,
                provider_request: id,
                text: reply.text,
                tool_calls: reply.tool_calls,
                stop: reply.stop,
                input_tokens: reply.input_tokens,
                output_tokens: reply.output_tokens,
            },
            Err(f) => ClientRequest::RecordProviderFailure {
                request,
                provider_request: id,
                class: f.class,
                message: f.message,
                partial_text: f.partial_text,
                reason: f.reason,
            },
        };
        let result = self.submit(make, now);
        // Ownership ends once the outcome is in the journal's hands; a
        // refusal (the turn ended meanwhile) leaves the request uncertain.
        if let Some(session) = self.live_session(id) {
            self.live.remove(&session);
        }
        if let Some((_, Err(rejection))) = result {
            self.rejected(&rejection);
        }
        self.pump(now);
    }
}

/// How a turn ends, when its next step is to end it.
fn ending_of(step: Option<TurnStep>) -> Option<(TurnStatus, String, Option<TurnEnding>)> {
    match step? {
        TurnStep::BuiltIn(agent::Step::Finish { status, reply }) => Some((status, reply, None)),
        TurnStep::Model(ModelStep::Finish {
            status,
            reply,
            ending,
        }) => Some((status, reply, ending)),
        _ => None,
    }
}
