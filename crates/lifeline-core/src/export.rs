//! Evidence export and import: one session's journal entries as JSON Lines
//! that DuckDB reads as they are (`read_json_auto('session.jsonl')`), its
//! output artifacts as files, both in one uncompressed ustar archive
//! (docs/export.md).
//!
//! Every line is one flat object with the same top-level columns
//! ([`COLUMNS`]), so DuckDB infers one table: `position`, `at_ms`, `kind`
//! (the record type), `session`, `turn`, `command`, `outcome`, `text`,
//! `artifact` (a digest; the bytes are `artifacts/<digest>` in the archive)
//! and `record` (the full journal record, nested).
//!
//! Secrets are not exported because the journal holds none: profiles keep
//! credential *references* ([`crate::profile::EnvValue::Secret`]) and a
//! [`crate::profile::Secret`] value has no `Serialize` at all. The tests
//! plant a secret through every path that reaches a record and scan.
//!
//! [`import_lines`] rebuilds entries from lines, checking each with the
//! journal's own schema checks, and numbers them densely from 1 so
//! [`Projection`] folds them. An import is shown read-only; it is never
//! written into the live journal.

use core::fmt;
use lifeline_decode::Decode;
use lifeline_encode::Encode;
use std::collections::BTreeMap;

use crate::flat::{FlatMap, FlatSet};

use serde::{Deserialize, Serialize};

use crate::event::RetainedBody;
use crate::id::{CommandId, Digest, IdempotencyKey, LeaseId, Millis, ProviderRequestId, RuntimeId};
use crate::id::{SessionId, TurnId, WorkspaceId};
use crate::journal::{JournalEntry, JournalRecord};
use crate::projection::{Projection, RetentionPolicy};
use crate::schema::{limits, Schema, V1};

/// The JSON Lines file inside the archive.
pub const SESSION_FILE: &str = "session.jsonl";
/// Artifact files are `artifacts/<digest>` (64 hex digits).
pub const ARTIFACT_DIR: &str = "artifacts/";
/// The top-level keys of every line, in order.
pub const COLUMNS: [&str; 10] = [
    "position", "at_ms", "kind", "session", "turn", "command", "outcome", "text", "artifact",
    "record",
];
/// At most this many lines are imported.
pub const MAX_IMPORT_LINES: usize = 1_000_000;
/// One line: a journal record plus its columns (text is repeated once).
pub const MAX_LINE_BYTES: usize = 2 * limits::MAX_RECORD_BYTES + 4096;
/// An archive larger than this is refused before it is read.
pub const MAX_ARCHIVE_BYTES: usize = 256 << 20;

/// One line of `session.jsonl`. Written from the journal's own record
/// (`ExportLine<&JournalRecord>`, no copy of it), read back owned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct ExportLine<R = JournalRecord> {
    /// The entry's position in the journal it came from (not dense: other
    /// sessions' entries are left out).
    pub position: u64,
    pub at_ms: u64,
    /// The record type, snake_case (`turn_recorded`, `event`, ...).
    pub kind: String,
    pub session: SessionId,
    pub turn: Option<TurnId>,
    pub command: Option<CommandId>,
    pub outcome: Option<String>,
    /// Prompt, reply, command line, output text or failure message.
    pub text: Option<String>,
    /// Output kept as an artifact: `artifacts/<digest>` in the archive.
    pub artifact: Option<Digest>,
    pub record: R,
}

/// What belongs to one session, collected in one pass over the journal.
#[derive(Default)]
struct Members {
    workspace: Option<WorkspaceId>,
    leases: FlatSet<LeaseId>,
    runtimes: FlatSet<RuntimeId>,
    turns: FlatSet<TurnId>,
    requests: FlatMap<ProviderRequestId, TurnId>,
    commands: FlatMap<CommandId, Option<TurnId>>,
    /// Idempotency keys of planned commands and tool calls, to their turn.
    keys: BTreeMap<IdempotencyKey, TurnId>,
    /// Artifacts the session's events name, in the order met; sorted and
    /// without repeats once the scan is finished (a sorted vector, because
    /// a `BTreeSet` of digests would compile one more copy of the tree).
    digests: Vec<Digest>,
}

fn members(entries: &[JournalEntry], session: SessionId) -> Members {
    let mut scan = Scan::new(session);
    scan.feed(entries);
    scan.finish().members
}

/// The first pass of an export that never holds the whole journal: what
/// belongs to one session, gathered from batches fed in position order.
/// Only identities are kept, never entries.
pub struct Scan {
    session: SessionId,
    m: Members,
    /// Every lease and assignment seen, resolved against the session's
    /// workspace at the end (a lease may precede the session's opening).
    granted: Vec<(WorkspaceId, LeaseId)>,
    assigned: Vec<(LeaseId, RuntimeId)>,
}

impl Scan {
    pub fn new(session: SessionId) -> Scan {
        Scan {
            session,
            m: Members::default(),
            granted: Vec::new(),
            assigned: Vec::new(),
        }
    }

    pub fn feed(&mut self, entries: &[JournalEntry]) {
        let session = self.session;
        let m = &mut self.m;
        for e in entries {
            match &e.record {
                JournalRecord::SessionOpened {
                    session: s,
                    workspace,
                    ..
                } if *s == session && m.workspace.is_none() => m.workspace = Some(*workspace),
                JournalRecord::LeaseGranted { workspace, lease } => {
                    self.granted.push((*workspace, *lease));
                }
                JournalRecord::RuntimeAssigned { lease, runtime, .. } => {
                    self.assigned.push((*lease, *runtime));
                }
                JournalRecord::TurnRecorded {
                    session: s,
                    turn,
                    plan,
                    ..
                } if *s == session => {
                    m.turns.insert(*turn);
                    for i in 0..plan.len() {
                        m.keys.insert(crate::agent::plan_key(*turn, i), *turn);
                    }
                }
                JournalRecord::ProviderRequested { request, turn, .. }
                    if m.turns.contains(turn) =>
                {
                    m.requests.insert(*request, *turn);
                }
                JournalRecord::ProviderReplied {
                    request,
                    tool_calls,
                    ..
                } => {
                    if let Some(turn) = m.requests.get(request).copied() {
                        for i in 0..tool_calls.len() {
                            m.keys
                                .insert(crate::model::tool_key(turn, *request, i), turn);
                        }
                    }
                }
                JournalRecord::CommandAdmitted(c) if c.binding.session == session => {
                    m.commands.insert(c.command, m.keys.get(&c.key).copied());
                }
                JournalRecord::Event(ev) if m.commands.contains_key(&ev.command) => {
                    if let RetainedBody::Stdout(c) | RetainedBody::Stderr(c) = &ev.body {
                        if let Some(a) = &c.artifact {
                            m.digests.push(a.digest);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    pub fn finish(mut self) -> Selection {
        crate::order::by(&mut self.m.digests, Ord::cmp);
        self.m.digests.dedup();
        let workspace = self.m.workspace;
        self.m.leases = self
            .granted
            .iter()
            .filter(|(w, _)| Some(*w) == workspace)
            .map(|(_, l)| *l)
            .collect();
        self.m.runtimes = self
            .assigned
            .iter()
            .filter(|(l, _)| self.m.leases.contains(l))
            .map(|(_, r)| *r)
            .collect();
        Selection {
            session: self.session,
            members: self.m,
        }
    }
}

/// The second pass: what [`Scan`] found, applied to batches of the same
/// journal in position order.
pub struct Selection {
    session: SessionId,
    members: Members,
}

impl Selection {
    /// The journal has no such session.
    pub fn is_empty(&self) -> bool {
        self.members.workspace.is_none()
    }

    /// The lines of this batch's entries that belong to the session.
    pub fn lines(&self, entries: &[JournalEntry]) -> Vec<String> {
        if self.is_empty() {
            return Vec::new();
        }
        entries
            .iter()
            .filter_map(|e| columns(&self.members, e, self.session))
            .map(|l| lifeline_encode::to_string(&l))
            .collect()
    }

    /// The artifacts the session's lines name, to put in the archive.
    pub fn artifact_digests(&self) -> Vec<Digest> {
        self.members.digests.clone()
    }
}

/// The columns of one entry, or `None` when it is not the session's.
fn columns<'a>(
    m: &Members,
    e: &'a JournalEntry,
    session: SessionId,
) -> Option<ExportLine<&'a JournalRecord>> {
    let mut turn = None;
    let mut command = None;
    let mut outcome = None;
    let mut text = None;
    let mut artifact = None;
    let belongs = match &e.record {
        JournalRecord::LeaseGranted { lease, .. } => m.leases.contains(lease),
        JournalRecord::RuntimeAssigned { lease, .. }
        | JournalRecord::RuntimeRetired { lease, .. }
        | JournalRecord::RuntimeGone { lease, .. } => m.leases.contains(lease),
        JournalRecord::TerminationRequested {
            runtime,
            command: c,
            ..
        } => {
            command = *c;
            m.runtimes.contains(runtime)
        }
        JournalRecord::CommandAdmitted(c) => {
            command = Some(c.command);
            text = Some(c.binding.command_line.clone());
            m.commands.contains_key(&c.command)
        }
        JournalRecord::DispatchExposed { command: c, .. }
        | JournalRecord::Acknowledged { command: c, .. }
        | JournalRecord::DispatchRefused { command: c, .. }
        | JournalRecord::CancelRequested { command: c, .. } => {
            command = Some(*c);
            m.commands.contains_key(c)
        }
        JournalRecord::OutcomeChanged { command: c, to, .. } => {
            command = Some(*c);
            outcome = Some(name(to));
            m.commands.contains_key(c)
        }
        JournalRecord::Event(ev) => {
            command = Some(ev.command);
            match &ev.body {
                RetainedBody::Stdout(c) | RetainedBody::Stderr(c) => {
                    text = Some(c.inline.clone());
                    artifact = c.artifact.as_ref().map(|a| a.digest);
                }
                RetainedBody::Terminal(t) => {
                    outcome = Some(name(&t.status));
                    text = (!t.message.is_empty()).then(|| t.message.clone());
                }
                RetainedBody::Tool { detail, .. } => text = Some(detail.clone()),
                RetainedBody::Lifecycle { phase } => text = Some(phase.clone()),
                RetainedBody::Checkpoint { label } => text = Some(label.clone()),
            }
            m.commands.contains_key(&ev.command)
        }
        JournalRecord::ArtifactStored { digest, .. } => {
            artifact = Some(*digest);
            m.digests.binary_search(digest).is_ok()
        }
        JournalRecord::Recovery(r) => {
            text = Some(r.observed.clone());
            outcome = Some(name(&r.kind));
            let one = r
                .outcomes
                .iter()
                .find(|o| m.commands.contains_key(&o.command));
            command = one.map(|o| o.command);
            one.is_some() || r.runtime.is_some_and(|rt| m.leases.contains(&rt.lease))
        }
        JournalRecord::SessionOpened {
            session: s, title, ..
        } => {
            text = Some(title.clone());
            *s == session
        }
        JournalRecord::TurnRecorded {
            session: s,
            turn: t,
            prompt,
            ..
        } => {
            turn = Some(*t);
            text = Some(prompt.clone());
            *s == session
        }
        JournalRecord::TurnFinished {
            turn: t,
            status,
            reply,
            ..
        } => {
            turn = Some(*t);
            outcome = Some(status.as_str().to_string());
            text = Some(reply.clone());
            m.turns.contains(t)
        }
        JournalRecord::ProviderRequested {
            request, turn: t, ..
        } => {
            turn = Some(*t);
            m.requests.contains_key(request)
        }
        JournalRecord::ProviderReplied {
            request, text: t, ..
        } => {
            turn = m.requests.get(request).copied();
            outcome = Some("replied".into());
            text = Some(t.clone());
            turn.is_some()
        }
        JournalRecord::ProviderFailed {
            request,
            class,
            message,
            ..
        } => {
            turn = m.requests.get(request).copied();
            outcome = Some(class.as_str().to_string());
            text = Some(message.clone());
            turn.is_some()
        }
        JournalRecord::ProviderRetried {
            request,
            attempt,
            class,
            message,
            ..
        } => {
            turn = m.requests.get(request).copied();
            outcome = Some(format!("retried_{}_{attempt}", class.as_str()));
            text = Some(message.clone());
            turn.is_some()
        }
        JournalRecord::Session { record } => record.session() == session,
    };
    if !belongs {
        return None;
    }
    if turn.is_none() {
        turn = command.and_then(|c| m.commands.get(&c).copied().flatten());
    }
    Some(ExportLine {
        position: e.position,
        at_ms: e.at.0,
        kind: kind_of(&e.record),
        session,
        turn,
        command,
        outcome,
        text,
        artifact,
        record: &e.record,
    })
}

/// The serde name of a unit enum value (`completed`, `host_loss`), read
/// off the JSON text its `Encode` writes: no second encoder per type.
fn name<T: Serialize + lifeline_encode::Encode>(value: &T) -> String {
    unquoted(lifeline_encode::to_vec(value))
}

/// A serde name is a snake_case word, written with no escapes, so its text
/// is the JSON string without its quotes. (Not serde_json's decoder: this
/// is the only decoding the controller's export does, and it would link
/// serde_json's parser into the browser's modules.)
fn unquoted(json: Vec<u8>) -> String {
    let text = String::from_utf8_lossy(&json);
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(name) if !name.contains(['"', '\\']) => name.to_string(),
        _ => text.into_owned(),
    }
}

/// The record's `type` tag: the first field of its JSON text, since the
/// record enum is internally tagged and the tag is written first. Read
/// off the text, not decoded: see [`unquoted`].
fn kind_of(record: &JournalRecord) -> String {
    let json = lifeline_encode::to_vec(record);
    json.strip_prefix(br#"{"type":""#)
        .and_then(|rest| {
            let end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
            (rest[end] == b'"').then(|| String::from_utf8_lossy(&rest[..end]).into_owned())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// The entries of `session`'s lines, in journal order.
pub fn session_lines(
    entries: &[JournalEntry],
    session: SessionId,
) -> Vec<ExportLine<&JournalRecord>> {
    let m = members(entries, session);
    if m.workspace.is_none() {
        return Vec::new();
    }
    entries
        .iter()
        .filter_map(|e| columns(&m, e, session))
        .collect()
}

/// One JSON object per entry that belongs to `session` (see the module
/// docs for what belongs and for the columns).
pub fn export_lines(entries: &[JournalEntry], session: SessionId) -> Vec<String> {
    session_lines(entries, session)
        .iter()
        .map(lifeline_encode::to_string)
        .collect()
}

/// The artifacts the session's lines name, to put in the archive.
pub fn artifact_digests(entries: &[JournalEntry], session: SessionId) -> Vec<Digest> {
    members(entries, session).digests
}

/// A suggested download name.
pub fn file_name(session: SessionId) -> String {
    format!("lifeline-evidence-{session}.tar")
}

/// Why an import was refused. Line numbers count from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportError {
    /// The archive is not a tar this module can read, or lacks the file.
    Archive(String),
    TooManyLines {
        limit: usize,
    },
    LineTooLong {
        line: usize,
        bytes: usize,
    },
    /// The line is not an export line, or its record fails the checks.
    Line {
        line: usize,
        detail: String,
    },
    /// No line opens a session, or lines name different sessions.
    Session(String),
}

/// What a person is told of an import that failed: which way the file is
/// not an evidence archive this build reads. The parser's own words
/// (`ImportError`'s `Display`) go to the worker's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportFault {
    NotAnArchive,
    TooManyLines {
        limit: u64,
    },
    LineTooLong {
        line: u64,
        bytes: u64,
        limit: u64,
    },
    /// The line is not an export line, or its record fails the checks.
    BadLine {
        line: u64,
    },
    /// No line opens a session, or lines name different sessions.
    NoSession,
}

impl ImportError {
    pub fn fault(&self) -> ImportFault {
        match self {
            ImportError::Archive(_) => ImportFault::NotAnArchive,
            ImportError::TooManyLines { limit } => ImportFault::TooManyLines {
                limit: *limit as u64,
            },
            ImportError::LineTooLong { line, bytes } => ImportFault::LineTooLong {
                line: *line as u64,
                bytes: *bytes as u64,
                limit: MAX_LINE_BYTES as u64,
            },
            ImportError::Line { line, .. } => ImportFault::BadLine { line: *line as u64 },
            ImportError::Session(_) => ImportFault::NoSession,
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Archive(d) => write!(f, "not a Lifeline evidence archive: {d}"),
            ImportError::TooManyLines { limit } => {
                write!(
                    f,
                    "more than {limit} lines; this build imports at most {limit}"
                )
            }
            ImportError::LineTooLong { line, bytes } => write!(
                f,
                "line {line} is {bytes} bytes; the limit is {MAX_LINE_BYTES}"
            ),
            ImportError::Line { line, detail } => write!(f, "line {line}: {detail}"),
            ImportError::Session(d) => write!(f, "{d}"),
        }
    }
}

impl std::error::Error for ImportError {}

/// Rebuilds journal entries from export lines, numbered densely from 1 in
/// line order (blank lines are skipped). Each record is checked with the
/// journal's schema checks; lines must keep their export order.
pub fn import_lines<'a>(
    lines: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<JournalEntry>, ImportError> {
    Ok(parse(lines, MAX_IMPORT_LINES, &json_line)?
        .into_iter()
        .map(|(_, e)| e)
        .collect())
}

/// Decodes one export line; the error is the decoder's own words.
fn json_line(text: &str) -> Result<ExportLine, String> {
    lifeline_decode::from_str(text).map_err(|e| e.to_string())
}

/// Entries with the line each came from.
fn parse<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    max_lines: usize,
    decode: &dyn Fn(&str) -> Result<ExportLine, String>,
) -> Result<Vec<(usize, JournalEntry)>, ImportError> {
    let mut out: Vec<(usize, JournalEntry)> = Vec::new();
    let mut session: Option<SessionId> = None;
    let mut last_position = 0u64;
    for (i, text) in lines.into_iter().enumerate() {
        let line = i + 1;
        if text.trim().is_empty() {
            continue;
        }
        if out.len() >= max_lines {
            return Err(ImportError::TooManyLines { limit: max_lines });
        }
        if text.len() > MAX_LINE_BYTES {
            return Err(ImportError::LineTooLong {
                line,
                bytes: text.len(),
            });
        }
        let bad = |detail: String| ImportError::Line { line, detail };
        let parsed = decode(text).map_err(bad)?;
        if *session.get_or_insert(parsed.session) != parsed.session {
            return Err(bad(
                "it names another session than the lines before it".into()
            ));
        }
        if parsed.position <= last_position {
            return Err(bad(format!(
                "position {} does not follow {last_position}",
                parsed.position
            )));
        }
        last_position = parsed.position;
        if parsed.kind != kind_of(&parsed.record) {
            return Err(bad(format!(
                "kind {:?} does not match its record",
                parsed.kind
            )));
        }
        let entry = JournalEntry {
            v: V1,
            position: out.len() as u64 + 1,
            at: Millis(parsed.at_ms),
            record: parsed.record,
        };
        entry.validate().map_err(bad)?;
        out.push((line, entry));
    }
    Ok(out)
}

/// An imported run, folded apart from the live journal.
#[derive(Clone, Debug)]
pub struct Imported {
    pub session: SessionId,
    pub title: String,
    pub projection: Projection,
    pub lines: usize,
}

/// Parses `session.jsonl` and folds it; a line that does not fold (an entry
/// that contradicts the ones before it) is named like a malformed one.
pub fn import_session(text: &str, policy: RetentionPolicy) -> Result<Imported, ImportError> {
    let parsed = parse(text.split('\n'), MAX_IMPORT_LINES, &json_line)?;
    // An imported session has no journal to read a settled command's output
    // back from when it is shown, so every command keeps its events (the
    // file's line limit bounds them).
    let policy = RetentionPolicy {
        settled_with_events: usize::MAX,
        ..policy
    };
    let mut projection = Projection::new(policy);
    for (line, entry) in &parsed {
        projection.apply(entry).map_err(|e| ImportError::Line {
            line: *line,
            detail: e.detail,
        })?;
    }
    let (session, title) = parsed
        .iter()
        .find_map(|(_, e)| match &e.record {
            JournalRecord::SessionOpened { session, title, .. } => Some((*session, title.clone())),
            _ => None,
        })
        .ok_or_else(|| ImportError::Session("no line opens a session".into()))?;
    Ok(Imported {
        session,
        title,
        projection,
        lines: parsed.len(),
    })
}

// ----- the archive: plain ustar, no compression -----------------------------

const BLOCK: usize = 512;

fn octal(field: &mut [u8], value: u64) {
    // Digits, then NUL, right-aligned with leading zeros.
    let digits = field.len() - 1;
    let text = format!("{value:0digits$o}");
    field[..digits].copy_from_slice(&text.as_bytes()[text.len() - digits..]);
    field[digits] = 0;
}

/// A ustar archive of `files` (names up to 100 bytes), mode 0644, `mtime`
/// in seconds since the epoch.
pub fn tar(files: &[(&str, &[u8])], mtime: u64) -> Vec<u8> {
    let size: usize = files
        .iter()
        .map(|(_, d)| BLOCK + d.len().div_ceil(BLOCK) * BLOCK)
        .sum();
    let mut out = Vec::with_capacity(size + 2 * BLOCK);
    for (name, data) in files {
        let mut h = [0u8; BLOCK];
        let n = name.len().min(100);
        h[..n].copy_from_slice(&name.as_bytes()[..n]);
        octal(&mut h[100..108], 0o644);
        octal(&mut h[108..116], 0);
        octal(&mut h[116..124], 0);
        octal(&mut h[124..136], data.len() as u64);
        octal(&mut h[136..148], mtime);
        h[148..156].fill(b' ');
        h[156] = b'0';
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        let sum: u32 = h.iter().map(|b| *b as u32).sum();
        octal(&mut h[148..155], sum as u64);
        h[155] = b' ';
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
    }
    out.resize(out.len() + 2 * BLOCK, 0);
    out
}

fn parse_octal(field: &[u8]) -> Option<u64> {
    let text = core::str::from_utf8(field).ok()?;
    let text = text.trim_matches(|c: char| c == '\0' || c == ' ');
    if text.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(text, 8).ok()
}

/// The regular files of a tar archive, by name. Checks every header's
/// checksum and bounds; other entry types are skipped.
pub fn untar(bytes: &[u8]) -> Result<Vec<(String, &[u8])>, ImportError> {
    let err = |d: String| ImportError::Archive(d);
    if bytes.len() > MAX_ARCHIVE_BYTES {
        return Err(err(format!(
            "{} bytes; the limit is {MAX_ARCHIVE_BYTES}",
            bytes.len()
        )));
    }
    let mut files = Vec::new();
    let mut at = 0usize;
    while at + BLOCK <= bytes.len() {
        let h = &bytes[at..at + BLOCK];
        if h.iter().all(|b| *b == 0) {
            return Ok(files);
        }
        let stored = parse_octal(&h[148..156]).ok_or_else(|| err("bad header checksum".into()))?;
        let sum: u64 = h
            .iter()
            .enumerate()
            .map(|(i, b)| {
                if (148..156).contains(&i) {
                    32
                } else {
                    *b as u64
                }
            })
            .sum();
        if stored != sum {
            return Err(err(format!("header at byte {at} fails its checksum")));
        }
        let size = parse_octal(&h[124..136]).ok_or_else(|| err("bad size field".into()))? as usize;
        let start = at + BLOCK;
        let end = start
            .checked_add(size)
            .filter(|e| *e <= bytes.len())
            .ok_or_else(|| err("an entry runs past the end of the archive".into()))?;
        let name_end = h[..100].iter().position(|b| *b == 0).unwrap_or(100);
        let mut name = String::from_utf8_lossy(&h[..name_end]).into_owned();
        if &h[257..262] == b"ustar" && h[345] != 0 {
            let prefix_end = h[345..500].iter().position(|b| *b == 0).unwrap_or(155);
            name = format!(
                "{}/{name}",
                String::from_utf8_lossy(&h[345..345 + prefix_end])
            );
        }
        if matches!(h[156], b'0' | 0) {
            files.push((name, &bytes[start..end]));
        }
        at = start + size.div_ceil(BLOCK) * BLOCK;
    }
    if at != bytes.len() {
        Err(err("the archive is cut short".into()))
    } else if files.is_empty() {
        Err(err("no files in it".into()))
    } else {
        Ok(files)
    }
}

/// The archive for `session`: `session.jsonl`, then `artifacts/<digest>`
/// for each artifact given.
pub fn bundle(lines: &[String], artifacts: &[(Digest, String)], mtime: u64) -> Vec<u8> {
    let mut jsonl = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for l in lines {
        jsonl.push_str(l);
        jsonl.push('\n');
    }
    let names: Vec<String> = artifacts
        .iter()
        .map(|(d, _)| format!("{ARTIFACT_DIR}{d}"))
        .collect();
    let mut files: Vec<(&str, &[u8])> = vec![(SESSION_FILE, jsonl.as_bytes())];
    for ((_, data), name) in artifacts.iter().zip(&names) {
        files.push((name, data.as_bytes()));
    }
    tar(&files, mtime)
}

/// `session.jsonl` out of an archive, and the artifacts that match their
/// digest, in archive order (a mismatching one is an error: the archive
/// was altered).
pub fn unbundle(bytes: &[u8]) -> Result<(String, Vec<(Digest, String)>), ImportError> {
    let files = untar(bytes)?;
    let mut jsonl = None;
    let mut artifacts = Vec::new();
    for (name, data) in files {
        let name = name.trim_start_matches("./");
        if name == SESSION_FILE || name.ends_with(&format!("/{SESSION_FILE}")) {
            jsonl = Some(
                String::from_utf8(data.to_vec())
                    .map_err(|_| ImportError::Archive(format!("{SESSION_FILE} is not UTF-8")))?,
            );
        } else if let Some(hex) = name.rsplit_once(ARTIFACT_DIR).map(|(_, h)| h) {
            let digest: Digest = hex.parse().map_err(|_| {
                ImportError::Archive(format!("artifact name {hex:?} is not a digest"))
            })?;
            if Digest::of(data) != digest {
                return Err(ImportError::Archive(format!(
                    "artifact {digest} does not match its content"
                )));
            }
            artifacts.push((digest, String::from_utf8_lossy(data).into_owned()));
        }
    }
    let jsonl = jsonl.ok_or_else(|| ImportError::Archive(format!("it holds no {SESSION_FILE}")))?;
    Ok((jsonl, artifacts))
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
