//! Lexing and parsing a command line into a flat list of pipelines.
//!
//! Expansion is not done here but at execution time, so `false; echo $?`
//! sees the status of the command before it.

use crate::limits::{MAX_LINE_LEN, MAX_PIPELINES, MAX_STAGES, MAX_TOKENS, MAX_WORDS};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// Text that came from outside quotes (after backslash escapes).
    Literal(String),
    /// Text that came from single or double quotes; it keeps a word alive
    /// even when empty (`''` is an argument).
    Quoted(String),
    /// `$NAME` or `${NAME}`; unquoted values are split into fields on
    /// whitespace, quoted ones are not.
    Var { name: String, quoted: bool },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Word {
    pub parts: Vec<Part>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RedirectKind {
    /// `>`
    Truncate,
    /// `>>`
    Append,
    /// `<`
    Input,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub kind: RedirectKind,
    pub target: Word,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Command {
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Connector {
    /// `;`, a newline, or the start of the line: always run.
    Always,
    /// `&&`: run if the previous status was 0.
    IfSuccess,
    /// `||`: run if the previous status was not 0.
    IfFailure,
}

/// One `a | b | c` with the operator that decides whether it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pipeline {
    pub connector: Connector,
    pub stages: Vec<Command>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Pipe,
    And,
    Or,
    Semi,
    Newline,
    Great,
    DGreat,
    Less,
}

impl Op {
    fn text(self) -> &'static str {
        match self {
            Op::Pipe => "|",
            Op::And => "&&",
            Op::Or => "||",
            Op::Semi => ";",
            Op::Newline => "newline",
            Op::Great => ">",
            Op::DGreat => ">>",
            Op::Less => "<",
        }
    }
}

#[derive(Debug)]
enum Token {
    Word(Word),
    Op(Op),
}

/// A message ready to print after `lifeline: `.
pub(crate) type ParseError = String;

fn near(text: &str) -> ParseError {
    format!("syntax error near `{text}`")
}

const END: &str = "syntax error near end of line";

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    tokens: Vec<Token>,
    word: Word,
    in_word: bool,
}

impl Lexer<'_> {
    fn literal(&mut self, c: char) {
        self.in_word = true;
        match self.word.parts.last_mut() {
            Some(Part::Literal(text)) => text.push(c),
            _ => self.word.parts.push(Part::Literal(c.to_string())),
        }
    }

    fn quoted(&mut self, text: String) {
        self.in_word = true;
        match self.word.parts.last_mut() {
            Some(Part::Quoted(existing)) => existing.push_str(&text),
            _ => self.word.parts.push(Part::Quoted(text)),
        }
    }

    fn end_word(&mut self) -> Result<(), ParseError> {
        if self.in_word {
            let word = std::mem::take(&mut self.word);
            self.push(Token::Word(word))?;
            self.in_word = false;
        }
        Ok(())
    }

    fn push(&mut self, token: Token) -> Result<(), ParseError> {
        if self.tokens.len() >= MAX_TOKENS {
            return Err(format!(
                "command line has too many words and operators (the limit is {MAX_TOKENS})"
            ));
        }
        self.tokens.push(token);
        Ok(())
    }

    fn op(&mut self, op: Op) -> Result<(), ParseError> {
        self.end_word()?;
        self.push(Token::Op(op))
    }

    /// After a `$`: a variable reference, or a literal `$` when no name follows.
    fn dollar(&mut self, quoted: bool) -> Result<Option<Part>, ParseError> {
        match self.chars.peek().copied() {
            Some('{') => {
                self.chars.next();
                let mut name = String::new();
                loop {
                    match self.chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => return Err("syntax error: missing `}` after `${`".into()),
                    }
                }
                if !(is_name(&name) || name == "?") {
                    return Err(format!("${{{name}}}: bad substitution"));
                }
                Ok(Some(Part::Var { name, quoted }))
            }
            Some('(') => Err("command substitution $(...) is not supported".into()),
            Some('?') => {
                self.chars.next();
                Ok(Some(Part::Var {
                    name: "?".into(),
                    quoted,
                }))
            }
            Some(c) if c.is_ascii_digit() => {
                self.chars.next();
                Ok(Some(Part::Var {
                    name: c.to_string(),
                    quoted,
                }))
            }
            Some(c) if c == '_' || c.is_ascii_alphabetic() => {
                let mut name = String::new();
                while let Some(&c) = self.chars.peek() {
                    if c == '_' || c.is_ascii_alphanumeric() {
                        name.push(c);
                        self.chars.next();
                    } else {
                        break;
                    }
                }
                Ok(Some(Part::Var { name, quoted }))
            }
            _ => Ok(None),
        }
    }

    fn double_quoted(&mut self) -> Result<(), ParseError> {
        self.in_word = true;
        let mut text = String::new();
        loop {
            match self.chars.next() {
                None => return Err("syntax error: unterminated double quote".into()),
                Some('"') => break,
                Some('\\') => match self.chars.peek().copied() {
                    Some(c @ ('"' | '\\' | '$' | '`')) => {
                        self.chars.next();
                        text.push(c);
                    }
                    Some('\n') => {
                        self.chars.next();
                    }
                    _ => text.push('\\'),
                },
                Some('`') => return Err("command substitution `...` is not supported".into()),
                Some('$') => match self.dollar(true)? {
                    Some(var) => {
                        if !text.is_empty() {
                            self.quoted(std::mem::take(&mut text));
                        }
                        self.word.parts.push(var);
                    }
                    None => text.push('$'),
                },
                Some(c) => text.push(c),
            }
        }
        // Always push, even empty: `""` is an argument.
        self.quoted(text);
        Ok(())
    }
}

pub(crate) fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn lex(line: &str) -> Result<Vec<Token>, ParseError> {
    let mut lx = Lexer {
        chars: line.chars().peekable(),
        tokens: Vec::new(),
        word: Word::default(),
        in_word: false,
    };
    while let Some(c) = lx.chars.next() {
        match c {
            ' ' | '\t' | '\r' => lx.end_word()?,
            '\n' => lx.op(Op::Newline)?,
            '#' if !lx.in_word => {
                for c in lx.chars.by_ref() {
                    if c == '\n' {
                        lx.op(Op::Newline)?;
                        break;
                    }
                }
            }
            '|' => {
                if lx.chars.next_if_eq(&'|').is_some() {
                    lx.op(Op::Or)?
                } else {
                    lx.op(Op::Pipe)?
                }
            }
            '&' => {
                if lx.chars.next_if_eq(&'&').is_some() {
                    lx.op(Op::And)?
                } else {
                    return Err(format!("{} (background jobs are not supported)", near("&")));
                }
            }
            ';' => lx.op(Op::Semi)?,
            '>' => {
                if lx.chars.next_if_eq(&'>').is_some() {
                    lx.op(Op::DGreat)?
                } else {
                    lx.op(Op::Great)?
                }
            }
            '<' => lx.op(Op::Less)?,
            '(' | ')' => {
                return Err(format!(
                    "{} (subshells are not supported)",
                    near(&c.to_string())
                ))
            }
            '`' => return Err("command substitution `...` is not supported".into()),
            '\'' => {
                let mut text = String::new();
                loop {
                    match lx.chars.next() {
                        None => return Err("syntax error: unterminated single quote".into()),
                        Some('\'') => break,
                        Some(c) => text.push(c),
                    }
                }
                lx.quoted(text);
            }
            '"' => lx.double_quoted()?,
            '\\' => match lx.chars.next() {
                Some('\n') => {}
                Some(c) => lx.quoted(c.to_string()),
                None => lx.literal('\\'),
            },
            '$' => match lx.dollar(false)? {
                Some(var) => {
                    lx.in_word = true;
                    lx.word.parts.push(var);
                }
                None => lx.literal('$'),
            },
            c => lx.literal(c),
        }
    }
    lx.end_word()?;
    Ok(lx.tokens)
}

/// Parses a whole command line. An empty line (or only comments) is an empty
/// list, which runs nothing and succeeds.
pub(crate) fn parse(line: &str) -> Result<Vec<Pipeline>, ParseError> {
    if line.len() > MAX_LINE_LEN {
        return Err(format!(
            "command line too long ({} bytes; the limit is {MAX_LINE_LEN})",
            line.len()
        ));
    }
    let tokens = lex(line)?;
    let mut tokens = tokens.into_iter().peekable();
    let mut pipelines: Vec<Pipeline> = Vec::new();
    let mut connector = Connector::Always;
    // Whether a pipeline must follow (after `&&`, `||`, `|`).
    let mut need_more = false;
    let mut stages: Vec<Command> = Vec::new();
    let mut command = Command::default();
    let mut command_started = false;

    loop {
        let token = tokens.next();
        let op = match &token {
            Some(Token::Op(op)) => Some(*op),
            _ => None,
        };
        match token {
            Some(Token::Word(word)) => {
                if command.words.len() >= MAX_WORDS {
                    return Err(format!(
                        "too many words in one command (the limit is {MAX_WORDS})"
                    ));
                }
                command.words.push(word);
                command_started = true;
            }
            Some(Token::Op(op @ (Op::Great | Op::DGreat | Op::Less))) => {
                let kind = match op {
                    Op::Great => RedirectKind::Truncate,
                    Op::DGreat => RedirectKind::Append,
                    _ => RedirectKind::Input,
                };
                match tokens.next() {
                    Some(Token::Word(target)) => command.redirects.push(Redirect { kind, target }),
                    Some(Token::Op(next)) => return Err(near(next.text())),
                    None => return Err(END.into()),
                }
                command_started = true;
            }
            Some(Token::Op(Op::Pipe)) => {
                if !command_started {
                    return Err(near("|"));
                }
                if stages.len() + 1 >= MAX_STAGES {
                    return Err(format!(
                        "too many pipeline stages (the limit is {MAX_STAGES})"
                    ));
                }
                stages.push(std::mem::take(&mut command));
                command_started = false;
                need_more = true;
            }
            Some(Token::Op(Op::And | Op::Or | Op::Semi | Op::Newline)) | None => {
                if command_started {
                    stages.push(std::mem::take(&mut command));
                    command_started = false;
                    if pipelines.len() >= MAX_PIPELINES {
                        return Err(format!(
                            "too many commands on one line (the limit is {MAX_PIPELINES})"
                        ));
                    }
                    pipelines.push(Pipeline {
                        connector,
                        stages: std::mem::take(&mut stages),
                    });
                    need_more = false;
                    connector = Connector::Always;
                } else if need_more {
                    return Err(match op {
                        Some(Op::Newline) | None => END.into(),
                        Some(op) => near(op.text()),
                    });
                } else {
                    // Nothing before this operator since the last separator.
                    match op {
                        None => break,
                        Some(Op::Newline) => continue,
                        Some(op) => {
                            // A `;` right after a newline-terminated list, or a leading operator.
                            return Err(near(op.text()));
                        }
                    }
                }
                match op {
                    None => break,
                    Some(Op::And) => {
                        connector = Connector::IfSuccess;
                        need_more = true;
                    }
                    Some(Op::Or) => {
                        connector = Connector::IfFailure;
                        need_more = true;
                    }
                    Some(_) => {}
                }
            }
        }
    }
    Ok(pipelines)
}
