//! The controller's module is split after linking, as the page's is
//! (`crates/xtask/src/split.rs`): the splitter follows the linker's
//! relocations, so the linker has to keep them in the module.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-cdylib-link-arg=--emit-relocs");
    }
}
