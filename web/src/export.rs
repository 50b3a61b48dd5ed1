//! Evidence export (a download) and import (a read-only view), docs/export.md:
//! the controls in the details pane and the imported run where the live
//! transcript was. The chosen file goes to the controller (`Import`, then
//! the buffer as a transferred message); the transcript it sends back is
//! shown read-only in place of the live one (which stays mounted, hidden,
//! and keeps updating). Saving an export is in [`crate::io`].

use js_sys::ArrayBuffer;
use leptos::prelude::*;
use lifeline_protocol::PageToController;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use crate::evidence::{signals, Block, ImportedRun, Signals};
use crate::i18n::{self, t, text, tf_in, Locale, Msg};
use crate::io;
use crate::ui::{handler, Ui};

fn export(ui: Ui) {
    let Some(session) = ui
        .status
        .with_untracked(|s| s.as_ref().and_then(|s| s.session))
    else {
        return io::page_notice("export", i18n::now(Msg::NothingToExport).into());
    };
    if io::send_with_buffer(PageToController::Export { session }, None) {
        signals().busy.set(true);
    }
}

fn import(input: web_sys::HtmlInputElement) {
    let Some(file) = input.files().and_then(|f| f.get(0)) else {
        return;
    };
    input.set_value("");
    signals().busy.set(true);
    spawn_local(async move {
        let name = file.name();
        match JsFuture::from(file.array_buffer()).await {
            Ok(buffer) => {
                let buffer: ArrayBuffer = buffer.unchecked_into();
                let message = PageToController::Import {
                    file_name: name,
                    bytes: buffer.byte_length() as u64,
                };
                if !io::send_with_buffer(message, Some(buffer)) {
                    signals().busy.set(false);
                }
            }
            Err(e) => {
                signals().busy.set(false);
                io::page_notice(
                    "export",
                    i18n::now_f(Msg::CouldNotRead, &[&name, &io::describe(&e)]),
                );
            }
        }
    });
}

/// The two controls in the details pane.
#[component]
pub fn EvidenceControls(ui: Ui) -> impl IntoView {
    let s = signals();
    let can_export = move || {
        ui.status
            .with(|st| st.as_ref().is_some_and(|st| st.session.is_some()))
            && !s.busy.get()
    };
    view! {
        <section class="evidence" aria-label=text(Msg::Evidence)>
            <button type="button" disabled=move || !can_export() on:click=handler(move |_| export(ui))>
                {text(Msg::ExportEvidence)}
            </button>
            <label class="import">
                {text(Msg::ImportEvidence)}
                <input
                    type="file"
                    accept=".tar,.jsonl,application/x-tar"
                    on:change:target=move |event| import(event.target())
                />
            </label>
        </section>
    }
}

/// The imported run, read-only, where the live transcript was.
#[component]
pub fn ImportedView() -> impl IntoView {
    let s = signals();
    move || {
        s.imported
            .get()
            .map(|run| crate::lazy::shown(move || imported(run.clone(), s)))
    }
}

/// The imported run's view, in a module of its own ([`crate::lazy`]):
/// most visits never import one.
#[leptos::wasm_split::wasm_split(readonly, fallible, wasm_split_path = leptos::wasm_split)]
fn imported(run: ImportedRun, s: Signals) -> Result<AnyView, leptos::wasm_split::SplitLoaderError> {
    let l = i18n::locale();
    let blocks = run.blocks.into_iter().map(|b| block(l, b)).collect_view();
    Ok(view! {
        <div class="transcript imported" role="log" aria-label=t(l, Msg::Transcript) tabindex="0">
            <div class="import-banner" role="region" aria-label=t(l, Msg::ImportedEvidence)>
                <p>
                    <strong>{t(l, Msg::ImportedReadOnly)}</strong>
                    {tf_in(l, Msg::ImportedFrom, &[&run.title, &run.file_name])}
                </p>
                <button type="button" on:click=handler(move |_| s.imported.set(None))>
                    {t(l, Msg::BackToSession)}
                </button>
            </div>
            {blocks}
        </div>
    }
    .into_any())
}

fn block(l: Locale, b: Block) -> AnyView {
    match b {
        Block::Turn {
            prompt,
            status,
            reply,
            ending,
            ..
        } => view! {
            <div class="turn">
                <div class="prompt">
                    <p class="who">{t(l, Msg::You)}</p>
                    <p class="prompt-text">{prompt}</p>
                </div>
                {reply.map(|r| {
                    let r = ending.clone().unwrap_or(r);
                    let label = status.map_or("", |s| t(l, i18n::turn_status(s)));
                    let status = status.map_or("", |s| s.as_str());
                    view! {
                        <div class="reply" data-status=status>
                            <p class="who">{tf_in(l, Msg::AgentTurn, &[label])}</p>
                            <p class="reply-text">{r}</p>
                        </div>
                    }
                })}
            </div>
        }
        .into_any(),
        Block::Command {
            line,
            outcome,
            exit_code,
            evidence,
            output,
            not_shown,
            ..
        } => view! {
            <div class="command" role="group" aria-label=tf_in(l, Msg::CommandName, &[&line]) data-outcome=outcome.as_str()>
                <div class="command-head">
                    <code class="command-line">{line.clone()}</code>
                    <span class="outcome" data-outcome=outcome.as_str()>{t(l, i18n::outcome(outcome))}</span>
                    {exit_code.map(|code| view! { <span class="exit">{tf_in(l, Msg::Exit, &[&code.to_string()])}</span> })}
                </div>
                {evidence.map(|note| view! { <p class="evidence">{note}</p> })}
                {(not_shown > 0).then(|| view! {
                    <p class="note">{tf_in(l, Msg::ArchiveNotShown, &[&not_shown.to_string()])}</p>
                })}
                <pre class="output" tabindex="0">{output}</pre>
            </div>
        }
        .into_any(),
        Block::Request {
            status,
            text,
            tools,
            failure,
        } => view! {
            <div class="request" data-status=status.as_str()>
                <p class="who">{tf_in(l, Msg::ModelRequest, &[t(l, i18n::request_status(status))])}</p>
                {text.map(|t| view! { <p class="reply-text">{t}</p> })}
                {(!tools.is_empty()).then(|| view! { <p class="note">{tf_in(l, Msg::ToolsUsed, &[&tools.join(", ")])}</p> })}
                {failure.map(|f| view! { <p class="evidence">{f}</p> })}
            </div>
        }
        .into_any(),
    }
}
