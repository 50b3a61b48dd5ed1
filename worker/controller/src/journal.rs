//! The IndexedDB journal: database name, schema version, every migration, and
//! the one place that reads and writes journal records.
//!
//! # Schema (version 2)
//!
//! Every value that holds a [`JournalEntry`] is
//! `{ position, <natural key fields>, json }`, where `json` is the entry as
//! [`lifeline_core::schema::encode`] writes it (with `"v": 1`). The store is
//! chosen by the record's kind:
//!
//! | store | key | holds |
//! |---|---|---|
//! | `commands` | `command_id` | `CommandAdmitted` entries |
//! | `events` | `[command_id, seq]` | `Event` entries |
//! | `evidence` | `evidence_id` (the error stamp) | `Recovery` entries |
//! | `records` | `position` | every other record kind |
//! | `artifacts` | `digest` (hex) | `{ digest, data }`: output named by `ArtifactStored` |
//! | `snapshots` | `position` | `{ position, json }`: projection snapshots, newest [`SNAPSHOTS_KEPT`] kept |
//! | `meta` | `key` | `{ key, ... }`: the writer epoch (`{ key: "writer", epoch }`) and the journal's identity (`{ key: "id", id }`, stamped by the first claim) |
//! | `quarantine` | auto-increment | records that could not be read, moved aside with the reason |
//!
//! `commands`, `events` and `evidence` have an index `position`, so the tail
//! after position P is read with `getAll(IDBKeyRange.lowerBound(P, true),
//! READ_CHUNK)` on the index (and on `records` itself) and merged by
//! position — no per-record cursor stepping.
//!
//! Migrations run inside the `versionchange` transaction, one step per
//! version, so a database at any older version reaches the current one by the
//! same path a fresh install takes. A database written by a *newer* build is
//! never opened by this one: IndexedDB refuses with a `VersionError`, which we
//! turn into an instruction for the user instead of misreading newer records.
//! Schema 1 records (no `position` field) are left where they are: they are
//! outside the `position` index and therefore outside the journal.
//!
//! # Writes and durability
//!
//! [`Journal::write_batch`] puts a whole [`PersistBatch`] in one readwrite
//! transaction and resolves only on its `complete` event: that is the
//! acknowledgement the core gets. The same transaction reads `meta` `writer`
//! first; if another controller claimed the journal since (a newer
//! [`WriterEpoch`]), the read's success handler aborts the transaction and
//! nothing of the batch is kept ([`JournalError::Superseded`]). The fence read
//! and the puts are issued together, without a round trip in between.
//!
//! The durability each transaction asks for ([`durability_for`]):
//!
//! | batch holds | durability | why |
//! |---|---|---|
//! | only `Event`s with stdout/stderr bodies and `ArtifactStored` (+ their artifacts) | `relaxed` | output: losing the tail of it to an OS crash or power loss is acceptable, and it is most of the write volume |
//! | anything else: admissions, dispatch exposure, ACKs, refusals, terminal and other events, outcome changes, runtime lifecycle, cancel/termination requests, recovery evidence, sessions and turns, any kind added later | `strict` | these decide what may be replayed and what the user is told; they must survive power loss once acknowledged |
//! | `claim_writer`, `quarantine` | `strict` | the fence and moving records aside |
//! | `put_snapshot` | `relaxed` | derived data: a lost snapshot falls back to the previous one or to replay |
//!
//! Chromium commits transactions to its backing store in order, so a strict
//! commit also makes every relaxed one before it durable; a crash can only
//! cut off relaxed output at the journal's tail, never leave a hole.
//!
//! # Reads
//!
//! Every value read is decoded with [`lifeline_core::schema::decode`] and
//! checked against the fields it is stored under (position, natural key,
//! store for its kind). A value that fails is reported as [`Quarantined`] and
//! skipped; the rest loads. [`Journal::quarantine`] moves such values into the
//! `quarantine` store. Reasons never quote record contents.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

use js_sys::{Array, Function, Object, Promise, Reflect, JSON};
use lifeline_core::phrase::{JournalFault, Phrase};
use lifeline_core::schema::{decode, encode, limits, SchemaError};
use lifeline_core::{
    Digest, JournalEntry, JournalRecord, PersistBatch, ProjectionSnapshot, RetainedBody, Schema,
};
use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DomException, Event, IdbDatabase, IdbFactory, IdbIndexParameters, IdbKeyRange, IdbObjectStore,
    IdbObjectStoreParameters, IdbRequest, IdbTransaction,
};

pub use crate::durability::Durability;
use crate::durability::{self};
use crate::idb::{open_database, OpenError};

pub const DATABASE_NAME: &str = "lifeline";

/// The version this build writes. Raise it together with a new arm in
/// [`migrate_step`]; never edit an arm that has shipped.
pub const SCHEMA_VERSION: u32 = 2;

/// Values read per `getAll` request when reading the tail.
pub const READ_CHUNK: u32 = 10_000;

/// Snapshots kept; older ones are deleted when a new one is written.
pub const SNAPSHOTS_KEPT: usize = 2;

/// Object stores and indexes.
pub mod store {
    /// `CommandAdmitted` entries, keyed by command id. (v1)
    pub const COMMANDS: &str = "commands";
    /// `Event` entries, keyed by `[command id, sequence]`. (v1)
    pub const EVENTS: &str = "events";
    /// Content-addressed output artifacts, keyed by SHA-256 digest (hex). (v1)
    pub const ARTIFACTS: &str = "artifacts";
    /// Projection snapshots, keyed by journal position. (v1)
    pub const SNAPSHOTS: &str = "snapshots";
    /// `Recovery` entries, keyed by evidence id (the error stamp). (v1)
    pub const EVIDENCE: &str = "evidence";
    /// Small facts about the journal itself (the writer epoch). (v1)
    pub const META: &str = "meta";
    /// Every other journal entry, keyed by position. (v2)
    pub const RECORDS: &str = "records";
    /// Values that could not be read, moved aside (auto-increment key). (v2)
    pub const QUARANTINE: &str = "quarantine";

    /// Index on `position` in `commands`, `events` and `evidence`. (v2)
    pub const POSITION_INDEX: &str = "position";

    pub const ALL: [&str; 8] = [
        COMMANDS, EVENTS, ARTIFACTS, SNAPSHOTS, EVIDENCE, META, RECORDS, QUARANTINE,
    ];
    /// Stores that hold journal entries.
    pub const ENTRIES: [&str; 4] = [COMMANDS, EVENTS, EVIDENCE, RECORDS];
}

/// The `meta` key of the writer fence.
const WRITER_KEY: &str = "writer";
/// The `meta` key (and field) of the journal's identity: `{ key: "id", id }`.
const ID_KEY: &str = "id";

/// Largest integer a JavaScript number carries exactly.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A claim on the right to write, from [`Journal::claim_writer`]. Every
/// write names it; a write under an older claim is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WriterEpoch(pub u64);

impl fmt::Display for WriterEpoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "writer epoch {}", self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalError {
    /// IndexedDB is missing (e.g. some private modes), refused to open, or
    /// the browser closed the connection.
    Unavailable(String),
    /// The stored database was written by a newer build.
    NewerSchema,
    /// Another tab holds the database open at an older version.
    Blocked,
    /// A read or write failed; the message names the operation.
    Operation(String),
    /// The origin's storage quota is full. Nothing recorded was lost.
    QuotaExceeded,
    /// Another controller claimed the journal; this one must stop writing.
    Superseded,
    /// Another tab is upgrading the database; this connection was closed.
    VersionChange,
    /// Something the journal needs to work (not a single record) is unreadable.
    Corrupt(String),
    /// This build refused to write a record that fails its own checks (a bug).
    Invalid(String),
    /// [`Journal::close`] was called.
    Closed,
    /// The database was deleted while open (site data cleared, or
    /// `deleteDatabase` from another context): what it held is gone.
    Removed,
    /// The browser closed the connection by itself (site data cleared, or a
    /// disk error); whether the data is still there is not known yet.
    ConnectionLost,
    /// The `meta` `writer` record cannot be read, so no write can be fenced;
    /// the rest of the journal may still be readable.
    WriterUnreadable,
}

impl JournalError {
    /// The structured phrase for this error; the page words it.
    pub fn fault(&self) -> JournalFault {
        match self {
            JournalError::Unavailable(detail) => JournalFault::Unavailable {
                detail: detail.clone(),
            },
            JournalError::NewerSchema => JournalFault::NewerSchema {
                schema: SCHEMA_VERSION,
            },
            JournalError::Blocked => JournalFault::Blocked,
            JournalError::Operation(detail) => JournalFault::Operation {
                detail: detail.clone(),
            },
            JournalError::QuotaExceeded => JournalFault::QuotaExceeded,
            JournalError::Superseded => JournalFault::Superseded,
            JournalError::VersionChange => JournalFault::VersionChange,
            JournalError::Corrupt(detail) => JournalFault::Corrupt {
                detail: detail.clone(),
            },
            JournalError::Invalid(detail) => JournalFault::Invalid {
                detail: detail.clone(),
            },
            JournalError::Closed => JournalFault::Closed,
            JournalError::Removed => JournalFault::Removed,
            JournalError::ConnectionLost => JournalFault::ConnectionLost,
            JournalError::WriterUnreadable => JournalFault::WriterUnreadable,
        }
    }
}

impl fmt::Display for JournalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fault().fmt(f)
    }
}

impl std::error::Error for JournalError {}

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

/// What [`Journal::load`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// The newest readable snapshot.
    pub snapshot: Option<ProjectionSnapshot>,
    /// Set when a newer snapshot was unreadable: which one was used instead,
    /// or that the journal must be replayed from the start.
    pub snapshot_note: Option<Phrase>,
    /// Readable entries after the snapshot's position (or all), by position.
    pub tail: Vec<JournalEntry>,
    /// Values that were skipped, unreadable snapshots included.
    pub quarantined: Vec<Quarantined>,
    /// The highest position the journal holds, readable or not (or the
    /// snapshot's): the next batch must start after it.
    pub last_position: u64,
}

/// What [`Journal::entries_after`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tail {
    pub entries: Vec<JournalEntry>,
    pub quarantined: Vec<Quarantined>,
}

impl Tail {
    /// The position to ask after next time (`after` when nothing was found).
    pub fn last_position(&self, after: u64) -> u64 {
        self.entries
            .iter()
            .map(|e| e.position)
            .chain(self.quarantined.iter().filter_map(|q| q.position))
            .fold(after, u64::max)
    }
}

/// The durability a persist batch is written with (see the module table).
pub fn durability_for(batch: &PersistBatch) -> Durability {
    let output_only = batch.entries.iter().all(|e| match &e.record {
        JournalRecord::Event(event) => {
            matches!(
                event.body,
                RetainedBody::Stdout(_) | RetainedBody::Stderr(_)
            )
        }
        JournalRecord::ArtifactStored { .. } => true,
        _ => false,
    });
    if output_only {
        Durability::Relaxed
    } else {
        Durability::Strict
    }
}

/// The store a record kind lives in.
pub fn store_for(record: &JournalRecord) -> &'static str {
    match record {
        JournalRecord::CommandAdmitted(_) => store::COMMANDS,
        JournalRecord::Event(_) => store::EVENTS,
        JournalRecord::Recovery(_) => store::EVIDENCE,
        _ => store::RECORDS,
    }
}

// ---------------------------------------------------------------------------
// Connection

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Open,
    /// Closed by [`Journal::close`].
    Closed,
    /// Closed by us because another connection asked for a newer version.
    VersionChange,
    /// Closed by the browser (storage cleared, disk error).
    Lost,
    /// Deleted under us: a `versionchange` without a new version.
    Removed,
}

type OnLost = Box<dyn Fn(JournalError)>;

struct Shared {
    state: Cell<State>,
    on_version_change: RefCell<Option<Box<dyn Fn()>>>,
    on_lost: RefCell<Option<OnLost>>,
    /// The journal's identity, known after a claim (`meta` `journal`).
    id: RefCell<Option<String>>,
}

struct Inner {
    database: IdbDatabase,
    shared: Rc<Shared>,
    keys: Keys,
    /// Test hook: fail the next write after this many puts.
    fault: Cell<Option<usize>>,
    _on_version_change: Closure<dyn FnMut(Event)>,
    _on_close: Closure<dyn FnMut(Event)>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The handlers are about to be freed; a connection left open without
        // them would block another tab's upgrade forever.
        self.database.set_onversionchange(None);
        self.database.set_onclose(None);
        self.database.close();
    }
}

/// Property names, made into JS strings once.
struct Keys {
    position: JsValue,
    json: JsValue,
    command_id: JsValue,
    seq: JsValue,
    evidence_id: JsValue,
    digest: JsValue,
    data: JsValue,
    key: JsValue,
    epoch: JsValue,
}

impl Keys {
    fn new() -> Keys {
        let s = JsValue::from_str;
        Keys {
            position: s("position"),
            json: s("json"),
            command_id: s("command_id"),
            seq: s("seq"),
            evidence_id: s("evidence_id"),
            digest: s("digest"),
            data: s("data"),
            key: s("key"),
            epoch: s("epoch"),
        }
    }
}

/// An open journal database. Cheap to clone; the connection closes when the
/// last clone is dropped or [`Journal::close`] is called.
#[derive(Clone)]
pub struct Journal {
    inner: Rc<Inner>,
}

impl fmt::Debug for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journal")
            .field("name", &self.inner.database.name())
            .field("state", &self.inner.shared.state.get())
            .finish()
    }
}

fn factory() -> Result<IdbFactory, JournalError> {
    let value = Reflect::get(&js_sys::global(), &JsValue::from_str("indexedDB"))
        .map_err(|_| JournalError::Unavailable("indexedDB is not reachable".into()))?;
    if value.is_undefined() || value.is_null() {
        return Err(JournalError::Unavailable(
            "this browser context has no IndexedDB".into(),
        ));
    }
    Ok(value.unchecked_into())
}

/// The name (and, if short, the message) of a thrown DOMException or Error.
fn exception_name(error: &JsValue) -> String {
    if let Some(e) = error.dyn_ref::<DomException>() {
        return e.name();
    }
    if let Some(e) = error.dyn_ref::<js_sys::Error>() {
        return String::from(e.name());
    }
    error.as_string().unwrap_or_else(|| "unknown error".into())
}

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
        let mut message = message;
        if message.len() > 200 {
            let mut end = 200;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push('…');
        }
        format!("{name}: {message}")
    }
}

impl Journal {
    /// Opens (creating or migrating) the journal database `name`.
    ///
    /// Fails with [`JournalError::NewerSchema`] for a database of a newer
    /// build, [`JournalError::Blocked`] as soon as another connection at an
    /// older version refuses to close (the open is then abandoned: if it
    /// completes later the connection is closed at once), and
    /// [`JournalError::Unavailable`] when IndexedDB is missing or a
    /// migration failed (the database is then left as it was).
    pub async fn open(name: &str) -> Result<Journal, JournalError> {
        let upgrade = |database: &IdbDatabase, transaction: &IdbTransaction, old: u32| {
            migrate(database, transaction, old).map_err(|e| exception_message(&e))
        };
        match open_database(&factory()?, name, SCHEMA_VERSION, upgrade).await {
            Ok(database) => Ok(Journal::from_database(database)),
            Err(OpenError::Blocked) => Err(JournalError::Blocked),
            Err(OpenError::Upgrade { old, detail }) => Err(JournalError::Unavailable(format!(
                "migration from schema {old} failed: {detail}"
            ))),
            Err(OpenError::Failed(error)) => Err(match exception_name(&error).as_str() {
                "VersionError" => JournalError::NewerSchema,
                "QuotaExceededError" => JournalError::QuotaExceeded,
                _ => JournalError::Unavailable(exception_message(&error)),
            }),
        }
    }

    fn from_database(database: IdbDatabase) -> Journal {
        let shared = Rc::new(Shared {
            state: Cell::new(State::Open),
            on_version_change: RefCell::new(None),
            on_lost: RefCell::new(None),
            id: RefCell::new(None),
        });
        let on_version_change = {
            let shared = shared.clone();
            let database = database.clone();
            Closure::<dyn FnMut(Event)>::new(move |event: Event| {
                // Close first: the other tab's upgrade (or deletion) waits
                // for us. Running transactions still finish.
                database.close();
                // A deletion asks for no new version: that tells an upgrade
                // by a newer build (the data stays) from a wipe (it goes).
                let deleted = event
                    .dyn_ref::<web_sys::IdbVersionChangeEvent>()
                    .is_some_and(|e| e.new_version().is_none());
                let (state, error) = if deleted {
                    (State::Removed, JournalError::Removed)
                } else {
                    (State::VersionChange, JournalError::VersionChange)
                };
                shared.state.set(state);
                if let Some(f) = shared.on_version_change.borrow().as_ref() {
                    f();
                }
                if let Some(f) = shared.on_lost.borrow().as_ref() {
                    f(error);
                }
            })
        };
        let on_close = {
            let shared = shared.clone();
            Closure::<dyn FnMut(Event)>::new(move |_| {
                if shared.state.get() != State::Open {
                    return;
                }
                shared.state.set(State::Lost);
                if let Some(f) = shared.on_lost.borrow().as_ref() {
                    f(JournalError::ConnectionLost);
                }
            })
        };
        database.set_onversionchange(Some(on_version_change.as_ref().unchecked_ref()));
        database.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        Journal {
            inner: Rc::new(Inner {
                database,
                shared,
                keys: Keys::new(),
                fault: Cell::new(None),
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
    /// [`JournalError::VersionChange`]. Replaces an earlier callback.
    pub fn on_version_change(&self, f: impl Fn() + 'static) {
        *self.inner.shared.on_version_change.borrow_mut() = Some(Box::new(f));
    }

    /// Called once when the connection is lost for good: with
    /// [`JournalError::VersionChange`] (a newer build upgrades; the data
    /// stays), [`JournalError::Removed`] (the database was deleted) or
    /// [`JournalError::ConnectionLost`] (the browser closed it: see
    /// [`database_exists`] for whether the data is gone). Every later call
    /// returns that error. Replaces an earlier callback.
    pub fn on_lost(&self, f: impl Fn(JournalError) + 'static) {
        *self.inner.shared.on_lost.borrow_mut() = Some(Box::new(f));
    }

    /// The journal's identity (a random id stamped by the first claim),
    /// once [`Journal::claim_writer`] or [`Journal::repair_writer`] read it;
    /// `None` before, or if its record is unreadable.
    pub fn id(&self) -> Option<String> {
        self.inner.shared.id.borrow().clone()
    }

    /// Closes the connection (after running transactions finish).
    pub fn close(&self) {
        if self.inner.shared.state.get() == State::Open {
            self.inner.shared.state.set(State::Closed);
        }
        self.inner.database.close();
    }

    fn usable(&self) -> Result<(), JournalError> {
        match self.inner.shared.state.get() {
            State::Open => Ok(()),
            State::Closed => Err(JournalError::Closed),
            State::VersionChange => Err(JournalError::VersionChange),
            State::Lost => Err(JournalError::ConnectionLost),
            State::Removed => Err(JournalError::Removed),
        }
    }

    /// Maps a thrown exception or an abort reason to an error, in the light
    /// of what happened to the connection.
    fn failure(&self, what: &str, error: &JsValue) -> JournalError {
        self.usable()
            .err()
            .unwrap_or_else(|| match exception_name(error).as_str() {
                "QuotaExceededError" => JournalError::QuotaExceeded,
                _ => JournalError::Operation(format!("{what}: {}", exception_message(error))),
            })
    }

    fn readonly(&self, stores: &[&str]) -> Result<IdbTransaction, JournalError> {
        self.usable()?;
        let names: Array = stores.iter().map(|s| JsValue::from_str(s)).collect();
        self.inner
            .database
            .transaction_with_str_sequence(&names)
            .map_err(|e| self.failure("begin read", &e))
    }

    fn readwrite(
        &self,
        stores: &[&str],
        durability: Durability,
    ) -> Result<IdbTransaction, JournalError> {
        self.usable()?;
        durability::readwrite(&self.inner.database, stores, durability)
            .map_err(|e| self.failure("begin write", &e))
    }

    /// Waits for a readwrite transaction to end and names the failure.
    async fn finish(
        &self,
        what: &str,
        transaction: &IdbTransaction,
        watch: TxWatch,
        fence: Option<&Fence>,
    ) -> Result<(), JournalError> {
        let committed = watch.await;
        if fence.is_some_and(Fence::superseded) {
            return Err(JournalError::Superseded);
        }
        if fence.is_some_and(Fence::unreadable) {
            return Err(JournalError::WriterUnreadable);
        }
        if committed {
            return Ok(());
        }
        let error = transaction
            .error()
            .map(JsValue::from)
            .unwrap_or_else(|| JsValue::from_str("AbortError"));
        Err(self.failure(&format!("{what} was aborted"), &error))
    }

    // -----------------------------------------------------------------------
    // Writing

    /// Claims the right to write: one strict transaction on `meta` `writer`
    /// that raises the epoch by one and returns it. Every earlier claim's
    /// writes fail with [`JournalError::Superseded`] from now on.
    pub async fn claim_writer(&self) -> Result<WriterEpoch, JournalError> {
        let transaction = self.readwrite(&[store::META], Durability::Strict)?;
        let watch = TxWatch::new(&transaction);
        let meta =
            object_store(&transaction, store::META).map_err(|e| self.failure("claim", &e))?;
        let keys = &self.inner.keys;
        let current = match meta.get(&JsValue::from_str(WRITER_KEY)) {
            Ok(request) => await_request(&request).await,
            Err(e) => Err(e),
        };
        // Only IndexedDB was awaited: the transaction is still active here.
        let next = match current.as_ref().map(|v| epoch_of(v, keys)) {
            Ok(Ok(current)) => current.checked_add(1).filter(|n| *n <= MAX_SAFE_INTEGER),
            Ok(Err(())) | Err(_) => None,
        };
        let Some(next) = next else {
            let _ = transaction.abort();
            let _ = watch.await;
            return Err(match current {
                Err(e) => self.failure("claim", &e),
                Ok(_) => JournalError::WriterUnreadable,
            });
        };
        self.put_writer(&transaction, watch, &meta, next).await
    }

    /// Puts `epoch` as the writer record and stamps the journal's identity
    /// if it has none, in `transaction`; then waits for it to commit.
    async fn put_writer(
        &self,
        transaction: &IdbTransaction,
        watch: TxWatch,
        meta: &IdbObjectStore,
        epoch: u64,
    ) -> Result<WriterEpoch, JournalError> {
        let keys = &self.inner.keys;
        let value = Object::new();
        set(&value, &keys.key, &JsValue::from_str(WRITER_KEY));
        set(&value, &keys.epoch, &JsValue::from_f64(epoch as f64));
        if let Err(e) = meta.put(&value) {
            let _ = transaction.abort();
            let _ = watch.await;
            return Err(self.failure("claim", &e));
        }
        let stored = match meta.get(&JsValue::from_str(ID_KEY)) {
            Ok(request) => await_request(&request).await.ok(),
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
            if let Ok(bytes) = crate::web::random_bytes::<16>() {
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
        self.finish("claim", transaction, watch, None).await?;
        *self.inner.shared.id.borrow_mut() = id;
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
        let transaction = self.readwrite(&[store::META, store::QUARANTINE], Durability::Strict)?;
        let watch = TxWatch::new(&transaction);
        let keys = &self.inner.keys;
        // Only IndexedDB is awaited in here: the transaction stays active.
        let read = async {
            let meta = object_store(&transaction, store::META)?;
            let current = await_request(&meta.get(&JsValue::from_str(WRITER_KEY))?).await?;
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
                    object_store(&transaction, store::QUARANTINE)?.add(&moved)?;
                    Some(at.clamp(1, MAX_SAFE_INTEGER))
                }
            };
            Ok::<_, JsValue>((meta, next))
        };
        let (meta, next) = match read.await {
            Ok((meta, Some(next))) => (meta, next),
            failed => {
                let _ = transaction.abort();
                let _ = watch.await;
                return Err(match failed {
                    Err(e) => self.failure("repair", &e),
                    Ok(_) => JournalError::WriterUnreadable,
                });
            }
        };
        self.put_writer(&transaction, watch, &meta, next).await
    }

    /// Writes one persist batch in one transaction; resolves when its
    /// `complete` event fired. Nothing of the batch is kept when this fails.
    pub async fn write_batch(
        &self,
        batch: &PersistBatch,
        epoch: WriterEpoch,
    ) -> Result<(), JournalError> {
        self.usable()?;
        // Assert before writing: a batch that fails its own checks is a bug.
        batch.validate().map_err(JournalError::Invalid)?;
        let keys = &self.inner.keys;
        let mut rows: Vec<(&'static str, JsValue)> =
            Vec::with_capacity(batch.entries.len() + batch.artifacts.len());
        for entry in &batch.entries {
            rows.push(entry_row(entry, keys)?);
        }
        for artifact in &batch.artifacts {
            let value = Object::new();
            set(
                &value,
                &keys.digest,
                &JsValue::from_str(&artifact.digest.to_string()),
            );
            set(&value, &keys.data, &JsValue::from_str(&artifact.data));
            rows.push((store::ARTIFACTS, value.into()));
        }
        let mut names: Vec<&str> = vec![store::META];
        for (name, _) in &rows {
            if !names.contains(name) {
                names.push(name);
            }
        }

        // From here to `finish` nothing but IndexedDB requests is issued.
        let transaction = self.readwrite(&names, durability_for(batch))?;
        let watch = TxWatch::new(&transaction);
        let fence = match Fence::issue(&transaction, epoch, keys, true) {
            Ok(fence) => fence,
            Err(e) => return self.abandon(&transaction, watch, "write", &e).await,
        };
        let mut stores: Vec<(&str, IdbObjectStore)> = Vec::with_capacity(names.len());
        for name in &names {
            match object_store(&transaction, name) {
                Ok(s) => stores.push((name, s)),
                Err(e) => return self.abandon(&transaction, watch, "write", &e).await,
            }
        }
        let fault = self.inner.fault.take();
        for (i, (name, value)) in rows.iter().enumerate() {
            if fault == Some(i) {
                inject_fault(&stores[0].1, keys);
            }
            let store = &stores
                .iter()
                .find(|(n, _)| n == name)
                .expect("store in scope")
                .1;
            if let Err(e) = store.put(value) {
                return self.abandon(&transaction, watch, "write", &e).await;
            }
        }
        if fault.is_some_and(|f| f >= rows.len()) {
            inject_fault(&stores[0].1, keys);
        }
        self.finish("write", &transaction, watch, Some(&fence))
            .await
    }

    async fn abandon(
        &self,
        transaction: &IdbTransaction,
        watch: TxWatch,
        what: &str,
        error: &JsValue,
    ) -> Result<(), JournalError> {
        let _ = transaction.abort();
        let _ = watch.await;
        Err(self.failure(what, error))
    }

    /// Test hook: the next [`Journal::write_batch`] makes a request fail
    /// inside its transaction after `puts` puts (a duplicate `add` in
    /// `meta`, which fails with `ConstraintError` and aborts it).
    #[doc(hidden)]
    pub fn fail_next_write_after(&self, puts: usize) {
        self.inner.fault.set(Some(puts));
    }

    /// Writes a projection snapshot (relaxed) and deletes all but the newest
    /// [`SNAPSHOTS_KEPT`].
    pub async fn put_snapshot(
        &self,
        snapshot: &ProjectionSnapshot,
        epoch: WriterEpoch,
    ) -> Result<(), JournalError> {
        self.usable()?;
        let json = encode(snapshot).map_err(|e| JournalError::Invalid(e.to_string()))?;
        if json.len() > limits::MAX_SNAPSHOT_BYTES {
            // It could never be read back; replay from the entries instead.
            return Err(JournalError::Invalid(format!(
                "the snapshot at position {} is {} bytes, above the {} a record may have",
                snapshot.position,
                json.len(),
                limits::MAX_SNAPSHOT_BYTES
            )));
        }
        let position = safe_number(snapshot.position)?;
        let json = String::from_utf8(json).map_err(|e| JournalError::Invalid(e.to_string()))?;
        let keys = &self.inner.keys;
        let value = Object::new();
        set(&value, &keys.position, &position);
        set(&value, &keys.json, &JsValue::from_str(&json));

        let transaction = self.readwrite(&[store::SNAPSHOTS, store::META], Durability::Relaxed)?;
        let watch = TxWatch::new(&transaction);
        let fence = match Fence::issue(&transaction, epoch, keys, false) {
            Ok(fence) => fence,
            Err(e) => return self.abandon(&transaction, watch, "snapshot", &e).await,
        };
        let snapshots = match object_store(&transaction, store::SNAPSHOTS) {
            Ok(s) => s,
            Err(e) => return self.abandon(&transaction, watch, "snapshot", &e).await,
        };
        if let Err(e) = snapshots.put(&value) {
            return self.abandon(&transaction, watch, "snapshot", &e).await;
        }
        // If the fence aborted the transaction this request fails, and
        // `finish` reports why.
        if let Ok(request) = snapshots.get_all_keys() {
            if let Ok(stored) = await_request(&request).await {
                let stored: Array = stored.unchecked_into();
                let n = stored.length() as usize;
                for old in stored.iter().take(n.saturating_sub(SNAPSHOTS_KEPT)) {
                    let _ = snapshots.delete(&old);
                }
            }
        }
        self.finish("snapshot", &transaction, watch, Some(&fence))
            .await
    }

    /// Moves the stored values named by `items` into `quarantine` (with the
    /// reason) and deletes them where they were, in one strict transaction.
    /// Values already gone are skipped.
    pub async fn quarantine(
        &self,
        items: &[Quarantined],
        epoch: WriterEpoch,
    ) -> Result<(), JournalError> {
        self.usable()?;
        let mut names: Vec<&str> = vec![store::META, store::QUARANTINE];
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
        let keys = &self.inner.keys;
        let transaction = self.readwrite(&names, Durability::Strict)?;
        let watch = TxWatch::new(&transaction);
        let fence = match Fence::issue(&transaction, epoch, keys, false) {
            Ok(fence) => fence,
            Err(e) => return self.abandon(&transaction, watch, "quarantine", &e).await,
        };
        let target = match object_store(&transaction, store::QUARANTINE) {
            Ok(s) => s,
            Err(e) => return self.abandon(&transaction, watch, "quarantine", &e).await,
        };
        let mut reads = Vec::with_capacity(items.len());
        for (item, key) in items.iter().zip(&parsed) {
            let request = object_store(&transaction, &item.store).and_then(|s| s.get(key));
            match request {
                Ok(request) => reads.push((item, key, request)),
                Err(e) => return self.abandon(&transaction, watch, "quarantine", &e).await,
            }
        }
        for (item, key, request) in reads {
            let Ok(value) = await_request(&request).await else {
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
            let source = object_store(&transaction, &item.store);
            let result = target
                .add(&moved)
                .and_then(|_| source.and_then(|s| s.delete(key)));
            if let Err(e) = result {
                return self.abandon(&transaction, watch, "quarantine", &e).await;
            }
        }
        self.finish("quarantine", &transaction, watch, Some(&fence))
            .await
    }

    // -----------------------------------------------------------------------
    // Reading

    /// The newest readable snapshot and every entry after it.
    pub async fn load(&self) -> Result<Loaded, JournalError> {
        let mut names = vec![store::SNAPSHOTS];
        names.extend(store::ENTRIES);
        let transaction = self.readonly(&names)?;
        let keys = &self.inner.keys;
        let snapshots =
            object_store(&transaction, store::SNAPSHOTS).map_err(|e| self.failure("load", &e))?;
        let stored: Array = request_on(snapshots.get_all_keys(), self, "load snapshots")
            .await?
            .unchecked_into();
        let mut snapshot = None;
        let mut quarantined = Vec::new();
        let mut unreadable = Vec::new();
        for key in stored.iter().collect::<Vec<_>>().into_iter().rev() {
            let value = request_on(snapshots.get(&key), self, "load snapshot").await?;
            match read_snapshot(&key, &value, keys) {
                Ok(s) => {
                    snapshot = Some(s);
                    break;
                }
                Err(q) => {
                    unreadable.push(q.position.unwrap_or(0));
                    quarantined.push(q);
                }
            }
        }
        let snapshot_note = match (&snapshot, unreadable.as_slice()) {
            (_, []) => None,
            (Some(s), bad) => Some(Phrase::SnapshotFallback {
                bad: bad[0],
                loaded: s.position,
            }),
            (None, bad) => Some(Phrase::SnapshotsUnreadable {
                count: u32::try_from(bad.len()).unwrap_or(u32::MAX),
                newest: bad[0],
            }),
        };
        let after = snapshot
            .as_ref()
            .map_or(0, |s: &ProjectionSnapshot| s.position);
        let tail = self.read_tail(&transaction, after, None).await?;
        quarantined.extend(tail.quarantined);
        let last_position = tail
            .entries
            .iter()
            .map(|e| e.position)
            .chain(
                quarantined
                    .iter()
                    .filter(|q| q.store != store::SNAPSHOTS)
                    .filter_map(|q| q.position),
            )
            .fold(after, u64::max);
        Ok(Loaded {
            snapshot,
            snapshot_note,
            tail: tail.entries,
            quarantined,
            last_position,
        })
    }

    /// Up to `limit` entries after position `after`, by position, with the
    /// unreadable values among them (for a follower filling a gap).
    pub async fn entries_after(&self, after: u64, limit: usize) -> Result<Tail, JournalError> {
        let transaction = self.readonly(&store::ENTRIES)?;
        self.read_tail(&transaction, after, Some(limit.max(1)))
            .await
    }

    async fn read_tail(
        &self,
        transaction: &IdbTransaction,
        after: u64,
        limit: Option<usize>,
    ) -> Result<Tail, JournalError> {
        struct Source {
            name: &'static str,
            /// `getAll` on the position index (or on `records` itself).
            reader: Reader,
            lower: JsValue,
            remaining: usize,
            /// Highest position read when the source stopped at its limit
            /// (values above it were not looked at).
            cut: Option<f64>,
            done: bool,
        }
        enum Reader {
            Index(web_sys::IdbIndex),
            Store(IdbObjectStore),
        }
        impl Reader {
            fn get_all(&self, range: &IdbKeyRange, count: u32) -> Result<IdbRequest, JsValue> {
                match self {
                    Reader::Index(i) => i.get_all_with_key_and_limit(range, count),
                    Reader::Store(s) => s.get_all_with_key_and_limit(range, count),
                }
            }
        }

        let keys = &self.inner.keys;
        let total = limit.unwrap_or(usize::MAX);
        let mut sources = Vec::with_capacity(store::ENTRIES.len());
        for name in store::ENTRIES {
            let s = object_store(transaction, name).map_err(|e| self.failure("read", &e))?;
            let reader = if name == store::RECORDS {
                Reader::Store(s)
            } else {
                Reader::Index(
                    s.index(store::POSITION_INDEX)
                        .map_err(|e| self.failure("read", &e))?,
                )
            };
            sources.push(Source {
                name,
                reader,
                lower: JsValue::from_f64(after as f64),
                remaining: total,
                cut: None,
                done: false,
            });
        }

        let mut entries: Vec<JournalEntry> = Vec::new();
        let mut quarantined: Vec<Quarantined> = Vec::new();
        while sources.iter().any(|s| !s.done) {
            // One round: a request on every unfinished store, then collect.
            let mut round = Vec::new();
            for (i, source) in sources.iter().enumerate().filter(|(_, s)| !s.done) {
                let count = source.remaining.min(READ_CHUNK as usize) as u32;
                let range = IdbKeyRange::lower_bound_with_open(&source.lower, true)
                    .map_err(|e| self.failure("read", &e))?;
                let request = source
                    .reader
                    .get_all(&range, count)
                    .map_err(|e| self.failure("read", &e))?;
                round.push((i, count, request));
            }
            for (i, count, request) in round {
                let values: Array = await_request(&request)
                    .await
                    .map_err(|e| self.failure("read", &e))?
                    .unchecked_into();
                let source = &mut sources[i];
                let n = values.length();
                for value in values.iter() {
                    match read_entry(source.name, &value, keys) {
                        Ok(entry) => entries.push(entry),
                        Err(q) => quarantined.push(q),
                    }
                }
                source.remaining -= n as usize;
                if n < count {
                    source.done = true;
                } else {
                    let last = values.get(n - 1);
                    source.lower = Reflect::get(&last, &keys.position).unwrap_or(JsValue::NULL);
                    if source.remaining == 0 {
                        source.done = true;
                        // A non-numeric position sorts after every number, so
                        // every numeric position of this store was read.
                        source.cut = Some(source.lower.as_f64().unwrap_or(f64::INFINITY));
                    }
                }
            }
        }

        // Four sorted runs: the sort is close to linear on them.
        entries.sort_by_key(|e| e.position);
        let mut merged: Vec<JournalEntry> = Vec::with_capacity(entries.len());
        for entry in entries {
            if merged
                .last()
                .is_some_and(|last| last.position == entry.position)
            {
                let value_store = store_for(&entry.record);
                quarantined.push(Quarantined {
                    store: value_store.to_string(),
                    key: printable_key_of_entry(&entry),
                    position: Some(entry.position),
                    reason: format!("another record already holds position {}", entry.position),
                });
            } else {
                merged.push(entry);
            }
        }
        if limit.is_some() {
            // Positions above the lowest store cut were not read everywhere.
            let cut = sources
                .iter()
                .filter_map(|s| s.cut)
                .fold(f64::INFINITY, f64::min);
            let mut keep = merged.len().min(total);
            if cut.is_finite() {
                keep = keep.min(merged.partition_point(|e| (e.position as f64) <= cut));
            }
            merged.truncate(keep);
            let reached = if keep == total {
                merged.last().map_or(cut, |e| e.position as f64)
            } else {
                cut
            };
            quarantined.retain(|q| q.position.is_none_or(|p| (p as f64) <= reached));
        }
        quarantined.sort_by_key(|q| q.position.unwrap_or(u64::MAX));
        Ok(Tail {
            entries: merged,
            quarantined,
        })
    }

    /// The content of artifact `digest`, checked against the digest.
    pub async fn artifact(&self, digest: &Digest) -> Result<Option<String>, JournalError> {
        let transaction = self.readonly(&[store::ARTIFACTS])?;
        let artifacts =
            object_store(&transaction, store::ARTIFACTS).map_err(|e| self.failure("read", &e))?;
        let value = request_on(
            artifacts.get(&JsValue::from_str(&digest.to_string())),
            self,
            "read artifact",
        )
        .await?;
        if value.is_undefined() {
            return Ok(None);
        }
        let data = Reflect::get(&value, &self.inner.keys.data)
            .ok()
            .and_then(|d| d.as_string())
            .ok_or_else(|| JournalError::Corrupt(format!("artifact {digest} has no text data")))?;
        // Assert after reading: content addressing is checked, not trusted.
        if Digest::of(data.as_bytes()) != *digest {
            return Err(JournalError::Corrupt(format!(
                "artifact {digest} does not match its digest"
            )));
        }
        Ok(Some(data))
    }
}

/// Whether the browser still lists a database `name`
/// (`indexedDB.databases()`); `None` where it cannot tell.
pub async fn database_exists(name: &str) -> Option<bool> {
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

// ---------------------------------------------------------------------------
// Values

fn set(object: &Object, key: &JsValue, value: &JsValue) {
    // Setting a data property on a fresh plain object cannot throw.
    let _ = Reflect::set(object, key, value);
}

fn safe_number(n: u64) -> Result<JsValue, JournalError> {
    if n > MAX_SAFE_INTEGER {
        return Err(JournalError::Invalid(format!(
            "{n} is above what IndexedDB keys carry exactly"
        )));
    }
    Ok(JsValue::from_f64(n as f64))
}

/// `(store, value)` for one entry.
fn entry_row(entry: &JournalEntry, keys: &Keys) -> Result<(&'static str, JsValue), JournalError> {
    let json = encode(entry).map_err(|e| JournalError::Invalid(e.to_string()))?;
    // serde_json writes UTF-8.
    let json = String::from_utf8(json).map_err(|e| JournalError::Invalid(e.to_string()))?;
    let value = Object::new();
    set(&value, &keys.position, &safe_number(entry.position)?);
    match &entry.record {
        JournalRecord::CommandAdmitted(c) => {
            set(
                &value,
                &keys.command_id,
                &JsValue::from_str(&c.command.to_string()),
            );
        }
        JournalRecord::Event(e) => {
            set(
                &value,
                &keys.command_id,
                &JsValue::from_str(&e.command.to_string()),
            );
            set(&value, &keys.seq, &safe_number(e.seq.0)?);
        }
        JournalRecord::Recovery(r) => {
            set(
                &value,
                &keys.evidence_id,
                &JsValue::from_str(&r.stamp.to_string()),
            );
        }
        _ => {}
    }
    set(&value, &keys.json, &JsValue::from_str(&json));
    Ok((store_for(&entry.record), value.into()))
}

fn printable(key: &JsValue) -> String {
    JSON::stringify(key)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| "?".into())
}

/// The primary key of a value in `store`, from its key path, as JSON.
fn printable_key(store_name: &str, value: &JsValue, keys: &Keys) -> String {
    let get = |k: &JsValue| Reflect::get(value, k).unwrap_or(JsValue::UNDEFINED);
    let key = match store_name {
        store::COMMANDS => get(&keys.command_id),
        store::EVENTS => Array::of2(&get(&keys.command_id), &get(&keys.seq)).into(),
        store::EVIDENCE => get(&keys.evidence_id),
        _ => get(&keys.position),
    };
    printable(&key)
}

fn printable_key_of_entry(entry: &JournalEntry) -> String {
    match &entry.record {
        JournalRecord::CommandAdmitted(c) => format!("\"{}\"", c.command),
        JournalRecord::Event(e) => format!("[\"{}\",{}]", e.command, e.seq.0),
        JournalRecord::Recovery(r) => format!("\"{}\"", r.stamp),
        _ => entry.position.to_string(),
    }
}

/// A reason for a decode failure that never quotes the record.
fn reason_for(error: &SchemaError) -> String {
    match error {
        SchemaError::TooLarge { len, max, .. } => {
            format!("the record is {len} bytes; the limit is {max}")
        }
        SchemaError::Malformed { schema, .. } => {
            format!("not a readable {schema}: its JSON is malformed or its fields do not match")
        }
        SchemaError::MissingVersion { schema } => {
            format!("the {schema} has no \"v\" schema version")
        }
        SchemaError::UnsupportedVersion { schema, found } => {
            let found = if found.len() <= 20 && found.bytes().all(|b| b.is_ascii_digit()) {
                found.as_str()
            } else {
                "another value"
            };
            format!(
                "the {schema} has schema version {found}, which this build does not understand (it reads \"v\": 1)"
            )
        }
        // Validation messages name ids, lengths and limits, not contents.
        SchemaError::Invalid { schema, detail } => {
            let mut detail = detail.clone();
            if detail.len() > 200 {
                let mut end = 200;
                while !detail.is_char_boundary(end) {
                    end -= 1;
                }
                detail.truncate(end);
                detail.push('…');
            }
            format!("invalid {schema}: {detail}")
        }
    }
}

fn position_of(value: &JsValue, keys: &Keys) -> Option<u64> {
    Reflect::get(value, &keys.position)
        .ok()
        .and_then(|p| p.as_f64())
        .filter(|p| p.fract() == 0.0 && *p >= 1.0 && *p <= MAX_SAFE_INTEGER as f64)
        .map(|p| p as u64)
}

/// Decodes and checks one stored entry (assert after reading).
fn read_entry(
    store_name: &'static str,
    value: &JsValue,
    keys: &Keys,
) -> Result<JournalEntry, Quarantined> {
    let position = position_of(value, keys);
    let refuse = |reason: String| Quarantined {
        store: store_name.to_string(),
        key: printable_key(store_name, value, keys),
        position,
        reason,
    };
    let Some(stored_position) = position else {
        return Err(refuse(
            "its position field is not a journal position".into(),
        ));
    };
    let Some(json) = Reflect::get(value, &keys.json)
        .ok()
        .and_then(|j| j.as_string())
    else {
        return Err(refuse("it has no json field".into()));
    };
    let entry: JournalEntry = decode(json.as_bytes()).map_err(|e| refuse(reason_for(&e)))?;
    if entry.position != stored_position {
        return Err(refuse(format!(
            "it is stored at position {stored_position} but the entry says {}",
            entry.position
        )));
    }
    let home = store_for(&entry.record);
    if home != store_name {
        return Err(refuse(format!(
            "the entry belongs in {home}, not {store_name}"
        )));
    }
    let text = |k: &JsValue| Reflect::get(value, k).ok().and_then(|v| v.as_string());
    let key_matches = match &entry.record {
        JournalRecord::CommandAdmitted(c) => text(&keys.command_id) == Some(c.command.to_string()),
        JournalRecord::Event(e) => {
            text(&keys.command_id) == Some(e.command.to_string())
                && Reflect::get(value, &keys.seq).ok().and_then(|s| s.as_f64())
                    == Some(e.seq.0 as f64)
        }
        JournalRecord::Recovery(r) => text(&keys.evidence_id) == Some(r.stamp.to_string()),
        _ => true,
    };
    if !key_matches {
        return Err(refuse(
            "it is stored under a key that is not the entry's own".into(),
        ));
    }
    Ok(entry)
}

fn read_snapshot(
    key: &JsValue,
    value: &JsValue,
    keys: &Keys,
) -> Result<ProjectionSnapshot, Quarantined> {
    let position = key
        .as_f64()
        .filter(|p| p.fract() == 0.0 && *p >= 0.0)
        .map(|p| p as u64);
    let refuse = |reason: String| Quarantined {
        store: store::SNAPSHOTS.to_string(),
        key: printable(key),
        position,
        reason,
    };
    let Some(json) = Reflect::get(value, &keys.json)
        .ok()
        .and_then(|j| j.as_string())
    else {
        return Err(refuse("it has no json field".into()));
    };
    let snapshot: ProjectionSnapshot =
        decode(json.as_bytes()).map_err(|e| refuse(reason_for(&e)))?;
    if Some(snapshot.position) != position {
        return Err(refuse(format!(
            "it is stored at position {} but the snapshot says {}",
            printable(key),
            snapshot.position
        )));
    }
    Ok(snapshot)
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

fn inject_fault(meta: &IdbObjectStore, keys: &Keys) {
    let value = Object::new();
    set(&value, &keys.key, &JsValue::from_str("injected-fault"));
    let _ = meta.add(&value);
    let _ = meta.add(&value);
}

// ---------------------------------------------------------------------------
// Migrations

/// Runs every migration step from `old_version` up to [`SCHEMA_VERSION`]
/// inside the versionchange transaction.
fn migrate(
    database: &IdbDatabase,
    transaction: &IdbTransaction,
    old_version: u32,
) -> Result<(), JsValue> {
    for version in old_version + 1..=SCHEMA_VERSION {
        migrate_step(database, transaction, version)?;
    }
    Ok(())
}

fn migrate_step(
    database: &IdbDatabase,
    transaction: &IdbTransaction,
    to_version: u32,
) -> Result<(), JsValue> {
    let keyed = |path: &str| {
        let params = IdbObjectStoreParameters::new();
        params.set_key_path(&JsValue::from_str(path));
        params
    };
    match to_version {
        // Shipped: never edit.
        1 => {
            database.create_object_store_with_optional_parameters(
                store::COMMANDS,
                &keyed("command_id"),
            )?;
            let events = IdbObjectStoreParameters::new();
            events.set_key_path(&Array::of2(&"command_id".into(), &"seq".into()));
            database.create_object_store_with_optional_parameters(store::EVENTS, &events)?;
            database
                .create_object_store_with_optional_parameters(store::ARTIFACTS, &keyed("digest"))?;
            database.create_object_store_with_optional_parameters(
                store::SNAPSHOTS,
                &keyed("position"),
            )?;
            database.create_object_store_with_optional_parameters(
                store::EVIDENCE,
                &keyed("evidence_id"),
            )?;
            database.create_object_store_with_optional_parameters(store::META, &keyed("key"))?;
            Ok(())
        }
        2 => {
            let params = IdbIndexParameters::new();
            params.set_unique(false);
            for name in [store::COMMANDS, store::EVENTS, store::EVIDENCE] {
                transaction
                    .object_store(name)?
                    .create_index_with_str_and_optional_parameters(
                        store::POSITION_INDEX,
                        "position",
                        &params,
                    )?;
            }
            database
                .create_object_store_with_optional_parameters(store::RECORDS, &keyed("position"))?;
            let quarantine = IdbObjectStoreParameters::new();
            quarantine.set_auto_increment(true);
            database
                .create_object_store_with_optional_parameters(store::QUARANTINE, &quarantine)?;
            Ok(())
        }
        _ => Err(JsValue::from_str(&format!(
            "SCHEMA_VERSION has no migration step {to_version}"
        ))),
    }
}

// ---------------------------------------------------------------------------
// Awaiting IndexedDB

fn object_store(transaction: &IdbTransaction, name: &str) -> Result<IdbObjectStore, JsValue> {
    transaction.object_store(name)
}

/// A promise with its resolve and reject functions.
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

async fn request_on(
    request: Result<IdbRequest, JsValue>,
    journal: &Journal,
    what: &str,
) -> Result<JsValue, JournalError> {
    let request = request.map_err(|e| journal.failure(what, &e))?;
    await_request(&request)
        .await
        .map_err(|e| journal.failure(what, &e))
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

/// The writer fence: a `meta` `writer` read whose success handler aborts the
/// transaction when the stored epoch is not ours.
struct Fence {
    verdict: Rc<Cell<u8>>,
    _on_success: Closure<dyn FnMut()>,
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
    fn issue(
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
        Ok(Fence {
            verdict,
            _on_success: on_success,
        })
    }

    fn superseded(&self) -> bool {
        self.verdict.get() == FENCE_SUPERSEDED
    }

    fn unreadable(&self) -> bool {
        self.verdict.get() == FENCE_UNREADABLE
    }
}
