"""Zoned namespaces from Python (docs/zns.md): a host drives zones through ssdlab.Device (write
pointer rules, appends, resets, the zone report), the ZN540-class example writes with no GC,
its results and report carry the zones, and bad zone settings name their field."""

from __future__ import annotations

import json

import pytest
import ssdlab
from conftest import REPO_ROOT

EXAMPLE = REPO_ROOT / "examples" / "zns-zn540-class.toml"

ZONED = {
    "seed": 5,
    "flash": {
        "channels": 4,
        "chips_per_channel": 1,
        "dies_per_chip": 1,
        "planes_per_die": 2,
        "blocks_per_plane": 64,
        "pages_per_block": 16,
        "page_size": "4KiB",
    },
    "ftl": {"over_provisioning": 0.1},
    "zns": {"zone_size": "1MiB", "max_open_zones": 2, "max_active_zones": 3},
    "data": {"emulate": True},
    "flows": [{"name": "host", "kind": "host"}],
}
ZONE, CAP = 2048, 1024


def _one(dev: ssdlab.Device, op: str, start: int, sectors: int = 0, data: bytes | None = None):
    rid = dev.submit(op, start, sectors, data=data)
    dev.run_until_idle()
    return next(c for c in dev.completions() if c.id == rid)


def test_a_host_drives_zones_through_the_device():
    dev = ssdlab.Device(ZONED)
    zones = dev.zone_report()
    assert len(zones) * ZONE == dev.logical_sectors
    assert zones[0] == ssdlab.Zone(0, "empty", 0, CAP, 0)
    assert _one(dev, "write", ZONE + 8, 8).status == "zone_invalid_write"
    first = _one(dev, "zone_append", ZONE, 8, b"\x11" * 4096)
    second = _one(dev, "zone_append", ZONE, 8, b"\x22" * 4096)
    assert (first.assigned_sector, second.assigned_sector) == (ZONE, ZONE + 8)
    assert _one(dev, "read", ZONE + 8, 8).data == b"\x22" * 4096
    assert dev.zone_report(1, 1)[0].state == "implicitly_open"
    assert _one(dev, "zone_finish", ZONE).status == "success"
    assert _one(dev, "write", ZONE + 16, 8).status == "zone_is_full"
    reset = _one(dev, "zone_reset", ZONE)
    assert reset.status == "success" and reset.assigned_sector is None
    assert _one(dev, "read", ZONE, 8).data == bytes(4096)
    assert dev.zone_report(1, 1)[0] == ssdlab.Zone(1, "empty", ZONE, CAP, ZONE)
    zns = dev.results().zns
    assert zns is not None
    assert (zns.appends, zns.finishes, zns.resets, zns.failed) == (
        2,
        1,
        1,
        {"zone_invalid_write": 1, "zone_is_full": 1},
    )
    dev.check_invariants()


def test_zone_ops_on_a_conventional_device_are_unsupported():
    config = {**ZONED, "zns": None}
    del config["zns"]
    dev = ssdlab.Device(config)
    assert _one(dev, "zone_reset", 0).status == "unsupported"
    with pytest.raises(ValueError, match="is conventional"):
        dev.zone_report()
    with pytest.raises(ValueError, match=r"zone_open.*no sectors"):
        dev.submit("zone_open", 0, 8)


def test_the_zn540_class_example_writes_without_gc(tmp_path):
    # Eight blocks a plane (one spare): seven 1 GiB zones, written about 1.5 times.
    short = ["flash.blocks_per_plane=8", "flows.0.requests=120000"]
    results = ssdlab.simulate(EXAMPLE, overrides=short)
    z = results.zns
    assert z is not None
    assert z.zones == 7 and z.zone_capacity_bytes == 2**30 and z.zone_size_bytes == 2**31
    assert z.resets > 0 and z.gc_bytes_moved == 0 and z.write_amplification == 1.0
    assert z.failed == {}
    assert results.to_dict()["zns"]["zone_states"]["full"] == z.zone_states["full"]
    saved = results.save(tmp_path / "zn540")
    assert ssdlab.Results.load(saved).zns == z
    from ssdlab.report import write_report

    html = write_report(saved.parent).read_text()
    assert "Zoned namespace" in html and "resets" in html


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("zns.zone_capacity=100MiB", "zns.zone_capacity"),
        ("zns.max_open_zones=20", "zns.max_open_zones"),
        ("zns.zone_planes=3", "zns.zone_planes"),
        ("flows.0.open_zones=0", "flows[0].open_zones"),
        ("precondition.occupancy=0.5", "precondition"),
    ],
)
def test_bad_zone_settings_name_their_field(override, field):
    with pytest.raises(ssdlab.ConfigError, match=field.replace("[", r"\[").replace("]", r"\]")):
        ssdlab.simulate(EXAMPLE, overrides=["flows.0.requests=10", override])


def test_an_lsm_store_places_files_by_level():
    lsm_example = REPO_ROOT / "examples" / "zns-lsm-rocksdb.toml"
    results = ssdlab.simulate(lsm_example, overrides=["flows.0.requests=120000"])
    store = results.flows[0].lsm
    assert store is not None and store.levels == 4 and store.files_per_zone == 16
    assert store.compactions > 0 and store.host_write_amplification > 1.0
    assert results.zns.write_amplification == 1.0 and not results.zns.failed
    with pytest.raises(ssdlab.ConfigError, match=r"flows\[0\]\.lsm\.fanout"):
        ssdlab.simulate(lsm_example, overrides=["flows.0.lsm.fanout=1"])


def test_a_flow_unaware_of_zones_has_its_refused_writes_counted(tmp_path):
    # Random 4 KiB writes on the zoned drive: most are off a write pointer. They are neither
    # reads nor writes; the flow counts them by status and the run says so.
    config = {
        **ZONED,
        "data": {"emulate": False},
        "flows": [{"name": "rand", "address": "uniform", "requests": 500, "queue_depth": 4}],
    }
    results = ssdlab.simulate(config)
    flow = results.flows[0]
    refused = sum(flow.refused.values())
    assert refused > 250 and "zone_invalid_write" in flow.refused
    assert flow.reads.count + flow.writes.count + refused == 500
    assert flow.refused == results.zns.failed
    assert any(
        w.startswith(f"flow rand: the device refused {refused} of its 500 requests")
        and 'address = "zoned"' in w
        for w in results.warnings
    )
    saved = results.save(tmp_path / "rand")
    assert ssdlab.Results.load(saved).flows[0].refused == flow.refused
    # The document is the core's, key for key and in its order.
    sim = ssdlab._core.Simulation(json.dumps(config), ".")
    while not sim.step(100_000):
        pass
    core = json.loads(sim.results_json())
    assert list(core["flows"][0]) == list(results.to_dict()["flows"][0])
    assert list(core["flows"][0])[-1] == "refused"
