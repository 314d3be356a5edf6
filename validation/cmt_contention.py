"""CMT contention (MQSim paper, FAST 2018): a sequential reader beside a random reader, both going
through the cached mapping table (CMT).

Published: the sequential Flow-1 slows down 2.1x when Flow-2 is fully random, because Flow-2's
misses evict the mapping entries Flow-1 would have hit.

CMT size: the paper's 4 MB CMT holds 4 MiB / 9 B = 466,033 entries in MQSim (whose entries take
2 x 26 address bits + 16 sector bits on this drive); ssdlab's entries take 8 B, so the scripts
give ssdlab 466,033 x 8 B = 3,728,264 B. Either way the CMT maps 0.75 % of the logical pages
(3.56 GiB of data). Both flows are 8 KiB reads at queue depth 8, no data cache, the Table 3 drive
90 % full.

Two parts:

A. The paper's setup read literally: Flow-1 reads the whole drive sequentially, Flow-2 reads
   it at random (and, as a reference, Flow-2 sequential in another region). ssdlab starts with
   an empty CMT and caches only the entry a miss asked for, so a sequential reader that never
   comes back misses on every page even alone: there is nothing for Flow-2 to take from it.
B. A sequential Flow-1 whose entries can stay cached: it loops over a region of 0.75 x the CMT's
   reach (2.67 GiB), so after its first pass it hits when alone (as MQSim's flows do after
   MQSim warms the CMT with their addresses). Flow-2 reads at random over a footprint swept from
   1/8 of the CMT's reach to all the data; Flow-1 keeps its entries only while both footprints
   fit in the CMT together.

Run: .venv/bin/python validation/cmt_contention.py
"""

from __future__ import annotations

import time
from fractions import Fraction

import common

NAME = "cmt_contention"
QD = 8
PAPER_FLOW1_SLOWDOWN = 2.1
ENTRIES = common.mqsim_cmt_entries()  # 466,033
LOOP_OF_CMT = 0.75  # Flow-1's loop, as a fraction of the CMT's reach
FOOTPRINTS = [0.125, 0.25, 0.5, 1, 2, 4, 16, None]  # Flow-2's, x CMT reach; None = all data
DURATION_A = "2s"
DURATION_B = "60s"  # simulated; Flow-1 makes ~12 passes over its loop alone


def logical_pages() -> int:
    return int(common.physical_pages() * (1 - 0.07))  # ssdlab's default over-provisioning


def main() -> None:
    start = time.perf_counter()
    dev = common.device(ideal_mapping=False)
    pages = logical_pages()
    reach = ENTRIES / pages  # the CMT's reach as a fraction of the logical space
    half = common.MAPPED_FRACTION / 2

    # Part A: whole-drive sequential Flow-1.
    seq1 = common.read_flow("flow-1", QD, "sequential", duration=DURATION_A)
    part_a_cases = [
        (
            "sequential, other half",
            common.read_flow(
                "flow-2",
                QD,
                "sequential",
                duration=DURATION_A,
                working_set=half,
                working_set_start=half,
            ),
        ),
        ("random, all data", common.read_flow("flow-2", QD, duration=DURATION_A)),
    ]
    part_a = common.interference([(dev, [seq1, f2]) for _, f2 in part_a_cases], label="A ")

    # Part B: Flow-1 loops over a CMT-resident region; Flow-2's random footprint grows.
    loop = LOOP_OF_CMT * reach
    seq_loop = common.read_flow("flow-1", QD, "sequential", duration=DURATION_B, working_set=loop)
    flows2 = []
    for f in FOOTPRINTS:
        ws = common.MAPPED_FRACTION - loop if f is None else f * reach
        flows2.append(
            common.read_flow(
                "flow-2", QD, duration=DURATION_B, working_set=ws, working_set_start=loop
            )
        )
    part_b = common.interference([(dev, [seq_loop, f2]) for f2 in flows2], label="B ")

    headers_a = [
        "Flow-2",
        "F1 hit alone",
        "F1 hit shared",
        "F1 RT alone us",
        "F1 RT shared us",
        "S1",
        "F2 hit shared",
        "S2",
        "fairness",
        "WS",
    ]
    rows_a = []
    for (label, _), r in zip(part_a_cases, part_a, strict=True):
        rows_a.append(row_common(label, r))
    table_a = common.print_table(
        "CMT contention, part A: Flow-1 sequential over the whole drive, QD 8 each, "
        f"CMT of {ENTRIES:,} entries",
        headers_a,
        rows_a,
    )

    rows_b = []
    for f, r in zip(FOOTPRINTS, part_b, strict=True):
        everything = (common.MAPPED_FRACTION - loop) / reach
        label = f"all data (~{everything:.0f}x)" if f is None else f"{f:g}x"
        rows_b.append(row_common(label, r))
    headers_b = ["F2 footprint / CMT reach", *headers_a[1:]]
    table_b = common.print_table(
        "CMT contention, part B: Flow-1 sequential, looping over 0.75x the CMT's reach; "
        "Flow-2 random over a footprint; QD 8 each",
        headers_b,
        rows_b,
    )
    print(
        f"Flow-1 slowdown with a fully random Flow-2: paper {PAPER_FLOW1_SLOWDOWN}x; "
        f"ssdlab {part_a[-1].slowdown('flow-1'):.2f}x (A, whole-drive sequential), "
        f"{part_b[-1].slowdown('flow-1'):.2f}x (B, CMT-resident sequential loop).\n"
    )

    plt = common.pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
    xs = [f if f is not None else (common.MAPPED_FRACTION - loop) / reach for f in FOOTPRINTS]
    ax1.plot(xs, [r.slowdown("flow-1") for r in part_b], "o-", label="Flow-1 (sequential loop)")
    ax1.plot(xs, [r.slowdown("flow-2") for r in part_b], "s-", label="Flow-2 (random)")
    ax1.plot(
        [xs[-1] * 0.8],
        [part_a[-1].slowdown("flow-1")],
        "kD",
        markersize=8,
        label="Flow-1 sequential over whole drive (part A)",
    )
    ax1.plot([xs[-1]], [PAPER_FLOW1_SLOWDOWN], "r*", markersize=14, label="Flow-1, MQSim paper")
    ax1.set_ylabel("slowdown (RT shared / RT alone)")
    ax1.set_ylim(0, max(2.5, max(r.slowdown("flow-1") for r in part_b) * 1.1))
    ax1.set_title("Slowdown")
    ax2.plot(xs, [r.alone["flow-1"].cmt_hit_rate for r in part_b], "o--", label="Flow-1 alone")
    ax2.plot(xs, [r.shared["flow-1"].cmt_hit_rate for r in part_b], "o-", label="Flow-1 shared")
    ax2.plot(xs, [r.alone["flow-2"].cmt_hit_rate for r in part_b], "s--", label="Flow-2 alone")
    ax2.plot(xs, [r.shared["flow-2"].cmt_hit_rate for r in part_b], "s-", label="Flow-2 shared")
    ax2.set_ylabel("CMT hit rate")
    ax2.set_ylim(-0.05, 1.05)
    ax2.set_title("CMT hit rate")
    ticks = ["all" if f is None else str(Fraction(f)) for f in FOOTPRINTS]
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, ticks)
        ax.minorticks_off()
        ax.set_xlabel("Flow-2's random footprint / CMT reach (rightmost: all data)")
        ax.axvline(1 - LOOP_OF_CMT, color="grey", linestyle=":", linewidth=1)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        f"CMT contention, MQSim Table 3 drive, CMT of {ENTRIES:,} entries (3.56 GiB reach); "
        "dotted: both footprints just fit"
    )
    common.save(
        NAME,
        fig,
        {
            "cmt_entries": ENTRIES,
            "cmt_capacity_bytes": common.ssdlab_cmt_bytes_for_paper(),
            "paper_flow1_slowdown": PAPER_FLOW1_SLOWDOWN,
            "part_a": [
                {"flow2": label, **r.to_dict()}
                for (label, _), r in zip(part_a_cases, part_a, strict=True)
            ],
            "part_b": [
                {"flow2_footprint_x_cmt": x, **r.to_dict()} for x, r in zip(xs, part_b, strict=True)
            ],
            "tables": [table_a, table_b],
        },
    )
    print(f"wall time {time.perf_counter() - start:.0f} s")


def row_common(label: str, r: common.Interference) -> list[str]:
    f1a, f1s = r.alone["flow-1"], r.shared["flow-1"]
    return [
        label,
        common.fmt(f1a.cmt_hit_rate, 3),
        common.fmt(f1s.cmt_hit_rate, 3),
        common.fmt(f1a.mean_us),
        common.fmt(f1s.mean_us),
        common.fmt(r.slowdown("flow-1"), 2),
        common.fmt(r.shared["flow-2"].cmt_hit_rate, 3),
        common.fmt(r.slowdown("flow-2"), 2),
        common.fmt(r.fairness, 3),
        common.fmt(r.weighted_speedup, 2),
    ]


if __name__ == "__main__":
    main()
