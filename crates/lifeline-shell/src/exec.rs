//! Running parsed pipelines: expansion, redirections and pipes.

use crate::io::{emit, Abort, Io, Sink};
use crate::limits::{MAX_ARGS_BYTES, MAX_FILE_LEN};
use crate::parse::{Command, Connector, Part, Pipeline, RedirectKind, Word};
use crate::{commands, Context, Host, Stream};

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
        let mut io = Io::new(
            self.host,
            self.ctx,
            args[0].clone(),
            stdin,
            &mut *self.term,
            sink,
        );
        let status = commands::dispatch(&mut io, &args).await?;
        io.flush().await?;
        let captured = io.finish();
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
