//! What the store tests share: plain JS records, ids, and a second, raw
//! connection (the `idb` crate) beside the store under test, to set records
//! up the way a damaged disk would leave them and to look at what the store
//! wrote.

// Each test crate uses only some of these.
#![allow(dead_code)]

use idb::{Factory, TransactionMode};
use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

pub async fn delete_db(name: &str) {
    Factory::new().unwrap().delete(name).unwrap().await.unwrap();
}

pub fn field(record: &JsValue, name: &str) -> JsValue {
    Reflect::get(record, &JsValue::from_str(name)).unwrap()
}

pub fn set_field(record: &JsValue, name: &str, value: &JsValue) {
    Reflect::set(record, &JsValue::from_str(name), value).unwrap();
}

pub fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in fields {
        Reflect::set(&o, &JsValue::from_str(k), v).unwrap();
    }
    o.into()
}

/// A raw connection at the version the database is at: it never upgrades
/// (or creates stores in) what the store under test made.
pub async fn raw(name: &str) -> idb::Database {
    Factory::new()
        .unwrap()
        .open(name, None)
        .unwrap()
        .await
        .unwrap()
}

pub async fn raw_get(name: &str, store_name: &str, key: impl Into<JsValue>) -> Option<JsValue> {
    let db = raw(name).await;
    let tx = db
        .transaction(&[store_name], TransactionMode::ReadOnly)
        .unwrap();
    let v = tx
        .object_store(store_name)
        .unwrap()
        .get(key.into())
        .unwrap()
        .await
        .unwrap();
    db.close();
    v
}

pub async fn raw_put(name: &str, store_name: &str, values: &[JsValue]) {
    let db = raw(name).await;
    let tx = db
        .transaction(&[store_name], TransactionMode::ReadWrite)
        .unwrap();
    let s = tx.object_store(store_name).unwrap();
    for value in values {
        s.put(value, None).unwrap();
    }
    assert!(tx.commit().unwrap().await.unwrap().is_committed());
    db.close();
}

pub async fn raw_delete(name: &str, store_name: &str, key: &str) {
    let db = raw(name).await;
    let tx = db
        .transaction(&[store_name], TransactionMode::ReadWrite)
        .unwrap();
    tx.object_store(store_name)
        .unwrap()
        .delete(JsValue::from_str(key))
        .unwrap();
    assert!(tx.commit().unwrap().await.unwrap().is_committed());
    db.close();
}

pub async fn raw_count(name: &str, store_name: &str) -> u32 {
    let db = raw(name).await;
    let tx = db
        .transaction(&[store_name], TransactionMode::ReadOnly)
        .unwrap();
    let n = tx
        .object_store(store_name)
        .unwrap()
        .count(None)
        .unwrap()
        .await
        .unwrap();
    db.close();
    n
}

/// The ULID-shaped id numbered `n` (0 reads as 1), parsed as `T`.
pub fn id<T: std::str::FromStr>(n: u128) -> T
where
    T::Err: std::fmt::Debug,
{
    let alphabet = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let mut text = [b'0'; 26];
    let mut x = n.max(1);
    for slot in text.iter_mut().rev() {
        *slot = alphabet[(x & 31) as usize];
        x >>= 5;
    }
    std::str::from_utf8(&text).unwrap().parse().unwrap()
}
