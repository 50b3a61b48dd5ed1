//! The IndexedDB journal: the one place that reads and writes journal
//! records. Its parts are named after what they hold:
//!
//! | module | holds |
//! |---|---|
//! | `schema` | the stores, their keys, every migration, how an entry is laid out as a value |
//! | `fence` | the writer epoch: claiming the journal, repairing an unreadable claim, the fence every write checks |
//! | `write` | persist batches and snapshots, and the durability each asks for |
//! | `read` | the snapshot and the tail after it, a follower's gap, artifacts; every value checked after reading |
//! | `quarantine` | moving unreadable values aside, with the reason |
//!
//! The connection itself (open, upgrade, blocked, `versionchange`, close) is
//! [`crate::idb`]'s, shared with the profile store; this module maps its
//! failures to [`JournalError`], the words the shell and the page know.

mod fence;
mod quarantine;
mod read;
mod schema;
mod write;

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use lifeline_core::phrase::JournalFault;
use wasm_bindgen::JsValue;
use web_sys::{IdbObjectStore, IdbRequest, IdbTransaction};

pub use crate::durability::Durability;
use crate::idb::{self, Connection, Ended, Tx};
use fence::Fence;
pub use fence::WriterEpoch;
pub use quarantine::Quarantined;
pub use read::{read_snapshot_text, Load, Loaded, ReadSnapshot, Tail, READ_CHUNK};
use schema::Keys;
pub use schema::{store, store_for, SCHEMA_VERSION};
pub use write::{durability_for, SNAPSHOTS_KEPT};

pub const DATABASE_NAME: &str = "lifeline";

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

impl From<idb::Error> for JournalError {
    fn from(error: idb::Error) -> JournalError {
        match error {
            idb::Error::Unavailable(detail) | idb::Error::Upgrade(detail) => {
                JournalError::Unavailable(detail)
            }
            idb::Error::Blocked => JournalError::Blocked,
            idb::Error::NewerSchema => JournalError::NewerSchema,
            idb::Error::Ended(ended) => ended.into(),
            idb::Error::QuotaExceeded => JournalError::QuotaExceeded,
            idb::Error::Operation(detail) => JournalError::Operation(detail),
        }
    }
}

impl From<Ended> for JournalError {
    fn from(ended: Ended) -> JournalError {
        match ended {
            Ended::Closed => JournalError::Closed,
            Ended::VersionChange => JournalError::VersionChange,
            Ended::Removed => JournalError::Removed,
            Ended::Lost => JournalError::ConnectionLost,
        }
    }
}

struct Inner {
    connection: Connection,
    keys: Keys,
    /// The journal's identity, known after a claim (`meta` `id`).
    id: RefCell<Option<String>>,
    /// The epoch claimed under the writer lock, while no other writer
    /// record was put through this journal (see `fence`'s proof).
    held: std::cell::Cell<Option<WriterEpoch>>,
    #[cfg(feature = "fault-injection")]
    fault: std::cell::Cell<Option<usize>>,
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
            .field("connection", &self.inner.connection)
            .finish()
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
        let connection = Connection::open(name, &schema::MIGRATIONS).await?;
        Ok(Journal {
            inner: Rc::new(Inner {
                connection,
                keys: Keys::new(),
                id: RefCell::new(None),
                held: std::cell::Cell::new(None),
                #[cfg(feature = "fault-injection")]
                fault: std::cell::Cell::new(None),
            }),
        })
    }

    /// The version the open database is at.
    pub fn version(&self) -> u32 {
        self.inner.connection.version()
    }

    /// Called when another tab asks to upgrade the database. The connection
    /// is already closed when `f` runs; every later call returns
    /// [`JournalError::VersionChange`]. Replaces an earlier callback.
    pub fn on_version_change(&self, f: impl Fn() + 'static) {
        self.inner.connection.on_version_change(f);
    }

    /// Called once when the connection is lost for good: with
    /// [`JournalError::VersionChange`] (a newer build upgrades; the data
    /// stays), [`JournalError::Removed`] (the database was deleted) or
    /// [`JournalError::ConnectionLost`] (the browser closed it: see
    /// [`database_exists`] for whether the data is gone). Every later call
    /// returns that error. Replaces an earlier callback.
    pub fn on_lost(&self, f: impl Fn(JournalError) + 'static) {
        self.inner
            .connection
            .on_lost(move |ended| f(JournalError::from(ended)));
    }

    /// The journal's identity (a random id stamped by the first claim),
    /// once [`Journal::claim_writer`] or [`Journal::repair_writer`] read it;
    /// `None` before, or if its record is unreadable.
    pub fn id(&self) -> Option<String> {
        self.inner.id.borrow().clone()
    }

    /// Closes the connection (after running transactions finish).
    pub fn close(&self) {
        self.inner.connection.close();
    }

    fn usable(&self) -> Result<(), JournalError> {
        Ok(self.inner.connection.usable()?)
    }

    /// Maps a thrown exception or an abort reason to an error, in the light
    /// of what happened to the connection.
    fn failure(&self, what: &str, error: &JsValue) -> JournalError {
        self.inner.connection.failure(what, error).into()
    }

    fn readonly(&self, stores: &[&str]) -> Result<IdbTransaction, JournalError> {
        Ok(self.inner.connection.readonly(stores)?)
    }

    fn readwrite(&self, stores: &[&str], durability: Durability) -> Result<Tx, JournalError> {
        Ok(self.inner.connection.readwrite(stores, durability)?)
    }

    /// Waits for a readwrite transaction to end and names the failure: the
    /// fence's verdict first, since its abort is the cause of the others.
    async fn finish(&self, what: &str, tx: Tx, fence: Option<&Fence>) -> Result<(), JournalError> {
        let ended = self.inner.connection.finish(what, tx).await;
        if let Some(refused) = fence.and_then(Fence::refusal) {
            return Err(refused);
        }
        Ok(ended?)
    }

    /// Aborts a readwrite transaction that a request of it failed to issue,
    /// and names the failure once the abort is done.
    async fn abandon(&self, tx: Tx, what: &str, error: &JsValue) -> JournalError {
        tx.abandon().await;
        self.failure(what, error)
    }

    /// One request's result, with a failure named after `what`.
    async fn request(
        &self,
        request: Result<IdbRequest, JsValue>,
        what: &str,
    ) -> Result<JsValue, JournalError> {
        let request = request.map_err(|e| self.failure(what, &e))?;
        idb::request(&request)
            .await
            .map_err(|e| self.failure(what, &e))
    }

    fn store(
        &self,
        transaction: &IdbTransaction,
        name: &str,
        what: &str,
    ) -> Result<IdbObjectStore, JournalError> {
        transaction
            .object_store(name)
            .map_err(|e| self.failure(what, &e))
    }
}

/// Whether the browser still lists a database `name`
/// (`indexedDB.databases()`); `None` where it cannot tell.
pub async fn database_exists(name: &str) -> Option<bool> {
    idb::exists(name).await
}
