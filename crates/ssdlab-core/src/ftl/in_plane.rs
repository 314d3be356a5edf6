//! The mapping tables in 3-byte in-plane addresses (`ftl.map_addresses = "in-plane"`): where
//! static allocation over the whole device fixes every logical page's plane, a forward entry
//! needs only the page within that plane and a reverse entry only the logical page's rank
//! among its plane's residue class, so 6 bytes per page instead of 8 (issue 18: a 32 TiB drive
//! of 2 G physical pages in 12 GiB). The plane is computed from the address on each access
//! (a shift and a mask when the counts are powers of two, as on every drive we model).

use super::mapping::{Forward, UNMAPPED};

/// Entries of 24 bits, packed, little-endian: `3 n` bytes and one byte of padding, so that
/// every entry is read and written as one unaligned 4-byte word.
pub(super) struct Packed24 {
    bytes: Vec<u8>,
}

/// The largest value an entry holds (one less than 2^24).
pub(super) const PACKED24_MAX: u32 = (1 << 24) - 1;

/// The forward entry of a trimmed logical page: apart from 0, which may stand for the steady
/// state's page ([`super::implied`]). A stored page (+ 1) never reaches it: a plane's pages
/// number below it (`InPlane::new`).
pub(super) const TRIMMED_24: u32 = PACKED24_MAX;

impl Packed24 {
    /// A table of `n` zero entries, or `None` if the memory was refused. The memory comes from
    /// the operating system untouched (zero pages), taken only where an entry is written.
    pub(super) fn zeroed(n: u64) -> Option<Self> {
        let len = usize::try_from(n.checked_mul(3)?.checked_add(1)?).ok()?;
        Vec::<u8>::new().try_reserve_exact(len).ok()?;
        Some(Self { bytes: vec![0u8; len] })
    }

    pub(super) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Entries in the table.
    pub(super) fn len(&self) -> u64 {
        (self.bytes.len() / 3) as u64
    }

    #[inline]
    fn word(&self, i: u32) -> u32 {
        let at = 3 * i as usize;
        u32::from_le_bytes(self.bytes[at..at + 4].try_into().expect("four bytes"))
    }

    #[inline]
    pub(super) fn get(&self, i: u32) -> u32 {
        self.word(i) & PACKED24_MAX
    }

    /// Sets entry `i` to `value` (at most [`PACKED24_MAX`]) and returns what it held.
    #[inline]
    pub(super) fn replace(&mut self, i: u32, value: u32) -> u32 {
        debug_assert!(value <= PACKED24_MAX);
        let word = self.word(i);
        let at = 3 * i as usize;
        self.bytes[at..at + 4].copy_from_slice(&((word & !PACKED24_MAX) | value).to_le_bytes());
        word & PACKED24_MAX
    }

    /// Sets entry `i` to `value` (at most [`PACKED24_MAX`]) with stores alone: placing a whole
    /// drive's entries at random within a plane, a read-modify-write waited on a cache miss per
    /// entry (61 % of a 16 TiB steady state's placement pass in a perf profile), where stores
    /// go to the store buffer.
    #[inline]
    pub(super) fn set(&mut self, i: u32, value: u32) {
        debug_assert!(value <= PACKED24_MAX);
        let at = 3 * i as usize;
        self.bytes[at..at + 3].copy_from_slice(&value.to_le_bytes()[..3]);
    }

    /// The first byte of entry `i`, for a cache prefetch (none past the table).
    #[inline]
    pub(super) fn entry(&self, i: u64) -> Option<&u8> {
        self.bytes.get(usize::try_from(i.saturating_mul(3)).ok()?)
    }

    /// Zeroes entries `first..first + n`, writing nothing where they already are (their memory
    /// may never have been handed out).
    pub(super) fn clear(&mut self, first: u32, n: u32) {
        let at = 3 * first as usize;
        let entries = &mut self.bytes[at..at + 3 * n as usize];
        if entries.iter().any(|&b| b != 0) {
            entries.fill(0);
        }
    }
}

/// Division by a fixed count: a shift and a mask when it is a power of two.
#[derive(Clone, Copy, Debug)]
pub(super) struct Divisor {
    d: u32,
    shift: Option<u32>,
}

impl Divisor {
    pub(super) fn new(d: u32) -> Self {
        Self { d, shift: d.is_power_of_two().then(|| d.trailing_zeros()) }
    }

    /// `(x / d, x % d)`.
    #[inline]
    pub(super) fn div_rem(self, x: u32) -> (u32, u32) {
        match self.shift {
            Some(s) => (x >> s, x & (self.d - 1)),
            None => (x / self.d, x % self.d),
        }
    }

    #[inline]
    pub(super) fn get(self) -> u32 {
        self.d
    }
}

/// The two tables in in-plane addresses, and what turns them back into device-wide ones.
///
/// Static allocation puts logical page `lpa` on plane `plane_of_residue[lpa % planes]`, and the
/// planes hold consecutive ranges of `pages_per_plane` physical pages. So the forward entry of
/// `lpa` keeps its page within that plane (+ 1; 0: unmapped), and the reverse entry of a
/// physical page keeps `lpa / planes` (+ 1; 0: none since its erase), the plane giving the
/// residue back.
/// The forward table of an [`InPlane`] map, written apart from the reverse one
/// ([`InPlane::halves`]).
pub(super) struct ForwardHalf<'a> {
    l2p: &'a mut Packed24,
    pages_per_plane: Divisor,
}

impl ForwardHalf<'_> {
    /// `lpa` now lives on `ppa`, an unmapped logical page until now.
    #[inline]
    pub(super) fn place(&mut self, lpa: u32, ppa: u32) {
        let (_, page) = self.pages_per_plane.div_rem(ppa);
        debug_assert_eq!(self.l2p.get(lpa), 0, "lpa {lpa} placed twice");
        self.l2p.set(lpa, page + 1);
    }
}

/// The reverse table of an [`InPlane`] map, written apart from the forward one.
pub(super) struct ReverseHalf<'a> {
    p2l: &'a mut Packed24,
    planes: Divisor,
}

impl ReverseHalf<'_> {
    /// `ppa`'s owner is `lpa`.
    #[inline]
    pub(super) fn place(&mut self, ppa: u32, lpa: u32) {
        let (rank, _) = self.planes.div_rem(lpa);
        self.p2l.set(ppa, rank + 1);
    }
}

pub(super) struct InPlane {
    l2p: Packed24,
    p2l: Packed24,
    planes: Divisor,
    pages_per_plane: Divisor,
    plane_of_residue: Vec<u32>,
    residue_of_plane: Vec<u32>,
}

impl InPlane {
    /// Tables for `logical_pages` and `physical_pages`, or why these addresses cannot hold them
    /// (`Ok(None)`: the memory was refused).
    pub(super) fn new(
        logical_pages: u64,
        physical_pages: u64,
        pages_per_plane: u32,
        plane_of_residue: Vec<u32>,
        residue_of_plane: Vec<u32>,
    ) -> Result<Option<Self>, String> {
        let planes = plane_of_residue.len() as u64;
        if pages_per_plane >= PACKED24_MAX {
            return Err(format!("a plane holds {pages_per_plane} pages, and an in-plane address has 24 bits"));
        }
        if logical_pages.div_ceil(planes) >= PACKED24_MAX as u64 {
            return Err(format!(
                "{logical_pages} logical pages over {planes} planes need more than the reverse entry's 24 bits"
            ));
        }
        let (Some(l2p), Some(p2l)) = (Packed24::zeroed(logical_pages), Packed24::zeroed(physical_pages)) else {
            return Ok(None);
        };
        Ok(Some(Self {
            l2p,
            p2l,
            planes: Divisor::new(planes as u32),
            pages_per_plane: Divisor::new(pages_per_plane),
            plane_of_residue,
            residue_of_plane,
        }))
    }

    pub(super) fn forward_bytes(&self) -> &[u8] {
        self.l2p.bytes()
    }

    pub(super) fn reverse_bytes(&self) -> &[u8] {
        self.p2l.bytes()
    }

    pub(super) fn logical_pages(&self) -> u64 {
        self.l2p.len()
    }

    pub(super) fn physical_pages(&self) -> u64 {
        self.p2l.len()
    }

    /// `lpa`'s forward entry as stored (a map with a kept placement).
    #[inline]
    pub(super) fn forward_stored(&self, lpa: u32) -> Forward {
        match self.l2p.get(lpa) {
            0 => Forward::Unwritten,
            TRIMMED_24 => Forward::Trimmed,
            stored => {
                let (_, residue) = self.planes.div_rem(lpa);
                Forward::At(self.plane_of_residue[residue as usize] * self.pages_per_plane.get() + stored - 1)
            }
        }
    }

    #[inline]
    pub(super) fn lookup(&self, lpa: u32) -> u32 {
        match self.l2p.get(lpa) {
            0 | TRIMMED_24 => UNMAPPED,
            stored => {
                let (_, residue) = self.planes.div_rem(lpa);
                self.plane_of_residue[residue as usize] * self.pages_per_plane.get() + stored - 1
            }
        }
    }

    #[inline]
    pub(super) fn owner(&self, ppa: u32) -> u32 {
        match self.p2l.get(ppa) {
            0 => UNMAPPED,
            stored => {
                let (plane, _) = self.pages_per_plane.div_rem(ppa);
                (stored - 1) * self.planes.get() + self.residue_of_plane[plane as usize]
            }
        }
    }

    #[inline]
    pub(super) fn is_valid(&self, ppa: u32) -> bool {
        let lpa = self.owner(ppa);
        lpa != UNMAPPED && self.l2p.get(lpa) == self.pages_per_plane.div_rem(ppa).1 + 1
    }

    #[inline]
    pub(super) fn forward_entry(&self, lpa: u64) -> Option<&u8> {
        self.l2p.entry(lpa)
    }

    #[inline]
    pub(super) fn reverse_entry(&self, ppa: u32) -> Option<&u8> {
        self.p2l.entry(ppa as u64)
    }

    /// The stored reverse entry of `ppa` turned into its owner, for a prefetch of the owner's
    /// forward entry (`None`: no owner).
    #[inline]
    pub(super) fn owner_of_stored(&self, ppa: u32) -> Option<u32> {
        ((ppa as u64) < self.p2l.len()).then(|| self.owner(ppa)).filter(|&lpa| lpa != UNMAPPED)
    }

    /// Points `lpa` at `ppa` in both tables; returns the forward entry's previous physical page
    /// (or `UNMAPPED`). A page placed off its static plane cannot be written in these
    /// addresses: the configuration check (`Ftl::new`) keeps every placement on it, and a
    /// placement that is not stops the run rather than corrupt the map.
    #[inline]
    pub(super) fn remap(&mut self, lpa: u32, ppa: u32) -> u32 {
        let (rank, residue) = self.planes.div_rem(lpa);
        let (plane, page) = self.pages_per_plane.div_rem(ppa);
        assert_eq!(
            self.plane_of_residue[residue as usize], plane,
            "in-plane mapping: logical page {lpa} placed on plane {plane}, off its static plane"
        );
        let old = self.l2p.replace(lpa, page + 1);
        self.p2l.set(ppa, rank + 1);
        match old {
            0 | TRIMMED_24 => UNMAPPED,
            old => plane * self.pages_per_plane.get() + old - 1,
        }
    }

    /// The forward half of [`Self::remap`] onto an unmapped `lpa` (the reverse entry written
    /// later by [`Self::place_reverse`]).
    #[inline]
    pub(super) fn place_forward(&mut self, lpa: u32, ppa: u32) {
        debug_assert_eq!(
            self.plane_of_residue[self.planes.div_rem(lpa).1 as usize],
            self.pages_per_plane.div_rem(ppa).0,
            "lpa {lpa} off its plane"
        );
        self.halves().0.place(lpa, ppa);
    }

    /// The forward and the reverse table as two writers, so that two threads can place a whole
    /// drive's pages at once, one table each (steady-state preconditioning).
    #[inline]
    pub(super) fn halves(&mut self) -> (ForwardHalf<'_>, ReverseHalf<'_>) {
        (
            ForwardHalf { l2p: &mut self.l2p, pages_per_plane: self.pages_per_plane },
            ReverseHalf { p2l: &mut self.p2l, planes: self.planes },
        )
    }

    /// Unmaps `lpa`; returns the physical page it left (or `UNMAPPED`).
    #[inline]
    pub(super) fn unmap(&mut self, lpa: u32) -> u32 {
        let old = self.lookup(lpa);
        self.l2p.set(lpa, TRIMMED_24);
        old
    }

    pub(super) fn clear_physical(&mut self, first_ppa: u32, pages: u32) {
        self.p2l.clear(first_ppa, pages);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::mapping::{PageMap, StaticPlanes};

    #[test]
    fn packed_entries_hold_24_bits_without_touching_their_neighbours() {
        let mut t = Packed24::zeroed(5).unwrap();
        assert_eq!(t.len(), 5);
        assert_eq!(t.replace(1, PACKED24_MAX), 0);
        assert_eq!(t.replace(3, 0x12_3456), 0);
        assert_eq!((t.get(0), t.get(1), t.get(2), t.get(3), t.get(4)), (0, PACKED24_MAX, 0, 0x12_3456, 0));
        assert_eq!(t.replace(1, 7), PACKED24_MAX);
        t.set(4, 9);
        t.set(2, PACKED24_MAX);
        t.set(2, 0);
        t.clear(3, 1);
        assert_eq!((t.get(1), t.get(2), t.get(3), t.get(4)), (7, 0, 0, 9));
    }

    #[test]
    fn divisors_divide_by_shift_or_division_alike() {
        for d in [1u32, 6, 8, 640, 1024] {
            for x in [0u32, 1, 5, 639, 640, 1025, u32::MAX] {
                assert_eq!(Divisor::new(d).div_rem(x), (x / d, x % d), "{x} / {d}");
            }
        }
    }

    /// Static planes of a drive of `planes` planes (a scrambled residue order) with
    /// `pages_per_plane` pages each.
    fn planes(planes: u32, pages_per_plane: u32) -> StaticPlanes {
        let plane_of_residue: Vec<u32> = (0..planes).map(|r| (r * 5 + 3) % planes).collect();
        let mut residue_of_plane = vec![0; planes as usize];
        for (r, &p) in plane_of_residue.iter().enumerate() {
            residue_of_plane[p as usize] = r as u32;
        }
        StaticPlanes { plane_of_residue, residue_of_plane, pages_per_plane }
    }

    /// A random mix of remaps (each to a free page of the logical page's static plane), trims
    /// and erases gives the same lookups, owners and validity in both address forms, with plane
    /// and page counts that are powers of two and that are not.
    #[test]
    fn in_plane_tables_answer_as_global_ones_do() {
        for (n_planes, per_plane) in [(6u32, 40u32), (8, 64), (7, 33)] {
            let physical = (n_planes * per_plane) as u64;
            let logical = physical * 3 / 4;
            let mut global = PageMap::new(logical, physical).unwrap();
            let mut packed = PageMap::in_plane(logical, physical, planes(n_planes, per_plane)).unwrap();
            assert_eq!((global.bytes_per_entry(), packed.bytes_per_entry()), (4, 3));
            let static_planes = planes(n_planes, per_plane);
            let mut next_free = vec![0u32; n_planes as usize];
            let mut rng = crate::engine::RandomStream::new(7, 0);
            for step in 0..20_000u32 {
                let lpa = rng.below(logical) as u32;
                match rng.below(10) {
                    0 => assert_eq!(global.unmap(lpa), packed.unmap(lpa), "step {step}: unmap {lpa}"),
                    1 => {
                        // Erase a plane's pages and start it over.
                        let p = rng.below(n_planes as u64) as usize;
                        global.clear_physical(p as u32 * per_plane, per_plane);
                        packed.clear_physical(p as u32 * per_plane, per_plane);
                        next_free[p] = 0;
                    }
                    _ => {
                        let p = static_planes.plane_of_residue[(lpa % n_planes) as usize] as usize;
                        if next_free[p] == per_plane {
                            continue;
                        }
                        let ppa = p as u32 * per_plane + next_free[p];
                        next_free[p] += 1;
                        assert_eq!(global.remap(lpa, ppa), packed.remap(lpa, ppa), "step {step}: remap {lpa} {ppa}");
                    }
                }
                assert_eq!(global.mapped_pages(), packed.mapped_pages(), "step {step}");
            }
            for lpa in 0..logical as u32 {
                assert_eq!(global.lookup(lpa), packed.lookup(lpa), "lpa {lpa}");
            }
            for ppa in 0..physical as u32 {
                assert_eq!(global.owner(ppa), packed.owner(ppa), "ppa {ppa}");
                assert_eq!(global.is_valid(ppa), packed.is_valid(ppa), "ppa {ppa}");
            }
            assert_eq!(global.logical_pages(), packed.logical_pages());
        }
    }

    #[test]
    #[should_panic(expected = "off its static plane")]
    fn a_page_placed_off_its_static_plane_stops_the_run() {
        let mut map = PageMap::in_plane(30, 40, planes(4, 10)).unwrap();
        // Logical page 0 belongs on plane 3 (residue 0); page 0 is on plane 0.
        map.remap(0, 0);
    }

    #[test]
    fn addresses_past_24_bits_are_refused() {
        let e = PageMap::in_plane(10, 1 << 25, planes(2, 1 << 24)).err().unwrap();
        assert!(e.contains("24 bits"), "{e}");
        let e = PageMap::in_plane(1 << 26, 1 << 27, planes(2, 1 << 20)).err().unwrap();
        assert!(e.contains("24 bits"), "{e}");
    }
}
