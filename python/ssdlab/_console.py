"""The consoles the ``ssdlab`` command prints through, each a rich Console made on first use.

rich takes 20-30 ms of a command's start to import (``rich.console``, and ``rich.markup``
behind ``escape``). ``ssdlab run`` prints nothing before its simulation in most cases (a TOML
config without notes, or ``--quiet``), so it imports rich on the preload thread while the model
runs (``ssdlab._preload``) and its consoles come into being only when something is printed
(issue 18, target 1). Under ``--quiet`` and ``--json``, stdout's console discards what is
printed to it without rendering it (rich's own objects given its ``console`` render into the
null device).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def escape(text: str) -> str:
    """`text` with rich's markup escaped (rich.markup.escape, imported when first needed)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


class LazyConsole:
    """A rich Console with these options, made when first printed to or asked about."""

    def __init__(self, *, discard: bool = False, **options: Any) -> None:
        self.discards = discard
        self._options = options
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        """The rich Console itself (made now if not yet): for rich's own objects (a progress
        bar, a table's measurement)."""
        if self._console is None:
            from rich.console import Console

            options = self._options
            if self.discards:  # open as long as the process
                options = {**options, "file": open(os.devnull, "w")}  # noqa: SIM115
            try:
                self._console = Console(**options)
            except AttributeError as e:  # from a property, Python would try __getattr__ instead
                raise TypeError(f"cannot make the console: {e}") from e
        return self._console

    def print(self, *objects: Any, **options: Any) -> None:
        """rich's ``Console.print``; nothing at all when this console discards its output."""
        if not self.discards:
            self.console.print(*objects, **options)

    def print_line(self, text: str, *, bold: bool = False) -> None:
        """One line of `text` as written (no markup), in bold where the stream shows styles.

        Before its run, an MQSim comparison prints such lines (the model, the scenario, a moved
        results folder). Into a pipe or a file, which rich would fill with the same bytes and
        no styling, they are written straight to the stream while the Console does not exist
        yet, so that rich's import (about 17 ms) stays on the preload thread; `vs_mqsim.py`'s
        whole-process timings read stdout through a pipe (issue 18, target 1).
        """
        if self.discards:
            return
        stream = self._plain_stream(text)
        if stream is None:
            self.console.print(text, style="bold" if bold else None, markup=False, emoji=False)
        else:
            stream.write(text + "\n")

    def _plain_stream(self, text: str) -> Any:
        """The stream `text` may be written to as it is, with rich not yet imported: one that
        rich would not style (not a terminal, no FORCE_COLOR or TTY_COMPATIBLE=1 asking it to)
        and a line short enough that rich would not wrap it (printable ASCII, at most the set
        width); None when rich must render it."""
        width = self._options.get("width")
        if self._console is not None or not isinstance(width, int):
            return None
        if len(text) > width or not (text.isascii() and text.isprintable()):
            return None
        if os.environ.get("FORCE_COLOR") is not None or os.environ.get("TTY_COMPATIBLE") == "1":
            return None
        stream = self._options.get("file") or (
            sys.stderr if self._options.get("stderr") else sys.stdout
        )
        try:
            return None if stream.isatty() else stream
        except (AttributeError, ValueError):  # no isatty, or a closed stream: rich decides
            return None

    def print_labelled(self, label: str, text: str) -> None:
        """`label` (rich markup, such as ``[yellow]warning:[/]``) then `text` as written: the
        text is escaped only if it is printed, so a discarding console imports nothing."""
        if not self.discards:
            self.console.print(f"{label} {escape(text)}")

    def __getattr__(self, name: str) -> Any:
        # Only names this object lacks come here: its own (not yet set while a copy is made, or
        # `console` when making the Console raised AttributeError) are not the Console's.
        if name.startswith("_") or name in ("console", "discards"):
            raise AttributeError(name)
        return getattr(self.console, name)
