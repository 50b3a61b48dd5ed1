//! A client's view of per-command event streams, checked for duplicates and
//! unsignalled gaps.

use std::collections::BTreeMap;

/// What one client has received for one command.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamView {
    /// Next sequence number the client expects.
    pub next: u64,
    /// Sequences received, in order of receipt.
    pub received: Vec<u64>,
    /// Explicit gap signals received: `[from, to)` ranges.
    pub gaps: Vec<(u64, u64)>,
}

/// A problem with a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamError {
    /// A sequence the client already had arrived again.
    Duplicate { seq: u64, expected: u64 },
    /// Sequences were skipped without a gap signal.
    Gap { seq: u64, expected: u64 },
    /// A gap signal that overlaps what was already delivered.
    BadGapSignal { from: u64, to: u64, expected: u64 },
}

impl StreamView {
    /// Starts a view at `cursor` (the first sequence still wanted).
    pub fn at(cursor: u64) -> Self {
        StreamView {
            next: cursor,
            received: Vec::new(),
            gaps: Vec::new(),
        }
    }

    /// An event with `seq` arrived.
    pub fn event(&mut self, seq: u64) -> Result<(), StreamError> {
        if seq < self.next {
            return Err(StreamError::Duplicate {
                seq,
                expected: self.next,
            });
        }
        if seq > self.next {
            return Err(StreamError::Gap {
                seq,
                expected: self.next,
            });
        }
        self.received.push(seq);
        self.next = seq + 1;
        Ok(())
    }

    /// An explicit gap signal: sequences `[from, to)` will not be delivered.
    pub fn gap(&mut self, from: u64, to: u64) -> Result<(), StreamError> {
        if from != self.next || to < from {
            return Err(StreamError::BadGapSignal {
                from,
                to,
                expected: self.next,
            });
        }
        self.gaps.push((from, to));
        self.next = to;
        Ok(())
    }
}

/// One client: its streams per command key.
#[derive(Clone, Debug, Default)]
pub struct ClientView {
    /// Streams by command key.
    pub streams: BTreeMap<String, StreamView>,
    /// Whether the client is attached.
    pub attached: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_ok_dup_and_gap_rejected() {
        let mut v = StreamView::at(0);
        v.event(0).unwrap();
        v.event(1).unwrap();
        assert!(matches!(v.event(1), Err(StreamError::Duplicate { .. })));
        assert!(matches!(v.event(3), Err(StreamError::Gap { .. })));
        v.gap(2, 4).unwrap();
        v.event(4).unwrap();
    }
}
