//! `[host.ufs]`: the Universal Flash Storage interface (JEDEC UFS 2.x/3.x over MIPI UniPro and
//! M-PHY). Read only when `host.interface = "ufs"`; see `host::ufs` for the timing and
//! docs/host-interfaces.md for what is modelled.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ConfigError, Duration, Size};

/// Bytes of every UPIU header (JEDEC UFS): the link timing and the request-size limits both
/// count it.
pub const UPIU_HEADER_BYTES: u64 = 32;

/// The UFS link and its one command queue. The defaults describe a UFS 3.1 device: HS-G4,
/// rate series B, two lanes each way, 32 transfer request slots.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct UfsConfig {
    /// M-PHY high-speed gear, 1 to 4 (HS-G1 to HS-G4). Per lane at rate series B: HS-G1 1.4576,
    /// HS-G2 2.9152, HS-G3 5.8304, HS-G4 11.6608 Gb/s (series A: 1.248, 2.496, 4.992,
    /// 9.984 Gb/s), all with 8b/10b line coding. Default 4: UFS 3.0 and 3.1 run HS-G4.
    pub gear: u32,
    /// M-PHY lanes in each direction, 1 or 2 (the link is full duplex: host-to-device and
    /// device-to-host lanes are separate). Default 2, as UFS 3.x devices use.
    pub lanes: u32,
    /// M-PHY rate series, `A` or `B`. Default `B`, the faster one, which UFS 3.x products
    /// advertise (HS-G4B x 2 lanes = 23.2 Gb/s).
    pub rate_series: RateSeries,
    /// Slots of the UTP Transfer Request List: commands the device holds at once, filled from
    /// all flows in the order the host issued them. At most 32 (UFSHCI 2.x/3.x); default 32.
    pub queue_depth: u32,
    /// Time the host controller and the device's UTP layer spend on each UPIU (command, ready to
    /// transfer, data in/out, response), serialised with its transfer in its direction.
    /// Default 1us: a descriptor fetch by DMA plus firmware handling of one UPIU, an assumed
    /// order of magnitude (no public per-UPIU measurement); set it from your controller's data.
    pub processing_delay: Duration,
    /// UPIU bytes one UniPro data frame carries. Default 286B: the data link layer's 288-byte
    /// frame payload (144 symbols) less the 1-byte short network and transport headers.
    pub frame_payload: Size,
    /// Bytes each UniPro frame adds on the wire. Default 8B: the short L3 and L4 headers
    /// (2 bytes), the start-of-frame and end-of-frame control symbols and the CRC-16 (2 bytes
    /// each).
    pub frame_overhead: Size,
}

/// M-PHY high-speed rate series (the two families of bit rates each gear can run at).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
pub enum RateSeries {
    /// 1.248 Gb/s per lane at HS-G1, doubling per gear.
    A,
    /// 1.4576 Gb/s per lane at HS-G1, doubling per gear.
    B,
}

impl Default for UfsConfig {
    fn default() -> Self {
        Self {
            gear: 4,
            lanes: 2,
            rate_series: RateSeries::B,
            queue_depth: 32,
            processing_delay: Duration::lit("1us"),
            frame_payload: Size::lit("286B"),
            frame_overhead: Size::lit("8B"),
        }
    }
}

/// Highest M-PHY gear modelled (HS-G5 of UFS 4.0 changes the line coding; it is not modelled).
pub const MAX_UFS_GEAR: u32 = 4;

impl UfsConfig {
    /// Raw bit rate of one lane, bits per second.
    pub fn lane_bits_per_second(&self) -> f64 {
        let g1 = match self.rate_series {
            RateSeries::A => 1.248e9,
            RateSeries::B => 1.4576e9,
        };
        g1 * f64::from(1u32 << (self.gear - 1))
    }

    /// Fraction of the raw bits that carry data: 8b/10b line coding in HS-G1 to HS-G4.
    pub fn coding_efficiency(&self) -> f64 {
        0.8
    }

    /// Usable bytes per second of one direction: lanes x lane rate x coding efficiency / 8.
    pub fn bytes_per_second(&self) -> f64 {
        self.lanes as f64 * self.lane_bits_per_second() * self.coding_efficiency() / 8.0
    }

    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=MAX_UFS_GEAR).contains(&self.gear) {
            return Err(ConfigError::new(
                "host.ufs.gear",
                format!("M-PHY high-speed gears are 1 to {MAX_UFS_GEAR} (HS-G1 to HS-G4), got {}", self.gear),
            ));
        }
        if !(1..=2).contains(&self.lanes) {
            return Err(ConfigError::new("host.ufs.lanes", format!("UFS uses 1 or 2 lanes, got {}", self.lanes)));
        }
        if !(1..=32).contains(&self.queue_depth) {
            return Err(ConfigError::new(
                "host.ufs.queue_depth",
                format!("the UTP transfer request list has 1 to 32 slots, got {}", self.queue_depth),
            ));
        }
        if self.frame_payload.value == 0 {
            return Err(ConfigError::new("host.ufs.frame_payload", "must be greater than zero"));
        }
        Ok(())
    }
}
