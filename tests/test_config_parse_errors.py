"""How a config reaches the core (issue 12, F02-F04): a section written as an array, NaN or
infinity, and an enum given the wrong type are errors naming the key and what belongs there,
whichever way the config comes in (file, --set override, dict)."""

from __future__ import annotations

import re

import pytest
import ssdlab
from conftest import REPO_ROOT, small_config
from ssdlab import ConfigError, load_config

FINDINGS = REPO_ROOT / "tests/reliability/corpus/findings"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "F02-section-as-array.toml",
            "flash: expected a table ([flash] and its keys, or flash = { key = value, ... }), "
            "got an array",
        ),
        (
            "F03-nan-unclear.toml",
            "ftl.over_provisioning: nan is not a number; expected a finite number like 0.07",
        ),
        (
            "F04-enum-wrong-type.toml",
            'host.interface: expected one of "nvme", "sata", "ufs", "open_channel", '
            "got the integer 3",
        ),
    ],
)
def test_findings_are_errors_naming_the_key(run_cli, tmp_path, name, expected):
    proc = run_cli("run", FINDINGS / name, "--out", tmp_path / "out")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    # The file, the line that holds the key, then the key and what is wrong with it.
    assert re.search(rf"{re.escape(name)}:\d+: {re.escape(expected)}", proc.stderr), proc.stderr
    assert "Traceback" not in proc.stderr
    assert "not valid JSON" not in proc.stderr
    assert not (tmp_path / "out" / "results.json").exists()


def test_a_section_as_an_array_is_refused_not_read_positionally():
    config = small_config()
    config["host"] = ["sata"]
    with pytest.raises(ConfigError, match=r"^host: expected a table \(\[host\]"):
        ssdlab.simulate(config)


def test_an_array_of_tables_for_a_section_gets_a_hint(write_config, config):
    path = write_config(
        "[[flash]]\nchannels = 2\n[[flows]]\nqueue_depth = 1\nrequests = 10\n", "aot.toml"
    )
    with pytest.raises(ConfigError) as info:
        ssdlab.simulate(path)
    message = str(info.value)
    assert "flash: expected a table ([flash]" in message
    assert "array of tables" in message
    assert "u32" not in message


@pytest.mark.parametrize(
    ("value", "shown", "what"),
    [
        (float("nan"), "nan", "is not a number"),
        (float("inf"), "inf", "is not a finite number"),
        (float("-inf"), "-inf", "is not a finite number"),
    ],
)
def test_non_finite_numbers_in_a_dict_name_the_key(value, shown, what):
    config = small_config()
    config["ftl"]["gc_threshold"] = value
    with pytest.raises(ConfigError) as info:
        ssdlab.simulate(config)
    assert str(info.value) == (
        f"ftl.gc_threshold: {shown} {what}; expected a finite number like 0.05"
    )


def test_nan_in_an_override_names_the_key(run_cli, write_config, config, tmp_path):
    path = write_config(config)
    proc = run_cli("run", path, "--set", "flows.0.read_fraction=nan", "--out", tmp_path / "o")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "flows[0].read_fraction: nan is not a number; expected a finite number" in proc.stderr


def test_nan_in_a_trace_option_names_the_flow(tmp_path):
    corpus = REPO_ROOT / "tests/reliability/corpus/trace-unclear"
    for path in sorted(corpus.glob("*opt_time_scale_nan.toml")):
        with pytest.raises(ConfigError) as info:
            ssdlab.simulate(path)
        assert "flows[0].time_scale: nan is not a number" in str(info.value), path


def test_an_enum_given_a_number_lists_its_values():
    config = small_config()
    config["ftl"]["gc_policy"] = 2
    with pytest.raises(ConfigError) as info:
        ssdlab.simulate(config)
    message = str(info.value)
    assert message.startswith('ftl.gc_policy: expected one of "greedy", "random"')
    assert message.endswith("got the integer 2")


def test_a_folder_as_config_says_so(tmp_path):
    with pytest.raises(ConfigError, match=r"is a folder; expected a TOML config file"):
        load_config(tmp_path)
