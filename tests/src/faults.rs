//! The fault plan (per-seed "swarm" configuration, as in TigerBeetle's VOPR)
//! and the named boundaries faults are aimed at, with coverage counters.

use crate::net::NetFaults;
use crate::rng::Rng;
use std::fmt;

/// A named point in a command's life where the injector may strike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Boundary {
    /// The admit batch is in flight; nothing about the command is durable yet.
    BeforeAdmitPersist,
    /// Admission is durable; the exposure (dispatch attempt) record is not.
    AfterAdmitBeforeExposurePersist,
    /// The exposure record is durable; the dispatch is not on the wire yet.
    AfterExposureBeforeSend,
    /// The dispatch is on the wire (or at the runtime); no ACK has arrived.
    AfterSendBeforeAck,
    /// The controller has the ACK; the `dispatched` record is not durable yet.
    AfterAckBeforeAckPersist,
    /// The process is running (output flowing).
    WhileRunning,
    /// The process has exited; the terminal record is not durable yet.
    BeforeTerminalPersist,
    /// The terminal record is durable; the client has not been told yet.
    AfterTerminalPersistBeforeNotify,
    /// A cancellation has been requested and has not settled.
    DuringCancellation,
    /// A runtime termination / cleanup is in progress.
    DuringCleanup,
    /// A controller restarted and the runtime's hello is in flight.
    DuringReattach,
}

impl Boundary {
    /// Every boundary, in life-cycle order.
    pub const ALL: [Boundary; 11] = [
        Boundary::BeforeAdmitPersist,
        Boundary::AfterAdmitBeforeExposurePersist,
        Boundary::AfterExposureBeforeSend,
        Boundary::AfterSendBeforeAck,
        Boundary::AfterAckBeforeAckPersist,
        Boundary::WhileRunning,
        Boundary::BeforeTerminalPersist,
        Boundary::AfterTerminalPersistBeforeNotify,
        Boundary::DuringCancellation,
        Boundary::DuringCleanup,
        Boundary::DuringReattach,
    ];

    /// Index into coverage tables.
    pub fn index(self) -> usize {
        Boundary::ALL.iter().position(|b| *b == self).unwrap()
    }

    /// The name used in docs and the coverage table.
    pub fn name(self) -> &'static str {
        match self {
            Boundary::BeforeAdmitPersist => "before admit persist",
            Boundary::AfterAdmitBeforeExposurePersist => "after admit, before exposure persist",
            Boundary::AfterExposureBeforeSend => "after exposure, before send",
            Boundary::AfterSendBeforeAck => "after send, before ACK",
            Boundary::AfterAckBeforeAckPersist => "after ACK, before its persist",
            Boundary::WhileRunning => "while running",
            Boundary::BeforeTerminalPersist => "before terminal persist",
            Boundary::AfterTerminalPersistBeforeNotify => {
                "after terminal persist, before notification"
            }
            Boundary::DuringCancellation => "during cancellation",
            Boundary::DuringCleanup => "during cleanup",
            Boundary::DuringReattach => "during reattach (hello in flight)",
        }
    }
}

impl fmt::Display for Boundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A fault the injector can apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// The controller worker dies and is replaced; it recovers from the journal.
    CrashController,
    /// The runtime worker dies; a replacement with the next generation dials in.
    CrashRuntime,
    /// Both die (tab reload); a new controller recovers from the journal.
    HostLoss,
    /// The message crossing this boundary is lost.
    DropMessage,
    /// The message crossing this boundary is delivered twice.
    DuplicateMessage,
    /// The persist crossing this boundary aborts.
    FailPersist,
    /// The client cancels the command here.
    ClientCancel,
    /// The client detaches here and rejoins later at its cursor.
    ClientDisconnect,
    /// The cleanup (runtime termination) fails.
    FailCleanup,
    /// The runtime's port breaks without either side dying; the page relays a new one.
    TransportLoss,
    /// The runtime stalls (a busy worker): what it sends waits past the
    /// controller's ACK timeout.
    DelayMessage,
}

impl Fault {
    /// Every fault kind.
    pub const ALL: [Fault; 11] = [
        Fault::CrashController,
        Fault::CrashRuntime,
        Fault::HostLoss,
        Fault::DropMessage,
        Fault::DuplicateMessage,
        Fault::FailPersist,
        Fault::ClientCancel,
        Fault::ClientDisconnect,
        Fault::FailCleanup,
        Fault::TransportLoss,
        Fault::DelayMessage,
    ];

    /// Index into tables.
    pub fn index(self) -> usize {
        Fault::ALL.iter().position(|f| *f == self).unwrap()
    }
}

/// Per-seed fault configuration. Each seed enables a random subset of fault
/// kinds with random intensities, so different seeds explore very different
/// regions (some nearly fault-free, some hostile).
#[derive(Clone, Debug)]
pub struct FaultPlan {
    /// Probability (per mille) that a boundary strikes when it is crossed.
    pub boundary_rate: u32,
    /// Which faults are enabled for this seed.
    pub enabled: [bool; Fault::ALL.len()],
    /// Background transport faults.
    pub net: NetFaults,
    /// Probability (per mille) that a persist fails spontaneously.
    pub persist_fail: u32,
    /// Budget of crashes (controller, runtime, host) for the whole run, so
    /// every run ends with a quiet period in which things settle.
    pub crash_budget: u32,
    /// Probability (per mille) that a dying runtime leaves a zombie port.
    pub zombie: u32,
    /// Runtime terminations fail most of the time while clients are active
    /// (a stubborn cleanup): enough failures in a row to pass the core's
    /// journaled retry limit.
    pub stubborn_cleanup: bool,
}

impl FaultPlan {
    /// Draws a plan from the seed's generator.
    pub fn random(rng: &mut Rng) -> Self {
        let quiet = rng.chance(100);
        let mut enabled = [false; Fault::ALL.len()];
        for e in enabled.iter_mut() {
            *e = !quiet && rng.chance(600);
        }
        let net = if quiet {
            NetFaults::default()
        } else {
            NetFaults {
                drop: *rng.pick(&[0, 0, 10, 50, 150]),
                duplicate: *rng.pick(&[0, 0, 20, 100]),
                delay: *rng.pick(&[0, 50, 200]),
            }
        };
        FaultPlan {
            boundary_rate: if quiet {
                0
            } else {
                *rng.pick(&[50, 150, 300, 500])
            },
            enabled,
            net,
            persist_fail: if quiet { 0 } else { *rng.pick(&[0, 0, 10, 50]) },
            crash_budget: rng.range(1, 4) as u32,
            zombie: if quiet { 0 } else { *rng.pick(&[0, 300, 1000]) },
            stubborn_cleanup: enabled[Fault::FailCleanup.index()] && rng.chance(300),
        }
    }

    /// A plan with no faults at all.
    pub fn none() -> Self {
        FaultPlan {
            boundary_rate: 0,
            enabled: [false; Fault::ALL.len()],
            net: NetFaults::default(),
            persist_fail: 0,
            crash_budget: 0,
            zombie: 0,
            stubborn_cleanup: false,
        }
    }

    /// Is this fault kind enabled?
    pub fn allows(&self, fault: Fault) -> bool {
        self.enabled[fault.index()]
    }
}

/// Counts, per boundary, how often it was crossed and how often a fault was
/// injected there (by kind).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Times each boundary was crossed.
    pub crossed: [u64; Boundary::ALL.len()],
    /// Faults injected, by boundary and kind.
    pub injected: [[u64; Fault::ALL.len()]; Boundary::ALL.len()],
}

impl Coverage {
    /// Adds another run's counts.
    pub fn merge(&mut self, other: &Coverage) {
        for i in 0..Boundary::ALL.len() {
            self.crossed[i] += other.crossed[i];
            for j in 0..Fault::ALL.len() {
                self.injected[i][j] += other.injected[i][j];
            }
        }
    }

    /// Total faults injected at `b`.
    pub fn hits(&self, b: Boundary) -> u64 {
        self.injected[b.index()].iter().sum()
    }

    /// A printable table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "{:<46} {:>9} {:>7} | {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}\n",
            "boundary",
            "crossed",
            "faults",
            "ctl",
            "rt",
            "host",
            "drop",
            "dup",
            "pfail",
            "cancel",
            "detach",
            "clean",
            "port",
            "stall"
        ));
        for b in Boundary::ALL {
            let i = b.index();
            s.push_str(&format!(
                "{:<46} {:>9} {:>7} |",
                b.name(),
                self.crossed[i],
                self.hits(b)
            ));
            for f in Fault::ALL {
                s.push_str(&format!(" {:>6}", self.injected[i][f.index()]));
            }
            s.push('\n');
        }
        s
    }
}

/// The injector: decides, at each boundary crossing, whether and how to strike.
#[derive(Clone, Debug)]
pub struct Injector {
    /// The plan.
    pub plan: FaultPlan,
    /// Coverage so far.
    pub coverage: Coverage,
    crashes_left: u32,
}

impl Injector {
    /// An injector following `plan`.
    pub fn new(plan: FaultPlan) -> Self {
        let crashes_left = plan.crash_budget;
        Injector {
            plan,
            coverage: Coverage::default(),
            crashes_left,
        }
    }

    /// Crossing `boundary`, where `choices` are the faults meaningful here.
    /// Returns the fault to inject, if any (and records it).
    pub fn strike(
        &mut self,
        rng: &mut Rng,
        boundary: Boundary,
        choices: &[Fault],
    ) -> Option<Fault> {
        self.coverage.crossed[boundary.index()] += 1;
        if !rng.chance(self.plan.boundary_rate) {
            return None;
        }
        let allowed: Vec<Fault> = choices
            .iter()
            .copied()
            .filter(|f| self.plan.allows(*f))
            .filter(|f| {
                !matches!(
                    f,
                    Fault::CrashController | Fault::CrashRuntime | Fault::HostLoss
                ) || self.crashes_left > 0
            })
            .collect();
        if allowed.is_empty() {
            return None;
        }
        let fault = *rng.pick(&allowed);
        if matches!(
            fault,
            Fault::CrashController | Fault::CrashRuntime | Fault::HostLoss
        ) {
            self.crashes_left -= 1;
        }
        self.coverage.injected[boundary.index()][fault.index()] += 1;
        Some(fault)
    }

    /// Records a fault injected at `boundary` outside [`Injector::strike`].
    pub fn record(&mut self, boundary: Boundary, fault: Fault) {
        self.coverage.crossed[boundary.index()] += 1;
        self.coverage.injected[boundary.index()][fault.index()] += 1;
    }

    /// Spends one crash from the budget (for crashes injected off-boundary).
    pub fn take_crash(&mut self) -> bool {
        if self.crashes_left > 0 {
            self.crashes_left -= 1;
            true
        } else {
            false
        }
    }
}

/// How often the recovery paths that a fault schedule can only reach
/// indirectly were really taken, so that a check on them cannot pass
/// vacuously (each must be taken at least once over a run of ≥ 1 000 seeds).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Paths {
    /// `AckTimeout` evidence became durable for a command whose process had
    /// really started (its ACK, not its dispatch, was late or lost).
    pub ack_timeout: u64,
    /// A client cancelled with a stale generation (and was refused).
    pub stale_cancel: u64,
    /// A zombie runtime's message reached the controller after its
    /// generation was recorded gone.
    pub zombie_after_gone: u64,
    /// A process was killed for its deadline.
    pub deadline_kill: u64,
    /// A process was killed for a user's cancel.
    pub user_kill: u64,
    /// A completed command's output was compared in full with what its
    /// process emitted, for one client.
    pub output_compared: u64,
    /// A command was still `admitted` or `not_dispatched` when the quiet
    /// period began and was settled in it.
    pub settled_in_quiet: u64,
    /// A command the runtime had refused for want of room started later,
    /// dispatched again.
    pub ran_after_no_room: u64,
}

impl Paths {
    /// Adds another run's counts.
    pub fn merge(&mut self, other: &Paths) {
        for (a, (_, b)) in self.fields_mut().into_iter().zip(other.fields()) {
            *a += b;
        }
    }

    fn fields(&self) -> [(&'static str, u64); 8] {
        [
            ("ack timeout after a start", self.ack_timeout),
            ("stale-generation cancel", self.stale_cancel),
            ("zombie message after gone", self.zombie_after_gone),
            ("kill for a deadline", self.deadline_kill),
            ("kill for a user cancel", self.user_kill),
            ("completed output compared", self.output_compared),
            ("settled in the quiet period", self.settled_in_quiet),
            ("ran after a refusal for room", self.ran_after_no_room),
        ]
    }

    fn fields_mut(&mut self) -> [&mut u64; 8] {
        [
            &mut self.ack_timeout,
            &mut self.stale_cancel,
            &mut self.zombie_after_gone,
            &mut self.deadline_kill,
            &mut self.user_kill,
            &mut self.output_compared,
            &mut self.settled_in_quiet,
            &mut self.ran_after_no_room,
        ]
    }

    /// Paths never taken.
    pub fn untaken(&self) -> Vec<&'static str> {
        self.fields()
            .into_iter()
            .filter(|(_, n)| *n == 0)
            .map(|(name, _)| name)
            .collect()
    }

    /// One printable line.
    pub fn line(&self) -> String {
        let parts: Vec<String> = self
            .fields()
            .into_iter()
            .map(|(name, n)| format!("{name}: {n}"))
            .collect();
        format!("paths taken: {}", parts.join(", "))
    }
}
