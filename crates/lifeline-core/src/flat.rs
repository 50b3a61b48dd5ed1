//! [`FlatMap`]: an ordered map kept as one sorted vector (`litemap`), for
//! the maps whose keys arrive in order.
//!
//! Why not `BTreeMap` everywhere: each key and value type of a `BTreeMap`
//! compiles its own copy of the tree's code (search, split, merge, drop,
//! iterators), about 3.5 KB of wasm per pair, and the workers carry dozens
//! of pairs under a size budget. A sorted vector's code is a binary search
//! and a `Vec` insert. Its cost is a shift on an insert or removal in the
//! middle, so it is only for maps keyed by the journal's identities, which
//! are minted in time order ([`crate::IdMinter`]): inserts append. Maps
//! keyed by digests or idempotency keys (random order, unbounded) stay
//! `BTreeMap`s.
//!
//! The API is the part of `BTreeMap`'s the core uses, and the serde form is
//! the same JSON object, so records and snapshots read as before.

use std::fmt;
use std::marker::PhantomData;

use litemap::LiteMap;
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use litemap::Entry;

#[derive(Clone, PartialEq, Eq)]
pub struct FlatMap<K, V>(LiteMap<K, V>);

impl<K, V> Default for FlatMap<K, V> {
    fn default() -> Self {
        FlatMap(LiteMap::new_vec())
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for FlatMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K, V> FlatMap<K, V> {
    pub const fn new() -> Self {
        FlatMap(LiteMap::new_vec())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> Pairs<'_, K, V> {
        let pair: fn(&(K, V)) -> (&K, &V) = |(k, v)| (k, v);
        self.0.as_slice().iter().map(pair)
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&K, &mut V)> {
        self.0.iter_mut()
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> {
        self.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> {
        self.0.iter_mut().map(|(_, v)| v)
    }

    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.0.first()
    }

    pub fn last_key_value(&self) -> Option<(&K, &V)> {
        self.0.last()
    }

    pub fn clear(&mut self) {
        self.0.clear()
    }
}

impl<K: Ord, V> FlatMap<K, V> {
    pub fn get(&self, key: &K) -> Option<&V> {
        self.0.get(key)
    }

    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.0.get_mut(key)
    }

    pub fn contains_key(&self, key: &K) -> bool {
        self.0.contains_key(key)
    }

    /// Sets `key`, returning what it held. Appending (the usual case: a
    /// newer identity) moves nothing.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.0.try_append(key, value) {
            None => None,
            Some((key, value)) => self.0.insert(key, value),
        }
    }

    pub fn remove(&mut self, key: &K) -> Option<V> {
        self.0.remove(key)
    }

    pub fn entry(&mut self, key: K) -> Entry<'_, K, V, Vec<(K, V)>> {
        self.0.entry(key)
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        // litemap's `retain` sees the value shared; `BTreeMap`'s lends it.
        let all = std::mem::take(&mut self.0).into_tuple_vec();
        let mut kept = Vec::with_capacity(all.len());
        for (k, mut v) in all {
            if keep(&k, &mut v) {
                kept.push((k, v));
            }
        }
        self.0 = LiteMap::from_sorted_store_unchecked(kept);
    }
}

/// As `BTreeMap`'s: a missing key is a bug in the caller (it panics).
impl<K: Ord, V> std::ops::Index<&K> for FlatMap<K, V> {
    type Output = V;
    fn index(&self, key: &K) -> &V {
        self.get(key).expect("no entry for the key in FlatMap")
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for FlatMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = FlatMap::new();
        map.extend(iter);
        map
    }
}

impl<K: Ord, V> Extend<(K, V)> for FlatMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<K, V> IntoIterator for FlatMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_tuple_vec().into_iter()
    }
}

type Pairs<'a, K, V> =
    std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;

impl<'a, K, V> IntoIterator for &'a FlatMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Pairs<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<K: lifeline_encode::EncodeKey, V: lifeline_encode::Encode> lifeline_encode::Encode
    for FlatMap<K, V>
{
    fn encode(&self, w: &mut lifeline_encode::Writer) {
        lifeline_encode::map(w, self.0.iter());
    }
}

impl<K: Serialize, V: Serialize> Serialize for FlatMap<K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter())
    }
}

impl<'de, K: Ord + Deserialize<'de>, V: Deserialize<'de>> Deserialize<'de> for FlatMap<K, V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<K, V>(PhantomData<fn() -> (K, V)>);
        impl<'de, K: Ord + Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for Entries<K, V> {
            type Value = FlatMap<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut map = FlatMap::new();
                while let Some((k, v)) = access.next_entry()? {
                    map.insert(k, v);
                }
                Ok(map)
            }
        }
        deserializer.deserialize_map(Entries(PhantomData))
    }
}

impl<K: Ord + lifeline_decode::Key, V: lifeline_decode::Decode> lifeline_decode::Decode
    for FlatMap<K, V>
{
    fn decode(json: lifeline_decode::Json<'_>) -> Result<Self, lifeline_decode::Error> {
        let mut map = FlatMap::new();
        for entry in lifeline_decode::entries(json)? {
            let (k, v) = entry?;
            map.insert(k, v);
        }
        Ok(map)
    }
}

/// An ordered set as one sorted vector: [`FlatMap`]'s set, for the same
/// keys (time-ordered identities) and for the few small sets records
/// carry (a binding's capabilities, a profile's tools), whose serde form is
/// `BTreeSet`'s: a sorted array, read in any order, duplicates dropped.
#[derive(Clone, PartialEq, Eq)]
pub struct FlatSet<K>(FlatMap<K, ()>);

impl<K> Default for FlatSet<K> {
    fn default() -> Self {
        FlatSet::new()
    }
}

impl<K: fmt::Debug> fmt::Debug for FlatSet<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<K> FlatSet<K> {
    pub const fn new() -> Self {
        FlatSet(FlatMap::new())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &K> {
        self.0.keys()
    }

    pub fn first(&self) -> Option<&K> {
        self.0.first_key_value().map(|(k, _)| k)
    }

    pub fn last(&self) -> Option<&K> {
        self.0.last_key_value().map(|(k, _)| k)
    }
}

impl<K: Ord> FlatSet<K> {
    pub fn contains(&self, key: &K) -> bool {
        self.0.contains_key(key)
    }

    /// True if `key` was not there.
    pub fn insert(&mut self, key: K) -> bool {
        self.0.insert(key, ()).is_none()
    }

    /// True if `key` was there.
    pub fn remove(&mut self, key: &K) -> bool {
        self.0.remove(key).is_some()
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&K) -> bool) {
        self.0.retain(|k, _| keep(k))
    }
}

impl<K: Ord> FromIterator<K> for FlatSet<K> {
    fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
        FlatSet(iter.into_iter().map(|k| (k, ())).collect())
    }
}

impl<K: Ord> Extend<K> for FlatSet<K> {
    fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
        self.0.extend(iter.into_iter().map(|k| (k, ())))
    }
}

impl<K> IntoIterator for FlatSet<K> {
    type Item = K;
    type IntoIter = std::iter::Map<std::vec::IntoIter<(K, ())>, fn((K, ())) -> K>;
    fn into_iter(self) -> Self::IntoIter {
        let key: fn((K, ())) -> K = |(k, ())| k;
        self.0.into_iter().map(key)
    }
}

impl<'a, K> IntoIterator for &'a FlatSet<K> {
    type Item = &'a K;
    type IntoIter = std::iter::Map<Pairs<'a, K, ()>, fn((&'a K, &'a ())) -> &'a K>;
    fn into_iter(self) -> Self::IntoIter {
        let key: fn((&'a K, &'a ())) -> &'a K = |(k, _)| k;
        self.0.iter().map(key)
    }
}

impl<K: lifeline_encode::Encode> lifeline_encode::Encode for FlatSet<K> {
    fn encode(&self, w: &mut lifeline_encode::Writer) {
        lifeline_encode::seq(w, self.iter());
    }
}

impl<K: Serialize> Serialize for FlatSet<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de, K: Ord + Deserialize<'de>> Deserialize<'de> for FlatSet<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys<K>(PhantomData<fn() -> K>);
        impl<'de, K: Ord + Deserialize<'de>> Visitor<'de> for Keys<K> {
            type Value = FlatSet<K>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut set = FlatSet::new();
                while let Some(k) = access.next_element()? {
                    set.insert(k);
                }
                Ok(set)
            }
        }
        deserializer.deserialize_seq(Keys(PhantomData))
    }
}

impl<K: Ord + lifeline_decode::Decode> lifeline_decode::Decode for FlatSet<K> {
    fn decode(json: lifeline_decode::Json<'_>) -> Result<Self, lifeline_decode::Error> {
        let mut set = FlatSet::new();
        for k in lifeline_decode::items(json)? {
            set.insert(k?);
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u16, u32),
        Remove(u16),
        Retain(u16),
        Entry(u16),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (any::<u16>(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k % 64, v)),
            any::<u16>().prop_map(|k| Op::Remove(k % 64)),
            any::<u16>().prop_map(|k| Op::Retain(k % 7 + 1)),
            any::<u16>().prop_map(|k| Op::Entry(k % 64)),
        ]
    }

    proptest! {
        /// Whatever is done to it, a FlatMap holds what a BTreeMap would,
        /// in the same order, and serialises to the same JSON.
        #[test]
        fn behaves_as_a_btree_map(ops in proptest::collection::vec(op(), 0..200)) {
            let mut flat = FlatMap::new();
            let mut tree = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(flat.insert(k, v), tree.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(flat.remove(&k), tree.remove(&k)),
                    Op::Retain(m) => {
                        flat.retain(|k, v| { *v = v.wrapping_add(1); k % m != 0 });
                        tree.retain(|k, v| { *v = v.wrapping_add(1); k % m != 0 });
                    }
                    Op::Entry(k) => {
                        *flat.entry(k).or_insert(0) += 1;
                        *tree.entry(k).or_insert(0) += 1;
                    }
                }
                prop_assert_eq!(flat.len(), tree.len());
            }
            let pairs: Vec<_> = flat.iter().map(|(k, v)| (*k, *v)).collect();
            let expected: Vec<_> = tree.iter().map(|(k, v)| (*k, *v)).collect();
            prop_assert_eq!(&pairs, &expected);
            prop_assert_eq!(flat.first_key_value(), tree.first_key_value());
            prop_assert_eq!(flat.last_key_value(), tree.last_key_value());
            let json = serde_json::to_string(&flat).unwrap();
            prop_assert_eq!(&json, &serde_json::to_string(&tree).unwrap());
            let back: FlatMap<u16, u32> = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(back, flat);
        }
    }

    #[test]
    fn a_map_written_out_of_order_reads_back_sorted() {
        let map: FlatMap<u32, &str> = serde_json::from_str(r#"{"3":"c","1":"a","2":"b"}"#).unwrap();
        assert_eq!(map.keys().copied().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(map[&2], "b");
    }

    #[test]
    fn a_set_keeps_each_key_once_in_order() {
        let mut set: FlatSet<u32> = [5, 1, 3].into_iter().collect();
        assert!(!set.insert(3));
        assert!(set.insert(2));
        assert!(set.remove(&1));
        assert_eq!(set.iter().copied().collect::<Vec<_>>(), [2, 3, 5]);
        assert_eq!((set.first(), set.last()), (Some(&2), Some(&5)));
    }

    #[test]
    fn a_set_has_btree_sets_serde_form() {
        let tree: std::collections::BTreeSet<String> = ["b", "a"].map(String::from).into();
        let flat: FlatSet<String> = ["b", "a"].map(String::from).into_iter().collect();
        assert_eq!(
            serde_json::to_string(&flat).unwrap(),
            serde_json::to_string(&tree).unwrap()
        );
        // Written in any order, with a duplicate, as a BTreeSet would read it.
        let back: FlatSet<String> = serde_json::from_str(r#"["b","a","b"]"#).unwrap();
        assert_eq!(back, flat);
    }
}
