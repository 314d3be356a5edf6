"""Over-provisioning (OP) on a tiny drive: less OP means less room for greedy GC to wait for
pages to go invalid, so each victim carries more valid pages, write amplification rises and
random-write bandwidth falls. The direction `validation/over_provisioning.py` shows on a larger
drive (and that Amber's report, as quoted in the reference facts, appears inverted against)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import ssdlab

OPS = [0.20, 0.10, 0.05]


def writer_config(mode: str, op: float, *, requests: int) -> dict[str, Any]:
    """8 planes of 128 blocks of 32 4 KiB pages (16 MiB of flash), one QD 8 random writer over
    the whole logical space; GC threshold 2 %, so 5 % OP still leaves 3 % of the blocks free."""
    precondition: dict[str, Any] = {"mode": mode}
    if mode == "fill":
        precondition |= {"occupancy": 1.0, "layout": "packed"}
    else:
        precondition["drive_writes"] = 2
    return {
        "seed": 5,
        "controller": {"scheduling": "out-of-order"},
        "ftl": {
            "ideal_mapping": True,
            "over_provisioning": op,
            "gc_policy": "greedy",
            "gc_threshold": 0.02,
            "dynamic_wear_leveling": False,
            "static_wear_leveling": False,
        },
        "flash": {
            "channels": 2,
            "chips_per_channel": 2,
            "dies_per_chip": 1,
            "planes_per_die": 2,
            "blocks_per_plane": 128,
            "pages_per_block": 32,
            "page_size": "4KiB",
        },
        "precondition": precondition,
        "flows": [
            {
                "name": "w",
                "read_fraction": 0.0,
                "request_size": "4KiB",
                "alignment": "4KiB",
                "address": "uniform",
                "queue_depth": 8,
                "requests": requests,
            }
        ],
    }


@pytest.mark.parametrize("mode", ["steady", "simulate"])
def test_less_over_provisioning_gives_lower_steady_state_bandwidth_and_higher_wa(mode):
    runs = {op: ssdlab.simulate(writer_config(mode, op, requests=4000)) for op in OPS}
    bandwidth = [runs[op].device.writes.bandwidth_mib_s for op in OPS]
    wa = [runs[op].device.gc.write_amplification for op in OPS]
    summary = ", ".join(
        f"OP {op:.0%}: {b:.2f} MiB/s WA {w:.2f}"
        for op, b, w in zip(OPS, bandwidth, wa, strict=True)
    )
    assert all(a > b for a, b in itertools.pairwise(bandwidth)), (
        f"bandwidth should fall with OP: {summary}"
    )
    assert all(a < b for a, b in itertools.pairwise(wa)), f"WA should rise as OP falls: {summary}"
    assert wa[0] > 1.5, f"steady state at 20 % OP should already collect garbage: {summary}"


def test_the_drop_after_two_capacity_random_writes_grows_as_over_provisioning_shrinks():
    drops = {}
    for op in OPS:
        device = ssdlab.simulate(writer_config("fill", op, requests=1)).device
        logical_pages = device.logical_capacity_bytes // 4096
        fresh = ssdlab.simulate(writer_config("fill", op, requests=logical_pages // 100))
        assert fresh.device.gc.write_amplification == pytest.approx(1.0), "no GC while fresh"
        aged = writer_config("simulate", op, requests=logical_pages // 10)
        after = ssdlab.simulate(aged)
        drops[op] = 1 - after.device.writes.bandwidth_mib_s / fresh.device.writes.bandwidth_mib_s
    values = [drops[op] for op in OPS]
    assert all(0 < a < b < 1 for a, b in itertools.pairwise(values)), (
        f"drop of write bandwidth by OP: { {f'{op:.0%}': round(d, 3) for op, d in drops.items()} }"
    )
