"""Output files that are complete and this run's, or absent (issue 12, F15-F17).

Every file ssdlab writes (results.json, requests.parquet, report.html and its charts, a sweep's
tables) is written to a hidden temporary name in the same folder, ``.<name>.tmp-<pid>``,
flushed to disk (fsync) and renamed over its own name: a full disk, a crash or a kill leaves
the previous complete file or none, never a truncated one. The pid in the temporary name tells
the next run whether its writer is dead; :func:`remove_stale_temporaries` clears those.

Before a simulation starts, :func:`check_folder` makes sure its output folder can be written
(so a read-only folder is refused in a second, not after an hour of simulation), and
``ssdlab run`` moves the previous run's outputs into ``<folder>/previous/``
(:func:`set_aside_previous`), so a run that is refused, fails or is killed never leaves an
older results.json that looks like its own.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

# What `ssdlab run` writes into a results folder: results.json, the request records (parquet,
# or the core's binary file while it runs) and, with --report, report.html and the run charts
# of ssdlab.report.
RUN_OUTPUTS = (
    "results.json",
    "requests.parquet",
    "requests.bin",
    "report.html",
    "latency_cdf.png",
    "throughput.png",
    "latency_over_time.png",
    "gc_over_time.png",
    "latency_breakdown.png",
)
PREVIOUS = "previous"

_TEMPORARY = re.compile(r"^\..+\.tmp-(\d+)$")


class OutputError(OSError):
    """An output folder cannot be created or written; the message names it and says why."""


def temporary_path(path: Path) -> Path:
    """``.<name>.tmp-<pid>`` beside `path`: hidden, and never mistaken for a result."""
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path beside `path` for a writer to fill (pyarrow, matplotlib, a copy); when
    the block ends without error it is synced and renamed to `path`, else removed."""
    path = Path(path)
    tmp = temporary_path(path)
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _sync_folder(path.parent)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` atomically: the file is complete or not there at all."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(data)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` (UTF-8) to `path` atomically."""
    write_bytes(path, text.encode("utf-8"))


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX: fsync the directory); best effort elsewhere."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def check_folder(folder: str | os.PathLike[str]) -> Path:
    """Create `folder` if needed and prove a file can be written in it, before anything runs.

    Raises :class:`OutputError` naming the folder: a path under a file, no permission, a
    read-only file system, a full disk.
    """
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"output folder {folder}: a file of that name is in the way") from None
    except OSError as e:
        raise OutputError(f"cannot create the output folder {folder}: {reason(e)}") from None
    if not folder.is_dir():
        raise OutputError(f"output folder {folder}: a file of that name is in the way")
    probe = temporary_path(folder / ".ssdlab-write-check")
    try:
        with open(probe, "wb") as f:
            f.write(b"ssdlab")
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        raise OutputError(f"cannot write in the output folder {folder}: {reason(e)}") from None
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    return folder


def remove_stale_temporaries(folder: str | os.PathLike[str]) -> list[Path]:
    """Delete the temporary files of writers that are gone (a killed run's), in `folder` only.
    Those of other live processes (another run writing here right now) are left alone. Call it
    before this process writes into `folder`."""
    removed = []
    try:
        entries = list(Path(folder).iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _TEMPORARY.match(entry.name)
        if match is None or _alive(int(match.group(1))) or not entry.is_file():
            continue
        with contextlib.suppress(OSError):
            entry.unlink()
            removed.append(entry)
    return removed


def set_aside_previous(
    folder: str | os.PathLike[str], names: Iterable[str] = RUN_OUTPUTS
) -> Path | None:
    """Move the previous run's outputs (`names`) from `folder` into ``folder/previous/``,
    replacing what an earlier run left there; returns that folder, or None if there was
    nothing to move. Only the named files are touched, so ``previous/`` is a results folder
    of its own (``Results.load``, ``ssdlab report`` work on it)."""
    folder = Path(folder)
    names = [n for n in names if (folder / n).is_file()]
    if not names:
        return None
    previous = folder / PREVIOUS
    try:
        previous.mkdir(exist_ok=True)
        for name in RUN_OUTPUTS:  # one generation: no file of an older one stays beside it
            with contextlib.suppress(FileNotFoundError):
                (previous / name).unlink()
        for name in names:
            os.replace(folder / name, previous / name)
    except OSError as e:
        raise OutputError(
            f"cannot move the previous results in {folder} to {previous}: {reason(e)}"
        ) from None
    return previous


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        # Called before this process writes here: a file with its pid is a dead run's whose
        # pid came round again (containers start from the same pids).
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    except OverflowError:
        return False
    return True


def reason(e: OSError) -> str:
    """What went wrong with a file operation, in words (``e.strerror`` without the errno)."""
    if e.errno == errno.ENOSPC:
        return "no space left on the device"
    return e.strerror or str(e)
