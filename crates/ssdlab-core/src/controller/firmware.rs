//! The controller's embedded cores running firmware (Amber's computation complex).
//!
//! Each firmware step costs `sum(instructions of class c x CPI of c)` cycles at the core clock
//! for its fixed part, plus the same for each unit of work it did (`[firmware.work]`: protocol
//! events, misses, entries walked, blocks scanned), all computed once at build time, so running a
//! step on the hot path is a few table lookups, a max and an add. A core runs one step at a time in the order the steps were asked for: a step starts when
//! both its input is ready and its core is free, so a busy or slow core shows in the latency of
//! everything assigned to it. Time is reserved ahead (the same way channels and the DRAM are), so
//! a step needs no event of its own.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::firmware::{FirmwareConfig, FirmwareStep, WorkItem, INSTRUCTION_CLASSES};
use crate::time::{SimTime, PS_PER_S};

const STEPS: usize = FirmwareStep::ALL.len();
const ITEMS: usize = WorkItem::ALL.len();

/// Units of work a step did, by item (only the nonzero ones need be named).
pub type Work<'a> = &'a [(WorkItem, u64)];

pub struct Firmware {
    /// Picoseconds one execution of each step takes on its core.
    step_ps: [u64; STEPS],
    step_core: [u32; STEPS],
    step_instructions: [[u64; 4]; STEPS],
    /// Executions of each step so far.
    executions: [u64; STEPS],
    /// Picoseconds and instructions of one unit of each work item, and the units done so far.
    item_ps: [u64; ITEMS],
    item_instructions: [[u64; 4]; ITEMS],
    item_units: [u64; ITEMS],
    core_free_at: Vec<SimTime>,
    core_busy_ps: Vec<u64>,
    clock_hz: f64,
}

impl Firmware {
    pub fn new(config: &FirmwareConfig) -> Self {
        let cpi = [config.cpi.branch, config.cpi.load_store, config.cpi.arithmetic, config.cpi.other];
        let clock_hz = config.clock.value;
        let ps = |instructions: &[u64; 4]| {
            let cycles: f64 = instructions.iter().zip(cpi).map(|(&n, c)| n as f64 * c).sum();
            (cycles / clock_hz * PS_PER_S as f64).round() as u64
        };
        let item_instructions = WorkItem::ALL.map(|item| config.work.resolved(item));
        let mut step_ps = [0; STEPS];
        let mut step_core = [0; STEPS];
        let mut step_instructions = [[0; 4]; STEPS];
        for step in FirmwareStep::ALL {
            let r = config.resolved(step);
            step_ps[step as usize] = ps(&r.instructions);
            step_core[step as usize] = r.core;
            step_instructions[step as usize] = r.instructions;
        }
        Self {
            step_ps,
            step_core,
            step_instructions,
            executions: [0; STEPS],
            item_ps: item_instructions.map(|i| ps(&i)),
            item_instructions,
            item_units: [0; ITEMS],
            core_free_at: vec![0; config.cores as usize],
            core_busy_ps: vec![0; config.cores as usize],
            clock_hz,
        }
    }

    /// Runs `times` executions of `step`, back to back, starting no earlier than `ready`.
    /// Returns when they end.
    #[inline]
    pub fn run(&mut self, step: FirmwareStep, ready: SimTime, times: u64) -> SimTime {
        self.run_with(step, ready, times, &[])
    }

    /// Runs `times` executions of `step` that together did `work`, back to back, starting no
    /// earlier than `ready`. Returns when they end. Each work item must belong to `step`.
    #[inline]
    pub fn run_with(&mut self, step: FirmwareStep, ready: SimTime, times: u64, work: Work) -> SimTime {
        let s = step as usize;
        let core = self.step_core[s] as usize;
        let mut duration = self.step_ps[s] * times;
        for &(item, units) in work {
            debug_assert_eq!(item.step(), step, "{} is not part of the {} step", item.name(), step.name());
            duration += self.item_ps[item as usize] * units;
            self.item_units[item as usize] += units;
        }
        let start = ready.max(self.core_free_at[core]);
        self.core_free_at[core] = start + duration;
        self.core_busy_ps[core] += duration;
        self.executions[s] += times;
        start + duration
    }

    /// Picoseconds one execution of `step` takes.
    pub fn step_ps(&self, step: FirmwareStep) -> u64 {
        self.step_ps[step as usize]
    }

    pub fn busy_ps(&self) -> u64 {
        self.core_busy_ps.iter().sum()
    }

    /// Instructions executed so far.
    pub fn instructions(&self) -> u64 {
        self.by_class().iter().sum()
    }

    fn by_class(&self) -> [u64; 4] {
        let mut total = [0; 4];
        for s in 0..STEPS {
            for (c, t) in total.iter_mut().enumerate() {
                *t += self.executions[s] * self.step_instructions[s][c];
            }
        }
        for i in 0..ITEMS {
            for (c, t) in total.iter_mut().enumerate() {
                *t += self.item_units[i] * self.item_instructions[i][c];
            }
        }
        total
    }

    /// Instructions executed by each step, its work items included.
    fn by_step(&self) -> [u64; STEPS] {
        let mut total = std::array::from_fn(|s| self.executions[s] * self.step_instructions[s].iter().sum::<u64>());
        for item in WorkItem::ALL {
            let i = item as usize;
            total[item.step() as usize] += self.item_units[i] * self.item_instructions[i].iter().sum::<u64>();
        }
        total
    }

    /// results.json `firmware` for a run of `elapsed` picoseconds.
    pub fn summary(&self, elapsed: SimTime, firmware_latency_share: f64) -> FirmwareSummary {
        let seconds = elapsed as f64 / PS_PER_S as f64;
        let utilisation = |busy: u64| if elapsed == 0 { 0.0 } else { (busy as f64 / elapsed as f64).min(1.0) };
        let classes = self.by_class();
        let steps = FirmwareStep::ALL.map(FirmwareStep::name);
        FirmwareSummary {
            cores: self.core_busy_ps.len() as u32,
            clock_hz: self.clock_hz,
            core_utilisation: self.core_busy_ps.iter().map(|&b| utilisation(b)).collect(),
            core_busy_seconds: self.core_busy_ps.iter().map(|&b| b as f64 / PS_PER_S as f64).collect(),
            instructions_by_class: named(&INSTRUCTION_CLASSES, classes),
            instructions_by_step: named(&steps, self.by_step()),
            executions_by_step: named(&steps, self.executions),
            work_units: named(&WorkItem::ALL.map(WorkItem::name), self.item_units),
            instructions_by_work: named(
                &WorkItem::ALL.map(WorkItem::name),
                (0..ITEMS).map(|i| self.item_units[i] * self.item_instructions[i].iter().sum::<u64>()),
            ),
            step_us: named(&steps, self.step_ps.map(|ps| ps as f64 / 1e6)),
            work_unit_us: named(&WorkItem::ALL.map(WorkItem::name), self.item_ps.map(|ps| ps as f64 / 1e6)),
            instructions_per_second: if seconds > 0.0 { classes.iter().sum::<u64>() as f64 / seconds } else { 0.0 },
            latency_share: firmware_latency_share,
        }
    }
}

fn named<T>(names: &[&str], values: impl IntoIterator<Item = T>) -> BTreeMap<String, T> {
    names.iter().map(|n| n.to_string()).zip(values).collect()
}

/// results.json `firmware`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FirmwareSummary {
    pub cores: u32,
    pub clock_hz: f64,
    /// Busy fraction of each core over the run.
    pub core_utilisation: Vec<f64>,
    pub core_busy_seconds: Vec<f64>,
    /// Instructions executed, by class: branch, load_store, arithmetic, other.
    pub instructions_by_class: BTreeMap<String, u64>,
    /// Instructions executed, by firmware step: hil, cache, ftl, fil, gc (each with its work
    /// items).
    pub instructions_by_step: BTreeMap<String, u64>,
    pub executions_by_step: BTreeMap<String, u64>,
    /// Units of each `[firmware.work]` item done (doorbells serviced, PRP entries walked, CMT
    /// misses, blocks scanned, ...).
    #[serde(default)]
    pub work_units: BTreeMap<String, u64>,
    /// Instructions executed by each `[firmware.work]` item (part of its step's total).
    #[serde(default)]
    pub instructions_by_work: BTreeMap<String, u64>,
    /// Time one execution of each step's fixed part takes on an idle core, microseconds.
    pub step_us: BTreeMap<String, f64>,
    /// Time one unit of each `[firmware.work]` item adds to its step on an idle core,
    /// microseconds.
    #[serde(default)]
    pub work_unit_us: BTreeMap<String, f64>,
    pub instructions_per_second: f64,
    /// Fraction of all requests' response time spent in firmware steps (the `firmware` step of
    /// the latency breakdown, summed over requests, over the summed response times).
    pub latency_share: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::firmware::StepCost;

    fn config() -> FirmwareConfig {
        let mut c = FirmwareConfig { enabled: true, cores: 2, ..Default::default() };
        c.clock = crate::config::Frequency::lit("100MHz");
        // 10 branches (x1.5) + 20 loads (x2) + 30 arithmetic (x1) + 5 other (x1) = 90 cycles
        // = 900 ns at 100 MHz.
        c.fil =
            StepCost { branch: Some(10), load_store: Some(20), arithmetic: Some(30), other: Some(5), core: Some(1) };
        c.hil = StepCost { core: Some(1), ..c.fil.clone() };
        c
    }

    #[test]
    fn a_step_costs_its_instructions_times_cpi_at_the_clock() {
        let fw = Firmware::new(&config());
        assert_eq!(fw.step_ps(FirmwareStep::Fil), 900_000);
    }

    #[test]
    fn steps_on_the_same_core_queue_and_steps_on_other_cores_do_not() {
        let mut fw = Firmware::new(&config());
        assert_eq!(fw.run(FirmwareStep::Fil, 0, 1), 900_000);
        // HIL shares core 1: it waits for the FIL step.
        assert_eq!(fw.run(FirmwareStep::Hil, 100, 1), 1_800_000);
        // With 2 cores the FTL's default core 2 folds onto core 1: it waits too. The cache
        // step's default core is 1 as well; nothing runs on core 0 yet, so a step moved there
        // starts at once.
        let ftl = fw.step_ps(FirmwareStep::Ftl);
        assert_eq!(fw.run(FirmwareStep::Ftl, 100, 2), 1_800_000 + 2 * ftl);
        let s = fw.summary(100_000_000, 0.0);
        assert_eq!(s.executions_by_step["fil"], 1);
        assert_eq!(s.instructions_by_class["branch"], 10 + 10 + 2 * 10);
        // Core 1: 0.9 + 0.9 us (FIL, HIL) + 2 x 0.9 us (FTL: 10 / 30 / 12 / 3 = 90 cycles) of
        // 100 us.
        assert!((s.core_utilisation[1] - 0.036).abs() < 1e-12);
        assert_eq!(s.core_utilisation[0], 0.0);
    }

    #[test]
    fn work_adds_its_units_to_the_step_and_its_totals() {
        let mut c = config();
        // A CMT miss of 100 loads/stores: 200 cycles, 2 us at 100 MHz.
        c.work.cmt_miss = crate::config::firmware::WorkCost {
            branch: Some(0),
            load_store: Some(100),
            arithmetic: Some(0),
            other: Some(0),
        };
        let mut fw = Firmware::new(&c);
        let ftl = fw.step_ps(FirmwareStep::Ftl);
        let done = fw.run_with(FirmwareStep::Ftl, 0, 4, &[(WorkItem::CmtMiss, 3), (WorkItem::CmtEntryWalked, 0)]);
        assert_eq!(done, 4 * ftl + 3 * 2_000_000);
        let s = fw.summary(100_000_000, 0.0);
        assert_eq!(s.work_units["cmt_miss"], 3);
        assert_eq!(s.instructions_by_work["cmt_miss"], 300);
        assert_eq!(s.instructions_by_step["ftl"], 4 * 55 + 300);
        assert_eq!(s.instructions_by_class["load_store"], 4 * 30 + 300);
        assert_eq!(s.work_unit_us["cmt_miss"], 2.0);
    }
}
