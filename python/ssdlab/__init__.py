"""ssdlab: a fast multi-queue SSD simulator with a Rust core.

The usual entry point is :func:`simulate`, which takes a TOML file or a config dict and returns
:class:`Results`; ``ssdlab run CONFIG`` does the same from the shell.
"""

from ssdlab._core import ConfigError, TraceError
from ssdlab._core import version as _core_version
from ssdlab.api import simulate
from ssdlab.config import apply_overrides, load_config
from ssdlab.results import Results

__version__ = _core_version()

__all__ = [
    "ConfigError",
    "Results",
    "TraceError",
    "__version__",
    "apply_overrides",
    "load_config",
    "simulate",
]
