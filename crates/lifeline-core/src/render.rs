//! Rich text for the transcript, parsed here (in the controller) so the
//! page only builds nodes: a reply's markdown becomes a flat list of [`Md`]
//! steps (open, text, close) sent as one marked string, and command
//! output's ANSI escapes become style marks ([`mark_output`]). The page
//! keeps only the small decoders ([`steps`], [`resolve`], [`runs`]): parsing
//! on the page cost it 18.6 KB gzip of wasm it does not have.
//!
//! Architecture Invariant: nothing from a reply or an output ever becomes
//! markup. Raw HTML is kept as visible text, links survive only with an
//! `http`, `https` or `mailto` destination, and SGR sequences map to a
//! fixed set of style bits the page turns into its own class names.

/// One step of a rendered reply: `Md(kind, text)`, kinds below. It crosses
/// to the page inside one marked string ([`marked_markdown`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Md(pub u8, pub String);

pub mod md {
    //! The kinds of [`super::Md`]: leaves carry their text, `OPEN_*` start
    //! an element that the next unmatched [`CLOSE`] ends.
    pub const TEXT: u8 = 0;
    pub const CODE: u8 = 1;
    /// A fenced or indented code block; the text is its whole content.
    pub const CODE_BLOCK: u8 = 2;
    pub const BREAK: u8 = 3;
    pub const RULE: u8 = 4;
    pub const OPEN_P: u8 = 10;
    /// Its text is the level, `1` to `6`.
    pub const OPEN_HEADING: u8 = 11;
    pub const OPEN_QUOTE: u8 = 12;
    pub const OPEN_LIST: u8 = 13;
    /// Its text is the first number.
    pub const OPEN_ORDERED: u8 = 14;
    pub const OPEN_ITEM: u8 = 15;
    pub const OPEN_EM: u8 = 16;
    pub const OPEN_STRONG: u8 = 17;
    pub const OPEN_DEL: u8 = 18;
    /// Its text is the destination, already checked by [`super::safe_link`].
    pub const OPEN_LINK: u8 = 19;
    pub const CLOSE: u8 = 20;
}

/// Longer replies are shown as plain text: the page builds one node per
/// step, and a reply this long is not read as formatted prose anyway.
const MARKDOWN_BYTES: usize = 256 * 1024;
/// Deeper nesting (a thousand `>`) is flattened into its parent.
const MAX_DEPTH: usize = 16;

/// A reply's markdown as steps for the page.
///
/// The subset replies use: ATX headings, paragraphs (single newlines kept),
/// `-`/`*`/`+` and numbered lists, block quotes, fenced and indented code,
/// rules; inline code, `**strong**`, `*em*`/`_em_`, `~~del~~`, links,
/// images (as links) and autolinks, backslash escapes. HTML is text.
///
/// Why not pulldown-cmark: measured in the controller it added 65 KB gzip
/// (its HTML entity and case-folding tables alone are 67 KB raw), the
/// whole room the controller has. Every search below moves forward or gives
/// up for good, so hostile input stays linear for each nesting level.
pub fn markdown(text: &str) -> Vec<Md> {
    if text.is_empty() {
        return Vec::new();
    }
    // The page reads steps out of one string split at marks.
    let clean;
    let text = if text.chars().any(is_mark) {
        clean = text.replace(is_mark, "\u{FFFD}");
        clean.as_str()
    } else {
        text
    };
    let mut out = Vec::new();
    if text.len() > MARKDOWN_BYTES {
        open(&mut out, md::OPEN_P, "");
        push_text(&mut out, text);
        close(&mut out);
        return out;
    }
    let text = text.replace("\r\n", "\n");
    let lines: Vec<&str> = text.split('\n').collect();
    blocks(&lines, 0, &mut out);
    out
}

fn open(out: &mut Vec<Md>, kind: u8, text: &str) {
    out.push(Md(kind, text.to_string()));
}

fn close(out: &mut Vec<Md>) {
    out.push(Md(md::CLOSE, String::new()));
}

/// Leading spaces of `line` (tabs count as four).
fn indent(line: &str) -> usize {
    let mut n = 0;
    for c in line.chars() {
        match c {
            ' ' => n += 1,
            '\t' => n += 4,
            _ => break,
        }
    }
    n
}

fn fence(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start();
    if indent(line) > 3 {
        return None;
    }
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

fn heading(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_start();
    let level = t.chars().take_while(|c| *c == '#').count();
    let rest = &t[level..];
    let ok = (1..=6).contains(&level) && indent(line) <= 3;
    (ok && (rest.is_empty() || rest.starts_with(' '))).then(|| {
        let rest = rest.trim();
        (level, rest.trim_end_matches('#').trim_end())
    })
}

fn rule(line: &str) -> bool {
    let t: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(c) = t.chars().next() else {
        return false;
    };
    indent(line) <= 3 && "-*_".contains(c) && t.len() >= 3 && t.chars().all(|x| x == c)
}

/// A list item's marker: (ordered, its number, where its content starts).
fn item(line: &str) -> Option<(bool, u64, usize)> {
    let lead = line.len() - line.trim_start_matches(' ').len();
    let t = &line[lead..];
    if lead > 3 {
        return None;
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    let (ordered, number, marker) = if digits > 0 && digits <= 9 {
        match t[digits..].chars().next() {
            Some('.' | ')') => (true, t[..digits].parse().unwrap_or(1), digits + 1),
            _ => return None,
        }
    } else {
        match t.chars().next() {
            Some('-' | '*' | '+') => (false, 0, 1),
            _ => return None,
        }
    };
    let after = &t[marker..];
    if !(after.is_empty() || after.starts_with(' ') || after.starts_with('\t')) {
        return None;
    }
    let gap = after.len() - after.trim_start().len();
    Some((
        ordered,
        number,
        lead + marker + gap.clamp(1, 4).min(after.len()),
    ))
}

fn starts_block(line: &str) -> bool {
    fence(line).is_some()
        || heading(line).is_some()
        || rule(line)
        || line.trim_start().starts_with('>')
        || item(line).is_some_and(|(_, _, at)| !line[at..].trim().is_empty())
}

fn blocks(lines: &[&str], depth: usize, out: &mut Vec<Md>) {
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim().is_empty() {
            i += 1;
            continue;
        }
        if depth + 1 >= MAX_DEPTH {
            // Too deep to nest further: the rest is one paragraph.
            open(out, md::OPEN_P, "");
            inline(&lines[i..].join("\n"), depth, out);
            close(out);
            return;
        }
        if let Some((c, n)) = fence(line) {
            let mut body = String::new();
            i += 1;
            while i < lines.len() {
                if fence(lines[i]).is_some_and(|(d, m)| d == c && m >= n)
                    && lines[i].trim().chars().all(|x| x == c)
                {
                    i += 1;
                    break;
                }
                body.push_str(lines[i]);
                body.push('\n');
                i += 1;
            }
            out.push(Md(md::CODE_BLOCK, body));
            continue;
        }
        if indent(line) >= 4 {
            let mut body = String::new();
            while i < lines.len() && (indent(lines[i]) >= 4 || lines[i].trim().is_empty()) {
                body.push_str(lines[i].get(4..).unwrap_or("").trim_start_matches('\t'));
                body.push('\n');
                i += 1;
            }
            out.push(Md(
                md::CODE_BLOCK,
                body.trim_end_matches('\n').to_string() + "\n",
            ));
            continue;
        }
        if let Some((level, rest)) = heading(line) {
            open(out, md::OPEN_HEADING, &level.to_string());
            inline(rest, depth, out);
            close(out);
            i += 1;
            continue;
        }
        if rule(line) {
            out.push(Md(md::RULE, String::new()));
            i += 1;
            continue;
        }
        if line.trim_start().starts_with('>') {
            let mut inner = Vec::new();
            while i < lines.len() && lines[i].trim_start().starts_with('>') {
                let t = &lines[i].trim_start()[1..];
                inner.push(t.strip_prefix(' ').unwrap_or(t));
                i += 1;
            }
            open(out, md::OPEN_QUOTE, "");
            blocks(&inner, depth + 1, out);
            close(out);
            continue;
        }
        if let Some((ordered, number, _)) = item(line) {
            i = list(lines, i, ordered, number, depth, out);
            continue;
        }
        let start = i;
        i += 1;
        while i < lines.len() && !lines[i].trim().is_empty() && !starts_block(lines[i]) {
            i += 1;
        }
        let para: Vec<&str> = lines[start..i].iter().map(|l| l.trim()).collect();
        open(out, md::OPEN_P, "");
        inline(&para.join("\n"), depth, out);
        close(out);
    }
}

/// One list from line `i`; answers the line after it.
fn list(
    lines: &[&str],
    mut i: usize,
    ordered: bool,
    number: u64,
    depth: usize,
    out: &mut Vec<Md>,
) -> usize {
    if ordered {
        open(out, md::OPEN_ORDERED, &number.to_string());
    } else {
        open(out, md::OPEN_LIST, "");
    }
    while let Some((o, _, at)) = lines.get(i).and_then(|l| item(l)) {
        if o != ordered {
            break;
        }
        let mut body = vec![&lines[i][at..]];
        i += 1;
        // Continuation: indented lines, and blank lines followed by one.
        while i < lines.len() {
            let l = lines[i];
            if !l.trim().is_empty() && indent(l) >= 2 {
                body.push(
                    l.get(at.min(indent(l))..)
                        .unwrap_or("")
                        .trim_start_matches('\t'),
                );
            } else if l.trim().is_empty()
                && lines
                    .get(i + 1)
                    .is_some_and(|n| indent(n) >= 2 && !n.trim().is_empty())
            {
                body.push("");
            } else if !l.trim().is_empty() && !starts_block(l) && item(l).is_none() {
                body.push(l.trim());
            } else {
                break;
            }
            i += 1;
        }
        let mut inner = Vec::new();
        // A list and its item: two levels.
        blocks(&body, depth + 2, &mut inner);
        // A tight item holds its text, not a paragraph.
        if single_paragraph(&inner) {
            inner.remove(0);
            inner.pop();
        }
        open(out, md::OPEN_ITEM, "");
        out.extend(inner);
        close(out);
        // A blank line between items keeps the list going.
        if lines.get(i).is_some_and(|l| l.trim().is_empty())
            && lines
                .get(i + 1)
                .and_then(|l| item(l))
                .is_some_and(|(o, _, _)| o == ordered)
        {
            i += 1;
        }
    }
    close(out);
    i
}

/// `steps` are one paragraph and nothing else.
fn single_paragraph(steps: &[Md]) -> bool {
    if steps.first().is_none_or(|m| m.0 != md::OPEN_P) {
        return false;
    }
    let mut depth = 0usize;
    for (k, m) in steps.iter().enumerate() {
        match m.0 {
            md::CLOSE => {
                depth -= 1;
                if depth == 0 {
                    return k == steps.len() - 1;
                }
            }
            kind if kind >= md::OPEN_P => depth += 1,
            _ => {}
        }
    }
    false
}

/// The closing delimiter `delim` after `from` in `s`: not after
/// whitespace, and for `_` not inside a word.
fn closer(s: &str, from: usize, delim: &str) -> Option<usize> {
    let mut at = from;
    while let Some(k) = s.get(at..)?.find(delim) {
        let pos = at + k;
        let before = s[..pos].chars().next_back();
        let after = s[pos + delim.len()..].chars().next();
        let ok = pos > from
            && before.is_some_and(|c| !c.is_whitespace())
            && (!delim.starts_with('_') || !after.is_some_and(char::is_alphanumeric))
            // `**` is not an `*` closer.
            && !(delim.len() == 1 && after == delim.chars().next());
        if ok {
            return Some(pos);
        }
        at = pos + delim.len();
    }
    None
}

fn inline(s: &str, depth: usize, out: &mut Vec<Md>) {
    let b = s.as_bytes();
    let mut i = 0;
    // Delimiters with no closer left from here on (see `markdown`).
    let mut none_after: Vec<&str> = Vec::new();
    let mut no_bracket = false;
    while i < s.len() {
        let c = b[i];
        let rest = &s[i..];
        if c == b'\\' && b.get(i + 1).is_some_and(u8::is_ascii_punctuation) {
            push_text(out, &s[i + 1..i + 2]);
            i += 2;
            continue;
        }
        if c == b'`' {
            let n = rest.bytes().take_while(|x| *x == b'`').count();
            let ticks = &rest[..n];
            let body_from = i + n;
            let mut at = body_from;
            let mut end = None;
            while let Some(k) = s[at..].find(ticks) {
                let pos = at + k;
                let run = s[pos..].bytes().take_while(|x| *x == b'`').count();
                if run == n {
                    end = Some(pos);
                    break;
                }
                at = pos + run;
            }
            match end {
                Some(e) => {
                    let code = &s[body_from..e];
                    let code = match code.strip_prefix(' ').and_then(|c| c.strip_suffix(' ')) {
                        Some(inner) if !inner.trim().is_empty() => inner,
                        _ => code,
                    };
                    out.push(Md(md::CODE, code.replace('\n', " ")));
                    i = e + n;
                }
                None => {
                    push_text(out, ticks);
                    i += n;
                }
            }
            continue;
        }
        if c == b'<' {
            if let Some(end) = rest.find('>') {
                let url = &rest[1..end];
                if safe_link(url) {
                    open(out, md::OPEN_LINK, url);
                    push_text(out, url);
                    close(out);
                    i += end + 1;
                    continue;
                }
            }
        }
        let image = c == b'!' && b.get(i + 1) == Some(&b'[');
        if (c == b'[' || image) && !no_bracket && depth < MAX_DEPTH {
            let label_from = i + if image { 2 } else { 1 };
            match s[label_from..].find(['[', ']']).map(|k| label_from + k) {
                None => no_bracket = true,
                Some(close_at) if b[close_at] == b']' && b.get(close_at + 1) == Some(&b'(') => {
                    // The destination runs to its matching `)`.
                    let mut level = 0usize;
                    let mut end = None;
                    for (k, ch) in s[close_at + 2..].char_indices() {
                        match ch {
                            '(' => level += 1,
                            ')' if level == 0 => {
                                end = Some(close_at + 2 + k);
                                break;
                            }
                            ')' => level -= 1,
                            ' ' | '\n' if level == 0 => break,
                            _ => {}
                        }
                    }
                    if let Some(end) = end {
                        let dest = &s[close_at + 2..end];
                        let label = &s[label_from..close_at];
                        let linked = safe_link(dest);
                        if linked {
                            open(out, md::OPEN_LINK, dest);
                        }
                        inline(label, depth + 1, out);
                        if linked {
                            close(out);
                        }
                        i = end + 1;
                        continue;
                    }
                }
                Some(_) => {}
            }
        }
        let delim = ["**", "__", "~~", "*", "_"]
            .into_iter()
            .find(|d| rest.starts_with(d));
        if let Some(d) = delim {
            let word_before = s[..i]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric);
            let opens = rest[d.len()..]
                .chars()
                .next()
                .is_some_and(|n| !n.is_whitespace())
                && !(d.starts_with('_') && word_before)
                && depth < MAX_DEPTH
                && !none_after.contains(&d);
            if opens {
                match closer(s, i + d.len(), d) {
                    Some(end) => {
                        let kind = match d {
                            "**" | "__" => md::OPEN_STRONG,
                            "~~" => md::OPEN_DEL,
                            _ => md::OPEN_EM,
                        };
                        open(out, kind, "");
                        inline(&s[i + d.len()..end], depth + 1, out);
                        close(out);
                        i = end + d.len();
                        continue;
                    }
                    None => none_after.push(d),
                }
            }
            push_text(out, d);
            i += d.len();
            continue;
        }
        // Plain text up to the next character that may start something.
        let next = rest[1..]
            .find(['\\', '`', '<', '[', '!', '*', '_', '~'])
            .map_or(s.len(), |k| i + 1 + k);
        push_text(out, &s[i..next]);
        i = next;
    }
}

/// Joins adjacent text so the page makes one text node of it.
fn push_text(out: &mut Vec<Md>, text: &str) {
    match out.last_mut() {
        Some(Md(md::TEXT, last)) => last.push_str(text),
        _ => out.push(Md(md::TEXT, text.to_string())),
    }
}

/// A destination the page may link to: an absolute `http`, `https` or
/// `mailto` URL without spaces or control characters.
pub fn safe_link(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let scheme = ["http://", "https://", "mailto:"]
        .iter()
        .any(|s| lower.starts_with(s));
    scheme && url.len() > 8 && !url.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// How a run of output looks: colours and attributes from SGR sequences,
/// packed into bits. `Style::default()` is plain text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style(pub u16);

const FG_SHIFT: u16 = 0;
const BG_SHIFT: u16 = 5;
const COLOUR: u16 = 0x1f;
const BOLD: u16 = 1 << 10;
const DIM: u16 = 1 << 11;
const ITALIC: u16 = 1 << 12;
const UNDERLINE: u16 = 1 << 13;
const INVERSE: u16 = 1 << 14;
const STRIKE: u16 = 1 << 15;

impl Style {
    /// The foreground colour, 0–15 (the 16 terminal colours), if set.
    pub fn fg(self) -> Option<u16> {
        let c = (self.0 >> FG_SHIFT) & COLOUR;
        (c > 0).then(|| c - 1)
    }

    pub fn bg(self) -> Option<u16> {
        let c = (self.0 >> BG_SHIFT) & COLOUR;
        (c > 0).then(|| c - 1)
    }

    /// The page's class names for this style (`a-f1 a-bold`), from a fixed
    /// set: `a-f0`–`a-f15`, `a-b0`–`a-b15`, `a-bold`, `a-dim`, `a-italic`,
    /// `a-under`, `a-inverse`, `a-strike`.
    pub fn classes(self) -> String {
        let mut out = String::new();
        let mut push = |name: &str, n: Option<u16>| {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(name);
            if let Some(n) = n {
                out.push_str(&n.to_string());
            }
        };
        if let Some(c) = self.fg() {
            push("a-f", Some(c));
        }
        if let Some(c) = self.bg() {
            push("a-b", Some(c));
        }
        for (bit, name) in [
            (BOLD, "a-bold"),
            (DIM, "a-dim"),
            (ITALIC, "a-italic"),
            (UNDERLINE, "a-under"),
            (INVERSE, "a-inverse"),
            (STRIKE, "a-strike"),
        ] {
            if self.0 & bit != 0 {
                push(name, None);
            }
        }
        out
    }
}

// Marks: characters of the supplementary private use planes that carry
// structure inside one string, so the page decodes a plain string (no serde
// type of its own) and needs no parser. Outside text never keeps them:
// `markdown` and `mark_output` replace any such character with U+FFFD.
//
// In marked output a pair (`AND + a`, `OR + o`) says "from here the style
// is `start & a | o`", `start` being the style in force where the string
// began (the page knows it; the controller marks each chunk without state).
// The page resolves those pairs into one absolute mark (`AND + style`,
// [`resolve`]). In marked markdown, `AND + kind` starts each [`Md`] step.
const AND: u32 = 0xF0000;
const OR: u32 = 0x10_0000;

fn is_mark(c: char) -> bool {
    c as u32 >= AND
}

fn mark(base: u32, bits: u16) -> char {
    char::from_u32(base + u32::from(bits)).unwrap_or('\u{FFFD}')
}

/// What SGR sequences since a chunk's start did to the style in force
/// there: `style & and | or`. Composes without knowing that style.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Change {
    and: u16,
    or: u16,
}

const KEEP: Change = Change { and: !0, or: 0 };

impl Change {
    fn then(&mut self, and: u16, or: u16) {
        self.and &= and;
        self.or = (self.or & and) | or;
    }

    fn fg(&mut self, colour: u16) {
        self.then(!(COLOUR << FG_SHIFT), (colour + 1) << FG_SHIFT);
    }

    fn bg(&mut self, colour: u16) {
        self.then(!(COLOUR << BG_SHIFT), (colour + 1) << BG_SHIFT);
    }

    /// Applies one SGR sequence's parameters.
    fn apply(&mut self, params: &anstyle_parse::Params) {
        if params.is_empty() {
            self.then(0, 0);
            return;
        }
        let mut iter = params.iter();
        while let Some(param) = iter.next() {
            let n = param.first().copied().unwrap_or(0);
            match n {
                0 => self.then(0, 0),
                1 => self.then(!0, BOLD),
                2 => self.then(!0, DIM),
                3 => self.then(!0, ITALIC),
                4 => self.then(!0, UNDERLINE),
                7 => self.then(!0, INVERSE),
                9 => self.then(!0, STRIKE),
                21 | 22 => self.then(!(BOLD | DIM), 0),
                23 => self.then(!ITALIC, 0),
                24 => self.then(!UNDERLINE, 0),
                27 => self.then(!INVERSE, 0),
                29 => self.then(!STRIKE, 0),
                30..=37 => self.fg(n - 30),
                39 => self.then(!(COLOUR << FG_SHIFT), 0),
                40..=47 => self.bg(n - 40),
                49 => self.then(!(COLOUR << BG_SHIFT), 0),
                90..=97 => self.fg(n - 90 + 8),
                100..=107 => self.bg(n - 100 + 8),
                38 | 48 => {
                    // 256 colours (`38;5;n`, or `38:5:n` as subparameters)
                    // keep only the 16 the page has; true colour is dropped.
                    let (mode, colour) = if param.len() > 1 {
                        (param[1], param.get(2).copied())
                    } else {
                        let mode = iter.next().and_then(|p| p.first().copied());
                        let colour = match mode {
                            Some(5) => iter.next().and_then(|p| p.first().copied()),
                            Some(2) => {
                                for _ in 0..3 {
                                    iter.next();
                                }
                                None
                            }
                            _ => None,
                        };
                        (mode.unwrap_or(0), colour)
                    };
                    match (mode, colour) {
                        (5, Some(c)) if c < 16 && n == 38 => self.fg(c),
                        (5, Some(c)) if c < 16 => self.bg(c),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }
}

/// Writes marked output: printable text as it is, each style change as a
/// mark pair before the text it applies to, and the last change at the end
/// (the next chunk starts in it).
struct Marker {
    out: String,
    change: Change,
    written: Change,
}

impl Marker {
    fn sync(&mut self) {
        if self.change != self.written {
            self.out.push(mark(AND, self.change.and));
            self.out.push(mark(OR, self.change.or));
            self.written = self.change;
        }
    }
}

impl anstyle_parse::Perform for Marker {
    fn print(&mut self, c: char) {
        self.sync();
        self.out.push(if is_mark(c) { '\u{FFFD}' } else { c });
    }

    fn execute(&mut self, byte: u8) {
        // Line ends and tabs are text; other controls (bell, backspace,
        // carriage return) have no meaning in a scrolled log.
        if byte == b'\n' || byte == b'\t' {
            self.sync();
            self.out.push(byte as char);
        }
    }

    fn csi_dispatch(
        &mut self,
        params: &anstyle_parse::Params,
        intermediates: &[u8],
        ignore: bool,
        action: u8,
    ) {
        if action == b'm' && intermediates.is_empty() && !ignore {
            self.change.apply(params);
        }
    }
}

/// One chunk of command output for the page: escape sequences consumed
/// (SGR ones become marks, every other one is dropped, never shown raw),
/// controls other than line ends and tabs dropped.
///
/// Runs in the controller on each chunk alone: a sequence split across two
/// chunks is lost (its first part dropped, its rest shown as text), which
/// chunks cut at whole writes make rare; the style itself carries on.
pub fn mark_output(text: &str) -> String {
    let plain = text
        .chars()
        .all(|c| (c >= ' ' && c != '\x7f' && !is_mark(c)) || c == '\n' || c == '\t');
    if plain {
        return text.to_string();
    }
    let mut marker = Marker {
        out: String::with_capacity(text.len()),
        change: KEEP,
        written: KEEP,
    };
    let mut parser = anstyle_parse::Parser::<anstyle_parse::DefaultCharAccumulator>::default();
    for byte in text.bytes() {
        parser.advance(&mut marker, byte);
    }
    marker.sync();
    marker.out
}

/// `text` as plain characters: escape sequences and controls dropped as
/// [`mark_output`] drops them, and no style marks (a session's title is
/// typed text, and a pasted escape must not show raw there either).
pub fn plain_text(text: &str) -> String {
    mark_output(text).chars().filter(|c| !is_mark(*c)).collect()
}

/// Marked output as the page keeps it: each mark pair, read against
/// `style` (the style in force where `text` starts), becomes one mark of
/// the absolute style; `style` ends as the style in force after `text`.
pub fn resolve(text: &str, style: &mut Style) -> String {
    if !text.chars().any(is_mark) {
        return text.to_string();
    }
    let start = *style;
    let mut and = !0u16;
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let n = c as u32;
        if n >= OR {
            *style = Style((start.0 & and) | (n - OR) as u16);
            out.push(mark(AND, style.0));
        } else if n >= AND {
            and = (n - AND) as u16;
        } else {
            out.push(c);
        }
    }
    out
}

/// Resolved output ([`resolve`]) as runs of text in one style: `run` gets
/// each, starting in `style`, which ends as the last run's style.
pub fn runs(text: &str, style: &mut Style, run: &mut dyn FnMut(Style, &str)) {
    let mut from = 0;
    for (i, c) in text.char_indices() {
        if is_mark(c) {
            if from < i {
                run(*style, &text[from..i]);
            }
            *style = Style((c as u32 - AND) as u16);
            from = i + c.len_utf8();
        }
    }
    if from < text.len() {
        run(*style, &text[from..]);
    }
}

/// A reply's markdown as one marked string for the page: each [`Md`] step
/// is a mark of its kind followed by its text. Read back with [`steps`].
pub fn marked_markdown(text: &str) -> String {
    let mut out = String::new();
    for Md(kind, text) in markdown(text) {
        out.push(mark(AND, u16::from(kind)));
        out.push_str(&text);
    }
    out
}

/// The steps of [`marked_markdown`]: (kind, text).
pub fn steps(marked: &str) -> impl Iterator<Item = (u8, &str)> {
    marked
        .split(is_mark)
        .skip(1)
        .zip(
            marked
                .chars()
                .filter(|c| is_mark(*c))
                .map(|c| (c as u32 - AND) as u8),
        )
        .map(|(text, kind)| (kind, text))
}

#[cfg(test)]
mod tests;
