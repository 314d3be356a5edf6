"""Charts of one run's results with matplotlib: what ``ssdlab report`` draws, for notebooks too.

Each helper draws into the Axes it is given (or a new figure's) and returns them, so charts
compose: ``plot_cdf(a, ax=ax, label="A"); plot_cdf(b, ax=ax, label="B")`` overlays two runs.
They read only the results (no file, no global style); ``ssdlab report`` wraps them in
matplotlib's default style so its PNGs are the same bytes on every machine.

Colours follow the (flow, op) pairs that completed requests, in the results' order, so one
flow's reads have the same colour in every chart of a run. Undefined numbers (a window without
completions, write amplification without host writes) are gaps, never zeros.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from ssdlab.results import Results

_OPS = (("read", "reads"), ("write", "writes"))
# 1 - CDF is drawn down to this fraction; the last point (the max) drops to TAIL_FLOOR below it.
TAIL_BOTTOM = 1e-5
TAIL_FLOOR = 1e-7
STALL_COLOR = "#d62728"


def pairs(results: Results, device: bool = False) -> list[tuple[str, str, Any]]:
    """The (flow, op, OpStats) of each flow's reads and writes that completed a request, in the
    results' order (the device's last when `device`): the series every chart draws."""
    groups: list[tuple[str, Any]] = [(f.name, f) for f in results.flows]
    if device:
        groups.append(("device", results.device))
    out = []
    for name, group in groups:
        for op, key in _OPS:
            stats = getattr(group, key)
            if stats.count:
                out.append((name, op, stats))
    return out


def shared_pairs(results: Results) -> list[tuple[str, str, Any]]:
    """:func:`pairs` plus the device's reads or writes where two flows or more did them: the
    device's rows are then every flow together, not a copy of the one flow's."""
    flows = pairs(results)
    shared = {op for _, op, _ in flows if sum(1 for _, o, _ in flows if o == op) > 1}
    device = [p for p in pairs(results, device=True) if p[0] == "device" and p[1] in shared]
    return flows + device


def colors(results: Results) -> dict[tuple[str, str], str]:
    """The colour of each (flow, op) pair in every chart of this run."""
    return {(f, op): f"C{i % 10}" for i, (f, op, _) in enumerate(pairs(results))}


def _pyplot() -> Any:
    from ssdlab import _extras

    return _extras.require("matplotlib.pyplot", "ssdlab.plots")


def _axes(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=figsize)
    return ax


def short_number(value: float, _pos: Any = None) -> str:
    """A tick label: 5, 20, 1.5k, 200k, 3M (no ``2 x 10^2``, which overlaps on crowded axes)."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else ""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def log_ticks(ax: Axes, which: str = "x") -> None:
    """Labels on a log axis that never overlap: 1-2-5 steps over a decade or two, decades over
    a wider span, every label a plain number; minor ticks unlabelled. Call it once the data
    are drawn (the span chooses the steps)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis = ax.xaxis if which == "x" else ax.yaxis
    low, high = ax.get_xlim() if which == "x" else ax.get_ylim()
    low, high = min(low, high), max(low, high)
    decades = math.log10(high / low) if low > 0 and high > 0 else 10.0
    if decades <= 1.2:
        subs: Sequence[float] = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
    elif decades <= 2.6:
        subs = (1.0, 2.0, 5.0)
    elif decades <= 4.5:
        subs = (1.0, 3.0)
    else:
        subs = (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=40))
    axis.set_major_formatter(FuncFormatter(short_number))
    axis.set_minor_locator(LogLocator(base=10, subs=tuple(range(1, 10)), numticks=40))
    axis.set_minor_formatter(NullFormatter())


def thousands(ax: Axes, which: str = "y") -> None:
    """Linear-axis labels as 200k, 1.5M rather than 200000 or an offset ``1e6`` in the corner."""
    from matplotlib.ticker import FuncFormatter

    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_formatter(FuncFormatter(short_number))


def legend_above(ax: Axes, handles: Sequence[Any] | None = None, ncol: int = 4) -> None:
    """The legend in rows above the Axes, clear of the data (a legend inside hides the top
    of busy time series)."""
    if handles is None:
        handles, _ = ax.get_legend_handles_labels()
    if not handles:
        return
    ax.legend(
        handles=handles,
        loc="lower left",
        bbox_to_anchor=(0.0, 1.01),
        ncol=min(ncol, len(handles)),
        frameon=False,
        fontsize="small",
        borderaxespad=0.0,
    )


def plot_cdf(
    results: Results,
    ax: Axes | None = None,
    *,
    tail: bool = False,
    flows: Iterable[str] | None = None,
    ops: Iterable[str] = ("read", "write"),
    device: bool = False,
    label: str | None = None,
    **style: Any,
) -> Axes:
    """Latency CDF of each flow's reads and writes on a log latency axis (microseconds).

    `tail` draws 1 - CDF on log-log axes instead, where p99, p99.9 and the max read as steps.
    `flows` and `ops` choose the series (default: every flow, reads and writes; `device` adds
    the device's); `label` prefixes the legend entries (``"A: r read"``) when overlaying runs;
    `style` goes to matplotlib's ``plot`` (``linestyle="--"``, ``color=...``). Returns the
    Axes (a new figure's when `ax` is None)."""
    ax = _axes(ax, (6, 4.2))
    wanted = set(flows) if flows is not None else None
    ops = tuple(ops)
    palette = colors(results)
    drawn = 0
    for flow, op, stats in pairs(results, device=device):
        if (wanted is not None and flow not in wanted) or op not in ops:
            continue
        cdf = stats.latency_cdf
        if cdf is None or not cdf.fraction:
            continue
        name = f"{flow} {op}"
        line = {"color": palette.get((flow, op), "black"), **style}
        line.setdefault("label", f"{label}: {name}" if label else name)
        y = [max(1 - f, 0.0) + TAIL_FLOOR for f in cdf.fraction] if tail else cdf.fraction
        ax.plot(cdf.latency_us, y, **line)
        drawn += 1
    if not drawn:  # leave the Axes as they were: another run may have drawn there
        return ax
    ax.set_xscale("log")  # (resets the tick locators: log_ticks below sets them again)
    ax.set_xlabel("latency (us)")
    if tail:
        ax.set(yscale="log", ylim=(TAIL_BOTTOM, 1.5), ylabel="fraction slower")
        ax.set_title("tail (1 - CDF)")
    else:
        ax.set(ylim=(-0.02, 1.02), ylabel="fraction of requests", title="CDF")
    log_ticks(ax, "x")
    ax.grid(True, which="major", alpha=0.3)
    return ax


def series_document(results: Results) -> Any:
    """The document's per-window statistics (results.json's ``time_series``), or None."""
    return results.time_series


def stall_windows(results: Results) -> list[tuple[float, float]]:
    """(start, end) of each run of windows in which the device completed nothing, between its
    first and last completion: where the host saw the drive stall."""
    ts = results.time_series()
    device = ts[ts["flow"] == "device"].groupby("window_start_s", sort=True)
    counts = device["count"].sum()
    widths = device["window_s"].first()
    busy = counts[counts > 0]
    if busy.empty:
        return []
    inside = counts[(counts.index >= busy.index[0]) & (counts.index <= busy.index[-1])]
    spans: list[tuple[float, float]] = []
    for start, count in inside.items():
        if count:
            continue
        end = float(start) + float(widths[start])
        if spans and math.isclose(spans[-1][1], float(start), rel_tol=1e-9, abs_tol=1e-15):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((float(start), end))
    return spans


def format_seconds(seconds: float) -> str:
    """0.0624 -> '62.4 ms', 3e-6 -> '3 us'."""
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


_SERIES_METRICS = {
    "iops": "IOPS",
    "bandwidth_mib_s": "MiB/s",
    "mean_us": "mean latency (us)",
    "p99_us": "p99 latency (us)",
    "max_us": "max latency (us)",
    "latency": "latency (us)",
}


def plot_time_series(
    results: Results,
    ax: Axes | None = None,
    *,
    metric: str = "iops",
    flows: Iterable[str] | None = None,
    stalls: bool = True,
) -> Axes:
    """One line per flow and op over simulated time (a point per window, at its middle).

    `metric` is a column of ``results.time_series()``: ``iops`` (default), ``bandwidth_mib_s``,
    ``mean_us``, ``p99_us``, ``max_us``, or ``latency`` for p99 (solid) and mean (dashed)
    together on a log axis. Throughput axes start at zero and, with several series, add the
    device's total (dotted); with `stalls`, windows in which the device completed nothing are
    shaded red (a stall hides between two busy windows on a line). Windows without completions
    have no latency: gaps, not zeros. Raises ValueError for results without a time series."""
    if metric not in _SERIES_METRICS:
        raise ValueError(f"unknown metric {metric!r}; one of: {', '.join(_SERIES_METRICS)}")
    ax = _axes(ax, (11, 3.5))
    ts = results.time_series()
    wanted = set(flows) if flows is not None else None
    palette = colors(results)
    dots = {"marker": ".", "markersize": 3}  # a window between empty ones is still seen
    drawn = 0
    for flow, op, _ in pairs(results):
        if wanted is not None and flow not in wanted:
            continue
        part = ts[(ts["flow"] == flow) & (ts["op"] == op)]
        x = part["window_start_s"] + part["window_s"] / 2
        color = palette[(flow, op)]
        if metric == "latency":
            ax.plot(x, part["p99_us"], color=color, label=f"{flow} {op} p99", **dots)
            ax.plot(
                x, part["mean_us"], color=color, linestyle="--", label=f"{flow} {op} mean", **dots
            )
        else:
            style = dots if metric.endswith("_us") else {}
            ax.plot(x, part[metric], color=color, label=f"{flow} {op}", **style)
        drawn += 1
    throughput = metric in ("iops", "bandwidth_mib_s")
    if throughput and drawn > 1 and wanted is None:
        device = ts[ts["flow"] == "device"].groupby("window_start_s", sort=True)
        total = device[[metric, "window_s"]].sum()
        x = total.index + device["window_s"].first() / 2
        ax.plot(x, total[metric], color="black", linewidth=1.2, linestyle=":", label="device (all)")
    if throughput and stalls:
        from matplotlib.lines import Line2D

        for i, (start, end) in enumerate(stall_windows(results)):
            label = "no completion in the window" if i == 0 else None
            ax.axvspan(start, end, color=STALL_COLOR, alpha=0.25, linewidth=0, label=label)
        gap = getattr(results.device, "longest_completion_gap_us", None)
        if gap:
            # Shorter than a window, a stall shows on no line: the legend says how long it was.
            text = f"longest stall {format_seconds(gap / 1e6)}"
            ax.add_line(Line2D([], [], linestyle="none", label=text))
    ax.set(xlabel="simulated time (s)", ylabel=_SERIES_METRICS[metric])
    if throughput:
        ax.set_ylim(bottom=0)
        thousands(ax)
    elif drawn:
        ax.set_yscale("log")
        log_ticks(ax, "y")
    ax.grid(True, alpha=0.3)
    return ax


def write_amplification_cap(wa: pd.Series, overall: float | None) -> float | None:
    """Where the per-window write amplification axis stops, or None to show every window.

    A window in which GC moved much and the host wrote a page or two has a ratio in the
    hundreds that says little and flattens every other window; windows above 1.5 times the
    95th percentile (and above twice the whole run's figure) are drawn at the cap instead."""
    finite = wa.dropna()
    if finite.empty:
        return None
    cap = 1.5 * float(finite.quantile(0.95))
    if overall is not None and math.isfinite(overall):
        cap = max(cap, 2 * overall)
    cap = max(cap, 1.5)
    return cap if float(finite.max()) > cap else None


def plot_gc(results: Results, axes: Sequence[Axes] | None = None) -> tuple[Axes, Axes]:
    """Garbage collection per window: pages moved and host pages written per second (blocks
    erased per second on the right axis) above, the window's write amplification below.

    Windows without host writes have no write amplification and are left out (counted in the
    legend); windows far above the rest are drawn at the top edge as red triangles. Legends sit
    above each Axes. Returns the two Axes (new ones when `axes` is None)."""
    from matplotlib.lines import Line2D

    if axes is None:
        _, axes = _pyplot().subplots(2, 1, figsize=(11, 6), sharex=True)
    work, wa_ax = axes
    gc = results.gc_time_series()
    x = gc["window_start_s"] + gc["window_s"] / 2
    work.plot(x, gc["pages_moved"] / gc["window_s"], label="GC pages moved / s")
    work.plot(x, gc["host_pages_written"] / gc["window_s"], label="host pages written / s")
    blocks = work.twinx()
    blocks.plot(x, gc["blocks_erased"] / gc["window_s"], color="C3", label="blocks erased / s")
    blocks.set_ylabel("blocks erased / s", color="C3")
    blocks.set_ylim(bottom=0)
    thousands(blocks)
    work.set(ylabel="pages / s")
    work.set_ylim(bottom=0)
    thousands(work)
    legend_above(work, work.get_lines() + blocks.get_lines())

    wa = gc["write_amplification"].astype("float64")
    overall = results.device.gc.write_amplification
    overall = None if overall is None or not math.isfinite(overall) else float(overall)
    cap = write_amplification_cap(wa, overall)
    shown = wa if cap is None else wa.clip(upper=cap)
    wa_ax.plot(x, shown, color="C2", marker=".", linestyle="-", label="per window")
    handles = list(wa_ax.get_lines())
    if overall is not None:
        handles.append(
            wa_ax.axhline(overall, color="gray", linestyle=":", label=f"whole run {overall:.3f}")
        )
    if cap is not None:
        above = wa > cap
        handles.append(
            wa_ax.plot(
                x[above],
                [cap] * int(above.sum()),
                linestyle="none",
                marker="^",
                color=STALL_COLOR,
                label=f"{int(above.sum())} windows above {cap:.3g} (few host writes)",
            )[0]
        )
        wa_ax.set_ylim(0, cap * 1.08)
    else:
        wa_ax.set_ylim(bottom=0)
    undefined = int(wa.isna().sum())
    if undefined:
        handles.append(
            Line2D([], [], linestyle="none", label=f"{undefined} windows without host writes")
        )
    wa_ax.set(ylabel="write amplification", xlabel="simulated time (s)")
    legend_above(wa_ax, handles)
    for a in (work, wa_ax):
        a.grid(True, alpha=0.3)
    return work, wa_ax


def breakdown_rows(results: Results, device: bool | None = None) -> list[tuple[str, dict]]:
    """(label, mean microseconds per step) of each flow's reads and writes, and the device's
    ("all flows") when `device` (default: an op that two flows or more did, where the device's
    row is not a copy of one flow's)."""
    chosen = shared_pairs(results) if device is None else pairs(results, device=device)
    return [
        (f"{'all flows' if flow == 'device' else flow} {op}", dict(stats.latency_breakdown_us))
        for flow, op, stats in chosen
    ]


def plot_breakdown(results: Results, ax: Axes | None = None, device: bool | None = None) -> Axes:
    """Stacked bars of the mean latency per step of the request path, one bar per flow and op
    (and the device's, as :func:`breakdown_rows` chooses); steps that took no time in any
    bar are left out of the bars and the legend."""
    bars = breakdown_rows(results, device)
    ax = _axes(ax, (11, 0.6 * max(len(bars), 1) + 1.8))
    if not bars:
        return ax
    steps = list(dict.fromkeys(step for _, b in bars for step in b))
    palette = [*(f"C{i}" for i in range(10)), "#393b79", "#8c6d31"]
    left = [0.0] * len(bars)
    labels = [label for label, _ in bars]
    for k, step in enumerate(steps):
        widths = [b.get(step) or 0.0 for _, b in bars]
        if not any(widths):
            continue
        ax.barh(labels, widths, left=left, color=palette[k % len(palette)], label=step)
        left = [a + w for a, w in zip(left, widths, strict=True)]
    ax.invert_yaxis()
    ax.set(xlabel="mean latency (us)", title="where the time goes (mean per step)")
    # Beside the bars, in path order: below them it would collide with the axis label.
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(True, axis="x", alpha=0.3)
    return ax
