//! The built-in local agent (DESIGN.md): offline, keyless, deterministic.
//!
//! Every prompt line that starts with `$ ` is a command, run in order and
//! stopping at the first that does not complete. Any other prompt plans one
//! `ls` so the reply can list the workspace's files.
//!
//! The agent keeps no state of its own. [`next_step`] is a pure function of
//! the projection: each planned command is admitted under a key derived from
//! the turn and its index ([`plan_key`]), so a controller that restarts in
//! the middle of a turn re-derives the same step and finds the command it
//! already admitted instead of running it again. A command whose outcome is
//! uncertain ends the turn as interrupted: nothing after it runs and it is
//! never re-run on the agent's own initiative.

use crate::id::{CommandId, TurnId};
use crate::journal::TurnStatus;
use crate::outcome::Outcome;
use crate::projection::{Projection, RuntimeStatus};
use crate::schema::limits;

/// The prefix that turns a prompt line into a command.
pub const COMMAND_PREFIX: &str = "$ ";

/// What the agent will do for a prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub commands: Vec<String>,
    /// True when the prompt held no command and the plan only lists files.
    pub conversational: bool,
}

/// Why a prompt cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    Empty,
    TooManyCommands { count: usize },
    CommandTooLong { line: usize },
    PromptTooLong { bytes: usize },
}

impl core::fmt::Display for PlanError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PlanError::Empty => write!(f, "the message is empty"),
            PlanError::TooManyCommands { count } => write!(
                f,
                "the message holds {count} commands; one turn runs at most {}",
                limits::MAX_PLAN_COMMANDS
            ),
            PlanError::CommandTooLong { line } => write!(
                f,
                "the command on line {line} is longer than {} bytes",
                limits::MAX_COMMAND_LINE_BYTES
            ),
            PlanError::PromptTooLong { bytes } => write!(
                f,
                "the message is {bytes} bytes; the limit is {}",
                limits::MAX_PROMPT_BYTES
            ),
        }
    }
}

/// The command that lists the workspace for a conversational reply.
const LIST_FILES: &str = "ls";

pub fn plan(prompt: &str) -> Result<Plan, PlanError> {
    if prompt.len() > limits::MAX_PROMPT_BYTES {
        return Err(PlanError::PromptTooLong {
            bytes: prompt.len(),
        });
    }
    if prompt.trim().is_empty() {
        return Err(PlanError::Empty);
    }
    let mut commands = Vec::new();
    for (n, line) in prompt.lines().enumerate() {
        let Some(command) = line.trim_start().strip_prefix(COMMAND_PREFIX) else {
            continue;
        };
        let command = command.trim();
        if command.is_empty() {
            continue;
        }
        if command.len() > limits::MAX_COMMAND_LINE_BYTES {
            return Err(PlanError::CommandTooLong { line: n + 1 });
        }
        commands.push(command.to_string());
    }
    if commands.len() > limits::MAX_PLAN_COMMANDS {
        return Err(PlanError::TooManyCommands {
            count: commands.len(),
        });
    }
    if commands.is_empty() {
        return Ok(Plan {
            commands: vec![LIST_FILES.to_string()],
            conversational: true,
        });
    }
    Ok(Plan {
        commands,
        conversational: false,
    })
}

pub use crate::derived_key::plan_key;

/// Where a turn stands and what the agent does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Admit planned command `index` under [`plan_key`].
    Admit { index: usize, line: String },
    /// A command is on its way; nothing to do until its outcome changes.
    Wait { command: CommandId },
    /// Record the turn's end.
    Finish { status: TurnStatus, reply: String },
}

/// The next step for `turn`, or `None` when it has ended or is unknown.
pub fn next_step(projection: &Projection, turn: TurnId) -> Option<Step> {
    let t = projection.turns.get(&turn)?;
    if t.end.is_some() {
        return None;
    }
    let conversational = plan(&t.prompt).is_ok_and(|p| p.conversational);
    let mut lines = Vec::new();
    for (index, line) in t.plan.iter().enumerate() {
        let Some(command) = projection.keys.get(&plan_key(turn, index)).copied() else {
            return Some(Step::Admit {
                index,
                line: line.clone(),
            });
        };
        let Some(c) = projection.command(command) else {
            return Some(Step::Wait { command });
        };
        let runtime_lives = projection.runtime(c.binding.runtime).is_some_and(|(_, r)| {
            r.generation == c.binding.generation && r.status == RuntimeStatus::Current
        });
        let status = match c.outcome {
            // Stop raced the command's end: the plan goes no further.
            Outcome::Completed if c.stop_requested() => Some(TurnStatus::Cancelled),
            Outcome::Completed => None,
            Outcome::Failed | Outcome::TimedOut => Some(TurnStatus::Failed),
            Outcome::Cancelled => Some(TurnStatus::Cancelled),
            Outcome::Lost | Outcome::MayHaveStarted => Some(TurnStatus::Interrupted),
            Outcome::NotDispatched if !runtime_lives => Some(TurnStatus::Interrupted),
            Outcome::Admitted | Outcome::NotDispatched | Outcome::Dispatched | Outcome::Running => {
                return Some(Step::Wait { command })
            }
        };
        lines.push((line.as_str(), c.outcome, exit_code(projection, command)));
        if let Some(status) = status {
            let skipped = t.plan.len() - index - 1;
            return Some(Step::Finish {
                status,
                reply: summary(&lines, status, skipped),
            });
        }
    }
    let reply = if conversational {
        let files = t
            .plan
            .first()
            .and_then(|_| projection.keys.get(&plan_key(turn, 0)))
            .map(|c| inline_stdout(projection, *c))
            .unwrap_or_default();
        conversational_reply(&files)
    } else {
        summary(&lines, TurnStatus::Completed, 0)
    };
    Some(Step::Finish {
        status: TurnStatus::Completed,
        reply,
    })
}

/// A session's unfinished turns, oldest first (and newest first from the
/// back, without walking the rest). More than one is open when
/// a turn was left open by an execution that failed while it ran and the
/// person went on (a resume, another profile) with a new one.
pub fn open_turns(
    projection: &Projection,
    session: crate::id::SessionId,
) -> impl DoubleEndedIterator<Item = TurnId> + '_ {
    projection
        .sessions
        .get(&session)
        .into_iter()
        .flat_map(|s| s.turns.iter().copied())
        .filter(|t| projection.turns.get(t).is_some_and(|t| t.end.is_none()))
}

/// The turn the agent is working on in a session: its newest unfinished one.
pub fn open_turn(projection: &Projection, session: crate::id::SessionId) -> Option<TurnId> {
    open_turns(projection, session).next_back()
}

/// Re-issued commands of a session that have not ended: work the user
/// started outside any turn, which Stop ends like a turn's and which keeps
/// the session busy while it runs.
pub fn running_reissues(
    projection: &Projection,
    session: crate::id::SessionId,
) -> impl Iterator<Item = &crate::projection::CommandView> {
    projection.commands.values().filter(move |c| {
        c.reissue_of.is_some()
            && c.binding.session == session
            && matches!(
                c.outcome,
                crate::outcome::Outcome::Admitted
                    | crate::outcome::Outcome::Dispatched
                    | crate::outcome::Outcome::Running
            )
    })
}

/// The session has work in flight: an open turn or a running re-issue.
pub fn busy(projection: &Projection, session: crate::id::SessionId) -> bool {
    open_turn(projection, session).is_some()
        || running_reissues(projection, session).next().is_some()
}

fn exit_code(projection: &Projection, command: CommandId) -> Option<i32> {
    let c = projection.command(command)?;
    match &c.terminal.as_ref()?.body {
        crate::event::RetainedBody::Terminal(t) => t.exit_code,
        _ => None,
    }
}

fn inline_stdout(projection: &Projection, command: CommandId) -> String {
    let Some(c) = projection.command(command) else {
        return String::new();
    };
    let mut out = String::new();
    for e in &c.events {
        if let crate::event::RetainedBody::Stdout(chunk) = &e.body {
            out.push_str(&chunk.inline);
        }
    }
    out
}

fn conversational_reply(files: &str) -> String {
    let files: Vec<&str> = files.lines().filter(|l| !l.is_empty()).collect();
    let listing = if files.is_empty() {
        "The workspace is empty.".to_string()
    } else {
        format!("Files in the workspace: {}.", files.join(", "))
    };
    format!(
        "I am the built-in local agent: I run commands, nothing else. Start a line with `$ ` to run it, for example `$ echo hello > notes.txt`; several lines run in order and stop at the first that does not complete. Commands: echo cat ls pwd mkdir rm cp mv touch head tail wc grep seq sleep true false env sha256sum, with |, &&, ;, > and >>. {listing}"
    )
}

fn summary(lines: &[(&str, Outcome, Option<i32>)], status: TurnStatus, skipped: usize) -> String {
    let mut parts = Vec::new();
    for (line, outcome, code) in lines {
        let detail = match (outcome, code) {
            (Outcome::Completed, _) => "completed".to_string(),
            (Outcome::Failed, Some(code)) => format!("failed with exit status {code}"),
            (Outcome::MayHaveStarted, _) => {
                "may have started: its outcome is unknown, so I did not run it again".to_string()
            }
            (Outcome::Lost, _) => {
                "was lost: it started but its runtime died before it finished; I did not run it again"
                    .to_string()
            }
            (Outcome::NotDispatched, _) => "was never sent to a runtime".to_string(),
            (other, _) => other.label().to_string(),
        };
        parts.push(format!("`{line}` {detail}"));
    }
    let mut reply = match status {
        TurnStatus::Completed => format!(
            "Ran {} command{}: {}.",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" },
            parts.join("; ")
        ),
        _ => format!("Stopped: {}.", parts.join("; ")),
    };
    if skipped > 0 {
        reply.push_str(&format!(
            " {skipped} later command{} not run.",
            if skipped == 1 { " was" } else { "s were" }
        ));
    }
    reply
}
