"""simulate() and the Results model."""

from __future__ import annotations

import copy
import json
import math
import os
import signal
import threading
import time

import pytest
from conftest import MQSIM_TRACE, RESULTS_CONTRACT, small_config, worn_out_config
from ssdlab import ConfigError, EndOfLifeError, Results, TraceError, _core, dump_toml, simulate


def _without_wall(results: Results) -> dict:
    data = results.to_dict()
    # Wall-clock times are the only fields allowed to differ between identical runs.
    del data["wall_seconds"]
    del data["setup_wall_seconds"]
    del data["precondition"]["wall_seconds"]
    return data


def test_simulate_from_dict(config):
    r = simulate(config)
    assert r.schema == "ssdlab.results/1"
    assert r.seed == 1
    assert [f.name for f in r.flows] == ["r"]
    flow = r.flows[0]
    assert flow.requests == 1000
    assert flow.reads.count == 1000
    assert flow.writes.count == 0
    assert flow.reads.bytes == 1000 * 4096
    assert r.device.reads.count == 1000
    assert 0 < flow.reads.latency_us.p50 <= flow.reads.latency_us.p99 <= flow.reads.latency_us.max
    assert r.events > 1000
    assert r.config == config


def test_simulate_from_file_matches_dict(write_config, config):
    path = write_config(config)
    from_file = simulate(path)
    assert from_file.config_file == str(path)  # a file's run records the file, a dict's nothing
    document = _without_wall(from_file)
    del document["config_file"]
    assert document == _without_wall(simulate(config))
    assert _without_wall(simulate(str(path))) == _without_wall(from_file)


def test_attributes_match_to_dict(config):
    config["flows"].append(
        {
            "name": "w",
            "read_fraction": 0.0,
            "request_size": "4KiB",
            "queue_depth": 2,
            "requests": 300,
        }
    )
    r = simulate(config)
    d = r.to_dict()
    assert d == json.loads(r.to_json())
    assert r.device.reads.latency_us.p99 == d["device"]["reads"]["latency_us"]["p99"]
    assert r.device.gc.write_amplification == d["device"]["gc"]["write_amplification"]
    assert r.device.flash.channel_utilisation == d["device"]["flash"]["channel_utilisation"]
    assert r.flows[1].iops == d["flows"][1]["iops"]
    assert r.flows[1].writes.count == d["flows"][1]["writes"]["count"] == 300
    assert r.flow("w") is r.flows[1]
    assert r.simulated_seconds == d["simulated_seconds"]
    assert set(d) >= RESULTS_CONTRACT


def test_to_dict_is_exactly_the_core_json(config):
    sim = _core.Simulation(json.dumps(config), ".")
    while not sim.step(100_000):
        pass
    text = sim.results_json()
    r = Results.from_json(text)
    assert r.to_dict() == json.loads(text)
    assert list(r.to_dict()) == list(json.loads(text))
    assert r.events == sim.events
    assert r.simulated_seconds == pytest.approx(sim.simulated_seconds)
    assert r.summary_table() == sim.summary_table()


def test_results_round_trip_keeps_unknown_fields(config):
    data = simulate(config).to_dict()
    data["future_top"] = {"x": [1, 2]}
    data["device"]["gc"]["future_gc"] = 7
    data["flows"][0]["reads"]["latency_us"]["p99_999"] = 1.5
    r = Results.from_json(json.dumps(data))
    assert r.to_dict() == data
    assert r.device.gc.future_gc == 7
    assert Results.from_json(r.to_json()).to_dict() == data


def test_summary_table_lists_flows_and_gc(config):
    table = simulate(config).summary_table()
    assert "r " in table and "read" in table
    assert "GC:" in table and "events" in table


def test_same_seed_gives_identical_results(config):
    config["flows"][0]["read_fraction"] = 0.5
    assert _without_wall(simulate(config)) == _without_wall(simulate(copy.deepcopy(config)))


def test_different_seed_changes_results(config):
    config["flows"][0]["read_fraction"] = 0.5
    a = simulate(config)
    b = simulate(config, overrides=["seed=2"])
    assert b.seed == 2
    assert a.device.reads.count != b.device.reads.count or (
        a.device.reads.latency_us.mean != b.device.reads.latency_us.mean
    )


def test_overrides_are_applied(config):
    r = simulate(config, overrides=["flows.0.requests=123", "flows.0.name=renamed"])
    assert r.flows[0].name == "renamed"
    assert r.flows[0].requests == 123
    assert r.config["flows"][0]["requests"] == 123


def test_core_errors_name_the_field_path(config, write_config):
    # A value set by an override is blamed on it, one from a file on the file and its line.
    with pytest.raises(ConfigError, match=r"^--set flash\.channels=0: flash\.channels: must be"):
        simulate(config, overrides=["flash.channels=0"])
    config["flash"]["timing"] = {"read": "75"}
    path = write_config(config)
    with pytest.raises(ConfigError, match=r"test\.toml:\d+: flash\.timing\.read: .*75"):
        simulate(path)


def test_short_run_reports_finite_positive_iops():
    r = simulate(small_config(requests=20))
    assert r.simulated_seconds < 1.0
    for value in (r.flows[0].iops, r.flows[0].reads.iops, r.device.iops, r.device.reads.iops):
        assert math.isfinite(value) and value > 0
    assert r.flows[0].iops == pytest.approx(20 / r.flows[0].interval_seconds)


def test_progress_callback_reports_increasing_fractions():
    seen: list[float] = []
    simulate(small_config(requests=60_000), progress=seen.append)
    assert len(seen) >= 2
    assert seen == sorted(seen)
    assert all(0.0 <= f <= 1.0 for f in seen)
    assert seen[-1] == 1.0


def test_relative_trace_path_resolves_from_the_config_folder(tmp_path, write_config, monkeypatch):
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "t.trace").write_text("0 0 0 8 1\n1000 0 64 8 0\n2000 0 128 16 1\n")
    config = small_config()
    config["flows"] = [{"kind": "trace", "path": "traces/t.trace"}]
    path = write_config(config)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    r = simulate(path)
    assert (r.device.reads.count, r.device.writes.count) == (2, 1)
    assert r.device.reads.bytes == 24 * 512
    with pytest.raises(ConfigError, match=r"flows\[0\]\.path"):
        simulate(config)  # a dict resolves from the working directory
    assert simulate(config, base_dir=tmp_path).device.reads.count == 2


def test_trace_with_four_columns_names_file_and_line(tmp_path):
    trace = tmp_path / "bad.trace"
    trace.write_text("0 0 0 8 1\n# comment\n1000 0 64 8\n")
    config = small_config()
    config["flows"] = [{"kind": "trace", "path": str(trace)}]
    with pytest.raises(TraceError, match=rf"{trace}:3: found 4 columns"):
        simulate(config)


def test_step_releases_the_gil():
    config = small_config(requests=1_500_000, queue_depth=16)
    sim = _core.Simulation(json.dumps(config), ".")
    counter = 0
    stop = False

    def count():
        nonlocal counter
        while not stop:
            counter += 1

    thread = threading.Thread(target=count)
    thread.start()
    try:
        # The thread's counting rate when it has the interpreter to itself.
        start_count = counter
        time.sleep(0.1)
        rate = (counter - start_count) / 0.1
        before = counter
        started = time.perf_counter()
        finished = sim.step(10**12)
        elapsed = time.perf_counter() - started
        during = counter - before
    finally:
        stop = True
        thread.join()
    assert finished
    assert elapsed > 0.1, "simulation too short to tell"
    # Holding the GIL, step() would let the thread count for one switch interval (5 ms) at most.
    # Released, the thread counts all along (at half speed even if it must share one core).
    expected = rate * elapsed
    assert during > 0.25 * expected, f"counted {during} in {elapsed:.3f} s, alone {expected:.0f}"


def test_ctrl_c_stops_a_long_run_promptly():
    # Python leaves SIGINT ignored when it starts with it ignored (a background job of a
    # non-interactive shell, as a CI script may start it): give it the usual handler here.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    started = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            simulate(small_config(requests=10**9))
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.perf_counter() - started < 2.0


@pytest.mark.skipif(not MQSIM_TRACE.exists(), reason=f"MQSim trace not found at {MQSIM_TRACE}")
def test_mqsim_trace_replays_unchanged():
    reads = writes = read_sectors = write_sectors = 0
    for line in MQSIM_TRACE.read_text().splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if fields[4] == "1":
            reads, read_sectors = reads + 1, read_sectors + int(fields[3])
        else:
            writes, write_sectors = writes + 1, write_sectors + int(fields[3])
    r = simulate({"flows": [{"kind": "trace", "path": str(MQSIM_TRACE)}]})
    flow = r.flows[0]
    assert flow.requests == reads + writes
    assert (flow.reads.count, flow.writes.count) == (reads, writes)
    assert (flow.reads.bytes, flow.writes.bytes) == (read_sectors * 512, write_sectors * 512)
    assert r.warnings == []


def test_a_worn_out_drive_raises_end_of_life_error(run_cli, tmp_path):
    # Blocks retire after three P/E cycles until a plane has none to write to: the run ends
    # with EndOfLifeError (a RuntimeError), and `ssdlab run` prints the same message.
    config = worn_out_config()
    with pytest.raises(EndOfLifeError, match=r"^end of life: \d+ blocks were retired") as caught:
        simulate(config)
    assert isinstance(caught.value, RuntimeError)
    path = tmp_path / "worn.toml"
    path.write_text(dump_toml(config))
    done = run_cli("run", path, "--out", tmp_path / "out")
    assert done.returncode != 0
    assert "end of life: " in done.stderr and "ftl.pe_cycle_limit" in done.stderr
