//! Preconditioning from the simulation's side: describing the flows for `steady`, running the
//! write stream through a second simulation for `simulate`, warming the caches, and reporting
//! the state the run starts from.

use std::path::Path;
use std::time::Instant;

use rustc_hash::FxHashMap;

use super::{SimError, Simulation, Source};
use crate::config::{Config, ConfigError, FlowKind, PreconditionMode, TraceOps, TranslationPagesAtStart};
use crate::engine::RandomStream;
use crate::precondition::{self, Addressed, FlowModel, PageSet, PreconditionSummary, ValidHistogram, WriteDist};
use crate::workload::synthetic::{Arrival, PatternModel};
use crate::workload::trace::{TraceOptions, TraceReader};

/// Random stream id of cache warming.
const STREAM_WARM: u64 = 0x3A4A;

impl Simulation {
    /// Brings the device to its starting state for `steady` and `simulate` (`fill` and `none`
    /// were done when the FTL was built) and records what it looks like.
    /// `progress` hears the fraction of the aging done (steady and simulate) and stops it
    /// when it returns false.
    pub(super) fn precondition(
        &mut self,
        base_dir: &Path,
        fill_seconds: f64,
        progress: &mut dyn FnMut(f64) -> bool,
    ) -> Result<(), SimError> {
        let started = Instant::now();
        let p = self.config.precondition.clone();
        let mut summary = PreconditionSummary {
            mode: mode_name(p.mode).to_string(),
            // No aging writes (fill, none): no write amplification to speak of (null).
            write_amplification: f64::NAN,
            ..Default::default()
        };
        if matches!(p.mode, PreconditionMode::Steady | PreconditionMode::Simulate) {
            let models = self.flow_models(base_dir)?;
            let mapped = self.mapped_pages(&models);
            let steady_writes = if p.mode == PreconditionMode::Steady { p.drive_writes() } else { 0.0 };
            let outcome =
                precondition::steady_state(&mut self.ftl, &self.config, &models, &mapped, steady_writes, progress)
                    .map_err(|reason| ConfigError::new("precondition", reason))?;
            summary.mapped_pages = outcome.mapped_pages;
            summary.sample_planes = outcome.sample_planes;
            if p.mode == PreconditionMode::Steady {
                summary.drive_writes = p.drive_writes();
                summary.write_amplification = outcome.write_amplification();
            } else {
                let (host, gc) = self.simulate_writes(base_dir, &models, outcome.mapped_pages, progress)?;
                summary.drive_writes = host as f64 / outcome.mapped_pages.max(1) as f64;
                summary.write_amplification = if host == 0 { f64::NAN } else { (host + gc) as f64 / host as f64 };
            }
            if p.warm_caches.unwrap_or(true) {
                self.warm_caches(&models);
            }
        } else {
            summary.mapped_pages = self.ftl.map.mapped_pages();
        }
        if self.config.ftl.translation_pages_at_start == Some(TranslationPagesAtStart::All) && !self.mapping.is_ideal()
        {
            self.ftl.store_all_translation_pages();
        }
        summary.occupancy = summary.mapped_pages as f64 / self.ftl.geometry.logical_pages.max(1) as f64;
        summary.wall_seconds = fill_seconds + started.elapsed().as_secs_f64();
        summary.valid_fraction_histogram = ValidHistogram::of(&self.ftl);
        summary.free_blocks = (0..self.ftl.geometry.planes).map(|p| self.ftl.blocks.free_blocks(p) as u64).sum();
        summary.cache_fill = self.cache.fill_fraction();
        summary.cmt_fill = self.mapping.fill_fraction();
        self.precondition_summary = summary;
        Ok(())
    }

    /// Where each flow writes and what it addresses, in logical pages of the device.
    fn flow_models(&self, base_dir: &Path) -> Result<Vec<FlowModel>, SimError> {
        let spp = self.ftl.geometry.sectors_per_page;
        let logical_sectors = self.ftl.placement.domain_pages() * spp;
        let mut models = Vec::with_capacity(self.flows.len());
        for (i, flow) in self.flows.iter().enumerate() {
            let base = flow.domain_base_sector;
            let mut planes = self.ftl.placement.stripe(i).to_vec();
            planes.sort_unstable();
            planes.dedup();
            let model = match &flow.source {
                Source::Synthetic(generator) => {
                    let m = generator.address_model();
                    let first = (base + m.ws_start_sector) / spp;
                    let end = (base + m.ws_start_sector + m.ws_sectors).div_ceil(spp);
                    let writes = match m.pattern {
                        PatternModel::Uniform => WriteDist::Uniform { first, end },
                        PatternModel::Sequential => WriteDist::Sequential { first, end },
                        PatternModel::HotCold { hot_sectors, hot_traffic } => WriteDist::HotCold {
                            first,
                            hot_end: (base + m.ws_start_sector + hot_sectors).div_ceil(spp),
                            end,
                            hot_traffic,
                        },
                    };
                    // Flows are mixed by pages written per unit of offered load: queue depth for
                    // a closed loop, thousands of requests per second for an open one.
                    let intensity = match generator.arrival {
                        Arrival::Closed { depth } => depth as f64,
                        Arrival::Open { mean_interarrival_ps } => 1e9 / mean_interarrival_ps.max(1.0),
                    };
                    let pages = (m.mean_sectors / spp as f64).max(1.0);
                    FlowModel {
                        weight: m.write_fraction * pages * intensity,
                        writes,
                        addressed: Addressed::Range { first, end },
                        planes,
                    }
                }
                // An outside host's queue: aged as by uniform random writes over the space it
                // may address (docs/embedding.md), the common preconditioning of drive tests.
                Source::Host => {
                    let (first, end) = (base / spp, (base + logical_sectors) / spp);
                    FlowModel {
                        weight: 1.0,
                        writes: WriteDist::Uniform { first, end },
                        addressed: Addressed::Range { first, end },
                        planes,
                    }
                }
                Source::Trace(_) => {
                    let fc = &self.config.flows[i];
                    let given = fc.path.as_deref().expect("validated: trace flows have a path");
                    let file = crate::workload::trace::resolve_path(base_dir, std::path::Path::new(given));
                    let mut reader = TraceReader::open(&file, &TraceOptions::from_flow(fc), logical_sectors)
                        .map_err(|e| ConfigError::new(format!("flows[{i}].path"), format!("{e:?}")))?;
                    scan_trace(&mut reader, base, spp, planes)?
                }
            };
            models.push(model);
        }
        Ok(models)
    }

    /// The logical pages that hold data: `occupancy` of the space from page 0, everything the
    /// flows address, and the translation pages that describe them.
    fn mapped_pages(&self, models: &[FlowModel]) -> PageSet {
        let g = &self.ftl.geometry;
        let mut set = PageSet::new(g.logical_pages + g.translation_pages);
        set.insert_range(0, ((g.logical_pages as f64) * self.config.precondition.occupancy).floor() as u64);
        for m in models {
            match &m.addressed {
                Addressed::Range { first, end } => set.insert_range(*first, (*end).min(g.logical_pages)),
                Addressed::Pages(pages) => pages.iter().for_each(|&p| set.insert(p)),
            }
        }
        if g.translation_pages > 0 {
            let per = g.entries_per_translation_page;
            let mut tpages: Vec<u64> = Vec::new();
            // The translation pages of user pages [first, end), in increasing order and once
            // each (runs come in increasing order).
            let mut describe = |first: u64, end: u64| {
                let end = end.min(g.logical_pages);
                if first < end {
                    let (a, b) = (first / per, (end - 1) / per);
                    let from = match tpages.last() {
                        Some(&t) if t >= a => t + 1,
                        _ => a,
                    };
                    tpages.extend(from..=b);
                }
            };
            // By runs of consecutive pages (a division per run, not per page) unless the set
            // is too scattered for that to pay.
            match set.runs(1 << 16) {
                Some(runs) => runs.into_iter().for_each(|(first, end)| describe(first, end)),
                None => set.for_each(|lpa| describe(lpa, lpa + 1)),
            }
            for t in tpages {
                set.insert(g.logical_pages + t);
            }
        }
        set
    }

    /// `simulate`: writes `drive_writes` times the mapped data through a copy of this device
    /// running only the flows' writes, then takes over its flash state. Returns (host page
    /// writes, GC page moves).
    fn simulate_writes(
        &mut self,
        base_dir: &Path,
        models: &[FlowModel],
        mapped: u64,
        progress: &mut dyn FnMut(f64) -> bool,
    ) -> Result<(u64, u64), SimError> {
        let spp = self.ftl.geometry.sectors_per_page;
        let total_weight: f64 = models.iter().map(|m| m.weight).sum();
        let target_pages = self.config.precondition.drive_writes() * mapped as f64;
        let mut config: Config = self.config.clone();
        config.precondition.mode = PreconditionMode::Steady;
        config.precondition.drive_writes = Some(0.0);
        config.precondition.warm_caches = Some(false);
        config.run.max_simulated_time = None;
        // Aging from a packed drive can pass through long GC-only stretches (FIFO collecting
        // nearly full blocks) that are no reason to give up on preconditioning.
        let hour = crate::config::Duration::lit("3600s");
        if config.run.stall_timeout.as_ref().is_none_or(|t| t.value < hour.value) {
            config.run.stall_timeout = Some(hour);
        }
        config.run.request_records = Default::default();
        // The aging writes' data is not the run's: the run starts with nothing stored.
        config.data.emulate = false;
        for (i, fc) in config.flows.iter_mut().enumerate() {
            fc.duration = None;
            if fc.kind == FlowKind::Trace {
                fc.ops = Some(TraceOps::Write);
                continue;
            }
            let share = if total_weight > 0.0 { models[i].weight / total_weight } else { 0.0 };
            let pages_per_request = match &self.flows[i].source {
                Source::Synthetic(g) => (g.address_model().mean_sectors / spp as f64).max(1.0),
                Source::Trace(_) | Source::Host => 1.0,
            };
            if fc.kind == FlowKind::Host {
                // The writer ages the host's space with 4 KiB random writes (see `flow_models`).
                fc.kind = FlowKind::Synthetic;
            }
            fc.read_fraction = Some(0.0);
            fc.requests = Some((share * target_pages / pages_per_request).ceil() as u64);
            if fc.queue_depth.is_none() {
                fc.queue_depth = Some(16);
                fc.rate = None;
            }
        }
        let echo = serde_json::Value::Null;
        let mut writer = Simulation::new(config, base_dir, echo)?;
        // The writer maps the same pages in the same packed order, then writes.
        while !writer.step(1 << 16)? {
            if !progress(writer.progress()) {
                return Err(ConfigError::new("precondition", precondition::INTERRUPTED).into());
            }
        }
        let host = writer.ftl.stats.user_programs;
        let gc = writer.ftl.stats.gc_programs;
        std::mem::swap(&mut self.ftl.map, &mut writer.ftl.map);
        std::mem::swap(&mut self.ftl.blocks, &mut writer.ftl.blocks);
        self.ftl.blocks.rebase_closed_at();
        Ok((host, gc))
    }

    /// Fills the cached mapping table and the data cache with pages drawn from the flows'
    /// address distributions (clean: in steady state the cache's contents have reached flash).
    fn warm_caches(&mut self, models: &[FlowModel]) {
        let mut rng = RandomStream::new(self.config.seed, STREAM_WARM);
        let spp = self.ftl.geometry.sectors_per_page;
        let full_page = super::flash_path::sector_mask(0, spp as u32);
        let logical = self.ftl.geometry.logical_pages;
        for (f, m) in models.iter().enumerate() {
            for _ in 0..self.mapping.warm_draws(f).max(self.cache.warm_draws(f)) {
                let Some(lpa) = draw(m, &mut rng) else { break };
                if lpa >= logical || self.ftl.map.lookup(lpa as u32) == crate::ftl::mapping::UNMAPPED {
                    continue;
                }
                self.mapping.warm(f, lpa as u32);
                self.cache.warm(f, lpa as u32, full_page);
            }
        }
    }
}

/// One page a flow touches, drawn from its distribution (None when it has none).
fn draw(m: &FlowModel, rng: &mut RandomStream) -> Option<u64> {
    match &m.writes {
        WriteDist::HotCold { first, hot_end, end, hot_traffic } if hot_end > first && end > hot_end => {
            Some(if rng.unit() < *hot_traffic {
                first + rng.below(hot_end - first)
            } else {
                hot_end + rng.below(end - hot_end)
            })
        }
        _ => match &m.addressed {
            Addressed::Range { first, end } if end > first => Some(first + rng.below(end - first)),
            Addressed::Pages(pages) if !pages.is_empty() => Some(pages[rng.below(pages.len() as u64) as usize]),
            _ => None,
        },
    }
}

/// Reads a trace once: the pages it addresses, and how often it writes each.
fn scan_trace(reader: &mut TraceReader, base: u64, spp: u64, planes: Vec<u32>) -> Result<FlowModel, SimError> {
    let mut written: FxHashMap<u64, u32> = FxHashMap::default();
    let mut touched = Vec::new();
    let (mut first_arrival, mut last_arrival, mut write_pages) = (None, 0, 0u64);
    for request in reader {
        let r = request?;
        first_arrival.get_or_insert(r.arrival);
        last_arrival = r.arrival;
        let start = base + r.start_sector;
        // Trims and flushes put no data anywhere.
        if !matches!(r.op, crate::device::Op::Read | crate::device::Op::Write) {
            continue;
        }
        for page in start / spp..(start + r.sectors as u64).div_ceil(spp) {
            touched.push(page);
            if !r.is_read() {
                *written.entry(page).or_default() += 1;
                write_pages += 1;
            }
        }
    }
    touched.sort_unstable();
    touched.dedup();
    let mut pages: Vec<(u64, u32)> = written.into_iter().collect();
    pages.sort_unstable();
    // Pages written per millisecond of trace (comparable with the synthetic flows' weights).
    let span_ms = (last_arrival - first_arrival.unwrap_or(0)) as f64 / crate::time::PS_PER_MS as f64;
    Ok(FlowModel {
        weight: write_pages as f64 / span_ms.max(1.0),
        writes: WriteDist::Counts { pages },
        addressed: Addressed::Pages(touched),
        planes,
    })
}

pub(super) fn mode_name(mode: PreconditionMode) -> &'static str {
    match mode {
        PreconditionMode::Steady => "steady",
        PreconditionMode::Fill => "fill",
        PreconditionMode::None => "none",
        PreconditionMode::Simulate => "simulate",
    }
}
