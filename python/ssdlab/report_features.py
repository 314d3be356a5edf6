"""Report sections for issue 17's device features: FDP placement (per-handle write amplification
and the events log), the SLC write cache (its traffic and fill over time) and an LSM store on a
zoned namespace (its own write amplification). ``report.py`` calls them; each takes the page and
the results and draws nothing the results do not hold."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ssdlab.results import Results


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f}"


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def fdp_section(page: Any, results: Results) -> None:
    """Flexible Data Placement: the statistics log, each handle's bytes and write amplification,
    and the events log."""
    f = results.fdp
    if f is None:
        return
    page.heading("Flexible Data Placement")
    wa = f.media_bytes_written / f.host_bytes_written if f.host_bytes_written else float("nan")
    page.paragraph(
        f"{f.reclaim_unit_handles} reclaim unit handles, reclaim units of "
        f"{_mib(f.reclaim_unit_bytes)} MiB. Host bytes written {_mib(f.host_bytes_written)} MiB, "
        f"media bytes written {_mib(f.media_bytes_written)} MiB (write amplification "
        f"{wa:.3f}), media bytes erased {_mib(f.media_bytes_erased)} MiB."
    )
    page.table(
        ["handle", "flows", "host MiB", "media MiB", "WA", "units opened", "units erased"],
        [
            [
                h.handle,
                ", ".join(h.flows),
                _mib(h.host_bytes_written),
                _mib(h.media_bytes_written),
                _ratio(h.write_amplification),
                h.reclaim_units_opened,
                h.reclaim_units_erased,
            ]
            for h in f.handles
        ],
        text_columns=2,
    )
    events = f.events
    page.paragraph(
        f"FDP events: {events.invalid_placement_identifier:,} writes carried a placement "
        "handle the device does not offer (placed by handle 0)."
    )
    if events.log:
        page.table(
            ["event", "time (us)", "placement identifier", "namespace", "flow"],
            [
                [e.event, e.time_us, e.placement_identifier, e.namespace_id, e.flow]
                for e in events.log[-10:]
            ],
        )


def slc_cache_section(page: Any, results: Results) -> None:
    """The SLC write cache: where host bytes went, what folding moved, and (with a time series)
    the cache's traffic and fill per window."""
    c = results.slc_cache
    if c is None:
        return
    import matplotlib.pyplot as plt

    page.heading("SLC write cache")
    page.paragraph(
        f"{c.mode} cache of up to {_mib(c.max_capacity_bytes)} MiB ({_mib(c.capacity_bytes_at_end)}"
        f" MiB at the end); host bytes into SLC {_mib(c.host_bytes_to_slc)} MiB, straight to the "
        f"dense cells {_mib(c.host_bytes_to_dense)} MiB; {c.blocks_folded:,} blocks folded "
        f"({_mib(c.bytes_folded)} MiB moved), {c.blocks_in_use_at_end:,} SLC blocks in use at the "
        "end."
    )
    series = results.series
    if series is None or series.slc_cache is None:
        return
    s = series.slc_cache
    x = [a + d / 2 for a, d in zip(series.start_seconds, series.duration_seconds, strict=True)]
    fig, (traffic, fill) = plt.subplots(2, 1, figsize=(11, 5), sharex=True)
    lines = ((s.host_pages_to_slc, "host pages into SLC"), (s.pages_folded, "pages folded"))
    for values, label in lines:
        rate = [v / d if d else 0.0 for v, d in zip(values, series.duration_seconds, strict=True)]
        traffic.plot(x, rate, label=label)
    traffic.set(ylabel="pages / s", title="SLC cache traffic")
    traffic.legend(fontsize="small")
    fill.plot(x, s.blocks_in_use, color="C2")
    fill.set(xlabel="simulated time (s)", ylabel="SLC blocks in use", title="SLC cache fill")
    for a in (traffic, fill):
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    page.figure(fig, "slc_cache_over_time", "SLC cache traffic and fill over time")


def lsm_section(page: Any, results: Results) -> None:
    """LSM stores on a zoned namespace: each store's flushes, compactions and write
    amplification."""
    stores = [(f.name, f.lsm) for f in results.flows if f.lsm is not None]
    if not stores:
        return
    page.heading("LSM stores on zones")
    page.paragraph(
        "Each store places its files in zones by level and resets a zone once its files are "
        "deleted; host write amplification is the bytes the store wrote (flushes and compaction "
        "outputs) over the bytes its flushes wrote."
    )
    page.table(
        ["flow", "files per level", "flushes", "compactions", "user MiB", "host MiB", "host WA"],
        [
            [
                name,
                " / ".join(str(n) for n in s.files_per_level),
                s.flushes,
                s.compactions,
                _mib(s.user_bytes_written),
                _mib(s.host_bytes_written),
                _ratio(s.host_write_amplification),
            ]
            for name, s in stores
        ],
        text_columns=2,
    )
