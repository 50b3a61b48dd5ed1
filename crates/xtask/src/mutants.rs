//! `cargo xtask mutants`: how much of the controller's and the engine's
//! dispatch, ACK, reattach, cancel and timer code the *whole* test suite
//! pins down. cargo-mutants (installed into target/tools on first use)
//! mutates those functions one at a time and runs the crate's unit tests,
//! the acceptance tests and both seeded simulations against each; a mutant
//! no test notices is "missed". Prints caught / missed / unviable / timeout
//! and every missed mutant, which docs/simulation.md either kills with a
//! test or explains as equivalent. Not part of `cargo xtask test`: a run
//! over one target takes the better part of an hour on two cores
//! (docs/simulation.md).

use crate::{root, run_command};
use std::{path::PathBuf, process::Command};

/// The version installed and run; its output format is what `summary` reads.
const CARGO_MUTANTS: &str = "27.1.0";

/// One body of code under test: the package mutated, the files that hold
/// the functions, and a regex over cargo-mutants' mutant names (which start
/// with the file's path) anchored on the type, so that a module's name
/// (`dispatch.rs`, `timers.rs`) does not select all of it.
struct Target {
    name: &'static str,
    package: &'static str,
    files: &'static [&'static str],
    functions: &'static str,
}

/// The controller: the entry points, the effect plumbing (`timer`),
/// dispatch and ACKs, the runtime link (hello, reattach, transport loss),
/// cancellation, retirement and the timers.
const CONTROLLER: Target = Target {
    name: "controller",
    package: "lifeline-core",
    files: &[
        "crates/lifeline-core/src/controller.rs",
        "crates/lifeline-core/src/controller/batch.rs",
        "crates/lifeline-core/src/controller/dispatch.rs",
        "crates/lifeline-core/src/controller/link.rs",
        "crates/lifeline-core/src/controller/cancel.rs",
        "crates/lifeline-core/src/controller/retire.rs",
        "crates/lifeline-core/src/controller/timers.rs",
    ],
    functions: "Controller::\\w*(try_dispatch|dispatch_ready|dispatch|hello|refused|ack|\
                reattach|cancel|timer|deadline|heartbeat|retire|transport_lost|expose)",
};

/// The engine: its timers (provider waits and retries, cleanup, notices,
/// launch attempts), Stop, sending a provider request and its retries, the
/// runtime ports (whose messages are believed, a worker's end, an
/// unresponsive runtime, a failed termination), the rejoin and lost-launch
/// adoption waits, stopping a runtime, and the running-session limit.
const ENGINE: Target = Target {
    name: "engine",
    package: "lifeline-engine",
    files: &[
        "crates/lifeline-engine/src/lib.rs",
        "crates/lifeline-engine/src/turn.rs",
        "crates/lifeline-engine/src/runtimes.rs",
        "crates/lifeline-engine/src/lifecycle.rs",
        "crates/lifeline-engine/src/room.rs",
    ],
    functions: "Engine::(handle_timer|set_timer|handle_stop|stop_live|provider_timer|\
                retry_later|retry_countdown|send_provider_request|send_attempt|\
                handle_retry_now|handle_port_opened|refuse_port|handle_runtime_message|\
                watch_life|handle_worker_ended|worker_ended|handle_runtime_exited|\
                handle_stop_unresponsive|handle_terminate_failed|check_rejoin|\
                check_adoption|replace_lost_launch|stop_runtime|stopped_runtime|\
                make_room|has_room|room|running_sessions|working)\\b",
};

fn tool_dir() -> PathBuf {
    root()
        .join("target/tools")
        .join(format!("cargo-mutants-{CARGO_MUTANTS}"))
}

fn ensure_cargo_mutants() -> Result<PathBuf, String> {
    let bin = tool_dir().join("bin/cargo-mutants");
    let ok = Command::new(&bin)
        .args(["mutants", "--version"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(CARGO_MUTANTS));
    if ok {
        return Ok(bin);
    }
    println!(
        "xtask: installing cargo-mutants {CARGO_MUTANTS} into {} (a few minutes, once)",
        tool_dir().display()
    );
    run_command(Command::new("cargo").args([
        "install",
        "cargo-mutants",
        "--locked",
        "--version",
        CARGO_MUTANTS,
        "--root",
        &tool_dir().to_string_lossy(),
    ]))?;
    Ok(bin)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut seeds = "2000".to_string();
    let mut list = false;
    let mut only: Option<String> = None;
    let mut targets = vec![CONTROLLER, ENGINE];
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seeds" => {
                seeds = args
                    .next()
                    .filter(|n| n.parse::<u32>().is_ok_and(|n| n > 0))
                    .ok_or("--seeds needs a positive number")?
                    .clone()
            }
            "--list" => list = true,
            "--re" => only = Some(args.next().ok_or("--re needs a regex")?.clone()),
            "--target" => {
                let name = args.next().ok_or("--target needs controller or engine")?;
                targets.retain(|t| t.name == name);
                if targets.is_empty() {
                    return Err(format!("unknown target {name:?}: controller or engine"));
                }
            }
            other => return Err(format!("unexpected argument {other:?} for mutants")),
        }
    }
    let bin = ensure_cargo_mutants()?;
    for target in &targets {
        println!("mutants: {}", target.name);
        let out = root().join("target/mutants").join(target.name);
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let mut command = Command::new(&bin);
        command
            .current_dir(root())
            // Both simulations judge every mutant, with the same seeds.
            .env("LIFELINE_SIM_SEEDS", &seeds)
            .env("LIFELINE_ENGINE_SEEDS", &seeds)
            .args(["mutants", "--package", target.package])
            .args(target.files.iter().flat_map(|file| ["--file", file]))
            .args([
                "--re",
                only.as_deref().unwrap_or(target.functions),
                // The whole suite judges each mutant, not only the crate's
                // own tests: the simulations and the acceptance tests live
                // in lifeline-tests.
                "--test-package",
                target.package,
                "--test-package",
                "lifeline-tests",
                // The baseline runs only the mutated package's tests, so
                // the timeout cargo-mutants would derive from it is far
                // shorter than the simulations take.
                "--timeout",
                "300",
                "--output",
            ])
            .arg(&out);
        if list {
            command.arg("--list");
            run_command(&mut command)?;
            continue;
        }
        // cargo-mutants exits non-zero when any mutant is missed; the
        // summary below is the result either way.
        let _ = command.status();
        summary(&out.join("mutants.out/outcomes.json"))?;
    }
    Ok(())
}

/// Counts outcomes and names the missed mutants.
fn summary(path: &std::path::Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("no cargo-mutants results at {}: {e}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let field = |name: &str| json[name].as_u64().unwrap_or(0);
    println!(
        "mutants: {} caught, {} missed, {} unviable, {} timeout (of {} tested)",
        field("caught"),
        field("missed"),
        field("unviable"),
        field("timeout"),
        field("total_mutants"),
    );
    for outcome in json["outcomes"].as_array().into_iter().flatten() {
        if outcome["summary"].as_str() == Some("MissedMutant") {
            let name = outcome["scenario"]["Mutant"]["name"]
                .as_str()
                .unwrap_or("?");
            println!("missed: {name}");
        }
    }
    Ok(())
}
