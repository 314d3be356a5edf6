"""QueueFetchSize (MQSim paper, FAST 2018): how many of a queue's requests the device may hold.

Two sequential 8 KiB readers, each on its own half of the data: Flow-1 at queue depth 8, Flow-2 at
8 to 256, with host.queue_fetch_size 1024 and 16. Ideal mapping table (so only the host interface
and the back end differ), no data cache, the Table 3 drive 90 % full.

Published: with QueueFetchSize 1024, Flow-2's throughput grows with its queue depth and Flow-1 is
crushed; with 16, Flow-2 cannot hold more than 16 requests in the device and Flow-1 is protected.

Run: .venv/bin/python validation/queue_fetch_size.py
"""

from __future__ import annotations

import time

import common

NAME = "queue_fetch_size"
FLOW1_QD = 8
FLOW2_QDS = [8, 16, 32, 64, 128, 256]
FETCH_SIZES = [1024, 16]
DURATION = "500ms"  # simulated; Flow-1 completes ~4,000 requests even when crushed


def flows(qd2: int) -> list[dict]:
    half = common.MAPPED_FRACTION / 2
    return [
        common.read_flow("flow-1", FLOW1_QD, "sequential", duration=DURATION, working_set=half),
        common.read_flow(
            "flow-2",
            qd2,
            "sequential",
            duration=DURATION,
            working_set=half,
            working_set_start=half,
        ),
    ]


def main() -> None:
    start = time.perf_counter()
    experiments = [
        (common.device(ideal_mapping=True, queue_fetch_size=qfs), flows(qd))
        for qfs in FETCH_SIZES
        for qd in FLOW2_QDS
    ]
    measured = common.interference(experiments, label="qfs ")
    by_qfs = {
        qfs: measured[i * len(FLOW2_QDS) : (i + 1) * len(FLOW2_QDS)]
        for i, qfs in enumerate(FETCH_SIZES)
    }

    headers = [
        "QFS",
        "Flow-2 QD",
        *common.PAIR_HEADERS,
        "F2 IOPS alone",
        "fairness",
        "WS",
    ]
    rows = []
    for qfs, results in by_qfs.items():
        for qd, r in zip(FLOW2_QDS, results, strict=True):
            rows.append(
                [
                    str(qfs),
                    str(qd),
                    *common.pair_cells(r),
                    common.fmt(r.alone["flow-2"].iops, 0),
                    common.fmt(r.fairness, 3),
                    common.fmt(r.weighted_speedup, 2),
                ]
            )
    table = common.print_table(
        "QueueFetchSize: Flow-1 sequential 8 KiB reads QD 8, Flow-2 sequential 8 KiB reads "
        "(ideal CMT, no cache)",
        headers,
        rows,
    )
    big, small = by_qfs[1024][-1], by_qfs[16][-1]
    print(
        "At Flow-2 QD 256: QFS 1024 -> Flow-1 slowdown "
        f"{big.slowdown('flow-1'):.2f}x, Flow-2 {big.shared['flow-2'].iops:,.0f} IOPS; "
        f"QFS 16 -> Flow-1 slowdown {small.slowdown('flow-1'):.2f}x, "
        f"Flow-2 {small.shared['flow-2'].iops:,.0f} IOPS. "
        "Paper: with 1024 Flow-2's throughput grows and Flow-1 is crushed; with 16 Flow-1 is "
        "protected.\n"
    )

    plt = common.pyplot()
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4.5))
    # Panels 1 and 3: one colour per QueueFetchSize; panel 2: colour per flow, style per QFS.
    styles = {1024: ("o", "-", "tab:purple"), 16: ("s", "--", "tab:green")}
    for qfs, results in by_qfs.items():
        marker, line, colour = styles[qfs]
        ax1.plot(
            FLOW2_QDS,
            [r.slowdown("flow-1") for r in results],
            marker + line,
            color=colour,
            label=f"QFS {qfs}",
        )
        for name, flow_colour in (("flow-1", "tab:blue"), ("flow-2", "tab:orange")):
            ax2.plot(
                FLOW2_QDS,
                [r.shared[name].iops / 1e3 for r in results],
                marker + line,
                color=flow_colour,
                label=f"{name.capitalize()}, QFS {qfs}",
            )
        ax3.plot(
            FLOW2_QDS,
            [r.fairness for r in results],
            marker + line,
            color=colour,
            label=f"QFS {qfs}",
        )
    ax1.set_ylabel("Flow-1 slowdown (RT shared / RT alone)")
    ax1.set_title("Flow-1 slowdown")
    ax2.set_ylabel("shared-run throughput (kIOPS)")
    ax2.set_yscale("log")
    ax2.set_title("Throughput when shared")
    ax3.set_ylabel("fairness F = min S / max S")
    ax3.set_ylim(0, 1.05)
    ax3.set_title("Fairness")
    for ax in (ax1, ax2, ax3):
        ax.set_xscale("log", base=2)
        ax.set_xticks(FLOW2_QDS, [str(q) for q in FLOW2_QDS])
        ax.minorticks_off()
        ax.set_xlabel("Flow-2 queue depth")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        "QueueFetchSize 1024 vs 16, MQSim Table 3 drive (two sequential 8 KiB readers, "
        "Flow-1 QD 8, ideal CMT, no cache)"
    )
    common.save(
        NAME,
        fig,
        {
            "flow2_queue_depths": FLOW2_QDS,
            "points": {str(qfs): [r.to_dict() for r in results] for qfs, results in by_qfs.items()},
            "table": table,
        },
    )
    print(f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
