"""The long fuzz campaign behind `make fuzz`: many inputs, each in its own process with time and
memory limits, every run checked against the invariants of fuzz/checks.py, every defect written
to a folder as a reproducer.

    .venv/bin/python fuzz/campaign.py --kind data --runs 10000 --jobs 2 --out fuzz-out

Kinds:
- `data`: random feature combinations with data emulation on (fuzz/generators.py
  `data_config`); every fifth input runs twice to check that the same seed gives the same bytes.
- `config`: hostile mutations of random valid configs (`mutate_config`): each must run cleanly or
  be refused with a message that names the field.
- `trace`: damaged traces of every format (`trace_text`): each must replay cleanly or be refused
  naming the file and line.

Input i of a campaign is rebuilt from (`--seed`, kind, i) alone, so a reproducer is also
`--kind K --first i --runs 1`. Each input runs in a child forked from this process (the model is
loaded once), under RLIMIT_AS (`--memory`) and a wall-clock limit (`--timeout`); a child that
dies by a signal (an abort), overruns, or leaves no verdict is a defect as well.

The summary (`summary.json` in the output folder, and one line on stdout) counts runs by outcome;
the exit status is 1 when any defect was found.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import checks
import generators
import ssdlab
from ssdlab.config import dump_toml

KINDS = ("data", "config", "trace")
TRACE_FORMATS = tuple(generators.TRACE_SAMPLES)
TRACE_SUFFIX = {"mqsim": ".trace", "msr": ".csv", "spc": ".csv", "blkparse": ".txt", "fio": ".log"}


def build_input(kind: str, seed: int, index: int) -> dict[str, Any]:
    """Input `index` of a campaign: the config, and the trace file's text for trace inputs."""
    rng = random.Random(f"{seed}/{kind}/{index}")
    if kind == "data":
        return {"config": generators.data_config(rng)}
    if kind == "config":
        base = generators.data_config(rng)
        for flow in base["flows"]:
            flow["requests"] = min(flow["requests"], 300)
        mutated = generators.mutate_config(rng, base)
        return {"config": mutated, "base": base}
    fmt = TRACE_FORMATS[rng.randrange(len(TRACE_FORMATS))]
    name = f"trace{TRACE_SUFFIX[fmt]}"
    return {
        "config": generators.trace_config(rng, fmt, name),
        "trace": (name, generators.trace_text(rng, fmt)),
    }


# A run that asks for more requests than this may outlast the time limit by design (a hostile
# mutation sets `requests = 2**40`): with a budget, such a run is stopped once the budget is
# spent and reported as `long`, not as a hang, provided every step kept returning.
LONG_REQUESTS = 10_000_000


class BudgetSpentError(Exception):
    """Raised from the progress callback when a long run's budget is spent."""


def requested(config: Any) -> int:
    """The requests a config's flows ask for (0 where they cannot be read as numbers)."""
    flows = config.get("flows") if isinstance(config, dict) else None
    counts = (
        [f.get("requests") for f in flows if isinstance(f, dict)] if isinstance(flows, list) else []
    )
    return sum(c for c in counts if isinstance(c, int) and not isinstance(c, bool) and c > 0)


def budget(seconds: float, asked: int):
    """A progress callback that stops the run after `seconds` of wall time."""
    started = time.perf_counter()

    def report(fraction: float) -> None:
        if time.perf_counter() - started > seconds:
            raise BudgetSpentError(
                f"stopped after {seconds:.0f} s, {fraction:.3g} of its work done: the input asks "
                f"for {asked:,} requests (a long run, not a hang: every step returned)"
            )

    return report


def judge(
    kind: str, item: dict[str, Any], folder: Path, twice: bool, budget_s: float | None = None
) -> dict[str, Any]:
    """Run one input in this process and say what happened. With `budget_s`, a run that asks
    for more than LONG_REQUESTS requests is stopped after that long (verdict `long`)."""
    config = item["config"]
    if "trace" in item:
        name, text = item["trace"]
        (folder / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    asked = requested(config)
    progress = budget(budget_s, asked) if budget_s is not None and asked > LONG_REQUESTS else None
    started = time.perf_counter()
    try:
        results = json.loads(ssdlab.simulate(config, base_dir=folder, progress=progress).to_json())
    except BudgetSpentError as e:
        return {"verdict": "long", "message": str(e)}
    except ssdlab.EndOfLifeError as e:
        # A drive asked for more writes than its blocks' P/E cycles allow wears out: blocks are
        # retired at ftl.pe_cycle_limit until a plane has none to write to, and the run ends
        # with that error, as it should. Any other stall (no block retired) is a defect.
        if str(e).startswith("end of life: ") and " blocks were retired after " in str(e):
            return {"verdict": "worn-out", "message": str(e)}
        return {
            "verdict": "crash",
            "message": f"{type(e).__name__}: {e}",
            "traceback": traceback.format_exc()[-4000:],
        }
    except (ssdlab.ConfigError, ssdlab.TraceError) as e:
        names = checks.key_names(config) + ([item["trace"][0]] if "trace" in item else [])
        problem = checks.refusal_problem(str(e), names)
        verdict = "unclear" if problem else "refused"
        return {"verdict": verdict, "message": str(e), "problem": problem}
    except BaseException as e:  # a Rust panic reaches Python as PanicException (BaseException)
        integrity = type(e).__name__ == "DataIntegrityError"
        return {
            "verdict": "mismatch" if integrity else "crash",
            "message": f"{type(e).__name__}: {e}",
            "traceback": traceback.format_exc()[-4000:],
        }
    seconds = time.perf_counter() - started
    problems = checks.results_problems(config, results)
    if twice and not problems:
        again = json.loads(ssdlab.simulate(config, base_dir=folder).to_json())
        difference = checks.determinism_problem(results, again)
        if difference:
            problems.append(difference)
    if kind == "config" and not problems:
        silent = silent_acceptance(item["base"], config, results)
        if silent:
            return {"verdict": "silent", "problem": silent, "seconds": seconds}
    if problems:
        verdict = "mismatch" if any(p.startswith("data:") for p in problems) else "invariant"
        return {"verdict": verdict, "problems": problems, "seconds": seconds}
    data = results.get("data") or {}
    return {
        "verdict": "ok",
        "seconds": seconds,
        "verified_sectors": data.get("verified_sectors", 0),
        "requests": sum(f["reads"]["count"] + f["writes"]["count"] for f in results["flows"]),
    }


def silent_acceptance(base: dict[str, Any], mutated: dict[str, Any], results: dict[str, Any]):
    """A mutation that no valid config could hold, accepted without a warning: a NaN or
    infinite number, an unknown key, or a table given as a list."""
    if results.get("warnings"):
        return None
    suspicious = []
    for path, value in checks.walk_numbers(mutated):
        if value != value or value in (float("inf"), float("-inf")):
            suspicious.append(f"{path} = {value}")
    for name in ("chanels", "extra", "Channels", "queue-depth"):
        if name in json.dumps(mutated):
            suspicious.append(f"unknown key {name!r}")
    for section in ("flash", "ftl", "cache", "host", "run", "data", "dram", "controller"):
        if section in base and isinstance(mutated.get(section), list):
            suspicious.append(f"[{section}] given as a list")
    return "; ".join(suspicious) or None


def run_child(kind: str, seed: int, index: int, args: argparse.Namespace, verdict_path: Path):
    """In the forked child: limits, the input, its verdict written for the parent, then exit."""
    memory = args.memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    code = 0
    with tempfile.TemporaryDirectory(prefix="ssdlab-fuzz-") as tmp:
        try:
            item = build_input(kind, seed, index)
            twice = kind == "data" and index % 5 == 0
            outcome = judge(kind, item, Path(tmp), twice, budget_s=args.timeout / 2)
        except BaseException as e:  # the harness itself must not hide a defect
            outcome = {"verdict": "crash", "message": f"harness: {type(e).__name__}: {e}"}
        verdict_path.write_text(json.dumps(outcome, default=str))
    os._exit(code)


def write_reproducer(out: Path, kind: str, seed: int, index: int, outcome: dict[str, Any]):
    item = build_input(kind, seed, index)
    folder = out / "repro" / f"{kind}-{index:06d}"
    folder.mkdir(parents=True, exist_ok=True)
    comments = [
        f"fuzz campaign: --seed {seed} --kind {kind} --first {index} --runs 1",
        f"verdict: {outcome['verdict']}",
    ]
    detail = outcome.get("problem") or outcome.get("message") or outcome.get("problems")
    comments += [f"  {line}" for line in json.dumps(detail, default=str)[:2000].splitlines()]
    try:
        text = dump_toml(item["config"], comments)
    except Exception:  # a hostile value TOML cannot hold (NUL, a key that is "")
        text = (
            "\n".join(f"# {c}" for c in comments) + "\n" + json.dumps(item["config"], default=str)
        )
        (folder / "config.json").write_text(text)
    else:
        (folder / "config.toml").write_text(text)
    if "trace" in item:
        name, trace = item["trace"]
        (folder / name).write_text(trace, encoding="utf-8", errors="surrogatepass")
    (folder / "OUTCOME.json").write_text(json.dumps(outcome, indent=1, default=str))


def campaign(args: argparse.Namespace) -> dict[str, Any]:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kinds = KINDS if args.kind == "all" else (args.kind,)
    queue = [(k, i) for i in range(args.first, args.first + args.runs) for k in kinds]
    counts: dict[str, int] = {}
    by_kind: dict[str, dict[str, int]] = {k: {} for k in kinds}
    defects: list[dict[str, Any]] = []
    verified = requests = 0
    running: dict[int, tuple[str, int, float, Path]] = {}
    started = time.time()
    scratch = Path(tempfile.mkdtemp(prefix="ssdlab-fuzz-verdicts-"))
    while queue or running:
        while queue and len(running) < args.jobs:
            kind, index = queue.pop(0)
            verdict_path = scratch / f"{kind}-{index}.json"
            pid = os.fork()
            if pid == 0:
                run_child(kind, args.seed, index, args, verdict_path)
            running[pid] = (kind, index, time.time(), verdict_path)
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.time()
            for child, (_kind, _index, since, _path) in running.items():
                if now - since > args.timeout:
                    os.kill(child, signal.SIGKILL)
            time.sleep(0.005)
            continue
        kind, index, since, verdict_path = running.pop(pid)
        if verdict_path.exists():
            outcome = json.loads(verdict_path.read_text())
            verdict_path.unlink()
        elif os.WIFSIGNALED(status) and time.time() - since > args.timeout:
            outcome = {"verdict": "timeout", "message": f"ran past {args.timeout} s"}
        elif os.WIFSIGNALED(status):
            outcome = {"verdict": "crash", "message": f"killed by signal {os.WTERMSIG(status)}"}
        else:
            outcome = {"verdict": "crash", "message": f"exit {os.WEXITSTATUS(status)}, no verdict"}
        verdict = outcome["verdict"]
        counts[verdict] = counts.get(verdict, 0) + 1
        by_kind[kind][verdict] = by_kind[kind].get(verdict, 0) + 1
        verified += outcome.get("verified_sectors", 0)
        requests += outcome.get("requests", 0)
        if verdict not in ("ok", "refused", "long", "worn-out"):
            defects.append({"kind": kind, "index": index, **outcome})
            write_reproducer(out, kind, args.seed, index, outcome)
            print(
                f"defect: {kind} {index}: {verdict}: "
                f"{outcome.get('problem') or outcome.get('message') or outcome.get('problems')}",
                file=sys.stderr,
            )
        done = sum(counts.values())
        if args.progress and done % args.progress == 0:
            print(
                f"... {done} runs, {len(defects)} defects, {time.time() - started:.0f} s",
                file=sys.stderr,
            )
    os.rmdir(scratch)
    summary = {
        "seed": args.seed,
        "kinds": list(kinds),
        "runs": sum(counts.values()),
        "outcomes": counts,
        "by_kind": by_kind,
        "defects": len(defects),
        "verified_sectors": verified,
        "requests": requests,
        "wall_seconds": round(time.time() - started, 1),
        "jobs": args.jobs,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    (out / "defects.json").write_text(json.dumps(defects, indent=1, default=str))
    return summary


def parse_size(text: str) -> int:
    units = {"GiB": 2**30, "MiB": 2**20}
    for unit, scale in units.items():
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * scale)
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=(*KINDS, "all"), default="all")
    parser.add_argument("--runs", type=int, default=200, help="inputs per kind")
    parser.add_argument("--first", type=int, default=0, help="index of the first input")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per input")
    parser.add_argument("--memory", default="4GiB", help="address-space limit per input")
    parser.add_argument("--out", default="fuzz-out")
    parser.add_argument("--progress", type=int, default=0, help="print every N runs")
    args = parser.parse_args(argv)
    args.memory_bytes = parse_size(args.memory)
    summary = campaign(args)
    outcomes = ", ".join(f"{n} {v}" for v, n in sorted(summary["outcomes"].items()))
    print(
        f"fuzz campaign: {summary['runs']} runs ({outcomes}); {summary['defects']} defects; "
        f"{summary['verified_sectors']:,} sectors verified; {summary['wall_seconds']} s; "
        f"reproducers in {args.out}/repro"
    )
    return 1 if summary["defects"] else 0


if __name__ == "__main__":
    sys.exit(main())
