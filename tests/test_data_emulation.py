"""Data transfer emulation from Python: `data.emulate` through simulate() and the CLI, the
`data` section of results.json, bad settings, and the bytes a read returns (read_back)."""

from __future__ import annotations

import json

import pytest
from conftest import emulating_config, small_config
from ssdlab import ConfigError, Results, _core, simulate


def test_reads_return_what_was_written_through_gc():
    r = simulate(emulating_config())
    assert r.device.gc.pages_moved > 0
    d = r.data
    assert d is not None
    assert d.mismatched_sectors == 0
    assert d.first_mismatch is None
    assert d.skipped_sectors == 0
    assert d.verified_sectors == r.device.reads.bytes // 512
    assert d.stored_pages > 0
    assert "data" in r.to_dict()
    # The section round-trips through results.json.
    again = Results.from_json(r.to_json())
    assert again.data == d


def test_emulation_is_off_by_default_and_leaves_no_section(config):
    r = simulate(config)
    assert r.data is None
    assert "data" not in r.to_dict()


def test_a_tiny_memory_limit_spills_pages_to_a_file(tmp_path):
    config = emulating_config()
    config["data"].update({"memory_limit": "32KiB", "spill_dir": str(tmp_path)})
    d = simulate(config).data
    assert d.spilled_pages > 0
    assert d.memory_bytes <= 32 * 1024
    assert d.mismatched_sectors == 0
    assert list(tmp_path.iterdir()) == [], "the spill file is removed as soon as it is opened"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"emulate": True, "memory_limit": "100B"}, "data.memory_limit"),
        ({"emulate": True, "spill_dir": "no/such/folder"}, "data.spill_dir"),
        ({"emulate": "yes"}, "data.emulate"),
        ({"emulate": True, "check": True}, "data"),
    ],
)
def test_bad_data_settings_name_the_field(data, field):
    config = emulating_config()
    config["data"] = data
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        simulate(config)


def test_cli_prints_the_check_and_writes_the_section(write_config, run_cli, tmp_path):
    path = write_config(emulating_config(cache_mode="write-read"))
    done = run_cli("run", path, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "read sectors verified, 0 mismatched" in done.stdout
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    assert document["data"]["mismatched_sectors"] == 0
    assert document["data"]["verified_sectors"] > 0
    assert document["data"]["first_mismatch"] is None


def test_read_back_returns_the_bytes_written():
    config = emulating_config(
        read_fraction=0.0, request_size="4KiB", address="sequential", requests=8
    )
    sim = _core.Simulation(json.dumps(config), ".", None)
    while not sim.step(100_000):
        pass
    data = sim.read_back(0, 16)
    assert len(data) == 16 * 512
    # Each written sector starts with its LBA (then its write version and a magic word).
    assert [int.from_bytes(data[i * 512 : i * 512 + 8], "little") for i in range(16)] == list(
        range(16)
    )
    assert sim.read_back(1000, 2) == bytes(1024), "never written: zeros"
    with pytest.raises(ValueError, match="not within the device"):
        sim.read_back(1 << 40, 1)
    off = small_config()
    sim = _core.Simulation(json.dumps(off), ".", None)
    with pytest.raises(ValueError, match=r"data\.emulate is off"):
        sim.read_back(0, 1)
