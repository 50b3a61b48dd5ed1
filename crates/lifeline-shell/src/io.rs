//! One running command's standard streams: the output plumbing every
//! built-in writes through (chunking, yielding, pipes, files, stderr).

use crate::limits::{CHUNK, MAX_FILE_LEN, MAX_PIPE_BUFFER, YIELD_EVERY_ITERATIONS};
use crate::{Context, FsError, Host, Stream, WorkspacePath};

/// A command stopped early; its message has already been written to stderr.
#[derive(Debug)]
pub(crate) struct Abort;

/// Where a stage's standard output goes.
pub(crate) enum Sink {
    /// The caller's output callback (the last stage without `>`).
    Terminal,
    /// The in-memory pipe to the next stage.
    Capture(Vec<u8>),
    /// A file from `>` or `>>`; it was created or truncated before the
    /// command ran, so every later write appends.
    File { path: WorkspacePath, shown: String },
}

/// One running command's standard streams and its view of the shell.
pub(crate) struct Io<'a, H: Host> {
    pub host: &'a H,
    pub ctx: &'a Context,
    /// For messages: `cat: x: No such file or directory`.
    pub name: String,
    stdin: Option<Vec<u8>>,
    term: &'a mut dyn FnMut(Stream, &str),
    sink: Sink,
    /// Output not yet handed to the terminal or file.
    pending: Vec<u8>,
    /// The start of a UTF-8 sequence split across two writes, held back so
    /// it is not turned into replacement characters.
    carry: Vec<u8>,
    bytes_since_yield: usize,
    iterations: usize,
}

impl<'a, H: Host> Io<'a, H> {
    /// A command's streams: `stdin` (from a pipe or `<`) and where its
    /// standard output goes.
    pub(crate) fn new(
        host: &'a H,
        ctx: &'a Context,
        name: String,
        stdin: Option<Vec<u8>>,
        term: &'a mut dyn FnMut(Stream, &str),
        sink: Sink,
    ) -> Self {
        Io {
            host,
            ctx,
            name,
            stdin,
            term,
            sink,
            pending: Vec::new(),
            carry: Vec::new(),
            bytes_since_yield: 0,
            iterations: 0,
        }
    }

    /// Ends the command, after a last [`Io::flush`]: hands on a held-back
    /// partial character and returns what a pipe captured (nothing for the
    /// terminal or a file).
    pub(crate) fn finish(mut self) -> Vec<u8> {
        if matches!(self.sink, Sink::Terminal) && !self.carry.is_empty() {
            self.emit_pending(true);
        }
        match self.sink {
            Sink::Capture(buffer) => buffer,
            _ => Vec::new(),
        }
    }

    /// Writes standard output. Output is handed on in pieces of at most
    /// [`CHUNK`] bytes and the host gets a turn after every piece, so a huge
    /// output neither sits in memory nor starves the worker.
    pub async fn out(&mut self, bytes: &[u8]) -> Result<(), Abort> {
        for piece in bytes.chunks(CHUNK) {
            match &mut self.sink {
                Sink::Capture(buffer) => {
                    if buffer.len() + piece.len() > MAX_PIPE_BUFFER {
                        let name = self.name.clone();
                        self.shell_err(&format!(
                            "{name}: output into the pipe exceeds the {} MiB buffer \
                             (pipes are buffered in memory; write to a file with `>` instead)",
                            MAX_PIPE_BUFFER >> 20
                        ));
                        return Err(Abort);
                    }
                    buffer.extend_from_slice(piece);
                }
                Sink::Terminal | Sink::File { .. } => {
                    self.pending.extend_from_slice(piece);
                    if self.pending.len() >= CHUNK {
                        self.flush().await?;
                    }
                }
            }
            self.bytes_since_yield += piece.len();
            if self.bytes_since_yield >= CHUNK {
                self.bytes_since_yield = 0;
                self.iterations = 0;
                self.host.yield_now().await;
            }
        }
        Ok(())
    }

    pub async fn out_str(&mut self, text: &str) -> Result<(), Abort> {
        self.out(text.as_bytes()).await
    }

    /// Counts one step of a loop and lets the host run every few thousand,
    /// so loops that print little (`grep -c`, `seq | ...`) stay interruptible.
    pub async fn tick(&mut self) -> Result<(), Abort> {
        self.iterations += 1;
        if self.iterations >= YIELD_EVERY_ITERATIONS {
            self.iterations = 0;
            if matches!(self.sink, Sink::Terminal) {
                self.flush().await?;
            }
            self.host.yield_now().await;
        }
        Ok(())
    }

    /// Hands pending output on (before a sleep, at the end of a command).
    pub async fn flush(&mut self) -> Result<(), Abort> {
        if self.pending.is_empty() {
            return Ok(());
        }
        match &self.sink {
            Sink::Terminal => {
                self.emit_pending(false);
                Ok(())
            }
            Sink::File { path, shown } => {
                let data = std::mem::take(&mut self.pending);
                if let Err(error) = self.host.write(path, &data, true).await {
                    let shown = shown.clone();
                    self.shell_err(&format!("{shown}: {error}"));
                    return Err(Abort);
                }
                Ok(())
            }
            Sink::Capture(_) => Ok(()),
        }
    }

    fn emit_pending(&mut self, last: bool) {
        let mut data = std::mem::take(&mut self.carry);
        data.append(&mut self.pending);
        let keep = if last { 0 } else { incomplete_utf8_tail(&data) };
        self.carry = data.split_off(data.len() - keep);
        emit(self.term, Stream::Stdout, &String::from_utf8_lossy(&data));
    }

    /// `name: message` on stderr, after any stdout written so far so the two
    /// read in order.
    pub fn err(&mut self, message: &str) {
        let line = format!("{}: {message}", self.name);
        self.raw_err(&line);
    }

    /// A message on stderr without the command name prefix.
    pub fn raw_err(&mut self, line: &str) {
        if matches!(self.sink, Sink::Terminal) && !self.pending.is_empty() {
            self.emit_pending(false);
        }
        let mut text = line.to_string();
        text.push('\n');
        emit(self.term, Stream::Stderr, &text);
    }

    /// `lifeline: message` on stderr.
    pub fn shell_err(&mut self, message: &str) {
        self.raw_err(&format!("lifeline: {message}"));
    }

    /// Takes standard input; a second `-` operand gets nothing, as in a real
    /// shell where the first reader consumed it.
    pub fn take_stdin(&mut self) -> Vec<u8> {
        self.stdin.take().unwrap_or_default()
    }

    pub fn resolve(&self, operand: &str) -> Result<WorkspacePath, FsError> {
        self.ctx.cwd.resolve(operand)
    }

    /// A file operand's content (`-` is standard input), within the memory limit.
    pub async fn read_operand(&mut self, operand: &str) -> Result<Vec<u8>, FsError> {
        if operand == "-" {
            return Ok(self.take_stdin());
        }
        let path = self.resolve(operand)?;
        self.host.read(&path, MAX_FILE_LEN).await
    }

    /// The standard `cmd: operand: error` report for a file error.
    pub fn file_err(&mut self, operand: &str, error: &FsError) {
        let message = match error {
            FsError::TooLarge => format!(
                "{operand}: File too large (the shell reads at most {} MiB into memory)",
                MAX_FILE_LEN >> 20
            ),
            other => format!("{operand}: {other}"),
        };
        self.err(&message);
    }
}

/// Hands text to the caller in pieces of at most [`CHUNK`] bytes, cut on
/// character boundaries.
pub(crate) fn emit(term: &mut dyn FnMut(Stream, &str), stream: Stream, mut text: &str) {
    while !text.is_empty() {
        let mut cut = text.len().min(CHUNK);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let (head, rest) = text.split_at(cut);
        term(stream, head);
        text = rest;
    }
}

/// How many bytes at the end of `data` start a UTF-8 sequence that is not
/// complete yet.
fn incomplete_utf8_tail(data: &[u8]) -> usize {
    let start = data.len().saturating_sub(3);
    for index in (start..data.len()).rev() {
        let byte = data[index];
        if byte & 0xC0 == 0x80 {
            continue;
        }
        let needed = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return 0,
        };
        let have = data.len() - index;
        return if have < needed { have } else { 0 };
    }
    0
}
