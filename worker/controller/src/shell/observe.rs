//! What the engine asks to be looked at, without reviving anything: where a
//! launch will run, the facts the recovery card needs (the workspace
//! folder, the presence of keys — never decrypting one), and a read-only
//! listing of a workspace. No runtime starts, no credential is leased, no
//! agent step runs; nothing here prompts for a folder's permission.

use std::rc::Rc;

use lifeline_core::environment::FolderAccess;
use lifeline_core::phrase::Phrase;
use lifeline_core::profile::ProfileLookup;
use lifeline_core::session::Environment;
use lifeline_core::{ProfileId, SessionId, WorkspaceId};
use lifeline_engine::{FactsObserved, WorkspaceObserved};
use lifeline_opfs::{folders, OpfsWorkspace};
use lifeline_protocol::WorkspaceListing;
use lifeline_shell::{EntryKind, FsError, Host, WorkspacePath};

use crate::config::ConfigStore;

/// Entries listed at most, and bytes of one file shown.
const MAX_ENTRIES: usize = 2_000;
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Where a launch will run: a local folder's access, or whether the
/// sandbox workspace exists.
pub async fn workspace(environment: &Environment, workspace: WorkspaceId) -> WorkspaceObserved {
    match environment {
        Environment::LocalFolder { folder, .. } => {
            WorkspaceObserved::Folder(folders::observe(*folder).await)
        }
        Environment::Worker => {
            WorkspaceObserved::Sandbox(Some(crate::storage::workspace_exists(workspace).await))
        }
    }
}

/// The facts the recovery card needs for a session.
pub async fn facts(
    config: Option<Rc<ConfigStore>>,
    workspace: Option<WorkspaceId>,
    environment: Option<Environment>,
    profile: Option<ProfileId>,
) -> FactsObserved {
    let mut facts = FactsObserved::default();
    if let Some(w) = workspace {
        let (opened, access) = open_files(environment.as_ref(), w).await;
        facts.folder_access = access;
        match opened {
            Ok(ws) => {
                facts.workspace_exists = Some(true);
                facts.workspace_files = ws
                    .list(&WorkspacePath::root())
                    .await
                    .map(|l| u32::try_from(l.len()).unwrap_or(u32::MAX))
                    .ok();
            }
            Err(FsError::NotFound) => facts.workspace_exists = Some(false),
            Err(_) => {}
        }
    }
    if let (Some(config), Some(profile)) = (config, profile) {
        if let ProfileLookup::Found(p) = config.lookup_profile(profile).await {
            let refs = p.credential_refs();
            let mut present = 0;
            for r in &refs {
                if matches!(config.credential_label(*r).await, Ok(Some(_))) {
                    present += 1;
                }
            }
            facts.credentials = Some((present, u32::try_from(refs.len()).unwrap_or(u32::MAX)));
        }
    }
    facts
}

/// Opens a session's files where its environment keeps them, without
/// prompting: the sandbox folder, or the user's folder if access is granted
/// now. Also says what was observed of a folder's access.
async fn open_files(
    environment: Option<&Environment>,
    workspace: WorkspaceId,
) -> (Result<OpfsWorkspace, FsError>, Option<FolderAccess>) {
    match environment {
        Some(Environment::LocalFolder { folder, .. }) => {
            match folders::open_workspace(*folder, &workspace.to_string()).await {
                Ok(ws) => (Ok(ws), Some(FolderAccess::Granted)),
                Err(access) => (
                    Err(FsError::Other(format!(
                        "the folder is not usable now ({access:?})"
                    ))),
                    Some(access),
                ),
            }
        }
        _ => (
            OpfsWorkspace::open_existing(&workspace.to_string()).await,
            None,
        ),
    }
}

fn unreadable(e: FsError) -> Phrase {
    Phrase::WorkspaceUnreadable {
        detail: e.to_string(),
    }
}

fn folder_refusal(environment: &Environment, access: FolderAccess) -> Phrase {
    let name = match environment {
        Environment::LocalFolder { name, .. } => name.clone(),
        Environment::Worker => String::new(),
    };
    match access {
        FolderAccess::NeedsPermission => Phrase::FolderNeedsPermissionToRead { name },
        _ => Phrase::FolderGone { name },
    }
}

/// Lists the workspace depth-first (bounded) and reads one file.
pub async fn list(
    session: SessionId,
    workspace: WorkspaceId,
    environment: &Environment,
    file: Option<String>,
) -> Result<WorkspaceListing, Phrase> {
    let ws = match open_files(Some(environment), workspace).await {
        (Ok(ws), _) => ws,
        (Err(_), Some(access)) if access != FolderAccess::Granted => {
            return Err(folder_refusal(environment, access))
        }
        (Err(e), _) => return Err(unreadable(e)),
    };
    let mut entries = Vec::new();
    let mut stack = vec![WorkspacePath::root()];
    let mut truncated = false;
    while let Some(dir) = stack.pop() {
        let mut items = ws.list(&dir).await.map_err(unreadable)?;
        lifeline_core::order::by(&mut items, |a, b| b.name.cmp(&a.name));
        for item in items {
            if entries.len() >= MAX_ENTRIES {
                truncated = true;
                break;
            }
            let Ok(path) = dir.join(&item.name) else {
                continue;
            };
            let is_dir = item.kind == EntryKind::Directory;
            entries.push((path.as_str().to_string(), is_dir));
            if is_dir {
                stack.push(path);
            }
        }
    }
    lifeline_core::order::by(&mut entries, Ord::cmp);
    let file = match file {
        Some(p) => {
            let read = match WorkspacePath::parse(&p) {
                Ok(path) => ws
                    .read(&path, MAX_FILE_BYTES)
                    .await
                    .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            Some((p, read))
        }
        None => None,
    };
    Ok(WorkspaceListing {
        session,
        entries,
        truncated,
        file,
    })
}
