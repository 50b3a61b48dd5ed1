//! The projection: everything the journal says, folded into per-command views.
//!
//! [`Projection::rebuild`] is a pure function of the durable entries, so what
//! the UI shows after a restart is exactly what the journal proves. A
//! [`ProjectionSnapshot`] lets startup load a snapshot and replay only the
//! tail: it is the projection with its recent window emptied
//! ([`Projection::snapshot`]), so a snapshot and the entries after it fold
//! to what the whole journal folds to, but for which settled commands keep
//! their events in memory. `apply` re-checks every invariant as it reads,
//! so a corrupt or contradictory journal is reported, not believed.

use lifeline_decode::Decode;
use lifeline_encode::Encode;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::flat::{FlatMap, FlatSet};

use serde::{Deserialize, Serialize};

use crate::command::Binding;
use crate::derived_key::plan_key;
use crate::event::{EventRecord, OutputSummary, RetainedBody};
use crate::id::{
    AttemptId, CommandId, Digest, ErrorStamp, EventSeq, ExecutionId, Generation, IdempotencyKey,
    LeaseId, Millis, ProviderRequestId, RuntimeId, SessionId, TurnId, WorkspaceId,
};
use crate::journal::{
    DispatchRefusal, GoneCause, JournalEntry, JournalRecord, ProviderFailureClass,
    RecoveryEvidence, ReplayError, RetireCause, ToolCallRecord, TurnAgent, TurnStatus,
};
use crate::outcome::{transition, CancelReason, Outcome, OutcomeEvent};
use crate::schema::{Schema, SnapshotVersion};
use crate::session_record::SessionRecord;
use crate::settled::SettledCommand;

/// Bounds on what the projection keeps in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct RetentionPolicy {
    /// Inline output bytes per command (stdout and stderr together).
    pub inline_output_bytes: u64,
    /// Non-terminal events kept per command; older ones leave a gap marker.
    pub retained_events: usize,
    /// Per-command digests kept for telling resends from conflicts.
    pub dedup_window: usize,
    /// Recovery evidence records kept in the projection (all stay in the journal).
    pub retained_evidence: usize,
    /// Settled commands whose events stay replayable from memory, newest
    /// first; older settled commands keep only their collapsed output.
    #[serde(default = "default_settled_with_events")]
    pub settled_with_events: usize,
}

fn default_settled_with_events() -> usize {
    16
}

impl Default for RetentionPolicy {
    fn default() -> Self {
        RetentionPolicy {
            inline_output_bytes: 64 * 1024,
            retained_events: 2048,
            dedup_window: 4096,
            retained_evidence: 256,
            settled_with_events: default_settled_with_events(),
        }
    }
}

/// Where a runtime generation stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RuntimeStatus {
    Current,
    Retired { cause: RetireCause },
    Gone { cause: GoneCause },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct RuntimeView {
    pub runtime: RuntimeId,
    pub generation: Generation,
    pub execution: ExecutionId,
    pub status: RuntimeStatus,
    pub termination_requested: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct LeaseView {
    pub workspace: WorkspaceId,
    pub lease: LeaseId,
    /// Every generation ever assigned, oldest first.
    pub runtimes: Vec<RuntimeView>,
}

impl LeaseView {
    /// The generation that may receive work, if any.
    pub fn current(&self) -> Option<&RuntimeView> {
        self.runtimes
            .last()
            .filter(|r| r.status == RuntimeStatus::Current)
    }
}

/// How far a command got towards the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Exposure {
    /// Never written as exposed: provably not sent.
    None,
    /// Written as exposed (the send may have happened), no ACK recorded.
    Exposed {
        attempt: AttemptId,
    },
    Acknowledged {
        attempt: AttemptId,
    },
    /// The runtime refused it: provably not started.
    Refused {
        attempt: AttemptId,
        /// Why, as the runtime said; absent in snapshots written before
        /// it was kept (the journal's record still holds it).
        #[serde(default)]
        refusal: Option<DispatchRefusal>,
    },
}

impl Exposure {
    pub fn attempt(self) -> Option<AttemptId> {
        match self {
            Exposure::None => None,
            Exposure::Exposed { attempt }
            | Exposure::Acknowledged { attempt }
            | Exposure::Refused { attempt, .. } => Some(attempt),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct CancelState {
    pub reason: CancelReason,
    pub requested_at: Millis,
}

/// One step in a command's outcome history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct OutcomeStep {
    pub position: u64,
    pub event: OutcomeEvent,
    pub to: Outcome,
}

/// What the UI shows for one command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct CommandView {
    pub command: CommandId,
    pub key: IdempotencyKey,
    pub binding: Binding,
    pub admitted_at: Millis,
    pub admitted_position: u64,
    pub outcome: Outcome,
    pub history: Vec<OutcomeStep>,
    pub exposure: Exposure,
    pub cancel: Option<CancelState>,
    pub last_seq: EventSeq,
    /// Retained non-terminal events, oldest first.
    pub events: VecDeque<EventRecord>,
    /// Events up to here are no longer retained in the projection.
    pub evicted_through: EventSeq,
    /// Always retained.
    pub terminal: Option<EventRecord>,
    pub stdout: OutputSummary,
    pub stderr: OutputSummary,
    /// Digests of the most recent events, for duplicate detection.
    pub recent_digests: VecDeque<Digest>,
    /// Recovery evidence naming this command (most recent, bounded).
    pub evidence: Vec<ErrorStamp>,
    /// A settled command's retained output, collapsed (see [`SettledOutput`]).
    #[serde(default)]
    pub settled: Option<SettledOutput>,
    /// The uncertain command this one re-issues.
    #[serde(default)]
    pub reissue_of: Option<CommandId>,
    /// The command that re-issued this one; at most one.
    #[serde(default)]
    pub reissued_as: Option<CommandId>,
    /// When its terminal event was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Millis>,
}

/// A settled command that left the recent window
/// ([`RetentionPolicy::settled_with_events`]): its events are dropped from
/// memory.
///
/// A settled command takes no more output, so its per-event records are
/// only needed to show it, and those are in the journal: the view says its
/// output is to be read (`OutputRead::Loading` in the view) and the
/// engine reads that command's events when it is shown. Keeping no output
/// here keeps the projection (and so its snapshot, and so startup)
/// proportional to the number of commands with a small constant, rather
/// than to the output ever written.
///
/// The text is kept only where a reader cannot wait for the journal: a
/// model session's tool results go into every later provider request of
/// its conversation. Snapshots written before this change carry the text
/// of every collapsed command (and no `in_journal`); they still read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct SettledOutput {
    /// Last output event folded in; the terminal event follows it.
    pub through: EventSeq,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stdout: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
    /// The output was not kept here: it is read from the journal.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_journal: bool,
}

/// Recent digests kept once a command has its terminal event: that event's.
/// While the command is in the recent window its retained events carry
/// their own digests, which [`CommandView::digest_of`] reads; once it left,
/// a resend of an older event is still recognised as one (it is at or
/// below `last_seq`) and answered as durable, and only a resend whose
/// content differs from what was recorded goes unnoticed; the recorded
/// event stands either way. Each digest kept costs about 66 bytes of
/// snapshot: a window of 16 commands of 100 events each kept 106 KB of
/// digests their events already held.
const SETTLED_DEDUP_WINDOW: usize = 1;

const MAX_EVIDENCE_PER_COMMAND: usize = 32;

impl CommandView {
    /// The person asked for this command to stop (Stop), whatever it
    /// then did: a command that finished before the cancel reached it
    /// still ends its turn, which must not go on to its next step.
    pub fn stop_requested(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.reason == crate::outcome::CancelReason::User)
    }

    /// The text a command that left the recent window kept of its output,
    /// if it is the whole inline head: a model session's command keeps its
    /// retained events' text, which lacks the head if retention let its
    /// first events go while it ran.
    pub fn kept_text(&self) -> Option<[&str; 2]> {
        let s = self.settled.as_ref().filter(|s| !s.in_journal)?;
        let text = [&s.stdout[..], &s.stderr[..]];
        crate::event::holds_whole_head(text, [&self.stdout, &self.stderr]).then_some(text)
    }

    /// The inline output the projection holds of this command: the text it
    /// kept when it left the recent window, or its retained events'. It
    /// lacks the head's start if retention let its first events go.
    pub fn held_head(&self) -> [String; 2] {
        let mut head = match &self.settled {
            Some(s) => [s.stdout.clone(), s.stderr.clone()],
            None => [String::new(), String::new()],
        };
        for e in &self.events {
            crate::event::push_inline(&mut head, e);
        }
        head
    }

    /// Leaves the recent window: events go; their text stays only if
    /// `keep_text`.
    fn settle(&mut self, keep_text: bool) {
        let mut settled = SettledOutput {
            through: EventSeq(self.last_seq.0.saturating_sub(1)),
            in_journal: !keep_text,
            ..SettledOutput::default()
        };
        for e in self.events.drain(..) {
            match &e.body {
                RetainedBody::Stdout(chunk) if keep_text => settled.stdout.push_str(&chunk.inline),
                RetainedBody::Stderr(chunk) if keep_text => settled.stderr.push_str(&chunk.inline),
                _ => {}
            }
        }
        self.evicted_through = settled.through;
        while self.recent_digests.len() > SETTLED_DEDUP_WINDOW {
            self.recent_digests.pop_front();
        }
        self.settled = Some(settled);
    }

    /// This command kept small ([`SettledCommand`]), when it may be:
    /// settled for good (a terminal event and a certain terminal outcome).
    /// The caller knows whether its turn has ended (a cancel by Stop is read
    /// only by its turn's agent) and its session is no model conversation.
    pub fn kept_small(&self) -> Option<SettledCommand> {
        let terminal = self.terminal.as_ref()?;
        if !self.outcome.is_terminal() || self.outcome == Outcome::Lost {
            return None;
        }
        let exit_code = match &terminal.body {
            RetainedBody::Terminal(t) => t.exit_code,
            _ => None,
        };
        Some(SettledCommand {
            command: self.command,
            key: self.key,
            session: self.binding.session,
            runtime: self.binding.runtime,
            generation: self.binding.generation,
            line: self.binding.command_line.clone(),
            binding: crate::settled::binding_digest(&self.binding),
            admitted_at: self.admitted_at,
            admitted_position: self.admitted_position,
            finished_at: self.finished_at,
            outcome: self.outcome,
            exit_code,
            last_seq: self.last_seq,
            terminal: terminal.digest,
            stdout: self.stdout.clone(),
            stderr: self.stderr.clone(),
            evidence: self.evidence.clone(),
            reissue_of: self.reissue_of,
            reissued_as: self.reissued_as,
        })
    }

    /// Digest of event `seq`, if still in the dedup window or retained.
    pub fn digest_of(&self, seq: EventSeq) -> Option<Digest> {
        if seq.0 == 0 || seq > self.last_seq {
            return None;
        }
        let back = (self.last_seq.0 - seq.0) as usize;
        let len = self.recent_digests.len();
        if back < len {
            return Some(self.recent_digests[len - 1 - back]);
        }
        let at = self.events.binary_search_by_key(&seq, |e| e.seq).ok()?;
        Some(self.events[at].digest)
    }

    /// Retained events after `after`, terminal last.
    pub fn events_after(&self, after: EventSeq) -> impl Iterator<Item = &EventRecord> {
        self.events
            .iter()
            .chain(self.terminal.iter())
            .filter(move |e| e.seq > after)
    }
}

/// A conversation on a workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct SessionView {
    pub session: SessionId,
    pub workspace: WorkspaceId,
    pub title: String,
    pub opened_at: Millis,
    /// Oldest first.
    pub turns: Vec<TurnId>,
    /// When a turn of it was last recorded or ended (its opening before):
    /// the session list's order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_at: Option<Millis>,
    /// The name the user gave it; until then its first prompt names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed: Option<String>,
    /// Start fresh or Continue from history went on in this session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued_in: Option<SessionId>,
    /// The session this one continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued_from: Option<SessionId>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub archived: bool,
    /// Deleted for good: only this tombstone stays.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
    /// Positions of its entries in the journal's `records` store: what a
    /// delete removes there (commands, events and evidence are keyed by
    /// their own ids).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<u64>,
    /// Artifacts its output named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub digests: Vec<Digest>,
    /// Recovery evidence about nothing but this session.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stamps: Vec<ErrorStamp>,
    /// About how many bytes its records and artifacts take in the journal
    /// (text and output lengths plus a fixed overhead per entry: counted as
    /// they are folded, so the Details pane never reads the stores).
    #[serde(default)]
    pub bytes: u64,
    /// Deleted, and its sandbox workspace not yet removed from OPFS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean: Option<WorkspaceId>,
}

/// What deleting a session removes from the journal's stores, in the same
/// transaction as its tombstone (see [`crate::journal::Purge`]).
impl Projection {
    /// The session's entries, outputs, evidence and the artifacts no other
    /// session names; `None` for a session this journal does not hold.
    pub fn purge_plan(&self, session: SessionId) -> Option<crate::journal::Purge> {
        let s = self.sessions.get(&session).filter(|s| !s.deleted)?;
        let shared = |d: &Digest| {
            self.sessions
                .values()
                .any(|o| o.session != session && o.digests.contains(d))
        };
        let artifacts: Vec<Digest> = s.digests.iter().copied().filter(|d| !shared(d)).collect();
        let mut records = s.records.clone();
        records.extend(artifacts.iter().filter_map(|d| self.artifact_at.get(d)));
        Some(crate::journal::Purge {
            session,
            records,
            commands: self.session_commands(session),
            evidence: s.stamps.clone(),
            artifacts,
            snapshot: None,
        })
    }

    fn session_commands(&self, session: SessionId) -> Vec<CommandId> {
        self.commands
            .values()
            .filter(|c| c.binding.session == session)
            .map(|c| c.command)
            .chain(
                self.settled
                    .values()
                    .filter(|c| c.session == session)
                    .map(|c| c.command),
            )
            .collect()
    }

    /// Whether a command of the session may still change (admitted,
    /// dispatched, running): a delete waits for it, or for Stop.
    pub fn session_busy(&self, session: SessionId) -> bool {
        self.commands.values().any(|c| {
            c.binding.session == session
                && matches!(
                    c.outcome,
                    Outcome::Admitted | Outcome::Dispatched | Outcome::Running
                )
        })
    }

    /// The tombstone folded: everything of the session leaves the
    /// projection (so the next snapshot holds none of it); its identities
    /// stay seen, never reused.
    fn bury(&mut self, session: SessionId, workspace: Option<WorkspaceId>) {
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        let turns = std::mem::take(&mut s.turns);
        let digests = std::mem::take(&mut s.digests);
        let stamps = std::mem::take(&mut s.stamps);
        s.records = Vec::new();
        s.title = String::new();
        s.renamed = None;
        s.bytes = 0;
        s.archived = true;
        s.deleted = true;
        s.clean = workspace;
        s.continued_in = None;
        s.continued_from = None;
        // One pass over each map, not a removal per entry: a `FlatMap`
        // shifts its tail on every removal from the middle.
        let turns: FlatSet<TurnId> = turns.into_iter().collect();
        let mut requests = FlatSet::new();
        self.turns.retain(|id, t| {
            let doomed = turns.contains(id);
            if doomed {
                requests.extend(t.requests.iter().copied());
            }
            !doomed
        });
        self.provider_requests
            .retain(|id, _| !requests.contains(id));
        let keys = &mut self.keys;
        self.commands.retain(|_, c| {
            let doomed = c.binding.session == session;
            if doomed {
                keys.remove(&c.key);
            }
            !doomed
        });
        self.settled.retain(|_, c| {
            let doomed = c.session == session;
            if doomed {
                keys.remove(&c.key);
            }
            !doomed
        });
        let commands = &self.commands;
        self.recently_settled.retain(|c| commands.contains_key(c));
        for d in digests {
            if !self.sessions.values().any(|o| o.digests.contains(&d)) {
                self.artifacts.remove(&d);
                self.artifact_at.remove(&d);
            }
        }
        self.evidence.retain(|e| !stamps.contains(&e.stamp));
        for o in self.sessions.values_mut() {
            if o.continued_in == Some(session) {
                o.continued_in = None;
            }
            if o.continued_from == Some(session) {
                o.continued_from = None;
            }
        }
        if let Some(list) = self.lifecycles.get_mut(&session) {
            list.truncate(1);
        }
    }

    /// Files a folded entry under the session it belongs to, for delete
    /// and the storage it takes.
    fn attribute(&mut self, position: u64, record: &JournalRecord) {
        use crate::journal::JournalRecord as R;
        let of_command = |p: &Projection, c: &CommandId| p.session_of(*c);
        let of_lease = |p: &Projection, l: &LeaseId| {
            let w = p.leases.get(l)?.workspace;
            p.sessions
                .values()
                .find(|s| s.workspace == w)
                .map(|s| s.session)
        };
        let of_turn = |p: &Projection, t: &TurnId| p.turns.get(t).map(|t| t.session);
        let of_request = |p: &Projection, r: &ProviderRequestId| {
            p.provider_requests.get(r).and_then(|r| of_turn(p, &r.turn))
        };
        let mut digest = None;
        let mut stamp = None;
        let (owner, bytes) = match record {
            R::LeaseGranted { workspace, .. } => (
                self.sessions
                    .values()
                    .find(|s| s.workspace == *workspace)
                    .map(|s| s.session),
                0,
            ),
            R::RuntimeAssigned { lease, .. }
            | R::RuntimeRetired { lease, .. }
            | R::RuntimeGone { lease, .. } => (of_lease(self, lease), 0),
            R::TerminationRequested { runtime, .. } => (
                self.runtime(*runtime)
                    .and_then(|(l, _)| of_lease(self, &l.lease)),
                0,
            ),
            R::CommandAdmitted(c) => (Some(c.binding.session), 0),
            R::DispatchExposed { command, .. }
            | R::Acknowledged { command, .. }
            | R::DispatchRefused { command, .. }
            | R::CancelRequested { command, .. }
            | R::OutcomeChanged { command, .. } => (of_command(self, command), 0),
            R::Event(e) => {
                let len = match &e.body {
                    RetainedBody::Stdout(c) | RetainedBody::Stderr(c) => {
                        digest = c.artifact.as_ref().map(|a| a.digest);
                        c.inline.len() as u64 + c.artifact.as_ref().map_or(0, |a| a.len)
                    }
                    _ => 0,
                };
                (of_command(self, &e.command), len)
            }
            R::ArtifactStored { .. } => (None, 0),
            R::Recovery(ev) => {
                let mut owners = ev.outcomes.iter().map(|r| of_command(self, &r.command));
                let first = owners.next().flatten();
                let one = first.filter(|f| owners.all(|o| o == Some(*f)));
                stamp = Some(ev.stamp);
                (one, ev.observed.len() as u64)
            }
            R::SessionOpened { session, title, .. } => (Some(*session), title.len() as u64),
            R::TurnRecorded {
                session,
                prompt,
                plan,
                ..
            } => (
                Some(*session),
                (prompt.len() + plan.iter().map(String::len).sum::<usize>()) as u64,
            ),
            R::TurnFinished { turn, reply, .. } => (of_turn(self, turn), reply.len() as u64),
            R::ProviderRequested { turn, .. } => (of_turn(self, turn), 0),
            R::ProviderReplied {
                request,
                text,
                tool_calls,
                ..
            } => (
                of_request(self, request),
                (text.len() + tool_calls.iter().map(|t| t.arguments.len()).sum::<usize>()) as u64,
            ),
            R::ProviderFailed {
                request,
                partial_text,
                ..
            } => (of_request(self, request), partial_text.len() as u64),
            R::ProviderRetried { request, .. } => (of_request(self, request), 0),
            R::Session { record } => match record {
                SessionRecord::Tombstone { .. } | SessionRecord::WorkspaceRemoved { .. } => {
                    (None, 0)
                }
                r => (Some(r.session()), 0),
            },
        };
        let keyed = matches!(record, R::CommandAdmitted(_) | R::Event(_) | R::Recovery(_));
        let Some(s) = owner
            .and_then(|o| self.sessions.get_mut(&o))
            .filter(|s| !s.deleted)
        else {
            return;
        };
        s.bytes += bytes + ENTRY_OVERHEAD_BYTES;
        if !keyed {
            s.records.push(position);
        }
        if let Some(d) = digest.filter(|d| !s.digests.contains(d)) {
            s.digests.push(d);
        }
        if let Some(st) = stamp {
            s.stamps.push(st);
        }
    }
}

/// What an entry takes in the journal besides its text: keys, ids, JSON.
const ENTRY_OVERHEAD_BYTES: u64 = 160;

/// How a turn ended, as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct TurnEnd {
    pub status: TurnStatus,
    pub reply: String,
    /// Why the core ended the turn, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<crate::ending::TurnEnding>,
    pub position: u64,
}

/// One prompt and what the agent planned for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct TurnView {
    pub turn: TurnId,
    pub session: SessionId,
    pub prompt: String,
    pub plan: Vec<String>,
    pub recorded_at: Millis,
    pub position: u64,
    pub end: Option<TurnEnd>,
    #[serde(default)]
    pub agent: TurnAgent,
    /// A model turn's provider requests, in step order.
    #[serde(default)]
    pub requests: Vec<ProviderRequestId>,
}

/// One provider request of a model turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct ProviderRequestView {
    pub request: ProviderRequestId,
    pub turn: TurnId,
    pub step: u32,
    pub position: u64,
    pub requested_at: Millis,
    /// `None`: the reply is still streaming, or — once no live fetch owns
    /// the request — uncertain: the provider may have answered.
    pub outcome: Option<ProviderOutcome>,
}

/// How a provider request ended, as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProviderOutcome {
    Replied {
        text: String,
        tool_calls: Vec<ToolCallRecord>,
        stop: String,
        input_tokens: u64,
        output_tokens: u64,
        position: u64,
    },
    Failed {
        class: ProviderFailureClass,
        message: String,
        partial_text: String,
        stamp: ErrorStamp,
        position: u64,
        /// Snapshots written before it have none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<crate::journal::FailureReason>,
    },
}

impl ProviderOutcome {
    /// True when `other` records the same thing (positions and the minted
    /// stamp aside): a repeat of it is accepted, anything else is refused.
    pub fn same_content(&self, other: &ProviderOutcome) -> bool {
        match (self, other) {
            (
                ProviderOutcome::Replied {
                    text: a,
                    tool_calls: b,
                    stop: c,
                    input_tokens: d,
                    output_tokens: e,
                    ..
                },
                ProviderOutcome::Replied {
                    text: a2,
                    tool_calls: b2,
                    stop: c2,
                    input_tokens: d2,
                    output_tokens: e2,
                    ..
                },
            ) => a == a2 && b == b2 && c == c2 && d == d2 && e == e2,
            (
                ProviderOutcome::Failed {
                    class: a,
                    message: b,
                    partial_text: c,
                    reason: d,
                    ..
                },
                ProviderOutcome::Failed {
                    class: a2,
                    message: b2,
                    partial_text: c2,
                    reason: d2,
                    ..
                },
            ) => a == a2 && b == b2 && c == c2 && d == d2,
            _ => false,
        }
    }
}

/// Everything the journal proves, folded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct Projection {
    pub policy: RetentionPolicy,
    /// Last applied journal position (0 for an empty journal).
    pub position: u64,
    pub leases: FlatMap<LeaseId, LeaseView>,
    pub workspaces: FlatMap<WorkspaceId, LeaseId>,
    pub commands: FlatMap<CommandId, CommandView>,
    /// Commands settled for good that left the recent window, kept small
    /// (see [`SettledCommand`]); never also in `commands`. Written one text
    /// each since snapshot version 4 (see `settled::lines`).
    #[serde(rename = "settled_lines", default, with = "crate::settled::lines")]
    pub settled: FlatMap<CommandId, SettledCommand>,
    /// `settled` as snapshot versions 1 to 3 wrote it (a map of objects):
    /// read under its old name and moved into `settled` as the snapshot is
    /// read, so it is always empty. A name of its own rather than a reader
    /// for both forms, which would need the decoder to say which it holds.
    #[serde(rename = "settled", default, skip_serializing)]
    settled_before_v4: FlatMap<CommandId, SettledCommand>,
    /// Each command's idempotency key, whole or kept small. Not written
    /// since snapshot version 3 (it grew with the history): it is rebuilt
    /// from the two maps as a snapshot is read.
    #[serde(default, skip_serializing)]
    pub keys: BTreeMap<IdempotencyKey, CommandId>,
    pub artifacts: BTreeMap<Digest, u64>,
    /// Where each artifact's `ArtifactStored` entry is (`records` store).
    #[serde(default)]
    pub artifact_at: BTreeMap<Digest, u64>,
    pub evidence: VecDeque<RecoveryEvidence>,
    pub evidence_evicted: u64,
    /// Settled commands that still hold their events, oldest first.
    #[serde(default)]
    pub recently_settled: VecDeque<CommandId>,
    #[serde(default)]
    pub sessions: FlatMap<SessionId, SessionView>,
    #[serde(default)]
    pub turns: FlatMap<TurnId, TurnView>,
    #[serde(default)]
    pub provider_requests: FlatMap<ProviderRequestId, ProviderRequestView>,
    /// Each session's lifecycle records, for [`crate::session::Sessions::recover`]:
    /// the first and the newest, bounded.
    #[serde(default)]
    pub lifecycles: FlatMap<SessionId, Vec<SessionRecord>>,
    /// Every identity the journal has used, of any kind.
    #[serde(with = "seen_ids")]
    seen: BTreeSet<u128>,
}

/// A projection at a journal position, for fast startup.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(from = "SnapshotRead")]
pub struct ProjectionSnapshot {
    pub v: SnapshotVersion,
    pub position: u64,
    pub projection: Projection,
}

/// A snapshot as read, before what it leaves out is rebuilt: so that no
/// decoded snapshot lacks it.
#[derive(Deserialize, Decode)]
struct SnapshotRead {
    v: SnapshotVersion,
    position: u64,
    projection: Projection,
}

impl From<SnapshotRead> for ProjectionSnapshot {
    fn from(read: SnapshotRead) -> ProjectionSnapshot {
        let mut projection = read.projection;
        for (command, c) in std::mem::take(&mut projection.settled_before_v4) {
            projection.settled.insert(command, c);
        }
        projection.restore_keys();
        ProjectionSnapshot {
            v: read.v,
            position: read.position,
            projection,
        }
    }
}

impl Schema for ProjectionSnapshot {
    const NAME: &'static str = "projection snapshot";
    const VERSIONS: &'static [u64] = &SnapshotVersion::READS;
    const MAX_BYTES: usize = crate::schema::limits::MAX_SNAPSHOT_BYTES;
    fn validate(&self) -> Result<(), String> {
        if self.position != self.projection.position {
            return Err(format!(
                "snapshot says position {} but its projection is at {}",
                self.position, self.projection.position
            ));
        }
        Ok(())
    }
}

/// The outcome an `OutcomeChanged` record moves `command` to from
/// `current`, if the record starts where the command is and the table
/// agrees with where it says it goes.
fn next_outcome(
    command: CommandId,
    current: Outcome,
    event: OutcomeEvent,
    from: Outcome,
    to: Outcome,
) -> Result<Outcome, String> {
    if current != from {
        return Err(format!(
            "outcome change for {command} starts from {from} but the command is {current}"
        ));
    }
    let next = transition(from, event).map_err(|e| e.to_string())?;
    if next != to {
        return Err(format!(
            "outcome change for {command} records {to}, table gives {next}"
        ));
    }
    Ok(next)
}

/// Raw identities as 32 hex digits: JSON numbers cannot carry 128 bits.
mod seen_ids {
    use std::collections::BTreeSet;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Identities per string: one string each made `seen` the most numerous
    /// value of a snapshot (three per command), and the browser's decoder
    /// pays per value. A snapshot written one to a string still reads.
    const PER_TEXT: usize = 64;

    /// `PER_TEXT` identities to a text, each as 32 hex digits.
    /// Made one at a time, as they are written.
    fn texts(set: &BTreeSet<u128>) -> impl Iterator<Item = String> + '_ {
        let mut ids = set.iter().peekable();
        std::iter::from_fn(move || {
            ids.peek()?;
            Some(
                ids.by_ref()
                    .take(PER_TEXT)
                    .map(|v| format!("{v:032x}"))
                    .collect(),
            )
        })
    }

    pub fn serialize<S: Serializer>(set: &BTreeSet<u128>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(texts(set))
    }

    pub fn encode(set: &BTreeSet<u128>, w: &mut lifeline_encode::Writer) {
        lifeline_encode::seq(w, texts(set));
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeSet<u128>, D::Error> {
        let mut set = BTreeSet::new();
        for text in Vec::<String>::deserialize(d)? {
            add(&mut set, &text).map_err(serde::de::Error::custom)?;
        }
        Ok(set)
    }

    /// Each text read where the snapshot's text holds it, not copied first.
    pub fn decode(
        json: lifeline_decode::Json<'_>,
    ) -> Result<BTreeSet<u128>, lifeline_decode::Error> {
        let mut set = BTreeSet::new();
        for text in lifeline_decode::texts(json)? {
            add(&mut set, &text?).map_err(lifeline_decode::Error::invalid)?;
        }
        Ok(set)
    }

    fn add(set: &mut BTreeSet<u128>, text: &str) -> Result<(), String> {
        if text.is_empty() || text.len() % 32 != 0 || !text.is_ascii() {
            return Err("seen ids must be 32 hex digits each".to_string());
        }
        for at in (0..text.len()).step_by(32) {
            let id = u128::from_str_radix(&text[at..at + 32], 16).map_err(|e| e.to_string())?;
            set.insert(id);
        }
        Ok(())
    }
}

impl Projection {
    /// What the session list shows of a lifecycle record, kept beside the
    /// session (the lifecycle itself is bounded and drops middle records).
    fn fold_session_view(&mut self, record: &SessionRecord) {
        match record {
            SessionRecord::Renamed { session, title } => {
                if let Some(s) = self.sessions.get_mut(session) {
                    s.renamed = Some(title.clone());
                }
            }
            SessionRecord::Succeeded { session, successor } => {
                if let Some(s) = self.sessions.get_mut(session) {
                    s.continued_in = Some(*successor);
                }
                if let Some(s) = self.sessions.get_mut(successor) {
                    s.continued_from = Some(*session);
                }
            }
            SessionRecord::Archived { session } => {
                if let Some(s) = self.sessions.get_mut(session) {
                    s.archived = true;
                }
            }
            SessionRecord::Unarchived { session } => {
                if let Some(s) = self.sessions.get_mut(session) {
                    s.archived = s.deleted;
                }
            }
            SessionRecord::Deleted { session, .. } => {
                if let Some(s) = self.sessions.get_mut(session) {
                    s.archived = true;
                    s.deleted = true;
                }
            }
            SessionRecord::Tombstone { session, workspace } => self.bury(*session, *workspace),
            SessionRecord::WorkspaceRemoved { session } => {
                if let Some(s) = self.sessions.get_mut(session) {
                    s.clean = None;
                }
            }
            _ => {}
        }
    }

    pub fn new(policy: RetentionPolicy) -> Projection {
        Projection {
            policy,
            position: 0,
            leases: FlatMap::new(),
            workspaces: FlatMap::new(),
            commands: FlatMap::new(),
            settled: FlatMap::new(),
            settled_before_v4: FlatMap::new(),
            keys: BTreeMap::new(),
            artifacts: BTreeMap::new(),
            artifact_at: BTreeMap::new(),
            evidence: VecDeque::new(),
            evidence_evicted: 0,
            recently_settled: VecDeque::new(),
            sessions: FlatMap::new(),
            turns: FlatMap::new(),
            provider_requests: FlatMap::new(),
            lifecycles: FlatMap::new(),
            seen: BTreeSet::new(),
        }
    }

    /// Folds durable entries from nothing.
    pub fn rebuild(
        policy: RetentionPolicy,
        entries: &[JournalEntry],
    ) -> Result<Projection, ReplayError> {
        let mut p = Projection::new(policy);
        for e in entries {
            p.apply(e)?;
        }
        Ok(p)
    }

    /// Continues from a snapshot with the entries written after it.
    pub fn from_snapshot(
        snapshot: ProjectionSnapshot,
        tail: &[JournalEntry],
    ) -> Result<Projection, ReplayError> {
        snapshot.validate().map_err(|detail| ReplayError {
            position: snapshot.position,
            detail,
        })?;
        let mut p = snapshot.projection;
        // Snapshots written before `settled` existed hold such commands whole.
        let old: Vec<CommandId> = p
            .commands
            .values()
            .filter(|c| c.settled.is_some() && !p.recently_settled.contains(&c.command))
            .map(|c| c.command)
            .collect();
        for command in old {
            p.keep_small(command);
        }
        let start = p.position;
        for e in tail.iter().filter(|e| e.position > start) {
            p.apply(e)?;
        }
        Ok(p)
    }

    /// Folds what can be trusted when some entries are missing or refused
    /// (quarantined as corrupt, or contradicting what came before).
    ///
    /// Missing positions are bridged and reported. An entry that does not
    /// apply is set aside and the fold restarts without it, because `apply`
    /// is not transactional; entries that depended on it are then refused
    /// in turn and reported too. After `max_refused` refusals the fold keeps
    /// the last clean prefix. Nothing here decides that an entry is wrong
    /// for good: the caller reports every returned error and keeps the
    /// stored entry.
    pub fn salvage(
        policy: RetentionPolicy,
        snapshot: Option<ProjectionSnapshot>,
        entries: &[JournalEntry],
        max_refused: usize,
    ) -> (Projection, Vec<ReplayError>) {
        let start = match snapshot {
            Some(s) if s.validate().is_ok() => s.projection,
            _ => Projection::new(policy),
        };
        let mut refused: Vec<ReplayError> = Vec::new();
        let mut stop_at = u64::MAX;
        'fold: loop {
            let mut p = start.clone();
            let mut missing = Vec::new();
            // The position the next entry should hold. A refused entry is
            // there, only not believed: it is reported as refused, never as
            // missing, and the gap after it starts past it.
            let mut expected = start.position + 1;
            for e in entries.iter().filter(|e| e.position > start.position) {
                if e.position >= stop_at {
                    break;
                }
                if e.position < expected {
                    continue;
                }
                if e.position != expected {
                    let last = e.position - 1;
                    missing.push(ReplayError {
                        position: expected,
                        detail: if last == expected {
                            format!("entry {expected} is missing")
                        } else {
                            format!("entries {expected} to {last} are missing")
                        },
                    });
                }
                if refused.iter().any(|r| r.position == e.position) {
                    expected = e.position + 1;
                    continue;
                }
                // Bridged: the fold goes on after what is missing or refused.
                p.position = e.position - 1;
                expected = e.position + 1;
                if let Err(err) = p.apply(e) {
                    if refused.len() >= max_refused {
                        stop_at = err.position;
                        refused.push(ReplayError {
                            position: err.position,
                            detail: format!(
                                "{}; too many entries were refused, so nothing from here on was loaded",
                                err.detail
                            ),
                        });
                    } else {
                        refused.push(err);
                    }
                    continue 'fold;
                }
            }
            refused.extend(missing);
            crate::order::by_key(&mut refused, |r| r.position.into());
            return (p, refused);
        }
    }

    /// Rebuilds `keys` from the commands, whole and kept small: what a
    /// snapshot does not write.
    fn restore_keys(&mut self) {
        self.keys.clear();
        for c in self.commands.values() {
            self.keys.insert(c.key, c.command);
        }
        for c in self.settled.values() {
            self.keys.insert(c.key, c.command);
        }
    }

    /// Whether a model conversation runs in `session`: its provider
    /// requests carry the session's earlier tool results.
    fn has_model_turn(&self, session: SessionId) -> bool {
        self.sessions.get(&session).is_some_and(|s| {
            s.turns
                .iter()
                .any(|t| self.turns.get(t).is_some_and(|t| t.agent.is_model()))
        })
    }

    /// This projection as a snapshot holds it: with the recent window
    /// emptied ([`Projection::empty_window`]).
    pub fn snapshot(&self) -> ProjectionSnapshot {
        let mut projection = self.clone();
        projection.empty_window();
        ProjectionSnapshot {
            v: SnapshotVersion::CURRENT,
            position: self.position,
            projection,
        }
    }

    /// Every settled command leaves the recent window, as it would if the
    /// window were full ([`RetentionPolicy::settled_with_events`] is how
    /// much output is kept in memory to show without reading the journal,
    /// never what a decision rests on). A snapshot is written this way:
    /// the window's events were more than half of a long history's
    /// snapshot (464 of 800 KB at 100k events), read at every start and
    /// all in the journal already. After a start, those commands' output
    /// is read from the journal when they are shown, like any older one's.
    pub fn empty_window(&mut self) {
        while !self.recently_settled.is_empty() {
            self.leave_window();
        }
    }

    /// The oldest command of the recent window leaves it: its events go
    /// (their text stays if its session is a model conversation, whose
    /// provider requests carry it), and it is kept small if it may be.
    fn leave_window(&mut self) {
        let Some(old) = self.recently_settled.pop_front() else {
            return;
        };
        // Asked once: it walks the session's turns, and settling changes
        // none of them.
        let model = self
            .commands
            .get(&old)
            .is_some_and(|c| self.has_model_turn(c.binding.session));
        if let Some(c) = self.commands.get_mut(&old) {
            c.settle(model);
        }
        self.keep_small_as(old, model);
    }

    pub fn outcome(&self, command: CommandId) -> Option<Outcome> {
        self.commands
            .get(&command)
            .map(|c| c.outcome)
            .or_else(|| self.settled.get(&command).map(|c| c.outcome))
    }

    /// A command settled for good and kept small ([`SettledCommand`]);
    /// [`Projection::command`] has every other.
    pub fn settled_command(&self, command: CommandId) -> Option<&SettledCommand> {
        self.settled.get(&command)
    }

    /// A settled command whose output is in the journal only (out of the
    /// recent window, whole or kept small, with no whole text of its own):
    /// its output summaries and the last output event its inline head runs
    /// to.
    pub fn output_in_journal(&self, command: CommandId) -> Option<([&OutputSummary; 2], EventSeq)> {
        match self.commands.get(&command) {
            Some(c) => {
                let through = c.settled.as_ref()?.through;
                c.kept_text()
                    .is_none()
                    .then_some(([&c.stdout, &c.stderr], through))
            }
            None => {
                let c = self.settled.get(&command)?;
                Some(([&c.stdout, &c.stderr], c.through()))
            }
        }
    }

    /// The session a command, of either kind, was admitted in.
    pub fn session_of(&self, command: CommandId) -> Option<SessionId> {
        self.commands
            .get(&command)
            .map(|c| c.binding.session)
            .or_else(|| self.settled.get(&command).map(|c| c.session))
    }

    /// Moves `command` to [`Projection::settled`] if it may go there: out
    /// of the recent window, settled for good, its turn ended and its
    /// session no model conversation (see [`SettledCommand`]).
    fn keep_small(&mut self, command: CommandId) {
        let model = self
            .commands
            .get(&command)
            .is_some_and(|c| self.has_model_turn(c.binding.session));
        self.keep_small_as(command, model);
    }

    /// [`Projection::keep_small`], with whether its session is a model
    /// conversation already known.
    fn keep_small_as(&mut self, command: CommandId, model: bool) {
        let Some(c) = self.commands.get(&command) else {
            return;
        };
        if c.settled.is_none() || model || self.in_open_turn(c.binding.session, c.key) {
            return;
        }
        if let Some(small) = c.kept_small() {
            self.commands.remove(&command);
            self.settled.insert(command, small);
        }
    }

    /// Whether `key` is a plan step of an unfinished turn of `session`
    /// (its agent reads that command's outcome to take the next step).
    fn in_open_turn(&self, session: SessionId, key: IdempotencyKey) -> bool {
        let Some(s) = self.sessions.get(&session) else {
            return false;
        };
        s.turns.iter().any(|t| {
            self.turns.get(t).is_some_and(|tv| {
                tv.end.is_none() && (0..tv.plan.len()).any(|i| plan_key(*t, i) == key)
            })
        })
    }

    pub fn command(&self, command: CommandId) -> Option<&CommandView> {
        self.commands.get(&command)
    }

    /// Whether any journal record used this raw identity.
    pub fn is_seen(&self, raw: u128) -> bool {
        self.seen.contains(&raw)
    }

    /// The lease and generation record for a runtime identity.
    pub fn runtime(&self, runtime: RuntimeId) -> Option<(&LeaseView, &RuntimeView)> {
        self.leases.values().find_map(|l| {
            l.runtimes
                .iter()
                .find(|r| r.runtime == runtime)
                .map(|r| (l, r))
        })
    }

    /// Commands bound to one runtime generation, in admission order.
    pub fn commands_on(&self, runtime: RuntimeId, generation: Generation) -> Vec<CommandId> {
        let mut v: Vec<&CommandView> = self
            .commands
            .values()
            .filter(|c| c.binding.runtime == runtime && c.binding.generation == generation)
            .collect();
        crate::order::by_key(&mut v, |c| c.admitted_position.into());
        v.into_iter().map(|c| c.command).collect()
    }

    /// Whether step `step` of `turn` may be requested now: the turn is an
    /// open model turn, `step` is the next one, and the previous request
    /// ended in a reply that asked for tools. A request whose outcome is
    /// unknown or failed is never followed by another: nothing is resent.
    pub fn provider_step_allowed(&self, turn: TurnId, step: u32) -> Result<(), String> {
        let t = self
            .turns
            .get(&turn)
            .ok_or_else(|| format!("provider request for unknown turn {turn}"))?;
        if t.end.is_some() {
            return Err(format!("provider request for turn {turn}, which has ended"));
        }
        if !t.agent.is_model() {
            return Err(format!("turn {turn} is not a model turn"));
        }
        let expected = t.requests.len() as u32 + 1;
        if step != expected {
            return Err(format!(
                "provider request step {step} for turn {turn}; the next step is {expected}"
            ));
        }
        if let Some(last) = t.requests.last() {
            match self.provider_requests.get(last).and_then(|r| r.outcome.as_ref()) {
                None => {
                    return Err(format!(
                        "step {} of turn {turn} has no recorded outcome; it is never followed by another request",
                        step - 1
                    ))
                }
                Some(ProviderOutcome::Failed { .. }) => {
                    return Err(format!("step {} of turn {turn} failed; the turn ends there", step - 1))
                }
                Some(ProviderOutcome::Replied { tool_calls, .. }) if tool_calls.is_empty() => {
                    return Err(format!(
                        "step {} of turn {turn} was the model's final reply",
                        step - 1
                    ))
                }
                Some(ProviderOutcome::Replied { .. }) => {}
            }
        }
        Ok(())
    }

    fn provider_outcome_allowed(&self, request: ProviderRequestId) -> Result<(), String> {
        let r = self
            .provider_requests
            .get(&request)
            .ok_or_else(|| format!("outcome for unknown provider request {request}"))?;
        if r.outcome.is_some() {
            return Err(format!("provider request {request} has an outcome already"));
        }
        if self.turns.get(&r.turn).is_some_and(|t| t.end.is_some()) {
            return Err(format!(
                "outcome for provider request {request} after its turn ended"
            ));
        }
        Ok(())
    }

    fn fresh(&mut self, raw: u128, what: &str) -> Result<(), String> {
        if !self.seen.insert(raw) {
            return Err(format!("{what} reuses an identity already in the journal"));
        }
        Ok(())
    }

    fn runtime_mut(
        &mut self,
        lease: LeaseId,
        runtime: RuntimeId,
        generation: Generation,
    ) -> Result<&mut RuntimeView, String> {
        self.leases
            .get_mut(&lease)
            .and_then(|l| {
                l.runtimes
                    .iter_mut()
                    .find(|r| r.runtime == runtime && r.generation == generation)
            })
            .ok_or_else(|| format!("no runtime {runtime} generation {generation} on lease {lease}"))
    }

    fn command_mut(&mut self, command: CommandId) -> Result<&mut CommandView, String> {
        self.commands
            .get_mut(&command)
            .ok_or_else(|| format!("no command {command}"))
    }

    /// Applies one entry after checking it against everything before it.
    pub fn apply(&mut self, entry: &JournalEntry) -> Result<(), ReplayError> {
        let position = entry.position;
        let err = |detail: String| ReplayError { position, detail };
        if position != self.position + 1 {
            return Err(err(format!(
                "expected position {} (entries must be dense)",
                self.position + 1
            )));
        }
        entry.validate().map_err(err)?;
        self.apply_record(position, entry.at, &entry.record)
            .map_err(err)?;
        self.attribute(position, &entry.record);
        self.position = position;
        Ok(())
    }

    fn apply_record(
        &mut self,
        position: u64,
        at: Millis,
        record: &JournalRecord,
    ) -> Result<(), String> {
        match record {
            JournalRecord::LeaseGranted { workspace, lease } => {
                if self.workspaces.contains_key(workspace) {
                    return Err(format!("workspace {workspace} already has a lease"));
                }
                self.fresh(workspace.as_u128(), "workspace")?;
                self.fresh(lease.as_u128(), "lease")?;
                self.workspaces.insert(*workspace, *lease);
                self.leases.insert(
                    *lease,
                    LeaseView {
                        workspace: *workspace,
                        lease: *lease,
                        runtimes: Vec::new(),
                    },
                );
            }
            JournalRecord::RuntimeAssigned {
                lease,
                runtime,
                generation,
                execution,
            } => {
                let l = self
                    .leases
                    .get(lease)
                    .ok_or_else(|| format!("no lease {lease}"))?;
                let expected = l
                    .runtimes
                    .last()
                    .map_or(Generation::FIRST, |r| r.generation.next());
                if *generation != expected {
                    return Err(format!(
                        "generation {generation} assigned but the next generation is {expected}"
                    ));
                }
                if l.current().is_some() {
                    return Err(
                        "a new generation was assigned before the current one was retired".into(),
                    );
                }
                self.fresh(runtime.as_u128(), "runtime")?;
                self.fresh(execution.as_u128(), "execution")?;
                if let Some(l) = self.leases.get_mut(lease) {
                    l.runtimes.push(RuntimeView {
                        runtime: *runtime,
                        generation: *generation,
                        execution: *execution,
                        status: RuntimeStatus::Current,
                        termination_requested: false,
                    });
                }
            }
            JournalRecord::RuntimeRetired {
                lease,
                runtime,
                generation,
                cause,
            } => {
                let r = self.runtime_mut(*lease, *runtime, *generation)?;
                if r.status != RuntimeStatus::Current {
                    return Err(format!("runtime {runtime} retired twice"));
                }
                r.status = RuntimeStatus::Retired { cause: *cause };
            }
            JournalRecord::RuntimeGone {
                lease,
                runtime,
                generation,
                cause,
            } => {
                let r = self.runtime_mut(*lease, *runtime, *generation)?;
                if !matches!(r.status, RuntimeStatus::Retired { .. }) {
                    return Err(format!("runtime {runtime} gone before it was retired"));
                }
                r.status = RuntimeStatus::Gone { cause: *cause };
            }
            JournalRecord::CommandAdmitted(rec) => {
                let b = &rec.binding;
                let l = self
                    .leases
                    .get(&b.lease)
                    .ok_or_else(|| format!("command bound to unknown lease {}", b.lease))?;
                if l.workspace != b.workspace {
                    return Err("command's workspace does not hold its lease".into());
                }
                if !l
                    .runtimes
                    .iter()
                    .any(|r| r.runtime == b.runtime && r.generation == b.generation)
                {
                    return Err("command bound to a runtime generation the lease never had".into());
                }
                if let Some(original) = rec.reissue_of {
                    let (reissued_as, session) = match self.commands.get(&original) {
                        Some(o) => (o.reissued_as, o.binding.session),
                        None => self
                            .settled
                            .get(&original)
                            .map(|o| (o.reissued_as, o.session))
                            .ok_or_else(|| {
                                format!(
                                    "command re-issues {original}, which the journal does not hold"
                                )
                            })?,
                    };
                    if let Some(other) = reissued_as {
                        return Err(format!(
                            "command {original} was already re-issued as {other}"
                        ));
                    }
                    if session != b.session {
                        return Err(format!("command re-issues {original} of another session"));
                    }
                }
                self.fresh(rec.command.as_u128(), "command")?;
                self.fresh(rec.key.as_u128(), "idempotency key")?;
                if let Some(original) = rec.reissue_of {
                    if let Some(o) = self.commands.get_mut(&original) {
                        o.reissued_as = Some(rec.command);
                    } else if let Some(o) = self.settled.get_mut(&original) {
                        o.reissued_as = Some(rec.command);
                    }
                }
                self.keys.insert(rec.key, rec.command);
                self.commands.insert(
                    rec.command,
                    CommandView {
                        command: rec.command,
                        key: rec.key,
                        binding: rec.binding.clone(),
                        admitted_at: rec.admitted_at,
                        admitted_position: position,
                        outcome: Outcome::Admitted,
                        history: Vec::new(),
                        exposure: Exposure::None,
                        cancel: None,
                        last_seq: EventSeq::ZERO,
                        events: VecDeque::new(),
                        evicted_through: EventSeq::ZERO,
                        terminal: None,
                        stdout: OutputSummary::default(),
                        stderr: OutputSummary::default(),
                        recent_digests: VecDeque::new(),
                        evidence: Vec::new(),
                        settled: None,
                        reissue_of: rec.reissue_of,
                        reissued_as: None,
                        finished_at: None,
                    },
                );
            }
            JournalRecord::DispatchExposed {
                command,
                attempt,
                runtime,
                generation,
            } => {
                let c = self.command_mut(*command)?;
                if c.binding.runtime != *runtime || c.binding.generation != *generation {
                    return Err(format!(
                        "command {command} exposed to a runtime it is not bound to"
                    ));
                }
                // After a refusal (which proves the attempt did not start)
                // another attempt may be exposed; never after one that may
                // have reached the runtime.
                if !matches!(c.exposure, Exposure::None | Exposure::Refused { .. }) {
                    return Err(format!("command {command} exposed twice"));
                }
                if !matches!(c.outcome, Outcome::Admitted | Outcome::NotDispatched) {
                    return Err(format!("command {command} exposed while {}", c.outcome));
                }
                c.exposure = Exposure::Exposed { attempt: *attempt };
                self.fresh(attempt.as_u128(), "attempt")?;
            }
            JournalRecord::Acknowledged {
                command, attempt, ..
            } => {
                let c = self.command_mut(*command)?;
                if c.exposure != (Exposure::Exposed { attempt: *attempt }) {
                    return Err(format!(
                        "acknowledgement for command {command} attempt {attempt} does not match its exposure"
                    ));
                }
                c.exposure = Exposure::Acknowledged { attempt: *attempt };
            }
            JournalRecord::DispatchRefused {
                command,
                attempt,
                reason,
            } => {
                let c = self.command_mut(*command)?;
                if c.exposure != (Exposure::Exposed { attempt: *attempt }) {
                    return Err(format!(
                        "refusal for command {command} does not match its exposure"
                    ));
                }
                c.exposure = Exposure::Refused {
                    attempt: *attempt,
                    refusal: Some(*reason),
                };
            }
            JournalRecord::Event(rec) => {
                let policy = self.policy;
                let c = self.command_mut(rec.command)?;
                if rec.seq != c.last_seq.next() {
                    return Err(format!(
                        "event {} for command {} does not follow {}",
                        rec.seq, rec.command, c.last_seq
                    ));
                }
                if c.terminal.is_some() {
                    return Err(format!("event after the terminal event of {}", rec.command));
                }
                if !matches!(c.exposure, Exposure::Acknowledged { .. }) {
                    return Err(format!(
                        "event for command {} before its acknowledgement",
                        rec.command
                    ));
                }
                c.last_seq = rec.seq;
                c.recent_digests.push_back(rec.digest);
                while c.recent_digests.len() > policy.dedup_window.max(1) {
                    c.recent_digests.pop_front();
                }
                match &rec.body {
                    RetainedBody::Stdout(chunk) => c.stdout.record(chunk),
                    RetainedBody::Stderr(chunk) => c.stderr.record(chunk),
                    _ => {}
                }
                if rec.body.kind() == crate::event::EventKind::Terminal {
                    c.terminal = Some(rec.clone());
                    c.finished_at = Some(at);
                    while c.recent_digests.len() > SETTLED_DEDUP_WINDOW {
                        c.recent_digests.pop_front();
                    }
                    self.recently_settled.push_back(rec.command);
                    while self.recently_settled.len() > policy.settled_with_events {
                        self.leave_window();
                    }
                } else {
                    c.events.push_back(rec.clone());
                    while c.events.len() > policy.retained_events {
                        if let Some(old) = c.events.pop_front() {
                            c.evicted_through = old.seq;
                        }
                    }
                }
            }
            JournalRecord::CancelRequested {
                command,
                generation,
                reason,
            } => {
                let c = self.command_mut(*command)?;
                if c.binding.generation != *generation {
                    return Err(format!(
                        "cancel for {command} names generation {generation}"
                    ));
                }
                if c.cancel.is_some() {
                    return Err(format!("command {command} cancelled twice"));
                }
                if c.outcome.is_terminal() {
                    return Err(format!("cancel recorded for settled command {command}"));
                }
                c.cancel = Some(CancelState {
                    reason: *reason,
                    requested_at: at,
                });
            }
            JournalRecord::TerminationRequested {
                runtime,
                generation,
                ..
            } => {
                let lease = self
                    .runtime(*runtime)
                    .map(|(l, _)| l.lease)
                    .ok_or_else(|| format!("termination of unknown runtime {runtime}"))?;
                let r = self.runtime_mut(lease, *runtime, *generation)?;
                r.termination_requested = true;
            }
            JournalRecord::OutcomeChanged {
                command,
                event,
                from,
                to,
            } if self.settled.contains_key(command) => {
                // Kept small, it keeps no history; its outcome still moves
                // only as the table allows.
                let c = self
                    .settled
                    .get_mut(command)
                    .ok_or_else(|| format!("no command {command}"))?;
                c.outcome = next_outcome(*command, c.outcome, *event, *from, *to)?;
            }
            JournalRecord::OutcomeChanged {
                command,
                event,
                from,
                to,
            } => {
                let c = self.command_mut(*command)?;
                let next = next_outcome(*command, c.outcome, *event, *from, *to)?;
                c.outcome = next;
                c.history.push(OutcomeStep {
                    position,
                    event: *event,
                    to: next,
                });
            }
            JournalRecord::ArtifactStored { digest, len } => {
                if self.artifacts.insert(*digest, *len).is_some() {
                    return Err(format!("artifact {digest} stored twice"));
                }
                self.artifact_at.insert(*digest, position);
            }
            JournalRecord::Recovery(ev) => {
                self.fresh(ev.stamp.as_u128(), "error stamp")?;
                for r in &ev.outcomes {
                    let evidence = match self.commands.get_mut(&r.command) {
                        Some(c) => Some(&mut c.evidence),
                        None => self.settled.get_mut(&r.command).map(|c| &mut c.evidence),
                    };
                    if let Some(evidence) = evidence {
                        evidence.push(ev.stamp);
                        if evidence.len() > MAX_EVIDENCE_PER_COMMAND {
                            evidence.remove(0);
                        }
                    }
                }
                self.evidence.push_back(ev.clone());
                while self.evidence.len() > self.policy.retained_evidence {
                    self.evidence.pop_front();
                    self.evidence_evicted += 1;
                }
            }
            JournalRecord::SessionOpened {
                session,
                workspace,
                title,
            } => {
                if self.sessions.len() >= crate::schema::limits::MAX_SESSIONS {
                    return Err("the journal holds its limit of sessions".into());
                }
                if self.sessions.values().any(|s| s.workspace == *workspace) {
                    return Err(format!("workspace {workspace} already has a session"));
                }
                self.fresh(session.as_u128(), "session")?;
                self.sessions.insert(
                    *session,
                    SessionView {
                        session: *session,
                        workspace: *workspace,
                        title: title.clone(),
                        opened_at: at,
                        turns: Vec::new(),
                        active_at: None,
                        renamed: None,
                        continued_in: None,
                        continued_from: None,
                        archived: false,
                        deleted: false,
                        records: Vec::new(),
                        digests: Vec::new(),
                        stamps: Vec::new(),
                        bytes: 0,
                        clean: None,
                    },
                );
            }
            JournalRecord::TurnRecorded {
                session,
                turn,
                prompt,
                plan,
                agent,
            } => {
                if agent.is_model() && !plan.is_empty() {
                    return Err(format!("model turn {turn} records a plan"));
                }
                if !self.sessions.contains_key(session) {
                    return Err(format!("turn for unknown session {session}"));
                }
                self.fresh(turn.as_u128(), "turn")?;
                if let Some(s) = self.sessions.get_mut(session) {
                    s.turns.push(*turn);
                    s.active_at = Some(at);
                }
                self.turns.insert(
                    *turn,
                    TurnView {
                        turn: *turn,
                        session: *session,
                        prompt: prompt.clone(),
                        plan: plan.clone(),
                        recorded_at: at,
                        position,
                        end: None,
                        agent: agent.clone(),
                        requests: Vec::new(),
                    },
                );
            }
            JournalRecord::TurnFinished {
                turn,
                status,
                reply,
                ending,
            } => {
                let t = self
                    .turns
                    .get_mut(turn)
                    .ok_or_else(|| format!("end of unknown turn {turn}"))?;
                if t.end.is_some() {
                    return Err(format!("turn {turn} ended twice"));
                }
                t.end = Some(TurnEnd {
                    status: *status,
                    reply: reply.clone(),
                    ending: ending.clone(),
                    position,
                });
                let session = t.session;
                let plan = t.plan.len();
                if let Some(s) = self.sessions.get_mut(&session) {
                    s.active_at = Some(at);
                }
                // Its commands that left the window while it ran.
                for index in 0..plan {
                    let key = plan_key(*turn, index);
                    if let Some(command) = self.keys.get(&key).copied() {
                        self.keep_small(command);
                    }
                }
            }
            JournalRecord::ProviderRequested {
                request,
                turn,
                step,
            } => {
                self.provider_step_allowed(*turn, *step)?;
                self.fresh(request.as_u128(), "provider request")?;
                if let Some(t) = self.turns.get_mut(turn) {
                    t.requests.push(*request);
                }
                self.provider_requests.insert(
                    *request,
                    ProviderRequestView {
                        request: *request,
                        turn: *turn,
                        step: *step,
                        position,
                        requested_at: at,
                        outcome: None,
                    },
                );
            }
            JournalRecord::ProviderReplied {
                request,
                text,
                tool_calls,
                stop,
                input_tokens,
                output_tokens,
            } => {
                self.provider_outcome_allowed(*request)?;
                if let Some(r) = self.provider_requests.get_mut(request) {
                    r.outcome = Some(ProviderOutcome::Replied {
                        text: text.clone(),
                        tool_calls: tool_calls.clone(),
                        stop: stop.clone(),
                        input_tokens: *input_tokens,
                        output_tokens: *output_tokens,
                        position,
                    });
                }
            }
            // Evidence of a refused attempt: the request stays open, its
            // outcome still to come.
            JournalRecord::ProviderRetried { request, .. } => {
                self.provider_outcome_allowed(*request)?;
            }
            JournalRecord::Session { record } => {
                // Ids in these records are minted by the session layer's own
                // minter; they are remembered, not checked, here.
                match record {
                    SessionRecord::ExecutionStarted { attempt, .. }
                    | SessionRecord::ExecutionRejoined { attempt, .. }
                    | SessionRecord::StartupCancelled { attempt, .. } => {
                        self.seen.insert(attempt.as_u128());
                    }
                    SessionRecord::StartupFailed { stamp, attempt, .. } => {
                        self.seen.insert(stamp.as_u128());
                        self.seen.insert(attempt.as_u128());
                    }
                    SessionRecord::ExecutionFailed { stamp, .. } => {
                        self.seen.insert(stamp.as_u128());
                    }
                    _ => {}
                }
                self.fold_session_view(record);
                let list = self.lifecycles.entry(record.session()).or_default();
                list.push(record.clone());
                if list.len() > crate::schema::limits::MAX_LIFECYCLE_RECORDS {
                    list.remove(1);
                }
            }
            JournalRecord::ProviderFailed {
                request,
                class,
                message,
                partial_text,
                stamp,
                reason,
            } => {
                self.provider_outcome_allowed(*request)?;
                self.fresh(stamp.as_u128(), "error stamp")?;
                if let Some(r) = self.provider_requests.get_mut(request) {
                    r.outcome = Some(ProviderOutcome::Failed {
                        class: *class,
                        message: message.clone(),
                        partial_text: partial_text.clone(),
                        stamp: *stamp,
                        position,
                        reason: reason.clone(),
                    });
                }
            }
        }
        Ok(())
    }
}
