"""Shared fixtures: a small, fast device and helpers to write configs and run the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
MQSIM_TRACE = (REPO_ROOT / "../shared/mqsim/traces/wsrch-small.trace").resolve()

# Top-level names of results.json that later tools rely on (schema ssdlab.results/1).
RESULTS_CONTRACT = {
    "schema",
    "version",
    "seed",
    "simulated_seconds",
    "wall_seconds",
    "events",
    "device",
    "flows",
    "warnings",
    "config",
}

SMALL_FLASH = {
    "channels": 2,
    "chips_per_channel": 2,
    "dies_per_chip": 1,
    "planes_per_die": 2,
    "blocks_per_plane": 64,
    "pages_per_block": 64,
}


def small_config(**flow: Any) -> dict[str, Any]:
    """A 2x2x1x2 device (GC needs 12.5 % spare on it) with one random 4 KiB reader."""
    reader = {"name": "r", "read_fraction": 1.0, "request_size": "4KiB", "queue_depth": 4}
    reader["requests"] = 1000
    reader.update(flow)
    return {
        "seed": 1,
        "ftl": {"over_provisioning": 0.125},
        "flash": dict(SMALL_FLASH),
        "flows": [reader],
    }


def emulating_config(**flow: Any) -> dict[str, Any]:
    """The small device cut to 16 MiB, a random reader/writer of partial pages, data emulated."""
    spec = {"read_fraction": 0.4, "request_size": "6KiB", "requests": 6000, "queue_depth": 1}
    spec.update(flow)
    config = small_config(**spec)
    config["flash"].update({"blocks_per_plane": 32, "pages_per_block": 16})
    config["ftl"]["over_provisioning"] = 0.15
    config["precondition"] = "none"
    config["data"] = {"emulate": True}
    return config


def worn_out_config(**ftl: Any) -> dict[str, Any]:
    """One plane of 64 blocks whose blocks retire after three P/E cycles, 90 % full and then
    asked for 200,000 random writes: it wears out (blocks retired until a plane has none to
    write to) within a second. `ftl` adds FTL settings (a mapping family, say)."""
    flash = {"channels": 1, "chips_per_channel": 1, "dies_per_chip": 1, "planes_per_die": 1}
    flash.update({"blocks_per_plane": 64, "pages_per_block": 32, "page_size": "4KiB"})
    return {
        "seed": 5,
        "flash": flash,
        "ftl": {"over_provisioning": 0.25, "pe_cycle_limit": 3, **ftl},
        "precondition": {"mode": "fill", "occupancy": 0.9},
        "flows": [{"address": "uniform", "requests": 200_000, "queue_depth": 8}],
    }


@pytest.fixture
def config() -> dict[str, Any]:
    return small_config()


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(type(value))


def to_toml(doc: dict[str, Any]) -> str:
    """Enough of a TOML writer for test configs: scalars, sections and arrays of tables."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict | list)]
    for key, value in doc.items():
        if isinstance(value, dict):
            lines.append(f"\n[{key}]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in value.items()]
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for item in value:
                lines.append(f"\n[[{key}]]")
                lines += [f"{k} = {_toml_value(v)}" for k, v in item.items()]
        elif isinstance(value, list):
            lines.insert(0, f"{key} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def write_config(tmp_path: Path):
    """Writes a config dict (or raw TOML text) to tmp_path/<name> and returns the path."""

    def write(doc: dict[str, Any] | str, name: str = "test.toml") -> Path:
        path = tmp_path / name
        path.write_text(doc if isinstance(doc, str) else to_toml(doc), encoding="utf-8")
        return path

    return write


@pytest.fixture
def run_cli(tmp_path: Path):
    """Runs `ssdlab ...` in a fresh interpreter, as a user would, from tmp_path."""

    def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ssdlab", *map(str, args)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )

    return run


def run_script(name: str, *args: str | Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """Runs the repository's `scripts/NAME` (a `make bench` script) with this interpreter."""
    return subprocess.run(
        [sys.executable, REPO_ROOT / "scripts" / name, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
