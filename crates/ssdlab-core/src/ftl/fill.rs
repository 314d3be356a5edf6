//! Fill preconditioning (`precondition.mode = "fill"`): the data placed directly, without
//! simulating its writes, in the packed or the aged (spread) layout, and MQSim's translation
//! pages written before the first request.
//!
//! Both layouts cost in proportion to the pages they place (issue 18: the 512 GiB drive filled
//! to 75 % in about 0.3 s): under static allocation over the whole device a counter tracks each
//! page's plane (no division or owner lookup per page), and each table is written in an order
//! that keeps its writes near each other. Meanwhile a second thread has the kernel fault in the
//! reverse entries the fill will write ([`super::table_memory`]): the first touch of a table page
//! is a zeroing in the kernel, about half of the fill's time on one thread (0.20-0.24 s -> 0.14 s
//! for that drive, docs/limits.md).

use super::blocks::Stream;
use super::mapping::UNMAPPED;
use super::table_memory::Populating;
use super::Ftl;
use crate::config::geometry::first_of_residue;
use crate::config::FillLayout;

/// Reverse entries below this many bytes are left to the placement to fault in: a thread is not
/// worth starting for them.
const POPULATE_MIN_BYTES: usize = 32 << 20;

impl Ftl {
    /// Maps logical pages `0..occupancy * logical_pages` directly, without simulating the writes.
    /// The translation pages that describe those logical pages are placed too (unless the mapping
    /// table is ideal), since a cached mapping table reads them on a miss.
    pub(super) fn fill(&mut self, occupancy: f64, layout: FillLayout) {
        let filled = ((self.geometry.logical_pages as f64) * occupancy).floor() as u64;
        if filled == 0 {
            return;
        }
        let g = &self.geometry;
        let tpages = if g.translation_pages == 0 { 0 } else { filled.div_ceil(g.entries_per_translation_page) };
        match layout {
            FillLayout::Packed => {
                let first_tpage = g.logical_pages;
                self.fill_packed(0..filled);
                self.fill_packed(first_tpage..first_tpage + tpages);
            }
            FillLayout::Spread => {
                let mut placed = vec![0u64; g.planes as usize];
                let first_tpage = g.logical_pages;
                self.fill_spread(0..filled, &mut placed);
                self.fill_spread(first_tpage..first_tpage + tpages, &mut placed);
                self.close_spread(&placed);
            }
        }
    }

    /// Packed layout: each plane's pages in the order its logical pages come, in its blocks
    /// from the free pool, as if each were allocated and written in turn (the same state), but
    /// a block at a time: the pages each plane takes are counted first, so each run of a block
    /// is taken whole ([`BlockManager::allocate_run`]) and only the map is written per page.
    fn fill_packed(&mut self, lpas: std::ops::Range<u64>) {
        let g = &self.geometry;
        let planes = g.planes as usize;
        // Under static allocation over the whole device the plane follows `lpa % planes`, which
        // a counter tracks without dividing (translation pages take the general path).
        let by_residue = self.placement.is_whole_device() && lpas.end <= g.logical_pages;
        let mut left = vec![0u32; planes];
        if by_residue {
            for r in 0..planes as u32 {
                let plane = g.plane_of_residue(r);
                left[plane as usize] += pages_of_residue(&lpas, u64::from(r), planes as u64) as u32;
            }
        } else {
            for lpa in lpas.clone() {
                left[self.home_plane(lpa) as usize] += 1;
            }
        }
        if by_residue {
            self.fill_packed_by_residue(lpas, &left);
        } else {
            self.fill_packed_in_turn(lpas, left);
        }
    }

    /// [`Self::fill_packed`]'s general path: each page in logical order, its plane asked of
    /// [`Self::home_plane`], both tables written together. `left` holds the pages each plane
    /// takes.
    fn fill_packed_in_turn(&mut self, lpas: std::ops::Range<u64>, mut left: Vec<u32>) {
        let planes = self.geometry.planes as usize;
        // Per plane: the next page of its current run and the pages the run has left.
        let mut next = vec![0u32; planes];
        let mut run = vec![0u32; planes];
        for lpa in lpas {
            let plane = self.home_plane(lpa) as usize;
            if run[plane] == 0 {
                let (first, pages, _) = self.blocks.allocate_run(plane as u32, Stream::USER, left[plane], 0);
                (next[plane], run[plane]) = (first, pages);
                left[plane] -= pages;
            }
            self.map.remap(lpa as u32, next[plane]);
            next[plane] += 1;
            run[plane] -= 1;
        }
    }

    /// [`Self::fill_packed`] under static allocation over the whole device, where plane p takes
    /// the range's pages of its residue, in order. Written in logical order, the reverse table
    /// takes one store per plane in turn, a hundred and more interleaved streams that stall on
    /// their cache misses (70 % of the fill's time in a perf profile of the 512 GiB drive), so
    /// each plane's runs are taken first (the same blocks in the same order: planes allocate
    /// independently), then the forward table is written in logical order and each plane's
    /// reverse entries in physical order.
    fn fill_packed_by_residue(&mut self, lpas: std::ops::Range<u64>, left: &[u32]) {
        let g = &self.geometry;
        let planes = g.planes as usize;
        // Each plane's runs (first page, pages), in allocation order.
        let mut runs: Vec<Vec<(u32, u32)>> = vec![Vec::new(); planes];
        for (plane, (&pages, runs)) in left.iter().zip(&mut runs).enumerate() {
            let mut left = pages;
            while left > 0 {
                let (first, pages, _) = self.blocks.allocate_run(plane as u32, Stream::USER, left, 0);
                runs.push((first, pages));
                left -= pages;
            }
        }
        // The reverse entries these runs take are faulted in on a second thread while this one
        // writes the forward table (see `table_memory`).
        let physical: Vec<(u64, u64)> = runs
            .iter()
            .flatten()
            .map(|&(first, pages)| (u64::from(first), u64::from(first) + u64::from(pages)))
            .collect();
        let _populating = self.populate_reverse(&physical);
        // Per plane: the run it is in, the next page of that run and the pages it has left.
        let mut at = vec![0usize; planes];
        let mut next = vec![0u32; planes];
        let mut run = vec![0u32; planes];
        for (lpa, plane) in lpas.clone().zip(g.planes_from(lpas.start)) {
            let plane = plane as usize;
            if run[plane] == 0 {
                (next[plane], run[plane]) = runs[plane][at[plane]];
                at[plane] += 1;
            }
            self.map.place_forward(lpa as u32, next[plane]);
            next[plane] += 1;
            run[plane] -= 1;
        }
        for r in 0..planes as u64 {
            let plane = g.plane_of_residue(r as u32) as usize;
            let mut lpa = first_of_residue(lpas.start, r, planes as u64);
            for &(first, pages) in &runs[plane] {
                for ppa in first..first + pages {
                    self.map.place_reverse(ppa, lpa as u32);
                    lpa += planes as u64;
                }
            }
        }
    }

    /// Writes every translation page that is not on flash yet, without timing, as MQSim does
    /// before its first request (`ftl.translation_pages_at_start = "all"`): afterwards every
    /// cached-mapping-table miss reads a translation page. Each goes to the plane static
    /// allocation gives its address, like the translation pages a fill places.
    pub fn store_all_translation_pages(&mut self) {
        let g = &self.geometry;
        let (first, end) = (g.logical_pages, g.logical_pages + g.translation_pages);
        let dynamic = std::mem::replace(&mut self.blocks.dynamic_wear_leveling, false);
        for lpa in first..end {
            if self.map.lookup(lpa as u32) == UNMAPPED {
                let plane = self.home_plane(lpa);
                let (ppa, _) = self.blocks.allocate(plane, Stream::USER, 0);
                self.map.remap(lpa as u32, ppa);
            }
        }
        self.blocks.dynamic_wear_leveling = dynamic;
    }

    /// Aged layout: each plane's data is dealt round robin over all but the GC threshold's worth of
    /// blocks, so every used block holds a similar share of valid pages and the rest is invalid.
    /// `placed` counts each plane's pages so far (the user pages, then the translation pages);
    /// [`Self::close_spread`] then marks the blocks full.
    fn fill_spread(&mut self, lpas: std::ops::Range<u64>, placed: &mut [u64]) {
        let g = &self.geometry;
        let used_blocks = (g.blocks_per_plane - self.gc_threshold_blocks) as u64;
        if self.placement.is_whole_device() && lpas.end <= g.logical_pages {
            self.fill_spread_by_residue(lpas, placed, used_blocks);
        } else {
            self.fill_spread_in_turn(lpas, placed, used_blocks);
        }
    }

    /// [`Self::fill_spread`]'s general path: each page in logical order, its plane asked of
    /// [`Self::home_plane`], both tables written together.
    fn fill_spread_in_turn(&mut self, lpas: std::ops::Range<u64>, placed: &mut [u64], used_blocks: u64) {
        let (ppb, blocks_per_plane) = (self.geometry.pages_per_block as u64, self.geometry.blocks_per_plane as u64);
        let mut dealers: Vec<Dealer> = placed.iter().map(|&k| Dealer::at(k, used_blocks)).collect();
        for lpa in lpas {
            let plane = self.home_plane(lpa);
            let ppa = dealers[plane as usize].deal(plane as u64 * blocks_per_plane, ppb, used_blocks);
            self.map.remap(lpa as u32, ppa);
        }
        for (placed, dealer) in placed.iter_mut().zip(&dealers) {
            *placed = dealer.dealt(used_blocks);
        }
    }

    /// [`Self::fill_spread`] under static allocation over the whole device, where plane p takes
    /// the range's pages of its residue, in order. Dealt round robin, consecutive pages land a
    /// block apart, so writing both tables in logical order stalls on a cache miss per page of
    /// the reverse one: the forward table is written in logical order (a counter tracks the
    /// plane), then each plane's reverse entries in physical order.
    fn fill_spread_by_residue(&mut self, lpas: std::ops::Range<u64>, placed: &mut [u64], used_blocks: u64) {
        let g = &self.geometry;
        let planes = g.planes as usize;
        let (ppb, blocks_per_plane) = (g.pages_per_block as u64, g.blocks_per_plane as u64);
        let start = placed.to_vec();
        // The reverse entries the range takes are faulted in on a second thread while this one
        // writes the forward table (see `table_memory`), where they are known to cover their
        // memory: a range from each plane's first page (the data's; the translation pages that
        // follow are few).
        let physical: Vec<(u64, u64)> = if start.iter().all(|&k| k == 0) {
            let entry = u64::from(self.map.bytes_per_entry());
            (0..planes as u32)
                .filter_map(|r| {
                    let plane = u64::from(g.plane_of_residue(r));
                    let pages = pages_of_residue(&lpas, u64::from(r), planes as u64);
                    spread_reverse_run(plane * blocks_per_plane * ppb, pages, used_blocks, ppb, entry)
                })
                .collect()
        } else {
            Vec::new()
        };
        let _populating = self.populate_reverse(&physical);
        let mut dealers: Vec<Dealer> = placed.iter().map(|&k| Dealer::at(k, used_blocks)).collect();
        for (lpa, plane) in lpas.clone().zip(g.planes_from(lpas.start)) {
            let ppa = dealers[plane as usize].deal(plane as u64 * blocks_per_plane, ppb, used_blocks);
            self.map.place_forward(lpa as u32, ppa);
        }
        for (placed, dealer) in placed.iter_mut().zip(&dealers) {
            *placed = dealer.dealt(used_blocks);
        }
        for r in 0..planes as u64 {
            let plane = g.plane_of_residue(r as u32) as u64;
            let (k0, k1) = (start[plane as usize], placed[plane as usize]);
            // The range's first page of residue r is the plane's page k0.
            let first_lpa = first_of_residue(lpas.start, r, planes as u64);
            for j in 0..used_blocks.min(k1) {
                // Page i of used block j is the plane's page k = i * used_blocks + j: the block's
                // pages in physical order are every used_blocks-th of the plane's.
                let mut k = j + k0.saturating_sub(j).div_ceil(used_blocks) * used_blocks;
                let mut ppa = (plane * blocks_per_plane + j) * ppb + k / used_blocks;
                let mut lpa = first_lpa + (k - k0) * planes as u64;
                while k < k1 {
                    self.map.place_reverse(ppa as u32, lpa as u32);
                    k += used_blocks;
                    ppa += 1;
                    lpa += used_blocks * planes as u64;
                }
            }
        }
    }

    /// Has a second thread fault in the reverse entries of the physical pages in `runs` while
    /// this one goes on placing pages, until the returned guard is dropped; nothing where they
    /// are too few to be worth a thread.
    fn populate_reverse(&self, runs: &[(u64, u64)]) -> Option<Populating> {
        let memory = self.map.reverse_memory(runs);
        // SAFETY: the tables are this map's, never replaced, and outlive the guard, which the
        // caller holds only while it places pages (borrowing `self` again, not replacing it).
        (memory.bytes() >= POPULATE_MIN_BYTES).then(|| unsafe { memory.populate_in_background() })
    }

    fn close_spread(&mut self, placed: &[u64]) {
        let g = &self.geometry;
        let used_blocks = (g.blocks_per_plane - self.gc_threshold_blocks) as u64;
        for plane in 0..g.planes {
            let n = placed[plane as usize];
            let valid: Vec<u16> =
                (0..used_blocks).map(|j| (n / used_blocks + u64::from(j < n % used_blocks)) as u16).collect();
            self.blocks.place_full_blocks(plane, &valid);
        }
    }
}

/// The logical pages of `lpas` whose residue modulo `planes` is `r`.
fn pages_of_residue(lpas: &std::ops::Range<u64>, r: u64, planes: u64) -> u64 {
    // Logical pages below `x` of residue `r`.
    let below = |x: u64| x / planes + u64::from(r < x % planes);
    below(lpas.end) - below(lpas.start)
}

/// The physical pages (one run, from the plane's `first_page`) whose reverse entries the aged
/// layout writes when it deals a plane's first `pages` pages round robin over `used_blocks`
/// blocks of `ppb` pages, if every memory page (4 KiB) of the run holds one of them; else
/// `None`. Each block then takes at least `pages / used_blocks` pages from its start, so the
/// run is the blocks taken, and a memory page lies wholly in a block's unwritten tail only if
/// that tail is a page or longer.
fn spread_reverse_run(first_page: u64, pages: u64, used_blocks: u64, ppb: u64, entry_bytes: u64) -> Option<(u64, u64)> {
    const MEMORY_PAGE_BYTES: u64 = 4096;
    let blocks = pages.min(used_blocks);
    let least_per_block = (pages / used_blocks.max(1)).max(1);
    let tail_bytes = ppb.saturating_sub(least_per_block) * entry_bytes;
    (blocks > 0 && tail_bytes < MEMORY_PAGE_BYTES).then_some((first_page, first_page + blocks * ppb))
}

/// Where the aged layout puts a plane's next page: its k-th page goes to page k / used_blocks
/// of its used block k % used_blocks (dealt round robin), tracked as that block and page so
/// that stepping to the next page carries instead of dividing (the two 64-bit divisions per
/// page were a third of the 512 GiB fill's instructions, callgrind).
#[derive(Clone, Copy)]
struct Dealer {
    block: u64,
    page: u64,
}

impl Dealer {
    /// At the plane's page `k`.
    fn at(k: u64, used_blocks: u64) -> Self {
        Self { block: k % used_blocks, page: k / used_blocks }
    }

    /// The pages dealt so far (the next page's k).
    fn dealt(self, used_blocks: u64) -> u64 {
        self.page * used_blocks + self.block
    }

    /// The physical page of the next page of the plane whose first block is `first_block`.
    #[inline]
    fn deal(&mut self, first_block: u64, pages_per_block: u64, used_blocks: u64) -> u32 {
        let ppa = (first_block + self.block) * pages_per_block + self.page;
        self.block += 1;
        if self.block == used_blocks {
            (self.block, self.page) = (0, self.page + 1);
        }
        ppa as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::flash::Geometry;
    use crate::ftl::placement::Placement;

    /// An empty FTL with no preconditioning (allocation order `order`).
    fn empty(order: &str) -> Ftl {
        let text = format!(
            "[ftl]\nideal_mapping = true\nover_provisioning = 0.25\nallocation = \"{order}\"\n\
             [flash]\nchannels = 3\nchips_per_channel = 2\ndies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 32\npages_per_block = 16\npage_size = \"4KiB\"\n\
             [precondition]\nmode = \"none\"\n[[flows]]\nqueue_depth = 1\nrequests = 1\n"
        );
        let config = Config::from_toml_str(&text).unwrap();
        let geometry = Geometry::new(&config);
        let placement = Placement::new(&config, &geometry).unwrap();
        Ftl::new(&config, geometry, placement).unwrap()
    }

    /// The pages each plane takes of `lpas`, by asking every page's plane.
    fn pages_per_plane(ftl: &Ftl, lpas: std::ops::Range<u64>) -> Vec<u32> {
        let mut left = vec![0u32; ftl.geometry.planes as usize];
        lpas.for_each(|lpa| left[ftl.home_plane(lpa) as usize] += 1);
        left
    }

    #[test]
    fn packed_fill_by_residue_leaves_the_tables_and_blocks_page_by_page_placement_does() {
        for order in ["CWDP", "PDWC", "WCDP", "DPCW"] {
            let logical = empty(order).geometry.logical_pages;
            // Ranges that start and end mid-stripe and mid-block, one of a single page.
            for lpas in [0..logical, 5..logical * 3 / 5 + 7, 13..14, 0..logical / 2] {
                let (mut in_turn, mut by_residue) = (empty(order), empty(order));
                let left = pages_per_plane(&in_turn, lpas.clone());
                in_turn.fill_packed_in_turn(lpas.clone(), left.clone());
                by_residue.fill_packed_by_residue(lpas.clone(), &left);
                let what = format!("{order} {lpas:?}");
                for lpa in 0..logical as u32 {
                    assert_eq!(in_turn.map.lookup(lpa), by_residue.map.lookup(lpa), "{what}: lpa {lpa}");
                }
                let physical = in_turn.geometry.planes * 32 * 16;
                for ppa in 0..physical {
                    assert_eq!(in_turn.map.owner(ppa), by_residue.map.owner(ppa), "{what}: ppa {ppa}");
                }
                assert_eq!(in_turn.map.mapped_pages(), lpas.end - lpas.start, "{what}");
                assert_eq!(by_residue.map.mapped_pages(), lpas.end - lpas.start, "{what}");
                for plane in 0..in_turn.geometry.planes {
                    assert_eq!(in_turn.blocks.export_plane(plane), by_residue.blocks.export_plane(plane), "{what}");
                }
                by_residue.map.check_agreement().unwrap_or_else(|e| panic!("{what}: {e}"));
            }
        }
    }

    #[test]
    fn spread_fill_deals_each_planes_pages_round_robin_over_its_used_blocks_on_both_paths() {
        for order in ["CWDP", "PDWC", "WCDP", "DPCW"] {
            let logical = empty(order).geometry.logical_pages;
            // A first range, then a second one that goes on from where each plane stopped (as
            // the translation pages follow the user pages).
            for (first, second) in
                [(0..logical, 0..0), (5..logical * 3 / 5 + 7, logical * 3 / 5 + 9..logical), (13..14, 20..21)]
            {
                let (mut in_turn, mut by_residue) = (empty(order), empty(order));
                let used = (in_turn.geometry.blocks_per_plane - in_turn.gc_threshold_blocks) as u64;
                let planes = in_turn.geometry.planes as usize;
                let (mut placed_in_turn, mut placed_by_residue) = (vec![0u64; planes], vec![0u64; planes]);
                for lpas in [first.clone(), second.clone()] {
                    in_turn.fill_spread_in_turn(lpas.clone(), &mut placed_in_turn, used);
                    by_residue.fill_spread_by_residue(lpas, &mut placed_by_residue, used);
                }
                let what = format!("{order} {first:?} {second:?}");
                assert_eq!(placed_in_turn, placed_by_residue, "{what}");
                // The k-th page a plane takes is page k / used of its block k % used.
                let mut k = vec![0u64; planes];
                for lpa in first.clone().chain(second.clone()) {
                    let plane = in_turn.home_plane(lpa);
                    let block = in_turn.geometry.first_block_of_plane(plane) as u64 + k[plane as usize] % used;
                    let ppa = (block * 16 + k[plane as usize] / used) as u32;
                    k[plane as usize] += 1;
                    assert_eq!(in_turn.map.lookup(lpa as u32), ppa, "{what}: lpa {lpa}");
                    assert_eq!(by_residue.map.lookup(lpa as u32), ppa, "{what}: lpa {lpa}");
                    assert_eq!(by_residue.map.owner(ppa), lpa as u32, "{what}: ppa {ppa}");
                }
                assert_eq!(k, placed_in_turn, "{what}");
                let physical = in_turn.geometry.planes * 32 * 16;
                for ppa in 0..physical {
                    assert_eq!(in_turn.map.owner(ppa), by_residue.map.owner(ppa), "{what}: ppa {ppa}");
                }
                by_residue.map.check_agreement().unwrap_or_else(|e| panic!("{what}: {e}"));
            }
        }
    }

    /// The aged layout's reverse entries are faulted in as one run per plane only where every
    /// 4 KiB page of the run takes one of them.
    #[test]
    fn spread_reverse_run_covers_only_memory_the_fill_writes() {
        // MQSim's plane 75 % full (256 pages a block, 1,946 used blocks, 4-byte entries): every
        // used block takes about 190 pages, its unwritten tail is well under a page.
        assert_eq!(spread_reverse_run(1_000, 370_000, 1_946, 256, 4), Some((1_000, 1_000 + 1_946 * 256)));
        // Fewer pages than blocks: the first `pages` blocks take one page each.
        assert_eq!(spread_reverse_run(0, 100, 1_946, 256, 4), Some((0, 100 * 256)));
        // 2,048 pages a block of 4-byte entries with one page each: most of each block's 8 KiB of
        // entries stays unwritten, so nothing is faulted in ahead.
        assert_eq!(spread_reverse_run(0, 500, 1_000, 2_048, 4), None);
        // Nothing to place.
        assert_eq!(spread_reverse_run(0, 0, 1_000, 256, 4), None);
    }
}
