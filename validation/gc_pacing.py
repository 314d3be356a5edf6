"""GC pacing (issue 16): host writes on a drive in steady state, with GC paced against them
(`ftl.gc_pacing`, the default) and with GC ahead of every host write (MQSim without preemptible
GC, `gc_pacing = false`).

Cases, on MQSim's default drive (examples/mqsim-default.toml: 8 channels x 4 chips x 2 dies x 2
planes, 2048 blocks of 256 8 KiB pages, 7 % over-provisioning, GC threshold 5 %), each
preconditioned to its own steady state:

- `example`: the example as it is (a QD 16 reader beside a QD 4 writer, 256 MiB write cache);
- `half`: no data cache, random 4 KiB writes at QD 32 over half the logical space;
- `whole`: the same over the whole logical space, with the 2 MiB cached mapping table;
- `whole-ideal`: the same with the whole mapping table in DRAM;
- `4tib` (with --large): a 4 TiB drive (16 KiB pages, 8192 blocks per plane, defaults
  otherwise), random 4 KiB writes at QD 32 over the whole space. Before pacing the stall
  watchdog stopped it: no request completed for 10 simulated seconds.

For each: IOPS, write latency p99.99 and max, the longest stretch with requests in the device and
none completing (`device.longest_completion_gap_us`), and write amplification. The issue's bar:
no stretch over 100 ms.

Writes results/validation/gc_pacing/{table.md, gc_pacing.json}.

Run: .venv/bin/python validation/gc_pacing.py [--requests N] [--large]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import ssdlab

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "validation" / "gc_pacing"
EXAMPLE = ROOT / "examples" / "mqsim-default.toml"

WRITER = {
    "name": "writer",
    "read_fraction": 0.0,
    "request_size": "4KiB",
    "alignment": "4KiB",
    "address": "uniform",
    "queue_depth": 32,
}


def cases(requests: int, large: bool) -> dict[str, tuple[str | Path | dict, list[str]]]:
    """name -> (config, overrides)."""
    base = ssdlab.api.load_document(EXAMPLE, (), None)[0]
    uncached = dict(base, cache={"capacity": "0MiB"})
    found: dict[str, tuple[str | Path | dict, list[str]]] = {
        "example": (EXAMPLE, []),
        "half": (dict(uncached, flows=[dict(WRITER, working_set=0.5, requests=requests)]), []),
        "whole": (dict(uncached, flows=[dict(WRITER, requests=requests)]), []),
        "whole-ideal": (
            dict(uncached, flows=[dict(WRITER, requests=requests)]),
            ["ftl.ideal_mapping=true"],
        ),
    }
    if large:
        drive = {
            "seed": 1,
            "flash": {
                "channels": 8,
                "chips_per_channel": 4,
                "dies_per_chip": 2,
                "planes_per_die": 2,
                "blocks_per_plane": 8192,
                "pages_per_block": 256,
                "page_size": "16KiB",
            },
            "flows": [dict(WRITER, requests=requests)],
        }
        found["4tib"] = (drive, [])
    return found


def measure(config: str | Path | dict, overrides: list[str]) -> dict[str, float | str]:
    try:
        r = ssdlab.simulate(config, overrides=overrides, base_dir=ROOT)
    except RuntimeError as e:
        return {"error": str(e).split(";")[0]}
    w = r.device.writes.latency_us
    return {
        "iops": round(r.device.iops),
        "write_p99_99_us": round(w.p99_99),
        "write_max_us": round(w.max),
        "longest_gap_ms": round(r.device.longest_completion_gap_us / 1000, 1),
        "write_amplification": round(r.device.gc.write_amplification, 2),
        "simulated_s": round(r.simulated_seconds, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=30_000, help="writes per uncached case")
    parser.add_argument("--large", action="store_true", help="also the 4 TiB drive (minutes, GiBs)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    table = {}
    for name, (config, overrides) in cases(args.requests, args.large).items():
        for paced in (True, False):
            row = measure(config, [*overrides, f"ftl.gc_pacing={str(paced).lower()}"])
            table[f"{name}/{'paced' if paced else 'gc-first'}"] = row
            print(f"{name:12} {'paced' if paced else 'GC first':9} {row}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gc_pacing.json").write_text(json.dumps(table, indent=2) + "\n")
    columns = ["iops", "write_p99_99_us", "write_max_us", "longest_gap_ms", "write_amplification"]
    lines = ["| case | GC | " + " | ".join(columns) + " |", "|---" * (len(columns) + 2) + "|"]
    for key, row in table.items():
        case, mode = key.split("/")
        cells = [str(row.get(c, row.get("error", math.nan))) for c in columns]
        lines.append(f"| {case} | {mode} | " + " | ".join(cells) + " |")
    (args.out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
