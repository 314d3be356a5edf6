"""Benchmarks of the live device (issue 14; `make bench` runs them, docs/live-device.md quotes
them): fio 4 KiB random reads at QD 32 against `--pace none` (target 200 k IOPS on 2 cores), and
at QD 1 against real-time pacing, where fio's p50 should be within 10 % (or 20 us) of the
model's p50 for the same requests. Prints one JSON document (and writes it with --out).

    python scripts/bench_live.py [--seconds 5] [--out bench-live.json]
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[1] / "examples/guest/guest-ssd.toml"


def run_case(pace: str, iodepth: int, seconds: int, work: Path) -> dict[str, object]:
    """Serves the device, runs fio against it, stops the server; fio's and the model's numbers."""
    sock, out = work / f"{pace}-{iodepth}.sock", work / f"{pace}-{iodepth}"
    serve = [sys.executable, "-m", "ssdlab", "serve", str(CONFIG), "--listen", f"unix:{sock}"]
    server = subprocess.Popen(
        [*serve, "--pace", pace, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    try:
        while not sock.exists():
            if server.poll() is not None:
                sys.exit(f"ssdlab serve exited with {server.returncode}")
            time.sleep(0.05)
        fio = subprocess.run(
            [
                "fio",
                "--name=bench",
                "--ioengine=nbd",
                f"--uri=nbd+unix:///?socket={sock}",
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
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
    job = json.loads(fio.stdout[fio.stdout.index("{") :])["jobs"][0]["read"]
    results = json.loads((out / "results.json").read_text())
    flow = next(f for f in results["flows"] if f["requests"])
    fio_p50_us = job["clat_ns"]["percentile"]["50.000000"] / 1000
    model_p50_us = flow["reads"]["latency_us"]["p50"]
    return {
        "pace": pace,
        "iodepth": iodepth,
        "seconds": seconds,
        "fio_iops": round(job["iops"]),
        "fio_p50_us": round(fio_p50_us, 1),
        "model_p50_us": round(model_p50_us, 1),
        "p50_gap_us": round(fio_p50_us - model_p50_us, 1),
        "pacing_error_us": results["live"]["pacing_error_us"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ssdlab-bench-live-") as work:
        throughput = run_case("none", 32, args.seconds, Path(work))
        latency = run_case("real-time", 1, args.seconds, Path(work))
    gap = latency["p50_gap_us"]
    report = {
        "benchmark": "live-device",
        "config": str(CONFIG.name),
        "cases": [throughput, latency],
        "targets": {
            "pace_none_qd32_iops": {"target": 200_000, "met": throughput["fio_iops"] >= 200_000},
            "real_time_qd1_p50": {
                "target": "within 10 % or 20 us of the model's p50",
                "met": gap <= max(20.0, 0.1 * latency["model_p50_us"]),
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
