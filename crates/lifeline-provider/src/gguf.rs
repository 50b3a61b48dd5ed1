//! The facts a profile shows about a GGUF model file, read from its header
//! (<https://github.com/ggml-org/ggml/blob/master/docs/gguf.md>).
//!
//! The header is the file's first part: magic, version, counts, the
//! metadata key/value pairs (the tokenizer's vocabulary among them, which
//! can be megabytes), then one description per tensor. The shell reads a
//! prefix of the file and asks [`read_header`]; [`GgufError::Truncated`]
//! says how many bytes to read instead. Everything in the file is untrusted:
//! every length is checked against the bytes present before it is used, and
//! nothing is allocated in proportion to a count the file claims.

/// What a profile keeps about a model file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgufFacts {
    pub version: u32,
    /// `general.architecture`, e.g. `llama`, `qwen2`.
    pub architecture: String,
    /// `general.name`, if present.
    pub name: Option<String>,
    /// `<architecture>.context_length`: the context it was trained for.
    pub context_length: Option<u64>,
    /// The sum of the tensors' element counts.
    pub parameters: u64,
    pub tensors: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GgufError {
    /// The file does not start with the GGUF magic: not a GGUF model.
    NotGguf,
    /// A GGUF version this reader does not know (1 was replaced in 2023).
    Version(u32),
    /// The header goes on past the bytes given; read at least this many
    /// bytes of the file and ask again.
    Truncated { need: u64 },
    /// The header contradicts itself: the message says where.
    Malformed(&'static str),
    /// A valid header with no `general.architecture`.
    NoArchitecture,
}

impl core::fmt::Display for GgufError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            GgufError::NotGguf => {
                f.write_str("this file is not a GGUF model (it does not start with \"GGUF\")")
            }
            GgufError::Version(v) => write!(f, "GGUF version {v} is not supported (2 and 3 are)"),
            GgufError::Truncated { .. } => f.write_str("the file ends inside its GGUF header"),
            GgufError::Malformed(what) => write!(f, "the GGUF header is damaged ({what})"),
            GgufError::NoArchitecture => f.write_str("the GGUF header names no model architecture"),
        }
    }
}

/// Longest key or string value kept; longer ones are skipped, not read.
const MAX_KEPT: u64 = 256;
/// llama.cpp's GGML_MAX_DIMS.
const MAX_DIMS: u32 = 4;
const STRING: u32 = 8;
const ARRAY: u32 = 9;

/// Reads the header at the start of `bytes`, a prefix of the file.
pub fn read_header(bytes: &[u8]) -> Result<GgufFacts, GgufError> {
    let mut r = Reader { bytes, at: 0 };
    if bytes.len() < 4 {
        return Err(if b"GGUF".starts_with(bytes) {
            GgufError::Truncated { need: 4 }
        } else {
            GgufError::NotGguf
        });
    }
    if &bytes[..4] != b"GGUF" {
        return Err(GgufError::NotGguf);
    }
    r.at = 4;
    let version = r.u32()?;
    if !(2..=3).contains(&version) {
        return Err(GgufError::Version(version));
    }
    let tensors = r.u64()?;
    let pairs = r.u64()?;
    let mut architecture = None;
    let mut name = None;
    // Context length is keyed by the architecture, which may come later:
    // keep every `*.context_length` seen and pick after the loop.
    let mut contexts: Vec<(String, u64)> = Vec::new();
    for _ in 0..pairs {
        let key = r.string()?;
        let ty = r.u32()?;
        match (key.as_deref(), ty) {
            (Some("general.architecture"), STRING) => architecture = r.string()?,
            (Some("general.name"), STRING) => name = r.string()?,
            (Some(k), _) if k.ends_with(".context_length") && contexts.len() < 8 => {
                if let Some(n) = r.integer(ty)? {
                    contexts.push((k.trim_end_matches(".context_length").to_string(), n));
                }
            }
            _ => r.skip_value(ty, 0)?,
        }
    }
    let mut parameters: u64 = 0;
    for _ in 0..tensors {
        r.skip_string()?;
        let dims = r.u32()?;
        if dims > MAX_DIMS {
            return Err(GgufError::Malformed("a tensor with more than 4 dimensions"));
        }
        let mut count: u64 = 1;
        for _ in 0..dims {
            count = count
                .checked_mul(r.u64()?)
                .ok_or(GgufError::Malformed("a tensor larger than any file"))?;
        }
        r.u32()?; // element type
        r.u64()?; // offset in the data section
        parameters = parameters
            .checked_add(count)
            .ok_or(GgufError::Malformed("more parameters than any file holds"))?;
    }
    let architecture = architecture.ok_or(GgufError::NoArchitecture)?;
    let context_length = contexts
        .iter()
        .find(|(a, _)| *a == architecture)
        .map(|(_, n)| *n);
    Ok(GgufFacts {
        version,
        architecture,
        name,
        context_length,
        parameters,
        tensors,
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: u64,
}

impl Reader<'_> {
    /// The next `n` bytes, or how many bytes the file must have to hold them.
    fn take(&mut self, n: u64) -> Result<&[u8], GgufError> {
        let end = self
            .at
            .checked_add(n)
            .ok_or(GgufError::Malformed("a length beyond any file"))?;
        if end > self.bytes.len() as u64 {
            return Err(GgufError::Truncated { need: end });
        }
        let slice = &self.bytes[self.at as usize..end as usize];
        self.at = end;
        Ok(slice)
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        let b = self.take(8)?;
        let mut a = [0; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A string, kept only when short and valid UTF-8.
    fn string(&mut self) -> Result<Option<String>, GgufError> {
        let len = self.u64()?;
        let bytes = self.take(len)?;
        Ok((len <= MAX_KEPT)
            .then(|| core::str::from_utf8(bytes).ok().map(str::to_string))
            .flatten())
    }

    fn skip_string(&mut self) -> Result<(), GgufError> {
        let len = self.u64()?;
        self.take(len).map(|_| ())
    }

    /// An unsigned integer value of any width; `None` for other types.
    fn integer(&mut self, ty: u32) -> Result<Option<u64>, GgufError> {
        Ok(match ty {
            0 | 1 => Some(self.take(1)?[0] as u64),
            2 | 3 => {
                let b = self.take(2)?;
                Some(u16::from_le_bytes([b[0], b[1]]) as u64)
            }
            4 | 5 => Some(self.u32()? as u64),
            10 | 11 => Some(self.u64()?),
            _ => {
                self.skip_value(ty, 0)?;
                None
            }
        })
    }

    fn skip_value(&mut self, ty: u32, depth: u8) -> Result<(), GgufError> {
        let width = match ty {
            0 | 1 | 7 => 1,
            2 | 3 => 2,
            4..=6 => 4,
            10..=12 => 8,
            STRING => return self.skip_string(),
            ARRAY => {
                // The format allows arrays of arrays; nothing real nests
                // deeper than one, and recursion must stay bounded.
                if depth > 2 {
                    return Err(GgufError::Malformed("arrays nested too deep"));
                }
                let inner = self.u32()?;
                let count = self.u64()?;
                return match inner {
                    STRING | ARRAY => {
                        for _ in 0..count {
                            self.skip_value(inner, depth + 1)?;
                        }
                        Ok(())
                    }
                    _ => {
                        let w = fixed_width(inner)?;
                        let n = count
                            .checked_mul(w)
                            .ok_or(GgufError::Malformed("an array larger than any file"))?;
                        self.take(n).map(|_| ())
                    }
                };
            }
            _ => return Err(GgufError::Malformed("a value of unknown type")),
        };
        self.take(width).map(|_| ())
    }
}

fn fixed_width(ty: u32) -> Result<u64, GgufError> {
    match ty {
        0 | 1 | 7 => Ok(1),
        2 | 3 => Ok(2),
        4..=6 => Ok(4),
        10..=12 => Ok(8),
        _ => Err(GgufError::Malformed("a value of unknown type")),
    }
}

#[cfg(test)]
#[path = "gguf_tests.rs"]
mod tests;
