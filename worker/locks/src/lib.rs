//! Web Locks, as the workers use them. web-sys has `navigator.locks` only
//! behind an unstable flag, so the calls go through `Reflect`.
//!
//! A lock held for a worker's whole life is released by the browser when
//! the worker ends — crashed, closed or terminated — and a busy loop keeps
//! it. So the controller's writer lock lets it trust its own claim on the
//! journal, and a runtime's life lock tells the controller waiting for it
//! that the runtime is gone, even where a `MessagePort` has no `close`
//! event.

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Why a lock could not be had.
#[derive(Debug)]
pub enum LockError {
    /// This browser has no Web Locks.
    Unsupported,
    /// A step of the Web Locks call failed; the browser's or our words,
    /// for a log.
    Failed(String),
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Unsupported => f.write_str("no Web Locks"),
            LockError::Failed(detail) => f.write_str(detail),
        }
    }
}

/// Resolves once this worker holds the exclusive lock `name`, which it
/// then keeps until it ends.
pub async fn hold_for_life(name: &str) -> Result<(), LockError> {
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
    let pending = request(name, &on_grant)?;
    // The request's own promise settles only if the request fails; keep
    // that from going unhandled.
    let on_reject = Closure::<dyn FnMut(JsValue)>::new(|_: JsValue| {});
    let _ = pending.catch(&on_reject);
    on_reject.forget();
    JsFuture::from(granted)
        .await
        .map(|_| ())
        .map_err(|_| failed(&format!("the lock {name} was not granted")))
}

/// Resolves once the lock `name` is free, that is when whoever held it let
/// go or died; it is given back at once.
pub async fn wait_for_release(name: &str) -> Result<(), LockError> {
    let on_grant = Closure::<dyn FnMut(JsValue) -> JsValue>::new(|_lock: JsValue| {
        // Returning releases it: nothing is held, only the moment counts.
        JsValue::UNDEFINED
    })
    .into_js_value();
    let pending = request(name, &on_grant)?;
    JsFuture::from(pending)
        .await
        .map(|_| ())
        .map_err(|_| failed(&format!("the lock {name} was not granted")))
}

/// `navigator.locks.request(name, on_grant)`: its promise settles with
/// what `on_grant` returned, once that has settled.
fn request(name: &str, on_grant: &JsValue) -> Result<Promise, LockError> {
    let navigator = get(&js_sys::global(), "navigator")?;
    let locks = get(&navigator, "locks")?;
    if locks.is_undefined() || locks.is_null() {
        return Err(LockError::Unsupported);
    }
    let request: Function = get(&locks, "request")?
        .dyn_into()
        .map_err(|_| failed("navigator.locks.request is not a function"))?;
    request
        .call2(&locks, &JsValue::from_str(name), on_grant)
        .map_err(|_| failed(&format!("requesting the lock {name} failed")))?
        .dyn_into()
        .map_err(|_| failed("navigator.locks.request returned no promise"))
}

fn failed(what: &str) -> LockError {
    LockError::Failed(what.to_owned())
}

fn get(target: &JsValue, name: &str) -> Result<JsValue, LockError> {
    Reflect::get(target, &JsValue::from_str(name))
        .map_err(|_| failed(&format!("{name} is unreadable")))
}
