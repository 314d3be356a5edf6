//! The flash back end's run-time state: each die's state machine (idle, dispatching, in a cell
//! operation, sending data out, a program or erase suspended), each channel's bus, the
//! controller's dispatcher, and the counts of what they did (for the results and the energy
//! model). The events that move them are handled in `sim/flash_path.rs` and
//! `sim/suspension.rs`.

use super::timing::FlashTiming;
use super::Geometry;
use crate::config::Config;
use crate::ftl::transaction::Class;
use crate::ftl::tsu::Batch;
use crate::time::SimTime;

/// A die's state. Dies are addressed by id (`Geometry` numbers them).
#[derive(Clone, Copy)]
pub struct DieState {
    pub busy: bool,
    pub batch: Batch,
    /// When the die took its current batch from the queue.
    pub picked_at: SimTime,
    /// The cell operation of the current batch (for suspension).
    pub cell_start: SimTime,
    pub cell_end: SimTime,
    /// Advanced when a program or erase is suspended, so its scheduled end is ignored.
    pub gen: u32,
    pub suspended: Option<Suspended>,
}

/// A program or erase suspended for reads (see `sim/suspension.rs`).
#[derive(Clone, Copy, Debug)]
pub struct Suspended {
    pub batch: Batch,
    pub picked_at: SimTime,
    pub since: SimTime,
    /// Cell time the program or erase still needs.
    pub remaining: u64,
}

#[derive(Default)]
pub struct FlashCounters {
    pub reads: u64,
    pub programs: u64,
    pub erases: u64,
    pub multiplane: u64,
    pub suspensions: u64,
    /// Die-picoseconds of cell reads, programs and erases (per plane of a multi-plane command),
    /// and controller picoseconds spent dispatching: what the energy model charges.
    pub read_cell_ps: u64,
    pub program_cell_ps: u64,
    pub erase_cell_ps: u64,
    pub dispatch_ps: u64,
}

pub struct FlashBackend {
    pub timing: FlashTiming,
    pub dies: Vec<DieState>,
    pub channel_free_at: Vec<SimTime>,
    pub channel_busy_ps: Vec<u64>,
    /// When the controller's dispatcher is next free.
    pub dispatch_free_at: SimTime,
    /// Controller dispatch time per transaction: read, program, erase.
    pub dispatch_ps: [u64; 3],
    /// GC moves use copyback (no channel transfer).
    pub copyback: bool,
    pub counters: FlashCounters,
}

impl FlashBackend {
    pub fn new(config: &Config, geometry: &Geometry, timing: FlashTiming) -> Self {
        let idle = DieState {
            busy: false,
            batch: Batch { class: Class::UserRead, txns: [0; 8], count: 0 },
            picked_at: 0,
            cell_start: 0,
            cell_end: 0,
            gen: 0,
            suspended: None,
        };
        let c = &config.controller;
        Self {
            timing,
            dies: vec![idle; geometry.dies as usize],
            channel_free_at: vec![0; geometry.channels as usize],
            channel_busy_ps: vec![0; geometry.channels as usize],
            dispatch_free_at: 0,
            dispatch_ps: [c.dispatch_read.value, c.dispatch_write.value, c.dispatch_erase.value],
            copyback: config.ftl.copyback,
            counters: FlashCounters::default(),
        }
    }

    /// Holds `channel` for `duration` from when it is next free (not before `now`); returns
    /// the start.
    #[inline]
    pub fn use_channel(&mut self, channel: usize, now: SimTime, duration: u64) -> SimTime {
        let start = now.max(self.channel_free_at[channel]);
        self.channel_free_at[channel] = start + duration;
        self.channel_busy_ps[channel] += duration;
        start
    }
}
