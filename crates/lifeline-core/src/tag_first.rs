//! Internally tagged enums decoded tag-first, without buffering.
//!
//! Why: serde's derive for `#[serde(tag = "...")]` cannot know the variant
//! before it has seen the tag, so it buffers the whole object into its
//! private `Content` and decodes every variant's fields a second time from
//! there. That compiles a `Content` decoder for every type reachable from
//! the enum: 298 KB of the controller's 1,822 KB raw wasm before this
//! module. Everything this app decodes was written by serde_json from the
//! same enums, and serde's internally tagged encoder always writes the tag
//! first; the browser's `JSON.parse` keeps that order (object keys that look
//! like array indices would move first, and no field name here does). So
//! the decoder reads the first key, requires it to be the tag, and decodes
//! the rest of the same object straight into the variant.
//!
//! The stored and wire form is unchanged: encoding is still serde's derive
//! with the same attributes. A record whose tag is not first is refused with
//! an error that says so, the same through serde_json and the browser's
//! decoder; buffering it would bring the `Content` decoders back.
//!
//! [`tag_first!`] declares the enum once and emits it twice: the real enum,
//! which derives `Serialize` with `#[serde(tag)]`, and a private twin with
//! the same variants that derives an externally tagged `Deserialize` for the
//! real enum through `#[serde(remote)]` (so a field missing from the twin
//! cannot compile). [`deserialize`] presents "the tag's value, then the rest
//! of the map" to that twin as an externally tagged enum.

use serde::de::value::MapAccessDeserializer;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, IntoDeserializer, MapAccess,
    VariantAccess, Visitor,
};
use std::fmt;
use std::marker::PhantomData;

/// An enum declared through [`tag_first!`].
pub trait TagFirst: Sized {
    /// The tag's field name, as in `#[serde(tag = ...)]`.
    const TAG: &'static str;
    /// The enum's name, for errors.
    const NAME: &'static str;
    /// Decodes the externally tagged twin: `deserializer` offers the variant
    /// name, then the rest of the object as the variant's content.
    fn from_variant<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
    /// serde's own buffered decoder for the same enum (`#[serde(tag)]`
    /// derived): the reference the tests hold the tag-first one to.
    #[cfg(test)]
    fn buffered<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

/// Decodes a `T` from an object whose first key is `T::TAG`.
pub fn deserialize<'de, D: Deserializer<'de>, T: TagFirst>(deserializer: D) -> Result<T, D::Error> {
    deserializer.deserialize_map(TagFirstVisitor(PhantomData))
}

struct TagFirstVisitor<T>(PhantomData<T>);

impl<'de, T: TagFirst> Visitor<'de> for TagFirstVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a {} object with \"{}\" first", T::NAME, T::TAG)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        match map.next_key_seed(IsTag(T::TAG))? {
            Some(true) => {}
            Some(false) => return Err(not_first::<A::Error>(T::NAME, T::TAG)),
            None => return Err(de::Error::missing_field(T::TAG)),
        }
        let name: String = map.next_value()?;
        T::from_variant(Variant { name, map })
    }
}

/// Kept out of the generic visitor: one copy of the message's code.
#[inline(never)]
fn not_first<E: de::Error>(name: &str, tag: &str) -> E {
    E::custom(format_args!(
        "a {name} must have its \"{tag}\" field first (records are written that way)"
    ))
}

/// Whether a key is the tag, without allocating it.
struct IsTag(&'static str);

impl<'de> DeserializeSeed<'de> for IsTag {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl Visitor<'_> for IsTag {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

/// The variant's name and the rest of its object, as an externally tagged
/// enum.
struct Variant<A> {
    name: String,
    map: A,
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for Variant<A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de, A: MapAccess<'de>> EnumAccess<'de> for Variant<A> {
    type Error = A::Error;
    type Variant = Rest<A>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Rest<A>), A::Error> {
        let variant = seed.deserialize(self.name.into_deserializer())?;
        Ok((variant, Rest(self.map)))
    }
}

/// The object's fields after the tag: the variant's content.
struct Rest<A>(A);

impl<'de, A: MapAccess<'de>> VariantAccess<'de> for Rest<A> {
    type Error = A::Error;

    /// Other fields beside the tag are ignored, as serde's derive does.
    fn unit_variant(mut self) -> Result<(), A::Error> {
        while self.0.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }

    /// A newtype variant's type reads the rest of the same object (serde
    /// writes its fields after the tag).
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        seed.deserialize(MapAccessDeserializer::new(self.0))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        _visitor: V,
    ) -> Result<V::Value, A::Error> {
        Err(de::Error::custom(
            "an internally tagged enum has no tuple variants",
        ))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        visitor.visit_map(self.0)
    }
}

/// Declares an internally tagged enum (`rename_all = "snake_case"`) that
/// encodes exactly as `#[serde(tag = $tag)]` does and decodes tag-first.
///
/// ```ignore
/// tag_first! {
///     tag = "type", name = "JournalRecord";
///     #[derive(Clone, Debug)]
///     pub enum JournalRecord { ... }
/// }
/// ```
///
/// `name` is the enum's own name as a string (serde's `remote` takes a
/// string literal). Attributes before `enum` go to the real enum only; the
/// body, with its field attributes (`#[serde(default)]`, ...), to both. Add
/// `, default` after the name when the enum derives `Default`.
macro_rules! tag_first {
    // `default`: the enum derives `Default`, so its `#[default]` variant
    // needs the derive on the twin too (it costs nothing: never called).
    (
        tag = $tag:literal, name = $name_str:literal, default;
        $($rest:tt)*
    ) => {
        $crate::tag_first::tag_first!(@emit $tag, $name_str, [Default]; $($rest)*);
    };
    (
        tag = $tag:literal, name = $name_str:literal;
        $($rest:tt)*
    ) => {
        $crate::tag_first::tag_first!(@emit $tag, $name_str, []; $($rest)*);
    };
    (
        @emit $tag:literal, $name_str:literal, [$($twin_derive:ident)?];
        $(#[$attr:meta])*
        $vis:vis enum $name:ident { $($body:tt)* }
    ) => {
        $(#[$attr])*
        #[derive(serde::Serialize, lifeline_decode::Decode)]
        #[serde(tag = $tag, rename_all = "snake_case")]
        $vis enum $name { $($body)* }

        const _: () = {
            #[derive(serde::Deserialize $(, $twin_derive)?)]
            #[serde(remote = $name_str, rename_all = "snake_case")]
            #[allow(dead_code)]
            enum Twin { $($body)* }

            #[cfg(test)]
            #[derive(serde::Deserialize $(, $twin_derive)?)]
            #[serde(remote = $name_str, tag = $tag, rename_all = "snake_case")]
            #[allow(dead_code)]
            enum Buffered { $($body)* }

            impl $crate::tag_first::TagFirst for $name {
                const TAG: &'static str = $tag;
                const NAME: &'static str = $name_str;
                fn from_variant<'de, D: serde::Deserializer<'de>>(
                    deserializer: D,
                ) -> Result<Self, D::Error> {
                    Twin::deserialize(deserializer)
                }
                #[cfg(test)]
                fn buffered<'de, D: serde::Deserializer<'de>>(
                    deserializer: D,
                ) -> Result<Self, D::Error> {
                    Buffered::deserialize(deserializer)
                }
            }

            impl<'de> serde::Deserialize<'de> for $name {
                fn deserialize<D: serde::Deserializer<'de>>(
                    deserializer: D,
                ) -> Result<Self, D::Error> {
                    $crate::tag_first::deserialize(deserializer)
                }
            }
        };
    };
}
pub(crate) use tag_first;

#[cfg(test)]
#[path = "tag_first_tests.rs"]
pub(crate) mod tests;
