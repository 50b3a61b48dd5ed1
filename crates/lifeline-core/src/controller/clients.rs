//! Client requests, joins at a cursor and the notifications derived from
//! confirmed entries.
//!
//! Requests are routed here after the client is counted against its limit;
//! a client sees only what is durable (`notify_entries` runs on confirmed
//! entries, joins read the durable projection), so a cursor is never ahead
//! of the journal.

use crate::flat::FlatSet;

use crate::id::{ErrorStamp, Millis};
use crate::journal::{JournalEntry, JournalRecord, RecoveryKind, RetireCause};
use crate::message::{
    validate_request, ClientId, ClientMessage, ClientRequest, Rejection, RequestId, Settlement,
};
use crate::outcome::{CancelReason, Outcome};
use crate::projection::ProviderOutcome;
use crate::session_record::SessionRecord;

use super::{Controller, ControllerEffect};

impl Controller {
    fn notify_all(&mut self, message: ClientMessage) {
        for client in self.clients.keys().copied().collect::<Vec<_>>() {
            self.effects.push_back(ControllerEffect::NotifyClient {
                client,
                message: message.clone(),
            });
        }
    }

    pub(super) fn notify_entries(&mut self, entries: &[JournalEntry]) {
        for e in entries {
            match &e.record {
                JournalRecord::CommandAdmitted(rec) => self.notify_all(ClientMessage::Outcome {
                    command: rec.command,
                    outcome: Outcome::Admitted,
                    event: None,
                    position: e.position,
                }),
                JournalRecord::OutcomeChanged {
                    command, event, to, ..
                } => self.notify_all(ClientMessage::Outcome {
                    command: *command,
                    outcome: *to,
                    event: Some(*event),
                    position: e.position,
                }),
                JournalRecord::Recovery(ev) => self.notify_all(ClientMessage::Evidence(ev.clone())),
                JournalRecord::Event(rec) => {
                    let subscribers: Vec<ClientId> = self
                        .clients
                        .iter()
                        .filter(|(_, subs)| subs.contains(&rec.command))
                        .map(|(c, _)| *c)
                        .collect();
                    for client in subscribers {
                        self.effects.push_back(ControllerEffect::NotifyClient {
                            client,
                            message: ClientMessage::Event {
                                command: rec.command,
                                seq: rec.seq,
                                body: rec.body.clone(),
                            },
                        });
                    }
                }
                _ => {}
            }
        }
    }

    pub(super) fn client_inner(
        &mut self,
        client: ClientId,
        request: ClientRequest,
        now: Millis,
    ) -> Result<(), Rejection> {
        if !self.clients.contains_key(&client) {
            if self.clients.len() >= self.config.max_clients {
                return Err(Rejection::TooManyClients {
                    limit: self.config.max_clients,
                });
            }
            self.clients.insert(client, FlatSet::new());
        }
        validate_request(&request).map_err(|detail| Rejection::InvalidBinding { detail })?;
        match request {
            ClientRequest::StartRuntime { request, workspace } => {
                self.start_runtime(client, request, workspace, now)
            }
            ClientRequest::Admit {
                request,
                key,
                binding,
            } => self.admit(client, request, key, binding, None, now),
            ClientRequest::Reissue {
                request,
                key,
                original,
                binding,
            } => {
                // A repeat of the same re-issue answers like a repeated admit.
                let existing =
                    self.working
                        .keys
                        .get(&key)
                        .and_then(|c| match self.working.command(*c) {
                            Some(c) => Some(c.reissue_of),
                            None => self.working.settled_command(*c).map(|c| c.reissue_of),
                        });
                match existing {
                    Some(reissue_of) if reissue_of != Some(original) => {
                        return Err(Rejection::IdReused {
                            id: key.to_string(),
                        })
                    }
                    Some(_) => {}
                    None => self.check_reissue(original, &binding)?,
                }
                self.admit(client, request, key, binding, Some(original), now)
            }
            ClientRequest::Cancel {
                request,
                command,
                generation,
            } => {
                let (actual, settled) = match self.working.command(command) {
                    Some(c) => (c.binding.generation, None),
                    None => self
                        .working
                        .settled_command(command)
                        .map(|c| (c.generation, Some(c.outcome)))
                        .ok_or(Rejection::UnknownCommand { command })?,
                };
                if actual != generation {
                    return Err(Rejection::StaleGeneration {
                        command,
                        requested: generation,
                        actual,
                    });
                }
                if let Some(outcome) = settled {
                    self.reply(
                        client,
                        ClientMessage::CancelSettlement {
                            request,
                            command,
                            settlement: Settlement::Settled { outcome },
                        },
                    );
                    return Ok(());
                }
                if !self.has_room() {
                    return Err(Rejection::Busy);
                }
                let settlement = self.cancel_command(command, CancelReason::User, now);
                self.reply(
                    client,
                    ClientMessage::CancelSettlement {
                        request,
                        command,
                        settlement,
                    },
                );
                Ok(())
            }
            ClientRequest::Join { request, cursor } => self.join(client, request, cursor),
            ClientRequest::OpenSession {
                request,
                session,
                workspace,
                title,
            } => self.open_session(client, request, session, workspace, title, now),
            ClientRequest::RecordTurn {
                request,
                session,
                turn,
                prompt,
                plan,
                agent,
            } => self.record_turn(client, request, session, turn, prompt, plan, agent, now),
            ClientRequest::FinishTurn {
                request,
                turn,
                status,
                reply,
                ending,
            } => {
                let t = self
                    .working
                    .turns
                    .get(&turn)
                    .ok_or(Rejection::UnknownTurn { turn })?;
                if t.end.is_some() {
                    return Err(Rejection::TurnEnded { turn });
                }
                self.writable()?;
                self.record(
                    now,
                    JournalRecord::TurnFinished {
                        turn,
                        status,
                        reply,
                        ending,
                    },
                );
                self.reply(client, ClientMessage::TurnFinished { request, turn });
                Ok(())
            }
            ClientRequest::RecordProviderRequest {
                request,
                provider_request,
                turn,
                step,
            } => self.record_provider_request(client, request, provider_request, turn, step, now),
            ClientRequest::RecordProviderReply {
                request,
                provider_request,
                text,
                tool_calls,
                stop,
                input_tokens,
                output_tokens,
            } => {
                let outcome = ProviderOutcome::Replied {
                    text,
                    tool_calls,
                    stop,
                    input_tokens,
                    output_tokens,
                    position: 0,
                };
                self.record_provider_outcome(client, request, provider_request, outcome, now)
            }
            ClientRequest::RecordProviderFailure {
                request,
                provider_request,
                class,
                message,
                partial_text,
                reason,
            } => {
                let outcome = ProviderOutcome::Failed {
                    class,
                    message,
                    partial_text,
                    stamp: ErrorStamp::from_u128(1).expect("1 is a valid id"),
                    position: 0,
                    reason,
                };
                self.record_provider_outcome(client, request, provider_request, outcome, now)
            }
            ClientRequest::RecordProviderRetry {
                provider_request,
                attempt,
                class,
                message,
                wait_ms,
                ..
            } => {
                self.record_provider_retry(provider_request, attempt, class, message, wait_ms, now)
            }
            ClientRequest::RecordSession { request, record } => {
                let session = record.session();
                if !self.working.sessions.contains_key(&session) {
                    return Err(Rejection::UnknownSession { session });
                }
                self.writable()?;
                // A tombstone removes the rest of its session: planned from
                // what is recorded so far, before the tombstone buries it.
                let purge = match &record {
                    SessionRecord::Tombstone { session, .. } => self.working.purge_plan(*session),
                    _ => None,
                };
                self.record(now, JournalRecord::Session { record });
                if purge.is_some() {
                    self.open.purge = purge;
                }
                self.reply(client, ClientMessage::SessionRecorded { request });
                Ok(())
            }
            ClientRequest::StopRuntime {
                request,
                runtime,
                generation,
            } => {
                // Fenced by the captured generation: a stop for an older
                // generation never reaches a replacement.
                if self.fenced_runtime(runtime, generation).is_err() {
                    return Err(Rejection::RuntimeNotCurrent {
                        runtime,
                        generation,
                    });
                }
                self.writable()?;
                self.retire_and_terminate(
                    runtime,
                    generation,
                    RetireCause::Stopped,
                    RecoveryKind::SessionStopped,
                    None,
                    "its session stopped it".into(),
                    now,
                );
                self.reply(
                    client,
                    ClientMessage::RuntimeStopping {
                        request,
                        runtime,
                        generation,
                    },
                );
                Ok(())
            }
        }
    }

    fn join(
        &mut self,
        client: ClientId,
        request: RequestId,
        cursor: crate::event::Cursor,
    ) -> Result<(), Rejection> {
        let command = cursor.command;
        // A command kept small holds no events: all of them are a gap here,
        // read from the journal by whoever shows them.
        let (last_seq, outcome, evicted, events) = match self.durable.command(command) {
            Some(c) => (
                c.last_seq,
                c.outcome,
                c.evicted_through,
                c.events_after(cursor.after)
                    .map(|e| ClientMessage::Event {
                        command,
                        seq: e.seq,
                        body: e.body.clone(),
                    })
                    .collect(),
            ),
            None => self
                .durable
                .settled_command(command)
                .map(|c| (c.last_seq, c.outcome, c.last_seq, Vec::new()))
                .ok_or(Rejection::UnknownCommand { command })?,
        };
        if cursor.after > last_seq {
            return Err(Rejection::CursorAhead {
                command,
                after: cursor.after,
                durable: last_seq,
            });
        }
        let subs = self.clients.entry(client).or_default();
        if !subs.contains(&command) && subs.len() >= self.config.max_subscriptions_per_client {
            return Err(Rejection::TooManyClients {
                limit: self.config.max_subscriptions_per_client,
            });
        }
        subs.insert(command);
        let mut out = Vec::new();
        if cursor.after < evicted {
            out.push(ClientMessage::Gap {
                command,
                from: cursor.after.next(),
                to: evicted,
            });
        }
        out.extend(events);
        out.push(ClientMessage::Joined {
            request,
            command,
            through: last_seq,
            outcome,
        });
        for message in out {
            self.effects
                .push_back(ControllerEffect::NotifyClient { client, message });
        }
        Ok(())
    }
}
