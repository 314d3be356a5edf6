"""Runs side by side: ``ssdlab compare DIR_A DIR_B [...]`` (or ``ssdlab report`` of several
folders) writes one self-contained HTML page comparing their results.

The page names each run by a letter and its folder, lists what differs between their configs
(the config echoes of results.json flattened to ``--set`` keys), sets their devices and starting
states side by side, tabulates every flow's and the device's numbers with the ratio of each run
to the first (B/A), overlays their latency CDFs per flow and operation, and draws the device's
throughput over time for each. Like ``ssdlab report`` the page embeds its charts, has no script
and fetches nothing; it writes no PNG files.
"""

from __future__ import annotations

import json
import math
import os
import string
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ssdlab import _outputs, plots, report_features
from ssdlab.report import (
    DASH,
    Formatted,
    ReportError,
    _is_missing,
    _latency,
    _Matplotlib,
    latency_columns,
)
from ssdlab.report import _Page as Page
from ssdlab.results import Results

# More (flow, op) pairs than this get no CDF chart each (the table still lists them all).
MAX_CDF_PAIRS = 12


class CompareError(ReportError):
    """The folders given cannot be compared: fewer than two, or one is missing or holds no
    results.json; the message names the folder."""


def compare(
    dirs: Iterable[str | os.PathLike[str]], out: str | os.PathLike[str] | None = None
) -> Path:
    """Write an HTML page comparing the runs in `dirs` (results folders, or their
    results.json files) to `out` (default ``compare.html`` in the current folder; a folder
    gets ``compare.html`` inside it) and return its path. Ratios are each run's value over
    the first run's. Raises :class:`CompareError` for fewer than two folders, a missing one
    or one without results.json, and :class:`~ssdlab.ResultsFileError` for a results.json
    that is not a complete result."""
    folders = [Path(d) for d in dirs]
    if len(folders) < 2:
        got = f"one: {folders[0]}" if folders else "none"
        hint = f"; to report on one run: ssdlab report {folders[0]}" if folders else ""
        raise CompareError(f"compare needs two results folders or more (got {got}){hint}")
    for folder in folders:
        _check(folder)
    runs = [Results.load(f) for f in folders]
    target = Path(out) if out is not None else Path("compare.html")
    if target.is_dir():
        target = target / "compare.html"
    labels = run_labels(folders)
    page = Page(None, "ssdlab compare: " + " vs ".join(labels))
    with _Matplotlib("ssdlab compare"):
        _sections(page, runs, labels, folders)
    _outputs.write_text(target, page.html())
    return target


def _check(folder: Path) -> None:
    if folder.is_file() and folder.name == "results.json":
        return
    if not folder.exists():
        raise CompareError(f"{folder}: no such folder")
    if not folder.is_dir():
        raise CompareError(f"{folder}: not a results folder (expected a folder with results.json)")
    if (folder / "results.json").is_file():
        return
    if (folder / "sweep.parquet").is_file():
        raise CompareError(
            f"{folder}: a sweep folder (sweep.parquet), not one run: compare its runs "
            f"({folder / 'runs' / '<run>'}) or report it with ssdlab report {folder}"
        )
    raise CompareError(
        f"{folder}: no results.json there (ssdlab run CONFIG --out {folder} writes one)"
    )


def run_labels(folders: Sequence[Path]) -> list[str]:
    """ "A: name", "B: name", ...: a letter for the ratio columns and the shortest trailing
    part of each folder's path that tells the runs apart."""
    paths = [(f.parent if f.is_file() else f).resolve() for f in folders]
    depth = 1
    while True:
        names = ["/".join(p.parts[-depth:]) for p in paths]
        if len(set(names)) == len(names) or depth >= max(len(p.parts) for p in paths):
            break
        depth += 1
    return [f"{_letter(i)}: {name}" for i, name in enumerate(names)]


def _letter(i: int) -> str:
    letters = string.ascii_uppercase
    return letters[i] if i < len(letters) else f"R{i + 1}"


def flatten(document: Any, prefix: str = "") -> dict[str, Any]:
    """A config as ``{"flows.0.queue_depth": 32, ...}``: the keys ``--set`` takes."""
    if isinstance(document, dict):
        out: dict[str, Any] = {}
        for key, value in document.items():
            out.update(flatten(value, f"{prefix}{key}."))
        return out or ({prefix[:-1]: {}} if prefix else {})
    if isinstance(document, list) and any(isinstance(v, dict) for v in document):
        out = {}
        for i, value in enumerate(document):
            out.update(flatten(value, f"{prefix}{i}."))
        return out
    return {prefix[:-1]: document}


def config_differences(configs: Sequence[dict[str, Any]]) -> list[tuple[str, list[Any]]]:
    """(key, value in each config) for every key whose value is not the same in all of them;
    a key one config leaves unset is None there. An unset key counts as its default where the
    config schema has one: ``cache.capacity = "256MiB"`` set in one config and left out of
    the other is no difference."""
    flat = [flatten(c) for c in configs]
    keys = sorted(set().union(*flat), key=_natural)
    rows = []
    for key in keys:
        values = [f.get(key) for f in flat]
        default = _default(key)
        effective = [default if v is None else v for v in values]
        if any(v != effective[0] for v in effective[1:]):
            rows.append((key, values))
    return rows


def _default(key: str) -> Any:
    """The schema's default of a key (None for a flow's keys, which it leaves to the core)."""
    value = report_features.setting({}, key)
    return None if isinstance(value, dict | list) else value


def _natural(key: str) -> list[Any]:
    """flows.2 before flows.10."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in key.split(".")]


def _value_text(key: str, value: Any) -> str:
    if value is None:
        default = _default(key)
        if default is None:
            return "unset"
        return f"unset (default {_json(default)})"
    return _json(value)


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def ratio(value: Any, base: Any) -> float | None:
    """value / base, or None where either is undefined or the base is zero."""
    if _is_missing(value) or _is_missing(base) or not isinstance(value, int | float):
        return None
    if not isinstance(base, int | float) or base == 0:
        return None
    return value / base


def _row_format(values: Sequence[Any]) -> Callable[[Any], str]:
    """One format for a metric's values in every run, with the decimals the smallest of them
    needs for four significant digits (at most three): 2.166 MiB/s beside 1,907.745 keeps its
    digits, which a format chosen for the largest would round to 2."""
    present = [v for v in values if not _is_missing(v)]
    if all(isinstance(v, int) for v in present):
        return lambda v: f"{v:,}"
    nonzero = [abs(float(v)) for v in present if v]
    if not nonzero:
        return lambda v: f"{float(v):.3f}"
    decimals = min(3, max(0, 3 - math.floor(math.log10(min(nonzero)))))
    return lambda v: f"{float(v):,.{decimals}f}"


def _row(name: str, values: Sequence[Any]) -> list[Any]:
    """A metric's values in each run, formatted alike, then each run's ratio to the first."""
    fmt = _row_format(values)
    cells: list[Any] = [name]
    cells += [None if _is_missing(v) else Formatted(fmt(v)) for v in values]
    for v in values[1:]:
        r = ratio(v, values[0])
        cells.append(None if r is None else Formatted(f"{r:.3f}"))
    return cells


_OP_COUNTS = (
    ("requests", lambda s: s.count),
    ("IOPS", lambda s: s.iops),
    ("MiB/s", lambda s: s.bandwidth_mib_s),
)


def _op_stats(results: Results, flow: str, op: str) -> Any:
    group = (
        results.device
        if flow == "device"
        else next((f for f in results.flows if f.name == flow), None)
    )
    if group is None:
        return None
    stats = getattr(group, "reads" if op == "read" else "writes")
    return stats if stats.count else None


def _write_amplification(results: Results) -> float | None:
    wa = results.device.gc.write_amplification
    if _is_missing(wa) or (not wa and not results.device.flash.programs):
        return None
    return wa


_DEVICE_METRICS = (
    ("IOPS", lambda r: r.device.iops),
    ("bandwidth MiB/s", lambda r: r.device.bandwidth_mib_s),
    ("write amplification", _write_amplification),
    ("GC blocks erased", lambda r: r.device.gc.blocks_erased),
    ("GC pages moved", lambda r: r.device.gc.pages_moved),
    ("flash reads", lambda r: r.device.flash.reads),
    ("flash programs", lambda r: r.device.flash.programs),
    ("flash erases", lambda r: r.device.flash.erases),
    ("max erase count", lambda r: r.device.wear.max_erase_count),
    ("longest stall us", lambda r: getattr(r.device, "longest_completion_gap_us", None)),
    ("simulated seconds", lambda r: r.simulated_seconds),
)


def all_pairs(runs: Sequence[Results]) -> list[tuple[str, str]]:
    """Every (flow, op) that completed a request in any run, flows in first-seen order."""
    seen: dict[tuple[str, str], None] = {}
    for results in runs:
        for flow, op, _ in plots.pairs(results):
            seen.setdefault((flow, op), None)
    return list(seen)


def _sections(page: Page, runs: list[Results], labels: list[str], folders: list[Path]) -> None:
    letters = [label.split(":", 1)[0] for label in labels]
    ratios = [f"{x}/{letters[0]}" for x in letters[1:]]
    page.heading("Runs")
    page.table(
        ["run", "folder", "what was simulated", "seed", "ssdlab", "warnings"],
        [
            [label, str(folder), report_features.title(r), r.seed, r.version, len(r.warnings)]
            for label, folder, r in zip(labels, folders, runs, strict=True)
        ],
        text_columns=3,
    )
    page.paragraph(
        f"Ratios ({', '.join(ratios)}) are each run's value over run {letters[0]}'s; "
        f"{DASH} where a value is undefined or run {letters[0]}'s is zero.",
        css="meta",
    )

    page.heading("What differs in the configs")
    differences = config_differences([r.config for r in runs])
    if differences:
        page.table(
            ["key", *labels],
            [[key, *(_value_text(key, v) for v in values)] for key, values in differences],
            text_columns=1 + len(runs),
        )
    else:
        page.paragraph("Nothing: the configs are the same (see the versions and seeds above).")

    page.heading("Devices and starting states")
    device_rows = [report_features.device_rows(r) for r in runs]
    keys = list(dict.fromkeys(k for rows in device_rows for k, _ in rows))
    lookup = [dict((k, v) for k, v in rows) for rows in device_rows]
    page.table(
        ["", *labels],
        [[k, *(d.get(k, DASH) for d in lookup)] for k in keys]
        + [["starting state", *(report_features.precondition_text(r) for r in runs)]],
        text_columns=1 + len(runs),
    )

    page.heading("Results side by side")
    rows = []
    for flow, op in all_pairs(runs):
        stats = [_op_stats(r, flow, op) for r in runs]
        present = [s for s in stats if s is not None]
        metrics = [*_OP_COUNTS]
        metrics += [(h, partial(_latency, key=k)) for k, h in latency_columns(present)]
        for name, get in metrics:
            values = [None if s is None else get(s) for s in stats]
            if all(_is_missing(v) for v in values):
                continue
            rows.append([flow, op, *_row(name, values)])
    for name, get in _DEVICE_METRICS:
        values = [get(r) for r in runs]
        rows.append(["device", "", *_row(name, values)])
    page.table(["flow", "op", "metric", *labels, *ratios], rows, text_columns=3)

    _cdf_figure(page, runs, labels)
    _throughput_figure(page, runs, labels)

    warned = [(label, w) for label, r in zip(labels, runs, strict=True) for w in r.warnings]
    page.heading("Warnings")
    if warned:
        page.table(["run", "warning"], warned, text_columns=2)
    else:
        page.paragraph("No run has a warning.")


def _cdf_figure(page: Page, runs: list[Results], labels: list[str]) -> None:
    """One row per flow and op: the runs' CDFs overlaid (left) and their tails (right)."""
    import matplotlib.pyplot as plt

    pairs = all_pairs(runs)
    if not pairs:
        return
    page.heading("Latency distributions")
    if len(pairs) > MAX_CDF_PAIRS:
        page.paragraph(
            f"The first {MAX_CDF_PAIRS} of {len(pairs)} flow-and-op pairs (the table above has "
            "all of them)."
        )
        pairs = pairs[:MAX_CDF_PAIRS]
    fig, axes = plt.subplots(len(pairs), 2, figsize=(11, 3.4 * len(pairs)), squeeze=False)
    styles = ["-", "--", "-.", ":"]
    for (flow, op), (cdf, tail) in zip(pairs, axes, strict=True):
        for i, (label, results) in enumerate(zip(labels, runs, strict=True)):
            style = {"color": f"C{i % 10}", "linestyle": styles[i % len(styles)]}
            for ax, is_tail in ((cdf, False), (tail, True)):
                before = len(ax.get_lines())
                plots.plot_cdf(results, ax, tail=is_tail, flows=[flow], ops=[op], **style)
                if len(ax.get_lines()) > before:
                    ax.get_lines()[-1].set_label(label)
        cdf.set_title(f"{flow} {op}: CDF")
        tail.set_title(f"{flow} {op}: tail (1 - CDF)")
        cdf.legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    page.figure(fig, "compare_latency_cdf", "latency CDFs of the runs per flow and operation")


def _throughput_figure(page: Page, runs: list[Results], labels: list[str]) -> None:
    """The device's IOPS per window of each run from zero: on one time axis when the runs
    last about as long, one chart each otherwise (a 40 ms run beside a 36 s one is a spike)."""
    import matplotlib.pyplot as plt

    with_series = [
        (i, label, r)
        for i, (label, r) in enumerate(zip(labels, runs, strict=True))
        if plots.series_document(r) is not None
    ]
    if not with_series:
        return
    page.heading("Device throughput over time")
    durations = [r.simulated_seconds for _, _, r in with_series]
    together = min(durations) > 0 and max(durations) / min(durations) <= 3
    rows = 1 if together else len(with_series)
    fig, axes = plt.subplots(rows, 1, figsize=(11, 3.4 * rows), squeeze=False)
    for k, (i, label, results) in enumerate(with_series):
        ax = axes[0 if together else k][0]
        ts = results.time_series()
        device = ts[ts["flow"] == "device"].groupby("window_start_s", sort=True)
        total = device[["iops"]].sum()
        x = total.index + device["window_s"].first() / 2
        ax.plot(x, total["iops"], color=f"C{i % 10}", label=label)
    for (ax,) in axes:
        ax.set(xlabel="simulated time (s)", ylabel="device IOPS")
        ax.set_ylim(bottom=0)
        plots.thousands(ax)
        ax.grid(True, alpha=0.3)
        plots.legend_above(ax)
    fig.tight_layout()
    page.figure(fig, "compare_throughput", "device IOPS over time of each run")
