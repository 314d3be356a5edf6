"""Loading TOML configs and applying key=value overrides."""

from __future__ import annotations

import pytest
import ssdlab
from ssdlab import ConfigError, TraceError, apply_overrides, load_config


def test_errors_are_value_errors_exported_at_top_level():
    assert issubclass(ConfigError, ValueError)
    assert issubclass(TraceError, ValueError)
    assert ConfigError is ssdlab._core.ConfigError
    assert TraceError is ssdlab._core.TraceError


def test_load_config_reads_toml(write_config, config):
    path = write_config(config)
    assert load_config(path) == config
    assert load_config(str(path)) == config


def test_toml_syntax_error_names_file_and_line(write_config):
    path = write_config("seed = 1\n\n[flash]\nchannels = = 4\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}:4:")
    assert "invalid TOML" in message


def test_missing_config_file_is_a_clear_error_and_nothing_is_created(tmp_path):
    path = tmp_path / "absent.toml"
    with pytest.raises(FileNotFoundError, match=r"config file not found: .*absent\.toml"):
        load_config(path)
    assert not path.exists()


def test_overrides_parse_values_as_toml():
    base = {"flash": {"channels": 8}, "flows": [{"queue_depth": 1}, {"queue_depth": 2}]}
    out = apply_overrides(
        base,
        [
            "flash.channels=4",
            "flows.1.queue_depth = 32",
            "flash.timing.read=75us",
            'flash.timing.program="750us"',
            "ftl.over_provisioning=0.2",
            "flows.0.name=reader",
            "host.fast=true",
        ],
    )
    assert out["flash"]["channels"] == 4
    assert out["flows"][1]["queue_depth"] == 32
    assert out["flows"][0] == {"queue_depth": 1, "name": "reader"}
    assert out["flash"]["timing"] == {"read": "75us", "program": "750us"}
    assert out["ftl"]["over_provisioning"] == 0.2
    assert out["host"]["fast"] is True
    # The input is left alone.
    assert base == {"flash": {"channels": 8}, "flows": [{"queue_depth": 1}, {"queue_depth": 2}]}


def test_override_can_replace_a_whole_list_or_table():
    out = apply_overrides({"flows": [{"a": 1}]}, ["flows=[{b = 2}]", "flash={channels = 2}"])
    assert out == {"flows": [{"b": 2}], "flash": {"channels": 2}}


@pytest.mark.parametrize(
    ("override", "reason"),
    [
        ("flash.channels", "expected key=value"),
        ("flash.channels=", "missing value"),
        ("=4", "dotted key"),
        ("flash..channels=4", "dotted key"),
        ("flows.2.queue_depth=4", "index 2 is out of range"),
        ("flows.x.queue_depth=4", "expected a numeric index"),
        ("precondition.0.occupancy=0.5", "index 0 is out of range"),
        ("seed.value=3", "is a value"),
    ],
)
def test_bad_overrides_name_the_override(override, reason):
    base = {"seed": 1, "flows": [{"queue_depth": 1}]}
    with pytest.raises(ConfigError) as info:
        apply_overrides(base, [override])
    assert f"override '{override}'" in str(info.value)
    assert reason in str(info.value)
