"""Profile-guided optimisation (PGO) of ssdlab's release builds.

LLVM lays out and inlines code better when it knows which branches a program takes and which
calls are hot. The simulator's profile is flat (no function passes 10 % of a run), which is where
that helps most: on 2026-12-06 callgrind counted 16.4 % fewer instructions for 200,000 random
reads and 18.7 % fewer for 200,000 random writes with GC, with identical results
(docs/performance.md).

    python scripts/pgo.py develop   # `make develop`: the Python extension (CLI, Python API, serve)
    python scripts/pgo.py bench     # `make bench`: the Rust throughput benchmark

Each builds the code instrumented (`-Cprofile-generate`), runs the training set on it, merges
the counts with `llvm-profdata` (rustup's `llvm-tools` component, installed here if missing) and
builds again with `-Cprofile-use`. The training set is every example config (sweeps aside), each
flow capped at TRAINING_REQUESTS requests, the hot workloads of `scripts/pgo-training/` (random
reads, random writes with GC, MQSim's cached mapping table and write cache, steady state: close
to what the benchmarks and the MQSim comparison measure), and for the extension a host driving
the stepping API with data (`examples/hosts/closed_loop_app.py`). Code that no training run
reaches is laid out as cold, so every feature with an example is trained; paths without one
(say, a trace format no example replays) may run slower than in the plain build.

The profile is made from this checkout and kept under `target/pgo/` with a hash of the Rust
sources, the compiler and the training inputs: a later build of the same sources reuses it, a
build of changed sources trains again. rustc records the profile as an input of every crate, so
that build compiles every crate again too (about 4 minutes on two cores): `SSDLAB_PGO=0` while
iterating on the Rust code. The PGO builds have target folders of their own, so `cargo build
--release` and `cargo test` keep theirs. Their flags go in `CARGO_ENCODED_RUSTFLAGS` (after any
the environment gives in it or in `RUSTFLAGS`), which cargo takes instead of the `rustflags` of
its config files.

`SSDLAB_PGO=0` builds without it (as before, about half the build time). Where it cannot be had
(no `llvm-profdata`; an instrumented build or a training run that fails) the build says why and
goes on without it. PGO changes the speed of the code only: results are the same bytes
(`scripts/same_bytes.py`).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

# The examples' request caps as the same-bytes check writes them (`--set flows.I.requests=N`).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from same_bytes import capped

REPO = Path(__file__).resolve().parents[1]
PGO_DIR = REPO / "target" / "pgo"
TRAINING = REPO / "scripts" / "pgo-training"
# Each example's flows are capped at this many requests: enough to reach their steady paths,
# about 17 s for all of them on two cores uninstrumented.
TRAINING_REQUESTS = 20_000
# The stepping-API host's page touches (its reads and write-backs).
HOST_TOUCHES = 5_000
# Left when rustup could not install llvm-tools, so that every later build does not wait on it
# again; delete it to try again.
UNAVAILABLE = "llvm-tools-unavailable"
# The environment `make develop` built the extension with, for a later `maturin build` of the
# same build (tests/test_package.py) to reuse its compiled crates rather than start over.
DEVELOP_ENV = "develop-env.json"


class PgoError(Exception):
    """A step of the profile-guided build could not be done; the plain build follows."""


def log(message: str) -> None:
    print(f"pgo: {message}", file=sys.stderr, flush=True)


def shown(path: Path) -> str:
    """`path` relative to the checkout where it lies in it."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    """Runs a build step in the checkout; a failure raises CalledProcessError."""
    subprocess.run(cmd, cwd=REPO, env=env, check=True)


def llvm_profdata() -> str | None:
    """rustup's `llvm-profdata` for the active toolchain (its LLVM must read what rustc's
    instrumentation writes), installing the `llvm-tools` component if it is missing, once."""

    def find() -> str | None:
        sysroot = subprocess.run(
            ["rustc", "--print", "sysroot"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        found = glob.glob(os.path.join(sysroot, "lib", "rustlib", "*", "bin", "llvm-profdata"))
        return found[0] if found else None

    tool = find()
    marker = PGO_DIR / UNAVAILABLE
    if tool is None and shutil.which("rustup") and not marker.exists():
        log("installing rustup's llvm-tools component (llvm-profdata)")
        try:
            done = subprocess.run(
                ["rustup", "component", "add", "llvm-tools"],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=300,
            )
            failure = done.stderr.strip()[-300:] if done.returncode != 0 else None
        except subprocess.TimeoutExpired:
            failure = "no answer in 300 s"
        tool = find()
        if tool is None:
            PGO_DIR.mkdir(parents=True, exist_ok=True)
            marker.write_text(f"rustup component add llvm-tools: {failure}\n")
            log(f"rustup could not install llvm-tools ({failure}); delete {shown(marker)} to retry")
    return tool


def source_key(kind: str) -> str:
    """A hash of what the profile depends on: the Rust sources, the compiler, the training
    inputs (configs, traces, the stepping-API host) and this script."""
    digest = hashlib.sha256(kind.encode())
    compiler = subprocess.run(["rustc", "-vV"], cwd=REPO, capture_output=True, check=True)
    digest.update(compiler.stdout)
    digest.update(Path(__file__).read_bytes())
    files = [REPO / "Cargo.toml", REPO / "Cargo.lock"]
    files += sorted((REPO / "crates").rglob("*.rs")) + sorted((REPO / "crates").rglob("*.toml"))
    files += sorted(TRAINING.glob("*.toml")) + sorted((REPO / "examples").glob("*.toml"))
    for folder in ("hosts", "traces"):
        files += sorted(p for p in (REPO / "examples" / folder).rglob("*") if p.is_file())
    for path in files:
        digest.update(str(path.relative_to(REPO)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def training_cases() -> list[tuple[Path, int | None]]:
    """(config, requests cap) pairs: the hot workloads as written, the examples capped."""
    cases: list[tuple[Path, int | None]] = [(p, None) for p in sorted(TRAINING.glob("*.toml"))]
    for path in sorted((REPO / "examples").glob("*.toml")):
        if not path.name.startswith("sweep-"):
            cases.append((path, TRAINING_REQUESTS))
    return cases


def python_commands(python: str, out: Path) -> list[list[str]]:
    """The extension's training: every case through `python -m ssdlab run`, then the host."""
    commands = []
    for i, (config, cap) in enumerate(training_cases()):
        sets = [arg for s in capped(config, cap) for arg in ("--set", s)]
        commands.append(
            [python, "-m", "ssdlab", "run", str(config), "-q", "--out", f"{out}/{i}", *sets]
        )
    host = REPO / "examples" / "hosts" / "closed_loop_app.py"
    commands.append([python, str(host), "--touches", str(HOST_TOUCHES)])
    return commands


def runner_commands(runner: str, out: Path) -> list[list[str]]:
    """The benchmark's training: every case through the example runner (`--requests` caps)."""
    commands = []
    for i, (config, cap) in enumerate(training_cases()):
        caps = [] if cap is None else ["--requests", str(cap)]
        commands.append([runner, str(config), f"{out}/{i}.json", *caps])
    return commands


def train(commands: list[list[str]], env: dict[str, str]) -> None:
    """Runs the training commands two at a time. The runs of one binary add their counts to the
    same file (rustc names it by the binary; LLVM merges under a lock as each run ends)."""
    env = {k: v for k, v in env.items() if k != "LLVM_PROFILE_FILE"}  # it would move the counts

    def one(cmd: list[str]) -> tuple[list[str], subprocess.CompletedProcess[str]]:
        return cmd, subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)

    with concurrent.futures.ThreadPoolExecutor(min(2, os.cpu_count() or 1)) as pool:
        for cmd, done in pool.map(one, commands):
            if done.returncode != 0:
                pool.shutdown(cancel_futures=True)
                raise PgoError(
                    f"training run failed ({done.returncode}): {' '.join(cmd)}\n"
                    f"{done.stderr[-2000:]}"
                )


def merge(tool: str, raw: Path, profile: Path) -> None:
    """Merges the training's raw counts into the indexed profile rustc reads."""
    files = sorted(raw.glob("*.profraw"))
    if not files:
        raise PgoError(f"the training wrote no counts under {shown(raw)}")
    part = profile.with_suffix(".part")
    run([tool, "merge", "-o", str(part), *map(str, files)])
    part.replace(profile)
    shutil.rmtree(raw, ignore_errors=True)


def with_rustflag(flag: str, target_dir: Path) -> dict[str, str]:
    """The environment for a build with `flag` added to the user's own flags, in a target folder
    of its own. CARGO_ENCODED_RUSTFLAGS separates flags by 0x1f, so a checkout path with spaces
    stays one argument."""
    env = {k: v for k, v in os.environ.items() if k != "RUSTFLAGS"}
    if os.environ.get("CARGO_ENCODED_RUSTFLAGS"):
        flags = os.environ["CARGO_ENCODED_RUSTFLAGS"].split("\x1f")
    else:
        flags = os.environ.get("RUSTFLAGS", "").split()
    env["CARGO_ENCODED_RUSTFLAGS"] = "\x1f".join([*flags, flag])
    env["CARGO_TARGET_DIR"] = str(target_dir)
    return env


def profile_of(kind: str, train_instrumented: Callable[[Path], None]) -> Path:
    """The profile of `kind` for these sources: the kept one, or one trained now by
    `train_instrumented(raw counts folder)`. Its path stays the same from one training to the
    next, beside a file with the key of the sources it was made from."""
    PGO_DIR.mkdir(parents=True, exist_ok=True)
    key = source_key(kind)
    profile, key_file = PGO_DIR / f"{kind}.profdata", PGO_DIR / f"{kind}.key"
    if profile.exists() and key_file.exists() and key_file.read_text() == key:
        return profile
    tool = llvm_profdata()
    if tool is None:
        raise PgoError("llvm-profdata not found (rustup's llvm-tools component)")
    raw = PGO_DIR / f"raw-{kind}"
    shutil.rmtree(raw, ignore_errors=True)
    try:
        train_instrumented(raw)
        merge(tool, raw, profile)
    except subprocess.CalledProcessError as e:
        raise PgoError(f"{' '.join(map(str, e.cmd))} failed ({e.returncode})") from e
    key_file.write_text(key)  # the key of the sources as they were when the training began
    return profile


def develop(maturin: str) -> None:
    """`maturin develop --release`, with PGO unless it is off or cannot be had."""
    plain = [maturin, "develop", "--release", "--quiet"]
    quiet = {**os.environ, "PIP_QUIET": "1"}
    (PGO_DIR / DEVELOP_ENV).unlink(missing_ok=True)
    if os.environ.get("SSDLAB_PGO") == "0":
        run(plain, env=quiet)
        return

    def train_instrumented(raw: Path) -> None:
        log("building the instrumented extension")
        with tempfile.TemporaryDirectory(dir=PGO_DIR) as tmp:
            wheels = Path(tmp) / "wheels"
            env = with_rustflag(f"-Cprofile-generate={raw}", PGO_DIR / "instrumented-python")
            run([maturin, "build", "--release", "--quiet", "-o", str(wheels)], env=env)
            built = sorted(wheels.glob("*.whl"))
            if not built:
                raise PgoError(f"maturin build left no wheel in {wheels}")
            package = Path(tmp) / "package"
            with zipfile.ZipFile(built[0]) as wheel:
                wheel.extractall(package)
            log("training it on the examples and scripts/pgo-training")
            # PYTHONPATH comes before the virtualenv's editable install of the plain package.
            train(
                python_commands(sys.executable, Path(tmp) / "out"),
                {**quiet, "PYTHONPATH": str(package)},
            )

    try:
        profile = profile_of("python", train_instrumented)
    except PgoError as e:
        log(f"{e}\npgo: building without profile-guided optimisation")
        run(plain, env=quiet)
        return
    log(f"building the extension with {shown(profile)}")
    env = with_rustflag(f"-Cprofile-use={profile}", PGO_DIR / "release-python")
    run(plain, env={**env, "PIP_QUIET": "1"})
    used = {k: env[k] for k in ("CARGO_ENCODED_RUSTFLAGS", "CARGO_TARGET_DIR")}
    (PGO_DIR / DEVELOP_ENV).write_text(json.dumps(used, indent=1) + "\n")


def bench(bench_args: list[str]) -> None:
    """`cargo bench -p ssdlab-core --bench throughput`, with PGO trained through the example
    runner: the library's functions have the same names (symbol hashes) in the runner and the
    benchmark, so one profile serves both (the extension's differ: it has its own)."""
    cargo_bench = ["cargo", "bench", "-p", "ssdlab-core", "--bench", "throughput"]
    cargo_bench += ["--", *bench_args] if bench_args else []
    if os.environ.get("SSDLAB_PGO") == "0":
        run(cargo_bench)
        return

    def train_instrumented(raw: Path) -> None:
        target = PGO_DIR / "instrumented-bench"
        env = with_rustflag(f"-Cprofile-generate={raw}", target)
        log("building the instrumented runner")
        run(
            ["cargo", "build", "--release", "--quiet", "-p", "ssdlab-core", "--example", "run"],
            env=env,
        )
        runner = str(target / "release" / "examples" / "run")
        with tempfile.TemporaryDirectory(dir=PGO_DIR) as tmp:
            log("training it on the examples and scripts/pgo-training")
            train(runner_commands(runner, Path(tmp)), dict(os.environ))

    try:
        profile = profile_of("bench", train_instrumented)
    except PgoError as e:
        log(f"{e}\npgo: benchmarking without profile-guided optimisation")
        run(cargo_bench)
        return
    env = with_rustflag(f"-Cprofile-use={profile}", PGO_DIR / "release-bench")
    # Compiled into the benchmark (its rows' "build"), so its JSON says which build it timed.
    env["SSDLAB_PGO_PROFILE"] = f"{profile.name}, sources {(PGO_DIR / 'bench.key').read_text()}"
    log(f"benchmarking the build with {shown(profile)}")
    run(cargo_bench, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    dev = sub.add_parser("develop", help="build the Python extension into the virtualenv")
    dev.add_argument("--maturin", default=str(Path(sys.executable).with_name("maturin")))
    bench_parser = sub.add_parser("bench", help="run the Rust throughput benchmark")
    bench_parser.add_argument("bench_args", nargs="*", help="passed to the benchmark")
    args = parser.parse_args()
    if args.command == "develop":
        develop(args.maturin)
    else:
        bench(args.bench_args)


if __name__ == "__main__":
    main()
