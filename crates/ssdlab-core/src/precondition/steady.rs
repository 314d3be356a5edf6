//! Steady state by sampling: age one plane per group with the real FTL, untimed, and copy it.
//!
//! Planes that see the same flows see, by static allocation, statistically the same write stream
//! over their own logical pages: the k-th logical page of one plane plays the part of the k-th
//! logical page of another. So one plane of each group is aged by `drive_writes` times its data
//! in page writes drawn from the flows' address distributions (GC policy, wear leveling, GC
//! threshold and block sizes all the configured ones, through the same `Ftl` code the run uses),
//! and every plane of the group takes its block states, erase counts, free pool and the position
//! of each of its logical pages by rank. The cost is one plane's worth of writes per group plus
//! one pass over the mapped pages, whatever the device's size.

use rustc_hash::FxHashMap;

use super::{FlowModel, PageSet, WriteDist};
use crate::config::{AddressDomains, Config, PreconditionMode};
use crate::engine::RandomStream;
use crate::flash::Geometry;
use crate::ftl::blocks::{PlaneImage, Stream};
use crate::ftl::placement::Placement;
use crate::ftl::Ftl;

/// Random stream id of the aging writes (one stream per sample plane, offset by its group).
const STREAM_AGING: u64 = 0x05EE_DA61;

/// What aging did, summed over the sample planes.
#[derive(Clone, Copy, Debug, Default)]
pub struct SteadyOutcome {
    pub mapped_pages: u64,
    /// Host page writes the samples aged with.
    pub host_writes: u64,
    /// Pages GC moved meanwhile.
    pub gc_moves: u64,
    pub sample_planes: u32,
}

impl SteadyOutcome {
    pub fn write_amplification(&self) -> f64 {
        if self.host_writes == 0 {
            f64::NAN // nothing aged: undefined (null in results.json)
        } else {
            (self.host_writes + self.gc_moves) as f64 / self.host_writes as f64
        }
    }
}

/// An aged plane: its blocks, and where its k-th logical page sits (offset of the page in the
/// plane).
pub struct SampleImage {
    pub blocks: PlaneImage,
    pub page_of_rank: Vec<u32>,
    pub host_writes: u64,
    pub gc_moves: u64,
}

/// Maps every page of `mapped` on `ftl` (empty), in the steady state that `drive_writes` times
/// the data in writes by `flows` leaves.
///
/// `progress` hears the fraction of the aging done (every 65,536 page writes); when it returns
/// false the aging stops with an error (the host gave up, e.g. Ctrl-C).
pub fn steady_state(
    ftl: &mut Ftl,
    config: &Config,
    flows: &[FlowModel],
    mapped: &PageSet,
    drive_writes: f64,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<SteadyOutcome, String> {
    let planes = ftl.geometry.planes as usize;
    // Group planes by the flows that write to them.
    let mut writers: Vec<Vec<u16>> = vec![Vec::new(); planes];
    for (f, flow) in flows.iter().enumerate() {
        if flow.weight > 0.0 {
            for &p in &flow.planes {
                writers[p as usize].push(f as u16);
            }
        }
    }
    let mut group_ids: FxHashMap<&[u16], u32> = FxHashMap::default();
    let group_of: Vec<u32> = writers
        .iter()
        .map(|w| {
            let next = group_ids.len() as u32;
            *group_ids.entry(w.as_slice()).or_insert(next)
        })
        .collect();
    let groups = group_ids.len();

    // Pass 1: mapped pages per plane; each group is sampled on its fullest plane.
    let mut count = vec![0u32; planes];
    mapped.for_each(|lpa| count[ftl.home_plane(lpa) as usize] += 1);
    let mut representative = vec![u32::MAX; groups];
    for p in 0..planes {
        let r = &mut representative[group_of[p] as usize];
        if *r == u32::MAX || count[p] > count[*r as usize] {
            *r = p as u32;
        }
    }
    // Pass 2: the representatives' logical pages, in order.
    let mut is_representative = vec![u32::MAX; planes];
    for (g, &p) in representative.iter().enumerate() {
        is_representative[p as usize] = g as u32;
    }
    let mut lists: Vec<Vec<u64>> =
        representative.iter().map(|&p| Vec::with_capacity(count[p as usize] as usize)).collect();
    mapped.for_each(|lpa| {
        let g = is_representative[ftl.home_plane(lpa) as usize];
        if g != u32::MAX {
            lists[g as usize].push(lpa);
        }
    });

    let mut outcome = SteadyOutcome { mapped_pages: mapped.len(), sample_planes: groups as u32, ..Default::default() };
    let mut images = Vec::with_capacity(groups);
    // The aging's page writes, all groups together: each sample's fill plus its aging writes.
    let total: f64 = lists.iter().map(|l| l.len() as f64 * (1.0 + drive_writes)).sum::<f64>().max(1.0);
    let mut done = 0.0;
    for (g, list) in lists.iter().enumerate() {
        let writers_of_group = &writers[representative[g] as usize];
        let mut heard = |pages: u64| progress((done + pages as f64) / total);
        let image = age_sample(config, list, flows, writers_of_group, g as u64, drive_writes, &mut heard)?;
        done += list.len() as f64 * (1.0 + drive_writes);
        outcome.host_writes += image.host_writes;
        outcome.gc_moves += image.gc_moves;
        images.push(image);
    }

    // Every plane takes its group's sample, logical page k of the plane where the sample's k-th
    // page is.
    for p in 0..planes {
        ftl.blocks.import_plane(p as u32, &images[group_of[p] as usize].blocks);
    }
    ftl.blocks.rebase_closed_at();
    let ppb = ftl.geometry.pages_per_block;
    let first_page: Vec<u32> = (0..planes as u32).map(|p| ftl.geometry.first_block_of_plane(p) * ppb).collect();
    let mut rank = vec![0u32; planes];
    mapped.for_each(|lpa| {
        let p = ftl.home_plane(lpa) as usize;
        let offset = images[group_of[p] as usize].page_of_rank[rank[p] as usize];
        rank[p] += 1;
        ftl.map.remap(lpa as u32, first_page[p] + offset);
    });
    // A plane with fewer pages than its sample leaves the sample's extra pages invalid.
    for p in 0..planes {
        let image = &images[group_of[p] as usize];
        for &offset in &image.page_of_rank[rank[p] as usize..] {
            ftl.blocks.invalidate(first_page[p] + offset);
        }
    }
    Ok(outcome)
}

/// Ages one plane holding the logical pages `list` (in rank order) with the writes of the
/// flows in `writers`, and returns its state. `progress` hears the page writes done so far
/// (every [`PROGRESS_PAGES`]); when it returns false the aging stops with an error.
pub fn age_sample(
    config: &Config,
    list: &[u64],
    flows: &[FlowModel],
    writers: &[u16],
    group: u64,
    drive_writes: f64,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<SampleImage, String> {
    // A device of one plane with the configured blocks, policies and thresholds, holding local
    // pages 0..n (rank k stands for `list[k]`).
    let mut one = config.clone();
    (one.flash.channels, one.flash.chips_per_channel, one.flash.dies_per_chip, one.flash.planes_per_die) = (1, 1, 1, 1);
    one.ftl.over_provisioning = 0.0;
    one.ftl.ideal_mapping = true;
    one.ftl.address_domains = AddressDomains::Shared;
    one.precondition.mode = PreconditionMode::None;
    for f in &mut one.flows {
        (f.channels, f.chips, f.dies, f.planes) = (None, None, None, None);
    }
    let geometry = Geometry::new(&one);
    let placement = Placement::new(&one, &geometry).map_err(|e| e.to_string())?;
    let mut ftl = Ftl::new(&one, geometry, placement)?;
    let n = list.len() as u64;
    let capacity = ftl.geometry.physical_pages;
    if n >= capacity {
        return Err(format!(
            "a plane holds {n} pages of data but has {capacity} pages: the data does not fit (lower precondition.occupancy or the flows' working sets)"
        ));
    }
    let mut aging = Aging { ftl: &mut ftl, gc_moves: 0 };
    let heard = |pages: u64, progress: &mut dyn FnMut(u64) -> bool| {
        if pages.is_multiple_of(PROGRESS_PAGES) && !progress(pages) {
            return Err(INTERRUPTED.to_string());
        }
        Ok(())
    };
    for k in 0..n {
        heard(k, progress)?;
        aging.write(k as u32, k)?;
    }
    aging.gc_moves = 0;
    let mut sampler = LocalSampler::new(list, flows, writers, RandomStream::new(config.seed, STREAM_AGING + group));
    let writes = if sampler.is_empty() { 0 } else { (drive_writes * n as f64).round() as u64 };
    for k in 0..writes {
        heard(n + k, progress)?;
        let rank = sampler.next();
        aging.write(rank as u32, n + k)?;
    }
    let gc_moves = aging.gc_moves;
    Ok(SampleImage {
        blocks: ftl.blocks.export_plane(0),
        page_of_rank: (0..n as u32).map(|k| ftl.map.lookup(k)).collect(),
        host_writes: writes,
        gc_moves,
    })
}

/// How often the aging reports its progress, in page writes (a few milliseconds apart).
pub const PROGRESS_PAGES: u64 = 1 << 16;

/// The error of an aging the host stopped through its progress callback.
pub const INTERRUPTED: &str = "interrupted";

/// The untimed write path of the sample plane: place the page, collect victims whenever the
/// plane is below its GC threshold (whole victims at once), as the timed model would between
/// writes.
struct Aging<'a> {
    ftl: &'a mut Ftl,
    gc_moves: u64,
}

impl Aging<'_> {
    fn write(&mut self, lpa: u32, now: u64) -> Result<(), String> {
        if !self.ftl.can_write(0, 0) {
            return Err(full_plane());
        }
        // Aging places pages without the scheduler: each is programmed as it is placed.
        let ppa = self.ftl.write(lpa, 0, Stream::USER, now);
        self.ftl.blocks.note_program(ppa);
        if self.ftl.needs_gc(0) {
            if let Some(victim) = self.ftl.begin_gc(0, now) {
                self.collect(victim, now)?;
                if let Some(victim) = self.ftl.begin_static_wear_leveling(0) {
                    self.collect(victim, now)?;
                }
            }
        }
        Ok(())
    }

    fn collect(&mut self, victim: u32, now: u64) -> Result<(), String> {
        let ppb = self.ftl.geometry.pages_per_block;
        let first = victim * ppb;
        let end = first + self.ftl.blocks.written_pages(victim);
        for ppa in first..end {
            // The forward entries a few pages ahead, as the timed GC asks for them
            // (`PageMap::prefetch_owner`): each check is otherwise a cache miss on its own.
            if ppa + crate::ftl::mapping::OWNER_PREFETCH_PAGES < end {
                self.ftl.map.prefetch_owner(ppa + crate::ftl::mapping::OWNER_PREFETCH_PAGES);
            }
            if self.ftl.map.is_valid(ppa) {
                if !self.ftl.blocks.can_allocate(0, Stream::GC) {
                    return Err(full_plane());
                }
                let lpa = self.ftl.map.owner(ppa);
                let moved = self.ftl.write(lpa, 0, Stream::GC, now);
                self.ftl.blocks.note_program(moved);
                self.gc_moves += 1;
            }
        }
        self.ftl.finish_gc(victim);
        Ok(())
    }
}

fn full_plane() -> String {
    "the sample plane ran out of erased blocks while aging: the data leaves GC too little room (lower precondition.occupancy or the working sets, or raise ftl.over_provisioning)".to_string()
}

/// One flow's writes on the sample plane, as ranks of its logical pages.
enum Local {
    Uniform {
        lo: u64,
        hi: u64,
    },
    HotCold {
        lo: u64,
        mid: u64,
        hi: u64,
        hot_traffic: f64,
    },
    Sequential {
        lo: u64,
        hi: u64,
        next: u64,
    },
    /// Cumulative write counts by rank.
    Table {
        ranks: Vec<u32>,
        cumulative: Vec<u64>,
    },
}

/// Draws the sample plane's page writes: a flow by its share of the plane's writes, then a page
/// by the flow's distribution over the plane's pages.
struct LocalSampler {
    flows: Vec<(f64, Local)>,
    total: f64,
    rng: RandomStream,
}

impl LocalSampler {
    fn new(list: &[u64], flows: &[FlowModel], writers: &[u16], rng: RandomStream) -> Self {
        let rank_of = |page: u64| list.partition_point(|&x| x < page) as u64;
        let mut local = Vec::new();
        let mut total = 0.0;
        for &f in writers {
            let flow = &flows[f as usize];
            // Striping spreads a flow's writes evenly over its planes.
            let mut weight = flow.weight / flow.planes.len().max(1) as f64;
            let dist = match &flow.writes {
                &WriteDist::Uniform { first, end } => Local::Uniform { lo: rank_of(first), hi: rank_of(end) },
                &WriteDist::HotCold { first, hot_end, end, hot_traffic } => {
                    let (lo, mid, hi) = (rank_of(first), rank_of(hot_end), rank_of(end));
                    if mid == lo || mid == hi {
                        Local::Uniform { lo, hi }
                    } else {
                        Local::HotCold { lo, mid, hi, hot_traffic }
                    }
                }
                &WriteDist::Sequential { first, end } => {
                    let (lo, hi) = (rank_of(first), rank_of(end));
                    Local::Sequential { lo, hi, next: lo }
                }
                WriteDist::Counts { pages } => {
                    let all: u64 = pages.iter().map(|&(_, c)| c as u64).sum();
                    let (mut ranks, mut cumulative, mut sum) = (Vec::new(), Vec::new(), 0u64);
                    for &(page, c) in pages {
                        if let Ok(k) = list.binary_search(&page) {
                            sum += c as u64;
                            ranks.push(k as u32);
                            cumulative.push(sum);
                        }
                    }
                    // A trace's writes are not spread evenly: the plane gets what it got.
                    weight = if all == 0 { 0.0 } else { flow.weight * sum as f64 / all as f64 };
                    Local::Table { ranks, cumulative }
                }
            };
            let empty = match &dist {
                Local::Uniform { lo, hi } | Local::Sequential { lo, hi, .. } => hi <= lo,
                Local::HotCold { .. } => false,
                Local::Table { ranks, .. } => ranks.is_empty(),
            };
            if weight > 0.0 && !empty {
                total += weight;
                local.push((total, dist));
            }
        }
        Self { flows: local, total, rng }
    }

    fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    fn next(&mut self) -> u64 {
        let pick = if self.flows.len() == 1 {
            0
        } else {
            let x = self.rng.unit() * self.total;
            self.flows.partition_point(|(cum, _)| *cum <= x).min(self.flows.len() - 1)
        };
        match &mut self.flows[pick].1 {
            Local::Uniform { lo, hi } => *lo + self.rng.below(*hi - *lo),
            Local::HotCold { lo, mid, hi, hot_traffic } => {
                if self.rng.unit() < *hot_traffic {
                    *lo + self.rng.below(*mid - *lo)
                } else {
                    *mid + self.rng.below(*hi - *mid)
                }
            }
            Local::Sequential { lo, hi, next } => {
                let k = *next;
                *next = if k + 1 >= *hi { *lo } else { k + 1 };
                k
            }
            Local::Table { ranks, cumulative } => {
                let x = self.rng.below(*cumulative.last().expect("non-empty table"));
                ranks[cumulative.partition_point(|&c| c <= x)] as u64
            }
        }
    }
}
