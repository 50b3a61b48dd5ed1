//! Outcome changes and the recovery evidence that explains them.
//!
//! Every outcome change goes through the transition table here, so an
//! illegal change is never recorded, and every decision taken without the
//! runtime's own word is journaled as evidence listing each command it
//! touched (changed or not), which is what the recovery card and the export
//! show a person afterwards.

use crate::id::{CommandId, ErrorStamp, Generation, Millis, RuntimeId};
use crate::journal::{JournalRecord, RecoveryEvidence, RecoveryKind, Resolution, RuntimeRef};
use crate::outcome::{transition, OutcomeEvent};
use crate::schema::V1;

use super::Controller;

const MAX_REASON_BYTES: usize = 512;

pub(super) fn clip(text: &str) -> String {
    let mut end = text.len().min(MAX_REASON_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

impl Controller {
    /// Records an outcome change if the table allows it.
    pub(super) fn change(
        &mut self,
        now: Millis,
        command: CommandId,
        event: OutcomeEvent,
    ) -> Option<Resolution> {
        let c = self.working.command(command)?;
        let from = c.outcome;
        let attempt = c.exposure.attempt();
        let to = transition(from, event).ok()?;
        self.record(
            now,
            JournalRecord::OutcomeChanged {
                command,
                event,
                from,
                to,
            },
        );
        Some(Resolution {
            command,
            attempt,
            before: from,
            after: to,
        })
    }

    pub(super) fn unchanged(&self, command: CommandId) -> Option<Resolution> {
        // A command kept small keeps no attempt; its journal does.
        let (attempt, outcome) = match self.working.command(command) {
            Some(c) => (c.exposure.attempt(), c.outcome),
            None => (None, self.working.settled_command(command)?.outcome),
        };
        Some(Resolution {
            command,
            attempt,
            before: outcome,
            after: outcome,
        })
    }

    pub(super) fn evidence(
        &mut self,
        now: Millis,
        kind: RecoveryKind,
        runtime: Option<RuntimeRef>,
        observed: String,
        outcomes: Vec<Resolution>,
    ) {
        let stamp = self.mint(now, ErrorStamp::from_u128);
        self.record(
            now,
            JournalRecord::Recovery(RecoveryEvidence {
                v: V1,
                stamp,
                kind,
                at: now,
                runtime,
                observed: clip(&observed),
                outcomes,
            }),
        );
    }

    pub(super) fn runtime_ref(&self, runtime: RuntimeId) -> Option<RuntimeRef> {
        self.working.runtime(runtime).map(|(l, r)| RuntimeRef {
            lease: l.lease,
            runtime,
            generation: r.generation,
        })
    }

    pub(super) fn non_terminal_on(
        &self,
        runtime: RuntimeId,
        generation: Generation,
    ) -> Vec<CommandId> {
        self.working
            .commands_on(runtime, generation)
            .into_iter()
            .filter(|c| self.working.outcome(*c).is_some_and(|o| !o.is_terminal()))
            .collect()
    }
}
