//! The built-in shell of a runtime worker (see DESIGN.md, "The built-in local
//! agent"), independent of the browser: it parses a command line and runs it
//! against an abstract [`Host`] (the session's OPFS workspace in production,
//! a map in tests).
//!
//! # Grammar
//!
//! ```text
//! line      := list? comment?
//! list      := and_or ((';' | newline) and_or)* ';'?
//! and_or    := pipeline (('&&' | '||') pipeline)*
//! pipeline  := command ('|' command)*
//! command   := (word | redirect)+
//! redirect  := ('>' | '>>' | '<') word
//! word      := (plain | '...' | "..." | \c | $NAME | ${NAME} | $?)+
//! comment   := '#' to the end of the line (only where a word could start)
//! ```
//!
//! Inside double quotes `\"`, `\\`, `\$` and `` \` `` are escapes and `$NAME`
//! expands; single quotes are literal. An unquoted expansion is split into
//! fields on blanks; a quoted one never is. `&&` and `||` are left-associative
//! with equal precedence, as in POSIX. Parse errors print
//! ``lifeline: syntax error near `|` `` and exit with status 2.
//!
//! # Deliberate simplifications
//!
//! - Pipeline stages run one after another, not concurrently. A non-final
//!   stage's output is kept in memory (at most [`limits::MAX_PIPE_BUFFER`],
//!   a clear error beyond) and becomes the next stage's input; only the final
//!   stage streams. So `seq 1 100000000 | head -1` fails instead of stopping
//!   early; redirect big data to a file instead.
//! - Files are read whole into memory (at most [`limits::MAX_FILE_LEN`]).
//! - No globbing (`*` is literal), no command substitution, subshells,
//!   background jobs, functions, assignments, `cd` or file descriptors other
//!   than standard output for redirections (`2>` is not special).
//! - Standard error is never piped or redirected: it goes straight to the
//!   caller.
//! - `cp` and `mv` are built from read, write and remove; `mv` copies then
//!   deletes, so an interruption can leave both copies (never neither).
//! - Names sort by bytes (the C locale).
//! - grep's patterns (GNU basic, `-E`, `-F`) are translated to ECMAScript
//!   and compiled by the host's engine ([`Host::regex`]: the browser's
//!   `RegExp`), so back references work and POSIX classes are ASCII. That
//!   engine backtracks: a pathological pattern can keep the runtime busy,
//!   which the page then shows as not responding, with Stop runtime.
//!
//! # Bytes inside, text outside
//!
//! File data and pipes are bytes; what reaches the output callback is UTF-8,
//! with invalid sequences replaced (a sequence split across two writes is
//! held back, not mangled).
//!
//! # Streaming, yielding and cancellation
//!
//! Output reaches the callback in pieces of at most [`limits::CHUNK`] bytes
//! as it is produced, and the shell awaits [`Host::yield_now`] after every
//! such piece and every [`limits::YIELD_EVERY_ITERATIONS`] loop steps, so the
//! worker keeps running timers and messages during `seq 1 1000000`.
//!
//! Cancellation is dropping the future returned by [`run`]. That is safe in
//! the sense of killing a process: nothing is corrupted in memory, but work
//! already done stays done, and a file being written may be left partially
//! written (or a `mv` half done, as above).

mod commands;
mod exec;
mod host;
mod io;
mod opts;
mod parse;
mod path;
mod pattern;
mod text;

pub use commands::BUILTINS;
pub use host::{DirEntry, EntryKind, FsError, Host};
pub use path::{WorkspacePath, MAX_NAME_LEN, MAX_PATH_LEN};

pub use litemap::LiteMap;

/// Bounds on everything the shell holds in memory or loops over, so a hostile
/// or mistaken command line fails with a clear message instead of exhausting
/// the worker.
pub mod limits {
    /// Longest command line, in bytes.
    pub const MAX_LINE_LEN: usize = 64 * 1024;
    /// Words and operators in one line.
    pub const MAX_TOKENS: usize = 16 * 1024;
    /// Words in one simple command.
    pub const MAX_WORDS: usize = 4096;
    /// Commands in one pipeline.
    pub const MAX_STAGES: usize = 32;
    /// Pipelines in one line.
    pub const MAX_PIPELINES: usize = 1024;
    /// Total size of one command's arguments after expansion, in bytes.
    pub const MAX_ARGS_BYTES: usize = 1024 * 1024;
    /// Largest file read into memory.
    pub const MAX_FILE_LEN: u64 = 64 * 1024 * 1024;
    /// Largest output of a non-final pipeline stage.
    pub const MAX_PIPE_BUFFER: usize = 16 * 1024 * 1024;
    /// Entries one `cp -r` or `mv` may copy.
    pub const MAX_TREE_ENTRIES: usize = 100_000;
    /// Largest piece of output handed to the callback at once, in bytes;
    /// also the amount of output after which the host gets a turn.
    pub const CHUNK: usize = 64 * 1024;
    /// Loop steps after which the host gets a turn.
    pub const YIELD_EVERY_ITERATIONS: usize = 10_000;
}

/// Which of the caller's two output streams a piece of text belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// What a command line runs with. Owned by the caller and never changed by
/// the shell (there is no `cd` or assignment), so one context can serve a
/// whole agent turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    /// Where relative paths start.
    pub cwd: WorkspacePath,
    /// The profile's environment variables, what `$NAME` and `env` see.
    /// A sorted vector, not a `BTreeMap`: a few dozen names at most, and
    /// no B-tree code in the runtime's module.
    pub env: LiteMap<String, String>,
    /// What the profile allows beyond the workspace; `"js"` enables `js`.
    pub capabilities: Vec<String>,
}

impl Default for Context {
    fn default() -> Self {
        Context {
            cwd: WorkspacePath::root(),
            env: LiteMap::new_vec(),
            capabilities: Vec::new(),
        }
    }
}

/// Runs one command line and returns its exit status (that of the last
/// pipeline that ran; 2 for a syntax error, 127 for an unknown command).
///
/// Output is streamed to `out` as it is produced (see the crate docs); the
/// future is cancelled by dropping it.
pub async fn run<H: Host>(
    host: &H,
    line: &str,
    ctx: &Context,
    out: &mut dyn FnMut(Stream, &str),
) -> i32 {
    let pipelines = match parse::parse(line) {
        Ok(pipelines) => pipelines,
        Err(message) => {
            out(Stream::Stderr, &format!("lifeline: {message}\n"));
            return 2;
        }
    };
    let mut shell = exec::Shell {
        host,
        ctx,
        term: out,
        status: 0,
    };
    shell.run_all(pipelines).await
}
