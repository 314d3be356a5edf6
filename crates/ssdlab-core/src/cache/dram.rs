//! Timing of the controller's DRAM, as MQSim models its data cache DRAM: each access opens the rows
//! it touches (precharge + activate), waits the CAS latency once, and streams the data at the
//! bus rate. Accesses are served one at a time in arrival order, so concurrent flows contend.

use crate::config::CacheConfig;
use crate::time::{SimTime, PS_PER_S};

pub struct Dram {
    ps_per_byte: f64,
    row_bytes: u64,
    t_rcd: u64,
    t_cl: u64,
    t_rp: u64,
    free_at: SimTime,
    pub busy_ps: u64,
}

impl Dram {
    pub fn new(cache: &CacheConfig) -> Self {
        Self {
            ps_per_byte: PS_PER_S as f64 / (cache.dram_data_rate.value * cache.dram_burst_bytes as f64),
            row_bytes: cache.dram_row_size.value,
            t_rcd: cache.dram_trcd.value,
            t_cl: cache.dram_tcl.value,
            t_rp: cache.dram_trp.value,
            free_at: 0,
            busy_ps: 0,
        }
    }

    /// Time one access of `bytes` takes once it has the DRAM.
    pub fn access_ps(&self, bytes: u64) -> u64 {
        let rows = bytes.div_ceil(self.row_bytes).max(1);
        rows * (self.t_rp + self.t_rcd) + self.t_cl + (bytes as f64 * self.ps_per_byte).ceil() as u64
    }

    /// Queues an access at `now`; returns when it ends.
    pub fn access(&mut self, now: SimTime, bytes: u64) -> SimTime {
        let start = now.max(self.free_at);
        let duration = self.access_ps(bytes);
        self.free_at = start + duration;
        self.busy_ps += duration;
        self.free_at
    }
}
