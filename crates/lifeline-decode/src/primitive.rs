//! `Decode` for the standard types records are made of.
//!
//! Integers go through one reader for each sign, so each width costs a
//! range check, not a parser.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::{Decode, Error, Json, Key};

impl Decode for String {
    fn decode(json: Json<'_>) -> Result<Self, Error> {
        crate::text(json).map(Cow::into_owned)
    }
}

impl Decode for bool {
    fn decode(json: Json<'_>) -> Result<Self, Error> {
        match json {
            Json::Bool(b) => Ok(b),
            other => Err(Error::expected("a boolean", &other)),
        }
    }
}

impl Decode for () {
    fn decode(json: Json<'_>) -> Result<Self, Error> {
        match json {
            Json::Null => Ok(()),
            other => Err(Error::expected("null", &other)),
        }
    }
}

/// A whole number written without sign, fraction or exponent, up to `max`.
/// serde_json reads `-0`, `1.0` and `1e2` as other numbers than an
/// unsigned integer, and so is this refused.
fn unsigned(json: Json<'_>, max: u64) -> Result<u64, Error> {
    let Json::Number(text) = json else {
        return Err(Error::expected("an integer", &json));
    };
    match text.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ if text.bytes().all(|b| b.is_ascii_digit()) => {
            Err(Error::invalid("an integer out of range"))
        }
        _ => Err(Error::invalid("expected an integer, found another number")),
    }
}

fn signed(json: Json<'_>, min: i64, max: i64) -> Result<i64, Error> {
    let Json::Number(text) = json else {
        return Err(Error::expected("an integer", &json));
    };
    let digits = text.strip_prefix('-').unwrap_or(text);
    match text.parse::<i64>() {
        // serde_json reads `-0` as a float.
        Ok(0) if text.starts_with('-') => {
            Err(Error::invalid("expected an integer, found another number"))
        }
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ if digits.bytes().all(|b| b.is_ascii_digit()) => {
            Err(Error::invalid("an integer out of range"))
        }
        _ => Err(Error::invalid("expected an integer, found another number")),
    }
}

macro_rules! integers {
    ($($t:ty => $read:ident($($bound:expr),*);)*) => {$(
        impl Decode for $t {
            fn decode(json: Json<'_>) -> Result<Self, Error> {
                // In range: the reader checked it against the type's bounds.
                $read(json, $($bound),*).map(|n| n as $t)
            }
        }
    )*};
}

integers! {
    u8 => unsigned(u8::MAX as u64);
    u16 => unsigned(u16::MAX as u64);
    u32 => unsigned(u32::MAX as u64);
    u64 => unsigned(u64::MAX);
    usize => unsigned(usize::MAX as u64);
    i32 => signed(i32::MIN as i64, i32::MAX as i64);
    i64 => signed(i64::MIN, i64::MAX);
}

impl<T: Decode> Decode for Option<T> {
    fn decode(json: Json<'_>) -> Result<Self, Error> {
        match json {
            Json::Null => Ok(None),
            other => T::decode(other).map(Some),
        }
    }

    fn absent(_: &'static str) -> Result<Self, Error> {
        Ok(None)
    }
}

impl<T: Decode> Decode for Box<T> {
    fn decode(json: Json<'_>) -> Result<Self, Error> {
        T::decode(json).map(Box::new)
    }
}

impl<T: Decode> Decode for Vec<T> {
    fn decode(json: Json<'_>) -> Result<Self, Error> {
        crate::items(json)?.collect()
    }
}

impl<T: Decode> Decode for std::collections::VecDeque<T> {
    fn decode(json: Json<'_>) -> Result<Self, Error> {
        crate::items(json)?.collect()
    }
}

impl<T: Decode + Ord> Decode for BTreeSet<T> {
    fn decode(json: Json<'_>) -> Result<Self, Error> {
        crate::items(json)?.collect()
    }
}

impl<K: Key + Ord, V: Decode> Decode for BTreeMap<K, V> {
    fn decode(json: Json<'_>) -> Result<Self, Error> {
        // Inserted one by one, not collected: `collect` sorts the entries
        // first, and that stable sort is compiled (several KB of wasm) for
        // every map type read. A key given twice keeps its last value
        // either way.
        let mut map = BTreeMap::new();
        for entry in crate::entries::<K, V>(json)? {
            let (key, value) = entry?;
            map.insert(key, value);
        }
        Ok(map)
    }
}

macro_rules! tuples {
    ($($len:literal => ($($t:ident $i:literal),*);)*) => {$(
        impl<$($t: Decode),*> Decode for ($($t,)*) {
            fn decode(json: Json<'_>) -> Result<Self, Error> {
                let mut items = crate::tuple(json, $len)?;
                Ok(($(crate::item::<$t>(&mut items, $i)?,)*))
            }
        }
    )*};
}

tuples! {
    2 => (A 0, B 1);
    3 => (A 0, B 1, C 2);
}

impl<T: Decode> Decode for std::sync::Arc<T> {
    fn decode(json: Json<'_>) -> Result<Self, Error> {
        T::decode(json).map(std::sync::Arc::new)
    }
}

/// A string read through the type's `FromStr` (identities, digests).
pub fn parsed<T: std::str::FromStr>(json: Json<'_>) -> Result<T, Error>
where
    T::Err: std::fmt::Display,
{
    match json {
        Json::Text(text) => text.parse().map_err(Error::invalid),
        other => Err(Error::expected("a string", &other)),
    }
}

impl Key for String {
    fn from_key(key: Cow<'_, str>) -> Result<Self, Error> {
        Ok(key.into_owned())
    }
}

macro_rules! integer_keys {
    ($($t:ty),*) => {$(
        /// serde_json reads an integer key from its text the same way.
        impl Key for $t {
            fn from_key(key: Cow<'_, str>) -> Result<Self, Error> {
                <$t>::decode(Json::Number(&key))
            }
        }
    )*};
}

integer_keys!(u16, u32, u64);

/// As serde writes a `Result`: `{"Ok": value}` or `{"Err": error}`.
impl<T: Decode, E: Decode> Decode for Result<T, E> {
    fn decode(json: Json<'_>) -> Result<Self, Error> {
        const VARIANTS: &[&str] = &["Ok", "Err"];
        let (variant, content) = crate::variant(json)?;
        match &*variant {
            "Ok" => T::decode(crate::content(content)?).map(Ok),
            "Err" => E::decode(crate::content(content)?).map(Err),
            other => Err(Error::unknown_variant(other, VARIANTS)),
        }
    }
}
