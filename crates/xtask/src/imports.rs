//! Short names for the functions a module imports from its own glue.
//!
//! wasm-bindgen imports every JS function a module calls from module
//! `./<name>_bg.js`, under a name such as `__wbg_new_ba40181b3f24ac80`, and
//! its glue (`<name>.js`) passes them in one object with those names as
//! keys. The names mean nothing to either side, yet they are written out
//! in full in both: 234 in the page's module, 13.3 KB raw and about 4.4 KB
//! of its gzip size, with a hash in each that gzip cannot fold
//! (docs/benchmarks.md, "Twenty-first stop"). Here each is renamed, in the
//! module and in the glue alike, to the shortest name not yet taken, and
//! the module `./<name>_bg.js` to [`MODULE`]. The other imports (a split
//! module's loader) keep their names.
//!
//! The glue is rewritten by text, so each rename checks what it replaces:
//! every name must be found exactly once, as a key of the import object,
//! or nothing is written and the build fails, saying which name. A newer
//! wasm-bindgen that writes its glue otherwise fails the build, not the
//! app.

use std::path::Path;
use wasmparser::{BinaryReader, ImportSectionReader};

/// The module name the renamed imports come from.
pub const MODULE: &str = "w";

/// What precedes a key in the glue's import object, and the module
/// name's key in its object of modules: a line of its own, indented.
const KEY_INDENT: &str = "\n        ";

/// Renames the imports `wasm` takes from `./<name>_bg.js`, in `wasm` and
/// in its glue `js`, in place. Neither file is written unless both
/// renames succeeded.
pub fn shorten(wasm: &Path, js: &Path, name: &str) -> Result<(), String> {
    let module = std::fs::read(wasm).map_err(|e| format!("cannot read {wasm:?}: {e}"))?;
    let glue = std::fs::read_to_string(js).map_err(|e| format!("cannot read {js:?}: {e}"))?;
    let own = format!("./{name}_bg.js");
    let (module, renames) = rename_imports(&module, &own)?;
    let glue = rename_keys(&glue, &own, &renames).map_err(|e| format!("{js:?}: {e}"))?;
    std::fs::write(wasm, module).map_err(|e| format!("cannot write {wasm:?}: {e}"))?;
    std::fs::write(js, glue).map_err(|e| format!("cannot write {js:?}: {e}"))
}

/// The `index`th short name: a letter, then letters, digits, `_` or `$`.
/// None is `__proto__`, which an object literal would read as its
/// prototype, nor a number.
fn short_name(mut index: usize) -> String {
    const FIRST: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const REST: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$";
    let mut name = String::from(FIRST[index % FIRST.len()] as char);
    index /= FIRST.len();
    while index > 0 {
        index -= 1;
        name.push(REST[index % REST.len()] as char);
        index /= REST.len();
    }
    name
}

/// One section of a module: its id and where its content lies.
struct Section {
    id: u8,
    start: usize,
    content: std::ops::Range<usize>,
}

fn sections(module: &[u8]) -> Result<Vec<Section>, String> {
    if module.len() < 8 || &module[..4] != b"\0asm" {
        return Err("not a wasm module".to_owned());
    }
    let mut found = Vec::new();
    let mut at = 8;
    while at < module.len() {
        let start = at;
        let id = module[at];
        let (size, begin) = var_u32(module, at + 1)?;
        let end = begin
            .checked_add(size as usize)
            .filter(|end| *end <= module.len())
            .ok_or("a section runs past the module's end")?;
        found.push(Section {
            id,
            start,
            content: begin..end,
        });
        at = end;
    }
    Ok(found)
}

/// The unsigned LEB128 number at `at`, and where it ends.
fn var_u32(bytes: &[u8], at: usize) -> Result<(u32, usize), String> {
    let mut reader = BinaryReader::new(bytes.get(at..).unwrap_or_default(), at as u64);
    let value = reader.read_var_u32().map_err(|e| e.to_string())?;
    Ok((value, at + reader.current_position()))
}

/// `module` with the imports from `own` renamed, and the renames (old name,
/// new name) in the order of the imports.
fn rename_imports(module: &[u8], own: &str) -> Result<(Vec<u8>, Vec<(String, String)>), String> {
    const IMPORT: u8 = 2;
    let all = sections(module)?;
    let section = all
        .iter()
        .find(|s| s.id == IMPORT)
        .ok_or("the module imports nothing")?;
    let reader = ImportSectionReader::new(BinaryReader::new(
        &module[section.content.clone()],
        section.content.start as u64,
    ))
    .map_err(|e| e.to_string())?;
    let mut imports = wasm_encoder::ImportSection::new();
    let mut renames = Vec::new();
    for import in reader.into_imports() {
        let import = import.map_err(|e| e.to_string())?;
        let ty = wasm_encoder::EntityType::try_from(import.ty)
            .map_err(|_| format!("cannot write the type of import {}", import.name))?;
        if import.module == own {
            let short = short_name(renames.len());
            imports.import(MODULE, &short, ty);
            renames.push((import.name.to_owned(), short));
        } else {
            if import.module == MODULE {
                return Err(format!("an import already comes from module {MODULE:?}"));
            }
            imports.import(import.module, import.name, ty);
        }
    }
    let mut out = module[..section.start].to_vec();
    // The section as a module of its own writes it, less that module's
    // header.
    let mut alone = wasm_encoder::Module::new();
    alone.section(&imports);
    out.extend_from_slice(&alone.as_slice()[8..]);
    out.extend_from_slice(&module[section.content.end..]);
    Ok((out, renames))
}

/// `glue` with each import object key of `renames`, and the module `own`,
/// renamed: each found exactly once, or an error naming the first that is
/// not.
fn rename_keys(glue: &str, own: &str, renames: &[(String, String)]) -> Result<String, String> {
    let mut out = glue.to_owned();
    let module_key = (
        format!("{KEY_INDENT}\"{own}\": "),
        format!("{KEY_INDENT}\"{MODULE}\": "),
    );
    let keys = renames.iter().map(|(old, new)| {
        (
            format!("{KEY_INDENT}{old}: "),
            format!("{KEY_INDENT}{new}: "),
        )
    });
    for (old, new) in std::iter::once(module_key).chain(keys) {
        match out.matches(&old).count() {
            1 => out = out.replacen(&old, &new, 1),
            n => {
                return Err(format!(
                "wasm-bindgen's glue has {n} keys {:?}, not one: it changed how it passes imports",
                old.trim()
            ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module importing two functions from its glue and one from a
    /// loader, with a memory and a function body after the imports.
    fn module() -> Vec<u8> {
        use wasm_encoder::*;
        let mut m = Module::new();
        let mut types = TypeSection::new();
        types.ty().function([], []);
        m.section(&types);
        let mut imports = ImportSection::new();
        imports.import(
            "./app_bg.js",
            "__wbg_new_0123456789abcdef",
            EntityType::Function(0),
        );
        imports.import(
            "./split/__wasm_split.js",
            "__wasm_split_load_x",
            EntityType::Function(0),
        );
        imports.import(
            "./app_bg.js",
            "__wbg_call_fedcba9876543210",
            EntityType::Function(0),
        );
        m.section(&imports);
        let mut functions = FunctionSection::new();
        functions.function(0);
        m.section(&functions);
        let mut code = CodeSection::new();
        let mut body = Function::new([]);
        body.instruction(&Instruction::Call(2));
        body.instruction(&Instruction::End);
        code.function(&body);
        m.section(&code);
        m.finish()
    }

    const GLUE: &str = "function __wbg_get_imports() {
    const import0 = {
        __proto__: null,
        __wbg_new_0123456789abcdef: function(arg0) {
            return new Thing(arg0);
        },
        __wbg_call_fedcba9876543210: function(arg0) {
            arg0.call();
        },
    };
    return {
        __proto__: null,
        \"./app_bg.js\": import0,
        \"./split/__wasm_split.js\": import1,
    };
}";

    fn imports_of(module: &[u8]) -> Vec<(String, String)> {
        let section = sections(module)
            .unwrap()
            .into_iter()
            .find(|s| s.id == 2)
            .unwrap();
        ImportSectionReader::new(BinaryReader::new(
            &module[section.content.clone()],
            section.content.start as u64,
        ))
        .unwrap()
        .into_imports()
        .map(|i| i.unwrap())
        .map(|i| (i.module.to_owned(), i.name.to_owned()))
        .collect()
    }

    #[test]
    fn the_glues_imports_get_short_names_in_module_and_glue_alike() {
        let (renamed, renames) = rename_imports(&module(), "./app_bg.js").unwrap();
        wasmparser::Validator::new().validate_all(&renamed).unwrap();
        assert_eq!(
            imports_of(&renamed),
            [
                ("w".to_owned(), "a".to_owned()),
                (
                    "./split/__wasm_split.js".to_owned(),
                    "__wasm_split_load_x".to_owned()
                ),
                ("w".to_owned(), "b".to_owned()),
            ]
        );
        // Every other section is as it was.
        let before = sections(&module()).unwrap();
        let after = sections(&renamed).unwrap();
        assert_eq!(before.len(), after.len());
        let original = module();
        for (b, a) in before.iter().zip(&after).filter(|(b, _)| b.id != 2) {
            assert_eq!(original[b.content.clone()], renamed[a.content.clone()]);
        }
        let glue = rename_keys(GLUE, "./app_bg.js", &renames).unwrap();
        assert!(glue.contains("\n        a: function(arg0) {\n            return new Thing"));
        assert!(glue.contains("\n        b: function(arg0) {\n            arg0.call"));
        assert!(glue.contains("\n        \"w\": import0,"));
        assert!(glue.contains("\"./split/__wasm_split.js\": import1"));
        assert!(!glue.contains("__wbg_new") && !glue.contains("__wbg_call"));
    }

    #[test]
    fn a_glue_written_otherwise_is_refused_by_name() {
        let (_, renames) = rename_imports(&module(), "./app_bg.js").unwrap();
        let missing = GLUE.replace(
            "__wbg_call_fedcba9876543210: function",
            "\"__wbg_call_fedcba9876543210\": function",
        );
        let error = rename_keys(&missing, "./app_bg.js", &renames).unwrap_err();
        assert!(
            error.contains("has 0 keys \"__wbg_call_fedcba9876543210:\""),
            "{error}"
        );
        let twice = GLUE.replace(
            "    };\n    return",
            "        __wbg_new_0123456789abcdef: null,\n    };\n    return",
        );
        let error = rename_keys(&twice, "./app_bg.js", &renames).unwrap_err();
        assert!(error.contains("has 2 keys"), "{error}");
    }

    #[test]
    fn shorten_writes_neither_file_when_the_glue_does_not_match() {
        let dir = std::env::temp_dir().join(format!("lifeline-imports-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (wasm, js) = (dir.join("app_bg.wasm"), dir.join("app.js"));
        std::fs::write(&wasm, module()).unwrap();
        std::fs::write(&js, GLUE.replace("\"./app_bg.js\"", "\"./other_bg.js\"")).unwrap();
        assert!(shorten(&wasm, &js, "app").is_err());
        assert_eq!(std::fs::read(&wasm).unwrap(), module());
        std::fs::write(&js, GLUE).unwrap();
        shorten(&wasm, &js, "app").unwrap();
        assert_eq!(
            imports_of(&std::fs::read(&wasm).unwrap())[0],
            ("w".to_owned(), "a".to_owned())
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn short_names_are_distinct_and_never_a_prototype_or_a_number() {
        let names: Vec<String> = (0..10_000).map(short_name).collect();
        let distinct: std::collections::HashSet<&String> = names.iter().collect();
        assert_eq!(distinct.len(), names.len());
        assert_eq!(
            (names[0].as_str(), names[51].as_str(), names[52].as_str()),
            ("a", "Z", "aa")
        );
        for name in &names {
            assert!(name.as_bytes()[0].is_ascii_alphabetic(), "{name}");
            assert_ne!(name, "__proto__");
        }
    }
}
