//! `[flash]`: the back end's geometry, cell technology and operation latencies (by page type
//! where the technology has several), and program/erase suspension.

use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

use super::*;

/// Pages at the start of a block that the `address` page-type layout treats as meta pages: the
/// first `ADDRESS_LAYOUT_LSB_META_PAGES` have page type 0 (LSB), the rest type 1 (CSB in TLC, MSB
/// in MLC). These are the counts of SimpleSSD's formula as ssdlab's model facts state it (Jung et
/// al., IEEE CAL 2017: n_meta = 8, 5 LSB then 3 CSB); SimpleSSD's code (`pal/old/LatencyTLC.cc`,
/// `GetPageType`) tests `AddrPage <= 5` and `<= 7`, i.e. 6 LSB then 2 CSB pages, divides by 2
/// (`>> 1`, its two planes per die) where ssdlab divides by `planes_per_die`, and applies the
/// layout to TLC only (`LatencyMLC` is `AddrPage % 2`); ssdlab gives MLC the same meta pages, with
/// MSB in place of the missing CSB.
pub const ADDRESS_LAYOUT_META_PAGES: u32 = 8;
pub const ADDRESS_LAYOUT_LSB_META_PAGES: u32 = 5;

/// ONFI cycles for one plane's command and address: 00h + 5 address cycles + 30h for a read,
/// 80h + 5 address cycles + 10h for a program, 60h + 3 row address cycles + D0h for an erase.
pub const READ_COMMAND_CYCLES: u64 = 7;
pub const PROGRAM_COMMAND_CYCLES: u64 = 7;
pub const ERASE_COMMAND_CYCLES: u64 = 5;

/// Flash back end geometry and timing.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FlashConfig {
    /// Flash channels (independent buses).
    pub channels: u32,
    /// Chips (ways) sharing each channel.
    pub chips_per_channel: u32,
    /// Dies per chip; each runs its own cell operations.
    pub dies_per_chip: u32,
    /// Planes per die (at most 8); they work in parallel only as one multi-plane command.
    pub planes_per_die: u32,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Flash page size (data area; the spare area is not modelled).
    pub page_size: Size,
    /// Width of the ONFI data bus in bytes.
    pub channel_width_bytes: u32,
    /// Transfers per second on the channel (NV-DDR2 at 333 MT/s in MQSim's default).
    pub channel_rate: TransferRate,
    /// Bits per cell: sets the page types (LSB, CSB, MSB, and QLC's TSB) that page-type
    /// latencies refer to.
    pub technology: CellTechnology,
    /// Which page of a block has which page type (and so which `timing` latency): `round-robin`
    /// (default) or `address` (SimpleSSD's layout with 8 meta pages). No effect on SLC.
    pub page_type_layout: PageTypeLayout,
    /// Which cell operations a read may suspend (MQSim's CMD_Suspension_Support).
    pub suspension: Suspension,
    /// How the dies of a chip take commands: `independent` (each die starts work whenever it is
    /// idle, as ONFI's multi-LUN operations allow) or `one-per-chip` (MQSim: a chip takes a new
    /// command only when it is idle, and each command goes to one die, so the dies of a chip
    /// never overlap). Unset: `independent`, or `one-per-chip` under `compat = "mqsim"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub die_commands: Option<DieCommands>,
    /// Whether a program that writes part of a page moves only the written sectors over the
    /// channel (MQSim) or the whole page register (ssdlab: the page is programmed whole). Unset:
    /// false, or true under `compat = "mqsim"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial_page_transfer: Option<bool>,
    /// Who takes a busy channel next: `in-order` (each command and each read's data out in the
    /// order it asks for the channel) or `data-out-first` (MQSim's ONFI PHY: read data waiting
    /// in a page register goes before any new command, and a command goes only to an idle
    /// channel, one chip at a time in round robin; `flash/channel.rs`). Unset: `in-order`, or
    /// `data-out-first` under `compat = "mqsim"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_arbitration: Option<ChannelArbitration>,
    /// Whether the controller pairs transactions of one kind on different planes of a die, at
    /// the same page offset, into one multi-plane command (one cell time for all). Default true
    /// (ONFI's multi-plane operations; MQSim and SimpleSSD always pair). A property of the drive
    /// and its firmware, not a given: the Intel X25-M's sequential writes match the closed form
    /// it was validated with only without pairing (`examples/intel-x25m.toml`).
    pub multi_plane: bool,
    /// Cell operation and suspension timings.
    pub timing: TimingConfig,
    /// Read latency from flash reliability (`[flash.reliability]`, default none: every read
    /// decodes at once). With it, each page read's bit errors follow its block's wear, data age
    /// and reads since erase; reads with many errors are read again with extra sensing (each
    /// retry another cell read, transfer and soft decode), uncorrectable reads are counted, and
    /// blocks near the limit are rewritten (docs/reliability-model.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reliability: Option<super::ReliabilityConfig>,
    /// A pseudo-SLC write cache (`[flash.slc_cache]`, default none): host writes land in blocks
    /// programmed one bit per cell (fast, a fraction of the block's pages) while the plane has
    /// room for them, and that data is folded into the dense cells later (docs/slc-cache.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slc_cache: Option<super::SlcCacheConfig>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Suspension {
    None,
    Program,
    Erase,
    ProgramErase,
}

/// See [`FlashConfig::die_commands`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DieCommands {
    #[default]
    Independent,
    OnePerChip,
}

/// See [`FlashConfig::channel_arbitration`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ChannelArbitration {
    #[default]
    InOrder,
    DataOutFirst,
}

impl FlashConfig {
    /// A chip runs one die's command at a time (MQSim).
    pub fn one_command_per_chip(&self) -> bool {
        self.die_commands == Some(DieCommands::OnePerChip)
    }
}

impl Suspension {
    pub fn program(self) -> bool {
        matches!(self, Suspension::Program | Suspension::ProgramErase)
    }
    pub fn erase(self) -> bool {
        matches!(self, Suspension::Erase | Suspension::ProgramErase)
    }
}

impl Default for FlashConfig {
    fn default() -> Self {
        Self {
            channels: 8,
            chips_per_channel: 4,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 2048,
            pages_per_block: 256,
            page_size: Size::lit("8KiB"),
            channel_width_bytes: 1,
            channel_rate: TransferRate::lit("333MT/s"),
            technology: CellTechnology::Mlc,
            page_type_layout: PageTypeLayout::RoundRobin,
            suspension: Suspension::Erase,
            die_commands: None,
            partial_page_transfer: None,
            channel_arbitration: None,
            multi_plane: true,
            timing: TimingConfig::default(),
            reliability: None,
            slc_cache: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
pub enum CellTechnology {
    #[serde(rename = "SLC", alias = "slc")]
    Slc,
    #[serde(rename = "MLC", alias = "mlc")]
    Mlc,
    #[serde(rename = "TLC", alias = "tlc")]
    Tlc,
    /// Four bits per cell: lower, centre, upper and top pages (`lsb`, `csb`, `msb`, `tsb`).
    #[serde(rename = "QLC", alias = "qlc")]
    Qlc,
}

impl CellTechnology {
    /// Pages per wordline: LSB (, CSB), MSB (, TSB).
    pub fn bits_per_cell(self) -> u32 {
        match self {
            CellTechnology::Slc => 1,
            CellTechnology::Mlc => 2,
            CellTechnology::Tlc => 3,
            CellTechnology::Qlc => 4,
        }
    }
}

/// How page types are laid out in a block. Page types are numbered 0 = LSB, 1 = CSB (TLC, QLC)
/// or MSB (MLC), 2 = MSB (TLC, QLC), 3 = TSB (QLC); `bits` is the technology's bits per cell.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PageTypeLayout {
    /// Page `p` of a block has type `p mod bits` (TLC: LSB, CSB, MSB, LSB, ...; MLC: LSB, MSB, ...).
    #[default]
    RoundRobin,
    /// SimpleSSD's layout by address (Jung et al., "SimpleSSD", IEEE CAL 2017): pages 0-4 of a
    /// block are LSB and pages 5-7 CSB ("meta pages"; MLC, which has no CSB: MSB); page `p >= 8`
    /// has type `((p - 8) / planes_per_die) mod bits`, so the planes of a die program pages of the
    /// same type side by side. SimpleSSD's code applies this to TLC only (its MLC is round robin)
    /// and makes pages 0-5 LSB and 6-7 CSB; ssdlab uses 5 + 3, the formula as stated for the paper
    /// (n_meta = 8). Needs more than 8 pages per block.
    Address,
}

/// Cell operation latencies.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TimingConfig {
    /// Cell read time (tR): one duration, or one per page type.
    pub read: PageTypeLatency,
    /// Cell program time (tPROG): one duration, or one per page type.
    pub program: PageTypeLatency,
    /// Block erase time (tBERS).
    pub erase: Duration,
    /// Time to suspend an ongoing program or erase (MQSim's Suspend_Program_Time and
    /// Suspend_Erase_Time).
    pub suspend_program: Duration,
    /// Time to suspend an ongoing erase.
    pub suspend_erase: Duration,
    /// A read suspends a program or erase only if more than this is left of it (MQSim's
    /// Preferred_suspend_write_time_for_read and Preferred_suspend_erase_time_for_read).
    pub suspend_program_min_remaining: Duration,
    /// A read suspends an erase only if more than this is left of it.
    pub suspend_erase_min_remaining: Duration,
    /// Chip-to-chip variation of the cell latencies (`[flash.timing.spread]`, default none:
    /// every die is as fast as the latencies above). With it, each die draws a factor for its
    /// read, program and erase times once, from the run's seed; the latencies above are the
    /// centre. Amber measured program times of 413 us to 1.8 ms and reads of 57 to 94 us over
    /// the 60 packages of its drives (Gouk et al., MICRO 2018, section 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<LatencySpread>,
}

/// See [`TimingConfig::spread`].
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LatencySpread {
    /// How each die's factors are drawn: `uniform` (default; between 1 - s and 1 + s) or
    /// `normal` (mean 1, standard deviation s, kept within 0.1 to 3).
    pub distribution: SpreadDistribution,
    /// s of the read time: 0.25 gives Amber's 57-94 us around 75 us with `uniform`.
    pub read: f64,
    /// s of the program time: 0.63 gives Amber's 413 us - 1.8 ms around 1.1 ms with `uniform`.
    pub program: f64,
    /// s of the erase time.
    pub erase: f64,
}

/// See [`LatencySpread::distribution`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SpreadDistribution {
    #[default]
    Uniform,
    Normal,
}

impl LatencySpread {
    /// Checks each s: a uniform factor must stay positive (s below 1), a normal one is kept
    /// within 0.1 to 3 (s at most 1).
    pub fn validate(&self) -> Result<(), super::ConfigError> {
        for (key, s) in [("read", self.read), ("program", self.program), ("erase", self.erase)] {
            let ok = match self.distribution {
                SpreadDistribution::Uniform => (0.0..1.0).contains(&s),
                SpreadDistribution::Normal => (0.0..=1.0).contains(&s),
            };
            if !ok {
                let range = match self.distribution {
                    SpreadDistribution::Uniform => "at least 0 and below 1 (a uniform factor 1 - s must stay positive)",
                    SpreadDistribution::Normal => "between 0 and 1",
                };
                return Err(super::ConfigError::new(
                    format!("flash.timing.spread.{key}"),
                    format!("must be {range}, got {s}"),
                ));
            }
        }
        Ok(())
    }

    /// Each of `dies` dies' (read, program, erase) factors, drawn in die order from `rng`.
    pub fn draw(&self, dies: u32, rng: &mut crate::engine::RandomStream) -> Vec<[f64; 3]> {
        let spreads = [self.read, self.program, self.erase];
        (0..dies)
            .map(|_| {
                spreads.map(|s| match self.distribution {
                    SpreadDistribution::Uniform => 1.0 + s * (2.0 * rng.unit() - 1.0),
                    SpreadDistribution::Normal => rng.normal(1.0, s).clamp(0.1, 3.0),
                })
            })
            .collect()
    }
}

impl Default for TimingConfig {
    fn default() -> Self {
        Self {
            read: PageTypeLatency::Uniform(Duration::lit("75us")),
            program: PageTypeLatency::Uniform(Duration::lit("750us")),
            erase: Duration::lit("3.8ms"),
            suspend_program: Duration::lit("100us"),
            suspend_erase: Duration::lit("700us"),
            suspend_program_min_remaining: Duration::lit("100us"),
            suspend_erase_min_remaining: Duration::lit("700us"),
            spread: None,
        }
    }
}

/// A latency that may differ by page type: one duration for all, or `{ lsb, csb, msb, tsb }`
/// (as many as the technology has: QLC's lower, centre, upper and top pages).
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum PageTypeLatency {
    Uniform(Duration),
    ByType {
        lsb: Duration,
        #[serde(skip_serializing_if = "Option::is_none")]
        csb: Option<Duration>,
        #[serde(skip_serializing_if = "Option::is_none")]
        msb: Option<Duration>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tsb: Option<Duration>,
    },
}

impl PageTypeLatency {
    /// Latency in picoseconds for page type 0 = LSB, 1 = CSB (TLC, QLC) or MSB (MLC), 2 = MSB,
    /// 3 = TSB (QLC). Assumes the shape was validated against the technology.
    pub fn for_page_type(&self, technology: CellTechnology, page_type: u32) -> u64 {
        let or_lsb = |d: &Option<Duration>, lsb: &Duration| d.as_ref().map_or(lsb.value, |d| d.value);
        match self {
            PageTypeLatency::Uniform(d) => d.value,
            PageTypeLatency::ByType { lsb, csb, msb, tsb } => match (technology, page_type) {
                (_, 0) => lsb.value,
                (CellTechnology::Tlc | CellTechnology::Qlc, 1) => or_lsb(csb, lsb),
                (CellTechnology::Qlc, 3) => or_lsb(tsb, lsb),
                _ => or_lsb(msb, lsb),
            },
        }
    }
}

impl<'de> Deserialize<'de> for PageTypeLatency {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PageTypeLatency;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration like \"75us\" or a table { lsb = \"..\", csb = \"..\", msb = \"..\" }")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Duration::parse(v).map(PageTypeLatency::Uniform).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Err(E::custom(format!(
                    "expected a duration string like \"75us\", got the bare number {v} (add a unit)"
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                self.visit_i64(v as i64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Err(E::custom(format!(
                    "expected a duration string like \"75us\", got the bare number {v} (add a unit)"
                )))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut lsb, mut csb, mut msb, mut tsb) = (None, None, None, None);
                while let Some(key) = map.next_key::<String>()? {
                    let slot = match key.as_str() {
                        "lsb" => &mut lsb,
                        "csb" => &mut csb,
                        "msb" => &mut msb,
                        "tsb" => &mut tsb,
                        other => {
                            return Err(de::Error::custom(format!(
                                "unknown page type `{other}`, expected one of `lsb`, `csb`, `msb`, `tsb`"
                            )))
                        }
                    };
                    *slot = Some(map.next_value::<Duration>()?);
                }
                let lsb = lsb.ok_or_else(|| de::Error::custom("missing page type `lsb`"))?;
                Ok(PageTypeLatency::ByType { lsb, csb, msb, tsb })
            }
        }
        deserializer.deserialize_any(V)
    }
}
