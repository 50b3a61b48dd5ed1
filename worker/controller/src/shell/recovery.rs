//! The leader's side of recovery: observes the facts the inspector needs
//! without reviving anything (the workspace folder, the presence of keys,
//! storage), publishes the core's recovery card, and carries out the card's
//! actions. Workspace-only access reads the stopped session's OPFS folder
//! from here — no runtime start, no credential lease, no agent step.

use std::rc::Rc;

use lifeline_core::environment::FolderAccess;
use lifeline_core::recovery::{self, Action};
use lifeline_core::session::{Environment, Purpose, SessionState, Sessions};
use lifeline_core::{
    agent, Binding, Budget, ClientRequest, CommandId, IdempotencyKey, SessionId, TurnId,
    WorkspaceId,
};
use lifeline_opfs::{folders, OpfsWorkspace};
use lifeline_protocol::{ControllerToPage, Level, Role, WorkspaceListing};
use lifeline_shell::{EntryKind, FsError, Host, WorkspacePath};
use wasm_bindgen_futures::spawn_local;

use super::lifecycle::mint;
use super::{notice, post, Shell, COMMAND_OUTPUT_BYTES, COMMAND_WALL_TIME_MS};
use crate::web::{now, random_u128};
use lifeline_core::phrase::Phrase;

/// Entries listed at most, and bytes of one file shown.
const MAX_ENTRIES: usize = 2_000;
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Everything the card is built from except the projection.
#[derive(PartialEq)]
pub(super) struct CardInputs {
    session: SessionId,
    /// This tab leads (a follower's card offers no action).
    leading: bool,
    trace: Option<lifeline_core::session::Trace>,
    facts: recovery::Facts,
    inspecting: bool,
    evicted: usize,
}

/// The profile whose keys the session's next start needs.
fn profile_of(sessions: &Sessions, session: SessionId) -> Option<lifeline_core::ProfileId> {
    sessions
        .binding(session)
        .and_then(|b| b.profile.as_ref().map(|p| p.id))
        .or_else(|| sessions.selected_profile(session))
}

impl Shell {
    /// Looks at the workspace folder and the keys again (never decrypting
    /// one), then republishes the card.
    pub(super) fn refresh_facts(self: &Rc<Self>) {
        let Some(session) = self.session.get() else {
            return;
        };
        let (workspace, profile, environment) = {
            let core = self.core.borrow();
            let follower = self.follower.borrow();
            match (core.as_ref(), follower.as_ref()) {
                (Some(core), _) => {
                    let sessions = self.sessions.borrow();
                    (
                        core.projection()
                            .sessions
                            .get(&session)
                            .map(|s| s.workspace),
                        sessions.as_ref().and_then(|s| profile_of(s, session)),
                        sessions
                            .as_ref()
                            .and_then(|s| s.environment(session).cloned()),
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
            }
        };
        let config = self.config.borrow().clone();
        let shell = self.clone();
        spawn_local(async move {
            let (opened, folder_access) = match workspace {
                Some(w) => {
                    let (opened, access) = open_files(environment.as_ref(), w).await;
                    (Some(opened), access)
                }
                None => (None, None),
            };
            let (exists, files) = match opened {
                Some(opened) => match opened {
                    Ok(ws) => {
                        let n = ws
                            .list(&WorkspacePath::root())
                            .await
                            .map(|l| l.len() as u32)
                            .ok();
                        (Some(true), n)
                    }
                    Err(lifeline_shell::FsError::NotFound) => (Some(false), None),
                    Err(_) => (None, None),
                },
                None => (None, None),
            };
            let credentials = match (config, profile) {
                (Some(config), Some(profile)) => match config.lookup_profile(profile).await {
                    lifeline_core::profile::ProfileLookup::Found(p) => {
                        let refs = p.credential_refs();
                        let mut present = 0;
                        for r in &refs {
                            if matches!(config.credential_label(*r).await, Ok(Some(_))) {
                                present += 1;
                            }
                        }
                        Some((present, refs.len() as u32))
                    }
                    _ => None,
                },
                _ => None,
            };
            {
                let mut f = shell.facts.borrow_mut();
                f.workspace_exists = exists;
                f.workspace_files = files;
                f.folder_access = folder_access;
                f.credentials = credentials;
            }
            shell.publish_recovery();
        });
    }

    /// Sends the card when it changed. The card is rebuilt only when one of
    /// its inputs moved: the inputs outside the projection are compared
    /// directly, the projection through `card_dirty` (set by records that can
    /// change the card) and the count of evicted commands (the one way output
    /// reaches the card). Rebuilding and encoding it after every output batch
    /// slowed a command's output noticeably.
    ///
    /// A follower builds the same card from its own fold of the journal,
    /// with every action unavailable; once promoted it builds the leader's.
    pub(super) fn publish_recovery(&self) {
        let card = {
            let core = self.core.borrow();
            let follower = self.follower.borrow();
            let sessions = self.sessions.borrow();
            let Some(session) = self.session.get() else {
                return;
            };
            let mut facts = self.facts.borrow().clone();
            facts.attached = true;
            facts.storage = self
                .storage
                .borrow()
                .as_ref()
                .map(|s| (s.persisted, s.usage, s.quota));
            let (projection, trace, leading) = match (core.as_ref(), follower.as_ref()) {
                (Some(core), _) => {
                    let trace = sessions.as_ref().and_then(|s| s.trace(session));
                    facts.runtime_attached = trace
                        .as_ref()
                        .and_then(|t| t.token)
                        .zip(sessions.as_ref().and_then(|s| s.binding(session)))
                        .is_some_and(|(_, b)| core.is_attached(b.runtime));
                    facts.live_request = self.live.borrow().as_ref().map(|l| l.request);
                    (core.projection(), trace, true)
                }
                // A follower's trace, runtime and live request come from its
                // projection alone, which `card_dirty` already covers.
                (None, Some(p)) => (p, None, false),
                (None, None) => return,
            };
            let inputs = CardInputs {
                session,
                leading,
                evicted: recovery::evicted_commands(projection, session),
                trace,
                facts,
                inspecting: self.inspecting.get(),
            };
            if !self.card_dirty.get() && self.card_inputs.borrow().as_ref() == Some(&inputs) {
                return;
            }
            self.card_dirty.set(false);
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
            *self.card_inputs.borrow_mut() = Some(inputs);
            card
        };
        let message = ControllerToPage::Recovery {
            card: card.map(Box::new),
        };
        let text = lifeline_protocol::encode(&message);
        if *self.last_card.borrow() != text {
            post(&message);
            *self.last_card.borrow_mut() = text;
        }
    }

    /// A confirmed batch: the card is rebuilt at the next publish if any of
    /// its records can change it.
    pub(super) fn card_records(&self, entries: &[lifeline_core::JournalEntry]) {
        if entries.iter().any(|e| recovery::affects_card(&e.record)) {
            self.card_dirty.set(true);
        }
    }

    fn current_card(&self) -> Option<recovery::Card> {
        let core = self.core.borrow();
        let sessions = self.sessions.borrow();
        let (Some(core), Some(session)) = (core.as_ref(), self.session.get()) else {
            return None;
        };
        let trace = sessions.as_ref().and_then(|s| s.trace(session));
        recovery::card(
            core.projection(),
            session,
            trace.as_ref(),
            &self.facts.borrow(),
            self.inspecting.get(),
        )
    }

    /// One of the card's actions. Only actions the card offers now run; any
    /// other answers with the card's own reason.
    pub fn recover(self: &Rc<Self>, action: Action) {
        if self.role.get() == Role::Follower {
            return notice("recovery", Level::Info, recovery::FOLLOWING);
        }
        let Some(session) = self.session.get() else {
            return;
        };
        if let Some(card) = self.current_card() {
            if let Some(reason) = card
                .actions
                .iter()
                .find(|a| a.action == action)
                .and_then(|a| a.unavailable.clone())
            {
                return notice(
                    "recovery",
                    Level::Warning,
                    Phrase::ActionNotPossible {
                        action,
                        reason: Box::new(reason),
                    },
                );
            }
        } else if action != Action::InspectWorkspace {
            return notice("recovery", Level::Info, Phrase::NothingToRecover);
        }
        match action {
            Action::Resume => self.resume(),
            Action::ContinueFromHistory => self.continue_from_history(session),
            Action::StartFresh => self.start_fresh(session),
            Action::InspectWorkspace => self.inspect_workspace(session, None),
            Action::Archive | Action::Unarchive => {
                if action == Action::Archive {
                    // Archived sessions cannot be inspected (004 005).
                    self.close_workspace();
                }
                let result = self.sessions.borrow_mut().as_mut().map(|s| {
                    if action == Action::Archive {
                        s.archive(session)
                    } else {
                        s.unarchive(session)
                    }
                });
                if let Some(Err(r)) = result {
                    notice("recovery", Level::Warning, Phrase::Refused { refusal: r });
                }
                self.pump();
            }
        }
    }

    /// A new execution on the retained workspace whose first message is
    /// the recorded history with provenance and the uncertain actions.
    fn continue_from_history(self: &Rc<Self>, session: SessionId) {
        let prompt = {
            let core = self.core.borrow();
            let sessions = self.sessions.borrow();
            let Some(core) = core.as_ref() else { return };
            let trace = sessions.as_ref().and_then(|s| s.trace(session));
            let report = recovery::inspect(
                core.projection(),
                session,
                trace.as_ref(),
                &self.facts.borrow(),
            );
            recovery::continuation_prompt(core.projection(), session, &report)
        };
        let Some(turn) = mint(TurnId::from_u128) else {
            return;
        };
        self.prompts.borrow_mut().insert(turn, prompt);
        let result = self
            .sessions
            .borrow_mut()
            .as_mut()
            .map(|s| s.begin(session, Purpose::Launch, None, Some(turn), now()));
        if let Some(Err(r)) = result {
            self.prompts.borrow_mut().remove(&turn);
            notice("recovery", Level::Warning, Phrase::Refused { refusal: r });
        }
        self.pump();
    }

    /// The user chose another environment under Environment (the page
    /// confirmed it, and stored a folder's handle before sending).
    pub fn choose_environment(self: &Rc<Self>, environment: Environment) {
        let Some(session) = self.session.get() else {
            return;
        };
        let current = self
            .sessions
            .borrow()
            .as_ref()
            .and_then(|s| s.environment(session).cloned());
        if current.as_ref() == Some(&environment) {
            return;
        }
        let working = self
            .core
            .borrow()
            .as_ref()
            .is_some_and(|c| agent::open_turn(c.pending_projection(), session).is_some());
        if working {
            return notice(
                "environment",
                Level::Warning,
                Phrase::EnvironmentWhileWorking,
            );
        }
        self.start_fresh_in(session, Some(environment));
    }

    /// A new session on a new workspace, linked from this one; this one's
    /// evidence and workspace stay as they are.
    fn start_fresh(self: &Rc<Self>, old: SessionId) {
        self.start_fresh_in(old, None);
    }

    fn start_fresh_in(self: &Rc<Self>, old: SessionId, environment: Option<Environment>) {
        let Some((session, workspace)) = self.open_session() else {
            return;
        };
        let result = self
            .sessions
            .borrow_mut()
            .as_mut()
            .map(|s| match environment {
                // Another environment: the old runtime stops, by identity.
                Some(environment) => {
                    s.choose_environment(old, session, workspace, environment, now())
                }
                None => s.start_fresh(old, session, workspace, None, now()),
            });
        match result {
            Some(Ok(_)) => {
                self.session.set(Some(session));
                self.active.borrow_mut().take();
                self.inspecting.set(false);
                post(&ControllerToPage::Workspace { listing: None });
                self.show_session(session);
            }
            Some(Err(r)) => notice("recovery", Level::Warning, Phrase::Refused { refusal: r }),
            None => {}
        }
        self.pump();
    }

    /// Workspace-only access (004 requirement 005): checked at both
    /// boundaries — the session exists, is not archived, and its workspace
    /// is one Lifeline owns or one the user opened — and a failed check
    /// rolls back only this registration. Nothing starts: no runtime, no
    /// credential, no agent step.
    pub fn inspect_workspace(self: &Rc<Self>, session: SessionId, file: Option<String>) {
        let Some(access) = self.workspace_access(session) else {
            self.inspecting.set(false);
            post(&ControllerToPage::Workspace { listing: None });
            return notice("workspace", Level::Warning, Phrase::WorkspaceCannotOpen);
        };
        self.inspecting.set(true);
        let shell = self.clone();
        spawn_local(async move {
            let listing = list(session, &access, file).await;
            // The second boundary: the session may have changed meanwhile.
            if shell.workspace_access(session).as_ref() != Some(&access) || !shell.inspecting.get()
            {
                shell.inspecting.set(false);
                post(&ControllerToPage::Workspace { listing: None });
                shell.publish_recovery();
                return;
            }
            match listing {
                Ok(listing) => post(&ControllerToPage::Workspace {
                    listing: Some(listing),
                }),
                Err(e) => {
                    shell.inspecting.set(false);
                    post(&ControllerToPage::Workspace { listing: None });
                    notice("workspace", Level::Warning, e);
                }
            }
            shell.publish_recovery();
        });
    }

    fn workspace_access(&self, session: SessionId) -> Option<(WorkspaceId, Environment)> {
        let sessions = self.sessions.borrow();
        let s = sessions.as_ref()?;
        if matches!(s.state(session), None | Some(SessionState::Archived)) {
            return None;
        }
        let environment = s.environment(session)?.clone();
        self.core
            .borrow()
            .as_ref()?
            .projection()
            .sessions
            .get(&session)
            .map(|v| (v.workspace, environment))
    }

    /// The local folder a workspace's session runs in, if it runs in one.
    pub(super) fn folder_of(&self, workspace: WorkspaceId) -> Option<lifeline_core::FolderId> {
        let core = self.core.borrow();
        let sessions = self.sessions.borrow();
        let (core, sessions) = (core.as_ref()?, sessions.as_ref()?);
        core.pending_projection()
            .sessions
            .values()
            .filter(|v| v.workspace == workspace)
            .find_map(|v| sessions.environment(v.session)?.folder())
    }

    pub fn read_workspace_file(self: &Rc<Self>, path: String) {
        if !self.inspecting.get() {
            return;
        }
        if let Some(session) = self.session.get() {
            self.inspect_workspace(session, Some(path));
        }
    }

    pub fn close_workspace(self: &Rc<Self>) {
        self.inspecting.set(false);
        post(&ControllerToPage::Workspace { listing: None });
        self.publish_recovery();
    }

    pub fn command_verdict(self: &Rc<Self>, command: CommandId, done: bool) {
        let Some(session) = self.uncertain_in_session(command) else {
            return;
        };
        let result = self
            .sessions
            .borrow_mut()
            .as_mut()
            .map(|s| s.record_verdict(session, command, done));
        if let Some(Err(r)) = result {
            notice("recovery", Level::Warning, Phrase::Refused { refusal: r });
        }
        self.pump();
    }

    /// The session whose uncertain `command` a verdict or re-issue may act
    /// on: only the leader acts, and only on a command of its session that
    /// is uncertain. Says why not otherwise.
    fn uncertain_in_session(&self, command: CommandId) -> Option<SessionId> {
        if self.role.get() == Role::Follower {
            notice("recovery", Level::Info, recovery::FOLLOWING);
            return None;
        }
        let session = self.session.get()?;
        if !self.is_uncertain(session, command) {
            notice("recovery", Level::Warning, Phrase::NotUncertain);
            return None;
        }
        Some(session)
    }

    fn is_uncertain(&self, session: SessionId, command: CommandId) -> bool {
        self.core.borrow().as_ref().is_some_and(|c| {
            c.projection().command(command).is_some_and(|v| {
                v.binding.session == session
                    && matches!(
                        v.outcome,
                        lifeline_core::Outcome::MayHaveStarted | lifeline_core::Outcome::Lost
                    )
            })
        })
    }

    /// Runs an uncertain command again, deliberately, under a new key in
    /// the running execution; the original keeps its evidence.
    pub fn reissue(self: &Rc<Self>, command: CommandId) {
        let Some(session) = self.uncertain_in_session(command) else {
            return;
        };
        let (Some(raw), true) = (random_u128().ok(), self.active.borrow().is_some()) else {
            return notice("recovery", Level::Warning, Phrase::ReissueNeedsRunning);
        };
        let Ok(key) = IdempotencyKey::from_u128(raw) else {
            return;
        };
        let binding = {
            let active = self.active.borrow();
            let core = self.core.borrow();
            let (Some(a), Some(core)) = (active.as_ref(), core.as_ref()) else {
                return;
            };
            let p = core.pending_projection();
            let (Some(original), Some((lease, _))) =
                (p.command(command), p.runtime(a.binding.runtime))
            else {
                return;
            };
            if agent::open_turn(p, session).is_some() {
                return notice("recovery", Level::Warning, Phrase::ReissueAgentWorking);
            }
            Binding {
                workspace: original.binding.workspace,
                lease: lease.lease,
                generation: a.binding.generation,
                runtime: a.binding.runtime,
                session,
                working_directory: original.binding.working_directory.clone(),
                capabilities: a.prepared.capabilities.command_capabilities(),
                budget: Budget {
                    deadline: now().plus(COMMAND_WALL_TIME_MS),
                    max_output_bytes: COMMAND_OUTPUT_BYTES,
                },
                command_line: original.binding.command_line.clone(),
            }
        };
        // The link travels in the admission record itself: one write.
        if let Some(core) = self.core.borrow_mut().as_mut() {
            self.ask(core, |request| ClientRequest::Reissue {
                request,
                key,
                original: command,
                binding,
            });
        }
        self.pump();
    }
}

/// Opens a session's files where its environment keeps them, without
/// prompting: the sandbox folder, or the user's folder if access is granted
/// now. Also says what was observed of a folder's access.
async fn open_files(
    environment: Option<&Environment>,
    workspace: WorkspaceId,
) -> (Result<OpfsWorkspace, FsError>, Option<FolderAccess>) {
    match environment {
        Some(Environment::LocalFolder { folder, .. }) => {
            match folders::open_workspace(*folder, &workspace.to_string()).await {
                Ok(ws) => (Ok(ws), Some(FolderAccess::Granted)),
                Err(access) => (
                    Err(FsError::Other(format!(
                        "the folder is not usable now ({access:?})"
                    ))),
                    Some(access),
                ),
            }
        }
        _ => (
            OpfsWorkspace::open_existing(&workspace.to_string()).await,
            None,
        ),
    }
}

fn unreadable(e: FsError) -> Phrase {
    Phrase::WorkspaceUnreadable {
        detail: e.to_string(),
    }
}

fn folder_refusal(environment: &Environment, access: FolderAccess) -> Phrase {
    let name = match environment {
        Environment::LocalFolder { name, .. } => name.clone(),
        Environment::Worker => String::new(),
    };
    match access {
        FolderAccess::NeedsPermission => Phrase::FolderNeedsPermissionToRead { name },
        _ => Phrase::FolderGone { name },
    }
}

/// Lists the workspace depth-first (bounded) and reads one file.
async fn list(
    session: SessionId,
    (workspace, environment): &(WorkspaceId, Environment),
    file: Option<String>,
) -> Result<WorkspaceListing, Phrase> {
    let ws = match open_files(Some(environment), *workspace).await {
        (Ok(ws), _) => ws,
        (Err(_), Some(access)) if access != FolderAccess::Granted => {
            return Err(folder_refusal(environment, access))
        }
        (Err(e), _) => return Err(unreadable(e)),
    };
    let mut entries = Vec::new();
    let mut stack = vec![WorkspacePath::root()];
    let mut truncated = false;
    while let Some(dir) = stack.pop() {
        let mut items = ws.list(&dir).await.map_err(unreadable)?;
        items.sort_by(|a, b| b.name.cmp(&a.name));
        for item in items {
            if entries.len() >= MAX_ENTRIES {
                truncated = true;
                break;
            }
            let Ok(path) = dir.join(&item.name) else {
                continue;
            };
            let is_dir = item.kind == EntryKind::Directory;
            entries.push((path.as_str().to_string(), is_dir));
            if is_dir {
                stack.push(path);
            }
        }
    }
    entries.sort();
    let file = match file {
        Some(p) => {
            let read = match WorkspacePath::parse(&p) {
                Ok(path) => ws
                    .read(&path, MAX_FILE_BYTES)
                    .await
                    .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            Some((p, read))
        }
        None => None,
    };
    Ok(WorkspaceListing {
        session,
        entries,
        truncated,
        file,
    })
}
