//! The profile store and the credential store: a separate IndexedDB database,
//! [`DATABASE_NAME`], outside the journal. What it holds is in `profiles`
//! (environment profiles) and `credentials` (the vault of encrypted provider
//! keys); this module holds the connection, the schema and the record
//! helpers both use.
//!
//! # Schema (version 1)
//!
//! | store | key | holds |
//! |---|---|---|
//! | `profiles` | `id` | `{ v: 1, id, json }`: `json` is a [`Profile`](lifeline_core::profile::Profile) as serde writes it; `id` is its ULID text |
//! | `credentials` | `id` | `{ v: 1, id, label, created_ms, iv: Uint8Array(12), ciphertext: ArrayBuffer }` |
//! | `keys` | `name` | `{ name: "credentials", key: CryptoKey }`: the wrapping key |
//!
//! # Connection
//!
//! The connection is [`crate::idb`]'s, as the journal's is: an open that
//! another connection blocks fails at once with [`ConfigError::Blocked`]
//! (and a late success is closed), and when another tab asks for a newer
//! version (or deletes the database) this connection closes itself and
//! every later call fails with [`ConfigError::VersionChange`]. Every write
//! is one `strict`-durability transaction acknowledged on `complete`.

mod credentials;
mod profiles;

use std::fmt;
use std::rc::Rc;

use js_sys::{Object, Reflect, JSON};
use lifeline_core::store_fault::{StoreFault, StoredKind};
use lifeline_core::ProfileId;
use wasm_bindgen::JsValue;
use web_sys::{IdbDatabase, IdbObjectStore, IdbObjectStoreParameters, IdbRequest, IdbTransaction};

use crate::durability::Durability;
use crate::idb::{self, truncated, Connection, Ended};
pub use credentials::CREDENTIAL_KEY_NAME;

pub const DATABASE_NAME: &str = "lifeline-config";

/// The version this build writes: one more than the last migration.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// The record format version (`"v"`) of every value this build writes.
pub const RECORD_VERSION: u32 = 1;

/// Object stores.
pub mod store {
    pub const PROFILES: &str = "profiles";
    pub const CREDENTIALS: &str = "credentials";
    pub const KEYS: &str = "keys";
    pub const ALL: [&str; 3] = [PROFILES, CREDENTIALS, KEYS];
}

/// Bounds, so a hostile or corrupt store stays small and every refusal is
/// clear.
pub mod limits {
    /// Bytes of a credential's label (UTF-8).
    pub const MAX_LABEL_BYTES: usize = 200;
    /// Bytes of a secret (UTF-8).
    pub const MAX_SECRET_BYTES: usize = 16 * 1024;
    pub const MAX_PROFILES: usize = 256;
    pub const MAX_CREDENTIALS: usize = 256;
    /// Bytes of a stored profile's JSON read back. A valid profile is well
    /// below it (64 variables of at most 8 KiB each).
    pub const MAX_PROFILE_JSON_BYTES: usize = 1024 * 1024;
    /// AES-GCM's IV as this store writes it.
    pub const IV_BYTES: u32 = 12;
    /// AES-GCM's authentication tag (the WebCrypto default, 128 bits).
    pub const TAG_BYTES: u32 = 16;
}

/// Largest integer a JavaScript number carries exactly.
pub(crate) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Why a configuration operation failed. `Display` says what to do; neither
/// it nor `Debug` ever contains a secret, a label or a record's contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// IndexedDB is missing, refused to open, or the browser closed the
    /// connection.
    Unavailable(String),
    /// The database was written by a newer build.
    NewerSchema,
    /// Another tab holds the database open at an older version.
    Blocked,
    /// Another tab is upgrading the database; this connection was closed.
    VersionChange,
    /// [`ConfigStore::close`] was called.
    Closed,
    /// The origin's storage quota is full. Nothing stored was lost.
    QuotaExceeded,
    /// A read or write failed; the message names the operation.
    Operation(String),
    /// The profile fails [`Profile::validate`]; nothing was written.
    InvalidProfile(String),
    /// The stored profile has this revision or a newer one: writing would
    /// lose someone's update.
    StaleRevision {
        id: ProfileId,
        stored: u64,
        offered: u64,
    },
    /// The store already holds the most it may.
    TooMany { what: StoredKind, max: usize },
    /// A credential's label is blank or longer than the limit.
    InvalidLabel { len: usize },
    /// A secret is empty or longer than the limit.
    InvalidSecret { len: usize },
    /// WebCrypto is missing or refused (only the exception's name is kept).
    Crypto(String),
    /// A stored record this operation needs is unreadable.
    Corrupt(String),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One wording: what a person is told, in English.
        self.fault().fmt(f)
    }
}

impl ConfigError {
    /// What a person is told (the page words it); `Display` stays for logs.
    pub fn fault(&self) -> StoreFault {
        use StoreFault as F;
        match self {
            ConfigError::Unavailable(detail) => F::Unavailable {
                detail: detail.clone(),
            },
            ConfigError::NewerSchema => F::NewerSchema {
                schema: SCHEMA_VERSION,
            },
            ConfigError::Blocked => F::Blocked,
            ConfigError::VersionChange => F::VersionChange,
            ConfigError::Closed => F::Closed,
            ConfigError::QuotaExceeded => F::QuotaExceeded,
            ConfigError::Operation(detail) => F::Operation {
                detail: detail.clone(),
            },
            ConfigError::InvalidProfile(detail) => F::InvalidProfile {
                detail: detail.clone(),
            },
            ConfigError::StaleRevision {
                stored, offered, ..
            } => F::StaleRevision {
                stored: *stored,
                offered: *offered,
            },
            ConfigError::TooMany { what, max } => F::TooMany {
                what: *what,
                max: *max as u64,
            },
            ConfigError::InvalidLabel { len } => F::InvalidLabel {
                len: *len as u64,
                max: limits::MAX_LABEL_BYTES as u64,
            },
            ConfigError::InvalidSecret { len } => F::InvalidSecret {
                len: *len as u64,
                max: limits::MAX_SECRET_BYTES as u64,
            },
            ConfigError::Crypto(detail) => F::Crypto {
                detail: detail.clone(),
            },
            ConfigError::Corrupt(detail) => F::Corrupt {
                detail: detail.clone(),
            },
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<idb::Error> for ConfigError {
    fn from(error: idb::Error) -> ConfigError {
        match error {
            idb::Error::Unavailable(detail) | idb::Error::Upgrade(detail) => {
                ConfigError::Unavailable(detail)
            }
            idb::Error::Blocked => ConfigError::Blocked,
            idb::Error::NewerSchema => ConfigError::NewerSchema,
            // A deletion reads as an upgrade here: either way this tab must
            // reload to go on, and the profile store has no recovery of its own.
            idb::Error::Ended(Ended::VersionChange | Ended::Removed) => ConfigError::VersionChange,
            idb::Error::Ended(Ended::Closed) => ConfigError::Closed,
            idb::Error::Ended(Ended::Lost) => ConfigError::Unavailable(
                "the browser closed the database (site data cleared or a disk error)".into(),
            ),
            idb::Error::QuotaExceeded => ConfigError::QuotaExceeded,
            idb::Error::Operation(detail) => ConfigError::Operation(detail),
        }
    }
}

/// An open `lifeline-config` database. Cheap to clone; the connection closes
/// when the last clone is dropped or [`ConfigStore::close`] is called.
#[derive(Clone)]
pub struct ConfigStore {
    connection: Rc<Connection>,
}

impl fmt::Debug for ConfigStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigStore")
            .field("connection", &self.connection)
            .finish()
    }
}

impl ConfigStore {
    /// Opens (creating) [`DATABASE_NAME`].
    pub async fn open() -> Result<ConfigStore, ConfigError> {
        ConfigStore::open_named(DATABASE_NAME).await
    }

    /// Opens (creating) the database `name`; tests use their own names.
    ///
    /// Fails with [`ConfigError::NewerSchema`] for a database of a newer
    /// build, [`ConfigError::Blocked`] as soon as another connection refuses
    /// to close for an upgrade (a later success is closed at once), and
    /// [`ConfigError::Unavailable`] when IndexedDB is missing or creating
    /// the stores failed.
    pub async fn open_named(name: &str) -> Result<ConfigStore, ConfigError> {
        let connection = Connection::open(name, &MIGRATIONS).await?;
        Ok(ConfigStore {
            connection: Rc::new(connection),
        })
    }

    /// The version the open database is at.
    pub fn version(&self) -> u32 {
        self.connection.version()
    }

    /// Called when another tab asks to upgrade the database. The connection
    /// is already closed when `f` runs; every later call returns
    /// [`ConfigError::VersionChange`]. Replaces an earlier callback.
    pub fn on_version_change(&self, f: impl Fn() + 'static) {
        self.connection.on_version_change(f);
    }

    /// Closes the connection (after running transactions finish).
    pub fn close(&self) {
        self.connection.close();
    }

    fn usable(&self) -> Result<(), ConfigError> {
        Ok(self.connection.usable()?)
    }

    fn failure(&self, what: &str, error: &JsValue) -> ConfigError {
        self.connection.failure(what, error).into()
    }

    fn readonly(&self, stores: &[&str]) -> Result<web_sys::IdbTransaction, ConfigError> {
        Ok(self.connection.readonly(stores)?)
    }

    /// One request in its own read-only transaction.
    async fn read_one(
        &self,
        what: &str,
        store_name: &str,
        make: impl FnOnce(&IdbObjectStore) -> Result<IdbRequest, JsValue>,
    ) -> Result<JsValue, ConfigError> {
        let request = self
            .readonly(&[store_name])?
            .object_store(store_name)
            .and_then(|s| make(&s))
            .map_err(|e| self.failure(what, &e))?;
        idb::request(&request)
            .await
            .map_err(|e| self.failure(what, &e))
    }

    /// Deletes `key` from `store_name`; a key that is not there is not an
    /// error.
    async fn delete(&self, what: &str, store_name: &str, key: String) -> Result<(), ConfigError> {
        let key = JsValue::from_str(&key);
        self.write(what, store_name, |s| async move {
            s.delete(&key).map_err(Step::Js)?;
            Ok(())
        })
        .await
    }

    /// One readwrite transaction on `store_name`: `run` issues requests and
    /// may await them (IndexedDB only), then returns what to report; the
    /// transaction commits if `run` succeeds and is aborted otherwise. Every
    /// write here is strict: profiles and keys are few and small, and an
    /// acknowledged one must survive a power cut.
    async fn write<T, F, Fut>(&self, what: &str, store_name: &str, run: F) -> Result<T, ConfigError>
    where
        F: FnOnce(IdbObjectStore) -> Fut,
        Fut: std::future::Future<Output = Result<T, Step>>,
    {
        let tx = self
            .connection
            .readwrite(&[store_name], Durability::Strict)?;
        let ran = match tx.store(store_name) {
            Ok(object_store) => run(object_store).await,
            Err(e) => Err(Step::Js(e)),
        };
        match ran {
            Ok(value) => {
                self.connection.finish(what, tx).await?;
                Ok(value)
            }
            Err(Step::Refuse(error)) => {
                tx.abandon().await;
                Err(error)
            }
            Err(Step::Js(e)) => {
                // A thrown request error is the reason; an aborted
                // transaction names its own.
                let error = self.failure(what, &e);
                tx.abandon().await;
                Err(error)
            }
        }
    }
}

/// Inside [`ConfigStore::write`]: the value stored under `key`, or
/// `undefined` when there is none and a new record still fits under `max`
/// of `what`. Both requests are issued before either is awaited.
pub(crate) async fn existing_or_room(
    store: &IdbObjectStore,
    key: &JsValue,
    what: StoredKind,
    max: usize,
) -> Result<JsValue, Step> {
    let existing = store.get(key).map_err(Step::Js)?;
    let count = store.count().map_err(Step::Js)?;
    let existing = idb::request(&existing).await.map_err(Step::Js)?;
    let count = idb::request(&count).await.map_err(Step::Js)?;
    if existing.is_undefined() && count.as_f64().unwrap_or(f64::MAX) >= max as f64 {
        return Err(Step::Refuse(ConfigError::TooMany { what, max }));
    }
    Ok(existing)
}

/// How a step inside [`ConfigStore::write`] ends early.
pub(crate) enum Step {
    /// A request threw or failed.
    Js(JsValue),
    /// Refused on what was read; the transaction is aborted.
    Refuse(ConfigError),
}

pub(crate) fn field(value: &JsValue, name: &str) -> JsValue {
    if !value.is_object() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(value, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

pub(crate) fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in fields {
        // Setting a data property on a fresh plain object cannot throw.
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o.into()
}

/// A key for a message: JSON, shortened.
pub(crate) fn printable(key: &JsValue) -> String {
    let text = JSON::stringify(key)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| "?".into());
    truncated(text, 64)
}

pub(crate) fn record_version_ok(value: &JsValue) -> Result<(), String> {
    match field(value, "v").as_f64() {
        Some(v) if v == RECORD_VERSION as f64 => Ok(()),
        // Checked whole and below 1e9, so the integer prints it exactly
        // (and no float formatting is linked in for one message).
        Some(v) if v.fract() == 0.0 && v > RECORD_VERSION as f64 && v < 1e9 => Err(format!(
            "it has record version {}, written by a newer Lifeline (this build reads \"v\": {RECORD_VERSION})",
            v as u64
        )),
        _ => Err(format!(
            "it has no \"v\": {RECORD_VERSION} record version"
        )),
    }
}

/// Every migration, in order (see [`crate::idb::Step`]). Shipped: never
/// edit a step; a new schema is a new step at the end.
const MIGRATIONS: [idb::Step; 1] = [create_v1];

fn create_v1(database: &IdbDatabase, _: &IdbTransaction) -> Result<(), JsValue> {
    let keyed = |path: &str| {
        let params = IdbObjectStoreParameters::new();
        params.set_key_path(&JsValue::from_str(path));
        params
    };
    database.create_object_store_with_optional_parameters(store::PROFILES, &keyed("id"))?;
    database.create_object_store_with_optional_parameters(store::CREDENTIALS, &keyed("id"))?;
    database.create_object_store_with_optional_parameters(store::KEYS, &keyed("name"))?;
    Ok(())
}
