//! The data cache on a request's path: cached writes complete in DRAM (waiting for space when
//! the cache is full, while least recently used lines are flushed to flash), and reads of cached
//! sectors are served from DRAM.

use std::collections::VecDeque;

use super::flash_path::sector_mask;
use super::{Event, Simulation};
use crate::cache::destage::{BackgroundDestage, ColdDestage};
use crate::cache::{CachePartition, Eviction, Lookup, Writer};
use crate::config::{CacheMode, CacheShape, Config, Destage, Priority, Sharing};
use crate::engine::RandomStream;
use crate::flash::SECTOR_BYTES;
use crate::ftl::transaction::{Transaction, TxnKind, NO_REQUEST};
use crate::stats::breakdown::{Breakdown, Step};

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CacheCounts {
    pub read_lookups: u64,
    /// Lookups that found their sectors cached, or their page being read ahead.
    pub read_hits: u64,
    /// Page reads this flow's read-ahead issued, and prefetched pages its reads used.
    pub prefetches_issued: u64,
    pub prefetches_used: u64,
    /// Reads that found their page still being read ahead and waited for it.
    pub prefetch_waits: u64,
}

/// Random stream of partition `p`'s replacement choices.
const STREAM_CACHE: u64 = 0xCAC4E;

pub(super) struct CacheState {
    modes: Vec<CacheMode>,
    partitions: Vec<CachePartition>,
    partition_of_flow: Vec<usize>,
    /// Cached writes waiting for space, per partition, in arrival order.
    waiting: Vec<VecDeque<u32>>,
    pub counts: Vec<CacheCounts>,
    pub flushes: u64,
    /// Cold pages written through at once (`cache.destage = "cold-at-once"`).
    pub written_through: u64,
    pub writes_waited: u64,
    /// Sets that need room, with the lines they need (scratch of `make_room`).
    demand: Vec<(u32, u32)>,
    /// Sequential-stream detection and prefetches in flight (see `read_ahead.rs`).
    pub read_ahead: super::read_ahead::ReadAhead,
    /// `cache.destage = "cold-at-once"`: cold writes go to flash at once, under back-pressure.
    cold_destage: Option<ColdDestage>,
    /// `cache.destage = "background"`: dirty lines written back between watermarks and when idle.
    pub background: Option<BackgroundDestage>,
}

impl CacheState {
    pub fn new(config: &Config, geometry: &crate::flash::Geometry) -> Self {
        let flows = config.flows.len();
        let n = if config.cache.sharing == Sharing::Partitioned { flows } else { 1 };
        let shape = CacheShape::new(config, n as u32);
        let partitions: Vec<_> = (0..n)
            .map(|p| CachePartition::new(shape, RandomStream::new(config.seed, STREAM_CACHE + p as u64)))
            .collect();
        let partition_of_flow = if n == 1 { vec![0; flows] } else { (0..flows).collect() };
        Self {
            modes: config.flows.iter().map(|f| f.cache_mode.unwrap_or_default()).collect(),
            waiting: vec![VecDeque::new(); partitions.len()],
            partitions,
            partition_of_flow,
            counts: vec![CacheCounts::default(); flows],
            flushes: 0,
            written_through: 0,
            writes_waited: 0,
            demand: Vec::new(),
            read_ahead: super::read_ahead::ReadAhead::new(config),
            cold_destage: (config.cache.destage == Some(Destage::ColdAtOnce))
                .then(|| ColdDestage::new(flows, n, geometry.planes as u64, geometry.sectors_per_page)),
            background: (config.cache.destage.unwrap_or_default() == Destage::Background).then(|| {
                BackgroundDestage::new(
                    n,
                    shape.lines,
                    config.cache.dirty_watermarks(),
                    config.cache.destage_pages_in_flight.unwrap_or(geometry.planes),
                    config.cache.idle_destage_after_ps(),
                )
            }),
        }
    }

    #[inline]
    pub fn mode(&self, flow: usize) -> CacheMode {
        self.modes[flow]
    }

    /// Whether the cache holds all these sectors for a read of `flow`, or is reading the page
    /// ahead (counted as a lookup; a pending page counts as a hit: the read issues no flash read).
    /// A page read ahead is joined only if `join_pending` (its data is still current).
    pub fn read_lookup(&mut self, flow: usize, lpa: u32, sectors: u64, join_pending: bool) -> Lookup {
        let c = &mut self.counts[flow];
        c.read_lookups += 1;
        let part = &mut self.partitions[self.partition_of_flow[flow]];
        let used = part.counts.prefetches_used;
        let found = part.lookup_joining(lpa, sectors, join_pending);
        c.read_hits += u64::from(found != Lookup::Miss);
        c.prefetches_used += part.counts.prefetches_used - used;
        c.prefetch_waits += u64::from(found == Lookup::Pending);
        found
    }

    #[inline]
    pub fn partition_of(&self, flow: usize) -> usize {
        self.partition_of_flow[flow]
    }

    pub fn partition(&mut self, p: usize) -> &mut CachePartition {
        &mut self.partitions[p]
    }

    /// Whether partition `p` lets a host write in now (always, unless cold write-backs hold
    /// writes back).
    #[inline]
    fn admits(&self, p: usize) -> bool {
        self.cold_destage.as_ref().is_none_or(|d| d.admits(p))
    }

    /// Whether writes wait for space in partition `p`.
    pub fn writes_wait(&self, p: usize) -> bool {
        !self.waiting[p].is_empty()
    }

    /// Lines evicted, prefetched pages used, and prefetched pages never read (evicted unread
    /// or still unread now), over all partitions.
    pub fn totals(&self) -> (u64, u64, u64) {
        self.partitions.iter().fold((0, 0, 0), |(e, u, w), p| {
            (
                e + p.counts.evictions,
                u + p.counts.prefetches_used,
                w + p.counts.prefetches_evicted_unused + p.prefetched_unused(),
            )
        })
    }

    /// Sets and ways of each partition.
    pub fn sets_and_ways(&self) -> (u32, u32) {
        (self.partitions[0].sets(), self.partitions[0].ways())
    }

    /// Whether a flash read of `flow` would be kept ([`Self::fill_after_read`]): the flow
    /// caches reads and no writes wait for space.
    #[inline]
    pub fn keeps_read_fills(&self, flow: usize) -> bool {
        self.modes[flow].caches_reads() && self.waiting[self.partition_of_flow[flow]].is_empty()
    }

    /// Keeps what a flash read of a read-caching flow brought in, unless writes wait for space.
    pub fn fill_after_read(&mut self, flow: usize, lpa: u32, sectors: u64) {
        if self.keeps_read_fills(flow) {
            self.partitions[self.partition_of_flow[flow]].fill(lpa, sectors, flow as u16);
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

    /// Lines holding data not yet on flash (dirty, or being flushed), over all partitions.
    pub fn unflushed_lines(&self) -> u64 {
        self.partitions.iter().map(|p| p.unflushed_lines().count() as u64).sum()
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
        // A write touching more lines than the cache (or this flow's share) holds bypasses it.
        if self.cache.partitions[p].never_fits(self.request_lpas(request)) {
            return false;
        }
        if self.cache.waiting[p].is_empty()
            && self.cache.admits(p)
            && self.cache.partitions[p].fits(self.request_lpas(request))
        {
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
    pub(super) fn admit_waiting_writes(&mut self, p: usize) {
        while let Some(&request) = self.cache.waiting[p].front() {
            if !self.cache.admits(p) {
                // Cold write-backs are using the back end's budget: a flush completing calls
                // this again.
                return;
            }
            if !self.cache.partitions[p].fits(self.request_lpas(request)) {
                // Make room for every waiting write at once, so their flushes run in parallel
                // on the dies instead of one after another.
                for i in 0..self.cache.waiting[p].len() {
                    let lpas = self.request_lpas(self.cache.waiting[p][i]);
                    self.cache.partitions[p].add_demand(lpas);
                }
                self.make_room(p, request);
                if !self.cache.partitions[p].fits(self.request_lpas(request)) {
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
        let end = start + sectors as u64;
        (self.ftl.geometry.pages_of_sectors(start, end), start, end)
    }

    /// The logical pages a request touches.
    fn request_lpas(&self, request: u32) -> std::ops::RangeInclusive<u32> {
        let (pages, _, _) = self.request_pages(request);
        *pages.start() as u32..=*pages.end() as u32
    }

    /// Writes the request's sectors into cache lines and its data into DRAM; the request
    /// completes when the DRAM write is done.
    fn store_write(&mut self, request: u32, p: usize) {
        let writer = self.request_writer(request);
        let (pages, start, end) = self.request_pages(request);
        let spp = self.ftl.geometry.sectors_per_page;
        for lpa in pages {
            let page_start = lpa * spp;
            let first = start.max(page_start) - page_start;
            let covered = (end.min(page_start + spp) - page_start - first) as u32;
            self.cache.partitions[p].write(lpa as u32, sector_mask(first, covered), writer);
            if self.cache.partitions.len() > 1 {
                self.cache.forget(lpa as u32, sector_mask(first, covered), Some(p));
            }
            self.data_cache_write(request, p, lpa as u32);
        }
        if self.cache.cold_destage.is_some() {
            self.write_cold_pages_through(request, p);
        }
        self.destage_in_background();
        self.serve_from_cache(request, (end - start) * SECTOR_BYTES);
        self.set_pending(request, 1);
    }

    /// `cache.destage = "cold-at-once"`: the pages of a just-stored write that its flow has not
    /// written since its cold filter was cleared go to flash now (their lines stay cached until
    /// the writes land, then leave, as after an eviction).
    fn write_cold_pages_through(&mut self, request: u32, p: usize) {
        let flow = self.requests_flow(request);
        let now = self.now();
        let (pages, _, _) = self.request_pages(request);
        for lpa in pages {
            let destage = self.cache.cold_destage.as_mut().expect("checked by the caller");
            if destage.is_cold(flow, lpa as u32) {
                let first = self.cache.partitions[p].line_first_page(lpa as u32);
                let before = self.cache.flushes;
                self.flush_cache_line(p, first, false);
                self.cache.written_through += self.cache.flushes - before;
            }
        }
        self.cache.cold_destage.as_mut().expect("checked by the caller").after_write(flow, now);
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

    /// Evicts lines (in the replacement policy's order) from each set the waiting writes of
    /// partition `p` need, until they will fit once the flushes under way complete.
    fn make_room(&mut self, p: usize, request: u32) {
        let keep = self.request_lpas(request);
        let mut demand = std::mem::take(&mut self.cache.demand);
        self.cache.partitions[p].take_demand(&mut demand);
        for &(set, needed) in &demand {
            loop {
                let part = &self.cache.partitions[p];
                if part.set_free(set) + part.set_flushing(set) >= needed {
                    break;
                }
                match self.cache.partitions[p].evict_one(set, keep.clone()) {
                    Eviction::Freed => {}
                    Eviction::Flush { first_lpa, pages, writer } => self.flush_pages(p, first_lpa, pages, writer),
                    Eviction::Nothing => break,
                }
            }
        }
        self.cache.demand = demand;
    }

    /// Writes a dirty line to flash as an FTL-internal page write (a partial line is merged with
    /// the rest of the page by a read-modify-write, like any partial write).
    fn flush_line(&mut self, lpa: u32, sectors: u64, writer: Writer) {
        let flow = writer.flow;
        self.cache.flushes += 1;
        if let Some(d) = self.cache.cold_destage.as_mut() {
            d.started(self.cache.partition_of_flow[flow as usize], sectors.count_ones() as u64);
        }
        let id = self.insert_txn(
            Transaction::new(TxnKind::UserWrite, NO_REQUEST, lpa, sectors.count_ones(), self.now()).serving(
                flow,
                Priority::Medium as u8,
                sectors.trailing_zeros() as u16,
            ),
        );
        self.note_flush_placement(id, writer.handle);
        self.start_user_page(id);
    }

    /// A flushed page (`sectors` of it written) reached flash: its line's space is free once
    /// the line's last page is done; let waiting writes in, in order.
    pub(super) fn on_flush_done(&mut self, flow: usize, lpa: u32, sectors: u64) {
        let p = self.cache.partition_of_flow[flow];
        if let Some(d) = self.cache.cold_destage.as_mut() {
            d.finished(p, sectors);
        }
        if self.cache.partitions[p].writing_back(lpa) {
            self.cache.background.as_mut().expect("only background destaging writes back").in_flight_pages -= 1;
        }
        self.cache.partitions[p].flush_done(lpa);
        self.host_flush_progress(p, lpa);
        self.admit_waiting_writes(p);
        self.destage_in_background();
    }

    /// A host flush or a cold write-through: writes the dirty pages of partition `p`'s line
    /// (first page `first_lpa`) to flash now, when it is not already being flushed. With `keep`
    /// (a host flush under background destaging) the line stays cached, clean, as the
    /// background writer leaves its lines.
    pub(super) fn flush_cache_line(&mut self, p: usize, first_lpa: u32, keep: bool) {
        let Some((first, pages, writer)) = self.cache.partitions[p].start_flush(first_lpa, keep) else { return };
        if keep {
            self.cache.background.as_mut().expect("only background destaging keeps").in_flight_pages +=
                pages.count_ones();
        }
        self.flush_pages(p, first, pages, writer);
    }

    /// Issues the flash writes of line pages `pages` (bit i = logical page `first + i`).
    fn flush_pages(&mut self, p: usize, first: u32, pages: u64, writer: Writer) {
        let mut rest = pages;
        while rest != 0 {
            let lpa = first + rest.trailing_zeros();
            rest &= rest - 1;
            let sectors = self.cache.partitions[p].sectors_of(lpa);
            self.flush_line(lpa, sectors, writer);
        }
    }

    /// `cache.destage = "background"`: writes dirty lines back, oldest first, while a partition
    /// is above its high watermark (until its low one) or the host is idle, within the pages
    /// in flight allowed. A batch run whose workload is over starts none (as GC starts no new
    /// victim then): the run ends with the data in the cache, as before.
    pub(super) fn destage_in_background(&mut self) {
        let Some(d) = self.cache.background.as_ref() else { return };
        if !d.has_budget() {
            return;
        }
        let mut checked_workload = false;
        for p in 0..self.cache.partitions.len() {
            loop {
                let d = self.cache.background.as_mut().expect("checked above");
                if !d.has_budget() || !d.wants(p, self.cache.partitions[p].dirty_lines()) {
                    break;
                }
                if !checked_workload {
                    if self.workload_over() {
                        return;
                    }
                    checked_workload = true;
                }
                let Some((first, pages, writer)) = self.cache.partitions[p].start_destage() else { break };
                let d = self.cache.background.as_mut().expect("checked above");
                let n = pages.count_ones();
                d.in_flight_pages += n;
                d.destaged_pages += n as u64;
                if d.idle {
                    d.destaged_when_idle += n as u64;
                }
                self.flush_pages(p, first, pages, writer);
            }
        }
    }

    /// The device has just emptied of host commands: under background destaging, check after
    /// `cache.idle_destage_after` whether the host is still idle.
    pub(super) fn device_emptied(&mut self) {
        let Some(d) = self.cache.background.as_ref() else { return };
        if d.check_pending || self.cache.partitions.iter().all(|p| p.dirty_lines() == 0) || self.workload_over() {
            return;
        }
        let at = self.now() + d.idle_after_ps;
        self.cache.background.as_mut().expect("checked above").check_pending = true;
        self.queue.schedule(at, Event::CacheIdleCheck);
    }

    /// A host command entered an empty device: the host is busy again.
    #[inline]
    pub(super) fn device_busy(&mut self) {
        if let Some(d) = self.cache.background.as_mut() {
            d.idle = false;
        }
    }

    /// The idle check is due: if no host command has been in the device since
    /// `cache.idle_destage_after` ago, write every dirty line back; if the device emptied
    /// again more recently, check again then.
    pub(super) fn on_cache_idle_check(&mut self) {
        let now = self.now();
        let emptied_at = self.gap_start;
        let busy = self.requests_in_device > 0;
        let d = self.cache.background.as_mut().expect("scheduled under background destaging");
        d.check_pending = false;
        if busy {
            // Its completion that empties the device schedules the next check.
            return;
        }
        if now - emptied_at >= d.idle_after_ps {
            d.idle = true;
            self.destage_in_background();
        } else {
            d.check_pending = true;
            let at = emptied_at + d.idle_after_ps;
            self.queue.schedule(at, Event::CacheIdleCheck);
        }
    }
}

/// What data emulation needs to see (see `data_path`).
impl CacheState {
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
        self.partitions[self.partition_of_flow[f]].warm(lpa, sectors, f as u16);
    }

    pub(super) fn fill_fraction(&self) -> f64 {
        let (used, capacity) =
            self.partitions.iter().fold((0u64, 0u64), |(u, c), p| (u + p.used() as u64, c + p.capacity() as u64));
        used as f64 / capacity.max(1) as f64
    }
}
