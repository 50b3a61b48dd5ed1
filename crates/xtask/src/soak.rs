//! `cargo xtask soak`: the crash soak of issue 12, item 5. Builds the release
//! bundle (cargo only rebuilds what changed), serves it on a loopback port and
//! runs e2e/soak/run.mjs, which drives headless Chromium through many cycles
//! of "start numbered commands, interrupt them at a random moment, recover as
//! a user would", then checks the journal and the workspace and prints the
//! counts per fault kind. Not part of `cargo xtask test`: 50 cycles take far
//! longer than CI's budget; the 5-cycle version is e2e/tests/soak.test.mjs.
//!
//! Exits non-zero when the checker finds a violation (a command that ran
//! twice, a journal hole or unreadable record, a command left unsettled) or
//! when the driver could not run.

use crate::{dist, root, run_command, serve, tools};
use std::process::Command;

pub fn run(args: &[String]) -> Result<(), String> {
    let mut node_args: Vec<String> = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            flag @ ("--cycles" | "--seed") => {
                // A seed may be 0; a run of 0 cycles would check nothing.
                let least = if flag == "--cycles" { 1 } else { 0 };
                let value = args
                    .next()
                    .filter(|n| n.parse::<u64>().is_ok_and(|n| n >= least))
                    .ok_or_else(|| format!("{flag} needs a number of at least {least}"))?;
                node_args.push(flag.to_string());
                node_args.push(value.clone());
            }
            "--self-test" => node_args.push(arg.clone()),
            other => return Err(format!("unexpected argument {other:?} for soak")),
        }
    }
    tools::ensure_e2e_packages()?;
    let mut node = Command::new("node");
    node.current_dir(root().join("e2e"))
        .arg("soak/run.mjs")
        .args(&node_args)
        .env("CHROMIUM", tools::CHROMIUM);
    // The checker's self-test needs no browser and no bundle.
    if !node_args.iter().any(|a| a == "--self-test") {
        tools::ensure_build_tools()?;
        tools::ensure_chromium()?;
        let bundle = dist::build(dist::Profile::Release)?;
        let address = serve::spawn(&bundle.dir)?;
        node.env("LIFELINE_URL", format!("http://{address}/"));
        println!("xtask: running the crash soak in headless Chromium");
    }
    run_command(&mut node).map_err(|error| format!("the soak failed (see above): {error}"))
}
