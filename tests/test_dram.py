"""The banked DRAM model from Python and the CLI: results.json gains ``dram`` (and the DRAM's
energy breakdown), the pydantic models read it, and bad values name their field."""

from __future__ import annotations

import json

import pytest
from conftest import small_config
from ssdlab import ConfigError, Results, simulate

DDR4 = {
    "dram_data_rate": "2400MT/s",
    "dram_burst_bytes": 8,
    "dram_trcd": "13.32ns",
    "dram_tcl": "13.32ns",
    "dram_trp": "13.32ns",
}


def _banked(policy: str = "open-page") -> dict:
    config = small_config(
        read_fraction=0.5, address="sequential", request_size="2KiB", alignment="2KiB"
    )
    config["cache"] = dict(DDR4)
    config["dram"] = {"model": "banked", "page_policy": policy}
    config["power"] = {"enabled": True}
    return config


def test_the_default_serial_dram_writes_no_dram_section():
    r = simulate(small_config())
    assert r.dram is None
    assert "dram" not in r.to_dict()
    assert r.energy is None


def test_banked_dram_statistics_and_energy_reach_python():
    r = simulate(_banked())
    d = r.dram
    assert d is not None and d.model == "banked" and d.page_policy == "open-page"
    # Sequential 2 KiB pages through 8 KiB rows: most buffer accesses find their row open.
    assert 0.0 < d.row_hit_rate <= 1.0
    assert d.accesses.cmt >= 1000 and d.accesses.buffer >= 1000 and d.accesses.cache == 0
    residency = d.state_residency
    parts = [getattr(residency, k) for k in ("active", "active_standby", "precharge_standby")]
    parts += [residency.power_down, residency.self_refresh]
    assert sum(parts) == pytest.approx(1.0)
    e = r.energy
    assert e is not None and e.dram_breakdown_joules is not None
    breakdown = e.dram_breakdown_joules.model_dump()
    assert sum(breakdown.values()) == pytest.approx(e.by_component.dram)
    assert r.device.reads.latency_breakdown_us["cache_dram"] > 0
    # The document round-trips unchanged through the models.
    again = Results.from_json(r.to_json())
    assert again.to_dict() == r.to_dict()

    close = simulate(_banked("close-page"))
    assert close.dram.row_hits == 0
    assert close.dram.activates > d.activates


def test_cli_writes_the_dram_section(run_cli, write_config, tmp_path):
    path = write_config(_banked(), name="banked.toml")
    proc = run_cli("run", path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "results" / "banked" / "results.json").read_text())
    assert data["dram"]["page_policy"] == "open-page"
    assert set(data["dram"]["state_residency"]) == {
        "active",
        "active_standby",
        "precharge_standby",
        "power_down",
        "self_refresh",
    }
    assert data["energy"]["by_component"]["dram"] > 0
    assert "dram_breakdown_joules" in data["energy"]


@pytest.mark.parametrize(
    ("dram", "field"),
    [
        ({"model": "banked", "channels": 0}, "dram.channels"),
        ({"page_policy": "sometimes"}, "dram.page_policy"),
        ({"interleave": "3KiB"}, "dram.interleave"),
    ],
)
def test_bad_dram_values_name_their_field(dram, field):
    config = small_config()
    config["dram"] = dram
    with pytest.raises(ConfigError, match="^" + field.replace(".", r"\.")):
        simulate(config)
