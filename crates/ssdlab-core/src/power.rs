//! Power and energy per component (Amber reports them; MQSim does not).
//!
//! Energy is computed after the run from what the device did, so the model costs the hot path
//! nothing but a few counters: NAND cells busy reading, programming and erasing (datasheet-style
//! supply currents times busy time), bytes on the flash channels, the data cache's DRAM busy
//! and idle time (IDD-style currents, refresh averaged), the controller cores (idle power plus
//! active power while dispatching firmware work) and bytes over the PCIe link (energy per bit
//! plus link idle power). Defaults are typical datasheet values, each documented where it is
//! declared; `docs/power.md` gives the sources and the limits.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::ConfigError;

/// `[power]`: the energy model's parameters. Off unless `enabled`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct PowerConfig {
    /// Report energy and power in results.json (`energy`). Default false.
    pub enabled: bool,
    /// NAND core supply (VCC), volts. Default 3.3 (ONFI parts).
    pub nand_vcc_volts: f64,
    /// Supply current while a die reads its cells (ICC1), mA. Default 25 (typical datasheet).
    pub nand_read_ma: f64,
    /// Supply current while a die programs (ICC2), mA. Default 25.
    pub nand_program_ma: f64,
    /// Supply current while a die erases (ICC3), mA. Default 25.
    pub nand_erase_ma: f64,
    /// NAND I/O supply (VCCQ), volts. Default 1.8 (NV-DDR2).
    pub nand_io_volts: f64,
    /// I/O current while data or commands cross a channel (ICCQ), mA. Default 20.
    pub nand_io_ma: f64,
    /// Standby current of each die (ISB), uA. Default 50.
    pub nand_standby_ua: f64,
    /// DRAM supply, volts. Default 1.2 (DDR4).
    pub dram_volts: f64,
    /// DRAM devices making up the internal DRAM. Default 4.
    pub dram_devices: u32,
    /// Current per device while the cache's DRAM is busy (IDD4R/IDD4W-like), mA. Default 130.
    pub dram_active_ma: f64,
    /// Current per device when idle with banks open or precharged (IDD3N/IDD2N-like), mA.
    /// Default 45 (power-down states are not modelled: the DRAM never enters them).
    pub dram_standby_ma: f64,
    /// Refresh current per device averaged over the refresh interval (IDD5B x tRFC / tREFI), mA.
    /// Default 10.
    pub dram_refresh_ma: f64,
    /// With `dram.model = "banked"` the DRAM is charged from the IDD currents below (per device,
    /// defaults: an 8 Gb x16 DDR4-2400 part, Micron MT40A512M16, from its 4-device module's IDD
    /// table) times the state residency and operations the model counts, instead of the three
    /// currents above. One bank activate-precharge current (IDD0), mA. Default 80.
    pub dram_idd0_ma: f64,
    /// Precharge standby current, all banks closed (IDD2N), mA. Default 34.
    pub dram_idd2n_ma: f64,
    /// Precharge power-down current (IDD2P), mA. Default 25.
    pub dram_idd2p_ma: f64,
    /// Active standby current, a row open (IDD3N), mA. Default 47.
    pub dram_idd3n_ma: f64,
    /// Burst read current (IDD4R), mA. Default 243.
    pub dram_idd4r_ma: f64,
    /// Burst write current (IDD4W), mA. Default 228.
    pub dram_idd4w_ma: f64,
    /// Burst refresh current during tRFC (IDD5B), mA. Default 280.
    pub dram_idd5b_ma: f64,
    /// Self-refresh current (IDD6N, 0-85 C), mA. Default 30.
    pub dram_idd6_ma: f64,
    /// Controller cores. Default 3 (Amber's default).
    pub cpu_cores: u32,
    /// Power of one core while it runs firmware, watts. Default 0.4.
    pub cpu_active_watts: f64,
    /// Power of one idle core (clocked, waiting), watts. Default 0.1.
    pub cpu_idle_watts: f64,
    /// Dynamic energy of one instruction, nanojoules, charged when the firmware model is on
    /// (`[firmware] enabled`; its `cores` then replace `cpu_cores`). Default 0.75: a Cortex-R
    /// class core draws about 0.5 mW/MHz above idle and runs about 1.5 cycles per instruction.
    pub cpu_nj_per_instruction: f64,
    /// Link energy per bit moved over PCIe, picojoules. Default 5 (PCIe Gen3 SerDes).
    pub pcie_pj_per_bit: f64,
    /// Power of the link while up but idle (all lanes), watts. Default 0.2.
    pub pcie_idle_watts: f64,
}

impl Default for PowerConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            nand_vcc_volts: 3.3,
            nand_read_ma: 25.0,
            nand_program_ma: 25.0,
            nand_erase_ma: 25.0,
            nand_io_volts: 1.8,
            nand_io_ma: 20.0,
            nand_standby_ua: 50.0,
            dram_volts: 1.2,
            dram_devices: 4,
            dram_active_ma: 130.0,
            dram_standby_ma: 45.0,
            dram_refresh_ma: 10.0,
            dram_idd0_ma: 80.0,
            dram_idd2n_ma: 34.0,
            dram_idd2p_ma: 25.0,
            dram_idd3n_ma: 47.0,
            dram_idd4r_ma: 243.0,
            dram_idd4w_ma: 228.0,
            dram_idd5b_ma: 280.0,
            dram_idd6_ma: 30.0,
            cpu_cores: 3,
            cpu_active_watts: 0.4,
            cpu_idle_watts: 0.1,
            cpu_nj_per_instruction: 0.75,
            pcie_pj_per_bit: 5.0,
            pcie_idle_watts: 0.2,
        }
    }
}

impl PowerConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let values = [
            ("nand_vcc_volts", self.nand_vcc_volts),
            ("nand_read_ma", self.nand_read_ma),
            ("nand_program_ma", self.nand_program_ma),
            ("nand_erase_ma", self.nand_erase_ma),
            ("nand_io_volts", self.nand_io_volts),
            ("nand_io_ma", self.nand_io_ma),
            ("nand_standby_ua", self.nand_standby_ua),
            ("dram_volts", self.dram_volts),
            ("dram_active_ma", self.dram_active_ma),
            ("dram_standby_ma", self.dram_standby_ma),
            ("dram_refresh_ma", self.dram_refresh_ma),
            ("dram_idd0_ma", self.dram_idd0_ma),
            ("dram_idd2n_ma", self.dram_idd2n_ma),
            ("dram_idd2p_ma", self.dram_idd2p_ma),
            ("dram_idd3n_ma", self.dram_idd3n_ma),
            ("dram_idd4r_ma", self.dram_idd4r_ma),
            ("dram_idd4w_ma", self.dram_idd4w_ma),
            ("dram_idd5b_ma", self.dram_idd5b_ma),
            ("dram_idd6_ma", self.dram_idd6_ma),
            ("cpu_active_watts", self.cpu_active_watts),
            ("cpu_idle_watts", self.cpu_idle_watts),
            ("cpu_nj_per_instruction", self.cpu_nj_per_instruction),
            ("pcie_pj_per_bit", self.pcie_pj_per_bit),
            ("pcie_idle_watts", self.pcie_idle_watts),
        ];
        for (field, value) in values {
            if !value.is_finite() || value < 0.0 {
                return Err(ConfigError::new(
                    format!("power.{field}"),
                    format!("must be a non-negative number, got {value}"),
                ));
            }
        }
        if self.cpu_cores == 0 {
            return Err(ConfigError::new("power.cpu_cores", "must be at least 1"));
        }
        self.validate_dram_currents()?;
        if self.cpu_active_watts < self.cpu_idle_watts {
            return Err(ConfigError::new("power.cpu_active_watts", "must be at least power.cpu_idle_watts"));
        }
        Ok(())
    }
}

/// What the device did, as the energy model needs it (seconds and bytes).
#[derive(Clone, Copy, Debug, Default)]
pub struct Activity {
    pub seconds: f64,
    /// Die-seconds of cell reads, programs and erases (a multi-plane command counts per plane).
    pub read_cell_seconds: f64,
    pub program_cell_seconds: f64,
    pub erase_cell_seconds: f64,
    /// Channel-seconds of commands and data on the flash channels.
    pub channel_busy_seconds: f64,
    pub dies: u32,
    pub dram_busy_seconds: f64,
    /// DRAM energy of the banked model (IDD currents x residency), replacing the busy/idle
    /// estimate when set.
    pub dram_joules: Option<f64>,
    /// Core-seconds the controller spent dispatching firmware work.
    pub cpu_busy_seconds: f64,
    /// With the firmware model on: its cores and the instructions they executed (CPU energy is
    /// then idle power plus energy per instruction).
    pub firmware: Option<(u32, u64)>,
    pub pcie_bytes: u64,
    pub requests: u64,
}

/// results.json `energy`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct EnergySummary {
    pub total_joules: f64,
    pub average_watts: f64,
    pub by_component: ComponentJoules,
    /// Total energy divided by the requests completed, microjoules.
    pub energy_per_request_uj: f64,
    /// Average power per `time_series` window, watts (NAND, channel and PCIe activity per
    /// window estimated from the window's pages read, programmed and erased and bytes moved;
    /// static power spread evenly).
    pub power_over_time: PowerSeries,
    /// DRAM joules by state and operation (only with `dram.model = "banked"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_breakdown_joules: Option<crate::dram::DramJoules>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ComponentJoules {
    pub nand: f64,
    pub dram: f64,
    pub cpu: f64,
    pub pcie: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PowerSeries {
    pub start_seconds: Vec<f64>,
    pub watts: Vec<f64>,
}

impl PowerConfig {
    /// Joules per component over the whole run.
    pub fn energy(&self, a: &Activity) -> ComponentJoules {
        let nand_dynamic = self.nand_vcc_volts
            * (self.nand_read_ma * a.read_cell_seconds
                + self.nand_program_ma * a.program_cell_seconds
                + self.nand_erase_ma * a.erase_cell_seconds)
            / 1e3;
        let nand_io = self.nand_io_volts * self.nand_io_ma / 1e3 * a.channel_busy_seconds;
        let nand_standby = self.nand_vcc_volts * self.nand_standby_ua / 1e6 * a.dies as f64 * a.seconds;
        let idle = (a.seconds - a.dram_busy_seconds).max(0.0);
        let dram = a.dram_joules.unwrap_or(
            self.dram_volts
                * self.dram_devices as f64
                * (self.dram_active_ma * a.dram_busy_seconds
                    + self.dram_standby_ma * idle
                    + self.dram_refresh_ma * a.seconds)
                / 1e3,
        );
        let cpu = match a.firmware {
            Some((cores, instructions)) => {
                cores as f64 * self.cpu_idle_watts * a.seconds
                    + instructions as f64 * self.cpu_nj_per_instruction * 1e-9
            }
            None => {
                self.cpu_cores as f64 * self.cpu_idle_watts * a.seconds
                    + (self.cpu_active_watts - self.cpu_idle_watts) * a.cpu_busy_seconds
            }
        };
        let pcie = a.pcie_bytes as f64 * 8.0 * self.pcie_pj_per_bit * 1e-12 + self.pcie_idle_watts * a.seconds;
        ComponentJoules { nand: nand_dynamic + nand_io + nand_standby, dram, cpu, pcie }
    }

    /// Power the device draws doing nothing (standby NAND, idle DRAM with refresh, idle cores,
    /// idle link), watts. `cpu_cores` is `firmware.cores` when the firmware model is on.
    pub fn static_watts(&self, dies: u32, cpu_cores: u32) -> f64 {
        self.nand_vcc_volts * self.nand_standby_ua / 1e6 * dies as f64
            + self.dram_volts * self.dram_devices as f64 * (self.dram_standby_ma + self.dram_refresh_ma) / 1e3
            + cpu_cores as f64 * self.cpu_idle_watts
            + self.pcie_idle_watts
    }
}

/// Per-window activity the power series is estimated from.
pub struct WindowActivity<'a> {
    pub start_seconds: &'a [f64],
    pub duration_seconds: &'a [f64],
    /// Flash pages read (host reads plus GC moves), programmed and blocks erased per window.
    pub pages_read: Vec<f64>,
    pub pages_programmed: &'a [u64],
    pub blocks_erased: &'a [u64],
    pub host_bytes: Vec<f64>,
}

/// Mean energy of one operation of each kind, from the run's totals, and how the windows' counts
/// turn into power.
pub struct PerOperation {
    pub read_joules: f64,
    pub program_joules: f64,
    pub erase_joules: f64,
    pub host_byte_joules: f64,
    pub static_watts: f64,
}

impl PerOperation {
    pub fn series(&self, w: &WindowActivity) -> PowerSeries {
        let watts = (0..w.start_seconds.len())
            .map(|i| {
                let d = w.duration_seconds[i].max(f64::MIN_POSITIVE);
                let dynamic = w.pages_read[i] * self.read_joules
                    + w.pages_programmed[i] as f64 * self.program_joules
                    + w.blocks_erased[i] as f64 * self.erase_joules
                    + w.host_bytes[i] * self.host_byte_joules;
                self.static_watts + dynamic / d
            })
            .collect();
        PowerSeries { start_seconds: w.start_seconds.to_vec(), watts }
    }
}
