"""The package as a user gets it: the built wheel installs into a fresh virtualenv and runs, it
carries the example configs (`ssdlab examples` lists and copies them), matplotlib and Dask are
extras whose absence is explained, the version is the one results record, and the configs it
writes come from a TOML library (tomli-w) in the documented order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import ssdlab
from conftest import REPO_ROOT
from ssdlab import _extras
from ssdlab.examples import (
    DESCRIPTION_WIDTH,
    ExampleError,
    copy_example,
    describe,
    list_examples,
)

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_example_config_ships_with_a_one_line_description():
    shipped = {e.name for e in list_examples()}
    in_repo = {p.stem for p in (REPO_ROOT / "examples").glob("*.toml")}
    assert shipped == in_repo
    for example in list_examples():
        assert example.description, f"{example.name}: no leading comment to describe it"
        assert len(example.description) <= DESCRIPTION_WIDTH, example.description
        assert "\n" not in example.description


def test_description_is_the_first_sentence_without_asides():
    text = (
        "# Intel X25-M (80 GB, 50 nm MLC), as described in a paper (Yoo et al., 2014): 4 KiB\n"
        "# pages. More.\n\nseed = 1\n"
    )
    # A colon this early does not end it: "Intel X25-M, as described in a paper" says too little.
    assert describe(text) == "Intel X25-M, as described in a paper: 4 KiB pages"
    assert describe("# Short: then the rest of it follows here.\n") == (
        "Short: then the rest of it follows here"
    )
    assert describe("seed = 1\n") == ""


def test_copied_example_brings_its_trace_and_runs(run_cli, tmp_path):
    proc = run_cli("examples", "trace-msr", "study")
    assert proc.returncode == 0, proc.stderr
    assert "ssdlab run study/trace-msr.toml" in proc.stdout
    assert (tmp_path / "study" / "traces" / "demo-msr.csv").is_file()
    proc = run_cli("run", "study/trace-msr.toml", "--out", "out", "--quiet")
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["version"] == ssdlab.__version__
    assert sum(f["requests"] for f in results["flows"]) > 0


def test_copied_sweep_brings_its_base_config(tmp_path):
    path = copy_example("sweep-queue-depth.toml", tmp_path / "qd")
    assert path == tmp_path / "qd" / "sweep-queue-depth.toml"
    assert (tmp_path / "qd" / "mqsim-default.toml").is_file()


def test_copy_to_a_toml_path_renames_the_config(tmp_path):
    path = copy_example("intel-x25m", tmp_path / "mine.toml")
    assert path.read_text() == (REPO_ROOT / "examples" / "intel-x25m.toml").read_text()


def test_copy_refuses_to_overwrite_and_names_the_file(tmp_path):
    copy_example("trace-msr", tmp_path)
    (tmp_path / "traces" / "demo-msr.csv").write_text("mine")
    with pytest.raises(ExampleError, match=r"demo-msr\.csv already exists"):
        copy_example("trace-msr", tmp_path)
    assert (tmp_path / "traces" / "demo-msr.csv").read_text() == "mine"
    copy_example("trace-msr", tmp_path, overwrite=True)
    assert (tmp_path / "traces" / "demo-msr.csv").read_text() != "mine"


def test_unknown_example_suggests_the_closest(run_cli):
    proc = run_cli("examples", "intel-x25")
    assert proc.returncode == 2
    assert "no example named `intel-x25` (did you mean `intel-x25m`?)" in proc.stderr


def test_examples_command_lists_names_and_descriptions(run_cli):
    proc = run_cli("examples")
    assert proc.returncode == 0, proc.stderr
    assert "intel-x25m" in proc.stdout
    assert "The 480 GB drive of the MQSim paper's Table 3" in proc.stdout


def test_plotting_and_dask_are_extras_not_requirements():
    project = PYPROJECT["project"]
    names = [r.split(">")[0].split("=")[0].split("<")[0] for r in project["dependencies"]]
    assert "matplotlib" not in names and "distributed" not in names
    extras = project["optional-dependencies"]
    assert any(r.startswith("matplotlib") for r in extras["plot"])
    assert any(r.startswith("distributed") for r in extras["dask"])


def test_a_missing_extra_says_which_to_install(monkeypatch):
    # As if matplotlib were not installed: None in sys.modules makes its import fail.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(_extras.MissingExtraError) as info:
        _extras.require("matplotlib.pyplot", "ssdlab report")
    assert str(info.value) == "ssdlab report needs matplotlib: pip install 'ssdlab[plot]'"


def test_package_metadata_is_complete():
    project = PYPROJECT["project"]
    assert project["readme"] == "README.md"
    assert project["license"] == "MIT"
    assert (REPO_ROOT / "LICENSE").read_text().startswith("MIT License")
    assert (REPO_ROOT / "CHANGELOG.md").is_file()
    assert any(c.startswith("Programming Language :: Rust") for c in project["classifiers"])
    assert project["keywords"]


def test_built_wheel_installs_and_runs_in_a_fresh_virtualenv(tmp_path):
    """`maturin build` (reusing the extension `make test` already built), then the wheel into a
    new virtualenv with its dependencies (no extras): the console script runs, the examples are
    there, and the extras are missing with their explanation."""
    wheels = tmp_path / "wheels"
    # `make develop`'s profile-guided build has its own flags and target folder
    # (scripts/pgo.py): the same ones here, so that nothing is compiled again.
    develop_env = REPO_ROOT / "target" / "pgo" / "develop-env.json"
    build_env = dict(os.environ)
    if develop_env.exists():
        build_env.update(json.loads(develop_env.read_text()))
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "maturin",
            "build",
            "--release",
            # The interpreter `maturin develop` used: the same build, so nothing is compiled again.
            "--interpreter",
            sys.executable,
            "--out",
            str(wheels),
        ],
        cwd=REPO_ROOT,
        env=build_env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = wheels.glob("ssdlab-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"

    def run(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    pip = run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", wheel, timeout=600)
    assert pip.returncode == 0, pip.stderr[-3000:]

    version = run(venv / "bin" / "ssdlab", "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"ssdlab {ssdlab.__version__}"
    where = run(venv / "bin" / "python", "-c", "import ssdlab; print(ssdlab.__file__)")
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout

    listing = run(venv / "bin" / "ssdlab", "examples")
    assert listing.returncode == 0, listing.stderr
    assert "mqsim-default" in listing.stdout and "trace-msr" in listing.stdout
    copy = run(venv / "bin" / "ssdlab", "examples", "intel-x25m", "work")
    assert copy.returncode == 0, copy.stderr
    model = run(venv / "bin" / "ssdlab", "analytic", "work/intel-x25m.toml", "--json")
    assert model.returncode == 0, model.stderr
    assert json.loads(model.stdout)["parallel_units"] == 20

    # Installed without extras: matplotlib and Dask are absent and their users say so.
    dask = run(
        venv / "bin" / "python",
        "-c",
        "from ssdlab.sweep import dask_executor; dask_executor('local')",
    )
    assert dask.returncode != 0
    assert "needs distributed: pip install 'ssdlab[dask]'" in dask.stderr
    plot = run(venv / "bin" / "python", "-c", "import matplotlib")
    assert plot.returncode != 0, "matplotlib came with the plain install"


def test_written_configs_read_back_whatever_their_values():
    """dump_toml writes through tomli-w: quoting, escapes, NaN and infinities, nested tables and
    arrays of tables all read back to the same document."""
    config = {
        "seed": 3,
        "run": {"percentiles": {"p95": 95.0}},
        "flash": {"timing": {"read": {"lsb": "75us", "msb": "90us"}, "erase": "3ms"}},
        "ftl": {"gc_threshold": 0.05, "ratio": float("inf")},
        "flows": [
            {"name": 'quote" \\ back\nline', "channels": [0, 1], "request_size": {"mean": "8KiB"}},
            {"name": "ünïcode", "kind": "trace", "path": "a b/t.csv"},
        ],
        "namespaces": [{"size": "8GiB"}],
    }
    text = ssdlab.dump_toml(config)
    assert tomllib.loads(text) == config
    nan = tomllib.loads(ssdlab.dump_toml({"x": {"y": float("nan")}}))["x"]["y"]
    assert nan != nan


def test_written_configs_keep_the_documented_order():
    config = {
        "flows": [{"queue_depth": 1, "name": "f", "read_fraction": 0.5}],
        "flash": {"page_size": "4KiB", "channels": 2},
        "ftl": {"over_provisioning": 0.1},
        "seed": 1,
        "host": {"pcie_lanes": 4},
    }
    text = ssdlab.dump_toml(config, ["a comment"])
    order = ["# a comment", "seed = 1", "[host]", "[ftl]", "[flash]", "channels = 2", "page_size"]
    order += ["[[flows]]", 'name = "f"', "read_fraction", "queue_depth"]
    positions = [text.index(s) for s in order]
    assert positions == sorted(positions), text


def test_a_value_toml_cannot_hold_is_a_config_error():
    with pytest.raises(ssdlab.ConfigError, match="cannot write as TOML"):
        ssdlab.dump_toml({"seed": object()})
