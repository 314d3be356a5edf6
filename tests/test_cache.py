"""Cache organisations and read-ahead through ssdlab.simulate and the CLI (docs/cache.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import small_config
from ssdlab import ConfigError, simulate

ROOT = Path(__file__).resolve().parents[1]


def _sequential(**cache: object) -> dict:
    config = small_config(
        cache_mode="read",
        address="sequential",
        alignment="4KiB",
        working_set=0.4,
        queue_depth=1,
        requests=2000,
    )
    config["flash"]["page_size"] = "4KiB"
    config["cache"] = {"capacity": "1MiB", **cache}
    config["precondition"] = {"mode": "fill", "occupancy": 0.5}
    return config


def test_read_ahead_speeds_up_a_sequential_reader_and_reports_its_prefetches():
    off = simulate(_sequential())
    on = simulate(_sequential(read_ahead=True))
    a, b = off.flows[0].reads, on.flows[0].reads
    assert b.latency_us.mean < 0.7 * a.latency_us.mean
    assert b.bandwidth_mib_s > 1.5 * a.bandwidth_mib_s
    cache = on.device.cache
    assert cache.prefetches_issued > 1900
    assert cache.prefetches_issued == cache.prefetches_used + cache.prefetches_wasted
    assert cache.read_lookups == cache.read_hits + cache.read_misses
    assert on.flows[0].cache.prefetches_used == cache.prefetches_used
    assert off.device.cache.prefetches_issued == 0
    # The new keys are in the document as the core wrote it.
    assert on.to_dict()["device"]["cache"]["prefetches_wasted"] == cache.prefetches_wasted


def test_a_direct_mapped_cache_misses_where_a_fully_associative_one_hits():
    # 32 pages 64 pages apart: they fit a 64-line cache but share one set of a direct-mapped one.
    strided = {"alignment": "256KiB", "working_set": 0.08}
    rates = {}
    for organisation in ("fully_associative", "direct_mapped"):
        config = _sequential(capacity="256KiB", organisation=organisation)
        config["flows"][0].update(address="uniform", **strided)
        result = simulate(config)
        rates[organisation] = result.flows[0].cache_hit_rate
        assert result.device.cache.ways == (1 if organisation == "direct_mapped" else 64)
    assert rates["direct_mapped"] < 0.1 < 0.9 < rates["fully_associative"]


def test_bad_organisation_is_refused_naming_the_field():
    with pytest.raises(ConfigError, match=r"cache\.ways: .*needs the number of ways"):
        simulate(_sequential(organisation="set_associative"))
    with pytest.raises(ConfigError, match=r"cache\.line_size: must be a positive multiple"):
        simulate(_sequential(line_size="6KiB"))


def test_cli_runs_the_read_ahead_example(run_cli, tmp_path):
    example = ROOT / "examples" / "read-ahead.toml"
    proc = run_cli("run", example, "--out", "out", "--set", "flows.0.requests=400")
    assert proc.returncode == 0, proc.stderr
    cache = json.loads((tmp_path / "out" / "results.json").read_text())["device"]["cache"]
    # Every read but the first few finds its page read ahead; the last window stays unread.
    assert cache["prefetches_used"] > 0.95 * 400
    assert cache["prefetches_issued"] == cache["prefetches_used"] + cache["prefetches_wasted"]
    assert cache["sets"] * cache["ways"] == 256 * 1024 // 8
