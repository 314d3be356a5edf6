"""Results as pandas DataFrames and Parquet files, checked against the numbers of results.json."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import ssdlab
from conftest import small_config


def _mixed(**run) -> dict:
    """A reader and a writer on the small device, aged so that GC runs."""
    config = small_config(requests=1500)
    config["precondition"] = {"mode": "fill", "occupancy": 0.8, "layout": "spread"}
    config["flows"].append(
        {"name": "w", "read_fraction": 0.0, "request_size": "4KiB", "queue_depth": 2}
        | {"requests": 800}
    )
    if run:
        config["run"] = run
    return config


@pytest.fixture(scope="module")
def results() -> ssdlab.Results:
    return ssdlab.simulate(_mixed())


def test_summary_has_one_row_per_flow_and_op_with_the_document_numbers(results):
    frame = results.summary()
    assert list(frame[["flow", "op"]].itertuples(index=False, name=None)) == [
        ("r", "read"),
        ("r", "write"),
        ("w", "read"),
        ("w", "write"),
        ("device", "read"),
        ("device", "write"),
    ]
    row = frame[(frame.flow == "w") & (frame.op == "write")].iloc[0]
    w = results.flow("w").writes
    assert row["count"] == w.count == 800
    assert row["p99_us"] == w.latency_us.p99
    assert row["iops"] == w.iops
    steps = [c for c in frame.columns if c.endswith("_us") and c[:-3] in w.latency_breakdown_us]
    assert len(steps) == len(w.latency_breakdown_us)
    assert row[steps].sum() == pytest.approx(w.latency_us.mean)
    assert len(results.summary(device=False)) == 4


def test_latency_cdf_is_monotone_and_ends_at_one(results):
    cdf = results.latency_cdf()
    assert list(cdf.columns) == ["flow", "op", "latency_us", "fraction"]
    groups = dict(iter(cdf.groupby(["flow", "op"])))
    assert set(groups) == {("r", "read"), ("w", "write"), ("device", "read"), ("device", "write")}
    for (flow, op), part in groups.items():
        assert part["latency_us"].is_monotonic_increasing, (flow, op)
        assert part["fraction"].is_monotonic_increasing
        assert part["fraction"].iloc[-1] == 1.0
        group = results.device if flow == "device" else results.flow(flow)
        assert part["latency_us"].iloc[-1] == getattr(group, op + "s").latency_us.max


def test_time_series_completions_add_up_to_the_request_counts(results):
    ts = results.time_series()
    assert {"flow", "op", "window_start_s", "iops", "bandwidth_mib_s", "mean_us", "p99_us"} <= set(
        ts.columns
    )
    totals = ts.groupby(["flow", "op"])["count"].sum()
    assert totals[("r", "read")] == results.flow("r").reads.count == 1500
    assert totals[("w", "write")] == 800
    assert totals[("device", "read")] + totals[("device", "write")] == 2300
    windows = len(results.series.start_seconds)
    assert len(ts) == windows * 6  # (2 flows + device) x 2 ops
    # IOPS is the window's count over its length; empty windows have NaN latencies.
    part = ts[(ts.flow == "r") & (ts.op == "read")]
    assert np.allclose(part["iops"], part["count"] / part["window_s"])
    assert part.loc[part["count"] == 0, "mean_us"].isna().all()
    assert (part.loc[part["count"] > 0, "p99_us"] <= part.loc[part["count"] > 0, "max_us"]).all()


def test_gc_time_series_adds_up_to_the_device_gc(results):
    gc = results.gc_time_series()
    assert results.device.gc.blocks_erased > 0
    assert gc["blocks_erased"].sum() == results.device.gc.blocks_erased
    assert gc["pages_moved"].sum() == results.device.gc.pages_moved
    overall = gc["flash_pages_programmed"].sum() / gc["host_pages_written"].sum()
    assert overall == pytest.approx(results.device.gc.write_amplification)
    assert gc.loc[gc["host_pages_written"] == 0, "write_amplification"].isna().all()


def test_time_series_window_is_configurable(results):
    r = ssdlab.simulate(_mixed(), overrides=["run.time_series_window=50ms"])
    assert r.series.window_seconds == 0.05 and not r.series.adaptive
    assert r.time_series()["window_start_s"].iloc[1] == 0.05


def test_parquet_round_trip(results, tmp_path):
    paths = results.to_parquet(tmp_path)
    assert sorted(p.name for p in paths) == [
        "gc_time_series.parquet",
        "latency_cdf.parquet",
        "summary.parquet",
        "time_series.parquet",
    ]
    for name, frame in [
        ("summary", results.summary()),
        ("latency_cdf", results.latency_cdf()),
        ("time_series", results.time_series()),
        ("gc_time_series", results.gc_time_series()),
    ]:
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / f"{name}.parquet"), frame)


def test_results_json_keeps_number_arrays_on_one_line_and_round_trips(results):
    text = results.to_json()
    document = json.loads(text)
    assert document == json.loads(json.dumps(results.to_dict()))
    assert '"count": [' in text and "time_series" in document
    assert ssdlab.Results.from_json(text).to_dict() == results.to_dict()


def test_requests_are_recorded_sampled_and_deterministic(tmp_path):
    config = _mixed(request_records=0.3)
    a = ssdlab.simulate(config, records_dir=tmp_path / "a")
    b = ssdlab.simulate(config, records_dir=tmp_path / "b")
    frame = a.requests()
    assert (tmp_path / "a" / "requests.bin").read_bytes() == (
        tmp_path / "b" / "requests.bin"
    ).read_bytes()
    pd.testing.assert_frame_equal(frame, b.requests())
    assert len(frame) == a.request_records.records
    assert 0.25 < len(frame) / 2300 < 0.35
    assert set(frame["flow"]) == {"r", "w"}
    assert set(frame.loc[frame.flow == "w", "op"]) == {"write"}
    steps = [c for c in frame.columns if c.endswith("_us") and c != "latency_us"]
    assert len(steps) == 11
    assert np.allclose(frame[steps].sum(axis=1), frame["latency_us"], rtol=1e-9, atol=1e-6)
    assert (frame["size_bytes"] == 4096).all()


def test_all_records_match_the_summary_and_survive_save_and_load(tmp_path):
    r = ssdlab.simulate(_mixed(request_records="all"))  # into a temporary folder
    frame = r.requests()
    assert len(frame) == 2300
    reads = frame[frame.op == "read"]["latency_us"]
    assert reads.mean() == pytest.approx(r.device.reads.latency_us.mean, rel=1e-9)
    assert reads.max() == pytest.approx(r.device.reads.latency_us.max)
    r.save(tmp_path / "run")
    assert (tmp_path / "run" / "requests.parquet").is_file()
    loaded = ssdlab.Results.load(tmp_path / "run")
    assert loaded.request_records.file == "requests.parquet"
    pd.testing.assert_frame_equal(loaded.requests(), frame)
    assert "requests.parquet" in [p.name for p in loaded.to_parquet(tmp_path / "pq")]


def test_results_without_records_say_how_to_get_them(results):
    with pytest.raises(ValueError, match=r"run\.request_records"):
        results.requests()


def test_cli_run_writes_requests_parquet(run_cli, write_config, tmp_path):
    path = write_config(_mixed(request_records="all"), name="rec.toml")
    proc = run_cli("run", path, "--out", "out")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    assert not (out / "requests.bin").exists()
    frame = pd.read_parquet(out / "requests.parquet")
    assert len(frame) == 2300
    data = json.loads((out / "results.json").read_text())
    assert data["request_records"]["file"] == "requests.parquet"
    assert data["request_records"]["records"] == 2300


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("run.request_records=1.5", "run.request_records: expected"),
        ("run.request_records=0", "run.request_records: expected"),
        ('run.request_records="some"', "run.request_records"),
        ('run.time_series_window="0ns"', "run.time_series_window: must be at least 1ns"),
        ("run.time_series_window=5", "run.time_series_window"),
    ],
)
def test_bad_output_settings_are_rejected_with_the_field(override, fragment):
    with pytest.raises(ssdlab.ConfigError, match=fragment.replace(".", r"\.")):
        ssdlab.simulate(_mixed(), overrides=[override])


def test_results_read_well_in_a_notebook():
    """Issue 19, item 5: a one-line repr, an HTML table, tab completion without pydantic's
    machinery, the time series under the JSON's name, and plot helpers."""
    import matplotlib

    matplotlib.use("Agg")
    r = ssdlab.simulate(small_config(requests=200))
    text = repr(r)
    assert text.startswith("<ssdlab.Results 1 flow, 200 requests in ") and "\n" not in text
    assert len(text) < 200
    html = r._repr_html_()
    assert "<table>" in html and "<td>r</td>" in html and "<td>device</td>" in html
    names = dir(r)
    assert not [n for n in names if n.startswith(("model_", "_"))]
    assert {"flows", "device", "time_series", "summary", "plot_cdf", "to_dict"} <= set(names)
    assert "model_dump" not in dir(r.device)
    # The document's time_series, as results.json names it; called, the DataFrame.
    assert r.time_series.window_seconds > 0
    frame = r.time_series()
    assert {"window_start_s", "iops", "p99_us"} <= set(frame.columns)
    assert frame.equals(r.time_series_frame()) and r.series is r.time_series
    assert r.plot_cdf().get_lines()
    assert r.plot_time_series().get_lines()
