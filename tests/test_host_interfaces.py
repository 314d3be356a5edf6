"""UFS and Open-Channel 2.0 from Python: the results keys, and errors that name the field."""

from __future__ import annotations

import json

import ssdlab
from conftest import small_config
from ssdlab.results import Results


def _writes(requests: int = 3000) -> dict:
    config = small_config(read_fraction=0.0, queue_depth=8, requests=requests, alignment="4KiB")
    config["ftl"]["over_provisioning"] = 0.2
    return config


def test_ufs_results_report_the_link_and_the_one_queue():
    config = small_config(queue_depth=64, requests=2000, alignment="4KiB")
    config["host"] = {"interface": "ufs", "ufs": {"gear": 3, "lanes": 1}}
    r = ssdlab.simulate(config)
    h = r.host_interface
    assert h is not None and h.kind == "ufs" and h.device_queue_slots == 32
    assert h.ufs is not None and (h.ufs.gear, h.ufs.lanes, h.ufs.rate_series) == (3, 1, "B")
    # HS-G3B, one lane, 8b/10b: 5.8304 Gb/s x 0.8 / 8.
    assert abs(h.link_bytes_per_second - 583.04e6) < 1
    # A read is a COMMAND down, a DATA IN and a RESPONSE up.
    assert (h.ufs.upius_to_device, h.ufs.upius_to_host) == (2000, 4000)
    # 64 outstanding, 32 slots: the rest wait on the host.
    assert r.device.reads.latency_breakdown_us["sq_wait"] > 10
    assert r.open_channel is None
    assert Results.from_json(r.to_json()).to_dict() == r.to_dict()


def test_open_channel_keeps_chunks_sequential_through_gc():
    config = _writes()
    config["host"] = {"interface": "open_channel"}
    r = ssdlab.simulate(config)
    oc = r.open_channel
    assert oc is not None and r.host_interface.kind == "open_channel"
    assert r.device.gc.blocks_erased > 0 and oc.resets == r.device.gc.blocks_erased
    assert oc.write_pointer_violations == 0 and oc.reset_violations == 0
    c = oc.chunks
    assert c.free + c.open + c.closed + c.offline == 2 * 2 * 2 * 64
    assert oc.host_ftl.pages_placed == 3000 and oc.host_ftl.gc_link_bytes > 0
    assert r.device.flash.translation_page_reads == 0
    assert "ufs" not in r.to_dict()["host_interface"]


def test_cli_switches_interface_with_set_and_names_bad_fields(run_cli, write_config, tmp_path):
    path = write_config(_writes(1000), name="w.toml")
    proc = run_cli("run", path, "--set", "host.interface=open_channel")
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "results" / "w" / "results.json").read_text())
    assert data["host_interface"]["kind"] == "open_channel"
    assert data["open_channel"]["write_pointer_violations"] == 0
    assert set(data["open_channel"]["chunks"]) == {"free", "open", "closed", "offline"}

    proc = run_cli("run", path, "--set", "host.interface=ufs", "--set", "host.ufs.gear=5")
    assert proc.returncode == 2
    assert "host.ufs.gear" in proc.stderr and "got 5" in proc.stderr
    proc = run_cli("run", path, "--set", "host.ufs.lanes=1")
    assert proc.returncode == 2 and "host.ufs: applies to host.interface" in proc.stderr
