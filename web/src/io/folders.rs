//! Local folders (File System Access API): only a page can show the
//! folder picker, and only a click may ask the user for access again. The
//! handles are kept in IndexedDB by `lifeline_opfs::folders`, which the
//! workers read too.

use lifeline_opfs::folders::error_name;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::FileSystemDirectoryHandle;

use crate::i18n::{self, Msg};

pub use lifeline_opfs::folders::{remember, request_access};

/// The browser's folder picker, where it has one.
pub fn picker() -> Option<js_sys::Function> {
    let window = web_sys::window()?;
    js_sys::Reflect::get(&window, &"showDirectoryPicker".into())
        .ok()?
        .dyn_into()
        .ok()
}

/// Shows the browser's folder picker; `Ok(None)` when the user cancelled.
pub async fn pick_folder() -> Result<Option<FileSystemDirectoryHandle>, String> {
    let Some(show) = picker() else {
        return Err(i18n::now(Msg::EnvFolderUnsupported).into());
    };
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"mode".into(), &"readwrite".into());
    // The picker starts where it was last left for Lifeline.
    let _ = js_sys::Reflect::set(&options, &"id".into(), &"lifeline".into());
    let promise: js_sys::Promise = show
        .call1(&JsValue::UNDEFINED, &options)
        .map_err(|e| error_text(&e))?
        .dyn_into()
        .map_err(|_| String::from("the folder picker did not answer"))?;
    match JsFuture::from(promise).await {
        Ok(handle) => handle
            .dyn_into::<FileSystemDirectoryHandle>()
            .map(Some)
            .map_err(|_| String::from("the picker returned something other than a folder")),
        Err(e) if error_name(&e) == "AbortError" => Ok(None),
        Err(e) => Err(error_text(&e)),
    }
}

fn error_text(error: &JsValue) -> String {
    js_sys::Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| error_name(error))
}
