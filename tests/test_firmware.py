"""The computation complex through the Python API and the CLI: the Amber Intel 750 example
reports firmware and energy, a slower core clock shows in the latency, and a bad firmware key is
an error naming the field."""

from __future__ import annotations

import json

import pytest
import ssdlab
from conftest import REPO_ROOT
from ssdlab.cli import app
from typer.testing import CliRunner

AMBER = REPO_ROOT / "examples" / "amber-intel750.toml"
SHORT = ["flows.0.requests=3000", "flows.1.requests=600"]


def test_amber_example_reports_firmware_and_energy():
    results = ssdlab.simulate(AMBER, overrides=SHORT)
    fw = results.firmware
    assert fw is not None and fw.cores == 3
    assert len(fw.core_utilisation) == 3
    assert all(0.0 <= u <= 1.0 for u in fw.core_utilisation)
    assert fw.core_utilisation[0] > 0.0, "the HIL core parses every command"
    assert set(fw.instructions_by_class) == {"branch", "load_store", "arithmetic", "other"}
    assert sum(fw.instructions_by_class.values()) == sum(fw.instructions_by_step.values())
    assert fw.executions_by_step["hil"] == 3600
    # NVMe: two doorbells, a command fetch and a completion per command; 4 KiB is one PRP entry.
    assert fw.work_units["nvme_doorbell"] == 7200
    assert fw.work_units["nvme_prp_entry"] == 3600
    assert fw.work_units["ufs_upiu"] == 0
    assert sum(fw.instructions_by_work.values()) < sum(fw.instructions_by_step.values())
    assert 0.0 < fw.latency_share < 1.0
    energy = results.energy
    assert energy is not None
    parts = energy.by_component
    assert energy.total_joules == pytest.approx(parts.nand + parts.dram + parts.cpu + parts.pcie)
    document = results.to_dict()
    assert document["firmware"]["core_utilisation"] == fw.core_utilisation
    assert set(document["energy"]["by_component"]) == {"nand", "dram", "cpu", "pcie"}


def test_a_slower_core_clock_raises_the_firmware_share_of_latency():
    fast = ssdlab.simulate(AMBER, overrides=SHORT)
    slow = ssdlab.simulate(AMBER, overrides=[*SHORT, "firmware.clock=40MHz"])
    assert slow.firmware.step_us["hil"] == pytest.approx(10 * fast.firmware.step_us["hil"])
    assert slow.firmware.latency_share > fast.firmware.latency_share
    fast_firmware = fast.flows[0].latency_breakdown_us["firmware"]
    assert slow.flows[0].latency_breakdown_us["firmware"] > 5 * fast_firmware


def test_firmware_off_leaves_no_key(tmp_path):
    results = ssdlab.simulate(AMBER, overrides=[*SHORT, "firmware.enabled=false"])
    assert results.firmware is None
    assert "firmware" not in results.to_dict()


def test_cli_names_a_bad_firmware_field(tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        app, ["run", str(AMBER), "--out", str(tmp_path), "--set", "firmware.hil.core=7"]
    )
    assert result.exit_code != 0
    assert "firmware.hil.core" in result.output


def test_cli_writes_firmware_to_results_json(tmp_path):
    runner = CliRunner()
    args = ["run", str(AMBER), "--out", str(tmp_path)]
    for s in SHORT:
        args += ["--set", s]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "results.json").read_text())
    assert len(document["firmware"]["core_utilisation"]) == 3
    assert document["energy"]["by_component"]["cpu"] > 0


def test_validation_study_slower_clocks_and_fewer_cores_cost_iops():
    """validation/firmware_cores.py in small: IOPS rise with the clock until the flash caps them,
    and two cores pipeline the HIL against the rest (more IOPS than one at a slow clock)."""
    import sys

    sys.path.insert(0, str(REPO_ROOT / "validation"))
    import firmware_cores

    rows = firmware_cores.study(requests=2000)
    by = {(r["cores"], r["clock_mhz"]): r for r in rows}
    for cores in firmware_cores.CORES:
        iops = [by[(cores, mhz)]["iops"] for mhz in firmware_cores.CLOCKS_MHZ]
        assert iops == sorted(iops), f"{cores} cores: {iops}"
        shares = [by[(cores, mhz)]["firmware_share"] for mhz in firmware_cores.CLOCKS_MHZ]
        assert shares == sorted(shares, reverse=True), f"{cores} cores: {shares}"
    # The HIL is 580 of an NVMe 4 KiB read's 700 instructions: a second core takes the rest.
    assert by[(2, 50)]["iops"] > 1.15 * by[(1, 50)]["iops"]
    assert by[(1, 50)]["busiest_core_utilisation"] > 0.95


def test_validation_study_nvme_costs_several_times_ufs_per_request():
    """validation/firmware_work.py in small: the same 4 KiB requests cost NVMe's firmware about
    2-3x UFS's (a 64 KiB read, 16 pages of per-page FTL work on the 4 KiB-page drive, still more
    than UFS), loads and stores lead every run, and CMT misses multiply the FTL's work."""
    import sys

    sys.path.insert(0, str(REPO_ROOT / "validation"))
    import firmware_work

    rows = firmware_work.study(requests=1000)
    by = {(r["workload"], r["interface"]): r for r in rows["interfaces"]}
    for workload, _, _ in firmware_work.WORKLOADS:
        nvme, ufs, sata = (
            by[(workload, i)]["instructions_per_request"] for i in ("nvme", "ufs", "sata")
        )
        assert nvme > (1.8 if workload.startswith("4 KiB") else 1.2) * ufs, workload
        assert nvme > sata and sata > 0.9 * ufs, workload
    assert all(r["load_store_share"] > 0.5 for r in rows["interfaces"])
    ideal, small = rows["cmt"]
    assert small["cmt_hit_rate"] < 0.05 and ideal["cmt_hit_rate"] == 1.0
    assert small["ftl_per_request"] > 4 * ideal["ftl_per_request"]
