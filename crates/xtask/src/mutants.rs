//! `cargo xtask mutants`: how much of the controller's dispatch, ACK,
//! reattach, cancel and timer code the *whole* test suite pins down.
//! cargo-mutants (installed into target/tools on first use) mutates those
//! functions of the controller (`crates/lifeline-core/src/controller.rs` and
//! the modules under `controller/` that hold them) one at a time and
//! runs the core's unit tests, the acceptance tests and the seeded
//! simulation against each; a mutant no test notices is "missed". Prints
//! caught / missed / unviable / timeout and every missed mutant, which
//! docs/simulation.md either kills with a test or explains as equivalent.
//! Not part of `cargo xtask test`: a run over the 70 mutants takes about
//! 40 minutes on two cores with `--seeds 200` (docs/simulation.md).

use crate::{root, run_command};
use std::{path::PathBuf, process::Command};

/// The version installed and run; its output format is what `summary` reads.
const CARGO_MUTANTS: &str = "27.1.0";

/// The controller's modules that hold the functions under test (paths from
/// the workspace root): the entry points, the effect plumbing (`timer`),
/// dispatch and ACKs, the runtime link (hello, reattach, transport loss),
/// cancellation, retirement and the timers.
const FILES: [&str; 7] = [
    "crates/lifeline-core/src/controller.rs",
    "crates/lifeline-core/src/controller/batch.rs",
    "crates/lifeline-core/src/controller/dispatch.rs",
    "crates/lifeline-core/src/controller/link.rs",
    "crates/lifeline-core/src/controller/cancel.rs",
    "crates/lifeline-core/src/controller/retire.rs",
    "crates/lifeline-core/src/controller/timers.rs",
];

/// The functions under test: dispatch, acknowledgement, reattachment,
/// cancellation and timers. A regex over cargo-mutants' mutant names, which
/// start with the file's path: it is anchored on `Controller::` so that a
/// module's name (`dispatch.rs`, `timers.rs`) does not select all of it.
const FUNCTIONS: &str = "Controller::\\w*(try_dispatch|dispatch_ready|dispatch|hello|refused|ack|\
                         reattach|cancel|timer|deadline|heartbeat|retire|transport_lost|expose)";

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
            other => return Err(format!("unexpected argument {other:?} for mutants")),
        }
    }
    let bin = ensure_cargo_mutants()?;
    let out = root().join("target/mutants");
    let mut command = Command::new(bin);
    command
        .current_dir(root())
        .env("LIFELINE_SIM_SEEDS", &seeds)
        .args(["mutants", "--package", "lifeline-core"])
        .args(FILES.iter().flat_map(|file| ["--file", file]))
        .args([
            "--re",
            only.as_deref().unwrap_or(FUNCTIONS),
            // The whole suite judges each mutant, not only the crate's own
            // tests: the simulation and the acceptance tests live in
            // lifeline-tests.
            "--test-package",
            "lifeline-core",
            "--test-package",
            "lifeline-tests",
            "--output",
        ])
        .arg(&out);
    if list {
        command.arg("--list");
        return run_command(&mut command);
    }
    // cargo-mutants exits non-zero when any mutant is missed; the summary
    // below is the result either way.
    let _ = command.status();
    summary(&out.join("mutants.out/outcomes.json"))
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
