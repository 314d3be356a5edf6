"""Benchmarks of the live device (issue 14; `make bench` runs them, docs/live-device.md quotes
them): fio 4 KiB random reads at QD 32 against `--pace none` (target 200 k IOPS on 2 cores), and
at QD 1 against real-time pacing, where fio's p50 should be within 10 % (or 20 us) of the
model's p50 for the same requests. Prints one JSON document (and writes it with --out).

Beside them, what this machine's NBD transport costs by itself: fio at QD 1 and 32 against
`--pace none`, and against nbdkit's memory plugin (a null server; skipped when nbdkit is not
installed). On a virtual machine a round trip through a unix socket costs tens of microseconds
of wake-ups whatever the server does, and fio's own CPU time bounds the IOPS.

    python scripts/bench_live.py [--seconds 5] [--out bench-live.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from ssdlab.live import Server

CONFIG = Path(__file__).resolve().parents[1] / "examples/guest/guest-ssd.toml"


def fio(socket: Path, iodepth: int, seconds: int) -> dict[str, float]:
    """fio 4 KiB random reads over NBD at `socket`: IOPS, p50 (us) and fio's CPU use."""
    done = subprocess.run(
        [
            "fio",
            "--name=bench",
            "--ioengine=nbd",
            f"--uri=nbd+unix:///?socket={socket}",
            "--rw=randread",
            "--bs=4k",
            "--size=128m",
            f"--iodepth={iodepth}",
            f"--runtime={seconds}",
            "--time_based=1",
            "--output-format=json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    job = json.loads(done.stdout[done.stdout.index("{") :])["jobs"][0]
    return {
        "fio_iops": round(job["read"]["iops"]),
        "fio_p50_us": round(job["read"]["clat_ns"]["percentile"]["50.000000"] / 1000, 1),
        "fio_cpu_percent": round(job["usr_cpu"] + job["sys_cpu"], 1),
    }


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process `pid` and its threads so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_case(pace: str, iodepth: int, seconds: int, work: Path) -> dict[str, object]:
    """Serves the device, runs fio against it, stops the server; fio's and the model's numbers."""
    with Server(CONFIG, work / f"{pace}-{iodepth}.sock", pace=pace) as server:
        assert server.process is not None
        cpu_before = cpu_seconds(server.process.pid)
        measured = fio(server.socket, iodepth, seconds)
        server_cpu_s = cpu_seconds(server.process.pid) - cpu_before
    results = server.results().to_dict()
    flow = next(f for f in results["flows"] if f["requests"])
    requests = measured["fio_iops"] * seconds
    model_p50_us = flow["reads"]["latency_us"]["p50"]
    return {
        "server": "ssdlab",
        "pace": pace,
        "iodepth": iodepth,
        "seconds": seconds,
        **measured,
        # The server's CPU time per request: what it could serve with a faster client.
        "server_cpu_us_per_request": round(server_cpu_s / requests * 1e6, 2) if requests else None,
        "server_cpu_percent": round(server_cpu_s / seconds * 100, 1),
        "model_p50_us": round(model_p50_us, 1),
        "p50_gap_us": round(measured["fio_p50_us"] - model_p50_us, 1),
        "pacing_error_us": results["live"]["pacing_error_us"],
    }


def nbdkit_case(iodepth: int, seconds: int, work: Path) -> dict[str, object] | None:
    """fio against nbdkit's memory plugin: the transport's cost with no model behind it."""
    if shutil.which("nbdkit") is None:
        return None
    socket = work / f"nbdkit-{iodepth}.sock"
    server = subprocess.Popen(["nbdkit", "-f", "-U", str(socket), "memory", "512M"])
    try:
        while not socket.exists():
            time.sleep(0.05)
        return {"server": "nbdkit memory", "iodepth": iodepth, **fio(socket, iodepth, seconds)}
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ssdlab-bench-live-") as folder:
        work = Path(folder)
        throughput = run_case("none", 32, args.seconds, work)
        round_trip = run_case("none", 1, args.seconds, work)
        latency = run_case("real-time", 1, args.seconds, work)
        reference = [c for c in (nbdkit_case(d, args.seconds, work) for d in (1, 32)) if c]
    gap = latency["p50_gap_us"]
    # What the server adds beyond the machine's own round trip (measured unpaced at QD 1).
    beyond = round(gap - round_trip["fio_p50_us"], 1)
    report = {
        "benchmark": "live-device",
        "config": str(CONFIG.name),
        "cases": [throughput, round_trip, latency],
        "reference": reference,
        "targets": {
            "pace_none_qd32_iops": {"target": 200_000, "met": throughput["fio_iops"] >= 200_000},
            "real_time_qd1_p50": {
                "target": "within 10 % or 20 us of the model's p50",
                "met": gap <= max(20.0, 0.1 * latency["model_p50_us"]),
                "gap_beyond_unpaced_round_trip_us": beyond,
            },
        },
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
