//! PCIe link: full duplex, one FIFO per direction. A transfer of `n` payload bytes is cut into
//! Transaction Layer Packets of at most MaxPayloadSize, each carrying a fixed overhead (header,
//! sequence number, LCRC, framing), and occupies the direction for (payload + overhead) / bandwidth.
//!
//! Host-to-device carries command fetches and write data; device-to-host carries read data and
//! completions. Each direction serves transfers in the order they are requested, which the model
//! gets exactly by keeping the time the direction next becomes free.

use crate::config::HostConfig;
use crate::time::{transfer_time_ps, DurationTable, SimTime};

/// Transfers up to this size (every 16 bytes) take their duration from a table.
const TABLED_BYTES: u64 = 16 * 1024;

pub struct PcieLink {
    bytes_per_second: f64,
    max_payload: u64,
    tlp_overhead: u64,
    /// Durations of the sizes that repeat (entries, sectors of data), as computed.
    durations: DurationTable,
    down_free_at: SimTime,
    up_free_at: SimTime,
    pub bytes_down: u64,
    pub bytes_up: u64,
}

impl PcieLink {
    pub fn new(host: &HostConfig) -> Self {
        let mut link = Self {
            bytes_per_second: host.pcie_lane_rate.value * host.pcie_lanes as f64,
            max_payload: host.pcie_max_payload.value,
            tlp_overhead: host.pcie_tlp_overhead.value,
            durations: DurationTable::new(16, 0, |_| 0),
            down_free_at: 0,
            up_free_at: 0,
            bytes_down: 0,
            bytes_up: 0,
        };
        link.durations = DurationTable::new(16, TABLED_BYTES, |bytes| link.computed_transfer_ps(bytes));
        link
    }

    /// Bytes on the wire for `payload` bytes of data.
    #[inline]
    pub fn wire_bytes(&self, payload: u64) -> u64 {
        payload + payload.div_ceil(self.max_payload).max(1) * self.tlp_overhead
    }

    #[inline]
    pub fn transfer_ps(&self, payload: u64) -> u64 {
        self.durations.get(payload).unwrap_or_else(|| self.computed_transfer_ps(payload))
    }

    fn computed_transfer_ps(&self, payload: u64) -> u64 {
        transfer_time_ps(self.wire_bytes(payload), self.bytes_per_second)
    }

    /// Host to device; returns when the last byte arrives.
    #[inline]
    pub fn send_to_device(&mut self, now: SimTime, payload: u64) -> SimTime {
        let start = now.max(self.down_free_at);
        self.down_free_at = start + self.transfer_ps(payload);
        self.bytes_down += payload;
        self.down_free_at
    }

    /// Device to host; returns when the last byte arrives.
    #[inline]
    pub fn send_to_host(&mut self, now: SimTime, payload: u64) -> SimTime {
        let start = now.max(self.up_free_at);
        self.up_free_at = start + self.transfer_ps(payload);
        self.bytes_up += payload;
        self.up_free_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tlps_add_overhead_and_directions_are_independent() {
        let link = PcieLink::new(&HostConfig::default());
        // 8 KiB = 32 TLPs of 256 B, each with 24 B of overhead.
        assert_eq!(link.wire_bytes(8192), 8192 + 32 * 24);
        assert_eq!(link.wire_bytes(64), 88);
        let mut link = link;
        let a = link.send_to_device(0, 4096);
        let b = link.send_to_device(0, 4096);
        assert_eq!(b, 2 * a, "same direction queues");
        let c = link.send_to_host(0, 4096);
        assert_eq!(c, a, "the other direction is free");
    }

    #[test]
    fn tabled_and_computed_durations_agree() {
        let link = PcieLink::new(&HostConfig::default());
        for payload in [0, 16, 64, 512, 4096, 4096 + 16, TABLED_BYTES, TABLED_BYTES + 16, 100, 1 << 20] {
            assert_eq!(link.transfer_ps(payload), link.computed_transfer_ps(payload), "{payload}");
        }
    }
}
