//! Parallelism-aware read-ahead into the data cache (Amber's prefetcher; see docs/cache.md).
//!
//! Each flow has a sequential-stream detector: a read that starts where the flow's previous read
//! ended adds one to a counter, any other read resets it. Once the counter reaches
//! `cache.read_ahead_threshold`, the device keeps `read_ahead_pages` pages (rounded up to whole
//! lines) read ahead of the stream. The default window is one page per plane the flow's pages
//! stripe over, so a prefetch puts every die of the flow to work once, in parallel.
//!
//! A prefetch is a flash read of a whole page that serves no request: it is translated like any
//! read (a CMT miss waits for its translation page), scheduled with the flow's user reads, and
//! fills the cache when it lands. A host read that finds its page still being read ahead joins
//! that read instead of issuing its own: its data goes to the host when the page arrives, and
//! its latency breakdown is the prefetch's, from the moment it joined.

use rustc_hash::FxHashMap;

use super::mapping_path::NO_TXN;
use super::Simulation;
use crate::config::Config;
use crate::flash::SECTOR_BYTES;
use crate::ftl::transaction::{Transaction, TxnKind, NO_REQUEST};
use crate::stats::breakdown::{Breakdown, Step};
use crate::time::SimTime;

/// One flow's sequential-stream detector.
#[derive(Clone, Copy, Debug)]
struct Stream {
    /// The sector where the flow's last read ended.
    next_sector: u64,
    /// Consecutive reads that continued the previous one.
    run: u32,
    /// Pages below this one (and at or above where the stream is) have been prefetched.
    ahead_until: u64,
}

impl Default for Stream {
    /// Before the flow's first read: no read continues it.
    fn default() -> Self {
        Self { next_sector: u64::MAX, run: 0, ahead_until: 0 }
    }
}

/// A page being read ahead: its transaction, when it was issued, and the first host read
/// waiting for it (a list through the waiters' `next_waiting`).
#[derive(Clone, Copy, Debug)]
struct Inflight {
    txn: u32,
    issued_at: SimTime,
    first_waiter: u32,
}

pub(super) struct ReadAhead {
    enabled: bool,
    threshold: u32,
    /// `cache.read_ahead_pages`, or `None` for one page per plane of the flow's stripe.
    pages: Option<u32>,
    streams: Vec<Stream>,
    inflight: FxHashMap<u32, Inflight>,
}

impl ReadAhead {
    pub fn new(config: &Config) -> Self {
        let c = &config.cache;
        Self {
            enabled: c.read_ahead,
            threshold: c.read_ahead_threshold(),
            pages: c.read_ahead_pages,
            streams: vec![Stream::default(); if c.read_ahead { config.flows.len() } else { 0 }],
            inflight: FxHashMap::default(),
        }
    }

    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled
    }
}

/// The steps of a read transaction in the order they happen, to take a joining read's share of
/// a prefetch's time from the end. With the banked DRAM model a read spends `CacheDram` time
/// twice, reading its CMT entry first (a few ns) and storing the page in a DRAM buffer last;
/// both are in one step, placed last here since the buffer dominates.
const READ_STEPS: [Step; 7] = [
    Step::CmtMissWait,
    Step::ChipQueueWait,
    Step::Firmware,
    Step::CommandAddress,
    Step::CellOperation,
    Step::ChannelData,
    Step::CacheDram,
];

/// The part of `b` after its first `skip_ps` picoseconds.
fn after(b: &Breakdown, mut skip_ps: u64) -> Breakdown {
    let mut out = *b;
    for step in READ_STEPS {
        let cut = out.0[step as usize].min(skip_ps);
        out.0[step as usize] -= cut;
        skip_ps -= cut;
    }
    out
}

impl Simulation {
    /// A read of sectors `start..end` of `flow` has arrived: feed the flow's stream detector and,
    /// on a sequential stream, keep the window ahead of it prefetched.
    pub(super) fn read_ahead(&mut self, flow: usize, start: u64, end: u64) {
        let (threshold, pages) = (self.cache.read_ahead.threshold, self.cache.read_ahead.pages);
        let stream = &mut self.cache.read_ahead.streams[flow];
        if start == stream.next_sector {
            stream.run = stream.run.saturating_add(1);
        } else {
            *stream = Stream::default();
        }
        stream.next_sector = end;
        if stream.run < threshold || !self.cache.mode(flow).caches_reads() || !self.flows[flow].may_issue(self.now()) {
            return;
        }
        let spp = self.ftl.geometry.sectors_per_page;
        let p = self.cache.partition_of(flow);
        if self.cache.writes_wait(p) {
            // Writes wait for room: prefetched data would only take it from them.
            return;
        }
        let window = pages.map_or(self.ftl.placement.stripe(flow).len() as u64, u64::from);
        let line = self.config.cache.line_size.as_ref().map_or(1, |s| s.value / self.config.flash.page_size.value);
        let domain_first = self.flows[flow].domain_base_sector / spp;
        let domain_end = domain_first + self.ftl.placement.domain_pages();
        // The stream continues in the page where this read ended (or the next one).
        let next_page = end / spp;
        let target = ((next_page + window).div_ceil(line) * line).min(domain_end);
        let stream = &mut self.cache.read_ahead.streams[flow];
        let from = stream.ahead_until.max(next_page);
        stream.ahead_until = stream.ahead_until.max(target);
        let full = super::flash_path::sector_mask(0, spp as u32);
        for lpa in from..target {
            let lpa = lpa as u32;
            if self.cache.read_ahead.inflight.contains_key(&lpa)
                || !self.cache.partition(p).reserve_prefetch(lpa, full, flow as u16)
            {
                continue;
            }
            self.issue_prefetch(flow, lpa, spp as u32);
        }
    }

    fn issue_prefetch(&mut self, flow: usize, lpa: u32, sectors: u32) {
        let now = self.now();
        self.cache.counts[flow].prefetches_issued += 1;
        let id = self.insert_txn(Transaction::new(TxnKind::UserRead, NO_REQUEST, lpa, sectors, now).serving(
            flow as u16,
            self.flows[flow].priority as u8,
            0,
        ));
        self.cache.read_ahead.inflight.insert(lpa, Inflight { txn: id, issued_at: now, first_waiter: NO_TXN });
        self.start_user_page(id);
    }

    /// Whether a read of `lpa` may join the read-ahead of its page in flight (if any): not once
    /// a write has replaced the page in flash since the read-ahead was translated (it reads the
    /// older data; the host read must see the write, which completed before it was submitted,
    /// or is in flight and leaves the read undefined).
    pub(super) fn prefetch_is_current(&self, lpa: u32) -> bool {
        let Some(inflight) = self.cache.read_ahead.inflight.get(&lpa) else { return true };
        match self.read_translated_to(inflight.txn) {
            Some(translated) => self.ftl.map.lookup(lpa) == translated,
            // Not translated yet: it will read the current mapping.
            None => true,
        }
    }

    /// A host read of `covered` sectors from `first` of `lpa` found the page being read ahead:
    /// it waits for that read (one part of its request), with the sectors cached now laid over
    /// the page when it lands (`data_read_issued`).
    pub(super) fn wait_for_prefetch(&mut self, request: u32, flow: usize, lpa: u32, first: u64, covered: u32) {
        let id = self.insert_txn(Transaction::new(TxnKind::UserRead, request, lpa, covered, self.now()).serving(
            flow as u16,
            self.flows[flow].priority as u8,
            first as u16,
        ));
        let inflight = self.cache.read_ahead.inflight.get_mut(&lpa).expect("a pending page is being read ahead");
        self.txns.get_mut(id).next_waiting = inflight.first_waiter;
        inflight.first_waiter = id;
        self.data_read_issued(id, lpa);
    }

    /// A page read ahead has landed (transaction `id`, already removed; translated to
    /// `translated`, `UNMAPPED` for none): fill the cache and send the waiting reads their data
    /// (checked first, with `[data] emulate`).
    pub(super) fn on_prefetch_done(&mut self, id: u32, t: Transaction, translated: u32) {
        let (flow, lpa) = (t.flow as usize, t.lpa);
        let done = self.cache.read_ahead.inflight.remove(&lpa).expect("the prefetch was in flight");
        debug_assert_eq!(done.txn, id);
        let spp = self.ftl.geometry.sectors_per_page as u32;
        let p = self.cache.partition_of(flow);
        // A write placed on flash since the prefetch was translated makes the page read older
        // than flash: the reads that joined it still get it (they arrived before the write
        // completed), but the cache must not keep it.
        let stale = self.ftl.map.lookup(lpa) != translated;
        self.data_prefetch_done(&t, translated, done.first_waiter, stale);
        if stale {
            self.cache.partition(p).prefetch_dropped(lpa);
        } else {
            self.cache.partition(p).prefetch_done(lpa, super::flash_path::sector_mask(0, spp));
        }
        let prefetch_spent = self.spent[id as usize];
        let mut next = done.first_waiter;
        while next != NO_TXN {
            let w = self.txns.remove(next);
            next = w.next_waiting;
            let spent = after(&prefetch_spent, w.queued_at - done.issued_at);
            debug_assert_eq!(spent.total(), self.now() - w.queued_at, "a joining read's steps add up");
            let sent = self.send_read_data(w.sectors as u64 * SECTOR_BYTES);
            self.finish_part(w.request, &spent, sent);
        }
        if self.cache.writes_wait(p) {
            // The line may leave now: writes waiting for room may get it.
            self.admit_waiting_writes(p);
        }
    }
}
