//! Block-level and hybrid (log-block) mapping: where a host page write goes, and which merge
//! reclaims a logical block's log blocks. Pure bookkeeping; `sim/merge_path.rs` turns the
//! decisions into flash transactions.
//!
//! A logical block (LBN = logical page / pages per block) owns one data block on its home plane
//! (logical blocks are striped over the planes in `ftl.allocation` order), and logical page
//! offset `o` lives at page `o` of it. Pages of a block are programmed in order, so a write can
//! go in place only at or above the block's write pointer (pages it skips are lost until the
//! block is erased). Block mapping copies the whole block to a fresh one for any other update (a
//! full merge). The hybrid family (BAST, Kim et al., IEEE TCE 2002, with up to
//! `ftl.log_blocks_per_data_block` log blocks per data block as SimpleSSD's baseline) appends
//! such updates to page-mapped log blocks of the same logical block and reclaims them by one of
//! three merges (names from FAST, Lee et al., ACM TECS 2007):
//! - switch: the only log block holds offsets 0..n in order: it becomes the data block and the
//!   old data block is erased;
//! - partial: the only log block holds offsets 0..k in order: the rest of the data block is
//!   copied into it, then it is switched in;
//! - full: the current version of every offset is copied to a new data block, and the data
//!   block and all log blocks are erased.
//!
//! The page-level map (`PageMap`) still records where every logical page currently is: it is
//! the functional truth that reads, invariant checks and merges consult, while this module
//! decides placement the way a block-mapped FTL would.

use std::collections::VecDeque;

use super::blocks::{BlockManager, NO_BLOCK};
use super::mapping::{PageMap, UNMAPPED};
use crate::flash::Geometry;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeKind {
    Switch,
    Partial,
    Full,
}

/// Where a host page write to a block-mapped logical block goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WritePlan {
    /// Page `page` (the logical offset) of the data block: a plain program.
    InPlace { block: u32, page: u32 },
    /// The logical block was never written: open a data block, then write in place.
    NewDataBlock,
    /// Hybrid: the next page of the logical block's current log block.
    Log { block: u32, page: u32 },
    /// Hybrid: open another log block for the logical block.
    NewLog,
    /// Block mapping: copy-on-write of the whole block; hybrid: every log block is full. A
    /// full merge that takes the write along.
    Merge,
}

pub struct BlockMapping {
    pub hybrid: bool,
    pages_per_block: u32,
    logical_pages: u64,
    max_logs: u32,
    /// Per logical block: its data block (`NO_BLOCK` when never written).
    data: Vec<u32>,
    /// Per logical block: `max_logs` slots of log blocks, the first `log_count` used, oldest first.
    logs: Vec<u32>,
    log_count: Vec<u8>,
    /// Per plane: logical blocks in the order they took their first log block (reclaim order,
    /// oldest first, as FAST's round-robin log victim). Entries of blocks merged since are
    /// skipped when met.
    log_fifo: Vec<VecDeque<u32>>,
}

impl BlockMapping {
    pub fn new(geometry: &Geometry, hybrid: bool, max_logs: u32) -> Self {
        let logical_blocks = geometry.logical_pages.div_ceil(geometry.pages_per_block as u64) as usize;
        let max_logs = if hybrid { max_logs } else { 0 };
        Self {
            hybrid,
            pages_per_block: geometry.pages_per_block,
            logical_pages: geometry.logical_pages,
            max_logs,
            data: vec![NO_BLOCK; logical_blocks],
            logs: vec![NO_BLOCK; logical_blocks * max_logs as usize],
            log_count: vec![0; if hybrid { logical_blocks } else { 0 }],
            log_fifo: vec![VecDeque::new(); geometry.planes as usize],
        }
    }

    pub fn logical_blocks(&self) -> u32 {
        self.data.len() as u32
    }

    /// The plane a logical block lives on: logical blocks are striped over the planes like
    /// logical pages are under page mapping.
    #[inline]
    pub fn home_plane(geometry: &Geometry, lbn: u32) -> u32 {
        geometry.plane_of_lpa(lbn as u64)
    }

    #[inline]
    pub fn data_block(&self, lbn: u32) -> u32 {
        self.data[lbn as usize]
    }

    /// The logical block's log blocks, oldest first.
    pub fn logs(&self, lbn: u32) -> &[u32] {
        if !self.hybrid {
            return &[];
        }
        let start = lbn as usize * self.max_logs as usize;
        &self.logs[start..start + self.log_count[lbn as usize] as usize]
    }

    /// The logical pages of a logical block (the last one may be short).
    pub fn pages_of(&self, lbn: u32) -> std::ops::Range<u32> {
        let first = lbn as u64 * self.pages_per_block as u64;
        let end = (first + self.pages_per_block as u64).min(self.logical_pages);
        first as u32..end as u32
    }

    /// Where a write of logical page `lpa` goes now.
    pub fn plan_write(&self, blocks: &BlockManager, lpa: u32) -> WritePlan {
        let (lbn, offset) = (lpa / self.pages_per_block, lpa % self.pages_per_block);
        let data = self.data[lbn as usize];
        if data == NO_BLOCK {
            return WritePlan::NewDataBlock;
        }
        // An offset at or above the write pointer was never written in this block, and no log
        // holds it (a log only takes offsets below the data block's write pointer, which only
        // grows): the write can go in place.
        if offset >= blocks.written_pages(data) {
            return WritePlan::InPlace { block: data, page: offset };
        }
        if !self.hybrid {
            return WritePlan::Merge;
        }
        if let Some(&log) = self.logs(lbn).last() {
            let page = blocks.written_pages(log);
            if page < self.pages_per_block {
                return WritePlan::Log { block: log, page };
            }
        }
        if (self.log_count[lbn as usize] as u32) < self.max_logs {
            WritePlan::NewLog
        } else {
            WritePlan::Merge
        }
    }

    pub fn set_data_block(&mut self, lbn: u32, block: u32) {
        self.data[lbn as usize] = block;
    }

    /// Gives the logical block another log block (on its home plane).
    pub fn add_log(&mut self, lbn: u32, block: u32, plane: u32) {
        let n = self.log_count[lbn as usize] as usize;
        debug_assert!(n < self.max_logs as usize);
        self.logs[lbn as usize * self.max_logs as usize + n] = block;
        self.log_count[lbn as usize] += 1;
        if n == 0 {
            self.log_fifo[plane as usize].push_back(lbn);
        }
    }

    /// After a merge: the logical block's data block is `block` and it has no log blocks.
    pub fn finish_merge(&mut self, lbn: u32, block: u32) {
        self.data[lbn as usize] = block;
        if self.hybrid {
            self.log_count[lbn as usize] = 0;
        }
    }

    /// Whether the log block's pages hold offsets 0, 1, 2 ... in order, all still current: it
    /// can replace the data block by a switch merge (full) or a partial merge (not full).
    pub fn is_sequential(&self, map: &PageMap, blocks: &BlockManager, lbn: u32, log: u32) -> bool {
        let first_lpa = lbn * self.pages_per_block;
        let first_ppa = log * self.pages_per_block;
        (0..blocks.written_pages(log)).all(|i| map.lookup(first_lpa + i) == first_ppa + i)
    }

    /// The merge that reclaims the logical block's log blocks.
    pub fn merge_kind(&self, map: &PageMap, blocks: &BlockManager, lbn: u32) -> MergeKind {
        match self.logs(lbn) {
            &[log] if self.is_sequential(map, blocks, lbn, log) => {
                let written = blocks.written_pages(log);
                let end = self.pages_of(lbn).len() as u32;
                if written >= end {
                    MergeKind::Switch
                } else {
                    MergeKind::Partial
                }
            }
            _ => MergeKind::Full,
        }
    }

    /// The logical block of `plane` whose log blocks are the oldest among those `ready` accepts
    /// (no merge or program of it in flight), with the merge that reclaims them, for when the
    /// plane runs out of erased blocks. Without an erased block to spare only switch and
    /// partial merges (which need none) qualify.
    pub fn log_victim(
        &mut self,
        plane: u32,
        map: &PageMap,
        blocks: &BlockManager,
        block_to_spare: bool,
        ready: impl Fn(u32) -> bool,
    ) -> Option<(u32, MergeKind)> {
        let fifo = &mut self.log_fifo[plane as usize];
        while fifo.front().is_some_and(|&l| self.log_count[l as usize] == 0) {
            fifo.pop_front();
        }
        let (position, lbn, kind) = self.log_fifo[plane as usize].iter().enumerate().find_map(|(i, &l)| {
            if self.log_count[l as usize] == 0 || !ready(l) {
                return None;
            }
            let kind = self.merge_kind(map, blocks, l);
            (block_to_spare || kind != MergeKind::Full).then_some((i, l, kind))
        })?;
        self.log_fifo[plane as usize].remove(position);
        Some((lbn, kind))
    }

    /// The latest copy of every page of the logical block, for a full merge: (lpa, ppa) in
    /// offset order, leaving out `except`.
    pub fn current_pages(&self, map: &PageMap, lbn: u32, except: Option<u32>) -> Vec<(u32, u32)> {
        self.pages_of(lbn)
            .filter(|&lpa| Some(lpa) != except)
            .filter_map(|lpa| {
                let ppa = map.lookup(lpa);
                (ppa != UNMAPPED).then_some((lpa, ppa))
            })
            .collect()
    }

    /// Maps logical pages `0..pages` directly into data blocks, as a freshly filled drive
    /// (`precondition = "fill"`).
    pub fn fill(&mut self, geometry: &Geometry, map: &mut PageMap, blocks: &mut BlockManager, pages: u64) {
        for lpa in 0..pages as u32 {
            let lbn = lpa / self.pages_per_block;
            if self.data[lbn as usize] == NO_BLOCK {
                let block =
                    blocks.open_block(Self::home_plane(geometry, lbn)).expect("validated: every logical block fits");
                self.data[lbn as usize] = block;
            }
            let ppa = blocks.program_at(self.data[lbn as usize], lpa % self.pages_per_block, 0);
            map.remap(lpa, ppa);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// One plane of 16 blocks of 4 pages; 8 logical blocks.
    fn setup(hybrid: bool, logs: u32) -> (Geometry, PageMap, BlockManager, BlockMapping) {
        let text = "[flash]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 1\nblocks_per_plane = 16\npages_per_block = 4\n[ftl]\nover_provisioning = 0.5\nideal_mapping = true\n[[flows]]\nqueue_depth = 1\nrequests = 1\n";
        let config = Config::from_toml_str(text).unwrap();
        let g = Geometry::new(&config);
        let map = PageMap::new(g.logical_pages, g.physical_pages).unwrap();
        let blocks = BlockManager::new(&g, false, 1000, 1, 0).unwrap();
        let bm = BlockMapping::new(&g, hybrid, logs);
        (g, map, blocks, bm)
    }

    /// Applies a write the way the simulation does when no merge is needed.
    fn write(map: &mut PageMap, blocks: &mut BlockManager, bm: &mut BlockMapping, lpa: u32) -> WritePlan {
        let plan = bm.plan_write(blocks, lpa);
        let (block, page) = match plan {
            WritePlan::InPlace { block, page } | WritePlan::Log { block, page } => (block, page),
            WritePlan::NewDataBlock => {
                let b = blocks.open_block(0).unwrap();
                bm.set_data_block(lpa / 4, b);
                (b, lpa % 4)
            }
            WritePlan::NewLog => {
                let b = blocks.open_block(0).unwrap();
                bm.add_log(lpa / 4, b, 0);
                (b, 0)
            }
            WritePlan::Merge => return plan,
        };
        let ppa = blocks.program_at(block, page, 0);
        if let Some(old) = map.remap(lpa, ppa) {
            blocks.invalidate(old);
        }
        plan
    }

    #[test]
    fn block_mapping_places_pages_at_their_offset_and_merges_on_overwrite() {
        let (_, mut map, mut blocks, mut bm) = setup(false, 1);
        assert_eq!(write(&mut map, &mut blocks, &mut bm, 5), WritePlan::NewDataBlock);
        let data = bm.data_block(1);
        assert_eq!(map.lookup(5), data * 4 + 1, "offset 1 of the logical block is page 1 of its block");
        // Offset 3 is above the write pointer: in place.
        assert_eq!(write(&mut map, &mut blocks, &mut bm, 7), WritePlan::InPlace { block: data, page: 3 });
        // Offset 2 is below it (pages are programmed in order), offset 1 is written: merges.
        assert_eq!(bm.plan_write(&blocks, 6), WritePlan::Merge);
        assert_eq!(bm.plan_write(&blocks, 5), WritePlan::Merge);
        assert_eq!(bm.current_pages(&map, 1, Some(5)), vec![(7, data * 4 + 3)]);
    }

    #[test]
    fn hybrid_sequential_overwrite_fills_one_log_and_switches() {
        let (_, mut map, mut blocks, mut bm) = setup(true, 2);
        for lpa in 0..4 {
            write(&mut map, &mut blocks, &mut bm, lpa);
        }
        let data = bm.data_block(0);
        for lpa in 0..4 {
            assert!(matches!(write(&mut map, &mut blocks, &mut bm, lpa), WritePlan::NewLog | WritePlan::Log { .. }));
        }
        let log = bm.logs(0)[0];
        assert_ne!(log, data);
        assert!(bm.is_sequential(&map, &blocks, 0, log));
        assert_eq!(bm.merge_kind(&map, &blocks, 0), MergeKind::Switch);
        assert_eq!(blocks.valid_pages(data), 0, "the data block holds nothing current: erase only");
    }

    #[test]
    fn hybrid_sequential_prefix_is_a_partial_merge_and_random_updates_a_full_one() {
        let (_, mut map, mut blocks, mut bm) = setup(true, 2);
        for lpa in 0..8 {
            write(&mut map, &mut blocks, &mut bm, lpa);
        }
        write(&mut map, &mut blocks, &mut bm, 0);
        write(&mut map, &mut blocks, &mut bm, 1);
        assert_eq!(bm.merge_kind(&map, &blocks, 0), MergeKind::Partial);
        // Random offsets in the log of logical block 1.
        write(&mut map, &mut blocks, &mut bm, 6);
        write(&mut map, &mut blocks, &mut bm, 4);
        assert_eq!(bm.merge_kind(&map, &blocks, 1), MergeKind::Full);
        // Two log blocks per data block: once both are full, the next update needs a merge.
        for lpa in [5, 7, 4, 6, 5, 7] {
            write(&mut map, &mut blocks, &mut bm, lpa);
        }
        assert_eq!(bm.logs(1).len(), 2);
        assert_eq!(bm.plan_write(&blocks, 4), WritePlan::Merge);
        // The oldest logical block with logs is reclaimed first.
        assert_eq!(bm.log_victim(0, &map, &blocks, false, |l| l != 0), None, "block 1 needs a full merge");
        assert_eq!(bm.log_victim(0, &map, &blocks, true, |_| true), Some((0, MergeKind::Partial)));
        assert_eq!(bm.log_victim(0, &map, &blocks, true, |_| true), Some((1, MergeKind::Full)));
    }

    #[test]
    fn fill_maps_pages_in_place() {
        let (g, mut map, mut blocks, mut bm) = setup(true, 8);
        bm.fill(&g, &mut map, &mut blocks, 10);
        for lpa in 0..10 {
            let ppa = map.lookup(lpa);
            assert_eq!(ppa / 4, bm.data_block(lpa / 4));
            assert_eq!(ppa % 4, lpa % 4);
        }
        assert_eq!(map.lookup(10), UNMAPPED);
    }
}
