//! Admission: a command bound under an idempotency key to the current
//! runtime and generation, and the checks a re-issue must pass.
//!
//! A key always maps to one command; a repeat answers with the existing one
//! and a differing binding is refused, so a retried request never becomes a
//! second run. A re-issue is the only way to run an uncertain command again,
//! and only once.

use crate::command::{BindingField, BindingMismatch, CommandRecord};
use crate::id::{CommandId, Millis};
use crate::journal::JournalRecord;
use crate::message::{ClientId, ClientMessage, Rejection, RequestId};
use crate::outcome::Outcome;
use crate::schema::V1;

use super::{Controller, ControllerEffect, TimerId};

impl Controller {
    /// A re-issue runs only an uncertain command, once, in its own session
    /// and with its own command line: anything else would be a replay the
    /// user did not ask for.
    pub(super) fn check_reissue(
        &self,
        original: CommandId,
        binding: &crate::command::Binding,
    ) -> Result<(), Rejection> {
        let refuse = |detail: &str| Rejection::NotReissuable {
            command: original,
            detail: detail.into(),
        };
        let Some(o) = self.working.command(original) else {
            return Err(match self.working.settled_command(original) {
                Some(_) => refuse("only a command whose outcome is uncertain is re-issued"),
                None => Rejection::UnknownCommand { command: original },
            });
        };
        if !matches!(o.outcome, Outcome::MayHaveStarted | Outcome::Lost) {
            return Err(refuse(
                "only a command whose outcome is uncertain is re-issued",
            ));
        }
        if let Some(replacement) = o.reissued_as {
            return Err(Rejection::NotReissuable {
                command: original,
                detail: format!("it was already re-issued as {replacement}"),
            });
        }
        if o.binding.session != binding.session || o.binding.command_line != binding.command_line {
            return Err(refuse(
                "a re-issue runs the same command line in the same session",
            ));
        }
        Ok(())
    }

    pub(super) fn admit(
        &mut self,
        client: ClientId,
        request: RequestId,
        key: crate::id::IdempotencyKey,
        binding: crate::command::Binding,
        reissue_of: Option<CommandId>,
        now: Millis,
    ) -> Result<(), Rejection> {
        if let Some(existing) = self.working.keys.get(&key).copied() {
            if let Some(c) = self.working.command(existing) {
                let fields = c.binding.differences(&binding);
                if !fields.is_empty() {
                    return Err(Rejection::BindingMismatch(BindingMismatch {
                        key,
                        existing,
                        fields,
                    }));
                }
            } else if !self
                .working
                .settled_command(existing)
                .is_some_and(|c| c.bound_to(&binding))
            {
                // Kept small, it can only tell the same binding from
                // another, not which of its fields differ.
                return Err(Rejection::IdReused {
                    id: key.to_string(),
                });
            }
            self.reply(
                client,
                ClientMessage::Admitted {
                    request,
                    key,
                    command: existing,
                    existing: true,
                },
            );
            return Ok(());
        }
        if let Some(detail) = &self.degraded {
            return Err(Rejection::JournalUnavailable {
                detail: detail.clone(),
            });
        }
        if self.working.is_seen(key.as_u128()) {
            return Err(Rejection::IdReused {
                id: key.to_string(),
            });
        }
        match self.working.workspaces.get(&binding.workspace) {
            Some(lease) if *lease == binding.lease => {}
            Some(lease) => {
                return Err(Rejection::StaleBinding {
                    field: BindingField::Lease,
                    detail: format!("the workspace's lease is {lease}"),
                })
            }
            None => {
                return Err(Rejection::StaleBinding {
                    field: BindingField::Workspace,
                    detail: "the workspace has no lease; start a runtime first".into(),
                })
            }
        }
        let current = self.working.leases[&binding.lease]
            .current()
            .map(|r| (r.runtime, r.generation));
        match current {
            None => {
                return Err(Rejection::StaleBinding {
                    field: BindingField::Runtime,
                    detail: "the lease has no current runtime".into(),
                })
            }
            Some((_, g)) if g != binding.generation => {
                return Err(Rejection::StaleBinding {
                    field: BindingField::Generation,
                    detail: format!("the current generation is {g}"),
                })
            }
            Some((r, _)) if r != binding.runtime => {
                return Err(Rejection::StaleBinding {
                    field: BindingField::Runtime,
                    detail: format!("the current runtime is {r}"),
                })
            }
            Some(_) => {}
        }
        if self.working.commands.len() + self.working.settled.len() >= self.config.max_commands {
            return Err(Rejection::JournalFull {
                limit: self.config.max_commands,
            });
        }
        if !self.has_room() {
            return Err(Rejection::Busy);
        }
        let command = self.mint(now, CommandId::from_u128);
        let deadline = binding.budget.deadline;
        self.record(
            now,
            JournalRecord::CommandAdmitted(CommandRecord {
                v: V1,
                command,
                key,
                binding,
                admitted_at: now,
                reissue_of,
            }),
        );
        self.defer(ControllerEffect::SetTimer {
            timer: TimerId::Deadline { command },
            at: deadline,
        });
        self.reply(
            client,
            ClientMessage::Admitted {
                request,
                key,
                command,
                existing: false,
            },
        );
        Ok(())
    }
}
