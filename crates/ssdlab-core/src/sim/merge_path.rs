//! The request path of the block, hybrid and super-page mapping families (docs/mapping.md): where
//! a host page write goes, and the merges that make room, each of their reads, programs and
//! erases a real flash transaction queued at its die like any other.
//!
//! With page mapping none of this runs: the simulation holds no `FamilyState` and the write
//! path checks one `Option` per page write.
//!
//! Block and hybrid: writes to one logical block are ordered. A write that must merge waits
//! until the block's programs in flight are done; while a merge reads the pages it copies, other
//! host writes to the block join it (their new data takes the place of the copy), so a
//! multi-page write costs one merge; later writes wait until the merge has programmed its new
//! block. The merge then erases the blocks it emptied in the background. A write that needs an
//! erased block (a new data or log block, or a merge's new block) waits when its plane has
//! none to spare; under hybrid mapping that starts a reclaim: the oldest logical block with log
//! blocks on the plane is merged.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::flash_path::sector_mask;
use super::mapping_path::NO_TXN;
use super::Simulation;
use crate::config::{family_name, Config, MappingFamily, PreconditionMode, SuperPageUpdate};
use crate::ftl::block_map::{BlockMapping, MergeKind, WritePlan};
use crate::ftl::blocks::NO_BLOCK;
use crate::ftl::mapping::UNMAPPED;
use crate::ftl::super_page::SuperPages;
use crate::ftl::transaction::{Class, Transaction, TxnKind, NO_REQUEST};
use crate::ftl::Ftl;
use crate::stats::mapping::{MappingSummary, MergeCounts};

const NONE: u32 = u32::MAX;
/// Erased blocks per plane that only merges may take, so a merge can always get its new block.
const MERGE_RESERVE_BLOCKS: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Reading,
    Programming,
    Erasing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MergeOf {
    /// A logical block's switch, partial or full merge.
    Block(MergeKind),
    /// A super-page's read-modify-write.
    SuperPage,
}

struct Merge {
    of: MergeOf,
    /// Logical block or super-page.
    logical: u32,
    plane: u32,
    /// Block the merge programs (a new data block, or the log block of a partial merge).
    dest: u32,
    /// Blocks erased once the programs are done.
    erase: Vec<u32>,
    phase: Phase,
    /// Transactions of the current phase still running.
    pending: u32,
    /// Host page writes that joined: their data replaces the copy of their page.
    host: Vec<u32>,
    /// Pages to copy: (lpa, ppa read), the ppa `UNMAPPED` once a host write replaced the page.
    copies: Vec<(u32, u32)>,
    /// Started to give a plane erased blocks (hybrid reclaim).
    reclaim: bool,
}

#[derive(Default)]
struct Counts {
    merges: [u64; 3],
    super_page_rmw: u64,
    pages_read: u64,
    pages_copied: u64,
    erases: u64,
    in_place: u64,
    to_log: u64,
    in_merges: u64,
    waited_for_merges: u64,
    waited_for_blocks: u64,
}

pub(super) struct FamilyState {
    family: MappingFamily,
    /// Block and hybrid mapping.
    blocks: Option<BlockMapping>,
    /// Per logical block: host programs in flight, the merge running (`NONE`), and the writes
    /// waiting for them (a list through `Transaction::next_waiting`).
    inflight: Vec<u16>,
    active: Vec<u32>,
    wait_head: Vec<u32>,
    wait_tail: Vec<u32>,
    /// Super-page mapping: pages per super-page, the update policy, and the updates reading.
    span: u32,
    update: SuperPageUpdate,
    reading_super_pages: FxHashMap<u32, u32>,
    merges: Vec<Merge>,
    free_merges: Vec<u32>,
    /// Per plane: host writes waiting for an erased block, and whether a reclaim merge runs.
    stalled: Vec<VecDeque<u32>>,
    reclaiming: Vec<bool>,
    counts: Counts,
}

impl FamilyState {
    /// The state of a non-page family (placing the initial data of `precondition = "fill"`), or
    /// `None` with page mapping.
    pub fn build(config: &Config, ftl: &mut Ftl) -> Option<Box<Self>> {
        let family = config.ftl.mapping;
        if family == MappingFamily::Page {
            return None;
        }
        let g = &ftl.geometry;
        let block_mapped = matches!(family, MappingFamily::Block | MappingFamily::Hybrid);
        let blocks = block_mapped.then(|| {
            let mut bm = BlockMapping::new(g, family == MappingFamily::Hybrid, config.ftl.log_blocks_per_data_block);
            if config.precondition.mode == PreconditionMode::Fill {
                let pages = ((g.logical_pages as f64) * config.precondition.occupancy).floor() as u64;
                let dynamic = std::mem::replace(&mut ftl.blocks.dynamic_wear_leveling, false);
                bm.fill(&ftl.geometry, &mut ftl.map, &mut ftl.blocks, pages);
                ftl.blocks.dynamic_wear_leveling = dynamic;
            }
            bm
        });
        let logical_blocks = blocks.as_ref().map_or(0, |b| b.logical_blocks() as usize);
        let g = &ftl.geometry;
        Some(Box::new(Self {
            family,
            blocks,
            inflight: vec![0; logical_blocks],
            active: vec![NONE; logical_blocks],
            wait_head: vec![NONE; logical_blocks],
            wait_tail: vec![NONE; logical_blocks],
            span: config.ftl.super_page_pages.unwrap_or(config.flash.planes_per_die),
            update: config.ftl.super_page_update,
            reading_super_pages: FxHashMap::default(),
            merges: Vec::new(),
            free_merges: Vec::new(),
            stalled: vec![VecDeque::new(); g.planes as usize],
            reclaiming: vec![false; g.planes as usize],
            counts: Counts::default(),
        }))
    }

    pub fn summary(&self) -> MappingSummary {
        let c = &self.counts;
        MappingSummary {
            family: family_name(self.family).to_string(),
            merges: MergeCounts { switch: c.merges[0], partial: c.merges[1], full: c.merges[2] },
            super_page_read_modify_writes: c.super_page_rmw,
            pages_read_by_merges: c.pages_read,
            pages_copied_by_merges: c.pages_copied,
            erases_by_merges: c.erases,
            host_pages_in_place: c.in_place,
            host_pages_to_log_blocks: c.to_log,
            host_pages_in_merges: c.in_merges,
            writes_waited_for_merges: c.waited_for_merges,
            writes_waited_for_blocks: c.waited_for_blocks,
        }
    }

    /// Whether host writes wait on `plane` for an erased block (block and hybrid mapping keep
    /// these apart from page mapping's stalled writes): for the report of a run that stalled.
    pub fn waits_for_blocks(&self, plane: u32) -> bool {
        self.stalled.get(plane as usize).is_some_and(|q| !q.is_empty())
    }

    fn new_merge(&mut self, merge: Merge) -> u32 {
        match self.free_merges.pop() {
            Some(m) => {
                self.merges[m as usize] = merge;
                m
            }
            None => {
                self.merges.push(merge);
                self.merges.len() as u32 - 1
            }
        }
    }

    fn bm(&self) -> &BlockMapping {
        self.blocks.as_ref().expect("block-mapped family")
    }

    fn bm_mut(&mut self) -> &mut BlockMapping {
        self.blocks.as_mut().expect("block-mapped family")
    }
}

impl Simulation {
    fn fam(&mut self) -> &mut FamilyState {
        self.family.as_mut().expect("a non-page mapping family")
    }

    /// A host page write (or a cache flush) under a non-page family: place it, or start the
    /// merge it needs.
    pub(super) fn family_write(&mut self, id: u32) {
        match self.fam().family {
            MappingFamily::Block | MappingFamily::Hybrid => self.block_write(id),
            MappingFamily::SuperPage => self.super_page_write(id),
            MappingFamily::Page => unreachable!("page mapping has no family state"),
        }
    }

    fn block_write(&mut self, id: u32) {
        let lpa = self.txns.get(id).lpa;
        let ppb = self.ftl.geometry.pages_per_block;
        let lbn = lpa / ppb;
        let f = self.family.as_mut().expect("family");
        if f.wait_head[lbn as usize] != NONE {
            return self.wait_for_block(id, lbn);
        }
        let m = f.active[lbn as usize];
        if m != NONE {
            let merge = &mut f.merges[m as usize];
            let joins = merge.phase == Phase::Reading && merge.of == MergeOf::Block(MergeKind::Full);
            if !joins || !join(merge, &self.txns, id, lpa) {
                return self.wait_for_block(id, lbn);
            }
            return;
        }
        let plane = BlockMapping::home_plane(&self.ftl.geometry, lbn);
        let free = self.ftl.blocks.free_blocks(plane);
        let plan = self.family.as_ref().expect("family").bm().plan_write(&self.ftl.blocks, lpa);
        match plan {
            WritePlan::InPlace { block, page } => {
                self.fam().counts.in_place += 1;
                self.program_host_page(id, block, page);
            }
            WritePlan::Log { block, page } => {
                self.fam().counts.to_log += 1;
                self.program_host_page(id, block, page);
            }
            WritePlan::NewDataBlock | WritePlan::NewLog if free <= MERGE_RESERVE_BLOCKS => {
                self.stall_for_block(id, plane);
            }
            WritePlan::NewDataBlock => {
                let block = self.ftl.blocks.open_block(plane).expect("checked free blocks");
                self.fam().bm_mut().set_data_block(lbn, block);
                self.fam().counts.in_place += 1;
                self.program_host_page(id, block, lpa % ppb);
            }
            WritePlan::NewLog => {
                let block = self.ftl.blocks.open_block(plane).expect("checked free blocks");
                self.fam().bm_mut().add_log(lbn, block, plane);
                self.fam().counts.to_log += 1;
                self.program_host_page(id, block, 0);
            }
            WritePlan::Merge if self.fam().inflight[lbn as usize] > 0 => self.wait_for_block(id, lbn),
            WritePlan::Merge if free == 0 => self.stall_for_block(id, plane),
            WritePlan::Merge => self.start_block_merge_with(lbn, MergeKind::Full, Some(id), false),
        }
    }

    /// The write waits until the logical block's merge or programs in flight are done.
    fn wait_for_block(&mut self, id: u32, lbn: u32) {
        let f = self.fam();
        f.counts.waited_for_merges += 1;
        let tail = f.wait_tail[lbn as usize];
        f.wait_tail[lbn as usize] = id;
        if tail == NONE {
            f.wait_head[lbn as usize] = id;
        } else {
            self.txns.get_mut(tail).next_waiting = id;
        }
        self.txns.get_mut(id).next_waiting = NO_TXN;
    }

    /// The write waits until its plane has an erased block to spare (hybrid: reclaim one).
    fn stall_for_block(&mut self, id: u32, plane: u32) {
        let f = self.fam();
        f.counts.waited_for_blocks += 1;
        f.stalled[plane as usize].push_back(id);
        self.reclaim(plane);
    }

    /// Programs a host page at a known place (in place, a log page, or a merge's new block).
    fn program_host_page(&mut self, id: u32, block: u32, page: u32) {
        let lpa = self.txns.get(id).lpa;
        let ppa = self.ftl.blocks.program_at(block, page, self.now());
        let old = self.ftl.map.remap(lpa, ppa);
        if let Some(old) = old {
            self.ftl.blocks.invalidate(old);
        }
        if self.data.is_some() {
            let t = *self.txns.get(id);
            self.data_program(&t, old.unwrap_or(UNMAPPED), ppa);
        }
        let request = self.txns.get(id).request;
        if request != NO_REQUEST {
            // Written past the cache (as under page mapping): cached copies of these sectors are
            // older now, and a later flush of them must not put them back over this page.
            let (_, start, sectors) = self.request_sectors(request);
            let spp = self.ftl.geometry.sectors_per_page;
            let page_start = lpa as u64 * spp;
            let first = start.max(page_start);
            let end = (start + sectors as u64).min(page_start + spp);
            self.cache.forget(lpa, sector_mask(first - page_start, (end - first) as u32), None);
        }
        self.ftl.stats.user_programs += 1;
        let g = &self.ftl.geometry;
        let (plane, spp, lbn) = (g.plane_of_block(block), g.sectors_per_page as u32, lpa / g.pages_per_block);
        let tx = self.txns.get_mut(id);
        tx.ppa = ppa;
        tx.plane = plane;
        tx.sectors = spp;
        let f = self.fam();
        if f.active[lbn as usize] == NONE {
            f.inflight[lbn as usize] += 1;
        }
        self.push_to_die(id, Class::UserWrite, plane);
    }

    /// A host page write finished on flash (called before the usual completion).
    pub(super) fn family_write_done(&mut self, id: u32, t: &Transaction) {
        if self.fam().blocks.is_none() {
            return;
        }
        let lbn = t.lpa / self.ftl.geometry.pages_per_block;
        let f = self.fam();
        let m = f.active[lbn as usize];
        if m != NONE && f.merges[m as usize].phase == Phase::Programming && f.merges[m as usize].host.contains(&id) {
            return self.merge_step_done(m);
        }
        f.inflight[lbn as usize] -= 1;
        if f.inflight[lbn as usize] == 0 && m == NONE {
            self.after_block_idle(lbn);
        }
    }

    /// Nothing runs on the logical block any more: switch a full sequential log block in, and
    /// let the waiting writes go.
    fn after_block_idle(&mut self, lbn: u32) {
        let f = self.family.as_ref().expect("family");
        let bm = f.bm();
        if bm.hybrid
            && bm.logs(lbn).len() == 1
            && bm.merge_kind(&self.ftl.map, &self.ftl.blocks, lbn) == MergeKind::Switch
        {
            self.start_block_merge_with(lbn, MergeKind::Switch, None, false);
        }
        self.release_waiting(lbn);
        // A plane waiting for erased blocks may find its reclaim victim idle now.
        let plane = BlockMapping::home_plane(&self.ftl.geometry, lbn);
        if !self.fam().stalled[plane as usize].is_empty() {
            self.reclaim(plane);
        }
    }

    fn release_waiting(&mut self, lbn: u32) {
        let f = self.fam();
        let mut next = std::mem::replace(&mut f.wait_head[lbn as usize], NONE);
        f.wait_tail[lbn as usize] = NONE;
        while next != NONE && next != NO_TXN {
            let id = next;
            next = self.txns.get(id).next_waiting;
            self.txns.get_mut(id).next_waiting = NO_TXN;
            self.block_write(id);
        }
    }

    /// Hybrid: the plane is short of erased blocks; merge the oldest logical block with log
    /// blocks (one reclaim at a time per plane).
    fn reclaim(&mut self, plane: u32) {
        let f = self.family.as_mut().expect("family");
        if f.reclaiming[plane as usize] || !f.bm().hybrid {
            return;
        }
        let spare = self.ftl.blocks.free_blocks(plane) > 0;
        let (active, inflight) = (&f.active, &f.inflight);
        let ready = |l: u32| active[l as usize] == NONE && inflight[l as usize] == 0;
        let bm = f.blocks.as_mut().expect("hybrid");
        let Some((lbn, kind)) = bm.log_victim(plane, &self.ftl.map, &self.ftl.blocks, spare, ready) else {
            return;
        };
        f.reclaiming[plane as usize] = true;
        self.start_block_merge_with(lbn, kind, None, true);
    }

    /// Starts a merge of `lbn`; a full merge takes the host write that asked for it along.
    fn start_block_merge_with(&mut self, lbn: u32, kind: MergeKind, host: Option<u32>, reclaim: bool) {
        let plane = BlockMapping::home_plane(&self.ftl.geometry, lbn);
        let f = self.family.as_mut().expect("family");
        let bm = f.blocks.as_ref().expect("block-mapped family");
        let data = bm.data_block(lbn);
        let mut erase: Vec<u32> = Vec::with_capacity(1 + bm.logs(lbn).len());
        let (dest, copies) = match kind {
            MergeKind::Full => {
                erase.push(data);
                erase.extend_from_slice(bm.logs(lbn));
                let except = host.map(|id| self.txns.get(id).lpa);
                let copies = bm.current_pages(&self.ftl.map, lbn, except);
                (self.ftl.blocks.open_block(plane).expect("checked free blocks"), copies)
            }
            MergeKind::Partial | MergeKind::Switch => {
                let log = bm.logs(lbn)[0];
                erase.push(data);
                // The data block's offsets the log has not reached yet.
                let first = lbn * self.ftl.geometry.pages_per_block + self.ftl.blocks.written_pages(log);
                let copies = bm
                    .pages_of(lbn)
                    .filter(|&lpa| lpa >= first)
                    .filter_map(|lpa| {
                        let ppa = self.ftl.map.lookup(lpa);
                        (ppa != UNMAPPED).then_some((lpa, ppa))
                    })
                    .collect();
                (log, copies)
            }
        };
        f.counts.merges[kind as usize] += 1;
        let merge = Merge {
            of: MergeOf::Block(kind),
            logical: lbn,
            plane,
            dest,
            erase,
            phase: Phase::Reading,
            pending: 0,
            host: host.into_iter().collect(),
            copies,
            reclaim,
        };
        let m = f.new_merge(merge);
        f.active[lbn as usize] = m;
        self.read_copies(m);
    }

    /// Queues a read of every page the merge copies; with none, goes on to the programs.
    fn read_copies(&mut self, m: u32) {
        let spp = self.ftl.geometry.sectors_per_page as u32;
        let n = self.fam().merges[m as usize].copies.len();
        for i in 0..n {
            let (lpa, ppa) = self.fam().merges[m as usize].copies[i];
            self.queue_txn(TxnKind::MergeRead, m, lpa, ppa, spp);
        }
        let f = self.fam();
        f.counts.pages_read += n as u64;
        f.merges[m as usize].pending = n as u32;
        if n == 0 {
            self.start_programs(m);
        }
    }

    /// A merge's read, program or erase finished.
    pub(super) fn on_merge_txn_done(&mut self, t: &Transaction) {
        if t.kind == TxnKind::MergeErase {
            let block = self.ftl.geometry.block_of_ppa(t.ppa);
            let ppb = self.ftl.geometry.pages_per_block;
            self.ftl.map.clear_physical(block * ppb, ppb);
            self.ftl.blocks.erase(block);
            self.data_erase(block * ppb);
            self.ftl.stats.blocks_erased += 1;
            self.fam().counts.erases += 1;
            self.series_boundary(self.now());
            self.series.sample_gc(self.now(), &self.ftl.stats);
        }
        self.merge_step_done(t.request);
    }

    fn merge_step_done(&mut self, m: u32) {
        let merge = &mut self.fam().merges[m as usize];
        merge.pending -= 1;
        if merge.pending > 0 {
            return;
        }
        match merge.phase {
            Phase::Reading => self.start_programs(m),
            Phase::Programming => self.finish_programs(m),
            Phase::Erasing => self.finish_merge(m),
        }
    }

    /// All reads are in: program the copies (and the host pages that joined) in offset order.
    fn start_programs(&mut self, m: u32) {
        let merge = &mut self.fam().merges[m as usize];
        merge.phase = Phase::Programming;
        if merge.of == MergeOf::SuperPage {
            return self.program_super_page(m);
        }
        let (dest, lbn) = (merge.dest, merge.logical);
        let host = std::mem::take(&mut merge.host);
        let copies = std::mem::take(&mut merge.copies);
        let ppb = self.ftl.geometry.pages_per_block;
        let spp = self.ftl.geometry.sectors_per_page as u32;
        let mut items: Vec<(u32, u32)> = copies
            .iter()
            .filter(|&&(lpa, ppa)| ppa != UNMAPPED && self.ftl.map.lookup(lpa) == ppa)
            .map(|&(lpa, _)| (lpa, NONE))
            .chain(host.iter().map(|&id| (self.txns.get(id).lpa, id)))
            .collect();
        items.sort_unstable();
        let f = self.fam();
        f.merges[m as usize].pending = items.len() as u32;
        f.merges[m as usize].host = host;
        f.counts.in_merges += f.merges[m as usize].host.len() as u64;
        debug_assert_eq!(f.active[lbn as usize], m);
        for &(lpa, id) in &items {
            if id != NONE {
                self.program_host_page(id, dest, lpa % ppb);
                continue;
            }
            let ppa = self.ftl.blocks.program_at(dest, lpa % ppb, self.now());
            if let Some(old) = self.ftl.map.remap(lpa, ppa) {
                self.ftl.blocks.invalidate(old);
                self.data_move(old, ppa);
            }
            self.ftl.stats.gc_programs += 1;
            self.fam().counts.pages_copied += 1;
            self.queue_txn(TxnKind::MergeWrite, m, lpa, ppa, spp);
        }
        if items.is_empty() {
            self.finish_programs(m);
        }
    }

    /// The new data block is written: it replaces the old one (and the log blocks), which are
    /// erased; writes waiting for the logical block may go.
    fn finish_programs(&mut self, m: u32) {
        let f = self.fam();
        let merge = &mut f.merges[m as usize];
        if merge.of == MergeOf::SuperPage {
            return self.finish_merge(m);
        }
        let (lbn, dest) = (merge.logical, merge.dest);
        let erase = std::mem::take(&mut merge.erase);
        merge.phase = Phase::Erasing;
        merge.pending = erase.iter().filter(|&&b| b != NO_BLOCK).count() as u32;
        f.active[lbn as usize] = NONE;
        f.bm_mut().finish_merge(lbn, dest);
        for &block in erase.iter().filter(|&&b| b != NO_BLOCK) {
            debug_assert_eq!(self.ftl.blocks.valid_pages(block), 0, "a merge erases a block with current data");
            self.queue_block_erase(TxnKind::MergeErase, m, block);
        }
        if self.fam().merges[m as usize].pending == 0 {
            self.finish_merge(m);
        }
        self.after_block_idle(lbn);
    }

    fn finish_merge(&mut self, m: u32) {
        let f = self.fam();
        let merge = &f.merges[m as usize];
        let (plane, reclaim, super_page) = (merge.plane, merge.reclaim, merge.of == MergeOf::SuperPage);
        f.free_merges.push(m);
        if super_page {
            return;
        }
        if reclaim {
            f.reclaiming[plane as usize] = false;
        }
        // Writes that waited for an erased block try again.
        let stalled = std::mem::take(&mut f.stalled[plane as usize]);
        for id in stalled {
            self.block_write(id);
        }
    }
}

/// Super-page mapping (Amber): one entry per super-page of `span` consecutive logical pages, one
/// page on each plane of its span (the first `span` planes of the allocation stripe).
impl Simulation {
    fn super_page_write(&mut self, id: u32) {
        let t = *self.txns.get(id);
        let f = self.family.as_mut().expect("family");
        let (span, update) = (f.span, f.update);
        let sp = t.lpa / span;
        if update == SuperPageUpdate::Remap {
            return self.enqueue_page_write(id);
        }
        if let Some(&m) = f.reading_super_pages.get(&sp) {
            if join(&mut f.merges[m as usize], &self.txns, id, t.lpa) {
                return;
            }
            return self.enqueue_page_write(id);
        }
        // The pages of the super-page this write's request covers come along; the others that
        // hold data must be read and written again with them.
        let spp = self.ftl.geometry.sectors_per_page;
        let (first, last) = if t.request == NO_REQUEST {
            (t.lpa as u64, t.lpa as u64)
        } else {
            let (_, start, sectors) = self.request_sectors(t.request);
            (start / spp, (start + sectors as u64 - 1) / spp)
        };
        let copies =
            SuperPages::new(span, self.ftl.geometry.logical_pages).rest_to_rewrite(&self.ftl.map, t.lpa, first, last);
        if copies.is_empty() {
            return self.enqueue_page_write(id);
        }
        let plane = self.ftl.home_plane(t.lpa as u64);
        let f = self.fam();
        f.counts.super_page_rmw += 1;
        let m = f.new_merge(Merge {
            of: MergeOf::SuperPage,
            logical: sp,
            plane,
            dest: NO_BLOCK,
            erase: Vec::new(),
            phase: Phase::Reading,
            pending: 0,
            host: vec![id],
            copies,
            reclaim: false,
        });
        f.reading_super_pages.insert(sp, m);
        self.read_copies(m);
    }

    /// The rest of the super-page is in the controller: write it with the new pages, each page
    /// to the next free page of its plane (page allocation and GC as under page mapping).
    fn program_super_page(&mut self, m: u32) {
        let f = self.fam();
        let merge = &mut f.merges[m as usize];
        let sp = merge.logical;
        let host = std::mem::take(&mut merge.host);
        let copies = std::mem::take(&mut merge.copies);
        f.reading_super_pages.remove(&sp);
        f.counts.in_merges += host.len() as u64;
        let spp = self.ftl.geometry.sectors_per_page as u32;
        let mut placed = 0;
        for &(lpa, ppa) in &copies {
            if ppa == UNMAPPED || self.ftl.map.lookup(lpa) != ppa {
                continue;
            }
            let plane = self.ftl.home_plane(lpa as u64);
            let id =
                self.insert_txn(Transaction::new(TxnKind::MergeWrite, m, lpa, spp, self.now()).at(UNMAPPED, plane));
            placed += 1;
            self.enqueue_page_write(id);
        }
        self.fam().counts.pages_copied += placed as u64;
        self.fam().merges[m as usize].pending = placed;
        for id in host {
            self.enqueue_page_write(id);
        }
        if placed == 0 {
            self.finish_merge(m);
        }
    }
}

/// A host write of `lpa` joins a merge that is still reading: its data replaces the copy of its
/// page. Refused when a host write of the same page has joined already (it waits instead).
fn join(merge: &mut Merge, txns: &crate::engine::Slab<Transaction>, id: u32, lpa: u32) -> bool {
    if merge.host.iter().any(|&h| txns.get(h).lpa == lpa) {
        return false;
    }
    merge.host.push(id);
    for copy in merge.copies.iter_mut().filter(|c| c.0 == lpa) {
        copy.1 = UNMAPPED;
    }
    true
}
