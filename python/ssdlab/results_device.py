"""Results models of the SSD-as-a-computer parts (``energy``, ``dram``, ``firmware``,
``host_interface``, ``open_channel``, ``mapping``, ``data``, ``reliability``, ``fdp``,
``slc_cache``, ``zns``, ``namespaces``, and a flow's ``lsm``): each key is present only when
its model is on. :mod:`ssdlab.results` re-exports them."""

from __future__ import annotations

from pydantic import Field

from ssdlab._document import _Document


class ComponentJoules(_Document):
    """Energy per component, joules."""

    nand: float
    dram: float
    cpu: float
    pcie: float


class PowerSeries(_Document):
    """Average power per time-series window."""

    start_seconds: list[float]
    watts: list[float]


class DramJoules(_Document):
    """The banked DRAM's energy by background state and operation, joules."""

    active: float
    active_standby: float
    precharge_standby: float
    power_down: float
    self_refresh: float
    activate: float
    read: float
    write: float
    refresh: float


class Energy(_Document):
    """The energy model's results (``energy``; only with ``power.enabled``)."""

    total_joules: float
    average_watts: float
    by_component: ComponentJoules
    energy_per_request_uj: float
    power_over_time: PowerSeries
    dram_breakdown_joules: DramJoules | None = None
    """Only with ``dram.model = "banked"``: the DRAM's energy by state and operation."""


class PowerStateResidency(_Document):
    """One APST non-operational state: its power, entries and time spent in it."""

    name: str
    watts: float
    entries: int
    residency_seconds: float


class PowerStates(_Document):
    """NVMe autonomous power state transitions (``power_states``; only with
    ``power.apst.enabled``)."""

    states: list[PowerStateResidency]
    wakeups: int
    """Commands that found the device in a non-operational state and waited for it to wake."""
    exit_wait_us_mean: float
    exit_wait_us_max: float
    low_power_fraction: float
    """Fraction of the run spent in non-operational states."""


class DramUsers(_Document):
    """One count per DRAM user: data cache, CMT lookups, flash data buffers."""

    cache: int
    cmt: int
    buffer: int


class DramResidency(_Document):
    """Fraction of the DRAM ranks' time in each state (sums to 1)."""

    active: float
    active_standby: float
    precharge_standby: float
    power_down: float
    self_refresh: float


class Dram(_Document):
    """The banked DRAM model's statistics (``dram``; only with ``dram.model = "banked"``)."""

    model: str
    page_policy: str
    accesses: DramUsers
    bytes: DramUsers
    reads: int
    writes: int
    row_hits: int
    row_misses: int
    row_conflicts: int
    row_hit_rate: float
    activates: int
    refreshes: int
    power_down_exits: int
    self_refresh_exits: int
    bus_utilisation: float
    state_residency: DramResidency


class Firmware(_Document):
    """The firmware model's results (``firmware``; only with ``firmware.enabled``)."""

    cores: int
    clock_hz: float
    core_utilisation: list[float]
    """Busy fraction of each core over the run."""
    core_busy_seconds: list[float]
    instructions_by_class: dict[str, int]
    """Instructions executed by class: branch, load_store, arithmetic, other."""
    instructions_by_step: dict[str, int]
    """Instructions executed by firmware step: hil, cache, ftl, fil, gc (with their work)."""
    executions_by_step: dict[str, int]
    work_units: dict[str, int] = Field(default_factory=dict)
    """Units of each ``[firmware.work]`` item done: doorbells, PRP entries, UPIUs, FISes, cache
    and CMT misses, CMT entries walked, page allocations, GC blocks scanned and pages moved."""
    instructions_by_work: dict[str, int] = Field(default_factory=dict)
    """Instructions executed by each ``[firmware.work]`` item (part of its step's total)."""
    step_us: dict[str, float]
    """Time one execution of each step's fixed part takes on an idle core, microseconds."""
    work_unit_us: dict[str, float] = Field(default_factory=dict)
    """Time one unit of each work item adds to its step on an idle core, microseconds."""
    instructions_per_second: float
    latency_share: float
    """Fraction of the summed response time spent in firmware steps."""


class UfsLinkStats(_Document):
    """The UFS link (``host_interface.ufs``): M-PHY gear, lanes and the UPIUs sent each way."""

    gear: int
    rate_series: str
    lanes: int
    lane_gbps: float
    coding_efficiency: float
    upius_to_device: int
    upius_to_host: int


class HostInterfaceStats(_Document):
    """The host interface (``host_interface``): its device queue, link rate and traffic."""

    kind: str
    """``nvme``, ``sata``, ``ufs`` or ``open_channel``."""
    device_queue_slots: int
    link_bytes_per_second: float
    full_duplex: bool
    bytes_to_device: int
    bytes_to_host: int
    ufs: UfsLinkStats | None = None


class ChunkCounts(_Document):
    """Open-Channel chunks in each state at the end of the run."""

    free: int
    open: int
    closed: int
    offline: int


class PpaFormat(_Document):
    """Open-Channel 1.2's physical page address: each field's (offset, width) in bits."""

    sector: tuple[int, int]
    plane: tuple[int, int]
    page: tuple[int, int]
    block: tuple[int, int]
    lun: tuple[int, int]
    channel: tuple[int, int]


class OpenChannelGeometry(_Document):
    """The geometry an Open-Channel device reports (groups = channels, PUs = dies)."""

    version: str = "2.0"
    """The specification: ``"2.0"`` or ``"1.2"``."""
    groups: int
    parallel_units_per_group: int
    chunks_per_parallel_unit: int
    logical_blocks_per_chunk: int
    logical_block_bytes: int
    min_write_logical_blocks: int
    planes_per_parallel_unit: int | None = None
    """Only for 1.2: planes per LUN (a 1.2 write covers a page on each)."""
    ppa_format: PpaFormat | None = None
    """Only for 1.2: the bit fields of a physical page address."""


class HostFtlStats(_Document):
    """The Open-Channel host FTL's work: its mapping table, lookups, placement and GC traffic."""

    placement: str
    gc_copy: str
    mapping_table_bytes: int
    lookups: int
    pages_placed: int
    gc_pages_moved: int
    gc_link_bytes: int
    cpu_seconds: float


class OpenChannel(_Document):
    """Open-Channel 2.0 results (``open_channel``): chunk states and the device's rule checks."""

    geometry: OpenChannelGeometry
    chunks: ChunkCounts
    resets: int
    write_pointer_violations: int
    """Programs off a chunk's write pointer (0 when the host FTL keeps the rules)."""
    reset_violations: int
    max_open_chunks: int
    pages_written: int
    host_ftl: HostFtlStats


class MergeCounts(_Document):
    """Merges by kind; block mapping's whole-block copy-on-write counts as ``full``."""

    switch: int
    partial: int
    full: int


class Mapping(_Document):
    """What a block, hybrid or super-page mapping family did (``mapping``; see docs/mapping.md)."""

    family: str
    """``block``, ``hybrid`` or ``super_page``."""
    merges: MergeCounts
    super_page_read_modify_writes: int
    pages_read_by_merges: int
    pages_copied_by_merges: int
    erases_by_merges: int
    host_pages_in_place: int
    host_pages_to_log_blocks: int
    host_pages_in_merges: int
    writes_waited_for_merges: int
    writes_waited_for_blocks: int


class DataMismatch(_Document):
    """The first read sector that did not hold what the host last wrote."""

    lba: int
    source: str
    """``flash`` (physical page ``ppa``), ``cache`` or ``unmapped``."""
    ppa: int | None
    flow: str
    expected: str
    found: str
    at_seconds: float


class DataEmulation(_Document):
    """Read checks and stored pages (``data``; only with ``data.emulate``)."""

    verified_sectors: int
    mismatched_sectors: int
    skipped_sectors: int
    """Read sectors whose content the host's order leaves undefined (a write in flight)."""
    stored_pages: int
    spilled_pages: int
    memory_bytes: int
    first_mismatch: DataMismatch | None = None


class RetryLevelLatency(_Document):
    """Host reads whose slowest page needed ``retries`` read retries: count and latency (us)."""

    retries: int
    count: int
    mean: float
    p99: float
    max: float


class Reliability(_Document):
    """Read latency from flash reliability (``reliability``; only with ``[flash.reliability]``)."""

    page_reads: int
    """Flash page reads decoded (host, GC, mapping and read-ahead reads)."""
    reads_by_retries: list[int]
    """Page reads by the retries they needed: index 0 hard decision alone, index i i retries."""
    read_retries: int
    uncorrectable_reads: int
    read_reclaims_requested: int
    """Reads whose worst codeword reached ``read_reclaim_bits``."""
    read_reclaims: int
    """Blocks rewritten by read reclaim."""
    mean_rber: float | None
    """Mean raw bit error rate over the page reads (None when nothing was read)."""
    max_rber: float | None
    pe_cycles_at_start: int
    data_age_days_at_start: float
    read_latency_us_by_retries: list[RetryLevelLatency]


class FdpHandle(_Document):
    """One FDP reclaim unit handle: its flows, host and media bytes, reclaim units."""

    handle: int
    flows: list[str]
    host_bytes_written: int
    media_bytes_written: int
    """Host writes and GC's moves of the handle's data."""
    write_amplification: float | None
    """media / host bytes; None where the host wrote nothing through the handle."""
    reclaim_units_opened: int
    reclaim_units_erased: int


class FdpEvent(_Document):
    """One entry of the FDP events log."""

    event: str
    """``invalid_placement_identifier``."""
    time_us: float
    placement_identifier: int
    """The placement handle the write carried."""
    namespace_id: int
    """1 = the first namespace (or the device's only one)."""
    flow: str


class FdpEvents(_Document):
    """The FDP events log: counts by event type over the run and the last 64 events."""

    invalid_placement_identifier: int = 0
    """Writes carrying a handle the device does not offer (placed by handle 0)."""
    log: list[FdpEvent] = Field(default_factory=list)


class Fdp(_Document):
    """Flexible Data Placement (``fdp``; only with ``[ftl.fdp]``): the FDP statistics log (host
    and media bytes written, media bytes erased), each handle's share and the events log."""

    reclaim_unit_handles: int
    reclaim_unit_bytes: int
    host_bytes_written: int
    media_bytes_written: int
    media_bytes_erased: int
    handles: list[FdpHandle]
    events: FdpEvents = Field(default_factory=FdpEvents)
    """Empty in results written before the events log existed."""


class SlcCache(_Document):
    """The SLC write cache (``slc_cache``; only with ``[flash.slc_cache]``)."""

    mode: str
    slc_pages_per_block: int
    max_capacity_bytes: int
    capacity_bytes_at_end: int
    """What the planes may hold at the end (dynamic: less on a fuller drive)."""
    host_bytes_to_slc: int
    host_bytes_to_dense: int
    """Host bytes written straight to the dense cells (the cache was full)."""
    blocks_folded: int
    bytes_folded: int
    blocks_in_use_at_end: int


class Zns(_Document):
    """A zoned namespace (``zns``; only with ``[zns]``): zone states at the end, what the host's
    zone commands did, and what the zones refused."""

    zones: int
    zone_size_bytes: int
    zone_capacity_bytes: int
    zone_planes: int
    max_open_zones: int
    max_active_zones: int
    zone_states: dict[str, int]
    """Zones per state at the end: empty, implicitly_open, explicitly_open, closed, full,
    read_only, offline."""
    peak_open_zones: int
    peak_active_zones: int
    writes: int
    appends: int
    host_bytes_written: int
    explicit_opens: int
    closes: int
    implicit_closes: int
    """Implicitly open zones the device closed to open another (the open limit)."""
    finishes: int
    resets: int
    blocks_erased: int
    pad_bytes: int
    """Bytes a zone finish programmed as padding."""
    media_bytes_written: int
    gc_bytes_moved: int
    """0 on a zoned drive: space comes back by zone resets."""
    write_amplification: float | None
    failed: dict[str, int]
    """Commands the zones refused, by status (zone_invalid_write, zone_is_full, ...)."""


class Namespace(_Document):
    """One namespace of ``[[namespaces]]`` (``namespaces[]``): its command set, size, flows and
    what they read and wrote."""

    name: str
    command_set: str
    """``conventional`` or ``zoned``."""
    size_bytes: int
    """What the host addresses (zoned: zones x zone size)."""
    capacity_bytes: int
    """What it stores (zoned: zones x zone capacity)."""
    zones: int
    flows: list[str]
    bytes_read: int
    bytes_written: int


class LsmStore(_Document):
    """An LSM store on a zoned namespace (``flows[].lsm``): what it wrote and why."""

    levels: int
    file_bytes: int
    files_per_zone: int
    flushes: int
    """Level-0 files written by memtable flushes (the user's data)."""
    compactions: int
    compaction_files_written: int
    files_dropped: int
    """Oldest last-level files dropped to stay within the store's zones."""
    files_per_level: list[int]
    user_bytes_written: int
    host_bytes_written: int
    """Flushes and compaction outputs."""
    host_write_amplification: float | None
    """host / user bytes: the store's own write amplification (None before a flush)."""
    compaction_bytes_read: int
    zone_resets: int
    zone_finishes: int
