//! What Stop does at this moment: the one decision behind the Stop button,
//! made from the durable projection and what the shell holds live (a start
//! in progress, a provider request in flight), never from the page.
//!
//! Stop works at every moment a turn is active:
//! * a start or resume in progress is cancelled (the session layer's own
//!   [`crate::session::Sessions::cancel`], checked first by the shell);
//! * a provider request in flight (streaming or stalled) is aborted at once;
//!   its partial text is kept and recorded as stopped by the user;
//! * a command the turn waits for is cancelled, by its exact identity and
//!   generation (a cancel already asked for is not asked again); in a
//!   model turn every command of the session still on its way is;
//! * a turn with nothing of its own in flight ends as cancelled, saying
//!   what did not run, and the session's other commands on their way are
//!   cancelled beside it;
//! * with no turn, the user's running re-issues are cancelled.

use crate::agent::{self, Step};
use crate::ending::TurnEnding;
use crate::id::{CommandId, Generation, ProviderRequestId, SessionId, TurnId};
use crate::model::{next_turn_step, ModelStep, TurnStep};
use crate::outcome::Outcome;
use crate::projection::Projection;

/// What the shell carries out for one press of Stop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopPlan {
    /// Abort the fetch of this request (an `AbortController` in the shell).
    AbortRequest(ProviderRequestId),
    /// Cancel these commands, each by identity and generation.
    Cancel(Vec<(CommandId, Generation)>),
    /// End the turn as cancelled, saying what did not run, and cancel
    /// `cancel`: commands of the session still on their way that are not
    /// the turn's (an earlier turn's, left running), which Stop ends too.
    FinishTurn {
        turn: TurnId,
        ending: TurnEnding,
        cancel: Vec<(CommandId, Generation)>,
    },
    /// Nothing is in flight: nothing to stop.
    Nothing,
}

/// Decides what Stop does for `session` now. `live` is the provider request
/// whose fetch the shell holds, if any.
pub fn plan(
    projection: &Projection,
    session: SessionId,
    live: Option<ProviderRequestId>,
    now: crate::id::Millis,
) -> StopPlan {
    if let Some(request) = live {
        return StopPlan::AbortRequest(request);
    }
    let Some(turn) = agent::open_turn(projection, session) else {
        return cancel(agent::running_reissues(projection, session));
    };
    let Some(t) = projection.turns.get(&turn) else {
        return StopPlan::Nothing;
    };
    let step = next_turn_step(projection, turn, None, now);
    let waiting: Vec<&crate::projection::CommandView> = match &step {
        Some(TurnStep::BuiltIn(Step::Wait { command })) => match projection.command(*command) {
            Some(c) => vec![c],
            // Admitted but not in the projection yet: nothing to cancel.
            None => return StopPlan::Nothing,
        },
        // A model turn waits on its tool commands still on their way, and
        // Stop ends everything the session runs: every command of the
        // session on its way is cancelled, not the first one found (found
        // by the engine simulation, seed 390639 of 400,000: Stop cancelled
        // the command of an older turn, one left open when its execution
        // failed, and this turn's own command ran on, and so did the
        // turn). A command proven not dispatched is cancelled too: it
        // would be dispatched once its runtime (re)attaches or has room,
        // and its cancel settles at once. One that may have started will
        // not end by a cancel, and must not hold Stop.
        _ if t.agent.is_model() => projection
            .commands
            .values()
            .filter(|c| {
                c.binding.session == session
                    && matches!(
                        c.outcome,
                        Outcome::Admitted
                            | Outcome::NotDispatched
                            | Outcome::Dispatched
                            | Outcome::Running
                    )
            })
            .collect(),
        _ => Vec::new(),
    };
    // Cancelled, the command the turn waits for ends the turn when it
    // ends. A model turn that waits for none of its own (its next step is
    // to admit a tool or ask its model, as after its runtime crashed) ends
    // now, and the session's other commands are cancelled beside it (found
    // by the engine simulation, seed 125465 of 160,000: Stop cancelled an
    // earlier turn's command and left this turn open, which asked its
    // model again once the session had been started by another message).
    let waits = matches!(
        step,
        Some(TurnStep::BuiltIn(Step::Wait { .. }) | TurnStep::Model(ModelStep::Wait))
    );
    if !waiting.is_empty() && waits {
        return cancel(waiting.into_iter());
    }
    let ending = match step {
        Some(TurnStep::BuiltIn(Step::Admit { index, line })) => TurnEnding::StoppedBefore {
            line,
            left: t.plan.len().saturating_sub(index) as u64,
        },
        _ => TurnEnding::StoppedBetweenSteps,
    };
    StopPlan::FinishTurn {
        turn,
        ending,
        cancel: cancellable(waiting.into_iter()),
    }
}

/// Those of `commands` not already being cancelled (a cancel is never
/// asked twice), each by identity and generation.
fn cancellable<'a>(
    commands: impl Iterator<Item = &'a crate::projection::CommandView>,
) -> Vec<(CommandId, Generation)> {
    commands
        .filter(|c| c.cancel.is_none())
        .map(|c| (c.command, c.binding.generation))
        .collect()
}

/// Cancels those of `commands` not already being cancelled, each by
/// identity and generation.
fn cancel<'a>(commands: impl Iterator<Item = &'a crate::projection::CommandView>) -> StopPlan {
    let cancel = cancellable(commands);
    if cancel.is_empty() {
        StopPlan::Nothing
    } else {
        StopPlan::Cancel(cancel)
    }
}
