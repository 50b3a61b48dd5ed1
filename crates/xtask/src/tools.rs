//! Installs what the build and the tests need, only when it is missing.

use crate::{root, run_command};
use std::{
    path::{Path, PathBuf},
    process::Command,
};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

pub fn ensure_build_tools() -> Result<(), String> {
    ensure_wasm_target()?;
    ensure_wasm_bindgen().map(|_| ())
}

pub fn ensure_wasm_target() -> Result<(), String> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map_err(|error| format!("rustup is needed to add the wasm target: {error}"))?;
    if String::from_utf8_lossy(&installed.stdout)
        .lines()
        .any(|line| line.trim() == "wasm32-unknown-unknown")
    {
        return Ok(());
    }
    println!("xtask: installing the wasm32-unknown-unknown target (rustup target add)");
    run_command(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))
}

/// The wasm-bindgen version Cargo.lock pins; the CLI must match it exactly or
/// the generated glue and the wasm disagree.
pub fn pinned_wasm_bindgen_version() -> Result<String, String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock"))
        .map_err(|error| format!("cannot read Cargo.lock: {error}"))?;
    version_in_lock(&lock, "wasm-bindgen")
        .ok_or_else(|| "Cargo.lock has no wasm-bindgen package".to_owned())
}

pub fn version_in_lock(lock: &str, package: &str) -> Option<String> {
    let needle = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == needle {
            let version = lines.next()?.trim();
            return version
                .strip_prefix("version = \"")
                .and_then(|rest| rest.strip_suffix('"'))
                .map(str::to_owned);
        }
    }
    None
}

pub fn wasm_bindgen_dir(version: &str) -> PathBuf {
    root()
        .join("target/tools")
        .join(format!("wasm-bindgen-{version}"))
}

/// Returns the folder holding `wasm-bindgen` and `wasm-bindgen-test-runner`.
pub fn ensure_wasm_bindgen() -> Result<PathBuf, String> {
    let version = pinned_wasm_bindgen_version()?;
    let dir = wasm_bindgen_dir(&version);
    let bin = dir.join("bin");
    if reports_version(&bin.join("wasm-bindgen"), &version)
        && bin.join("wasm-bindgen-test-runner").exists()
    {
        return Ok(bin);
    }
    println!(
        "xtask: installing wasm-bindgen-cli {version} into {} (takes a few minutes, once)",
        dir.display()
    );
    // No --locked: the CLI's own lock file names a crate version this
    // registry does not carry.
    run_command(Command::new("cargo").args([
        "install",
        "wasm-bindgen-cli",
        "--version",
        &version,
        "--root",
        &dir.to_string_lossy(),
    ]))?;
    if reports_version(&bin.join("wasm-bindgen"), &version) {
        Ok(bin)
    } else {
        Err(format!(
            "wasm-bindgen {version} still missing after install"
        ))
    }
}

fn reports_version(binary: &Path, version: &str) -> bool {
    Command::new(binary)
        .arg("--version")
        .output()
        .map(|output| String::from_utf8_lossy(&output.stdout).contains(version))
        .unwrap_or(false)
}

pub fn ensure_chromium() -> Result<(), String> {
    if Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists() {
        return Ok(());
    }
    println!("xtask: installing Debian's chromium and chromium-driver (apt-get)");
    run_command(Command::new("apt-get").arg("update"))?;
    run_command(
        Command::new("apt-get")
            .args([
                "install",
                "-y",
                "--no-install-recommends",
                "chromium",
                "chromium-driver",
            ])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}

/// `npm ci` in e2e/ unless node_modules already matches package-lock.json.
pub fn ensure_e2e_packages() -> Result<(), String> {
    let e2e = root().join("e2e");
    let lock = std::fs::read(e2e.join("package-lock.json"))
        .map_err(|error| format!("e2e/package-lock.json is missing: {error}"))?;
    let stamp = e2e.join("node_modules/.lifeline-lock-sha256");
    let digest = hex_sha256(&lock);
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(digest.as_str()) {
        return Ok(());
    }
    println!("xtask: installing the end-to-end test packages (npm ci in e2e/)");
    run_command(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&e2e),
    )?;
    std::fs::write(&stamp, digest).map_err(|error| format!("cannot write {stamp:?}: {error}"))
}

/// The DuckDB version the evidence-export test reads `session.jsonl` with.
pub const DUCKDB_VERSION: &str = "1.4.1";

/// A Python venv under target/ with DuckDB, for the export test (never the
/// system Python). Returns the venv's `python3`.
pub fn ensure_duckdb() -> Result<PathBuf, String> {
    ensure_python_package("duckdb", DUCKDB_VERSION)
}

/// The version of llama.cpp's own GGUF writer (PyPI `gguf`) the local-model
/// tests make their tiny models with (e2e/lib/tiny_gguf.py).
pub const GGUF_VERSION: &str = "0.17.1";

pub fn ensure_gguf() -> Result<PathBuf, String> {
    ensure_python_package("gguf", GGUF_VERSION)
}

/// A venv under target/ holding one pinned PyPI package (never the system
/// Python). Returns the venv's `python3`.
fn ensure_python_package(package: &str, version: &str) -> Result<PathBuf, String> {
    let venv = root().join(format!("target/{package}-venv"));
    let python = venv.join("bin/python3");
    let stamp = venv.join(format!(".lifeline-{package}"));
    if python.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(version) {
        return Ok(python);
    }
    println!("xtask: installing {package} {version} into target/{package}-venv (pip)");
    if !python.exists() {
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            // Debian ships venv (with ensurepip) as its own package.
            println!("xtask: installing Debian's python3-venv (apt-get)");
            let _ = std::fs::remove_dir_all(&venv);
            run_command(Command::new("apt-get").arg("update"))?;
            run_command(
                Command::new("apt-get")
                    .args(["install", "-y", "--no-install-recommends", "python3-venv"])
                    .env("DEBIAN_FRONTEND", "noninteractive"),
            )?;
            run_command(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        }
    }
    run_command(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(format!("{package}=={version}")),
    )?;
    std::fs::write(&stamp, version).map_err(|error| format!("cannot write {stamp:?}: {error}"))?;
    Ok(python)
}

pub fn hex_sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_package_version_in_a_lock_file() {
        let lock = "[[package]]\nname = \"wasm-bindgen\"\nversion = \"0.2.130\"\n\n[[package]]\nname = \"wasm-bindgen-futures\"\nversion = \"0.4.80\"\n";
        assert_eq!(
            version_in_lock(lock, "wasm-bindgen").as_deref(),
            Some("0.2.130")
        );
        assert_eq!(
            version_in_lock(lock, "wasm-bindgen-futures").as_deref(),
            Some("0.4.80")
        );
        assert_eq!(version_in_lock(lock, "serde"), None);
    }

    #[test]
    fn the_workspace_pins_wasm_bindgen_exactly() {
        let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains("wasm-bindgen = \"=0.2."),
            "pin wasm-bindgen with = so the CLI version is known"
        );
        let pinned = pinned_wasm_bindgen_version().unwrap();
        assert!(manifest.contains(&format!("\"={pinned}\"")));
    }
}
