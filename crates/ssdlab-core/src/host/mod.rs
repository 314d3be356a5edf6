//! The host side: each flow's submission queue, the device's fetch arbitration, and the PCIe link.

pub mod arbiter;
pub mod pcie;

pub use arbiter::Arbiter;
pub use pcie::PcieLink;

/// An NVMe submission queue entry is 64 bytes; a completion queue entry 16 bytes (NVMe 1.2, 4.2/4.6).
pub const SQ_ENTRY_BYTES: u64 = 64;
pub const CQ_ENTRY_BYTES: u64 = 16;
