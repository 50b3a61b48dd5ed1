//! Identities, time and digests.
//!
//! Every identity is a 128-bit value written as a ULID (26 characters of
//! Crockford base32, upper case). Distinct newtypes keep a `CommandId` from
//! ever being passed where an `AttemptId` is expected. Text from outside is
//! parsed strictly: one canonical spelling per value, so two spellings can
//! never name the same thing or sneak past a "seen" check.

use core::fmt;
use core::str::FromStr;
use lifeline_decode::Decode;
use lifeline_encode::Encode;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest as _, Sha256};

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Length of the canonical text form of every identity.
pub const ID_TEXT_LEN: usize = 26;

/// Why a text or number is not a valid identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdError {
    /// Which identity was being parsed ("command id", ...).
    pub kind: &'static str,
    pub reason: IdErrorReason,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdErrorReason {
    Length { found: usize },
    Character { index: usize },
    Overflow,
    Nil,
}

impl fmt::Display for IdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            IdErrorReason::Length { found } => write!(
                f,
                "invalid {}: expected {ID_TEXT_LEN} characters of upper-case Crockford base32, found {found} bytes",
                self.kind
            ),
            IdErrorReason::Character { index } => write!(
                f,
                "invalid {}: character {index} is not upper-case Crockford base32 (0-9 A-Z without I L O U)",
                self.kind
            ),
            IdErrorReason::Overflow => write!(
                f,
                "invalid {}: first character must be 0-7 (the value is 128 bits)",
                self.kind
            ),
            IdErrorReason::Nil => write!(f, "invalid {}: the all-zero id is reserved", self.kind),
        }
    }
}

impl std::error::Error for IdError {}

fn encode_ulid(value: u128) -> [u8; ID_TEXT_LEN] {
    let mut out = [0u8; ID_TEXT_LEN];
    let mut v = value;
    for slot in out.iter_mut().rev() {
        *slot = CROCKFORD[(v & 31) as usize];
        v >>= 5;
    }
    out
}

pub(crate) fn decode_ulid(kind: &'static str, text: &str) -> Result<u128, IdError> {
    let bytes = text.as_bytes();
    if bytes.len() != ID_TEXT_LEN {
        return Err(IdError {
            kind,
            reason: IdErrorReason::Length { found: bytes.len() },
        });
    }
    // 26 * 5 = 130 bits: the top two bits must be zero.
    if bytes[0] > b'7' {
        return Err(IdError {
            kind,
            reason: IdErrorReason::Overflow,
        });
    }
    let mut value: u128 = 0;
    for (index, b) in bytes.iter().enumerate() {
        let digit = CROCKFORD.iter().position(|c| c == b).ok_or(IdError {
            kind,
            reason: IdErrorReason::Character { index },
        })?;
        value = (value << 5) | digit as u128;
    }
    if value == 0 {
        return Err(IdError {
            kind,
            reason: IdErrorReason::Nil,
        });
    }
    Ok(value)
}

macro_rules! identity {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(u128);

        impl $name {
            /// Human name of this identity, used in error messages.
            pub const KIND: &'static str = $kind;

            /// Wraps a raw value; the all-zero value is reserved.
            pub fn from_u128(value: u128) -> Result<Self, IdError> {
                if value == 0 {
                    return Err(IdError { kind: $kind, reason: IdErrorReason::Nil });
                }
                Ok(Self(value))
            }

            pub fn as_u128(self) -> u128 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let text = encode_ulid(self.0);
                // The alphabet is ASCII, so this never fails.
                f.write_str(core::str::from_utf8(&text).unwrap_or("?"))
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self)
            }
        }

        impl FromStr for $name {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, IdError> {
                decode_ulid($kind, s).map(Self)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }

        impl lifeline_decode::Decode for $name {
            fn decode(json: lifeline_decode::Json<'_>) -> Result<Self, lifeline_decode::Error> {
                lifeline_decode::parsed(json)
            }
        }

        impl lifeline_encode::Encode for $name {
            fn encode(&self, w: &mut lifeline_encode::Writer) {
                w.display(self);
            }
        }

        impl lifeline_encode::EncodeKey for $name {
            fn encode_key(&self, w: &mut lifeline_encode::Writer) {
                w.display(self);
            }
        }

        impl lifeline_decode::Key for $name {
            fn from_key(key: std::borrow::Cow<'_, str>) -> Result<Self, lifeline_decode::Error> {
                key.parse().map_err(lifeline_decode::Error::invalid)
            }
        }
    };
}

identity!(
    /// A workspace (the OPFS folder a session works in).
    WorkspaceId,
    "workspace id"
);
identity!(
    /// A local folder the user opened: names the stored directory handle,
    /// never the folder's path (the browser does not reveal it).
    FolderId,
    "folder id"
);
identity!(
    /// The lease a controller holds on a workspace; generations count per lease.
    LeaseId,
    "lease id"
);
identity!(
    /// One runtime worker's identity; a replacement always gets a new one.
    RuntimeId,
    "runtime id"
);
identity!(
    /// One agent conversation.
    SessionId,
    "session id"
);
identity!(
    /// One runtime-backed run of a session: exactly one per (lease, generation).
    ExecutionId,
    "execution id"
);
identity!(
    /// One exposure of a command to transport.
    AttemptId,
    "attempt id"
);
identity!(
    /// A command admitted to the journal; never reused.
    CommandId,
    "command id"
);
identity!(
    /// Client-chosen key that makes admission idempotent.
    IdempotencyKey,
    "idempotency key"
);
identity!(
    /// One user prompt and the agent's work on it; chosen by the client so a
    /// reconnecting client cannot submit the same turn twice.
    TurnId,
    "turn id"
);
identity!(
    /// Identity of a durable error/recovery record.
    ErrorStamp,
    "error stamp"
);
identity!(
    /// A unit of work; sessions belong to one.
    TaskId,
    "task id"
);
identity!(
    /// An environment profile (provider, model, env vars, capabilities, budget).
    ProfileId,
    "profile id"
);
identity!(
    /// A stored credential; profiles and the journal hold only this reference.
    CredentialId,
    "credential id"
);
identity!(
    /// One startup or resume try of a session (reference 004, requirement 007).
    /// Distinct from the execution's generation: one execution can see many.
    StartupAttemptId,
    "startup attempt id"
);
identity!(
    /// One request to a model provider, recorded before it is sent.
    ProviderRequestId,
    "provider request id"
);

/// Counter of runtime replacements on one lease; the first runtime is 1.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(transparent)]
pub struct Generation(pub u64);

impl Generation {
    pub const FIRST: Generation = Generation(1);
    pub fn next(self) -> Generation {
        Generation(self.0.saturating_add(1))
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Dense per-command event sequence. Events start at 1; 0 means "before the
/// first event" and is only valid in cursors and acknowledgements.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Encode,
    Deserialize,
    Decode,
)]
#[serde(transparent)]
pub struct EventSeq(pub u64);

impl EventSeq {
    pub const ZERO: EventSeq = EventSeq(0);
    pub fn next(self) -> EventSeq {
        EventSeq(self.0.saturating_add(1))
    }
}

impl fmt::Display for EventSeq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Milliseconds on the caller's clock. The core never reads a clock; every
/// input carries `now`.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Encode,
    Deserialize,
    Decode,
)]
#[serde(transparent)]
pub struct Millis(pub u64);

impl Millis {
    pub fn plus(self, ms: u64) -> Millis {
        Millis(self.0.saturating_add(ms))
    }
}

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}

/// SHA-256 digest, written as 64 lower-case hex characters.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    pub fn of(bytes: &[u8]) -> Digest {
        let mut out = [0u8; 32];
        out.copy_from_slice(&Sha256::digest(bytes));
        Digest(out)
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl FromStr for Digest {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let b = s.as_bytes();
        if b.len() != 64 {
            return Err(format!(
                "invalid sha-256 digest: expected 64 lower-case hex characters, found {} bytes",
                b.len()
            ));
        }
        let mut out = [0u8; 32];
        for (i, pair) in b.chunks(2).enumerate() {
            let hi = hex_value(pair[0]);
            let lo = hex_value(pair[1]);
            match (hi, lo) {
                (Some(hi), Some(lo)) => out[i] = (hi << 4) | lo,
                _ => {
                    return Err(format!(
                        "invalid sha-256 digest: character {} is not lower-case hex",
                        i * 2
                    ))
                }
            }
        }
        Ok(Digest(out))
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

impl Serialize for Digest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Digest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl lifeline_encode::Encode for Digest {
    fn encode(&self, w: &mut lifeline_encode::Writer) {
        w.display(self);
    }
}

impl lifeline_encode::EncodeKey for Digest {
    fn encode_key(&self, w: &mut lifeline_encode::Writer) {
        w.display(self);
    }
}

impl lifeline_decode::Decode for Digest {
    fn decode(json: lifeline_decode::Json<'_>) -> Result<Self, lifeline_decode::Error> {
        lifeline_decode::parsed(json)
    }
}

impl lifeline_decode::Key for Digest {
    fn from_key(key: std::borrow::Cow<'_, str>) -> Result<Self, lifeline_decode::Error> {
        key.parse().map_err(lifeline_decode::Error::invalid)
    }
}

/// Mints identities from caller-supplied entropy and the caller's clock.
///
/// The core has no randomness source of its own, so a simulation that passes
/// the same seed gets the same ids. Layout follows ULID: 48 bits of
/// milliseconds, then 80 bits from a SHA-256-keyed counter stream.
#[derive(Clone, Debug)]
pub struct IdMinter {
    key: [u8; 32],
    counter: u64,
}

impl IdMinter {
    /// `entropy` should be fresh random bytes in production (crypto.getRandomValues);
    /// `context` separates streams that share a seed (e.g. journal length at recovery).
    pub fn new(entropy: &[u8], context: u64) -> IdMinter {
        let mut h = Sha256::new();
        h.update(b"lifeline id minter v1");
        h.update(entropy);
        h.update(context.to_le_bytes());
        let mut key = [0u8; 32];
        key.copy_from_slice(&h.finalize());
        IdMinter { key, counter: 0 }
    }

    /// A raw 128-bit value, never zero. Uniqueness against the journal is the
    /// caller's check (see `Projection::is_seen`).
    pub fn mint_raw(&mut self, now: Millis) -> u128 {
        loop {
            self.counter = self.counter.wrapping_add(1);
            let mut h = Sha256::new();
            h.update(self.key);
            h.update(self.counter.to_le_bytes());
            let block = h.finalize();
            let mut random = [0u8; 16];
            random.copy_from_slice(&block[..16]);
            let random = u128::from_be_bytes(random) & ((1u128 << 80) - 1);
            let time = (now.0 as u128 & ((1u128 << 48) - 1)) << 80;
            let value = time | random;
            if value != 0 {
                return value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_and_is_canonical() {
        let id = CommandId::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef).unwrap();
        let text = id.to_string();
        assert_eq!(text.len(), ID_TEXT_LEN);
        assert_eq!(text.parse::<CommandId>().unwrap(), id);
        assert!(text.to_lowercase().parse::<CommandId>().is_err());
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(serde_json::from_str::<CommandId>(&json).unwrap(), id);
    }

    #[test]
    fn rejects_bad_text() {
        assert!(matches!(
            "".parse::<CommandId>().unwrap_err().reason,
            IdErrorReason::Length { found: 0 }
        ));
        assert!(matches!(
            "8ZZZZZZZZZZZZZZZZZZZZZZZZZ"
                .parse::<CommandId>()
                .unwrap_err()
                .reason,
            IdErrorReason::Overflow
        ));
        assert!(matches!(
            "0000000000000000000000000I"
                .parse::<CommandId>()
                .unwrap_err()
                .reason,
            IdErrorReason::Character { index: 25 }
        ));
        assert!(matches!(
            "00000000000000000000000000"
                .parse::<CommandId>()
                .unwrap_err()
                .reason,
            IdErrorReason::Nil
        ));
        assert!("7ZZZZZZZZZZZZZZZZZZZZZZZZZ".parse::<CommandId>().is_ok());
        let err = serde_json::from_str::<LeaseId>("\"nope\"").unwrap_err();
        assert!(err.to_string().contains("invalid lease id"), "{err}");
    }

    #[test]
    fn minter_is_deterministic_and_time_ordered() {
        let mut a = IdMinter::new(b"seed", 0);
        let mut b = IdMinter::new(b"seed", 0);
        let x = a.mint_raw(Millis(5));
        assert_eq!(x, b.mint_raw(Millis(5)));
        let y = a.mint_raw(Millis(6));
        assert!(y > x);
        assert_ne!(IdMinter::new(b"seed", 1).mint_raw(Millis(5)), x);
    }

    #[test]
    fn digest_hex_round_trips() {
        let d = Digest::of(b"abc");
        assert_eq!(
            d.to_string(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(d.to_string().parse::<Digest>().unwrap(), d);
        assert!(
            "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"
                .parse::<Digest>()
                .is_err()
        );
    }
}
