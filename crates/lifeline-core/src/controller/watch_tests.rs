//! The runtime watch, driven through the controller with a real `Runtime`
//! on the other end of a port.

use super::*;
use crate::command::tests::{binding, id};
use crate::journal::{GoneCause, JournalEntry, JournalRecord};
use crate::message::{ClientId, ClientRequest, ControllerToRuntime, RequestId};
use crate::outcome::Outcome;
use crate::runtime::{Runtime, RuntimeConfig, RuntimeEffect, RuntimeIdentity};
use crate::{CommandId, ControllerConfig, IdempotencyKey};

const CLIENT: ClientId = ClientId(3);
const PORT: PortId = PortId(1);

/// A controller, one runtime behind one port, and a journal that confirms
/// every write.
struct World {
    c: Controller,
    rt: Option<Runtime>,
    identity: Option<RuntimeIdentity>,
    now: Millis,
    journal: Vec<JournalEntry>,
    terminations: Vec<(RuntimeId, Generation)>,
    timers: Vec<(TimerId, Millis)>,
    to_runtime: Vec<ControllerToRuntime>,
    request: u64,
}

impl World {
    /// A runtime attached over `PORT` with `sleep` running on it.
    fn running() -> (World, CommandId) {
        let config = ControllerConfig {
            entropy: b"watch".to_vec(),
            ..ControllerConfig::default()
        };
        let mut w = World {
            c: Controller::new(config, Millis(1_000)),
            rt: None,
            identity: None,
            now: Millis(1_000),
            journal: Vec::new(),
            terminations: Vec::new(),
            timers: Vec::new(),
            to_runtime: Vec::new(),
            request: 0,
        };
        let workspace = id(0x77);
        w.client(|request| ClientRequest::StartRuntime { request, workspace });
        w.settle();
        let identity = w.identity.expect("a runtime was spawned");
        w.c.handle_port_opened(identity.runtime, identity.generation, PORT)
            .unwrap();
        w.rt.as_mut().unwrap().handle_connected(w.now);
        w.settle();
        assert!(w.c.is_attached(identity.runtime));
        let mut b = binding();
        b.workspace = workspace;
        b.lease = identity.lease;
        b.runtime = identity.runtime;
        b.generation = identity.generation;
        b.command_line = "sleep 30".into();
        b.budget.deadline = Millis(10_000_000);
        let key: IdempotencyKey = id(0x1234);
        w.client(|request| ClientRequest::Admit {
            request,
            key,
            binding: b,
        });
        w.settle();
        let command =
            w.c.projection()
                .commands
                .keys()
                .copied()
                .next()
                .expect("admitted");
        assert_eq!(w.c.outcome(command), Some(Outcome::Running));
        (w, command)
    }

    fn client(&mut self, make: impl FnOnce(RequestId) -> ClientRequest) {
        self.request += 1;
        let request = make(RequestId(self.request));
        self.c.handle_client(CLIENT, request, self.now).unwrap();
    }

    fn ids(&self) -> (RuntimeId, Generation) {
        let i = self.identity.unwrap();
        (i.runtime, i.generation)
    }

    /// Carries out effects, delivers messages both ways over `PORT` and
    /// confirms writes until everyone is quiet.
    fn settle(&mut self) {
        for _ in 0..100 {
            let mut busy = false;
            while let Some(e) = self.c.poll_effect() {
                busy = true;
                match e {
                    ControllerEffect::Persist(b) => {
                        self.journal.extend(b.entries.iter().cloned());
                        self.c.handle_persist_complete(b.batch, self.now).unwrap();
                    }
                    ControllerEffect::SendToRuntime { message, .. } => {
                        self.to_runtime.push(message)
                    }
                    ControllerEffect::SetTimer { timer, at } => self.timers.push((timer, at)),
                    ControllerEffect::SpawnRuntime {
                        lease,
                        runtime,
                        generation,
                        execution,
                        ..
                    } => {
                        let identity = RuntimeIdentity {
                            lease,
                            runtime,
                            generation,
                            execution,
                        };
                        self.identity = Some(identity);
                        self.rt = Some(Runtime::new(RuntimeConfig::new(identity), self.now));
                    }
                    ControllerEffect::TerminateRuntime {
                        runtime,
                        generation,
                    } => self.terminations.push((runtime, generation)),
                    ControllerEffect::NotifyClient { .. } => {}
                }
            }
            let Some(rt) = self.rt.as_mut() else {
                if !busy {
                    return;
                }
                continue;
            };
            for m in std::mem::take(&mut self.to_runtime) {
                busy = true;
                let _ = rt.handle_controller(m, self.now);
            }
            let (runtime, generation) = {
                let i = self.identity.unwrap();
                (i.runtime, i.generation)
            };
            while let Some(e) = rt.poll_effect() {
                busy = true;
                if let RuntimeEffect::Send(m) = e {
                    let _ = self
                        .c
                        .handle_port_message(runtime, generation, PORT, m, self.now);
                }
            }
            if !busy {
                return;
            }
        }
        panic!("the world did not settle");
    }

    /// Fires every due liveness timer at `at` (the runtime says nothing).
    fn silence_until(&mut self, at: Millis) {
        self.now = at;
        let due: Vec<TimerId> = self
            .timers
            .iter()
            .filter(|(t, when)| matches!(t, TimerId::Liveness { .. }) && *when <= at)
            .map(|(t, _)| *t)
            .collect();
        self.timers
            .retain(|(t, when)| !(matches!(t, TimerId::Liveness { .. }) && *when <= at));
        for t in due {
            self.c.handle_timer(t, at);
        }
        self.settle();
    }

    fn gone_records(&self) -> Vec<GoneCause> {
        self.journal
            .iter()
            .filter_map(|e| match &e.record {
                JournalRecord::RuntimeGone { cause, .. } => Some(*cause),
                _ => None,
            })
            .collect()
    }
}

#[test]
fn the_port_closing_settles_a_running_command_as_lost_at_once() {
    let (mut w, command) = World::running();
    let (runtime, generation) = w.ids();
    w.now = w.now.plus(10);
    w.c.handle_port_closed(runtime, generation, PORT, w.now)
        .unwrap();
    w.settle();
    assert_eq!(w.c.outcome(command), Some(Outcome::Lost));
    assert_eq!(w.gone_records(), vec![GoneCause::Crashed]);
    assert!(!w.c.is_attached(runtime));
    // The worker may still be there (it closed only its port): it is
    // terminated, so nothing goes on running behind a `lost`.
    assert_eq!(w.terminations, vec![(runtime, generation)]);
    // The page confirming that termination changes nothing more.
    let before = w.journal.len();
    assert_eq!(
        w.c.handle_exit_claim(runtime, generation, false, w.now),
        ExitClaim::Ignored
    );
    w.settle();
    assert_eq!(w.journal.len(), before);
    // Should its worker still be there and be given a port by a later
    // relay, the port is taken so that its hello is refused, which shuts
    // it down, rather than left unanswered.
    w.c.handle_port_opened(runtime, generation, PortId(5))
        .unwrap();
    let i = w.identity.unwrap();
    let hello = RuntimeToController::Hello(crate::message::Hello {
        v: crate::schema::V1,
        lease: i.lease,
        runtime,
        generation,
        execution: i.execution,
        streams: Vec::new(),
    });
    assert!(matches!(
        w.c.handle_port_message(runtime, generation, PortId(5), hello, w.now),
        Err(ControllerError::HelloRejected { .. })
    ));
}

#[test]
fn its_life_lock_released_settles_a_running_command_as_lost_at_once() {
    let (mut w, command) = World::running();
    let (runtime, generation) = w.ids();
    // Not for another port's runtime: the lock wait belongs to a port.
    assert_eq!(
        w.c.handle_life_lock_released(runtime, generation, PortId(9), w.now),
        Err(ControllerError::StalePort { runtime })
    );
    assert_eq!(w.c.outcome(command), Some(Outcome::Running));
    w.c.handle_life_lock_released(runtime, generation, PORT, w.now)
        .unwrap();
    w.settle();
    assert_eq!(w.c.outcome(command), Some(Outcome::Lost));
    assert_eq!(w.gone_records(), vec![GoneCause::Crashed]);
    assert_eq!(w.terminations, vec![(runtime, generation)]);
    // The port's close arriving after it changes nothing more.
    let before = w.journal.len();
    assert!(w
        .c
        .handle_port_closed(runtime, generation, PORT, w.now)
        .is_err());
    w.settle();
    assert_eq!(w.journal.len(), before);
}

#[test]
fn a_page_claim_about_a_runtime_with_an_open_port_is_not_believed() {
    let (mut w, command) = World::running();
    let (runtime, generation) = w.ids();
    let before = w.journal.len();
    for crashed in [true, false] {
        assert_eq!(
            w.c.handle_exit_claim(runtime, generation, crashed, w.now),
            ExitClaim::Hint
        );
    }
    // A failed termination nobody asked for is no evidence either.
    w.c.handle_cleanup_failed(runtime, generation, "forged", w.now)
        .unwrap();
    w.settle();
    assert_eq!(w.journal.len(), before, "nothing recorded for a claim");
    assert_eq!(w.c.outcome(command), Some(Outcome::Running));
    assert!(w.c.is_attached(runtime));
    assert!(w.terminations.is_empty());
    // The hint made the controller look again soon; the runtime answers.
    let probe = w
        .timers
        .iter()
        .filter(|(t, _)| {
            *t == TimerId::Liveness {
                runtime,
                generation,
            }
        })
        .map(|(_, at)| *at)
        .max()
        .unwrap();
    assert!(probe <= w.now.plus(w.c.config().heartbeat_timeout_ms));
}

#[test]
fn a_page_claim_about_a_runtime_that_never_dialed_in_is_believed() {
    let mut w = World::running().0;
    let workspace = id(0x77);
    // A replacement generation whose worker got its port but failed before
    // it said hello (its workspace would not open): only the page knows.
    w.client(|request| ClientRequest::StartRuntime { request, workspace });
    w.settle();
    let (runtime, generation) = w.ids();
    w.c.handle_port_opened(runtime, generation, PortId(2))
        .unwrap();
    assert_eq!(w.c.liveness(runtime), Liveness::Detached);
    assert_eq!(
        w.c.handle_exit_claim(runtime, generation, true, w.now),
        ExitClaim::Believed
    );
    w.settle();
    assert_eq!(w.gone_records().last(), Some(&GoneCause::Crashed));
    // Said once, that is settled; saying it again records nothing.
    let before = w.journal.len();
    assert_eq!(
        w.c.handle_exit_claim(runtime, generation, true, w.now),
        ExitClaim::Ignored
    );
    w.settle();
    assert_eq!(w.journal.len(), before);
}

#[test]
fn messages_and_closes_on_a_port_that_is_not_the_current_one_are_ignored() {
    let (mut w, command) = World::running();
    let (runtime, generation) = w.ids();
    let before = w.journal.len();
    let stale = PortId(7);
    // A second port for a runtime whose port is open is not its own.
    assert_eq!(
        w.c.handle_port_opened(runtime, generation, stale),
        Err(ControllerError::PortInUse { runtime })
    );
    let exit = RuntimeToController::Event {
        runtime,
        generation,
        command,
        seq: w.c.projection().command(command).unwrap().last_seq.next(),
        body: crate::event::EventBody::Stdout {
            data: "forged\n".into(),
        },
    };
    assert_eq!(
        w.c.handle_port_message(runtime, generation, stale, exit.clone(), w.now),
        Err(ControllerError::StalePort { runtime })
    );
    assert_eq!(
        w.c.handle_port_closed(runtime, generation, stale, w.now),
        Err(ControllerError::StalePort { runtime })
    );
    // The right port but another generation's words.
    assert!(matches!(
        w.c.handle_port_message(runtime, generation.next(), PORT, exit, w.now),
        Err(ControllerError::StalePort { .. })
    ));
    w.settle();
    assert_eq!(w.journal.len(), before);
    assert_eq!(w.c.outcome(command), Some(Outcome::Running));
    // After the port closed, nothing more on it counts.
    w.c.handle_port_closed(runtime, generation, PORT, w.now)
        .unwrap();
    w.settle();
    let after = w.journal.len();
    let heartbeat = RuntimeToController::Heartbeat {
        runtime,
        generation,
        streams: Vec::new(),
    };
    assert_eq!(
        w.c.handle_port_message(runtime, generation, PORT, heartbeat, w.now),
        Err(ControllerError::StalePort { runtime })
    );
    w.settle();
    assert_eq!(w.journal.len(), after);
}

#[test]
fn heartbeat_silence_is_not_responding_never_lost_until_stopped() {
    let (mut w, command) = World::running();
    let (runtime, generation) = w.ids();
    let timeout = w.c.config().heartbeat_timeout_ms;
    assert_eq!(w.c.liveness(runtime), Liveness::Responding);
    // A busy loop: no beats, the port stays open. Long past every old
    // deadline (heartbeat 10 s + reattach 15 s) it is still not lost.
    let quiet = w.now;
    let before = w.journal.len();
    for step in 1..=60 {
        let at = quiet.plus(step * timeout);
        w.silence_until(at);
        // The controller re-arms its check while the runtime answers, so a
        // firing that finds it silent must say so.
        w.timers.push((
            TimerId::Liveness {
                runtime,
                generation,
            },
            at,
        ));
    }
    assert_eq!(
        w.c.liveness(runtime),
        Liveness::NotResponding { since: quiet }
    );
    assert_eq!(w.c.outcome(command), Some(Outcome::Running));
    assert_eq!(w.journal.len(), before, "silence records nothing");
    assert!(w.terminations.is_empty());
    // A word from it ends the silence.
    w.rt.as_mut().unwrap().handle_timer(w.now);
    w.settle();
    assert_eq!(w.c.liveness(runtime), Liveness::Responding);
    assert_eq!(
        w.c.handle_stop_unresponsive(runtime, generation, w.now),
        Err(ControllerError::Responding { runtime })
    );
    // Silent again; a person stops it: termination is asked for, and the
    // command is lost only once that is carried out.
    let quiet = w.now;
    w.silence_until(quiet.plus(timeout));
    assert!(matches!(
        w.c.liveness(runtime),
        Liveness::NotResponding { .. }
    ));
    w.c.handle_stop_unresponsive(runtime, generation, w.now)
        .unwrap();
    w.settle();
    assert_eq!(w.terminations, vec![(runtime, generation)]);
    assert_eq!(w.c.outcome(command), Some(Outcome::Running));
    // Asked twice, it is asked for once.
    w.c.handle_stop_unresponsive(runtime, generation, w.now)
        .unwrap();
    w.settle();
    assert_eq!(w.terminations.len(), 1);
    assert_eq!(
        w.c.handle_exit_claim(runtime, generation, false, w.now),
        ExitClaim::Believed
    );
    w.settle();
    assert_eq!(w.c.outcome(command), Some(Outcome::Lost));
    assert_eq!(w.gone_records(), vec![GoneCause::Terminated]);
    // Its life lock released after the confirmation adds nothing: the
    // shell is told nothing new happened (`Err`), so it settles nothing.
    let before = w.journal.len();
    assert!(w
        .c
        .handle_life_lock_released(runtime, generation, PORT, w.now)
        .is_err());
    w.settle();
    assert_eq!(w.journal.len(), before);
}

#[test]
fn a_requested_termination_is_settled_by_whichever_comes_first() {
    let (mut w, command) = World::running();
    let (runtime, generation) = w.ids();
    w.silence_until(w.now.plus(w.c.config().heartbeat_timeout_ms));
    w.c.handle_stop_unresponsive(runtime, generation, w.now)
        .unwrap();
    w.settle();
    // The port closes before the page's report arrives.
    w.c.handle_port_closed(runtime, generation, PORT, w.now)
        .unwrap();
    w.settle();
    assert_eq!(w.c.outcome(command), Some(Outcome::Lost));
    assert_eq!(w.gone_records(), vec![GoneCause::Terminated]);
    assert_eq!(
        w.c.handle_exit_claim(runtime, generation, false, w.now),
        ExitClaim::Ignored
    );
}
