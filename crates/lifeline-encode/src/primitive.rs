//! [`Encode`] for the standard types Lifeline's types are made of.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use crate::{map, seq, Encode, EncodeKey, Writer};

impl Encode for bool {
    fn encode(&self, w: &mut Writer) {
        w.bool(*self);
    }
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Encode for $t {
            fn encode(&self, w: &mut Writer) {
                w.u64(u64::from(*self));
            }
        }
        impl EncodeKey for $t {
            fn encode_key(&self, w: &mut Writer) {
                w.raw("\"");
                w.u64(u64::from(*self));
                w.raw("\"");
            }
        }
    )*};
}
unsigned!(u8, u16, u32, u64);

impl Encode for usize {
    fn encode(&self, w: &mut Writer) {
        // usize is at most 64 bits on every target Lifeline builds for.
        w.u64(*self as u64);
    }
}

macro_rules! signed {
    ($($t:ty),*) => {$(
        impl Encode for $t {
            fn encode(&self, w: &mut Writer) {
                w.i64(i64::from(*self));
            }
        }
    )*};
}
signed!(i8, i16, i32, i64);

impl Encode for str {
    fn encode(&self, w: &mut Writer) {
        w.str(self);
    }
}

impl EncodeKey for str {
    fn encode_key(&self, w: &mut Writer) {
        w.str(self);
    }
}

impl Encode for String {
    fn encode(&self, w: &mut Writer) {
        w.str(self);
    }
}

impl EncodeKey for String {
    fn encode_key(&self, w: &mut Writer) {
        w.str(self);
    }
}

impl Encode for () {
    fn encode(&self, w: &mut Writer) {
        w.null();
    }
}

impl<T: Encode + ?Sized> Encode for &T {
    fn encode(&self, w: &mut Writer) {
        (**self).encode(w);
    }
}

impl<T: Encode + ?Sized> Encode for Box<T> {
    fn encode(&self, w: &mut Writer) {
        (**self).encode(w);
    }
}

impl<T: Encode + ?Sized> Encode for Rc<T> {
    fn encode(&self, w: &mut Writer) {
        (**self).encode(w);
    }
}

impl<T: Encode + ?Sized> Encode for Arc<T> {
    fn encode(&self, w: &mut Writer) {
        (**self).encode(w);
    }
}

impl<T: Encode> Encode for Option<T> {
    fn encode(&self, w: &mut Writer) {
        match self {
            Some(value) => value.encode(w),
            None => w.null(),
        }
    }
}

impl<T: Encode> Encode for [T] {
    fn encode(&self, w: &mut Writer) {
        seq(w, self);
    }
}

impl<T: Encode, const N: usize> Encode for [T; N] {
    fn encode(&self, w: &mut Writer) {
        seq(w, self);
    }
}

impl<T: Encode> Encode for Vec<T> {
    fn encode(&self, w: &mut Writer) {
        seq(w, self);
    }
}

impl<T: Encode> Encode for VecDeque<T> {
    fn encode(&self, w: &mut Writer) {
        seq(w, self);
    }
}

impl<T: Encode> Encode for BTreeSet<T> {
    fn encode(&self, w: &mut Writer) {
        seq(w, self);
    }
}

impl<K: EncodeKey, V: Encode> Encode for BTreeMap<K, V> {
    fn encode(&self, w: &mut Writer) {
        map(w, self);
    }
}

macro_rules! tuple {
    ($($name:ident),+) => {
        impl<$($name: Encode),+> Encode for ($($name,)+) {
            #[allow(non_snake_case)]
            fn encode(&self, w: &mut Writer) {
                let ($($name,)+) = self;
                w.raw("[");
                $(
                    w.item();
                    $name.encode(w);
                )+
                w.raw("]");
            }
        }
    };
}
tuple!(A);
tuple!(A, B);
tuple!(A, B, C);
tuple!(A, B, C, D);

/// As serde's: an externally tagged enum of two variants.
impl<T: Encode, E: Encode> Encode for Result<T, E> {
    fn encode(&self, w: &mut Writer) {
        match self {
            Ok(value) => {
                w.raw("{\"Ok\":");
                value.encode(w);
            }
            Err(error) => {
                w.raw("{\"Err\":");
                error.encode(w);
            }
        }
        w.raw("}");
    }
}
