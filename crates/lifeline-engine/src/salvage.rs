//! Recovery from a journal that could not be read whole: the fold of what
//! was readable, and what the page and the log are told about the rest.
//! The shell reads the stores and sets unreadable values aside; what that
//! means is decided here. The page gets a count and the first position,
//! worded; the log gets which values and why, in English (never a
//! record's contents: the store's reasons do not quote them).

use lifeline_core::journal::JournalEntry;
use lifeline_core::phrase::Phrase;
use lifeline_core::projection::ProjectionSnapshot;
use lifeline_core::{Projection, RetentionPolicy};
use lifeline_protocol::Level;

/// The most refused entries one fold reports; the rest are counted only
/// by the log's last line.
const MAX_REFUSED: usize = 64;

/// The most values the log names one by one.
const MAX_LOGGED: usize = 8;

/// A value the store could not decode and set aside.
pub struct SetAside<'a> {
    /// The object store it is in.
    pub place: &'a str,
    /// Its primary key, as the store prints it.
    pub key: &'a str,
    /// The position it claims, when that much was readable.
    pub position: Option<u64>,
    pub reason: &'a str,
}

/// Who folds: the leader keeps what it set aside (and moves it to the
/// quarantine store); a follower only reads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    Leader,
    Follower,
}

/// What recovery folded and what it says about what it could not.
pub struct Salvaged {
    pub projection: Projection,
    /// Values set aside or refused, which the card reports as missing.
    pub unreadable: u32,
    /// Notices for the page: key, level, phrase.
    pub notices: Vec<(&'static str, Level, Phrase)>,
    /// Lines for the worker's log.
    pub logs: Vec<String>,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Folds `snapshot` and `tail`, never past an entry the fold refuses, and
/// says what was set aside and what was refused. Positions held by
/// unreadable values (`last_position`) are never written over.
pub fn salvage(
    snapshot: Option<ProjectionSnapshot>,
    tail: &[JournalEntry],
    set_aside: &[SetAside<'_>],
    last_position: u64,
    reader: Reader,
) -> Salvaged {
    let mut notices = Vec::new();
    let mut logs = Vec::new();
    for s in set_aside.iter().take(MAX_LOGGED) {
        logs.push(match s.position {
            Some(p) => format!("set aside: position {p} in {} ({})", s.place, s.reason),
            None => format!("set aside: {} key {} ({})", s.place, s.key, s.reason),
        });
    }
    if !set_aside.is_empty() {
        let count = count(set_aside.len());
        let phrase = match reader {
            Reader::Leader => Phrase::RecordsQuarantined { count },
            Reader::Follower => Phrase::FollowerUnreadable { count },
        };
        notices.push(("quarantine", Level::Warning, phrase));
    }
    let (mut projection, mut refused) =
        Projection::salvage(RetentionPolicy::default(), snapshot, tail, MAX_REFUSED);
    // A value set aside now leaves its position empty: the quarantine
    // notice has said so, and the replay's notice does not count it again.
    refused.retain(|r| {
        let set_aside_now = set_aside.iter().any(|s| s.position == Some(r.position));
        let stored = tail
            .binary_search_by_key(&r.position, |e| e.position)
            .is_ok();
        stored || !set_aside_now
    });
    // A follower cannot repair what it cannot read; the leader's card says
    // what is missing, and its notice where the fold stopped believing.
    if let (Reader::Leader, Some(first)) = (reader, refused.iter().map(|r| r.position).min()) {
        for r in refused.iter().take(MAX_LOGGED) {
            logs.push(format!("refused: {r}"));
        }
        notices.push((
            "replay",
            Level::Warning,
            Phrase::ReplayRefused {
                count: count(refused.len()),
                first,
            },
        ));
    }
    if set_aside.len() + refused.len() > MAX_LOGGED {
        logs.push(format!(
            "{} set aside and {} refused in all",
            set_aside.len(),
            refused.len()
        ));
    }
    projection.position = projection.position.max(last_position);
    Salvaged {
        projection,
        unreadable: count(set_aside.len() + refused.len()),
        notices,
        logs,
    }
}
