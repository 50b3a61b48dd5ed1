//! The seam between the shell and the storage it runs on (OPFS in the
//! browser, a map in tests).

use crate::WorkspacePath;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EntryKind {
    File,
    Directory,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub kind: EntryKind,
}

/// Why a host operation failed. The variants mirror the errno values GNU tools
/// report, so the shell can print the messages people and agents already know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FsError {
    NotFound,
    AlreadyExists,
    NotADirectory,
    IsADirectory,
    NotEmpty,
    /// The file is larger than the limit the caller passed to [`Host::read`].
    TooLarge,
    /// The path cannot name a file here (escapes the root, name too long,
    /// a character the storage refuses); the text says which.
    InvalidPath(String),
    /// Anything else; the text must tell the user what to do about it.
    Other(String),
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FsError::NotFound => "No such file or directory",
            FsError::AlreadyExists => "File exists",
            FsError::NotADirectory => "Not a directory",
            FsError::IsADirectory => "Is a directory",
            FsError::NotEmpty => "Directory not empty",
            FsError::TooLarge => "File too large",
            FsError::InvalidPath(text) | FsError::Other(text) => text,
        })
    }
}

impl std::error::Error for FsError {}

/// What the shell needs from its environment. Deliberately tiny: `cp`, `mv`,
/// `mkdir -p` and friends are composed from these primitives in the shell, so
/// every host gets them for free and they behave the same everywhere.
///
/// Futures need not be `Send`: the browser host is single-threaded and its
/// handles are not `Send`.
///
/// Contract for paths: every path is normalised (see [`WorkspacePath`]); a
/// missing parent directory is [`FsError::NotFound`], a file where a directory
/// is expected is [`FsError::NotADirectory`].
#[allow(async_fn_in_trait)]
pub trait Host {
    /// The whole content of a file; [`FsError::IsADirectory`] for a directory
    /// and [`FsError::TooLarge`] (without reading it) if it is over `max_len`
    /// bytes, so a huge file cannot exhaust the worker's memory.
    async fn read(&self, path: &WorkspacePath, max_len: u64) -> Result<Vec<u8>, FsError>;
    /// Creates the file if missing, then replaces its content or (with
    /// `append`) adds to its end. The parent directory must exist.
    async fn write(&self, path: &WorkspacePath, data: &[u8], append: bool) -> Result<(), FsError>;
    /// The entries of a directory, in any order.
    async fn list(&self, path: &WorkspacePath) -> Result<Vec<DirEntry>, FsError>;
    /// What is at `path`, or `None` if nothing is.
    async fn kind(&self, path: &WorkspacePath) -> Result<Option<EntryKind>, FsError>;
    /// Creates one directory; [`FsError::AlreadyExists`] if anything is there.
    async fn create_dir(&self, path: &WorkspacePath) -> Result<(), FsError>;
    /// Removes a file or directory; a non-empty directory needs `recursive`
    /// ([`FsError::NotEmpty`] otherwise).
    async fn remove(&self, path: &WorkspacePath, recursive: bool) -> Result<(), FsError>;
    /// Really waits; this is how `sleep` can be interrupted by cancellation.
    async fn sleep(&self, millis: u64);
    /// Called regularly during CPU-bound work so the worker can run timers,
    /// flush output and see cancellation.
    async fn yield_now(&self);
    /// Evaluates JavaScript; the value's string form, or the thrown error's
    /// message. Only reached when the profile grants the `js` capability.
    async fn eval_js(&self, source: &str) -> Result<String, String>;
    /// What [`Host::regex`] compiles to.
    type Regex;
    /// A regular expression compiled from ECMAScript source with the `u`
    /// flag, and `i` for `ignore_case` (the browser's `RegExp`); the error
    /// is the engine's reason. The host brings the engine so that the
    /// shell's module carries none (see `pattern.rs`).
    fn regex(&self, source: &str, ignore_case: bool) -> Result<Self::Regex, String>;
    /// Whether `regex` matches anywhere in `line`.
    fn is_match(&self, regex: &Self::Regex, line: &str) -> bool;
}
