"""The "same bytes" check of a restructure: every example, every sweep point and every config the
tests keep runs on two builds of ssdlab, and their results.json must be identical, wall times aside.

    # once, on the build before the change: keep its Python package (with its _core extension)
    cp -r python/ssdlab /tmp/before/ssdlab
    # after the change (`make develop`), run both and compare:
    .venv/bin/python scripts/same_bytes.py --before /tmp/before --after python

`--before` and `--after` are folders holding an `ssdlab` package; each case runs in its own
process with that folder first on PYTHONPATH, through `python -m ssdlab run` (the CLI, so the
results.json compared is the file users get). A case that fails on one build must fail the same
way on the other (same exit status). `--requests N` caps every flow (the full examples take a few
minutes on two cores); `--jobs` runs cases side by side; `--new-keys model,config.flash.b` drops
keys (dotted paths in results.json) that the new build adds (a feature's new record of its
settings, at their old behaviour), so that everything else must still match. `--after-set
KEY=VALUE` (repeatable) runs the new build with an override that must not change results (for
example `ftl.map_addresses="in-plane"`, a representation); a case whose new build refuses the
override (exit 2 naming its key) is counted as not applicable. Exit status 1 when anything
differs.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    """One run: a config file and the `--set` overrides it runs with."""

    name: str
    config: Path
    overrides: tuple[str, ...] = ()


def flow_count(config: Path) -> int:
    with config.open("rb") as f:
        return len(tomllib.load(f).get("flows", []))


def capped(config: Path, requests: int | None) -> tuple[str, ...]:
    if requests is None:
        return ()
    return tuple(f"flows.{i}.requests={requests}" for i in range(flow_count(config)))


def cases(requests: int | None) -> list[Case]:
    """Every example config, every point of every example sweep, and the reliability corpus's
    configs that run (the others must fail alike)."""
    found: list[Case] = []
    for path in sorted((REPO / "examples").glob("*.toml")):
        if path.name.startswith("sweep-"):
            continue
        found.append(Case(f"examples/{path.name}", path, capped(path, requests)))
    sys.path.insert(0, str(REPO / "python"))
    from ssdlab.sweep import load_sweep

    for path in sorted((REPO / "examples").glob("sweep-*.toml")):
        sweep = load_sweep(path)
        for i, point in enumerate(sweep.points):
            sets = tuple(
                f"{k}={json.dumps(v) if isinstance(v, str) else v}" for k, v in point.values.items()
            )
            with path.open("rb") as f:
                config = (sweep.base_dir / tomllib.load(f)["base"]).resolve()
            found.append(Case(f"{path.name}#{i}", config, sets + capped(config, requests)))
    for path in sorted((REPO / "tests" / "reliability" / "corpus").rglob("*.toml")):
        found.append(Case(str(path.relative_to(REPO / "tests")), path, ()))
    return found


def normalised(results: object) -> object:
    """The results with every wall-time figure taken out (they differ from run to run)."""
    if isinstance(results, dict):
        return {k: normalised(v) for k, v in results.items() if "wall" not in k}
    if isinstance(results, list):
        return [normalised(v) for v in results]
    return results


#: Dotted paths in results.json that the new build adds.
NEW_KEYS: list[str] = []


def without_new_keys(results: dict[str, object]) -> dict[str, object]:
    for dotted in NEW_KEYS:
        *parents, last = dotted.split(".")
        node: object = results
        for key in parents:
            node = node.get(key, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            node.pop(last, None)
    return results


#: Overrides of the new build's runs only (`--after-set`).
AFTER_SETS: list[str] = []

#: What `compare` returns for a case whose new build refused an `--after-set` override.
NOT_APPLICABLE = "not applicable"


def run(case: Case, package_dir: Path, out: Path, extra: tuple[str, ...] = ()) -> tuple[int, str]:
    """Runs the case on the build in `package_dir`; returns (exit status, normalised results)."""
    env = dict(os.environ, PYTHONPATH=str(package_dir.resolve()))
    command = [sys.executable, "-m", "ssdlab", "run", str(case.config), "--out", str(out)]
    for s in case.overrides + extra:
        command += ["--set", s]
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=3600, stdin=subprocess.DEVNULL
    )
    refused = done.returncode == 2 and any(
        s.split("=")[0] in done.stdout + done.stderr for s in extra
    )
    if refused:
        return done.returncode, NOT_APPLICABLE
    path = out / "results.json"
    if not path.exists():
        return done.returncode, ""
    results = without_new_keys(json.loads(path.read_text()))
    return done.returncode, json.dumps(normalised(results), sort_keys=True)


def compare(case: Case, before: Path, after: Path, scratch: Path) -> str | None:
    """None when both builds give the same bytes, else what differs."""
    tag = case.name.replace("/", "_").replace("#", "_")
    a = run(case, before, scratch / f"{tag}-before")
    b = run(case, after, scratch / f"{tag}-after", tuple(AFTER_SETS))
    if b[1] == NOT_APPLICABLE and a[0] == 0:
        return NOT_APPLICABLE
    if a == b:
        return None
    if a[0] != b[0]:
        return f"exit status {a[0]} before, {b[0]} after"
    ja, jb = json.loads(a[1] or "{}"), json.loads(b[1] or "{}")
    keys = sorted(k for k in set(ja) | set(jb) if ja.get(k) != jb.get(k))
    return f"results.json differs in {keys}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--before", type=Path, required=True, help="folder holding the old ssdlab package"
    )
    parser.add_argument(
        "--after", type=Path, default=REPO / "python", help="folder holding the new one"
    )
    parser.add_argument(
        "--requests", type=int, default=None, help="cap every flow at this many requests"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", default="", help="run only cases whose name contains this")
    parser.add_argument("--new-keys", default="", help="results.json keys the new build adds")
    parser.add_argument(
        "--after-set",
        action="append",
        default=[],
        help="override for the new build's runs only (repeatable)",
    )
    args = parser.parse_args()
    NEW_KEYS.extend(k for k in args.new_keys.split(",") if k)
    AFTER_SETS.extend(args.after_set)
    selected = [c for c in cases(args.requests) if args.only in c.name]
    failures = 0
    with (
        tempfile.TemporaryDirectory(prefix="same-bytes-") as scratch,
        concurrent.futures.ThreadPoolExecutor(args.jobs) as pool,
    ):
        futures = {
            pool.submit(compare, c, args.before, args.after, Path(scratch)): c for c in selected
        }
        skipped = 0
        for future in concurrent.futures.as_completed(futures):
            case, problem = futures[future], future.result()
            if problem == NOT_APPLICABLE:
                skipped += 1
                print(f"n/a     {case.name}: the new build refused {' '.join(AFTER_SETS)}")
                continue
            failures += problem is not None
            print(
                f"{'DIFFERS' if problem else 'same   '} {case.name}"
                + (f": {problem}" if problem else "")
            )
    ran = len(selected) - skipped
    print(
        f"{ran - failures} of {ran} cases give the same bytes"
        + (f" ({skipped} refused the override)" if skipped else "")
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
