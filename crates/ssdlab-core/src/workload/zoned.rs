//! The host side of a zoned workload (`address = "zoned"`): a writer that fills zones in order
//! from their start, `open_zones` at a time in turn, and when it has no empty zone left resets
//! the one it filled longest ago (the log-structured use that ZNS is made for: F2FS, ZenFS and
//! RocksDB allocate zones this way, resetting a zone once its data is dead). Reads go to data it
//! has written. It keeps its own write pointers, as a host does, from the writes it issued.

use std::collections::VecDeque;

use super::Op;
use crate::config::ZoneLayout;
use crate::engine::RandomStream;

pub struct ZoneWriter {
    zone_sectors: u64,
    /// Writes are whole multiples of this (a flash page).
    unit_sectors: u64,
    capacity_sectors: u64,
    /// The flow's zones: `first_zone..first_zone + zones`.
    first_zone: u64,
    /// Host write pointer of each of the flow's zones (sectors from its start).
    write_pointer: Vec<u64>,
    open: Vec<u64>,
    open_zones: usize,
    next: usize,
    empty: VecDeque<u64>,
    full: VecDeque<u64>,
    append: bool,
}

impl ZoneWriter {
    /// The writer over the zones wholly inside `ws_start..ws_start + ws_sectors` (host sectors).
    pub fn new(
        layout: &ZoneLayout,
        ws_start: u64,
        ws_sectors: u64,
        open_zones: u32,
        append: bool,
    ) -> Result<Self, String> {
        let first_zone = ws_start.div_ceil(layout.zone_sectors);
        let end_zone = ((ws_start + ws_sectors) / layout.zone_sectors).min(layout.zones);
        let zones = end_zone.saturating_sub(first_zone);
        if zones < open_zones as u64 {
            return Err(format!(
                "the working set holds {zones} whole zone(s) of {} sectors, fewer than open_zones ({open_zones})",
                layout.zone_sectors
            ));
        }
        Ok(Self {
            zone_sectors: layout.zone_sectors,
            unit_sectors: layout.write_unit_sectors,
            capacity_sectors: layout.capacity_sectors,
            first_zone,
            write_pointer: vec![0; zones as usize],
            open: Vec::with_capacity(open_zones as usize),
            open_zones: open_zones as usize,
            next: 0,
            empty: (0..zones).collect(),
            full: VecDeque::new(),
            append,
        })
    }

    fn start_of(&self, z: u64) -> u64 {
        (self.first_zone + z) * self.zone_sectors
    }

    /// The next request: (op, first host sector, sectors). A read when `read` and something has
    /// been written; otherwise a write (or a zone append) of up to `sectors` at an open zone's
    /// write pointer, or the reset that makes a zone writable again.
    pub fn next(&mut self, rng: &mut RandomStream, read: bool, sectors: u64) -> (Op, u64, u32) {
        if read {
            if let Some(r) = self.pick_read(rng, sectors) {
                return r;
            }
        }
        while self.open.len() < self.open_zones {
            match self.empty.pop_front() {
                Some(z) => self.open.push(z),
                None => {
                    let z = self.full.pop_front().expect("open_zones <= zones: a zone is empty or full");
                    self.write_pointer[z as usize] = 0;
                    self.open.push(z);
                    return (Op::ZoneReset, self.start_of(z), 0);
                }
            }
        }
        if self.next >= self.open.len() {
            self.next = 0;
        }
        let z = self.open[self.next];
        let wp = self.write_pointer[z as usize];
        // Whole pages (a zoned namespace takes no less), cut at the zone's capacity.
        let n = sectors.div_ceil(self.unit_sectors).max(1) * self.unit_sectors;
        let n = n.min(self.capacity_sectors - wp);
        self.write_pointer[z as usize] = wp + n;
        let (op, start) =
            if self.append { (Op::ZoneAppend, self.start_of(z)) } else { (Op::Write, self.start_of(z) + wp) };
        if wp + n == self.capacity_sectors {
            self.open.remove(self.next);
            self.full.push_back(z);
        } else {
            self.next += 1;
        }
        (op, start, n as u32)
    }

    /// A read of `sectors` (fewer where the zone holds less) at a random place among the data
    /// written to a full or open zone, or None before anything is written.
    fn pick_read(&mut self, rng: &mut RandomStream, sectors: u64) -> Option<(Op, u64, u32)> {
        let candidates = self.full.len() + self.open.len();
        if candidates == 0 {
            return None;
        }
        let i = rng.below(candidates as u64) as usize;
        let z = if i < self.full.len() { self.full[i] } else { self.open[i - self.full.len()] };
        let wp = self.write_pointer[z as usize];
        if wp == 0 {
            return None;
        }
        let n = sectors.min(wp);
        let slots = (wp - n) / n + 1;
        Some((Op::Read, self.start_of(z) + rng.below(slots) * n, n as u32))
    }
}
