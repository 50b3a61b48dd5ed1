//! Builds the deployable bundle in target/dist: four wasm modules with their
//! wasm-bindgen glue, the static app shell and a service worker stamped with
//! the bundle's content hash.

use crate::{root, run_command, tools};
use flate2::{write::GzEncoder, Compression};
use std::{
    io::Write,
    path::{Path, PathBuf},
    process::Command,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Release,
    Dev,
}

impl Profile {
    pub fn from_args(args: &[String]) -> Result<Profile, String> {
        match args {
            [] => Ok(Profile::Release),
            [flag] if flag == "--dev" => Ok(Profile::Dev),
            other => Err(format!("unexpected arguments {other:?}")),
        }
    }
}

/// The wasm modules of the bundle and their gzip budgets in bytes.
///
/// These budgets were raised four times, each time with the reason
/// recorded here and the figures in docs/benchmarks.md. The workers' when
/// they began carrying the recovery core; then the controller's from 270
/// to 490 KB and the UI's from 250 to 310 KB, when sessions, profiles, the
/// encrypted credential store, the provider wire formats, the recovery view
/// model and evidence export arrived; then the UI's from 310 to 320 KB for
/// local folders (the Environment selector, the picker and permission
/// flow, the folder handle store, the environment part of the recovery
/// report: 299 → 314 KB measured); then, when local folders, structured
/// phrases (every core and controller text worded by the page), the
/// follower's recovery card and the restart tally came together, the UI's
/// to 330 KB (319.7 measured) and the controller's to 500 KB (493.7
/// measured). twiggy puts most of each growth in monomorphised
/// serde/serde_json codecs and Leptos view code for the new types, not in
/// the logic; the phrases' compact wire form and externally tagged page
/// messages already took 45 KB back out of the UI. That is debt: a compact
/// codec for the journal and the rest of the page protocol is the way back
/// down, not further raises.
///
/// The runtime's budget is issue 15's target, 120 KB, since grep's
/// patterns are compiled by the browser's own `RegExp` (regex-lite was
/// about 21 KB gzip of the module), `seq` and `sleep` count in decimal
/// instead of linking float parsing and formatting, and the shell's
/// environment is a sorted vector instead of a B-tree: 154.9 → about 116.
/// The page's and the controller's targets (200 and 250 KB) are not met
/// (307.1 and 497.3 KB, with the page's components type-erased: see
/// `release_rustflags`). The page's budget came down from 330 to 310 KB
/// once it measured 307.1, so that what it lost does not come back
/// unnoticed.
///
/// The provider worker (a model's request building, HTTP stream and
/// decoder, and a local model's driver) left the controller on 2026-12-06:
/// it loads only when a session first asks a model. The controller then
/// measured 460.1 KB, and its budget came down from 500 to 470 KB; the
/// provider worker's is what it measured (117.8), rounded up to 120.
///
/// When `worker/codec` stopped compiling every derived decoder once per
/// map reader (its own `Deserializer` in place of serde-wasm-bindgen's,
/// 2026-12-06), all four came down to what they measured plus about 2 KB:
/// page 304.5 → 306, controller 449.9 → 452, runtime 107.2 → 110,
/// provider worker 117.2 → 119. Then a local model's settings stopped
/// linking serde_json's parser (`lifeline_core::plain_json`): controller
/// 432.4 → 434, provider worker 105.1 → 107.
///
/// When records and messages came to be read by `lifeline_decode` (one
/// non-generic reader per type over a JSON tree, in place of serde's
/// derived decoders, 2026-12-06), all four came down again to what they
/// measured plus about 2 KB: page 294.2 → 296, controller 383.9 → 386,
/// runtime 103.6 → 106, provider worker 101.4 → 104.
///
/// When records and messages came to be written by `lifeline_encode` (in
/// place of serde's `Serialize` through serde_json), the page stopped
/// linking Rust's float formatter, and enums of names and sorts stopped
/// being compiled once per type (2026-12-06), all four came down again to
/// what they measured plus about 2 KB: page 281.7 → 284, controller
/// 371.1 → 373, runtime 101.5 → 104, provider worker 100.8 → 103.
///
/// When the Profiles dialog's editor moved to a module of its own, fetched
/// the first time the dialog opens (`crate::split`, 2026-12-06), the page
/// measured 265.1 and its budget came down to 267; the split modules have
/// their own, `SPLIT_BUDGET`. When a profile's save and the evidence
/// export and import left the controller the same way, it measured 357.0
/// and its budget came down to 359.
///
/// When every release build came to run binaryen's `wasm-opt`
/// (`crate::wasm_opt`) and the page dropped talc for the allocator it
/// links anyway, all four came down again to what they measured plus
/// about 2 KB: page 257.7 → 260, controller 350.9 → 353, runtime 98.5 →
/// 101, provider worker 97.3 → 100.
///
/// When `wasm-opt` came to inline the tiniest functions, the imports from
/// each module's glue got short names (`crate::imports`) and a local
/// model's import left the controller for the module of a profile's save,
/// all four came down again the same way: page 245.4 → 248, controller
/// 340.8 → 343, runtime 95.1 → 97, provider worker 95.0 → 97.
///
/// When the recovery card's view left the page for a module of its own
/// (`split_recovery`, fetched the first time a card is shown), the page
/// measured 234.8 and its budget came down from 248 to 237. When the
/// Profiles form's state came to be built in the editor's module, with the
/// saved profiles' list in one of its own (`split_profile_list`), the page
/// measured 231.1 and its budget came down to 233; when every split
/// view's loading and every event handler were boxed (one instance of
/// their code for all of them), it measured 228.7 and came down to 231.
///
/// When the journal snapshot's reader left the controller for a module of
/// its own (`split_snapshot`, fetched only when the journal holds a
/// snapshot), the controller measured 326.4 and its budget came down from
/// 343 to 328.
///
/// When the details pane's content left the page for a module of its own
/// (`split_details`, fetched once the pane can be seen: on a desktop once
/// the status line has settled, on a narrower screen when the pane first
/// opens), the page measured 216.6 and its budget came down from 231 to
/// 219; when the session list's rows did the same (`split_sessions`), it
/// measured 210.3 and came down to 213. When the transcript's turn and
/// command blocks did (`split_transcript`, fetched once the status line
/// has settled, or at once when there is history to show), it measured
/// 197.4 and came down to 200, the page's target.
pub const MODULES: [(&str, u64); 4] = [
    ("lifeline_web", 200 * 1024),
    ("lifeline_controller", 328 * 1024),
    ("lifeline_runtime", 97 * 1024),
    ("lifeline_provider_worker", 97 * 1024),
];

/// The gzip budget of each module split off the page (`crate::split`),
/// fetched when first needed: a feature moved out of the page's first
/// visit still pays for its size. The largest, the Profiles dialog's
/// editor, measured 38.8 KB; the read-only views (an imported run, a
/// stopped session's workspace) 6.9, and the code both share 0.7; the
/// controller's export and import 13.8, a profile's save 10.5. After
/// `wasm-opt` the editor measured 37.8, and the budget came down from 41;
/// with the tiniest functions inlined, 36.6, and it came down to 39. A
/// profile's save with a local model's import measured 15.3; the journal
/// snapshot's reader 16.9.
pub const SPLIT_BUDGET: u64 = 39 * 1024;

pub struct WasmSize {
    pub name: String,
    pub raw: u64,
    pub gzip: u64,
    pub budget: u64,
}

pub struct Bundle {
    pub dir: PathBuf,
    pub sizes: Vec<WasmSize>,
}

impl Bundle {
    pub fn over_budget(&self) -> Vec<&WasmSize> {
        self.sizes.iter().filter(|s| s.gzip > s.budget).collect()
    }
}

pub fn dist_dir() -> PathBuf {
    root().join("target/dist")
}

/// Panic locations name their source files, and a dependency's carries the
/// builder's absolute registry path (about a hundred of them in the UI):
/// mapped to the crate's own relative path, the bundle is smaller and says
/// nothing about the machine that built it. Flags the caller set stay.
///
/// `--cfg erase_components`: Leptos then returns every `#[component]`'s
/// view type-erased (`AnyView`), so a component's view code is compiled
/// once instead of once per place that nests it: the page's module 317.6 →
/// 304.2 KB gzip, with the same behaviour (every test layer passes). The
/// workers do not use Leptos.
pub(crate) fn release_rustflags() -> String {
    let mut flags: Vec<String> = std::env::var("RUSTFLAGS")
        .map(|f| f.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    flags.extend(["--cfg".to_owned(), "erase_components".to_owned()]);
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")));
    if let Some(src) = cargo_home.map(|h| h.join("registry/src")) {
        for index in std::fs::read_dir(src).into_iter().flatten().flatten() {
            flags.push(format!("--remap-path-prefix={}/=", index.path().display()));
        }
    }
    flags.join("\x1f")
}

pub fn build(profile: Profile) -> Result<Bundle, String> {
    let bindgen = tools::ensure_wasm_bindgen()?;
    let mut cargo = Command::new("cargo");
    cargo
        .current_dir(root())
        .args(["build", "--target", "wasm32-unknown-unknown"]);
    for (name, _) in MODULES {
        cargo.args(["-p", &name.replace('_', "-")]);
    }
    if profile == Profile::Release {
        cargo.arg("--release");
        cargo.env("CARGO_ENCODED_RUSTFLAGS", release_rustflags());
    }
    println!("xtask: building wasm ({profile:?})");
    run_command(&mut cargo)?;

    let out = dist_dir();
    if out.exists() {
        std::fs::remove_dir_all(&out).map_err(|e| format!("cannot clear {out:?}: {e}"))?;
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {out:?}: {e}"))?;

    let wasm_dir = root()
        .join("target/wasm32-unknown-unknown")
        .join(match profile {
            Profile::Release => "release",
            Profile::Dev => "debug",
        });
    let mut split_modules = Vec::new();
    for (name, folder) in crate::split::SPLIT {
        split_modules.extend(crate::split::split(&wasm_dir, &out, name, folder)?);
    }
    for (name, _) in MODULES {
        bindgen_module(&bindgen, &wasm_dir, name, &out, profile == Profile::Release)?;
    }
    if profile == Profile::Release {
        let shipped = MODULES
            .iter()
            .map(|(name, _)| bindgen_output(&out, name))
            .chain(split_modules.iter().map(|piece| piece.shipped.clone()))
            .collect::<Vec<_>>();
        crate::wasm_opt::optimize(&shipped)?;
    }

    copy_tree(&root().join("web/static"), &out)?;
    copy_wllama(&out)?;
    // Before the service worker: its precache list and version include it.
    crate::i18n::write(&out)?;
    write_service_worker(&out)?;

    let mut sizes = MODULES
        .iter()
        .map(|(name, budget)| measure(&bindgen_output(&out, name), *budget))
        .collect::<Result<Vec<_>, _>>()?;
    for piece in &split_modules {
        sizes.push(measure(&piece.shipped, SPLIT_BUDGET)?);
    }
    print_sizes(&sizes);
    if profile == Profile::Release {
        for (name, _) in MODULES {
            // A report, not a gate: the budgets above are the gate. A split
            // module's is what stayed in it, not the whole program.
            let linked = if crate::split::is_split(name) {
                crate::split::main_of(&wasm_dir, name)
            } else {
                wasm_dir.join(format!("{name}.wasm"))
            };
            match crate::footprint::measure(&linked) {
                Ok(footprint) => crate::footprint::print(name, &footprint),
                Err(e) => println!("xtask: no footprint for {name}: {e}"),
            }
        }
        for piece in &split_modules {
            let name = piece
                .shipped
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("split");
            match crate::footprint::measure(&piece.named) {
                Ok(footprint) => crate::footprint::print(name, &footprint),
                Err(e) => println!("xtask: no footprint for {name}: {e}"),
            }
        }
    }
    Ok(Bundle { dir: out, sizes })
}

/// The module wasm-bindgen writes for crate `name` into `out`.
fn bindgen_output(out: &Path, name: &str) -> PathBuf {
    out.join(format!("{name}_bg.wasm"))
}

/// llama.cpp in WebAssembly for local models (`web/static/local-model.js`),
/// from the pinned npm package: served from this origin, never a CDN, and
/// outside the precache so only a local profile's first use downloads it.
pub const WLLAMA_DIR: &str = "wllama";

fn copy_wllama(out: &Path) -> Result<(), String> {
    tools::ensure_e2e_packages()?;
    let package = root().join("e2e/node_modules/@wllama/wllama");
    let dir = out.join(WLLAMA_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {dir:?}: {e}"))?;
    for (from, to) in [
        ("esm/index.js", "index.js"),
        ("esm/wasm/wllama.wasm", "wllama.wasm"),
        ("LICENCE", "LICENCE"),
    ] {
        std::fs::copy(package.join(from), dir.join(to))
            .map_err(|e| format!("cannot copy @wllama/wllama's {from}: {e}"))?;
    }
    Ok(())
}

/// wasm-bindgen for one module into `out`, its glue's imports renamed
/// short (`crate::imports`); `strip` drops the function names (kept only
/// for profiling) and the producers section (which only says which
/// compilers ran).
///
/// A split module's is the splitter's main module, whose exports for its
/// split modules wasm-bindgen must keep.
fn bindgen_module(
    bindgen: &Path,
    wasm_dir: &Path,
    name: &str,
    out: &Path,
    strip: bool,
) -> Result<(), String> {
    let mut command = Command::new(bindgen.join("wasm-bindgen"));
    if crate::split::is_split(name) {
        command
            .arg(crate::split::main_of(wasm_dir, name))
            .arg("--keep-lld-exports");
    } else {
        command.arg(wasm_dir.join(format!("{name}.wasm")));
    }
    command
        .args(["--target", "web", "--no-typescript", "--out-dir"])
        .arg(out);
    if strip {
        command.args(["--remove-name-section", "--remove-producers-section"]);
    }
    run_command(&mut command)?;
    crate::imports::shorten(
        &bindgen_output(out, name),
        &out.join(format!("{name}.js")),
        name,
    )
}

/// A copy of a release `bundle` whose modules keep their function names,
/// in target/trace-dist, for a CPU profile that says which function ran.
pub fn names_kept(bundle: &Bundle) -> Result<PathBuf, String> {
    let out = root().join("target/trace-dist");
    if out.exists() {
        std::fs::remove_dir_all(&out).map_err(|e| format!("cannot clear {out:?}: {e}"))?;
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {out:?}: {e}"))?;
    copy_tree(&bundle.dir, &out)?;
    let bindgen = tools::ensure_wasm_bindgen()?;
    let wasm_dir = root().join("target/wasm32-unknown-unknown/release");
    for (name, _) in MODULES {
        bindgen_module(&bindgen, &wasm_dir, name, &out, false)?;
    }
    // The same optimisation as the bundle's, so the profile is of the code
    // that ships; the split modules were copied already optimised.
    let mains = MODULES
        .iter()
        .map(|(name, _)| bindgen_output(&out, name))
        .collect::<Vec<_>>();
    crate::wasm_opt::optimize_keeping_names(&mains)?;
    Ok(out)
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    for entry in std::fs::read_dir(from).map_err(|e| format!("cannot read {from:?}: {e}"))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).map_err(|e| e.to_string())?;
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .map_err(|e| format!("cannot copy {:?}: {e}", entry.path()))?;
        }
    }
    Ok(())
}

/// Every file of the bundle except the service worker itself, relative to
/// the bundle root, sorted so the list and the hash are reproducible.
pub fn assets(dir: &Path) -> Result<Vec<String>, String> {
    fn walk(dir: &Path, base: &Path, into: &mut Vec<String>) -> Result<(), String> {
        for entry in std::fs::read_dir(dir).map_err(|e| format!("cannot read {dir:?}: {e}"))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                walk(&path, base, into)?;
            } else {
                let relative = path.strip_prefix(base).map_err(|e| e.to_string())?;
                into.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    files.retain(|file| file != "sw.js");
    files.sort();
    Ok(files)
}

/// Stamps sw.js with the bundle's content hash and precache list. The hash
/// covers every asset's path and bytes, so any change yields a new cache.
pub fn write_service_worker(dir: &Path) -> Result<String, String> {
    let all = assets(dir)?;
    let (engine, files): (Vec<String>, Vec<String>) = all
        .into_iter()
        .partition(|file| file.starts_with(&format!("{WLLAMA_DIR}/")));
    let engine_cache = stamp_engine(dir, &engine)?;
    let mut hashed = Vec::new();
    // Each asset's digest, which the service worker checks what it caches
    // against (Subresource Integrity's form).
    let mut integrity = std::collections::BTreeMap::new();
    for file in &files {
        let bytes = std::fs::read(dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
        integrity.insert(format!("./{file}"), sri_sha256(&bytes));
        hashed.extend_from_slice(file.as_bytes());
        hashed.push(0);
        hashed.extend(bytes);
        hashed.push(0);
    }
    let version = tools::hex_sha256(&hashed)[..16].to_owned();
    // "./" is the start URL: navigations are answered with it offline.
    let mut urls = vec!["./".to_owned()];
    urls.extend(files.iter().map(|file| format!("./{file}")));
    let list = serde_json::to_string(&urls).map_err(|e| e.to_string())?;
    // "./" is answered with `index.html`.
    let index = integrity
        .get("./index.html")
        .cloned()
        .ok_or("the bundle has no index.html")?;
    integrity.insert("./".to_owned(), index);
    let integrity = serde_json::to_string(&integrity).map_err(|e| e.to_string())?;
    let template = std::fs::read_to_string(dir.join("sw.js"))
        .map_err(|e| format!("sw.js template missing from the bundle: {e}"))?;
    if [
        "__LIFELINE_BUILD__",
        "__LIFELINE_ASSETS__",
        "__LIFELINE_INTEGRITY__",
    ]
    .iter()
    .any(|placeholder| !template.contains(placeholder))
    {
        return Err(
            "sw.js lacks one of its __LIFELINE_BUILD__, __LIFELINE_ASSETS__ and \
             __LIFELINE_INTEGRITY__ placeholders"
                .into(),
        );
    }
    let stamped = template
        .replace("__LIFELINE_BUILD__", &version)
        .replace("__LIFELINE_ASSETS__", &list)
        .replace("__LIFELINE_INTEGRITY__", &integrity)
        .replace("__LIFELINE_ENGINE__", &engine_cache);
    std::fs::write(dir.join("sw.js"), stamped).map_err(|e| e.to_string())?;
    Ok(version)
}

/// `bytes`' SHA-256 as Subresource Integrity writes it.
fn sri_sha256(bytes: &[u8]) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(bytes);
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The local model engine's cache name, from its files' bytes, written into
/// `local-model.js` (which fills the cache) before the precache list and
/// the build's version are made from it; `sw.js` gets it too.
fn stamp_engine(dir: &Path, engine: &[String]) -> Result<String, String> {
    let mut hashed = Vec::new();
    for file in engine {
        hashed.extend_from_slice(file.as_bytes());
        hashed.push(0);
        hashed.extend(std::fs::read(dir.join(file)).map_err(|e| e.to_string())?);
        hashed.push(0);
    }
    let name = format!("lifeline-engine-{}", &tools::hex_sha256(&hashed)[..16]);
    let script = dir.join("local-model.js");
    if let Ok(text) = std::fs::read_to_string(&script) {
        if !text.contains("__LIFELINE_ENGINE__") {
            return Err("local-model.js lacks its __LIFELINE_ENGINE__ placeholder".into());
        }
        std::fs::write(&script, text.replace("__LIFELINE_ENGINE__", &name))
            .map_err(|e| e.to_string())?;
    }
    Ok(name)
}

/// `path`'s sizes, named by its path in the bundle (split modules are in
/// folders, and both folders have a `chunk_<n>`).
fn measure(path: &Path, budget: u64) -> Result<WasmSize, String> {
    let name = path
        .strip_prefix(dist_dir())
        .ok()
        .and_then(|name| name.to_str())
        .ok_or_else(|| format!("{path:?} is not in the bundle"))?;
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {path:?}: {e}"))?;
    let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
    encoder.write_all(&bytes).map_err(|e| e.to_string())?;
    let gzip = encoder.finish().map_err(|e| e.to_string())?.len() as u64;
    Ok(WasmSize {
        name: name.to_owned(),
        raw: bytes.len() as u64,
        gzip,
        budget,
    })
}

fn print_sizes(sizes: &[WasmSize]) {
    println!(
        "{:<42} {:>10} {:>10} {:>10}",
        "wasm", "raw KB", "gzip KB", "budget KB"
    );
    for size in sizes {
        println!(
            "{:<42} {:>10.1} {:>10.1} {:>10.0} {}",
            size.name,
            size.raw as f64 / 1024.0,
            size.gzip as f64 / 1024.0,
            size.budget as f64 / 1024.0,
            if size.gzip > size.budget {
                "OVER BUDGET"
            } else {
                "ok"
            }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("lifeline-xtask-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("icons")).unwrap();
        std::fs::write(dir.join("index.html"), "<html>").unwrap();
        std::fs::write(dir.join("icons/a.png"), [1, 2, 3]).unwrap();
        std::fs::copy(root().join("web/static/sw.js"), dir.join("sw.js")).unwrap();
        dir
    }

    #[test]
    fn the_service_worker_precaches_every_asset_and_not_itself() {
        let dir = scratch("list");
        write_service_worker(&dir).unwrap();
        let sw = std::fs::read_to_string(dir.join("sw.js")).unwrap();
        assert!(
            sw.contains(r#"["./","./icons/a.png","./index.html"]"#),
            "{sw}"
        );
        assert!(!sw.contains("__LIFELINE_"));
        assert!(!sw.contains("./sw.js"));
        // Every asset has its digest; "./" is index.html's.
        let html = sri_sha256(b"<html>");
        assert!(
            sw.contains(&format!(
                r#"{{"./":"{html}","./icons/a.png":"{}","./index.html":"{html}"}}"#,
                sri_sha256(&[1, 2, 3])
            )),
            "{sw}"
        );
        // SHA-256 of "abc", in base64 (FIPS 180-2's example).
        assert_eq!(
            sri_sha256(b"abc"),
            "sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        );
    }

    #[test]
    fn the_engine_cache_is_named_after_the_engine_alone() {
        let dir = scratch("engine");
        std::fs::create_dir_all(dir.join(WLLAMA_DIR)).unwrap();
        std::fs::write(dir.join("wllama/wllama.wasm"), [0, 97, 115, 109]).unwrap();
        std::fs::copy(
            root().join("web/static/local-model.js"),
            dir.join("local-model.js"),
        )
        .unwrap();
        write_service_worker(&dir).unwrap();
        let sw = std::fs::read_to_string(dir.join("sw.js")).unwrap();
        let script = std::fs::read_to_string(dir.join("local-model.js")).unwrap();
        let name = sw.split("const ENGINE = '").nth(1).unwrap();
        let name = &name[..name.find('\'').unwrap()];
        assert!(name.starts_with("lifeline-engine-"), "{name}");
        assert!(
            script.contains(name),
            "local-model.js fills the cache sw.js reads"
        );
        assert!(!sw.contains("./wllama/"), "the engine is not precached");
        // Another app build with the same engine keeps the same cache.
        std::fs::write(dir.join("index.html"), "<html lang=en>").unwrap();
        std::fs::copy(root().join("web/static/sw.js"), dir.join("sw.js")).unwrap();
        std::fs::copy(
            root().join("web/static/local-model.js"),
            dir.join("local-model.js"),
        )
        .unwrap();
        write_service_worker(&dir).unwrap();
        let again = std::fs::read_to_string(dir.join("sw.js")).unwrap();
        assert!(again.contains(&format!("const ENGINE = '{name}'")));
    }

    #[test]
    fn any_changed_asset_gives_a_new_cache_version() {
        let dir = scratch("version");
        let first = write_service_worker(&dir).unwrap();
        std::fs::copy(root().join("web/static/sw.js"), dir.join("sw.js")).unwrap();
        assert_eq!(
            write_service_worker(&dir).unwrap(),
            first,
            "same bytes, same version"
        );
        std::fs::write(dir.join("icons/a.png"), [1, 2, 4]).unwrap();
        std::fs::copy(root().join("web/static/sw.js"), dir.join("sw.js")).unwrap();
        assert_ne!(write_service_worker(&dir).unwrap(), first);
    }
}
