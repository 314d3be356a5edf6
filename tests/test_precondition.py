"""Preconditioning from Python: the results.json `precondition` section for every mode, the
shorthand, agreement of `steady` with `simulate`, errors that name the field, determinism."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import ssdlab
from conftest import RESULTS_CONTRACT
from ssdlab import ConfigError

# What the issue promises in results.json under "precondition", and what ssdlab adds to it.
PRECONDITION_CONTRACT = {"mode", "wall_seconds", "valid_fraction_histogram", "free_blocks"}
PRECONDITION_CONTRACT |= {"cache_fill", "cmt_fill", "mapped_pages", "drive_writes"}
PRECONDITION_CONTRACT |= {"write_amplification", "sample_planes"}
MODES = ["steady", "fill", "none", "simulate"]
# Fields that measure the machine, not the simulation.
WALL_TIME_FIELDS = ("wall_seconds", "setup_wall_seconds")


def writer_config(
    mode: str = "steady",
    *,
    address: str = "uniform",
    op: float = 0.07,
    policy: str = "greedy",
    requests: int = 3000,
) -> dict[str, Any]:
    """8 planes of 96 blocks of 32 4 KiB pages (12 MiB of flash), one QD 4 random writer."""
    flow: dict[str, Any] = {
        "name": "w",
        "read_fraction": 0.0,
        "request_size": "4KiB",
        "alignment": "4KiB",
        "address": address,
        "queue_depth": 4,
        "requests": requests,
    }
    if address == "hotcold":
        flow |= {"hot_fraction": 0.2, "hot_traffic": 0.8}
    precondition: dict[str, Any] = {"mode": mode}
    if mode in ("steady", "simulate"):
        precondition["drive_writes"] = 2
    return {
        "seed": 3,
        "controller": {"scheduling": "out-of-order"},
        "ftl": {
            "ideal_mapping": True,
            "over_provisioning": op,
            "gc_policy": policy,
            "gc_threshold": 0.03,
            "dynamic_wear_leveling": False,
            "static_wear_leveling": False,
        },
        "flash": {
            "channels": 2,
            "chips_per_channel": 2,
            "dies_per_chip": 1,
            "planes_per_die": 2,
            "blocks_per_plane": 96,
            "pages_per_block": 32,
            "page_size": "4KiB",
        },
        "precondition": precondition,
        "flows": [flow],
    }


@pytest.mark.parametrize("mode", MODES)
def test_results_report_the_precondition_section_for_every_mode(mode):
    data = ssdlab.simulate(writer_config(mode)).to_dict()
    assert set(data) >= RESULTS_CONTRACT
    pre = data["precondition"]
    assert set(pre) >= PRECONDITION_CONTRACT, f"missing {PRECONDITION_CONTRACT - set(pre)}"
    assert pre["mode"] == mode
    assert pre["wall_seconds"] >= 0
    hist = pre["valid_fraction_histogram"]
    assert len(hist["edges"]) == len(hist["blocks"]) + 1 == 21
    assert hist["edges"][0] == 0.0 and hist["edges"][-1] == 1.0
    blocks = 8 * 96
    assert sum(hist["blocks"]) + pre["free_blocks"] == blocks, "every block is written or free"
    logical_pages = data["device"]["logical_capacity_bytes"] // 4096
    if mode in ("steady", "simulate"):
        # The writer's working set (the whole logical space) holds data, aged by GC.
        assert pre["mapped_pages"] == logical_pages
        assert pre["drive_writes"] == 2
        assert pre["write_amplification"] > 2, "aging at 7 % OP should collect garbage"
        assert pre["free_blocks"] < blocks // 10, (
            "steady state leaves free blocks near the threshold"
        )
    else:
        assert pre["mapped_pages"] == 0
        assert pre["free_blocks"] == blocks


def test_cli_writes_the_precondition_section_to_results_json(run_cli, write_config, tmp_path):
    proc = run_cli("run", write_config(writer_config("steady"), name="aged.toml"))
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "results" / "aged" / "results.json").read_text())
    assert set(data["precondition"]) >= PRECONDITION_CONTRACT
    assert data["precondition"]["mode"] == "steady"


def test_fill_maps_the_occupancy_from_page_zero():
    config = writer_config("fill")
    config["precondition"] |= {"occupancy": 0.5, "layout": "spread"}
    data = ssdlab.simulate(config).to_dict()
    logical_pages = data["device"]["logical_capacity_bytes"] // 4096
    assert data["precondition"]["mapped_pages"] == pytest.approx(logical_pages / 2, abs=8)


@pytest.mark.parametrize("mode", MODES)
def test_the_mode_may_be_given_alone(mode):
    config = writer_config(mode, requests=200)
    config["precondition"] = mode
    assert ssdlab.simulate(config).to_dict()["precondition"]["mode"] == mode


def test_steady_is_the_default():
    config = writer_config(requests=200)
    del config["precondition"]
    pre = ssdlab.simulate(config).to_dict()["precondition"]
    assert pre["mode"] == "steady"
    assert pre["drive_writes"] == 4


@pytest.mark.parametrize(
    ("address", "op", "policy"),
    [("uniform", 0.07, "greedy"), ("hotcold", 0.28, "greedy"), ("hotcold", 0.07, "fifo")],
)
def test_steady_agrees_with_simulated_aging(address, op, policy):
    """The run after `steady` sees the drive `simulate` leaves: WA and mean write latency within
    10 %."""
    kwargs = {"address": address, "op": op, "policy": policy, "requests": 8000}
    steady = ssdlab.simulate(writer_config("steady", **kwargs))
    simulated = ssdlab.simulate(writer_config("simulate", **kwargs))
    wa = steady.device.gc.write_amplification, simulated.device.gc.write_amplification
    latency = steady.device.writes.latency_us.mean, simulated.device.writes.latency_us.mean
    assert wa[0] == pytest.approx(wa[1], rel=0.10), f"WA steady {wa[0]:.2f}, simulate {wa[1]:.2f}"
    assert latency[0] == pytest.approx(latency[1], rel=0.10), (
        f"mean write latency steady {latency[0]:.0f} us, simulate {latency[1]:.0f} us"
    )
    # Both start in steady state: not a fresh drive's WA of 1.
    assert wa[0] > (5 if op < 0.1 else 1.5)


@pytest.mark.parametrize(
    ("precondition", "field", "reason"),
    [
        ("aged", "precondition", "aged"),
        ({"mode": "aged"}, "precondition.mode", "aged"),
        ({"mode": "steady", "layout": "spread"}, "precondition.layout", 'mode "fill" only'),
        ({"mode": "none", "occupancy": 0.5}, "precondition.occupancy", '"none"'),
        ({"drive_writes": -1}, "precondition.drive_writes", "between 0 and 1000"),
        (3, "precondition", "a mode"),
        ({"warm": True}, "precondition", "warm"),
    ],
    ids=[
        "unknown-mode",
        "unknown-mode-in-table",
        "layout-with-steady",
        "occupancy-with-none",
        "negative-drive-writes",
        "number",
        "unknown-key",
    ],
)
def test_bad_preconditioning_is_a_config_error_naming_the_field(precondition, field, reason):
    config = writer_config(requests=10)
    config["precondition"] = precondition
    with pytest.raises(ConfigError) as info:
        ssdlab.simulate(config)
    message = str(info.value)
    assert message.startswith(field), f"expected the error at {field}, got: {message}"
    assert reason in message, f"expected {reason!r} in: {message}"


def _without_wall_times(data: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    for key in WALL_TIME_FIELDS:
        data.pop(key, None)
    data["precondition"].pop("wall_seconds")
    return data


@pytest.mark.parametrize("mode", ["steady", "simulate"])
def test_same_config_gives_the_same_results_apart_from_wall_times(mode):
    config = writer_config(mode, address="hotcold", requests=2000)
    first = _without_wall_times(ssdlab.simulate(config).to_dict())
    second = _without_wall_times(ssdlab.simulate(config).to_dict())
    assert first == second
    config["seed"] = 4
    assert _without_wall_times(ssdlab.simulate(config).to_dict()) != first
