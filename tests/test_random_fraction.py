"""`flows[].random_fraction` (fio's `percentage_random`): the share of a flow's requests placed
by its address pattern, the others following the previous request. The paper's CMT study sweeps
it (validation/paper_setups.py); a CMT that misses more as the share grows is what it exercises."""

from __future__ import annotations

import pytest
import ssdlab
from conftest import small_config


def cmt_reader(random_fraction: float | None) -> dict:
    flow = {"request_size": "4KiB", "alignment": "4KiB", "requests": 4000, "queue_depth": 1}
    if random_fraction is not None:
        flow["random_fraction"] = random_fraction
    config = small_config(**flow)
    # A CMT of 64 entries: a sequential reader misses once per translation page's worth of
    # entries it caches one at a time, a random one on nearly every request.
    config["ftl"].update({"ideal_mapping": False, "cmt_capacity": "512B"})
    config["precondition"] = {"mode": "fill", "occupancy": 0.9}
    config["flows"][0]["working_set"] = 0.9
    return config


def hit_rate(random_fraction: float | None) -> float:
    return ssdlab.simulate(cmt_reader(random_fraction)).flows[0].cmt_hit_rate


def test_the_cmt_misses_more_as_the_random_share_grows() -> None:
    rates = [hit_rate(r) for r in (0.0, 0.5, 1.0)]
    assert rates[0] > rates[1] > rates[2], rates
    # Absent is all random: the same requests, so the same hit rate.
    assert hit_rate(None) == rates[2]


@pytest.mark.parametrize(
    ("flow", "field"),
    [
        ({"address": "sequential", "random_fraction": 0.5}, "flows[0].random_fraction"),
        ({"random_fraction": -0.1}, "flows[0].random_fraction"),
    ],
)
def test_bad_random_fraction_is_named(flow: dict, field: str) -> None:
    with pytest.raises(ssdlab.ConfigError, match=field.replace("[", r"\[").replace("]", r"\]")):
        ssdlab.simulate(small_config(**flow))
