//! `cargo xtask` — every build, serve and test step of Lifeline, in Rust.
//!
//! Each command installs what it is missing (the wasm target, the pinned
//! wasm-bindgen CLI, Chromium, the e2e npm packages), idempotently and saying
//! what it installs, so a fresh machine needs nothing but these commands.

mod bench;
mod dist;
mod footprint;
mod i18n;
mod imports;
mod mutants;
mod probe;
mod serve;
mod soak;
mod split;
mod test;
mod tools;
mod trace;
mod wasm_opt;

use std::{path::PathBuf, process::ExitCode};

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  build [--dev]              build the release bundle into target/dist and print wasm sizes
  serve [--port N] [--dev]   build, then serve target/dist on http://127.0.0.1:N (default 8080)
  test [LAYER...]            run every test layer: native, wasm, e2e (default: all three)
  bench [--rounds N]         build and run the store benchmarks in headless Chromium (default 5 rounds)
  probe [--only 1,3]         build and run the recovery probes of reference 001; writes docs/recovery-probes.md
  mutants [--target controller|engine] [--seeds N] [--re R] [--list]
                             mutation-test the controller's and engine's dispatch, ACK, reattach, cancel and timer code
                             against the whole native suite (simulation with N seeds, default 2000)
  soak [--cycles N] [--seed N] [--self-test]
                             build and run the crash soak in headless Chromium (default 50 cycles)
  trace [first-visit|send|output]
                             build with function names kept, trace one flow with the CPU profiler on
                             every thread, and print where each thread spent its time
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("build") => dist::Profile::from_args(&args[1..]).and_then(|profile| {
            tools::ensure_build_tools()?;
            dist::build(profile).map(|_| ())
        }),
        Some("serve") => serve::run(&args[1..]),
        Some("test") => test::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("probe") => probe::run(&args[1..]),
        Some("mutants") => mutants::run(&args[1..]),
        Some("soak") => soak::run(&args[1..]),
        Some("trace") => trace::run(&args[1..]),
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            Ok(())
        }
        _ => Err(format!("unknown or missing command\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (xtask lives in crates/xtask).
pub fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .expect("crates/xtask sits two levels below the workspace root")
        .to_path_buf()
}

/// Runs a command to completion, failing with its name if it fails.
pub fn run_command(command: &mut std::process::Command) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|error| format!("could not start {command:?}: {error}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed with {status}"))
    }
}

#[cfg(test)]
mod tidy;
