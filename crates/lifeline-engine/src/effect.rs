//! What the engine asks of its shell, and the shapes of the answers.
//!
//! Every effect names the identity it acts on (a batch, an attempt, a port,
//! a provider request), so an answer that arrives late is matched against
//! the engine's current state and dropped when it no longer applies.

use std::sync::Arc;

use lifeline_core::environment::FolderAccess;
use lifeline_core::flat::FlatSet;
use lifeline_core::phrase::JournalFault;
use lifeline_core::profile::{Provider, Secret, Tool};
use lifeline_core::session::Environment;
use lifeline_core::{
    CommandId, ControllerToRuntime, CredentialId, Generation, ModelMessage, PersistBatch, PortId,
    ProfileId, ProjectionSnapshot, ProviderRequestId, RuntimeId, SessionId, StartupAttemptId,
    TimerId, WorkspaceId,
};
use lifeline_protocol::ControllerToPage;

/// A timer the shell keeps; setting a key again replaces its timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimerKey {
    Controller(TimerId),
    /// A startup attempt's wait, by a key never reused.
    Attempt(u64),
    /// A session's live provider request's next deadline (connect or idle
    /// timeout, the end of a retry wait, or the wait's next countdown
    /// second); what it means is read from the request's state when it
    /// fires.
    Provider(SessionId),
    /// An informational notice's expiry, by a key never reused.
    Notice(u64),
    /// Another try at removing a deleted session's sandbox workspace.
    Cleanup(SessionId),
}

/// No `Debug`: it would print secrets (launch environments, keys) and
/// costs the worker's wasm.
pub enum Effect {
    /// Write this batch in one transaction under the writer epoch; answer
    /// with [`crate::Engine::handle_persisted`].
    Persist(Arc<PersistBatch>),
    /// Post to the runtime on `port` (its current one).
    SendToRuntime {
        runtime: RuntimeId,
        port: PortId,
        message: ControllerToRuntime,
    },
    /// Post to this worker's page.
    Page(ControllerToPage),
    /// A line for the worker's log (the browser console), for a developer:
    /// the core's own English on why an entry was not believed. The page
    /// words what a person needs as a phrase; this carries ids and counts,
    /// never a secret.
    Log(String),
    SetTimer {
        key: TimerKey,
        at: lifeline_core::Millis,
    },
    /// Writing stopped: cancel every timer.
    CancelTimers,
    /// Close the journal's connection (writing stopped for good).
    CloseJournal,
    /// Stop listening to this port and close it.
    ClosePort(PortId),
    /// Wait for this runtime's life lock to be released; answer with
    /// [`crate::Engine::handle_worker_ended`].
    WatchLife {
        runtime: RuntimeId,
        generation: Generation,
        port: PortId,
    },
    /// Open the profile store and make sure a default profile exists;
    /// answer with [`crate::Engine::start_sessions`].
    OpenProfiles,
    LookupProfile {
        attempt: StartupAttemptId,
        profile: ProfileId,
    },
    /// Decrypt these credentials (the launch checkpoint).
    ResolveCredentials {
        attempt: StartupAttemptId,
        credentials: Vec<CredentialId>,
    },
    /// Look at where a launch will run, without prompting: a local folder's
    /// access, or whether the sandbox workspace exists. Answer with
    /// [`crate::Engine::handle_workspace_observed`].
    ObserveWorkspace {
        attempt: StartupAttemptId,
        workspace: WorkspaceId,
        environment: Environment,
    },
    /// Delete a deleted session's sandbox workspace from OPFS (never a
    /// folder the user opened); answer with
    /// [`crate::Engine::handle_workspace_removed`].
    RemoveWorkspace {
        session: SessionId,
        workspace: WorkspaceId,
    },
    /// Send a recorded provider request (one attempt of it); answer with
    /// [`crate::Engine::handle_provider_bytes`] whenever response bytes
    /// arrive (the headers count), [`crate::Engine::handle_provider_text`]
    /// and [`crate::Engine::handle_provider_outcome`]. The engine sends the
    /// same request again only after the provider refused it before any
    /// work (see `retry`).
    Fetch {
        request: ProviderRequestId,
        provider: Provider,
        api_key: Option<Secret>,
        conversation: Vec<ModelMessage>,
        tools: FlatSet<Tool>,
    },
    /// Abort that request's fetch now.
    Abort(ProviderRequestId),
    /// Observe what the recovery card needs (the workspace folder, the
    /// presence of keys); answer with [`crate::Engine::handle_facts`].
    ObserveFacts {
        session: SessionId,
        workspace: Option<WorkspaceId>,
        environment: Option<Environment>,
        profile: Option<ProfileId>,
    },
    /// List the workspace read-only (and read `file`); answer with
    /// [`crate::Engine::handle_workspace_listing`].
    ListWorkspace {
        session: SessionId,
        workspace: WorkspaceId,
        environment: Environment,
        file: Option<String>,
    },
    /// Read these artifacts of `command`'s output; answer with
    /// [`crate::Engine::handle_artifacts_read`], handing `stored` and
    /// `plan` back.
    ReadArtifacts {
        command: lifeline_core::CommandId,
        read: KeptRead,
        stored: Box<lifeline_core::stored_output::StoredOutput>,
        plan: Vec<lifeline_core::stored_output::Slice>,
        digests: Vec<lifeline_core::Digest>,
    },
    /// Read `command`'s events from the journal: the projection lacks its
    /// inline head (a settled command out of the recent window, or one
    /// whose first events retention let go), and a read of its kept output
    /// starts with the head they hold. Read the next
    /// [`crate::HEAD_READ_EVENTS`] events after the last of `got` (from the
    /// first if it is empty), in order, and answer with
    /// [`crate::Engine::handle_kept_head_read`], the same `read` and `got`.
    ReadKeptHead {
        command: lifeline_core::CommandId,
        read: KeptRead,
        got: Vec<lifeline_core::event::EventRecord>,
    },
    /// Hand the page `command`'s whole kept output to save as `file_name`:
    /// an `ExportReady` message for its session (the page saves it like an
    /// export: no message of its own to decode there), then the bytes as a
    /// transferred buffer.
    SaveOutput {
        session: lifeline_core::SessionId,
        file_name: String,
        bytes: Vec<u8>,
    },
    /// Write this snapshot; answer with [`crate::Engine::handle_snapshot_written`].
    Snapshot(ProjectionSnapshot),
    /// Tell the other tabs about the entries of this durable batch.
    Broadcast(Arc<PersistBatch>),
    /// A write failed: is the database still there? Answer a wiped one with
    /// [`crate::Engine::handle_journal_lost`]; refresh the storage estimate.
    CheckStorage,
    /// Read `command`'s events from the journal (it is settled: they no
    /// longer change); answer with [`crate::Engine::handle_output_read`]
    /// and the same `view`.
    ReadOutput { view: u64, command: CommandId },
    /// Set the damaged writer record aside and claim the journal again;
    /// answer with [`crate::Engine::lead`] or
    /// [`crate::Engine::handle_repair_failed`].
    RepairJournal,
}

/// A failed journal operation, as the store saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreFailure {
    pub fault: JournalFault,
    /// The store's own words, for the core's degraded notice.
    pub detail: String,
}

/// What the shell saw of a launch's workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkspaceObserved {
    /// A local folder's access, observed without prompting.
    Folder(FolderAccess),
    /// Whether the sandbox workspace folder exists (`None`: could not tell).
    Sandbox(Option<bool>),
}

/// What the shell saw for the recovery card.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FactsObserved {
    pub workspace_exists: Option<bool>,
    pub workspace_files: Option<u32>,
    pub folder_access: Option<FolderAccess>,
    /// Credentials the profile refers to: (present, total).
    pub credentials: Option<(u32, u32)>,
}

/// A provider request's two endings cross from the provider worker, so
/// they are defined with its messages.
pub use lifeline_protocol::provider::{FailedAt, ProviderFailure, ProviderReply};

/// What an output read is for: a range of kept bytes for the full-output
/// view, or all of them to download.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptRead {
    Range { offset: u64, len: u64 },
    Download,
}
