//! Binaryen's `wasm-opt` over every shipped module of a release bundle,
//! after wasm-bindgen (which keeps its exports and the function table the
//! split modules fill).
//!
//! It comes from the npm `binaryen` package pinned in e2e/package.json
//! (binaryen compiled to wasm, run by Node), never from Debian: Debian's
//! `binaryen` 108 emits modules Chromium rejects.
//!
//! Measured on the release bundle (docs/benchmarks.md, "Eighteenth
//! stop"): plain `-Oz` shrinks every module raw but grows the page's gzip
//! by 13 % and the controller's by 6 %, because binaryen's inlining copies
//! code LLVM had already decided to share, and gzip finds the copies
//! harder to fold than calls. Without binaryen's local CSE, and with its
//! inlining kept to the tiniest functions (docs/benchmarks.md,
//! "Twenty-first stop"), `-Oz` shrinks every module raw and gzip, and
//! leaves fewer functions for V8 to compile on their first call.

use crate::{root, tools};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `-Oz` without the pass that grew the gzip size, and with inlining only
/// of functions of at most 4 bytes, or 12 with one caller (module docs).
/// LLVM at `opt-level = "z"` keeps many tiny functions (a first visit ran
/// 1,624 of under 50 bytes in the page), and each costs V8 a compilation
/// of its own on its first call. Larger limits grew the gzip size again.
/// Run to a fixed point (`--converge`): inlining leaves more to fold, and
/// the second round took the page 4.4 KB further.
const PASSES: &[&str] = &[
    "-Oz",
    "--always-inline-max-function-size=4",
    "--one-caller-inline-max-function-size=12",
    "--skip-pass=local-cse",
    "--converge",
];

/// What rustc's wasm32 target emits today: binaryen validates against the
/// features it is told of, and refuses the module otherwise.
const FEATURES: &[&str] = &[
    "--enable-bulk-memory",
    "--enable-nontrapping-float-to-int",
    "--enable-sign-ext",
    "--enable-mutable-globals",
    "--enable-reference-types",
    "--enable-multivalue",
];

fn wasm_opt() -> Result<PathBuf, String> {
    tools::ensure_e2e_packages()?;
    let bin = root().join("e2e/node_modules/binaryen/bin/wasm-opt");
    if bin.exists() {
        Ok(bin)
    } else {
        Err(format!("{bin:?} is missing after npm ci in e2e/"))
    }
}

/// Optimises each of `modules` in place, at most two at a time (the
/// machine has two cores; each run is one Node process).
pub fn optimize(modules: &[PathBuf]) -> Result<(), String> {
    run(modules, &[])
}

/// [`optimize`], keeping the function names for a profiler.
pub fn optimize_keeping_names(modules: &[PathBuf]) -> Result<(), String> {
    run(modules, &["--debuginfo"])
}

fn run(modules: &[PathBuf], extra: &[&str]) -> Result<(), String> {
    let bin = wasm_opt()?;
    println!("xtask: wasm-opt over {} modules", modules.len());
    for pair in modules.chunks(2) {
        // Every run started is waited for, even after one fails, so none
        // is left writing into the bundle.
        let runs: Vec<_> = pair
            .iter()
            .map(|module| (module, start(&bin, module, extra)))
            .collect();
        let mut first_error = None;
        for (module, run) in runs {
            if let Err(e) = run.and_then(|child| finish(module, child)) {
                first_error.get_or_insert(e);
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
    }
    Ok(())
}

fn optimized_path(module: &Path) -> PathBuf {
    module.with_extension("opt.wasm")
}

fn start(bin: &Path, module: &Path, extra: &[&str]) -> Result<std::process::Child, String> {
    Command::new(bin)
        .args(PASSES)
        .args(FEATURES)
        .args(extra)
        .arg(module)
        .arg("-o")
        .arg(optimized_path(module))
        .spawn()
        .map_err(|e| format!("could not start wasm-opt for {module:?}: {e}"))
}

/// Waits for one run (its messages go to the terminal) and puts its output
/// in the module's place.
fn finish(module: &Path, mut child: std::process::Child) -> Result<(), String> {
    let status = child
        .wait()
        .map_err(|e| format!("wasm-opt for {module:?} did not finish: {e}"))?;
    let optimized = optimized_path(module);
    if !status.success() {
        let _ = std::fs::remove_file(&optimized);
        return Err(format!("wasm-opt refused {module:?} ({status})"));
    }
    std::fs::rename(&optimized, module)
        .map_err(|e| format!("cannot move {optimized:?} over {module:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in module in a folder of its own (the tests run at once).
    fn module(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("lifeline-wasm-opt-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, b"as wasm-bindgen wrote it").unwrap();
        path
    }

    #[test]
    fn a_refused_module_fails_the_build_and_stays_as_it_was() {
        let path = module("refused_bg.wasm");
        let child = start(Path::new("/bin/false"), &path, &[]).unwrap();
        let error = finish(&path, child).unwrap_err();
        assert!(error.contains("refused"), "{error}");
        assert_eq!(std::fs::read(&path).unwrap(), b"as wasm-bindgen wrote it");
        assert!(!optimized_path(&path).exists());
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }

    #[test]
    fn a_run_that_wrote_nothing_fails_the_build() {
        let path = module("silent_bg.wasm");
        let child = start(Path::new("/bin/true"), &path, &[]).unwrap();
        assert!(finish(&path, child).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"as wasm-bindgen wrote it");
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}
