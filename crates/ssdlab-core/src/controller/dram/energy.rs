//! DRAM energy of the banked model from IDD currents, the way DRAM vendors' power calculators
//! do it (Micron TN-40-07 for DDR4): background current times the time in each state, plus, for
//! each operation, the current it draws above the active-standby background times its duration.
//!
//! Per device, at VDD = `power.dram_volts`:
//! - background: IDD3N while an access is in progress or a row is open, IDD2N while precharged,
//!   IDD2P in power-down, IDD6 in self-refresh;
//! - each activate-precharge pair: IDD0 x tRC - (IDD3N x tRAS + IDD2N x tRP), with tRC = tRAS + tRP
//!   (IDD0 is measured cycling one bank at tRC; the background part is charged above);
//! - read / write data: (IDD4R / IDD4W - IDD3N) x time on the bus;
//! - each refresh: (IDD5B - IDD3N) x tRFC.
//!
//! A rank's `power.dram_devices / ranks` devices all take part in its operations and states.

use serde::{Deserialize, Serialize};

use super::BankedDram;
use crate::power::PowerConfig;
use crate::time::{ps_to_seconds, SimTime};

/// results.json `energy.dram_breakdown_joules`: the banked DRAM's energy by state and operation.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DramJoules {
    /// Background of ranks with an access in progress (IDD3N).
    pub active: f64,
    /// Background of idle ranks with a row open (IDD3N).
    pub active_standby: f64,
    /// Background of idle ranks with every bank precharged (IDD2N).
    pub precharge_standby: f64,
    /// Precharge power-down (IDD2P).
    pub power_down: f64,
    /// Self-refresh (IDD6).
    pub self_refresh: f64,
    /// Activate-precharge pairs (IDD0 above the background).
    pub activate: f64,
    /// Read and write bursts (IDD4R / IDD4W above IDD3N).
    pub read: f64,
    pub write: f64,
    /// Refresh commands (IDD5B above IDD3N during tRFC).
    pub refresh: f64,
}

impl DramJoules {
    pub fn total(&self) -> f64 {
        self.active
            + self.active_standby
            + self.precharge_standby
            + self.power_down
            + self.self_refresh
            + self.activate
            + self.read
            + self.write
            + self.refresh
    }
}

impl PowerConfig {
    /// The banked DRAM's energy over a run that ended at `end`.
    pub fn banked_dram_energy(&self, d: &BankedDram, end: SimTime) -> DramJoules {
        let devices_per_rank = self.dram_devices as f64 / d.ranks() as f64;
        // Joules of `ma` milliamps drawn for `seconds` by the devices of one rank.
        let joules = |ma: f64, seconds: f64| self.dram_volts * ma / 1e3 * seconds * devices_per_rank;
        let r = d.residency(end);
        let c = d.counts;
        let (t_rc, t_ras) = (ps_to_seconds(d.t_rc_ps()), ps_to_seconds(d.t_ras_ps()));
        let activate_ma_s =
            (self.dram_idd0_ma * t_rc - (self.dram_idd3n_ma * t_ras + self.dram_idd2n_ma * (t_rc - t_ras))).max(0.0);
        DramJoules {
            active: joules(self.dram_idd3n_ma, ps_to_seconds(r.active_ps)),
            active_standby: joules(self.dram_idd3n_ma, ps_to_seconds(r.active_standby_ps)),
            precharge_standby: joules(self.dram_idd2n_ma, ps_to_seconds(r.precharge_standby_ps)),
            power_down: joules(self.dram_idd2p_ma, ps_to_seconds(r.power_down_ps)),
            self_refresh: joules(self.dram_idd6_ma, ps_to_seconds(r.self_refresh_ps)),
            activate: joules(activate_ma_s, c.activates as f64),
            read: joules(self.dram_idd4r_ma - self.dram_idd3n_ma, ps_to_seconds(c.read_burst_ps)),
            write: joules(self.dram_idd4w_ma - self.dram_idd3n_ma, ps_to_seconds(c.write_burst_ps)),
            refresh: joules(
                self.dram_idd5b_ma - self.dram_idd3n_ma,
                ps_to_seconds(d.t_rfc_ps()) * d.refreshes(end) as f64,
            ),
        }
    }

    /// The serial model's idle DRAM power (standby and averaged refresh), watts: what the power
    /// series counts as static DRAM power, and what the banked model's mean power replaces.
    pub fn serial_dram_static_watts(&self) -> f64 {
        self.dram_volts * self.dram_devices as f64 * (self.dram_standby_ma + self.dram_refresh_ma) / 1e3
    }
}
