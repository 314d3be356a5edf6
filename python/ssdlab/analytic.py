"""The closed-form model of SSD parallelism (Yoo et al., "Analytical Model of SSD Parallelism",
SIMULTECH 2014) for a configured device, next to the simulation.

A page costs ``X_page = X_ch + X_reg + X_cell`` to read (or write): the controller's channel
switching delay (``controller.dispatch_read`` / ``dispatch_write``), the bus transfer of the
page with its command cycles, and the cell operation (the LSB page's latency). With ``rho``
pages served in parallel (channels x chips x dies, x planes when the drive forms multi-plane
commands) a request of ``N`` pages takes
``X_ch (N - 1) + max(0, X_page - X_ch rho) (ceil(N / rho) - 1) + X_page``.

The model assumes one request at a time on an otherwise idle, mapped drive: no queueing, GC,
caches or mapping misses, no host transfer. ``crates/ssdlab-core/src/analytic`` computes it;
this module presents it::

    model = ssdlab.analytic("examples/intel-x25m.toml")
    model.requests[0].read_us          # one page read, microseconds
    ssdlab analytic examples/intel-x25m.toml
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ssdlab import _core
from ssdlab._blame import explain
from ssdlab._core import ConfigError

KIB = 1024
MIB = 1024 * 1024
# Request sizes when none are asked for: one page, then doubling up to 512 KiB (the README's
# X25-M table), or just the page when pages are larger.
DEFAULT_LARGEST_BYTES = 512 * KIB


@dataclass(frozen=True)
class PageCost:
    """What one page costs in the model, in microseconds."""

    channel_us: float
    """X_ch: the controller's dispatch of a page to its channel (the channel switching delay)."""
    register_us: float
    """X_reg: the page's bus transfer, with its command and address cycles."""
    cell_us: float
    """X_cell: the cell read or program (the LSB page's latency)."""
    page_us: float
    """X_page = X_ch + X_reg + X_cell: one page, alone."""


@dataclass(frozen=True)
class RequestTime:
    """The model's queue-depth-1 service time of a read and of a write of one size."""

    size_bytes: int
    pages: int
    read_us: float
    write_us: float

    @property
    def read_iops(self) -> float:
        return 1e6 / self.read_us

    @property
    def write_iops(self) -> float:
        return 1e6 / self.write_us

    @property
    def read_mib_s(self) -> float:
        return self.size_bytes / MIB / (self.read_us / 1e6)

    @property
    def write_mib_s(self) -> float:
        return self.size_bytes / MIB / (self.write_us / 1e6)


@dataclass(frozen=True)
class AnalyticModel:
    """The closed form for one device: its page costs, parallelism and request times."""

    parallel_units: int
    """rho: pages the device works on at once."""
    page_size_bytes: int
    read: PageCost
    write: PageCost
    requests: list[RequestTime]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (what ``ssdlab analytic --json`` prints), with IOPS and MiB/s per size."""
        doc = asdict(self)
        for row, request in zip(doc["requests"], self.requests, strict=True):
            row.update(
                read_iops=request.read_iops,
                write_iops=request.write_iops,
                read_mib_s=request.read_mib_s,
                write_mib_s=request.write_mib_s,
            )
        return doc

    def table(self) -> str:
        """The request times as a fixed-width text table."""
        header = (
            f"{'request':>9} {'pages':>5} {'read us':>9} {'read IOPS':>10} {'read MiB/s':>10} "
            f"{'write us':>9} {'write IOPS':>10} {'write MiB/s':>11}"
        )
        rows = [header]
        for r in self.requests:
            rows.append(
                f"{format_size(r.size_bytes):>9} {r.pages:>5} {r.read_us:>9.1f} "
                f"{r.read_iops:>10,.0f} {r.read_mib_s:>10.1f} {r.write_us:>9.1f} "
                f"{r.write_iops:>10,.0f} {r.write_mib_s:>11.1f}"
            )
        return "\n".join(rows)


def analytic(
    config: str | os.PathLike[str] | Mapping[str, Any],
    *,
    overrides: Iterable[str] = (),
    request_sizes: Sequence[int] | None = None,
) -> AnalyticModel:
    """The closed-form latencies of `config`'s device (a TOML path or a config dict; flows are
    not needed). `overrides` are ``key.path=value`` strings as with ``ssdlab run --set``;
    `request_sizes` are in bytes (rounded up to whole pages by the model), by default one page
    doubling up to 512 KiB. A bad value raises :class:`ConfigError` naming the field (and the
    file's line or the override that set it)."""
    from ssdlab.api import load_document  # api imports the results models: keep this light

    document, _folder, source, _warnings = load_document(config, overrides)
    try:
        text = json.dumps(document)
    except ValueError as e:
        raise ConfigError(f"config: cannot be encoded as JSON: {e}") from None
    sizes = list(request_sizes) if request_sizes is not None else None
    if sizes is not None:
        for size in sizes:
            if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
                raise ValueError(f"request sizes are whole numbers of bytes above 0, got {size!r}")
    try:
        # The page size is the core's to read (units, defaults): ask it first when sizes
        # depend on it.
        page = json.loads(_core.analytic_json(text, []))["page_size_bytes"]
        if sizes is None:
            sizes = default_sizes(page)
        doc = json.loads(_core.analytic_json(text, sizes))
    except ConfigError as e:
        raise ConfigError(explain(str(e), source, overrides)) from None
    return AnalyticModel(
        parallel_units=doc["parallel_units"],
        page_size_bytes=doc["page_size_bytes"],
        read=PageCost(**doc["read"]),
        write=PageCost(**doc["write"]),
        requests=[RequestTime(**r) for r in doc["requests"]],
    )


def default_sizes(page_size_bytes: int) -> list[int]:
    """One page, two, four, ... up to 512 KiB (at least the one page)."""
    sizes = [page_size_bytes]
    while sizes[-1] * 2 <= DEFAULT_LARGEST_BYTES:
        sizes.append(sizes[-1] * 2)
    return sizes


def format_size(size_bytes: int) -> str:
    """``4 KiB``, ``1 MiB``, ``1536 B``: the largest binary unit that divides the size."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", KIB)):
        if size_bytes % factor == 0:
            return f"{size_bytes // factor} {unit}"
    return f"{size_bytes} B"


_UNITS = {
    "": 1,
    "b": 1,
    "kib": KIB,
    "mib": MIB,
    "gib": 1 << 30,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
}


def parse_size(text: str) -> int:
    """``"4KiB"``, ``"128 KiB"``, ``"1MiB"``, ``"4096"`` (bytes) as a number of bytes."""
    number = text.strip().rstrip("BbIiKkMmGg ")
    unit = text.strip()[len(number) :].strip().lower()
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if unit not in _UNITS or value <= 0 or value * _UNITS[unit] != int(value * _UNITS[unit]):
        raise ValueError(
            f"request size {text!r}: expected a whole number of bytes with a unit, e.g. 4KiB"
        )
    return int(value * _UNITS[unit])
