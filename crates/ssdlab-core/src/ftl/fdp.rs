//! NVMe Flexible Data Placement (TP4146) as the FTL sees it (`[ftl.fdp]`): each reclaim unit
//! handle has its own write frontiers (`blocks::Stream`), so a block (here a reclaim unit) holds
//! the data of one handle only, and GC moves keep a victim's handle. This file builds the FDP
//! statistics log page's counts (host and media bytes written, media bytes erased: NVMe 2.0's
//! FDP Statistics log, LID 22h) and, per handle, what the host wrote there and what it cost.

use serde::{Deserialize, Serialize};

use super::FtlStats;

/// results.json `fdp` (only with `[ftl.fdp]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FdpSummary {
    pub reclaim_unit_handles: u32,
    /// Bytes of one reclaim unit (one block).
    pub reclaim_unit_bytes: u64,
    /// The FDP statistics log: host bytes with metadata written (HBMW), media bytes with
    /// metadata written (MBMW: host and GC programs, translation pages included) and media bytes
    /// erased (MBE), over the run.
    pub host_bytes_written: u64,
    pub media_bytes_written: u64,
    pub media_bytes_erased: u64,
    pub handles: Vec<HandleSummary>,
}

/// One reclaim unit handle.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HandleSummary {
    pub handle: u32,
    /// Flows whose writes carry this handle.
    pub flows: Vec<String>,
    pub host_bytes_written: u64,
    /// Bytes programmed for the handle: its host writes and GC's moves of its data.
    pub media_bytes_written: u64,
    /// media / host bytes (null where the host wrote nothing through the handle).
    pub write_amplification: Option<f64>,
    pub reclaim_units_opened: u64,
    pub reclaim_units_erased: u64,
}

impl FdpSummary {
    /// The summary from the FTL's counts; `flow_handles` pairs each flow's name with its handle.
    pub fn new(stats: &FtlStats, page_bytes: u64, block_bytes: u64, flow_handles: &[(String, u32)]) -> Self {
        let handles = stats.handle_host_pages.len();
        let per_handle = (0..handles)
            .map(|h| {
                let host = stats.handle_host_pages[h] * page_bytes;
                let media = stats.handle_media_pages[h] * page_bytes;
                HandleSummary {
                    handle: h as u32,
                    flows: flow_handles.iter().filter(|(_, fh)| *fh as usize == h).map(|(n, _)| n.clone()).collect(),
                    host_bytes_written: host,
                    media_bytes_written: media,
                    write_amplification: (host > 0).then(|| media as f64 / host as f64),
                    reclaim_units_opened: stats.handle_units_opened[h],
                    reclaim_units_erased: stats.handle_blocks_erased[h],
                }
            })
            .collect();
        Self {
            reclaim_unit_handles: handles as u32,
            reclaim_unit_bytes: block_bytes,
            host_bytes_written: stats.user_programs * page_bytes,
            media_bytes_written: (stats.user_programs + stats.gc_programs + stats.mapping_programs) * page_bytes,
            media_bytes_erased: stats.blocks_erased * block_bytes,
            handles: per_handle,
        }
    }
}
