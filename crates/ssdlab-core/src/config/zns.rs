//! `[zns]`: the namespace is zoned (NVMe Zoned Namespace Command Set 1.1). The host writes each
//! zone in order from its start; the device keeps a state and a write pointer per zone and maps
//! a zone onto erase blocks of a group of planes (`ftl/zones.rs`, `sim/zone_path.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::units::Size;
use super::{Config, ConfigError, HostInterface, MappingFamily, PreconditionMode};
use crate::flash::{Geometry, SECTOR_BYTES};

/// Most zones that may be open or active at once: the device keeps a write frontier on every
/// plane of each active zone's group.
pub const MAX_ACTIVE_ZONES: u32 = 4096;

/// See [`Config::zns`].
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ZnsConfig {
    /// Writable bytes of a zone (ZCAP; default: one block on every plane of the zone's group).
    /// A whole number of blocks on each of the group's planes: a zone owns the blocks it is
    /// written to, so a reset erases them with no data to move.
    pub zone_capacity: Option<Size>,
    /// Bytes a zone takes in the address space (ZSZE; default: the capacity rounded up to a
    /// power of two, as on drives whose zone capacity is below the zone size). The sectors
    /// between the capacity and the size are not writable or readable.
    pub zone_size: Option<Size>,
    /// Planes a zone's data is striped over (default: every plane). Planes are taken in the
    /// static allocation order (`ftl.allocation`, channel first by default): `channels`
    /// gives each zone one plane per channel; 1 confines a zone to a single plane, as ConfZNS
    /// (Song et al., SYSTOR 2023) studies. Must divide the plane count.
    pub zone_planes: Option<u32>,
    /// Most zones open at once (MOR + 1; default 14, WD Ultrastar DC ZN540's figure). A write to
    /// an empty or closed zone opens it implicitly; when the limit is reached the device closes
    /// an implicitly opened zone to make room, or fails the command (Too Many Open Zones).
    pub max_open_zones: Option<u32>,
    /// Most zones active (open or closed) at once (MAR + 1; default 14).
    pub max_active_zones: Option<u32>,
    /// Whether a Zone Finish programs the rest of the zone's open blocks with padding (default
    /// true: the blocks are closed and cost program time, as real drives do to keep unwritten
    /// pages from degrading). False just marks the zone full.
    pub finish_pads: Option<bool>,
}

/// The zone layout a config gives (what validation checks and the device builds from).
#[derive(Clone, Debug, PartialEq)]
pub struct ZoneLayout {
    pub zones: u64,
    pub zone_sectors: u64,
    pub capacity_sectors: u64,
    pub zone_planes: u32,
    /// Blocks a zone takes on each of its planes.
    pub blocks_per_plane: u32,
    pub max_open: u32,
    pub max_active: u32,
    pub finish_pads: bool,
    /// Sectors of the smallest write a zone takes (a flash page: the model keeps no buffer to
    /// gather smaller writes into a page).
    pub write_unit_sectors: u64,
}

impl ZoneLayout {
    /// Host-visible sectors: every zone's size (its capacity and the gap after it).
    pub fn host_sectors(&self) -> u64 {
        self.zones * self.zone_sectors
    }

    /// The layout `config.zns` describes on `geometry` (None for a conventional namespace).
    pub fn of(config: &Config, geometry: &Geometry) -> Result<Option<Self>, ConfigError> {
        let Some(z) = &config.zns else { return Ok(None) };
        let err = |key: &str, reason: String| ConfigError::new(format!("zns.{key}"), reason);
        let planes = geometry.planes;
        let zone_planes = z.zone_planes.unwrap_or(planes);
        if zone_planes == 0 || !planes.is_multiple_of(zone_planes) {
            return Err(err(
                "zone_planes",
                format!(
                    "must divide the device's {planes} planes (a zone stripes over a group of them), got {zone_planes}"
                ),
            ));
        }
        let block_bytes = geometry.pages_per_block as u64 * geometry.page_size_bytes;
        let stripe_bytes = block_bytes * zone_planes as u64;
        let capacity = z.zone_capacity.as_ref().map_or(stripe_bytes, |c| c.value);
        if capacity == 0 || !capacity.is_multiple_of(stripe_bytes) {
            return Err(err(
                "zone_capacity",
                format!(
                    "must be a whole number of blocks on each of the zone's {zone_planes} planes, a multiple of {stripe_bytes} bytes ({zone_planes} x {block_bytes}-byte blocks), got {capacity}"
                ),
            ));
        }
        let blocks_per_zone_plane = (capacity / stripe_bytes) as u32;
        let capacity_sectors = capacity / SECTOR_BYTES;
        let zone_bytes = z.zone_size.as_ref().map_or(capacity.next_power_of_two(), |s| s.value);
        if zone_bytes < capacity || !zone_bytes.is_multiple_of(SECTOR_BYTES) {
            return Err(err(
                "zone_size",
                format!(
                    "must be a whole number of sectors at least the zone capacity ({capacity} bytes), got {zone_bytes}"
                ),
            ));
        }
        // Each plane keeps its share of over-provisioning (spare blocks for wear-out) and the one
        // erased block the block manager holds back; zones take the rest, group by group.
        let spare = ((geometry.blocks_per_plane as f64) * config.ftl.over_provisioning).ceil() as u32;
        let usable = geometry.blocks_per_plane.saturating_sub(spare.max(1));
        let groups = (planes / zone_planes) as u64;
        let zones = groups * (usable / blocks_per_zone_plane) as u64;
        // With [[namespaces]], the zoned namespaces' zones (validation checks they fit).
        let given: u64 = config.namespaces.iter().filter_map(|n| n.zones).sum();
        let zones = if config.namespaces.is_empty() { zones } else { given.min(zones) };
        if zones == 0 {
            return Err(err(
                "zone_capacity",
                format!(
                    "a zone takes {blocks_per_zone_plane} blocks on each of its planes, but a plane has {usable} to give after over-provisioning (ftl.over_provisioning) and the reserve"
                ),
            ));
        }
        let max_active = z.max_active_zones.unwrap_or(14);
        let max_open = z.max_open_zones.unwrap_or(14);
        if !(1..=MAX_ACTIVE_ZONES).contains(&max_active) {
            return Err(err("max_active_zones", format!("must be 1 to {MAX_ACTIVE_ZONES}, got {max_active}")));
        }
        if max_open == 0 || max_open > max_active {
            return Err(err(
                "max_open_zones",
                format!("must be 1 to max_active_zones ({max_active}): an open zone is active, got {max_open}"),
            ));
        }
        Ok(Some(Self {
            zones,
            zone_sectors: zone_bytes / SECTOR_BYTES,
            capacity_sectors,
            zone_planes,
            blocks_per_plane: blocks_per_zone_plane,
            max_open,
            max_active,
            finish_pads: z.finish_pads.unwrap_or(true),
            write_unit_sectors: geometry.sectors_per_page,
        }))
    }
}

/// The zone layout fits the drive; the device FTL (page mapping, no host FTL) keeps zones; no
/// feature that moves data behind the host's back (SLC cache folding, FDP, read reclaim) or
/// fills the drive before the run is combined with them.
pub(super) fn validate(config: &Config) -> Result<(), ConfigError> {
    if config.zns.is_none() {
        return Ok(());
    }
    let clash =
        |key: &str, why: &str| Err(ConfigError::new(key, format!("{why}; a zoned namespace ([zns]) cannot have it")));
    if config.ftl.mapping != MappingFamily::Page {
        return clash(
            "ftl.mapping",
            "zones are mapped page by page onto the blocks a zone owns (ftl.mapping = \"page\")",
        );
    }
    if config.host.interface == HostInterface::OpenChannel {
        return clash("host.interface", "an Open-Channel host places data itself");
    }
    if config.ftl.fdp.is_some() {
        return clash("ftl.fdp", "FDP places data by handle, zones by zone");
    }
    if config.flash.slc_cache.is_some() {
        return clash("flash.slc_cache", "the SLC cache folds data behind the host's back");
    }
    if config.flash.reliability.as_ref().is_some_and(|r| r.read_reclaim_bits > 0) {
        return clash(
            "flash.reliability.read_reclaim_bits",
            "read reclaim moves data out of a zone's blocks (set it to 0)",
        );
    }
    if config.ftl.address_domains != super::AddressDomains::Shared {
        return clash(
            "ftl.address_domains",
            "per-flow domains slice the address space regardless of zone boundaries (give flows working_set ranges instead)",
        );
    }
    let p = &config.precondition;
    if p.mode == PreconditionMode::Fill || p.mode == PreconditionMode::Simulate || p.occupancy > 0.0 {
        return Err(ConfigError::new(
            "precondition",
            "a zoned namespace starts with every zone empty (the host writes zones in order): use precondition.mode = \"none\"",
        ));
    }
    ZoneLayout::of(config, &Geometry::counts(config)).map(|_| ())
}
