//! The data cache on a request's path: cached writes complete in DRAM (waiting for space when
//! the cache is full, while least recently used lines are flushed to flash), and reads of cached
//! sectors are served from DRAM.

use std::collections::VecDeque;

use super::flash_path::sector_mask;
use super::mapping_path::NO_TXN;
use super::{Event, Simulation};
use crate::cache::{CachePartition, Eviction};
use crate::config::{CacheMode, Config, Priority, Sharing};
use crate::flash::SECTOR_BYTES;
use crate::ftl::mapping::UNMAPPED;
use crate::ftl::transaction::{Transaction, TxnKind, NO_REQUEST};
use crate::stats::breakdown::{Breakdown, Step};

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CacheCounts {
    pub read_lookups: u64,
    pub read_hits: u64,
}

pub(super) struct CacheState {
    modes: Vec<CacheMode>,
    partitions: Vec<CachePartition>,
    partition_of_flow: Vec<usize>,
    /// Cached writes waiting for space, per partition, in arrival order.
    waiting: Vec<VecDeque<u32>>,
    pub counts: Vec<CacheCounts>,
    pub flushes: u64,
    pub writes_waited: u64,
}

impl CacheState {
    pub fn new(config: &Config) -> Self {
        let flows = config.flows.len();
        let lines = (config.cache.capacity.value / config.flash.page_size.value) as u32;
        let (partitions, partition_of_flow): (Vec<_>, Vec<_>) = match config.cache.sharing {
            Sharing::Shared => (vec![CachePartition::new(lines)], vec![0; flows]),
            Sharing::Partitioned => {
                ((0..flows).map(|_| CachePartition::new(lines / flows as u32)).collect(), (0..flows).collect())
            }
        };
        Self {
            modes: config.flows.iter().map(|f| f.cache_mode.unwrap_or_default()).collect(),
            waiting: vec![VecDeque::new(); partitions.len()],
            partitions,
            partition_of_flow,
            counts: vec![CacheCounts::default(); flows],
            flushes: 0,
            writes_waited: 0,
        }
    }

    #[inline]
    pub fn mode(&self, flow: usize) -> CacheMode {
        self.modes[flow]
    }

    /// Whether the cache holds all these sectors for a read of `flow` (counted as a lookup).
    pub fn read_hit(&mut self, flow: usize, lpa: u32, sectors: u64) -> bool {
        self.counts[flow].read_lookups += 1;
        let hit = self.partitions[self.partition_of_flow[flow]].read(lpa, sectors);
        self.counts[flow].read_hits += u64::from(hit);
        hit
    }

    /// Keeps what a flash read of a read-caching flow brought in, unless writes wait for space.
    pub fn fill_after_read(&mut self, flow: usize, lpa: u32, sectors: u64) {
        let p = self.partition_of_flow[flow];
        if self.modes[flow].caches_reads() && self.waiting[p].is_empty() {
            self.partitions[p].fill(lpa, sectors, flow as u16);
        }
    }

    /// A write replaces these sectors (in flash, or in partition `keep`'s line): no other
    /// partition may keep its older copy.
    pub fn forget(&mut self, lpa: u32, sectors: u64, keep: Option<usize>) {
        for (i, p) in self.partitions.iter_mut().enumerate() {
            if p.used() > 0 && keep != Some(i) {
                p.forget(lpa, sectors);
            }
        }
    }

    pub fn waiting_writes(&self) -> usize {
        self.waiting.iter().map(|w| w.len()).sum()
    }

    /// Each partition as (free, flushing, used, capacity) lines, for diagnostics.
    pub fn occupancy(&self) -> Vec<(u32, u32, u32, u32)> {
        self.partitions.iter().map(|p| (p.free(), p.flushing(), p.used(), p.capacity())).collect()
    }
}

impl Simulation {
    /// Puts a write into the cache, or queues it until there is room. Returns false when the
    /// request touches more pages than the cache holds: it then goes straight to flash.
    pub(super) fn cache_write(&mut self, request: u32) -> bool {
        let flow = self.requests_flow(request);
        let p = self.cache.partition_of_flow[flow];
        // A write touching more pages than the cache (or this flow's share) holds bypasses it.
        let (pages, _, _) = self.request_pages(request);
        if pages.count() as u32 > self.cache.partitions[p].capacity() {
            return false;
        }
        let needed = self.lines_needed(request, p);
        if self.cache.waiting[p].is_empty() && needed <= self.cache.partitions[p].free() {
            self.store_write(request, p);
        } else {
            self.cache.writes_waited += 1;
            self.cache.waiting[p].push_back(request);
            self.admit_waiting_writes(p);
        }
        true
    }

    /// Lets waiting writes into partition `p` in arrival order while they fit, evicting for the
    /// first one that does not. Dropping clean lines may make room at once; dirty lines make room
    /// when their flushes complete, which calls this again.
    fn admit_waiting_writes(&mut self, p: usize) {
        while let Some(&request) = self.cache.waiting[p].front() {
            let needed = self.lines_needed(request, p);
            if needed > self.cache.partitions[p].free() {
                // Make room for every waiting write at once, so their flushes run in parallel
                // on the dies instead of one after another.
                let waiting: u32 = self.cache.waiting[p].iter().map(|&r| self.lines_needed(r, p)).sum();
                self.make_room(p, request, waiting.min(self.cache.partitions[p].capacity()));
                if needed > self.cache.partitions[p].free() {
                    // Flushes are under way (the request fits the cache, and its own pages are
                    // never evicted for it): their completion calls this again.
                    return;
                }
            }
            self.cache.waiting[p].pop_front();
            self.store_write(request, p);
        }
    }

    fn request_pages(&self, request: u32) -> (std::ops::RangeInclusive<u64>, u64, u64) {
        let (_, start, sectors) = self.request_sectors(request);
        let spp = self.ftl.geometry.sectors_per_page;
        let end = start + sectors as u64;
        (start / spp..=(end - 1) / spp, start, end)
    }

    fn lines_needed(&self, request: u32, p: usize) -> u32 {
        let (pages, _, _) = self.request_pages(request);
        self.cache.partitions[p].lines_needed(pages.map(|l| l as u32))
    }

    /// Writes the request's sectors into cache lines and its data into DRAM; the request
    /// completes when the DRAM write is done.
    fn store_write(&mut self, request: u32, p: usize) {
        let flow = self.requests_flow(request) as u16;
        let (pages, start, end) = self.request_pages(request);
        let spp = self.ftl.geometry.sectors_per_page;
        for lpa in pages {
            let page_start = lpa * spp;
            let first = start.max(page_start) - page_start;
            let covered = (end.min(page_start + spp) - page_start - first) as u32;
            self.cache.partitions[p].write(lpa as u32, sector_mask(first, covered), flow);
            if self.cache.partitions.len() > 1 {
                self.cache.forget(lpa as u32, sector_mask(first, covered), Some(p));
            }
            self.data_cache_write(request, p, lpa as u32);
        }
        self.serve_from_cache(request, (end - start) * SECTOR_BYTES);
        self.set_pending(request, 1);
    }

    /// Moves `bytes` between DRAM and the host interface for `request`.
    pub(super) fn serve_from_cache(&mut self, request: u32, bytes: u64) {
        let (is_read, start_sector, _) = self.request_sectors(request);
        let address = self.dram.cache_address(start_sector * SECTOR_BYTES);
        let done = self.dram.access(self.now(), crate::dram::DramUser::Cache, address, bytes, !is_read);
        self.set_cache_bytes(request, bytes);
        self.queue.schedule(done, Event::CacheAccessDone { request });
    }

    /// The DRAM part of a request is done: written data is safe in the cache, or cached read
    /// data goes to the host. Time since the command arrived (waiting for space included) is the
    /// request's cache step.
    pub(super) fn on_cache_access_done(&mut self, request: u32) {
        let now = self.now();
        let (is_read, arrived_at, bytes) = self.cache_view(request);
        let mut spent = Breakdown::default();
        spent.add(Step::CacheDram, now - arrived_at);
        let sent = if is_read { self.send_read_data(bytes) } else { now };
        self.finish_part(request, &spent, sent);
    }

    /// Evicts least recently used lines until the waiting writes of partition `p` will fit once
    /// the flushes under way complete.
    fn make_room(&mut self, p: usize, request: u32, needed: u32) {
        let (pages, _, _) = self.request_pages(request);
        let keep = *pages.start() as u32..=*pages.end() as u32;
        loop {
            let part = &self.cache.partitions[p];
            if part.free() + part.flushing() >= needed {
                return;
            }
            match self.cache.partitions[p].evict_one(keep.clone()) {
                Eviction::Freed => {}
                Eviction::Flush { lpa, sectors, flow } => self.flush_line(lpa, sectors, flow),
                Eviction::Nothing => return,
            }
        }
    }

    /// Writes a dirty line to flash as an FTL-internal page write (a partial line is merged with
    /// the rest of the page by a read-modify-write, like any partial write).
    fn flush_line(&mut self, lpa: u32, sectors: u64, flow: u16) {
        self.cache.flushes += 1;
        let id = self.insert_txn(Transaction {
            kind: TxnKind::UserWrite,
            request: NO_REQUEST,
            lpa,
            ppa: UNMAPPED,
            plane: 0,
            sectors: sectors.count_ones(),
            queued_at: self.now(),
            next_waiting: NO_TXN,
            priority: Priority::Medium as u8,
            flow,
            first_sector: sectors.trailing_zeros() as u16,
            seq: 0,
        });
        self.start_user_page(id);
    }

    /// A flushed line's space is free: let waiting writes in, in order.
    pub(super) fn on_flush_done(&mut self, flow: usize, lpa: u32) {
        let p = self.cache.partition_of_flow[flow];
        self.cache.partitions[p].flush_done(lpa);
        self.admit_waiting_writes(p);
    }
}

/// What data emulation needs to see (see `data_path`).
impl CacheState {
    pub(super) fn partition_of(&self, flow: usize) -> usize {
        self.partition_of_flow[flow]
    }

    pub(super) fn partitions(&self) -> &[CachePartition] {
        &self.partitions
    }
}

/// Warming for steady-state preconditioning (see `precondition_path`).
impl CacheState {
    /// Draws worth making to fill flow `f`'s partition (0 when the flow does not use the cache).
    pub(super) fn warm_draws(&self, f: usize) -> u64 {
        if self.mode(f) == CacheMode::Off {
            0
        } else {
            4 * self.partitions[self.partition_of_flow[f]].capacity() as u64
        }
    }

    pub(super) fn warm(&mut self, f: usize, lpa: u32, sectors: u64) {
        if self.mode(f) == CacheMode::Off {
            return;
        }
        let p = &mut self.partitions[self.partition_of_flow[f]];
        if p.free() > 0 {
            p.fill(lpa, sectors, f as u16);
        }
    }

    pub(super) fn fill_fraction(&self) -> f64 {
        let (used, capacity) =
            self.partitions.iter().fold((0u64, 0u64), |(u, c), p| (u + p.used() as u64, c + p.capacity() as u64));
        used as f64 / capacity.max(1) as f64
    }
}
