//! The evidence the page holds: the imported run shown read-only in place
//! of the live transcript, and whether an export or import is under way.
//! State only; the IO is in [`crate::io`] and the controls in
//! [`crate::export`].

use crate::worded::ViewDelta;
use leptos::prelude::*;
use lifeline_core::view::{ProviderRequestStatus, Stream};
use lifeline_core::{CommandId, Outcome, SessionId, TurnId, TurnStatus};

/// One block of an imported transcript, in order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Block {
    Turn {
        turn: TurnId,
        prompt: String,
        status: Option<TurnStatus>,
        reply: Option<String>,
        /// The core's ending, worded in place of `reply`.
        ending: Option<String>,
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
    pub(crate) file_name: String,
    pub(crate) session: Option<SessionId>,
    pub(crate) title: String,
    pub(crate) blocks: Vec<Block>,
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
                ending,
                ..
            } => {
                let block = Block::Turn {
                    turn,
                    prompt,
                    status,
                    reply,
                    ending,
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
                failure: failure.map(|f| {
                    let (label, advice) = crate::i18n::provider_failure(f.class);
                    let (label, advice) = (crate::i18n::tr(label), crate::i18n::tr(advice));
                    format!("{label}: {} {advice}", f.message)
                }),
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
pub(crate) struct Signals {
    /// The imported run being shown instead of the live session.
    pub(crate) imported: RwSignal<Option<ImportedRun>>,
    pub(crate) busy: RwSignal<bool>,
}

thread_local! {
    static SIGNALS: Signals = Signals {
        imported: RwSignal::new(None),
        busy: RwSignal::new(false),
    };
}

pub(crate) fn signals() -> Signals {
    SIGNALS.with(|s| *s)
}

/// An export or import the controller carried ended without a file or a
/// run to show (it failed, or its code could not be loaded).
pub fn ended() {
    signals().busy.set(false);
}

/// An imported run is shown (tracked): the live transcript is hidden and
/// Send is off.
pub fn importing() -> bool {
    signals().imported.with(Option::is_some)
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
