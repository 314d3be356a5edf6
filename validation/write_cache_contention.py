"""Write-cache contention (MQSim paper, FAST 2018): two writers sharing the 256 MB write cache.

Flow-1 writes random 8 KiB pages at queue depth 2; Flow-2 writes random 8 KiB pages at queue depth
2 to 256. Both write through the data cache (cache_mode = "write"): 256 MiB as in the paper's
Table 3, first shared by both flows, then split equally (cache.sharing = "partitioned"). Ideal
mapping table (so only the cache and the back end are shared), the Table 3 drive 90 % full and
packed, so every flush of a line overwrites a mapped page with a real page program.

The cache starts empty and only flushes when it is full. At MQSim's default DRAM (100 MT/s x 1 B,
82 us per 8 KiB write in ssdlab) even Flow-1 alone fills the 256 MiB in 2.7 s; the 60 s runs
spend the rest of their time with a full cache, where every write waits for a flush. The script
stops unless every shared run reports writes that waited for room (device.cache.writes_waited).

Published: a flow with high write intensity fills the shared write cache and the other flow's
writes wait for its evictions; partitioning the cache protects the light flow. The summary we
worked from has no number for this figure, so only the direction can be compared.

Run: .venv/bin/python validation/write_cache_contention.py
"""

from __future__ import annotations

import time

import common

NAME = "write_cache_contention"
FLOW1_QD = 2
FLOW2_QDS = [2, 4, 8, 16, 32, 64, 128, 256]
SHARINGS = ["shared", "partitioned"]
# Simulated; the cache is full after ~2.7 s. Flow-1 still completes ~800 writes at Flow-2 QD 256
# with the shared cache (about 14 per second).
DURATION = "60s"


def flows(qd2: int) -> list[dict]:
    return [
        common.write_flow("flow-1", FLOW1_QD, duration=DURATION),
        common.write_flow("flow-2", qd2, duration=DURATION),
    ]


def main() -> None:
    start = time.perf_counter()
    experiments = [
        (common.cached_device(sharing=sharing), flows(qd))
        for sharing in SHARINGS
        for qd in FLOW2_QDS
    ]
    measured = common.write_interference(experiments, label="write cache ")
    by_sharing = {
        sharing: measured[i * len(FLOW2_QDS) : (i + 1) * len(FLOW2_QDS)]
        for i, sharing in enumerate(SHARINGS)
    }
    unfilled = [
        f"{sharing} QD {qd}"
        for sharing, results in by_sharing.items()
        for qd, r in zip(FLOW2_QDS, results, strict=True)
        if r.cache.writes_waited == 0
    ]
    if unfilled:
        raise RuntimeError(f"the cache never filled (no write waited) in: {', '.join(unfilled)}")

    headers = [
        "cache",
        "Flow-2 QD",
        *common.PAIR_HEADERS,
        "fairness",
        "WS",
        "writes waited",
    ]
    rows = []
    for sharing, results in by_sharing.items():
        for qd, r in zip(FLOW2_QDS, results, strict=True):
            rows.append(
                [
                    sharing,
                    str(qd),
                    *common.pair_cells(r),
                    common.fmt(r.fairness, 3),
                    common.fmt(r.weighted_speedup, 2),
                    common.fmt(r.cache.writes_waited, 0),
                ]
            )
    table = common.print_table(
        "Write-cache contention: Flow-1 random 8 KiB writes QD 2, Flow-2 random 8 KiB writes, "
        "both through the 256 MiB write cache (ideal CMT, 60 s; writes waited = writes of the "
        "shared run that waited for room)",
        headers,
        rows,
    )
    shared, partitioned = by_sharing["shared"][-1], by_sharing["partitioned"][-1]
    print(
        "At Flow-2 QD 256: shared cache -> Flow-1 slowdown "
        f"{shared.slowdown('flow-1'):.1f}x, fairness {shared.fairness:.3f}; "
        f"partitioned -> Flow-1 slowdown {partitioned.slowdown('flow-1'):.2f}x, "
        f"fairness {partitioned.fairness:.3f}. "
        "Paper: the intense flow fills the shared cache and the light flow waits for evictions; "
        "partitioning protects it (no number given).\n"
    )

    plt = common.pyplot()
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4.5))
    # Panels 1 and 3: one colour per sharing mode; panel 2: colour per flow, style per mode.
    styles = {"shared": ("o", "-", "tab:purple"), "partitioned": ("s", "--", "tab:green")}
    for sharing, results in by_sharing.items():
        marker, line, colour = styles[sharing]
        ax1.plot(
            FLOW2_QDS,
            [r.slowdown("flow-1") for r in results],
            marker + line,
            color=colour,
            label=f"Flow-1, {sharing} cache",
        )
        ax1.plot(
            FLOW2_QDS,
            [r.slowdown("flow-2") for r in results],
            "^:",
            color=colour,
            alpha=0.5,
            label=f"Flow-2, {sharing} cache",
        )
        for name, flow_colour in (("flow-1", "tab:blue"), ("flow-2", "tab:orange")):
            ax2.plot(
                FLOW2_QDS,
                [r.shared[name].iops for r in results],
                marker + line,
                color=flow_colour,
                label=f"{name.capitalize()}, {sharing}",
            )
        ax3.plot(
            FLOW2_QDS,
            [r.fairness for r in results],
            marker + line,
            color=colour,
            label=f"{sharing} cache",
        )
    ax1.set_ylabel("slowdown (RT shared / RT alone)")
    ax1.set_yscale("log")
    ax1.set_title("Slowdown")
    ax2.set_ylabel("shared-run throughput (IOPS)")
    ax2.set_yscale("log")
    ax2.set_title("Throughput when shared")
    ax3.set_ylabel("fairness F = min S / max S")
    ax3.set_yscale("log")
    ax3.set_title("Fairness")
    for ax in (ax1, ax2, ax3):
        ax.set_xscale("log", base=2)
        ax.set_xticks(FLOW2_QDS, [str(q) for q in FLOW2_QDS])
        ax.minorticks_off()
        ax.set_xlabel("Flow-2 queue depth")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        "Write-cache contention, MQSim Table 3 drive (random 8 KiB writes, Flow-1 QD 2, "
        "256 MiB write cache shared or partitioned, ideal CMT, 60 s)"
    )
    common.save(
        NAME,
        fig,
        {
            "flow2_queue_depths": FLOW2_QDS,
            "duration": DURATION,
            "points": {
                sharing: [r.to_dict() for r in results] for sharing, results in by_sharing.items()
            },
            "table": table,
        },
    )
    print(f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
