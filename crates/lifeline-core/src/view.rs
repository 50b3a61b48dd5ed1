//! The transcript view model: what a tab shows, derived only from durable
//! entries, as a stream of idempotent deltas.
//!
//! A tab never folds journal entries itself and never decides an outcome: the
//! controller (leader or follower) turns each confirmed batch into deltas
//! with [`batch_deltas`], and a tab that joins late gets [`session_deltas`]
//! first. Every delta carries the full current state of the thing it names
//! except [`ViewDelta::Output`], which appends; the controller sends output
//! once per durable event, so appending cannot duplicate.

use serde::{Deserialize, Serialize};

use crate::agent::plan_key;
use crate::event::RetainedBody;
use crate::id::{CommandId, EventSeq, Generation, SessionId, TurnId};
use crate::journal::{JournalEntry, JournalRecord, TurnStatus};
use crate::outcome::Outcome;
use crate::projection::{CommandView, Projection};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    Stdout,
    Stderr,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "delta", rename_all = "snake_case")]
pub enum ViewDelta {
    Session {
        session: SessionId,
        title: String,
    },
    Turn {
        session: SessionId,
        turn: TurnId,
        prompt: String,
        status: Option<TurnStatus>,
        reply: Option<String>,
    },
    Command {
        session: SessionId,
        turn: Option<TurnId>,
        command: CommandId,
        line: String,
        outcome: Outcome,
        generation: Generation,
        exit_code: Option<i32>,
        /// The latest recovery observation naming this command.
        evidence: Option<String>,
    },
    /// Output appended to a command, in sequence order.
    Output {
        command: CommandId,
        seq: EventSeq,
        stream: Stream,
        text: String,
        /// Bytes of this chunk kept only as an artifact or dropped by the
        /// budget, so the tab can say output is missing from the view.
        not_shown: u64,
    },
    /// A settled command's whole retained output, replacing what was shown.
    Settled {
        command: CommandId,
        through: EventSeq,
        stdout: String,
        stderr: String,
        /// Output kept only as artifacts or dropped by the budget.
        not_shown: u64,
    },
    /// Events through `through` are in the journal but no longer held in
    /// memory for display.
    Gap {
        command: CommandId,
        through: EventSeq,
    },
}

/// Everything a tab needs to show `session` from scratch.
pub fn session_deltas(projection: &Projection, session: SessionId) -> Vec<ViewDelta> {
    let Some(s) = projection.sessions.get(&session) else {
        return Vec::new();
    };
    let mut out = vec![ViewDelta::Session {
        session,
        title: s.title.clone(),
    }];
    for turn in &s.turns {
        let Some(t) = projection.turns.get(turn) else {
            continue;
        };
        out.push(turn_delta(projection, *turn));
        for index in 0..t.plan.len() {
            let Some(command) = projection.keys.get(&plan_key(*turn, index)) else {
                break;
            };
            let Some(c) = projection.command(*command) else {
                continue;
            };
            out.push(command_delta(projection, c));
            if let Some(settled) = &c.settled {
                out.push(settled_delta(c, settled));
                continue;
            }
            let evicted = c.evicted_through;
            if evicted.0 > 0 {
                out.push(ViewDelta::Gap {
                    command: c.command,
                    through: evicted,
                });
            }
            out.extend(c.events.iter().filter_map(|e| output_delta(c.command, e)));
        }
    }
    out
}

/// The deltas a confirmed batch implies, read against the projection that
/// already includes it.
pub fn batch_deltas(projection: &Projection, entries: &[JournalEntry]) -> Vec<ViewDelta> {
    let mut out = Vec::new();
    for entry in entries {
        match &entry.record {
            JournalRecord::SessionOpened { session, title, .. } => out.push(ViewDelta::Session {
                session: *session,
                title: title.clone(),
            }),
            JournalRecord::TurnRecorded { turn, .. } | JournalRecord::TurnFinished { turn, .. }
                if projection.turns.contains_key(turn) =>
            {
                out.push(turn_delta(projection, *turn));
            }
            JournalRecord::CommandAdmitted(rec) => {
                if let Some(c) = projection.command(rec.command) {
                    out.push(command_delta(projection, c));
                }
            }
            JournalRecord::OutcomeChanged { command, .. } => {
                if let Some(c) = projection.command(*command) {
                    out.push(command_delta(projection, c));
                }
            }
            JournalRecord::Event(e) => {
                if let Some(d) = output_delta(e.command, e) {
                    out.push(d);
                } else if matches!(e.body, RetainedBody::Terminal(_)) {
                    if let Some(c) = projection.command(e.command) {
                        out.push(command_delta(projection, c));
                    }
                }
            }
            JournalRecord::Recovery(ev) => {
                for r in &ev.outcomes {
                    if let Some(c) = projection.command(r.command) {
                        out.push(command_delta(projection, c));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn turn_delta(projection: &Projection, turn: TurnId) -> ViewDelta {
    let t = &projection.turns[&turn];
    ViewDelta::Turn {
        session: t.session,
        turn,
        prompt: t.prompt.clone(),
        status: t.end.as_ref().map(|e| e.status),
        reply: t.end.as_ref().map(|e| e.reply.clone()),
    }
}

/// The turn whose plan a command was admitted under, if any.
fn turn_of(projection: &Projection, c: &CommandView) -> Option<TurnId> {
    let s = projection.sessions.get(&c.binding.session)?;
    s.turns.iter().rev().copied().find(|t| {
        projection
            .turns
            .get(t)
            .is_some_and(|tv| (0..tv.plan.len()).any(|i| plan_key(*t, i) == c.key))
    })
}

fn command_delta(projection: &Projection, c: &CommandView) -> ViewDelta {
    let exit_code = c.terminal.as_ref().and_then(|e| match &e.body {
        RetainedBody::Terminal(t) => t.exit_code,
        _ => None,
    });
    let evidence = c.evidence.last().and_then(|stamp| {
        projection
            .evidence
            .iter()
            .rev()
            .find(|e| e.stamp == *stamp)
            .map(|e| e.observed.clone())
    });
    ViewDelta::Command {
        session: c.binding.session,
        turn: turn_of(projection, c),
        command: c.command,
        line: c.binding.command_line.clone(),
        outcome: c.outcome,
        generation: c.binding.generation,
        exit_code,
        evidence,
    }
}

fn settled_delta(c: &CommandView, settled: &crate::projection::SettledOutput) -> ViewDelta {
    let inline = (settled.stdout.len() + settled.stderr.len()) as u64;
    let total = c.stdout.total_bytes.saturating_add(c.stderr.total_bytes);
    ViewDelta::Settled {
        command: c.command,
        through: settled.through,
        stdout: settled.stdout.clone(),
        stderr: settled.stderr.clone(),
        not_shown: total.saturating_sub(inline),
    }
}

fn output_delta(command: CommandId, e: &crate::event::EventRecord) -> Option<ViewDelta> {
    let (stream, chunk) = match &e.body {
        RetainedBody::Stdout(c) => (Stream::Stdout, c),
        RetainedBody::Stderr(c) => (Stream::Stderr, c),
        _ => return None,
    };
    Some(ViewDelta::Output {
        command,
        seq: e.seq,
        stream,
        text: chunk.inline.clone(),
        not_shown: chunk.len - chunk.inline.len() as u64,
    })
}
