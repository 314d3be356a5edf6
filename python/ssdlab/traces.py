"""Reading a trace the way a trace flow replays it, without running a simulation.

:func:`read_trace` hands the file to the simulator's own reader (crates/ssdlab-core's
``workload::trace``), so a notebook sees exactly the requests a run gets: the same format
detection (MSR Cambridge, blkparse, fio iolog, MQSim, SNIA CSV; docs/traces.md), the same
filters and time scaling, the same errors naming file and line, and compressed files (gzip,
bzip2, xz, zstd, told by their first bytes) or ``-`` for the standard input.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from ssdlab import _core
from ssdlab._blame import explain
from ssdlab._core import ConfigError

if TYPE_CHECKING:
    import pandas as pd

# Without a device to wrap addresses around: a logical space no trace reaches.
_UNBOUNDED_SECTORS = 1 << 62
_SECTOR_BYTES = 512


def read_trace(
    path: str | os.PathLike[str],
    *,
    format: str = "auto",
    device: int | str | None = None,
    ops: str | None = None,
    start: str | None = None,
    end: str | None = None,
    time_scale: float | None = None,
    arrival_gap: str | None = None,
    blkparse_event: str | None = None,
    logical_capacity_bytes: int | None = None,
) -> pd.DataFrame:
    """The requests of the trace at `path`, one row each, in replay order: ``arrival_s``
    (seconds from the first replayed request, after ``time_scale``), ``op`` (``read`` or
    ``write``), ``start_sector`` and ``size_bytes``.

    The keyword arguments are the trace flow's keys (``[[flows]]`` with ``kind = "trace"``,
    docs/traces.md): ``format``, ``device`` (keep one disk of a multi-disk trace), ``ops``
    (``"read"`` or ``"write"``), ``start``/``end`` (a window such as ``"500ms"``),
    ``time_scale``, ``arrival_gap`` (untimed fio iologs) and ``blkparse_event``. With
    `logical_capacity_bytes`, addresses wrap around a device of that size as in a run.
    ``df.attrs`` holds the ``format`` the file was read as and the reader's ``warnings``.
    Errors are :class:`ssdlab.TraceError` (the file and line) or :class:`ssdlab.ConfigError`
    (an option).
    """
    import numpy as np
    import pandas as pd

    flow: dict[str, Any] = {"kind": "trace", "path": os.fspath(path), "format": format}
    given = {
        "device": device,
        "ops": ops,
        "start": start,
        "end": end,
        "time_scale": time_scale,
        "arrival_gap": arrival_gap,
        "blkparse_event": blkparse_event,
    }
    flow.update({k: v for k, v in given.items() if v is not None})
    sectors = (
        _UNBOUNDED_SECTORS
        if logical_capacity_bytes is None
        else max(1, logical_capacity_bytes // _SECTOR_BYTES)
    )
    try:
        raw, found, warnings = _core.read_trace(os.fspath(path), json.dumps(flow), sectors)
    except ConfigError as e:
        raise ConfigError(explain(str(e), None)) from None
    records = np.frombuffer(
        raw,
        dtype=np.dtype(
            [
                ("arrival_ps", "<u8"),
                ("start_sector", "<u8"),
                ("sectors", "<u4"),
                ("op", "u1"),
                ("pad", "V3"),
            ]
        ),
    )
    frame = pd.DataFrame(
        {
            "arrival_s": records["arrival_ps"] / 1e12,
            "op": np.where(records["op"] == 0, "read", "write").astype(object),
            "start_sector": records["start_sector"].astype("int64"),
            "size_bytes": records["sectors"].astype("int64") * _SECTOR_BYTES,
        }
    )
    frame.attrs["format"] = found
    frame.attrs["warnings"] = list(warnings)
    return frame
