//! `[controller.flin]`: the parameters of FLIN (`controller.scheduling = "flin"`), its flow
//! classification and fairness threshold (see `crate::ftl::tsu::flin`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::units::{Duration, Size};
use super::ConfigError;

/// See [`ControllerConfig::flin`] and `ftl/tsu/flin.rs`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FlinConfig {
    /// How often flows are classified by intensity (default "10ms").
    pub epoch: Duration,
    /// Bytes per second of reads above which a flow is high-intensity (default "32MiB").
    pub alpha_read: Size,
    /// Bytes per second of writes above which a flow is high-intensity (default "256KiB").
    pub alpha_write: Size,
    /// Fairness (min / max of the flows' average slowdowns in a queue) below which the most
    /// slowed-down flow's new transaction moves forward (default 0.6).
    pub fairness_threshold: f64,
}

impl Default for FlinConfig {
    fn default() -> Self {
        Self {
            epoch: Duration::lit("10ms"),
            alpha_read: Size::lit("32MiB"),
            alpha_write: Size::lit("256KiB"),
            fairness_threshold: 0.6,
        }
    }
}

/// `[controller.flin]` goes with `scheduling = "flin"`; its epoch and alphas are positive and
/// its threshold a fraction.
pub(super) fn validate(controller: &super::ControllerConfig) -> Result<(), ConfigError> {
    let Some(f) = &controller.flin else { return Ok(()) };
    if controller.scheduling != super::Scheduling::Flin {
        return Err(ConfigError::new("controller.flin", "applies to controller.scheduling = \"flin\" only"));
    }
    if f.epoch.value == 0 {
        return Err(ConfigError::new("controller.flin.epoch", "must be greater than zero"));
    }
    for (key, size) in [("alpha_read", &f.alpha_read), ("alpha_write", &f.alpha_write)] {
        if size.value == 0 {
            return Err(ConfigError::new(
                format!("controller.flin.{key}"),
                "must be greater than zero (bytes per second)",
            ));
        }
    }
    if !(f.fairness_threshold > 0.0 && f.fairness_threshold <= 1.0) {
        return Err(ConfigError::new(
            "controller.flin.fairness_threshold",
            format!("must be above 0 and at most 1, got {}", f.fairness_threshold),
        ));
    }
    Ok(())
}
