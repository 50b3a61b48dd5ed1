//! Local folders: stored handles, access observed without prompting, and
//! the shell running in a folder, inside a dedicated worker of headless
//! Chromium. A folder the user would pick is played by an OPFS directory
//! outside `workspaces/`: the same `FileSystemDirectoryHandle` type, and
//! the only kind a test can create without the browser's picker.

use lifeline_core::environment::FolderAccess;
use lifeline_core::FolderId;
use lifeline_runtime::opfs::folders;
use lifeline_shell::{run, Context, Host, WorkspacePath};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::{FileSystemDirectoryHandle, FileSystemGetDirectoryOptions, WorkerGlobalScope};

wasm_bindgen_test_configure!(run_in_dedicated_worker);

fn fresh_id() -> FolderId {
    let raw = (js_sys::Math::random() * 2f64.powi(52)) as u128 + 1;
    FolderId::from_u128(raw << 40 | 0x1234).unwrap()
}

async fn storage_root() -> FileSystemDirectoryHandle {
    let scope: WorkerGlobalScope = js_sys::global().unchecked_into();
    JsFuture::from(scope.navigator().storage().get_directory())
        .await
        .unwrap()
        .unchecked_into()
}

/// A folder "the user picked": a fresh directory beside the workspaces.
async fn user_folder(label: &str) -> (FileSystemDirectoryHandle, String) {
    let name = format!("user-{label}-{}", js_sys::Math::random().to_bits());
    let options = FileSystemGetDirectoryOptions::new();
    options.set_create(true);
    let handle = JsFuture::from(
        storage_root()
            .await
            .get_directory_handle_with_options(&name, &options),
    )
    .await
    .unwrap()
    .unchecked_into();
    (handle, name)
}

#[wasm_bindgen_test]
async fn a_remembered_folder_is_recalled_and_observed_granted() {
    let (handle, name) = user_folder("recall").await;
    let id = fresh_id();
    folders::remember(id, &handle).await.unwrap();
    let recalled = folders::recall(id).await.unwrap().expect("stored");
    assert_eq!(recalled.name(), name);
    assert_eq!(folders::observe(id).await, FolderAccess::Granted);
    // Remembering again under the same id replaces, never duplicates.
    folders::remember(id, &handle).await.unwrap();
    assert_eq!(folders::observe(id).await, FolderAccess::Granted);
}

#[wasm_bindgen_test]
async fn an_unknown_folder_is_gone_and_cannot_be_opened() {
    let id = fresh_id();
    assert_eq!(folders::recall(id).await.unwrap(), None);
    assert_eq!(folders::observe(id).await, FolderAccess::Gone);
    assert_eq!(
        folders::open_workspace(id, "w").await.err(),
        Some(FolderAccess::Gone)
    );
}

#[wasm_bindgen_test]
async fn a_folder_removed_outside_lifeline_is_observed_gone() {
    let (handle, name) = user_folder("removed").await;
    let id = fresh_id();
    folders::remember(id, &handle).await.unwrap();
    JsFuture::from(storage_root().await.remove_entry(&name))
        .await
        .unwrap();
    assert_eq!(folders::observe(id).await, FolderAccess::Gone);
}

#[wasm_bindgen_test]
async fn the_shell_runs_in_the_folder_and_leaves_the_users_files() {
    let (handle, _) = user_folder("shell").await;
    let id = fresh_id();
    folders::remember(id, &handle).await.unwrap();
    let ws = folders::open_workspace(id, "workspace-id").await.unwrap();
    let notes = WorkspacePath::parse("notes.txt").unwrap();
    ws.write(&notes, b"the user's\n", false).await.unwrap();
    let mut out = String::new();
    let status = run(
        &ws,
        "cat notes.txt > copy.txt && echo made > made.txt",
        &Context::default(),
        &mut |_, text: &str| out.push_str(text),
    )
    .await;
    assert_eq!(status, 0, "{out}");
    // Read back through a handle of its own: the files are in the folder.
    let again = folders::open_workspace(id, "other").await.unwrap();
    let read = |p: &'static str| {
        let again = again.clone();
        async move {
            again
                .read(&WorkspacePath::parse(p).unwrap(), 1024)
                .await
                .unwrap()
        }
    };
    assert_eq!(read("copy.txt").await, b"the user's\n");
    assert_eq!(read("made.txt").await, b"made\n");
    assert_eq!(read("notes.txt").await, b"the user's\n");
}
