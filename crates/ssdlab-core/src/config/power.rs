//! `[power]`: the energy model's parameters (the model itself is `crate::power`, which
//! computes energy after the run from what the device did; docs/power.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ConfigError;

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
    /// NVMe autonomous power state transitions (off by default; see `config::apst`).
    pub apst: super::apst::ApstConfig,
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
            apst: Default::default(),
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

    /// The banked model charges IDD4R, IDD4W and IDD5B above IDD3N: none may be below it.
    fn validate_dram_currents(&self) -> Result<(), ConfigError> {
        for (field, value) in [
            ("dram_idd4r_ma", self.dram_idd4r_ma),
            ("dram_idd4w_ma", self.dram_idd4w_ma),
            ("dram_idd5b_ma", self.dram_idd5b_ma),
        ] {
            if value < self.dram_idd3n_ma {
                return Err(ConfigError::new(
                    format!("power.{field}"),
                    format!(
                        "must be at least power.dram_idd3n_ma ({}): it is charged above the active-standby current, got {value}",
                        self.dram_idd3n_ma
                    ),
                ));
            }
        }
        Ok(())
    }
}
