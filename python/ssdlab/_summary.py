"""What `ssdlab run` prints around a run: the notes before it (defaults that make the drive
unlike a fresh one) and the summary after it (the table, GC, starting state, fairness)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from ssdlab._core import ConfigError

# rich is imported where a table is printed: `ssdlab run` reads `default_notes` before its
# simulation and imports rich on the preload thread during it (ssdlab._console).
if TYPE_CHECKING:
    from rich.console import Console

    from ssdlab.results import Fairness, OpStats, Results


def default_notes(config: Path, overrides: list[str]) -> list[str]:
    """The defaults that make the drive behave unlike a fresh one, said before the run when the
    config leaves them out (issue 19, item 9): the steady-state start, and GC's reserve."""
    from ssdlab.api import load_document

    try:
        document = load_document(config, overrides)[0]
    except (ConfigError, OSError):
        return []  # the run itself reports the problem
    notes = []
    if "precondition" not in document:
        notes.append(
            "the drive starts in steady state, not fresh: by default (precondition.mode = "
            '"steady") every page the flows address holds data, aged by 4 drive writes '
            '(docs/steady-state.md); set precondition.mode = "none" for a fresh, empty drive'
        )
    ftl = document.get("ftl", {}) if isinstance(document.get("ftl"), dict) else {}
    flows = document.get("flows", [])
    flows = flows if isinstance(flows, list) else []
    read_fractions = [_number(f.get("read_fraction", 0.0)) for f in flows if isinstance(f, dict)]
    writes = any(r is not None and r < 1.0 for r in read_fractions)
    spare = _number(ftl.get("over_provisioning", 0.07))
    threshold = _number(ftl.get("gc_threshold", 0.05))
    defaulted = "over_provisioning" not in ftl or "gc_threshold" not in ftl
    # A value that is not a number is the run's to refuse, with its field named: no note.
    if writes and defaulted and spare is not None and threshold is not None:
        notes.append(
            "GC reserve by default: "
            f"{spare:.0%} of the flash is spare "
            f"(ftl.over_provisioning) and GC starts when a plane's free blocks fall below "
            f"{threshold:.0%} (ftl.gc_threshold)"
        )
    return notes


def _number(value: object) -> float | None:
    """`value` if the config gave a number there (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def latency_text(value: float | None) -> str:
    """A latency figure, or a dash where it is undefined (the op never ran)."""
    return "-" if value is None or math.isnan(value) else f"{value:.1f}"


def print_summary(stdout: Console, results: Results) -> None:
    """The table of flows and ops, the device line, GC, data checks, the starting state and the
    run's times, on `stdout` (the caption says what the device rows cover)."""
    from rich import box
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    flows_timed = len(results.flows) > 1 or any(
        abs(f.interval_seconds - results.simulated_seconds) > 1e-9 for f in results.flows
    )
    caption = "latencies in microseconds"
    if flows_timed:
        # Why a device row's IOPS is not the sum of its flows' (issue 19, item 3).
        caption += (
            "; each flow over its own time (first arrival to last completion), the device "
            f"rows over the whole run ({results.simulated_seconds:.6f} s)"
        )
    table = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        padding=(0, 1, 0, 0),
        caption=caption,
        caption_justify="left",
    )
    # In a narrow terminal the flow names wrap; the numbers never get cut.
    table.add_column("flow", overflow="fold", min_width=8)
    table.add_column("op", no_wrap=True)
    # The fixed percentiles and those run.percentiles adds, in percentile order.
    percentiles = {"p50": 50.0, "p99": 99.0, "p99_9": 99.9}
    for name in results.device.reads.latency_us.extra:
        percentiles[name] = float(name[1:].replace("_", "."))
    order = sorted(percentiles, key=percentiles.__getitem__)
    labels = ["min", "mean", "stdev", *(n.replace("_", ".") for n in order), "max"]
    for column in ("requests", "IOPS", "MiB/s", *labels):
        table.add_column(column, justify="right", no_wrap=True)

    def add(name: str, op: str, s: OpStats, style: str | None = None) -> None:
        if s.count == 0:
            return
        lat = s.latency_us
        named = {**lat.extra, "p50": lat.p50, "p99": lat.p99, "p99_9": lat.p99_9}
        figures = [lat.min, lat.mean, lat.stdev, *(named.get(n) for n in order), lat.max]
        table.add_row(
            Text(name),
            op,
            f"{s.count:,}",
            f"{s.iops:,.0f}",
            f"{s.bandwidth_mib_s:,.1f}",
            *(latency_text(x) for x in figures),
            style=style,
        )

    for flow in results.flows:
        add(flow.name, "read", flow.reads)
        add(flow.name, "write", flow.writes)
    table.add_section()
    device = results.device
    add("device", "read", device.reads, style="bold")
    add("device", "write", device.writes, style="bold")
    # Never crop numbers: a table wider than the terminal is printed whole and left to wrap.
    needed = Measurement.get(stdout, stdout.options, table).minimum
    stdout.print(table, width=max(stdout.width, needed), crop=False)

    gc = device.gc
    stdout.print(f"device: {device.iops:,.0f} IOPS, {device.bandwidth_mib_s:,.1f} MiB/s")
    wa = gc.write_amplification
    stdout.print(
        f"GC: {gc.blocks_erased:,} blocks erased, {gc.pages_moved:,} pages moved, "
        f"write amplification {'- (no page programmed)' if wa is None else f'{wa:.3f}'}"
    )
    started = starting_state(results)
    if started:
        stdout.print(started)
    if results.data is not None:
        d = results.data
        stdout.print(
            f"data: {d.verified_sectors:,} read sectors verified, "
            f"{d.mismatched_sectors:,} mismatched, {d.skipped_sectors:,} undefined (not checked)"
        )
    stdout.print(
        f"simulated {results.simulated_seconds:.6f} s in {results.wall_seconds:.3f} s wall, "
        f"{results.events:,} events"
    )


def starting_state(results: Results) -> str:
    """How full the drive started and in what state (results.json `precondition`)."""
    p = results.precondition
    if p is None:
        return ""
    if p.mode == "none":
        return "started: empty (precondition.mode = none)"
    state = {
        "fill": "filled without aging (precondition.mode = fill)",
        "steady": "in steady state",
        "simulate": "aged by simulated writes",
    }.get(p.mode, p.mode)
    text = f"started: {p.occupancy:.0%} full, {state}"
    if p.mode in ("steady", "simulate"):
        wa = "-" if p.write_amplification is None else f"{p.write_amplification:.2f}"
        text += f" after {p.drive_writes:.2f} drive writes (aging write amplification {wa})"
    return text + f"; {p.free_blocks:,} free blocks"


def print_fairness(stdout: Console, fairness: Fairness) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1, 0, 0))
    table.add_column("flow", overflow="fold", min_width=8)
    for column in ("shared mean", "alone mean", "slowdown"):
        table.add_column(column, justify="right", no_wrap=True)
    for name, slowdown in fairness.slowdown.items():
        table.add_row(
            Text(name),
            f"{fairness.shared_mean_us[name]:.1f}",
            f"{fairness.alone_mean_us[name]:.1f}",
            f"{slowdown:.3f}",
        )
    stdout.print(table)
    stdout.print(
        f"fairness {fairness.fairness:.3f} (min/max slowdown), "
        f"weighted speedup {fairness.weighted_speedup:.3f}"
    )
