//! The session list as the journal proves it: titles, order, status,
//! links and tombstones, and the search over titles and transcripts.

use crate::environment::Environment;
use crate::id::{CommandId, FolderId, ProfileId, SessionId, TurnId, WorkspaceId};
use crate::journal::{JournalEntry, JournalRecord, TurnAgent, TurnStatus};
use crate::projection::{Projection, RetentionPolicy};
use crate::session_record::SessionRecord;
use crate::view::{delta_session, session_list, session_matches, SessionStatus, ViewDelta};
use crate::{Millis, V1};

fn sid(n: u128) -> SessionId {
    SessionId::from_u128(n).expect("a valid id")
}
fn tid(n: u128) -> TurnId {
    TurnId::from_u128(n).expect("a valid id")
}

struct Journal {
    p: Projection,
    position: u64,
}

impl Journal {
    fn new() -> Journal {
        Journal {
            p: Projection::new(RetentionPolicy::default()),
            position: 0,
        }
    }

    fn put(&mut self, at: u64, record: JournalRecord) {
        self.position += 1;
        let entry = JournalEntry {
            v: V1,
            position: self.position,
            at: Millis(at),
            record,
        };
        self.p.apply(&entry).expect("the record applies");
    }

    fn open(&mut self, at: u64, s: u128, environment: Environment) {
        self.put(
            at,
            JournalRecord::SessionOpened {
                session: sid(s),
                workspace: WorkspaceId::from_u128(s + 0x1000).expect("a valid id"),
                title: String::new(),
            },
        );
        self.life(
            at,
            SessionRecord::Created {
                session: sid(s),
                workspace: WorkspaceId::from_u128(s + 0x1000).expect("a valid id"),
                environment,
                profile: ProfileId::from_u128(0x9f).expect("a valid id"),
            },
        );
    }

    fn life(&mut self, at: u64, record: SessionRecord) {
        self.put(at, JournalRecord::Session { record });
    }

    fn turn(&mut self, at: u64, s: u128, t: u128, prompt: &str) {
        self.put(
            at,
            JournalRecord::TurnRecorded {
                session: sid(s),
                turn: tid(t),
                prompt: prompt.into(),
                plan: Vec::new(),
                agent: TurnAgent::default(),
            },
        );
    }

    fn end(&mut self, at: u64, t: u128, reply: &str) {
        self.put(
            at,
            JournalRecord::TurnFinished {
                turn: tid(t),
                status: TurnStatus::Completed,
                reply: reply.into(),
                ending: None,
            },
        );
    }
}

#[test]
fn the_list_is_ordered_by_last_activity_and_named_by_first_prompt_until_renamed() {
    let mut j = Journal::new();
    j.open(10, 1, Environment::Worker);
    j.open(20, 2, Environment::Worker);
    j.open(
        30,
        3,
        Environment::LocalFolder {
            folder: FolderId::from_u128(0x77).expect("a valid id"),
            name: "notes".into(),
        },
    );
    j.turn(40, 1, 0x11, "\n  fix the build\nthen run the tests");
    j.end(41, 0x11, "done: the build passes");
    j.turn(50, 2, 0x21, "write a poem");

    let list = session_list(&j.p);
    let order: Vec<_> = list.iter().map(|i| i.session).collect();
    assert_eq!(
        order,
        [sid(2), sid(1), sid(3)],
        "most recently active first"
    );
    assert_eq!(
        list[1].title, "fix the build",
        "the first prompt's first line"
    );
    assert_eq!(list[2].title, "", "a session without a prompt is untitled");
    assert_eq!(list[0].status, SessionStatus::Running, "its turn is open");
    assert_eq!(list[1].status, SessionStatus::Ready);
    assert_eq!(list[2].folder.as_deref(), Some("notes"));
    assert_eq!(list[1].folder, None, "the worker sandbox");

    j.life(
        60,
        SessionRecord::Renamed {
            session: sid(1),
            title: "Build".into(),
        },
    );
    let list = session_list(&j.p);
    let one = list.iter().find(|i| i.session == sid(1)).expect("listed");
    assert_eq!(one.title, "Build", "a rename wins over the first prompt");
}

#[test]
fn start_fresh_links_both_ways_and_a_deleted_session_is_a_tombstone() {
    let mut j = Journal::new();
    j.open(10, 1, Environment::Worker);
    j.open(20, 2, Environment::Worker);
    j.life(
        21,
        SessionRecord::Succeeded {
            session: sid(1),
            successor: sid(2),
        },
    );
    j.life(22, SessionRecord::Archived { session: sid(1) });
    let list = session_list(&j.p);
    let old = list.iter().find(|i| i.session == sid(1)).expect("listed");
    let new = list.iter().find(|i| i.session == sid(2)).expect("listed");
    assert_eq!(old.continued_in, Some(sid(2)));
    assert_eq!(new.continued_from, Some(sid(1)));
    assert_eq!(old.status, SessionStatus::Archived);

    j.life(
        23,
        SessionRecord::Deleted {
            session: sid(1),
            workspace_removed: true,
        },
    );
    let list = session_list(&j.p);
    assert_eq!(list.len(), 1, "a deleted session is not listed");
    // Unarchive never brings a deleted one back.
    j.life(24, SessionRecord::Unarchived { session: sid(1) });
    assert!(j.p.sessions[&sid(1)].deleted && j.p.sessions[&sid(1)].archived);
    assert_eq!(session_list(&j.p).len(), 1);
}

#[test]
fn a_failed_execution_shows_failed_until_the_next_start() {
    use crate::id::{ErrorStamp, ExecutionId, Generation, RuntimeId, StartupAttemptId};
    use crate::session_record::FailureCause;
    let mut j = Journal::new();
    j.open(10, 1, Environment::Worker);
    let execution = ExecutionId::from_u128(0x51).expect("a valid id");
    let started = |attempt: u128| SessionRecord::ExecutionStarted {
        session: sid(1),
        execution,
        generation: Generation(1),
        runtime: RuntimeId::from_u128(0x61).expect("a valid id"),
        attempt: StartupAttemptId::from_u128(attempt).expect("a valid id"),
        profile: None,
        resumed_from: None,
        note: None,
        environment: None,
    };
    j.life(11, started(0x71));
    j.life(
        12,
        SessionRecord::ExecutionFailed {
            stamp: ErrorStamp::from_u128(0x81).expect("a valid id"),
            session: sid(1),
            execution,
            generation: Generation(1),
            cause: FailureCause::RuntimeLost {
                detail: "gone".into(),
                end: None,
            },
        },
    );
    assert_eq!(session_list(&j.p)[0].status, SessionStatus::Failed);
}

/// A session whose runtime was lost in the background keeps its open turn
/// until it is resumed: the list says failed, as its card does, not
/// running.
#[test]
fn a_failed_execution_outranks_its_open_turn() {
    use crate::id::{ErrorStamp, ExecutionId, Generation, RuntimeId, StartupAttemptId};
    use crate::session_record::FailureCause;
    let mut j = Journal::new();
    j.open(10, 1, Environment::Worker);
    let execution = ExecutionId::from_u128(0x52).expect("a valid id");
    j.life(
        11,
        SessionRecord::ExecutionStarted {
            session: sid(1),
            execution,
            generation: Generation(1),
            runtime: RuntimeId::from_u128(0x62).expect("a valid id"),
            attempt: StartupAttemptId::from_u128(0x72).expect("a valid id"),
            profile: None,
            resumed_from: None,
            note: None,
            environment: None,
        },
    );
    j.turn(12, 1, 0x12, "$ sleep 30");
    assert_eq!(session_list(&j.p)[0].status, SessionStatus::Running);
    j.life(
        13,
        SessionRecord::ExecutionFailed {
            stamp: ErrorStamp::from_u128(0x82).expect("a valid id"),
            session: sid(1),
            execution,
            generation: Generation(1),
            cause: FailureCause::RuntimeLost {
                detail: "gone".into(),
                end: None,
            },
        },
    );
    assert_eq!(session_list(&j.p)[0].status, SessionStatus::Failed);
}

#[test]
fn search_matches_every_word_in_titles_prompts_and_replies_ignoring_ascii_case() {
    let mut j = Journal::new();
    j.open(10, 1, Environment::Worker);
    j.open(20, 2, Environment::Worker);
    j.turn(30, 1, 0x11, "Fix the build");
    j.end(31, 0x11, "The LINKER was missing");
    j.turn(40, 2, 0x21, "write a poem");
    assert!(session_matches(&j.p, sid(1), "linker build"));
    assert!(!session_matches(&j.p, sid(1), "linker poem"));
    assert!(session_matches(&j.p, sid(2), "POEM"));
    assert!(session_matches(&j.p, sid(2), ""), "an empty query matches");
    assert!(
        !session_matches(&j.p, sid(3), "x"),
        "an unknown session never"
    );
}

#[test]
fn each_delta_names_its_session() {
    let mut j = Journal::new();
    j.open(10, 1, Environment::Worker);
    let turn = ViewDelta::Turn {
        session: sid(1),
        turn: tid(1),
        prompt: String::new(),
        status: None,
        reply: None,
        ending: None,
        input_tokens: 0,
        output_tokens: 0,
        at: crate::id::Millis(0),
        reply_md: String::new(),
    };
    assert_eq!(delta_session(&j.p, &turn), Some(sid(1)));
    let gap = ViewDelta::Gap {
        command: CommandId::from_u128(0x99).expect("a valid id"),
        through: crate::id::EventSeq::ZERO,
    };
    assert_eq!(
        delta_session(&j.p, &gap),
        None,
        "an unknown command: no session"
    );
}

#[test]
fn a_title_from_a_prompt_with_escape_sequences_shows_only_its_text() {
    let mut j = Journal::new();
    j.open(10, 1, Environment::Worker);
    j.turn(
        20,
        1,
        0x11,
        "\u{1b}[1m\n$ echo \u{1b}[31mred\u{1b}[0m plain\u{7}",
    );
    let list = session_list(&j.p);
    assert_eq!(
        list[0].title, "$ echo red plain",
        "escapes and controls are dropped, and a line of escapes alone is empty"
    );
}
