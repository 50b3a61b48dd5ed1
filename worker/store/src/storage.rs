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

/// The folder the runtime keeps workspaces in (see the runtime's `opfs.rs`).
const WORKSPACES_DIR: &str = "workspaces";

async fn workspaces_dir(create: bool) -> Result<web_sys::FileSystemDirectoryHandle, String> {
    let root: web_sys::FileSystemDirectoryHandle = JsFuture::from(manager()?.get_directory())
        .await
        .map_err(describe)?
        .unchecked_into();
    let options = web_sys::FileSystemGetDirectoryOptions::new();
    options.set_create(create);
    Ok(
        JsFuture::from(root.get_directory_handle_with_options(WORKSPACES_DIR, &options))
            .await
            .map_err(describe)?
            .unchecked_into(),
    )
}

/// Whether a workspace folder exists. A resumed session's workspace is
/// checked before launch: it is never recreated empty.
pub async fn workspace_exists(workspace: lifeline_core::WorkspaceId) -> bool {
    let Ok(dir) = workspaces_dir(false).await else {
        return false;
    };
    let options = web_sys::FileSystemGetDirectoryOptions::new();
    options.set_create(false);
    JsFuture::from(dir.get_directory_handle_with_options(&workspace.to_string(), &options))
        .await
        .is_ok()
}

/// Deletes a workspace folder Lifeline created (Delete of a session whose
/// environment Lifeline owns). One already gone counts as removed: a
/// removal interrupted after it happened is tried again at the next start.
pub async fn remove_workspace(workspace: lifeline_core::WorkspaceId) -> Result<(), String> {
    let gone = |e: String| if e == "NotFoundError" { Ok(()) } else { Err(e) };
    let dir = match workspaces_dir(false).await {
        Ok(dir) => dir,
        Err(e) => return gone(e),
    };
    let options = web_sys::FileSystemRemoveOptions::new();
    options.set_recursive(true);
    match JsFuture::from(dir.remove_entry_with_options(&workspace.to_string(), &options)).await {
        Ok(_) => Ok(()),
        Err(e) => gone(describe(e)),
    }
}
