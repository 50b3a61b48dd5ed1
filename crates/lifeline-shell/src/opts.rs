//! Option parsing for the built-ins: clustered single-letter flags, valued
//! flags and operands, as GNU permutes them.

use crate::io::Io;
use crate::Host;

/// Parsed options: single-letter flags (clustered, anywhere before `--`, as
/// GNU permutes them) and operands.
pub(crate) struct Opts {
    pub flags: Vec<char>,
    pub values: Vec<(char, String)>,
    pub operands: Vec<String>,
}

impl Opts {
    pub fn has(&self, flag: char) -> bool {
        self.flags.contains(&flag)
    }

    pub fn value(&self, flag: char) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(f, _)| *f == flag)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses options, or reports the problem with a usage line and returns the
/// exit status to use.
pub(crate) fn opts<H: Host>(
    io: &mut Io<'_, H>,
    args: &[String],
    flags: &str,
    valued: &str,
    usage: &str,
    bad_status: i32,
) -> Result<Opts, i32> {
    let mut parsed = Opts {
        flags: Vec::new(),
        values: Vec::new(),
        operands: Vec::new(),
    };
    let mut iter = args.iter();
    let mut problem = None;
    while let Some(arg) = iter.next() {
        if arg == "--" {
            parsed.operands.extend(iter.by_ref().cloned());
            break;
        }
        if arg.starts_with("--") {
            problem = Some(format!("unrecognized option '{arg}'"));
            break;
        }
        if arg.len() < 2 || !arg.starts_with('-') {
            parsed.operands.push(arg.clone());
            continue;
        }
        let chars = arg[1..].char_indices();
        for (at, flag) in chars {
            if flags.contains(flag) {
                parsed.flags.push(flag);
            } else if valued.contains(flag) {
                let inline = &arg[1 + at + flag.len_utf8()..];
                let value = if inline.is_empty() {
                    match iter.next() {
                        Some(value) => value.clone(),
                        None => {
                            problem = Some(format!("option requires an argument -- '{flag}'"));
                            break;
                        }
                    }
                } else {
                    inline.to_string()
                };
                parsed.values.push((flag, value));
                break;
            } else {
                problem = Some(format!("invalid option -- '{flag}'"));
                break;
            }
        }
        if problem.is_some() {
            break;
        }
    }
    match problem {
        None => Ok(parsed),
        Some(problem) => {
            io.err(&problem);
            io.raw_err(&format!("usage: {usage}"));
            Err(bad_status)
        }
    }
}

macro_rules! opts_or_return {
    ($io:expr, $args:expr, $flags:expr, $valued:expr, $usage:expr, $bad:expr) => {
        match opts($io, $args, $flags, $valued, $usage, $bad) {
            Ok(parsed) => parsed,
            Err(status) => return Ok(status),
        }
    };
}
pub(crate) use opts_or_return;
