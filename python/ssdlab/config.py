"""Reading configuration files and applying command-line style overrides.

The Rust core validates every value; this module only gets the document into a dict and reports
problems that happen before the core sees it (file access, TOML syntax, malformed overrides).
"""

from __future__ import annotations

import copy
import json
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

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
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def dump_toml(config: Mapping[str, Any], comments: Iterable[str] = ()) -> str:
    """The config as TOML text that :func:`load_config` reads back to the same dict.

    `comments` become ``#`` lines at the top (each may hold several lines).
    """
    lines = [f"# {line}".rstrip() for text in comments for line in str(text).split("\n")]
    if lines:
        lines.append("")
    tables = {k: v for k, v in config.items() if isinstance(v, Mapping)}
    arrays = {k: v for k, v in config.items() if _is_table_array(v)}
    scalars = {k: v for k, v in config.items() if k not in tables and k not in arrays}
    lines += [f"{_key(k)} = {_value(v)}" for k, v in _ordered(scalars, _SECTION_ORDER)]
    for key, table in _ordered(tables, _SECTION_ORDER):
        _table(lines, [key], table)
    for key, items in _ordered(arrays, ()):
        for item in items:
            lines.append("")
            lines.append(f"[[{_key(key)}]]")
            lines += [
                f"{_key(k)} = {_value(v)}" for k, v in _ordered(item, _KEY_ORDER.get(key, ()))
            ]
    return "\n".join(lines).lstrip("\n") + "\n"


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _ordered(table: Mapping[str, Any], order: Iterable[str]) -> list[tuple[str, Any]]:
    rank = {k: i for i, k in enumerate(order)}
    return sorted(table.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))


def _table(lines: list[str], path: list[str], table: Mapping[str, Any]) -> None:
    # A nested table whose values are all plain becomes an inline table (`read = { lsb = .. }`);
    # one that nests further gets its own [a.b] section.
    def plain(v: Any) -> bool:
        return not isinstance(v, Mapping) or not any(isinstance(x, Mapping) for x in v.values())

    inline = [(k, v) for k, v in _ordered(table, _KEY_ORDER.get(path[-1], ())) if plain(v)]
    nested = [(k, v) for k, v in _ordered(table, _KEY_ORDER.get(path[-1], ())) if not plain(v)]
    lines.append("")
    lines.append(f"[{'.'.join(_key(p) for p in path)}]")
    lines += [f"{_key(k)} = {_value(v)}" for k, v in inline]
    for key, value in nested:
        _table(lines, [*path, key], value)


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise ConfigError(f"config: cannot write {type(value).__name__} value {value!r} as TOML")
