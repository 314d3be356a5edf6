"""The ``ssdlab`` command: run a configuration, save results.json, show the headline numbers."""

from __future__ import annotations

import functools
import gc
import json
import signal
import sys
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from ssdlab import __version__, _outputs, _preload
from ssdlab._console import LazyConsole, escape
from ssdlab._core import ConfigError, TraceError
from ssdlab._extras import MissingExtraError
from ssdlab._progress import ConsoleProgress
from ssdlab._summary import default_notes
from ssdlab.api import DataIntegrityError, simulate
from ssdlab.mqsim import Scenario, import_mqsim, is_mqsim_file, toml_paths

if TYPE_CHECKING:
    from ssdlab.results import Results

# Runs shorter than this finish before a progress bar would be worth drawing.
PROGRESS_DELAY_SECONDS = 1.0

# Exit statuses (docs/results.md): 1 some sweep runs failed, 2 refused input or output folder,
# 3 data emulation read back wrong data (results.json is still written), 130 Ctrl-C, 143 SIGTERM.
EXIT_RUNS_FAILED = 1
EXIT_REFUSED = 2
EXIT_DATA_MISMATCH = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class Terminated(BaseException):
    """SIGTERM arrived: unwound like Ctrl-C, so that workers and temporary files are cleaned
    up (a BaseException, so that no `except Exception` along the way swallows it)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="ssdlab: a fast multi-queue SSD simulator.",
)
# Piped output is not squeezed to 80 columns: the table is meant to be read whole in a log.
# Both are made when first printed to (ssdlab._console: rich is imported meanwhile).
stdout = LazyConsole(highlight=False, width=None if sys.stdout.isatty() else 200)
stderr = LazyConsole(stderr=True, highlight=False)
# Where warnings go: beside the summary, or to stderr under --quiet and --json.
_warnings = stdout


def _go_quiet() -> None:
    """--quiet and --json: stdout carries nothing of ours but the results document, warnings go
    to stderr and no progress bar is drawn."""
    global stdout, _warnings
    stdout = LazyConsole(discard=True, highlight=False)
    _warnings = stderr


def _version_callback(value: bool) -> None:
    if value:
        stdout.print(f"ssdlab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Show the version."
        ),
    ] = False,
) -> None:
    """ssdlab: a fast multi-queue SSD simulator."""


@app.command()
def run(
    config: Annotated[
        Path,
        typer.Argument(
            help="Configuration: a TOML file, or MQSim's device file (ssdconfig.xml) followed by "
            "its workload file.",
            show_default=False,
        ),
    ],
    workload: Annotated[
        Path | None,
        typer.Argument(
            help="MQSim workload file (workload.xml), after the MQSim device file.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Folder for results.json \\[default: results/<config name>]; MQSim runs write "
            "<folder>/scenario-<n>/results.json \\[default folder: results/<workload name>].",
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set", help="Override one value: key.path=value (repeatable; every MQSim scenario)."
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the random streams.")] = None,
    alone: Annotated[
        bool,
        typer.Option(
            "--alone",
            help="Also run each flow alone on the same device; report slowdown, fairness and "
            "weighted speedup.",
        ),
    ] = False,
    scenario: Annotated[
        list[int] | None,
        typer.Option("--scenario", help="MQSim runs: only scenario N (1 = first; repeatable)."),
    ] = None,
    report: Annotated[
        bool,
        typer.Option("--report", help="Also write report.html and its charts (ssdlab report)."),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the results document to stdout instead of the summary (an array of "
            "documents for several MQSim scenarios); warnings go to stderr.",
        ),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="Print nothing but warnings and errors (to stderr); no progress."
        ),
    ] = False,
) -> None:
    """Simulate CONFIG (or an MQSim file pair), write results.json and print a summary."""
    if as_json or quiet:
        _go_quiet()
    overrides = list(set_ or [])
    if seed is not None:
        overrides.append(f"seed={seed}")
    if workload is not None or is_mqsim_file(config):
        documents = _run_mqsim(config, workload, out, overrides, alone, scenario or [], report)
        if as_json:
            print("[\n" + ",\n".join(r.to_json() for r in documents) + "\n]")
        return
    if scenario:
        _fail("--scenario is for MQSim runs: ssdlab run SSDCONFIG.xml WORKLOAD.xml --scenario N")
    out_dir = out if out is not None else Path("results") / config.stem
    if config.is_file():  # a mistyped config name makes no folder and moves nothing
        _prepare_out_dir(out_dir)
    for note in default_notes(config, overrides):
        stdout.print_labelled("[cyan]note:[/]", note)
    results, mismatch = _simulate(config, overrides, alone, records_dir=out_dir)
    _save_and_show(results, out_dir, report)
    if as_json:
        print(results.to_json())
    if mismatch is not None:
        _fail(mismatch, code=EXIT_DATA_MISMATCH)


def _prepare_out_dir(folder: Path) -> None:
    """Before simulating: the folder can be written, a killed run's temporary files are gone,
    and the previous run's outputs are moved to folder/previous/ (so that nothing there looks
    like the result of this run unless this run wrote it)."""
    try:
        _outputs.check_folder(folder)
        _outputs.remove_stale_temporaries(folder)
        previous = _outputs.set_aside_previous(folder)
    except OSError as e:
        _fail(str(e))
    if previous is not None:
        stdout.print_line(f"moved the previous results to {previous}")


def _model_line(overrides: list[str]) -> str:
    """Which model an MQSim file pair runs in (results.json says it too, as config.compat)."""
    compat = "default"
    for o in overrides:
        key, _, value = o.partition("=")
        if key.strip() == "compat":
            compat = value.strip().strip("\"'")
    if compat == "mqsim":
        return 'model: MQSim-compatible (compat = "mqsim"; docs/fidelity.md)'
    return (
        "model: ssdlab's default, which differs from MQSim where real drives do "
        "(--set compat=mqsim follows MQSim; docs/fidelity.md)"
    )


def _run_mqsim(
    ssdconfig: Path,
    workload: Path | None,
    out: Path | None,
    overrides: list[str],
    alone: bool,
    only: list[int],
    report: bool = False,
) -> list[Results]:
    if workload is None:
        _fail(
            f"an MQSim run needs the device file and the workload file: "
            f"ssdlab run SSDCONFIG.xml WORKLOAD.xml (got only {ssdconfig})"
        )
    try:
        scenarios = import_mqsim(ssdconfig, workload)
    except (ConfigError, OSError) as e:
        _fail(str(e))
    for n in only:
        if not 1 <= n <= len(scenarios):
            _fail(f"--scenario {n}: {workload} has scenarios 1 to {len(scenarios)}")
    out_dir = out if out is not None else Path("results") / workload.stem
    stdout.print_line(_model_line(overrides))
    chosen = [s for s in scenarios if not only or s.index in only]
    for s in chosen:  # every folder checked before the first scenario runs
        _prepare_out_dir(out_dir / f"scenario-{s.index}")
    mismatches = []
    documents = []
    for s in chosen:
        stdout.print_line(f"scenario {s.index} of {len(scenarios)}", bold=True)
        folder = out_dir / f"scenario-{s.index}"
        label = f"scenario {s.index}: "
        results, mismatch = _simulate(s, overrides, alone, label=label, records_dir=folder)
        _save_and_show(results, folder, report)
        documents.append(results)
        if mismatch is not None:
            mismatches.append(mismatch if mismatch.startswith(label) else label + mismatch)
    for mismatch in mismatches[:-1]:
        print(f"error: {mismatch}", file=sys.stderr)
    if mismatches:
        _fail(mismatches[-1], code=EXIT_DATA_MISMATCH)
    return documents


@functools.cache
def _preload_results() -> None:
    """The results models, and rich unless stdout discards (`--quiet`, `--json`), are needed
    once the run is over: imported meanwhile, on the other core. Started when the first run
    starts rather than with the command, so that the work before it (reading the config,
    preparing the folder) does not share the GIL with the import. A quiet run imports rich only
    if it has warnings to print."""
    printing = () if stdout.discards else ("rich.console", "rich.table", "rich.markup")
    _preload.start("ssdlab.results", *printing)


def _simulate(
    config: Path | Scenario,
    overrides: list[str],
    alone: bool,
    label: str = "",
    records_dir: Path | None = None,
) -> tuple[Results, str | None]:
    """The run's results, and the data integrity error when its reads found wrong data (the
    results are kept: the caller saves them, then fails)."""
    progress = ConsoleProgress(stderr, PROGRESS_DELAY_SECONDS if _warnings is not stderr else None)
    _preload_results()
    try:
        try:
            results = simulate(
                config, overrides=overrides, progress=progress, alone=alone, records_dir=records_dir
            )
        finally:
            progress.close()
    except DataIntegrityError as e:
        return e.results, str(e)
    except (ConfigError, TraceError, OSError, RuntimeError) as e:
        message = str(e)
        _fail(message if message.startswith(label) else f"{label}{message}")
    except KeyboardInterrupt:
        _fail("interrupted", code=EXIT_INTERRUPTED)
    except Terminated:
        _fail("terminated (SIGTERM)", code=EXIT_TERMINATED)
    return results, None


def _save_and_show(results: Results, out_dir: Path, report: bool = False) -> None:
    target = out_dir / "results.json"
    failure = None
    try:
        # results.json, and requests.parquet with run.request_records; each written to a
        # temporary name, synced and renamed, so a full disk leaves no truncated file.
        results.save(out_dir)
    except OSError as e:
        failure = f"cannot write {target}: {_outputs.reason(e)}"

    # The numbers on screen even when the file could not be written.
    if not stdout.discards:
        from ssdlab._summary import print_fairness, print_summary

        print_summary(stdout.console, results)
        if results.fairness is not None:
            print_fairness(stdout.console, results.fairness)
    for warning in results.warnings:
        _warnings.print_labelled("[yellow]warning:[/]", warning)
    if failure is not None:
        _fail(failure)
    stdout.print(f"wrote {target}", markup=False, emoji=False)
    if report:
        _write_report(out_dir, [])


def _write_report(folder: Path, metrics: list[str]) -> None:
    from ssdlab._extras import MissingExtraError
    from ssdlab.report import ReportError, write_report  # matplotlib only when asked for
    from ssdlab.results import ResultsFileError

    try:
        target = write_report(folder, metrics)
    except (ReportError, ResultsFileError, MissingExtraError) as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"cannot write the report in {folder}: {_outputs.reason(e)}")
    stdout.print(f"wrote {target}", markup=False, emoji=False)


@app.command("import-mqsim")
def import_mqsim_command(
    ssdconfig: Annotated[
        Path, typer.Argument(help="MQSim device file (ssdconfig.xml).", show_default=False)
    ],
    workload: Annotated[
        Path, typer.Argument(help="MQSim workload file (workload.xml).", show_default=False)
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="TOML file to write \\[default: <workload name>.toml]. Several scenarios go to "
            "OUT-1.toml, OUT-2.toml, ... (scenario n in OUT-n.toml).",
        ),
    ] = None,
) -> None:
    """Convert MQSim's ssdconfig.xml + workload.xml to ssdlab TOML, one file per IO_Scenario."""
    try:
        scenarios = import_mqsim(ssdconfig, workload)
    except (ConfigError, OSError) as e:
        _fail(str(e))
    out = out if out is not None else Path(f"{workload.stem}.toml")
    paths = toml_paths(out, len(scenarios))
    for s, path in zip(scenarios, paths, strict=True):
        which = f", scenario {s.index} of {len(scenarios)}" if len(scenarios) > 1 else ""
        comments = [f"Imported by ssdlab import-mqsim from {ssdconfig} and {workload}{which}."]
        if s.warnings:
            comments += ["", "What ssdlab does differently from MQSim here:"]
            for w in s.warnings:
                comments += textwrap.wrap(w, 96, initial_indent="- ", subsequent_indent="  ")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(s.to_toml(path, comments), encoding="utf-8")
        except OSError as e:
            _fail(f"cannot write {path}: {e.strerror or e}")
        stdout.print(f"scenario {s.index}: wrote {path}", markup=False, emoji=False)
        for warning in s.warnings:
            stdout.print_labelled("[yellow]warning:[/]", warning)


@app.command()
def sweep(
    sweep_file: Annotated[
        Path,
        typer.Argument(
            help="Sweep file (TOML): a base config and the axes to vary; see docs/sweeps.md.",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Folder for runs/<run>/results.json, sweep.parquet and sweep.json "
            "\\[default: results/<sweep name>]. Finished runs there are kept, not rerun.",
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Local worker processes (or --dask local workers) \\[default: all cores].",
        ),
    ] = None,
    dask: Annotated[
        str | None,
        typer.Option(
            "--dask",
            help="Run on a Dask cluster: a scheduler address (tcp://host:8786), or 'local' to "
            "start a LocalCluster here.",
        ),
    ] = None,
    report: Annotated[
        bool,
        typer.Option(
            "--report", help="Also write OUT/report.html and its charts (ssdlab report OUT)."
        ),
    ] = False,
) -> None:
    """Run every point of a design-space sweep once and collect one row per run."""
    # Imported here: pyarrow and distributed are only needed by this command.
    from ssdlab.sweep import dask_executor, load_sweep, run_sweep

    try:
        plan = load_sweep(sweep_file)
    except (ConfigError, OSError) as e:
        _fail(str(e))
    out_dir = out if out is not None else Path("results") / sweep_file.stem
    axes = ", ".join(plan.axes) or "seeds only"
    stdout.print(
        f"sweep {escape(str(sweep_file))}: {len(plan.points)} runs ({plan.mode} of {axes})"
    )

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    executor, close = None, None
    if dask is not None:
        try:
            executor, close = dask_executor(dask, jobs)
        except MissingExtraError as e:
            _fail(str(e))
        except (OSError, TimeoutError, ValueError) as e:
            _fail(f"--dask {dask}: cannot reach the Dask scheduler: {e}")
    bar = Progress(
        TextColumn("runs"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=stderr.console,
        transient=True,
    )
    task = bar.add_task("runs", total=len(plan.points))
    started = time.monotonic()
    try:
        with bar:
            result = run_sweep(
                plan,
                out_dir,
                executor=executor,
                jobs=jobs,
                progress=lambda done, total: bar.update(task, completed=done),
            )
    except ConfigError as e:
        _fail(str(e))
    except _outputs.OutputError as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"{out_dir}: {_outputs.reason(e)}")
    except KeyboardInterrupt:
        _fail(
            f"interrupted; finished runs are kept in {out_dir} (run again to resume)",
            code=EXIT_INTERRUPTED,
        )
    except Terminated:
        _fail(
            f"terminated (SIGTERM); finished runs are kept in {out_dir} (run again to resume)",
            code=EXIT_TERMINATED,
        )
    finally:
        if close is not None:
            close()

    wall = time.monotonic() - started
    ok = len(result.rows) - len(result.failed)
    stdout.print(
        f"{len(result.rows)} runs: {ok} ok ({result.reused} already done), "
        f"{len(result.failed)} failed, in {wall:.1f} s"
    )
    for row in result.failed:
        stdout.print(f"[red]failed:[/] run {row['run']}: {escape(str(row['error']))}")
    stdout.print(f"wrote {result.table_path}", markup=False, emoji=False)
    if report:
        _write_report(out_dir, [])
    if any(str(row["error"]).startswith("DataIntegrityError") for row in result.failed):
        raise typer.Exit(EXIT_DATA_MISMATCH)
    if result.failed:
        raise typer.Exit(EXIT_RUNS_FAILED)


@app.command("examples")
def examples_command(
    name: Annotated[
        str | None,
        typer.Argument(
            help="An example to copy (as listed, e.g. intel-x25m); without it, list them.",
            show_default=False,
        ),
    ] = None,
    dest: Annotated[
        Path,
        typer.Argument(help="Folder to copy it into, or a .toml path for the copy."),
    ] = Path("."),
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace files the copy would overwrite.")
    ] = False,
) -> None:
    """List the example configs that ship with ssdlab, or copy one.

    With NAME, copy that example to DEST with the traces and base config it reads, so that
    `ssdlab run` (or `ssdlab sweep`) works on the copy."""
    from ssdlab.examples import ExampleError, copy_example, find_example, list_examples

    try:
        if name is None:
            examples = list_examples()
            width = max(len(e.name) for e in examples)
            for e in examples:
                stdout.print(f"{e.name:<{width}}  {escape(e.description)}")
            stdout.print("\ncopy one: ssdlab examples NAME [DEST]")
            return
        path = copy_example(name, dest, overwrite=overwrite)
        command = "sweep" if find_example(name).is_sweep else "run"
    except (ExampleError, OSError) as e:
        _fail(str(e))
    stdout.print(f"wrote {path}; try: ssdlab {command} {path}", markup=False, emoji=False)


@app.command("analytic")
def analytic_command(
    config: Annotated[
        Path, typer.Argument(help="Configuration (a TOML file); flows are not needed.")
    ],
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override one value: key.path=value (repeatable)."),
    ] = None,
    size: Annotated[
        list[str] | None,
        typer.Option(
            "--size",
            help="Request size, e.g. 4KiB (repeatable) \\[default: a page, doubling to 512 KiB].",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the model as JSON instead of tables.")
    ] = False,
) -> None:
    """Print the closed-form model of CONFIG's device (Yoo et al., SIMULTECH 2014).

    Page costs, parallelism, and the latency, IOPS and bandwidth of one request at a time on an
    idle drive: the figures the simulation can be checked against."""
    from ssdlab.analytic import analytic, parse_size

    try:
        sizes = [parse_size(s) for s in size] if size else None
        model = analytic(config, overrides=list(set_ or []), request_sizes=sizes)
    except (ConfigError, ValueError, OSError) as e:
        _fail(str(e))
    if as_json:
        print(json.dumps(model.to_dict(), indent=2))
        return
    stdout.print(
        f"closed-form model of {escape(str(config))} (Yoo et al., SIMULTECH 2014): "
        f"{model.parallel_units} pages in parallel, {model.page_size_bytes:,} B pages"
    )
    stdout.print(f"{'page':>9} {'X_ch us':>9} {'X_reg us':>9} {'X_cell us':>9} {'X_page us':>9}")
    for op, c in (("read", model.read), ("write", model.write)):
        stdout.print(
            f"{op:>9} {c.channel_us:>9.2f} {c.register_us:>9.2f} {c.cell_us:>9.2f} "
            f"{c.page_us:>9.2f}"
        )
    stdout.print("")
    stdout.print(model.table(), markup=False, emoji=False)
    stdout.print(
        "one request at a time on an idle, mapped drive: no queueing, GC, caches or host "
        "transfer (the simulation has them: ssdlab run)"
    )


@app.command("report")
def report_command(
    results_dir: Annotated[
        list[Path],
        typer.Argument(
            help="A results folder (results.json, from ssdlab run --out) or a sweep folder "
            "(sweep.parquet, from ssdlab sweep --out); several results folders are compared "
            "(as ssdlab compare) into ./compare.html.",
            show_default=False,
        ),
    ],
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            help="Sweeps: a metric of sweep.parquet to chart against each swept parameter "
            "(repeatable) \\[default: iops, read_p99_us, write_p99_us, write_amplification].",
        ),
    ] = None,
) -> None:
    """Write RESULTS_DIR/report.html (self-contained) and its charts as PNG files beside it."""
    if len(results_dir) > 1:
        if metric:
            _fail("--metric chooses a sweep's metrics; it does not apply to comparing runs")
        _write_compare(results_dir, None)
        return
    _write_report(results_dir[0], list(metric or []))


@app.command("compare")
def compare_command(
    results_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="Two results folders or more (results.json, from ssdlab run --out); ratios "
            "are each run's value over the first's.",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="HTML file to write \\[default: ./compare.html]."),
    ] = None,
) -> None:
    """Write one self-contained HTML page comparing the runs: config differences, results side
    by side with ratios, overlaid latency CDFs per flow and op."""
    _write_compare(results_dirs, out)


def _write_compare(folders: list[Path], out: Path | None) -> None:
    from ssdlab._extras import MissingExtraError
    from ssdlab.compare import compare  # matplotlib only when asked for
    from ssdlab.report import ReportError
    from ssdlab.results import ResultsFileError

    try:
        target = compare(folders, out)
    except (ReportError, ResultsFileError, MissingExtraError) as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"cannot write {out or 'compare.html'}: {_outputs.reason(e)}")
    stdout.print(f"wrote {target}", markup=False, emoji=False)


def _fail(message: str, code: int = EXIT_REFUSED) -> NoReturn:
    # Plain text: the message may contain brackets that rich would read as markup.
    print(f"error: {message}", file=sys.stderr)
    raise typer.Exit(code)


def main() -> None:
    """Shared by the ``ssdlab`` console script and ``python -m ssdlab``, so both behave alike."""
    # SIGTERM (a job scheduler, `timeout`, `kill`) unwinds like Ctrl-C: sweep workers are
    # stopped and temporary files removed, instead of dying mid-write with workers left behind.
    signal.signal(signal.SIGTERM, _on_sigterm)
    every_command = app.registered_commands
    app.registered_commands = _commands_named(sys.argv[1:2])
    try:
        app()
    except Terminated:  # a command without its own cleanup (report, import-mqsim)
        print("error: terminated (SIGTERM)", file=sys.stderr)
        sys.exit(EXIT_TERMINATED)
    finally:
        # What the command built lives until the process ends: the interpreter's collections
        # at exit need not walk it (about 30 ms of a short run, 13 ms of `--version`: typer's,
        # rich's and the results models' objects). Exit handlers (atexit, weakref.finalize:
        # temporary folders) and deallocation by reference count run as before; only objects
        # in reference cycles are left to the OS without their __del__ (none of ours needs it).
        gc.freeze()
        app.registered_commands = every_command


def _commands_named(first_argument: list[str]) -> list[typer.models.CommandInfo]:
    """The commands typer needs to build: only the one named first (`ssdlab run ...`), or all
    of them (`ssdlab --help`, a mistyped name, which click then suggests a name for). Typer
    turns every command's parameters into click's before running one: 10-15 ms for all nine,
    3 ms for one."""
    named = [
        command
        for command in app.registered_commands
        if first_argument
        and (command.name or typer.main.get_command_name(command.callback.__name__))
        == first_argument[0]
    ]
    return named or app.registered_commands


# The live device's commands (serve, control) are defined beside it and registered on `app`
# when imported here; they import the NBD server itself only when run.
from ssdlab import cli_live as _cli_live  # noqa: E402, F401

if __name__ == "__main__":
    main()
