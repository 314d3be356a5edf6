//! `[ftl.fdp]`: NVMe Flexible Data Placement (TP4146, in NVMe 2.0's base specification as
//! ratified): the reclaim unit handles the device offers, and which flows may use them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ConfigError, MappingFamily};

/// Most reclaim unit handles (each keeps a user and a GC block open on every plane).
pub const MAX_RECLAIM_UNIT_HANDLES: u32 = 64;

/// See [`super::FtlConfig::fdp`]. One reclaim group (the whole device); a reclaim unit is one
/// block of a plane, so a handle has an open reclaim unit on every plane (static allocation
/// fixes the plane of a logical page).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FdpConfig {
    /// Reclaim unit handles the device offers (default 8, at most 64): each has its own open
    /// reclaim unit for host data and one for the data GC moves.
    pub reclaim_unit_handles: u32,
}

impl Default for FdpConfig {
    fn default() -> Self {
        Self { reclaim_unit_handles: 8 }
    }
}

/// Handles within range, placement handles only with FDP and below its handle count, FDP only
/// with a page-mapped device FTL.
pub(super) fn validate(config: &super::Config) -> Result<(), ConfigError> {
    let handles = match &config.ftl.fdp {
        Some(fdp) => {
            let n = fdp.reclaim_unit_handles;
            if !(1..=MAX_RECLAIM_UNIT_HANDLES).contains(&n) {
                return Err(ConfigError::new(
                    "ftl.fdp.reclaim_unit_handles",
                    format!("must be 1 to {MAX_RECLAIM_UNIT_HANDLES}, got {n}"),
                ));
            }
            if config.ftl.mapping != MappingFamily::Page {
                return Err(ConfigError::new(
                    "ftl.fdp",
                    format!(
                        "FDP places pages by handle, which needs page mapping; ftl.mapping = \"{}\" places data by block",
                        super::family_name(config.ftl.mapping)
                    ),
                ));
            }
            if config.host.interface == super::HostInterface::OpenChannel {
                return Err(ConfigError::new(
                    "ftl.fdp",
                    "FDP is the device FTL's placement; with host.interface = \"open_channel\" the host places data itself",
                ));
            }
            n
        }
        None => 0,
    };
    for (i, flow) in config.flows.iter().enumerate() {
        let Some(h) = flow.placement_handle else { continue };
        if handles == 0 {
            return Err(ConfigError::new(
                format!("flows[{i}].placement_handle"),
                "needs Flexible Data Placement: add [ftl.fdp] (reclaim_unit_handles = ...)",
            ));
        }
        if h >= handles {
            return Err(ConfigError::new(
                format!("flows[{i}].placement_handle"),
                format!("handle {h} does not exist: ftl.fdp.reclaim_unit_handles is {handles} (handles are numbered from 0)"),
            ));
        }
    }
    Ok(())
}
