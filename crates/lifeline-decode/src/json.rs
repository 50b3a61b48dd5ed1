//! JSON text read into a plain tree, strictly as serde_json reads it.
//!
//! Why a tree and not the browser's `JSON.parse`: what reads the tree
//! ([`crate::Decode`]) is compiled once per type, not once per type and
//! reader, and it is the same code natively and in the browser. Numbers
//! stay text until a reader asks for one as an integer, so a 64-bit
//! identity is read exactly, and no float parsing is linked at all.
//!
//! Strings without escapes are borrowed from the text, not copied.

use std::borrow::Cow;

use crate::Error;

/// One JSON value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    /// The number as written (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    Number(&'a str),
    Text(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    /// In the order written; a key may appear twice (see [`crate::Object`]).
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl Json<'_> {
    /// What kind of value this is, for an error.
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::Text(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// serde_json's nesting limit: at most this many objects and arrays inside
/// each other; deeper input is refused, not recursed into.
pub const MAX_DEPTH: usize = 127;

/// The value a whole text holds (surrounding blanks allowed).
pub fn parse(text: &str) -> Result<Json<'_>, Error> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    let value = reader.value(0)?;
    reader.blank();
    if reader.at != reader.bytes.len() {
        return Err(reader.error("trailing characters"));
    }
    Ok(value)
}

/// Where the run of plain string text from `at` ends: at the first `"`,
/// `\` or control character, or at the end. Eight bytes at a time: a
/// snapshot is mostly long strings (its settled commands), and decoding
/// the recovery bench's 100k snapshot and tail took 13.0 ms this way
/// against 16.0 a byte at a time.
fn plain_run(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Whether any byte of `x` is zero (exact: no byte above a zero one is
    // needed, only whether there is one).
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let word = u64::from_le_bytes(word);
        let quote = zero(word ^ (ONES * u64::from(b'"')));
        let backslash = zero(word ^ (ONES * u64::from(b'\\')));
        // Whether any byte is below 0x20 (exact in the same way).
        let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
        if quote | backslash | control != 0 {
            break;
        }
        at += 8;
    }
    while bytes
        .get(at)
        .is_some_and(|b| !matches!(b, b'"' | b'\\' | 0x00..=0x1F))
    {
        at += 1;
    }
    at
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn error(&self, what: &'static str) -> Error {
        Error::syntax(what, self.at)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Result<u8, Error> {
        let byte = self
            .peek()
            .ok_or_else(|| self.error("the text ends early"))?;
        self.at += 1;
        Ok(byte)
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), Error> {
        if self.peek() != Some(byte) {
            return Err(self.error(what));
        }
        self.at += 1;
        Ok(())
    }

    fn blank(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn word(&mut self, word: &'static str, value: Json<'a>) -> Result<Json<'a>, Error> {
        if !self.bytes[self.at..].starts_with(word.as_bytes()) {
            return Err(self.error("expected a value"));
        }
        self.at += word.len();
        Ok(value)
    }

    /// A value inside `depth` objects and arrays.
    fn value(&mut self, depth: usize) -> Result<Json<'a>, Error> {
        self.blank();
        match self.peek() {
            None => Err(self.error("the text ends early")),
            Some(b'{' | b'[') if depth >= MAX_DEPTH => Err(self.error("nested too deeply")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Json::Text),
            Some(b'n') => self.word("null", Json::Null),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(_) => self.number(),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json<'a>, Error> {
        self.at += 1;
        let mut fields = Vec::new();
        self.blank();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Json::Object(fields));
        }
        loop {
            self.blank();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a key"));
            }
            let key = self.string()?;
            self.blank();
            self.expect(b':', "expected `:`")?;
            fields.push((key, self.value(depth + 1)?));
            self.blank();
            match self.next()? {
                b',' => {}
                b'}' => return Ok(Json::Object(fields)),
                _ => return Err(Error::syntax("expected `,` or `}`", self.at - 1)),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json<'a>, Error> {
        self.at += 1;
        let mut items = Vec::new();
        self.blank();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.blank();
            match self.next()? {
                b',' => {}
                b']' => return Ok(Json::Array(items)),
                _ => return Err(Error::syntax("expected `,` or `]`", self.at - 1)),
            }
        }
    }

    fn number(&mut self) -> Result<Json<'a>, Error> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("expected a value")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.digit()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.digit()?;
        }
        let number = &self.text[start..self.at];
        if out_of_range(number) {
            return Err(Error::syntax("a number out of range", start));
        }
        Ok(Json::Number(number))
    }

    fn digit(&mut self) -> Result<(), Error> {
        if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
            return Err(self.error("expected a digit"));
        }
        self.digits();
        Ok(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }

    /// A string; borrowed from the text when it has no escape. The text is
    /// UTF-8 already, and a run ends only at an ASCII byte, so every run is
    /// whole characters.
    fn string(&mut self) -> Result<Cow<'a, str>, Error> {
        self.at += 1;
        let start = self.at;
        let mut owned: Option<String> = None;
        let mut run = start;
        loop {
            self.at = plain_run(self.bytes, self.at);
            let byte = self.next()?;
            match byte {
                b'"' => {
                    let tail = &self.text[run..self.at - 1];
                    return Ok(match owned {
                        None => Cow::Borrowed(tail),
                        Some(mut text) => {
                            text.push_str(tail);
                            Cow::Owned(text)
                        }
                    });
                }
                b'\\' => {
                    let text = owned.get_or_insert_with(String::new);
                    text.push_str(&self.text[run..self.at - 1]);
                    let c = match self.next()? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.escaped()?,
                        _ => return Err(Error::syntax("an unknown escape", self.at - 1)),
                    };
                    text.push(c);
                    run = self.at;
                }
                // A control character must be escaped.
                0x00..=0x1F => {
                    return Err(Error::syntax(
                        "a control character in a string",
                        self.at - 1,
                    ))
                }
                _ => {}
            }
        }
    }

    /// `\uXXXX`, or a surrogate pair of two; a lone surrogate is refused,
    /// as serde_json refuses it.
    fn escaped(&mut self) -> Result<char, Error> {
        let first = self.hex4()?;
        let c = match first {
            0xD800..=0xDBFF => {
                if !self.bytes[self.at..].starts_with(b"\\u") {
                    return Err(self.error("a lone surrogate"));
                }
                self.at += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.error("a lone surrogate"));
                }
                char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
            }
            _ => char::from_u32(first),
        };
        c.ok_or_else(|| self.error("a lone surrogate"))
    }

    fn hex4(&mut self) -> Result<u32, Error> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
            .ok_or_else(|| self.error("expected four hex digits"))?;
        let value = digits
            .iter()
            .fold(0, |n, &d| n * 16 + (d as char).to_digit(16).unwrap_or(0));
        self.at += 4;
        Ok(value)
    }
}

/// Whether serde_json refuses this number (valid JSON) as out of range: a
/// value it reads as a float that overflows. Its rule, not the exact one,
/// because a tool call's arguments were read with it and are read again
/// from old journals (`model::tool_line`): a number it refused must still
/// be refused. serde_json (without `float_roundtrip`) keeps the digits
/// that fit a `u64` as the significand, counts dropped integer digits into
/// the exponent and ignores dropped fraction digits, then multiplies by
/// the nearest `f64` to the power of ten; a negative exponent never
/// overflows. Below 10^289 no `u64` significand can overflow, so only the
/// last twenty powers are needed.
fn out_of_range(number: &str) -> bool {
    const POWERS: [f64; 20] = [
        1e289, 1e290, 1e291, 1e292, 1e293, 1e294, 1e295, 1e296, 1e297, 1e298, 1e299, 1e300, 1e301,
        1e302, 1e303, 1e304, 1e305, 1e306, 1e307, 1e308,
    ];
    /// serde_json's test of whether `n * 10 + digit` would pass `max`.
    fn overflows(n: u64, digit: u64) -> bool {
        n >= u64::MAX / 10 && (n > u64::MAX / 10 || digit > u64::MAX % 10)
    }
    let digits = number.strip_prefix('-').unwrap_or(number).as_bytes();
    let mut at = 0;
    let mut significand: u64 = 0;
    let mut exponent: i64 = 0;
    let mut float = false;
    while let Some(&d @ b'0'..=b'9') = digits.get(at) {
        let d = u64::from(d - b'0');
        if float || overflows(significand, d) {
            float = true;
            exponent += 1;
        } else {
            significand = significand * 10 + d;
        }
        at += 1;
    }
    if digits.get(at) == Some(&b'.') {
        float = true;
        at += 1;
        let mut dropping = false;
        while let Some(&d @ b'0'..=b'9') = digits.get(at) {
            let d = u64::from(d - b'0');
            dropping = dropping || overflows(significand, d);
            if !dropping {
                significand = significand * 10 + d;
                exponent -= 1;
            }
            at += 1;
        }
    }
    if let Some(b'e' | b'E') = digits.get(at) {
        float = true;
        at += 1;
        let negative = digits.get(at) == Some(&b'-');
        if matches!(digits.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let mut power: i64 = 0;
        for &d in &digits[at..] {
            let d = i64::from(d - b'0');
            if power >= i64::from(i32::MAX) / 10
                && (power > i64::from(i32::MAX) / 10 || d > i64::from(i32::MAX) % 10)
            {
                // An exponent past `i32`: infinity unless it is negative
                // or the significand is zero.
                return !negative && significand != 0;
            }
            power = power * 10 + d;
        }
        exponent = if negative {
            exponent - power
        } else {
            exponent + power
        };
    }
    if !float || significand == 0 || exponent < 289 {
        return false;
    }
    match usize::try_from(exponent - 289)
        .ok()
        .and_then(|i| POWERS.get(i))
    {
        Some(power) => (significand as f64 * power).is_infinite(),
        None => true,
    }
}
