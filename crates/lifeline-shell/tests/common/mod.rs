//! An in-memory host and helpers shared by the shell's tests.
#![allow(dead_code)]

use lifeline_shell::{run, Context, DirEntry, EntryKind, FsError, Host, Stream, WorkspacePath};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::task::{Context as TaskContext, Poll, Waker};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    File(Vec<u8>),
    Dir,
}

/// A map from normalised path to node. `sleep` records the request and
/// returns at once; `yield_now` counts and really suspends once, so tests see
/// the shell give control back.
#[derive(Default)]
pub struct MemHost {
    pub nodes: RefCell<BTreeMap<String, Node>>,
    pub sleeps: RefCell<Vec<u64>>,
    pub yields: Cell<u64>,
}

struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

impl MemHost {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn file(&self, path: &str, data: impl AsRef<[u8]>) -> &Self {
        let path = WorkspacePath::parse(path).unwrap();
        let mut parent = path.parent();
        while let Some(dir) = parent {
            if !dir.is_root() {
                self.nodes.borrow_mut().insert(dir.to_string(), Node::Dir);
            }
            parent = dir.parent();
        }
        self.nodes
            .borrow_mut()
            .insert(path.to_string(), Node::File(data.as_ref().to_vec()));
        self
    }

    pub fn dir(&self, path: &str) -> &Self {
        self.file(&format!("{path}/.placeholder"), "");
        self.nodes
            .borrow_mut()
            .remove(&format!("{path}/.placeholder"));
        self
    }

    pub fn get(&self, path: &str) -> Option<Node> {
        self.nodes.borrow().get(path).cloned()
    }

    pub fn text(&self, path: &str) -> String {
        match self.get(path) {
            Some(Node::File(data)) => String::from_utf8(data).unwrap(),
            other => panic!("{path} is {other:?}"),
        }
    }

    fn node(&self, path: &WorkspacePath) -> Option<Node> {
        if path.is_root() {
            return Some(Node::Dir);
        }
        self.get(path.as_str())
    }

    fn missing(&self, path: &WorkspacePath) -> FsError {
        let mut parent = path.parent();
        while let Some(dir) = parent {
            if let Some(Node::File(_)) = self.node(&dir) {
                return FsError::NotADirectory;
            }
            parent = dir.parent();
        }
        FsError::NotFound
    }

    fn check_parent(&self, path: &WorkspacePath) -> Result<(), FsError> {
        match path.parent().map(|p| self.node(&p)) {
            Some(Some(Node::Dir)) => Ok(()),
            Some(Some(Node::File(_))) => Err(FsError::NotADirectory),
            _ => Err(self.missing(path)),
        }
    }

    fn children(&self, path: &WorkspacePath) -> Vec<String> {
        let prefix = if path.is_root() {
            "/".to_string()
        } else {
            format!("{path}/")
        };
        self.nodes
            .borrow()
            .keys()
            .filter(|key| key.starts_with(&prefix) && key.len() > prefix.len())
            .cloned()
            .collect()
    }
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
        match self.node(path) {
            Some(Node::File(data)) if data.len() as u64 > max_len => Err(FsError::TooLarge),
            Some(Node::File(data)) => Ok(data),
            Some(Node::Dir) => Err(FsError::IsADirectory),
            None => Err(self.missing(path)),
        }
    }

    async fn write(&self, path: &WorkspacePath, data: &[u8], append: bool) -> Result<(), FsError> {
        if path.is_root() {
            return Err(FsError::IsADirectory);
        }
        self.check_parent(path)?;
        let mut nodes = self.nodes.borrow_mut();
        match nodes.get_mut(path.as_str()) {
            Some(Node::Dir) => Err(FsError::IsADirectory),
            Some(Node::File(existing)) if append => {
                existing.extend_from_slice(data);
                Ok(())
            }
            _ => {
                nodes.insert(path.to_string(), Node::File(data.to_vec()));
                Ok(())
            }
        }
    }

    async fn list(&self, path: &WorkspacePath) -> Result<Vec<DirEntry>, FsError> {
        match self.node(path) {
            Some(Node::Dir) => {}
            Some(Node::File(_)) => return Err(FsError::NotADirectory),
            None => return Err(self.missing(path)),
        }
        let nodes = self.nodes.borrow();
        let prefix_len = if path.is_root() {
            1
        } else {
            path.as_str().len() + 1
        };
        Ok(self
            .children(path)
            .into_iter()
            .filter(|key| !key[prefix_len..].contains('/'))
            .map(|key| DirEntry {
                name: key[prefix_len..].to_string(),
                kind: match nodes[&key] {
                    Node::Dir => EntryKind::Directory,
                    Node::File(_) => EntryKind::File,
                },
            })
            .collect())
    }

    async fn kind(&self, path: &WorkspacePath) -> Result<Option<EntryKind>, FsError> {
        Ok(self.node(path).map(|node| match node {
            Node::Dir => EntryKind::Directory,
            Node::File(_) => EntryKind::File,
        }))
    }

    async fn create_dir(&self, path: &WorkspacePath) -> Result<(), FsError> {
        if self.node(path).is_some() {
            return Err(FsError::AlreadyExists);
        }
        self.check_parent(path)?;
        self.nodes.borrow_mut().insert(path.to_string(), Node::Dir);
        Ok(())
    }

    async fn remove(&self, path: &WorkspacePath, recursive: bool) -> Result<(), FsError> {
        match self.node(path) {
            None => return Err(self.missing(path)),
            Some(Node::Dir) => {
                let children = self.children(path);
                if !children.is_empty() && !recursive {
                    return Err(FsError::NotEmpty);
                }
                let mut nodes = self.nodes.borrow_mut();
                for child in children {
                    nodes.remove(&child);
                }
            }
            Some(Node::File(_)) => {}
        }
        self.nodes.borrow_mut().remove(path.as_str());
        Ok(())
    }

    async fn sleep(&self, millis: u64) {
        self.sleeps.borrow_mut().push(millis);
    }

    async fn yield_now(&self) {
        self.yields.set(self.yields.get() + 1);
        YieldOnce(false).await
    }

    async fn eval_js(&self, source: &str) -> Result<String, String> {
        match source.strip_prefix("throw ") {
            Some(message) => Err(message.to_string()),
            None => Ok(format!("evaluated {source}")),
        }
    }
}

/// What one command line printed.
#[derive(Debug, Default)]
pub struct Outcome {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
    pub chunks: Vec<(Stream, usize)>,
}

pub fn sh_in(host: &MemHost, ctx: &Context, line: &str) -> Outcome {
    let mut outcome = Outcome::default();
    let mut out = |stream: Stream, text: &str| {
        outcome.chunks.push((stream, text.len()));
        match stream {
            Stream::Stdout => outcome.stdout.push_str(text),
            Stream::Stderr => outcome.stderr.push_str(text),
        }
    };
    let status = futures::executor::block_on(run(host, line, ctx, &mut out));
    outcome.status = status;
    outcome
}

pub fn sh(host: &MemHost, line: &str) -> Outcome {
    sh_in(host, &Context::default(), line)
}

/// Polls `future` at most `budget` times, then drops it (cancellation).
pub fn poll_at_most<F: Future>(future: F, budget: usize) -> Option<F::Output> {
    let mut future = pin!(future);
    let mut cx = TaskContext::from_waker(Waker::noop());
    for _ in 0..budget {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return Some(value);
        }
    }
    None
}
