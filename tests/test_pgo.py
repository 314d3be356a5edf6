"""scripts/pgo.py, the profile-guided build of `make develop` and `make bench`: its training covers
every example with valid caps, its profile's key follows the sources, a kept profile is reused,
the user's own compiler flags are kept, and it builds without a profile (saying why) where it is
turned off or cannot be had."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import ssdlab

REPO = Path(__file__).resolve().parents[1]
PLAIN = ["maturin", "develop", "--release", "--quiet"]


@pytest.fixture
def pgo():
    spec = importlib.util.spec_from_file_location("pgo", REPO / "scripts" / "pgo.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["pgo"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["pgo"]


def flow_count(config: Path) -> int:
    """The same-bytes check's count of a config's flows (scripts/pgo.py caps them with it)."""
    return importlib.import_module("same_bytes").flow_count(config)


def test_the_hot_training_workloads_run(pgo):
    # The profile's heaviest runs, shortened; the examples run whole in test_examples.py.
    for config in sorted((REPO / "scripts" / "pgo-training").glob("*.toml")):
        flows = flow_count(config)
        results = ssdlab.simulate(
            config, overrides=[f"flows.{i}.requests=500" for i in range(flows)]
        )
        assert results.device.reads.count + results.device.writes.count == 500 * flows, config


def test_the_training_runs_every_example_with_every_flow_capped(pgo, tmp_path):
    commands = pgo.python_commands("python", tmp_path)
    runs = {Path(c[4]): c for c in commands if c[1:4] == ["-m", "ssdlab", "run"]}
    for example in (REPO / "examples").glob("*.toml"):
        if example.name.startswith("sweep-"):
            assert example not in runs  # a sweep file is not a config
            continue
        sets = runs[example][runs[example].index("--out") + 2 :]
        flows = flow_count(example)
        assert sets == [a for i in range(flows) for a in ("--set", f"flows.{i}.requests=20000")]
    hot = sorted((REPO / "scripts" / "pgo-training").glob("*.toml"))
    assert hot and all("--set" not in runs[h] for h in hot)  # run as written
    assert commands[-1][1].endswith("closed_loop_app.py")  # the stepping API with data
    runner = pgo.runner_commands("run", tmp_path)
    assert len(runner) == len(runs)
    assert all(
        c[-2:] == ["--requests", "20000"] for c in runner if Path(c[1]).parent.name == "examples"
    )


def test_a_capped_example_is_a_valid_run(pgo, tmp_path):
    # One example through the training's own command line (the cap, -q and --out).
    (command,) = [
        c
        for c in pgo.python_commands(sys.executable, tmp_path)
        if len(c) > 4 and c[4].endswith("zns-zn540-class.toml")
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # -q


def fake_repo(root: Path) -> None:
    (root / "crates" / "core" / "src").mkdir(parents=True)
    (root / "crates" / "core" / "src" / "lib.rs").write_text("fn main() {}\n")
    (root / "crates" / "core" / "Cargo.toml").write_text("[package]\n")
    (root / "examples" / "traces").mkdir(parents=True)
    (root / "training").mkdir()
    (root / "Cargo.toml").write_text("[workspace]\n")
    (root / "Cargo.lock").write_text("")


def test_the_profile_key_follows_the_sources_and_the_training_inputs(pgo, tmp_path, monkeypatch):
    fake_repo(tmp_path)
    monkeypatch.setattr(pgo, "REPO", tmp_path)
    monkeypatch.setattr(pgo, "TRAINING", tmp_path / "training")
    key = pgo.source_key("python")
    assert pgo.source_key("python") == key
    assert pgo.source_key("bench") != key  # the two builds name their functions differently
    keys = {key}
    for path, text in [
        ("crates/core/src/lib.rs", "fn main() { }\n"),
        ("training/extra.toml", "seed = 2\n"),
        ("examples/traces/t.csv", "0,0,8\n"),
    ]:
        (tmp_path / path).write_text(text)
        keys.add(pgo.source_key("python"))
    assert len(keys) == 4


@pytest.fixture
def commands(pgo, monkeypatch, tmp_path):
    """Records what the build would run instead of running it."""
    ran: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(pgo, "run", lambda cmd, env=None: ran.append((cmd, env or {})))
    monkeypatch.setattr(pgo, "PGO_DIR", tmp_path / "pgo")
    monkeypatch.delenv("SSDLAB_PGO", raising=False)
    monkeypatch.delenv("RUSTFLAGS", raising=False)
    monkeypatch.delenv("CARGO_ENCODED_RUSTFLAGS", raising=False)
    return ran


def no_profile_flags(env: dict[str, str]) -> bool:
    return "profile" not in env.get("CARGO_ENCODED_RUSTFLAGS", "") + env.get("RUSTFLAGS", "")


def test_turned_off_it_builds_as_before(pgo, commands, monkeypatch, capsys):
    monkeypatch.setenv("SSDLAB_PGO", "0")
    monkeypatch.setattr(pgo, "llvm_profdata", lambda: pytest.fail("not looked for when off"))
    pgo.develop("maturin")
    ((cmd, env),) = commands
    assert cmd == PLAIN and no_profile_flags(env)
    assert capsys.readouterr().err == ""
    assert not (pgo.PGO_DIR / pgo.DEVELOP_ENV).exists()


def test_without_llvm_profdata_it_says_so_and_builds_without(pgo, commands, monkeypatch, capsys):
    monkeypatch.setattr(pgo, "llvm_profdata", lambda: None)
    pgo.develop("maturin")
    ((cmd, env),) = commands
    assert cmd == PLAIN and no_profile_flags(env)
    assert "llvm-profdata not found" in capsys.readouterr().err
    pgo.bench(["random-read-4k-qd64"])
    cmd, env = commands[-1]
    assert cmd[:2] == ["cargo", "bench"] and cmd[-2:] == ["--", "random-read-4k-qd64"]
    assert no_profile_flags(env) and "SSDLAB_PGO_PROFILE" not in env


def test_a_failed_training_run_names_itself(pgo):
    with pytest.raises(pgo.PgoError, match="no such example"):
        pgo.train([[sys.executable, "-c", "import sys; sys.exit('no such example')"]], {})


def test_a_failed_instrumented_build_falls_back_to_the_plain_build(
    pgo, commands, monkeypatch, capsys
):
    monkeypatch.setattr(pgo, "llvm_profdata", lambda: "llvm-profdata")
    pgo.develop("maturin")  # the instrumented build is recorded, not run: it leaves no wheel
    err = capsys.readouterr().err
    assert "left no wheel" in err and "building without profile-guided optimisation" in err
    (instrumented, env), (cmd, plain_env) = commands
    assert instrumented[1] == "build" and "-Cprofile-generate=" in env["CARGO_ENCODED_RUSTFLAGS"]
    assert cmd == PLAIN and no_profile_flags(plain_env)
    assert not (pgo.PGO_DIR / "python.key").exists()


def test_a_kept_profile_is_used_without_training_again(pgo, commands, monkeypatch):
    monkeypatch.setenv("RUSTFLAGS", "-Cdebuginfo=1 -Ctarget-cpu=x86-64")
    monkeypatch.setattr(pgo, "llvm_profdata", lambda: pytest.fail("not needed"))
    monkeypatch.setattr(pgo, "train", lambda *a: pytest.fail("trained again"))
    pgo.PGO_DIR.mkdir()
    profile = pgo.PGO_DIR / "python.profdata"
    profile.write_bytes(b"counts")
    (pgo.PGO_DIR / "python.key").write_text(pgo.source_key("python"))
    pgo.develop("maturin")
    ((cmd, env),) = commands
    assert cmd == PLAIN and "RUSTFLAGS" not in env
    # The user's own flags are kept, each one argument; the PGO build has its own target folder.
    flags = env["CARGO_ENCODED_RUSTFLAGS"].split("\x1f")
    assert flags == ["-Cdebuginfo=1", "-Ctarget-cpu=x86-64", f"-Cprofile-use={profile}"]
    assert env["CARGO_TARGET_DIR"] == str(pgo.PGO_DIR / "release-python")
    # ... and are left for a later build of the same extension (tests/test_package.py).
    assert (pgo.PGO_DIR / pgo.DEVELOP_ENV).read_text().count("profile-use") == 1


def test_a_profile_of_other_sources_is_trained_again(pgo, commands, monkeypatch):
    monkeypatch.setattr(pgo, "llvm_profdata", lambda: "llvm-profdata")
    pgo.PGO_DIR.mkdir()
    (pgo.PGO_DIR / "bench.profdata").write_bytes(b"counts")
    (pgo.PGO_DIR / "bench.key").write_text("made from other sources")
    trained = []

    def train_instrumented(raw: Path) -> None:
        trained.append(raw)
        raw.mkdir()
        (raw / "default_1.profraw").write_bytes(b"raw")

    def merging(cmd: list[str], env: dict[str, str] | None = None) -> None:
        commands.append((cmd, env or {}))
        Path(cmd[cmd.index("-o") + 1]).write_bytes(b"indexed")

    monkeypatch.setattr(pgo, "run", merging)
    profile = pgo.profile_of("bench", train_instrumented)
    assert trained == [pgo.PGO_DIR / "raw-bench"]
    assert commands[-1][0][:2] == ["llvm-profdata", "merge"]
    assert profile.read_bytes() == b"indexed" and not trained[0].exists()
    assert (pgo.PGO_DIR / "bench.key").read_text() == pgo.source_key("bench")
    assert profile == pgo.PGO_DIR / "bench.profdata"


def test_an_encoded_flag_list_is_extended_not_replaced(pgo, monkeypatch, tmp_path):
    monkeypatch.setenv("CARGO_ENCODED_RUSTFLAGS", "-Cfoo=a b\x1f-Cbar")
    monkeypatch.setenv("RUSTFLAGS", "-Cignored")  # cargo reads the encoded list first
    env = pgo.with_rustflag("-Cprofile-use=/x y/p.profdata", tmp_path)
    assert env["CARGO_ENCODED_RUSTFLAGS"].split("\x1f") == [
        "-Cfoo=a b",
        "-Cbar",
        "-Cprofile-use=/x y/p.profdata",
    ]
    assert "RUSTFLAGS" not in env


def test_a_rustup_that_cannot_install_is_asked_once(pgo, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(pgo, "PGO_DIR", tmp_path)
    asked = []
    real_run = subprocess.run

    def fake_run(cmd, **kwargs):
        if cmd[:2] == ["rustc", "--print"]:
            return subprocess.CompletedProcess(cmd, 0, stdout=str(tmp_path / "sysroot"), stderr="")
        if cmd[0] == "rustup":
            asked.append(cmd)
            return subprocess.CompletedProcess(cmd, 1, stdout="", stderr="could not download")
        return real_run(cmd, **kwargs)

    monkeypatch.setattr(pgo.subprocess, "run", fake_run)
    monkeypatch.setattr(pgo.shutil, "which", lambda name: "/usr/bin/rustup")
    assert pgo.llvm_profdata() is None
    assert pgo.llvm_profdata() is None
    assert len(asked) == 1
    assert "could not download" in (tmp_path / pgo.UNAVAILABLE).read_text()
    assert "to retry" in capsys.readouterr().err
