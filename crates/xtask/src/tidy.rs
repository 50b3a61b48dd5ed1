//! Tidy checks: the architecture invariants of docs/ARCHITECTURE.md, as plain
//! tests that run with the native layer.

use crate::root;
use std::{collections::BTreeMap, process::Command};

/// Crates that must never see a browser API, directly or transitively.
const PURE_CRATES: [&str; 7] = [
    "lifeline-core",
    "lifeline-decode",
    "lifeline-engine",
    "lifeline-protocol",
    "lifeline-shell",
    "lifeline-provider",
    "lifeline-words",
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

/// Every workspace crate that has tests runs them in a layer of `cargo
/// xtask test`: a crate left off both lists would pass CI with its tests
/// never run (lifeline-decode's were, for one commit).
#[test]
fn every_crate_with_tests_runs_in_a_layer() {
    let metadata = metadata();
    let members: Vec<&str> = metadata["workspace_members"]
        .as_array()
        .expect("workspace members")
        .iter()
        .filter_map(|m| m.as_str())
        .collect();
    let mut untested = Vec::new();
    for package in metadata["packages"].as_array().expect("packages") {
        let (Some(id), Some(name), Some(manifest)) = (
            package["id"].as_str(),
            package["name"].as_str(),
            package["manifest_path"].as_str(),
        ) else {
            continue;
        };
        if !members.contains(&id) {
            continue;
        }
        let dir = std::path::Path::new(manifest)
            .parent()
            .expect("a manifest's folder");
        let has_tests = dir.join("tests").is_dir()
            || rust_sources(&dir.join("src")).iter().any(|path| {
                let text = std::fs::read_to_string(path).unwrap_or_default();
                ["#[test]", "#[wasm_bindgen_test]", "proptest!"]
                    .iter()
                    .any(|mark| text.contains(mark))
            });
        let runs = crate::test::NATIVE_PACKAGES.contains(&name)
            || crate::test::WASM_PACKAGES.contains(&name);
        if has_tests && !runs {
            untested.push(name.to_string());
        }
    }
    assert!(
        untested.is_empty(),
        "these crates have tests no layer runs: {untested:?}"
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
    let files = rust_sources(&root().join("crates/lifeline-core/src"));
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

/// The modules of `lifeline-core` and `lifeline-shell` are layered: no two
/// import each other, directly or around a circle, so each can be read and
/// tested with only what lies below it (docs/ARCHITECTURE.md, "Architecture
/// Invariant" at lifeline-core and lifeline-shell). A module is a file under
/// `src/` with its directory of submodules (`session.rs` and `session/`);
/// an edge is a `crate::<module>` path in its code, `use crate::{a, b}`
/// groups included. Comment lines (doc links) do not count, nor do test
/// files (`tests.rs`, `*_tests.rs`) and inline `#[cfg(test)] mod … { … }`.
#[test]
fn the_cores_modules_form_no_import_cycle() {
    for krate in ["crates/lifeline-core", "crates/lifeline-shell"] {
        let graph = module_graph(&root().join(krate).join("src"));
        let edges: usize = graph.values().map(BTreeMap::len).sum();
        assert!(
            graph.len() > 5 && edges > 5,
            "{krate}: only {} modules and {edges} imports found: is the path right?",
            graph.len()
        );
        if let Some(cycle) = find_cycle(&graph) {
            panic!("{krate}: modules import each other in a circle: {cycle}");
        }
    }
}

/// Every `.rs` file under `dir`, recursively.
fn rust_sources(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("readable sources").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, files);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    files
}

/// Every message, record, snapshot and profile that `web/` or `worker/`
/// reads goes through `worker/codec` (`lifeline_decode`'s readers), never
/// serde_json's decoders, which would compile serde's derived decoder for
/// each type into the bundle beside them (docs/benchmarks.md, "Issue 15,
/// first step" and "Fourteenth stop"). Tests are exempt.
#[test]
fn the_browser_decodes_through_the_codec() {
    // serde_json::Value for a tool call's arguments, which go straight back
    // into a provider request built with serde_json.
    const ALLOWED: [&str; 2] = [
        "worker/provider/src/remote.rs: serde_json::from_",
        "worker/codec/src/lib.rs: lifeline_protocol::decode",
    ];
    const DECODERS: [&str; 5] = [
        "serde_json::from_",
        "serde_json::Deserializer",
        "lifeline_protocol::decode",
        "schema::decode(",
        "schema::decode::<",
    ];
    let sources = non_test_code(&["web/src", "worker"]);
    let offenders = uses(&sources, &DECODERS, &ALLOWED);
    assert!(
        sources.len() > 20,
        "only {} browser sources found",
        sources.len()
    );
    assert!(
        offenders.is_empty(),
        "decode through lifeline_codec instead: {offenders:?}"
    );
}

/// The core and the engine, which the controller links, read JSON text
/// with `lifeline_decode`, and with serde_json's readers only in debug
/// builds (`schema::read` and `lifeline_protocol::decode` check every read
/// against serde_json's). Each serde_json reader in the browser links
/// its parser and serde's derived decoders (docs/ARCHITECTURE.md,
/// `lifeline-decode`). Tests are exempt.
#[test]
fn the_core_reads_json_with_serde_json_only_where_the_browser_does_not() {
    const ALLOWED: [&str; 2] = [
        "crates/lifeline-core/src/schema.rs",
        "crates/lifeline-protocol/src/lib.rs",
    ];
    let offenders: Vec<String> = non_test_code(&[
        "crates/lifeline-core/src",
        "crates/lifeline-engine/src",
        "crates/lifeline-protocol/src",
        "crates/lifeline-words/src",
    ])
    .into_iter()
    .filter(|(relative, code)| {
        !ALLOWED.contains(&relative.as_str())
            && (code.contains("serde_json::from_") || code.contains("serde_json::Deserializer"))
    })
    .map(|(relative, _)| relative)
    .collect();
    assert!(
        offenders.is_empty(),
        "these read JSON with serde_json, which links its parser into the controller: {offenders:?}"
    );
}

/// What the browser's modules write as JSON text is written by
/// `lifeline_encode` (the derived `Encode`), never by serde_json's
/// serializer: each use would link serde_json's writer and serde's derived
/// `Serialize` for every type it reaches (docs/benchmarks.md, "Sixteenth
/// stop"). The provider crate's request bodies are the provider worker's
/// own. Tests are exempt.
#[test]
fn the_browser_writes_json_through_lifeline_encode() {
    // Their debug builds' checks that a read agrees with serde_json's.
    const ALLOWED: [&str; 2] = [
        "crates/lifeline-core/src/schema.rs: serde_json::to_",
        "crates/lifeline-protocol/src/lib.rs: serde_json::to_",
    ];
    const WRITERS: [&str; 3] = ["serde_json::to_", "serde_json::Serializer", "json!"];
    let sources = non_test_code(&[
        "web/src",
        "worker",
        "crates/lifeline-core/src",
        "crates/lifeline-engine/src",
        "crates/lifeline-protocol/src",
        "crates/lifeline-words/src",
    ]);
    let offenders = uses(&sources, &WRITERS, &ALLOWED);
    assert!(
        sources.len() > 40,
        "only {} browser sources found",
        sources.len()
    );
    assert!(
        offenders.is_empty(),
        "write through lifeline_encode::to_string instead: {offenders:?}"
    );
}

#[test]
fn every_split_point_says_when_its_module_cannot_load() {
    // Without `fallible`, a split module that fails to load (offline
    // before the service worker has it, a dropped connection) panics the
    // page or the controller. With it, the page's `lazy::shown` says so
    // and offers Try again, and the controller says nothing was done.
    let sources = non_test_code(&["web/src", "worker/controller/src"]);
    let mut points = 0;
    for (relative, code) in &sources {
        for (at, _) in code.match_indices("wasm_split(") {
            if !code[..at].ends_with("::") {
                continue;
            }
            points += 1;
            let arguments = &code[at..at + code[at..].find(')').unwrap_or(0)];
            assert!(
                arguments.contains("fallible"),
                "{relative}: a split point without `fallible`: {arguments}"
            );
        }
    }
    assert!(points >= 4, "only {points} split points found");
}

#[test]
fn the_snapshot_reader_is_only_in_its_split_module() {
    // The projection's decoders are 14 KB of the controller's gzip size;
    // a first visit never reads a snapshot. Named anywhere else in
    // the controller, the reader would be linked into its first module.
    let sources = non_test_code(&["worker/controller/src"]);
    let naming: Vec<&str> = sources
        .iter()
        .filter(|(_, code)| code.contains("read_snapshot_text"))
        .map(|(relative, _)| relative.as_str())
        .collect();
    assert_eq!(naming, ["worker/controller/src/shell/load.rs"]);
    let (_, load) = sources
        .iter()
        .find(|(relative, _)| relative.ends_with("shell/load.rs"))
        .expect("shell/load.rs is there");
    // In that file: imported, and named after the split point only (the
    // reader is the file's last item).
    let point = load
        .find("wasm_split(snapshot")
        .expect("the reader's split point");
    let mut offset = 0;
    for line in load.split_inclusive('\n') {
        if line.contains("read_snapshot_text") {
            assert!(
                line.trim_start().starts_with("use ") || offset > point,
                "shell/load.rs names read_snapshot_text before its split point: {line}"
            );
        }
        offset += line.len();
    }
}

#[test]
fn every_page_event_handler_is_boxed() {
    // A closure's own type, handed to `on:`, instantiates the code that
    // attaches, clones and removes a listener once per handler; boxed
    // (`ui::handler`), every handler of one event shares one instance.
    // `on:<event>:target=` boxes already.
    let sources = non_test_code(&["web/src"]);
    let mut handlers = 0;
    let mut unboxed = Vec::new();
    for (relative, code) in &sources {
        for (at, _) in code.match_indices(" on:") {
            let rest = &code[at + 4..];
            let name = rest
                .find(|c: char| !c.is_ascii_lowercase())
                .map_or(rest, |end| &rest[..end]);
            let after = &rest[name.len()..];
            if name.is_empty() || !after.starts_with('=') {
                continue;
            }
            handlers += 1;
            if !after[1..].starts_with("handler(") {
                unboxed.push(format!("{relative}: on:{name}"));
            }
        }
    }
    assert!(handlers >= 40, "only {handlers} event handlers found");
    assert!(
        unboxed.is_empty(),
        "event handlers not boxed with `ui::handler`: {unboxed:?}"
    );
}

/// Each `file: needle` where a source's code holds a needle, but for the
/// `allowed` ones.
fn uses(sources: &[(String, String)], needles: &[&str], allowed: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (relative, code) in sources {
        for needle in needles {
            let place = format!("{relative}: {needle}");
            if code.contains(needle) && !allowed.contains(&place.as_str()) {
                found.push(place);
            }
        }
    }
    found
}

/// Each non-test source file under `dirs` (test files, `tests/` folders
/// and a file's `#[cfg(test)]` module left out), as its path from the
/// root and its code without comment lines.
fn non_test_code(dirs: &[&str]) -> Vec<(String, String)> {
    let mut sources = Vec::new();
    for dir in dirs {
        for path in rust_sources(&root().join(dir)) {
            let relative = path
                .strip_prefix(root())
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            if relative.contains("/tests/") || stem == "tests" || stem.ends_with("_tests") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("readable source");
            let code: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap_or("")
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            sources.push((relative, code));
        }
    }
    sources
}

/// Each top-level module of the crate at `src`, with the modules it imports
/// and, for each, where (`file:line` of the first mention).
fn module_graph(src: &std::path::Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let stem = |path: &std::path::Path| -> String {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        stem.to_owned()
    };
    let is_test = |stem: &str| stem == "tests" || stem.ends_with("_tests");
    let files = rust_sources(src);
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = files
        .iter()
        .filter_map(|path| path.strip_prefix(src).ok()?.components().next())
        .map(|top| stem(top.as_ref()))
        .filter(|module| module != "lib" && !is_test(module))
        .map(|module| (module, BTreeMap::new()))
        .collect();
    for path in &files {
        let relative = path.strip_prefix(src).expect("under src");
        let top = relative.components().next().expect("a file");
        let top = stem(top.as_ref());
        if is_test(&stem(path)) || !graph.contains_key(&top) {
            continue;
        }
        let code = code_lines(&std::fs::read_to_string(path).expect("readable source"));
        let mut from = 0;
        while let Some(at) = code[from..].find("crate::") {
            from += at + "crate::".len();
            let line = code[..from].matches('\n').count() + 1;
            for module in path_heads(&code[from..]) {
                if module != top && graph.contains_key(&module) {
                    let place = format!("{}:{line}", relative.display());
                    let edges = graph.get_mut(&top).expect("a module");
                    edges.entry(module).or_insert(place);
                }
            }
        }
    }
    graph
}

/// `text` with comment lines and inline `#[cfg(test)] mod … { … }` blanked
/// (their newlines kept, so line numbers still point into the file).
fn code_lines(text: &str) -> String {
    let braces = |line: &str| line.matches('{').count() as i64 - line.matches('}').count() as i64;
    let mut code = String::with_capacity(text.len());
    let mut cfg_test = false;
    let mut test_module_depth = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(depth) = test_module_depth {
            let depth = depth + braces(line);
            test_module_depth = (depth > 0).then_some(depth);
        } else if cfg_test && trimmed.starts_with("mod ") && trimmed.ends_with('{') {
            test_module_depth = Some(braces(line));
        } else if !trimmed.starts_with("//") {
            code.push_str(line);
        }
        code.push('\n');
        cfg_test = trimmed == "#[cfg(test)]" || (cfg_test && trimmed.starts_with("#["));
    }
    code
}

/// The first segment of the path that starts `rest` (what follows a
/// `crate::`), or each item's first segment when it is a `{…}` group.
fn path_heads(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        let s = s.trim_start();
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident(rest)];
    };
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item_start = 0;
    for (index, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.push(ident(&group[item_start..index]));
                item_start = index + 1;
            }
            _ => {}
        }
    }
    heads.push(ident(&group[item_start..]));
    heads
}

/// One circle in `graph`, written `a → b (where) → … → a (where)`, if any.
fn find_cycle(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Option<String> {
    fn visit<'a>(
        graph: &'a BTreeMap<String, BTreeMap<String, String>>,
        module: &'a str,
        path: &mut Vec<&'a str>,
        done: &mut std::collections::BTreeSet<&'a str>,
    ) -> Option<String> {
        if let Some(start) = path.iter().position(|m| *m == module) {
            let mut text = module.to_owned();
            let mut circle = path[start..].to_vec();
            circle.push(module);
            for pair in circle.windows(2) {
                text.push_str(&format!(" → {} ({})", pair[1], graph[pair[0]][pair[1]]));
            }
            return Some(text);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module);
        for next in graph[module].keys() {
            if let Some(found) = visit(graph, next, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(module);
        None
    }
    let mut done = std::collections::BTreeSet::new();
    graph
        .keys()
        .find_map(|module| visit(graph, module, &mut Vec::new(), &mut done))
}

/// A `FlatMap` or `FlatSet` is keyed by one of the journal's identities,
/// minted in time order, so that its inserts append (docs/ARCHITECTURE.md,
/// "Architecture Invariant" at `flat`): a key in random order (a digest,
/// an idempotency key) would shift the vector on every insert. The small
/// sets a limit bounds (tools, capabilities, variable names) are keyed by
/// `Tool` and `String`, which nothing unbounded is keyed by.
#[test]
fn flat_maps_are_keyed_by_time_ordered_identities() {
    let mut offenders = Vec::new();
    for dir in ["crates", "worker", "web"] {
        for file in rust_sources(&root().join(dir)) {
            if file.ends_with("flat.rs") || file.ends_with("tidy.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("readable source");
            for (at, _) in text.match_indices("Flat") {
                let rest = &text[at..];
                let Some(args) = rest
                    .strip_prefix("FlatMap<")
                    .or_else(|| rest.strip_prefix("FlatSet<"))
                else {
                    continue;
                };
                let key: String = args
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let name = key.rsplit("::").next().unwrap_or_default();
                if !name.ends_with("Id") && !matches!(name, "Tool" | "String") {
                    offenders.push(format!("{}: {key}", file.display()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "FlatMap/FlatSet keyed by something other than an identity: {offenders:?}"
    );
}

/// No bootstrap script has a static import: a static import is fetched,
/// with whatever it imports, before the script runs, so each link of the
/// chain waited for the one before, one round trip each, and `boot.js`
/// started the workers only once the page's glue had arrived
/// (docs/benchmarks.md, "Twenty-fifth stop"). (docs/ARCHITECTURE.md,
/// "Architecture Invariant" at `boot.js`.)
#[test]
fn no_bootstrap_script_waits_on_a_static_import() {
    for name in ["boot.js", "controller.js", "runtime.js", "provider.js"] {
        let path = root().join("web/static").join(name);
        let text = std::fs::read_to_string(&path).expect("a bootstrap script");
        let statics: Vec<&str> = text
            .lines()
            .filter(|line| line.trim_start().starts_with("import ") || line.starts_with("import{"))
            .collect();
        assert!(
            statics.is_empty(),
            "{name} has a static import: {statics:?}"
        );
        assert!(
            text.contains("fetch(new URL("),
            "{name} does not ask for its module's bytes itself"
        );
    }
}

#[test]
fn the_pages_layouts_are_the_stylesheets() {
    // `io/layout.rs` tells when a pane is beside the chat by the media
    // query under which style.css makes it a drawer; a breakpoint moved in
    // one and not the other would load a pane's module too late (its
    // content missing beside the chat) or too early.
    let layout = std::fs::read_to_string(root().join("web/src/io/layout.rs")).unwrap();
    let css = std::fs::read_to_string(root().join("web/static/style.css")).unwrap();
    let queries: Vec<&str> = layout
        .match_indices("\"not all and (max-width: ")
        .map(|(at, _)| {
            let rest = &layout[at + "\"not all and ".len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    assert_eq!(queries.len(), 2, "a query for each pane: {queries:?}");
    for query in queries {
        assert!(
            css.contains(&format!("@media {query} {{")),
            "style.css has no `@media {query}` rule for io/layout.rs's pane"
        );
    }
}
