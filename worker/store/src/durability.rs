//! Opening an IndexedDB transaction with a durability hint.
//!
//! `IDBDatabase.transaction(stores, mode, { durability })` takes a third
//! argument that the idb crate (0.6.5) cannot pass, and web-sys 0.3.107 binds
//! it (`transaction_with_str_sequence_and_mode_and_options`,
//! `IdbTransactionOptions`, `IdbTransactionDurability`) only behind
//! `--cfg=web_sys_unstable_apis`, a flag every build of the workspace would
//! have to carry. So this one module calls the method through `js_sys`.
//!
//! * `strict`: the browser flushes to disk before `complete` fires; the
//!   record survives an OS crash or power loss once acknowledged.
//! * `relaxed`: `complete` fires once the write reached the OS; it survives a
//!   tab or browser crash, but an OS crash or power loss may drop the last
//!   relaxed transactions. Chromium commits transactions to its backing
//!   store in order, so a later strict commit also makes every earlier
//!   relaxed one durable: a loss can only cut the journal's tail, never
//!   punch a hole in it.
//!
//! An engine that does not know the option ignores the dictionary member and
//! uses its default, which is the same as before the option existed.

use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{IdbDatabase, IdbTransaction};

/// The durability a readwrite transaction asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Durability {
    Strict,
    Relaxed,
}

impl Durability {
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Strict => "strict",
            Durability::Relaxed => "relaxed",
        }
    }
}

/// `database.transaction(stores, "readwrite", { durability })`.
///
/// Errors are what `transaction()` throws (`InvalidStateError` when the
/// connection is closed, `NotFoundError` for an unknown store).
pub fn readwrite(
    database: &IdbDatabase,
    stores: &[&str],
    durability: Durability,
) -> Result<IdbTransaction, JsValue> {
    let names: Array = stores.iter().map(|s| JsValue::from_str(s)).collect();
    let options = Object::new();
    Reflect::set(
        &options,
        &JsValue::from_str("durability"),
        &JsValue::from_str(durability.as_str()),
    )?;
    let transaction: Function = Reflect::get(database, &JsValue::from_str("transaction"))?
        .dyn_into()
        .map_err(|_| JsValue::from_str("IDBDatabase.transaction is not a function"))?;
    transaction
        .call3(database, &names, &JsValue::from_str("readwrite"), &options)?
        .dyn_into()
        .map_err(|_| JsValue::from_str("IDBDatabase.transaction did not return a transaction"))
}

/// The durability the browser actually gave a transaction
/// (`IDBTransaction.durability`), when it reports one.
pub fn of(transaction: &IdbTransaction) -> Option<String> {
    Reflect::get(transaction, &JsValue::from_str("durability"))
        .ok()
        .and_then(|v| v.as_string())
}
