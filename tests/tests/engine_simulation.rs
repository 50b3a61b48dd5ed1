//! The seeded simulation of the whole engine (see `docs/simulation.md`,
//! "The engine"): sessions, built-in and model turns against a simulated
//! provider, Stop, the card's actions taken by simulated users, tabs and
//! leader hand-over, runtime and controller crashes, and storage faults.
//!
//! * `LIFELINE_ENGINE_SEEDS=<n>` — how many seeds (default 10 000).
//! * `LIFELINE_ENGINE_FIRST=<s>` — the first seed (default 0), to go on
//!   past seeds already run.
//! * `LIFELINE_ENGINE_SEED=<s>` — run only seed `s` and print its trace.

use lifeline_tests::engine_sim::{EngineCoverage, EngineSim};
use std::time::Instant;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

#[test]
fn engine_simulation_seeds() {
    if let Some(seed) = env_u64("LIFELINE_ENGINE_SEED") {
        let mut sim = EngineSim::new(seed, true);
        if let Err(failure) = sim.run() {
            panic!("{failure}");
        }
        for line in sim.trace() {
            println!("{line}");
        }
        println!("seed {seed} passed: {:?}", sim.coverage());
        return;
    }
    let first = env_u64("LIFELINE_ENGINE_FIRST").unwrap_or(0);
    let seeds = env_u64("LIFELINE_ENGINE_SEEDS").unwrap_or(10_000);
    let start = Instant::now();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4) as u64;
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            std::thread::spawn(move || {
                let mut coverage = EngineCoverage::default();
                let mut failures = Vec::new();
                let mut model = 0u64;
                let mut seed = first + w;
                while seed < first + seeds {
                    let mut sim = EngineSim::new(seed, false);
                    model += u64::from(sim.model_turns());
                    match sim.run() {
                        Ok(()) => coverage.add(sim.coverage()),
                        Err(f) => failures.push((seed, f)),
                    }
                    seed += workers;
                }
                (coverage, failures, model)
            })
        })
        .collect();
    let mut coverage = EngineCoverage::default();
    let mut failures = Vec::new();
    let mut model = 0;
    for h in handles {
        let (c, f, m) = h.join().expect("a simulation worker panicked");
        coverage.add(&c);
        failures.extend(f);
        model += m;
    }
    println!(
        "engine simulation: {seeds} seeds ({model} with model turns) in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    println!("coverage: {coverage:#?}");
    failures.sort_by_key(|(s, _)| *s);
    if !failures.is_empty() {
        let shown: Vec<String> = failures.iter().take(5).map(|(_, f)| f.clone()).collect();
        panic!(
            "{} of {seeds} seeds failed; first: {:?}\n{}",
            failures.len(),
            failures
                .iter()
                .take(20)
                .map(|(s, _)| *s)
                .collect::<Vec<_>>(),
            shown.join("\n---\n")
        );
    }
    // The run must have reached every boundary it claims to cover.
    for (name, n) in [
        ("prompts", coverage.prompts),
        ("stops", coverage.stops),
        ("turns finished", coverage.turns_finished),
        ("commands started", coverage.commands_started),
        ("outputs read back", coverage.outputs_read),
        ("commands kept small", coverage.kept_small),
        ("settled outputs shown", coverage.settled_shown),
        ("streamed outputs shown", coverage.streamed_shown),
    ] {
        assert!(n > 0, "no {name} in {seeds} seeds");
    }
    // Downloads of output from every place it can be kept, and pages of
    // View full output.
    for state in [
        "running",
        "running, its first events let go",
        "settled, its first events let go",
        "out of the recent window",
        "kept small",
        "a page of View full output",
    ] {
        assert!(
            coverage.downloads.get(state).is_some_and(|n| *n > 0),
            "no {state} read in {seeds} seeds: {:?}",
            coverage.downloads
        );
    }
}

/// Seeds past CI's 10,000 that once failed, run in every CI run so their
/// fixes stay fixed (docs/simulation.md, finding 15).
const FOUND_BEYOND_CI: [u64; 18] = [
    10910, 13737, 14046, 15256, 16429, 23427, 23984, 26437, 33229, 33471, 92699, 97144, 125465,
    141009, 191386, 233303, 390639, 1879968,
];

#[test]
fn engine_simulation_found_seeds() {
    let failures: Vec<String> = FOUND_BEYOND_CI
        .iter()
        .filter_map(|seed| EngineSim::new(*seed, false).run().err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}
