//! Page-level address translation: logical page (LPA) to physical page (PPA) and back.
//!
//! Both directions are flat `u32` arrays (4 bytes per logical page and 4 per physical page), which
//! keeps a 512 GiB device's tables near 512 MiB; where static allocation fixes every page's
//! plane, the drive is large and `ftl.map_addresses` allows, 3-byte in-plane addresses
//! ([`super::in_plane`]) store 6 bytes per page instead. Validity is not stored separately: a physical
//! page is valid exactly when the forward map points back at it, so the two maps can never
//! disagree about which copy of a page is current.
//!
//! This is the one seam through which every lookup goes; the cached mapping table (DFTL) adds its
//! timing in front of it without changing the functional table.
//!
//! Entries are stored plus one, so that 0 means "unmapped": the tables come from the allocator
//! zeroed (the operating system's zero pages), and a page of a table costs memory and time only
//! once something is mapped in it. A fresh 512 GiB drive's half-gigabyte of tables is then not
//! written at start (issue 18: start in milliseconds, not a memset of the whole map).
//!
//! After a steady-state preconditioning the placement may be kept as its rule instead
//! ([`super::implied`]): then 0 in a table means "as the steady state placed it", a trimmed
//! logical page's forward entry holds a mark of its own ([`TRIMMED`]), and a reverse entry of 0
//! means the rule's owner until the page's block is written or erased.

use super::implied::ImpliedPlacement;
use super::in_plane::{ForwardHalf, InPlane, ReverseHalf};
pub use super::table_memory::TableMemory;

pub const UNMAPPED: u32 = u32::MAX;

/// The forward entry of a trimmed logical page in device-wide addresses (in-plane ones use
/// [`super::in_plane::TRIMMED_24`]): apart from 0, which may stand for the steady state's page.
const TRIMMED: u32 = u32::MAX;

pub struct PageMap {
    tables: Tables,
    /// Logical pages mapped now (counted, so that asking does not read the whole table).
    mapped: u64,
    /// The steady state's placement, where it is kept as a rule rather than in the tables.
    implied: Option<Box<ImpliedPlacement>>,
}

/// How the two tables store their addresses; the results are the same either way.
enum Tables {
    /// Device-wide addresses, 4 bytes each: `l2p` holds the physical page + 1 of each logical
    /// page (0: unmapped), `p2l` the logical page + 1 last written to each physical page (0:
    /// none since its erase).
    Global { l2p: Vec<u32>, p2l: Vec<u32> },
    /// In-plane addresses, 3 bytes each.
    InPlane(InPlane),
}

/// Places logical pages in the forward table alone ([`PageMap::placers`]).
pub struct ForwardPlacer<'a> {
    table: ForwardTable<'a>,
    mapped: &'a mut u64,
}

enum ForwardTable<'a> {
    Global(&'a mut [u32]),
    InPlane(ForwardHalf<'a>),
}

impl ForwardPlacer<'_> {
    /// `lpa`, unmapped until now, lives on `ppa` (its reverse entry is the other placer's).
    #[inline]
    pub fn place(&mut self, lpa: u32, ppa: u32) {
        match &mut self.table {
            ForwardTable::Global(l2p) => {
                let old = std::mem::replace(&mut l2p[lpa as usize], ppa + 1);
                debug_assert_eq!(old, 0, "lpa {lpa} placed twice");
            }
            ForwardTable::InPlane(t) => t.place(lpa, ppa),
        }
        *self.mapped += 1;
    }
}

/// Places owners in the reverse table alone ([`PageMap::placers`]).
pub struct ReversePlacer<'a>(ReverseTable<'a>);

enum ReverseTable<'a> {
    Global(&'a mut [u32]),
    InPlane(ReverseHalf<'a>),
}

impl ReversePlacer<'_> {
    /// `ppa`'s owner is `lpa`.
    #[inline]
    pub fn place(&mut self, ppa: u32, lpa: u32) {
        match &mut self.0 {
            ReverseTable::Global(p2l) => p2l[ppa as usize] = lpa + 1,
            ReverseTable::InPlane(t) => t.place(ppa, lpa),
        }
    }
}

/// Where static allocation puts each logical page, for in-plane addresses: the plane of each
/// residue modulo the plane count and the physical pages per plane (the planes hold consecutive
/// ranges of them).
pub struct StaticPlanes {
    pub plane_of_residue: Vec<u32>,
    pub residue_of_plane: Vec<u32>,
    pub pages_per_plane: u32,
}

/// Asks the kernel to back a large table with transparent huge pages (2 MiB) where it allows
/// them on request (`/sys/kernel/mm/transparent_hugepage/enabled` = `madvise`, the usual
/// default): a random lookup in a half-gigabyte table then misses the TLB far less often, and
/// filling it takes one page fault per 2 MiB instead of one per 4 KiB. Pages are still taken
/// only when first touched. Advice only: where it is refused nothing changes.
fn advise_huge_pages<T>(table: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let (start, len) = (table.as_ptr() as usize, std::mem::size_of_val(table));
        let aligned = start.next_multiple_of(HUGE);
        if len < 2 * HUGE {
            return;
        }
        let end = (start + len) / HUGE * HUGE;
        // SAFETY: the range lies within the table's own allocation and madvise only advises.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE);
        }
    }
}

/// A `u32` table's bytes, for their addresses and length only.
fn as_bytes(table: &[u32]) -> &[u8] {
    // SAFETY: u8 has no alignment or validity requirement and the length covers the same bytes.
    unsafe { std::slice::from_raw_parts(table.as_ptr().cast::<u8>(), std::mem::size_of_val(table)) }
}

/// How far ahead of its validity checks a scan of a block asks for the owners' forward entries
/// ([`PageMap::prefetch_owner`]): far enough for the read to arrive, near enough to stay cached.
pub const OWNER_PREFETCH_PAGES: u32 = 8;

/// Asks the CPU to bring a table entry into its caches (none: an index past the table).
#[inline]
pub(super) fn prefetch<T>(entry: Option<&T>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(entry) = entry {
        // SAFETY: a prefetch never faults and has no effect but on the caches.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((entry as *const T).cast());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = entry;
}

/// A stored entry (value + 1, 0 for none) as the value, `UNMAPPED` for none.
#[inline]
fn decode(stored: u32) -> u32 {
    stored.wrapping_sub(1)
}

/// A forward entry as stored, with a kept placement ([`super::implied`]).
pub(super) enum Forward {
    /// 0: the steady state's page, if it placed one.
    Unwritten,
    Trimmed,
    At(u32),
}

/// The message when the tables' memory is refused.
fn refused(logical_pages: u64, physical_pages: u64, bytes_per_entry: u64) -> String {
    format!(
        "the mapping tables need {:.1} GiB ({} logical + {} physical pages x {bytes_per_entry} B) and that memory could not be allocated",
        ((logical_pages + physical_pages) * bytes_per_entry) as f64 / (1u64 << 30) as f64,
        logical_pages,
        physical_pages
    )
}

impl PageMap {
    /// Allocates both tables in device-wide addresses, or says how much memory they needed if
    /// the machine refused.
    pub fn new(logical_pages: u64, physical_pages: u64) -> Result<Self, String> {
        let table = |n: u64, huge: bool| -> Result<Vec<u32>, String> {
            // Ask first, to name the tables if the memory is refused; then take it zeroed,
            // which the allocator gets from the operating system untouched.
            Vec::<u32>::new().try_reserve_exact(n as usize).map_err(|_| refused(logical_pages, physical_pages, 4))?;
            let table = vec![0u32; n as usize];
            if huge {
                advise_huge_pages(&table);
            }
            Ok(table)
        };
        // Huge pages for the forward table only: it is read at random (every request's lookup,
        // every GC validity check), where a 4 KiB page per lookup misses the TLB. The reverse
        // table is written in program order and read a victim block at a time, so it gains
        // nothing from them, and asking costs: on a VM whose kernel compacts memory to find
        // huge pages at fault time (`transparent_hugepage/defrag` = `madvise`), faulting in 2
        // MiB pages measured 2-4x slower than 4 KiB ones (8 GiB: 6-13 s against 3.5 s), and a
        // 16 TiB steady state took 30 s with both tables advised against 20.5-23.8 s with the
        // forward one only (random reads and writes: the same within noise).
        let tables = Tables::Global { l2p: table(logical_pages, true)?, p2l: table(physical_pages, false)? };
        Ok(Self { tables, mapped: 0, implied: None })
    }

    /// Allocates both tables in 3-byte in-plane addresses ([`super::in_plane`]); every page
    /// must then be placed on the plane `planes` gives it. Fails if the drive's planes or
    /// logical space are too large for 24 bits, or the memory is refused.
    pub fn in_plane(logical_pages: u64, physical_pages: u64, planes: StaticPlanes) -> Result<Self, String> {
        let StaticPlanes { plane_of_residue, residue_of_plane, pages_per_plane } = planes;
        let tables = InPlane::new(logical_pages, physical_pages, pages_per_plane, plane_of_residue, residue_of_plane)?
            .ok_or_else(|| refused(logical_pages, physical_pages, 3))?;
        advise_huge_pages(tables.forward_bytes());
        Ok(Self { tables: Tables::InPlane(tables), mapped: 0, implied: None })
    }

    /// Where the tables lie, for [`TableMemory::populate`]: the forward entries of the logical
    /// pages in `forward_runs` (`[first, end)` pairs; `None`: all of them), then, if `with_reverse`,
    /// the whole reverse table.
    pub fn table_memory(&self, forward_runs: Option<&[(u64, u64)]>, with_reverse: bool) -> TableMemory {
        let (forward, reverse) = self.table_bytes();
        let mut ranges = match forward_runs {
            Some(runs) => self.ranges_of(forward, runs),
            None => vec![(forward.as_ptr() as usize, forward.len())],
        };
        if with_reverse {
            ranges.push((reverse.as_ptr() as usize, reverse.len()));
        }
        TableMemory { ranges }
    }

    /// Where the reverse entries of the physical pages in `runs` (`[first, end)` pairs, in any
    /// order) lie, for [`TableMemory::populate`]: adjacent and overlapping runs merged, so that a
    /// fill's block-sized runs make one range per stretch of blocks, not a system call each.
    pub fn reverse_memory(&self, runs: &[(u64, u64)]) -> TableMemory {
        let mut sorted: Vec<(u64, u64)> = runs.iter().copied().filter(|(first, end)| first < end).collect();
        sorted.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(sorted.len());
        for (first, end) in sorted {
            match merged.last_mut() {
                Some(last) if first <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((first, end)),
            }
        }
        TableMemory { ranges: self.ranges_of(self.table_bytes().1, &merged) }
    }

    /// The forward and the reverse table's bytes.
    fn table_bytes(&self) -> (&[u8], &[u8]) {
        match &self.tables {
            Tables::Global { l2p, p2l } => (as_bytes(l2p), as_bytes(p2l)),
            Tables::InPlane(t) => (t.forward_bytes(), t.reverse_bytes()),
        }
    }

    /// (address, bytes) of the entries of `runs` in `table` (runs past its end are cut).
    fn ranges_of(&self, table: &[u8], runs: &[(u64, u64)]) -> Vec<(usize, usize)> {
        let entry = self.bytes_per_entry() as u64;
        runs.iter()
            .filter_map(|&(first, end)| {
                let (from, to) = ((first * entry) as usize, (end * entry).min(table.len() as u64) as usize);
                (from < to).then(|| (table[from..].as_ptr() as usize, to - from))
            })
            .collect()
    }

    /// Bytes each logical and each physical page costs in the tables (4, or 3 in-plane).
    pub fn bytes_per_entry(&self) -> u32 {
        match self.tables {
            Tables::Global { .. } => 4,
            Tables::InPlane(_) => 3,
        }
    }

    /// The current physical page of `lpa`, or `UNMAPPED` if it was never written.
    #[inline(always)]
    pub fn lookup(&self, lpa: u32) -> u32 {
        if let Some(rule) = self.implied.as_deref() {
            return self.lookup_kept(rule, lpa);
        }
        match &self.tables {
            Tables::Global { l2p, .. } => decode(l2p[lpa as usize]),
            Tables::InPlane(t) => t.lookup(lpa),
        }
    }

    /// Keeps the steady state's placement as `rule` on this empty map (see the module's
    /// documentation): its logical pages count as mapped from now on.
    pub fn imply(&mut self, rule: ImpliedPlacement) {
        assert_eq!(self.mapped, 0, "a placement rule goes on an empty map");
        self.mapped = rule.mapped_pages();
        self.implied = Some(Box::new(rule));
    }

    /// Whether the steady state's placement is kept as a rule.
    pub fn is_implied(&self) -> bool {
        self.implied.is_some()
    }

    fn physical_pages(&self) -> u64 {
        match &self.tables {
            Tables::Global { p2l, .. } => p2l.len() as u64,
            Tables::InPlane(t) => t.physical_pages(),
        }
    }

    /// The logical page last written to `ppa` (it may be stale: check [`Self::is_valid`]), or
    /// `UNMAPPED` if nothing was written there since its erase.
    #[inline(always)]
    pub fn owner(&self, ppa: u32) -> u32 {
        match self.implied.as_deref() {
            Some(rule) => self.owner_kept(rule, ppa),
            None => self.table_owner(ppa),
        }
    }

    /// The reverse table's owner of `ppa` (`UNMAPPED`: none written since its erase).
    #[inline]
    fn table_owner(&self, ppa: u32) -> u32 {
        match &self.tables {
            Tables::Global { p2l, .. } => decode(p2l[ppa as usize]),
            Tables::InPlane(t) => t.owner(ppa),
        }
    }

    #[inline(always)]
    pub fn is_valid(&self, ppa: u32) -> bool {
        if let Some(rule) = self.implied.as_deref() {
            return self.is_valid_kept(rule, ppa);
        }
        match &self.tables {
            Tables::Global { l2p, p2l } => {
                let lpa = decode(p2l[ppa as usize]);
                lpa != UNMAPPED && l2p[lpa as usize] == ppa + 1
            }
            Tables::InPlane(t) => t.is_valid(ppa),
        }
    }

    /// Asks the CPU to bring the forward entry of `ppa`'s owner into its caches, ahead of an
    /// [`Self::is_valid`] check of `ppa`. GC checks a victim's pages one at a time as its moves
    /// are paced out, and each check is a random read of the forward map that misses the cache
    /// with nothing else to overlap it; asked for a few pages ahead, the entry is there when the
    /// check comes. A hint only: nothing is read or changed.
    #[inline(always)]
    pub fn prefetch_owner(&self, ppa: u32) {
        if let Some(rule) = self.implied.as_deref() {
            if u64::from(ppa) < self.physical_pages() {
                let lpa = self.owner_kept(rule, ppa);
                if lpa != UNMAPPED {
                    // The table's entry only: the check asks the rule nothing more (see
                    // `is_valid_kept`).
                    self.prefetch_table_entry(u64::from(lpa));
                }
            }
            return;
        }
        match &self.tables {
            Tables::Global { l2p, p2l } => {
                if let Some(&stored) = p2l.get(ppa as usize) {
                    prefetch(l2p.get(decode(stored) as usize));
                }
            }
            Tables::InPlane(t) => {
                if let Some(lpa) = t.owner_of_stored(ppa) {
                    prefetch(t.forward_entry(lpa as u64));
                }
            }
        }
    }

    /// Asks the CPU to bring `lpa`'s forward entry into its caches ahead of a [`Self::lookup`]
    /// (a new request's first page, looked up once its command is fetched; a page GC moves,
    /// checked and remapped once it is read), and with a kept placement the rule's entry
    /// that answers for it while unwritten. A hint only: nothing is read or changed, and a page
    /// past the table is ignored.
    #[inline]
    pub fn prefetch_lookup(&self, lpa: u64) {
        if let (Some(rule), Ok(lpa)) = (self.implied.as_deref(), u32::try_from(lpa)) {
            rule.prefetch_forward(lpa);
        }
        self.prefetch_table_entry(lpa);
    }

    /// The forward table's entry of `lpa` alone (see [`Self::prefetch_lookup`]).
    #[inline]
    fn prefetch_table_entry(&self, lpa: u64) {
        match &self.tables {
            Tables::Global { l2p, .. } => prefetch(l2p.get(lpa as usize)),
            Tables::InPlane(t) => prefetch(t.forward_entry(lpa)),
        }
    }

    /// Asks the CPU to bring `ppa`'s reverse entry into its caches ahead of a [`Self::remap`]
    /// onto it. Steady-state preconditioning places every logical page in order, so the forward
    /// table is written sequentially and the reverse one at random over the whole drive: each
    /// store is a cache miss on its own unless asked for a few pages ahead. A hint only.
    #[inline]
    pub fn prefetch_reverse(&self, ppa: u32) {
        match &self.tables {
            Tables::Global { p2l, .. } => prefetch(p2l.get(ppa as usize)),
            Tables::InPlane(t) => prefetch(t.reverse_entry(ppa)),
        }
    }

    /// Points `lpa` at `ppa`; returns the physical page it left (now invalid), if any.
    #[inline(always)]
    pub fn remap(&mut self, lpa: u32, ppa: u32) -> Option<u32> {
        let kept_old = self.implied.as_deref().map(|rule| self.lookup_kept(rule, lpa));
        let old = match &mut self.tables {
            Tables::Global { l2p, p2l } => {
                let old = decode(std::mem::replace(&mut l2p[lpa as usize], ppa + 1));
                p2l[ppa as usize] = lpa + 1;
                old
            }
            Tables::InPlane(t) => t.remap(lpa, ppa),
        };
        let old = match (kept_old, self.implied.as_deref_mut()) {
            (Some(kept_old), Some(rule)) => {
                rule.hold(ppa);
                kept_old
            }
            _ => old,
        };
        self.mapped += (old == UNMAPPED) as u64;
        (old != UNMAPPED).then_some(old)
    }

    /// Points the unmapped `lpa` at `ppa` in the forward table only: the first half of placing
    /// a whole drive's data in two passes, each in the order that keeps its table's writes
    /// sequential ([`Self::place_reverse`] is the other half; until it runs the tables
    /// disagree, and nothing may look at them).
    #[inline]
    pub fn place_forward(&mut self, lpa: u32, ppa: u32) {
        debug_assert!(self.implied.is_none(), "placing pages on a map whose placement is kept as a rule");
        match &mut self.tables {
            Tables::InPlane(t) => {
                t.place_forward(lpa, ppa);
                self.mapped += 1;
            }
            Tables::Global { .. } => self.placers().0.place(lpa, ppa),
        }
    }

    /// The other half of [`Self::place_forward`]: `ppa`'s owner is `lpa`.
    #[inline]
    pub fn place_reverse(&mut self, ppa: u32, lpa: u32) {
        self.placers().1.place(ppa, lpa);
    }

    /// [`Self::place_forward`] and [`Self::place_reverse`] as two writers, one per table, so
    /// that two threads can place a whole drive's pages at once (steady-state preconditioning
    /// of a 32 TiB drive writes 2 G entries into each table).
    #[inline]
    pub fn placers(&mut self) -> (ForwardPlacer<'_>, ReversePlacer<'_>) {
        debug_assert!(self.implied.is_none(), "placing pages on a map whose placement is kept as a rule");
        let mapped = &mut self.mapped;
        match &mut self.tables {
            Tables::Global { l2p, p2l } => {
                (ForwardPlacer { table: ForwardTable::Global(l2p), mapped }, ReversePlacer(ReverseTable::Global(p2l)))
            }
            Tables::InPlane(t) => {
                let (forward, reverse) = t.halves();
                (
                    ForwardPlacer { table: ForwardTable::InPlane(forward), mapped },
                    ReversePlacer(ReverseTable::InPlane(reverse)),
                )
            }
        }
    }

    /// Unmaps `lpa` (a trim); returns the physical page it left (now invalid), if any.
    #[inline]
    pub fn unmap(&mut self, lpa: u32) -> Option<u32> {
        let kept_old = self.implied.as_deref().map(|rule| self.lookup_kept(rule, lpa));
        let old = match &mut self.tables {
            // With a kept placement 0 is the rule's page: a trim leaves a mark of its own.
            Tables::Global { l2p, .. } => {
                let mark = if kept_old.is_some() { TRIMMED } else { 0 };
                decode(std::mem::replace(&mut l2p[lpa as usize], mark))
            }
            Tables::InPlane(t) => t.unmap(lpa),
        };
        let old = kept_old.unwrap_or(old);
        self.mapped -= (old != UNMAPPED) as u64;
        (old != UNMAPPED).then_some(old)
    }

    /// Forgets the owners of an erased block's pages (`pages` from `first_ppa`, a whole block).
    /// Entries that are already 0 are not written: a block never written since a kept
    /// placement has table pages the operating system never had to hand out.
    pub fn clear_physical(&mut self, first_ppa: u32, pages: u32) {
        if let Some(rule) = self.implied.as_deref_mut() {
            let untouched = !rule.held(first_ppa);
            rule.erase_pages(first_ppa, pages);
            if untouched {
                // Neither written nor erased since the rule: its entries are all 0 already.
                return;
            }
        }
        match &mut self.tables {
            Tables::Global { p2l, .. } => {
                let start = first_ppa as usize;
                let entries = &mut p2l[start..start + pages as usize];
                if entries.iter().any(|&e| e != 0) {
                    entries.fill(0);
                }
            }
            Tables::InPlane(t) => t.clear_physical(first_ppa, pages),
        }
    }

    /// `lpa`'s forward entry as stored, for a map with a kept placement.
    #[inline]
    fn forward_stored(&self, lpa: u32) -> Forward {
        match &self.tables {
            Tables::Global { l2p, .. } => match l2p[lpa as usize] {
                0 => Forward::Unwritten,
                TRIMMED => Forward::Trimmed,
                stored => Forward::At(stored - 1),
            },
            Tables::InPlane(t) => t.forward_stored(lpa),
        }
    }

    /// [`Self::lookup`] with a kept placement: an unwritten entry is the rule's.
    #[inline(never)]
    fn lookup_kept(&self, rule: &ImpliedPlacement, lpa: u32) -> u32 {
        match self.forward_stored(lpa) {
            Forward::Unwritten => rule.forward(lpa),
            Forward::Trimmed => UNMAPPED,
            Forward::At(ppa) => ppa,
        }
    }

    /// [`Self::owner`] with a kept placement: the table's owner where the page's block was
    /// written or erased since, the rule's where that one is none. A block the run has not
    /// touched is not looked up in the table at all: its table pages were never handed out, and
    /// a read would map them.
    #[inline(never)]
    fn owner_kept(&self, rule: &ImpliedPlacement, ppa: u32) -> u32 {
        if rule.held(ppa) {
            let lpa = self.table_owner(ppa);
            if lpa != UNMAPPED {
                return lpa;
            }
        }
        rule.owner(ppa)
    }

    /// [`Self::is_valid`] with a kept placement. A page whose owner and owner's forward entry
    /// are both the rule's is valid without asking the rule where it put the owner (the two are
    /// inverse), which would be a second random read per GC check.
    #[inline(never)]
    fn is_valid_kept(&self, rule: &ImpliedPlacement, ppa: u32) -> bool {
        if rule.held(ppa) {
            let lpa = self.table_owner(ppa);
            if lpa != UNMAPPED {
                return self.lookup_kept(rule, lpa) == ppa;
            }
        }
        let lpa = rule.owner(ppa);
        lpa != UNMAPPED
            && match self.forward_stored(lpa) {
                Forward::Unwritten => true,
                Forward::Trimmed => false,
                Forward::At(at) => at == ppa,
            }
    }

    pub fn logical_pages(&self) -> u64 {
        match &self.tables {
            Tables::Global { l2p, .. } => l2p.len() as u64,
            Tables::InPlane(t) => t.logical_pages(),
        }
    }

    pub fn mapped_pages(&self) -> u64 {
        self.mapped
    }

    /// Checks that every mapped logical page's physical page points back at it, and the count
    /// of mapped pages.
    pub fn check_agreement(&self) -> Result<(), String> {
        let mut counted = 0u64;
        for lpa in 0..self.logical_pages() as u32 {
            let ppa = self.lookup(lpa);
            counted += u64::from(ppa != UNMAPPED);
            if ppa != UNMAPPED && self.owner(ppa) != lpa {
                return Err(format!("lpa {lpa} maps to ppa {ppa}, whose reverse entry is {}", self.owner(ppa)));
            }
        }
        if counted != self.mapped {
            return Err(format!("{counted} logical pages are mapped, the count says {}", self.mapped));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;

    /// Populating the tables on one thread while another places pages in them loses no entry
    /// and changes none: the steady state's background faulting (both address forms).
    #[test]
    fn populating_while_placing_keeps_every_entry() {
        const PAGES: u32 = 1 << 22; // 16 MiB per global table
        let planes = 4u32;
        let per_plane = PAGES / planes;
        let static_planes = StaticPlanes {
            plane_of_residue: (0..planes).collect(),
            residue_of_plane: (0..planes).collect(),
            pages_per_plane: per_plane,
        };
        for mut map in [
            PageMap::new(u64::from(PAGES), u64::from(PAGES)).unwrap(),
            PageMap::in_plane(u64::from(PAGES), u64::from(PAGES), static_planes).unwrap(),
        ] {
            let memory = map.table_memory(None, true);
            assert!(memory.bytes() >= 2 * 3 * PAGES as usize);
            // Logical page l on plane l % planes, at page l / planes of that plane.
            let ppa_of = |lpa: u32| (lpa % planes) * per_plane + lpa / planes;
            // SAFETY: the map outlives the call and its tables are not replaced.
            unsafe {
                memory.while_populating(|| {
                    for lpa in (0..PAGES).step_by(3) {
                        map.place_forward(lpa, ppa_of(lpa));
                        map.place_reverse(ppa_of(lpa), lpa);
                    }
                })
            };
            // Once more to the end, with nothing placing meanwhile.
            // SAFETY: as above.
            unsafe { memory.populate(&AtomicBool::new(false)) };
            for lpa in 0..PAGES {
                let (expected_ppa, expected_owner) =
                    if lpa % 3 == 0 { (ppa_of(lpa), lpa) } else { (UNMAPPED, UNMAPPED) };
                assert_eq!(map.lookup(lpa), expected_ppa, "lpa {lpa}");
                assert_eq!(map.owner(ppa_of(lpa)), expected_owner, "ppa of lpa {lpa}");
            }
        }
    }

    /// Only the mapped runs' forward entries are faulted in (runs past the table are cut), then
    /// the whole reverse table.
    #[test]
    fn table_memory_covers_the_runs_then_the_reverse_table() {
        let map = PageMap::new(10_000, 12_000).unwrap();
        assert_eq!(map.table_memory(None, true).bytes(), (10_000 + 12_000) * 4);
        let runs = [(0, 10), (1_000, 3_000), (9_990, 20_000), (30_000, 40_000)];
        assert_eq!(map.table_memory(Some(&runs), true).bytes(), (10 + 2_000 + 10 + 12_000) * 4);
        assert_eq!(map.table_memory(Some(&[]), true).bytes(), 12_000 * 4);
        // The reverse entries of physical runs alone, cut at the table's end.
        let physical = [(11_990, 13_000), (0, 100), (5_000, 5_000)];
        assert_eq!(map.reverse_memory(&physical).bytes(), (100 + 10) * 4);
        let (_, reverse) = map.table_bytes();
        assert_eq!(map.reverse_memory(&physical).ranges[0], (reverse.as_ptr() as usize, 400));
        // Adjacent and overlapping runs make one range.
        let blocks = [(256, 512), (0, 256), (400, 600), (1_000, 1_100)];
        let ranges = map.reverse_memory(&blocks).ranges;
        assert_eq!(ranges.iter().map(|r| r.1).collect::<Vec<_>>(), [600 * 4, 100 * 4]);
    }
}
