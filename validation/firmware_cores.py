"""Firmware cores: how the controller's computation complex shows in random-read performance,
the effect Amber (Gouk et al., MICRO 2018) set out to model.

The device is `examples/amber-intel750.toml` (Intel 750-like, firmware on 3 cores at 400 MHz by
default) with only its reader: random 4 KiB reads at QD 32 on the aged drive. The study sweeps
the core clock (50 to 800 MHz) and the number of cores (1 to 3; with fewer cores the default
step assignment folds onto the cores there are) and reports IOPS, mean latency, the firmware
share of the latency and the busiest core's utilisation.

What to expect: at a fast clock the flash is the bottleneck and neither the clock nor the cores
matter much; as the clock falls, the firmware step grows in every request and one core (the HIL
with 3 cores, the single core with 1) saturates and caps the IOPS at 1 / (its work per
request), which more cores relieve by pipelining the steps.

Writes results/validation/firmware_cores/{table.md, firmware_cores.json}.

Run: .venv/bin/python validation/firmware_cores.py [--requests N]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import common
import ssdlab

NAME = "firmware_cores"
OUT_DIR = common.RESULTS_DIR / NAME
EXAMPLE = common.ROOT / "examples" / "amber-intel750.toml"
CLOCKS_MHZ = [50, 100, 200, 400, 800]
CORES = [1, 2, 3]


def config(requests: int) -> dict[str, Any]:
    """The Amber example with its reader alone."""
    cfg = ssdlab.load_config(EXAMPLE)
    cfg["flows"] = [dict(cfg["flows"][0], requests=requests)]
    return cfg


def study(requests: int = 20000) -> list[dict[str, Any]]:
    """One row per (cores, clock)."""
    rows = []
    base = config(requests)
    for cores in CORES:
        for mhz in CLOCKS_MHZ:
            r = ssdlab.simulate(
                base,
                overrides=[f"firmware.cores={cores}", f"firmware.clock={mhz}MHz"],
                base_dir=EXAMPLE.parent,
            )
            fw = r.firmware
            reads = r.device.reads
            rows.append(
                {
                    "cores": cores,
                    "clock_mhz": mhz,
                    "iops": reads.iops,
                    "mean_latency_us": reads.latency_us.mean,
                    "firmware_us": reads.latency_breakdown_us["firmware"],
                    "firmware_share": fw.latency_share,
                    "busiest_core_utilisation": max(fw.core_utilisation),
                    "per_request_core_us": sum(fw.core_busy_seconds) * 1e6 / reads.count,
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20000)
    args = parser.parse_args()
    rows = study(args.requests)
    table = common.print_table(
        "Random 4 KiB reads at QD 32 on the Intel 750-like device, by firmware cores and clock",
        ["cores", "clock", "IOPS", "mean us", "firmware us", "firmware share", "busiest core"],
        [
            [
                str(r["cores"]),
                f"{r['clock_mhz']} MHz",
                common.fmt(r["iops"], 0),
                common.fmt(r["mean_latency_us"]),
                common.fmt(r["firmware_us"]),
                f"{100 * r['firmware_share']:.1f} %",
                f"{100 * r['busiest_core_utilisation']:.0f} %",
            ]
            for r in rows
        ],
    )
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "table.md").write_text(table)
    (OUT_DIR / f"{NAME}.json").write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
