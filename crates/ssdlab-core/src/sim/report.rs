//! Turns the simulation's counters into the results document and a summary table.

use super::Simulation;
use crate::device::Status;
use crate::stats::results::{
    CacheSummary, CmtSummary, DeviceResults, FlashSummary, FlowCacheSummary, FlowResults, WearSummary, SCHEMA,
};
use crate::stats::RequestRecorder;
use crate::stats::{FlowStats, GcSummary, Results};
use crate::time::ps_to_seconds;
use std::collections::BTreeMap;
use std::path::Path;

impl Simulation {
    /// Writes no request waits for (cache flushes, translation-page write-backs) that are still
    /// waiting for space when everything else is done: the run is over, but say so.
    pub(super) fn note_stalled_background_writes(&mut self) {
        let stalled: usize = self.stalled_writes.iter().chain(&self.stalled_gc_writes).map(|q| q.len()).sum();
        if stalled > 0 {
            let planes: Vec<usize> = (0..self.stalled_writes.len())
                .filter(|&p| !self.stalled_writes[p].is_empty() || !self.stalled_gc_writes[p].is_empty())
                .collect();
            let confined = self
                .config
                .flows
                .iter()
                .any(|f| f.channels.is_some() || f.chips.is_some() || f.dies.is_some() || f.planes.is_some());
            // Only confined flows can overfill a plane; otherwise GC fell behind on a plane
            // too small for its open blocks (one per write stream) and its reserve.
            let why = if confined {
                "the flows allowed on them (flows[i].channels/chips/dies/planes) wrote more data than they hold"
                    .to_string()
            } else {
                format!(
                    "GC had not freed a block for them when the run ended: a plane of {} blocks of {} pages is small for its open blocks (one per write stream) and its GC reserve (ftl.gc_threshold); more blocks per plane or over-provisioning avoid it",
                    self.ftl.geometry.blocks_per_plane, self.ftl.geometry.pages_per_block
                )
            };
            self.warnings.push(format!(
                "at the end, {stalled} background flash writes (cache flushes, translation-page write-backs or GC moves) were still waiting for space on plane(s) {planes:?}: {why}"
            ));
        }
    }

    pub fn results(&self) -> Results {
        let mut results = self.results_without_energy();
        if let Some(fw) = &self.firmware {
            // Only ops that ran: one that never did has undefined (NaN) means.
            let ops: Vec<_> =
                [&results.device.reads, &results.device.writes].into_iter().filter(|o| o.count > 0).collect();
            let firmware_us: f64 =
                ops.iter().map(|o| o.count as f64 * o.latency_breakdown_us.get("firmware").unwrap_or(0.0)).sum();
            let total_us: f64 = ops.iter().map(|o| o.count as f64 * o.latency_breakdown_us.total()).sum();
            let share = if total_us > 0.0 { firmware_us / total_us } else { 0.0 };
            results.firmware = Some(fw.summary(self.now(), share));
        }
        if self.config.power.enabled {
            results.energy = Some(self.energy(&results));
        }
        results.power_states = self.power_states.as_ref().map(|p| p.summary(self.now()));
        results
    }

    /// The controller's cumulative activity, for the time series' windows.
    pub(super) fn controller_counters(&self) -> crate::stats::timeseries::ControllerCounters {
        crate::stats::timeseries::ControllerCounters {
            dram_busy_ps: self.dram.busy_ps(),
            cpu_busy_ps: self.firmware.as_ref().map_or(self.backend.counters.dispatch_ps, |fw| fw.busy_ps()),
            instructions: self.firmware.as_ref().map_or(0, |fw| fw.instructions()),
        }
    }

    /// Joules each time-series window saved in APST's non-operational states: the overlap of
    /// the low-power intervals with the window, times the static power less the state's.
    fn low_power_saving(&self, start_seconds: &[f64], duration_seconds: &[f64], static_parts: [f64; 4]) -> Vec<f64> {
        let mut saved = vec![0.0; start_seconds.len()];
        let Some(apst) = &self.power_states else { return saved };
        let static_watts: f64 = static_parts.iter().sum();
        for &(start, end, k) in &apst.intervals {
            let (a, b) = (ps_to_seconds(start), ps_to_seconds(end));
            let rate = (static_watts - apst.watts(k)).max(0.0);
            // Windows are contiguous from 0: find the first one the interval touches.
            let first = start_seconds.partition_point(|&s| s <= a).saturating_sub(1);
            for i in first..start_seconds.len() {
                let (ws, we) = (start_seconds[i], start_seconds[i] + duration_seconds[i]);
                if ws >= b {
                    break;
                }
                saved[i] += (b.min(we) - a.max(ws)).max(0.0) * rate;
            }
        }
        saved
    }

    /// Gives the time series the controller's counters when a sample at `now` closes its
    /// window.
    #[inline]
    pub(super) fn series_boundary(&mut self, now: crate::time::SimTime) {
        if self.series.crosses(now) {
            let c = self.controller_counters();
            self.series.set_controller(c);
        }
    }

    /// The energy model applied to what the run did (see `power`).
    fn energy(&self, r: &Results) -> crate::power::EnergySummary {
        let p = &self.config.power;
        let g = &self.ftl.geometry;
        let seconds = ps_to_seconds(self.now());
        let c = &self.backend.counters;
        let dram_joules = self.dram.banked().map(|d| p.banked_dram_energy(d, self.now()));
        let requests = r.device.reads.count + r.device.writes.count;
        let host_bytes = r.device.reads.bytes + r.device.writes.bytes;
        let activity = crate::power::Activity {
            seconds,
            read_cell_seconds: ps_to_seconds(c.read_cell_ps),
            program_cell_seconds: ps_to_seconds(c.program_cell_ps),
            erase_cell_seconds: ps_to_seconds(c.erase_cell_ps),
            channel_busy_seconds: ps_to_seconds(self.backend.channel_busy_ps.iter().sum()),
            dies: g.dies,
            dram_busy_seconds: ps_to_seconds(self.dram.busy_ps()),
            dram_joules: dram_joules.as_ref().map(|j| j.total()),
            cpu_busy_seconds: ps_to_seconds(self.firmware.as_ref().map_or(c.dispatch_ps, |fw| fw.busy_ps())),
            firmware: self.firmware.as_ref().map(|fw| (self.config.firmware.cores, fw.instructions())),
            pcie_bytes: host_bytes + requests * (crate::host::SQ_ENTRY_BYTES + crate::host::CQ_ENTRY_BYTES),
            requests,
        };
        let mut by_component = p.energy(&activity);
        // Time in APST's non-operational states draws the state's power instead of the static.
        let cores = if self.firmware.is_some() { self.config.firmware.cores } else { p.cpu_cores };
        let mut static_parts = p.static_parts(g.dies, cores);
        if let Some(j) = &dram_joules {
            static_parts[1] = j.total() / seconds.max(f64::MIN_POSITIVE);
        }
        if let Some(apst) = &self.power_states {
            for &(start, end, k) in &apst.intervals {
                by_component.in_low_power(ps_to_seconds(end - start), apst.watts(k), static_parts);
            }
        }
        let total_joules = by_component.nand + by_component.dram + by_component.cpu + by_component.pcie;
        let mut summary = crate::power::EnergySummary {
            total_joules,
            average_watts: if seconds > 0.0 { total_joules / seconds } else { 0.0 },
            energy_per_request_uj: if requests == 0 { 0.0 } else { total_joules / requests as f64 * 1e6 },
            by_component,
            power_over_time: Default::default(),
            dram_breakdown_joules: None,
        };
        if let Some(ts) = &r.time_series {
            let per_op = |joules: f64, count: u64| if count == 0 { 0.0 } else { joules / count as f64 };
            let nand_ma = |ma: f64, s: f64| p.nand_vcc_volts * ma * s / 1e3;
            let io_joules = p.nand_io_volts * p.nand_io_ma / 1e3 * activity.channel_busy_seconds;
            let mut per = crate::power::PerOperation {
                read_joules: per_op(nand_ma(p.nand_read_ma, activity.read_cell_seconds), c.reads),
                program_joules: per_op(nand_ma(p.nand_program_ma, activity.program_cell_seconds), c.programs),
                erase_joules: per_op(nand_ma(p.nand_erase_ma, activity.erase_cell_seconds), c.erases),
                host_byte_joules: 8.0 * p.pcie_pj_per_bit * 1e-12 + per_op(io_joules, host_bytes),
                // The serial DRAM model's busy current above standby; the banked model's energy
                // is spread evenly below.
                dram_busy_watts: if dram_joules.is_some() {
                    0.0
                } else {
                    p.dram_volts * p.dram_devices as f64 * (p.dram_active_ma - p.dram_standby_ma) / 1e3
                },
                cpu_busy_watts: if self.firmware.is_some() { 0.0 } else { p.cpu_active_watts - p.cpu_idle_watts },
                instruction_joules: if self.firmware.is_some() { p.cpu_nj_per_instruction * 1e-9 } else { 0.0 },
                static_watts: p.static_watts(
                    g.dies,
                    if self.firmware.is_some() { self.config.firmware.cores } else { p.cpu_cores },
                ),
            };
            // The banked DRAM's energy is spread evenly over the run, like static power.
            if let Some(j) = &dram_joules {
                per.static_watts += j.total() / seconds.max(f64::MIN_POSITIVE) - p.serial_dram_static_watts();
            }
            let page = g.page_size_bytes as f64;
            let reads = &ts.device.reads;
            let windows = crate::power::WindowActivity {
                start_seconds: &ts.start_seconds,
                duration_seconds: &ts.duration_seconds,
                pages_read: (0..ts.start_seconds.len())
                    .map(|i| (reads.count[i] as f64).max(reads.bytes[i] as f64 / page) + ts.gc.pages_moved[i] as f64)
                    .collect(),
                pages_programmed: &ts.gc.flash_pages_programmed,
                blocks_erased: &ts.gc.blocks_erased,
                host_bytes: (0..ts.start_seconds.len())
                    .map(|i| (reads.bytes[i] + ts.device.writes.bytes[i]) as f64)
                    .collect(),
                low_power_saving_joules: self.low_power_saving(&ts.start_seconds, &ts.duration_seconds, static_parts),
                dram_busy_seconds: &ts.controller.dram_busy_seconds,
                cpu_busy_seconds: &ts.controller.cpu_busy_seconds,
                instructions: &ts.controller.instructions,
            };
            summary.power_over_time = per.series(&windows);
        }
        summary.dram_breakdown_joules = dram_joules;
        summary
    }

    fn cache_summary(&self, now: f64) -> CacheSummary {
        let c = &self.cache;
        let sum = |f: fn(&super::cache_path::CacheCounts) -> u64| c.counts.iter().map(f).sum::<u64>();
        let (read_lookups, read_hits) = (sum(|k| k.read_lookups), sum(|k| k.read_hits));
        let (evictions, prefetches_used, prefetches_wasted) = c.totals();
        let (sets, ways) = c.sets_and_ways();
        CacheSummary {
            flushes: c.flushes,
            writes_waited: c.writes_waited,
            written_through: c.written_through,
            destaged: c.background.as_ref().map_or(0, |d| d.destaged_pages),
            destaged_when_idle: c.background.as_ref().map_or(0, |d| d.destaged_when_idle),
            dirty_lines_at_end: c.unflushed_lines(),
            dram_utilisation: self.dram.busy_ps() as f64 / now,
            read_lookups,
            read_hits,
            read_misses: read_lookups - read_hits,
            evictions,
            sets,
            ways,
            prefetches_issued: sum(|k| k.prefetches_issued),
            prefetches_used,
            prefetches_wasted,
            prefetch_waits: sum(|k| k.prefetch_waits),
        }
    }

    fn results_without_energy(&self) -> Results {
        let names: Vec<String> = self.flows.iter().map(|f| f.name.clone()).collect();
        let warnings = self.result_warnings();
        let mut device = FlowStats::default();
        let flows: Vec<_> = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                device.merge(&f.stats);
                let counts = self.mapping.counts[i];
                let cache = self.cache.counts[i];
                // A hit rate over no lookup is undefined (null), not 0.
                let cache_hit_rate =
                    if cache.read_lookups == 0 { f64::NAN } else { cache.read_hits as f64 / cache.read_lookups as f64 };
                let cmt_hit_rate =
                    if counts.lookups == 0 { f64::NAN } else { counts.hits as f64 / counts.lookups as f64 };
                let (reads, writes, iops, bandwidth_mib_s) = f.stats.summaries(&self.config.run.percentiles);
                FlowResults {
                    name: f.name.clone(),
                    seed: f.seed,
                    iops,
                    bandwidth_mib_s,
                    reads,
                    writes,
                    latency_breakdown_us: f.stats.breakdown_means_us(),
                    cmt_hit_rate,
                    cmt: CmtSummary {
                        lookups: counts.lookups,
                        hits: counts.hits,
                        misses: counts.lookups - counts.hits,
                    },
                    cache_hit_rate,
                    cache: FlowCacheSummary {
                        read_lookups: cache.read_lookups,
                        read_hits: cache.read_hits,
                        read_misses: cache.read_lookups - cache.read_hits,
                        prefetches_issued: cache.prefetches_issued,
                        prefetches_used: cache.prefetches_used,
                        prefetch_waits: cache.prefetch_waits,
                    },
                    requests: f.issued,
                    interval_seconds: ps_to_seconds(f.stats.interval_ps()),
                    refused: refused_by_status(&f.refused),
                    lsm: match &f.source {
                        super::Source::Synthetic(s) => s.lsm_summary(),
                        _ => None,
                    },
                }
            })
            .collect();
        let (reads, writes, iops, bandwidth_mib_s) = device.summaries(&self.config.run.percentiles);
        let s = &self.ftl.stats;
        let write_amplification = if s.user_programs == 0 {
            f64::NAN
        } else {
            (s.user_programs + s.gc_programs + s.mapping_programs) as f64 / s.user_programs as f64
        };
        let now = self.now().max(1) as f64;
        let g = &self.ftl.geometry;
        Results {
            schema: SCHEMA.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            seed: self.config.seed,
            simulated_seconds: ps_to_seconds(self.now()),
            wall_seconds: (self.setup_wall + self.wall).as_secs_f64(),
            setup_wall_seconds: self.setup_wall.as_secs_f64(),
            events: self.events(),
            device: DeviceResults {
                reads,
                writes,
                iops,
                bandwidth_mib_s,
                gc: GcSummary {
                    blocks_erased: s.blocks_erased,
                    pages_moved: s.gc_programs,
                    write_amplification,
                    victims_selected: s.gc_victims,
                },
                flash: FlashSummary {
                    reads: self.backend.counters.reads,
                    programs: self.backend.counters.programs,
                    erases: self.backend.counters.erases,
                    multiplane_commands: self.backend.counters.multiplane,
                    suspensions: self.backend.counters.suspensions,
                    unmapped_reads: s.unmapped_reads,
                    read_modify_writes: s.rmw_reads,
                    translation_page_reads: s.mapping_reads,
                    translation_page_writes: s.mapping_programs,
                    max_erase_count: self.ftl.blocks.max_erase_count(),
                    channel_utilisation: self.backend.channel_busy_ps.iter().map(|&b| b as f64 / now).collect(),
                },
                cache: self.cache_summary(now),
                wear: WearSummary {
                    min_erase_count: self.ftl.blocks.min_erase_count(),
                    max_erase_count: self.ftl.blocks.max_erase_count(),
                    retired_blocks: self.ftl.blocks.retired_blocks,
                    static_wear_leveling_migrations: s.static_wl_migrations,
                },
                logical_capacity_bytes: g.logical_pages * g.page_size_bytes,
                physical_capacity_bytes: g.physical_pages * g.page_size_bytes,
                longest_completion_gap_us: ps_to_seconds(self.longest_completion_gap) * 1e6,
            },
            energy: None,
            power_states: None,
            firmware: None,
            dram: self.dram.results(self.now()),
            mapping: self.family.as_ref().map(|f| f.summary()),
            data: self.data_summary(),
            time_series: Some({
                let mut series = self.series.output(self.now(), &self.ftl.stats, self.controller_counters(), &names);
                if self.reliability.is_none() {
                    series.reliability = None;
                }
                if !self.ftl.slc_enabled() {
                    series.slc_cache = None;
                }
                series
            }),
            request_records: self.records.as_ref().map(|r| r.summary()),
            host_interface: Some(crate::host::HostInterfaceSummary::new(
                &self.config.host,
                self.max_requests_in_device,
                &self.link,
            )),
            open_channel: self.open_channel_summary(),
            reliability: self.reliability_summary(),
            fdp: self.fdp_summary(),
            slc_cache: self.slc_cache_summary(),
            namespaces: self.namespace_summaries(&flows),
            zns: self
                .ftl
                .zones
                .as_deref()
                .map(|z| crate::ftl::zones::ZnsSummary::new(z, &self.ftl.stats, self.ftl.geometry.page_size_bytes)),
            flows,
            warnings,
            precondition: self.precondition_summary.clone(),
            config: self.config_echo.clone(),
            model: Some(self.config.model_summary()),
        }
    }

    /// Writes the per-request records `run.request_records` asks for to `path` (format in
    /// `stats/records.rs`); call before the run. Without a path, nothing is recorded and the
    /// results say so in a warning.
    pub fn write_request_records_to(&mut self, path: &Path) -> std::io::Result<()> {
        let setting = self.config.run.request_records;
        if !setting.is_none() {
            self.records = Some(RequestRecorder::create(path, setting, self.config.seed)?);
        }
        Ok(())
    }

    /// Flushes the per-request records file (done by [`Simulation::run`]; a caller that steps
    /// the run itself calls it at the end). Once the run is over this also moves the file from
    /// its temporary name to its own, complete (`stats/records.rs`).
    pub fn flush_request_records(&mut self) {
        let finished = self.finished;
        if let Some(r) = &mut self.records {
            if finished {
                r.finish();
            } else {
                r.flush();
            }
        }
    }

    fn result_warnings(&self) -> Vec<String> {
        let mut warnings = self.warnings.clone();
        warnings.extend(self.data_warnings());
        warnings.extend(self.host_warnings());
        let window = self.config.run.time_series_window.as_ref().map(|w| w.value);
        warnings.extend(self.series.warning(window));
        warnings.extend(self.flows.iter().filter_map(refusal_warning));
        match &self.records {
            Some(r) => warnings.extend(r.error().map(|e| format!("run.request_records: cannot write the records: {e}"))),
            None if !self.config.run.request_records.is_none() => warnings.push(
                "run.request_records: no records file was given (ssdlab run writes requests.parquet into the results folder; simulate() takes records_dir)".to_string(),
            ),
            None => {}
        }
        warnings
    }
}

/// Refusal counts by status name, the statuses that refused nothing left out.
fn refused_by_status(counts: &[u64; Status::ALL.len()]) -> BTreeMap<String, u64> {
    Status::ALL
        .iter()
        .filter(|s| counts[**s as usize] > 0)
        .map(|s| (s.name().to_string(), counts[*s as usize]))
        .collect()
}

/// A flow whose requests the device refused: they are in no read or write figure, so a run
/// whose flow addresses a zoned namespace it does not write zone by zone would otherwise show
/// only its reads (fuzzing found one: 213 of 300 requests gone without a word).
fn refusal_warning(flow: &super::Flow) -> Option<String> {
    let total: u64 = flow.refused.iter().sum();
    if total == 0 {
        return None;
    }
    let by_status: Vec<String> = refused_by_status(&flow.refused).iter().map(|(s, n)| format!("{s} {n}")).collect();
    let zone_refusals = Status::ALL.iter().any(|&s| s != Status::Unsupported && flow.refused[s as usize] > 0);
    let why = match (zone_refusals, &flow.source) {
        (true, super::Source::Synthetic(s)) if !s.is_zoned() => {
            ": its namespace is zoned, and a zoned namespace refuses writes that are not whole flash pages at a zone's write pointer; address = \"zoned\" writes zone by zone, or flows[].namespace can name a conventional namespace (docs/zns.md)"
        }
        (true, _) => ": see docs/zns.md for the zone states and limits that refuse commands",
        (false, _) => ": the device does not support them here (a trim under block, hybrid or super-page mapping or on an Open-Channel device, or a zone command on a conventional namespace)",
    };
    Some(format!(
        "flow {}: the device refused {total} of its {} requests ({}), which are not in its reads and writes{why}",
        flow.name,
        flow.issued,
        by_status.join(", ")
    ))
}

/// A fixed-width text table of the headline numbers, one row per flow and op plus the device.
pub fn summary_table(results: &Results) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<16} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "flow", "op", "requests", "IOPS", "MiB/s", "mean us", "p99 us", "p99.9 us", "max us"
    );
    let mut row = |name: &str, op: &str, s: &crate::stats::OpSummary| {
        if s.count > 0 {
            let l = &s.latency_us;
            let _ = writeln!(
                out,
                "{:<16} {:>5} {:>10} {:>10.0} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
                name, op, s.count, s.iops, s.bandwidth_mib_s, l.mean, l.p99, l.p99_9, l.max
            );
        }
    };
    for f in &results.flows {
        row(&f.name, "read", &f.reads);
        row(&f.name, "write", &f.writes);
    }
    row("device", "read", &results.device.reads);
    row("device", "write", &results.device.writes);
    let gc = &results.device.gc;
    let _ = writeln!(
        out,
        "GC: {} blocks erased, {} pages moved, write amplification {}",
        gc.blocks_erased,
        gc.pages_moved,
        if gc.write_amplification.is_nan() {
            "- (no page programmed)".into()
        } else {
            format!("{:.3}", gc.write_amplification)
        }
    );
    let _ = writeln!(
        out,
        "simulated {:.6} s in {:.3} s wall, {} events",
        results.simulated_seconds, results.wall_seconds, results.events
    );
    out
}

impl Simulation {
    /// results.json `namespaces` (with `[[namespaces]]`).
    fn namespace_summaries(
        &self,
        flows: &[crate::stats::results::FlowResults],
    ) -> Option<Vec<crate::config::namespaces::NamespaceSummary>> {
        if self.config.namespaces.is_empty() {
            return None;
        }
        let layout = crate::config::namespaces::layout(&self.config, &self.ftl.geometry).expect("validated");
        let sector = crate::flash::SECTOR_BYTES;
        let summaries = layout
            .into_iter()
            .enumerate()
            .map(|(i, ns)| {
                let mine: Vec<usize> =
                    (0..self.flows.len()).filter(|&f| self.flows[f].namespace as usize == i).collect();
                crate::config::namespaces::NamespaceSummary {
                    command_set: if ns.zoned { "zoned" } else { "conventional" }.to_string(),
                    size_bytes: ns.host_sectors * sector,
                    capacity_bytes: ns.pages * self.ftl.geometry.page_size_bytes,
                    zones: ns.zones,
                    flows: mine.iter().map(|&f| self.flows[f].name.clone()).collect(),
                    bytes_read: mine.iter().map(|&f| flows[f].reads.bytes).sum(),
                    bytes_written: mine.iter().map(|&f| flows[f].writes.bytes).sum(),
                    name: ns.name,
                }
            })
            .collect();
        Some(summaries)
    }

    /// results.json `fdp` (with `[ftl.fdp]`).
    fn fdp_summary(&self) -> Option<crate::ftl::fdp::FdpSummary> {
        self.config.ftl.fdp.as_ref()?;
        let g = &self.ftl.geometry;
        let flows: Vec<(String, u32)> = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.clone(), self.ftl.handle_of_flow(i as u16) as u32))
            .collect();
        let block_bytes = g.page_size_bytes * g.pages_per_block as u64;
        let names: Vec<String> = self.flows.iter().map(|f| f.name.clone()).collect();
        let events = self.ftl.fdp_events.summary(&names);
        Some(crate::ftl::fdp::FdpSummary::new(&self.ftl.stats, g.page_size_bytes, block_bytes, &flows, events))
    }
}

impl Simulation {
    /// results.json `slc_cache` (with `[flash.slc_cache]`).
    fn slc_cache_summary(&self) -> Option<crate::ftl::SlcCacheSummary> {
        let c = self.config.flash.slc_cache.as_ref()?;
        let g = &self.ftl.geometry;
        let s = &self.ftl.stats;
        let slc_pages = g.pages_per_block / self.config.flash.technology.bits_per_cell();
        let in_use: u32 = (0..g.planes).map(|p| self.ftl.blocks.slc_in_use(p)).sum();
        let allowed: u32 = (0..g.planes).map(|p| self.ftl.slc_allowed(p)).sum();
        Some(crate::ftl::SlcCacheSummary {
            mode: c.mode,
            slc_pages_per_block: slc_pages,
            max_capacity_bytes: c.blocks_per_plane as u64 * g.planes as u64 * slc_pages as u64 * g.page_size_bytes,
            capacity_bytes_at_end: allowed as u64 * slc_pages as u64 * g.page_size_bytes,
            host_bytes_to_slc: s.slc_host_pages * g.page_size_bytes,
            host_bytes_to_dense: s.dense_host_pages * g.page_size_bytes,
            blocks_folded: s.slc_blocks_folded,
            bytes_folded: s.slc_pages_folded * g.page_size_bytes,
            blocks_in_use_at_end: in_use,
        })
    }
}
