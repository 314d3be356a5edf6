//! The results document (`results.json`, schema `ssdlab.results/1`). Later tools read these
//! names: fields may be added, never renamed.

use serde::{Deserialize, Serialize};

use super::breakdown::StepMeans;
use super::records::RequestRecordsSummary;
use super::timeseries::TimeSeriesResults;

pub const SCHEMA: &str = "ssdlab.results/1";

/// Response times of one op, in microseconds. Every figure is undefined (NaN here, null in
/// results.json) when the op never ran: a latency of 0 would claim an infinitely fast device
/// (issue 19, item 3). `min` and `stdev` sit beside the percentiles as in fio's output.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    #[serde(default = "undefined::nan", deserialize_with = "undefined::nan_if_null")]
    pub min: f64,
    #[serde(deserialize_with = "undefined::nan_if_null")]
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator, as fio's); 0 for one request.
    #[serde(default = "undefined::nan", deserialize_with = "undefined::nan_if_null")]
    pub stdev: f64,
    #[serde(deserialize_with = "undefined::nan_if_null")]
    pub p50: f64,
    #[serde(deserialize_with = "undefined::nan_if_null")]
    pub p90: f64,
    #[serde(deserialize_with = "undefined::nan_if_null")]
    pub p99: f64,
    #[serde(deserialize_with = "undefined::nan_if_null")]
    pub p99_9: f64,
    #[serde(deserialize_with = "undefined::nan_if_null")]
    pub p99_99: f64,
    #[serde(deserialize_with = "undefined::nan_if_null")]
    pub max: f64,
    /// The percentiles `run.percentiles` adds, named as the fixed ones are (`p95`, `p99_5`,
    /// `p99_999`: the percent with `_` for the decimal point), null when the op never ran.
    #[serde(flatten)]
    pub extra: std::collections::BTreeMap<String, Option<f64>>,
}

/// Undefined figures (an op that never ran, a ratio over nothing) are NaN in Rust and null in
/// results.json (serde_json writes a non-finite float as null); reading null back gives NaN.
pub(crate) mod undefined {
    use serde::{Deserialize, Deserializer};

    pub fn nan() -> f64 {
        f64::NAN
    }

    pub fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OpSummary {
    pub count: u64,
    pub iops: f64,
    pub bandwidth_mib_s: f64,
    pub bytes: u64,
    pub latency_us: LatencySummary,
    /// Mean microseconds per step of the request path; the steps add up to `latency_us.mean`.
    pub latency_breakdown_us: StepMeans,
    /// The latency distribution at fixed quantiles (empty when there were no requests).
    #[serde(default)]
    pub latency_cdf: LatencyCdf,
}

/// Points of a cumulative latency distribution: `fraction[i]` of the requests took at most
/// `latency_us[i]` (HDR histogram, 3 significant digits; the last point is the exact maximum).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencyCdf {
    pub latency_us: Vec<f64>,
    pub fraction: Vec<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CmtSummary {
    pub lookups: u64,
    pub hits: u64,
    /// Always lookups - hits.
    pub misses: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FlowCacheSummary {
    pub read_lookups: u64,
    /// Page reads served by the cache: all sectors cached, or the page being read ahead.
    pub read_hits: u64,
    /// Always read_lookups - read_hits.
    #[serde(default)]
    pub read_misses: u64,
    /// Pages the flow's read-ahead read from flash, and prefetched pages its reads used.
    #[serde(default)]
    pub prefetches_issued: u64,
    #[serde(default)]
    pub prefetches_used: u64,
    /// Page reads that found their page still being read ahead and waited for it.
    #[serde(default)]
    pub prefetch_waits: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CacheSummary {
    /// Dirty pages written to flash: to make room, for a host flush, in the background (with
    /// `cache.destage = "background"`), or (with `cache.destage = "cold-at-once"`) at once
    /// because they were cold.
    pub flushes: u64,
    /// Of `flushes`, the cold pages written through at once (`cache.destage = "cold-at-once"`).
    #[serde(default)]
    pub written_through: u64,
    /// Of `flushes`, the pages written back in the background (`cache.destage = "background"`):
    /// above the high dirty watermark, or while the host was idle.
    #[serde(default)]
    pub destaged: u64,
    /// Of `destaged`, the pages written while the host was idle.
    #[serde(default)]
    pub destaged_when_idle: u64,
    /// Lines holding data not yet on flash when the run ended.
    #[serde(default)]
    pub dirty_lines_at_end: u64,
    /// Cached writes that had to wait for space.
    pub writes_waited: u64,
    /// Fraction of the simulated time the DRAM was busy.
    pub dram_utilisation: f64,
    /// Page reads of all flows that looked in the cache, were served by it, and were not.
    #[serde(default)]
    pub read_lookups: u64,
    #[serde(default)]
    pub read_hits: u64,
    #[serde(default)]
    pub read_misses: u64,
    /// Lines that left to make room (clean ones dropped, dirty ones flushed).
    #[serde(default)]
    pub evictions: u64,
    /// Sets per partition and lines per set (1 set when fully associative).
    #[serde(default)]
    pub sets: u32,
    #[serde(default)]
    pub ways: u32,
    /// Pages read ahead; those a host read used; those never read (evicted unread, or unread
    /// at the end): issued = used + wasted.
    #[serde(default)]
    pub prefetches_issued: u64,
    #[serde(default)]
    pub prefetches_used: u64,
    #[serde(default)]
    pub prefetches_wasted: u64,
    /// Page reads that waited for a read-ahead in flight instead of reading flash themselves.
    #[serde(default)]
    pub prefetch_waits: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GcSummary {
    pub blocks_erased: u64,
    pub pages_moved: u64,
    /// Flash page programs (user + GC + translation pages) per user page program; undefined
    /// (null) when no user page was programmed.
    #[serde(deserialize_with = "undefined::nan_if_null")]
    pub write_amplification: f64,
    pub victims_selected: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FlashSummary {
    pub reads: u64,
    pub programs: u64,
    pub erases: u64,
    /// Commands that covered more than one plane.
    pub multiplane_commands: u64,
    /// Programs and erases suspended for a read.
    pub suspensions: u64,
    /// Reads of logical pages that were never written (timed as flash reads; see the README).
    pub unmapped_reads: u64,
    /// Partial-page writes that first read the rest of the page.
    pub read_modify_writes: u64,
    /// Translation-page reads after CMT misses, and translation-page programs (write-backs).
    pub translation_page_reads: u64,
    pub translation_page_writes: u64,
    pub max_erase_count: u32,
    /// Fraction of the simulated interval each channel spent transferring.
    pub channel_utilisation: Vec<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WearSummary {
    pub min_erase_count: u32,
    pub max_erase_count: u32,
    /// Blocks retired at the P/E cycle limit.
    pub retired_blocks: u32,
    /// Victims static wear leveling chose (cold data moved off little-worn blocks).
    pub static_wear_leveling_migrations: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DeviceResults {
    pub reads: OpSummary,
    pub writes: OpSummary,
    pub iops: f64,
    pub bandwidth_mib_s: f64,
    pub gc: GcSummary,
    pub flash: FlashSummary,
    pub wear: WearSummary,
    pub cache: CacheSummary,
    pub logical_capacity_bytes: u64,
    pub physical_capacity_bytes: u64,
    /// The longest stretch of simulated time in which the device held requests and none
    /// completed: where the host sees the drive stall (GC that does not yield shows here).
    #[serde(default)]
    pub longest_completion_gap_us: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FlowResults {
    pub name: String,
    /// Seed of the flow's random stream (`flows[].seed`, or derived from the run's seed).
    pub seed: u64,
    pub iops: f64,
    pub bandwidth_mib_s: f64,
    pub reads: OpSummary,
    pub writes: OpSummary,
    /// Mean microseconds per step over all the flow's requests.
    pub latency_breakdown_us: StepMeans,
    /// Fraction of this flow's mapping lookups that hit the cached mapping table (1 when ideal;
    /// null when the flow made no lookup).
    #[serde(deserialize_with = "undefined::nan_if_null")]
    pub cmt_hit_rate: f64,
    pub cmt: CmtSummary,
    /// Fraction of this flow's page reads the data cache served (null when none looked there).
    #[serde(deserialize_with = "undefined::nan_if_null")]
    pub cache_hit_rate: f64,
    pub cache: FlowCacheSummary,
    /// Requests the flow issued (all of them complete before the run ends).
    pub requests: u64,
    /// Simulated seconds from the flow's first arrival to its last completion.
    pub interval_seconds: f64,
    /// Requests the device refused, by status name (`zone_invalid_write`, `zone_is_full`, ...;
    /// [`crate::device::Status::name`]): completed at once without moving data, so not in
    /// `reads` or `writes`. Left out of results.json when the device refused nothing.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub refused: std::collections::BTreeMap<String, u64>,
    /// An LSM store's flushes, compactions and zone use (only for a flow with `[flows.lsm]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lsm: Option<crate::workload::lsm::LsmSummary>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Results {
    pub schema: String,
    pub version: String,
    pub seed: u64,
    pub simulated_seconds: f64,
    /// Wall time of the whole run: building the device (`setup_wall_seconds`) and simulating.
    pub wall_seconds: f64,
    pub setup_wall_seconds: f64,
    pub events: u64,
    pub device: DeviceResults,
    pub flows: Vec<FlowResults>,
    pub warnings: Vec<String>,
    /// The configuration the run used, as given.
    pub config: serde_json::Value,
    /// The state the device started from, and the time spent reaching it.
    #[serde(default)]
    pub precondition: crate::precondition::PreconditionSummary,
    /// Energy per component and power over time (only with `power.enabled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::power::EnergySummary>,
    /// NVMe autonomous power state transitions: time in each non-operational state and the
    /// wake-ups' waits (only with `power.apst.enabled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_states: Option<crate::sim::power_states::PowerStatesSummary>,
    /// Core utilisation and instructions executed (only with `firmware.enabled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<crate::firmware::FirmwareSummary>,
    /// The banked DRAM's statistics (only with `dram.model = "banked"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram: Option<crate::dram::DramResults>,
    /// What the block, hybrid or super-page mapping family did (absent with page mapping).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping: Option<super::mapping::MappingSummary>,
    /// Completions, latency and GC activity per window of simulated time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_series: Option<TimeSeriesResults>,
    /// Read checks and stored pages (only with `data.emulate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<crate::data::DataSummary>,
    /// Where the per-request records went (only with `run.request_records`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_records: Option<RequestRecordsSummary>,
    /// The host interface and what crossed its link (docs/host-interfaces.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_interface: Option<crate::host::HostInterfaceSummary>,
    /// Open-Channel 2.0 only: chunk states, resets, rule checks and the host FTL's work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_channel: Option<crate::host::ocssd::OpenChannelSummary>,
    /// Read retries, uncorrectable reads and read reclaim (only with `[flash.reliability]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reliability: Option<crate::flash::reliability::ReliabilitySummary>,
    /// Flexible Data Placement: the FDP statistics log and each handle's host and media bytes
    /// (only with `[ftl.fdp]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdp: Option<crate::ftl::fdp::FdpSummary>,
    /// The SLC write cache: where host bytes went, what folding moved (only with
    /// `[flash.slc_cache]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_cache: Option<crate::ftl::SlcCacheSummary>,
    /// Zoned namespace: zone states, resets, finishes, refused commands and write
    /// amplification (only with `[zns]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zns: Option<crate::ftl::zones::ZnsSummary>,
    /// Each namespace: its command set, size, flows and their bytes (only with
    /// `[[namespaces]]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Vec<crate::config::namespaces::NamespaceSummary>>,
    /// Whose behaviour the run followed where simulators differ (`compat`, and each key it
    /// decides, as they ran; docs/fidelity.md). Last, as it came last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<crate::config::ModelSummary>,
}
