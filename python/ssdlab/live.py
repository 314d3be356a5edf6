"""The live device: ``ssdlab serve`` and :func:`serve` expose the simulated SSD over NBD.

fio (``ioengine=nbd``), qemu-img / qemu-io, QEMU's ``driver=nbd`` block backend and nbd-client
read and write it like a disk; each connection is its own host submission queue. With
``pace="real-time"`` the model's clock follows the wall clock and every reply leaves at its
simulated completion time; with ``pace="none"`` replies leave as soon as the model has them.
The server runs until SIGINT, SIGTERM or a ``stop`` on its control socket and returns the usual
results, with a ``live`` section (connections, requests, pacing error); ``results`` on the
control socket (or ``poll`` returning ``"results"``) takes a snapshot while it runs.
See docs/live-device.md.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssdlab import _core
from ssdlab.api import load_document

if TYPE_CHECKING:
    from ssdlab.results import Results

PACES = ("real-time", "none")


def serve(
    config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    *,
    listen: str = "unix:ssdlab.sock",
    pace: str = "real-time",
    data: str | os.PathLike[str] | None = None,
    read_only: bool = False,
    allow_remote: bool = False,
    max_connections: int = 8,
    max_in_flight: int = 128,
    overrides: Iterable[str] = (),
    base_dir: str | os.PathLike[str] | None = None,
    on_ready: Callable[[str], object] | None = None,
    control: str | os.PathLike[str] | None = None,
    poll: Callable[[], str | None] | None = None,
    on_results: Callable[[Results], object] | None = None,
) -> Results:
    """Serve the device `config` describes (None: the default device) at `listen`
    (``unix:PATH`` or ``tcp:HOST:PORT``; a non-loopback address needs `allow_remote`) until
    Ctrl-C (or any signal whose Python handler raises, as ``ssdlab serve`` installs for
    SIGTERM); returns the results. `data` keeps the device's bytes in that file across
    restarts (written on every flush and at the end). `on_ready(address)` is called once the
    server listens. Each of up to `max_connections` connections is a host queue (the config's
    own ``kind = "host"`` flows if it has any, else ``conn-0``, ``conn-1``, ...).

    `control` is a unix socket path for control commands independent of the clients
    (:func:`control`: ``results``, ``stop``). `poll()` is called every 50 ms and may return
    ``"results"`` (a snapshot) or ``"stop"``. Each snapshot goes to `on_results`."""
    if pace not in PACES:
        raise ValueError(f"pace: expected one of {', '.join(PACES)}, got {pace!r}")
    # The live device keeps the host's bytes (a read returns the last write).
    extra = ["data.emulate=true", *overrides]
    if data is not None:
        extra.append(f"data.backing_file={json.dumps(os.fspath(data))}")
    document, folder, _, warnings = load_document({} if config is None else config, extra, base_dir)
    results_json, live_json = _core.serve(
        json.dumps(document, default=str),
        str(folder),
        listen,
        pace,
        read_only,
        allow_remote,
        max_connections,
        max_in_flight,
        None if control is None else os.fspath(control),
        on_ready if on_ready is not None else (lambda _address: None),
        poll if poll is not None else (lambda: None),
        lambda results_json, live_json: (
            on_results(_results(results_json, live_json, warnings))
            if on_results is not None
            else None
        ),
    )
    return _results(results_json, live_json, warnings)


def _results(results_json: str, live_json: str, warnings: list[str]) -> Results:
    document = json.loads(results_json)
    document["live"] = json.loads(live_json)
    from ssdlab.results import Results

    results = Results.from_json(json.dumps(document))
    results.warnings.extend(warnings)
    return results


COMMANDS = ("results", "stop")


def control(path: str | os.PathLike[str], command: str, timeout_s: float = 60.0) -> dict[str, Any]:
    """Send `command` (``results`` or ``stop``) to a server's control socket at `path`; returns
    its answer: the results document with its ``live`` section, or ``{"stopping": true}``."""
    if command not in COMMANDS:
        raise ValueError(f"command: expected one of {', '.join(COMMANDS)}, got {command!r}")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout_s)
        try:
            s.connect(os.fspath(path))
        except OSError as e:
            raise OSError(f"control socket {os.fspath(path)}: {e.strerror or e}") from e
        s.sendall(command.encode() + b"\n")
        answer = bytearray()
        while chunk := s.recv(1 << 16):
            answer += chunk
    document = json.loads(answer)
    if "error" in document:
        raise ValueError(document["error"])
    return document


class Server:
    """``ssdlab serve`` in a child process, for scripts, tests and notebooks that drive the
    device with real clients (fio, qemu-io, QEMU)::

        with Server("examples/guest/guest-ssd.toml", "/tmp/ssd.sock", pace="none") as server:
            subprocess.run(["fio", "--ioengine=nbd", f"--uri={server.uri}", ...])
        print(server.results().summary())

    Entering starts the server and waits until it listens; leaving stops it with SIGTERM
    (unless it stopped, e.g. by a ``stop`` on its control socket) and waits for its
    results.json. `args` are further ``ssdlab serve`` options."""

    def __init__(
        self,
        config: str | os.PathLike[str],
        socket_path: str | os.PathLike[str],
        *args: str,
        pace: str = "real-time",
        out: str | os.PathLike[str] | None = None,
        start_timeout_s: float = 60.0,
    ) -> None:
        self.socket = Path(socket_path)
        self.out = (
            Path(out) if out is not None else self.socket.with_name(self.socket.name + ".out")
        )
        self.uri = f"nbd+unix:///?socket={self.socket}"
        self.command = [
            *(sys.executable, "-m", "ssdlab", "serve", os.fspath(config)),
            *("--listen", f"unix:{self.socket}", "--pace", pace, "--out", str(self.out), *args),
        ]
        self.start_timeout_s = start_timeout_s
        self.process: subprocess.Popen[str] | None = None
        #: What the server printed, once it stopped.
        self.output = ""

    def __enter__(self) -> Server:
        self.process = subprocess.Popen(
            self.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        deadline = time.monotonic() + self.start_timeout_s
        while not self.socket.exists():
            if self.process.poll() is not None:
                self.output = self.process.communicate()[0]
                raise RuntimeError(f"ssdlab serve exited before listening:\n{self.output}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"ssdlab serve did not listen within {self.start_timeout_s} s")
            time.sleep(0.05)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def stop(self, timeout_s: float = 120.0) -> int:
        """SIGTERM if still running; waits for the exit; returns the exit status."""
        if self.process is None:
            raise RuntimeError("the server was not started")
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        self.output += self.process.communicate(timeout=timeout_s)[0] or ""
        return self.process.returncode

    def results(self) -> Results:
        """The results.json the server wrote (when it stopped, or at its last snapshot)."""
        from ssdlab.results import Results

        return Results.load(self.out / "results.json")
