//! `[[namespaces]]`: several NVMe namespaces on one device, each with its own size and command
//! set (conventional, or zoned with `[zns]`'s zone layout) and its own flows, sharing the
//! controller, the cache and the flash (docs/namespaces.md).
//!
//! Inside the device the namespaces are laid end to end in one dense logical space: the zoned
//! namespaces' zones first (the zone table numbers them from 0), then the conventional
//! namespaces. A flow addresses its namespace from sector 0.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::units::Size;
use super::{Config, ConfigError, ZoneLayout};
use crate::flash::Geometry;

/// Most namespaces a device may have (NVMe allows far more; a study seldom needs more).
pub const MAX_NAMESPACES: usize = 64;

/// One namespace (see [`Config::namespaces`]).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NamespaceConfig {
    /// Name flows use (`flows[].namespace`) and the results show (default `ns-<i>`, from 1 as
    /// NVMe numbers namespaces).
    pub name: Option<String>,
    /// `conventional` (default) or `zoned` (NVMe ZNS; the zone layout comes from `[zns]`).
    #[serde(default)]
    pub command_set: CommandSet,
    /// Bytes of a conventional namespace (a whole number of flash pages).
    pub size: Option<Size>,
    /// Zones of a zoned namespace.
    pub zones: Option<u64>,
}

/// See [`NamespaceConfig::command_set`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CommandSet {
    #[default]
    Conventional,
    Zoned,
}

/// Where a namespace lies: its pages of the device's dense logical space, and for a zoned one
/// its zones.
#[derive(Clone, Debug, PartialEq)]
pub struct NamespaceLayout {
    pub name: String,
    pub zoned: bool,
    /// Sectors the host addresses in the namespace (a zoned one: zones x zone size).
    pub host_sectors: u64,
    /// First dense logical page and pages (zoned: zones x capacity).
    pub first_page: u64,
    pub pages: u64,
    /// Zoned: its first zone and zone count in the zone table.
    pub first_zone: u64,
    pub zones: u64,
}

impl NamespaceLayout {
    /// Where the namespace's sector 0 lies in the address space its requests use inside the
    /// device: the dense logical space (conventional), or the zone table's host space (zoned).
    pub fn base_sector(&self, sectors_per_page: u64, zone_sectors: u64) -> u64 {
        if self.zoned {
            self.first_zone * zone_sectors
        } else {
            self.first_page * sectors_per_page
        }
    }
}

/// The namespaces `config` gives, laid out on `geometry`: one namespace of the whole logical
/// space (zoned with `[zns]`) when it gives none.
pub fn layout(config: &Config, geometry: &Geometry) -> Result<Vec<NamespaceLayout>, ConfigError> {
    let zones = ZoneLayout::of(config, geometry)?;
    let spp = geometry.sectors_per_page;
    if config.namespaces.is_empty() {
        let single = match &zones {
            Some(z) => NamespaceLayout {
                name: "ns-1".into(),
                zoned: true,
                host_sectors: z.host_sectors(),
                first_page: 0,
                pages: z.zones * z.capacity_sectors / spp,
                first_zone: 0,
                zones: z.zones,
            },
            None => NamespaceLayout {
                name: "ns-1".into(),
                zoned: false,
                host_sectors: geometry.logical_sectors(),
                first_page: 0,
                pages: geometry.logical_pages,
                first_zone: 0,
                zones: 0,
            },
        };
        return Ok(vec![single]);
    }
    let mut out = Vec::with_capacity(config.namespaces.len());
    let mut next_zone = 0u64;
    let zone_pages = zones.as_ref().map_or(0, |z| z.capacity_sectors / spp);
    for (i, ns) in config.namespaces.iter().enumerate().filter(|(_, n)| n.command_set == CommandSet::Zoned) {
        let z = zones.as_ref().expect("validated: zoned namespaces need [zns]");
        let n = ns.zones.expect("validated: a zoned namespace gives zones");
        out.push((
            i,
            NamespaceLayout {
                name: name_of(ns, i),
                zoned: true,
                host_sectors: n * z.zone_sectors,
                first_page: next_zone * zone_pages,
                pages: n * zone_pages,
                first_zone: next_zone,
                zones: n,
            },
        ));
        next_zone += n;
    }
    let mut next_page = next_zone * zone_pages;
    for (i, ns) in config.namespaces.iter().enumerate().filter(|(_, n)| n.command_set == CommandSet::Conventional) {
        let pages = ns.size.as_ref().expect("validated: a conventional namespace gives its size").value
            / geometry.page_size_bytes;
        out.push((
            i,
            NamespaceLayout {
                name: name_of(ns, i),
                zoned: false,
                host_sectors: pages * spp,
                first_page: next_page,
                pages,
                first_zone: 0,
                zones: 0,
            },
        ));
        next_page += pages;
    }
    out.sort_by_key(|(i, _)| *i);
    Ok(out.into_iter().map(|(_, l)| l).collect())
}

fn name_of(ns: &NamespaceConfig, i: usize) -> String {
    ns.name.clone().unwrap_or_else(|| format!("ns-{}", i + 1))
}

/// The namespace a flow uses: its index among `config.namespaces` (0 without namespaces).
pub fn namespace_of_flow(config: &Config, flow: usize) -> usize {
    match &config.flows[flow].namespace {
        None => 0,
        Some(name) => config
            .namespaces
            .iter()
            .enumerate()
            .position(|(i, ns)| &name_of(ns, i) == name)
            .expect("validated: flows name existing namespaces"),
    }
}

/// Names unique, sizes given and whole, zoned namespaces with `[zns]`, everything fitting the
/// drive, flows naming namespaces that exist.
pub(super) fn validate(config: &Config) -> Result<(), ConfigError> {
    let namespaces = &config.namespaces;
    if namespaces.is_empty() {
        for (i, f) in config.flows.iter().enumerate() {
            if f.namespace.is_some() {
                return Err(ConfigError::new(
                    format!("flows[{i}].namespace"),
                    "the device has one namespace: add [[namespaces]] to give it several",
                ));
            }
        }
        return Ok(());
    }
    if namespaces.len() > MAX_NAMESPACES {
        return Err(ConfigError::new("namespaces", format!("at most {MAX_NAMESPACES}, got {}", namespaces.len())));
    }
    if config.ftl.address_domains != super::AddressDomains::Shared {
        return Err(ConfigError::new(
            "ftl.address_domains",
            "per-flow address domains and namespaces both divide the address space: use one (namespaces give each flow its own)",
        ));
    }
    if config.ftl.mapping != super::MappingFamily::Page {
        return Err(ConfigError::new("namespaces", "namespaces need page mapping (ftl.mapping = \"page\")"));
    }
    if config.host.interface == super::HostInterface::OpenChannel {
        return Err(ConfigError::new("namespaces", "an Open-Channel device leaves the address space to the host"));
    }
    let geometry = Geometry::counts(config);
    let mut names = std::collections::HashSet::new();
    let mut zoned_any = false;
    for (i, ns) in namespaces.iter().enumerate() {
        let path = format!("namespaces[{i}]");
        if !names.insert(name_of(ns, i)) {
            return Err(ConfigError::new(format!("{path}.name"), format!("\"{}\" is used twice", name_of(ns, i))));
        }
        match ns.command_set {
            CommandSet::Conventional => {
                if ns.zones.is_some() {
                    return Err(ConfigError::new(format!("{path}.zones"), "only a zoned namespace has zones"));
                }
                let Some(size) = &ns.size else {
                    return Err(ConfigError::new(format!("{path}.size"), "a conventional namespace needs its size"));
                };
                let page = geometry.page_size_bytes;
                if size.value == 0 || size.value % page != 0 {
                    return Err(ConfigError::new(
                        format!("{path}.size"),
                        format!("must be a whole number of {page}-byte flash pages, got {}", size.value),
                    ));
                }
            }
            CommandSet::Zoned => {
                zoned_any = true;
                if config.zns.is_none() {
                    return Err(ConfigError::new(
                        format!("{path}.command_set"),
                        "a zoned namespace takes its zone layout from [zns]: add it",
                    ));
                }
                if ns.size.is_some() {
                    return Err(ConfigError::new(
                        format!("{path}.size"),
                        "a zoned namespace is sized in zones (zones = N; [zns] gives their size)",
                    ));
                }
                if ns.zones.is_none_or(|n| n == 0) {
                    return Err(ConfigError::new(format!("{path}.zones"), "a zoned namespace needs zones = N (N > 0)"));
                }
            }
        }
    }
    if config.zns.is_some() && !zoned_any {
        return Err(ConfigError::new("zns", "no namespace is zoned: give one command_set = \"zoned\" or drop [zns]"));
    }
    let zones = ZoneLayout::of(config, &geometry)?;
    let zoned_total: u64 = namespaces.iter().filter_map(|n| n.zones).sum();
    if let Some(z) = &zones {
        if zoned_total > z.zones {
            return Err(ConfigError::new(
                "namespaces",
                format!("the zoned namespaces have {zoned_total} zones; the drive backs {} of this layout", z.zones),
            ));
        }
    }
    let spp = geometry.sectors_per_page;
    let zone_pages = zones.as_ref().map_or(0, |z| zoned_total * z.capacity_sectors / spp);
    let conventional: u64 =
        namespaces.iter().filter_map(|n| n.size.as_ref()).map(|s| s.value / geometry.page_size_bytes).sum();
    if zone_pages + conventional > geometry.logical_pages {
        return Err(ConfigError::new(
            "namespaces",
            format!(
                "need {} pages ({} zoned, {conventional} conventional); the drive has {} after over-provisioning",
                zone_pages + conventional,
                zone_pages,
                geometry.logical_pages
            ),
        ));
    }
    if let Some(z) = &zones {
        // A plane holds its zones' blocks, its share of the conventional data and the GC reserve.
        let groups = (geometry.planes / z.zone_planes) as u64;
        let zone_blocks = zoned_total.div_ceil(groups) * z.blocks_per_plane as u64;
        let conventional_blocks =
            conventional.div_ceil(geometry.planes as u64).div_ceil(geometry.pages_per_block as u64);
        let reserve = if conventional > 0 { geometry.held_back_blocks(config.ftl.gc_threshold) as u64 } else { 1 };
        let need = zone_blocks + conventional_blocks + reserve;
        if need > geometry.blocks_per_plane as u64 {
            return Err(ConfigError::new(
                "namespaces",
                format!(
                    "a plane needs {need} blocks ({zone_blocks} for zones, {conventional_blocks} for conventional data, {reserve} held back for GC); it has {}",
                    geometry.blocks_per_plane
                ),
            ));
        }
    }
    for (i, f) in config.flows.iter().enumerate() {
        if let Some(name) = &f.namespace {
            if !namespaces.iter().enumerate().any(|(j, ns)| &name_of(ns, j) == name) {
                let known: Vec<String> =
                    namespaces.iter().enumerate().map(|(j, ns)| format!("\"{}\"", name_of(ns, j))).collect();
                return Err(ConfigError::new(
                    format!("flows[{i}].namespace"),
                    format!("no namespace is named \"{name}\" (there are {})", known.join(", ")),
                ));
            }
        }
    }
    Ok(())
}

/// results.json `namespaces[]` (only with `[[namespaces]]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct NamespaceSummary {
    pub name: String,
    /// `conventional` or `zoned`.
    pub command_set: String,
    /// Bytes the host addresses (zoned: zones x zone size) and bytes it can store (zoned:
    /// zones x zone capacity).
    pub size_bytes: u64,
    pub capacity_bytes: u64,
    /// Zoned: its zones (0 for a conventional namespace).
    pub zones: u64,
    pub flows: Vec<String>,
    /// What its flows read and wrote.
    pub bytes_read: u64,
    pub bytes_written: u64,
}
