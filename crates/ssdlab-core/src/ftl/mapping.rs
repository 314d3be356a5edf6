//! Page-level address translation: logical page (LPA) to physical page (PPA) and back.
//!
//! Both directions are flat `u32` arrays (4 bytes per logical page and 4 per physical page), which
//! keeps a 512 GiB device's tables near 512 MiB. Validity is not stored separately: a physical
//! page is valid exactly when the forward map points back at it, so the two maps can never
//! disagree about which copy of a page is current.
//!
//! This is the one seam through which every lookup goes; the cached mapping table (DFTL) adds its
//! timing in front of it without changing the functional table.

pub const UNMAPPED: u32 = u32::MAX;

pub struct PageMap {
    l2p: Vec<u32>,
    p2l: Vec<u32>,
}

impl PageMap {
    /// Allocates both tables, or says how much memory they needed if the machine refused.
    pub fn new(logical_pages: u64, physical_pages: u64) -> Result<Self, String> {
        let table = |n: u64| -> Result<Vec<u32>, String> {
            let mut v = Vec::new();
            v.try_reserve_exact(n as usize).map_err(|_| {
                format!(
                    "the mapping tables need {:.1} GiB ({} logical + {} physical pages x 4 B) and that memory could not be allocated",
                    ((logical_pages + physical_pages) * 4) as f64 / (1u64 << 30) as f64,
                    logical_pages,
                    physical_pages
                )
            })?;
            v.resize(n as usize, UNMAPPED);
            Ok(v)
        };
        Ok(Self { l2p: table(logical_pages)?, p2l: table(physical_pages)? })
    }

    /// The current physical page of `lpa`, or `UNMAPPED` if it was never written.
    #[inline]
    pub fn lookup(&self, lpa: u32) -> u32 {
        self.l2p[lpa as usize]
    }

    /// The logical page last written to `ppa` (it may be stale: check [`Self::is_valid`]).
    #[inline]
    pub fn owner(&self, ppa: u32) -> u32 {
        self.p2l[ppa as usize]
    }

    #[inline]
    pub fn is_valid(&self, ppa: u32) -> bool {
        let lpa = self.p2l[ppa as usize];
        lpa != UNMAPPED && self.l2p[lpa as usize] == ppa
    }

    /// Points `lpa` at `ppa`; returns the physical page it left (now invalid), if any.
    #[inline]
    pub fn remap(&mut self, lpa: u32, ppa: u32) -> Option<u32> {
        let old = std::mem::replace(&mut self.l2p[lpa as usize], ppa);
        self.p2l[ppa as usize] = lpa;
        (old != UNMAPPED).then_some(old)
    }

    /// Unmaps `lpa` (a trim); returns the physical page it left (now invalid), if any.
    #[inline]
    pub fn unmap(&mut self, lpa: u32) -> Option<u32> {
        let old = std::mem::replace(&mut self.l2p[lpa as usize], UNMAPPED);
        (old != UNMAPPED).then_some(old)
    }

    /// Forgets the owners of an erased block's pages.
    pub fn clear_physical(&mut self, first_ppa: u32, pages: u32) {
        let start = first_ppa as usize;
        self.p2l[start..start + pages as usize].fill(UNMAPPED);
    }

    pub fn logical_pages(&self) -> u64 {
        self.l2p.len() as u64
    }

    pub fn mapped_pages(&self) -> u64 {
        self.l2p.iter().filter(|&&p| p != UNMAPPED).count() as u64
    }

    /// Checks that every mapped logical page's physical page points back at it.
    pub fn check_agreement(&self) -> Result<(), String> {
        for (lpa, &ppa) in self.l2p.iter().enumerate() {
            if ppa != UNMAPPED && self.p2l[ppa as usize] != lpa as u32 {
                return Err(format!("lpa {lpa} maps to ppa {ppa}, whose reverse entry is {}", self.p2l[ppa as usize]));
            }
        }
        Ok(())
    }
}
