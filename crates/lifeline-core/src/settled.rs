//! [`SettledCommand`]: what the projection keeps of a command that settled
//! for good and left the recent window.
//!
//! A settled command runs no more (its terminal event and a certain
//! outcome are recorded) and, once its turn has ended, no agent reads it:
//! it is shown (its block in the transcript, its output read from the
//! journal), named (by its key, by a runtime resending its events, by a
//! recovery record or a re-issue) and deleted with its session. This is
//! what those need, about a third of the whole view (600 of 2,000 bytes in
//! the recovery bench): its binding, outcome history, exposure and terminal
//! event stay in the journal. Keeping settled commands this small keeps the
//! snapshot, and so every start, from growing with the history at the rate
//! it did.
//!
//! Architecture Invariant: a command is in `Projection::settled` or in
//! `Projection::commands`, never both; it moves to `settled` only with a
//! terminal event, a certain terminal outcome, its turn ended and its
//! session no model conversation (whose tool results go into every later
//! provider request), and never moves back.

use lifeline_decode::Decode;
use lifeline_encode::Encode;
use std::fmt::Display;

use serde::{Deserialize, Serialize};

use crate::command::Binding;
use crate::event::{ArtifactPlacement, OutputSummary};
use crate::id::{
    CommandId, Digest, ErrorStamp, EventSeq, Generation, IdempotencyKey, Millis, RuntimeId,
    SessionId,
};
use crate::outcome::Outcome;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct SettledCommand {
    pub command: CommandId,
    pub key: IdempotencyKey,
    pub session: SessionId,
    pub runtime: RuntimeId,
    pub generation: Generation,
    pub line: String,
    /// Of the binding's encoding: a repeated admission under the same key
    /// is told from a different one without keeping the binding.
    pub binding: Digest,
    pub admitted_at: Millis,
    pub admitted_position: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Millis>,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The terminal event's sequence number and digest: a runtime that
    /// sends it again is told durable, one that sends something else under
    /// it is a conflict.
    pub last_seq: EventSeq,
    pub terminal: Digest,
    #[serde(default, skip_serializing_if = "is_default")]
    pub stdout: OutputSummary,
    #[serde(default, skip_serializing_if = "is_default")]
    pub stderr: OutputSummary,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<ErrorStamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reissue_of: Option<CommandId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reissued_as: Option<CommandId>,
}

impl SettledCommand {
    /// Its last output event; the terminal event follows it.
    pub fn through(&self) -> EventSeq {
        EventSeq(self.last_seq.0.saturating_sub(1))
    }

    /// Whether `binding` is the one this command was admitted with.
    pub fn bound_to(&self, binding: &Binding) -> bool {
        binding_digest(binding) == self.binding
    }
}

pub(crate) fn binding_digest(binding: &Binding) -> Digest {
    // A binding always encodes (strings, numbers and sets of strings).
    Digest::of(&lifeline_encode::to_vec(binding))
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// Settled commands in a snapshot, one text each (since snapshot version
/// 4): the browser's decoder pays per JSON value, and a settled command
/// written as an object was about eighteen of them, half the values of a
/// long history's snapshot (989 of its commands at 100k events) and so
/// half of what its start spent decoding. A text is one value, read by
/// [`SettledCommand::from_line`]. Versions 1 to 3 wrote a map of objects
/// under another name, which still reads (`Projection::settled_before_v4`).
pub(crate) mod lines {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    use super::SettledCommand;
    use crate::flat::FlatMap;
    use crate::id::CommandId;

    pub fn serialize<S: Serializer>(
        map: &FlatMap<CommandId, SettledCommand>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(map.values().map(SettledCommand::to_line))
    }

    pub fn encode(map: &FlatMap<CommandId, SettledCommand>, w: &mut lifeline_encode::Writer) {
        lifeline_encode::seq(w, map.values().map(SettledCommand::to_line));
    }

    /// Through a list of texts, which every decoder already reads, and one
    /// reader that is not generic: a visitor of its own would be compiled
    /// once per decoder.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<FlatMap<CommandId, SettledCommand>, D::Error> {
        let mut map = FlatMap::new();
        for line in Vec::<String>::deserialize(d)? {
            add(&mut map, &line).map_err(D::Error::custom)?;
        }
        Ok(map)
    }

    /// Each text is read where the snapshot's text holds it: at a million
    /// events these are most of a 4.1 MB snapshot, and a copy of all of
    /// them would be held until the last was read.
    pub fn decode(
        json: lifeline_decode::Json<'_>,
    ) -> Result<FlatMap<CommandId, SettledCommand>, lifeline_decode::Error> {
        let mut map = FlatMap::new();
        for line in lifeline_decode::texts(json)? {
            add(&mut map, &line?).map_err(lifeline_decode::Error::invalid)?;
        }
        Ok(map)
    }

    fn add(map: &mut FlatMap<CommandId, SettledCommand>, line: &str) -> Result<(), String> {
        let c = SettledCommand::from_line(line)?;
        match map.insert(c.command, c) {
            Some(_) => Err("a settled command written twice".to_string()),
            None => Ok(()),
        }
    }
}

/// The marks of [`SettledCommand::to_line`]: fields are separated by a
/// space (no field but the last, the command line, holds one), an absent
/// one is a dash.
const NONE: &str = "-";

impl SettledCommand {
    /// Every field but the command line, then the line, which may hold
    /// anything: `from_line` takes the rest of the text for it. The fields
    /// that allocate come last, so a damaged text is mostly refused before
    /// anything was allocated (less code to undo in the reader).
    pub(crate) fn to_line(&self) -> String {
        let mut out = Line(String::with_capacity(256 + self.line.len()), ' ');
        out.put(&self.command);
        out.put(&self.key);
        out.put(&self.session);
        out.put(&self.runtime);
        out.put(&self.generation.0);
        out.put(&self.binding);
        out.put(&self.admitted_at.0);
        out.put(&self.admitted_position);
        out.opt(self.finished_at.as_ref().map(|m| &m.0 as &dyn Display));
        out.put(&self.outcome.as_str());
        out.opt(self.exit_code.as_ref().map(|c| c as &dyn Display));
        out.put(&self.last_seq.0);
        out.put(&self.terminal);
        out.opt(self.reissue_of.as_ref().map(|c| c as &dyn Display));
        out.opt(self.reissued_as.as_ref().map(|c| c as &dyn Display));
        out.put(&summary_text(&self.stdout));
        out.put(&summary_text(&self.stderr));
        if self.evidence.is_empty() {
            out.put(&NONE);
        } else {
            let mut stamps = Line(String::new(), ',');
            for stamp in &self.evidence {
                stamps.put(stamp);
            }
            out.put(&stamps.done());
        }
        out.0.push_str(&self.line);
        out.0
    }

    /// Reads [`SettledCommand::to_line`]'s text. The error never quotes
    /// it (it holds a command line). One small reader for every field
    /// rather than a parser per field type: the controller's wasm has a
    /// budget.
    pub(crate) fn from_line(text: &str) -> Result<SettledCommand, String> {
        const FIELDS: usize = 19;
        Self::from_fields(&mut Fields(text.splitn(FIELDS, ' ')))
            .ok_or_else(|| "a settled command's text is cut short or does not read".to_string())
    }

    fn from_fields(f: &mut Fields<'_>) -> Option<SettledCommand> {
        Some(SettledCommand {
            command: CommandId::from_u128(f.id()?).ok()?,
            key: IdempotencyKey::from_u128(f.id()?).ok()?,
            session: SessionId::from_u128(f.id()?).ok()?,
            runtime: RuntimeId::from_u128(f.id()?).ok()?,
            generation: Generation(f.num()?),
            binding: f.digest()?,
            admitted_at: Millis(f.num()?),
            admitted_position: f.num()?,
            finished_at: f.opt_num()?.map(Millis),
            outcome: {
                let text = f.next()?;
                Outcome::ALL.into_iter().find(|o| o.as_str() == text)?
            },
            exit_code: match f.next()? {
                NONE => None,
                code => Some(code.parse().ok()?),
            },
            last_seq: EventSeq(f.num()?),
            terminal: f.digest()?,
            reissue_of: f.opt_command()?,
            reissued_as: f.opt_command()?,
            stdout: summary_from(f.next()?)?,
            stderr: summary_from(f.next()?)?,
            evidence: match f.next()? {
                NONE => Vec::new(),
                list => {
                    let mut stamps = Fields(list.splitn(usize::MAX, ','));
                    let mut evidence = Vec::new();
                    while let Some(stamp) = stamps.opt_id()? {
                        evidence.push(ErrorStamp::from_u128(stamp).ok()?);
                    }
                    evidence
                }
            },
            line: f.next()?.to_string(),
        })
    }
}

/// The fields of a text, read one after another; `None` when one is
/// missing or does not read. Not generic and not inlined, so that each
/// kind of field is read by one function.
struct Fields<'a>(std::str::SplitN<'a, char>);

impl<'a> Fields<'a> {
    #[inline(never)]
    fn next(&mut self) -> Option<&'a str> {
        self.0.next()
    }

    #[inline(never)]
    fn num(&mut self) -> Option<u64> {
        self.next()?.parse().ok()
    }

    #[inline(never)]
    fn opt_num(&mut self) -> Option<Option<u64>> {
        match self.next()? {
            NONE => Some(None),
            text => text.parse().ok().map(Some),
        }
    }

    #[inline(never)]
    fn id(&mut self) -> Option<u128> {
        crate::id::decode_ulid("", self.next()?).ok()
    }

    /// The next identity, or `Some(None)` when there are no more fields.
    fn opt_id(&mut self) -> Option<Option<u128>> {
        match self.next() {
            None => Some(None),
            Some(text) => crate::id::decode_ulid("", text).ok().map(Some),
        }
    }

    #[inline(never)]
    fn digest(&mut self) -> Option<Digest> {
        self.next()?.parse().ok()
    }

    fn opt_command(&mut self) -> Option<Option<CommandId>> {
        match self.next()? {
            NONE => Some(None),
            text => Some(Some(
                CommandId::from_u128(crate::id::decode_ulid("", text).ok()?).ok()?,
            )),
        }
    }
}

/// An output summary as one field: `total/inline/truncated at/dropped/
/// dropped from/artifacts` (artifacts `offset:len:digest`, comma
/// separated; an absent part a dash), or a dash for no output.
fn summary_text(s: &OutputSummary) -> String {
    if *s == OutputSummary::default() {
        return NONE.to_string();
    }
    let mut out = Line(String::new(), '/');
    out.put(&s.total_bytes);
    out.put(&s.inline_bytes);
    out.opt(s.truncated_at.as_ref().map(|v| v as &dyn Display));
    out.put(&s.dropped_bytes);
    out.opt(s.dropped_from.as_ref().map(|v| v as &dyn Display));
    if s.artifacts.is_empty() {
        out.put(&NONE);
    } else {
        let mut list = Line(String::new(), ',');
        for a in &s.artifacts {
            let mut one = Line(String::new(), ':');
            one.put(&a.offset);
            one.put(&a.len);
            one.put(&a.digest);
            list.put(&one.done());
        }
        out.put(&list.done());
    }
    out.done()
}

/// Fields written one after another, each followed by the separator;
/// [`Line::done`] drops the last one. Not generic and not inlined, so each
/// field costs a call.
struct Line(String, char);

impl Line {
    #[inline(never)]
    fn put(&mut self, value: &dyn Display) {
        use std::fmt::Write;
        let _ = write!(self.0, "{value}{}", self.1);
    }

    fn opt(&mut self, value: Option<&dyn Display>) {
        self.put(value.unwrap_or(&NONE));
    }

    fn done(mut self) -> String {
        self.0.pop();
        self.0
    }
}

fn summary_from(text: &str) -> Option<OutputSummary> {
    if text == NONE {
        return Some(OutputSummary::default());
    }
    let mut f = Fields(text.splitn(6, '/'));
    let total_bytes = f.num()?;
    let inline_bytes = f.num()?;
    let truncated_at = f.opt_num()?;
    let dropped_bytes = f.num()?;
    let dropped_from = f.opt_num()?;
    let mut artifacts = Vec::new();
    let list = f.next()?;
    if list != NONE {
        for a in list.split(',') {
            let mut p = Fields(a.splitn(3, ':'));
            artifacts.push(ArtifactPlacement {
                offset: p.num()?,
                len: p.num()?,
                digest: p.digest()?,
            });
        }
    }
    Some(OutputSummary {
        total_bytes,
        inline_bytes,
        truncated_at,
        artifacts,
        dropped_bytes,
        dropped_from,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::Generation;

    fn every_field(line: &str) -> SettledCommand {
        let digest = |n: u8| Digest::of(&[n]);
        let summary = OutputSummary {
            total_bytes: 300_000,
            inline_bytes: 65_536,
            truncated_at: Some(65_536),
            artifacts: vec![
                ArtifactPlacement {
                    offset: 65_536,
                    digest: digest(1),
                    len: 100_000,
                },
                ArtifactPlacement {
                    offset: 165_536,
                    digest: digest(2),
                    len: 34_464,
                },
            ],
            dropped_bytes: 100_000,
            dropped_from: Some(200_000),
        };
        SettledCommand {
            command: CommandId::from_u128(0x1000_0000 + 1).unwrap(),
            key: IdempotencyKey::from_u128(0x1000_0000 + 2).unwrap(),
            session: SessionId::from_u128(0x1000_0000 + 3).unwrap(),
            runtime: RuntimeId::from_u128(0x1000_0000 + 4).unwrap(),
            generation: Generation(7),
            line: line.to_string(),
            binding: digest(3),
            admitted_at: Millis(1_700_000_000_000),
            admitted_position: 42,
            finished_at: Some(Millis(1_700_000_000_500)),
            outcome: Outcome::Failed,
            exit_code: Some(-1),
            last_seq: EventSeq(9),
            terminal: digest(4),
            stdout: summary,
            stderr: OutputSummary {
                total_bytes: 3,
                inline_bytes: 3,
                ..OutputSummary::default()
            },
            evidence: vec![
                ErrorStamp::from_u128(0x1000_0000 + 5).unwrap(),
                ErrorStamp::from_u128(0x1000_0000 + 6).unwrap(),
            ],
            reissue_of: Some(CommandId::from_u128(0x1000_0000 + 7).unwrap()),
            reissued_as: Some(CommandId::from_u128(0x1000_0000 + 8).unwrap()),
        }
    }

    #[test]
    fn a_settled_command_reads_back_from_its_text_whatever_its_line_holds() {
        for line in [
            "echo hi",
            "",
            "-",
            "  two  spaces / and - dashes, commas: colons ",
            "printf 'a\\nb' | grep -c \"ä€😀\"",
        ] {
            let c = every_field(line);
            assert_eq!(SettledCommand::from_line(&c.to_line()), Ok(c.clone()));
            let bare = SettledCommand {
                finished_at: None,
                exit_code: None,
                stdout: OutputSummary::default(),
                stderr: OutputSummary::default(),
                evidence: Vec::new(),
                reissue_of: None,
                reissued_as: None,
                ..c
            };
            assert_eq!(SettledCommand::from_line(&bare.to_line()), Ok(bare));
        }
    }

    #[test]
    fn a_damaged_text_is_refused_without_quoting_it() {
        let text = every_field("cat secret-file").to_line();
        let fields: Vec<&str> = text.splitn(19, ' ').collect();
        for i in 0..18 {
            let mut broken = fields.clone();
            broken[i] = "x";
            let error = SettledCommand::from_line(&broken.join(" ")).unwrap_err();
            assert!(!error.contains("secret"), "{error}");
        }
        let short = fields[..10].join(" ");
        assert!(SettledCommand::from_line(&short)
            .unwrap_err()
            .contains("cut short"));
        assert!(SettledCommand::from_line("").is_err());
    }
}
