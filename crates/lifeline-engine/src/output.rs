//! Reading a settled command's output back from the journal when it is
//! shown.
//!
//! The projection keeps no text for a command that left its recent window
//! (see `lifeline_core::projection::SettledOutput`), so a view built from
//! scratch says `OutputRead::Loading` for it. Every view posted to the page
//! passes through [`Engine::post`], which queues those commands here; the
//! engine asks the shell for at most [`MAX_READS`] of them at a time
//! ([`Effect::ReadOutput`]) and turns each answer into the command's
//! `Settled` delta ([`Engine::handle_output_read`]).
//!
//! A read is tagged with the view it was asked for (`shown`, raised by
//! every view built from scratch): an answer for a view the page no longer
//! shows is dropped, and the new view asks again for what it shows.

use std::collections::VecDeque;

use lifeline_core::event::EventRecord;
use lifeline_core::view::{output_read, output_to_read, ViewDelta};
use lifeline_core::CommandId;
use lifeline_protocol::ControllerToPage;

use crate::{Effect, Engine};

/// Reads in flight at most: a transcript with hundreds of settled commands
/// must not open hundreds of transactions at once.
pub const MAX_READS: usize = 4;

/// The reads a shown transcript waits for.
#[derive(Debug, Default)]
pub(crate) struct Reads {
    /// Raised by every view built from scratch.
    shown: u64,
    /// Commands of the current view still to be read, in transcript order.
    queue: VecDeque<CommandId>,
    /// Reads asked of the shell and not answered yet, with the view each
    /// was asked for (old views' reads still count until they answer).
    in_flight: Vec<(u64, CommandId)>,
}

impl Reads {
    /// A view went to the page: what it shows as loading is to be read.
    pub(crate) fn posted(&mut self, reset: bool, deltas: &[ViewDelta]) {
        if reset {
            self.shown += 1;
            self.queue.clear();
        }
        for command in output_to_read(deltas) {
            if !self.queue.contains(&command) {
                self.queue.push_back(command);
            }
        }
    }

    /// The next read to ask for, if a slot is free.
    fn next(&mut self) -> Option<(u64, CommandId)> {
        if self.in_flight.len() >= MAX_READS {
            return None;
        }
        let command = self.queue.pop_front()?;
        self.in_flight.push((self.shown, command));
        Some((self.shown, command))
    }

    /// Takes an answer; true if it is for the view still shown.
    fn answered(&mut self, view: u64, command: CommandId) -> bool {
        match self.in_flight.iter().position(|r| *r == (view, command)) {
            Some(i) => {
                self.in_flight.swap_remove(i);
                view == self.shown
            }
            None => false,
        }
    }

    /// Reads asked for and not answered.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Reads waiting for a slot.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }
}

impl Engine {
    /// Asks the shell for the next reads, up to [`MAX_READS`] at a time.
    pub(crate) fn start_reads(&mut self) {
        while let Some((view, command)) = self.reads.next() {
            self.effects.push_back(Effect::ReadOutput { view, command });
        }
    }

    /// The shell read `command`'s events for view `view` (`Err`: the
    /// journal could not give them; the reason is the shell's to log).
    pub fn handle_output_read(
        &mut self,
        view: u64,
        command: CommandId,
        events: Result<Vec<EventRecord>, ()>,
    ) {
        if self.reads.answered(view, command) {
            let delta = self
                .projection()
                .and_then(|p| output_read(p, command, events.as_deref().map_err(|_| ())));
            if let Some(delta) = delta {
                self.post(ControllerToPage::View {
                    reset: false,
                    deltas: vec![delta],
                });
            }
        }
        self.start_reads();
    }

    /// Reads (in flight, waiting) for the shown view, for the simulation's
    /// liveness check: every one of them settles.
    pub fn output_reads(&self) -> (usize, usize) {
        (self.reads.in_flight(), self.reads.queued())
    }
}
