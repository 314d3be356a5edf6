"""The live device's commands: ``ssdlab serve`` (the simulated SSD over NBD) and ``ssdlab
control`` (results and stop for a running server). Registered on the command line's `app` by
``ssdlab.cli``; ``ssdlab.live`` (sockets, subprocess) is imported only when one of them runs."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ssdlab import _outputs
from ssdlab._console import escape
from ssdlab._core import ConfigError, TraceError
from ssdlab._summary import print_summary
from ssdlab.cli import _fail, _prepare_out_dir, _save_and_show, app, stdout

if TYPE_CHECKING:
    from ssdlab.results import Results


@app.command()
def serve(
    config: Annotated[
        Path | None,
        typer.Argument(
            help="Configuration (TOML) \\[default: the default device].", show_default=False
        ),
    ] = None,
    listen: Annotated[
        str,
        typer.Option(
            "--listen", help="unix:PATH or tcp:HOST:PORT (loopback unless --allow-remote)."
        ),
    ] = "unix:ssdlab.sock",
    pace: Annotated[
        str,
        typer.Option(
            "--pace",
            help="real-time: replies leave at their simulated completion; none: at once.",
        ),
    ] = "real-time",
    data: Annotated[
        Path | None,
        typer.Option("--data", help="Keep the device's bytes in FILE across restarts."),
    ] = None,
    read_only: Annotated[bool, typer.Option("--read-only", help="Refuse writes.")] = False,
    allow_remote: Annotated[
        bool, typer.Option("--allow-remote", help="Allow a non-loopback TCP address.")
    ] = False,
    max_connections: Annotated[
        int, typer.Option("--max-connections", help="Connections (host queues) at once.")
    ] = 8,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Folder for results.json \\[default: results/serve-<name>]."),
    ] = None,
    control: Annotated[
        Path | None,
        typer.Option(
            "--control",
            help="Unix socket for `ssdlab control` (results, stop) while serving.",
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override one value: key.path=value (repeatable)."),
    ] = None,
) -> None:
    """Serve the simulated SSD over NBD (fio, qemu-io, QEMU guests, nbd-client) until Ctrl-C or
    SIGTERM, then write results.json."""
    out_dir = (
        out
        if out is not None
        else Path("results") / f"serve-{config.stem if config else 'default'}"
    )
    _prepare_out_dir(out_dir)

    def ready(address: str) -> None:
        stdout.print(f"serving at {escape(address)} (pace {pace}); Ctrl-C to stop")

    # SIGUSR1 asks for a snapshot of results.json while serving (as `ssdlab control results`).
    snapshot_asked = [False]

    def ask_snapshot(_signum: int, _frame: object) -> None:
        snapshot_asked[0] = True

    def poll() -> str | None:
        if snapshot_asked[0]:
            snapshot_asked[0] = False
            return "results"
        return None

    def snapshot(results: Results) -> None:
        try:
            results.save(out_dir)
            stdout.print(f"snapshot: wrote {escape(str(out_dir / 'results.json'))}")
        except OSError as e:
            stdout.print(f"[yellow]warning:[/] snapshot not written: {_outputs.reason(e)}")

    from ssdlab import live  # only `serve` and `control` need it (sockets, subprocess)

    previous_usr1 = signal.signal(signal.SIGUSR1, ask_snapshot)
    try:
        results = live.serve(
            config,
            listen=listen,
            pace=pace,
            data=data,
            read_only=read_only,
            allow_remote=allow_remote,
            max_connections=max_connections,
            overrides=list(set_ or []),
            on_ready=ready,
            control=control,
            poll=poll,
            on_results=snapshot,
        )
    except (ConfigError, TraceError, ValueError, OSError, RuntimeError) as e:
        _fail(str(e))
    finally:
        signal.signal(signal.SIGUSR1, previous_usr1)
    info = results.to_dict().get("live", {})
    errors = info.get("pacing_error_us") or {}
    line = f"live: {info.get('requests', 0)} requests over {info.get('connections', 0)} queues"
    if errors.get("count"):
        p50, p99 = errors["p50"], errors["p99"]
        line += f"; reply minus simulated completion p50 {p50:.1f} us, p99 {p99:.1f} us"
    stdout.print(line)
    _save_and_show(results, out_dir)


@app.command("control")
def control_command(
    socket_path: Annotated[
        Path,
        typer.Argument(
            help="The control socket `ssdlab serve --control` made.", show_default=False
        ),
    ],
    command: Annotated[
        str,
        typer.Argument(
            help="results: the results so far (the server also writes its results.json); "
            "stop: stop the server.",
            show_default=False,
        ),
    ],
) -> None:
    """Talk to a running `ssdlab serve`, independently of its NBD clients."""
    from ssdlab import live

    try:
        answer = live.control(socket_path, command)
    except (ValueError, OSError) as e:
        _fail(str(e))
    if command == "stop":
        stdout.print("the server is stopping; it writes results.json to its --out folder")
        return
    from ssdlab.results import Results

    print_summary(stdout.console, Results.from_json(json.dumps(answer)))
    info = answer.get("live", {})
    stdout.print(f"live: {info.get('requests', 0)} requests so far")
