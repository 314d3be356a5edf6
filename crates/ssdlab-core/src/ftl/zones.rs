//! Zoned namespaces (NVMe Zoned Namespace Command Set 1.1) from the device's side: the zone
//! state machine (section 2.1.1: empty, implicitly and explicitly open, closed, full, read-only,
//! offline), write pointers, the open and active zone limits, and where a zone's data goes.
//!
//! A zone owns the blocks it is written to: it takes an erased block on a plane of its group
//! when it needs one (the least-erased one with dynamic wear leveling, as a drive maps zones to
//! blocks when they open), stripes its pages over the group's planes in turn, and gives its
//! blocks back when it is reset, which erases them. No block ever holds two zones' data, so a
//! zoned drive written by the rules needs no garbage collection.
//!
//! Addresses: the host sees `zones x zone_size` sectors; the sectors between a zone's capacity
//! and its size do not exist on flash. Inside the device a zone's sectors are packed ("dense"
//! addresses, `zone x capacity + offset`), which is what the mapping table, the data store
//! and the rest of the FTL see.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::blocks::{BlockManager, NO_BLOCK};
use crate::config::ZoneLayout;
use crate::device::Status;
use crate::flash::Geometry;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ZoneState {
    Empty,
    ImplicitlyOpen,
    ExplicitlyOpen,
    Closed,
    Full,
    ReadOnly,
    Offline,
}

impl ZoneState {
    pub const ALL: [ZoneState; 7] = [
        ZoneState::Empty,
        ZoneState::ImplicitlyOpen,
        ZoneState::ExplicitlyOpen,
        ZoneState::Closed,
        ZoneState::Full,
        ZoneState::ReadOnly,
        ZoneState::Offline,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ZoneState::Empty => "empty",
            ZoneState::ImplicitlyOpen => "implicitly_open",
            ZoneState::ExplicitlyOpen => "explicitly_open",
            ZoneState::Closed => "closed",
            ZoneState::Full => "full",
            ZoneState::ReadOnly => "read_only",
            ZoneState::Offline => "offline",
        }
    }

    fn is_open(self) -> bool {
        matches!(self, ZoneState::ImplicitlyOpen | ZoneState::ExplicitlyOpen)
    }

    fn is_active(self) -> bool {
        self.is_open() || self == ZoneState::Closed
    }
}

/// One zone as a Report Zones descriptor gives it (host addresses, sectors).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZoneDescriptor {
    pub zone: u64,
    pub state: String,
    pub start_sector: u64,
    pub capacity_sectors: u64,
    pub write_pointer: u64,
}

/// A zone's open blocks, one per plane of its group, and the plane its next page goes to.
struct Frontier {
    blocks: Box<[u32]>,
    next_slot: u32,
}

/// What a zone management op leaves the device to do on flash.
pub enum Management {
    /// Nothing (a state change only).
    Done,
    /// Reset: unmap the first `written_sectors` of the zone, then erase `blocks`.
    Reset { written_sectors: u64, blocks: Vec<u32> },
    /// Finish: pad what is left of these open blocks.
    Finish { open_blocks: Vec<u32> },
}

/// Counts for results.json `zns`.
#[derive(Clone, Debug, Default)]
pub struct ZoneCounts {
    pub writes: u64,
    pub appends: u64,
    pub sectors_written: u64,
    pub explicit_opens: u64,
    pub closes: u64,
    /// Implicitly open zones the device closed to open another.
    pub implicit_closes: u64,
    pub finishes: u64,
    pub resets: u64,
    pub pad_pages: u64,
    /// Host pages programmed into zones (a partial page rewritten whole counts again).
    pub pages_programmed: u64,
    pub blocks_erased: u64,
    /// Requests failed, by [`Status`] code.
    pub failed: [u64; Status::ALL.len()],
    pub max_open: u32,
    pub max_active: u32,
}

pub struct ZoneTable {
    pub layout: ZoneLayout,
    pages_per_zone: u64,
    sectors_per_page: u64,
    groups: u32,
    /// Planes of each group, group after group (`zone_planes` each).
    group_planes: Vec<u32>,
    /// Each plane's position in its group.
    slot_of_plane: Vec<u32>,
    state: Vec<ZoneState>,
    /// Sectors written from the zone's start.
    write_pointer: Vec<u64>,
    /// Accepted writes of each zone not yet completed.
    in_flight: Vec<u32>,
    /// Commands that wait, in the order they were fetched: a reset or finish waiting for its
    /// zone's writes in flight, and every zone command fetched after it (zone state changes
    /// take effect in the host's order, the open and active limits included). (zone, request).
    held: VecDeque<(u32, u32)>,
    /// Open zones, oldest first (implicit closes take the oldest implicitly open one).
    open_zones: Vec<u32>,
    active: u32,
    frontiers: FxHashMap<u32, Frontier>,
    /// Management commands the zone has taken, by request: their flash work, done when they
    /// reach the device.
    pub pending: FxHashMap<u32, Management>,
    /// Blocks each zone has taken since it was last reset.
    blocks: FxHashMap<u32, Vec<u32>>,
    pub counts: ZoneCounts,
}

impl ZoneTable {
    pub fn new(layout: ZoneLayout, geometry: &Geometry) -> Self {
        let zp = layout.zone_planes;
        let groups = geometry.planes / zp;
        // Group g takes positions g*zp..(g+1)*zp of the static allocation order, so a group of
        // `channels` planes has one plane on every channel.
        let group_planes: Vec<u32> = (0..geometry.planes as u64).map(|i| geometry.plane_of_lpa(i)).collect();
        let mut slot_of_plane = vec![0; geometry.planes as usize];
        for (i, &p) in group_planes.iter().enumerate() {
            slot_of_plane[p as usize] = i as u32 % zp;
        }
        let zones = layout.zones as usize;
        Self {
            pages_per_zone: layout.capacity_sectors / geometry.sectors_per_page,
            sectors_per_page: geometry.sectors_per_page,
            groups,
            group_planes,
            slot_of_plane,
            state: vec![ZoneState::Empty; zones],
            write_pointer: vec![0; zones],
            in_flight: vec![0; zones],
            held: VecDeque::new(),
            open_zones: Vec::new(),
            active: 0,
            frontiers: FxHashMap::default(),
            pending: FxHashMap::default(),
            blocks: FxHashMap::default(),
            counts: ZoneCounts::default(),
            layout,
        }
    }

    /// The zone of a host sector and the offset in it.
    #[inline]
    pub fn locate(&self, host_sector: u64) -> (u32, u64) {
        ((host_sector / self.layout.zone_sectors) as u32, host_sector % self.layout.zone_sectors)
    }

    /// The dense (device) sector of `offset` in `zone`.
    #[inline]
    pub fn dense_sector(&self, zone: u32, offset: u64) -> u64 {
        zone as u64 * self.layout.capacity_sectors + offset
    }

    /// Whether dense logical page `lpa` is a zone's (the conventional namespaces lie after the
    /// zones).
    #[inline]
    pub fn holds_page(&self, lpa: u32) -> bool {
        (lpa as u64) < self.layout.zones * self.pages_per_zone
    }

    /// The zone a dense logical page belongs to.
    #[inline]
    pub fn zone_of_page(&self, lpa: u32) -> u32 {
        (lpa as u64 / self.pages_per_zone) as u32
    }

    pub fn state(&self, zone: u32) -> ZoneState {
        self.state[zone as usize]
    }

    pub fn write_pointer(&self, zone: u32) -> u64 {
        self.write_pointer[zone as usize]
    }

    /// The planes of `zone`'s group.
    pub fn planes_of(&self, zone: u32) -> &[u32] {
        let zp = self.layout.zone_planes as usize;
        let g = (zone % self.groups) as usize;
        &self.group_planes[g * zp..(g + 1) * zp]
    }

    /// The blocks `zone` has taken since its last reset.
    pub fn blocks_of(&self, zone: u32) -> &[u32] {
        self.blocks.get(&zone).map_or(&[], |b| b.as_slice())
    }

    /// Zones in the same group as `zone` (including it).
    pub fn zones_in_group(&self, zone: u32) -> impl Iterator<Item = u32> + '_ {
        let g = zone % self.groups;
        (g..self.layout.zones as u32).step_by(self.groups as usize)
    }

    /// Checks a write (or append, `append`) of `sectors` at `offset` of `zone` against the zone's
    /// state, write pointer and the open and active limits, and takes it: the write pointer
    /// moves past it and the zone opens or fills as the spec says. Returns the offset it goes
    /// to (an append's is the write pointer).
    pub fn accept_write(&mut self, zone: u32, offset: u64, sectors: u32, append: bool) -> Result<u64, Status> {
        let z = zone as usize;
        let cap = self.layout.capacity_sectors;
        match self.state[z] {
            ZoneState::Full => return Err(Status::ZoneIsFull),
            ZoneState::ReadOnly => return Err(Status::ZoneIsReadOnly),
            ZoneState::Offline => return Err(Status::ZoneIsOffline),
            _ => {}
        }
        let unit = self.layout.write_unit_sectors;
        if append && offset != 0 || !(sectors as u64).is_multiple_of(unit) || !offset.is_multiple_of(unit) {
            return Err(Status::InvalidField);
        }
        let wp = self.write_pointer[z];
        let at = if append { wp } else { offset };
        if !append && at != wp {
            return Err(Status::ZoneInvalidWrite);
        }
        if at + sectors as u64 > cap {
            return Err(Status::ZoneBoundaryError);
        }
        if !self.state[z].is_open() {
            self.open(zone, ZoneState::ImplicitlyOpen)?;
        }
        self.write_pointer[z] = at + sectors as u64;
        self.in_flight[z] += 1;
        self.counts.sectors_written += sectors as u64;
        if append {
            self.counts.appends += 1;
        } else {
            self.counts.writes += 1;
        }
        if self.write_pointer[z] == cap {
            self.leave_active(zone);
            self.state[z] = ZoneState::Full;
        }
        Ok(at)
    }

    /// Opens `zone` (empty or closed) as `how`, closing an implicitly open zone if the open
    /// limit calls for it.
    fn open(&mut self, zone: u32, how: ZoneState) -> Result<(), Status> {
        let z = zone as usize;
        let was = self.state[z];
        if was == ZoneState::Empty && self.active >= self.layout.max_active {
            return Err(Status::TooManyActiveZones);
        }
        if self.open_zones.len() as u32 >= self.layout.max_open {
            let Some(i) = self.open_zones.iter().position(|&o| self.state[o as usize] == ZoneState::ImplicitlyOpen)
            else {
                return Err(Status::TooManyOpenZones);
            };
            let victim = self.open_zones.remove(i);
            self.state[victim as usize] = ZoneState::Closed;
            self.counts.implicit_closes += 1;
        }
        if was == ZoneState::Empty {
            self.active += 1;
            self.counts.max_active = self.counts.max_active.max(self.active);
        }
        self.state[z] = how;
        self.open_zones.push(zone);
        self.counts.max_open = self.counts.max_open.max(self.open_zones.len() as u32);
        Ok(())
    }

    /// `zone` stops being open and active (it becomes full or empty).
    fn leave_active(&mut self, zone: u32) {
        let s = self.state[zone as usize];
        if s.is_open() {
            self.open_zones.retain(|&o| o != zone);
        }
        if s.is_active() {
            self.active -= 1;
        }
    }

    /// A write `accept_write` took has completed.
    pub fn write_done(&mut self, zone: u32) {
        self.in_flight[zone as usize] -= 1;
    }

    /// A reset or finish of `zone` started flash work: later management waits for it too.
    pub fn write_started(&mut self, zone: u32) {
        self.in_flight[zone as usize] += 1;
    }

    pub fn writes_in_flight(&self, zone: u32) -> u32 {
        self.in_flight[zone as usize]
    }

    /// Whether zone commands wait (a later one then waits behind them).
    pub fn has_held(&self) -> bool {
        !self.held.is_empty()
    }

    pub fn hold(&mut self, zone: u32, request: u32) {
        self.held.push_back((zone, request));
    }

    /// The first waiting command, if `may_go(request, its zone's writes in flight)` lets it go.
    pub fn next_held(&mut self, may_go: impl Fn(u32, u32) -> bool) -> Option<u32> {
        let &(zone, front) = self.held.front()?;
        if !may_go(front, self.in_flight[zone as usize]) {
            return None;
        }
        self.held.pop_front();
        Some(front)
    }

    /// Zone management op `op` on `zone`. `offline` says a reset must take the zone offline
    /// (its planes no longer have the blocks to back every zone of the group).
    pub fn manage(&mut self, zone: u32, op: crate::device::Op, offline: bool) -> Result<Management, Status> {
        use crate::device::Op;
        let z = zone as usize;
        let s = self.state[z];
        if s == ZoneState::Offline {
            return Err(Status::ZoneIsOffline);
        }
        match op {
            Op::ZoneOpen => {
                match s {
                    ZoneState::ExplicitlyOpen => {}
                    ZoneState::ImplicitlyOpen => self.state[z] = ZoneState::ExplicitlyOpen,
                    // A closed zone is active already: `open` counts only an empty one.
                    ZoneState::Empty | ZoneState::Closed => self.open(zone, ZoneState::ExplicitlyOpen)?,
                    ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline => {
                        return Err(Status::InvalidZoneStateTransition)
                    }
                }
                self.counts.explicit_opens += 1;
                Ok(Management::Done)
            }
            Op::ZoneClose => {
                match s {
                    ZoneState::ImplicitlyOpen | ZoneState::ExplicitlyOpen => {
                        self.open_zones.retain(|&o| o != zone);
                        self.state[z] = ZoneState::Closed;
                    }
                    ZoneState::Closed => {}
                    _ => return Err(Status::InvalidZoneStateTransition),
                }
                self.counts.closes += 1;
                Ok(Management::Done)
            }
            Op::ZoneFinish => {
                if s == ZoneState::ReadOnly {
                    return Err(Status::ZoneIsReadOnly);
                }
                self.counts.finishes += 1;
                if s == ZoneState::Full {
                    return Ok(Management::Done);
                }
                self.leave_active(zone);
                self.state[z] = ZoneState::Full;
                self.write_pointer[z] = self.layout.capacity_sectors;
                let open_blocks = match self.frontiers.remove(&zone) {
                    Some(f) => f.blocks.iter().copied().filter(|&b| b != NO_BLOCK).collect(),
                    None => Vec::new(),
                };
                Ok(Management::Finish { open_blocks })
            }
            Op::ZoneReset => {
                if s == ZoneState::ReadOnly {
                    return Err(Status::ZoneIsReadOnly);
                }
                self.counts.resets += 1;
                let written_sectors = self.write_pointer[z];
                self.leave_active(zone);
                self.state[z] = if offline { ZoneState::Offline } else { ZoneState::Empty };
                self.write_pointer[z] = 0;
                self.frontiers.remove(&zone);
                let blocks = self.blocks.remove(&zone).unwrap_or_default();
                Ok(Management::Reset { written_sectors, blocks })
            }
            other => unreachable!("{other:?} is not a zone management op"),
        }
    }

    /// The plane the next page of `zone` goes to (its group's planes in turn).
    #[inline]
    pub fn next_plane(&mut self, zone: u32) -> u32 {
        let zp = self.layout.zone_planes;
        let g = zone % self.groups;
        let f = self.frontier(zone);
        let slot = f.next_slot;
        f.next_slot = if slot + 1 == zp { 0 } else { slot + 1 };
        self.group_planes[(g * zp + slot) as usize]
    }

    fn frontier(&mut self, zone: u32) -> &mut Frontier {
        let zp = self.layout.zone_planes as usize;
        self.frontiers
            .entry(zone)
            .or_insert_with(|| Frontier { blocks: vec![NO_BLOCK; zp].into_boxed_slice(), next_slot: 0 })
    }

    /// Whether a page of `zone` can be placed on `plane` now: its open block there has room,
    /// or the plane has an erased block to open.
    #[inline]
    pub fn can_allocate(&self, zone: u32, plane: u32, blocks: &BlockManager) -> bool {
        let slot = self.slot_of_plane[plane as usize] as usize;
        let open = self.frontiers.get(&zone).map_or(NO_BLOCK, |f| f.blocks[slot]);
        (open != NO_BLOCK && blocks.written_pages(open) < blocks.pages_per_block()) || blocks.free_blocks(plane) > 0
    }

    /// Takes the next page of `zone` on `plane` (check [`Self::can_allocate`] first).
    pub fn allocate(&mut self, zone: u32, plane: u32, blocks: &mut BlockManager, now: SimTime) -> u32 {
        let slot = self.slot_of_plane[plane as usize] as usize;
        let ppb = blocks.pages_per_block();
        let mut block = self.frontier(zone).blocks[slot];
        if block == NO_BLOCK || blocks.written_pages(block) >= ppb {
            block = blocks.open_block(plane).expect("allocate() called without can_allocate()");
            blocks.mark_zoned(block);
            self.blocks.entry(zone).or_default().push(block);
            self.frontier(zone).blocks[slot] = block;
        }
        let page = blocks.written_pages(block);
        let ppa = blocks.program_at(block, page, now);
        self.counts.pages_programmed += 1;
        if page + 1 == ppb {
            let full = self.state[zone as usize] == ZoneState::Full;
            let f = self.frontier(zone);
            f.blocks[slot] = NO_BLOCK;
            if full && f.blocks.iter().all(|&b| b == NO_BLOCK) {
                self.frontiers.remove(&zone);
            }
        }
        ppa
    }

    /// Zones in each state (results.json `zns.zones`).
    pub fn state_counts(&self) -> [u64; 7] {
        let mut n = [0u64; 7];
        for &s in &self.state {
            n[s as usize] += 1;
        }
        n
    }

    /// Report Zones: `count` descriptors from `first` (host addresses).
    pub fn report(&self, first: u64, count: u64) -> Vec<ZoneDescriptor> {
        let end = (first.saturating_add(count)).min(self.layout.zones);
        (first..end)
            .map(|z| ZoneDescriptor {
                zone: z,
                state: self.state[z as usize].name().to_string(),
                start_sector: z * self.layout.zone_sectors,
                capacity_sectors: self.layout.capacity_sectors,
                write_pointer: z * self.layout.zone_sectors + self.write_pointer[z as usize],
            })
            .collect()
    }

    /// Dense pages a zone's first `sectors` cover.
    pub fn pages_covering(&self, zone: u32, sectors: u64) -> std::ops::Range<u64> {
        let first = zone as u64 * self.pages_per_zone;
        first..first + sectors.div_ceil(self.sectors_per_page)
    }

    /// Whether the model's bookkeeping agrees: open and active counts match the states.
    pub fn check(&self) -> Result<(), String> {
        let open = self.state.iter().filter(|s| s.is_open()).count();
        let active = self.state.iter().filter(|s| s.is_active()).count();
        if open != self.open_zones.len() || active != self.active as usize {
            return Err(format!(
                "zone table: {open} open and {active} active zones by state, {} and {} counted",
                self.open_zones.len(),
                self.active
            ));
        }
        if active as u32 > self.layout.max_active || open as u32 > self.layout.max_open {
            return Err(format!("zone table: {open} open and {active} active zones break the limits"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

/// results.json `zns` (only with `[zns]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ZnsSummary {
    pub zones: u64,
    pub zone_size_bytes: u64,
    pub zone_capacity_bytes: u64,
    /// Planes each zone stripes over.
    pub zone_planes: u32,
    pub max_open_zones: u32,
    pub max_active_zones: u32,
    /// Zones in each state at the end of the run.
    pub zone_states: std::collections::BTreeMap<String, u64>,
    /// Most zones open and active at once during the run.
    pub peak_open_zones: u32,
    pub peak_active_zones: u32,
    pub writes: u64,
    pub appends: u64,
    pub host_bytes_written: u64,
    pub explicit_opens: u64,
    pub closes: u64,
    /// Implicitly open zones the device closed to open another (the open limit).
    pub implicit_closes: u64,
    pub finishes: u64,
    pub resets: u64,
    pub blocks_erased: u64,
    /// Bytes a finish programmed as padding.
    pub pad_bytes: u64,
    /// Bytes programmed into zones: host pages (a partial page rewritten whole included) and
    /// padding.
    pub media_bytes_written: u64,
    /// Bytes garbage collection moved on the device: 0 when every namespace is zoned (zones
    /// reclaim space by resets; GC never takes a zone's block, and moves only conventional
    /// namespaces' data).
    pub gc_bytes_moved: u64,
    /// media / host bytes (null before any write).
    pub write_amplification: Option<f64>,
    /// Commands the zones refused, by status.
    pub failed: std::collections::BTreeMap<String, u64>,
}

impl ZnsSummary {
    pub fn new(zones: &ZoneTable, stats: &super::FtlStats, page_bytes: u64) -> Self {
        let l = &zones.layout;
        let c = &zones.counts;
        let sector = crate::flash::SECTOR_BYTES;
        let host = c.sectors_written * sector;
        let media = (c.pages_programmed + c.pad_pages) * page_bytes;
        let states = zones.state_counts();
        Self {
            zones: l.zones,
            zone_size_bytes: l.zone_sectors * sector,
            zone_capacity_bytes: l.capacity_sectors * sector,
            zone_planes: l.zone_planes,
            max_open_zones: l.max_open,
            max_active_zones: l.max_active,
            zone_states: ZoneState::ALL.iter().map(|s| (s.name().to_string(), states[*s as usize])).collect(),
            peak_open_zones: c.max_open,
            peak_active_zones: c.max_active,
            writes: c.writes,
            appends: c.appends,
            host_bytes_written: host,
            explicit_opens: c.explicit_opens,
            closes: c.closes,
            implicit_closes: c.implicit_closes,
            finishes: c.finishes,
            resets: c.resets,
            blocks_erased: c.blocks_erased,
            pad_bytes: c.pad_pages * page_bytes,
            media_bytes_written: media,
            gc_bytes_moved: stats.gc_programs * page_bytes,
            write_amplification: (host > 0).then(|| media as f64 / host as f64),
            failed: Status::ALL
                .iter()
                .filter(|s| c.failed[**s as usize] > 0)
                .map(|s| (s.name().to_string(), c.failed[*s as usize]))
                .collect(),
        }
    }
}
