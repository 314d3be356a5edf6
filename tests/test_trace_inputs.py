"""Traces as they are shipped (issue 19, item 6): gzip, bzip2, xz and zstd files read
transparently (told by their first bytes), ``-`` for the standard input, and
:func:`ssdlab.read_trace`, the simulator's own reader for notebooks."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import subprocess
import sys
from pathlib import Path

import pytest
import ssdlab
from conftest import REPO_ROOT

PLAIN = REPO_ROOT / "examples" / "traces" / "demo-msr.csv"
ZSTD = REPO_ROOT / "tests" / "fixtures" / "demo-msr.csv.zst"  # `zstd -q` of PLAIN


def _compressed(tmp_path: Path) -> dict[str, Path]:
    data = PLAIN.read_bytes()
    files = {"zstd": ZSTD}
    for name, module, suffix in (("gzip", gzip, "gz"), ("bzip2", bz2, "bz2"), ("xz", lzma, "xz")):
        path = tmp_path / f"demo-msr.csv.{suffix}"
        path.write_bytes(module.compress(data))
        files[name] = path
    return files


def _config(path: str) -> dict:
    return {
        "seed": 3,
        "ftl": {"over_provisioning": 0.125},
        "flash": {"channels": 2, "chips_per_channel": 2, "blocks_per_plane": 256},
        "precondition": {"mode": "fill", "occupancy": 0.5},
        "flows": [{"name": "disk0", "kind": "trace", "path": path, "device": 0}],
    }


def _without_wall_times(document: dict) -> dict:
    document = json.loads(json.dumps(document))
    for key in ("wall_seconds", "setup_wall_seconds", "config_file"):
        document.pop(key, None)
    document.get("precondition", {}).pop("wall_seconds", None)
    document["config"]["flows"][0].pop("path")
    return document


def test_read_trace_gives_the_requests_a_run_replays():
    frame = ssdlab.read_trace(PLAIN)
    assert list(frame.columns) == ["arrival_s", "op", "start_sector", "size_bytes"]
    assert len(frame) == 1000 and frame.attrs["format"] == "msr"
    assert frame["arrival_s"].iloc[0] == 0.0 and frame["arrival_s"].is_monotonic_increasing
    assert set(frame["op"]) == {"read", "write"}
    writes = ssdlab.read_trace(PLAIN, device=1, ops="write")
    assert len(writes) > 0 and set(writes["op"]) == {"write"}
    halved = ssdlab.read_trace(PLAIN, time_scale=0.5)
    assert halved["arrival_s"].iloc[-1] == pytest.approx(frame["arrival_s"].iloc[-1] * 0.5)


def test_every_compression_reads_as_the_plain_file(tmp_path):
    plain = ssdlab.read_trace(PLAIN)
    for name, path in _compressed(tmp_path).items():
        frame = ssdlab.read_trace(path)
        assert frame.equals(plain), name
        assert frame.attrs["format"] == "msr", name


def test_a_run_on_a_compressed_trace_is_the_run_on_the_plain_one(tmp_path):
    plain = _without_wall_times(ssdlab.simulate(_config(str(PLAIN))).to_dict())
    for name, path in _compressed(tmp_path).items():
        packed = _without_wall_times(ssdlab.simulate(_config(str(path))).to_dict())
        assert packed == plain, name


def test_dash_reads_the_trace_from_standard_input(tmp_path):
    config = tmp_path / "stdin.toml"
    config.write_text(ssdlab.dump_toml(_config("-")))
    with gzip.open(tmp_path / "t.gz", "wb") as f:
        f.write(PLAIN.read_bytes())
    proc = subprocess.run(
        [sys.executable, "-m", "ssdlab", "run", str(config), "--out", str(tmp_path / "out")],
        stdin=(tmp_path / "t.gz").open("rb"),  # compressed, through a pipe
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    piped = json.loads((tmp_path / "out" / "results.json").read_text())
    plain = ssdlab.simulate(_config(str(PLAIN))).to_dict()
    assert _without_wall_times(piped) == _without_wall_times(plain)


def test_damaged_or_missing_compressed_traces_are_clear_errors(tmp_path):
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(gzip.compress(PLAIN.read_bytes())[:200])
    with pytest.raises(ssdlab.ConfigError, match=r'"[^"]*cut\.csv\.gz" is gzip-compressed but'):
        ssdlab.read_trace(cut)
    with pytest.raises(ssdlab.ConfigError, match=r"flows\[0\]\.path: .*is gzip-compressed but"):
        ssdlab.simulate(_config(str(cut)))
    with pytest.raises(ssdlab.ConfigError, match="no such file"):
        ssdlab.read_trace(tmp_path / "missing.gz")
    with pytest.raises(ssdlab.ConfigError, match=r"^format: unknown value `nonsense`"):
        ssdlab.read_trace(PLAIN, format="nonsense")
