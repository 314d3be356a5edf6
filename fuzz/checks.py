"""The invariants every fuzzed run must keep, and the judgement of a refusal's message.

Shared by the Hypothesis tests (tests/test_fuzz.py) and the long campaign (fuzz/campaign.py).
A run either ends in results that keep every invariant below, or in a clean refusal: a
`ConfigError` or `TraceError` whose message names the field, file or line it is about. Anything
else (a panic, an abort, a hang, a number that is NaN, a read that returned other data than the
last write) is a defect.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from typing import Any

# Keys that measure the machine the simulator ran on, not the model: they differ between runs.
WALL_KEYS = (("wall_seconds",), ("setup_wall_seconds",), ("precondition", "wall_seconds"))
# Words that show an error was written for a developer, not for the user who gave the input.
UNCLEAR_MARKERS = (
    "not valid JSON",
    "expected expected",
    "Illegal seek",
    "panicked",
    "Traceback",
    "RUST_BACKTRACE",
    "index out of bounds",
    "called `Option::unwrap()`",
    "called `Result::unwrap()`",
    "attempt to ",  # arithmetic overflow panics
    # serde's Rust-side words (config/wording.rs puts them in TOML's terms)
    "invalid type:",
    "invalid value:",
    "expected u32",
    "expected u64",
    "expected f64",
    "expected struct",
    "expected enum",
)


def walk_numbers(node: Any, path: str = "") -> list[tuple[str, float]]:
    """Every number in a results document, with its path."""
    out: list[tuple[str, float]] = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(walk_numbers(v, f"{path}.{k}" if path else str(k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(walk_numbers(v, f"{path}[{i}]"))
    elif isinstance(node, bool):
        pass
    elif isinstance(node, int | float):
        out.append((path, float(node)))
    return out


def without_wall(doc: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    for key_path in WALL_KEYS:
        parent: Any = doc
        for key in key_path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(parent, dict):
            parent.pop(key_path[-1], None)
    return doc


def results_problems(config: dict[str, Any], results: dict[str, Any]) -> list[str]:
    """What is wrong with one run's results.json (empty: nothing).

    - data: with data emulation on, no sector read back other than its last write;
    - completion: every synthetic flow bounded by a request count alone issued and completed
      exactly that many requests (none lost, none counted twice);
    - sums: the device's reads and writes are the sums of its flows';
    - numbers: no NaN, no infinity, no negative count, latency, rate or energy (the config echo
      is the user's own input and is not checked).
    """
    problems: list[str] = []
    data = results.get("data")
    if (config.get("data") or {}).get("emulate"):
        if not isinstance(data, dict):
            problems.append("data: missing although data.emulate = true")
        elif data.get("mismatched_sectors") != 0:
            first = data.get("first_mismatch")
            problems.append(f"data: {data.get('mismatched_sectors')} mismatched sectors ({first})")

    flows_cfg = config.get("flows") or []
    flows = results.get("flows") or []
    stopped_early = any("stall" in w or "stopped" in w for w in results.get("warnings", []))
    bounded_by_time = bool((config.get("run") or {}).get("max_simulated_time"))
    # Zone writers also send resets, which are neither reads, writes nor refusals and are counted
    # for the zones as a whole (zns.resets): their flows are checked together against it.
    zoned_done = zoned_wanted = 0
    for cfg, flow in zip(flows_cfg, flows, strict=False):
        if not isinstance(cfg, dict) or cfg.get("kind", "synthetic") != "synthetic":
            continue
        wanted = cfg.get("requests")
        if wanted is None or "duration" in cfg or bounded_by_time or stopped_early:
            continue
        # A refused command completes without being a read or a write (flows[].refused).
        refused = sum(flow.get("refused", {}).values())
        done = flow["reads"]["count"] + flow["writes"]["count"] + refused
        if cfg.get("address") == "zoned":
            zoned_done += done
            zoned_wanted += wanted
        elif done != wanted:
            problems.append(f"flow {flow['name']}: {done} requests completed, {wanted} issued")
    zns = results.get("zns") or {}
    if zoned_wanted:
        others = zns.get("resets", 0)
        if zoned_done + others != zoned_wanted:
            problems.append(
                f"zone writers: {zoned_done} reads, writes and refusals + {others} resets "
                f"completed, {zoned_wanted} issued"
            )
    if zns:
        refused_total = sum(sum(f.get("refused", {}).values()) for f in flows)
        failed = sum((zns.get("failed") or {}).values())
        if refused_total != failed:
            problems.append(
                f"flows were refused {refused_total} commands, zns.failed counts {failed}"
            )

    device = results.get("device") or {}
    for op in ("reads", "writes"):
        total = sum(f[op]["count"] for f in flows)
        if device.get(op, {}).get("count") != total:
            problems.append(
                f"device.{op}.count = {device.get(op, {}).get('count')}, flows sum to {total}"
            )

    for path, value in walk_numbers({k: v for k, v in results.items() if k != "config"}):
        if math.isnan(value) or math.isinf(value):
            problems.append(f"{path} = {value}")
        elif value < 0 and not path.endswith("seed"):
            problems.append(f"{path} = {value} (negative)")
    return problems[:20]


def determinism_problem(first: dict[str, Any], second: dict[str, Any]) -> str | None:
    """None when two runs of the same config and seed gave the same results (wall times aside),
    else the first key path where they differ."""
    a, b = without_wall(first), without_wall(second)
    if a == b:
        return None
    return f"same seed, different results at {_first_difference(a, b)}"


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{path}.{k}" if path else str(k))
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path}: {json.dumps(a)[:80]} vs {json.dumps(b)[:80]}"


def refusal_problem(message: str, names: list[str]) -> str | None:
    """None when a refusal's message is clear: it is not a developer's message (see
    UNCLEAR_MARKERS) and it names something the user wrote: one of `names` (key names, file
    names), a dotted key path, or a file:line."""
    for marker in UNCLEAR_MARKERS:
        if marker in message:
            return f"unclear error ({marker!r}): {message}"
    if not message.strip():
        return "empty error message"
    if any(n and str(n) in message for n in names):
        return None
    # A section the config left out that it needed ("flows: at least one flow is required"):
    # named, though no key of the document holds the name.
    leading = re.match(r"([a-z_]+):", message)
    if leading and leading.group(1) in config_sections():
        return None
    if re.search(
        r"[a-z_]+(\[\d+\])?\.[a-z_]+|[\w.-]+:\d+|flows\[\d+\]|\.(toml|xml|csv|trace)", message
    ):
        return None
    return f"error names no field, file or line: {message}"


@functools.cache
def config_sections() -> frozenset[str]:
    """The top-level keys of a config (`[flows]`, `[ftl]`, `seed`...), from the core's schema."""
    from ssdlab import _core

    return frozenset(json.loads(_core.config_schema_json())["properties"])


def key_names(doc: Any) -> list[str]:
    """Every key of a config document: a clear refusal names one of them."""
    out: list[str] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append(str(k))
            out.extend(key_names(v))
    elif isinstance(doc, list):
        for v in doc:
            out.extend(key_names(v))
    return [k for k in out if len(k) > 2]
