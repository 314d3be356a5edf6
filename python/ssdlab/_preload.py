"""Modules a command will need at its end, imported on a second thread while it works.

``ssdlab run`` spends about 0.1-0.2 s importing the results models (pydantic builds their
validators when the classes are defined), which it needs only once the simulation has finished.
The simulation steps with the GIL released (`_core.Simulation.step`), so importing them on a
second thread meanwhile takes most of that time off the command on a machine with a second
core: on a 1M-read MQSim comparison case, the median of 12 alternated runs went from 850 to
782 ms (issue 18, target 1). ``ssdlab run`` starts it with the first run, not with the command,
so that the work before the run does not share the GIL with the import; with rich (imported
here too, `ssdlab._console`) and the switch interval below, the same case went from 454 to
380 ms (twelve alternated runs, 2026-12-07, typer's lighter start included).

Python's per-module import locks make this safe: a thread that needs a module another thread is
importing waits for it. An import that fails here is left to fail again, with its traceback,
where the module is used.

The thread is not a daemon: a command that ends early (a refused config) waits for the import to
finish before the interpreter shuts down. As a daemon, still importing (pydantic's compiled core)
while the interpreter finalised, it crashed the process about once in 300-600 early exits under
load (exit -11 instead of the refusal's 2; `tests/test_lazy_import.py`).
"""

from __future__ import annotations

import importlib
import sys
import threading

# The GIL's switch interval while a preload runs. The simulation hands the GIL back between
# steps (tens of milliseconds each); at Python's default of 5 ms each return waited up to 5 ms
# for the importing thread to let go of it.
SWITCH_INTERVAL_SECONDS = 0.0005

# Preloads running, and the interval before the first of them began: the last one to end puts
# it back, whatever order they end in.
_lock = threading.Lock()
_running = 0
_interval_before = 0.0


def _begin() -> None:
    global _running, _interval_before
    with _lock:
        if _running == 0:
            _interval_before = sys.getswitchinterval()
            sys.setswitchinterval(min(_interval_before, SWITCH_INTERVAL_SECONDS))
        _running += 1


def _end() -> None:
    global _running
    with _lock:
        _running -= 1
        if _running == 0:
            sys.setswitchinterval(_interval_before)


def start(*modules: str) -> threading.Thread:
    """Imports `modules` on a second thread, which the interpreter waits for at exit. While it
    runs, the GIL changes hands every 0.5 ms (see `SWITCH_INTERVAL_SECONDS`)."""

    def work() -> None:
        try:
            for name in modules:
                try:
                    importlib.import_module(name)
                except BaseException:  # raised again where the module is imported
                    return
        finally:
            _end()

    thread = threading.Thread(target=work, name="ssdlab-preload", daemon=False)
    _begin()
    try:
        thread.start()
    except BaseException:
        _end()
        raise
    return thread
