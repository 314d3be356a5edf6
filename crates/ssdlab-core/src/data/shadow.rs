//! The host's view of what each sector should hold: the version of the last write to it (the
//! bytes are a function of LBA and version, see `content`), so the shadow costs 4 bytes per
//! logical page written in full and never stores data.
//!
//! The host's order is the only order NVMe defines: a read must return the last write that
//! completed before the read was submitted, provided no write to the same place was in flight
//! meanwhile. Two cases leave the content undefined, and the check skips them: a read of a page
//! that a host write touched (submitted, in flight or completed) while the read was in flight,
//! and sectors whose last writes were in flight together (the device may apply them in either
//! order). Tracking is per logical page, a little coarser than per sector.

use rustc_hash::FxHashMap;

use super::content::UNWRITTEN;

/// A sector whose content is not defined: overlapping writes were in flight together.
pub const AMBIGUOUS: u32 = u32::MAX;
/// In `page_version`: the page's sectors have different versions, listed in `mixed`.
const MIXED: u32 = u32::MAX - 1;
/// Versions run from 1 up to here; later writes are all `AMBIGUOUS` (about 4.3 billion writes).
const LAST_VERSION: u32 = u32::MAX - 2;

#[derive(Clone, Copy, Debug)]
struct Flight {
    writes: u32,
    /// Another write to the page was submitted while one was in flight.
    conflicted: bool,
}

pub struct Shadow {
    sectors_per_page: u64,
    /// Per logical page: the version of all its sectors, or `MIXED`. Allocated zeroed, so the
    /// operating system backs only the parts written.
    page_version: Vec<u32>,
    mixed: FxHashMap<u32, Box<[u32]>>,
    /// Per logical page: the clock when a host write to it was last submitted or completed.
    stamp: Vec<u64>,
    /// Pages with host writes in flight.
    flight: FxHashMap<u32, Flight>,
    clock: u64,
    last_version: u32,
}

impl Shadow {
    pub fn new(logical_pages: u64, sectors_per_page: u64) -> Self {
        Self {
            sectors_per_page,
            page_version: vec![UNWRITTEN; logical_pages as usize],
            mixed: FxHashMap::default(),
            stamp: vec![0; logical_pages as usize],
            flight: FxHashMap::default(),
            clock: 0,
            last_version: 0,
        }
    }

    fn pages(&self, start_sector: u64, sectors: u32) -> std::ops::RangeInclusive<u32> {
        let spp = self.sectors_per_page;
        (start_sector / spp) as u32..=((start_sector + sectors as u64 - 1) / spp) as u32
    }

    /// A host write of these sectors was submitted: returns its version.
    pub fn write_submitted(&mut self, start_sector: u64, sectors: u32) -> u32 {
        self.clock += 1;
        for lpa in self.pages(start_sector, sectors) {
            self.stamp[lpa as usize] = self.clock;
            let f = self.flight.entry(lpa).or_insert(Flight { writes: 0, conflicted: false });
            f.writes += 1;
            f.conflicted |= f.writes > 1;
        }
        if self.last_version < LAST_VERSION {
            self.last_version += 1;
            self.last_version
        } else {
            AMBIGUOUS
        }
    }

    /// The host write of these sectors with `version` completed: they now hold that version
    /// (or an undefined one if another write to their page was in flight with it).
    pub fn write_completed(&mut self, start_sector: u64, sectors: u32, version: u32) {
        self.clock += 1;
        let spp = self.sectors_per_page;
        let end = start_sector + sectors as u64;
        for lpa in self.pages(start_sector, sectors) {
            self.stamp[lpa as usize] = self.clock;
            let f = self.flight.get_mut(&lpa).expect("a completed write was submitted");
            let v = if f.conflicted { AMBIGUOUS } else { version };
            f.writes -= 1;
            if f.writes == 0 {
                self.flight.remove(&lpa);
            }
            let page_start = lpa as u64 * spp;
            let first = start_sector.max(page_start) - page_start;
            let last = end.min(page_start + spp) - page_start;
            self.set(lpa, first as usize..last as usize, v);
        }
    }

    /// A write of these sectors that was submitted ended without storing anything (a trim the
    /// mapping refused): they keep their versions; only the flight ends.
    pub fn write_abandoned(&mut self, start_sector: u64, sectors: u32) {
        self.clock += 1;
        for lpa in self.pages(start_sector, sectors) {
            self.stamp[lpa as usize] = self.clock;
            let f = self.flight.get_mut(&lpa).expect("an abandoned write was submitted");
            f.writes -= 1;
            if f.writes == 0 {
                self.flight.remove(&lpa);
            }
        }
    }

    fn set(&mut self, lpa: u32, sectors: std::ops::Range<usize>, version: u32) {
        let spp = self.sectors_per_page as usize;
        let current = self.page_version[lpa as usize];
        if sectors.len() == spp {
            self.page_version[lpa as usize] = version;
            if current == MIXED {
                self.mixed.remove(&lpa);
            }
            return;
        }
        if current == version {
            return;
        }
        let per_sector = self.mixed.entry(lpa).or_insert_with(|| vec![current; spp].into_boxed_slice());
        per_sector[sectors].fill(version);
        if per_sector.iter().all(|&v| v == per_sector[0]) {
            self.page_version[lpa as usize] = per_sector[0];
            self.mixed.remove(&lpa);
        } else {
            self.page_version[lpa as usize] = MIXED;
        }
    }

    /// Page `lpa` holds bytes the checks cannot regenerate (loaded from a backing file): its
    /// sectors are not checked until the host writes them.
    pub fn mark_unchecked(&mut self, lpa: u32) {
        let spp = self.sectors_per_page as usize;
        self.set(lpa, 0..spp, AMBIGUOUS);
    }

    /// The clock a read submitted now compares against.
    pub fn now(&self) -> u64 {
        self.clock
    }

    /// Whether page `lpa`, read by a request submitted at clock `since`, saw no host write to it
    /// (submitted, in flight or completed) while it was in flight.
    pub fn read_is_defined(&self, lpa: u32, since: u64) -> bool {
        self.stamp[lpa as usize] <= since && !self.flight.contains_key(&lpa)
    }

    /// The version sector `sector` of page `lpa` should hold (`AMBIGUOUS` when undefined).
    pub fn version(&self, lpa: u32, sector: usize) -> u32 {
        match self.page_version[lpa as usize] {
            MIXED => self.mixed[&lpa][sector],
            v => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completed_writes_set_versions_per_sector() {
        let mut s = Shadow::new(4, 8);
        assert_eq!(s.version(1, 0), UNWRITTEN);
        let v1 = s.write_submitted(8, 8);
        s.write_completed(8, 8, v1);
        let v2 = s.write_submitted(10, 3);
        s.write_completed(10, 3, v2);
        assert_eq!((s.version(1, 1), s.version(1, 2), s.version(1, 4), s.version(1, 5)), (v1, v2, v2, v1));
        // A write over the whole page makes it uniform again.
        let v3 = s.write_submitted(6, 12);
        s.write_completed(6, 12, v3);
        assert_eq!(
            (s.version(0, 5), s.version(0, 6), s.version(1, 2), s.version(2, 1), s.version(2, 2)),
            (0, v3, v3, v3, 0)
        );
        assert!(s.mixed.len() == 2 && !s.mixed.contains_key(&1));
    }

    #[test]
    fn reads_overlapping_writes_and_overlapping_writes_are_undefined() {
        let mut s = Shadow::new(4, 8);
        let since = s.now();
        assert!(s.read_is_defined(0, since));
        let v1 = s.write_submitted(0, 8);
        assert!(!s.read_is_defined(0, since), "a write in flight");
        assert!(s.read_is_defined(1, since), "another page");
        let v2 = s.write_submitted(4, 8);
        s.write_completed(0, 8, v1);
        s.write_completed(4, 8, v2);
        assert!(!s.read_is_defined(0, since), "written while the read was in flight");
        assert!(s.read_is_defined(0, s.now()));
        assert_eq!(s.version(0, 0), AMBIGUOUS, "two writes in flight together");
        assert_eq!(s.version(1, 0), v2, "page 1 had one write in flight");
        assert_eq!(s.version(1, 7), UNWRITTEN, "page 1's last sectors were written by neither");
        let v3 = s.write_submitted(0, 8);
        s.write_completed(0, 8, v3);
        assert_eq!(s.version(0, 3), v3, "a later write alone defines the page again");
    }
}
