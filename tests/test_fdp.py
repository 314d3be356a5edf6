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
