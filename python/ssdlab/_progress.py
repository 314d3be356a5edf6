"""The progress bar of ``ssdlab run`` and ``ssdlab.simulate(progress=True)``.

A progress callback hears fractions in [0, 1]. One that also has a ``phase(name)`` method, as
:class:`ConsoleProgress` has, hears the preconditioning too: ``phase("preconditioning")``, its
fractions, then ``phase("simulating")`` and the run's (issue 19, item 4: a long steady-state
or ``simulate`` preconditioning used to leave the bar still for minutes).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from ssdlab._console import LazyConsole

# rich.progress (7-11 ms to import) only once a bar is drawn: most short runs never draw one.
# rich itself only once the run has lasted `delay` (the consoles are made on first use).
if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress


class ConsoleProgress:
    """A rich progress bar that only appears once the run has lasted `delay` seconds (never
    when `delay` is None: ``--quiet``), in a terminal or a notebook, and shows the phase."""

    def __init__(
        self, console: Console | LazyConsole | None = None, delay: float | None = 1.0
    ) -> None:
        if console is None:
            console = LazyConsole(stderr=True)
        self._console = console
        self._deadline = time.monotonic() + delay if delay is not None else math.inf
        self._bar: Progress | None = None
        self._task = None
        self._phase = "simulating"

    def phase(self, name: str) -> None:
        """The work the next fractions are of: ``preconditioning`` or ``simulating``."""
        self._phase = name
        if self._bar is not None:
            self._bar.update(self._task, description=name, completed=0.0)

    def __call__(self, fraction: float) -> None:
        if self._bar is None:
            if time.monotonic() < self._deadline:
                return
            console = self._console
            if isinstance(console, LazyConsole):
                console = console.console
            if not (console.is_terminal or console.is_jupyter):
                return
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(self._phase, total=1.0)
        self._bar.update(self._task, completed=fraction)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
