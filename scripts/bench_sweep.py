"""Sweep scaling benchmark (issue 18, target 5; `make bench` runs it, docs/sweeps.md quotes it).

One sweep of equal points (a 128 GiB drive filled to 75 %, then random 4 KiB requests, each
point with its own seed) runs with 1, 2, ... and all local worker processes, and then through
a Dask cluster started the way a multi-node one is: a `dask scheduler` process and separate
`dask worker` processes that reach it over TCP (on this machine; on a cluster the workers run
on other hosts and nothing else changes). For each it reports the wall time, the points per
second and the parallel efficiency per core, T(1) / (n x T(n)), against one local worker.

    python scripts/bench_sweep.py [--points 8] [--requests 1500000] [--runs 1] [--out FILE]

Whole-sweep wall times, so worker start-up, the result transfers and writing sweep.parquet
count, as they do for a user.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ssdlab.sweep import dask_executor, load_sweep, run_sweep

SWEEP = """\
seeds = {points}

[config]
[config.flash]
blocks_per_plane = 512
[config.precondition]
mode = "fill"
occupancy = 0.75
[[config.flows]]
read_fraction = 0.7
request_size = "4KiB"
alignment = "4KiB"
address = "uniform"
queue_depth = 32
requests = {requests}
"""


def timed_sweep(sweep_file: Path, out: Path, **kwargs: object) -> float:
    """Runs the whole sweep into a fresh `out`; returns its wall seconds."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    result = run_sweep(load_sweep(sweep_file), out, **kwargs)
    wall = time.perf_counter() - start
    if not result.ok:
        raise SystemExit(f"sweep failed: {result.failed}")
    return wall


def best_of(runs: int, sweep_file: Path, out: Path, **kwargs: object) -> float:
    """The fastest of `runs` whole sweeps (the others were slowed by the rest of the machine)."""
    return min(timed_sweep(sweep_file, out, **kwargs) for _ in range(runs))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dask_cluster_sweep(sweep_file: Path, out: Path, workers: int) -> float:
    """The sweep on a scheduler and `workers` worker processes started from the `dask` command."""
    dask = Path(sys.executable).with_name("dask")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen(
        [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], **quiet
    )
    procs = [scheduler]
    try:
        procs += [
            subprocess.Popen(
                [dask, "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard"],
                **quiet,
            )
            for _ in range(workers)
        ]
        from distributed import Client

        with Client(address, timeout="60s") as client:
            client.wait_for_workers(workers, timeout=60)
        executor, close = dask_executor(address)
        try:
            return timed_sweep(sweep_file, out, executor=executor)
        finally:
            close()
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=8, help="sweep points (seeds)")
    parser.add_argument("--requests", type=int, default=1_500_000, help="requests per point")
    parser.add_argument("--runs", type=int, default=1, help="repeats per row; the fastest counts")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    counts = sorted({1, 2, cores} & set(range(1, cores + 1)) | {n for n in (4, 8) if n < cores})
    rows = []
    with tempfile.TemporaryDirectory(prefix="ssdlab-bench-sweep-") as tmp:
        sweep_file = Path(tmp) / "sweep.toml"
        sweep_file.write_text(SWEEP.format(points=args.points, requests=args.requests))
        out = Path(tmp) / "out"
        timed_sweep(sweep_file, out, jobs=1)  # warm-up: the page cache, the forkserver's imports
        base = None
        for n in counts:
            wall = best_of(args.runs, sweep_file, out, jobs=n)
            base = base or wall
            rows.append({"executor": "local processes", "workers": n, "wall_seconds": wall})
        for n in (min(2, cores), cores) if cores > 1 else (1,):
            wall = min(dask_cluster_sweep(sweep_file, out, n) for _ in range(args.runs))
            executor = "dask scheduler + workers over TCP"
            rows.append({"executor": executor, "workers": n, "wall_seconds": wall})
            if n == cores:
                break
    for row in rows:
        wall = row["wall_seconds"]
        row["wall_seconds"] = round(wall, 3)
        row["points_per_second"] = round(args.points / wall, 3)
        row["efficiency_per_core"] = round(base / (row["workers"] * wall), 3)
    document = {
        "name": "sweep-scaling",
        "description": f"{args.points} points of {args.requests:,} random 4 KiB requests "
        "(70 % reads, QD 32) on a 128 GiB drive filled to 75 %; "
        "efficiency per core = T(1 local worker) / (workers x T)",
        "cores": cores,
        "points": args.points,
        "requests_per_point": args.requests,
        "rows": rows,
    }
    text = json.dumps(document, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
