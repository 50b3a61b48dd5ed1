//! Sequenced events from a runtime, and the stream positions it reports in
//! its hello and heartbeats.
//!
//! Events of a command are dense (1, 2, 3, …): a duplicate is dropped, a
//! conflicting one is kept as recorded with evidence, a gap asks the runtime
//! to resend. Output is retained within budget (inline or as a
//! content-addressed artifact) and an event is acknowledged to the runtime
//! only once durable, so the runtime keeps what it must resend.

use crate::event::{retain_output, EventBody, EventRecord, HashedText, RetainedBody};
use crate::id::{CommandId, Digest, EventSeq, Generation, Millis, RuntimeId};
use crate::journal::{AckSource, JournalRecord, RecoveryKind};
use crate::message::{ControllerToRuntime, StreamPosition};
use crate::outcome::{Outcome, OutcomeEvent};
use crate::projection::Exposure;
use crate::schema::V1;

use super::{Controller, ControllerError};

impl Controller {
    /// A runtime's view of its streams (hello or heartbeat). Listing a
    /// command proves the runtime accepted it.
    pub(super) fn streams(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        streams: &[StreamPosition],
        via: AckSource,
        now: Millis,
    ) {
        for s in streams {
            let Some(c) = self.working.command(s.command) else {
                continue;
            };
            if c.binding.runtime != runtime || c.binding.generation != generation {
                continue;
            }
            if c.exposure == (Exposure::Exposed { attempt: s.attempt }) {
                self.acknowledge(s.command, s.attempt, via, now);
            }
            if via != AckSource::Heartbeat {
                continue;
            }
            let working_last = self
                .working
                .command(s.command)
                .map_or(EventSeq::ZERO, |c| c.last_seq);
            let durable_last = self
                .durable
                .command(s.command)
                .map_or(EventSeq::ZERO, |c| c.last_seq);
            if s.last_seq > working_last {
                // Asked again on every heartbeat that shows the runtime ahead:
                // the retry, should an earlier answer have been lost.
                self.ask_resend(runtime, s.command, working_last);
                self.send(
                    runtime,
                    ControllerToRuntime::Resend {
                        runtime,
                        generation,
                        command: s.command,
                        after: working_last,
                    },
                );
            }
            if durable_last > s.durable_through {
                self.send(
                    runtime,
                    ControllerToRuntime::EventsDurable {
                        runtime,
                        generation,
                        command: s.command,
                        through: durable_last,
                    },
                );
            }
        }
    }

    /// Whether the events after `after` of `command` may be asked for: not
    /// if this link already asked for exactly that tail (see
    /// [`super::link::Link::resend_asked`]). Records the ask.
    fn ask_resend(&mut self, runtime: RuntimeId, command: CommandId, after: EventSeq) -> bool {
        let Some(link) = self.links.get_mut(&runtime) else {
            return true;
        };
        if link.resend_asked.get(&command) == Some(&after) {
            return false;
        }
        link.resend_asked.insert(command, after);
        true
    }

    /// Event `seq`, at or before the last one recorded, came again: a
    /// resend if its content is the same (or no longer known), answered as
    /// durable once it is; a conflict, kept as evidence, if it differs.
    #[allow(clippy::too_many_arguments)]
    fn resent(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        command: CommandId,
        seq: EventSeq,
        recorded: Option<Digest>,
        digest: Digest,
        now: Millis,
    ) -> Result<(), ControllerError> {
        if recorded.is_some_and(|d| d != digest) {
            if self.has_room() {
                let outcomes = self.unchanged(command).into_iter().collect();
                let rref = self.runtime_ref(runtime);
                self.evidence(
                    now,
                    RecoveryKind::StreamConflict,
                    rref,
                    format!(
                        "runtime sent a different event {seq} for command {command}; the recorded event was kept"
                    ),
                    outcomes,
                );
            }
            return Err(ControllerError::ConflictingDuplicate { command, seq });
        }
        let durable_last = match self.durable.command(command) {
            Some(c) => c.last_seq,
            None => self
                .durable
                .settled_command(command)
                .map_or(EventSeq::ZERO, |c| c.last_seq),
        };
        if seq <= durable_last {
            self.send(
                runtime,
                ControllerToRuntime::EventsDurable {
                    runtime,
                    generation,
                    command,
                    through: durable_last,
                },
            );
        }
        Ok(())
    }

    pub(super) fn event(
        &mut self,
        runtime: RuntimeId,
        generation: Generation,
        command: CommandId,
        seq: EventSeq,
        body: EventBody,
        now: Millis,
    ) -> Result<(), ControllerError> {
        // An output event's text is hashed once, for its digest and its
        // artifact's.
        let mut hashed = body.output().map(HashedText::new);
        let digest = match &hashed {
            Some(text) => body.digest_of_output(text),
            None => body.digest(),
        };
        if let Some(c) = self.working.settled_command(command) {
            // Settled for good: whatever it sends is at or before its
            // terminal event, whose digest is all that is kept.
            if c.runtime != runtime || c.generation != generation {
                return Err(ControllerError::WrongRuntime { command, runtime });
            }
            if seq > c.last_seq {
                return Err(ControllerError::Malformed {
                    detail: format!("event {seq} for command {command} after its terminal event"),
                });
            }
            let recorded = (seq == c.last_seq).then_some(c.terminal);
            return self.resent(runtime, generation, command, seq, recorded, digest, now);
        }
        let exposure = self.bound_command(command, runtime, generation)?;
        let c = &self.working.commands[&command];
        let last = c.last_seq;
        if seq <= last {
            let recorded = c.digest_of(seq);
            return self.resent(runtime, generation, command, seq, recorded, digest, now);
        }
        if seq != last.next() {
            if self.ask_resend(runtime, command, last) {
                self.send(
                    runtime,
                    ControllerToRuntime::Resend {
                        runtime,
                        generation,
                        command,
                        after: last,
                    },
                );
            }
            return Err(ControllerError::SequenceGap {
                command,
                expected: last.next(),
                got: seq,
            });
        }
        if self.working.commands[&command].terminal.is_some() {
            return Err(ControllerError::Malformed {
                detail: format!("event {seq} for command {command} after its terminal event"),
            });
        }
        if !self.has_room() {
            return Err(ControllerError::Backpressure);
        }
        match exposure {
            Exposure::Exposed { attempt } => {
                self.acknowledge(command, attempt, AckSource::Event, now)
            }
            Exposure::Acknowledged { .. } => {}
            Exposure::None | Exposure::Refused { .. } => {
                return Err(ControllerError::Malformed {
                    detail: format!(
                        "event for command {command}, which this runtime never accepted"
                    ),
                })
            }
        }
        let c = &self.working.commands[&command];
        let policy = self.working.policy;
        let retained_inline = c.stdout.inline_bytes + c.stderr.inline_bytes;
        let retained_total = (c.stdout.total_bytes - c.stdout.dropped_bytes)
            + (c.stderr.total_bytes - c.stderr.dropped_bytes);
        let inline_room = policy.inline_output_bytes.saturating_sub(retained_inline);
        let budget_room = c
            .binding
            .budget
            .max_output_bytes
            .saturating_sub(retained_total);
        let (stdout_offset, stderr_offset) = (c.stdout.total_bytes, c.stderr.total_bytes);
        let mut blob = None;
        let retained = match &body {
            EventBody::Stdout { data } => {
                let text = hashed.take().unwrap_or_else(|| HashedText::new(data));
                let (chunk, b) = retain_output(&text, stdout_offset, inline_room, budget_room);
                blob = b;
                RetainedBody::Stdout(chunk)
            }
            EventBody::Stderr { data } => {
                let text = hashed.take().unwrap_or_else(|| HashedText::new(data));
                let (chunk, b) = retain_output(&text, stderr_offset, inline_room, budget_room);
                blob = b;
                RetainedBody::Stderr(chunk)
            }
            EventBody::Tool { name, detail } => RetainedBody::Tool {
                name: name.clone(),
                detail: detail.clone(),
            },
            EventBody::Lifecycle { phase } => RetainedBody::Lifecycle {
                phase: phase.clone(),
            },
            EventBody::Checkpoint { label } => RetainedBody::Checkpoint {
                label: label.clone(),
            },
            EventBody::Terminal(t) => RetainedBody::Terminal(t.clone()),
        };
        if let Some(b) = blob {
            // Content-addressed: the same bytes from any command are stored once.
            if !self.working.artifacts.contains_key(&b.digest()) {
                self.record(
                    now,
                    JournalRecord::ArtifactStored {
                        digest: b.digest(),
                        len: b.data().len() as u64,
                    },
                );
                self.open.artifacts.push(b);
            }
        }
        let terminal = match &body {
            EventBody::Terminal(t) => Some(t.status),
            _ => None,
        };
        self.record(
            now,
            JournalRecord::Event(EventRecord {
                v: V1,
                command,
                seq,
                digest,
                body: retained,
            }),
        );
        let outcome = self.working.outcome(command);
        match terminal {
            Some(status) => {
                if matches!(outcome, Some(Outcome::Dispatched | Outcome::Running)) {
                    self.change(now, command, OutcomeEvent::Finished(status));
                }
            }
            None => {
                if outcome == Some(Outcome::Dispatched) {
                    self.change(now, command, OutcomeEvent::Started);
                }
            }
        }
        self.send_after(
            runtime,
            ControllerToRuntime::EventsDurable {
                runtime,
                generation,
                command,
                through: seq,
            },
        );
        if terminal.is_some() {
            self.room_made(runtime, generation, now);
        }
        Ok(())
    }
}
