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
            return self
                .effects
                .push_back(Effect::ReadKeptHead { command, read });
        }
        self.plan_kept(command, read, stored);
    }

    /// `command`'s events as the journal gave them back for an
    /// [`Effect::ReadKeptHead`] (`Err`: they could not be read).
    pub fn handle_kept_head_read(
        &mut self,
        command: CommandId,
        read: KeptRead,
        events: Result<Vec<EventRecord>, ()>,
    ) {
        let stored = match (events, self.projection()) {
            (Ok(events), Some(p)) => StoredOutput::with_head(p, command, &events),
            _ => None,
        };
        self.plan_kept(command, read, stored);
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
