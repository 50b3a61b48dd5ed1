//! What each wasm module's code is made of: the largest contributors by
//! crate, read from the names-kept module cargo builds (wasm-bindgen strips
//! the names from the shipped one), so that a change can see what it costs
//! before the budget check refuses it.
//!
//! Sizes are the raw bytes of function bodies and data segments before
//! wasm-bindgen and gzip, so they rank contributors; the gzip total printed
//! beside the budget is the figure that counts.

use std::path::Path;

use wasmparser::{KnownCustom, Name, Parser, Payload, TypeRef};

/// How many contributors are printed per module.
pub const SHOWN: usize = 15;

/// One group of code and how many bytes of function bodies it holds.
pub struct Contributor {
    pub name: String,
    pub bytes: u64,
    pub functions: u32,
}

/// A module's code, grouped and ranked largest first.
pub struct Footprint {
    pub total: u64,
    pub contributors: Vec<Contributor>,
}

/// Reads a names-kept wasm module and groups its function bodies by the
/// crate each belongs to. Every serde codec — the derived impls in our own
/// crates included — is one group, since they grow together with the number
/// of record and message types and with the deserializers they meet.
pub fn measure(path: &Path) -> Result<Footprint, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {path:?}: {e}"))?;
    let mut imported_functions = 0u32;
    let mut bodies: Vec<u64> = Vec::new();
    let mut names: Vec<(u32, String)> = Vec::new();
    let mut data = 0u64;
    for payload in Parser::new(0).parse_all(&bytes) {
        match payload.map_err(|e| format!("{path:?} is not a wasm module: {e}"))? {
            Payload::ImportSection(reader) => {
                for import in reader.into_imports() {
                    let import = import.map_err(|e| e.to_string())?;
                    if matches!(import.ty, TypeRef::Func(_)) {
                        imported_functions += 1;
                    }
                }
            }
            Payload::CodeSectionEntry(body) => {
                let range = body.range();
                bodies.push((range.end - range.start) as u64);
            }
            Payload::DataSection(reader) => {
                for segment in reader {
                    data += segment.map_err(|e| e.to_string())?.data.len() as u64;
                }
            }
            Payload::CustomSection(section) => {
                if let KnownCustom::Name(reader) = section.as_known() {
                    for subsection in reader {
                        if let Ok(Name::Function(map)) = subsection {
                            for naming in map.into_iter().flatten() {
                                names.push((naming.index, naming.name.to_string()));
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    // A chunk two split modules share may hold only data (no function to
    // name): its footprint is its data.
    if names.is_empty() && !bodies.is_empty() {
        return Err(format!(
            "{path:?} has no function names: build it with names kept"
        ));
    }
    let mut groups: Vec<Contributor> = Vec::new();
    let mut add = |group: String, size: u64| match groups.iter_mut().find(|c| c.name == group) {
        Some(c) => {
            c.bytes += size;
            c.functions += 1;
        }
        None => groups.push(Contributor {
            name: group,
            bytes: size,
            functions: 1,
        }),
    };
    let mut total = 0;
    for (index, name) in &names {
        let Some(local) = index.checked_sub(imported_functions) else {
            continue;
        };
        let Some(&size) = bodies.get(local as usize) else {
            continue;
        };
        let name = format!("{:#}", rustc_demangle::demangle(name));
        // wasm-bindgen runs these at build time and removes them.
        if name.starts_with("__wbindgen_describe") {
            continue;
        }
        total += size;
        add(group_of(&name), size);
    }
    total += data;
    add("data segments (text, tables)".to_string(), data);
    groups.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
    Ok(Footprint {
        total,
        contributors: groups,
    })
}

/// The crate a demangled function name belongs to; for a trait impl
/// (`<T as Trait>::f`) the crate of the implementing type.
fn group_of(name: &str) -> String {
    if name.contains("serde") {
        return "serde codecs (serde_json + derived impls)".to_string();
    }
    let mut rest = name;
    loop {
        let trimmed = rest
            .trim_start_matches(['<', '&', '*', '(', '['])
            .trim_start_matches("mut ")
            .trim_start_matches("const ")
            .trim_start_matches("dyn ")
            .trim_start_matches("impl ");
        if trimmed.len() == rest.len() {
            break;
        }
        rest = trimmed;
    }
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    match &rest[..end] {
        "" => "other".to_string(),
        // `<[T]>::sort`, `<F as FnOnce>::call_once`: generic code whose
        // crate the name does not say.
        generic if generic.starts_with(|c: char| c.is_ascii_uppercase()) => {
            "generic (slices, closures)".to_string()
        }
        krate => krate.to_string(),
    }
}

pub fn print(module: &str, footprint: &Footprint) {
    println!(
        "\n{module}: {:.1} KB of code and data before wasm-bindgen and gzip; largest {SHOWN}:",
        footprint.total as f64 / 1024.0
    );
    for c in footprint.contributors.iter().take(SHOWN) {
        println!(
            "  {:>8.1} KB {:>5.1} % {:>6} fns  {}",
            c.bytes as f64 / 1024.0,
            100.0 * c.bytes as f64 / footprint.total.max(1) as f64,
            c.functions,
            c.name
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_are_grouped_by_the_crate_of_their_type() {
        assert_eq!(group_of("lifeline_engine::Engine::pump"), "lifeline_engine");
        assert_eq!(
            group_of("<alloc::vec::Vec<T> as core::clone::Clone>::clone"),
            "alloc"
        );
        assert_eq!(
            group_of("<&mut serde_json::de::Deserializer<R> as serde_core::de::Deserializer>::deserialize_struct"),
            "serde codecs (serde_json + derived impls)"
        );
        assert_eq!(
            group_of("lifeline_core::journal::_::<impl serde_core::ser::Serialize for lifeline_core::journal::JournalRecord>::serialize"),
            "serde codecs (serde_json + derived impls)"
        );
        assert_eq!(group_of("dlmalloc"), "dlmalloc");
        assert_eq!(group_of("<[T]>::sort"), "generic (slices, closures)");
    }

    #[test]
    fn a_module_of_data_only_is_its_data() {
        // A memory import and one 3-byte data segment: what a chunk two
        // split modules share can be.
        let module: &[u8] = &[
            0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // header
            0x02, 0x0a, 0x01, 0x01, b'm', 0x03, b'm', b'e', b'm', 0x02, 0x00, 0x01, // import
            0x0b, 0x09, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x03, b'a', b'b', b'c', // data
        ];
        let path = std::env::temp_dir().join(format!("footprint-data-{}.wasm", std::process::id()));
        std::fs::write(&path, module).unwrap();
        let footprint = measure(&path);
        let _ = std::fs::remove_file(&path);
        let footprint = footprint.expect("a data-only module has a footprint");
        assert_eq!(footprint.total, 3);
        assert_eq!(footprint.contributors.len(), 1);
        assert_eq!(
            footprint.contributors[0].name,
            "data segments (text, tables)"
        );
    }
}
