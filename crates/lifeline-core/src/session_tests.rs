//! Barrier-controlled tests of sessions, executions and attempts.
//!
//! Nothing here sleeps or races: every blocking step of an attempt is an
//! effect the test holds, and the test decides exactly when (and whether)
//! its answer arrives — the "barrier". Each scenario traces what reference
//! 004 asks for: accepted prompts, the stored token, the active turn, the
//! final state and which attempt owns the session.
//!
//! Names: `ac<N>_…` is reference 003's criterion N; `r007_…` a rule of
//! reference 004, requirement 007.

use super::*;
use crate::profile::{EnvValue, EnvVar, Profile, Provider, OWNER};

const T0: Millis = Millis(1_000_000);

fn sid(n: u128) -> SessionId {
    SessionId::from_u128(n).unwrap()
}
fn turn(n: u128) -> TurnId {
    TurnId::from_u128(1000 + n).unwrap()
}
fn exec(n: u128) -> ExecutionId {
    ExecutionId::from_u128(2000 + n).unwrap()
}
fn rt(n: u128) -> RuntimeId {
    RuntimeId::from_u128(3000 + n).unwrap()
}
fn cred(n: u128) -> CredentialId {
    CredentialId::from_u128(4000 + n).unwrap()
}
fn pid(n: u128) -> ProfileId {
    ProfileId::from_u128(5000 + n).unwrap()
}
const WS: u128 = 77;

fn profile(n: u128, revision: u64, env: &[(&str, EnvValue)]) -> Profile {
    Profile {
        id: pid(n),
        revision,
        owner: OWNER.into(),
        name: format!("profile {n}"),
        provider: Provider::OpenAiCompatible {
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
        },
        api_key: Some(cred(n)),
        env: env
            .iter()
            .map(|(k, v)| EnvVar {
                name: k.to_string(),
                value: v.clone(),
            })
            .collect(),
        capabilities: Capabilities::default(),
        budget: AgentBudget::default(),
    }
}

/// The test's side of the effect boundary: effects are collected, never
/// executed on their own.
struct World {
    s: Sessions,
    log: Vec<SessionEffect>,
}

impl World {
    fn new() -> World {
        let mut w = World {
            s: Sessions::new(b"session tests"),
            log: Vec::new(),
        };
        w.s.create(
            sid(1),
            WorkspaceId::from_u128(WS).unwrap(),
            Environment::Worker,
            pid(1),
        );
        w.take();
        w
    }

    fn take(&mut self) -> Vec<SessionEffect> {
        let e = self.s.drain_effects();
        self.log.extend(e.iter().cloned());
        e
    }

    fn records(&self) -> Vec<SessionRecord> {
        self.log
            .iter()
            .filter_map(|e| match e {
                SessionEffect::Record(r) => Some(r.clone()),
                _ => None,
            })
            .collect()
    }

    fn trace(&self) -> Trace {
        self.s.trace(sid(1)).unwrap()
    }

    /// Drives a launch through every barrier to Running, answering the
    /// profile lookup with `p` and every credential with a secret.
    fn launch_with(&mut self, p: &Profile, prompt: Option<TurnId>, e: u128) -> StartupAttemptId {
        let a = self
            .s
            .begin(sid(1), Purpose::Launch, None, prompt, T0)
            .unwrap();
        self.step_to_running(a, p, e);
        a
    }

    fn step_to_running(&mut self, a: StartupAttemptId, p: &Profile, e: u128) {
        assert!(self
            .take()
            .iter()
            .any(|x| matches!(x, SessionEffect::LookupProfile { attempt, .. } if *attempt == a)));
        assert_eq!(
            self.s
                .handle_profile(a, ProfileLookup::Found(p.clone()), T0),
            Handled::Applied
        );
        self.answer_credentials(a);
        assert_eq!(
            self.s
                .handle_launched(a, exec(e), Generation(e as u64), rt(e), T0),
            Handled::Applied
        );
        assert_eq!(self.s.handle_ready(a), Handled::Applied);
        assert_eq!(self.s.handle_recorded(a, T0), Handled::Applied);
        self.take();
    }

    fn answer_credentials(&mut self, a: StartupAttemptId) -> Vec<SessionEffect> {
        let effects = self.take();
        let creds = effects
            .iter()
            .find_map(|x| match x {
                SessionEffect::ResolveCredentials {
                    attempt,
                    credentials,
                } if *attempt == a => Some(credentials.clone()),
                _ => None,
            })
            .expect("credentials asked for");
        let answers = creds
            .into_iter()
            .map(|c| (c, Ok(Secret::new(format!("secret-{}", c)))))
            .collect();
        assert_eq!(self.s.handle_credentials(a, answers, T0), Handled::Applied);
        self.take()
    }

    /// A resume through the profile lookup and the launch checkpoint, up to
    /// the rejoin try; returns the effects after the checkpoint.
    fn resume_to_load(&mut self, a: StartupAttemptId, lookup: ProfileLookup) -> Vec<SessionEffect> {
        self.take();
        assert_eq!(self.s.handle_profile(a, lookup, T0), Handled::Applied);
        let effects = self.answer_credentials(a);
        assert!(
            effects.iter().any(
                |e| matches!(e, SessionEffect::LoadExecution { attempt, .. } if *attempt == a)
            ),
            "{effects:?}"
        );
        effects
    }

    /// Makes the running session's turn fail (a recoverable agent failure).
    fn fail_turn(&mut self, t: TurnId, e: u128) {
        assert_eq!(
            self.s.handle_turn_finished(
                sid(1),
                t,
                exec(e),
                Generation(e as u64),
                Some("provider error".into()),
                T0
            ),
            Handled::Applied
        );
        self.take();
    }
}

fn launch_effect(effects: &[SessionEffect]) -> Option<&SessionEffect> {
    effects
        .iter()
        .find(|e| matches!(e, SessionEffect::Launch { .. }))
}

fn is_failed(state: &SessionState) -> Option<&FailureCause> {
    match state {
        SessionState::Failed(f) => Some(&f.cause),
        _ => None,
    }
}

fn no_cleanup(effects: &[SessionEffect]) {
    for e in effects {
        assert!(
            !matches!(
                e,
                SessionEffect::TerminateRuntime { .. }
                    | SessionEffect::CancelRuntime { .. }
                    | SessionEffect::RemoveWorkspace { .. }
            ),
            "unexpected cleanup {e:?}"
        );
    }
}

// ----- reference 003 ------------------------------------------------------

#[test]
fn ac1_failed_turn_keeps_runtime_workspace_and_credential_references() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    w.launch_with(&p, Some(turn(1)), 1);
    let before = w.log.len();
    w.fail_turn(turn(1), 1);
    no_cleanup(&w.log[before..]);
    let t = w.trace();
    assert!(matches!(
        is_failed(&t.state),
        Some(FailureCause::AgentFailed { .. })
    ));
    // The token still names the retained execution: Resume can rejoin it.
    assert_eq!(t.token, Some((exec(1), Generation(1))));
    assert_eq!(t.active_turn, None);
    assert!(w.records().iter().any(
        |r| matches!(r, SessionRecord::ExecutionFailed { execution, .. } if *execution == exec(1))
    ));
}

#[test]
fn ac2_resume_rejoins_the_retained_execution_without_a_new_workspace() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    w.launch_with(&p, Some(turn(1)), 1);
    w.fail_turn(turn(1), 1);
    let a =
        w.s.begin(sid(1), Purpose::Resume, Some(ResumeCause::User), None, T0)
            .unwrap();
    let effects = w.resume_to_load(a, ProfileLookup::Found(p));
    assert!(effects.iter().any(|e| matches!(e, SessionEffect::LoadExecution { execution, runtime, .. } if *execution == exec(1) && *runtime == rt(1))));
    assert!(
        launch_effect(&effects).is_none(),
        "no new runtime while the retained one may live"
    );
    assert_eq!(w.s.handle_loaded(a, Ok(()), T0), Handled::Applied);
    assert_eq!(w.s.handle_recorded(a, T0), Handled::Applied);
    let effects = w.take();
    no_cleanup(&effects);
    assert!(effects
        .iter()
        .any(|e| matches!(e, SessionEffect::Activate { rejoined: true, .. })));
    let t = w.trace();
    assert_eq!(t.state, SessionState::Running);
    assert_eq!(t.token, Some((exec(1), Generation(1))));
    assert!(w
        .records()
        .iter()
        .any(|r| matches!(r, SessionRecord::ExecutionRejoined { attempt, .. } if *attempt == a)));
}

/// A profile chosen while a session ran and then the page reloaded: the
/// choice is durable, the pending switch was not. Folded, the records say
/// it: the execution ran with another profile than the one selected, so
/// the next message starts with the selected one instead of resuming.
#[test]
fn a_profile_chosen_before_a_reload_applies_to_the_next_message_after_it() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    w.launch_with(&p, None, 1);
    w.s.select_profile(sid(1), pid(2)).unwrap();
    w.take();
    let records = w.records();
    let mut s = Sessions::recover(b"reloaded", &records);
    assert!(s.switch_pending(sid(1)), "{records:?}");
    s.submit_prompt(sid(1), turn(2), T0).unwrap();
    let effects = s.drain_effects();
    assert!(
        effects.iter().any(
            |e| matches!(e, SessionEffect::LookupProfile { profile, .. } if *profile == pid(2))
        ),
        "a launch with the chosen profile: {effects:?}"
    );

    // Chosen before the execution started with it: nothing is pending, and
    // a message resumes the execution it ran in.
    let mut w = World::new();
    w.s.select_profile(sid(1), pid(2)).unwrap();
    w.launch_with(&profile(2, 1, &[]), None, 1);
    let records = w.records();
    let mut s = Sessions::recover(b"reloaded", &records);
    assert!(!s.switch_pending(sid(1)));
    s.submit_prompt(sid(1), turn(2), T0).unwrap();
    let effects = s.drain_effects();
    assert!(
        effects.iter().any(
            |e| matches!(e, SessionEffect::LookupProfile { profile, .. } if *profile == pid(2))
        ),
        "{effects:?}"
    );
    assert!(
        !effects.iter().any(|e| matches!(
            e,
            SessionEffect::Record(SessionRecord::ExecutionStarted { .. })
        )),
        "{effects:?}"
    );
}

#[test]
fn ac2_resume_after_controller_restart_rebuilds_from_records_and_rejoins() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    w.launch_with(&p, Some(turn(1)), 1);
    w.fail_turn(turn(1), 1);
    // The controller restarts: only durable records survive.
    let mut records = vec![SessionRecord::Created {
        session: sid(1),
        workspace: WorkspaceId::from_u128(WS).unwrap(),
        environment: Environment::Worker,
        profile: pid(1),
    }];
    records.extend(w.records());
    let mut s = Sessions::recover(b"restarted", &records);
    assert!(matches!(s.state(sid(1)), Some(SessionState::Failed(_))));
    let a = s
        .begin(sid(1), Purpose::Resume, Some(ResumeCause::User), None, T0)
        .unwrap();
    s.drain_effects();
    s.handle_profile(a, ProfileLookup::Found(p), T0);
    let effects = s.drain_effects();
    assert!(effects
        .iter()
        .any(|e| matches!(e, SessionEffect::ResolveCredentials { .. })));
    s.handle_credentials(a, vec![(cred(1), Ok(Secret::new("k".into())))], T0);
    let effects = s.drain_effects();
    assert!(effects.iter().any(
        |e| matches!(e, SessionEffect::LoadExecution { execution, .. } if *execution == exec(1))
    ));
    // The runtime died with the old controller? Only a confirmed-gone
    // answer launches anew, on the same retained workspace.
    s.handle_loaded(a, Err(LoadError::UnknownSession), T0);
    match launch_effect(&s.drain_effects()) {
        Some(SessionEffect::Launch {
            workspace,
            existing_workspace,
            ..
        }) => {
            assert_eq!(*workspace, WorkspaceId::from_u128(WS).unwrap());
            assert!(existing_workspace, "a resume never creates the workspace");
        }
        other => panic!("expected a launch, got {other:?}"),
    }
    s.handle_launched(a, exec(2), Generation(2), rt(2), T0);
    s.handle_ready(a);
    let started = s.drain_effects();
    assert!(started.iter().any(|e| matches!(e, SessionEffect::Record(SessionRecord::ExecutionStarted { resumed_from: Some(x), .. }) if *x == exec(1))));
    s.handle_recorded(a, T0);
    assert_eq!(
        s.trace(sid(1)).unwrap().token,
        Some((exec(2), Generation(2)))
    );
}

#[test]
fn ac2_cleanup_never_removes_credentials_recovery_references() {
    // There is no effect that deletes a credential: cleanup (failure, cancel,
    // archive, delete) cannot leave recovery pointing at one it removed.
    let mut w = World::new();
    let p = profile(1, 1, &[("TOKEN", EnvValue::Secret(cred(9)))]);
    w.launch_with(&p, Some(turn(1)), 1);
    w.fail_turn(turn(1), 1);
    w.s.archive(sid(1)).unwrap();
    w.take();
    // Resume of an archived session is refused, not attempted with fewer
    // credentials; and a retained unarchived one asks for the same refs.
    assert_eq!(
        w.s.begin(sid(1), Purpose::Resume, None, None, T0),
        Err(Refusal::Archived)
    );
    let mut w = World::new();
    w.launch_with(&p, Some(turn(1)), 1);
    w.fail_turn(turn(1), 1);
    let a = w.s.begin(sid(1), Purpose::Resume, None, None, T0).unwrap();
    w.take();
    w.s.handle_profile(a, ProfileLookup::Found(p), T0);
    let asked = w.take();
    assert!(asked.iter().any(|e| matches!(e, SessionEffect::ResolveCredentials { credentials, .. } if credentials == &vec![cred(1), cred(9)])));
}

#[test]
fn ac3_late_failure_of_an_earlier_execution_does_not_stop_the_newer_one() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    w.launch_with(&p, Some(turn(1)), 1);
    w.fail_turn(turn(1), 1);
    let a =
        w.s.begin(sid(1), Purpose::Resume, None, Some(turn(2)), T0)
            .unwrap();
    w.resume_to_load(a, ProfileLookup::Found(p));
    w.s.handle_loaded(a, Err(LoadError::UnknownSession), T0);
    w.take();
    w.s.handle_launched(a, exec(2), Generation(2), rt(2), T0);
    w.s.handle_ready(a);
    w.s.handle_recorded(a, T0);
    w.take();
    let before = w.log.len();
    // A delayed report, and the same report again, about execution 1.
    for _ in 0..2 {
        assert_eq!(
            w.s.handle_execution_failed(
                sid(1),
                exec(1),
                Generation(1),
                FailureCause::AgentFailed {
                    detail: "late".into()
                },
                T0
            ),
            Handled::Stale
        );
        assert_eq!(
            w.s.handle_turn_finished(
                sid(1),
                turn(1),
                exec(1),
                Generation(1),
                Some("late".into()),
                T0
            ),
            Handled::Stale
        );
    }
    assert!(w.take().is_empty());
    no_cleanup(&w.log[before..]);
    let t = w.trace();
    assert_eq!(t.state, SessionState::Running);
    assert_eq!(t.token, Some((exec(2), Generation(2))));
    assert_eq!(t.active_turn, Some(turn(2)));
}

#[test]
fn ac4_delete_removes_only_a_lifeline_owned_workspace() {
    let mut w = World::new();
    w.launch_with(&profile(1, 1, &[]), None, 1);
    assert_eq!(w.s.delete(sid(1)), Ok(true));
    let effects = w.take();
    assert!(effects.iter().any(
        |e| matches!(e, SessionEffect::TerminateRuntime { execution, .. } if *execution == exec(1))
    ));
    // The workspace is named in the tombstone, removed only once that is
    // durable (the engine's part), never before.
    assert!(!effects
        .iter()
        .any(|e| matches!(e, SessionEffect::RemoveWorkspace { .. })));
    assert!(effects.iter().any(|e| matches!(
        e,
        SessionEffect::Record(SessionRecord::Tombstone { session, workspace: Some(_) })
            if *session == sid(1)
    )));
    assert_eq!(
        w.s.delete(sid(1)),
        Err(Refusal::Deleted),
        "ownership is checked again"
    );
    assert_eq!(w.s.delete(sid(9)), Err(Refusal::UnknownSession));
}

#[test]
fn ac4_operator_owned_folder_is_never_removed_by_archive_or_delete() {
    let mut s = Sessions::new(b"x");
    s.create(
        sid(2),
        WorkspaceId::from_u128(5).unwrap(),
        Environment::LocalFolder {
            folder: lifeline_folder(),
            name: "project".into(),
        },
        pid(1),
    );
    assert_eq!(s.delete(sid(2)), Ok(false));
    let effects = s.drain_effects();
    assert!(!effects
        .iter()
        .any(|e| matches!(e, SessionEffect::RemoveWorkspace { .. })));
    assert!(effects.iter().any(|e| matches!(
        e,
        SessionEffect::Record(SessionRecord::Tombstone {
            workspace: None,
            ..
        })
    )));
    let mut w = World::new();
    w.launch_with(&profile(1, 1, &[]), None, 1);
    w.s.archive(sid(1)).unwrap();
    assert!(
        !w.take()
            .iter()
            .any(|e| matches!(e, SessionEffect::RemoveWorkspace { .. })),
        "archive keeps the workspace"
    );
}

#[test]
fn ac5_missing_credential_fails_actionably_and_is_never_substituted() {
    for failure in [
        CredentialFailure::Missing,
        CredentialFailure::Unreadable {
            detail: "decryption failed".into(),
        },
    ] {
        let mut w = World::new();
        let p = profile(1, 1, &[]);
        let a =
            w.s.begin(sid(1), Purpose::Launch, None, Some(turn(1)), T0)
                .unwrap();
        w.take();
        w.s.handle_profile(a, ProfileLookup::Found(p), T0);
        w.take();
        w.s.handle_credentials(a, vec![(cred(1), Err(failure.clone()))], T0);
        let effects = w.take();
        assert!(
            launch_effect(&effects).is_none(),
            "no launch without the credential"
        );
        let t = w.trace();
        let cause = is_failed(&t.state).expect("failed");
        assert_eq!(
            cause,
            &FailureCause::Credential {
                credential: cred(1),
                failure
            }
        );
        assert!(
            cause.to_string().contains("Profiles"),
            "actionable: {cause}"
        );
        assert!(t.accepted_prompts.is_empty());
        assert_eq!(t.owner, None);
    }
}

#[test]
fn ac5_missing_workspace_is_a_failure_not_an_empty_new_one() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    w.launch_with(&p, None, 1);
    w.fail_turn(turn(1), 1);
    let a = w.s.begin(sid(1), Purpose::Resume, None, None, T0).unwrap();
    w.resume_to_load(a, ProfileLookup::Found(p));
    w.s.handle_loaded(a, Err(LoadError::UnknownSession), T0);
    let effects = w.take();
    assert!(matches!(
        launch_effect(&effects),
        Some(SessionEffect::Launch {
            existing_workspace: true,
            ..
        })
    ));
    w.s.handle_launch_failed(a, LaunchFailure::WorkspaceMissing, T0);
    w.take();
    let t = w.trace();
    assert!(matches!(
        is_failed(&t.state),
        Some(FailureCause::Launch {
            failure: LaunchFailure::WorkspaceMissing
        })
    ));
    assert_eq!(
        t.token,
        Some((exec(1), Generation(1))),
        "the old token is not replaced"
    );
}

#[test]
fn ac6_resume_uses_current_env_of_the_recorded_profile_not_the_selected_one() {
    let mut w = World::new();
    let p1 = profile(1, 1, &[("MODE", EnvValue::Literal("old".into()))]);
    w.launch_with(&p1, None, 1);
    w.fail_turn(turn(1), 1);
    // The session now selects profile 2; profile 1's env was edited.
    w.s.select_profile(sid(1), pid(2)).unwrap();
    let p1_edited = profile(1, 2, &[("MODE", EnvValue::Literal("new".into()))]);
    let a = w.s.begin(sid(1), Purpose::Resume, None, None, T0).unwrap();
    let effects = w.take();
    assert!(
        effects.iter().any(
            |e| matches!(e, SessionEffect::LookupProfile { profile, .. } if *profile == pid(1))
        ),
        "looks up the recorded profile"
    );
    w.resume_to_load(a, ProfileLookup::Found(p1_edited));
    w.s.handle_loaded(a, Err(LoadError::UnknownSession), T0);
    let effects = w.take();
    let Some(SessionEffect::Launch {
        env,
        profile,
        workspace,
        environment,
        ..
    }) = launch_effect(&effects)
    else {
        panic!("no launch")
    };
    let mode = env
        .iter()
        .find(|(k, _)| k == "MODE")
        .map(|(_, v)| v.expose().to_string());
    assert_eq!(mode.as_deref(), Some("new"));
    assert_eq!(
        profile,
        &Some(ProfileRef {
            id: pid(1),
            revision: 2
        })
    );
    // Environment edits do not change the retained storage settings.
    assert_eq!(*workspace, WorkspaceId::from_u128(WS).unwrap());
    assert_eq!(*environment, Environment::Worker);
    w.s.handle_launched(a, exec(2), Generation(2), rt(2), T0);
    w.s.handle_ready(a);
    w.s.handle_recorded(a, T0);
    w.take();
    // A later start in that session keeps the resumed profile identity.
    w.fail_turn(turn(3), 2);
    w.s.begin(sid(1), Purpose::Resume, None, None, T0).unwrap();
    assert!(w
        .take()
        .iter()
        .any(|e| matches!(e, SessionEffect::LookupProfile { profile, .. } if *profile == pid(1))));
}

#[test]
fn ac7_deleted_recorded_profile_permits_recovery_without_its_env() {
    let mut w = World::new();
    let p = profile(1, 1, &[("MODE", EnvValue::Literal("x".into()))]);
    w.launch_with(&p, None, 1);
    w.fail_turn(turn(1), 1);
    let a = w.s.begin(sid(1), Purpose::Resume, None, None, T0).unwrap();
    w.take();
    w.s.handle_profile(a, ProfileLookup::Deleted, T0);
    let effects = w.take();
    assert!(effects.iter().any(|e| matches!(e, SessionEffect::ResolveCredentials { credentials, .. } if credentials.is_empty())));
    w.s.handle_credentials(a, vec![], T0);
    w.take();
    w.s.handle_loaded(a, Err(LoadError::UnknownSession), T0);
    let effects = w.take();
    let Some(SessionEffect::Launch { env, profile, .. }) = launch_effect(&effects) else {
        panic!()
    };
    assert!(env.iter().all(|(k, _)| k != "MODE"));
    assert_eq!(profile, &None);
    w.s.handle_launched(a, exec(2), Generation(2), rt(2), T0);
    w.s.handle_ready(a);
    assert!(w.take().iter().any(|e| matches!(e, SessionEffect::Record(SessionRecord::ExecutionStarted { note: Some(n), .. }) if n.contains("deleted"))));
}

#[test]
fn ac7_other_lookup_failures_and_other_owners_block_resume() {
    let mut foreign = profile(1, 1, &[]);
    foreign.owner = "another-executor".into();
    for lookup in [
        ProfileLookup::Failed {
            fault: crate::store_fault::StoreFault::Unavailable {
                detail: "store unavailable".into(),
            },
        },
        ProfileLookup::Found(foreign),
    ] {
        let mut w = World::new();
        w.launch_with(&profile(1, 1, &[]), None, 1);
        w.fail_turn(turn(1), 1);
        let a = w.s.begin(sid(1), Purpose::Resume, None, None, T0).unwrap();
        w.take();
        w.s.handle_profile(a, lookup, T0);
        let effects = w.take();
        assert!(!effects.iter().any(|e| matches!(
            e,
            SessionEffect::LoadExecution { .. } | SessionEffect::ResolveCredentials { .. }
        )));
        let t = w.trace();
        let cause = is_failed(&t.state).expect("blocked");
        assert!(
            matches!(cause, FailureCause::ProfileBlocked { .. }),
            "{cause:?}"
        );
        assert!(cause.to_string().contains("Profiles"));
    }
}

#[test]
fn ac8_secret_references_stay_unresolved_until_the_launch_checkpoint() {
    let mut w = World::new();
    let p = profile(
        1,
        1,
        &[
            ("TOKEN", EnvValue::Secret(cred(7))),
            ("PLAIN", EnvValue::Literal("v".into())),
        ],
    );
    let a = w.s.begin(sid(1), Purpose::Launch, None, None, T0).unwrap();
    let first = w.take();
    assert!(!first
        .iter()
        .any(|e| matches!(e, SessionEffect::ResolveCredentials { .. })));
    w.s.handle_profile(a, ProfileLookup::Found(p), T0);
    let effects = w.take();
    // Resolution is the last step before Launch, and only refs are asked.
    assert_eq!(effects.len(), 1);
    assert!(
        matches!(&effects[0], SessionEffect::ResolveCredentials { credentials, .. } if credentials == &vec![cred(1), cred(7)])
    );
    w.s.handle_credentials(
        a,
        vec![
            (cred(1), Ok(Secret::new("api".into()))),
            (cred(7), Ok(Secret::new("s3cr3t-token".into()))),
        ],
        T0,
    );
    let effects = w.take();
    let Some(SessionEffect::Launch { env, api_key, .. }) = launch_effect(&effects) else {
        panic!()
    };
    // Precedence: runtime-set names first, then the profile's, in order;
    // the API key is not in the runtime's environment unless mapped.
    let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["LIFELINE_SESSION", "TOKEN", "PLAIN"]);
    assert!(env.iter().all(|(_, v)| v.expose() != "api"));
    assert_eq!(api_key.as_ref().map(|k| k.expose()), Some("api"));
    // A Debug of the effect (a log line) never shows a secret.
    let debug = format!("{effects:?}");
    assert!(
        !debug.contains("s3cr3t") && !debug.contains("\"api\""),
        "{debug}"
    );
}

// ----- reference 004, requirement 007 --------------------------------------

#[test]
fn r007_attempt_is_registered_before_any_async_work() {
    let mut w = World::new();
    let a =
        w.s.begin(sid(1), Purpose::Launch, None, Some(turn(1)), T0)
            .unwrap();
    // Before a single effect ran, the attempt owns the session.
    let t = w.trace();
    assert_eq!(t.owner, Some(a));
    assert_eq!(
        t.state,
        SessionState::Starting {
            attempt: a,
            purpose: Purpose::Launch
        }
    );
    assert!(
        t.accepted_prompts.is_empty(),
        "the originating prompt waits for the attempt"
    );
    assert_eq!(
        w.s.begin(sid(1), Purpose::Launch, None, None, T0),
        Err(Refusal::Busy { attempt: a })
    );
}

#[test]
fn r007_readiness_timeout_fails_with_the_load_error_and_cleans_up_what_it_launched() {
    let mut w = World::new();
    let a =
        w.s.begin(sid(1), Purpose::Launch, None, Some(turn(1)), T0)
            .unwrap();
    w.take();
    w.s.handle_profile(a, ProfileLookup::Found(profile(1, 1, &[])), T0);
    w.answer_credentials(a);
    w.s.handle_launched(a, exec(1), Generation(1), rt(1), T0);
    let timer = w.take();
    assert!(timer.iter().any(|e| matches!(e, SessionEffect::SetTimer { timer: AttemptTimer::Readiness, at, .. } if *at == T0.plus(READINESS_TIMEOUT_MS))));
    assert_eq!(
        w.s.handle_timer(a, AttemptTimer::Readiness, T0.plus(READINESS_TIMEOUT_MS)),
        Handled::Applied
    );
    let effects = w.take();
    assert!(effects.iter().any(
        |e| matches!(e, SessionEffect::TerminateRuntime { runtime, .. } if *runtime == rt(1))
    ));
    let t = w.trace();
    assert_eq!(
        is_failed(&t.state),
        Some(&FailureCause::Load {
            error: LoadError::Timeout
        })
    );
    assert_eq!(t.token, None, "no token stored");
    assert!(t.accepted_prompts.is_empty());
    assert_eq!(t.active_turn, None);
    assert_eq!(t.owner, None);
    // The ready that arrives after the timeout is stale.
    assert_eq!(w.s.handle_ready(a), Handled::Stale);
    assert_eq!(w.trace().token, None);
}

#[test]
fn r007_cancel_before_readiness_invalidates_then_cancels_waits_then_the_runtime() {
    let mut w = World::new();
    let a =
        w.s.begin(sid(1), Purpose::Launch, None, Some(turn(1)), T0)
            .unwrap();
    w.take();
    w.s.handle_profile(a, ProfileLookup::Found(profile(1, 1, &[])), T0);
    w.answer_credentials(a);
    w.s.handle_launched(a, exec(1), Generation(1), rt(1), T0);
    w.take();
    assert_eq!(
        w.s.cancel(sid(1), T0),
        CancelOutcome::Cancelling { attempt: a }
    );
    // Invalidated first: the trace shows no owner before any effect ran.
    assert_eq!(w.trace().owner, None);
    let effects = w.take();
    let order: Vec<&str> = effects
        .iter()
        .filter_map(|e| match e {
            SessionEffect::CancelWaits { .. } => Some("waits"),
            SessionEffect::CancelRuntime { .. } => Some("runtime"),
            SessionEffect::SetTimer {
                timer: AttemptTimer::CancelGrace,
                ..
            } => Some("grace"),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["waits", "runtime", "grace"]);
    assert_eq!(w.trace().state, SessionState::Cancelling { attempt: a });
    // Readiness arrives late: nothing happens.
    assert_eq!(w.s.handle_ready(a), Handled::Stale);
    assert_eq!(w.s.handle_recorded(a, T0), Handled::Stale);
    assert_eq!(
        w.trace().state,
        SessionState::Cancelling { attempt: a },
        "pending until cleanup settles"
    );
    assert_eq!(w.s.handle_cleanup(a, Ok(()), T0), Handled::Applied);
    w.take();
    let t = w.trace();
    assert_eq!(
        t.state,
        SessionState::Cancelled,
        "a cancellation outcome, not a failure"
    );
    assert!(t.accepted_prompts.is_empty());
    assert!(t.queued.is_empty(), "the cancelled prompt is never queued");
    assert_eq!(t.token, None);
    assert!(w
        .records()
        .iter()
        .any(|r| matches!(r, SessionRecord::StartupCancelled { attempt, .. } if *attempt == a)));
    assert!(!w
        .records()
        .iter()
        .any(|r| matches!(r, SessionRecord::StartupFailed { .. })));
}

#[test]
fn r007_cancel_escalates_to_terminate_and_a_cleanup_failure_stays_truthful() {
    let mut w = World::new();
    let a = w.s.begin(sid(1), Purpose::Launch, None, None, T0).unwrap();
    w.take();
    w.s.handle_profile(a, ProfileLookup::Found(profile(1, 1, &[])), T0);
    w.answer_credentials(a);
    w.s.handle_launched(a, exec(1), Generation(1), rt(1), T0);
    w.take();
    w.s.cancel(sid(1), T0);
    w.take();
    assert_eq!(
        w.s.handle_timer(a, AttemptTimer::CancelGrace, T0.plus(CANCEL_GRACE_MS)),
        Handled::Applied
    );
    let effects = w.take();
    assert!(effects.iter().any(|e| matches!(e, SessionEffect::TerminateRuntime { attempt: Some(x), runtime, .. } if *x == a && *runtime == rt(1))));
    assert_eq!(
        w.s.handle_timer(a, AttemptTimer::TerminateGrace, T0.plus(9_000)),
        Handled::Applied
    );
    let t = w.trace();
    let cause = is_failed(&t.state).expect("cleanup failure is a failure");
    assert!(matches!(cause, FailureCause::CleanupFailed { .. }));
    // Recovery controls stay possible: a new attempt may start now.
    assert!(w.s.begin(sid(1), Purpose::Launch, None, None, T0).is_ok());
}

#[test]
fn r007_late_success_of_an_old_attempt_cannot_store_a_token_or_admit() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    let old =
        w.s.begin(sid(1), Purpose::Launch, None, Some(turn(1)), T0)
            .unwrap();
    w.take();
    w.s.handle_profile(old, ProfileLookup::Found(p.clone()), T0);
    w.answer_credentials(old);
    // Cancelled before it launched anything: cancelled at once.
    assert_eq!(
        w.s.cancel(sid(1), T0),
        CancelOutcome::Cancelled { attempt: old }
    );
    w.take();
    let new = w.launch_with(&p, Some(turn(2)), 2);
    assert_ne!(old, new);
    // The old launch completes late: its runtime is stopped, nothing else.
    assert_eq!(
        w.s.handle_launched(old, exec(1), Generation(1), rt(1), T0),
        Handled::Stale
    );
    let effects = w.take();
    assert!(
        matches!(&effects[..], [SessionEffect::TerminateRuntime { runtime, .. }] if *runtime == rt(1))
    );
    assert_eq!(w.s.handle_ready(old), Handled::Stale);
    assert_eq!(w.s.handle_recorded(old, T0), Handled::Stale);
    assert_eq!(w.s.handle_loaded(old, Ok(()), T0), Handled::Stale);
    let t = w.trace();
    assert_eq!(t.token, Some((exec(2), Generation(2))));
    assert_eq!(t.accepted_prompts, vec![turn(2)]);
    assert_eq!(t.active_turn, Some(turn(2)));
    assert_eq!(t.state, SessionState::Running);
}

#[test]
fn r007_late_failure_of_an_old_attempt_cannot_write_an_error_or_stop_the_replacement() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    let old = w.s.begin(sid(1), Purpose::Launch, None, None, T0).unwrap();
    w.take();
    w.s.cancel(sid(1), T0);
    w.take();
    let new = w.launch_with(&p, None, 2);
    let records_before = w.records().len();
    assert_eq!(
        w.s.handle_launch_failed(
            old,
            LaunchFailure::Failed {
                detail: "late".into()
            },
            T0
        ),
        Handled::Stale
    );
    assert_eq!(
        w.s.handle_timer(old, AttemptTimer::Readiness, T0),
        Handled::Stale
    );
    assert_eq!(
        w.s.handle_credentials(old, vec![(cred(1), Err(CredentialFailure::Missing))], T0),
        Handled::Stale
    );
    assert_eq!(
        w.s.handle_profile(old, ProfileLookup::Deleted, T0),
        Handled::Stale
    );
    assert!(w.take().is_empty());
    assert_eq!(w.records().len(), records_before, "no error written");
    let t = w.trace();
    assert_eq!(t.state, SessionState::Running);
    assert_eq!(t.token, Some((exec(2), Generation(2))));
    let _ = new;
}

#[test]
fn r007_retry_during_cleanup_is_refused_then_gets_a_new_identity() {
    let mut w = World::new();
    let a =
        w.s.begin(sid(1), Purpose::Launch, None, Some(turn(1)), T0)
            .unwrap();
    w.take();
    w.s.handle_profile(a, ProfileLookup::Found(profile(1, 1, &[])), T0);
    w.answer_credentials(a);
    w.s.handle_launched(a, exec(1), Generation(1), rt(1), T0);
    w.take();
    w.s.cancel(sid(1), T0);
    w.take();
    assert_eq!(
        w.s.begin(sid(1), Purpose::Launch, None, None, T0),
        Err(Refusal::CancellationPending { attempt: a })
    );
    // A prompt meanwhile waits in the queue rather than starting anything.
    assert_eq!(
        w.s.submit_prompt(sid(1), turn(2), T0),
        Ok(PromptDisposition::Queued { position: 1 })
    );
    assert_eq!(w.trace().owner, None);
    w.s.handle_cleanup(a, Ok(()), T0);
    w.take();
    let b = w.s.begin(sid(1), Purpose::Launch, None, None, T0).unwrap();
    assert_ne!(a, b);
    let t = w.trace();
    assert_eq!(t.owner, Some(b));
    assert_eq!(t.queued, vec![turn(2)]);
    assert!(t.accepted_prompts.is_empty());
}

#[test]
fn r007_unrelated_queued_prompt_with_auto_run_off_stays_queued() {
    let mut w = World::new();
    w.s.set_auto_run(sid(1), false);
    let p = profile(1, 1, &[]);
    w.launch_with(&p, Some(turn(1)), 1);
    // A second prompt waits behind the first turn.
    assert_eq!(
        w.s.submit_prompt(sid(1), turn(2), T0),
        Ok(PromptDisposition::Queued { position: 1 })
    );
    w.fail_turn(turn(1), 1);
    // Resume with a new direct prompt, then cancel it before readiness.
    let a = match w.s.submit_prompt(sid(1), turn(3), T0) {
        Ok(PromptDisposition::Starting { attempt }) => attempt,
        other => panic!("{other:?}"),
    };
    w.take();
    w.s.handle_profile(a, ProfileLookup::Found(p.clone()), T0);
    w.take();
    w.s.cancel(sid(1), T0);
    w.take();
    let t = w.trace();
    assert_eq!(t.state, SessionState::Cancelled);
    assert_eq!(
        t.queued,
        vec![turn(2)],
        "the cancelled prompt is not queued; the unrelated one keeps its place"
    );
    assert_eq!(t.accepted_prompts, vec![turn(1)]);
    // A later successful resume does not auto-run it either.
    let b =
        w.s.begin(sid(1), Purpose::Resume, Some(ResumeCause::User), None, T0)
            .unwrap();
    w.resume_to_load(b, ProfileLookup::Found(p));
    w.s.handle_loaded(b, Ok(()), T0);
    w.s.handle_recorded(b, T0);
    w.take();
    let t = w.trace();
    assert_eq!(t.state, SessionState::Running);
    assert_eq!(t.queued, vec![turn(2)]);
    assert_eq!(t.active_turn, None);
    // Run by hand.
    assert_eq!(w.s.run_next(sid(1)), Ok(Some(turn(2))));
    assert_eq!(w.trace().accepted_prompts, vec![turn(1), turn(2)]);
}

#[test]
fn r007_queued_prompt_with_auto_run_on_runs_after_the_turn() {
    let mut w = World::new();
    w.launch_with(&profile(1, 1, &[]), Some(turn(1)), 1);
    w.s.submit_prompt(sid(1), turn(2), T0).unwrap();
    w.s.handle_turn_finished(sid(1), turn(1), exec(1), Generation(1), None, T0);
    assert!(w
        .take()
        .iter()
        .any(|e| matches!(e, SessionEffect::AdmitPrompt { turn: t, .. } if *t == turn(2))));
    assert_eq!(w.trace().active_turn, Some(turn(2)));
}

#[test]
fn a_withdrawn_prompt_never_runs_and_the_rest_keep_their_order() {
    let mut w = World::new();
    w.launch_with(&profile(1, 1, &[]), Some(turn(1)), 1);
    for t in 2..=4 {
        w.s.submit_prompt(sid(1), turn(t), T0).unwrap();
    }
    assert!(w.s.withdraw_prompt(sid(1), turn(3)));
    assert_eq!(w.trace().queued, vec![turn(2), turn(4)]);
    // Only a waiting prompt can be withdrawn: the running one, one already
    // gone, and another session's are not.
    assert!(!w.s.withdraw_prompt(sid(1), turn(1)));
    assert!(!w.s.withdraw_prompt(sid(1), turn(3)));
    assert!(!w.s.withdraw_prompt(sid(2), turn(2)));
    w.take();
    w.s.handle_turn_finished(sid(1), turn(1), exec(1), Generation(1), None, T0);
    w.s.handle_turn_finished(sid(1), turn(2), exec(1), Generation(1), None, T0);
    w.s.handle_turn_finished(sid(1), turn(4), exec(1), Generation(1), None, T0);
    let admitted: Vec<TurnId> = w
        .take()
        .iter()
        .filter_map(|e| match e {
            SessionEffect::AdmitPrompt { turn, .. } => Some(*turn),
            _ => None,
        })
        .collect();
    assert_eq!(admitted, vec![turn(2), turn(4)]);
    assert_eq!(w.trace().accepted_prompts, vec![turn(1), turn(2), turn(4)]);
}

#[test]
fn r007_fallback_only_on_positive_classification() {
    let cases = [
        (LoadError::Unsupported, true),
        (LoadError::CapabilityAbsent, true),
        (LoadError::UnknownSession, true),
        (LoadError::Timeout, false),
        (LoadError::Cancelled, false),
        (LoadError::Auth, false),
        (
            LoadError::Unclassified {
                detail: "internal error: deadline exceeded".into(),
            },
            false,
        ),
    ];
    for (error, fallback) in cases {
        let mut w = World::new();
        let p = profile(1, 1, &[]);
        w.launch_with(&p, None, 1);
        w.fail_turn(turn(1), 1);
        let a = w.s.begin(sid(1), Purpose::Resume, None, None, T0).unwrap();
        w.resume_to_load(a, ProfileLookup::Found(p));
        w.s.handle_loaded(a, Err(error.clone()), T0);
        let effects = w.take();
        let launched = launch_effect(&effects).is_some();
        assert_eq!(launched, fallback, "{error:?}");
        if !fallback {
            assert_eq!(
                is_failed(&w.trace().state),
                Some(&FailureCause::Load {
                    error: error.clone()
                })
            );
            assert_eq!(w.trace().token, Some((exec(1), Generation(1))));
        }
    }
}

#[test]
fn r007_internal_retry_keeps_the_attempt_identity_and_the_real_cause() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    w.launch_with(&p, None, 1);
    w.fail_turn(turn(1), 1);
    let a =
        w.s.begin(
            sid(1),
            Purpose::Resume,
            Some(ResumeCause::Prompt),
            Some(turn(2)),
            T0,
        )
        .unwrap();
    w.resume_to_load(a, ProfileLookup::Found(p));
    w.s.handle_loaded(
        a,
        Err(LoadError::Transport {
            detail: "port closed".into(),
        }),
        T0,
    );
    let retry = w.take();
    assert!(
        matches!(&retry[..], [
            SessionEffect::LoadExecution { attempt, .. },
            SessionEffect::SetTimer { attempt: t, timer: AttemptTimer::Rejoin, .. },
        ] if *attempt == a && *t == a),
        "same identity, a new wait: {retry:?}"
    );
    assert_eq!(w.trace().owner, Some(a));
    // The retry fails with a more specific cause: that one is reported,
    // with the original resume cause.
    w.s.handle_loaded(a, Err(LoadError::Auth), T0);
    w.take();
    let failed = w.records().into_iter().rev().find_map(|r| match r {
        SessionRecord::StartupFailed {
            attempt,
            cause,
            resume_cause,
            ..
        } => Some((attempt, cause, resume_cause)),
        _ => None,
    });
    assert_eq!(
        failed,
        Some((
            a,
            FailureCause::Load {
                error: LoadError::Auth
            },
            Some(ResumeCause::Prompt)
        ))
    );
    let t = w.trace();
    assert!(
        t.accepted_prompts.is_empty(),
        "the resume's prompt was not dispatched"
    );
    assert!(t.queued.is_empty());
}

#[test]
fn r007_execution_generation_is_distinct_from_attempt_identity() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    w.launch_with(&p, None, 1);
    let mut attempts = Vec::new();
    for _ in 0..2 {
        w.fail_turn(turn(1), 1);
        let a = w.s.begin(sid(1), Purpose::Resume, None, None, T0).unwrap();
        w.resume_to_load(a, ProfileLookup::Found(p.clone()));
        w.s.handle_loaded(a, Ok(()), T0);
        w.s.handle_recorded(a, T0);
        w.take();
        attempts.push(a);
        assert_eq!(
            w.trace().token,
            Some((exec(1), Generation(1))),
            "one execution, many attempts"
        );
    }
    assert_ne!(attempts[0], attempts[1]);
}

#[test]
fn r007_a_stale_cleanup_report_cannot_settle_a_newer_cancellation() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    let a = w.s.begin(sid(1), Purpose::Launch, None, None, T0).unwrap();
    w.take();
    w.s.handle_profile(a, ProfileLookup::Found(p.clone()), T0);
    w.answer_credentials(a);
    w.s.handle_launched(a, exec(1), Generation(1), rt(1), T0);
    w.s.cancel(sid(1), T0);
    w.s.handle_cleanup(a, Ok(()), T0);
    w.take();
    let b = w.s.begin(sid(1), Purpose::Launch, None, None, T0).unwrap();
    w.take();
    w.s.handle_profile(b, ProfileLookup::Found(p), T0);
    w.answer_credentials(b);
    w.s.handle_launched(b, exec(2), Generation(2), rt(2), T0);
    w.s.cancel(sid(1), T0);
    w.take();
    // A repeated cleanup report for `a` must not settle `b`'s cancellation.
    assert_eq!(w.s.handle_cleanup(a, Ok(()), T0), Handled::Stale);
    assert_eq!(w.trace().state, SessionState::Cancelling { attempt: b });
}

#[test]
fn records_round_trip_through_json() {
    let mut w = World::new();
    w.launch_with(&profile(1, 1, &[]), Some(turn(1)), 1);
    w.fail_turn(turn(1), 1);
    for r in w.records() {
        let text = serde_json::to_string(&r).unwrap();
        let back: SessionRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        assert!(!text.contains("secret-"), "no secret in a record: {text}");
    }
}

#[test]
fn ac2_after_a_controller_restart_a_running_session_is_detached_and_a_prompt_rejoins_it() {
    let mut w = World::new();
    let p = profile(1, 1, &[("MODE", EnvValue::Literal("x".into()))]);
    w.launch_with(&p, None, 1);
    let mut records = vec![SessionRecord::Created {
        session: sid(1),
        workspace: WorkspaceId::from_u128(WS).unwrap(),
        environment: Environment::Worker,
        profile: pid(1),
    }];
    records.extend(w.records());
    let mut w = World {
        s: Sessions::recover(b"restarted", &records),
        log: Vec::new(),
    };
    // The new controller holds no key and no environment for it.
    assert_eq!(w.trace().state, SessionState::Detached);
    assert_eq!(w.trace().token, Some((exec(1), Generation(1))));
    let a = match w.s.submit_prompt(sid(1), turn(5), T0) {
        Ok(PromptDisposition::Starting { attempt }) => attempt,
        other => panic!("{other:?}"),
    };
    w.resume_to_load(a, ProfileLookup::Found(p));
    w.s.handle_loaded(a, Ok(()), T0);
    w.s.handle_recorded(a, T0);
    let effects = w.take();
    let activate = effects.iter().find_map(|e| match e {
        SessionEffect::Activate {
            binding,
            prepared,
            rejoined,
            ..
        } => Some((binding.clone(), prepared.clone(), *rejoined)),
        _ => None,
    });
    let (binding, prepared, rejoined) = activate.expect("activated");
    assert!(rejoined);
    assert_eq!(
        binding.runtime,
        rt(1),
        "the surviving runtime, not a new one"
    );
    assert!(prepared.env.iter().any(|(k, _)| k == "MODE"));
    assert!(prepared.api_key.is_some());
    no_cleanup(&effects);
    let t = w.trace();
    assert_eq!(t.accepted_prompts, vec![turn(5)]);
    assert_eq!(t.active_turn, Some(turn(5)));
    assert_eq!(t.state, SessionState::Running);
}

#[test]
fn selecting_another_profile_relaunches_between_turns_on_the_same_workspace() {
    let mut w = World::new();
    w.launch_with(&profile(1, 1, &[]), Some(turn(1)), 1);
    w.s.select_profile(sid(1), pid(2)).unwrap();
    assert_eq!(
        w.s.begin(sid(1), Purpose::Launch, None, None, T0),
        Err(Refusal::TurnRunning),
        "not while a turn runs"
    );
    w.s.handle_turn_finished(sid(1), turn(1), exec(1), Generation(1), None, T0);
    // Once the turn has ended the chosen profile applies by itself, as the
    // refusal said, before any other message runs.
    let SessionState::Starting {
        attempt: a,
        purpose: Purpose::Launch,
    } = w.trace().state
    else {
        panic!("no start with the chosen profile: {:?}", w.trace().state)
    };
    assert!(w
        .take()
        .iter()
        .any(|e| matches!(e, SessionEffect::LookupProfile { profile, .. } if *profile == pid(2))));
    w.s.handle_profile(a, ProfileLookup::Found(profile(2, 1, &[])), T0);
    let effects = w.answer_credentials(a);
    match launch_effect(&effects) {
        Some(SessionEffect::Launch {
            workspace,
            existing_workspace,
            profile,
            ..
        }) => {
            assert_eq!(*workspace, WorkspaceId::from_u128(WS).unwrap());
            assert!(existing_workspace);
            assert_eq!(profile.as_ref().map(|p| p.id), Some(pid(2)));
        }
        other => panic!("{other:?}"),
    }
    w.s.handle_launched(a, exec(2), Generation(2), rt(2), T0);
    w.s.handle_ready(a);
    w.s.handle_recorded(a, T0);
    assert_eq!(w.trace().token, Some((exec(2), Generation(2))));
    assert_eq!(
        w.s.begin(sid(1), Purpose::Resume, None, None, T0),
        Err(Refusal::AlreadyRunning)
    );
}

#[test]
fn a_profile_chosen_while_the_turn_ran_starts_nothing_in_a_left_or_failed_session() {
    let starts = |effects: &[SessionEffect]| {
        effects
            .iter()
            .any(|e| matches!(e, SessionEffect::LookupProfile { .. }))
    };
    // Left for another (Start fresh): the turn's end stops its runtime by
    // its captured identity, and the choice waits for its next start.
    let mut w = World::new();
    w.launch_with(&profile(1, 1, &[]), Some(turn(1)), 1);
    w.s.select_profile(sid(1), pid(2)).unwrap();
    w.take();
    w.s.handle_left_turn_finished(sid(1), turn(1), exec(1), Generation(1), None, T0);
    let effects = w.take();
    assert!(!starts(&effects), "{effects:?}");
    assert!(effects.iter().any(|e| matches!(
        e,
        SessionEffect::TerminateRuntime { execution, .. } if *execution == exec(1)
    )));
    assert_eq!(w.trace().state, SessionState::Detached);
    assert!(w.s.switch_pending(sid(1)));
    // Its runtime lost while the turn ran: the session waits for the
    // person, who sees the failure; the turn's end starts nothing.
    let mut w = World::new();
    w.launch_with(&profile(1, 1, &[]), Some(turn(1)), 1);
    w.s.select_profile(sid(1), pid(2)).unwrap();
    let lost = FailureCause::AgentFailed {
        detail: "lost".into(),
    };
    w.s.handle_execution_failed(sid(1), exec(1), Generation(1), lost, T0);
    w.take();
    w.s.handle_turn_finished(sid(1), turn(1), exec(1), Generation(1), None, T0);
    let effects = w.take();
    assert!(!starts(&effects), "{effects:?}");
    assert!(matches!(w.trace().state, SessionState::Failed(_)));
    // The next message starts it with the chosen profile.
    assert!(matches!(
        w.s.submit_prompt(sid(1), turn(2), T0),
        Ok(PromptDisposition::Starting { .. })
    ));
    assert!(w
        .take()
        .iter()
        .any(|e| matches!(e, SessionEffect::LookupProfile { profile, .. } if *profile == pid(2))));
}

#[test]
fn r007_controller_shutdown_mid_attempt_forgets_it_and_replays_no_prompt() {
    // Attempt ownership is process-local: a controller that dies during a
    // start leaves only durable records behind, and the prompt that started
    // the attempt was never recorded, so nothing can replay it.
    let mut w = World::new();
    let a =
        w.s.begin(sid(1), Purpose::Launch, None, Some(turn(1)), T0)
            .unwrap();
    w.take();
    w.s.handle_profile(a, ProfileLookup::Found(profile(1, 1, &[])), T0);
    w.answer_credentials(a);
    w.s.handle_launched(a, exec(1), Generation(1), rt(1), T0);
    w.take();
    let mut records = vec![SessionRecord::Created {
        session: sid(1),
        workspace: WorkspaceId::from_u128(WS).unwrap(),
        environment: Environment::Worker,
        profile: pid(1),
    }];
    records.extend(w.records());
    let mut s = Sessions::recover(b"after shutdown", &records);
    let t = s.trace(sid(1)).unwrap();
    assert_eq!(t.state, SessionState::New);
    assert_eq!(t.owner, None);
    assert!(t.accepted_prompts.is_empty() && t.queued.is_empty());
    assert_eq!(t.token, None);
    // The old attempt's late answers mean nothing to the new controller.
    assert_eq!(s.handle_ready(a), Handled::Stale);
    assert_eq!(s.handle_recorded(a, T0), Handled::Stale);
    assert!(s
        .drain_effects()
        .iter()
        .all(|e| !matches!(e, SessionEffect::AdmitPrompt { .. })));
}

fn lifeline_folder() -> crate::id::FolderId {
    crate::id::FolderId::from_u128(0xf0).unwrap()
}

#[test]
fn each_execution_records_the_environment_it_runs_in() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    w.launch_with(&p, None, 1);
    let environments: Vec<_> = w
        .records()
        .into_iter()
        .filter_map(|r| match r {
            SessionRecord::ExecutionStarted { environment, .. } => Some(environment),
            _ => None,
        })
        .collect();
    assert_eq!(environments, vec![Some(Environment::Worker)]);
}

#[test]
fn start_fresh_keeps_the_environment_unless_another_is_chosen() {
    let folder = Environment::LocalFolder {
        folder: lifeline_folder(),
        name: "project".into(),
    };
    let created = |w: &World, session: SessionId| {
        w.records().into_iter().find_map(|r| match r {
            SessionRecord::Created {
                session: s,
                environment,
                ..
            } if s == session => Some(environment),
            _ => None,
        })
    };
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    w.launch_with(&p, None, 1);
    w.fail_turn(turn(1), 1);
    // Chosen under Environment: the successor runs in the folder.
    w.s.start_fresh(
        sid(1),
        sid(2),
        WorkspaceId::from_u128(0x2002).unwrap(),
        Some(folder.clone()),
        T0,
    )
    .unwrap();
    w.take();
    assert_eq!(created(&w, sid(2)), Some(folder.clone()));
    assert_eq!(w.s.environment(sid(2)), Some(&folder));
    // The predecessor keeps its own environment and evidence.
    assert_eq!(w.s.environment(sid(1)), Some(&Environment::Worker));
    assert!(w.records().iter().any(|r| matches!(
        r,
        SessionRecord::Succeeded { session, successor } if *session == sid(1) && *successor == sid(2)
    )));
    // Start fresh from the folder session without a choice: the same
    // folder. Its own start is stopped first (a busy session refuses).
    assert!(w.s.trace(sid(2)).unwrap().owner.is_some());
    w.s.cancel(sid(2), T0);
    w.take();
    w.s.start_fresh(
        sid(2),
        sid(3),
        WorkspaceId::from_u128(0x3003).unwrap(),
        None,
        T0,
    )
    .unwrap();
    w.take();
    assert_eq!(created(&w, sid(3)), Some(folder));
}

#[test]
fn choosing_an_environment_stops_the_old_runtime_by_identity_and_starts_there() {
    let folder = Environment::LocalFolder {
        folder: lifeline_folder(),
        name: "project".into(),
    };
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    w.launch_with(&p, None, 1);
    let attempt =
        w.s.choose_environment(
            sid(1),
            sid(2),
            WorkspaceId::from_u128(0x2002).unwrap(),
            folder.clone(),
            T0,
        )
        .unwrap();
    let effects = w.take();
    assert!(effects.iter().any(|e| matches!(
        e,
        SessionEffect::TerminateRuntime { execution, generation, runtime, .. }
            if *execution == exec(1) && *generation == Generation(1) && *runtime == rt(1)
    )));
    assert_eq!(w.s.environment(sid(2)), Some(&folder));
    assert_eq!(w.s.trace(sid(2)).unwrap().owner, Some(attempt));
    // The old session's files are not removed: it is not a delete.
    assert!(!effects
        .iter()
        .any(|e| matches!(e, SessionEffect::RemoveWorkspace { .. })));
    // A session that is starting refuses: its start must end first.
    assert!(matches!(
        w.s.choose_environment(
            sid(2),
            sid(3),
            WorkspaceId::from_u128(0x3003).unwrap(),
            Environment::Worker,
            T0
        ),
        Err(Refusal::Busy { .. })
    ));
}

#[test]
fn archive_is_undone_by_unarchive_which_leaves_a_way_forward() {
    let mut w = World::new();
    w.launch_with(&profile(1, 1, &[]), Some(turn(1)), 1);
    w.fail_turn(turn(1), 1);
    w.s.archive(sid(1)).unwrap();
    w.take();
    assert_eq!(
        w.s.submit_prompt(sid(1), turn(2), T0),
        Err(Refusal::Archived),
        "an archived session takes no message"
    );
    assert_eq!(w.s.unarchive(sid(1)), Ok(()));
    // Archive stopped its runtime: the session is bound but detached, so
    // Resume (or the next message) brings it up on its workspace.
    assert_eq!(w.s.state(sid(1)), Some(&SessionState::Detached));
    w.take();
    assert!(w
        .records()
        .contains(&SessionRecord::Unarchived { session: sid(1) }));
    let a = w.s.begin(sid(1), Purpose::Resume, None, None, T0);
    assert!(a.is_ok(), "Resume is possible again: {a:?}");
    // The journal folds the same way after a restart.
    let folded = Sessions::recover(b"again", &w.records());
    assert_eq!(folded.state(sid(1)), Some(&SessionState::Detached));
}

#[test]
fn an_unbound_session_unarchives_as_new_and_a_deleted_one_never() {
    let mut w = World::new();
    w.s.archive(sid(1)).unwrap();
    w.s.unarchive(sid(1)).unwrap();
    assert_eq!(w.s.state(sid(1)), Some(&SessionState::New));
    assert_eq!(
        w.s.unarchive(sid(1)),
        Ok(()),
        "unarchiving twice is harmless"
    );
    w.take();
    assert_eq!(
        w.records()
            .iter()
            .filter(|r| matches!(r, SessionRecord::Unarchived { .. }))
            .count(),
        1,
        "only the first unarchive is recorded"
    );
    w.s.delete(sid(1)).unwrap();
    w.take();
    assert_eq!(w.s.unarchive(sid(1)), Err(Refusal::Deleted));
    assert_eq!(w.s.state(sid(1)), Some(&SessionState::Archived));
    // Even a forged record after the deletion cannot bring it back.
    let mut records = w.records();
    records.push(SessionRecord::Unarchived { session: sid(1) });
    let folded = Sessions::recover(b"again", &records);
    assert_eq!(folded.state(sid(1)), Some(&SessionState::Archived));
    assert_eq!(w.s.unarchive(sid(9)), Err(Refusal::UnknownSession));
}

#[test]
fn a_rejoin_waits_on_an_engine_timer_and_ends_as_a_timeout_never_a_new_launch() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    w.launch_with(&p, Some(turn(1)), 1);
    w.fail_turn(turn(1), 1);
    let a =
        w.s.begin(sid(1), Purpose::Resume, Some(ResumeCause::User), None, T0)
            .unwrap();
    let effects = w.resume_to_load(a, ProfileLookup::Found(p));
    let at = effects
        .iter()
        .find_map(|e| match e {
            SessionEffect::SetTimer {
                attempt,
                timer: AttemptTimer::Rejoin,
                at,
            } if *attempt == a => Some(*at),
            _ => None,
        })
        .expect("the wait is a timer the shell sets, not a poll");
    assert_eq!(at, T0.plus(REJOIN_TIMEOUT_MS));
    // Early: nothing happens.
    assert_eq!(
        w.s.handle_timer(a, AttemptTimer::Rejoin, T0.plus(1)),
        Handled::Stale
    );
    assert!(matches!(w.trace().state, SessionState::Starting { .. }));
    assert_eq!(
        w.s.handle_timer(a, AttemptTimer::Rejoin, at),
        Handled::Applied
    );
    let effects = w.take();
    assert!(
        launch_effect(&effects).is_none(),
        "a timeout is not a fallback"
    );
    assert!(matches!(
        &w.trace().state,
        SessionState::Failed(f) if f.cause == FailureCause::Load { error: LoadError::Timeout }
    ));
    // A late timer of the same attempt changes nothing.
    assert_eq!(
        w.s.handle_timer(a, AttemptTimer::Rejoin, at),
        Handled::Stale
    );
}

#[test]
fn the_rejoin_verdict_needs_the_current_generation_attached() {
    use crate::id::{LeaseId, WorkspaceId};
    use crate::journal::{JournalEntry, JournalRecord};
    use crate::projection::{Projection, RetentionPolicy};
    let mut p = Projection::new(RetentionPolicy::default());
    let lease = LeaseId::from_u128(9).unwrap();
    let workspace = WorkspaceId::from_u128(WS).unwrap();
    let records = [
        JournalRecord::LeaseGranted { workspace, lease },
        JournalRecord::RuntimeAssigned {
            lease,
            runtime: rt(1),
            generation: Generation(1),
            execution: exec(1),
        },
    ];
    for (i, record) in records.into_iter().enumerate() {
        p.apply(&JournalEntry {
            v: crate::schema::V1,
            position: i as u64 + 1,
            at: T0,
            record,
        })
        .unwrap();
    }
    assert_eq!(rejoin_verdict(&p, rt(1), Generation(1), false), None);
    assert_eq!(rejoin_verdict(&p, rt(1), Generation(1), true), Some(Ok(())));
    assert_eq!(
        rejoin_verdict(&p, rt(1), Generation(2), true),
        Some(Err(LoadError::UnknownSession))
    );
    assert_eq!(
        rejoin_verdict(&p, rt(2), Generation(1), true),
        Some(Err(LoadError::UnknownSession))
    );
}

#[test]
fn a_lost_launch_is_waited_for_on_an_engine_timer_then_replaced_once() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    let a = w.s.begin(sid(1), Purpose::Launch, None, None, T0).unwrap();
    w.take();
    w.s.handle_profile(a, ProfileLookup::Found(p), T0);
    let effects = w.answer_credentials(a);
    assert!(launch_effect(&effects).is_some());
    // The shell found an earlier generation nobody is bound to.
    assert_eq!(
        w.s.wait_for_lost_launch(a, rt(7), Generation(7), T0),
        Handled::Applied
    );
    let at = w
        .take()
        .iter()
        .find_map(|e| match e {
            SessionEffect::SetTimer {
                timer: AttemptTimer::Adoption,
                at,
                ..
            } => Some(*at),
            _ => None,
        })
        .expect("the wait is an engine timer");
    assert_eq!(at, T0.plus(ADOPTION_TIMEOUT_MS));
    assert_eq!(
        w.s.handle_timer(a, AttemptTimer::Adoption, T0),
        Handled::Stale
    );
    assert_eq!(
        w.s.handle_timer(a, AttemptTimer::Adoption, at),
        Handled::Applied
    );
    let replaced = w.take();
    assert!(
        matches!(&replaced[..], [SessionEffect::ReplaceLostLaunch { attempt, runtime, generation }]
            if *attempt == a && *runtime == rt(7) && *generation == Generation(7)),
        "{replaced:?}"
    );
    // Only once: a second firing finds no wait.
    assert_eq!(
        w.s.handle_timer(a, AttemptTimer::Adoption, at),
        Handled::Stale
    );
    assert!(w.take().is_empty());
}

#[test]
fn an_adopted_lost_launch_ends_the_wait_and_its_timer_does_nothing() {
    let mut w = World::new();
    let p = profile(1, 1, &[]);
    let a = w.s.begin(sid(1), Purpose::Launch, None, None, T0).unwrap();
    w.take();
    w.s.handle_profile(a, ProfileLookup::Found(p), T0);
    w.answer_credentials(a);
    w.s.wait_for_lost_launch(a, rt(7), Generation(7), T0);
    w.take();
    // It dialed in: the shell adopts it as this attempt's launch.
    assert_eq!(
        w.s.handle_launched(a, exec(7), Generation(7), rt(7), T0),
        Handled::Applied
    );
    assert_eq!(
        w.s.handle_timer(a, AttemptTimer::Adoption, T0.plus(ADOPTION_TIMEOUT_MS)),
        Handled::Stale,
        "no replacement after an adoption"
    );
    assert!(!w
        .take()
        .iter()
        .any(|e| matches!(e, SessionEffect::ReplaceLostLaunch { .. })));
    // A stale attempt cannot start a wait.
    assert_eq!(
        w.s.wait_for_lost_launch(a, rt(8), Generation(8), T0),
        Handled::Stale
    );
}

// ----- many sessions: one live runtime -------------------------------------

#[test]
fn set_aside_stops_an_idle_runtime_by_identity_and_the_session_resumes_on_its_workspace() {
    let mut w = World::new();
    w.launch_with(&profile(1, 1, &[]), None, 1);
    assert_eq!(w.s.set_aside(sid(1)), Ok(()));
    let effects = w.take();
    assert!(effects.iter().any(|e| matches!(
        e,
        SessionEffect::TerminateRuntime { execution, generation, runtime, attempt: None }
            if *execution == exec(1) && *generation == Generation(1) && *runtime == rt(1)
    )));
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, SessionEffect::RemoveWorkspace { .. })),
        "the workspace stays"
    );
    assert_eq!(w.s.state(sid(1)), Some(&SessionState::Detached));
    // Opening it again resumes the retained execution (its workspace).
    assert!(w
        .s
        .begin(
            sid(1),
            Purpose::Resume,
            Some(ResumeCause::Automatic),
            None,
            T0
        )
        .is_ok());
    // Setting aside a session that runs nothing changes nothing.
    let mut idle = World::new();
    assert_eq!(idle.s.set_aside(sid(1)), Ok(()));
    assert_eq!(idle.s.state(sid(1)), Some(&SessionState::New));
}

#[test]
fn set_aside_is_refused_while_a_turn_runs_or_a_start_is_under_way() {
    let mut w = World::new();
    w.launch_with(&profile(1, 1, &[]), Some(turn(1)), 1);
    assert_eq!(w.s.set_aside(sid(1)), Err(Refusal::TurnRunning));
    assert_eq!(w.s.state(sid(1)), Some(&SessionState::Running));
    assert!(w
        .take()
        .iter()
        .all(|e| !matches!(e, SessionEffect::TerminateRuntime { .. })));

    let mut starting = World::new();
    let a = starting
        .s
        .begin(sid(1), Purpose::Launch, None, None, T0)
        .unwrap();
    assert_eq!(
        starting.s.set_aside(sid(1)),
        Err(Refusal::Busy { attempt: a })
    );
}

#[test]
fn rename_is_journalled_trimmed_and_bounded_and_a_blank_name_changes_nothing() {
    let mut w = World::new();
    assert_eq!(w.s.rename(sid(1), "  Build fix  "), Ok(true));
    assert_eq!(w.s.rename(sid(1), "   "), Ok(false));
    let long = "x".repeat(500);
    assert_eq!(w.s.rename(sid(1), &long), Ok(true));
    w.take();
    let names: Vec<String> = w
        .records()
        .iter()
        .filter_map(|r| match r {
            SessionRecord::Renamed { title, .. } => Some(title.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["Build fix".to_owned(), "x".repeat(80)]);
    assert_eq!(w.s.rename(sid(9), "x"), Err(Refusal::UnknownSession));
    w.s.delete(sid(1)).unwrap();
    assert_eq!(w.s.rename(sid(1), "again"), Err(Refusal::Deleted));
}
