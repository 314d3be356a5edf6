"""Back-end contention (MQSim paper, FAST 2018): a light reader beside an ever heavier one.

Flow-1 reads random 8 KiB pages at queue depth 2; Flow-2 reads random 8 KiB pages at queue depth
2 to 256. Ideal mapping table (every lookup hits), no data cache, the Table 3 drive 90 % full.
Published: at Flow-2 QD 256, Flow-1 slows down 14.4x while Flow-2 barely slows down.

Run: .venv/bin/python validation/backend_contention.py
"""

from __future__ import annotations

import time

import common

NAME = "backend_contention"
FLOW1_QD = 2
FLOW2_QDS = [2, 4, 8, 16, 32, 64, 128, 256]
DURATION = "1s"  # simulated; Flow-1 still completes ~2,000 requests at Flow-2 QD 256
PAPER_FLOW1_SLOWDOWN_AT_256 = 14.4


def main() -> None:
    start = time.perf_counter()
    dev = common.device(ideal_mapping=True)
    experiments = [
        (
            dev,
            [
                common.read_flow("flow-1", FLOW1_QD, duration=DURATION),
                common.read_flow("flow-2", qd, duration=DURATION),
            ],
        )
        for qd in FLOW2_QDS
    ]
    results = common.interference(experiments, label="backend ")

    headers = [
        "Flow-2 QD",
        *common.PAIR_HEADERS,
        "fairness",
        "WS",
    ]
    rows = []
    for qd, r in zip(FLOW2_QDS, results, strict=True):
        rows.append(
            [
                str(qd),
                *common.pair_cells(r),
                common.fmt(r.fairness, 3),
                common.fmt(r.weighted_speedup, 2),
            ]
        )
    table = common.print_table(
        "Back-end contention: Flow-1 random 8 KiB reads QD 2, Flow-2 random 8 KiB reads "
        "(ideal CMT, no cache; S = slowdown, WS = weighted speedup)",
        headers,
        rows,
    )
    last = results[-1]
    print(
        f"Flow-1 slowdown at Flow-2 QD 256: ssdlab {last.slowdown('flow-1'):.1f}x, "
        f"paper {PAPER_FLOW1_SLOWDOWN_AT_256}x. "
        f"Flow-2 slowdown: ssdlab {last.slowdown('flow-2'):.2f}x, paper 'barely slows down'.\n"
    )

    plt = common.pyplot()
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4.5))
    s1 = [r.slowdown("flow-1") for r in results]
    s2 = [r.slowdown("flow-2") for r in results]
    ax1.plot(FLOW2_QDS, s1, "o-", label="Flow-1 (QD 2), ssdlab")
    ax1.plot(FLOW2_QDS, s2, "s-", label="Flow-2, ssdlab")
    ax1.plot([256], [PAPER_FLOW1_SLOWDOWN_AT_256], "r*", markersize=14, label="Flow-1, MQSim paper")
    ax1.set_ylabel("slowdown (RT shared / RT alone)")
    ax1.set_title("Slowdown")
    ax2.plot(FLOW2_QDS, [r.shared["flow-1"].iops / 1e3 for r in results], "o-", label="Flow-1")
    ax2.plot(FLOW2_QDS, [r.shared["flow-2"].iops / 1e3 for r in results], "s-", label="Flow-2")
    ax2.set_ylabel("shared-run throughput (kIOPS)")
    ax2.set_yscale("log")
    ax2.set_title("Throughput when shared")
    ax3.plot(FLOW2_QDS, [r.fairness for r in results], "o-", label="fairness F")
    ax3.plot(FLOW2_QDS, [r.weighted_speedup for r in results], "s-", label="weighted speedup")
    ax3.set_ylim(0, 2.1)
    ax3.set_title("Fairness and weighted speedup")
    for ax in (ax1, ax2, ax3):
        ax.set_xscale("log", base=2)
        ax.set_xticks(FLOW2_QDS, [str(q) for q in FLOW2_QDS])
        ax.set_xlabel("Flow-2 queue depth")
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(
        "Back-end contention, MQSim Table 3 drive (random 8 KiB reads, ideal CMT, no cache)"
    )
    common.save(
        NAME,
        fig,
        {
            "flow2_queue_depths": FLOW2_QDS,
            "paper_flow1_slowdown_at_256": PAPER_FLOW1_SLOWDOWN_AT_256,
            "points": [r.to_dict() for r in results],
            "table": table,
        },
    )
    print(f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
