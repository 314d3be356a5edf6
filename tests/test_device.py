"""ssdlab.Device: a host written in Python drives the simulated SSD request by request (issue 13).

The same requests stepped in give exactly the batch run's results; host bytes come back; trims
read as zeros; a flush waits for the write cache; bad requests and configs are refused by name;
the closed-loop example runs.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
import ssdlab
from conftest import REPO_ROOT

SMALL = {
    "seed": 5,
    "flash": {
        "channels": 2,
        "chips_per_channel": 1,
        "dies_per_chip": 1,
        "planes_per_die": 1,
        "blocks_per_plane": 32,
        "pages_per_block": 16,
        "page_size": "4KiB",
    },
    "ftl": {"over_provisioning": 0.2},
    "cache": {"capacity": "64KiB"},
    "data": {"emulate": True},
    "flows": [{"name": "sq0", "kind": "host", "cache_mode": "write"}],
}


def test_stepping_a_traces_requests_gives_the_batch_results(tmp_path):
    rng = random.Random(4)
    t_ns, lines, requests = 0, [], []
    for _ in range(1500):
        t_ns += rng.randrange(2_000, 30_000)
        lba, sectors, write = rng.randrange(200_000), rng.randrange(1, 17), rng.random() < 0.3
        lines.append(f"{t_ns} 0 {lba} {sectors} {0 if write else 1}")
        requests.append((t_ns, "write" if write else "read", lba, sectors))
    (tmp_path / "app.trace").write_text("\n".join(lines) + "\n")
    config = ssdlab.load_config(REPO_ROOT / "examples" / "mqsim-default.toml")
    config["precondition"] = {"mode": "none"}
    config["flows"] = [{"name": "app", "kind": "trace", "path": "app.trace", "format": "mqsim"}]
    batch = ssdlab.simulate(config, base_dir=tmp_path)

    config["flows"] = [{"name": "app", "kind": "host"}]
    dev = ssdlab.Device(config, base_dir=tmp_path)
    first = requests[0][0]
    for t_ns, op, lba, sectors in requests:
        dev.advance_to((t_ns - first) * 1000)  # trace time starts at the first record
        dev.submit(op, lba, sectors)
    dev.run_until_idle()
    stepped = dev.results()
    assert stepped.to_dict()["flows"] == batch.to_dict()["flows"]
    assert stepped.to_dict()["device"] == batch.to_dict()["device"]
    assert stepped.simulated_seconds == batch.simulated_seconds
    # The batch run's events include one arrival per request; a host's submit is not an event.
    assert stepped.events + len(requests) == batch.events


def test_host_bytes_come_back_and_trimmed_pages_read_as_zeros():
    dev = ssdlab.Device(SMALL)
    assert dev.host_queues == ["sq0"] and dev.page_bytes == 4096
    payload = bytes(range(256)) * 16  # 8 sectors
    write = dev.submit("write", 16, 8, data=payload)
    dev.run_until_idle()
    (done,) = dev.completions()
    assert (done.id, done.op, done.status) == (write, "write", "success")
    assert done.latency_ps > 0 and set(done.breakdown_ps) >= {"sq_wait", "cache_dram", "completion"}
    dev.submit("read", 16, 8)
    dev.run_until_idle()
    assert dev.completions()[0].data == payload
    dev.submit("trim", 16, 8)
    dev.submit("read", 12, 16)
    dev.run_until_idle()
    trim, read = dev.completions()
    assert trim.status == "success"
    assert read.data == bytes(16 * 512)
    dev.check_invariants()


def test_a_flush_waits_until_the_cached_writes_are_on_flash():
    # A fresh drive: no GC program is counted beside the flushed pages. Written back only on
    # demand: run_until_idle would otherwise let the idle drive write them back first.
    cache = {**SMALL["cache"], "destage": "when-full"}
    dev = ssdlab.Device({**SMALL, "cache": cache, "precondition": {"mode": "none"}})
    for i in range(4):
        dev.submit("write", i * 8, 8, data=bytes([i]) * 4096)
    dev.run_until_idle()
    writes = dev.completions()
    programs = dev.results().device.flash.programs
    dev.submit("flush")
    dev.run_until_idle()
    (flush,) = dev.completions()
    assert dev.results().device.flash.programs - programs == 4
    assert flush.latency_us > max(w.latency_us for w in writes)


def test_an_idle_drive_writes_its_cache_back_before_the_flush():
    dev = ssdlab.Device({**SMALL, "precondition": {"mode": "none"}})
    for i in range(4):
        dev.submit("write", i * 8, 8, data=bytes([i]) * 4096)
    dev.run_until_idle()
    dev.completions()
    cache = dev.results().device.cache
    assert (cache.destaged, cache.destaged_when_idle, cache.dirty_lines_at_end) == (4, 4, 0)
    dev.submit("flush")
    dev.run_until_idle()
    (flush,) = dev.completions()
    assert flush.latency_us < 100, "nothing left to write"
    assert dev.results().device.flash.programs == 4


def test_advance_to_never_passes_the_time_asked_and_time_never_goes_back():
    dev = ssdlab.Device(SMALL)
    dev.submit("read", 0, 8)
    first = dev.next_event_time()
    assert first is not None and first >= dev.now_ps
    dev.advance_to(first - 1)
    assert dev.now_ps == first - 1 and dev.completions() == []
    dev.advance_to(10)  # the past: nothing happens
    assert dev.now_ps == first - 1
    dev.run_until_idle()
    assert dev.next_event_time() is None and dev.in_flight == 0
    dev.advance_to(dev.now_ps + 5 * ssdlab.device.PS_PER_US)
    assert dev.now_seconds == pytest.approx(dev.now_ps / 1e12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda d: d.submit("erase", 0, 8), "op: expected"),
        (lambda d: d.submit("read", 0, 0), "at least one sector"),
        (lambda d: d.submit("read", d.logical_sectors - 1, 8), "not within the device"),
        (lambda d: d.submit("write", 0, 8, data=b"short"), "4096 bytes, got 5"),
        (lambda d: d.submit("read", 0, 8, queue=2), "queue 2"),
        (lambda d: d.submit("flush", 8, 1), "a flush carries no sector range"),
    ],
)
def test_bad_requests_are_refused_by_name(call, message):
    dev = ssdlab.Device(SMALL)
    with pytest.raises(ValueError, match=message):
        call(dev)
    assert dev.in_flight == 0


def test_bad_device_configs_are_refused_by_name():
    with pytest.raises(ssdlab.ConfigError, match=r"flows\[0\]\.requests"):
        ssdlab.Device({**SMALL, "flows": [{"kind": "host", "requests": 10}]})
    with pytest.raises(ssdlab.ConfigError, match=r"flows\[0\]\.kind.*outside host"):
        ssdlab.simulate({**SMALL, "flows": [{"kind": "host"}]})
    no_flows = {k: v for k, v in SMALL.items() if k != "flows"}
    assert ssdlab.Device(no_flows).host_queues == ["host"]


def test_the_closed_loop_example_runs():
    done = subprocess.run(
        [
            sys.executable,
            "examples/hosts/closed_loop_app.py",
            "--touches",
            "3000",
            "--threads",
            "4",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "3000 touches by 4 threads" in done.stdout and "page cache:" in done.stdout


def test_a_persisted_device_reopens_with_its_contents(tmp_path):
    config = {**SMALL, "data": {"emulate": True, "backing_file": "disk.img"}}
    dev = ssdlab.Device(config, base_dir=tmp_path)
    payload = bytes(range(256)) * 16
    dev.submit("write", 800, 8, data=payload)
    dev.run_until_idle()
    assert dev.persist() == tmp_path / "disk.img"
    again = ssdlab.Device(config, base_dir=tmp_path)
    again.submit("read", 800, 8)
    again.run_until_idle()
    assert again.completions()[0].data == payload
    with pytest.raises(OSError, match="backing_file is not set"):
        ssdlab.Device(SMALL).persist()


VARIANTS = {
    "nvme": {},
    "sata": {"host": {"interface": "sata"}},
    "ufs": {"host": {"interface": "ufs"}},
    "open_channel": {"host": {"interface": "open_channel"}},
    "firmware": {"firmware": {"enabled": True}},
    "banked_dram": {"dram": {"model": "banked"}},
    "hybrid": {
        "ftl": {"over_provisioning": 0.2, "mapping": "hybrid"},
        "precondition": {"mode": "fill"},
    },
    # Steady state keeps its placement as a rule (docs/steady-state.md, Speed): reads, trims
    # and GC through it, in both map address forms.
    "steady": {"precondition": {"mode": "steady", "occupancy": 0.8}},
    "steady_in_plane": {
        "precondition": {"mode": "steady", "occupancy": 0.8},
        "ftl": {"over_provisioning": 0.2, "map_addresses": "in-plane"},
    },
}


@pytest.mark.parametrize("variant", VARIANTS, ids=str)
def test_every_read_returns_the_last_write_through_every_interface(variant):
    """Random host writes (own bytes), write-zeroes, trims, flushes and reads on two host
    queues, one request at a time: every read returns what the host wrote last, trims read as
    zeros where honoured, and the emulation's own checks agree."""
    config = {
        **SMALL,
        **VARIANTS[variant],
        "flows": [
            {"name": "q0", "kind": "host", "cache_mode": "write-read"},
            {"name": "q1", "kind": "host"},
        ],
    }
    dev = ssdlab.Device(config)
    rng = random.Random(7)
    image = bytearray(dev.logical_sectors * 512)
    spp = dev.page_bytes // 512
    served = {"trim": 0, "unsupported": 0}
    for _ in range(600):
        op = rng.choice(["write", "write", "read", "read", "trim", "flush", "write_zeroes"])
        start, sectors = rng.randrange(dev.logical_sectors - 32), rng.randrange(1, 32)
        queue = rng.randrange(2)
        if op == "flush":
            dev.submit(op, queue=queue)
        elif op == "write":
            data = rng.randbytes(sectors * 512)
            dev.submit(op, start, sectors, data=data, queue=queue)
            image[start * 512 : (start + sectors) * 512] = data
        else:
            dev.submit(op, start, sectors, queue=queue)
            if op == "write_zeroes":
                image[start * 512 : (start + sectors) * 512] = bytes(sectors * 512)
        dev.run_until_idle()
        (done,) = dev.completions()
        if op == "trim":
            served["unsupported" if done.status == "unsupported" else "trim"] += 1
            first, last = -(-start // spp) * spp, (start + sectors) // spp * spp
            if done.status == "success" and last > first:
                image[first * 512 : last * 512] = bytes((last - first) * 512)
        if op == "read":
            assert done.data == bytes(image[start * 512 : (start + sectors) * 512]), variant
    dev.check_invariants()
    results = dev.results()
    assert results.data.mismatched_sectors == 0
    refused = variant in ("open_channel", "hybrid")
    assert (served["unsupported"] > 0) == refused and (served["trim"] > 0) != refused
