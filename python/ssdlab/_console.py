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
