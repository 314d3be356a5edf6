"""`ssdlab sweep`: axes, ranges, seeds, product and zip, resuming, failures, and executors (a
local process pool and a real Dask scheduler with two workers)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import run_script, small_config, to_toml
from ssdlab.results import Results
from ssdlab.sweep import METRICS, SweepError, load_sweep, run_point, run_sweep

FIXED_COLUMNS = ["run", "run_dir"]
TAIL_COLUMNS = ["seed", "status", "error", *METRICS]


def _write_sweep(tmp_path: Path, text: str, requests: int = 500) -> Path:
    """A base config (the small test device, one mixed flow) and a sweep file beside it."""
    base = small_config(read_fraction=0.7, requests=requests)
    (tmp_path / "base.toml").write_text(to_toml(base), encoding="utf-8")
    path = tmp_path / "sweep.toml"
    path.write_text('base = "base.toml"\n' + text, encoding="utf-8")
    return path


def _table(out: Path) -> list[dict]:
    return pq.read_table(out / "sweep.parquet").to_pylist()


def _sweep_cli(*args: str | Path, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ssdlab", "sweep", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_product_of_axes_and_seeds_gives_one_row_per_run(tmp_path):
    path = _write_sweep(
        tmp_path,
        'seeds = 2\n[axes]\n"flows.0.queue_depth" = { start = 1, stop = 4, factor = 2 }\n'
        '"flash.timing.read" = ["50us", "75us"]\n',
    )
    result = run_sweep(path, tmp_path / "out", jobs=2)
    assert result.ok and result.ran == 12 and result.reused == 0

    table = pq.read_table(tmp_path / "out" / "sweep.parquet")
    axes = ["flows.0.queue_depth", "flash.timing.read"]
    assert table.column_names == [*FIXED_COLUMNS, *axes, *TAIL_COLUMNS]
    rows = table.to_pylist()
    assert [r["run"] for r in rows] == [f"{i:04d}" for i in range(12)]
    assert [(r["flows.0.queue_depth"], r["flash.timing.read"], r["seed"]) for r in rows[:4]] == [
        (1, "50us", 1),
        (1, "50us", 2),
        (1, "75us", 1),
        (1, "75us", 2),
    ]
    assert {r["flows.0.queue_depth"] for r in rows} == {1, 2, 4}
    assert all(r["status"] == "ok" and r["error"] is None for r in rows)
    assert all(r["iops"] > 0 and r["read_p99_us"] > 0 for r in rows)

    # Each row's results.json is the run of exactly that point.
    results = json.loads((tmp_path / "out" / rows[5]["run_dir"] / "results.json").read_text())
    assert results["config"]["flows"][0]["queue_depth"] == rows[5]["flows.0.queue_depth"]
    assert results["config"]["flash"]["timing"]["read"] == rows[5]["flash.timing.read"]
    assert results["seed"] == rows[5]["seed"]
    assert results["device"]["iops"] == pytest.approx(rows[5]["iops"])

    meta = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert meta == {"axes": axes, "mode": "product", "metrics": list(METRICS)}

    # A longer read time slows reads at the same queue depth and seed.
    by_point = {(r["flows.0.queue_depth"], r["flash.timing.read"], r["seed"]): r for r in rows}
    assert by_point[(1, "75us", 1)]["read_mean_us"] > by_point[(1, "50us", 1)]["read_mean_us"]


def test_zip_advances_axes_together(tmp_path):
    path = _write_sweep(
        tmp_path,
        'mode = "zip"\n[axes]\n"flows.0.queue_depth" = [1, 2, 8]\n'
        '"flows.0.read_fraction" = { start = 0.5, stop = 1.0, step = 0.25 }\n',
    )
    result = run_sweep(path, tmp_path / "out", jobs=1)
    assert result.ok
    rows = _table(tmp_path / "out")
    assert [(r["flows.0.queue_depth"], r["flows.0.read_fraction"]) for r in rows] == [
        (1, 0.5),
        (2, 0.75),
        (8, 1.0),
    ]
    assert [r["seed"] for r in rows] == [1, 1, 1]  # no seeds: the config's own
    assert rows[2]["write_iops"] == 0.0
    meta = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert meta["mode"] == "zip"


def test_ranges_include_their_stop_and_avoid_float_drift(tmp_path):
    path = _write_sweep(
        tmp_path,
        '[axes]\n"flows.0.queue_depth" = { start = 1, stop = 256, factor = 2 }\n'
        '"ftl.over_provisioning" = { start = 0.07, stop = 0.28, step = 0.07 }\n'
        '"flows.0.requests" = { start = 100, stop = 350, step = 100 }\n',
    )
    sweep = load_sweep(path)
    first = [p.values for p in sweep.points]
    assert sorted({v["flows.0.queue_depth"] for v in first}) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert sorted({v["ftl.over_provisioning"] for v in first}) == [0.07, 0.14, 0.21, 0.28]
    assert sorted({v["flows.0.requests"] for v in first}) == [100, 200, 300]
    assert len(sweep.points) == 9 * 4 * 3


def test_inline_config_and_set_build_the_base(tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text(
        'set = ["flows.0.read_fraction=0.5"]\nseeds = [7, 11]\n'
        "[config.flash]\nchannels = 2\nblocks_per_plane = 64\n"
        "[[config.flows]]\nread_fraction = 1.0\nqueue_depth = 2\nrequests = 300\n",
        encoding="utf-8",
    )
    sweep = load_sweep(path)
    assert sweep.axes == []
    assert [p.seed for p in sweep.points] == [7, 11]
    assert sweep.points[0].config["flows"][0]["read_fraction"] == 0.5
    assert sweep.points[0].config["flash"]["channels"] == 2


def test_finished_points_are_not_rerun(tmp_path):
    path = _write_sweep(tmp_path, '[axes]\n"flows.0.queue_depth" = [1, 2, 4]\n')
    out = tmp_path / "out"
    assert run_sweep(path, out, jobs=2).ran == 3
    kept = out / "runs" / "0000" / "results.json"
    stamp = kept.stat().st_mtime_ns
    (out / "runs" / "0001" / "results.json").unlink()  # as if interrupted during run 0001

    again = run_sweep(path, out, jobs=2)
    assert (again.ran, again.reused) == (1, 2)
    assert kept.stat().st_mtime_ns == stamp
    assert len(_table(out)) == 3


def test_per_request_records_are_kept_in_each_run_folder(tmp_path):
    path = _write_sweep(
        tmp_path, 'set = ["run.request_records=all"]\n[axes]\n"flows.0.queue_depth" = [1, 4]\n'
    )
    out = tmp_path / "out"
    assert run_sweep(path, out, jobs=2).ok
    for run in ("0000", "0001"):
        folder = out / "runs" / run
        assert sorted(p.name for p in folder.iterdir()) == [
            "point.json",
            "requests.parquet",
            "results.json",
        ]
        results = Results.load(folder)
        assert results.request_records.file == "requests.parquet"
        frame = results.requests()
        assert len(frame) == results.request_records.records == 500
        assert set(frame["op"]) == {"read", "write"}


def test_records_travel_back_when_the_worker_cannot_see_the_run_folder(tmp_path):
    config = {**small_config(requests=200), "run": {"request_records": 0.5}}
    reply = run_point("0007", config, str(tmp_path), str(tmp_path / "elsewhere" / "0007"))
    assert "error" not in reply, reply
    assert reply["requests_parquet"][:4] == b"PAR1"
    assert json.loads(reply["results_json"])["request_records"]["file"] == "requests.parquet"
    assert not (tmp_path / "elsewhere").exists()


def test_progress_hears_every_finished_point_and_starts_at_the_reused_ones(tmp_path):
    path = _write_sweep(tmp_path, '[axes]\n"flows.0.queue_depth" = [1, 2, 4]\n')
    out = tmp_path / "out"
    heard: list[tuple[int, int]] = []
    run_sweep(path, out, jobs=2, progress=lambda done, total: heard.append((done, total)))
    assert heard == [(0, 3), (1, 3), (2, 3), (3, 3)]

    (out / "runs" / "0002" / "results.json").unlink()
    heard.clear()
    run_sweep(path, out, jobs=2, progress=lambda done, total: heard.append((done, total)))
    assert heard == [(2, 3), (3, 3)]


def test_changed_sweep_is_refused_in_the_same_out_dir(tmp_path):
    path = _write_sweep(tmp_path, '[axes]\n"flows.0.queue_depth" = [1, 2]\n')
    out = tmp_path / "out"
    run_sweep(path, out, jobs=1)

    path.write_text(
        path.read_text().replace("[1, 2]", "[1, 3]"), encoding="utf-8"
    )  # run 0001 now means QD 3
    with pytest.raises(SweepError, match=r"run 0001 was made from a different config"):
        run_sweep(path, out, jobs=1)

    path.write_text(path.read_text().replace("[1, 3]", "[1]"), encoding="utf-8")
    with pytest.raises(SweepError, match=r"holds run 0001, which this sweep \(1 runs\)"):
        run_sweep(path, out, jobs=1)


def test_failed_point_is_recorded_and_the_sweep_goes_on(tmp_path):
    path = _write_sweep(tmp_path, '[axes]\n"flash.timing.read" = ["50us", "fast", "75us"]\n')
    proc = _sweep_cli(path, "--out", "out", "-j", "2", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "3 runs: 2 ok" in proc.stdout and "1 failed" in proc.stdout
    assert "run 0001" in proc.stdout and "flash.timing.read" in proc.stdout
    rows = _table(tmp_path / "out")
    assert [r["status"] for r in rows] == ["ok", "failed", "ok"]
    assert "report.html" not in proc.stdout
    assert "flash.timing.read" in rows[1]["error"] and rows[1]["iops"] is None
    assert (tmp_path / "out" / "runs" / "0001" / "error.txt").exists()


@pytest.mark.parametrize(
    ("axes", "message"),
    [
        (
            '"flows.0.queue_dpeth" = [1]',
            r'axes\."flows\.0\.queue_dpeth".*did you mean `queue_depth`',
        ),
        ('"flash.nope" = [1]', r'axes\."flash\.nope": unknown config key `nope` in flash'),
        ('"seed.x" = [1]', r'axes\."seed\.x".*seed is a value'),
        ('"flows.x.queue_depth" = [1]', r"flows is a list; expected a numeric index"),
        ('"flows.3.queue_depth" = [1]', r"index 3 is out of range \(flows has 1 elements\)"),
        ('"flows.0.queue_depth" = []', r'axes\."flows\.0\.queue_depth": empty list'),
        ('"flows.0.queue_depth" = 4', r"expected a list of values or a range"),
        ('"flows.0.queue_depth" = { start = 1, stop = 8 }', r"exactly one of `step`"),
        ('"flows.0.queue_depth" = { start = 1, step = 1 }', r"missing `stop`"),
        ('"flows.0.queue_depth" = { start = 8, stop = 1, step = 1 }', r"step 1 never goes"),
        ('"flows.0.queue_depth" = { start = 1, stop = 8, step = 0 }', r"step 0 never goes"),
        ('"flows.0.queue_depth" = { start = 1, stop = 8, factor = 1 }', r"factor > 0, not 1"),
        ('"flows.0.queue_depth" = { start = 1, stop = 8, facter = 2 }', r"did you mean `factor`"),
        ('"flash.timing.read" = { start = "5us", stop = "9us", step = 1 }', r"must be a number"),
        ('"seed" = [1, 2]', r"seeds = N"),
    ],
)
def test_bad_axes_are_refused_naming_the_field(tmp_path, axes, message):
    path = _write_sweep(tmp_path, f"[axes]\n{axes}\n")
    with pytest.raises(SweepError, match=message) as info:
        load_sweep(path)
    assert str(info.value).startswith(str(path))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("seeds = 0\n", r"seeds: expected a count of at least 1"),
        ("seeds = []\n", r"seeds: empty list"),
        ('mode = "cartesian"\n', r'mode: expected "product" or "zip"'),
        ("axis = 1\n", r"axis: unknown key \(did you mean `axes`\?\)"),
        ('mode = "zip"\n[axes]\n"flows.0.queue_depth" = [1, 2]\n"seed" = [1]\n', r"seeds = N"),
        (
            'mode = "zip"\n[axes]\n"flows.0.queue_depth" = [1, 2]\n"flows.0.requests" = [9]\n',
            r"mode: \"zip\" needs axes of equal length: flows.0.queue_depth has 2",
        ),
        ("", r"axes: nothing to sweep"),
    ],
)
def test_bad_sweep_settings_are_refused_naming_the_field(tmp_path, text, message):
    with pytest.raises(SweepError, match=message):
        load_sweep(_write_sweep(tmp_path, text))


def test_missing_base_config_is_a_one_line_cli_error(tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text('base = "nowhere.toml"\nseeds = 2\n', encoding="utf-8")
    proc = _sweep_cli(path, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and len(proc.stderr.strip().splitlines()) == 1
    assert "base: config file not found" in proc.stderr and "nowhere.toml" in proc.stderr


# ---------------------------------------------------------------------------------------------
# A real Dask cluster: a scheduler and two single-threaded workers, as separate processes.


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dask(*args: str, log: Path) -> subprocess.Popen:
    dask = Path(sys.executable).with_name("dask")
    command = [str(dask)] if dask.exists() else [sys.executable, "-m", "dask"]
    return subprocess.Popen(
        [*command, *args],
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
        env={**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"},
    )


@pytest.fixture
def dask_cluster(tmp_path):
    """The address of a real `dask scheduler` with two `dask worker` processes (1 thread each)."""
    from distributed import Client

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = tmp_path / "dask-logs"
    logs.mkdir()
    procs = [
        _dask(
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-dashboard",
            log=logs / "scheduler.log",
        )
    ]
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if time.monotonic() > deadline or procs[0].poll() is not None:
                pytest.fail(
                    f"dask scheduler did not start:\n{(logs / 'scheduler.log').read_text()}"
                )
            time.sleep(0.1)
        for i in range(2):
            procs.append(
                _dask(
                    "worker",
                    address,
                    "--nthreads",
                    "1",
                    "--nworkers",
                    "1",
                    "--no-dashboard",
                    "--host",
                    "127.0.0.1",
                    "--local-directory",
                    str(tmp_path / f"worker-{i}"),
                    log=logs / f"worker-{i}.log",
                )
            )
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        # Shutting the cluster down through the scheduler is much faster than a signal each.
        with contextlib.suppress(Exception), Client(address, timeout="5s") as client:
            client.shutdown()
        for proc in reversed(procs):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_sweep_on_a_dask_cluster_runs_every_point_once(tmp_path, dask_cluster):
    path = _write_sweep(
        tmp_path,
        'seeds = 2\n[axes]\n"flows.0.queue_depth" = [1, 2, 4, 8, 16]\n'
        '"flows.0.read_fraction" = [0.5, 1.0]\n',
        requests=2000,
    )
    proc = _sweep_cli(path, "--out", "out", "--dask", dask_cluster, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "20 runs: 20 ok (0 already done), 0 failed" in proc.stdout
    rows = _table(tmp_path / "out")
    assert len(rows) == 20
    assert all(r["status"] == "ok" for r in rows)
    assert (
        len({(r["flows.0.queue_depth"], r["flows.0.read_fraction"], r["seed"]) for r in rows}) == 20
    )
    for row in rows:
        assert (tmp_path / "out" / row["run_dir"] / "results.json").exists()

    # The workers ran them (this process never imported the simulator for the sweep).
    from distributed import Client

    with Client(dask_cluster, timeout="30s") as client:
        loaded = client.run(lambda: "ssdlab.sweep" in sys.modules)
    assert len(loaded) == 2 and any(loaded.values())

    again = _sweep_cli(path, "--out", "out", "--dask", dask_cluster, cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "20 runs: 20 ok (20 already done), 0 failed" in again.stdout
    assert len(_table(tmp_path / "out")) == 20


def test_dask_local_starts_a_local_cluster_and_report_charts_the_sweep(tmp_path):
    path = _write_sweep(tmp_path, '[axes]\n"flows.0.queue_depth" = [1, 4]\n', requests=300)
    proc = _sweep_cli(path, "--out", "out", "--dask", "local", "-j", "1", "--report", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 runs: 2 ok (0 already done), 0 failed" in proc.stdout
    assert [r["status"] for r in _table(tmp_path / "out")] == ["ok", "ok"]
    # --report: the sweep chart in one go, as `ssdlab report out` would write it.
    assert "report.html" in proc.stdout
    assert (tmp_path / "out" / "sweep_flows_0_queue_depth.png").stat().st_size > 5000


def test_sweep_scaling_benchmark_reports_every_executor(tmp_path):
    """`make bench`'s sweep scaling benchmark (scripts/bench_sweep.py), at a tiny size: one row
    per local worker count and per Dask cluster size, each with its efficiency per core."""
    out = tmp_path / "bench-sweep.json"
    done = run_script(
        "bench_sweep.py", "--points", "2", "--requests", "2000", "--out", out, timeout=300
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    rows = document["rows"]
    local = [r for r in rows if r["executor"] == "local processes"]
    dask = [r for r in rows if r["executor"].startswith("dask")]
    assert local[0]["workers"] == 1 and local[0]["efficiency_per_core"] == 1.0
    assert local[-1]["workers"] == document["cores"]
    assert dask and dask[-1]["workers"] == min(document["cores"], dask[-1]["workers"])
    for row in rows:
        assert row["wall_seconds"] > 0 and row["points_per_second"] > 0
        assert row["efficiency_per_core"] > 0
