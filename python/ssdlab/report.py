"""HTML reports of a results folder: ``ssdlab report DIR`` writes ``DIR/report.html`` and its
charts as PNG files beside it.

The page stands alone: its images are embedded as base64 data URIs and its style is inline, so it
opens offline, attaches to an email and never fetches anything. A folder with ``results.json``
(one run) gets the headline tables, the latency CDFs, throughput, latency and GC over time and
the latency breakdown; a sweep folder (``sweep.parquet`` from ``ssdlab sweep --out DIR``) gets
each swept parameter charted against the chosen metrics. The same results give the same bytes:
matplotlib runs with its default style, a fixed dpi and no metadata in the PNGs.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssdlab import _outputs, report_features
from ssdlab.results import Results

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

DPI = 100
# Metrics charted for a sweep when neither --metric nor sweep.json chooses.
DEFAULT_SWEEP_METRICS = ("iops", "read_p99_us", "write_p99_us", "write_amplification")
# Rows of the sweep's run table in the page.
MAX_TABLE_ROWS = 500
# More lines than this in one sweep chart are averaged into one.
MAX_SERIES = 8

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1150px; color: #222; background: #fff; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
p.meta { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { padding: 0.25em 0.7em; text-align: right; border-bottom: 1px solid #eee; }
th { background: #f4f4f4; }
td.text, th.text { text-align: left; }
img { max-width: 100%; display: block; margin: 0.8em 0; border: 1px solid #eee; }
ul.warnings li { color: #8a5a00; }
"""


class ReportError(ValueError):
    """The folder holds nothing to report on, or a metric asked for does not exist."""


@dataclass
class _Page:
    folder: Path
    title: str
    sections: list[str] = field(default_factory=list)
    images: list[Path] = field(default_factory=list)

    def heading(self, text: str) -> None:
        self.sections.append(f"<h2>{html.escape(text)}</h2>")

    def paragraph(self, text: str, css: str = "") -> None:
        attr = f' class="{css}"' if css else ""
        self.sections.append(f"<p{attr}>{html.escape(text)}</p>")

    def table(self, header: Sequence[str], rows: Iterable[Sequence[Any]], text_columns: int = 1):
        def cell(tag: str, i: int, value: Any) -> str:
            css = ' class="text"' if i < text_columns else ""
            return f"<{tag}{css}>{html.escape(_fmt(value))}</{tag}>"

        head = "".join(cell("th", i, h) for i, h in enumerate(header))
        body = "".join(
            "<tr>" + "".join(cell("td", i, v) for i, v in enumerate(row)) + "</tr>" for row in rows
        )
        self.sections.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    def figure(self, fig: Figure, name: str, alt: str) -> None:
        import matplotlib.pyplot as plt

        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
        plt.close(fig)
        data = buffer.getvalue()
        path = self.folder / f"{name}.png"
        _outputs.write_bytes(path, data)
        self.images.append(path)
        encoded = base64.b64encode(data).decode("ascii")
        self.sections.append(
            f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{encoded}">'
        )

    def html(self) -> str:
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(self.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f"<h1>{html.escape(self.title)}</h1>\n"
            + "\n".join(self.sections)
            + "\n</body>\n</html>\n"
        )


def write_report(folder: str | os.PathLike[str], metrics: Sequence[str] = ()) -> Path:
    """Write ``folder/report.html`` (and the charts as PNG files beside it) for the run in
    ``folder/results.json`` and/or the sweep in ``folder/sweep.parquet``; returns its path.
    `metrics` chooses the sweep metrics (default: IOPS, read and write p99, write
    amplification, those not null or zero in every run)."""
    folder = Path(folder)
    has_run = (folder / "results.json").is_file()
    has_sweep = (folder / "sweep.parquet").is_file()
    if not folder.is_dir():
        raise ReportError(f"{folder}: no such folder")
    if not (has_run or has_sweep):
        raise ReportError(
            f"{folder}: neither results.json (ssdlab run --out DIR) nor sweep.parquet "
            "(ssdlab sweep --out DIR) is there"
        )
    if metrics and not has_sweep:
        raise ReportError("--metric chooses sweep metrics; this folder has no sweep.parquet")
    page = _Page(folder, f"ssdlab report: {folder.resolve().name}")
    with _Matplotlib():
        if has_sweep:
            _sweep_sections(page, folder, list(metrics))
        if has_run:
            _run_sections(page, Results.load(folder))
    target = folder / "report.html"
    _outputs.write_text(target, page.html())
    return target


class _Matplotlib:
    """Agg backend and matplotlib's default style, whatever the user's matplotlibrc says."""

    def __enter__(self) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        self._style = plt.style.context("default")
        self._style.__enter__()
        self._rc = matplotlib.rc_context({"figure.dpi": DPI, "savefig.dpi": DPI})
        self._rc.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._rc.__exit__(*exc)
        self._style.__exit__(*exc)


def _fmt(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value != 0 and (abs(value) >= 1e7 or abs(value) < 1e-3):
            return f"{value:.4g}"
        if abs(value) >= 100:
            return f"{value:,.1f}"
        return f"{value:.4g}"
    return str(value)


# --- one run ---------------------------------------------------------------------------------


def _run_sections(page: _Page, results: Results) -> None:
    import matplotlib.pyplot as plt

    device = results.device
    page.paragraph(
        f"ssdlab {results.version}, seed {results.seed}: {results.simulated_seconds:.6f} "
        f"simulated seconds, {results.events:,} events",
        css="meta",
    )
    page.heading("Headline")
    rows = []
    for name, group in [*((f.name, f) for f in results.flows), ("device", device)]:
        for op, s in (("read", group.reads), ("write", group.writes)):
            if s.count:
                lat = s.latency_us
                numbers = [s.count, s.iops, s.bandwidth_mib_s, lat.mean, lat.p50, lat.p99]
                rows.append([name, op, *numbers, lat.p99_9, lat.max])
    header = ["flow", "op", "requests", "IOPS", "MiB/s", "mean us", "p50 us", "p99 us"]
    page.table([*header, "p99.9 us", "max us"], rows, text_columns=2)
    gc, flash = device.gc, device.flash
    page.table(
        ["device", "value"],
        [
            ["IOPS", device.iops],
            ["bandwidth MiB/s", device.bandwidth_mib_s],
            ["write amplification", gc.write_amplification],
            ["GC blocks erased", gc.blocks_erased],
            ["GC pages moved", gc.pages_moved],
            [
                "flash reads / programs / erases",
                f"{flash.reads:,} / {flash.programs:,} / {flash.erases:,}",
            ],
            ["max erase count", device.wear.max_erase_count],
        ],
    )
    if results.fairness is not None:
        f = results.fairness
        page.table(
            ["flow", "shared mean us", "alone mean us", "slowdown"],
            [[n, f.shared_mean_us[n], f.alone_mean_us[n], s] for n, s in f.slowdown.items()],
        )
        page.paragraph(
            f"fairness {f.fairness:.3f} (min/max slowdown), weighted speedup "
            f"{f.weighted_speedup:.3f}"
        )
    if results.warnings:
        items = "".join(f"<li>{html.escape(w)}</li>" for w in results.warnings)
        page.sections.append(f'<ul class="warnings">{items}</ul>')

    cdf = results.latency_cdf(device=False)
    if not cdf.empty:
        page.heading("Latency distribution")
        fig, (ax, tail) = plt.subplots(1, 2, figsize=(11, 4.2))
        for (flow, op), part in cdf.groupby(["flow", "op"], sort=False):
            label = f"{flow} {op}"
            ax.plot(part["latency_us"], part["fraction"], label=label)
            tail.plot(part["latency_us"], 1 - part["fraction"] + 1e-7, label=label)
        ax.set(xscale="log", xlabel="latency (us)", ylabel="fraction of requests", title="CDF")
        tail.set(
            xscale="log",
            yscale="log",
            ylim=(1e-5, 1.1),
            xlabel="latency (us)",
            ylabel="fraction slower",
            title="tail (1 - CDF)",
        )
        for a in (ax, tail):
            a.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize="small")
        fig.tight_layout()
        page.figure(fig, "latency_cdf", "latency CDF per flow and operation")

    if results.series is not None:
        _time_series_sections(page, results)

    page.heading("Latency breakdown")
    _breakdown_figure(page, results)

    if results.reliability is not None:
        _reliability_sections(page, results)
    if results.zns is not None:
        _zns_section(page, results)
    report_features.lsm_section(page, results)
    report_features.fdp_section(page, results)
    report_features.slc_cache_section(page, results)


def _zns_section(page: _Page, results: Results) -> None:
    """A zoned namespace: its layout, zone states at the end, the zone commands and what the
    zones refused (resets' erases show in the GC chart above as blocks erased)."""
    z = results.zns
    page.heading("Zoned namespace")
    wa = "n/a" if z.write_amplification is None else f"{z.write_amplification:.3f}"
    page.paragraph(
        f"{z.zones:,} zones of {_fmt(z.zone_capacity_bytes / 2**20)} MiB capacity in "
        f"{_fmt(z.zone_size_bytes / 2**20)} MiB, each over {z.zone_planes} plane(s); at most "
        f"{z.max_open_zones} open and {z.max_active_zones} active (peaks {z.peak_open_zones} and "
        f"{z.peak_active_zones}). Write amplification {wa}; GC moved {z.gc_bytes_moved:,} bytes."
    )
    page.table(["state", "zones at the end"], [[s, n] for s, n in z.zone_states.items()])
    commands = [
        ["writes", z.writes],
        ["appends", z.appends],
        ["explicit opens", z.explicit_opens],
        ["closes", z.closes],
        ["implicit closes (open limit)", z.implicit_closes],
        ["finishes", z.finishes],
        ["resets", z.resets],
        ["blocks erased by resets", z.blocks_erased],
        ["padding bytes programmed by finishes", z.pad_bytes],
        *[[f"refused: {status}", n] for status, n in z.failed.items()],
    ]
    page.table(["zone commands", "count"], commands)


def _time_series_sections(page: _Page, results: Results) -> None:
    import matplotlib.pyplot as plt

    ts = results.time_series()
    ts = ts[ts["count"].groupby([ts["flow"], ts["op"]]).transform("sum") > 0]
    window = results.series.window_seconds if results.series else 0
    page.heading("Over time")
    page.paragraph(
        f"Windows of {_fmt(window * 1e3)} ms; a request counts in the window in which it "
        f"completes. Per-window p99 within {results.series.p99_precision:.2%} (above)."
    )
    fig, (iops, bw) = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
    flows = ts[ts["flow"] != "device"]
    for (flow, op), part in flows.groupby(["flow", "op"], sort=False):
        x = part["window_start_s"] + part["window_s"] / 2
        iops.plot(x, part["iops"], label=f"{flow} {op}")
        bw.plot(x, part["bandwidth_mib_s"], label=f"{flow} {op}")
    if flows.groupby(["flow", "op"]).ngroups > 1:
        device = ts[ts["flow"] == "device"].groupby("window_start_s", sort=True)
        total = device[["iops", "bandwidth_mib_s", "window_s"]].sum()
        x = total.index + device["window_s"].first() / 2
        style = {"color": "black", "linewidth": 1.2, "linestyle": ":", "label": "device (all)"}
        iops.plot(x, total["iops"], **style)
        bw.plot(x, total["bandwidth_mib_s"], **style)
    iops.set(ylabel="IOPS", title="throughput")
    bw.set(ylabel="MiB/s", xlabel="simulated time (s)")
    for a in (iops, bw):
        a.grid(True, alpha=0.3)
    iops.legend(fontsize="small")
    fig.tight_layout()
    page.figure(fig, "throughput", "IOPS and bandwidth over time")

    fig, ax = plt.subplots(figsize=(11, 4.2))
    for i, ((flow, op), part) in enumerate(
        ts[ts["flow"] != "device"].groupby(["flow", "op"], sort=False)
    ):
        color = f"C{i % 10}"
        x = part["window_start_s"] + part["window_s"] / 2
        dots = {"marker": ".", "markersize": 3}  # a window between empty ones is still seen
        ax.plot(x, part["p99_us"], color=color, label=f"{flow} {op} p99", **dots)
        ax.plot(x, part["mean_us"], color=color, linestyle="--", label=f"{flow} {op} mean", **dots)
    ax.set(yscale="log", ylabel="latency (us)", xlabel="simulated time (s)", title="latency")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    page.figure(fig, "latency_over_time", "mean and p99 latency over time")

    gc = results.gc_time_series()
    if gc["blocks_erased"].sum() > 0 or gc["host_pages_written"].sum() > 0:
        fig, (work, wa) = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
        x = gc["window_start_s"] + gc["window_s"] / 2
        work.plot(x, gc["pages_moved"] / gc["window_s"], label="GC pages moved / s")
        work.plot(x, gc["host_pages_written"] / gc["window_s"], label="host pages written / s")
        work2 = work.twinx()
        work2.plot(x, gc["blocks_erased"] / gc["window_s"], color="C3", label="blocks erased / s")
        work2.set_ylabel("blocks erased / s", color="C3")
        work.set(ylabel="pages / s", title="garbage collection")
        work.legend(fontsize="small", loc="upper left")
        wa.plot(x, gc["write_amplification"], color="C2", marker=".", linestyle="-")
        overall = results.device.gc.write_amplification
        wa.axhline(overall, color="gray", linestyle=":", label=f"whole run {overall:.3f}")
        # Log scale: a window where GC moved much and the host wrote little spikes by 100x.
        wa.set(yscale="log", ylabel="write amplification", xlabel="simulated time (s)")
        wa.legend(fontsize="small")
        for a in (work, wa):
            a.grid(True, alpha=0.3)
        fig.tight_layout()
        page.figure(fig, "gc_over_time", "GC activity and write amplification over time")


def _reliability_sections(page: _Page, results: Results) -> None:
    """Read retries from flash reliability: reads by retry level, their latency, and the
    retries and reclaims over time."""
    import matplotlib.pyplot as plt

    rel = results.reliability
    page.heading("Flash reliability: read retries")
    page.paragraph(
        f"{rel.pe_cycles_at_start:,} P/E cycles and {rel.data_age_days_at_start:g}-day-old data "
        f"at start; mean RBER {_fmt(rel.mean_rber)}, highest {_fmt(rel.max_rber)}; "
        f"{rel.read_retries:,} pages read again, {rel.uncorrectable_reads:,} uncorrectable, "
        f"{rel.read_reclaims:,} blocks rewritten by read reclaim"
    )
    page.table(
        ["retries", "host reads", "mean us", "p99 us", "max us"],
        [[r.retries, r.count, r.mean, r.p99, r.max] for r in rel.read_latency_us_by_retries],
    )
    if results.series is None or results.series.reliability is None:
        return
    gc = results.gc_time_series()
    fig, ax = plt.subplots(figsize=(11, 3.2))
    x = gc["window_start_s"] + gc["window_s"] / 2
    ax.plot(x, gc["read_retries"] / gc["window_s"], label="pages read again / s")
    ax.set(xlabel="simulated time (s)", ylabel="pages read again / s", title="read retries")
    # Blocks are a few hundred times fewer than pages: their own axis.
    blocks = ax.twinx()
    blocks.plot(x, gc["read_reclaims"] / gc["window_s"], color="C3", label="blocks reclaimed / s")
    blocks.set_ylabel("blocks reclaimed / s", color="C3")
    ax.grid(True, alpha=0.3)
    lines = ax.get_lines() + blocks.get_lines()
    ax.legend(lines, [line.get_label() for line in lines], fontsize="small", loc="upper left")
    fig.tight_layout()
    page.figure(fig, "reliability_over_time", "read retries and read reclaims over time")


def _breakdown_figure(page: _Page, results: Results) -> None:
    import matplotlib.pyplot as plt

    bars = []
    for name, group in [*((f.name, f) for f in results.flows), ("device", results.device)]:
        for op, s in (("read", group.reads), ("write", group.writes)):
            if s.count:
                bars.append((f"{name} {op}", s.latency_breakdown_us))
    if not bars:
        page.paragraph("No request completed.")
        return
    steps = list(bars[0][1])
    fig, ax = plt.subplots(figsize=(11, 0.6 * len(bars) + 1.8))
    colors = [*(f"C{i}" for i in range(10)), "#393b79"]
    left = [0.0] * len(bars)
    labels = [label for label, _ in bars]
    for k, step in enumerate(steps):
        widths = [b.get(step, 0.0) for _, b in bars]
        if not any(widths):
            continue
        ax.barh(labels, widths, left=left, color=colors[k % len(colors)], label=step)
        left = [a + w for a, w in zip(left, widths, strict=True)]
    ax.invert_yaxis()
    ax.set(xlabel="mean latency (us)", title="where the time goes (mean per step)")
    ax.legend(fontsize="small", ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    page.figure(fig, "latency_breakdown", "mean latency breakdown per flow and operation")
    page.table(
        ["step", *labels],
        [[step, *(b.get(step, 0.0) for _, b in bars)] for step in steps],
    )


# --- a sweep ---------------------------------------------------------------------------------


def _sweep_sections(page: _Page, folder: Path, metrics: list[str]) -> None:
    import pandas as pd

    try:
        frame = pd.read_parquet(folder / "sweep.parquet")
    except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
        raise ReportError(
            f"{folder / 'sweep.parquet'} is not a complete sweep table ({e}): run the sweep "
            f"again (ssdlab sweep SWEEP.toml --out {folder}) to rebuild it"
        ) from None
    meta_path = folder / "sweep.json"
    meta: dict[str, Any] = {}
    if meta_path.is_file():
        with contextlib.suppress(ValueError):  # optional: without it the axes are inferred
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        meta = meta if isinstance(meta, dict) else {}
    axes = [a for a in meta.get("axes", []) if a in frame.columns]
    if not axes and {"run_dir", "seed"} <= set(frame.columns):
        # Without sweep.json: the axis columns sit between run_dir and seed.
        columns = list(frame.columns)
        axes = columns[columns.index("run_dir") + 1 : columns.index("seed")]
    # A metric null or zero in every run (write p99 and write amplification of a read-only
    # sweep) would only draw a flat line.
    defaults = [
        m for m in DEFAULT_SWEEP_METRICS if m in frame.columns and frame[m].fillna(0).ne(0).any()
    ]
    chosen = metrics or defaults
    unknown = [m for m in chosen if m not in frame.columns]
    if unknown:
        available = [m for m in meta.get("metrics", []) if m in frame.columns] or [
            c for c in frame.select_dtypes("number").columns if c not in axes and c != "seed"
        ]
        raise ReportError(
            f"unknown metric {', '.join(unknown)}; sweep.parquet has: {', '.join(available)}"
        )
    status = frame["status"] if "status" in frame.columns else pd.Series(["ok"] * len(frame))
    ok = frame[status == "ok"]
    failed = frame[status != "ok"]

    page.heading("Sweep")
    mode = meta.get("mode", "product")
    page.paragraph(
        f"{len(frame)} runs ({len(failed)} failed), mode {mode}, axes: "
        f"{', '.join(axes) or 'none'}; metrics: {', '.join(chosen)}. Failed runs are left "
        "out; lines are means over seeds, bands span their minimum to maximum."
    )
    for axis in axes:
        _sweep_axis_figure(page, ok, axis, [a for a in axes if a != axis], chosen)
    columns = [c for c in ["run", *axes, "seed", "status", *chosen] if c in frame.columns]
    page.heading("Runs")
    if len(frame) > MAX_TABLE_ROWS:
        page.paragraph(f"The first {MAX_TABLE_ROWS} of {len(frame)} runs (all in sweep.parquet).")
    shown = frame[columns].head(MAX_TABLE_ROWS)
    page.table(columns, shown.itertuples(index=False), text_columns=1 + len(axes))
    if not failed.empty and "error" in failed.columns:
        page.heading("Failed runs")
        page.table(["run", "error"], failed[["run", "error"]].itertuples(index=False), 2)


def _axis_values(series: pd.Series) -> tuple[list[Any], bool]:
    """The axis's distinct values in order, and whether they are numbers."""
    import pandas as pd

    values = list(dict.fromkeys(series.dropna().tolist()))
    numeric = bool(values) and pd.api.types.is_numeric_dtype(series)
    if numeric:
        values.sort()
    return values, numeric


def _sweep_axis_figure(
    page: _Page, ok: pd.DataFrame, axis: str, others: list[str], metrics: list[str]
) -> None:
    import matplotlib.pyplot as plt

    values, numeric = _axis_values(ok[axis])
    if not values:
        return
    groups = ok.groupby(others, sort=True, dropna=False) if others else [((), ok)]
    groups = list(groups)
    if len(groups) > MAX_SERIES:
        groups = [(("all",), ok)]
        others = ["mean over the other axes"]
    n = len(metrics)
    cols = min(2, n)
    rows = math.ceil(n / cols)
    fig, axs = plt.subplots(rows, cols, figsize=(5.5 * cols, 3.6 * rows), squeeze=False)
    for k, metric in enumerate(metrics):
        ax = axs[k // cols][k % cols]
        for i, (key, part) in enumerate(groups):
            stats = part.groupby(axis, sort=False)[metric].agg(["mean", "min", "max"])
            stats = stats.reindex(values)
            x = values if numeric else list(range(len(values)))
            key = key if isinstance(key, tuple) else (key,)
            label = ", ".join(f"{o}={v}" for o, v in zip(others, key, strict=False)) or None
            color = f"C{i % 10}"
            ax.plot(x, stats["mean"], marker="o", color=color, label=label)
            if (stats["max"] > stats["min"]).any():
                ax.fill_between(x, stats["min"], stats["max"], color=color, alpha=0.15)
        if numeric:
            positive = [v for v in values if v > 0]
            if len(positive) == len(values) and max(values) / min(values) >= 16:
                ax.set_xscale("log", base=2 if all(float(v).is_integer() for v in values) else 10)
                if len(values) <= 12:  # label the swept values themselves, not powers
                    ax.set_xticks(values, [_fmt(v) for v in values])
                    ax.minorticks_off()
        else:
            ax.set_xticks(range(len(values)), [str(v) for v in values])
        ax.set(xlabel=axis, ylabel=metric, title=f"{metric} vs {axis}")
        ax.grid(True, alpha=0.3)
        if groups[0][0] != () and len(groups) > 1 and k == 0:
            ax.legend(fontsize="small")
    for k in range(n, rows * cols):
        axs[k // cols][k % cols].set_visible(False)
    fig.tight_layout()
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in axis)
    page.figure(fig, f"sweep_{safe}", f"metrics against {axis}")
