//! NVMe Flexible Data Placement (TP4146) as the FTL sees it (`[ftl.fdp]`): each reclaim unit
//! handle has its own write frontiers (`blocks::Stream`), so a block (here a reclaim unit) holds
//! the data of one handle only, and GC moves keep a victim's handle. This file builds the FDP
//! statistics log page's counts (host and media bytes written, media bytes erased: NVMe 2.0's
//! FDP Statistics log, LID 22h), per handle what the host wrote there and what it cost, and the
//! FDP events log (LID 23h).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::time::SimTime;

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
    /// The FDP events log: events by type over the run, and the most recent ones (absent from
    /// results written before it existed).
    #[serde(default)]
    pub events: EventsSummary,
}

/// results.json `fdp.events`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct EventsSummary {
    /// Host events of type Invalid Placement Identifier (03h): writes whose placement handle the
    /// device does not offer, placed by handle 0 instead.
    pub invalid_placement_identifier: u64,
    /// The last [`EVENT_LOG_ENTRIES`] events, oldest first.
    pub log: Vec<FdpEvent>,
}

/// Events the log keeps (the log page holds a device-chosen number; 64 here).
pub const EVENT_LOG_ENTRIES: usize = 64;

/// One entry of the FDP events log (NVMe 2.0 base specification, FDP Events log page: event
/// type, placement identifier, timestamp, namespace).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FdpEvent {
    /// `invalid_placement_identifier`.
    pub event: String,
    /// Simulated time of the event, microseconds.
    pub time_us: f64,
    /// The placement identifier the command carried.
    pub placement_identifier: u16,
    /// Namespace identifier (1 = the first namespace, or the device's only one).
    pub namespace_id: u32,
    /// The flow (host queue) whose command it was.
    pub flow: String,
}

/// The FTL's record of FDP events as they happen.
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    invalid_placement_identifier: u64,
    recent: VecDeque<(SimTime, u16, u32, u16)>,
}

impl EventLog {
    /// A write carried `placement_identifier`, which the device does not offer (TP4146: the
    /// write is placed by placement handle 0 and the event logged).
    pub fn invalid_placement_identifier(
        &mut self,
        at: SimTime,
        placement_identifier: u16,
        namespace_id: u32,
        flow: u16,
    ) {
        self.invalid_placement_identifier += 1;
        if self.recent.len() == EVENT_LOG_ENTRIES {
            self.recent.pop_front();
        }
        self.recent.push_back((at, placement_identifier, namespace_id, flow));
    }

    /// The events for results.json; `flow_names` names the flows by index.
    pub fn summary(&self, flow_names: &[String]) -> EventsSummary {
        EventsSummary {
            invalid_placement_identifier: self.invalid_placement_identifier,
            log: self
                .recent
                .iter()
                .map(|&(at, pid, nsid, flow)| FdpEvent {
                    event: "invalid_placement_identifier".into(),
                    time_us: at as f64 / crate::time::PS_PER_US as f64,
                    placement_identifier: pid,
                    namespace_id: nsid,
                    flow: flow_names.get(flow as usize).cloned().unwrap_or_default(),
                })
                .collect(),
        }
    }
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
    pub fn new(
        stats: &FtlStats,
        page_bytes: u64,
        block_bytes: u64,
        flow_handles: &[(String, u32)],
        events: EventsSummary,
    ) -> Self {
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
            events,
        }
    }
}
