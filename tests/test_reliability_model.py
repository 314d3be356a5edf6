"""Read retries from flash reliability through the Python API: the worn-drive example needs
retries where the fresh drive needs none, and its results carry them by level."""

from __future__ import annotations

import pytest
import ssdlab
from conftest import REPO_ROOT

EXAMPLE = REPO_ROOT / "examples" / "worn-mlc-read-retry.toml"
SHORT = ["flows.0.requests=3000"]


def test_old_data_on_a_worn_drive_needs_read_retries_and_reads_slower():
    aged = ssdlab.simulate(EXAMPLE, overrides=SHORT)
    fresh_data = "flash.reliability.data_age_days_at_start=0"
    fresh = ssdlab.simulate(EXAMPLE, overrides=[*SHORT, fresh_data])
    a, f = aged.reliability, fresh.reliability
    assert a is not None and f is not None
    assert f.read_retries == 0 and f.reads_by_retries[0] == f.page_reads
    assert a.read_retries > a.page_reads / 2
    assert a.mean_rber > 10 * f.mean_rber
    assert aged.flows[0].reads.latency_us.p99 > 1.5 * fresh.flows[0].reads.latency_us.p99
    levels = {lvl.retries: lvl for lvl in a.read_latency_us_by_retries}
    assert levels[1].mean > levels[0].mean
    assert sum(lvl.count for lvl in a.read_latency_us_by_retries) == 3000
    assert aged.to_dict()["reliability"]["reads_by_retries"] == a.reads_by_retries


def test_no_reliability_section_without_the_model():
    z_ssd = REPO_ROOT / "examples" / "z-ssd-slc.toml"
    r = ssdlab.simulate(z_ssd, overrides=["flows.0.requests=200"])
    assert r.reliability is None and "reliability" not in r.to_dict()


def test_a_bad_level_list_names_the_key():
    with pytest.raises(ssdlab.ConfigError, match=r"flash\.reliability\.soft_decision_bits"):
        ssdlab.simulate(EXAMPLE, overrides=[*SHORT, "flash.reliability.soft_decision_bits=[30]"])


def test_the_report_and_frames_show_retries(tmp_path):
    from ssdlab.report import write_report

    r = ssdlab.simulate(EXAMPLE, overrides=[*SHORT, "flash.reliability.read_reclaim_bits=32"])
    frame = r.gc_time_series()
    assert frame["read_retries"].sum() == r.reliability.read_retries
    assert frame["read_reclaims"].sum() == r.reliability.read_reclaims > 0
    r.save(tmp_path)
    html = write_report(tmp_path).read_text()
    assert "Flash reliability: read retries" in html
    assert (tmp_path / "reliability_over_time.png").exists()
