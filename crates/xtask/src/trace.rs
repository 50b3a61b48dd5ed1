//! `cargo xtask trace`: where one user flow spends its time, thread by
//! thread. Builds the release bundle, copies it with the function names
//! kept (target/trace-dist), serves that on a loopback port and runs
//! e2e/bench/trace.mjs, which records a Chromium trace with the V8 CPU
//! profiler on for every thread (the page, the controller and the runtime
//! workers) and prints each thread's busiest functions, its busy time per
//! time slice and its long tasks. The trace itself is written to
//! target/trace-<flow>.json for chrome://tracing or Perfetto.
//!
//! A report, not a measure: the profiler slows every thread, so compare
//! shapes (what waits on what), and measure changes with `cargo xtask bench`.

use crate::{dist, root, run_command, serve, tools};
use std::process::Command;

const FLOWS: [&str; 3] = ["first-visit", "send", "output"];

pub fn run(args: &[String]) -> Result<(), String> {
    let flow = match args {
        [] => "first-visit",
        [flow] if FLOWS.contains(&flow.as_str()) => flow.as_str(),
        _ => {
            return Err(format!(
                "trace takes one flow: {} (default first-visit)",
                FLOWS.join(", ")
            ))
        }
    };
    tools::ensure_build_tools()?;
    tools::ensure_chromium()?;
    tools::ensure_e2e_packages()?;
    let bundle = dist::build(dist::Profile::Release)?;
    let dir = dist::names_kept(&bundle)?;
    let address = serve::spawn(&dir)?;
    let mut node = Command::new("node");
    node.current_dir(root().join("e2e"))
        .arg("bench/trace.mjs")
        .arg(flow)
        .env("LIFELINE_URL", format!("http://{address}/"))
        .env("CHROMIUM", tools::CHROMIUM)
        .env(
            "TRACE_OUT",
            root().join(format!("target/trace-{flow}.json")),
        );
    println!("xtask: tracing {flow} in headless Chromium");
    run_command(&mut node)
}
