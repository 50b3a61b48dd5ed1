//! Moving values that could not be read out of the journal's way, into
//! `quarantine`, with the reason: kept for an export or a person to look
//! at, never deleted and never quoted in a reason.

use js_sys::{Object, JSON};
use wasm_bindgen::JsValue;

use super::fence::WriterEpoch;
use super::schema::{set, store};
use super::{Durability, Journal, JournalError};
use crate::idb;

/// A stored value that could not be read as what its store holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quarantined {
    /// The object store it is in.
    pub store: String,
    /// Its primary key as JSON (`"01J…"`, `["01J…",3]`, `17`).
    pub key: String,
    /// The position it claims, when that much is readable.
    pub position: Option<u64>,
    /// Why it was refused. Never quotes the record's contents.
    pub reason: String,
}

impl Journal {
    pub async fn quarantine(
        &self,
        items: &[Quarantined],
        epoch: WriterEpoch,
    ) -> Result<(), JournalError> {
        self.usable()?;
        let mut names: Vec<&str> = vec![store::QUARANTINE];
        for item in items {
            let name = store::ALL
                .iter()
                .copied()
                .find(|s| *s == item.store && *s != store::QUARANTINE && *s != store::META)
                .ok_or_else(|| {
                    JournalError::Invalid(format!("cannot quarantine from store {:?}", item.store))
                })?;
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let mut parsed = Vec::with_capacity(items.len());
        for item in items {
            let key = JSON::parse(&item.key).map_err(|_| {
                JournalError::Invalid(format!("quarantine key {} is not JSON", item.key))
            })?;
            parsed.push(key);
        }
        let (tx, fence, stores) = self
            .fenced("quarantine", &names, Durability::Strict, epoch, false)
            .await?;
        let target = stores.get(store::QUARANTINE);
        let mut reads = Vec::with_capacity(items.len());
        for (item, key) in items.iter().zip(&parsed) {
            match stores.get(&item.store).get(key) {
                Ok(request) => reads.push((item, key, request)),
                Err(e) => return Err(self.abandon(tx, "quarantine", &e).await),
            }
        }
        let keys = &self.inner.keys;
        for (item, key, request) in reads {
            let Ok(value) = idb::request(&request).await else {
                break; // aborted (fence); `finish` says why
            };
            if value.is_undefined() {
                continue;
            }
            let moved = Object::new();
            set(
                &moved,
                &JsValue::from_str("store"),
                &JsValue::from_str(&item.store),
            );
            set(&moved, &keys.key, &JsValue::from_str(&item.key));
            set(
                &moved,
                &keys.position,
                &item
                    .position
                    .map_or(JsValue::NULL, |p| JsValue::from_f64(p as f64)),
            );
            set(
                &moved,
                &JsValue::from_str("reason"),
                &JsValue::from_str(&item.reason),
            );
            set(&moved, &JsValue::from_str("value"), &value);
            let result = target
                .add(&moved)
                .and_then(|_| stores.get(&item.store).delete(key));
            if let Err(e) = result {
                return Err(self.abandon(tx, "quarantine", &e).await);
            }
        }
        self.finish("quarantine", tx, Some(&fence)).await
    }
}
