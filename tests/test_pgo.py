"""scripts/pgo.py, the profile-guided build of `make develop` and `make bench`: its training set is
valid and covers every example, its profile's key follows the sources, and it builds without a
profile (saying so) where it is turned off or cannot have llvm-profdata."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import ssdlab

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def pgo():
    spec = importlib.util.spec_from_file_location("pgo", REPO / "scripts" / "pgo.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["pgo"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["pgo"]


def test_the_hot_training_workloads_run(pgo):
    # The examples run in test_examples.py; these are the profile's heaviest runs.
    for config in sorted((REPO / "scripts" / "pgo-training").glob("*.toml")):
        flows = pgo.flows_of(config)
        results = ssdlab.simulate(
            config, overrides=[f"flows.{i}.requests=500" for i in range(flows)]
        )
        assert results.device.reads.count + results.device.writes.count == 500 * flows, config


def test_the_training_covers_every_example_and_the_hot_workloads(pgo):
    trained = {config for config, _ in pgo.training_cases()}
    examples = {p for p in (REPO / "examples").glob("*.toml") if not p.name.startswith("sweep-")}
    assert examples <= trained
    hot = set((REPO / "scripts" / "pgo-training").glob("*.toml"))
    assert len(hot) == 4 and hot <= trained


def fake_repo(root: Path) -> None:
    (root / "crates" / "core" / "src").mkdir(parents=True)
    (root / "crates" / "core" / "src" / "lib.rs").write_text("fn main() {}\n")
    (root / "crates" / "core" / "Cargo.toml").write_text("[package]\n")
    (root / "examples").mkdir()
    (root / "training").mkdir()
    (root / "Cargo.toml").write_text("[workspace]\n")
    (root / "Cargo.lock").write_text("")


def test_the_profile_key_follows_the_sources(pgo, tmp_path, monkeypatch):
    fake_repo(tmp_path)
    monkeypatch.setattr(pgo, "REPO", tmp_path)
    monkeypatch.setattr(pgo, "TRAINING", tmp_path / "training")
    key = pgo.source_key("python")
    assert pgo.source_key("python") == key
    assert pgo.source_key("bench") != key  # the two builds name their functions differently
    (tmp_path / "crates" / "core" / "src" / "lib.rs").write_text("fn main() { }\n")
    edited = pgo.source_key("python")
    assert edited != key
    (tmp_path / "training" / "extra.toml").write_text("seed = 2\n")
    assert pgo.source_key("python") != edited


@pytest.fixture
def commands(pgo, monkeypatch, tmp_path):
    """Records what the build would run instead of running it."""
    ran: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(pgo, "run", lambda cmd, env=None: ran.append((cmd, env or {})))
    monkeypatch.setattr(pgo, "PGO_DIR", tmp_path / "pgo")
    return ran


def test_turned_off_it_builds_as_before(pgo, commands, monkeypatch, capsys):
    monkeypatch.setenv("SSDLAB_PGO", "0")
    monkeypatch.setattr(pgo, "llvm_profdata", lambda: pytest.fail("not looked for when off"))
    pgo.develop("maturin")
    ((cmd, env),) = commands
    assert cmd == ["maturin", "develop", "--release", "--quiet"]
    assert "profile" not in env.get("RUSTFLAGS", "")
    assert capsys.readouterr().err == ""


def test_without_llvm_profdata_it_says_so_and_builds_without(pgo, commands, monkeypatch, capsys):
    monkeypatch.delenv("SSDLAB_PGO", raising=False)
    monkeypatch.setattr(pgo, "llvm_profdata", lambda: None)
    pgo.develop("maturin")
    ((cmd, env),) = commands
    assert cmd == ["maturin", "develop", "--release", "--quiet"]
    assert "profile" not in env.get("RUSTFLAGS", "")
    assert "llvm-profdata not found" in capsys.readouterr().err
    pgo.bench(["random-read-4k-qd64"])
    cmd, env = commands[-1]
    assert cmd[:2] == ["cargo", "bench"] and cmd[-2:] == ["--", "random-read-4k-qd64"]
    assert "SSDLAB_PGO_PROFILE" not in env


def test_a_kept_profile_is_used_without_training_again(pgo, commands, monkeypatch):
    monkeypatch.delenv("SSDLAB_PGO", raising=False)
    monkeypatch.setenv("RUSTFLAGS", "-Cdebuginfo=1")
    monkeypatch.setattr(pgo, "llvm_profdata", lambda: "llvm-profdata")
    monkeypatch.setattr(pgo, "train", lambda *a: pytest.fail("trained again"))
    pgo.PGO_DIR.mkdir()
    profile = pgo.PGO_DIR / "python.profdata"
    profile.write_bytes(b"counts")
    pgo.remember("python")
    pgo.develop("maturin")
    ((cmd, env),) = commands
    assert cmd == ["maturin", "develop", "--release", "--quiet"]
    # The user's own flags are kept; the PGO build has its own target folder.
    assert env["RUSTFLAGS"] == f"-Cdebuginfo=1 -Cprofile-use={profile}"
    assert env["CARGO_TARGET_DIR"] == str(pgo.PGO_DIR / "release-python")


def test_a_profile_of_other_sources_is_not_used(pgo, commands, monkeypatch):
    monkeypatch.delenv("SSDLAB_PGO", raising=False)
    pgo.PGO_DIR.mkdir()
    (pgo.PGO_DIR / "bench.profdata").write_bytes(b"counts")
    (pgo.PGO_DIR / "bench.key").write_text("made from other sources")
    assert pgo.current("bench") == (pgo.PGO_DIR / "bench.profdata", False)
    pgo.remember("bench")
    assert pgo.current("bench") == (pgo.PGO_DIR / "bench.profdata", True)
