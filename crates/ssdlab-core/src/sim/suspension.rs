//! Program/erase suspension's events and charges (the die's side is `flash/suspension.rs`):
//! the suspended transactions are charged the gap as cell time, so their latency breakdown
//! still adds up.

use super::{Event, Simulation};
use crate::stats::breakdown::Step;
use crate::time::SimTime;

impl Simulation {
    /// Schedules the end of a program or erase whose cell operation runs from `start` for `cell`.
    pub(super) fn schedule_cell_end(&mut self, die: u32, start: SimTime, cell: u64) {
        let (end, gen) = self.backend.begin_cell(die, start, cell);
        self.queue.schedule(end, Event::DieDone { die, gen });
    }

    /// A read has arrived at `die`: suspend its program or erase if the configuration allows it.
    pub(super) fn maybe_suspend(&mut self, die: u32) {
        if let Some(done) = self.backend.try_suspend(die, self.now()) {
            self.queue.schedule(done, Event::Suspended { die });
        }
    }

    /// The die is suspended: it is free for reads.
    pub(super) fn on_suspended(&mut self, die: u32) {
        self.backend.suspended(die);
        self.after_read_while_suspended(die);
        self.touched_dies.push(die);
    }

    /// Between reads on a suspended die: serve the next read, or resume when none is waiting.
    pub(super) fn after_read_while_suspended(&mut self, die: u32) {
        if self.tsu.has_reads(die) {
            return;
        }
        let now = self.now();
        let Some(s) = self.backend.resume(die) else { return };
        // The suspended transactions waited from the suspension until now, as cell time.
        for &id in s.batch.ids() {
            self.spent[id as usize].add(Step::CellOperation, now - s.since);
        }
        self.schedule_cell_end(die, now, s.remaining);
    }
}
