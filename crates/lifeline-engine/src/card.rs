//! The recovery card: the facts it needs (observed by the shell without
//! reviving anything), when it is rebuilt, and its actions.
//!
//! Architecture Invariant: an action runs only if the card offers it now;
//! any other answers with the card's own reason, so the card never offers
//! what would be refused and the page never decides what is possible.

use lifeline_core::phrase::Phrase;
use lifeline_core::recovery::{self, Action, Card, Facts};
use lifeline_core::session::{Environment, SessionState, Sessions, Trace};
use lifeline_core::session_record::Purpose;
use lifeline_core::view::session_deltas;
use lifeline_core::{
    agent, ClientRequest, CommandId, IdempotencyKey, JournalEntry, Millis, Outcome, ProfileId,
    SessionId, TurnId, WorkspaceId,
};
use lifeline_protocol::{ControllerToPage, Level, Role, WorkspaceListing};

use crate::{Effect, Engine, FactsObserved};

/// Everything the card is built from except the projection.
#[derive(PartialEq)]
pub(crate) struct CardInputs {
    session: SessionId,
    /// This tab leads (a follower's card offers no action).
    leading: bool,
    trace: Option<Trace>,
    facts: Facts,
    inspecting: bool,
    evicted: usize,
}

/// The profile whose keys the session's next start needs.
fn profile_of(sessions: &Sessions, session: SessionId) -> Option<ProfileId> {
    sessions
        .binding(session)
        .and_then(|b| b.profile.as_ref().map(|p| p.id))
        .or_else(|| sessions.selected_profile(session))
}

impl Engine {
    /// Asks the shell to look at the workspace folder and the keys again
    /// (never decrypting one); the card is republished with the answer.
    pub(crate) fn refresh_facts(&mut self) {
        let Some(session) = self.session else {
            return;
        };
        let (workspace, profile, environment) = match (&self.core, &self.fold) {
            (Some(core), _) => {
                let sessions = self.sessions.as_ref();
                (
                    core.projection()
                        .sessions
                        .get(&session)
                        .map(|s| s.workspace),
                    sessions.and_then(|s| profile_of(s, session)),
                    sessions.and_then(|s| s.environment(session).cloned()),
                )
            }
            (None, Some(p)) => {
                let sessions = recovery::follower_sessions(p, session);
                (
                    p.sessions.get(&session).map(|s| s.workspace),
                    profile_of(&sessions, session),
                    sessions.environment(session).cloned(),
                )
            }
            (None, None) => return,
        };
        self.effects.push_back(Effect::ObserveFacts {
            session,
            workspace,
            environment,
            profile,
        });
    }

    /// What the shell observed for `session`'s card.
    pub fn handle_facts(&mut self, session: SessionId, observed: FactsObserved) {
        if self.session != Some(session) {
            return;
        }
        self.facts.workspace_exists = observed.workspace_exists;
        self.facts.workspace_files = observed.workspace_files;
        self.facts.folder_access = observed.folder_access;
        self.facts.credentials = observed.credentials;
        self.publish_card();
    }

    /// Sends the card when it changed. It is rebuilt only when one of its
    /// inputs moved: those outside the projection are compared directly,
    /// the projection through `card_dirty` (set by records that can change
    /// the card) and the count of evicted commands (the one way output
    /// reaches the card). Rebuilding it after every output batch slowed a
    /// command's output noticeably.
    ///
    /// A follower builds the same card from its own fold of the journal,
    /// with every action unavailable; once promoted it builds the leader's.
    pub(crate) fn publish_card(&mut self) {
        let Some(session) = self.session else {
            return;
        };
        let facts = self.facts_now(session);
        let (projection, trace, leading) = match (&self.core, &self.fold) {
            (Some(core), _) => {
                let trace = self.sessions.as_ref().and_then(|s| s.trace(session));
                // Durable evidence first: a failure is shown once its record
                // is in the journal (a card built before would not find it,
                // and say "Something stopped this session"). The card stays
                // as it was for that batch, unless writes keep failing:
                // then it says what it can without the record.
                if let Some(SessionState::Failed(f)) = trace.as_ref().map(|t| &t.state) {
                    if core.degraded().is_none()
                        && recovery::failure_recorded(core.pending_projection(), session, f.stamp)
                        && !recovery::failure_recorded(core.projection(), session, f.stamp)
                    {
                        self.card_dirty = true;
                        return;
                    }
                }
                (core.projection(), trace, true)
            }
            // A follower's trace, runtime and live request come from its
            // projection alone, which `card_dirty` already covers.
            (None, Some(p)) if self.stopped.is_none() || self.role == Role::Follower => {
                (p, None, false)
            }
            _ => return,
        };
        let inputs = CardInputs {
            session,
            leading,
            evicted: recovery::evicted_commands(projection, session),
            trace,
            facts,
            inspecting: self.inspecting,
        };
        if !self.card_dirty && self.card_inputs.as_ref() == Some(&inputs) {
            return;
        }
        let card = if leading {
            recovery::card(
                projection,
                session,
                inputs.trace.as_ref(),
                &inputs.facts,
                inputs.inspecting,
            )
        } else {
            recovery::follower_card(projection, session, &inputs.facts)
        };
        self.card_dirty = false;
        self.card_inputs = Some(inputs);
        // The shell drops a card identical to the last one it sent.
        self.post(ControllerToPage::Recovery {
            card: card.map(Box::new),
        });
    }

    /// A confirmed batch: the card is rebuilt at the next publish if any of
    /// its records can change it.
    pub(crate) fn card_records(&mut self, entries: &[JournalEntry]) {
        if entries.iter().any(|e| recovery::affects_card(&e.record)) {
            self.card_dirty = true;
        }
        if entries.iter().any(|e| crate::open::affects_list(&e.record)) {
            self.list_dirty = true;
        }
    }

    /// What the card states about `session` now. The card, the check of
    /// its actions and Continue from history's summary all read these, so
    /// none of them says otherwise than the others (a summary once said
    /// "Attachments: lost" under a card that said they survived).
    fn facts_now(&self, session: SessionId) -> Facts {
        let mut facts = self.facts.clone();
        // This engine's tab is the one the card is shown in.
        facts.attached = true;
        facts.storage = self
            .storage
            .as_ref()
            .map(|s| (s.persisted, s.usage, s.quota));
        if let Some(core) = &self.core {
            facts.runtime_attached = self.sessions.as_ref().is_some_and(|s| {
                s.trace(session).and_then(|t| t.token).is_some()
                    && s.binding(session)
                        .is_some_and(|b| core.is_attached(b.runtime))
            });
            facts.owned_requests = self
                .live
                .get(&session)
                .map(|l| l.request)
                .into_iter()
                .collect();
            // A reply or failure handed to the journal is no longer live,
            // and not lost: it is durable once its batch is confirmed. Only
            // a turn not durably ended can hold one (one lookup per turn
            // here, at every publish; a session may hold two open turns, so
            // the scan does not stop at the first ended one).
            let (durable, pending) = (core.projection(), core.pending_projection());
            if let Some(s) = pending.sessions.get(&session) {
                let recording = s
                    .turns
                    .iter()
                    .filter(|t| durable.turns.get(t).is_none_or(|v| v.end.is_none()))
                    .filter_map(|t| pending.turns.get(t))
                    .flat_map(|t| t.requests.iter())
                    .filter(|r| {
                        pending
                            .provider_requests
                            .get(r)
                            .is_some_and(|v| v.outcome.is_some())
                            && durable
                                .provider_requests
                                .get(r)
                                .is_some_and(|v| v.outcome.is_none())
                    });
                facts.owned_requests.extend(recording);
            }
        }
        facts.no_room_to_start = !self.has_room(Some(session), None);
        facts.no_room_for_another = !self.has_room(None, Some(session));
        facts
    }

    /// The card as the leader would offer it now.
    pub fn card(&self) -> Option<Card> {
        let (core, session) = (self.core.as_ref()?, self.session?);
        let trace = self.sessions.as_ref().and_then(|s| s.trace(session));
        recovery::card(
            core.projection(),
            session,
            trace.as_ref(),
            &self.facts_now(session),
            self.inspecting,
        )
    }

    /// One of the card's actions. Only actions the card offers now run; any
    /// other answers with the card's own reason.
    pub fn handle_recover(&mut self, action: Action, now: Millis) {
        if self.role == Role::Follower {
            return self.notice("recovery", Level::Info, recovery::FOLLOWING);
        }
        let Some(session) = self.session else {
            return;
        };
        match self.card() {
            Some(card) => {
                let reason = card
                    .actions
                    .iter()
                    .find(|a| a.action == action)
                    .and_then(|a| a.unavailable.clone());
                if let Some(reason) = reason {
                    return self.notice(
                        "recovery",
                        Level::Warning,
                        Phrase::ActionNotPossible {
                            action,
                            reason: Box::new(reason),
                        },
                    );
                }
            }
            None if action != Action::InspectWorkspace => {
                return self.notice("recovery", Level::Info, Phrase::NothingToRecover)
            }
            None => {}
        }
        match action {
            Action::Resume => return self.handle_resume(now),
            Action::ContinueFromHistory => self.continue_from_history(session, now),
            Action::StartFresh => self.start_fresh_in(session, None, now),
            Action::InspectWorkspace => return self.inspect_workspace(session, None),
            Action::Archive | Action::Unarchive => {
                if action == Action::Archive {
                    // Archived sessions cannot be inspected (004 005).
                    self.close_workspace_view();
                }
                let result = self.with_sessions(|s| {
                    if action == Action::Archive {
                        s.archive(session)
                    } else {
                        s.unarchive(session)
                    }
                });
                match result {
                    Some(Err(r)) => {
                        self.notice("recovery", Level::Warning, Phrase::Refused { refusal: r })
                    }
                    _ if action == Action::Archive => self.abort_left_request(session, now),
                    _ => {}
                }
            }
        }
        self.pump(now);
    }

    /// A session left for another, or archived, asks nothing more of a
    /// model: its request ends as Stop ends it (a reply in flight is
    /// aborted, kept as far as it came and recorded as stopped; a retry
    /// wait or a local model's load ends at once), so its turn can end.
    /// Found by the engine simulation: a stalled reply held a left session's
    /// turn open forever, and a left request in a retry wait was sent again.
    pub(crate) fn abort_left_request(&mut self, left: SessionId, now: Millis) {
        if self.core.is_none() {
            return;
        }
        let Some(request) = self.live.get(&left).map(|l| l.request) else {
            return;
        };
        self.stop_live(request, now);
    }

    /// A new execution on the retained workspace whose first message is
    /// the recorded history with provenance and the uncertain actions.
    fn continue_from_history(&mut self, session: SessionId, now: Millis) {
        if !self.make_room(Some(session), None) {
            return;
        }
        let Some(core) = self.core.as_ref() else {
            return;
        };
        let trace = self.sessions.as_ref().and_then(|s| s.trace(session));
        let facts = self.facts_now(session);
        let report = recovery::inspect(core.projection(), session, trace.as_ref(), &facts);
        let prompt = recovery::continuation_prompt(core.projection(), session, &report);
        let Some(turn) = self.mint(TurnId::from_u128, now) else {
            return;
        };
        self.prompts.insert(turn, prompt);
        self.continuations.insert(turn, ());
        let result =
            self.with_sessions(|s| s.begin(session, Purpose::Launch, None, Some(turn), now));
        if let Some(Err(r)) = result {
            self.prompts.remove(&turn);
            self.continuations.remove(&turn);
            self.notice("recovery", Level::Warning, Phrase::Refused { refusal: r });
        }
    }

    /// The user chose another environment under Environment (the page
    /// confirmed it, and stored a folder's handle before sending).
    pub fn handle_choose_environment(&mut self, environment: Environment, now: Millis) {
        let Some(session) = self.session else {
            return;
        };
        let current = self
            .sessions
            .as_ref()
            .and_then(|s| s.environment(session).cloned());
        if current.as_ref() == Some(&environment) {
            return;
        }
        let working = self
            .core
            .as_ref()
            .is_some_and(|c| agent::open_turn(c.pending_projection(), session).is_some());
        if working {
            return self.notice(
                "environment",
                Level::Warning,
                Phrase::EnvironmentWhileWorking,
            );
        }
        self.start_fresh_in(session, Some(environment), now);
        self.pump(now);
    }

    /// A new session on a new workspace, linked from `old`; `old`'s
    /// evidence and workspace stay as they are.
    fn start_fresh_in(&mut self, old: SessionId, environment: Option<Environment>, now: Millis) {
        let session = self.mint(SessionId::from_u128, now);
        let workspace = self.mint(WorkspaceId::from_u128, now);
        let (Some(session), Some(workspace)) = (session, workspace) else {
            return;
        };
        // The successor needs a runtime while the old session may still
        // finish its turn on its own.
        if !self.make_room(None, Some(old)) {
            return;
        }
        // The session layer decides first, so a refused start opens no
        // session in the journal (found by the engine simulation: an
        // orphan session was opened when the layer was not up yet).
        let result = self.with_sessions(|s| match environment {
            // Another environment: the old runtime stops, by identity.
            Some(environment) => s.choose_environment(old, session, workspace, environment, now),
            None => s.start_fresh(old, session, workspace, None, now),
        });
        match result {
            // The journal opens the successor before its lifecycle's
            // records, which the pump carries out next; both go in one batch.
            Some(Ok(_)) if self.open_session_as(session, workspace, now) => {
                // The session left stops its idle runtime (a running one
                // is ended as a left turn): its successor replaces it.
                self.with_sessions(|s| s.set_aside(old));
                self.session = Some(session);
                self.active.remove(&old);
                self.inspecting = false;
                self.post(ControllerToPage::Workspace { listing: None });
                self.show_session(session);
                // Last: ending its request may pump, which then sees the
                // successor open.
                self.abort_left_request(old, now);
            }
            Some(Ok(_)) | None => {}
            Some(Err(r)) => self.notice("recovery", Level::Warning, Phrase::Refused { refusal: r }),
        }
    }

    /// Shows `session`'s transcript from scratch.
    fn show_session(&mut self, session: SessionId) {
        if let Some(core) = self.core.as_ref() {
            let deltas = session_deltas(core.projection(), session);
            self.post(ControllerToPage::View {
                reset: true,
                deltas,
            });
        }
    }

    /// Workspace-only access (004 requirement 005): checked at both
    /// boundaries — the session exists, is not archived, and its workspace
    /// is one Lifeline owns or one the user opened — and a failed check
    /// rolls back only this registration. Nothing starts: no runtime, no
    /// credential, no agent step.
    fn inspect_workspace(&mut self, session: SessionId, file: Option<String>) {
        let Some((workspace, environment)) = self.workspace_access(session) else {
            self.inspecting = false;
            self.post(ControllerToPage::Workspace { listing: None });
            return self.notice("workspace", Level::Warning, Phrase::WorkspaceCannotOpen);
        };
        self.inspecting = true;
        self.effects.push_back(Effect::ListWorkspace {
            session,
            workspace,
            environment,
            file,
        });
        self.publish_card();
    }

    /// The listing the shell read for `session`'s workspace at
    /// (`workspace`, `environment`).
    pub fn handle_workspace_listing(
        &mut self,
        session: SessionId,
        workspace: WorkspaceId,
        environment: &Environment,
        listing: Result<WorkspaceListing, Phrase>,
    ) {
        // The second boundary: the session may have changed meanwhile.
        let same = self
            .workspace_access(session)
            .is_some_and(|(w, e)| w == workspace && &e == environment);
        if !same || !self.inspecting || self.session != Some(session) {
            self.inspecting = false;
            self.post(ControllerToPage::Workspace { listing: None });
            return self.publish_card();
        }
        match listing {
            Ok(listing) => self.post(ControllerToPage::Workspace {
                listing: Some(listing),
            }),
            Err(e) => {
                self.inspecting = false;
                self.post(ControllerToPage::Workspace { listing: None });
                self.notice("workspace", Level::Warning, e);
            }
        }
        self.publish_card();
    }

    fn workspace_access(&self, session: SessionId) -> Option<(WorkspaceId, Environment)> {
        let s = self.sessions.as_ref()?;
        if matches!(s.state(session), None | Some(SessionState::Archived)) {
            return None;
        }
        let environment = s.environment(session)?.clone();
        self.core
            .as_ref()?
            .projection()
            .sessions
            .get(&session)
            .map(|v| (v.workspace, environment))
    }

    pub fn handle_read_workspace_file(&mut self, path: String) {
        if !self.inspecting {
            return;
        }
        if let Some(session) = self.session {
            self.inspect_workspace(session, Some(path));
        }
    }

    pub fn handle_close_workspace(&mut self) {
        self.close_workspace_view();
        self.publish_card();
    }

    pub(crate) fn close_workspace_view(&mut self) {
        self.inspecting = false;
        self.post(ControllerToPage::Workspace { listing: None });
    }

    /// Mark done / Mark not done on an uncertain command.
    pub fn handle_verdict(&mut self, command: CommandId, done: bool, now: Millis) {
        let Some(session) = self.uncertain_in_session(command) else {
            return;
        };
        let result = self.with_sessions(|s| s.record_verdict(session, command, done));
        if let Some(Err(r)) = result {
            self.notice("recovery", Level::Warning, Phrase::Refused { refusal: r });
        }
        self.pump(now);
    }

    /// The session whose uncertain `command` a verdict or re-issue may act
    /// on: only the leader acts, and only on a command of its session that
    /// is uncertain. Says why not otherwise.
    fn uncertain_in_session(&mut self, command: CommandId) -> Option<SessionId> {
        if self.role == Role::Follower {
            self.notice("recovery", Level::Info, recovery::FOLLOWING);
            return None;
        }
        let session = self.session?;
        let uncertain = self.core.as_ref().is_some_and(|c| {
            c.projection().command(command).is_some_and(|v| {
                v.binding.session == session
                    && matches!(v.outcome, Outcome::MayHaveStarted | Outcome::Lost)
            })
        });
        if !uncertain {
            self.notice("recovery", Level::Warning, Phrase::NotUncertain);
            return None;
        }
        Some(session)
    }

    /// Runs an uncertain command again, deliberately, under a new key in
    /// the running execution; the original keeps its evidence. The link
    /// travels in the admission record itself: one write.
    pub fn handle_reissue(&mut self, command: CommandId, now: Millis) {
        let Some(session) = self.uncertain_in_session(command) else {
            return;
        };
        let key = self.mint(IdempotencyKey::from_u128, now);
        let (Some(key), true) = (key, self.active.contains(&session)) else {
            return self.notice("recovery", Level::Warning, Phrase::ReissueNeedsRunning);
        };
        let Some(core) = self.core.as_ref() else {
            return;
        };
        let p = core.pending_projection();
        if agent::open_turn(p, session).is_some() {
            return self.notice("recovery", Level::Warning, Phrase::ReissueAgentWorking);
        }
        let Some(original) = p.command(command).map(|c| c.binding.clone()) else {
            return;
        };
        let Some(mut binding) = self.command_binding(
            session,
            original.working_directory.clone(),
            original.command_line.clone(),
            now,
        ) else {
            return;
        };
        binding.workspace = original.workspace;
        binding.session = session;
        self.ask(
            |request| ClientRequest::Reissue {
                request,
                key,
                original: command,
                binding,
            },
            now,
        );
        self.pump(now);
    }
}
