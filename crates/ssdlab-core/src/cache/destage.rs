//! When dirty cache lines go to flash, beside the on-demand eviction every mode has.
//!
//! [`BackgroundDestage`], `cache.destage = "background"` (the default): real drives write dirty
//! data back in the background, so that the cache has clean lines to give a burst and flushes
//! are not bounded by the host's queue depth. Writing starts when a partition's dirty lines pass
//! the high watermark and stops at the low one (hysteresis, as an OS's dirty-page writeback
//! does), and every dirty line is written once the host has been idle for a while. Written
//! lines stay cached, clean: a read still hits them and a write burst takes their place at once.
//!
//! [`ColdDestage`], `cache.destage = "cold-at-once"`: MQSim's advanced data cache writes cold data through to
//! flash at once and holds host writes back while the back end is busy with it
//! (`Data_Cache_Manager_Flash_Advanced::write_to_destage_buffer`, MQSim @7ec40e3; Tavakkol et
//! al., FAST 2018, section 4.2).
//!
//! A page is cold for a flow when the flow has not written it since its filter was last
//! cleared. MQSim keeps the filter as an exact set per flow (it calls it a bloom filter) and
//! clears it on one milestone shared by all flows: the first write past the milestone clears
//! the filter of the flow that made it (after that write was classified) and sets the next
//! milestone one second later. The back-pressure budget is one page per plane of sectors in
//! flight (write-backs and evictions alike), per partition of the cache.

use rustc_hash::FxHashSet;

use crate::time::{SimTime, PS_PER_S};

/// The background writer's state, over all partitions of the cache.
pub struct BackgroundDestage {
    /// Dirty lines per partition above which writing starts, and at or below which it stops.
    high_lines: u32,
    low_lines: u32,
    /// Partitions between their marks on the way down (they passed the high one).
    draining: Vec<bool>,
    /// Pages being written back (background and, in this mode, host flushes), and the most
    /// the background writer keeps in flight.
    pub in_flight_pages: u32,
    limit_pages: u32,
    pub idle_after_ps: SimTime,
    /// The host has been idle long enough: every dirty line is written.
    pub idle: bool,
    /// An idle check is scheduled.
    pub check_pending: bool,
    /// Pages written back in the background, and those of them written while the host was idle.
    pub destaged_pages: u64,
    pub destaged_when_idle: u64,
}

impl BackgroundDestage {
    /// For `partitions` partitions of `lines` lines, with the watermarks as fractions of them,
    /// at most `limit_pages` pages in flight, idle after `idle_after_ps`.
    pub fn new(
        partitions: usize,
        lines: u32,
        (high, low): (f64, f64),
        limit_pages: u32,
        idle_after_ps: SimTime,
    ) -> Self {
        Self {
            high_lines: (lines as f64 * high) as u32,
            low_lines: (lines as f64 * low) as u32,
            draining: vec![false; partitions],
            in_flight_pages: 0,
            limit_pages,
            idle_after_ps,
            idle: false,
            check_pending: false,
            destaged_pages: 0,
            destaged_when_idle: 0,
        }
    }

    /// Whether a page more may start.
    #[inline]
    pub fn has_budget(&self) -> bool {
        self.in_flight_pages < self.limit_pages
    }

    /// Whether partition `p`, with `dirty` dirty lines, should write one more back.
    pub fn wants(&mut self, p: usize, dirty: u32) -> bool {
        if dirty > self.high_lines {
            self.draining[p] = true;
        } else if dirty <= self.low_lines {
            self.draining[p] = false;
        }
        dirty > 0 && (self.idle || self.draining[p])
    }
}

/// How long a flow's cold filter lasts: MQSim's `bloom_filter_reset_step`, one second.
pub const COLD_WINDOW_PS: SimTime = PS_PER_S;

pub struct ColdDestage {
    /// Pages each flow wrote since its filter was last cleared.
    written: Vec<FxHashSet<u32>>,
    /// The milestone after which the next write clears its flow's filter.
    next_clear_at: SimTime,
    /// Sectors being written to flash from each partition (cold write-backs and evictions).
    in_flight_sectors: Vec<u64>,
    /// Host writes are let into a partition only while its sectors in flight are below this.
    limit_sectors: u64,
}

impl ColdDestage {
    /// For `flows` flows over `partitions` cache partitions of a device with `planes` planes
    /// of `sectors_per_page` sectors.
    pub fn new(flows: usize, partitions: usize, planes: u64, sectors_per_page: u64) -> Self {
        Self {
            written: vec![FxHashSet::default(); flows],
            next_clear_at: 0,
            in_flight_sectors: vec![0; partitions],
            limit_sectors: planes * sectors_per_page,
        }
    }

    /// Whether partition `p` lets a host write in now.
    #[inline]
    pub fn admits(&self, p: usize) -> bool {
        self.in_flight_sectors[p] < self.limit_sectors
    }

    /// Whether `flow`'s write of `lpa` is cold (and remembers that it has been written).
    #[inline]
    pub fn is_cold(&mut self, flow: usize, lpa: u32) -> bool {
        self.written[flow].insert(lpa)
    }

    /// After a write of `flow` at `now` was classified: clears the flow's filter when the
    /// shared milestone has passed.
    pub fn after_write(&mut self, flow: usize, now: SimTime) {
        if now > self.next_clear_at {
            self.written[flow].clear();
            self.next_clear_at = now + COLD_WINDOW_PS;
        }
    }

    /// `sectors` of partition `p` started on their way to flash.
    #[inline]
    pub fn started(&mut self, p: usize, sectors: u64) {
        self.in_flight_sectors[p] += sectors;
    }

    /// `sectors` of partition `p` reached flash.
    #[inline]
    pub fn finished(&mut self, p: usize, sectors: u64) {
        self.in_flight_sectors[p] -= sectors;
    }

    pub fn in_flight_sectors(&self, p: usize) -> u64 {
        self.in_flight_sectors[p]
    }

    pub fn limit_sectors(&self) -> u64 {
        self.limit_sectors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_writing_starts_above_the_high_mark_and_stops_at_the_low_one() {
        let mut d = BackgroundDestage::new(2, 100, (0.5, 0.25), 4, 1);
        assert!(!d.wants(0, 50), "at the high mark, not above it");
        assert!(d.wants(0, 51));
        assert!(d.wants(0, 30), "between the marks on the way down");
        assert!(!d.wants(0, 25));
        assert!(!d.wants(0, 30), "between the marks on the way up");
        assert!(!d.wants(1, 40), "partitions have their own marks");
        d.idle = true;
        assert!(d.wants(1, 1), "an idle host: everything goes");
        assert!(!d.wants(1, 0));
    }

    #[test]
    fn a_page_is_cold_once_per_window_and_the_first_write_past_the_milestone_clears_its_flow() {
        let mut d = ColdDestage::new(2, 1, 4, 16);
        assert!(d.is_cold(0, 7));
        d.after_write(0, 1); // past milestone 0: flow 0's filter is cleared, next at 1 s + 1
        assert!(d.is_cold(0, 7), "cleared after the write that passed the milestone");
        d.after_write(0, 2);
        assert!(!d.is_cold(0, 7), "written in this window: hot");
        assert!(d.is_cold(1, 7), "filters are per flow");
        d.after_write(1, COLD_WINDOW_PS + 2);
        assert!(d.is_cold(1, 7), "flow 1 passed the milestone: its filter was cleared");
        assert!(!d.is_cold(0, 7), "flow 0's filter is kept until it passes a milestone itself");
    }

    #[test]
    fn writes_are_held_back_at_one_page_per_plane_in_flight() {
        let mut d = ColdDestage::new(1, 2, 4, 16);
        assert_eq!(d.limit_sectors(), 64);
        d.started(0, 60);
        assert!(d.admits(0));
        d.started(0, 8);
        assert!(!d.admits(0));
        assert!(d.admits(1), "partitions have their own budget");
        d.finished(0, 8);
        assert!(d.admits(0));
        assert_eq!(d.in_flight_sectors(0), 60);
    }
}
