//! A long-lived connection that notices when it stops being usable: another
//! tab upgrading or deleting the database, or the browser closing it.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

use js_sys::Array;
use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use web_sys::{Event, IdbDatabase, IdbTransaction, IdbVersionChangeEvent};

use super::open::open;
use super::{failure, Error, Step, Tx};
use crate::durability::{self, Durability};

/// Why a connection can no longer be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Closed by [`Connection::close`].
    Closed,
    /// Closed by us because another connection asked for a newer version:
    /// a newer build upgrades; the data stays.
    VersionChange,
    /// Deleted under us (a `versionchange` without a new version: site data
    /// cleared, or `deleteDatabase` from another context).
    Removed,
    /// Closed by the browser (storage cleared, disk error); whether the data
    /// is still there is not known.
    Lost,
}

type OnLost = Box<dyn Fn(Ended)>;

struct Shared {
    ended: Cell<Option<Ended>>,
    on_version_change: RefCell<Option<Box<dyn Fn()>>>,
    on_lost: RefCell<Option<OnLost>>,
}

/// An open database. The connection closes when this is dropped.
pub struct Connection {
    database: IdbDatabase,
    shared: Rc<Shared>,
    _on_version_change: Closure<dyn FnMut(Event)>,
    _on_close: Closure<dyn FnMut(Event)>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        // The handlers are about to be freed; a connection left open without
        // them would block another tab's upgrade forever.
        self.database.set_onversionchange(None);
        self.database.set_onclose(None);
        self.database.close();
    }
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("name", &self.database.name())
            .field("ended", &self.shared.ended.get())
            .finish()
    }
}

impl Connection {
    /// Opens (creating or migrating) `name`; see [`open`].
    pub async fn open(name: &str, steps: &'static [Step]) -> Result<Connection, Error> {
        Ok(Connection::new(open(name, steps).await?))
    }

    fn new(database: IdbDatabase) -> Connection {
        let shared = Rc::new(Shared {
            ended: Cell::new(None),
            on_version_change: RefCell::new(None),
            on_lost: RefCell::new(None),
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
                    .dyn_ref::<IdbVersionChangeEvent>()
                    .is_some_and(|e| e.new_version().is_none());
                let ended = if deleted {
                    Ended::Removed
                } else {
                    Ended::VersionChange
                };
                shared.ended.set(Some(ended));
                if let Some(f) = shared.on_version_change.borrow().as_ref() {
                    f();
                }
                if let Some(f) = shared.on_lost.borrow().as_ref() {
                    f(ended);
                }
            })
        };
        let on_close = {
            let shared = shared.clone();
            Closure::<dyn FnMut(Event)>::new(move |_| {
                if shared.ended.get().is_some() {
                    return;
                }
                shared.ended.set(Some(Ended::Lost));
                if let Some(f) = shared.on_lost.borrow().as_ref() {
                    f(Ended::Lost);
                }
            })
        };
        database.set_onversionchange(Some(on_version_change.as_ref().unchecked_ref()));
        database.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        Connection {
            database,
            shared,
            _on_version_change: on_version_change,
            _on_close: on_close,
        }
    }

    /// The version the open database is at.
    pub fn version(&self) -> u32 {
        self.database.version() as u32
    }

    /// Called when another tab asks for a newer version or deletes the
    /// database; the connection is already closed when `f` runs. Replaces
    /// an earlier callback.
    pub fn on_version_change(&self, f: impl Fn() + 'static) {
        *self.shared.on_version_change.borrow_mut() = Some(Box::new(f));
    }

    /// Called once when the connection ends by itself (not by
    /// [`Connection::close`]), after any `on_version_change`. Replaces an
    /// earlier callback.
    pub fn on_lost(&self, f: impl Fn(Ended) + 'static) {
        *self.shared.on_lost.borrow_mut() = Some(Box::new(f));
    }

    /// Closes the connection (after running transactions finish).
    pub fn close(&self) {
        if self.shared.ended.get().is_none() {
            self.shared.ended.set(Some(Ended::Closed));
        }
        self.database.close();
    }

    pub fn usable(&self) -> Result<(), Error> {
        match self.shared.ended.get() {
            None => Ok(()),
            Some(ended) => Err(Error::Ended(ended)),
        }
    }

    /// Maps a thrown exception or an abort reason to an error, in the light
    /// of what happened to the connection: after it ended, every failure is
    /// that end.
    pub fn failure(&self, what: &str, error: &JsValue) -> Error {
        self.usable().err().unwrap_or_else(|| failure(what, error))
    }

    pub fn readonly(&self, stores: &[&str]) -> Result<IdbTransaction, Error> {
        self.usable()?;
        let names: Array = stores.iter().map(|s| JsValue::from_str(s)).collect();
        self.database
            .transaction_with_str_sequence(&names)
            .map_err(|e| self.failure("begin read", &e))
    }

    pub fn readwrite(&self, stores: &[&str], durability: Durability) -> Result<Tx, Error> {
        self.usable()?;
        durability::readwrite(&self.database, stores, durability)
            .map(Tx::new)
            .map_err(|e| self.failure("begin write", &e))
    }

    /// Waits for a readwrite transaction to end and names its failure.
    pub async fn finish(&self, what: &str, tx: Tx) -> Result<(), Error> {
        tx.end()
            .await
            .map_err(|e| self.failure(&format!("{what} was aborted"), &e))
    }
}
