//! `compat`: which simulator's behaviour the model follows where published simulators and real
//! drives differ. Each difference is also a key of its own, in the section of the part it
//! belongs to, so that a study can turn one on alone; `compat` only chooses the values of the
//! keys a config leaves unset. docs/fidelity.md lists every difference, its mechanism, its
//! effect measured side by side with MQSim (`validation/vs_mqsim.py`), and what real drives do.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::flash::{ChannelArbitration, DieCommands};
use super::mapping::MappingEntrySizes;
use super::{Config, Destage, DramModel, SerialAccessTime, TranslationPagesAtStart, TranslationWriteBack};

/// The model's behaviour where it has a choice.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Compat {
    /// ssdlab's own model: what real drives do, as far as the sources tell (docs/fidelity.md).
    #[default]
    Default,
    /// MQSim @7ec40e3 (Tavakkol et al., FAST 2018) where it differs: one command per chip,
    /// read data out before new commands on a channel, partial-page transfers, GC ahead of host writes, the whole mapping table on flash from the start, translation
    /// pages never programmed, reads that map unwritten pages, cold writes through the cache at
    /// once, and its DRAM access-time arithmetic.
    Mqsim,
}

impl Compat {
    pub fn name(self) -> &'static str {
        match self {
            Compat::Default => "default",
            Compat::Mqsim => "mqsim",
        }
    }
}

impl Config {
    /// Fills each behaviour key the config left unset with `compat`'s choice, so that the
    /// config written into results.json says what ran.
    pub fn resolve_compat(&mut self) {
        let mqsim = self.compat == Compat::Mqsim;
        // MQSim's choice under compat = "mqsim", ssdlab's (each key's default) otherwise.
        let flash = &mut self.flash;
        flash.die_commands.get_or_insert(choose(mqsim, DieCommands::OnePerChip));
        flash.partial_page_transfer.get_or_insert(mqsim);
        flash.channel_arbitration.get_or_insert(choose(mqsim, ChannelArbitration::DataOutFirst));
        let ftl = &mut self.ftl;
        ftl.translation_pages_at_start.get_or_insert(choose(mqsim, TranslationPagesAtStart::All));
        ftl.translation_write_back.get_or_insert(choose(mqsim, TranslationWriteBack::HoldInDram));
        ftl.reads_map_unwritten_pages.get_or_insert(mqsim);
        ftl.mapping_entry_sizes.get_or_insert(choose(mqsim, MappingEntrySizes::Mqsim));
        let victims_collected = !matches!(ftl.mapping, super::MappingFamily::Block | super::MappingFamily::Hybrid);
        ftl.gc_pacing.get_or_insert(!mqsim && !ftl.preemptible_gc && victims_collected);
        self.controller.translation_reads_first.get_or_insert(mqsim);
        self.controller.suspend_for_reads.get_or_insert(!mqsim);
        self.cache.destage.get_or_insert(choose(mqsim, Destage::ColdAtOnce));
        // MQSim's arithmetic belongs to the serial model; the banked one has its own timing.
        let serial = self.dram.model == DramModel::Serial;
        self.dram.serial_access_time.get_or_insert(choose(mqsim && serial, SerialAccessTime::Mqsim));
    }

    /// The behaviour keys as they run, for results.json's `model`.
    pub fn model_summary(&self) -> ModelSummary {
        ModelSummary {
            compat: self.compat,
            die_commands: self.flash.die_commands.unwrap_or_default(),
            partial_page_transfer: self.flash.partial_page_transfer.unwrap_or(false),
            channel_arbitration: self.flash.channel_arbitration.unwrap_or_default(),
            translation_pages_at_start: self.ftl.translation_pages_at_start.unwrap_or_default(),
            translation_write_back: self.ftl.translation_write_back.unwrap_or_default(),
            reads_map_unwritten_pages: self.ftl.reads_map_unwritten_pages.unwrap_or(false),
            translation_reads_first: self.controller.translation_reads_first.unwrap_or(false),
            suspend_for_reads: self.controller.suspend_for_reads.unwrap_or(true),
            mapping_entry_sizes: self.ftl.mapping_entry_sizes.unwrap_or_default(),
            gc_pacing: self.ftl.gc_pacing.unwrap_or(false),
            destage: self.cache.destage.unwrap_or_default(),
            dram_serial_access_time: self.dram.serial_access_time.unwrap_or_default(),
        }
    }
}

/// `theirs` when `mqsim`, else the enum's default (ssdlab's behaviour).
fn choose<T: Default>(mqsim: bool, theirs: T) -> T {
    if mqsim {
        theirs
    } else {
        T::default()
    }
}

/// results.json's `model`: whose behaviour the run followed, and each key `compat` decides, as
/// it ran (the config beside it is the document as the user gave it, so it may leave them out).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct ModelSummary {
    pub compat: Compat,
    pub die_commands: DieCommands,
    pub partial_page_transfer: bool,
    pub channel_arbitration: ChannelArbitration,
    pub translation_pages_at_start: TranslationPagesAtStart,
    pub translation_write_back: TranslationWriteBack,
    pub reads_map_unwritten_pages: bool,
    pub translation_reads_first: bool,
    pub suspend_for_reads: bool,
    pub mapping_entry_sizes: MappingEntrySizes,
    pub gc_pacing: bool,
    pub destage: Destage,
    pub dram_serial_access_time: SerialAccessTime,
}
