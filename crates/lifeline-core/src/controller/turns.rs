//! Records of the agent layer the controller only checks and journals:
//! sessions, turns and provider requests.
//!
//! They sit beside commands in the same journal so that a turn and the
//! commands it caused share one ordering; each is idempotent under its own
//! identity so a shell that resends after a restart finds the first record.

use crate::id::{ErrorStamp, Millis, ProviderRequestId, SessionId, TurnId, WorkspaceId};
use crate::journal::{JournalRecord, ProviderFailureClass, TurnAgent};
use crate::message::{ClientId, ClientMessage, Rejection, RequestId};
use crate::projection::ProviderOutcome;
use crate::schema::limits;

use super::Controller;

impl Controller {
    pub(super) fn record_provider_request(
        &mut self,
        client: ClientId,
        request: RequestId,
        provider_request: ProviderRequestId,
        turn: TurnId,
        step: u32,
        now: Millis,
    ) -> Result<(), Rejection> {
        if let Some(r) = self.working.provider_requests.get(&provider_request) {
            if r.turn != turn || r.step != step {
                return Err(Rejection::IdReused {
                    id: provider_request.to_string(),
                });
            }
            self.reply(
                client,
                ClientMessage::ProviderRequestRecorded {
                    request,
                    provider_request,
                    existing: true,
                },
            );
            return Ok(());
        }
        let t = self
            .working
            .turns
            .get(&turn)
            .ok_or(Rejection::UnknownTurn { turn })?;
        if t.end.is_some() {
            return Err(Rejection::TurnEnded { turn });
        }
        if !t.agent.is_model() {
            return Err(Rejection::NotModelTurn { turn });
        }
        self.working
            .provider_step_allowed(turn, step)
            .map_err(|detail| Rejection::ProviderStepRefused { turn, step, detail })?;
        self.writable()?;
        if self.working.is_seen(provider_request.as_u128()) {
            return Err(Rejection::IdReused {
                id: provider_request.to_string(),
            });
        }
        self.record(
            now,
            JournalRecord::ProviderRequested {
                request: provider_request,
                turn,
                step,
            },
        );
        self.reply(
            client,
            ClientMessage::ProviderRequestRecorded {
                request,
                provider_request,
                existing: false,
            },
        );
        Ok(())
    }

    /// Records a reply or a failure (the failure's stamp is minted here).
    pub(super) fn record_provider_outcome(
        &mut self,
        client: ClientId,
        request: RequestId,
        provider_request: ProviderRequestId,
        outcome: ProviderOutcome,
        now: Millis,
    ) -> Result<(), Rejection> {
        let r = self
            .working
            .provider_requests
            .get(&provider_request)
            .ok_or(Rejection::UnknownProviderRequest { provider_request })?;
        if let Some(recorded) = &r.outcome {
            if !recorded.same_content(&outcome) {
                return Err(Rejection::ProviderOutcomeConflict { provider_request });
            }
            self.reply(
                client,
                ClientMessage::ProviderOutcomeRecorded {
                    request,
                    provider_request,
                    existing: true,
                },
            );
            return Ok(());
        }
        let turn = r.turn;
        if self
            .working
            .turns
            .get(&turn)
            .is_some_and(|t| t.end.is_some())
        {
            return Err(Rejection::TurnEnded { turn });
        }
        self.writable()?;
        let record = match outcome {
            ProviderOutcome::Replied {
                text,
                tool_calls,
                stop,
                input_tokens,
                output_tokens,
                ..
            } => JournalRecord::ProviderReplied {
                request: provider_request,
                text,
                tool_calls,
                stop,
                input_tokens,
                output_tokens,
            },
            ProviderOutcome::Failed {
                class,
                message,
                partial_text,
                reason,
                ..
            } => JournalRecord::ProviderFailed {
                request: provider_request,
                class,
                message,
                partial_text,
                stamp: self.mint(now, ErrorStamp::from_u128),
                reason,
            },
        };
        self.record(now, record);
        self.reply(
            client,
            ClientMessage::ProviderOutcomeRecorded {
                request,
                provider_request,
                existing: false,
            },
        );
        Ok(())
    }

    /// Journals a refused attempt of a request that is still open.
    pub(super) fn record_provider_retry(
        &mut self,
        provider_request: ProviderRequestId,
        attempt: u32,
        class: ProviderFailureClass,
        message: String,
        wait_ms: u64,
        now: Millis,
    ) -> Result<(), Rejection> {
        let r = self
            .working
            .provider_requests
            .get(&provider_request)
            .ok_or(Rejection::UnknownProviderRequest { provider_request })?;
        let turn = r.turn;
        if r.outcome.is_some()
            || self
                .working
                .turns
                .get(&turn)
                .is_some_and(|t| t.end.is_some())
        {
            return Err(Rejection::TurnEnded { turn });
        }
        self.writable()?;
        self.record(
            now,
            JournalRecord::ProviderRetried {
                request: provider_request,
                attempt,
                class,
                message,
                wait_ms,
            },
        );
        Ok(())
    }

    pub(super) fn open_session(
        &mut self,
        client: ClientId,
        request: RequestId,
        session: SessionId,
        workspace: WorkspaceId,
        title: String,
        now: Millis,
    ) -> Result<(), Rejection> {
        if let Some(s) = self.working.sessions.get(&session) {
            if s.workspace != workspace {
                return Err(Rejection::IdReused {
                    id: session.to_string(),
                });
            }
            self.reply(
                client,
                ClientMessage::SessionOpened {
                    request,
                    session,
                    existing: true,
                },
            );
            return Ok(());
        }
        self.writable()?;
        if self.working.is_seen(session.as_u128()) {
            return Err(Rejection::IdReused {
                id: session.to_string(),
            });
        }
        if self.working.sessions.len() >= limits::MAX_SESSIONS
            || self
                .working
                .sessions
                .values()
                .any(|s| s.workspace == workspace)
        {
            return Err(Rejection::IdReused {
                id: workspace.to_string(),
            });
        }
        self.record(
            now,
            JournalRecord::SessionOpened {
                session,
                workspace,
                title,
            },
        );
        self.reply(
            client,
            ClientMessage::SessionOpened {
                request,
                session,
                existing: false,
            },
        );
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_turn(
        &mut self,
        client: ClientId,
        request: RequestId,
        session: SessionId,
        turn: TurnId,
        prompt: String,
        plan: Vec<String>,
        agent: TurnAgent,
        now: Millis,
    ) -> Result<(), Rejection> {
        if let Some(t) = self.working.turns.get(&turn) {
            if t.session != session || t.prompt != prompt || t.plan != plan || t.agent != agent {
                return Err(Rejection::TurnConflict { turn });
            }
            self.reply(
                client,
                ClientMessage::TurnRecorded {
                    request,
                    turn,
                    existing: true,
                },
            );
            return Ok(());
        }
        if !self.working.sessions.contains_key(&session) {
            return Err(Rejection::UnknownSession { session });
        }
        self.writable()?;
        if self.working.is_seen(turn.as_u128()) {
            return Err(Rejection::IdReused {
                id: turn.to_string(),
            });
        }
        self.record(
            now,
            JournalRecord::TurnRecorded {
                session,
                turn,
                prompt,
                plan,
                agent,
            },
        );
        self.reply(
            client,
            ClientMessage::TurnRecorded {
                request,
                turn,
                existing: false,
            },
        );
        Ok(())
    }
}
