"""ssdlab: a fast multi-queue SSD simulator with a Rust core.

The usual entry point is :func:`simulate`, which takes a TOML file or a config dict and returns
:class:`Results`; ``ssdlab run CONFIG`` does the same from the shell. :func:`import_mqsim` reads
MQSim's ssdconfig.xml and workload.xml (one :class:`Scenario` per IO_Scenario). :class:`Device`
is the same model as a component a host drives request by request (docs/embedding.md).

The names below are imported when first used (PEP 562), so that ``import ssdlab`` and a short
``ssdlab run`` do not pay for the parts they do not touch (issue 18: instant start).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from ssdlab._core import ConfigError, EndOfLifeError, TraceError
from ssdlab._core import version as _core_version

if TYPE_CHECKING:
    from ssdlab.analytic import AnalyticModel, analytic
    from ssdlab.api import DataIntegrityError, simulate
    from ssdlab.compare import compare
    from ssdlab.config import apply_overrides, dump_toml, load_config
    from ssdlab.device import Completion, Device, Zone
    from ssdlab.live import serve
    from ssdlab.mqsim import Scenario, import_mqsim
    from ssdlab.results import Fairness, Results, ResultsFileError
    from ssdlab.traces import read_trace

__version__ = _core_version()

# Public name -> the module that defines it.
_LAZY = {
    "AnalyticModel": "ssdlab.analytic",
    "analytic": "ssdlab.analytic",
    "DataIntegrityError": "ssdlab.api",
    "simulate": "ssdlab.api",
    "compare": "ssdlab.compare",
    "apply_overrides": "ssdlab.config",
    "dump_toml": "ssdlab.config",
    "load_config": "ssdlab.config",
    "Completion": "ssdlab.device",
    "Device": "ssdlab.device",
    "Zone": "ssdlab.device",
    "serve": "ssdlab.live",
    "Scenario": "ssdlab.mqsim",
    "import_mqsim": "ssdlab.mqsim",
    "Fairness": "ssdlab.results",
    "Results": "ssdlab.results",
    "ResultsFileError": "ssdlab.results",
    "read_trace": "ssdlab.traces",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ssdlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next use is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(types.ModuleType):
    """The package, whose functions `analytic` and `compare` share their names with the
    submodules that define them. Importing a submodule binds it on the package once loaded, which
    would make ``ssdlab.analytic`` the module after ``from ssdlab.analytic import ...`` ran
    anywhere; the function is bound instead, as the eager imports this package had did."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "AnalyticModel",
    "Completion",
    "ConfigError",
    "DataIntegrityError",
    "Device",
    "EndOfLifeError",
    "Fairness",
    "Results",
    "ResultsFileError",
    "Scenario",
    "TraceError",
    "Zone",
    "__version__",
    "analytic",
    "apply_overrides",
    "compare",
    "dump_toml",
    "import_mqsim",
    "load_config",
    "read_trace",
    "serve",
    "simulate",
]
