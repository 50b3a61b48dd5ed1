//! `cargo xtask probe`: the five recovery probes of reference 001
//! ("Questions and bounded spikes") against the real release bundle in
//! headless Chromium. Builds the bundle, serves it on a loopback port and
//! runs e2e/probes/run.mjs, which injects each fault from outside the product
//! and rewrites docs/recovery-probes.md from what it observed.
//!
//! Exits 0 when every probe ran, even if a probe observed a bad outcome (that
//! is a finding, written in the table); fails only if a probe could not run.

use crate::{dist, root, run_command, serve, tools};
use std::process::Command;

pub fn run(args: &[String]) -> Result<(), String> {
    let mut only: Option<String> = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--only" => {
                only = Some(
                    args.next()
                        .filter(|list| {
                            !list.is_empty()
                                && list
                                    .split(',')
                                    .all(|n| matches!(n, "1" | "2" | "3" | "4" | "5"))
                        })
                        .ok_or("--only needs probe numbers 1 to 5, comma-separated")?
                        .clone(),
                )
            }
            other => return Err(format!("unexpected argument {other:?} for probe")),
        }
    }
    tools::ensure_build_tools()?;
    tools::ensure_chromium()?;
    tools::ensure_e2e_packages()?;
    let bundle = dist::build(dist::Profile::Release)?;
    let address = serve::spawn(&bundle.dir)?;
    let mut node = Command::new("node");
    node.current_dir(root().join("e2e"))
        .arg("probes/run.mjs")
        .env("LIFELINE_URL", format!("http://{address}/"))
        .env("CHROMIUM", tools::CHROMIUM);
    if let Some(only) = only {
        // A partial run writes elsewhere, so the committed report always
        // holds all five probes.
        node.env("PROBE_ONLY", only).env(
            "PROBE_OUT",
            root().join("target/recovery-probes-partial.md"),
        );
    }
    println!("xtask: running the five recovery probes in headless Chromium (about three minutes)");
    run_command(&mut node).map_err(|error| format!("a probe could not run (see above): {error}"))
}
