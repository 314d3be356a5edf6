"""FOR TESTS ONLY: a data mismatch on demand, without a real bug in the model.

:class:`CorruptingSimulation` stands in for ``ssdlab._core.Simulation``: once the run has
processed `AFTER_EVENTS` events it flips a byte of one stored sector of every written page,
through the binding's test hook ``_corrupt_stored_sector_for_test`` (the same one the Rust tests
use), so later reads of those pages return wrong data. :func:`install` puts it in place;
``python tests/data_fault.py ARGS...`` does that and then runs ``ssdlab ARGS...``, for tests of
the command line's exit status.
"""

from __future__ import annotations

import json
import sys

from ssdlab import _core

AFTER_EVENTS = 20_000
_REAL = _core.Simulation


class CorruptingSimulation:
    """A simulation whose stored data is damaged once, part-way through the run."""

    def __init__(self, *args, **kwargs) -> None:
        self._sim = _REAL(*args, **kwargs)
        self.corrupted = 0
        self._pending = True

    def step(self, max_events: int) -> bool:
        if not self._pending:
            return self._sim.step(max_events)
        finished = self._sim.step(max(1, min(max_events, AFTER_EVENTS - self._sim.events)))
        if self._sim.events >= AFTER_EVENTS or finished:
            self._pending = False
            # The first sector of every logical page that holds data (4 KiB pages; the hook
            # takes LBAs inside the logical space only).
            device = json.loads(self._sim.results_json())["device"]
            for lba in range(0, device["logical_capacity_bytes"] // 512, 8):
                self.corrupted += self._sim._corrupt_stored_sector_for_test(lba)
        return finished

    def __getattr__(self, name: str):
        return getattr(self._sim, name)


def install() -> None:
    _core.Simulation = CorruptingSimulation


if __name__ == "__main__":
    install()
    from ssdlab.cli import main

    sys.argv = ["ssdlab", *sys.argv[1:]]
    main()
