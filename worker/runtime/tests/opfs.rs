//! The OPFS workspace host and the shell running on it, inside a dedicated
//! worker of headless Chromium (where the runtime runs in production).

use lifeline_runtime::opfs::{Ahead, OpfsWorkspace};
use lifeline_shell::{run, Context, EntryKind, FsError, Host, Stream, WorkspacePath};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// A fresh workspace per test: a random id, so reruns and parallel tests
/// never see each other's files.
async fn fresh(label: &str) -> OpfsWorkspace {
    let id = format!("test-{label}-{}", js_sys::Math::random().to_bits());
    OpfsWorkspace::open(&id).await.unwrap()
}

fn p(path: &str) -> WorkspacePath {
    WorkspacePath::parse(path).unwrap()
}

struct Outcome {
    status: i32,
    stdout: String,
    stderr: String,
}

async fn sh_with(host: &OpfsWorkspace, ctx: &Context, line: &str) -> Outcome {
    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut out = |stream: Stream, text: &str| match stream {
        Stream::Stdout => stdout.push_str(text),
        Stream::Stderr => stderr.push_str(text),
    };
    let status = run(host, line, ctx, &mut out).await;
    Outcome {
        status,
        stdout,
        stderr,
    }
}

async fn sh(host: &OpfsWorkspace, line: &str) -> Outcome {
    sh_with(host, &Context::default(), line).await
}

#[wasm_bindgen_test]
async fn write_append_and_read_back() {
    let ws = fresh("rw").await;
    ws.write(&p("a.txt"), b"one\n", false).await.unwrap();
    ws.write(&p("a.txt"), b"two\n", true).await.unwrap();
    assert_eq!(ws.read(&p("a.txt"), 1024).await.unwrap(), b"one\ntwo\n");
    ws.write(&p("a.txt"), b"new", false).await.unwrap();
    assert_eq!(ws.read(&p("a.txt"), 1024).await.unwrap(), b"new");
    ws.write(&p("empty"), b"", true).await.unwrap();
    assert_eq!(ws.read(&p("empty"), 1024).await.unwrap(), b"");
    assert_eq!(ws.read(&p("a.txt"), 2).await, Err(FsError::TooLarge));
}

#[wasm_bindgen_test]
async fn reopening_sees_the_same_files() {
    let ws = fresh("reopen").await;
    ws.write(&p("kept"), b"x", false).await.unwrap();
    let again = OpfsWorkspace::open(ws.id()).await.unwrap();
    assert_eq!(again.read(&p("kept"), 10).await.unwrap(), b"x");
}

#[wasm_bindgen_test]
async fn kinds_lists_and_errors() {
    let ws = fresh("kinds").await;
    ws.create_dir(&p("d")).await.unwrap();
    ws.write(&p("d/f"), b"1", false).await.unwrap();
    ws.create_dir(&p("d/sub")).await.unwrap();
    assert_eq!(ws.kind(&p("/")).await, Ok(Some(EntryKind::Directory)));
    assert_eq!(ws.kind(&p("d")).await, Ok(Some(EntryKind::Directory)));
    assert_eq!(ws.kind(&p("d/f")).await, Ok(Some(EntryKind::File)));
    assert_eq!(ws.kind(&p("nope")).await, Ok(None));
    assert_eq!(ws.kind(&p("d/f/x")).await, Ok(None));
    let mut listing: Vec<_> = ws
        .list(&p("d"))
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.name, e.kind))
        .collect();
    listing.sort();
    assert_eq!(
        listing,
        vec![
            ("f".to_string(), EntryKind::File),
            ("sub".to_string(), EntryKind::Directory)
        ]
    );
    assert_eq!(ws.read(&p("nope"), 10).await, Err(FsError::NotFound));
    assert_eq!(ws.read(&p("d"), 10).await, Err(FsError::IsADirectory));
    assert_eq!(ws.read(&p("d/f/x"), 10).await, Err(FsError::NotADirectory));
    assert_eq!(ws.list(&p("d/f")).await, Err(FsError::NotADirectory));
    assert_eq!(ws.list(&p("gone")).await, Err(FsError::NotFound));
    assert_eq!(
        ws.write(&p("d"), b"", false).await,
        Err(FsError::IsADirectory)
    );
    assert_eq!(
        ws.write(&p("no/f"), b"", false).await,
        Err(FsError::NotFound)
    );
    assert_eq!(ws.create_dir(&p("d")).await, Err(FsError::AlreadyExists));
    assert_eq!(ws.create_dir(&p("d/f")).await, Err(FsError::AlreadyExists));
    assert_eq!(ws.create_dir(&p("x/y")).await, Err(FsError::NotFound));
    assert_eq!(ws.remove(&p("d"), false).await, Err(FsError::NotEmpty));
    assert_eq!(ws.remove(&p("zz"), false).await, Err(FsError::NotFound));
    ws.remove(&p("d/f"), false).await.unwrap();
    ws.remove(&p("d"), true).await.unwrap();
    assert_eq!(ws.kind(&p("d")).await, Ok(None));
}

#[wasm_bindgen_test]
async fn the_shell_runs_against_opfs() {
    let ws = fresh("shell").await;
    let out = sh(
        &ws,
        "echo start >> marks.txt; echo again >> marks.txt; cat marks.txt",
    )
    .await;
    assert_eq!((out.status, out.stdout.as_str()), (0, "start\nagain\n"));
    let out = sh(&ws, "mkdir -p a/b/c && touch a/b/c/f && ls a/b/c").await;
    assert_eq!((out.status, out.stdout.as_str()), (0, "f\n"));
    let out = sh(
        &ws,
        "seq 1 5 > nums; cp nums a/b; mv a/b/nums a/moved; cat a/moved | wc -l",
    )
    .await;
    assert_eq!(
        (out.status, out.stdout.as_str(), out.stderr.as_str()),
        (0, "5\n", "")
    );
    let out = sh(&ws, "cp -r a copy && ls copy copy/b && rm -r a && ls").await;
    assert_eq!(
        (out.status, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            "copy:\nb\nmoved\n\ncopy/b:\nc\ncopy\nmarks.txt\nnums\n",
            ""
        )
    );
    let out = sh(&ws, "cat missing.txt").await;
    assert_eq!(
        (out.status, out.stderr.as_str()),
        (1, "cat: missing.txt: No such file or directory\n")
    );
    let out = sh(&ws, "rm copy").await;
    assert_eq!(
        (out.status, out.stderr.as_str()),
        (1, "rm: cannot remove 'copy': Is a directory\n")
    );
    let out = sh(&ws, "echo -n abc > h; sha256sum h").await;
    assert_eq!(
        out.stdout,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  h\n"
    );
}

/// grep's patterns are compiled by the browser's own `RegExp`: the lines
/// the native tests expect (over `regress`, the same ECMAScript semantics)
/// match here too, and a pattern no engine reads is named with its reason.
#[wasm_bindgen_test]
async fn grep_matches_with_the_browsers_regexp() {
    let ws = fresh("grep").await;
    let out = sh(
        &ws,
        "echo 'aa bb' > f; echo abab >> f; echo 'the then' >> f; \
         echo 'x{1}' >> f; echo 2026-12-05 >> f; echo 'caf\u{e9} \u{1f600}' >> f",
    )
    .await;
    assert_eq!((out.status, out.stderr.as_str()), (0, ""));
    for (line, expected) in [
        (r"grep '\(ab\)\1' f", "abab\n"),
        (r"grep -E '(a)\1 (b)\2' f", "aa bb\n"),
        (r"grep '\<the\>' f", "the then\n"),
        (r"grep '[0-9]\{4\}-' f", "2026-12-05\n"),
        (
            "grep -E '^[[:digit:]]{4}(-[[:digit:]]{2}){2}$' f",
            "2026-12-05\n",
        ),
        ("grep 'x{1}' f", "x{1}\n"),
        ("grep -E 'x{' f", "x{1}\n"),
        ("grep -c 'caf. .$' f", "1\n"),
        ("grep -i 'CAF\u{c9}' f", "caf\u{e9} \u{1f600}\n"),
        ("grep -w -c the f", "1\n"),
        ("grep -F -c '{1}' f", "1\n"),
    ] {
        let out = sh(&ws, line).await;
        assert_eq!(
            (out.status, out.stdout.as_str(), out.stderr.as_str()),
            (0, expected, ""),
            "{line}"
        );
    }
    let out = sh(&ws, "grep -E 'a(' f").await;
    assert_eq!(
        (out.status, out.stderr.as_str()),
        (
            2,
            "grep: invalid regular expression 'a(': Unterminated group\n"
        )
    );
}

#[wasm_bindgen_test]
async fn big_output_streams_and_yields_through_real_macrotasks() {
    let ws = fresh("stream").await;
    let mut chunks = 0usize;
    let mut total = 0usize;
    let mut out = |_: Stream, text: &str| {
        chunks += 1;
        total += text.len();
    };
    let status = run(&ws, "seq 1 200000", &Context::default(), &mut out).await;
    assert_eq!(status, 0);
    assert_eq!(total, 1_288_895);
    assert!(chunks >= total / (64 * 1024));
}

#[wasm_bindgen_test]
async fn sleep_waits_on_a_real_timer() {
    let ws = fresh("sleep").await;
    let started = js_sys::Date::now();
    ws.sleep(30).await;
    assert!(js_sys::Date::now() - started >= 25.0);
}

#[wasm_bindgen_test]
async fn js_evaluates_only_with_the_capability() {
    let ws = fresh("js").await;
    let denied = sh(&ws, "js 1+1").await;
    assert_eq!(denied.status, 126);
    let ctx = Context {
        capabilities: vec!["js".to_string()],
        ..Context::default()
    };
    let out = sh_with(&ws, &ctx, "js '[1, 2].map(x => x * 2).join(\",\")'").await;
    assert_eq!((out.status, out.stdout.as_str()), (0, "2,4\n"));
    let out = sh_with(&ws, &ctx, "js 'Promise.resolve(7)'").await;
    assert_eq!(out.stdout, "7\n");
    let out = sh_with(&ws, &ctx, "js 'throw new TypeError(\"bad\")'").await;
    assert_eq!(
        (out.status, out.stderr.as_str()),
        (1, "js: TypeError: bad\n")
    );
}

#[wasm_bindgen_test]
async fn invalid_workspace_ids_are_refused() {
    assert!(matches!(
        OpfsWorkspace::open("../x").await,
        Err(FsError::InvalidPath(_))
    ));
    assert!(matches!(
        OpfsWorkspace::open("").await,
        Err(FsError::InvalidPath(_))
    ));
}

/// The OPFS root, as the runtime's worker sees it.
async fn storage_root() -> web_sys::FileSystemDirectoryHandle {
    use wasm_bindgen::JsCast;
    let scope: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    wasm_bindgen_futures::JsFuture::from(scope.navigator().storage().get_directory())
        .await
        .unwrap()
        .unchecked_into()
}

/// What `runtime.js` asks for as the worker boots: `workspaces/`, made if
/// missing.
fn ask_ahead() -> Ahead {
    let asked = wasm_bindgen_futures::future_to_promise(async {
        let options = web_sys::FileSystemGetDirectoryOptions::new();
        options.set_create(true);
        wasm_bindgen_futures::JsFuture::from(
            storage_root().await.get_directory_handle_with_options(
                lifeline_runtime::opfs::WORKSPACES_DIR,
                &options,
            ),
        )
        .await
    });
    Ahead::from_js(asked.into()).unwrap()
}

/// What the runtime opens from `workspaces/` asked for at boot is what a
/// direct open gives: a resume's missing workspace is `NotFound` and not
/// made; a new one is made and found again either way.
#[wasm_bindgen_test]
async fn a_workspace_opened_from_the_directory_asked_ahead_is_opened_as_directly() {
    let ahead = ask_ahead();
    let id = format!("test-ahead-{}", js_sys::Math::random().to_bits());
    assert_eq!(
        OpfsWorkspace::open_ahead(Some(&ahead), &id, false)
            .await
            .err(),
        Some(FsError::NotFound)
    );
    assert_eq!(
        OpfsWorkspace::open_existing(&id).await.err(),
        Some(FsError::NotFound),
        "asking for it did not make it"
    );
    let ws = OpfsWorkspace::open_ahead(Some(&ahead), &id, true)
        .await
        .unwrap();
    ws.write(&p("kept"), b"x", false).await.unwrap();
    let again = OpfsWorkspace::open_ahead(Some(&ahead), &id, false)
        .await
        .unwrap();
    assert_eq!(again.read(&p("kept"), 10).await.unwrap(), b"x");
    let direct = OpfsWorkspace::open_existing(&id).await.unwrap();
    assert_eq!(direct.read(&p("kept"), 10).await.unwrap(), b"x");
    assert!(matches!(
        OpfsWorkspace::open_ahead(Some(&ahead), "..", true).await,
        Err(FsError::InvalidPath(_))
    ));
    assert!(Ahead::from_js(wasm_bindgen::JsValue::UNDEFINED).is_none());
}

/// An answer that is not `workspaces/` (here the root itself) is not used:
/// the workspace is made where a direct open finds it.
#[wasm_bindgen_test]
async fn an_answer_that_is_not_the_workspaces_folder_is_not_used() {
    let asked = wasm_bindgen_futures::future_to_promise(async { Ok(storage_root().await.into()) });
    let ahead = Ahead::from_js(asked.into()).unwrap();
    made_where_found(&ahead, "other").await;
}

/// The site's storage cleared after the answer came: its handle names a
/// folder that is gone, and the open asks again from the root (a new
/// workspace is made; a resume's is `NotFound`, as a direct open says).
#[wasm_bindgen_test]
async fn a_directory_removed_after_it_was_asked_for_is_asked_for_again() {
    let ahead = ask_ahead();
    let before = format!("test-gone-{}", js_sys::Math::random().to_bits());
    OpfsWorkspace::open_ahead(Some(&ahead), &before, true)
        .await
        .unwrap();
    let options = web_sys::FileSystemRemoveOptions::new();
    options.set_recursive(true);
    wasm_bindgen_futures::JsFuture::from(
        storage_root()
            .await
            .remove_entry_with_options(lifeline_runtime::opfs::WORKSPACES_DIR, &options),
    )
    .await
    .unwrap();
    assert_eq!(
        OpfsWorkspace::open_ahead(Some(&ahead), &before, false)
            .await
            .err(),
        Some(FsError::NotFound)
    );
    made_where_found(&ahead, "gone").await;
}

/// A new workspace made under `ahead` is the one a direct open finds:
/// a file written there is read back through it.
async fn made_where_found(ahead: &Ahead, label: &str) {
    let id = format!("test-{label}-{}", js_sys::Math::random().to_bits());
    let ws = OpfsWorkspace::open_ahead(Some(ahead), &id, true)
        .await
        .unwrap();
    ws.write(&p("made"), b"y", false).await.unwrap();
    let direct = OpfsWorkspace::open_existing(&id).await.unwrap();
    assert_eq!(direct.read(&p("made"), 10).await.unwrap(), b"y");
}
