//! Timing of the controller's DRAM, as MQSim models its data cache DRAM: each access opens the rows
//! it touches (precharge + activate), waits the CAS latency once, and streams the data at the
//! bus rate. Accesses are served one at a time in arrival order, so concurrent flows contend.
//! `dram.serial_access_time = "mqsim"` times an access with MQSim's own arithmetic instead.

use crate::config::{CacheConfig, SerialAccessTime};
use crate::time::{SimTime, PS_PER_S};

const PS_PER_NS: u64 = 1000;

pub struct Dram {
    /// Time each access with MQSim's `estimate_dram_access_time`.
    mqsim: bool,
    burst_bytes: u64,
    transfers_per_s: f64,
    ps_per_byte: f64,
    row_bytes: u64,
    t_rcd: u64,
    t_cl: u64,
    t_rp: u64,
    free_at: SimTime,
    pub busy_ps: u64,
}

impl Dram {
    pub fn new(cache: &CacheConfig, timing: SerialAccessTime) -> Self {
        Self {
            mqsim: timing == SerialAccessTime::Mqsim,
            burst_bytes: cache.dram_burst_bytes.max(1) as u64,
            transfers_per_s: cache.dram_data_rate.value,
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
        if self.mqsim {
            return self.mqsim_access_ps(bytes);
        }
        let rows = bytes.div_ceil(self.row_bytes).max(1);
        rows * (self.t_rp + self.t_rcd) + self.t_cl + crate::time::ceil_ps(bytes as f64 * self.ps_per_byte)
    }

    /// MQSim's `estimate_dram_access_time` (Data_Cache_Manager_Base.h @7ec40e3), step for step
    /// in its integer nanoseconds: within a row, tRCD + tCL + the bursts; beyond, (tRCD + tCL +
    /// a row's bursts + tRP) times *half* the whole rows (integer division), plus tRCD + tCL,
    /// plus the partial row's bytes *divided* by the burst time. Its `dram_burst_transfer_time_ddr`
    /// is one clock of its data rate in MHz, two transfers: here two transfers of ours.
    fn mqsim_access_ps(&self, bytes: u64) -> u64 {
        let burst_ns = 2e9 / self.transfers_per_s;
        let (rcd, cl, rp) = (self.t_rcd / PS_PER_NS, self.t_cl / PS_PER_NS, self.t_rp / PS_PER_NS);
        let row = self.row_bytes;
        let ns = if bytes <= row {
            rcd + cl + ((bytes / self.burst_bytes / 2) as f64 * burst_ns) as u64
        } else {
            let row_ns = ((row / self.burst_bytes / 2) as f64 * burst_ns) as u64;
            let rows = (bytes / row / 2) as f64;
            ((rcd + cl + row_ns + rp) as f64 * rows) as u64
                + rcd
                + cl
                + ((bytes % row) as f64 / (self.burst_bytes as f64 * burst_ns)) as u64
        };
        ns * PS_PER_NS
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

#[cfg(test)]
mod tests {
    use super::*;

    /// MQSim's default DRAM: 8 KiB rows, 100 MHz (200 MT/s), 1-byte bursts, 13 ns timings.
    fn dram(timing: SerialAccessTime) -> Dram {
        Dram::new(&CacheConfig::default(), timing)
    }

    #[test]
    fn mqsim_arithmetic_charges_half_the_rows_of_a_long_access() {
        let (ours, theirs) = (dram(SerialAccessTime::PerRow), dram(SerialAccessTime::Mqsim));
        // Within a row both agree but for the precharge ssdlab charges: 26 ns + 2048 x 10 ns.
        assert_eq!(theirs.access_ps(4096), 20_506_000);
        assert_eq!(ours.access_ps(4096), 20_519_000);
        // 64 KiB: MQSim charges 4 of its 8 rows (4 x (26 + 40960 + 13) + 26 ns).
        assert_eq!(theirs.access_ps(65536), 164_022_000);
        assert_eq!(ours.access_ps(65536), 327_901_000);
        // 12 KiB: no whole pair of rows, and the last 4 KiB divided by the burst time.
        assert_eq!(theirs.access_ps(12288), 435_000);
    }
}
