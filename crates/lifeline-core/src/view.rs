//! The transcript view model: what a tab shows, derived only from durable
//! entries, as a stream of idempotent deltas.
//!
//! A tab never folds journal entries itself and never decides an outcome: the
//! controller (leader or follower) turns each confirmed batch into deltas
//! with [`batch_deltas`], and a tab that joins late gets [`session_deltas`]
//! first. Every delta carries the full current state of the thing it names
//! except [`ViewDelta::Output`], which appends; the controller sends output
//! once per durable event, so appending cannot duplicate.

use lifeline_decode::Decode;
use lifeline_encode::Encode;
use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::agent::plan_key;
use crate::event::{OutputSummary, RetainedBody};
use crate::id::{
    CommandId, EventSeq, Generation, IdempotencyKey, Millis, ProviderRequestId, SessionId, TurnId,
};
use crate::journal::{JournalEntry, JournalRecord, ProviderFailureClass, TurnStatus};
use crate::model::tool_key;
use crate::outcome::{Outcome, OutcomeEvent};
use crate::phrase::Phrase;
use crate::projection::{CommandView, Exposure, Projection, ProviderOutcome, TurnView};
use crate::render::{mark_output, marked_markdown};
use crate::settled::SettledCommand;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    Stdout,
    Stderr,
}

// Externally tagged: the page decodes it without serde's buffered content
// tree (the UI's wasm budget). It is never stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum ViewDelta<T = Phrase> {
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
        /// Set when the core ended the turn: the page words this instead
        /// of `reply` (its English).
        #[serde(default = "Option::default")]
        ending: Option<T>,
        /// Tokens of the turn's recorded replies, as the provider reported
        /// them (0 when it did not).
        #[serde(default)]
        input_tokens: u64,
        #[serde(default)]
        output_tokens: u64,
        /// When the prompt was recorded (the controller's clock, ms).
        #[serde(default)]
        at: Millis,
        /// `reply` as marked markdown ([`crate::render::marked_markdown`]).
        #[serde(default)]
        reply_md: String,
    },
    Command {
        session: SessionId,
        turn: Option<TurnId>,
        command: CommandId,
        line: String,
        outcome: Outcome,
        generation: Generation,
        exit_code: Option<i32>,
        /// What the latest recovery procedure naming this command
        /// observed ([`Phrase::Observed`]).
        evidence: Option<T>,
        /// The uncertain command this one deliberately runs again.
        #[serde(default)]
        reissue_of: Option<CommandId>,
        /// The command that re-issued this one.
        #[serde(default)]
        reissued_as: Option<CommandId>,
        /// When it was admitted, and when its terminal event was recorded
        /// (the controller's clock, ms): the page shows elapsed time and
        /// the duration from these.
        #[serde(default)]
        admitted_at: Millis,
        #[serde(default)]
        finished_at: Option<Millis>,
    },
    /// Output appended to a command, in sequence order.
    Output {
        command: CommandId,
        seq: EventSeq,
        stream: Stream,
        /// Marked output ([`crate::render::mark_output`]): escapes made
        /// style marks, relative to the style the previous chunk left.
        text: String,
        /// Bytes of this chunk kept only as an artifact or dropped by the
        /// budget, so the tab can say output is missing from the view.
        not_shown: u64,
    },
    /// A settled command's whole retained output, replacing what was shown.
    Settled {
        command: CommandId,
        through: EventSeq,
        /// Both marked, each chunk on its own, like `Output`'s text.
        stdout: String,
        stderr: String,
        /// Output kept only as artifacts or dropped by the budget.
        not_shown: u64,
        /// Whether `stdout` and `stderr` are the output, or it is still
        /// being read from the journal, or could not be.
        #[serde(default)]
        read: OutputRead,
    },
    /// Events through `through` are in the journal but no longer held in
    /// memory for display.
    Gap {
        command: CommandId,
        through: EventSeq,
    },
    /// One provider request of a model turn, with its durable outcome.
    ProviderRequest {
        session: SessionId,
        turn: TurnId,
        request: ProviderRequestId,
        step: u32,
        status: ProviderRequestStatus,
        /// The model's text in its reply (`replied`) or what streamed in
        /// before it failed (`failed`).
        text: Option<String>,
        /// Names of the tools the reply called, in order.
        tool_calls: Vec<String>,
        failure: Option<ProviderFailureView<T>>,
        /// `text` as marked markdown ([`crate::render::marked_markdown`]).
        #[serde(default)]
        text_md: String,
    },
}

impl<T> ViewDelta<T> {
    /// The same delta with its phrase worded by `word`; only a turn the
    /// core ended carries one.
    pub fn word<U>(self, word: &mut impl FnMut(T) -> U) -> ViewDelta<U> {
        use ViewDelta as D;
        match self {
            D::Turn {
                session,
                turn,
                prompt,
                status,
                reply,
                ending,
                input_tokens,
                output_tokens,
                at,
                reply_md,
            } => D::Turn {
                session,
                turn,
                prompt,
                status,
                reply,
                ending: ending.map(word),
                input_tokens,
                output_tokens,
                at,
                reply_md,
            },
            D::Session { session, title } => D::Session { session, title },
            D::Command {
                session,
                turn,
                command,
                line,
                outcome,
                generation,
                exit_code,
                evidence,
                reissue_of,
                reissued_as,
                admitted_at,
                finished_at,
            } => D::Command {
                session,
                turn,
                command,
                line,
                outcome,
                generation,
                exit_code,
                evidence: evidence.map(word),
                reissue_of,
                reissued_as,
                admitted_at,
                finished_at,
            },
            D::Output {
                command,
                seq,
                stream,
                text,
                not_shown,
            } => D::Output {
                command,
                seq,
                stream,
                text,
                not_shown,
            },
            D::Settled {
                command,
                through,
                stdout,
                stderr,
                not_shown,
                read,
            } => D::Settled {
                command,
                through,
                stdout,
                stderr,
                not_shown,
                read,
            },
            D::Gap { command, through } => D::Gap { command, through },
            D::ProviderRequest {
                session,
                turn,
                request,
                step,
                status,
                text,
                tool_calls,
                failure,
                text_md,
            } => D::ProviderRequest {
                session,
                turn,
                request,
                step,
                status,
                text,
                tool_calls,
                failure: failure.map(|f| f.word(word)),
                text_md,
            },
        }
    }
}

/// Where a settled command's output is, for showing it: its events stay in
/// the journal once it left the projection's recent window, so a view
/// built from scratch says `Loading` and the engine reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum OutputRead {
    /// The text is here.
    #[default]
    Shown,
    /// Being read from the journal; a `Shown` or `Unreadable` delta follows.
    Loading,
    /// The journal could not give it back (the command and its outcome
    /// stand; only the text is missing).
    Unreadable,
}

/// What a copy of a command's output may claim to hold, so that Copy
/// output never passes part of an output, or none of it, for all of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyClaim {
    /// The whole output is on the page, and so in the copy.
    Whole,
    /// Only the output shown: more of it is stored (Download output has it).
    OnlyShown,
    /// No output: it is still being read from the journal.
    StillLoading,
    /// No output: the journal could not give it back.
    Unreadable,
}

impl OutputRead {
    /// What a copy made now holds: `more_stored` when the page shows only
    /// part of an output it knows is longer.
    pub fn copy_claim(self, more_stored: bool) -> CopyClaim {
        match self {
            OutputRead::Loading => CopyClaim::StillLoading,
            OutputRead::Unreadable => CopyClaim::Unreadable,
            OutputRead::Shown if more_stored => CopyClaim::OnlyShown,
            OutputRead::Shown => CopyClaim::Whole,
        }
    }
}

/// Where a provider request stands, as the journal proves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum ProviderRequestStatus {
    /// Recorded and sent; its turn is still open.
    Waiting,
    Replied,
    Failed,
    /// No outcome was recorded and its turn has ended: the provider may
    /// have answered, nobody knows; it was not sent again.
    Uncertain,
}

impl ProviderRequestStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderRequestStatus::Waiting => "waiting",
            ProviderRequestStatus::Replied => "replied",
            ProviderRequestStatus::Failed => "failed",
            ProviderRequestStatus::Uncertain => "uncertain",
        }
    }
}

/// A recorded provider failure, ready to show. Its label and advice are
/// the page's, from `class` in the reader's language: no English travels
/// with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct ProviderFailureView<T = Phrase> {
    pub class: ProviderFailureClass,
    /// What happened: the recorded reason, worded for the reader
    /// ([`Phrase::FailedBecause`]), else the recorded message as it is
    /// ([`Phrase::Recorded`]: the provider's or the browser's own words).
    pub message: T,
}

impl<T> ProviderFailureView<T> {
    pub fn word<U>(self, word: &mut impl FnMut(T) -> U) -> ProviderFailureView<U> {
        ProviderFailureView {
            class: self.class,
            message: word(self.message),
        }
    }
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
        if t.agent.is_model() {
            for request in &t.requests {
                let Some(d) = provider_delta(projection, *request) else {
                    continue;
                };
                out.push(d);
                for command in tool_commands(projection, t, *request) {
                    push_command(projection, command, Some(*turn), &mut out);
                }
            }
            continue;
        }
        for index in 0..t.plan.len() {
            let Some(command) = projection.keys.get(&plan_key(*turn, index)) else {
                break;
            };
            push_command(projection, *command, Some(*turn), &mut out);
        }
    }
    // Commands outside any turn (the user's re-issues), in admission order:
    // batch deltas showed them as they came, so a rebuilt view shows them too.
    let mut loose: Vec<(u64, CommandId)> = projection
        .commands
        .values()
        .filter(|c| c.binding.session == session && c.reissue_of.is_some())
        .map(|c| (c.admitted_position, c.command))
        .chain(
            projection
                .settled
                .values()
                .filter(|c| c.session == session && c.reissue_of.is_some())
                .map(|c| (c.admitted_position, c.command)),
        )
        .collect();
    crate::order::by_key(&mut loose, |(position, _)| (*position).into());
    for (_, command) in loose {
        push_command(projection, command, None, &mut out);
    }
    out
}

/// A command's delta and everything it shows; `turn` is the turn it was
/// admitted under, which the caller knows (finding it from the command
/// hashes every plan key of every turn of the session).
fn push_command(
    projection: &Projection,
    command: CommandId,
    turn: Option<TurnId>,
    out: &mut Vec<ViewDelta>,
) {
    if let Some(c) = projection.settled_command(command) {
        out.push(small_delta(projection, c, turn));
        // Its output is in the journal, read when shown.
        out.push(settled_delta(
            command,
            [&c.stdout, &c.stderr],
            c.through(),
            None,
        ));
        return;
    }
    let Some(c) = projection.command(command) else {
        return;
    };
    out.push(command_delta(projection, c, turn));
    if let Some(settled) = &c.settled {
        let kept = c.kept_text();
        out.push(settled_delta(
            c.command,
            [&c.stdout, &c.stderr],
            settled.through,
            kept,
        ));
        return;
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

/// The commands admitted for the tool calls of `request`, in call order.
fn tool_commands(
    projection: &Projection,
    t: &TurnView,
    request: ProviderRequestId,
) -> Vec<CommandId> {
    let calls = match projection
        .provider_requests
        .get(&request)
        .and_then(|r| r.outcome.as_ref())
    {
        Some(ProviderOutcome::Replied { tool_calls, .. }) => tool_calls.len(),
        _ => 0,
    };
    (0..calls)
        .filter_map(|i| projection.keys.get(&tool_key(t.turn, request, i)).copied())
        .collect()
}

fn provider_delta(projection: &Projection, request: ProviderRequestId) -> Option<ViewDelta> {
    let r = projection.provider_requests.get(&request)?;
    let t = projection.turns.get(&r.turn)?;
    let (status, text, tool_calls, failure) = match &r.outcome {
        None if t.end.is_some() => (ProviderRequestStatus::Uncertain, None, Vec::new(), None),
        None => (ProviderRequestStatus::Waiting, None, Vec::new(), None),
        Some(ProviderOutcome::Replied {
            text, tool_calls, ..
        }) => (
            ProviderRequestStatus::Replied,
            Some(text.clone()),
            tool_calls.iter().map(|c| c.name.clone()).collect(),
            None,
        ),
        Some(ProviderOutcome::Failed {
            class,
            message,
            partial_text,
            reason,
            ..
        }) => (
            ProviderRequestStatus::Failed,
            (!partial_text.is_empty()).then(|| partial_text.clone()),
            Vec::new(),
            Some(ProviderFailureView {
                class: *class,
                message: match reason {
                    Some(reason) => Phrase::FailedBecause {
                        reason: reason.clone(),
                    },
                    None => Phrase::Recorded {
                        text: message.clone(),
                    },
                },
            }),
        ),
    };
    Some(ViewDelta::ProviderRequest {
        session: t.session,
        turn: r.turn,
        request,
        step: r.step,
        status,
        text_md: text.as_deref().map(marked_markdown).unwrap_or_default(),
        text,
        tool_calls,
        failure,
    })
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
            JournalRecord::TurnRecorded { turn, .. } if projection.turns.contains_key(turn) => {
                out.push(turn_delta(projection, *turn));
            }
            JournalRecord::TurnFinished { turn, .. } if projection.turns.contains_key(turn) => {
                out.push(turn_delta(projection, *turn));
                // A request left without an outcome is uncertain from here on.
                let t = &projection.turns[turn];
                for request in &t.requests {
                    let open = projection
                        .provider_requests
                        .get(request)
                        .is_some_and(|r| r.outcome.is_none());
                    if open {
                        out.extend(provider_delta(projection, *request));
                    }
                }
            }
            JournalRecord::ProviderRequested { request, .. }
            | JournalRecord::ProviderFailed { request, .. } => {
                out.extend(provider_delta(projection, *request));
            }
            JournalRecord::ProviderReplied { request, .. } => {
                out.extend(provider_delta(projection, *request));
                // The turn's token count grows with each reply.
                if let Some(r) = projection.provider_requests.get(request) {
                    if projection.turns.contains_key(&r.turn) {
                        out.push(turn_delta(projection, r.turn));
                    }
                }
            }
            JournalRecord::CommandAdmitted(rec) => {
                // A re-issue changes its original too: it now links to it.
                for c in rec.reissue_of.into_iter().chain([rec.command]) {
                    out.extend(delta_of(projection, c));
                }
            }
            JournalRecord::OutcomeChanged { command, .. } => {
                out.extend(delta_of(projection, *command));
            }
            JournalRecord::Event(e) => {
                if let Some(d) = output_delta(e.command, e) {
                    out.push(d);
                } else if matches!(e.body, RetainedBody::Terminal(_)) {
                    out.extend(delta_of(projection, e.command));
                }
            }
            JournalRecord::Recovery(ev) => {
                for r in &ev.outcomes {
                    out.extend(delta_of(projection, r.command));
                }
            }
            _ => {}
        }
    }
    out
}

fn turn_delta(projection: &Projection, turn: TurnId) -> ViewDelta {
    let t = &projection.turns[&turn];
    let (mut input, mut output) = (0u64, 0u64);
    for request in &t.requests {
        if let Some(ProviderOutcome::Replied {
            input_tokens,
            output_tokens,
            ..
        }) = projection
            .provider_requests
            .get(request)
            .and_then(|r| r.outcome.as_ref())
        {
            input = input.saturating_add(*input_tokens);
            output = output.saturating_add(*output_tokens);
        }
    }
    let reply = t.end.as_ref().map(|e| e.reply.clone());
    ViewDelta::Turn {
        at: t.recorded_at,
        reply_md: reply.as_deref().map(marked_markdown).unwrap_or_default(),
        input_tokens: input,
        output_tokens: output,
        session: t.session,
        turn,
        prompt: t.prompt.clone(),
        status: t.end.as_ref().map(|e| e.status),
        reply,
        ending: t
            .end
            .as_ref()
            .and_then(|e| e.ending.clone())
            .map(|ending| Phrase::TurnEnded { ending }),
    }
}

/// The turn whose plan (or whose model's tool calls) a command was
/// admitted under, if any.
fn turn_of(projection: &Projection, session: SessionId, key: IdempotencyKey) -> Option<TurnId> {
    let s = projection.sessions.get(&session)?;
    s.turns.iter().rev().copied().find(|t| {
        projection.turns.get(t).is_some_and(|tv| {
            (0..tv.plan.len()).any(|i| plan_key(*t, i) == key)
                || tv.requests.iter().any(|r| {
                    let calls = match projection
                        .provider_requests
                        .get(r)
                        .and_then(|v| v.outcome.as_ref())
                    {
                        Some(ProviderOutcome::Replied { tool_calls, .. }) => tool_calls.len(),
                        _ => 0,
                    };
                    (0..calls).any(|i| tool_key(*t, *r, i) == key)
                })
        })
    })
}

/// The runtime's terminal event is recorded in the same batch as the
/// outcome it settles, and before it: a command whose outcome came from one
/// but that holds none lost it (and whatever followed a hole in its
/// events) to a record that could not be read.
fn events_unreadable(c: &CommandView) -> bool {
    c.terminal.is_none()
        && c.history
            .last()
            .is_some_and(|s| matches!(s.event, OutcomeEvent::Finished(_)))
}

fn command_delta(projection: &Projection, c: &CommandView, turn: Option<TurnId>) -> ViewDelta {
    let exit_code = c.terminal.as_ref().and_then(|e| match &e.body {
        RetainedBody::Terminal(t) => t.exit_code,
        _ => None,
    });
    // Said first: it is why the row shows no output and no exit status.
    // Then a refusal the command still stands under: it is why the row
    // says "not dispatched".
    let evidence = if events_unreadable(c) {
        Some(Phrase::EventsUnreadable)
    } else if let (
        Outcome::NotDispatched,
        Exposure::Refused {
            refusal: Some(refusal),
            ..
        },
    ) = (c.outcome, c.exposure)
    {
        Some(Phrase::DispatchRefused { refusal })
    } else {
        observed(projection, &c.evidence)
    };
    ViewDelta::Command {
        session: c.binding.session,
        turn,
        command: c.command,
        line: c.binding.command_line.clone(),
        outcome: c.outcome,
        generation: c.binding.generation,
        exit_code,
        evidence,
        reissue_of: c.reissue_of,
        reissued_as: c.reissued_as,
        admitted_at: c.admitted_at,
        finished_at: c.finished_at,
    }
}

/// The newest recovery evidence naming a command, as its row says it.
fn observed(projection: &Projection, stamps: &[crate::id::ErrorStamp]) -> Option<Phrase> {
    stamps.last().and_then(|stamp| {
        projection
            .evidence
            .iter()
            .rev()
            .find(|e| e.stamp == *stamp)
            .map(|e| Phrase::Observed { kind: e.kind })
    })
}

/// A command's row, of either kind, its turn found from its key.
fn delta_of(projection: &Projection, command: CommandId) -> Option<ViewDelta> {
    match projection.command(command) {
        Some(c) => {
            let turn = turn_of(projection, c.binding.session, c.key);
            Some(command_delta(projection, c, turn))
        }
        None => {
            let c = projection.settled_command(command)?;
            Some(small_delta(
                projection,
                c,
                turn_of(projection, c.session, c.key),
            ))
        }
    }
}

fn small_delta(projection: &Projection, c: &SettledCommand, turn: Option<TurnId>) -> ViewDelta {
    ViewDelta::Command {
        session: c.session,
        turn,
        command: c.command,
        line: c.line.clone(),
        outcome: c.outcome,
        generation: c.generation,
        exit_code: c.exit_code,
        evidence: observed(projection, &c.evidence),
        reissue_of: c.reissue_of,
        reissued_as: c.reissued_as,
        admitted_at: c.admitted_at,
        finished_at: c.finished_at,
    }
}

/// A settled command's output: the text the projection kept (`kept`), or,
/// with its output in the journal (`None`), "loading" until it is read,
/// unless nothing of it was inline.
fn settled_delta(
    command: CommandId,
    summaries: [&OutputSummary; 2],
    through: EventSeq,
    kept: Option<[&str; 2]>,
) -> ViewDelta {
    let inline = summaries[0]
        .inline_bytes
        .saturating_add(summaries[1].inline_bytes);
    let ([stdout, stderr], read) = match kept {
        None if inline > 0 => (["", ""], OutputRead::Loading),
        None => (["", ""], OutputRead::Shown),
        Some(text) => (text, OutputRead::Shown),
    };
    settled_read(command, summaries, through, stdout, stderr, read)
}

fn settled_read(
    command: CommandId,
    [out, err]: [&OutputSummary; 2],
    through: EventSeq,
    stdout: &str,
    stderr: &str,
    read: OutputRead,
) -> ViewDelta {
    let stdout = whole_lines(stdout, out.truncated_at.is_some());
    let stderr = whole_lines(stderr, err.truncated_at.is_some());
    // What the read will not show either: artifacts and dropped bytes.
    let inline = out.inline_bytes.saturating_add(err.inline_bytes);
    let total = out.total_bytes.saturating_add(err.total_bytes);
    let inline = match read {
        OutputRead::Shown => (stdout.len() + stderr.len()) as u64,
        OutputRead::Loading | OutputRead::Unreadable => inline,
    };
    ViewDelta::Settled {
        command,
        through,
        stdout: mark_output(stdout),
        stderr: mark_output(stderr),
        not_shown: total.saturating_sub(inline),
        read,
    }
}

/// Inline output that stops before the stream's end is shown up to its last
/// whole line: a line cut mid-way (`12773` shown as `127`) reads as wrong
/// output, not as a truncation. The rest counts as not shown.
fn whole_lines(inline: &str, truncated: bool) -> &str {
    if !truncated {
        return inline;
    }
    inline.rfind('\n').map_or("", |end| &inline[..=end])
}

/// The commands in `deltas` whose output is to be read from the journal.
pub fn output_to_read(deltas: &[ViewDelta]) -> impl Iterator<Item = CommandId> + '_ {
    deltas.iter().filter_map(|d| match d {
        ViewDelta::Settled {
            command,
            read: OutputRead::Loading,
            ..
        } => Some(*command),
        _ => None,
    })
}

/// What a settled command shows once its events were read from the
/// journal (`Err`: they could not be); `None` when the projection keeps
/// its output itself (nothing was to be read).
pub fn output_read(
    projection: &Projection,
    command: CommandId,
    events: Result<&[crate::event::EventRecord], ()>,
) -> Option<ViewDelta> {
    let (summaries, through) = projection.output_in_journal(command)?;
    let Ok(events) = events else {
        return Some(settled_read(
            command,
            summaries,
            through,
            "",
            "",
            OutputRead::Unreadable,
        ));
    };
    let [stdout, stderr] = crate::event::inline_head(events, command, through);
    Some(settled_read(
        command,
        summaries,
        through,
        &stdout,
        &stderr,
        OutputRead::Shown,
    ))
}

fn output_delta(command: CommandId, e: &crate::event::EventRecord) -> Option<ViewDelta> {
    let (stream, chunk) = match &e.body {
        RetainedBody::Stdout(c) => (Stream::Stdout, c),
        RetainedBody::Stderr(c) => (Stream::Stderr, c),
        _ => return None,
    };
    let shown = whole_lines(&chunk.inline, chunk.len > chunk.inline.len() as u64);
    Some(ViewDelta::Output {
        command,
        seq: e.seq,
        stream,
        text: mark_output(shown),
        not_shown: chunk.len - shown.len() as u64,
    })
}

/// Where a session stands in the session list, as the journal proves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// Nothing runs; a message starts or continues it.
    Ready,
    /// A turn is open.
    Running,
    /// Its execution or its start failed; the card says what survived.
    Failed,
    /// A command may have run or was lost and nobody has said which.
    Uncertain,
    Archived,
}

/// One row of the session list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct SessionItem {
    pub session: SessionId,
    /// The name the user gave it, else its first prompt's first line; empty
    /// before either (the page says "Untitled session").
    pub title: String,
    pub status: SessionStatus,
    /// The local folder it works in; `None` for the worker sandbox.
    pub folder: Option<String>,
    /// When it was last active (milliseconds since the epoch).
    pub active_at: u64,
    pub continued_from: Option<SessionId>,
    pub continued_in: Option<SessionId>,
    /// About how many bytes its records and artifacts take in the journal.
    pub bytes: u64,
    /// The action its row and the Details pane offer (Archive, or
    /// Unarchive once archived), decided here like the card's: the page
    /// only renders it, and the engine takes only an offered one
    /// ([`session_offers`]). One, not a list: the page's wasm budget.
    pub action: Action,
}

/// The action the session list offers for a session: Archive, or
/// Unarchive once archived (Delete, which asks first, is always there).
/// None for a session the journal does not list.
pub fn session_offers(projection: &Projection, session: SessionId) -> Option<Action> {
    match projection.sessions.get(&session) {
        Some(s) if !s.deleted => Some(offer(s)),
        _ => None,
    }
}

fn offer(s: &crate::projection::SessionView) -> Action {
    if s.archived {
        Action::Unarchive
    } else {
        Action::Archive
    }
}

/// A first prompt names its session by this many characters at most.
const TITLE_CHARS: usize = 60;

/// The session list, most recently active first; deleted sessions are
/// tombstones and not listed.
pub fn session_list(projection: &Projection) -> Vec<SessionItem> {
    let mut list: Vec<SessionItem> = projection
        .sessions
        .values()
        .filter(|s| !s.deleted)
        .map(|s| session_item(projection, s))
        .collect();
    // Newest activity first, ties newest session first: the second key
    // sorted first, since the sort keeps the order of equal keys.
    crate::order::by_key_descending(&mut list, |s| s.session.as_u128());
    crate::order::by_key_descending(&mut list, |s| s.active_at.into());
    list
}

fn session_item(p: &Projection, s: &crate::projection::SessionView) -> SessionItem {
    use crate::session_record::SessionRecord as R;
    let title = match &s.renamed {
        Some(name) => name.clone(),
        None => s
            .turns
            .first()
            .and_then(|t| p.turns.get(t))
            .and_then(|t| {
                t.prompt
                    .lines()
                    .map(|l| crate::render::plain_text(l).trim().to_string())
                    .find(|l| !l.is_empty())
            })
            .map(|line| line.chars().take(TITLE_CHARS).collect())
            .unwrap_or_default(),
    };
    let records = p.lifecycles.get(&s.session).map_or(&[][..], Vec::as_slice);
    let folder = records.iter().find_map(|r| match r {
        R::Created {
            environment: crate::environment::Environment::LocalFolder { name, .. },
            ..
        } => Some(name.clone()),
        _ => None,
    });
    let failed = records.iter().rev().find_map(|r| match r {
        R::ExecutionFailed { .. } | R::StartupFailed { .. } => Some(true),
        R::ExecutionStarted { .. } | R::ExecutionRejoined { .. } | R::Unarchived { .. } => {
            Some(false)
        }
        _ => None,
    }) == Some(true);
    let judged = |c: CommandId| {
        records
            .iter()
            .any(|r| matches!(r, R::Verdict { command, .. } if *command == c))
    };
    let uncertain = p.commands.values().any(|c| {
        c.binding.session == s.session
            && matches!(c.outcome, Outcome::MayHaveStarted | Outcome::Lost)
            && c.reissued_as.is_none()
            && !judged(c.command)
    });
    // A failed execution outranks its open turn: the turn cannot go on
    // until the session is resumed, and a session failed in the
    // background must not look as if it were still working.
    let status = if s.archived {
        SessionStatus::Archived
    } else if failed {
        SessionStatus::Failed
    } else if crate::agent::open_turn(p, s.session).is_some() {
        SessionStatus::Running
    } else if uncertain {
        SessionStatus::Uncertain
    } else {
        SessionStatus::Ready
    };
    SessionItem {
        session: s.session,
        title,
        status,
        folder,
        active_at: s.active_at.unwrap_or(s.opened_at).0,
        continued_from: s.continued_from,
        continued_in: s.continued_in,
        bytes: s.bytes,
        action: offer(s),
    }
}

/// The session a delta belongs to, so a tab is sent only the open
/// session's transcript.
pub fn delta_session(projection: &Projection, delta: &ViewDelta) -> Option<SessionId> {
    match delta {
        ViewDelta::Session { session, .. }
        | ViewDelta::Turn { session, .. }
        | ViewDelta::Command { session, .. }
        | ViewDelta::ProviderRequest { session, .. } => Some(*session),
        ViewDelta::Output { command, .. }
        | ViewDelta::Settled { command, .. }
        | ViewDelta::Gap { command, .. } => projection.session_of(*command),
    }
}

/// Whether `session`'s title or transcript (prompts and replies) contains
/// every word of `query`, ignoring ASCII case (Unicode case tables would
/// cost the controller's wasm several kilobytes).
pub fn session_matches(projection: &Projection, session: SessionId, query: &str) -> bool {
    let Some(s) = projection.sessions.get(&session) else {
        return false;
    };
    let title = session_item(projection, s).title;
    let turns: Vec<&TurnView> = s
        .turns
        .iter()
        .filter_map(|t| projection.turns.get(t))
        .collect();
    query.split_whitespace().all(|word| {
        contains_folded(&title, word)
            || turns.iter().any(|t| {
                contains_folded(&t.prompt, word)
                    || t.end
                        .as_ref()
                        .is_some_and(|e| contains_folded(&e.reply, word))
            })
    })
}

fn contains_folded(text: &str, word: &str) -> bool {
    let (text, word) = (text.as_bytes(), word.as_bytes());
    word.is_empty()
        || text
            .windows(word.len())
            .any(|w| w.eq_ignore_ascii_case(word))
}
