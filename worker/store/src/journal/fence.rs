//! The writer epoch: one writer per journal. A controller claims the
//! journal by raising the epoch in `meta` `writer`; every write transaction
//! reads it first and aborts itself when it is no longer its own, so a
//! superseded controller cannot write even one record after the claim.
//!
//! Except under a held claim ([`Journal::claim_writer_held`]), where the
//! read is skipped because the epoch cannot have moved:
//!
//! 1. The `writer` record is written only by [`Journal::claim_writer`]
//!    and [`Journal::repair_writer`] (both through `put_writer`), and the
//!    controller calls them only once it holds the writer Web Lock
//!    (`lead` in the controller's shell: no lock, no claim).
//! 2. A [`WriterLock`] exists only once the browser granted that exclusive
//!    lock, and it is never released while the worker lives: no other
//!    worker of the origin holds it meanwhile, so no other controller
//!    claims or repairs.
//! 3. The database cannot be swapped underneath: deleting or upgrading it
//!    closes this connection first, and every later call fails as
//!    `Removed`, `ConnectionLost` or `VersionChange` (`usable`).
//! 4. Any `put_writer` through this journal forgets the held claim, so a
//!    repair or a second claim in this worker falls back to reading.
//!
//! So from the held claim's commit until the worker ends, the stored epoch
//! is the held one, and a transaction that reads it learns nothing. Without
//! Web Locks the controller does not lead at all (`Phrase::NoWebLocks`).

use std::cell::Cell;
use std::fmt;
use std::rc::Rc;

use js_sys::{Object, Reflect};
use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use web_sys::{IdbObjectStore, IdbTransaction};

use super::schema::{set, store, Keys, MAX_SAFE_INTEGER};
use super::{Durability, Journal, JournalError};
use crate::idb::{self, Tx};
use crate::writer_lock::WriterLock;

/// The `meta` key of the writer fence.
const WRITER_KEY: &str = "writer";
/// The `meta` key (and field) of the journal's identity: `{ key: "id", id }`.
const ID_KEY: &str = "id";

/// A claim on the right to write, from [`Journal::claim_writer`]. Every
/// write names it; a write under an older claim is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WriterEpoch(pub u64);

impl fmt::Display for WriterEpoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "writer epoch {}", self.0)
    }
}

impl Journal {
    /// Claims the right to write: one strict transaction on `meta` `writer`
    /// that raises the epoch by one and returns it. Every earlier claim's
    /// writes fail with [`JournalError::Superseded`] from now on.
    pub async fn claim_writer(&self) -> Result<WriterEpoch, JournalError> {
        let tx = self.readwrite(&[store::META], Durability::Strict)?;
        let meta = match tx.store(store::META) {
            Ok(meta) => meta,
            Err(e) => return Err(self.abandon(tx, "claim", &e).await),
        };
        let keys = &self.inner.keys;
        let current = match meta.get(&JsValue::from_str(WRITER_KEY)) {
            Ok(request) => idb::request(&request).await,
            Err(e) => Err(e),
        };
        // Only IndexedDB was awaited: the transaction is still active here.
        let next = match current.as_ref().map(|v| epoch_of(v, keys)) {
            Ok(Ok(current)) => current.checked_add(1).filter(|n| *n <= MAX_SAFE_INTEGER),
            Ok(Err(())) | Err(_) => None,
        };
        let Some(next) = next else {
            return match current {
                Err(e) => Err(self.abandon(tx, "claim", &e).await),
                Ok(_) => {
                    tx.abandon().await;
                    Err(JournalError::WriterUnreadable)
                }
            };
        };
        self.put_writer(tx, &meta, next).await
    }

    /// [`Journal::claim_writer`] by a worker that holds the writer lock
    /// for the rest of its life: the claimed epoch cannot change while it
    /// lives (see the module's proof), so this journal's writes under it
    /// no longer read the fence.
    pub async fn claim_writer_held(&self, _lock: &WriterLock) -> Result<WriterEpoch, JournalError> {
        let epoch = self.claim_writer().await?;
        self.inner.held.set(Some(epoch));
        Ok(epoch)
    }

    /// Puts `epoch` as the writer record and stamps the journal's identity
    /// if it has none, in `tx`; then waits for it to commit.
    async fn put_writer(
        &self,
        tx: Tx,
        meta: &IdbObjectStore,
        epoch: u64,
    ) -> Result<WriterEpoch, JournalError> {
        // A new writer record: whatever this journal held is no longer
        // known to be current (point 4 of the module's proof).
        self.inner.held.set(None);
        let keys = &self.inner.keys;
        let value = Object::new();
        set(&value, &keys.key, &JsValue::from_str(WRITER_KEY));
        set(&value, &keys.epoch, &JsValue::from_f64(epoch as f64));
        if let Err(e) = meta.put(&value) {
            return Err(self.abandon(tx, "claim", &e).await);
        }
        let stored = match meta.get(&JsValue::from_str(ID_KEY)) {
            Ok(request) => idb::request(&request).await.ok(),
            Err(_) => None,
        };
        let mut id = stored.as_ref().and_then(|v| {
            Reflect::get(v, &JsValue::from_str(ID_KEY))
                .ok()
                .and_then(|id| id.as_string())
        });
        // Stamped once; an unreadable stamp is left where it is (it is not
        // ours to overwrite) and the journal goes without an identity.
        if stored.as_ref().is_some_and(JsValue::is_undefined) {
            if let Ok(bytes) = crate::random_bytes::<16>() {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let fresh: String = bytes
                    .iter()
                    .flat_map(|b| [HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]])
                    .map(char::from)
                    .collect();
                let value = Object::new();
                set(&value, &keys.key, &JsValue::from_str(ID_KEY));
                set(
                    &value,
                    &JsValue::from_str(ID_KEY),
                    &JsValue::from_str(&fresh),
                );
                if meta.put(&value).is_ok() {
                    id = Some(fresh);
                }
            }
        }
        self.finish("claim", tx, None).await?;
        *self.inner.id.borrow_mut() = id;
        Ok(WriterEpoch(epoch))
    }

    /// Claims the right to write over an unreadable writer record
    /// ([`JournalError::WriterUnreadable`]): in one strict transaction the
    /// damaged value is moved into `quarantine` (kept, with the reason, for
    /// an export or a person to look at) and a new writer record is put,
    /// with an epoch of `at` — the clock in milliseconds, above any epoch a
    /// counter starting at 1 reached. A readable record is claimed as
    /// [`Journal::claim_writer`] does.
    pub async fn repair_writer(&self, at: u64) -> Result<WriterEpoch, JournalError> {
        let tx = self.readwrite(&[store::META, store::QUARANTINE], Durability::Strict)?;
        let keys = &self.inner.keys;
        // Only IndexedDB is awaited in here: the transaction stays active.
        let read = async {
            let meta = tx.store(store::META)?;
            let current = idb::request(&meta.get(&JsValue::from_str(WRITER_KEY))?).await?;
            let next = match epoch_of(&current, keys) {
                Ok(epoch) => epoch.checked_add(1).filter(|n| *n <= MAX_SAFE_INTEGER),
                Err(()) => {
                    let moved = Object::new();
                    let text = JsValue::from_str;
                    set(&moved, &text("store"), &text(store::META));
                    set(&moved, &keys.key, &text("\"writer\""));
                    set(&moved, &keys.position, &JsValue::NULL);
                    set(
                        &moved,
                        &text("reason"),
                        &text("its epoch is not a whole number"),
                    );
                    set(&moved, &text("value"), &current);
                    tx.store(store::QUARANTINE)?.add(&moved)?;
                    Some(at.clamp(1, MAX_SAFE_INTEGER))
                }
            };
            Ok::<_, JsValue>((meta, next))
        };
        match read.await {
            Ok((meta, Some(next))) => self.put_writer(tx, &meta, next).await,
            Ok((_, None)) => {
                tx.abandon().await;
                Err(JournalError::WriterUnreadable)
            }
            Err(e) => Err(self.abandon(tx, "repair", &e).await),
        }
    }
}

/// The object stores of one fenced transaction, by name.
pub(super) struct Stores<'a>(Vec<(&'a str, IdbObjectStore)>);

impl Stores<'_> {
    /// The store `name`, which the transaction was opened on.
    pub(super) fn get(&self, name: &str) -> &IdbObjectStore {
        &self
            .0
            .iter()
            .find(|(n, _)| *n == name)
            .expect("the transaction was opened on this store")
            .1
    }
}

impl Journal {
    /// A readwrite transaction on `names` (and `meta`, for the fence) whose
    /// first request is the fence for `epoch`, with each of `names`'
    /// stores; abandoned when any of that cannot be issued. Under a held
    /// claim on `epoch` there is no fence read and no `meta` in scope.
    /// With `commit_when_ours` the transaction commits as soon as it may
    /// (see [`Fence::issue`] and [`Fence::all_issued`]).
    pub(super) async fn fenced<'a>(
        &self,
        what: &str,
        names: &[&'a str],
        durability: Durability,
        epoch: WriterEpoch,
        commit_when_ours: bool,
    ) -> Result<(Tx, Fence, Stores<'a>), JournalError> {
        let held = self.inner.held.get() == Some(epoch);
        let mut scope: Vec<&str> = names.to_vec();
        if !held {
            scope.push(store::META);
        }
        let tx = self.readwrite(&scope, durability)?;
        let fence = if held {
            Ok(Fence::Held { commit_when_ours })
        } else {
            Fence::issue(tx.transaction(), epoch, &self.inner.keys, commit_when_ours)
        };
        let issued = fence.and_then(|fence| {
            let mut stores = Vec::with_capacity(names.len());
            for name in names {
                stores.push((*name, tx.store(name)?));
            }
            Ok((fence, Stores(stores)))
        });
        match issued {
            Ok((fence, stores)) => Ok((tx, fence, stores)),
            Err(e) => Err(self.abandon(tx, what, &e).await),
        }
    }
}

/// The epoch in a `meta` `writer` value; 0 when there is none.
fn epoch_of(value: &JsValue, keys: &Keys) -> Result<u64, ()> {
    if value.is_undefined() {
        return Ok(0);
    }
    Reflect::get(value, &keys.epoch)
        .ok()
        .and_then(|e| e.as_f64())
        .filter(|e| e.fract() == 0.0 && *e >= 0.0 && *e <= MAX_SAFE_INTEGER as f64)
        .map(|e| e as u64)
        .ok_or(())
}

/// The writer fence: a `meta` `writer` read whose success handler aborts the
/// transaction when the stored epoch is not ours. It is issued with the
/// write's own requests, without a round trip in between. Under a held
/// claim there is nothing to read (see the module's proof).
pub(super) enum Fence {
    Read {
        verdict: Rc<Cell<u8>>,
        _on_success: Closure<dyn FnMut()>,
    },
    Held {
        commit_when_ours: bool,
    },
}

const FENCE_PENDING: u8 = 0;
const FENCE_OURS: u8 = 1;
const FENCE_SUPERSEDED: u8 = 2;
const FENCE_UNREADABLE: u8 = 3;

impl Fence {
    /// With `commit_when_ours`, the success handler also commits the
    /// transaction (`IDBTransaction.commit()`): every request of it must
    /// already be issued, which holds when they are issued in the same task
    /// as the fence. That lets the commit start without waiting for each
    /// put's success event to reach this worker first.
    pub(super) fn issue(
        transaction: &IdbTransaction,
        epoch: WriterEpoch,
        keys: &Keys,
        commit_when_ours: bool,
    ) -> Result<Fence, JsValue> {
        let request = transaction
            .object_store(store::META)?
            .get(&JsValue::from_str(WRITER_KEY))?;
        let verdict = Rc::new(Cell::new(FENCE_PENDING));
        let on_success = {
            let verdict = verdict.clone();
            let request = request.clone();
            let transaction = transaction.clone();
            let epoch_key = keys.epoch.clone();
            Closure::<dyn FnMut()>::new(move || {
                let value = request.result().unwrap_or(JsValue::UNDEFINED);
                // No writer record: nobody claimed the journal, so nobody
                // may write to it.
                let stored = if value.is_undefined() {
                    Ok(-1.0)
                } else {
                    Reflect::get(&value, &epoch_key)
                        .ok()
                        .and_then(|e| e.as_f64())
                        .ok_or(())
                };
                let v = match stored {
                    Ok(e) if e == epoch.0 as f64 => FENCE_OURS,
                    Ok(_) => FENCE_SUPERSEDED,
                    Err(()) => FENCE_UNREADABLE,
                };
                verdict.set(v);
                if v != FENCE_OURS {
                    let _ = transaction.abort();
                } else if commit_when_ours {
                    // IndexedDB 3.0 (Chromium 76+); web-sys marks it
                    // deprecated after the 2.0 text.
                    #[allow(deprecated)]
                    let _ = transaction.commit();
                }
            })
        };
        request.set_onsuccess(Some(on_success.as_ref().unchecked_ref()));
        Ok(Fence::Read {
            verdict,
            _on_success: on_success,
        })
    }

    /// Every request of the transaction is issued: a held fence commits it
    /// now when asked to (a read fence does from its success handler).
    pub(super) fn all_issued(&self, tx: &Tx) {
        if let Fence::Held {
            commit_when_ours: true,
        } = self
        {
            #[allow(deprecated)]
            let _ = tx.transaction().commit();
        }
    }

    /// Why the fence refused the write, if it did.
    pub(super) fn refusal(&self) -> Option<JournalError> {
        let Fence::Read { verdict, .. } = self else {
            return None;
        };
        match verdict.get() {
            FENCE_SUPERSEDED => Some(JournalError::Superseded),
            FENCE_UNREADABLE => Some(JournalError::WriterUnreadable),
            _ => None,
        }
    }
}
