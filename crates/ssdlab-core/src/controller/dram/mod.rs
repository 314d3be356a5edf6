//! The controller's internal DRAM, shared by the data cache, the cached mapping table (CMT) and
//! the flash data buffers.
//!
//! Two timing models (`dram.model`): `serial`, MQSim's (one DRAM, accesses in arrival order,
//! each opening its rows; only the data cache uses it, as in MQSim), and `banked`
//! ([`banked::BankedDram`]: channels, ranks, banks with row buffers, refresh, power-down and
//! self-refresh), which the CMT and the data buffers use as well. The enum is matched per access
//! (no dynamic dispatch); everything is allocated when the device is built.
//!
//! Addresses: the DRAM holds the data cache from address 0 (a page at its logical address modulo
//! the cache size, so sequential pages are sequential in DRAM), then the CMT (an entry at its
//! logical page times 8 bytes, modulo the CMT size), then the data buffers (one page-sized slot
//! per flash plane).

pub mod banked;
mod energy;

use serde::{Deserialize, Serialize};

pub use banked::{BankCounts, BankedDram, Residency};
pub use energy::DramJoules;

use crate::cache::dram::Dram as SerialDram;
use crate::config::{Config, DramModel, PagePolicy};
use crate::ftl::cmt::ENTRY_BYTES;
use crate::time::SimTime;

/// Who the DRAM serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DramUser {
    /// Data cache lines (cached writes, read hits).
    Cache = 0,
    /// Cached mapping table lookups.
    Cmt = 1,
    /// Page data between the flash channels and the host link.
    Buffer = 2,
}

// One per simulation, built once: the size difference costs nothing, a box an indirection.
#[allow(clippy::large_enum_variant)]
enum Model {
    Serial(SerialDram),
    Banked(BankedDram),
}

pub struct Dram {
    model: Model,
    accesses: [u64; 3],
    bytes: [u64; 3],
    reads: u64,
    writes: u64,
    cache_bytes: u64,
    cmt_base: u64,
    cmt_bytes: u64,
    buffer_base: u64,
    buffer_slots: u64,
    page_bytes: u64,
    page_policy: PagePolicy,
}

impl Dram {
    /// The DRAM of `config`; `buffer_slots` page-sized data buffers (one per flash plane).
    pub fn new(config: &Config, buffer_slots: u64) -> Self {
        let model = match config.dram.model {
            DramModel::Serial => {
                Model::Serial(SerialDram::new(&config.cache, config.dram.serial_access_time.unwrap_or_default()))
            }
            DramModel::Banked => Model::Banked(BankedDram::new(config)),
        };
        let cache_bytes = config.cache.capacity.value.max(1);
        let cmt_bytes = config.ftl.cmt_capacity.value.max(ENTRY_BYTES);
        Self {
            model,
            accesses: [0; 3],
            bytes: [0; 3],
            reads: 0,
            writes: 0,
            cache_bytes,
            cmt_base: cache_bytes,
            cmt_bytes,
            buffer_base: cache_bytes + cmt_bytes,
            buffer_slots: buffer_slots.max(1),
            page_bytes: config.flash.page_size.value,
            page_policy: config.dram.page_policy,
        }
    }

    /// Whether the detailed model is on: then the CMT and the data buffers use the DRAM too.
    #[inline]
    pub fn detailed(&self) -> bool {
        matches!(self.model, Model::Banked(_))
    }

    /// Queues an access of `bytes` at `address` at `now`; returns when it is done.
    #[inline]
    pub fn access(&mut self, now: SimTime, user: DramUser, address: u64, bytes: u64, is_write: bool) -> SimTime {
        self.accesses[user as usize] += 1;
        self.bytes[user as usize] += bytes;
        if is_write {
            self.writes += 1;
        } else {
            self.reads += 1;
        }
        match &mut self.model {
            Model::Serial(d) => d.access(now, bytes),
            Model::Banked(d) => d.access(now, address, bytes, is_write),
        }
    }

    /// Where the data cache keeps the byte at logical byte address `byte`.
    #[inline]
    pub fn cache_address(&self, byte: u64) -> u64 {
        byte % self.cache_bytes
    }

    /// Where the CMT keeps the entry of logical page `lpa`.
    #[inline]
    pub fn cmt_address(&self, lpa: u32) -> u64 {
        self.cmt_base + (lpa as u64 * ENTRY_BYTES) % self.cmt_bytes
    }

    /// Where data buffer `slot` (taken modulo the slots) is.
    #[inline]
    pub fn buffer_address(&self, slot: u64) -> u64 {
        self.buffer_base + (slot % self.buffer_slots) * self.page_bytes
    }

    /// Picoseconds the DRAM was busy (serial: the one DRAM; banked: data on the buses, averaged
    /// over the channels), for `device.cache.dram_utilisation` and the serial energy model.
    pub fn busy_ps(&self) -> u64 {
        match &self.model {
            Model::Serial(d) => d.busy_ps,
            Model::Banked(d) => d.bus_busy_ps() / d.channels() as u64,
        }
    }

    pub fn banked(&self) -> Option<&BankedDram> {
        match &self.model {
            Model::Serial(_) => None,
            Model::Banked(d) => Some(d),
        }
    }

    /// results.json `dram` (banked model only), for a run that ended at `end`.
    pub fn results(&self, end: SimTime) -> Option<DramResults> {
        let d = self.banked()?;
        let c = d.counts;
        let pieces = c.row_hits + c.row_misses + c.row_conflicts;
        let residency = d.residency(end);
        let total = residency.total_ps().max(1) as f64;
        let users = |v: [u64; 3]| DramUsers { cache: v[0], cmt: v[1], buffer: v[2] };
        Some(DramResults {
            model: "banked".to_string(),
            page_policy: match self.page_policy {
                PagePolicy::OpenPage => "open-page",
                PagePolicy::ClosePage => "close-page",
            }
            .to_string(),
            accesses: users(self.accesses),
            bytes: users(self.bytes),
            reads: self.reads,
            writes: self.writes,
            row_hits: c.row_hits,
            row_misses: c.row_misses,
            row_conflicts: c.row_conflicts,
            row_hit_rate: if pieces == 0 { 0.0 } else { c.row_hits as f64 / pieces as f64 },
            activates: c.activates,
            refreshes: d.refreshes(end),
            power_down_exits: c.power_down_exits,
            self_refresh_exits: c.self_refresh_exits,
            bus_utilisation: d.bus_busy_ps() as f64 / (d.channels() as f64 * end.max(1) as f64),
            state_residency: StateResidency {
                active: residency.active_ps as f64 / total,
                active_standby: residency.active_standby_ps as f64 / total,
                precharge_standby: residency.precharge_standby_ps as f64 / total,
                power_down: residency.power_down_ps as f64 / total,
                self_refresh: residency.self_refresh_ps as f64 / total,
            },
        })
    }
}

/// One count per DRAM user.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DramUsers {
    pub cache: u64,
    pub cmt: u64,
    pub buffer: u64,
}

/// Fraction of the ranks' time in each state (sums to 1).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StateResidency {
    /// An access in progress (activate, column commands, data, precharge).
    pub active: f64,
    /// Idle with a row open.
    pub active_standby: f64,
    /// Idle with every bank precharged.
    pub precharge_standby: f64,
    /// Precharge power-down.
    pub power_down: f64,
    /// Self-refresh.
    pub self_refresh: f64,
}

/// results.json `dram` (only with `dram.model = "banked"`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DramResults {
    pub model: String,
    pub page_policy: String,
    /// Accesses and bytes by user: data cache, CMT lookups, data buffers.
    pub accesses: DramUsers,
    pub bytes: DramUsers,
    pub reads: u64,
    pub writes: u64,
    /// Per bank-and-row piece of an access: the row was open (hit), no row was open (miss), or
    /// another row was (conflict: precharge first).
    pub row_hits: u64,
    pub row_misses: u64,
    pub row_conflicts: u64,
    pub row_hit_rate: f64,
    pub activates: u64,
    /// External refresh commands, all ranks (none while a rank self-refreshes).
    pub refreshes: u64,
    pub power_down_exits: u64,
    pub self_refresh_exits: u64,
    /// Fraction of the run the data buses carried data, mean over channels.
    pub bus_utilisation: f64,
    pub state_residency: StateResidency,
}
