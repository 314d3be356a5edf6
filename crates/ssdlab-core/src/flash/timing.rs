//! Timing of flash operations: ONFI bus transfers on the channel and cell operations on the die.
//!
//! A read is: command/address cycles on the channel, the cell read on the die (channel free),
//! then the data out on the channel. A program is: command/address and data in on the channel,
//! then the cell program. An erase is: command/address, then the block erase. Only the sectors a
//! read asks for cross the bus; a program always moves a whole page.

use crate::config::{Config, PageTypeLayout};
use crate::flash::SECTOR_BYTES;
use crate::time::{DurationTable, PS_PER_S};

/// Channel transfers up to this size (every sector) take their duration from a table: a
/// multi-plane batch of whole pages on every drive the examples and benchmarks model (4 planes
/// of 16 KiB), in 2 KiB of table.
const TABLED_BYTES: u64 = 128 * 1024;

pub use crate::config::flash::{
    ADDRESS_LAYOUT_LSB_META_PAGES, ADDRESS_LAYOUT_META_PAGES, ERASE_COMMAND_CYCLES, PROGRAM_COMMAND_CYCLES,
    READ_COMMAND_CYCLES,
};

#[derive(Clone, Debug)]
pub struct FlashTiming {
    /// Picoseconds per bus transfer (one command or address cycle, or one data beat).
    ps_per_transfer: f64,
    /// Data transfers of whole sectors up to a multi-plane batch of whole pages, as computed.
    data_durations: DurationTable,
    width_bytes: u64,
    pub read_command_ps: u64,
    pub program_command_ps: u64,
    pub erase_command_ps: u64,
    read_ps: [u64; 4],
    program_ps: [u64; 4],
    pub erase_ps: u64,
    bits_per_cell: u32,
    /// Page type (0 = LSB, 1 = CSB or MLC's MSB, 2 = TLC's or QLC's MSB, 3 = QLC's TSB) of each
    /// page of a block, by page
    /// index: one lookup on the hot path instead of arithmetic, whatever the layout.
    page_types: Box<[u8]>,
    pub page_transfer_ps: u64,
    /// SLC-cache pages' read and program times (`[flash.slc_cache]`; 0 without it).
    slc_read_ps: u64,
    slc_program_ps: u64,
}

/// Marks a page number as a page of an SLC-cache block, for the cell times (`FlashTiming::read_ps`).
pub const SLC_PAGE: u32 = 1 << 31;

/// Page type of every page of a block under `layout` (see `PageTypeLayout`). `n_state` is the
/// bits per cell, `n_plane` the planes per die.
pub fn block_page_types(
    layout: PageTypeLayout,
    bits_per_cell: u32,
    planes_per_die: u32,
    pages_per_block: u32,
) -> Vec<u8> {
    let n_state = bits_per_cell.max(1);
    let n_plane = planes_per_die.max(1);
    (0..pages_per_block)
        .map(|page| {
            let t = match layout {
                _ if n_state == 1 => 0,
                PageTypeLayout::RoundRobin => page % n_state,
                PageTypeLayout::Address if page < ADDRESS_LAYOUT_LSB_META_PAGES => 0,
                PageTypeLayout::Address if page < ADDRESS_LAYOUT_META_PAGES => 1,
                // f(addr) = ((addr - n_meta) / n_plane) mod n_state (SimpleSSD's `>> 1` is its
                // two planes per die).
                PageTypeLayout::Address => ((page - ADDRESS_LAYOUT_META_PAGES) / n_plane) % n_state,
            };
            t as u8
        })
        .collect()
}

impl FlashTiming {
    pub fn new(config: &Config) -> Self {
        let f = &config.flash;
        let ps_per_transfer = PS_PER_S as f64 / f.channel_rate.value;
        let cycles = |n: u64| (n as f64 * ps_per_transfer).ceil() as u64;
        let tech = f.technology;
        let per_type = |lat: &crate::config::PageTypeLatency| [0, 1, 2, 3].map(|t| lat.for_page_type(tech, t));
        let mut timing = Self {
            ps_per_transfer,
            data_durations: DurationTable::new(SECTOR_BYTES, 0, |_| 0),
            width_bytes: f.channel_width_bytes as u64,
            read_command_ps: cycles(READ_COMMAND_CYCLES),
            program_command_ps: cycles(PROGRAM_COMMAND_CYCLES),
            erase_command_ps: cycles(ERASE_COMMAND_CYCLES),
            read_ps: per_type(&f.timing.read),
            program_ps: per_type(&f.timing.program),
            erase_ps: f.timing.erase.value,
            bits_per_cell: tech.bits_per_cell(),
            page_types: block_page_types(f.page_type_layout, tech.bits_per_cell(), f.planes_per_die, f.pages_per_block)
                .into_boxed_slice(),
            page_transfer_ps: 0,
            slc_read_ps: f.slc_cache.as_ref().map_or(0, |c| c.read.value),
            slc_program_ps: f.slc_cache.as_ref().map_or(0, |c| c.program.value),
        };
        // Capped: a page size is not (a 64 GiB page would ask for a table of gigabytes, built
        // before anything else and outside the memory estimate); larger sizes are computed.
        let batch_bytes = (f.page_size.value * u64::from(f.planes_per_die.max(1))).min(TABLED_BYTES);
        timing.data_durations =
            DurationTable::new(SECTOR_BYTES, batch_bytes, |bytes| timing.computed_data_transfer_ps(bytes));
        timing.page_transfer_ps = timing.data_transfer_ps(f.page_size.value);
        timing
    }

    /// Time the channel is busy moving `bytes` of data.
    #[inline]
    pub fn data_transfer_ps(&self, bytes: u64) -> u64 {
        self.data_durations.get(bytes).unwrap_or_else(|| self.computed_data_transfer_ps(bytes))
    }

    fn computed_data_transfer_ps(&self, bytes: u64) -> u64 {
        let beats = bytes.div_ceil(self.width_bytes);
        crate::time::ceil_ps(beats as f64 * self.ps_per_transfer)
    }

    /// Page type by position in the block (`flash.page_type_layout`): 0 = LSB, 1 = CSB (TLC) or
    /// MSB (MLC), 2 = MSB (TLC).
    #[inline]
    pub fn page_type(&self, page_in_block: u32) -> usize {
        self.page_types[page_in_block as usize] as usize
    }

    /// Cell read time of a page (a page number with [`SLC_PAGE`] set: an SLC-cache page).
    #[inline]
    pub fn read_ps(&self, page_in_block: u32) -> u64 {
        if page_in_block & SLC_PAGE != 0 {
            return self.slc_read_ps;
        }
        self.read_ps[self.page_type(page_in_block)]
    }

    #[inline]
    pub fn program_ps(&self, page_in_block: u32) -> u64 {
        if page_in_block & SLC_PAGE != 0 {
            return self.slc_program_ps;
        }
        self.program_ps[self.page_type(page_in_block)]
    }

    pub fn technology_bits(&self) -> u32 {
        self.bits_per_cell
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabled_and_computed_data_transfers_agree() {
        // An odd rate: most sizes round up.
        let config =
            Config::device_from_toml_str("[flash]\nchannel_rate = \"333.3MT/s\"\nplanes_per_die = 4\n").unwrap();
        let timing = FlashTiming::new(&config);
        let page = config.flash.page_size.value;
        let batch = page * u64::from(config.flash.planes_per_die);
        for bytes in [0, SECTOR_BYTES, 4096, page, batch, batch + SECTOR_BYTES, 100, 1 << 20] {
            assert_eq!(timing.data_transfer_ps(bytes), timing.computed_data_transfer_ps(bytes), "{bytes}");
        }
    }

    /// A huge page does not make a huge table: sizes past the cap are computed.
    #[test]
    fn the_table_is_capped_whatever_the_page_size() {
        let config = Config::device_from_toml_str("[flash]\npage_size = \"64MiB\"\nplanes_per_die = 8\nblocks_per_plane = 16\npages_per_block = 4\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\n[ftl]\nover_provisioning = 0.5\n").unwrap();
        let timing = FlashTiming::new(&config);
        assert!(timing.data_durations.get(TABLED_BYTES).is_some());
        assert!(timing.data_durations.get(TABLED_BYTES + SECTOR_BYTES).is_none());
        let page = config.flash.page_size.value;
        assert_eq!(timing.data_transfer_ps(page), timing.computed_data_transfer_ps(page));
    }
}
