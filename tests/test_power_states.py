"""NVMe APST and Open-Channel 1.2 through the Python API and the CLI: the idle client example
reports its power states and pays the wake-ups, the power series carries the controller's
activity, Open-Channel 1.2 reports its geometry, and bad values are errors naming the field."""

from __future__ import annotations

import ssdlab
from conftest import REPO_ROOT
from ssdlab.cli import app
from typer.testing import CliRunner

APST = REPO_ROOT / "examples" / "client-idle-apst.toml"
OPEN_CHANNEL = REPO_ROOT / "examples" / "open-channel-ssd.toml"


def test_idle_client_sleeps_and_pays_the_wake_ups():
    on = ssdlab.simulate(APST, overrides=["flows.0.requests=40"])
    off = ssdlab.simulate(APST, overrides=["flows.0.requests=40", "power.apst.enabled=false"])
    ps = on.power_states
    assert ps is not None and off.power_states is None
    assert [s.name for s in ps.states] == ["PS3", "PS4"]
    assert ps.wakeups > 20 and ps.exit_wait_us_max <= 8000.0
    assert 0.5 < ps.low_power_fraction < 1.0
    assert on.device.reads.latency_us.mean > off.device.reads.latency_us.mean + 1000.0
    assert on.energy.total_joules < 0.5 * off.energy.total_joules
    assert on.to_dict()["power_states"]["wakeups"] == ps.wakeups
    # The time series carries the controller's activity per window.
    controller = on.series.controller
    assert len(controller.dram_busy_seconds) == len(on.series.start_seconds)


def test_open_channel_12_reports_its_geometry():
    short = ["flows.0.requests=2000", "flows.1.requests=500"]
    r = ssdlab.simulate(OPEN_CHANNEL, overrides=[*short, "host.open_channel.version=1.2"])
    g = r.open_channel.geometry
    assert g.version == "1.2" and g.planes_per_parallel_unit == 2
    assert g.ppa_format is not None and g.ppa_format.sector == (0, 4)
    r2 = ssdlab.simulate(OPEN_CHANNEL, overrides=short)
    assert r2.open_channel.geometry.version == "2.0" and r2.open_channel.geometry.ppa_format is None


def test_cli_names_bad_apst_and_open_channel_fields(tmp_path):
    runner = CliRunner()
    for config, setting, field in [
        (APST, "host.interface=sata", "power.apst.enabled"),
        (OPEN_CHANNEL, "host.open_channel.version=3.0", "host.open_channel.version"),
    ]:
        result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path), "--set", setting])
        assert result.exit_code != 0
        assert field in result.output, result.output
