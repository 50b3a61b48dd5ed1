//! Decoding JSON text into Lifeline's types: [`json::parse`] reads the text
//! into a [`Json`] tree, and each type's [`Decode`] reads the tree.
//!
//! Why not serde's derived `Deserialize` in the browser: it is generic over
//! the decoder, and its visitors are compiled per type, per reader and per
//! field-name matcher; it was about a third of the controller's wasm
//! (docs/benchmarks.md, "Fourteenth stop"). `#[derive(Decode)]` reads the
//! same `#[serde]` attributes, so a type is written down once, and emits
//! one function per type that is not generic at all; the per-field reads
//! ([`Object::field`]) are generic only over the field's type.
//!
//! It reads as serde_json with serde's derive reads, and tests hold the two
//! together. The differences, all for input the app never writes:
//! - a struct is read from an object only (serde also takes an array);
//! - a number is read as an integer only when written as one, exactly, up
//!   to 64 bits; nothing reads floats;
//! - in a field the type does not know, nesting deeper than 127 or a
//!   number serde_json's floats cannot hold is refused (serde_json skips
//!   the field unread); elsewhere they are refused by both, as serde_json
//!   refuses them reading any JSON value ([`json`]).
//!
//! Architecture Invariant: nothing from outside panics here; every input
//! gives a value or an [`Error`], and an error quotes nothing from the
//! text but an unknown variant's or field's name, cut short.

mod error;
pub mod json;
mod primitive;

pub use error::Error;
pub use json::Json;
pub use lifeline_decode_derive::Decode;
pub use primitive::parsed;

/// A type read from a [`Json`] tree.
pub trait Decode: Sized {
    fn decode(json: Json<'_>) -> Result<Self, Error>;

    /// The value of a field that is not there: refused, except where the
    /// type has a natural absence (`Option`: `None`), as serde's derive
    /// treats a missing field.
    fn absent(field: &'static str) -> Result<Self, Error> {
        Err(Error::missing(field))
    }
}

/// Parses and decodes a whole text.
pub fn from_str<T: Decode>(text: &str) -> Result<T, Error> {
    T::decode(json::parse(text)?)
}

/// An object's fields, taken out one by one as a type reads them.
pub struct Object<'a> {
    fields: Vec<(std::borrow::Cow<'a, str>, Json<'a>)>,
}

impl<'a> Object<'a> {
    /// The object `json` holds.
    pub fn of(json: Json<'a>) -> Result<Object<'a>, Error> {
        match json {
            Json::Object(fields) => Ok(Object { fields }),
            other => Err(Error::expected("an object", &other)),
        }
    }

    /// The value of `name`, taken out; a field given twice is refused, as
    /// serde's derive refuses it.
    pub fn take(&mut self, name: &'static str) -> Result<Option<Json<'a>>, Error> {
        let mut found = None;
        for (i, (key, _)) in self.fields.iter().enumerate() {
            if key == name {
                if found.is_some() {
                    return Err(Error::twice(name));
                }
                found = Some(i);
            }
        }
        Ok(found.map(|i| self.fields.swap_remove(i).1))
    }

    /// [`Object::of`], for a type with `deny_unknown_fields`.
    pub fn known(json: Json<'a>, known: &[&str]) -> Result<Object<'a>, Error> {
        let object = Object::of(json)?;
        object.deny_unknown(known)?;
        Ok(object)
    }

    /// `deny_unknown_fields`, checked before any field is read: every field
    /// must be one of `known`.
    pub fn deny_unknown(&self, known: &[&str]) -> Result<(), Error> {
        match self.fields.iter().find(|(key, _)| !known.contains(&&**key)) {
            None => Ok(()),
            Some((key, _)) => Err(Error::unknown_field(key)),
        }
    }

    // `field` and `field_or` are not written through `field_with`: its
    // closures, one pair per field type, made the controller larger
    // (docs/benchmarks.md, "Fourteenth stop").

    /// A field read as `T`, or `T`'s absence.
    pub fn field<T: Decode>(&mut self, name: &'static str) -> Result<T, Error> {
        match self.take(name)? {
            Some(value) => T::decode(value).map_err(|e| e.within(name)),
            None => T::absent(name),
        }
    }

    /// A field read as `T`, or `default()` when it is not there.
    pub fn field_or<T: Decode>(
        &mut self,
        name: &'static str,
        default: impl FnOnce() -> T,
    ) -> Result<T, Error> {
        match self.take(name)? {
            Some(value) => T::decode(value).map_err(|e| e.within(name)),
            None => Ok(default()),
        }
    }

    /// A field read by `read` (`#[serde(with = "module")]`: the module's
    /// `decode`), or `absent()` when it is not there.
    pub fn field_with<T>(
        &mut self,
        name: &'static str,
        read: impl FnOnce(Json<'a>) -> Result<T, Error>,
        absent: impl FnOnce() -> Result<T, Error>,
    ) -> Result<T, Error> {
        match self.take(name)? {
            Some(value) => read(value).map_err(|e| e.within(name)),
            None => absent(),
        }
    }

    /// The string naming an internally tagged enum's variant.
    pub fn tag(&mut self, tag: &'static str) -> Result<std::borrow::Cow<'a, str>, Error> {
        match self.take(tag)? {
            Some(Json::Text(name)) => Ok(name),
            Some(other) => Err(Error::expected("a string", &other).within(tag)),
            None => Err(Error::missing(tag)),
        }
    }

    /// The fields as read: the rest of an internally tagged newtype
    /// variant is read from the same object.
    pub fn into_json(self) -> Json<'a> {
        Json::Object(self.fields)
    }
}

/// An externally tagged enum's variant: a string for a unit variant, or an
/// object of one key, the variant's name, holding its content.
pub fn variant<'a>(json: Json<'a>) -> Result<(std::borrow::Cow<'a, str>, Option<Json<'a>>), Error> {
    match json {
        Json::Text(name) => Ok((name, None)),
        Json::Object(mut fields) if fields.len() == 1 => {
            let (name, content) = fields.pop().unwrap_or((Default::default(), Json::Null));
            Ok((name, Some(content)))
        }
        other => Err(Error::expected("a string or an object of one key", &other)),
    }
}

/// Which of `names` an enum of unit variants only holds: its place in
/// `names`. One search, shared by every such enum, where a derived match
/// on the name would compare it with each name in each enum's reader.
pub fn unit_variant(json: Json<'_>, names: &'static [&'static str]) -> Result<usize, Error> {
    let (name, content) = variant(json)?;
    let index = variant_index(&name, names)?;
    no_content(content)?;
    Ok(index)
}

/// Which of `names`, an enum's variants, `name` is: its place in `names`.
/// One search, shared by every enum's reader, where a match on the name
/// compared it with each name in each reader.
pub fn variant_index(name: &str, names: &'static [&'static str]) -> Result<usize, Error> {
    names
        .iter()
        .position(|n| *n == name)
        .ok_or_else(|| Error::unknown_variant(name, names))
}

/// A variant's content, which it must have.
pub fn content(content: Option<Json<'_>>) -> Result<Json<'_>, Error> {
    content.ok_or_else(|| Error::invalid("expected the variant's content, found only its name"))
}

/// A unit variant's content: none, or null.
pub fn no_content(content: Option<Json<'_>>) -> Result<(), Error> {
    match content {
        None | Some(Json::Null) => Ok(()),
        Some(other) => Err(Error::expected("null", &other)),
    }
}

/// An array of exactly `len` items (a tuple, a tuple struct or variant).
pub fn tuple(json: Json<'_>, len: usize) -> Result<std::vec::IntoIter<Json<'_>>, Error> {
    match json {
        Json::Array(items) if items.len() == len => Ok(items.into_iter()),
        Json::Array(items) => Err(Error::invalid(format_args!(
            "expected {len} items, found {}",
            items.len()
        ))),
        other => Err(Error::expected("an array", &other)),
    }
}

/// Item `index` of a [`tuple`].
pub fn item<'a, T: Decode>(
    items: &mut std::vec::IntoIter<Json<'a>>,
    index: usize,
) -> Result<T, Error> {
    T::decode(items.next().unwrap_or(Json::Null)).map_err(|e| e.item(index))
}

/// A map's key, read from an object's key (a string in JSON, whatever
/// the key's type).
pub trait Key: Sized {
    fn from_key(key: std::borrow::Cow<'_, str>) -> Result<Self, Error>;
}

/// An object's entries, each read, for a map; a key written twice is kept
/// the last time, as serde_json's maps keep it.
pub fn entries<'a, K: Key, V: Decode>(
    json: Json<'a>,
) -> Result<impl Iterator<Item = Result<(K, V), Error>> + 'a, Error> {
    match json {
        Json::Object(fields) => Ok(fields.into_iter().enumerate().map(|(i, (key, value))| {
            let key = K::from_key(key).map_err(|e| e.item(i))?;
            Ok((key, V::decode(value).map_err(|e| e.item(i))?))
        })),
        other => Err(Error::expected("an object", &other)),
    }
}

/// A string, borrowed from the text where it holds no escape.
fn text(json: Json<'_>) -> Result<std::borrow::Cow<'_, str>, Error> {
    match json {
        Json::Text(text) => Ok(text),
        other => Err(Error::expected("a string", &other)),
    }
}

/// An array's strings, each borrowed where [`text`] can: for a reader
/// that only looks at them, so that a long list of long ones is not copied
/// before it is read.
pub fn texts<'a>(
    json: Json<'a>,
) -> Result<impl Iterator<Item = Result<std::borrow::Cow<'a, str>, Error>> + 'a, Error> {
    match json {
        Json::Array(items) => Ok(items
            .into_iter()
            .enumerate()
            .map(|(i, item)| text(item).map_err(|e| e.item(i)))),
        other => Err(Error::expected("an array", &other)),
    }
}

/// An array's items, each read.
pub fn items<'a, T: Decode>(
    json: Json<'a>,
) -> Result<impl Iterator<Item = Result<T, Error>> + 'a, Error> {
    match json {
        Json::Array(items) => Ok(items
            .into_iter()
            .enumerate()
            .map(|(i, item)| T::decode(item).map_err(|e| e.item(i)))),
        other => Err(Error::expected("an array", &other)),
    }
}
