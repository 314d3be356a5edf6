"""Typed access to the results document (schema ``ssdlab.results/1``).

The models mirror the JSON the Rust core writes. The schema only ever gains fields, so every
model accepts and keeps fields it does not know: a newer core's results still load here and
round-trip unchanged through :meth:`Results.to_dict`.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from pydantic import BaseModel, ConfigDict

from ssdlab import _core

SCHEMA = "ssdlab.results/1"


class _Document(BaseModel):
    model_config = ConfigDict(extra="allow")


class Latency(_Document):
    """Response-time distribution of one operation type, in microseconds."""

    mean: float
    p50: float
    p90: float
    p99: float
    p99_9: float
    p99_99: float
    max: float


class OpStats(_Document):
    """Requests of one operation type (reads or writes) of a flow or of the device."""

    count: int
    iops: float
    bandwidth_mib_s: float
    bytes: int
    latency_us: Latency
    latency_breakdown_us: dict[str, float]
    """Mean microseconds per step of the request path, in path order; sums to the mean."""


class GcStats(_Document):
    """Garbage collection activity over the run."""

    blocks_erased: int
    pages_moved: int
    write_amplification: float
    victims_selected: int


class FlashStats(_Document):
    """Flash back-end operation counts and channel utilisation."""

    reads: int
    programs: int
    erases: int
    multiplane_commands: int
    suspensions: int
    unmapped_reads: int
    read_modify_writes: int
    translation_page_reads: int
    translation_page_writes: int
    max_erase_count: int
    channel_utilisation: list[float]


class WearStats(_Document):
    """Erase counts, blocks retired at the P/E limit, and static wear-leveling moves."""

    min_erase_count: int
    max_erase_count: int
    retired_blocks: int
    static_wear_leveling_migrations: int


class CacheStats(_Document):
    """The data cache as the device saw it: flushes of dirty lines, writes that waited for room."""

    flushes: int
    writes_waited: int
    dram_utilisation: float


class DeviceResults(_Document):
    """All flows together, as the device saw them."""

    reads: OpStats
    writes: OpStats
    iops: float
    bandwidth_mib_s: float
    gc: GcStats
    flash: FlashStats
    wear: WearStats
    cache: CacheStats
    logical_capacity_bytes: int
    physical_capacity_bytes: int


class CmtStats(_Document):
    """Cached mapping table lookups of one flow (misses = lookups - hits)."""

    lookups: int
    hits: int
    misses: int


class FlowCacheStats(_Document):
    """A flow's page reads that looked in the data cache, and those it served."""

    read_lookups: int
    read_hits: int


class FlowResults(_Document):
    """One flow (application or tenant with its own queues)."""

    name: str
    seed: int
    """Seed of the flow's random stream; setting it as ``flows[].seed`` reruns the same requests."""
    iops: float
    bandwidth_mib_s: float
    reads: OpStats
    writes: OpStats
    latency_breakdown_us: dict[str, float]
    cmt_hit_rate: float
    cmt: CmtStats
    cache_hit_rate: float
    cache: FlowCacheStats
    requests: int
    interval_seconds: float


class Fairness(_Document):
    """How much the flows slowed each other down (``simulate(..., alone=True)``).

    A flow's slowdown is its mean response time when it shares the device divided by its mean
    response time when it runs alone on the same device (same config and seed, only that flow).
    """

    slowdown: dict[str, float]
    """Per flow name: RT(shared) / RT(alone); 1 means no interference."""
    fairness: float
    """min slowdown / max slowdown, in (0, 1]; 1 when every flow suffers alike."""
    weighted_speedup: float
    """Sum over flows of RT(alone) / RT(shared): the number of flows when nobody slows down."""
    shared_mean_us: dict[str, float]
    """Per flow: mean response time in the shared run (reads and writes together)."""
    alone_mean_us: dict[str, float]
    """Per flow: mean response time when it runs alone."""


with warnings.catch_warnings():
    # `schema` is the document's own field name; it shadows pydantic's deprecated `schema()`.
    warnings.filterwarnings("ignore", message=".*shadows an attribute in parent.*")

    class Results(_Document):
        """Everything one run measured, plus the configuration that produced it."""

        schema: str
        version: str
        seed: int
        simulated_seconds: float
        wall_seconds: float
        setup_wall_seconds: float
        events: int
        device: DeviceResults
        flows: list[FlowResults]
        warnings: list[str]
        config: dict[str, Any]
        fairness: Fairness | None = None
        """Only for runs with ``alone=True`` (``ssdlab run --alone``)."""

        @classmethod
        def from_json(cls, text: str | bytes) -> Results:
            """Load a saved results.json, so earlier runs can be compared with new ones."""
            return cls.model_validate_json(text)

        def to_dict(self) -> dict[str, Any]:
            """The document as plain JSON data, unknown fields included, for json or pandas."""
            document = self.model_dump()
            if document.get("fairness") is None:
                document.pop("fairness", None)
            return document

        def to_json(self) -> str:
            """The document as pretty JSON text, in the layout the core writes."""
            return json.dumps(self.to_dict(), indent=2)

        def summary_table(self) -> str:
            """The core's fixed-width summary, so scripts print the same table as the tools."""
            return _core.summary_table_from_json(self.to_json())

        def flow(self, name: str) -> FlowResults:
            """Look a flow up by name, which stays stable when flows are added or reordered."""
            for f in self.flows:
                if f.name == name:
                    return f
            names = ", ".join(f.name for f in self.flows)
            raise KeyError(f"no flow named {name!r} (flows: {names})")
