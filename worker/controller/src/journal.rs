//! The IndexedDB journal: database name, schema version and every migration,
//! in one place.
//!
//! Migrations run inside the `versionchange` transaction, one step per
//! version, so a database at any older version reaches the current one by the
//! same path a fresh install takes. A database written by a *newer* build is
//! never opened by this one: IndexedDB refuses with a `VersionError`, which we
//! turn into an instruction for the user instead of misreading newer records.

use idb::{Database, DatabaseEvent, Factory, KeyPath, ObjectStoreParams, TransactionMode};
use std::fmt;
use wasm_bindgen::JsValue;

pub const DATABASE_NAME: &str = "lifeline";

/// The version this build writes. Raise it together with a new arm in
/// [`migrate_step`]; never edit an arm that has shipped.
pub const SCHEMA_VERSION: u32 = 1;

/// Object stores of schema version 1.
pub mod store {
    /// Command records, keyed by command id.
    pub const COMMANDS: &str = "commands";
    /// Sequenced events, keyed by `[command id, sequence]`.
    pub const EVENTS: &str = "events";
    /// Content-addressed output artifacts, keyed by SHA-256 digest.
    pub const ARTIFACTS: &str = "artifacts";
    /// Projection snapshots, keyed by journal position.
    pub const SNAPSHOTS: &str = "snapshots";
    /// Recovery evidence records, keyed by evidence id.
    pub const EVIDENCE: &str = "evidence";
    /// Small facts about the journal itself (e.g. generation counters).
    pub const META: &str = "meta";

    pub const ALL: [&str; 6] = [COMMANDS, EVENTS, ARTIFACTS, SNAPSHOTS, EVIDENCE, META];
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalError {
    /// IndexedDB is missing (e.g. some private modes) or refused to open.
    Unavailable(String),
    /// The stored database was written by a newer build.
    NewerSchema,
    /// Another tab holds the database open at an older version.
    Blocked,
    /// A read or write failed; the message names the operation.
    Operation(String),
}

impl fmt::Display for JournalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JournalError::Unavailable(detail) => write!(
                f,
                "the journal could not be opened ({detail}); history cannot be kept in this browser profile"
            ),
            JournalError::NewerSchema => write!(
                f,
                "the journal was written by a newer Lifeline (schema above {SCHEMA_VERSION}); reload to get the newer version — nothing was changed"
            ),
            JournalError::Blocked => write!(
                f,
                "another Lifeline tab is holding an older journal open; close or reload the other tabs"
            ),
            JournalError::Operation(detail) => write!(f, "journal operation failed: {detail}"),
        }
    }
}

fn operation(what: &str) -> impl Fn(idb::Error) -> JournalError + '_ {
    move |error| JournalError::Operation(format!("{what}: {error}"))
}

/// Opens (creating or migrating) the journal database `name`.
pub async fn open(name: &str) -> Result<Database, JournalError> {
    let factory = Factory::new().map_err(|e| JournalError::Unavailable(e.to_string()))?;
    let mut request = factory
        .open(name, Some(SCHEMA_VERSION))
        .map_err(|e| JournalError::Unavailable(e.to_string()))?;
    let blocked = std::rc::Rc::new(std::cell::Cell::new(false));
    let seen_blocked = blocked.clone();
    request.on_blocked(move |_| seen_blocked.set(true));
    request.on_upgrade_needed(|event| {
        // Errors here abort the versionchange transaction, which surfaces as an
        // error on the open request below; nothing half-migrated is kept.
        if let (Ok(database), Ok(old)) = (event.database(), event.old_version()) {
            let _ = migrate(&database, old);
        }
    });
    match request.await {
        Ok(database) => Ok(database),
        Err(_) if blocked.get() => Err(JournalError::Blocked),
        Err(error) if error.to_string().contains("VersionError") => Err(JournalError::NewerSchema),
        Err(error) => Err(JournalError::Unavailable(error.to_string())),
    }
}

/// Runs every migration step from `old_version` up to [`SCHEMA_VERSION`].
fn migrate(database: &Database, old_version: u32) -> Result<(), idb::Error> {
    for version in old_version + 1..=SCHEMA_VERSION {
        migrate_step(database, version)?;
    }
    Ok(())
}

fn migrate_step(database: &Database, to_version: u32) -> Result<(), idb::Error> {
    match to_version {
        1 => {
            let keyed = |path: &str| {
                let mut params = ObjectStoreParams::new();
                params.key_path(Some(KeyPath::new_single(path)));
                params
            };
            database.create_object_store(store::COMMANDS, keyed("command_id"))?;
            let mut events = ObjectStoreParams::new();
            events.key_path(Some(KeyPath::new_array(vec!["command_id", "seq"])));
            database.create_object_store(store::EVENTS, events)?;
            database.create_object_store(store::ARTIFACTS, keyed("digest"))?;
            database.create_object_store(store::SNAPSHOTS, keyed("position"))?;
            database.create_object_store(store::EVIDENCE, keyed("evidence_id"))?;
            database.create_object_store(store::META, keyed("key"))?;
            Ok(())
        }
        _ => unreachable!("SCHEMA_VERSION has no migration step {to_version}"),
    }
}

/// Writes `records` into `store_name` in one transaction and returns only
/// once the transaction's `complete` event fired: the durability point.
pub async fn put_all(
    database: &Database,
    store_name: &str,
    records: &[JsValue],
) -> Result<(), JournalError> {
    let transaction = database
        .transaction(&[store_name], TransactionMode::ReadWrite)
        .map_err(operation("begin write"))?;
    let store = transaction
        .object_store(store_name)
        .map_err(operation("open store"))?;
    for record in records {
        // Requests are queued without awaiting each one: awaiting anything but
        // this transaction's own requests would let it auto-commit early.
        store.put(record, None).map_err(operation("put"))?;
    }
    let result = transaction
        .commit()
        .map_err(operation("commit"))?
        .await
        .map_err(operation("commit"))?;
    if result.is_committed() {
        Ok(())
    } else {
        Err(JournalError::Operation(format!(
            "write to {store_name} was aborted"
        )))
    }
}

/// Reads the record with `key` from `store_name`.
pub async fn get(
    database: &Database,
    store_name: &str,
    key: &JsValue,
) -> Result<Option<JsValue>, JournalError> {
    let transaction = database
        .transaction(&[store_name], TransactionMode::ReadOnly)
        .map_err(operation("begin read"))?;
    let store = transaction
        .object_store(store_name)
        .map_err(operation("open store"))?;
    store
        .get(key.clone())
        .map_err(operation("get"))?
        .await
        .map_err(operation("get"))
}
