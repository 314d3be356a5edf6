"""Optional dependencies: matplotlib (``ssdlab[plot]``) and Dask's distributed (``ssdlab[dask]``).

`pip install ssdlab` gives simulation, results, DataFrames and local sweeps; reports and plots
need matplotlib, sweeps on a Dask cluster need distributed. Import them through :func:`require`
at the place that needs them, so that a missing one says which command needs it and how to get
it instead of a bare ``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# Module -> (extra that provides it, its distribution on PyPI).
EXTRAS = {
    "matplotlib": ("plot", "matplotlib"),
    "distributed": ("dask", "distributed"),
}


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra that provides it."""


def require(module: str, needed_by: str) -> ModuleType:
    """Imports `module` (``"matplotlib.pyplot"``, ``"distributed"``) or raises
    :class:`MissingExtraError`: "ssdlab report needs matplotlib: pip install 'ssdlab[plot]'".

    `needed_by` names what needs it, as the user called it (``"ssdlab report"``,
    ``"Results.plot_cdf()"``).
    """
    top = module.partition(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        # Only the optional package itself missing is ours to explain; a broken install of it
        # (one of its own dependencies missing) keeps its own message.
        if e.name is None or e.name.partition(".")[0] != top or top not in EXTRAS:
            raise
        extra, dist = EXTRAS[top]
        raise MissingExtraError(f"{needed_by} needs {dist}: pip install 'ssdlab[{extra}]'") from e
