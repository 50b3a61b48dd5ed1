//! `cargo xtask test`: every layer of tests, each summarised on one line.
//!
//! - native: unit, integration and simulation tests on the host, plus a check
//!   that the recovery core builds for wasm32.
//! - wasm: wasm-bindgen tests in headless Chromium (stores, worker shells).
//! - e2e: Playwright (playwright-core + axe-core) against the release bundle.

use crate::{dist, root, serve, tools};
use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
    time::Instant,
};

const LAYERS: [&str; 3] = ["native", "wasm", "e2e"];

/// Host crates; the browser shells are tested in the wasm layer instead.
/// The UI's unit tests (locale catalogs, phrase wording, profile form) need
/// no browser and run here too.
pub(crate) const NATIVE_PACKAGES: [&str; 11] = [
    "lifeline-core",
    "lifeline-decode",
    "lifeline-encode",
    "lifeline-engine",
    "lifeline-protocol",
    "lifeline-provider",
    "lifeline-shell",
    "lifeline-tests",
    "lifeline-web",
    "lifeline-words",
    "xtask",
];

/// Crates with wasm-bindgen tests in headless Chromium.
pub(crate) const WASM_PACKAGES: [&str; 3] =
    ["lifeline-store", "lifeline-runtime", "lifeline-codec"];

#[derive(Default)]
struct Tally {
    passed: u64,
    failed: u64,
    ignored: u64,
}

struct Outcome {
    layer: &'static str,
    tally: Tally,
    seconds: f64,
    error: Option<String>,
}

pub fn run(args: &[String]) -> Result<(), String> {
    let selected: Vec<&str> = if args.is_empty() {
        LAYERS.to_vec()
    } else {
        args.iter()
            .map(|arg| {
                LAYERS
                    .iter()
                    .find(|layer| **layer == arg.as_str())
                    .copied()
                    .ok_or_else(|| format!("unknown test layer {arg:?}; layers: {LAYERS:?}"))
            })
            .collect::<Result<_, _>>()?
    };
    let started = Instant::now();
    let mut outcomes = Vec::new();
    for layer in selected {
        let clock = Instant::now();
        let mut tally = Tally::default();
        let result = match layer {
            "native" => native(&mut tally),
            "wasm" => wasm(&mut tally),
            _ => e2e(&mut tally),
        };
        outcomes.push(Outcome {
            layer,
            tally,
            seconds: clock.elapsed().as_secs_f64(),
            error: result.err(),
        });
    }
    println!();
    let mut failed = false;
    for outcome in &outcomes {
        let t = &outcome.tally;
        let verdict = match &outcome.error {
            None if t.failed == 0 && t.passed > 0 => "ok".to_owned(),
            None if t.passed == 0 => {
                failed = true;
                "FAILED: no tests ran".to_owned()
            }
            None => {
                failed = true;
                "FAILED".to_owned()
            }
            Some(error) => {
                failed = true;
                format!("FAILED: {error}")
            }
        };
        println!(
            "test layer {:<6} {:>5} passed, {:>3} failed, {:>3} ignored in {:>6.1} s — {verdict}",
            outcome.layer, t.passed, t.failed, t.ignored, outcome.seconds
        );
    }
    println!("all layers took {:.1} s", started.elapsed().as_secs_f64());
    if failed {
        Err("some tests failed".to_owned())
    } else {
        Ok(())
    }
}

fn native(tally: &mut Tally) -> Result<(), String> {
    let mut command = Command::new("cargo");
    command.current_dir(root()).arg("test");
    for package in NATIVE_PACKAGES {
        command.args(["-p", package]);
    }
    let result = run_counting(&mut command, tally, count_libtest);
    tools::ensure_wasm_target()?;
    // The sans-IO crates must stay portable to the browser: build them for
    // wasm32 too.
    crate::run_command(Command::new("cargo").current_dir(root()).args([
        "build",
        "--quiet",
        "-p",
        "lifeline-core",
        "-p",
        "lifeline-engine",
        "-p",
        "lifeline-provider",
        "--target",
        "wasm32-unknown-unknown",
    ]))
    .map_err(|error| {
        format!("the core, engine or provider crate does not build for wasm32: {error}")
    })?;
    result
}

fn wasm(tally: &mut Tally) -> Result<(), String> {
    tools::ensure_wasm_target()?;
    let bindgen = tools::ensure_wasm_bindgen()?;
    tools::ensure_chromium()?;
    let path = std::env::join_paths(std::iter::once(bindgen).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .map_err(|e| e.to_string())?;
    let mut command = Command::new("cargo");
    command
        .current_dir(root())
        .args(["test", "--target", "wasm32-unknown-unknown"])
        .env("PATH", path)
        .env("CHROMEDRIVER", tools::CHROMEDRIVER)
        .env("WASM_BINDGEN_TEST_TIMEOUT", "60");
    for package in WASM_PACKAGES {
        command.args(["-p", package]);
    }
    run_counting(&mut command, tally, count_libtest)
}

fn e2e(tally: &mut Tally) -> Result<(), String> {
    tools::ensure_build_tools()?;
    tools::ensure_chromium()?;
    tools::ensure_e2e_packages()?;
    let duckdb_python = tools::ensure_duckdb()?;
    let gguf_python = tools::ensure_gguf()?;
    let bundle = dist::build(dist::Profile::Release)?;
    let over: Vec<String> = bundle
        .over_budget()
        .iter()
        .map(|s| format!("{} is {} B gzip, budget {} B", s.name, s.gzip, s.budget))
        .collect();
    let address = serve::spawn(&bundle.dir)?;
    // A second origin whose files the tests may rewrite (to play a new build
    // arriving), so the real bundle is never touched.
    let scratch = root().join("target/e2e-scratch");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| format!("cannot create {scratch:?}: {e}"))?;
    let scratch_address = serve::spawn(&scratch)?;
    let e2e = root().join("e2e");
    let tap = std::env::temp_dir().join(format!("lifeline-e2e-{}.tap", std::process::id()));
    let mut command = Command::new("node");
    // Two files at a time: most of a file's time is spent waiting on the
    // app's own clocks (retry waits, heartbeats, streamed replies), and each
    // file has its own browser profile and servers on free ports. On the
    // 2-core machine this took the tests from 766 s to 450 s, every one
    // still passing.
    command
        .current_dir(&e2e)
        .args(["--test", "--test-concurrency=2"])
        .args(["--test-reporter=spec", "--test-reporter-destination=stdout"])
        .arg("--test-reporter=tap")
        .arg(format!("--test-reporter-destination={}", tap.display()))
        .env("LIFELINE_URL", format!("http://{address}/"))
        .env("LIFELINE_DIST", &bundle.dir)
        .env("LIFELINE_SCRATCH_URL", format!("http://{scratch_address}/"))
        .env("LIFELINE_SCRATCH_DIR", &scratch)
        .env("CHROMIUM", tools::CHROMIUM)
        .env("LIFELINE_DUCKDB_PYTHON", &duckdb_python)
        .env("LIFELINE_GGUF_PYTHON", &gguf_python);
    for file in e2e_test_files(&e2e)? {
        command.arg(file);
    }
    let result = crate::run_command(&mut command);
    let report = std::fs::read_to_string(&tap).unwrap_or_default();
    let _ = std::fs::remove_file(&tap);
    count_tap(&report, tally);
    result?;
    if over.is_empty() {
        Ok(())
    } else {
        Err(format!("wasm over its size budget: {}", over.join("; ")))
    }
}

fn e2e_test_files(e2e: &std::path::Path) -> Result<Vec<String>, String> {
    let mut files: Vec<String> = std::fs::read_dir(e2e.join("tests"))
        .map_err(|e| format!("cannot list e2e/tests: {e}"))?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".test.mjs"))
        // E2E_ONLY=<part of a file name>[,<another>…] narrows a local run
        // to the files being worked on; CI sets nothing and runs them all.
        .filter(|name| {
            std::env::var("E2E_ONLY")
                .map_or(true, |only| only.split(',').any(|part| name.contains(part)))
        })
        .map(|name| format!("tests/{name}"))
        .collect();
    files.sort();
    Ok(files)
}

/// Runs `command`, echoing its stdout while `count` reads each line.
fn run_counting(
    command: &mut Command,
    tally: &mut Tally,
    count: fn(&str, &mut Tally),
) -> Result<(), String> {
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|error| format!("could not start {command:?}: {error}"))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| e.to_string())?;
        println!("{line}");
        count(&line, tally);
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{status}"))
    }
}

/// Reads libtest's `test result: ok. 3 passed; 0 failed; 1 ignored; …`.
fn count_libtest(line: &str, tally: &mut Tally) {
    let Some(rest) = line.trim().strip_prefix("test result: ") else {
        return;
    };
    for part in rest.split(';') {
        let mut words = part.split_whitespace().rev();
        let (Some(kind), Some(number)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(number) = number.parse::<u64>() else {
            continue;
        };
        match kind {
            "passed" => tally.passed += number,
            "failed" => tally.failed += number,
            "ignored" => tally.ignored += number,
            _ => {}
        }
    }
}

/// Reads the `# pass N`, `# fail N`, `# skipped N` trailer of node's TAP.
fn count_tap(report: &str, tally: &mut Tally) {
    for line in report.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("#") {
            continue;
        }
        let (Some(kind), Some(number)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(number) = number.parse::<u64>() else {
            continue;
        };
        match kind {
            "pass" => tally.passed += number,
            "fail" => tally.failed += number,
            "skipped" | "todo" => tally.ignored += number,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_summaries_are_counted() {
        let mut tally = Tally::default();
        count_libtest(
            "test result: ok. 12 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.01s",
            &mut tally,
        );
        count_libtest("test something ... ok", &mut tally);
        count_libtest("test result: ok. 3 passed; 0 failed; 0 ignored", &mut tally);
        assert_eq!((tally.passed, tally.failed, tally.ignored), (15, 1, 2));
    }

    #[test]
    fn tap_trailers_are_counted() {
        let mut tally = Tally::default();
        count_tap(
            "ok 1 - a\n# tests 5\n# pass 4\n# fail 1\n# skipped 0\n",
            &mut tally,
        );
        assert_eq!((tally.passed, tally.failed, tally.ignored), (4, 1, 0));
    }
}
