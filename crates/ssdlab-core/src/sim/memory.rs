//! The memory a configuration needs, estimated before anything is allocated, and the check
//! against `run.memory_limit` (docs/limits.md).
//!
//! Before this check a device of 16.7 M channels made the scheduler ask for 15 GiB and abort, and
//! a closed-loop flow of queue depth 2^32 - 1 or an open-loop flow of "1e30/s" took more than
//! 4 GiB before the first event (issue 12, F09 and F10). The estimate sums what the model
//! allocates up front or grows into (sizes taken from the types where they are visible here, and
//! from the layout of the others):
//! - flash state: both mapping tables (4 B per logical, translation and physical page, 3 B
//!   with in-plane addresses), the
//!   per-block counters and free lists, and per-plane, per-die and per-channel state;
//! - TSU queues: the scheduler's queue headers and counts per die;
//! - the cached mapping table and the data cache at their configured capacities;
//! - data emulation: the stored pages up to `data.memory_limit` and the host's shadow;
//! - requests that exist at once from the start: a closed-loop flow submits `queue_depth` of
//!   them at time zero, and an open-loop flow whose arrivals come faster than the device can
//!   complete anything has all those of its first millisecond waiting together;
//! - statistics: each flow's latency histograms and its share of the time series at the most
//!   windows it keeps.
//!
//! A backlog that grows during a long overloaded open-loop run is not foreseen here.

use crate::config::{CacheMode, Config, ConfigError, FlowKind, HostInterface, MappingFamily, MemoryLimit};
use crate::flash::Geometry;
use crate::ftl::tsu::Tsu;
use crate::time::PS_PER_MS;

const GIB: f64 = (1u64 << 30) as f64;

/// One part of the estimate, in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryPart {
    pub name: &'static str,
    pub bytes: u64,
}

/// What a configuration is expected to need.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryEstimate {
    pub parts: Vec<MemoryPart>,
}

impl MemoryEstimate {
    pub fn total(&self) -> u64 {
        self.parts.iter().fold(0u64, |sum, p| sum.saturating_add(p.bytes))
    }

    /// "about 15.1 GiB (flash state 12 GiB, TSU queues 3 GiB)": the total and its largest parts.
    pub fn describe(&self) -> String {
        // The parts that matter: at least 1 % of the total.
        let total = self.total();
        let mut parts: Vec<&MemoryPart> =
            self.parts.iter().filter(|p| p.bytes > 0 && p.bytes as u128 * 100 >= total as u128).collect();
        parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
        let named: Vec<String> = parts.iter().take(3).map(|p| format!("{} {}", p.name, gib(p.bytes))).collect();
        format!("about {} ({})", gib(self.total()), named.join(", "))
    }
}

fn gib(bytes: u64) -> String {
    let g = bytes as f64 / GIB;
    if g >= 10.0 {
        format!("{g:.0} GiB")
    } else if g >= 0.1 {
        format!("{g:.1} GiB")
    } else {
        format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

/// Products and sums in `u128`, saturated to `u64` at the end: an estimate never wraps.
fn times(count: u64, each: u64) -> u128 {
    count as u128 * each as u128
}

fn clamp(bytes: u128) -> u64 {
    bytes.min(u64::MAX as u128) as u64
}

/// Bytes of one request in flight: its record and slab slot, its free-list and submission-queue
/// entries, and half again for the growth of the vectors that hold them.
fn request_bytes(config: &Config) -> u64 {
    let record = std::mem::size_of::<super::Request>() as u64 + 4 + 4;
    let data = if config.data.emulate { 16 + 8 } else { 0 };
    (record + data) * 3 / 2
}

/// Requests a flow has at once from the start (see the module comment).
fn initial_requests(config: &Config, flow: &crate::config::FlowConfig) -> u64 {
    if flow.kind == FlowKind::Trace {
        return 1;
    }
    let run_stop = config.run.max_simulated_time.as_ref().map_or(u64::MAX, |d| d.value);
    let stop = flow.duration.as_ref().map_or(u64::MAX, |d| d.value).min(run_stop);
    let cap = flow.requests.unwrap_or(u64::MAX);
    match (flow.queue_depth, &flow.rate) {
        (Some(depth), _) => cap.min(depth as u64),
        (None, Some(rate)) => {
            let window = stop.min(PS_PER_MS) as f64 / crate::time::PS_PER_S as f64;
            let arrivals = (rate.value * window).ceil() + 1.0;
            if arrivals >= u64::MAX as f64 {
                cap
            } else {
                cap.min(arrivals as u64)
            }
        }
        (None, None) => 1,
    }
}

/// The estimate for a validated configuration.
pub fn estimate(config: &Config) -> MemoryEstimate {
    // An Open-Channel device keeps no translation pages: its host maps (`open_channel_path`).
    let device;
    let config = if config.host.interface == HostInterface::OpenChannel && !config.ftl.ideal_mapping {
        device = super::open_channel_path::device_config(config.clone());
        &device
    } else {
        config
    };
    let g = Geometry::counts(config);
    let f = &config.ftl;
    let mut parts = Vec::new();
    let mut part = |name: &'static str, bytes: u128| parts.push(MemoryPart { name, bytes: clamp(bytes) });

    // Flash state. Per block: valid, write-pointer and program-cursor counts (u16), erase count
    // (u32), closing time (u64), state (u8), its free-list entry (u32) and the count of reads in
    // flight to it (u8, `sim::read_pins`; zero pages until read). Per plane: free list and frontiers,
    // GC state, stalled-write queues, the allocation table and the scratch of the checks. Per
    // die: its state. Per channel: two clocks.
    let entry_bytes = if crate::config::mapping::uses_in_plane_addresses(config) { 3 } else { 4 };
    let pages = times(g.logical_pages + g.translation_pages + g.physical_pages, entry_bytes);
    let blocks = times(g.blocks as u64, 2 + 2 + 2 + 4 + 8 + 1 + 4 + 1);
    let plane_each = (std::mem::size_of::<crate::ftl::PlaneGc>() + 40 + 2 * 32 + 4 + 12 + 40) as u64;
    let planes = times(g.planes as u64, plane_each);
    let dies = times(g.dies as u64, std::mem::size_of::<crate::flash::backend::DieState>() as u64);
    let channels = times(g.channels as u64, 16);
    let mut flash = pages + blocks + planes + dies + channels;
    if f.mapping != MappingFamily::Page {
        // Block and hybrid maps: a data block and its log blocks per logical block, and the merge
        // bookkeeping (four u32 per logical block).
        let logical_blocks = g.logical_pages.div_ceil(g.pages_per_block as u64);
        let logs = if f.mapping == MappingFamily::Hybrid { f.log_blocks_per_data_block as u64 + 1 } else { 1 };
        flash += times(logical_blocks, 4 * (logs + 1) + 16);
    }
    if config.host.interface == HostInterface::OpenChannel {
        flash += times(g.blocks as u64, 8); // the chunk table
    }
    part("flash state", flash);
    part("TSU queues", times(g.dies as u64, Tsu::BYTES_PER_DIE));

    // The cached mapping table grows to its capacity (entry, hash slot, LRU links), never beyond
    // the pages it maps; its translation pages keep an epoch each.
    let page_cmt = f.mapping == MappingFamily::Page && !f.ideal_mapping;
    if page_cmt {
        let entries = (f.cmt_capacity.value / crate::config::mapping::entry_bytes(config).0).min(g.logical_pages);
        part("mapping cache", times(entries, 48) + times(g.translation_pages, 4));
    }

    // The data cache grows to its capacity in lines: the line record, its sector masks, its hash
    // slot, and its links in the replacement and dirty lists.
    if config.flows.iter().any(|fl| fl.cache_mode.unwrap_or_default() != CacheMode::Off) {
        let line_bytes = config.cache.line_size.as_ref().map_or(g.page_size_bytes, |s| s.value).max(1);
        let pages_per_line = (line_bytes / g.page_size_bytes.max(1)).max(1);
        let lines = (config.cache.capacity.value / line_bytes).min(g.logical_pages.div_ceil(pages_per_line));
        part("data cache", times(lines, 104 + 8 * pages_per_line));
    }

    // Data emulation: the pages kept in memory (the rest spill to a file), their index, and the
    // host's shadow (a version and a clock per logical page).
    if config.data.emulate {
        let logical_bytes = times(g.logical_pages, g.page_size_bytes) as u64;
        let stored = config.data.memory_limit.value.min(logical_bytes);
        let stored_pages = stored / g.page_size_bytes.max(1);
        part("data emulation", stored as u128 + times(stored_pages, 48) + times(g.logical_pages, 12));
    }

    let requests: u128 = config.flows.iter().map(|fl| times(initial_requests(config, fl), request_bytes(config))).sum();
    part("requests", requests);

    // Statistics per flow: two latency histograms (3 significant digits up to seconds) and the
    // time series' read and write windows at the most windows it keeps.
    let windows = match &config.run.time_series_window {
        Some(_) => crate::stats::timeseries::MAX_FIXED_WINDOWS,
        None => crate::stats::timeseries::ADAPTIVE_WINDOWS,
    } as u64;
    let series = windows * 2 * (crate::stats::timeseries::BUCKETS as u64 * 4 + 48);
    part("statistics", times(config.flows.len() as u64, 2 * 48 * 1024 + series));
    MemoryEstimate { parts }
}

/// Refuses a configuration whose estimate exceeds `run.memory_limit` (or the default limit).
pub fn check(config: &Config) -> Result<MemoryEstimate, ConfigError> {
    let estimate = estimate(config);
    let (limit, source) = match &config.run.memory_limit {
        Some(MemoryLimit::Unlimited) => return Ok(estimate),
        Some(MemoryLimit::Bytes(size)) => (size.value, format!("run.memory_limit = \"{}\"", size.text)),
        None => {
            let (bytes, why) = crate::config::default_memory_limit();
            (bytes, format!("run.memory_limit = {} ({why})", gib(bytes)))
        }
    };
    if estimate.total() > limit {
        return Err(ConfigError::new(
            "run.memory_limit",
            format!(
                "the configuration needs {}, above {source}; raise run.memory_limit (a size, or \"unlimited\") to run it anyway, if the machine has the memory",
                estimate.describe()
            ),
        ));
    }
    Ok(estimate)
}
