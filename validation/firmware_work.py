"""Firmware cost from the work done: the same requests on NVMe, UFS and SATA, and the FTL's cost
at a full and a poor CMT hit rate, the direction Amber (Gouk et al., MICRO 2018) measured.

The device is `examples/amber-intel750.toml` (firmware on 3 cores at 400 MHz), its reader alone,
at queue depth 8, for 4 KiB and 64 KiB random reads and 4 KiB random writes, with the host
interface switched between NVMe, UFS (its `[host.ufs]` defaults) and SATA. For each: the
firmware's instructions per request, the share of the host interface layer (HIL), the share of
loads and stores, and instructions per second. Then 4 KiB random reads with an ideal mapping table
and with a 256 KiB cached mapping table (CMT) over the whole drive: FTL instructions per request.

What to expect: NVMe's controller fetches commands and PRP lists from host memory and posts
completions and interrupts itself, which UFS's and SATA's host controllers do for their devices,
so NVMe's per-request instructions are several times UFS's (Amber: 5.45x) and SATA sits
between; loads and stores are the largest class; CMT misses multiply the FTL's instructions.

Writes results/validation/firmware_work/{table.md, firmware_work.json}.

Run: .venv/bin/python validation/firmware_work.py [--requests N]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import common
import ssdlab

NAME = "firmware_work"
OUT_DIR = common.RESULTS_DIR / NAME
EXAMPLE = common.ROOT / "examples" / "amber-intel750.toml"
INTERFACES = ["nvme", "ufs", "sata"]
WORKLOADS = [
    ("4 KiB read", "4KiB", 1.0),
    ("64 KiB read", "64KiB", 1.0),
    ("4 KiB write", "4KiB", 0.0),
]


def config(requests: int, size: str, read_fraction: float) -> dict[str, Any]:
    """The Amber example with one flow of `size` random requests at queue depth 8."""
    cfg = ssdlab.load_config(EXAMPLE)
    flow = dict(cfg["flows"][0], requests=requests, request_size=size, alignment=size)
    flow.update(read_fraction=read_fraction, queue_depth=8)
    flow.pop("cache_mode", None)
    cfg["flows"] = [flow]
    return cfg


def summarise(r: ssdlab.Results) -> dict[str, Any]:
    fw = r.firmware
    assert fw is not None
    requests = r.device.reads.count + r.device.writes.count
    total = sum(fw.instructions_by_class.values())
    return {
        "instructions_per_request": total / requests,
        "hil_per_request": fw.instructions_by_step["hil"] / requests,
        "ftl_per_request": fw.instructions_by_step["ftl"] / requests,
        "hil_share": fw.instructions_by_step["hil"] / total,
        "load_store_share": fw.instructions_by_class["load_store"] / total,
        "instructions_per_second": fw.instructions_per_second,
        "iops": r.device.iops,
        "cmt_hit_rate": r.flows[0].cmt_hit_rate,
        "work_units": fw.work_units,
    }


def study(requests: int = 20000) -> dict[str, list[dict[str, Any]]]:
    interfaces = []
    for label, size, read_fraction in WORKLOADS:
        base = config(requests, size, read_fraction)
        for interface in INTERFACES:
            r = ssdlab.simulate(
                base, overrides=[f"host.interface={interface}"], base_dir=EXAMPLE.parent
            )
            interfaces.append({"workload": label, "interface": interface, **summarise(r)})
    cmt = []
    base = config(requests, "4KiB", 1.0)
    for label, overrides in [
        ("ideal", []),
        ("256 KiB CMT", ["ftl.ideal_mapping=false", "ftl.cmt_capacity=256KiB"]),
    ]:
        r = ssdlab.simulate(base, overrides=overrides, base_dir=EXAMPLE.parent)
        cmt.append({"mapping": label, **summarise(r)})
    return {"interfaces": interfaces, "cmt": cmt}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20000)
    args = parser.parse_args()
    rows = study(args.requests)
    ufs = {
        r["workload"]: r["instructions_per_request"]
        for r in rows["interfaces"]
        if r["interface"] == "ufs"
    }
    table = common.print_table(
        "Firmware instructions for the same requests by interface (Intel 750-like device, QD 8)",
        [
            "workload",
            "interface",
            "instr/request",
            "x UFS",
            "HIL/request",
            "HIL share",
            "load/store",
            "instr/s",
            "IOPS",
        ],
        [
            [
                r["workload"],
                r["interface"],
                common.fmt(r["instructions_per_request"], 0),
                f"{r['instructions_per_request'] / ufs[r['workload']]:.2f}",
                common.fmt(r["hil_per_request"], 0),
                f"{100 * r['hil_share']:.0f} %",
                f"{100 * r['load_store_share']:.0f} %",
                f"{r['instructions_per_second'] / 1e6:.1f} M",
                common.fmt(r["iops"], 0),
            ]
            for r in rows["interfaces"]
        ],
    )
    table += "\n" + common.print_table(
        "FTL instructions per 4 KiB random read by CMT hit rate (NVMe)",
        ["mapping", "CMT hit rate", "FTL/request", "instr/request", "IOPS"],
        [
            [
                r["mapping"],
                f"{100 * r['cmt_hit_rate']:.1f} %",
                common.fmt(r["ftl_per_request"], 0),
                common.fmt(r["instructions_per_request"], 0),
                common.fmt(r["iops"], 0),
            ]
            for r in rows["cmt"]
        ],
    )
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "table.md").write_text(table)
    (OUT_DIR / f"{NAME}.json").write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
