//! Running parsed pipelines: expansion, redirections, pipes and the output
//! plumbing every built-in writes through.

use crate::limits::{CHUNK, MAX_ARGS_BYTES, MAX_FILE_LEN, MAX_PIPE_BUFFER, YIELD_EVERY_ITERATIONS};
use crate::parse::{Command, Connector, Part, Pipeline, RedirectKind, Word};
use crate::{commands, Context, FsError, Host, Stream, WorkspacePath};

/// A command stopped early; its message has already been written to stderr.
#[derive(Debug)]
pub(crate) struct Abort;

/// Where a stage's standard output goes.
enum Sink {
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
fn emit(term: &mut dyn FnMut(Stream, &str), stream: Stream, mut text: &str) {
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

pub(crate) struct Shell<'a, H: Host> {
    pub host: &'a H,
    pub ctx: &'a Context,
    pub term: &'a mut dyn FnMut(Stream, &str),
    pub status: i32,
}

impl<H: Host> Shell<'_, H> {
    pub async fn run_all(&mut self, pipelines: Vec<Pipeline>) -> i32 {
        for pipeline in pipelines {
            let go = match pipeline.connector {
                Connector::Always => true,
                Connector::IfSuccess => self.status == 0,
                Connector::IfFailure => self.status != 0,
            };
            if go {
                self.status = self.run_pipeline(pipeline.stages).await;
            }
        }
        self.status
    }

    fn shell_err(&mut self, message: &str) {
        emit(self.term, Stream::Stderr, &format!("lifeline: {message}\n"));
    }

    /// Stages run one after another; each non-final stage's output is kept in
    /// memory and becomes the next one's input.
    async fn run_pipeline(&mut self, stages: Vec<Command>) -> i32 {
        let count = stages.len();
        let mut stdin: Vec<u8> = Vec::new();
        let mut status = 0;
        for (index, stage) in stages.into_iter().enumerate() {
            let last = index + 1 == count;
            let input = std::mem::take(&mut stdin);
            match self.run_stage(stage, input, last).await {
                Ok((code, captured)) => {
                    status = code;
                    stdin = captured;
                }
                Err(Abort) => return 1,
            }
        }
        status
    }

    async fn run_stage(
        &mut self,
        stage: Command,
        stdin: Vec<u8>,
        last: bool,
    ) -> Result<(i32, Vec<u8>), Abort> {
        let mut budget = MAX_ARGS_BYTES;
        let mut args: Vec<String> = Vec::new();
        for word in &stage.words {
            match expand(word, self.ctx, self.status, &mut budget) {
                Ok(fields) => args.extend(fields),
                Err(message) => {
                    self.shell_err(&message);
                    return Ok((1, Vec::new()));
                }
            }
        }
        let mut stdin = Some(stdin);
        let mut sink = if last {
            Sink::Terminal
        } else {
            Sink::Capture(Vec::new())
        };
        for redirect in &stage.redirects {
            let target = match expand(&redirect.target, self.ctx, self.status, &mut budget) {
                Ok(mut fields) if fields.len() == 1 => fields.remove(0),
                Ok(_) => {
                    self.shell_err(&format!(
                        "{}: ambiguous redirect",
                        word_text(&redirect.target)
                    ));
                    return Ok((1, Vec::new()));
                }
                Err(message) => {
                    self.shell_err(&message);
                    return Ok((1, Vec::new()));
                }
            };
            let path = match self.ctx.cwd.resolve(&target) {
                Ok(path) => path,
                Err(error) => {
                    self.shell_err(&format!("{target}: {error}"));
                    return Ok((1, Vec::new()));
                }
            };
            let result = match redirect.kind {
                RedirectKind::Input => match self.host.read(&path, MAX_FILE_LEN).await {
                    Ok(data) => {
                        stdin = Some(data);
                        Ok(())
                    }
                    Err(error) => Err(error),
                },
                RedirectKind::Truncate | RedirectKind::Append => {
                    let append = redirect.kind == RedirectKind::Append;
                    match self.host.write(&path, &[], append).await {
                        Ok(()) => {
                            sink = Sink::File {
                                path,
                                shown: target.clone(),
                            };
                            Ok(())
                        }
                        Err(error) => Err(error),
                    }
                }
            };
            if let Err(error) = result {
                self.shell_err(&format!("{target}: {error}"));
                return Ok((1, Vec::new()));
            }
        }
        if args.is_empty() {
            // Only redirections (`> file`): they have done their work.
            return Ok((0, Vec::new()));
        }
        let mut io = Io {
            host: self.host,
            ctx: self.ctx,
            name: args[0].clone(),
            stdin,
            term: &mut *self.term,
            sink,
            pending: Vec::new(),
            carry: Vec::new(),
            bytes_since_yield: 0,
            iterations: 0,
        };
        let status = commands::dispatch(&mut io, &args).await?;
        io.flush().await?;
        if matches!(io.sink, Sink::Terminal) && !io.carry.is_empty() {
            io.emit_pending(true);
        }
        let captured = match io.sink {
            Sink::Capture(buffer) => buffer,
            _ => Vec::new(),
        };
        Ok((status, captured))
    }
}

/// The word as the user wrote it, near enough for an error message.
fn word_text(word: &Word) -> String {
    let mut text = String::new();
    for part in &word.parts {
        match part {
            Part::Literal(t) | Part::Quoted(t) => text.push_str(t),
            Part::Var { name, .. } => {
                text.push('$');
                text.push_str(name);
            }
        }
    }
    text
}

/// Expands one word into fields: variables are substituted, unquoted
/// variable values split on whitespace, and a word that expands to nothing
/// unquoted disappears (so `echo $UNSET x` has one argument).
fn expand(
    word: &Word,
    ctx: &Context,
    status: i32,
    budget: &mut usize,
) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut current = String::new();
    let mut has = false;
    let status_text = status.to_string();
    for part in &word.parts {
        match part {
            Part::Literal(text) | Part::Quoted(text) => {
                current.push_str(text);
                has = true;
            }
            Part::Var { name, quoted } => {
                let value: &str = if name == "?" {
                    &status_text
                } else {
                    ctx.env.get(name).map(String::as_str).unwrap_or("")
                };
                if *quoted {
                    current.push_str(value);
                    has = true;
                    continue;
                }
                let blank = |c: char| c == ' ' || c == '\t' || c == '\n';
                if value.starts_with(blank) && has {
                    fields.push(std::mem::take(&mut current));
                    has = false;
                }
                let mut first = true;
                for piece in value.split(blank).filter(|piece| !piece.is_empty()) {
                    if !first {
                        fields.push(std::mem::take(&mut current));
                    }
                    current.push_str(piece);
                    has = true;
                    first = false;
                }
                if value.ends_with(blank) && has {
                    fields.push(std::mem::take(&mut current));
                    has = false;
                }
            }
        }
        if current.len() > *budget {
            return Err(format!(
                "arguments too long after expansion (the limit is {} bytes)",
                MAX_ARGS_BYTES
            ));
        }
    }
    if has {
        fields.push(current);
    }
    let used: usize = fields.iter().map(|field| field.len() + 1).sum();
    if used > *budget {
        return Err(format!(
            "arguments too long after expansion (the limit is {} bytes)",
            MAX_ARGS_BYTES
        ));
    }
    *budget -= used;
    Ok(fields)
}
