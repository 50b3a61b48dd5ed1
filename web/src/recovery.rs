//! The inline recovery card (reference 004, requirement 006) and the
//! workspace-only browser (requirement 005).
//!
//! The card renders `lifeline_core::recovery::Card` as it is: the core chose
//! the active record, the summary, the actions possible now and why others
//! are not. This component owns the only action handlers for recovery in a
//! mounted chat; nothing outside the transcript explains or acts on the same
//! failure. It sits inside the transcript's scroll viewport, before the
//! messages, and is revealed once per session and error stamp.

use std::cell::RefCell;

use leptos::prelude::*;
use lifeline_core::recovery::{Action, Card, RevealKey, UncertainCommand};
use lifeline_protocol::PageToController;
use wasm_bindgen::{closure::Closure, JsCast};

use crate::host::{self, Ui};

thread_local! {
    /// Cards already revealed in this page: a repeated event with the same
    /// key never pulls the reader away from older messages.
    static REVEALED: RefCell<Vec<RevealKey>> = const { RefCell::new(Vec::new()) };
}

fn send(ui: Ui, message: PageToController) {
    if !host::request(message) {
        ui.refused
            .set(Some("Not sent: the controller is not running.".into()));
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
        card.get().map(|c| {
            let Card {
                summary,
                cause,
                details,
                report,
                actions,
                busy,
                history,
                ..
            } = c;
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
                        .map(|why| format!("{} is not possible now: {why}", a.action.label()))
                })
                .collect();
            let rows = report.rows.clone();
            let uncertain = report.uncertain_commands.clone();
            view! {
                <section class="recovery-card" role="region" aria-label="Recovery" node_ref=node>
                    <p class="recovery-summary">{summary}</p>
                    {busy.map(|b| view! { <p class="recovery-busy" role="status">{b}</p> })}
                    <div class="recovery-actions">
                        {offered
                            .into_iter()
                            .map(|action| {
                                let label = action.label();
                                view! {
                                    <Show
                                        when=move || confirming.get() == Some(action)
                                        fallback=move || {
                                            view! {
                                                <button
                                                    type="button"
                                                    on:click=move |_| {
                                                        if action.confirms() {
                                                            confirming.set(Some(action));
                                                        } else {
                                                            send(ui, PageToController::Recover { action });
                                                        }
                                                    }
                                                >
                                                    {label}
                                                </button>
                                            }
                                        }
                                    >
                                        <button
                                            type="button"
                                            class="danger"
                                            on:click=move |_| {
                                                confirming.set(None);
                                                send(ui, PageToController::Recover { action });
                                            }
                                        >
                                            {format!("Confirm {}", label.to_lowercase())}
                                        </button>
                                        <button type="button" on:click=move |_| confirming.set(None)>
                                            "Cancel"
                                        </button>
                                    </Show>
                                }
                            })
                            .collect_view()}
                    </div>
                    <table class="recovery-rows">
                        <caption>"What survived"</caption>
                        <tbody>
                            {rows
                                .into_iter()
                                .map(|r| {
                                    view! {
                                        <tr data-verdict=r.verdict.label()>
                                            <th scope="row">{r.dimension.label()}</th>
                                            <td>{r.verdict.label()}</td>
                                            <td class="evidence">{r.evidence}</td>
                                        </tr>
                                    }
                                })
                                .collect_view()}
                        </tbody>
                    </table>
                    {(!uncertain.is_empty())
                        .then(|| {
                            view! {
                                <ul class="recovery-uncertain" aria-label="Uncertain actions">
                                    {uncertain
                                        .into_iter()
                                        .map(|u| view! { <UncertainItem ui u /> })
                                        .collect_view()}
                                </ul>
                            }
                        })}
                    <button
                        type="button"
                        class="disclosure"
                        aria-expanded=move || if expanded.get() { "true" } else { "false" }
                        aria-controls="recovery-details"
                        on:click=move |_| expanded.update(|e| *e = !*e)
                    >
                        "Details"
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
                                    <p>"Earlier, separate failures:"</p>
                                    <ul>{history.into_iter().map(|h| view! { <li>{h}</li> }).collect_view()}</ul>
                                }
                            })}
                    </div>
                </section>
            }
        })
    }
}

/// One uncertain command: check it, then say what happened or run it again.
#[component]
fn UncertainItem(ui: Ui, u: UncertainCommand) -> impl IntoView {
    let command = u.command;
    let confirming = RwSignal::new(false);
    let state = match (u.verdict, u.reissued_as) {
        (Some(true), _) => Some("marked done"),
        (Some(false), _) => Some("marked not done"),
        (None, Some(_)) => Some("re-issued"),
        (None, None) => None,
    };
    let line = u.line.clone();
    view! {
        <li>
        <div role="group" aria-label=format!("Uncertain: {}", u.line)>
            <code>{u.line.clone()}</code>
            " "
            <span class="outcome">{u.outcome.label()}</span>
            {match state {
                Some(s) => view! { <span class="verdict">{format!(" — {s}")}</span> }.into_any(),
                None => view! {
                    <span class="uncertain-actions">
                        <button
                            type="button"
                            on:click=move |_| {
                                // Verify: the command's own evidence and the
                                // workspace, side by side.
                                let name = format!("Command: {line}");
                                if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
                                    if let Ok(Some(el)) = doc.query_selector(&format!(
                                        "[aria-label=\"{}\"]",
                                        name.replace('\\', "\\\\").replace('"', "\\\"")
                                    )) {
                                        el.scroll_into_view();
                                    }
                                }
                                send(ui, PageToController::Recover { action: Action::InspectWorkspace });
                            }
                        >
                            "Verify"
                        </button>
                        <button type="button" on:click=move |_| send(ui, PageToController::CommandVerdict { command, done: true })>
                            "Mark done"
                        </button>
                        <button type="button" on:click=move |_| send(ui, PageToController::CommandVerdict { command, done: false })>
                            "Mark not done"
                        </button>
                        <Show
                            when=move || confirming.get()
                            fallback=move || view! {
                                <button type="button" on:click=move |_| confirming.set(true)>"Re-issue"</button>
                            }
                        >
                            <button
                                type="button"
                                class="danger"
                                on:click=move |_| {
                                    confirming.set(false);
                                    send(ui, PageToController::Reissue { command });
                                }
                            >
                                "Confirm re-issue"
                            </button>
                            <button type="button" on:click=move |_| confirming.set(false)>"Cancel"</button>
                        </Show>
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
        ui.workspace.get().map(|listing| {
            let file = listing.file.clone();
            view! {
                <section class="workspace" role="region" aria-label="Workspace">
                    <p class="read-only">"Read-only: the agent is stopped"</p>
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
                                                on:click=move |_| send(ui, PageToController::ReadWorkspaceFile { path: p.clone() })
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
                    {listing.truncated.then(|| view! { <p>"Only the first entries are listed."</p> })}
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
                    <button type="button" on:click=move |_| send(ui, PageToController::CloseWorkspace)>
                        "Close workspace"
                    </button>
                </section>
            }
        })
    }
}
