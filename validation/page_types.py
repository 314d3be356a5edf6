"""Page-type latencies of TLC flash (SimpleSSD, Jung et al., IEEE CAL 2017; facts section 1.11).

SimpleSSD measured 25 nm TLC: MSB pages program in about 1.3x the time of CSB pages and 8x that
of LSB pages; MSB reads take 37 % longer than CSB reads and 84 % longer than LSB reads. It also
lays page types out by address within a block (`flash.page_type_layout = "address"`): the first
5 pages LSB, the next 3 CSB (meta pages), then ((page - 8) / planes per die) mod 3.

This script configures a TLC device with per-type latencies in those ratios, runs single-page
(8 KiB) reads and writes at queue depth 1, sequential and random, over whole blocks, under both
page-type layouts, and measures per page type (each request's cell time tells its page type):
how many requests hit it, their mean response time and mean cell time, and the MSB ratios.

Run: .venv/bin/python validation/page_types.py
"""

from __future__ import annotations

import sys
import time
from typing import Any

import common
import ssdlab

NAME = "page_types"
TYPES = ("LSB", "CSB", "MSB")

# Reads: SimpleSSD's TLC table (pal/old/LatencyTLC.cc: 58, 78, 107 us), which has the measured
# ratios (MSB/CSB 1.37, MSB/LSB 1.84).
READ_US = {"LSB": 58.0, "CSB": 78.0, "MSB": 107.0}
# Programs: the measured ratios (MSB 1.3x CSB, 8x LSB) anchored at SimpleSSD's MSB program time
# (5001 us). SimpleSSD's own table has CSB 2201 us and LSB 558 us (MSB 2.3x CSB, 9.0x LSB).
PROGRAM_MSB_US = 5001.0
PROGRAM_US = {"LSB": PROGRAM_MSB_US / 8, "CSB": PROGRAM_MSB_US / 1.3, "MSB": PROGRAM_MSB_US}
PAPER_RATIOS = {"read": (1.37, 1.84), "write": (1.3, 8.0)}  # MSB/CSB, MSB/LSB

CHANNELS, CHIPS, DIES, PLANES = 2, 2, 1, 2
PAGES_PER_BLOCK = 256
PLANES_TOTAL = CHANNELS * CHIPS * DIES * PLANES
BLOCKS_PER_PLANE_RUN = 4  # every run covers 4 blocks' worth of pages per plane
REQUESTS = PLANES_TOTAL * PAGES_PER_BLOCK * BLOCKS_PER_PLANE_RUN  # 8,192


def us(value: float) -> str:
    return f"{value:.3f}us"


def config(layout: str, op: str, address: str) -> dict[str, Any]:
    """A small TLC device (8 planes of 64 blocks of 256 8-KiB pages), ideal mapping, no cache,
    one QD-1 flow of `REQUESTS` single-page `op`s (reads of a packed full drive, or writes to an
    empty one)."""
    reads = op == "read"
    return {
        "seed": 1,
        "ftl": {"ideal_mapping": True, "over_provisioning": 0.2},
        "flash": {
            "channels": CHANNELS,
            "chips_per_channel": CHIPS,
            "dies_per_chip": DIES,
            "planes_per_die": PLANES,
            "blocks_per_plane": 64,
            "pages_per_block": PAGES_PER_BLOCK,
            "page_size": "8KiB",
            "technology": "TLC",
            "page_type_layout": layout,
            "timing": {
                "read": {k.lower(): us(v) for k, v in READ_US.items()},
                "program": {k.lower(): us(v) for k, v in PROGRAM_US.items()},
            },
        },
        "precondition": (
            {"mode": "fill", "occupancy": 1.0, "layout": "packed"} if reads else {"mode": "none"}
        ),
        "run": {"request_records": "all"},
        "flows": [
            {
                "name": f"{address}-{op}",
                "read_fraction": 1.0 if reads else 0.0,
                "request_size": "8KiB",
                "alignment": "8KiB",
                "address": address,
                "queue_depth": 1,
                "requests": REQUESTS,
                "cache_mode": "off",
            }
        ],
    }


def measure(layout: str, op: str, address: str) -> dict[str, Any]:
    """Per page type: requests, mean response time and mean cell time (us)."""
    results = ssdlab.simulate(config(layout, op, address))
    if results.device.gc.blocks_erased or results.warnings or results.device.flash.unmapped_reads:
        raise RuntimeError(f"unexpected run: GC or warnings {results.warnings}")
    frame = results.requests()
    cell = READ_US if op == "read" else PROGRAM_US
    by_type: dict[str, dict[str, float]] = {}
    for name in TYPES:
        hit = frame[(frame["cell_operation_us"] - cell[name]).abs() < 0.01]
        by_type[name] = {
            "requests": len(hit),
            "mean_us": float(hit["latency_us"].mean()),
            "cell_us": float(hit["cell_operation_us"].mean()),
        }
    if sum(t["requests"] for t in by_type.values()) != len(frame):
        raise RuntimeError("a request's cell time matches no page type")
    flow = results.flows[0]
    stats = flow.reads if op == "read" else flow.writes
    return {
        "layout": layout,
        "op": op,
        "address": address,
        "mean_us": stats.latency_us.mean,
        "types": by_type,
        "wall_seconds": results.wall_seconds,
    }


def block_mix(layout: str) -> list[int]:
    """Pages of each type in one block (what `flash.page_type_layout` assigns)."""
    counts = [0, 0, 0]
    for page in range(PAGES_PER_BLOCK):
        if layout == "round-robin":
            t = page % 3
        elif page < 5:
            t = 0
        elif page < 8:
            t = 1
        else:
            t = ((page - 8) // PLANES) % 3
        counts[t] += 1
    return counts


def main() -> None:
    start = time.perf_counter()
    runs = []
    for layout in ("round-robin", "address"):
        for op in ("read", "write"):
            for address in ("sequential", "uniform"):
                r = measure(layout, op, address)
                print(
                    f"  {layout} {address} {op}: {r['wall_seconds']:.1f} s wall",
                    file=sys.stderr,
                    flush=True,
                )
                runs.append(r)

    rows = []
    for r in runs:
        t = r["types"]
        mean = {n: t[n]["mean_us"] for n in TYPES}
        cell = {n: t[n]["cell_us"] for n in TYPES}
        total = sum(t[n]["requests"] for n in TYPES)
        rows.append(
            [
                r["layout"],
                "seq" if r["address"] == "sequential" else "random",
                r["op"],
                " / ".join(f"{100 * t[n]['requests'] / total:.1f}" for n in TYPES),
                *(common.fmt(mean[n], 1) for n in TYPES),
                common.fmt(r["mean_us"], 1),
                f"{mean['MSB'] / mean['CSB']:.2f} / {mean['MSB'] / mean['LSB']:.2f}",
                f"{cell['MSB'] / cell['CSB']:.2f} / {cell['MSB'] / cell['LSB']:.2f}",
                "{:.2f} / {:.2f}".format(*PAPER_RATIOS[r["op"]]),
            ]
        )
    headers = [
        "layout",
        "pattern",
        "op",
        "% LSB / CSB / MSB",
        "LSB RT us",
        "CSB RT us",
        "MSB RT us",
        "all RT us",
        "RT MSB/CSB / MSB/LSB",
        "cell MSB/CSB / MSB/LSB",
        "SimpleSSD",
    ]
    table = common.print_table(
        f"Page types, TLC, QD 1 single 8 KiB pages, {REQUESTS:,} requests per run "
        "(RT = mean response time per page type)",
        headers,
        rows,
    )

    mix_rows = []
    for layout in ("round-robin", "address"):
        counts = block_mix(layout)
        mean_program = sum(c * PROGRAM_US[n] for c, n in zip(counts, TYPES, strict=True))
        mean_read = sum(c * READ_US[n] for c, n in zip(counts, TYPES, strict=True))
        mix_rows.append(
            [
                layout,
                " / ".join(str(c) for c in counts),
                common.fmt(mean_read / PAGES_PER_BLOCK, 2),
                common.fmt(mean_program / PAGES_PER_BLOCK, 1),
            ]
        )
    mix = common.print_table(
        f"Page types of one {PAGES_PER_BLOCK}-page block ({PLANES} planes per die) and the mean "
        "cell times they give",
        ["layout", "LSB / CSB / MSB pages", "mean tR us", "mean tPROG us"],
        mix_rows,
    )

    plt = common.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, op in zip(axes, ("read", "write"), strict=True):
        selected = [r for r in runs if r["op"] == op]
        width = 0.8 / len(selected)
        for i, r in enumerate(selected):
            xs = [j + i * width for j in range(len(TYPES))]
            label = f"{r['layout']}, {'seq' if r['address'] == 'sequential' else 'random'}"
            ax.bar(xs, [r["types"][n]["mean_us"] for n in TYPES], width, label=label)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(TYPES))], list(TYPES))
        ax.set_ylabel("mean response time (us)")
        ax.set_title(f"QD 1 single-page {op}s")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("TLC page-type latencies (SimpleSSD ratios) under both page-type layouts")
    common.save(
        NAME,
        fig,
        {
            "read_us": READ_US,
            "program_us": PROGRAM_US,
            "paper_ratios_msb_over_csb_lsb": PAPER_RATIOS,
            "runs": runs,
            "table": table,
            "block_mix": mix,
        },
    )
    print(f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
