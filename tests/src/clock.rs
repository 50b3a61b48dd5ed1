//! Simulated time: a priority queue of events ordered by `(time, seq)`.
//!
//! `seq` is a monotonically increasing insertion counter, so two events due at
//! the same instant fire in the order they were scheduled, and a run is a pure
//! function of its seed.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Simulated milliseconds since the start of the run.
pub type Millis = u64;

struct Entry<E> {
    at: Millis,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first.
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// The simulated clock and its pending events.
pub struct Clock<E> {
    now: Millis,
    seq: u64,
    queue: BinaryHeap<Entry<E>>,
}

impl<E> Default for Clock<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Clock<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Clock {
            now: 0,
            seq: 0,
            queue: BinaryHeap::new(),
        }
    }

    /// Current simulated time.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// Schedules `event` at absolute time `at` (clamped to now: no time travel).
    pub fn schedule_at(&mut self, at: Millis, event: E) {
        let at = at.max(self.now);
        self.seq += 1;
        self.queue.push(Entry {
            at,
            seq: self.seq,
            event,
        });
    }

    /// Schedules `event` `delay` ms from now.
    pub fn schedule_in(&mut self, delay: Millis, event: E) {
        self.schedule_at(self.now.saturating_add(delay), event);
    }

    /// Pops the next event and advances time to it.
    pub fn pop(&mut self) -> Option<(Millis, E)> {
        let e = self.queue.pop()?;
        debug_assert!(e.at >= self.now);
        self.now = e.at;
        Some((e.at, e.event))
    }

    /// Number of pending events.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Drops every pending event matching `pred` (e.g. those of a crashed process).
    pub fn retain(&mut self, mut keep: impl FnMut(&E) -> bool) {
        let old = std::mem::take(&mut self.queue).into_vec();
        self.queue = old.into_iter().filter(|e| keep(&e.event)).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_in_time_then_insertion_order() {
        let mut c = Clock::new();
        c.schedule_at(10, "b");
        c.schedule_at(5, "a");
        c.schedule_at(10, "c");
        assert_eq!(c.pop(), Some((5, "a")));
        assert_eq!(c.pop(), Some((10, "b")));
        assert_eq!(c.pop(), Some((10, "c")));
        assert_eq!(c.pop(), None);
        assert_eq!(c.now(), 10);
    }
}
