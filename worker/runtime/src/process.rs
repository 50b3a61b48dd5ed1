//! One running command: the built-in shell over the workspace, its output
//! batched into events, and a kill that acts on exactly this command.
//!
//! Output is handed to the core at most every [`FLUSH_MS`] or as soon as
//! [`FLUSH_BYTES`] are waiting, so a chatty command produces few, large
//! events (few IndexedDB writes) while a quiet one still shows up within a
//! frame or three. When the controller falls behind (the core reports a full
//! buffer), the process is paused at its next yield instead of output being
//! dropped: nothing a command prints is lost.

use lifeline_shell::LiteMap;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll, Waker};

use js_sys::Promise;
use lifeline_core::{Binding, CommandId, ProcessOutput, RuntimeError};
use lifeline_shell::{DirEntry, EntryKind, FsError, Host, Stream, WorkspacePath};
use wasm_bindgen_futures::{spawn_local, JsFuture};

use crate::opfs::OpfsWorkspace;
use crate::{Timeout, Worker};

/// Longest output waits before it becomes an event.
pub const FLUSH_MS: u64 = 50;
/// Output that becomes an event at once.
pub const FLUSH_BYTES: usize = 64 * 1024;
/// Output held back while the controller catches up before the process pauses.
const PAUSE_ABOVE_BYTES: usize = 1 << 20;
/// Exit status reported for a killed process (SIGTERM's, by convention).
const KILLED: i32 = 143;

pub struct Process {
    command: CommandId,
    killed: Cell<bool>,
    waker: RefCell<Option<Waker>>,
    pending: RefCell<Vec<(Stream, String)>>,
    pending_bytes: Cell<usize>,
    flush_timer: RefCell<Option<Timeout>>,
}

impl Process {
    pub fn new(command: CommandId) -> Rc<Process> {
        Rc::new(Process {
            command,
            killed: Cell::new(false),
            waker: RefCell::new(None),
            pending: RefCell::new(Vec::new()),
            pending_bytes: Cell::new(0),
            flush_timer: RefCell::new(None),
        })
    }

    pub fn kill(&self) {
        self.killed.set(true);
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }

    pub(crate) fn spawn(
        self: &Rc<Self>,
        worker: Rc<Worker>,
        workspace: Rc<OpfsWorkspace>,
        binding: Binding,
        env: LiteMap<String, String>,
        capabilities: Vec<String>,
    ) {
        let process = self.clone();
        spawn_local(async move {
            let cwd = match WorkspacePath::parse(&binding.working_directory) {
                Ok(cwd) => cwd,
                Err(e) => {
                    let _ = worker.report(
                        process.command,
                        ProcessOutput::StartFailed {
                            message: format!(
                                "working directory {}: {e}",
                                binding.working_directory
                            ),
                        },
                    );
                    worker.finished(process.command);
                    return;
                }
            };
            let mut env = env;
            env.insert("PWD".into(), cwd.as_str().to_string());
            let ctx = lifeline_shell::Context {
                cwd,
                env,
                capabilities,
            };
            let host = ProcessHost {
                workspace,
                process: process.clone(),
            };
            let code = {
                let sink = process.clone();
                let out_worker = worker.clone();
                let mut out = move |stream: Stream, text: &str| {
                    sink.push(&out_worker, stream, text);
                };
                let run = lifeline_shell::run(&host, &binding.command_line, &ctx, &mut out);
                Killable {
                    run: Box::pin(run),
                    process: process.clone(),
                }
                .await
            };
            process.drain(&worker).await;
            let code = code.unwrap_or(KILLED);
            let _ = worker.report(process.command, ProcessOutput::Exit { code });
            worker.finished(process.command);
        });
    }

    fn push(self: &Rc<Self>, worker: &Rc<Worker>, stream: Stream, text: &str) {
        if text.is_empty() {
            return;
        }
        {
            let mut pending = self.pending.borrow_mut();
            match pending.last_mut() {
                Some((s, buf)) if *s == stream && buf.len() + text.len() <= FLUSH_BYTES => {
                    buf.push_str(text)
                }
                _ => pending.push((stream, text.to_string())),
            }
        }
        self.pending_bytes
            .set(self.pending_bytes.get() + text.len());
        if self.pending_bytes.get() >= FLUSH_BYTES {
            self.flush(worker);
        } else if self.flush_timer.borrow().is_none() {
            let process = self.clone();
            let worker = worker.clone();
            *self.flush_timer.borrow_mut() = Timeout::new(FLUSH_MS, move || {
                process.flush_timer.borrow_mut().take();
                process.flush(&worker);
            });
        }
    }

    /// Hands waiting output to the core, in order, until it says its buffer
    /// is full; the rest waits for the next flush.
    fn flush(self: &Rc<Self>, worker: &Rc<Worker>) {
        if let Some(t) = self.flush_timer.borrow_mut().take() {
            t.cancel();
        }
        loop {
            let next = {
                let mut pending = self.pending.borrow_mut();
                if pending.is_empty() {
                    break;
                }
                pending.remove(0)
            };
            let (stream, data) = next;
            let len = data.len();
            let output = match stream {
                Stream::Stdout => ProcessOutput::Stdout { data: data.clone() },
                Stream::Stderr => ProcessOutput::Stderr { data: data.clone() },
            };
            match worker.report(self.command, output) {
                Ok(()) => self.pending_bytes.set(self.pending_bytes.get() - len),
                Err(RuntimeError::BufferFull { .. }) => {
                    self.pending.borrow_mut().insert(0, (stream, data));
                    let process = self.clone();
                    let worker = worker.clone();
                    *self.flush_timer.borrow_mut() = Timeout::new(FLUSH_MS, move || {
                        process.flush_timer.borrow_mut().take();
                        process.flush(&worker);
                    });
                    break;
                }
                // The command is gone from the core (killed and reported):
                // nothing more of it can be recorded.
                Err(_) => {
                    self.pending.borrow_mut().clear();
                    self.pending_bytes.set(0);
                    break;
                }
            }
        }
    }

    /// Flushes everything before the exit is reported, waiting out a full buffer.
    async fn drain(self: &Rc<Self>, worker: &Rc<Worker>) {
        for _ in 0..6_000 {
            self.flush(worker);
            if self.pending.borrow().is_empty() {
                return;
            }
            sleep_ms(FLUSH_MS).await;
        }
    }
}

/// The shell's future, ended early by [`Process::kill`] (dropping it is the kill).
struct Killable<F> {
    run: Pin<Box<F>>,
    process: Rc<Process>,
}

impl<F: Future<Output = i32>> Future for Killable<F> {
    type Output = Option<i32>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<i32>> {
        if self.process.killed.get() {
            return Poll::Ready(None);
        }
        *self.process.waker.borrow_mut() = Some(cx.waker().clone());
        match self.run.as_mut().poll(cx) {
            Poll::Ready(code) => Poll::Ready(Some(code)),
            Poll::Pending => Poll::Pending,
        }
    }
}

pub async fn sleep_ms(ms: u64) {
    let promise = Promise::new(&mut |resolve, _| {
        let _ = crate::scope().set_timeout_with_callback_and_timeout_and_arguments_0(
            &resolve,
            ms.min(i32::MAX as u64) as i32,
        );
    });
    let _ = JsFuture::from(promise).await;
}

/// The workspace as one process sees it: the file system is shared, the
/// pauses are this process's own.
struct ProcessHost {
    workspace: Rc<OpfsWorkspace>,
    process: Rc<Process>,
}

impl Host for ProcessHost {
    async fn read(&self, path: &WorkspacePath, max_len: u64) -> Result<Vec<u8>, FsError> {
        self.workspace.read(path, max_len).await
    }
    async fn write(&self, path: &WorkspacePath, data: &[u8], append: bool) -> Result<(), FsError> {
        self.workspace.write(path, data, append).await
    }
    async fn list(&self, path: &WorkspacePath) -> Result<Vec<DirEntry>, FsError> {
        self.workspace.list(path).await
    }
    async fn kind(&self, path: &WorkspacePath) -> Result<Option<EntryKind>, FsError> {
        self.workspace.kind(path).await
    }
    async fn create_dir(&self, path: &WorkspacePath) -> Result<(), FsError> {
        self.workspace.create_dir(path).await
    }
    async fn remove(&self, path: &WorkspacePath, recursive: bool) -> Result<(), FsError> {
        self.workspace.remove(path, recursive).await
    }
    async fn sleep(&self, millis: u64) {
        sleep_ms(millis).await
    }
    async fn yield_now(&self) {
        // Let timers, port messages and kills run; pause while the
        // controller has not confirmed enough of what was already printed.
        // The workspace's yield is a port message, not `setTimeout(0)`,
        // which Chromium clamps to 4 ms once nested: with it, a command
        // yielding after every 64 KiB spent most of its time waiting.
        self.workspace.yield_now().await;
        for _ in 0..6_000 {
            if self.process.pending_bytes.get() <= PAUSE_ABOVE_BYTES || self.process.killed.get() {
                break;
            }
            sleep_ms(FLUSH_MS).await;
        }
    }
    async fn eval_js(&self, source: &str) -> Result<String, String> {
        self.workspace.eval_js(source).await
    }
    type Regex = js_sys::RegExp;
    fn regex(&self, source: &str, ignore_case: bool) -> Result<js_sys::RegExp, String> {
        self.workspace.regex(source, ignore_case)
    }
    fn is_match(&self, regex: &js_sys::RegExp, line: &str) -> bool {
        self.workspace.is_match(regex, line)
    }
}
