//! Command events, terminal results, cursors and bounded output retention.
//!
//! The runtime numbers each command's events densely from 1. The controller
//! keeps a SHA-256 digest of every event it accepts so that a resent event can
//! be told apart from a conflicting one. Output is kept inline up to a bound;
//! the rest goes to content-addressed artifacts (deduplicated by digest) up
//! to the command's budget, and anything beyond is counted but dropped, so a
//! reader always knows where inline output stops and where the rest lives.

use lifeline_decode::Decode;
use lifeline_encode::Encode;
use serde::{Deserialize, Serialize};

use crate::id::{CommandId, Digest, EventSeq};
use crate::outcome::TerminalStatus;
use crate::schema::{check_text, limits, Schema, V1};

/// An event as the runtime sends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventBody {
    Stdout { data: String },
    Stderr { data: String },
    Tool { name: String, detail: String },
    Lifecycle { phase: String },
    Checkpoint { label: String },
    Terminal(TerminalResult),
}

impl EventBody {
    pub fn kind(&self) -> EventKind {
        match self {
            EventBody::Stdout { .. } => EventKind::Stdout,
            EventBody::Stderr { .. } => EventKind::Stderr,
            EventBody::Tool { .. } => EventKind::Tool,
            EventBody::Lifecycle { .. } => EventKind::Lifecycle,
            EventBody::Checkpoint { .. } => EventKind::Checkpoint,
            EventBody::Terminal(_) => EventKind::Terminal,
        }
    }

    /// Identity of the content, for telling a resend from a conflict.
    pub fn digest(&self) -> Digest {
        match self.output() {
            Some(text) => self.digest_of_output(&HashedText::new(text)),
            // Field order is fixed by the type, so this encoding is canonical.
            None => Digest::of(&lifeline_encode::to_vec(self)),
        }
    }

    /// An output event's text.
    pub fn output(&self) -> Option<&str> {
        match self {
            EventBody::Stdout { data } | EventBody::Stderr { data } => Some(data),
            _ => None,
        }
    }

    /// [`EventBody::digest`], given [`EventBody::output`] already hashed:
    /// an output event's is its stream and its text's SHA-256, hashed
    /// together. The artifact that holds the text is named by that same
    /// SHA-256, so 10 MB of output is hashed once, not once for the event
    /// and again for its artifact (docs/benchmarks.md, "Twenty-fourth
    /// stop").
    pub(crate) fn digest_of_output(&self, text: &HashedText<'_>) -> Digest {
        debug_assert_eq!(self.output(), Some(text.text));
        let stream: &[u8] = match self {
            EventBody::Stdout { .. } => b"stdout",
            EventBody::Stderr { .. } => b"stderr",
            _ => return self.digest(),
        };
        let mut framed = Vec::with_capacity(64);
        framed.extend_from_slice(b"lifeline output event\0");
        framed.extend_from_slice(stream);
        framed.push(0);
        framed.extend_from_slice(&text.digest.0);
        Digest::of(&framed)
    }

    pub fn validate(&self) -> Result<(), String> {
        match self {
            EventBody::Stdout { data } | EventBody::Stderr { data } => {
                if data.len() > limits::MAX_OUTPUT_CHUNK_BYTES {
                    return Err(format!(
                        "output chunk is {} bytes; the limit is {}",
                        data.len(),
                        limits::MAX_OUTPUT_CHUNK_BYTES
                    ));
                }
                Ok(())
            }
            EventBody::Tool { name, detail } => {
                check_text("tool name", name, limits::MAX_TEXT_BYTES)?;
                check_text("tool detail", detail, limits::MAX_TEXT_BYTES)
            }
            EventBody::Lifecycle { phase } => {
                check_text("lifecycle phase", phase, limits::MAX_TEXT_BYTES)
            }
            EventBody::Checkpoint { label } => {
                check_text("checkpoint label", label, limits::MAX_TEXT_BYTES)
            }
            EventBody::Terminal(t) => t.validate(),
        }
    }
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Stdout,
    Stderr,
    Tool,
    Lifecycle,
    Checkpoint,
    Terminal,
}

/// How a command ended, as the runtime reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct TerminalResult {
    pub v: V1,
    pub status: TerminalStatus,
    /// Process exit code, when there was a process to exit.
    pub exit_code: Option<i32>,
    /// Short human explanation ("killed after cancel"); empty when none.
    pub message: String,
}

impl Schema for TerminalResult {
    const NAME: &'static str = "terminal result";
    fn validate(&self) -> Result<(), String> {
        check_text("terminal message", &self.message, limits::MAX_TEXT_BYTES)
    }
}

/// Output text and its SHA-256, computed once for the event's digest and
/// its artifact's; made only by [`HashedText::new`].
pub struct HashedText<'a> {
    text: &'a str,
    digest: Digest,
}

impl<'a> HashedText<'a> {
    pub fn new(text: &'a str) -> HashedText<'a> {
        HashedText {
            text,
            digest: Digest::of(text.as_bytes()),
        }
    }
}

/// Where a span of output that is not inline is stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct ArtifactSpan {
    pub digest: Digest,
    pub len: u64,
}

/// Artifact content to write in the same transaction as the records naming it.
///
/// Its digest is its content's, by construction: it is made only by
/// [`ArtifactBlob::new`] or from a [`HashedText`] (each hashes the text
/// itself), and decoding one checks it. So
/// the journal's writer does not hash 10 MB of output a second time to
/// assert what the type already holds (a third of the controller's
/// SHA-256 time on a 10 MB `seq`, docs/benchmarks.md, "Twenty-fourth
/// stop").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode)]
pub struct ArtifactBlob {
    digest: Digest,
    data: String,
}

impl ArtifactBlob {
    pub fn new(data: String) -> ArtifactBlob {
        ArtifactBlob {
            digest: Digest::of(data.as_bytes()),
            data,
        }
    }

    pub fn digest(&self) -> Digest {
        self.digest
    }

    pub fn data(&self) -> &str {
        &self.data
    }

    pub fn into_data(self) -> String {
        self.data
    }

    /// A blob read back whole: refused unless its content has its digest.
    fn checked(digest: Digest, data: String) -> Result<ArtifactBlob, String> {
        let blob = ArtifactBlob::new(data);
        if blob.digest != digest {
            return Err(format!("artifact {digest} does not match its content"));
        }
        Ok(blob)
    }
}

/// The fields as written; [`ArtifactBlob`]'s readers go through it.
#[derive(Deserialize, Decode)]
struct ArtifactBlobFields {
    digest: Digest,
    data: String,
}

impl<'de> Deserialize<'de> for ArtifactBlob {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let ArtifactBlobFields { digest, data } = ArtifactBlobFields::deserialize(d)?;
        ArtifactBlob::checked(digest, data).map_err(serde::de::Error::custom)
    }
}

impl lifeline_decode::Decode for ArtifactBlob {
    fn decode(json: lifeline_decode::Json<'_>) -> Result<Self, lifeline_decode::Error> {
        let ArtifactBlobFields { digest, data } = ArtifactBlobFields::decode(json)?;
        ArtifactBlob::checked(digest, data).map_err(|_| {
            lifeline_decode::Error::invalid("an artifact that does not match its digest")
        })
    }
}

/// One output chunk as retained: `inline` is the first part, then the
/// artifact span, then `dropped` bytes that exceeded the budget.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct OutputChunk {
    /// Byte offset of this chunk within its stream.
    pub offset: u64,
    pub len: u64,
    pub inline: String,
    pub artifact: Option<ArtifactSpan>,
    pub dropped: u64,
}

impl OutputChunk {
    pub fn validate(&self) -> Result<(), String> {
        let artifact = self.artifact.as_ref().map_or(0, |a| a.len);
        let sum = (self.inline.len() as u64)
            .checked_add(artifact)
            .and_then(|s| s.checked_add(self.dropped));
        if sum != Some(self.len) {
            return Err(format!(
                "output chunk parts (inline {} + artifact {artifact} + dropped {}) do not add up to its length {}",
                self.inline.len(),
                self.dropped,
                self.len
            ));
        }
        if self.len > limits::MAX_OUTPUT_CHUNK_BYTES as u64 {
            return Err("output chunk exceeds the chunk limit".into());
        }
        if self.offset.checked_add(self.len).is_none() {
            return Err("output chunk offset overflows".into());
        }
        Ok(())
    }
}

/// The durable form of an event body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RetainedBody {
    Stdout(OutputChunk),
    Stderr(OutputChunk),
    Tool { name: String, detail: String },
    Lifecycle { phase: String },
    Checkpoint { label: String },
    Terminal(TerminalResult),
}

impl RetainedBody {
    pub fn kind(&self) -> EventKind {
        match self {
            RetainedBody::Stdout(_) => EventKind::Stdout,
            RetainedBody::Stderr(_) => EventKind::Stderr,
            RetainedBody::Tool { .. } => EventKind::Tool,
            RetainedBody::Lifecycle { .. } => EventKind::Lifecycle,
            RetainedBody::Checkpoint { .. } => EventKind::Checkpoint,
            RetainedBody::Terminal(_) => EventKind::Terminal,
        }
    }
}

/// A durable command event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct EventRecord {
    pub v: V1,
    pub command: CommandId,
    pub seq: EventSeq,
    /// Digest of the event as the runtime sent it (see [`EventBody::digest`]).
    pub digest: Digest,
    pub body: RetainedBody,
}

impl Schema for EventRecord {
    const NAME: &'static str = "event record";
    fn validate(&self) -> Result<(), String> {
        if self.seq.0 == 0 {
            return Err("event sequence starts at 1".into());
        }
        match &self.body {
            RetainedBody::Stdout(c) | RetainedBody::Stderr(c) => c.validate(),
            RetainedBody::Tool { name, detail } => {
                check_text("tool name", name, limits::MAX_TEXT_BYTES)?;
                check_text("tool detail", detail, limits::MAX_TEXT_BYTES)
            }
            RetainedBody::Lifecycle { phase } => {
                check_text("lifecycle phase", phase, limits::MAX_TEXT_BYTES)
            }
            RetainedBody::Checkpoint { label } => {
                check_text("checkpoint label", label, limits::MAX_TEXT_BYTES)
            }
            RetainedBody::Terminal(t) => t.validate(),
        }
    }
}

/// Where a client resumes a command's stream: everything after `after`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct Cursor {
    pub v: V1,
    pub command: CommandId,
    /// Last sequence the client has seen; 0 to start from the beginning.
    pub after: EventSeq,
}

impl Schema for Cursor {
    const NAME: &'static str = "cursor";
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

/// A span of output stored in an artifact, by stream offset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct ArtifactPlacement {
    pub offset: u64,
    pub digest: Digest,
    pub len: u64,
}

/// The inline head of `command`'s stdout and stderr from its events up to
/// `through`, as retention kept it: what a settled command's output in the
/// journal reads back as.
pub fn inline_head(events: &[EventRecord], command: CommandId, through: EventSeq) -> [String; 2] {
    let mut head = [String::new(), String::new()];
    for e in events
        .iter()
        .filter(|e| e.command == command && e.seq <= through)
    {
        push_inline(&mut head, e);
    }
    head
}

/// Whether `head` (stdout, stderr) is the whole inline head `summaries`
/// count: one that lacks events retention let go is shorter.
pub fn holds_whole_head(head: [&str; 2], summaries: [&OutputSummary; 2]) -> bool {
    head[0].len() as u64 == summaries[0].inline_bytes
        && head[1].len() as u64 == summaries[1].inline_bytes
}

/// Adds `event`'s inline output to the stdout and stderr heads.
pub fn push_inline(head: &mut [String; 2], event: &EventRecord) {
    match &event.body {
        RetainedBody::Stdout(chunk) => head[0].push_str(&chunk.inline),
        RetainedBody::Stderr(chunk) => head[1].push_str(&chunk.inline),
        _ => {}
    }
}

/// What a reader needs to know about one output stream of a command.
///
/// Only snapshots hold it, one per stream of every command: what most
/// streams never have (a truncation, artifacts, dropped bytes) is left out
/// rather than written as empty, which was four of its six values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct OutputSummary {
    pub total_bytes: u64,
    pub inline_bytes: u64,
    /// Stream offset where inline retention stopped, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_at: Option<u64>,
    /// Where the non-inline output lives, in stream order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<ArtifactPlacement>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_bytes: u64,
    /// Stream offset from which output exceeded the budget and was not kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_from: Option<u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl OutputSummary {
    pub(crate) fn record(&mut self, chunk: &OutputChunk) {
        self.total_bytes = self.total_bytes.saturating_add(chunk.len);
        self.inline_bytes = self.inline_bytes.saturating_add(chunk.inline.len() as u64);
        let after_inline = chunk.offset + chunk.inline.len() as u64;
        if chunk.inline.len() as u64 != chunk.len && self.truncated_at.is_none() {
            self.truncated_at = Some(after_inline);
        }
        if let Some(a) = &chunk.artifact {
            self.artifacts.push(ArtifactPlacement {
                offset: after_inline,
                digest: a.digest,
                len: a.len,
            });
        }
        if chunk.dropped > 0 {
            self.dropped_bytes = self.dropped_bytes.saturating_add(chunk.dropped);
            if self.dropped_from.is_none() {
                self.dropped_from = Some(chunk.offset + chunk.len - chunk.dropped);
            }
        }
    }
}

fn floor_char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    let mut i = max;
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Splits one output chunk into inline, artifact and dropped parts.
///
/// `inline_room` is what is left of the command's inline bound and
/// `budget_room` what is left of its output budget (inline counts against
/// both). Splits fall on character boundaries so inline text stays valid.
pub fn retain_output(
    hashed: &HashedText<'_>,
    offset: u64,
    inline_room: u64,
    budget_room: u64,
) -> (OutputChunk, Option<ArtifactBlob>) {
    let data = hashed.text;
    let inline_cap = inline_room.min(budget_room).min(usize::MAX as u64) as usize;
    let inline_end = floor_char_boundary(data, inline_cap);
    let rest = &data[inline_end..];
    let artifact_cap = (budget_room - inline_end as u64).min(usize::MAX as u64) as usize;
    let artifact_end = floor_char_boundary(rest, artifact_cap);
    let stored = &rest[..artifact_end];
    let blob = (!stored.is_empty()).then(|| {
        if stored.len() == data.len() {
            // The whole text: its digest is already known.
            ArtifactBlob {
                digest: hashed.digest,
                data: stored.to_owned(),
            }
        } else {
            ArtifactBlob::new(stored.to_owned())
        }
    });
    let chunk = OutputChunk {
        offset,
        len: data.len() as u64,
        inline: data[..inline_end].to_string(),
        artifact: blob.as_ref().map(|b| ArtifactSpan {
            digest: b.digest,
            len: b.data.len() as u64,
        }),
        dropped: (rest.len() - artifact_end) as u64,
    };
    (chunk, blob)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{decode, encode};

    #[test]
    fn output_splits_inline_then_artifact_then_dropped() {
        let (c, blob) = retain_output(&HashedText::new("hello world"), 100, 5, 8);
        assert_eq!(c.inline, "hello");
        assert_eq!(c.artifact.as_ref().unwrap().len, 3);
        assert_eq!(blob.as_ref().unwrap().data(), " wo");
        assert_eq!(c.dropped, 3);
        c.validate().unwrap();
        let mut s = OutputSummary::default();
        s.record(&c);
        assert_eq!(s.truncated_at, Some(105));
        assert_eq!(s.artifacts[0].offset, 105);
        assert_eq!(s.dropped_from, Some(108));
    }

    #[test]
    fn an_artifact_reads_back_only_with_its_own_digest() {
        let (_, blob) = retain_output(&HashedText::new("hello world"), 0, 0, 100);
        let blob = blob.unwrap();
        assert_eq!(blob.digest(), Digest::of(b"hello world"));
        let text = lifeline_encode::to_string(&blob);
        assert_eq!(
            lifeline_decode::from_str::<ArtifactBlob>(&text).unwrap(),
            blob
        );
        assert_eq!(serde_json::from_str::<ArtifactBlob>(&text).unwrap(), blob);
        let forged = text.replace("hello world", "hello there");
        assert_ne!(forged, text);
        assert!(lifeline_decode::from_str::<ArtifactBlob>(&forged).is_err());
        assert!(serde_json::from_str::<ArtifactBlob>(&forged).is_err());
    }

    #[test]
    fn an_output_event_is_named_by_its_stream_and_its_text_hashed_once() {
        let out = |data: &str| EventBody::Stdout { data: data.into() };
        let err = |data: &str| EventBody::Stderr { data: data.into() };
        assert_eq!(out("1\n2\n").digest(), out("1\n2\n").digest());
        assert_ne!(out("1\n2\n").digest(), out("1\n3\n").digest());
        assert_ne!(out("1\n2\n").digest(), err("1\n2\n").digest());
        // Not the JSON's digest, which hashed the text a second time.
        let body = out("1\n2\n");
        assert_ne!(body.digest(), Digest::of(&lifeline_encode::to_vec(&body)));
        // The text's own SHA-256 names the artifact holding all of it, and
        // a part of it is hashed on its own.
        let hashed = HashedText::new("1\n2\n");
        assert_eq!(body.digest_of_output(&hashed), body.digest());
        let (_, whole) = retain_output(&hashed, 0, 0, 100);
        assert_eq!(whole.unwrap().digest(), Digest::of(b"1\n2\n"));
        let (_, part) = retain_output(&hashed, 0, 2, 100);
        assert_eq!(part.unwrap().digest(), Digest::of(b"2\n"));
        // Other events keep the digest of their JSON.
        let phase = EventBody::Lifecycle {
            phase: "started".into(),
        };
        assert_eq!(phase.digest(), Digest::of(&lifeline_encode::to_vec(&phase)));
    }

    #[test]
    fn split_respects_character_boundaries() {
        let (c, blob) = retain_output(&HashedText::new("héllo"), 0, 2, 100);
        assert_eq!(c.inline, "h");
        assert_eq!(blob.unwrap().data, "éllo");
        c.validate().unwrap();
        let (c, blob) = retain_output(&HashedText::new("abc"), 0, 10, 10);
        assert_eq!(c.inline, "abc");
        assert!(blob.is_none());
    }

    #[test]
    fn event_record_round_trips_and_checks_parts() {
        let (chunk, _) = retain_output(&HashedText::new("abcdef"), 0, 3, 100);
        let rec = EventRecord {
            v: V1,
            command: crate::command::tests::id(7),
            seq: EventSeq(1),
            digest: Digest::of(b"x"),
            body: RetainedBody::Stdout(chunk),
        };
        let bytes = encode(&rec).unwrap();
        assert_eq!(decode::<EventRecord>(&bytes).unwrap(), rec);
        let mut bad = rec.clone();
        if let RetainedBody::Stdout(c) = &mut bad.body {
            c.len = 99;
        }
        assert!(encode(&bad).is_err());
        let text = String::from_utf8(serde_json::to_vec(&bad).unwrap()).unwrap();
        assert!(decode::<EventRecord>(text.as_bytes()).is_err());
    }
}
