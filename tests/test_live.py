"""The live device (issue 14): `ssdlab serve` under real NBD clients (qemu-io, fio with
ioengine=nbd), protocol abuse, SIGTERM writing results.json, and data kept across a kill."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import ssdlab
from ssdlab import live

# make test installs them (Makefile: nbd-clients); a missing one is a failure, not a skip.
for tool in ("qemu-io", "fio"):
    assert shutil.which(tool), f"{tool} is missing: run `make test`, which installs it"

# 2 x 2 x 2 planes x 256 blocks x 64 pages of 4 KiB: 512 MiB of flash, about 410 MiB exported.
DEVICE = """
[flash]
channels = 2
chips_per_channel = 2
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 256
pages_per_block = 64
page_size = "4KiB"
[ftl]
over_provisioning = 0.2
"""


@contextmanager
def served(
    tmp_path: Path, *args: str, name: str = "dev"
) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    """`ssdlab serve` on a unix socket in `tmp_path` (live.Server); yields (NBD URI, out
    folder, process). Stopped with SIGTERM at the end (unless it stopped), which must exit 0
    and write results.json."""
    config = tmp_path / f"{name}.toml"
    if not config.exists():
        config.write_text(DEVICE)
    # A --pace in `args` comes after the Server's own, and the last one counts.
    sock, out = tmp_path / f"{name}.sock", tmp_path / f"out-{name}"
    server = live.Server(config, sock, *args, out=out)
    with server:
        assert server.process is not None
        yield server.uri, server.out, server.process
    assert server.process.returncode == 0, server.output


def qemu_io(uri: str, *commands: str) -> str:
    args = ["qemu-io", "-f", "raw", uri]
    for c in commands:
        args += ["-c", c]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Pattern verification failed" not in done.stdout, done.stdout
    return done.stdout


def test_qemu_io_reads_back_writes_zeroes_and_discards(tmp_path: Path) -> None:
    with served(tmp_path, "--pace", "none") as (uri, out, _):
        qemu_io(
            uri,
            "write -P 0xab 0 1M",
            "read -P 0xab 0 1M",
            "write -z 4096 8192",
            "read -P 0 4096 8192",
            "read -P 0xab 12288 4096",
            "flush",
            "discard 64k 64k",
            "read -P 0 64k 64k",
        )
        # A second connection sees the first one's data.
        qemu_io(uri, "read -P 0xab 0 4096", "read -P 0 4096 4096")
    results = json.loads((out / "results.json").read_text())
    live = results["live"]
    assert live["pace"] == "none" and live["connections"] == 8 and live["requests"] >= 8
    assert results["data"]["mismatched_sectors"] == 0
    assert [f["name"] for f in results["flows"]][:2] == ["conn-0", "conn-1"]


def test_the_fio_example_verifies_256_mib_over_four_queues(tmp_path: Path) -> None:
    with served(tmp_path, "--pace", "none") as (uri, out, _):
        example = Path(__file__).resolve().parents[1] / "examples/live/verify.fio"
        done = subprocess.run(
            ["fio", "--output-format=json", str(example)],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "SSDLAB_SOCKET": uri.split("socket=")[1]},
            # fio saves its verify state (local-<job>-verify.state) in the working directory.
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr
        report = json.loads(done.stdout[done.stdout.index("{") :])
        assert [j["error"] for j in report["jobs"]] == [0, 0, 0, 0]
        assert sum(j["write"]["total_ios"] for j in report["jobs"]) == 4 * 64 * 256
    results = json.loads((out / "results.json").read_text())
    busy = [f for f in results["flows"] if f["requests"] > 0]
    assert len(busy) == 4, "each fio job is its own submission queue"
    assert results["data"]["mismatched_sectors"] == 0


def _connect(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(str(path))
    return s


def _recv_exact(s: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def _open_export(path: Path) -> tuple[socket.socket, int]:
    """Handshake by NBD_OPT_EXPORT_NAME; returns the socket and the export size."""
    s = _connect(path)
    hello = _recv_exact(s, 18)
    assert hello[:8] == b"NBDMAGIC"
    s.sendall(struct.pack(">I", 3))  # fixed newstyle, no zeroes
    s.sendall(struct.pack(">QII", 0x49484156454F5054, 1, 0))
    size, _flags = struct.unpack(">QH", _recv_exact(s, 10))
    return s, size


def _request(s: socket.socket, kind: int, cookie: int, offset: int, length: int) -> int:
    s.sendall(struct.pack(">IHHQQI", 0x25609513, 0, kind, cookie, offset, length))
    magic, error, got = struct.unpack(">IIQ", _recv_exact(s, 16))
    assert (magic, got) == (0x67446698, cookie)
    return error


def _closed(s: socket.socket) -> bool:
    try:
        return s.recv(1) == b""
    except ConnectionError:
        return True


def test_protocol_abuse_closes_that_connection_only(tmp_path: Path) -> None:
    with served(tmp_path, "--pace", "none") as (uri, _, _):
        path = Path(uri.split("socket=")[1])
        # Connect and leave; truncated handshake; old-style client flags; bad option magic.
        _connect(path).close()
        s = _connect(path)
        _recv_exact(s, 18)
        s.sendall(b"\x00\x00")
        s.close()
        for client in (struct.pack(">I", 0), struct.pack(">IQ", 1, 0xDEADBEEF)):
            s = _connect(path)
            _recv_exact(s, 18)
            s.sendall(client)
            assert _closed(s)
            s.close()
        # Requests the device must not see get the protocol's errors; the connection goes on.
        s, size = _open_export(path)
        assert _request(s, 0, 1, size, 4096) == 22, "a read past the end: EINVAL"
        assert _request(s, 0, 2, 100, 4096) == 22, "a misaligned read: EINVAL"
        assert _request(s, 0, 3, 0, 0) == 22, "an empty read: EINVAL"
        assert _request(s, 9, 4, 0, 4096) == 95, "an unknown command: ENOTSUP"
        assert _request(s, 3, 5, 0, 0) == 0, "a flush"
        # A write announcing 4 GiB of payload, then a bad magic: the connection ends.
        s.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 1, 6, 0, 0xFFFFFFFF))
        assert _closed(s)
        s.close()
        s, _ = _open_export(path)
        s.sendall(b"\x00" * 28)
        assert _closed(s)
        s.close()
        # The server still serves.
        qemu_io(uri, "write -P 0x5a 0 64k", "read -P 0x5a 0 64k")


def test_read_only_export_refuses_writes(tmp_path: Path) -> None:
    with served(tmp_path, "--pace", "none", "--read-only") as (uri, _, _):
        path = Path(uri.split("socket=")[1])
        s, _ = _open_export(path)
        assert _request(s, 4, 1, 0, 4096) == 1, "a trim on a read-only export: EPERM"
        assert _request(s, 0, 2, 0, 4096) == 0
        s.close()


def test_flushed_data_survives_a_killed_server(tmp_path: Path) -> None:
    image = tmp_path / "disk.img"
    (tmp_path / "dev.toml").write_text(DEVICE)
    config = tmp_path / "dev.toml"
    sock = tmp_path / "dev.sock"
    cmd = [sys.executable, "-m", "ssdlab", "serve", str(config), "--listen", f"unix:{sock}"]
    proc = subprocess.Popen(
        [*cmd, "--pace", "none", "--data", str(image), "--out", str(tmp_path / "o1")]
    )
    try:
        while not sock.exists():
            assert proc.poll() is None
            time.sleep(0.05)
        uri = f"nbd+unix:///?socket={sock}"
        qemu_io(uri, "write -P 0x77 1M 256k", "flush")
        proc.kill()  # no clean stop: only the flush made the data durable
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    sock.unlink()
    with served(tmp_path, "--pace", "none", "--data", str(image)) as (uri, _, _):
        qemu_io(uri, "read -P 0x77 1M 256k", "read -P 0 0 64k")


def test_real_time_pacing_reports_its_error(tmp_path: Path) -> None:
    with served(tmp_path) as (uri, out, _):
        qemu_io(uri, "write -P 1 0 256k", "read -P 1 0 256k")
    live = json.loads((out / "results.json").read_text())["live"]
    assert live["pace"] == "real-time"
    errors = live["pacing_error_us"]
    # One per reply (a FUA write's flush is a request of its own, not a reply).
    assert 0 < errors["count"] <= live["requests"]
    assert errors["p50"] >= 0, "a reply never leaves before its simulated completion"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--listen", "tcp:0.0.0.0:10809"], "--allow-remote"),
        (["--listen", "ftp:x"], "expected unix:PATH or tcp:HOST:PORT"),
        (["--pace", "fast"], "pace: expected"),
        (["--set", "flash.channels=0"], "flash.channels"),
    ],
)
def test_bad_serve_options_are_refused_by_name(
    tmp_path: Path, args: list[str], message: str
) -> None:
    config = tmp_path / "dev.toml"
    config.write_text(DEVICE)
    cmd = [sys.executable, "-m", "ssdlab", "serve", str(config), "--out", str(tmp_path / "o")]
    if "--listen" not in args:
        cmd += ["--listen", f"unix:{tmp_path / 's.sock'}"]
    done = subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stdout + done.stderr


def test_a_socket_path_in_use_is_refused(tmp_path: Path) -> None:
    with served(tmp_path, "--pace", "none") as (uri, _, _):
        path = uri.split("socket=")[1]
        config = tmp_path / "dev.toml"
        done = subprocess.run(
            [sys.executable, "-m", "ssdlab", "serve", str(config), "--listen", f"unix:{path}"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert done.returncode == 2 and "already exists" in done.stdout + done.stderr


def _wait_for(predicate: object, what: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_control_socket_answers_results_and_stops_the_server(tmp_path: Path) -> None:
    ctl = tmp_path / "ctl.sock"
    with served(tmp_path, "--pace", "none", "--control", str(ctl)) as (uri, out, proc):
        qemu_io(uri, "write -P 3 0 64k", "read -P 3 0 64k")
        answer = live.control(ctl, "results")
        assert answer["live"]["requests"] >= 2
        assert answer["data"]["mismatched_sectors"] == 0
        # The server wrote the same snapshot to its --out folder, and goes on serving.
        written = json.loads((out / "results.json").read_text())
        assert written["live"]["requests"] == answer["live"]["requests"]
        qemu_io(uri, "read -P 3 0 4k")
        cli = [sys.executable, "-m", "ssdlab", "control", str(ctl)]
        done = subprocess.run([*cli, "results"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "requests so far" in done.stdout, done.stdout
        # An unknown command gets an answer naming the ones there are; nothing stops.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(str(ctl))
            s.sendall(b"reboot\n")
            assert "expected results or stop" in json.loads(s.recv(4096))["error"]
        done = subprocess.run([*cli, "stop"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        proc.wait(timeout=60)  # it stops without a signal
    assert json.loads((out / "results.json").read_text())["live"]["requests"] >= 3
    assert not ctl.exists(), "the control socket is removed when the server stops"


def test_control_of_a_missing_socket_or_command_says_which(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "ssdlab", "control", str(tmp_path / "none.sock")]
    done = subprocess.run([*cli, "results"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "none.sock" in done.stdout + done.stderr
    done = subprocess.run([*cli, "pause"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "expected one of results, stop" in done.stdout + done.stderr


def test_sigusr1_writes_results_while_serving(tmp_path: Path) -> None:
    with served(tmp_path, "--pace", "none") as (uri, out, proc):
        qemu_io(uri, "write -P 4 0 64k")
        proc.send_signal(signal.SIGUSR1)
        _wait_for(lambda: (out / "results.json").exists(), "no snapshot after SIGUSR1")
        assert json.loads((out / "results.json").read_text())["live"]["requests"] >= 1
        qemu_io(uri, "read -P 4 0 64k")  # still serving


def test_a_closed_connections_replies_never_reach_its_successor(tmp_path: Path) -> None:
    # One queue: the second connection takes the first one's place while the first one's
    # writes (1 MiB each, milliseconds of simulated time under real-time pacing) are in flight.
    with served(tmp_path, "--max-connections", "1") as (uri, _, _):
        path = Path(uri.split("socket=")[1])
        s, _ = _open_export(path)
        for i in range(16):
            s.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 1, 1000 + i, i << 20, 1 << 20))
            s.sendall(b"\x11" * (1 << 20))
        s.close()
        deadline = time.monotonic() + 30
        while True:
            try:
                s, _ = _open_export(path)
                break
            except (ConnectionError, OSError, AssertionError, struct.error):
                assert time.monotonic() < deadline, "the queue was not freed"
                time.sleep(0.05)
        for cookie in (7, 8, 9):
            assert _request(s, 0, cookie, 0, 4096) == 0  # _request checks the cookie
            _recv_exact(s, 4096)
        s.close()


def test_python_serve_takes_snapshots_when_poll_asks(tmp_path: Path) -> None:
    (tmp_path / "dev.toml").write_text(DEVICE)
    sock = tmp_path / "py.sock"
    wrote = threading.Event()
    snapshots: list[ssdlab.Results] = []
    polls: list[str | None] = ["results", "stop"]

    def ready(address: str) -> None:
        uri = f"nbd+unix:///?socket={address.removeprefix('unix:')}"
        threading.Thread(target=lambda: (qemu_io(uri, "write -P 5 0 64k"), wrote.set())).start()

    def poll() -> str | None:
        return polls.pop(0) if wrote.is_set() and polls else None

    results = ssdlab.serve(
        tmp_path / "dev.toml",
        listen=f"unix:{sock}",
        pace="none",
        on_ready=ready,
        poll=poll,
        on_results=snapshots.append,
    )
    assert len(snapshots) == 1
    assert snapshots[0].to_dict()["live"]["requests"] >= 1
    assert results.to_dict()["live"]["requests"] >= snapshots[0].to_dict()["live"]["requests"]
    with pytest.raises(ValueError, match='poll\\(\\) returned "pause"'):
        ssdlab.serve(tmp_path / "dev.toml", listen=f"unix:{sock}", poll=lambda: "pause")
