//! `[host.open_channel]`: an Open-Channel SSD (2.0, or 1.2 with `version = "1.2"`) driven by a
//! host-side FTL. Read only when `host.interface = "open_channel"`; see `host::ocssd` and
//! docs/host-interfaces.md.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Config, ConfigError, Duration, HostInterface};

/// The host-side FTL that drives an Open-Channel 2.0 device (NVMe transport, physical
/// addressing by group / parallel unit / chunk / logical block).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct OpenChannelConfig {
    /// The Open-Channel specification the device implements: `"2.0"` (default; chunks, a
    /// minimum write of one page, vector chunk copy) or `"1.2"` (LightNVM 1.2: the host
    /// addresses channel / LUN / plane / block / page / sector and writes a LUN's planes together,
    /// so its minimum write is one page on every plane of a LUN; no vector copy).
    pub version: OcVersion,
    /// Where the host FTL writes: `round-robin` (default) stripes pages over the flow's parallel
    /// units in the order they are written, skipping a unit that has no free chunk space, as
    /// Linux's pblk does; `static` uses the device FTL's address striping (`ftl.allocation`), to
    /// isolate the effect of host placement.
    pub placement: HostPlacement,
    /// How host GC moves a valid page: `host` (default; pblk reads it into host memory and
    /// writes it back, so it crosses the PCIe link both ways) or `vector-copy` (the 2.0
    /// command that copies inside the device; nothing crosses the link).
    pub gc_copy: GcCopy,
    /// Host CPU time of the host FTL per page it translates or places (lookup or update of the
    /// mapping table in host DRAM), charged before the command is submitted. Default 0ns: the
    /// host's cores are assumed to keep up; set it to study the host CPU cost.
    pub host_cpu_per_page: Duration,
}

/// An Open-Channel specification version.
#[derive(Clone, Copy, Debug, Serialize, JsonSchema, PartialEq, Eq, Default)]
pub enum OcVersion {
    /// Open-Channel SSD 1.2 (LightNVM, 2016).
    #[serde(rename = "1.2")]
    V1_2,
    /// Open-Channel SSD 2.0 (2018).
    #[default]
    #[serde(rename = "2.0")]
    V2_0,
}

impl OcVersion {
    pub fn name(self) -> &'static str {
        match self {
            OcVersion::V1_2 => "1.2",
            OcVersion::V2_0 => "2.0",
        }
    }
}

/// Takes `"1.2"` or `"2.0"`, and the numbers 1.2 and 2 (what a TOML user writes unquoted).
impl<'de> Deserialize<'de> for OcVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = OcVersion;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"1.2\" or \"2.0\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OcVersion, E> {
                match v.trim() {
                    "1.2" => Ok(OcVersion::V1_2),
                    "2.0" | "2" => Ok(OcVersion::V2_0),
                    other => Err(E::custom(format!("Open-Channel versions 1.2 and 2.0 are modelled, got \"{other}\""))),
                }
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<OcVersion, E> {
                self.visit_str(&format!("{v:.1}"))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<OcVersion, E> {
                self.visit_str(&format!("{v}.0"))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// Where the host-side FTL places written pages.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum HostPlacement {
    /// The next of the flow's planes in allocation order, whatever the address (pblk-style
    /// striping over parallel units); a plane waiting for GC space is skipped.
    RoundRobin,
    /// The plane `ftl.allocation` gives the logical page (what the device FTL does).
    Static,
}

/// The path of a page host GC moves.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum GcCopy {
    /// Vector read to host memory, then vector write: the page crosses PCIe up and down.
    Host,
    /// Vector chunk copy inside the device.
    VectorCopy,
}

impl Default for OpenChannelConfig {
    fn default() -> Self {
        Self {
            version: OcVersion::V2_0,
            placement: HostPlacement::RoundRobin,
            gc_copy: GcCopy::Host,
            host_cpu_per_page: Duration::lit("0ns"),
        }
    }
}

/// Checks the interface sections: each applies to its own interface only, and the Open-Channel
/// host FTL's GC path must agree with the FTL options.
pub(super) fn validate_interfaces(config: &Config) -> Result<(), ConfigError> {
    let host = &config.host;
    let name = match host.interface {
        HostInterface::Nvme => "nvme",
        HostInterface::Sata => "sata",
        HostInterface::Ufs => "ufs",
        HostInterface::OpenChannel => "open_channel",
    };
    let only = |section: &str, interface: &str| {
        ConfigError::new(
            format!("host.{section}"),
            format!("applies to host.interface = \"{interface}\" only, not \"{name}\""),
        )
    };
    host.ufs.validate()?;
    if host.interface != HostInterface::Ufs && host.ufs != super::UfsConfig::default() {
        return Err(only("ufs", "ufs"));
    }
    if host.interface != HostInterface::OpenChannel && host.open_channel != OpenChannelConfig::default() {
        return Err(only("open_channel", "open_channel"));
    }
    if host.interface == HostInterface::OpenChannel && config.ftl.mapping != super::MappingFamily::Page {
        // The host FTL maps pages; the block, hybrid and super-page families belong to the
        // device FTL, which Open-Channel moves to the host. Running them would ignore the host
        // FTL without saying so.
        return Err(ConfigError::new(
            "ftl.mapping",
            format!(
                "\"{}\" is a device FTL's mapping; with host.interface = \"open_channel\" the FTL runs on the host and maps pages: use ftl.mapping = \"page\" (or another interface)",
                super::family_name(config.ftl.mapping)
            ),
        ));
    }
    if host.open_channel.version == OcVersion::V1_2 && host.open_channel.gc_copy == GcCopy::VectorCopy {
        return Err(ConfigError::new(
            "host.open_channel.gc_copy",
            "\"vector-copy\" is Open-Channel 2.0's Vector Chunk Copy; a 1.2 device has no copy command, so its host GC moves pages through host memory: use gc_copy = \"host\" or version = \"2.0\"",
        ));
    }
    if host.interface == HostInterface::OpenChannel && host.open_channel.gc_copy == GcCopy::Host && config.ftl.copyback
    {
        return Err(ConfigError::new(
            "ftl.copyback",
            "with host.open_channel.gc_copy = \"host\" a moved page travels through host memory, so it cannot stay in the chip's page register; set gc_copy = \"vector-copy\" or copyback = false",
        ));
    }
    Ok(())
}
