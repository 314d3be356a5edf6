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
import numbers
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssdlab import _extras, _outputs, plots, report_features
from ssdlab.report_features import DASH
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


def _is_missing(value: Any) -> bool:
    """None, NaN, or pandas' NA: a number that is undefined, shown as a dash, never as 0."""
    if value is None:
        return True
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return not math.isfinite(float(value))
    return type(value).__name__ in ("NAType", "NaTType")


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | str)


def _column_format(values: Sequence[Any], decimals: int | None = None) -> Callable[[Any], str]:
    """One format for a whole column of a table, so its numbers line up: whole numbers with
    thousands separators, other numbers with the decimals that give the largest four
    significant digits (all of them with as many), tiny ones in scientific notation."""
    numbers_ = [v for v in values if _is_number(v) and not _is_missing(v)]
    if not numbers_ or all(isinstance(v, numbers.Integral) for v in numbers_):
        return lambda v: f"{v:,}" if isinstance(v, numbers.Integral) else str(v)
    if decimals is not None:
        return lambda v: f"{float(v):,.{decimals}f}"
    largest = max(abs(float(v)) for v in numbers_)
    if largest == 0:
        return lambda v: "0"
    if largest < 1e-3:
        return lambda v: f"{float(v):.3e}"
    decimals = min(4, max(0, 3 - math.floor(math.log10(largest))))
    return lambda v: f"{float(v):,.{decimals}f}"


def _fmt(value: Any) -> str:
    """One value on its own (a sentence, a title): the dash when undefined."""
    if _is_missing(value):
        return DASH
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{value:,}"
    if isinstance(value, numbers.Real):
        return _column_format([value])(value)
    return str(value)


class Formatted(str):
    """A number already written as text (a row of one metric formatted alike): aligned as a
    number in a table."""


def _numeric(value: Any) -> bool:
    """A cell aligned right: a number, one already formatted, or an undefined one."""
    return _is_number(value) or isinstance(value, Formatted) or _is_missing(value)


@dataclass
class _Page:
    """An HTML page being built; charts go into it as data URIs and, when `folder` is set, as
    PNG files there too."""

    folder: Path | None
    title: str
    sections: list[str] = field(default_factory=list)
    images: list[Path] = field(default_factory=list)

    def heading(self, text: str) -> None:
        self.sections.append(f"<h2>{html.escape(text)}</h2>")

    def paragraph(self, text: str, css: str = "") -> None:
        attr = f' class="{css}"' if css else ""
        self.sections.append(f"<p{attr}>{html.escape(text)}</p>")

    def table(
        self,
        header: Sequence[str],
        rows: Iterable[Sequence[Any]],
        text_columns: int = 1,
        decimals: int | None = None,
    ):
        """A table whose numeric columns each have one format (text cells pass through);
        `decimals` fixes the decimals of every column of non-whole numbers."""
        rows = [list(r) for r in rows]
        width = max([len(header), *(len(r) for r in rows)])
        columns = [[r[i] for r in rows if i < len(r)] for i in range(width)]
        formats = [_column_format(c, decimals) for c in columns]
        # A column without numbers is text: its heading aligns left like its cells.
        text_column = [
            i < text_columns or not any(_numeric(v) and not _is_missing(v) for v in c)
            for i, c in enumerate(columns)
        ]

        def cell(tag: str, i: int, value: Any) -> str:
            css = ' class="text"' if i < text_columns or not _numeric(value) else ""
            if tag == "th":
                text = str(value)
                css = ' class="text"' if text_column[i] else ""
            elif _is_missing(value):
                text = DASH
            elif _is_number(value):
                text = formats[i](value)
            else:
                text = str(value)
            return f"<{tag}{css}>{html.escape(text)}</{tag}>"

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
        if self.folder is not None:
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
    if not folder.is_dir():
        raise ReportError(f"{folder}: no such folder")
    has_run = (folder / "results.json").is_file()
    has_sweep = (folder / "sweep.parquet").is_file()
    if not (has_run or has_sweep):
        raise ReportError(
            f"{folder}: neither results.json (ssdlab run --out DIR) nor sweep.parquet "
            "(ssdlab sweep --out DIR) is there"
        )
    if metrics and not has_sweep:
        raise ReportError("--metric chooses sweep metrics; this folder has no sweep.parquet")
    results = Results.load(folder) if has_run else None
    if results is not None:
        title = f"ssdlab report: {report_features.title(results)}"
        if results.config_file:
            title = (
                f"ssdlab report: {Path(results.config_file).name}: {report_features.title(results)}"
            )
    else:
        title = "ssdlab sweep report"
    page = _Page(folder, title)
    with _Matplotlib():
        if has_sweep:
            _sweep_sections(page, folder, list(metrics))
        if results is not None:
            _run_sections(page, results)
    target = folder / "report.html"
    _outputs.write_text(target, page.html())
    return target


class _Matplotlib:
    """Agg backend and matplotlib's default style, whatever the user's matplotlibrc says;
    without matplotlib, :class:`~ssdlab._extras.MissingExtraError` names the extra that
    brings it, and what needed it (`needed_by`)."""

    def __init__(self, needed_by: str = "ssdlab report") -> None:
        self.needed_by = needed_by

    def __enter__(self) -> None:
        matplotlib = _extras.require("matplotlib", self.needed_by)
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        self._style = plt.style.context("default")
        self._style.__enter__()
        self._rc = matplotlib.rc_context({"figure.dpi": DPI, "savefig.dpi": DPI})
        self._rc.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._rc.__exit__(*exc)
        self._style.__exit__(*exc)


# --- one run ---------------------------------------------------------------------------------


def _write_amplification_text(results: Results) -> str:
    """The run's write amplification, or why there is none (no page was programmed)."""
    gc = results.device.gc
    wa = gc.write_amplification
    if _is_missing(wa) or (not wa and not results.device.flash.programs):
        return f"{DASH} (no page programmed)"
    return f"{wa:.3f}"


def latency_columns(stats: Iterable[Any]) -> list[tuple[str, str]]:
    """(key, heading) of the latency figures to show for these OpStats, in order: min (fio's
    habit; results since 0.2), mean, stdev, p50, p99, p99.9 and the percentiles
    ``run.percentiles`` adds, in percentile order, then max."""
    stats = list(stats)
    has = {k for k in ("min", "stdev") if any(_latency(s, k) is not None for s in stats)}
    percentiles = {"p50": 50.0, "p99": 99.0, "p99_9": 99.9}
    for s in stats:
        for name in getattr(s.latency_us, "extra", {}) or {}:
            with contextlib.suppress(ValueError):
                percentiles[name] = float(name[1:].replace("_", "."))
    ordered = sorted(percentiles, key=percentiles.__getitem__)
    keys = [*(["min"] if "min" in has else []), "mean", *(["stdev"] if "stdev" in has else [])]
    keys += [*ordered, "max"]
    return [(k, f"{k.replace('_', '.')} us") for k in keys]


def _latency(stats: Any, key: str) -> float | None:
    """One latency figure of an OpStats (an extra percentile too), None when undefined."""
    lat = stats.latency_us
    value = getattr(lat, key, None) if key in type(lat).model_fields else None
    if value is None:
        value = (getattr(lat, "extra", None) or {}).get(key)
    return None if _is_missing(value) else value


def _headline(page: _Page, results: Results) -> None:
    pairs = plots.shared_pairs(results)
    several = any(flow == "device" for flow, _, _ in pairs)
    columns = latency_columns(s for *_, s in pairs)
    rows = []
    for flow, op, s in pairs:
        name = "all flows" if flow == "device" else flow
        figures = [_latency(s, k) for k, _ in columns]
        rows.append([name, op, s.count, s.iops, s.bandwidth_mib_s, *figures])
    header = ["flow", "op", "requests", "IOPS", "MiB/s", *(h for _, h in columns)]
    if rows:
        page.table(header, rows, text_columns=2)
    else:
        page.paragraph("No request completed.")
    if several:
        note = "The 'all flows' rows are the device's: every flow's requests together"
        whole = results.simulated_seconds
        if any(not math.isclose(f.interval_seconds, whole, rel_tol=0.01) for f in results.flows):
            note += (
                f", their rates over the whole run ({whole:.6g} s) while a flow's are over its "
                "own interval, so they can be lower than a flow's"
            )
        page.paragraph(note + ".", css="meta")
    device = results.device
    flash = device.flash
    gap = getattr(device, "longest_completion_gap_us", None)
    page.table(
        ["device", "value"],
        [
            ["IOPS", f"{device.iops:,.0f}"],
            ["bandwidth", f"{device.bandwidth_mib_s:,.1f} MiB/s"],
            ["write amplification", _write_amplification_text(results)],
            ["GC blocks erased", f"{device.gc.blocks_erased:,}"],
            ["GC pages moved", f"{device.gc.pages_moved:,}"],
            [
                "flash reads / programs / erases",
                f"{flash.reads:,} / {flash.programs:,} / {flash.erases:,}",
            ],
            ["max erase count", f"{device.wear.max_erase_count:,}"],
            [
                "longest stall (requests pending, none completing)",
                DASH if gap is None else plots.format_seconds(gap / 1e6),
            ],
        ],
    )


def _run_sections(page: _Page, results: Results) -> None:
    import matplotlib.pyplot as plt

    report_features.setup_section(page, results)
    page.heading("Headline")
    _headline(page, results)
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

    if plots.pairs(results):
        page.heading("Latency distribution")
        fig, (ax, tail) = plt.subplots(1, 2, figsize=(11, 4.2))
        plots.plot_cdf(results, ax)
        plots.plot_cdf(results, tail, tail=True)
        ax.legend(fontsize="small")
        fig.tight_layout()
        page.figure(fig, "latency_cdf", "latency CDF per flow and operation")

    if plots.series_document(results) is not None:
        _time_series_sections(page, results)

    page.heading("Latency breakdown")
    _breakdown(page, results)

    if results.reliability is not None:
        report_features.reliability_section(page, results)
    if results.zns is not None:
        report_features.zns_section(page, results)
    report_features.lsm_section(page, results)
    report_features.fdp_section(page, results)
    report_features.slc_cache_section(page, results)


def _time_series_sections(page: _Page, results: Results) -> None:
    import matplotlib.pyplot as plt

    series = plots.series_document(results)
    page.heading("Over time")
    stalls = plots.stall_windows(results)
    gap = getattr(results.device, "longest_completion_gap_us", None)
    text = (
        f"Windows of {plots.format_seconds(series.window_seconds)}; a request counts in the "
        f"window in which it completes. Per-window p99 within {series.p99_precision:.2%} "
        "(above)."
    )
    if gap:
        longest = plots.format_seconds(gap / 1e6)
        text += f" Longest stall (requests pending, none completing): {longest}"
        text += (
            f"; {len(stalls)} stretch(es) of whole windows without a completion are shaded red."
            if stalls
            else ", shorter than a window: no window went without a completion."
        )
    page.paragraph(text)
    fig, (iops, bw) = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
    plots.plot_time_series(results, iops, metric="iops")
    plots.plot_time_series(results, bw, metric="bandwidth_mib_s")
    iops.set(xlabel="")
    plots.legend_above(iops)
    fig.tight_layout()
    page.figure(fig, "throughput", "IOPS and bandwidth over time")

    fig, ax = plt.subplots(figsize=(11, 4.2))
    plots.plot_time_series(results, ax, metric="latency")
    plots.legend_above(ax)
    fig.tight_layout()
    page.figure(fig, "latency_over_time", "mean and p99 latency over time")

    gc = results.gc_time_series()
    if gc["blocks_erased"].sum() > 0 or gc["host_pages_written"].sum() > 0:
        fig, axes = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
        plots.plot_gc(results, axes)
        fig.tight_layout()
        page.figure(fig, "gc_over_time", "GC activity and write amplification over time")


def _breakdown(page: _Page, results: Results) -> None:
    import matplotlib.pyplot as plt

    bars = plots.breakdown_rows(results)
    if not bars:
        page.paragraph("No request completed.")
        return
    fig, ax = plt.subplots(figsize=(11, 0.6 * len(bars) + 1.8))
    plots.plot_breakdown(results, ax)
    fig.tight_layout()
    page.figure(fig, "latency_breakdown", "mean latency breakdown per flow and operation")
    steps = list(dict.fromkeys(step for _, b in bars for step in b))
    busy = [s for s in steps if any(b.get(s) for _, b in bars)]
    page.table(
        ["step (mean us)", *(label for label, _ in bars)],
        [[step, *(b.get(step) for _, b in bars)] for step in busy],
        decimals=2,
    )
    idle = [s for s in steps if s not in busy]
    if idle:
        page.paragraph(f"Steps that took no time: {', '.join(idle)}.", css="meta")


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
    names = _SweepNames(_flow_names(folder, ok))
    varying = [a for a in axes if len(_axis_values(ok[a])[0]) > 1]
    fixed = [a for a in axes if a not in varying]
    page.title = "ssdlab sweep report: " + (
        ", ".join(names.axis(a) for a in axes) if axes else folder.resolve().name
    )
    empty = [m for m in chosen if not ok[m].notna().any()]
    drawn = [m for m in chosen if m not in empty]

    page.heading("Sweep")
    mode = meta.get("mode", "product")
    page.paragraph(
        f"{len(frame)} runs ({len(failed)} failed), mode {mode}, axes: "
        f"{', '.join(axes) or 'none'}; metrics: {', '.join(chosen)}. Failed runs are left "
        "out; lines are means over seeds, bands (or error bars) span their minimum to maximum."
    )
    notes = []
    for axis in fixed:
        values = _axis_values(ok[axis])[0]
        where = "in the runs that finished" if len(failed) else "in every run"
        shown = ", ".join(str(v) for v in values) or "none"
        notes.append(f"{names.axis(axis)} ({axis}) takes one value {where} ({shown}): no chart.")
    if empty:
        notes.append(f"No run that finished has a value of {', '.join(empty)}: not charted.")
    for note in notes:
        page.paragraph(note, css="meta")
    if drawn:
        for axis in varying:
            if axis.rsplit(".", 1)[-1] == "queue_depth":
                _latency_throughput_figure(page, ok, axis, [a for a in varying if a != axis], names)
        for axis in varying:
            _sweep_axis_figure(page, ok, axis, [a for a in varying if a != axis], drawn, names)
    columns = [c for c in ["run", *axes, "seed", "status", *chosen] if c in frame.columns]
    page.heading("Runs")
    if len(frame) > MAX_TABLE_ROWS:
        page.paragraph(f"The first {MAX_TABLE_ROWS} of {len(frame)} runs (all in sweep.parquet).")
    shown = frame[columns].head(MAX_TABLE_ROWS)
    page.table(columns, shown.itertuples(index=False), text_columns=1 + len(axes))
    if not failed.empty and "error" in failed.columns:
        page.heading("Failed runs")
        page.table(["run", "error"], failed[["run", "error"]].itertuples(index=False), 2)


# Chart labels of sweep.parquet's metrics; others are spelled out from their names.
METRIC_LABELS = {
    "iops": "IOPS",
    "bandwidth_mib_s": "bandwidth (MiB/s)",
    "read_iops": "read IOPS",
    "write_iops": "write IOPS",
    "read_mean_us": "read mean latency (us)",
    "read_p99_us": "read p99 latency (us)",
    "write_mean_us": "write mean latency (us)",
    "write_p99_us": "write p99 latency (us)",
    "write_amplification": "write amplification",
    "simulated_seconds": "simulated time (s)",
    "wall_seconds": "wall time (s)",
}
_UNIT_SUFFIXES = (("_us", " (us)"), ("_mib_s", " (MiB/s)"), ("_seconds", " (s)"), ("_s", " (s)"))


def _flow_names(folder: Path, ok: pd.DataFrame) -> list[str]:
    """The flows' names in the sweep's runs (from the first finished run's config echo), so
    ``flows.0.queue_depth`` reads "queue depth (flow reader)"; empty when unknown."""
    if "run_dir" not in ok.columns or ok.empty:
        return []
    try:
        document = json.loads((folder / ok["run_dir"].iloc[0] / "results.json").read_bytes())
        flows = document["config"]["flows"]
        return [str(f.get("name", f"flow-{i}")) for i, f in enumerate(flows)]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


@dataclass
class _SweepNames:
    """Readable names of a sweep's axes and metrics for chart labels."""

    flows: list[str]

    def axis(self, key: str) -> str:
        """ "flows.0.queue_depth" -> "queue depth (flow reader)", "ftl.mapping" -> "mapping
        (ftl)", "flash.timing.read" -> "read (flash timing)"."""
        parts = key.split(".")
        words: list[str] = []
        i = 0
        while i < len(parts) - 1:
            part = parts[i]
            if part in ("flows", "namespaces") and parts[i + 1].isdigit() and i + 2 < len(parts):
                k = int(parts[i + 1])
                if part == "flows" and k < len(self.flows):
                    words.append(f"flow {self.flows[k]}")
                else:
                    words.append(f"{part[:-1]} {k}")
                i += 2
                continue
            words.append(part.replace("_", " "))
            i += 1
        last = parts[-1].replace("_", " ")
        return f"{last} ({' '.join(words)})" if words else last

    @staticmethod
    def metric(name: str) -> str:
        if name in METRIC_LABELS:
            return METRIC_LABELS[name]
        for suffix, unit in _UNIT_SUFFIXES:
            if name.endswith(suffix):
                return name[: -len(suffix)].replace("_", " ") + unit
        return name.replace("_", " ")


def _axis_values(series: pd.Series) -> tuple[list[Any], bool]:
    """The axis's distinct values in order, and whether they are numbers."""
    import pandas as pd

    values = list(dict.fromkeys(series.dropna().tolist()))
    numeric = bool(values) and pd.api.types.is_numeric_dtype(series)
    if numeric:
        values.sort()
    return values, numeric


def _groups(
    ok: pd.DataFrame, others: list[str], names: _SweepNames
) -> tuple[list[tuple[str | None, Any]], str]:
    """The runs split by the values of the other varying axes: (legend label, runs) each; past
    MAX_SERIES lines, one group of all runs (the mean over the other axes)."""
    if not others:
        return [(None, ok)], ""
    groups = list(ok.groupby(others, sort=True, dropna=False))
    if len(groups) > MAX_SERIES:
        return [(None, ok)], " (means over the other axes)"
    out = []
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        pairs = zip(others, key, strict=False)
        out.append((", ".join(f"{names.axis(o)} = {_fmt(v)}" for o, v in pairs), part))
    return out, ""


def _log_x_if_wide(ax: Any, values: list[Any]) -> None:
    """Powers of two and other wide numeric axes on a log scale, labelled with the values."""
    positive = [v for v in values if v > 0]
    if len(positive) == len(values) and max(values) / min(values) >= 16:
        ax.set_xscale("log", base=2 if all(float(v).is_integer() for v in values) else 10)
        if len(values) <= 12:  # label the swept values themselves, not powers
            ax.set_xticks(values, [_fmt(v) for v in values])
            ax.minorticks_off()


def _sweep_axis_figure(
    page: _Page,
    ok: pd.DataFrame,
    axis: str,
    others: list[str],
    metrics: list[str],
    names: _SweepNames,
) -> None:
    """Each metric against `axis`: lines over a numeric axis, grouped bars over a categorical
    one (ftl.mapping's names have no order a line could follow)."""
    import matplotlib.pyplot as plt

    values, numeric = _axis_values(ok[axis])
    groups, suffix = _groups(ok, others, names)
    n = len(metrics)
    cols = min(2, n)
    rows = math.ceil(n / cols)
    fig, axs = plt.subplots(rows, cols, figsize=(5.5 * cols, 3.8 * rows), squeeze=False)
    for k, metric in enumerate(metrics):
        ax = axs[k // cols][k % cols]
        width = 0.8 / len(groups)
        for i, (label, part) in enumerate(groups):
            stats = part.groupby(axis, sort=False)[metric].agg(["mean", "min", "max"])
            stats = stats.reindex(values)
            color = f"C{i % 10}"
            if numeric:
                ax.plot(values, stats["mean"], marker="o", color=color, label=label)
                if (stats["max"] > stats["min"]).any():
                    ax.fill_between(values, stats["min"], stats["max"], color=color, alpha=0.15)
            else:
                x = [j - 0.4 + width * (i + 0.5) for j in range(len(values))]
                spread = (stats["max"] > stats["min"]).any()
                error = [stats["mean"] - stats["min"], stats["max"] - stats["mean"]]
                bars = ax.bar(
                    x,
                    stats["mean"],
                    width=width * 0.95,
                    color=color,
                    label=label,
                    yerr=error if spread else None,
                    capsize=3,
                )
                if len(groups) <= 3:  # a short bar's value is still read
                    ax.bar_label(bars, fmt=plots.short_number, fontsize="x-small", padding=2)
        if numeric:
            _log_x_if_wide(ax, values)
        else:
            ax.set_xticks(range(len(values)), [str(v) for v in values])
            ax.grid(True, axis="y", alpha=0.3)
        ax.set(xlabel=names.axis(axis), ylabel=names.metric(metric))
        ax.set_title(f"{names.metric(metric)}{suffix}", fontsize="medium")
        if numeric:
            ax.grid(True, alpha=0.3)
        if ok[metric].min() >= 0:
            ax.set_ylim(bottom=0)
        plots.thousands(ax)
        if groups[0][0] is not None and k == 0:
            ax.legend(fontsize="small")
    for k in range(n, rows * cols):
        axs[k // cols][k % cols].set_visible(False)
    fig.tight_layout()
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in axis)
    page.figure(fig, f"sweep_{safe}", f"metrics against {axis}")


def _latency_throughput_figure(
    page: _Page, ok: pd.DataFrame, axis: str, others: list[str], names: _SweepNames
) -> None:
    """p99 latency against IOPS as the queue depth grows: the curve a queue-depth sweep is
    run for, whose knee is where more parallelism stops buying throughput and only adds
    waiting. Each point is labelled with its queue depth."""
    import matplotlib.pyplot as plt

    ops = [
        (op, f"{op}_p99_us")
        for op in ("read", "write")
        if f"{op}_p99_us" in ok.columns and ok[f"{op}_p99_us"].fillna(0).ne(0).any()
    ]
    if "iops" not in ok.columns or not ops:
        return
    values, numeric = _axis_values(ok[axis])
    if not numeric:
        return
    groups, suffix = _groups(ok, others, names)
    fig, ax = plt.subplots(figsize=(11, 4.6))
    for i, (label, part) in enumerate(groups):
        means = part.groupby(axis, sort=True)[["iops", *(m for _, m in ops)]].mean()
        means = means.reindex(values)
        for op, metric in ops:
            name = f"{op} p99" + (f", {label}" if label else "")
            style = "-" if op == "read" else "--"
            ax.plot(
                means["iops"], means[metric], linestyle=style, marker="o", color=f"C{i}", label=name
            )
            for depth, x, y in zip(values, means["iops"], means[metric], strict=True):
                if not (_is_missing(x) or _is_missing(y)):
                    ax.annotate(
                        _fmt(depth),
                        (x, y),
                        textcoords="offset points",
                        xytext=(4, 4),
                        fontsize="x-small",
                        color=f"C{i}",
                    )
    ax.set(xlabel="IOPS", ylabel="p99 latency (us)")
    ax.set_title(
        f"p99 latency against IOPS, points labelled with the {names.axis(axis)}{suffix}",
        fontsize="medium",
    )
    ax.set_yscale("log")
    plots.log_ticks(ax, "y")
    ax.set_xlim(left=0)
    plots.thousands(ax, "x")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")  # the curve rises to the upper right
    fig.tight_layout()
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in axis)
    page.figure(fig, f"sweep_latency_vs_iops_{safe}", f"p99 latency against IOPS over {axis}")
