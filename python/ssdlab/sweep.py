"""Design-space sweeps: one config, some of its values varied, every point run once.

A sweep file (TOML) names a base config and the axes to vary::

    base = "mqsim-default.toml"          # relative to the sweep file; and/or an inline [config]
    set = ["flows.1.requests=0"]         # overrides applied to the base (as `ssdlab run --set`)
    mode = "product"                     # or "zip": the axes advance together
    seeds = 3                            # each point with seeds 1, 2, 3 (or a list: [7, 11])

    [axes]
    "flows.0.queue_depth" = { start = 1, stop = 256, factor = 2 }   # 1, 2, 4, ..., 256
    "flash.timing.read" = ["50us", "75us"]                          # a list of values
    "ftl.over_provisioning" = { start = 0.07, stop = 0.28, step = 0.07 }

Every point is an ordinary run: its effective config is the base with one ``--set`` override per
axis (and ``seed``). Points run on any :class:`concurrent.futures.Executor` (a local process
pool, or a Dask cluster through ``Client.get_executor()``); each writes
``OUT/runs/<run>/results.json`` (and ``requests.parquet`` with ``run.request_records``) and the
sweep collects one row per run in ``OUT/sweep.parquet``.

A point whose results.json exists is not rerun, so an interrupted sweep resumes where it
stopped. Each run folder keeps the hash of the point's effective config (``point.json``): an
out folder written by a different sweep is refused instead of mixed into the table.

Every file is written atomically (``ssdlab._outputs``), the out folder is checked before any
point runs, and the sweep's own tables (sweep.parquet, and report.html) are removed when a sweep
starts and written again at its end, so a killed sweep leaves no table that looks complete. A
point whose reads found wrong data (``data.emulate``) fails with the
:class:`~ssdlab.DataIntegrityError` message; its results are kept as ``failed-results.json``.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import hashlib
import itertools
import json
import math
import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ssdlab import _core, _extras, _outputs, _workers
from ssdlab._blame import suggest
from ssdlab._core import ConfigError
from ssdlab.config import _value as toml_value
from ssdlab.config import apply_overrides, load_config

SWEEP_SCHEMA = "ssdlab.sweep/1"

# The metrics of sweep.parquet, in column order: name -> path in results.json.
METRICS: dict[str, tuple[str, ...]] = {
    "iops": ("device", "iops"),
    "bandwidth_mib_s": ("device", "bandwidth_mib_s"),
    "read_iops": ("device", "reads", "iops"),
    "write_iops": ("device", "writes", "iops"),
    "read_mean_us": ("device", "reads", "latency_us", "mean"),
    "read_p99_us": ("device", "reads", "latency_us", "p99"),
    "write_mean_us": ("device", "writes", "latency_us", "mean"),
    "write_p99_us": ("device", "writes", "latency_us", "p99"),
    "write_amplification": ("device", "gc", "write_amplification"),
    "simulated_seconds": ("simulated_seconds",),
    "wall_seconds": ("wall_seconds",),
}

_TOP_KEYS = ("base", "config", "set", "mode", "seeds", "axes")
# A range's keys: arithmetic (step) or geometric (factor), stop included when reached.
_RANGE_KEYS = ("start", "stop", "step", "factor")
# Most points a range may expand to: a typo such as step = 0.0001 fails fast instead.
MAX_RANGE_POINTS = 100_000


class SweepError(ConfigError):
    """A sweep file was rejected, or its out folder belongs to another sweep."""


@dataclass(frozen=True)
class Point:
    """One run of the sweep: its id, the axis values, the seed and the effective config."""

    run: str
    values: dict[str, Any]
    seed: int
    config: dict[str, Any]

    @property
    def config_hash(self) -> str:
        text = json.dumps(self.config, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Sweep:
    """A parsed sweep file: the points to run, in order, and where relative paths resolve."""

    axes: list[str]
    mode: str
    points: list[Point]
    base_dir: Path
    source: str = "sweep"


@dataclass
class SweepResult:
    """What :func:`run_sweep` did: one row per run (the rows of sweep.parquet)."""

    out_dir: Path
    rows: list[dict[str, Any]]
    reused: int = 0
    ran: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def table_path(self) -> Path:
        return self.out_dir / "sweep.parquet"

    @property
    def ok(self) -> bool:
        return not self.failed


# ---------------------------------------------------------------------------------------------
# Reading a sweep file


def load_sweep(
    source: str | os.PathLike[str] | Mapping[str, Any], base_dir: Path | None = None
) -> Sweep:
    """Parse a sweep file (path) or its contents (dict) into a :class:`Sweep`.

    Every problem raises :class:`SweepError` naming the field (``axes."flows.0.queue_depth"``),
    before anything runs: unknown keys, config paths the schema does not have, empty lists,
    ranges that do not reach their stop, zip axes of different lengths.
    """
    if isinstance(source, Mapping):
        spec = dict(source)
        label = "sweep"
        folder = Path(base_dir) if base_dir is not None else Path.cwd()
    else:
        path = Path(source)
        spec = load_config(path)
        label = str(path)
        folder = Path(base_dir) if base_dir is not None else path.parent

    def fail(where: str, reason: str) -> SweepError:
        return SweepError(f"{label}: {where}: {reason}")

    for key in spec:
        if key not in _TOP_KEYS:
            raise fail(key, f"unknown key{suggest(key, _TOP_KEYS)}; expected one of {_TOP_KEYS}")

    base = _base_config(spec, folder, fail)
    overrides = spec.get("set", [])
    if not isinstance(overrides, list) or not all(isinstance(o, str) for o in overrides):
        raise fail("set", 'expected a list of "key.path=value" strings')
    try:
        base = apply_overrides(base, overrides)
    except ConfigError as e:
        raise fail("set", str(e)) from None

    mode = spec.get("mode", "product")
    if mode not in ("product", "zip"):
        raise fail("mode", f'expected "product" or "zip", got {mode!r}')
    seeds = _seeds(spec.get("seeds"), base, fail)

    axes_spec = spec.get("axes", {})
    if not isinstance(axes_spec, Mapping):
        raise fail("axes", 'expected a table: [axes] "flows.0.queue_depth" = [1, 2, 4]')
    axes: dict[str, list[Any]] = {}
    for name, axis in axes_spec.items():
        where = f"axes.{json.dumps(name)}"
        if name == "seed":
            raise fail(where, "repeat runs with `seeds = N` (or a list) instead of a seed axis")
        check_config_path(name, lambda reason, w=where: fail(w, reason))
        axes[name] = _axis_values(axis, lambda reason, w=where: fail(w, reason))
    if not axes and "seeds" not in spec:
        raise fail("axes", "nothing to sweep: add at least one axis or `seeds`")

    if mode == "zip" and axes:
        lengths = {name: len(v) for name, v in axes.items()}
        if len(set(lengths.values())) > 1:
            sizes = ", ".join(f"{n} has {k}" for n, k in lengths.items())
            raise fail("mode", f'"zip" needs axes of equal length: {sizes}')
        combos = [dict(zip(axes, vs, strict=True)) for vs in zip(*axes.values(), strict=True)]
    else:
        combos = [dict(zip(axes, vs, strict=True)) for vs in itertools.product(*axes.values())]

    total = len(combos) * len(seeds)
    width = max(4, len(str(total - 1)))
    points = []
    for values in combos:
        for seed in seeds:
            run = f"{len(points):0{width}d}"
            items = [f"{name}={toml_value(v)}" for name, v in values.items()]
            if seed is not None:
                items.append(f"seed={seed}")
            try:
                config = apply_overrides(base, items)
            except ConfigError as e:
                raise fail("axes", f"run {run}: {e}") from None
            effective_seed = config.get("seed", 1) if seed is None else seed
            points.append(Point(run, values, effective_seed, config))
    return Sweep(axes=list(axes), mode=mode, points=points, base_dir=folder, source=label)


def _base_config(spec: Mapping[str, Any], folder: Path, fail) -> dict[str, Any]:
    base = spec.get("base")
    inline = spec.get("config")
    if base is None and inline is None:
        raise fail("base", 'no base config: give base = "device.toml" and/or an inline [config]')
    document: dict[str, Any] = {}
    if base is not None:
        if not isinstance(base, str):
            raise fail("base", f"expected a path to a config file, got {base!r}")
        try:
            document = load_config(folder / base)
        except FileNotFoundError:
            raise fail("base", f"config file not found: {folder / base}") from None
    if inline is not None:
        if not isinstance(inline, Mapping):
            raise fail("config", "expected a table (the config inline)")
        document = _merge(document, inline)
    return document


def _merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """Tables merge key by key; any other value (lists included) replaces the base's."""
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _seeds(value: Any, base: Mapping[str, Any], fail) -> list[int | None]:
    if value is None:
        return [None]  # one run with the config's own seed
    if isinstance(value, bool):
        raise fail("seeds", f"expected a count or a list of seeds, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise fail("seeds", f"expected a count of at least 1, got {value}")
        return list(range(1, value + 1))
    if isinstance(value, list):
        if not value:
            raise fail("seeds", "empty list: give at least one seed")
        if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value):
            raise fail("seeds", f"expected non-negative integers, got {value!r}")
        if len(set(value)) != len(value):
            raise fail("seeds", f"a seed is listed twice: {value!r}")
        return list(value)
    raise fail("seeds", f"expected a count or a list of seeds, got {value!r}")


def _axis_values(axis: Any, fail: Callable[[str], SweepError]) -> list[Any]:
    if isinstance(axis, list):
        if not axis:
            raise fail("empty list: give at least one value")
        return list(axis)
    if not isinstance(axis, Mapping):
        raise fail(
            f"expected a list of values or a range table {{ start, stop, step | factor }}, "
            f"got {axis!r}"
        )
    for key in axis:
        if key not in _RANGE_KEYS:
            raise fail(f"unknown range key `{key}`{suggest(key, _RANGE_KEYS)}")
    missing = [k for k in ("start", "stop") if k not in axis]
    if missing:
        raise fail(f"a range needs `start` and `stop` (missing `{missing[0]}`)")
    if ("step" in axis) == ("factor" in axis):
        raise fail("a range needs exactly one of `step` (arithmetic) or `factor` (geometric)")
    start, stop = axis["start"], axis["stop"]
    for key in ("start", "stop", "step", "factor"):
        v = axis.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
            raise fail(
                f"`{key}` must be a number, got {v!r} (for values with units, list them: "
                f'["50us", "75us"])'
            )
    integral = all(isinstance(axis[k], int) for k in axis)
    values: list[Any] = []
    if "step" in axis:
        step = axis["step"]
        if step == 0 or (stop - start) * step < 0:
            raise fail(f"step {step} never goes from {start} to {stop}")
        count = math.floor((stop - start) / step + 1e-9) + 1
        if count > MAX_RANGE_POINTS:
            raise fail(f"expands to {count:,} points (more than {MAX_RANGE_POINTS:,})")
        values = [start + i * step for i in range(count)]
    else:
        factor = axis["factor"]
        if start <= 0 or stop <= 0 or factor <= 0 or factor == 1:
            raise fail("a geometric range needs start > 0, stop > 0 and factor > 0, not 1")
        if (stop - start) * (factor - 1) < 0:
            raise fail(f"factor {factor} never goes from {start} to {stop}")
        count = math.floor(math.log(stop / start) / math.log(factor) + 1e-9) + 1
        if count > MAX_RANGE_POINTS:
            raise fail(f"expands to {count:,} points (more than {MAX_RANGE_POINTS:,})")
        values = [start * factor**i for i in range(count)]
    if not integral:
        values = [round(float(v), 12) for v in values]
    return values


# ---------------------------------------------------------------------------------------------
# Config paths, checked against the schema the core reads


@cache
def config_schema() -> dict[str, Any]:
    """The core's JSON Schema of the configuration (generated from its types)."""
    return json.loads(_core.config_schema_json())


def check_config_path(path: str, fail: Callable[[str], Exception]) -> None:
    """Raise `fail(reason)` unless `path` (``flows.0.queue_depth``) names a config value."""
    schema = config_schema()
    parts = path.split(".")
    if not path or any(not p for p in parts):
        raise fail("expected a dotted config path such as flash.timing.read")
    nodes = [schema]
    for depth, part in enumerate(parts):
        here = ".".join(parts[:depth]) or "the config"
        following: list[dict[str, Any]] = []
        keys: set[str] = set()
        leaf = True
        for node in _branches(nodes, schema):
            props = node.get("properties")
            if isinstance(props, dict):
                leaf = False
                keys.update(props)
                if part in props:
                    following.append(props[part])
            if node.get("type") == "array" or "items" in node:
                leaf = False
                if part.isascii() and part.isdigit() and "items" in node:
                    following.append(node["items"])
        if not following:
            if leaf:
                raise fail(f"unknown config path: {here} is a value, not a table or list")
            if keys:
                hint = suggest(part, sorted(keys))
                raise fail(f"unknown config key `{part}` in {here}{hint}")
            raise fail(f"{here} is a list; expected a numeric index, got `{part}`")
        nodes = following


def _branches(nodes: list[dict[str, Any]], root: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Each schema node with its $refs followed and its anyOf / oneOf / allOf alternatives."""
    stack = list(nodes)
    seen = 0
    while stack and seen < 1000:
        seen += 1
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            stack.append(root.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {}))
        for key in ("anyOf", "oneOf", "allOf"):
            stack.extend(node.get(key, []))
        yield node


# ---------------------------------------------------------------------------------------------
# Running


def run_point(
    run: str, config: dict[str, Any], base_dir: str, run_dir: str | None = None
) -> dict[str, Any]:
    """Run one point (in a worker process): its results.json text, or the error that stopped it.

    The results travel back to the caller, which writes them: workers need no shared folder
    (only trace files must be readable from the workers, at `base_dir`). With
    ``run.request_records`` the worker also saves the records as requests.parquet: straight
    into `run_dir` when it sees that folder (a local pool, or a cluster on a shared file
    system), else the file's bytes travel back with the results.
    """
    import tempfile

    from ssdlab.api import DataIntegrityError, simulate

    with tempfile.TemporaryDirectory(prefix=f"ssdlab-sweep-{run}-") as scratch:
        try:
            results = simulate(config, base_dir=base_dir, records_dir=scratch)
            reply: dict[str, Any] = {"run": run}
            if results.request_records is not None:
                results.save(scratch)  # requests.bin -> requests.parquet, beside results.json
                records = Path(scratch) / "requests.parquet"
                # point.json: the caller's run folder, not a same-named folder on another host.
                if run_dir is not None and (Path(run_dir) / "point.json").is_file():
                    with _outputs.atomic_path(Path(run_dir) / "requests.parquet") as tmp:
                        shutil.copyfile(records, tmp)
                else:
                    reply["requests_parquet"] = records.read_bytes()
            reply["results_json"] = results.to_json()
        except DataIntegrityError as e:  # a failed point, whose results are still worth keeping
            return {
                "run": run,
                "error": f"{type(e).__name__}: {e}",
                "failed_results_json": e.results.to_json(),
            }
        except Exception as e:
            return {"run": run, "error": f"{type(e).__name__}: {e}"}
    return reply


def run_sweep(
    sweep: Sweep | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    executor: cf.Executor | None = None,
    jobs: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> SweepResult:
    """Run every point not yet finished in `out_dir` and write sweep.parquet and sweep.json.

    `executor` is any :class:`concurrent.futures.Executor` (default: a process pool of `jobs`
    workers, all cores by default); see :func:`dask_executor` for a Dask cluster. `progress`
    hears (finished, total) after every point. A failed point is recorded (status "failed" and
    its error) and the sweep goes on; check ``result.ok``. An out folder that cannot be written
    raises :class:`~ssdlab._outputs.OutputError` (an OSError) before any point runs.
    """
    if not isinstance(sweep, Sweep):
        sweep = load_sweep(sweep)
    out = Path(out_dir)
    runs_dir = out / "runs"
    _check_out_dir(sweep, out)
    _outputs.check_folder(out)
    runs_dir.mkdir(parents=True, exist_ok=True)
    _clear_sweep_outputs(out, runs_dir)

    done: dict[str, dict[str, Any]] = {}
    todo: list[Point] = []
    for point in sweep.points:
        folder = runs_dir / point.run
        document = _finished_results(folder / "results.json")
        if document is not None:
            done[point.run] = document
        else:
            folder.mkdir(exist_ok=True)
            _write_json(folder / "point.json", _point_record(point))
            todo.append(point)
    reused = len(done)
    errors: dict[str, str] = {}
    total = len(sweep.points)
    if progress is not None:
        progress(len(done), total)

    if todo:
        own = executor is None
        pool = executor if executor is not None else _local_pool(jobs, len(todo))
        base_dir = str(sweep.base_dir.resolve())
        try:
            futures = {
                pool.submit(
                    run_point, p.run, p.config, base_dir, str((runs_dir / p.run).resolve())
                ): p.run
                for p in todo
            }
            try:
                for future in cf.as_completed(futures):
                    run = futures[future]
                    try:
                        reply = future.result()
                    except Exception as e:  # the worker died or could not take the task
                        reply = {"run": run, "error": f"worker failed: {type(e).__name__}: {e}"}
                    folder = runs_dir / run
                    if "error" in reply:
                        errors[run] = reply["error"]
                        _outputs.write_text(folder / "error.txt", reply["error"] + "\n")
                        if "failed_results_json" in reply:
                            _outputs.write_text(
                                folder / FAILED_RESULTS, reply["failed_results_json"] + "\n"
                            )
                        else:  # an earlier attempt's results would not match this error
                            with contextlib.suppress(FileNotFoundError):
                                (folder / FAILED_RESULTS).unlink()
                    else:
                        if "requests_parquet" in reply:  # the worker could not see the folder
                            _outputs.write_bytes(
                                folder / "requests.parquet", reply["requests_parquet"]
                            )
                        # results.json last: its presence marks the point finished.
                        _outputs.write_text(folder / "results.json", reply["results_json"] + "\n")
                        for stale in ("error.txt", FAILED_RESULTS):
                            with contextlib.suppress(FileNotFoundError):
                                (folder / stale).unlink()
                        done[run] = json.loads(reply["results_json"])
                    if progress is not None:
                        progress(len(done) + len(errors), total)
            except BaseException:
                for f in futures:
                    f.cancel()
                if own:  # Ctrl-C, SIGTERM, an error here: the workers stop now, not later
                    _workers.kill_workers(pool)
                raise
        finally:
            if own:
                pool.shutdown(wait=True, cancel_futures=True)

    rows = [_row(p, done.get(p.run), errors.get(p.run)) for p in sweep.points]
    write_table(rows, sweep.axes, out / "sweep.parquet")
    _write_json(
        out / "sweep.json",
        {"axes": sweep.axes, "mode": sweep.mode, "metrics": list(METRICS)},
    )
    failed = [r for r in rows if r["status"] == "failed"]
    return SweepResult(out, rows, reused=reused, ran=len(todo), failed=failed)


def dask_executor(address: str, jobs: int | None = None) -> tuple[cf.Executor, Callable[[], None]]:
    """A :class:`concurrent.futures.Executor` on a Dask cluster, and the call that closes it.

    `address` is a scheduler (``tcp://host:8786``) or ``local`` for a LocalCluster of `jobs`
    single-threaded worker processes on this machine.
    """
    distributed = _extras.require("distributed", "ssdlab sweep --dask")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster  # noqa: N806

    if address == "local":
        cluster = LocalCluster(
            n_workers=jobs or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        client = Client(cluster)

        def close() -> None:
            client.close()
            cluster.close()
    else:
        client = Client(address, timeout="30s")
        close = client.close
    return client.get_executor(pure=False), close


def _local_pool(jobs: int | None, tasks: int) -> cf.Executor:
    import multiprocessing

    workers = max(1, min(jobs or os.cpu_count() or 1, tasks))
    # forkserver: workers start from a clean process, not a copy of one with threads running.
    # Each worker ends itself when this process dies, even by SIGKILL (ssdlab._workers).
    return cf.ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("forkserver"),
        initializer=_workers.bind_to_sweep,
        initargs=(_workers.process_identity(os.getpid()),),
    )


# A point whose reads found wrong data keeps its results here (not results.json, which would
# mark it finished).
FAILED_RESULTS = "failed-results.json"
# The sweep's own outputs, rebuilt from runs/ at the end of every sweep.
_SWEEP_TABLES = ("sweep.parquet", "report.html")


def _clear_sweep_outputs(out: Path, runs_dir: Path) -> None:
    """Before points run: no table or report of an earlier sweep may pass for this one's if it
    is killed, and temporary files of a killed sweep go."""
    for name in _SWEEP_TABLES:
        with contextlib.suppress(FileNotFoundError):
            (out / name).unlink()
    for chart in out.glob("sweep_*.png"):
        with contextlib.suppress(FileNotFoundError):
            chart.unlink()
    _outputs.remove_stale_temporaries(out)
    for folder in runs_dir.iterdir():
        if folder.is_dir():
            _outputs.remove_stale_temporaries(folder)


def _check_out_dir(sweep: Sweep, out: Path) -> None:
    """Refuse an out folder that holds runs of another sweep (resuming must not mix sweeps)."""
    runs_dir = out / "runs"
    if not runs_dir.is_dir():
        return
    expected = {p.run: p for p in sweep.points}
    for folder in sorted(runs_dir.iterdir()):
        if not folder.is_dir():
            continue
        point = expected.get(folder.name)
        record_path = folder / "point.json"
        if point is None:
            raise SweepError(
                f"{out}: holds run {folder.name}, which this sweep ({len(expected)} runs) does "
                f"not have: it was written by another sweep. Use another --out, or delete {out}."
            )
        try:
            record = json.loads(record_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # never started: it will simply run
        if record.get("config_sha256") != point.config_hash:
            raise SweepError(
                f"{out}: run {point.run} was made from a different config (the sweep file or its "
                f"base config changed since). Use another --out, or delete {out} to start over."
            )


def _finished_results(path: Path) -> dict[str, Any] | None:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or "device" not in document:
        return None
    if not str(document.get("schema", "")).startswith("ssdlab.results/"):
        return None
    return document


def _point_record(point: Point) -> dict[str, Any]:
    return {
        "schema": SWEEP_SCHEMA,
        "run": point.run,
        "values": point.values,
        "seed": point.seed,
        "config_sha256": point.config_hash,
        "config": point.config,
    }


def _row(point: Point, results: Mapping[str, Any] | None, error: str | None) -> dict[str, Any]:
    row: dict[str, Any] = {"run": point.run, "run_dir": f"runs/{point.run}"}
    row.update(point.values)
    row["seed"] = point.seed
    row["status"] = "ok" if results is not None else "failed"
    row["error"] = None if results is not None else (error or "no results")
    for name, path in METRICS.items():
        row[name] = _lookup(results, path) if results is not None else None
    return row


def _lookup(document: Any, path: tuple[str, ...]) -> float | None:
    for key in path:
        if not isinstance(document, Mapping) or key not in document:
            return None
        document = document[key]
    return float(document) if isinstance(document, int | float) else None


def write_table(rows: list[dict[str, Any]], axes: Sequence[str], path: Path) -> None:
    """sweep.parquet: one row per run; axis columns keep their type (mixed types as text)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fields = [pa.field("run", pa.string()), pa.field("run_dir", pa.string())]
    columns: dict[str, list[Any]] = {
        "run": [r["run"] for r in rows],
        "run_dir": [r["run_dir"] for r in rows],
    }
    for axis in axes:
        values = [r[axis] for r in rows]
        kind = _axis_type(values)
        if kind == pa.string():
            values = [v if isinstance(v, str) else json.dumps(v) for v in values]
        fields.append(pa.field(axis, kind))
        columns[axis] = values
    fields += [
        pa.field("seed", pa.int64()),
        pa.field("status", pa.string()),
        pa.field("error", pa.string()),
    ]
    for name in ("seed", "status", "error"):
        columns[name] = [r[name] for r in rows]
    for name in METRICS:
        fields.append(pa.field(name, pa.float64()))
        columns[name] = [r[name] for r in rows]
    table = pa.table(columns, schema=pa.schema(fields))
    with _outputs.atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def _axis_type(values: list[Any]):
    import pyarrow as pa

    kinds = {type(v) for v in values}
    if kinds == {bool}:
        return pa.bool_()
    if kinds == {int}:
        return pa.int64()
    if kinds <= {int, float} and kinds:
        return pa.float64()
    return pa.string()


def _write_json(path: Path, document: Mapping[str, Any]) -> None:
    _outputs.write_text(path, json.dumps(document, indent=2, default=str) + "\n")
