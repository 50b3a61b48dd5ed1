//! The shared recovery view model: correlation by stamp and attempt, stale
//! callbacks, one busy state, reveal-once keys, actions with reasons.

use super::*;
use crate::id::{CredentialId, Generation, Millis, ProfileId, RuntimeId, WorkspaceId};
use crate::journal::{JournalEntry, JournalRecord, TurnStatus};
use crate::profile::{AgentBudget, Capabilities, Profile, ProfileLookup, Provider, Secret, OWNER};
use crate::projection::{Projection, RetentionPolicy};
use crate::schema::V1;
use crate::session::{Environment, Handled, SessionEffect, Sessions};
use crate::session_record::{Purpose, ResumeCause};

const T0: Millis = Millis(5_000_000);

fn sid() -> SessionId {
    SessionId::from_u128(0x51).unwrap()
}
fn ws() -> WorkspaceId {
    WorkspaceId::from_u128(0x77).unwrap()
}
fn pid() -> ProfileId {
    ProfileId::from_u128(0x99).unwrap()
}
fn profile() -> Profile {
    Profile {
        id: pid(),
        revision: 1,
        owner: OWNER.into(),
        name: "p".into(),
        provider: Provider::BuiltIn,
        api_key: Some(CredentialId::from_u128(0xc1).unwrap()),
        env: vec![],
        capabilities: Capabilities::default(),
        budget: AgentBudget::default(),
    }
}

/// A journal the tests append session records to, and the projection that
/// folds it (what the controller would hold).
struct Fixture {
    sessions: Sessions,
    projection: Projection,
    position: u64,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture::in_environment(Environment::Worker)
    }

    fn in_environment(environment: Environment) -> Fixture {
        let mut f = Fixture {
            sessions: Sessions::new(b"recovery tests"),
            projection: Projection::new(RetentionPolicy::default()),
            position: 0,
        };
        f.append(JournalRecord::SessionOpened {
            session: sid(),
            workspace: ws(),
            title: "t".into(),
        });
        f.sessions.create(sid(), ws(), environment, pid());
        f.flush();
        f
    }

    fn append(&mut self, record: JournalRecord) {
        self.position += 1;
        let entry = JournalEntry {
            v: V1,
            position: self.position,
            at: T0,
            record,
        };
        self.projection.apply(&entry).expect("applies");
    }

    /// Carries the session layer's records into the journal; returns the
    /// other effects.
    fn flush(&mut self) -> Vec<SessionEffect> {
        let mut rest = Vec::new();
        for e in self.sessions.drain_effects() {
            match e {
                SessionEffect::Record(record) => self.append(JournalRecord::Session { record }),
                other => rest.push(other),
            }
        }
        rest
    }

    fn card(&self, facts: &Facts) -> Option<Card> {
        card(
            &self.projection,
            sid(),
            self.sessions.trace(sid()).as_ref(),
            facts,
            false,
        )
    }

    /// Launches through every barrier to Running.
    fn launch(&mut self, n: u128) {
        let a = self
            .sessions
            .begin(sid(), Purpose::Launch, None, None, T0)
            .unwrap();
        self.through(a, n, false);
    }

    /// A resume the person asked for, begun.
    fn resume_asked(&mut self) -> StartupAttemptIdAlias {
        self.sessions
            .begin(sid(), Purpose::Resume, Some(ResumeCause::User), None, T0)
            .unwrap()
    }

    /// The attempt's profile found and its key resolved: next, the runtime.
    fn to_the_start(&mut self, a: StartupAttemptIdAlias) {
        self.flush();
        self.sessions
            .handle_profile(a, ProfileLookup::Found(profile()), T0);
        self.flush();
        let key = CredentialId::from_u128(0xc1).unwrap();
        self.sessions
            .handle_credentials(a, vec![(key, Ok(Secret::new("k".into())))], T0);
        self.flush();
    }

    fn through(&mut self, a: StartupAttemptIdAlias, n: u128, resume: bool) {
        self.to_the_start(a);
        if resume {
            self.sessions.handle_loaded(a, Ok(()), T0);
        } else {
            self.sessions.handle_launched(
                a,
                ExecutionId::from_u128(0xe0 + n).unwrap(),
                Generation(n as u64),
                RuntimeId::from_u128(0xf0 + n).unwrap(),
                T0,
            );
            self.sessions.handle_ready(a);
        }
        self.flush();
        self.sessions.handle_recorded(a, T0);
        self.flush();
    }

    fn fail_turn(&mut self, n: u128) {
        let t = self.sessions.trace(sid()).unwrap();
        let turn = TurnId::from_u128(0x700 + n).unwrap();
        let (e, g) = t.token.unwrap();
        self.sessions.handle_turn_finished(
            sid(),
            turn,
            e,
            g,
            Some("the provider refused the key".into()),
            T0,
        );
        self.flush();
    }
}

type StartupAttemptIdAlias = crate::id::StartupAttemptId;

fn facts() -> Facts {
    Facts {
        workspace_exists: Some(true),
        workspace_files: Some(2),
        credentials: Some((1, 1)),
        runtime_attached: false,
        attached: true,
        storage: Some((false, 1000, 10_000)),
        owned_requests: Vec::new(),
        quarantined: 0,
        folder_access: None,
        no_room_to_start: false,
        no_room_for_another: false,
    }
}

fn unavailable(card: &Card, action: Action) -> Option<Phrase> {
    card.actions
        .iter()
        .find(|a| a.action == action)
        .and_then(|a| a.unavailable.clone())
}

#[test]
fn a_running_session_with_nothing_uncertain_has_no_card() {
    let mut f = Fixture::new();
    f.launch(1);
    let mut running = facts();
    running.runtime_attached = true;
    assert_eq!(f.card(&running), None);
}

#[test]
fn the_active_record_is_the_failure_the_state_names_and_others_stay_distinct() {
    let mut f = Fixture::new();
    f.launch(1);
    f.fail_turn(1);
    let first = f.card(&facts()).expect("a card");
    // Resume, then the same failure text again: a distinct record.
    let a = f.resume_asked();
    f.through(a, 1, true);
    f.fail_turn(2);
    let second = f.card(&facts()).expect("a card");
    assert_ne!(
        first.key.stamp, second.key.stamp,
        "correlated by stamp, not text"
    );
    assert_eq!(first.cause, second.cause, "same text");
    assert_eq!(
        second.history.len(),
        1,
        "the earlier failure stays visible, not merged"
    );
    assert!(second.details.iter().any(|d| *d
        == Phrase::ErrorStampIs {
            stamp: second.key.stamp.unwrap()
        }));
    assert!(second.details.iter().any(|d| d
        .to_string()
        .contains(&second.key.stamp.unwrap().to_string())));
}

#[test]
fn a_late_success_of_an_old_attempt_cannot_clear_a_newer_failure() {
    let mut f = Fixture::new();
    f.launch(1);
    f.fail_turn(1);
    let old = f.resume_asked();
    f.flush();
    // The user stops it and resumes again; that attempt fails on its profile.
    f.sessions.cancel(sid(), T0);
    f.flush();
    let newer = f.resume_asked();
    f.flush();
    f.sessions.handle_profile(
        newer,
        ProfileLookup::Failed {
            fault: crate::store_fault::StoreFault::Corrupt {
                detail: "unreadable".into(),
            },
        },
        T0,
    );
    f.flush();
    let before = f.card(&facts()).expect("a card");
    // The old attempt's answers arrive late: nothing changes.
    assert_eq!(
        f.sessions
            .handle_profile(old, ProfileLookup::Found(profile()), T0),
        Handled::Stale
    );
    assert_eq!(f.sessions.handle_loaded(old, Ok(()), T0), Handled::Stale);
    assert_eq!(f.sessions.handle_recorded(old, T0), Handled::Stale);
    f.flush();
    let after = f.card(&facts()).expect("still a card");
    assert_eq!(before.key, after.key);
    assert_eq!(after.summary, Phrase::SummaryProfile);
    assert_eq!(
        after.summary.to_string(),
        "The session's profile cannot be used."
    );
    // Its own success clears it.
    let fix = f.resume_asked();
    f.through(fix, 1, true);
    let mut running = facts();
    running.runtime_attached = true;
    assert_eq!(f.card(&running), None);
}

#[test]
fn a_launch_alone_brings_no_card() {
    let mut f = Fixture::new();
    f.sessions
        .begin(sid(), Purpose::Launch, None, None, T0)
        .unwrap();
    f.flush();
    assert_eq!(f.card(&facts()), None, "a first start is no recovery");
    let mut f = Fixture::new();
    f.launch(1);
    // A chosen profile's new execution, on a session that ran.
    f.sessions
        .begin(sid(), Purpose::Launch, None, None, T0)
        .unwrap();
    f.flush();
    assert!(matches!(
        f.sessions.trace(sid()).map(|t| t.state),
        Some(SessionState::Starting { .. })
    ));
    assert_eq!(f.card(&facts()), None, "a relaunch is no recovery");
}

#[test]
fn automatic_and_manual_recovery_share_one_busy_state() {
    for cause in [ResumeCause::Automatic, ResumeCause::User] {
        let mut f = Fixture::new();
        f.launch(1);
        f.fail_turn(1);
        f.sessions
            .begin(sid(), Purpose::Resume, Some(cause), None, T0)
            .unwrap();
        f.flush();
        let c = f.card(&facts()).expect("a card while busy");
        assert_eq!(c.busy, Some(Phrase::BusyStarting));
        assert_eq!(
            c.busy.as_ref().map(Phrase::to_string).as_deref(),
            Some("Recovering: starting the session…")
        );
        for a in &c.actions {
            assert_eq!(
                a.unavailable,
                Some(Phrase::WaitOrStop { starting: true }),
                "{a:?}"
            );
            assert!(
                a.unavailable
                    .as_ref()
                    .is_some_and(|r| r.to_string().contains("press Stop")),
                "{a:?}"
            );
        }
    }
}

#[test]
fn the_reveal_key_is_stable_per_session_and_stamp() {
    let mut f = Fixture::new();
    f.launch(1);
    f.fail_turn(1);
    let a = f.card(&facts()).unwrap();
    let again = f.card(&facts()).unwrap();
    assert_eq!(
        a.key, again.key,
        "a repeated render keeps its key: no second reveal"
    );
    let r = f.resume_asked();
    f.through(r, 1, true);
    f.fail_turn(2);
    assert_ne!(
        f.card(&facts()).unwrap().key,
        a.key,
        "a new failure is revealed"
    );
}

#[test]
fn no_start_is_offered_while_the_sessions_that_may_run_at_once_all_work() {
    let mut f = Fixture::new();
    f.launch(1);
    f.fail_turn(1);
    let full = Facts {
        no_room_to_start: true,
        no_room_for_another: true,
        ..facts()
    };
    let c = f.card(&full).unwrap();
    assert_eq!(unavailable(&c, Action::Resume), Some(Phrase::RunningLimit));
    assert_eq!(
        unavailable(&c, Action::StartFresh),
        Some(Phrase::RunningLimit)
    );
    assert_eq!(unavailable(&c, Action::InspectWorkspace), None);
    assert_eq!(unavailable(&c, Action::Archive), None);
    // Resuming this one takes no room from another: only Start fresh,
    // which runs a second session beside it, is refused.
    let beside = Facts {
        no_room_for_another: true,
        ..facts()
    };
    let c = f.card(&beside).unwrap();
    assert_eq!(unavailable(&c, Action::Resume), None);
    assert_eq!(
        unavailable(&c, Action::StartFresh),
        Some(Phrase::RunningLimit)
    );
}

#[test]
fn actions_are_offered_only_when_possible_with_the_reason_otherwise() {
    let mut f = Fixture::new();
    f.launch(1);
    f.fail_turn(1);
    let c = f.card(&facts()).unwrap();
    assert_eq!(unavailable(&c, Action::Resume), None);
    assert_eq!(unavailable(&c, Action::StartFresh), None);
    assert_eq!(unavailable(&c, Action::InspectWorkspace), None);
    assert_eq!(unavailable(&c, Action::Archive), None);
    assert_eq!(
        unavailable(&c, Action::ContinueFromHistory),
        Some(Phrase::NoHistory)
    );
    // The workspace folder is gone: no Resume, no Inspect, Start fresh stays.
    let mut gone = facts();
    gone.workspace_exists = Some(false);
    let c = f.card(&gone).unwrap();
    assert_eq!(
        unavailable(&c, Action::Resume),
        Some(Phrase::WorkspaceGoneStartFresh)
    );
    assert!(unavailable(&c, Action::Resume).is_some_and(|r| r.to_string().contains("Start fresh")));
    assert!(unavailable(&c, Action::InspectWorkspace).is_some());
    let row = c
        .report
        .rows
        .iter()
        .find(|r| r.dimension == Dimension::Workspace)
        .unwrap();
    assert_eq!(row.verdict, Verdict::Missing);
    // A missing key shows as such.
    let mut nokey = facts();
    nokey.credentials = Some((0, 1));
    let c = f.card(&nokey).unwrap();
    let row = c
        .report
        .rows
        .iter()
        .find(|r| r.dimension == Dimension::Credentials)
        .unwrap();
    assert_eq!(row.verdict, Verdict::Missing);
}

#[test]
fn an_older_journal_without_lifecycle_records_gets_a_safe_generic_summary() {
    let mut projection = Projection::new(RetentionPolicy::default());
    let turn = TurnId::from_u128(0x700).unwrap();
    for (position, record) in [
        JournalRecord::SessionOpened {
            session: sid(),
            workspace: ws(),
            title: "t".into(),
        },
        JournalRecord::TurnRecorded {
            session: sid(),
            turn,
            prompt: "$ sleep 30".into(),
            plan: vec!["sleep 30".into()],
            agent: Default::default(),
        },
        JournalRecord::TurnFinished {
            turn,
            status: TurnStatus::Interrupted,
            reply: "interrupted".into(),
            ending: None,
        },
    ]
    .into_iter()
    .enumerate()
    {
        projection
            .apply(&JournalEntry {
                v: V1,
                position: position as u64 + 1,
                at: T0,
                record,
            })
            .unwrap();
    }
    let c = card(&projection, sid(), None, &facts(), false).expect("a card");
    assert_eq!(c.summary, Phrase::SummaryInterruptedEarlier);
    assert_eq!(
        c.summary.to_string(),
        "Something stopped this session earlier; details are in its history."
    );
    assert_eq!(c.key.stamp, None);
}

#[test]
fn the_continuation_prompt_separates_original_history_summary_and_uncertain_actions() {
    let mut f = Fixture::new();
    let turn = TurnId::from_u128(0x700).unwrap();
    f.append(JournalRecord::TurnRecorded {
        session: sid(),
        turn,
        prompt: "$ echo hi > a.txt".into(),
        plan: vec!["echo hi > a.txt".into()],
        agent: Default::default(),
    });
    f.append(JournalRecord::TurnFinished {
        turn,
        status: TurnStatus::Completed,
        reply: "Ran 1 command".into(),
        ending: None,
    });
    let report = inspect(&f.projection, sid(), None, &facts());
    let p = continuation_prompt(&f.projection, sid(), &report);
    let original = p.find("## Original recorded history").unwrap();
    let summary = p.find("## Summary (reconstructed, not original)").unwrap();
    let uncertain = p.find("## Uncertain actions").unwrap();
    assert!(original < summary && summary < uncertain);
    assert!(p.contains("> user: $ echo hi > a.txt"));
    assert!(p.contains("> agent (completed): Ran 1 command"));
}

/// Found by the engine simulation: a multi-line prompt's later `$ ` lines
/// stood unquoted in the continuation, so the built-in agent planned them
/// again and Continue from history replayed commands that had run.
#[test]
fn continuing_from_history_replays_no_recorded_command() {
    let mut f = Fixture::new();
    let turn = TurnId::from_u128(0x701).unwrap();
    f.append(JournalRecord::TurnRecorded {
        session: sid(),
        turn,
        prompt: "$ echo one >> log\n$ echo two >> log".into(),
        plan: vec!["echo one >> log".into(), "echo two >> log".into()],
        agent: Default::default(),
    });
    f.append(JournalRecord::TurnFinished {
        turn,
        status: TurnStatus::Completed,
        reply: "Ran 2 commands:\n$ echo one >> log\n$ echo two >> log".into(),
        ending: None,
    });
    let report = inspect(&f.projection, sid(), None, &facts());
    let p = continuation_prompt(&f.projection, sid(), &report);
    let plan = crate::agent::plan(&p).expect("a plan");
    assert!(plan.conversational, "planned again: {:?}", plan.commands);
    assert!(p.contains("> $ echo two >> log"));
}

fn local_folder() -> Environment {
    Environment::LocalFolder {
        folder: crate::id::FolderId::from_u128(0xf01d).unwrap(),
        name: "project".into(),
    }
}

/// What the shell reports for a folder it could not look into: the folder
/// is not checked (no prompting), only its access is observed.
fn folder_facts(access: crate::environment::FolderAccess) -> Facts {
    Facts {
        workspace_exists: None,
        workspace_files: None,
        folder_access: Some(access),
        ..facts()
    }
}

#[test]
fn a_local_folder_that_needs_permission_keeps_resume_and_inspection_on_offer() {
    use crate::environment::{FolderAccess, Reopen, Teardown};
    let mut f = Fixture::in_environment(local_folder());
    f.launch(1);
    f.fail_turn(1);
    let card = f
        .card(&folder_facts(FolderAccess::NeedsPermission))
        .expect("a card");
    let env = card.report.environment.clone().expect("recorded");
    assert_eq!(
        env.folder.as_ref().map(|f| f.name.as_str()),
        Some("project"),
        "the folder's name, for people"
    );
    assert_eq!(env.teardown, Teardown::NeverRemoved);
    assert_eq!(env.reopen, Reopen::AfterPermission);
    assert!(env.needs_permission());
    // The page asks on the click; the core blocks neither. (This fixture
    // records no turns, so Continue from history has its own reason.)
    for action in [Action::Resume, Action::InspectWorkspace] {
        assert_eq!(unavailable(&card, action), None, "{action:?}");
    }
}

#[test]
fn a_local_folder_the_browser_forgot_blocks_what_would_open_it() {
    use crate::environment::{FolderAccess, Reopen};
    let mut f = Fixture::in_environment(local_folder());
    f.launch(1);
    f.fail_turn(1);
    let card = f.card(&folder_facts(FolderAccess::Gone)).expect("a card");
    assert_eq!(
        card.report.environment.as_ref().map(|e| e.reopen),
        Some(Reopen::Impossible)
    );
    for action in [Action::Resume, Action::InspectWorkspace, Action::StartFresh] {
        let why = unavailable(&card, action);
        assert_eq!(
            why,
            Some(crate::phrase::Phrase::FolderGone {
                name: "project".into()
            }),
            "{action:?}"
        );
    }
    assert_eq!(unavailable(&card, Action::Archive), None);
}

#[test]
fn the_worker_sandbox_reports_lifeline_owned_teardown() {
    use crate::environment::{Reopen, Teardown};
    let mut f = Fixture::new();
    f.launch(1);
    f.fail_turn(1);
    let card = f.card(&facts()).expect("a card");
    let env = card.report.environment.expect("recorded");
    assert_eq!(env.folder, None, "the worker sandbox");
    assert_eq!(env.teardown, Teardown::RemovedOnDelete);
    assert_eq!(env.reopen, Reopen::Ready);
    assert_eq!(env.access, None);
}

#[test]
fn output_changes_the_card_only_through_eviction() {
    use crate::command::{Binding, Budget, CommandRecord};
    use crate::event::{retain_output, EventRecord, RetainedBody};
    use crate::id::{AttemptId, CommandId, Digest, EventSeq, LeaseId};
    use crate::journal::AckSource;
    use crate::outcome::OutcomeEvent;

    let mut f = Fixture::new();
    f.launch(1);
    f.fail_turn(1);
    let (execution, generation) = f.sessions.trace(sid()).unwrap().token.unwrap();
    let lease = LeaseId::from_u128(0x4e).unwrap();
    let runtime = RuntimeId::from_u128(0xf1).unwrap();
    let command = CommandId::from_u128(0xc0).unwrap();
    let attempt = AttemptId::from_u128(0xa0).unwrap();
    let records = vec![
        JournalRecord::LeaseGranted {
            workspace: ws(),
            lease,
        },
        JournalRecord::RuntimeAssigned {
            lease,
            runtime,
            generation,
            execution,
        },
        JournalRecord::CommandAdmitted(CommandRecord {
            v: V1,
            command,
            key: "01JF8Z6BZJ3H5K7M9P1R3T5V7X".parse().unwrap(),
            binding: Binding {
                workspace: ws(),
                lease,
                generation,
                runtime,
                session: sid(),
                working_directory: "/".into(),
                capabilities: Default::default(),
                budget: Budget {
                    deadline: Millis(1 << 40),
                    max_output_bytes: 1 << 30,
                },
                command_line: "seq 1 9999".into(),
            },
            admitted_at: T0,
            reissue_of: None,
        }),
        JournalRecord::DispatchExposed {
            command,
            attempt,
            runtime,
            generation,
        },
        JournalRecord::Acknowledged {
            command,
            attempt,
            via: AckSource::Ack,
        },
        JournalRecord::OutcomeChanged {
            command,
            event: OutcomeEvent::Acknowledged,
            from: Outcome::Admitted,
            to: Outcome::Dispatched,
        },
    ];
    for r in records {
        assert!(affects_card(&r), "{r:?} can change the card");
        f.append(r);
    }
    let before = f.card(&facts()).expect("a failed session has a card");
    let retained = RetentionPolicy::default().retained_events as u64;
    for seq in 1..=retained + 1 {
        let (chunk, blob) = retain_output(&crate::event::HashedText::new("1\n"), 0, 64, 1 << 20);
        if let Some(blob) = blob {
            let stored = JournalRecord::ArtifactStored {
                digest: blob.digest(),
                len: blob.data().len() as u64,
            };
            assert!(!affects_card(&stored));
            f.append(stored);
        }
        let event = JournalRecord::Event(EventRecord {
            v: V1,
            command,
            seq: EventSeq(seq),
            digest: Digest::of(b"1\n"),
            body: RetainedBody::Stdout(chunk),
        });
        assert!(!affects_card(&event));
        f.append(event);
        if seq == retained {
            // Every event is still kept: the card the shell already sent is
            // the card it would build now.
            assert_eq!(evicted_commands(&f.projection, sid()), 0);
            assert_eq!(f.card(&facts()).as_ref(), Some(&before));
        }
    }
    // One more event evicted the oldest: the count moved, and so did the card.
    assert_eq!(evicted_commands(&f.projection, sid()), 1);
    assert_ne!(f.card(&facts()).as_ref(), Some(&before));
}

#[test]
fn a_following_tab_shows_the_same_card_with_every_action_unavailable() {
    let mut f = Fixture::new();
    f.launch(1);
    let lease = crate::id::LeaseId::from_u128(0x4e).unwrap();
    f.append(JournalRecord::LeaseGranted {
        workspace: ws(),
        lease,
    });
    f.append(JournalRecord::RuntimeAssigned {
        lease,
        runtime: RuntimeId::from_u128(0xf1).unwrap(),
        generation: Generation(1),
        execution: ExecutionId::from_u128(0xe1).unwrap(),
    });
    // Running in the leading tab: no card there, none here.
    assert_eq!(follower_card(&f.projection, sid(), &facts()), None);
    f.fail_turn(1);
    let mut leader_facts = facts();
    leader_facts.runtime_attached = true;
    let leading = f.card(&leader_facts).expect("a failed session has a card");
    let following = follower_card(&f.projection, sid(), &facts()).expect("and so has a follower");
    assert_eq!(following.key, leading.key);
    assert_eq!(following.summary, leading.summary);
    assert_eq!(following.cause, leading.cause);
    assert_eq!(following.report, leading.report);
    assert!(leading.actions.iter().any(|a| a.unavailable.is_none()));
    assert_eq!(following.actions.len(), leading.actions.len());
    for a in &following.actions {
        assert_eq!(a.unavailable.as_ref(), Some(&FOLLOWING), "{:?}", a.action);
    }
}

/// Appends a command of the session's current execution that is uncertain
/// (`may_have_started`): exposed to its runtime, no acknowledgement.
fn uncertain_command(f: &mut Fixture, n: u128) -> crate::id::CommandId {
    use crate::command::{Binding, Budget, CommandRecord};
    use crate::id::{AttemptId, CommandId, LeaseId};
    use crate::outcome::OutcomeEvent;
    let (execution, generation) = f.sessions.trace(sid()).unwrap().token.unwrap();
    let lease = LeaseId::from_u128(0x4e).unwrap();
    let runtime = RuntimeId::from_u128(0xf0 + generation.0 as u128).unwrap();
    let command = CommandId::from_u128(0xc00 + n).unwrap();
    if !f.projection.workspaces.contains_key(&ws()) {
        f.append(JournalRecord::LeaseGranted {
            workspace: ws(),
            lease,
        });
    }
    if f.projection.runtime(runtime).is_none() {
        f.append(JournalRecord::RuntimeAssigned {
            lease,
            runtime,
            generation,
            execution,
        });
    }
    f.append(JournalRecord::CommandAdmitted(CommandRecord {
        v: V1,
        command,
        key: crate::id::IdempotencyKey::from_u128(0xcc00 + n).unwrap(),
        binding: Binding {
            workspace: ws(),
            lease,
            generation,
            runtime,
            session: sid(),
            working_directory: "/".into(),
            capabilities: Default::default(),
            budget: Budget {
                deadline: Millis(1 << 40),
                max_output_bytes: 1 << 20,
            },
            command_line: format!("echo {n} >> log"),
        },
        admitted_at: T0,
        reissue_of: None,
    }));
    f.append(JournalRecord::DispatchExposed {
        command,
        attempt: AttemptId::from_u128(0xa00 + n).unwrap(),
        runtime,
        generation,
    });
    f.append(JournalRecord::OutcomeChanged {
        command,
        event: OutcomeEvent::ExposureUncertain,
        from: Outcome::Admitted,
        to: Outcome::MayHaveStarted,
    });
    command
}

#[test]
fn after_a_crash_the_workspace_can_be_inspected_and_the_command_reissued_while_idle() {
    let mut f = Fixture::new();
    f.launch(1);
    uncertain_command(&mut f, 1);
    // A new runtime is up (the session resumed by itself) and no turn runs:
    // the user can look at the files before deciding what to repeat.
    let mut running = facts();
    running.runtime_attached = true;
    let c = f
        .card(&running)
        .expect("an uncertain command shows the card");
    assert_eq!(unavailable(&c, Action::InspectWorkspace), None);
    assert_eq!(c.reissue, None, "re-issue runs in the live runtime");
    assert_eq!(c.report.uncertain_commands.len(), 1);
}

#[test]
fn while_a_turn_runs_neither_inspection_nor_reissue_is_offered() {
    let mut f = Fixture::new();
    f.launch(1);
    uncertain_command(&mut f, 1);
    let turn = TurnId::from_u128(0x777).unwrap();
    f.sessions.submit_prompt(sid(), turn, T0).unwrap();
    f.flush();
    assert_eq!(f.sessions.trace(sid()).unwrap().active_turn, Some(turn));
    let c = f.card(&facts()).unwrap();
    assert_eq!(
        unavailable(&c, Action::InspectWorkspace),
        Some(Phrase::AgentRunningLive)
    );
    assert_eq!(c.reissue, Some(Phrase::ReissueAgentWorking));
}

#[test]
fn a_stopped_session_names_resume_before_a_reissue() {
    let mut f = Fixture::new();
    f.launch(1);
    uncertain_command(&mut f, 1);
    f.fail_turn(1);
    let c = f.card(&facts()).unwrap();
    assert_eq!(unavailable(&c, Action::Resume), None);
    assert_eq!(c.reissue, Some(Phrase::ReissueNeedsRunning));
    // With the workspace gone Resume is impossible, and re-issue says why.
    let mut gone = facts();
    gone.workspace_exists = Some(false);
    let c = f.card(&gone).unwrap();
    assert_eq!(c.reissue, Some(Phrase::WorkspaceGoneStartFresh));
}

#[test]
fn an_archived_session_offers_unarchive_and_start_fresh_and_nothing_it_would_refuse() {
    let mut f = Fixture::new();
    f.launch(1);
    uncertain_command(&mut f, 1);
    f.sessions.archive(sid()).unwrap();
    f.flush();
    let c = f.card(&facts()).expect("an archived session has a card");
    assert_eq!(c.summary, Phrase::SummaryArchived);
    let offered: Vec<Action> = c
        .actions
        .iter()
        .filter(|a| a.unavailable.is_none())
        .map(|a| a.action)
        .collect();
    assert_eq!(offered, vec![Action::StartFresh, Action::Unarchive]);
    assert!(c.actions.iter().all(|a| a.action != Action::Archive));
    assert_eq!(c.reissue, Some(Phrase::SessionArchived));
    // Every offered action is accepted by the session layer.
    let mut sessions = Sessions::recover(b"x", f.projection.lifecycles[&sid()].iter());
    assert_eq!(sessions.unarchive(sid()), Ok(()));
    f.sessions.unarchive(sid()).unwrap();
    f.flush();
    let c = f.card(&facts()).expect("still stopped, still uncertain");
    assert!(c.actions.iter().all(|a| a.action != Action::Unarchive));
    assert_eq!(unavailable(&c, Action::Archive), None);
    assert_eq!(unavailable(&c, Action::Resume), None);
    assert_eq!(c.reissue, Some(Phrase::ReissueNeedsRunning));
}

/// A first launch whose runtime never started recovered nothing, so its
/// card does not call it a failed recovery; a resume whose execution
/// cannot be rejoined still does.
#[test]
fn a_runtime_that_did_not_start_is_said_as_such_not_as_a_failed_recovery() {
    use crate::session_record::{LaunchFailure, LoadError};
    let mut f = Fixture::new();
    let a = f
        .sessions
        .begin(sid(), Purpose::Launch, None, None, T0)
        .unwrap();
    f.to_the_start(a);
    let failure = LaunchFailure::Failed {
        detail: "Uncaught TypeError: Failed to fetch".into(),
    };
    assert_eq!(
        f.sessions.handle_launch_failed(a, failure, T0),
        Handled::Applied
    );
    f.flush();
    let c = f.card(&facts()).expect("a card");
    assert_eq!(c.summary, Phrase::SummaryLaunchFailed);
    assert_eq!(
        c.summary.to_string(),
        "The session's runtime did not start."
    );

    let mut f = Fixture::new();
    f.launch(1);
    f.fail_turn(1);
    let a = f.resume_asked();
    f.to_the_start(a);
    assert_eq!(
        f.sessions.handle_loaded(a, Err(LoadError::Timeout), T0),
        Handled::Applied
    );
    f.flush();
    let c = f.card(&facts()).expect("a card");
    assert_eq!(c.summary, Phrase::SummaryRecoveryFailed);
}
