"""Outputs that are complete and this run's, or absent; workers that die with their sweep
(issue 12, F15-F17 and the orphaned processes): atomic writes, a full disk, truncated results,
read-only or impossible output folders, the previous run's outputs set aside, a killed run's
temporary files, and SIGKILL / SIGTERM of `ssdlab run` and `ssdlab sweep`."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import faults
import pytest
import ssdlab
from conftest import small_config, to_toml
from ssdlab import _outputs

FAULTS = Path(faults.__file__)


def _cli(*args, cwd: Path, fault: str | None = None, timeout: float = 120):
    command = [FAULTS, fault] if fault else ["-m", "ssdlab"]
    return subprocess.run(
        [sys.executable, *command, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _one_line_error(proc, code: int = 2) -> str:
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def _config(tmp_path: Path, name: str = "c.toml", **flow) -> Path:
    path = tmp_path / name
    path.write_text(to_toml(small_config(**flow)), encoding="utf-8")
    return path


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- atomic writes ---------------------------------------------------------------------------


def test_atomic_write_leaves_the_old_file_or_the_new_one(tmp_path, monkeypatch):
    target = tmp_path / "results.json"
    _outputs.write_text(target, "old\n")
    monkeypatch.setattr(_outputs, "open", faults.full_disk_open(room=2), raising=False)
    with pytest.raises(OSError) as caught:
        _outputs.write_text(target, "a longer new text\n")
    assert caught.value.errno == errno.ENOSPC
    assert target.read_text() == "old\n", "the previous complete file is untouched"
    assert _files(tmp_path) == ["results.json"], "no temporary file is left behind"


def test_a_full_disk_leaves_no_truncated_results_json(tmp_path):
    config = _config(tmp_path)
    proc = _cli("run", config, "--out", tmp_path / "out", cwd=tmp_path, fault="full-disk")
    line = _one_line_error(proc)
    target = tmp_path / "out" / "results.json"
    assert line == f"error: cannot write {target}: no space left on the device"
    assert "device" in proc.stdout and "wrote" not in proc.stdout, "the numbers, on screen"
    assert _files(tmp_path / "out") == [], "neither a truncated results.json nor a temporary file"


def test_results_save_is_atomic(tmp_path, monkeypatch):
    r = ssdlab.simulate(small_config(requests=200))
    r.save(tmp_path)
    before = (tmp_path / "results.json").read_bytes()

    def fail(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_outputs.os, "replace", fail)
    with pytest.raises(OSError):
        r.save(tmp_path)
    assert (tmp_path / "results.json").read_bytes() == before
    assert _files(tmp_path) == ["results.json"]


# --- truncated or foreign results.json --------------------------------------------------------


@pytest.fixture
def saved(tmp_path) -> Path:
    folder = tmp_path / "run"
    ssdlab.simulate(small_config(requests=200)).save(folder)
    return folder / "results.json"


def test_loading_a_truncated_results_json_names_the_file_and_the_byte(saved):
    text = saved.read_bytes()
    saved.write_bytes(text[:5000])
    with pytest.raises(ssdlab.ResultsFileError) as caught:
        ssdlab.Results.load(saved.parent)
    message = str(caught.value)
    assert message.startswith(f"{saved} is not a complete ssdlab result (truncated at byte 5000?)")
    assert "rerun" in message
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "is empty (0 bytes)"),
        (b'{"schema": "ssdlab.results/1", oops}', "JSON at line 1 column 32: Expecting property"),
        (b'{"schema": "other/1"}', "is not an ssdlab results document (schema 'other/1'"),
        (b"[1, 2]", "(no schema field"),
        (b'{"schema": "ssdlab.results/1"}', "is not a complete ssdlab result (version: Field"),
        (b"\xff\xfe", "not UTF-8 text"),
    ],
)
def test_loading_a_broken_results_json_says_why(saved, content, expected):
    saved.write_bytes(content)
    with pytest.raises(ssdlab.ResultsFileError, match=None) as caught:
        ssdlab.Results.load(saved)
    assert str(caught.value).startswith(str(saved))
    assert expected in str(caught.value)


def test_report_on_a_truncated_results_json_is_a_clean_error(saved, tmp_path):
    saved.write_bytes(saved.read_bytes()[:777])
    line = _one_line_error(_cli("report", saved.parent, cwd=tmp_path))
    assert "results.json is not a complete ssdlab result (truncated at byte 777?)" in line
    assert not (saved.parent / "report.html").exists()


def test_report_on_a_truncated_sweep_table_is_a_clean_error(tmp_path):
    (tmp_path / "sweep.parquet").write_bytes(b"PAR1 cut short")
    line = _one_line_error(_cli("report", tmp_path, cwd=tmp_path))
    assert "sweep.parquet is not a complete sweep table" in line


# --- the output folder, checked before simulating ---------------------------------------------


def test_an_output_folder_under_a_file_is_refused_before_simulating(tmp_path):
    (tmp_path / "plain-file").write_text("not a folder")
    config = _config(tmp_path, requests=10**9)  # would run for hours
    started = time.monotonic()
    proc = _cli("run", config, "--out", tmp_path / "plain-file" / "out", cwd=tmp_path)
    line = _one_line_error(proc)
    assert time.monotonic() - started < 60
    assert "cannot create the output folder" in line
    assert "plain-file" in line and "Not a directory" in line


def test_an_output_path_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "taken").write_text("a file")
    proc = _cli("run", _config(tmp_path), "--out", tmp_path / "taken", cwd=tmp_path)
    assert "a file of that name is in the way" in _one_line_error(proc)


def test_a_read_only_output_folder_is_refused_before_simulating(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as root: permissions do not stop writes here")
        config = _config(tmp_path, requests=10**9)
        line = _one_line_error(_cli("run", config, "--out", folder, cwd=tmp_path))
        assert f"cannot write in the output folder {folder}: Permission denied" in line
    finally:
        folder.chmod(0o700)


def test_a_sweep_into_an_impossible_folder_is_refused_before_running(tmp_path):
    (tmp_path / "base.toml").write_text(to_toml(small_config(requests=10**9)))
    (tmp_path / "s.toml").write_text('base = "base.toml"\n[axes]\n"flows.0.queue_depth" = [1]\n')
    (tmp_path / "plain-file").write_text("x")
    proc = _cli("sweep", "s.toml", "--out", tmp_path / "plain-file" / "o", cwd=tmp_path)
    assert "cannot create the output folder" in _one_line_error(proc)


# --- the previous run's outputs and a killed run's leftovers -----------------------------------


def test_a_refused_rerun_leaves_no_old_results_json_that_looks_current(tmp_path):
    config = _config(tmp_path)
    out = tmp_path / "out"
    assert _cli("run", config, "--out", out, "--report", cwd=tmp_path).returncode == 0
    first = (out / "results.json").read_bytes()
    proc = _cli("run", config, "--out", out, "--set", "flows.0.queue_depth=0", cwd=tmp_path)
    assert "flows[0].queue_depth" in _one_line_error(proc)
    assert "moved the previous results to" in proc.stdout
    assert _files(out) == ["previous"], "nothing that looks like this run's result"
    previous = out / "previous"
    assert (previous / "results.json").read_bytes() == first
    assert {"report.html", "latency_cdf.png"} <= set(_files(previous))
    assert ssdlab.Results.load(previous).device.reads.count == 1000

    # The next good run replaces previous/ with the generation it displaces, whole.
    assert _cli("run", config, "--out", out, cwd=tmp_path).returncode == 0
    assert _files(out) == ["previous", "results.json"]
    assert _cli("run", config, "--out", out, cwd=tmp_path).returncode == 0
    assert _files(previous) == ["results.json"], "no chart of an older generation stays"


def test_temporary_files_of_dead_writers_are_cleaned_up_live_ones_kept(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    dead_pid = int(dead.stdout)
    (out / f".results.json.tmp-{dead_pid}").write_text('{"schema": "ssdlab.res')
    (out / f".requests.bin.tmp-{dead_pid}").write_bytes(b"SSDLREQ1")
    live = out / f".results.json.tmp-{os.getpid()}"  # this test process: alive
    live.write_text("being written")
    (out / "notes.txt").write_text("the user's")
    assert _cli("run", _config(tmp_path), "--out", out, cwd=tmp_path).returncode == 0
    assert _files(out) == [live.name, "notes.txt", "results.json"]


def _wait_for(predicate, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _long_run_args(config: Path, out: Path) -> list[str | Path]:
    """`ssdlab run` of a run too long to finish, writing request records (killed by the test)."""
    records = ["--set", "run.request_records=all"]
    return [sys.executable, "-m", "ssdlab", "run", config, "--out", out, *records]


def test_a_killed_run_leaves_only_a_hidden_temporary_file_which_the_next_run_removes(tmp_path):
    config = _config(tmp_path, requests=10**8)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        _long_run_args(config, out),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    partial = out / f".requests.bin.tmp-{proc.pid}"
    try:
        _wait_for(lambda: partial.exists() and partial.stat().st_size > 1 << 20)
    finally:
        proc.kill()
        proc.wait()
    assert _files(out) == [partial.name], "no results.json, requests.bin or requests.parquet"
    again = _cli(
        "run",
        config,
        "--out",
        out,
        "--set",
        "flows.0.requests=300",
        "--set",
        "run.request_records=all",
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    assert _files(out) == ["requests.parquet", "results.json"]


def test_sigterm_stops_a_run_cleanly(tmp_path):
    config = _config(tmp_path, requests=10**8)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        _long_run_args(config, out),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for(lambda: (out / f".requests.bin.tmp-{proc.pid}").exists())
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143
    assert err.strip() == "error: terminated (SIGTERM)"
    assert _files(out) == []


# --- sweeps: workers die with the sweep ---------------------------------------------------------


def _session_processes(sid: int) -> list[str]:
    """Live processes of session `sid` (from /proc: psutil is not a dependency)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        name_end = stat.rfind(")")
        fields = stat[name_end + 2 :].split()
        if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            found.append(stat[: name_end + 1])
    return found


def _start_sweep(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    (tmp_path / "base.toml").write_text(to_toml(small_config(requests=300_000, read_fraction=0.5)))
    sweep = tmp_path / "s.toml"
    sweep.write_text('base = "base.toml"\n[axes]\n"flows.0.queue_depth" = [1, 2, 3, 4]\n')
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssdlab", "sweep", sweep, "--out", out, "-j", "2"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own session: every process it starts is in it
    )
    # Running: both workers are up (the sweep, the fork server, two workers and more).
    _wait_for(lambda: len(_session_processes(proc.pid)) >= 4)
    time.sleep(1.0)
    return proc, out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_a_sweep_leaves_no_process_behind_and_it_resumes(tmp_path, sig):
    proc, out = _start_sweep(tmp_path)
    try:
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        deadline = time.monotonic() + 10
        while _session_processes(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _session_processes(proc.pid) == [], "workers outlived the sweep"
    finally:
        for line in _session_processes(proc.pid):  # never leave them running, whatever happened
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(line.split()[0]), signal.SIGKILL)
    if sig == signal.SIGTERM:
        assert proc.returncode == 143
        assert "terminated (SIGTERM); finished runs are kept" in err
    else:
        assert proc.returncode == -signal.SIGKILL
    assert not (out / "sweep.parquet").exists(), "no table that looks complete"
    for folder in (out / "runs").iterdir():
        names = _files(folder)
        assert "results.json" not in names or json.loads((folder / "results.json").read_text())
        assert not [n for n in names if n.endswith(".tmp")], names

    # Resuming finishes the sweep: nothing lost, nothing run twice.
    done_before = {f.name for f in (out / "runs").iterdir() if (f / "results.json").exists()}
    proc = _cli("sweep", tmp_path / "s.toml", "--out", out, "-j", "2", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"({len(done_before)} already done)" in proc.stdout
    assert (out / "sweep.parquet").exists()
