//! results.json `mapping`: what the block, hybrid and super-page mapping families did (absent
//! with page mapping). See docs/mapping.md.

use serde::{Deserialize, Serialize};

/// Merges by kind. Block mapping's copy-on-write of a whole block is a full merge.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MergeCounts {
    pub switch: u64,
    pub partial: u64,
    pub full: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MappingSummary {
    /// `block`, `hybrid` or `super_page`.
    pub family: String,
    pub merges: MergeCounts,
    /// Super-page mapping: partial updates that read and rewrote the rest of their super-page.
    pub super_page_read_modify_writes: u64,
    /// Pages merges (and super-page updates) read, and copies they programmed.
    pub pages_read_by_merges: u64,
    pub pages_copied_by_merges: u64,
    pub erases_by_merges: u64,
    /// Host pages programmed in place in their data block, into a log block, and as part of a
    /// merge (the page's new data written into the merge's new block).
    pub host_pages_in_place: u64,
    pub host_pages_to_log_blocks: u64,
    pub host_pages_in_merges: u64,
    /// Times a host page write waited: behind a merge of its logical block, or for an erased block.
    pub writes_waited_for_merges: u64,
    pub writes_waited_for_blocks: u64,
}
