//! Tidy checks: the architecture invariants of docs/ARCHITECTURE.md, as plain
//! tests that run with the native layer.

use crate::root;
use std::{collections::BTreeMap, process::Command};

/// Crates that must never see a browser API, directly or transitively.
const PURE_CRATES: [&str; 5] = [
    "lifeline-core",
    "lifeline-engine",
    "lifeline-protocol",
    "lifeline-shell",
    "lifeline-provider",
];
const BROWSER_CRATES: [&str; 4] = ["web-sys", "js-sys", "wasm-bindgen", "wasm-bindgen-futures"];

fn metadata() -> serde_json::Value {
    let output = Command::new(env!("CARGO"))
        .current_dir(root())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--filter-platform",
            "wasm32-unknown-unknown",
        ])
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
}

/// Every package reachable from `start` through normal (non-dev) edges.
fn normal_closure(metadata: &serde_json::Value, start: &str) -> Vec<String> {
    let names: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let nodes: BTreeMap<&str, &serde_json::Value> = metadata["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let root_id = names
        .iter()
        .find(|(_, name)| **name == start)
        .map(|(id, _)| *id)
        .unwrap_or_else(|| panic!("{start} is not in the workspace"));
    let mut seen = vec![root_id];
    let mut stack = vec![root_id];
    while let Some(id) = stack.pop() {
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let normal = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|kind| kind["kind"].is_null());
            let dep_id = dep["pkg"].as_str().unwrap();
            if normal && !seen.contains(&dep_id) {
                seen.push(dep_id);
                stack.push(dep_id);
            }
        }
    }
    seen.iter().map(|id| names[id].to_owned()).collect()
}

#[test]
fn pure_crates_never_depend_on_browser_apis() {
    let metadata = metadata();
    for krate in PURE_CRATES {
        let closure = normal_closure(&metadata, krate);
        for forbidden in BROWSER_CRATES {
            assert!(
                !closure.iter().any(|name| name == forbidden),
                "{krate} depends on {forbidden}; recovery semantics must stay sans-IO (see docs/ARCHITECTURE.md)"
            );
        }
    }
}

#[test]
fn the_core_has_no_clock_randomness_or_async_runtime() {
    let metadata = metadata();
    for krate in ["lifeline-core", "lifeline-engine"] {
        no_clock_randomness_or_async_runtime(&normal_closure(&metadata, krate), krate);
    }
}

fn no_clock_randomness_or_async_runtime(closure: &[String], krate: &str) {
    for forbidden in [
        "tokio",
        "async-std",
        "getrandom",
        "rand",
        "chrono",
        "time",
        "futures",
    ] {
        assert!(
            !closure.iter().any(|name| name == forbidden),
            "{krate} depends on {forbidden}; time and randomness are inputs to the core"
        );
    }
}

/// The controller worker carries out the engine's effects and decides
/// nothing: it never drives the core's machines itself (the controller, the
/// sessions, the turn driver, Stop, the card), and its shell stays small
/// enough to read in one sitting — the cheap proxy the issue named.
/// (docs/ARCHITECTURE.md, "Architecture Invariant" at worker/controller.)
#[test]
fn the_controller_shell_decides_nothing() {
    const DECIDERS: [&str; 8] = [
        "lifeline_core::Controller",
        "lifeline_core::controller::",
        "lifeline_core::session::Sessions",
        "lifeline_core::agent",
        "lifeline_core::model::next",
        "lifeline_core::stop",
        "lifeline_core::recovery",
        "lifeline_core::restart",
    ];
    /// Lines of the shell (its own module and the ones under `shell/`).
    const SHELL_LINES: usize = 1_400;
    let src = root().join("worker/controller/src");
    let mut files = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("controller sources")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    assert!(
        files.len() > 5,
        "only {} files found: is the path right?",
        files.len()
    );
    let mut offenders = Vec::new();
    let mut shell_lines = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable source");
        for decider in DECIDERS {
            if text.contains(decider) {
                offenders.push(format!("{} uses {decider}", path.display()));
            }
        }
        let rel = path.strip_prefix(&src).expect("under src");
        if rel.starts_with("shell") || rel == std::path::Path::new("shell.rs") {
            shell_lines += text.lines().count();
        }
    }
    assert!(
        offenders.is_empty(),
        "the controller worker decides what only the engine may: {offenders:?}"
    );
    assert!(
        shell_lines <= SHELL_LINES,
        "the controller shell has {shell_lines} lines (ceiling {SHELL_LINES}): move the decision into lifeline-engine"
    );
}

#[test]
fn ci_runs_the_readme_test_command() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run exists");
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md exists");
    assert!(
        ci.contains("cargo xtask test"),
        ".ci/run must run `cargo xtask test`"
    );
    assert!(readme.contains("cargo xtask test") && readme.contains("cargo xtask serve"));
}

#[test]
fn no_stubs_left_in_source() {
    fn walk(dir: &std::path::Path, hits: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "target" && name != "node_modules" && name != ".git" {
                    walk(&path, hits);
                }
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                let todo = ["todo", "!("].concat();
                let unimplemented = ["unimplemented", "!("].concat();
                if text.contains(&todo) || text.contains(&unimplemented) {
                    hits.push(path.display().to_string());
                }
            }
        }
    }
    let mut hits = Vec::new();
    for dir in ["crates", "web", "worker", "tests"] {
        walk(&root().join(dir), &mut hits);
    }
    assert!(hits.is_empty(), "unfinished code in {hits:?}");
}

#[test]
fn the_tree_is_formatted() {
    let output = Command::new(env!("CARGO"))
        .current_dir(root())
        .args(["fmt", "--all", "--", "--check"])
        .output()
        .expect("cargo fmt runs");
    assert!(
        output.status.success(),
        "run `cargo fmt --all`:\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// Presentation sits above the domain: the modules of `lifeline-core` that
/// word things for a person (`phrase`), build the card (`recovery`) or the
/// transcript view (`view`) may import the domain; no domain module imports
/// them. (docs/ARCHITECTURE.md, "Architecture Invariant" at lifeline-core.)
/// Submodules count too: most of the controller lives in `controller/`.
#[test]
fn the_cores_domain_never_imports_its_presentation() {
    const PRESENTATION: [&str; 3] = ["phrase", "recovery", "view"];
    fn sources(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("core sources").flatten() {
            let path = entry.path();
            if path.is_dir() {
                sources(&path, files);
            } else {
                files.push(path);
            }
        }
    }
    let mut files = Vec::new();
    sources(&root().join("crates/lifeline-core/src"), &mut files);
    let mut offenders = Vec::new();
    let mut checked = 0;
    for path in files {
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let is_test = stem == "tests" || stem.ends_with("_tests");
        if path.extension().is_none_or(|e| e != "rs")
            || is_test
            || stem == "lib"
            || PRESENTATION.contains(&stem)
        {
            continue;
        }
        checked += 1;
        let text = std::fs::read_to_string(&path).expect("readable source");
        for module in PRESENTATION {
            if text.contains(&format!("crate::{module}::"))
                || text.contains(&format!("crate::{module};"))
            {
                offenders.push(format!("{stem} imports {module}"));
            }
        }
    }
    assert!(
        checked > 10,
        "only {checked} domain modules found: is the path right?"
    );
    assert!(
        offenders.is_empty(),
        "the domain imports presentation: {offenders:?}"
    );
}
