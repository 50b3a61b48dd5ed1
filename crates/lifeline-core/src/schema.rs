//! Schema versioning, limits and strict decoding.
//!
//! Every durable record carries `"v": 1`. A record written by a future build
//! is rejected with a clear error rather than misread, and any byte string
//! given to [`decode`] yields a value or an error, never a panic.

use core::fmt;
use lifeline_decode::Decode;
use lifeline_encode::Encode;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The one schema version this build writes and reads.
pub const SCHEMA_VERSION: u64 = 1;

/// Hard limits on everything that comes from outside or lands in the journal.
pub mod limits {
    /// Largest encoded record `decode` will look at.
    pub const MAX_RECORD_BYTES: usize = 4 * 1024 * 1024;
    /// Largest projection snapshot: it grows with the number of commands
    /// (settled output is collapsed), and it is only ever read from this
    /// origin's own journal.
    pub const MAX_SNAPSHOT_BYTES: usize = 64 * 1024 * 1024;
    /// One command line. 64 KiB, the runtime shell's own line limit, so a
    /// model's `write_file` of a useful file fits in one command.
    pub const MAX_COMMAND_LINE_BYTES: usize = 64 * 1024;
    pub const MAX_WORKING_DIRECTORY_BYTES: usize = 1024;
    pub const MAX_CAPABILITIES: usize = 32;
    pub const MAX_CAPABILITY_BYTES: usize = 64;
    /// One stdout/stderr chunk from the runtime.
    pub const MAX_OUTPUT_CHUNK_BYTES: usize = 256 * 1024;
    /// Tool names, lifecycle phases, checkpoint labels, reasons, messages.
    pub const MAX_TEXT_BYTES: usize = 16 * 1024;
    /// Streams listed in one hello or heartbeat.
    pub const MAX_STREAMS_PER_MESSAGE: usize = 4096;
    /// Entries in one persist batch.
    pub const MAX_BATCH_ENTRIES: usize = 4096;
    /// Outcome changes listed in one recovery evidence record.
    pub const MAX_EVIDENCE_OUTCOMES: usize = 100_000;
    /// A user prompt or an agent reply.
    pub const MAX_PROMPT_BYTES: usize = 256 * 1024;
    /// Commands one turn may plan.
    pub const MAX_PLAN_COMMANDS: usize = 64;
    /// One session lifecycle record, notes and failure details included.
    pub const MAX_SESSION_RECORD_BYTES: usize = 16 * 1024;
    /// Lifecycle records a projection keeps per session: the first (its
    /// creation) and the newest; folding needs no more.
    pub const MAX_LIFECYCLE_RECORDS: usize = 64;
    /// Sessions the journal holds.
    pub const MAX_SESSIONS: usize = 10_000;
    /// The text of one provider reply (or the partial text of a failed one).
    pub const MAX_REPLY_TEXT_BYTES: usize = 1024 * 1024;
    /// Tool calls in one provider reply.
    pub const MAX_TOOL_CALLS: usize = 32;
    /// The JSON arguments of one tool call.
    pub const MAX_TOOL_ARGUMENTS_BYTES: usize = 256 * 1024;
    /// Text and tool arguments of one provider reply together, so the
    /// record stays well inside [`MAX_RECORD_BYTES`] after JSON escaping.
    pub const MAX_REPLY_TOTAL_BYTES: usize = 2 * 1024 * 1024;
    /// A tool call's id and name, a reply's stop reason, a model name.
    pub const MAX_TOOL_LABEL_BYTES: usize = 256;
    /// A provider failure's message.
    pub const MAX_PROVIDER_MESSAGE_BYTES: usize = 2 * 1024;
    /// Largest output budget a command may ask for.
    pub const MAX_OUTPUT_BUDGET_BYTES: u64 = 1 << 34;
}

/// The `"v"` field: serializes as 1 and refuses anything else.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct V1;

impl Serialize for V1 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(SCHEMA_VERSION)
    }
}

impl<'de> Deserialize<'de> for V1 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = u64::deserialize(d)?;
        if v == SCHEMA_VERSION {
            Ok(V1)
        } else {
            Err(serde::de::Error::custom(format_args!(
                "unsupported schema version {v}; this build understands {SCHEMA_VERSION}"
            )))
        }
    }
}

impl lifeline_encode::Encode for V1 {
    fn encode(&self, w: &mut lifeline_encode::Writer) {
        w.u64(SCHEMA_VERSION);
    }
}

impl lifeline_decode::Decode for V1 {
    fn decode(json: lifeline_decode::Json<'_>) -> Result<Self, lifeline_decode::Error> {
        match u64::decode(json)? {
            SCHEMA_VERSION => Ok(V1),
            v => Err(lifeline_decode::Error::invalid(format_args!(
                "unsupported schema version {v}; this build understands {SCHEMA_VERSION}"
            ))),
        }
    }
}

/// A projection snapshot's `"v"`. Version 2 may keep settled commands
/// small (`Projection::settled`), which a build that knows only version 1
/// would read as missing commands, and write back without them; such a
/// build refuses a version it does not know (as [`V1`] does) and replays
/// the journal instead. Version 3 leaves out `Projection::keys` (rebuilt on
/// load), which a version-2 build would read as no key ever used, and
/// output summaries' empty parts. Versions 1 and 2 still read here: the
/// commands version 1 holds whole are kept small when it loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotVersion(u64);

impl SnapshotVersion {
    pub const CURRENT: SnapshotVersion = SnapshotVersion(4);
    /// The versions this build reads.
    pub const READS: [u64; 4] = [SCHEMA_VERSION, 2, 3, 4];
}

impl lifeline_encode::Encode for SnapshotVersion {
    fn encode(&self, w: &mut lifeline_encode::Writer) {
        w.u64(self.0);
    }
}

impl Serialize for SnapshotVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for SnapshotVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = u64::deserialize(d)?;
        if SnapshotVersion::READS.contains(&v) {
            Ok(SnapshotVersion(v))
        } else {
            Err(serde::de::Error::custom(format_args!(
                "unsupported snapshot version {v}; this build understands 1 to 4"
            )))
        }
    }
}

impl lifeline_decode::Decode for SnapshotVersion {
    fn decode(json: lifeline_decode::Json<'_>) -> Result<Self, lifeline_decode::Error> {
        match u64::decode(json)? {
            v if SnapshotVersion::READS.contains(&v) => Ok(SnapshotVersion(v)),
            v => Err(lifeline_decode::Error::invalid(format_args!(
                "unsupported snapshot version {v}; this build understands 1 to 4"
            ))),
        }
    }
}

/// A durable or wire record with a named, versioned schema.
pub trait Schema:
    Serialize + lifeline_encode::Encode + DeserializeOwned + lifeline_decode::Decode
{
    /// Human name used in errors ("command record").
    const NAME: &'static str;
    /// The `"v"` values this build reads; a record with another is refused
    /// as of a version it does not know, whatever else is wrong with it.
    const VERSIONS: &'static [u64] = &[SCHEMA_VERSION];
    /// Largest encoding `decode` reads for this type.
    const MAX_BYTES: usize = limits::MAX_RECORD_BYTES;
    /// Invariants the type system cannot express, checked after every read
    /// and before every write.
    fn validate(&self) -> Result<(), String>;
}

/// Why bytes could not be decoded as a schema.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub enum SchemaError {
    TooLarge {
        schema: String,
        len: usize,
        max: usize,
    },
    Malformed {
        schema: String,
        detail: String,
    },
    MissingVersion {
        schema: String,
    },
    UnsupportedVersion {
        schema: String,
        found: String,
    },
    Invalid {
        schema: String,
        detail: String,
    },
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::TooLarge { schema, len, max } => {
                write!(f, "{schema} is {len} bytes; the limit is {max}")
            }
            SchemaError::Malformed { schema, detail } => {
                write!(f, "malformed {schema}: {detail}")
            }
            SchemaError::MissingVersion { schema } => {
                write!(f, "{schema} has no \"v\" schema version field")
            }
            SchemaError::UnsupportedVersion { schema, found } => write!(
                f,
                "unsupported schema version {found} for {schema}; this build understands {SCHEMA_VERSION}"
            ),
            SchemaError::Invalid { schema, detail } => write!(f, "invalid {schema}: {detail}"),
        }
    }
}

impl std::error::Error for SchemaError {}

/// Decodes and validates one record, as [`read`] does.
pub fn decode<T: Schema>(bytes: &[u8]) -> Result<T, SchemaError> {
    precheck::<T>(bytes)?;
    let text = std::str::from_utf8(bytes).map_err(|e| SchemaError::Malformed {
        schema: T::NAME.to_string(),
        detail: e.to_string(),
    })?;
    read_checked(text)
}

/// Decodes and validates one record's text, natively and in the browser
/// alike (`lifeline_decode`). Only when decoding fails is the version
/// looked at, so a future record is still named as such instead of
/// failing on a field.
pub fn read<T: Schema>(text: &str) -> Result<T, SchemaError> {
    precheck::<T>(text.as_bytes())?;
    read_checked(text)
}

/// [`read`] of a text that passed [`precheck`].
fn read_checked<T: Schema>(text: &str) -> Result<T, SchemaError> {
    let read = match lifeline_decode::from_str::<T>(text) {
        Ok(record) => accept(record),
        Err(e) => Err(refusal(
            T::NAME,
            version_of(text, T::VERSIONS),
            e.to_string(),
        )),
    };
    #[cfg(debug_assertions)]
    same_as_serde_json(text, &read);
    read
}

/// In debug builds (every native test and simulation), each record read
/// is also read with serde_json and serde's derive, which wrote it: what
/// they accept must read the same here, but for the differences
/// `lifeline_decode` lists, which nothing the app writes has.
#[cfg(debug_assertions)]
fn same_as_serde_json<T: Schema>(text: &str, read: &Result<T, SchemaError>) {
    if let Ok(theirs) = serde_json::from_str::<T>(text) {
        let encoded = |r: &T| serde_json::to_string(r).ok();
        let ours = read.as_ref().map(encoded);
        let theirs = accept(theirs).map(|r| encoded(&r));
        assert_eq!(
            ours,
            theirs.as_ref().cloned(),
            "{}: lifeline_decode, then serde_json",
            T::NAME
        );
    }
}

/// What a record's `"v"` field holds, for naming why it did not decode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Version {
    /// No `"v"` field (or `null`).
    Missing,
    /// The version this build reads: the record is damaged, not foreign.
    Current,
    /// Anything else, as JSON text.
    Other(String),
}

/// The checks before any parser runs: the size limit, and that the text
/// is a JSON object (serde's derived structs would also take an array).
pub fn precheck<T: Schema>(bytes: &[u8]) -> Result<(), SchemaError> {
    if bytes.len() > T::MAX_BYTES {
        return Err(SchemaError::TooLarge {
            schema: T::NAME.to_string(),
            len: bytes.len(),
            max: T::MAX_BYTES,
        });
    }
    opens_object(
        T::NAME,
        bytes.iter().copied().find(|b| !b.is_ascii_whitespace()),
    )
}

/// The second half of [`precheck`], for a reader that found the first
/// character that is not whitespace itself: it must open an object.
pub fn opens_object(schema: &str, first: Option<u8>) -> Result<(), SchemaError> {
    if first != Some(b'{') {
        return Err(SchemaError::Malformed {
            schema: schema.to_string(),
            detail: "expected a JSON object".to_string(),
        });
    }
    Ok(())
}

/// A parsed record is accepted only if its invariants hold.
pub fn accept<T: Schema>(record: T) -> Result<T, SchemaError> {
    match record.validate() {
        Ok(()) => Ok(record),
        Err(detail) => Err(SchemaError::Invalid {
            schema: T::NAME.to_string(),
            detail,
        }),
    }
}

/// Why a record that did not parse was refused: a missing or foreign
/// version takes precedence over the field the parser stopped at (`detail`).
/// Not generic, so it is compiled once for every record type.
pub fn refusal(schema: &str, version: Version, detail: String) -> SchemaError {
    let schema = schema.to_string();
    match version {
        Version::Missing => SchemaError::MissingVersion { schema },
        Version::Other(found) => SchemaError::UnsupportedVersion { schema, found },
        Version::Current => SchemaError::Malformed { schema, detail },
    }
}

/// What the `"v"` field of a record's text holds. The text is parsed again:
/// this runs only for a record that did not decode.
fn version_of(text: &str, versions: &[u64]) -> Version {
    use lifeline_decode::{Json, Object};
    let Ok(Ok(mut object)) = lifeline_decode::json::parse(text).map(Object::of) else {
        // Broken JSON: the parse error says where, which beats a version.
        return Version::Current;
    };
    match object.take("v") {
        // Given twice: damaged, not foreign.
        Err(_) => Version::Current,
        Ok(None | Some(Json::Null)) => Version::Missing,
        Ok(Some(Json::Number(n))) if n.parse::<u64>().is_ok_and(|v| versions.contains(&v)) => {
            Version::Current
        }
        Ok(Some(Json::Number(n))) => Version::Other(n.to_string()),
        Ok(Some(Json::Text(t))) => Version::Other(format!("{t:?}")),
        Ok(Some(other)) => Version::Other(other.kind().to_string()),
    }
}

/// Validates and encodes one record. A record that fails validation here is
/// a bug in this build, so it is refused rather than written — and so is
/// one with an integer JavaScript cannot hold exactly: the browser reads
/// records with `JSON.parse`, which would round it, and the record would
/// come back refused as damaged.
pub fn encode<T: Schema>(record: &T) -> Result<Vec<u8>, SchemaError> {
    record.validate().map_err(|detail| SchemaError::Invalid {
        schema: T::NAME.to_string(),
        detail,
    })?;
    let json = lifeline_encode::to_vec(record);
    match first_unsafe_integer(&json) {
        None => Ok(json),
        Some(number) => Err(SchemaError::Invalid {
            schema: T::NAME.to_string(),
            detail: format!("{number} is beyond {MAX_SAFE_INTEGER}, the largest integer JavaScript holds exactly"),
        }),
    }
}

/// 2^53 − 1: every integer up to it survives `JSON.parse` exactly.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The first integer in JSON text (outside strings) whose magnitude is
/// beyond [`MAX_SAFE_INTEGER`]. One pass over the bytes; only runs of 16 or
/// more digits are looked at closely.
pub fn first_unsafe_integer(json: &[u8]) -> Option<String> {
    let mut i = 0;
    let mut in_string = false;
    let mut escaped = false;
    while i < json.len() {
        let b = json[i];
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if !b.is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < json.len() && json[i].is_ascii_digit() {
            i += 1;
        }
        // A fraction or an exponent makes it a float: JSON.parse and
        // serde_json round those alike.
        let float = matches!(json.get(i), Some(b'.' | b'e' | b'E'));
        if !float && i - start >= 16 {
            let digits = core::str::from_utf8(&json[start..i]).unwrap_or("");
            if digits
                .parse::<u128>()
                .map_or(true, |n| n > MAX_SAFE_INTEGER as u128)
            {
                return Some(digits.to_string());
            }
        }
        // Skip the rest of a float so its digits are not read as integers.
        while float
            && i < json.len()
            && matches!(json[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
        {
            i += 1;
        }
    }
    None
}

/// Checks a bounded, non-empty-if-required text field.
pub(crate) fn check_text(field: &str, text: &str, max: usize) -> Result<(), String> {
    if text.len() > max {
        return Err(format!(
            "{field} is {} bytes; the limit is {max}",
            text.len()
        ));
    }
    if text.contains('\0') {
        return Err(format!("{field} contains a NUL character"));
    }
    Ok(())
}
