//! A command's whole kept output, read back from where retention put it:
//! the inline head (in the projection) and the artifacts after it, in
//! stream order. Stdout comes first, then stderr, as one sequence of kept
//! bytes; bytes over the budget were never kept and are only counted.
//!
//! The engine plans a read ([`StoredOutput::plan`]) and names the artifacts
//! it needs; the shell reads them from the store; [`StoredOutput::assemble`]
//! cuts the answer. Nothing here reads anything itself.

use crate::event::{ArtifactPlacement, EventRecord};
use crate::id::{CommandId, Digest};
use crate::projection::Projection;

/// Bytes one range read answers at most: a page of the full-output view.
pub const MAX_RANGE_BYTES: u64 = 64 * 1024;

/// One stream's kept bytes: the inline head, then its artifacts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredStream {
    pub inline: String,
    pub artifacts: Vec<ArtifactPlacement>,
}

impl StoredStream {
    pub fn kept(&self) -> u64 {
        self.artifacts
            .iter()
            .fold(self.inline.len() as u64, |n, a| n.saturating_add(a.len))
    }
}

/// Stdout then stderr, and what was over the budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredOutput {
    pub streams: [StoredStream; 2],
    pub dropped: u64,
}

/// A part of a planned read: bytes `start..end` of the inline head of
/// stream `stream`, or of an artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slice {
    Inline {
        stream: usize,
        start: usize,
        end: usize,
    },
    Artifact {
        digest: Digest,
        start: usize,
        end: usize,
    },
}

impl StoredOutput {
    /// `command`'s kept output, or `None` when the projection does not hold
    /// its whole inline head: a settled command's output in the journal, or
    /// events retention let go while they carried some of the head
    /// ([`StoredOutput::with_head`] takes either from its events).
    pub fn of(projection: &Projection, command: CommandId) -> Option<StoredOutput> {
        let c = projection.command(command)?;
        if c.settled.as_ref().is_some_and(|s| s.in_journal) {
            return None;
        }
        StoredOutput::whole(c.held_head(), [&c.stdout, &c.stderr])
    }

    /// Whether the journal has `command`'s events to read its inline head
    /// from, where [`StoredOutput::of`] has none: the projection knows the
    /// command, whole or kept small.
    pub fn head_in_journal(projection: &Projection, command: CommandId) -> bool {
        projection.command(command).is_some() || projection.settled_command(command).is_some()
    }

    /// The kept output of `command` with its inline head taken from `events`
    /// (its own, as the journal gave them back): those up to where retention
    /// let go, then those the projection still holds (none once settled).
    /// `None` if together they do not hold the whole head its summaries
    /// count.
    ///
    /// A running command may let more events go, or settle, while its
    /// events are read: the projection as it is when they arrive decides.
    pub fn with_head(
        projection: &Projection,
        command: CommandId,
        events: &[EventRecord],
    ) -> Option<StoredOutput> {
        let Some(c) = projection.command(command) else {
            let (summaries, through) = projection.output_in_journal(command)?;
            let head = crate::event::inline_head(events, command, through);
            return StoredOutput::whole(head, summaries);
        };
        let mut head = crate::event::inline_head(events, command, c.evicted_through);
        for e in &c.events {
            crate::event::push_inline(&mut head, e);
        }
        StoredOutput::whole(head, [&c.stdout, &c.stderr])
    }

    /// The kept output from an inline head, if it is the whole head the
    /// summaries count: one that lacks events retention let go is shorter.
    fn whole(
        head: [String; 2],
        summaries: [&crate::event::OutputSummary; 2],
    ) -> Option<StoredOutput> {
        crate::event::holds_whole_head([&head[0], &head[1]], summaries)
            .then(|| StoredOutput::from_parts(head, summaries))
    }

    fn from_parts(
        [stdout, stderr]: [String; 2],
        [out, err]: [&crate::event::OutputSummary; 2],
    ) -> StoredOutput {
        StoredOutput {
            streams: [
                StoredStream {
                    inline: stdout,
                    artifacts: out.artifacts.clone(),
                },
                StoredStream {
                    inline: stderr,
                    artifacts: err.artifacts.clone(),
                },
            ],
            dropped: out.dropped_bytes.saturating_add(err.dropped_bytes),
        }
    }

    /// Kept bytes over both streams.
    pub fn kept(&self) -> u64 {
        self.streams[0]
            .kept()
            .saturating_add(self.streams[1].kept())
    }

    /// The slices covering kept bytes `offset..offset + len` (clamped to
    /// what was kept), in order.
    pub fn plan(&self, offset: u64, len: u64) -> Vec<Slice> {
        let end = offset.saturating_add(len).min(self.kept());
        let mut out = Vec::new();
        let mut base = 0u64;
        // Each piece of the sequence: where it starts and how long it is.
        let mut take = |piece_len: u64, make: &mut dyn FnMut(usize, usize) -> Slice| {
            let (lo, hi) = (base, base.saturating_add(piece_len));
            let (from, to) = (offset.max(lo), end.min(hi));
            if from < to {
                out.push(make((from - lo) as usize, (to - lo) as usize));
            }
            base = hi;
        };
        for (stream, s) in self.streams.iter().enumerate() {
            take(s.inline.len() as u64, &mut |start, end| Slice::Inline {
                stream,
                start,
                end,
            });
            for a in &s.artifacts {
                take(a.len, &mut |start, end| Slice::Artifact {
                    digest: a.digest,
                    start,
                    end,
                });
            }
        }
        out
    }

    /// The artifacts a plan needs, each once, in order.
    pub fn digests(plan: &[Slice]) -> Vec<Digest> {
        let mut out: Vec<Digest> = Vec::new();
        for s in plan {
            if let Slice::Artifact { digest, .. } = s {
                if !out.contains(digest) {
                    out.push(*digest);
                }
            }
        }
        out
    }

    /// The bytes of `plan`, given the artifacts the shell read. A piece cut
    /// inside a character shows U+FFFD; an artifact missing from the store
    /// (or shorter than recorded) is an error naming how many were.
    pub fn assemble(
        &self,
        plan: &[Slice],
        artifacts: &[(Digest, Option<String>)],
    ) -> Result<Vec<u8>, usize> {
        let mut out = Vec::new();
        let mut missing = 0usize;
        for s in plan {
            let (bytes, start, end) = match s {
                Slice::Inline { stream, start, end } => {
                    (self.streams[*stream].inline.as_bytes(), *start, *end)
                }
                Slice::Artifact { digest, start, end } => {
                    match artifacts
                        .iter()
                        .find(|(d, _)| d == digest)
                        .and_then(|(_, a)| a.as_deref())
                    {
                        Some(a) => (a.as_bytes(), *start, *end),
                        None => {
                            missing += 1;
                            continue;
                        }
                    }
                }
            };
            match bytes.get(start..end) {
                Some(b) => out.extend_from_slice(b),
                None => missing += 1,
            }
        }
        if missing > 0 {
            return Err(missing);
        }
        Ok(out)
    }
}

/// A range's bytes as text on character boundaries: continuation bytes at
/// its start belong to the previous range and are skipped (their count is
/// returned), and a character cut at its end is left for the next range
/// (where the bytes taken end is returned second: the next range's start).
pub fn whole_chars(bytes: &[u8]) -> (usize, usize, String) {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| (**b & 0xC0) == 0x80)
        .count();
    let rest = &bytes[skip..];
    let taken = match std::str::from_utf8(rest) {
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        _ => rest.len(),
    };
    let text = String::from_utf8_lossy(&rest[..taken]).into_owned();
    (skip, skip + taken, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(n: u8) -> Digest {
        Digest::of(&[n])
    }

    fn output() -> StoredOutput {
        StoredOutput {
            streams: [
                StoredStream {
                    inline: "0123".into(),
                    artifacts: vec![
                        ArtifactPlacement {
                            offset: 4,
                            digest: digest(1),
                            len: 3,
                        },
                        ArtifactPlacement {
                            offset: 7,
                            digest: digest(2),
                            len: 3,
                        },
                    ],
                },
                StoredStream {
                    inline: "ERR".into(),
                    artifacts: Vec::new(),
                },
            ],
            dropped: 5,
        }
    }

    fn read(o: &StoredOutput, offset: u64, len: u64) -> Result<String, usize> {
        let plan = o.plan(offset, len);
        let arts = vec![
            (digest(1), Some("456".to_string())),
            (digest(2), Some("789".to_string())),
        ];
        o.assemble(&plan, &arts)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    #[test]
    fn ranges_cross_inline_artifacts_and_streams() {
        let o = output();
        assert_eq!(o.kept(), 13);
        assert_eq!(read(&o, 0, 100).unwrap(), "0123456789ERR");
        assert_eq!(read(&o, 2, 4).unwrap(), "2345");
        assert_eq!(read(&o, 5, 7).unwrap(), "56789ER");
        assert_eq!(read(&o, 12, 10).unwrap(), "R");
        assert_eq!(read(&o, 13, 10).unwrap(), "");
        assert_eq!(read(&o, u64::MAX, u64::MAX).unwrap(), "");
        assert_eq!(
            StoredOutput::digests(&o.plan(0, 100)),
            vec![digest(1), digest(2)]
        );
        assert_eq!(StoredOutput::digests(&o.plan(0, 4)), Vec::<Digest>::new());
    }

    #[test]
    fn a_missing_or_short_artifact_is_an_error_not_a_gap() {
        let o = output();
        let plan = o.plan(0, 100);
        assert_eq!(
            o.assemble(&plan, &[(digest(1), Some("456".into())), (digest(2), None)]),
            Err(1)
        );
        assert_eq!(
            o.assemble(
                &plan,
                &[
                    (digest(1), Some("4".into())),
                    (digest(2), Some("789".into()))
                ]
            ),
            Err(1)
        );
    }

    #[test]
    fn ranges_are_read_on_character_boundaries() {
        let text = "aé✓b";
        let bytes = text.as_bytes();
        // Cut after `a` and inside `é`: the `é` waits for the next range.
        assert_eq!(whole_chars(&bytes[0..2]), (0, 1, "a".to_string()));
        // The next range starts inside `é`... at its first byte, then.
        assert_eq!(whole_chars(&bytes[1..5]), (0, 2, "é".to_string()));
        // A range starting inside `✓` skips to the `b`.
        assert_eq!(whole_chars(&bytes[4..]), (2, 3, "b".to_string()));
        assert_eq!(whole_chars(b""), (0, 0, String::new()));
        // Bytes that are no UTF-8 at all are taken (shown replaced).
        assert_eq!(whole_chars(b"a\xffb"), (0, 3, "a\u{FFFD}b".to_string()));
        assert_eq!(whole_chars(&[0x80, 0x80, 0x80, 0x80]).0, 3);
    }

    #[test]
    fn a_cut_inside_a_character_is_replaced_not_a_panic() {
        let o = StoredOutput {
            streams: [
                StoredStream {
                    inline: "é✓".into(),
                    artifacts: Vec::new(),
                },
                StoredStream {
                    inline: String::new(),
                    artifacts: Vec::new(),
                },
            ],
            dropped: 0,
        };
        assert_eq!(read(&o, 1, 3).unwrap(), "\u{fffd}\u{fffd}");
    }
}
