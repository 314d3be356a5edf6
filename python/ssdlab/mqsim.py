"""MQSim's configuration files: the device (``ssdconfig.xml``) and the workload (``workload.xml``).

:func:`import_mqsim` turns the pair into one :class:`Scenario` per ``<IO_Scenario>``: an ssdlab
config dict plus the warnings of everything that did not map exactly. The mapping itself lives in
the Rust core (``ssdlab_core::config::mqsim``); docs/mqsim.md lists it tag by tag.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab import _core
from ssdlab.config import dump_toml, read_text


@dataclass
class Scenario:
    """One MQSim IO_Scenario as an ssdlab configuration."""

    index: int
    """1 for the workload file's first scenario."""
    config: dict[str, Any]
    """The config in ssdlab's schema; trace paths are relative to `base_dir`."""
    warnings: list[str] = field(default_factory=list)
    """One sentence per MQSim tag (or group of tags) that ssdlab does not reproduce exactly."""
    base_dir: Path = field(default_factory=Path.cwd)
    """The workload file's folder, where MQSim resolves trace paths."""

    def to_toml(self, out: str | os.PathLike[str], comments: list[str] | None = None) -> str:
        """The scenario as TOML for a file at `out`: trace paths are rewritten relative to out's
        folder when the trace is under it, absolute otherwise, so the file runs from anywhere."""
        config = self.config_for(Path(out).parent)
        return dump_toml(config, comments or [])

    def config_for(self, folder: str | os.PathLike[str]) -> dict[str, Any]:
        """The config with trace paths valid relative to `folder`."""
        config = copy.deepcopy(self.config)
        target = Path(folder).resolve()
        for flow in config.get("flows", []):
            if flow.get("kind") == "trace" and isinstance(flow.get("path"), str):
                trace = (self.base_dir / flow["path"]).resolve()
                # Relative when the trace sits under the folder (the two move together), else
                # absolute.
                try:
                    flow["path"] = trace.relative_to(target).as_posix()
                except ValueError:
                    flow["path"] = trace.as_posix()
        return config


def import_mqsim(
    ssdconfig: str | os.PathLike[str], workload: str | os.PathLike[str]
) -> list[Scenario]:
    """Read MQSim's device file and workload file; one :class:`Scenario` per IO_Scenario.

    A missing file raises FileNotFoundError (nothing is ever written in its place, unlike
    MQSim, which creates a sample file). Malformed XML, a bad value or an unknown enum value
    raises ConfigError naming the file, the line, the tag and the value.
    """
    ssdconfig, workload = Path(ssdconfig), Path(workload)
    texts = [
        _read(ssdconfig, "MQSim device file", "ssdconfig.xml"),
        _read(workload, "MQSim workload file", "workload.xml"),
    ]
    base_dir = workload.parent
    scenarios = _core.import_mqsim(
        *texts,
        ssdconfig_name=str(ssdconfig),
        workload_name=str(workload),
        workload_dir=str(base_dir),
    )
    return [
        Scenario(index=i, config=s["config"], warnings=list(s["warnings"]), base_dir=base_dir)
        for i, s in enumerate(scenarios, start=1)
    ]


def toml_paths(out: str | os.PathLike[str], count: int) -> list[Path]:
    """Where ``ssdlab import-mqsim -o OUT.toml`` writes: OUT.toml for one scenario, else
    OUT-1.toml, OUT-2.toml, ... (scenario n in OUT-n.toml)."""
    out = Path(out)
    if count == 1:
        return [out]
    suffix = out.suffix or ".toml"
    return [out.with_name(f"{out.stem}-{n}{suffix}") for n in range(1, count + 1)]


def is_mqsim_file(path: str | os.PathLike[str]) -> bool:
    """Whether a path names an MQSim XML file (by its extension)."""
    return Path(path).suffix.lower() == ".xml"


def _read(path: Path, what: str, example: str) -> str:
    return read_text(path, what, f"an {what} (such as {example})")
