"""MQSim import of damaged or absurd files (issue 12: F06, F07 and the fuzzing corpus): errors
naming the file, line and tag, exit status 2, never an abort or a traceback."""

from __future__ import annotations

import json
import shutil

import pytest
import ssdlab
from conftest import REPO_ROOT

CORPUS = REPO_ROOT / "tests/reliability/corpus"


def _pairs(folder: str) -> list:
    return sorted(p for p in (CORPUS / folder).iterdir() if p.is_dir())


@pytest.mark.parametrize(
    ("pair", "tag", "value"),
    [
        ("findings/F06-mqsim-abort", "Flash_Channel_Count", 1099511627776),
        ("findings/F07-mqsim-u64-wrap-panic", "Flash_Channel_Count", 4294967296),
        ("overflow", "Flash_Channel_Count", 4294967296),
    ],
)
def test_geometry_beyond_32_bits_is_an_error_not_a_crash(run_cli, tmp_path, pair, tag, value):
    folder = tmp_path / "pair"
    shutil.copytree(CORPUS / pair, folder)
    shutil.copytree(REPO_ROOT / "tests/reliability/traces", folder / "traces")
    proc = run_cli(
        "run", folder / "ssdconfig.xml", folder / "workload.xml", "--out", tmp_path / "o"
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"ssdconfig.xml:44: {tag}: {value} is more than ssdlab supports" in proc.stderr
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr


@pytest.mark.parametrize("pair", _pairs("crash"), ids=lambda p: p.name)
def test_crash_corpus_is_refused(pair):
    with pytest.raises(ssdlab.ConfigError, match=r"ssdconfig\.xml:\d+: \w+: \d+ is more than"):
        ssdlab.import_mqsim(pair / "ssdconfig.xml", pair / "workload.xml")


@pytest.mark.parametrize("pair", _pairs("mqsim-silent"), ids=lambda p: p.name)
def test_nul_bytes_are_an_error_with_file_and_line(pair):
    meta = json.loads((pair / "OUTCOME.txt").read_text())["meta"]
    damaged = pair / ("ssdconfig.xml" if meta["file"] == "dev" else "workload.xml")
    data = damaged.read_bytes()
    line = data[: data.index(b"\0")].count(b"\n") + 1
    with pytest.raises(ssdlab.ConfigError) as info:
        ssdlab.import_mqsim(pair / "ssdconfig.xml", pair / "workload.xml")
    assert str(info.value).startswith(f"{damaged}:{line}: malformed XML: a NUL byte")


@pytest.mark.parametrize("pair", _pairs("mqsim-unclear"), ids=lambda p: p.name)
def test_an_empty_file_says_which_element_it_should_hold(pair):
    with pytest.raises(ssdlab.ConfigError) as info:
        ssdlab.import_mqsim(pair / "ssdconfig.xml", pair / "workload.xml")
    message = str(info.value)
    if pair.name.endswith("empty_device"):
        assert message == (
            f"{pair / 'ssdconfig.xml'}: the file is empty: expected an MQSim device file with an "
            "<Execution_Parameter_Set> element"
        )
    else:
        assert message == (
            f"{pair / 'workload.xml'}: the file is empty: expected an MQSim workload file with an "
            "<MQSim_IO_Scenarios> element"
        )


def test_a_folder_says_it_is_a_folder(run_cli, tmp_path):
    pair = CORPUS / "findings/F06-mqsim-abort"
    with pytest.raises(ssdlab.ConfigError, match=r"is a folder; expected an MQSim device file"):
        ssdlab.import_mqsim(pair, pair / "workload.xml")
    with pytest.raises(ssdlab.ConfigError, match=r"is a folder; expected an MQSim workload file"):
        ssdlab.import_mqsim(pair / "ssdconfig.xml", tmp_path)
