//! The inline recovery card (reference 004, requirement 006) and the
//! workspace-only browser (requirement 005).
//!
//! The card renders `lifeline_core::recovery::Card` as it is: the core chose
//! the active record, the summary, the actions possible now and why others
//! are not. This component owns the only action handlers for recovery in a
//! mounted chat; nothing outside the transcript explains or acts on the same
//! failure. It sits inside the transcript's scroll viewport, before the
//! messages, and is revealed once per session and error stamp. Its view is
//! in a module of its own, fetched the first time a card is shown.

use std::cell::RefCell;

use leptos::prelude::*;
use lifeline_core::recovery::{Action, Card, RevealKey, UncertainCommand};
use lifeline_protocol::{PageToController, Role, WorkspaceListing};
use wasm_bindgen::{closure::Closure, JsCast};

use crate::environment::act;
use crate::i18n::{self, t, tf_in, Msg};
use crate::io;
use crate::ui::{handler, Ui};

thread_local! {
    /// Cards already revealed in this page: a repeated event with the same
    /// key never pulls the reader away from older messages.
    static REVEALED: RefCell<Vec<RevealKey>> = const { RefCell::new(Vec::new()) };
}

fn send(ui: Ui, message: PageToController) {
    if !io::request(message) {
        ui.refused
            .set(Some(i18n::now(Msg::NotSentNoController).into()));
    }
}

/// Scrolls the card into view once per key, when the page is visible; a
/// hidden page defers it until it becomes visible.
fn reveal(key: RevealKey, element: web_sys::Element) {
    let fresh = REVEALED.with(|r| {
        let mut r = r.borrow_mut();
        if r.contains(&key) {
            false
        } else {
            r.push(key);
            true
        }
    });
    if !fresh {
        return;
    }
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if !document.hidden() {
        // After this frame's bottom-follow of the transcript.
        let cb = Closure::once_into_js(move || element.scroll_into_view());
        if let Some(w) = web_sys::window() {
            let _ = w.request_animation_frame(cb.unchecked_ref());
        }
        return;
    }
    let target = document.clone();
    let once = Closure::<dyn FnMut()>::new(move || {
        if !target.hidden() {
            element.scroll_into_view();
        }
    });
    let options = web_sys::AddEventListenerOptions::new();
    options.set_once(true);
    let _ = document.add_event_listener_with_callback_and_add_event_listener_options(
        "visibilitychange",
        once.as_ref().unchecked_ref(),
        &options,
    );
    once.forget();
}

#[component]
pub fn RecoveryCard(ui: Ui) -> impl IntoView {
    let card = Memo::new(move |_| ui.recovery.get());
    let expanded = RwSignal::new(false);
    let confirming = RwSignal::new(None::<Action>);
    let node = NodeRef::<leptos::html::Section>::new();
    Effect::new(move |_| {
        let key = card.with(|c| c.as_ref().map(|c| c.key.clone()));
        if let (Some(key), Some(element)) = (key, node.get()) {
            reveal(key, element.into());
        }
    });
    move || {
        // The card re-renders in a new locale; its state lives outside.
        let l = i18n::locale();
        // The card's actions say why a follower cannot act; the uncertain
        // commands' buttons would send requests nobody here may carry out.
        let following = ui.role.get() == Some(Role::Follower);
        card.get().map(|c| {
            crate::lazy::shown(move || {
                card_view(ui, c.clone(), l, following, expanded, confirming, node)
            })
        })
    }
}

/// The card's view, in a module of its own ([`crate::lazy`]): most visits
/// have nothing to recover, and a first visit never has.
#[leptos::wasm_split::wasm_split(recovery, fallible, wasm_split_path = leptos::wasm_split)]
fn card_view(
    ui: Ui,
    c: Card<String>,
    l: i18n::Locale,
    following: bool,
    expanded: RwSignal<bool>,
    confirming: RwSignal<Option<Action>>,
    node: NodeRef<leptos::html::Section>,
) -> Result<AnyView, leptos::wasm_split::SplitLoaderError> {
    let Card {
        summary,
        cause,
        details,
        report,
        actions,
        busy,
        history,
        reissue,
        ..
    } = c;
    // Verify opens the workspace: possible exactly when Inspect is.
    let verify = actions
        .iter()
        .find(|a| a.action == Action::InspectWorkspace)
        .and_then(|a| a.unavailable.clone());
    let offered: Vec<Action> = actions
        .iter()
        .filter(|a| a.unavailable.is_none())
        .map(|a| a.action)
        .collect();
    let not_now: Vec<String> = actions
        .iter()
        .filter_map(|a| {
            a.unavailable
                .as_ref()
                .map(|why| tf_in(l, Msg::NotPossibleNow, &[t(l, i18n::action(a.action)), why]))
        })
        .collect();
    let rows = report.rows.clone();
    let environment = report.environment.clone();
    let env_line = environment
        .as_ref()
        .map(|e| crate::environment::describe(l, e));
    // Copy, for the action handlers inside the per-action views.
    let environment = StoredValue::new(environment);
    let uncertain = report.uncertain_commands.clone();
    Ok(view! {
        <section class="recovery-card" role="region" aria-label=t(l, Msg::Recovery) node_ref=node>
            <p class="recovery-summary">{summary}</p>
            {busy.map(|b| view! { <p class="recovery-busy" role="status">{b}</p> })}
            <div class="recovery-actions">
                {offered
                    .into_iter()
                    .map(|action| {
                        let label = t(l, i18n::action(action));
                        view! {
                            <Show
                                when=move || confirming.get() == Some(action)
                                fallback=move || {
                                    view! {
                                        <button
                                            type="button"
                                            on:click=handler(move |_| {
                                                if action.confirms() {
                                                    confirming.set(Some(action));
                                                } else {
                                                    environment.with_value(|e| act(ui, action, e.as_ref()));
                                                }
                                            })
                                        >
                                            {label}
                                        </button>
                                    }
                                }
                            >
                                <button
                                    type="button"
                                    class="danger"
                                    on:click=handler(move |_| {
                                        confirming.set(None);
                                        environment.with_value(|e| act(ui, action, e.as_ref()));
                                    })
                                >
                                    {t(l, i18n::confirm(action))}
                                </button>
                                <button type="button" on:click=handler(move |_| confirming.set(None))>
                                    {t(l, Msg::Cancel)}
                                </button>
                            </Show>
                        }
                    })
                    .collect_view()}
            </div>
            <table class="recovery-rows">
                <caption>{t(l, Msg::WhatSurvived)}</caption>
                <tbody>
                    {rows
                        .into_iter()
                        .map(|r| {
                            view! {
                                <tr data-verdict=r.verdict.label()>
                                    <th scope="row">{t(l, i18n::dimension(r.dimension))}</th>
                                    <td>{t(l, i18n::verdict(r.verdict))}</td>
                                    <td class="evidence">{r.evidence.clone()}</td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
            {env_line.map(|e| view! { <p class="recovery-environment">{e}</p> })}
            {(!uncertain.is_empty())
                .then(|| {
                    view! {
                        <ul class="recovery-uncertain" aria-label=t(l, Msg::UncertainActions)>
                            {uncertain
                                .into_iter()
                                .map(|u| {
                                    let verify = verify.clone();
                                    let reissue = reissue.clone();
                                    view! { <UncertainItem ui u l following verify reissue /> }
                                })
                                .collect_view()}
                        </ul>
                    }
                })}
            <button
                type="button"
                class="disclosure"
                aria-expanded=move || if expanded.get() { "true" } else { "false" }
                aria-controls="recovery-details"
                on:click=handler(move |_| expanded.update(|e| *e = !*e))
            >
                {t(l, Msg::Details)}
            </button>
            <div id="recovery-details" class="recovery-details" hidden=move || !expanded.get()>
                {cause.map(|c| view! { <p class="recovery-cause">{c}</p> })}
                <ul>
                    {details.into_iter().map(|d| view! { <li>{d}</li> }).collect_view()}
                </ul>
                {(!not_now.is_empty())
                    .then(|| {
                        view! {
                            <ul class="recovery-not-now">
                                {not_now.into_iter().map(|d| view! { <li>{d}</li> }).collect_view()}
                            </ul>
                        }
                    })}
                {(!history.is_empty())
                    .then(|| {
                        view! {
                            <p>{t(l, Msg::EarlierFailures)}</p>
                            <ul>{history.into_iter().map(|h| view! { <li>{h}</li> }).collect_view()}</ul>
                        }
                    })}
            </div>
        </section>
    }
    .into_any())
}

/// One uncertain command: check it, then say what happened or run it again.
#[component]
fn UncertainItem(
    ui: Ui,
    u: UncertainCommand,
    l: i18n::Locale,
    following: bool,
    /// Why Verify cannot open the workspace now, if it cannot.
    verify: Option<String>,
    /// Why Re-issue is not possible now, if it is not.
    reissue: Option<String>,
) -> impl IntoView {
    let verify_off = verify.is_some();
    let reissue_off = reissue.is_some();
    let mut why = String::new();
    for (msg, reason) in [(Msg::Verify, verify), (Msg::Reissue, reissue)] {
        if let Some(w) = reason {
            why.push_str(&tf_in(l, Msg::NotPossibleNow, &[t(l, msg), &w]));
            why.push(' ');
        }
    }
    let command = u.command;
    let confirming = RwSignal::new(false);
    let state = match (u.verdict, u.reissued_as) {
        (Some(true), _) => Some(t(l, Msg::MarkedDone)),
        (Some(false), _) => Some(t(l, Msg::MarkedNotDone)),
        (None, Some(_)) => Some(t(l, Msg::Reissued)),
        (None, None) => None,
    };
    let line = u.line.clone();
    view! {
        <li>
        <div role="group" aria-label=tf_in(l, Msg::UncertainName, &[&u.line])>
            <code>{u.line.clone()}</code>
            " "
            <span class="outcome">{t(l, i18n::outcome(u.outcome))}</span>
            {match state {
                Some(s) => view! { <span class="verdict">{format!(" — {s}")}</span> }.into_any(),
                None if following => view! { <span class="verdict"></span> }.into_any(),
                None => view! {
                    <span class="uncertain-actions">
                        <button
                            type="button"
                            disabled=verify_off
                            on:click=handler(move |_| {
                                // Verify: the command's own evidence and the
                                // workspace, side by side.
                                let name = tf_in(l, Msg::CommandName, &[&line]);
                                if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
                                    if let Ok(Some(el)) = doc.query_selector(&format!(
                                        "[aria-label=\"{}\"]",
                                        name.replace('\\', "\\\\").replace('"', "\\\"")
                                    )) {
                                        el.scroll_into_view();
                                    }
                                }
                                send(ui, PageToController::Recover { action: Action::InspectWorkspace });
                            })
                        >
                            {t(l, Msg::Verify)}
                        </button>
                        <button type="button" on:click=handler(move |_| send(ui, PageToController::CommandVerdict { command, done: true }))>
                            {t(l, Msg::MarkDone)}
                        </button>
                        <button type="button" on:click=handler(move |_| send(ui, PageToController::CommandVerdict { command, done: false }))>
                            {t(l, Msg::MarkNotDone)}
                        </button>
                        <Show
                            when=move || confirming.get()
                            fallback=move || view! {
                                <button type="button" disabled=reissue_off on:click=handler(move |_| confirming.set(true))>{t(l, Msg::Reissue)}</button>
                            }
                        >
                            <button
                                type="button"
                                class="danger"
                                on:click=handler(move |_| {
                                    confirming.set(false);
                                    send(ui, PageToController::Reissue { command });
                                })
                            >
                                {t(l, Msg::ConfirmReissue)}
                            </button>
                            <button type="button" on:click=handler(move |_| confirming.set(false))>{t(l, Msg::Cancel)}</button>
                        </Show>
                        {(!why.is_empty()).then(|| view! { <span class="reason">{why}</span> })}
                    </span>
                }
                .into_any(),
            }}
        </div>
        </li>
    }
}

/// Workspace-only access: the stopped session's files, read-only.
#[component]
pub fn WorkspaceBrowser(ui: Ui) -> impl IntoView {
    move || {
        ui.workspace
            .get()
            .map(|listing| crate::lazy::shown(move || workspace(ui, listing.clone())))
    }
}

/// The listing's view, in a module of its own ([`crate::lazy`]): only a
/// stopped session's workspace opened read-only shows it.
#[leptos::wasm_split::wasm_split(readonly, fallible, wasm_split_path = leptos::wasm_split)]
fn workspace(
    ui: Ui,
    listing: WorkspaceListing,
) -> Result<AnyView, leptos::wasm_split::SplitLoaderError> {
    let l = i18n::locale();
    let file = listing.file.clone();
    Ok(view! {
                <section class="workspace" role="region" aria-label=t(l, Msg::Workspace)>
                    <p class="read-only">{t(l, Msg::ReadOnlyStopped)}</p>
                    <ul class="workspace-entries">
                        {listing
                            .entries
                            .iter()
                            .cloned()
                            .map(|(path, is_dir)| {
                                if is_dir {
                                    view! { <li class="dir">{format!("{path}/")}</li> }.into_any()
                                } else {
                                    let p = path.clone();
                                    view! {
                                        <li>
                                            <button
                                                type="button"
                                                class="link"
                                                on:click=handler(move |_| send(ui, PageToController::ReadWorkspaceFile { path: p.clone() }))
                                            >
                                                {path}
                                            </button>
                                        </li>
                                    }
                                    .into_any()
                                }
                            })
                            .collect_view()}
                    </ul>
                    {listing.truncated.then(|| view! { <p>{t(l, Msg::FirstEntriesOnly)}</p> })}
                    {file.map(|(path, text)| match text {
                        Ok(text) => view! {
                            <figure>
                                <figcaption>{path}</figcaption>
                                <pre class="file">{text}</pre>
                            </figure>
                        }
                        .into_any(),
                        Err(e) => view! { <p role="alert">{format!("{path}: {e}")}</p> }.into_any(),
                    })}
                    <button type="button" on:click=handler(move |_| send(ui, PageToController::CloseWorkspace))>
                        {t(l, Msg::CloseWorkspace)}
                    </button>
                </section>
            }
    .into_any())
}
