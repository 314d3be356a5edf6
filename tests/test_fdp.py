"""Flexible Data Placement through the Python API: the two-tenant example writes amplify less
on a handle per tenant than on one, and its results carry the FDP statistics log."""

from __future__ import annotations

import pytest
import ssdlab
from conftest import REPO_ROOT

EXAMPLE = REPO_ROOT / "examples" / "fdp-two-tenants.toml"
SHORT = ["flows.0.requests=200000", "flows.1.requests=200000"]


def test_a_handle_per_tenant_lowers_write_amplification():
    separate = ssdlab.simulate(EXAMPLE, overrides=SHORT)
    mixed = ssdlab.simulate(EXAMPLE, overrides=[*SHORT, "flows.1.placement_handle=1"])
    s, m = separate.fdp, mixed.fdp
    assert s is not None and m is not None
    wa = {name: f.media_bytes_written / f.host_bytes_written for name, f in (("s", s), ("m", m))}
    assert wa["s"] < wa["m"]
    assert s.handles[2].flows == ["log"] and m.handles[1].flows == ["index", "log"]
    assert s.handles[3].write_amplification is None
    assert separate.to_dict()["fdp"]["host_bytes_written"] == s.host_bytes_written


def test_a_handle_out_of_range_names_the_field():
    with pytest.raises(ssdlab.ConfigError, match=r"flows\[1\]\.placement_handle"):
        ssdlab.simulate(EXAMPLE, overrides=[*SHORT, "flows.1.placement_handle=9"])


PLACED = {
    "seed": 3,
    "flash": {
        "channels": 2,
        "chips_per_channel": 1,
        "dies_per_chip": 1,
        "planes_per_die": 2,
        "blocks_per_plane": 128,
        "pages_per_block": 16,
        "page_size": "4KiB",
    },
    "ftl": {"over_provisioning": 0.2, "fdp": {"reclaim_unit_handles": 4}},
    "data": {"emulate": True},
    "flows": [{"name": "host", "kind": "host", "placement_handle": 1}],
}


def test_a_host_places_each_write_by_its_own_handle():
    dev = ssdlab.Device(PLACED)
    payload = bytes(range(256)) * 16
    dev.submit("write", 0, 8, data=payload, placement_handle=3)
    dev.submit("write", 8, 8)  # the queue's flow's handle, 1
    dev.submit("write", 16, 8, placement_handle=6)  # not offered: handle 0, and an event
    dev.run_until_idle()
    assert [c.status for c in dev.completions()] == ["success"] * 3
    read = dev.submit("read", 0, 8)
    dev.run_until_idle()
    assert next(c for c in dev.completions() if c.id == read).data == payload
    fdp = dev.results().fdp
    assert fdp is not None
    assert [h.host_bytes_written for h in fdp.handles] == [4096, 4096, 0, 4096]
    assert fdp.events.invalid_placement_identifier == 1
    event = fdp.events.log[0]
    assert (event.event, event.placement_identifier, event.namespace_id, event.flow) == (
        "invalid_placement_identifier",
        6,
        1,
        "host",
    )


def test_a_placement_handle_needs_fdp_and_a_write():
    dev = ssdlab.Device(PLACED)
    with pytest.raises(ValueError, match="only a write carries a placement handle"):
        dev.submit("read", 0, 8, placement_handle=1)
    host_queue = [{"name": "host", "kind": "host"}]
    plain = ssdlab.Device({**PLACED, "ftl": {"over_provisioning": 0.2}, "flows": host_queue})
    with pytest.raises(ValueError, match=r"\[ftl\.fdp\]"):
        plain.submit("write", 0, 8, placement_handle=1)
