"""Report sections beyond the core charts: what was simulated (the device, the workload, the
state the drive started in, the seed, the version and the warnings), a zoned namespace's zones,
flash reliability's read retries, and issue 17's device features: FDP placement (per-handle
write amplification and the events log), the SLC write cache (its traffic and fill over time)
and an LSM store on a zoned namespace (its own write amplification). ``report.py`` and
``compare.py`` call them; each takes the page and the results and draws nothing the results do
not hold.

The config echo in results.json holds only the keys the config set; the device's other values
come from the config schema's defaults, a flow's from the defaults README.md documents."""

from __future__ import annotations

import html
import json
import math
import re
from functools import cache
from typing import TYPE_CHECKING, Any

from ssdlab import plots

if TYPE_CHECKING:
    from ssdlab.results import Results

DASH = "\u2014"  # an undefined number: never shown as 0

_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([KMGT]?i?B)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
_UNITS |= {"KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
_INTERFACES = {
    "nvme": "NVMe",
    "sata": "SATA",
    "ufs": "UFS",
    "open_channel": "Open-Channel",
}


@cache
def _defaults() -> dict[str, Any]:
    from ssdlab import _core

    schema = json.loads(_core.config_schema_json())
    return {k: v.get("default") for k, v in schema.get("properties", {}).items()}


def setting(config: Any, path: str) -> Any:
    """The value at `path` ("flash.channels") of the config echo, or the schema's default."""
    for source in (config, _defaults()):
        node = source
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                node = None
                break
            node = node[part]
        if node is not None:
            return node
    return None


def size_bytes(value: Any) -> int | None:
    """ "16KiB" -> 16384; a number is bytes already; None when not a size."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    match = _SIZE.match(str(value)) if value is not None else None
    if match is None:
        return None
    return int(float(match.group(1)) * _UNITS[(match.group(2) or "").upper()])


def bytes_text(n: float | None) -> str:
    """1099511627776 -> "1.00 TiB (1.10 TB)": binary units, and decimal ones as drives are sold."""
    if n is None:
        return DASH
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            binary = f"{_significant(n / scale)} {unit}"
            break
    else:
        return f"{int(n):,} B"
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{binary} ({_significant(n / scale)} {unit})"
    return binary


def _significant(value: float) -> str:
    """Three significant digits, whole numbers from 100 up (1,023 rather than 1.02e+03)."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def number(value: Any, digits: int = 3) -> str:
    """A float with `digits` decimals, or the dash when it is undefined (None or NaN)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return DASH
    return f"{value:,.{digits}f}"


def percent(fraction: Any) -> str:
    if fraction is None or not isinstance(fraction, int | float):
        return DASH
    return f"{fraction * 100:.4g} %"


def interface_text(results: Results) -> str:
    config = results.config
    kind = str(setting(config, "host.interface") or "nvme")
    name = _INTERFACES.get(kind, kind)
    if kind in ("nvme", "open_channel"):
        lanes = setting(config, "host.pcie_lanes")
        rate = setting(config, "host.pcie_lane_rate")
        name += f", PCIe {lanes} x {rate}"
    elif kind == "sata":
        name += f", {setting(config, 'host.sata_link_rate')}"
    elif kind == "ufs":
        gear, lanes = setting(config, "host.ufs.gear"), setting(config, "host.ufs.lanes")
        name += f", HS-G{gear} x {lanes} lanes"
    link = getattr(results.host_interface, "link_bytes_per_second", None)
    if link:
        name += f" ({link / 1e9:.3g} GB/s link)"
    return name


def device_rows(results: Results) -> list[list[str]]:
    """The device as configured: cells, geometry, capacity, spare, interface, mapping, cache."""
    config = results.config
    flash = {k: setting(config, f"flash.{k}") for k in _GEOMETRY}
    page = size_bytes(flash["page_size"])
    geometry = (
        f"{flash['channels']} channels x {flash['chips_per_channel']} chips x "
        f"{flash['dies_per_chip']} dies x {flash['planes_per_die']} planes x "
        f"{flash['blocks_per_plane']:,} blocks x {flash['pages_per_block']} pages of "
        f"{flash['page_size']}"
    )
    timing = setting(config, "flash.timing") or {}
    logical = results.device.logical_capacity_bytes
    physical = results.device.physical_capacity_bytes
    spare = (physical - logical) / physical if physical else None
    mapping = str(setting(config, "ftl.mapping"))
    if setting(config, "ftl.ideal_mapping"):
        mapping += " (ideal: the whole map in DRAM)"
    else:
        mapping += f" (cached mapping table {setting(config, 'ftl.cmt_capacity')})"
    rows = [
        ["cell type", str(flash["technology"])],
        ["geometry", geometry],
        [
            "flash timing",
            ", ".join(f"{k} {timing[k]}" for k in ("read", "program", "erase") if k in timing),
        ],
        ["capacity (logical)", bytes_text(logical)],
        ["capacity (physical)", bytes_text(physical)],
        [
            "over-provisioning",
            f"{percent(spare)} of the flash is spare (ftl.over_provisioning = "
            f"{setting(config, 'ftl.over_provisioning')})",
        ],
        ["host interface", interface_text(results)],
        ["mapping", mapping],
        [
            "garbage collection",
            f"{setting(config, 'ftl.gc_policy')}, starts below "
            f"{percent(setting(config, 'ftl.gc_threshold'))} free blocks",
        ],
        ["data cache", str(setting(config, "cache.capacity"))],
    ]
    if page is None:
        rows[1][1] += " (page size not understood)"
    for key, label in (("flash.slc_cache", "SLC cache"), ("zns", "zoned namespace")):
        value = setting(config, key)
        if value:
            rows.append([label, _settings_text(value)])
    if config.get("namespaces"):
        rows.append(["namespaces", f"{len(config['namespaces'])} (see the config below)"])
    compat = setting(config, "compat")
    if compat and compat != "default":
        rows.append(["compat", f"{compat} (behaves as that simulator where models differ)"])
    return rows


_GEOMETRY = (
    "technology",
    "channels",
    "chips_per_channel",
    "dies_per_chip",
    "planes_per_die",
    "blocks_per_plane",
    "pages_per_block",
    "page_size",
)


def _settings_text(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k} = {_settings_text(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(_settings_text(v) for v in value) + "]"
    return json.dumps(value) if isinstance(value, str) else str(value)


def _size_text(value: Any) -> str:
    if isinstance(value, dict):
        mean, stdev = value.get("mean"), value.get("stdev")
        return f"{mean} +- {stdev} (normal)" if stdev else str(mean)
    return str(value)


def flow_text(flow: dict[str, Any]) -> str:
    """One flow of the config in words ("70 % reads of 4KiB, uniform over 75 % of the logical
    space, queue depth 32, 200,000 requests"); unset keys take the documented defaults."""
    if flow.get("kind") == "trace":
        parts = [f"trace {flow.get('path')} (format {flow.get('format', 'auto')})"]
        for key in ("device", "ops", "start", "end", "blkparse_event"):
            if key in flow:
                parts.append(f"{key} {flow[key]}")
        if flow.get("time_scale", 1.0) != 1.0:
            parts.append(f"inter-arrival times x {flow['time_scale']}")
    else:
        reads = flow.get("read_fraction", 0.0)
        if reads == 1:
            mix = "reads"
        elif reads == 0:
            mix = "writes"
        else:
            mix = f"{reads * 100:.3g} % reads, the rest writes,"
        parts = [f"{mix} of {_size_text(flow.get('request_size', '4KiB'))}"]
        if "alignment" in flow:
            parts[0] += f" aligned to {flow['alignment']}"
        address = flow.get("address", "uniform")
        working_set = flow.get("working_set", 1.0)
        where = (
            "the whole logical space"
            if working_set == 1
            else f"{working_set * 100:.3g} % of the logical space"
        )
        if address == "hotcold":
            hot = flow.get("hot_traffic"), flow.get("hot_fraction")
            address = f"hot/cold ({percent(hot[0])} of requests to {percent(hot[1])} of it)"
        parts.append(f"{address} over {where}")
    if "queue_depth" in flow:
        parts.append(f"queue depth {flow['queue_depth']}")
    if "rate" in flow:
        parts.append(f"open loop at {flow['rate']}")
    if "requests" in flow:
        parts.append(f"{flow['requests']:,} requests")
    if "duration" in flow:
        parts.append(f"for {flow['duration']}")
    return ", ".join(parts)


def flow_settings(flow: dict[str, Any]) -> str:
    """The flow's keys as the config set them (name left out)."""
    return "; ".join(f"{k} = {_settings_text(v)}" for k, v in flow.items() if k != "name")


def precondition_text(results: Results) -> str:
    """How full the drive was, whether it was in steady state, and the aging's write
    amplification (results.json's ``precondition``)."""
    p = results.precondition
    if p is None:
        return "Not recorded (results from before preconditioning modes)."
    page = size_bytes(setting(results.config, "flash.page_size"))
    logical = results.device.logical_capacity_bytes
    full = p.mapped_pages * page / logical if page and logical else None
    fullness = f"{percent(full)} of the logical space held data" if full is not None else ""
    free = f"{p.free_blocks:,} free blocks"
    wa = getattr(p, "write_amplification", None)
    if p.mode == "steady":
        return (
            f"Steady state: the model aged the drive to where {number(p.drive_writes, 2)} drive "
            f"writes of this workload would leave it (no writes simulated); {fullness}, {free}. "
            f"Write amplification of the aging {number(wa)} (its prediction for the run)."
        )
    if p.mode == "simulate":
        return (
            f"Aged by simulating {number(p.drive_writes, 2)} drive writes before the run "
            f"(steady state if enough); {fullness}, {free}. Write amplification of the aging "
            f"{number(wa)}."
        )
    if p.mode == "fill":
        return (
            f"Filled, not steady state: {fullness}, each page written once, {free}; no garbage "
            "collection has run yet, so the first writes find clean blocks a used drive lacks."
        )
    if p.mode == "none":
        return (
            "Empty, not steady state: nothing written before the run (a fresh drive; garbage "
            "collection starts only once it fills)."
        )
    return f"Mode {p.mode}: {fullness}, {free}."


def title(results: Results) -> str:
    """What the run simulated, in one line: the drive and its workload."""
    config = results.config
    drive = (
        f"{bytes_text(results.device.logical_capacity_bytes).split(' (')[0]} "
        f"{setting(config, 'flash.technology')} "
        f"{_INTERFACES.get(str(setting(config, 'host.interface')), 'SSD')} drive"
    )
    flows = config.get("flows") or []
    if len(flows) == 1 and isinstance(flows[0], dict):
        f = flows[0]
        name = f.get("name", results.flows[0].name if results.flows else "flow")
        if f.get("kind") == "trace":
            return f"{drive}, trace {f.get('path')}"
        reads = f.get("read_fraction", 0.0)
        mix = {0: "writes", 1: "reads"}.get(reads, f"{reads * 100:.3g} % reads")
        short = [mix, _size_text(f.get("request_size", "4KiB"))]
        if "queue_depth" in f:
            short.append(f"QD {f['queue_depth']}")
        return f"{drive}, {name} ({', '.join(short)})"
    names = [f.name for f in results.flows]
    if len(names) > 4:
        names = [*names[:3], f"{len(names) - 3} more"]
    return f"{drive}, flows {', '.join(names)}"


def setup_section(page: Any, results: Results) -> None:
    """What was simulated: the device, each flow, the state the drive started in, the seed,
    the version and every warning."""
    page.heading("What was simulated")
    page.paragraph(
        f"ssdlab {results.version}, seed {results.seed}: {results.simulated_seconds:.6g} "
        f"simulated seconds, {results.events:,} events, {results.wall_seconds:.3g} s wall "
        f"({results.setup_wall_seconds:.3g} s of it preconditioning).",
        css="meta",
    )
    page.table(["device", ""], device_rows(results))
    flows = results.config.get("flows") or []
    done = {f.name: f.reads.count + f.writes.count for f in results.flows}
    rows = []
    for i, flow in enumerate(flows):
        if not isinstance(flow, dict):
            continue
        name = flow.get("name", results.flows[i].name if i < len(results.flows) else f"flow-{i}")
        rows.append([name, flow_text(flow), done.get(name), flow_settings(flow)])
    page.table(["flow", "workload", "completed", "as configured"], rows, text_columns=2)
    page.sections.append(f"<p><b>Starting state.</b> {html.escape(precondition_text(results))}</p>")
    if results.warnings:
        items = "".join(f"<li>{html.escape(w)}</li>" for w in results.warnings)
        page.sections.append(
            f'<p><b>Warnings ({len(results.warnings)}).</b></p><ul class="warnings">{items}</ul>'
        )
    else:
        page.paragraph("No warnings.")


def _small(value: Any) -> str:
    """A rate such as an RBER (3.2e-05), or the dash when undefined."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return DASH
    return f"{value:.3g}"


def zns_section(page: Any, results: Results) -> None:
    """A zoned namespace: its layout, zone states at the end, the zone commands and what the
    zones refused (resets' erases show in the GC chart above as blocks erased)."""
    z = results.zns
    page.heading("Zoned namespace")
    wa = number(z.write_amplification)
    page.paragraph(
        f"{z.zones:,} zones of {z.zone_capacity_bytes / 2**20:,.1f} MiB capacity in "
        f"{z.zone_size_bytes / 2**20:,.1f} MiB, each over {z.zone_planes} plane(s); at most "
        f"{z.max_open_zones} open and {z.max_active_zones} active (peaks {z.peak_open_zones} and "
        f"{z.peak_active_zones}). Write amplification {wa}; GC moved {z.gc_bytes_moved:,} bytes."
    )
    page.table(["state", "zones at the end"], [[s, n] for s, n in z.zone_states.items()])
    commands = [
        ["writes", z.writes],
        ["appends", z.appends],
        ["explicit opens", z.explicit_opens],
        ["closes", z.closes],
        ["implicit closes (open limit)", z.implicit_closes],
        ["finishes", z.finishes],
        ["resets", z.resets],
        ["blocks erased by resets", z.blocks_erased],
        ["padding bytes programmed by finishes", z.pad_bytes],
        *[[f"refused: {status}", n] for status, n in z.failed.items()],
    ]
    page.table(["zone commands", "count"], commands)


def reliability_section(page: Any, results: Results) -> None:
    """Read retries from flash reliability: reads by retry level, their latency, and the
    retries and reclaims over time."""
    import matplotlib.pyplot as plt

    rel = results.reliability
    page.heading("Flash reliability: read retries")
    page.paragraph(
        f"{rel.pe_cycles_at_start:,} P/E cycles and {rel.data_age_days_at_start:g}-day-old data "
        f"at start; mean RBER {_small(rel.mean_rber)}, highest {_small(rel.max_rber)}; "
        f"{rel.read_retries:,} pages read again, {rel.uncorrectable_reads:,} uncorrectable, "
        f"{rel.read_reclaims:,} blocks rewritten by read reclaim"
    )
    page.table(
        ["retries", "host reads", "mean us", "p99 us", "max us"],
        [[r.retries, r.count, r.mean, r.p99, r.max] for r in rel.read_latency_us_by_retries],
    )
    series = plots.series_document(results)
    if series is None or series.reliability is None:
        return
    gc = results.gc_time_series()
    fig, ax = plt.subplots(figsize=(11, 3.2))
    x = gc["window_start_s"] + gc["window_s"] / 2
    ax.plot(x, gc["read_retries"] / gc["window_s"], label="pages read again / s")
    ax.set(xlabel="simulated time (s)", ylabel="pages read again / s", title="read retries")
    # Blocks are a few hundred times fewer than pages: their own axis.
    blocks = ax.twinx()
    blocks.plot(x, gc["read_reclaims"] / gc["window_s"], color="C3", label="blocks reclaimed / s")
    blocks.set_ylabel("blocks reclaimed / s", color="C3")
    ax.grid(True, alpha=0.3)
    lines = ax.get_lines() + blocks.get_lines()
    ax.legend(lines, [line.get_label() for line in lines], fontsize="small", loc="upper left")
    fig.tight_layout()
    page.figure(fig, "reliability_over_time", "read retries and read reclaims over time")


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f}"


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def fdp_section(page: Any, results: Results) -> None:
    """Flexible Data Placement: the statistics log, each handle's bytes and write amplification,
    and the events log."""
    f = results.fdp
    if f is None:
        return
    page.heading("Flexible Data Placement")
    wa = f.media_bytes_written / f.host_bytes_written if f.host_bytes_written else float("nan")
    page.paragraph(
        f"{f.reclaim_unit_handles} reclaim unit handles, reclaim units of "
        f"{_mib(f.reclaim_unit_bytes)} MiB. Host bytes written {_mib(f.host_bytes_written)} MiB, "
        f"media bytes written {_mib(f.media_bytes_written)} MiB (write amplification "
        f"{wa:.3f}), media bytes erased {_mib(f.media_bytes_erased)} MiB."
    )
    page.table(
        ["handle", "flows", "host MiB", "media MiB", "WA", "units opened", "units erased"],
        [
            [
                h.handle,
                ", ".join(h.flows),
                _mib(h.host_bytes_written),
                _mib(h.media_bytes_written),
                _ratio(h.write_amplification),
                h.reclaim_units_opened,
                h.reclaim_units_erased,
            ]
            for h in f.handles
        ],
        text_columns=2,
    )
    events = f.events
    page.paragraph(
        f"FDP events: {events.invalid_placement_identifier:,} writes carried a placement "
        "handle the device does not offer (placed by handle 0)."
    )
    if events.log:
        page.table(
            ["event", "time (us)", "placement identifier", "namespace", "flow"],
            [
                [e.event, e.time_us, e.placement_identifier, e.namespace_id, e.flow]
                for e in events.log[-10:]
            ],
        )


def slc_cache_section(page: Any, results: Results) -> None:
    """The SLC write cache: where host bytes went, what folding moved, and (with a time series)
    the cache's traffic and fill per window."""
    c = results.slc_cache
    if c is None:
        return
    import matplotlib.pyplot as plt

    page.heading("SLC write cache")
    page.paragraph(
        f"{c.mode} cache of up to {_mib(c.max_capacity_bytes)} MiB ({_mib(c.capacity_bytes_at_end)}"
        f" MiB at the end); host bytes into SLC {_mib(c.host_bytes_to_slc)} MiB, straight to the "
        f"dense cells {_mib(c.host_bytes_to_dense)} MiB; {c.blocks_folded:,} blocks folded "
        f"({_mib(c.bytes_folded)} MiB moved), {c.blocks_in_use_at_end:,} SLC blocks in use at the "
        "end."
    )
    series = results.series
    if series is None or series.slc_cache is None:
        return
    s = series.slc_cache
    x = [a + d / 2 for a, d in zip(series.start_seconds, series.duration_seconds, strict=True)]
    fig, (traffic, fill) = plt.subplots(2, 1, figsize=(11, 5), sharex=True)
    lines = ((s.host_pages_to_slc, "host pages into SLC"), (s.pages_folded, "pages folded"))
    for values, label in lines:
        rate = [v / d if d else 0.0 for v, d in zip(values, series.duration_seconds, strict=True)]
        traffic.plot(x, rate, label=label)
    traffic.set(ylabel="pages / s", title="SLC cache traffic")
    traffic.legend(fontsize="small")
    fill.plot(x, s.blocks_in_use, color="C2")
    fill.set(xlabel="simulated time (s)", ylabel="SLC blocks in use", title="SLC cache fill")
    for a in (traffic, fill):
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    page.figure(fig, "slc_cache_over_time", "SLC cache traffic and fill over time")


def lsm_section(page: Any, results: Results) -> None:
    """LSM stores on a zoned namespace: each store's flushes, compactions and write
    amplification."""
    stores = [(f.name, f.lsm) for f in results.flows if f.lsm is not None]
    if not stores:
        return
    page.heading("LSM stores on zones")
    page.paragraph(
        "Each store places its files in zones by level and resets a zone once its files are "
        "deleted; host write amplification is the bytes the store wrote (flushes and compaction "
        "outputs) over the bytes its flushes wrote."
    )
    page.table(
        ["flow", "files per level", "flushes", "compactions", "user MiB", "host MiB", "host WA"],
        [
            [
                name,
                " / ".join(str(n) for n in s.files_per_level),
                s.flushes,
                s.compactions,
                _mib(s.user_bytes_written),
                _mib(s.host_bytes_written),
                _ratio(s.host_write_amplification),
            ]
            for name, s in stores
        ],
        text_columns=2,
    )
