//! `[precondition]`: the device state a run starts from (see `crate::precondition` and
//! docs/steady-state.md). Written either as a table or as the mode alone.

use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// The device state when the run starts. Written either as a table or as the mode alone
/// (`precondition = "steady"`).
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreconditionConfig {
    /// How the device reaches its starting state (default `steady`).
    pub mode: PreconditionMode,
    /// Fraction of the logical space that holds data at the start, from logical page 0
    /// (`fill`, `steady` and `simulate`; with `steady` and `simulate` every page the flows can
    /// address holds data as well).
    pub occupancy: f64,
    /// Where `fill` places the initial data (default `packed`; only for mode `fill`).
    pub layout: Option<FillLayout>,
    /// Host writes, in multiples of the data held, that `steady` ages its sample plane with and
    /// `simulate` writes through the model before the run (default 4).
    pub drive_writes: Option<f64>,
    /// Whether `steady` warms the cached mapping table and the data cache from the workload's
    /// addresses (default true).
    pub warm_caches: Option<bool>,
}

impl Default for PreconditionConfig {
    fn default() -> Self {
        Self { mode: PreconditionMode::Steady, occupancy: 0.0, layout: None, drive_writes: None, warm_caches: None }
    }
}

/// Default of `precondition.drive_writes`.
pub const DEFAULT_DRIVE_WRITES: f64 = 4.0;

impl PreconditionConfig {
    pub fn drive_writes(&self) -> f64 {
        self.drive_writes.unwrap_or(DEFAULT_DRIVE_WRITES)
    }
}

impl<'de> Deserialize<'de> for PreconditionConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(default, deny_unknown_fields)]
        struct Table {
            mode: PreconditionMode,
            occupancy: f64,
            layout: Option<FillLayout>,
            drive_writes: Option<f64>,
            warm_caches: Option<bool>,
        }
        impl Default for Table {
            fn default() -> Self {
                let d = PreconditionConfig::default();
                Self {
                    mode: d.mode,
                    occupancy: d.occupancy,
                    layout: d.layout,
                    drive_writes: d.drive_writes,
                    warm_caches: d.warm_caches,
                }
            }
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PreconditionConfig;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mode (\"steady\", \"fill\", \"none\" or \"simulate\") or a table")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                let mode = PreconditionMode::deserialize(de::value::StrDeserializer::<E>::new(v))?;
                Ok(PreconditionConfig { mode, ..Default::default() })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let t = Table::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(PreconditionConfig {
                    mode: t.mode,
                    occupancy: t.occupancy,
                    layout: t.layout,
                    drive_writes: t.drive_writes,
                    warm_caches: t.warm_caches,
                })
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// How the device reaches its starting state.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PreconditionMode {
    /// Steady state without simulating the writes: a sample plane is aged by the workload's
    /// write-address distribution under the configured GC policy, and every plane takes its
    /// state (data placement, valid pages per block, erase counts, free blocks at the GC
    /// threshold); the caches are warmed from the workload.
    #[default]
    Steady,
    /// Logical pages `0..occupancy` mapped directly, laid out by `layout` (a fresh or an evenly
    /// aged drive).
    Fill,
    /// An empty drive.
    None,
    /// The workload's write stream written through the timed model, `drive_writes` times the
    /// data held, before the run (slow; the ground truth `steady` is validated against).
    Simulate,
}

/// Where the initial data is placed.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FillLayout {
    /// Valid data in the fewest blocks, every other block erased: a freshly filled drive.
    Packed,
    /// Valid data spread evenly over all blocks but the GC threshold's worth, the rest of each
    /// block invalid: an aged drive on which GC starts with the first writes.
    Spread,
}
