//! `[firmware]`: the controller's computation complex, as Amber models it. Firmware runs on a few
//! embedded cores; each step of a request's path (HIL, cache lookup, FTL translation, flash
//! interface dispatch, GC victim selection) executes a number of instructions of each class at a
//! cycles-per-instruction (CPI) of that class, on the core it is assigned to, queueing behind
//! whatever that core is already doing. See `crate::firmware` and docs/firmware.md.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::units::Frequency;
use super::ConfigError;

/// The firmware model. Off by default: the controller then charges the fixed
/// `controller.dispatch_*` times per transaction (MQSim's model).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FirmwareConfig {
    /// Run firmware steps on modelled cores and report `firmware` in results.json. When on, the
    /// `fil` step replaces `controller.dispatch_*`. Default false.
    pub enabled: bool,
    /// Embedded cores. Default 3: Amber's default, one each for the HIL, the cache layer (ICL)
    /// and the FTL with the flash interface.
    pub cores: u32,
    /// Core clock. Default "500MHz": the ARM Cortex-R class cores of NVMe controllers of the
    /// Intel 750's generation ran at 400-800 MHz.
    pub clock: Frequency,
    /// Cycles per instruction of each class.
    pub cpi: Cpi,
    /// Host interface layer, once per request: fetch and parse the command, build the PRP or
    /// scatter list, post the completion.
    pub hil: StepCost,
    /// Internal cache layer, once per page of a request whose flow uses the data cache: hash
    /// lookup, replacement-list update.
    pub cache: StepCost,
    /// FTL, once per page of a request: mapping lookup (the CMT), page allocation for writes.
    pub ftl: StepCost,
    /// Flash interface layer, once per flash transaction (host page, GC move, translation page,
    /// erase): build the command, program the channel controller. Replaces
    /// `controller.dispatch_*` when the model is on.
    pub fil: StepCost,
    /// GC, once per victim block: scan the plane's blocks for the victim, build the move list.
    pub gc: StepCost,
}

impl Default for FirmwareConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            cores: 3,
            clock: Frequency::lit("500MHz"),
            cpi: Cpi::default(),
            hil: StepCost::default(),
            cache: StepCost::default(),
            ftl: StepCost::default(),
            fil: StepCost::default(),
            gc: StepCost::default(),
        }
    }
}

/// Cycles per instruction of each class (a positive number; fractions allowed for superscalar
/// cores).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Cpi {
    /// Default 1.5: a taken branch costs an in-order core a few cycles of refill, about 1 in 4
    /// branches mispredicts.
    pub branch: f64,
    /// Default 2.0: tightly coupled memory answers in one cycle, firmware tables in DRAM take
    /// tens; most firmware data sits in TCM or the L1.
    pub load_store: f64,
    /// Default 1.0: single-issue integer pipeline.
    pub arithmetic: f64,
    /// Default 1.0: moves, system instructions and the rest.
    pub other: f64,
}

impl Default for Cpi {
    fn default() -> Self {
        Self { branch: 1.5, load_store: 2.0, arithmetic: 1.0, other: 1.0 }
    }
}

/// Instructions of each class one execution of a firmware step runs, and the core it runs on.
/// A key left out takes the step's default (see docs/firmware.md for each step's defaults).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct StepCost {
    /// Branch instructions.
    pub branch: Option<u64>,
    /// Loads and stores.
    pub load_store: Option<u64>,
    /// Integer arithmetic and logic.
    pub arithmetic: Option<u64>,
    /// Everything else.
    pub other: Option<u64>,
    /// The core (0-based) that runs the step.
    pub core: Option<u32>,
}

/// A firmware step; its declaration order indexes the per-step tables (`STEP_DEFAULTS`, the
/// latency breakdown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirmwareStep {
    Hil,
    Cache,
    Ftl,
    Fil,
    Gc,
}

impl FirmwareStep {
    pub const ALL: [FirmwareStep; 5] =
        [FirmwareStep::Hil, FirmwareStep::Cache, FirmwareStep::Ftl, FirmwareStep::Fil, FirmwareStep::Gc];

    pub fn name(self) -> &'static str {
        ["hil", "cache", "ftl", "fil", "gc"][self as usize]
    }
}

/// Instruction classes, in the order of [`ResolvedStep::instructions`].
pub const INSTRUCTION_CLASSES: [&str; 4] = ["branch", "load_store", "arithmetic", "other"];

/// A step's cost with every default filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolvedStep {
    /// Branch, load/store, arithmetic, other.
    pub instructions: [u64; 4],
    pub core: u32,
}

/// Defaults per step: (branch, load/store, arithmetic, other, core). Estimates of lean
/// firmware paths, sized so that the FTL core (translation + dispatch per 4 KiB page, about
/// 1.7 us at the defaults) sustains about 600 K pages/s, above the Intel 750's 440 K random-read
/// IOPS: firmware shows in the latency without being the bottleneck of the default device.
const STEP_DEFAULTS: [(u64, u64, u64, u64, u32); 5] = [
    // HIL: command parse, PRP walk, completion post.
    (120, 260, 180, 40, 0),
    // Cache: hash probe and LRU update.
    (40, 90, 50, 20, 1),
    // FTL: CMT probe, allocation.
    (60, 130, 90, 20, 2),
    // FIL: command build, channel controller registers.
    (50, 100, 80, 20, 2),
    // GC: victim scan over a plane's block table.
    (1200, 2000, 1200, 300, 2),
];

impl FirmwareConfig {
    fn step(&self, step: FirmwareStep) -> &StepCost {
        match step {
            FirmwareStep::Hil => &self.hil,
            FirmwareStep::Cache => &self.cache,
            FirmwareStep::Ftl => &self.ftl,
            FirmwareStep::Fil => &self.fil,
            FirmwareStep::Gc => &self.gc,
        }
    }

    /// The step's instructions and core, defaults filled in. With fewer than 3 cores the
    /// default assignment folds onto the last core there is: with 2 cores the HIL keeps core 0
    /// and everything else shares core 1, so the two still pipeline.
    pub fn resolved(&self, step: FirmwareStep) -> ResolvedStep {
        let (b, ls, a, o, core) = STEP_DEFAULTS[step as usize];
        let s = self.step(step);
        ResolvedStep {
            instructions: [
                s.branch.unwrap_or(b),
                s.load_store.unwrap_or(ls),
                s.arithmetic.unwrap_or(a),
                s.other.unwrap_or(o),
            ],
            core: s.core.unwrap_or(core.min(self.cores.max(1) - 1)),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.cores == 0 {
            return Err(ConfigError::new("firmware.cores", "must be at least 1"));
        }
        if self.cores > 64 {
            return Err(ConfigError::new(
                "firmware.cores",
                format!("at most 64 cores are modelled, got {}", self.cores),
            ));
        }
        let cpi = [
            ("branch", self.cpi.branch),
            ("load_store", self.cpi.load_store),
            ("arithmetic", self.cpi.arithmetic),
            ("other", self.cpi.other),
        ];
        for (class, value) in cpi {
            if !value.is_finite() || value <= 0.0 {
                return Err(ConfigError::new(
                    format!("firmware.cpi.{class}"),
                    format!("must be a positive number, got {value}"),
                ));
            }
        }
        for step in FirmwareStep::ALL {
            if let Some(core) = self.step(step).core {
                if core >= self.cores {
                    return Err(ConfigError::new(
                        format!("firmware.{}.core", step.name()),
                        format!(
                            "core {core} does not exist: firmware.cores is {} (cores are numbered from 0)",
                            self.cores
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
