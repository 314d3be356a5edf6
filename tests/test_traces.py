"""Trace flows end to end: every supported format replays through `simulate` and the CLI, with
its filters, and bad trace options are one-line errors naming the flow's field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import REPO_ROOT, small_config
from ssdlab import ConfigError, TraceError, simulate

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "traces"


def _trace_config(**flow) -> dict:
    config = small_config()
    config["flows"] = [{"name": "t", "kind": "trace", **flow}]
    return config


@pytest.mark.parametrize(
    ("fixture", "reads", "writes"),
    [
        ("mqsim.trace", 1, 1),
        ("msr.csv", 2, 2),
        ("spc.csv", 1, 2),
        ("blkparse.txt", 2, 1),
        ("fio-v2.log", 1, 2),
        ("fio-v3.log", 1, 2),
        ("alibaba.csv", 2, 1),
        ("tencent.csv", 2, 2),
    ],
)
def test_every_format_replays_with_its_format_sniffed(fixture, reads, writes):
    r = simulate(_trace_config(path=f"tests/fixtures/traces/{fixture}"), base_dir=REPO_ROOT)
    assert (r.device.reads.count, r.device.writes.count) == (reads, writes)


def test_msr_flow_with_filters_converts_bytes_to_sectors():
    # Disk 0 only, writes only: 512 B at offset 0, then bytes 100..1100 (three sectors).
    config = _trace_config(path=str(FIXTURES / "msr.csv"), format="msr", device=0, ops="write")
    r = simulate(config)
    assert (r.device.reads.count, r.device.writes.count) == (0, 2)
    assert r.device.writes.bytes == 4 * 512
    # The two writes are 999 ms of trace time apart; at time_scale 0.5, 0.4995 s.
    config["flows"][0]["time_scale"] = 0.5
    assert 0.4995 <= simulate(config).simulated_seconds < 0.51


def test_trims_and_flushes_are_replayed_not_skipped():
    r = simulate(_trace_config(path=str(FIXTURES / "blkparse.txt"), device="8,0"))
    assert not [w for w in r.warnings if "trim" in w or "flush" in w]
    # A write, a flush, a trim and a read; only the write and the read move data.
    assert r.flows[0].requests == 4
    assert (r.flows[0].reads.count, r.flows[0].writes.count) == (1, 1)


def test_malformed_line_names_file_line_and_layout(tmp_path):
    trace = tmp_path / "bad.csv"
    trace.write_text("1,0,8,0,3\n1,0,8,2,3\n")
    expected = rf"{trace}:2: IOType must be 0 \(read\) or 1 \(write\)"
    with pytest.raises(TraceError, match=expected) as e:
        simulate(_trace_config(path=str(trace)))
    assert "expected 5 comma-separated columns: Timestamp(seconds)" in str(e.value)
    assert str(e.value).endswith("(tencent format)")


def test_unrecognised_trace_lists_the_formats(tmp_path):
    trace = tmp_path / "notes.txt"
    trace.write_text("remember the milk\n")
    with pytest.raises(ConfigError, match=r"flows\[0\]\.format: cannot tell the format") as e:
        simulate(_trace_config(path=str(trace)))
    assert "mqsim, msr, spc, blkparse, fio, alibaba, tencent" in str(e.value)


def test_cli_runs_a_trace_flow_and_rejects_a_bad_window(run_cli, write_config, tmp_path):
    path = write_config(_trace_config(path=str(FIXTURES / "tencent.csv"), start="1s", end="3s"))
    proc = run_cli("run", path, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["flows"][0]["requests"] == 1  # only the record at 1 s; end is exclusive
    assert results["config"]["flows"][0]["end"] == "3s"

    bad = write_config(_trace_config(path="t.csv", start="3s", end="1s"), name="bad.toml")
    proc = run_cli("run", bad)
    assert proc.returncode == 2
    assert "flows[0].end: must be after start" in proc.stderr


def test_bundled_msr_example_runs(run_cli, tmp_path):
    proc = run_cli("run", REPO_ROOT / "examples" / "trace-msr.toml", "--out", tmp_path / "ex")
    assert proc.returncode == 0, proc.stderr
    flows = json.loads((tmp_path / "ex" / "results.json").read_text())["flows"]
    # every disk-0 record; disk 1's writes in the first 500 ms of trace time
    assert [(f["name"], f["requests"]) for f in flows] == [("disk0", 701), ("disk1-writes", 171)]


_PEAK_RSS = """
import json, resource, sys
from ssdlab import simulate
config = json.loads(sys.argv[1])
r = simulate(config)
assert r.device.reads.count == 1, r.device.reads.count
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # KiB on Linux
"""


def _peak_rss_kib(config: dict) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.split()[-1])


def test_a_large_trace_streams_in_bounded_memory(tmp_path):
    """A 64 MiB trace read to its last line (the device filter keeps only that line) peaks at
    the memory of a 1,000-line one: the reader keeps no record (docs/traces.md, Memory)."""
    line = "128166372003061629,wdev,0,Write,8192,4096,1331\n"
    small, large = tmp_path / "small.csv", tmp_path / "large.csv"
    block = line * 1000
    small.write_text(block, encoding="utf-8")
    with large.open("w", encoding="utf-8") as f:
        for _ in range((64 << 20) // len(block) + 1):
            f.write(block)
    for path in (small, large):
        with path.open("a", encoding="utf-8") as f:
            f.write("128166372003071629,wdev,1,Read,8192,4096,1331\n")
    assert large.stat().st_size > 64 << 20

    def config(path: Path) -> dict:
        return _trace_config(path=str(path), format="msr", device=1)

    baseline = _peak_rss_kib(config(small))
    peak = _peak_rss_kib(config(large))
    assert peak - baseline < 16 << 10, (
        f"peak RSS {peak} KiB for a 64 MiB trace against {baseline} KiB for a small one"
    )


def _feed_fifo(fifo: Path, data: bytes) -> threading.Thread:
    """Makes `fifo` a named pipe and writes `data` into it from a thread once a reader opens it."""
    os.mkfifo(fifo)

    def write() -> None:
        with fifo.open("wb") as f:
            f.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX feature")
def test_cli_replays_a_trace_from_a_named_pipe_like_the_file(run_cli, write_config, tmp_path):
    """A trace can be piped in: the FIFO is read once and copied, so format sniffing and the
    default (steady) preconditioning, which scans the trace before the run, both see it."""
    fifo = tmp_path / "trace.fifo"
    writer = _feed_fifo(fifo, (FIXTURES / "msr.csv").read_bytes())
    proc = run_cli("run", write_config(_trace_config(path=str(fifo))), "--out", tmp_path / "fifo")
    writer.join(timeout=5)
    assert proc.returncode == 0, proc.stderr
    from_fifo = json.loads((tmp_path / "fifo" / "results.json").read_text())

    file_config = write_config(_trace_config(path=str(FIXTURES / "msr.csv")), name="file.toml")
    proc = run_cli("run", file_config, "--out", tmp_path / "file")
    assert proc.returncode == 0, proc.stderr
    from_file = json.loads((tmp_path / "file" / "results.json").read_text())
    assert from_fifo["flows"][0]["requests"] == from_file["flows"][0]["requests"] == 4
    assert from_fifo["simulated_seconds"] == from_file["simulated_seconds"]


@pytest.mark.skipif(not Path("/dev/stdin").exists(), reason="needs /dev/stdin")
def test_cli_replays_a_trace_piped_to_dev_stdin(write_config, tmp_path):
    config = write_config(_trace_config(path="/dev/stdin", format="tencent"))
    proc = subprocess.run(
        [sys.executable, "-m", "ssdlab", "run", str(config), "--out", str(tmp_path / "out")],
        input=(FIXTURES / "tencent.csv").read_bytes(),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["flows"][0]["requests"] == 4


def test_cli_refuses_a_trace_without_records(run_cli, write_config, tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("# nothing\n\n# still nothing\n")
    proc = run_cli("run", write_config(_trace_config(path=str(trace), format="msr")))
    assert proc.returncode == 2, proc.stderr
    what = "holds no records (3 lines, all blank or comments)"
    assert f'flows[0].path: trace file "{trace}" {what}' in proc.stderr
    example = "128166372003061629,wdev,0,Read,8192,4096,1331"
    assert f"expected msr records like `{example}`" in proc.stderr


def test_a_byte_order_mark_before_a_csv_header_is_dropped(tmp_path):
    trace = tmp_path / "bom.csv"
    trace.write_bytes(b"\xef\xbb\xbf" + (FIXTURES / "msr.csv").read_bytes())
    r = simulate(_trace_config(path=str(trace)))
    assert (r.device.reads.count, r.device.writes.count) == (2, 2)
