"""Typed access to the results document (schema ``ssdlab.results/1``).

The models mirror the JSON the Rust core writes. The schema only ever gains fields, so every
model accepts and keeps fields it does not know: a newer core's results still load here and
round-trip unchanged through :meth:`Results.to_dict`.

:class:`Results` also hands the numbers out as pandas DataFrames (``summary()``,
``latency_cdf()``, ``time_series()``, ``gc_time_series()``, ``requests()``) and writes them as
Parquet (``to_parquet``); pandas is imported only when one is asked for.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, PrivateAttr

from ssdlab import _core, _outputs
from ssdlab._document import _Document
from ssdlab.results_device import (
    DataEmulation,
    Dram,
    Energy,
    Fdp,
    Firmware,
    HostInterfaceStats,
    LsmStore,
    Mapping,
    Namespace,
    OpenChannel,
    PowerStates,
    Reliability,
    SlcCache,
    Zns,
)
from ssdlab.results_frames import (
    _gc_time_series,
    _html_summary,
    _latency_cdf,
    _read_records,
    _require_series,
    _summary,
    _time_series_frame,
)

if TYPE_CHECKING:
    import pandas as pd

SCHEMA = "ssdlab.results/1"


class ResultsFileError(ValueError):
    """A results.json that is not a complete ssdlab results document (cut short by a full disk
    or a killed writer of an older ssdlab, or another file); the message names the file."""


def _not_a_result(file: Path, data: bytes, error: ValueError) -> str:
    """Why `data` (read from `file`) is not a results document, in the user's terms."""
    rerun = f"rerun the simulation that wrote it (ssdlab run CONFIG --out {file.parent})"
    if not data.strip():
        return f"{file} is empty ({len(data)} bytes), not an ssdlab result: {rerun}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return f"{file} is not an ssdlab result (not UTF-8 text): {rerun}"
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        # Cut short: the text stops where more was expected, or inside a string.
        if e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string"):
            return (
                f"{file} is not a complete ssdlab result (truncated at byte {len(data)}?): {rerun}"
            )
        return (
            f"{file} is not an ssdlab result (not valid JSON at line {e.lineno} column "
            f"{e.colno}: {e.msg}): {rerun}"
        )
    schema = document.get("schema") if isinstance(document, dict) else None
    if not (isinstance(schema, str) and schema.startswith("ssdlab.results/")):
        found = f"schema {schema!r}" if schema is not None else "no schema field"
        return f"{file} is not an ssdlab results document ({found}, expected {SCHEMA!r})"
    errors = getattr(error, "errors", lambda: [])()
    where = ".".join(str(p) for p in errors[0]["loc"]) if errors else "?"
    what = errors[0]["msg"] if errors else str(error)
    return f"{file} is not a complete ssdlab result ({where}: {what}): {rerun}"


class Latency(_Document):
    """Response-time distribution of one operation type, in microseconds. Every figure is None
    (NaN in DataFrames) when the op never ran: undefined, never 0. ``min`` and ``stdev`` (the
    sample standard deviation, as fio's) are None in results older than 0.2. The percentiles
    ``run.percentiles`` adds are :attr:`extra` (``p95``, ``p99_5``: as the fixed ones are named).
    """

    min: float | None = None
    mean: float | None
    stdev: float | None = None
    p50: float | None
    p90: float | None
    p99: float | None
    p99_9: float | None
    p99_99: float | None
    max: float | None

    @property
    def extra(self) -> dict[str, float | None]:
        """The extra percentiles (``run.percentiles``) by name: ``{"p95": 812.3}``."""
        return dict(self.model_extra or {})


class LatencyCdf(_Document):
    """``fraction[i]`` of the requests took at most ``latency_us[i]``; the last point is the max."""

    latency_us: list[float]
    fraction: list[float]


class OpStats(_Document):
    """Requests of one operation type (reads or writes) of a flow or of the device."""

    count: int
    iops: float
    bandwidth_mib_s: float
    bytes: int
    latency_us: Latency
    latency_breakdown_us: dict[str, float | None]
    """Mean microseconds per step of the request path, in path order; sums to the mean (None
    when the op never ran)."""
    latency_cdf: LatencyCdf | None = None
    """The latency distribution at every percent and at tail quantiles (results since 0.1)."""


class GcStats(_Document):
    """Garbage collection activity over the run."""

    blocks_erased: int
    pages_moved: int
    write_amplification: float | None
    """Flash programs per user page program; None when no user page was programmed."""
    victims_selected: int


class FlashStats(_Document):
    """Flash back-end operation counts and channel utilisation."""

    reads: int
    programs: int
    erases: int
    multiplane_commands: int
    suspensions: int
    unmapped_reads: int
    read_modify_writes: int
    translation_page_reads: int
    translation_page_writes: int
    max_erase_count: int
    channel_utilisation: list[float]


class WearStats(_Document):
    """Erase counts, blocks retired at the P/E limit, and static wear-leveling moves."""

    min_erase_count: int
    max_erase_count: int
    retired_blocks: int
    static_wear_leveling_migrations: int


class CacheStats(_Document):
    """The data cache as the device saw it: flushes of dirty lines, writes that waited for room,
    read hits and misses, evictions, and read-ahead (docs/cache.md). Fields after
    ``dram_utilisation`` are 0 in results written before they existed."""

    flushes: int
    writes_waited: int
    dram_utilisation: float
    read_lookups: int = 0
    read_hits: int = 0
    read_misses: int = 0
    evictions: int = 0
    """Lines that left to make room (clean ones dropped, dirty ones flushed)."""
    sets: int = 0
    ways: int = 0
    prefetches_issued: int = 0
    prefetches_used: int = 0
    prefetches_wasted: int = 0
    """Pages read ahead that no host read used: ``issued = used + wasted``."""
    prefetch_waits: int = 0
    """Page reads that waited for a read-ahead in flight instead of reading flash themselves."""
    written_through: int = 0
    """Of ``flushes``, cold pages written through at once (``cache.destage = "cold-at-once"``)."""
    destaged: int = 0
    """Of ``flushes``, pages written back in the background (``cache.destage = "background"``)."""
    destaged_when_idle: int = 0
    """Of ``destaged``, pages written while the host was idle."""
    dirty_lines_at_end: int = 0
    """Lines holding data not yet on flash when the run ended."""


class DeviceResults(_Document):
    """All flows together, as the device saw them."""

    reads: OpStats
    writes: OpStats
    iops: float
    bandwidth_mib_s: float
    gc: GcStats
    flash: FlashStats
    wear: WearStats
    cache: CacheStats
    logical_capacity_bytes: int
    physical_capacity_bytes: int
    longest_completion_gap_us: float = 0.0
    """The longest stretch of simulated time in which the device held requests and none
    completed: where the host sees the drive stall (e.g. GC that does not yield)."""


class CmtStats(_Document):
    """Cached mapping table lookups of one flow (misses = lookups - hits)."""

    lookups: int
    hits: int
    misses: int


class FlowCacheStats(_Document):
    """A flow's page reads that looked in the data cache, those it served, and its read-ahead."""

    read_lookups: int
    read_hits: int
    read_misses: int = 0
    prefetches_issued: int = 0
    prefetches_used: int = 0
    prefetch_waits: int = 0


class FlowResults(_Document):
    """One flow (application or tenant with its own queues)."""

    name: str
    seed: int
    """Seed of the flow's random stream; setting it as ``flows[].seed`` reruns the same requests."""
    iops: float
    bandwidth_mib_s: float
    reads: OpStats
    writes: OpStats
    latency_breakdown_us: dict[str, float | None]
    cmt_hit_rate: float | None
    """None when the flow made no mapping lookup."""
    cmt: CmtStats
    cache_hit_rate: float | None
    """None when none of the flow's reads looked in the data cache."""
    cache: FlowCacheStats
    requests: int
    interval_seconds: float
    refused: dict[str, int] = Field(default_factory=dict)
    """Requests the device refused, by status name (``zone_invalid_write``, ``zone_is_full``,
    ``invalid_field``, ``unsupported``, ...): completed at once without moving data, so in
    neither ``reads`` nor ``writes``; empty when it refused none (docs/results.md)."""
    lsm: LsmStore | None = None
    """Only for a zoned writer with ``[flows.lsm]``: the LSM store's flushes, compactions and
    zone use."""


class OpSeries(_Document):
    """One operation type per window; latencies are None in windows without completions."""

    count: list[int]
    bytes: list[int]
    iops: list[float]
    bandwidth_mib_s: list[float]
    mean_us: list[float | None]
    p99_us: list[float | None]
    max_us: list[float | None]


class FlowSeries(_Document):
    name: str
    reads: OpSeries
    writes: OpSeries


class GcSeries(_Document):
    """GC activity per window; write amplification is None where no host page was written."""

    blocks_erased: list[int]
    pages_moved: list[int]
    host_pages_written: list[int]
    flash_pages_programmed: list[int]
    write_amplification: list[float | None]


class ControllerSeries(_Document):
    """The controller's activity per window: the data cache's DRAM busy seconds, the cores' busy
    seconds (summed over cores) and, with the firmware model, the instructions executed."""

    dram_busy_seconds: list[float] = Field(default_factory=list)
    cpu_busy_seconds: list[float] = Field(default_factory=list)
    instructions: list[int] = Field(default_factory=list)


class ReliabilitySeries(_Document):
    """Pages read again by read retries and blocks rewritten by read reclaim per window."""

    read_retries: list[int]
    read_reclaims: list[int]


class SlcCacheSeries(_Document):
    """The SLC cache per window: host pages into it, pages folded out, blocks in use at the end."""

    host_pages_to_slc: list[int]
    pages_folded: list[int]
    blocks_in_use: list[int]


class TimeSeries(_Document):
    """Completions, latency and GC activity per window of simulated time.

    The window is ``run.time_series_window`` (adaptive by default: at most 512 windows). A
    request counts in the window in which it completes."""

    window_seconds: float
    adaptive: bool
    p99_precision: float
    """A window's p99 is at most this fraction above the true value (16 buckets per octave)."""
    start_seconds: list[float]
    duration_seconds: list[float]
    device: FlowSeries
    flows: list[FlowSeries]
    gc: GcSeries
    controller: ControllerSeries = Field(default_factory=ControllerSeries)
    reliability: ReliabilitySeries | None = None
    """Only with ``[flash.reliability]``: read retries and read reclaims per window."""
    slc_cache: SlcCacheSeries | None = None
    """Only with ``[flash.slc_cache]``: SLC cache traffic and fill per window."""

    def __call__(self, device: bool = True) -> pd.DataFrame:
        """The per-window figures as a DataFrame, one row per flow, op and window
        (``results.time_series()``; see :meth:`Results.time_series_frame`)."""
        return _time_series_frame(self, device)


class RequestRecordsInfo(_Document):
    """Where the per-request records of ``run.request_records`` are (beside results.json)."""

    format: str
    file: str
    fraction: float
    records: int


class Fairness(_Document):
    """How much the flows slowed each other down (``simulate(..., alone=True)``).

    A flow's slowdown is its mean response time when it shares the device divided by its mean
    response time when it runs alone on the same device (same config and seed, only that flow).
    """

    slowdown: dict[str, float]
    """Per flow name: RT(shared) / RT(alone); 1 means no interference."""
    fairness: float
    """min slowdown / max slowdown, in (0, 1]; 1 when every flow suffers alike."""
    weighted_speedup: float
    """Sum over flows of RT(alone) / RT(shared): the number of flows when nobody slows down."""
    shared_mean_us: dict[str, float]
    """Per flow: mean response time in the shared run (reads and writes together)."""
    alone_mean_us: dict[str, float]
    """Per flow: mean response time when it runs alone."""


class ValidHistogram(_Document):
    """Written blocks by their fraction of valid pages, in equal bins over [0, 1]."""

    edges: list[float]
    blocks: list[int]


class Precondition(_Document):
    """The state the device started from (``precondition`` in results.json)."""

    mode: str
    """``steady``, ``fill``, ``none`` or ``simulate``."""
    wall_seconds: float
    valid_fraction_histogram: ValidHistogram
    free_blocks: int
    cache_fill: float
    cmt_fill: float
    mapped_pages: int
    occupancy: float = 0.0
    """How full the drive started: mapped pages over logical pages (0 in results before 0.2)."""
    drive_writes: float
    write_amplification: float | None
    """Of the aging writes: for ``steady``, its prediction of the run's steady-state value;
    None when nothing was aged (``fill``, ``none``)."""
    sample_planes: int


with warnings.catch_warnings():
    # `schema` is the document's own field name; it shadows pydantic's deprecated `schema()`.
    warnings.filterwarnings("ignore", message=".*shadows an attribute in parent.*")

    class Results(_Document):
        """Everything one run measured, plus the configuration that produced it."""

        schema: str
        version: str
        seed: int
        simulated_seconds: float
        wall_seconds: float
        setup_wall_seconds: float
        events: int
        device: DeviceResults
        flows: list[FlowResults]
        warnings: list[str]
        config: dict[str, Any]
        precondition: Precondition | None = None
        """The device's starting state (None in results older than preconditioning modes)."""
        energy: Energy | None = None
        """Only with ``power.enabled``: energy per component and power over time."""
        firmware: Firmware | None = None
        """Only with ``firmware.enabled``: core utilisation and instructions executed."""
        power_states: PowerStates | None = None
        """Only with ``power.apst.enabled``: time in APST's non-operational states, wake-ups."""
        dram: Dram | None = None
        """Only with ``dram.model = "banked"``: row hits, accesses by user, state residency."""
        mapping: Mapping | None = None
        """Only with ``ftl.mapping`` other than ``page``: merges and where host pages went."""
        data: DataEmulation | None = None
        """Only with ``data.emulate``: what the read checks found (see docs/data-emulation.md)."""
        fairness: Fairness | None = None
        """Only for runs with ``alone=True`` (``ssdlab run --alone``)."""
        time_series: TimeSeries | None = None
        """The document's ``time_series``: per-window statistics (None in older results).
        Called, ``results.time_series()``, it is the per-window DataFrame."""
        request_records: RequestRecordsInfo | None = None
        """Only with ``run.request_records``: the per-request records file."""
        host_interface: HostInterfaceStats | None = None
        """The host interface and its link traffic (None in older results)."""
        open_channel: OpenChannel | None = None
        """Only with ``host.interface = "open_channel"``: chunk states and host FTL work."""
        reliability: Reliability | None = None
        """Only with ``[flash.reliability]``: read retries, uncorrectable reads, read reclaim."""
        fdp: Fdp | None = None
        """Only with ``[ftl.fdp]``: the FDP statistics log and each handle's bytes."""
        slc_cache: SlcCache | None = None
        """Only with ``[flash.slc_cache]``: host bytes into the SLC cache and folded out."""
        zns: Zns | None = None
        """Only with ``[zns]``: zone states, resets, finishes and refused zone commands."""
        namespaces: list[Namespace] | None = None
        """Only with ``[[namespaces]]``: each namespace's size, flows and bytes."""
        config_file: str | None = None
        """The TOML file the run was configured from, as it was given (None for a dict or an
        MQSim scenario): reports and comparisons name the run by it."""

        # Where the records file is: a folder holding ``request_records.file``, or a temporary
        # folder owned by these results (removed with them).
        _folder: Path | None = PrivateAttr(default=None)
        _scratch: Any = PrivateAttr(default=None)

        model_config = ConfigDict(extra="allow", populate_by_name=True, serialize_by_alias=True)

        @property
        def series(self) -> TimeSeries | None:
            """The document's ``time_series`` (the name results before 0.2 gave it here)."""
            return self.time_series

        def __repr__(self) -> str:
            """One line: what ran and the headline figures (the whole document is
            ``to_dict()``)."""
            requests = sum(f.reads.count + f.writes.count for f in self.flows)
            wa = self.device.gc.write_amplification
            flows = f"{len(self.flows)} flow{'s' if len(self.flows) != 1 else ''}"
            return (
                f"<ssdlab.Results {flows}, {requests:,} requests in "
                f"{self.simulated_seconds:.6g} s simulated: {self.device.iops:,.0f} IOPS, "
                f"{self.device.bandwidth_mib_s:,.1f} MiB/s, write amplification "
                f"{'-' if wa is None else f'{wa:.3f}'} (seed {self.seed}, ssdlab {self.version})>"
            )

        def _repr_html_(self) -> str:
            """Jupyter's view: the summary table per flow and op, and the warnings."""
            return _html_summary(self)

        def plot_cdf(self, ax: Any = None, **options: Any) -> Any:
            """The latency CDF of every flow and op on one matplotlib Axes (returned);
            ``tail=True`` for the tail on a log scale. Options: :func:`ssdlab.plots.plot_cdf`."""
            from ssdlab.plots import plot_cdf

            return plot_cdf(self, ax, **options)

        def plot_time_series(self, ax: Any = None, **options: Any) -> Any:
            """IOPS (or ``metric="p99_us"``, ...) per window of every flow, stalls shaded, on
            one matplotlib Axes (returned). Options: :func:`ssdlab.plots.plot_time_series`."""
            from ssdlab.plots import plot_time_series

            return plot_time_series(self, ax, **options)

        @classmethod
        def from_json(cls, text: str | bytes) -> Results:
            """Load a saved results.json, so earlier runs can be compared with new ones."""
            return cls.model_validate_json(text)

        @classmethod
        def load(cls, path: str | os.PathLike[str]) -> Results:
            """Load a results folder (or its results.json); ``requests()`` then reads the
            records saved beside it. A file that is not a complete results document (cut short
            by a full disk, or not ssdlab's) raises :class:`ResultsFileError` naming it."""
            path = Path(path)
            file = path / "results.json" if path.is_dir() else path
            data = file.read_bytes()
            try:
                results = cls.from_json(data)
            except ValueError as e:  # pydantic's ValidationError is a ValueError
                raise ResultsFileError(_not_a_result(file, data, e)) from None
            results._folder = file.parent
            return results

        def to_dict(self) -> dict[str, Any]:
            """The document as plain JSON data, unknown fields included, for json or pandas."""
            document = self.model_dump(by_alias=True)
            optionals = (
                "fairness",
                "time_series",
                "request_records",
                "energy",
                "firmware",
                "dram",
                "precondition",
                "mapping",
                "data",
            )
            later = ("power_states", "host_interface", "open_channel", "reliability", "fdp")
            later = (*later, "slc_cache", "zns", "namespaces", "config_file")
            for optional in (*optionals, *later):
                if document.get(optional) is None:
                    document.pop(optional, None)
            for part in ("reliability", "slc_cache"):
                if document.get("time_series", {}).get(part, 0) is None:
                    del document["time_series"][part]
            if document.get("host_interface", {}).get("ufs", 0) is None:
                del document["host_interface"]["ufs"]
            if document.get("energy", {}).get("dram_breakdown_joules", 0) is None:
                del document["energy"]["dram_breakdown_joules"]
            for flow in document["flows"]:
                if flow.get("lsm", 0) is None:
                    del flow["lsm"]
                if flow.get("refused", 0) == {}:
                    del flow["refused"]
            for group in [document["device"], *document["flows"]]:
                for op in ("reads", "writes"):
                    if group[op].get("latency_cdf", 0) is None:
                        del group[op]["latency_cdf"]
            return document

        def to_json(self) -> str:
            """The document as JSON text indented like the core's, with arrays of numbers kept
            on one line (the time series stay readable and small)."""
            return _dump(self.to_dict(), 0)

        def save(self, folder: str | os.PathLike[str]) -> Path:
            """Write results.json into `folder`, and the per-request records (if any) as
            requests.parquet beside it. Returns the results.json path."""
            folder = Path(folder)
            folder.mkdir(parents=True, exist_ok=True)
            if self.request_records is not None:
                source = self._records_file()
                if source is not None and source.suffix != ".parquet":
                    with _outputs.atomic_path(folder / "requests.parquet") as tmp:
                        self.requests().to_parquet(tmp, index=False)
                    if source.parent.resolve() == folder.resolve():
                        source.unlink()
                    self.request_records.file = "requests.parquet"
                elif source is not None and source.parent.resolve() != folder.resolve():
                    with _outputs.atomic_path(folder / source.name) as tmp:
                        shutil.copyfile(source, tmp)
            # results.json last: a folder whose results.json exists holds the whole result.
            target = folder / "results.json"
            _outputs.write_text(target, self.to_json() + "\n")
            self._folder = folder
            return target

        def summary(self, device: bool = True) -> pd.DataFrame:
            """One row per flow and op (plus ``flow == "device"`` rows unless ``device=False``):
            count, iops, bandwidth_mib_s, bytes, min/mean/stdev/p50/p90/p99/p99_9/p99_99/max
            latency (``*_us``; NaN for an op that never ran), the extra percentiles of
            ``run.percentiles`` and the mean latency breakdown per step (``<step>_us``)."""
            return _summary(self, device)

        def latency_cdf(self, device: bool = True) -> pd.DataFrame:
            """Columns flow, op, latency_us, fraction: the CDF of each flow's reads and writes."""
            return _latency_cdf(self, device)

        def time_series_frame(self, device: bool = True) -> pd.DataFrame:
            """One row per flow, op and window: window_start_s, window_s, count, bytes, iops,
            bandwidth_mib_s, mean_us, p99_us, max_us (NaN latencies where nothing completed);
            the same as calling the document's ``time_series``: ``results.time_series()``."""
            return _time_series_frame(_require_series(self), device)

        def gc_time_series(self) -> pd.DataFrame:
            """One row per window: blocks erased, pages moved, host pages written, flash pages
            programmed, and the window's write amplification (their ratio; NaN without writes);
            with ``[flash.reliability]`` also read_retries and read_reclaims."""
            return _gc_time_series(self)

        def requests(self) -> pd.DataFrame:
            """The per-request records (``run.request_records``): flow, op, arrival_s,
            latency_us, start_sector, size_bytes and the breakdown ``<step>_us``, in completion
            order."""
            import pandas as pd

            path = self._records_file()
            if path is None:
                raise ValueError(
                    'no per-request records: set run.request_records = "all" (or a '
                    "fraction) and keep the results folder with its requests file"
                )
            if path.suffix == ".parquet":
                return pd.read_parquet(path)
            steps = list(self.device.reads.latency_breakdown_us)
            return _read_records(path, [f.name for f in self.flows], steps)

        def to_parquet(self, folder: str | os.PathLike[str]) -> list[Path]:
            """Write summary, latency_cdf, time_series, gc_time_series (and requests, if
            recorded) as ``<name>.parquet`` in `folder`; returns the paths written."""
            folder = Path(folder)
            folder.mkdir(parents=True, exist_ok=True)
            frames = {"summary": self.summary(), "latency_cdf": self.latency_cdf()}
            if self.time_series is not None:
                frames["time_series"] = self.time_series_frame()
                frames["gc_time_series"] = self.gc_time_series()
            if self._records_file() is not None:
                frames["requests"] = self.requests()
            paths = []
            for name, frame in frames.items():
                path = folder / f"{name}.parquet"
                with _outputs.atomic_path(path) as tmp:
                    frame.to_parquet(tmp, index=False)
                paths.append(path)
            return paths

        def _records_file(self) -> Path | None:
            if self.request_records is None or self._folder is None:
                return None
            candidates = [
                self._folder / self.request_records.file,
                self._folder / "requests.parquet",
            ]
            return next((c for c in candidates if c.exists()), None)

        def _keep_records(self, folder: Path, scratch: Any = None) -> None:
            """The records file is in `folder`; `scratch` (a TemporaryDirectory) lives as long
            as these results."""
            self._folder = folder
            self._scratch = scratch

        def summary_table(self) -> str:
            """The core's fixed-width summary, so scripts print the same table as the tools."""
            return _core.summary_table_from_json(self.to_json())

        def flow(self, name: str) -> FlowResults:
            """Look a flow up by name, which stays stable when flows are added or reordered."""
            for f in self.flows:
                if f.name == name:
                    return f
            names = ", ".join(f.name for f in self.flows)
            raise KeyError(f"no flow named {name!r} (flows: {names})")


def _dump(value: Any, indent: int) -> str:
    """JSON like ``json.dumps(indent=2)``, but a list of scalars on one line."""
    pad = "  " * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}{json.dumps(k)}: {_dump(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            # One call for the whole list: the same text as joining each item's dumps with
            # ", " (json's default separators), without a call per number, which took minutes
            # for a run of 1,000 flows' latency CDFs and time series.
            return json.dumps(value)
        items = [pad + _dump(v, indent + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * indent + "]"
    return json.dumps(value)
