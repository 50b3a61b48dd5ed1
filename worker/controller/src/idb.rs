//! Opening an IndexedDB database, shared by the journal and the config
//! store so the handshake cannot drift between them: upgrade, success,
//! error and blocked handlers, and closing a connection that arrives after
//! `blocked` was already reported (nobody holds it, and left open it would
//! block the next upgrade).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Event, IdbDatabase, IdbFactory, IdbOpenDbRequest, IdbTransaction, IdbVersionChangeEvent,
};

/// Why a database did not open; each store maps it to its own error.
#[derive(Debug)]
pub enum OpenError {
    /// Another connection refused to close for the upgrade. The open is
    /// abandoned; a connection that arrives later is closed at once.
    Blocked,
    /// The upgrade from `old` failed (its transaction was aborted).
    Upgrade { old: u32, detail: String },
    /// `open()` threw, or the open request failed: the exception.
    Failed(JsValue),
}

/// Opens `name` at `version`. `upgrade(database, transaction, old)` runs
/// inside the versionchange transaction when the stored version is older;
/// an `Err` aborts that transaction and the open fails with
/// [`OpenError::Upgrade`].
pub async fn open_database(
    factory: &IdbFactory,
    name: &str,
    version: u32,
    upgrade: impl Fn(&IdbDatabase, &IdbTransaction, u32) -> Result<(), String> + 'static,
) -> Result<IdbDatabase, OpenError> {
    let request: IdbOpenDbRequest = factory
        .open_with_u32(name, version)
        .map_err(OpenError::Failed)?;

    let blocked = Rc::new(Cell::new(false));
    let upgrade_error: Rc<RefCell<Option<(u32, String)>>> = Rc::new(RefCell::new(None));
    let (promise, resolve, reject) = promise();
    let on_upgrade = {
        let request = request.clone();
        let upgrade_error = upgrade_error.clone();
        Closure::<dyn FnMut(IdbVersionChangeEvent)>::new(move |event: IdbVersionChangeEvent| {
            let old = event.old_version() as u32;
            let result = match (request.result(), request.transaction()) {
                (Ok(database), Some(transaction)) => {
                    upgrade(&database.unchecked_into(), &transaction, old).inspect_err(|_| {
                        let _ = transaction.abort();
                    })
                }
                _ => Err("no versionchange transaction".into()),
            };
            if let Err(detail) = result {
                *upgrade_error.borrow_mut() = Some((old, detail));
            }
        })
    };
    let on_success = {
        let request = request.clone();
        let blocked = blocked.clone();
        Closure::<dyn FnMut(Event)>::new(move |_| {
            let database = request.result().unwrap_or(JsValue::UNDEFINED);
            if blocked.get() {
                // The caller was told it was blocked; nobody holds this late
                // connection, so it must not block others.
                if let Some(db) = database.dyn_ref::<IdbDatabase>() {
                    db.close();
                }
                return;
            }
            let _ = resolve.call1(&JsValue::UNDEFINED, &database);
        })
    };
    let on_error = {
        let request = request.clone();
        let reject = reject.clone();
        Closure::<dyn FnMut(Event)>::new(move |event: Event| {
            // Handled here: without this the error also reaches the worker's
            // global error handler.
            event.prevent_default();
            let error = request
                .error()
                .ok()
                .flatten()
                .map(JsValue::from)
                .unwrap_or_else(|| JsValue::from_str("UnknownError"));
            let _ = reject.call1(&JsValue::UNDEFINED, &error);
        })
    };
    let on_blocked = {
        let blocked = blocked.clone();
        Closure::<dyn FnMut(Event)>::new(move |_| {
            blocked.set(true);
            let _ = reject.call1(&JsValue::UNDEFINED, &JsValue::from_str("Blocked"));
        })
    };
    request.set_onupgradeneeded(Some(on_upgrade.as_ref().unchecked_ref()));
    request.set_onsuccess(Some(on_success.as_ref().unchecked_ref()));
    request.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    request.set_onblocked(Some(on_blocked.as_ref().unchecked_ref()));

    let outcome = JsFuture::from(promise).await;
    if blocked.get() {
        // The request may still complete later; its handlers must outlive
        // this call so that the late connection gets closed.
        on_upgrade.forget();
        on_success.forget();
        on_error.forget();
        on_blocked.forget();
        return Err(OpenError::Blocked);
    }
    request.set_onupgradeneeded(None);
    request.set_onsuccess(None);
    request.set_onerror(None);
    request.set_onblocked(None);
    match outcome {
        Ok(database) => Ok(database.unchecked_into()),
        Err(error) => Err(match upgrade_error.borrow_mut().take() {
            Some((old, detail)) => OpenError::Upgrade { old, detail },
            None => OpenError::Failed(error),
        }),
    }
}

fn promise() -> (Promise, Function, Function) {
    let mut slots = None;
    let promise = Promise::new(&mut |resolve, reject| slots = Some((resolve, reject)));
    let (resolve, reject) = slots.expect("the Promise executor runs synchronously");
    (promise, resolve, reject)
}
