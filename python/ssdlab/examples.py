"""The example configs that ship with ssdlab, and copies of them to start a study from.

The repository keeps them in ``examples/`` (described in examples/README.md); the package ships
the same files (``ssdlab/_examples``, a link to that folder in a checkout) so that an installed
ssdlab has them too::

    ssdlab examples                         # each example and what it is
    ssdlab examples intel-x25m my-study/    # my-study/intel-x25m.toml, ready for `ssdlab run`

A copy brings the files the example reads with it: the traces its flows replay and, for a
sweep, its base config, at the same relative paths, so the copy runs where it lands.
"""

from __future__ import annotations

import difflib
import shutil
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

# Shipped in the wheel (pyproject.toml, [tool.maturin] include); a link to examples/ in a
# checkout.
EXAMPLES_DIR = Path(__file__).resolve().parent / "_examples"
# Longest one-line description `ssdlab examples` prints (characters).
DESCRIPTION_WIDTH = 100


class ExampleError(ValueError):
    """An example that does not exist, or a copy that would overwrite a file."""


@dataclass(frozen=True)
class Example:
    """One shipped example config."""

    name: str
    path: Path
    description: str

    @property
    def is_sweep(self) -> bool:
        """A sweep file (``ssdlab sweep``) rather than a config (``ssdlab run``)."""
        return "axes" in _read(self.path)


def examples_dir() -> Path:
    """The folder holding the shipped examples."""
    if not EXAMPLES_DIR.is_dir():
        raise ExampleError(
            f"the examples are not installed ({EXAMPLES_DIR} is missing): reinstall ssdlab"
        )
    return EXAMPLES_DIR


def list_examples() -> list[Example]:
    """Every shipped example, by name, with the first sentence of its leading comment."""
    return [
        Example(path.stem, path, describe(path.read_text(encoding="utf-8")))
        for path in sorted(examples_dir().glob("*.toml"))
    ]


def find_example(name: str) -> Example:
    """The example called `name` (``intel-x25m`` or ``intel-x25m.toml``)."""
    stem = name.removesuffix(".toml")
    examples = {e.name: e for e in list_examples()}
    if stem in examples:
        return examples[stem]
    close = difflib.get_close_matches(stem, list(examples), n=1)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    raise ExampleError(f"no example named `{name}`{hint}; `ssdlab examples` lists them")


def copy_example(name: str, dest: str | Path = ".", *, overwrite: bool = False) -> Path:
    """Copies example `name` to `dest` and returns the copied config's path.

    `dest` is a folder (created if needed; the config keeps its name there) or a path ending in
    ``.toml``. The traces the example replays and the base config of a sweep go beside it at
    the same relative paths. Existing files are left alone unless `overwrite`: the copy is
    refused before anything is written.
    """
    example = find_example(name)
    dest = Path(dest)
    target = dest if dest.suffix == ".toml" else dest / example.path.name
    folder = target.parent
    source_root = example.path.parent
    files = [(example.path, target)]
    files += [
        (source_root / rel, folder / rel)
        for rel in sorted(_referenced_files(example.path, source_root))
    ]
    if not overwrite:
        existing = [str(t) for _, t in files if t.exists()]
        if existing:
            raise ExampleError(
                f"not copying {example.name}: {', '.join(existing)} already exists "
                "(remove it, pick another destination, or overwrite)"
            )
    for source, to in files:
        to.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, to)
    return target


def describe(text: str) -> str:
    """The one-line description of a config: the first sentence of its leading ``#`` comment,
    parenthetical remarks left out, at most :data:`DESCRIPTION_WIDTH` characters."""
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            break
        body = stripped.lstrip("#").strip()
        if not body or body.startswith("- "):  # the paragraph ends, or a list of details starts
            if lines:
                break
            continue
        lines.append(body)
    sentence = _first_sentence(_without_parentheses(" ".join(lines))).rstrip(".:;, ")
    if len(sentence) <= DESCRIPTION_WIDTH:
        return sentence
    cut = sentence[: DESCRIPTION_WIDTH - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"


def _without_parentheses(text: str) -> str:
    out, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    # "drive (x), the" -> "drive , the" -> "drive, the"
    joined = " ".join("".join(out).split())
    return joined.replace(" ,", ",").replace(" :", ":").replace(" .", ".").replace(" ;", ";")


def _first_sentence(text: str) -> str:
    """Up to the first full stop (left out); a colon or semicolon ends it too once it is long
    enough to say something ("Flexible Data Placement: two tenants ..." keeps going)."""
    for i, ch in enumerate(text):
        at_break = i + 1 == len(text) or text[i + 1] == " "
        if not at_break:
            continue
        if ch == "." or (ch in ":;" and i >= 40):
            return text[:i]
    return text


def _read(path: Path) -> dict[str, Any]:
    with path.open("rb") as f:
        return tomllib.load(f)


def _referenced_files(config: Path, root: Path) -> set[PurePosixPath]:
    """Relative paths (from `root`) of the files `config` reads: its flows' traces and, for a
    sweep, its base config and what that reads. Absolute paths and paths leaving `root` are
    the user's own files, not part of the example."""
    found: set[PurePosixPath] = set()
    todo = [config]
    while todo:
        path = todo.pop()
        doc = _read(path)
        here = path.parent
        refs = [(flow.get("path"), False) for flow in _flows(doc)]
        if "axes" in doc:  # a sweep file: its base config is read too
            refs.append((doc.get("base"), True))
        for ref, is_config in refs:
            if not isinstance(ref, str):
                continue
            rel = _inside(here / ref, root)
            if rel is None or rel in found:
                continue
            found.add(rel)
            if is_config:
                todo.append(root / rel)
    return found


def _flows(doc: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for table in (doc, doc.get("config")):
        if isinstance(table, Mapping):
            for flow in table.get("flows", []):
                if isinstance(flow, Mapping):
                    yield flow


def _inside(path: Path, root: Path) -> PurePosixPath | None:
    try:
        rel = path.resolve().relative_to(root.resolve())
    except ValueError:
        return None
    return PurePosixPath(rel.as_posix()) if (root / rel).is_file() else None
