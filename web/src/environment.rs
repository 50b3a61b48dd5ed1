//! The `Environment` selector (reference 000) and the page's part of using
//! a local folder: only a page can show the folder picker and only a click
//! may ask the user for access again, so both happen here; what they mean
//! (which actions a folder blocks, what teardown and reopening are
//! possible) comes from the core through the recovery card and the
//! session's status.
//!
//! Choosing another environment starts a new session there, linked from
//! the current one, after a confirmation: a session's files live in one
//! place for its whole life, and the old one's stay where they are.

use leptos::prelude::*;
use leptos::task::spawn_local;
use lifeline_core::environment::{EnvironmentState, FolderAccess, FolderRef, Reopen, Teardown};
use lifeline_core::recovery::Action;
use lifeline_core::session::Environment;
use lifeline_core::FolderId;
use lifeline_opfs::folders::{self, error_name};
use lifeline_protocol::{PageToController, Role};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::FileSystemDirectoryHandle;

use crate::host::{self, Ui};
use crate::i18n::{self, t, text, tf, tf_in, tr, Locale, Msg};

/// What the user picked, waiting for the confirmation.
#[derive(Clone)]
enum Choice {
    Worker,
    Folder(FileSystemDirectoryHandle),
}

fn picker() -> Option<js_sys::Function> {
    let window = web_sys::window()?;
    js_sys::Reflect::get(&window, &"showDirectoryPicker".into())
        .ok()?
        .dyn_into()
        .ok()
}

/// Shows the browser's folder picker; `Ok(None)` when the user cancelled.
async fn pick_folder() -> Result<Option<FileSystemDirectoryHandle>, String> {
    let Some(show) = picker() else {
        return Err(i18n::now(Msg::EnvFolderUnsupported).into());
    };
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"mode".into(), &"readwrite".into());
    // The picker starts where it was last left for Lifeline.
    let _ = js_sys::Reflect::set(&options, &"id".into(), &"lifeline".into());
    let promise: js_sys::Promise = show
        .call1(&JsValue::UNDEFINED, &options)
        .map_err(|e| error_text(&e))?
        .dyn_into()
        .map_err(|_| String::from("the folder picker did not answer"))?;
    match JsFuture::from(promise).await {
        Ok(handle) => handle
            .dyn_into::<FileSystemDirectoryHandle>()
            .map(Some)
            .map_err(|_| String::from("the picker returned something other than a folder")),
        Err(e) if error_name(&e) == "AbortError" => Ok(None),
        Err(e) => Err(error_text(&e)),
    }
}

fn error_text(error: &JsValue) -> String {
    js_sys::Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| error_name(error))
}

/// The session's folder, if it runs in one; `None` for the sandbox.
fn current(ui: Ui) -> Option<FolderRef> {
    ui.status.with(|s| {
        s.as_ref()
            .and_then(|s| s.lifecycle.as_ref())
            .and_then(|l| l.folder.clone())
    })
}

#[component]
pub fn EnvironmentSelect(ui: Ui) -> impl IntoView {
    let choice = RwSignal::new(None::<Choice>);
    let problem = RwSignal::new(None::<String>);
    let leader = move || {
        ui.status.with(|s| {
            s.as_ref()
                .is_some_and(|s| s.role == Role::Leader && s.writer)
        })
    };
    let supported = picker().is_some();
    let folder_name = move || current(ui).map(|f| f.name);
    let value = move || {
        if current(ui).is_some() {
            "folder"
        } else {
            "worker"
        }
    };
    let on_change = move |ev: leptos::ev::Targeted<web_sys::Event, web_sys::HtmlSelectElement>| {
        let select = ev.target();
        let picked = select.value();
        // The select shows the session's environment until a choice is
        // confirmed and the controller reports the new one.
        select.set_value(value());
        problem.set(None);
        match picked.as_str() {
            "worker" if current(ui).is_some() => choice.set(Some(Choice::Worker)),
            "pick" => spawn_local(async move {
                match pick_folder().await {
                    Ok(Some(handle)) => choice.set(Some(Choice::Folder(handle))),
                    Ok(None) => {}
                    Err(e) => problem.set(Some(tf(Msg::EnvPickFailed, &[&e]))),
                }
            }),
            _ => {}
        }
    };
    let confirm = move |_| {
        let Some(picked) = choice.get_untracked() else {
            return;
        };
        choice.set(None);
        spawn_local(async move {
            let environment = match picked {
                Choice::Worker => Environment::Worker,
                Choice::Folder(handle) => {
                    let Some(folder) = host::mint(FolderId::from_u128) else {
                        return problem
                            .set(Some(tf(Msg::EnvRememberFailed, &["no random source"])));
                    };
                    // Durable first: the controller is told only about a
                    // folder whose handle this browser has stored.
                    if let Err(e) = folders::remember(folder, &handle).await {
                        return problem.set(Some(tf(Msg::EnvRememberFailed, &[&e])));
                    }
                    Environment::LocalFolder {
                        folder,
                        name: handle.name(),
                    }
                }
            };
            if !host::request(PageToController::ChooseEnvironment { environment }) {
                problem.set(Some(i18n::now(Msg::NotSentNoController).into()));
            }
        });
    };
    view! {
        <label for="environment">{text(Msg::Environment)}</label>
        <select
            id="environment"
            aria-describedby="environment-hint"
            prop:value=value
            disabled=move || !leader()
            on:change:target=on_change
        >
            <option value="worker">{text(Msg::EnvWorker)}</option>
            {move || {
                folder_name()
                    .map(|name| view! { <option value="folder">{tf(Msg::EnvFolderNamed, &[&name])}</option> })
            }}
            <option value="pick" disabled=!supported>
                {move || tr(if supported { Msg::EnvPickFolder } else { Msg::EnvFolderUnsupported })}
            </option>
        </select>
        <p id="environment-hint" class="hint">{text(Msg::EnvironmentHint)}</p>
        {move || {
            choice
                .get()
                .map(|c| {
                    let question = match &c {
                        Choice::Worker => tr(Msg::EnvConfirmWorker).to_owned(),
                        Choice::Folder(h) => tf(Msg::EnvConfirmFolder, &[&h.name()]),
                    };
                    view! {
                        <div class="environment-confirm" role="group" aria-label=text(Msg::Environment)>
                            <p>{question}</p>
                            <button type="button" class="danger" on:click=confirm>
                                {text(Msg::EnvStartThere)}
                            </button>
                            <button type="button" on:click=move |_| choice.set(None)>
                                {text(Msg::Cancel)}
                            </button>
                        </div>
                    }
                })
        }}
        {move || problem.get().map(|p| view! { <p class="hint" role="alert">{p}</p> })}
    }
}

/// Carries out a card action, first asking the user for access to the
/// session's folder when the core says the browser will ask: this click is
/// the user activation the browser requires.
pub fn act(ui: Ui, action: Action, environment: Option<&EnvironmentState>) {
    let folder = environment.and_then(|e| e.ask_before(action)).cloned();
    let Some(FolderRef { folder, name }) = folder else {
        return send(ui, action);
    };
    spawn_local(async move {
        match folders::request_access(folder).await {
            FolderAccess::Granted => send(ui, action),
            _ => ui
                .refused
                .set(Some(i18n::now_f(Msg::EnvPermissionRefused, &[&name]))),
        }
    });
}

fn send(ui: Ui, action: Action) {
    if !host::request(PageToController::Recover { action }) {
        ui.refused
            .set(Some(i18n::now(Msg::NotSentNoController).into()));
    }
}

/// The card's line on the environment: which state exists, who removes
/// it, and whether it can be opened again.
pub fn describe(l: Locale, state: &EnvironmentState) -> String {
    let what = match &state.folder {
        None => t(l, Msg::EnvStateWorker).to_owned(),
        Some(FolderRef { name, .. }) => tf_in(l, Msg::EnvStateFolder, &[name]),
    };
    let teardown = t(
        l,
        match state.teardown {
            Teardown::RemovedOnDelete => Msg::TeardownRemovedOnDelete,
            Teardown::NeverRemoved => Msg::TeardownNeverRemoved,
        },
    );
    let reopen = t(
        l,
        match state.reopen {
            Reopen::Ready => Msg::ReopenReady,
            Reopen::AfterPermission => Msg::ReopenAfterPermission,
            Reopen::Impossible => Msg::ReopenImpossible,
            Reopen::Unknown => Msg::ReopenUnknown,
        },
    );
    format!("{what} {teardown} {reopen}")
}
