//! The `Environment` selector (reference 000) and the page's part of using
//! a local folder: only a page can show the folder picker and only a click
//! may ask the user for access again, so both happen here (the IO itself
//! in [`crate::io::folders`]); what they mean
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
use lifeline_protocol::{PageToController, Role};
use web_sys::FileSystemDirectoryHandle;

use crate::i18n::{self, t, text, tf, tf_in, tr, Locale, Msg};
use crate::io::{self, folders};
use crate::ui::{handler, Ui};

/// What the user picked, waiting for the confirmation.
#[derive(Clone)]
enum Choice {
    Worker,
    Folder(FileSystemDirectoryHandle),
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
    let supported = folders::picker().is_some();
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
                match folders::pick_folder().await {
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
                    let Some(folder) = io::mint(FolderId::from_u128) else {
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
            if !io::request(PageToController::ChooseEnvironment { environment }) {
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
                            <button type="button" class="danger" on:click=handler(confirm)>
                                {text(Msg::EnvStartThere)}
                            </button>
                            <button type="button" on:click=handler(move |_| choice.set(None))>
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
    if !io::request(PageToController::Recover { action }) {
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
