"""Reading configuration files and applying command-line style overrides.

The Rust core validates every value; this module only gets the document into a dict and reports
problems that happen before the core sees it (file access, TOML syntax, malformed overrides).
"""

from __future__ import annotations

import copy
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import tomli_w

from ssdlab._core import ConfigError

_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a TOML config so that syntax errors point at the file and line, not at tomllib.

    A missing file raises FileNotFoundError; nothing is ever created in its place.
    """
    path = Path(path)
    text = read_text(path, "config file", "a TOML config file")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(_describe_toml_error(path, str(e))) from None


def read_text(path: Path, what: str, expected: str) -> str:
    """The UTF-8 text of the input file `path` (`what` names it in errors: "config file"),
    or an error that names the file and what went wrong; `expected` says what should be there
    when `path` is a folder. A missing file raises FileNotFoundError."""
    if path.is_dir():
        raise ConfigError(f"{path} is a folder; expected {expected}")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} not found: {path}") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read {what}: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start})") from None


def _describe_toml_error(path: Path, message: str) -> str:
    match = _TOML_POSITION.search(message)
    if match is None:
        return f"{path}: invalid TOML: {message}"
    reason = message[: match.start()]
    return f"{path}:{match.group(1)}:{match.group(2)}: invalid TOML: {reason}"


def parse_override_value(text: str) -> Any:
    """Give override values TOML's types so `channels=4` is a number and `read="75us"` a string.

    Text that is not a TOML value (such as a bare `75us`) is taken as a string, which saves
    quoting in the shell.
    """
    try:
        parsed = tomllib.loads(f"value = {text}")
    except tomllib.TOMLDecodeError:
        return text
    if set(parsed) != {"value"}:
        return text
    return parsed["value"]


def apply_overrides(config: Mapping[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """Let one config file serve many runs: each `key.path=value` replaces one value.

    List elements are addressed by number (`flows.0.queue_depth=32`); missing tables are
    created. The input is not modified; a malformed override raises ConfigError naming it.
    """
    result = copy.deepcopy(dict(config))
    overrides = list(overrides)
    for item in overrides:
        _apply_one(result, item)
    _drop_other_mode_keys(result, overrides)
    return result


# The precondition keys each mode reads (crates/ssdlab-core/src/config/validate.rs refuses the
# others, so that a key that would be ignored is never silently ignored).
_PRECONDITION_MODE_KEYS = {
    "occupancy": ("fill", "steady", "simulate"),
    "layout": ("fill",),
    "drive_writes": ("steady", "simulate"),
    "warm_caches": ("steady", "simulate"),
}


def _drop_other_mode_keys(config: dict[str, Any], overrides: list[str]) -> None:
    """`--set precondition.mode=none` on a file that sets `occupancy`: the command line changes
    the mode, so the file's keys that only the file's mode reads go with it (issue 19, item 9).
    Keys the overrides set themselves stay, and are refused if the new mode does not read them."""
    keys = [item.partition("=")[0].strip() for item in overrides]
    table = config.get("precondition")
    if "precondition.mode" not in keys or not isinstance(table, dict):
        return
    mode = table.get("mode")
    for key, modes in _PRECONDITION_MODE_KEYS.items():
        if key in table and mode not in modes and f"precondition.{key}" not in keys:
            del table[key]


def _apply_one(config: dict[str, Any], item: str) -> None:
    def fail(reason: str) -> ConfigError:
        return ConfigError(f"override '{item}': {reason}")

    key, sep, raw = item.partition("=")
    key, raw = key.strip(), raw.strip()
    if not sep:
        raise fail("expected key=value, e.g. flash.channels=4")
    if not raw:
        raise fail("missing value after '='")
    parts = [p.strip() for p in key.split(".")]
    if not key or any(not p for p in parts):
        raise fail("expected a dotted key such as flash.timing.read")
    value = parse_override_value(raw)

    node: Any = config
    for depth, part in enumerate(parts):
        here = ".".join(parts[:depth]) or "the config"
        last = depth == len(parts) - 1
        if isinstance(node, list):
            if not _is_index(part):
                raise fail(f"{here} is a list; expected a numeric index, got '{part}'")
            index = int(part)
            if index >= len(node):
                raise fail(f"index {index} is out of range ({here} has {len(node)} elements)")
            if last:
                node[index] = value
            else:
                node = node[index]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                if part not in node:
                    if _is_index(parts[depth + 1]):
                        missing = ".".join(parts[: depth + 1])
                        raise fail(
                            f"index {parts[depth + 1]} is out of range ({missing} is not set)"
                        )
                    node[part] = {}
                node = node[part]
        else:
            raise fail(f"{here} is a value ({node!r}), not a table or list")


def _is_index(part: str) -> bool:
    return part.isascii() and part.isdigit()


# Sections and keys in the order the README documents them, so written configs read like the
# examples; keys not listed follow in alphabetical order.
_SECTION_ORDER = ("seed", "host", "controller", "cache", "ftl", "flash", "precondition", "run")
_KEY_ORDER = {
    "flash": (
        "channels",
        "chips_per_channel",
        "dies_per_chip",
        "planes_per_die",
        "blocks_per_plane",
        "pages_per_block",
        "page_size",
        "channel_width_bytes",
        "channel_rate",
        "technology",
    ),
    "timing": ("read", "program", "erase"),
    "precondition": ("mode", "occupancy", "layout", "drive_writes", "warm_caches"),
    "flows": (
        "name",
        "kind",
        "path",
        "format",
        "time_scale",
        "read_fraction",
        "request_size",
        "address",
        "hot_fraction",
        "hot_traffic",
        "random_fraction",
        "alignment",
        "working_set",
        "working_set_start",
        "queue_depth",
        "rate",
        "requests",
        "duration",
        "sq_depth",
        "priority",
        "cache_mode",
    ),
}


def dump_toml(config: Mapping[str, Any], comments: Iterable[str] = ()) -> str:
    """The config as TOML text that :func:`load_config` reads back to the same dict.

    Sections and keys come in the order the README documents them (keys not listed follow in
    alphabetical order), each ``[[flows]]`` entry as its own table; tomli-w writes the values.
    `comments` become ``#`` lines at the top (each may hold several lines).
    """
    lines = [f"# {line}".rstrip() for text in comments for line in str(text).split("\n")]
    head = "\n".join(lines) + "\n\n" if lines else ""
    arrays = {k: v for k, v in config.items() if _is_table_array(v)}
    # Plain values first, then the sections: tomli-w writes a table's values before its
    # sub-tables whatever their order in the dict.
    rest = {k: v for k, v in config.items() if k not in arrays}
    chunks = [_dumps(_ordered(rest, _SECTION_ORDER))] if rest else []
    for key, items in _ordered_items(arrays, ()):
        for item in items:
            chunks.append(_table_array_entry(key, _ordered(item, _KEY_ORDER.get(key, ()))))
    return head + "\n".join(c for c in chunks if c)


def _dumps(document: Mapping[str, Any]) -> str:
    try:
        return tomli_w.dumps(document)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"config: cannot write as TOML: {e}") from None


def _table_array_entry(key: str, item: Mapping[str, Any]) -> str:
    """One ``[[key]]`` entry. tomli-w writes an array of small tables inline (``flows = [{...}]``);
    configs show each flow as a table of its own, so each entry is written as the table
    ``[key]`` (whose sub-tables, ``[key.sub]``, belong to the latest ``[[key]]`` entry) and its
    header made the array's."""
    text = _dumps({key: item})
    header = f"[{_key(key)}]\n"
    if text.startswith(header):
        text = text[len(header) :]
    return f"[[{_key(key)}]]\n{text}"


def _key(key: str) -> str:
    """A key as TOML writes it (bare, or quoted when it must be)."""
    return _dumps({key: 0}).rsplit(" = ", 1)[0]


def _value(value: Any) -> str:
    """A value as TOML text on one line (the right-hand side of ``key = value``, tables inline):
    what an override ``--set key=VALUE`` reads back to the same value. tomli-w writes the plain
    values; arrays and tables are joined on one line, which tomli-w does not do."""
    if isinstance(value, Mapping):
        items = ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items())
        return f"{{ {items} }}" if items else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return _dumps({"v": value})[len("v = ") : -1]


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _ordered_items(table: Mapping[str, Any], order: Iterable[str]) -> list[tuple[str, Any]]:
    rank = {k: i for i, k in enumerate(order)}
    return sorted(table.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))


def _ordered(table: Mapping[str, Any], order: Iterable[str]) -> dict[str, Any]:
    """`table` with its keys in `order` (then alphabetical), nested tables likewise in their own
    name's order (``_KEY_ORDER``); arrays keep their elements' order."""
    out: dict[str, Any] = {}
    for key, value in _ordered_items(table, order):
        if isinstance(value, Mapping):
            value = _ordered(value, _KEY_ORDER.get(key, ()))
        elif _is_table_array(value):
            value = [_ordered(v, _KEY_ORDER.get(key, ())) for v in value]
        out[key] = value
    return out
