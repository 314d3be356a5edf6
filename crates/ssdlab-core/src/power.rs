//! Power and energy per component (Amber reports them; MQSim does not).
//!
//! Energy is computed after the run from what the device did, so the model costs the hot path
//! nothing but a few counters (the power series takes them per time-series window): NAND cells busy reading, programming and erasing (datasheet-style
//! supply currents times busy time), bytes on the flash channels, the data cache's DRAM busy
//! and idle time (IDD-style currents, refresh averaged), the controller cores (idle power plus
//! active power while dispatching firmware work) and bytes over the PCIe link (energy per bit
//! plus link idle power). Defaults are typical datasheet values, each documented where it is
//! declared; `docs/power.md` gives the sources and the limits.

use serde::{Deserialize, Serialize};

pub use crate::config::PowerConfig;

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
        self.static_parts(dies, cpu_cores).iter().sum()
    }

    /// [`Self::static_watts`] by component: NAND, DRAM, CPU, PCIe.
    pub fn static_parts(&self, dies: u32, cpu_cores: u32) -> [f64; 4] {
        [
            self.nand_vcc_volts * self.nand_standby_ua / 1e6 * dies as f64,
            self.dram_volts * self.dram_devices as f64 * (self.dram_standby_ma + self.dram_refresh_ma) / 1e3,
            cpu_cores as f64 * self.cpu_idle_watts,
            self.pcie_idle_watts,
        ]
    }
}

impl ComponentJoules {
    /// Charges `seconds` in a low-power state drawing `watts` instead of the static power
    /// `static_parts` (by component): each component's static draw shrinks in proportion.
    pub fn in_low_power(&mut self, seconds: f64, watts: f64, static_parts: [f64; 4]) {
        let total: f64 = static_parts.iter().sum();
        if total <= 0.0 {
            return;
        }
        let keep = watts / total;
        for (c, part) in [&mut self.nand, &mut self.dram, &mut self.cpu, &mut self.pcie].into_iter().zip(static_parts) {
            *c -= seconds * part * (1.0 - keep);
        }
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
    /// The controller's activity per window: DRAM and core busy seconds, instructions.
    pub dram_busy_seconds: &'a [f64],
    pub cpu_busy_seconds: &'a [f64],
    pub instructions: &'a [u64],
    /// Joules the window saved in low-power states (`[power.apst]`), below its static power.
    pub low_power_saving_joules: Vec<f64>,
}

/// Mean energy of one operation of each kind, from the run's totals, and how the windows' counts
/// turn into power.
pub struct PerOperation {
    pub read_joules: f64,
    pub program_joules: f64,
    pub erase_joules: f64,
    pub host_byte_joules: f64,
    /// Power above the static draw while the DRAM is busy, and while a core is busy (without
    /// the firmware model), watts; energy per instruction (with it), joules.
    pub dram_busy_watts: f64,
    pub cpu_busy_watts: f64,
    pub instruction_joules: f64,
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
                    + w.host_bytes[i] * self.host_byte_joules
                    + w.dram_busy_seconds.get(i).map_or(0.0, |s| s * self.dram_busy_watts)
                    + w.cpu_busy_seconds.get(i).map_or(0.0, |s| s * self.cpu_busy_watts)
                    + w.instructions.get(i).map_or(0.0, |&n| n as f64 * self.instruction_joules)
                    - w.low_power_saving_joules.get(i).copied().unwrap_or(0.0);
                self.static_watts + dynamic / d
            })
            .collect();
        PowerSeries { start_seconds: w.start_seconds.to_vec(), watts }
    }
}
