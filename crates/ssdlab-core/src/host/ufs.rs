//! UFS link: UPIUs (UFS Protocol Information Units) in UniPro frames over M-PHY lanes.
//!
//! The link is full duplex (separate lanes each way), each direction a FIFO. Every UPIU has a
//! 32-byte header (JESD220, 10.5: the command descriptor block of a COMMAND UPIU fits in it) and
//! a data segment (DATA IN / DATA OUT only). It is cut into UniPro frames of at most
//! `frame_payload` bytes, each adding `frame_overhead`, and the bytes cross at lanes x gear rate
//! x 8b/10b. Each UPIU also pays `processing_delay` (host controller and device UTP handling)
//! in its direction. A read is COMMAND (host to device), one DATA IN per page as it leaves the
//! flash, and RESPONSE; a write is COMMAND, READY TO TRANSFER (device to host), DATA OUT, and
//! RESPONSE.

use crate::config::UfsConfig;
use crate::time::{transfer_time_ps, SimTime};

pub use crate::config::UPIU_HEADER_BYTES;

pub struct UfsLink {
    bytes_per_second: f64,
    frame_payload: u64,
    frame_overhead: u64,
    processing_ps: u64,
    down_free_at: SimTime,
    up_free_at: SimTime,
    /// UPIU bytes (headers and data) sent each way, and UPIUs sent each way.
    pub bytes_down: u64,
    pub bytes_up: u64,
    pub upius_down: u64,
    pub upius_up: u64,
}

impl UfsLink {
    pub fn new(ufs: &UfsConfig) -> Self {
        Self {
            bytes_per_second: ufs.bytes_per_second(),
            frame_payload: ufs.frame_payload.value,
            frame_overhead: ufs.frame_overhead.value,
            processing_ps: ufs.processing_delay.value,
            down_free_at: 0,
            up_free_at: 0,
            bytes_down: 0,
            bytes_up: 0,
            upius_down: 0,
            upius_up: 0,
        }
    }

    /// Bytes on the wire (before line coding) of a UPIU with `data` bytes in its data segment.
    #[inline]
    pub fn wire_bytes(&self, data: u64) -> u64 {
        let upiu = UPIU_HEADER_BYTES + data;
        upiu + upiu.div_ceil(self.frame_payload) * self.frame_overhead
    }

    /// Time one UPIU holds its direction: processing, then its frames at the coded lane rate.
    #[inline]
    pub fn upiu_ps(&self, data: u64) -> u64 {
        self.processing_ps + transfer_time_ps(self.wire_bytes(data), self.bytes_per_second)
    }

    /// Sends a UPIU with `data` bytes host to device; returns when it has arrived.
    #[inline]
    pub fn send_to_device(&mut self, now: SimTime, data: u64) -> SimTime {
        let start = now.max(self.down_free_at);
        self.down_free_at = start + self.upiu_ps(data);
        self.bytes_down += UPIU_HEADER_BYTES + data;
        self.upius_down += 1;
        self.down_free_at
    }

    /// Sends a UPIU with `data` bytes device to host; returns when it has arrived.
    #[inline]
    pub fn send_to_host(&mut self, now: SimTime, data: u64) -> SimTime {
        let start = now.max(self.up_free_at);
        self.up_free_at = start + self.upiu_ps(data);
        self.bytes_up += UPIU_HEADER_BYTES + data;
        self.upius_up += 1;
        self.up_free_at
    }

    /// A write's data after its command has arrived at `command_at`: the device answers with a
    /// READY TO TRANSFER UPIU, then the host sends one DATA OUT UPIU.
    #[inline]
    pub fn send_write_data(&mut self, command_at: SimTime, data: u64) -> SimTime {
        let ready = self.send_to_host(command_at, 0);
        self.send_to_device(ready, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Duration, RateSeries};

    #[test]
    fn gear_lanes_and_coding_set_the_rate() {
        let g3 = UfsConfig { gear: 3, lanes: 1, rate_series: RateSeries::B, ..UfsConfig::default() };
        // 5.8304 Gb/s x 8/10 / 8 = 583.04 MB/s.
        assert!((g3.bytes_per_second() - 583.04e6).abs() < 1.0);
        // The default, UFS 3.1: HS-G4B x 2 lanes = 2 x 11.6608 x 0.8 / 8 = 2332.16 MB/s.
        assert!((UfsConfig::default().bytes_per_second() - 2332.16e6).abs() < 1.0);
        let a = UfsConfig { gear: 1, rate_series: RateSeries::A, lanes: 1, ..UfsConfig::default() };
        assert!((a.lane_bits_per_second() - 1.248e9).abs() < 1.0);
    }

    #[test]
    fn a_upiu_pays_header_frames_and_processing() {
        let ufs = UfsConfig { gear: 3, lanes: 1, processing_delay: Duration::lit("1us"), ..UfsConfig::default() };
        let mut link = UfsLink::new(&ufs);
        // 4 KiB of data: 4128 UPIU bytes in 15 frames of at most 286 B, 8 B each on top.
        assert_eq!(link.wire_bytes(4096), 4128 + 15 * 8);
        assert_eq!(link.wire_bytes(0), 40);
        let data_in = link.send_to_host(0, 4096);
        assert_eq!(data_in, 1_000_000 + transfer_time_ps(4248, 583.04e6));
        // Full duplex: the other direction is free; the same direction queues.
        let command = link.send_to_device(0, 0);
        assert_eq!(command, 1_000_000 + transfer_time_ps(40, 583.04e6));
        assert_eq!(link.send_to_host(0, 0), data_in + command);
        assert_eq!((link.upius_down, link.upius_up), (1, 2));
    }
}
