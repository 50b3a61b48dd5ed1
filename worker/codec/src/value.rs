//! A value `JSON.parse` made, read by serde's derived decoders.
//!
//! Why not serde-wasm-bindgen's `Deserializer`, which this replaces: it hands
//! a visitor one of three map readers (a JS iterator, `Object.entries`, a
//! struct's fields) and two sequence readers, so every derived visitor, and
//! everything an internally tagged enum reads through it
//! (`lifeline_core::tag_first`), was compiled two or three times, once per
//! reader, though a parsed JSON value only ever takes one of those paths.
//! Its type errors also link float formatting. Here every visitor sees one
//! map reader ([`Fields`]), one sequence reader ([`Items`]) and one enum
//! reader ([`Variant`]); what does not depend on the visitor (classifying
//! the value, naming what it is in an error) is compiled once. Measured:
//! docs/benchmarks.md, "Thirteenth stop".
//!
//! Only what `JSON.parse` produces reaches here: null, booleans, numbers,
//! strings, arrays and plain objects. A number is an integer for an integer
//! field only when JavaScript holds it exactly (a safe integer), so a
//! position beyond 2^53 is refused, never rounded.

use js_sys::{Array, JsString, Object};
use serde::de::{self, DeserializeSeed, Expected, IntoDeserializer, Unexpected, Visitor};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

/// Decodes a `T` from a parsed value.
pub fn from_value<T: de::DeserializeOwned>(value: JsValue) -> Result<T, Error> {
    T::deserialize(Value(value))
}

/// Why a value did not fit its type, in serde's words.
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error(message.to_string())
    }

    // serde's own wording, through `Shown` so that a number is never
    // formatted as a float (that would link float formatting for an error).
    fn invalid_type(unexpected: Unexpected, expected: &dyn Expected) -> Self {
        Error(format!(
            "invalid type: {}, expected {expected}",
            Shown(unexpected)
        ))
    }

    fn invalid_value(unexpected: Unexpected, expected: &dyn Expected) -> Self {
        Error(format!(
            "invalid value: {}, expected {expected}",
            Shown(unexpected)
        ))
    }
}

/// [`Unexpected`]'s `Display`, except that a float is named, not printed.
struct Shown<'a>(Unexpected<'a>);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0 {
            Unexpected::Float(_) => f.write_str("a number that is not a safe integer"),
            Unexpected::Bool(b) => write!(f, "boolean `{b}`"),
            Unexpected::Unsigned(n) => write!(f, "integer `{n}`"),
            Unexpected::Signed(n) => write!(f, "integer `{n}`"),
            Unexpected::Char(c) => write!(f, "character `{c}`"),
            Unexpected::Str(s) => write!(f, "string {s:?}"),
            Unexpected::Bytes(_) => f.write_str("byte array"),
            Unexpected::Unit => f.write_str("null"),
            Unexpected::Option => f.write_str("Option value"),
            Unexpected::NewtypeStruct => f.write_str("newtype struct"),
            Unexpected::Seq => f.write_str("sequence"),
            Unexpected::Map => f.write_str("map"),
            Unexpected::Enum => f.write_str("enum"),
            Unexpected::UnitVariant => f.write_str("unit variant"),
            Unexpected::NewtypeVariant => f.write_str("newtype variant"),
            Unexpected::TupleVariant => f.write_str("tuple variant"),
            Unexpected::StructVariant => f.write_str("struct variant"),
            Unexpected::Other(other) => f.write_str(other),
        }
    }
}

/// What a parsed value is, found once for every visitor.
enum Kind {
    Null,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Str(String),
    Array(Array),
    Object(Object),
}

/// The largest integer JavaScript holds exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A parsed value as a serde `Deserializer`.
pub struct Value(JsValue);

impl Value {
    #[inline(never)]
    fn kind(self) -> Kind {
        let value = self.0;
        if let Some(n) = value.as_f64() {
            number(n)
        } else if let Some(s) = value.as_string() {
            Kind::Str(s)
        } else if let Some(b) = value.as_bool() {
            Kind::Bool(b)
        } else if Array::is_array(&value) {
            Kind::Array(value.unchecked_into())
        } else if value.is_object() {
            Kind::Object(value.unchecked_into())
        } else {
            Kind::Null
        }
    }

    fn is_nullish(&self) -> bool {
        self.0.is_null() || self.0.is_undefined()
    }

    /// The value as an integer, when it is a safe integer.
    #[inline(never)]
    fn integer(&self) -> Option<Kind> {
        match self.0.as_f64().map(number) {
            Some(n @ (Kind::Unsigned(_) | Kind::Signed(_))) => Some(n),
            _ => None,
        }
    }

    /// The value as a plain object (not an array).
    #[inline(never)]
    fn object(&self) -> Option<Object> {
        (self.0.is_object() && !Array::is_array(&self.0)).then(|| self.0.clone().unchecked_into())
    }

    /// The value as an array.
    fn array(&self) -> Option<Array> {
        self.0.dyn_ref::<Array>().cloned()
    }

    /// An externally tagged enum's variant: `"Name"` or `{"Name": payload}`.
    #[inline(never)]
    fn variant(self) -> Result<Variant, Error> {
        if let Some(tag) = self.0.as_string() {
            return Ok(Variant {
                tag,
                payload: JsValue::UNDEFINED,
            });
        }
        let Some(object) = self.object() else {
            return Err(self.invalid("a variant's name or an object with one key"));
        };
        let keys = Object::keys(&object);
        if keys.length() != 1 {
            return Err(de::Error::invalid_length(keys.length() as usize, &"1"));
        }
        let key = keys.get(0);
        let payload = field_of(&object, key.unchecked_ref());
        Ok(Variant {
            tag: key.as_string().unwrap_or_default(),
            payload,
        })
    }

    /// serde's "invalid type" error, naming what the value is and what the
    /// reader asked for. Not the visitor's own `expecting` ("struct
    /// JournalEntry"): passing the visitor would compile one copy of this
    /// call per visitor, and the caller names the record anyway.
    #[cold]
    #[inline(never)]
    fn invalid(&self, expected: &'static str) -> Error {
        let unexpected = match Value(self.0.clone()).kind() {
            Kind::Null => Unexpected::Unit,
            Kind::Bool(b) => Unexpected::Bool(b),
            Kind::Unsigned(n) => Unexpected::Unsigned(n),
            Kind::Signed(n) => Unexpected::Signed(n),
            Kind::Float(n) => Unexpected::Float(n),
            Kind::Str(s) => return de::Error::invalid_type(Unexpected::Str(&s), &expected),
            Kind::Array(_) => Unexpected::Seq,
            Kind::Object(_) => Unexpected::Map,
        };
        de::Error::invalid_type(unexpected, &expected)
    }
}

fn number(n: f64) -> Kind {
    if n.fract() == 0.0 && n.abs() <= MAX_SAFE {
        if n >= 0.0 {
            Kind::Unsigned(n as u64)
        } else {
            Kind::Signed(n as i64)
        }
    } else {
        Kind::Float(n)
    }
}

impl<'de> de::Deserializer<'de> for Value {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.kind() {
            Kind::Null => visitor.visit_unit(),
            Kind::Bool(b) => visitor.visit_bool(b),
            Kind::Unsigned(n) => visitor.visit_u64(n),
            Kind::Signed(n) => visitor.visit_i64(n),
            Kind::Float(n) => visitor.visit_f64(n),
            Kind::Str(s) => visitor.visit_string(s),
            Kind::Array(array) => visitor.visit_seq(Items::new(array)),
            Kind::Object(object) => visitor.visit_map(Fields::entries(object)),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0.as_bool() {
            Some(b) => visitor.visit_bool(b),
            None => Err(self.invalid("a boolean")),
        }
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.integer() {
            Some(Kind::Unsigned(n)) => visitor.visit_u64(n),
            Some(Kind::Signed(n)) => visitor.visit_i64(n),
            _ => Err(self.invalid("an integer")),
        }
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.integer() {
            Some(Kind::Unsigned(n)) => visitor.visit_u64(n),
            _ => Err(self.invalid("a non-negative integer")),
        }
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }
    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0.as_f64() {
            Some(n) => visitor.visit_f64(n),
            None => Err(self.invalid("a number")),
        }
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0.as_string() {
            Some(s) => visitor.visit_string(s),
            None => Err(self.invalid("a string")),
        }
    }

    // JSON has no bytes: a byte buffer is written as an array of numbers.
    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.is_nullish() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.is_nullish() {
            visitor.visit_unit()
        } else {
            Err(self.invalid("null"))
        }
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.array() {
            Some(array) => visitor.visit_seq(Items::new(array)),
            None => Err(self.invalid("an array")),
        }
    }
    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.object() {
            Some(object) => visitor.visit_map(Fields::entries(object)),
            None => Err(self.invalid("an object")),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.object() {
            Some(object) => visitor.visit_map(Fields::named(object, fields)),
            None => Err(self.invalid("an object")),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(self.variant()?)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

impl<'de> de::VariantAccess<'de> for Value {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        if self.is_nullish() {
            Ok(())
        } else {
            Err(self.invalid("a unit variant"))
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_struct(self, "", fields, visitor)
    }
}

/// An externally tagged enum's variant name and its content.
struct Variant {
    tag: String,
    payload: JsValue,
}

impl<'de> de::EnumAccess<'de> for Variant {
    type Error = Error;
    type Variant = Value;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Value), Error> {
        let tag = seed.deserialize(Key::Owned(self.tag))?;
        Ok((tag, Value(self.payload)))
    }
}

/// An array's items, in order.
struct Items {
    array: Array,
    next: u32,
    len: u32,
}

impl Items {
    fn new(array: Array) -> Self {
        let len = array.length();
        Items {
            array,
            next: 0,
            len,
        }
    }
}

impl<'de> de::SeqAccess<'de> for Items {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        if self.next >= self.len {
            return Ok(None);
        }
        let item = self.array.get(self.next);
        self.next += 1;
        seed.deserialize(Value(item)).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some((self.len - self.next) as usize)
    }
}

/// An object's fields: for a struct, its declared fields that are present
/// (one lookup each, no key copied into wasm); for a map or a tagged enum,
/// every key in the order `JSON.parse` kept (the tag first).
struct Fields {
    object: Object,
    keys: Keys,
    value: JsValue,
}

enum Keys {
    Named {
        names: Rc<[JsString]>,
        fields: &'static [&'static str],
        next: usize,
    },
    Present {
        keys: Array,
        next: u32,
        len: u32,
    },
}

impl Fields {
    fn named(object: Object, fields: &'static [&'static str]) -> Self {
        Fields {
            object,
            keys: Keys::Named {
                names: interned(fields),
                fields,
                next: 0,
            },
            value: JsValue::UNDEFINED,
        }
    }

    fn entries(object: Object) -> Self {
        let keys = Object::keys(&object);
        let len = keys.length();
        Fields {
            object,
            keys: Keys::Present { keys, next: 0, len },
            value: JsValue::UNDEFINED,
        }
    }

    /// The next key that has a value, keeping the value for
    /// `next_value_seed`. `JSON.parse` never makes `undefined`, so a field
    /// that reads as `undefined` is absent.
    #[inline(never)]
    fn next_key(&mut self) -> Option<Key> {
        match &mut self.keys {
            Keys::Named {
                names,
                fields,
                next,
            } => {
                while let (Some(name), Some(&field)) = (names.get(*next), fields.get(*next)) {
                    *next += 1;
                    let value = field_of(&self.object, name);
                    if !value.is_undefined() {
                        self.value = value;
                        return Some(Key::Static(field));
                    }
                }
                None
            }
            Keys::Present { keys, next, len } => {
                if *next >= *len {
                    return None;
                }
                let key = keys.get(*next);
                *next += 1;
                self.value = field_of(&self.object, key.unchecked_ref());
                Some(Key::Owned(key.as_string().unwrap_or_default()))
            }
        }
    }
}

impl<'de> de::MapAccess<'de> for Fields {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.next_key() {
            Some(key) => seed.deserialize(key).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        seed.deserialize(Value(std::mem::replace(
            &mut self.value,
            JsValue::UNDEFINED,
        )))
    }
}

/// An object's key: a struct's field name as declared, or a key as read.
enum Key {
    Static(&'static str),
    Owned(String),
}

impl Key {
    fn as_str(&self) -> &str {
        match self {
            Key::Static(s) => s,
            Key::Owned(s) => s,
        }
    }
}

impl<'de> de::Deserializer<'de> for Key {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str(self.as_str())
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(self.as_str().into_deserializer())
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

/// A struct's field names as JS strings, made once per struct: every
/// record of a type looks up the same names, and one lookup per record
/// finds them all.
fn interned(fields: &'static [&'static str]) -> Rc<[JsString]> {
    thread_local! {
        static NAMES: RefCell<HashMap<(usize, usize), Rc<[JsString]>>> = RefCell::new(HashMap::new());
    }
    NAMES.with(|names| {
        names
            .borrow_mut()
            .entry((fields.as_ptr() as usize, fields.len()))
            .or_insert_with(|| fields.iter().map(|&field| JsString::from(field)).collect())
            .clone()
    })
}

#[wasm_bindgen]
extern "C" {
    /// `object[key]`, without `Reflect.get`'s exception handling: a plain
    /// object from `JSON.parse` has no getter that could throw.
    #[wasm_bindgen(js_name = Object)]
    type Plain;
    #[wasm_bindgen(method, structural, indexing_getter)]
    fn get(this: &Plain, key: &JsString) -> JsValue;
}

fn field_of(object: &Object, key: &JsString) -> JsValue {
    object.unchecked_ref::<Plain>().get(key)
}
