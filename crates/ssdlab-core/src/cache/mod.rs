//! The data cache in the controller's DRAM: write-back lines that remember which sectors of each
//! of their pages they hold. One cache for all flows, or an equal share per flow.
//!
//! Organisation (see docs/cache.md): a line is `pages_per_line` consecutive logical pages (one
//! page by default; with static allocation several pages form a super-page across channels and
//! dies). Line `n` may only live in set `n mod sets`, which has `ways` slots: one set of every
//! slot is fully associative (the default, MQSim's cache), one way per set is direct mapped.
//! Within a set, LRU, FIFO or random replacement picks the line that makes room.
//!
//! A write needs a line per line-sized piece it touches. When a set is full, lines make room in
//! the replacement policy's order: a clean line is dropped at once, a dirty one has its dirty
//! pages flushed to flash first (its space comes back when the last flush completes). A line the
//! host rewrites during its flush stays cached, dirty again. Pages being read ahead (prefetched)
//! hold their line until the read lands.

pub mod destage;
pub mod dram;
mod order;
#[cfg(test)]
mod tests;

use rustc_hash::FxHashMap;

use crate::config::{CacheShape, Replacement};
use crate::engine::lru::NIL;
use crate::engine::RandomStream;
use order::{SetLists, SetMembers};

#[derive(Clone, Copy, Debug)]
struct Line {
    /// Line number: first logical page / pages per line.
    key: u32,
    /// Pages of the line (bit i = page i) written by the host and not yet on flash.
    dirty: u64,
    /// Pages being written to flash; the line takes space until their flushes complete.
    flushing: u64,
    /// Pages being read ahead from flash.
    pending: u64,
    /// Pages read ahead that no host read has used yet.
    prefetched: u64,
    /// Whose data it is: its flush counts as that flow's FTL work, placed by the handle of the
    /// line's last write (FDP).
    writer: Writer,
    /// Its flush is a write-back that keeps the line (clean) once done, not an eviction.
    keep: bool,
}

impl Line {
    fn new(key: u32, writer: Writer) -> Self {
        Self { key, dirty: 0, flushing: 0, pending: 0, prefetched: 0, writer, keep: false }
    }
}

/// Who wrote a line last: the flow, and the FDP reclaim unit handle its write carried (0
/// without `[ftl.fdp]`), which the line's flush is placed by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Writer {
    pub flow: u16,
    pub handle: u8,
}

impl Writer {
    /// A flow's line read from flash or read ahead (clean: its handle never places anything).
    pub fn reader(flow: u16) -> Self {
        Self { flow, handle: 0 }
    }
}

/// What [`CachePartition::evict_one`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eviction {
    /// A clean line was dropped: one line of space is free now.
    Freed,
    /// A dirty line must be written to flash: the pages in `pages` (bit i = logical page
    /// `first_lpa + i`); its space returns when the last [`CachePartition::flush_done`].
    Flush { first_lpa: u32, pages: u64, writer: Writer },
    /// Every line of the set is already being flushed, read ahead, or kept.
    Nothing,
}

/// What a host read of some sectors of a page finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Every sector is cached.
    Hit,
    /// The page is being read ahead: the read waits for it instead of issuing its own.
    Pending,
    Miss,
}

/// Counts a partition keeps about itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartitionCounts {
    /// Lines that left to make room (clean ones dropped, dirty ones flushed).
    pub evictions: u64,
    /// Prefetched pages a host read used (first use only).
    pub prefetches_used: u64,
    /// Prefetched pages that left the cache unread.
    pub prefetches_evicted_unused: u64,
}

pub struct CachePartition {
    capacity: u32,
    sets: u32,
    ways: u32,
    pages_per_line: u32,
    replacement: Replacement,
    flushing: u32,
    set_used: Vec<u32>,
    set_flushing: Vec<u32>,
    index: FxHashMap<u32, u32>,
    lines: Vec<Line>,
    /// Sector masks, `pages_per_line` per slot.
    sectors: Vec<u64>,
    free_slots: Vec<u32>,
    /// LRU or FIFO order per set (empty with random replacement).
    lists: SetLists,
    /// Members per set (random replacement only).
    members: SetMembers,
    rng: RandomStream,
    /// New lines per set that waiting writes need (scratch of [`Self::add_demand`]).
    demand: Vec<u32>,
    demand_sets: Vec<u32>,
    /// Lines with dirty pages (not counting pages being flushed), the line dirtied longest ago
    /// at the tail: what background destaging writes first. One list (set 0) over the slots.
    dirty_order: SetLists,
    dirty_lines: u32,
    pub counts: PartitionCounts,
}

impl CachePartition {
    /// A partition of the given shape; `rng` drives random replacement.
    pub fn new(shape: CacheShape, rng: RandomStream) -> Self {
        let sets = shape.sets();
        let random = shape.replacement == Replacement::Random;
        Self {
            capacity: shape.lines,
            sets,
            ways: shape.ways,
            pages_per_line: shape.pages_per_line,
            replacement: shape.replacement,
            flushing: 0,
            set_used: vec![0; sets as usize],
            set_flushing: vec![0; sets as usize],
            index: FxHashMap::default(),
            lines: Vec::new(),
            sectors: Vec::new(),
            free_slots: Vec::new(),
            lists: if random { SetLists::default() } else { SetLists::new(sets) },
            members: if random { SetMembers::new(sets, shape.ways) } else { SetMembers::default() },
            rng,
            demand: vec![0; sets as usize],
            demand_sets: Vec::new(),
            dirty_order: SetLists::new(1),
            dirty_lines: 0,
            counts: PartitionCounts::default(),
        }
    }

    /// A fully associative LRU partition of page lines (the default shape).
    pub fn pages(capacity_lines: u32) -> Self {
        let shape = CacheShape {
            lines: capacity_lines,
            ways: capacity_lines.max(1),
            pages_per_line: 1,
            replacement: Replacement::Lru,
        };
        Self::new(shape, RandomStream::new(0, 0))
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    pub fn sets(&self) -> u32 {
        self.sets
    }

    pub fn ways(&self) -> u32 {
        self.ways
    }

    pub fn used(&self) -> u32 {
        self.index.len() as u32
    }

    pub fn free(&self) -> u32 {
        self.capacity - self.used()
    }

    /// Free slots of `set`.
    #[inline]
    pub fn set_free(&self, set: u32) -> u32 {
        self.ways - self.set_used[set as usize]
    }

    /// Lines of `set` being flushed (their space is on its way back).
    #[inline]
    pub fn set_flushing(&self, set: u32) -> u32 {
        self.set_flushing[set as usize]
    }

    /// The line holding `lpa`, and the page's bit in it.
    #[inline]
    fn locate(&self, lpa: u32) -> (u32, u64) {
        if self.pages_per_line == 1 {
            (lpa, 1)
        } else {
            (lpa / self.pages_per_line, 1 << (lpa % self.pages_per_line))
        }
    }

    /// Line `key`'s set.
    #[inline]
    pub fn set_of(&self, key: u32) -> u32 {
        if self.sets == 1 {
            0
        } else {
            key % self.sets
        }
    }

    /// The set that would hold logical page `lpa`.
    pub fn set_of_page(&self, lpa: u32) -> u32 {
        self.set_of(self.locate(lpa).0)
    }

    #[inline]
    fn sector_slot(&self, s: u32, page_bit: u64) -> usize {
        s as usize * self.pages_per_line as usize + page_bit.trailing_zeros() as usize
    }

    pub fn contains(&self, lpa: u32) -> bool {
        self.index.contains_key(&self.locate(lpa).0)
    }

    /// Sectors of `lpa` the cache holds.
    pub fn sectors_of(&self, lpa: u32) -> u64 {
        let (key, bit) = self.locate(lpa);
        self.index.get(&key).map_or(0, |&s| self.sectors[self.sector_slot(s, bit)])
    }

    /// Lines holding dirty pages not yet being flushed.
    pub fn dirty_lines(&self) -> u32 {
        self.dirty_lines
    }

    /// Sets slot `s`'s dirty pages, keeping the dirty list: a line joins it (as the newest) when
    /// it becomes dirty and leaves when it is clean.
    #[inline]
    fn set_dirty(&mut self, s: u32, dirty: u64) {
        let was = self.lines[s as usize].dirty != 0;
        self.lines[s as usize].dirty = dirty;
        match (was, dirty != 0) {
            (false, true) => {
                self.dirty_order.push_front(0, s);
                self.dirty_lines += 1;
            }
            (true, false) => {
                self.dirty_order.unlink(0, s);
                self.dirty_lines -= 1;
            }
            _ => {}
        }
    }

    fn remove(&mut self, s: u32) {
        self.set_dirty(s, 0);
        let line = self.lines[s as usize];
        let set = self.set_of(line.key);
        match self.replacement {
            Replacement::Random => self.members.remove(set, s),
            Replacement::Lru | Replacement::Fifo => self.lists.unlink(set, s),
        }
        self.set_used[set as usize] -= 1;
        self.counts.prefetches_evicted_unused += line.prefetched.count_ones() as u64;
        self.index.remove(&line.key);
        self.free_slots.push(s);
    }

    /// Whether slot `s` holds no sector of any of its pages.
    fn line_empty(&self, s: u32) -> bool {
        let first = s as usize * self.pages_per_line as usize;
        self.sectors[first..first + self.pages_per_line as usize].iter().all(|&m| m == 0)
    }

    /// Puts a new line in a set with room; returns its slot.
    fn insert(&mut self, line: Line) -> u32 {
        let set = self.set_of(line.key);
        debug_assert!(self.set_free(set) > 0, "insert into a full set");
        let s = match self.free_slots.pop() {
            Some(s) => {
                self.lines[s as usize] = line;
                s
            }
            None => {
                self.lines.push(line);
                self.sectors.resize(self.lines.len() * self.pages_per_line as usize, 0);
                (self.lines.len() - 1) as u32
            }
        };
        let first = s as usize * self.pages_per_line as usize;
        self.sectors[first..first + self.pages_per_line as usize].fill(0);
        self.index.insert(line.key, s);
        match self.replacement {
            Replacement::Random => self.members.insert(set, s),
            Replacement::Lru | Replacement::Fifo => self.lists.push_front(set, s),
        }
        self.set_used[set as usize] += 1;
        s
    }

    /// A use of slot `s`: LRU moves it to the front; FIFO and random ignore uses.
    #[inline]
    fn touch(&mut self, s: u32) {
        if self.replacement == Replacement::Lru {
            let set = self.set_of(self.lines[s as usize].key);
            self.lists.touch(set, s);
        }
    }

    /// The first slot of `set`, in replacement order, whose line `pick` accepts.
    fn victim(&mut self, set: u32, pick: impl Fn(&Line) -> bool) -> Option<u32> {
        match self.replacement {
            Replacement::Lru | Replacement::Fifo => {
                let mut s = self.lists.tail(set);
                while s != NIL {
                    if pick(&self.lines[s as usize]) {
                        return Some(s);
                    }
                    s = self.lists.newer(s);
                }
                None
            }
            Replacement::Random => {
                let n = self.members.count(set);
                if n == 0 {
                    return None;
                }
                // A random member; if it cannot leave, the next one that can (in set order).
                let start = self.rng.below(n as u64) as u32;
                (0..n).map(|i| self.members.get(set, (start + i) % n)).find(|&s| pick(&self.lines[s as usize]))
            }
        }
    }

    /// A read of `sectors` of `lpa`: a hit if the line holds all of them (LRU makes it most
    /// recent), pending if the page is being read ahead.
    pub fn lookup(&mut self, lpa: u32, sectors: u64) -> Lookup {
        self.lookup_joining(lpa, sectors, true)
    }

    /// [`Self::lookup`], where a page being read ahead is `Pending` only if `join_pending`
    /// (else its held sectors decide, as for any line): a read must not join a read-ahead of
    /// data that a write has replaced in flash since.
    pub fn lookup_joining(&mut self, lpa: u32, sectors: u64, join_pending: bool) -> Lookup {
        let (key, bit) = self.locate(lpa);
        let Some(&s) = self.index.get(&key) else { return Lookup::Miss };
        let line = &mut self.lines[s as usize];
        let found = if line.pending & bit != 0 && join_pending {
            Lookup::Pending
        } else if self.sectors[s as usize * self.pages_per_line as usize + bit.trailing_zeros() as usize] & sectors
            == sectors
        {
            Lookup::Hit
        } else {
            return Lookup::Miss;
        };
        if line.prefetched & bit != 0 {
            line.prefetched &= !bit;
            self.counts.prefetches_used += 1;
        }
        self.touch(s);
        found
    }

    /// Line numbers of a range of logical pages.
    #[inline]
    fn keys(&self, lpas: &std::ops::RangeInclusive<u32>) -> (u64, u64) {
        (self.locate(*lpas.start()).0 as u64, self.locate(*lpas.end()).0 as u64)
    }

    /// Whether a write of these pages can never fit: some set would need more lines than it has
    /// ways (with consecutive lines spread over the sets, that is more lines than the cache).
    pub fn never_fits(&self, lpas: std::ops::RangeInclusive<u32>) -> bool {
        let (first, last) = self.keys(&lpas);
        last - first + 1 > self.capacity as u64
    }

    /// Whether every new line a write of these pages needs has a free slot in its set.
    pub fn fits(&self, lpas: std::ops::RangeInclusive<u32>) -> bool {
        let (first, last) = self.keys(&lpas);
        let sets = self.sets as u64;
        (0..(last - first + 1).min(sets)).all(|o| {
            let new =
                (first + o..=last).step_by(sets as usize).filter(|&k| !self.index.contains_key(&(k as u32))).count();
            new as u32 <= self.set_free(self.set_of((first + o) as u32))
        })
    }

    /// Adds the new lines a waiting write of these pages needs to the per-set demand.
    pub fn add_demand(&mut self, lpas: std::ops::RangeInclusive<u32>) {
        let (first, last) = self.keys(&lpas);
        for k in first..=last {
            let k = k as u32;
            if !self.index.contains_key(&k) {
                let set = self.set_of(k);
                if self.demand[set as usize] == 0 {
                    self.demand_sets.push(set);
                }
                self.demand[set as usize] += 1;
            }
        }
    }

    /// The sets with demand, each with its demand (at most its ways); clears the demand.
    pub fn take_demand(&mut self, out: &mut Vec<(u32, u32)>) {
        out.clear();
        for &set in &self.demand_sets {
            out.push((set, self.demand[set as usize].min(self.ways)));
            self.demand[set as usize] = 0;
        }
        self.demand_sets.clear();
    }

    /// Stores written sectors (the caller made sure a new line has room).
    pub fn write(&mut self, lpa: u32, sectors: u64, writer: Writer) {
        let (key, bit) = self.locate(lpa);
        let s = match self.index.get(&key) {
            Some(&s) => {
                self.lines[s as usize].writer = writer;
                self.touch(s);
                s
            }
            None => self.insert(Line::new(key, writer)),
        };
        self.set_dirty(s, self.lines[s as usize].dirty | bit);
        let i = self.sector_slot(s, bit);
        self.sectors[i] |= sectors;
    }

    /// Keeps sectors just read from flash (read caching); skipped when it would need an eviction
    /// of dirty data, so reads never wait for the cache.
    pub fn fill(&mut self, lpa: u32, sectors: u64, flow: u16) {
        let (key, bit) = self.locate(lpa);
        if let Some(&s) = self.index.get(&key) {
            let i = self.sector_slot(s, bit);
            self.sectors[i] |= sectors;
            self.touch(s);
            return;
        }
        if self.set_free(self.set_of(key)) == 0 && self.evict_clean(self.set_of(key)) != Eviction::Freed {
            return;
        }
        let s = self.insert(Line::new(key, Writer::reader(flow)));
        let i = self.sector_slot(s, bit);
        self.sectors[i] = sectors;
    }

    /// Warming for preconditioning: fills only while the page's set has room.
    pub fn warm(&mut self, lpa: u32, sectors: u64, flow: u16) {
        if self.set_free(self.set_of_page(lpa)) > 0 {
            self.fill(lpa, sectors, flow);
        }
    }

    fn evict_clean(&mut self, set: u32) -> Eviction {
        match self.victim(set, |l| l.dirty == 0 && l.flushing == 0 && l.pending == 0) {
            Some(s) => {
                self.counts.evictions += 1;
                self.remove(s);
                Eviction::Freed
            }
            None => Eviction::Nothing,
        }
    }

    /// Makes room for one line in `set`: the first line in replacement order that is not
    /// already being flushed or read ahead, and not one of the pages in `keep` (the write being
    /// made room for: evicting its own pages would only raise what it needs).
    pub fn evict_one(&mut self, set: u32, keep: std::ops::RangeInclusive<u32>) -> Eviction {
        let (first, last) = self.keys(&keep);
        let Some(s) =
            self.victim(set, |l| l.flushing == 0 && l.pending == 0 && !(first..=last).contains(&(l.key as u64)))
        else {
            return Eviction::Nothing;
        };
        self.counts.evictions += 1;
        let line = self.lines[s as usize];
        if line.dirty == 0 {
            self.remove(s);
            return Eviction::Freed;
        }
        self.lines[s as usize].flushing = line.dirty;
        self.set_dirty(s, 0);
        self.flushing += 1;
        self.set_flushing[set as usize] += 1;
        Eviction::Flush { first_lpa: line.key * self.pages_per_line, pages: line.dirty, writer: line.writer }
    }

    /// The first logical page of each line holding data not yet on flash (dirty or being
    /// flushed): what a host flush waits for.
    pub fn unflushed_lines(&self) -> impl Iterator<Item = u32> + '_ {
        let ppl = self.pages_per_line;
        self.index
            .values()
            .map(|&s| self.lines[s as usize])
            .filter(|l| l.dirty | l.flushing != 0)
            .map(move |l| l.key * ppl)
    }

    /// The first logical page of the line that holds `lpa`.
    pub fn line_first_page(&self, lpa: u32) -> u32 {
        lpa / self.pages_per_line * self.pages_per_line
    }

    /// (dirty pages, pages being flushed) of the line holding `lpa`, if it is cached.
    pub fn line_flags(&self, lpa: u32) -> Option<(u64, u64)> {
        let (key, _) = self.locate(lpa);
        self.index.get(&key).map(|&s| (self.lines[s as usize].dirty, self.lines[s as usize].flushing))
    }

    /// A host flush or a write-through: the line holding `lpa`, not being flushed, has its
    /// dirty pages flushed now. With `keep` the line stays cached, clean, when they are done (a
    /// write-back); else it is dropped then, as after an eviction. Returns the pages as
    /// [`Eviction::Flush`] does, or `None` when there is nothing to start.
    pub fn start_flush(&mut self, lpa: u32, keep: bool) -> Option<(u32, u64, Writer)> {
        let (key, _) = self.locate(lpa);
        let s = *self.index.get(&key)?;
        self.flush_slot(s, keep)
    }

    fn flush_slot(&mut self, s: u32, keep: bool) -> Option<(u32, u64, Writer)> {
        let line = self.lines[s as usize];
        if line.flushing != 0 || line.dirty == 0 {
            return None;
        }
        self.lines[s as usize].flushing = line.dirty;
        self.lines[s as usize].keep = keep;
        self.set_dirty(s, 0);
        if !keep {
            // The line's space is on its way back.
            self.flushing += 1;
            let set = self.set_of(line.key);
            self.set_flushing[set as usize] += 1;
        }
        Some((line.key * self.pages_per_line, line.dirty, line.writer))
    }

    /// Background destaging: starts writing back the line dirtied longest ago that is not
    /// already being flushed (it stays cached, clean, once written). Returns its pages as
    /// [`Eviction::Flush`] does, or `None` when no line can start.
    pub fn start_destage(&mut self) -> Option<(u32, u64, Writer)> {
        // A line rewritten during its flush waits for that flush (two flushes of a page in
        // flight could reach flash out of order); there are at most as many as flushes in flight.
        let mut s = self.dirty_order.tail(0);
        while s != NIL && self.lines[s as usize].flushing != 0 {
            s = self.dirty_order.newer(s);
        }
        if s == NIL {
            return None;
        }
        self.flush_slot(s, true)
    }

    /// Whether the line holding `lpa` is being written back (kept once done), not evicted.
    pub fn writing_back(&self, lpa: u32) -> bool {
        let (key, _) = self.locate(lpa);
        self.index.get(&key).is_some_and(|&s| self.lines[s as usize].keep)
    }

    /// Lines being flushed (their space is on its way back).
    pub fn flushing(&self) -> u32 {
        self.flushing
    }

    /// A page's flush reached flash: once the line's last flush is done its space is free,
    /// unless the host rewrote it meanwhile.
    pub fn flush_done(&mut self, lpa: u32) {
        let (key, bit) = self.locate(lpa);
        if let Some(&s) = self.index.get(&key) {
            let line = &mut self.lines[s as usize];
            debug_assert!(line.flushing & bit != 0);
            line.flushing &= !bit;
            if line.flushing == 0 {
                let (dirty, pending, keep) = (line.dirty, line.pending, line.keep);
                line.keep = false;
                if keep {
                    // Written back: the line stays, clean, unless a write that bypassed the
                    // cache took all its sectors meanwhile.
                    if dirty == 0 && pending == 0 && self.line_empty(s) {
                        self.remove(s);
                    }
                    return;
                }
                let set = self.set_of(key);
                self.flushing -= 1;
                self.set_flushing[set as usize] -= 1;
                // A page of the line may be on its way in from a read-ahead (reserved while
                // the flush ran, its sectors not all cached): the line stays for it.
                if dirty == 0 && pending == 0 {
                    self.remove(s);
                }
            }
        }
    }

    /// A write that does not go through the cache replaced these sectors of `lpa` in flash: the
    /// line no longer holds them (else a read would hit stale data, and a flush would write it
    /// back over the new). A page left with no sector is no longer dirty or prefetched; a line
    /// left with no page is dropped, unless a flush or read-ahead of it is under way.
    pub fn forget(&mut self, lpa: u32, sectors: u64) {
        let (key, bit) = self.locate(lpa);
        let Some(&s) = self.index.get(&key) else { return };
        let i = self.sector_slot(s, bit);
        self.sectors[i] &= !sectors;
        if self.sectors[i] != 0 {
            return;
        }
        self.set_dirty(s, self.lines[s as usize].dirty & !bit);
        let line = &mut self.lines[s as usize];
        if line.prefetched & bit != 0 {
            // Read ahead and never used: wasted.
            line.prefetched &= !bit;
            self.counts.prefetches_evicted_unused += 1;
        }
        let line = *line;
        if self.line_empty(s) && line.flushing == 0 && line.pending == 0 {
            self.remove(s);
        }
    }

    /// Claims the place of a page about to be read ahead (the whole page, `full` sectors).
    /// False when it is cached or already coming, or its set has no clean line to drop.
    pub fn reserve_prefetch(&mut self, lpa: u32, full: u64, flow: u16) -> bool {
        let (key, bit) = self.locate(lpa);
        let s = match self.index.get(&key) {
            Some(&s) => {
                if self.lines[s as usize].pending & bit != 0 || self.sectors[self.sector_slot(s, bit)] == full {
                    return false;
                }
                s
            }
            None => {
                let set = self.set_of(key);
                if self.set_free(set) == 0 && self.evict_clean(set) != Eviction::Freed {
                    return false;
                }
                self.insert(Line::new(key, Writer::reader(flow)))
            }
        };
        let line = &mut self.lines[s as usize];
        line.pending |= bit;
        line.prefetched |= bit;
        true
    }

    /// A page read ahead has arrived.
    /// A page read ahead landed after a write replaced it in flash: the cache does not keep
    /// it. A read-ahead nobody used counts as wasted; a line left with nothing goes.
    pub fn prefetch_dropped(&mut self, lpa: u32) {
        let (key, bit) = self.locate(lpa);
        let s = *self.index.get(&key).expect("a line being read ahead stays cached");
        let line = &mut self.lines[s as usize];
        line.pending &= !bit;
        if line.prefetched & bit != 0 {
            line.prefetched &= !bit;
            self.counts.prefetches_evicted_unused += 1;
        }
        let line = *line;
        if self.line_empty(s) && line.dirty == 0 && line.flushing == 0 && line.pending == 0 {
            self.remove(s);
        }
    }

    pub fn prefetch_done(&mut self, lpa: u32, full: u64) {
        let (key, bit) = self.locate(lpa);
        let s = *self.index.get(&key).expect("a line being read ahead stays cached");
        self.lines[s as usize].pending &= !bit;
        let i = self.sector_slot(s, bit);
        self.sectors[i] = full;
    }

    /// Prefetched pages still cached that no host read has used.
    pub fn prefetched_unused(&self) -> u64 {
        self.index.values().map(|&s| self.lines[s as usize].prefetched.count_ones() as u64).sum()
    }
}
