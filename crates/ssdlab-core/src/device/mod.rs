//! The device as a component: an outside host (a full-system simulator through the C ABI,
//! Python's `ssdlab.Device`, the live block device) creates a device from a config, submits
//! requests at the device's current time, advances simulated time and collects completions
//! (docs/embedding.md). The same model runs batch workloads; both submit requests through one
//! path (`Simulation::submit`), so a request behaves the same whoever sends it.
//!
//! Time is in picoseconds ([`SimTime`]) and addresses in 512-byte sectors throughout, as in
//! the rest of the model. The host's requests go into the submission queues the config names
//! as flows of `kind = "host"` (one named `host` when the config has no flow); flows of the
//! other kinds keep generating their own requests beside them.

use std::path::Path;

use crate::config::Config;
pub use crate::ftl::zones::ZoneDescriptor;
use crate::sim::{SimError, Simulation};
use crate::stats::breakdown::Breakdown;
use crate::stats::Results;
use crate::time::SimTime;

/// What a host request asks the device to do (NVMe I/O command set names in brackets). The C
/// ABI's op codes are the positions in [`Op::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Return `sectors` sectors from `start_sector` [Read].
    Read,
    /// Store `sectors` sectors at `start_sector`, with the host's bytes if it gives them
    /// [Write].
    Write,
    /// Complete once every write completed before it is on flash: the write cache programs the
    /// dirty data it holds [Flush].
    Flush,
    /// The host no longer needs these sectors: whole logical pages in the range are unmapped
    /// (GC stops moving them) and read back as zeros [Dataset Management, Deallocate].
    Trim,
    /// Store zeros at these sectors, without moving data over the link [Write Zeroes].
    WriteZeroes,
    /// Zoned namespaces (`[zns]`): store `sectors` sectors at the write pointer of the zone
    /// that starts at `start_sector`; the completion says where they landed
    /// ([`Completion::assigned_sector`]) [Zone Append].
    ZoneAppend,
    /// Zone management send, to the zone starting at `start_sector` (no sectors): open the
    /// zone explicitly [Open Zone], close it [Close Zone], make it full, padding its open blocks
    /// [Finish Zone], or empty it, erasing its blocks [Reset Zone].
    ZoneOpen,
    ZoneClose,
    ZoneFinish,
    ZoneReset,
}

impl Op {
    /// Every op, in code order.
    pub const ALL: [Op; 10] = [
        Op::Read,
        Op::Write,
        Op::Flush,
        Op::Trim,
        Op::WriteZeroes,
        Op::ZoneAppend,
        Op::ZoneOpen,
        Op::ZoneClose,
        Op::ZoneFinish,
        Op::ZoneReset,
    ];
    const _ALL_IN_DECLARATION_ORDER: () = {
        let mut i = 0;
        while i < Op::ALL.len() {
            assert!(Op::ALL[i] as usize == i, "Op::ALL follows the declaration order");
            i += 1;
        }
    };

    /// The op named `name` (as [`Op::name`] spells it), for hosts that speak in names.
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The op whose code (position in [`Op::ALL`]) is `code`.
    pub fn from_code(code: u8) -> Option<Op> {
        Op::ALL.get(code as usize).copied()
    }

    /// This op's code: its position in [`Op::ALL`].
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Flush => "flush",
            Op::Trim => "trim",
            Op::WriteZeroes => "write_zeroes",
            Op::ZoneAppend => "zone_append",
            Op::ZoneOpen => "zone_open",
            Op::ZoneClose => "zone_close",
            Op::ZoneFinish => "zone_finish",
            Op::ZoneReset => "zone_reset",
        }
    }

    /// Whether the request carries a sector range (all but a flush and the zone management
    /// ops do; those name a zone by its first sector).
    pub fn has_range(self) -> bool {
        self != Op::Flush && !self.is_zone_management()
    }

    /// Zone Management Send: open, close, finish, reset.
    pub fn is_zone_management(self) -> bool {
        matches!(self, Op::ZoneOpen | Op::ZoneClose | Op::ZoneFinish | Op::ZoneReset)
    }

    /// Ops that store sectors (and so must go to a zone's write pointer on a zoned namespace).
    pub fn writes(self) -> bool {
        matches!(self, Op::Write | Op::WriteZeroes | Op::ZoneAppend)
    }

    /// Ops whose data crosses the link to the device.
    pub fn carries_data(self) -> bool {
        matches!(self, Op::Write | Op::ZoneAppend)
    }
}

/// One request from the outside host.
#[derive(Clone, Copy, Debug)]
pub struct HostRequest<'a> {
    /// The host's name for the request, given back in its completion.
    pub id: u64,
    /// Submission queue: index of a `kind = "host"` flow among the host queues (0 = first).
    pub queue: u16,
    pub op: Op,
    /// First 512-byte sector (0 for a flush).
    pub start_sector: u64,
    /// Sectors (0 for a flush).
    pub sectors: u32,
    /// A write's bytes (`sectors` x 512): kept and returned by later reads. Needs
    /// `[data] emulate`; without them a write stores the model's generated content.
    pub data: Option<&'a [u8]>,
    /// FDP (`[ftl.fdp]`): the reclaim unit handle a write is placed by (NVMe's
    /// data placement directive, DTYPE 2h, with the handle in DSPEC). `None` takes the queue's
    /// flow's `placement_handle`. A handle the device does not offer is placed by handle 0 and
    /// logged as an invalid placement identifier event (TP4146), as a drive does.
    pub placement_handle: Option<u16>,
}

/// How a request ended.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Success = 0,
    /// The device cannot do this here: a trim under block, hybrid or super-page mapping or on
    /// an Open-Channel device (NVMe: Invalid Command Opcode; the device advertises no
    /// deallocate there), or a zone command on a conventional namespace.
    Unsupported = 1,
    /// Zoned namespaces (NVMe ZNS 1.1, figure 28: command specific status values). A read or
    /// write crosses a zone's end or its capacity [Zone Boundary Error, B8h].
    ZoneBoundaryError = 2,
    /// A write to a full zone [Zone Is Full, B9h].
    ZoneIsFull = 3,
    /// A write to a read-only zone [Zone Is Read Only, BAh].
    ZoneIsReadOnly = 4,
    /// A read or write of an offline zone [Zone Is Offline, BBh].
    ZoneIsOffline = 5,
    /// A write not at the zone's write pointer [Zone Invalid Write, BCh].
    ZoneInvalidWrite = 6,
    /// Opening another zone would pass the active zone limit [Too Many Active Zones, BDh].
    TooManyActiveZones = 7,
    /// Opening another zone would pass the open zone limit [Too Many Open Zones, BEh].
    TooManyOpenZones = 8,
    /// A zone management op the zone's state does not allow [Invalid Zone State Transition, BFh].
    InvalidZoneStateTransition = 9,
    /// A zone append or management op not at a zone's first sector, or a zoned write that is
    /// not whole flash pages [Invalid Field in Command].
    InvalidField = 10,
}

impl Status {
    /// Every status, in code order.
    pub const ALL: [Status; 11] = [
        Status::Success,
        Status::Unsupported,
        Status::ZoneBoundaryError,
        Status::ZoneIsFull,
        Status::ZoneIsReadOnly,
        Status::ZoneIsOffline,
        Status::ZoneInvalidWrite,
        Status::TooManyActiveZones,
        Status::TooManyOpenZones,
        Status::InvalidZoneStateTransition,
        Status::InvalidField,
    ];

    /// The status's name (results.json, Python).
    pub fn name(self) -> &'static str {
        match self {
            Status::Success => "success",
            Status::Unsupported => "unsupported",
            Status::ZoneBoundaryError => "zone_boundary_error",
            Status::ZoneIsFull => "zone_is_full",
            Status::ZoneIsReadOnly => "zone_is_read_only",
            Status::ZoneIsOffline => "zone_is_offline",
            Status::ZoneInvalidWrite => "zone_invalid_write",
            Status::TooManyActiveZones => "too_many_active_zones",
            Status::TooManyOpenZones => "too_many_open_zones",
            Status::InvalidZoneStateTransition => "invalid_zone_state_transition",
            Status::InvalidField => "invalid_field",
        }
    }
}

/// A finished request.
#[derive(Clone, Debug)]
pub struct Completion {
    pub id: u64,
    pub queue: u16,
    pub op: Op,
    pub status: Status,
    /// When it was submitted and when its completion entry reached the host, picoseconds.
    pub submitted_ps: SimTime,
    pub completed_ps: SimTime,
    /// Where its time went (the steps of results.json `latency_breakdown`).
    pub breakdown: Breakdown,
    /// A read's bytes, when the device keeps data (`[data] emulate`).
    pub data: Option<Vec<u8>>,
    /// A successful zone append's first sector: where the device put the data.
    pub assigned_sector: Option<u64>,
}

impl Completion {
    pub fn latency_ps(&self) -> SimTime {
        self.completed_ps - self.submitted_ps
    }
}

/// Why a request was refused at submission (nothing was queued).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SubmitError {
    #[error("queue {queue}: the device has {queues} host queue(s) (flows with kind = \"host\")")]
    NoSuchQueue { queue: u16, queues: u16 },
    #[error("a {op} needs at least one sector")]
    NoSectors { op: &'static str },
    #[error("a flush carries no sector range, got start_sector {start_sector} and {sectors} sectors")]
    FlushWithRange { start_sector: u64, sectors: u32 },
    #[error("sectors {start_sector}..{start_sector}+{sectors} are not within the device's {logical_sectors} sectors")]
    OutOfRange { start_sector: u64, sectors: u32, logical_sectors: u64 },
    #[error("a {sectors}-sector write carries {sectors} x 512 = {expected} bytes, got {given}")]
    DataLength { sectors: u32, expected: u64, given: u64 },
    #[error("only a write carries data, not a {op}")]
    DataOnNonWrite { op: &'static str },
    #[error("the write's data would be lost: the device keeps data only with [data] emulate = true")]
    DataNotKept,
    #[error("request id {id} is still in flight; ids must be unique among requests in flight")]
    DuplicateId { id: u64 },
    #[error("a {op} names a zone by its first sector and carries no sectors, got {sectors}")]
    ZoneOpWithSectors { op: &'static str, sectors: u32 },
    #[error("placement_handle: only a write carries a placement handle, not a {op}")]
    PlacementOnNonWrite { op: &'static str },
    #[error("placement_handle: the device has no Flexible Data Placement; add [ftl.fdp] to its config")]
    PlacementWithoutFdp,
}

/// A device an outside host drives (see the module comment).
pub struct Device {
    sim: Simulation,
}

impl Device {
    /// Builds the device `config` describes (preconditioned as it asks). A config without flows
    /// gets one host queue named `host`. `base_dir` resolves relative paths (traces of the
    /// device's own flows, `data.spill_dir`).
    pub fn new(mut config: Config, base_dir: &Path) -> Result<Self, SimError> {
        config.add_default_host_queue();
        config.validate()?;
        let echo = serde_json::to_value(&config).expect("config serialises");
        let sim = Simulation::new_device(config, base_dir, echo)?;
        Ok(Self { sim })
    }

    /// A device from TOML text.
    pub fn from_toml_str(text: &str, base_dir: &Path) -> Result<Self, SimError> {
        Self::new(Config::device_from_toml_str(text)?, base_dir)
    }

    /// Queues `request` at the device's current time ([`Self::now`]). It is fetched, served and
    /// completed as simulated time advances.
    pub fn submit(&mut self, request: &HostRequest<'_>) -> Result<(), SubmitError> {
        self.sim.host_submit(request)
    }

    /// Simulated time, picoseconds.
    pub fn now(&self) -> SimTime {
        self.sim.simulated_time()
    }

    /// When the next event is due, or `None` when the device is idle (nothing in flight).
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.sim.next_event_time()
    }

    /// Runs every event due at or before `time` and sets the clock to `time` (never past it;
    /// a time before [`Self::now`] does nothing). Errors when the model cannot go on (a
    /// worn-out device, a failing data spill file).
    pub fn advance_to(&mut self, time: SimTime) -> Result<(), SimError> {
        self.sim.advance_to(time)
    }

    /// Completions since the last call, in completion order.
    pub fn completions(&mut self) -> std::vec::Drain<'_, Completion> {
        self.sim.drain_host_completions()
    }

    /// Requests submitted and not yet completed.
    pub fn in_flight(&self) -> usize {
        self.sim.host_in_flight()
    }

    /// The results document so far (the same as a batch run's `results.json`).
    pub fn results(&mut self) -> Results {
        self.sim.flush_request_records();
        self.sim.results()
    }

    /// The host queues, in submission-queue order: their flow names.
    pub fn host_queues(&self) -> Vec<String> {
        self.sim.host_queue_names()
    }

    /// Logical sectors the host may address (on a zoned namespace: every zone's size, the
    /// sectors past each zone's capacity included).
    pub fn logical_sectors(&self) -> u64 {
        self.sim.host_sectors(0)
    }

    /// Sectors host queue `queue` addresses (its namespace's with `[[namespaces]]`).
    pub fn queue_sectors(&self, queue: u16) -> u64 {
        self.sim.host_sectors(queue as usize)
    }

    /// Report Zones: descriptors of up to `count` zones from zone `first` (state, start, capacity
    /// and write pointer in sectors), or `None` on a conventional namespace.
    pub fn zone_report(&self, first: u64, count: u64) -> Option<Vec<ZoneDescriptor>> {
        self.sim.zone_report(0, first, count)
    }

    /// [`Self::zone_report`] of host queue `queue`'s namespace (`[[namespaces]]`).
    pub fn zone_report_of_queue(&self, queue: u16, first: u64, count: u64) -> Option<Vec<ZoneDescriptor>> {
        self.sim.zone_report(queue as usize, first, count)
    }

    /// Bytes of a logical page (the deallocation granularity of [`Op::Trim`]).
    pub fn page_bytes(&self) -> u64 {
        self.sim.geometry().sectors_per_page * crate::flash::SECTOR_BYTES
    }

    /// Whether `[data] backing_file` is set (so [`Self::persist`] has a file to write).
    pub fn has_backing_file(&self) -> bool {
        self.sim.backing_path().is_some()
    }

    /// Writes the device's logical contents to `data.backing_file` (a new file replaces the old
    /// one once complete); a device built later from the same config starts with them.
    /// Returns the file's path.
    pub fn persist(&mut self) -> Result<std::path::PathBuf, String> {
        self.sim.persist_backing_file()
    }

    /// The model underneath (the invariant checks, `read_back`).
    pub fn simulation(&mut self) -> &mut Simulation {
        &mut self.sim
    }
}
