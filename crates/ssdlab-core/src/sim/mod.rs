//! The simulation: one value that owns the whole device and its workload, and an event loop that
//! dispatches each event to the part of the model it concerns.
//!
//! A request's path: flow -> submission queue -> fetch (round robin, QueueFetchSize) -> PCIe
//! command (and write data) -> FTL split into page transactions -> TSU queue of the die ->
//! controller dispatch -> channel command/address (and data in) -> cell operation -> channel data
//! out -> PCIe data -> completion entry. `host_path.rs` has the host half, `flash_path.rs` the
//! FTL and flash half.

mod backing_file;
mod cache_path;
mod channel_path;
mod data_path;
mod dram_path;
mod event_loop;
mod fdp_path;
mod flash_path;
mod host_device;
mod host_path;
mod mapping_path;
pub mod memory;
mod merge_path;
mod open_channel_path;
pub mod power_states;
mod precondition_path;
mod read_ahead;
mod read_pins;
mod reliability_path;
mod report;
mod suspension;
mod zone_path;

use std::collections::VecDeque;
use std::path::Path;
use std::time::{Duration as WallDuration, Instant};

use crate::config::{Config, ConfigError, FlowKind, HostInterface};
use crate::engine::{EventQueue, RandomStream, Slab};
use crate::flash::timing::FlashTiming;
use crate::flash::Geometry;
use crate::ftl::transaction::Transaction;
use crate::ftl::tsu::Tsu;
use crate::ftl::Ftl;
use crate::stats::breakdown::Breakdown;
use crate::stats::FlowStats;
use crate::time::SimTime;
use crate::workload::synthetic::{Arrival, Synthetic};
use crate::workload::trace::{OpenError, TraceOptions, TraceReader};
use crate::workload::{RequestSpec, TraceError};

pub use report::summary_table;

/// Why a simulation could not be built or could not go on.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The device cannot serve the workload any more (worn out).
    #[error("{0}")]
    EndOfLife(String),
}

/// Everything that happens, as a small `Copy` value carrying ids.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// An open-loop or trace request of this flow is due.
    Arrival { flow: u16 },
    /// A fetched command (and a write's data) has reached the device.
    CommandArrived { request: u32 },
    /// The controller finished dispatching the die's current batch.
    DispatchDone { die: u32 },
    /// The die finished sensing a read; its data waits in the page register.
    CellReadDone { die: u32 },
    /// The die's current batch is done (data out, program or erase finished). `gen` tells a
    /// program or erase that was suspended (and will end later) from the current one.
    DieDone { die: u32, gen: u32 },
    /// The channel has finished its current use (only under `flash.channel_arbitration =
    /// "data-out-first"`, where the next use waits for it).
    ChannelFree { channel: u32 },
    /// The die has suspended its program or erase and may serve reads.
    Suspended { die: u32 },
    /// The completion entry has been posted in the flow's completion queue.
    RequestCompleted { request: u32 },
    /// The request's data-cache access (DRAM) is done.
    CacheAccessDone { request: u32 },
    /// The front-end firmware (HIL, cache lookup, FTL) has handled the arrived command.
    FirmwareDone { request: u32 },
    /// Open-Channel host GC: a moved page is back in the device after its trip through the host.
    HostGcPage { txn: u32 },
    /// A banked-DRAM access a transaction or request waited for is done (see `dram_path`).
    DramDone { wait: dram_path::DramWait, id: u32 },
    /// Background destaging: time to see whether the host has been idle long enough.
    CacheIdleCheck,
    /// The device is back in its operational state after idle (`[power.apst]`): fetch.
    PowerStateExit,
}

#[derive(Clone, Copy, Debug)]
struct Request {
    flow: u16,
    is_read: bool,
    /// What the host asked for (a read or a write unless an outside host sent it).
    op: crate::device::Op,
    start_sector: u64,
    sectors: u32,
    arrival: SimTime,
    /// Page transactions not yet finished.
    pending: u32,
    /// The flow's sequence number of this request.
    seq: u64,
    /// When the device started fetching the command, when the command had crossed PCIe, and
    /// when the command (and a write's data) was in the device.
    fetched_at: SimTime,
    command_at: SimTime,
    arrived_at: SimTime,
    /// Time the front-end firmware steps took (waiting for their cores included).
    firmware_ps: u64,
    /// Steps after the host side, from the transaction that finished last.
    breakdown: Breakdown,
    /// Bytes served by (or written into) the data cache.
    cache_bytes: u64,
    /// Read retries of the request's slowest page (`[flash.reliability]`).
    read_retries: u8,
    /// How it ended (a trim the mapping cannot serve, a command its zone refuses).
    status: crate::device::Status,
    /// Counted among its zone's commands in flight (`zone_path`).
    zone_tracked: bool,
    /// FDP: the reclaim unit handle a write is placed by (`fdp_path`).
    placement: u8,
}

enum Source {
    Synthetic(Synthetic),
    Trace(TraceReader),
    /// An outside host's submission queue (`crate::device`): nothing is generated for it.
    Host,
}

struct Flow {
    /// Seed of the flow's random stream (reported so the flow can be rerun alone).
    seed: u64,
    /// First sector of the flow's address domain (its requests' addresses are relative to it).
    domain_base_sector: u64,
    /// Its namespace (index among `config.namespaces`; 0 without them), whether that namespace
    /// is zoned, and the sectors the flow addresses.
    namespace: u16,
    zoned: bool,
    host_sectors: u64,
    name: String,
    priority: crate::config::Priority,
    source: Source,
    closed_loop_depth: Option<u32>,
    /// Open-loop and trace flows read one request ahead; it is due at its arrival time.
    next: Option<RequestSpec>,
    sq: VecDeque<u32>,
    sq_depth: u32,
    /// Requests submitted while the submission queue was full.
    backlog: VecDeque<u32>,
    in_device: u32,
    issued: u64,
    completed: u64,
    /// Requests the device refused, by [`crate::device::Status`] code (a zoned namespace's
    /// writes off its write pointer, say): they complete at once and are neither reads nor
    /// writes in the statistics, so the results count them apart (`flows[].refused`).
    refused: [u64; crate::device::Status::ALL.len()],
    max_requests: u64,
    stop_time: SimTime,
    stats: FlowStats,
}

impl Flow {
    fn may_issue(&self, at: SimTime) -> bool {
        self.issued < self.max_requests && at < self.stop_time
    }
}

pub struct Simulation {
    config: Config,
    config_echo: serde_json::Value,
    queue: EventQueue<Event>,
    link: crate::host::HostLink,
    /// SATA and UFS: one device queue filled in arrival order (no per-queue arbitration).
    single_queue: bool,
    /// Open-Channel 2.0: the device's chunk table and the host FTL (None for other interfaces).
    open_channel: Option<Box<crate::host::ocssd::OpenChannel>>,
    /// When each flow's transaction was last picked by a die (a count of picks), for flow-fair
    /// scheduling.
    flow_last_served: Vec<u64>,
    picks: u64,
    ftl: Ftl,
    tsu: Tsu,
    txns: Slab<Transaction>,
    /// Latency breakdown of each transaction so far, indexed like `txns`.
    spent: Vec<Breakdown>,
    /// User reads in flight: the blocks they pin against erasure, and those of unmapped pages.
    read_pins: read_pins::ReadPins,
    requests: Slab<Request>,
    /// FDP: the handle of each cache flush transaction slot (`fdp_path`; empty without FDP).
    flush_placement: Vec<u8>,
    flows: Vec<Flow>,
    /// User writes waiting for their plane to have space (GC is reclaiming it).
    stalled_writes: Vec<VecDeque<u32>>,
    /// GC moves waiting for an erased block (only when blocks have been retired).
    stalled_gc_writes: Vec<VecDeque<u32>>,
    arbiter: crate::host::Arbiter,
    queue_fetch_size: u32,
    max_requests_in_device: u32,
    requests_in_device: u32,
    /// Since when the device has held requests with none completing (the later of the last
    /// completion and the moment it last became busy), and the longest such stretch so far:
    /// results.json's `device.longest_completion_gap_us`, where GC stalls show.
    gap_start: SimTime,
    longest_completion_gap: SimTime,
    /// Dies that may have work to start once the current event is handled.
    touched_dies: Vec<u32>,
    /// Scratch for the channels of touched dies (`channel_path.rs`), kept to avoid allocating.
    touched_channels: Vec<u32>,
    /// The flash back end: dies, channels, the dispatcher and their counters.
    backend: crate::flash::backend::FlashBackend,
    /// When a host request last completed, and how long the watchdog lets the run go without.
    last_progress: SimTime,
    stall_timeout_ps: u64,
    mapping: mapping_path::MappingState,
    /// Block, hybrid or super-page mapping (`None`: page mapping).
    family: Option<Box<merge_path::FamilyState>>,
    cache: cache_path::CacheState,
    /// NVMe autonomous power state transitions, when `power.apst.enabled`.
    power_states: Option<power_states::PowerStates>,
    /// The embedded cores, when `firmware.enabled`.
    firmware: Option<crate::firmware::Firmware>,
    /// The controller's DRAM: data cache, and with the banked model also CMT and data buffers.
    dram: crate::dram::Dram,
    finished: bool,
    /// Wall time spent simulating, and building the device before that.
    wall: WallDuration,
    setup_wall: WallDuration,
    warnings: Vec<String>,
    completion_log: Option<Vec<(u16, u64)>>,
    /// Per-window statistics, and the per-request records file (see `stats/`, `report.rs`).
    series: crate::stats::TimeSeries,
    records: Option<crate::stats::RequestRecorder>,
    /// The state the run started from (results.json `precondition`).
    precondition_summary: crate::precondition::PreconditionSummary,
    /// Stored bytes and read checks (`[data] emulate`; see `data_path`).
    data: Option<Box<crate::data::DataEmulation>>,
    /// What an outside host's requests need (`crate::device`; see `host_device`).
    host: host_device::HostSide,
    /// `data.backing_file`, resolved against the config's folder.
    backing_file: Option<std::path::PathBuf>,
    /// Read retries from flash reliability (`[flash.reliability]`; see `reliability_path`).
    reliability: Option<Box<reliability_path::ReliabilityState>>,
}

impl Simulation {
    /// Builds the device and its workload. `base_dir` resolves relative trace paths; `config_echo`
    /// is the configuration as the user gave it, copied into the results.
    pub fn new(config: Config, base_dir: &Path, config_echo: serde_json::Value) -> Result<Self, SimError> {
        Self::new_with_progress(config, base_dir, config_echo, &mut |_| true)
    }

    /// As [`Self::new`], telling `progress` the fraction of the preconditioning done (steady
    /// state's aging, or `simulate`'s writes; every few milliseconds) so that a host can draw a
    /// bar through a long setup. When `progress` returns false the setup stops with a
    /// `precondition` error saying [`crate::precondition::INTERRUPTED`].
    pub fn new_with_progress(
        config: Config,
        base_dir: &Path,
        config_echo: serde_json::Value,
        progress: &mut dyn FnMut(f64) -> bool,
    ) -> Result<Self, SimError> {
        if let Some(i) = config.flows.iter().position(|f| f.kind == FlowKind::Host) {
            return Err(ConfigError::new(
                format!("flows[{i}].kind"),
                "a host queue (kind = \"host\") takes its requests from an outside host (ssdlab.Device, the C ABI; docs/embedding.md), so a batch run has nothing to send it",
            )
            .into());
        }
        Self::build(config, base_dir, config_echo, progress)
    }

    /// A device for an outside host (`crate::device::Device`): as [`Self::new`], with host queues.
    pub(crate) fn new_device(
        config: Config,
        base_dir: &Path,
        config_echo: serde_json::Value,
    ) -> Result<Self, SimError> {
        let mut sim = Self::build(config, base_dir, config_echo, &mut |_| true)?;
        sim.host = host_device::HostSide::new(&sim.config);
        Ok(sim)
    }

    fn build(
        config: Config,
        base_dir: &Path,
        config_echo: serde_json::Value,
        progress: &mut dyn FnMut(f64) -> bool,
    ) -> Result<Self, SimError> {
        let config = zone_path::device_config(open_channel_path::device_config(config));
        // Before anything of the device's size is allocated (the geometry's plane table included).
        memory::check(&config)?;
        let geometry = Geometry::new(&config);
        let timing = FlashTiming::new(&config);
        let mut placement = crate::ftl::placement::Placement::new(&config, &geometry)?;
        let placement_warning = check_partition_space(&config, &geometry, &mut placement)?;
        let flows = build_flows(&config, &geometry, &placement, base_dir)?;
        let setup_started = Instant::now();
        let fill_started = Instant::now();
        let mut ftl = Ftl::new(&config, geometry, placement).map_err(|reason| ConfigError::new("flash", reason))?;
        let family = merge_path::FamilyState::build(&config, &mut ftl);
        let fill_seconds = fill_started.elapsed().as_secs_f64();
        let g = &ftl.geometry;
        let c = &config.controller;
        let mut tsu = Tsu::new(g)
            .map_err(|reason| ConfigError::new("flash", reason))?
            .with_policy(c.scheduling)
            .with_multi_plane(config.flash.multi_plane)
            .with_translation_reads_first(c.translation_reads_first == Some(true));
        if c.scheduling == crate::config::Scheduling::Flin {
            let service = [
                timing.read_ps(0) + timing.read_command_ps + timing.page_transfer_ps,
                timing.program_ps(0) + timing.program_command_ps + timing.page_transfer_ps,
            ];
            let w = &config.host.wrr_weights;
            let params = c.flin.clone().unwrap_or_default();
            let wrr = [w.high, w.medium, w.low];
            let flin = crate::ftl::tsu::Flin::new(&params, g.dies, config.flows.len(), g.page_size_bytes, service, wrr);
            tsu = tsu.with_flin(flin);
        }
        let backend = crate::flash::backend::FlashBackend::new(&config, g, timing);
        let mut sim = Self {
            backend,
            queue: EventQueue::new(),
            link: crate::host::HostLink::new(&config.host),
            single_queue: matches!(config.host.interface, HostInterface::Sata | HostInterface::Ufs),
            open_channel: None,
            flow_last_served: vec![0; config.flows.len()],
            picks: 0,
            tsu,
            txns: Slab::default(),
            spent: Vec::new(),
            read_pins: read_pins::ReadPins::new(g.blocks),
            requests: Slab::default(),
            flush_placement: Vec::new(),
            flows,
            stalled_writes: vec![VecDeque::new(); g.planes as usize],
            stalled_gc_writes: vec![VecDeque::new(); g.planes as usize],
            arbiter: crate::host::Arbiter::new(
                &config.host,
                &config.flows.iter().map(|f| f.priority.unwrap_or_default()).collect::<Vec<_>>(),
            ),
            queue_fetch_size: config.host.queue_fetch_size,
            max_requests_in_device: match config.host.interface {
                HostInterface::Nvme | HostInterface::OpenChannel => config.host.max_requests_in_device,
                HostInterface::Sata => config.host.sata_ncq_depth.min(config.host.max_requests_in_device),
                HostInterface::Ufs => config.host.ufs.queue_depth.min(config.host.max_requests_in_device),
            },
            requests_in_device: 0,
            gap_start: 0,
            longest_completion_gap: 0,
            touched_dies: Vec::with_capacity(64),
            touched_channels: Vec::with_capacity(64),
            last_progress: 0,
            stall_timeout_ps: config.run.stall_timeout.as_ref().map_or(10 * crate::time::PS_PER_S, |d| d.value),
            mapping: mapping_path::MappingState::new(&config, g),
            family,
            cache: cache_path::CacheState::new(&config, g),
            firmware: config.firmware.enabled.then(|| crate::firmware::Firmware::new(&config.firmware)),
            power_states: power_states::PowerStates::new(&config.power.apst),
            dram: crate::dram::Dram::new(&config, g.planes as u64),
            finished: false,
            wall: WallDuration::ZERO,
            setup_wall: WallDuration::ZERO,
            warnings: placement_warning.into_iter().collect(),
            completion_log: None,
            series: crate::stats::TimeSeries::for_config(&config),
            records: None,
            precondition_summary: Default::default(),
            data: None,
            host: Default::default(),
            backing_file: config.data.backing_file.as_ref().map(|f| base_dir.join(f)),
            reliability: None,
            ftl,
            config,
            config_echo,
        };
        sim.precondition(base_dir, fill_seconds, progress)?;
        sim.start_open_channel();
        sim.data = data_path::build(&sim.config, &sim.ftl.geometry, base_dir, sim.cache.partitions().len())?;
        sim.load_backing_file()?;
        // Nothing is in flight yet: every page placed so far counts as programmed.
        debug_assert_eq!(sim.txns.live(), 0, "transactions in flight before the flows start");
        sim.ftl.blocks.sync_program_cursors();
        sim.reliability = reliability_path::ReliabilityState::build(&sim);
        sim.start_flows()?;
        sim.setup_wall = setup_started.elapsed();
        Ok(sim)
    }

    /// Convenience: a configuration read from TOML text.
    pub fn from_toml_str(text: &str, base_dir: &Path) -> Result<Self, SimError> {
        let config = Config::from_toml_str(text)?;
        let echo = serde_json::to_value(&config).expect("config serialises");
        Self::new(config, base_dir, echo)
    }

    /// Records which request completed, in order (for tests of the exactly-once guarantee).
    pub fn enable_completion_log(&mut self) {
        self.completion_log = Some(Vec::new());
    }

    pub fn completion_log(&self) -> &[(u16, u64)] {
        self.completion_log.as_deref().unwrap_or(&[])
    }

    #[inline]
    fn now(&self) -> SimTime {
        self.queue.now()
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Fraction of the run done, from each flow's nearest stop condition (the slowest flow counts).
    pub fn progress(&self) -> f64 {
        if self.finished {
            return 1.0;
        }
        let now = self.now() as f64;
        self.flows
            .iter()
            .map(|f| {
                if f.max_requests == 0 {
                    return 1.0; // a flow with nothing to issue is done from the start
                }
                let mut p: f64 = 0.0;
                if f.max_requests != u64::MAX {
                    p = p.max(f.completed as f64 / f.max_requests as f64);
                }
                if f.stop_time != SimTime::MAX {
                    p = p.max(now / f.stop_time as f64);
                }
                if let Source::Trace(r) = &f.source {
                    p = p.max(r.bytes_read as f64 / r.file_bytes.max(1) as f64);
                }
                p.min(1.0)
            })
            .fold(1.0, f64::min)
    }

    /// Whether a batch run's workload is done: every flow has stopped issuing and every request
    /// has completed. Never for a device an outside host drives (it may send more at any time).
    pub(super) fn workload_over(&self) -> bool {
        self.host.drives_nothing() && self.requests.live() == 0 && self.flows.iter().all(|f| f.next.is_none())
    }

    /// Transactions in flight (host pages, GC moves, translation pages, erases).
    pub fn live_transactions(&self) -> u32 {
        self.txns.live()
    }

    pub fn events(&self) -> u64 {
        self.queue.processed()
    }

    pub fn simulated_time(&self) -> SimTime {
        self.now()
    }

    pub fn geometry(&self) -> &Geometry {
        &self.ftl.geometry
    }

    /// Checks the device state's invariants: the maps agree, block counters match, and valid +
    /// invalid + free pages = total. They hold at every moment, even after an error.
    pub fn check_state_invariants(&self) -> Result<(), String> {
        self.ftl.check_invariants()
    }

    /// Checks the model's invariants (device state, and at the end: nothing left in flight).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.ftl.check_invariants()?;
        if self.finished {
            // Background writes stalled for space (reported as a warning) are the only
            // transactions allowed to outlive the run.
            let stalled: usize = self.stalled_writes.iter().chain(&self.stalled_gc_writes).map(|q| q.len()).sum();
            if self.requests.live() != 0 || self.txns.live() as usize != stalled {
                return Err(format!(
                    "{} requests and {} transactions still live at the end",
                    self.requests.live(),
                    self.txns.live()
                ));
            }
            for f in &self.flows {
                if f.issued != f.completed {
                    return Err(format!("flow {}: issued {} but completed {}", f.name, f.issued, f.completed));
                }
            }
        }
        Ok(())
    }
}

/// With separate address domains, each flow's slice must fit on the planes it may use. With a
/// shared domain, confined flows' working sets are preconditioned on their own planes when they
/// fit there; otherwise over the whole device, with the warning this returns.
fn check_partition_space(
    config: &Config,
    geometry: &Geometry,
    placement: &mut crate::ftl::placement::Placement,
) -> Result<Option<String>, ConfigError> {
    if config.ftl.address_domains != crate::config::AddressDomains::PerFlow {
        if confined_fill_fits(config, geometry, placement) {
            return Ok(None);
        }
        placement.forget_confined_working_sets();
        return Ok(Some(
            "the working sets of the flows confined to some channels, chips, dies or planes do not fit there at this occupancy: preconditioning places their data over the whole device (static allocation), and only their new writes go to their own planes".into(),
        ));
    }
    let mut load = vec![0f64; geometry.planes as usize];
    for f in 0..config.flows.len() {
        // Static allocation spreads the flow's slice evenly over one period of its stripe.
        let mut uses = vec![0u32; geometry.planes as usize];
        let stripe = placement.stripe(f);
        for &p in stripe {
            uses[p as usize] += 1;
        }
        for (p, &n) in uses.iter().enumerate() {
            load[p] += placement.domain_pages() as f64 * n as f64 / stripe.len() as f64;
        }
    }
    let usable = geometry.usable_pages_per_plane(config.ftl.gc_threshold);
    if let Some((plane, pages)) = load.iter().enumerate().find(|(_, &l)| l > usable as f64) {
        return Err(ConfigError::new(
            "ftl.address_domains",
            format!(
                "with per-flow domains, plane {plane} would hold {pages:.0} logical pages but only {usable} fit beside the GC reserve; give the flows more planes or fewer flows per plane"
            ),
        ));
    }
    Ok(None)
}

/// With a shared domain, a fill places each confined flow's working set on the flow's planes
/// (`Placement::owner`) when it fits there beside the GC reserve, with the rest of the filled
/// space spread over every plane.
fn confined_fill_fits(config: &Config, geometry: &Geometry, placement: &crate::ftl::placement::Placement) -> bool {
    use crate::config::PreconditionMode;
    let confined = placement.confined_working_sets();
    let mode = config.precondition.mode;
    if confined.is_empty() || !matches!(mode, PreconditionMode::Fill | PreconditionMode::Steady) {
        return true;
    }
    let filled = (geometry.logical_pages as f64 * config.precondition.occupancy).floor() as u64;
    // Steady-state preconditioning also maps everything the flows address.
    let mapped_end = |end: u64| if mode == PreconditionMode::Steady { end } else { end.min(filled) };
    let mut load = vec![0f64; geometry.planes as usize];
    let mut placed = 0u64;
    let mut claimed: Vec<(u64, u64)> = Vec::new();
    for &(first, end, flow) in confined {
        // The first flow whose working set holds a page owns it: count only what is left.
        let end = mapped_end(end);
        let mut pages = end.saturating_sub(first);
        for &(a, b) in &claimed {
            pages = pages.saturating_sub(end.min(b).saturating_sub(first.max(a)));
        }
        claimed.push((first, end));
        placed += pages;
        let stripe = placement.stripe(flow);
        for &p in stripe {
            load[p as usize] += pages as f64 / stripe.len() as f64;
        }
    }
    let rest = filled.saturating_sub(placed) as f64 / geometry.planes as f64;
    let usable = geometry.usable_pages_per_plane(config.ftl.gc_threshold) as f64;
    load.iter().all(|l| l + rest <= usable)
}

/// Random stream id of a flow's request generator.
const STREAM_FLOW: u64 = 1000;

/// The seed of flow `i`: its own, or one derived from the run's seed and its position.
fn flow_seed(config: &Config, i: usize) -> u64 {
    config.flows[i].seed.unwrap_or_else(|| crate::engine::derive_seed(config.seed, i as u64))
}

fn build_flows(
    config: &Config,
    geometry: &Geometry,
    placement: &crate::ftl::placement::Placement,
    base_dir: &Path,
) -> Result<Vec<Flow>, SimError> {
    // Each flow addresses its own domain: its namespace, or the whole space unless domains are
    // per flow.
    let zones = crate::config::ZoneLayout::of(config, geometry)?;
    let namespaces = crate::config::namespaces::layout(config, geometry)?;
    let spp = geometry.sectors_per_page;
    let run_stop = config.run.max_simulated_time.as_ref().map_or(SimTime::MAX, |d| d.value);
    let mut flows = Vec::with_capacity(config.flows.len());
    for (i, fc) in config.flows.iter().enumerate() {
        let path = format!("flows[{i}]");
        let ns_index = crate::config::namespaces::namespace_of_flow(config, i);
        let ns = &namespaces[ns_index];
        let logical_sectors =
            if config.namespaces.is_empty() && !ns.zoned { placement.domain_pages() * spp } else { ns.host_sectors };
        // A zoned namespace's writer sees its own zones.
        let ns_zones = zones.clone().filter(|_| ns.zoned).map(|z| crate::config::ZoneLayout { zones: ns.zones, ..z });
        let domain_base_sector = if config.namespaces.is_empty() {
            placement.domain_base(i) * spp
        } else {
            ns.base_sector(spp, zones.as_ref().map_or(0, |z| z.zone_sectors))
        };
        let source = match fc.kind {
            FlowKind::Synthetic => {
                let rng = RandomStream::new(flow_seed(config, i), STREAM_FLOW);
                let key = if fc.lsm.is_some() {
                    "lsm"
                } else if fc.address == Some(crate::config::AddressPattern::Zoned) {
                    "address"
                } else {
                    "request_size"
                };
                let generator = Synthetic::new(fc, logical_sectors, ns_zones.as_ref(), rng)
                    .map_err(|reason| ConfigError::new(format!("{path}.{key}"), reason))?;
                Source::Synthetic(generator)
            }
            FlowKind::Trace => {
                let given = fc.path.as_deref().expect("validated: trace flows have a path");
                let file = crate::workload::trace::resolve_path(base_dir, Path::new(given));
                let reader =
                    TraceReader::open(&file, &TraceOptions::from_flow(fc), logical_sectors).map_err(|e| match e {
                        OpenError::Option { field, reason } => {
                            ConfigError::new(format!("{path}.{field}"), reason).into()
                        }
                        OpenError::Trace(e) => SimError::Trace(e),
                    })?;
                Source::Trace(reader)
            }
            FlowKind::Host => Source::Host,
        };
        let closed_loop_depth = match &source {
            Source::Synthetic(s) => match s.arrival {
                Arrival::Closed { depth } => Some(depth),
                Arrival::Open { .. } => None,
            },
            Source::Trace(_) | Source::Host => None,
        };
        flows.push(Flow {
            domain_base_sector,
            namespace: ns_index as u16,
            zoned: ns.zoned,
            host_sectors: logical_sectors,
            seed: flow_seed(config, i),
            name: fc.name.clone().unwrap_or_else(|| format!("flow-{i}")),
            priority: fc.priority.unwrap_or_default(),
            source,
            closed_loop_depth,
            next: None,
            sq: VecDeque::new(),
            sq_depth: fc.sq_depth.unwrap_or(config.host.sq_depth),
            backlog: VecDeque::new(),
            in_device: 0,
            issued: 0,
            completed: 0,
            refused: [0; crate::device::Status::ALL.len()],
            max_requests: fc.requests.unwrap_or(u64::MAX),
            stop_time: fc.duration.as_ref().map_or(SimTime::MAX, |d| d.value).min(run_stop),
            stats: FlowStats::default(),
        });
    }
    Ok(flows)
}
