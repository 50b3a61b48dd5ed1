//! Wire messages between the page, the controller worker and runtime workers.
//!
//! Every message crosses a `postMessage` boundary as a JSON string. Anything
//! arriving from another context is untrusted: [`decode`] bounds its size and
//! returns a typed error instead of panicking, so a malformed message is
//! rejected with an explanation and never takes a worker down.
//!
//! The recovery semantics (commands, events, cursors) live in `lifeline-core`;
//! this crate only frames the conversation between the three contexts.

use lifeline_core::phrase::Phrase;
use lifeline_core::profile::{AgentBudget, Capabilities, Provider};
use lifeline_core::{
    Generation, JournalEntry, ProfileId, RuntimeId, RuntimeIdentity, SessionId, StartCause, TurnId,
    ViewDelta, WorkspaceId,
};
use lifeline_decode::Decode;
use lifeline_encode::Encode;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::fmt;

pub mod provider;

/// Bumped whenever a message changes shape; peers with another version refuse
/// each other rather than misreading fields.
pub const PROTOCOL_VERSION: u32 = 8;

/// Upper bound on an encoded message. Output streams are chunked well below
/// this, so anything larger is a bug or hostile input, not data to parse.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Whether this tab's controller may write the journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Holds the origin's leader lock: the one writer.
    Leader,
    /// Another tab leads; this one shows the journal live, read-only.
    Follower,
}

/// Page → controller.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
// Externally tagged, like ControllerToPage (why: there).
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum PageToController {
    /// First message. `cause` says whether runtimes of this page may still
    /// be alive (a controller restart) or every worker died (host loss).
    Start {
        protocol: u32,
        role: Role,
        cause: StartCause,
        /// The reader's language (a BCP 47 tag): the controller words
        /// every phrase in it before posting.
        #[serde(default)]
        locale: String,
    },
    /// The reader chose another language: phrases from now on, and the
    /// card and transcript again, in `locale`.
    Language {
        locale: String,
    },
    /// The page acquired the leader lock after another tab let go.
    Promote,
    /// Sent with a transferred `MessagePort` whose other end the page gave to
    /// this runtime worker (the relayed reverse dial).
    RuntimePort {
        runtime: RuntimeId,
        generation: Generation,
    },
    /// The page saw the worker die (`error` event) or terminated it. Only
    /// a claim: for a runtime that dialed in, its own port is believed.
    RuntimeExited {
        runtime: RuntimeId,
        generation: Generation,
        crashed: bool,
        detail: String,
    },
    /// The person asked to stop a runtime that is not responding.
    StopRuntime {
        runtime: RuntimeId,
        generation: Generation,
    },
    /// A `terminate()` the controller asked for could not be carried out.
    TerminateFailed {
        runtime: RuntimeId,
        generation: Generation,
        detail: String,
    },
    /// A prompt, under an identity the page minted so a resend is harmless.
    Prompt {
        turn: TurnId,
        text: String,
    },
    /// Stop the session's running turn, or cancel its start.
    Stop,
    /// Take back a message still waiting behind the running turn.
    WithdrawPrompt {
        turn: TurnId,
    },
    /// End a provider request's retry wait now ("Retry now").
    RetryNow,
    /// The page asked for persistent storage (only a window may).
    StoragePersisted {
        persisted: bool,
    },
    /// Resume the session's retained execution.
    Resume,
    /// Create or edit a profile. The controller assigns the revision.
    SaveProfile {
        profile: ProfileInput,
    },
    DeleteProfile {
        profile: ProfileId,
    },
    /// The profile new launches of the session use.
    SelectProfile {
        profile: ProfileId,
    },
    /// Export the session's evidence (docs/export.md). The controller
    /// answers `ExportReady`, then posts the tar archive itself as a
    /// transferred `ArrayBuffer` message (binary, outside the JSON bound);
    /// or an `export` notice saying why not.
    Export {
        session: SessionId,
    },
    /// An evidence archive to show read-only. The next message is the
    /// archive itself, a transferred `ArrayBuffer` of `bytes` bytes. It is
    /// folded apart from the journal and never written to it.
    Import {
        file_name: String,
        bytes: u64,
    },
    /// Kept bytes `offset..offset + len` of a command's output (stdout,
    /// then stderr), for the full-output view. Answered with `OutputRange`,
    /// or an `output` notice saying why not.
    ReadOutput {
        command: lifeline_core::CommandId,
        offset: u64,
        len: u64,
        /// The last `len` kept bytes instead (`offset` unused): the page
        /// does not know how many were kept.
        #[serde(default)]
        from_end: bool,
    },
    /// All of a command's kept output, to save: answered with
    /// `ExportReady`, then the bytes as a transferred `ArrayBuffer`.
    DownloadOutput {
        command: lifeline_core::CommandId,
    },
    /// One of the recovery card's actions (only those it offers).
    Recover {
        action: lifeline_core::recovery::Action,
    },
    /// The user's verdict on an uncertain command after checking it.
    CommandVerdict {
        command: lifeline_core::CommandId,
        done: bool,
    },
    /// Run an uncertain command again under a new idempotency key (the
    /// page asked for confirmation first).
    Reissue {
        command: lifeline_core::CommandId,
    },
    /// Set the damaged record aside and start writing (only while the
    /// journal is `ReadOnly`).
    RepairJournal,
    /// Workspace-only access: read one file of the stopped session's
    /// workspace (after `Recover { action: InspectWorkspace }`).
    ReadWorkspaceFile {
        path: String,
    },
    /// Leave workspace-only access.
    CloseWorkspace,
    /// Start a new session, linked from the current one, in another
    /// environment (the page asked for confirmation first; for a local
    /// folder it stored the handle under the folder id before sending).
    ChooseEnvironment {
        environment: lifeline_core::session::Environment,
    },
    /// Open a new session on its own workspace, in the worker sandbox.
    NewSession,
    /// Show this session (its transcript, card and composer).
    OpenSession {
        session: SessionId,
    },
    /// Name a session (journalled).
    RenameSession {
        session: SessionId,
        title: String,
    },
    /// The action a session's list item offers (`SessionItem::action`:
    /// Archive or Unarchive, journalled); the engine takes only that one.
    SessionAction {
        session: SessionId,
        action: lifeline_core::recovery::Action,
    },
    /// Delete a session for good, after the person confirmed it.
    DeleteSession {
        session: SessionId,
    },
    /// Sessions whose title or transcript contains every word of `query`;
    /// answered with `SessionSearch`.
    SearchSessions {
        query: String,
    },
}

/// A workspace's files as workspace-only access shows them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceListing {
    pub session: SessionId,
    /// (path, is a directory), sorted, bounded.
    pub entries: Vec<(String, bool)>,
    pub truncated: bool,
    /// The file last asked for: path and its text (bounded), or why not.
    pub file: Option<(String, Result<String, String>)>,
}

/// A profile as the user edits it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct ProfileInput {
    /// `None` creates a new profile.
    pub id: Option<ProfileId>,
    pub name: String,
    pub provider: Provider,
    pub api_key: KeyInput,
    /// Literal environment variables for commands, in order.
    pub env: Vec<(String, String)>,
    /// Also give commands the API key under this name (an explicit mapping).
    pub key_env: Option<String>,
    pub capabilities: Capabilities,
    pub budget: AgentBudget,
    /// A local model's sampling settings as typed (temperature, top-p, max
    /// tokens, context size): the controller reads and checks them
    /// (`Provider::with_sampling`). Empty: the provider's own.
    #[serde(default)]
    pub sampling: Vec<String>,
}

/// What to do with a profile's API key.
#[derive(Clone, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
// Externally tagged: page input only, never stored.
#[serde(rename_all = "snake_case")]
pub enum KeyInput {
    Keep,
    Clear,
    Set(SecretText),
}

impl fmt::Debug for KeyInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyInput::Keep => f.write_str("Keep"),
            KeyInput::Clear => f.write_str("Clear"),
            KeyInput::Set(_) => f.write_str("Set([redacted])"),
        }
    }
}

/// A secret crossing a `postMessage` boundary once, on its way to the
/// encrypted store or a runtime's environment. Its `Debug` hides it.
#[derive(Clone, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(transparent)]
pub struct SecretText(pub String);

impl fmt::Debug for SecretText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// A profile as the page shows it: never a secret, only whether one is set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct ProfileSummary<T = Phrase> {
    pub id: ProfileId,
    pub revision: u64,
    pub name: String,
    pub provider: Provider,
    /// For a local model: the facts the profile form shows (the page does
    /// not decode a local provider's spec).
    #[serde(default = "Option::default")]
    pub local_facts: Option<T>,
    /// For a local model: its sampling settings as the form shows them
    /// (`Sampling::texts`).
    #[serde(default)]
    pub sampling: Vec<String>,
    pub has_key: bool,
    pub env: Vec<(String, String)>,
    pub key_env: Option<String>,
    pub capabilities: Capabilities,
    pub budget: AgentBudget,
}

/// The session's lifecycle as the status line and Resume show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct SessionStatus {
    /// `new`, `starting`, `running`, `cancelling`, `cancelled`, `failed`, `archived`.
    /// What failed, and what to do, is the card's (worded by the page).
    pub state: String,
    /// The controller takes messages for this session now, and the status
    /// line says Connected: the session ran (it is running, failed,
    /// cancelled or archived; a start replaces an execution it ran, a
    /// chosen profile's; or a resume the person asked for, by Resume or a
    /// message, runs), or its runtime is attached. Only a page's first
    /// start waits for its runtime: a session's first launch, or the
    /// resume a controller starts by itself after a reload. A message sent
    /// while a start runs waits for it.
    #[serde(default)]
    pub takes_messages: bool,
    pub can_resume: bool,
    /// The profile new launches use, and the one the execution runs with.
    pub selected_profile: Option<ProfileId>,
    pub execution_profile: Option<ProfileId>,
    /// Prompts waiting behind the active turn or a start.
    pub queued: usize,
    /// The local folder the session's files live in, as recorded; `None`
    /// for the worker sandbox.
    #[serde(default)]
    pub folder: Option<lifeline_core::environment::FolderRef>,
    /// The prompts waiting, in the order they will run, each with the
    /// start of its text.
    #[serde(default)]
    pub waiting: Vec<Waiting>,
}

/// A prompt waiting to run: its turn and the start of its text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct Waiting {
    pub turn: TurnId,
    pub text: String,
}

/// The notice key of the controller's export and import (see
/// [`ControllerToPage::Notice`]).
pub const EXPORT_NOTICE: &str = "export";

/// Controller → page.
///
/// Externally tagged (`{"notice": {…}}`), unlike the other messages:
/// chosen when serde's derive decoded it in the page, which buffered an
/// internally tagged enum into a generic content tree first and so cost
/// the UI's wasm budget. (`lifeline_decode` reads either form alike.)
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ControllerToPage<T = Phrase> {
    /// The controller's module has loaded and its message handler is
    /// installed; messages sent earlier could have been lost.
    Ready {
        protocol: u32,
    },
    /// Sent every second; silence means the controller is dead or stuck.
    Heartbeat {
        beat: u64,
    },
    Status(Box<Status<T>>),
    /// Start a runtime worker with this identity; then hand it a port.
    SpawnRuntime {
        identity: RuntimeIdentity,
        workspace: WorkspaceId,
        /// The environment commands see, resolved at the launch checkpoint.
        #[serde(default)]
        env: Vec<(String, SecretText)>,
        /// A resume: the workspace must exist; the runtime never creates it.
        #[serde(default)]
        existing_workspace: bool,
        /// The session runs in this local folder instead of the sandbox.
        #[serde(default)]
        folder: Option<lifeline_core::FolderId>,
    },
    /// A resume rejoined this runtime: later commands in it see this
    /// environment (the recorded profile's current definitions).
    RuntimeEnvironment {
        runtime: RuntimeId,
        generation: Generation,
        env: Vec<(String, SecretText)>,
    },
    /// Terminate exactly this worker, then report `RuntimeExited`.
    TerminateRuntime {
        runtime: RuntimeId,
        generation: Generation,
    },
    /// Transcript changes; `reset` replaces everything shown so far.
    View {
        reset: bool,
        deltas: Vec<ViewDelta<T>>,
    },
    /// Something the user should know, as a structured phrase the page
    /// words in its language. The same `key` replaces an earlier notice;
    /// `None` clears it. Under [`EXPORT_NOTICE`], an export or import is
    /// under way while the notice is at `Info`, and has ended once it is
    /// cleared or says why it failed.
    Notice {
        key: String,
        level: Level,
        message: Option<T>,
    },
    /// A prompt the controller did not record, and why.
    PromptRefused {
        turn: TurnId,
        message: T,
    },
    /// Every profile; unreadable ones are listed in `errors`.
    Profiles {
        profiles: Vec<ProfileSummary<T>>,
        errors: Vec<String>,
    },
    /// A model's reply as it streams in. Not durable: the transcript shows
    /// the recorded reply once it is, and this text is only a preview.
    Streaming {
        turn: TurnId,
        text: String,
    },
    /// An export is ready: the next message is the archive, a transferred
    /// `ArrayBuffer` of `bytes` bytes, to save as `file_name`.
    ExportReady {
        session: SessionId,
        file_name: String,
        bytes: u64,
    },
    /// The recovery card for the session, or none when there is nothing to
    /// recover from. Built by the core; the page only renders it.
    Recovery {
        card: Option<Box<lifeline_core::recovery::Card<T>>>,
    },
    /// After a controller restart, once known: how many commands were
    /// running and how many of them continued in their runtime. The page
    /// phrases it.
    Restarted {
        running: u32,
        continued: u32,
    },
    /// Workspace-only access: the stopped session's files, read-only.
    Workspace {
        /// `None` closes the workspace view.
        listing: Option<WorkspaceListing>,
    },
    /// An imported run's transcript, read-only, in chunks below the
    /// message bound: `reset` starts a new import view.
    Imported {
        file_name: String,
        session: SessionId,
        title: String,
        reset: bool,
        deltas: Vec<ViewDelta<T>>,
    },
    /// The answer to a file picked for a local model profile (posted as
    /// `{importModel: File}`): once it is copied into the origin's private
    /// file system, the provider a profile saves (its header facts and
    /// default sampling), and what to say: the facts, or why the file
    /// cannot be a model. The page keeps the provider as it came.
    LocalModel {
        provider: Option<lifeline_core::profile::Provider>,
        said: T,
        /// Its default sampling settings as the form shows them.
        #[serde(default)]
        sampling: Vec<String>,
    },
    /// Every session of the journal, most recently active first, and the
    /// one this tab shows.
    Sessions {
        open: Option<SessionId>,
        list: Vec<lifeline_core::view::SessionItem>,
    },
    /// The answer to `SearchSessions`.
    SessionSearch {
        query: String,
        matches: Vec<SessionId>,
    },
    /// Kept output of `command` from `offset` to `end` (a `ReadOutput`
    /// answer), marked like a view's output; `kept` bytes were kept in all,
    /// `dropped` more were over the budget.
    OutputRange {
        command: lifeline_core::CommandId,
        offset: u64,
        end: u64,
        kept: u64,
        dropped: u64,
        text: String,
    },
}

impl<T> ControllerToPage<T> {
    /// Whether this message ends the controller's export or import: its
    /// [`EXPORT_NOTICE`] cleared, or saying why it failed (at `Info` it
    /// says one is under way). A file or an imported run ends one too.
    pub fn ends_export(&self) -> bool {
        matches!(
            self,
            ControllerToPage::Notice { key, level, message }
                if key == EXPORT_NOTICE && (message.is_none() || *level != Level::Info)
        )
    }

    /// The same message with every phrase worded by `word`: the controller
    /// posts `ControllerToPage<String>`, so the page carries no phrase
    /// decoder and no wording code (its wasm budget).
    pub fn word<U>(self, word: &mut impl FnMut(T) -> U) -> ControllerToPage<U> {
        use ControllerToPage as M;
        match self {
            M::Ready { protocol } => M::Ready { protocol },
            M::Heartbeat { beat } => M::Heartbeat { beat },
            M::Status(status) => M::Status(Box::new(status.word(word))),
            M::SpawnRuntime {
                identity,
                workspace,
                env,
                existing_workspace,
                folder,
            } => M::SpawnRuntime {
                identity,
                workspace,
                env,
                existing_workspace,
                folder,
            },
            M::RuntimeEnvironment {
                runtime,
                generation,
                env,
            } => M::RuntimeEnvironment {
                runtime,
                generation,
                env,
            },
            M::TerminateRuntime {
                runtime,
                generation,
            } => M::TerminateRuntime {
                runtime,
                generation,
            },
            M::View { reset, deltas } => M::View {
                reset,
                deltas: deltas.into_iter().map(|d| d.word(word)).collect(),
            },
            M::Notice {
                key,
                level,
                message,
            } => M::Notice {
                key,
                level,
                message: message.map(word),
            },
            M::PromptRefused { turn, message } => M::PromptRefused {
                turn,
                message: word(message),
            },
            M::Profiles { profiles, errors } => M::Profiles {
                profiles: profiles.into_iter().map(|p| p.word(word)).collect(),
                errors,
            },
            M::Streaming { turn, text } => M::Streaming { turn, text },
            M::ExportReady {
                session,
                file_name,
                bytes,
            } => M::ExportReady {
                session,
                file_name,
                bytes,
            },
            M::Recovery { card } => M::Recovery {
                card: card.map(|c| Box::new(c.word(word))),
            },
            M::Restarted { running, continued } => M::Restarted { running, continued },
            M::Workspace { listing } => M::Workspace { listing },
            M::Imported {
                file_name,
                session,
                title,
                reset,
                deltas,
            } => M::Imported {
                file_name,
                session,
                title,
                reset,
                deltas: deltas.into_iter().map(|d| d.word(word)).collect(),
            },
            M::LocalModel {
                provider,
                said,
                sampling,
            } => M::LocalModel {
                provider,
                said: word(said),
                sampling,
            },
            M::Sessions { open, list } => M::Sessions { open, list },
            M::SessionSearch { query, matches } => M::SessionSearch { query, matches },
            M::OutputRange {
                command,
                offset,
                end,
                kept,
                dropped,
                text,
            } => M::OutputRange {
                command,
                offset,
                end,
                kept,
                dropped,
                text,
            },
        }
    }
}

impl<T> Status<T> {
    pub fn word<U>(self, word: &mut impl FnMut(T) -> U) -> Status<U> {
        Status {
            role: self.role,
            writer: self.writer,
            journal: self.journal.word(word),
            session: self.session,
            runtime: self.runtime,
            storage: self.storage,
            busy: self.busy,
            lifecycle: self.lifecycle,
            position: self.position,
        }
    }
}

impl<T> JournalStatus<T> {
    pub fn word<U>(self, word: &mut impl FnMut(T) -> U) -> JournalStatus<U> {
        use JournalStatus as J;
        match self {
            J::Opening => J::Opening,
            J::Open { schema_version, id } => J::Open { schema_version, id },
            J::Unavailable { reason } => J::Unavailable {
                reason: word(reason),
            },
            J::Gone { reason } => J::Gone {
                reason: word(reason),
            },
            J::ReadOnly { reason } => J::ReadOnly {
                reason: word(reason),
            },
        }
    }
}

impl<T> ProfileSummary<T> {
    pub fn word<U>(self, word: &mut impl FnMut(T) -> U) -> ProfileSummary<U> {
        ProfileSummary {
            id: self.id,
            revision: self.revision,
            name: self.name,
            provider: self.provider,
            local_facts: self.local_facts.map(word),
            sampling: self.sampling,
            has_key: self.has_key,
            env: self.env,
            key_env: self.key_env,
            capabilities: self.capabilities,
            budget: self.budget,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// What the status line and the details pane show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct Status<T = Phrase> {
    pub role: Role,
    /// The leader has claimed the journal (recovery done); followers never do.
    pub writer: bool,
    pub journal: JournalStatus<T>,
    pub session: Option<SessionId>,
    pub runtime: Option<RuntimeStatus>,
    pub storage: Option<StorageStatus>,
    /// True while a turn is running or the session is starting (Stop is
    /// possible).
    pub busy: bool,
    pub lifecycle: Option<SessionStatus>,
    /// Last journal position this controller has applied.
    pub position: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct RuntimeStatus {
    pub runtime: RuntimeId,
    pub generation: Generation,
    pub attached: bool,
    /// Attached, its port open, but silent past the heartbeat timeout (a
    /// busy worker): not lost, and it can be stopped.
    #[serde(default)]
    pub not_responding: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct StorageStatus {
    pub usage: u64,
    pub quota: u64,
    pub persisted: bool,
}

/// Page → runtime.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
// Externally tagged, like the other worker-bound messages.
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum PageToRuntime {
    /// Who the runtime is, fixed for its life.
    Start {
        protocol: u32,
        identity: RuntimeIdentity,
        workspace: WorkspaceId,
        #[serde(default)]
        env: Vec<(String, SecretText)>,
        #[serde(default)]
        existing_workspace: bool,
        /// Run in this stored local folder, not `workspaces/<workspace>`.
        #[serde(default)]
        folder: Option<lifeline_core::FolderId>,
    },
    /// Sent with a transferred `MessagePort` leading to a (new) controller:
    /// the runtime drops its old port and sends a hello on this one.
    Dial,
    /// Replaces the profile part of the environment for later commands;
    /// the names the runtime sets itself stay.
    Environment { env: Vec<(String, SecretText)> },
}

/// Runtime → page. Externally tagged like [`ControllerToPage`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RuntimeToPage {
    Ready { protocol: u32 },
    Error { message: String },
}

/// Leader controller → follower controllers, on the origin's BroadcastChannel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
// Externally tagged, like ControllerToPage (why: there).
// Generic over how the entries are held: the leader writes them from the
// batch it persisted (`&[JournalEntry]`), without a copy; a follower reads
// them owned.
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Broadcast<E = Vec<JournalEntry>> {
    /// Entries already durable in IndexedDB, in position order. A follower
    /// applies those after its cursor and reads any gap from the journal.
    Entries { protocol: u32, entries: E },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum JournalStatus<T = Phrase> {
    Opening,
    Open {
        schema_version: u32,
        /// The journal's identity once the leader claimed it: a page that
        /// remembers another one knows the history it saw is gone.
        #[serde(default)]
        id: Option<String>,
    },
    /// Why, as a phrase the page words.
    Unavailable {
        reason: T,
    },
    /// The database was deleted or closed under the app: nothing more is
    /// read or written through this connection. The page keeps unrecorded
    /// messages and offers a new journal (a new controller opens it again).
    Gone {
        reason: T,
    },
    /// The history loaded, but a record writing needs is damaged: it is
    /// shown read-only, Export works, and the page offers `RepairJournal`.
    ReadOnly {
        reason: T,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    TooLarge { bytes: usize },
    Malformed { detail: String },
    VersionMismatch { theirs: u32 },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::TooLarge { bytes } => write!(
                f,
                "message rejected: {bytes} bytes exceeds the {MAX_MESSAGE_BYTES}-byte limit"
            ),
            DecodeError::Malformed { detail } => write!(f, "message rejected: {detail}"),
            DecodeError::VersionMismatch { theirs } => write!(
                f,
                "peer speaks protocol {theirs}, this build speaks {PROTOCOL_VERSION}; reload the page so both sides come from the same build"
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

impl DecodeError {
    /// What the page is told of a message of its own this worker refused;
    /// the decoder's words (`Display`) are for the worker's log.
    pub fn page_phrase(&self) -> Phrase {
        match self {
            DecodeError::TooLarge { bytes } => Phrase::PageMessageTooLarge {
                bytes: *bytes as u64,
                max: MAX_MESSAGE_BYTES as u64,
            },
            DecodeError::Malformed { .. } => Phrase::PageMessageRejected,
            DecodeError::VersionMismatch { theirs } => Phrase::PageOtherBuild {
                theirs: *theirs,
                ours: PROTOCOL_VERSION,
            },
        }
    }
}

/// The Web Lock a runtime worker holds for its whole life. The browser
/// releases it when the worker ends (crashed, closed itself, terminated),
/// and not while it is merely busy: the controller waits for it to learn of
/// the worker's death, which heartbeats cannot tell from a busy loop.
pub fn runtime_life_lock(runtime: RuntimeId, generation: Generation) -> String {
    format!("lifeline-runtime:{runtime}:{generation}")
}

pub fn encode<T: Serialize + lifeline_encode::Encode>(message: &T) -> String {
    lifeline_encode::to_string(message)
}

/// Decodes one message from a peer, natively and in the browser alike
/// (`lifeline_decode`).
pub fn decode<T: lifeline_decode::Decode + DeserializeOwned + Serialize>(
    text: &str,
) -> Result<T, DecodeError> {
    if text.len() > MAX_MESSAGE_BYTES {
        return Err(DecodeError::TooLarge { bytes: text.len() });
    }
    let read = lifeline_decode::from_str(text).map_err(|error| DecodeError::Malformed {
        detail: error.to_string(),
    });
    #[cfg(debug_assertions)]
    same_as_serde_json(text, &read);
    read
}

/// As `schema`'s: in debug builds every message read is also read with
/// serde_json, and what it accepts must read the same here.
#[cfg(debug_assertions)]
fn same_as_serde_json<T: DeserializeOwned + Serialize>(text: &str, read: &Result<T, DecodeError>) {
    if let Ok(theirs) = serde_json::from_str::<T>(text) {
        let ours = read.as_ref().map(|r| serde_json::to_string(r).ok());
        let theirs = serde_json::to_string(&theirs).ok();
        assert!(
            matches!(&ours, Ok(ours) if *ours == theirs),
            "lifeline_decode read {ours:?}, serde_json {theirs:?}"
        );
    }
}

/// Checks a peer's declared protocol version.
pub fn check_version(theirs: u32) -> Result<(), DecodeError> {
    if theirs == PROTOCOL_VERSION {
        Ok(())
    } else {
        Err(DecodeError::VersionMismatch { theirs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_ends_with_its_notice_cleared_or_failed_not_while_under_way() {
        let notice = |key: &str, level, message: Option<&str>| ControllerToPage::<String>::Notice {
            key: key.into(),
            level,
            message: message.map(Into::into),
        };
        assert!(!notice(EXPORT_NOTICE, Level::Info, Some("Exporting…")).ends_export());
        assert!(notice(EXPORT_NOTICE, Level::Info, None).ends_export());
        assert!(notice(EXPORT_NOTICE, Level::Warning, Some("with gaps")).ends_export());
        assert!(notice(EXPORT_NOTICE, Level::Error, Some("failed")).ends_export());
        assert!(!notice("profiles", Level::Error, Some("failed")).ends_export());
        assert!(!ControllerToPage::<String>::Ready {
            protocol: PROTOCOL_VERSION
        }
        .ends_export());
    }

    #[test]
    fn a_refused_page_message_is_worded_without_the_decoders_english() {
        let malformed = decode::<PageToController>("{\"nope\":1}").unwrap_err();
        assert!(matches!(malformed, DecodeError::Malformed { .. }));
        assert_eq!(malformed.page_phrase(), Phrase::PageMessageRejected);
        let big = "x".repeat(MAX_MESSAGE_BYTES + 1);
        assert_eq!(
            decode::<PageToController>(&big).unwrap_err().page_phrase(),
            Phrase::PageMessageTooLarge {
                bytes: MAX_MESSAGE_BYTES as u64 + 1,
                max: MAX_MESSAGE_BYTES as u64,
            }
        );
        assert_eq!(
            check_version(PROTOCOL_VERSION - 1)
                .unwrap_err()
                .page_phrase(),
            Phrase::PageOtherBuild {
                theirs: PROTOCOL_VERSION - 1,
                ours: PROTOCOL_VERSION,
            }
        );
    }

    fn id<T: std::str::FromStr>(text: &str) -> T
    where
        T::Err: std::fmt::Debug,
    {
        text.parse().unwrap()
    }

    #[test]
    fn messages_round_trip() {
        let message = PageToController::Prompt {
            turn: id("01JD0000000000000000000001"),
            text: "$ echo hi".into(),
        };
        assert_eq!(
            decode::<PageToController>(&encode(&message)).unwrap(),
            message
        );
        let spawn = ControllerToPage::SpawnRuntime {
            identity: RuntimeIdentity {
                lease: id("01JD0000000000000000000002"),
                runtime: id("01JD0000000000000000000003"),
                generation: Generation(2),
                execution: id("01JD0000000000000000000004"),
            },
            workspace: id("01JD0000000000000000000005"),
            env: vec![("TOKEN".into(), SecretText("s3cr3t".into()))],
            existing_workspace: true,
            folder: Some(id("01JD0000000000000000000006")),
        };
        assert_eq!(decode::<ControllerToPage>(&encode(&spawn)).unwrap(), spawn);
        // A spawn from a build before local folders runs in the sandbox.
        let older = encode(&spawn).replace(",\"folder\":\"01JD0000000000000000000006\"", "");
        assert!(!older.contains("folder"), "{older}");
        match decode::<ControllerToPage>(&older).unwrap() {
            ControllerToPage::SpawnRuntime { folder, .. } => assert_eq!(folder, None),
            other => panic!("{other:?}"),
        }
        let choose = PageToController::ChooseEnvironment {
            environment: lifeline_core::session::Environment::LocalFolder {
                folder: id("01JD0000000000000000000006"),
                name: "project".into(),
            },
        };
        assert_eq!(
            decode::<PageToController>(&encode(&choose)).unwrap(),
            choose
        );
    }

    #[test]
    fn secrets_never_show_in_debug() {
        let spawn: ControllerToPage = ControllerToPage::SpawnRuntime {
            identity: RuntimeIdentity {
                lease: id("01JD0000000000000000000002"),
                runtime: id("01JD0000000000000000000003"),
                generation: Generation(2),
                execution: id("01JD0000000000000000000004"),
            },
            workspace: id("01JD0000000000000000000005"),
            env: vec![("TOKEN".into(), SecretText("s3cr3t".into()))],
            existing_workspace: false,
            folder: None,
        };
        let save = PageToController::SaveProfile {
            profile: ProfileInput {
                id: None,
                name: "p".into(),
                provider: Provider::BuiltIn,
                api_key: KeyInput::Set(SecretText("s3cr3t".into())),
                env: vec![],
                key_env: None,
                capabilities: Capabilities::default(),
                budget: AgentBudget::default(),
                sampling: vec![],
            },
        };
        for text in [format!("{spawn:?}"), format!("{save:?}")] {
            assert!(!text.contains("s3cr3t"), "{text}");
        }
        assert!(
            encode(&save).contains("s3cr3t"),
            "the wire still carries it"
        );
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        for text in [
            "",
            "{",
            "null",
            "{\"type\":\"prompt\"}",
            "{\"type\":\"nope\"}",
            "[1,2]",
            "{\"type\":\"prompt\",\"turn\":\"not an id\",\"text\":\"x\"}",
        ] {
            assert!(matches!(
                decode::<PageToController>(text),
                Err(DecodeError::Malformed { .. })
            ));
        }
        let extra = "{\"type\":\"prompt\",\"turn\":\"01JD0000000000000000000001\",\"text\":\"x\",\"secret\":2}";
        assert!(decode::<PageToController>(extra).is_err());
    }

    #[test]
    fn oversized_input_is_refused_before_parsing() {
        let text = " ".repeat(MAX_MESSAGE_BYTES + 1);
        assert_eq!(
            decode::<PageToController>(&text),
            Err(DecodeError::TooLarge {
                bytes: MAX_MESSAGE_BYTES + 1
            })
        );
    }

    #[test]
    fn version_mismatch_is_explained() {
        let error = check_version(PROTOCOL_VERSION + 1).unwrap_err();
        assert!(error.to_string().contains("reload the page"));
        assert!(check_version(PROTOCOL_VERSION).is_ok());
    }
}
