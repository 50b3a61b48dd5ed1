//! `cargo xtask bench`: the store benchmarks. Builds the `bench` crate in
//! release mode into its own bundle (target/bench-dist: wasm-bindgen glue,
//! the bench page and worker from bench/static, Dexie from e2e/node_modules),
//! serves it on a loopback port, and runs e2e/bench/run.mjs, which drives
//! headless Chromium and prints the table. Not part of `cargo xtask test`.

use crate::{root, run_command, serve, tools};

use std::{
    path::{Path, PathBuf},
    process::Command,
};

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                root().join(dir)
            }
        })
        .unwrap_or_else(|| root().join("target"))
}

/// How late each response of the first visit's second pair of servers is.
const FIRST_VISIT_LATENCY_MS: u64 = 40;

pub fn run(args: &[String]) -> Result<(), String> {
    let mut rounds: Option<String> = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => {
                rounds = Some(
                    args.next()
                        .filter(|n| n.parse::<u32>().is_ok_and(|n| n > 0))
                        .ok_or("--rounds needs a positive number")?
                        .clone(),
                )
            }
            other => return Err(format!("unexpected argument {other:?} for bench")),
        }
    }
    tools::ensure_build_tools()?;
    tools::ensure_chromium()?;
    tools::ensure_e2e_packages()?;
    // The local-model figures run the tests' tiny generated models.
    let gguf_python = tools::ensure_gguf()?;
    let dir = build()?;
    let address = serve::spawn(&dir)?;
    // The output benchmark drives the real app, served like `cargo xtask serve`.
    let app = crate::dist::build(crate::dist::Profile::Release)?;
    let app_address = serve::spawn(&app.dir)?;
    // The first-visit benchmark's baseline: a minimal Leptos page and worker.
    let minimal = build_minimal()?;
    let minimal_address = serve::spawn(&minimal)?;
    // Both again, each response 40 ms late: a first visit over a network.
    let latency = std::time::Duration::from_millis(FIRST_VISIT_LATENCY_MS);
    let slow_app = serve::spawn_with_latency(&app.dir, latency)?;
    let slow_minimal = serve::spawn_with_latency(&minimal, latency)?;
    let mut node = Command::new("node");
    node.current_dir(root().join("e2e"))
        .arg("bench/run.mjs")
        .env("LIFELINE_BENCH_URL", format!("http://{address}/"))
        .env("LIFELINE_APP_URL", format!("http://{app_address}/"))
        .env("LIFELINE_MINIMAL_URL", format!("http://{minimal_address}/"))
        .env("LIFELINE_SLOW_APP_URL", format!("http://{slow_app}/"))
        .env(
            "LIFELINE_SLOW_MINIMAL_URL",
            format!("http://{slow_minimal}/"),
        )
        .env("LIFELINE_SLOW_MS", FIRST_VISIT_LATENCY_MS.to_string())
        .env("BENCH_JSON", target_dir().join("bench-results.json"))
        .env("CHROMIUM", tools::CHROMIUM)
        .env("LIFELINE_GGUF_PYTHON", &gguf_python);
    if let Some(rounds) = rounds {
        node.env("BENCH_ROUNDS", rounds);
    }
    println!("xtask: running the store benchmarks in headless Chromium (a few minutes)");
    run_command(&mut node)
}

/// Builds the bench bundle and returns its directory.
fn build() -> Result<PathBuf, String> {
    let bindgen = tools::ensure_wasm_bindgen()?;
    println!("xtask: building the bench crate (release)");
    run_command(Command::new("cargo").current_dir(root()).args([
        "build",
        "--release",
        "--target",
        "wasm32-unknown-unknown",
        "-p",
        "lifeline-bench",
    ]))?;
    let out = root().join("target/bench-dist");
    if out.exists() {
        std::fs::remove_dir_all(&out).map_err(|e| format!("cannot clear {out:?}: {e}"))?;
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {out:?}: {e}"))?;
    let wasm = target_dir().join("wasm32-unknown-unknown/release/lifeline_bench.wasm");
    run_command(
        Command::new(bindgen.join("wasm-bindgen"))
            .arg(&wasm)
            .args(["--target", "web", "--no-typescript", "--out-dir"])
            .arg(&out),
    )?;
    copy_files(&root().join("bench/static"), &out)?;
    let dexie = root().join("e2e/node_modules/dexie/dist/dexie.mjs");
    std::fs::copy(&dexie, out.join("dexie.mjs"))
        .map_err(|e| format!("cannot copy {dexie:?} (npm ci in e2e/): {e}"))?;
    Ok(out)
}

/// Builds the first-visit baseline (bench/minimal-page, bench/minimal-worker)
/// with the app's release profile and flags, and returns its directory.
fn build_minimal() -> Result<PathBuf, String> {
    const CRATES: [&str; 2] = [
        "lifeline_bench_minimal_page",
        "lifeline_bench_minimal_worker",
    ];
    let bindgen = tools::ensure_wasm_bindgen()?;
    println!("xtask: building the first-visit baseline (release)");
    let mut cargo = Command::new("cargo");
    cargo
        .current_dir(root())
        .args(["build", "--release", "--target", "wasm32-unknown-unknown"])
        .env("CARGO_ENCODED_RUSTFLAGS", crate::dist::release_rustflags());
    for name in CRATES {
        cargo.args(["-p", &name.replace('_', "-")]);
    }
    run_command(&mut cargo)?;
    let out = root().join("target/bench-minimal-dist");
    if out.exists() {
        std::fs::remove_dir_all(&out).map_err(|e| format!("cannot clear {out:?}: {e}"))?;
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {out:?}: {e}"))?;
    for name in CRATES {
        let wasm = target_dir().join(format!("wasm32-unknown-unknown/release/{name}.wasm"));
        run_command(
            Command::new(bindgen.join("wasm-bindgen"))
                .arg(&wasm)
                .args(["--target", "web", "--no-typescript", "--out-dir"])
                .arg(&out)
                .args(["--remove-name-section", "--remove-producers-section"]),
        )?;
    }
    copy_files(&root().join("bench/minimal-static"), &out)?;
    Ok(out)
}

fn copy_files(from: &Path, to: &Path) -> Result<(), String> {
    for entry in std::fs::read_dir(from).map_err(|e| format!("cannot read {from:?}: {e}"))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_file() {
            let name = path.file_name().expect("a file has a name");
            std::fs::copy(&path, to.join(name))
                .map_err(|e| format!("cannot copy {path:?}: {e}"))?;
        }
    }
    Ok(())
}
