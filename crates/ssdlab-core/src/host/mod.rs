//! The host side: each flow's submission queue, the device's fetch arbitration, and the PCIe link.

pub mod arbiter;
pub mod pcie;
pub mod sata;

pub use arbiter::Arbiter;
pub use pcie::PcieLink;
pub use sata::SataLink;

use crate::config::{HostConfig, HostInterface};
use crate::time::SimTime;

/// The host link of the configured interface (an enum, not a trait object: it is on every
/// request's path).
pub enum HostLink {
    Pcie(PcieLink),
    Sata(SataLink),
}

impl HostLink {
    pub fn new(host: &HostConfig) -> Self {
        match host.interface {
            HostInterface::Nvme => HostLink::Pcie(PcieLink::new(host)),
            HostInterface::Sata => HostLink::Sata(SataLink::new(host)),
        }
    }

    /// Host to device; returns when the last byte arrives.
    #[inline]
    pub fn send_to_device(&mut self, now: SimTime, payload: u64) -> SimTime {
        match self {
            HostLink::Pcie(l) => l.send_to_device(now, payload),
            HostLink::Sata(l) => l.send(now, payload),
        }
    }

    /// Device to host; returns when the last byte arrives.
    #[inline]
    pub fn send_to_host(&mut self, now: SimTime, payload: u64) -> SimTime {
        match self {
            HostLink::Pcie(l) => l.send_to_host(now, payload),
            HostLink::Sata(l) => l.send(now, payload),
        }
    }
}

/// An NVMe submission queue entry is 64 bytes; a completion queue entry 16 bytes (NVMe 1.2, 4.2/4.6).
/// On SATA the same sizes stand for the command FIS (20 B, padded) and the status FIS.
pub const SQ_ENTRY_BYTES: u64 = 64;
pub const CQ_ENTRY_BYTES: u64 = 16;
