"""ssdlab: a fast multi-queue SSD simulator with a Rust core.

The usual entry point is :func:`simulate`, which takes a TOML file or a config dict and returns
:class:`Results`; ``ssdlab run CONFIG`` does the same from the shell. :func:`import_mqsim` reads
MQSim's ssdconfig.xml and workload.xml (one :class:`Scenario` per IO_Scenario). :class:`Device`
is the same model as a component a host drives request by request (docs/embedding.md).
"""

from ssdlab._core import ConfigError, TraceError
from ssdlab._core import version as _core_version
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

__all__ = [
    "AnalyticModel",
    "Completion",
    "ConfigError",
    "DataIntegrityError",
    "Device",
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
