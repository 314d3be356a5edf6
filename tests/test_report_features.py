"""The HTML report shows issue 17's features: FDP's per-handle write amplification and events,
the SLC cache's traffic and fill over time, an LSM store's own write amplification."""

from __future__ import annotations

import pytest
import ssdlab
from conftest import REPO_ROOT
from ssdlab.report import write_report


@pytest.mark.parametrize(
    ("example", "words", "chart"),
    [
        ("fdp-two-tenants", ["Flexible Data Placement", "FDP events", "units erased"], None),
        ("qlc-slc-cache", ["SLC write cache", "folded"], "slc_cache_over_time.png"),
        ("zns-lsm-rocksdb", ["LSM stores on zones", "compactions", "rocksdb"], None),
    ],
)
def test_the_report_has_the_features_section(tmp_path, example, words, chart):
    path = REPO_ROOT / "examples" / f"{example}.toml"
    flows = ssdlab.load_config(path)["flows"]
    overrides = [f"flows.{i}.requests=20000" for i in range(len(flows))]
    saved = ssdlab.simulate(path, overrides=overrides).save(tmp_path / example)
    html = write_report(saved.parent).read_text()
    for word in words:
        assert word in html, word
    if chart:
        assert (saved.parent / chart).stat().st_size > 1000
    # A run without the feature has no such section.
    plain = ssdlab.simulate(
        REPO_ROOT / "examples" / "mqsim-default.toml", overrides=["flows.0.requests=500"]
    )
    plain_html = write_report(plain.save(tmp_path / "plain").parent).read_text()
    assert words[0] not in plain_html
