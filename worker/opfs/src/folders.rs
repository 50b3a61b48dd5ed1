//! Local folders the user opened with the File System Access API.
//!
//! The browser never reveals a folder's path; what persists is its
//! directory handle, which IndexedDB can store. Each handle lives in the
//! database `lifeline-folders` under its [`FolderId`], written by the page
//! (the only place the picker can run) and read by the controller (to
//! observe access for the recovery report and for workspace-only access)
//! and by the runtime (to run commands in it).
//!
//! Access is observed here without prompting: only the page, on the click
//! that needs it, may ask the user again ([`request_access`]).

use js_sys::{Function, Object, Promise, Reflect};
use lifeline_core::environment::FolderAccess;
use lifeline_core::FolderId;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    FileSystemDirectoryHandle, IdbDatabase, IdbFactory, IdbOpenDbRequest, IdbRequest,
    IdbTransactionMode,
};

use crate::{js_text, OpfsWorkspace};

/// The database holding the handles; separate from the journal, whose
/// schema and writer fencing a handle store has no use for.
///
/// Its IndexedDB code stays here, apart from the controller's shared
/// `idb` module: the page's wasm carries it, and that module moved into a
/// crate of its own (with its `blocked` and `versionchange` handling, which
/// a store opened for one request and closed again has no use for) made the
/// page 1.8 KB (gzip) larger, over the page's size budget (measured
/// 2026-12-02).
pub const DATABASE: &str = "lifeline-folders";
const STORE: &str = "folders";
const VERSION: u32 = 1;

async fn settle(request: &IdbRequest) -> Result<JsValue, String> {
    // The promise's own resolve and reject are the handlers: no Rust
    // closure to keep alive or to leak when the other one never fires.
    let target = request.clone();
    let promise = Promise::new(&mut |resolve, reject| {
        target.set_onsuccess(Some(&resolve));
        target.set_onerror(Some(&reject));
    });
    let outcome = JsFuture::from(promise).await;
    request.set_onsuccess(None);
    request.set_onerror(None);
    match outcome {
        Ok(_) => request.result().map_err(|e| js_text(&e)),
        Err(_) => Err(match request.error() {
            Ok(Some(e)) => format!("{}: {}", e.name(), e.message()),
            _ => "the request failed".into(),
        }),
    }
}

async fn open() -> Result<IdbDatabase, String> {
    let factory: IdbFactory = Reflect::get(&js_sys::global(), &"indexedDB".into())
        .ok()
        .filter(|f| !f.is_undefined() && !f.is_null())
        .ok_or("this browser offers no IndexedDB here (private browsing can cause this)")?
        .unchecked_into();
    let request: IdbOpenDbRequest = factory
        .open_with_u32(DATABASE, VERSION)
        .map_err(|e| js_text(&e))?;
    let upgrading = request.clone();
    let upgrade = Closure::<dyn FnMut()>::new(move || {
        if let Ok(db) = upgrading.result() {
            let db: IdbDatabase = db.unchecked_into();
            if !db.object_store_names().contains(STORE) {
                let _ = db.create_object_store(STORE);
            }
        }
    });
    request.set_onupgradeneeded(Some(upgrade.as_ref().unchecked_ref()));
    let opened = settle(&request).await;
    request.set_onupgradeneeded(None);
    drop(upgrade);
    // Connections are closed after each use, so none holds up a later
    // schema version.
    Ok(opened?.unchecked_into())
}

/// Stores the handle the user picked, with the folder's name. Acknowledged
/// only once the transaction completed.
pub async fn remember(folder: FolderId, handle: &FileSystemDirectoryHandle) -> Result<(), String> {
    let db = open().await?;
    let result = async {
        let tx = db
            .transaction_with_str_and_mode(STORE, IdbTransactionMode::Readwrite)
            .map_err(|e| js_text(&e))?;
        let store = tx.object_store(STORE).map_err(|e| js_text(&e))?;
        let record = Object::new();
        Reflect::set(&record, &"name".into(), &handle.name().into()).map_err(|e| js_text(&e))?;
        Reflect::set(&record, &"handle".into(), handle).map_err(|e| js_text(&e))?;
        store
            .put_with_key(&record, &folder.to_string().into())
            .map_err(|e| js_text(&e))?;
        let done = tx.clone();
        let complete = Promise::new(&mut |resolve, reject| {
            done.set_oncomplete(Some(&resolve));
            done.set_onabort(Some(&reject));
            done.set_onerror(Some(&reject));
        });
        JsFuture::from(complete)
            .await
            .map_err(|_| match tx.error() {
                Some(e) => format!("{}: {}", e.name(), e.message()),
                None => "the folder could not be remembered".into(),
            })?;
        Ok(())
    }
    .await;
    db.close();
    result
}

/// The stored handle, if this browser still has it.
pub async fn recall(folder: FolderId) -> Result<Option<FileSystemDirectoryHandle>, String> {
    let db = open().await?;
    let result = async {
        let tx = db.transaction_with_str(STORE).map_err(|e| js_text(&e))?;
        let store = tx.object_store(STORE).map_err(|e| js_text(&e))?;
        let record = settle(
            &store
                .get(&folder.to_string().into())
                .map_err(|e| js_text(&e))?,
        )
        .await?;
        if record.is_undefined() || record.is_null() {
            return Ok(None);
        }
        // A record is checked after reading: anything but a directory
        // handle is treated as gone rather than trusted.
        let handle = Reflect::get(&record, &"handle".into()).unwrap_or(JsValue::UNDEFINED);
        Ok(handle.dyn_into::<FileSystemDirectoryHandle>().ok())
    }
    .await;
    db.close();
    result
}

/// Calls `queryPermission` or `requestPermission` for read and write.
async fn permission(handle: &FileSystemDirectoryHandle, method: &str) -> Option<FolderAccess> {
    let function: Function = Reflect::get(handle, &method.into()).ok()?.dyn_into().ok()?;
    let options = Object::new();
    let _ = Reflect::set(&options, &"mode".into(), &"readwrite".into());
    let promise: Promise = function.call1(handle, &options).ok()?.dyn_into().ok()?;
    Some(match JsFuture::from(promise).await {
        Ok(state) if state.as_string().as_deref() == Some("granted") => FolderAccess::Granted,
        Ok(_) => FolderAccess::NeedsPermission,
        Err(e) if error_name(&e) == "NotFoundError" => FolderAccess::Gone,
        Err(_) => FolderAccess::NeedsPermission,
    })
}

/// A rejection's `name` (`NotFoundError`, `AbortError`, ...), or empty.
pub fn error_name(error: &JsValue) -> String {
    Reflect::get(error, &"name".into())
        .ok()
        .and_then(|n| n.as_string())
        .unwrap_or_default()
}

/// Whether the folder can be used now, found by touching it: a granted
/// permission on a folder that was moved or deleted is still unusable.
async fn probe(handle: &FileSystemDirectoryHandle) -> FolderAccess {
    let Ok(values) = Reflect::get(handle, &"values".into())
        .and_then(|f| f.dyn_into::<Function>())
        .and_then(|f| f.call0(handle))
    else {
        return FolderAccess::Unsupported;
    };
    let next = Reflect::get(&values, &"next".into())
        .and_then(|f| f.dyn_into::<Function>())
        .and_then(|f| f.call0(&values))
        .and_then(|p| p.dyn_into::<Promise>());
    match next {
        Ok(promise) => match JsFuture::from(promise).await {
            Ok(_) => FolderAccess::Granted,
            Err(e) => match error_name(&e).as_str() {
                "NotFoundError" => FolderAccess::Gone,
                _ => FolderAccess::NeedsPermission,
            },
        },
        Err(_) => FolderAccess::NeedsPermission,
    }
}

/// The folder's access now, without asking the user anything.
pub async fn access(handle: &FileSystemDirectoryHandle) -> FolderAccess {
    match permission(handle, "queryPermission").await {
        Some(FolderAccess::Granted) | None => probe(handle).await,
        Some(other) => other,
    }
}

/// What a stored folder's access is now: `Gone` when the browser no longer
/// has its handle.
pub async fn observe(folder: FolderId) -> FolderAccess {
    match recall(folder).await {
        Ok(Some(handle)) => access(&handle).await,
        Ok(None) => FolderAccess::Gone,
        // The store itself is unreadable: the user cannot fix that by
        // allowing access, and nothing was decided about the folder.
        Err(_) => FolderAccess::Gone,
    }
}

/// Asks the user for read and write access again. Only the page can, and
/// only inside the click (user activation) that needs the folder.
pub async fn request_access(folder: FolderId) -> FolderAccess {
    match recall(folder).await {
        Ok(Some(handle)) => match permission(&handle, "requestPermission").await {
            Some(FolderAccess::Granted) | None => probe(&handle).await,
            Some(other) => other,
        },
        _ => FolderAccess::Gone,
    }
}

/// Opens the stored folder as a workspace, if access is granted now.
pub async fn open_workspace(
    folder: FolderId,
    workspace_id: &str,
) -> Result<OpfsWorkspace, FolderAccess> {
    let handle = recall(folder)
        .await
        .ok()
        .flatten()
        .ok_or(FolderAccess::Gone)?;
    match access(&handle).await {
        FolderAccess::Granted => Ok(OpfsWorkspace::in_folder(workspace_id, handle)),
        other => Err(other),
    }
}
