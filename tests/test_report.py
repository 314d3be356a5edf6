"""`ssdlab report`: a self-contained HTML page with PNG charts, for a run or a sweep."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import ssdlab
from conftest import small_config
from ssdlab import plots, report_features
from ssdlab.report import DASH, _Matplotlib, _Page, _sweep_sections, _SweepNames, write_report

RUN_CHARTS = [
    "latency_cdf.png",
    "throughput.png",
    "latency_over_time.png",
    "gc_over_time.png",
    "latency_breakdown.png",
]


def _mixed() -> dict:
    config = small_config(requests=1500)
    config["precondition"] = {"mode": "fill", "occupancy": 0.8, "layout": "spread"}
    config["flows"].append(
        {"name": "w", "read_fraction": 0.0, "queue_depth": 2, "requests": 600},
    )
    return config


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A run written by `ssdlab run --report`."""
    import sys

    from conftest import to_toml

    base = tmp_path_factory.mktemp("report")
    (base / "mixed.toml").write_text(to_toml(_mixed()), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "ssdlab", "run", "mixed.toml", "--out", "out", "--report"],
        cwd=base,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {Path('out') / 'report.html'}" in proc.stdout
    return base / "out"


def _assert_self_contained(text: str) -> None:
    assert not re.search(r"https?://", text), "the report references the network"
    assert not re.search(r"""(src|href)\s*=\s*["']?(?!data:)[^"'\s>]""", text), (
        "every resource must be embedded as a data URI"
    )
    assert "<script" not in text


def test_run_report_writes_html_and_charts(run_dir):
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    for chart in RUN_CHARTS:
        assert (run_dir / chart).stat().st_size > 5000, chart
    assert html.count('src="data:image/png;base64,') == len(RUN_CHARTS)
    _assert_self_contained(html)
    for text in ("Headline", "write amplification", "Latency breakdown", "chip_queue_wait"):
        assert text in html


def test_report_is_deterministic(run_dir, run_cli, tmp_path):
    copy = tmp_path / "out"  # the title names the folder
    copy.mkdir()
    shutil.copy(run_dir / "results.json", copy / "results.json")
    proc = run_cli("report", copy)
    assert proc.returncode == 0, proc.stderr
    assert (copy / "report.html").read_bytes() == (run_dir / "report.html").read_bytes()
    for chart in RUN_CHARTS:
        assert (copy / chart).read_bytes() == (run_dir / chart).read_bytes(), chart


def _chromium() -> str | None:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and os.environ.get("CI"):
        pytest.fail("chromium is required in CI (make chromium installs it)")
    if found is None:
        pytest.skip("chromium is not installed (make chromium installs it)")
    return found


@pytest.mark.parametrize("kind", ["run", "sweep", "compare"])
def test_report_renders_in_headless_chromium(kind, request, run_cli, tmp_path):
    chromium = _chromium()
    page = "report.html"
    if kind == "sweep":
        folder = tmp_path / "sweep"
        _write_sweep(folder)
        proc = run_cli("report", folder)
        assert proc.returncode == 0, proc.stderr
    elif kind == "compare":
        other = ssdlab.simulate(small_config(requests=300)).save(tmp_path / "other").parent
        folder, page = tmp_path, "compare.html"
        ssdlab.compare([request.getfixturevalue("run_dir"), other], out=folder / page)
    else:
        folder = request.getfixturevalue("run_dir")
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            "--window-size=1200,2000",
            (folder / page).resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.is_file(), proc.stderr[-2000:]
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]
    colours = {tuple(p) for p in (pixels[::4, ::4].reshape(-1, 3) * 255).astype(int).tolist()}
    white = (pixels > 0.98).all(axis=-1).mean()
    assert len(colours) > 50, f"only {len(colours)} colours: blank page?"
    assert white < 0.97, f"{white:.1%} of the screenshot is white"


def _write_sweep(folder: Path) -> None:
    """A sweep.parquet in the layout of `ssdlab sweep --out` (two axes, two seeds, one failure)."""
    rows = []
    for qd in (1, 2, 4, 8, 16):
        for read in ("50us", "75us"):
            for seed in (1, 2):
                ok = not (qd == 16 and read == "75us" and seed == 2)
                iops = 1000.0 * qd / (1 + (read == "75us")) + seed
                rows.append(
                    {
                        "run": f"qd{qd}-{read}-s{seed}",
                        "run_dir": f"runs/qd{qd}-{read}-s{seed}",
                        "flows.0.queue_depth": qd,
                        "flash.timing.read": read,
                        "seed": seed,
                        "status": "ok" if ok else "failed",
                        "error": "" if ok else "end of life: worn out",
                        "iops": iops if ok else None,
                        "bandwidth_mib_s": iops / 256 if ok else None,
                        "read_iops": iops if ok else None,
                        "write_iops": 0.0,
                        "read_mean_us": 70.0 * qd if ok else None,
                        "read_p99_us": 90.0 * qd if ok else None,
                        "write_mean_us": None,
                        "write_p99_us": None,
                        "write_amplification": 0.0,
                        "simulated_seconds": 0.1,
                        "wall_seconds": 0.01,
                    }
                )
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(folder / "sweep.parquet", index=False)
    axes = ["flows.0.queue_depth", "flash.timing.read"]
    metrics = ["iops", "read_p99_us", "write_amplification"]
    (folder / "sweep.json").write_text(
        json.dumps({"axes": axes, "mode": "product", "metrics": metrics})
    )


def test_sweep_report_charts_each_axis_against_the_chosen_metrics(run_cli, tmp_path):
    folder = tmp_path / "sweep"
    _write_sweep(folder)
    proc = run_cli("report", folder, "--metric", "iops", "--metric", "read_mean_us")
    assert proc.returncode == 0, proc.stderr
    html = (folder / "report.html").read_text(encoding="utf-8")
    _assert_self_contained(html)
    assert (folder / "sweep_flows_0_queue_depth.png").stat().st_size > 5000
    assert (folder / "sweep_flash_timing_read.png").stat().st_size > 5000
    assert "read_mean_us vs flows.0.queue_depth" not in html  # titles live in the images
    assert "20 runs (1 failed)" in html and "end of life: worn out" in html
    assert "metrics: iops, read_mean_us" in html


def test_sweep_report_defaults_to_the_standard_metrics_it_has(run_cli, tmp_path):
    folder = tmp_path / "sweep"
    _write_sweep(folder)
    proc = run_cli("report", folder)
    assert proc.returncode == 0, proc.stderr
    html = (folder / "report.html").read_text()
    # No write p99 (null in every run) and no write amplification (zero in every run).
    assert "metrics: iops, read_p99_us." in html


def test_unknown_metric_and_empty_folder_are_one_line_errors(run_cli, tmp_path):
    folder = tmp_path / "sweep"
    _write_sweep(folder)
    proc = run_cli("report", folder, "--metric", "iopz")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown metric iopz; sweep.parquet has: ")
    assert "read_p99_us" in proc.stderr and "Traceback" not in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli("report", empty)
    assert proc.returncode == 2
    assert "neither results.json" in proc.stderr and "Traceback" not in proc.stderr


# --- the page says what was simulated ----------------------------------------------------------


def test_run_report_opens_with_what_was_simulated(run_dir):
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    results = ssdlab.Results.load(run_dir)
    # The title names the config, the drive and its workload, not the folder ("out").
    title = re.search(r"<title>(.*)</title>", html).group(1)
    assert title == "ssdlab report: mixed.toml: 224 MiB MLC NVMe drive, flows r, w", title
    setup = html[html.index("What was simulated") : html.index("Headline")]
    for text in (
        "cell type",
        "MLC",
        "2 channels x 2 chips x 1 dies x 2 planes x 64 blocks x 64 pages of 8KiB",
        "capacity (logical)",
        "224 MiB",
        "over-provisioning",
        "12.5 %",
        "host interface",
        "NVMe",
        "reads of 4KiB",  # flow r
        "writes of 4KiB",  # flow w
        "Starting state",
        "Filled, not steady state: 80.",
        f"ssdlab {results.version}, seed {results.seed}",
        "No warnings.",
    ):
        assert text in setup, text


def test_every_warning_is_listed_at_the_top(run_dir, tmp_path):
    results = ssdlab.Results.load(run_dir)
    results.warnings.extend(["trace addresses wrapped: 3 requests", "second <warning>"])
    folder = results.save(tmp_path / "warned").parent
    html = write_report(folder).read_text(encoding="utf-8")
    setup = html[html.index("What was simulated") : html.index("Headline")]
    assert "Warnings (2)." in setup
    assert "trace addresses wrapped: 3 requests" in setup
    assert "second &lt;warning&gt;" in setup  # escaped, not markup


def test_steady_state_start_reports_fill_and_aging_write_amplification(tmp_path):
    config = small_config(requests=300, read_fraction=0.0)
    config["precondition"] = {"mode": "steady"}
    results = ssdlab.simulate(config)
    text = report_features.precondition_text(results)
    assert text.startswith("Steady state:"), text
    full = results.precondition.mapped_pages * 8192 / results.device.logical_capacity_bytes
    assert f"{full * 100:.4g} % of the logical space held data" in text
    assert f"{results.precondition.free_blocks:,} free blocks" in text
    assert (
        f"Write amplification of the aging {results.precondition.write_amplification:.3f}" in text
    )


def test_device_rows_appear_only_where_two_flows_share_an_op(run_dir, tmp_path):
    # run_dir: flow r reads, flow w writes: a device row would copy one flow's.
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "all flows" not in html
    config = small_config(requests=300)
    config["flows"].append({"name": "r2", "read_fraction": 1.0, "queue_depth": 1, "requests": 200})
    results = ssdlab.simulate(config)
    html = write_report(results.save(tmp_path / "two").parent).read_text(encoding="utf-8")
    headline = html[html.index("Headline") : html.index("Latency distribution")]
    assert headline.count('<td class="text">all flows</td>') == 1  # reads, not writes
    assert [label for label, _ in plots.breakdown_rows(results)] == [
        "r read",
        "r2 read",
        "all flows read",
    ]


def test_a_table_column_has_one_precision_and_undefined_is_a_dash():
    page = _Page(None, "t")
    page.table(["x", "us"], [["a", 92.69], ["b", 1.0680], ["c", None], ["d", float("nan")]])
    cells = re.findall(r"<td>([^<]*)</td>", page.sections[-1])
    assert cells == ["92.69", "1.07", DASH, DASH]
    page.table(["x", "n"], [["a", 14009], ["b", 7]])
    assert re.findall(r"<td>([^<]*)</td>", page.sections[-1]) == ["14,009", "7"]


def test_undefined_write_amplification_is_a_dash_not_zero(run_dir, tmp_path):
    results = ssdlab.Results.load(run_dir)
    results.device.gc.write_amplification = float("nan")
    html = write_report(results.save(tmp_path / "nan").parent).read_text(encoding="utf-8")
    assert f'write amplification</td><td class="text">{DASH}' in html


# --- the charts ---------------------------------------------------------------------------------


def _labels(ax, which="x") -> list[str]:
    ax.figure.canvas.draw()
    ticks = ax.get_xticklabels() if which == "x" else ax.get_yticklabels()
    return [t.get_text() for t in ticks if t.get_visible() and t.get_text()]


def test_log_latency_axes_have_plain_labels_that_do_not_overlap(run_dir):
    import matplotlib

    matplotlib.use("Agg")
    results = ssdlab.Results.load(run_dir)
    ax = plots.plot_cdf(results)
    labels = _labels(ax)
    assert labels and not any("times" in t or "^" in t for t in labels), labels
    renderer = ax.figure.canvas.get_renderer()
    boxes = sorted(
        (t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()),
        key=lambda b: b.x0,
    )
    inside = [b for b in boxes if b.x1 >= ax.bbox.x0 and b.x0 <= ax.bbox.x1]
    for left, right in itertools.pairwise(inside):
        assert left.x1 <= right.x0, "tick labels overlap"
    assert ax.get_lines()[0].get_label() == "r read"
    # The narrow span of one op (less than a decade) gets 1-2-5 steps, not 10^n only.
    narrow = plots.plot_cdf(results, flows=["r"])
    assert len(_labels(narrow)) >= 3


def test_write_amplification_axis_is_capped_and_undefined_windows_counted(run_dir):
    import matplotlib

    matplotlib.use("Agg")
    wa = pd.Series([3.0, 3.5, 4.0, 3.2] * 10 + [1000.0, float("nan")])
    cap = plots.write_amplification_cap(wa, overall=3.6)
    assert cap is not None and 7.2 <= cap < 1000
    assert plots.write_amplification_cap(pd.Series([3.0, 3.5, 4.0]), overall=3.5) is None
    work, wa_ax = plots.plot_gc(ssdlab.Results.load(run_dir))
    assert wa_ax.get_ylim()[1] < 100
    labels = [t.get_text() for t in work.get_legend().get_texts()]
    assert labels == ["GC pages moved / s", "host pages written / s", "blocks erased / s"]
    wa_labels = [t.get_text() for t in wa_ax.get_legend().get_texts()]
    assert any("windows without host writes" in t for t in wa_labels), wa_labels


def test_throughput_starts_at_zero_and_shades_stalls(run_dir):
    import matplotlib

    matplotlib.use("Agg")
    results = ssdlab.Results.load(run_dir)
    stalls = plots.stall_windows(results)
    assert stalls, "the fill-preconditioned mixed run has windows without a completion"
    ax = plots.plot_time_series(results, metric="iops")
    assert ax.get_ylim()[0] == 0
    labels = ax.get_legend_handles_labels()[1]
    assert "no completion in the window" in labels
    assert any(t.startswith("longest stall ") for t in labels), labels
    assert "device (all)" in labels
    with pytest.raises(ValueError, match="unknown metric 'iopz'"):
        plots.plot_time_series(results, metric="iopz")


# --- sweeps ---------------------------------------------------------------------------------------


def test_sweep_axis_names_are_readable():
    names = _SweepNames(["reader"])
    assert names.axis("flows.0.queue_depth") == "queue depth (flow reader)"
    assert names.axis("flows.3.queue_depth") == "queue depth (flow 3)"
    assert names.axis("ftl.mapping") == "mapping (ftl)"
    assert names.axis("flash.timing.read") == "read (flash timing)"
    assert names.axis("seed") == "seed"
    assert names.metric("read_p99_us") == "read p99 latency (us)"
    assert names.metric("foo_bar_us") == "foo bar (us)"


class _CapturingPage(_Page):
    def figure(self, fig, name, alt):
        self.figures[name] = fig
        super().figure(fig, name, alt)


def test_queue_depth_sweep_draws_p99_against_iops_and_bars_for_categories(tmp_path):
    folder = tmp_path / "sweep"
    _write_sweep(folder)
    page = _CapturingPage(folder, "t")
    page.figures = {}
    with _Matplotlib():
        _sweep_sections(page, folder, [])
    assert set(page.figures) == {
        "sweep_latency_vs_iops_flows_0_queue_depth",
        "sweep_flows_0_queue_depth",
        "sweep_flash_timing_read",
    }
    curve = page.figures["sweep_latency_vs_iops_flows_0_queue_depth"].axes[0]
    assert curve.get_xlabel() == "IOPS" and curve.get_ylabel() == "p99 latency (us)"
    depths = {t.get_text() for t in curve.texts}
    assert {"1", "2", "4", "8", "16"} <= depths  # each point names its queue depth
    categorical = page.figures["sweep_flash_timing_read"].axes[0]
    assert len(categorical.patches) == 10  # 2 read times x 5 queue depths, as bars
    assert categorical.get_xlabel() == "read (flash timing)"
    numeric = page.figures["sweep_flows_0_queue_depth"].axes[0]
    assert not numeric.patches and numeric.get_lines()
    assert page.title == "ssdlab sweep report: queue depth (flow 0), read (flash timing)"


def test_an_axis_that_does_not_vary_gets_a_note_not_an_empty_chart(tmp_path, run_cli):
    folder = tmp_path / "sweep"
    _write_sweep(folder)
    frame = pd.read_parquet(folder / "sweep.parquet")
    frame = frame[frame["flash.timing.read"] == "50us"]
    frame.to_parquet(folder / "sweep.parquet", index=False)
    proc = run_cli("report", folder)
    assert proc.returncode == 0, proc.stderr
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "read (flash timing) (flash.timing.read) takes one value in every run (50us)" in html
    assert not (folder / "sweep_flash_timing_read.png").exists()
    assert (folder / "sweep_flows_0_queue_depth.png").is_file()


def test_headline_shows_min_stdev_and_the_extra_percentiles_in_order(tmp_path):
    config = small_config(requests=300)
    config["run"] = {"percentiles": [99.5, 95]}
    results = ssdlab.simulate(config)
    html = write_report(results.save(tmp_path / "p").parent).read_text(encoding="utf-8")
    headline = html[html.index("Headline") : html.index("Latency distribution")]
    header = re.findall(r"<th[^>]*>([^<]*)</th>", headline)[5:]
    assert header[:9] == [
        "min us",
        "mean us",
        "stdev us",
        "p50 us",
        "p95 us",
        "p99 us",
        "p99.5 us",
        "p99.9 us",
        "max us",
    ]


def test_the_report_title_names_the_config(run_cli, write_config, tmp_path):
    path = write_config(small_config(requests=200), name="my-study.toml")
    proc = run_cli("run", path, "--out", "out", "--report")
    assert proc.returncode == 0, proc.stderr
    html_text = (tmp_path / "out" / "report.html").read_text()
    assert "<title>ssdlab report: my-study.toml: " in html_text
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    assert document["config_file"] == str(path)
