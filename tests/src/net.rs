//! A lossy, duplicating, reordering transport between controller and runtime.
//!
//! Every message gets a fate when it is sent: dropped, delivered once, or
//! delivered twice, each copy after an independent random delay (so messages
//! reorder). A message travels on a *port*; a port breaks when either side
//! crashes, and anything still in flight on a broken port is discarded on
//! arrival.

use crate::clock::Millis;
use crate::rng::Rng;

/// Transport fault intensities, per mille.
#[derive(Clone, Copy, Debug, Default)]
pub struct NetFaults {
    /// Probability a message is dropped.
    pub drop: u32,
    /// Probability a message is delivered twice.
    pub duplicate: u32,
    /// Probability a message is delayed well beyond the base latency (reorder).
    pub delay: u32,
}

/// Port identity: a fresh one per (controller incarnation, runtime incarnation) link.
pub type PortId = u64;

/// Statistics about what the network did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetStats {
    /// Messages handed to the network.
    pub sent: u64,
    /// Dropped on purpose.
    pub dropped: u64,
    /// Extra copies delivered.
    pub duplicated: u64,
    /// Delayed well past the base latency.
    pub delayed: u64,
    /// Arrived on a port that had broken in the meantime.
    pub dead_port: u64,
}

/// The network: decides fates and tracks which ports are alive.
#[derive(Clone, Debug)]
pub struct Network {
    faults: NetFaults,
    next_port: PortId,
    live: std::collections::BTreeSet<PortId>,
    /// Counters.
    pub stats: NetStats,
}

impl Network {
    /// A network with the given fault intensities and no live port.
    pub fn new(faults: NetFaults) -> Self {
        Network {
            faults,
            next_port: 0,
            live: Default::default(),
            stats: NetStats::default(),
        }
    }

    /// Opens a fresh port.
    pub fn open_port(&mut self) -> PortId {
        self.next_port += 1;
        self.live.insert(self.next_port);
        self.next_port
    }

    /// Breaks a port: nothing more is delivered on it.
    pub fn break_port(&mut self, port: PortId) {
        self.live.remove(&port);
    }

    /// True if a message sent on `port` can still be delivered.
    pub fn is_live(&mut self, port: PortId) -> bool {
        let ok = self.live.contains(&port);
        if !ok {
            self.stats.dead_port += 1;
        }
        ok
    }

    /// Delays, one per delivered copy (empty: dropped). `force_drop` and
    /// `force_dup` let the fault injector act on one specific message.
    pub fn transmit(&mut self, rng: &mut Rng, force_drop: bool, force_dup: bool) -> Vec<Millis> {
        self.stats.sent += 1;
        if force_drop || rng.chance(self.faults.drop) {
            self.stats.dropped += 1;
            return Vec::new();
        }
        let copies = if force_dup || rng.chance(self.faults.duplicate) {
            self.stats.duplicated += 1;
            2
        } else {
            1
        };
        (0..copies)
            .map(|_| {
                if rng.chance(self.faults.delay) {
                    self.stats.delayed += 1;
                    rng.range(20, 400)
                } else {
                    rng.range(1, 5)
                }
            })
            .collect()
    }
}
