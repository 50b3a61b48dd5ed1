//! The IndexedDB plumbing of the controller's databases, the journal and
//! the profile store, kept in one place so that the handshakes cannot drift
//! between them:
//! how an open is upgraded or blocked, how a request or a transaction is
//! awaited, how a connection learns that another tab upgraded or deleted
//! its database, and how an exception is named without quoting values.
//! Each store maps [`Error`] to its own error type and keeps its schema.
//!
//! Requests and transactions are awaited through promises whose `resolve`
//! and `reject` are the event handlers themselves: no Rust closure has to
//! be kept alive for them, and awaiting yields only to IndexedDB, so a
//! transaction stays active for the requests issued after an await.

mod connection;
mod open;

use js_sys::{Array, Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{DomException, IdbFactory, IdbObjectStore, IdbRequest, IdbTransaction};

pub use connection::{Connection, Ended};
pub use open::Step;

/// Why an IndexedDB operation failed, before a store words it as its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// No IndexedDB in this context, or `open()` was refused: why.
    Unavailable(String),
    /// Another connection refused to close for the upgrade. The open is
    /// abandoned; a connection that arrives later is closed at once.
    Blocked,
    /// The stored database was written by a newer build (`VersionError`).
    NewerSchema,
    /// A migration step failed (which, and why); its versionchange
    /// transaction was aborted, so the database stays as it was.
    Upgrade(String),
    /// The connection is no longer usable.
    Ended(Ended),
    /// The origin's storage quota is full.
    QuotaExceeded,
    /// A request or transaction failed: `"{what}: {exception}"`.
    Operation(String),
}

/// `indexedDB` of this context. Private modes of some browsers have none.
pub fn factory() -> Result<IdbFactory, Error> {
    let value = Reflect::get(&js_sys::global(), &JsValue::from_str("indexedDB"))
        .map_err(|_| Error::Unavailable("indexedDB is not reachable".into()))?;
    if value.is_undefined() || value.is_null() {
        return Err(Error::Unavailable(
            "this browser context has no IndexedDB".into(),
        ));
    }
    Ok(value.unchecked_into())
}

/// Whether the browser still lists a database `name`
/// (`indexedDB.databases()`); `None` where it cannot tell.
pub async fn exists(name: &str) -> Option<bool> {
    let factory = factory().ok()?;
    let databases: Function = Reflect::get(&factory, &JsValue::from_str("databases"))
        .ok()?
        .dyn_into()
        .ok()?;
    let promise: Promise = databases.call0(&factory).ok()?.dyn_into().ok()?;
    let list: Array = JsFuture::from(promise).await.ok()?.dyn_into().ok()?;
    let name_key = JsValue::from_str("name");
    Some(list.iter().any(|d| {
        Reflect::get(&d, &name_key)
            .ok()
            .and_then(|n| n.as_string())
            .is_some_and(|n| n == name)
    }))
}

/// The name of a thrown DOMException or Error. A thrown string is kept only
/// when it is short: a long one could be anything, a value included.
pub fn exception_name(error: &JsValue) -> String {
    if let Some(e) = error.dyn_ref::<DomException>() {
        return e.name();
    }
    if let Some(e) = error.dyn_ref::<js_sys::Error>() {
        return String::from(e.name());
    }
    match error.as_string() {
        Some(s) if s.len() <= 40 => s,
        _ => "unknown error".into(),
    }
}

/// Name and (shortened) message of an exception. IndexedDB's messages name
/// stores, keys and states, not the values being written.
pub fn exception_message(error: &JsValue) -> String {
    let message = if let Some(e) = error.dyn_ref::<DomException>() {
        e.message()
    } else if let Some(e) = error.dyn_ref::<js_sys::Error>() {
        String::from(e.message())
    } else {
        String::new()
    };
    let name = exception_name(error);
    if message.is_empty() {
        name
    } else {
        format!("{name}: {}", truncated(message, 200))
    }
}

/// `text` cut to at most `max` bytes (on a character boundary), with `…`.
pub fn truncated(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// Maps a thrown exception or an abort reason to an [`Error`].
pub fn failure(what: &str, error: &JsValue) -> Error {
    match exception_name(error).as_str() {
        "QuotaExceededError" => Error::QuotaExceeded,
        _ => Error::Operation(format!("{what}: {}", exception_message(error))),
    }
}

/// One request's result, or the exception it failed with.
pub async fn request(request: &IdbRequest) -> Result<JsValue, JsValue> {
    let promise = Promise::new(&mut |resolve, reject| {
        request.set_onsuccess(Some(&resolve));
        request.set_onerror(Some(&reject));
    });
    let outcome = JsFuture::from(promise).await;
    request.set_onsuccess(None);
    request.set_onerror(None);
    match outcome {
        Ok(_) => Ok(request.result().unwrap_or(JsValue::UNDEFINED)),
        Err(_) => Err(request
            .error()
            .ok()
            .flatten()
            .map(JsValue::from)
            .unwrap_or_else(|| JsValue::from_str("AbortError"))),
    }
}

/// A transaction whose end (`complete` or `abort`) can be awaited. Watching
/// starts when it is made, before any request is issued, so no end is
/// missed.
pub struct Tx {
    transaction: IdbTransaction,
    end: JsFuture,
}

impl Tx {
    pub fn new(transaction: IdbTransaction) -> Tx {
        let promise = Promise::new(&mut |resolve, reject| {
            transaction.set_oncomplete(Some(&resolve));
            transaction.set_onabort(Some(&reject));
        });
        Tx {
            transaction,
            end: JsFuture::from(promise),
        }
    }

    pub fn transaction(&self) -> &IdbTransaction {
        &self.transaction
    }

    pub fn store(&self, name: &str) -> Result<IdbObjectStore, JsValue> {
        self.transaction.object_store(name)
    }

    /// `Ok` once committed; otherwise why it was aborted (the transaction's
    /// error, or `AbortError` for an explicit abort).
    pub async fn end(self) -> Result<(), JsValue> {
        let committed = self.end.await.is_ok();
        self.transaction.set_oncomplete(None);
        self.transaction.set_onabort(None);
        if committed {
            return Ok(());
        }
        Err(self
            .transaction
            .error()
            .map(JsValue::from)
            .unwrap_or_else(|| JsValue::from_str("AbortError")))
    }

    /// Aborts it and waits until the abort has happened, so that nothing of
    /// it is left running when the caller reports the failure.
    pub async fn abandon(self) {
        let _ = self.transaction.abort();
        let _ = self.end().await;
    }
}
