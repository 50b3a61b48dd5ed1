//! Prompts and turns: what a message does in each state of its session,
//! the queue, a turn's end, an execution's failure, and the queue given
//! back when the session will run nothing more.

use super::*;

impl Sessions {
    pub(super) fn admit(&mut self, session: SessionId, turn: TurnId) {
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

    pub(super) fn run_queue(&mut self, session: SessionId) {
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

    /// The person withdrew a waiting prompt before it ran. Only a queued
    /// one can be: a prompt already admitted belongs to its turn (Stop ends
    /// that), and an attempt's originating prompt to its start (Stop
    /// cancels it). True if it was waiting and is gone now.
    pub fn withdraw_prompt(&mut self, session: SessionId, turn: TurnId) -> bool {
        let Some(e) = self.entries.get_mut(&session) else {
            return false;
        };
        let before = e.queue.len();
        e.queue.retain(|t| *t != turn);
        e.queue.len() != before
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
                // A message resumes the execution it ran in, unless another
                // profile was chosen since: then it starts with that one.
                let purpose = if e.binding.is_some() && !e.switch_pending {
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
        self.end_turn(session, turn, execution, generation, failure, true, now)
    }

    /// A turn of a session the person left for another (Start fresh,
    /// another environment) ended: nothing more starts there — not a
    /// profile chosen while the turn ran, not a queued prompt — and its
    /// idle runtime stops by its captured identity. The choice stays
    /// pending for the session's next start. Found by the engine
    /// simulation (seed 10910 of 20,000): the left session launched with
    /// the chosen profile in the background, a fourth runtime past the
    /// running limit.
    pub fn handle_left_turn_finished(
        &mut self,
        session: SessionId,
        turn: TurnId,
        execution: ExecutionId,
        generation: Generation,
        failure: Option<String>,
        now: Millis,
    ) -> Handled {
        let handled = self.end_turn(session, turn, execution, generation, failure, false, now);
        let _ = self.set_aside(session);
        handled
    }

    #[allow(clippy::too_many_arguments)]
    fn end_turn(
        &mut self,
        session: SessionId,
        turn: TurnId,
        execution: ExecutionId,
        generation: Generation,
        failure: Option<String>,
        go_on: bool,
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
        if !go_on {
            return Handled::Applied;
        }
        // A profile chosen while the turn ran applies now, before the next
        // message (Refusal::TurnRunning said so), in a session that still
        // runs; a stopped one takes it at its next start (submit_prompt).
        if current
            && e.switch_pending
            && e.state == SessionState::Running
            && self
                .begin(session, Purpose::Launch, None, None, now)
                .is_ok()
        {
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
    pub(super) fn execution_failed(
        &mut self,
        session: SessionId,
        cause: FailureCause,
        now: Millis,
    ) {
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

    /// A session that will run nothing more gives its queued prompts back:
    /// none waits forever unseen.
    pub(super) fn return_queue(&mut self, session: SessionId) {
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
}
