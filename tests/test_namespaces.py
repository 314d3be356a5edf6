"""Namespaces from Python (docs/namespaces.md): the mixed example reports each namespace, the
metadata flow is slower beside the zoned log than alone, host queues address their own
namespaces, and bad layouts name their field."""

from __future__ import annotations

import pytest
import ssdlab
from conftest import REPO_ROOT

EXAMPLE = REPO_ROOT / "examples" / "namespaces-mixed.toml"
SHORT = ["flows.0.requests=20000", "flows.1.requests=60000"]


def test_the_mixed_example_reports_each_namespace():
    shared = ssdlab.simulate(EXAMPLE, overrides=SHORT)
    alone = ssdlab.simulate(EXAMPLE, overrides=[SHORT[0], "flows.1.requests=1"])
    ns = shared.namespaces
    assert ns is not None
    assert [(n.name, n.command_set, n.zones) for n in ns] == [
        ("db", "conventional", 0),
        ("log", "zoned", 48),
    ]
    assert ns[0].size_bytes == ns[0].capacity_bytes == 8 * 2**30
    assert ns[1].size_bytes == 2 * ns[1].capacity_bytes
    assert ns[0].flows == ["metadata"] and ns[1].bytes_written > 0
    assert shared.to_dict()["namespaces"][1]["zones"] == 48
    slow = shared.flow("metadata").reads.latency_us.mean
    fast = alone.flow("metadata").reads.latency_us.mean
    assert slow > 1.5 * fast


def test_host_queues_address_their_own_namespace():
    config = ssdlab.load_config(EXAMPLE)
    config["flash"]["blocks_per_plane"] = 16
    config["namespaces"] = [
        {"name": "a", "size": "64MiB"},
        {"name": "z", "command_set": "zoned", "zones": 4},
    ]
    config["data"] = {"emulate": True}
    config["flows"] = [
        {"name": "qa", "kind": "host", "namespace": "a"},
        {"name": "qz", "kind": "host", "namespace": "z"},
    ]
    dev = ssdlab.Device(config)
    assert dev.queue_sectors(0) == 64 * 2**20 // 512
    assert dev.queue_sectors(1) == 4 * 2**31 // 512
    # Whole 16 KiB flash pages: a zoned namespace's write unit.
    for queue, byte in ((0, 1), (1, 2)):
        dev.submit("write", 0, 32, data=bytes([byte]) * 16384, queue=queue)
    dev.run_until_idle()
    assert [c.status for c in dev.completions()] == ["success", "success"]
    for queue, byte in ((0, 1), (1, 2)):
        rid = dev.submit("read", 0, 32, queue=queue)
        dev.run_until_idle()
        (c,) = [c for c in dev.completions() if c.id == rid]
        assert c.data == bytes([byte]) * 16384
    assert [z.state for z in dev.zone_report(queue=1)][:2] == ["implicitly_open", "empty"]
    with pytest.raises(ValueError, match="is conventional"):
        dev.zone_report(queue=0)


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("namespaces.0.size=100GiB", "namespaces"),
        ("namespaces.1.zones=0", r"namespaces\[1\]\.zones"),
        ("flows.0.namespace=nope", r"flows\[0\]\.namespace"),
    ],
)
def test_bad_layouts_name_their_field(override, field):
    with pytest.raises(ssdlab.ConfigError, match=field):
        ssdlab.simulate(EXAMPLE, overrides=[*SHORT, override])
