//! grep's pattern syntaxes, written as ECMAScript regular expressions.
//!
//! The shell does not carry a regular expression engine: the host compiles
//! the translated source with its own ([`crate::Host::regex`]: the browser's
//! `RegExp` with the `u` flag, which the runtime worker already has). A
//! linked engine cost the runtime's module about 21 KB of its gzip budget.
//!
//! What the translation keeps from GNU grep: basic syntax (`\(`, `\|`,
//! `\{n,m\}` are operators, `( | {` literal), extended syntax (`-E`),
//! fixed strings (`-F`), POSIX classes in brackets (`[[:upper:]]`), a
//! backslash inside brackets as a literal, `\<` and `\>` as word edges, a
//! leading `*` as a literal, a brace that starts no interval as a literal,
//! and a backslash before any other character as that character. Back
//! references (`\1`) work, as in GNU grep.

/// Which syntax the pattern is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// POSIX basic regular expressions, grep's default.
    Basic,
    /// POSIX extended regular expressions (`grep -E`).
    Extended,
    /// A fixed string (`grep -F`).
    Fixed,
}

/// Characters with a meaning in an ECMAScript pattern: escaped where they
/// stand for themselves (`\` before any of them is valid with the `u` flag).
const SYNTAX: &str = "^$\\.*+?()[]{}|/";

/// The ECMAScript source for a grep pattern; `words` wraps it to match
/// whole words only (`grep -w`).
pub fn to_ecmascript(pattern: &str, syntax: Syntax, words: bool) -> Result<String, String> {
    let source = match syntax {
        Syntax::Fixed => Ok(literal(pattern)),
        Syntax::Basic => translate(pattern, true),
        Syntax::Extended => translate(pattern, false),
    }?;
    Ok(if words {
        format!(r"\b(?:{source})\b")
    } else {
        source
    })
}

fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_literal(&mut out, c);
    }
    out
}

fn push_literal(out: &mut String, c: char) {
    if SYNTAX.contains(c) {
        out.push('\\');
    }
    out.push(c);
}

fn translate(pattern: &str, basic: bool) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    // Where a repetition operator would have nothing to repeat, POSIX
    // reads it as a literal; ECMAScript refuses it.
    let mut at_start = true;
    while let Some(c) = chars.next() {
        let was_start = at_start;
        at_start = false;
        match c {
            '\\' => {
                let Some(escaped) = chars.next() else {
                    return Err("trailing backslash (\\)".into());
                };
                match escaped {
                    '(' | '|' if basic => {
                        out.push(escaped);
                        at_start = true;
                    }
                    ')' | '+' | '?' if basic => out.push(escaped),
                    '{' if basic => interval(&mut chars, &mut out, true)?,
                    '<' => out.push_str(r"\b(?=\w)"),
                    '>' => out.push_str(r"\b(?<=\w)"),
                    'w' | 'W' | 's' | 'S' | 'b' | 'B' | '1'..='9' => {
                        out.push('\\');
                        out.push(escaped);
                    }
                    other => push_literal(&mut out, other),
                }
            }
            '(' | '|' if !basic => {
                out.push(c);
                at_start = true;
            }
            ')' if !basic => out.push(c),
            '*' | '+' | '?' if was_start && (c == '*' || !basic) => push_literal(&mut out, c),
            '+' | '?' if !basic => out.push(c),
            '{' if !basic && !was_start => interval(&mut chars, &mut out, false)?,
            '^' => {
                out.push(c);
                at_start = was_start;
            }
            '[' => {
                out.push('[');
                bracket(&mut chars, &mut out)?;
            }
            '*' | '.' | '$' => out.push(c),
            other => push_literal(&mut out, other),
        }
    }
    Ok(out)
}

/// After an interval's `{`: `{n}`, `{n,}`, `{n,m}` or GNU's `{,m}`, closed
/// by `}` (extended) or `\}` (basic). In extended syntax a brace that starts
/// no interval is a literal, as GNU grep reads it.
fn interval(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    out: &mut String,
    basic: bool,
) -> Result<(), String> {
    let rest: String = chars.clone().collect();
    let close = if basic { "\\}" } else { "}" };
    let body = rest.find(close).map(|end| &rest[..end]);
    let valid = body.filter(|body| {
        let (low, high) = body.split_once(',').unwrap_or((body, body));
        !(low.is_empty() && high.is_empty())
            && low.chars().chain(high.chars()).all(|c| c.is_ascii_digit())
    });
    match valid {
        Some(body) => {
            out.push('{');
            if body.starts_with(',') {
                out.push('0');
            }
            out.push_str(body);
            out.push('}');
            for _ in 0..body.chars().count() + close.len() {
                chars.next();
            }
            Ok(())
        }
        None if basic && body.is_none() => Err("unmatched \\{".into()),
        None if basic => Err("invalid content of \\{\\}".into()),
        None => {
            out.push_str("\\{");
            Ok(())
        }
    }
}

/// Copies a POSIX bracket expression (after its `[`): a backslash and a `[`
/// that starts no class are literal, `[:class:]` becomes its ASCII ranges.
fn bracket(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    out: &mut String,
) -> Result<(), String> {
    if chars.next_if_eq(&'^').is_some() {
        out.push('^');
    }
    if chars.next_if_eq(&']').is_some() {
        out.push_str("\\]");
    }
    while let Some(c) = chars.next() {
        match c {
            ']' => {
                out.push(']');
                return Ok(());
            }
            '\\' => out.push_str("\\\\"),
            '[' if chars.peek() == Some(&':') => {
                chars.next();
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some(':') if chars.next_if_eq(&']').is_some() => break,
                        Some(c) if c.is_ascii_alphabetic() && name.len() < 8 => name.push(c),
                        _ => return Err("unmatched [, [^, [:, [., or [=".into()),
                    }
                }
                out.push_str(class(&name).ok_or("invalid character class")?);
            }
            '[' if matches!(chars.peek(), Some('.' | '=')) => {
                return Err("collating symbols and equivalence classes are not supported".into())
            }
            '[' => out.push_str("\\["),
            c => out.push(c),
        }
    }
    Err("unmatched [, [^, [:, [., or [=".into())
}

/// A POSIX class in the C locale, as the inside of an ECMAScript class.
fn class(name: &str) -> Option<&'static str> {
    Some(match name {
        "alnum" => "0-9A-Za-z",
        "alpha" => "A-Za-z",
        "blank" => " \\t",
        "cntrl" => "\\x00-\\x1f\\x7f",
        "digit" => "0-9",
        "graph" => "!-~",
        "lower" => "a-z",
        "print" => " -~",
        "punct" => "!-\\/:-@\\[-`{-~",
        "space" => " \\t\\n\\v\\f\\r",
        "upper" => "A-Z",
        "xdigit" => "0-9A-Fa-f",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(p: &str) -> String {
        to_ecmascript(p, Syntax::Basic, false).unwrap()
    }
    fn extended(p: &str) -> String {
        to_ecmascript(p, Syntax::Extended, false).unwrap()
    }

    #[test]
    fn basic_syntax_operators_are_escaped_and_literals_are_not() {
        assert_eq!(basic(r"\(a\|b\)\+c\?"), "(a|b)+c?");
        assert_eq!(basic("(a|b)+c?"), r"\(a\|b\)\+c\?");
        assert_eq!(basic(r"a\{2,3\}"), "a{2,3}");
        assert_eq!(basic(r"a\{,3\}"), "a{0,3}");
        assert_eq!(basic("a{2}"), r"a\{2\}");
        assert_eq!(basic("*a*"), r"\*a*");
        assert_eq!(basic("^*a"), r"^\*a");
        assert_eq!(basic(r"\(*a\)"), r"(\*a)");
        assert_eq!(basic(r"\(a\)\1"), r"(a)\1");
        assert!(to_ecmascript(r"a\{2", Syntax::Basic, false).is_err());
    }

    #[test]
    fn extended_syntax_keeps_gnu_literals() {
        assert_eq!(extended("(a|b)+c?"), "(a|b)+c?");
        assert_eq!(extended("a{2,}"), "a{2,}");
        assert_eq!(extended("a{x"), r"a\{x");
        assert_eq!(extended("{1}"), r"\{1\}");
        assert_eq!(extended("*a"), r"\*a");
        assert_eq!(extended("a]"), r"a\]");
        assert_eq!(extended(r"\."), r"\.");
    }

    #[test]
    fn escapes_word_edges_and_brackets() {
        assert_eq!(basic(r"\<the\>"), r"\b(?=\w)the\b(?<=\w)");
        assert_eq!(basic(r"a\-b\ c\/"), r"a-b c\/");
        assert_eq!(basic(r"\w\s\b"), r"\w\s\b");
        assert_eq!(basic(r"[[:upper:]][^]a\]"), r"[A-Z][^\]a\\]");
        assert_eq!(basic("[[:punct:]]"), r"[!-\/:-@\[-`{-~]");
        assert_eq!(basic("[a[b]"), r"[a\[b]");
        assert!(to_ecmascript("[[:nope:]]", Syntax::Basic, false).is_err());
        assert!(to_ecmascript("[abc", Syntax::Basic, false).is_err());
        assert!(to_ecmascript("[[=a=]]", Syntax::Basic, false).is_err());
        assert!(to_ecmascript("a\\", Syntax::Extended, false).is_err());
    }

    #[test]
    fn fixed_strings_and_whole_words() {
        assert_eq!(
            to_ecmascript("a+b(c)/[d]{e}", Syntax::Fixed, false).unwrap(),
            r"a\+b\(c\)\/\[d\]\{e\}"
        );
        assert_eq!(
            to_ecmascript("pie", Syntax::Fixed, true).unwrap(),
            r"\b(?:pie)\b"
        );
    }
}
