//! The writer against serde_json, on the values whose text it decides:
//! strings (every escape), integers at their limits, and nesting.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use crate::{to_string, Encode};

fn same<T: Encode + serde::Serialize + ?Sized>(value: &T) -> Result<(), TestCaseError> {
    let mut w = crate::Writer::default();
    value.encode(&mut w);
    prop_assert_eq!(w.finish(), serde_json::to_string(value).unwrap());
    Ok(())
}

#[test]
fn every_escape_is_serde_jsons() {
    // Each ASCII byte, and non-ASCII, at the start, middle and end.
    for b in 0u8..0x80 {
        let c = char::from(b);
        for text in [
            format!("{c}"),
            format!("a{c}b"),
            format!("ab{c}"),
            format!("é{c}€"),
        ] {
            same(&text).unwrap();
        }
    }
    same("\u{7f}\u{80}\u{2028}\u{1F600}").unwrap();
}

#[test]
fn integers_at_their_limits() {
    for v in [
        0u64,
        1,
        9,
        10,
        99,
        100,
        u64::from(u32::MAX),
        u64::MAX - 1,
        u64::MAX,
    ] {
        same(&v).unwrap();
    }
    for v in [0i64, -1, 1, -9, -10, i64::MIN, i64::MIN + 1, i64::MAX] {
        same(&v).unwrap();
    }
    same(&u8::MAX).unwrap();
    same(&i32::MIN).unwrap();
}

#[test]
fn empty_and_nested_containers() {
    same(&Vec::<u32>::new()).unwrap();
    same(&vec![Vec::<u32>::new(), vec![1], vec![1, 2]]).unwrap();
    same(&BTreeMap::<String, u32>::new()).unwrap();
    let mut map = BTreeMap::new();
    map.insert(3u32, vec![Some("a".to_string()), None]);
    map.insert(10u32, vec![]);
    same(&map).unwrap();
    same(&(1u8, "two", [3u64], ())).unwrap();
    same(&BTreeSet::from([2u16, 1])).unwrap();
    same(&Ok::<u8, String>(1)).unwrap();
    same(&Err::<u8, String>("no".into())).unwrap();
}

proptest! {
    #[test]
    fn any_string(text in any::<String>()) {
        same(&text)?;
    }

    #[test]
    fn any_nesting(value in proptest::collection::btree_map(
        any::<String>(),
        proptest::collection::vec(proptest::option::of((any::<i64>(), any::<bool>())), 0..4),
        0..4,
    )) {
        same(&value)?;
        prop_assert_eq!(to_string(&value), serde_json::to_string(&value).unwrap());
    }
}
