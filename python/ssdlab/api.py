"""Running a simulation from Python."""

from __future__ import annotations

import copy
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssdlab import _core
from ssdlab._blame import explain
from ssdlab._core import ConfigError
from ssdlab._progress import ConsoleProgress
from ssdlab.config import apply_overrides, load_config
from ssdlab.mqsim import Scenario

# The results models (pydantic) are imported where a run ends, not here: `ssdlab run` imports
# them on a second thread while the simulation runs (see `ssdlab._preload`).
if TYPE_CHECKING:
    from ssdlab.results import Fairness, FlowResults, Results

# Events per step: small enough (tens of milliseconds) that Ctrl-C and progress reports stay
# responsive, large enough that the Python round trip costs nothing measurable.
STEP_EVENTS = 200_000


class DataIntegrityError(RuntimeError):
    """A run with ``data.emulate`` read back data that was not what the host last wrote.

    As fio's verify fails a job, a data mismatch fails the run: the numbers of a device that
    loses data are not worth having. ``.results`` holds the whole run anyway (its
    ``data.first_mismatch`` says where, what was expected and what was read), so nothing is
    lost; ``ssdlab run`` still writes results.json and then exits with status 3.
    """

    def __init__(self, message: str, results: Results) -> None:
        super().__init__(message)
        self.results = results


def data_integrity_message(results: Results) -> str | None:
    """The error of a run whose reads found data mismatches, or None when there were none (or
    the run did not emulate data)."""
    data = results.data
    if data is None or data.mismatched_sectors == 0:
        return None
    message = (
        f"data integrity: {data.mismatched_sectors:,} read sector(s) did not hold what the "
        f"host last wrote"
    )
    m = data.first_mismatch
    if m is not None:
        where = f"{m.source}, ppa {m.ppa}" if m.ppa is not None else m.source
        message += (
            f"; first: LBA {m.lba} read by flow {m.flow} at {m.at_seconds:.6f} s from {where}: "
            f"expected {m.expected}, read {m.found}"
        )
    return message


def simulate(
    config: str | os.PathLike[str] | Mapping[str, Any] | Scenario,
    *,
    overrides: Iterable[str] = (),
    base_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[float], object] | bool | None = None,
    alone: bool = False,
    records_dir: str | os.PathLike[str] | None = None,
) -> Results:
    """The one call a script or notebook needs: a config in, typed results out.

    `config` is a TOML file path (relative trace paths then resolve from its folder, so a config
    and its traces move together), the config as a dict (resolved from the current directory
    unless `base_dir` is given), or a :class:`~ssdlab.mqsim.Scenario` from
    :func:`~ssdlab.import_mqsim` (resolved from the workload file's folder; its warnings are
    added to the results'). `overrides` are `key.path=value` strings, as with
    ``ssdlab run --set``, so a sweep needs no config copies. The model runs in steps with the GIL
    released: other Python threads keep running, Ctrl-C stops a long run within milliseconds,
    and `progress` (if given) hears the fraction done after every step. ``progress=True``
    draws a bar (in a terminal or a notebook) through the preconditioning and the run; a
    callable with a ``phase(name)`` method also hears the preconditioning (its fractions after
    ``phase("preconditioning")``, then ``phase("simulating")``).

    With `alone=True` each flow also runs alone on the same device (same config and seed, only
    that flow) and ``results.fairness`` holds every flow's slowdown, the fairness index and the
    weighted speedup. A single flow is its own alone run: slowdown 1.

    With ``data.emulate`` a read that does not return what the host last wrote fails the run:
    :class:`DataIntegrityError` (a RuntimeError) is raised once the run is over, and its
    ``.results`` hold everything measured, ``data.first_mismatch`` included.

    With ``run.request_records`` set, the core writes the per-request records into
    `records_dir` (``requests.bin``; default: a temporary folder that lives as long as the
    results); ``results.requests()`` reads them and ``results.save(folder)`` keeps them as
    requests.parquet.
    """
    if progress is True:
        bar = ConsoleProgress(delay=0.5)
        try:
            return simulate(
                config,
                overrides=overrides,
                base_dir=base_dir,
                progress=bar,
                alone=alone,
                records_dir=records_dir,
            )
        finally:
            bar.close()
    if progress is False:
        progress = None
    document, folder, source, extra_warnings = load_document(config, overrides, base_dir)

    records = _records_target(document, records_dir)
    flows = document.get("flows")
    alone_runs = len(flows) if alone and isinstance(flows, list) and len(flows) > 1 else 0
    # Progress runs over the shared run and the alone runs together.
    runs = alone_runs + 1

    def part(k: int) -> Callable[[float], object] | None:
        if progress is None:
            return None
        return lambda fraction: progress((k + fraction) / runs)

    phases = getattr(progress, "phase", None)
    results = _run(document, folder, source, part(0), records, overrides, phases)
    if alone:
        _add_alone_runs(results, document, folder, source, part)
    results.warnings.extend(extra_warnings)
    if isinstance(config, str | os.PathLike):
        results.config_file = os.fspath(config)
    mismatch = data_integrity_message(results)
    if mismatch is not None:
        raise DataIntegrityError(f"{source}: {mismatch}" if source else mismatch, results)
    return results


def load_document(
    config: str | os.PathLike[str] | Mapping[str, Any] | Scenario,
    overrides: Iterable[str] = (),
    base_dir: str | os.PathLike[str] | None = None,
) -> tuple[dict[str, Any], Path, str | None, list[str]]:
    """The config document with `overrides` applied, the folder its relative paths resolve
    from, a name for its errors (None for a dict) and the warnings it comes with (an MQSim
    scenario's): what :func:`simulate` and :class:`ssdlab.Device` both start from."""
    source: str | None = None
    extra_warnings: list[str] = []
    if isinstance(config, Scenario):
        document = copy.deepcopy(config.config)
        default_dir = config.base_dir
        source = f"scenario {config.index}"
        extra_warnings = list(config.warnings)
    elif isinstance(config, Mapping):
        document = copy.deepcopy(dict(config))
        default_dir = Path.cwd()
    elif isinstance(config, str | os.PathLike):
        document = load_config(Path(config))
        default_dir = Path(config).parent
        source = str(config)
    else:
        raise TypeError(f"config must be a path, a dict or a Scenario, not {type(config).__name__}")
    document = apply_overrides(document, overrides)
    folder = Path(base_dir) if base_dir is not None else default_dir
    return document, folder, source, extra_warnings


def _records_target(
    document: Mapping[str, Any], records_dir: str | os.PathLike[str] | None
) -> tuple[Path, Any] | None:
    """Where the core writes per-request records (and the temporary folder holding it), or None
    when the config asks for none."""
    run = document.get("run")
    setting = run.get("request_records", "none") if isinstance(run, Mapping) else "none"
    if setting == "none":
        return None
    if records_dir is not None:
        Path(records_dir).mkdir(parents=True, exist_ok=True)
        return Path(records_dir) / "requests.bin", None
    scratch = tempfile.TemporaryDirectory(prefix="ssdlab-records-")
    return Path(scratch.name) / "requests.bin", scratch


def _run(
    document: Mapping[str, Any],
    folder: Path,
    source: str | None,
    progress: Callable[[float], object] | None,
    records: tuple[Path, Any] | None = None,
    overrides: Iterable[str] = (),
    phases: Callable[[str], object] | None = None,
) -> Results:
    try:
        text = json.dumps(document, default=str)
    except ValueError as e:  # e.g. a circular reference in a hand-built dict
        raise ConfigError(f"config: cannot be encoded as JSON: {e}") from None
    setup = None
    if phases is not None and progress is not None:
        phases("preconditioning")
        setup = progress
    try:
        sim = _core.Simulation(text, str(folder), str(records[0]) if records else None, setup)
    except ConfigError as e:
        raise ConfigError(explain(str(e), source, overrides)) from None
    if phases is not None:
        phases("simulating")

    while not sim.step(STEP_EVENTS):
        if progress is not None:
            progress(sim.progress())
    if progress is not None:
        progress(1.0)
    from ssdlab.results import Results

    results = Results.from_json(sim.results_json())
    if records is not None:
        results._keep_records(records[0].parent, records[1])
    return results


def _add_alone_runs(
    shared: Results,
    document: Mapping[str, Any],
    folder: Path,
    source: str | None,
    part: Callable[[int], Callable[[float], object] | None],
) -> None:
    """Every flow of the `shared` run alone on the same device, and the interference metrics
    into `shared`; `part(k)` reports the progress of run k (the shared run is 0). Only the shared
    run writes per-request records."""
    count = len(shared.flows)
    names = [f.name for f in shared.flows]
    shared_rt = {f.name: mean_response_time_us(f) for f in shared.flows}
    if count <= 1:
        alone_rt = dict(shared_rt)  # one flow alone is the shared run itself
    else:
        alone_rt = {}
        for i, name in enumerate(names):
            solo = alone_document(document, i, name)
            solo.get("run", {}).pop("request_records", None)
            # The same requests as in the shared run: the flow keeps its random stream.
            solo["flows"][0].setdefault("seed", shared.flows[i].seed)
            label = f"{source}, {name} alone" if source else f"{name} alone"
            solo_results = _run(solo, folder, label, part(i + 1))
            mismatch = data_integrity_message(solo_results)
            if mismatch is not None:  # the alone run lost data: as bad as the shared run
                raise DataIntegrityError(f"{label}: {mismatch}", shared)
            alone_rt[name] = mean_response_time_us(solo_results.flows[0])

    shared.fairness, notes = fairness_metrics(names, shared_rt, alone_rt)
    shared.warnings.extend(notes)


def alone_document(document: Mapping[str, Any], index: int, name: str) -> dict[str, Any]:
    """The config with only flow `index`, named `name` (a nameless flow would be renamed flow-0).

    With per-flow address domains (``ftl.address_domains = "per-flow"``) a flow alone would get
    the whole logical space; a synthetic flow keeps its own slice instead (shared domains, the
    slice as its working set), so that it addresses the same data as in the shared run.
    """
    solo = copy.deepcopy(dict(document))
    flows = solo["flows"]
    flow = {**flows[index], "name": name}
    ftl = solo.get("ftl")
    if (
        isinstance(ftl, dict)
        and ftl.get("address_domains") == "per-flow"
        and len(flows) > 1
        and flow.get("kind", "synthetic") == "synthetic"
    ):
        n = len(flows)
        start = flow.get("working_set_start", 0.0)
        flow["working_set_start"] = (index + start) / n
        flow["working_set"] = flow.get("working_set", 1.0) / n
        ftl["address_domains"] = "shared"
    solo["flows"] = [flow]
    return solo


def mean_response_time_us(flow: FlowResults) -> float:
    """A flow's mean response time over all its requests: reads and writes weighted by count."""
    ops = [op for op in (flow.reads, flow.writes) if op.count > 0]
    count = sum(op.count for op in ops)
    if count == 0:
        return 0.0
    return sum(op.count * op.latency_us.mean for op in ops) / count


def fairness_metrics(
    names: list[str], shared_rt: Mapping[str, float], alone_rt: Mapping[str, float]
) -> tuple[Fairness, list[str]]:
    """Slowdown S_i = RT_i(shared) / RT_i(alone), fairness F = min S / max S and weighted
    speedup WS = sum RT_i(alone) / RT_i(shared), with notes about flows left out (no request)."""
    slowdown: dict[str, float] = {}
    notes = []
    for name in names:
        shared, alone = shared_rt[name], alone_rt[name]
        if shared > 0 and alone > 0:
            slowdown[name] = shared / alone
        else:
            notes.append(
                f"fairness: flow {name} completed no request in the shared or alone run; left out"
            )
    values = list(slowdown.values())
    fairness = min(values) / max(values) if values else 1.0
    weighted_speedup = sum(1.0 / s for s in values)
    from ssdlab.results import Fairness

    metrics = Fairness(
        slowdown=slowdown,
        fairness=fairness,
        weighted_speedup=weighted_speedup,
        shared_mean_us=dict(shared_rt),
        alone_mean_us=dict(alone_rt),
    )
    return metrics, notes
