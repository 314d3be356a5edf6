"""Config errors that point at what the user typed: the ``--set`` that gave the value, or the
file and line; and a "did you mean" for a misspelt key or value.

The core checks every value and names it by its dotted path (``flash.chanels: unknown field
`chanels`, expected one of `channels`, ...``), but it sees one merged document and cannot know
whether the value came from the file or from the command line, nor on which line. This module
knows both (issue 19, item 4): a value set by ``--set`` is blamed on the command line, and one
from the file gets the line it is on, as compilers and fio's job-file errors do.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path

# "flash.timing.reed: reason" or "flows[0].queue_depht: reason".
_PATH_PREFIX = re.compile(r"^(?P<path>[A-Za-z_][\w-]*(?:\[\d+\]|\.[\w-]+)*): (?P<reason>.*)$", re.S)
_UNKNOWN = re.compile(
    r"^unknown (?P<what>field|variant) `(?P<given>[^`]*)`, expected (?:one of )?(?P<choices>.*)$",
    re.S,
)
_CHOICE = re.compile(r"`([^`]*)`")
_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-\"'. ]+?)\s*=")


def explain(message: str, source: str | None, overrides: Iterable[str] = ()) -> str:
    """The core's config error `message`, blamed on the ``--set`` override that set the value,
    else on `source`'s line that holds it (when `source` is a readable TOML file), else on
    `source` alone; unknown keys and values get the closest known ones suggested."""
    match = _PATH_PREFIX.match(message)
    if match is None:
        return f"{source}: {message}" if source else message
    path, reason = match["path"], _reworded(match["reason"])
    dotted = _dotted(path)
    for item in overrides:
        key = item.partition("=")[0].strip()
        # The override set the value (or a table around it), or spelt the failing path itself
        # (`--set flows[0].x=1` makes a key named `flows[0]`).
        if key == dotted or dotted.startswith(key + ".") or key.startswith(path + "."):
            hint = ""
            if "[" in key:
                hint = f" (--set writes an index with a dot: {_dotted(key)})"
            return f"--set {item.strip()}: {path}: {reason}{hint}"
    if source is None:
        return f"{path}: {reason}"
    line = _line_of(Path(source), dotted)
    where = f"{source}:{line}" if line is not None else source
    return f"{where}: {path}: {reason}"


def _reworded(reason: str) -> str:
    """serde's "unknown field/variant" in the config's words, with the nearest choices."""
    match = _UNKNOWN.match(reason)
    if match is None:
        return reason
    choices = _CHOICE.findall(match["choices"])
    noun = "key" if match["what"] == "field" else "value"
    text = f"unknown {noun} `{match['given']}`{suggest(match['given'], choices)}"
    return f"{text}; expected one of: {', '.join(choices)}" if choices else text


def suggest(word: str, choices: Iterable[str]) -> str:
    """` (did you mean `x`?)` for the known choice closest to a misspelt `word`, or ""."""
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _dotted(path: str) -> str:
    """`flows[0].queue_depth` as the override syntax writes it: `flows.0.queue_depth`."""
    return re.sub(r"\[(\d+)\]", r".\1", path)


def _line_of(path: Path, dotted: str) -> int | None:
    """The 1-based line of `path` that sets `dotted` (or the nearest enclosing key or table
    that does, for a value inside an inline table), found by following the TOML file's table
    headers; None when the file cannot be read or does not mention it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    arrays: dict[str, int] = {}
    table: list[str] = []
    best: tuple[int, int] | None = None  # (matched parts, line)
    wanted = dotted.split(".")

    def consider(parts: list[str], number: int) -> None:
        nonlocal best
        matches = len(parts) <= len(wanted) and wanted[: len(parts)] == parts
        if matches and (best is None or len(parts) > best[0]):
            best = (len(parts), number)

    for number, text in enumerate(lines, start=1):
        header = _HEADER.match(text)
        if header is not None:
            name = _split_key(header[2])
            if header[1] == "[[":
                index = arrays.get(".".join(name), -1) + 1
                arrays[".".join(name)] = index
                table = [*name, str(index)]
            else:
                table = _with_indices(name, arrays)
            consider(table, number)
            continue
        key = _KEY.match(text)
        if key is not None and not text.lstrip().startswith("#"):
            consider([*table, *_split_key(key[1])], number)
    return best[1] if best is not None else None


def _split_key(key: str) -> list[str]:
    return [part.strip().strip("\"'") for part in key.split(".")]


def _with_indices(name: list[str], arrays: dict[str, int]) -> list[str]:
    """A `[flows.lsm]` header names a table inside the last `[[flows]]` element."""
    parts: list[str] = []
    for part in name:
        parts.append(part)
        index = arrays.get(".".join(p for p in parts if not p.isdigit()))
        if index is not None:
            parts.append(str(index))
    return parts
