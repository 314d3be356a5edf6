//! `[dram]`: the controller's internal DRAM (see `crate::dram` and docs/dram.md).
//!
//! By default (`model = "serial"`) the DRAM is MQSim's: one device that serves the data cache's
//! accesses one at a time, each opening its rows. `model = "banked"` turns on the detailed model
//! (channels, ranks, banks with open rows, refresh, power-down and self-refresh), which the data
//! cache, the cached mapping table and the flash data buffers all use. Row size, bus rate and
//! tRCD / tCL / tRP stay where MQSim has them (`cache.dram_row_size`, `cache.dram_data_rate`,
//! `cache.dram_burst_bytes`, `cache.dram_trcd`, `cache.dram_tcl`, `cache.dram_trp`), so one
//! DRAM is described in one place whichever model times it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CacheConfig, ConfigError, Duration, Size};

/// The internal DRAM's timing model and organisation.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct DramConfig {
    /// `serial` (default): MQSim's model, one DRAM used by the data cache only, every access
    /// opening its rows; kept as the default so results compare with MQSim. `banked`: channels,
    /// ranks and banks with open rows, refresh and low-power states, used by the data cache, the
    /// CMT (a lookup reads its entry) and the flash data buffers (page data passes through DRAM).
    pub model: DramModel,
    /// How the `serial` model times an access: `per-row` (each row it touches pays precharge
    /// and activate, then the data streams at the bus rate) or `mqsim` (MQSim's
    /// `estimate_dram_access_time`, Data_Cache_Manager_Base.h @7ec40e3, whose integer
    /// arithmetic charges an access longer than a row for half of its whole rows and next to
    /// nothing for a partial last row: a 64 KiB access of 8 KiB rows costs half of what
    /// `per-row` charges). Unset: `per-row`, or `mqsim` under `compat = "mqsim"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial_access_time: Option<SerialAccessTime>,
    /// Independent DRAM channels, each with its own data bus (`banked` only). Default 1: SSD
    /// controllers have one 32- or 64-bit DRAM interface.
    pub channels: u32,
    /// Ranks per channel (`banked` only). Default 1: a few x16 devices side by side form one rank.
    pub ranks_per_channel: u32,
    /// Banks per rank (`banked` only). Default 8: a DDR4 x16 device has 2 bank groups of 4 banks.
    pub banks_per_rank: u32,
    /// `open-page` (default: a row stays open after an access, so the next access to it skips
    /// the activate; the policy that suits the sequential page-sized accesses of an SSD) or
    /// `close-page` (every access precharges its row when done, so the next one never waits for
    /// a precharge but always activates).
    pub page_policy: PagePolicy,
    /// Bytes of consecutive addresses on one bank before the next channel, then bank, then rank
    /// takes over (row-interleaved when equal to the row). Must divide `cache.dram_row_size`.
    /// Default: the row size, so a page-sized buffer stays in one row.
    pub interleave: Option<Size>,
    /// Minimum time from activate to precharge of a bank (tRAS). Default 32ns (DDR4-2400).
    pub tras: Duration,
    /// Write recovery: from the end of write data to a precharge of the same bank (tWR).
    /// Default 15ns (DDR4).
    pub twr: Duration,
    /// Average refresh interval (tREFI): every rank refreshes once per interval. Default 7.8us
    /// (DDR4 below 85 C).
    pub trefi: Duration,
    /// Refresh cycle time (tRFC): the rank's banks are unavailable for this long per refresh, and
    /// refresh closes their rows. Default 350ns (8 Gb DDR4).
    pub trfc: Duration,
    /// Whether an idle rank enters precharge power-down (all rows closed, clock enable low) after
    /// `powerdown_after`. Default true: memory controllers do this by default.
    pub power_down: bool,
    /// Idle time before a rank powers down. Default 1us: exit costs only tXP, so controllers
    /// power down after a short idle time.
    pub powerdown_after: Duration,
    /// Exit latency of power-down added to the next access (tXP). Default 6ns (DDR4).
    pub txp: Duration,
    /// Whether a long-idle rank enters self-refresh after `self_refresh_after`. Default true.
    pub self_refresh: bool,
    /// Idle time before a rank enters self-refresh. Default 1ms: exit is slow (tXS), so it is
    /// kept for an idle device, as SSDs do in their idle power states.
    pub self_refresh_after: Duration,
    /// Exit latency of self-refresh added to the next access (tXS). Default 360ns (DDR4: tRFC
    /// + 10 ns).
    pub txs: Duration,
}

impl Default for DramConfig {
    fn default() -> Self {
        Self {
            model: DramModel::Serial,
            serial_access_time: None,
            channels: 1,
            ranks_per_channel: 1,
            banks_per_rank: 8,
            page_policy: PagePolicy::OpenPage,
            interleave: None,
            tras: Duration::lit("32ns"),
            twr: Duration::lit("15ns"),
            trefi: Duration::lit("7.8us"),
            trfc: Duration::lit("350ns"),
            power_down: true,
            powerdown_after: Duration::lit("1us"),
            txp: Duration::lit("6ns"),
            self_refresh: true,
            self_refresh_after: Duration::lit("1ms"),
            txs: Duration::lit("360ns"),
        }
    }
}

/// Which DRAM timing model runs.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DramModel {
    /// MQSim's: one DRAM, accesses in arrival order, each pays precharge + activate per row.
    #[default]
    Serial,
    /// Channels, ranks and banks with row buffers, refresh and low-power states.
    Banked,
}

/// See [`DramConfig::serial_access_time`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SerialAccessTime {
    #[default]
    PerRow,
    Mqsim,
}

/// What a bank does with its row after an access.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PagePolicy {
    /// Leave the row open: a later access to it is a row hit.
    #[default]
    OpenPage,
    /// Precharge right after the access (auto-precharge).
    ClosePage,
}

impl DramConfig {
    /// Total banks of the banked model (saturating: three 32-bit counts may exceed 64 bits, and a
    /// wrapped product must not pass the bank limit).
    pub fn total_banks(&self) -> u64 {
        (self.channels as u64 * self.ranks_per_channel as u64).saturating_mul(self.banks_per_rank as u64)
    }

    /// Bytes per interleaving unit.
    pub fn interleave_bytes(&self, cache: &CacheConfig) -> u64 {
        self.interleave.as_ref().map_or(cache.dram_row_size.value, |s| s.value)
    }

    /// Checks the section (the banked model's values only matter when it is selected, but are
    /// checked always, so a typo is caught before someone switches the model on).
    pub fn validate(&self, cache: &CacheConfig) -> Result<(), ConfigError> {
        for (field, value) in [
            ("channels", self.channels),
            ("ranks_per_channel", self.ranks_per_channel),
            ("banks_per_rank", self.banks_per_rank),
        ] {
            if value == 0 {
                return Err(ConfigError::new(format!("dram.{field}"), "must be at least 1, got 0"));
            }
        }
        if self.total_banks() > 4096 {
            return Err(ConfigError::new(
                "dram.banks_per_rank",
                format!(
                    "at most 4096 banks in all are supported (channels x ranks_per_channel x banks_per_rank), got {}",
                    self.total_banks()
                ),
            ));
        }
        if self.model == DramModel::Banked && self.serial_access_time == Some(SerialAccessTime::Mqsim) {
            return Err(ConfigError::new(
                "dram.serial_access_time",
                "\"mqsim\" times the serial model's accesses; with dram.model = \"banked\" leave it unset",
            ));
        }
        if self.model == DramModel::Banked {
            if cache.dram_row_size.value == 0 {
                return Err(ConfigError::new("cache.dram_row_size", "must be greater than zero"));
            }
            if cache.dram_burst_bytes == 0 {
                return Err(ConfigError::new("cache.dram_burst_bytes", "must be at least 1, got 0"));
            }
        }
        let row = cache.dram_row_size.value;
        if let Some(i) = &self.interleave {
            if i.value == 0 || (row > 0 && !row.is_multiple_of(i.value)) {
                return Err(ConfigError::new(
                    "dram.interleave",
                    format!(
                        "must divide the row size (cache.dram_row_size = {row} B) into equal parts, got \"{}\" ({} B)",
                        i.text, i.value
                    ),
                ));
            }
        }
        if self.trefi.value <= self.trfc.value {
            return Err(ConfigError::new(
                "dram.trefi",
                format!(
                    "must be longer than dram.trfc (\"{}\"): a rank cannot refresh for longer than the refresh interval, got \"{}\"",
                    self.trfc.text, self.trefi.text
                ),
            ));
        }
        if self.power_down && self.powerdown_after.value == 0 {
            return Err(ConfigError::new(
                "dram.powerdown_after",
                "must be greater than zero (set dram.power_down = false to never power down)",
            ));
        }
        if self.self_refresh && self.self_refresh_after.value == 0 {
            return Err(ConfigError::new(
                "dram.self_refresh_after",
                "must be greater than zero (set dram.self_refresh = false to never self-refresh)",
            ));
        }
        if self.power_down && self.self_refresh && self.self_refresh_after.value <= self.powerdown_after.value {
            return Err(ConfigError::new(
                "dram.self_refresh_after",
                format!(
                    "must be longer than dram.powerdown_after (\"{}\"): self-refresh is the deeper state, entered after power-down, got \"{}\"",
                    self.powerdown_after.text, self.self_refresh_after.text
                ),
            ));
        }
        Ok(())
    }
}
