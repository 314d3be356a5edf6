//! Flash geometry: counts of each resource and the integer ids that address them.
//!
//! Derived from the config alone, this is the one home of the capacity arithmetic (logical pages,
//! translation pages, the GC reserve held back per plane) that validation, the memory estimate
//! and every part of the device share; `crate::flash` re-exports it.
//!
//! Ids are dense and nested, so that arrays indexed by id replace pointer graphs:
//! chip = channel * chips_per_channel + way; die = chip * dies_per_chip + die_in_chip;
//! plane = die * planes_per_die + plane_in_die; block = plane * blocks_per_plane + block_in_plane;
//! physical page address (PPA) = block * pages_per_block + page_in_block.

use super::{Config, ConfigError};
use crate::engine::Divisor;

pub const SECTOR_BYTES: u64 = 512;
/// Multi-plane commands are formed in a fixed-size array on the hot path.
pub const MAX_PLANES_PER_DIE: u32 = 8;

/// One of the four parallelism levels a static allocation order stripes over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Channel,
    Way,
    Die,
    Plane,
}

#[derive(Clone, Debug)]
pub struct Geometry {
    // Each level's count per parent, then in the whole device.
    pub channels: u32,
    pub chips_per_channel: u32,
    pub chips: u32,
    pub dies_per_chip: u32,
    pub dies: u32,
    pub planes_per_die: u32,
    pub planes: u32,
    pub blocks_per_plane: u32,
    pub blocks: u32,
    pub pages_per_block: u32,
    pub physical_pages: u64,
    pub page_size_bytes: u64,
    pub sectors_per_page: u64,
    /// Pages the host can address: physical pages less over-provisioning.
    pub logical_pages: u64,
    /// Mapping entries per translation page.
    pub entries_per_translation_page: u64,
    /// Translation pages holding the full map in flash (0 with an ideal mapping table). They are
    /// addressed as logical pages `logical_pages..logical_pages + translation_pages`.
    pub translation_pages: u64,
    /// Static allocation order, fastest-varying level first.
    pub allocation: [Level; 4],
    /// Plane of each residue `lpa mod planes`: static allocation repeats with that period, so one
    /// division and a lookup replace four divisions on the hot path.
    plane_by_residue: Vec<u32>,
    /// The counts the hot path divides by (a shift and a mask for a power of two, as on every
    /// real part; `Divisor` says why): the page and block of a PPA, the plane of a block, the
    /// die of a plane, the chip of a die, the channel of a chip, the page of a sector and the
    /// residue of a logical page.
    per_block: Divisor,
    per_plane: Divisor,
    per_die: Divisor,
    per_chip: Divisor,
    per_channel: Divisor,
    per_page: Divisor,
    all_planes: Divisor,
}

impl Geometry {
    /// Builds the geometry from a validated configuration.
    pub fn new(config: &Config) -> Self {
        Self::counts(config).with_plane_table()
    }

    /// The counts alone, without the per-plane lookup table (which takes 4 bytes per plane):
    /// what validation and the memory estimate need before anything large is allocated.
    /// [`Self::plane_of_lpa`] must not be called on it.
    pub fn counts(config: &Config) -> Self {
        let f = &config.flash;
        let chips = f.channels * f.chips_per_channel;
        let dies = chips * f.dies_per_chip;
        let planes = dies * f.planes_per_die;
        let blocks = planes * f.blocks_per_plane;
        let physical_pages = blocks as u64 * f.pages_per_block as u64;
        let logical_pages = ((physical_pages as f64) * (1.0 - config.ftl.over_provisioning)).floor() as u64;
        let entries_per_translation_page = f.page_size.value / super::mapping::entry_bytes(config).1;
        // The block, hybrid and super-page families keep their (small) tables in DRAM.
        let in_dram = config.ftl.ideal_mapping || config.ftl.mapping != super::MappingFamily::Page;
        let translation_pages = if in_dram { 0 } else { logical_pages.div_ceil(entries_per_translation_page) };
        Self {
            channels: f.channels,
            chips_per_channel: f.chips_per_channel,
            dies_per_chip: f.dies_per_chip,
            planes_per_die: f.planes_per_die,
            blocks_per_plane: f.blocks_per_plane,
            pages_per_block: f.pages_per_block,
            page_size_bytes: f.page_size.value,
            sectors_per_page: f.page_size.value / SECTOR_BYTES,
            chips,
            dies,
            planes,
            blocks,
            physical_pages,
            logical_pages,
            entries_per_translation_page,
            translation_pages,
            allocation: parse_allocation(&config.ftl.allocation).expect("validated allocation order"),
            plane_by_residue: Vec::new(),
            per_block: Divisor::new(f.pages_per_block.into()),
            per_plane: Divisor::new(f.blocks_per_plane.into()),
            per_die: Divisor::new(f.planes_per_die.into()),
            per_chip: Divisor::new(f.dies_per_chip.into()),
            per_channel: Divisor::new(f.chips_per_channel.into()),
            per_page: Divisor::new(f.page_size.value / SECTOR_BYTES),
            all_planes: Divisor::new(planes.into()),
        }
    }

    fn with_plane_table(mut self) -> Self {
        self.plane_by_residue = (0..self.planes as u64).map(|r| self.plane_by_order(r)).collect();
        self
    }

    /// Replaces the allocation order (and the table derived from it).
    pub fn set_allocation(&mut self, allocation: [Level; 4]) {
        self.allocation = allocation;
        *self = self.clone().with_plane_table();
    }

    pub fn logical_sectors(&self) -> u64 {
        self.logical_pages * self.sectors_per_page
    }

    /// The (logical) page that holds sector `sector`.
    #[inline]
    pub fn page_of_sector(&self, sector: u64) -> u64 {
        self.per_page.div_u64(sector)
    }

    /// The (logical) pages that sectors `start..end` touch (`end > start`).
    #[inline]
    pub fn pages_of_sectors(&self, start: u64, end: u64) -> std::ops::RangeInclusive<u64> {
        self.page_of_sector(start)..=self.page_of_sector(end - 1)
    }

    /// The residue (logical page modulo planes) whose pages static allocation puts on each
    /// plane, when each plane has exactly one (every allocation order does: the residue's
    /// digits are the plane's channel, way, die and plane).
    pub fn residue_of_plane(&self) -> Option<Vec<u32>> {
        let mut residue = vec![u32::MAX; self.planes as usize];
        for (r, &p) in self.plane_by_residue.iter().enumerate() {
            if std::mem::replace(&mut residue[p as usize], r as u32) != u32::MAX {
                return None;
            }
        }
        residue.iter().all(|&r| r != u32::MAX).then_some(residue)
    }

    /// The planes of logical pages `from`, `from + 1`, ... in turn, by static allocation: one
    /// division for the whole walk, not one per page (fills and steady-state placement walk
    /// hundreds of millions of consecutive pages).
    #[inline]
    pub fn planes_from(&self, from: u64) -> PlanesFrom<'_> {
        PlanesFrom { table: &self.plane_by_residue, residue: self.all_planes.rem_u64(from) as usize }
    }

    /// The plane of the logical pages of residue `residue` (modulo the planes).
    #[inline]
    pub fn plane_of_residue(&self, residue: u32) -> u32 {
        self.plane_by_residue[residue as usize]
    }

    /// The plane a logical page is striped to by the static allocation order.
    #[inline]
    pub fn plane_of_lpa(&self, lpa: u64) -> u32 {
        self.plane_by_residue[self.all_planes.rem_u64(lpa) as usize]
    }

    /// The same, computed level by level from the order.
    fn plane_by_order(&self, lpa: u64) -> u32 {
        let (mut channel, mut way, mut die, mut plane) = (0u64, 0u64, 0u64, 0u64);
        let mut rest = lpa;
        for level in self.allocation {
            let size = self.level_size(level) as u64;
            let index = rest % size;
            rest /= size;
            match level {
                Level::Channel => channel = index,
                Level::Way => way = index,
                Level::Die => die = index,
                Level::Plane => plane = index,
            }
        }
        let chip = channel * self.chips_per_channel as u64 + way;
        let die_id = chip * self.dies_per_chip as u64 + die;
        (die_id * self.planes_per_die as u64 + plane) as u32
    }

    pub fn level_size(&self, level: Level) -> u32 {
        match level {
            Level::Channel => self.channels,
            Level::Way => self.chips_per_channel,
            Level::Die => self.dies_per_chip,
            Level::Plane => self.planes_per_die,
        }
    }

    #[inline]
    pub fn die_of_plane(&self, plane: u32) -> u32 {
        self.per_die.div_u32(plane)
    }
    #[inline]
    pub fn chip_of_die(&self, die: u32) -> u32 {
        self.per_chip.div_u32(die)
    }
    #[inline]
    pub fn channel_of_chip(&self, chip: u32) -> u32 {
        self.per_channel.div_u32(chip)
    }
    #[inline]
    pub fn plane_of_block(&self, block: u32) -> u32 {
        self.per_plane.div_u32(block)
    }
    #[inline]
    pub fn block_of_ppa(&self, ppa: u32) -> u32 {
        self.per_block.div_u32(ppa)
    }
    #[inline]
    pub fn page_in_block(&self, ppa: u32) -> u32 {
        self.per_block.rem_u32(ppa)
    }
    #[inline]
    pub fn first_block_of_plane(&self, plane: u32) -> u32 {
        plane * self.blocks_per_plane
    }
    /// Most logical pages any one plane receives under static allocation (it stripes by
    /// `lpa mod planes`, so planes differ by at most one page).
    pub fn max_logical_pages_per_plane(&self) -> u64 {
        self.logical_pages.div_ceil(self.planes as u64)
    }

    /// Most pages (host data and translation pages) any one plane may have to hold.
    pub fn max_mapped_pages_per_plane(&self) -> u64 {
        (self.logical_pages + self.translation_pages).div_ceil(self.planes as u64)
    }

    /// The logical page number under which translation page `tpage` is mapped.
    #[inline]
    pub fn translation_lpa(&self, tpage: u32) -> u32 {
        (self.logical_pages + tpage as u64) as u32
    }
    /// Blocks held back for GC: it runs when fewer are free (at least two, so a GC can always
    /// finish moving a victim's pages).
    pub fn gc_threshold_blocks(&self, gc_threshold: f64) -> u32 {
        ((gc_threshold * self.blocks_per_plane as f64).ceil() as u32).max(2)
    }

    /// Blocks of a plane that cannot hold the host's data at rest: the GC reserve and the two
    /// open blocks (user and GC write frontiers). The one home of this figure (the config
    /// check of `ftl.over_provisioning` and the per-flow domains' space check both use it).
    pub fn held_back_blocks(&self, gc_threshold: f64) -> u32 {
        self.gc_threshold_blocks(gc_threshold) + 2
    }

    /// Pages of a plane that can hold mapped data beside [`Self::held_back_blocks`].
    pub fn usable_pages_per_plane(&self, gc_threshold: f64) -> u64 {
        (self.blocks_per_plane as u64).saturating_sub(self.held_back_blocks(gc_threshold) as u64)
            * self.pages_per_block as u64
    }
}

/// Parses an allocation order such as "CWDP" into levels, fastest first.
pub fn parse_allocation(text: &str) -> Result<[Level; 4], ConfigError> {
    let err = || {
        ConfigError::new(
            "ftl.allocation",
            format!("expected a permutation of the letters C, W, D, P such as \"CWDP\", got \"{text}\""),
        )
    };
    let letters: Vec<char> = text.chars().collect();
    if letters.len() != 4 {
        return Err(err());
    }
    let mut order = [Level::Channel; 4];
    let mut seen = [false; 4];
    for (i, c) in letters.iter().enumerate() {
        let (level, slot) = match c.to_ascii_uppercase() {
            'C' => (Level::Channel, 0),
            'W' => (Level::Way, 1),
            'D' => (Level::Die, 2),
            'P' => (Level::Plane, 3),
            _ => return Err(err()),
        };
        if seen[slot] {
            return Err(err());
        }
        seen[slot] = true;
        order[i] = level;
    }
    Ok(order)
}

/// The first number at or after `from` that leaves `residue` modulo `modulus`: the first
/// logical page of a plane's residue in a range of pages.
#[inline]
pub fn first_of_residue(from: u64, residue: u64, modulus: u64) -> u64 {
    from + (residue + modulus - from % modulus) % modulus
}

/// [`Geometry::planes_from`]'s walk: the residue kept as a counter (a chained, cycled slice
/// iterator measured 13 % more instructions over a 512 GiB fill).
pub struct PlanesFrom<'a> {
    table: &'a [u32],
    residue: usize,
}

impl Iterator for PlanesFrom<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        let plane = self.table[self.residue];
        self.residue += 1;
        if self.residue == self.table.len() {
            self.residue = 0;
        }
        Some(plane)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Geometry {
        let mut config: Config = Config::from_toml_str("[[flows]]\nqueue_depth = 1\nrequests = 1\n").unwrap();
        config.flash.channels = 2;
        config.flash.chips_per_channel = 2;
        config.flash.dies_per_chip = 2;
        config.flash.planes_per_die = 2;
        Geometry::new(&config)
    }

    #[test]
    fn cwdp_stripes_channels_first() {
        let g = small();
        // lpa 0 -> channel 0, lpa 1 -> channel 1 (chip 2), lpa 2 -> channel 0 way 1 (chip 1).
        assert_eq!(g.chip_of_die(g.die_of_plane(g.plane_of_lpa(0))), 0);
        assert_eq!(g.chip_of_die(g.die_of_plane(g.plane_of_lpa(1))), 2);
        assert_eq!(g.chip_of_die(g.die_of_plane(g.plane_of_lpa(2))), 1);
        // Every plane is used once in the first 16 pages.
        let mut seen: Vec<u32> = (0..16).map(|l| g.plane_of_lpa(l)).collect();
        seen.sort();
        assert_eq!(seen, (0..16).collect::<Vec<_>>());
    }

    #[test]
    fn pdwc_stripes_planes_first() {
        let mut g = small();
        g.set_allocation(parse_allocation("PDWC").unwrap());
        assert_eq!(g.plane_of_lpa(0), 0);
        assert_eq!(g.plane_of_lpa(1), 1);
        assert_eq!(g.die_of_plane(g.plane_of_lpa(2)), 1);
    }

    #[test]
    fn allocation_orders_must_be_permutations() {
        assert!(parse_allocation("CWDD").is_err());
        assert!(parse_allocation("CWD").is_err());
        assert!(parse_allocation("cwdp").is_ok());
    }
}
