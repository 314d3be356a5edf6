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

use rustc_hash::FxHashMap;

use super::Simulation;
use crate::ftl::mapping::UNMAPPED;
use crate::ftl::transaction::{Transaction, TxnKind};

pub(super) struct ReadPins {
    /// User reads (transaction ids) in flight translated to no mapping.
    unmapped: IdSet,
    /// Per block: user reads in flight translated to one of its pages, up to 255 (the rest in
    /// `past_255`). A plain array rather than a map: every user read pins and unpins, and two
    /// hash probes each were 3 % of a random-read run's instructions (callgrind). One byte, not
    /// four: random reads touch it at random, and a quarter of the size (256 KiB on MQSim's
    /// default drive) stays in the level-2 cache: 3 M random reads, median 0.893 -> 0.871 s
    /// (five alternated runs). Zero pages from the OS until a block is first read, so a drive
    /// that is never read costs nothing here (8 MiB for the 8.4 M blocks of a 32 TiB drive).
    per_block: Vec<u8>,
    /// Per block with 255 reads in flight counted in `per_block`: how many more there are.
    past_255: FxHashMap<u32, u32>,
    /// Per block: its erase (kind and `request` field of the erase transaction), waiting for
    /// the block's reads.
    deferred_erases: FxHashMap<u32, (TxnKind, u32)>,
}

impl ReadPins {
    pub(super) fn new(blocks: u32) -> Self {
        Self {
            unmapped: IdSet::default(),
            per_block: vec![0; blocks as usize],
            past_255: FxHashMap::default(),
            deferred_erases: FxHashMap::default(),
        }
    }
}

/// A set of transaction ids: one bit per slab id (ids are small, and reused as transactions end),
/// with a count so that a run without members tests nothing. Every read of a page never written
/// is a member while in flight: on MQSim's empty default drive a hash set took about 80
/// instructions per read (callgrind), the bit's insert and remove about 27.
#[derive(Default)]
struct IdSet {
    words: Vec<u64>,
    len: u32,
}

impl IdSet {
    #[inline]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn insert(&mut self, id: u32) {
        let (word, bit) = ((id / 64) as usize, 1u64 << (id % 64));
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        if self.words[word] & bit == 0 {
            self.words[word] |= bit;
            self.len += 1;
        }
    }

    #[inline]
    fn contains(&self, id: u32) -> bool {
        self.words.get((id / 64) as usize).is_some_and(|w| w & (1u64 << (id % 64)) != 0)
    }

    /// Takes `id` out; returns whether it was in.
    #[inline]
    fn remove(&mut self, id: u32) -> bool {
        match self.words.get_mut((id / 64) as usize) {
            Some(w) if *w & (1u64 << (id % 64)) != 0 => {
                *w &= !(1u64 << (id % 64));
                self.len -= 1;
                true
            }
            _ => false,
        }
    }
}

impl ReadPins {
    #[inline]
    fn pin(&mut self, block: u32) {
        let n = &mut self.per_block[block as usize];
        if *n == u8::MAX {
            *self.past_255.entry(block).or_default() += 1;
        } else {
            *n += 1;
        }
    }

    /// Takes one read off `block`; returns whether reads of it are still in flight.
    #[inline]
    fn unpin(&mut self, block: u32) -> bool {
        let n = &mut self.per_block[block as usize];
        debug_assert!(*n > 0, "a mapped read in flight pins its block");
        if *n == u8::MAX && !self.past_255.is_empty() {
            if let Some(more) = self.past_255.get_mut(&block) {
                *more -= 1;
                if *more == 0 {
                    self.past_255.remove(&block);
                }
                return true;
            }
        }
        *n -= 1;
        *n > 0
    }

    #[inline]
    fn is_pinned(&self, block: u32) -> bool {
        self.per_block[block as usize] > 0
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
            self.read_pins.pin(block);
        }
    }

    /// User read `id` (transaction `t`) is done: unpin its block (queueing an erase that waited
    /// for it) and return the physical page it was translated to, or `UNMAPPED` when its page
    /// was unmapped.
    pub(super) fn unpin_read(&mut self, id: u32, t: &Transaction) -> u32 {
        // (Most runs read no unmapped page: the set is empty and not looked into.)
        if !self.read_pins.unmapped.is_empty() && self.read_pins.unmapped.remove(id) {
            return UNMAPPED;
        }
        let block = self.ftl.geometry.block_of_ppa(t.ppa);
        if !self.read_pins.unpin(block) && !self.read_pins.deferred_erases.is_empty() {
            if let Some((kind, request)) = self.read_pins.deferred_erases.remove(&block) {
                self.queue_erase_now(kind, request, block);
            }
        }
        t.ppa
    }

    /// The page user read `id` (in flight) was translated to (`UNMAPPED`: none), or `None`
    /// before its translation.
    pub(super) fn read_translated_to(&self, id: u32) -> Option<u32> {
        if !self.read_pins.unmapped.is_empty() && self.read_pins.unmapped.contains(id) {
            return Some(UNMAPPED);
        }
        let ppa = self.txns.get(id).ppa;
        (ppa != UNMAPPED).then_some(ppa)
    }

    /// Queues the erase of `block` (`kind` is `Erase` or `MergeErase`, `request` the erase
    /// transaction's `request` field), or defers it while reads of the block are in flight.
    pub(super) fn queue_block_erase(&mut self, kind: TxnKind, request: u32, block: u32) {
        if self.read_pins.is_pinned(block) {
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

#[cfg(test)]
mod tests {
    use super::{IdSet, ReadPins};

    /// The id set against a plain set: members in and out, an id inserted twice counted once,
    /// ids far past the words in use, and reuse of an id after it left.
    #[test]
    fn id_set_keeps_exactly_its_members() {
        let mut set = IdSet::default();
        let mut reference = std::collections::BTreeSet::new();
        assert!(set.is_empty() && !set.contains(0) && !set.remove(7));
        let ids = [0u32, 63, 64, 65, 5000, 63, 1, 4_000_000, 64];
        for &id in &ids {
            set.insert(id);
            reference.insert(id);
            assert_eq!(set.len as usize, reference.len());
        }
        for id in 0..70 {
            assert_eq!(set.contains(id), reference.contains(&id), "id {id}");
        }
        assert!(set.contains(5000) && set.contains(4_000_000) && !set.contains(4_000_001));
        assert!(!set.remove(66), "never in");
        for &id in &ids {
            assert_eq!(set.remove(id), reference.remove(&id), "id {id}");
            assert_eq!(set.len as usize, reference.len());
            assert!(!set.contains(id));
        }
        assert!(set.is_empty());
        set.insert(64);
        assert!(set.contains(64) && !set.is_empty());
    }

    /// Counts past a byte's range go on in the overflow map, and the block is unpinned only when
    /// its last read is done.
    #[test]
    fn counts_past_255_are_kept_exactly() {
        let mut pins = ReadPins::new(4);
        for _ in 0..600 {
            pins.pin(2);
        }
        pins.pin(3);
        assert_eq!(pins.per_block[2], u8::MAX);
        assert_eq!(pins.past_255.get(&2), Some(&(600 - 255)));
        for left in (1..600).rev() {
            assert!(pins.unpin(2), "{left} reads still in flight");
            assert!(pins.is_pinned(2));
        }
        assert!(!pins.unpin(2), "the last read lets go");
        assert!(!pins.is_pinned(2));
        assert!(pins.past_255.is_empty());
        assert!(pins.is_pinned(3) && !pins.is_pinned(0));
    }
}
