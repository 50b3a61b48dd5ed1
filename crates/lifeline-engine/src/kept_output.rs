//! A command's kept output, read back for the page: a range of it for the
//! full-output view, or all of it to download. The engine plans which
//! stored pieces a read needs ([`StoredOutput`]); the shell reads the
//! artifacts and hands them back; the engine cuts the answer.

use lifeline_core::event::EventRecord;
use lifeline_core::phrase::Phrase;
use lifeline_core::render::mark_output;
use lifeline_core::stored_output::{whole_chars, Slice, StoredOutput, MAX_RANGE_BYTES};
use lifeline_core::{CommandId, Digest};
use lifeline_protocol::{ControllerToPage, Level};

use crate::effect::{Effect, KeptRead};
use crate::Engine;

const KEY: &str = "output";

/// Events asked of the journal at once for a kept head
/// ([`Effect::ReadKeptHead`]). The head is in a command's first events, so
/// a read stops as soon as they hold all of it: its cost follows the size
/// of the head, not the length of the command's output (a command that
/// ran for an hour has tens of thousands of events, and each page of View
/// full output read them all).
pub const HEAD_READ_EVENTS: usize = 256;

impl Engine {
    /// The page asked for kept bytes of `command` (a range, or all of it).
    /// A range at offset `u64::MAX` is the last `len` kept bytes (the tail
    /// shown under a long output's head).
    pub fn handle_read_kept(&mut self, command: CommandId, read: KeptRead) {
        let stored = self.projection().and_then(|p| StoredOutput::of(p, command));
        let in_journal = stored.is_none()
            && self
                .projection()
                .is_some_and(|p| StoredOutput::head_in_journal(p, command));
        if in_journal {
            return self.effects.push_back(Effect::ReadKeptHead {
                command,
                read,
                got: Vec::new(),
            });
        }
        self.plan_kept(command, read, stored);
    }

    /// The next of `command`'s events the journal gave back for an
    /// [`Effect::ReadKeptHead`] (`Err`: they could not be read), after
    /// those already `got`: up to [`HEAD_READ_EVENTS`], none past its last.
    /// (A short answer is not the end: the store leaves out a value that
    /// does not read.)
    pub fn handle_kept_head_read(
        &mut self,
        command: CommandId,
        read: KeptRead,
        mut got: Vec<EventRecord>,
        next: Result<Vec<EventRecord>, ()>,
    ) {
        let Ok(next) = next else {
            return self.plan_kept(command, read, None);
        };
        let last = next.is_empty();
        got.extend(next);
        let stored = self
            .projection()
            .and_then(|p| StoredOutput::with_head(p, command, &got));
        if stored.is_some() || last {
            return self.plan_kept(command, read, stored);
        }
        self.effects
            .push_back(Effect::ReadKeptHead { command, read, got });
    }

    fn plan_kept(&mut self, command: CommandId, read: KeptRead, stored: Option<StoredOutput>) {
        let Some(stored) = stored else {
            return self.notice(KEY, Level::Warning, Phrase::OutputUnavailable);
        };
        let read = match read {
            KeptRead::Range {
                offset: u64::MAX,
                len,
            } => KeptRead::Range {
                offset: stored.kept().saturating_sub(len.min(MAX_RANGE_BYTES)),
                len,
            },
            read => read,
        };
        let plan = match read {
            KeptRead::Range { offset, len } => stored.plan(offset, len.min(MAX_RANGE_BYTES)),
            KeptRead::Download => stored.plan(0, u64::MAX),
        };
        let digests = StoredOutput::digests(&plan);
        self.effects.push_back(Effect::ReadArtifacts {
            command,
            read,
            stored: Box::new(stored),
            plan,
            digests,
        });
    }

    /// The artifacts the shell read for a [`Effect::ReadArtifacts`]: each
    /// requested digest with its content, `None` when the store had none.
    pub fn handle_artifacts_read(
        &mut self,
        command: CommandId,
        read: KeptRead,
        stored: &StoredOutput,
        plan: &[Slice],
        artifacts: &[(Digest, Option<String>)],
    ) {
        let bytes = match stored.assemble(plan, artifacts) {
            Ok(bytes) => bytes,
            Err(missing) => {
                let missing = u32::try_from(missing).unwrap_or(u32::MAX);
                return self.notice(KEY, Level::Error, Phrase::OutputMissing { missing });
            }
        };
        match read {
            KeptRead::Range { offset, .. } => {
                // The page asks for the next range at `end`: the marked
                // text's length says nothing about the bytes it came from.
                let (skip, end, text) = whole_chars(&bytes);
                self.post(ControllerToPage::OutputRange {
                    command,
                    offset: offset.saturating_add(skip as u64),
                    end: offset.saturating_add(end as u64),
                    kept: stored.kept(),
                    dropped: stored.dropped,
                    text: mark_output(&text),
                })
            }
            KeptRead::Download => {
                let session = self.projection().and_then(|p| p.session_of(command));
                let Some(session) = session else {
                    return self.notice(KEY, Level::Warning, Phrase::OutputUnavailable);
                };
                self.effects.push_back(Effect::SaveOutput {
                    session,
                    file_name: format!("output-{command}.txt"),
                    bytes,
                })
            }
        }
    }
}
