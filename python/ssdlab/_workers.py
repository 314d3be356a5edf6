"""Sweep worker processes that never outlive the sweep (issue 12: SIGKILL or SIGTERM of
``ssdlab sweep`` left its workers, the forkserver and the resource tracker running for minutes,
holding the caller's pipes open).

Two independent lifelines, installed by :func:`bind_to_sweep` as the pool's initializer:

- Linux's ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (prctl(2)): the kernel kills the worker when its
  parent dies. With the forkserver start method the parent is the fork server, which itself
  exits when the sweep process is gone.
- A watchdog thread that checks every half second that the sweep process (by pid and start
  time, so a recycled pid does not fool it) is still alive, and ends the worker otherwise. It
  covers other systems, and a fork server that lingers. The simulation releases the GIL while
  it steps, so the thread gets to run within a step (tens of milliseconds).

The sweep itself stops its workers on SIGTERM, Ctrl-C or any error with :func:`kill_workers`:
a point being simulated has no results.json yet, so a resumed sweep simply runs it again.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WATCH_INTERVAL_SECONDS = 0.5


def process_identity(pid: int) -> tuple[int, str] | None:
    """(pid, start time) of a live process, or None when it is gone (or a zombie). Without
    /proc (not Linux), a live pid with an unknown start time."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except FileNotFoundError:
        return None
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return (pid, "")
    # Fields after the command name (which may hold spaces and parentheses): state is the
    # first, the start time (in clock ticks since boot) the 20th.
    fields = stat[stat.rfind(")") + 2 :].split()
    if not fields or fields[0] in ("Z", "X"):
        return None
    return (pid, fields[19] if len(fields) > 19 else "")


def bind_to_sweep(sweep: tuple[int, str] | None) -> None:
    """Pool initializer: end this worker when the sweep process `sweep` (from
    :func:`process_identity`) dies."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if sweep is None:
        return
    if process_identity(sweep[0]) != sweep:  # the sweep died while this worker started
        os._exit(1)
    thread = threading.Thread(
        target=_watch, args=(sweep,), name="ssdlab-sweep-watchdog", daemon=True
    )
    thread.start()


def _watch(sweep: tuple[int, str]) -> None:
    while True:
        time.sleep(WATCH_INTERVAL_SECONDS)
        if process_identity(sweep[0]) != sweep:
            os._exit(1)  # nobody is left to take this worker's results


def kill_workers(pool: cf.Executor) -> None:
    """Stop a process pool now: queued work cancelled, running workers killed (their points
    have no results.json and run again on resume). ``ProcessPoolExecutor`` has no public way
    before Python 3.14's ``kill_workers``; its ``_processes`` map has existed since 3.2."""
    processes = dict(getattr(pool, "_processes", None) or {})  # shutdown() drops the map
    pool.shutdown(wait=False, cancel_futures=True)
    for process in list(processes.values()):
        with contextlib.suppress(Exception):
            process.kill()
    for process in list(processes.values()):
        with contextlib.suppress(Exception):
            process.join(timeout=5)
