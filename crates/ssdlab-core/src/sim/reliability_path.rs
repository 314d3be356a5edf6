//! Read retries from flash reliability (`[flash.reliability]`, `flash/reliability.rs`): when a
//! read batch starts, each page's bit errors are drawn from its block's RBER; the batch needs
//! as many retries as its worst page. Each retry reads the pages again (command, cell read with
//! the soft decode's time, data out: the channel and die are busy as for a read) before the
//! transactions complete. Reads near the ECC's limit queue their blocks for read reclaim, which
//! starts once the read is done (`Ftl::begin_read_reclaim`).

use super::Simulation;
use crate::flash::reliability::{Reliability, ReliabilitySummary, RetryLevelLatency, NO_DATA_AT_START};
use crate::flash::SECTOR_BYTES;
use crate::ftl::blocks::BlockState;
use crate::stats::breakdown::{Breakdown, Step};
use crate::stats::OpStats;

pub(super) struct ReliabilityState {
    model: Reliability,
    /// Host reads by the most retries any of their pages needed.
    latency_by_retries: Vec<OpStats>,
    /// Blocks whose reads asked for read reclaim, started when the read is done.
    to_reclaim: Vec<u32>,
}

impl ReliabilityState {
    /// The model for the device as preconditioning left it (its erase counts are the start).
    pub(super) fn build(sim: &Simulation) -> Option<Box<Self>> {
        let config = sim.config.flash.reliability.as_ref()?;
        let g = &sim.ftl.geometry;
        let blocks = g.planes * g.blocks_per_plane;
        let b = &sim.ftl.blocks;
        let erase_counts = (0..blocks)
            .map(|block| match b.state(block) {
                BlockState::Free => NO_DATA_AT_START,
                _ => b.erase_count(block),
            })
            .collect();
        Some(Box::new(Self {
            model: Reliability::new(config, sim.config.seed, erase_counts),
            latency_by_retries: (0..=config.soft_decision_bits.len()).map(|_| OpStats::default()).collect(),
            to_reclaim: Vec::new(),
        }))
    }
}

impl ReliabilityState {
    /// A host read completed after `retries` retries on its slowest page.
    pub(super) fn note_read_latency(&mut self, retries: u8, latency_ps: u64, bytes: u64, breakdown: &Breakdown) {
        self.latency_by_retries[retries as usize].record(latency_ps, bytes, breakdown);
    }
}

impl Simulation {
    /// The read batch on `die` starts: decodes each page, notes the retries the batch needs on
    /// the die and on each host request, and returns the hard decode's time.
    #[inline]
    pub(super) fn decode_read_batch(&mut self, die: u32) -> u64 {
        if self.reliability.is_none() {
            return 0;
        }
        self.decode_read_batch_with_model(die)
    }

    #[cold]
    #[inline(never)]
    fn decode_read_batch_with_model(&mut self, die: u32) -> u64 {
        let Some(rel) = self.reliability.as_mut() else { return 0 };
        let now = self.queue.now();
        let batch = self.backend.dies[die as usize].batch;
        let mut retries = 0;
        for &id in batch.ids() {
            let t = self.txns.get(id);
            let block = self.ftl.geometry.block_of_ppa(t.ppa);
            let b = &self.ftl.blocks;
            let bytes = t.sectors as u64 * SECTOR_BYTES;
            // Data written during the run is as old as its block's close (an open block's, a few
            // moments: taken as new).
            let written_ago = match b.state(block) {
                BlockState::Open => 0,
                _ => now.saturating_sub(b.closed_at(block)),
            };
            let outcome = rel.model.read(block, b.erase_count(block), written_ago, now, bytes);
            retries = retries.max(outcome.retries);
            if outcome.reclaim {
                rel.to_reclaim.push(block);
            }
            if let Some(request) = t.host_request().filter(|_| outcome.retries > 0) {
                let r = self.requests.get_mut(request);
                r.read_retries = r.read_retries.max(outcome.retries);
            }
        }
        self.backend.dies[die as usize].read_retries_left = retries;
        rel.model.decode_ps(false)
    }

    /// The read on `die` has its data out: if its batch needs another retry, reads the pages
    /// again with extra sensing (the die stays busy) and returns true.
    #[inline]
    pub(super) fn retry_read(&mut self, die: u32) -> bool {
        self.backend.dies[die as usize].read_retries_left > 0 && self.start_read_retry(die)
    }

    #[cold]
    #[inline(never)]
    fn start_read_retry(&mut self, die: u32) -> bool {
        let d = &mut self.backend.dies[die as usize];
        if !d.batch.class.is_read() {
            return false;
        }
        d.read_retries_left -= 1;
        let decode = self.reliability.as_ref().map_or(0, |r| r.model.decode_ps(true));
        let now = self.now();
        let channel = self.channel_of_die(die);
        let batch = self.backend.dies[die as usize].batch;
        let pages = batch.ids().iter().map(|&id| super::flash_path::cell_page(&self.ftl, self.txns.get(id).ppa));
        let (sent, cell) = self.backend.start_read(die, channel, now, pages);
        self.ftl.stats.read_retries += batch.count as u64;
        let cell = cell + decode;
        self.charge_read_retry(die, sent - now, cell);
        self.note_channel_use(channel);
        self.queue.schedule(sent + cell, super::Event::CellReadDone { die });
        true
    }

    fn charge_read_retry(&mut self, die: u32, command_ps: u64, cell_ps: u64) {
        let batch = self.backend.dies[die as usize].batch;
        if !super::flash_path::charged(batch.class) {
            return;
        }
        for &id in batch.ids() {
            let spent = &mut self.spent[id as usize];
            spent.add(Step::CommandAddress, command_ps);
            spent.add(Step::CellOperation, cell_ps);
        }
    }

    /// Starts read reclaim of the blocks reads asked for, on planes that collect nothing now
    /// (the others take theirs after their current victim).
    #[inline]
    pub(super) fn start_read_reclaims(&mut self) {
        if self.reliability.as_ref().is_some_and(|r| !r.to_reclaim.is_empty()) {
            self.start_queued_read_reclaims();
        }
    }

    #[cold]
    #[inline(never)]
    fn start_queued_read_reclaims(&mut self) {
        let Some(rel) = self.reliability.as_mut() else { return };
        let blocks = std::mem::take(&mut rel.to_reclaim);
        for block in blocks {
            self.ftl.request_read_reclaim(block);
            let plane = self.ftl.geometry.plane_of_block(block);
            if !self.workload_over() && self.ftl.begin_read_reclaim(plane).is_some() {
                self.begin_collecting(plane, false);
            }
        }
    }

    pub(super) fn reliability_summary(&self) -> Option<ReliabilitySummary> {
        let rel = self.reliability.as_ref()?;
        let stats = &self.ftl.stats;
        let mut summary = rel.model.summary(stats.read_retries, stats.read_reclaims);
        summary.read_latency_us_by_retries = rel
            .latency_by_retries
            .iter()
            .enumerate()
            .filter(|(_, s)| s.count > 0)
            .map(|(retries, s)| {
                let o = s.summary(0, &[]);
                RetryLevelLatency {
                    retries: retries as u32,
                    count: s.count,
                    mean: o.latency_us.mean,
                    p99: o.latency_us.p99,
                    max: o.latency_us.max,
                }
            })
            .collect();
        Some(summary)
    }
}
