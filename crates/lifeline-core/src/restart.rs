//! What a controller restart did to the commands that were running: the
//! page's notice after a restart says how many were running and how many
//! continued, and only once that is known, never as a blanket claim.
//!
//! A command keeps running in its runtime worker across a controller
//! restart only if it was acknowledged (its outcome `dispatched` or
//! `running`) and its runtime dials back in. Until the runtime either
//! reattaches or is retired (the reattach deadline), the answer is open.

use crate::id::{CommandId, Generation, RuntimeId};
use crate::outcome::Outcome;
use crate::projection::{Projection, RuntimeStatus};

/// The commands that were running when the controller was replaced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestartTally {
    running: Vec<(CommandId, RuntimeId, Generation)>,
}

/// How many commands were running at the restart, and how many of them
/// continued in their runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RestartSummary {
    pub running: u32,
    pub continued: u32,
}

impl RestartTally {
    /// Takes the running commands from the projection the restarted
    /// controller recovered.
    pub fn new(projection: &Projection) -> RestartTally {
        let running = projection
            .commands
            .values()
            .filter(|c| matches!(c.outcome, Outcome::Dispatched | Outcome::Running))
            .map(|c| (c.command, c.binding.runtime, c.binding.generation))
            .collect();
        RestartTally { running }
    }

    /// The summary once every running command's runtime has either dialed
    /// back in (`attached`) or been retired or confirmed gone; `None` while
    /// one may still come back.
    pub fn settle(
        &self,
        projection: &Projection,
        attached: impl Fn(RuntimeId) -> bool,
    ) -> Option<RestartSummary> {
        let mut continued = 0u32;
        for (_, runtime, generation) in &self.running {
            if attached(*runtime) {
                continued += 1;
                continue;
            }
            let still_current = projection.runtime(*runtime).is_some_and(|(_, r)| {
                r.generation == *generation && r.status == RuntimeStatus::Current
            });
            if still_current {
                return None;
            }
        }
        Some(RestartSummary {
            running: u32::try_from(self.running.len()).unwrap_or(u32::MAX),
            continued,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::tests::id;
    use crate::command::{Binding, Budget, CommandRecord};
    use crate::id::{Millis, WorkspaceId};
    use crate::journal::{AckSource, JournalEntry, JournalRecord, RetireCause};
    use crate::outcome::OutcomeEvent;
    use crate::projection::RetentionPolicy;
    use crate::schema::V1;

    struct J {
        projection: Projection,
        position: u64,
    }

    impl J {
        fn push(&mut self, record: JournalRecord) {
            self.position += 1;
            let entry = JournalEntry {
                v: V1,
                position: self.position,
                at: Millis(1),
                record,
            };
            self.projection.apply(&entry).expect("applies");
        }
    }

    /// One runtime with one command per entry of `acknowledged`: true ones
    /// were acknowledged, false ones only exposed.
    fn journal(acknowledged: &[bool]) -> (J, RuntimeId) {
        let mut j = J {
            projection: Projection::new(RetentionPolicy::default()),
            position: 0,
        };
        let workspace: WorkspaceId = id(2);
        let lease = id(3);
        let runtime: RuntimeId = id(4);
        j.push(JournalRecord::LeaseGranted { workspace, lease });
        j.push(JournalRecord::RuntimeAssigned {
            lease,
            runtime,
            generation: Generation(1),
            execution: id(5),
        });
        for (i, acked) in acknowledged.iter().enumerate() {
            let command: CommandId = id(10 + i as u128);
            let attempt = id(40 + i as u128);
            j.push(JournalRecord::CommandAdmitted(CommandRecord {
                v: V1,
                command,
                key: id(70 + i as u128),
                binding: Binding {
                    workspace,
                    lease,
                    generation: Generation(1),
                    runtime,
                    session: id(1),
                    working_directory: "/".into(),
                    capabilities: Default::default(),
                    budget: Budget {
                        deadline: Millis(1 << 40),
                        max_output_bytes: 1 << 20,
                    },
                    command_line: format!("sleep {i}"),
                },
                admitted_at: Millis(1),
                reissue_of: None,
            }));
            j.push(JournalRecord::DispatchExposed {
                command,
                attempt,
                runtime,
                generation: Generation(1),
            });
            if *acked {
                j.push(JournalRecord::Acknowledged {
                    command,
                    attempt,
                    via: AckSource::Ack,
                });
                j.push(JournalRecord::OutcomeChanged {
                    command,
                    event: OutcomeEvent::Acknowledged,
                    from: Outcome::Admitted,
                    to: Outcome::Dispatched,
                });
            }
        }
        (j, runtime)
    }

    #[test]
    fn with_nothing_running_the_answer_is_known_at_once() {
        let (j, _) = journal(&[false]);
        let tally = RestartTally::new(&j.projection);
        assert_eq!(
            tally.settle(&j.projection, |_| false),
            Some(RestartSummary {
                running: 0,
                continued: 0
            })
        );
    }

    #[test]
    fn running_commands_continue_only_once_their_runtime_dials_back() {
        let (j, runtime) = journal(&[true, true, false]);
        let tally = RestartTally::new(&j.projection);
        // Not attached yet and still current: it may still come back.
        assert_eq!(tally.settle(&j.projection, |_| false), None);
        assert_eq!(
            tally.settle(&j.projection, |r| r == runtime),
            Some(RestartSummary {
                running: 2,
                continued: 2
            })
        );
    }

    #[test]
    fn a_runtime_retired_before_it_dialed_back_continued_nothing() {
        let (mut j, runtime) = journal(&[true]);
        let tally = RestartTally::new(&j.projection);
        j.push(JournalRecord::RuntimeRetired {
            lease: id(3),
            runtime,
            generation: Generation(1),
            cause: RetireCause::ReattachTimeout,
        });
        assert_eq!(
            tally.settle(&j.projection, |_| false),
            Some(RestartSummary {
                running: 1,
                continued: 0
            })
        );
    }
}
