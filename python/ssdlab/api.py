"""Running a simulation from Python."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ssdlab import _core
from ssdlab._core import ConfigError
from ssdlab.config import apply_overrides, load_config
from ssdlab.results import Results

# Events per step: small enough (tens of milliseconds) that Ctrl-C and progress reports stay
# responsive, large enough that the Python round trip costs nothing measurable.
STEP_EVENTS = 200_000


def simulate(
    config: str | os.PathLike[str] | Mapping[str, Any],
    *,
    overrides: Iterable[str] = (),
    base_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[float], object] | None = None,
) -> Results:
    """The one call a script or notebook needs: a config in, typed results out.

    `config` is a TOML file path (relative trace paths then resolve from its folder, so a config
    and its traces move together) or the config as a dict (resolved from the current directory
    unless `base_dir` is given). `overrides` are `key.path=value` strings, as with
    ``ssdlab run --set``, so a sweep needs no config copies. The model runs in steps with the GIL
    released: other Python threads keep running, Ctrl-C stops a long run within milliseconds,
    and `progress` (if given) hears the fraction done after every step.
    """
    source: Path | None = None
    if isinstance(config, Mapping):
        document = dict(config)
        default_dir = Path.cwd()
    elif isinstance(config, str | os.PathLike):
        source = Path(config)
        document = load_config(source)
        default_dir = source.parent
    else:
        raise TypeError(f"config must be a path or a dict, not {type(config).__name__}")
    document = apply_overrides(document, overrides)
    folder = Path(base_dir) if base_dir is not None else default_dir

    try:
        text = json.dumps(document, default=str)
    except ValueError as e:  # e.g. a circular reference in a hand-built dict
        raise ConfigError(f"config: cannot be encoded as JSON: {e}") from None
    try:
        sim = _core.Simulation(text, str(folder))
    except ConfigError as e:
        if source is None:
            raise
        raise ConfigError(f"{source}: {e}") from None

    while not sim.step(STEP_EVENTS):
        if progress is not None:
            progress(sim.progress())
    if progress is not None:
        progress(1.0)
    return Results.from_json(sim.results_json())
