//! SATA link: half duplex, so commands, data and status share one FIFO. Every message pays the
//! host controller's processing delay, then its bytes at the link rate (SATA FIS framing is small
//! next to that delay and is not counted separately).

use crate::config::HostConfig;
use crate::time::{transfer_time_ps, SimTime};

pub struct SataLink {
    bytes_per_second: f64,
    processing_ps: u64,
    free_at: SimTime,
    /// Payload bytes sent each way (counted by the caller's direction, for the results).
    pub bytes_to_device: u64,
    pub bytes_to_host: u64,
}

impl SataLink {
    pub fn new(host: &HostConfig) -> Self {
        Self {
            bytes_per_second: host.sata_link_rate.value,
            processing_ps: host.sata_processing_delay.value,
            free_at: 0,
            bytes_to_device: 0,
            bytes_to_host: 0,
        }
    }

    /// Sends one message either way; returns when it has arrived.
    #[inline]
    pub fn send(&mut self, now: SimTime, payload: u64) -> SimTime {
        let start = now.max(self.free_at);
        self.free_at = start + self.processing_ps + transfer_time_ps(payload, self.bytes_per_second);
        self.free_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_directions_share_the_link_and_each_message_pays_the_delay() {
        let host = HostConfig { sata_processing_delay: crate::config::Duration::lit("1us"), ..HostConfig::default() };
        let mut link = SataLink::new(&host);
        let a = link.send(0, 600);
        assert_eq!(a, 1_000_000 + 1_000_000, "1 us delay + 600 B at 600 MB/s");
        let b = link.send(0, 600);
        assert_eq!(b, 2 * a, "the other direction waits too");
    }
}
