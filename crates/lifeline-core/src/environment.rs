//! Where a session's files live, as the recovery summary tells it: which
//! environment state exists, who owns it, and what teardown and reopening
//! are possible (reference 000: the environment selector and its record).
//!
//! The shell observes a local folder's access without asking for anything
//! ([`FolderAccess`]); this module turns that observation into what the
//! card says and which actions it blocks. Asking the user for permission is
//! the page's job, on the click that needs it: only a user gesture may.

use lifeline_decode::Decode;
use lifeline_encode::Encode;
use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::id::FolderId;

/// Where a session's files live and who owns them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Environment {
    /// This tab's worker sandbox: an OPFS folder Lifeline created and owns.
    Worker,
    /// A local folder the user opened (File System Access API). The user
    /// owns it: no cleanup ever deletes it (an operator-owned claim).
    /// `folder` names the directory handle stored in this browser; `name`
    /// is the folder's own name, for people.
    LocalFolder { folder: FolderId, name: String },
}

impl Environment {
    pub fn owned_by_lifeline(&self) -> bool {
        matches!(self, Environment::Worker)
    }

    pub fn folder(&self) -> Option<FolderId> {
        match self {
            Environment::Worker => None,
            Environment::LocalFolder { folder, .. } => Some(*folder),
        }
    }
}

/// What the shell saw of a local folder's stored handle, without prompting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum FolderAccess {
    /// Read and write are granted now.
    Granted,
    /// The handle is stored, but the browser will ask the user again (it
    /// does after the last tab of the origin closed).
    NeedsPermission,
    /// The browser no longer knows the folder: the stored handle is gone
    /// (site data cleared) or the folder was moved or deleted.
    Gone,
    /// This browser cannot open local folders at all.
    Unsupported,
}

/// Who removes the environment's files when the session goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum Teardown {
    /// Lifeline created the folder: Archive keeps it, Delete removes it.
    RemovedOnDelete,
    /// The user's folder: nothing in Lifeline ever deletes it.
    NeverRemoved,
}

/// Whether a new runtime can open the environment again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum Reopen {
    /// Nothing stands in the way.
    Ready,
    /// Possible after the user allows access again (the page asks on the
    /// click that needs it).
    AfterPermission,
    /// Not possible in this browser any more.
    Impossible,
    /// Not checked yet.
    Unknown,
}

/// A local folder as views carry it: a plain struct, not the journal's
/// tagged [`Environment`], so the page decodes it cheaply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct FolderRef {
    pub folder: FolderId,
    pub name: String,
}

impl FolderRef {
    pub fn of(environment: &Environment) -> Option<FolderRef> {
        match environment {
            Environment::Worker => None,
            Environment::LocalFolder { folder, name } => Some(FolderRef {
                folder: *folder,
                name: name.clone(),
            }),
        }
    }
}

/// The environment part of a recovery report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct EnvironmentState {
    /// The user's folder the session runs in; `None` for the worker sandbox.
    pub folder: Option<FolderRef>,
    /// For a local folder, what the shell observed; `None` for the worker
    /// sandbox or when not checked.
    pub access: Option<FolderAccess>,
    pub teardown: Teardown,
    pub reopen: Reopen,
}

/// Combines what the journal recorded with what the shell observed.
/// `workspace_exists` is the worker sandbox folder's presence, if checked.
pub fn state(
    environment: &Environment,
    access: Option<FolderAccess>,
    workspace_exists: Option<bool>,
) -> EnvironmentState {
    match environment {
        Environment::Worker => EnvironmentState {
            folder: None,
            access: None,
            teardown: Teardown::RemovedOnDelete,
            // A missing sandbox folder is never recreated empty for a
            // resume; a new session may still start (Start fresh).
            reopen: match workspace_exists {
                Some(true) => Reopen::Ready,
                Some(false) => Reopen::Impossible,
                None => Reopen::Unknown,
            },
        },
        Environment::LocalFolder { .. } => EnvironmentState {
            folder: FolderRef::of(environment),
            access,
            teardown: Teardown::NeverRemoved,
            reopen: match access {
                Some(FolderAccess::Granted) => Reopen::Ready,
                Some(FolderAccess::NeedsPermission) => Reopen::AfterPermission,
                Some(FolderAccess::Gone | FolderAccess::Unsupported) => Reopen::Impossible,
                None => Reopen::Unknown,
            },
        },
    }
}

/// Why an environment cannot serve an action now (the card words it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// The browser no longer knows the user's folder `name`.
    FolderGone { name: String },
    /// This browser cannot open local folders.
    FoldersUnsupported,
}

impl EnvironmentState {
    /// Why `action` cannot use this environment now, if it cannot. Only
    /// actions that open the session's files are affected; Start fresh
    /// keeps the environment, so an unusable folder blocks it too.
    pub fn blocks(&self, action: Action) -> Option<Blocked> {
        if !opens_files(action) {
            return None;
        }
        let FolderRef { name, .. } = self.folder.as_ref()?;
        match self.access {
            Some(FolderAccess::Gone) => Some(Blocked::FolderGone { name: name.clone() }),
            Some(FolderAccess::Unsupported) => Some(Blocked::FoldersUnsupported),
            _ => None,
        }
    }

    /// The page must ask for access on the click before the action runs.
    pub fn needs_permission(&self) -> bool {
        self.access == Some(FolderAccess::NeedsPermission)
    }

    /// The folder the page must ask access to, on the click, before
    /// `action` runs; `None` when the action goes ahead as it is.
    pub fn ask_before(&self, action: Action) -> Option<&FolderRef> {
        if self.needs_permission() && opens_files(action) {
            self.folder.as_ref()
        } else {
            None
        }
    }
}

/// The actions that open the session's files.
fn opens_files(action: Action) -> bool {
    matches!(
        action,
        Action::Resume
            | Action::ContinueFromHistory
            | Action::InspectWorkspace
            | Action::StartFresh
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> Environment {
        Environment::LocalFolder {
            folder: FolderId::from_u128(7).unwrap(),
            name: "project".into(),
        }
    }

    #[test]
    fn the_worker_sandbox_is_removed_on_delete_and_reopens_only_if_there() {
        let s = state(&Environment::Worker, None, Some(true));
        assert_eq!(s.teardown, Teardown::RemovedOnDelete);
        assert_eq!(s.reopen, Reopen::Ready);
        assert_eq!(
            state(&Environment::Worker, None, Some(false)).reopen,
            Reopen::Impossible
        );
        assert_eq!(
            state(&Environment::Worker, None, None).reopen,
            Reopen::Unknown
        );
        // A folder access fact is meaningless for the sandbox and dropped.
        assert_eq!(
            state(&Environment::Worker, Some(FolderAccess::Gone), Some(true)).access,
            None
        );
        for action in Action::ALL {
            assert_eq!(s.blocks(action), None);
        }
    }

    #[test]
    fn a_local_folder_is_never_removed_and_its_reopen_follows_access() {
        let cases = [
            (Some(FolderAccess::Granted), Reopen::Ready),
            (Some(FolderAccess::NeedsPermission), Reopen::AfterPermission),
            (Some(FolderAccess::Gone), Reopen::Impossible),
            (Some(FolderAccess::Unsupported), Reopen::Impossible),
            (None, Reopen::Unknown),
        ];
        for (access, reopen) in cases {
            let s = state(&folder(), access, None);
            assert_eq!(s.teardown, Teardown::NeverRemoved);
            assert_eq!(s.reopen, reopen, "{access:?}");
        }
    }

    #[test]
    fn an_unusable_folder_blocks_only_the_actions_that_open_it() {
        for access in [FolderAccess::Gone, FolderAccess::Unsupported] {
            let s = state(&folder(), Some(access), None);
            for action in [
                Action::Resume,
                Action::ContinueFromHistory,
                Action::InspectWorkspace,
                Action::StartFresh,
            ] {
                assert!(s.blocks(action).is_some(), "{access:?} {action:?}");
            }
            assert_eq!(s.blocks(Action::Archive), None);
            assert_eq!(s.blocks(Action::Unarchive), None);
            assert!(!s.needs_permission());
        }
        // Permission can be asked for on the click: nothing is blocked.
        let s = state(&folder(), Some(FolderAccess::NeedsPermission), None);
        assert!(s.needs_permission());
        for action in Action::ALL {
            assert_eq!(s.blocks(action), None);
            // Archive and Unarchive do not open the folder: they ask nothing.
            assert_eq!(
                s.ask_before(action).map(|f| f.name.as_str()),
                (!matches!(action, Action::Archive | Action::Unarchive)).then_some("project"),
                "{action:?}"
            );
        }
        // Granted: nothing to ask.
        let granted = state(&folder(), Some(FolderAccess::Granted), None);
        assert!(Action::ALL.iter().all(|a| granted.ask_before(*a).is_none()));
    }
}
