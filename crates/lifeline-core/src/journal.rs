//! The durable journal: records, entries, persist batches and recovery evidence.
//!
//! The journal is an append-only list of entries with dense positions from 1.
//! The controller hands the shell one [`PersistBatch`] at a time; the shell
//! writes all of it (entries keyed by position, artifacts keyed by digest, so
//! a retried write is idempotent) in one transaction and reports back.

use crate::flat::FlatSet;
use crate::wire::{Arg, Reader, Wire, WireError};
use core::fmt;
use lifeline_decode::Decode;
use lifeline_encode::Encode;

use serde::{Deserialize, Serialize};

use crate::command::CommandRecord;
use crate::event::{ArtifactBlob, EventRecord};
use crate::id::{
    AttemptId, CommandId, Digest, ErrorStamp, ExecutionId, Generation, LeaseId, Millis,
    ProviderRequestId, RuntimeId, SessionId, TurnId, WorkspaceId,
};
use crate::outcome::{transition, CancelReason, Outcome, OutcomeEvent};
use crate::profile::{AgentBudget, ProfileRef, Tool};
use crate::schema::{check_text, limits, Schema, V1};
use crate::session_record::SessionRecord;

/// In its own module so that `ending` can name a class without importing
/// the journal (which records endings).
pub use crate::provider_failure::ProviderFailureClass;

/// Identity of a persist batch: the journal position of its first entry.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(transparent)]
pub struct BatchId(pub u64);

/// A runtime worker as the journal knows it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
pub struct RuntimeRef {
    pub lease: LeaseId,
    pub runtime: RuntimeId,
    pub generation: Generation,
}

/// Why a runtime generation stopped receiving work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum RetireCause {
    /// A newer generation was assigned to the lease.
    Replaced,
    /// A cancel's grace period ran out; the controller asked for termination.
    Escalation,
    /// Transport was lost and the runtime did not dial back in time.
    ReattachTimeout,
    /// Its session stopped it (a cancelled start, archive, delete).
    Stopped,
    /// The runtime died (crash, host loss, confirmed termination).
    Gone,
}

/// How a runtime generation is known to have ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum GoneCause {
    /// The shell confirmed the termination the controller asked for.
    Terminated,
    /// The worker reported an error or trap and is gone.
    Crashed,
    /// The page was reloaded or closed: every worker died with it.
    HostLoss,
}

/// How an acknowledgement was learned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum AckSource {
    /// The runtime's explicit ACK message.
    Ack,
    /// An event for the command (the runtime only emits after accepting).
    Event,
    /// The command appeared in the runtime's hello.
    Hello,
    /// The command appeared in the runtime's heartbeat.
    Heartbeat,
}

/// What a recovery procedure responded to.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryKind {
    ControllerRestart,
    HostLoss,
    TransportLoss,
    RuntimeCrash,
    CheckpointFailure,
    CleanupFailure,
    AckTimeout,
    CancelEscalation,
    ReattachTimeout,
    RuntimeReplaced,
    SessionStopped,
    StreamConflict,
}

impl RecoveryKind {
    pub const ALL: [RecoveryKind; 12] = [
        RecoveryKind::ControllerRestart,
        RecoveryKind::HostLoss,
        RecoveryKind::TransportLoss,
        RecoveryKind::RuntimeCrash,
        RecoveryKind::CheckpointFailure,
        RecoveryKind::CleanupFailure,
        RecoveryKind::AckTimeout,
        RecoveryKind::CancelEscalation,
        RecoveryKind::ReattachTimeout,
        RecoveryKind::RuntimeReplaced,
        RecoveryKind::SessionStopped,
        RecoveryKind::StreamConflict,
    ];
}

/// One command's outcome as a recovery procedure left it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct Resolution {
    pub command: CommandId,
    pub attempt: Option<AttemptId>,
    pub before: Outcome,
    pub after: Outcome,
}

/// What a recovery procedure observed and decided. Never erases anything:
/// it is appended, and outcome changes it implies are separate records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct RecoveryEvidence {
    pub v: V1,
    pub stamp: ErrorStamp,
    pub kind: RecoveryKind,
    pub at: Millis,
    pub runtime: Option<RuntimeRef>,
    /// What was observed, in words (no secrets: ids and counts only).
    pub observed: String,
    pub outcomes: Vec<Resolution>,
}

impl Schema for RecoveryEvidence {
    const NAME: &'static str = "recovery evidence";
    fn validate(&self) -> Result<(), String> {
        check_text("observation", &self.observed, limits::MAX_TEXT_BYTES)?;
        if self.outcomes.len() > limits::MAX_EVIDENCE_OUTCOMES {
            return Err("too many outcomes in one evidence record".into());
        }
        for r in &self.outcomes {
            if r.before.is_terminal() && r.before != r.after {
                return Err(format!(
                    "evidence moves command {} out of terminal outcome {}",
                    r.command, r.before
                ));
            }
        }
        Ok(())
    }
}

/// Why a runtime refused a dispatch. A refusal is proof the command did not
/// start on that runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum DispatchRefusal {
    WrongRuntime,
    /// The order names a generation other than the runtime's own.
    StaleGeneration {
        runtime_generation: Generation,
    },
    WrongExecution,
    /// A cancel for this command arrived first; it will never run here.
    CancelledBeforeAccept,
    Capacity,
}

impl DispatchRefusal {
    pub fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

impl fmt::Display for DispatchRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DispatchRefusal::WrongRuntime => write!(f, "dispatch names another runtime"),
            DispatchRefusal::StaleGeneration { runtime_generation } => write!(
                f,
                "dispatch names another generation; this runtime is generation {runtime_generation}"
            ),
            DispatchRefusal::WrongExecution => write!(f, "dispatch names another execution"),
            DispatchRefusal::CancelledBeforeAccept => {
                write!(f, "the command was cancelled before it was accepted")
            }
            DispatchRefusal::Capacity => write!(f, "the runtime holds too many commands"),
        }
    }
}

/// One durable fact.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum JournalRecord {
    LeaseGranted {
        workspace: WorkspaceId,
        lease: LeaseId,
    },
    RuntimeAssigned {
        lease: LeaseId,
        runtime: RuntimeId,
        generation: Generation,
        execution: ExecutionId,
    },
    /// No further dispatch or reattachment for this generation.
    RuntimeRetired {
        lease: LeaseId,
        runtime: RuntimeId,
        generation: Generation,
        cause: RetireCause,
    },
    /// The generation is confirmed dead.
    RuntimeGone {
        lease: LeaseId,
        runtime: RuntimeId,
        generation: Generation,
        cause: GoneCause,
    },
    CommandAdmitted(CommandRecord),
    /// Written before the dispatch is sent: from here on the command may have
    /// reached the runtime.
    DispatchExposed {
        command: CommandId,
        attempt: AttemptId,
        runtime: RuntimeId,
        generation: Generation,
    },
    Acknowledged {
        command: CommandId,
        attempt: AttemptId,
        via: AckSource,
    },
    DispatchRefused {
        command: CommandId,
        attempt: AttemptId,
        reason: DispatchRefusal,
    },
    Event(EventRecord),
    CancelRequested {
        command: CommandId,
        generation: Generation,
        reason: CancelReason,
    },
    TerminationRequested {
        runtime: RuntimeId,
        generation: Generation,
        command: Option<CommandId>,
    },
    OutcomeChanged {
        command: CommandId,
        event: OutcomeEvent,
        from: Outcome,
        to: Outcome,
    },
    ArtifactStored {
        digest: Digest,
        len: u64,
    },
    Recovery(RecoveryEvidence),
    /// A conversation on a workspace. The workspace's lease comes later, with
    /// its first runtime.
    SessionOpened {
        session: SessionId,
        workspace: WorkspaceId,
        title: String,
    },
    /// A prompt, written before any work for it, with the commands the agent
    /// decided to run for it in order. Each planned command is admitted under
    /// a key derived from the turn and its index, so re-deciding after a
    /// restart finds the command instead of running it again.
    TurnRecorded {
        session: SessionId,
        turn: TurnId,
        prompt: String,
        plan: Vec<String>,
        /// Who answers the turn. Journals written before model turns have
        /// no such field: their turns are the built-in agent's.
        #[serde(default)]
        agent: TurnAgent,
    },
    /// The agent's last word on a turn.
    TurnFinished {
        turn: TurnId,
        status: TurnStatus,
        reply: String,
        /// Set when the core, not the agent, ended the turn: the page
        /// words it. Journals written before it have none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ending: Option<crate::ending::TurnEnding>,
    },
    /// Written, and confirmed durable, before the shell sends the HTTP
    /// request for step `step` of a model turn. From here on the provider
    /// may have seen it: a request without a recorded outcome is uncertain
    /// once no live fetch owns it, and is never sent again.
    ProviderRequested {
        request: ProviderRequestId,
        turn: TurnId,
        /// 1 for a turn's first request, then one more per tool round.
        step: u32,
    },
    /// The provider's complete reply to a request.
    ProviderReplied {
        request: ProviderRequestId,
        text: String,
        tool_calls: Vec<ToolCallRecord>,
        /// The provider's stop reason as it gave it (`stop`, `tool_use`, ...).
        stop: String,
        input_tokens: u64,
        output_tokens: u64,
    },
    /// The request ended without a complete reply.
    ProviderFailed {
        request: ProviderRequestId,
        class: ProviderFailureClass,
        /// What the provider or the transport said (never a secret), in
        /// English around it when the app knows why (`reason`).
        message: String,
        /// Text that streamed in before the failure.
        partial_text: String,
        stamp: ErrorStamp,
        /// Why, when the app (not the provider) knows: the page words it
        /// in the reader's language. Journals written before it have none,
        /// and their `message` is shown as recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<FailureReason>,
    },
    /// One attempt at a provider request was refused before the provider
    /// processed it (429, 503, 529, or no connection), and the engine sends
    /// it again after `wait_ms`. Same request identity: the outcome, when it
    /// comes, is the last attempt's. Journals written before retries have
    /// no such records.
    ProviderRetried {
        request: ProviderRequestId,
        /// The attempt that was refused; the next one is `attempt + 1`.
        attempt: u32,
        class: ProviderFailureClass,
        /// What the provider or the transport said (never a secret).
        message: String,
        wait_ms: u64,
    },
    /// A session lifecycle record: launches, resumes, failures, archive
    /// (see [`crate::session`]). A field, not a newtype: both enums are
    /// tagged by `type`.
    Session {
        record: SessionRecord,
    },
}

/// Who answers a turn.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnAgent {
    /// The deterministic offline agent: the turn's plan is its commands.
    #[default]
    BuiltIn,
    /// A model provider, called by the controller shell. The plan is empty;
    /// the commands are the model's tool calls.
    Model {
        profile: ProfileRef,
        /// [`crate::profile::Provider::label`].
        provider: String,
        model: String,
        budget: AgentBudget,
        tools: FlatSet<Tool>,
    },
}

impl TurnAgent {
    pub fn is_model(&self) -> bool {
        matches!(self, TurnAgent::Model { .. })
    }

    pub fn validate(&self) -> Result<(), String> {
        match self {
            TurnAgent::BuiltIn => Ok(()),
            TurnAgent::Model {
                provider, model, ..
            } => {
                check_text("provider", provider, limits::MAX_TOOL_LABEL_BYTES)?;
                check_text("model", model, limits::MAX_TOOL_LABEL_BYTES)
            }
        }
    }
}

/// One tool call of a provider reply, as the provider gave it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct ToolCallRecord {
    /// The provider's id for the call; tool results name it.
    pub id: String,
    pub name: String,
    /// The arguments as JSON text, unparsed (a model can send bad JSON).
    pub arguments: String,
}

/// What the app knows of why a provider request failed, beyond its class;
/// its `Display` is the English the record's `message` keeps. The outside
/// words it carries (llama.cpp's, a decoder's) stay as they were said.
///
/// Stored in the compact wire form (`crate::wire`): a derived enum
/// decoder per variant would cost the controller's wasm budget ~16 KB.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(into = "Wire", try_from = "Wire")]
pub enum FailureReason {
    /// Stop, while the request was out.
    Stopped,
    /// Stop, during the wait before a retry.
    StoppedWaitingToRetry,
    /// Stop, before the request was sent.
    StoppedBeforeSent,
    /// Stop, while the local model was loading.
    StoppedWhileLoading,
    /// The execution has no model provider.
    NoProvider,
    /// No response arrived within the connect timeout.
    NoResponseWithin {
        seconds: u64,
    },
    /// The reply went quiet longer than the idle timeout.
    NoByteFor {
        seconds: u64,
    },
    /// A local model's load made no progress for `seconds`.
    LoadStalled {
        seconds: u64,
        read: u64,
        total: u64,
    },
    /// `fetch` failed and the browser said nothing more.
    RequestFailed,
    /// The reply's body stopped and the browser said nothing more.
    ReplyStopped,
    NotGguf {
        detail: String,
    },
    UnsupportedArchitecture {
        detail: String,
    },
    ContextTooLong {
        detail: String,
    },
    OutOfMemory {
        detail: String,
    },
    /// wllama failed and said nothing more than the error's name.
    LocalFailed {
        name: String,
    },
    InvalidUtf8,
    NoBody,
    Unfinished,
    Malformed {
        detail: String,
    },
    TooLarge {
        what: String,
    },
    BuiltIn,
    LocalSettingsUnreadable,
    NoAbortController,
    NoHeaders,
    HeaderRefused {
        name: String,
    },
    /// The profile's base URL is not an `http://` or `https://` URL.
    InvalidBaseUrl {
        url: String,
    },
    /// The profile names no model.
    NoModel,
    /// The profile's reply budget is zero tokens.
    ZeroMaxTokens,
    /// The key has characters an HTTP header cannot carry (never echoed).
    KeyUnsendable,
    /// The worker that carried the request out (the provider worker) ended
    /// while it was out.
    WorkerEnded,
}

crate::wire::nested!(FailureReason {
    0 => Stopped,
    1 => StoppedWaitingToRetry,
    2 => StoppedBeforeSent,
    3 => StoppedWhileLoading,
    4 => NoProvider,
    5 => NoResponseWithin { seconds },
    6 => NoByteFor { seconds },
    7 => LoadStalled { seconds, read, total },
    8 => RequestFailed,
    9 => ReplyStopped,
    10 => NotGguf { detail },
    11 => UnsupportedArchitecture { detail },
    12 => ContextTooLong { detail },
    13 => OutOfMemory { detail },
    14 => LocalFailed { name },
    15 => InvalidUtf8,
    16 => NoBody,
    17 => Unfinished,
    18 => Malformed { detail },
    19 => TooLarge { what },
    20 => BuiltIn,
    21 => LocalSettingsUnreadable,
    22 => NoAbortController,
    23 => NoHeaders,
    24 => HeaderRefused { name },
    25 => InvalidBaseUrl { url },
    26 => NoModel,
    27 => ZeroMaxTokens,
    28 => KeyUnsendable,
    29 => WorkerEnded,
});

impl From<FailureReason> for Wire {
    fn from(r: FailureReason) -> Wire {
        let mut w = Wire(0, Vec::new(), Vec::new(), Vec::new());
        r.put(&mut w);
        w
    }
}

impl TryFrom<Wire> for FailureReason {
    type Error = WireError;
    fn try_from(w: Wire) -> Result<FailureReason, WireError> {
        let Wire(_, s, n, p) = w;
        FailureReason::take(&mut Reader {
            s: s.into_iter(),
            n: n.into_iter(),
            p: p.into_iter(),
        })
    }
}

impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use FailureReason as R;
        match self {
            R::Stopped => f.write_str("stopped by the user"),
            R::StoppedWaitingToRetry => f.write_str("stopped by the user while waiting to retry"),
            R::StoppedBeforeSent => f.write_str("stopped by the user before it was sent"),
            R::StoppedWhileLoading => f.write_str(
                "stopped by the user while the local model was loading; nothing was generated",
            ),
            R::NoProvider => {
                f.write_str("this execution has no model provider; resume the session")
            }
            R::NoResponseWithin { seconds } => {
                write!(f, "no response arrived within {seconds} s")
            }
            R::NoByteFor { seconds } => write!(f, "no byte of the reply arrived for {seconds} s"),
            R::LoadStalled {
                seconds,
                read,
                total,
            } => write!(
                f,
                "the local model stopped loading: no progress for {seconds} s, at {read} of {total} bytes; nothing was generated"
            ),
            R::RequestFailed => f.write_str("the request failed before any response arrived"),
            R::ReplyStopped => f.write_str("the reply stopped arriving"),
            R::NotGguf { detail } => write!(f, "the model file is not a GGUF model: {detail}"),
            R::UnsupportedArchitecture { detail } => write!(
                f,
                "llama.cpp does not support this model's architecture: {detail}"
            ),
            R::ContextTooLong { detail } => write!(
                f,
                "the conversation does not fit the model's context: {detail}"
            ),
            R::OutOfMemory { detail } => {
                write!(f, "the browser ran out of memory for the model: {detail}")
            }
            R::LocalFailed { name } => write!(f, "{name}: the local model failed"),
            R::InvalidUtf8 => f.write_str(
                "the model produced bytes that are not UTF-8 text; the reply is broken",
            ),
            R::NoBody => f.write_str("the provider answered without a body"),
            R::Unfinished => {
                f.write_str("the reply stream ended without the provider's finish reason")
            }
            R::Malformed { detail } => write!(f, "the reply stream was malformed: {detail}"),
            R::TooLarge { what } => write!(f, "the reply was too large ({what})"),
            R::BuiltIn => f.write_str("the built-in agent sends no requests"),
            R::LocalSettingsUnreadable => f.write_str("the local model's settings are unreadable"),
            R::NoAbortController => f.write_str(
                "the browser refused to make an abort controller; nothing was sent",
            ),
            R::NoHeaders => f.write_str("the browser refused to build the request headers"),
            R::HeaderRefused { name } => write!(
                f,
                "the request header {name} has characters a browser cannot send"
            ),
            R::InvalidBaseUrl { url } => write!(
                f,
                "the profile's base URL “{url}” is not an http:// or https:// URL"
            ),
            R::NoModel => f.write_str("the profile names no model"),
            R::ZeroMaxTokens => f.write_str("the profile's max tokens is zero"),
            R::KeyUnsendable => f.write_str(
                "the API key contains characters an HTTP header cannot carry (spaces, line breaks or non-ASCII); paste it again",
            ),
            R::WorkerEnded => f.write_str("the worker calling the model stopped"),
        }
    }
}

/// Checks a provider reply's parts against the limits.
pub(crate) fn check_reply(
    text: &str,
    tool_calls: &[ToolCallRecord],
    stop: &str,
) -> Result<(), String> {
    check_text("reply text", text, limits::MAX_REPLY_TEXT_BYTES)?;
    check_text("stop reason", stop, limits::MAX_TOOL_LABEL_BYTES)?;
    if tool_calls.len() > limits::MAX_TOOL_CALLS {
        return Err(format!(
            "{} tool calls in one reply; the limit is {}",
            tool_calls.len(),
            limits::MAX_TOOL_CALLS
        ));
    }
    let mut total = text.len();
    for call in tool_calls {
        check_text("tool call id", &call.id, limits::MAX_TOOL_LABEL_BYTES)?;
        check_text("tool name", &call.name, limits::MAX_TOOL_LABEL_BYTES)?;
        check_text(
            "tool call arguments",
            &call.arguments,
            limits::MAX_TOOL_ARGUMENTS_BYTES,
        )?;
        total += call.arguments.len();
    }
    if total > limits::MAX_REPLY_TOTAL_BYTES {
        return Err(format!(
            "the reply's text and tool arguments are {total} bytes; the limit is {}",
            limits::MAX_REPLY_TOTAL_BYTES
        ));
    }
    Ok(())
}

/// Checks a provider failure's parts against the limits.
pub(crate) fn check_failure(message: &str, partial_text: &str) -> Result<(), String> {
    check_text(
        "failure message",
        message,
        limits::MAX_PROVIDER_MESSAGE_BYTES,
    )?;
    check_text(
        "partial reply text",
        partial_text,
        limits::MAX_REPLY_TEXT_BYTES,
    )
}

/// How a turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    /// Every planned command completed.
    Completed,
    /// A command failed; the rest of the plan was not run.
    Failed,
    /// A command's outcome is uncertain or lost; nothing after it was run.
    Interrupted,
    /// The user stopped it.
    Cancelled,
}

impl TurnStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Completed => "completed",
            TurnStatus::Failed => "failed",
            TurnStatus::Interrupted => "interrupted",
            TurnStatus::Cancelled => "cancelled",
        }
    }
}

impl JournalRecord {
    pub fn validate(&self) -> Result<(), String> {
        match self {
            JournalRecord::CommandAdmitted(c) => c.validate(),
            JournalRecord::Event(e) => e.validate(),
            JournalRecord::Recovery(r) => r.validate(),
            JournalRecord::OutcomeChanged {
                event, from, to, ..
            } => match transition(*from, *event) {
                Ok(t) if t == *to => Ok(()),
                Ok(t) => Err(format!(
                    "outcome change {from} + {event:?} records {to} but the table gives {t}"
                )),
                Err(e) => Err(e.to_string()),
            },
            JournalRecord::RuntimeAssigned { generation, .. }
            | JournalRecord::RuntimeRetired { generation, .. }
            | JournalRecord::RuntimeGone { generation, .. }
            | JournalRecord::DispatchExposed { generation, .. }
            | JournalRecord::CancelRequested { generation, .. }
            | JournalRecord::TerminationRequested { generation, .. } => {
                if generation.0 == 0 {
                    Err("generation must be at least 1".into())
                } else {
                    Ok(())
                }
            }
            JournalRecord::DispatchRefused { reason, .. } => reason.validate(),
            JournalRecord::SessionOpened { title, .. } => {
                check_text("session title", title, limits::MAX_TEXT_BYTES)
            }
            JournalRecord::TurnRecorded {
                prompt,
                plan,
                agent,
                ..
            } => {
                check_text("prompt", prompt, limits::MAX_PROMPT_BYTES)?;
                agent.validate()?;
                if agent.is_model() && !plan.is_empty() {
                    return Err("a model turn records no plan".into());
                }
                let plan_bytes: usize = plan.iter().map(String::len).sum();
                if plan_bytes > limits::MAX_PROMPT_BYTES {
                    return Err(format!(
                        "the plan is {plan_bytes} bytes; the limit is {}",
                        limits::MAX_PROMPT_BYTES
                    ));
                }
                if plan.len() > limits::MAX_PLAN_COMMANDS {
                    return Err(format!(
                        "{} planned commands; the limit is {}",
                        plan.len(),
                        limits::MAX_PLAN_COMMANDS
                    ));
                }
                for line in plan {
                    check_text("planned command", line, limits::MAX_COMMAND_LINE_BYTES)?;
                }
                Ok(())
            }
            JournalRecord::TurnFinished { reply, .. } => {
                check_text("reply", reply, limits::MAX_PROMPT_BYTES)
            }
            JournalRecord::ProviderRequested { step, .. } => {
                if *step == 0 {
                    Err("provider request steps start at 1".into())
                } else {
                    Ok(())
                }
            }
            JournalRecord::ProviderReplied {
                text,
                tool_calls,
                stop,
                ..
            } => check_reply(text, tool_calls, stop),
            JournalRecord::ProviderFailed {
                message,
                partial_text,
                reason,
                ..
            } => {
                // Its outside words are in `message` too: one bound for both.
                let words = reason.as_ref().map(|r| r.to_string());
                check_failure(message, partial_text)?;
                check_text(
                    "failure reason",
                    words.as_deref().unwrap_or_default(),
                    limits::MAX_PROVIDER_MESSAGE_BYTES,
                )
            }
            JournalRecord::ProviderRetried { message, .. } => check_failure(message, ""),
            JournalRecord::Session { record } => {
                // Its text fields are notes and failure details; one
                // bound on the whole record keeps them all small.
                let bytes = lifeline_encode::to_string(record).len();
                if bytes > limits::MAX_SESSION_RECORD_BYTES {
                    return Err(format!(
                        "a session record of {bytes} bytes; the limit is {}",
                        limits::MAX_SESSION_RECORD_BYTES
                    ));
                }
                Ok(())
            }
            JournalRecord::LeaseGranted { .. }
            | JournalRecord::Acknowledged { .. }
            | JournalRecord::ArtifactStored { .. } => Ok(()),
        }
    }
}

/// A record at its journal position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct JournalEntry {
    pub v: V1,
    pub position: u64,
    pub at: Millis,
    pub record: JournalRecord,
}

impl Schema for JournalEntry {
    const NAME: &'static str = "journal entry";
    fn validate(&self) -> Result<(), String> {
        if self.position == 0 {
            return Err("journal positions start at 1".into());
        }
        self.record.validate()
    }
}

/// Records to write in one transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct PersistBatch {
    pub v: V1,
    pub batch: BatchId,
    pub entries: Vec<JournalEntry>,
    /// Content-addressed output named by `ArtifactStored` entries in this batch.
    pub artifacts: Vec<ArtifactBlob>,
    /// A deleted session's other records, removed in this batch's
    /// transaction after its entries (the tombstone) are written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purge: Option<Purge>,
}

/// What deleting a session removes from the journal, by store key
/// (see `worker/store` `schema.rs`): the tombstone's batch carries it, so
/// the removal and the tombstone commit together or not at all.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct Purge {
    pub session: SessionId,
    /// Positions in `records`.
    pub records: Vec<u64>,
    /// Keys in `commands`; their `events` go with them.
    pub commands: Vec<CommandId>,
    /// Keys in `evidence`.
    pub evidence: Vec<ErrorStamp>,
    /// Keys in `artifacts` that no other session names.
    pub artifacts: Vec<Digest>,
    /// The projection after the tombstone, encoded, at the batch's last
    /// position: written as the only snapshot, in the same transaction, so
    /// no fold ever starts before the removed entries (nor from a snapshot
    /// that still holds them).
    pub snapshot: Option<(u64, String)>,
}

impl Schema for PersistBatch {
    const NAME: &'static str = "persist batch";
    fn validate(&self) -> Result<(), String> {
        if self.entries.is_empty() {
            return Err("a persist batch holds at least one entry".into());
        }
        if self.entries.len() > limits::MAX_BATCH_ENTRIES {
            return Err(format!(
                "{} entries; the limit is {}",
                self.entries.len(),
                limits::MAX_BATCH_ENTRIES
            ));
        }
        for (i, e) in self.entries.iter().enumerate() {
            if e.position != self.batch.0 + i as u64 {
                return Err(format!(
                    "entry {i} is at position {} but the batch starts at {}",
                    e.position, self.batch.0
                ));
            }
            e.validate()?;
        }
        for a in &self.artifacts {
            // An `ArtifactBlob`'s digest is its content's by construction.
            debug_assert_eq!(Digest::of(a.data().as_bytes()), a.digest());
            let named = self.entries.iter().any(|e| {
                matches!(&e.record, JournalRecord::ArtifactStored { digest, .. } if *digest == a.digest())
            });
            if !named {
                return Err(format!("artifact {} is not named by an entry", a.digest()));
            }
        }
        Ok(())
    }
}

/// A journal that cannot be replayed: corrupt, reordered or contradictory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct ReplayError {
    pub position: u64,
    pub detail: String,
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "journal entry at position {} cannot be replayed: {}",
            self.position, self.detail
        )
    }
}

impl std::error::Error for ReplayError {}
