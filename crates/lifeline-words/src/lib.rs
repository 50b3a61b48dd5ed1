//! Wording: every phrase the core and the controller compose, in the
//! reader's language.
//!
//! The core and the engine speak in structured phrases
//! (`lifeline_core::phrase::Phrase`: a message identity with typed
//! arguments). The controller words them here before posting, so the page
//! receives strings: it carries no phrase decoder and no wording code (its
//! wasm budget), and a new phrase costs the page nothing. The page's own
//! labels stay in the page's catalog.
//!
//! Layout: `catalog` holds the phrases' texts, `german` their German column
//! once fetched (in the worker), `format` fills parameters and formats
//! numbers and sizes, `phrase` words a phrase, `locale` names the
//! languages.

mod catalog;
mod format;
pub mod german;
mod locale;
mod phrase;

pub use catalog::{t, Msg};
pub use format::{bytes, fill, fnv1a, num};
pub use locale::Locale;
pub use phrase::phrase;

#[cfg(test)]
mod tests;
