//! The compact wire form phrases cross the protocol in, and small recorded
//! enums are stored in: `[kind, [texts], [numbers], [nested]]`. One small
//! struct for serde instead of a visitor per variant: serde's derived enum
//! forms cost the workers' and the page's wasm budgets a decoder each.
//! Below every module that uses it (the journal stores a
//! `journal::FailureReason` this way; `phrase` builds on it).

use core::fmt;
use lifeline_decode::Decode;
use lifeline_encode::Encode;

use serde::{Deserialize, Serialize};

/// The serialized form of a phrase (see the `phrase` module) or of a
/// small recorded enum: a kind, then its texts, numbers and nested values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct Wire(
    pub(crate) u16,
    pub(crate) Vec<String>,
    pub(crate) Vec<u64>,
    pub(crate) Vec<Wire>,
);

/// A wire phrase that does not decode (an unknown kind, a missing or
/// malformed argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireError;

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("malformed phrase")
    }
}

pub(crate) struct Reader {
    pub(crate) s: std::vec::IntoIter<String>,
    pub(crate) n: std::vec::IntoIter<u64>,
    pub(crate) p: std::vec::IntoIter<Wire>,
}

// Out of line: one call per argument keeps `decode` small in the UI's wasm.
impl Reader {
    #[inline(never)]
    pub(crate) fn s(&mut self) -> Result<String, WireError> {
        self.s.next().ok_or(WireError)
    }
    #[inline(never)]
    pub(crate) fn n(&mut self) -> Result<u64, WireError> {
        self.n.next().ok_or(WireError)
    }
    #[inline(never)]
    pub(crate) fn n32(&mut self) -> Result<u32, WireError> {
        u32::try_from(self.n()?).map_err(|_| WireError)
    }
    pub(crate) fn p(&mut self) -> Result<Wire, WireError> {
        self.p.next().ok_or(WireError)
    }
}

/// One argument of a phrase on the wire.
pub(crate) trait Arg: Sized {
    fn put(&self, w: &mut Wire);
    fn take(r: &mut Reader) -> Result<Self, WireError>;
}

impl Arg for String {
    fn put(&self, w: &mut Wire) {
        w.1.push(self.clone());
    }
    fn take(r: &mut Reader) -> Result<Self, WireError> {
        r.s()
    }
}

impl Arg for u64 {
    fn put(&self, w: &mut Wire) {
        w.2.push(*self);
    }
    fn take(r: &mut Reader) -> Result<Self, WireError> {
        r.n()
    }
}

impl Arg for u32 {
    fn put(&self, w: &mut Wire) {
        w.2.push(u64::from(*self));
    }
    fn take(r: &mut Reader) -> Result<Self, WireError> {
        r.n32()
    }
}

impl Arg for usize {
    fn put(&self, w: &mut Wire) {
        w.2.push(*self as u64);
    }
    fn take(r: &mut Reader) -> Result<Self, WireError> {
        usize::try_from(r.n()?).map_err(|_| WireError)
    }
}

impl Arg for bool {
    fn put(&self, w: &mut Wire) {
        w.2.push(u64::from(*self));
    }
    fn take(r: &mut Reader) -> Result<Self, WireError> {
        Ok(r.n()? != 0)
    }
}

impl Arg for Option<bool> {
    fn put(&self, w: &mut Wire) {
        w.2.push(match self {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        });
    }
    fn take(r: &mut Reader) -> Result<Self, WireError> {
        match r.n()? {
            0 => Ok(None),
            1 => Ok(Some(false)),
            2 => Ok(Some(true)),
            _ => Err(WireError),
        }
    }
}

impl Arg for crate::id::Generation {
    fn put(&self, w: &mut Wire) {
        w.2.push(self.0);
    }
    fn take(r: &mut Reader) -> Result<Self, WireError> {
        r.n().map(crate::id::Generation)
    }
}

/// A nested enum on the wire: a kind number, then its arguments.
macro_rules! nested {
    ($t:ident { $($k:literal => $v:ident $({ $($f:ident),* })?,)* }) => {
        impl $crate::wire::Arg for $t {
            fn put(&self, w: &mut $crate::wire::Wire) {
                match self {
                    $($t::$v $({ $($f),* })? => {
                        w.2.push($k);
                        $($( $crate::wire::Arg::put($f, w); )*)?
                    })*
                }
            }
            fn take(
                r: &mut $crate::wire::Reader,
            ) -> Result<Self, $crate::wire::WireError> {
                Ok(match r.n()? {
                    $($k => $t::$v $({ $($f: $crate::wire::Arg::take(r)?),* })?,)*
                    _ => return Err($crate::wire::WireError),
                })
            }
        }
    };
}

pub(crate) use nested;

/// `#[serde(with = "crate::wire::as_arg")]`: a field of a derived record
/// stored in the wire form, `[0, [texts], [numbers], [nested]]`, so that a
/// typed reason costs one small generic function instead of a derived
/// decoder per variant.
pub(crate) mod as_arg {
    use super::{Arg, Reader, Wire};
    use serde::{de::Error as _, Deserialize, Deserializer, Serialize, Serializer};

    /// `value` in the wire form.
    fn wire_of<T: Arg>(value: &T) -> Wire {
        let mut wire = Wire(0, Vec::new(), Vec::new(), Vec::new());
        value.put(&mut wire);
        wire
    }

    pub fn serialize<T: Arg, S: Serializer>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
        wire_of(value).serialize(serializer)
    }

    pub fn deserialize<'de, T: Arg, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
        let Wire(_, s, n, p) = Wire::deserialize(deserializer)?;
        T::take(&mut Reader {
            s: s.into_iter(),
            n: n.into_iter(),
            p: p.into_iter(),
        })
        .map_err(D::Error::custom)
    }

    pub fn encode<T: Arg>(value: &T, w: &mut lifeline_encode::Writer) {
        lifeline_encode::Encode::encode(&wire_of(value), w);
    }

    pub fn decode<T: Arg>(json: lifeline_decode::Json<'_>) -> Result<T, lifeline_decode::Error> {
        let Wire(_, s, n, p) = lifeline_decode::Decode::decode(json)?;
        T::take(&mut Reader {
            s: s.into_iter(),
            n: n.into_iter(),
            p: p.into_iter(),
        })
        .map_err(lifeline_decode::Error::invalid)
    }
}

#[cfg(test)]
mod tests {
    use crate::journal::{FailureReason, JournalRecord, ProviderFailureClass};

    #[test]
    fn a_failure_reason_is_stored_compactly_and_read_back() {
        for reason in [
            FailureReason::Stopped,
            FailureReason::NoByteFor { seconds: 60 },
            FailureReason::LoadStalled {
                seconds: 120,
                read: 5,
                total: 9,
            },
            FailureReason::NotGguf {
                detail: "invalid magic".into(),
            },
        ] {
            let text = serde_json::to_string(&reason).unwrap();
            assert!(text.starts_with("[0,["), "{text}");
            let back: FailureReason = serde_json::from_str(&text).unwrap();
            assert_eq!(back, reason);
        }
        assert_eq!(
            serde_json::to_string(&FailureReason::NoByteFor { seconds: 60 }).unwrap(),
            "[0,[],[6,60],[]]"
        );
        // An unknown kind or a missing argument is an error, not a panic.
        assert!(serde_json::from_str::<FailureReason>("[0,[],[999],[]]").is_err());
        assert!(serde_json::from_str::<FailureReason>("[0,[],[6],[]]").is_err());
    }

    #[test]
    fn a_failure_recorded_before_reasons_still_reads_and_a_new_one_keeps_its_reason() {
        let request = crate::id::ProviderRequestId::from_u128(0x51).expect("a valid id");
        let stamp = crate::id::ErrorStamp::from_u128(0x52).expect("a valid stamp");
        let old = format!(
            r#"{{"type":"provider_failed","request":"{request}","class":"cut","message":"x","partial_text":"","stamp":"{stamp}"}}"#
        );
        let record: JournalRecord = serde_json::from_str(&old).expect("an old record decodes");
        assert!(matches!(
            record,
            JournalRecord::ProviderFailed { reason: None, .. }
        ));
        let JournalRecord::ProviderFailed { request, stamp, .. } = record else {
            unreachable!()
        };
        let new = JournalRecord::ProviderFailed {
            request,
            class: ProviderFailureClass::IdleTimeout,
            message: "no byte of the reply arrived for 60 s".into(),
            partial_text: String::new(),
            stamp,
            reason: Some(FailureReason::NoByteFor { seconds: 60 }),
        };
        let text = serde_json::to_string(&new).unwrap();
        assert!(text.contains(r#""reason":[0,[],[6,60],[]]"#), "{text}");
        assert_eq!(serde_json::from_str::<JournalRecord>(&text).unwrap(), new);
        assert!(new.validate().is_ok());
    }
}
