//! Messages between the controller, runtimes and clients.
//!
//! Every runtime-bound message names the runtime identity and generation it
//! is meant for, so a message that reaches the wrong worker (a replacement,
//! or a stale port) is refused instead of acting on another command.

use core::fmt;
use lifeline_decode::Decode;
use lifeline_encode::Encode;

use serde::{Deserialize, Serialize};

use crate::command::{Binding, BindingField, BindingMismatch};
use crate::event::{Cursor, EventBody, RetainedBody};
use crate::id::{
    AttemptId, CommandId, EventSeq, ExecutionId, Generation, IdempotencyKey, LeaseId,
    ProviderRequestId, RuntimeId, SessionId, TurnId, WorkspaceId,
};
use crate::journal::{
    DispatchRefusal, ProviderFailureClass, RecoveryEvidence, ToolCallRecord, TurnAgent, TurnStatus,
};
use crate::outcome::{CancelReason, Outcome, OutcomeEvent};
use crate::schema::{limits, Schema, V1};
use crate::session_record::SessionRecord;

/// A stream as the runtime sees it: how far it has emitted and how far the
/// controller has confirmed as durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct StreamPosition {
    pub command: CommandId,
    pub attempt: AttemptId,
    pub last_seq: EventSeq,
    pub durable_through: EventSeq,
}

/// The controller's durable position for one command stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct DurablePosition {
    pub command: CommandId,
    pub through: EventSeq,
}

/// The reverse dial: a runtime introduces itself on a new port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    pub v: V1,
    pub lease: LeaseId,
    pub runtime: RuntimeId,
    pub generation: Generation,
    pub execution: ExecutionId,
    /// Every command this runtime has accepted and not yet seen fully durable.
    pub streams: Vec<StreamPosition>,
}

impl Schema for Hello {
    const NAME: &'static str = "runtime hello";
    fn validate(&self) -> Result<(), String> {
        check_streams(&self.streams)
    }
}

fn check_streams(streams: &[StreamPosition]) -> Result<(), String> {
    if streams.len() > limits::MAX_STREAMS_PER_MESSAGE {
        return Err(format!(
            "{} streams; the limit is {}",
            streams.len(),
            limits::MAX_STREAMS_PER_MESSAGE
        ));
    }
    for s in streams {
        if s.durable_through > s.last_seq {
            return Err(format!(
                "stream {} claims durable {} beyond its last sequence {}",
                s.command, s.durable_through, s.last_seq
            ));
        }
    }
    Ok(())
}

/// Why the controller refused a hello.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum HelloRejection {
    UnknownLease,
    UnknownRuntime,
    /// The journal records a different generation as current for the lease.
    StaleGeneration {
        current: Option<Generation>,
    },
    WrongExecution,
    /// The generation was retired (replaced, escalated or gone).
    Retired,
    Malformed {
        detail: String,
    },
}

impl fmt::Display for HelloRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HelloRejection::UnknownLease => write!(f, "the journal has no such lease"),
            HelloRejection::UnknownRuntime => {
                write!(f, "the journal has no such runtime on this lease")
            }
            HelloRejection::StaleGeneration { current: Some(g) } => write!(
                f,
                "stale generation: the journal's current generation for this lease is {g}"
            ),
            HelloRejection::StaleGeneration { current: None } => {
                write!(f, "stale generation: the lease has no current runtime")
            }
            HelloRejection::WrongExecution => {
                write!(f, "the execution id does not match the journal")
            }
            HelloRejection::Retired => write!(f, "this runtime generation was retired"),
            HelloRejection::Malformed { detail } => write!(f, "malformed hello: {detail}"),
        }
    }
}

/// Order to run one command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct DispatchOrder {
    pub command: CommandId,
    pub attempt: AttemptId,
    pub execution: ExecutionId,
    pub binding: Binding,
}

/// What a runtime says about a cancel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum CancelReply {
    /// The process is being killed; a terminal event follows.
    Stopping,
    /// This runtime never accepted the command and now never will.
    NeverAccepted,
    /// The command already has a terminal event.
    AlreadyFinished,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
// Externally tagged: an internally tagged enum is decoded through serde's
// buffered content tree, which costs the workers' wasm dearly; only this
// build's controller and runtimes speak it (the protocol version says so).
#[serde(rename_all = "snake_case")]
pub enum ControllerToRuntime {
    HelloAccepted {
        runtime: RuntimeId,
        generation: Generation,
        /// Last durable sequence per command; the runtime resends after it.
        durable: Vec<DurablePosition>,
    },
    HelloRejected {
        runtime: RuntimeId,
        generation: Generation,
        reason: HelloRejection,
    },
    Dispatch {
        runtime: RuntimeId,
        generation: Generation,
        order: DispatchOrder,
    },
    Cancel {
        runtime: RuntimeId,
        generation: Generation,
        command: CommandId,
        reason: CancelReason,
    },
    /// Events through `through` are durable; the runtime may forget them.
    EventsDurable {
        runtime: RuntimeId,
        generation: Generation,
        command: CommandId,
        through: EventSeq,
    },
    /// The controller is missing events after `after`.
    Resend {
        runtime: RuntimeId,
        generation: Generation,
        command: CommandId,
        after: EventSeq,
    },
    /// The controller heard from a runtime it has not attached (it detached
    /// it, e.g. after missed heartbeats, while the port still works): the
    /// runtime must dial in again with a hello before anything it says counts.
    HelloRequired {
        runtime: RuntimeId,
        generation: Generation,
    },
}

impl ControllerToRuntime {
    pub fn target(&self) -> (RuntimeId, Generation) {
        match self {
            ControllerToRuntime::HelloAccepted {
                runtime,
                generation,
                ..
            }
            | ControllerToRuntime::HelloRejected {
                runtime,
                generation,
                ..
            }
            | ControllerToRuntime::Dispatch {
                runtime,
                generation,
                ..
            }
            | ControllerToRuntime::Cancel {
                runtime,
                generation,
                ..
            }
            | ControllerToRuntime::EventsDurable {
                runtime,
                generation,
                ..
            }
            | ControllerToRuntime::Resend {
                runtime,
                generation,
                ..
            }
            | ControllerToRuntime::HelloRequired {
                runtime,
                generation,
            } => (*runtime, *generation),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
// Externally tagged: an internally tagged enum is decoded through serde's
// buffered content tree, which costs the workers' wasm dearly; only this
// build's controller and runtimes speak it (the protocol version says so).
#[serde(rename_all = "snake_case")]
pub enum RuntimeToController {
    Hello(Hello),
    Ack {
        runtime: RuntimeId,
        generation: Generation,
        command: CommandId,
        attempt: AttemptId,
    },
    Refuse {
        runtime: RuntimeId,
        generation: Generation,
        command: CommandId,
        attempt: AttemptId,
        refusal: DispatchRefusal,
    },
    Event {
        runtime: RuntimeId,
        generation: Generation,
        command: CommandId,
        seq: EventSeq,
        body: EventBody,
    },
    Heartbeat {
        runtime: RuntimeId,
        generation: Generation,
        streams: Vec<StreamPosition>,
    },
    CancelReply {
        runtime: RuntimeId,
        generation: Generation,
        command: CommandId,
        reply: CancelReply,
    },
}

impl RuntimeToController {
    pub fn sender(&self) -> (RuntimeId, Generation) {
        match self {
            RuntimeToController::Hello(h) => (h.runtime, h.generation),
            RuntimeToController::Ack {
                runtime,
                generation,
                ..
            }
            | RuntimeToController::Refuse {
                runtime,
                generation,
                ..
            }
            | RuntimeToController::Event {
                runtime,
                generation,
                ..
            }
            | RuntimeToController::Heartbeat {
                runtime,
                generation,
                ..
            }
            | RuntimeToController::CancelReply {
                runtime,
                generation,
                ..
            } => (*runtime, *generation),
        }
    }

    /// An output event's text, taken out to travel beside the message's
    /// JSON as raw UTF-8: inside it, every line end was escaped by the
    /// runtime and unescaped again by the controller, 44–73 ms of each
    /// thread per 8.9 MB (docs/benchmarks.md, "Twenty-fourth stop"). The
    /// event is left with an empty text; an empty text stays in place.
    pub fn take_output_text(&mut self) -> Option<String> {
        match self {
            RuntimeToController::Event {
                body: EventBody::Stdout { data } | EventBody::Stderr { data },
                ..
            } if !data.is_empty() => Some(std::mem::take(data)),
            _ => None,
        }
    }

    /// Puts back the text that travelled beside this message: only an
    /// output event whose own text is empty has a place for it.
    pub fn put_output_text(&mut self, text: String) -> Result<(), String> {
        match self {
            RuntimeToController::Event {
                body: EventBody::Stdout { data } | EventBody::Stderr { data },
                ..
            } if data.is_empty() => {
                *data = text;
                Ok(())
            }
            _ => Err("output text beside a message that has no empty output event".into()),
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        match self {
            RuntimeToController::Hello(h) => h.validate(),
            RuntimeToController::Heartbeat { streams, .. } => check_streams(streams),
            RuntimeToController::Event { seq, body, .. } => {
                if seq.0 == 0 {
                    return Err("event sequence starts at 1".into());
                }
                body.validate()
            }
            RuntimeToController::Refuse { refusal, .. } => refusal.validate(),
            RuntimeToController::Ack { .. } | RuntimeToController::CancelReply { .. } => Ok(()),
        }
    }
}

/// A client attachment (a tab's UI), numbered by the shell.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(transparent)]
pub struct ClientId(pub u64);

/// Client-chosen correlation number for a request.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(transparent)]
pub struct RequestId(pub u64);

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientRequest {
    /// Assigns the next runtime generation for the workspace's lease
    /// (creating the lease on first use) and retires the previous one.
    StartRuntime {
        request: RequestId,
        workspace: WorkspaceId,
    },
    Admit {
        request: RequestId,
        key: IdempotencyKey,
        binding: Binding,
    },
    /// Runs an uncertain command (`may_have_started` or `lost`) again,
    /// deliberately, under a new key: admitted like `Admit`, with the link
    /// to `original` in the same record. Refused unless `original` is
    /// uncertain, not yet re-issued, and the binding is its session's and
    /// command line.
    Reissue {
        request: RequestId,
        key: IdempotencyKey,
        original: CommandId,
        binding: Binding,
    },
    /// Names the exact command and the generation the client believes it is bound to.
    Cancel {
        request: RequestId,
        command: CommandId,
        generation: Generation,
    },
    Join {
        request: RequestId,
        cursor: Cursor,
    },
    /// Opens a conversation on a new workspace; repeating it is harmless.
    OpenSession {
        request: RequestId,
        session: SessionId,
        workspace: WorkspaceId,
        title: String,
    },
    /// Records a prompt and its plan before any work for it. Repeating the
    /// same turn id with the same content returns the original; the same id
    /// with different content is refused.
    RecordTurn {
        request: RequestId,
        session: SessionId,
        turn: TurnId,
        prompt: String,
        plan: Vec<String>,
        /// Who answers the turn; part of the content compared on a repeat.
        #[serde(default)]
        agent: TurnAgent,
    },
    FinishTurn {
        request: RequestId,
        turn: TurnId,
        status: TurnStatus,
        reply: String,
        /// Why the core ended the turn, when it did (see `ending`).
        #[serde(default)]
        ending: Option<crate::ending::TurnEnding>,
    },
    /// Records that step `step` of a model turn is about to be sent to the
    /// provider. The shell sends the HTTP request only after the answer
    /// ([`ClientMessage::ProviderRequestRecorded`]), which comes once the
    /// record is durable. Repeating it with the same content is harmless.
    RecordProviderRequest {
        request: RequestId,
        provider_request: ProviderRequestId,
        turn: TurnId,
        step: u32,
    },
    /// Records a provider's complete reply. Once per provider request; an
    /// identical repeat is accepted, a different one refused.
    RecordProviderReply {
        request: RequestId,
        provider_request: ProviderRequestId,
        text: String,
        tool_calls: Vec<ToolCallRecord>,
        stop: String,
        input_tokens: u64,
        output_tokens: u64,
    },
    /// Records that a provider request ended without a complete reply.
    /// Once per provider request, like a reply.
    RecordProviderFailure {
        request: RequestId,
        provider_request: ProviderRequestId,
        class: ProviderFailureClass,
        message: String,
        partial_text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<crate::journal::FailureReason>,
    },
    /// Records that one attempt at a provider request was refused before
    /// the provider processed it and will be sent again after `wait_ms`.
    /// Evidence only: nothing waits for it, and it has no answer.
    RecordProviderRetry {
        request: RequestId,
        provider_request: ProviderRequestId,
        attempt: u32,
        class: ProviderFailureClass,
        message: String,
        wait_ms: u64,
    },
    /// Writes a session lifecycle record; answered with
    /// [`ClientMessage::SessionRecorded`] once it is durable.
    RecordSession {
        request: RequestId,
        record: SessionRecord,
    },
    /// Stops exactly this runtime generation (a cancelled start, archive,
    /// delete): retired, then terminated. Names the captured generation, so
    /// a late request cannot stop a replacement.
    StopRuntime {
        request: RequestId,
        runtime: RuntimeId,
        generation: Generation,
    },
}

impl ClientRequest {
    pub fn request(&self) -> RequestId {
        match self {
            ClientRequest::StartRuntime { request, .. }
            | ClientRequest::Admit { request, .. }
            | ClientRequest::Reissue { request, .. }
            | ClientRequest::Cancel { request, .. }
            | ClientRequest::Join { request, .. }
            | ClientRequest::OpenSession { request, .. }
            | ClientRequest::RecordTurn { request, .. }
            | ClientRequest::FinishTurn { request, .. }
            | ClientRequest::RecordProviderRequest { request, .. }
            | ClientRequest::RecordProviderReply { request, .. }
            | ClientRequest::RecordProviderFailure { request, .. }
            | ClientRequest::RecordProviderRetry { request, .. }
            | ClientRequest::RecordSession { request, .. }
            | ClientRequest::StopRuntime { request, .. } => *request,
        }
    }
}

/// What a cancel request resolved to. Repeating the request repeats the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Settlement {
    /// The cancel is durable and the runtime has been asked to stop.
    Pending { reason: CancelReason },
    /// The command has its final outcome.
    Settled { outcome: Outcome },
    /// Nothing is running to cancel: the runtime is gone and the command
    /// keeps its honest outcome.
    NotRunning { outcome: Outcome },
}

/// Why a client request was refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum Rejection {
    BindingMismatch(BindingMismatch),
    InvalidBinding {
        detail: String,
    },
    /// The binding names a lease/runtime/generation that is not current.
    StaleBinding {
        field: BindingField,
        detail: String,
    },
    UnknownCommand {
        command: CommandId,
    },
    /// A cancel named a generation other than the command's.
    StaleGeneration {
        command: CommandId,
        requested: Generation,
        actual: Generation,
    },
    /// The id was already used in the journal for something else.
    IdReused {
        id: String,
    },
    CursorAhead {
        command: CommandId,
        after: EventSeq,
        durable: EventSeq,
    },
    JournalFull {
        limit: usize,
    },
    /// Writes to the journal keep failing; nothing new is admitted.
    JournalUnavailable {
        detail: String,
    },
    TooManyClients {
        limit: usize,
    },
    Busy,
    /// The turn id was already recorded with different content.
    TurnConflict {
        turn: TurnId,
    },
    UnknownSession {
        session: SessionId,
    },
    /// A stop named a runtime generation the journal does not hold as such.
    RuntimeNotCurrent {
        runtime: RuntimeId,
        generation: Generation,
    },
    UnknownTurn {
        turn: TurnId,
    },
    /// The turn already has its end recorded.
    TurnEnded {
        turn: TurnId,
    },
    /// Provider requests belong to model turns only.
    NotModelTurn {
        turn: TurnId,
    },
    /// The step may not be requested now (wrong number, or the previous
    /// request has no reply that asked for tools).
    ProviderStepRefused {
        turn: TurnId,
        step: u32,
        detail: String,
    },
    UnknownProviderRequest {
        provider_request: ProviderRequestId,
    },
    /// The provider request already has a different outcome recorded.
    ProviderOutcomeConflict {
        provider_request: ProviderRequestId,
    },
    /// A re-issue named a command that may not be run again: not
    /// uncertain, already re-issued, or another session's or line.
    NotReissuable {
        command: CommandId,
        detail: String,
    },
}

/// What kind of refusal a [`Rejection`] is: what the page words (a phrase
/// per kind the person can act on, the kind's code for the rest), without
/// the identifiers and English detail that stay in logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectionKind {
    BindingMismatch,
    InvalidBinding,
    StaleBinding,
    UnknownCommand,
    StaleGeneration,
    IdReused,
    CursorAhead,
    JournalFull,
    JournalUnavailable,
    TooManyClients,
    Busy,
    TurnConflict,
    UnknownSession,
    RuntimeNotCurrent,
    UnknownTurn,
    TurnEnded,
    NotModelTurn,
    ProviderStepRefused,
    UnknownProviderRequest,
    ProviderOutcomeConflict,
    NotReissuable,
}

impl RejectionKind {
    /// A stable code, shown to the person where no phrase fits better and
    /// quoted in bug reports.
    pub fn as_str(self) -> &'static str {
        use RejectionKind as K;
        match self {
            K::BindingMismatch => "binding_mismatch",
            K::InvalidBinding => "invalid_binding",
            K::StaleBinding => "stale_binding",
            K::UnknownCommand => "unknown_command",
            K::StaleGeneration => "stale_generation",
            K::IdReused => "id_reused",
            K::CursorAhead => "cursor_ahead",
            K::JournalFull => "journal_full",
            K::JournalUnavailable => "journal_unavailable",
            K::TooManyClients => "too_many_clients",
            K::Busy => "busy",
            K::TurnConflict => "turn_conflict",
            K::UnknownSession => "unknown_session",
            K::RuntimeNotCurrent => "runtime_not_current",
            K::UnknownTurn => "unknown_turn",
            K::TurnEnded => "turn_ended",
            K::NotModelTurn => "not_model_turn",
            K::ProviderStepRefused => "provider_step_refused",
            K::UnknownProviderRequest => "unknown_provider_request",
            K::ProviderOutcomeConflict => "provider_outcome_conflict",
            K::NotReissuable => "not_reissuable",
        }
    }
}

impl Rejection {
    pub fn kind(&self) -> RejectionKind {
        use RejectionKind as K;
        match self {
            Rejection::BindingMismatch(_) => K::BindingMismatch,
            Rejection::InvalidBinding { .. } => K::InvalidBinding,
            Rejection::StaleBinding { .. } => K::StaleBinding,
            Rejection::UnknownCommand { .. } => K::UnknownCommand,
            Rejection::StaleGeneration { .. } => K::StaleGeneration,
            Rejection::IdReused { .. } => K::IdReused,
            Rejection::CursorAhead { .. } => K::CursorAhead,
            Rejection::JournalFull { .. } => K::JournalFull,
            Rejection::JournalUnavailable { .. } => K::JournalUnavailable,
            Rejection::TooManyClients { .. } => K::TooManyClients,
            Rejection::Busy => K::Busy,
            Rejection::TurnConflict { .. } => K::TurnConflict,
            Rejection::UnknownSession { .. } => K::UnknownSession,
            Rejection::RuntimeNotCurrent { .. } => K::RuntimeNotCurrent,
            Rejection::UnknownTurn { .. } => K::UnknownTurn,
            Rejection::TurnEnded { .. } => K::TurnEnded,
            Rejection::NotModelTurn { .. } => K::NotModelTurn,
            Rejection::ProviderStepRefused { .. } => K::ProviderStepRefused,
            Rejection::UnknownProviderRequest { .. } => K::UnknownProviderRequest,
            Rejection::ProviderOutcomeConflict { .. } => K::ProviderOutcomeConflict,
            Rejection::NotReissuable { .. } => K::NotReissuable,
        }
    }

    /// The number a phrase for this kind names (a limit), else 0.
    pub fn limit(&self) -> u64 {
        match self {
            Rejection::JournalFull { limit } | Rejection::TooManyClients { limit } => *limit as u64,
            _ => 0,
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::BindingMismatch(m) => m.fmt(f),
            Rejection::InvalidBinding { detail } => write!(f, "invalid command binding: {detail}"),
            Rejection::StaleBinding { field, detail } => write!(
                f,
                "the command's {} is not current: {detail}",
                field.as_str()
            ),
            Rejection::UnknownCommand { command } => {
                write!(f, "no command {command} in the journal")
            }
            Rejection::StaleGeneration {
                command,
                requested,
                actual,
            } => write!(
                f,
                "command {command} belongs to generation {actual}, not {requested}; nothing was cancelled"
            ),
            Rejection::IdReused { id } => {
                write!(f, "id {id} was already used in the journal; ids are never reused")
            }
            Rejection::CursorAhead {
                command,
                after,
                durable,
            } => write!(
                f,
                "cursor for {command} is at {after} but durable evidence ends at {durable}"
            ),
            Rejection::JournalFull { limit } => write!(
                f,
                "the journal holds its limit of {limit} commands; archive old sessions first"
            ),
            Rejection::JournalUnavailable { detail } => {
                write!(f, "the journal cannot be written: {detail}")
            }
            Rejection::TooManyClients { limit } => {
                write!(f, "{limit} clients are already attached")
            }
            Rejection::Busy => write!(
                f,
                "the journal is catching up with earlier writes; try again shortly"
            ),
            Rejection::TurnConflict { turn } => write!(
                f,
                "turn {turn} was already recorded with a different message; nothing was sent twice"
            ),
            Rejection::UnknownSession { session } => write!(f, "no session {session} in the journal"),
            Rejection::RuntimeNotCurrent { runtime, generation } => write!(
                f,
                "runtime {runtime} generation {generation} is not in the journal as such; nothing was stopped"
            ),
            Rejection::UnknownTurn { turn } => write!(f, "no turn {turn} in the journal"),
            Rejection::TurnEnded { turn } => write!(f, "turn {turn} has already ended"),
            Rejection::NotModelTurn { turn } => write!(
                f,
                "turn {turn} is answered by the built-in agent; it has no provider requests"
            ),
            Rejection::ProviderStepRefused { turn, step, detail } => write!(
                f,
                "step {step} of turn {turn} cannot be requested: {detail}; nothing was sent"
            ),
            Rejection::UnknownProviderRequest { provider_request } => {
                write!(f, "no provider request {provider_request} in the journal")
            }
            Rejection::ProviderOutcomeConflict { provider_request } => write!(
                f,
                "provider request {provider_request} already has a different outcome recorded; the first one stands"
            ),
            Rejection::NotReissuable { command, detail } => {
                write!(f, "command {command} cannot be re-issued: {detail}; nothing was run")
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    RuntimeStarted {
        request: RequestId,
        workspace: WorkspaceId,
        lease: LeaseId,
        runtime: RuntimeId,
        generation: Generation,
        execution: ExecutionId,
    },
    Admitted {
        request: RequestId,
        key: IdempotencyKey,
        command: CommandId,
        /// True when the key was already bound and no new command was made.
        existing: bool,
    },
    Rejected {
        request: RequestId,
        rejection: Rejection,
    },
    /// A durable outcome change (`event` is None for admission).
    Outcome {
        command: CommandId,
        outcome: Outcome,
        event: Option<OutcomeEvent>,
        position: u64,
    },
    Event {
        command: CommandId,
        seq: EventSeq,
        body: RetainedBody,
    },
    /// Evidence for these sequences is not retained.
    Gap {
        command: CommandId,
        from: EventSeq,
        to: EventSeq,
    },
    /// Replay from durable evidence is done; live events follow.
    Joined {
        request: RequestId,
        command: CommandId,
        through: EventSeq,
        outcome: Outcome,
    },
    CancelSettlement {
        request: RequestId,
        command: CommandId,
        settlement: Settlement,
    },
    Evidence(RecoveryEvidence),
    SessionOpened {
        request: RequestId,
        session: SessionId,
        existing: bool,
    },
    TurnRecorded {
        request: RequestId,
        turn: TurnId,
        existing: bool,
    },
    TurnFinished {
        request: RequestId,
        turn: TurnId,
    },
    /// The provider request is durable: the shell may send it now (unless
    /// `existing`, when it was recorded before and must not be sent again).
    ProviderRequestRecorded {
        request: RequestId,
        provider_request: ProviderRequestId,
        existing: bool,
    },
    /// The provider request's outcome is durable.
    ProviderOutcomeRecorded {
        request: RequestId,
        provider_request: ProviderRequestId,
        existing: bool,
    },
    /// A session record is durable.
    SessionRecorded {
        request: RequestId,
    },
    /// The runtime generation is retired and its termination asked for (or
    /// it was already gone).
    RuntimeStopping {
        request: RequestId,
        runtime: RuntimeId,
        generation: Generation,
    },
}

/// Validates a client request's free-form parts.
pub(crate) fn validate_request(req: &ClientRequest) -> Result<(), String> {
    match req {
        ClientRequest::Admit { binding, .. } | ClientRequest::Reissue { binding, .. } => {
            binding.validate()
        }
        ClientRequest::Join { cursor, .. } => cursor.validate(),
        ClientRequest::OpenSession { title, .. } => {
            crate::schema::check_text("session title", title, limits::MAX_TEXT_BYTES)
        }
        ClientRequest::RecordTurn {
            prompt,
            plan,
            agent,
            ..
        } => {
            crate::schema::check_text("prompt", prompt, limits::MAX_PROMPT_BYTES)?;
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
            plan.iter().try_for_each(|l| {
                crate::schema::check_text("planned command", l, limits::MAX_COMMAND_LINE_BYTES)
            })
        }
        ClientRequest::FinishTurn { reply, .. } => {
            crate::schema::check_text("reply", reply, limits::MAX_PROMPT_BYTES)
        }
        ClientRequest::RecordProviderRequest { step, .. } => {
            if *step == 0 {
                Err("provider request steps start at 1".into())
            } else {
                Ok(())
            }
        }
        ClientRequest::RecordProviderReply {
            text,
            tool_calls,
            stop,
            ..
        } => crate::journal::check_reply(text, tool_calls, stop),
        ClientRequest::RecordProviderFailure {
            message,
            partial_text,
            ..
        } => crate::journal::check_failure(message, partial_text),
        ClientRequest::RecordProviderRetry { message, .. } => {
            crate::journal::check_failure(message, "")
        }
        ClientRequest::RecordSession { record, .. } => crate::journal::JournalRecord::Session {
            record: record.clone(),
        }
        .validate(),
        ClientRequest::StartRuntime { .. }
        | ClientRequest::Cancel { .. }
        | ClientRequest::StopRuntime { .. } => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(body: EventBody) -> RuntimeToController {
        RuntimeToController::Event {
            runtime: "01JF8Z4V0W7N3B5K9Q2M6XR8TD".parse().unwrap(),
            generation: Generation(1),
            command: "01JF8Z6C4R5XK2N7W3Q9YB0T1M".parse().unwrap(),
            seq: EventSeq(2),
            body,
        }
    }

    #[test]
    fn output_text_travels_beside_its_message_and_back() {
        let stderr = |data: &str| EventBody::Stderr { data: data.into() };
        let whole = event(stderr("1\n\"2\"\n"));
        let mut sent = whole.clone();
        let text = sent.take_output_text().unwrap();
        assert_eq!(text, "1\n\"2\"\n");
        assert_eq!(sent, event(stderr("")));
        sent.put_output_text(text).unwrap();
        assert_eq!(sent, whole);
        // Only an empty output event has a place for a text.
        assert!(sent.put_output_text("x".into()).is_err());
        let mut phase = event(EventBody::Lifecycle {
            phase: "started".into(),
        });
        assert_eq!(phase.take_output_text(), None);
        assert!(phase.put_output_text("x".into()).is_err());
        // An empty text stays where it is.
        let mut empty = event(stderr(""));
        assert_eq!(empty.take_output_text(), None);
    }
}
