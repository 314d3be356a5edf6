"""A data mismatch fails the run, as fio's verify fails a job (issue 12): `simulate` raises
`DataIntegrityError` carrying the results, `ssdlab run` writes results.json and exits 3 with an
error naming the first mismatch, and a sweep counts the point as failed. The mismatch comes from
a test-only hook that corrupts stored pages mid-run (tests/faults.py), not from a real bug."""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import subprocess
import sys
from pathlib import Path

import faults
import pytest
import ssdlab
from conftest import emulating_config, to_toml
from ssdlab import _core
from ssdlab.sweep import run_sweep

FAULTS = Path(faults.__file__)


@pytest.fixture
def corrupted(monkeypatch):
    monkeypatch.setattr(_core, "Simulation", faults.CorruptingSimulation)


def test_data_integrity_error_is_exported_and_a_runtime_error():
    assert ssdlab.DataIntegrityError is ssdlab.api.DataIntegrityError
    assert issubclass(ssdlab.DataIntegrityError, RuntimeError)
    assert "DataIntegrityError" in ssdlab.__all__


def test_a_clean_run_raises_nothing():
    r = ssdlab.simulate(emulating_config())
    assert r.data.mismatched_sectors == 0


def test_simulate_raises_with_the_results_on_a_mismatch(corrupted):
    with pytest.raises(ssdlab.DataIntegrityError) as caught:
        ssdlab.simulate(emulating_config())
    results = caught.value.results
    data = results.data
    assert data.mismatched_sectors > 0
    first = data.first_mismatch
    assert first is not None
    message = str(caught.value)
    assert message.startswith("data integrity: ")
    assert f"{data.mismatched_sectors:,} read sector(s) did not hold what the host last wrote" in (
        message
    )
    assert f"LBA {first.lba} " in message
    assert f"expected {first.expected}, read {first.found}" in message
    # The results are whole: they load, save and count every request.
    assert results.device.reads.count + results.device.writes.count == 6000


def test_a_mismatch_fails_a_run_with_alone_comparisons_too(corrupted):
    config = emulating_config()
    config["flows"].append({**config["flows"][0], "name": "w", "requests": 500})
    with pytest.raises(ssdlab.DataIntegrityError, match="data integrity"):
        ssdlab.simulate(config, alone=True)


def test_cli_writes_results_then_exits_3_naming_the_first_mismatch(tmp_path):
    config = tmp_path / "emu.toml"
    config.write_text(to_toml(emulating_config()), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, FAULTS, "corrupt-data", "run", config, "--out", tmp_path / "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    # results.json is there and complete: the user needs first_mismatch.
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    data = document["data"]
    assert data["mismatched_sectors"] > 0
    first = data["first_mismatch"]
    error = proc.stderr.strip().splitlines()
    assert len(error) == 1, proc.stderr
    assert error[0].startswith(f"error: {config}: data integrity: ")
    assert f"{data['mismatched_sectors']:,} read sector(s)" in error[0]
    assert f"LBA {first['lba']} " in error[0]
    assert f"expected {first['expected']}, read {first['found']}" in error[0]
    assert "wrote " in proc.stdout  # the summary and the file came first


def test_a_sweep_counts_a_mismatching_point_as_failed(tmp_path, monkeypatch):
    (tmp_path / "base.toml").write_text(to_toml(emulating_config()), encoding="utf-8")
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('base = "base.toml"\n[axes]\n"flows.0.queue_depth" = [1]\n')
    out = tmp_path / "out"
    monkeypatch.setattr(_core, "Simulation", faults.CorruptingSimulation)
    with cf.ThreadPoolExecutor(1) as pool:  # in this process, where the fault is in place
        result = run_sweep(sweep, out, executor=pool)
    assert not result.ok
    (row,) = result.failed
    assert row["error"].startswith("DataIntegrityError: data integrity: ")
    folder = out / "runs" / "0000"
    assert not (folder / "results.json").exists(), "a failed point must not look finished"
    assert (folder / "error.txt").read_text().startswith("DataIntegrityError: ")
    kept = ssdlab.Results.load(folder / "failed-results.json")
    assert kept.data.mismatched_sectors > 0

    # Resumed without the fault: the point runs again, and its failure record goes.
    monkeypatch.undo()
    result = run_sweep(sweep, out, jobs=1)
    assert result.ok and result.ran == 1
    assert sorted(p.name for p in folder.iterdir()) == ["point.json", "results.json"]


def test_sweep_cli_exits_3_when_a_point_mismatches(tmp_path):
    """The sweep command, with the fault in the worker processes too: the forkserver imports
    ssdlab afresh, so the fault is installed through a worker-side sitecustomize."""
    (tmp_path / "base.toml").write_text(to_toml(emulating_config()), encoding="utf-8")
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('base = "base.toml"\n[axes]\n"flows.0.queue_depth" = [1, 2]\n')
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        f"import sys\nsys.path.insert(0, {str(FAULTS.parent)!r})\nimport faults\n"
        "faults.corrupt_data()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "ssdlab", "sweep", sweep, "--out", tmp_path / "out", "-j", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": str(site)},
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "2 failed" in proc.stdout
    assert "DataIntegrityError: data integrity" in proc.stdout
