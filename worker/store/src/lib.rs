//! The controller worker's IndexedDB stores, over one IndexedDB module:
//! the journal (`lifeline-journal`: commands, events, artifacts, snapshots,
//! the writer fence) and the profile store (`lifeline-config`: profiles and
//! encrypted credentials). Carrying out what the engine decided is the
//! controller's shell; what a record means is the core's; this crate only
//! reads and writes.
//!
//! | module | what it holds |
//! |---|---|
//! | [`journal`] | the journal: schema and migrations, the writer fence, batched reads and writes, quarantine |
//! | [`config`] | profiles and the credential vault |
//! | `idb` | the IndexedDB plumbing both share: open with migrations, requests and transactions as futures, the connection's storage events |
//! | [`durability`] | the one place that opens transactions with a durability hint |
//! | [`storage`] | `navigator.storage` estimate and persistence, as seen from a worker |
//! | [`writer_lock`] | the writer's Web Lock, held for the worker's life: the proof a held claim needs |

pub mod config;
pub mod durability;
mod idb;
pub mod journal;
pub mod storage;
pub mod writer_lock;

/// The name of a thrown exception (`DataCloneError`, `QuotaExceededError`,
/// …), never its message or stack: for a phrase's detail.
pub use idb::exception_name;

/// Fresh random bytes from the platform's CSPRNG (a worker's
/// `crypto.getRandomValues`).
pub fn random_bytes<const N: usize>() -> Result<[u8; N], String> {
    use wasm_bindgen::JsCast;
    let mut bytes = [0u8; N];
    let scope: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    let crypto = scope
        .crypto()
        .map_err(|_| "this browser gives workers no crypto".to_string())?;
    crypto
        .get_random_values_with_u8_array(&mut bytes)
        .map_err(|_| "crypto.getRandomValues failed".to_string())?;
    Ok(bytes)
}
