//! results.json `host_interface`: which interface the run used and what crossed its link.

use serde::{Deserialize, Serialize};

use super::HostLink;
use crate::config::{HostConfig, HostInterface, RateSeries};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HostInterfaceSummary {
    /// `nvme`, `sata`, `ufs` or `open_channel`.
    pub kind: String,
    /// Commands the device holds at once (NVMe: `max_requests_in_device`).
    pub device_queue_slots: u32,
    /// Usable bytes per second of one direction of the link.
    pub link_bytes_per_second: f64,
    /// Whether the two directions move data at the same time (SATA is half duplex).
    pub full_duplex: bool,
    /// Payload bytes sent each way: commands, data and completions (UFS: whole UPIUs), before
    /// packet or frame overheads.
    pub bytes_to_device: u64,
    pub bytes_to_host: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ufs: Option<UfsSummary>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct UfsSummary {
    /// M-PHY gear (HS-G1..HS-G4), rate series and lanes per direction.
    pub gear: u32,
    pub rate_series: String,
    pub lanes: u32,
    /// Raw bit rate of one lane, Gb/s, and the share left after line coding.
    pub lane_gbps: f64,
    pub coding_efficiency: f64,
    /// UPIUs sent each way.
    pub upius_to_device: u64,
    pub upius_to_host: u64,
}

impl HostInterfaceSummary {
    pub fn new(host: &HostConfig, device_queue_slots: u32, link: &HostLink) -> Self {
        let (kind, link_bytes_per_second, full_duplex) = match host.interface {
            HostInterface::Nvme => ("nvme", host.pcie_lane_rate.value * host.pcie_lanes as f64, true),
            HostInterface::OpenChannel => ("open_channel", host.pcie_lane_rate.value * host.pcie_lanes as f64, true),
            HostInterface::Sata => ("sata", host.sata_link_rate.value, false),
            HostInterface::Ufs => ("ufs", host.ufs.bytes_per_second(), true),
        };
        let (bytes_to_device, bytes_to_host) = link.bytes();
        let ufs = match link {
            HostLink::Ufs(l) => Some(UfsSummary {
                gear: host.ufs.gear,
                rate_series: match host.ufs.rate_series {
                    RateSeries::A => "A",
                    RateSeries::B => "B",
                }
                .to_string(),
                lanes: host.ufs.lanes,
                lane_gbps: host.ufs.lane_bits_per_second() / 1e9,
                coding_efficiency: host.ufs.coding_efficiency(),
                upius_to_device: l.upius_down,
                upius_to_host: l.upius_up,
            }),
            _ => None,
        };
        Self {
            kind: kind.to_string(),
            device_queue_slots,
            link_bytes_per_second,
            full_duplex,
            bytes_to_device,
            bytes_to_host,
            ufs,
        }
    }
}
