"""MQSim's ssdconfig.xml + workload.xml: import, TOML export and runs of the XML pair."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import ssdlab
from conftest import REPO_ROOT
from ssdlab.config import dump_toml, load_config

SHARED = (REPO_ROOT / "../shared/mqsim").resolve()
SSDCONFIG = SHARED / "ssdconfig.xml"
WORKLOAD = SHARED / "workload.xml"

needs_samples = pytest.mark.skipif(
    not (SSDCONFIG.exists() and WORKLOAD.exists()),
    reason=f"MQSim's sample files are not in {SHARED}",
)

# Keeps the XML runs fast: MQSim's scenarios run 10 simulated seconds on a 512 GiB device.
FAST = ["--set", "run.max_simulated_time=20ms", "--set", "flash.blocks_per_plane=256"]


@needs_samples
def test_the_sample_pair_gives_three_scenarios():
    scenarios = ssdlab.import_mqsim(SSDCONFIG, WORKLOAD)
    assert [s.index for s in scenarios] == [1, 2, 3]
    assert all(s.base_dir == SHARED for s in scenarios)
    first = scenarios[0].config
    assert first["flash"]["channels"] == 8
    assert first["flash"]["chips_per_channel"] == 4
    assert first["flash"]["page_size"] == "8KiB"
    assert first["ftl"]["gc_policy"] == "rga"
    writers = first["flows"]
    assert [f["read_fraction"] for f in writers] == [0.0, 0.0]
    assert [f["queue_depth"] for f in writers] == [16, 2]
    trace = scenarios[2].config["flows"]
    assert len(trace) == 1
    assert trace[0]["kind"] == "trace"
    assert trace[0]["path"] == "traces/tpcc-small.trace"
    # What ssdlab does not model is named, with its value, in every scenario.
    for s in scenarios:
        # Erase suspension is mapped; only the write-suspends-erase threshold has no counterpart.
        assert s.config["flash"]["suspension"] == "erase"
        assert s.config["flash"]["timing"]["suspend_erase"] == "700us"
        assert any(w.startswith("Preferred_suspend_erase_time_for_write") for w in s.warnings)
        if "cache" not in s.config:
            assert any("Data_Cache_Capacity" in w for w in s.warnings), s.warnings


@needs_samples
def test_a_misspelt_tag_is_warned_about_by_name(tmp_path):
    device = tmp_path / "ssdconfig.xml"
    device.write_text(
        SSDCONFIG.read_text().replace(
            "<CMT_Capacity>2097152</CMT_Capacity>", "<CMT_Capacty>1</CMT_Capacty>"
        )
    )
    scenarios = ssdlab.import_mqsim(device, WORKLOAD)
    warning = next(w for w in scenarios[0].warnings if "CMT_Capacty" in w)
    assert "unknown tag CMT_Capacty" in warning
    assert "did you mean CMT_Capacity?" in warning
    assert str(device) in warning


@needs_samples
def test_a_non_numeric_value_is_an_error_naming_file_tag_and_value(tmp_path):
    workload = tmp_path / "workload.xml"
    text = WORKLOAD.read_text().replace(
        "<Average_Request_Size>8</Average_Request_Size>",
        "<Average_Request_Size>eight</Average_Request_Size>",
        1,
    )
    workload.write_text(text)
    with pytest.raises(ssdlab.ConfigError) as error:
        ssdlab.import_mqsim(SSDCONFIG, workload)
    message = str(error.value)
    assert str(workload) in message
    assert "Average_Request_Size" in message
    assert '"eight"' in message


def test_missing_files_are_errors_and_nothing_is_created(tmp_path, run_cli):
    missing = tmp_path / "nothing.xml"
    with pytest.raises(FileNotFoundError, match=r"nothing\.xml"):
        ssdlab.import_mqsim(missing, tmp_path / "workload.xml")
    for args in (
        ("run", missing, tmp_path / "workload.xml"),
        ("import-mqsim", missing, tmp_path / "workload.xml", "-o", tmp_path / "out.toml"),
    ):
        proc = run_cli(*args)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "not found" in proc.stderr and "nothing.xml" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "a file was created"


def test_a_run_with_one_xml_file_says_both_are_needed(run_cli, tmp_path):
    proc = run_cli("run", tmp_path / "ssdconfig.xml")
    assert proc.returncode == 2
    assert "needs the device file and the workload file" in proc.stderr


@needs_samples
def test_run_the_xml_pair_writes_one_results_file_per_scenario(run_cli, tmp_path):
    proc = run_cli("run", SSDCONFIG, WORKLOAD, *FAST)
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "results" / "workload"
    for n in (1, 2, 3):
        assert f"scenario {n} of 3" in proc.stdout
        data = json.loads((folder / f"scenario-{n}" / "results.json").read_text())
        assert data["schema"] == "ssdlab.results/1"
        # The import's warnings follow the core's in results.json; the overrides are applied.
        assert any(w.startswith("Preferred_suspend_erase_time_for_write") for w in data["warnings"])
        assert data["config"]["run"]["max_simulated_time"] == "20ms"
        assert data["simulated_seconds"] < 0.1
    first = json.loads((folder / "scenario-1" / "results.json").read_text())
    assert [f["name"] for f in first["flows"]] == ["flow-0", "flow-1"]
    assert all(f["writes"]["count"] > 0 for f in first["flows"])
    trace = json.loads((folder / "scenario-3" / "results.json").read_text())
    assert trace["flows"][0]["requests"] > 0
    assert "warning: Preferred_suspend_erase_time_for_write" in proc.stdout
    # The first line says which model runs; results.json says it too.
    assert proc.stdout.splitlines()[0].startswith("model: ssdlab's default")
    assert first["model"] == {
        "compat": "default",
        "die_commands": "independent",
        "partial_page_transfer": False,
        "channel_arbitration": "in-order",
        "translation_pages_at_start": "mapped",
        "translation_write_back": "program",
        "reads_map_unwritten_pages": False,
        "translation_reads_first": False,
        "suspend_for_reads": True,
        "mapping_entry_sizes": "fixed",
        "gc_pacing": True,
        "destage": "background",
        "dram_serial_access_time": "per-row",
    }
    # MQSim never suspends, and its SIMPLE cache is not ssdlab's: the warnings say so.
    assert any("MQSim @7ec40e3 never suspends" in w for w in first["warnings"])


@needs_samples
def test_compat_mqsim_is_named_first_and_recorded(run_cli, tmp_path):
    proc = run_cli("run", SSDCONFIG, WORKLOAD, "--scenario", "2", "--set", "compat=mqsim", *FAST)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("model: MQSim-compatible")
    data = json.loads((tmp_path / "results/workload/scenario-2/results.json").read_text())
    assert data["config"]["compat"] == "mqsim", "the config as given"
    assert data["model"]["compat"] == "mqsim"
    assert data["model"]["die_commands"] == "one-per-chip", "as it ran"
    assert data["model"]["channel_arbitration"] == "data-out-first"
    assert data["model"]["gc_pacing"] is False, "MQSim's GC goes ahead of host writes"


@needs_samples
def test_a_simple_cache_is_not_called_advanced(tmp_path):
    device = tmp_path / "ssd.xml"
    device.write_text(SSDCONFIG.read_text().replace(">ADVANCED<", ">SIMPLE<"))
    scenarios = ssdlab.import_mqsim(device, WORKLOAD)
    warning = next(w for w in scenarios[0].warnings if w.startswith("Caching_Mechanism SIMPLE"))
    assert "ADVANCED one" not in warning and "writes dirty data back in the background" in warning


@needs_samples
def test_run_one_scenario_into_a_chosen_folder(run_cli, tmp_path):
    proc = run_cli("run", SSDCONFIG, WORKLOAD, "--out", "mq", "--scenario", "2", *FAST)
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in (tmp_path / "mq").iterdir()] == ["scenario-2"]
    proc = run_cli("run", SSDCONFIG, WORKLOAD, "--scenario", "4")
    assert proc.returncode == 2
    assert "scenarios 1 to 3" in proc.stderr


@needs_samples
def test_import_mqsim_writes_toml_that_runs_from_anywhere(run_cli, tmp_path):
    proc = run_cli("import-mqsim", SSDCONFIG, WORKLOAD, "-o", tmp_path / "out" / "mq.toml")
    assert proc.returncode == 0, proc.stderr
    paths = [tmp_path / "out" / f"mq-{n}.toml" for n in (1, 2, 3)]
    assert sorted((tmp_path / "out").iterdir()) == paths
    assert "warning: Preferred_suspend_erase_time_for_write" in proc.stdout
    scenarios = ssdlab.import_mqsim(SSDCONFIG, WORKLOAD)
    for path, scenario in zip(paths, scenarios, strict=True):
        text = path.read_text()
        assert text.startswith("# Imported by ssdlab import-mqsim")
        assert "# - Preferred_suspend_erase_time_for_write" in text
        written = load_config(path)
        for flow in written["flows"]:
            flow.pop("path", None)
        for flow in scenario.config["flows"]:
            flow.pop("path", None)
        assert written == scenario.config
    # The trace path is absolute (the trace is not under out/), so the file runs from any folder.
    trace_flow = load_config(paths[2])["flows"][0]
    assert Path(trace_flow["path"]).is_absolute()
    assert Path(trace_flow["path"]) == SHARED / "traces" / "tpcc-small.trace"
    results = ssdlab.simulate(
        paths[2], overrides=["run.max_simulated_time=5ms", "flash.blocks_per_plane=256"]
    )
    assert results.flows[0].requests > 0


@needs_samples
def test_one_scenario_goes_to_out_itself_and_traces_under_out_stay_relative(tmp_path, run_cli):
    # A copy of the trace scenario next to its trace: the TOML lands beside them.
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "tpcc-small.trace").write_bytes(
        (SHARED / "traces" / "tpcc-small.trace").read_bytes()
    )
    text = WORKLOAD.read_text()
    start, end = text.index("<IO_Scenario>"), text.rindex("<IO_Scenario>")
    (tmp_path / "trace.xml").write_text(text[:start] + text[end:])
    proc = run_cli("import-mqsim", SSDCONFIG, "trace.xml", "-o", "trace.toml")
    assert proc.returncode == 0, proc.stderr
    assert load_config(tmp_path / "trace.toml")["flows"][0]["path"] == "traces/tpcc-small.trace"


def test_dump_toml_round_trips():
    config = {
        "seed": 7,
        "host": {"pcie_lanes": 4, "wrr_weights": {"high": 4, "medium": 2, "low": 1}},
        "flash": {
            "channels": 2,
            "timing": {"read": {"lsb": "75us", "msb": "90us"}, "erase": "3.8ms"},
        },
        "ftl": {"over_provisioning": 0.125, "ideal_mapping": False},
        "flows": [
            {
                "name": 'quote"d',
                "request_size": {"mean": "8KiB", "stdev": "1KiB"},
                "queue_depth": 4,
            },
            {"kind": "trace", "path": "a b/t.trace", "time_scale": 1e-05},
        ],
    }
    text = dump_toml(config, ["first line", "", "second"])
    assert text.startswith("# first line\n#\n# second\n")
    assert tomllib.loads(text) == config
    assert (
        text.index("[host]") < text.index("[ftl]") < text.index("[flash]") < text.index("[[flows]]")
    )
    # tomli-w writes nested tables as sections, in the documented key order.
    assert '[flash.timing.read]\nlsb = "75us"\nmsb = "90us"\n' in text


@needs_samples
def test_alone_works_per_scenario_of_an_xml_run(run_cli, tmp_path):
    proc = run_cli("run", SSDCONFIG, WORKLOAD, "--scenario", "1", "--alone", *FAST)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(
        (tmp_path / "results" / "workload" / "scenario-1" / "results.json").read_text()
    )
    assert set(data["fairness"]["slowdown"]) == {"flow-0", "flow-1"}
    assert 0 < data["fairness"]["fairness"] <= 1


@needs_samples
def test_a_value_ssdlab_refuses_is_a_warning_an_override_can_fix(run_cli, tmp_path):
    device = tmp_path / "ssdconfig.xml"
    device.write_text(
        SSDCONFIG.read_text().replace(
            "<Overprovisioning_Ratio>0.07<", "<Overprovisioning_Ratio>0.02<"
        )
    )
    scenarios = ssdlab.import_mqsim(device, WORKLOAD)
    assert any(w.startswith("ssdlab refuses scenario 3 as imported") for w in scenarios[2].warnings)
    proc = run_cli("run", device, WORKLOAD, "--scenario", "3", *FAST)
    assert proc.returncode == 2
    assert (
        proc.stderr.startswith("error: scenario 3: ftl.") and proc.stderr.count("scenario 3") == 1
    )
    fixed = run_cli(
        "run", device, WORKLOAD, "--scenario", "3", "--set", "ftl.over_provisioning=0.07", *FAST
    )
    assert fixed.returncode == 0, fixed.stderr
