"""Interference between flows: `--alone` runs and slowdown, fairness and weighted speedup."""

from __future__ import annotations

import json

import pytest
import ssdlab
from conftest import small_config
from ssdlab.api import alone_document, fairness_metrics


def _victim_and_aggressor() -> dict:
    """flow-1: random reads at QD 2; flow-2: random reads at QD 64. Both run the same time."""
    config = small_config(name="flow-1", queue_depth=2, duration="20ms")
    del config["flows"][0]["requests"]
    config["flows"].append(
        {
            "name": "flow-2",
            "read_fraction": 1.0,
            "request_size": "4KiB",
            "queue_depth": 64,
            "duration": "20ms",
        }
    )
    return config


@pytest.fixture(scope="module")
def interference() -> ssdlab.Results:
    return ssdlab.simulate(_victim_and_aggressor(), alone=True)


def test_the_light_flow_suffers_more_than_the_aggressor(interference):
    f = interference.fairness
    assert f is not None
    assert set(f.slowdown) == {"flow-1", "flow-2"}
    assert f.slowdown["flow-1"] > f.slowdown["flow-2"] >= 0.95
    assert f.slowdown["flow-1"] > 1.5
    assert 0 < f.fairness < 1
    assert f.fairness == pytest.approx(min(f.slowdown.values()) / max(f.slowdown.values()))
    assert 0 < f.weighted_speedup < 2
    assert f.weighted_speedup == pytest.approx(sum(1 / s for s in f.slowdown.values()))


def test_slowdown_uses_the_count_weighted_mean_of_reads_and_writes(interference):
    f = interference.fairness
    for flow in interference.flows:
        assert f.shared_mean_us[flow.name] == pytest.approx(flow.reads.latency_us.mean)
        assert f.slowdown[flow.name] == pytest.approx(
            f.shared_mean_us[flow.name] / f.alone_mean_us[flow.name]
        )


def test_alone_run_equals_a_run_of_the_flow_by_itself():
    config = _victim_and_aggressor()
    shared = ssdlab.simulate(config, alone=True)
    solo = dict(config, flows=[config["flows"][0]])
    alone = ssdlab.simulate(solo)
    assert shared.fairness.alone_mean_us["flow-1"] == alone.flows[0].reads.latency_us.mean


def test_the_fairness_object_is_in_to_dict_only_for_alone_runs(interference):
    assert set(interference.to_dict()["fairness"]) >= {"slowdown", "fairness", "weighted_speedup"}
    plain = ssdlab.simulate(small_config())
    assert plain.fairness is None
    assert "fairness" not in plain.to_dict()


def test_one_flow_gives_exactly_one():
    calls = []
    results = ssdlab.simulate(small_config(), alone=True, progress=calls.append)
    f = results.fairness
    assert f.slowdown == {"r": 1.0}
    assert f.fairness == 1.0
    assert f.weighted_speedup == 1.0
    # The single flow's alone run is the shared run itself: one simulation.
    assert calls[-1] == 1.0 and calls.count(1.0) == 1


def test_mixed_flows_weight_reads_and_writes_by_count():
    metrics, notes = fairness_metrics(["a", "b"], {"a": 30.0, "b": 10.0}, {"a": 10.0, "b": 10.0})
    assert metrics.slowdown == {"a": 3.0, "b": 1.0}
    assert metrics.fairness == pytest.approx(1 / 3)
    assert metrics.weighted_speedup == pytest.approx(1 + 1 / 3)
    assert notes == []
    metrics, notes = fairness_metrics(["a", "b"], {"a": 30.0, "b": 0.0}, {"a": 10.0, "b": 0.0})
    assert metrics.slowdown == {"a": 3.0}
    assert "flow b" in notes[0]


def test_cli_alone_writes_the_fairness_object(run_cli, write_config, tmp_path):
    path = write_config(_victim_and_aggressor(), name="pair.toml")
    proc = run_cli("run", path, "--alone")
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "results" / "pair" / "results.json").read_text())
    fairness = data["fairness"]
    assert set(fairness["slowdown"]) == {"flow-1", "flow-2"}
    assert 0 < fairness["fairness"] < 1
    assert 0 < fairness["weighted_speedup"] < 2
    assert "slowdown" in proc.stdout and "weighted speedup" in proc.stdout


def test_a_flow_alone_keeps_its_slice_of_per_flow_address_domains():
    document = {
        "ftl": {"address_domains": "per-flow"},
        "flows": [
            {"queue_depth": 1},
            {"queue_depth": 2, "working_set": 0.5},
            {"kind": "trace", "path": "t.trace"},
        ],
    }
    solo = alone_document(document, 1, "flow-1")
    assert solo["ftl"]["address_domains"] == "shared"
    assert solo["flows"] == [
        {"queue_depth": 2, "name": "flow-1", "working_set_start": 1 / 3, "working_set": 0.5 / 3}
    ]
    assert document["ftl"]["address_domains"] == "per-flow", "the input is not modified"
    # A trace has no working set to place: it stays in per-flow domains (alone, all the space).
    assert alone_document(document, 2, "t")["ftl"]["address_domains"] == "per-flow"
    # Shared domains: the flow is simply alone.
    shared = alone_document({"flows": [{"queue_depth": 1}, {"queue_depth": 2}]}, 0, "a")
    assert shared == {"flows": [{"queue_depth": 1, "name": "a"}]}
