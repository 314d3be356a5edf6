"""`import ssdlab` loads only the native core; each public name loads its module when first used
(issue 18: a short `ssdlab run` should not pay for plotting, comparison or the NBD server)."""

import json
import os
import subprocess
import sys

import pytest
import ssdlab
from conftest import run_script
from ssdlab import _preload


def python(code: str) -> str:
    """What `code` prints in a fresh interpreter (nothing imported before it)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout


def test_import_ssdlab_leaves_the_heavy_modules_unloaded():
    code = (
        "import sys, ssdlab\n"
        "heavy = [m for m in ('pydantic', 'ssdlab.results', 'ssdlab.live', 'ssdlab.compare',"
        " 'ssdlab.report', 'matplotlib', 'pandas') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    assert python(code).strip() == ""


@pytest.mark.parametrize("name", ssdlab.__all__)
def test_every_public_name_resolves(name):
    value = getattr(ssdlab, name)
    assert value is not None
    assert name in dir(ssdlab)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'simulat'"):
        ssdlab.simulat  # noqa: B018


def test_from_import_gives_the_defining_modules_objects():
    from ssdlab import Results, simulate
    from ssdlab.api import simulate as api_simulate
    from ssdlab.results import Results as results_Results

    assert simulate is api_simulate
    assert Results is results_Results


def test_a_function_named_as_its_submodule_stays_the_function():
    # `ssdlab.analytic` and `ssdlab.compare` are functions defined in submodules of the same
    # names; importing a submodule first must not leave the package's name bound to the module.
    code = (
        "import ssdlab.analytic, ssdlab.compare, types, ssdlab\n"
        "from ssdlab.analytic import AnalyticModel\n"
        "print(callable(ssdlab.analytic), callable(ssdlab.compare),"
        " isinstance(ssdlab.analytic, types.ModuleType), AnalyticModel.__name__)\n"
    )
    assert python(code).split() == ["True", "True", "False", "AnalyticModel"]


def test_the_command_and_the_api_leave_the_results_models_unloaded():
    # `ssdlab run` imports the results models (pydantic) on a second thread while the
    # simulation runs (ssdlab._preload): importing the command line or the API must not.
    code = (
        "import sys, ssdlab.cli, ssdlab.api, ssdlab.live, ssdlab._summary\n"
        "print(','.join(m for m in ('pydantic', 'ssdlab.results') if m in sys.modules))\n"
    )
    assert python(code).strip() == ""


def test_the_command_line_leaves_the_live_device_unloaded():
    # Only `ssdlab serve` and `ssdlab control` need the NBD server (sockets, subprocess): about
    # 10 ms of every other command's start.
    code = "import sys, ssdlab.cli\nprint('ssdlab.live' in sys.modules)\n"
    assert python(code).strip() == "False"


def test_preloading_imports_on_another_thread():
    code = (
        "import sys, threading\n"
        "from ssdlab import _preload\n"
        "before = 'ssdlab.results' in sys.modules\n"
        "thread = _preload.start('ssdlab.results')\n"
        "thread.join()\n"
        "print(before, thread is not threading.main_thread(), thread.daemon,"
        " 'ssdlab.results' in sys.modules)\n"
    )
    assert python(code).split() == ["False", "True", "False", "True"]


def test_an_early_exit_waits_for_the_preload_to_finish(tmp_path):
    # A refused config ends the command while the results models may still be importing; the
    # interpreter must not finalise under that import (as a daemon thread it crashed the process
    # about once in 300-600 such exits: exit -11 instead of 2).
    (tmp_path / "slow_module.py").write_text(
        "import pathlib, time\n"
        "time.sleep(0.3)\n"
        f"pathlib.Path({str(tmp_path / 'imported')!r}).write_text('done')\n"
    )
    code = (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
        "from ssdlab import _preload\n"
        "_preload.start('slow_module')\n"
        "sys.exit(2)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert (tmp_path / "imported").read_text() == "done"


def test_a_preload_that_fails_fails_again_where_the_module_is_used():
    code = (
        "import importlib\n"
        "from ssdlab import _preload\n"
        "_preload.start('ssdlab.no_such_module').join()\n"
        "try:\n"
        "    importlib.import_module('ssdlab.no_such_module')\n"
        "except ModuleNotFoundError as e:\n"
        "    print(e.name)\n"
    )
    assert python(code).strip() == "ssdlab.no_such_module"


def test_a_run_from_the_command_line_still_saves_and_shows_its_results(tmp_path):
    config = tmp_path / "tiny.toml"
    config.write_text(
        'seed = 1\n[precondition]\nmode = "none"\n'
        '[[flows]]\nread_fraction = 0.5\nrequest_size = "4KiB"\nqueue_depth = 4\nrequests = 200\n'
    )
    out = subprocess.run(
        [sys.executable, "-m", "ssdlab", "run", str(config), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "flow-0" in out.stdout
    assert (tmp_path / "out" / "results.json").is_file()


def test_reading_the_arguments_leaves_pydantic_unloaded():
    # typer 0.29 coerces every argument through a pydantic TypeAdapter, importing pydantic on
    # the main thread before the command's code runs (about 80 ms of `ssdlab run`); pyproject
    # holds typer below it, and the results models come in on the preload thread instead.
    # What `run` finds loaded when it starts (before it starts the preload thread itself).
    code = (
        "import sys\n"
        "import ssdlab.cli as cli\n"
        "seen = []\n"
        "cli._preload.start = lambda *modules: seen.append('pydantic' in sys.modules)\n"
        "try:\n"
        "    cli.app(['run', 'no-such-config.toml', '--seed', '7', '--set', 'a=1', '-q'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(seen)\n"
    )
    assert python(code).strip().splitlines()[-1] == "[False]"


def test_the_progress_bar_module_loads_only_when_a_bar_is_drawn():
    code = (
        "import io, sys\n"
        "from rich.console import Console\n"
        "import ssdlab.cli\n"
        "from ssdlab._progress import ConsoleProgress\n"
        "before = 'rich.progress' in sys.modules\n"
        "bar = ConsoleProgress(Console(file=io.StringIO(), force_terminal=True), delay=0.0)\n"
        "bar(0.5)\n"
        "drawn = bar._bar is not None\n"
        "bar.close()\n"
        "print(before, drawn, 'rich.progress' in sys.modules)\n"
    )
    assert python(code).split() == ["False", "True", "True"]


def test_the_command_leaves_its_objects_to_the_exit():
    # The interpreter's collections at exit walked every object the command made (30-40 ms);
    # main() freezes them once the command is over.
    code = (
        "import gc, sys\n"
        "from ssdlab.cli import main\n"
        "sys.argv = ['ssdlab', '--version']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(gc.get_freeze_count() > 0)\n"
    )
    assert python(code).strip().splitlines()[-1] == "True"


def test_the_start_up_benchmark_reports_every_row(tmp_path):
    """`make bench`'s command start-up benchmark (scripts/bench_cli.py) at one run: the
    interpreter, the import, a parse-only command and a short run with its overhead."""
    out = tmp_path / "bench-cli.json"
    done = run_script("bench_cli.py", "--runs", "1", "--requests", "100", "--out", out, timeout=120)
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert document["name"] == "cli-start" and document["runs"] == 1
    rows = {row["what"]: row for row in document["rows"]}
    assert list(rows) == ["interpreter", "import", "version", "run"]
    for row in rows.values():
        assert 0 < row["min_seconds"] <= row["median_seconds"]
    run = rows["run"]
    assert "OUT" in run["command"] and "short.toml" in run["command"]
    # The overhead is the whole run less its simulation: positive, and below the whole.
    assert 0 < run["overhead"]["median_seconds"] < run["median_seconds"]
    assert rows["interpreter"]["median_seconds"] < rows["import"]["median_seconds"]


def test_the_command_line_leaves_rich_unloaded_until_it_prints():
    # rich is 20-30 ms of every command's start; `ssdlab run` imports it on the preload thread
    # while the model runs (ssdlab._console), so the command line itself must not.
    code = "import sys, ssdlab.cli\nprint(any(m.split('.')[0] == 'rich' for m in sys.modules))\n"
    assert python(code).strip() == "False"


def test_a_discarding_console_renders_nothing_and_imports_nothing():
    code = (
        "import sys\n"
        "from ssdlab._console import LazyConsole\n"
        "quiet = LazyConsole(discard=True)\n"
        "quiet.print('[bold]not shown[/]')\n"
        "quiet.print_labelled('[yellow]warning:[/]', 'a [red] bracket')\n"
        "print(any(m.split('.')[0] == 'rich' for m in sys.modules), quiet.discards)\n"
    )
    assert python(code).split() == ["False", "True"]


def test_a_lazy_console_prints_the_label_as_markup_and_the_text_as_written():
    code = (
        "import io\n"
        "from ssdlab._console import LazyConsole\n"
        "out = io.StringIO()\n"
        "console = LazyConsole(file=out, highlight=False, width=200)\n"
        "console.print_labelled('[yellow]warning:[/]', 'keep [red]these[/] brackets')\n"
        "console.print('wrote [x].json', markup=False)\n"
        "print(out.getvalue(), end='')\n"
        "print(type(console.console).__name__, console.width)\n"
    )
    assert python(code).splitlines() == [
        "warning: keep [red]these[/] brackets",
        "wrote [x].json",
        "Console 200",
    ]


def test_a_plain_line_into_a_pipe_is_written_as_it_is_without_rich(tmp_path):
    # The lines an MQSim comparison prints before its run: straight to a stream rich would not
    # style, so that rich's import stays on the preload thread.
    target = tmp_path / "out.txt"
    code = (
        "import sys\n"
        "from ssdlab._console import LazyConsole\n"
        f"out = open({str(target)!r}, 'w')\n"
        "console = LazyConsole(file=out, highlight=False, width=40)\n"
        "console.print_line('scenario 1 of 2', bold=True)\n"
        "console.print_line('[bold] stays as written')\n"
        "LazyConsole(discard=True, width=40).print_line('never shown')\n"
        "print(any(m.split('.')[0] == 'rich' for m in sys.modules))\n"
        "console.print_line('a line longer than the forty columns set for it')\n"
        "console.print_line('after rich: still plain')\n"
        "out.close()\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert done.stdout.strip() == "False"
    # The long line went through rich, which wraps it at the set width.
    assert target.read_text().splitlines() == [
        "scenario 1 of 2",
        "[bold] stays as written",
        "a line longer than the forty columns set",
        "for it",
        "after rich: still plain",
    ]


def test_a_plain_line_is_left_to_rich_where_styles_are_asked_for(tmp_path):
    # FORCE_COLOR makes rich style a pipe too: the bold line must then come out bold.
    code = (
        "import io, sys\n"
        "from ssdlab._console import LazyConsole\n"
        "out = io.StringIO()\n"
        "LazyConsole(file=out, highlight=False, width=200).print_line('scenario 1', bold=True)\n"
        "print(repr(out.getvalue()), any(m.split('.')[0] == 'rich' for m in sys.modules))\n"
    )
    env = {**os.environ, "FORCE_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    shown, rich_loaded = done.stdout.rsplit(" ", 1)
    assert "\\x1b[1m" in shown and "scenario 1" in shown
    assert rich_loaded.strip() == "True"


def test_a_discarding_console_still_gives_a_console_to_rich():
    # rich's own objects (a table's measurement, a progress bar) need a real Console: a
    # discarding one gives one that writes to the null device.
    from ssdlab._console import LazyConsole

    quiet = LazyConsole(discard=True)
    quiet.console.print("nothing shown")
    assert quiet.console.file.name == os.devnull
    quiet.console.file.close()


def test_the_preload_hands_the_gil_over_quickly_and_restores_the_interval(tmp_path):
    # The preloaded module waits on a gate the test opens only after reading the interval: an
    # instant import (json, already loaded) let the thread end and put the interval back before
    # it was read, about once in a few hundred runs (a clean-clone CI failed on it).
    (tmp_path / "gated_module.py").write_text("import builtins\nbuiltins.gate.wait(30)\n")
    code = (
        "import builtins, sys, threading\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from ssdlab import _preload\n"
        "builtins.gate = threading.Event()\n"
        "sys.setswitchinterval(0.004)\n"
        "thread = _preload.start('gated_module')\n"
        "during = sys.getswitchinterval()\n"
        "builtins.gate.set()\n"
        "thread.join()\n"
        "after = sys.getswitchinterval()\n"
        "print(round(during, 6), round(after, 6), 'gated_module' in sys.modules)\n"
    )
    assert python(code).split() == [str(_preload.SWITCH_INTERVAL_SECONDS), "0.004", "True"]


def test_the_command_starts_the_preload_once(monkeypatch):
    # The results models are imported once per command (an MQSim pair may hold several
    # scenarios), from the first run's start; rich with them unless stdout discards.
    import ssdlab.cli as cli
    from ssdlab._console import LazyConsole

    for discard, rich in ((False, ("rich.console", "rich.table", "rich.markup")), (True, ())):
        started = []
        monkeypatch.setattr(cli._preload, "start", lambda *m, seen=started: seen.append(m))
        monkeypatch.setattr(cli, "stdout", LazyConsole(discard=discard))
        cli._preload_results.cache_clear()
        try:
            cli._preload_results()
            cli._preload_results()
        finally:
            cli._preload_results.cache_clear()
        assert started == [("ssdlab.results", *rich)]


def test_a_quiet_run_leaves_rich_to_the_end(tmp_path):
    # Under --quiet nothing is printed before the simulation, and rich is not preloaded: it is
    # not loaded when the simulation starts (it comes in only for warnings).
    config = tmp_path / "tiny.toml"
    config.write_text(
        'seed = 1\n[precondition]\nmode = "none"\n'
        '[[flows]]\nread_fraction = 1.0\nrequest_size = "4KiB"\nqueue_depth = 4\nrequests = 50\n'
    )
    code = (
        "import sys\n"
        "import ssdlab.cli as cli\n"
        "real = cli.simulate\n"
        "seen = []\n"
        "def simulate(*a, **k):\n"
        "    seen.append(any(m.split('.')[0] == 'rich' for m in sys.modules))\n"
        "    return real(*a, **k)\n"
        "cli.simulate = simulate\n"
        f"sys.argv = ['ssdlab', 'run', {str(config)!r}, '--out', {str(tmp_path / 'out')!r}, '-q']\n"
        "try:\n"
        "    cli.main()\n"
        "except SystemExit as e:\n"
        "    print('exit', e.code)\n"
        "print(seen)\n"
    )
    assert python(code).splitlines()[-1] == "[False]"
    assert (tmp_path / "out" / "results.json").is_file()


def test_overlapping_preloads_restore_the_interval_when_the_last_ends(tmp_path):
    # The slow import waits on a gate the test opens only after the quick one has ended and the
    # interval was read: with a timed sleep, a loaded machine could let it end first.
    (tmp_path / "quick_module.py").write_text("")
    (tmp_path / "slow_module.py").write_text("import builtins\nbuiltins.gate.wait(30)\n")
    code = (
        f"import builtins, sys, threading; sys.path.insert(0, {str(tmp_path)!r})\n"
        "from ssdlab import _preload\n"
        "builtins.gate = threading.Event()\n"
        "sys.setswitchinterval(0.004)\n"
        "quick = _preload.start('quick_module')\n"
        "slow = _preload.start('slow_module')\n"
        "quick.join()\n"
        "during = sys.getswitchinterval()\n"
        "builtins.gate.set()\n"
        "slow.join()\n"
        "print(round(during, 6), round(sys.getswitchinterval(), 6))\n"
    )
    assert python(code).split() == [str(_preload.SWITCH_INTERVAL_SECONDS), "0.004"]


def test_a_console_that_cannot_be_made_says_why():
    # An AttributeError while making the Console must not turn into a recursion through
    # __getattr__.
    from ssdlab._console import LazyConsole

    with pytest.raises(TypeError, match=r"cannot make the console: .*styles"):
        LazyConsole(theme=1).print("x")


def test_the_command_named_first_is_the_only_one_built():
    # Typer builds every command's parameters before running one; `main` hands it only the
    # command named first, and every command for anything else (help, a mistyped name).
    import ssdlab.cli as cli

    every = [c.name or c.callback.__name__ for c in cli.app.registered_commands]
    assert len(every) >= 9
    assert [c.callback.__name__ for c in cli._commands_named(["run"])] == ["run"]
    assert [c.name for c in cli._commands_named(["import-mqsim"])] == ["import-mqsim"]
    assert cli._commands_named(["rnu"]) == cli.app.registered_commands
    assert cli._commands_named(["--help"]) == cli.app.registered_commands
    assert cli._commands_named([]) == cli.app.registered_commands


def test_main_runs_the_command_named_and_keeps_every_command_registered():
    code = (
        "import sys\n"
        "import ssdlab.cli as cli\n"
        "before = len(cli.app.registered_commands)\n"
        "for argv in (['ssdlab', 'examples'], ['ssdlab', 'rnu'], ['ssdlab', '--help']):\n"
        "    sys.argv = argv\n"
        "    try:\n"
        "        cli.main()\n"
        "    except SystemExit as e:\n"
        "        print('exit', e.code)\n"
        "print('kept', len(cli.app.registered_commands) == before)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = done.stdout.splitlines()
    assert "amber-intel750" in done.stdout  # the examples listed
    assert "No such command 'rnu'" in done.stderr and "Did you mean 'run'?" in done.stderr
    assert "import-mqsim" in done.stdout and "serve" in done.stdout  # --help lists them all
    assert [line for line in lines if line.startswith(("exit", "kept"))] == [
        "exit 0",
        "exit 2",
        "exit 0",
        "kept True",
    ]
