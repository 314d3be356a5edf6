"""FLIN (Tavakkol et al., ISCA 2018) against the other schedulers on the MQSim Table 3 drive.

For each flow mix, each scheduler (`controller.scheduling`: out-of-order, priority, flow-fair,
flin) runs the flows together and each flow alone on the same device; slowdown S_i = mean
response time shared / alone, fairness F = min S / max S, weighted speedup WS = sum 1 / S_i
(`ssdlab.api.fairness_metrics`). Mixes:

- `light+heavy`: random 8 KiB reads at QD 2 beside random 8 KiB reads at QD 128 (the MQSim
  paper's back-end contention case), ideal mapping table;
- `light+heavy, 4 MiB CMT`: the same through MQSim's 4 MiB cached mapping table (entries
  matched, see common.py);
- `light+two heavy`: a QD 2 reader beside two QD 64 readers;
- `four readers`: random 8 KiB reads at QD 1, 4, 16 and 64;
- `urgent+low`: the light+heavy pair with the light flow at NVMe priority urgent and the heavy one
  low (FLIN's second stage and the priority scheduler serve priorities; the others do not).

Writes results/validation/flin.png and flin.json (the table and every run).

Run: .venv/bin/python validation/flin.py [--duration 300ms]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import common

NAME = "flin"
SCHEDULERS = ["out-of-order", "priority", "flow-fair", "flin"]


def mixes(duration: str) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    read = common.read_flow
    ideal = common.device(ideal_mapping=True)
    cmt = common.device(ideal_mapping=False)
    urgent = {**read("light", 2, duration=duration), "priority": "urgent"}
    low = {**read("heavy", 128, duration=duration), "priority": "low"}
    return [
        (
            "light+heavy",
            ideal,
            [read("light", 2, duration=duration), read("heavy", 128, duration=duration)],
        ),
        (
            "light+heavy, 4 MiB CMT",
            cmt,
            [read("light", 2, duration=duration), read("heavy", 128, duration=duration)],
        ),
        (
            "light+two heavy",
            ideal,
            [
                read(n, qd, duration=duration)
                for n, qd in (("light", 2), ("heavy-1", 64), ("heavy-2", 64))
            ],
        ),
        ("four readers", ideal, [read(f"qd{qd}", qd, duration=duration) for qd in (1, 4, 16, 64)]),
        ("urgent+low", ideal, [urgent, low]),
    ]


def with_scheduler(device: dict[str, Any], scheduling: str) -> dict[str, Any]:
    return {**device, "controller": {**device["controller"], "scheduling": scheduling}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--duration", default="300ms", help="simulated time per run (default 300ms)"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    cases = mixes(args.duration)
    experiments = [(with_scheduler(dev, s), flows) for _, dev, flows in cases for s in SCHEDULERS]
    results = iter(common.interference(experiments, label="flin "))
    rows, data = [], []
    for mix, _, flows in cases:
        for scheduling in SCHEDULERS:
            r = next(results)
            slowdowns = " ".join(f"{f['name']} {r.slowdown(f['name']):.2f}" for f in flows)
            rows.append(
                [
                    mix,
                    scheduling,
                    slowdowns,
                    common.fmt(r.fairness, 3),
                    common.fmt(r.weighted_speedup, 2),
                ]
            )
            data.append({"mix": mix, "scheduling": scheduling, **r.to_dict()})
    table = common.print_table(
        f"Schedulers on the Table 3 drive ({args.duration} per run; S = slowdown, F = fairness, "
        "WS = weighted speedup)",
        ["mix", "scheduling", "slowdowns", "F", "WS"],
        rows,
    )
    plt = common.pyplot()
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / len(SCHEDULERS)
    for i, scheduling in enumerate(SCHEDULERS):
        values = [d["fairness"] for d in data if d["scheduling"] == scheduling]
        ax.bar([m + i * width for m in range(len(cases))], values, width, label=scheduling)
    ax.set_xticks(
        [m + 0.4 - width / 2 for m in range(len(cases))], [c[0] for c in cases], fontsize=8
    )
    ax.set_ylabel("fairness F = min S / max S")
    ax.set_ylim(0, 1)
    ax.legend()
    ax.set_title("Fairness by scheduler and flow mix")
    out = common.save(NAME, fig, {"table": table, "runs": data})
    print(f"wrote {out} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
