//! The writer's Web Lock, held for the rest of the worker's life.
//!
//! A [`WriterLock`] can only be had from [`WriterLock::hold_for_life`],
//! which resolves once the browser granted the exclusive lock and never
//! lets it go: the browser releases it when the worker ends (crashed,
//! closed, terminated), which is exactly when another controller may
//! write. Holding one is what lets the journal trust its own claim
//! ([`crate::journal::Journal::claim_writer_held`]).

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Proof that this worker holds an exclusive Web Lock until it ends. Not
/// `Clone`, and made only by [`WriterLock::hold_for_life`].
#[derive(Debug)]
pub struct WriterLock {
    _held: (),
}

/// Why the lock could not be had.
#[derive(Debug)]
pub enum LockError {
    /// This browser has no Web Locks.
    Unsupported,
    /// A step of the Web Locks call failed; the browser's or our words,
    /// for a log.
    Failed(String),
}

impl WriterLock {
    /// Waits until this worker holds the exclusive Web Lock `name`, then
    /// keeps it for the worker's whole life.
    pub async fn hold_for_life(name: &str) -> Result<WriterLock, LockError> {
        let navigator = get(&js_sys::global(), "navigator")?;
        let locks = get(&navigator, "locks")?;
        if locks.is_undefined() {
            return Err(LockError::Unsupported);
        }
        let request: Function = get(&locks, "request")?
            .dyn_into()
            .map_err(|_| failed("navigator.locks.request is not a function"))?;
        let mut granted_resolve: Option<Function> = None;
        let granted = Promise::new(&mut |resolve, _| granted_resolve = Some(resolve));
        let granted_resolve =
            granted_resolve.ok_or_else(|| failed("the promise executor did not run"))?;
        let on_grant = Closure::<dyn FnMut(JsValue) -> JsValue>::new(move |_lock: JsValue| {
            let _ = granted_resolve.call0(&JsValue::NULL);
            // Never settles: the lock is held until the worker is gone.
            JsValue::from(Promise::new(&mut |_, _| {}))
        })
        .into_js_value();
        let pending: Promise = request
            .call2(&locks, &JsValue::from_str(name), &on_grant)
            .map_err(|_| failed(&format!("requesting the lock {name} failed")))?
            .dyn_into()
            .map_err(|_| failed("navigator.locks.request returned no promise"))?;
        // The request's own promise only settles when the lock is released
        // (or the request fails); keep a rejection from going unnoticed.
        let on_reject = Closure::<dyn FnMut(JsValue)>::new(|_e: JsValue| {});
        let _ = pending.catch(&on_reject);
        on_reject.forget();
        JsFuture::from(granted)
            .await
            .map_err(|_| failed(&format!("the lock {name} was not granted")))?;
        Ok(WriterLock { _held: () })
    }
}

fn failed(what: &str) -> LockError {
    LockError::Failed(what.to_owned())
}

fn get(target: &JsValue, name: &str) -> Result<JsValue, LockError> {
    Reflect::get(target, &JsValue::from_str(name))
        .map_err(|_| failed(&format!("{name} is unreadable")))
}
