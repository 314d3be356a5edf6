"""Profile-guided optimisation (PGO) of ssdlab's release builds.

LLVM lays out and inlines code better when it knows which branches a program takes and which
calls are hot. The simulator's profile is flat (no function passes 10 % of a run), which is where
that helps most: on 2026-12-06 callgrind counted 16.4 % fewer instructions for 200,000 random
reads and 18.7 % fewer for 200,000 random writes with GC, with identical results (README's
Speed).

    python scripts/pgo.py develop   # `make develop`: the Python extension (CLI, Python API, serve)
    python scripts/pgo.py bench     # `make bench`: the Rust throughput benchmark

Each builds the code instrumented (`-Cprofile-generate`), runs the training set on it, merges
the counts with `llvm-profdata` (rustup's `llvm-tools` component, installed here if missing) and
builds again with `-Cprofile-use`. The training set is every example config (sweeps aside), each
flow capped at TRAINING_REQUESTS requests, the hot workloads of `scripts/pgo-training/` (random
reads, random writes with GC, MQSim's cached mapping table and write cache, steady state), and
for the extension a host driving the stepping API with data (`examples/hosts/closed_loop_app.py`).
Code that no training run reaches is laid out as cold, so every feature with an example is
trained.

The profile is made from this checkout's sources and kept under `target/pgo/` with a hash of them
(and of the compiler and the training set), so it is never stale: a later build of the same
sources reuses it, a build of changed sources trains again. The PGO builds have target folders of
their own (RUSTFLAGS differ), so `cargo build --release` and `cargo test` keep theirs.

`SSDLAB_PGO=0` builds without it (as before, about half the build time). Without
`llvm-profdata` (no rustup, or no network for the component) the build goes on without it and
says so. PGO changes the speed of the code only: results are the same bytes
(`scripts/same_bytes.py`).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PGO_DIR = REPO / "target" / "pgo"
TRAINING = REPO / "scripts" / "pgo-training"
# Each example's flows are capped at this many requests: enough to reach their steady paths,
# about 17 s for all of them on two cores uninstrumented.
TRAINING_REQUESTS = 20_000
# The stepping-API host's page touches (its reads and write-backs).
HOST_TOUCHES = 5_000


def log(message: str) -> None:
    print(f"pgo: {message}", file=sys.stderr, flush=True)


def shown(path: Path) -> str:
    """`path` relative to the checkout where it lies in it."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    subprocess.run(cmd, cwd=REPO, env=env, check=True)


def llvm_profdata() -> str | None:
    """rustup's `llvm-profdata` for the active toolchain (its LLVM must read what rustc's
    instrumentation writes), installing the `llvm-tools` component once if it is missing."""

    def find() -> str | None:
        sysroot = subprocess.run(
            ["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True
        ).stdout.strip()
        found = glob.glob(os.path.join(sysroot, "lib", "rustlib", "*", "bin", "llvm-profdata"))
        return found[0] if found else None

    tool = find()
    if tool is None and shutil.which("rustup"):
        log("installing rustup's llvm-tools component (llvm-profdata)")
        done = subprocess.run(
            ["rustup", "component", "add", "llvm-tools"], capture_output=True, text=True
        )
        if done.returncode != 0:
            log(f"rustup component add llvm-tools failed: {done.stderr.strip()[-300:]}")
        tool = find()
    return tool


def source_key(kind: str) -> str:
    """A hash of what the profile depends on: the Rust sources, the compiler, the training set."""
    digest = hashlib.sha256(kind.encode())
    digest.update(subprocess.run(["rustc", "-vV"], capture_output=True, check=True).stdout)
    digest.update(Path(__file__).read_bytes())
    files = [REPO / "Cargo.toml", REPO / "Cargo.lock"]
    files += sorted((REPO / "crates").rglob("*.rs")) + sorted((REPO / "crates").rglob("*.toml"))
    files += sorted(TRAINING.glob("*.toml")) + sorted((REPO / "examples").glob("*.toml"))
    for path in files:
        digest.update(str(path.relative_to(REPO)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def flows_of(config: Path) -> int:
    with config.open("rb") as f:
        return len(tomllib.load(f).get("flows", []))


def training_cases() -> list[tuple[Path, int | None]]:
    """(config, requests cap) pairs: the examples capped, the hot workloads as written."""
    cases: list[tuple[Path, int | None]] = [(p, None) for p in sorted(TRAINING.glob("*.toml"))]
    for path in sorted((REPO / "examples").glob("*.toml")):
        if not path.name.startswith("sweep-"):
            cases.append((path, TRAINING_REQUESTS))
    return cases


def train(commands: list[list[str]], env: dict[str, str]) -> None:
    """Runs the training commands two at a time (each writes its own profile file)."""

    def one(cmd: list[str]) -> tuple[list[str], subprocess.CompletedProcess[str]]:
        return cmd, subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)

    jobs = min(2, os.cpu_count() or 1)
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for cmd, done in pool.map(one, commands):
            if done.returncode != 0:
                sys.exit(
                    f"pgo: training run failed ({done.returncode}): {' '.join(cmd)}\n"
                    f"{done.stderr[-2000:]}"
                )


def merge(tool: str, raw: Path, profile: Path) -> None:
    files = sorted(raw.glob("*.profraw"))
    if not files:
        sys.exit(f"pgo: the training wrote no profile under {raw}")
    part = profile.with_suffix(".part")
    run([tool, "merge", "-o", str(part), *map(str, files)])
    part.replace(profile)
    shutil.rmtree(raw, ignore_errors=True)


def current(kind: str) -> tuple[Path, bool]:
    """The profile of `kind` and whether it was made from these sources. Its path stays the same
    from one training to the next (only a key file beside it changes): RUSTFLAGS then stay the
    same, so after an edit cargo rebuilds the crates that changed, not every dependency."""
    profile = PGO_DIR / f"{kind}.profdata"
    key_file = PGO_DIR / f"{kind}.key"
    fresh = profile.exists() and key_file.exists() and key_file.read_text() == source_key(kind)
    return profile, fresh


def remember(kind: str) -> None:
    (PGO_DIR / f"{kind}.key").write_text(source_key(kind))


def rustflags(flag: str) -> str:
    return " ".join(filter(None, [os.environ.get("RUSTFLAGS", ""), flag]))


def develop(maturin: str) -> None:
    """`maturin develop --release`, with PGO unless it is off or cannot be had."""
    plain = [maturin, "develop", "--release", "--quiet"]
    tool = None if os.environ.get("SSDLAB_PGO") == "0" else llvm_profdata()
    if tool is None:
        if os.environ.get("SSDLAB_PGO") != "0":
            log("llvm-profdata not found: building without profile-guided optimisation")
        run(plain, env={**os.environ, "PIP_QUIET": "1"})
        return
    PGO_DIR.mkdir(parents=True, exist_ok=True)
    profile, fresh = current("python")
    if not fresh:
        raw = PGO_DIR / "raw-python"
        shutil.rmtree(raw, ignore_errors=True)
        log("building the instrumented extension")
        with tempfile.TemporaryDirectory(dir=PGO_DIR) as tmp:
            wheels = Path(tmp) / "wheels"
            env = {
                **os.environ,
                "RUSTFLAGS": rustflags(f"-Cprofile-generate={raw}"),
                "CARGO_TARGET_DIR": str(PGO_DIR / "instrumented-python"),
            }
            run([maturin, "build", "--release", "--quiet", "-o", str(wheels)], env=env)
            package = Path(tmp) / "package"
            with zipfile.ZipFile(next(wheels.glob("*.whl"))) as wheel:
                wheel.extractall(package)
            log("training it on the examples and scripts/pgo-training")
            out = Path(tmp) / "out"
            commands = []
            for i, (config, cap) in enumerate(training_cases()):
                sets = []
                if cap is not None:
                    for f in range(flows_of(config)):
                        sets += ["--set", f"flows.{f}.requests={cap}"]
                cli = [sys.executable, "-m", "ssdlab", "run", str(config), "-q"]
                commands.append([*cli, "--out", f"{out}/{i}", *sets])
            host = REPO / "examples" / "hosts" / "closed_loop_app.py"
            commands.append([sys.executable, str(host), "--touches", str(HOST_TOUCHES)])
            train(commands, {**os.environ, "PYTHONPATH": str(package)})
        merge(tool, raw, profile)
        remember("python")
    log(f"building the extension with {shown(profile)}")
    env = {
        **os.environ,
        "PIP_QUIET": "1",
        "RUSTFLAGS": rustflags(f"-Cprofile-use={profile}"),
        "CARGO_TARGET_DIR": str(PGO_DIR / "release-python"),
    }
    run(plain, env=env)


def bench(bench_args: list[str]) -> None:
    """`cargo bench -p ssdlab-core --bench throughput`, with PGO trained through the example
    runner (the benchmark and the runner share the library's compiled names, so one profile
    serves both)."""
    cargo_bench = ["cargo", "bench", "-p", "ssdlab-core", "--bench", "throughput"]
    cargo_bench += ["--", *bench_args] if bench_args else []
    tool = None if os.environ.get("SSDLAB_PGO") == "0" else llvm_profdata()
    if tool is None:
        if os.environ.get("SSDLAB_PGO") != "0":
            log("llvm-profdata not found: benchmarking without profile-guided optimisation")
        run(cargo_bench)
        return
    PGO_DIR.mkdir(parents=True, exist_ok=True)
    profile, fresh = current("bench")
    if not fresh:
        raw = PGO_DIR / "raw-bench"
        shutil.rmtree(raw, ignore_errors=True)
        target = PGO_DIR / "instrumented-bench"
        env = {
            **os.environ,
            "RUSTFLAGS": rustflags(f"-Cprofile-generate={raw}"),
            "CARGO_TARGET_DIR": str(target),
        }
        log("building the instrumented runner")
        run(
            ["cargo", "build", "--release", "--quiet", "-p", "ssdlab-core", "--example", "run"],
            env=env,
        )
        runner = str(target / "release" / "examples" / "run")
        with tempfile.TemporaryDirectory(dir=PGO_DIR) as tmp:
            commands = []
            for i, (config, cap) in enumerate(training_cases()):
                cmd = [runner, str(config), f"{tmp}/{i}.json"]
                commands.append(cmd + (["--requests", str(cap)] if cap is not None else []))
            log("training it on the examples and scripts/pgo-training")
            train(commands, dict(os.environ))
        merge(tool, raw, profile)
        remember("bench")
    env = {
        **os.environ,
        "RUSTFLAGS": rustflags(f"-Cprofile-use={profile}"),
        "CARGO_TARGET_DIR": str(PGO_DIR / "release-bench"),
        # Compiled into the benchmark (its rows' "build"), so its JSON says which build it timed.
        "SSDLAB_PGO_PROFILE": profile.name,
    }
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
