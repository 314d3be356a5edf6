"""Feature combinations: the models issue 5 added, run together on two small devices.

Each model (firmware cores, banked DRAM, the SATA/UFS/Open-Channel interfaces, cache
organisations with read-ahead, block/hybrid/super-page mapping, data emulation, power) was built
and tested alone. This script runs them in combination: every (device, interface, mapping)
triple once, the other options chosen so that every pair of option values appears in at least
one run (all-pairs). Each run goes twice, and is checked for:

- completion: no panic and no error, except a config error that names a field (listed, so a
  reader can judge whether the refusal is reasonable);
- data: with `data.emulate` on, `data.mismatched_sectors` is 0 (every read returned the bytes the
  host last wrote there);
- the latency breakdown: for the device's and every flow's reads and writes, the steps of
  `latency_breakdown_us` sum to `latency_us.mean` (relative error under 1e-6);
- requests: each flow completed every request it was configured to issue;
- determinism: the two runs give the same results.json apart from the wall-clock times.

The devices: examples/data-emulation.toml (512 MiB of MLC-class flash) and
examples/amber-intel750.toml (the Intel 750-like drive), each with its flows cut to a few
thousand requests and a small sequential reader added that caches reads (read-ahead needs one).
The Amber drive's `steady` preconditioning ages a page-mapped FTL only, so under the other
mapping families it starts from `fill` at the same occupancy.

Run: .venv/bin/python validation/feature_combinations.py [--only N] [--list]
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import math
import sys
import time
import tomllib
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import common
import ssdlab

EXAMPLES = common.ROOT / "examples"
BASES = {"small": "data-emulation.toml", "amber": "amber-intel750.toml"}
# Requests per flow name, cut from the examples' hundreds of thousands.
REQUESTS = {"writer": 3000, "reader": 2000, "streamer": 600}
STREAMER = {
    "name": "streamer",
    "read_fraction": 1.0,
    "address": "sequential",
    "request_size": "16KiB",
    "cache_mode": "read",
    "queue_depth": 2,
}
# The option values swept. The devices and interface x mapping go in full; the rest all-pairs.
FACTORS: dict[str, list[str]] = {
    "device": ["small", "amber"],
    "interface": ["nvme", "sata", "ufs", "open_channel"],
    "mapping": ["page", "block", "hybrid", "super_page"],
    "firmware": ["off", "on"],
    "dram": ["serial", "banked"],
    "cache": ["fully", "set4_ra", "fully2p_random_ra"],
    "data": ["on", "off"],
    "power": ["on", "off"],
}
FULL = ("device", "interface", "mapping")
# Keys that measure the host machine, not the model.
WALL_KEYS = (("wall_seconds",), ("setup_wall_seconds",), ("precondition", "wall_seconds"))
REL_TOL = 1e-6


def combinations() -> list[dict[str, str]]:
    """Every (device, interface, mapping) triple, the other factors filled greedily so that every
    pair of values of any two factors appears; extra rows where the triples left a pair out."""
    names = list(FACTORS)
    rest = [n for n in names if n not in FULL]
    uncovered = {
        (a, va, b, vb)
        for a, b in itertools.combinations(names, 2)
        for va in FACTORS[a]
        for vb in FACTORS[b]
    }

    def pairs(row: dict[str, str]) -> set[tuple[str, str, str, str]]:
        return {(a, row[a], b, row[b]) for a, b in itertools.combinations(names, 2)}

    used = {(n, v): 0 for n in names for v in FACTORS[n]}

    def fill(row: dict[str, str]) -> dict[str, str]:
        # One factor at a time, the value that covers most still-uncovered pairs with what is
        # set so far; on ties the value used least so far, then the first (deterministic).
        for name in rest:
            if name not in row:
                row[name] = max(
                    FACTORS[name],
                    key=lambda value, name=name: (
                        sum(
                            (other, v, name, value) in uncovered
                            or (name, value, other, v) in uncovered
                            for other, v in row.items()
                        ),
                        -used[name, value],
                    ),
                )
            used[name, row[name]] += 1
        return row

    rows = []
    for values in itertools.product(*(FACTORS[n] for n in FULL)):
        row = fill(dict(zip(FULL, values, strict=True)))
        uncovered -= pairs(row)
        rows.append(row)
    while uncovered:
        a, va, b, vb = min(uncovered)
        row = fill({a: va, b: vb} | {n: FACTORS[n][0] for n in FULL if n not in (a, b)})
        row = {n: row[n] for n in names}
        uncovered -= pairs(row)
        rows.append(row)
    return [{n: row[n] for n in names} for row in rows]


def config_for(combo: dict[str, str]) -> dict[str, Any]:
    """The config of one combination: the device's example with its flows cut and the options
    of the combination set."""
    with open(EXAMPLES / BASES[combo["device"]], "rb") as f:
        doc = tomllib.load(f)
    doc = copy.deepcopy(doc)
    flows = [f for f in doc["flows"] if f["name"] in REQUESTS] + [dict(STREAMER)]
    for flow in flows:
        flow["requests"] = REQUESTS[flow["name"]]
    doc["flows"] = flows
    doc.setdefault("host", {})["interface"] = combo["interface"]
    doc.setdefault("ftl", {})["mapping"] = combo["mapping"]
    if combo["mapping"] != "page" and combo["device"] == "amber":
        doc["precondition"] = {"mode": "fill", "occupancy": doc["precondition"]["occupancy"]}
    doc.setdefault("firmware", {})["enabled"] = combo["firmware"] == "on"
    doc.setdefault("dram", {})["model"] = combo["dram"]
    cache = doc.setdefault("cache", {})
    page_bytes = ssdlab_size(doc["flash"]["page_size"])
    if combo["cache"] == "set4_ra":
        # 4-way sets of one-page lines (8 KiB on the small device, 16 KiB on the Amber one).
        cache.update(organisation="set_associative", ways=4, line_size=f"{page_bytes}B")
        cache["read_ahead"] = True
    elif combo["cache"] == "fully2p_random_ra":
        cache.update(line_size=f"{2 * page_bytes}B", replacement="random", read_ahead=True)
    doc.setdefault("data", {})["emulate"] = combo["data"] == "on"
    doc.setdefault("power", {})["enabled"] = combo["power"] == "on"
    return doc


def ssdlab_size(text: str) -> int:
    units = {"KiB": 1024, "MiB": 1024**2, "B": 1}
    for unit, scale in units.items():
        if text.endswith(unit):
            return int(text[: -len(unit)]) * scale
    raise ValueError(text)


def run_once(combo: dict[str, str]) -> dict[str, Any]:
    """One run: its results.json as a dict, or the error it stopped with."""
    try:
        results = ssdlab.simulate(config_for(combo), base_dir=EXAMPLES)
    except ssdlab.ConfigError as e:
        return {"config_error": str(e)}
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # a Rust panic is pyo3's PanicException, a BaseException
        return {"error": f"{type(e).__name__}: {e}"}
    return json.loads(results.to_json())


def run_twice(combo: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    return run_once(combo), run_once(combo)


def without_wall(doc: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    for path in WALL_KEYS:
        parent = doc
        for key in path[:-1]:
            parent = parent.get(key) or {}
        parent.pop(path[-1], None)
    return doc


def check(combo: dict[str, str], first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    """What is wrong with a combination's two runs (empty: nothing)."""
    if "error" in first:
        return [first["error"]]
    if "config_error" in first:
        return []
    problems = []
    if combo["data"] == "on":
        data = first.get("data") or {}
        if data.get("mismatched_sectors", -1) != 0:
            problems.append(f"data.mismatched_sectors = {data.get('mismatched_sectors')}")
    groups = [("device", first["device"])] + [(f["name"], f) for f in first["flows"]]
    for name, group in groups:
        for op in ("reads", "writes"):
            stats = group[op]
            if stats["count"] == 0:
                continue
            total = sum(stats["latency_breakdown_us"].values())
            mean = stats["latency_us"]["mean"]
            if not math.isclose(total, mean, rel_tol=REL_TOL):
                problems.append(f"{name}.{op}: breakdown sums to {total!r}, mean {mean!r}")
    for flow in first["flows"]:
        done = flow["reads"]["count"] + flow["writes"]["count"]
        wanted = REQUESTS[flow["name"]]
        if flow["requests"] != wanted or done != wanted:
            problems.append(
                f"{flow['name']}: {done} completed, {flow['requests']} issued, {wanted} configured"
            )
    if without_wall(first) != without_wall(second):
        a, b = without_wall(first), without_wall(second)
        differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        problems.append(f"not deterministic: {', '.join(differ)} differ")
    return problems


def label(combo: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in combo.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", type=int, nargs="*", help="run only these combination numbers")
    parser.add_argument("--list", action="store_true", help="print the combinations and stop")
    args = parser.parse_args()
    combos = combinations()
    chosen = list(enumerate(combos)) if not args.only else [(i, combos[i]) for i in args.only]
    if args.list:
        for i, combo in chosen:
            print(f"{i:3d} {label(combo)}")
        return 0
    start = time.time()
    failures, refusals = [], []
    with ProcessPoolExecutor(max_workers=common.jobs()) as pool:
        outcomes = pool.map(run_twice, [c for _, c in chosen])
        for (i, combo), (first, second) in zip(chosen, outcomes, strict=True):
            problems = check(combo, first, second)
            status = "FAIL" if problems else "ok"
            if "config_error" in first:
                status = "refused"
                refusals.append((i, combo, first["config_error"]))
            print(f"{i:3d} {status:7s} {label(combo)}", file=sys.stderr, flush=True)
            for p in problems:
                print(f"      {p}", file=sys.stderr, flush=True)
            if problems:
                failures.append((i, combo, problems))
    ran = len(chosen) - len(refusals)
    print(f"\n{len(chosen)} combinations ({ran} ran twice, {len(refusals)} refused by the config")
    print(f"check), {len(failures)} failed; {time.time() - start:.0f} s wall.")
    for i, combo, message in refusals:
        print(f"- refused {i} ({label(combo)}): {message}")
    for i, combo, problems in failures:
        print(f"- FAILED {i} ({label(combo)}): {'; '.join(problems)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
