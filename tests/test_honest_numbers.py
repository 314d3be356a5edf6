"""Undefined figures are null/NaN, never 0; min, stdev and extra percentiles sit beside the
percentiles; the summary says what its device rows cover and how full the drive started
(issue 19, item 3)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import small_config
from ssdlab import ConfigError, simulate

LATENCY_KEYS = ("min", "mean", "stdev", "p50", "p90", "p99", "p99_9", "p99_99", "max")


def _write_only(**run):
    config = small_config(read_fraction=0.0, requests=400)
    config["precondition"] = {"mode": "none"}
    config["run"] = run
    return config


def test_an_op_that_never_ran_has_null_latencies_everywhere(tmp_path):
    results = simulate(_write_only())
    document = json.loads(results.to_json())
    reads = document["flows"][0]["reads"]
    assert reads["count"] == 0
    for key in LATENCY_KEYS:
        assert reads["latency_us"][key] is None, key
    assert all(v is None for v in reads["latency_breakdown_us"].values())
    assert document["device"]["reads"]["latency_us"]["mean"] is None
    # The write side ran: defined, and ordered.
    writes = document["flows"][0]["writes"]["latency_us"]
    assert 0 < writes["min"] <= writes["p50"] <= writes["p99"] <= writes["max"]
    # DataFrames: NaN in a float column, not 0.
    frame = results.summary()
    row = frame[(frame.flow == "r") & (frame.op == "read")].iloc[0]
    assert math.isnan(row["mean_us"]) and math.isnan(row["p99_us"]) and math.isnan(row["min_us"])
    assert frame["mean_us"].dtype == np.float64
    # The saved document loads back with the nulls intact.
    results.save(tmp_path)
    again = type(results).load(tmp_path)
    assert again.flows[0].reads.latency_us.mean is None
    assert again.summary_table()  # the core reads nulls back too


def test_write_amplification_and_hit_rates_are_null_without_anything_to_divide():
    config = small_config(requests=300)  # reads only
    config["precondition"] = {"mode": "none"}
    results = simulate(config)
    assert results.device.gc.write_amplification is None
    assert results.flows[0].cache_hit_rate is None  # no cache, no lookup
    document = json.loads(results.to_json())
    assert document["device"]["gc"]["write_amplification"] is None
    assert document["precondition"]["write_amplification"] is None  # nothing was aged
    assert math.isnan(results.gc_time_series()["write_amplification"].iloc[0])


def test_stdev_and_min_match_the_request_records():
    results = simulate(_write_only(request_records="all"))
    latencies = results.requests().query("op == 'write'")["latency_us"].to_numpy()
    stats = results.flows[0].writes.latency_us
    assert stats.min == pytest.approx(latencies.min(), rel=1e-9)
    assert stats.max == pytest.approx(latencies.max(), rel=1e-9)
    assert stats.stdev == pytest.approx(np.std(latencies, ddof=1), rel=1e-6)
    assert stats.stdev > 0


def test_extra_percentiles_are_reported_in_order():
    results = simulate(_write_only(percentiles=[95, 99.5, 99.999]))
    lat = results.flows[0].writes.latency_us
    assert set(lat.extra) == {"p95", "p99_5", "p99_999"}
    assert lat.p90 <= lat.extra["p95"] <= lat.p99 <= lat.extra["p99_5"] <= lat.p99_9
    assert lat.extra["p99_999"] <= lat.max
    reads = results.flows[0].reads.latency_us.extra
    assert reads == {"p95": None, "p99_5": None, "p99_999": None}
    frame = results.summary()
    assert {"p95_us", "p99_5_us", "p99_999_us"} <= set(frame.columns)


@pytest.mark.parametrize(
    ("percentiles", "fragment"),
    [
        ([0], "run.percentiles[0]: expected a percent between 0 and 100"),
        ([95, 100], "run.percentiles[1]: expected a percent between 0 and 100"),
        ([99], "run.percentiles[0]: p99 is always reported"),
        ([95, 95.0], "run.percentiles[1]: 95 is listed twice"),
    ],
)
def test_bad_percentiles_are_refused(percentiles, fragment):
    with pytest.raises(ConfigError, match=rf"{fragment.replace('[', '.').replace(']', '.')}"):
        simulate(_write_only(percentiles=percentiles))


def test_the_summary_explains_device_rows_and_the_starting_state(run_cli, write_config):
    config = small_config(requests=300)
    config["flows"].append({"name": "w", "read_fraction": 0.0, "queue_depth": 1, "requests": 50})
    config["precondition"] = {"mode": "fill", "occupancy": 0.5}
    proc = run_cli("run", write_config(config), "--out", "out")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "device rows over the whole run" in text
    assert "started: 50% full, filled without aging" in text
    assert "stdev" in text and "min" in text


def test_sweep_parquet_keeps_undefined_metrics_null(tmp_path):
    import pyarrow.parquet as pq
    from conftest import to_toml
    from ssdlab.sweep import run_sweep

    base = small_config(requests=200)  # reads only: write latencies and WA are undefined
    base["precondition"] = {"mode": "none"}
    (tmp_path / "base.toml").write_text(to_toml(base), encoding="utf-8")
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('base = "base.toml"\n[axes]\n"flows.0.queue_depth" = [1, 4]\n')
    assert run_sweep(sweep, tmp_path / "out", jobs=1).ok
    frame = pq.read_table(tmp_path / "out" / "sweep.parquet").to_pandas()
    assert frame["write_p99_us"].isna().all() and frame["write_amplification"].isna().all()
    assert (frame["read_p99_us"] > 0).all()
