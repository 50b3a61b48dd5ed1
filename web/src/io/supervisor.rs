//! Supervision of the controller worker: spawning it, reading what it
//! sends, posting to it, noticing its death (an `error` event, no `Ready`
//! in time, or heartbeat silence) and replacing it; which of the person's
//! requests it may not have received, and the prompts it has not recorded
//! yet.

use super::runtimes::{RuntimeKey, RuntimeSlot};
use super::{
    adopt_early, describe, download, error_detail, now, replay, spawn_worker, with_host, Host,
    EARLY_CONTROLLER,
};
use crate::i18n::{self, Msg};
use crate::transcript;
use crate::ui::set_if_changed;
use crate::worded::{ControllerToPage, JournalStatus, Status};
use leptos::prelude::*;
use lifeline_core::{StartCause, TurnId};
use lifeline_protocol::{check_version, encode, Level, PageToController, Role, PROTOCOL_VERSION};
use wasm_bindgen::{prelude::*, JsCast};
use web_sys::{Event, MessageEvent, Worker};

/// The controller beats every second; this much silence means it is dead
/// or stuck.
const HEARTBEAT_TIMEOUT_MS: f64 = 5_000.0;
/// A worker's first `Ready` includes fetching and compiling its wasm.
const READY_TIMEOUT_MS: f64 = 20_000.0;
/// At most this many controller restarts within [`RESTART_WINDOW_MS`].
const MAX_RESTARTS: usize = 5;
const RESTART_WINDOW_MS: f64 = 60_000.0;
/// A request of the person's counts as arrived once the controller has
/// beaten this many times after the page posted it: by then it sat in the
/// worker's queue for at least two whole beat intervals, and the worker
/// takes its messages in order with its timers. An inference, not a
/// receipt (the protocol has none): a request newer than that may have
/// died with the worker, and is reported if it did.
const ARRIVAL_BEATS: u64 = 3;
/// A tick this late means the page itself was stalled (or throttled in the
/// background): silence during it is no evidence against a worker.
const STALL_MS: f64 = 3_000.0;
/// `localStorage`: the identity of the last journal that held something.
const JOURNAL_SEEN_KEY: &str = "lifeline-journal";

pub(super) struct ControllerSlot {
    pub(super) worker: Worker,
    pub(super) epoch: u32,
    pub(super) cause: StartCause,
    pub(super) ready: bool,
    pub(super) started: bool,
    pub(super) spawned_at: f64,
    pub(super) last_beat: f64,
    /// The number of the last heartbeat it sent.
    pub(super) beat: u64,
    /// The person's requests posted to it that it cannot be known to have
    /// received yet: the beat when each was posted and the control used.
    pub(super) unconfirmed: Vec<(u64, Msg)>,
}

impl Host {
    pub(super) fn spawn_controller(&mut self, cause: StartCause) {
        self.epoch += 1;
        let epoch = self.epoch;
        // The first controller was started by boot.js, before the page's own
        // wasm, so that the two modules download and compile at once.
        let (worker, said) = match adopt_early(EARLY_CONTROLLER) {
            Some(early) => early,
            None => match spawn_worker("./controller.js") {
                Ok(w) => (w, js_sys::Array::new()),
                Err(e) => return self.fail(i18n::now_f(Msg::ControllerSpawnFailed, &[&e])),
            },
        };
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            if let Some(buffer) = event.data().dyn_ref::<js_sys::ArrayBuffer>() {
                // An exported archive, right after its `ExportReady`.
                let current = with_host(|h| h.current(epoch).is_some()).unwrap_or(false);
                if current {
                    download::received_buffer(buffer.clone());
                }
                return;
            }
            let data = event.data().as_string();
            with_host(|h| h.controller_message(epoch, data));
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let on_error = Closure::<dyn FnMut(Event)>::new(move |event: Event| {
            // Handled here: the page restarts the controller.
            event.prevent_default();
            let detail = error_detail(&event);
            with_host(|h| h.controller_died(epoch, detail));
        });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        replay(said, on_message.as_ref(), on_error.as_ref());
        // Each handler checks its epoch, so a stale worker's events are ignored;
        // they stay allocated for the page's life (restarts are bounded).
        on_message.forget();
        on_error.forget();
        let at = now();
        self.controller = Some(ControllerSlot {
            worker,
            epoch,
            cause,
            ready: false,
            started: false,
            spawned_at: at,
            last_beat: at,
            beat: 0,
            unconfirmed: Vec::new(),
        });
    }

    fn current(&mut self, epoch: u32) -> Option<&mut ControllerSlot> {
        self.controller.as_mut().filter(|c| c.epoch == epoch)
    }

    fn controller_message(&mut self, epoch: u32, data: Option<String>) {
        let Some(controller) = self.current(epoch) else {
            return;
        };
        controller.last_beat = now();
        let Some(text) = data else {
            return self.notice(
                "controller-message",
                Level::Error,
                i18n::now(Msg::ControllerNotMessage).into(),
            );
        };
        let message = match lifeline_codec::decode_message::<ControllerToPage>(&text) {
            Ok(m) => m,
            Err(e) => {
                return self.notice(
                    "controller-message",
                    Level::Error,
                    i18n::now_f(Msg::FromController, &[&e.to_string()]),
                )
            }
        };
        if message.ends_export() {
            crate::evidence::ended();
        }
        match message {
            ControllerToPage::Ready { protocol } => {
                if let Err(e) = check_version(protocol) {
                    if let Some(c) = self.controller.take() {
                        c.worker.terminate();
                    }
                    return self.fail(format!("the controller {e}"));
                }
                if let Some(c) = self.current(epoch) {
                    c.ready = true;
                }
                self.send_start();
                // Messages the previous controller had not recorded yet go
                // again under the same turn ids: one it did record is
                // recognised by its id and not recorded twice.
                for (turn, text) in self.prompts.clone() {
                    self.send(PageToController::Prompt { turn, text });
                }
            }
            ControllerToPage::Heartbeat { beat } => {
                if let Some(c) = self.current(epoch) {
                    c.beat = beat;
                    forget_arrived(&mut c.unconfirmed, beat);
                }
            }
            ControllerToPage::Status(status) => {
                self.journal_seen(&status);
                set_if_changed(self.ui.status, Some(*status));
            }
            ControllerToPage::SpawnRuntime {
                identity,
                workspace,
                env,
                existing_workspace,
                folder,
            } => self.spawn_runtime(identity, workspace, env, (existing_workspace, folder)),
            ControllerToPage::RuntimeEnvironment {
                runtime,
                generation,
                env,
            } => self.runtime_environment((runtime, generation), env),
            ControllerToPage::TerminateRuntime {
                runtime,
                generation,
            } => self.terminate_runtime((runtime, generation)),
            ControllerToPage::View { reset, deltas } => {
                for delta in &deltas {
                    if let lifeline_core::ViewDelta::Turn { turn, .. } = delta {
                        self.prompts.retain(|(t, _)| t != turn);
                    }
                }
                transcript::apply(reset, deltas);
            }
            ControllerToPage::Profiles { profiles, errors } => {
                if self.ui.profiles.with_untracked(|p| *p != profiles) {
                    self.ui.profiles.set(profiles);
                }
                if self.ui.profile_errors.with_untracked(|e| *e != errors) {
                    self.ui.profile_errors.set(errors);
                }
                self.ui.profiles_loaded.set(true);
            }
            ControllerToPage::LocalModel {
                provider,
                said,
                sampling,
            } => {
                for (signal, text) in self.ui.local_sampling.iter().zip(sampling) {
                    signal.set(text);
                }
                let (name, spec) = match provider {
                    Some(lifeline_core::profile::Provider::Local { name, spec }) => (name, spec),
                    _ => Default::default(),
                };
                self.ui.local_name.set(name);
                self.ui.local_spec.set(spec);
                self.ui.local_said.set(said);
            }
            ControllerToPage::Streaming { turn, text } => transcript::streaming(turn, text),
            ControllerToPage::Recovery { card } => {
                let card = card.map(|c| *c);
                if self.ui.recovery.with_untracked(|c| *c != card) {
                    self.ui.recovery.set(card);
                }
            }
            ControllerToPage::Restarted { running, continued } => self.notice(
                "controller-restart",
                Level::Warning,
                i18n::restart_summary(i18n::locale_untracked(), running, continued),
            ),
            ControllerToPage::Workspace { listing } => self.ui.workspace.set(listing),
            ControllerToPage::ExportReady {
                session,
                file_name,
                bytes,
            } => download::expect_download(session, file_name, bytes),
            ControllerToPage::OutputRange {
                command,
                offset,
                end,
                kept,
                text,
                ..
            } => transcript::output_range(command, offset, end, kept, text),
            ControllerToPage::Imported {
                file_name,
                session,
                title,
                reset,
                deltas,
            } => crate::evidence::imported(file_name, session, title, reset, deltas),
            ControllerToPage::Notice {
                key,
                level,
                message,
            } => self.set_notice(&format!("controller:{key}"), level, message),
            ControllerToPage::Sessions { open, list } => {
                crate::sessions::listed(&self.ui.sessions, open, list)
            }
            ControllerToPage::SessionSearch { query, matches } => {
                crate::sessions::searched(&self.ui.sessions, query, matches)
            }
            ControllerToPage::PromptRefused { turn, message } => {
                self.ui.refused.set(Some(message));
                self.give_back(turn);
                transcript::content_changed();
            }
        }
    }

    /// Puts a sent message that was not recorded back into the box.
    fn give_back(&mut self, turn: TurnId) {
        let Some(i) = self.prompts.iter().position(|(t, _)| *t == turn) else {
            return;
        };
        let (_, text) = self.prompts.remove(i);
        self.ui.draft.update(|draft| {
            if draft.trim().is_empty() {
                *draft = text;
            } else {
                draft.insert(0, '\n');
                draft.insert_str(0, &text);
            }
        });
    }

    /// Puts every sent message not yet recorded back into the box, in the
    /// order they were sent.
    fn give_back_all(&mut self) {
        while let Some((turn, _)) = self.prompts.last() {
            let turn = *turn;
            self.give_back(turn);
        }
    }

    /// What a status says about the journal itself: a journal that is gone
    /// takes no message, so every one not yet recorded goes back to the
    /// box; a journal other than the one this browser remembers means the
    /// history of an earlier visit is gone. The memory is `localStorage`,
    /// which survives deleting only the database but not "Clear site
    /// data": after that nothing is known, and nothing is claimed.
    fn journal_seen(&mut self, status: &Status) {
        match &status.journal {
            JournalStatus::Gone { .. } => self.give_back_all(),
            JournalStatus::Open { id: Some(id), .. } if status.role == Role::Leader => {
                let storage = window().local_storage().ok().flatten();
                let seen = storage
                    .as_ref()
                    .and_then(|s| s.get_item(JOURNAL_SEEN_KEY).ok().flatten());
                if seen.as_ref().is_some_and(|seen| seen != id) && !self.gone_noticed {
                    self.gone_noticed = true;
                    self.notice(
                        "history-gone",
                        Level::Warning,
                        i18n::now(Msg::HistoryGone).into(),
                    );
                }
                // Remembered once it holds something: an empty journal's
                // loss is no loss to report.
                if status.position > 0 && seen.as_ref() != Some(id) {
                    if let Some(s) = storage {
                        let _ = s.set_item(JOURNAL_SEEN_KEY, id);
                    }
                }
            }
            _ => {}
        }
    }

    /// Sends `Start` once the controller is ready and the election answered.
    pub(super) fn send_start(&mut self) {
        let Some(role) = self.role else { return };
        let Some(c) = self.controller.as_mut() else {
            return;
        };
        if !c.ready || c.started {
            return;
        }
        let start = encode(&PageToController::Start {
            protocol: PROTOCOL_VERSION,
            role,
            cause: c.cause,
            locale: i18n::locale_untracked().tag().to_owned(),
        });
        if let Err(e) = c.worker.post_message(&JsValue::from_str(&start)) {
            let detail = i18n::now_f(Msg::ControllerStartFailed, &[&describe(&e)]);
            let epoch = c.epoch;
            return self.controller_died(epoch, detail);
        }
        c.started = true;
        self.ui.started.set(true);
        for message in std::mem::take(&mut self.outbox) {
            self.send(message);
        }
        // The session this tab shows: the one in its address (after a
        // reload, or for a new controller).
        if let Some(session) = crate::sessions::addressed() {
            self.send(PageToController::OpenSession { session });
        }
        let keys: Vec<RuntimeKey> = self.runtimes.iter().map(RuntimeSlot::key).collect();
        for key in keys {
            self.relay(key);
        }
    }

    /// Posts to the controller; reports about runtimes wait for the next one
    /// if none is listening. False if the message was not sent.
    ///
    /// A request the person made stays unconfirmed until the controller
    /// has beaten [`ARRIVAL_BEATS`] times since; if it dies before, the
    /// person is told (prompts are tracked by their turn instead).
    pub(super) fn send(&mut self, message: PageToController) -> bool {
        let Some(c) = self.controller.as_mut().filter(|c| c.started) else {
            if matches!(
                message,
                PageToController::RuntimeExited { .. } | PageToController::TerminateFailed { .. }
            ) {
                self.outbox.push(message);
            }
            return false;
        };
        match c.worker.post_message(&JsValue::from_str(&encode(&message))) {
            Ok(()) => {
                if let Some(label) = asked(&message) {
                    c.unconfirmed.push((c.beat, label));
                }
                true
            }
            Err(e) => {
                self.notice(
                    "controller-post",
                    Level::Error,
                    i18n::now_f(Msg::ControllerUnreachable, &[&describe(&e)]),
                );
                false
            }
        }
    }

    fn controller_died(&mut self, epoch: u32, reason: String) {
        let Some(old) = self.controller.take_if(|c| c.epoch == epoch) else {
            return;
        };
        old.worker.set_onmessage(None);
        old.worker.set_onerror(None);
        old.worker.terminate();
        self.ui.started.set(false);
        self.ui.status.set(None);
        // Its notices spoke for its state of mind (a retry countdown, a
        // wait): the next controller says again what still holds.
        self.ui
            .notices
            .update(|list| list.retain(|n| !n.key.starts_with("controller:")));
        self.unconfirmed(old.unconfirmed);
        // An export or import it was carrying ended with it.
        download::controller_gone();
        let at = now();
        self.restart_times.push_back(at);
        while self
            .restart_times
            .front()
            .is_some_and(|t| at - t > RESTART_WINDOW_MS)
        {
            self.restart_times.pop_front();
        }
        if self.restart_times.len() > MAX_RESTARTS {
            self.notice("controller-restart", Level::Warning, String::new());
            // No controller will take them: back to the box.
            self.give_back_all();
            return self.fail(i18n::now_f(
                Msg::ControllerTooManyRestarts,
                &[&self.restart_times.len().to_string(), &reason],
            ));
        }
        self.ui.restarts.update(|n| *n += 1);
        self.notice(
            "controller-restart",
            Level::Warning,
            i18n::now(Msg::RestartChecking).into(),
        );
        self.spawn_controller(StartCause::ControllerRestart);
    }

    /// Tells the person which of their requests to a controller that died
    /// may not have reached it; prompts are not among them (they are sent
    /// again under their turn ids).
    pub(super) fn unconfirmed(&self, requests: Vec<(u64, Msg)>) {
        let mut seen: Vec<Msg> = Vec::new();
        let mut names = String::new();
        for (_, msg) in requests {
            if !seen.contains(&msg) {
                if !names.is_empty() {
                    names.push_str(", ");
                }
                names.push_str(i18n::now(msg));
                seen.push(msg);
            }
        }
        if !names.is_empty() {
            self.notice(
                "unconfirmed",
                Level::Warning,
                i18n::now_f(Msg::MaybeNotReceived, &[&names]),
            );
        }
    }

    pub(super) fn tick(&mut self) {
        let at = now();
        let stalled = at - self.last_tick > STALL_MS;
        self.last_tick = at;
        if stalled {
            if let Some(c) = self.controller.as_mut() {
                c.last_beat = at;
                c.spawned_at = c.spawned_at.max(at - READY_TIMEOUT_MS / 2.0);
            }
            for r in &mut self.runtimes {
                r.spawned_at = r.spawned_at.max(at - READY_TIMEOUT_MS / 2.0);
            }
            return;
        }
        if let Some(c) = self.controller.as_ref() {
            let epoch = c.epoch;
            if !c.ready && at - c.spawned_at > READY_TIMEOUT_MS {
                self.controller_died(
                    epoch,
                    i18n::now_f(
                        Msg::ControllerNoStart,
                        &[&(READY_TIMEOUT_MS as u64 / 1000).to_string()],
                    ),
                );
            } else if c.ready && at - c.last_beat > HEARTBEAT_TIMEOUT_MS {
                self.controller_died(
                    epoch,
                    i18n::now_f(
                        Msg::ControllerNoHeartbeat,
                        &[&(HEARTBEAT_TIMEOUT_MS as u64 / 1000).to_string()],
                    ),
                );
            }
        }
        let late: Vec<RuntimeKey> = self
            .runtimes
            .iter()
            .filter(|r| !r.ready && at - r.spawned_at > READY_TIMEOUT_MS)
            .map(RuntimeSlot::key)
            .collect();
        for key in late {
            self.runtime_crashed(
                key,
                // Whole seconds: a float's `Display` would link the float
                // formatter (about 15 KB of the page's wasm) for this line.
                format!(
                    "the runtime worker did not start within {} s",
                    READY_TIMEOUT_MS as u64 / 1000
                ),
            );
        }
    }
}

/// Drops the requests that have arrived by heartbeat `beat`.
fn forget_arrived(unconfirmed: &mut Vec<(u64, Msg)>, beat: u64) {
    unconfirmed.retain(|(at, _)| beat < at + ARRIVAL_BEATS);
}

/// What the person asked for with `message`, named by the control they
/// used (a file of the workspace browser by the browser itself); `None`
/// for a prompt (tracked by its turn and sent again) and for the page's
/// own reports.
fn asked(message: &PageToController) -> Option<Msg> {
    Some(match message {
        PageToController::Stop => Msg::Stop,
        PageToController::RetryNow => Msg::RetryNow,
        PageToController::StopRuntime { .. } => Msg::StopRuntime,
        PageToController::Resume => Msg::Resume,
        PageToController::Recover { action } => i18n::action(*action),
        PageToController::CommandVerdict { done: true, .. } => Msg::MarkDone,
        PageToController::CommandVerdict { done: false, .. } => Msg::MarkNotDone,
        PageToController::Reissue { .. } => Msg::Reissue,
        PageToController::SaveProfile { .. } => Msg::SaveProfile,
        PageToController::DeleteProfile { .. } => Msg::Delete,
        PageToController::SelectProfile { .. } => Msg::UseForSession,
        PageToController::Export { .. } => Msg::ExportEvidence,
        PageToController::Import { .. } => Msg::ImportEvidence,
        PageToController::RepairJournal => Msg::RepairJournal,
        PageToController::CloseWorkspace => Msg::CloseWorkspace,
        PageToController::ChooseEnvironment { .. } => Msg::EnvStartThere,
        PageToController::StoragePersisted { .. } => Msg::KeepData,
        PageToController::NewSession => Msg::NewSession,
        PageToController::RenameSession { .. } => Msg::Rename,
        PageToController::SessionAction { action, .. } => i18n::action(*action),
        PageToController::DeleteSession { .. } => Msg::DeleteSession,
        PageToController::SearchSessions { .. } => Msg::SearchSessions,
        PageToController::ReadWorkspaceFile { .. } => Msg::Workspace,
        PageToController::DownloadOutput { .. } => Msg::DownloadOutput,
        // The open session is in the address and sent to every new
        // controller after its Start, so it is never lost.
        PageToController::Prompt { .. }
        | PageToController::WithdrawPrompt { .. }
        | PageToController::OpenSession { .. }
        | PageToController::ReadOutput { .. }
        | PageToController::Start { .. }
        // A new controller is told the language in its Start.
        | PageToController::Language { .. }
        | PageToController::Promote
        | PageToController::RuntimePort { .. }
        | PageToController::RuntimeExited { .. }
        | PageToController::TerminateFailed { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::{t, Locale};
    use lifeline_core::recovery::Action;
    use lifeline_core::{CommandId, Generation, RuntimeId};

    fn name(message: PageToController) -> Option<&'static str> {
        asked(&message).map(|m| t(Locale::En, m))
    }

    #[test]
    fn a_request_is_named_by_the_button_the_person_used() {
        let command = CommandId::from_u128(7).unwrap();
        assert_eq!(
            name(PageToController::CommandVerdict {
                command,
                done: true
            }),
            Some("Mark done")
        );
        assert_eq!(
            name(PageToController::CommandVerdict {
                command,
                done: false
            }),
            Some("Mark not done")
        );
        assert_eq!(
            name(PageToController::Reissue { command }),
            Some("Re-issue")
        );
        assert_eq!(
            name(PageToController::Recover {
                action: Action::ContinueFromHistory
            }),
            Some("Continue from history")
        );
        assert_eq!(name(PageToController::Stop), Some("Stop"));
    }

    #[test]
    fn prompts_and_the_pages_own_reports_are_not_requests_to_report() {
        let turn = TurnId::from_u128(9).unwrap();
        let runtime = RuntimeId::from_u128(3).unwrap();
        let generation = Generation::FIRST;
        for message in [
            PageToController::Prompt {
                turn,
                text: "hi".into(),
            },
            PageToController::Promote,
            PageToController::RuntimePort {
                runtime,
                generation,
            },
            PageToController::RuntimeExited {
                runtime,
                generation,
                crashed: true,
                detail: String::new(),
            },
        ] {
            assert_eq!(name(message), None);
        }
    }

    #[test]
    fn a_request_counts_as_arrived_after_three_more_beats() {
        let mut unconfirmed = vec![(5, Msg::MarkDone), (6, Msg::Resume)];
        forget_arrived(&mut unconfirmed, 7);
        assert_eq!(unconfirmed.len(), 2);
        forget_arrived(&mut unconfirmed, 8);
        assert_eq!(unconfirmed, vec![(6, Msg::Resume)]);
        forget_arrived(&mut unconfirmed, 9);
        assert!(unconfirmed.is_empty());
    }
}
