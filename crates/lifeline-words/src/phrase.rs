//! Every phrase the core and the controller compose, worded in a locale
//! ([`phrase`], exhaustive: a new phrase without a text in every locale
//! does not compile). Free text from outside (a browser's or a provider's
//! error message, a file name, a command line) stays an argument and is
//! not translated.

use lifeline_core::agent::PlanError;
use lifeline_core::ending::TurnEnding;
use lifeline_core::environment::FolderAccess;
use lifeline_core::export::ImportFault;
use lifeline_core::journal::{DispatchRefusal, FailureReason, ProviderFailureClass, RecoveryKind};
use lifeline_core::message::RejectionKind;
use lifeline_core::phrase::{JournalFault, Phrase};
use lifeline_core::profile::{
    limits as profile_limits, CredentialFailure, InvalidProfile, ModelFileFault, ProfileBlock,
};
use lifeline_core::recovery::Action;
use lifeline_core::schema::limits;
use lifeline_core::session::{Refusal, MAX_QUEUED_PROMPTS};
use lifeline_core::session_record::{FailureCause, LaunchFailure, LoadError, RuntimeEnd};
use lifeline_core::store_fault::{StoreFault, StoredKind};
use lifeline_core::Outcome;

use crate::catalog::{t, Msg};
use crate::format::{bytes, fill, num};
use crate::Locale;

/// `msg` in `locale`, filled with `args`.
#[inline(never)]
fn tf_in(locale: Locale, msg: Msg, args: &[&str]) -> String {
    fill(t(locale, msg), args)
}

pub(crate) fn outcome(o: Outcome) -> Msg {
    match o {
        Outcome::Admitted => Msg::OutcomeAdmitted,
        Outcome::NotDispatched => Msg::OutcomeNotDispatched,
        Outcome::Dispatched => Msg::OutcomeDispatched,
        Outcome::MayHaveStarted => Msg::OutcomeMayHaveStarted,
        Outcome::Running => Msg::OutcomeRunning,
        Outcome::Completed => Msg::TurnCompleted,
        Outcome::Failed => Msg::TurnFailed,
        Outcome::Cancelled => Msg::TurnCancelled,
        Outcome::TimedOut => Msg::OutcomeTimedOut,
        Outcome::Lost => Msg::OutcomeLost,
    }
}

pub(crate) fn action(a: Action) -> Msg {
    match a {
        Action::Resume => Msg::Resume,
        Action::ContinueFromHistory => Msg::ContinueFromHistory,
        Action::StartFresh => Msg::StartFresh,
        Action::InspectWorkspace => Msg::InspectWorkspace,
        Action::Archive => Msg::Archive,
        Action::Unarchive => Msg::Unarchive,
    }
}

/// A phrase composed by the core or the controller, in `l`. Exhaustive: a
/// new phrase without a text here does not compile. Free text from outside
/// (details, file names, command lines) is passed through untranslated.
pub fn phrase(l: Locale, p: &Phrase) -> String {
    use Phrase as P;
    // Out of line, so each arm is a call or two (the UI's wasm budget).
    #[inline(never)]
    fn count(l: Locale, v: u32) -> String {
        num(l, u64::from(v))
    }
    let n = |v: u32| count(l, v);
    let f = |msg: Msg, args: &[&str]| tf_in(l, msg, args);
    let s = |msg: Msg| owned(l, msg);
    match p {
        P::SummaryAgentFailed => s(Msg::PhSummaryAgentFailed),
        P::SummaryRuntimeLost => s(Msg::PhSummaryRuntimeLost),
        P::SummaryCleanupFailed => s(Msg::PhSummaryCleanupFailed),
        P::SummaryCredential => s(Msg::PhSummaryCredential),
        P::SummaryProfile => s(Msg::PhSummaryProfile),
        P::SummaryRecoveryFailed => s(Msg::PhSummaryRecoveryFailed),
        P::SummaryLaunchFailed => s(Msg::PhSummaryLaunchFailed),
        P::SummaryUnknownFailure => s(Msg::PhSummaryUnknownFailure),
        P::SummaryDetached => s(Msg::PhSummaryDetached),
        P::SummaryCancelled => s(Msg::PhSummaryCancelled),
        P::SummaryArchived => s(Msg::PhSummaryArchived),
        P::SummaryUncertain => s(Msg::PhSummaryUncertain),
        P::SummaryInterruptedEarlier => s(Msg::PhSummaryInterruptedEarlier),
        P::SummaryRecovery => s(Msg::Recovery),
        P::BusyStarting => s(Msg::PhBusyStarting),
        P::BusyCancelling => s(Msg::PhBusyCancelling),
        P::WaitOrStop { starting } => f(
            Msg::PhWaitOrStop,
            &[t(
                l,
                if *starting {
                    Msg::PhBusyStarting
                } else {
                    Msg::PhBusyCancelling
                },
            )],
        ),
        P::SessionArchived => s(Msg::PhSessionArchived),
        P::NeverRan => s(Msg::PhNeverRan),
        P::SessionRunning => s(Msg::PhSessionRunning),
        P::WorkspaceGoneStartFresh => s(Msg::PhWorkspaceGoneStartFresh),
        P::NoHistory => s(Msg::PhNoHistory),
        P::AgentWorking => s(Msg::PhAgentWorking),
        P::AgentRunningLive => s(Msg::PhAgentRunningLive),
        P::NoWorkspaceFolder => s(Msg::PhNoWorkspaceFolder),
        P::AgentWorkingStopFirst => s(Msg::PhAgentWorkingStopFirst),
        P::FolderGone { name } => f(Msg::PhFolderGone, &[name]),
        P::FoldersUnsupported => s(Msg::PhFoldersUnsupported),
        P::NotOffered => s(Msg::PhNotOffered),
        P::Observed { kind } => s(observed(*kind)),
        P::FailedBecause { reason } => failure_reason(l, reason),
        P::Recorded { text } => text.clone(),
        P::AnotherTabInControl => s(Msg::PhAnotherTabInControl),
        P::FolderNeedsPermissionToRead { name } => f(Msg::PhFolderNeedsPermissionToRead, &[name]),
        P::EnvironmentWhileWorking => s(Msg::PhEnvironmentWhileWorking),
        P::SwitchWhileWorking => s(Msg::PhSwitchWhileWorking),
        P::RunningLimit => s(Msg::PhRunningLimit),
        P::RuntimeAnswers => s(Msg::PhRuntimeAnswers),
        P::StopRuntimeRefused { code } => f(Msg::PhStopRuntimeRefused, &[code]),
        P::RetryRateLimited { seconds } => f(Msg::PhRetryRateLimited, &[&n(*seconds)]),
        P::RetryOverloaded { seconds } => f(Msg::PhRetryOverloaded, &[&n(*seconds)]),
        P::RetryNotConnected { seconds } => f(Msg::PhRetryNotConnected, &[&n(*seconds)]),
        P::LocalModelRefused { fault } => model_file(l, fault),
        P::LocalModelFacts {
            name,
            bytes,
            architecture,
            parameters,
            trained,
            context,
        } => f(
            Msg::PhLocalModelFacts,
            &[
                name,
                &num(l, *bytes),
                architecture,
                &num(l, *parameters),
                &num(l, *trained),
                &n(*context),
            ],
        ),
        P::LocalModelLoading {
            read,
            total,
            seconds,
        } => f(
            Msg::PhLocalModelLoading,
            &[&num(l, *read), &num(l, *total), &n(*seconds)],
        ),
        P::OutputUnavailable => s(Msg::PhOutputUnavailable),
        P::OutputMissing { missing } => f(Msg::PhOutputMissing, &[&n(*missing)]),
        P::EventsUnreadable => s(Msg::PhEventsUnreadable),
        P::DispatchRefused { refusal } => s(dispatch_refused(*refusal)),
        P::NoMessagesYet => s(Msg::PhNoMessagesYet),
        P::TurnsRepliesLost { turns, lost } => f(Msg::PhTurnsRepliesLost, &[&n(*turns), &n(*lost)]),
        P::TurnsSomeUnreadable { turns } => f(
            by_count(
                *turns,
                Msg::PhTurnsSomeUnreadableOne,
                Msg::PhTurnsSomeUnreadable,
            ),
            &[&n(*turns)],
        ),
        P::TurnsRecorded { turns } => f(
            by_count(*turns, Msg::PhTurnsRecordedOne, Msg::PhTurnsRecorded),
            &[&n(*turns)],
        ),
        P::WorkspaceThere => s(Msg::PhWorkspaceThere),
        P::WorkspaceThereEntries { entries } => f(
            by_count(
                *entries,
                Msg::PhWorkspaceThereEntriesOne,
                Msg::PhWorkspaceThereEntries,
            ),
            &[&n(*entries)],
        ),
        P::WorkspaceGone => s(Msg::PhWorkspaceGone),
        P::NoWorkspaceYet => s(Msg::PhNoWorkspaceYet),
        P::NotChecked => s(Msg::PhNotChecked),
        P::NoStoredKey => s(Msg::PhNoStoredKey),
        P::KeysPresent { total } => f(
            by_count(*total, Msg::PhKeysPresentOne, Msg::PhKeysPresent),
            &[&n(*total)],
        ),
        P::KeysMissing { missing, total } => f(Msg::PhKeysMissing, &[&n(*missing), &n(*total)]),
        P::NoRuntimeRan => s(Msg::PhNoRuntimeRan),
        P::RuntimeAttached => s(Msg::PhRuntimeAttached),
        P::CommandMayHaveStarted => s(Msg::PhCommandMayHaveStarted),
        P::RuntimeStopped => s(Msg::PhRuntimeStopped),
        P::TabAttached => s(Msg::PhTabAttached),
        P::TabNotAttached => s(Msg::PhTabNotAttached),
        P::OutputEvicted { commands } => f(
            by_count(*commands, Msg::PhOutputEvictedOne, Msg::PhOutputEvicted),
            &[&n(*commands)],
        ),
        P::RecordsSetAside { records } => f(
            by_count(*records, Msg::PhRecordsSetAsideOne, Msg::PhRecordsSetAside),
            &[&n(*records)],
        ),
        P::OutputNeverRecorded { commands } => f(
            by_count(
                *commands,
                Msg::PhOutputNeverRecordedOne,
                Msg::PhOutputNeverRecorded,
            ),
            &[&n(*commands)],
        ),
        P::Storage {
            persisted,
            used,
            quota,
        } => f(
            if *persisted {
                Msg::PhStoragePersistent
            } else {
                Msg::PhStorageBestEffort
            },
            &[&bytes(l, *used), &bytes(l, *quota)],
        ),
        P::ErrorStampIs { stamp } => f(Msg::PhErrorStamp, &[&stamp.to_string()]),
        P::ExecutionIs { execution } => f(Msg::PhExecution, &[&execution.to_string()]),
        P::UncertainCommand {
            line,
            outcome: o,
            verdict,
            reissued,
        } => f(
            match (verdict, reissued) {
                (Some(true), _) => Msg::PhUncertainMarkedDone,
                (Some(false), _) => Msg::PhUncertainMarkedNotDone,
                (None, true) => Msg::PhUncertainReissued,
                (None, false) => Msg::PhUncertainCheck,
            },
            &[line, t(l, outcome(*o))],
        ),
        P::ReplyLost { request, turn } => {
            f(Msg::PhReplyLost, &[&request.to_string(), &turn.to_string()])
        }
        P::StorageDetail { storage } => f(Msg::PhStorageDetail, &[&phrase(l, storage)]),
        P::EarlierFailure { cause: c, stamp } => {
            f(Msg::PhEarlierFailure, &[&cause(l, c), &stamp.to_string()])
        }
        P::Cause { cause: c } => cause(l, c),
        P::Refused { refusal: r } => refusal(l, r),
        P::Journal { fault } => journal_fault(l, fault),
        P::ActionNotPossible { action: a, reason } => {
            f(Msg::NotPossibleNow, &[t(l, action(*a)), &phrase(l, reason)])
        }
        P::NothingToRecover => s(Msg::PhNothingToRecover),
        P::WorkspaceCannotOpen => s(Msg::PhWorkspaceCannotOpen),
        P::WorkspaceUnreadable { detail } => f(Msg::PhWorkspaceUnreadable, &[detail]),
        P::NotUncertain => s(Msg::PhNotUncertain),
        P::ReissueNeedsRunning => s(Msg::PhReissueNeedsRunning),
        P::ReissueAgentWorking => s(Msg::PhReissueAgentWorking),
        P::ProfilesCannotOpen { fault } => f(Msg::PhProfilesCannotOpen, &[&store_fault(l, fault)]),
        P::NoProfileMade { fault } => f(Msg::PhNoProfileMade, &[&store_fault(l, fault)]),
        P::MessageWaits { waiting } => f(Msg::PhMessageWaits, &[&n(*waiting)]),
        P::ResumedWithoutProfile => s(Msg::PhResumedWithoutProfile),
        P::WorkspaceNotDeleted { detail } => f(Msg::PhWorkspaceNotDeleted, &[detail]),
        P::EarlierLaunchAnswered {
            runtime,
            generation,
        } => f(
            Msg::PhEarlierLaunchAnswered,
            &[runtime, &num(l, *generation)],
        ),
        P::EarlierLaunchRetired {
            runtime,
            generation,
        } => f(
            Msg::PhEarlierLaunchRetired,
            &[runtime, &num(l, *generation)],
        ),
        P::ProfilesUnreadable { fault } => f(Msg::PhProfilesUnreadable, &[&store_fault(l, fault)]),
        P::ProfilesNotOpen => s(Msg::PhProfilesNotOpen),
        P::ProfileSaved { name } => f(Msg::PhProfileSaved, &[name]),
        P::ProfileNotSaved { fault } => f(Msg::PhProfileNotSaved, &[&store_fault(l, fault)]),
        P::ProfileDeletedMeanwhile => s(Msg::PhProfileDeletedMeanwhile),
        P::ProfileNotDeleted { fault } => f(Msg::PhProfileNotDeleted, &[&store_fault(l, fault)]),
        P::NoIdMade => s(Msg::PhNoIdMade),
        P::KeyNotStored { fault } => f(Msg::PhKeyNotStored, &[&store_fault(l, fault)]),
        P::NoKeyForCommands => s(Msg::PhNoKeyForCommands),
        P::ProfileInvalid { invalid } => f(Msg::PhProfileInvalid, &[&invalid_profile(l, invalid)]),
        P::MessageTooLong { bytes: b, limit } => {
            f(Msg::PhMessageTooLong, &[&bytes(l, *b), &bytes(l, *limit)])
        }
        P::JournalDegraded { fault } => f(Msg::PhJournalDegraded, &[&journal_fault(l, fault)]),
        P::Plan { error } => plan_error(l, error),
        P::SessionStoppedResend => s(Msg::PhSessionStoppedResend),
        P::NoSessionToSend => s(Msg::PhNoSessionToSend),
        P::FollowingCannotSend => s(Msg::PhFollowingCannotSend),
        P::MessageEmpty => s(Msg::PhMessageEmpty),
        P::RequestRejected { rejection, limit } => rejected(l, *rejection, *limit),
        P::NoWebLocks => s(Msg::PhNoWebLocks),
        P::NoRandomness => s(Msg::PhNoRandomness),
        P::LockFailed => s(Msg::PhLockFailed),
        P::SnapshotFallback { bad, loaded } => {
            f(Msg::PhSnapshotFallback, &[&num(l, *bad), &num(l, *loaded)])
        }
        P::SnapshotsUnreadable { count, newest } => f(
            by_count(
                *count,
                Msg::PhSnapshotsUnreadableOne,
                Msg::PhSnapshotsUnreadable,
            ),
            &[&n(*count), &num(l, *newest)],
        ),
        P::SnapshotNotSaved { fault } => f(Msg::PhSnapshotNotSaved, &[&journal_fault(l, fault)]),
        P::RecordsQuarantined { count } => f(
            by_count(
                *count,
                Msg::PhRecordsQuarantinedOne,
                Msg::PhRecordsQuarantined,
            ),
            &[&n(*count)],
        ),
        P::QuarantineNotMoved { fault } => {
            f(Msg::PhQuarantineNotMoved, &[&journal_fault(l, fault)])
        }
        P::ReplayRefused { count, first } => f(
            by_count(*count, Msg::PhReplayRefusedOne, Msg::PhReplayRefused),
            &[&n(*count), &num(l, *first)],
        ),
        P::PersistConfirmFailed { code } => f(Msg::PhPersistConfirmFailed, &[code]),
        P::RuntimeNotJson { runtime } => f(Msg::PhRuntimeNotJson, &[runtime]),
        P::RuntimeMessageRejected { runtime, code } => {
            f(Msg::PhRuntimeMessageRejected, &[runtime, code])
        }
        P::FollowerUnreadable { count } => f(
            by_count(
                *count,
                Msg::PhFollowerUnreadableOne,
                Msg::PhFollowerUnreadable,
            ),
            &[&n(*count)],
        ),
        P::NoBroadcastChannel => s(Msg::PhNoBroadcastChannel),
        P::OtherBuild => s(Msg::PhOtherBuild),
        P::BroadcastRejected => s(Msg::PhBroadcastRejected),
        P::CatchUpFailed { fault } => f(Msg::PhCatchUpFailed, &[&journal_fault(l, fault)]),
        P::FollowGap { from, to } => f(Msg::PhFollowGap, &[&num(l, *from), &num(l, *to)]),
        P::EntryNotBelieved { position } => f(Msg::PhEntryNotBelieved, &[&num(l, *position)]),
        P::PageNotJson => s(Msg::PhPageNotJson),
        P::PageMessageRejected => s(Msg::PhPageMessageRejected),
        P::PageMessageTooLarge { bytes, max } => f(
            Msg::PhPageMessageTooLarge,
            &[&num(l, *bytes), &num(l, *max)],
        ),
        P::PageOtherBuild { theirs, ours } => f(Msg::PhPageOtherBuild, &[&n(*theirs), &n(*ours)]),
        P::PortMissing => s(Msg::PhPortMissing),
        P::NotLoaded => s(Msg::PhNotLoaded),
        P::HistoryNotLoaded => s(Msg::PhHistoryNotLoaded),
        P::ExportNoJournal => s(Msg::PhExportNoJournal),
        P::Exporting => s(Msg::PhExporting),
        P::ExportFailed { fault } => f(Msg::PhExportFailed, &[&journal_fault(l, fault)]),
        P::ExportNoSession => s(Msg::PhExportNoSession),
        P::ExportHandOff { detail } => f(Msg::PhExportHandOff, &[detail]),
        P::ExportedWithGaps {
            unreadable,
            missing,
        } => match (*unreadable, *missing) {
            (0, m) => f(Msg::PhExportedMissing, &[&n(m)]),
            (u, 0) => f(Msg::PhExportedUnreadable, &[&n(u)]),
            (u, m) => f(Msg::PhExportedBoth, &[&n(u), &n(m)]),
        },
        P::ImportTooLarge {
            file,
            bytes: b,
            limit,
        } => f(
            Msg::PhImportTooLarge,
            &[file, &bytes(l, *b), &bytes(l, *limit)],
        ),
        P::UnaskedFile => s(Msg::PhUnaskedFile),
        P::ImportTruncated {
            file,
            got,
            expected,
        } => f(
            Msg::PhImportTruncated,
            &[file, &bytes(l, *got), &bytes(l, *expected)],
        ),
        P::ImportFailed { file, fault } => import_failed(l, file, fault),
        P::TurnEnded { ending } => turn_ending(l, ending),
    }
}

/// A turn the core ended, in `l`.
fn turn_ending(l: Locale, e: &TurnEnding) -> String {
    use TurnEnding as E;
    let n = |v: u64| num(l, v);
    let f = |msg: Msg, args: &[&str]| tf_in(l, msg, args);
    let budget = |msg: Msg, args: &[&str]| f(Msg::EndBudget, &[&f(msg, args)]);
    match e {
        E::StoppedBefore { line, left: 1 } => f(Msg::EndStoppedBeforeOne, &[line]),
        E::StoppedBefore { line, left } => f(Msg::EndStoppedBeforeMany, &[line, &n(*left)]),
        E::StoppedBetweenSteps => owned(l, Msg::EndBetweenSteps),
        E::SessionLeft => owned(l, Msg::EndSessionLeft),
        E::ReplyLost => owned(l, Msg::EndReplyLost),
        E::CommandCancelled { line } => f(Msg::EndCancelled, &[line]),
        E::CommandUncertain { line, outcome } => {
            let what = match outcome {
                Outcome::Lost => Msg::EndLost,
                Outcome::NotDispatched => Msg::EndNotSent,
                _ => Msg::EndUnknown,
            };
            f(Msg::EndUncertain, &[line, t(l, what)])
        }
        E::StepBudget { max } => budget(Msg::EndSteps, &[&n(*max)]),
        E::CommandBudget { max } => budget(Msg::EndCommands, &[&n(*max)]),
        E::TokenBudget { max, used } => budget(Msg::EndTokens, &[&n(*max), &n(*used)]),
        E::TimeBudget { seconds } => budget(Msg::EndTime, &[&n(*seconds)]),
        E::ProviderFailed { class } if class.broke_off() => owned(l, Msg::EndReplyBroke),
        E::ProviderFailed {
            class: ProviderFailureClass::Cancelled,
        } => owned(l, Msg::EndReplyStopped),
        E::ProviderFailed { .. } => owned(l, Msg::EndRequestFailed),
    }
}

/// The catalog's text for one thing or for any other count: English and
/// German both mark only the singular (0 takes the plural).
fn by_count(count: impl Into<u64>, one: Msg, many: Msg) -> Msg {
    if count.into() == 1 {
        one
    } else {
        many
    }
}

#[inline(never)]
fn owned(l: Locale, msg: Msg) -> String {
    t(l, msg).to_owned()
}

/// Why a credential could not be read, in `l` (the store's English for
/// one recorded before the reasons were typed).
fn credential_reason(l: Locale, failure: &CredentialFailure) -> String {
    use CredentialFailure as C;
    let f = |msg: Msg, args: &[&str]| tf_in(l, msg, args);
    match failure {
        C::Missing => owned(l, Msg::PhCredMissingReason),
        C::Unreadable { detail } => detail.clone(),
        C::Store { fault } => store_fault(l, fault),
        C::Malformed { reason } => f(Msg::PhCredMalformed, &[reason]),
        C::KeyGone => owned(l, Msg::PhCredKeyGone),
        C::KeyDamaged => owned(l, Msg::PhCredKeyDamaged),
        C::NoCrypto { detail } => f(Msg::PhCredNoCrypto, &[detail]),
        C::Undecryptable => owned(l, Msg::PhCredUndecryptable),
        C::NotText => owned(l, Msg::PhCredNotText),
    }
}

/// A durable failure cause, in `l`.
fn cause(l: Locale, c: &FailureCause) -> String {
    let f = |msg: Msg, args: &[&str]| tf_in(l, msg, args);
    match c {
        FailureCause::ProfileBlocked { block } => match block {
            ProfileBlock::Unreadable { detail } => f(Msg::PhProfileUnreadable, &[detail]),
            ProfileBlock::OtherOwner { owner } => f(Msg::PhProfileOtherOwner, &[owner]),
            ProfileBlock::Store { fault } => f(Msg::PhProfileUnreadable, &[&store_fault(l, fault)]),
            ProfileBlock::Invalid { invalid } => {
                f(Msg::PhProfileUnreadable, &[&invalid_profile(l, invalid)])
            }
        },
        FailureCause::ProfileDeleted => t(l, Msg::PhProfileDeleted).to_owned(),
        FailureCause::Credential {
            credential,
            failure,
        } => match failure {
            CredentialFailure::Missing => f(Msg::PhCredentialMissing, &[&credential.to_string()]),
            failure => f(
                Msg::PhCredentialUnreadable,
                &[&credential.to_string(), &credential_reason(l, failure)],
            ),
        },
        FailureCause::Launch { failure } => match failure {
            LaunchFailure::WorkspaceMissing => t(l, Msg::PhWorkspaceMissingLaunch).to_owned(),
            LaunchFailure::Failed { detail } => f(Msg::PhLaunchFailed, &[detail]),
            LaunchFailure::Refused { code } => f(Msg::PhLaunchRefused, &[code]),
            LaunchFailure::Folder { name, access } => match access {
                FolderAccess::NeedsPermission => f(Msg::PhFolderNeedsPermissionLaunch, &[name]),
                _ => f(Msg::PhFolderGoneLaunch, &[name]),
            },
        },
        FailureCause::Load { error } => {
            let e = match error {
                LoadError::Unsupported => t(l, Msg::PhLoadUnsupported).to_owned(),
                LoadError::CapabilityAbsent => t(l, Msg::PhLoadCapabilityAbsent).to_owned(),
                LoadError::UnknownSession => t(l, Msg::PhLoadUnknownSession).to_owned(),
                LoadError::Timeout => t(l, Msg::PhLoadTimeout).to_owned(),
                LoadError::Cancelled => t(l, Msg::PhLoadCancelled).to_owned(),
                LoadError::Auth => t(l, Msg::PhLoadAuth).to_owned(),
                LoadError::Transport { detail } => f(Msg::PhLoadTransport, &[detail]),
                LoadError::Unclassified { detail } => f(Msg::PhLoadUnclassified, &[detail]),
            };
            f(Msg::PhResumeFailed, &[&e])
        }
        FailureCause::CleanupFailed { detail } => f(Msg::PhCleanupFailed, &[detail]),
        FailureCause::AgentFailed { detail } => f(Msg::PhAgentFailed, &[detail]),
        FailureCause::RuntimeLost { detail, end } => {
            let how = match end {
                Some(RuntimeEnd::WorkerEnded) => owned(l, Msg::EndWorkerEnded),
                Some(RuntimeEnd::Retired) => owned(l, Msg::EndRetired),
                Some(RuntimeEnd::Gone) => owned(l, Msg::EndGone),
                Some(RuntimeEnd::Unknown) => owned(l, Msg::EndUnknownToJournal),
                None => detail.clone(),
            };
            f(Msg::PhRuntimeLost, &[&how])
        }
    }
}

/// A file refused as a local model, in `l`: what is wrong with it.
fn model_file(l: Locale, fault: &ModelFileFault) -> String {
    use ModelFileFault as F;
    let (msg, arg) = match fault {
        F::NotGguf => (Msg::PhModelNotGguf, String::new()),
        F::Version { version } => (Msg::PhModelVersion, version.to_string()),
        F::Truncated => (Msg::PhModelTruncated, String::new()),
        F::Damaged => (Msg::PhModelDamaged, String::new()),
        F::NoArchitecture => (Msg::PhModelNoArchitecture, String::new()),
        F::Unreadable { detail } => (Msg::PhModelUnreadable, detail.clone()),
    };
    let why = tf_in(l, msg, &[&arg]);
    tf_in(l, Msg::PhLocalModelRefused, &[&why])
}

/// An evidence import that failed, in `l`: how the file is not an archive
/// this build reads.
fn import_failed(l: Locale, file: &str, fault: &ImportFault) -> String {
    use ImportFault as F;
    let (msg, args) = match fault {
        F::NotAnArchive => (Msg::PhImportNotAnArchive, [0; 3]),
        F::TooManyLines { limit } => (Msg::PhImportTooManyLines, [*limit, 0, 0]),
        F::LineTooLong { line, bytes, limit } => {
            (Msg::PhImportLineTooLong, [*line, *bytes, *limit])
        }
        F::BadLine { line } => (Msg::PhImportBadLine, [*line, 0, 0]),
        F::NoSession => (Msg::PhImportNoSession, [0; 3]),
    };
    let [a, b, c] = args.map(|n| num(l, n));
    let why = tf_in(l, msg, &[&a, &b, &c]);
    tf_in(l, Msg::PhImportFailed, &[file, &why])
}

/// Why a command's runtime refused it, as its row says it.
fn dispatch_refused(refusal: DispatchRefusal) -> Msg {
    match refusal {
        DispatchRefusal::Capacity => Msg::PhDispatchRefusedRoom,
        DispatchRefusal::WrongRuntime
        | DispatchRefusal::StaleGeneration { .. }
        | DispatchRefusal::WrongExecution => Msg::PhDispatchRefusedReplaced,
        DispatchRefusal::CancelledBeforeAccept => Msg::PhDispatchRefusedCancelled,
    }
}

/// What a recovery procedure observed about a command, as its row says it.
fn observed(kind: RecoveryKind) -> Msg {
    use RecoveryKind as K;
    match kind {
        K::ControllerRestart => Msg::PhObservedControllerRestart,
        K::HostLoss => Msg::PhObservedHostLoss,
        K::TransportLoss => Msg::PhObservedTransportLoss,
        K::RuntimeCrash => Msg::PhObservedRuntimeCrash,
        K::CheckpointFailure => Msg::PhObservedCheckpointFailure,
        K::CleanupFailure => Msg::PhObservedCleanupFailure,
        K::AckTimeout => Msg::PhObservedAckTimeout,
        K::CancelEscalation => Msg::PhObservedCancelEscalation,
        K::ReattachTimeout => Msg::PhObservedReattachTimeout,
        K::RuntimeReplaced => Msg::PhObservedRuntimeReplaced,
        K::SessionStopped => Msg::PhObservedSessionStopped,
        K::StreamConflict => Msg::PhObservedStreamConflict,
    }
}

/// Why the core refused what the engine asked of it, in `l`: the kinds a
/// person can act on in words, the rest by their code (each means the
/// engine and its journal disagreed, and nothing was run or sent twice).
fn rejected(l: Locale, kind: RejectionKind, limit: u64) -> String {
    use RejectionKind as K;
    match kind {
        K::Busy => t(l, Msg::PhRejectedBusy).to_owned(),
        K::JournalFull => tf_in(l, Msg::PhRejectedJournalFull, &[&num(l, limit)]),
        K::JournalUnavailable => t(l, Msg::PhRejectedJournalUnavailable).to_owned(),
        K::TooManyClients => tf_in(l, Msg::PhRejectedTooManyClients, &[&num(l, limit)]),
        K::NotReissuable => t(l, Msg::PhRejectedNotReissuable).to_owned(),
        other => tf_in(l, Msg::PhRequestRejected, &[other.as_str()]),
    }
}

/// What went wrong with the profile and credential store, in `l`.
fn store_fault(l: Locale, fault: &StoreFault) -> String {
    use StoreFault as F;
    let f = |msg: Msg, args: &[&str]| tf_in(l, msg, args);
    match fault {
        F::Unavailable { detail } => f(Msg::PhStoreUnavailable, &[detail]),
        F::NewerSchema { schema } => f(Msg::PhStoreNewerSchema, &[&schema.to_string()]),
        F::Blocked => t(l, Msg::PhStoreBlocked).to_owned(),
        F::VersionChange => t(l, Msg::PhStoreVersionChange).to_owned(),
        F::Closed => t(l, Msg::PhStoreClosed).to_owned(),
        F::QuotaExceeded => t(l, Msg::PhStoreQuota).to_owned(),
        F::Operation { detail } => f(Msg::PhStoreOperation, &[detail]),
        F::InvalidProfile { detail } => f(Msg::PhStoreInvalidProfile, &[detail]),
        F::StaleRevision { stored, offered } => f(
            Msg::PhStoreStaleRevision,
            &[&stored.to_string(), &offered.to_string()],
        ),
        F::TooMany {
            what: StoredKind::Profiles,
            max,
        } => f(Msg::PhStoreTooManyProfiles, &[&num(l, *max)]),
        F::TooMany {
            what: StoredKind::Credentials,
            max,
        } => f(Msg::PhStoreTooManyCredentials, &[&num(l, *max)]),
        F::InvalidLabel { len, max } => {
            f(Msg::PhStoreInvalidLabel, &[&num(l, *max), &num(l, *len)])
        }
        F::InvalidSecret { len, max } => {
            f(Msg::PhStoreInvalidSecret, &[&num(l, *max), &num(l, *len)])
        }
        F::Crypto { detail } => f(Msg::PhStoreCrypto, &[detail]),
        F::Corrupt { detail } => f(Msg::PhStoreCorrupt, &[detail]),
    }
}

/// Why the session layer refused a request, in `l`.
fn refusal(l: Locale, r: &Refusal) -> String {
    match r {
        Refusal::UnknownSession => t(l, Msg::PhNoSuchSession).to_owned(),
        Refusal::Archived => t(l, Msg::PhSessionArchived).to_owned(),
        Refusal::Deleted => t(l, Msg::PhSessionDeleted).to_owned(),
        Refusal::Busy { .. } => t(l, Msg::PhAlreadyStarting).to_owned(),
        Refusal::CancellationPending { .. } => t(l, Msg::PhCancellationPending).to_owned(),
        Refusal::NothingToResume => t(l, Msg::PhNothingToResume).to_owned(),
        Refusal::QueueFull => tf_in(l, Msg::PhQueueFull, &[&num(l, MAX_QUEUED_PROMPTS as u64)]),
        Refusal::AlreadyRunning => t(l, Msg::PhAlreadyRunning).to_owned(),
        Refusal::TurnRunning => t(l, Msg::PhTurnRunning).to_owned(),
    }
}

fn journal_fault(l: Locale, j: &JournalFault) -> String {
    let f = |msg: Msg, args: &[&str]| tf_in(l, msg, args);
    match j {
        JournalFault::Unavailable { detail } => f(Msg::PhJournalUnavailable, &[detail]),
        JournalFault::NewerSchema { schema } => {
            f(Msg::PhJournalNewerSchema, &[&schema.to_string()])
        }
        JournalFault::Blocked => t(l, Msg::PhJournalBlocked).to_owned(),
        JournalFault::Operation { detail } => f(Msg::PhJournalOperation, &[detail]),
        JournalFault::QuotaExceeded => t(l, Msg::PhJournalQuota).to_owned(),
        JournalFault::Superseded => t(l, Msg::PhJournalSuperseded).to_owned(),
        JournalFault::VersionChange => t(l, Msg::PhJournalVersionChange).to_owned(),
        JournalFault::Corrupt { detail } => f(Msg::PhJournalCorrupt, &[detail]),
        JournalFault::Invalid { detail } => f(Msg::PhJournalInvalid, &[detail]),
        JournalFault::Closed => t(l, Msg::PhJournalClosed).to_owned(),
        JournalFault::NotRecovered { position } => {
            f(Msg::PhJournalNotRecovered, &[&num(l, *position)])
        }
        JournalFault::Removed => t(l, Msg::PhJournalRemoved).to_owned(),
        JournalFault::ConnectionLost => t(l, Msg::PhJournalConnectionLost).to_owned(),
        JournalFault::WriterUnreadable => t(l, Msg::PhJournalWriterUnreadable).to_owned(),
    }
}

/// Why a provider request failed, in `l`; the outside words it carries
/// stay as they were said.
fn failure_reason(l: Locale, r: &FailureReason) -> String {
    use FailureReason as R;
    let f = |msg: Msg, args: &[&str]| tf_in(l, msg, args);
    let n = |v: u64| num(l, v);
    let s = |msg: Msg| owned(l, msg);
    match r {
        R::Stopped => s(Msg::FrStopped),
        R::StoppedWaitingToRetry => s(Msg::FrStoppedWaitingToRetry),
        R::StoppedBeforeSent => s(Msg::FrStoppedBeforeSent),
        R::StoppedWhileLoading => s(Msg::FrStoppedWhileLoading),
        R::NoProvider => s(Msg::FrNoProvider),
        R::NoResponseWithin { seconds } => f(Msg::FrNoResponseWithin, &[&n(*seconds)]),
        R::NoByteFor { seconds } => f(Msg::FrNoByteFor, &[&n(*seconds)]),
        R::LoadStalled {
            seconds,
            read,
            total,
        } => f(Msg::FrLoadStalled, &[&n(*seconds), &n(*read), &n(*total)]),
        R::RequestFailed => s(Msg::FrRequestFailed),
        R::ReplyStopped => s(Msg::FrReplyStopped),
        R::NotGguf { detail } => f(Msg::FrNotGguf, &[detail]),
        R::UnsupportedArchitecture { detail } => f(Msg::FrUnsupportedArchitecture, &[detail]),
        R::ContextTooLong { detail } => f(Msg::FrContextTooLong, &[detail]),
        R::OutOfMemory { detail } => f(Msg::FrOutOfMemory, &[detail]),
        R::LocalFailed { name } => f(Msg::FrLocalFailed, &[name]),
        R::InvalidUtf8 => s(Msg::FrInvalidUtf8),
        R::NoBody => s(Msg::FrNoBody),
        R::Unfinished => s(Msg::FrUnfinished),
        R::Malformed { detail } => f(Msg::FrMalformed, &[detail]),
        R::TooLarge { what } => f(Msg::FrTooLarge, &[what]),
        R::BuiltIn => s(Msg::FrBuiltIn),
        R::LocalSettingsUnreadable => s(Msg::FrLocalSettingsUnreadable),
        R::NoAbortController => s(Msg::FrNoAbortController),
        R::NoHeaders => s(Msg::FrNoHeaders),
        R::HeaderRefused { name } => f(Msg::FrHeaderRefused, &[name]),
        R::InvalidBaseUrl { url } => f(Msg::FrInvalidBaseUrl, &[url]),
        R::NoModel => s(Msg::FrNoModel),
        R::ZeroMaxTokens => s(Msg::FrZeroMaxTokens),
        R::KeyUnsendable => s(Msg::FrKeyUnsendable),
        R::WorkerEnded => s(Msg::FrWorkerEnded),
    }
}

/// Why the profile form's settings were refused, in `l`; the bounds are
/// the core's.
fn invalid_profile(l: Locale, e: &InvalidProfile) -> String {
    use profile_limits as L;
    use InvalidProfile as I;
    let f = |msg: Msg, args: &[&str]| tf_in(l, msg, args);
    let n = |v: u64| num(l, v);
    let s = |msg: Msg| owned(l, msg);
    match e {
        I::OtherOwner { owner } => f(Msg::PfOtherOwner, &[owner]),
        I::Name => f(Msg::PfName, &[&n(L::MAX_NAME_BYTES as u64)]),
        I::BaseUrl => s(Msg::PfBaseUrl),
        I::ModelName => s(Msg::PfModelName),
        I::LocalName => s(Msg::PfLocalName),
        I::LocalSettingsTooLong => s(Msg::PfLocalSettingsTooLong),
        I::LocalSettingsUnreadable => s(Msg::PfLocalSettingsUnreadable),
        I::LocalFileFacts => s(Msg::PfLocalFileFacts),
        I::LocalModelNameTooLong => s(Msg::PfLocalModelNameTooLong),
        I::LocalStoredName => s(Msg::PfLocalStoredName),
        I::LocalFileEmpty => s(Msg::PfLocalFileEmpty),
        I::TemperatureText => s(Msg::PfTemperatureText),
        I::TopPText => s(Msg::PfTopPText),
        I::MaxTokensText => s(Msg::PfMaxTokensText),
        I::ContextText => s(Msg::PfContextText),
        I::Temperature => s(Msg::PfTemperature),
        I::TopP => s(Msg::PfTopP),
        I::Context { most } => f(
            Msg::PfContext,
            &[&n(u64::from(L::MIN_LOCAL_CONTEXT)), &n(*most)],
        ),
        I::MaxTokens => s(Msg::PfMaxTokens),
        I::Attempts => f(Msg::PfAttempts, &[&n(u64::from(L::MAX_ATTEMPTS))]),
        I::RetryPeriod => f(Msg::PfRetryPeriod, &[&n(L::MAX_RETRY_SECONDS)]),
        I::Timeouts => f(Msg::PfTimeouts, &[&n(L::MAX_TIMEOUT_SECONDS)]),
        I::TooManyEnv => f(Msg::PfTooManyEnv, &[&n(L::MAX_ENV_VARS as u64)]),
        I::EnvName { name } => f(Msg::PfEnvName, &[name]),
        I::EnvReserved { name } => f(Msg::PfEnvReserved, &[name]),
        I::EnvTwice { name } => f(Msg::PfEnvTwice, &[name]),
        I::EnvValueTooLong { name } => f(Msg::PfEnvValueTooLong, &[name]),
    }
}

fn plan_error(l: Locale, e: &PlanError) -> String {
    let size = |n: usize| bytes(l, n as u64);
    match e {
        PlanError::Empty => t(l, Msg::PhMessageEmpty).to_owned(),
        PlanError::TooManyCommands { count } => tf_in(
            l,
            Msg::PhPlanTooManyCommands,
            &[
                &num(l, *count as u64),
                &num(l, limits::MAX_PLAN_COMMANDS as u64),
            ],
        ),
        PlanError::CommandTooLong { line } => tf_in(
            l,
            Msg::PhPlanCommandTooLong,
            &[&num(l, *line as u64), &size(limits::MAX_COMMAND_LINE_BYTES)],
        ),
        PlanError::PromptTooLong { bytes: b } => tf_in(
            l,
            Msg::PhMessageTooLong,
            &[&size(*b), &size(limits::MAX_PROMPT_BYTES)],
        ),
    }
}
