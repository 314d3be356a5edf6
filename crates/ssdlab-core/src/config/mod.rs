//! The one configuration schema. Every section's defaults describe MQSim's default device
//! (`ssdconfig.xml`), so that a run with an empty `[flash]` compares side by side with MQSim.
//!
//! Reading goes through `serde_path_to_error`, so a type error or an unknown key names the full
//! field path (`flash.timing.read`), and [`validate`] then checks every value against the model's
//! limits before anything is allocated.

pub mod apst;
mod cache_org;
mod compat;
mod data;
mod dram;
mod fdp;
mod finite;
pub mod firmware;
pub mod flash;
mod flin;
mod flow;
pub mod geometry;
mod host_ocssd;
mod host_ufs;
mod limits;
pub mod mapping;
mod memory;
pub mod mqsim;
pub mod namespaces;
mod power;
mod precondition;
mod records;
mod reliability;
mod schema;
mod slc_cache;
mod strict;
mod units;
mod validate;
mod wording;
mod zns;

pub use cache_org::{CacheOrganisation, CacheShape, Replacement};
pub use compat::{Compat, ModelSummary};
pub use data::DataConfig;
pub use dram::{DramConfig, DramModel, PagePolicy, SerialAccessTime};
pub use fdp::FdpConfig;
pub use flash::{
    CellTechnology, ChannelArbitration, DieCommands, FlashConfig, PageTypeLatency, PageTypeLayout, Suspension,
    TimingConfig,
};
pub use flin::FlinConfig;
pub use flow::{
    AddressPattern, BlkparseEvent, CacheMode, FlowConfig, FlowKind, LsmConfig, RequestSize, TraceDevice, TraceFormat,
    TraceOps,
};
pub use host_ocssd::{GcCopy, HostPlacement, OcVersion, OpenChannelConfig};
pub use host_ufs::{RateSeries, UfsConfig, UPIU_HEADER_BYTES};
pub use mapping::{family_name, MapAddresses, MappingFamily, SuperPageUpdate, DEFAULT_LOG_BLOCKS_PER_DATA_BLOCK};
pub use memory::{default_limit as default_memory_limit, MemoryLimit};
pub use namespaces::{CommandSet, NamespaceConfig, NamespaceLayout};
pub use power::PowerConfig;
pub use precondition::{FillLayout, PreconditionConfig, PreconditionMode, DEFAULT_DRIVE_WRITES};
pub use records::RequestRecords;
pub use reliability::ReliabilityConfig;
pub use schema::json_schema;
pub use slc_cache::{SlcCacheConfig, SlcCacheMode};
pub use units::{Bandwidth, Duration, Frequency, Rate, Size, TransferRate};
pub use validate::validate;
pub use zns::{ZnsConfig, ZoneLayout, MAX_ACTIVE_ZONES};

use schemars::JsonSchema;

use serde::{Deserialize, Serialize};

/// A configuration value that was rejected, with the path of the field that holds it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct ConfigError {
    pub path: String,
    pub reason: String,
}

impl ConfigError {
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { path: path.into(), reason: reason.into() }
    }
}

/// The whole simulation: device, workload and run options.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Seed of every random stream; the same config and seed give the same results.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Whose behaviour the model follows where simulators and drives differ: `default`
    /// (ssdlab's) or `mqsim` (MQSim's, to compare side by side). Each difference is a key of its
    /// own as well (`flash.die_commands`, `flash.partial_page_transfer`,
    /// `flash.channel_arbitration`, `ftl.translation_pages_at_start`, `ftl.translation_write_back`,
    /// `ftl.reads_map_unwritten_pages`, `ftl.mapping_entry_sizes`,
    /// `controller.translation_reads_first`, `controller.suspend_for_reads`, `cache.destage`,
    /// `dram.serial_access_time`);
    /// `compat` fills the ones left unset. See docs/fidelity.md.
    #[serde(default)]
    pub compat: Compat,
    #[serde(default)]
    pub host: HostConfig,
    #[serde(default)]
    pub controller: ControllerConfig,
    #[serde(default)]
    pub cache: CacheConfig,
    #[serde(default)]
    pub ftl: FtlConfig,
    #[serde(default)]
    pub flash: FlashConfig,
    #[serde(default)]
    pub precondition: PreconditionConfig,
    #[serde(default)]
    pub run: RunConfig,
    /// Energy and power model (off by default).
    #[serde(default)]
    pub power: PowerConfig,
    /// Firmware on the controller's embedded cores (off by default).
    #[serde(default)]
    pub firmware: firmware::FirmwareConfig,
    /// The controller's internal DRAM (MQSim's serial model by default).
    #[serde(default)]
    pub dram: DramConfig,
    /// Data transfer emulation: stored bytes and read checks (off by default).
    #[serde(default)]
    pub data: DataConfig,
    /// A zoned namespace (NVMe ZNS 1.1; `[zns]`, default none: a conventional namespace). See
    /// docs/zns.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zns: Option<ZnsConfig>,
    /// Several namespaces sharing the device (`[[namespaces]]`, default none: one namespace
    /// of the whole logical space). See docs/namespaces.md.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<NamespaceConfig>,
    #[serde(default)]
    pub flows: Vec<FlowConfig>,
}

fn default_seed() -> u64 {
    1
}

impl Config {
    /// Reads a TOML document; errors name the field path (or the TOML line for syntax errors).
    pub fn from_toml_str(text: &str) -> Result<Self, ConfigError> {
        let config = Self::read_toml(text)?;
        validate(&config)?;
        Ok(config)
    }

    /// A device's config for the stepping API (`device::Device`): as [`Self::from_toml_str`],
    /// but a config without flows gets one host queue named `host`.
    pub fn device_from_toml_str(text: &str) -> Result<Self, ConfigError> {
        let mut config = Self::read_toml(text)?;
        config.add_default_host_queue();
        validate(&config)?;
        Ok(config)
    }

    /// The JSON form of [`Self::device_from_toml_str`].
    pub fn device_from_json_str(text: &str) -> Result<Self, ConfigError> {
        let mut config = Self::read_json(text)?;
        config.add_default_host_queue();
        validate(&config)?;
        Ok(config)
    }

    /// The live device's config from JSON: unless it defines `kind = "host"` flows, it gets
    /// `connections` of them (`conn-0`, `conn-1`, ...: one per client connection); its other
    /// flows run beside them.
    pub fn served_from_json_str(text: &str, connections: usize) -> Result<Self, ConfigError> {
        let mut config = Self::read_json(text)?;
        if !config.flows.iter().any(|f| f.kind == FlowKind::Host) {
            for i in 0..connections.max(1) {
                let name = Some(format!("conn-{i}"));
                config.flows.push(FlowConfig { name, kind: FlowKind::Host, ..FlowConfig::default() });
            }
        }
        validate(&config)?;
        Ok(config)
    }

    /// Checks every value and their combinations (what the readers do after parsing).
    pub fn validate(&self) -> Result<(), ConfigError> {
        validate(self)
    }

    /// A device driven from outside needs a submission queue: one `kind = "host"` flow named
    /// `host` when the config has no flow at all.
    pub fn add_default_host_queue(&mut self) {
        if self.flows.is_empty() {
            self.flows.push(FlowConfig {
                name: Some("host".to_string()),
                kind: FlowKind::Host,
                ..FlowConfig::default()
            });
        }
    }

    fn read_toml(text: &str) -> Result<Self, ConfigError> {
        // NaN and infinity first: serde would take them as numbers (issue 12, F03). A document
        // that does not parse is left to the reader below, which points at the line.
        if let Ok(table) = text.parse::<toml::Table>() {
            finite::check_toml(&table)?;
        }
        let deserializer = strict::Strict(toml::Deserializer::new(text));
        let mut config: Config = serde_path_to_error::deserialize(deserializer).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let reason = inner.message().trim().replace('\n', "; ");
            match (path.as_str(), inner.span()) {
                // A syntax error has no field path: point at the line instead.
                (".", Some(span)) => {
                    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    ConfigError::new(format!("line {line}"), reason)
                }
                _ => describe(path, reason),
            }
        })?;
        config.resolve_compat();
        Ok(config)
    }

    /// Reads the JSON form of the same schema (what the Python layer sends after applying overrides).
    pub fn from_json_str(text: &str) -> Result<Self, ConfigError> {
        let config = Self::read_json(text)?;
        validate(&config)?;
        Ok(config)
    }

    fn read_json(text: &str) -> Result<Self, ConfigError> {
        // Python writes a NaN or an infinity from the TOML file as a bare `NaN`/`Infinity`, which
        // is not JSON: name the key instead of a position in this generated text (issue 12, F03).
        finite::check_json(text)?;
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let mut config: Config = serde_path_to_error::deserialize(strict::Strict(&mut deserializer)).map_err(|e| {
            let path = e.path().to_string();
            let reason = e.inner().to_string();
            // serde_json appends " at line L column C" which points into generated JSON: drop it.
            let reason = match reason.rfind(" at line ") {
                Some(i) => reason[..i].to_string(),
                None => reason,
            };
            describe(path, reason)
        })?;
        config.resolve_compat();
        Ok(config)
    }
}

/// The error of a value read at `path`, with the section placeholder of [`strict`] filled in:
/// `flash` reads "a table ([flash] and its keys, or flash = { key = value, ... })".
fn describe(path: String, reason: String) -> ConfigError {
    let section = match path.rsplit('.').next() {
        _ if path == "." => String::new(),
        // Inside an array (a flow) there is no header of its own to show.
        _ if path.contains('[') => " ({ key = value, ... })".to_string(),
        Some(last) => format!(" ([{path}] and its keys, or {last} = {{ key = value, ... }})"),
        None => String::new(),
    };
    let reason = wording::plain(&reason).replace(strict::SECTION, &section);
    ConfigError::new(if path == "." { "config".into() } else { path }, reason)
}

/// Host side: the interface, the PCIe link and the NVMe queues.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// Host interface: NVMe over PCIe, SATA, UFS, or Open-Channel 2.0 (docs/host-interfaces.md).
    pub interface: HostInterface,
    /// PCIe lanes of the link (MQSim's PCIe_Lane_Count).
    pub pcie_lanes: u32,
    /// Usable bandwidth of one lane (MQSim's PCIe_Lane_Bandwidth, 1 GB/s).
    pub pcie_lane_rate: Bandwidth,
    /// MaxPayloadSize of one Transaction Layer Packet.
    pub pcie_max_payload: Size,
    /// Bytes added to every TLP: header, sequence number, LCRC and framing.
    pub pcie_tlp_overhead: Size,
    /// Entries of each flow's submission queue (MQSim's IO_Queue_Depth).
    pub sq_depth: u32,
    /// At most this many requests of one submission queue are inside the device at a time.
    pub queue_fetch_size: u32,
    /// Command slots of the controller: at most this many requests of all queues inside the
    /// device at a time. Arbitration decides who gets a free slot.
    pub max_requests_in_device: u32,
    /// How the device picks the next submission queue to fetch from.
    pub arbitration: Arbitration,
    /// Weighted round robin weights of the HIGH, MEDIUM and LOW classes (URGENT goes first).
    pub wrr_weights: WrrWeights,
    /// SATA: usable link bandwidth (6 Gb/s with 8b/10b coding is 600 MB/s).
    pub sata_link_rate: Bandwidth,
    /// SATA: host-controller processing of one message (MQSim's SATA_Processing_Delay).
    pub sata_processing_delay: Duration,
    /// SATA: Native Command Queuing slots.
    pub sata_ncq_depth: u32,
    /// UFS: the M-PHY link and the one command queue (only with `interface = "ufs"`).
    pub ufs: UfsConfig,
    /// Open-Channel 2.0: the host-side FTL (only with `interface = "open_channel"`).
    pub open_channel: OpenChannelConfig,
}

/// NVMe submission queue arbitration (NVMe 1.2, section 4.11).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Arbitration {
    /// Every queue in turn, one command each, whatever its priority.
    RoundRobin,
    /// URGENT queues first (round robin among them), then HIGH, MEDIUM and LOW in proportion to
    /// their weights (round robin within a class).
    WeightedRoundRobin,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct WrrWeights {
    /// Weight of the HIGH class.
    pub high: u32,
    /// Weight of the MEDIUM class.
    pub medium: u32,
    /// Weight of the LOW class.
    pub low: u32,
}

impl Default for WrrWeights {
    fn default() -> Self {
        Self { high: 4, medium: 2, low: 1 }
    }
}

/// NVMe priority class of a flow's submission queue.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Urgent = 0,
    High = 1,
    #[default]
    Medium = 2,
    Low = 3,
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            interface: HostInterface::Nvme,
            pcie_lanes: 4,
            pcie_lane_rate: Bandwidth::lit("1GB/s"),
            pcie_max_payload: Size::lit("256B"),
            pcie_tlp_overhead: Size::lit("24B"),
            sq_depth: 65535,
            queue_fetch_size: 512,
            max_requests_in_device: 65536,
            arbitration: Arbitration::RoundRobin,
            wrr_weights: WrrWeights::default(),
            sata_link_rate: Bandwidth::lit("600MB/s"),
            sata_processing_delay: Duration::lit("400us"),
            sata_ncq_depth: 32,
            ufs: UfsConfig::default(),
            open_channel: OpenChannelConfig::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum HostInterface {
    /// NVMe over PCIe: a submission queue per flow, fetched by arbitration.
    Nvme,
    /// SATA with NCQ (AHCI): one device queue of `sata_ncq_depth` commands filled in arrival
    /// order from all flows, over a half-duplex link where every message (command, data,
    /// status) costs `sata_processing_delay` plus its transfer time.
    Sata,
    /// UFS: one queue of `ufs.queue_depth` commands in arrival order, UPIUs over a full-duplex
    /// M-PHY link (`[host.ufs]`).
    Ufs,
    /// Open-Channel SSD 2.0 over NVMe: a host-side FTL (`[host.open_channel]`) addresses chunks.
    #[serde(rename = "open_channel")]
    OpenChannel,
}

/// The flash controller's front end.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ControllerConfig {
    /// Time the controller spends issuing one read transaction to the flash interface. It is
    /// serialised across the controller; the analytical model of Yoo et al. calls it the channel
    /// switching delay R_ch.
    pub dispatch_read: Duration,
    /// The same for a program transaction (W_ch in the analytical model).
    pub dispatch_write: Duration,
    /// The same for an erase transaction.
    pub dispatch_erase: Duration,
    /// Transaction scheduling policy of each chip.
    pub scheduling: Scheduling,
    /// Whether a die serves translation-page reads before user reads (MQSim: "flash transactions
    /// related to FTL mapping data have the highest priority") or right behind them (ssdlab: a
    /// user read already waiting has been waiting longer than the request the translation
    /// read serves). Unset: false, or true under `compat = "mqsim"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub translation_reads_first: Option<bool>,
    /// Whether the scheduler suspends a program or erase for a waiting read where
    /// `flash.suspension` allows it. MQSim's never does: in `service_read_transaction` its
    /// `WRITING` and `ERASING` branches fall through to `return false`, whatever
    /// CMD_Suspension_Support says. Unset: true, or false under `compat = "mqsim"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suspend_for_reads: Option<bool>,
    /// FLIN's parameters (`[controller.flin]`, with `scheduling = "flin"` only); each key left
    /// out takes the value MQSim's FLIN was to be built with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flin: Option<FlinConfig>,
}

/// How a chip's transaction queues are served.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduling {
    /// Strict arrival order per chip: a die waits while an older transaction of its chip waits
    /// for another die.
    Fifo,
    /// Each die takes its own next transaction as soon as it is idle (Sprinkler-style).
    OutOfOrder,
    /// Out of order, and within each queue the transactions of higher-priority flows first.
    Priority,
    /// Out of order, and fair queueing across flows within each user queue: each pick goes to the
    /// flow served least recently, so a light flow is not stuck behind an aggressor's backlog.
    /// This pursues FLIN's goal (Tavakkol et al., ISCA 2018: even out flows' slowdowns), not its
    /// three-stage design.
    FlowFair,
    /// FLIN (Tavakkol et al., ISCA 2018) in its three stages: fairness-aware insertion into each
    /// die's user queues (low-intensity flows ahead, each transaction where it evens out the
    /// slowdowns), priority classes served by weighted round robin (`host.wrr_weights`, urgent
    /// first), and reads or writes picked by their wait relative to their service time.
    Flin,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            dispatch_read: Duration::lit("0ns"),
            dispatch_write: Duration::lit("0ns"),
            dispatch_erase: Duration::lit("0ns"),
            scheduling: Scheduling::Priority,
            translation_reads_first: None,
            suspend_for_reads: None,
            flin: None,
        }
    }
}

/// The data cache in the controller's DRAM. Flows use it according to their `cache_mode`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CacheConfig {
    /// DRAM for cached data (MQSim's Data_Cache_Capacity).
    pub capacity: Size,
    /// One cache for all flows, or an equal share of the lines per flow.
    pub sharing: Sharing,
    /// DRAM row (page) size: an access opens one row per row it touches.
    pub dram_row_size: Size,
    /// Transfers per second on the DRAM bus, and bytes per transfer. MQSim's Data_Cache_DRAM_Data_Rate
    /// is a clock in MHz with two transfers per clock: its 100 is 200 MT/s here.
    pub dram_data_rate: TransferRate,
    /// Bytes per DRAM transfer.
    pub dram_burst_bytes: u32,
    /// DRAM row-to-column delay (tRCD).
    pub dram_trcd: Duration,
    /// DRAM CAS latency (tCL).
    pub dram_tcl: Duration,
    /// DRAM row precharge time (tRP).
    pub dram_trp: Duration,
    /// Where lines may be placed (default fully associative, MQSim's cache; see docs/cache.md).
    pub organisation: CacheOrganisation,
    /// Lines per set, for organisation = "set_associative" only (required there).
    pub ways: Option<u32>,
    /// Bytes per line, a multiple of the flash page: that many consecutive logical pages, which
    /// static allocation stripes over channels and dies (a super-page). Default one page.
    pub line_size: Option<Size>,
    /// Which line of a full set makes room (default LRU, as MQSim).
    pub replacement: Replacement,
    /// Prefetch ahead of sequential reads into the cache (default off: MQSim has no read-ahead).
    pub read_ahead: bool,
    /// Reads of a flow in a row that continue the previous one before read-ahead starts (default
    /// 4: a stream shows itself within a few requests; random reads almost never do this).
    pub read_ahead_threshold: Option<u32>,
    /// Pages kept prefetched ahead of a sequential stream (default: one per plane the flow's
    /// pages stripe over, so every die reads once in parallel).
    pub read_ahead_pages: Option<u32>,
    /// When written lines go to flash: `background` (dirty lines are written in the background,
    /// oldest first, from when they pass `dirty_high_watermark` of the cache until they are back
    /// at `dirty_low_watermark`, and all of them once the host has been idle for
    /// `idle_destage_after`; written lines stay cached, clean, so a later burst takes their
    /// place at DRAM speed), `when-full` (a dirty line is written only when its space is needed
    /// or the host flushes) or `cold-at-once` (MQSim's advanced cache: a write to a page its flow
    /// has not written since the flow's cold window last reset is written to flash at once, and
    /// host writes are let in only while fewer sectors than one page per plane of such
    /// write-backs and evictions are in flight). Unset: `background`, or `cold-at-once` under
    /// `compat = "mqsim"`. See docs/cache.md.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destage: Option<Destage>,
    /// `destage = "background"`: the fraction of the cache's lines holding dirty data at which
    /// background writing starts (default 0.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_high_watermark: Option<f64>,
    /// `destage = "background"`: the fraction of dirty lines at which it stops again, below the
    /// high watermark (default 0.25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_low_watermark: Option<f64>,
    /// `destage = "background"`: how long the device must have had no host command before it
    /// writes all its dirty lines (default "1ms").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_destage_after: Option<Duration>,
    /// `destage = "background"`: most background page writes in flight at once (default: one
    /// per plane, so every plane can program while reads still find the dies between them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destage_pages_in_flight: Option<u32>,
}

/// See [`CacheConfig::destage`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Destage {
    #[default]
    Background,
    WhenFull,
    ColdAtOnce,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            capacity: Size::lit("256MiB"),
            sharing: Sharing::Shared,
            dram_row_size: Size::lit("8KiB"),
            dram_data_rate: TransferRate::lit("200MT/s"),
            dram_burst_bytes: 1,
            dram_trcd: Duration::lit("13ns"),
            dram_tcl: Duration::lit("13ns"),
            dram_trp: Duration::lit("13ns"),
            organisation: CacheOrganisation::FullyAssociative,
            ways: None,
            line_size: None,
            replacement: Replacement::Lru,
            read_ahead: false,
            read_ahead_threshold: None,
            read_ahead_pages: None,
            destage: None,
            dirty_high_watermark: None,
            dirty_low_watermark: None,
            idle_destage_after: None,
            destage_pages_in_flight: None,
        }
    }
}

/// Flash translation layer policies.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FtlConfig {
    /// Static page allocation order: a permutation of the letters C (channel), W (way/chip),
    /// D (die), P (plane); the first letter varies fastest as logical page numbers increase.
    pub allocation: String,
    /// Fraction of the physical pages hidden from the host.
    pub over_provisioning: f64,
    /// GC runs on a plane when its free blocks fall below this fraction of its blocks.
    pub gc_threshold: f64,
    /// GC victim selection policy.
    pub gc_policy: GcPolicy,
    /// d of the randomised greedy policy: how many random blocks it compares.
    pub gc_rga_candidates: u32,
    /// DRAM for the cached mapping table (8 bytes per entry), MQSim's CMT_Capacity.
    pub cmt_capacity: Size,
    /// One LRU for all flows, or an equal share per flow.
    pub cmt_sharing: Sharing,
    /// Every lookup hits: the whole table is in DRAM and no translation page lives in flash.
    pub ideal_mapping: bool,
    /// Which translation pages are on flash when the run starts: `mapped` (those that describe
    /// data present at start; a cached-mapping-table miss on a range never written needs no
    /// flash read, since the controller's directory knows it is empty) or `all` (MQSim's
    /// `Store_mapping_table_on_flash_at_start`: the whole table is written before the first
    /// request, so every miss reads a translation page). Unset: `mapped`, or `all` under
    /// `compat = "mqsim"`. No effect with `ideal_mapping`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub translation_pages_at_start: Option<TranslationPagesAtStart>,
    /// What happens to a translation page whose dirty entry leaves the CMT: `program` (it is
    /// written to flash, as every FTL must) or `hold-in-dram` (MQSim: a merge read of the page
    /// is issued, but MQSim's transaction schedulers never serve their mapping-write queue, so
    /// the page is never programmed; it stays in DRAM as "departing", and later misses on it
    /// are answered from there without a flash read). Unset: `program`, or `hold-in-dram`
    /// under `compat = "mqsim"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub translation_write_back: Option<TranslationWriteBack>,
    /// Whether a host read of a page never written maps it, dirtying its CMT entry (MQSim's
    /// `online_create_entry_for_reads`), so that the entry is written back when it leaves the
    /// CMT. Otherwise (ssdlab) such a read changes nothing. Unset: false, or true under
    /// `compat = "mqsim"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads_map_unwritten_pages: Option<bool>,
    /// Bytes of a CMT entry and of a translation-page entry: `fixed` (8 and 4: 32-bit page
    /// numbers) or `mqsim` (sized from the device as MQSim does, with a sector bitmap in each:
    /// 9 and 6 bytes on its default device, so its 2 MiB CMT holds 233,016 entries and a
    /// translation page 1,365). Unset: `fixed`, or `mqsim` under `compat = "mqsim"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapping_entry_sizes: Option<mapping::MappingEntrySizes>,
    /// `shared`: every flow addresses the whole logical space; `per-flow`: each flow gets an equal
    /// slice of its own (its addresses are relative to it), as MQSim's separate streams.
    pub address_domains: AddressDomains,
    /// Open the least-erased free block instead of the longest-free one.
    pub dynamic_wear_leveling: bool,
    /// When a plane's erase counts spread by more than `static_wear_leveling_threshold`, move the
    /// data of its least-erased full block (cold data that pins it) so the block gets reused.
    pub static_wear_leveling: bool,
    /// Spread of erase counts (max - min) in a plane that triggers static wear leveling.
    pub static_wear_leveling_threshold: u32,
    /// Erases a block survives; it is retired when it reaches this count.
    pub pe_cycle_limit: u32,
    /// GC yields to user I/O on a die until one of its planes has fewer erased blocks than
    /// `gc_hard_threshold` of its blocks; then GC goes first again.
    pub preemptible_gc: bool,
    /// How GC records the new place of a moved page whose entry is not in the cached mapping
    /// table: `journal` (default) appends it to a mapping journal in DRAM, and each journal page
    /// filled (a translation page's worth of entries) costs one translation page written, as
    /// FTLs that log mapping deltas do; `cached` caches the entry as dirty, so it is written back
    /// with its translation page when evicted. `cached` evicts host entries for cold GC ones, and
    /// when GC moves many pages per host page (little spare space) the write-backs it causes need
    /// more GC than they free: write amplification runs away (649 on MQSim's default drive with
    /// a whole-drive random writer, issue 16). No effect with `ideal_mapping`.
    pub gc_map_updates: GcMapUpdates,
    /// How the page-level mapping tables store addresses: `global` (4 bytes per logical and per
    /// physical page, any placement), `in-plane` (3 bytes each: the page within the plane that
    /// static allocation over the whole device fixes for every logical page; needs page
    /// mapping, no zones, no Open-Channel host and every flow striped over the whole device),
    /// or `auto` (default): `in-plane` where it applies and the global tables would pass 4 GiB
    /// (drives of about 2 TiB of 16 KiB pages and up), `global` otherwise. Results are the same
    /// either way; only memory and speed differ (docs/limits.md).
    pub map_addresses: MapAddresses,
    /// Fraction of a plane's blocks at or below which GC goes ahead of host writes, whether it is
    /// paced or preemptible: the floor where host writes finally wait.
    pub gc_hard_threshold: f64,
    /// GC paced against host writes, as real firmware does: while a plane collects a victim,
    /// each host (or translation) page written on it owes the page moves that reclaim its room
    /// (the victim's valid pages per page it frees), and GC goes ahead of host writes on the die
    /// only while moves are owed; otherwise host writes go first and GC runs when the die has
    /// nothing else to do. Below `gc_hard_threshold` GC goes first regardless. Off: GC always goes
    /// ahead of host writes (MQSim without preemptible GC), which after steady state can stall
    /// the host for seconds (issue 16). Unset: on, or off under `compat = "mqsim"`, with
    /// `preemptible_gc`, or with `block` / `hybrid` mapping (their merges are not GC victims).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc_pacing: Option<bool>,
    /// GC moves use the chip's copyback: the page stays in the plane's register, no channel transfer.
    pub copyback: bool,
    /// Address-mapping family: `page` (default: today's page-level FTL), `block`, `hybrid` or
    /// `super_page` (docs/mapping.md).
    pub mapping: MappingFamily,
    /// Hybrid: most log blocks one data block may own (default 8, SimpleSSD's baseline).
    pub log_blocks_per_data_block: u32,
    /// Super-page: pages per super-page, one per plane in `allocation` order (default: the planes of a die).
    pub super_page_pages: Option<u32>,
    /// Super-page: a partial update's `read-modify-write` (default) or `remap` (Amber's tweak).
    pub super_page_update: SuperPageUpdate,
    /// NVMe Flexible Data Placement (TP4146; `[ftl.fdp]`, default none): the device offers
    /// reclaim unit handles, each flow's writes carry one (`flows[].placement_handle`), and data
    /// of different handles goes to different reclaim units (blocks), GC moves included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fdp: Option<FdpConfig>,
}

/// See [`FtlConfig::gc_map_updates`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum GcMapUpdates {
    #[default]
    Journal,
    Cached,
}

/// See [`FtlConfig::translation_write_back`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TranslationWriteBack {
    #[default]
    Program,
    HoldInDram,
}

/// See [`FtlConfig::translation_pages_at_start`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TranslationPagesAtStart {
    #[default]
    Mapped,
    All,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum AddressDomains {
    Shared,
    PerFlow,
}

/// How a DRAM structure is divided among flows.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Sharing {
    Shared,
    /// Each flow gets capacity / flows.
    Partitioned,
}

impl Default for FtlConfig {
    fn default() -> Self {
        Self {
            allocation: "CWDP".into(),
            over_provisioning: 0.07,
            gc_threshold: 0.05,
            gc_policy: GcPolicy::Rga,
            gc_rga_candidates: 10,
            cmt_capacity: Size::lit("2MiB"),
            cmt_sharing: Sharing::Shared,
            ideal_mapping: false,
            translation_pages_at_start: None,
            translation_write_back: None,
            reads_map_unwritten_pages: None,
            mapping_entry_sizes: None,
            address_domains: AddressDomains::Shared,
            dynamic_wear_leveling: true,
            static_wear_leveling: true,
            static_wear_leveling_threshold: 100,
            pe_cycle_limit: 10_000,
            preemptible_gc: false,
            gc_hard_threshold: 0.005,
            gc_pacing: None,
            gc_map_updates: GcMapUpdates::Journal,
            map_addresses: MapAddresses::Auto,
            copyback: false,
            mapping: MappingFamily::Page,
            log_blocks_per_data_block: DEFAULT_LOG_BLOCKS_PER_DATA_BLOCK,
            super_page_pages: None,
            super_page_update: SuperPageUpdate::ReadModifyWrite,
            fdp: None,
        }
    }
}

/// GC victim selection. The random family and d-choices follow B. Van Houdt, "A mean field model
/// for a class of garbage collection algorithms in flash-based solid state drives" (SIGMETRICS
/// 2013); FIFO follows P. Desnoyers, "Analytic modeling of SSD write performance" (SYSTOR 2012).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// The full block with the fewest valid pages.
    Greedy,
    /// A full block chosen uniformly at random (it may hold no invalid page at all).
    Random,
    /// Random+: uniformly among the full blocks that hold at least one invalid page.
    RandomP,
    /// Random++: uniformly among the full blocks with fewer valid pages than the plane's average.
    RandomPp,
    /// Randomised greedy (d-choices): the fewest valid pages among `gc_rga_candidates` random blocks.
    Rga,
    /// The block that was filled longest ago (a circular log).
    Fifo,
    /// Highest (1 - u) * age / (1 + u), u = valid fraction, age = time since the block was filled
    /// (Rosenblum and Ousterhout's LFS cleaner, as Amber offers).
    CostBenefit,
}

/// Run-wide limits.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Stop every flow at this simulated time (in addition to each flow's own limits).
    pub max_simulated_time: Option<Duration>,
    /// Watchdog: if no host request completes for this much simulated time, the run stops. With
    /// requests waiting that is an out-of-space error (e.g. flows pinned to planes they filled,
    /// where GC moves data without freeing any); with only background work left (GC churning on
    /// a full plane) the run ends with a warning. Default 10 s.
    pub stall_timeout: Option<Duration>,
    /// Width of the `time_series` windows in the results. Default: adaptive (10 us windows that
    /// double, merging pairs, whenever the run would need more than 512).
    pub time_series_window: Option<Duration>,
    /// Per-request records: `"none"` (default), `"all"`, or a fraction in (0, 1] of each flow's
    /// requests, sampled deterministically from the seed.
    #[serde(default, skip_serializing_if = "RequestRecords::is_none")]
    pub request_records: RequestRecords,
    /// Refuse to start a run whose estimated memory exceeds this (a size, or `"unlimited"`).
    /// Default: 3/4 of the machine's physical memory (8 GiB where it cannot be read). See
    /// docs/limits.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<MemoryLimit>,
    /// Extra latency percentiles, in percent (fio's `percentile_list`), reported beside the
    /// fixed p50, p90, p99, p99.9 and p99.99 of every op: `[95, 99.5, 99.999]` adds `p95`,
    /// `p99_5` and `p99_999` to each `latency_us`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<f64>,
}
