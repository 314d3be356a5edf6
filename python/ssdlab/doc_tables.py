"""Tables of figures in the docs, computed by the code they describe.

A table lives in its page between two markers::

    <!-- generated: analytic-agreement (python -m ssdlab.doc_tables) -->
    | ... |
    <!-- end generated -->

and :data:`TABLES` names the function that computes it. ``tests/test_docs.py`` fails when a
committed table differs from what its function gives now, so a change to the model that moves a
figure also moves the docs (the prose around a table says what the figures mean; reread it when
a table changes).

    python -m ssdlab.doc_tables            # rewrite every table in place
    python -m ssdlab.doc_tables --check    # exit 1 if one is out of date
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

BLOCK = re.compile(
    r"(?P<head><!-- generated: (?P<name>[\w-]+)[^\n]*-->\n)"
    r"(?P<body>.*?)(?P<tail><!-- end generated -->)",
    re.S,
)
KIB = 1024


@dataclass(frozen=True)
class Table:
    """A generated table: the page it is in (from the repository root) and what computes it."""

    page: str
    render: Callable[[Path], str]
    about: str


def analytic_agreement(root: Path) -> str:
    """The closed form of Yoo et al. beside the simulation, one request at a time on the X25-M
    example (as crates/ssdlab-core/tests/analytic_agreement.rs runs it, which asserts the
    bounds): 4 KiB random, then sequential requests of 8 to 512 KiB."""
    import ssdlab
    from ssdlab.config import load_config

    config = root / "examples" / "intel-x25m.toml"
    device = {k: v for k, v in load_config(config).items() if k != "flows"}
    sizes = [4 * KIB << i for i in range(8)]
    model = {r.size_bytes: r for r in ssdlab.analytic(config, request_sizes=sizes).requests}

    def simulated_us(read: bool, size: int) -> float:
        flow = {
            "read_fraction": 1.0 if read else 0.0,
            "request_size": f"{size}B",
            "alignment": f"{size}B",
            "address": "uniform" if size == 4 * KIB else "sequential",
            "working_set": 0.4,
            "queue_depth": 1,
            "requests": 400,
        }
        results = ssdlab.simulate({**device, "flows": [flow]}, base_dir=config.parent)
        ops = results.device.reads if read else results.device.writes
        return ops.latency_us.mean

    lines = [
        "| request | model read us | sim read us | diff | model write us | sim write us | diff |",
        "|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        m = model[size]
        read, write = simulated_us(True, size), simulated_us(False, size)
        kind = f"{size // KIB} KiB" + (" random" if size == 4 * KIB else " seq")
        if size == 4 * KIB:  # one page: IOPS, as the paper gives them
            cells = [
                f"{m.read_us:.1f} ({m.read_iops:.1f} IOPS)",
                f"{read:.1f} ({1e6 / read:.0f})",
                _diff(read, m.read_us),
                f"{m.write_us:.1f} ({m.write_iops:.1f} IOPS)",
                f"{write:.1f} ({1e6 / write:.1f})",
                _diff(write, m.write_us),
            ]
        else:
            cells = [
                f"{m.read_us:.1f}",
                f"{read:.1f}",
                _diff(read, m.read_us),
                f"{m.write_us:.1f}",
                f"{write:.1f}",
                _diff(write, m.write_us),
            ]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _diff(sim: float, model: float) -> str:
    return f"{(sim - model) / model * 100:+.2f} %"


# The command docs/studies.md shows, with each scheduler.
STUDY_CONFIG = "examples/mqsim-table3-480gb.toml"
STUDY_OVERRIDES = ("flows.0.requests=5000", "flows.1.requests=50000")
STUDY_SCHEDULERS = ("out-of-order", "flow-fair", "flin")


def scheduler_slowdowns(root: Path) -> str:
    """The studies page's example (a QD 2 reader beside a QD 32 reader on the MQSim paper's
    Table 3 drive) with each flow alone too, under each fairness-minded scheduler."""
    import ssdlab

    lines = [
        "| `controller.scheduling` | light (QD 2) slowdown | heavy (QD 32) slowdown "
        "| fairness F | weighted speedup |",
        "|---|---|---|---|---|",
    ]
    for scheduling in STUDY_SCHEDULERS:
        results = ssdlab.simulate(
            root / STUDY_CONFIG,
            overrides=[*STUDY_OVERRIDES, f"controller.scheduling={scheduling}"],
            alone=True,
        )
        f = results.fairness
        assert f is not None
        lines.append(
            f"| `{scheduling}` | {f.slowdown['light']:.3f} | {f.slowdown['heavy']:.3f} "
            f"| {f.fairness:.3f} | {f.weighted_speedup:.3f} |"
        )
    return "\n".join(lines) + "\n"


def read_ahead(root: Path) -> str:
    """docs/cache.md's example: examples/read-ahead.toml with read-ahead off and on."""
    import ssdlab

    lines = ["| | mean latency | p99 | bandwidth | cache hits |", "|---|---|---|---|---|"]
    for on in (False, True):
        results = ssdlab.simulate(
            root / "examples" / "read-ahead.toml",
            overrides=[f"cache.read_ahead={'true' if on else 'false'}"],
        )
        reads, flow = results.device.reads, results.flows[0]
        lines.append(
            f"| read-ahead {'on' if on else 'off'} | {reads.latency_us.mean:.1f} us "
            f"| {reads.latency_us.p99:.1f} us | {reads.bandwidth_mib_s:,.1f} MiB/s "
            f"| {flow.cache_hit_rate * 100:.2f} % |"
        )
    return "\n".join(lines) + "\n"


# Studies of validation/ whose runs take a few seconds: their scripts build the configs, these
# run them one after another (the scripts' pool of processes is for their command line).
ZNS_REQUESTS = 60_000  # validation/zns.py's default: 128 KiB writes per log
FDP_REQUESTS = 300_000  # validation/fdp.py's default: 8 KiB writes per tenant
SLC_REQUESTS = 12_000  # validation/slc_cache.py's default: 128 KiB writes


def _validation(root: Path, name: str) -> ModuleType:
    """validation/<name>.py as a module (the scripts import `common` from beside them)."""
    folder = str(root / "validation")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(name)


def _run_each(study: ModuleType, configs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """`study.run_one` on every named config, in order, as the script's pool would call it."""
    return {name: study.run_one(json.dumps(c, sort_keys=True)) for name, c in configs.items()}


def zns_block_interface_tax(root: Path) -> str:
    """docs/zns.md's first table: a hot and a cold log on a conventional and a zoned drive."""
    zns = _validation(root, "zns")
    rows = _run_each(
        zns, {kind: zns.two_logs(kind == "zoned", ZNS_REQUESTS) for kind in ("conv", "zoned")}
    )
    names = {
        "conv": "conventional (12 % spare, filled to 90 %)",
        "zoned": "zoned (7 % spare)",
    }
    lines = [
        "| drive | write amplification | GC pages moved | write MiB/s | write p99 us |",
        "|---|---|---|---|---|",
    ]
    for kind, r in rows.items():
        lines.append(
            f"| {names[kind]} | {r['write_amplification']:.3f} | {r['pages_moved']:,} "
            f"| {r['write_mib_s']:,.0f} | {r['write_p99_us']:,.0f} |"
        )
    return "\n".join(lines) + "\n"


def zns_zone_striping(root: Path) -> str:
    """docs/zns.md's second table: write bandwidth by the planes a zone stripes over."""
    zns = _validation(root, "zns")
    lines = ["| zone planes | 1 open zone MiB/s | 4 open zones MiB/s |", "|---|---|---|"]
    for planes in (1, 2, 4, 8, 16):
        rows = _run_each(zns, {str(n): zns.striping(planes, n, ZNS_REQUESTS) for n in (1, 4)})
        lines.append(
            f"| {planes} | {rows['1']['write_mib_s']:,.0f} | {rows['4']['write_mib_s']:,.0f} |"
        )
    return "\n".join(lines) + "\n"


def fdp_tenants(root: Path) -> str:
    """docs/fdp.md's table: validation/fdp.py's mixes of tenants, on one handle or one each."""
    fdp = _validation(root, "fdp")
    lines = [
        "| mix | mixed WA | separate WA | separate, by handle "
        "| write p99 us (mixed / separate) | write max us |",
        "|---|---:|---:|---|---|---|",
    ]
    for mix in fdp.MIXES:
        m, s = _run_each(
            fdp, {kind: fdp.config(mix, kind, FDP_REQUESTS) for kind in (False, True)}
        ).values()
        handles = ", ".join(f"{n} {wa:.3f}" for n, wa in s["by_handle"].items())
        lines.append(
            f"| {mix} | {m['write_amplification']:.3f} | {s['write_amplification']:.3f} "
            f"| {handles} | {m['write_p99_us']:,.0f} / {s['write_p99_us']:,.0f} "
            f"| {m['write_max_us']:,.0f} / {s['write_max_us']:,.0f} |"
        )
    return "\n".join(lines) + "\n"


def slc_cliff(root: Path) -> str:
    """docs/slc-cache.md's table: validation/slc_cache.py's cliff at each fill, in its layout."""
    slc = _validation(root, "slc_cache")
    configs = {
        f"{mode}/{fill}": slc.config(fill, SLC_REQUESTS, mode)
        for mode in ("dynamic", "static")
        for fill in slc.FILLS
    }
    with contextlib.redirect_stdout(io.StringIO()):  # the script prints its table too
        return slc.table(_run_each(slc, configs)) + "\n"


def qlc_30tb(root: Path) -> str:
    """docs/slc-cache.md's 30 TB-class QLC drive at the two queue depths its commands run."""
    import ssdlab

    lines = [
        "| sequential 128 KiB writes | MiB/s | mean latency | p99 |",
        "|---|---:|---:|---:|",
    ]
    for depth, overrides in (
        (32, []),
        (128, ["flows.0.queue_depth=128", "flows.0.requests=80000"]),
    ):
        r = ssdlab.simulate(root / "examples" / "qlc-30tb-class.toml", overrides=overrides)
        w = r.device.writes
        lines.append(
            f"| QD {depth}, {w.count:,} requests | {w.bandwidth_mib_s:,.0f} "
            f"| {w.latency_us.mean:,.0f} us | {w.latency_us.p99:,.0f} us |"
        )
    return "\n".join(lines) + "\n"


def apst(root: Path) -> str:
    """docs/power.md's example: examples/client-idle-apst.toml with APST off and on."""
    import ssdlab

    runs = [
        ssdlab.simulate(
            root / "examples" / "client-idle-apst.toml",
            overrides=[f"power.apst.enabled={'true' if on else 'false'}"],
        )
        for on in (False, True)
    ]

    def latency(r: Any, op: str) -> str:
        us = getattr(r.device, op).latency_us
        return f"{us.mean:,.1f} / {us.p99:,.1f} us"

    def energy(r: Any) -> str:
        assert r.energy is not None
        return f"{r.energy.total_joules:,.1f} J, {r.energy.average_watts:.3f} W"

    states = runs[1].power_states
    assert states is not None
    residency = "; ".join(
        f"{s.name} {s.entries} entries, {s.residency_seconds:.1f} s" for s in states.states
    )
    return (
        "| | APST off | APST on |\n"
        "|---|---|---|\n"
        f"| reads: mean / p99 latency | {latency(runs[0], 'reads')} "
        f"| {latency(runs[1], 'reads')} |\n"
        f"| writes (to the write cache): mean / p99 | {latency(runs[0], 'writes')} "
        f"| {latency(runs[1], 'writes')} |\n"
        f"| energy ({runs[1].simulated_seconds:.1f} simulated seconds) | {energy(runs[0])} "
        f"| {energy(runs[1])} |\n"
        f"| time in low-power states | | {states.low_power_fraction * 100:.1f} %: {residency} |\n"
        f"| wake-ups | | {states.wakeups}, mean wait {states.exit_wait_us_mean / 1000:.2f} ms, "
        f"longest {states.exit_wait_us_max / 1000:g} ms |\n"
    )


def read_retries(root: Path) -> str:
    """docs/reliability-model.md's example (examples/worn-mlc-read-retry.toml) fresh and aged."""
    import ssdlab

    lines = [
        "| data age | mean RBER | reads by retries (0 / 1 / 2) | mean us | p99 us |",
        "|---|---:|---|---:|---:|",
    ]
    for days in (0, 150):
        r = ssdlab.simulate(
            root / "examples" / "worn-mlc-read-retry.toml",
            overrides=[f"flash.reliability.data_age_days_at_start={days}"],
        )
        rel, us = r.reliability, r.device.reads.latency_us
        assert rel is not None and not any(rel.reads_by_retries[3:]), "a column for 3 retries"
        levels = " / ".join(f"{n:,}" for n in rel.reads_by_retries[:3])
        rber = re.sub(r"e([+-])0(\d)$", r"e\1\2", f"{rel.mean_rber:.1e}")  # 1.1e-4, not e-04
        lines.append(f"| {days} days | {rber} | {levels} | {us.mean:.1f} | {us.p99:.1f} |")
    return "\n".join(lines) + "\n"


OPEN_CHANNEL_RUNS = (
    ("`open_channel` (round robin, host GC)", []),
    ("`open_channel`, `placement=static`", ["host.open_channel.placement=static"]),
    ("`nvme`, `ftl.ideal_mapping=true`", ["host.interface=nvme", "ftl.ideal_mapping=true"]),
    ("`nvme` (2 MiB CMT)", ["host.interface=nvme"]),
)


def open_channel(root: Path) -> str:
    """docs/host-interfaces.md's example: examples/open-channel-ssd.toml on Open-Channel and on
    NVMe."""
    import ssdlab

    lines = [
        "| run (same file, `--set ...`) | reader IOPS | writer IOPS | writer mean us | WA "
        "| translation pages read / written |",
        "|---|---|---|---|---|---|",
    ]
    for name, overrides in OPEN_CHANNEL_RUNS:
        r = ssdlab.simulate(root / "examples" / "open-channel-ssd.toml", overrides=overrides)
        reader, writer = r.flows
        flash = r.device.flash
        lines.append(
            f"| {name} | {reader.reads.iops:,.0f} | {writer.writes.iops:,.0f} "
            f"| {writer.writes.latency_us.mean:.0f} | {r.device.gc.write_amplification:.3f} "
            f"| {flash.translation_page_reads:,} / {flash.translation_page_writes:,} |"
        )
    return "\n".join(lines) + "\n"


TABLES = {
    "analytic-agreement": Table(
        "README.md", analytic_agreement, "closed form against the simulator on the X25-M"
    ),
    "read-ahead": Table("docs/cache.md", read_ahead, "read-ahead off and on, the example"),
    "scheduler-slowdowns": Table(
        "docs/studies.md", scheduler_slowdowns, "slowdowns of the --alone example by scheduler"
    ),
    "zns-block-interface-tax": Table(
        "docs/zns.md", zns_block_interface_tax, "two logs on a conventional and a zoned drive"
    ),
    "zns-zone-striping": Table("docs/zns.md", zns_zone_striping, "bandwidth by zone planes"),
    "fdp-tenants": Table("docs/fdp.md", fdp_tenants, "tenants mixed and on their own handles"),
    "slc-cliff": Table("docs/slc-cache.md", slc_cliff, "the SLC cache's cliff by fill"),
    "qlc-30tb": Table("docs/slc-cache.md", qlc_30tb, "the 30 TB-class QLC drive at QD 32, 128"),
    "apst": Table("docs/power.md", apst, "the client drive's APST example, off and on"),
    "read-retries": Table(
        "docs/reliability-model.md", read_retries, "the worn MLC example fresh and aged"
    ),
    "open-channel": Table(
        "docs/host-interfaces.md", open_channel, "the Open-Channel example beside NVMe"
    ),
}


def blocks(text: str) -> list[str]:
    """Names of the generated tables in a page, in order."""
    return [m["name"] for m in BLOCK.finditer(text)]


def refresh(text: str, root: Path, only: str | None = None) -> str:
    """`text` with every generated table (or only the one named) computed afresh."""

    def replace(m: re.Match[str]) -> str:
        name = m["name"]
        if name not in TABLES:
            raise KeyError(f"unknown generated table `{name}`; known: {', '.join(TABLES)}")
        if only is not None and name != only:
            return m.group(0)
        return m["head"] + TABLES[name].render(root) + m["tail"]

    return BLOCK.sub(replace, text)


def committed(root: Path, name: str) -> str:
    """The body of table `name` as its page holds it now."""
    text = (root / TABLES[name].page).read_text(encoding="utf-8")
    for m in BLOCK.finditer(text):
        if m["name"] == name:
            return m["body"]
    raise KeyError(f"{TABLES[name].page} has no generated table `{name}`")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Recompute the docs' tables of figures.")
    parser.add_argument("--check", action="store_true", help="exit 1 if a table is out of date")
    parser.add_argument("--root", type=Path, default=Path("."), help="repository root")
    parser.add_argument("names", nargs="*", help="only these tables (default: all)")
    args = parser.parse_args(argv)
    stale = []
    for name in args.names or list(TABLES):
        table = TABLES[name]
        page = args.root / table.page
        text = page.read_text(encoding="utf-8")
        new = refresh(text, args.root, only=name)
        if new != text:
            stale.append(f"{table.page}: {name}")
            if not args.check:
                page.write_text(new, encoding="utf-8")
    for line in stale:
        print(("out of date: " if args.check else "rewrote ") + line)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
