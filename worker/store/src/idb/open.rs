//! Opening a database: the upgrade, success, error and blocked handlers,
//! and closing a connection that arrives after `blocked` was already
//! reported (nobody holds it, and left open it would block the next
//! upgrade).

use js_sys::Promise;
use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Event, IdbDatabase, IdbOpenDbRequest, IdbTransaction, IdbVersionChangeEvent};

use super::{exception_message, exception_name, factory, Error};

/// One migration: `steps[i]` brings a database from version `i` to `i + 1`
/// inside the versionchange transaction. A shipped step is never edited; a
/// new schema is a new step at the end, so a database at any older version
/// reaches the current one by the same path a fresh install takes.
pub type Step = fn(&IdbDatabase, &IdbTransaction) -> Result<(), JsValue>;

/// Opens `name` at version `steps.len()`, running the steps it is missing.
///
/// A database of a newer build is never opened ([`Error::NewerSchema`]):
/// misreading newer records would be worse than refusing. A failed step
/// aborts the whole upgrade ([`Error::Upgrade`]).
pub async fn open(name: &str, steps: &'static [Step]) -> Result<IdbDatabase, Error> {
    let request: IdbOpenDbRequest = factory()?
        .open_with_u32(name, steps.len() as u32)
        .map_err(refused)?;
    // The promise is fulfilled on `success` (the connection is then the
    // request's result), or rejected with: the `blocked` event, a failed
    // step's description (a string), or the request's error.
    let mut reject = None;
    let promise = Promise::new(&mut |resolve, rejected| {
        request.set_onsuccess(Some(&resolve));
        request.set_onblocked(Some(&rejected));
        reject = Some(rejected);
    });
    let reject = reject.expect("the Promise executor runs synchronously");
    // One handler for the upgrade, the error and a success that arrives
    // after `blocked` was reported.
    let on_event = {
        let request = request.clone();
        Closure::<dyn FnMut(Event)>::new(move |event: Event| {
            if let Some(change) = event.dyn_ref::<IdbVersionChangeEvent>() {
                let old = change.old_version() as u32;
                let (Ok(database), Some(transaction)) = (request.result(), request.transaction())
                else {
                    return;
                };
                let database: IdbDatabase = database.unchecked_into();
                for step in steps.iter().skip(old as usize) {
                    if let Err(e) = step(&database, &transaction) {
                        // Rejected first, so the abort's error does not
                        // hide which step failed.
                        let detail = format!(
                            "migration from schema {old} failed: {}",
                            exception_message(&e)
                        );
                        let _ = reject.call1(&JsValue::UNDEFINED, &JsValue::from_str(&detail));
                        let _ = transaction.abort();
                        return;
                    }
                }
            } else if let Some(late) = request
                .result()
                .ok()
                .and_then(|r| r.dyn_into::<IdbDatabase>().ok())
            {
                // Only a success carries a connection, and this handler sees
                // one only after `blocked` was reported: nobody holds it,
                // and left open it would block the next upgrade.
                late.close();
            } else {
                // Handled here: without this the error also reaches the
                // context's global error handler.
                event.prevent_default();
                let error = request.error().ok().flatten().map(JsValue::from);
                let _ = reject.call1(&JsValue::UNDEFINED, &error.unwrap_or(JsValue::NULL));
            }
        })
    };
    request.set_onupgradeneeded(Some(on_event.as_ref().unchecked_ref()));
    request.set_onerror(Some(on_event.as_ref().unchecked_ref()));

    let outcome = JsFuture::from(promise).await;
    if let Err(blocked) = &outcome {
        if blocked.is_instance_of::<Event>() {
            // The open may still complete; its handler must outlive this
            // call to close that connection.
            request.set_onsuccess(Some(on_event.as_ref().unchecked_ref()));
            on_event.forget();
            return Err(Error::Blocked);
        }
    }
    request.set_onupgradeneeded(None);
    request.set_onsuccess(None);
    request.set_onerror(None);
    request.set_onblocked(None);
    match outcome {
        Ok(_) => request
            .result()
            .map(JsCast::unchecked_into)
            .map_err(refused),
        Err(error) => Err(match error.as_string() {
            Some(detail) => Error::Upgrade(detail),
            None => refused(error),
        }),
    }
}

fn refused(error: JsValue) -> Error {
    match exception_name(&error).as_str() {
        "VersionError" => Error::NewerSchema,
        "QuotaExceededError" => Error::QuotaExceeded,
        _ => Error::Unavailable(exception_message(&error)),
    }
}
