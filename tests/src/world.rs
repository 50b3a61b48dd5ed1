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
    /// After its chunks the process never exits on its own (like `sleep`
    /// without end): only a cancel, a deadline or its runtime's death ends it.
    pub hang: bool,
    /// The real-world action this process performs: unique per admission a
    /// client issues (an idempotent retry carries the same one), so a replay
    /// under a fresh command id is still the same action running twice.
    pub token: u64,
}

impl Script {
    /// A random script for action `token`: mostly short, some long enough to
    /// outlive a short deadline, some that never exit on their own.
    pub fn random(rng: &mut Rng, token: u64) -> Self {
        let long = rng.chance(200);
        let (n, interval) = if long {
            (rng.range(3, 10), rng.range(150, 400))
        } else {
            (rng.below(5), rng.range(5, 60))
        };
        Script {
            chunks: (0..n).map(|i| format!("t{token}:{i}\n")).collect(),
            interval,
            exit_code: if rng.chance(250) { 1 } else { 0 },
            hang: rng.chance(80),
            token,
        }
    }

    /// The command line the simulated client puts in its binding; the
    /// simulated runtime runs exactly what it says (see [`Script::parse`]).
    pub fn command_line(&self) -> String {
        format!(
            "sim {} {} {} {} t{}",
            self.chunks.len(),
            self.interval,
            self.exit_code,
            u8::from(self.hang),
            self.token
        )
    }

    /// The script a command line describes; `None` for anything else.
    pub fn parse(command_line: &str) -> Option<Script> {
        let parts: Vec<&str> = command_line.split_whitespace().collect();
        let ["sim", n, interval, exit, hang, token] = parts.as_slice() else {
            return None;
        };
        let token: u64 = token.strip_prefix('t')?.parse().ok()?;
        let n: usize = n.parse().ok()?;
        Some(Script {
            chunks: (0..n).map(|i| format!("t{token}:{i}\n")).collect(),
            interval: interval.parse().ok()?,
            exit_code: exit.parse().ok()?,
            hang: *hang == "1",
            token,
        })
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
    /// The real-world action (the script's token) it performs.
    pub token: u64,
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
    /// When it ended, if it did.
    pub ended_at: Option<Millis>,
}

/// Ground truth for every command key.
#[derive(Clone, Debug, Default)]
pub struct World {
    /// Process starts per command key.
    pub runs: BTreeMap<String, Vec<ProcessRun>>,
    /// Command keys that started each real-world action, in start order.
    pub actions: BTreeMap<u64, Vec<String>>,
}

impl World {
    /// Records a start; returns the run index.
    pub fn start(&mut self, key: &str, token: u64, generation: u64, now: Millis) -> usize {
        self.actions.entry(token).or_default().push(key.to_string());
        let runs = self.runs.entry(key.to_string()).or_default();
        runs.push(ProcessRun {
            token,
            generation,
            runtime: String::new(),
            started_at: now,
            emitted: Vec::new(),
            end: ProcessEnd::Running,
            ended_at: None,
        });
        runs.len() - 1
    }

    /// How many times `key` really started.
    pub fn starts(&self, key: &str) -> usize {
        self.runs.get(key).map_or(0, Vec::len)
    }

    /// How many times the real-world action `token` started, under any command.
    pub fn action_starts(&self, token: u64) -> usize {
        self.actions.get(&token).map_or(0, Vec::len)
    }

    /// The (single) run of `key`, if it started.
    pub fn run(&self, key: &str) -> Option<&ProcessRun> {
        self.runs.get(key).and_then(|r| r.first())
    }

    /// Records how run `idx` of `key` ended, and when.
    pub fn ended(&mut self, key: &str, idx: usize, end: ProcessEnd, now: Millis) {
        let run = self.run_mut(key, idx);
        run.end = end;
        run.ended_at = Some(now);
    }

    /// Mutable access to a run.
    pub fn run_mut(&mut self, key: &str, idx: usize) -> &mut ProcessRun {
        &mut self.runs.get_mut(key).expect("known key")[idx]
    }

    /// Marks every running process of that runtime as dead with it.
    pub fn runtime_died(&mut self, generation: u64, runtime: &str, now: Millis) {
        for runs in self.runs.values_mut() {
            for r in runs.iter_mut() {
                if r.generation == generation
                    && r.runtime == runtime
                    && r.end == ProcessEnd::Running
                {
                    r.end = ProcessEnd::DiedWithRuntime;
                    r.ended_at = Some(now);
                }
            }
        }
    }
}
