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

from ssdlab._core import ConfigError

_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a TOML config so that syntax errors point at the file and line, not at tomllib.

    A missing file raises FileNotFoundError; nothing is ever created in its place.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"config file not found: {path}") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read config file: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(_describe_toml_error(path, str(e))) from None


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
    for item in overrides:
        _apply_one(result, item)
    return result


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
