//! The engine driven by hand, without runtimes: what it gives back and
//! what it refuses. The seeded simulation (`tests/src/engine_sim.rs`)
//! drives it with everything else.

use lifeline_core::phrase::{JournalFault, Phrase};
use lifeline_core::profile::{Profile, ProfileLookup};
use lifeline_core::recovery::Action;
use lifeline_core::{Millis, ProfileId, Projection, RetentionPolicy, StartCause, TurnId};
use lifeline_protocol::{ControllerToPage, JournalStatus, Role};

use crate::{Effect, Engine, Recovered, Slots};

/// An engine that has just led an empty journal, before any settling.
fn leading() -> Engine {
    let mut e = Engine::new(Role::Leader, b"engine tests");
    e.handle_start(Role::Leader);
    e.handle_journal_open(2, Some("test".into()));
    e.lead(
        Recovered {
            projection: Projection::new(RetentionPolicy::default()),
            unreadable: 0,
            cause: StartCause::ControllerRestart,
            entropy: b"core".to_vec(),
        },
        Millis(1),
    );
    e
}

/// A leader on an empty journal whose default profile is the built-in
/// agent; every lookup is answered at once. Returns what reached the page.
fn leader() -> (Engine, Vec<ControllerToPage>) {
    let mut e = leading();
    let mut page = Vec::new();
    settle(&mut e, &mut page);
    (e, page)
}

/// [`leader`], with Stop pressed while its first start waits for a runtime
/// that never comes: the start is cancelled, and the card says so (a first
/// start alone brings none).
fn stopped_leader() -> (Engine, Vec<ControllerToPage>) {
    let (mut e, mut page) = leader();
    assert_eq!(e.card(), None, "a first start is no recovery");
    e.handle_stop(Millis(3));
    settle(&mut e, &mut page);
    (e, page)
}

fn profile() -> Profile {
    Profile::built_in(ProfileId::from_u128(0x9f).expect("a valid id"))
}

/// Carries out effects the way a shell with no runtime would: journal
/// writes succeed, the profile store answers; spawns are never answered.
fn settle(e: &mut Engine, page: &mut Vec<ControllerToPage>) {
    for _ in 0..10_000 {
        let Some(effect) = e.poll_effect() else {
            return;
        };
        match effect {
            Effect::Persist(batch) => e.handle_persisted(batch, Ok(()), Millis(2)),
            Effect::OpenProfiles => e.start_sessions(profile().id, b"sessions", Millis(2)),
            Effect::LookupProfile { attempt, .. } => {
                e.handle_profile(attempt, ProfileLookup::Found(profile()), Millis(2))
            }
            Effect::Page(message) => page.push(message),
            _ => {}
        }
    }
    panic!("the engine never quieted");
}

fn refused(page: &[ControllerToPage], turn: TurnId) -> Option<&Phrase> {
    page.iter().find_map(|m| match m {
        ControllerToPage::PromptRefused { turn: t, message } if *t == turn => Some(message),
        _ => None,
    })
}

#[test]
fn a_lost_journal_gives_back_every_prompt_it_had_not_recorded() {
    let (mut e, mut page) = leader();
    let turn = TurnId::from_u128(0x71).expect("a valid id");
    // The session is still starting (no runtime answers): the message waits.
    e.handle_prompt(turn, "$ echo waiting".into(), Millis(3));
    settle(&mut e, &mut page);
    assert!(e.held_prompts().any(|t| t == turn), "the prompt is held");
    assert_eq!(refused(&page, turn), None);

    e.handle_journal_lost(JournalFault::Removed);
    settle(&mut e, &mut page);
    assert_eq!(
        refused(&page, turn),
        Some(&Phrase::Journal {
            fault: JournalFault::Removed
        }),
        "the text goes back to the message box with the reason"
    );
    assert_eq!(e.held_prompts().count(), 0);
    let gone = page.iter().rev().find_map(|m| match m {
        ControllerToPage::Status(s) => Some(s.journal.clone()),
        _ => None,
    });
    assert!(matches!(gone, Some(JournalStatus::Gone { .. })), "{gone:?}");

    // And every later message is refused with the same reason.
    let later = TurnId::from_u128(0x72).expect("a valid id");
    e.handle_prompt(later, "$ echo later".into(), Millis(4));
    settle(&mut e, &mut page);
    assert!(refused(&page, later).is_some());
}

#[test]
fn an_action_the_card_does_not_offer_is_answered_with_the_cards_reason() {
    let (mut e, mut page) = stopped_leader();
    let card = e.card().expect("a cancelled session has a card");
    let resume = card
        .actions
        .iter()
        .find(|a| a.action == Action::Resume)
        .expect("the card lists Resume");
    let reason = resume
        .unavailable
        .clone()
        .expect("a session that never ran cannot be resumed");
    page.clear();
    e.handle_recover(Action::Resume, Millis(5));
    settle(&mut e, &mut page);
    let answered = page.iter().find_map(|m| match m {
        ControllerToPage::Notice {
            message: Some(Phrase::ActionNotPossible { action, reason }),
            ..
        } => Some((*action, (**reason).clone())),
        _ => None,
    });
    assert_eq!(answered, Some((Action::Resume, reason)));
}

#[test]
fn slots_replace_and_give_back_what_they_held() {
    let mut s: Slots<u8, &str> = Slots::new();
    assert_eq!(s.insert(1, "a"), None);
    assert_eq!(s.insert(2, "b"), None);
    assert_eq!(s.insert(1, "c"), Some("a"));
    assert_eq!(s.get(&1), Some(&"c"));
    assert!(s.contains(&2));
    assert_eq!(s.remove(&2), Some("b"));
    assert_eq!(s.remove(&2), None);
    assert_eq!(s.take_all(), vec![(1, "c")]);
    assert_eq!(s.get(&1), None);
}

fn waiting(page: &[ControllerToPage]) -> Vec<(TurnId, String)> {
    page.iter()
        .rev()
        .find_map(|m| match m {
            ControllerToPage::Status(s) => s.lifecycle.as_ref(),
            _ => None,
        })
        .map(|l| l.waiting.iter().map(|w| (w.turn, w.text.clone())).collect())
        .unwrap_or_default()
}

#[test]
fn waiting_prompts_are_listed_in_order_and_one_can_be_withdrawn() {
    let (mut e, mut page) = leader();
    let turns: Vec<TurnId> = (0x81..=0x84)
        .map(|n| TurnId::from_u128(n).expect("a valid id"))
        .collect();
    // The session is starting (no runtime answers): every prompt waits.
    for (i, turn) in turns.iter().enumerate() {
        e.handle_prompt(*turn, format!("$ echo {i}"), Millis(3));
        settle(&mut e, &mut page);
    }
    let listed = waiting(&page);
    assert_eq!(listed.iter().map(|(t, _)| *t).collect::<Vec<_>>(), turns);
    assert_eq!(listed[1].1, "$ echo 1");

    e.handle_withdraw_prompt(turns[2], Millis(4));
    settle(&mut e, &mut page);
    assert_eq!(
        waiting(&page).iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        vec![turns[0], turns[1], turns[3]]
    );
    assert!(!e.held_prompts().any(|t| t == turns[2]), "its text is gone");
    // A turn that is not waiting (withdrawn already) changes nothing.
    e.handle_withdraw_prompt(turns[2], Millis(5));
    settle(&mut e, &mut page);
    assert_eq!(waiting(&page).len(), 3);
    assert_eq!(
        refused(&page, turns[2]),
        None,
        "a withdrawal is not a refusal"
    );
}

#[test]
fn a_long_waiting_prompt_is_shown_by_its_start() {
    let (mut e, mut page) = leader();
    for (n, text) in [(0x91, "$ echo first".to_owned()), (0x92, "ä".repeat(500))] {
        e.handle_prompt(TurnId::from_u128(n).expect("a valid id"), text, Millis(3));
        settle(&mut e, &mut page);
    }
    let listed = waiting(&page);
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[1].1.chars().count(), 140);
}

#[test]
fn an_informational_notice_expires_and_a_later_one_under_its_key_lives_on() {
    let mut e = Engine::new(Role::Follower, b"engine tests");
    let mut page = Vec::new();
    e.handle_recover(Action::Resume, Millis(10));
    e.expire_notices(Millis(10));
    let timer = |e: &mut Engine| {
        let mut found = None;
        while let Some(effect) = e.poll_effect() {
            if let Effect::SetTimer { key, at } = effect {
                found = Some((key, at));
            }
        }
        found.expect("the notice's expiry is set")
    };
    let (first, at) = timer(&mut e);
    assert_eq!(at, Millis(10 + crate::NOTICE_TTL_MS));
    // The same notice again before it expired: the first timer no longer
    // ends it, the second does.
    e.handle_recover(Action::Resume, Millis(20));
    e.expire_notices(Millis(20));
    let (second, _) = timer(&mut e);
    e.handle_timer(first, at);
    settle(&mut e, &mut page);
    let cleared = |page: &[ControllerToPage]| {
        page.iter().any(|m| {
            matches!(m, ControllerToPage::Notice { key, message: None, .. } if key == "recovery")
        })
    };
    assert!(!cleared(&page), "the older expiry is stale");
    e.handle_timer(second, Millis(20 + crate::NOTICE_TTL_MS));
    settle(&mut e, &mut page);
    assert!(cleared(&page), "the notice is cleared when it expires");
}

#[test]
fn the_card_the_engine_checks_says_what_the_page_is_shown() {
    let (e, page) = stopped_leader();
    let shown = page
        .iter()
        .rev()
        .find_map(|m| match m {
            ControllerToPage::Recovery { card } => card.clone(),
            _ => None,
        })
        .expect("a cancelled session has a card");
    let checked = e.card().expect("a card");
    // Continue from history's summary is built from the same facts as
    // `card()`; once they differed on the tab's attachment.
    assert_eq!(checked.report.rows, shown.report.rows);
    let attachments = checked
        .report
        .rows
        .iter()
        .find(|r| r.dimension == lifeline_core::recovery::Dimension::Attachments)
        .expect("an Attachments row");
    assert_eq!(
        attachments.verdict,
        lifeline_core::recovery::Verdict::Survived
    );
}
fn sessions_list(page: &[ControllerToPage]) -> Option<(Option<lifeline_core::SessionId>, usize)> {
    page.iter().rev().find_map(|m| match m {
        ControllerToPage::Sessions { open, list } => Some((*open, list.len())),
        _ => None,
    })
}

fn said(page: &[ControllerToPage], phrase: &Phrase) -> bool {
    page.iter()
        .any(|m| matches!(m, ControllerToPage::Notice { message: Some(p), .. } if p == phrase))
}

#[test]
fn the_page_is_told_every_session_and_the_open_one() {
    let (e, page) = leader();
    let open = e.session().expect("a session is open");
    assert_eq!(sessions_list(&page), Some((Some(open), 1)));
}

#[test]
fn no_other_session_opens_while_the_open_one_starts_its_runtime() {
    let (mut e, mut page) = leader();
    let open = e.session().expect("a session is open");
    // No runtime answers the launch: the open session is starting.
    e.handle_new_session(Millis(3));
    settle(&mut e, &mut page);
    assert!(
        said(&page, &Phrase::SwitchWhileWorking),
        "the page says why"
    );
    assert_eq!(e.session(), Some(open), "the open session stays open");
    assert_eq!(
        e.projection().map(|p| p.sessions.len()),
        Some(1),
        "no session was opened in the journal"
    );
}

#[test]
fn an_unknown_session_is_not_opened_and_an_early_request_is_kept_for_recovery() {
    let (mut e, mut page) = leader();
    let open = e.session().expect("a session is open");
    let unknown = lifeline_core::SessionId::from_u128(0x5e55).expect("a valid id");
    page.clear();
    e.handle_open_session(unknown, Millis(3));
    settle(&mut e, &mut page);
    assert_eq!(e.session(), Some(open));
    assert_eq!(
        sessions_list(&page),
        Some((Some(open), 1)),
        "the page is corrected"
    );

    // Asked for before the journal was read: that session is shown first.
    let mut early = Engine::new(Role::Leader, b"early");
    early.handle_open_session(open, Millis(1));
    assert_eq!(early.preferred, Some(open));
}

#[test]
fn a_rename_is_journalled_and_names_the_session_in_the_list() {
    let (mut e, mut page) = leader();
    let open = e.session().expect("a session is open");
    e.handle_rename_session(open, "  Build fix ".into(), Millis(3));
    settle(&mut e, &mut page);
    let listed = page.iter().rev().find_map(|m| match m {
        ControllerToPage::Sessions { list, .. } => list.first().map(|i| i.title.clone()),
        _ => None,
    });
    assert_eq!(listed.as_deref(), Some("Build fix"));
    e.handle_search_sessions("build".into());
    settle(&mut e, &mut page);
    let found = page.iter().rev().find_map(|m| match m {
        ControllerToPage::SessionSearch { matches, .. } => Some(matches.clone()),
        _ => None,
    });
    assert_eq!(found, Some(vec![open]));
}

// ----- Delete --------------------------------------------------------------

mod delete {
    use super::*;
    use lifeline_core::environment::Environment;
    use lifeline_core::journal::{JournalEntry, JournalRecord, TurnAgent, TurnStatus};
    use lifeline_core::schema::decode;
    use lifeline_core::session_record::SessionRecord;
    use lifeline_core::{PersistBatch, ProjectionSnapshot, SessionId, WorkspaceId, V1};

    fn sid(n: u128) -> SessionId {
        SessionId::from_u128(n).expect("a valid id")
    }

    /// Two sessions in the sandbox; the second has a finished turn whose
    /// text must not survive its deletion.
    fn journal() -> Projection {
        let mut p = Projection::new(RetentionPolicy::default());
        let mut records = Vec::new();
        for s in [1u128, 2] {
            let workspace = WorkspaceId::from_u128(0x1000 + s).expect("a valid id");
            records.push(JournalRecord::SessionOpened {
                session: sid(s),
                workspace,
                title: String::new(),
            });
            records.push(JournalRecord::Session {
                record: SessionRecord::Created {
                    session: sid(s),
                    workspace,
                    environment: Environment::Worker,
                    profile: profile().id,
                },
            });
        }
        let turn = TurnId::from_u128(0x77).expect("a valid id");
        records.push(JournalRecord::TurnRecorded {
            session: sid(2),
            turn,
            prompt: "secret words".into(),
            plan: Vec::new(),
            agent: TurnAgent::default(),
        });
        records.push(JournalRecord::TurnFinished {
            turn,
            status: TurnStatus::Completed,
            reply: "secret reply".into(),
            ending: None,
        });
        for (i, record) in records.into_iter().enumerate() {
            let entry = JournalEntry {
                v: V1,
                position: i as u64 + 1,
                at: Millis(10),
                record,
            };
            p.apply(&entry).expect("the record applies");
        }
        p
    }

    /// What a shell would see: written batches and workspace removals.
    #[derive(Default)]
    struct Seen {
        page: Vec<ControllerToPage>,
        batches: Vec<std::sync::Arc<PersistBatch>>,
        removed: Vec<(SessionId, WorkspaceId)>,
        logged: Vec<String>,
    }

    fn run(e: &mut Engine, seen: &mut Seen) {
        for _ in 0..10_000 {
            let Some(effect) = e.poll_effect() else {
                return;
            };
            match effect {
                Effect::Persist(batch) => {
                    seen.batches.push(batch.clone());
                    e.handle_persisted(batch, Ok(()), Millis(2))
                }
                Effect::OpenProfiles => e.start_sessions(profile().id, b"sessions", Millis(2)),
                Effect::LookupProfile { attempt, .. } => {
                    e.handle_profile(attempt, ProfileLookup::Found(profile()), Millis(2))
                }
                Effect::Page(message) => seen.page.push(message),
                Effect::RemoveWorkspace { session, workspace } => {
                    seen.removed.push((session, workspace))
                }
                Effect::Log(line) => seen.logged.push(line),
                _ => {}
            }
        }
        panic!("the engine never quieted");
    }

    /// A leader showing session 1 (starting: no runtime ever answers).
    fn leading(projection: Projection) -> (Engine, Seen) {
        let mut e = Engine::new(Role::Leader, b"engine tests");
        e.handle_start(Role::Leader);
        e.handle_journal_open(2, Some("test".into()));
        e.handle_open_session(sid(1), Millis(1));
        e.lead(
            Recovered {
                projection,
                unreadable: 0,
                cause: StartCause::HostLoss,
                entropy: b"core".to_vec(),
            },
            Millis(1),
        );
        let mut seen = Seen::default();
        run(&mut e, &mut seen);
        assert_eq!(e.session(), Some(sid(1)));
        (e, seen)
    }

    fn listed(page: &[ControllerToPage]) -> Vec<SessionId> {
        page.iter()
            .rev()
            .find_map(|m| match m {
                ControllerToPage::Sessions { list, .. } => {
                    Some(list.iter().map(|i| i.session).collect())
                }
                _ => None,
            })
            .expect("a session list was sent")
    }

    fn noticed(page: &[ControllerToPage], phrase: &Phrase) -> bool {
        page.iter()
            .any(|m| matches!(m, ControllerToPage::Notice { message: Some(p), .. } if p == phrase))
    }

    #[test]
    fn a_starting_session_is_not_deleted_and_the_page_is_told_why() {
        let (mut e, mut seen) = leading(journal());
        e.handle_delete_session(sid(1), Millis(3));
        run(&mut e, &mut seen);
        assert!(noticed(&seen.page, &Phrase::AgentWorkingStopFirst));
        assert!(!seen.batches.iter().any(|b| b.purge.is_some()));
        let p = e.projection().expect("leading");
        assert!(!p.sessions[&sid(1)].deleted);
    }

    #[test]
    fn deleting_the_session_opened_last_goes_on_with_the_one_before_not_a_new_one() {
        let p = journal();
        // Both were opened at the same time; the later id counts as last.
        assert_eq!(crate::open::pick_session(&p, None), Some(sid(2)));
        // What the tab shows after session 2 is deleted while open (a new
        // empty session was made here once: the choice was made before
        // leaving the deleted one out).
        assert_eq!(crate::open::opened_last(&p, Some(sid(2))), Some(sid(1)));
        assert_eq!(crate::open::opened_last(&p, Some(sid(1))), Some(sid(2)));
        let mut only = p.clone();
        only.sessions.retain(|s, _| *s == sid(2));
        assert_eq!(crate::open::opened_last(&only, Some(sid(2))), None);
    }

    #[test]
    fn delete_writes_a_tombstone_with_its_removal_and_the_only_snapshot() {
        let (mut e, mut seen) = leading(journal());
        let size = e.projection().unwrap().sessions[&sid(2)].bytes;
        assert!(
            size > "secret wordssecret reply".len() as u64,
            "storage is counted: {size}"
        );
        let before = seen.batches.len();
        e.handle_delete_session(sid(2), Millis(3));
        run(&mut e, &mut seen);

        let batch = seen.batches[before..]
            .iter()
            .find(|b| b.purge.is_some())
            .expect("a batch carries the removal");
        assert!(batch.entries.iter().any(|en| matches!(
            &en.record,
            JournalRecord::Session { record: SessionRecord::Tombstone { session, workspace: Some(_) } }
                if *session == sid(2)
        )));
        let purge = batch.purge.as_ref().unwrap();
        // Its opening, lifecycle and both turn records, by position.
        for position in [3, 4, 5, 6] {
            assert!(
                purge.records.contains(&position),
                "{position} in {:?}",
                purge.records
            );
        }
        assert!(
            !purge.records.contains(&1) && !purge.records.contains(&2),
            "session 1 stays"
        );

        // The snapshot written with it holds nothing of the session.
        let (at, json) = purge.snapshot.as_ref().expect("a snapshot");
        assert_eq!(*at, batch.entries.last().unwrap().position);
        assert!(!json.contains("secret"), "{json}");
        let snapshot: ProjectionSnapshot = decode(json.as_bytes()).expect("it reads back");
        assert!(snapshot.projection.sessions[&sid(2)].deleted);
        assert!(snapshot.projection.turns.is_empty());

        // The workspace goes only after the tombstone is durable.
        assert_eq!(
            seen.removed,
            vec![(sid(2), WorkspaceId::from_u128(0x1002).unwrap())]
        );
        assert_eq!(listed(&seen.page), vec![sid(1)]);

        // Removed: recorded, and nothing is left to clean.
        e.handle_workspace_removed(sid(2), Ok(()), Millis(4));
        run(&mut e, &mut seen);
        assert_eq!(e.projection().unwrap().sessions[&sid(2)].clean, None);
        // A second delete is refused: it is gone.
        e.handle_delete_session(sid(2), Millis(5));
        run(&mut e, &mut seen);
        assert!(noticed(
            &seen.page,
            &Phrase::Refused {
                refusal: lifeline_core::session::Refusal::Deleted
            }
        ));
    }

    #[test]
    fn recovery_after_a_delete_never_resurrects_it_and_retries_the_cleanup() {
        let (mut e, mut seen) = leading(journal());
        e.handle_delete_session(sid(2), Millis(3));
        run(&mut e, &mut seen);
        let purge = seen.batches.iter().find_map(|b| b.purge.clone()).unwrap();
        let snapshot: ProjectionSnapshot =
            decode(purge.snapshot.unwrap().1.as_bytes()).expect("it reads back");

        // The tab died before the workspace was removed: the next leader
        // folds the snapshot and tries again.
        let (e2, seen2) = leading(snapshot.projection.clone());
        assert_eq!(listed(&seen2.page), vec![sid(1)]);
        assert_eq!(
            seen2.removed,
            vec![(sid(2), WorkspaceId::from_u128(0x1002).unwrap())]
        );
        assert!(!e2
            .projection()
            .unwrap()
            .turns
            .values()
            .any(|t| t.session == sid(2)));
        // Opening it by its address shows another session.
        let mut e3 = Engine::new(Role::Leader, b"engine tests");
        e3.handle_start(Role::Leader);
        e3.handle_open_session(sid(2), Millis(1));
        e3.lead(
            Recovered {
                projection: snapshot.projection,
                unreadable: 0,
                cause: StartCause::HostLoss,
                entropy: b"core".to_vec(),
            },
            Millis(1),
        );
        let mut seen3 = Seen::default();
        run(&mut e3, &mut seen3);
        assert_eq!(e3.session(), Some(sid(1)));
    }

    #[test]
    fn a_follower_sees_it_gone() {
        let (mut e, mut seen) = leading(journal());
        let mut f = Engine::new(Role::Follower, b"follower");
        f.handle_start(Role::Follower);
        f.follow(journal());
        let mut fseen = Seen::default();
        run(&mut f, &mut fseen);
        assert_eq!(listed(&fseen.page).len(), 2);
        let before = seen.batches.len();
        e.handle_delete_session(sid(2), Millis(3));
        run(&mut e, &mut seen);
        let entries: Vec<JournalEntry> = seen.batches[before..]
            .iter()
            .flat_map(|b| b.entries.clone())
            .collect();
        // The follower skips what its fold already holds (by position).
        let mut all: Vec<JournalEntry> = seen
            .batches
            .iter()
            .flat_map(|b| b.entries.clone())
            .collect();
        all.extend(entries);
        f.handle_followed(all);
        run(&mut f, &mut fseen);
        assert_eq!(listed(&fseen.page), vec![sid(1)]);
        let p = f.projection().expect("following");
        assert!(p.sessions[&sid(2)].deleted);
        assert!(
            p.turns.is_empty(),
            "nothing of it stays in the follower's fold"
        );
        assert!(fseen.removed.is_empty(), "a follower removes nothing");
    }

    #[test]
    fn a_follower_words_an_entry_it_does_not_believe_by_position_and_logs_why() {
        let mut f = Engine::new(Role::Follower, b"follower");
        f.handle_start(Role::Follower);
        let folded = journal();
        let next = folded.position + 1;
        f.follow(folded);
        let mut fseen = Seen::default();
        run(&mut f, &mut fseen);
        // A session opened a second time under an identity already used.
        let reused = JournalEntry {
            v: V1,
            position: next,
            at: Millis(11),
            record: JournalRecord::SessionOpened {
                session: sid(1),
                workspace: WorkspaceId::from_u128(0x5151).unwrap(),
                title: "again".into(),
            },
        };
        f.handle_followed(vec![reused]);
        run(&mut f, &mut fseen);
        let said: Vec<&Phrase> = fseen
            .page
            .iter()
            .filter_map(|m| match m {
                ControllerToPage::Notice {
                    message: Some(p), ..
                } => Some(p),
                _ => None,
            })
            .collect();
        assert!(
            said.contains(&&Phrase::EntryNotBelieved { position: next }),
            "{said:?}"
        );
        assert_eq!(fseen.logged.len(), 1, "{:?}", fseen.logged);
        assert!(
            fseen.logged[0].contains(&format!("position {next}")),
            "the log says which entry and why: {}",
            fseen.logged[0]
        );
        assert_eq!(f.projection().expect("following").position, next);
    }
}

#[test]
fn a_new_language_posts_the_card_again_and_nothing_else_changes() {
    let (mut e, _) = stopped_leader();
    let card = |page: &[ControllerToPage]| {
        page.iter().rev().find_map(|m| match m {
            ControllerToPage::Recovery { card } => Some(card.clone()),
            _ => None,
        })
    };
    // Nothing changed: the card is not posted again.
    let mut page = Vec::new();
    e.handle_retry_now(Millis(3));
    settle(&mut e, &mut page);
    assert_eq!(card(&page), None);
    // The reader switched language: the shell words it anew, so the
    // engine posts it again, the same card.
    e.handle_reword(Millis(4));
    settle(&mut e, &mut page);
    let reposted = card(&page).expect("the card again").expect("a card");
    assert_eq!(Some(*reposted), e.card());
}

/// A model request that waits (a retry wait, a local model's load that
/// hangs) ends: at once when its session is left (Start fresh) or archived
/// — found by the engine simulation (seed 9489 of 10,000), where a request
/// left by Start fresh in a retry wait was sent again and its load then
/// hung in a session no longer open, where no Stop could reach it — and by
/// the engine's own bound when nobody stops it.
pub(super) mod waiting_request {
    use lifeline_core::profile::{Provider, Secret};
    use lifeline_core::{
        CredentialId, Generation, PortId, ProviderFailureClass, ProviderRequestId, Runtime,
        RuntimeConfig, RuntimeEffect, RuntimeId,
    };

    use super::*;
    use crate::{FactsObserved, FailedAt, ProviderFailure, TimerKey, WorkspaceObserved};

    fn model_profile() -> Profile {
        let mut p = profile();
        p.provider = Provider::OpenAiCompatible {
            base_url: "http://model.invalid/v1".into(),
            model: "m".into(),
        };
        p.api_key = Some(CredentialId::from_u128(0x4e7).expect("a valid id"));
        p
    }

    /// The engine with one runtime that answers at once, a profile store
    /// and credentials that answer at once, and a provider that only
    /// records what it is asked.
    pub(in crate::tests) struct World {
        pub e: Engine,
        pub now: Millis,
        /// The runtime spawned last (an earlier one stays silent).
        pub(in crate::tests) rt: Option<(RuntimeId, Generation, PortId, Runtime)>,
        pub page: Vec<ControllerToPage>,
        pub fetched: Vec<ProviderRequestId>,
        provider_timer: Option<(TimerKey, Millis)>,
        /// Every runtime whose life lock the engine asked to watch.
        watched: Vec<(RuntimeId, Generation, PortId)>,
        /// Whether a spawned runtime comes up; else its spawn is only
        /// recorded (`spawned`), like a worker still loading.
        answer_spawns: bool,
        spawned: Vec<lifeline_core::RuntimeIdentity>,
        /// Every port the engine closed.
        closed: Vec<PortId>,
        /// Every provider request the engine aborted.
        aborted: Vec<ProviderRequestId>,
        /// What the journal holds: every persisted entry, in order.
        pub(in crate::tests) journal: Vec<lifeline_core::journal::JournalEntry>,
        /// Timers other than the provider's, as armed.
        timers: Vec<(TimerKey, Millis)>,
        /// The profile every session uses.
        profile: Profile,
        /// Journal writes are handed over but not confirmed (`held`) until
        /// [`World::release`].
        pub hold: bool,
        pub held: Vec<std::sync::Arc<lifeline_core::PersistBatch>>,
    }

    impl World {
        pub fn new() -> World {
            World::with(model_profile())
        }

        pub fn with(profile: Profile) -> World {
            World::spawning(profile, true)
        }

        /// `answer_spawns`: whether a spawned runtime comes up, from the
        /// first session's on.
        pub fn spawning(profile: Profile, answer_spawns: bool) -> World {
            let e = super::leading();
            let mut w = World {
                e,
                now: Millis(1),
                rt: None,
                page: Vec::new(),
                fetched: Vec::new(),
                provider_timer: None,
                watched: Vec::new(),
                answer_spawns,
                spawned: Vec::new(),
                closed: Vec::new(),
                aborted: Vec::new(),
                journal: Vec::new(),
                timers: Vec::new(),
                profile,
                hold: false,
                held: Vec::new(),
            };
            w.settle();
            w
        }

        /// Confirms the writes held so far, one batch at a time, settling
        /// after each (what they lead to is held again while `hold`).
        /// Returns whether there were any.
        pub fn release(&mut self) -> bool {
            let held = std::mem::take(&mut self.held);
            let any = !held.is_empty();
            for batch in held {
                self.journal.extend(batch.entries.iter().cloned());
                self.e.handle_persisted(batch, Ok(()), self.now);
                self.settle();
            }
            any
        }

        pub fn settle(&mut self) {
            let now = self.now;
            for _ in 0..10_000 {
                if let Some((runtime, generation, port, rt)) = self.rt.as_mut() {
                    if let Some(effect) = rt.poll_effect() {
                        if let RuntimeEffect::Send(msg) = effect {
                            let (r, g, p) = (*runtime, *generation, *port);
                            self.e.handle_runtime_message(r, g, p, msg, now);
                        }
                        continue;
                    }
                }
                let Some(effect) = self.e.poll_effect() else {
                    return;
                };
                let e = &mut self.e;
                match effect {
                    Effect::Persist(batch) if self.hold => self.held.push(batch),
                    Effect::Persist(batch) => {
                        self.journal.extend(batch.entries.iter().cloned());
                        e.handle_persisted(batch, Ok(()), now)
                    }
                    Effect::OpenProfiles => e.start_sessions(self.profile.id, b"s", now),
                    Effect::LookupProfile { attempt, .. } => {
                        e.handle_profile(attempt, ProfileLookup::Found(self.profile.clone()), now)
                    }
                    Effect::ResolveCredentials {
                        attempt,
                        credentials,
                    } => {
                        let key = Secret::new("k".to_string());
                        let resolved = credentials
                            .into_iter()
                            .map(|id| (id, Ok(key.clone())))
                            .collect();
                        e.handle_credentials(attempt, resolved, now);
                    }
                    Effect::ObserveWorkspace {
                        attempt,
                        environment,
                        ..
                    } => e.handle_workspace_observed(
                        attempt,
                        &environment,
                        WorkspaceObserved::Sandbox(Some(true)),
                        now,
                    ),
                    Effect::ObserveFacts { session, .. } => e.handle_facts(
                        session,
                        FactsObserved {
                            workspace_exists: Some(true),
                            workspace_files: Some(0),
                            folder_access: None,
                            credentials: Some((1, 1)),
                        },
                    ),
                    Effect::SendToRuntime { message, .. } => {
                        if let Some((_, _, _, rt)) = self.rt.as_mut() {
                            let _ = rt.handle_controller(message, now);
                        }
                    }
                    Effect::Fetch { request, .. } => self.fetched.push(request),
                    Effect::WatchLife {
                        runtime,
                        generation,
                        port,
                    } => self.watched.push((runtime, generation, port)),
                    Effect::ClosePort(port) => self.closed.push(port),
                    Effect::Abort(request) => self.aborted.push(request),
                    Effect::SetTimer {
                        key: key @ TimerKey::Provider(_),
                        at,
                    } => self.provider_timer = Some((key, at)),
                    Effect::SetTimer { key, at } => self.timers.push((key, at)),
                    Effect::Page(ControllerToPage::SpawnRuntime { identity, .. })
                        if !self.answer_spawns =>
                    {
                        self.spawned.push(identity)
                    }
                    Effect::Page(ControllerToPage::SpawnRuntime { identity, .. }) => {
                        let mut rt = Runtime::new(RuntimeConfig::new(identity), now);
                        let port = e.handle_port_opened(identity.runtime, identity.generation, now);
                        rt.handle_connected(now);
                        self.rt = Some((identity.runtime, identity.generation, port, rt));
                    }
                    Effect::Page(message) => self.page.push(message),
                    _ => {}
                }
            }
            panic!("the engine never quieted");
        }

        /// The controller worker restarts: a new engine leads the journal
        /// as persisted. Runtimes already spawned live on (the page keeps
        /// them), but none has dialed the new controller yet.
        pub fn restart(&mut self) {
            self.restart_with(|_| {});
        }

        /// [`World::restart`], with `before` told to the new engine while
        /// it still reads the journal.
        pub fn restart_with(&mut self, before: impl FnOnce(&mut Engine)) {
            self.restart_around(before, |_| {});
        }

        /// [`World::restart_with`], with `led` told to the new engine once
        /// it leads, before its sessions are up (the profile store unread).
        pub fn restart_around(
            &mut self,
            before: impl FnOnce(&mut Engine),
            led: impl FnOnce(&mut Engine),
        ) {
            let (projection, refused) =
                Projection::salvage(RetentionPolicy::default(), None, &self.journal, 64);
            assert!(refused.is_empty(), "the journal replays: {refused:?}");
            let mut e = Engine::new(Role::Leader, b"engine tests, restarted");
            e.handle_start(Role::Leader);
            e.handle_journal_open(2, Some("test".into()));
            before(&mut e);
            e.lead(
                Recovered {
                    projection,
                    unreadable: 0,
                    cause: StartCause::ControllerRestart,
                    entropy: b"core, restarted".to_vec(),
                },
                self.now,
            );
            led(&mut e);
            self.e = e;
            self.rt = None;
            self.timers.clear();
            self.settle();
        }

        /// A new session whose runtime never comes up, stopped while it
        /// starts: its session and the runtime it launched.
        pub fn stopped_start(
            &mut self,
        ) -> (lifeline_core::SessionId, lifeline_core::RuntimeIdentity) {
            self.answer_spawns = false;
            self.e.handle_new_session(self.now);
            self.settle();
            let session = self.e.session().expect("a session is open");
            let identity = *self.spawned.last().expect("its runtime was spawned");
            self.e.handle_stop(self.now);
            self.settle();
            (session, identity)
        }

        /// A runtime spawned earlier (and not answered) comes up now and
        /// dials in; from here on it is the world's runtime.
        pub fn come_up(&mut self, identity: lifeline_core::RuntimeIdentity) {
            let mut rt = Runtime::new(RuntimeConfig::new(identity), self.now);
            let port = self
                .e
                .handle_port_opened(identity.runtime, identity.generation, self.now);
            rt.handle_connected(self.now);
            self.rt = Some((identity.runtime, identity.generation, port, rt));
            self.settle();
        }

        pub fn state(
            &self,
            session: lifeline_core::SessionId,
        ) -> Option<lifeline_core::session::SessionState> {
            self.e.sessions().and_then(|s| s.state(session)).cloned()
        }

        /// Whether the journal records `runtime` gone.
        pub fn gone(&self, runtime: RuntimeId) -> bool {
            self.e
                .projection()
                .and_then(|p| p.runtime(runtime))
                .is_some_and(|(_, r)| matches!(r.status, lifeline_core::RuntimeStatus::Gone { .. }))
        }

        pub fn at(&mut self, ms: u64) {
            self.now = Millis(ms);
        }

        /// A prompt whose model request has been fetched once.
        fn prompt(&mut self) -> (TurnId, ProviderRequestId) {
            self.prompt_as(0x7e57)
        }

        /// A prompt under turn `id` in the open session, whose model
        /// request has been fetched once.
        pub fn prompt_as(&mut self, id: u128) -> (TurnId, ProviderRequestId) {
            let turn = TurnId::from_u128(id).expect("a valid id");
            self.e.handle_prompt(turn, "hello".into(), self.now);
            self.settle();
            let request = *self.fetched.last().expect("the model was asked");
            assert_eq!(self.e.live_request(), Some(request));
            (turn, request)
        }

        pub fn turn_ended(&self, turn: TurnId) -> bool {
            self.e
                .projection()
                .and_then(|p| p.turns.get(&turn))
                .is_some_and(|t| t.end.is_some())
        }

        /// Archive from the session list: allowed while a turn runs (it
        /// stops the session's runtime), and it leaves the session as Start
        /// fresh does, through the same path.
        fn archive(&mut self) {
            let open = self.e.session().expect("a session is open");
            self.e
                .handle_session_action(open, lifeline_core::action::Action::Archive, self.now);
            self.settle();
            let archived = self
                .e
                .projection()
                .and_then(|p| p.sessions.get(&open))
                .is_some_and(|s| s.archived);
            assert!(archived, "the running session was archived");
        }
    }

    /// Recovery from a damaged journal says how many values were set
    /// aside and from which position the fold stopped believing, worded;
    /// which ones and why go to the log, never what they held.
    #[test]
    fn recovery_says_what_it_set_aside_and_where_it_stopped_believing() {
        use crate::salvage::{salvage, Reader, SetAside};
        use lifeline_core::journal::JournalRecord;
        let mut w = World::new();
        w.prompt_as(0x51);
        let journal = w.journal.clone();
        let last = journal.last().expect("entries").position;
        let turn = journal
            .iter()
            .position(|e| matches!(e.record, JournalRecord::TurnRecorded { .. }))
            .expect("the turn was recorded");
        let mut damaged = journal.clone();
        let lost = damaged.remove(turn).position;
        let set_aside = [SetAside {
            place: "journal",
            key: "[41]",
            position: Some(lost),
            reason: "not a journal entry",
        }];
        let s = salvage(None, &damaged, &set_aside, last, Reader::Leader);
        let refused = s
            .notices
            .iter()
            .find_map(|(key, _, p)| match p {
                Phrase::ReplayRefused { count, first } if *key == "replay" => {
                    Some((*count, *first))
                }
                _ => None,
            })
            .expect("what was refused is said");
        assert!(refused.0 >= 1 && refused.1 > lost, "{refused:?}");
        assert!(s
            .notices
            .iter()
            .any(|(_, _, p)| *p == Phrase::RecordsQuarantined { count: 1 }));
        assert_eq!(s.unreadable, 1 + refused.0);
        assert_eq!(s.projection.position, last, "no position is written over");
        assert!(
            s.logs[0].contains(&format!("position {lost}")),
            "{:?}",
            s.logs
        );
        assert!(
            s.logs.iter().any(|l| l.starts_with("refused:")),
            "{:?}",
            s.logs
        );
        assert!(
            !s.logs.iter().any(|l| l.contains("hello")),
            "no prompt text"
        );
        // A follower cannot repair: it says how much it could not read.
        let f = salvage(None, &damaged, &set_aside, last, Reader::Follower);
        let said: Vec<&Phrase> = f.notices.iter().map(|(_, _, p)| p).collect();
        assert_eq!(said, [&Phrase::FollowerUnreadable { count: 1 }]);
        // A journal read whole: nothing to say.
        let clean = salvage(None, &journal, &[], last, Reader::Leader);
        assert!(clean.notices.is_empty() && clean.logs.is_empty());
        assert_eq!(clean.unreadable, 0);
    }

    /// Stop while the session's runtime starts: the start is cancelled,
    /// its runtime stopped, and only once that runtime has exited is the
    /// cancellation settled.
    #[test]
    fn a_start_stopped_midway_settles_when_its_runtime_has_exited() {
        use lifeline_core::session::SessionState;
        let mut w = World::new();
        let (session, identity) = w.stopped_start();
        assert!(
            matches!(w.state(session), Some(SessionState::Cancelling { .. })),
            "the cancellation waits for the runtime"
        );
        w.e.handle_runtime_exited(
            identity.runtime,
            identity.generation,
            false,
            String::new(),
            w.now,
        );
        w.settle();
        assert_eq!(
            w.state(session),
            Some(SessionState::Cancelled),
            "settled once the runtime exited"
        );
    }

    /// The page's word that a worker exited counts only as far as the core
    /// believes it: a runtime still attached on its port is only looked at
    /// again; one whose termination was asked for has ended, and its port
    /// is closed.
    #[test]
    fn an_exit_the_page_claims_counts_only_when_the_core_believes_it() {
        use lifeline_core::session::SessionState;
        let mut w = World::with(profile());
        let (runtime, generation, port, _) = *w.rt.as_ref().expect("the runtime came up");
        let session = w.e.session().expect("a session is open");
        w.e.handle_runtime_exited(runtime, generation, true, "claimed".into(), w.now);
        w.settle();
        assert_eq!(
            w.state(session),
            Some(SessionState::Running),
            "a runtime attached on its port is not lost on the page's word"
        );
        assert!(w.closed.is_empty(), "its port stays open");

        w.archive();
        w.e.handle_runtime_exited(runtime, generation, false, String::new(), w.now);
        w.settle();
        assert_eq!(w.closed, vec![port], "the ended runtime's port is closed");
        assert!(w.gone(runtime), "the journal records it gone");
    }

    /// A start stopped midway whose runtime the page could not terminate
    /// does not pass for cancelled: the session fails with the cleanup's
    /// failure and keeps its recovery controls.
    #[test]
    fn a_start_whose_runtime_could_not_be_terminated_fails_truthfully() {
        use lifeline_core::session::SessionState;
        let mut w = World::new();
        let (session, identity) = w.stopped_start();
        w.e.handle_terminate_failed(identity.runtime, identity.generation, "refused", w.now);
        w.settle();
        assert!(
            matches!(w.state(session), Some(SessionState::Failed(_))),
            "not cancelled: its runtime may still run"
        );
    }

    /// A worker whose port closed has ended: its port is let go and the
    /// session's execution is lost (Resume is the way on).
    #[test]
    fn a_worker_whose_port_closed_is_lost_and_its_port_let_go() {
        use lifeline_core::session::SessionState;
        let mut w = World::with(profile());
        let (runtime, generation, port, _) = *w.rt.as_ref().expect("the runtime came up");
        let session = w.e.session().expect("a session is open");
        w.e.handle_worker_ended(runtime, generation, port, crate::Ended::PortClosed, w.now);
        w.settle();
        assert_eq!(w.closed, vec![port]);
        assert!(matches!(w.state(session), Some(SessionState::Failed(_))));
    }

    /// Stop on a runtime that still answers is refused and said; nothing
    /// is terminated.
    #[test]
    fn stopping_a_runtime_that_answers_is_refused_and_said() {
        let mut w = World::with(profile());
        let (runtime, generation, ..) = *w.rt.as_ref().expect("the runtime came up");
        w.page.clear();
        w.e.handle_stop_unresponsive(runtime, generation, w.now);
        w.settle();
        assert!(
            w.page.iter().any(|m| matches!(
                m,
                ControllerToPage::Notice {
                    message: Some(Phrase::RuntimeAnswers),
                    ..
                }
            )),
            "{:?}",
            w.page
        );
        assert!(!w
            .page
            .iter()
            .any(|m| matches!(m, ControllerToPage::TerminateRuntime { .. })));
    }

    /// A change of language words the notices on the page anew; one that
    /// has expired is not brought back.
    #[test]
    fn a_new_language_rewords_the_notices_on_the_page_and_only_those() {
        let notices = |page: &[ControllerToPage]| -> Vec<Phrase> {
            page.iter()
                .filter_map(|m| match m {
                    ControllerToPage::Notice {
                        message: Some(p), ..
                    } => Some(p.clone()),
                    _ => None,
                })
                .collect()
        };
        let mut w = World::with(profile());
        let (runtime, generation, ..) = *w.rt.as_ref().expect("the runtime came up");
        w.e.handle_stop_unresponsive(runtime, generation, w.now);
        w.settle();
        assert_eq!(notices(&w.page), vec![Phrase::RuntimeAnswers]);
        w.page.clear();
        w.e.handle_reword(w.now);
        w.settle();
        assert_eq!(
            notices(&w.page),
            vec![Phrase::RuntimeAnswers],
            "worded anew"
        );
        let (key, at) = *w
            .timers
            .iter()
            .rev()
            .find(|(k, _)| matches!(k, TimerKey::Notice(_)))
            .expect("the notice expires");
        w.at(at.0);
        w.e.handle_timer(key, w.now);
        w.settle();
        w.page.clear();
        w.e.handle_reword(w.now);
        w.settle();
        assert_eq!(
            notices(&w.page),
            Vec::<Phrase>::new(),
            "an expired notice stays gone"
        );
    }

    /// A launch whose runtime had not dialed in when the controller
    /// restarted: the new controller waits for it rather than launching a
    /// second runtime into the same workspace, and adopts it when it dials
    /// in (reference 001, lost launch acknowledgements).
    #[test]
    fn a_lost_launch_that_dials_in_after_a_restart_is_adopted_not_replaced() {
        use lifeline_core::session::SessionState;
        let mut w = World::spawning(profile(), false);
        let session = w.e.session().expect("a session is open");
        let lost = *w.spawned.last().expect("its runtime was spawned");
        w.at(50);
        w.restart();
        let spawned = w.spawned.len();
        // The lost launch's worker dials the new controller.
        w.come_up(lost);
        assert_eq!(w.spawned.len(), spawned, "no second runtime was launched");
        assert!(
            w.page.iter().any(|m| matches!(
                m,
                ControllerToPage::Notice {
                    message: Some(Phrase::EarlierLaunchAnswered { .. }),
                    ..
                }
            )),
            "the page says the earlier launch answered"
        );
        assert!(matches!(w.state(session), Some(SessionState::Running)));
    }

    /// The same lost launch that never dials in: when the adoption wait
    /// ends, its outcome is said to be unknown and only then does a new
    /// generation replace it.
    #[test]
    fn a_lost_launch_that_never_dials_in_is_replaced_when_the_wait_ends() {
        let mut w = World::spawning(profile(), false);
        let lost = *w.spawned.last().expect("its runtime was spawned");
        w.at(50);
        w.restart();
        let spawned = w.spawned.len();
        assert_eq!(spawned, 1, "nothing new launched while it waits");
        let (key, at) = *w
            .timers
            .iter()
            .filter(|(k, _)| matches!(k, TimerKey::Attempt(_)))
            .max_by_key(|(_, at)| *at)
            .expect("the adoption wait is a timer");
        w.now = at;
        w.e.handle_timer(key, at);
        w.settle();
        let replacement = *w.spawned.last().expect("a runtime");
        assert_eq!(w.spawned.len(), spawned + 1, "one new runtime launched");
        assert_ne!(replacement.runtime, lost.runtime, "a new runtime identity");
        assert!(
            w.page.iter().any(|m| matches!(
                m,
                ControllerToPage::Notice {
                    message: Some(Phrase::EarlierLaunchRetired { .. }),
                    ..
                }
            )),
            "the page says the earlier launch's outcome is unknown"
        );
    }

    /// A worker's exit the page reports while the restarted controller
    /// still reads the journal is kept, and counts once the journal is led.
    #[test]
    fn an_exit_reported_while_the_journal_is_read_counts_once_it_is_led() {
        let mut w = World::with(profile());
        let (runtime, generation, ..) = *w.rt.as_ref().expect("the runtime came up");
        w.archive();
        w.restart_with(|e| {
            e.handle_runtime_exited(runtime, generation, false, String::new(), Millis(2))
        });
        assert!(w.gone(runtime), "the journal records it gone");
    }

    /// The page could not terminate a worker while the restarted
    /// controller still read the journal: kept, and recorded as a cleanup
    /// failure once the journal is led.
    #[test]
    fn a_failed_termination_reported_while_the_journal_is_read_is_recorded_once_it_is_led() {
        use lifeline_core::journal::JournalRecord;
        use lifeline_core::RecoveryKind;
        let mut w = World::with(profile());
        let (runtime, generation, ..) = *w.rt.as_ref().expect("the runtime came up");
        w.archive();
        let failures = |w: &World| {
            w.journal
                .iter()
                .filter(|e| {
                    matches!(&e.record, JournalRecord::Recovery(r)
                        if r.kind == RecoveryKind::CleanupFailure)
                })
                .count()
        };
        assert_eq!(failures(&w), 0);
        w.restart_with(|e| e.handle_terminate_failed(runtime, generation, "refused", Millis(2)));
        assert_eq!(failures(&w), 1);
    }

    /// A runtime's life lock is watched once it said hello, on the port it
    /// said it on, and only once however much it says after.
    #[test]
    fn a_runtimes_life_is_watched_once_on_its_own_port_after_its_hello() {
        let mut w = World::with(profile());
        let (runtime, generation, port, _) = *w.rt.as_ref().expect("the runtime came up");
        assert_eq!(w.watched, vec![(runtime, generation, port)]);
        // A command's messages (its ACK, output and end) change nothing.
        let turn = TurnId::from_u128(0x7e90).expect("a valid id");
        w.e.handle_prompt(turn, "$ echo watched".into(), w.now);
        w.settle();
        assert!(
            w.e.projection().is_some_and(|p| p.commands.len() == 1),
            "the command was admitted and its runtime spoke"
        );
        assert_eq!(w.watched, vec![(runtime, generation, port)]);
    }

    /// Every port the engine files is a fresh identity, and a port the
    /// core refuses (a second one for a runtime whose port is open) is
    /// closed at once with the reason on the page.
    #[test]
    fn ports_are_fresh_and_a_second_port_for_an_open_runtime_is_closed() {
        let mut w = World::new();
        let (runtime, generation, known, _) = *w.rt.as_ref().expect("the runtime came up");
        let port = w.e.handle_port_opened(runtime, generation, w.now);
        assert_ne!(port, known, "a port identity is never reused");
        let mut closed = Vec::new();
        let mut said = false;
        while let Some(effect) = w.e.poll_effect() {
            match effect {
                Effect::ClosePort(p) => closed.push(p),
                Effect::Page(ControllerToPage::Notice {
                    message: Some(Phrase::RuntimeMessageRejected { .. }),
                    ..
                }) => said = true,
                _ => {}
            }
        }
        assert_eq!(closed, vec![port], "the second port is closed");
        assert!(said, "the page is told why");
    }

    /// Archive leaves the session through the session layer's stop: the
    /// journal retires the runtime's generation and asks for its
    /// termination, and the page is told to end that worker. Nothing else
    /// ends it.
    #[test]
    fn leaving_a_session_stops_its_runtime_through_the_journal() {
        let mut w = World::new();
        let (runtime, generation, ..) = *w.rt.as_ref().expect("the session's runtime came up");
        let current = |w: &World| {
            w.e.projection()
                .and_then(|p| p.runtime(runtime))
                .map(|(_, r)| (r.status, r.termination_requested))
        };
        assert_eq!(
            current(&w),
            Some((lifeline_core::RuntimeStatus::Current, false))
        );
        w.page.clear();
        w.archive();
        let (status, terminating) = current(&w).expect("the runtime stays in the journal");
        assert_ne!(
            status,
            lifeline_core::RuntimeStatus::Current,
            "its generation is retired"
        );
        assert!(terminating, "its termination is recorded");
        assert!(
            w.page.iter().any(|m| matches!(m,
                ControllerToPage::TerminateRuntime { runtime: r, generation: g }
                    if *r == runtime && *g == generation)),
            "the page is told to end that worker: {:?}",
            w.page
        );
    }

    #[test]
    fn a_retry_wait_ends_and_the_request_is_never_sent_again() {
        let mut w = World::new();
        assert!(w.rt.is_some(), "the session's runtime came up");
        let (turn, request) = w.prompt();
        w.at(100);
        w.e.handle_provider_outcome(
            request,
            Err(ProviderFailure {
                class: ProviderFailureClass::Overloaded,
                message: "busy".into(),
                partial_text: String::new(),
                at: FailedAt::Status(503),
                retry_after_ms: Some(5_000),
                reason: None,
            }),
            w.now,
        );
        w.settle();
        let due =
            w.e.retry_wait()
                .expect("refused before any work: a retry wait");
        w.at(200);
        w.archive();
        assert_eq!(w.e.retry_wait(), None);
        assert_eq!(w.e.live_request(), None);
        assert!(w.turn_ended(turn), "the archived session's turn ended");
        // The wait's time comes: nothing is sent.
        w.at(due.0 + 1);
        let session = w.e.session().expect("a session is open");
        w.e.handle_timer(TimerKey::Provider(session), w.now);
        w.settle();
        assert_eq!(w.fetched, vec![request], "sent once, never again");
    }

    /// "Retry now" ends a retry wait early: the same request goes out
    /// again at once, and the countdown's notice goes away with the wait.
    /// The first attempt clears no such notice, and Retry now with no wait
    /// sends nothing.
    #[test]
    fn retry_now_sends_the_next_attempt_at_once_and_clears_the_countdown() {
        let retry_cleared = |page: &[ControllerToPage]| {
            page.iter().any(|m| {
                matches!(m, ControllerToPage::Notice { key, message: None, .. }
                    if key == crate::turn::RETRY_NOTICE)
            })
        };
        let mut w = World::new();
        w.page.clear();
        let (_, request) = w.prompt();
        assert!(
            !retry_cleared(&w.page),
            "a first attempt has no countdown to clear"
        );
        w.e.handle_retry_now(w.now);
        w.settle();
        assert_eq!(w.fetched, vec![request], "no wait: nothing more is sent");
        w.at(100);
        w.e.handle_provider_outcome(
            request,
            Err(ProviderFailure {
                class: ProviderFailureClass::RateLimit,
                message: "slow down".into(),
                partial_text: String::new(),
                at: FailedAt::Status(429),
                retry_after_ms: Some(30_000),
                reason: None,
            }),
            w.now,
        );
        w.settle();
        assert!(w.e.retry_wait().is_some(), "a retry wait");
        w.page.clear();
        w.at(200);
        w.e.handle_retry_now(w.now);
        w.settle();
        assert_eq!(
            w.fetched,
            vec![request, request],
            "the same request, at once"
        );
        assert_eq!(w.e.retry_wait(), None);
        assert!(
            retry_cleared(&w.page),
            "the countdown is gone: {:?}",
            w.page
        );
    }

    #[test]
    fn a_hung_load_ends_at_once_without_the_loads_own_report() {
        let mut w = World::new();
        let (turn, request) = w.prompt();
        w.at(100);
        // One report, then nothing: the load hangs, and its abort is
        // never answered either.
        w.e.handle_model_loading(request, 1 << 20, 8 << 20, w.now);
        w.settle();
        w.at(200);
        w.archive();
        assert_eq!(w.e.live_request(), None);
        assert!(
            w.turn_ended(turn),
            "the archived session's turn ended without waiting out the load's two-minute bound"
        );
        // A late report of the torn-down load is not news.
        w.e.handle_model_loading(request, 2 << 20, 8 << 20, w.now);
        w.settle();
        assert_eq!(w.e.live_request(), None);
        assert_eq!(w.fetched, vec![request]);
    }

    /// Nobody stops it: the engine's own bound ends a hung load, however
    /// long the run (the simulation's runs are shorter than the bound, so
    /// there the user's Stop ends every hung load).
    #[test]
    fn a_hung_load_nobody_stops_ends_at_the_stall_bound() {
        let mut w = World::new();
        let (turn, request) = w.prompt();
        w.at(100);
        w.e.handle_model_loading(request, 1 << 20, 8 << 20, w.now);
        w.settle();
        let bound = 100 + crate::retry::LOAD_STALL_MS;
        // The provider timer looks every second and moves the count.
        let mut looks = 0;
        while let Some((key, at)) = w.provider_timer.take() {
            assert!(
                w.e.live_request() == Some(request),
                "ended early, at {} ms",
                w.now.0
            );
            assert!(at.0 <= bound, "the timer looks past the bound: {at:?}");
            w.at(at.0);
            w.e.handle_timer(key, w.now);
            w.settle();
            looks += 1;
            if w.e.live_request().is_none() {
                break;
            }
        }
        assert_eq!(w.now.0, bound, "ended at the bound, not before");
        assert!(looks >= 120, "the count moved each second ({looks} looks)");
        assert!(w.turn_ended(turn));
        assert_eq!(w.fetched, vec![request], "a hung load is not retried");
        assert_eq!(
            recorded_reason(&w, request),
            Some(lifeline_core::journal::FailureReason::LoadStalled {
                seconds: 120,
                read: 1 << 20,
                total: 8 << 20,
            })
        );
    }

    /// A retry wait counts down on the page in whole seconds, worded by
    /// what refused the attempt, and wakes every second to say so.
    #[test]
    fn a_retry_wait_counts_down_on_the_page_worded_by_its_cause() {
        let cases = [
            (
                ProviderFailureClass::RateLimit,
                FailedAt::Status(429),
                Some(30_000),
            ),
            (ProviderFailureClass::Transport, FailedAt::NoResponse, None),
            (
                ProviderFailureClass::Overloaded,
                FailedAt::Status(503),
                Some(30_000),
            ),
        ];
        for (class, at, retry_after_ms) in cases {
            let mut w = World::new();
            let (_, request) = w.prompt();
            w.page.clear();
            w.e.handle_provider_outcome(
                request,
                Err(ProviderFailure {
                    class,
                    message: "refused".into(),
                    partial_text: String::new(),
                    at,
                    retry_after_ms,
                    reason: None,
                }),
                w.now,
            );
            w.settle();
            let shown = |page: &[ControllerToPage]| {
                page.iter().rev().find_map(|m| match m {
                    ControllerToPage::Notice {
                        key,
                        message: Some(p),
                        ..
                    } if key == crate::turn::RETRY_NOTICE => Some(p.clone()),
                    _ => None,
                })
            };
            let first = shown(&w.page).expect("the countdown is shown");
            let seconds = match (class, &first) {
                (ProviderFailureClass::RateLimit, Phrase::RetryRateLimited { seconds })
                | (ProviderFailureClass::Transport, Phrase::RetryNotConnected { seconds })
                | (ProviderFailureClass::Overloaded, Phrase::RetryOverloaded { seconds }) => {
                    *seconds
                }
                _ => panic!("{class:?} is worded {first:?}"),
            };
            if retry_after_ms.is_some() {
                assert_eq!(seconds, 30, "the wait the provider named");
                // A second later the count has moved.
                let (key, at) = w.provider_timer.take().expect("it wakes to count");
                assert_eq!(at, w.now.plus(1_000));
                w.page.clear();
                w.at(at.0);
                w.e.handle_timer(key, w.now);
                w.settle();
                assert_eq!(
                    shown(&w.page),
                    Some(match class {
                        ProviderFailureClass::RateLimit => Phrase::RetryRateLimited { seconds: 29 },
                        _ => Phrase::RetryOverloaded { seconds: 29 },
                    })
                );
            }
        }
    }

    /// Stop while a reply is awaited aborts the fetch; the request ends
    /// with the abort's own outcome, as stopped, not as a retry wait or a
    /// load that was cut short.
    #[test]
    fn stop_while_a_reply_is_awaited_aborts_the_fetch_and_ends_with_its_outcome() {
        let mut w = World::new();
        let (turn, request) = w.prompt();
        w.e.handle_stop(w.now);
        w.settle();
        assert_eq!(w.aborted, vec![request]);
        assert_eq!(
            w.e.projection()
                .and_then(|p| p.provider_requests.get(&request))
                .map(|r| r.outcome.is_some()),
            Some(false),
            "nothing is recorded before the abort's outcome"
        );
        w.e.handle_provider_outcome(
            request,
            Err(crate::failure::fetch_failed("AbortError", "aborted", None)),
            w.now,
        );
        w.settle();
        assert!(w.turn_ended(turn));
        assert_eq!(
            recorded_reason(&w, request),
            Some(lifeline_core::journal::FailureReason::Stopped)
        );
    }

    /// A model turn sent while its session's runtime still starts waits
    /// for the runtime (the turn's failure must be the session's, and a
    /// failure during the start would be dropped as stale); a refused key
    /// then fails the session, and the card says the turn failed.
    #[test]
    fn a_model_request_waits_for_the_runtime_and_its_refusal_fails_the_session_once_recorded() {
        use lifeline_core::session::SessionState;
        let mut w = World::spawning(model_profile(), false);
        let session = w.e.session().expect("a session is open");
        let identity = *w.spawned.last().expect("its runtime was spawned");
        let turn = TurnId::from_u128(0x401).expect("a valid id");
        w.e.handle_prompt(turn, "hello".into(), w.now);
        w.settle();
        assert!(
            w.fetched.is_empty(),
            "nothing is sent before the runtime is up"
        );
        // The runtime comes up late.
        w.come_up(identity);
        let request = *w.fetched.last().expect("the model was asked");
        w.e.handle_provider_outcome(
            request,
            Err(ProviderFailure {
                class: ProviderFailureClass::Auth,
                message: "invalid key".into(),
                partial_text: String::new(),
                at: FailedAt::Status(401),
                retry_after_ms: None,
                reason: None,
            }),
            w.now,
        );
        // Every card the page is shown while the failure is being written
        // names it exactly, or there is none yet: durable evidence first.
        w.hold = true;
        w.page.clear();
        w.settle();
        while w.release() {}
        w.hold = false;
        let cards: Vec<Phrase> = w
            .page
            .iter()
            .filter_map(|m| match m {
                ControllerToPage::Recovery { card: Some(card) } => Some(card.summary.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            cards,
            vec![Phrase::SummaryAgentFailed],
            "cards shown: {cards:?}"
        );
        assert_eq!(w.fetched, vec![request], "a refused key is not retried");
        assert!(w.turn_ended(turn), "the turn ended");
        assert!(
            matches!(w.state(session), Some(SessionState::Failed(_))),
            "the session failed with its turn: {:?}",
            w.state(session)
        );
        let card = w.e.card().expect("a card");
        assert_eq!(card.summary, Phrase::SummaryAgentFailed);
    }

    /// Stop pressed while recovery still reads the profile store (no
    /// session is up yet) stops the open turn all the same. Found by the
    /// engine simulation (seed 92699 of 150,000): the press was dropped,
    /// and the turn went on once its session was resumed.
    #[test]
    fn stop_before_the_sessions_are_up_stops_the_open_turn() {
        use lifeline_core::journal::{JournalRecord, ToolCallRecord};
        let mut w = World::new();
        let (_, request) = w.prompt_as(0x5e2);
        // The model asks for a command, which runs on the session's runtime.
        let call = ToolCallRecord {
            id: "c1".into(),
            name: "run_command".into(),
            arguments: r#"{"command":"sleep 9"}"#.into(),
        };
        w.e.handle_provider_outcome(
            request,
            Ok(crate::ProviderReply {
                text: String::new(),
                tool_calls: vec![call],
                stop: "tool_calls".into(),
                input_tokens: 1,
                output_tokens: 1,
            }),
            w.now,
        );
        w.settle();
        let now = w.now;
        w.restart_around(|_| {}, |e| e.handle_stop(now));
        let cancelled = w.journal.iter().any(|e| {
            matches!(
                e.record,
                JournalRecord::CancelRequested {
                    reason: lifeline_core::CancelReason::User,
                    ..
                }
            )
        });
        assert!(cancelled, "Stop asked for the command to stop");
    }

    /// A journal that can no longer be written (its writer record damaged)
    /// starts nothing: opening a session shows it and resumes nothing.
    /// Found by the engine simulation (seed 141009 of 150,000): the resume
    /// was a fourth runtime past the running limit.
    #[test]
    fn a_read_only_journal_starts_no_session() {
        let mut w = World::new();
        let first = w.e.session().expect("a session is open");
        w.e.handle_new_session(w.now);
        w.settle();
        let batch = lifeline_core::PersistBatch {
            v: lifeline_core::V1,
            batch: lifeline_core::BatchId(u64::MAX),
            entries: Vec::new(),
            artifacts: Vec::new(),
            purge: None,
        };
        let damaged = crate::StoreFailure {
            fault: JournalFault::WriterUnreadable,
            detail: "damaged".into(),
        };
        w.e.handle_persisted(std::sync::Arc::new(batch), Err(damaged), w.now);
        w.settle();
        let runtime = w.rt.as_ref().map(|r| r.0);
        w.e.handle_open_session(first, w.now);
        w.settle();
        assert_eq!(w.e.session(), Some(first), "shown");
        assert_eq!(w.rt.as_ref().map(|r| r.0), runtime, "nothing spawned");
        assert!(w.e.sessions().is_none(), "no session machine runs");
    }

    /// What the status line is told about taking messages, status by
    /// status since `from`.
    fn takes_messages(w: &World, from: usize) -> Vec<(String, bool)> {
        w.page[from..]
            .iter()
            .filter_map(|m| match m {
                ControllerToPage::Status(s) => s.lifecycle.as_ref(),
                _ => None,
            })
            .map(|l| (l.state.clone(), l.takes_messages))
            .collect()
    }

    /// Since `from`, the session started, and every status said `takes`.
    #[track_caller]
    fn a_start_that_takes_messages(w: &World, from: usize, takes: bool, why: &str) {
        let said = takes_messages(w, from);
        assert!(
            said.iter().any(|(state, _)| state == "starting"),
            "it starts: {said:?}"
        );
        assert!(said.iter().all(|(_, t)| *t == takes), "{why}: {said:?}");
    }

    /// The status line says Connected when the controller takes messages
    /// for the session: a first start waits for its runtime; a session that
    /// ran keeps taking them while a chosen profile's start replaces its
    /// execution (a message sent meanwhile waits for that start).
    #[test]
    fn only_a_first_start_waits_for_its_runtime_to_take_messages() {
        let mut w = World::spawning(profile(), false);
        let first = *w.spawned.last().expect("its runtime was spawned");
        let starting = takes_messages(&w, 0);
        assert!(!starting.is_empty());
        assert!(
            starting.iter().all(|(_, takes)| !takes),
            "a first start waits: {starting:?}"
        );
        let up = w.page.len();
        w.come_up(first);
        assert_eq!(
            takes_messages(&w, up).last(),
            Some(&("running".to_string(), true))
        );
        let mut other = profile();
        other.id = ProfileId::from_u128(0xa2).expect("a valid id");
        w.profile = other.clone();
        w.answer_spawns = false;
        let switch = w.page.len();
        w.e.handle_select_profile(other.id, w.now);
        w.settle();
        a_start_that_takes_messages(
            &w,
            switch,
            true,
            "a session that ran takes messages throughout its relaunch",
        );
    }

    /// The resume a controller starts by itself (restarted, it finds its
    /// session bound and rejoins the runtime) is that controller's first
    /// start: the status line waits for the runtime.
    #[test]
    fn the_resume_a_controller_starts_by_itself_waits_for_its_runtime() {
        let mut w = World::with(profile());
        w.answer_spawns = false;
        let restart = w.page.len();
        w.restart();
        a_start_that_takes_messages(&w, restart, false, "it waits for the runtime");
    }

    /// A resume the person asks for (Resume on the card) keeps the status
    /// line Connected while its runtime starts, as a relaunch does.
    #[test]
    fn a_resume_the_person_asks_for_keeps_taking_messages() {
        let mut w = World::with(profile());
        let (runtime, generation, port, _) = *w.rt.as_ref().expect("the runtime came up");
        w.e.handle_worker_ended(runtime, generation, port, crate::Ended::PortClosed, w.now);
        w.settle();
        w.answer_spawns = false;
        let resume = w.page.len();
        w.e.handle_recover(Action::Resume, w.now);
        w.settle();
        assert!(!w.spawned.is_empty(), "the resume launched a runtime");
        a_start_that_takes_messages(
            &w,
            resume,
            true,
            "a resume asked for takes messages throughout",
        );
    }

    /// A profile chosen while the session's runtime still starts (with the
    /// profile it had) applies before any message runs: the start ends,
    /// then the session starts again with the chosen profile, and a message
    /// sent meanwhile goes to the model. Found by a fresh-clone e2e run: on
    /// a loaded machine the first runtime was still starting when the test
    /// chose its model profile, and the message was answered by the
    /// built-in agent.
    #[test]
    fn a_profile_chosen_while_the_runtime_starts_applies_before_any_message_runs() {
        let mut w = World::spawning(profile(), false);
        let session = w.e.session().expect("a session is open");
        let first = *w.spawned.last().expect("its runtime was spawned");
        let mut model = model_profile();
        model.id = ProfileId::from_u128(0xa0).expect("a valid id");
        w.profile = model.clone();
        w.e.handle_select_profile(model.id, w.now);
        w.settle();
        let turn = TurnId::from_u128(0x5e1).expect("a valid id");
        w.e.handle_prompt(turn, "hello".into(), w.now);
        w.settle();
        // The first runtime comes up; from here on spawns are answered.
        w.answer_spawns = true;
        w.come_up(first);
        let request = *w.fetched.last().expect("the message went to the model");
        assert_eq!(w.e.live_request(), Some(request));
        let bound = w.e.sessions().and_then(|s| s.binding(session)).cloned();
        assert_eq!(
            bound.and_then(|b| b.profile).map(|p| p.id),
            Some(model.id),
            "the session runs with the chosen profile"
        );
        assert!(
            w.e.projection()
                .and_then(|p| p.turns.get(&turn))
                .is_some_and(|t| t.agent.is_model()),
            "the turn is a model turn"
        );
    }

    /// A session whose runtime died while a model request of its turn was
    /// still streaming keeps that turn open; a message then resumes it with
    /// a second turn. Stop ends both: the earlier request is aborted, and
    /// the new turn ends at once instead of running after the abort. Found
    /// by the engine simulation with profile switching (seed 2332).
    #[test]
    fn stop_after_a_message_to_a_session_that_failed_mid_request_ends_the_new_turn_too() {
        use lifeline_core::session::SessionState;
        let mut w = World::new();
        let session = w.e.session().expect("a session is open");
        let (earlier, request) = w.prompt_as(0x7e01);
        let (runtime, generation, port, _) = *w.rt.as_ref().expect("the runtime came up");
        w.e.handle_worker_ended(runtime, generation, port, crate::Ended::PortClosed, w.now);
        w.settle();
        assert!(matches!(w.state(session), Some(SessionState::Failed(_))));
        assert_eq!(w.e.live_request(), Some(request), "the stream goes on");
        let later = TurnId::from_u128(0x7e02).expect("a valid id");
        w.e.handle_prompt(later, "and then".into(), w.now);
        w.settle();
        assert!(
            w.e.projection()
                .is_some_and(|p| p.turns.contains_key(&later)),
            "the message is a turn of the resumed session"
        );
        w.e.handle_stop(w.now);
        w.settle();
        assert_eq!(w.aborted, vec![request]);
        assert!(w.turn_ended(later), "the new turn ended with the Stop");
        w.e.handle_provider_outcome(
            request,
            Err(crate::failure::fetch_failed("AbortError", "aborted", None)),
            w.now,
        );
        w.settle();
        assert!(
            w.turn_ended(earlier),
            "the earlier turn ended with its abort"
        );
        assert_eq!(w.fetched, vec![request], "nothing was asked after the Stop");
    }

    /// A profile chosen while the card's Resume runs: the resume goes on
    /// with the recorded profile (criterion 6), and once the resumed
    /// execution has no turn open the session starts again with the
    /// chosen one.
    #[test]
    fn a_profile_chosen_during_a_resume_applies_once_no_turn_is_open() {
        let mut w = World::with(profile());
        let session = w.e.session().expect("a session is open");
        let (runtime, generation, port, _) = *w.rt.as_ref().expect("the runtime came up");
        w.e.handle_worker_ended(runtime, generation, port, crate::Ended::PortClosed, w.now);
        w.settle();
        w.answer_spawns = false;
        w.e.handle_recover(Action::Resume, w.now);
        w.settle();
        let resumed = *w.spawned.last().expect("the resume launched a runtime");
        let mut other = profile();
        other.id = ProfileId::from_u128(0xa1).expect("a valid id");
        w.profile = other.clone();
        w.e.handle_select_profile(other.id, w.now);
        w.settle();
        w.answer_spawns = true;
        w.come_up(resumed);
        let bound = w.e.sessions().and_then(|s| s.binding(session)).cloned();
        assert_ne!(bound.as_ref().map(|b| b.runtime), Some(resumed.runtime));
        assert_eq!(
            bound.and_then(|b| b.profile).map(|p| p.id),
            Some(other.id),
            "the session runs with the chosen profile"
        );
        assert!(!w.e.sessions().is_some_and(|s| s.switch_pending(session)));
    }

    fn recorded_reason(
        w: &World,
        request: ProviderRequestId,
    ) -> Option<lifeline_core::journal::FailureReason> {
        match w
            .e
            .projection()?
            .provider_requests
            .get(&request)?
            .outcome
            .as_ref()?
        {
            lifeline_core::ProviderOutcome::Failed { reason, .. } => reason.clone(),
            _ => None,
        }
    }

    /// A request keeps the timeouts it was sent with when its session
    /// fails meanwhile (its runtime lost): the profile's 5 s wait for a
    /// response, not the default. Found by the engine simulation (seed
    /// 191386 of 400,000): the wait became 60 s, and the session's next
    /// turn waited behind it.
    #[test]
    fn a_request_keeps_its_timeouts_when_its_session_fails() {
        use lifeline_core::journal::FailureReason as R;
        let mut profile = model_profile();
        profile.budget.connect_timeout_ms = 5_000;
        let mut w = World::with(profile);
        let (_, request) = w.prompt_as(0x7ea3);
        let (runtime, generation, port, _) = *w.rt.as_ref().expect("the runtime came up");
        w.e.handle_worker_ended(runtime, generation, port, crate::Ended::PortClosed, w.now);
        w.settle();
        assert_eq!(w.e.live_request(), Some(request), "the request goes on");
        let (key, at) = w.provider_timer.take().expect("a provider timer");
        w.at(at.0);
        w.e.handle_timer(key, w.now);
        w.settle();
        assert_eq!(
            recorded_reason(&w, request),
            Some(R::NoResponseWithin { seconds: 5 })
        );
    }

    /// The connect and idle timeouts end the request with what the app
    /// knows: which wait ran out, and for how many seconds, from the
    /// profile's own budget.
    #[test]
    fn each_timeout_records_which_wait_ran_out_and_for_how_long() {
        use lifeline_core::journal::FailureReason as R;
        let mut profile = model_profile();
        profile.budget.connect_timeout_ms = 20_000;
        profile.budget.idle_timeout_ms = 45_000;
        let mut w = World::with(profile);
        let fire = |w: &mut World| {
            let (key, at) = w.provider_timer.take().expect("a provider timer");
            w.at(at.0);
            w.e.handle_timer(key, w.now);
            w.settle();
        };
        let (_, silent) = w.prompt_as(0x7ea1);
        fire(&mut w);
        assert_eq!(
            recorded_reason(&w, silent),
            Some(R::NoResponseWithin { seconds: 20 })
        );
        let (_, stalled) = w.prompt_as(0x7ea2);
        w.e.handle_provider_bytes(stalled, w.now);
        w.settle();
        fire(&mut w);
        assert_eq!(
            recorded_reason(&w, stalled),
            Some(R::NoByteFor { seconds: 45 })
        );
    }
}

/// Sessions left working run on in the background, up to
/// `MAX_RUNNING_SESSIONS` of them.
mod background {
    use lifeline_core::session::{SessionState, MAX_RUNNING_SESSIONS};

    use super::waiting_request::World;
    use super::*;
    use crate::ProviderReply;

    /// The model's whole reply, "done", handed to the engine; nothing
    /// settled yet.
    fn hand_reply(w: &mut World, request: lifeline_core::ProviderRequestId) {
        w.e.handle_provider_outcome(
            request,
            Ok(ProviderReply {
                text: "done".into(),
                tool_calls: Vec::new(),
                stop: "stop".into(),
                input_tokens: 1,
                output_tokens: 1,
            }),
            w.now,
        );
    }

    fn reply(w: &mut World, request: lifeline_core::ProviderRequestId) {
        hand_reply(w, request);
        w.settle();
    }

    #[test]
    fn a_reply_being_recorded_is_not_shown_as_lost() {
        let mut w = World::new();
        let (turn, request) = w.prompt_as(0x7e52);
        assert_eq!(w.e.card(), None, "a streaming request is no recovery");
        // The reply's batch is handed to the journal and not confirmed yet:
        // the request is no longer live, and it is not lost either.
        w.hold = true;
        hand_reply(&mut w, request);
        w.settle();
        assert!(!w.held.is_empty(), "the reply is being recorded");
        assert_eq!(w.e.live_request(), None);
        assert_eq!(w.e.card(), None, "a reply being recorded is not lost");
        let posted = w.page.iter().rev().find_map(|m| match m {
            ControllerToPage::Recovery { card } => Some(card.is_some()),
            _ => None,
        });
        assert_ne!(posted, Some(true), "no card was posted meanwhile");
        w.hold = false;
        w.release();
        assert!(w.turn_ended(turn));
        assert_eq!(w.e.card(), None);
    }

    fn new_session(w: &mut World) -> lifeline_core::SessionId {
        w.e.handle_new_session(w.now);
        w.settle();
        w.e.session().expect("a session is open")
    }

    #[test]
    fn a_session_left_working_goes_on_and_its_reply_is_recorded_while_another_is_open() {
        let mut w = World::new();
        let first = w.e.session().expect("a session is open");
        let (turn, request) = w.prompt_as(0x7e51);
        w.at(100);
        let second = new_session(&mut w);
        assert_ne!(first, second, "the new session is open");
        assert!(
            w.e.live_requests().any(|r| r == request),
            "the first session's request still runs"
        );
        assert!(!w.turn_ended(turn));
        // Its reply streams in the background: the page, showing the new
        // session, is not told its text.
        w.page.clear();
        w.e.handle_provider_text(request, "do");
        w.settle();
        assert!(
            !w.page
                .iter()
                .any(|m| matches!(m, ControllerToPage::Streaming { .. })),
            "another session's reply is not streamed into this one"
        );
        w.at(200);
        reply(&mut w, request);
        assert!(
            w.turn_ended(turn),
            "the reply was recorded while another session was open"
        );
        assert_eq!(w.e.session(), Some(second));
        // Opened again, it shows its transcript from scratch.
        w.page.clear();
        w.e.handle_open_session(first, w.now);
        w.settle();
        assert_eq!(w.e.session(), Some(first));
        assert!(w
            .page
            .iter()
            .any(|m| matches!(m, ControllerToPage::View { reset: true, .. })));
    }

    /// A failure reported without the text that had arrived (the provider
    /// worker ended mid-reply, so nobody but the engine saw the stream)
    /// records the text the engine was streamed.
    #[test]
    fn a_failure_without_its_text_keeps_the_text_that_was_streamed() {
        let mut w = World::new();
        let (turn, request) = w.prompt_as(0x7e53);
        w.e.handle_provider_bytes(request, w.now);
        w.e.handle_provider_text(request, "half a ");
        w.e.handle_provider_text(request, "reply");
        w.settle();
        let failure = crate::failure::read_failed("", "the provider worker stopped", None, "");
        assert_eq!(failure.partial_text, "");
        w.e.handle_provider_outcome(request, Err(failure), w.now);
        w.settle();
        assert!(w.turn_ended(turn));
        let recorded = w.journal.iter().find_map(|entry| match &entry.record {
            lifeline_core::journal::JournalRecord::ProviderFailed { partial_text, .. } => {
                Some(partial_text.clone())
            }
            _ => None,
        });
        assert_eq!(recorded.as_deref(), Some("half a reply"));
    }

    /// One local model answers one request at a time: another session's
    /// local step waits until the first request ended, then goes out.
    #[test]
    fn local_model_requests_of_two_sessions_take_turns() {
        use lifeline_core::profile::{LocalFile, LocalModel, Sampling};
        let mut profile = profile();
        profile.provider = LocalModel {
            file: LocalFile {
                name: "tiny.gguf".into(),
                size: 270_000,
                stored_as: "3f2a-tiny.gguf".into(),
                architecture: "llama".into(),
                parameters: 120_000,
                context_length: 1024,
                model_name: Some("Tiny".into()),
            },
            sampling: Sampling {
                context_tokens: 1024,
                ..Sampling::default()
            },
        }
        .provider();
        let mut w = World::with(profile);
        let (_, first) = w.prompt_as(0x7e71);
        new_session(&mut w);
        let turn = TurnId::from_u128(0x7e72).expect("a valid id");
        w.e.handle_prompt(turn, "hello".into(), w.now);
        w.settle();
        assert_eq!(w.fetched, vec![first], "the second waits for the model");
        w.at(100);
        reply(&mut w, first);
        assert_eq!(w.fetched.len(), 2, "then it is sent");
        assert_eq!(w.e.live_request(), w.fetched.last().copied());
    }

    /// Past the limit, the session set aside is the idle one shown least
    /// recently; a session whose command still runs (a turn open, no model
    /// request) counts as working however long ago it was shown.
    #[test]
    fn the_idle_session_shown_least_recently_is_the_one_set_aside() {
        let mut w = World::with(profile());
        let busy = w.e.session().expect("a session is open");
        let turn = TurnId::from_u128(0x7eb1).expect("a valid id");
        // The simulated runtime never finishes a process: the turn stays
        // open while its command runs.
        w.e.handle_prompt(turn, "$ sleep 9".into(), w.now);
        w.settle();
        assert!(!w.turn_ended(turn));
        let older = new_session(&mut w);
        let newer = new_session(&mut w);
        let fourth = new_session(&mut w);
        assert_eq!(w.e.session(), Some(fourth), "room was made");
        assert_eq!(
            w.state(older),
            Some(SessionState::Detached),
            "the least recent idle one"
        );
        assert_eq!(w.state(newer), Some(SessionState::Running));
        assert_eq!(
            w.state(busy),
            Some(SessionState::Running),
            "its command runs on"
        );
        assert!(!w.turn_ended(turn));
    }

    /// The card offers a start only when there is room for it: with two
    /// sessions working elsewhere, a failed session may Resume (its own
    /// runtime makes three); once it runs again, Start fresh would need a
    /// fourth, and the card says why it is not offered.
    #[test]
    fn the_card_offers_a_start_only_when_there_is_room_for_it() {
        let mut w = World::with(profile());
        let mut turn = 0x7ec0;
        let mut run_forever = |w: &mut World| {
            turn += 1;
            let t = TurnId::from_u128(turn).expect("a valid id");
            w.e.handle_prompt(t, "$ sleep 9".into(), w.now);
            w.settle();
            assert!(!w.turn_ended(t));
        };
        run_forever(&mut w);
        new_session(&mut w);
        run_forever(&mut w);
        let failed = new_session(&mut w);
        run_forever(&mut w);
        let (runtime, generation, port, _) = *w.rt.as_ref().expect("its runtime came up");
        w.e.handle_worker_ended(runtime, generation, port, crate::Ended::PortClosed, w.now);
        w.settle();
        let offered = |w: &World, action: Action| {
            w.e.card()
                .and_then(|c| c.actions.into_iter().find(|a| a.action == action))
                .map(|a| a.unavailable)
        };
        assert_eq!(
            offered(&w, Action::Resume),
            Some(None),
            "two work elsewhere: there is room to resume"
        );
        w.e.handle_recover(Action::Resume, w.now);
        w.settle();
        assert!(matches!(w.state(failed), Some(SessionState::Running)));
        assert_eq!(
            offered(&w, Action::StartFresh),
            Some(Some(Phrase::RunningLimit)),
            "three run and two of them work: no room for a fourth"
        );
    }

    #[test]
    fn past_the_limit_an_idle_session_is_set_aside_and_none_opens_while_all_work() {
        let mut w = World::new();
        let mut working = Vec::new();
        for n in 0..MAX_RUNNING_SESSIONS {
            if n > 0 {
                new_session(&mut w);
            }
            let (_, request) = w.prompt_as(0x7e60 + n as u128);
            working.push((w.e.session().expect("open"), request));
        }
        let open = w.e.session();
        let known = w.e.projection().map(|p| p.sessions.len());
        w.page.clear();
        w.e.handle_new_session(w.now);
        w.settle();
        assert!(
            w.page.iter().any(|m| matches!(
                m,
                ControllerToPage::Notice {
                    message: Some(Phrase::RunningLimit),
                    ..
                }
            )),
            "the page says why"
        );
        assert_eq!(w.e.session(), open, "the open session stays open");
        assert_eq!(w.e.projection().map(|p| p.sessions.len()), known);
        assert_eq!(w.e.live_requests().count(), MAX_RUNNING_SESSIONS);

        // The first one's reply arrives: it is idle now, and gives up its
        // runtime for the next new session; the others keep working.
        let (idle, request) = working[0];
        reply(&mut w, request);
        let fourth = new_session(&mut w);
        assert_ne!(Some(fourth), open);
        assert_eq!(
            w.state(idle),
            Some(SessionState::Detached),
            "the idle session was set aside"
        );
        for (session, request) in &working[1..] {
            assert!(w.e.live_requests().any(|r| r == *request));
            assert!(matches!(w.state(*session), Some(SessionState::Running)));
        }
    }
}

/// The page reloaded after a profile was chosen while the session ran: the
/// automatic start brings the session up with the chosen profile on its
/// workspace, not the recorded one (which only an explicit Resume uses).
#[test]
fn a_detached_session_with_a_profile_chosen_since_it_ran_starts_with_that_profile() {
    use lifeline_core::id::{ExecutionId, RuntimeId, StartupAttemptId};
    use lifeline_core::profile::ProfileRef;
    use lifeline_core::session::{SessionEffect, Sessions};
    use lifeline_core::session_record::SessionRecord;
    use lifeline_core::{Generation, SessionId, WorkspaceId};
    let session = SessionId::from_u128(1).unwrap();
    let (before, chosen) = (
        ProfileId::from_u128(0x91).unwrap(),
        ProfileId::from_u128(0x92).unwrap(),
    );
    let created = SessionRecord::Created {
        session,
        workspace: WorkspaceId::from_u128(0x1001).unwrap(),
        environment: lifeline_core::environment::Environment::Worker,
        profile: before,
    };
    let started = |id| SessionRecord::ExecutionStarted {
        session,
        execution: ExecutionId::from_u128(0x51).unwrap(),
        generation: Generation(1),
        runtime: RuntimeId::from_u128(0x61).unwrap(),
        attempt: StartupAttemptId::from_u128(0x71).unwrap(),
        profile: Some(ProfileRef { id, revision: 1 }),
        resumed_from: None,
        note: None,
        environment: None,
    };
    let selected = SessionRecord::ProfileSelected {
        session,
        profile: chosen,
    };
    let looked_up = |records: Vec<SessionRecord>| {
        let mut s = Sessions::recover(b"reloaded", &records);
        crate::open::start_or_resume(&mut s, session, false, Millis(5));
        s.drain_effects().into_iter().find_map(|e| match e {
            SessionEffect::LookupProfile { profile, .. } => Some(profile),
            _ => None,
        })
    };
    // Chosen while it ran: launched with the choice.
    assert_eq!(
        looked_up(vec![created.clone(), started(before), selected.clone()]),
        Some(chosen)
    );
    // Chosen, then a start took it: resumed with the profile it ran with,
    // which is the chosen one.
    let mut s = Sessions::recover(
        b"reloaded",
        &[created.clone(), selected.clone(), started(chosen)],
    );
    assert!(!s.switch_pending(session));
    crate::open::start_or_resume(&mut s, session, false, Millis(5));
    assert!(s
        .drain_effects()
        .iter()
        .any(|e| matches!(e, SessionEffect::LookupProfile { profile, .. } if *profile == chosen)));
    // Chosen while a turn ran that the journal still holds open: resumed
    // with the profile it ran with, to go on with that turn; the choice
    // stays pending and applies once the turn ends.
    let mut s = Sessions::recover(b"reloaded", &[created, started(before), selected]);
    crate::open::start_or_resume(&mut s, session, true, Millis(5));
    assert!(s
        .drain_effects()
        .iter()
        .any(|e| matches!(e, SessionEffect::LookupProfile { profile, .. } if *profile == before)));
    assert!(
        s.switch_pending(session),
        "an automatic resume keeps the choice"
    );
}

/// Writes keep failing for want of room: a message is refused, and the
/// refusal names why the journal cannot be written (the store's fault, not
/// its English).
#[test]
fn a_message_to_a_journal_that_keeps_failing_is_refused_with_the_fault() {
    use crate::StoreFailure;
    use lifeline_core::phrase::JournalFault;
    let (mut e, mut page) = leader();
    // A write the journal has no room for.
    let session = e.session().expect("a session is open");
    e.handle_rename_session(session, "renamed".into(), Millis(3));
    let mut now = 4;
    for _ in 0..10_000 {
        let Some(effect) = e.poll_effect() else {
            break;
        };
        now += 1;
        match effect {
            Effect::Persist(batch) => e.handle_persisted(
                batch,
                Err(StoreFailure {
                    fault: JournalFault::QuotaExceeded,
                    detail: "QuotaExceededError".into(),
                }),
                Millis(now),
            ),
            // Retries come at once; the journal stays full.
            Effect::SetTimer { key, at } => e.handle_timer(key, Millis(at.0.max(now))),
            Effect::Page(message) => page.push(message),
            _ => {}
        }
        if e.core.as_ref().is_some_and(|c| c.degraded().is_some()) {
            break;
        }
    }
    assert!(e.core.as_ref().is_some_and(|c| c.degraded().is_some()));
    let second = TurnId::from_u128(0x82).expect("a valid id");
    e.handle_prompt(second, "$ echo two".into(), Millis(now + 1));
    settle(&mut e, &mut page);
    assert_eq!(
        refused(&page, second),
        Some(&Phrase::JournalDegraded {
            fault: JournalFault::QuotaExceeded
        })
    );
}
