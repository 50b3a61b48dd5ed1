//! Evidence export (a download) and import (a read-only view), docs/export.md.
//!
//! Export: the controller answers `ExportReady` and then posts the archive
//! as a transferred `ArrayBuffer`; the page saves it with an `<a download>`
//! on an object URL and revokes the URL afterwards. Import: the chosen file
//! goes to the controller the same way (`Import`, then the buffer); the
//! transcript it sends back is shown here, read-only, in place of the live
//! one (which stays mounted, hidden, and keeps updating).

use std::cell::RefCell;

use js_sys::{Array, ArrayBuffer};
use leptos::prelude::*;
use lifeline_core::view::{ProviderRequestStatus, Stream};
use lifeline_core::{CommandId, Outcome, SessionId, TurnId, TurnStatus, ViewDelta};
use lifeline_protocol::PageToController;
use wasm_bindgen::{prelude::*, JsCast};
use wasm_bindgen_futures::{spawn_local, JsFuture};

use crate::host::{self, Ui};
use crate::i18n::{self, t, text, tf_in, Locale, Msg};

/// One block of an imported transcript, in order.
#[derive(Clone, Debug, PartialEq)]
enum Block {
    Turn {
        turn: TurnId,
        prompt: String,
        status: Option<TurnStatus>,
        reply: Option<String>,
    },
    Command {
        command: CommandId,
        line: String,
        outcome: Outcome,
        exit_code: Option<i32>,
        evidence: Option<String>,
        output: String,
        not_shown: u64,
    },
    Request {
        status: ProviderRequestStatus,
        text: Option<String>,
        tools: Vec<String>,
        failure: Option<String>,
    },
}

/// An imported run as shown.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ImportedRun {
    file_name: String,
    session: Option<SessionId>,
    title: String,
    blocks: Vec<Block>,
}

impl ImportedRun {
    fn apply(&mut self, delta: ViewDelta) {
        match delta {
            ViewDelta::Session { title, .. } => self.title = title,
            ViewDelta::Turn {
                turn,
                prompt,
                status,
                reply,
                ..
            } => {
                let block = Block::Turn {
                    turn,
                    prompt,
                    status,
                    reply,
                };
                match self
                    .blocks
                    .iter_mut()
                    .find(|b| matches!(b, Block::Turn { turn: t, .. } if *t == turn))
                {
                    Some(b) => *b = block,
                    None => self.blocks.push(block),
                }
            }
            ViewDelta::Command {
                command,
                line,
                outcome,
                exit_code,
                evidence,
                ..
            } => {
                if let Some(Block::Command {
                    line: l,
                    outcome: o,
                    exit_code: x,
                    evidence: e,
                    ..
                }) = self.command(command)
                {
                    (*l, *o, *x, *e) = (line, outcome, exit_code, evidence);
                } else {
                    self.blocks.push(Block::Command {
                        command,
                        line,
                        outcome,
                        exit_code,
                        evidence,
                        output: String::new(),
                        not_shown: 0,
                    });
                }
            }
            ViewDelta::Output {
                command,
                text,
                not_shown: n,
                stream,
                ..
            } => {
                if let Some(Block::Command {
                    output, not_shown, ..
                }) = self.command(command)
                {
                    if stream == Stream::Stderr && !text.is_empty() && !output.ends_with('\n') {
                        output.push('\n');
                    }
                    output.push_str(&text);
                    *not_shown += n;
                }
            }
            ViewDelta::Settled {
                command,
                stdout,
                stderr,
                not_shown: n,
                ..
            } => {
                if let Some(Block::Command {
                    output, not_shown, ..
                }) = self.command(command)
                {
                    *output = stdout + &stderr;
                    *not_shown = n;
                }
            }
            ViewDelta::Gap { .. } => {}
            ViewDelta::ProviderRequest {
                status,
                text,
                tool_calls,
                failure,
                ..
            } => self.blocks.push(Block::Request {
                status,
                text,
                tools: tool_calls,
                failure: failure.map(|f| format!("{}: {} {}", f.label, f.message, f.advice)),
            }),
        }
    }

    fn command(&mut self, command: CommandId) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .find(|b| matches!(b, Block::Command { command: c, .. } if *c == command))
    }
}

#[derive(Clone, Copy)]
struct Signals {
    /// The imported run being shown instead of the live session.
    imported: RwSignal<Option<ImportedRun>>,
    busy: RwSignal<bool>,
}

thread_local! {
    static SIGNALS: Signals = Signals {
        imported: RwSignal::new(None),
        busy: RwSignal::new(false),
    };
    /// The `ExportReady` whose archive is the next binary message.
    static DOWNLOAD: RefCell<Option<(String, u64)>> = const { RefCell::new(None) };
}

fn signals() -> Signals {
    SIGNALS.with(|s| *s)
}

/// An imported run is shown (tracked): the live transcript is hidden and
/// Send is off.
pub fn importing() -> bool {
    signals().imported.with(Option::is_some)
}

pub fn expect_download(_session: SessionId, file_name: String, bytes: u64) {
    DOWNLOAD.with(|d| *d.borrow_mut() = Some((file_name, bytes)));
}

/// The controller died: an export or import it was carrying ended with
/// it, and the controls are free again.
pub fn controller_gone() {
    signals().busy.set(false);
    DOWNLOAD.with(|d| d.borrow_mut().take());
}

/// A binary message from the controller: the archive `ExportReady` announced.
pub fn received_buffer(buffer: ArrayBuffer) {
    signals().busy.set(false);
    let Some((file_name, bytes)) = DOWNLOAD.with(|d| d.borrow_mut().take()) else {
        return;
    };
    if buffer.byte_length() as u64 != bytes {
        return host::page_notice(
            "export",
            i18n::now_f(
                Msg::ExportShort,
                &[&buffer.byte_length().to_string(), &bytes.to_string()],
            ),
        );
    }
    if let Err(e) = save(&buffer, &file_name) {
        host::page_notice(
            "export",
            i18n::now_f(Msg::CouldNotSave, &[&file_name, &host::describe(&e)]),
        );
    }
}

fn save(buffer: &ArrayBuffer, file_name: &str) -> Result<(), JsValue> {
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("application/x-tar");
    let blob =
        web_sys::Blob::new_with_buffer_source_sequence_and_options(&Array::of1(buffer), &options)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let document = document();
    let a: web_sys::HtmlAnchorElement = document.create_element("a")?.unchecked_into();
    a.set_href(&url);
    a.set_download(file_name);
    a.set_hidden(true);
    document.body().ok_or("no body")?.append_child(&a)?;
    a.click();
    a.remove();
    // The download has its own reference by now; free ours a little later.
    let revoke = Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    window()
        .set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 10_000)?;
    Ok(())
}

pub fn imported(
    file_name: String,
    session: SessionId,
    title: String,
    reset: bool,
    deltas: Vec<ViewDelta>,
) {
    signals().busy.set(false);
    signals().imported.update(|run| {
        let run = match run {
            Some(r) if !reset => r,
            _ => run.insert(ImportedRun::default()),
        };
        run.file_name = file_name;
        run.session = Some(session);
        run.title = title;
        for delta in deltas {
            run.apply(delta);
        }
    });
}

fn export(ui: Ui) {
    let Some(session) = ui
        .status
        .with_untracked(|s| s.as_ref().and_then(|s| s.session))
    else {
        return host::page_notice("export", i18n::now(Msg::NothingToExport).into());
    };
    if host::send_with_buffer(PageToController::Export { session }, None) {
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
                if !host::send_with_buffer(message, Some(buffer)) {
                    signals().busy.set(false);
                }
            }
            Err(e) => {
                signals().busy.set(false);
                host::page_notice(
                    "export",
                    i18n::now_f(Msg::CouldNotRead, &[&name, &host::describe(&e)]),
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
            <button type="button" disabled=move || !can_export() on:click=move |_| export(ui)>
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
        let l = i18n::locale();
        s.imported.get().map(|run| {
            let blocks = run.blocks.into_iter().map(|b| block(l, b)).collect_view();
            view! {
                <div class="transcript imported" role="log" aria-label=t(l, Msg::Transcript) tabindex="0">
                    <div class="import-banner" role="region" aria-label=t(l, Msg::ImportedEvidence)>
                        <p>
                            <strong>{t(l, Msg::ImportedReadOnly)}</strong>
                            {tf_in(l, Msg::ImportedFrom, &[&run.title, &run.file_name])}
                        </p>
                        <button type="button" on:click=move |_| s.imported.set(None)>
                            {t(l, Msg::BackToSession)}
                        </button>
                    </div>
                    {blocks}
                </div>
            }
        })
    }
}

fn block(l: Locale, b: Block) -> AnyView {
    match b {
        Block::Turn {
            prompt,
            status,
            reply,
            ..
        } => view! {
            <div class="turn">
                <div class="prompt">
                    <p class="who">{t(l, Msg::You)}</p>
                    <p class="prompt-text">{prompt}</p>
                </div>
                {reply.map(|r| {
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
