//! Lifeline recovery core: the durable command journal of reference 002 as a
//! pure, deterministic state machine (sans-IO, in the manner of quinn-proto).
//!
//! Nothing here touches a clock, a port, a store or a random source. Every
//! input carries `now` ([`Millis`]); randomness comes in as bytes
//! ([`ControllerConfig::entropy`]); effects come out as values the shell
//! executes ([`ControllerEffect`], [`RuntimeEffect`]). The same code runs in
//! the browser workers (wasm32) and in native simulation tests.
//!
//! # Module map
//!
//! | module | what it holds |
//! |---|---|
//! | [`action`] | the recovery actions a person can take ([`action::Action`]): domain values the card offers |
//! | [`flat`] | [`flat::FlatMap`]: an ordered map as one sorted vector, for maps keyed by time-ordered identities (less wasm than a `BTreeMap` per type) |
//! | [`id`] | identities (128-bit, ULID text), [`Generation`], [`EventSeq`], [`Millis`], [`Digest`], [`IdMinter`] |
//! | [`outcome`] | the ten [`Outcome`]s and [`transition`], the only legal way between them |
//! | [`schema`] | `"v": 1` versioning, limits, strict [`decode`]/[`encode`] |
//! | [`command`] | [`Binding`] (what an idempotency key is bound to) and [`CommandRecord`] |
//! | [`event`] | [`EventBody`], [`EventRecord`], [`TerminalResult`], [`Cursor`], output retention |
//! | [`export`] | evidence export: a session's entries as JSON Lines (DuckDB `read_json_auto`) and artifacts in a ustar archive; read-only import |
//! | [`journal`] | [`JournalRecord`], [`JournalEntry`], [`PersistBatch`], [`RecoveryEvidence`] |
//! | [`message`] | controller⇄runtime and controller⇄client messages |
//! | [`render`] | rich text for the transcript: markdown as flat steps, ANSI output as styled runs; never markup |
//! | [`view`] | [`ViewDelta`]: the transcript view model, derived from durable entries only |
//! | [`profile`] | environment profiles, credential references, the resume lookup rules (003 criteria 6–8) |
//! | [`session_record`] | [`session_record::SessionRecord`]: the durable record of a session's lifecycle, its failure causes |
//! | [`session`] | sessions, executions and startup attempts: retained resources (003), attempt ownership (004 §007) |
//! | [`recovery`] | the recovery inspector (what survived, per dimension) and the shared recovery view model (the card) |
//! | [`restart`] | what a controller restart did to the commands that were running (the page's notice) |
//! | [`agent`] | the built-in local agent: plans a prompt, derives each next step from the projection |
//! | [`model`] | model-backed turns: provider requests, tool calls as commands, each next step from the projection |
//! | [`stop`] | what Stop does at this moment: abort a request, cancel commands, or end the turn |
//! | [`stored_output`] | a command's whole kept output (inline head, then artifacts) planned as ranges, assembled from what the shell read |
//! | [`projection`] | [`Projection`]: the pure fold of durable entries (what the UI shows), snapshots |
//! | [`controller`] | [`Controller`]: admission, dispatch, ACKs, events, cancel, recovery |
//! | [`runtime`] | [`Runtime`]: one runtime worker's protocol state |
//!
//! The modules import each other in layers, never in a circle: what the
//! journal stores ([`session_record`], [`journal`]) sits below what writes or
//! folds it. The order is in docs/ARCHITECTURE.md; the xtask tidy test
//! `the_cores_modules_form_no_import_cycle` keeps it.
//!
//! # Effect discipline
//!
//! * The controller emits one [`ControllerEffect::Persist`] at a time. The
//!   shell writes it in one transaction (entries keyed by position, artifacts
//!   by digest, so retrying is idempotent) and calls
//!   [`Controller::handle_persist_complete`] or
//!   [`Controller::handle_persist_failed`].
//! * Client notifications, dispatches and event acknowledgements derived
//!   from a batch are released only after it is confirmed: durable evidence
//!   before live projection.
//! * A dispatch is recorded as exposed before it is sent. Only a recorded
//!   runtime ACK (or evidence implying one) makes a command `dispatched`.
//! * The durable state after a crash is exactly the confirmed entries:
//!   [`Controller::recover`] takes them (or [`Controller::recover_from_snapshot`])
//!   and runs the recovery procedure for the [`StartCause`].

pub mod action;
pub mod agent;
pub mod command;
pub mod controller;
pub mod derived_key;
pub mod ending;
pub mod environment;
pub mod event;
pub mod export;
pub mod flat;
pub mod id;
pub mod journal;
pub mod message;
pub mod model;
pub mod order;
pub mod outcome;
pub mod phrase;
pub mod profile;
pub mod projection;
pub mod provider_failure;
pub mod recovery;
pub mod render;
pub mod restart;
pub mod runtime;
pub mod schema;
pub mod session;
pub mod session_record;
pub mod settled;
pub mod stop;
pub mod store_fault;
pub mod stored_output;
pub mod view;
pub mod wire;

pub use command::{Binding, BindingField, BindingMismatch, Budget, CommandRecord};
pub use controller::{
    Controller, ControllerConfig, ControllerEffect, ControllerError, ExitClaim, Liveness, PortId,
    StartCause, TimerId,
};
pub use event::{
    ArtifactBlob, ArtifactPlacement, ArtifactSpan, Cursor, EventBody, EventKind, EventRecord,
    OutputChunk, OutputSummary, RetainedBody, TerminalResult,
};
pub use id::{
    AttemptId, CommandId, CredentialId, Digest, ErrorStamp, EventSeq, ExecutionId, FolderId,
    Generation, IdError, IdMinter, IdempotencyKey, LeaseId, Millis, ProfileId, ProviderRequestId,
    RuntimeId, SessionId, StartupAttemptId, TaskId, TurnId, WorkspaceId,
};
pub use journal::{
    AckSource, BatchId, DispatchRefusal, GoneCause, JournalEntry, JournalRecord, PersistBatch,
    ProviderFailureClass, RecoveryEvidence, RecoveryKind, ReplayError, Resolution, RetireCause,
    RuntimeRef, ToolCallRecord, TurnAgent, TurnStatus,
};
pub use message::{
    CancelReply, ClientId, ClientMessage, ClientRequest, ControllerToRuntime, DispatchOrder,
    DurablePosition, Hello, HelloRejection, Rejection, RejectionKind, RequestId,
    RuntimeToController, Settlement, StreamPosition,
};
pub use model::{ModelMessage, ModelStep, TurnStep};
pub use outcome::{
    transition, CancelReason, IllegalTransition, Outcome, OutcomeEvent, TerminalStatus,
};
pub use projection::{
    CommandView, Exposure, LeaseView, Projection, ProjectionSnapshot, ProviderOutcome,
    ProviderRequestView, RetentionPolicy, RuntimeStatus, RuntimeView, SessionView, SettledOutput,
    TurnEnd, TurnView,
};
pub use runtime::{
    LinkState, ProcessOutput, Runtime, RuntimeConfig, RuntimeEffect, RuntimeError, RuntimeIdentity,
};
pub use schema::{decode, encode, Schema, SchemaError, V1};
pub use view::{ProviderFailureView, ProviderRequestStatus, Stream, ViewDelta};
#[cfg(test)]
mod session_list_tests;
#[cfg(test)]
mod tests;
