"""FOR TESTS ONLY: faults on demand, without a real bug or a real full disk.

- :class:`CorruptingSimulation` stands in for ``ssdlab._core.Simulation``: once the run has
  processed `AFTER_EVENTS` events it flips a byte of the first stored sector of every written
  page, through the binding's test hook ``_corrupt_stored_sector_for_test`` (the one the Rust
  tests use), so later reads of those pages return wrong data (a data mismatch).
- :func:`full_disk` makes every file ssdlab writes through ``ssdlab._outputs`` fail with
  ENOSPC after `DISK_ROOM` bytes, as a full disk does, leaving the bytes that fitted.

``python tests/faults.py FAULT ARGS...`` (FAULT: ``corrupt-data`` or ``full-disk``) puts the
fault in place and runs ``ssdlab ARGS...``, for tests of the command line.
"""

from __future__ import annotations

import errno
import json
import os
import sys

from ssdlab import _core, _outputs

AFTER_EVENTS = 20_000
DISK_ROOM = 4096
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


def corrupt_data() -> None:
    _core.Simulation = CorruptingSimulation


class _FullDiskFile:
    """A file that takes `room` bytes, then fails like a full disk."""

    def __init__(self, file, room: int) -> None:
        self._file = file
        self._room = room

    def write(self, data: bytes) -> int:
        fits = data[: self._room]
        self._file.write(fits)
        self._file.flush()
        self._room -= len(fits)
        if len(fits) < len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return len(data)

    def __getattr__(self, name: str):
        return getattr(self._file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._file.close()


def full_disk_open(room: int = DISK_ROOM):
    """An `open` whose files for writing take `room` bytes each, then fail with ENOSPC."""

    def open_on_a_full_disk(path, mode="r", *args, **kwargs):
        file = open(path, mode, *args, **kwargs)  # noqa: SIM115 (closed by the wrapper)
        return _FullDiskFile(file, room) if "w" in mode else file

    return open_on_a_full_disk


def full_disk() -> None:
    _outputs.open = full_disk_open()


if __name__ == "__main__":
    {"corrupt-data": corrupt_data, "full-disk": full_disk}[sys.argv[1]]()
    from ssdlab.cli import main

    sys.argv = ["ssdlab", *sys.argv[2:]]
    main()
