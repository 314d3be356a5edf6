//! Program/erase suspension on the die: a read that reaches a die in the middle of a long
//! program or erase suspends it (paying the suspend time), is served, and the program or erase
//! then resumes for the cell time it had left (MQSim's `Program_Suspension` and
//! `Erase_Suspension`; Wu and He, FAST'12). The die's state machine lives here; the events and
//! latency charges it leads to are `sim/suspension.rs`'s.

use super::backend::{FlashBackend, Suspended};
use crate::config::Config;
use crate::ftl::transaction::Class;
use crate::time::SimTime;

/// When an operation may be suspended: the suspend time, and the least cell time that must be
/// left for a suspension to pay (`None`: never suspended).
#[derive(Clone, Copy, Debug, Default)]
pub struct SuspendRule {
    pub cost_ps: u64,
    pub min_remaining_ps: u64,
}

/// The suspension rules of programs and of erases.
#[derive(Clone, Copy, Debug, Default)]
pub struct SuspensionRules {
    pub program: Option<SuspendRule>,
    pub erase: Option<SuspendRule>,
}

impl SuspensionRules {
    pub fn new(config: &Config) -> Self {
        let (s, t) = (config.flash.suspension, &config.flash.timing);
        if config.controller.suspend_for_reads == Some(false) {
            // The chips could; the scheduler never asks (MQSim).
            return Self::default();
        }
        let rule = |allowed: bool, cost: u64, min_remaining: u64| {
            allowed.then_some(SuspendRule { cost_ps: cost, min_remaining_ps: min_remaining })
        };
        Self {
            program: rule(s.program(), t.suspend_program.value, t.suspend_program_min_remaining.value),
            erase: rule(s.erase(), t.suspend_erase.value, t.suspend_erase_min_remaining.value),
        }
    }
}

impl FlashBackend {
    /// The die's program or erase runs its cell operation from `start` for `cell` picoseconds:
    /// returns when it ends and the die's generation (an end scheduled under an older generation
    /// was cancelled by a suspension).
    pub fn begin_cell(&mut self, die: u32, start: SimTime, cell: u64) -> (SimTime, u32) {
        let d = &mut self.dies[die as usize];
        d.cell_start = start;
        d.cell_end = start + cell;
        (d.cell_end, d.gen)
    }

    /// A read has arrived at `die` at `now`: suspends its program or erase if the rules allow it
    /// and enough of the operation is left to be worth it. Returns when the suspension is
    /// complete (the die is free for reads then).
    pub fn try_suspend(&mut self, die: u32, now: SimTime) -> Option<SimTime> {
        let d = &mut self.dies[die as usize];
        if !d.busy || d.suspended.is_some() || now < d.cell_start || now >= d.cell_end {
            return None;
        }
        let rule = match d.batch.class {
            Class::UserWrite | Class::GcWrite | Class::MappingWrite => self.suspension.program,
            Class::Erase => self.suspension.erase,
            _ => None,
        }?;
        let remaining = d.cell_end - now;
        if remaining <= rule.min_remaining_ps {
            return None;
        }
        d.suspended = Some(Suspended { batch: d.batch, picked_at: d.picked_at, since: now, remaining });
        // The scheduled end of the operation no longer holds.
        d.gen += 1;
        d.cell_start = SimTime::MAX;
        self.counters.suspensions += 1;
        Some(now + rule.cost_ps)
    }

    /// The suspension is complete: the die serves reads.
    pub fn suspended(&mut self, die: u32) {
        self.dies[die as usize].busy = false;
    }

    /// Takes up the suspended program or erase again (no read waits): the die is busy with it,
    /// and the caller restarts its cell time for `remaining`.
    pub fn resume(&mut self, die: u32) -> Option<Suspended> {
        let d = &mut self.dies[die as usize];
        let s = d.suspended.take()?;
        d.busy = true;
        d.batch = s.batch;
        d.picked_at = s.picked_at;
        Some(s)
    }
}
