//! A model's tool calls become command lines (`lifeline_core::model::tool_line`);
//! these tests run the generated lines through the real runtime shell
//! (`lifeline_shell::run`) over an in-memory workspace and read the result
//! back, so the quoting is proven exact rather than assumed.

use lifeline_core::flat::FlatSet;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::pin;
use std::task::{Context as TaskContext, Poll, Waker};

use lifeline_core::model::{quote, tool_line};
use lifeline_core::profile::Tool;
use lifeline_core::schema::limits;
use lifeline_core::ToolCallRecord;
use lifeline_shell::{run, Context, DirEntry, EntryKind, FsError, Host, Stream, WorkspacePath};

/// Files only (directories are implied by paths), enough for cat, ls, echo.
#[derive(Default)]
struct MemHost {
    files: RefCell<BTreeMap<String, Vec<u8>>>,
}

impl Host for MemHost {
    type Regex = regress::Regex;
    fn regex(&self, source: &str, ignore_case: bool) -> Result<regress::Regex, String> {
        let flags = if ignore_case { "iu" } else { "u" };
        regress::Regex::with_flags(source, flags).map_err(|e| e.to_string())
    }
    fn is_match(&self, regex: &regress::Regex, line: &str) -> bool {
        regex.find(line).is_some()
    }
    async fn read(&self, path: &WorkspacePath, max_len: u64) -> Result<Vec<u8>, FsError> {
        match self.files.borrow().get(path.as_str()) {
            Some(d) if d.len() as u64 > max_len => Err(FsError::TooLarge),
            Some(d) => Ok(d.clone()),
            None => Err(FsError::NotFound),
        }
    }
    async fn write(&self, path: &WorkspacePath, data: &[u8], append: bool) -> Result<(), FsError> {
        let mut files = self.files.borrow_mut();
        let entry = files.entry(path.to_string()).or_default();
        if !append {
            entry.clear();
        }
        entry.extend_from_slice(data);
        Ok(())
    }
    async fn list(&self, path: &WorkspacePath) -> Result<Vec<DirEntry>, FsError> {
        let prefix = if path.is_root() {
            "/".to_string()
        } else {
            format!("{path}/")
        };
        let mut names = BTreeSet::new();
        for key in self.files.borrow().keys() {
            if let Some(rest) = key.strip_prefix(&prefix) {
                names.insert(rest.split('/').next().unwrap().to_string());
            }
        }
        Ok(names
            .into_iter()
            .map(|name| DirEntry {
                name,
                kind: EntryKind::File,
            })
            .collect())
    }
    async fn kind(&self, path: &WorkspacePath) -> Result<Option<EntryKind>, FsError> {
        if path.is_root() {
            return Ok(Some(EntryKind::Directory));
        }
        Ok(self
            .files
            .borrow()
            .contains_key(path.as_str())
            .then_some(EntryKind::File))
    }
    async fn create_dir(&self, _: &WorkspacePath) -> Result<(), FsError> {
        Ok(())
    }
    async fn remove(&self, path: &WorkspacePath, _: bool) -> Result<(), FsError> {
        self.files
            .borrow_mut()
            .remove(path.as_str())
            .map(|_| ())
            .ok_or(FsError::NotFound)
    }
    async fn sleep(&self, _: u64) {}
    async fn yield_now(&self) {}
    async fn eval_js(&self, _: &str) -> Result<String, String> {
        Err("no js here".into())
    }
}

fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = TaskContext::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn sh(host: &MemHost, line: &str) -> (i32, String, String) {
    let (mut out, mut err) = (String::new(), String::new());
    let status = block_on(run(host, line, &Context::default(), &mut |s, t| match s {
        Stream::Stdout => out.push_str(t),
        Stream::Stderr => err.push_str(t),
    }));
    (status, out, err)
}

fn all_tools() -> FlatSet<Tool> {
    Tool::ALL.into_iter().collect()
}

fn call(name: &str, arguments: serde_json::Value) -> ToolCallRecord {
    ToolCallRecord {
        id: "call_1".into(),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

fn write_line(path: &str, content: &str) -> Result<String, String> {
    tool_line(
        &call(
            "write_file",
            serde_json::json!({ "path": path, "content": content }),
        ),
        &all_tools(),
    )
}

#[test]
fn write_file_lines_round_trip_awkward_content_through_the_shell() {
    let contents = [
        "",
        "hello",
        "hello\n",
        "it's a 'quoted' \"word\"",
        "line one\nline two\n\nline four",
        "$HOME ${PATH} $? `date` \\n \\ \\\\ back\\slash",
        "# not a comment; | && || > >> < ( ) & *",
        "-n",
        "-nnn",
        "-n not a flag",
        "-e -n",
        "-",
        "--",
        "  leading and trailing spaces  ",
        "tab\there\r\nCRLF",
        "unicode: é ü 日本語 🦀",
        "'",
        "''''",
        "'\n'",
    ];
    for content in contents {
        let host = MemHost::default();
        let line = write_line("notes/out.txt", content).expect("maps");
        let (status, _, err) = sh(&host, &line);
        assert_eq!(status, 0, "{line:?}: {err}");
        let written = host.files.borrow().get("/notes/out.txt").cloned();
        assert_eq!(
            written.as_deref(),
            Some(content.as_bytes()),
            "content {content:?} via {line:?}"
        );
        // And read_file gives it back byte for byte.
        let read = tool_line(
            &call("read_file", serde_json::json!({ "path": "notes/out.txt" })),
            &all_tools(),
        )
        .unwrap();
        let (status, out, err) = sh(&host, &read);
        assert_eq!((status, out.as_str()), (0, content), "{read:?}: {err}");
    }
}

#[test]
fn write_file_overwrites_and_awkward_paths_are_quoted() {
    let host = MemHost::default();
    for path in ["a b.txt", "it's.txt", "$x.txt", "-dash.txt", "semi;colon"] {
        let line = write_line(path, "first").unwrap();
        assert_eq!(sh(&host, &line).0, 0, "{line}");
        let line = write_line(path, "second").unwrap();
        assert_eq!(sh(&host, &line).0, 0, "{line}");
        assert_eq!(
            host.files.borrow().get(&format!("/{path}")).unwrap(),
            b"second",
            "{path}"
        );
        let read = tool_line(
            &call("read_file", serde_json::json!({ "path": path })),
            &all_tools(),
        )
        .unwrap();
        assert_eq!(sh(&host, &read).1, "second", "{read}");
    }
    let ls = tool_line(&call("list_files", serde_json::json!({})), &all_tools()).unwrap();
    assert_eq!(ls, "ls '.'");
    let (status, out, _) = sh(&host, &ls);
    assert_eq!(status, 0);
    assert!(
        out.contains("-dash.txt") && out.contains("it's.txt"),
        "{out}"
    );
}

#[test]
fn run_command_is_passed_as_is_and_quote_is_one_word() {
    let host = MemHost::default();
    let line = tool_line(
        &call(
            "run_command",
            serde_json::json!({ "command": "echo a > x.txt && cat x.txt" }),
        ),
        &all_tools(),
    )
    .unwrap();
    assert_eq!(line, "echo a > x.txt && cat x.txt");
    assert_eq!(sh(&host, &line).1, "a\n");
    let (_, out, _) = sh(&host, &format!("echo {} {}", quote("a  b"), quote("c'd")));
    assert_eq!(out, "a  b c'd\n");
}

#[test]
fn bad_tool_calls_map_to_clear_errors_not_commands() {
    let tools = all_tools();
    let e = |name: &str, args: &str, tools: &FlatSet<Tool>| {
        tool_line(
            &ToolCallRecord {
                id: "c".into(),
                name: name.into(),
                arguments: args.into(),
            },
            tools,
        )
        .unwrap_err()
    };
    assert!(e("delete_everything", "{}", &tools).contains("unknown tool `delete_everything`"));
    let only_read: FlatSet<Tool> = [Tool::ReadFile].into_iter().collect();
    assert!(e("write_file", r#"{"path":"a","content":"b"}"#, &only_read).contains("not enabled"));
    assert!(e("read_file", "{not json", &tools).contains("not valid JSON"));
    assert!(e("read_file", "[1]", &tools).contains("JSON object"));
    assert!(e("read_file", "{}", &tools).contains("`path`"));
    assert!(e("read_file", r#"{"path": 3}"#, &tools).contains("must be a string"));
    assert!(e("run_command", r#"{"command": "  "}"#, &tools).contains("non-empty"));
    assert!(e("write_file", r#"{"path":"a","content":"x\u0000y"}"#, &tools).contains("NUL"));
    // Content that does not fit one command line is refused, not cut.
    let big = "x".repeat(limits::MAX_COMMAND_LINE_BYTES);
    let err = write_line("big.txt", &big).unwrap_err();
    assert!(
        err.contains("content too large for one write_file"),
        "{err}"
    );
    // 60 KiB does fit: the command line limit is the shell's 64 KiB.
    let host = MemHost::default();
    let fits = "y".repeat(60 * 1024);
    let line = write_line("fits.txt", &fits).unwrap();
    assert_eq!(sh(&host, &line).0, 0);
    assert_eq!(host.files.borrow()["/fits.txt"].len(), fits.len());
}
