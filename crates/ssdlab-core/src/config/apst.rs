//! `[power.apst]`: NVMe autonomous power state transitions (NVMe 1.4, 8.4.2). After the host has
//! left the device idle (no command outstanding) for a while, the controller moves itself to a
//! non-operational power state that draws a fraction of its idle power; the first command after
//! that waits for the state's exit latency (after its entry latency, if the entry was still under
//! way). Drives publish each state's maximum power and entry and exit latencies in their Identify
//! Controller power state descriptors; the host chooses the idle times.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::units::Duration;
use super::ConfigError;

/// The model is off by default: the device stays in its operational state.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ApstConfig {
    /// Let the device enter the non-operational states below when idle. Default false. Only for
    /// NVMe and Open-Channel hosts (APST is an NVMe feature).
    pub enabled: bool,
    /// The non-operational states, shallowest first, each entered once the device has been idle
    /// for its `after_idle`. Default: two states of the order consumer NVMe drives publish (70 mW
    /// with 210 us entry and 1.2 ms exit latency; 5 mW with 2 ms and 8 ms), entered after
    /// 100 ms and 2 s, Linux's default primary and secondary APST timeouts
    /// (`nvme_core.apst_primary_timeout_ms`, `apst_secondary_timeout_ms`).
    pub states: Vec<PowerState>,
}

/// One non-operational power state.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PowerState {
    /// The state's name in the results (e.g. "PS3").
    pub name: String,
    /// Power the whole device draws in the state, watts (the descriptor's maximum power).
    pub watts: f64,
    /// Time the device takes to enter the state (ENLAT).
    pub entry_latency: Duration,
    /// Time the device takes to return to its operational state (EXLAT): the first command
    /// after idle waits for it.
    pub exit_latency: Duration,
    /// Idle time (since the last command completed) after which the device enters the state.
    pub after_idle: Duration,
}

impl Default for ApstConfig {
    fn default() -> Self {
        let state = |name: &str, watts, entry, exit, after| PowerState {
            name: name.to_string(),
            watts,
            entry_latency: Duration::lit(entry),
            exit_latency: Duration::lit(exit),
            after_idle: Duration::lit(after),
        };
        Self {
            enabled: false,
            states: vec![state("PS3", 0.07, "210us", "1200us", "100ms"), state("PS4", 0.005, "2ms", "8ms", "2s")],
        }
    }
}

impl ApstConfig {
    pub fn validate(&self, nvme: bool) -> Result<(), ConfigError> {
        if !self.enabled {
            return Ok(());
        }
        if !nvme {
            return Err(ConfigError::new(
                "power.apst.enabled",
                "autonomous power state transitions are an NVMe feature: set host.interface = \"nvme\" or \"open_channel\"",
            ));
        }
        if self.states.is_empty() {
            return Err(ConfigError::new("power.apst.states", "name at least one non-operational state"));
        }
        let mut previous: Option<&PowerState> = None;
        for (i, s) in self.states.iter().enumerate() {
            let path = |field: &str| format!("power.apst.states[{i}].{field}");
            if !s.watts.is_finite() || s.watts < 0.0 {
                return Err(ConfigError::new(path("watts"), format!("must be a non-negative number, got {}", s.watts)));
            }
            if s.after_idle.value == 0 {
                return Err(ConfigError::new(path("after_idle"), "must be longer than 0"));
            }
            if let Some(p) = previous {
                if s.after_idle.value < p.after_idle.value + p.entry_latency.value {
                    return Err(ConfigError::new(
                        path("after_idle"),
                        format!(
                            "\"{}\" comes before state {} (\"{}\") has been entered ({} + its entry latency {}): list the states shallowest first",
                            s.after_idle.text, p.name, p.after_idle.text, p.after_idle.text, p.entry_latency.text
                        ),
                    ));
                }
            }
            previous = Some(s);
        }
        Ok(())
    }
}
