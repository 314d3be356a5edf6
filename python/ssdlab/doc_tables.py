"""Tables of figures in the docs, computed by the code they describe.

A table lives in its page between two markers::

    <!-- generated: analytic-agreement (python -m ssdlab.doc_tables) -->
    | ... |
    <!-- end generated -->

and :data:`TABLES` names the function that computes it. ``tests/test_docs.py`` fails when a
committed table differs from what its function gives now, so a change to the model that moves a
figure also moves the docs (the prose around a table says what the figures mean; reread it when
a table changes).

    python -m ssdlab.doc_tables            # rewrite every table in place
    python -m ssdlab.doc_tables --check    # exit 1 if one is out of date
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BLOCK = re.compile(
    r"(?P<head><!-- generated: (?P<name>[\w-]+)[^\n]*-->\n)"
    r"(?P<body>.*?)(?P<tail><!-- end generated -->)",
    re.S,
)
KIB = 1024


@dataclass(frozen=True)
class Table:
    """A generated table: the page it is in (from the repository root) and what computes it."""

    page: str
    render: Callable[[Path], str]
    about: str


def analytic_agreement(root: Path) -> str:
    """The closed form of Yoo et al. beside the simulation, one request at a time on the X25-M
    example (as crates/ssdlab-core/tests/analytic_agreement.rs runs it, which asserts the
    bounds): 4 KiB random, then sequential requests of 8 to 512 KiB."""
    import ssdlab
    from ssdlab.config import load_config

    config = root / "examples" / "intel-x25m.toml"
    device = {k: v for k, v in load_config(config).items() if k != "flows"}
    sizes = [4 * KIB << i for i in range(8)]
    model = {r.size_bytes: r for r in ssdlab.analytic(config, request_sizes=sizes).requests}

    def simulated_us(read: bool, size: int) -> float:
        flow = {
            "read_fraction": 1.0 if read else 0.0,
            "request_size": f"{size}B",
            "alignment": f"{size}B",
            "address": "uniform" if size == 4 * KIB else "sequential",
            "working_set": 0.4,
            "queue_depth": 1,
            "requests": 400,
        }
        results = ssdlab.simulate({**device, "flows": [flow]}, base_dir=config.parent)
        ops = results.device.reads if read else results.device.writes
        return ops.latency_us.mean

    lines = [
        "| request | model read us | sim read us | diff | model write us | sim write us | diff |",
        "|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        m = model[size]
        read, write = simulated_us(True, size), simulated_us(False, size)
        kind = f"{size // KIB} KiB" + (" random" if size == 4 * KIB else " seq")
        if size == 4 * KIB:  # one page: IOPS, as the paper gives them
            cells = [
                f"{m.read_us:.1f} ({m.read_iops:.1f} IOPS)",
                f"{read:.1f} ({1e6 / read:.0f})",
                _diff(read, m.read_us),
                f"{m.write_us:.1f} ({m.write_iops:.1f} IOPS)",
                f"{write:.1f} ({1e6 / write:.1f})",
                _diff(write, m.write_us),
            ]
        else:
            cells = [
                f"{m.read_us:.1f}",
                f"{read:.1f}",
                _diff(read, m.read_us),
                f"{m.write_us:.1f}",
                f"{write:.1f}",
                _diff(write, m.write_us),
            ]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _diff(sim: float, model: float) -> str:
    return f"{(sim - model) / model * 100:+.2f} %"


# The command docs/studies.md shows, with each scheduler.
STUDY_CONFIG = "examples/mqsim-table3-480gb.toml"
STUDY_OVERRIDES = ("flows.0.requests=5000", "flows.1.requests=50000")
STUDY_SCHEDULERS = ("out-of-order", "flow-fair", "flin")


def scheduler_slowdowns(root: Path) -> str:
    """The studies page's example (a QD 2 reader beside a QD 32 reader on the MQSim paper's
    Table 3 drive) with each flow alone too, under each fairness-minded scheduler."""
    import ssdlab

    lines = [
        "| `controller.scheduling` | light (QD 2) slowdown | heavy (QD 32) slowdown "
        "| fairness F | weighted speedup |",
        "|---|---|---|---|---|",
    ]
    for scheduling in STUDY_SCHEDULERS:
        results = ssdlab.simulate(
            root / STUDY_CONFIG,
            overrides=[*STUDY_OVERRIDES, f"controller.scheduling={scheduling}"],
            alone=True,
        )
        f = results.fairness
        assert f is not None
        lines.append(
            f"| `{scheduling}` | {f.slowdown['light']:.3f} | {f.slowdown['heavy']:.3f} "
            f"| {f.fairness:.3f} | {f.weighted_speedup:.3f} |"
        )
    return "\n".join(lines) + "\n"


def read_ahead(root: Path) -> str:
    """docs/cache.md's example: examples/read-ahead.toml with read-ahead off and on."""
    import ssdlab

    lines = ["| | mean latency | p99 | bandwidth | cache hits |", "|---|---|---|---|---|"]
    for on in (False, True):
        results = ssdlab.simulate(
            root / "examples" / "read-ahead.toml",
            overrides=[f"cache.read_ahead={'true' if on else 'false'}"],
        )
        reads, flow = results.device.reads, results.flows[0]
        lines.append(
            f"| read-ahead {'on' if on else 'off'} | {reads.latency_us.mean:.1f} us "
            f"| {reads.latency_us.p99:.1f} us | {reads.bandwidth_mib_s:,.1f} MiB/s "
            f"| {flow.cache_hit_rate * 100:.2f} % |"
        )
    return "\n".join(lines) + "\n"


TABLES = {
    "analytic-agreement": Table(
        "README.md", analytic_agreement, "closed form against the simulator on the X25-M"
    ),
    "read-ahead": Table("docs/cache.md", read_ahead, "read-ahead off and on, the example"),
    "scheduler-slowdowns": Table(
        "docs/studies.md", scheduler_slowdowns, "slowdowns of the --alone example by scheduler"
    ),
}


def blocks(text: str) -> list[str]:
    """Names of the generated tables in a page, in order."""
    return [m["name"] for m in BLOCK.finditer(text)]


def refresh(text: str, root: Path, only: str | None = None) -> str:
    """`text` with every generated table (or only the one named) computed afresh."""

    def replace(m: re.Match[str]) -> str:
        name = m["name"]
        if name not in TABLES:
            raise KeyError(f"unknown generated table `{name}`; known: {', '.join(TABLES)}")
        if only is not None and name != only:
            return m.group(0)
        return m["head"] + TABLES[name].render(root) + m["tail"]

    return BLOCK.sub(replace, text)


def committed(root: Path, name: str) -> str:
    """The body of table `name` as its page holds it now."""
    text = (root / TABLES[name].page).read_text(encoding="utf-8")
    for m in BLOCK.finditer(text):
        if m["name"] == name:
            return m["body"]
    raise KeyError(f"{TABLES[name].page} has no generated table `{name}`")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Recompute the docs' tables of figures.")
    parser.add_argument("--check", action="store_true", help="exit 1 if a table is out of date")
    parser.add_argument("--root", type=Path, default=Path("."), help="repository root")
    parser.add_argument("names", nargs="*", help="only these tables (default: all)")
    args = parser.parse_args(argv)
    stale = []
    for name in args.names or list(TABLES):
        table = TABLES[name]
        page = args.root / table.page
        text = page.read_text(encoding="utf-8")
        new = refresh(text, args.root, only=name)
        if new != text:
            stale.append(f"{table.page}: {name}")
            if not args.check:
                page.write_text(new, encoding="utf-8")
    for line in stale:
        print(("out of date: " if args.check else "rewrote ") + line)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
