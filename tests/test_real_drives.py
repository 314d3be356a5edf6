"""validation/real_drives.py in small: the named drives' example configs run the queue-depth
sweep, reads rise sublinearly with the queue depth and saturate (Amber's check on shape), and
the 850 PRO's reads and sequential bandwidth land near its data sheet."""

from __future__ import annotations

import sys

from conftest import REPO_ROOT


def test_named_drives_saturate_sublinearly_and_match_the_data_sheet_where_they_can():
    sys.path.insert(0, str(REPO_ROOT / "validation"))
    import real_drives

    rows = real_drives.study(["samsung-850pro", "samsung-sz985"], requests=3000, cache_multiple=0)
    for drive, r in rows.items():
        assert r["read_sublinear"], drive
        assert r["read_knee_qd"] in (8, 16), (drive, r["read_knee_qd"])
        reads = [r["curves"]["read"][qd]["iops"] for qd in real_drives.QUEUE_DEPTHS]
        assert reads == sorted(reads), drive
    model = rows["samsung-850pro"]["model"]
    published = dict((m, v) for m, v, _, _ in real_drives.DRIVES["samsung-850pro"]["published"])
    for metric in ("read_iops_max", "seq_read_mb_s"):
        assert 0.8 < model[metric] / published[metric] < 1.25, metric
    assert 0.5 < model["read_iops_qd1"] / published["read_iops_qd1"] < 1.5
    assert set(real_drives.DRIVES) == {
        "intel-750",
        "samsung-850pro",
        "samsung-sz985",
        "samsung-980pro-class",
    }
    for d in real_drives.DRIVES.values():
        assert (REPO_ROOT / "examples" / d["example"]).exists()
