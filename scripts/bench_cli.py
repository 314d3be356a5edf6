"""Command start-up benchmark (issue 18, target 1; `make bench` runs it; docs/performance.md).

What a short `ssdlab run` costs beyond its simulation: the interpreter, importing the command,
reading the arguments and the config, writing results.json and exiting. Each row is a fresh
process, timed from the parent (as a user or a sweep script sees it), `runs` times; the median
and the fastest are reported. The `run` row's `overhead` is its whole time minus the
simulation's own wall time from results.json (`wall_seconds`, setup included), run by run.

    python scripts/bench_cli.py [--runs 9] [--requests 1000] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# MQSim's default device (the core's defaults), empty rather than in steady state (the default
# start), random 4 KiB reads at QD 32: with the default 1,000 requests the simulation takes a
# few milliseconds and the rest is the command.
CONFIG = """\
seed = 1
[precondition]
mode = "none"
[[flows]]
read_fraction = 1.0
request_size = "4KiB"
alignment = "4KiB"
address = "uniform"
queue_depth = 32
requests = {requests}
"""


def timed(command: list[str]) -> float:
    """Wall seconds of `command` in a fresh process (its output discarded; it must succeed)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median_seconds": round(statistics.median(values), 4),
        "min_seconds": round(min(values), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="processes per row")
    parser.add_argument("--requests", type=int, default=1000, help="requests of the run row")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    python = sys.executable
    rows = []
    with tempfile.TemporaryDirectory(prefix="ssdlab-bench-cli-") as tmp:
        config = Path(tmp) / "short.toml"
        config.write_text(CONFIG.format(requests=args.requests))
        out = Path(tmp) / "out"
        commands = {
            "interpreter": [python, "-c", "pass"],
            "import": [python, "-c", "import ssdlab.cli"],
            "version": [python, "-m", "ssdlab", "--version"],
            "run": [python, "-m", "ssdlab", "run", str(config), "--out", str(out), "-q"],
        }
        timed(commands["run"])  # warm-up: the page cache
        times: dict[str, list[float]] = {name: [] for name in commands}
        overheads = []
        for _ in range(args.runs):
            for name, command in commands.items():  # alternated, so drifts hit every row alike
                wall = timed(command)
                times[name].append(wall)
                if name == "run":
                    simulation = json.loads((out / "results.json").read_text())["wall_seconds"]
                    overheads.append(wall - simulation)
        for name, command in commands.items():
            shown = " ".join(["python", *command[1:]]).replace(str(config), "short.toml")
            row = {"what": name, "command": shown.replace(str(out), "OUT"), **summary(times[name])}
            if name == "run":
                row["overhead"] = summary(overheads)
            rows.append(row)
    document = {
        "name": "cli-start",
        "description": f"`ssdlab run` of {args.requests:,} random 4 KiB reads at QD 32 on "
        "MQSim's default device, whole process; overhead = whole minus results.json's "
        "wall_seconds",
        "runs": args.runs,
        "rows": rows,
    }
    text = json.dumps(document, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
