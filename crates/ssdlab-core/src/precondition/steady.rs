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
use crate::config::geometry::first_of_residue;
use crate::config::{AddressDomains, Config, PreconditionMode};
use crate::engine::RandomStream;
use crate::flash::Geometry;
use crate::ftl::blocks::{BlockManager, PlaneImage, Stream};
use crate::ftl::implied::{inverse, ImpliedPlacement, Segment, MAX_SEGMENTS_PER_PLANE};
use crate::ftl::placement::Placement;
use crate::ftl::Ftl;

/// Tables smaller than this are faulted in by the thread that places the pages alone: they take
/// a fraction of a second (the 1 TB bench drive has 0.5 GiB of them), and a sweep that already
/// runs a process per core gains nothing from a second thread in each.
const POPULATE_MIN_BYTES: usize = 1 << 30;

/// With the placement kept as its rule, only the forward entries are faulted in beside the
/// aging, and from this size: the 4 TiB bench drive's 0.95 GiB of them, faulted in by its
/// 100,000 writes' GC moves on the simulation's thread, cost 2.5 s more than beside the aging;
/// the 1 TB drive's 0.24 GiB took as long either way.
const POPULATE_FORWARD_MIN_BYTES: usize = 256 << 20;

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
    // Static allocation alone decides a page's plane unless flows have pages of their own; then
    // each plane's pages are found from its residue, without a pass over the set per question.
    let by_residue = match ftl.geometry.residue_of_plane() {
        Some(residue) if ftl.placement.is_whole_device() => Some(ByResidue::new(mapped, residue, MAX_RUNS)),
        _ => None,
    };
    let count: Vec<u32> = match &by_residue {
        Some(walk) => (0..planes).map(|p| walk.count_of_plane(p)).collect(),
        None => {
            let mut count = vec![0u32; planes];
            mapped.for_each(|lpa| count[ftl.home_plane(lpa) as usize] += 1);
            count
        }
    };
    let mut representative = vec![u32::MAX; groups];
    for p in 0..planes {
        let r = &mut representative[group_of[p] as usize];
        if *r == u32::MAX || count[p] > count[*r as usize] {
            *r = p as u32;
        }
    }
    // Pass 2: the representatives' logical pages, in order.
    let mut lists: Vec<Vec<u64>> =
        representative.iter().map(|&p| Vec::with_capacity(count[p as usize] as usize)).collect();
    match &by_residue {
        Some(walk) => {
            for (g, &p) in representative.iter().enumerate() {
                walk.for_each_of_plane(p as usize, |lpa| lists[g].push(lpa));
            }
        }
        None => {
            let mut is_representative = vec![u32::MAX; planes];
            for (g, &p) in representative.iter().enumerate() {
                is_representative[p as usize] = g as u32;
            }
            mapped.for_each(|lpa| {
                let g = is_representative[ftl.home_plane(lpa) as usize];
                if g != u32::MAX {
                    lists[g as usize].push(lpa);
                }
            });
        }
    }

    // While the samples age (on one core), another thread faults the map's tables in, so that the
    // placement after the aging writes them without waiting on the kernel (see `TableMemory`).
    // Only the forward entries of the mapped runs (all of them for a set too scattered to keep
    // as runs) and the reverse table, and only when at least half the logical space is mapped:
    // the mapped pages then lie on nearly every page of the reverse table. So the populating
    // touches no more than placement would, and the peak memory stays the same.
    // Where the placement is kept as its rule ([`imply_by_plane`]), only the forward entries
    // the run's writes will touch are faulted in, and none of the reverse table.
    let implied = by_residue.as_ref().is_some_and(ByResidue::can_imply);
    let forward_runs = mapped.runs(MAX_RUNS);
    let table_memory = ftl.map.table_memory(forward_runs.as_deref(), !implied);
    // With the placement kept as its rule nothing here writes the tables: the run's writes (and
    // its GC's moves, spread over the whole forward table) would fault them in one page at a
    // time on the simulation's thread, so the forward entries are faulted in beside the aging
    // if any flow writes.
    let writes = flows.iter().any(|f| f.weight > 0.0);
    let populate = mapped.len() * 2 >= ftl.map.logical_pages()
        && if implied {
            writes && table_memory.bytes() >= POPULATE_FORWARD_MIN_BYTES
        } else {
            table_memory.bytes() >= POPULATE_MIN_BYTES
        };
    let mut age_and_place = || {
        let mut outcome =
            SteadyOutcome { mapped_pages: mapped.len(), sample_planes: groups as u32, ..Default::default() };
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
        let import_blocks = |blocks: &mut BlockManager| {
            for p in 0..planes {
                blocks.import_plane(p as u32, &images[group_of[p] as usize].blocks);
            }
            blocks.rebase_closed_at();
        };
        let ppb = ftl.geometry.pages_per_block;
        let first_page: Vec<u32> = (0..planes as u32).map(|p| ftl.geometry.first_block_of_plane(p) * ppb).collect();
        let rank = match &by_residue {
            Some(walk) if implied => {
                import_blocks(&mut ftl.blocks);
                imply_by_plane(ftl, walk, &images, &group_of)
            }
            Some(walk) => place_by_plane(ftl, walk, &images, &group_of, &first_page, import_blocks),
            None => {
                import_blocks(&mut ftl.blocks);
                place_in_order(ftl, mapped, &images, &group_of, &first_page)
            }
        };
        // A plane with fewer pages than its sample leaves the sample's extra pages invalid.
        for p in 0..planes {
            let image = &images[group_of[p] as usize];
            for &offset in &image.page_of_rank[rank[p] as usize..] {
                ftl.blocks.invalidate(first_page[p] + offset);
            }
        }
        Ok(outcome)
    };
    if populate {
        // SAFETY: `ftl`, and with it the tables, is borrowed for the whole of this function and
        // nothing here replaces the tables.
        unsafe { table_memory.while_populating(age_and_place) }
    } else {
        age_and_place()
    }
}

/// Places every mapped page where its plane's sample put the page of its rank, in logical
/// order; returns each plane's mapped pages. The general case (flows with pages of their own).
///
/// Consecutive logical pages land on different planes, so the reverse table is written at
/// random over the drive: each entry is placed PLACE_AHEAD pages after it is computed, with its
/// reverse entry asked for meanwhile, to overlap those cache misses.
fn place_in_order(
    ftl: &mut Ftl,
    mapped: &PageSet,
    images: &[SampleImage],
    group_of: &[u32],
    first_page: &[u32],
) -> Vec<u32> {
    let mut rank = vec![0u32; first_page.len()];
    let mut ahead = [(0u32, 0u32); PLACE_AHEAD];
    let mut computed = 0usize;
    mapped.for_each(|lpa| {
        let p = ftl.home_plane(lpa) as usize;
        let offset = images[group_of[p] as usize].page_of_rank[rank[p] as usize];
        rank[p] += 1;
        let ppa = first_page[p] + offset;
        ftl.map.prefetch_reverse(ppa);
        let slot = &mut ahead[computed % PLACE_AHEAD];
        if computed >= PLACE_AHEAD {
            ftl.map.remap(slot.0, slot.1);
        }
        *slot = (lpa as u32, ppa);
        computed += 1;
    });
    for k in computed.saturating_sub(PLACE_AHEAD)..computed {
        let (lpa, ppa) = ahead[k % PLACE_AHEAD];
        ftl.map.remap(lpa, ppa);
    }
    rank
}

/// The same placement when static allocation alone decides each page's plane (plane = a
/// function of the page's residue modulo the planes). The forward table is written in logical
/// order, and the blocks' states imported (`import_blocks`), while a second thread writes the
/// reverse table in physical order, a plane at a time: each page of the plane takes the logical
/// page of its rank in the sample (the inverse of `page_of_rank`), so both tables are written
/// sequentially. Both end as [`place_in_order`] leaves them. On a 32 TiB drive (1,024 planes of
/// 2 M pages) the three parts took 6.6 s, 4.0 s and, walking each plane's logical pages and
/// writing its reverse entries at random over 6 MiB, 14.6 s one after the other (issue 18).
/// A set of pages too scattered to keep as runs is placed on one thread, each plane's reverse
/// entries in logical order.
fn place_by_plane(
    ftl: &mut Ftl,
    walk: &ByResidue,
    images: &[SampleImage],
    group_of: &[u32],
    first_page: &[u32],
    import_blocks: impl FnOnce(&mut BlockManager),
) -> Vec<u32> {
    let planes = first_page.len();
    let g = &ftl.geometry;
    let plane_pages = g.blocks_per_plane as usize * g.pages_per_block as usize;
    let (mut forward, mut reverse) = ftl.map.placers();
    let blocks = &mut ftl.blocks;
    let mut forward_pass = || {
        let mut rank = vec![0u32; planes];
        let mut place = |lpa: u64, p: usize| {
            let offset = images[group_of[p] as usize].page_of_rank[rank[p] as usize];
            rank[p] += 1;
            forward.place(lpa as u32, first_page[p] + offset);
        };
        match &walk.runs {
            Some(runs) => {
                for &(first, end) in runs {
                    for (lpa, plane) in (first..end).zip(g.planes_from(first)) {
                        place(lpa, plane as usize);
                    }
                }
            }
            None => walk.mapped.for_each(|lpa| place(lpa, g.plane_of_lpa(lpa) as usize)),
        }
        rank
    };
    if walk.runs.is_none() {
        import_blocks(blocks);
        let rank = forward_pass();
        for p in 0..planes {
            let page_of_rank = &images[group_of[p] as usize].page_of_rank;
            let mut k = 0usize;
            walk.for_each_of_plane(p, |lpa| {
                reverse.place(first_page[p] + page_of_rank[k], lpa as u32);
                k += 1;
            });
            debug_assert_eq!(k, rank[p] as usize, "plane {p}: the residue walk found another count of pages");
        }
        return rank;
    }
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let rank_of_page: Vec<Vec<u32>> =
                images.iter().map(|image| inverse(&image.page_of_rank, plane_pages)).collect();
            for p in 0..planes {
                let segments = walk.segments_of_plane(p);
                let count = walk.count_of_plane(p);
                for (offset, &k) in rank_of_page[group_of[p] as usize].iter().enumerate() {
                    if k < count {
                        reverse.place(first_page[p] + offset as u32, walk.lpa_of_rank(&segments, k) as u32);
                    }
                }
            }
        });
        import_blocks(blocks);
        let rank = forward_pass();
        debug_assert!((0..planes).all(|p| rank[p] == walk.count_of_plane(p)), "the residue walk found another count");
        rank
    })
}

/// The same placement kept as its rule ([`ImpliedPlacement`]) rather than written into the
/// tables, when static allocation alone decides each page's plane and the mapped pages form
/// few runs; returns each plane's mapped pages. The tables stay untouched: a 32 TiB drive's
/// placement wrote 2 G entries into each (4 GiB of forward and 6 GiB of reverse table pages
/// faulted in), about 15 s on two threads, for a run that may rewrite a few percent of them.
fn imply_by_plane(ftl: &mut Ftl, walk: &ByResidue, images: &[SampleImage], group_of: &[u32]) -> Vec<u32> {
    let g = &ftl.geometry;
    let planes = g.planes as usize;
    let count: Vec<u32> = (0..planes).map(|p| walk.count_of_plane(p)).collect();
    let segments = (0..planes).map(|p| {
        let segments = walk.segments_of_plane(p);
        segments.into_iter().map(|(first_rank, first_lpa)| Segment { first_rank, first_lpa }).collect()
    });
    let rule = ImpliedPlacement::new(
        (0..g.planes).map(|r| g.plane_of_residue(r)).collect(),
        g.blocks_per_plane * g.pages_per_block,
        g.pages_per_block,
        group_of.to_vec(),
        images.iter().map(|image| image.page_of_rank.clone()).collect(),
        count.clone(),
        segments,
    );
    ftl.map.imply(rule);
    count
}

/// The mapped pages of each plane when static allocation alone places them: plane p holds the
/// pages of one residue modulo the plane count, so its pages are that residue's in each run of
/// the set (or, for a set of too many runs, every plane-count-th page's bit).
struct ByResidue<'a> {
    mapped: &'a PageSet,
    /// The residue of each plane.
    residue: Vec<u32>,
    runs: Option<Vec<(u64, u64)>>,
    step: u64,
}

impl<'a> ByResidue<'a> {
    fn new(mapped: &'a PageSet, residue: Vec<u32>, max_runs: usize) -> Self {
        let step = residue.len() as u64;
        Self { mapped, residue, runs: mapped.runs(max_runs), step }
    }

    /// Whether the placement can be kept as its rule ([`imply_by_plane`]): the set as few runs.
    fn can_imply(&self) -> bool {
        self.runs.as_ref().is_some_and(|runs| runs.len() <= MAX_SEGMENTS_PER_PLANE)
    }

    /// The first page of `[first, end)` of `plane`'s residue (may be `end` or past it).
    #[inline]
    fn first_of_plane(&self, plane: usize, first: u64) -> u64 {
        first_of_residue(first, self.residue[plane] as u64, self.step)
    }

    /// Calls `f` with each mapped page of `plane`, in increasing order.
    fn for_each_of_plane(&self, plane: usize, mut f: impl FnMut(u64)) {
        match &self.runs {
            Some(runs) => {
                for &(first, end) in runs {
                    let mut lpa = self.first_of_plane(plane, first);
                    while lpa < end {
                        f(lpa);
                        lpa += self.step;
                    }
                }
            }
            None => {
                let mut lpa = self.residue[plane] as u64;
                while lpa < self.mapped.universe() {
                    if self.mapped.contains(lpa) {
                        f(lpa);
                    }
                    lpa += self.step;
                }
            }
        }
    }

    /// The mapped pages of `plane` as arithmetic runs (step the plane count): for each run of
    /// the set that holds some, the rank of its first page on the plane and that page. Needs
    /// the set as runs.
    fn segments_of_plane(&self, plane: usize) -> Vec<(u32, u64)> {
        let mut segments = Vec::new();
        let mut rank = 0u64;
        for &(first, end) in self.runs.as_deref().unwrap_or_default() {
            let lpa = self.first_of_plane(plane, first);
            if lpa < end {
                segments.push((rank as u32, lpa));
                rank += (end - 1 - lpa) / self.step + 1;
            }
        }
        segments
    }

    /// The logical page of rank `k` on the plane whose `segments` these are.
    #[inline]
    fn lpa_of_rank(&self, segments: &[(u32, u64)], k: u32) -> u64 {
        let (first_rank, first_lpa) = match segments {
            [only] => *only,
            _ => segments[segments.partition_point(|&(r, _)| r <= k) - 1],
        };
        first_lpa + u64::from(k - first_rank) * self.step
    }

    /// How many mapped pages `plane` holds.
    fn count_of_plane(&self, plane: usize) -> u32 {
        match &self.runs {
            Some(runs) => runs
                .iter()
                .map(|&(first, end)| {
                    let lpa = self.first_of_plane(plane, first);
                    if lpa < end {
                        (end - 1 - lpa) / self.step + 1
                    } else {
                        0
                    }
                })
                .sum::<u64>() as u32,
            None => {
                let mut n = 0;
                self.for_each_of_plane(plane, |_| n += 1);
                n
            }
        }
    }
}

/// Above this many runs of consecutive pages (a trace's scattered pages), placing by plane tests
/// each page's bit instead of walking runs.
const MAX_RUNS: usize = 1 << 16;

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

/// How many pages the placement pass computes ahead of the one it writes (see
/// [`PageMap::prefetch_reverse`](crate::ftl::mapping::PageMap::prefetch_reverse)): about the
/// cache misses a core keeps in flight.
const PLACE_AHEAD: usize = 16;

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

#[cfg(test)]
#[path = "steady_tests.rs"]
mod tests;
