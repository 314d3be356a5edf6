"""`ssdlab report`: a self-contained HTML page with PNG charts, for a run or a sweep."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import small_config

RUN_CHARTS = [
    "latency_cdf.png",
    "throughput.png",
    "latency_over_time.png",
    "gc_over_time.png",
    "latency_breakdown.png",
]


def _mixed() -> dict:
    config = small_config(requests=1500)
    config["precondition"] = {"mode": "fill", "occupancy": 0.8, "layout": "spread"}
    config["flows"].append(
        {"name": "w", "read_fraction": 0.0, "queue_depth": 2, "requests": 600},
    )
    return config


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A run written by `ssdlab run --report`."""
    import sys

    from conftest import to_toml

    base = tmp_path_factory.mktemp("report")
    (base / "mixed.toml").write_text(to_toml(_mixed()), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "ssdlab", "run", "mixed.toml", "--out", "out", "--report"],
        cwd=base,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {Path('out') / 'report.html'}" in proc.stdout
    return base / "out"


def _assert_self_contained(text: str) -> None:
    assert not re.search(r"https?://", text), "the report references the network"
    assert not re.search(r"""(src|href)\s*=\s*["']?(?!data:)[^"'\s>]""", text), (
        "every resource must be embedded as a data URI"
    )
    assert "<script" not in text


def test_run_report_writes_html_and_charts(run_dir):
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    for chart in RUN_CHARTS:
        assert (run_dir / chart).stat().st_size > 5000, chart
    assert html.count('src="data:image/png;base64,') == len(RUN_CHARTS)
    _assert_self_contained(html)
    for text in ("Headline", "write amplification", "Latency breakdown", "chip_queue_wait"):
        assert text in html


def test_report_is_deterministic(run_dir, run_cli, tmp_path):
    copy = tmp_path / "out"  # the title names the folder
    copy.mkdir()
    shutil.copy(run_dir / "results.json", copy / "results.json")
    proc = run_cli("report", copy)
    assert proc.returncode == 0, proc.stderr
    assert (copy / "report.html").read_bytes() == (run_dir / "report.html").read_bytes()
    for chart in RUN_CHARTS:
        assert (copy / chart).read_bytes() == (run_dir / chart).read_bytes(), chart


def _chromium() -> str | None:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and os.environ.get("CI"):
        pytest.fail("chromium is required in CI (make chromium installs it)")
    if found is None:
        pytest.skip("chromium is not installed (make chromium installs it)")
    return found


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_report_renders_in_headless_chromium(kind, request, run_cli, tmp_path):
    chromium = _chromium()
    if kind == "sweep":
        folder = tmp_path / "sweep"
        _write_sweep(folder)
        proc = run_cli("report", folder)
        assert proc.returncode == 0, proc.stderr
    else:
        folder = request.getfixturevalue("run_dir")
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            "--window-size=1200,2000",
            (folder / "report.html").resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.is_file(), proc.stderr[-2000:]
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]
    colours = {tuple(p) for p in (pixels[::4, ::4].reshape(-1, 3) * 255).astype(int).tolist()}
    white = (pixels > 0.98).all(axis=-1).mean()
    assert len(colours) > 50, f"only {len(colours)} colours: blank page?"
    assert white < 0.97, f"{white:.1%} of the screenshot is white"


def _write_sweep(folder: Path) -> None:
    """A sweep.parquet in the layout of `ssdlab sweep --out` (two axes, two seeds, one failure)."""
    rows = []
    for qd in (1, 2, 4, 8, 16):
        for read in ("50us", "75us"):
            for seed in (1, 2):
                ok = not (qd == 16 and read == "75us" and seed == 2)
                iops = 1000.0 * qd / (1 + (read == "75us")) + seed
                rows.append(
                    {
                        "run": f"qd{qd}-{read}-s{seed}",
                        "run_dir": f"runs/qd{qd}-{read}-s{seed}",
                        "flows.0.queue_depth": qd,
                        "flash.timing.read": read,
                        "seed": seed,
                        "status": "ok" if ok else "failed",
                        "error": "" if ok else "end of life: worn out",
                        "iops": iops if ok else None,
                        "bandwidth_mib_s": iops / 256 if ok else None,
                        "read_iops": iops if ok else None,
                        "write_iops": 0.0,
                        "read_mean_us": 70.0 * qd if ok else None,
                        "read_p99_us": 90.0 * qd if ok else None,
                        "write_mean_us": None,
                        "write_p99_us": None,
                        "write_amplification": 0.0,
                        "simulated_seconds": 0.1,
                        "wall_seconds": 0.01,
                    }
                )
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(folder / "sweep.parquet", index=False)
    axes = ["flows.0.queue_depth", "flash.timing.read"]
    metrics = ["iops", "read_p99_us", "write_amplification"]
    (folder / "sweep.json").write_text(
        json.dumps({"axes": axes, "mode": "product", "metrics": metrics})
    )


def test_sweep_report_charts_each_axis_against_the_chosen_metrics(run_cli, tmp_path):
    folder = tmp_path / "sweep"
    _write_sweep(folder)
    proc = run_cli("report", folder, "--metric", "iops", "--metric", "read_mean_us")
    assert proc.returncode == 0, proc.stderr
    html = (folder / "report.html").read_text(encoding="utf-8")
    _assert_self_contained(html)
    assert (folder / "sweep_flows_0_queue_depth.png").stat().st_size > 5000
    assert (folder / "sweep_flash_timing_read.png").stat().st_size > 5000
    assert "read_mean_us vs flows.0.queue_depth" not in html  # titles live in the images
    assert "20 runs (1 failed)" in html and "end of life: worn out" in html
    assert "metrics: iops, read_mean_us" in html


def test_sweep_report_defaults_to_the_standard_metrics_it_has(run_cli, tmp_path):
    folder = tmp_path / "sweep"
    _write_sweep(folder)
    proc = run_cli("report", folder)
    assert proc.returncode == 0, proc.stderr
    html = (folder / "report.html").read_text()
    # No write p99 (null in every run) and no write amplification (zero in every run).
    assert "metrics: iops, read_p99_us." in html


def test_unknown_metric_and_empty_folder_are_one_line_errors(run_cli, tmp_path):
    folder = tmp_path / "sweep"
    _write_sweep(folder)
    proc = run_cli("report", folder, "--metric", "iopz")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown metric iopz; sweep.parquet has: ")
    assert "read_p99_us" in proc.stderr and "Traceback" not in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli("report", empty)
    assert proc.returncode == 2
    assert "neither results.json" in proc.stderr and "Traceback" not in proc.stderr
