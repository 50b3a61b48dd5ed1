//! An in-memory durable store standing in for the IndexedDB journal.
//!
//! The shell runs persists one transaction at a time in FIFO order (as
//! IndexedDB does for overlapping read-write transactions on one store). A
//! batch is *in flight* from the `Persist` effect until the harness delivers its
//! confirmation or failure. A crash resolves the in-flight batches the way a
//! real crash would: some prefix of them had already committed (atomically,
//! whole batches) and the rest never happened. The controller must cope with
//! both.

use crate::rng::Rng;

/// How an in-flight batch ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchFate {
    /// Committed; the controller was (or will be) told.
    Committed,
    /// Aborted; nothing of it is durable.
    Failed,
}

/// The durable journal plus the batches in flight.
#[derive(Clone, Debug)]
pub struct JournalStore<K, R> {
    durable: Vec<R>,
    in_flight: Vec<(K, Vec<R>)>,
    /// Batches committed at crash time without the controller ever hearing.
    pub committed_unconfirmed: u64,
    /// Batches lost at crash time.
    pub lost_at_crash: u64,
    /// Batches failed by fault injection.
    pub failed: u64,
    /// Batches committed and confirmed.
    pub confirmed: u64,
}

impl<K, R> Default for JournalStore<K, R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K, R> JournalStore<K, R> {
    /// An empty journal.
    pub fn new() -> Self {
        JournalStore {
            durable: Vec::new(),
            in_flight: Vec::new(),
            committed_unconfirmed: 0,
            lost_at_crash: 0,
            failed: 0,
            confirmed: 0,
        }
    }

    /// Everything durable, in commit order.
    pub fn durable(&self) -> &[R] {
        &self.durable
    }

    /// Number of batches waiting for the harness to resolve them.
    pub fn in_flight_len(&self) -> usize {
        self.in_flight.len()
    }

    /// Records of the batches in flight (not durable yet).
    pub fn in_flight(&self) -> impl Iterator<Item = &(K, Vec<R>)> {
        self.in_flight.iter()
    }

    /// A new transaction begins.
    pub fn begin(&mut self, key: K, records: Vec<R>) {
        self.in_flight.push((key, records));
    }

    /// Resolves the oldest in-flight batch; returns its key, or `None` if idle.
    pub fn resolve_next(&mut self, fate: BatchFate) -> Option<K> {
        if self.in_flight.is_empty() {
            return None;
        }
        let (key, records) = self.in_flight.remove(0);
        match fate {
            BatchFate::Committed => {
                self.durable.extend(records);
                self.confirmed += 1;
            }
            BatchFate::Failed => self.failed += 1,
        }
        Some(key)
    }

    /// The writer crashed: a random prefix of the in-flight batches committed.
    /// Returns how many committed.
    pub fn crash(&mut self, rng: &mut Rng) -> usize {
        let n = self.in_flight.len();
        let committed = rng.below(n as u64 + 1) as usize;
        for (i, (_, records)) in std::mem::take(&mut self.in_flight).into_iter().enumerate() {
            if i < committed {
                self.durable.extend(records);
                self.committed_unconfirmed += 1;
            } else {
                self.lost_at_crash += 1;
            }
        }
        committed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_and_crash_prefix() {
        let mut j: JournalStore<u32, &str> = JournalStore::new();
        j.begin(1, vec!["a"]);
        j.begin(2, vec!["b", "c"]);
        assert_eq!(j.resolve_next(BatchFate::Committed), Some(1));
        assert_eq!(j.durable(), &["a"]);
        j.begin(3, vec!["d"]);
        let mut rng = Rng::new(3);
        let k = j.crash(&mut rng);
        assert_eq!(j.in_flight_len(), 0);
        let expect: Vec<&str> = ["a", "b", "c", "d"][..[1, 3, 4][k]].to_vec();
        assert_eq!(j.durable(), &expect[..]);
    }
}
