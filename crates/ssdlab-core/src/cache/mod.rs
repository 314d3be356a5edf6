//! The data cache in the controller's DRAM: write-back, LRU, page-sized lines that remember which
//! sectors they hold. One LRU for all flows, or an equal share per flow.
//!
//! A write needs a line per page it touches. When the cache is full, least recently used lines
//! make room: a clean line is dropped at once, a dirty one is flushed to flash first (its space
//! comes back when the flush completes). A line the host rewrites during its flush stays cached,
//! dirty again.

pub mod dram;

use rustc_hash::FxHashMap;

use crate::engine::lru::NIL;
use crate::engine::LruOrder;

#[derive(Clone, Copy, Debug)]
struct Line {
    lpa: u32,
    /// Sectors of the page held (bit i = sector i).
    sectors: u64,
    dirty: bool,
    /// Being written to flash; it still takes space until the flush completes.
    flushing: bool,
    /// The flow whose data it is (its flush counts as that flow's FTL work).
    flow: u16,
}

/// What [`CachePartition::evict_one`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eviction {
    /// A clean line was dropped: one line of space is free now.
    Freed,
    /// A dirty line must be written to flash; its space returns when [`CachePartition::flush_done`].
    Flush { lpa: u32, sectors: u64, flow: u16 },
    /// Every line is already being flushed.
    Nothing,
}

pub struct CachePartition {
    capacity: u32,
    flushing: u32,
    index: FxHashMap<u32, u32>,
    lines: Vec<Line>,
    free_slots: Vec<u32>,
    order: LruOrder,
}

impl CachePartition {
    pub fn new(capacity_lines: u32) -> Self {
        Self {
            capacity: capacity_lines,
            flushing: 0,
            index: FxHashMap::default(),
            lines: Vec::new(),
            free_slots: Vec::new(),
            order: LruOrder::new(),
        }
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    pub fn used(&self) -> u32 {
        self.index.len() as u32
    }

    pub fn free(&self) -> u32 {
        self.capacity - self.used()
    }

    pub fn contains(&self, lpa: u32) -> bool {
        self.index.contains_key(&lpa)
    }

    fn remove(&mut self, s: u32) {
        self.order.unlink(s);
        self.index.remove(&self.lines[s as usize].lpa);
        self.free_slots.push(s);
    }

    fn insert(&mut self, line: Line) {
        let s = match self.free_slots.pop() {
            Some(s) => {
                self.lines[s as usize] = line;
                s
            }
            None => {
                self.lines.push(line);
                (self.lines.len() - 1) as u32
            }
        };
        self.index.insert(line.lpa, s);
        self.order.push_front(s);
    }

    /// A read of `sectors` of `lpa`: a hit if the line holds all of them (it becomes most recent).
    pub fn read(&mut self, lpa: u32, sectors: u64) -> bool {
        match self.index.get(&lpa) {
            Some(&s) if self.lines[s as usize].sectors & sectors == sectors => {
                self.order.touch(s);
                true
            }
            _ => false,
        }
    }

    /// New lines a write of these pages would need.
    pub fn lines_needed(&self, lpas: impl Iterator<Item = u32>) -> u32 {
        lpas.filter(|lpa| !self.index.contains_key(lpa)).count() as u32
    }

    /// Stores written sectors (the caller made sure a new line has room).
    pub fn write(&mut self, lpa: u32, sectors: u64, flow: u16) {
        match self.index.get(&lpa) {
            Some(&s) => {
                let line = &mut self.lines[s as usize];
                line.sectors |= sectors;
                line.dirty = true;
                line.flow = flow;
                self.order.touch(s);
            }
            None => {
                debug_assert!(self.free() > 0, "write without room");
                self.insert(Line { lpa, sectors, dirty: true, flushing: false, flow });
            }
        }
    }

    /// Keeps sectors just read from flash (read caching); skipped when it would need an eviction
    /// of dirty data, so reads never wait for the cache.
    pub fn fill(&mut self, lpa: u32, sectors: u64, flow: u16) {
        if let Some(&s) = self.index.get(&lpa) {
            self.lines[s as usize].sectors |= sectors;
            self.order.touch(s);
            return;
        }
        if self.free() == 0 && self.evict_clean() != Eviction::Freed {
            return;
        }
        self.insert(Line { lpa, sectors, dirty: false, flushing: false, flow });
    }

    fn evict_clean(&mut self) -> Eviction {
        let mut s = self.order.tail();
        while s != NIL {
            let line = self.lines[s as usize];
            if !line.dirty && !line.flushing {
                self.remove(s);
                return Eviction::Freed;
            }
            s = self.order.newer(s);
        }
        Eviction::Nothing
    }

    /// Makes room for one line: the least recently used line that is not already being flushed
    /// and not one of the pages in `keep` (the write being made room for: evicting its own pages
    /// would only raise what it needs).
    pub fn evict_one(&mut self, keep: std::ops::RangeInclusive<u32>) -> Eviction {
        let mut s = self.order.tail();
        while s != NIL {
            let line = self.lines[s as usize];
            if !line.flushing && !keep.contains(&line.lpa) {
                if !line.dirty {
                    self.remove(s);
                    return Eviction::Freed;
                }
                let l = &mut self.lines[s as usize];
                l.flushing = true;
                l.dirty = false;
                self.flushing += 1;
                return Eviction::Flush { lpa: line.lpa, sectors: line.sectors, flow: line.flow };
            }
            s = self.order.newer(s);
        }
        Eviction::Nothing
    }

    /// Lines being flushed (their space is on its way back).
    pub fn flushing(&self) -> u32 {
        self.flushing
    }

    /// A flush reached flash: the line's space is free, unless the host rewrote it meanwhile.
    pub fn flush_done(&mut self, lpa: u32) {
        if let Some(&s) = self.index.get(&lpa) {
            let line = &mut self.lines[s as usize];
            debug_assert!(line.flushing);
            line.flushing = false;
            self.flushing -= 1;
            if !line.dirty {
                self.remove(s);
            }
        }
    }

    /// A write that does not go through the cache replaced these sectors in flash: the line no
    /// longer holds them (else a read would hit stale data, and a flush would write it back over
    /// the new). A line left empty is dropped, unless its flush is under way.
    pub fn forget(&mut self, lpa: u32, sectors: u64) {
        if let Some(&s) = self.index.get(&lpa) {
            let line = &mut self.lines[s as usize];
            line.sectors &= !sectors;
            if line.sectors == 0 && !line.flushing {
                self.remove(s);
            }
        }
    }

    /// The sectors the line of `lpa` holds, if there is one (no LRU update; data emulation).
    pub fn sectors_of(&self, lpa: u32) -> Option<u64> {
        self.index.get(&lpa).map(|&s| self.lines[s as usize].sectors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_hit_only_when_every_sector_is_cached() {
        let mut c = CachePartition::new(4);
        c.write(7, 0b0011, 0);
        assert!(c.read(7, 0b0001));
        assert!(!c.read(7, 0b0111));
        assert!(!c.read(8, 1));
    }

    #[test]
    fn eviction_flushes_dirty_lines_and_frees_their_space_when_the_flush_completes() {
        let mut c = CachePartition::new(2);
        c.write(1, 1, 0);
        c.write(2, 1, 0);
        assert_eq!(c.free(), 0);
        let none = 100..=100;
        assert_eq!(c.evict_one(none.clone()), Eviction::Flush { lpa: 1, sectors: 1, flow: 0 });
        assert_eq!(c.free(), 0, "space returns only after the flush");
        assert_eq!(c.evict_one(none.clone()), Eviction::Flush { lpa: 2, sectors: 1, flow: 0 });
        assert_eq!(c.evict_one(none), Eviction::Nothing);
        c.flush_done(1);
        assert_eq!(c.free(), 1);
        // Rewritten during its flush: the line stays, dirty.
        c.write(2, 2, 0);
        c.flush_done(2);
        assert!(c.contains(2));
    }

    #[test]
    fn clean_lines_are_dropped_without_a_flush() {
        let mut c = CachePartition::new(1);
        c.fill(5, 1, 0);
        assert_eq!(c.evict_one(5..=5), Eviction::Nothing, "the pages being written are kept");
        assert_eq!(c.evict_one(6..=6), Eviction::Freed);
        assert_eq!(c.free(), 1);
    }
}
