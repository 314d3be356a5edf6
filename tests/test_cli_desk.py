"""The command line as a new user meets it (issue 19, item 4): defaults in --help, errors that
blame what the user typed (the --set or the file's line) with a "did you mean", --json and
--quiet, and `precondition.mode=none` from the command line."""

from __future__ import annotations

import json

import pytest
from conftest import small_config


def _error(proc) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("run", ["[default: results/<config name>]", "[default folder: results/<workload"]),
        ("serve", ["[default: results/serve-<name>]", "[default: the default device]"]),
        ("import-mqsim", ["[default: <workload name>.toml]"]),
        ("sweep", ["[default: results/<sweep name>]", "[default: all cores]"]),
        ("report", ["[default: iops, read_p99_us, write_p99_us,"]),
    ],
)
def test_help_shows_every_default(run_cli, command, shown):
    proc = run_cli(command, "--help")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.replace("│", " ").split())
    for fragment in shown:
        assert fragment in text, text


def test_set_with_an_unknown_key_blames_the_command_line(run_cli, write_config):
    path = write_config(small_config())
    line = _error(run_cli("run", path, "--set", "flash.chanels=4"))
    assert line.startswith("error: --set flash.chanels=4: flash.chanels: unknown key `chanels`")
    assert "(did you mean `channels`?)" in line
    assert str(path) not in line


def test_set_with_a_bracketed_index_blames_the_command_line(run_cli, write_config):
    path = write_config(small_config())
    line = _error(run_cli("run", path, "--set", "flows[0].read_fraction=0.5"))
    assert line.startswith("error: --set flows[0].read_fraction=0.5: flows[0]: unknown key")
    assert "(--set writes an index with a dot: flows.0.read_fraction)" in line
    assert str(path) not in line


def test_unknown_value_suggests_the_closest(run_cli, write_config):
    path = write_config(small_config())
    line = _error(run_cli("run", path, "--set", "ftl.gc_policy=rgb"))
    assert "unknown value `rgb` (did you mean `rga`?)" in line
    assert "greedy" in line  # every choice is still listed


def test_a_file_error_names_its_line(run_cli, write_config):
    config = small_config()
    config["flows"][0]["queue_depht"] = 3
    path = write_config(config)
    number = path.read_text().splitlines().index("queue_depht = 3") + 1
    line = _error(run_cli("run", path))
    assert f"{path.name}:{number}: flows[0].queue_depht: unknown key" in line
    assert "(did you mean `queue_depth`?)" in line


def test_a_wrong_type_in_a_table_is_located_and_worded_for_people(run_cli, write_config):
    path = write_config('seed = 1\n\n[flash]\nchannels = "two"\n')
    line = _error(run_cli("run", path))
    assert f"{path.name}:4: flash.channels: expected a whole number" in line
    assert "u32" not in line


def test_precondition_none_from_the_command_line_drops_the_files_fill_keys(
    run_cli, write_config, tmp_path
):
    config = small_config()
    config["precondition"] = {"mode": "fill", "occupancy": 0.5, "layout": "sequential"}
    path = write_config(config)
    proc = run_cli("run", path, "--out", "out", "--set", "precondition.mode=none")
    assert proc.returncode == 0, proc.stderr
    echo = json.loads((tmp_path / "out" / "results.json").read_text())["config"]
    assert echo["precondition"]["mode"] == "none"
    # Set on the command line with the new mode, an ignored key is still refused.
    both = ["--set", "precondition.mode=none", "--set", "precondition.occupancy=0.3"]
    line = _error(run_cli("run", path, *both))
    assert "--set precondition.occupancy=0.3: precondition.occupancy: applies to mode" in line


def test_json_prints_the_results_document_only(run_cli, write_config, tmp_path):
    path = write_config(small_config(requests=300))
    proc = run_cli("run", path, "--out", "out", "--json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["schema"] == "ssdlab.results/1"
    assert document["flows"][0]["reads"]["count"] == 300
    assert document == json.loads((tmp_path / "out" / "results.json").read_text())


def test_quiet_prints_nothing_but_warnings(run_cli, write_config, tmp_path):
    config = small_config(requests=300)
    config["precondition"] = {"mode": "fill", "occupancy": 0.999}  # no room for GC: a warning
    path = write_config(config)
    proc = run_cli("run", path, "--out", "out", "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert (tmp_path / "out" / "results.json").is_file()
    warnings = json.loads((tmp_path / "out" / "results.json").read_text())["warnings"]
    for warning in warnings:
        assert warning in " ".join(proc.stderr.split())


def test_the_run_says_which_defaults_make_the_drive_unlike_a_fresh_one(run_cli, write_config):
    config = small_config(read_fraction=0.5, requests=200)  # sets no gc_threshold
    proc = run_cli("run", write_config(config), "--out", "out")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    steady = 'by default (precondition.mode = "steady") every page the flows address holds data'
    assert f"note: the drive starts in steady state, not fresh: {steady}" in text
    assert "note: GC reserve by default: 12% of the flash is spare (ftl.over_provisioning)" in text
    assert "GC starts when a plane's free blocks fall below 5% (ftl.gc_threshold)" in text
    assert text.index("note:") < text.index("requests")  # before the run, not after
    # A config that says how the drive starts and how much it reserves hears nothing.
    config["precondition"] = {"mode": "none"}
    config["ftl"]["gc_threshold"] = 0.05
    proc = run_cli("run", write_config(config), "--out", "out2")
    assert "note:" not in proc.stdout


@pytest.mark.parametrize(
    "override, field",
    [
        ('ftl.over_provisioning="x"', "ftl.over_provisioning"),
        ('flows.0.read_fraction="x"', "read_fraction"),
        ("ftl.gc_threshold=[1, 2]", "ftl.gc_threshold"),
    ],
)
def test_a_wrong_type_is_refused_not_a_traceback(run_cli, write_config, override, field):
    # The notes said before the run read these keys; a string there once crashed the CLI while
    # formatting a percentage, before the core could name the field (found by test_fuzz).
    proc = run_cli("run", write_config(small_config(read_fraction=0.5)), "--set", override)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert field in proc.stderr


def test_requests_are_aligned_to_their_size_by_default():
    import ssdlab

    def starts(**flow):
        config = small_config(requests=2000, request_size="4KiB", **flow)
        config["run"] = {"request_records": "all"}
        return ssdlab.simulate(config).requests()["start_sector"]

    assert (starts() % 8 == 0).all()  # fio's default: blockalign = bs
    assert (starts(alignment="512B") % 8 != 0).any()  # an explicit alignment still rules
    config = small_config(requests=2000, request_size={"mean": "8KiB", "stdev": "2KiB"})
    config["run"] = {"request_records": "all"}
    sizes = ssdlab.simulate(config).requests()["start_sector"]
    assert (sizes % 8 != 0).any()  # a size distribution aligns to a sector


class _Phases:
    """A progress callback that also hears the phases (ssdlab._progress's protocol)."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.heard: list[object] = []
        self.stop_after = stop_after

    def phase(self, name: str) -> None:
        self.heard.append(name)

    def __call__(self, fraction: float) -> None:
        self.heard.append(fraction)
        if self.stop_after is not None and len(self.heard) > self.stop_after:
            raise KeyboardInterrupt


# Steady state on a drive large enough that its aging takes a second or so.
_LONG_SETUP = {
    "seed": 1,
    "flash": {"channels": 8, "chips_per_channel": 4, "blocks_per_plane": 2048},
    "precondition": {"mode": "steady", "occupancy": 0.75, "drive_writes": 6},
    "flows": [{"read_fraction": 0.0, "queue_depth": 8, "requests": 2000}],
}


def test_progress_moves_during_preconditioning():
    import ssdlab

    heard = _Phases()
    ssdlab.simulate(_LONG_SETUP, progress=heard)
    start, switch = heard.heard.index("preconditioning"), heard.heard.index("simulating")
    setup = heard.heard[start + 1 : switch]
    assert len(setup) >= 2, heard.heard  # the bar moved while the drive was aged
    assert all(0.0 <= f <= 1.0 for f in setup) and setup == sorted(setup)
    assert heard.heard[-1] == 1.0
    # A plain callable hears the run only, as before.
    fractions: list[float] = []
    ssdlab.simulate(_LONG_SETUP, progress=fractions.append)
    assert fractions[-1] == 1.0 and all(isinstance(f, float) for f in fractions)
    ssdlab.simulate(small_config(requests=100), progress=True)  # draws only in a terminal


def test_ctrl_c_stops_a_long_preconditioning():
    import ssdlab

    heard = _Phases(stop_after=2)
    with pytest.raises(KeyboardInterrupt):
        ssdlab.simulate(_LONG_SETUP, progress=heard)
    assert "simulating" not in heard.heard
