//! Super-page mapping (Amber / SimpleSSD 2.0): one mapping entry per super-page, the `span`
//! consecutive logical pages that static allocation stripes over `span` planes, one page each.
//! Written whole, a super-page's pages take the next free page of each of their planes together.
//!
//! A write that covers only part of a super-page either rewrites the whole super-page (one
//! entry: the pages it does not cover are read and written again with it) or, with Amber's
//! random-I/O tweak (`super_page_update = "remap"`), writes only the pages it covers, each to
//! the next free page of its own plane, the entry keeping a pointer per page. This module
//! decides which pages a read-modify-write must carry; `sim/merge_path.rs` times it.

use super::mapping::{PageMap, UNMAPPED};

pub struct SuperPages {
    /// Pages per super-page.
    pub span: u32,
    logical_pages: u64,
}

impl SuperPages {
    pub fn new(span: u32, logical_pages: u64) -> Self {
        Self { span, logical_pages }
    }

    /// The super-page holding logical page `lpa`.
    #[inline]
    pub fn of(&self, lpa: u32) -> u32 {
        lpa / self.span
    }

    /// The pages of `lpa`'s super-page a write covering logical pages `first..=last` does not
    /// cover but that hold data: (lpa, current ppa), to be read and written again with it.
    pub fn rest_to_rewrite(&self, map: &PageMap, lpa: u32, first: u64, last: u64) -> Vec<(u32, u32)> {
        let base = self.of(lpa) as u64 * self.span as u64;
        (base..(base + self.span as u64).min(self.logical_pages))
            .filter(|&l| l < first || l > last)
            .filter_map(|l| {
                let ppa = map.lookup(l as u32);
                (ppa != UNMAPPED).then_some((l as u32, ppa))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_update_carries_the_written_rest_of_its_super_page() {
        let mut map = PageMap::new(16, 64).unwrap();
        for lpa in [4, 5, 7] {
            map.remap(lpa, 10 + lpa);
        }
        let sp = SuperPages::new(4, 16);
        assert_eq!(sp.of(6), 1);
        // Updating page 6 alone: pages 4, 5 and 7 hold data and move with it.
        assert_eq!(sp.rest_to_rewrite(&map, 6, 6, 6), vec![(4, 14), (5, 15), (7, 17)]);
        // A write covering 4..=5 carries only 7 (6 was never written).
        assert_eq!(sp.rest_to_rewrite(&map, 4, 4, 5), vec![(7, 17)]);
        // A whole super-page needs no read.
        assert!(sp.rest_to_rewrite(&map, 5, 4, 7).is_empty());
        // An empty super-page needs none either.
        assert!(sp.rest_to_rewrite(&map, 9, 9, 9).is_empty());
    }
}
