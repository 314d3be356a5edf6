//! The flash back end's run-time state: each die's state machine (idle, dispatching, in a cell
//! operation, sending data out, a program or erase suspended), each channel's bus, the
//! controller's dispatcher, and the counts of what they did (for the results and the energy
//! model). The back end times its own operations (dispatch, command and data cycles on the
//! channel, cell time by page type) and counts them; `sim/flash_path.rs` and
//! `sim/suspension.rs` turn those times into events and charge them to the transactions.

use super::channel::ChannelArbiter;
use super::suspension::SuspensionRules;
use super::timing::FlashTiming;
use super::Geometry;
use crate::config::flash::ChannelArbitration;
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
    /// When a read's data was ready in the page registers (it may wait for the channel).
    pub data_ready_at: SimTime,
    /// Advanced when a program or erase is suspended, so its scheduled end is ignored.
    pub gen: u32,
    pub suspended: Option<Suspended>,
    /// Read retries the current read batch still needs (`[flash.reliability]`).
    pub read_retries_left: u8,
}

/// A program or erase suspended for reads (see `flash/suspension.rs`).
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
    /// A chip runs one die's command at a time (`flash.die_commands`).
    pub one_command_per_chip: bool,
    /// A program moves only the sectors it writes (`flash.partial_page_transfer`), of
    /// `sectors_per_page`.
    pub partial_page_transfer: bool,
    pub sectors_per_page: u64,
    /// Under `flash.channel_arbitration = "data-out-first"`: read data before new commands.
    pub arbiter: Option<ChannelArbiter>,
    /// When a read may suspend a program or erase (`flash/suspension.rs`).
    pub suspension: SuspensionRules,
    pub counters: FlashCounters,
    /// `flash.timing.spread`: each die's (read, program, erase) cell-time factors; empty when
    /// every die runs at the configured latencies.
    die_factors: Vec<[f64; 3]>,
}

/// Random stream of the per-die latency factors.
const STREAM_LATENCY_SPREAD: u64 = 0x5912EAD;

impl FlashBackend {
    pub fn new(config: &Config, geometry: &Geometry, timing: FlashTiming) -> Self {
        let idle = DieState {
            busy: false,
            batch: Batch { class: Class::UserRead, txns: [0; 8], count: 0 },
            picked_at: 0,
            cell_start: 0,
            cell_end: 0,
            data_ready_at: 0,
            gen: 0,
            suspended: None,
            read_retries_left: 0,
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
            one_command_per_chip: config.flash.one_command_per_chip(),
            partial_page_transfer: config.flash.partial_page_transfer == Some(true),
            sectors_per_page: geometry.sectors_per_page,
            arbiter: (config.flash.channel_arbitration == Some(ChannelArbitration::DataOutFirst))
                .then(|| ChannelArbiter::new(geometry.channels, geometry.chips_per_channel)),
            suspension: SuspensionRules::new(config),
            counters: FlashCounters::default(),
            die_factors: config.flash.timing.spread.as_ref().map_or_else(Vec::new, |s| {
                s.draw(geometry.dies, &mut crate::engine::RandomStream::new(config.seed, STREAM_LATENCY_SPREAD))
            }),
        }
    }

    /// Queues a batch of `count` transactions of `class` at the controller's dispatcher, which
    /// handles one transaction at a time for all dies: when the last is dispatched, or `None`
    /// when dispatching takes no time (the operation starts at once).
    pub fn dispatch(&mut self, class: Class, count: u64, now: SimTime) -> Option<SimTime> {
        let per_txn = match class {
            c if c.is_read() => self.dispatch_ps[0],
            c if c.is_write() => self.dispatch_ps[1],
            _ => self.dispatch_ps[2],
        };
        if per_txn == 0 {
            return None;
        }
        let start = now.max(self.dispatch_free_at);
        self.dispatch_free_at = start + per_txn * count;
        self.counters.dispatch_ps += per_txn * count;
        Some(self.dispatch_free_at)
    }

    /// A multi-plane read of `pages` (page-in-block numbers, one per plane) from `now`: the
    /// command and address cycles on `channel`, then the cell read of the slowest page type.
    /// Returns (when the command is sent, cell picoseconds).
    pub fn start_read(
        &mut self,
        die: u32,
        channel: usize,
        now: SimTime,
        pages: impl Iterator<Item = u32>,
    ) -> (SimTime, u64) {
        let (n, cell) = self.slowest(pages, FlashTiming::read_ps);
        let cell = self.on_die(die, 0, cell);
        self.counters.reads += n;
        self.counters.read_cell_ps += cell * n;
        let command = self.timing.read_command_ps * n;
        (self.use_channel(channel, now, command) + command, cell)
    }

    /// A multi-plane program of `pages` from `now`: command and address cycles, then each page's
    /// data over `channel` (none for a copyback program, whose data is in the page register),
    /// then the cell program of the slowest page type. `sectors` is what the programs write
    /// (moved alone under `partial_page_transfer`; otherwise every page moves whole). Returns
    /// (channel start, command picoseconds, data picoseconds, cell picoseconds).
    #[allow(clippy::too_many_arguments)]
    pub fn start_program(
        &mut self,
        class: Class,
        die: u32,
        channel: usize,
        now: SimTime,
        pages: impl Iterator<Item = u32>,
        sectors: u64,
    ) -> (SimTime, u64, u64, u64) {
        let (n, cell) = self.slowest(pages, FlashTiming::program_ps);
        let cell = self.on_die(die, 1, cell);
        self.counters.programs += n;
        self.counters.program_cell_ps += cell * n;
        let data = if self.partial_page_transfer {
            self.program_transfer_ps(class) * sectors / self.sectors_per_page
        } else {
            self.program_transfer_ps(class) * n
        };
        let command = self.timing.program_command_ps * n;
        (self.use_channel(channel, now, command + data), command, data, cell)
    }

    /// Channel picoseconds per page a program of `class` moves to the die (0 for copyback).
    pub fn program_transfer_ps(&self, class: Class) -> u64 {
        if self.copyback && class == Class::GcWrite {
            0
        } else {
            self.timing.page_transfer_ps
        }
    }

    /// A multi-plane erase of `blocks` blocks from `now`; returns (when the command is sent, cell
    /// picoseconds).
    pub fn start_erase(&mut self, die: u32, channel: usize, now: SimTime, blocks: u64) -> (SimTime, u64) {
        let cell = self.on_die(die, 2, self.timing.erase_ps);
        self.counters.erases += blocks;
        self.counters.erase_cell_ps += cell * blocks;
        let command = self.timing.erase_command_ps * blocks;
        (self.use_channel(channel, now, command) + command, cell)
    }

    /// `cell_ps` of operation `op` (0 read, 1 program, 2 erase) as `die` runs it: scaled by
    /// its drawn factor under `flash.timing.spread`.
    #[inline]
    fn on_die(&self, die: u32, op: usize, cell_ps: u64) -> u64 {
        match self.die_factors.get(die as usize) {
            Some(f) => (cell_ps as f64 * f[op]).round() as u64,
            None => cell_ps,
        }
    }

    /// Each die's (read, program, erase) factors under `flash.timing.spread` (empty without).
    pub fn die_factors(&self) -> &[[f64; 3]] {
        &self.die_factors
    }

    /// A read's `bytes` leave the page registers over `channel` from `now` (nothing moves for a
    /// copyback read, whose page stays in the register): when the last byte is out.
    pub fn data_out(&mut self, class: Class, channel: usize, now: SimTime, bytes: u64) -> SimTime {
        if bytes == 0 || (self.copyback && class == Class::GcRead) {
            return now;
        }
        let duration = self.timing.data_transfer_ps(bytes);
        self.use_channel(channel, now, duration) + duration
    }

    /// How many pages, and the longest cell time among them.
    #[inline]
    fn slowest(&self, pages: impl Iterator<Item = u32>, cell_ps: impl Fn(&FlashTiming, u32) -> u64) -> (u64, u64) {
        pages.fold((0, 0), |(n, cell), page| (n + 1, cell.max(cell_ps(&self.timing, page))))
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
