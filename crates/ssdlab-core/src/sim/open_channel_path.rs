//! Open-Channel SSD 2.0 (and 1.2) from the simulation's side. The host-side FTL drives the same mapping,
//! allocation and GC code as the device FTL does for NVMe, with three differences: its page
//! map lives in host DRAM (the device runs with an ideal mapping table: no CMT misses, no
//! translation pages), it chooses where pages go (`host.open_channel.placement`), and its GC
//! moves pages through host memory unless it uses vector copy. The device enforces the chunk
//! rules on every program and reset it executes (`host::ocssd::ChunkTable`).

use super::{Event, Simulation};
use crate::config::{Config, GcCopy, HostInterface, HostPlacement, OcVersion};
use crate::ftl::blocks::BlockState;
use crate::ftl::transaction::TxnKind;
use crate::host::ocssd::{
    lun_first, ChunkTable, HostFtl, HostFtlSummary, OcGeometry, OpenChannel, OpenChannelSummary, PpaFormat,
};
use crate::host::{CQ_ENTRY_BYTES, SQ_ENTRY_BYTES};
use crate::time::ps_to_seconds;

/// Bytes of one entry of the host's logical-to-physical table (pblk keeps 32-bit addresses).
const HOST_MAP_ENTRY_BYTES: u64 = 4;

/// The configuration the device runs with. An Open-Channel device keeps no mapping table: the
/// host translates, so every lookup the FTL code makes is a hit in (host) DRAM and no
/// translation page lives in flash, as with `ftl.ideal_mapping`.
pub(super) fn device_config(mut config: Config) -> Config {
    if config.host.interface == HostInterface::OpenChannel {
        config.ftl.ideal_mapping = true;
    }
    config
}

impl Simulation {
    /// Builds the chunk table from the state the device starts in (after preconditioning).
    pub(super) fn start_open_channel(&mut self) {
        if self.config.host.interface != HostInterface::OpenChannel {
            return;
        }
        let mut host = HostFtl::new(&self.config.host.open_channel, self.flows.len());
        if host.version == OcVersion::V1_2 {
            let ppd = self.ftl.geometry.planes_per_die;
            host.lun_stripes = (0..self.flows.len()).map(|f| lun_first(self.ftl.placement.stripe(f), ppd)).collect();
        }
        self.open_channel =
            Some(Box::new(OpenChannel { chunks: ChunkTable::from_blocks(&self.ftl.geometry, &self.ftl.blocks), host }));
    }

    /// The plane a host page write of `lpa` by `flow` goes to: static allocation, or for an
    /// Open-Channel host FTL with round-robin placement the next of the flow's planes that has
    /// room (the cursor's own plane when none has).
    #[inline]
    pub(super) fn write_plane(&mut self, flow: usize, lpa: u32) -> u32 {
        let Some(oc) = self.open_channel.as_deref_mut() else {
            if let Some(plane) = self.zone_write_plane(lpa) {
                return plane;
            }
            return self.ftl.placement.plane_for(flow, lpa as u64);
        };
        oc.host.pages_placed += 1;
        if oc.host.placement == HostPlacement::Static {
            return self.ftl.placement.plane_for(flow, lpa as u64);
        }
        let stripe = match oc.host.lun_stripes.get(flow) {
            Some(s) => s.as_slice(),
            None => self.ftl.placement.stripe(flow),
        };
        let n = stripe.len();
        let start = oc.host.cursor[flow] as usize;
        let mut pick = start;
        for k in 0..n {
            let i = if start + k >= n { start + k - n } else { start + k };
            let plane = stripe[i];
            if self.stalled_writes[plane as usize].is_empty() && self.ftl.can_write(plane, 0) {
                pick = i;
                break;
            }
        }
        oc.host.cursor[flow] = if pick + 1 == n { 0 } else { pick as u32 + 1 };
        stripe[pick]
    }

    /// Host CPU time the Open-Channel host FTL spends on a request's pages before submitting it.
    #[inline]
    pub(super) fn host_ftl_time(&self, request: u32) -> u64 {
        match self.open_channel.as_deref() {
            Some(oc) if oc.host.cpu_per_page_ps > 0 => {
                let (_, start, sectors) = self.request_sectors(request);
                let spp = self.ftl.geometry.sectors_per_page;
                let pages = (start + sectors as u64).div_ceil(spp) - start / spp;
                pages * oc.host.cpu_per_page_ps
            }
            _ => 0,
        }
    }

    /// The device checks each program of the die's batch against its chunk's write pointer.
    pub(super) fn check_chunk_programs(&mut self, die: u32) {
        let Some(oc) = self.open_channel.as_deref_mut() else { return };
        let g = &self.ftl.geometry;
        for &id in self.backend.dies[die as usize].batch.ids() {
            let ppa = self.txns.get(id).ppa;
            oc.chunks.program(g.block_of_ppa(ppa), g.page_in_block(ppa));
        }
    }

    /// A chunk reset (erase) finished; a worn-out chunk goes offline.
    pub(super) fn note_chunk_reset(&mut self, block: u32) {
        let worn_out = self.ftl.blocks.state(block) == BlockState::Retired;
        if let Some(oc) = self.open_channel.as_deref_mut() {
            oc.chunks.reset(block, worn_out);
        }
    }

    /// Whether host GC moves pages through host memory (Open-Channel without vector copy).
    #[inline]
    pub(super) fn host_gc_over_link(&self) -> bool {
        self.open_channel.as_deref().is_some_and(|oc| oc.host.gc_copy == GcCopy::Host)
    }

    /// Host GC read a valid page: its data and the read's completion go up the link.
    pub(super) fn send_gc_page_through_host(&mut self, id: u32) {
        let page = self.ftl.geometry.page_size_bytes;
        let at_host = self.link.send_to_host(self.now(), page + CQ_ENTRY_BYTES);
        if let Some(oc) = self.open_channel.as_deref_mut() {
            oc.host.gc_link_bytes += page + CQ_ENTRY_BYTES;
        }
        self.queue.schedule(at_host, Event::HostGcPage { txn: id });
    }

    /// A GC page reached host memory (then the host sends the write command and the page back
    /// down), or came back to the device (then it is written like any GC move).
    pub(super) fn on_host_gc_page(&mut self, id: u32) {
        if self.txns.get(id).kind == TxnKind::GcRead {
            let page = self.ftl.geometry.page_size_bytes;
            let back = self.link.send_to_device(self.now(), SQ_ENTRY_BYTES + page);
            if let Some(oc) = self.open_channel.as_deref_mut() {
                oc.host.gc_link_bytes += SQ_ENTRY_BYTES + page;
            }
            // Marks the page as on its way back.
            self.txns.get_mut(id).kind = TxnKind::GcWrite;
            self.queue.schedule(back, Event::HostGcPage { txn: id });
        } else {
            self.begin_gc_write(id);
        }
    }

    /// results.json `open_channel` (None for other interfaces).
    pub(super) fn open_channel_summary(&self) -> Option<OpenChannelSummary> {
        let oc = self.open_channel.as_deref()?;
        let g = &self.ftl.geometry;
        let c = &oc.chunks;
        let lookups: u64 = self.mapping.counts.iter().map(|k| k.lookups).sum();
        let gc_moved = self.ftl.stats.gc_programs;
        let o = &self.config.host.open_channel;
        Some(OpenChannelSummary {
            geometry: OcGeometry {
                version: o.version.name().to_string(),
                groups: g.channels,
                parallel_units_per_group: g.chips_per_channel * g.dies_per_chip,
                chunks_per_parallel_unit: g.planes_per_die * g.blocks_per_plane,
                logical_blocks_per_chunk: g.pages_per_block as u64 * g.sectors_per_page,
                logical_block_bytes: crate::flash::SECTOR_BYTES,
                min_write_logical_blocks: match o.version {
                    OcVersion::V1_2 => g.sectors_per_page * g.planes_per_die as u64,
                    OcVersion::V2_0 => g.sectors_per_page,
                },
                planes_per_parallel_unit: (o.version == OcVersion::V1_2).then_some(g.planes_per_die),
                ppa_format: (o.version == OcVersion::V1_2).then(|| PpaFormat::for_geometry(g)),
            },
            chunks: c.counts(),
            resets: c.resets,
            write_pointer_violations: c.write_pointer_violations,
            reset_violations: c.reset_violations,
            max_open_chunks: c.max_open,
            pages_written: c.pages_written,
            host_ftl: HostFtlSummary {
                placement: match o.placement {
                    HostPlacement::RoundRobin => "round-robin",
                    HostPlacement::Static => "static",
                }
                .to_string(),
                gc_copy: match o.gc_copy {
                    GcCopy::Host => "host",
                    GcCopy::VectorCopy => "vector-copy",
                }
                .to_string(),
                mapping_table_bytes: g.logical_pages * HOST_MAP_ENTRY_BYTES,
                lookups,
                pages_placed: oc.host.pages_placed,
                gc_pages_moved: gc_moved,
                gc_link_bytes: oc.host.gc_link_bytes,
                cpu_seconds: ps_to_seconds((lookups + gc_moved) * oc.host.cpu_per_page_ps),
            },
        })
    }
}
