//! `[[flows]]`: the workload, one entry per I/O flow (synthetic generator or trace replay).

use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

use super::{Duration, Priority, Rate, Size};

/// One I/O flow: an application or tenant with its own submission and completion queue.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Name in the results (default `flow-<i>`).
    pub name: Option<String>,
    #[serde(default)]
    pub kind: FlowKind,
    /// Fraction of requests that are reads (synthetic flows).
    pub read_fraction: Option<f64>,
    /// Request size (synthetic flows, default 4KiB).
    pub request_size: Option<RequestSize>,
    /// Address pattern (synthetic flows, default uniform).
    pub address: Option<AddressPattern>,
    /// Fraction of the working set that is hot (address = "hotcold").
    pub hot_fraction: Option<f64>,
    /// Fraction of requests that go to the hot region (address = "hotcold").
    pub hot_traffic: Option<f64>,
    /// Fraction of requests placed by the address pattern (uniform or hotcold); the others
    /// continue sequentially after the previous request, as fio's `percentage_random` (default 1:
    /// all random; 0: sequential). Sweeps a flow from sequential to random, as the MQSim paper's
    /// CMT study sweeps Flow-2's randomness.
    pub random_fraction: Option<f64>,
    /// The namespace the flow's requests go to (`[[namespaces]]`; default the first). Its
    /// addresses start at the namespace's sector 0.
    pub namespace: Option<String>,
    /// Zones a zoned writer (`address = "zoned"`) fills at once, in turn (default 1).
    pub open_zones: Option<u32>,
    /// A zoned writer writes by Zone Append (the device picks the place) instead of writes at
    /// the write pointer (default false).
    pub zone_append: Option<bool>,
    /// A zoned writer that is an LSM-tree store placing its files in zones by level, as ZenFS
    /// places RocksDB's (`[flows.lsm]`; docs/zns.md). Needs `address = "zoned"`.
    pub lsm: Option<LsmConfig>,
    /// Start addresses are multiples of this size. Default: the request size (fio's default),
    /// or one sector for a normally distributed size.
    pub alignment: Option<Size>,
    /// Fraction of the logical space the flow addresses, starting at `working_set_start`.
    pub working_set: Option<f64>,
    /// Where the working set starts, as a fraction of the logical space.
    pub working_set_start: Option<f64>,
    /// Closed loop: keep this many requests outstanding.
    pub queue_depth: Option<u32>,
    /// Open loop: mean arrival rate, exponential inter-arrival times.
    pub rate: Option<Rate>,
    /// Stop after this many requests.
    pub requests: Option<u64>,
    /// Stop issuing at this simulated time.
    pub duration: Option<Duration>,
    /// Trace file (trace flows), relative to the config file.
    pub path: Option<String>,
    /// Trace file format (trace flows); default `auto`: sniffed from the first lines.
    pub format: Option<TraceFormat>,
    /// Multiply trace inter-arrival times by this factor (0.5 replays twice as fast).
    pub time_scale: Option<f64>,
    /// Replay only this device or volume of the trace (its DiskNumber, ASU, device_id, VolumeID,
    /// `maj,min` or file name, depending on the format).
    pub device: Option<TraceDevice>,
    /// Replay the trace from this trace time on (time after the trace's first record).
    pub start: Option<Duration>,
    /// Stop the flow at the first record at or past this trace time.
    pub end: Option<Duration>,
    /// Which requests of the trace to replay (default all).
    pub ops: Option<TraceOps>,
    /// Traces without timestamps (fio iolog version 2): time between consecutive requests
    /// (default 0: all are due at once and the submission queue paces them).
    pub arrival_gap: Option<Duration>,
    /// blkparse traces: replay queued (`Q`) or dispatched (`D`, default) events.
    pub blkparse_event: Option<BlkparseEvent>,
    /// Entries of this flow's submission queue (default: host.sq_depth).
    pub sq_depth: Option<u32>,
    /// NVMe priority class of the flow's queue (default medium).
    pub priority: Option<Priority>,
    /// FDP: the reclaim unit handle the flow's writes carry (`[ftl.fdp]`; 0 to
    /// `reclaim_unit_handles - 1`, default 0). Data of different handles never shares a block.
    pub placement_handle: Option<u32>,
    /// How the flow uses the data cache (default off).
    pub cache_mode: Option<CacheMode>,
    /// Seed of this flow's random stream. By default it is derived from the run's seed and the
    /// flow's position; setting it keeps the flow's requests the same wherever it stands (the
    /// effective seed is reported in the results, so a run can be repeated flow by flow).
    pub seed: Option<u64>,
    /// Resource partitioning: the channel, chip (way within a channel), die (within a chip) and
    /// plane (within a die) ids the flow's writes may use (default: all).
    pub channels: Option<Vec<u32>>,
    /// Chip (way) ids the flow's writes may use.
    pub chips: Option<Vec<u32>>,
    /// Die ids the flow's writes may use.
    pub dies: Option<Vec<u32>>,
    /// Plane ids the flow's writes may use.
    pub planes: Option<Vec<u32>>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FlowKind {
    #[default]
    Synthetic,
    Trace,
    /// A submission queue that an outside host fills through the stepping API (`ssdlab.Device`,
    /// the C ABI; docs/embedding.md): the device generates nothing for it, so a batch run
    /// (`ssdlab run`) refuses it.
    Host,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AddressPattern {
    Uniform,
    Hotcold,
    Sequential,
    /// Zoned namespaces (`[zns]`): write zones in order from their start, `open_zones` at a
    /// time, resetting the zone filled longest ago when no empty one is left; reads go to
    /// written data.
    Zoned,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// Tell the format from the file's first lines.
    Auto,
    /// MQSim ASCII: `arrival_ns device start_sector size_sectors type(1 = read, 0 = write)`.
    Mqsim,
    /// MSR Cambridge / SNIA CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// UMass / SPC: `ASU,LBA,Size,Opcode,Timestamp`.
    #[serde(alias = "umass")]
    Spc,
    /// blkparse's default text output (Q or D events).
    Blkparse,
    /// fio iolog, version 2 or 3.
    Fio,
    /// Alibaba 2020 block traces: `device_id,opcode,offset,length,timestamp`.
    Alibaba,
    /// Tencent CBS: `Timestamp,Offset,Size,IOType,VolumeID`.
    Tencent,
}

/// A trace's device or volume id: a number (`device = 3`) or a name (`device = "8,0"`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(untagged)]
pub enum TraceDevice {
    Number(u64),
    Name(String),
}

/// Which requests of a trace are replayed.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TraceOps {
    All,
    Read,
    Write,
}

/// The blkparse action a trace flow replays.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
pub enum BlkparseEvent {
    /// `Q`: requests as the application queued them, before merging.
    #[serde(rename = "Q", alias = "queue")]
    Queue,
    /// `D`: requests as dispatched to the device, after merging and splitting.
    #[serde(rename = "D", alias = "dispatch")]
    Dispatch,
}

/// A request size: fixed (`"4KiB"`, `"8sectors"`) or normal `{ mean = "16KiB", stdev = "4KiB" }`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RequestSize {
    Fixed(Size),
    Normal { mean: Size, stdev: Size },
}

impl<'de> Deserialize<'de> for RequestSize {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RequestSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size like \"4KiB\" or a table { mean = \"16KiB\", stdev = \"4KiB\" }")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Size::parse(v).map(RequestSize::Fixed).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Err(E::custom(format!("expected a size string like \"4KiB\", got the bare number {v} (add a unit)")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                self.visit_i64(v as i64)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut mean, mut stdev) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "mean" => mean = Some(map.next_value::<Size>()?),
                        "stdev" => stdev = Some(map.next_value::<Size>()?),
                        other => {
                            return Err(de::Error::custom(format!(
                                "unknown field `{other}`, expected `mean` or `stdev`"
                            )))
                        }
                    }
                }
                match (mean, stdev) {
                    (Some(mean), Some(stdev)) => Ok(RequestSize::Normal { mean, stdev }),
                    _ => Err(de::Error::custom("a normal request size needs both `mean` and `stdev`")),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// `[flows.lsm]`: the LSM-tree store of a zoned writer (`workload::lsm`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LsmConfig {
    /// Levels of the tree, level 0 included (default 4, 2 to 16). Each writes into its own open
    /// zone.
    pub levels: u32,
    /// Files of level 0 before it compacts into level 1 (RocksDB's
    /// `level0_file_num_compaction_trigger`; default 4).
    pub l0_files: u32,
    /// Size ratio of a level to the one above it (RocksDB's `max_bytes_for_level_multiplier`;
    /// default 4; 10 in RocksDB, for drives with more zones than a simulation usually has).
    pub fanout: u32,
    /// Size of a file (default a quarter of the zone capacity): whole flash pages, at most the
    /// zone capacity. Zones hold a whole number of files; one with capacity left over is
    /// finished once its last file is written.
    pub file_size: Option<Size>,
}

impl Default for LsmConfig {
    fn default() -> Self {
        Self { levels: 4, l0_files: 4, fanout: 4, file_size: None }
    }
}

/// What a flow keeps in the data cache.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    /// Writes complete in DRAM and reach flash on eviction; reads are served from cached data.
    Write,
    /// Data read from flash is kept for later reads; writes go to flash.
    Read,
    /// Both: writes complete in DRAM and data read from flash is kept.
    WriteRead,
    /// The flow bypasses the cache.
    #[default]
    Off,
}

impl CacheMode {
    pub fn caches_writes(self) -> bool {
        matches!(self, CacheMode::Write | CacheMode::WriteRead)
    }
    pub fn caches_reads(self) -> bool {
        matches!(self, CacheMode::Read | CacheMode::WriteRead)
    }
}
