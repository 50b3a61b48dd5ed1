//! The controller worker: the engine's shell. `lifeline_engine::Engine`
//! decides everything; this crate carries out its effects (IndexedDB
//! through `lifeline-store`, ports, timers, fetches, folder observations,
//! worker spawns through the page) and translates the page's messages and
//! the browser's events into its inputs. Codemap:
//!
//! | module | what it holds |
//! |---|---|
//! | [`shell`] | the effect loop and the handles it keeps; `shell/load.rs` reads the journal at start, its snapshot's reader fetched only when there is a snapshot; `shell/observe.rs` looks without reviving anything; `shell/profiles.rs` lists, saves and deletes profiles |
//! | [`provider`] | sending a recorded provider request with `fetch`, streamed through `lifeline_provider` |
//! | [`export`] | evidence export (a tar of JSON Lines and artifacts) and read-only import |
//! | [`web`] | Web Locks, timers, randomness and the clock |
//! | `config`, `durability`, `journal`, `storage` | re-exported from `lifeline-store` |

// Talc instead of the default dlmalloc: the same single-threaded heap in
// fewer bytes of wasm.
#[cfg(target_family = "wasm")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

pub mod export;
pub mod local;
pub mod provider;
pub mod shell;
pub mod web;
mod words;

/// The stores live in `lifeline-store`; the shell names them as before.
pub use lifeline_store::{config, durability, journal, storage};

use lifeline_engine::KeptRead;
use lifeline_protocol::{check_version, ControllerToPage, PageToController, PROTOCOL_VERSION};
use std::cell::Cell;
use std::rc::Rc;
use wasm_bindgen::{prelude::*, JsCast};
use web_sys::{MessageEvent, MessagePort};

use shell::{notice, post, Shell};

/// How often the page hears that this controller is alive.
const HEARTBEAT_MS: i32 = 1_000;

/// Entry point, called by `controller.js` once the module is instantiated.
#[wasm_bindgen]
pub fn run_controller() {
    let shell = Shell::new();
    let started = Rc::new(Cell::new(false));
    let on_page = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        page_message(&shell, &started, &event);
    });
    let scope = web::scope();
    scope.set_onmessage(Some(on_page.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_page.forget();
    let beat = Rc::new(Cell::new(0u64));
    let heartbeat = Closure::<dyn FnMut()>::new(move || {
        beat.set(beat.get() + 1);
        post(ControllerToPage::Heartbeat { beat: beat.get() });
    });
    let _ = scope.set_interval_with_callback_and_timeout_and_arguments_0(
        heartbeat.as_ref().unchecked_ref(),
        HEARTBEAT_MS,
    );
    heartbeat.forget();
    post(ControllerToPage::Ready {
        protocol: PROTOCOL_VERSION,
    });
}

fn page_rejected(e: &lifeline_protocol::DecodeError) {
    web::log(&e.to_string());
    notice(
        "page-message",
        lifeline_protocol::Level::Error,
        e.page_phrase(),
    );
}

fn page_message(shell: &Rc<Shell>, started: &Cell<bool>, event: &MessageEvent) {
    if let Some(buffer) = event.data().dyn_ref::<js_sys::ArrayBuffer>() {
        return export::received_buffer(buffer.clone());
    }
    let model = js_sys::Reflect::get(&event.data(), &"importModel".into()).unwrap_or_default();
    if model.is_object() {
        return local::import(model);
    }
    let Some(text) = event.data().as_string() else {
        notice(
            "page-message",
            lifeline_protocol::Level::Error,
            lifeline_core::phrase::Phrase::PageNotJson,
        );
        return;
    };
    let message = match lifeline_codec::decode_message::<PageToController>(&text) {
        Ok(m) => m,
        Err(e) => return page_rejected(&e),
    };
    match message {
        PageToController::Start {
            protocol,
            role,
            cause,
            locale,
        } => {
            if let Err(e) = check_version(protocol) {
                return page_rejected(&e);
            }
            if started.replace(true) {
                return;
            }
            words::choose(&locale);
            words::fetch_german(&shell);
            shell.start(role, cause);
        }
        PageToController::Language { locale } => {
            if words::choose(&locale) {
                shell.language();
                words::fetch_german(&shell);
            }
        }
        PageToController::Promote => shell.promote(),
        PageToController::RuntimePort {
            runtime,
            generation,
        } => match event.ports().get(0).dyn_into::<MessagePort>() {
            Ok(port) => shell.runtime_port(runtime, generation, port),
            Err(_) => notice(
                "page-message",
                lifeline_protocol::Level::Error,
                lifeline_core::phrase::Phrase::PortMissing,
            ),
        },
        PageToController::RuntimeExited {
            runtime,
            generation,
            crashed,
            detail,
        } => {
            shell.input(|e, now| e.handle_runtime_exited(runtime, generation, crashed, detail, now))
        }
        PageToController::StopRuntime {
            runtime,
            generation,
        } => shell.input(|e, now| e.handle_stop_unresponsive(runtime, generation, now)),
        PageToController::TerminateFailed {
            runtime,
            generation,
            detail,
        } => shell.input(|e, now| e.handle_terminate_failed(runtime, generation, &detail, now)),
        PageToController::Prompt { turn, text } => {
            shell.input(|e, now| e.handle_prompt(turn, text, now))
        }
        PageToController::Stop => shell.input(|e, now| e.handle_stop(now)),
        PageToController::WithdrawPrompt { turn } => {
            shell.input(|e, now| e.handle_withdraw_prompt(turn, now))
        }
        PageToController::RetryNow => shell.input(|e, now| e.handle_retry_now(now)),
        PageToController::StoragePersisted { persisted } => {
            shell.input(|e, _| e.handle_storage_persisted(persisted))
        }
        PageToController::Resume => shell.input(|e, now| e.handle_resume(now)),
        PageToController::SaveProfile { profile } => shell.save_profile(profile),
        PageToController::DeleteProfile { profile } => shell.delete_profile(profile),
        PageToController::SelectProfile { profile } => {
            shell.input(|e, now| e.handle_select_profile(profile, now))
        }
        PageToController::Recover { action } => shell.input(|e, now| e.handle_recover(action, now)),
        PageToController::CommandVerdict { command, done } => {
            shell.input(|e, now| e.handle_verdict(command, done, now))
        }
        PageToController::Reissue { command } => {
            shell.input(|e, now| e.handle_reissue(command, now))
        }
        PageToController::RepairJournal => shell.input(|e, _| e.handle_repair()),
        PageToController::ReadWorkspaceFile { path } => {
            shell.input(|e, _| e.handle_read_workspace_file(path))
        }
        PageToController::CloseWorkspace => shell.input(|e, _| e.handle_close_workspace()),
        PageToController::ChooseEnvironment { environment } => {
            shell.input(|e, now| e.handle_choose_environment(environment, now))
        }
        PageToController::NewSession => shell.input(|e, now| e.handle_new_session(now)),
        PageToController::OpenSession { session } => {
            shell.input(|e, now| e.handle_open_session(session, now))
        }
        PageToController::RenameSession { session, title } => {
            shell.input(|e, now| e.handle_rename_session(session, title, now))
        }
        PageToController::SessionAction { session, action } => {
            shell.input(|e, now| e.handle_session_action(session, action, now))
        }
        PageToController::DeleteSession { session } => {
            shell.input(|e, now| e.handle_delete_session(session, now))
        }
        PageToController::SearchSessions { query } => {
            shell.input(|e, _| e.handle_search_sessions(query))
        }
        PageToController::Export { session } => export::export(shell, session),
        PageToController::Import { file_name, bytes } => export::expect_import(file_name, bytes),
        PageToController::ReadOutput {
            command,
            offset,
            len,
            from_end,
        } => {
            // The engine's own way to say "the end" (u64::MAX does not
            // survive JSON numbers, so the page sends a flag).
            let offset = if from_end { u64::MAX } else { offset };
            shell.input(|e, _| e.handle_read_kept(command, KeptRead::Range { offset, len }))
        }
        PageToController::DownloadOutput { command } => {
            shell.input(|e, _| e.handle_read_kept(command, KeptRead::Download))
        }
    }
}
