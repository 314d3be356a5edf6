"""Every input in the reliability corpus (tests/reliability/corpus, the inputs that broke ssdlab
under fuzzing) ends in a clean run or a clean error, through the CLI a user would type.

- clean run: exit 0, results.json written, and with data emulation not one mismatched sector;
- clean error: exit 2 (the CLI's status for errors), an `error:` line that names the field,
  file or line it is about, and no panic, abort, traceback or developer's wording
  (fuzz/checks.py UNCLEAR_MARKERS);
- each input also has its expected class: `run` (the data-mismatch reproducers must now run
  clean), `error` (it must be refused), or `either` (refused, or run with a warning kept in
  results.json when the class is silent acceptance).

Each input runs in its own process under a 6 GiB address-space limit and a time limit, as the
fuzzer ran it, so an input that still blows up memory fails its test instead of the machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "reliability" / "corpus"
TRACES = ROOT / "tests" / "reliability" / "traces"
SSDLAB = Path(sys.executable).parent / "ssdlab"
MEMORY_LIMIT = 6 * 2**30
TIME_LIMIT_S = 240

sys.path.insert(0, str(ROOT / "fuzz"))
import checks  # noqa: E402


@dataclass(frozen=True)
class Case:
    name: str
    files: tuple[Path, ...]  # a TOML/JSON config, or an MQSim ssdconfig.xml + workload.xml
    expect: str  # "run", "error" or "either"
    warn_ok: bool = False  # `either`: a run must leave a warning in results.json


def _expectation(path: Path) -> tuple[str, bool]:
    rel = path.relative_to(CORPUS).as_posix()
    if rel.startswith("campaign/") and "-warned" in rel:
        return "run", True  # it ran without a word; it must say what it did
    if "data_mismatch" in rel or rel.startswith(("findings/F11", "campaign/")):
        return "run", False
    if rel.startswith(("findings/F13", "findings/F05")):
        return "either", True
    if rel.startswith(("silent_acceptance/",)):
        # Mostly fuzzer false positives (valid edge values); mut-7-02297 is F02.
        return ("error", False) if "02297" in rel else ("either", False)
    return "error", False


def cases() -> list[Case]:
    found = []
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix in (".toml", ".json") and path.parent.name != "traces":
            expect, warn = _expectation(path)
            found.append(Case(path.relative_to(CORPUS).as_posix(), (path,), expect, warn))
        elif path.name == "ssdconfig.xml":
            expect, warn = _expectation(path)
            pair = (path, path.with_name("workload.xml"))
            found.append(Case(path.parent.relative_to(CORPUS).as_posix(), pair, expect, warn))
    return found


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.setsid()


def run_case(case: Case, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Copies the input (and the MQSim sample trace its workload names) to tmp_path and runs
    `ssdlab run` on it there."""
    work = tmp_path / "in"
    shutil.copytree(case.files[0].parent, work)
    shutil.copytree(TRACES, work / "traces", dirs_exist_ok=True)
    args = [str(SSDLAB), "run", *(str(work / f.name) for f in case.files)]
    args += ["--out", str(tmp_path / "out")]
    return subprocess.run(
        args,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=TIME_LIMIT_S,
        preexec_fn=_limits,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
    )


def describe(proc: subprocess.CompletedProcess[str]) -> str:
    out, err = proc.stdout[-3000:], proc.stderr[-3000:]
    return f"exit {proc.returncode}\n--- stdout\n{out}\n--- stderr\n{err}"


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.name)
def test_corpus_input_ends_in_a_clean_run_or_a_clean_error(case: Case, tmp_path: Path):
    proc = run_case(case, tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}\n{describe(proc)}"
    for marker in checks.UNCLEAR_MARKERS:
        assert marker not in output, f"{marker!r} in the output\n{describe(proc)}"

    if proc.returncode == 0:
        assert case.expect != "error", f"expected a clean error, it ran\n{describe(proc)}"
        results = json.loads((tmp_path / "out" / "results.json").read_text())
        data = results.get("data")
        if data is not None:
            assert data["mismatched_sectors"] == 0, data["first_mismatch"]
        if case.warn_ok:
            assert results["warnings"], "ran without a warning"
        return

    assert case.expect != "run", f"expected a clean run\n{describe(proc)}"
    assert proc.returncode == 2, describe(proc)  # the CLI's exit status for an error
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert errors, f"no `error:` line\n{describe(proc)}"
    names = [f.name for f in case.files] + [case.files[0].parent.name]
    # The input may not even parse: then the error must name the file.
    with contextlib.suppress(Exception):
        names += checks.key_names(_read_config(case.files[0]))
    problem = checks.refusal_problem(" ".join(errors), names)
    assert problem is None, f"{problem}\n{describe(proc)}"


def _read_config(path: Path) -> object:
    import tomllib

    if path.suffix == ".json":
        return json.loads(path.read_text())
    if path.suffix == ".toml":
        return tomllib.loads(path.read_text())
    return {}


def test_corpus_is_complete():
    """Every finding of the issue's table has its reproducer here, and the corpus is not
    accidentally emptied."""
    names = {c.name for c in cases()}
    for finding in ("F01", "F02", "F03", "F04", "F05", "F08", "F09", "F10", "F12", "F13", "F14"):
        assert any(n.startswith(f"findings/{finding}") for n in names), finding
    assert "findings/F06-mqsim-abort" in names
    assert "findings/F07-mqsim-u64-wrap-panic" in names
    assert sum("data_mismatch" in n for n in names) >= 18
    assert len(names) >= 90
