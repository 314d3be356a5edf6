//! Timing of flash operations: ONFI bus transfers on the channel and cell operations on the die.
//!
//! A read is: command/address cycles on the channel, the cell read on the die (channel free),
//! then the data out on the channel. A program is: command/address and data in on the channel,
//! then the cell program. An erase is: command/address, then the block erase. Only the sectors a
//! read asks for cross the bus; a program always moves a whole page.

use crate::config::Config;
use crate::time::PS_PER_S;

/// ONFI cycles for one plane's command and address: 00h + 5 address cycles + 30h for a read,
/// 80h + 5 address cycles + 10h for a program, 60h + 3 row address cycles + D0h for an erase.
pub const READ_COMMAND_CYCLES: u64 = 7;
pub const PROGRAM_COMMAND_CYCLES: u64 = 7;
pub const ERASE_COMMAND_CYCLES: u64 = 5;

#[derive(Clone, Debug)]
pub struct FlashTiming {
    /// Picoseconds per bus transfer (one command or address cycle, or one data beat).
    ps_per_transfer: f64,
    width_bytes: u64,
    pub read_command_ps: u64,
    pub program_command_ps: u64,
    pub erase_command_ps: u64,
    read_ps: [u64; 3],
    program_ps: [u64; 3],
    pub erase_ps: u64,
    bits_per_cell: u32,
    pub page_transfer_ps: u64,
}

impl FlashTiming {
    pub fn new(config: &Config) -> Self {
        let f = &config.flash;
        let ps_per_transfer = PS_PER_S as f64 / f.channel_rate.value;
        let cycles = |n: u64| (n as f64 * ps_per_transfer).ceil() as u64;
        let tech = f.technology;
        let per_type = |lat: &crate::config::PageTypeLatency| [0, 1, 2].map(|t| lat.for_page_type(tech, t));
        let mut timing = Self {
            ps_per_transfer,
            width_bytes: f.channel_width_bytes as u64,
            read_command_ps: cycles(READ_COMMAND_CYCLES),
            program_command_ps: cycles(PROGRAM_COMMAND_CYCLES),
            erase_command_ps: cycles(ERASE_COMMAND_CYCLES),
            read_ps: per_type(&f.timing.read),
            program_ps: per_type(&f.timing.program),
            erase_ps: f.timing.erase.value,
            bits_per_cell: tech.bits_per_cell(),
            page_transfer_ps: 0,
        };
        timing.page_transfer_ps = timing.data_transfer_ps(f.page_size.value);
        timing
    }

    /// Time the channel is busy moving `bytes` of data.
    #[inline]
    pub fn data_transfer_ps(&self, bytes: u64) -> u64 {
        let beats = bytes.div_ceil(self.width_bytes);
        (beats as f64 * self.ps_per_transfer).ceil() as u64
    }

    /// Page type by position in the block, round robin over the wordline's pages:
    /// 0 = LSB, then CSB (TLC) and MSB.
    #[inline]
    pub fn page_type(&self, page_in_block: u32) -> usize {
        // SLC (one page type) needs no division.
        if self.bits_per_cell == 1 {
            0
        } else {
            (page_in_block % self.bits_per_cell) as usize
        }
    }

    #[inline]
    pub fn read_ps(&self, page_in_block: u32) -> u64 {
        self.read_ps[self.page_type(page_in_block)]
    }

    #[inline]
    pub fn program_ps(&self, page_in_block: u32) -> u64 {
        self.program_ps[self.page_type(page_in_block)]
    }

    pub fn technology_bits(&self) -> u32 {
        self.bits_per_cell
    }
}
