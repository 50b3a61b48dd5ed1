//! How much storage the origin uses and whether it is persistent, as seen from
//! the controller worker (`WorkerNavigator.storage`).
//!
//! `navigator.storage.persist()` exists only on `Window`: asking for
//! persistent storage is the page's job. The worker can only look.

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{StorageEstimate as JsEstimate, StorageManager, WorkerGlobalScope};

/// Bytes used by this origin and the most it may use, per the browser.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StorageEstimate {
    pub usage: u64,
    pub quota: u64,
}

impl StorageEstimate {
    /// Bytes still available before writes fail with `QuotaExceededError`.
    pub fn available(&self) -> u64 {
        self.quota.saturating_sub(self.usage)
    }
}

fn manager() -> Result<StorageManager, String> {
    let scope: WorkerGlobalScope = js_sys::global()
        .dyn_into()
        .map_err(|_| "storage is only queried from a worker".to_string())?;
    let navigator = scope.navigator();
    // Older engines have no `navigator.storage`; web-sys would hand back
    // `undefined` typed as a StorageManager.
    let storage =
        js_sys::Reflect::get(&navigator, &JsValue::from_str("storage")).map_err(describe)?;
    if storage.is_undefined() || storage.is_null() {
        return Err("this browser does not offer navigator.storage in workers".into());
    }
    Ok(storage.unchecked_into())
}

fn describe(error: JsValue) -> String {
    error
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.name()))
        .or_else(|| error.as_string())
        .unwrap_or_else(|| "unknown error".into())
}

/// `navigator.storage.estimate()`.
pub async fn estimate() -> Result<StorageEstimate, String> {
    let promise = manager()?.estimate().map_err(describe)?;
    let value: JsEstimate = JsFuture::from(promise)
        .await
        .map_err(|e| format!("storage estimate failed: {}", describe(e)))?
        .unchecked_into();
    let whole = |v: Option<f64>| v.filter(|v| v.is_finite() && *v >= 0.0).unwrap_or(0.0) as u64;
    Ok(StorageEstimate {
        usage: whole(value.get_usage()),
        quota: whole(value.get_quota()),
    })
}

/// `navigator.storage.persisted()`: whether the browser promised not to
/// evict this origin's data under storage pressure.
pub async fn persisted() -> Result<bool, String> {
    let promise = manager()?.persisted().map_err(describe)?;
    JsFuture::from(promise)
        .await
        .map_err(|e| format!("storage persisted query failed: {}", describe(e)))?
        .as_bool()
        .ok_or_else(|| "navigator.storage.persisted() did not answer with a boolean".into())
}
