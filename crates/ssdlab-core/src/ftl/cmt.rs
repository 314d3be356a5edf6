//! Cached mapping table (DFTL, Gupta et al., ASPLOS 2009): the full page map lives in flash in
//! translation pages, and DRAM caches recently used entries in LRU order. A lookup that misses
//! costs a flash read of the entry's translation page; evicting a dirty entry costs a program of
//! its translation page, which also cleans every other cached dirty entry of that page (the
//! write-back is batched per page).
//!
//! Cleaning a whole translation page is O(1): each page has an epoch that a write-back advances,
//! and an entry is dirty only if it was dirtied in its page's current epoch.

use rustc_hash::FxHashMap;

use crate::engine::{Divisor, LruOrder};

pub use crate::config::mapping::{CMT_ENTRY_BYTES as ENTRY_BYTES, TRANSLATION_ENTRY_BYTES};

#[derive(Clone, Copy)]
struct Slot {
    lpa: u32,
    dirty: bool,
    /// The epoch of the entry's translation page when it was dirtied.
    epoch: u32,
}

/// One LRU partition (the whole cache when it is shared, one flow's share otherwise).
pub struct CmtPartition {
    capacity: u32,
    index: FxHashMap<u32, u32>,
    slots: Vec<Slot>,
    order: LruOrder,
}

/// What an insertion pushed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evicted {
    None,
    Clean,
    /// A dirty entry: its translation page must be written back.
    Dirty {
        tpage: u32,
    },
}

impl CmtPartition {
    pub fn new(capacity: u32) -> Self {
        Self { capacity: capacity.max(1), index: FxHashMap::default(), slots: Vec::new(), order: LruOrder::new() }
    }

    /// Whether `lpa` is cached; a hit becomes the most recently used entry.
    #[inline]
    pub fn touch(&mut self, lpa: u32) -> bool {
        match self.index.get(&lpa) {
            Some(&s) => {
                self.order.touch(s);
                true
            }
            None => false,
        }
    }

    pub fn contains(&self, lpa: u32) -> bool {
        self.index.contains_key(&lpa)
    }

    /// What inserting `lpa` now would push out, without inserting it (the firmware model asks
    /// before the lookup runs).
    pub fn would_evict(&self, lpa: u32, epochs: &[u32], per_tpage: Divisor) -> Evicted {
        if self.index.len() < self.capacity as usize || self.index.contains_key(&lpa) {
            return Evicted::None;
        }
        let old = self.slots[self.order.tail() as usize];
        let tpage = per_tpage.div_u32(old.lpa);
        if old.dirty && old.epoch == epochs[tpage as usize] {
            Evicted::Dirty { tpage }
        } else {
            Evicted::Clean
        }
    }

    /// Marks a cached entry dirty (its translation page is at `epoch`).
    #[inline]
    pub fn mark_dirty(&mut self, lpa: u32, epoch: u32) {
        if let Some(&s) = self.index.get(&lpa) {
            let slot = &mut self.slots[s as usize];
            slot.dirty = true;
            slot.epoch = epoch;
        }
    }

    /// Caches `lpa` as the most recently used entry, evicting the least recently used one if
    /// full. `epochs` gives each translation page's current epoch, `per_tpage` the entries per page,
    /// `cached` each translation page's entries in the CMT (kept up to date here).
    pub fn insert(&mut self, lpa: u32, epochs: &[u32], per_tpage: Divisor, cached: &mut [u32]) -> Evicted {
        if self.touch(lpa) {
            return Evicted::None;
        }
        let mut evicted = Evicted::None;
        let s = if self.index.len() as u32 >= self.capacity {
            let victim = self.order.tail();
            self.order.unlink(victim);
            let old = self.slots[victim as usize];
            self.index.remove(&old.lpa);
            let tpage = per_tpage.div_u32(old.lpa);
            cached[tpage as usize] -= 1;
            evicted = if old.dirty && old.epoch == epochs[tpage as usize] {
                Evicted::Dirty { tpage }
            } else {
                Evicted::Clean
            };
            victim
        } else {
            self.slots.push(Slot { lpa, dirty: false, epoch: 0 });
            (self.slots.len() - 1) as u32
        };
        self.slots[s as usize] = Slot { lpa, dirty: false, epoch: 0 };
        cached[per_tpage.div_u32(lpa) as usize] += 1;
        self.index.insert(lpa, s);
        self.order.push_front(s);
        evicted
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recently_used_entry() {
        let epochs = vec![0u32; 16];
        let mut cached = vec![0u32; 16];
        let mut cmt = CmtPartition::new(2);
        assert_eq!(cmt.insert(1, &epochs, Divisor::new(4), &mut cached), Evicted::None);
        assert_eq!(cmt.insert(2, &epochs, Divisor::new(4), &mut cached), Evicted::None);
        assert!(cmt.touch(1));
        assert_eq!(cmt.would_evict(3, &epochs, Divisor::new(4)), Evicted::Clean);
        assert_eq!(cmt.would_evict(1, &epochs, Divisor::new(4)), Evicted::None);
        assert_eq!(cmt.insert(3, &epochs, Divisor::new(4), &mut cached), Evicted::Clean);
        assert!(cmt.contains(1) && cmt.contains(3) && !cmt.contains(2));
        // Translation page 0 holds 1 and 3 (2 left).
        assert_eq!(cached[0], 2);
    }

    #[test]
    fn a_write_back_cleans_every_entry_of_its_translation_page() {
        let mut epochs = vec![0u32; 16];
        let mut cached = vec![0u32; 16];
        let mut cmt = CmtPartition::new(2);
        cmt.insert(4, &epochs, Divisor::new(4), &mut cached);
        cmt.insert(5, &epochs, Divisor::new(4), &mut cached);
        cmt.mark_dirty(4, 0);
        cmt.mark_dirty(5, 0);
        // Evicting 4 (LRU) writes back translation page 1, which holds 4..8.
        assert_eq!(cmt.would_evict(9, &epochs, Divisor::new(4)), Evicted::Dirty { tpage: 1 });
        assert_eq!(cmt.insert(9, &epochs, Divisor::new(4), &mut cached), Evicted::Dirty { tpage: 1 });
        epochs[1] += 1;
        // 5 was written back with it: evicting it now costs nothing.
        assert_eq!(cmt.insert(10, &epochs, Divisor::new(4), &mut cached), Evicted::Clean);
        assert_eq!((cached[1], cached[2]), (0, 2));
    }
}
