"""The simulated SSD as a component that a host written in Python drives (docs/embedding.md).

    dev = ssdlab.Device("examples/mqsim-default.toml", overrides=["data.emulate=true"])
    rid = dev.submit("write", start_sector=0, sectors=8, data=bytes(4096))
    dev.run_until_idle()
    for c in dev.completions():
        print(c.id, c.op, c.latency_us)

Time is integer picoseconds (``now_ps``, ``advance_to``), addresses are 512-byte sectors, as in
the Rust and C interfaces. The host queues are the config's flows of ``kind = "host"`` (one
named ``host`` when the config has no flows); flows of other kinds run beside them. The device
advances only when told: ``advance_to(t)`` runs every event up to ``t`` with the GIL released,
``next_event_time()`` says when something happens next. The same calls give the same results,
byte for byte.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab import _core
from ssdlab._blame import explain
from ssdlab._core import ConfigError
from ssdlab.api import load_document
from ssdlab.results import Results

#: Picoseconds per microsecond and per second.
PS_PER_US = 1_000_000
PS_PER_S = 1_000_000_000_000

OPS = (
    "read",
    "write",
    "flush",
    "trim",
    "write_zeroes",
    "zone_append",
    "zone_open",
    "zone_close",
    "zone_finish",
    "zone_reset",
)


@dataclass(frozen=True)
class Zone:
    """One zone as Report Zones gives it (sectors are the host's 512-byte sectors):
    ``state`` is one of empty, implicitly_open, explicitly_open, closed, full, read_only,
    offline."""

    zone: int
    state: str
    start_sector: int
    capacity_sectors: int
    write_pointer: int


@dataclass(frozen=True)
class Completion:
    """A finished request: the host's id, its queue and op, ``status`` ("success";
    "unsupported" for a trim the mapping cannot honour or a zone command on a conventional
    namespace; on a zoned namespace the NVMe ZNS errors "zone_boundary_error",
    "zone_is_full", "zone_is_read_only", "zone_is_offline", "zone_invalid_write",
    "too_many_active_zones", "too_many_open_zones", "invalid_zone_state_transition",
    "invalid_field"), when it was submitted and completed (picoseconds), where its time went
    (picoseconds per step of results.json's ``latency_breakdown``), a read's bytes when the
    device keeps data, and where a zone append landed (``assigned_sector``)."""

    id: int
    queue: int
    op: str
    status: str
    submitted_ps: int
    completed_ps: int
    breakdown_ps: dict[str, int]
    data: bytes | None
    assigned_sector: int | None = None

    @property
    def latency_ps(self) -> int:
        return self.completed_ps - self.submitted_ps

    @property
    def latency_us(self) -> float:
        return self.latency_ps / PS_PER_US


class Device:
    """A device an outside host drives: ``submit``, ``advance_to``, ``completions``."""

    def __init__(
        self,
        config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        *,
        overrides: Iterable[str] = (),
        base_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        """`config` is a TOML path or a config dict (None: the default device with one host
        queue); `overrides` are ``key.path=value`` strings as for :func:`ssdlab.simulate`."""
        overrides = list(overrides)
        document, folder, source, _ = load_document(
            {} if config is None else config, overrides, base_dir
        )
        try:
            self._device = _core.Device(json.dumps(document, default=str), str(folder))
        except ConfigError as e:
            raise ConfigError(explain(str(e), source, overrides)) from None
        self._next_id = 0

    def submit(
        self,
        op: str,
        start_sector: int = 0,
        sectors: int = 0,
        *,
        data: bytes | bytearray | memoryview | None = None,
        queue: int = 0,
        id: int | None = None,
        placement_handle: int | None = None,
    ) -> int:
        """Queues a request at the current time and returns its id (the next number unless
        `id` is given). `op` is one of ``read``, ``write``, ``flush``, ``trim``,
        ``write_zeroes``, and on a zoned namespace ``zone_append`` and the zone management ops
        ``zone_open``, ``zone_close``, ``zone_finish``, ``zone_reset`` (`start_sector` is the
        zone's first sector, no sectors); `data` (a write's ``sectors`` x 512 bytes) is kept
        and returned by later reads (needs ``data.emulate``). `placement_handle` places a write
        by that FDP reclaim unit handle (needs ``[ftl.fdp]``; default: the queue's flow's
        ``placement_handle``); one the device does not offer is placed by handle 0 and logged in
        ``results().fdp["events"]``, as a drive does. Raises ValueError naming what is wrong."""
        if id is None:
            id = self._next_id
        payload = bytes(data) if data is not None and not isinstance(data, bytes) else data
        self._device.submit(id, queue, op, start_sector, sectors, payload, placement_handle)
        self._next_id = max(self._next_id, id + 1)
        return id

    def advance_to(self, time_ps: int) -> None:
        """Runs every event due at or before `time_ps`, then sets the clock there."""
        self._device.advance_to(int(time_ps))

    def next_event_time(self) -> int | None:
        """When the next event is due (picoseconds), or None when nothing is in flight."""
        return self._device.next_event_time()

    def run_until_idle(self) -> None:
        """Advances until nothing is in flight."""
        while (t := self._device.next_event_time()) is not None:
            self._device.advance_to(t)

    def completions(self) -> list[Completion]:
        """Completions since the last call, in completion order."""
        return [
            Completion(i, q, op, status, sub, done, dict(steps), data, assigned)
            for (i, q, op, status, sub, done, steps, data, assigned) in self._device.completions()
        ]

    def zone_report(
        self, first: int = 0, count: int | None = None, *, queue: int = 0
    ) -> list[Zone]:
        """Report Zones of host queue `queue`'s namespace: the zones from `first` (all the rest
        unless `count` is given), in the namespace's addresses. Raises ValueError on a
        conventional namespace (without ``[zns]``, or one of ``[[namespaces]]`` that is not
        zoned)."""
        zones = self._device.zone_report(queue, first, 2**64 - 1 if count is None else count)
        if zones is None:
            raise ValueError(f"zone_report: queue {queue}'s namespace is conventional, not zoned")
        return [Zone(*z) for z in zones]

    def queue_sectors(self, queue: int = 0) -> int:
        """Sectors host queue `queue` addresses: its namespace's with ``[[namespaces]]`` (each
        namespace starts at sector 0), the device's otherwise (``logical_sectors``)."""
        return self._device.queue_sectors(queue)

    def results(self) -> Results:
        """The results so far: the document a batch run writes to results.json."""
        return Results.from_json(self._device.results_json())

    def persist(self) -> Path:
        """Writes the device's logical contents to ``data.backing_file`` (replacing the file once
        complete); a Device built later from the same config starts with them. OSError when the
        config names no backing file or the file cannot be written."""
        return Path(self._device.persist())

    def check_invariants(self) -> None:
        self._device.check_invariants()

    @property
    def now_ps(self) -> int:
        return self._device.now_ps

    @property
    def now_seconds(self) -> float:
        return self._device.now_ps / PS_PER_S

    @property
    def in_flight(self) -> int:
        return self._device.in_flight

    @property
    def host_queues(self) -> list[str]:
        return self._device.host_queues

    @property
    def logical_sectors(self) -> int:
        return self._device.logical_sectors

    @property
    def page_bytes(self) -> int:
        return self._device.page_bytes
