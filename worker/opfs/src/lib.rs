//! The session workspace in the Origin Private File System, as the shell's
//! [`Host`]: `navigator.storage.getDirectory()` → `workspaces/<workspace id>`,
//! or a local folder the user opened ([`folders`]), through the same handle
//! API.
//!
//! Only the asynchronous handle API is used (no sync access handles), so the
//! same code works in any worker and never blocks the event loop. Each
//! `write` goes through `createWritable()`, which writes to a swap file and
//! commits on `close()`: a write is all or nothing, and a command cancelled
//! mid-way leaves the file as of its last completed write. A write that
//! fails (a full quota) and had created its file removes it again, and
//! listings never show the browser's swap files (`<name>.crswap`): a failed
//! write leaves nothing in the workspace listing.

pub mod folders;

use js_sys::{Function, Promise, Reflect, Uint8Array};
use lifeline_shell::{DirEntry, EntryKind, FsError, Host, WorkspacePath};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DomException, File, FileSystemCreateWritableOptions, FileSystemDirectoryHandle,
    FileSystemFileHandle, FileSystemGetDirectoryOptions, FileSystemGetFileOptions,
    FileSystemHandle, FileSystemHandleKind, FileSystemRemoveOptions, FileSystemWritableFileStream,
    MessageChannel, WorkerGlobalScope,
};

/// The folder under the OPFS root that holds one folder per workspace.
pub const WORKSPACES_DIR: &str = "workspaces";

/// The text a full quota turns into, so the user knows what to do.
pub const QUOTA_MESSAGE: &str =
    "the browser's storage quota is full; free space by deleting old sessions";

/// The suffix of the swap file Chromium writes beside a file while a
/// writable stream on it is open; it is not the user's file.
const SWAP_SUFFIX: &str = ".crswap";

/// `setTimeout` takes a signed 32-bit delay and fires at once beyond it, so
/// longer sleeps are taken in pieces.
const MAX_TIMER_MS: u64 = i32::MAX as u64;

/// One session's workspace directory in OPFS.
#[derive(Clone, Debug)]
pub struct OpfsWorkspace {
    id: String,
    root: FileSystemDirectoryHandle,
}

/// `workspaces/` asked for before it is needed: the first
/// `navigator.storage.getDirectory()` in a browser session, and the first
/// lookup under it, took 5–18 ms each on a first visit, measured in the
/// runtime, which asked for them only once its `Start` had arrived.
/// `runtime.js` now asks as the worker boots (a promise of the
/// `workspaces` handle, made with `create`) and the runtime opens its
/// workspace from the answer.
///
/// Asking creates `workspaces/` if it is missing: a runtime's first
/// workspace would create it anyway, and to [`OpfsWorkspace::open_existing`]
/// an empty `workspaces/` and a missing one say the same (the workspace is
/// `NotFound`). A failure here, or under its answer, decides nothing: the
/// open asks again from the root and reports its own error. An answer that
/// is not a directory named [`WORKSPACES_DIR`] is not used.
#[derive(Clone)]
pub struct Ahead(Promise);

impl Ahead {
    /// The promise `runtime.js` made; anything else is no answer.
    pub fn from_js(asked: JsValue) -> Option<Ahead> {
        asked.dyn_into().ok().map(Ahead)
    }

    async fn answer(&self) -> Option<FileSystemDirectoryHandle> {
        let handle: FileSystemDirectoryHandle =
            JsFuture::from(self.0.clone()).await.ok()?.dyn_into().ok()?;
        (handle.name() == WORKSPACES_DIR).then_some(handle)
    }
}

impl OpfsWorkspace {
    /// Opens (creating if needed) `workspaces/<workspace_id>` in this origin's
    /// private file system. Must run in a worker.
    pub async fn open(workspace_id: &str) -> Result<Self, FsError> {
        Self::open_with(workspace_id, true).await
    }

    /// Opens a workspace that must already exist: a resumed session's
    /// retained workspace is never recreated empty (reference 003, 1.5).
    pub async fn open_existing(workspace_id: &str) -> Result<Self, FsError> {
        Self::open_with(workspace_id, false).await
    }

    /// [`Self::open`] (`create`) or [`Self::open_existing`], under the
    /// `workspaces/` asked for `ahead` when that answer is usable. A
    /// function of its own, so the controller (which opens workspaces only
    /// directly) does not link it.
    pub async fn open_ahead(
        ahead: Option<&Ahead>,
        workspace_id: &str,
        create: bool,
    ) -> Result<Self, FsError> {
        check_id(workspace_id)?;
        if let Some(workspaces) = match ahead {
            Some(ahead) => ahead.answer().await,
            None => None,
        } {
            // Whatever fails under the answer (the site's storage cleared
            // since it came) is asked again from the root, and its error
            // is the one reported.
            if let Ok(root) = child_dir(&workspaces, workspace_id, create).await {
                return Ok(OpfsWorkspace {
                    id: workspace_id.to_string(),
                    root,
                });
            }
        }
        Self::open_with(workspace_id, create).await
    }

    async fn open_with(workspace_id: &str, create: bool) -> Result<Self, FsError> {
        check_id(workspace_id)?;
        let scope: WorkerGlobalScope = js_sys::global().dyn_into().map_err(|_| {
            FsError::Other("the workspace can only be opened inside a worker".into())
        })?;
        let storage_root: FileSystemDirectoryHandle =
            await_value(scope.navigator().storage().get_directory())
                .await
                .map_err(|error| match describe(&error, FsError::NotADirectory) {
                    FsError::NotFound | FsError::Other(_) => FsError::Other(format!(
                        "the browser's private file storage is not available ({}); \
                         private browsing or blocked site data can cause this",
                        js_text(&error)
                    )),
                    other => other,
                })?
                .unchecked_into();
        let workspaces = child_dir(&storage_root, WORKSPACES_DIR, create).await?;
        let root = child_dir(&workspaces, workspace_id, create).await?;
        Ok(OpfsWorkspace {
            id: workspace_id.to_string(),
            root,
        })
    }

    /// A workspace in a local folder the user opened: the handle is the
    /// root, and nothing here ever creates or removes the folder itself.
    pub fn in_folder(workspace_id: &str, root: FileSystemDirectoryHandle) -> Self {
        OpfsWorkspace {
            id: workspace_id.to_string(),
            root,
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The directory at `path`; a file on the way is `NotADirectory`.
    async fn dir(&self, path: &WorkspacePath) -> Result<FileSystemDirectoryHandle, FsError> {
        let mut current = self.root.clone();
        for name in path.components() {
            current = child_dir(&current, name, false).await?;
        }
        Ok(current)
    }

    /// The directory holding `path` and the last name; the root has neither.
    async fn parent_of<'p>(
        &self,
        path: &'p WorkspacePath,
    ) -> Result<(FileSystemDirectoryHandle, &'p str), FsError> {
        match (path.parent(), path.name()) {
            (Some(parent), Some(name)) => Ok((self.dir(&parent).await?, name)),
            _ => Err(FsError::IsADirectory),
        }
    }

    async fn file_handle(
        &self,
        path: &WorkspacePath,
        create: bool,
    ) -> Result<FileSystemFileHandle, FsError> {
        let (parent, name) = self.parent_of(path).await?;
        let options = FileSystemGetFileOptions::new();
        options.set_create(create);
        await_value(parent.get_file_handle_with_options(name, &options))
            .await
            .map(JsCast::unchecked_into)
            .map_err(|error| describe(&error, FsError::IsADirectory))
    }
}

/// A workspace id names one folder under `workspaces/`, nothing else.
fn check_id(workspace_id: &str) -> Result<(), FsError> {
    if workspace_id.is_empty()
        || workspace_id == "."
        || workspace_id == ".."
        || workspace_id.contains(['/', '\\', '\0'])
    {
        return Err(FsError::InvalidPath(format!(
            "'{workspace_id}' cannot name a workspace"
        )));
    }
    Ok(())
}

async fn child_dir(
    parent: &FileSystemDirectoryHandle,
    name: &str,
    create: bool,
) -> Result<FileSystemDirectoryHandle, FsError> {
    let options = FileSystemGetDirectoryOptions::new();
    options.set_create(create);
    await_value(parent.get_directory_handle_with_options(name, &options))
        .await
        .map(JsCast::unchecked_into)
        .map_err(|error| describe(&error, FsError::NotADirectory))
}

async fn await_value(promise: Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(promise).await
}

/// `String(value)`: what a JS developer would see printed.
pub(crate) fn js_text(value: &JsValue) -> String {
    if let Some(text) = value.as_string() {
        return text;
    }
    Reflect::get(&js_sys::global(), &JsValue::from_str("String"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .and_then(|f| f.call1(&JsValue::UNDEFINED, value).ok())
        .and_then(|text| text.as_string())
        .unwrap_or_else(|| "an unprintable value".into())
}

/// Maps a rejected OPFS promise to an [`FsError`]. `mismatch` is what a
/// `TypeMismatchError` means at this call: asking for a directory where a
/// file is (`NotADirectory`) or for a file where a directory is
/// (`IsADirectory`).
fn describe(error: &JsValue, mismatch: FsError) -> FsError {
    let name = if let Some(exception) = error.dyn_ref::<DomException>() {
        exception.name()
    } else if let Some(error) = error.dyn_ref::<js_sys::Error>() {
        String::from(error.name())
    } else {
        String::new()
    };
    match name.as_str() {
        "NotFoundError" => FsError::NotFound,
        "TypeMismatchError" => mismatch,
        "InvalidModificationError" => FsError::NotEmpty,
        "QuotaExceededError" => FsError::Other(QUOTA_MESSAGE.into()),
        // OPFS rejects names such as "." or ones containing "/" with a TypeError.
        "TypeError" => FsError::InvalidPath(format!(
            "Invalid file name for the browser's file storage ({})",
            js_text(error)
        )),
        "NoModificationAllowedError" => FsError::Other(
            "the file is locked by another writer (another tab or worker); try again".into(),
        ),
        "InvalidStateError" => {
            FsError::Other("the file changed or was removed while in use; try again".into())
        }
        "SecurityError" | "NotAllowedError" => FsError::Other(
            "the browser refused access to its private file storage \
             (private browsing or blocked site data can cause this)"
                .into(),
        ),
        _ => FsError::Other(format!("file storage error: {}", js_text(error))),
    }
}

impl OpfsWorkspace {
    async fn write_file(
        &self,
        path: &WorkspacePath,
        data: &[u8],
        append: bool,
    ) -> Result<(), FsError> {
        let handle = self.file_handle(path, true).await?;
        let options = FileSystemCreateWritableOptions::new();
        options.set_keep_existing_data(append);
        let stream: FileSystemWritableFileStream =
            await_value(handle.create_writable_with_options(&options))
                .await
                .map_err(|error| describe(&error, FsError::IsADirectory))?
                .unchecked_into();
        let result = async {
            if append {
                let file: File = await_value(handle.get_file()).await?.unchecked_into();
                await_value(stream.seek_with_f64(file.size())?).await?;
            }
            if !data.is_empty() {
                // A copy in JS memory: the write completes after this call
                // returns, when the wasm memory might have moved.
                let bytes = Uint8Array::from(data);
                await_value(stream.write_with_js_u8_array(&bytes)?).await?;
            }
            await_value(stream.close()).await
        }
        .await;
        match result {
            Ok(_) => Ok(()),
            Err(error) => {
                // Release the swap file and its lock; the original stays intact.
                let _ = await_value(stream.abort()).await;
                Err(describe(&error, FsError::IsADirectory))
            }
        }
    }

    async fn list_all(&self, path: &WorkspacePath) -> Result<Vec<DirEntry>, FsError> {
        let dir = self.dir(path).await?;
        let iterator = dir.values();
        let mut entries = Vec::new();
        loop {
            let step = async { await_value(iterator.next()?).await }
                .await
                .map_err(|error| describe(&error, FsError::NotADirectory))?;
            let done = Reflect::get(&step, &JsValue::from_str("done"))
                .map(|done| done.is_truthy())
                .unwrap_or(true);
            if done {
                break;
            }
            let Ok(value) = Reflect::get(&step, &JsValue::from_str("value")) else {
                break;
            };
            let handle: FileSystemHandle = value.unchecked_into();
            entries.push(DirEntry {
                name: handle.name(),
                kind: match handle.kind() {
                    FileSystemHandleKind::Directory => EntryKind::Directory,
                    _ => EntryKind::File,
                },
            });
        }
        Ok(entries)
    }
}

impl Host for OpfsWorkspace {
    async fn read(&self, path: &WorkspacePath, max_len: u64) -> Result<Vec<u8>, FsError> {
        let handle = self.file_handle(path, false).await?;
        let file: File = await_value(handle.get_file())
            .await
            .map_err(|error| describe(&error, FsError::IsADirectory))?
            .unchecked_into();
        if file.size() > max_len as f64 {
            return Err(FsError::TooLarge);
        }
        let buffer = await_value(file.array_buffer())
            .await
            .map_err(|error| describe(&error, FsError::IsADirectory))?;
        Ok(Uint8Array::new(&buffer).to_vec())
    }

    async fn write(&self, path: &WorkspacePath, data: &[u8], append: bool) -> Result<(), FsError> {
        let created = match self.file_handle(path, false).await {
            Ok(_) => false,
            Err(FsError::NotFound) => true,
            Err(error) => return Err(error),
        };
        let result = self.write_file(path, data, append).await;
        if result.is_err() && created {
            // Nothing was there before this write: nothing stays after it.
            if let Ok((parent, name)) = self.parent_of(path).await {
                let _ = await_value(parent.remove_entry(name)).await;
            }
        }
        result
    }

    async fn list(&self, path: &WorkspacePath) -> Result<Vec<DirEntry>, FsError> {
        let mut entries = self.list_all(path).await?;
        entries.retain(|e| !(e.kind == EntryKind::File && e.name.ends_with(SWAP_SUFFIX)));
        Ok(entries)
    }

    async fn kind(&self, path: &WorkspacePath) -> Result<Option<EntryKind>, FsError> {
        if path.is_root() {
            return Ok(Some(EntryKind::Directory));
        }
        // One lookup answers it: a file handle for a directory is a type mismatch.
        match self.file_handle(path, false).await {
            Ok(_) => Ok(Some(EntryKind::File)),
            Err(FsError::IsADirectory) => Ok(Some(EntryKind::Directory)),
            Err(FsError::NotFound) | Err(FsError::NotADirectory) => Ok(None),
            Err(error) => Err(error),
        }
    }

    async fn create_dir(&self, path: &WorkspacePath) -> Result<(), FsError> {
        if self.kind(path).await?.is_some() {
            return Err(FsError::AlreadyExists);
        }
        let (parent, name) = self.parent_of(path).await?;
        child_dir(&parent, name, true).await.map(|_| ())
    }

    async fn remove(&self, path: &WorkspacePath, recursive: bool) -> Result<(), FsError> {
        let (parent, name) = self.parent_of(path).await?;
        let options = FileSystemRemoveOptions::new();
        options.set_recursive(recursive);
        await_value(parent.remove_entry_with_options(name, &options))
            .await
            .map(|_| ())
            .map_err(|error| describe(&error, FsError::NotADirectory))
    }

    async fn sleep(&self, millis: u64) {
        let mut left = millis;
        loop {
            let step = left.min(MAX_TIMER_MS);
            timeout(step as i32).await;
            left -= step;
            if left == 0 {
                break;
            }
        }
    }

    async fn yield_now(&self) {
        // A message is a macrotask without setTimeout's 4 ms clamp: timers,
        // port messages (such as a cancel) and output flushing get to run.
        let Ok(channel) = MessageChannel::new() else {
            timeout(0).await;
            return;
        };
        let port = channel.port1();
        let promise = Promise::new(&mut |resolve, _reject| port.set_onmessage(Some(&resolve)));
        if channel.port2().post_message(&JsValue::UNDEFINED).is_err() {
            timeout(0).await;
            return;
        }
        let _ = JsFuture::from(promise).await;
        port.set_onmessage(None);
        port.close();
        channel.port2().close();
    }

    async fn eval_js(&self, source: &str) -> Result<String, String> {
        // Global (indirect) eval; the page's CSP must allow 'unsafe-eval'.
        let mut value = js_sys::eval(source).map_err(|error| js_text(&error))?;
        if let Some(promise) = value.dyn_ref::<Promise>() {
            value = JsFuture::from(promise.clone())
                .await
                .map_err(|error| js_text(&error))?;
        }
        Ok(js_text(&value))
    }

    type Regex = js_sys::RegExp;

    fn regex(&self, source: &str, ignore_case: bool) -> Result<js_sys::RegExp, String> {
        let flags = if ignore_case { "iu" } else { "u" };
        regexp(source, flags).map_err(|error| {
            // "Invalid regular expression: /(/u: Unterminated group": the
            // caller names the pattern already.
            let text = js_text(&error);
            text.rsplit(": ").next().unwrap_or(&text).to_string()
        })
    }

    fn is_match(&self, regex: &js_sys::RegExp, line: &str) -> bool {
        regex.test(line)
    }
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `RegExp(source, flags)`, with its `SyntaxError` caught (js_sys's
    /// constructor binding would throw through the module).
    #[wasm_bindgen(catch, js_name = RegExp)]
    fn regexp(source: &str, flags: &str) -> Result<js_sys::RegExp, JsValue>;
}

/// Cancels a pending timer when the sleep is dropped, so a cancelled
/// `sleep 3600` leaves nothing behind.
struct TimerGuard(Option<JsValue>);

impl Drop for TimerGuard {
    fn drop(&mut self) {
        if let Some(id) = self.0.take() {
            let global = js_sys::global();
            if let Ok(clear) = Reflect::get(&global, &JsValue::from_str("clearTimeout")) {
                if let Ok(clear) = clear.dyn_into::<Function>() {
                    let _ = clear.call1(&global, &id);
                }
            }
        }
    }
}

async fn timeout(millis: i32) {
    let global = js_sys::global();
    let set_timeout = Reflect::get(&global, &JsValue::from_str("setTimeout"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok());
    let Some(set_timeout) = set_timeout else {
        return;
    };
    let mut guard = TimerGuard(None);
    let promise = Promise::new(&mut |resolve, _reject| {
        guard.0 = set_timeout
            .call2(&global, &resolve, &JsValue::from(millis))
            .ok();
    });
    let _ = JsFuture::from(promise).await;
    guard.0 = None;
}
