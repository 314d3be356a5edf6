"""Zoned namespaces: the block interface tax a zoned drive avoids, and the parallelism a zone
gets from the planes it stripes over.

The drive: 8 channels x 2 planes of 128 blocks of 128 16-KiB TLC pages (4 GiB), the cell
timings of examples/zns-zn540-class.toml; 7 % over-provisioning when zoned, 12 % when
conventional.

1. Two logs with different lifetimes: a hot log rewriting 10 % of the drive beside a cold log
   rewriting 80 %, at the same request rate (128 KiB writes, QD 4 each), over about two passes of
   the cold log.
   - conventional: two sequential writers over their slices of a drive filled to 90 %; their
     pages share blocks, so GC moves the cold log's live data out of blocks the hot log emptied
     (the ZNS paper's "block interface tax": write amplification and over-provisioning);
   - zoned: each log a zone writer over its zones, resetting its oldest zone when it needs room.
   What to expect: the zoned drive writes amplify exactly 1.000 and moves nothing; the
   conventional one more.
2. Zones over 1 to 16 planes (`zns.zone_planes`, 32 MiB zones), one and four zones written at
   once, write-only: bandwidth grows with the planes a zone stripes over and with open zones
   (ConfZNS, SYSTOR 2023).

Writes results/validation/zns/{table.md, zns.json}.

Run: .venv/bin/python validation/zns.py [--requests N]
"""

from __future__ import annotations

import json
from typing import Any

import common
import ssdlab

NAME = "zns"

DEVICE: dict[str, Any] = {
    "seed": 1,
    "flash": {
        "channels": 8,
        "chips_per_channel": 1,
        "dies_per_chip": 1,
        "planes_per_die": 2,
        "blocks_per_plane": 128,
        "pages_per_block": 128,
        "page_size": "16KiB",
        "channel_width_bytes": 1,
        "channel_rate": "800MT/s",
        "technology": "TLC",
        "timing": {"read": "50us", "program": "167us", "erase": "3.5ms"},
    },
    "ftl": {"over_provisioning": 0.07, "ideal_mapping": True, "gc_policy": "greedy"},
}

# Two logs: (name, fraction of the drive, where it starts).
LOGS = [("hot", 0.1, 0.0), ("cold", 0.8, 0.1)]


def two_logs(zoned: bool, requests: int) -> dict[str, Any]:
    flows = []
    for name, size, start in LOGS:
        flow: dict[str, Any] = {
            "name": name,
            "read_fraction": 0.0,
            "request_size": "128KiB",
            "working_set": size,
            "working_set_start": start,
            "queue_depth": 4,
            "requests": requests,
        }
        if zoned:
            flow.update(address="zoned", open_zones=1)
        else:
            flow.update(address="sequential", alignment="128KiB")
        flows.append(flow)
    config = dict(DEVICE, flows=flows)
    if zoned:
        config["zns"] = {"max_open_zones": 4, "max_active_zones": 4}
        config["precondition"] = {"mode": "none"}
    else:
        # A conventional drive keeps more spare space for its GC (12 %, against the zoned
        # drive's 7 % for worn-out blocks: the over-provisioning part of the tax).
        config["ftl"] = dict(DEVICE["ftl"], over_provisioning=0.12)
        config["precondition"] = {"mode": "fill", "occupancy": 0.9}
    return config


def striping(zone_planes: int, open_zones: int, requests: int) -> dict[str, Any]:
    flow = {
        "name": "log",
        "address": "zoned",
        "open_zones": open_zones,
        "read_fraction": 0.0,
        "request_size": "128KiB",
        "queue_depth": 32,
        "requests": requests // 4,
    }
    zns = {
        "zone_capacity": "32MiB",
        "zone_planes": zone_planes,
        "max_open_zones": 8,
        "max_active_zones": 8,
    }
    return dict(DEVICE, zns=zns, precondition={"mode": "none"}, flows=[flow])


def run_one(key: str) -> dict[str, Any]:
    r = ssdlab.simulate(json.loads(key))
    host = sum(f.writes.bytes for f in r.flows)
    gc = r.device.gc
    return {
        "write_amplification": gc.write_amplification,
        "pages_moved": gc.pages_moved,
        "write_mib_s": r.device.writes.bandwidth_mib_s,
        "write_p99_us": r.device.writes.latency_us.p99,
        "host_gib": host / 2**30,
        "resets": r.zns.resets if r.zns else None,
    }


def study(requests: int) -> dict[str, Any]:
    configs = {
        f"two logs/{'zoned' if zoned else 'conventional'}": two_logs(zoned, requests)
        for zoned in (False, True)
    }
    for zp in (1, 2, 4, 8, 16):
        for open_zones in (1, 4):
            configs[f"striping/{zp}/{open_zones}"] = striping(zp, open_zones, requests)
    return common.run_named(
        run_one,
        configs,
        lambda r: f"WA {r['write_amplification']:.3f}, {r['write_mib_s']:.0f} MiB/s",
    )


def table(rows: dict[str, Any]) -> str:
    lines = []
    for kind in ("conventional", "zoned"):
        r = rows[f"two logs/{kind}"]
        lines.append(
            [
                kind,
                f"{r['write_amplification']:.3f}",
                f"{r['pages_moved']:,}",
                common.fmt(r["write_mib_s"], 0),
                common.fmt(r["write_p99_us"], 0),
                f"{r['host_gib']:.1f}",
            ]
        )
    headers = ["drive", "WA", "GC pages moved", "write MiB/s", "write p99 us", "host GiB"]
    text = common.print_table("A hot and a cold log on one drive", headers, lines)
    lines = []
    for zp in (1, 2, 4, 8, 16):
        one, four = rows[f"striping/{zp}/1"], rows[f"striping/{zp}/4"]
        lines.append(
            [
                str(zp),
                common.fmt(one["write_mib_s"], 0),
                common.fmt(four["write_mib_s"], 0),
                f"{max(one['write_amplification'], four['write_amplification']):.3f}",
            ]
        )
    headers = ["zone planes", "1 open zone MiB/s", "4 open zones MiB/s", "WA"]
    return text + "\n" + common.print_table("Write bandwidth by zone striping", headers, lines)


def main() -> None:
    common.requests_study_main(NAME, __doc__, 60_000, "writes per log", study, table)


if __name__ == "__main__":
    main()
