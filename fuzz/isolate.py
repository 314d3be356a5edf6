"""Run one fuzzed input in a child process with memory and time limits.

A hostile input may abort the process (an allocation the machine cannot make), hang, or take
all memory: in-process, that would end the whole test run or campaign instead of reporting the
input. The child is forked from the caller, so the model is already loaded and a fork costs
milliseconds; what the function returns comes back pickled, and a child that dies by a signal,
overruns its time or returns nothing is reported as a `Verdict` of its own.
"""

from __future__ import annotations

import os
import pickle
import resource
import select
import signal
import time
import traceback
from collections.abc import Callable
from typing import Any

DEFAULT_MEMORY_BYTES = 4 * 2**30


def isolated(
    fn: Callable[..., dict[str, Any]],
    *args: Any,
    timeout_s: float = 60.0,
    memory_bytes: int = DEFAULT_MEMORY_BYTES,
) -> dict[str, Any]:
    """`fn(*args)` (which returns a verdict dict) run in a forked child; a crash, abort, hang
    or exception of the child becomes a verdict too (`crash` or `timeout`)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        try:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
            outcome = fn(*args)
        except BaseException as e:
            outcome = {
                "verdict": "crash",
                "message": f"{type(e).__name__}: {e}",
                "traceback": traceback.format_exc()[-4000:],
            }
        data = pickle.dumps(outcome)
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view) :]
        os._exit(0)

    os.close(write_end)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        ready, _, _ = select.select([read_end], [], [], left)
        if ready:
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return {"verdict": "timeout", "message": f"ran past {timeout_s:.0f} s"}
    if os.WIFSIGNALED(status):
        return {"verdict": "crash", "message": f"killed by signal {os.WTERMSIG(status)}"}
    if not chunks:
        return {"verdict": "crash", "message": f"exit {os.WEXITSTATUS(status)}, no verdict"}
    return pickle.loads(b"".join(chunks))
