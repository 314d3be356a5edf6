//! `cache.destage = "cold-at-once"`: MQSim's advanced data cache writes cold data through to
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
