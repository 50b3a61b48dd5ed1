//! Ground truth: what the simulated processes really did, independent of what
//! the controller believes. The invariants compare the core's claims with this.

use crate::clock::Millis;
use crate::rng::Rng;
use std::collections::BTreeMap;

/// A command's deterministic behaviour once its process starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    /// Output chunks, emitted one every `interval` ms.
    pub chunks: Vec<String>,
    /// Milliseconds between chunks (and before the exit).
    pub interval: Millis,
    /// Exit code.
    pub exit_code: i32,
}

impl Script {
    /// A random small script.
    pub fn random(rng: &mut Rng, label: &str) -> Self {
        let n = rng.below(5) as usize;
        Script {
            chunks: (0..n).map(|i| format!("{label}:{i}\n")).collect(),
            interval: rng.range(5, 60),
            exit_code: if rng.chance(250) { 1 } else { 0 },
        }
    }

    /// Command line shown for this script (informational).
    pub fn command_line(&self) -> String {
        format!(
            "sim --chunks {} --every {} --exit {}",
            self.chunks.len(),
            self.interval,
            self.exit_code
        )
    }
}

/// How one process start ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessEnd {
    /// Still running (or its worker is gone and nobody knows).
    Running,
    /// Exited on its own with this code.
    Exited(i32),
    /// Killed by a cancellation / timeout signal.
    Killed,
    /// Its runtime worker died under it.
    DiedWithRuntime,
}

/// One start of a process.
#[derive(Clone, Debug)]
pub struct ProcessRun {
    /// Generation of the runtime that started it.
    pub generation: u64,
    /// Identity of the runtime that started it.
    pub runtime: String,
    /// When it started.
    pub started_at: Millis,
    /// Chunks actually emitted.
    pub emitted: Vec<String>,
    /// How it ended.
    pub end: ProcessEnd,
}

/// Ground truth for every command key.
#[derive(Clone, Debug, Default)]
pub struct World {
    /// Process starts per command key.
    pub runs: BTreeMap<String, Vec<ProcessRun>>,
}

impl World {
    /// Records a start; returns the run index.
    pub fn start(&mut self, key: &str, generation: u64, now: Millis) -> usize {
        let runs = self.runs.entry(key.to_string()).or_default();
        runs.push(ProcessRun {
            generation,
            runtime: String::new(),
            started_at: now,
            emitted: Vec::new(),
            end: ProcessEnd::Running,
        });
        runs.len() - 1
    }

    /// How many times `key` really started.
    pub fn starts(&self, key: &str) -> usize {
        self.runs.get(key).map_or(0, Vec::len)
    }

    /// The (single) run of `key`, if it started.
    pub fn run(&self, key: &str) -> Option<&ProcessRun> {
        self.runs.get(key).and_then(|r| r.first())
    }

    /// Mutable access to a run.
    pub fn run_mut(&mut self, key: &str, idx: usize) -> &mut ProcessRun {
        &mut self.runs.get_mut(key).expect("known key")[idx]
    }

    /// Marks every running process of that runtime as dead with it.
    pub fn runtime_died(&mut self, generation: u64, runtime: &str) {
        for runs in self.runs.values_mut() {
            for r in runs.iter_mut() {
                if r.generation == generation
                    && r.runtime == runtime
                    && r.end == ProcessEnd::Running
                {
                    r.end = ProcessEnd::DiedWithRuntime;
                }
            }
        }
    }
}
