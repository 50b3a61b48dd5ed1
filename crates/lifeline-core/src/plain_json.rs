//! JSON text read into plain values: objects, strings, whole numbers and
//! null, and "some other value" for what else is valid JSON (arrays,
//! booleans, other numbers), checked and dropped.
//!
//! Why: a local model's settings text (`Provider::Local::spec`) is the one
//! JSON text the browser's modules read outside `worker/codec`, and reading
//! it with `serde_json::from_str` linked a whole copy of serde_json's parser
//! (its `StrRead` instance) into the controller and the provider worker: 17
//! and 12 KB gzip for two small objects (docs/benchmarks.md, "Thirteenth
//! stop"). A general JSON crate was tried first: tinyjson brought float
//! parsing, a hash map and `Debug` code, and the controller grew.
//!
//! It reads as serde_json does, so that `LocalModel::from_spec` reads a
//! spec as serde's derive would (its tests hold the two together), with
//! two differences, both for input the app never writes: a whole number
//! must be within 2^53, as everywhere JavaScript reads it, and nesting
//! deeper than 128 objects and arrays is refused even where serde_json
//! would skip it.

/// A JSON value, as far as it is kept.
pub(crate) enum Json {
    Null,
    Whole(u64),
    Text(String),
    Object(Vec<(String, Json)>),
    Other,
}

impl Json {
    pub(crate) fn object(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(fields) => Some(fields),
            _ => None,
        }
    }

    pub(crate) fn text(&self) -> Option<String> {
        match self {
            Json::Text(text) => Some(text.clone()),
            _ => None,
        }
    }

    pub(crate) fn whole(&self) -> Option<u64> {
        match self {
            Json::Whole(n) => Some(*n),
            _ => None,
        }
    }
}

/// A field that may be absent; `None` (no reading at all) when it is
/// there twice.
pub(crate) fn optional<'a>(object: &'a [(String, Json)], name: &str) -> Option<Option<&'a Json>> {
    let mut found = object
        .iter()
        .filter(|(key, _)| key == name)
        .map(|(_, value)| value);
    let first = found.next();
    found.next().is_none().then_some(first)
}

pub(crate) fn field<'a>(object: &'a [(String, Json)], name: &str) -> Option<&'a Json> {
    optional(object, name)?
}

/// serde_json's nesting limit, in objects and arrays: deeper input is
/// refused, not recursed into. (serde_json skips an unknown field's value
/// at any depth; nothing the app writes nests more than two.)
const MAX_DEPTH: usize = 128;

/// The largest whole number JavaScript holds exactly.
const MAX_WHOLE: u64 = 9_007_199_254_740_991;

/// The value a whole text holds (surrounding blanks allowed); `None` for a
/// text that is not JSON.
pub(crate) fn parse(text: &str) -> Option<Json> {
    Reader::parse(text)
}

struct Reader<'t> {
    text: &'t [u8],
    at: usize,
}

impl Reader<'_> {
    fn parse(text: &str) -> Option<Json> {
        let mut reader = Reader {
            text: text.as_bytes(),
            at: 0,
        };
        let value = reader.value(0)?;
        reader.blank();
        (reader.at == reader.text.len()).then_some(value)
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn blank(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn word(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at.checked_add(word.len())?;
        (self.text.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// A value inside `depth` objects and arrays.
    fn value(&mut self, depth: usize) -> Option<Json> {
        self.blank();
        match self.peek()? {
            b'{' | b'[' if depth >= MAX_DEPTH => None,
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string().map(Json::Text),
            b'n' => self.word(b"null").map(|()| Json::Null),
            b't' => self.word(b"true").map(|()| Json::Other),
            b'f' => self.word(b"false").map(|()| Json::Other),
            _ => self.number(),
        }
    }

    fn object(&mut self, depth: usize) -> Option<Json> {
        self.next();
        let mut fields = Vec::new();
        self.blank();
        if self.peek() == Some(b'}') {
            self.next();
            return Some(Json::Object(fields));
        }
        loop {
            self.blank();
            if self.peek() != Some(b'"') {
                return None;
            }
            let key = self.string()?;
            self.blank();
            if self.next()? != b':' {
                return None;
            }
            fields.push((key, self.value(depth + 1)?));
            self.blank();
            match self.next()? {
                b',' => {}
                b'}' => return Some(Json::Object(fields)),
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Json> {
        self.next();
        self.blank();
        if self.peek() == Some(b']') {
            self.next();
            return Some(Json::Other);
        }
        loop {
            self.value(depth + 1)?;
            self.blank();
            match self.next()? {
                b',' => {}
                b']' => return Some(Json::Other),
                _ => return None,
            }
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`: a whole number when
    /// it has no sign, fraction or exponent and fits (serde_json reads `-0`
    /// as a float), otherwise some other value.
    fn number(&mut self) -> Option<Json> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.next();
        }
        let start = self.at;
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let whole = std::str::from_utf8(&self.text[start..self.at])
            .ok()
            .and_then(|digits| digits.parse::<u64>().ok());
        let mut plain = true;
        if self.peek() == Some(b'.') {
            self.next();
            self.digit()?;
            plain = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.next();
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.next();
            }
            self.digit()?;
            plain = false;
        }
        Some(match whole {
            Some(n) if plain && !negative && n <= MAX_WHOLE => Json::Whole(n),
            _ => Json::Other,
        })
    }

    fn digit(&mut self) -> Option<()> {
        self.next().filter(u8::is_ascii_digit)?;
        self.digits();
        Some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn string(&mut self) -> Option<String> {
        self.next();
        let mut out = Vec::new();
        loop {
            match self.next()? {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => {
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
                        _ => return None,
                    };
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                // A control character must be escaped.
                0x00..=0x1F => return None,
                byte => out.push(byte),
            }
        }
    }

    /// `\uXXXX`, or a surrogate pair of two; a lone surrogate is refused,
    /// as serde_json refuses it.
    fn escaped(&mut self) -> Option<char> {
        let first = self.hex4()?;
        match first {
            0xD800..=0xDBFF => {
                self.word(b"\\u")?;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return None;
                }
                char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
            }
            _ => char::from_u32(first),
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let end = self.at.checked_add(4)?;
        let digits = std::str::from_utf8(self.text.get(self.at..end)?).ok()?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at = end;
        u32::from_str_radix(digits, 16).ok()
    }
}

#[cfg(test)]
#[path = "plain_json_tests.rs"]
mod tests;
