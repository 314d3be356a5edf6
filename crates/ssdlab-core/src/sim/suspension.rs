//! Program/erase suspension: a read that reaches a die in the middle of a long program or erase
//! suspends it (paying the suspend time), is served, and the program or erase then resumes for
//! the time it had left. The suspended transactions are charged the gap as cell time, so their
//! latency breakdown still adds up.

use super::{Event, Simulation};
use crate::flash::backend::Suspended;
use crate::ftl::transaction::Class;
use crate::stats::breakdown::Step;
use crate::time::SimTime;

impl Simulation {
    /// Schedules the end of a program or erase whose cell operation runs from `start` for `cell`.
    pub(super) fn schedule_cell_end(&mut self, die: u32, start: SimTime, cell: u64) {
        let d = &mut self.backend.dies[die as usize];
        d.cell_start = start;
        d.cell_end = start + cell;
        let gen = d.gen;
        self.queue.schedule(start + cell, Event::DieDone { die, gen });
    }

    /// A read has arrived at `die`: suspend its program or erase if the configuration allows it
    /// and enough of the operation is left to be worth it.
    pub(super) fn maybe_suspend(&mut self, die: u32) {
        let now = self.now();
        let d = &self.backend.dies[die as usize];
        if !d.busy || d.suspended.is_some() || now < d.cell_start || now >= d.cell_end {
            return;
        }
        let t = &self.config.flash.timing;
        let (allowed, cost, min_remaining) = match d.batch.class {
            Class::UserWrite | Class::GcWrite | Class::MappingWrite => {
                (self.config.flash.suspension.program(), t.suspend_program.value, t.suspend_program_min_remaining.value)
            }
            Class::Erase => {
                (self.config.flash.suspension.erase(), t.suspend_erase.value, t.suspend_erase_min_remaining.value)
            }
            _ => return,
        };
        let remaining = d.cell_end - now;
        if !allowed || remaining <= min_remaining {
            return;
        }
        let d = &mut self.backend.dies[die as usize];
        d.suspended = Some(Suspended { batch: d.batch, picked_at: d.picked_at, since: now, remaining });
        // The scheduled end of the operation no longer holds.
        d.gen += 1;
        d.cell_start = SimTime::MAX;
        self.backend.counters.suspensions += 1;
        self.queue.schedule(now + cost, Event::Suspended { die });
    }

    /// The die is suspended: it is free for reads.
    pub(super) fn on_suspended(&mut self, die: u32) {
        self.backend.dies[die as usize].busy = false;
        self.after_read_while_suspended(die);
        self.touched_dies.push(die);
    }

    /// Between reads on a suspended die: serve the next read, or resume when none is waiting.
    pub(super) fn after_read_while_suspended(&mut self, die: u32) {
        if self.tsu.has_reads(die) {
            return;
        }
        let now = self.now();
        let Some(s) = self.backend.dies[die as usize].suspended.take() else { return };
        let d = &mut self.backend.dies[die as usize];
        d.busy = true;
        d.batch = s.batch;
        d.picked_at = s.picked_at;
        // The suspended transactions waited from the suspension until now, as cell time.
        for &id in s.batch.ids() {
            self.spent[id as usize].add(Step::CellOperation, now - s.since);
        }
        self.schedule_cell_end(die, now, s.remaining);
    }
}
