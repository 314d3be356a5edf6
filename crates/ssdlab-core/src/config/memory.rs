//! `run.memory_limit`: how much memory a run may need before it is refused.
//!
//! The simulation estimates what a configuration needs before it allocates anything
//! (`sim/memory.rs`) and refuses it above this limit with the estimate in the message, instead of
//! letting the operating system kill the process or the allocator abort it (issue 12, F09, F10).

use schemars::JsonSchema;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

use super::{ConfigError, RunConfig, Size};

/// Used when the machine's memory cannot be read (no `/proc/meminfo`).
pub const FALLBACK_LIMIT_BYTES: u64 = 8 << 30;

/// The default limit is this share of the machine's physical memory (or of the control group's
/// limit, if lower): enough for any run the machine can hold, while leaving the rest to the
/// operating system and the Python process around the model.
pub const DEFAULT_SHARE: f64 = 0.75;

/// A size, or `"unlimited"` to run whatever the estimate says.
#[derive(Clone, Debug, PartialEq)]
pub enum MemoryLimit {
    Bytes(Size),
    Unlimited,
}

impl MemoryLimit {
    /// The limit in bytes (`None` when unlimited).
    pub fn bytes(&self) -> Option<u64> {
        match self {
            MemoryLimit::Bytes(size) => Some(size.value),
            MemoryLimit::Unlimited => None,
        }
    }
}

/// The limit that applies when `run.memory_limit` is not given, and how it was found.
pub fn default_limit() -> (u64, &'static str) {
    match physical_memory_bytes() {
        Some(total) => ((total as f64 * DEFAULT_SHARE) as u64, "the default, 3/4 of this machine's memory"),
        None => (FALLBACK_LIMIT_BYTES, "the default where the machine's memory is unknown"),
    }
}

/// `MemTotal` of `/proc/meminfo`, lowered to the control group's `memory.max` when that is set.
fn physical_memory_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 =
        meminfo.lines().find_map(|l| l.strip_prefix("MemTotal:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    let total = kib.checked_mul(1024)?;
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok().and_then(|t| t.trim().parse::<u64>().ok());
    Some(cgroup.map_or(total, |c| c.min(total)))
}

pub(super) fn validate_limit(run: &RunConfig) -> Result<(), ConfigError> {
    if let Some(MemoryLimit::Bytes(size)) = &run.memory_limit {
        if size.value == 0 {
            return Err(ConfigError::new(
                "run.memory_limit",
                "must be greater than zero (or \"unlimited\" to run whatever the estimate says)",
            ));
        }
    }
    Ok(())
}

const EXPECTED: &str = "a size like \"16GiB\" or \"unlimited\"";

impl Serialize for MemoryLimit {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MemoryLimit::Bytes(size) => size.serialize(serializer),
            MemoryLimit::Unlimited => serializer.serialize_str("unlimited"),
        }
    }
}

impl<'de> Deserialize<'de> for MemoryLimit {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MemoryLimit;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MemoryLimit, E> {
                if v.trim().eq_ignore_ascii_case("unlimited") {
                    return Ok(MemoryLimit::Unlimited);
                }
                Size::parse(v).map(MemoryLimit::Bytes).map_err(|e| E::custom(format!("{e}, or \"unlimited\"")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<MemoryLimit, E> {
                Err(E::custom(format!("expected {EXPECTED}, got the bare number {v} (add a unit)")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<MemoryLimit, E> {
                Err(E::custom(format!("expected {EXPECTED}, got the bare number {v} (add a unit)")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<MemoryLimit, E> {
                Err(E::custom(format!("expected {EXPECTED}, got the bare number {v} (add a unit)")))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl JsonSchema for MemoryLimit {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "MemoryLimit".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "format": "memory-limit",
            "description": "expected a size string like \"16GiB\" or \"unlimited\"; units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, or unlimited",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_unlimited_parse() {
        let parse = |t: &str| serde_json::from_str::<MemoryLimit>(t);
        assert_eq!(parse("\"2GiB\"").unwrap().bytes(), Some(2 << 30));
        assert_eq!(parse("\"unlimited\"").unwrap(), MemoryLimit::Unlimited);
        let err = parse("\"lots\"").unwrap_err().to_string();
        assert!(err.contains("expected a size") && err.contains("unlimited"), "{err}");
        assert!(parse("8").unwrap_err().to_string().contains("add a unit"));
    }

    #[test]
    fn the_default_is_positive() {
        let (bytes, why) = default_limit();
        assert!(bytes > 0, "{why}");
    }
}
