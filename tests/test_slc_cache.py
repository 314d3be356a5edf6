"""The SLC write cache on QLC through the Python API: the example's sequential writes run fast,
then fall off the cliff; results and time series carry the cache's traffic."""

from __future__ import annotations

import ssdlab
from conftest import REPO_ROOT

EXAMPLE = REPO_ROOT / "examples" / "qlc-slc-cache.toml"


def test_the_write_cliff_and_the_cache_results():
    r = ssdlab.simulate(EXAMPLE)
    c = r.slc_cache
    assert c is not None and c.mode == "dynamic"
    bandwidth = r.series.flows[0].writes.bandwidth_mib_s
    assert bandwidth[0] > 1000 and min(bandwidth[5:-1]) < 0.5 * bandwidth[0]
    assert c.host_bytes_to_slc + c.host_bytes_to_dense == r.device.writes.bytes
    assert sum(r.series.slc_cache.host_pages_to_slc) * 16384 == c.host_bytes_to_slc
    assert r.to_dict()["slc_cache"]["blocks_folded"] == c.blocks_folded > 0


def test_without_the_cache_no_section():
    r = ssdlab.simulate(EXAMPLE, overrides=["flows.0.requests=100"])
    plain = ssdlab.load_config(EXAMPLE)
    del plain["flash"]["slc_cache"]
    plain["flows"][0]["requests"] = 100
    r = ssdlab.simulate(plain, base_dir=EXAMPLE.parent)
    assert r.slc_cache is None and "slc_cache" not in r.to_dict()["time_series"]
