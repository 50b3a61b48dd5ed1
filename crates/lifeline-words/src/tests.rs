use crate::catalog::{t, Msg};
use crate::phrase::{action, outcome};
use crate::{phrase, Locale};
use lifeline_core::agent::PlanError;
use lifeline_core::environment::FolderAccess;
use lifeline_core::journal::RecoveryKind;
use lifeline_core::message::RejectionKind;
use lifeline_core::phrase::{JournalFault, Phrase};
use lifeline_core::profile::{CredentialFailure, InvalidProfile, ProfileBlock};
use lifeline_core::recovery::Action;
use lifeline_core::session::Refusal;
use lifeline_core::session_record::{FailureCause, LaunchFailure, LoadError};
use lifeline_core::store_fault::{StoreFault, StoredKind};
use lifeline_core::Outcome;

#[test]
fn every_key_has_a_text_in_every_locale() {
    assert!(Msg::ALL.len() > 200);
    for &msg in Msg::ALL {
        for l in [Locale::En, Locale::De] {
            assert!(!t(l, msg).trim().is_empty(), "{msg:?} in {l:?}");
        }
    }
}

#[test]
fn the_labels_a_phrase_names_are_the_cores() {
    for o in Outcome::ALL {
        assert_eq!(t(Locale::En, outcome(o)), o.label());
    }
    for a in Action::ALL {
        assert_eq!(t(Locale::En, action(a)), a.label());
    }
}

/// One sample of every phrase. The `match` in `index` has no wildcard:
/// a new phrase does not compile here until it has a sample.
fn every_phrase() -> Vec<Phrase> {
    use lifeline_core::id::{CredentialId, ErrorStamp, ExecutionId, ProviderRequestId, TurnId};
    use lifeline_core::Outcome;
    let s = |x: &str| x.to_owned();
    let stamp = ErrorStamp::from_u128(7).unwrap();
    let cause = FailureCause::AgentFailed {
        detail: s("HTTP 500"),
    };
    let mut all = vec![
        Phrase::SummaryAgentFailed,
        Phrase::SummaryRuntimeLost,
        Phrase::SummaryCleanupFailed,
        Phrase::SummaryCredential,
        Phrase::SummaryProfile,
        Phrase::SummaryRecoveryFailed,
        Phrase::SummaryLaunchFailed,
        Phrase::SummaryUnknownFailure,
        Phrase::SummaryDetached,
        Phrase::SummaryCancelled,
        Phrase::SummaryArchived,
        Phrase::SummaryUncertain,
        Phrase::SummaryInterruptedEarlier,
        Phrase::SummaryRecovery,
        Phrase::BusyStarting,
        Phrase::BusyCancelling,
        Phrase::WaitOrStop { starting: true },
        Phrase::WaitOrStop { starting: false },
        Phrase::SessionArchived,
        Phrase::NeverRan,
        Phrase::SessionRunning,
        Phrase::WorkspaceGoneStartFresh,
        Phrase::NoHistory,
        Phrase::AgentWorking,
        Phrase::AgentRunningLive,
        Phrase::NoWorkspaceFolder,
        Phrase::AgentWorkingStopFirst,
        Phrase::FolderGone { name: s("x") },
        Phrase::FoldersUnsupported,
        Phrase::AnotherTabInControl,
        Phrase::FolderNeedsPermissionToRead { name: s("x") },
        Phrase::EnvironmentWhileWorking,
        Phrase::SwitchWhileWorking,
        Phrase::RunningLimit,
        Phrase::RuntimeAnswers,
        Phrase::StopRuntimeRefused {
            code: s("runtime_retired"),
        },
        Phrase::NotOffered,
        Phrase::RetryRateLimited { seconds: 3 },
        Phrase::RetryOverloaded { seconds: 3 },
        Phrase::RetryNotConnected { seconds: 3 },
        Phrase::LocalModelFacts {
            name: s("tiny.gguf"),
            bytes: 269_120,
            architecture: s("llama"),
            parameters: 129_344,
            trained: 1024,
            context: 1024,
        },
        Phrase::LocalModelLoading {
            read: 4096,
            total: 269_120,
            seconds: 2,
        },
        Phrase::OutputUnavailable,
        Phrase::OutputMissing { missing: 2 },
        Phrase::EventsUnreadable,
        Phrase::NoMessagesYet,
        Phrase::TurnsRepliesLost { turns: 3, lost: 1 },
        Phrase::TurnsSomeUnreadable { turns: 3 },
        Phrase::TurnsRecorded { turns: 1234 },
        Phrase::WorkspaceThere,
        Phrase::WorkspaceThereEntries { entries: 2 },
        Phrase::WorkspaceGone,
        Phrase::NoWorkspaceYet,
        Phrase::NotChecked,
        Phrase::NoStoredKey,
        Phrase::KeysPresent { total: 1 },
        Phrase::KeysMissing {
            missing: 1,
            total: 2,
        },
        Phrase::NoRuntimeRan,
        Phrase::RuntimeAttached,
        Phrase::CommandMayHaveStarted,
        Phrase::RuntimeStopped,
        Phrase::TabAttached,
        Phrase::TabNotAttached,
        Phrase::OutputEvicted { commands: 2 },
        Phrase::RecordsSetAside { records: 2 },
        Phrase::OutputNeverRecorded { commands: 2 },
        Phrase::Storage {
            persisted: true,
            used: 1_200_000,
            quota: 10_000_000_000,
        },
        Phrase::Storage {
            persisted: false,
            used: 1_200_000,
            quota: 10_000_000_000,
        },
        Phrase::ErrorStampIs { stamp },
        Phrase::ExecutionIs {
            execution: ExecutionId::from_u128(8).unwrap(),
        },
        Phrase::ReplyLost {
            request: ProviderRequestId::from_u128(9).unwrap(),
            turn: TurnId::from_u128(10).unwrap(),
        },
        Phrase::StorageDetail {
            storage: Box::new(Phrase::Storage {
                persisted: false,
                used: 1,
                quota: 2,
            }),
        },
        Phrase::EarlierFailure {
            cause: cause.clone(),
            stamp,
        },
        Phrase::Refused {
            refusal: Refusal::QueueFull,
        },
        Phrase::ActionNotPossible {
            action: Action::Resume,
            reason: Box::new(Phrase::NeverRan),
        },
        Phrase::NothingToRecover,
        Phrase::WorkspaceCannotOpen,
        Phrase::WorkspaceUnreadable { detail: s("x") },
        Phrase::NotUncertain,
        Phrase::ReissueNeedsRunning,
        Phrase::ReissueAgentWorking,
        Phrase::ProfilesCannotOpen {
            fault: StoreFault::Blocked,
        },
        Phrase::NoProfileMade {
            fault: StoreFault::QuotaExceeded,
        },
        Phrase::MessageWaits { waiting: 2 },
        Phrase::ResumedWithoutProfile,
        Phrase::WorkspaceNotDeleted { detail: s("x") },
        Phrase::EarlierLaunchAnswered {
            runtime: s("r1"),
            generation: 2,
        },
        Phrase::EarlierLaunchRetired {
            runtime: s("r1"),
            generation: 2,
        },
        Phrase::ProfilesUnreadable {
            fault: StoreFault::QuotaExceeded,
        },
        Phrase::ProfilesNotOpen,
        Phrase::ProfileSaved { name: s("Local") },
        Phrase::ProfileNotSaved {
            fault: StoreFault::QuotaExceeded,
        },
        Phrase::ProfileDeletedMeanwhile,
        Phrase::ProfileNotDeleted {
            fault: StoreFault::QuotaExceeded,
        },
        Phrase::NoIdMade,
        Phrase::KeyNotStored {
            fault: StoreFault::QuotaExceeded,
        },
        Phrase::NoKeyForCommands,
        Phrase::MessageTooLong {
            bytes: 300_000,
            limit: 262_144,
        },
        Phrase::JournalDegraded {
            fault: JournalFault::QuotaExceeded,
        },
        Phrase::Plan {
            error: PlanError::Empty,
        },
        Phrase::Plan {
            error: PlanError::TooManyCommands { count: 70 },
        },
        Phrase::Plan {
            error: PlanError::CommandTooLong { line: 3 },
        },
        Phrase::Plan {
            error: PlanError::PromptTooLong { bytes: 300_000 },
        },
        Phrase::SessionStoppedResend,
        Phrase::NoSessionToSend,
        Phrase::FollowingCannotSend,
        Phrase::MessageEmpty,
        Phrase::RequestRejected {
            rejection: RejectionKind::IdReused,
            limit: 0,
        },
        Phrase::RequestRejected {
            rejection: RejectionKind::Busy,
            limit: 0,
        },
        Phrase::RequestRejected {
            rejection: RejectionKind::JournalFull,
            limit: 10_000,
        },
        Phrase::RequestRejected {
            rejection: RejectionKind::JournalUnavailable,
            limit: 0,
        },
        Phrase::RequestRejected {
            rejection: RejectionKind::TooManyClients,
            limit: 8,
        },
        Phrase::RequestRejected {
            rejection: RejectionKind::NotReissuable,
            limit: 0,
        },
        Phrase::NoWebLocks,
        Phrase::NoRandomness,
        Phrase::LockFailed,
        Phrase::SnapshotFallback { bad: 4, loaded: 2 },
        Phrase::SnapshotsUnreadable {
            count: 2,
            newest: 4,
        },
        Phrase::SnapshotNotSaved {
            fault: JournalFault::QuotaExceeded,
        },
        Phrase::RecordsQuarantined { count: 2 },
        Phrase::RecordsQuarantined { count: 1 },
        Phrase::QuarantineNotMoved {
            fault: JournalFault::QuotaExceeded,
        },
        Phrase::ReplayRefused {
            count: 2,
            first: 17,
        },
        Phrase::ReplayRefused {
            count: 1,
            first: 17,
        },
        Phrase::PersistConfirmFailed {
            code: s("unknown_batch"),
        },
        Phrase::RuntimeNotJson { runtime: s("r1") },
        Phrase::RuntimeMessageRejected {
            runtime: s("r1"),
            code: s("stale_port"),
        },
        Phrase::FollowerUnreadable { count: 2 },
        Phrase::NoBroadcastChannel,
        Phrase::OtherBuild,
        Phrase::BroadcastRejected,
        Phrase::CatchUpFailed {
            fault: JournalFault::Closed,
        },
        Phrase::FollowGap { from: 2, to: 5 },
        Phrase::EntryNotBelieved { position: 12 },
        Phrase::PageNotJson,
        Phrase::PageMessageRejected,
        Phrase::PageMessageTooLarge {
            bytes: 5_000_000,
            max: 4_194_304,
        },
        Phrase::PageOtherBuild { theirs: 7, ours: 8 },
        Phrase::PortMissing,
        Phrase::NotLoaded,
        Phrase::HistoryNotLoaded,
        Phrase::ExportNoJournal,
        Phrase::Exporting,
        Phrase::ExportFailed {
            fault: JournalFault::Operation { detail: s("x") },
        },
        Phrase::ExportNoSession,
        Phrase::ExportHandOff { detail: s("x") },
        Phrase::ExportedWithGaps {
            unreadable: 2,
            missing: 0,
        },
        Phrase::ExportedWithGaps {
            unreadable: 0,
            missing: 2,
        },
        Phrase::ExportedWithGaps {
            unreadable: 2,
            missing: 2,
        },
        Phrase::ImportTooLarge {
            file: s("a.tar"),
            bytes: 300_000_000,
            limit: 256_000_000,
        },
        Phrase::UnaskedFile,
        Phrase::ImportTruncated {
            file: s("a.tar"),
            got: 10,
            expected: 20,
        },
    ];
    all.extend(RecoveryKind::ALL.map(|kind| Phrase::Observed { kind }));
    {
        use lifeline_core::journal::DispatchRefusal as R;
        all.extend(
            [
                R::Capacity,
                R::WrongRuntime,
                R::StaleGeneration {
                    runtime_generation: lifeline_core::Generation(2),
                },
                R::WrongExecution,
                R::CancelledBeforeAccept,
            ]
            .map(|refusal| Phrase::DispatchRefused { refusal }),
        );
    }
    {
        use lifeline_core::export::ImportFault as F;
        all.extend(
            [
                F::NotAnArchive,
                F::TooManyLines { limit: 100_000 },
                F::LineTooLong {
                    line: 3,
                    bytes: 9_000_000,
                    limit: 8_392_704,
                },
                F::BadLine { line: 3 },
                F::NoSession,
            ]
            .map(|fault| Phrase::ImportFailed {
                file: s("a.tar"),
                fault,
            }),
        );
        use lifeline_core::profile::ModelFileFault as M;
        all.extend(
            [
                M::NotGguf,
                M::Version { version: 1 },
                M::Truncated,
                M::Damaged,
                M::NoArchitecture,
                M::Unreadable {
                    detail: s("NotReadableError"),
                },
            ]
            .map(|fault| Phrase::LocalModelRefused { fault }),
        );
    }
    for (line, verdict, reissued) in [
        ("sleep 60", Some(true), false),
        ("sleep 60", Some(false), false),
        ("sleep 60", None, true),
        ("sleep 60", None, false),
    ] {
        all.push(Phrase::UncertainCommand {
            line: s(line),
            outcome: Outcome::MayHaveStarted,
            verdict,
            reissued,
        });
    }
    let credential = CredentialId::from_u128(11).unwrap();
    let causes = [
        FailureCause::ProfileBlocked {
            block: ProfileBlock::Unreadable { detail: s("x") },
        },
        FailureCause::ProfileBlocked {
            block: ProfileBlock::OtherOwner {
                owner: s("someone"),
            },
        },
        FailureCause::ProfileDeleted,
        FailureCause::Credential {
            credential,
            failure: CredentialFailure::Missing,
        },
        FailureCause::Credential {
            credential,
            failure: CredentialFailure::Unreadable { detail: s("x") },
        },
        FailureCause::ProfileBlocked {
            block: ProfileBlock::Store {
                fault: StoreFault::Blocked,
            },
        },
        FailureCause::ProfileBlocked {
            block: ProfileBlock::Invalid {
                invalid: InvalidProfile::Name,
            },
        },
        FailureCause::Launch {
            failure: LaunchFailure::WorkspaceMissing,
        },
        FailureCause::Launch {
            failure: LaunchFailure::Failed { detail: s("x") },
        },
        FailureCause::Launch {
            failure: LaunchFailure::Refused { code: s("busy") },
        },
        FailureCause::Launch {
            failure: LaunchFailure::Folder {
                name: s("x"),
                access: FolderAccess::NeedsPermission,
            },
        },
        FailureCause::Launch {
            failure: LaunchFailure::Folder {
                name: s("x"),
                access: FolderAccess::Gone,
            },
        },
        FailureCause::Load {
            error: LoadError::Unsupported,
        },
        FailureCause::Load {
            error: LoadError::CapabilityAbsent,
        },
        FailureCause::Load {
            error: LoadError::UnknownSession,
        },
        FailureCause::Load {
            error: LoadError::Timeout,
        },
        FailureCause::Load {
            error: LoadError::Cancelled,
        },
        FailureCause::Load {
            error: LoadError::Auth,
        },
        FailureCause::Load {
            error: LoadError::Transport { detail: s("x") },
        },
        FailureCause::Load {
            error: LoadError::Unclassified { detail: s("x") },
        },
        FailureCause::CleanupFailed { detail: s("x") },
        cause,
        FailureCause::RuntimeLost {
            detail: s("x"),
            end: None,
        },
        FailureCause::RuntimeLost {
            detail: s("its worker ended"),
            end: Some(lifeline_core::session_record::RuntimeEnd::WorkerEnded),
        },
        FailureCause::RuntimeLost {
            detail: s("the journal retired it"),
            end: Some(lifeline_core::session_record::RuntimeEnd::Retired),
        },
        FailureCause::RuntimeLost {
            detail: s("the journal records it gone"),
            end: Some(lifeline_core::session_record::RuntimeEnd::Gone),
        },
        FailureCause::RuntimeLost {
            detail: s("the journal does not know it"),
            end: Some(lifeline_core::session_record::RuntimeEnd::Unknown),
        },
    ];
    all.extend(causes.into_iter().map(|cause| Phrase::Cause { cause }));
    for failure in [
        CredentialFailure::Store {
            fault: StoreFault::QuotaExceeded,
        },
        CredentialFailure::Malformed { reason: s("iv") },
        CredentialFailure::KeyGone,
        CredentialFailure::KeyDamaged,
        CredentialFailure::NoCrypto { detail: s("x") },
        CredentialFailure::Undecryptable,
        CredentialFailure::NotText,
    ] {
        all.push(Phrase::Cause {
            cause: FailureCause::Credential {
                credential,
                failure,
            },
        });
    }
    {
        use lifeline_core::journal::FailureReason as R;
        let d = || s("llama.cpp said so");
        for reason in [
            R::Stopped,
            R::StoppedWaitingToRetry,
            R::StoppedBeforeSent,
            R::StoppedWhileLoading,
            R::NoProvider,
            R::NoResponseWithin { seconds: 60 },
            R::NoByteFor { seconds: 60 },
            R::LoadStalled {
                seconds: 30,
                read: 1_000_000,
                total: 4_000_000,
            },
            R::RequestFailed,
            R::ReplyStopped,
            R::NotGguf { detail: d() },
            R::UnsupportedArchitecture { detail: d() },
            R::ContextTooLong { detail: d() },
            R::OutOfMemory { detail: d() },
            R::LocalFailed { name: s("Error") },
            R::InvalidUtf8,
            R::NoBody,
            R::Unfinished,
            R::Malformed { detail: d() },
            R::TooLarge { what: s("text") },
            R::BuiltIn,
            R::LocalSettingsUnreadable,
            R::NoAbortController,
            R::NoHeaders,
            R::HeaderRefused {
                name: s("authorization"),
            },
            R::InvalidBaseUrl {
                url: s("ftp://example"),
            },
            R::NoModel,
            R::ZeroMaxTokens,
            R::KeyUnsendable,
            R::WorkerEnded,
        ] {
            all.push(Phrase::FailedBecause { reason });
        }
        all.push(Phrase::Recorded {
            text: s("HTTP 500: upstream error"),
        });
    }
    {
        use lifeline_core::profile::InvalidProfile as I;
        let name = || s("MY_VAR");
        for invalid in [
            I::OtherOwner {
                owner: s("someone"),
            },
            I::Name,
            I::BaseUrl,
            I::ModelName,
            I::LocalName,
            I::LocalSettingsTooLong,
            I::LocalSettingsUnreadable,
            I::LocalFileFacts,
            I::LocalModelNameTooLong,
            I::LocalStoredName,
            I::LocalFileEmpty,
            I::TemperatureText,
            I::TopPText,
            I::MaxTokensText,
            I::ContextText,
            I::Temperature,
            I::TopP,
            I::Context { most: 32_768 },
            I::MaxTokens,
            I::Attempts,
            I::RetryPeriod,
            I::Timeouts,
            I::TooManyEnv,
            I::EnvName { name: name() },
            I::EnvReserved { name: name() },
            I::EnvTwice { name: name() },
            I::EnvValueTooLong { name: name() },
        ] {
            all.push(Phrase::ProfileInvalid { invalid });
        }
    }
    let attempt = lifeline_core::id::StartupAttemptId::from_u128(12).unwrap();
    for refusal in [
        Refusal::UnknownSession,
        Refusal::Archived,
        Refusal::Deleted,
        Refusal::Busy { attempt },
        Refusal::CancellationPending { attempt },
        Refusal::NothingToResume,
        Refusal::QueueFull,
        Refusal::AlreadyRunning,
        Refusal::TurnRunning,
    ] {
        all.push(Phrase::Refused { refusal });
    }
    for fault in [
        JournalFault::Unavailable { detail: s("x") },
        JournalFault::NewerSchema { schema: 2 },
        JournalFault::Blocked,
        JournalFault::Operation { detail: s("x") },
        JournalFault::QuotaExceeded,
        JournalFault::Superseded,
        JournalFault::VersionChange,
        JournalFault::Corrupt { detail: s("x") },
        JournalFault::Invalid { detail: s("x") },
        JournalFault::Closed,
        JournalFault::NotRecovered { position: 12 },
        JournalFault::Removed,
        JournalFault::ConnectionLost,
        JournalFault::WriterUnreadable,
    ] {
        all.push(Phrase::Journal { fault });
    }
    {
        use lifeline_core::ending::TurnEnding as E;
        let line = || s("echo a");
        for ending in [
            E::StoppedBefore {
                line: line(),
                left: 1,
            },
            E::StoppedBefore {
                line: line(),
                left: 3,
            },
            E::StoppedBetweenSteps,
            E::SessionLeft,
            E::ReplyLost,
            E::CommandCancelled { line: line() },
            E::CommandUncertain {
                line: line(),
                outcome: Outcome::Lost,
            },
            E::CommandUncertain {
                line: line(),
                outcome: Outcome::NotDispatched,
            },
            E::CommandUncertain {
                line: line(),
                outcome: Outcome::MayHaveStarted,
            },
            E::StepBudget { max: 8 },
            E::CommandBudget { max: 4 },
            E::TokenBudget {
                max: 1000,
                used: 1200,
            },
            E::TimeBudget { seconds: 60 },
            E::ProviderFailed {
                class: lifeline_core::journal::ProviderFailureClass::Cut,
            },
            E::ProviderFailed {
                class: lifeline_core::journal::ProviderFailureClass::Cancelled,
            },
            E::ProviderFailed {
                class: lifeline_core::journal::ProviderFailureClass::Auth,
            },
        ] {
            all.push(Phrase::TurnEnded { ending });
        }
    }
    for fault in [
        StoreFault::Unavailable { detail: s("x") },
        StoreFault::NewerSchema { schema: 3 },
        StoreFault::Blocked,
        StoreFault::VersionChange,
        StoreFault::Closed,
        StoreFault::QuotaExceeded,
        StoreFault::Operation { detail: s("x") },
        StoreFault::InvalidProfile { detail: s("x") },
        StoreFault::StaleRevision {
            stored: 4,
            offered: 4,
        },
        StoreFault::TooMany {
            what: StoredKind::Profiles,
            max: 64,
        },
        StoreFault::TooMany {
            what: StoredKind::Credentials,
            max: 64,
        },
        StoreFault::InvalidLabel { len: 0, max: 200 },
        StoreFault::InvalidSecret { len: 0, max: 8192 },
        StoreFault::Crypto { detail: s("x") },
        StoreFault::Corrupt { detail: s("x") },
    ] {
        all.push(Phrase::ProfileNotSaved { fault });
    }
    all
}

/// Which variant a phrase is (no wildcard: see `every_phrase`).
fn index(p: &Phrase) -> usize {
    use Phrase as P;
    match p {
        P::SummaryAgentFailed => 0,
        P::SummaryRuntimeLost => 1,
        P::SummaryCleanupFailed => 2,
        P::SummaryCredential => 3,
        P::SummaryProfile => 4,
        P::SummaryRecoveryFailed => 5,
        P::SummaryUnknownFailure => 6,
        P::SummaryDetached => 7,
        P::SummaryCancelled => 8,
        P::SummaryArchived => 9,
        P::SummaryUncertain => 10,
        P::SummaryInterruptedEarlier => 11,
        P::SummaryRecovery => 12,
        P::BusyStarting => 13,
        P::BusyCancelling => 14,
        P::WaitOrStop { .. } => 15,
        P::SessionArchived => 16,
        P::NeverRan => 17,
        P::SessionRunning => 18,
        P::WorkspaceGoneStartFresh => 19,
        P::NoHistory => 20,
        P::AgentWorking => 21,
        P::AgentRunningLive => 22,
        P::NoWorkspaceFolder => 23,
        P::AgentWorkingStopFirst => 24,
        P::NoMessagesYet => 25,
        P::TurnsRepliesLost { .. } => 26,
        P::TurnsSomeUnreadable { .. } => 27,
        P::TurnsRecorded { .. } => 28,
        P::WorkspaceThere => 29,
        P::WorkspaceThereEntries { .. } => 30,
        P::WorkspaceGone => 31,
        P::NoWorkspaceYet => 32,
        P::NotChecked => 33,
        P::NoStoredKey => 34,
        P::KeysPresent { .. } => 35,
        P::KeysMissing { .. } => 36,
        P::NoRuntimeRan => 37,
        P::RuntimeAttached => 38,
        P::CommandMayHaveStarted => 39,
        P::RuntimeStopped => 40,
        P::TabAttached => 41,
        P::TabNotAttached => 42,
        P::OutputEvicted { .. } => 43,
        P::RecordsSetAside { .. } => 44,
        P::OutputNeverRecorded { .. } => 45,
        P::Storage { .. } => 46,
        P::ErrorStampIs { .. } => 47,
        P::ExecutionIs { .. } => 48,
        P::UncertainCommand { .. } => 49,
        P::ReplyLost { .. } => 50,
        P::StorageDetail { .. } => 51,
        P::EarlierFailure { .. } => 52,
        P::Cause { .. } => 53,
        P::Refused { .. } => 54,
        P::Journal { .. } => 55,
        P::ActionNotPossible { .. } => 56,
        P::NothingToRecover => 57,
        P::WorkspaceCannotOpen => 58,
        P::WorkspaceUnreadable { .. } => 59,
        P::NotUncertain => 60,
        P::ReissueNeedsRunning => 61,
        P::ReissueAgentWorking => 62,
        P::ProfilesCannotOpen { .. } => 63,
        P::NoProfileMade { .. } => 64,
        P::MessageWaits { .. } => 65,
        P::ResumedWithoutProfile => 66,
        P::WorkspaceNotDeleted { .. } => 67,
        P::EarlierLaunchAnswered { .. } => 68,
        P::EarlierLaunchRetired { .. } => 69,
        P::ProfilesUnreadable { .. } => 70,
        P::ProfilesNotOpen => 71,
        P::ProfileSaved { .. } => 72,
        P::ProfileNotSaved { .. } => 73,
        P::ProfileDeletedMeanwhile => 74,
        P::ProfileNotDeleted { .. } => 75,
        P::NoIdMade => 76,
        P::KeyNotStored { .. } => 77,
        P::NoKeyForCommands => 78,
        P::ProfileInvalid { .. } => 79,
        P::MessageTooLong { .. } => 80,
        P::JournalDegraded { .. } => 81,
        P::Plan { .. } => 82,
        P::SessionStoppedResend => 83,
        P::NoSessionToSend => 84,
        P::FollowingCannotSend => 85,
        P::MessageEmpty => 86,
        P::RequestRejected { .. } => 87,
        P::NoWebLocks => 88,
        P::NoRandomness { .. } => 89,
        P::LockFailed { .. } => 90,
        P::SnapshotFallback { .. } => 91,
        P::SnapshotsUnreadable { .. } => 92,
        P::SnapshotNotSaved { .. } => 93,
        P::RecordsQuarantined { .. } => 94,
        P::QuarantineNotMoved { .. } => 95,
        P::ReplayRefused { .. } => 96,
        P::PersistConfirmFailed { .. } => 97,
        P::RuntimeNotJson { .. } => 98,
        P::RuntimeMessageRejected { .. } => 99,
        P::FollowerUnreadable { .. } => 100,
        P::NoBroadcastChannel => 101,
        P::OtherBuild => 102,
        P::BroadcastRejected { .. } => 103,
        P::CatchUpFailed { .. } => 104,
        P::FollowGap { .. } => 105,
        P::EntryNotBelieved { .. } => 106,
        P::PageNotJson => 107,
        P::PageMessageRejected { .. } => 108,
        P::PortMissing => 109,
        P::ExportNoJournal => 110,
        P::Exporting => 111,
        P::ExportFailed { .. } => 112,
        P::ExportNoSession => 113,
        P::ExportHandOff { .. } => 114,
        P::ExportedWithGaps { .. } => 115,
        P::ImportTooLarge { .. } => 116,
        P::UnaskedFile => 117,
        P::ImportTruncated { .. } => 118,
        P::ImportFailed { .. } => 119,
        P::FolderGone { .. } => 120,
        P::FoldersUnsupported => 121,
        P::AnotherTabInControl => 122,
        P::FolderNeedsPermissionToRead { .. } => 123,
        P::EnvironmentWhileWorking => 124,
        P::TurnEnded { .. } => 125,
        P::RetryRateLimited { .. } => 126,
        P::RetryOverloaded { .. } => 127,
        P::RetryNotConnected { .. } => 128,
        P::LocalModelRefused { .. } => 129,
        P::LocalModelFacts { .. } => 130,
        P::SwitchWhileWorking => 131,
        P::OutputUnavailable => 132,
        P::OutputMissing { .. } => 133,
        P::LocalModelLoading { .. } => 134,
        P::NotOffered => 135,
        P::FailedBecause { .. } => 136,
        P::Recorded { .. } => 137,
        P::RunningLimit => 138,
        P::RuntimeAnswers => 139,
        P::StopRuntimeRefused { .. } => 140,
        P::Observed { .. } => 141,
        P::PageMessageTooLarge { .. } => 142,
        P::PageOtherBuild { .. } => 143,
        P::EventsUnreadable => 144,
        P::NotLoaded => 145,
        P::SummaryLaunchFailed => 146,
        P::DispatchRefused { .. } => 147,
        P::HistoryNotLoaded => 148,
    }
}

#[test]
fn every_phrase_has_a_text_in_every_locale() {
    let all = every_phrase();
    let mut seen: Vec<usize> = all.iter().map(index).collect();
    seen.sort_unstable();
    seen.dedup();
    let max = *seen.last().unwrap();
    assert_eq!(
        seen,
        (0..=max).collect::<Vec<_>>(),
        "a sample of every phrase"
    );
    for p in &all {
        for locale in Locale::ALL {
            let text = phrase(locale, p);
            assert!(!text.trim().is_empty(), "{p:?} in {locale:?}");
            // Every parameter was filled.
            for k in 0..10 {
                assert!(
                    !text.contains(&format!("{{{k}}}")),
                    "{p:?} in {locale:?}: {text}"
                );
            }
        }
    }
}

#[test]
fn phrases_read_in_german_and_english_follows_the_core() {
    let summary = Phrase::SummaryAgentFailed;
    let evidence = Phrase::TurnsRecorded { turns: 1234 };
    // English on the page is the core's English, with the locale's
    // number format.
    assert_eq!(phrase(Locale::En, &summary), summary.to_string());
    assert_eq!(
        phrase(Locale::En, &evidence),
        "1,234 turns recorded in the journal"
    );
    assert_eq!(
        phrase(Locale::De, &summary),
        "Der letzte Durchgang ist fehlgeschlagen. Arbeitsbereich und Schlüssel bleiben erhalten."
    );
    assert_eq!(
        phrase(Locale::De, &evidence),
        "1.234 Durchgänge im Journal aufgezeichnet"
    );
    assert_eq!(
        phrase(
            Locale::De,
            &Phrase::Storage {
                persisted: true,
                used: 1_200_000,
                quota: 10_000_000_000
            }
        ),
        "dauerhafter Speicher; 1,2 MB von 10,0 GB belegt"
    );
    // Free text from outside stays as it is, in every locale.
    let failed = Phrase::Cause {
        cause: FailureCause::AgentFailed {
            detail: "HTTP 500: overloaded".into(),
        },
    };
    assert_eq!(
        phrase(Locale::De, &failed),
        "der Durchgang ist fehlgeschlagen: HTTP 500: overloaded"
    );
    // Where no number or size format differs, the page's English is
    // exactly the core's English.
    for p in every_phrase() {
        let core = p.to_string();
        let page = phrase(Locale::En, &p);
        let plain = !core.chars().any(|c| c.is_ascii_digit())
            && !matches!(p, Phrase::Refused { .. } | Phrase::ProfileSaved { .. })
            && !matches!(
                p,
                Phrase::Cause {
                    cause: FailureCause::ProfileBlocked { .. }
                }
            );
        if plain {
            assert_eq!(page, core, "{p:?}");
        }
        // Recorded text is outside words, never translated.
        if !matches!(p, Phrase::Recorded { .. }) {
            assert_ne!(phrase(Locale::De, &p), page, "{p:?} is not translated");
        }
    }
}

#[test]
fn turns_the_core_ended_read_by_count_in_both_languages() {
    use lifeline_core::ending::TurnEnding as E;
    let stopped = |left| Phrase::TurnEnded {
        ending: E::StoppedBefore {
            line: "echo a".into(),
            left,
        },
    };
    for left in [1, 2, 1500] {
        // The page's English is the core's, with the locale's digits.
        assert_eq!(
            phrase(Locale::En, &stopped(left)),
            stopped(left).to_string().replace("1500", "1,500")
        );
    }
    assert_eq!(
        phrase(Locale::De, &stopped(1)),
        "Angehalten, bevor `echo a` lief; 1 geplanter Befehl wurde nicht ausgeführt."
    );
    assert_eq!(
        phrase(Locale::De, &stopped(1500)),
        "Angehalten, bevor `echo a` lief; 1.500 geplante Befehle wurden nicht ausgeführt."
    );
    let tokens = Phrase::TurnEnded {
        ending: E::TokenBudget {
            max: 1000,
            used: 1200,
        },
    };
    assert_eq!(
        phrase(Locale::En, &tokens),
        tokens
            .to_string()
            .replace("1000", "1,000")
            .replace("1200", "1,200")
    );
    // Counts choose their words; no "(s)" for the reader to decode.
    for p in every_phrase() {
        for locale in Locale::ALL {
            let text = phrase(locale, &p);
            for mark in ["(s)", "(e)", "(en)", "(ies)", "(r)", "/-"] {
                assert!(!text.contains(mark), "{p:?} in {locale:?}: {text}");
            }
        }
    }
}

#[test]
fn every_phrase_crosses_the_protocol_unchanged() {
    use lifeline_protocol::{decode, encode, ControllerToPage, Level};
    for p in every_phrase() {
        let message = ControllerToPage::Notice {
            key: "k".into(),
            level: Level::Info,
            message: Some(p.clone()),
        };
        let text = encode(&message);
        assert_eq!(
            decode::<ControllerToPage>(&text).unwrap(),
            message,
            "{text}"
        );
    }
    // A malformed phrase is a decode error, not a panic.
    let bad = r#"{"notice":{"key":"k","level":"info","message":[9999,[],[],[]]}}"#;
    assert!(decode::<ControllerToPage>(bad).is_err());
    let short = r#"{"notice":{"key":"k","level":"info","message":[26,[],[3],[]]}}"#;
    assert!(decode::<ControllerToPage>(short).is_err());
}

#[test]
fn the_running_limit_reads_as_the_core_says_with_its_number() {
    let limit = Phrase::RunningLimit;
    assert_eq!(phrase(Locale::En, &limit), limit.to_string());
    let n = lifeline_core::session::MAX_RUNNING_SESSIONS.to_string();
    assert!(phrase(Locale::De, &limit).starts_with(&n));
}
