//! Deterministic simulation of the Lifeline controller, runtime, journal and
//! transport (see `docs/simulation.md`).
//!
//! Generic pieces: [`rng`] (seeded PRNG), [`clock`] (simulated time),
//! [`journal`] (in-memory durable store), [`net`] (lossy transport),
//! [`faults`] (fault plan, boundaries, coverage), [`world`] (ground truth).

pub mod client;
pub mod clock;
pub mod engine_sim;
pub mod faults;
pub mod journal;
pub mod net;
pub mod rng;
pub mod sim;
pub mod world;
