"""The `ssdlab` command line: results.json, the summary table and one-line errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import ssdlab
from conftest import MQSIM_TRACE, REPO_ROOT, RESULTS_CONTRACT, small_config


def _assert_one_line_error(proc, *fragments: str) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def test_run_writes_results_and_prints_the_table(run_cli, write_config, tmp_path):
    config = small_config()
    config["flows"].append(
        {
            "name": "writer",
            "read_fraction": 0.0,
            "request_size": "4KiB",
            "queue_depth": 2,
            "requests": 200,
        }
    )
    path = write_config(config, name="tiny.toml")
    proc = run_cli("run", path)
    assert proc.returncode == 0, proc.stderr
    target = tmp_path / "results" / "tiny" / "results.json"
    assert f"wrote {Path('results') / 'tiny' / 'results.json'}" in proc.stdout
    text = target.read_text()
    data = json.loads(text)
    assert text.startswith('{\n  "schema": "ssdlab.results/1"')
    assert set(data) >= RESULTS_CONTRACT
    assert {"reads", "writes", "iops", "bandwidth_mib_s", "gc", "flash"} <= set(data["device"])
    assert {"blocks_erased", "pages_moved", "write_amplification"} <= set(data["device"]["gc"])
    assert set(data["device"]["reads"]["latency_us"]) >= {
        "mean",
        "p50",
        "p90",
        "p99",
        "p99_9",
        "p99_99",
        "max",
    }
    assert [f["name"] for f in data["flows"]] == ["r", "writer"]
    assert data["flows"][1]["writes"]["count"] == 200
    for word in (
        "flow",
        "requests",
        "IOPS",
        "MiB/s",
        "p99.9",
        "writer",
        "device",
        "GC:",
        "write amplification",
        "simulated",
        "wall",
        "events",
    ):
        assert word in proc.stdout, word
    assert "1,000" in proc.stdout  # the reader's request count


def test_out_set_and_seed_options(run_cli, write_config, tmp_path):
    path = write_config(small_config())
    out = tmp_path / "custom"
    proc = run_cli(
        "run",
        path,
        "--out",
        out,
        "--set",
        "flows.0.requests=77",
        "--set",
        "flows.0.name=q",
        "--seed",
        "5",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "results.json").read_text())
    assert data["seed"] == 5
    assert data["flows"][0]["name"] == "q"
    assert data["flows"][0]["requests"] == 77


def test_version(run_cli):
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"ssdlab {ssdlab.__version__}"


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "ssdlab"
    if not script.exists():
        pytest.skip(f"no console script at {script}")
    import subprocess

    proc = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and proc.stdout.startswith("ssdlab ")


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        ({"bogus_key": 1}, ["bogus_key", "unknown key"]),
        ({"flash": {"channels": 0}}, ["flash.channels", "at least 1"]),
        ({"flash": {"timing": {"read": "75"}}}, ["flash.timing.read", '"75"']),
        ({"flash": {"timing": {"read": 75}}}, ["flash.timing.read", "add a unit"]),
        ({"flows": [{"name": "r", "queue_depth": 4, "requests": 0}]}, ["flows[0].requests"]),
    ],
)
def test_config_errors_exit_2_naming_the_field(run_cli, write_config, change, fragments):
    config = small_config()
    for key, value in change.items():
        if isinstance(value, dict) and key in config:
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    path = write_config(config)
    _assert_one_line_error(run_cli("run", path), "test.toml", *fragments)


def test_bad_override_exits_2(run_cli, write_config):
    path = write_config(small_config())
    _assert_one_line_error(run_cli("run", path, "--set", "flash.channels"), "flash.channels")
    _assert_one_line_error(run_cli("run", path, "--set", "flows.3.requests=1"), "out of range")


def test_missing_config_file_exits_2(run_cli, tmp_path):
    _assert_one_line_error(run_cli("run", "nope.toml"), "config file not found", "nope.toml")
    assert not (tmp_path / "nope.toml").exists()


def test_toml_syntax_error_exits_2_with_line(run_cli, write_config):
    path = write_config("seed = 1\n[flash\n")
    _assert_one_line_error(run_cli("run", path), "test.toml:2:")


def test_missing_trace_file_exits_2(run_cli, write_config):
    config = small_config()
    config["flows"] = [{"kind": "trace", "path": "missing.trace"}]
    path = write_config(config)
    _assert_one_line_error(run_cli("run", path), "flows[0].path", "missing.trace")


def test_trace_with_four_columns_exits_2_with_file_and_line(run_cli, write_config, tmp_path):
    (tmp_path / "bad.trace").write_text("0 0 0 8 1\n1000 0 8 8 0\n2000 0 16 8\n")
    config = small_config()
    config["flows"] = [{"kind": "trace", "path": "bad.trace"}]
    path = write_config(config)
    _assert_one_line_error(run_cli("run", path), "bad.trace:3:", "found 4 columns")


def test_bundled_mqsim_example_runs(run_cli, tmp_path):
    example = REPO_ROOT / "examples" / "mqsim-default.toml"
    proc = run_cli(
        "run",
        example,
        "--out",
        tmp_path / "out",
        "--set",
        "flows.0.requests=2000",
        "--set",
        "flows.1.requests=500",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [(f["name"], f["requests"]) for f in data["flows"]] == [
        ("reader", 2000),
        ("writer", 500),
    ]
    assert data["device"]["reads"]["count"] == 2000
    assert data["device"]["writes"]["count"] == 500
    assert data["config"]["flash"]["channels"] == 8
    assert "reader" in proc.stdout and "writer" in proc.stdout


@pytest.mark.skipif(not MQSIM_TRACE.exists(), reason=f"MQSim trace not found at {MQSIM_TRACE}")
def test_mqsim_trace_runs_from_the_cli(run_cli, write_config, tmp_path):
    path = write_config({"flows": [{"kind": "trace", "path": str(MQSIM_TRACE)}]})
    proc = run_cli("run", path, "--out", tmp_path / "t")
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in MQSIM_TRACE.read_text().splitlines() if ln.strip()]
    assert json.loads((tmp_path / "t" / "results.json").read_text())["flows"][0]["requests"] == len(
        lines
    )
