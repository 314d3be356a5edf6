"""Shared helpers of the MQSim interference studies (Tavakkol et al., FAST 2018).

Every study runs some flows together on one device ("shared") and each flow by itself on the same
device ("alone"), then compares the flows' mean response times:

- slowdown S_i = RT_i(shared) / RT_i(alone)
- fairness F = min_i S_i / max_i S_i (1 is perfectly fair)
- weighted speedup WS = sum_i RT_i(alone) / RT_i(shared) (the number of flows when nothing
  interferes)

The device is the paper's Table 3 drive (see `device`). Every study runs without a data cache
(flows with `cache_mode = "off"`) instead of MQSim's 256 MB write cache; they all use reads only,
which a write cache would not serve anyway (nothing was written through it).

The write-cache study is the exception: its flows write through MQSim's 256 MB cache
(`cached_device`, `write_flow`, `write_interference`, at the end of this file).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import ssdlab
from ssdlab.api import fairness_metrics

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "results" / "validation"

PAGE_BYTES = 8192
SECTOR_BYTES = 512
# Flows only address the preconditioned part of the logical space, so every read finds data.
MAPPED_FRACTION = 0.9
# ssdlab caches a mapping entry in 8 bytes (crates/ssdlab-core/src/ftl/cmt.rs, ENTRY_BYTES).
SSDLAB_CMT_ENTRY_BYTES = 8
# The paper's CMT (Table 3): 4 MB, read as 4 MiB as MQSim's XML gives capacities in bytes.
PAPER_CMT_BYTES = 4 * 1024 * 1024

GEOMETRY = {
    "channels": 8,
    "chips_per_channel": 4,
    "dies_per_chip": 2,
    "planes_per_die": 2,
    "blocks_per_plane": 2048,
    "pages_per_block": 256,
    "page_size": "8KiB",
}


def physical_pages(blocks_per_plane: int = GEOMETRY["blocks_per_plane"]) -> int:
    g = GEOMETRY
    planes = g["channels"] * g["chips_per_channel"] * g["dies_per_chip"] * g["planes_per_die"]
    return planes * blocks_per_plane * g["pages_per_block"]


def mqsim_cmt_entry_bytes(pages: int, sectors_per_page: int = PAGE_BYTES // SECTOR_BYTES) -> int:
    """MQSim's CMT entry size: logical and physical page numbers plus a sector bitmap, in bytes
    (Address_Mapping_Unit_Page_Level.cpp: ceil((2 log2(pages) + sectors per page) / 8))."""
    return math.ceil((2 * math.log2(pages) + sectors_per_page) / 8)


def mqsim_cmt_entries(cmt_bytes: int = PAPER_CMT_BYTES) -> int:
    """Entries MQSim's CMT of `cmt_bytes` holds on the full Table 3 drive (9-byte entries)."""
    return cmt_bytes // mqsim_cmt_entry_bytes(physical_pages())


def ssdlab_cmt_bytes_for_paper() -> int:
    """ssdlab's `cmt_capacity` that caches as many entries as the paper's 4 MB CMT in MQSim.

    MQSim spends 9 bytes per entry on this drive (2 x 26 address bits + 16 sector bits), ssdlab
    8, so the same 4 MiB would hold 12.5 % more entries in ssdlab. Matching the entry count keeps
    the fraction of the drive the CMT covers (0.75 % of the logical pages) the same.
    """
    return mqsim_cmt_entries() * SSDLAB_CMT_ENTRY_BYTES


def device(
    *,
    ideal_mapping: bool = True,
    cmt_capacity_bytes: int | None = None,
    queue_fetch_size: int = 512,
    seed: int = 1,
) -> dict[str, Any]:
    """The MQSim paper's Table 3 drive as an ssdlab config (flows are added by the caller).

    PCIe 3.0 x4 at 1 GB/s per lane (MQSim's default XML), 8 channels x 4 chips x 2 dies x
    2 planes, 2048 blocks of 256 8-KiB pages per plane (512 GiB), ONFI NV-DDR2 8-bit at
    333 MT/s, 75 us read, 750 us program, 3.8 ms erase, QueueFetchSize 512 unless given. The
    drive is 90 % full (packed, as after a sequential fill), so reads hit mapped data and no
    study triggers GC. Every flow bypasses the data cache (`read_flow`).
    """
    # Shared address domain: every flow addresses the whole logical space, and the studies place
    # their flows in it with working_set / working_set_start.
    ftl: dict[str, Any] = {"ideal_mapping": ideal_mapping, "address_domains": "shared"}
    if not ideal_mapping:
        capacity = (
            cmt_capacity_bytes if cmt_capacity_bytes is not None else ssdlab_cmt_bytes_for_paper()
        )
        ftl["cmt_capacity"] = f"{capacity}B"
        ftl["cmt_sharing"] = "shared"
    return {
        "seed": seed,
        "host": {
            "interface": "nvme",
            "pcie_lanes": 4,
            "pcie_lane_rate": "1GB/s",
            "queue_fetch_size": queue_fetch_size,
        },
        # Out-of-order (Sprinkler-style) die scheduling, as in the paper's MQSim. ssdlab's default,
        # "priority", schedules the same way when every flow has the same priority.
        "controller": {"scheduling": "out-of-order"},
        "ftl": ftl,
        "flash": {
            **GEOMETRY,
            "channel_width_bytes": 1,
            "channel_rate": "333MT/s",
            "technology": "MLC",
            "timing": {"read": "75us", "program": "750us", "erase": "3.8ms"},
        },
        "precondition": {"mode": "fill", "occupancy": MAPPED_FRACTION, "layout": "packed"},
    }


def read_flow(
    name: str,
    queue_depth: int,
    address: str = "uniform",
    *,
    duration: str,
    working_set: float = MAPPED_FRACTION,
    working_set_start: float = 0.0,
    seed: int | None = None,
) -> dict[str, Any]:
    """A closed-loop flow of 8 KiB page-aligned reads that runs for `duration` of simulated time.

    Every flow of a study gets the same duration, so the flows overlap for the whole run. Without
    a `seed`, `interference` gives the flow one by its position (1, 2, ...).
    """
    flow: dict[str, Any] = {
        "name": name,
        "read_fraction": 1.0,
        "request_size": "8KiB",
        "alignment": "8KiB",
        "address": address,
        "queue_depth": queue_depth,
        "duration": duration,
        "working_set": working_set,
        "working_set_start": working_set_start,
        # No data cache (ssdlab's default for flows; MQSim's workloads default to a write cache).
        "cache_mode": "off",
    }
    if seed is not None:
        flow["seed"] = seed
    return flow


@dataclass(frozen=True)
class FlowRun:
    """What one flow measured in one run."""

    name: str
    mean_us: float
    p99_us: float
    iops: float
    requests: int
    cmt_hit_rate: float
    cmt_miss_wait_us: float


@dataclass
class Interference:
    """One shared run and the matching alone runs of its flows. Slowdown, fairness and weighted
    speedup come from the one formula the API uses (`ssdlab.api.fairness_metrics`)."""

    shared: dict[str, FlowRun]
    alone: dict[str, FlowRun]

    @property
    def metrics(self) -> ssdlab.Fairness:
        names = list(self.shared)
        shared_rt = {n: self.shared[n].mean_us for n in names}
        alone_rt = {n: self.alone[n].mean_us for n in names}
        return fairness_metrics(names, shared_rt, alone_rt)[0]

    def slowdown(self, name: str) -> float:
        return self.metrics.slowdown[name]

    @property
    def slowdowns(self) -> list[float]:
        return [self.slowdown(name) for name in self.shared]

    @property
    def fairness(self) -> float:
        return self.metrics.fairness

    @property
    def weighted_speedup(self) -> float:
        return self.metrics.weighted_speedup

    def to_dict(self) -> dict[str, Any]:
        return {
            "shared": {k: asdict(v) for k, v in self.shared.items()},
            "alone": {k: asdict(v) for k, v in self.alone.items()},
            "slowdowns": dict(zip(self.shared, self.slowdowns, strict=True)),
            "fairness": self.fairness,
            "weighted_speedup": self.weighted_speedup,
        }


def _flow_runs(results: ssdlab.Results) -> dict[str, FlowRun]:
    runs = {}
    for f in results.flows:
        runs[f.name] = FlowRun(
            name=f.name,
            mean_us=f.reads.latency_us.mean,
            p99_us=f.reads.latency_us.p99,
            iops=f.iops,
            requests=f.requests,
            cmt_hit_rate=f.cmt_hit_rate,
            cmt_miss_wait_us=f.latency_breakdown_us.get("cmt_miss_wait", 0.0),
        )
    return runs


def _check(results: ssdlab.Results) -> None:
    """Stop if a study config does something it is not meant to (unmapped reads, GC)."""
    flash = results.device.flash
    if flash.unmapped_reads or results.device.gc.blocks_erased or results.warnings:
        raise RuntimeError(
            f"unexpected run: {flash.unmapped_reads} unmapped reads, "
            f"{results.device.gc.blocks_erased} GC erases, warnings {results.warnings}"
        )


def jobs() -> int:
    """Runs at a time, each in its own process (building the drive holds the GIL for a second,
    so threads would queue on it); each run of the 512 GiB drive needs about 0.5 GiB.
    SSDLAB_JOBS overrides."""
    return int(os.environ.get("SSDLAB_JOBS", min(2, os.cpu_count() or 1)))


def _simulate(key: str) -> tuple[dict[str, FlowRun], float, int]:
    results = ssdlab.simulate(json.loads(key))
    _check(results)
    return _flow_runs(results), results.wall_seconds, results.events


def run_pool(
    worker: Callable[[str], Any], keys: dict[str, str], describe: Callable[[str, Any], str]
) -> dict[str, Any]:
    """The one runner of the studies: `worker(key)` for every named key (config JSON text),
    jobs() at a time in separate processes, printing `describe(name, result)` as each one
    finishes and the total time at the end."""
    out: dict[str, Any] = {}
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs()) as pool:
        futures = {pool.submit(worker, key): name for name, key in keys.items()}
        for future in as_completed(futures):
            name = futures[future]
            out[name] = result = future.result()
            text = describe(name, result)
            print(f"  [{len(out)}/{len(keys)}] {text}", file=sys.stderr, flush=True)
    print(f"  {len(keys)} runs in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    return out


def run_named(
    run_one: Callable[[str], dict[str, Any]],
    configs: dict[str, dict[str, Any]],
    describe: Callable[[dict[str, Any]], str],
) -> dict[str, dict[str, Any]]:
    """Runs `run_one` on every named config (as sorted JSON text) with `run_pool`, printing
    `describe(result)` (or the error it returned) as each one finishes."""

    def line(name: str, result: dict[str, Any]) -> str:
        text = f"FAILED {result['error'][:160]}" if "error" in result else describe(result)
        return f"{name}: {text}"

    keys = {name: json.dumps(c, sort_keys=True) for name, c in configs.items()}
    return run_pool(run_one, keys, line)


def _unique_runs(
    worker: Callable[[str], Any], configs: Sequence[dict[str, Any]], describe: Callable[[Any], str]
) -> list[Any]:
    """`worker` on every config, identical ones once, in the configs' order."""
    keys = [json.dumps(c, sort_keys=True) for c in configs]
    unique = {key: key for key in dict.fromkeys(keys)}
    measured = run_pool(worker, unique, lambda _, result: describe(result))
    return [measured[k] for k in keys]


def run_all(configs: Sequence[dict[str, Any]], label: str = "") -> list[dict[str, FlowRun]]:
    """Simulates every config (identical ones once), a few at a time, reporting progress."""

    def describe(result: tuple[dict[str, FlowRun], float, int]) -> str:
        runs, wall, events = result
        return f"{label}{'+'.join(runs)}: {wall:.1f} s wall, {events:,} events"

    return [runs for runs, _, _ in _unique_runs(_simulate, configs, describe)]


def interference(
    experiments: Sequence[tuple[dict[str, Any], Sequence[dict[str, Any]]]], label: str = ""
) -> list[Interference]:
    """For each (device, flows): the shared run and each flow alone on the same device.

    Every flow gets its own seed (`flows[].seed`; by position unless it has one), so alone it
    issues exactly the requests it issues shared. Alone runs that several experiments share (the
    same flow on the same device) run once.
    """
    configs: list[dict[str, Any]] = []
    for dev, flows in experiments:
        seeded = [{"seed": i + 1, **f} for i, f in enumerate(flows)]
        configs.append({**copy.deepcopy(dev), "flows": seeded})
        configs.extend({**copy.deepcopy(dev), "flows": [f]} for f in seeded)
    runs = iter(run_all(configs, label))
    out = []
    for _, flows in experiments:
        shared = next(runs)
        alone = {f["name"]: next(runs)[f["name"]] for f in flows}
        out.append(Interference(shared=shared, alone=alone))
    return out


def print_table(title: str, headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Prints a Markdown table (so it pastes into docs/validation.md) and returns its text."""
    rows = [list(r) for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    text = "\n".join(
        [
            line(headers),
            "|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|",
            *(line(r) for r in rows),
        ]
    )
    print(f"\n{title}\n\n{text}\n")
    return text


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (files only, no display needed)."""
    try:
        import matplotlib
    except ModuleNotFoundError:
        sys.exit("matplotlib is missing: .venv/bin/python -m pip install 'matplotlib>=3.8'")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(name: str, figure: Any, data: dict[str, Any]) -> Path:
    """Writes results/validation/<name>.png and the numbers behind it as <name>.json."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    png = RESULTS_DIR / f"{name}.png"
    figure.savefig(png, dpi=120, bbox_inches="tight")
    (RESULTS_DIR / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {png.relative_to(ROOT)} and {name}.json", file=sys.stderr)
    return png


def requests_study_main(
    name: str,
    doc: str,
    default_requests: int,
    requests_help: str,
    study: Callable[[int], Any],
    table: Callable[[Any], str],
) -> None:
    """The command line of a study whose one knob is `--requests`: runs it, prints its table
    and writes its outputs (`write_outputs`)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=default_requests, help=requests_help)
    args = parser.parse_args()
    rows = study(args.requests)
    write_outputs(name, table(rows), rows)


def write_outputs(name: str, table: str, rows: Any) -> None:
    """A study's Markdown table and its numbers: results/validation/<name>/{table.md,
    <name>.json}."""
    out = RESULTS_DIR / name
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.md").write_text(table.rstrip("\n") + "\n")
    (out / f"{name}.json").write_text(json.dumps(rows, indent=2) + "\n")


def fmt(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}"


# Write-cache contention: flows that write through the data cache. Added for
# validation/write_cache_contention.py; the read-only studies above do not use them.

# The paper's write cache (Table 3): 256 MB, read as 256 MiB, as MQSim's XML gives it in bytes
# (Data_Cache_Capacity 268435456).
PAPER_WRITE_CACHE_BYTES = 256 * 1024 * 1024


def cached_device(
    *,
    sharing: str = "shared",
    capacity_bytes: int = PAPER_WRITE_CACHE_BYTES,
    seed: int = 1,
) -> dict[str, Any]:
    """`device` (ideal CMT) with a data cache of `capacity_bytes`, one LRU for all flows
    (`sharing = "shared"`) or an equal share per flow (`"partitioned"`).

    The DRAM is MQSim's default (ssdconfig.xml: 8 KiB rows, 100 MT/s, 1-byte bursts, tRCD = tCL =
    tRP = 13 ns), set explicitly. Only flows with a `cache_mode` other than "off" use the cache.
    Dirty lines go to flash only when a write needs their room (`cache.destage = "when-full"`,
    the model these studies were run with; the default since issue 16 also writes back in the
    background, which takes the flushes off the writes' path until the drive falls behind).
    """
    dev = device(ideal_mapping=True, seed=seed)
    dev["cache"] = {
        "capacity": f"{capacity_bytes}B",
        "sharing": sharing,
        "dram_row_size": "8KiB",
        "dram_data_rate": "100MT/s",
        "dram_burst_bytes": 1,
        "dram_trcd": "13ns",
        "dram_tcl": "13ns",
        "dram_trp": "13ns",
        "destage": "when-full",
    }
    return dev


def write_flow(
    name: str,
    queue_depth: int,
    address: str = "uniform",
    *,
    duration: str,
    working_set: float = MAPPED_FRACTION,
    working_set_start: float = 0.0,
    cache_mode: str = "write",
    seed: int | None = None,
) -> dict[str, Any]:
    """A closed-loop flow of 8 KiB page-aligned writes through the write cache that runs for
    `duration` of simulated time (the write twin of `read_flow`).

    Page-aligned whole pages: a flushed line is a full page, programmed without a
    read-modify-write. Within the preconditioned part of the drive every write overwrites mapped
    data.
    """
    flow = read_flow(
        name,
        queue_depth,
        address,
        duration=duration,
        working_set=working_set,
        working_set_start=working_set_start,
        seed=seed,
    )
    flow["read_fraction"] = 0.0
    flow["cache_mode"] = cache_mode
    return flow


@dataclass(frozen=True)
class CacheRun:
    """What the data cache and the flash did in one run (all flows together)."""

    flushes: int
    writes_waited: int
    dram_utilisation: float
    flash_programs: int
    simulated_seconds: float


@dataclass
class CacheInterference(Interference):
    """`Interference` of write flows, plus what the cache did in the shared run and alone."""

    cache: CacheRun
    alone_cache: dict[str, CacheRun]

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "cache": asdict(self.cache),
            "alone_cache": {k: asdict(v) for k, v in self.alone_cache.items()},
        }


def _write_flow_runs(results: ssdlab.Results) -> dict[str, FlowRun]:
    """`_flow_runs` for write flows: each flow's write statistics."""
    runs = {}
    for f in results.flows:
        runs[f.name] = FlowRun(
            name=f.name,
            mean_us=f.writes.latency_us.mean,
            p99_us=f.writes.latency_us.p99,
            iops=f.iops,
            requests=f.requests,
            cmt_hit_rate=f.cmt_hit_rate,
            cmt_miss_wait_us=f.latency_breakdown_us.get("cmt_miss_wait", 0.0),
        )
    return runs


def _simulate_writes(key: str) -> tuple[dict[str, FlowRun], CacheRun, float, int]:
    results = ssdlab.simulate(json.loads(key))
    # Still no GC: it would add its own interference (the studies' runs stay below its threshold).
    _check(results)
    if any(f.reads.count for f in results.flows):
        raise RuntimeError("a write study's flow issued reads")
    d = results.device
    cache = CacheRun(
        flushes=d.cache.flushes,
        writes_waited=d.cache.writes_waited,
        dram_utilisation=d.cache.dram_utilisation,
        flash_programs=d.flash.programs,
        simulated_seconds=results.simulated_seconds,
    )
    return _write_flow_runs(results), cache, results.wall_seconds, results.events


def run_all_writes(
    configs: Sequence[dict[str, Any]], label: str = ""
) -> list[tuple[dict[str, FlowRun], CacheRun]]:
    """`run_all` for write flows: every config (identical ones once), with its cache activity."""

    def describe(result: tuple[dict[str, FlowRun], CacheRun, float, int]) -> str:
        runs, cache, wall, events = result
        return (
            f"{label}{'+'.join(runs)}: {wall:.1f} s wall, {events:,} events, "
            f"{cache.writes_waited:,} writes waited"
        )

    return [
        (runs, cache) for runs, cache, _, _ in _unique_runs(_simulate_writes, configs, describe)
    ]


def write_interference(
    experiments: Sequence[tuple[dict[str, Any], Sequence[dict[str, Any]]]], label: str = ""
) -> list[CacheInterference]:
    """`interference` for write flows: for each (device, flows), the shared run and each flow
    alone on the same device (a single flow's partition is the whole cache), with the cache's
    activity in each. Seeds as in `interference`.
    """
    configs: list[dict[str, Any]] = []
    for dev, flows in experiments:
        seeded = [{"seed": i + 1, **f} for i, f in enumerate(flows)]
        configs.append({**copy.deepcopy(dev), "flows": seeded})
        configs.extend({**copy.deepcopy(dev), "flows": [f]} for f in seeded)
    runs = iter(run_all_writes(configs, label))
    out = []
    for _, flows in experiments:
        shared, cache = next(runs)
        alone: dict[str, FlowRun] = {}
        alone_cache: dict[str, CacheRun] = {}
        for f in flows:
            flow_runs, flow_cache = next(runs)
            alone[f["name"]] = flow_runs[f["name"]]
            alone_cache[f["name"]] = flow_cache
        out.append(
            CacheInterference(shared=shared, alone=alone, cache=cache, alone_cache=alone_cache)
        )
    return out


# The columns every two-flow interference table starts with (after its swept parameters).
PAIR_HEADERS = [
    "F1 RT alone us",
    "F1 RT shared us",
    "S1",
    "F2 RT alone us",
    "F2 RT shared us",
    "S2",
    "F1 IOPS",
    "F2 IOPS",
]


def pair_cells(r: Any) -> list[str]:
    """The `PAIR_HEADERS` cells of one two-flow result (`Interference` or `CacheInterference`)."""
    cells = []
    for flow in ("flow-1", "flow-2"):
        cells += [fmt(r.alone[flow].mean_us), fmt(r.shared[flow].mean_us), fmt(r.slowdown(flow), 2)]
    return [*cells, fmt(r.shared["flow-1"].iops, 0), fmt(r.shared["flow-2"].iops, 0)]
