//! The steady state's placement kept as the rule that made it, not written into the tables.
//!
//! Steady-state preconditioning (`precondition::steady`) places the k-th mapped logical page of
//! every plane where its group's sample plane put its k-th page. Written out, that is one forward
//! and one reverse entry per mapped page: on a 32 TiB drive 2 G entries in each table, 12 GiB
//! of memory faulted in and written, most of a 25 s steady state, and most of those entries are
//! never looked at again by a run of a million writes (issue 18). Kept as the rule, a table
//! entry the run has not written (zero, the memory the operating system hands out) answers with
//! the rule's page: the forward entry of logical page `lpa` with the page its rank on its plane
//! was placed on, the reverse entry of a physical page not erased since with the logical page
//! of the rank placed there. Whatever the run writes goes to the tables as before and wins.
//!
//! The answers are the written-out placement's, entry for entry (the unit tests compare the two
//! through random remaps, trims and erases), so results do not change.

use super::in_plane::Divisor;
use super::mapping::UNMAPPED;

/// The placement of one plane's logical pages: its mapped pages of the plane's residue, as
/// arithmetic runs (step: the plane count) with the rank of each run's first page.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    pub first_rank: u32,
    pub first_lpa: u64,
}

/// Above this many runs of mapped pages, steady state writes its placement into the tables
/// instead (a scattered set: each plane would keep a segment per run).
pub const MAX_SEGMENTS_PER_PLANE: usize = 64;

/// The rank of each page offset of a plane (`u32::MAX` for an offset no rank is placed on):
/// the inverse of a sample's `page_of_rank`.
pub fn inverse(page_of_rank: &[u32], plane_pages: usize) -> Vec<u32> {
    let mut rank_of_page = vec![u32::MAX; plane_pages];
    for (k, &offset) in page_of_rank.iter().enumerate() {
        rank_of_page[offset as usize] = k as u32;
    }
    rank_of_page
}

/// The steady state's placement rule (see the module's documentation).
pub struct ImpliedPlacement {
    /// The plane count: logical page `lpa` lies on plane `plane_of_residue[lpa % planes]`.
    planes: Divisor,
    plane_of_residue: Vec<u32>,
    pages_per_plane: Divisor,
    pages_per_block: Divisor,
    /// Each plane's group, whose sample it copies.
    group_of_plane: Vec<u32>,
    /// Per group: the page (offset within the plane) of each rank, and the rank of each page
    /// (`u32::MAX`: none).
    page_of_rank: Vec<Vec<u32>>,
    rank_of_page: Vec<Vec<u32>>,
    /// Mapped pages per plane (a plane with fewer than its sample leaves the sample's higher
    /// ranks unplaced).
    count_of_plane: Vec<u32>,
    /// Plane p's segments are `segments[segment_start[p]..segment_start[p + 1]]`, by rank.
    segment_start: Vec<u32>,
    segments: Vec<Segment>,
    /// One bit per block: erased since the steady state (its reverse entries are the table's).
    erased: Vec<u64>,
    /// One bit per block: written or erased since the steady state (the table may hold some of
    /// its reverse entries).
    held: Vec<u64>,
}

impl ImpliedPlacement {
    /// The rule for a drive of `plane_of_residue.len()` planes of `pages_per_plane` pages,
    /// blocks of `pages_per_block`: plane p holds `count_of_plane[p]` logical pages, in
    /// `segments_of_plane[p]`, its rank k at page `page_of_rank[group_of_plane[p]][k]`.
    pub fn new(
        plane_of_residue: Vec<u32>,
        pages_per_plane: u32,
        pages_per_block: u32,
        group_of_plane: Vec<u32>,
        page_of_rank: Vec<Vec<u32>>,
        count_of_plane: Vec<u32>,
        segments_of_plane: impl IntoIterator<Item = Vec<Segment>>,
    ) -> Self {
        let planes = plane_of_residue.len();
        let rank_of_page = page_of_rank.iter().map(|ranks| inverse(ranks, pages_per_plane as usize)).collect();
        let mut segment_start = Vec::with_capacity(planes + 1);
        let mut segments = Vec::new();
        segment_start.push(0);
        for plane_segments in segments_of_plane {
            segments.extend(plane_segments);
            segment_start.push(segments.len() as u32);
        }
        assert_eq!(segment_start.len(), planes + 1, "a list of segments per plane");
        let blocks = (planes as u64 * pages_per_plane as u64).div_ceil(pages_per_block as u64);
        Self {
            planes: Divisor::new(planes as u32),
            plane_of_residue,
            pages_per_plane: Divisor::new(pages_per_plane),
            pages_per_block: Divisor::new(pages_per_block),
            group_of_plane,
            page_of_rank,
            rank_of_page,
            count_of_plane,
            segment_start,
            segments,
            erased: vec![0; blocks.div_ceil(64) as usize],
            held: vec![0; blocks.div_ceil(64) as usize],
        }
    }

    /// Logical pages the rule places.
    pub fn mapped_pages(&self) -> u64 {
        self.count_of_plane.iter().map(|&n| u64::from(n)).sum()
    }

    #[inline]
    fn segments(&self, plane: u32) -> &[Segment] {
        &self.segments[self.segment_start[plane as usize] as usize..self.segment_start[plane as usize + 1] as usize]
    }

    /// The physical page the rule placed `lpa` on, or `UNMAPPED`.
    #[inline]
    pub fn forward(&self, lpa: u32) -> u32 {
        match self.plane_and_rank(lpa) {
            Some((plane, rank)) => plane * self.pages_per_plane.get() + self.page_of_rank(plane)[rank as usize],
            None => UNMAPPED,
        }
    }

    /// Asks the CPU to bring the entry [`Self::forward`] reads for `lpa` into its caches. Its
    /// rank's page is a random read of a list of a plane's pages (8 MiB per group of planes on
    /// drives of 2 M pages per plane): a GC move's validity check and remap ask for it, and it
    /// missed the caches on each (90 % of `lookup_kept`'s samples on a 4 TiB drive, perf). A
    /// hint only. Out of line, so that the callers' check for a rule stays small where there is
    /// none.
    #[inline(never)]
    pub fn prefetch_forward(&self, lpa: u32) {
        if let Some((plane, rank)) = self.plane_and_rank(lpa) {
            super::mapping::prefetch(self.page_of_rank(plane).get(rank as usize));
        }
    }

    /// The plane the rule put `lpa` on and its rank there; `None` where it placed no page.
    #[inline(always)]
    fn plane_and_rank(&self, lpa: u32) -> Option<(u32, u32)> {
        let (_, residue) = self.planes.div_rem(lpa);
        let plane = self.plane_of_residue[residue as usize];
        let segments = self.segments(plane);
        // The last segment starting at or before `lpa` (on its plane: all share the residue).
        let i = match segments {
            [only] if only.first_lpa <= u64::from(lpa) => 0,
            _ => match segments.partition_point(|s| s.first_lpa <= u64::from(lpa)) {
                0 => return None,
                n => n - 1,
            },
        };
        let segment = segments[i];
        let end_rank = segments.get(i + 1).map_or(self.count_of_plane[plane as usize], |s| s.first_rank);
        let (step, _) = self.planes.div_rem((u64::from(lpa) - segment.first_lpa) as u32);
        let rank = segment.first_rank + step;
        (rank < end_rank).then_some((plane, rank))
    }

    /// The page offset of each rank on `plane` (its group's sample's).
    #[inline]
    fn page_of_rank(&self, plane: u32) -> &[u32] {
        &self.page_of_rank[self.group_of_plane[plane as usize] as usize]
    }

    /// The logical page the rule placed on `ppa`, or `UNMAPPED` (no page of its rank, or its
    /// block erased since).
    #[inline]
    pub fn owner(&self, ppa: u32) -> u32 {
        let (block, _) = self.pages_per_block.div_rem(ppa);
        if self.erased[block as usize / 64] & (1 << (block % 64)) != 0 {
            return UNMAPPED;
        }
        let (plane, page) = self.pages_per_plane.div_rem(ppa);
        let rank = self.rank_of_page[self.group_of_plane[plane as usize] as usize][page as usize];
        if rank >= self.count_of_plane[plane as usize] {
            return UNMAPPED;
        }
        let segments = self.segments(plane);
        let segment = match segments {
            [only] => *only,
            _ => segments[segments.partition_point(|s| s.first_rank <= rank) - 1],
        };
        (segment.first_lpa + u64::from(rank - segment.first_rank) * u64::from(self.planes.get())) as u32
    }

    /// The blocks of `pages` pages from `first_ppa` are erased: from now on their reverse
    /// entries are the table's alone.
    pub fn erase_pages(&mut self, first_ppa: u32, pages: u32) {
        debug_assert!(
            self.pages_per_block.div_rem(first_ppa).1 == 0 && pages.is_multiple_of(self.pages_per_block.get()),
            "erases are of whole blocks"
        );
        let (first, _) = self.pages_per_block.div_rem(first_ppa);
        let (last, _) = self.pages_per_block.div_rem(first_ppa + pages.max(1) - 1);
        for block in first..=last {
            self.erased[block as usize / 64] |= 1 << (block % 64);
            self.held[block as usize / 64] |= 1 << (block % 64);
        }
    }

    /// `ppa`'s reverse entry is written in the table.
    #[inline]
    pub fn hold(&mut self, ppa: u32) {
        let (block, _) = self.pages_per_block.div_rem(ppa);
        self.held[block as usize / 64] |= 1 << (block % 64);
    }

    /// Whether the table may hold `ppa`'s reverse entry: its block was written or erased since.
    #[inline]
    pub fn held(&self, ppa: u32) -> bool {
        let (block, _) = self.pages_per_block.div_rem(ppa);
        self.held[block as usize / 64] & (1 << (block % 64)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two planes (residues swapped) of 8 pages, blocks of 4; plane 0 holds logical pages 1, 3,
    /// 7 and 9 (two runs), plane 1 holds 0 and 2; the sample's ranks sit on pages 5, 0, 7, 2.
    fn rule() -> ImpliedPlacement {
        ImpliedPlacement::new(
            vec![1, 0],
            8,
            4,
            vec![0, 0],
            vec![vec![5, 0, 7, 2]],
            vec![4, 2],
            [
                vec![Segment { first_rank: 0, first_lpa: 1 }, Segment { first_rank: 2, first_lpa: 7 }],
                vec![Segment { first_rank: 0, first_lpa: 0 }],
            ],
        )
    }

    #[test]
    fn forward_and_reverse_answers_are_inverse() {
        let rule = rule();
        assert_eq!(rule.mapped_pages(), 6);
        let expected = [(1, 5), (3, 0), (7, 7), (9, 2), (0, 8 + 5), (2, 8)];
        for (lpa, ppa) in expected {
            assert_eq!(rule.forward(lpa), ppa, "lpa {lpa}");
            assert_eq!(rule.owner(ppa), lpa, "ppa {ppa}");
        }
        for lpa in [4, 5, 6, 8, 10, 11, 13] {
            assert_eq!(rule.forward(lpa), UNMAPPED, "lpa {lpa} is not placed");
        }
        // Pages no rank sits on, and plane 1's ranks past its two pages.
        for ppa in [1, 3, 4, 6, 8 + 7, 8 + 2, 8 + 1] {
            assert_eq!(rule.owner(ppa), UNMAPPED, "ppa {ppa} holds nothing");
        }
    }

    #[test]
    fn an_erased_block_has_no_owners_left() {
        let mut rule = rule();
        rule.erase_pages(4, 4); // block 1: pages 4..8 of plane 0
        assert_eq!((rule.owner(5), rule.owner(7)), (UNMAPPED, UNMAPPED));
        assert_eq!((rule.owner(0), rule.owner(2)), (3, 9));
        // The forward rule is unchanged: the map's own entries say where those pages went.
        assert_eq!(rule.forward(1), 5);
    }
}
