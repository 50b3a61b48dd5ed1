//! Small browser primitives the shell needs: the writer's Web Lock (from
//! `lifeline-locks`, through the store), timers, randomness, the clock.

use lifeline_core::Millis;
use wasm_bindgen::{prelude::*, JsCast};
use web_sys::DedicatedWorkerGlobalScope;

pub fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

pub fn now() -> Millis {
    Millis(js_sys::Date::now().max(0.0) as u64)
}

pub use lifeline_store::random_bytes;

pub fn random_u128() -> Result<u128, String> {
    Ok(u128::from_be_bytes(random_bytes::<16>()?).max(1))
}

/// Waits until this worker holds the exclusive Web Lock `name`, then keeps it
/// for the worker's whole life: the browser releases it when the worker
/// dies, which is exactly when another controller may write.
pub async fn hold_lock_for_life(
    name: &str,
) -> Result<lifeline_store::writer_lock::WriterLock, lifeline_core::phrase::Phrase> {
    use lifeline_core::phrase::Phrase;
    use lifeline_locks::LockError;
    use lifeline_store::writer_lock::WriterLock;
    WriterLock::hold_for_life(name).await.map_err(|e| match e {
        LockError::Unsupported => Phrase::NoWebLocks,
        LockError::Failed(detail) => {
            log(&detail);
            Phrase::LockFailed
        }
    })
}

/// A line in the browser console, for a developer: what went wrong in
/// the core's or the browser's own words, beside the phrase the page shows.
pub fn log(line: &str) {
    web_sys::console::warn_1(&JsValue::from_str(line));
}

/// A one-shot timer that owns its callback and frees it once it has run,
/// for timers nobody cancels (their continuations check ownership instead).
pub fn after(delay_ms: u64, f: impl FnOnce() + 'static) {
    let callback = Closure::once_into_js(f);
    let delay = delay_ms.min(i32::MAX as u64) as i32;
    // Without a timer there is no continuation; the attempt it belongs to
    // then ends by its other timers or by Stop.
    let _ = scope()
        .set_timeout_with_callback_and_timeout_and_arguments_0(callback.unchecked_ref(), delay);
}

/// A one-shot timer; dropping the handle does not cancel it, `cancel` does.
pub struct Timeout {
    id: i32,
    _callback: Closure<dyn FnMut()>,
}

impl Timeout {
    pub fn new(delay_ms: u64, f: impl FnOnce() + 'static) -> Option<Timeout> {
        let mut f = Some(f);
        let callback = Closure::<dyn FnMut()>::new(move || {
            if let Some(f) = f.take() {
                f()
            }
        });
        let delay = delay_ms.min(i32::MAX as u64) as i32;
        let id = scope()
            .set_timeout_with_callback_and_timeout_and_arguments_0(
                callback.as_ref().unchecked_ref(),
                delay,
            )
            .ok()?;
        Some(Timeout {
            id,
            _callback: callback,
        })
    }

    pub fn cancel(&self) {
        scope().clear_timeout_with_handle(self.id);
    }
}
