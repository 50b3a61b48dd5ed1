//! The profile store and the credential store: a separate IndexedDB database,
//! [`DATABASE_NAME`], outside the journal.
//!
//! # Schema (version 1)
//!
//! | store | key | holds |
//! |---|---|---|
//! | `profiles` | `id` | `{ v: 1, id, json }`: `json` is a [`Profile`] as serde writes it; `id` is its ULID text |
//! | `credentials` | `id` | `{ v: 1, id, label, created_ms, iv: Uint8Array(12), ciphertext: ArrayBuffer }` |
//! | `keys` | `name` | `{ name: "credentials", key: CryptoKey }`: the wrapping key |
//!
//! # Profiles
//!
//! A profile is checked with [`Profile::validate`] before it is written and
//! again after it is read: a stored record is outside input like any other.
//! [`ConfigStore::put_profile`] refuses a revision that is not above the
//! stored one ([`ConfigError::StaleRevision`]): two editors of one profile
//! never silently lose an update. A stored record whose revision cannot be
//! read at all may be overwritten (that is how the user repairs it).
//!
//! [`ConfigStore::lookup_profile`] answers what the resume rules of
//! [`lifeline_core::profile::resolve_for_resume`] need: `Deleted` only when
//! the store answered and holds no such record; `Failed` when it could not
//! answer or the record does not decode or validate. A record of another
//! owner (imported, or written by another executor) that is otherwise valid
//! comes back as `Found`, so the core blocks on it by owner rather than
//! treating it as unreadable. [`ConfigStore::list_profiles`] follows the same
//! rules and lists every unreadable record as `Err(detail)`.
//!
//! # Credentials
//!
//! A secret is encrypted with AES-GCM (256-bit key) under a fresh random
//! 12-byte IV on every write, with the credential id's ULID text as
//! additional authenticated data: a ciphertext copied into another record
//! fails to decrypt. The key is generated once by WebCrypto as
//! *non-extractable* and stored as the `CryptoKey` object itself (structured
//! clone keeps it non-extractable): no script, this one included, can read
//! its bytes, so the ciphertexts at rest are useless without this origin's
//! IndexedDB.
//!
//! [`ConfigStore::resolve_credential`] is the launch checkpoint and the only
//! function that decrypts. Nothing else returns or logs a secret: listings
//! give ids and labels, and no error's `Display` or `Debug` quotes a secret,
//! a label or a record's contents.
//!
//! **A lost key is never replaced for reading.** If the `keys` record is gone
//! (part of the site's storage was cleared) while credentials remain, they
//! resolve as `Unreadable` with [`KEY_GONE`]. Only writing a credential
//! generates a new key; credentials encrypted under the old one then stay
//! `Unreadable` (they fail authentication under the new key) until the user
//! enters them again.
//!
//! # Connection
//!
//! Opening handles `blocked` and `versionchange` as [`crate::journal`] does:
//! an open that another connection blocks fails at once with
//! [`ConfigError::Blocked`] (and a late success is closed), and when another
//! tab asks for a newer version this connection closes itself and every later
//! call fails with [`ConfigError::VersionChange`]. Every write is one
//! `strict`-durability transaction acknowledged on `complete`.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

use js_sys::{Array, ArrayBuffer, Function, Object, Promise, Reflect, Uint8Array, JSON};
use lifeline_core::profile::{CredentialFailure, Profile, ProfileLookup, Secret, OWNER};
use lifeline_core::{CredentialId, ProfileId};
use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AesGcmParams, AesKeyGenParams, Crypto, CryptoKey, DomException, Event, IdbDatabase, IdbFactory,
    IdbObjectStore, IdbObjectStoreParameters, IdbRequest, IdbTransaction, SubtleCrypto,
};

use crate::durability::{self, Durability};
use crate::idb::{open_database, OpenError};

pub const DATABASE_NAME: &str = "lifeline-config";

/// The version this build writes. Raise it together with a new arm in
/// [`migrate_step`]; never edit an arm that has shipped.
pub const SCHEMA_VERSION: u32 = 1;

/// The record format version (`"v"`) of every value this build writes.
pub const RECORD_VERSION: u32 = 1;

/// Object stores.
pub mod store {
    pub const PROFILES: &str = "profiles";
    pub const CREDENTIALS: &str = "credentials";
    pub const KEYS: &str = "keys";
    pub const ALL: [&str; 3] = [PROFILES, CREDENTIALS, KEYS];
}

/// The `keys` record that holds the credentials' wrapping key.
pub const CREDENTIAL_KEY_NAME: &str = "credentials";

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

/// What [`ConfigStore::resolve_credential`] says when the wrapping key is
/// gone. Shown to the user as it is.
pub const KEY_GONE: &str = "the encryption key is gone; enter the key again in Profiles";

/// What it says when a ciphertext does not authenticate under the key.
pub const UNDECRYPTABLE: &str = "the stored credential could not be decrypted: it was encrypted under an earlier key, or the record was altered; enter the key again in Profiles";

/// Largest integer a JavaScript number carries exactly.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

// ---------------------------------------------------------------------------
// Errors

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
    TooMany { what: &'static str, max: usize },
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
        match self {
            ConfigError::Unavailable(detail) => write!(
                f,
                "the profile and credential store could not be opened or was closed by the browser ({detail}); reload to retry"
            ),
            ConfigError::NewerSchema => write!(
                f,
                "the profile and credential store was written by a newer Lifeline (schema above {SCHEMA_VERSION}); reload to get the newer version — nothing was changed"
            ),
            ConfigError::Blocked => write!(
                f,
                "another Lifeline tab is holding an older profile store open; close or reload the other tabs"
            ),
            ConfigError::VersionChange => write!(
                f,
                "a newer Lifeline in another tab is upgrading the profile store, so this tab closed its connection; reload this tab to continue"
            ),
            ConfigError::Closed => write!(f, "the profile store connection was closed by this tab"),
            ConfigError::QuotaExceeded => write!(
                f,
                "the browser's storage for Lifeline is full: nothing was written and everything stored is kept; free space (delete old sessions or artifacts) and try again"
            ),
            ConfigError::Operation(detail) => write!(
                f,
                "profile store operation failed: {detail}; nothing of it was written — it can be retried"
            ),
            ConfigError::InvalidProfile(detail) => {
                write!(f, "the profile was not saved: {detail}")
            }
            ConfigError::StaleRevision {
                id,
                stored,
                offered,
            } => write!(
                f,
                "profile {id} was changed elsewhere (stored revision {stored}, this edit is based on an older one and would be revision {offered}); reload the profile and make the edit again"
            ),
            ConfigError::TooMany { what, max } => write!(
                f,
                "there are already {max} {what}, the most Lifeline keeps; delete one you no longer need first"
            ),
            ConfigError::InvalidLabel { len } => write!(
                f,
                "a credential needs a label of 1 to {} bytes (this one has {len}); nothing was saved",
                limits::MAX_LABEL_BYTES
            ),
            ConfigError::InvalidSecret { len } => write!(
                f,
                "a credential's secret must be 1 to {} bytes (this one has {len}); nothing was saved",
                limits::MAX_SECRET_BYTES
            ),
            ConfigError::Crypto(detail) => write!(
                f,
                "the browser's WebCrypto could not protect the credential ({detail}); nothing was saved — Lifeline needs a browser with crypto.subtle in workers (a secure context: https or localhost)"
            ),
            ConfigError::Corrupt(detail) => write!(
                f,
                "a stored record is damaged: {detail}; delete it in Profiles and enter it again"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

// ---------------------------------------------------------------------------
// Connection

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Open,
    Closed,
    VersionChange,
    Lost,
}

struct Shared {
    state: Cell<State>,
    on_version_change: RefCell<Option<Box<dyn Fn()>>>,
}

struct Inner {
    database: IdbDatabase,
    shared: Rc<Shared>,
    _on_version_change: Closure<dyn FnMut(Event)>,
    _on_close: Closure<dyn FnMut(Event)>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.database.set_onversionchange(None);
        self.database.set_onclose(None);
        self.database.close();
    }
}

/// An open `lifeline-config` database. Cheap to clone; the connection closes
/// when the last clone is dropped or [`ConfigStore::close`] is called.
#[derive(Clone)]
pub struct ConfigStore {
    inner: Rc<Inner>,
}

impl fmt::Debug for ConfigStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigStore")
            .field("name", &self.inner.database.name())
            .field("state", &self.inner.shared.state.get())
            .finish()
    }
}

fn factory() -> Result<IdbFactory, ConfigError> {
    let value = Reflect::get(&js_sys::global(), &JsValue::from_str("indexedDB"))
        .map_err(|_| ConfigError::Unavailable("indexedDB is not reachable".into()))?;
    if value.is_undefined() || value.is_null() {
        return Err(ConfigError::Unavailable(
            "this browser context has no IndexedDB".into(),
        ));
    }
    Ok(value.unchecked_into())
}

fn exception_name(error: &JsValue) -> String {
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

fn truncated(mut text: String, max: usize) -> String {
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

/// Name and (shortened) message of an IndexedDB exception. IndexedDB
/// messages name stores, keys and states, not the values being written.
fn exception_message(error: &JsValue) -> String {
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
        let upgrade = |database: &IdbDatabase, _: &IdbTransaction, old: u32| {
            migrate(database, old).map_err(|e| exception_message(&e))
        };
        match open_database(&factory()?, name, SCHEMA_VERSION, upgrade).await {
            Ok(database) => Ok(ConfigStore::from_database(database)),
            Err(OpenError::Blocked) => Err(ConfigError::Blocked),
            Err(OpenError::Upgrade { old, detail }) => Err(ConfigError::Unavailable(format!(
                "creating schema from version {old} failed: {detail}"
            ))),
            Err(OpenError::Failed(error)) => Err(match exception_name(&error).as_str() {
                "VersionError" => ConfigError::NewerSchema,
                "QuotaExceededError" => ConfigError::QuotaExceeded,
                _ => ConfigError::Unavailable(exception_message(&error)),
            }),
        }
    }

    fn from_database(database: IdbDatabase) -> ConfigStore {
        let shared = Rc::new(Shared {
            state: Cell::new(State::Open),
            on_version_change: RefCell::new(None),
        });
        let on_version_change = {
            let shared = shared.clone();
            let database = database.clone();
            Closure::<dyn FnMut(Event)>::new(move |_| {
                // Close first: the other tab's upgrade waits for us.
                database.close();
                shared.state.set(State::VersionChange);
                if let Some(f) = shared.on_version_change.borrow().as_ref() {
                    f();
                }
            })
        };
        let on_close = {
            let shared = shared.clone();
            Closure::<dyn FnMut(Event)>::new(move |_| shared.state.set(State::Lost))
        };
        database.set_onversionchange(Some(on_version_change.as_ref().unchecked_ref()));
        database.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        ConfigStore {
            inner: Rc::new(Inner {
                database,
                shared,
                _on_version_change: on_version_change,
                _on_close: on_close,
            }),
        }
    }

    /// The version the open database is at.
    pub fn version(&self) -> u32 {
        self.inner.database.version() as u32
    }

    /// Called when another tab asks to upgrade the database. The connection
    /// is already closed when `f` runs; every later call returns
    /// [`ConfigError::VersionChange`]. Replaces an earlier callback.
    pub fn on_version_change(&self, f: impl Fn() + 'static) {
        *self.inner.shared.on_version_change.borrow_mut() = Some(Box::new(f));
    }

    /// Closes the connection (after running transactions finish).
    pub fn close(&self) {
        if self.inner.shared.state.get() == State::Open {
            self.inner.shared.state.set(State::Closed);
        }
        self.inner.database.close();
    }

    fn usable(&self) -> Result<(), ConfigError> {
        match self.inner.shared.state.get() {
            State::Open => Ok(()),
            State::Closed => Err(ConfigError::Closed),
            State::VersionChange => Err(ConfigError::VersionChange),
            State::Lost => Err(ConfigError::Unavailable(
                "the browser closed the database (site data cleared or a disk error)".into(),
            )),
        }
    }

    fn failure(&self, what: &str, error: &JsValue) -> ConfigError {
        self.usable()
            .err()
            .unwrap_or_else(|| match exception_name(error).as_str() {
                "QuotaExceededError" => ConfigError::QuotaExceeded,
                _ => ConfigError::Operation(format!("{what}: {}", exception_message(error))),
            })
    }

    fn readonly(&self, stores: &[&str]) -> Result<IdbTransaction, ConfigError> {
        self.usable()?;
        let names: Array = stores.iter().map(|s| JsValue::from_str(s)).collect();
        self.inner
            .database
            .transaction_with_str_sequence(&names)
            .map_err(|e| self.failure("begin read", &e))
    }

    fn readwrite(&self, stores: &[&str]) -> Result<IdbTransaction, ConfigError> {
        self.usable()?;
        durability::readwrite(&self.inner.database, stores, Durability::Strict)
            .map_err(|e| self.failure("begin write", &e))
    }

    /// One request in its own read-only transaction.
    async fn read_one(
        &self,
        what: &str,
        store_name: &str,
        make: impl FnOnce(&IdbObjectStore) -> Result<IdbRequest, JsValue>,
    ) -> Result<JsValue, ConfigError> {
        let transaction = self.readonly(&[store_name])?;
        let request = transaction
            .object_store(store_name)
            .and_then(|s| make(&s))
            .map_err(|e| self.failure(what, &e))?;
        await_request(&request)
            .await
            .map_err(|e| self.failure(what, &e))
    }

    /// Waits for a readwrite transaction to end and names the failure.
    async fn finish(
        &self,
        what: &str,
        transaction: &IdbTransaction,
        watch: TxWatch,
    ) -> Result<(), ConfigError> {
        if watch.await {
            return Ok(());
        }
        let error = transaction
            .error()
            .map(JsValue::from)
            .unwrap_or_else(|| JsValue::from_str("AbortError"));
        Err(self.failure(&format!("{what} was aborted"), &error))
    }

    /// Aborts a readwrite transaction and returns `error`.
    async fn abandon<T>(
        &self,
        transaction: &IdbTransaction,
        watch: TxWatch,
        error: ConfigError,
    ) -> Result<T, ConfigError> {
        let _ = transaction.abort();
        let _ = watch.await;
        Err(error)
    }

    /// One readwrite transaction on `store_name`: `run` issues requests and
    /// may await them (IndexedDB only), then returns what to report; the
    /// transaction commits if `run` succeeds and is aborted otherwise.
    async fn write<T, F, Fut>(&self, what: &str, store_name: &str, run: F) -> Result<T, ConfigError>
    where
        F: FnOnce(IdbObjectStore) -> Fut,
        Fut: std::future::Future<Output = Result<T, Step>>,
    {
        let transaction = self.readwrite(&[store_name])?;
        let watch = TxWatch::new(&transaction);
        let object_store = match transaction.object_store(store_name) {
            Ok(s) => s,
            Err(e) => {
                let error = self.failure(what, &e);
                return self.abandon(&transaction, watch, error).await;
            }
        };
        match run(object_store).await {
            Ok(value) => {
                self.finish(what, &transaction, watch).await?;
                Ok(value)
            }
            Err(Step::Refuse(error)) => self.abandon(&transaction, watch, error).await,
            Err(Step::Js(e)) => {
                // An aborted transaction names its own reason; a thrown
                // request error is the reason otherwise.
                let error = self.failure(what, &e);
                let _ = transaction.abort();
                let _ = watch.await;
                Err(error)
            }
        }
    }

    // -----------------------------------------------------------------------
    // Profiles

    /// Stores `profile` after validating it. Its revision must be above the
    /// stored one's ([`ConfigError::StaleRevision`]); a new profile is refused
    /// beyond [`limits::MAX_PROFILES`].
    pub async fn put_profile(&self, profile: &Profile) -> Result<(), ConfigError> {
        self.usable()?;
        profile
            .validate()
            .map_err(|e| ConfigError::InvalidProfile(e.0))?;
        if profile.revision > MAX_SAFE_INTEGER {
            return Err(ConfigError::InvalidProfile(format!(
                "revision {} is above what this store keeps exactly",
                profile.revision
            )));
        }
        let json = serde_json::to_string(profile)
            .map_err(|_| ConfigError::InvalidProfile("the profile does not serialise".into()))?;
        if json.len() > limits::MAX_PROFILE_JSON_BYTES {
            return Err(ConfigError::InvalidProfile(format!(
                "the profile is {} bytes, above the {} a profile may have",
                json.len(),
                limits::MAX_PROFILE_JSON_BYTES
            )));
        }
        let id = JsValue::from_str(&profile.id.to_string());
        let value = object(&[
            ("v", JsValue::from(RECORD_VERSION)),
            ("id", id.clone()),
            ("json", JsValue::from_str(&json)),
        ]);
        let (profile_id, offered) = (profile.id, profile.revision);
        self.write("save profile", store::PROFILES, |s| async move {
            let existing = s.get(&id).map_err(Step::Js)?;
            let count = s.count().map_err(Step::Js)?;
            let existing = await_request(&existing).await.map_err(Step::Js)?;
            let count = await_request(&count).await.map_err(Step::Js)?;
            if existing.is_undefined() {
                if count.as_f64().unwrap_or(f64::MAX) >= limits::MAX_PROFILES as f64 {
                    return Err(Step::Refuse(ConfigError::TooMany {
                        what: "profiles",
                        max: limits::MAX_PROFILES,
                    }));
                }
            } else if let Some(stored) = stored_revision(&existing) {
                if offered <= stored {
                    return Err(Step::Refuse(ConfigError::StaleRevision {
                        id: profile_id,
                        stored,
                        offered,
                    }));
                }
            }
            s.put(&value).map_err(Step::Js)?;
            Ok(())
        })
        .await
    }

    /// Looks a profile up by identity, for a resume (see the module docs).
    pub async fn lookup_profile(&self, id: ProfileId) -> ProfileLookup {
        let key = JsValue::from_str(&id.to_string());
        match self
            .read_one("read profile", store::PROFILES, |s| s.get(&key))
            .await
        {
            Err(e) => ProfileLookup::Failed {
                detail: e.to_string(),
            },
            Ok(value) if value.is_undefined() => ProfileLookup::Deleted,
            Ok(value) => match read_profile(&value) {
                Ok(profile) if profile.id == id => ProfileLookup::Found(profile),
                Ok(profile) => ProfileLookup::Failed {
                    detail: format!(
                        "the record stored as profile {id} is profile {}",
                        profile.id
                    ),
                },
                Err(detail) => ProfileLookup::Failed { detail },
            },
        }
    }

    /// Every stored profile, in id order. A record that cannot be read is
    /// listed as `Err(detail)` (naming its key), never left out.
    pub async fn list_profiles(&self) -> Result<Vec<Result<Profile, String>>, ConfigError> {
        let values = self
            .read_one("list profiles", store::PROFILES, |s| s.get_all())
            .await?;
        let values: Array = values.unchecked_into();
        let mut out = Vec::with_capacity(values.length() as usize);
        for value in values.iter() {
            let key = printable(&field(&value, "id"));
            out.push(
                read_profile(&value).map_err(|reason| format!("profile record {key}: {reason}")),
            );
        }
        Ok(out)
    }

    /// Deletes a profile; deleting one that is not there is not an error.
    pub async fn delete_profile(&self, id: ProfileId) -> Result<(), ConfigError> {
        let key = JsValue::from_str(&id.to_string());
        self.write("delete profile", store::PROFILES, |s| async move {
            s.delete(&key).map_err(Step::Js)?;
            Ok(())
        })
        .await
    }

    /// The profile a session starts with when the user picked none.
    ///
    /// The rule: if the store holds no profile record at all, stores
    /// `Profile::built_in(new_id)` and returns it. Otherwise returns, in id
    /// order, the first readable profile of this browser's owner whose
    /// provider is the built-in agent, else the first readable profile of
    /// this owner of any provider. If no record is readable and ours (all
    /// unreadable or of another owner), a new built-in profile is stored
    /// beside them — they stay where they are for the user to repair or
    /// delete — so a new user always gets a working agent.
    pub async fn ensure_default_profile(&self, new_id: ProfileId) -> Result<Profile, ConfigError> {
        self.usable()?;
        let built_in = Profile::built_in(new_id);
        let json = serde_json::to_string(&built_in)
            .map_err(|_| ConfigError::InvalidProfile("the profile does not serialise".into()))?;
        let value = object(&[
            ("v", JsValue::from(RECORD_VERSION)),
            ("id", JsValue::from_str(&new_id.to_string())),
            ("json", JsValue::from_str(&json)),
        ]);
        self.write(
            "create the default profile",
            store::PROFILES,
            |s| async move {
                let all = s.get_all().map_err(Step::Js)?;
                let all: Array = await_request(&all)
                    .await
                    .map_err(Step::Js)?
                    .unchecked_into();
                let readable: Vec<Profile> = all
                    .iter()
                    .filter_map(|v| read_profile(&v).ok())
                    .filter(|p| p.owner == OWNER && p.validate().is_ok())
                    .collect();
                let chosen = readable
                    .iter()
                    .find(|p| p.provider == lifeline_core::profile::Provider::BuiltIn)
                    .or_else(|| readable.first());
                if let Some(p) = chosen {
                    return Ok(p.clone());
                }
                if all.length() as usize >= limits::MAX_PROFILES {
                    return Err(Step::Refuse(ConfigError::TooMany {
                        what: "profiles",
                        max: limits::MAX_PROFILES,
                    }));
                }
                // `add`: an id already taken (by an unreadable record) fails
                // instead of overwriting it.
                s.add(&value).map_err(Step::Js)?;
                Ok(built_in)
            },
        )
        .await
    }

    // -----------------------------------------------------------------------
    // Credentials

    /// Encrypts `secret` and stores it as credential `id` with `label`,
    /// replacing an earlier secret of the same id (its `created_ms` is kept).
    /// Generates the wrapping key if there is none (see the module docs).
    pub async fn put_credential(
        &self,
        id: CredentialId,
        label: &str,
        secret: &Secret,
    ) -> Result<(), ConfigError> {
        self.usable()?;
        if label.trim().is_empty() || label.len() > limits::MAX_LABEL_BYTES {
            return Err(ConfigError::InvalidLabel { len: label.len() });
        }
        let plain = secret.expose().as_bytes();
        if plain.is_empty() || plain.len() > limits::MAX_SECRET_BYTES {
            return Err(ConfigError::InvalidSecret { len: plain.len() });
        }
        let crypto = crypto().map_err(ConfigError::Crypto)?;
        let key = self.key_for_write(&crypto).await?;
        let mut iv = [0u8; limits::IV_BYTES as usize];
        crypto
            .get_random_values_with_u8_array(&mut iv)
            .map_err(|e| ConfigError::Crypto(format!("getRandomValues: {}", exception_name(&e))))?;
        let id_text = id.to_string();
        let iv = Uint8Array::from(&iv[..]);
        let params = gcm_params(&iv, &id_text);
        let ciphertext = crypto
            .subtle()
            .encrypt_with_object_and_u8_array(&params, &key, plain)
            .map(JsFuture::from)
            .map_err(|e| ConfigError::Crypto(format!("encrypt: {}", exception_name(&e))))?
            .await
            .map_err(|e| ConfigError::Crypto(format!("encrypt: {}", exception_name(&e))))?;
        if !ciphertext.is_instance_of::<ArrayBuffer>() {
            return Err(ConfigError::Crypto(
                "encrypt returned no ArrayBuffer".into(),
            ));
        }
        let id_js = JsValue::from_str(&id_text);
        let label = label.to_string();
        self.write("save credential", store::CREDENTIALS, |s| async move {
            let existing = s.get(&id_js).map_err(Step::Js)?;
            let count = s.count().map_err(Step::Js)?;
            let existing = await_request(&existing).await.map_err(Step::Js)?;
            let count = await_request(&count).await.map_err(Step::Js)?;
            let now = js_sys::Date::now();
            let created = if existing.is_undefined() {
                if count.as_f64().unwrap_or(f64::MAX) >= limits::MAX_CREDENTIALS as f64 {
                    return Err(Step::Refuse(ConfigError::TooMany {
                        what: "credentials",
                        max: limits::MAX_CREDENTIALS,
                    }));
                }
                now
            } else {
                field(&existing, "created_ms")
                    .as_f64()
                    .filter(|t| t.is_finite() && *t >= 0.0)
                    .unwrap_or(now)
            };
            let value = object(&[
                ("v", JsValue::from(RECORD_VERSION)),
                ("id", id_js.clone()),
                ("label", JsValue::from_str(&label)),
                ("created_ms", JsValue::from_f64(created)),
                ("iv", iv.into()),
                ("ciphertext", ciphertext),
            ]);
            s.put(&value).map_err(Step::Js)?;
            Ok(())
        })
        .await
    }

    /// The label of credential `id`, or `None` when there is no such record.
    pub async fn credential_label(&self, id: CredentialId) -> Result<Option<String>, ConfigError> {
        let key = JsValue::from_str(&id.to_string());
        let value = self
            .read_one("read credential", store::CREDENTIALS, |s| s.get(&key))
            .await?;
        if value.is_undefined() {
            return Ok(None);
        }
        read_label(&value)
            .map(Some)
            .ok_or_else(|| ConfigError::Corrupt(format!("credential {id} has no readable label")))
    }

    /// Every credential's id and label, in id order; no secret, no
    /// ciphertext. A record with an unreadable label is listed with the
    /// label `(unreadable label)`; a record whose key is not a credential id
    /// cannot be referred to by any profile and is not listed.
    pub async fn list_credentials(&self) -> Result<Vec<(CredentialId, String)>, ConfigError> {
        let values = self
            .read_one("list credentials", store::CREDENTIALS, |s| s.get_all())
            .await?;
        let values: Array = values.unchecked_into();
        let mut out = Vec::with_capacity(values.length() as usize);
        for value in values.iter() {
            let Some(id) = field(&value, "id")
                .as_string()
                .and_then(|t| t.parse::<CredentialId>().ok())
            else {
                continue;
            };
            let label = read_label(&value).unwrap_or_else(|| "(unreadable label)".into());
            out.push((id, label));
        }
        Ok(out)
    }

    /// Deletes a credential; deleting one that is not there is not an error.
    /// The wrapping key stays.
    pub async fn delete_credential(&self, id: CredentialId) -> Result<(), ConfigError> {
        let key = JsValue::from_str(&id.to_string());
        self.write("delete credential", store::CREDENTIALS, |s| async move {
            s.delete(&key).map_err(Step::Js)?;
            Ok(())
        })
        .await
    }

    /// The launch checkpoint: the only function that decrypts.
    ///
    /// `Missing` when there is no such credential record; `Unreadable` when
    /// the store cannot be read, the record is malformed, the wrapping key is
    /// gone ([`KEY_GONE`]) or damaged, or the ciphertext does not
    /// authenticate ([`UNDECRYPTABLE`]). Never generates a key.
    pub async fn resolve_credential(&self, id: CredentialId) -> Result<Secret, CredentialFailure> {
        let unreadable = |detail: String| CredentialFailure::Unreadable { detail };
        let id_text = id.to_string();
        let (record, key) = self
            .read_credential_and_key(&id_text)
            .await
            .map_err(|e| unreadable(e.to_string()))?;
        if record.is_undefined() {
            return Err(CredentialFailure::Missing);
        }
        let (iv, ciphertext) = read_sealed(&record, &id_text).map_err(|reason| {
            unreadable(format!(
                "the stored credential record is malformed ({reason}); enter the key again in Profiles"
            ))
        })?;
        if key.is_undefined() {
            return Err(unreadable(KEY_GONE.into()));
        }
        let key = usable_key(&key).ok_or_else(|| {
            unreadable(
                "the encryption key record is damaged; enter the key again in Profiles".into(),
            )
        })?;
        let crypto = crypto().map_err(|e| {
            unreadable(format!(
                "the browser's WebCrypto is not available ({e}); the credential cannot be decrypted here"
            ))
        })?;
        let params = gcm_params(&iv, &id_text);
        let plain =
            match crypto
                .subtle()
                .decrypt_with_object_and_buffer_source(&params, &key, &ciphertext)
            {
                Ok(p) => JsFuture::from(p).await,
                Err(e) => Err(e),
            }
            .map_err(|_| unreadable(UNDECRYPTABLE.into()))?;
        let plain = plain
            .dyn_into::<ArrayBuffer>()
            .map_err(|_| unreadable(UNDECRYPTABLE.into()))?;
        String::from_utf8(Uint8Array::new(&plain).to_vec())
            .map(Secret::new)
            .map_err(|_| {
                unreadable(
                    "the decrypted credential is not text; enter the key again in Profiles".into(),
                )
            })
    }

    /// The credential record and the wrapping key, read in one transaction.
    async fn read_credential_and_key(
        &self,
        id_text: &str,
    ) -> Result<(JsValue, JsValue), ConfigError> {
        let what = "read credential";
        let transaction = self.readonly(&[store::CREDENTIALS, store::KEYS])?;
        let record = transaction
            .object_store(store::CREDENTIALS)
            .and_then(|s| s.get(&JsValue::from_str(id_text)))
            .map_err(|e| self.failure(what, &e))?;
        let key = transaction
            .object_store(store::KEYS)
            .and_then(|s| s.get(&JsValue::from_str(CREDENTIAL_KEY_NAME)))
            .map_err(|e| self.failure(what, &e))?;
        let record = await_request(&record)
            .await
            .map_err(|e| self.failure(what, &e))?;
        let key = await_request(&key)
            .await
            .map_err(|e| self.failure(what, &e))?;
        let key = if key.is_undefined() {
            key
        } else {
            field(&key, "key")
        };
        Ok((record, key))
    }

    /// The wrapping key, generated and stored if there is none usable.
    async fn key_for_write(&self, crypto: &Crypto) -> Result<CryptoKey, ConfigError> {
        let name = JsValue::from_str(CREDENTIAL_KEY_NAME);
        let stored = self
            .read_one("read the encryption key", store::KEYS, |s| s.get(&name))
            .await?;
        if let Some(key) = (!stored.is_undefined())
            .then(|| usable_key(&field(&stored, "key")))
            .flatten()
        {
            return Ok(key);
        }
        let params = AesKeyGenParams::new("AES-GCM", 256);
        let usages = Array::of2(&"encrypt".into(), &"decrypt".into());
        let generated: CryptoKey = crypto
            .subtle()
            .generate_key_with_object(&params, false, &usages)
            .map(JsFuture::from)
            .map_err(|e| ConfigError::Crypto(format!("generateKey: {}", exception_name(&e))))?
            .await
            .map_err(|e| ConfigError::Crypto(format!("generateKey: {}", exception_name(&e))))?
            .dyn_into()
            .map_err(|_| ConfigError::Crypto("generateKey returned no CryptoKey".into()))?;
        let value = object(&[("name", name.clone()), ("key", generated.clone().into())]);
        self.write("store the encryption key", store::KEYS, |s| async move {
            // Another tab may have stored a key meanwhile: use that one, so
            // two writers never replace each other's key.
            let current = s.get(&name).map_err(Step::Js)?;
            let current = await_request(&current).await.map_err(Step::Js)?;
            if let Some(key) = (!current.is_undefined())
                .then(|| usable_key(&field(&current, "key")))
                .flatten()
            {
                return Ok(key);
            }
            s.put(&value).map_err(Step::Js)?;
            Ok(generated)
        })
        .await
    }
}

/// How a step inside [`ConfigStore::write`] ends early.
enum Step {
    /// A request threw or failed.
    Js(JsValue),
    /// Refused on what was read; the transaction is aborted.
    Refuse(ConfigError),
}

// ---------------------------------------------------------------------------
// Records

fn field(value: &JsValue, name: &str) -> JsValue {
    if !value.is_object() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(value, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in fields {
        // Setting a data property on a fresh plain object cannot throw.
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o.into()
}

/// A key for a message: JSON, shortened.
fn printable(key: &JsValue) -> String {
    let text = JSON::stringify(key)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| "?".into());
    truncated(text, 64)
}

fn record_version_ok(value: &JsValue) -> Result<(), String> {
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

/// Decodes and checks a stored profile value. Another owner's profile that
/// is otherwise valid is returned as it is (the caller decides to block on
/// it); reasons never quote the record's contents.
fn read_profile(value: &JsValue) -> Result<Profile, String> {
    if !value.is_object() {
        return Err("it is not a profile record".into());
    }
    record_version_ok(value)?;
    let Some(json) = field(value, "json").as_string() else {
        return Err("it has no json field".into());
    };
    if json.len() > limits::MAX_PROFILE_JSON_BYTES {
        return Err(format!(
            "it is {} bytes; the limit is {}",
            json.len(),
            limits::MAX_PROFILE_JSON_BYTES
        ));
    }
    // serde_json's messages can quote values; keep only where it failed.
    let profile: Profile = serde_json::from_str(&json).map_err(|e| {
        format!(
            "its JSON does not decode as a profile (line {}, column {})",
            e.line(),
            e.column()
        )
    })?;
    if field(value, "id").as_string() != Some(profile.id.to_string()) {
        return Err(format!(
            "it is stored under a key that is not its id {}",
            profile.id
        ));
    }
    let check = if profile.owner == OWNER {
        profile.validate()
    } else {
        Profile {
            owner: OWNER.into(),
            ..profile.clone()
        }
        .validate()
    };
    check.map_err(|e| format!("it fails validation: {}", e.0))?;
    Ok(profile)
}

/// The revision of a stored profile value, when that much is readable.
fn stored_revision(value: &JsValue) -> Option<u64> {
    let json = field(value, "json").as_string()?;
    if json.len() > limits::MAX_PROFILE_JSON_BYTES {
        return None;
    }
    serde_json::from_str::<serde_json::Value>(&json)
        .ok()?
        .get("revision")?
        .as_u64()
}

fn read_label(value: &JsValue) -> Option<String> {
    field(value, "label")
        .as_string()
        .filter(|l| !l.trim().is_empty() && l.len() <= limits::MAX_LABEL_BYTES)
}

/// The IV and ciphertext of a stored credential, checked for shape.
fn read_sealed(value: &JsValue, id_text: &str) -> Result<(Uint8Array, Object), String> {
    if !value.is_object() {
        return Err("it is not a credential record".into());
    }
    record_version_ok(value)?;
    if field(value, "id").as_string().as_deref() != Some(id_text) {
        return Err("its id is not the one it is stored under".into());
    }
    let iv = field(value, "iv")
        .dyn_into::<Uint8Array>()
        .map_err(|_| "its iv is not a Uint8Array".to_string())?;
    if iv.length() != limits::IV_BYTES {
        return Err(format!(
            "its iv is {} bytes, not {}",
            iv.length(),
            limits::IV_BYTES
        ));
    }
    let ciphertext = field(value, "ciphertext")
        .dyn_into::<ArrayBuffer>()
        .map_err(|_| "its ciphertext is not an ArrayBuffer".to_string())?;
    let len = ciphertext.byte_length();
    let max = limits::MAX_SECRET_BYTES as u32 + limits::TAG_BYTES;
    if len <= limits::TAG_BYTES || len > max {
        return Err(format!(
            "its ciphertext is {len} bytes, outside {} to {max}",
            limits::TAG_BYTES + 1
        ));
    }
    Ok((iv, ciphertext.into()))
}

/// A stored wrapping key, if it is one this store can use.
fn usable_key(value: &JsValue) -> Option<CryptoKey> {
    let key = value.clone().dyn_into::<CryptoKey>().ok()?;
    let algorithm = key.algorithm().ok()?;
    let name = Reflect::get(&algorithm, &JsValue::from_str("name"))
        .ok()?
        .as_string()?;
    let usages: Vec<String> = key.usages().iter().filter_map(|u| u.as_string()).collect();
    (key.type_() == "secret"
        && name == "AES-GCM"
        && usages.iter().any(|u| u == "encrypt")
        && usages.iter().any(|u| u == "decrypt"))
    .then_some(key)
}

fn crypto() -> Result<Crypto, String> {
    let value = Reflect::get(&js_sys::global(), &JsValue::from_str("crypto"))
        .map_err(|_| "crypto is not reachable".to_string())?;
    let crypto: Crypto = value
        .dyn_into()
        .map_err(|_| "this browser context has no crypto".to_string())?;
    let subtle = Reflect::get(&crypto, &JsValue::from_str("subtle")).unwrap_or(JsValue::UNDEFINED);
    if !subtle.is_instance_of::<SubtleCrypto>() {
        return Err("crypto.subtle is missing (not a secure context)".into());
    }
    Ok(crypto)
}

/// AES-GCM parameters: the IV and the credential id as additional data.
fn gcm_params(iv: &Uint8Array, id_text: &str) -> AesGcmParams {
    let params = AesGcmParams::new("AES-GCM", iv);
    params.set_additional_data_u8_array(&Uint8Array::from(id_text.as_bytes()));
    params
}

// ---------------------------------------------------------------------------
// Schema

fn migrate(database: &IdbDatabase, old_version: u32) -> Result<(), JsValue> {
    for version in old_version + 1..=SCHEMA_VERSION {
        migrate_step(database, version)?;
    }
    Ok(())
}

fn migrate_step(database: &IdbDatabase, to_version: u32) -> Result<(), JsValue> {
    let keyed = |path: &str| {
        let params = IdbObjectStoreParameters::new();
        params.set_key_path(&JsValue::from_str(path));
        params
    };
    match to_version {
        // Shipped: never edit.
        1 => {
            database.create_object_store_with_optional_parameters(store::PROFILES, &keyed("id"))?;
            database
                .create_object_store_with_optional_parameters(store::CREDENTIALS, &keyed("id"))?;
            database.create_object_store_with_optional_parameters(store::KEYS, &keyed("name"))?;
            Ok(())
        }
        _ => Err(JsValue::from_str(&format!(
            "SCHEMA_VERSION has no migration step {to_version}"
        ))),
    }
}

// ---------------------------------------------------------------------------
// Awaiting IndexedDB

fn promise() -> (Promise, Function, Function) {
    let mut slots = None;
    let promise = Promise::new(&mut |resolve, reject| slots = Some((resolve, reject)));
    let (resolve, reject) = slots.expect("the Promise executor runs synchronously");
    (promise, resolve, reject)
}

/// One request's outcome. Awaiting it yields to IndexedDB only, so the
/// transaction stays active for requests issued after it.
async fn await_request(request: &IdbRequest) -> Result<JsValue, JsValue> {
    let (promise, resolve, reject) = promise();
    let on_success = {
        let request = request.clone();
        Closure::<dyn FnMut()>::new(move || {
            let _ = resolve.call1(
                &JsValue::UNDEFINED,
                &request.result().unwrap_or(JsValue::UNDEFINED),
            );
        })
    };
    let on_error = {
        let request = request.clone();
        Closure::<dyn FnMut()>::new(move || {
            let error = request
                .error()
                .ok()
                .flatten()
                .map(JsValue::from)
                .unwrap_or_else(|| JsValue::from_str("AbortError"));
            let _ = reject.call1(&JsValue::UNDEFINED, &error);
        })
    };
    request.set_onsuccess(Some(on_success.as_ref().unchecked_ref()));
    request.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    let result = JsFuture::from(promise).await;
    request.set_onsuccess(None);
    request.set_onerror(None);
    result
}

/// Resolves to whether a transaction committed (`complete`) or not (`abort`).
struct TxWatch {
    future: JsFuture,
    transaction: IdbTransaction,
    _complete: Closure<dyn FnMut()>,
    _abort: Closure<dyn FnMut()>,
}

impl TxWatch {
    fn new(transaction: &IdbTransaction) -> TxWatch {
        let (promise, resolve, _) = promise();
        let done = resolve.clone();
        let complete = Closure::<dyn FnMut()>::new(move || {
            let _ = done.call1(&JsValue::UNDEFINED, &JsValue::TRUE);
        });
        let abort = Closure::<dyn FnMut()>::new(move || {
            let _ = resolve.call1(&JsValue::UNDEFINED, &JsValue::FALSE);
        });
        transaction.set_oncomplete(Some(complete.as_ref().unchecked_ref()));
        transaction.set_onabort(Some(abort.as_ref().unchecked_ref()));
        TxWatch {
            future: JsFuture::from(promise),
            transaction: transaction.clone(),
            _complete: complete,
            _abort: abort,
        }
    }
}

impl std::future::IntoFuture for TxWatch {
    type Output = bool;
    type IntoFuture = std::pin::Pin<Box<dyn std::future::Future<Output = bool>>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let committed = self.future.await.map(|v| v.is_truthy()).unwrap_or(false);
            self.transaction.set_oncomplete(None);
            self.transaction.set_onabort(None);
            drop(self._complete);
            drop(self._abort);
            committed
        })
    }
}
