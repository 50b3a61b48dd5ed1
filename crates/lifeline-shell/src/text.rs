//! The line-oriented built-ins: head, tail, wc, grep, seq.

use crate::io::{Abort, Io};
use crate::opts::{opts, opts_or_return};
use crate::pattern::{self, Syntax};
use crate::Host;

/// Standard input's name in headers and prefixes, as GNU prints it.
fn shown_name(operand: &str, for_grep: bool) -> &str {
    match (operand, for_grep) {
        ("-", true) => "(standard input)",
        ("-", false) => "standard input",
        (name, _) => name,
    }
}

enum Count {
    /// The first N lines (head) or the last N lines (tail).
    Lines(u64),
    /// `head -n -N`: all but the last N; `tail -n +N`: from line N on.
    Other(u64),
}

pub(crate) async fn head_tail<H: Host>(
    io: &mut Io<'_, H>,
    args: &[String],
    head: bool,
) -> Result<i32, Abort> {
    let name = if head { "head" } else { "tail" };
    // The historical `head -5` form.
    let args: Vec<String> = args
        .iter()
        .enumerate()
        .map(|(index, arg)| match arg.strip_prefix('-') {
            Some(digits)
                if !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit())
                    && (index == 0 || args[index - 1] != "-n") =>
            {
                format!("-n{digits}")
            }
            _ => arg.clone(),
        })
        .collect();
    let usage = format!("{name} [-n N] [FILE]...");
    let parsed = opts_or_return!(io, &args, "", "n", &usage, 1);
    let count = match parsed.value('n') {
        None => Count::Lines(10),
        Some(text) => {
            let (other, digits) = match text.as_bytes().first() {
                Some(b'-') if head => (true, &text[1..]),
                Some(b'+') if !head => (true, &text[1..]),
                Some(b'+') | Some(b'-') => (false, &text[1..]),
                _ => (false, text),
            };
            match digits.parse::<u64>() {
                Ok(n) if other => Count::Other(n),
                Ok(n) => Count::Lines(n),
                Err(_) => {
                    io.err(&format!("invalid number of lines: '{text}'"));
                    return Ok(1);
                }
            }
        }
    };
    let mut operands = parsed.operands;
    if operands.is_empty() {
        operands.push("-".into());
    }
    let headers = operands.len() > 1;
    let mut status = 0;
    let mut first = true;
    for operand in &operands {
        let data = match io.read_operand(operand).await {
            Ok(data) => data,
            Err(error) => {
                io.file_err(operand, &error);
                status = 1;
                continue;
            }
        };
        if headers {
            let gap = if first { "" } else { "\n" };
            let header = format!("{gap}==> {} <==\n", shown_name(operand, false));
            io.out_str(&header).await?;
        }
        first = false;
        let total = count_lines(io, &data).await?;
        let (skip, take) = match (&count, head) {
            (Count::Lines(n), true) => (0, *n),
            (Count::Other(n), true) => (0, total.saturating_sub(*n)),
            (Count::Lines(n), false) => (total.saturating_sub(*n), *n),
            (Count::Other(n), false) => (n.saturating_sub(1), u64::MAX),
        };
        let start = line_offset(io, &data, skip).await?;
        let end = start + line_offset(io, &data[start..], take).await?;
        io.out(&data[start..end]).await?;
    }
    Ok(status)
}

/// Lines in `data`; a last line without a newline counts.
async fn count_lines<H: Host>(io: &mut Io<'_, H>, data: &[u8]) -> Result<u64, Abort> {
    let mut lines = 0u64;
    for _ in data.iter().filter(|&&b| b == b'\n') {
        lines += 1;
        io.tick().await?;
    }
    if data.last().is_some_and(|&b| b != b'\n') {
        lines += 1;
    }
    Ok(lines)
}

/// The byte offset just after the first `lines` lines (or the end).
async fn line_offset<H: Host>(io: &mut Io<'_, H>, data: &[u8], lines: u64) -> Result<usize, Abort> {
    if lines == 0 {
        return Ok(0);
    }
    let mut seen = 0u64;
    for (index, &byte) in data.iter().enumerate() {
        if byte == b'\n' {
            seen += 1;
            io.tick().await?;
            if seen == lines {
                return Ok(index + 1);
            }
        }
    }
    Ok(data.len())
}

pub(crate) async fn wc<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let parsed = opts_or_return!(io, args, "lwc", "", "wc [-l] [-w] [-c] [FILE]...", 1);
    let (mut lines, mut words, mut bytes) = (parsed.has('l'), parsed.has('w'), parsed.has('c'));
    if !(lines || words || bytes) {
        (lines, words, bytes) = (true, true, true);
    }
    let named = !parsed.operands.is_empty();
    let mut operands = parsed.operands;
    if operands.is_empty() {
        operands.push("-".into());
    }
    let mut status = 0;
    let mut rows: Vec<([u64; 3], Option<String>)> = Vec::new();
    let mut stdin_used = false;
    let mut file_bytes = 0u64;
    for operand in &operands {
        let data = match io.read_operand(operand).await {
            Ok(data) => data,
            Err(error) => {
                io.file_err(operand, &error);
                status = 1;
                continue;
            }
        };
        if operand == "-" {
            stdin_used = true;
        } else {
            file_bytes += data.len() as u64;
        }
        let mut counts = [0u64, 0, data.len() as u64];
        let mut in_word = false;
        for (index, &byte) in data.iter().enumerate() {
            if byte == b'\n' {
                counts[0] += 1;
            }
            let blank = matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
            if !blank && !in_word {
                counts[1] += 1;
            }
            in_word = !blank;
            if index % 4096 == 0 {
                io.tick().await?;
            }
        }
        rows.push((counts, named.then(|| operand.clone())));
    }
    if rows.len() > 1 {
        let mut total = [0u64; 3];
        for (counts, _) in &rows {
            for (sum, count) in total.iter_mut().zip(counts) {
                *sum += count;
            }
        }
        rows.push((total, Some("total".into())));
    }
    let selected = [lines, words, bytes];
    let width = if selected.iter().filter(|&&on| on).count() == 1 && operands.len() == 1 {
        1
    } else {
        let digits = file_bytes.max(1).ilog10() as usize + 1;
        if stdin_used {
            digits.max(7)
        } else {
            digits
        }
    };
    let mut text = String::new();
    for (counts, name) in rows {
        let mut line = String::new();
        for (count, on) in counts.iter().zip(selected) {
            if on {
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(&format!("{count:>width$}"));
            }
        }
        if let Some(name) = name {
            line.push(' ');
            line.push_str(&name);
        }
        text.push_str(&line);
        text.push('\n');
    }
    io.out_str(&text).await?;
    Ok(status)
}

pub(crate) async fn grep<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let usage = "grep [-icnqvlwFE] [-e PATTERN] PATTERN [FILE]...";
    let parsed = opts_or_return!(io, args, "ivncqFElwHh", "e", usage, 2);
    let mut operands = parsed.operands.clone();
    let pattern = match parsed.value('e') {
        Some(pattern) => pattern.to_string(),
        None if !operands.is_empty() => operands.remove(0),
        None => {
            io.raw_err(&format!("usage: {usage}"));
            return Ok(2);
        }
    };
    let syntax = if parsed.has('F') {
        Syntax::Fixed
    } else if parsed.has('E') {
        Syntax::Extended
    } else {
        Syntax::Basic
    };
    let regex = match pattern::to_ecmascript(&pattern, syntax, parsed.has('w'))
        .and_then(|source| io.host.regex(&source, parsed.has('i')))
    {
        Ok(regex) => regex,
        Err(reason) => {
            let first = reason.lines().next().unwrap_or("");
            io.err(&format!("invalid regular expression '{pattern}': {first}"));
            return Ok(2);
        }
    };
    if operands.is_empty() {
        operands.push("-".into());
    }
    let (invert, numbers, count_only, quiet, list) = (
        parsed.has('v'),
        parsed.has('n'),
        parsed.has('c'),
        parsed.has('q'),
        parsed.has('l'),
    );
    let prefix_names = (operands.len() > 1 || parsed.has('H')) && !parsed.has('h');
    let mut matched_any = false;
    let mut error = false;
    for operand in &operands {
        let data = match io.read_operand(operand).await {
            Ok(data) => data,
            Err(problem) => {
                io.file_err(operand, &problem);
                error = true;
                continue;
            }
        };
        let name = shown_name(operand, true).to_string();
        let body = data.strip_suffix(b"\n").unwrap_or(&data);
        let mut count = 0u64;
        let mut text = Vec::new();
        if !data.is_empty() {
            for (index, line) in body.split(|&b| b == b'\n').enumerate() {
                io.tick().await?;
                if io.host.is_match(&regex, &String::from_utf8_lossy(line)) == invert {
                    continue;
                }
                count += 1;
                matched_any = true;
                if quiet {
                    return Ok(0);
                }
                if list {
                    break;
                }
                if count_only {
                    continue;
                }
                if prefix_names {
                    text.extend_from_slice(name.as_bytes());
                    text.push(b':');
                }
                if numbers {
                    text.extend_from_slice(format!("{}:", index + 1).as_bytes());
                }
                text.extend_from_slice(line);
                text.push(b'\n');
                if text.len() >= 16 * 1024 {
                    io.out(&std::mem::take(&mut text)).await?;
                }
            }
        }
        if list && count > 0 {
            text.extend_from_slice(format!("{name}\n").as_bytes());
        } else if count_only && !list {
            if prefix_names {
                text.extend_from_slice(format!("{name}:").as_bytes());
            }
            text.extend_from_slice(format!("{count}\n").as_bytes());
        }
        io.out(&text).await?;
    }
    Ok(if error {
        2
    } else if matched_any {
        0
    } else {
        1
    })
}

pub(crate) async fn seq<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let (first, step, last) = match args {
        [] => {
            io.err("missing operand");
            return Ok(1);
        }
        [last] => ("1", "1", last.as_str()),
        [first, last] => (first.as_str(), "1", last.as_str()),
        [first, step, last] => (first.as_str(), step.as_str(), last.as_str()),
        [_, _, _, extra, ..] => {
            io.err(&format!("extra operand '{extra}'"));
            return Ok(1);
        }
    };
    for text in [first, step, last] {
        let plain = text.trim_start_matches(['-', '+']);
        let numeric = !plain.is_empty()
            && plain.chars().all(|c| c.is_ascii_digit() || c == '.')
            && plain.chars().any(|c| c.is_ascii_digit())
            && plain.matches('.').count() <= 1;
        if !numeric || text.len() - plain.len() > 1 {
            io.err(&format!("invalid floating point argument: '{text}'"));
            return Ok(1);
        }
    }
    let decimals = |text: &str| {
        text.split_once('.')
            .map_or(0, |(_, fraction)| fraction.len())
    };
    // Decimal arithmetic in units of the finest operand, so `seq 0 0.1 1`
    // reaches 1.0 exactly; printed with the first and step's precision, as
    // GNU seq prints them.
    let precision = decimals(first).max(decimals(step));
    let scale = precision.max(decimals(last));
    let (Some(mut value), Some(step), Some(last), Some(unit), Some(shown)) = (
        fixed(first, scale),
        fixed(step, scale),
        fixed(last, scale),
        10i128.checked_pow((scale - precision) as u32),
        10u128.checked_pow(precision as u32),
    ) else {
        io.err("argument out of range");
        return Ok(1);
    };
    if step == 0 {
        io.err(&format!(
            "invalid Zero increment value: '{}'",
            args[args.len() - 2]
        ));
        return Ok(1);
    }
    let mut text = String::new();
    while (step > 0 && value <= last) || (step < 0 && value >= last) {
        // A 128-bit division is a library call in wasm: none when the
        // operands share one precision, as whole numbers do.
        let shown_value = if unit == 1 { value } else { value / unit };
        push_fixed(&mut text, shown_value, precision, shown);
        text.push('\n');
        if text.len() >= 8 * 1024 {
            io.out_str(&std::mem::take(&mut text)).await?;
        }
        io.tick().await?;
        match value.checked_add(step) {
            Some(next) => value = next,
            None => break,
        }
    }
    io.out_str(&text).await?;
    Ok(0)
}

/// A decimal operand (already checked: a sign, digits, at most one point)
/// in units of `10^-scale`; `None` when it does not fit.
fn fixed(text: &str, scale: usize) -> Option<i128> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let mut value: i128 = 0;
    let padding = std::iter::repeat_n('0', scale.checked_sub(fraction.len())?);
    for c in whole.chars().chain(fraction.chars()).chain(padding) {
        value = value
            .checked_mul(10)?
            .checked_add(i128::from(c.to_digit(10)?))?;
    }
    Some(if negative { -value } else { value })
}

/// `value` units of `10^-precision` (`shown` is `10^precision`), written
/// with that many decimals.
fn push_fixed(text: &mut String, value: i128, precision: usize, shown: u128) {
    if value < 0 {
        text.push('-');
    }
    let magnitude = value.unsigned_abs();
    if precision == 0 {
        return push_digits(text, magnitude);
    }
    let (whole, fraction) = match (u64::try_from(magnitude), u64::try_from(shown)) {
        (Ok(m), Ok(s)) => (u128::from(m / s), u128::from(m % s)),
        _ => (magnitude / shown, magnitude % shown),
    };
    push_digits(text, whole);
    text.push('.');
    let start = text.len();
    push_digits(text, fraction);
    let zeros = precision.saturating_sub(text.len() - start);
    text.insert_str(start, &"0".repeat(zeros));
}

/// `n` in decimal; in 64 bits when it fits, as nearly every number does. A
/// 128-bit division is a library call in wasm, and `write!` pads through
/// the formatter: the two took about 80 of the runtime's 564 ms while
/// `seq 1 1300000` ran; with `seq`'s division by its unit gone too, the
/// runtime was busy 394 ms (`cargo xtask trace output`).
fn push_digits(text: &mut String, n: u128) {
    let Ok(mut n) = u64::try_from(n) else {
        use std::fmt::Write;
        let _ = write!(text, "{n}");
        return;
    };
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    text.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}
