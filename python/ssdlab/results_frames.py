"""The DataFrames of :class:`ssdlab.Results` (summary, latency CDF, time series, GC series,
per-request records) and its notebook table; pandas and numpy are imported only when one is
asked for."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from ssdlab.results import OpSeries, OpStats, Results, TimeSeries


def _html_summary(results: Results) -> str:
    """The summary table as HTML for notebooks: flows, then the device, per op that ran."""
    from html import escape

    def number(value: float | None, digits: int) -> str:
        return "&ndash;" if value is None else f"{value:,.{digits}f}"

    head = ["flow", "op", "requests", "IOPS", "MiB/s", "min", "mean", "p99", "p99.9", "max"]
    rows = []
    for name, group in _groups(results, device=True):
        for op, key in _OPS:
            s: OpStats = getattr(group, key)
            if s.count == 0:
                continue
            lat = s.latency_us
            cells = [escape(name), op, f"{s.count:,}", number(s.iops, 0)]
            cells += [number(s.bandwidth_mib_s, 1)]
            cells += [number(v, 1) for v in (lat.min, lat.mean, lat.p99, lat.p99_9, lat.max)]
            style = ' style="font-weight:bold"' if name == "device" else ""
            rows.append(f"<tr{style}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    wa = results.device.gc.write_amplification
    notes = [
        f"simulated {results.simulated_seconds:.6g} s, seed {results.seed}, "
        f"ssdlab {escape(results.version)}; write amplification "
        f"{'&ndash;' if wa is None else f'{wa:.3f}'}; latencies in microseconds"
    ]
    notes += [f"warning: {escape(w)}" for w in results.warnings]
    return (
        "<table><thead><tr>"
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        + "".join(f"<p>{n}</p>" for n in notes)
    )


_OPS = (("read", "reads"), ("write", "writes"))


def _groups(results: Results, device: bool) -> list[tuple[str, Any]]:
    groups: list[tuple[str, Any]] = [(f.name, f) for f in results.flows]
    if device:
        groups.append(("device", results.device))
    return groups


def _summary(results: Results, device: bool = True) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for name, group in _groups(results, device):
        for op, key in _OPS:
            s: OpStats = getattr(group, key)
            lat = s.latency_us
            rows.append(
                {
                    "flow": name,
                    "op": op,
                    "count": s.count,
                    "iops": s.iops,
                    "bandwidth_mib_s": s.bandwidth_mib_s,
                    "bytes": s.bytes,
                    "min_us": lat.min,
                    "mean_us": lat.mean,
                    "stdev_us": lat.stdev,
                    "p50_us": lat.p50,
                    "p90_us": lat.p90,
                    "p99_us": lat.p99,
                    "p99_9_us": lat.p99_9,
                    "p99_99_us": lat.p99_99,
                    "max_us": lat.max,
                    **{f"{name}_us": v for name, v in lat.extra.items()},
                    **{f"{step}_us": v for step, v in s.latency_breakdown_us.items()},
                }
            )
    frame = pd.DataFrame(rows)
    # An op that never ran has no latency: None -> NaN, and the column stays numeric.
    numeric = [c for c in frame.columns if c.endswith("_us")]
    frame[numeric] = frame[numeric].astype("float64")
    return frame


def _latency_cdf(results: Results, device: bool = True) -> pd.DataFrame:
    import pandas as pd

    frames = []
    for name, group in _groups(results, device):
        for op, key in _OPS:
            cdf = getattr(group, key).latency_cdf
            if cdf is None or not cdf.fraction:
                continue
            frames.append(
                pd.DataFrame(
                    {
                        "flow": name,
                        "op": op,
                        "latency_us": cdf.latency_us,
                        "fraction": cdf.fraction,
                    }
                )
            )
    if not frames:
        return pd.DataFrame({"flow": [], "op": [], "latency_us": [], "fraction": []}).astype(
            {"flow": str, "op": str, "latency_us": float, "fraction": float}
        )
    return pd.concat(frames, ignore_index=True)


_SERIES_COLUMNS = ("count", "bytes", "iops", "bandwidth_mib_s", "mean_us", "p99_us", "max_us")


def _time_series_frame(ts: TimeSeries, device: bool = True) -> pd.DataFrame:
    import pandas as pd

    groups = list(ts.flows) + ([ts.device] if device else [])
    frames = []
    for group in groups:
        for op, key in _OPS:
            series: OpSeries = getattr(group, key)
            columns = {c: getattr(series, c) for c in _SERIES_COLUMNS}
            frame = pd.DataFrame(
                {
                    "flow": group.name,
                    "op": op,
                    "window_start_s": ts.start_seconds,
                    "window_s": ts.duration_seconds,
                    **columns,
                }
            )
            frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    for c in ("mean_us", "p99_us", "max_us"):
        frame[c] = frame[c].astype("float64")  # None (no completion) -> NaN
    return frame


def _gc_time_series(results: Results) -> pd.DataFrame:
    import pandas as pd

    ts = _require_series(results)
    gc = ts.gc
    frame = pd.DataFrame(
        {
            "window_start_s": ts.start_seconds,
            "window_s": ts.duration_seconds,
            "blocks_erased": gc.blocks_erased,
            "pages_moved": gc.pages_moved,
            "host_pages_written": gc.host_pages_written,
            "flash_pages_programmed": gc.flash_pages_programmed,
            "write_amplification": gc.write_amplification,
        }
    )
    frame["write_amplification"] = frame["write_amplification"].astype("float64")
    if ts.reliability is not None:
        frame["read_retries"] = ts.reliability.read_retries
        frame["read_reclaims"] = ts.reliability.read_reclaims
    return frame


def _require_series(results: Results) -> TimeSeries:
    if results.time_series is None:
        raise ValueError(
            "these results have no time_series (written by an older ssdlab); rerun to get them"
        )
    return results.time_series


# Layout of one record of the ssdlab.requests/1 file (see crates/ssdlab-core/src/stats/records.rs).
_RECORDS_MAGIC = b"SSDLREQ1"
_RECORDS_HEADER = 16


def _read_records(path: Path, flow_names: list[str], steps: list[str]) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    raw = path.read_bytes()
    if raw[:8] != _RECORDS_MAGIC:
        raise ValueError(f"{path}: not an ssdlab request records file")
    record_bytes, step_count = np.frombuffer(raw[8:16], dtype="<u4")
    dtype = np.dtype(
        [
            ("arrival_ps", "<u8"),
            ("latency_ps", "<u8"),
            ("start_sector", "<u8"),
            ("size_bytes", "<u4"),
            ("flow", "<u2"),
            ("op", "u1"),
            ("pad", "u1"),
            ("steps_ps", "<u8", (int(step_count),)),
        ]
    )
    if dtype.itemsize != record_bytes or len(steps) != step_count:
        raise ValueError(
            f"{path}: records of {record_bytes} bytes; this ssdlab reads {dtype.itemsize}"
        )
    usable = (len(raw) - _RECORDS_HEADER) // dtype.itemsize * dtype.itemsize
    data = np.frombuffer(raw, dtype=dtype, offset=_RECORDS_HEADER, count=usable // dtype.itemsize)
    names = np.array(flow_names, dtype=object)
    frame = pd.DataFrame(
        {
            "flow": names[data["flow"]] if len(data) else np.array([], dtype=object),
            "op": np.where(data["op"] == 0, "read", "write").astype(object),
            "arrival_s": data["arrival_ps"] / 1e12,
            "latency_us": data["latency_ps"] / 1e6,
            "start_sector": data["start_sector"].astype("int64"),
            "size_bytes": data["size_bytes"].astype("int64"),
        }
    )
    for k, step in enumerate(steps):
        frame[f"{step}_us"] = data["steps_ps"][:, k] / 1e6
    return frame
