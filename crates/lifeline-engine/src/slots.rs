//! A map for the handful of entries the engine and its shell keep at once
//! (timers, ports, abort handles): a vector searched in order. Each
//! `BTreeMap` key and value type adds its own copy of the tree's code to
//! the worker's wasm, which has a size budget; these stay small.

pub struct Slots<K, V>(Vec<(K, V)>);

impl<K: PartialEq + Copy, V> Slots<K, V> {
    pub fn new() -> Self {
        Slots(Vec::new())
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key`, returning what it held.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        let old = self.remove(&key);
        self.0.push((key, value));
        old
    }

    pub fn remove(&mut self, key: &K) -> Option<V> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.swap_remove(i).1)
    }

    pub fn contains(&self, key: &K) -> bool {
        self.0.iter().any(|(k, _)| k == key)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// Every entry, leaving the map empty.
    pub fn take_all(&mut self) -> Vec<(K, V)> {
        std::mem::take(&mut self.0)
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

impl<K: PartialEq + Copy, V> Default for Slots<K, V> {
    fn default() -> Self {
        Slots::new()
    }
}
