//! Fill preconditioning (`precondition.mode = "fill"`): the data placed directly, without
//! simulating its writes, in the packed or the aged (spread) layout, and MQSim's translation
//! pages written before the first request.
//!
//! Both layouts cost in proportion to the pages they place (issue 18: the 512 GiB drive filled
//! to 75 % in about 0.3 s): under static allocation over the whole device a counter tracks each
//! page's plane (no division or owner lookup per page), and each table is written in an order
//! that keeps its writes near each other.

use super::blocks::Stream;
use super::mapping::UNMAPPED;
use super::Ftl;
use crate::config::geometry::first_of_residue;
use crate::config::FillLayout;

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
            // Logical pages below `x` of residue `r`.
            let below = |x: u64, r: u64| x / planes as u64 + u64::from(r < x % planes as u64);
            for r in 0..planes as u32 {
                let plane = g.plane_of_residue(r);
                left[plane as usize] += (below(lpas.end, r as u64) - below(lpas.start, r as u64)) as u32;
            }
        } else {
            for lpa in lpas.clone() {
                left[self.home_plane(lpa) as usize] += 1;
            }
        }
        // Per plane: the next page of its current run and the pages the run has left.
        let mut next = vec![0u32; planes];
        let mut run = vec![0u32; planes];
        let mut planes_of = by_residue.then(|| g.planes_from(lpas.start));
        for lpa in lpas {
            let plane = match &mut planes_of {
                Some(walk) => walk.next().expect("the walk cycles"),
                None => self.home_plane(lpa),
            } as usize;
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
        let planes = g.planes as usize;
        let used_blocks = (g.blocks_per_plane - self.gc_threshold_blocks) as u64;
        let ppb = g.pages_per_block as u64;
        // The k-th page a plane takes: dealt round robin over its used blocks.
        let ppa_of =
            |plane: u32, k: u64| (g.first_block_of_plane(plane) as u64 + k % used_blocks) * ppb + k / used_blocks;
        if !(self.placement.is_whole_device() && lpas.end <= g.logical_pages) {
            for lpa in lpas {
                let plane = self.home_plane(lpa);
                let k = placed[plane as usize];
                placed[plane as usize] += 1;
                self.map.remap(lpa as u32, ppa_of(plane, k) as u32);
            }
            return;
        }
        // Static allocation over the whole device: plane p takes the range's pages of its
        // residue, in order. Dealt round robin, consecutive pages land a block apart, so writing
        // both tables in logical order stalls on a cache miss per page of the reverse one: the
        // forward table is written in logical order (a counter tracks the plane), then each
        // plane's reverse entries in physical order.
        let start = placed.to_vec();
        for (lpa, plane) in lpas.clone().zip(g.planes_from(lpas.start)) {
            let k = placed[plane as usize];
            placed[plane as usize] += 1;
            self.map.place_forward(lpa as u32, ppa_of(plane, k) as u32);
        }
        for r in 0..planes as u64 {
            let plane = g.plane_of_residue(r as u32);
            let (k0, k1) = (start[plane as usize], placed[plane as usize]);
            // The range's first page of residue r is the plane's page k0.
            let first_lpa = first_of_residue(lpas.start, r, planes as u64);
            for j in 0..used_blocks.min(k1) {
                // Page i of used block j is the plane's page k = i * used_blocks + j.
                let mut k = j + k0.saturating_sub(j).div_ceil(used_blocks) * used_blocks;
                while k < k1 {
                    let lpa = first_lpa + (k - k0) * planes as u64;
                    self.map.place_reverse(ppa_of(plane, k) as u32, lpa as u32);
                    k += used_blocks;
                }
            }
        }
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
