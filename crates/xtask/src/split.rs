//! The page's module split at its `wasm_split` points: code that only a
//! split point reaches (the Profiles dialog's editor) goes to a module of
//! its own that the page fetches when it first needs it, and the page's
//! first visit does not carry it.
//!
//! Runs between cargo and wasm-bindgen, as cargo-leptos's `--split` does:
//! the splitter reads the linker's relocations (`web/build.rs` keeps them),
//! writes the main module for wasm-bindgen, the split modules and the
//! `__wasm_split.js` that loads them into the bundle.

use std::path::{Path, PathBuf};

/// The module whose code is split; the workers are not.
pub const SPLIT_MODULE: &str = "lifeline_web";

/// The loader the main module imports, relative to the bundle root.
const LINK: &str = "./__wasm_split.js";

/// Splits `wasm_dir/lifeline_web.wasm` into `out` (the split modules and
/// their loader). Returns the main module, for wasm-bindgen, with the
/// same file name in a directory of its own, and the split modules.
pub fn split(wasm_dir: &Path, out: &Path) -> Result<(PathBuf, Vec<PathBuf>), String> {
    let input = wasm_dir.join(format!("{SPLIT_MODULE}.wasm"));
    let wasm = std::fs::read(&input).map_err(|e| format!("cannot read {input:?}: {e}"))?;
    let main_dir = wasm_dir.join("split");
    if main_dir.exists() {
        // A split module that is no longer made must not be reported.
        std::fs::remove_dir_all(&main_dir)
            .map_err(|e| format!("cannot clear {main_dir:?}: {e}"))?;
    }
    std::fs::create_dir_all(&main_dir).map_err(|e| format!("cannot create {main_dir:?}: {e}"))?;
    let main = main_dir.join(format!("{SPLIT_MODULE}.wasm"));
    let main_module = format!("./{SPLIT_MODULE}.js");
    let mut options = wasm_split_cli_support::Options::new(&wasm);
    options.output_dir = out;
    options.main_out_path = &main;
    options.main_module = &main_module;
    options.link_name = LINK;
    let split = wasm_split_cli_support::transform(options)
        .map_err(|e| format!("cannot split {input:?}: {e:#}"))?;
    if split.split_modules.is_empty() {
        return Err(format!(
            "{input:?} has no split module: a wasm_split point is gone, or \
             the linker dropped its relocations (web/build.rs)"
        ));
    }
    // wasm-bindgen strips the main module; nothing runs over the split
    // ones, whose function names alone were more than their code. A copy
    // with the names stays beside the main module for the footprint report.
    for module in &split.split_modules {
        let bytes = std::fs::read(module).map_err(|e| format!("cannot read {module:?}: {e}"))?;
        let named = main_dir.join(
            module
                .file_name()
                .ok_or("a split module has no file name")?,
        );
        std::fs::write(&named, &bytes).map_err(|e| format!("cannot write {named:?}: {e}"))?;
        let stripped = without_custom_sections(&bytes)
            .map_err(|e| format!("cannot read the split module {module:?}: {e}"))?;
        std::fs::write(module, stripped).map_err(|e| format!("cannot write {module:?}: {e}"))?;
    }
    Ok((main, split.split_modules))
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
