//! Sorting by a number with one copy of the sort's code.
//!
//! `sort_unstable_by_key` compiles the whole sort (pattern-defeating
//! quicksort, its partitions, heapsort fallback and small sorts: several KB
//! of wasm) once for every element type and key it is used with, and the
//! controller sorted a dozen kinds of list. [`by_key`] sorts `(key, index)`
//! pairs, always the same type, and then moves the items into that order:
//! each caller compiles only its key and the move.
//!
//! The index breaks ties, so unlike `sort_unstable_by_key` equal keys keep
//! their order, which lets a caller sort by a second key first.

use std::cmp::Ordering;

/// Sorts `items` by `key`, ascending; items with equal keys keep their order.
pub fn by_key<T>(items: &mut Vec<T>, key: impl Fn(&T) -> u128) {
    assert!(u32::try_from(items.len()).is_ok(), "too many items to sort");
    if items.len() < 2 {
        return;
    }
    let mut order: Vec<(u128, u32)> = items
        .iter()
        .enumerate()
        .map(|(i, item)| (key(item), i as u32))
        .collect();
    sort_pairs(&mut order);
    let mut slots: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
    items.extend(order.iter().filter_map(|&(_, i)| slots[i as usize].take()));
    assert_eq!(items.len(), slots.len(), "every item moved once");
}

/// Sorts `items` by `key`, descending; items with equal keys keep their order.
pub fn by_key_descending<T>(items: &mut Vec<T>, key: impl Fn(&T) -> u128) {
    by_key(items, |item| u128::MAX - key(item));
}

/// Sorts and drops repeats.
pub fn dedup_by_key<T>(items: &mut Vec<T>, key: impl Fn(&T) -> u128) {
    by_key(items, &key);
    items.dedup_by(|a, b| key(a) == key(b));
}

/// Sorts `items` by `compare`; items that compare equal keep their order.
/// For what has no numeric key (names, digests): the sort is of indices,
/// compiled once, and each caller compiles only its comparison and the move.
pub fn by<T>(items: &mut Vec<T>, compare: impl Fn(&T, &T) -> Ordering) {
    assert!(u32::try_from(items.len()).is_ok(), "too many items to sort");
    if items.len() < 2 {
        return;
    }
    let mut order: Vec<u32> = (0..items.len() as u32).collect();
    sort_indices(&mut order, &|a, b| {
        compare(&items[a as usize], &items[b as usize])
    });
    let mut slots: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
    items.extend(order.iter().filter_map(|&i| slots[i as usize].take()));
    assert_eq!(items.len(), slots.len(), "every item moved once");
}

// The one sort every caller shares.
#[inline(never)]
fn sort_pairs(pairs: &mut [(u128, u32)]) {
    pairs.sort_unstable();
}

// The one sort of indices every caller of [`by`] shares; the index breaks
// ties, so the order is stable.
#[inline(never)]
fn sort_indices(order: &mut [u32], compare: &dyn Fn(u32, u32) -> Ordering) {
    order.sort_unstable_by(|&a, &b| compare(a, b).then(a.cmp(&b)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The same order as the standard library's stable sort, by a
        /// comparison.
        #[test]
        fn sorts_by_a_comparison_like_a_stable_sort(items in proptest::collection::vec((0u8..8, any::<u16>()), 0..64)) {
            let mut ours = items.clone();
            by(&mut ours, |a, b| b.0.cmp(&a.0));
            let mut std = items.clone();
            std.sort_by(|a, b| b.0.cmp(&a.0));
            prop_assert_eq!(&ours, &std);
        }

        /// The same order as the standard library's stable sort, both ways.
        #[test]
        fn sorts_like_a_stable_sort(items in proptest::collection::vec((0u8..8, any::<u16>()), 0..64)) {
            let mut ours = items.clone();
            by_key(&mut ours, |&(k, _)| k.into());
            let mut std = items.clone();
            std.sort_by_key(|&(k, _)| k);
            prop_assert_eq!(&ours, &std);

            let mut ours = items.clone();
            by_key_descending(&mut ours, |&(k, _)| k.into());
            let mut std = items.clone();
            std.sort_by_key(|&(k, _)| std::cmp::Reverse(k));
            prop_assert_eq!(&ours, &std);

            let mut ours = items.clone();
            dedup_by_key(&mut ours, |&(k, _)| k.into());
            let mut std = items;
            std.sort_by_key(|&(k, _)| k);
            std.dedup_by_key(|&mut (k, _)| k);
            prop_assert_eq!(ours, std);
        }
    }
}
