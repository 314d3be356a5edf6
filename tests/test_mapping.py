"""Mapping families from Python: ``ftl.mapping`` turns them on, results carry ``mapping``."""

from __future__ import annotations

import pytest
from conftest import small_config
from ssdlab import ConfigError, Results, simulate


def _random_writer(mapping: str) -> dict:
    config = small_config(read_fraction=0.0, alignment="4KiB", working_set=0.8, requests=800)
    config["ftl"].update({"over_provisioning": 0.2, "ideal_mapping": True})
    if mapping != "page":
        config["ftl"]["mapping"] = mapping
    config["precondition"] = {"mode": "fill", "occupancy": 0.8}
    return config


def test_block_mapping_merges_make_small_random_writes_slow():
    page = simulate(_random_writer("page"))
    block = simulate(_random_writer("block"))
    assert page.mapping is None
    assert block.mapping is not None and block.mapping.family == "block"
    assert block.mapping.merges.full > 0
    assert block.mapping.pages_copied_by_merges > block.mapping.merges.full
    assert block.flows[0].writes.latency_us.mean > 5 * page.flows[0].writes.latency_us.mean
    # The section survives a round trip through results.json.
    again = Results.from_json(block.to_json())
    assert again.mapping == block.mapping
    assert "mapping" in block.to_dict() and "mapping" not in page.to_dict()


def test_block_mapping_refuses_steady_preconditioning():
    config = _random_writer("hybrid")
    config["precondition"] = "steady"
    with pytest.raises(ConfigError, match="precondition"):
        simulate(config)
