//! The engine: everything the controller worker decides, as one sans-IO
//! state machine (in the manner of quinn-proto's `Connection`).
//!
//! It composes the core's [`Controller`] (the command journal), the
//! [`Sessions`] layer (executions and startup attempts), the turn driver
//! for both kinds of turn, the provider request lifecycle, prompt
//! admission, Stop, the recovery card and its actions, and what a storage
//! fault means. Inputs arrive through `handle_*` methods, each with `now`;
//! what the shell must do comes out of [`Engine::poll_effect`] as an
//! [`Effect`]. The shell in `worker/controller` keeps only handles (ports,
//! transactions, abort controllers, timers) keyed by the identities the
//! effects carry, and feeds every result back as an input.
//!
//! Architecture Invariant: this crate depends on no browser crate, clock,
//! randomness or async runtime; the controller worker's shell imports it
//! and never the other way.
//!
//! Architecture Invariant: every wait is an engine timer ([`Effect::SetTimer`]
//! answered by [`Engine::handle_timer`]); the shell never polls.
//!
//! | module | what it holds |
//! |---|---|
//! | [`effect`] | the effects and the inputs' own types |
//! | `lead` | leading and following: recovery, persist results, storage faults, snapshots, the follower's fold |
//! | `runtimes` | runtime ports and what a runtime's end means |
//! | `lifecycle` | carrying out session effects: launches, rejoins, adoption, cleanup |
//! | `turn` | prompts, Stop, the turn driver and provider requests |
//! | `card` | the recovery card, its facts and its actions |
//! | `open` | which session a tab shows, new sessions, names, the list and its search |
//! | `room` | the limit on live runtimes: room for a start, by setting an idle session aside |
//! | `output` | reading a shown settled command's output back from the journal |
//! | `kept_output` | a command's kept output read back in ranges for the full-output view, or whole to download |
//! | `status` | the status line |

pub mod effect;
pub mod failure;
pub mod slots;

mod card;
mod delete;
mod kept_output;
mod lead;
mod lifecycle;
mod open;
mod output;
pub mod retry;
mod room;
mod runtimes;
pub mod salvage;
mod status;
mod turn;

#[cfg(test)]
mod tests;

use lifeline_core::flat::FlatMap;
use std::collections::VecDeque;

use lifeline_core::phrase::Phrase;
use lifeline_core::recovery::Facts;
use lifeline_core::restart::RestartTally;
use lifeline_core::session::{AttemptTimer, Sessions};
use lifeline_core::{
    ClientId, ClientRequest, Controller, Generation, IdMinter, Millis, ModelMessage, PortId,
    Projection, ProviderRequestId, Rejection, RequestId, RuntimeId, SessionId, StartCause,
    StartupAttemptId, TurnId,
};
use lifeline_protocol::{ControllerToPage, JournalStatus, Level, Role, StorageStatus};

pub use lead::Recovered;
pub use runtimes::Ended;
pub use slots::Slots;

pub use kept_output::HEAD_READ_EVENTS;
pub use output::MAX_READS;

pub use effect::{
    Effect, FactsObserved, FailedAt, KeptRead, ProviderFailure, ProviderReply, StoreFailure,
    TimerKey, WorkspaceObserved,
};

/// The engine is the core's only client; tabs see views, not client messages.
const SELF: ClientId = ClientId(1);
/// A snapshot is written after this many new journal positions.
pub const SNAPSHOT_EVERY: u64 = 2_000;
/// What a command may run for and print, for the agent's commands.
const COMMAND_WALL_TIME_MS: u64 = 30 * 60 * 1000;
const COMMAND_OUTPUT_BYTES: u64 = 64 << 20;
/// Rounds of one pump at most: every round either carries out an effect
/// or advances a machine, so a quiet engine stops long before.
const MAX_PUMP_ROUNDS: usize = 10_000;
/// How long an informational notice stays: it reports something that
/// happened, not a condition that lasts, so it must not pile up.
pub const NOTICE_TTL_MS: u64 = 8_000;
/// The most of a waiting prompt's text the composer's queue shows.
const WAITING_PREVIEW_CHARS: usize = 140;

/// Inputs that arrive before recovery finished; replayed in order after it.
enum Early {
    Message {
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        message: lifeline_core::RuntimeToController,
    },
    Ended {
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
        how: runtimes::Ended,
    },
    Exited {
        runtime: RuntimeId,
        generation: Generation,
        crashed: bool,
        detail: String,
    },
    TerminateFailed {
        runtime: RuntimeId,
        generation: Generation,
        detail: String,
    },
}

/// The port a runtime dialed in on last.
struct PortEntry {
    generation: Generation,
    port: PortId,
    /// Its life lock is watched (started once it attached).
    life_watched: bool,
}

/// A notice the page shows.
#[derive(Clone, Debug)]
struct Shown {
    key: String,
    level: Level,
    message: Phrase,
    /// The timer that ends an informational notice (`None` until the pump
    /// after it was posted sets one; never for a warning or an error).
    expiry: Option<u64>,
}

/// The controller worker's whole state of mind.
pub struct Engine {
    role: Role,
    journal: JournalStatus,
    storage: Option<StorageStatus>,
    /// Writing stopped (superseded, version change, gone): the reason, said
    /// to every prompt from now on.
    stopped: Option<Phrase>,
    /// The start cause, kept for leading again after a repair.
    cause: Option<StartCause>,
    core: Option<Controller>,
    /// A follower's (or a read-only leader's) fold of the journal.
    fold: Option<Projection>,
    session: Option<SessionId>,
    /// Sessions in the order this tab showed them, the latest last: the
    /// idle one shown least recently gives up its runtime first.
    shown: Vec<SessionId>,
    /// The session the page asked for before the journal was read.
    preferred: Option<SessionId>,
    /// The session list may have changed since the page was told it.
    list_dirty: bool,
    sessions: Option<Sessions>,
    minter: IdMinter,
    next_request: u64,
    last_port: u64,
    next_timer: u64,
    ports: Slots<RuntimeId, PortEntry>,
    early: Vec<Early>,
    /// Attempt timers by key; controller timers are keyed by their own id.
    attempt_timers: Slots<u64, (StartupAttemptId, AttemptTimer)>,
    /// Prompt texts until their turn is recorded (queued, or waiting for a
    /// start).
    prompts: FlatMap<TurnId, String>,
    /// Turns the card started (Continue from history), not typed by anyone.
    continuations: Slots<TurnId, ()>,
    /// Prompts that arrived before the session layer was up.
    early_prompts: Vec<(TurnId, String)>,
    launching: Option<lifecycle::Launching>,
    /// A launch being checked against its workspace before it starts.
    preparing: Slots<StartupAttemptId, lifecycle::Launch>,
    /// The lost launch an attempt waits for before launching anew.
    adopting: Option<lifecycle::PendingLaunch>,
    /// The rejoin an attempt waits for.
    rejoining: Option<(StartupAttemptId, RuntimeId, Generation)>,
    /// The executions this engine holds, one per running session: the
    /// open one and those working in the background (at most
    /// `MAX_RUNNING_SESSIONS`).
    active: Slots<SessionId, lifecycle::Active>,
    /// Session records whose durability an attempt waits for.
    awaiting_record: FlatMap<RequestId, StartupAttemptId>,
    /// Runtimes an attempt stops; their exit settles its cleanup.
    stopping: FlatMap<RuntimeId, StartupAttemptId>,
    /// The provider request each session owns: recorded (or being
    /// recorded) and possibly streaming.
    live: Slots<SessionId, turn::Live>,
    /// What a recorded provider request sends once it is durable.
    conversations: FlatMap<ProviderRequestId, Vec<ModelMessage>>,
    /// Requests whose end the engine recorded itself (a timeout): the
    /// outcome each aborted fetch reports later is not news.
    ended_early: Vec<ProviderRequestId>,
    facts: Facts,
    /// Workspace-only access is open.
    inspecting: bool,
    /// The projection changed in a way the card may show.
    card_dirty: bool,
    card_inputs: Option<card::CardInputs>,
    /// After a controller restart: the commands that were running, until
    /// the page is told which of them continued.
    restart: Option<RestartTally>,
    /// A quota notice is on the page and must be cleared when writes succeed.
    quota_noticed: bool,
    /// Why the last write failed, while none has succeeded since: what a
    /// message refused for a degraded journal is told.
    persist_fault: Option<lifeline_core::phrase::JournalFault>,
    /// Every notice the page shows now, one per key (a newer one replaces
    /// it): a change of language words them anew, and an informational
    /// one ends at its timer.
    notices: Vec<Shown>,
    last_snapshot: u64,
    snapshotting: bool,
    /// Deleted sessions whose workspace removal was already tried again.
    cleanup_retried: Vec<SessionId>,
    pumping: bool,
    /// Settled commands' output being read from the journal for the view.
    reads: output::Reads,
    effects: VecDeque<Effect>,
}

impl Engine {
    /// A controller worker's engine before it knows its role's journal.
    /// `entropy` seeds the identities it mints (fresh random bytes in the
    /// browser, a seed in the simulation).
    pub fn new(role: Role, entropy: &[u8]) -> Engine {
        Engine {
            role,
            journal: JournalStatus::Opening,
            storage: None,
            stopped: None,
            cause: None,
            core: None,
            fold: None,
            session: None,
            shown: Vec::new(),
            preferred: None,
            list_dirty: true,
            sessions: None,
            minter: IdMinter::new(entropy, 0xe9_91e),
            next_request: 0,
            last_port: 0,
            next_timer: 0,
            ports: Slots::new(),
            early: Vec::new(),
            attempt_timers: Slots::new(),
            prompts: FlatMap::new(),
            continuations: Default::default(),
            early_prompts: Vec::new(),
            launching: None,
            preparing: Slots::new(),
            adopting: None,
            rejoining: None,
            active: Slots::new(),
            awaiting_record: FlatMap::new(),
            stopping: FlatMap::new(),
            live: Slots::new(),
            conversations: FlatMap::new(),
            ended_early: Vec::new(),
            facts: Facts::default(),
            inspecting: false,
            card_dirty: true,
            card_inputs: None,
            restart: None,
            quota_noticed: false,
            persist_fault: None,
            notices: Vec::new(),
            last_snapshot: 0,
            snapshotting: false,
            cleanup_retried: Vec::new(),
            pumping: false,
            reads: output::Reads::default(),
            effects: VecDeque::new(),
        }
    }

    /// The next thing the shell must do.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }

    pub fn role(&self) -> Role {
        self.role
    }

    /// The session this tab shows.
    pub fn session(&self) -> Option<SessionId> {
        self.session
    }

    /// The durable projection this tab shows (the leader's confirmed state,
    /// or a follower's fold).
    pub fn projection(&self) -> Option<&Projection> {
        match (&self.core, &self.fold) {
            (Some(core), _) => Some(core.projection()),
            (None, fold) => fold.as_ref(),
        }
    }

    /// The leader's controller, for the simulation's oracle and the export.
    pub fn controller(&self) -> Option<&Controller> {
        self.core.as_ref()
    }

    pub fn sessions(&self) -> Option<&Sessions> {
        self.sessions.as_ref()
    }

    /// Writing stopped for good in this worker, and why.
    pub fn stopped(&self) -> Option<&Phrase> {
        self.stopped.as_ref()
    }

    /// Prompts held until their turn is recorded.
    pub fn held_prompts(&self) -> impl Iterator<Item = TurnId> + '_ {
        self.prompts
            .keys()
            .copied()
            .chain(self.early_prompts.iter().map(|(t, _)| *t))
    }

    /// When the live provider request is sent again, while it waits to be.
    pub fn retry_wait(&self) -> Option<Millis> {
        match self.live.get(&self.session?)?.wait {
            turn::Wait::Retry { at, .. } => Some(at),
            _ => None,
        }
    }

    /// The open session's provider request in flight, if any.
    pub fn live_request(&self) -> Option<ProviderRequestId> {
        self.live.get(&self.session?).map(|l| l.request)
    }

    /// Every session's provider request in flight.
    pub fn live_requests(&self) -> impl Iterator<Item = ProviderRequestId> + '_ {
        self.live.iter().map(|(_, l)| l.request)
    }

    // ----- helpers every module uses ----------------------------------------

    fn post(&mut self, message: ControllerToPage) {
        let view = match &message {
            ControllerToPage::View { reset, deltas } => {
                self.reads.posted(*reset, deltas);
                true
            }
            _ => false,
        };
        self.effects.push_back(Effect::Page(message));
        if view {
            self.start_reads();
        }
    }

    fn notice(&mut self, key: &str, level: Level, message: Phrase) {
        // A newer notice under the key replaces the old one and its expiry.
        self.notices.retain(|n| n.key != key);
        self.notices.push(Shown {
            key: key.into(),
            level,
            message: message.clone(),
            expiry: None,
        });
        self.post(ControllerToPage::Notice {
            key: key.into(),
            level,
            message: Some(message),
        });
    }

    fn clear_notice(&mut self, key: &str) {
        self.notices.retain(|n| n.key != key);
        self.post(ControllerToPage::Notice {
            key: key.into(),
            level: Level::Info,
            message: None,
        });
    }

    fn request_id(&mut self) -> RequestId {
        self.next_request += 1;
        RequestId(self.next_request)
    }

    /// A fresh identity of any kind, from this engine's minter.
    fn mint<T>(
        &mut self,
        make: fn(u128) -> Result<T, lifeline_core::IdError>,
        now: Millis,
    ) -> Option<T> {
        make(self.minter.mint_raw(now)).ok()
    }

    /// Hands a request, under a fresh request id, to the core; `None`
    /// while there is no core (before recovery, or after writing stopped).
    fn submit(
        &mut self,
        make: impl FnOnce(RequestId) -> ClientRequest,
        now: Millis,
    ) -> Option<(RequestId, Result<(), Rejection>)> {
        let request = self.request_id();
        let message = make(request);
        self.submit_made(request, message, now)
    }

    /// The one non-generic body behind every request (the worker's wasm
    /// has a size budget; each caller's closure stays a few instructions).
    fn submit_made(
        &mut self,
        request: RequestId,
        message: ClientRequest,
        now: Millis,
    ) -> Option<(RequestId, Result<(), Rejection>)> {
        let core = self.core.as_mut()?;
        Some((request, core.handle_client(SELF, message, now)))
    }

    /// Hands a request to the core; a refusal is reported and left alone.
    fn ask(&mut self, make: impl FnOnce(RequestId) -> ClientRequest, now: Millis) -> bool {
        let result = self.submit(make, now);
        self.answered(result)
    }

    /// True if the core took the request; reports a refusal.
    fn answered(&mut self, result: Option<(RequestId, Result<(), Rejection>)>) -> bool {
        match result {
            Some((_, Ok(()))) => true,
            Some((_, Err(rejection))) => {
                self.rejected(&rejection);
                false
            }
            None => false,
        }
    }

    fn rejected(&mut self, rejection: &Rejection) {
        let level = match rejection {
            Rejection::Busy => Level::Info,
            _ => Level::Warning,
        };
        self.notice("request", level, Phrase::rejected(rejection));
    }

    fn set_timer(&mut self, key: TimerKey, at: Millis) {
        self.effects.push_back(Effect::SetTimer { key, at });
    }

    /// A timer the engine asked for fired.
    pub fn handle_timer(&mut self, key: TimerKey, now: Millis) {
        match key {
            TimerKey::Controller(timer) => {
                if let Some(core) = self.core.as_mut() {
                    core.handle_timer(timer, now);
                }
            }
            TimerKey::Provider(session) => self.provider_timer(session, now),
            TimerKey::Cleanup(session) => self.retry_cleanup(session),
            TimerKey::Notice(n) => {
                let key = self.notices.iter().find(|s| s.expiry == Some(n));
                if let Some(key) = key.map(|s| s.key.clone()) {
                    self.clear_notice(&key);
                }
            }
            TimerKey::Attempt(n) => {
                if let Some((attempt, timer)) = self.attempt_timers.remove(&n) {
                    if let Some(s) = self.sessions.as_mut() {
                        s.handle_timer(attempt, timer, now);
                    }
                }
            }
        }
        self.pump(now);
    }

    /// Carries out effects until the core, the sessions and the turn driver
    /// are quiet, then republishes what the page shows.
    fn pump(&mut self, now: Millis) {
        // An input handled inside a round (a refusal answered at once)
        // leaves its work to the round that is already running.
        if std::mem::replace(&mut self.pumping, true) {
            return;
        }
        for _ in 0..MAX_PUMP_ROUNDS {
            if let Some(effect) = self.core.as_mut().and_then(|c| c.poll_effect()) {
                self.controller_effect(effect, now);
                continue;
            }
            if let Some(effect) = self.sessions.as_mut().and_then(|s| s.poll_effect()) {
                self.session_effect(effect, now);
                continue;
            }
            if !(self.check_ready(now)
                || self.check_rejoin(now)
                || self.check_adoption(now)
                || self.check_active_runtime(now)
                || self.drive_turn(now))
            {
                // Quiet: what this input recorded goes out as one batch.
                if self.core.as_mut().is_some_and(|c| c.cut_batch()) {
                    continue;
                }
                break;
            }
        }
        self.pumping = false;
        self.expire_notices(now);
        self.publish_status();
        self.publish_sessions();
        self.publish_card();
        self.report_restart();
    }

    /// Sets the expiry of the informational notices posted since the last
    /// pump. The shell calls it after every input too: an input answered
    /// with a notice alone (a refusal) does not pump.
    pub fn expire_notices(&mut self, now: Millis) {
        for i in 0..self.notices.len() {
            let shown = &self.notices[i];
            if shown.level == Level::Info && shown.expiry.is_none() {
                self.next_timer += 1;
                self.notices[i].expiry = Some(self.next_timer);
                self.set_timer(TimerKey::Notice(self.next_timer), now.plus(NOTICE_TTL_MS));
            }
        }
    }

    /// The prompts waiting in `queue`'s order, each with the start of its
    /// text, for the composer.
    fn waiting(&self, queue: &[TurnId]) -> Vec<lifeline_protocol::Waiting> {
        queue
            .iter()
            .map(|turn| {
                let text = self.prompts.get(turn).map_or("", String::as_str);
                let end = text
                    .char_indices()
                    .nth(WAITING_PREVIEW_CHARS)
                    .map_or(text.len(), |(i, _)| i);
                lifeline_protocol::Waiting {
                    turn: *turn,
                    text: text[..end].to_owned(),
                }
            })
            .collect()
    }

    /// Tells the page what a restart did to the commands that were running,
    /// once every one of them has either continued or not.
    fn report_restart(&mut self) {
        let summary = match (self.restart.as_ref(), self.core.as_ref()) {
            (Some(tally), Some(core)) => tally.settle(core.projection(), |r| core.is_attached(r)),
            _ => return,
        };
        if let Some(s) = summary {
            self.restart = None;
            self.post(ControllerToPage::Restarted {
                running: s.running,
                continued: s.continued,
            });
        }
    }
}
