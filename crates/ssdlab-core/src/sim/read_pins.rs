//! User reads in flight and the blocks they read. A read is translated when its mapping is
//! known and reaches its die later (behind other work, a CMT miss, a suspended program); in
//! between, GC or a merge may move the page and erase its block, and the block may even be
//! programmed again, so the read would return an erased page or another page's data. A
//! controller keeps a block from being erased while reads of it are in flight: MQSim's block
//! manager counts them (`Block_Pool_Slot_Type::Ongoing_user_read_count`, incremented when a
//! read is issued and decremented when it is serviced) and its GC unit only erases a block once
//! `Can_execute_gc_wl` finds none. The erase of a pinned block is deferred here the same way:
//! it is queued when the block's last read is done.
//!
//! A read of a page the FTL never mapped is timed on a stand-in page (`Ftl::read_target`) but
//! returns zeros, so it pins nothing; it is remembered, since a later write may be given that
//! very page and the stand-in must not be taken for the read's mapping.

use rustc_hash::{FxHashMap, FxHashSet};

use super::Simulation;
use crate::ftl::mapping::UNMAPPED;
use crate::ftl::transaction::{Transaction, TxnKind};

pub(super) struct ReadPins {
    /// User reads (transaction ids) in flight translated to no mapping.
    unmapped: FxHashSet<u32>,
    /// Per block: user reads in flight translated to one of its pages. A plain array rather
    /// than a map: every user read pins and unpins, and two hash probes each were 3 % of a
    /// random-read run's instructions (callgrind). Zero pages from the OS until a block is
    /// first read, so a drive that is never read costs nothing here (4 bytes per block at most:
    /// 32 MiB for the 8.4 M blocks of a 32 TiB drive).
    per_block: Vec<u32>,
    /// Per block: its erase (kind and `request` field of the erase transaction), waiting for
    /// the block's reads.
    deferred_erases: FxHashMap<u32, (TxnKind, u32)>,
}

impl ReadPins {
    pub(super) fn new(blocks: u32) -> Self {
        Self {
            unmapped: FxHashSet::default(),
            per_block: vec![0; blocks as usize],
            deferred_erases: FxHashMap::default(),
        }
    }
}

impl Simulation {
    /// User read `id` of `lpa` is translated now (before it takes its target page): pin the
    /// block its page is in, or remember that the page is unmapped.
    pub(super) fn pin_read(&mut self, id: u32, lpa: u32) {
        let ppa = self.ftl.map.lookup(lpa);
        if ppa == UNMAPPED {
            self.read_pins.unmapped.insert(id);
        } else {
            let block = self.ftl.geometry.block_of_ppa(ppa);
            self.read_pins.per_block[block as usize] += 1;
        }
    }

    /// User read `id` (transaction `t`) is done: unpin its block (queueing an erase that waited
    /// for it) and return the physical page it was translated to, or `UNMAPPED` when its page
    /// was unmapped.
    pub(super) fn unpin_read(&mut self, id: u32, t: &Transaction) -> u32 {
        // (The sets are empty in most runs: no hashing then.)
        if !self.read_pins.unmapped.is_empty() && self.read_pins.unmapped.remove(&id) {
            return UNMAPPED;
        }
        let block = self.ftl.geometry.block_of_ppa(t.ppa);
        let n = &mut self.read_pins.per_block[block as usize];
        debug_assert!(*n > 0, "a mapped read in flight pins its block");
        *n -= 1;
        if *n == 0 && !self.read_pins.deferred_erases.is_empty() {
            if let Some((kind, request)) = self.read_pins.deferred_erases.remove(&block) {
                self.queue_erase_now(kind, request, block);
            }
        }
        t.ppa
    }

    /// The page user read `id` (in flight) was translated to (`UNMAPPED`: none), or `None`
    /// before its translation.
    pub(super) fn read_translated_to(&self, id: u32) -> Option<u32> {
        if !self.read_pins.unmapped.is_empty() && self.read_pins.unmapped.contains(&id) {
            return Some(UNMAPPED);
        }
        let ppa = self.txns.get(id).ppa;
        (ppa != UNMAPPED).then_some(ppa)
    }

    /// Queues the erase of `block` (`kind` is `Erase` or `MergeErase`, `request` the erase
    /// transaction's `request` field), or defers it while reads of the block are in flight.
    pub(super) fn queue_block_erase(&mut self, kind: TxnKind, request: u32, block: u32) {
        if self.read_pins.per_block[block as usize] > 0 {
            let earlier = self.read_pins.deferred_erases.insert(block, (kind, request));
            debug_assert!(earlier.is_none(), "one erase of a block at a time");
            return;
        }
        self.queue_erase_now(kind, request, block);
    }

    fn queue_erase_now(&mut self, kind: TxnKind, request: u32, block: u32) {
        let ppa = block * self.ftl.geometry.pages_per_block;
        self.queue_txn(kind, request, UNMAPPED, ppa, 0);
    }
}
