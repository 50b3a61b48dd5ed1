//! Workspace paths: the only way a command names a file, so that no operand
//! can ever reach outside the workspace.

use crate::FsError;
use std::fmt;

/// Longest accepted path, in bytes; the same order as PATH_MAX on Linux.
pub const MAX_PATH_LEN: usize = 4096;
/// Longest accepted file name, in bytes; the same as NAME_MAX on Linux.
pub const MAX_NAME_LEN: usize = 255;

/// A normalised absolute path inside a workspace: `/` is the workspace root,
/// components are never empty, `.` or `..`, and there is no trailing slash.
///
/// Normalising once, here, means hosts only ever see clean paths and the
/// "never escape the root" rule lives in one place.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkspacePath(String);

impl WorkspacePath {
    /// The workspace root, `/`.
    pub fn root() -> Self {
        WorkspacePath("/".to_string())
    }

    /// Parses a path relative to the root (a leading `/` is optional).
    pub fn parse(path: &str) -> Result<Self, FsError> {
        Self::root().resolve(path)
    }

    /// Resolves `input` against this directory. `..` that would climb above
    /// the root is an error rather than a clamp: silently staying at the root
    /// would make `rm -r ../x` act on a different file than the user meant.
    pub fn resolve(&self, input: &str) -> Result<Self, FsError> {
        if input.is_empty() {
            // GNU tools report an empty operand as a missing file.
            return Err(FsError::NotFound);
        }
        if input.len() > MAX_PATH_LEN {
            return Err(FsError::InvalidPath("File name too long".into()));
        }
        let mut parts: Vec<&str> = if input.starts_with('/') {
            Vec::new()
        } else {
            self.components().collect()
        };
        for part in input.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Err(FsError::InvalidPath(
                            "Path escapes the workspace root".into(),
                        ));
                    }
                }
                name => {
                    check_name(name)?;
                    parts.push(name);
                }
            }
        }
        let mut path = String::with_capacity(input.len() + self.0.len() + 1);
        for part in &parts {
            path.push('/');
            path.push_str(part);
        }
        if path.is_empty() {
            path.push('/');
        }
        if path.len() > MAX_PATH_LEN {
            return Err(FsError::InvalidPath("File name too long".into()));
        }
        Ok(WorkspacePath(path))
    }

    /// The path as text, always starting with `/`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_root(&self) -> bool {
        self.0 == "/"
    }

    /// The names from the root down; empty for the root.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/').filter(|part| !part.is_empty())
    }

    /// The containing directory; `None` for the root.
    pub fn parent(&self) -> Option<WorkspacePath> {
        if self.is_root() {
            return None;
        }
        let cut = self.0.rfind('/').unwrap_or(0);
        Some(if cut == 0 {
            Self::root()
        } else {
            WorkspacePath(self.0[..cut].to_string())
        })
    }

    /// The last component; `None` for the root.
    pub fn name(&self) -> Option<&str> {
        self.components().last()
    }

    /// This path with one more component.
    pub fn join(&self, name: &str) -> Result<WorkspacePath, FsError> {
        if name.is_empty() || name == "." || name == ".." || name.contains('/') {
            return Err(FsError::InvalidPath(format!("Invalid file name '{name}'")));
        }
        check_name(name)?;
        let mut path = self.0.clone();
        if !self.is_root() {
            path.push('/');
        }
        path.push_str(name);
        if path.len() > MAX_PATH_LEN {
            return Err(FsError::InvalidPath("File name too long".into()));
        }
        Ok(WorkspacePath(path))
    }

    /// Whether `self` is `ancestor` or lies below it (component-wise, so
    /// `/ab` is not below `/a`).
    pub fn is_within(&self, ancestor: &WorkspacePath) -> bool {
        ancestor.is_root()
            || self.0 == ancestor.0
            || (self.0.starts_with(&ancestor.0) && self.0.as_bytes()[ancestor.0.len()] == b'/')
    }
}

fn check_name(name: &str) -> Result<(), FsError> {
    if name.len() > MAX_NAME_LEN {
        return Err(FsError::InvalidPath("File name too long".into()));
    }
    if name.contains('\0') {
        return Err(FsError::InvalidPath("Invalid argument".into()));
    }
    Ok(())
}

impl fmt::Display for WorkspacePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
