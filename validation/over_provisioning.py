"""Over-provisioning: random-write bandwidth after 2x-capacity random writes at 20, 15, 10 and
5 % over-provisioning (OP), compared in direction with the Amber paper's report.

Amber (Gouk et al., MICRO 2018) filled its drive with sequential writes, then wrote twice its
capacity at random and reports that write bandwidth "dropped by 87.9 %, 62.1 % and 33.7 %" at
15 %, 10 % and 5 % OP (SSD-MODEL-FACTS.md section 2). Only the direction is compared here: our
device is not the paper's.

A drive of 8 planes (2 channels x 2 chips x 1 die x 2 planes) of 512 blocks of 128 4 KiB pages
(2 GiB of flash; flash timing ssdlab's defaults: 750 us program, 75 us read, 3.8 ms erase),
ideal mapping, out-of-order scheduling, greedy GC with threshold 2 % (5 % OP leaves 3 % of the
blocks above it), no wear leveling. One closed-loop writer of uniform random 4 KiB pages over
the whole logical space at queue depth 32. For each OP:

- fresh: the logical space mapped packed (`precondition.mode = "fill"`, occupancy 1.0, the
  state a sequential fill leaves), then 1 % of the capacity written at random: the bandwidth
  before any GC;
- after 2x: the same start, 2.2 x the capacity written at random in one run; the bandwidth and
  WA over the writes from 2.0 x to 2.2 x the capacity;
- the same measurement the fast way: `simulate` (the 2 x capacity aging really run through the
  timed model) and `steady` (one sample plane aged untimed), both with `drive_writes = 2`, then
  0.2 x the capacity measured; and `steady` with the default 4 drive writes (the steady state
  the drive converges to);
- for the figure, a fill run of 0.1 x the capacity with fine time windows (the fall from the
  fresh bandwidth when the free blocks run out).

Writes results/validation/over_provisioning/{table.md, over_provisioning.json,
bandwidth_over_writes.png}.

Run: .venv/bin/python validation/over_provisioning.py [--blocks-per-plane N] [--pages-per-block N]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from typing import Any

import common
import ssdlab

NAME = "over_provisioning"
OUT_DIR = common.RESULTS_DIR / NAME
OPS = [0.20, 0.15, 0.10, 0.05]
# Amber's reported drop of write bandwidth after 2x-capacity random writes (facts section 2),
# per OP, in per cent. It reports no 20 % point.
AMBER_DROP_PCT = {0.15: 87.9, 0.10: 62.1, 0.05: 33.7}
QUEUE_DEPTH = 32
GC_THRESHOLD = 0.02
PAGE_BYTES = 4096
# Capacity multiples: the fresh measurement, the aging Amber used, the measurement after it, and
# the high-resolution start for the figure.
FRESH_WRITES = 0.01
AGING_WRITES = 2.0
MEASURE_WRITES = 0.2
EARLY_WRITES = 0.1
# Bin width of the figure's bandwidth curve, in multiples of the capacity.
BIN = 0.02


def config(
    mode: str,
    *,
    op: float,
    requests: int,
    blocks_per_plane: int,
    pages_per_block: int,
    drive_writes: float | None = None,
) -> dict[str, Any]:
    """The drive and its one random writer, preconditioned by `mode`."""
    precondition: dict[str, Any] = {"mode": mode}
    if mode == "fill":
        # The whole logical space mapped as after a sequential fill.
        precondition |= {"occupancy": 1.0, "layout": "packed"}
    if drive_writes is not None:
        precondition["drive_writes"] = drive_writes
    return {
        "seed": 1,
        "controller": {"scheduling": "out-of-order"},
        "ftl": {
            "ideal_mapping": True,
            "over_provisioning": op,
            "gc_policy": "greedy",
            "gc_threshold": GC_THRESHOLD,
            "dynamic_wear_leveling": False,
            "static_wear_leveling": False,
        },
        "flash": {
            "channels": 2,
            "chips_per_channel": 2,
            "dies_per_chip": 1,
            "planes_per_die": 2,
            "blocks_per_plane": blocks_per_plane,
            "pages_per_block": pages_per_block,
            "page_size": f"{PAGE_BYTES // 1024}KiB",
        },
        "precondition": precondition,
        "flows": [
            {
                "name": "writer",
                "read_fraction": 0.0,
                "request_size": "4KiB",
                "alignment": "4KiB",
                "address": "uniform",
                "queue_depth": QUEUE_DEPTH,
                "requests": requests,
            }
        ],
    }


def logical_pages(op: float, blocks_per_plane: int, pages_per_block: int) -> int:
    """Pages of the logical space (the writer's working set), from a one-request run."""
    cfg = config(
        "none",
        op=op,
        requests=1,
        blocks_per_plane=blocks_per_plane,
        pages_per_block=pages_per_block,
    )
    return ssdlab.simulate(cfg).device.logical_capacity_bytes // PAGE_BYTES


def _run(key: str) -> dict[str, Any]:
    """One simulation: totals, preconditioning and the writer's and GC's time series."""
    results = ssdlab.simulate(json.loads(key))
    # Only the window-width notice is expected (more than 4096 windows would be needed).
    unexpected = [w for w in results.warnings if "time_series_window" not in w]
    if unexpected:
        raise RuntimeError(f"unexpected warnings: {unexpected}")
    ts = results.time_series()
    writes = ts[(ts["flow"] == "writer") & (ts["op"] == "write")]
    gc = results.gc_time_series()
    return {
        "bandwidth_mib_s": results.device.writes.bandwidth_mib_s,
        "write_amplification": results.device.gc.write_amplification,
        "simulated_seconds": results.simulated_seconds,
        "wall_seconds": results.wall_seconds,
        "precondition": results.to_dict()["precondition"],
        "time_series": {
            "window_start_s": writes["window_start_s"].tolist(),
            "window_s": writes["window_s"].tolist(),
            "count": writes["count"].tolist(),
            "bytes": writes["bytes"].tolist(),
        },
        "gc_time_series": {
            "window_start_s": gc["window_start_s"].tolist(),
            "host_pages_written": gc["host_pages_written"].tolist(),
            "flash_pages_programmed": gc["flash_pages_programmed"].tolist(),
        },
    }


def run_all(configs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Runs every named config, common.jobs() at a time in separate processes."""
    return common.run_named(
        _run,
        configs,
        lambda r: f"{r['wall_seconds']:.1f} s wall, {r['simulated_seconds']:,.0f} s simulated",
    )


def written_capacity(run: dict[str, Any], pages: int) -> list[float]:
    """For each window, the host writes completed by its end, in multiples of the capacity."""
    total, out = 0, []
    for count in run["time_series"]["count"]:
        total += count
        out.append(total / pages)
    return out


def span(run: dict[str, Any], pages: int, lo: float, hi: float = float("inf")) -> dict[str, float]:
    """Bandwidth (MiB/s) and WA over the windows that end between `lo` and `hi` x the capacity
    written."""
    ts = run["time_series"]
    cum = written_capacity(run, pages)
    picked = [i for i, c in enumerate(cum) if lo < c <= hi]
    seconds = sum(ts["window_s"][i] for i in picked)
    data = sum(ts["bytes"][i] for i in picked)
    starts = {ts["window_start_s"][i] for i in picked}
    gc = run["gc_time_series"]
    host = flash = 0
    for s, h, f in zip(
        gc["window_start_s"], gc["host_pages_written"], gc["flash_pages_programmed"], strict=True
    ):
        if s in starts:
            host += h
            flash += f
    return {
        "bandwidth_mib_s": data / seconds / 2**20,
        "write_amplification": flash / host if host else float("nan"),
        "written_from": lo,
        "seconds": seconds,
    }


def binned(run: dict[str, Any], pages: int, width: float) -> tuple[list[float], list[float]]:
    """The run's bandwidth in bins of `width` x the capacity written: bin centres, MiB/s."""
    ts = run["time_series"]
    sums: dict[int, list[float]] = {}
    for c, b, w in zip(written_capacity(run, pages), ts["bytes"], ts["window_s"], strict=True):
        acc = sums.setdefault(int(c / width - 1e-9), [0.0, 0.0])
        acc[0] += b
        acc[1] += w
    keys = sorted(k for k, (b, w) in sums.items() if w > 0 and b > 0)
    return [(k + 0.5) * width for k in keys], [sums[k][0] / sums[k][1] / 2**20 for k in keys]


def figure(measured: dict[str, dict[str, Any]], pages: dict[float, int], title: str) -> Any:
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(15, 5.2), gridspec_kw={"width_ratios": [1, 2]})
    colors = dict(zip(OPS, ["tab:green", "tab:blue", "tab:orange", "tab:red"], strict=True))
    for op in OPS:
        color = colors[op]
        x, y = binned(measured[f"early/{op}"], pages[op], EARLY_WRITES / 100)
        axes[0].plot(x, y, color=color, lw=1.2, label=f"OP {op:.0%}")
        x, y = binned(measured[f"fill/{op}"], pages[op], BIN)
        axes[1].plot(x, y, color=color, lw=1.2, label=f"OP {op:.0%}, fill then random writes")
        fresh = measured[f"fresh/{op}"]["bandwidth_mib_s"]
        axes[1].plot([0.0], [fresh], "o", color=color)
        mid = AGING_WRITES + MEASURE_WRITES / 2
        for mode, marker in (("simulate", "s"), ("steady", "x")):
            axes[1].plot(
                [mid],
                [measured[f"{mode}/{op}"]["bandwidth_mib_s"]],
                marker,
                color=color,
                ms=8,
                mfc="none" if marker == "s" else color,
            )
    axes[1].plot([], [], "o", color="gray", label="fresh (first 1 % of the capacity)")
    axes[1].plot([], [], "s", color="gray", mfc="none", ms=8, label="simulate, 2 drive writes")
    axes[1].plot([], [], "x", color="gray", ms=8, label="steady, 2 drive writes")
    axes[1].axvspan(AGING_WRITES, AGING_WRITES + MEASURE_WRITES, color="0.9", zorder=0)
    for ax, what in (
        (axes[0], "The first 10 % of the capacity written"),
        (axes[1], "2.2 x the capacity written (shaded: the 'after 2x' measurement)"),
    ):
        ax.set_yscale("log")
        ax.set_xlabel("random 4 KiB writes completed (x logical capacity)")
        ax.set_ylabel("write bandwidth (MiB/s)")
        ax.set_title(what)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(loc="lower left")
    axes[1].legend(loc="upper right", fontsize=8)
    fig.suptitle(title)
    return fig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks-per-plane", type=int, default=512)
    parser.add_argument("--pages-per-block", type=int, default=128)
    parser.add_argument("--skip-figure", action="store_true", help="only the tables")
    args = parser.parse_args()
    start = time.perf_counter()
    geometry = {"blocks_per_plane": args.blocks_per_plane, "pages_per_block": args.pages_per_block}
    pages = {op: logical_pages(op, **geometry) for op in OPS}

    configs: dict[str, dict[str, Any]] = {}
    for op in OPS:
        n = pages[op]
        configs[f"fresh/{op}"] = config("fill", op=op, requests=round(FRESH_WRITES * n), **geometry)
        configs[f"fill/{op}"] = config(
            "fill", op=op, requests=round((AGING_WRITES + MEASURE_WRITES) * n), **geometry
        )
        measure = round(MEASURE_WRITES * n)
        for mode in ("simulate", "steady"):
            configs[f"{mode}/{op}"] = config(
                mode, op=op, requests=measure, drive_writes=AGING_WRITES, **geometry
            )
        configs[f"steady4/{op}"] = config("steady", op=op, requests=measure, **geometry)
        if not args.skip_figure:
            configs[f"early/{op}"] = config(
                "fill", op=op, requests=round(EARLY_WRITES * n), **geometry
            )
    measured = run_all(configs)

    points = []
    for op in OPS:
        fresh = measured[f"fresh/{op}"]
        after = span(measured[f"fill/{op}"], pages[op], AGING_WRITES)
        drop = (1.0 - after["bandwidth_mib_s"] / fresh["bandwidth_mib_s"]) * 100.0
        points.append(
            {
                "op": op,
                "logical_pages": pages[op],
                "fresh_mib_s": fresh["bandwidth_mib_s"],
                "fresh_wa": fresh["write_amplification"],
                "after_2x_mib_s": after["bandwidth_mib_s"],
                "after_2x_wa": after["write_amplification"],
                "drop_pct": drop,
                "amber_drop_pct": AMBER_DROP_PCT.get(op),
                "whole_fill_run_wa": measured[f"fill/{op}"]["write_amplification"],
                **{
                    f"{mode}_mib_s": measured[f"{mode}/{op}"]["bandwidth_mib_s"]
                    for mode in ("simulate", "steady", "steady4")
                },
                **{
                    f"{mode}_wa": measured[f"{mode}/{op}"]["write_amplification"]
                    for mode in ("simulate", "steady", "steady4")
                },
                "precondition_wall_s": {
                    mode: measured[f"{mode}/{op}"]["precondition"]["wall_seconds"]
                    for mode in ("simulate", "steady", "steady4")
                },
            }
        )

    # The drop after 2x relative to the widest OP's bandwidth after 2x (OPS[0], 20 %).
    for p in points:
        p["drop_vs_widest_op_pct"] = (1.0 - p["after_2x_mib_s"] / points[0]["after_2x_mib_s"]) * 100

    def amber(p: dict[str, Any]) -> str:
        return "-" if p["amber_drop_pct"] is None else f"{p['amber_drop_pct']:.1f} %"

    main_table = common.print_table(
        "Random-write bandwidth: fresh (sequentially filled) and after 2x-capacity random writes",
        [
            "OP",
            "fresh MiB/s",
            "after 2x MiB/s",
            "drop",
            "WA after 2x",
            "after 2x / fresh",
            "drop vs OP 20 % after 2x",
            "Amber's reported drop",
        ],
        [
            [
                f"{p['op']:.0%}",
                common.fmt(p["fresh_mib_s"], 2),
                common.fmt(p["after_2x_mib_s"], 3),
                f"{p['drop_pct']:.1f} %",
                common.fmt(p["after_2x_wa"], 2),
                f"{p['after_2x_mib_s'] / p['fresh_mib_s'] * 100:.1f} %",
                f"{p['drop_vs_widest_op_pct']:.1f} %",
                amber(p),
            ]
            for p in points
        ],
    )
    modes_table = common.print_table(
        "After 2 drive writes three ways, and the steady state (4 drive writes)",
        [
            "OP",
            "fill + 2x run MiB/s",
            "WA",
            "simulate(2) MiB/s",
            "WA",
            "steady(2) MiB/s",
            "WA",
            "steady(4) MiB/s",
            "WA",
            "precondition s simulate(2)",
            "steady(2)",
        ],
        [
            [
                f"{p['op']:.0%}",
                common.fmt(p["after_2x_mib_s"], 3),
                common.fmt(p["after_2x_wa"], 2),
                common.fmt(p["simulate_mib_s"], 3),
                common.fmt(p["simulate_wa"], 2),
                common.fmt(p["steady_mib_s"], 3),
                common.fmt(p["steady_wa"], 2),
                common.fmt(p["steady4_mib_s"], 3),
                common.fmt(p["steady4_wa"], 2),
                common.fmt(p["precondition_wall_s"]["simulate"], 2),
                common.fmt(p["precondition_wall_s"]["steady"], 2),
            ]
            for p in points
        ],
    )
    device = (
        f"8 planes x {args.blocks_per_plane} blocks x {args.pages_per_block} pages x 4 KiB, "
        f"greedy GC, threshold {GC_THRESHOLD:.0%}, QD {QUEUE_DEPTH} uniform random 4 KiB writes"
    )
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "table.md").write_text(f"{device}\n\n{main_table}\n\n{modes_table}\n")
    data = {
        "device": device,
        "points": points,
        "table": main_table,
        "modes_table": modes_table,
        "runs": {
            k: {kk: vv for kk, vv in r.items() if kk not in ("time_series", "gc_time_series")}
            for k, r in measured.items()
        },
    }
    (OUT_DIR / f"{NAME}.json").write_text(json.dumps(data, indent=2) + "\n")
    if not args.skip_figure:
        fig = figure(
            measured,
            pages,
            f"Random 4 KiB writes after a sequential fill, QD {QUEUE_DEPTH}, greedy GC, "
            f"8 planes x {args.blocks_per_plane} blocks x {args.pages_per_block} pages",
        )
        png = OUT_DIR / "bandwidth_over_writes.png"
        fig.savefig(png, dpi=120, bbox_inches="tight")
        print(f"wrote {png.relative_to(common.ROOT)}", file=sys.stderr)

    # The direction Amber's text implies for a greedy-GC FTL: less OP, lower bandwidth after 2x
    # and a larger drop.
    after = [p["after_2x_mib_s"] for p in points]
    drops = [p["drop_pct"] for p in points]
    monotone = all(a > b for a, b in itertools.pairwise(after)) and all(
        a < b for a, b in itertools.pairwise(drops)
    )
    print(
        "direction: less OP gives lower bandwidth after 2x and a larger drop: "
        f"{'yes' if monotone else 'NO'}"
    )
    print(f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
