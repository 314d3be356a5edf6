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
    /// GC, once per victim block: pick the victim and build its move list. The scan and the
    /// moves are `work.gc_block_scanned` and `work.gc_page_moved`.
    pub gc: StepCost,
    /// Instructions of the work a step does beyond its fixed part, per unit of work: protocol
    /// events of the host interface (doorbells, PRP entries, UPIUs, FISes), cache and CMT misses,
    /// entries walked, blocks scanned. See docs/firmware.md for each item's unit and source.
    pub work: FirmwareWork,
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
            work: FirmwareWork::default(),
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

/// Instructions of each class one unit of a step's work runs (it runs on its step's core). A key
/// left out takes the item's default (docs/firmware.md).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct WorkCost {
    /// Branch instructions.
    pub branch: Option<u64>,
    /// Loads and stores.
    pub load_store: Option<u64>,
    /// Integer arithmetic and logic.
    pub arithmetic: Option<u64>,
    /// Everything else.
    pub other: Option<u64>,
}

/// `[firmware.work]`: the cost of each unit of work, by item. The units are counted from what
/// each request did (its interface's protocol events, its pages' cache and CMT outcomes) and
/// what each GC victim needed (blocks scanned, pages moved).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FirmwareWork {
    /// NVMe (HIL): per doorbell write the controller services, two per command (the submission
    /// queue's tail doorbell, then the completion queue's head doorbell after the completion):
    /// read the register, compare with the queue's shadow pointer, mark the queue for arbitration.
    pub nvme_doorbell: WorkCost,
    /// NVMe (HIL): per command fetched: program the DMA of the 64-byte submission queue entry
    /// from host memory, decode and check it (opcode, namespace, LBA range).
    pub nvme_command_fetch: WorkCost,
    /// NVMe (HIL): per submission queue examined when arbitration picks the next command (every
    /// I/O queue of the device, one per flow, per command fetched).
    pub nvme_queue_scanned: WorkCost,
    /// NVMe (HIL): per PRP entry, one per 4 KiB host memory page of the data buffer (NVMe 1.4,
    /// 4.3): read the entry, check its offset, build a DMA descriptor.
    pub nvme_prp_entry: WorkCost,
    /// NVMe (HIL): per PRP list page fetched from host memory (a buffer of more than two memory
    /// pages; a list page holds 512 entries, the last of which chains to the next list).
    pub nvme_prp_list: WorkCost,
    /// NVMe (HIL): per completion queue entry posted: build the 16-byte entry with its phase tag,
    /// DMA it to host memory, advance the queue's tail.
    pub nvme_completion: WorkCost,
    /// NVMe (HIL): per MSI-X interrupt raised, one per completion (no interrupt coalescing).
    pub nvme_interrupt: WorkCost,
    /// UFS (HIL): per UPIU the device parses or builds (COMMAND; a read's DATA IN, one per page;
    /// a write's READY TO TRANSFER and DATA OUT; RESPONSE). UniPro and the UTP engine move the
    /// data in hardware, and the host controller owns the doorbell and the scatter list.
    pub ufs_upiu: WorkCost,
    /// SATA (HIL): per FIS the device handles (Register Host to Device, DMA Setup, one DATA FIS
    /// per 8 KiB, Set Device Bits). The host's AHCI controller owns the doorbell and the PRD table.
    pub sata_fis: WorkCost,
    /// Cache layer: per page that misses the data cache (allocate a line from the free list).
    pub cache_miss: WorkCost,
    /// Cache layer: per page whose cache set is full (pick a victim, unlink it, queue its
    /// write-back if dirty).
    pub cache_eviction: WorkCost,
    /// FTL: per page whose CMT lookup misses (evict an entry, issue the translation page's read,
    /// insert the entry when it arrives).
    pub cmt_miss: WorkCost,
    /// FTL: per CMT entry walked when evicting a dirty entry writes back its translation page:
    /// every cached entry of that page is merged into it and cleaned (DFTL's batch update).
    pub cmt_entry_walked: WorkCost,
    /// FTL: per page of a write: take the next page of the plane's write frontier, invalidate the
    /// page's old copy.
    pub page_allocation: WorkCost,
    /// GC: per block the victim policy examines (greedy, FIFO, cost-benefit and random++ every
    /// block of the plane; random and random+ one; RGA its `gc_rga_candidates`).
    pub gc_block_scanned: WorkCost,
    /// GC: per valid page of the victim: reverse-map lookup, a move-list entry.
    pub gc_page_moved: WorkCost,
}

/// A unit of firmware work; its declaration order indexes [`WORK_DEFAULTS`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WorkItem {
    #[default]
    NvmeDoorbell,
    NvmeCommandFetch,
    NvmeQueueScanned,
    NvmePrpEntry,
    NvmePrpList,
    NvmeCompletion,
    NvmeInterrupt,
    UfsUpiu,
    SataFis,
    CacheMiss,
    CacheEviction,
    CmtMiss,
    CmtEntryWalked,
    PageAllocation,
    GcBlockScanned,
    GcPageMoved,
}

impl WorkItem {
    pub const ALL: [WorkItem; 16] = [
        WorkItem::NvmeDoorbell,
        WorkItem::NvmeCommandFetch,
        WorkItem::NvmeQueueScanned,
        WorkItem::NvmePrpEntry,
        WorkItem::NvmePrpList,
        WorkItem::NvmeCompletion,
        WorkItem::NvmeInterrupt,
        WorkItem::UfsUpiu,
        WorkItem::SataFis,
        WorkItem::CacheMiss,
        WorkItem::CacheEviction,
        WorkItem::CmtMiss,
        WorkItem::CmtEntryWalked,
        WorkItem::PageAllocation,
        WorkItem::GcBlockScanned,
        WorkItem::GcPageMoved,
    ];

    pub fn name(self) -> &'static str {
        [
            "nvme_doorbell",
            "nvme_command_fetch",
            "nvme_queue_scanned",
            "nvme_prp_entry",
            "nvme_prp_list",
            "nvme_completion",
            "nvme_interrupt",
            "ufs_upiu",
            "sata_fis",
            "cache_miss",
            "cache_eviction",
            "cmt_miss",
            "cmt_entry_walked",
            "page_allocation",
            "gc_block_scanned",
            "gc_page_moved",
        ][self as usize]
    }

    /// The step whose core runs the work and whose totals count it.
    pub fn step(self) -> FirmwareStep {
        use WorkItem::*;
        match self {
            NvmeDoorbell | NvmeCommandFetch | NvmeQueueScanned | NvmePrpEntry | NvmePrpList | NvmeCompletion
            | NvmeInterrupt | UfsUpiu | SataFis => FirmwareStep::Hil,
            CacheMiss | CacheEviction => FirmwareStep::Cache,
            CmtMiss | CmtEntryWalked | PageAllocation => FirmwareStep::Ftl,
            GcBlockScanned | GcPageMoved => FirmwareStep::Gc,
        }
    }
}

/// Defaults per work item: (branch, load/store, arithmetic, other). Estimates of lean firmware
/// routines (see docs/firmware.md): most of their instructions move descriptors and walk tables,
/// so loads and stores dominate, as Amber measured (about 60 %). NVMe's device-side work
/// (fetching commands and PRP lists from host memory, posting completions, interrupts,
/// doorbells) is what UFS's UTP engine and SATA's host controller do outside the device
/// firmware, which is why NVMe executes several times the instructions of UFS per request.
const WORK_DEFAULTS: [(u64, u64, u64, u64); 16] = [
    (8, 30, 10, 2),    // nvme_doorbell
    (30, 110, 40, 10), // nvme_command_fetch
    (4, 12, 4, 0),     // nvme_queue_scanned
    (6, 28, 12, 4),    // nvme_prp_entry
    (15, 60, 20, 5),   // nvme_prp_list
    (20, 80, 25, 5),   // nvme_completion
    (6, 24, 6, 4),     // nvme_interrupt
    (4, 14, 5, 1),     // ufs_upiu
    (4, 16, 6, 2),     // sata_fis
    (10, 40, 15, 5),   // cache_miss
    (15, 50, 20, 5),   // cache_eviction
    (40, 150, 60, 10), // cmt_miss
    (2, 6, 3, 0),      // cmt_entry_walked
    (10, 40, 15, 5),   // page_allocation
    (3, 6, 3, 0),      // gc_block_scanned
    (10, 30, 10, 5),   // gc_page_moved
];

impl FirmwareWork {
    fn item(&self, item: WorkItem) -> &WorkCost {
        use WorkItem::*;
        match item {
            NvmeDoorbell => &self.nvme_doorbell,
            NvmeCommandFetch => &self.nvme_command_fetch,
            NvmeQueueScanned => &self.nvme_queue_scanned,
            NvmePrpEntry => &self.nvme_prp_entry,
            NvmePrpList => &self.nvme_prp_list,
            NvmeCompletion => &self.nvme_completion,
            NvmeInterrupt => &self.nvme_interrupt,
            UfsUpiu => &self.ufs_upiu,
            SataFis => &self.sata_fis,
            CacheMiss => &self.cache_miss,
            CacheEviction => &self.cache_eviction,
            CmtMiss => &self.cmt_miss,
            CmtEntryWalked => &self.cmt_entry_walked,
            PageAllocation => &self.page_allocation,
            GcBlockScanned => &self.gc_block_scanned,
            GcPageMoved => &self.gc_page_moved,
        }
    }

    /// One unit's instructions by class, defaults filled in.
    pub fn resolved(&self, item: WorkItem) -> [u64; 4] {
        let (b, ls, a, o) = WORK_DEFAULTS[item as usize];
        let w = self.item(item);
        [w.branch.unwrap_or(b), w.load_store.unwrap_or(ls), w.arithmetic.unwrap_or(a), w.other.unwrap_or(o)]
    }
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

/// Defaults per step's fixed part: (branch, load/store, arithmetic, other, core). Estimates of
/// lean firmware paths (the work items above add what a request did), sized so that an NVMe
/// 4 KiB read's HIL (about 1.9 us at 500 MHz) sustains more than the Intel 750's 430 K
/// random-read IOPS on its core: firmware shows in the latency without being the bottleneck of
/// the default device.
const STEP_DEFAULTS: [(u64, u64, u64, u64, u32); 5] = [
    // HIL: take the request, split it into pages, hand it on.
    (10, 25, 10, 5, 0),
    // Cache: hash probe and LRU update.
    (10, 30, 12, 3, 1),
    // FTL: mapping table lookup.
    (10, 30, 12, 3, 2),
    // FIL: command build, channel controller registers.
    (10, 35, 15, 5, 2),
    // GC: claim the victim, set up its move list.
    (40, 120, 40, 20, 2),
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
