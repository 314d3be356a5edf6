//! The host side: each flow's submission queue, the device's fetch arbitration, and the host
//! link (PCIe for NVMe and Open-Channel, SATA, UFS). `ocssd` is the Open-Channel device's chunk
//! rules and the host FTL's bookkeeping.

pub mod arbiter;
pub mod ocssd;
pub mod pcie;
pub mod sata;
pub mod summary;
pub mod ufs;

pub use arbiter::Arbiter;
pub use pcie::PcieLink;
pub use sata::SataLink;
pub use summary::HostInterfaceSummary;
pub use ufs::UfsLink;

use crate::config::{HostConfig, HostInterface};
use crate::time::SimTime;

/// The host link of the configured interface (an enum, not a trait object: it is on every
/// request's path).
pub enum HostLink {
    Pcie(PcieLink),
    Sata(SataLink),
    Ufs(UfsLink),
}

impl HostLink {
    pub fn new(host: &HostConfig) -> Self {
        match host.interface {
            HostInterface::Nvme | HostInterface::OpenChannel => HostLink::Pcie(PcieLink::new(host)),
            HostInterface::Sata => HostLink::Sata(SataLink::new(host)),
            HostInterface::Ufs => HostLink::Ufs(UfsLink::new(&host.ufs)),
        }
    }

    /// Host to device; returns when the last byte arrives.
    #[inline]
    pub fn send_to_device(&mut self, now: SimTime, payload: u64) -> SimTime {
        match self {
            HostLink::Pcie(l) => l.send_to_device(now, payload),
            HostLink::Sata(l) => {
                l.bytes_to_device += payload;
                l.send(now, payload)
            }
            HostLink::Ufs(l) => l.send_to_device(now, payload),
        }
    }

    /// Device to host (on UFS: one DATA IN UPIU); returns when the last byte arrives.
    #[inline]
    pub fn send_to_host(&mut self, now: SimTime, payload: u64) -> SimTime {
        match self {
            HostLink::Pcie(l) => l.send_to_host(now, payload),
            HostLink::Sata(l) => {
                l.bytes_to_host += payload;
                l.send(now, payload)
            }
            HostLink::Ufs(l) => l.send_to_host(now, payload),
        }
    }

    /// A command, host to device: a 64-byte submission queue entry (SATA: the command FIS), or
    /// a COMMAND UPIU.
    #[inline]
    pub fn send_command(&mut self, now: SimTime) -> SimTime {
        match self {
            HostLink::Ufs(l) => l.send_to_device(now, 0),
            _ => self.send_to_device(now, SQ_ENTRY_BYTES),
        }
    }

    /// A write's data, requested at `now` with the command in the device at `command_at`. UFS
    /// sends it only after the device's READY TO TRANSFER.
    #[inline]
    pub fn send_write_data(&mut self, now: SimTime, command_at: SimTime, bytes: u64) -> SimTime {
        match self {
            HostLink::Ufs(l) => l.send_write_data(command_at, bytes),
            _ => self.send_to_device(now, bytes),
        }
    }

    /// A completion, device to host: a 16-byte completion entry (SATA: the status FIS), or a
    /// RESPONSE UPIU.
    #[inline]
    pub fn send_completion(&mut self, now: SimTime) -> SimTime {
        match self {
            HostLink::Ufs(l) => l.send_to_host(now, 0),
            _ => self.send_to_host(now, CQ_ENTRY_BYTES),
        }
    }

    /// Payload bytes sent host to device and device to host so far (UFS: UPIU bytes).
    pub fn bytes(&self) -> (u64, u64) {
        match self {
            HostLink::Pcie(l) => (l.bytes_down, l.bytes_up),
            HostLink::Sata(l) => (l.bytes_to_device, l.bytes_to_host),
            HostLink::Ufs(l) => (l.bytes_down, l.bytes_up),
        }
    }
}

/// An NVMe submission queue entry is 64 bytes; a completion queue entry 16 bytes (NVMe 1.2, 4.2/4.6).
/// On SATA the same sizes stand for the command FIS (20 B, padded) and the status FIS.
pub const SQ_ENTRY_BYTES: u64 = 64;
pub const CQ_ENTRY_BYTES: u64 = 16;
