//! Modules split at their `wasm_split` points: code that only a split
//! point reaches (the Profiles dialog's editor and its list, the recovery
//! card; a profile's save and a local model's import, an export, the
//! journal snapshot's reader) goes to
//! a module of its own that is fetched when first needed, and a first
//! visit does not carry it.
//!
//! Runs between cargo and wasm-bindgen, as cargo-leptos's `--split` does:
//! the splitter reads the linker's relocations (each split crate's
//! `build.rs` keeps them), writes the main module for wasm-bindgen, and the
//! split modules with the `__wasm_split.js` that loads them to a folder of
//! the bundle, one per split module (their chunks' names would collide).

use std::path::{Path, PathBuf};

/// The modules whose code is split, and the bundle's folder for the
/// pieces of each.
pub const SPLIT: [(&str, &str); 2] = [
    ("lifeline_web", "split-page"),
    ("lifeline_controller", "split-controller"),
];

/// Where the main module split from `name` is, for wasm-bindgen: the same
/// file name, in a folder of its own.
pub fn main_of(wasm_dir: &Path, name: &str) -> PathBuf {
    wasm_dir
        .join("split")
        .join(name)
        .join(format!("{name}.wasm"))
}

/// Whether `name` is split.
pub fn is_split(name: &str) -> bool {
    SPLIT.iter().any(|(module, _)| *module == name)
}

/// A split module: where the bundle has it, and a copy that kept its
/// function names (for the footprint report).
pub struct Piece {
    pub shipped: PathBuf,
    pub named: PathBuf,
}

/// Splits `wasm_dir/<name>.wasm` into `out/<folder>` (the split modules
/// and their loader) and [`main_of`].
pub fn split(wasm_dir: &Path, out: &Path, name: &str, folder: &str) -> Result<Vec<Piece>, String> {
    let input = wasm_dir.join(format!("{name}.wasm"));
    let wasm = std::fs::read(&input).map_err(|e| format!("cannot read {input:?}: {e}"))?;
    let main = main_of(wasm_dir, name);
    let main_dir = main
        .parent()
        .ok_or("the main module has no folder")?
        .to_path_buf();
    if main_dir.exists() {
        // A split module that is no longer made must not be reported.
        std::fs::remove_dir_all(&main_dir)
            .map_err(|e| format!("cannot clear {main_dir:?}: {e}"))?;
    }
    std::fs::create_dir_all(&main_dir).map_err(|e| format!("cannot create {main_dir:?}: {e}"))?;
    let folder_out = out.join(folder);
    // The main module imports the loader by this path, from the bundle's
    // root; the splitter writes it to the same path under `folder_out`, and it
    // is moved up beside the modules it fetches (by `./<file>`).
    let link = format!("./{folder}/__wasm_split.js");
    let main_module = format!("../{name}.js");
    let nested = folder_out.join(folder);
    std::fs::create_dir_all(&nested).map_err(|e| format!("cannot create {nested:?}: {e}"))?;
    let mut options = wasm_split_cli_support::Options::new(&wasm);
    options.output_dir = &folder_out;
    options.main_out_path = &main;
    options.main_module = &main_module;
    options.link_name = &link;
    let split = wasm_split_cli_support::transform(options)
        .map_err(|e| format!("cannot split {input:?}: {e:#}"))?;
    if split.split_modules.is_empty() {
        return Err(format!(
            "{input:?} has no split module: a wasm_split point is gone, or \
             the linker dropped its relocations (the crate's build.rs)"
        ));
    }
    let written = nested.join("__wasm_split.js");
    std::fs::rename(&written, folder_out.join("__wasm_split.js"))
        .map_err(|e| format!("cannot move {written:?}: {e}"))?;
    std::fs::remove_dir(&nested).map_err(|e| format!("cannot remove {nested:?}: {e}"))?;
    // wasm-bindgen strips the main module; nothing runs over the split
    // ones, whose function names alone were more than their code. A copy
    // with the names stays beside the main module for the footprint report.
    let mut pieces = Vec::new();
    for module in split.split_modules {
        let bytes = std::fs::read(&module).map_err(|e| format!("cannot read {module:?}: {e}"))?;
        let named = main_dir.join(
            module
                .file_name()
                .ok_or("a split module has no file name")?,
        );
        std::fs::write(&named, &bytes).map_err(|e| format!("cannot write {named:?}: {e}"))?;
        let stripped = without_custom_sections(&bytes)
            .map_err(|e| format!("cannot read the split module {module:?}: {e}"))?;
        std::fs::write(&module, stripped).map_err(|e| format!("cannot write {module:?}: {e}"))?;
        pieces.push(Piece {
            shipped: module,
            named,
        });
    }
    Ok(pieces)
}

/// `wasm` without its custom sections (names, producers, target
/// features: none changes what the module does), encoded anew. The
/// splitter keeps the linker's relocatable encoding, five bytes for every
/// call's function and every address, where the encoder writes the fewest.
fn without_custom_sections(wasm: &[u8]) -> Result<Vec<u8>, String> {
    struct Stripped;
    impl wasm_encoder::reencode::Reencode for Stripped {
        type Error = std::convert::Infallible;
        fn parse_custom_section(
            &mut self,
            _: &mut wasm_encoder::Module,
            _: wasmparser::CustomSectionReader<'_>,
        ) -> Result<(), wasm_encoder::reencode::Error> {
            Ok(())
        }
    }
    let mut module = wasm_encoder::Module::new();
    wasm_encoder::reencode::Reencode::parse_core_module(
        &mut Stripped,
        &mut module,
        wasmparser::Parser::new(0),
        wasm,
    )
    .map_err(|e| e.to_string())?;
    let out = module.finish();
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&out)
        .map_err(|e| format!("the module encoded anew does not validate: {e}"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_sections_go_and_padded_numbers_shrink() {
        // (func (result i32) i32.const 1) with the constant padded to five
        // bytes as a linker keeping relocations writes it, and a name section.
        let mut wasm = b"\0asm\x01\0\0\0".to_vec();
        wasm.extend([1, 5, 1, 0x60, 0, 1, 0x7f]); // type
        wasm.extend([3, 2, 1, 0]); // function
        wasm.extend([10, 10, 1, 8, 0, 0x41, 0x81, 0x80, 0x80, 0x80, 0, 0x0b]); // code
        wasm.extend([0, 5, 4, b'n', b'a', b'm', b'e']);
        let stripped = without_custom_sections(&wasm).unwrap();
        let mut expected = b"\0asm\x01\0\0\0".to_vec();
        expected.extend([1, 5, 1, 0x60, 0, 1, 0x7f]);
        expected.extend([3, 2, 1, 0]);
        expected.extend([10, 6, 1, 4, 0, 0x41, 1, 0x0b]);
        assert_eq!(stripped, expected);
        assert!(without_custom_sections(&wasm[..wasm.len() - 3]).is_err());
        assert!(without_custom_sections(b"\0asx\x01\0\0\0").is_err());
    }
}
