//! Model-backed turns: the sibling of the built-in agent ([`crate::agent`])
//! for turns a model provider answers.
//!
//! The controller shell does the IO (it calls the provider with `fetch` and
//! runs tools as commands); this module decides. [`next_model_step`] is a
//! pure function of the projection, like [`crate::agent::next_step`]:
//!
//! * each provider request is recorded ([`JournalRecord::ProviderRequested`])
//!   and confirmed durable before it is sent, and its reply or failure is
//!   recorded when it ends. A request without a recorded outcome that no
//!   live fetch owns (after a reload or a worker restart none does) is
//!   uncertain: the turn ends as interrupted and the request is never sent
//!   again;
//! * each tool call of a reply becomes one command, admitted under a key
//!   derived from the turn, the request and the call's index ([`tool_key`]),
//!   so a controller that restarts re-derives the same step and finds the
//!   command instead of running it again. A tool call that cannot become a
//!   command (an unknown or disabled tool, bad arguments) gets an error
//!   result that is derived, not recorded, and so is the same after every
//!   restart;
//! * the conversation handed to the shell for each request is the whole
//!   session so far ([`ModelMessage`]), in a provider-neutral shape the
//!   shell converts to its wire format.
//!
//! [`JournalRecord::ProviderRequested`]: crate::journal::JournalRecord::ProviderRequested

use lifeline_decode::Decode;
use lifeline_decode::Json;
use lifeline_encode::Encode;
use serde::{Deserialize, Serialize};

use crate::flat::FlatSet;

use crate::agent;
use crate::ending::TurnEnding;
use crate::event::RetainedBody;
use crate::id::{CommandId, IdempotencyKey, Millis, ProviderRequestId, SessionId, TurnId};
use crate::journal::{ToolCallRecord, TurnAgent, TurnStatus};
use crate::outcome::Outcome;
use crate::profile::{AgentBudget, Tool};
use crate::projection::{Projection, ProviderOutcome, RuntimeStatus, TurnView};
use crate::schema::limits;

/// Largest command output handed back to the model as one tool result.
pub const MAX_TOOL_RESULT_BYTES: usize = 16 * 1024;

/// One message of the conversation sent to a provider. It crosses to the
/// provider worker as JSON (externally tagged: no buffered decoding there).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ModelMessage {
    User {
        text: String,
    },
    Assistant {
        text: String,
        tool_calls: Vec<ToolCallRecord>,
    },
    ToolResult {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
    },
}

/// What the shell does next for a model turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelStep {
    /// Record step `step` ([`crate::ClientRequest::RecordProviderRequest`]
    /// with a freshly minted id), wait until it is durable, then send
    /// `conversation` to the provider and record how it ended.
    Request {
        step: u32,
        conversation: Vec<ModelMessage>,
    },
    /// Admit `line` as a command under `key` (binding built like the
    /// built-in agent's).
    AdmitTool {
        request: ProviderRequestId,
        call_index: usize,
        key: IdempotencyKey,
        line: String,
    },
    /// A request is streaming or a tool command is on its way.
    Wait,
    /// Record the turn's end; `ending` when the core, not the model, ended
    /// it (its English is the reply).
    Finish {
        status: TurnStatus,
        reply: String,
        ending: Option<TurnEnding>,
    },
}

/// The next step of either kind of turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnStep {
    BuiltIn(agent::Step),
    Model(ModelStep),
}

/// Dispatches on the turn's agent: the built-in agent's [`agent::next_step`]
/// or [`next_model_step`]. `None` when the turn has ended or is unknown.
pub fn next_turn_step(
    projection: &Projection,
    turn: TurnId,
    live: Option<ProviderRequestId>,
    now: Millis,
) -> Option<TurnStep> {
    let t = projection.turns.get(&turn)?;
    match t.agent {
        TurnAgent::BuiltIn => agent::next_step(projection, turn).map(TurnStep::BuiltIn),
        TurnAgent::Model { .. } => {
            next_model_step(projection, turn, live, now).map(TurnStep::Model)
        }
    }
}

/// The idempotency key of tool call `call_index` of provider request
/// `request` in `turn`.
pub fn tool_key(turn: TurnId, request: ProviderRequestId, call_index: usize) -> IdempotencyKey {
    crate::derived_key::derived_key(
        b"lifeline model tool call key\0",
        &[
            &turn.as_u128().to_be_bytes(),
            &request.as_u128().to_be_bytes(),
            &(call_index as u64).to_be_bytes(),
        ],
    )
}

/// Quotes `text` as one word for the lifeline shell: single quotes, with a
/// `'` written as `'\''`. Everything inside single quotes is literal
/// (newlines, `$`, `\`, `#`, `;`, `|`, `>`).
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// A path operand: after `--` when it starts with `-`, so `cat` and `ls`
/// do not read it as options.
fn path_operand(path: &str) -> String {
    if path.starts_with('-') {
        format!("-- {}", quote(path))
    } else {
        quote(path)
    }
}

/// A tool call's arguments, read as serde_json read them into a map before
/// (the same grammar and limits), since a tool call's command line is
/// derived again from old journals: an empty text is no arguments; `Err`
/// holds why a text is not JSON, or nothing for JSON that is not an object.
fn arguments(text: &str) -> Result<Vec<(std::borrow::Cow<'_, str>, Json<'_>)>, Option<String>> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    match lifeline_decode::json::parse(text) {
        Ok(Json::Object(fields)) => Ok(fields),
        Ok(_) => Err(None),
        Err(e) => Err(Some(e.to_string())),
    }
}

/// One argument; of a key given twice, the last, as serde_json's map kept.
fn argument<'j>(
    args: &'j [(std::borrow::Cow<'_, str>, Json<'j>)],
    field: &str,
) -> Option<&'j Json<'j>> {
    args.iter()
        .rev()
        .find(|(key, _)| key == field)
        .map(|(_, value)| value)
}

/// Maps a tool call to the command line that carries it out, or to the
/// error text the model gets back instead (nothing is run then).
pub fn tool_line(call: &ToolCallRecord, enabled: &FlatSet<Tool>) -> Result<String, String> {
    let Some(tool) = Tool::ALL.into_iter().find(|t| t.name() == call.name) else {
        let names: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
        return Err(format!(
            "unknown tool `{}`; the tools are {}",
            call.name,
            names.join(", ")
        ));
    };
    if !enabled.contains(&tool) {
        return Err(format!(
            "the tool `{}` is not enabled in this environment",
            call.name
        ));
    }
    let args = match arguments(&call.arguments) {
        Ok(args) => args,
        Err(None) => {
            return Err(format!(
                "the arguments of `{}` must be a JSON object",
                call.name
            ))
        }
        Err(Some(e)) => {
            return Err(format!(
                "the arguments of `{}` are not valid JSON: {e}",
                call.name
            ))
        }
    };
    let text = |field: &str, required: bool| -> Result<Option<String>, String> {
        match argument(&args, field) {
            None | Some(Json::Null) if !required => Ok(None),
            None | Some(Json::Null) => Err(format!(
                "`{}` needs the string argument `{field}`",
                call.name
            )),
            Some(Json::Text(s)) if s.contains('\0') => Err(format!(
                "the argument `{field}` of `{}` contains a NUL character",
                call.name
            )),
            Some(Json::Text(s)) => Ok(Some(s.to_string())),
            Some(_) => Err(format!(
                "the argument `{field}` of `{}` must be a string",
                call.name
            )),
        }
    };
    let nonempty_path = |path: Option<String>| -> Result<String, String> {
        match path {
            Some(p) if !p.is_empty() => Ok(p),
            _ => Err(format!("`{}` needs a non-empty `path`", call.name)),
        }
    };
    let line = match tool {
        Tool::ReadFile => format!("cat {}", path_operand(&nonempty_path(text("path", true)?)?)),
        Tool::ListFiles => {
            let path = text("path", false)?.filter(|p| !p.is_empty());
            format!("ls {}", path_operand(path.as_deref().unwrap_or(".")))
        }
        Tool::RunCommand => {
            let command = text("command", true)?.unwrap_or_default();
            if command.trim().is_empty() {
                return Err("`run_command` needs a non-empty `command`".into());
            }
            if command.len() > limits::MAX_COMMAND_LINE_BYTES {
                return Err(format!(
                    "the command is {} bytes; one command line holds at most {}",
                    command.len(),
                    limits::MAX_COMMAND_LINE_BYTES
                ));
            }
            command
        }
        Tool::WriteFile => {
            let path = quote(&nonempty_path(text("path", true)?)?);
            let content = text("content", true)?.unwrap_or_default();
            // `echo` takes a first word made only of `-n...` as its flag, so
            // such content is written in two exact pieces: `-` then the rest.
            let flag_like = content.len() >= 2
                && content.starts_with('-')
                && content[1..].chars().all(|c| c == 'n');
            let line = if flag_like {
                format!(
                    "echo -n - > {path} && echo -n {} >> {path}",
                    quote(&content[1..])
                )
            } else {
                format!("echo -n {} > {path}", quote(&content))
            };
            if line.len() > limits::MAX_COMMAND_LINE_BYTES {
                return Err(format!(
                    "content too large for one write_file ({} bytes as a command; the limit is {}): write the file in parts, appending with run_command `echo -n '...' >> FILE`",
                    line.len(),
                    limits::MAX_COMMAND_LINE_BYTES
                ));
            }
            line
        }
    };
    Ok(line)
}

/// Where one tool call stands.
enum CallState {
    /// No command: the derived error result.
    Refused(String),
    /// The command is not admitted yet.
    NotAdmitted(String),
    Pending,
    /// Settled with a result the model gets back; `stopped` when Stop
    /// was pressed while it ran (it ended before the cancel reached it).
    Settled {
        content: String,
        is_error: bool,
        stopped: bool,
    },
    /// The user cancelled the command.
    Cancelled(String),
    /// The command's outcome is uncertain or lost.
    Uncertain(String, Outcome),
}

fn call_state(
    projection: &Projection,
    turn: &TurnView,
    request: ProviderRequestId,
    index: usize,
    call: &ToolCallRecord,
) -> (CallState, Option<CommandId>) {
    let enabled = match &turn.agent {
        TurnAgent::Model { tools, .. } => tools.clone(),
        TurnAgent::BuiltIn => FlatSet::new(),
    };
    let line = match tool_line(call, &enabled) {
        Ok(line) => line,
        Err(message) => return (CallState::Refused(message), None),
    };
    let Some(command) = projection
        .keys
        .get(&tool_key(turn.turn, request, index))
        .copied()
    else {
        return (CallState::NotAdmitted(line), None);
    };
    let Some(c) = projection.command(command) else {
        return (CallState::Pending, Some(command));
    };
    let runtime_lives = projection.runtime(c.binding.runtime).is_some_and(|(_, r)| {
        r.generation == c.binding.generation && r.status == RuntimeStatus::Current
    });
    let state = match c.outcome {
        Outcome::Completed | Outcome::Failed | Outcome::TimedOut => CallState::Settled {
            content: tool_result_content(projection, command),
            is_error: c.outcome != Outcome::Completed,
            stopped: c.stop_requested(),
        },
        Outcome::Cancelled => CallState::Cancelled(line),
        Outcome::Lost | Outcome::MayHaveStarted => CallState::Uncertain(line, c.outcome),
        Outcome::NotDispatched if !runtime_lives => CallState::Uncertain(line, c.outcome),
        Outcome::Admitted | Outcome::NotDispatched | Outcome::Dispatched | Outcome::Running => {
            CallState::Pending
        }
    };
    (state, Some(command))
}

/// A settled command's output and outcome as the model sees it: stdout,
/// then stderr (the same text whether or not the projection has collapsed
/// the command's events), bounded, then the outcome.
///
/// A stream whose first events retention let go (a long-running command:
/// 2,048 events are kept while it runs) starts with a note of how many of
/// its bytes are not shown, so that the model never reads the middle of an
/// output as its beginning.
fn tool_result_content(projection: &Projection, command: CommandId) -> String {
    let Some(c) = projection.command(command) else {
        return String::new();
    };
    let [stdout, stderr] = c.held_head();
    let earlier = |shown: &str, summary: &crate::event::OutputSummary| {
        summary.inline_bytes.saturating_sub(shown.len() as u64)
    };
    let (out_earlier, err_earlier) = (earlier(&stdout, &c.stdout), earlier(&stderr, &c.stderr));
    let mut text = String::new();
    if out_earlier > 0 {
        text.push_str(&format!("[{out_earlier} earlier bytes not shown]\n"));
    }
    text.push_str(&stdout);
    if !stderr.is_empty() || err_earlier > 0 {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[stderr]\n");
        if err_earlier > 0 {
            text.push_str(&format!("[{err_earlier} earlier bytes not shown]\n"));
        }
        text.push_str(&stderr);
    }
    // Past the inline heads: what went to artifacts or over the budget.
    let shown = (stdout.len() + stderr.len()) as u64 + out_earlier + err_earlier;
    let total = c.stdout.total_bytes.saturating_add(c.stderr.total_bytes);
    let mut not_shown = total.saturating_sub(shown.min(total));
    if text.len() > MAX_TOOL_RESULT_BYTES {
        let mut end = MAX_TOOL_RESULT_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        not_shown += (text.len() - end) as u64;
        text.truncate(end);
    }
    if not_shown > 0 {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[output truncated: {not_shown} more bytes not shown]"
        ));
    }
    let exit = c.terminal.as_ref().and_then(|e| match &e.body {
        RetainedBody::Terminal(t) => t.exit_code,
        _ => None,
    });
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    match (c.outcome, exit) {
        (outcome, Some(code)) => {
            text.push_str(&format!("[{}, exit status {code}]", outcome.label()))
        }
        (outcome, None) => text.push_str(&format!("[{}]", outcome.label())),
    }
    text
}

/// The tool result of a call that will never run because its turn ended.
fn unrun_result(state: &CallState) -> (String, bool) {
    match state {
        CallState::Refused(message) => (message.clone(), true),
        CallState::Settled {
            content, is_error, ..
        } => (content.clone(), *is_error),
        CallState::Cancelled(_) => ("[cancelled by the user]".into(), true),
        CallState::Uncertain(_, outcome) => (
            format!(
                "[{}: the outcome is unknown; it was not run again]",
                outcome.label()
            ),
            true,
        ),
        CallState::NotAdmitted(_) => ("[not run: the turn ended first]".into(), true),
        CallState::Pending => (
            "[not finished when the turn ended; its result was not used]".into(),
            true,
        ),
    }
}

/// The messages of one turn so far: its prompt, then each replied request
/// with the results of its tool calls. For a turn that has ended, calls
/// that never settled get a result saying so (a provider refuses a tool call
/// without a result), and a final reply that the model did not give itself
/// (a failure, an interruption, a budget) follows as assistant text.
fn turn_messages(projection: &Projection, t: &TurnView, out: &mut Vec<ModelMessage>) {
    out.push(ModelMessage::User {
        text: t.prompt.clone(),
    });
    let mut model_finished = false;
    for request in &t.requests {
        let Some(Some(ProviderOutcome::Replied {
            text, tool_calls, ..
        })) = projection
            .provider_requests
            .get(request)
            .map(|r| &r.outcome)
        else {
            continue;
        };
        out.push(ModelMessage::Assistant {
            text: text.clone(),
            tool_calls: tool_calls.clone(),
        });
        model_finished = tool_calls.is_empty();
        for (index, call) in tool_calls.iter().enumerate() {
            let (state, _) = call_state(projection, t, *request, index, call);
            let (content, is_error) = unrun_result(&state);
            out.push(ModelMessage::ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content,
                is_error,
            });
        }
    }
    if model_finished {
        return;
    }
    match &t.end {
        Some(end) => out.push(ModelMessage::Assistant {
            text: end.reply.clone(),
            tool_calls: Vec::new(),
        }),
        None if !t.agent.is_model() => out.push(ModelMessage::Assistant {
            text: "(no reply was recorded)".into(),
            tool_calls: Vec::new(),
        }),
        None => {}
    }
}

/// The whole session up to and including `turn`, as the provider sees it.
pub fn conversation(projection: &Projection, turn: TurnId) -> Vec<ModelMessage> {
    let mut out = Vec::new();
    let Some(t) = projection.turns.get(&turn) else {
        return out;
    };
    let session: SessionId = t.session;
    if let Some(s) = projection.sessions.get(&session) {
        for earlier in &s.turns {
            if *earlier == turn {
                break;
            }
            if let Some(e) = projection.turns.get(earlier) {
                turn_messages(projection, e, &mut out);
                if e.end.is_none() && e.agent.is_model() {
                    out.push(ModelMessage::Assistant {
                        text: "(no reply was recorded)".into(),
                        tool_calls: Vec::new(),
                    });
                }
            }
        }
    }
    turn_messages(projection, t, &mut out);
    out
}

/// Which budget of a turn is spent, if any.
fn spent_budget(
    budget: &AgentBudget,
    t: &TurnView,
    steps: usize,
    commands: usize,
    tokens: u64,
    now: Millis,
    admitting: bool,
) -> Option<TurnEnding> {
    if steps as u64 >= budget.max_steps as u64 {
        return Some(TurnEnding::StepBudget {
            max: budget.max_steps as u64,
        });
    }
    // The command budget stops admissions only: the model still gets to
    // answer with the results of the commands it already ran.
    if admitting && commands as u64 >= budget.max_commands as u64 {
        return Some(TurnEnding::CommandBudget {
            max: budget.max_commands as u64,
        });
    }
    if tokens >= budget.max_tokens {
        return Some(TurnEnding::TokenBudget {
            max: budget.max_tokens,
            used: tokens,
        });
    }
    let elapsed = now.0.saturating_sub(t.recorded_at.0);
    if elapsed >= budget.max_wall_ms {
        return Some(TurnEnding::TimeBudget {
            seconds: budget.max_wall_ms / 1000,
        });
    }
    None
}

fn budget_finish(ending: TurnEnding) -> ModelStep {
    ended(TurnStatus::Failed, ending)
}

/// The core ends the turn: the page words `ending`, the reply is its
/// English.
fn ended(status: TurnStatus, ending: TurnEnding) -> ModelStep {
    ModelStep::Finish {
        status,
        reply: ending.to_string(),
        ending: Some(ending),
    }
}

/// A reply bounded to what a turn's end may hold.
fn bounded_reply(text: &str, note: &str) -> String {
    let room = limits::MAX_PROMPT_BYTES - 512 - note.len().min(limits::MAX_PROMPT_BYTES / 2);
    let mut out = if text.len() > room {
        let mut end = room;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!(
            "{}\n[reply shortened here: {} more bytes are in the recorded provider reply]",
            &text[..end],
            text.len() - end
        )
    } else {
        text.to_string()
    };
    if !note.is_empty() {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(note);
    }
    out
}

/// The next step for model turn `turn`, or `None` when it has ended, is
/// unknown or is not a model turn. `live` is the provider request a fetch in
/// this shell is streaming right now, if any (after a restart: none).
pub fn next_model_step(
    projection: &Projection,
    turn: TurnId,
    live: Option<ProviderRequestId>,
    now: Millis,
) -> Option<ModelStep> {
    let t = projection.turns.get(&turn)?;
    if t.end.is_some() {
        return None;
    }
    let TurnAgent::Model {
        budget, provider, ..
    } = &t.agent
    else {
        return None;
    };
    let mut tokens: u64 = 0;
    let mut commands = 0usize;
    for request in &t.requests {
        let r = projection.provider_requests.get(request)?;
        let outcome = match &r.outcome {
            None if live == Some(*request) => return Some(ModelStep::Wait),
            None => return Some(ended(TurnStatus::Interrupted, TurnEnding::ReplyLost)),
            Some(outcome) => outcome,
        };
        let (text, tool_calls) = match outcome {
            ProviderOutcome::Failed {
                class,
                message,
                partial_text,
                ..
            } => return Some(failure_finish(provider, *class, message, partial_text)),
            ProviderOutcome::Replied {
                text,
                tool_calls,
                input_tokens,
                output_tokens,
                ..
            } => {
                tokens = tokens
                    .saturating_add(*input_tokens)
                    .saturating_add(*output_tokens);
                (text, tool_calls)
            }
        };
        if tool_calls.is_empty() {
            return Some(ModelStep::Finish {
                status: TurnStatus::Completed,
                reply: bounded_reply(text, ""),
                ending: None,
            });
        }
        for (index, call) in tool_calls.iter().enumerate() {
            let (state, command) = call_state(projection, t, *request, index, call);
            if command.is_some() {
                commands += 1;
            }
            match state {
                // Stop raced the command's end: no next step (found by the
                // engine simulation, seed 23427 of 40,000: the turn asked
                // the model again after Stop, and a local model's load
                // then held it open).
                CallState::Settled { stopped: true, .. } => {
                    return Some(ended(
                        TurnStatus::Cancelled,
                        TurnEnding::StoppedBetweenSteps,
                    ))
                }
                CallState::Refused(_) | CallState::Settled { .. } => {}
                CallState::NotAdmitted(line) => {
                    if let Some(reason) =
                        spent_budget(budget, t, t.requests.len(), commands, tokens, now, true)
                    {
                        return Some(budget_finish(reason));
                    }
                    return Some(ModelStep::AdmitTool {
                        request: *request,
                        call_index: index,
                        key: tool_key(turn, *request, index),
                        line,
                    });
                }
                CallState::Pending => return Some(ModelStep::Wait),
                CallState::Cancelled(line) => {
                    return Some(ended(
                        TurnStatus::Cancelled,
                        TurnEnding::CommandCancelled {
                            line: clip_line(&line).to_string(),
                        },
                    ))
                }
                CallState::Uncertain(line, outcome) => {
                    return Some(ended(
                        TurnStatus::Interrupted,
                        TurnEnding::CommandUncertain {
                            line: clip_line(&line).to_string(),
                            outcome,
                        },
                    ));
                }
            }
        }
    }
    if let Some(reason) = spent_budget(budget, t, t.requests.len(), commands, tokens, now, false) {
        return Some(budget_finish(reason));
    }
    Some(ModelStep::Request {
        step: t.requests.len() as u32 + 1,
        conversation: conversation(projection, turn),
    })
}

fn clip_line(line: &str) -> &str {
    let mut end = line.len().min(200);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

fn failure_finish(
    provider: &str,
    class: crate::journal::ProviderFailureClass,
    message: &str,
    partial_text: &str,
) -> ModelStep {
    use crate::journal::ProviderFailureClass as C;
    // The reply keeps the English for the export and the conversation the
    // model is sent next; the page words the ending, and the request's own
    // view shows what was said and what arrived.
    let reason = format!(
        "[{provider}: {} — {message}. {}]",
        class.label(),
        class.advice()
    );
    // A reply that broke off (or may have reached the provider) is
    // interrupted, like a cut-off stream, with what arrived kept.
    let broken = class.broke_off();
    let status = match class {
        _ if broken => TurnStatus::Interrupted,
        C::Cancelled => TurnStatus::Cancelled,
        _ => TurnStatus::Failed,
    };
    let reply = match class {
        _ if broken || class == C::Cancelled => bounded_reply(partial_text, &reason),
        _ => bounded_reply("", &reason),
    };
    ModelStep::Finish {
        status,
        reply,
        ending: Some(TurnEnding::ProviderFailed { class }),
    }
}

#[cfg(test)]
mod tool_line_tests {
    use super::tool_line;
    use crate::flat::FlatSet;
    use crate::journal::ToolCallRecord;
    use crate::profile::Tool;

    fn line(name: &str, arguments: &str) -> Result<String, String> {
        let call = ToolCallRecord {
            id: "call".into(),
            name: name.into(),
            arguments: arguments.into(),
        };
        tool_line(&call, &Tool::ALL.into_iter().collect::<FlatSet<Tool>>())
    }

    /// What serde_json's map made of a tool call's arguments, which old
    /// journals were derived with: the last of a key given twice, and a
    /// refusal of JSON it refused (a float out of range, nesting past 127)
    /// even where the tool never reads it.
    #[test]
    fn arguments_read_as_serde_json_read_them() {
        assert_eq!(
            line("read_file", r#"{"path":"a","path":"b"}"#),
            Ok("cat 'b'".to_string())
        );
        assert_eq!(line("list_files", " "), Ok("ls '.'".to_string()));
        for refused in [
            r#"{"path":"a","n":1e400}"#,
            r#"{"path":"a","n":[1,]}"#,
            r#"{"path":"a\ud800"}"#,
            &format!(
                r#"{{"path":"a","n":{}{}}}"#,
                "[".repeat(127),
                "]".repeat(127)
            ),
        ] {
            assert!(serde_json::from_str::<serde_json::Value>(refused).is_err());
            let refusal = line("read_file", refused).unwrap_err();
            assert!(refusal.contains("are not valid JSON"), "{refusal}");
        }
        let deep = format!(
            r#"{{"path":"a","n":{}{}}}"#,
            "[".repeat(126),
            "]".repeat(126)
        );
        assert!(serde_json::from_str::<serde_json::Value>(&deep).is_ok());
        assert_eq!(line("read_file", &deep), Ok("cat 'a'".to_string()));
        assert!(line("read_file", "[]")
            .unwrap_err()
            .contains("must be a JSON object"));
    }
}
