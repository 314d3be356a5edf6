"""Every config in examples/ loads and runs (briefly), and the gallery lists every one of them."""

from __future__ import annotations

import re

import pytest
import ssdlab
from conftest import REPO_ROOT
from ssdlab.sweep import load_sweep

EXAMPLES = REPO_ROOT / "examples"
CONFIGS = sorted(p for p in EXAMPLES.glob("*.toml") if not p.name.startswith("sweep-"))
SWEEPS = sorted(EXAMPLES.glob("sweep-*.toml"))
REQUESTS_PER_FLOW = 300


def test_there_are_examples():
    assert len(CONFIGS) >= 6 and SWEEPS


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_example_config_runs(path):
    flows = ssdlab.load_config(path).get("flows", [])
    assert flows, f"{path.name} has no flows"
    overrides = [f"flows.{i}.requests={REQUESTS_PER_FLOW}" for i in range(len(flows))]
    results = ssdlab.simulate(path, overrides=overrides)
    done = results.device.reads.count + results.device.writes.count
    # A trace flow may end sooner (its trace runs out, or its own limits stop it).
    assert 0 < done <= REQUESTS_PER_FLOW * len(flows)
    assert results.device.iops > 0


@pytest.mark.parametrize("path", SWEEPS, ids=lambda p: p.stem)
def test_example_sweep_loads_and_its_first_point_runs(path):
    sweep = load_sweep(path)
    assert sweep.points and sweep.axes
    config = sweep.points[0].config
    overrides = [f"flows.{i}.requests={REQUESTS_PER_FLOW}" for i in range(len(config["flows"]))]
    results = ssdlab.simulate(config, overrides=overrides, base_dir=sweep.base_dir)
    assert results.device.iops > 0


def test_queue_depth_sweep_covers_1_to_256():
    sweep = load_sweep(EXAMPLES / "sweep-queue-depth.toml")
    assert [p.values["flows.0.queue_depth"] for p in sweep.points] == [2**i for i in range(9)]


def test_gallery_table_lists_every_example():
    table = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"`([\w.-]+\.toml)`", table))
    missing = {p.name for p in [*CONFIGS, *SWEEPS]} - listed
    assert not missing, f"examples/README.md does not list {sorted(missing)}"
