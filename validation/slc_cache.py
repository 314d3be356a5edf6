"""The SLC write cache's cliff: sustained sequential 128 KiB writes (QD 32) on the QLC example
drive, filled to different levels first. For each: the bandwidth while the writes land in the SLC
cache, how much is written before the bandwidth halves (the cliff), the bandwidth after it, and
the cache's size at the end.

What to expect: full speed until the cache fills, then the QLC cells' speed; with the dynamic
cache (sized from the free space) the cliff comes sooner on a fuller drive, and the speed after
it falls too, as GC joins the folding. A static cache of the same size would not move.

Writes results/validation/slc_cache/{table.md, slc_cache.json}.

Run: .venv/bin/python validation/slc_cache.py [--requests N]
"""

from __future__ import annotations

import json
from typing import Any

import common
import ssdlab

NAME = "slc_cache"
EXAMPLE = common.ROOT / "examples" / "qlc-slc-cache.toml"
FILLS = [0.0, 0.5, 0.7, 0.85, 0.95]
MIB = 1 << 20


def config(fill: float, requests: int, mode: str) -> dict[str, Any]:
    base = ssdlab.load_config(EXAMPLE)
    precondition = {"mode": "fill", "occupancy": fill} if fill else {"mode": "none"}
    flows = [dict(base["flows"][0], requests=requests)]
    flash = dict(base["flash"], slc_cache=dict(base["flash"]["slc_cache"], mode=mode))
    if mode == "static":
        flash["slc_cache"]["blocks_per_plane"] = 8
    return dict(base, flash=flash, precondition=precondition, flows=flows)


def run_one(key: str) -> dict[str, Any]:
    r = ssdlab.simulate(json.loads(key))
    ts = r.series
    w = ts.flows[0].writes
    first = w.bandwidth_mib_s[0]
    at = next((i for i, b in enumerate(w.bandwidth_mib_s) if b < 0.5 * first), len(w.bytes))
    after = w.bytes[at + 4 :]
    seconds = sum(ts.duration_seconds[at + 4 :])
    return {
        "slc_mib_s": first,
        "mib_before_cliff": sum(w.bytes[:at]) / MIB,
        "mib_s_after": (sum(after) / MIB / seconds) if seconds else None,
        "cache_mib_at_end": r.slc_cache.capacity_bytes_at_end / MIB,
        "longest_gap_ms": r.device.longest_completion_gap_us / 1000,
    }


def study(requests: int) -> dict[str, Any]:
    configs = {
        f"{mode}/{fill}": config(fill, requests, mode)
        for mode in ("dynamic", "static")
        for fill in FILLS
    }
    return common.run_named(
        run_one, configs, lambda r: f"cliff after {r['mib_before_cliff']:.0f} MiB"
    )


def table(rows: dict[str, Any]) -> str:
    lines = []
    for key in (f"{mode}/{fill}" for mode in ("dynamic", "static") for fill in FILLS):
        r = rows[key]
        mode, fill = key.split("/")
        after = "-" if r["mib_s_after"] is None else common.fmt(r["mib_s_after"], 0)
        lines.append(
            [
                mode,
                f"{float(fill):.0%}",
                common.fmt(r["slc_mib_s"], 0),
                common.fmt(r["mib_before_cliff"], 0),
                after,
                common.fmt(r["cache_mib_at_end"], 0),
                common.fmt(r["longest_gap_ms"], 0),
            ]
        )
    headers = [
        "cache",
        "drive full",
        "SLC MiB/s",
        "MiB before cliff",
        "MiB/s after",
        "cache MiB at end",
        "longest gap ms",
    ]
    return common.print_table("Sequential writes into the SLC cache and past it", headers, lines)


def main() -> None:
    common.requests_study_main(NAME, __doc__, 12_000, "128 KiB writes", study, table)


if __name__ == "__main__":
    main()
