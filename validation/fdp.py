"""Flexible Data Placement: write amplification of tenants with different data lifetimes on one
reclaim unit handle (mixed) and on a handle each (separate), the result FDP (NVMe TP4146) and
multi-stream SSDs before it were built for.

The drive is `examples/fdp-two-tenants.toml` (4 GiB of MLC, filled to 80 %, greedy GC). Mixes:
- log + index: a sequential writer over 70 % of the drive beside random 8 KiB updates of 10 %;
- cold + hot: random writers over 70 % and over 10 % (the same request rate: hot pages live 7x
  shorter);
- three tenants: random writers over 50 %, 20 % and 10 %.

What to expect: separate handles never write amplify more than mixed ones; the sequential
writer's reclaim units empty by themselves once it is alone in them (write amplification near
1); random writers gain less, since their own data ages unevenly too.

Writes results/validation/fdp/{table.md, fdp.json}.

Run: .venv/bin/python validation/fdp.py [--requests N]
"""

from __future__ import annotations

import json
from typing import Any

import common
import ssdlab

NAME = "fdp"
EXAMPLE = common.ROOT / "examples" / "fdp-two-tenants.toml"

# Each mix: tenants as (name, address pattern, working set, working-set start).
MIXES: dict[str, list[tuple[str, str, float, float]]] = {
    "log + index": [("index", "uniform", 0.1, 0.0), ("log", "sequential", 0.7, 0.1)],
    "cold + hot": [("hot", "uniform", 0.1, 0.0), ("cold", "uniform", 0.7, 0.1)],
    "three tenants": [
        ("hot", "uniform", 0.1, 0.0),
        ("warm", "uniform", 0.2, 0.1),
        ("cold", "uniform", 0.5, 0.3),
    ],
}


def config(mix: str, separate: bool, requests: int) -> dict[str, Any]:
    base = ssdlab.load_config(EXAMPLE)
    flows = [
        {
            "name": name,
            "read_fraction": 0.0,
            "address": address,
            "request_size": "8KiB",
            "alignment": "8KiB",
            "working_set": size,
            "working_set_start": start,
            "queue_depth": 4,
            "requests": requests,
            "placement_handle": (i + 1) if separate else 1,
        }
        for i, (name, address, size, start) in enumerate(MIXES[mix])
    ]
    return dict(base, flows=flows)


def run_one(key: str) -> dict[str, Any]:
    r = ssdlab.simulate(json.loads(key))
    writes = [f.writes for f in r.flows]
    return {
        "write_amplification": r.fdp.media_bytes_written / r.fdp.host_bytes_written,
        "pages_moved": r.device.gc.pages_moved,
        "by_handle": {"+".join(h.flows): h.write_amplification for h in r.fdp.handles if h.flows},
        "write_p99_us": max(w.latency_us.p99 for w in writes),
        "write_max_us": max(w.latency_us.max for w in writes),
    }


def study(requests: int) -> dict[str, Any]:
    configs = {
        f"{mix}/{'separate' if separate else 'mixed'}": config(mix, separate, requests)
        for mix in MIXES
        for separate in (False, True)
    }
    return common.run_named(run_one, configs, lambda r: f"WA {r['write_amplification']:.3f}")


def table(rows: dict[str, Any]) -> str:
    title = "Write amplification on one handle (mixed) and a handle per tenant (separate)"
    lines = []
    for mix in MIXES:
        m, s = rows[f"{mix}/mixed"], rows[f"{mix}/separate"]
        per = ", ".join(f"{n} {wa:.3f}" for n, wa in s["by_handle"].items())
        lines.append(
            [
                mix,
                f"{m['write_amplification']:.3f}",
                f"{s['write_amplification']:.3f}",
                per,
                f"{common.fmt(m['write_p99_us'], 0)} / {common.fmt(s['write_p99_us'], 0)}",
                f"{common.fmt(m['write_max_us'], 0)} / {common.fmt(s['write_max_us'], 0)}",
            ]
        )
    headers = ["mix", "mixed WA", "separate WA", "separate, by handle", "p99 us", "max us"]
    return common.print_table(title, headers, lines)


def main() -> None:
    common.requests_study_main(NAME, __doc__, 300_000, "writes per tenant", study, table)


if __name__ == "__main__":
    main()
