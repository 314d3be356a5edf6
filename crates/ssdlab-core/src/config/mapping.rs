//! `ftl.mapping` and its parameters: which address-mapping family the FTL uses (see
//! docs/mapping.md), and the checks that keep a family away from options it cannot honour.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AddressDomains, Config, ConfigError, FillLayout, HostInterface, PreconditionMode};

/// DRAM bytes per cached mapping entry (a 4-byte logical and a 4-byte physical page number):
/// the CMT's unit, which `ftl.cmt_capacity` must hold at least one of.
pub const CMT_ENTRY_BYTES: u64 = 8;
/// Bytes per entry in a translation page (a 4-byte physical page number).
pub const TRANSLATION_ENTRY_BYTES: u64 = 4;

/// DRAM bytes per CMT entry and bytes per translation-page entry, as `ftl.mapping_entry_sizes`
/// says: ssdlab's fixed [`CMT_ENTRY_BYTES`] and [`TRANSLATION_ENTRY_BYTES`], or MQSim's, which
/// it derives from the device (`Address_Mapping_Unit_Page_Level`'s constructor @7ec40e3): with
/// b = log2(physical pages) bits per page number and one bit per sector of a page, a CMT entry
/// holds a logical and a physical page number and the bitmap, ceil((2b + sectors) / 8) bytes,
/// and a translation-page entry a physical page number and the bitmap, ceil((b + sectors) / 8).
/// MQSim's 512 GiB default device: 9 and 6 bytes.
pub fn entry_bytes(config: &Config) -> (u64, u64) {
    if config.ftl.mapping_entry_sizes != Some(MappingEntrySizes::Mqsim) {
        return (CMT_ENTRY_BYTES, TRANSLATION_ENTRY_BYTES);
    }
    let f = &config.flash;
    let physical_pages = f.channels as f64
        * f.chips_per_channel as f64
        * f.dies_per_chip as f64
        * f.planes_per_die as f64
        * f.blocks_per_plane as f64
        * f.pages_per_block as f64;
    let bits = physical_pages.max(1.0).log2();
    let sectors = (f.page_size.value / crate::flash::SECTOR_BYTES) as f64;
    (((2.0 * bits + sectors) / 8.0).ceil() as u64, ((bits + sectors) / 8.0).ceil() as u64)
}

/// See [`super::FtlConfig::mapping_entry_sizes`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum MappingEntrySizes {
    #[default]
    Fixed,
    Mqsim,
}

/// Default of `ftl.log_blocks_per_data_block`: SimpleSSD's baseline hybrid FTL lets each data
/// block own up to 8 log blocks.
pub const DEFAULT_LOG_BLOCKS_PER_DATA_BLOCK: u32 = 8;

/// The address-mapping family of the FTL.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MappingFamily {
    /// One entry per logical page (DFTL-style cached mapping table, or `ideal_mapping`).
    #[default]
    Page,
    /// One entry per logical block: a page lives at its fixed offset of its block, and an update
    /// the block cannot take in place copies the whole block to a new one (a merge).
    Block,
    /// Block-mapped data blocks plus page-mapped log blocks that absorb updates; full log blocks
    /// are reclaimed by switch, partial or full merges.
    Hybrid,
    /// One entry per super-page (pages at the same offset across the planes it spans, Amber).
    SuperPage,
}

/// What a write that covers only part of a super-page does.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SuperPageUpdate {
    /// One entry per super-page: the super-page's other valid pages are read and written again
    /// with the new data, so the whole super-page moves to a new place.
    #[default]
    ReadModifyWrite,
    /// Amber's random-I/O tweak: only the updated pages are written, each to the next free page
    /// of its own plane; the entry keeps one pointer per page of the super-page.
    Remap,
}

/// Checks the mapping parameters and the options each family cannot honour.
pub fn validate_mapping(config: &Config) -> Result<(), ConfigError> {
    let ftl = &config.ftl;
    if ftl.log_blocks_per_data_block == 0 {
        return Err(ConfigError::new("ftl.log_blocks_per_data_block", "must be at least 1, got 0"));
    }
    if ftl.log_blocks_per_data_block > 64 {
        return Err(ConfigError::new(
            "ftl.log_blocks_per_data_block",
            format!("must be at most 64, got {}", ftl.log_blocks_per_data_block),
        ));
    }
    if ftl.log_blocks_per_data_block != DEFAULT_LOG_BLOCKS_PER_DATA_BLOCK && ftl.mapping != MappingFamily::Hybrid {
        return Err(ConfigError::new(
            "ftl.log_blocks_per_data_block",
            format!("applies to ftl.mapping = \"hybrid\" only, not \"{}\"", family_name(ftl.mapping)),
        ));
    }
    let planes = config.flash.channels
        * config.flash.chips_per_channel
        * config.flash.dies_per_chip
        * config.flash.planes_per_die;
    if let Some(n) = ftl.super_page_pages {
        if ftl.mapping != MappingFamily::SuperPage {
            return Err(ConfigError::new(
                "ftl.super_page_pages",
                format!("applies to ftl.mapping = \"super_page\" only, not \"{}\"", family_name(ftl.mapping)),
            ));
        }
        if n == 0 || planes == 0 || !planes.is_multiple_of(n) {
            return Err(ConfigError::new(
                "ftl.super_page_pages",
                format!(
                    "must be at least 1 and divide the device's {planes} planes (a super-page holds one page per plane it spans), got {n}"
                ),
            ));
        }
    }
    if ftl.super_page_update != SuperPageUpdate::default() && ftl.mapping != MappingFamily::SuperPage {
        return Err(ConfigError::new(
            "ftl.super_page_update",
            format!("applies to ftl.mapping = \"super_page\" only, not \"{}\"", family_name(ftl.mapping)),
        ));
    }
    if ftl.map_addresses == MapAddresses::InPlane {
        if let Some(why) = in_plane_refusal(config) {
            return Err(ConfigError::new("ftl.map_addresses", format!("\"in-plane\" {why}")));
        }
    }
    if ftl.mapping == MappingFamily::Page {
        return Ok(());
    }
    let family = family_name(ftl.mapping);
    match config.precondition.mode {
        PreconditionMode::Steady | PreconditionMode::Simulate => {
            return Err(ConfigError::new(
                "precondition",
                format!(
                    "mode \"{}\" ages a page-mapped FTL; with ftl.mapping = \"{family}\" use precondition = \"fill\" (a freshly filled drive) or \"none\"",
                    if config.precondition.mode == PreconditionMode::Steady { "steady" } else { "simulate" }
                ),
            ));
        }
        PreconditionMode::Fill if config.precondition.layout == Some(FillLayout::Spread) => {
            return Err(ConfigError::new(
                "precondition.layout",
                format!("\"spread\" lays out a page-mapped drive; with ftl.mapping = \"{family}\" use \"packed\""),
            ));
        }
        _ => {}
    }
    for (i, flow) in config.flows.iter().enumerate() {
        let pinned =
            [("channels", &flow.channels), ("chips", &flow.chips), ("dies", &flow.dies), ("planes", &flow.planes)];
        if let Some((field, _)) = pinned.iter().find(|(_, ids)| ids.is_some()) {
            return Err(ConfigError::new(
                format!("flows[{i}].{field}"),
                format!(
                    "pins a flow's page allocation, which ftl.mapping = \"{family}\" does not do (a logical block or super-page has a fixed place); use ftl.mapping = \"page\""
                ),
            ));
        }
    }
    if ftl.mapping == MappingFamily::SuperPage {
        return Ok(());
    }
    if ftl.preemptible_gc {
        return Err(ConfigError::new(
            "ftl.preemptible_gc",
            format!("applies to the page-mapped FTL's GC; ftl.mapping = \"{family}\" reclaims space by merges, which are not preemptible"),
        ));
    }
    if ftl.gc_pacing == Some(true) {
        return Err(ConfigError::new(
            "ftl.gc_pacing",
            format!("applies to the page-mapped FTL's GC; ftl.mapping = \"{family}\" reclaims space by merges, which are not paced"),
        ));
    }
    // Every logical block needs a physical block of its plane, and a merge needs one more.
    let f = &config.flash;
    let physical_pages = planes as u64 * f.blocks_per_plane as u64 * f.pages_per_block as u64;
    let logical_pages = ((physical_pages as f64) * (1.0 - ftl.over_provisioning)).floor() as u64;
    let logical_blocks = logical_pages.div_ceil(f.pages_per_block as u64);
    let per_plane = logical_blocks.div_ceil(planes.max(1) as u64);
    if per_plane + 2 > f.blocks_per_plane as u64 {
        return Err(ConfigError::new(
            "ftl.over_provisioning",
            format!(
                "with ftl.mapping = \"{family}\" each plane holds up to {per_plane} logical blocks in its {} blocks; merges need at least 2 spare blocks per plane, so raise the over-provisioning",
                f.blocks_per_plane
            ),
        ));
    }
    Ok(())
}

/// The name of a family as it is written in the configuration.
/// See [`super::FtlConfig::map_addresses`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum MapAddresses {
    #[default]
    Auto,
    Global,
    InPlane,
}

/// `ftl.map_addresses = "auto"` takes in-plane addresses when the global tables would pass this
/// (4 GiB: about 2 TiB of 16 KiB pages). Smaller drives keep global ones, whose lookups need no
/// plane computed.
pub const AUTO_IN_PLANE_BYTES: u64 = 4 << 30;

/// Whether the page map stores in-plane addresses: `ftl.map_addresses`, `auto` deciding by
/// where they apply and the global tables' size.
pub fn uses_in_plane_addresses(config: &Config) -> bool {
    match config.ftl.map_addresses {
        MapAddresses::Global => false,
        MapAddresses::InPlane => true,
        MapAddresses::Auto => {
            let g = crate::flash::Geometry::counts(config);
            let global_bytes = (g.logical_pages + g.translation_pages + g.physical_pages) * 4;
            global_bytes > AUTO_IN_PLANE_BYTES && in_plane_refusal(config).is_none()
        }
    }
}

/// Why in-plane map addresses cannot hold this configuration's placements, if they cannot:
/// every page must stay on the plane static allocation over the whole device gives it, and a
/// plane's pages must number below 2^24 (`Ftl::new` checks the built device the same way).
pub fn in_plane_refusal(config: &Config) -> Option<String> {
    let why = if config.ftl.mapping != MappingFamily::Page {
        Some(format!("needs ftl.mapping = \"page\", not \"{}\"", family_name(config.ftl.mapping)))
    } else if config.zns.is_some() {
        Some("does not hold a zoned namespace's placement ([zns]); use \"global\"".to_string())
    } else if config.host.interface == HostInterface::OpenChannel {
        Some("does not hold an Open-Channel host's placement; use \"global\"".to_string())
    } else if config.ftl.address_domains == AddressDomains::PerFlow {
        Some("needs ftl.address_domains = \"shared\" (static allocation over the whole device)".to_string())
    } else {
        config.flows.iter().enumerate().find_map(|(i, f)| {
            let lists = [("channels", &f.channels), ("chips", &f.chips), ("dies", &f.dies), ("planes", &f.planes)];
            lists.iter().find(|(_, ids)| ids.is_some()).map(|(field, _)| {
                format!("needs every flow striped over the whole device, and flows[{i}].{field} confines one; use \"global\"")
            })
        })
    };
    if why.is_some() {
        return why;
    }
    let pages_per_plane = config.flash.blocks_per_plane as u64 * config.flash.pages_per_block as u64;
    (pages_per_plane >= (1 << 24) - 1).then(|| {
        format!("addresses a plane's pages in 24 bits, and a plane here has {pages_per_plane}; use \"global\"")
    })
}

pub fn family_name(family: MappingFamily) -> &'static str {
    match family {
        MappingFamily::Page => "page",
        MappingFamily::Block => "block",
        MappingFamily::Hybrid => "hybrid",
        MappingFamily::SuperPage => "super_page",
    }
}
