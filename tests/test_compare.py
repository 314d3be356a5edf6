"""`ssdlab compare A B` and `ssdlab.compare`: runs side by side on one self-contained page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import ssdlab
from conftest import small_config
from ssdlab.compare import CompareError, config_differences, flatten, ratio, run_labels


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, Path]:
    """The same small drive and reader at queue depth 1 (A) and 8 (B)."""
    base = tmp_path_factory.mktemp("compare")
    folders = []
    for name, depth in (("qd1", 1), ("qd8", 8)):
        config = small_config(requests=800, queue_depth=depth)
        config["cache"] = {"capacity": "256MiB"}  # the default, set in both: no difference
        folders.append(ssdlab.simulate(config).save(base / name).parent)
    return folders[0], folders[1]


def _cells(html: str, first: str) -> list[str]:
    """The cells of the table row whose cells start with `first` (a list of cell texts)."""
    for row in re.findall(r"<tr>(.*?)</tr>", html):
        cells = re.findall(r"<t[dh][^>]*>([^<]*)</t[dh]>", row)
        if cells[: len(first.split("|"))] == first.split("|"):
            return cells
    raise AssertionError(f"no row starting {first!r}")


def test_compare_writes_one_page_with_config_differences_and_ratios(two_runs, tmp_path):
    a, b = two_runs
    out = ssdlab.compare([a, b], out=tmp_path / "ab.html")
    assert out == tmp_path / "ab.html"
    html = out.read_text(encoding="utf-8")
    assert "<title>ssdlab compare: A: qd1 vs B: qd8</title>" in html
    assert "<script" not in html and not re.search(r"https?://", html)
    assert html.count('src="data:image/png;base64,') == 2  # the CDFs, the throughput
    assert list(tmp_path.iterdir()) == [out], "compare writes no PNG files"
    # What differs: the queue depth, and nothing the two configs share.
    assert _cells(html, "flows.0.queue_depth") == ["flows.0.queue_depth", "1", "8"]
    assert "cache.capacity" not in html
    # Ratios B/A from the numbers themselves.
    ra, rb = ssdlab.Results.load(a), ssdlab.Results.load(b)
    iops = _cells(html, "device||IOPS")
    assert iops[-1] == f"{rb.device.iops / ra.device.iops:.3f}"
    p99 = _cells(html, "r|read|p99 us")
    assert p99[-1] == f"{rb.flows[0].reads.latency_us.p99 / ra.flows[0].reads.latency_us.p99:.3f}"
    assert "Devices and starting states" in html and "Latency distributions" in html


def test_compare_defaults_to_compare_html_in_the_current_folder(two_runs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = ssdlab.compare([str(p) for p in two_runs])
    assert out == Path("compare.html") and (tmp_path / "compare.html").is_file()


def test_report_of_several_folders_compares_them(two_runs, run_cli, tmp_path):
    proc = run_cli("report", *two_runs)
    assert proc.returncode == 0, proc.stderr
    assert "wrote compare.html" in proc.stdout
    assert "What differs in the configs" in (tmp_path / "compare.html").read_text()
    proc = run_cli("compare", *two_runs, "--out", "x.html")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "x.html").is_file()


def test_bad_input_is_a_one_line_error_naming_the_folder(two_runs, run_cli, tmp_path):
    a, _ = two_runs
    empty = tmp_path / "empty"
    empty.mkdir()
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "sweep.parquet").write_bytes(b"")
    cases = [
        ([a], f"compare needs two results folders or more (got one: {a})"),
        ([], "compare needs two results folders or more (got none)"),
        ([a, tmp_path / "missing"], f"{tmp_path / 'missing'}: no such folder"),
        ([a, empty], f"{empty}: no results.json there (ssdlab run CONFIG --out {empty}"),
        ([a, sweep], f"{sweep}: a sweep folder (sweep.parquet), not one run"),
    ]
    for folders, message in cases:
        with pytest.raises(CompareError) as caught:
            ssdlab.compare(folders, out=tmp_path / "x.html")
        assert str(caught.value).startswith(message), str(caught.value)
    assert not (tmp_path / "x.html").exists()
    for folders, message in cases[:1] + cases[2:]:
        proc = run_cli("compare", *folders)
        assert proc.returncode == 2, proc.stdout
        assert proc.stderr.startswith(f"error: {message}"), proc.stderr
        assert "Traceback" not in proc.stderr
    proc = run_cli("report", a, a, "--metric", "iops")
    assert proc.returncode == 2 and "--metric chooses a sweep's metrics" in proc.stderr


def test_a_broken_results_json_is_named(two_runs, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "results.json").write_text('{"schema": "ssdlab.results/1", "version": ')
    with pytest.raises(ssdlab.ResultsFileError, match=re.escape(str(broken / "results.json"))):
        ssdlab.compare([two_runs[0], broken], out=tmp_path / "x.html")


def test_config_differences_flatten_to_set_keys_and_count_defaults():
    a = {"flash": {"channels": 8}, "flows": [{"name": "r", "queue_depth": 1}], "seed": 1}
    b = {
        "flash": {"channels": 8, "page_size": "8KiB"},  # the default page size: no difference
        "flows": [{"name": "r", "queue_depth": 4}, {"name": "w"}],
        "seed": 1,
    }
    assert flatten(b)["flows.1.name"] == "w"
    assert config_differences([a, b]) == [
        ("flows.0.queue_depth", [1, 4]),
        ("flows.1.name", [None, "w"]),
    ]
    assert config_differences([a, a]) == []


def test_ratios_are_undefined_without_a_base():
    assert ratio(3.0, 2.0) == 1.5
    assert ratio(1.0, 0) is None
    assert ratio(None, 2.0) is None
    assert ratio(1.0, float("nan")) is None


def test_run_labels_tell_same_named_folders_apart(tmp_path):
    labels = run_labels([tmp_path / "x" / "run", tmp_path / "y" / "run", tmp_path / "z"])
    assert labels[:2] == ["A: x/run", "B: y/run"]
    assert labels[2] == f"C: {tmp_path.name}/z"  # as deep as the others need
    assert run_labels([tmp_path / "a", tmp_path / "b"]) == ["A: a", "B: b"]
