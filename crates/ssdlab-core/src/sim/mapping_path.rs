//! Address translation through the cached mapping table (CMT): lookups, misses that wait for a
//! translation-page read, dirty evictions that write translation pages back, and the map updates
//! GC makes while moving pages.

use rustc_hash::FxHashMap;

use super::Simulation;
use crate::config::{Config, GcMapUpdates, Sharing, TranslationWriteBack};
use crate::engine::Divisor;
use crate::flash::Geometry;
use crate::ftl::cmt::{CmtPartition, Evicted};
use crate::ftl::mapping::UNMAPPED;
use crate::ftl::transaction::{Class, Transaction, TxnKind, NO_REQUEST};
use crate::stats::breakdown::Step;

pub(super) use crate::ftl::transaction::NO_TXN;

/// Per-flow counts of CMT lookups. `misses = lookups - hits` by construction.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CmtCounts {
    pub lookups: u64,
    pub hits: u64,
}

pub(super) struct MappingState {
    ideal: bool,
    partitions: Vec<CmtPartition>,
    partition_of_flow: Vec<usize>,
    /// Write-back epoch of each translation page (see `ftl::cmt`).
    epochs: Vec<u32>,
    /// Entries of each translation page in the CMT (all partitions): what a dirty eviction's
    /// write-back walks, in the firmware model.
    cached_per_tpage: Vec<u32>,
    /// Translation page -> first user page waiting for its read (list through `next_waiting`).
    waiting: FxHashMap<u32, u32>,
    /// Mapping entries per translation page (a mask and shift for a power of two).
    per_tpage: Divisor,
    pub counts: Vec<CmtCounts>,
    /// `ftl.translation_write_back = "hold-in-dram"`: translation pages written back are kept
    /// in DRAM for good (empty otherwise).
    departing: Vec<bool>,
    hold_in_dram: bool,
    /// `ftl.reads_map_unwritten_pages`.
    reads_map_unwritten: bool,
    /// `ftl.gc_map_updates = "journal"`: GC updates of uncached entries logged since the last
    /// journal page was written, and the translation page the next one checkpoints.
    journal: Option<MappingJournal>,
}

/// The mapping journal of `ftl.gc_map_updates = "journal"`: a filled journal page is folded
/// into a translation page, taken in turn, which is written back.
#[derive(Clone, Copy, Debug, Default)]
struct MappingJournal {
    entries: u32,
    next_tpage: u32,
}

impl MappingState {
    pub fn new(config: &Config, geometry: &Geometry) -> Self {
        let flows = config.flows.len();
        let entries = (config.ftl.cmt_capacity.value / crate::config::mapping::entry_bytes(config).0) as u32;
        let (partitions, partition_of_flow) = match config.ftl.cmt_sharing {
            Sharing::Shared => (vec![CmtPartition::new(entries)], vec![0; flows]),
            Sharing::Partitioned => {
                ((0..flows).map(|_| CmtPartition::new(entries / flows as u32)).collect(), (0..flows).collect())
            }
        };
        Self {
            ideal: config.ftl.ideal_mapping || config.ftl.mapping != crate::config::MappingFamily::Page,
            partitions,
            partition_of_flow,
            epochs: vec![0; geometry.translation_pages as usize],
            cached_per_tpage: vec![0; geometry.translation_pages as usize],
            waiting: FxHashMap::default(),
            per_tpage: Divisor::new(geometry.entries_per_translation_page),
            counts: vec![CmtCounts::default(); flows],
            departing: Vec::new(),
            hold_in_dram: config.ftl.translation_write_back == Some(TranslationWriteBack::HoldInDram),
            reads_map_unwritten: config.ftl.reads_map_unwritten_pages == Some(true),
            journal: (config.ftl.gc_map_updates == GcMapUpdates::Journal).then_some(MappingJournal::default()),
        }
    }
}

impl MappingState {
    /// Every lookup hits (`ftl.ideal_mapping`, or a mapping family that keeps its table in DRAM).
    pub fn is_ideal(&self) -> bool {
        self.ideal
    }

    /// The firmware model's view of a lookup of `lpa` for `flow` about to run: `None` for a hit,
    /// or `Some(entries)` for a miss, with the CMT entries its eviction's write-back walks (0
    /// when the entry it pushes out is clean or nothing is pushed out).
    pub fn miss_work(&self, flow: usize, lpa: u32) -> Option<u32> {
        let p = &self.partitions[self.partition_of_flow[flow]];
        if self.ideal || p.contains(lpa) {
            return None;
        }
        Some(match p.would_evict(lpa, &self.epochs, self.per_tpage) {
            Evicted::Dirty { tpage } => self.cached_per_tpage[tpage as usize],
            Evicted::None | Evicted::Clean => 0,
        })
    }

    /// Translation pages being read for waiting host pages.
    pub fn pending_reads(&self) -> usize {
        self.waiting.len()
    }
}

impl Simulation {
    /// A new page of a host request: translate its address, through the CMT unless it is ideal.
    /// With the banked DRAM model the lookup first reads the entry from DRAM.
    pub(super) fn start_user_page(&mut self, id: u32) {
        if self.dram.detailed() {
            self.read_cmt_entry(id);
            return;
        }
        self.translate_user_page(id);
    }

    /// Looks the page up in the CMT (a hit, or a miss that waits for its translation page).
    pub(super) fn translate_user_page(&mut self, id: u32) {
        let t = *self.txns.get(id);
        let flow = t.flow as usize;
        let m = &mut self.mapping;
        m.counts[flow].lookups += 1;
        if m.ideal || m.partitions[m.partition_of_flow[flow]].touch(t.lpa) {
            m.counts[flow].hits += 1;
            self.resolve_user_page(id);
            return;
        }
        let tpage = m.per_tpage.div_u32(t.lpa);
        let tlpa = self.ftl.geometry.translation_lpa(tpage);
        // Held in DRAM since its write-back (`hold-in-dram`; while the write-back's merge read
        // is under way a miss waits for it, as MQSim's arriving entries come first), or never
        // written (the whole range is unmapped, and the controller knows it from the
        // directory): the entries are known without reading flash.
        let held = m.departing.get(tpage as usize).copied().unwrap_or(false) && !m.waiting.contains_key(&tpage);
        if held || self.ftl.map.lookup(tlpa) == UNMAPPED {
            self.cache_entry(flow, t.lpa);
            self.resolve_user_page(id);
            return;
        }
        let first_waiter = self.mapping.waiting.insert(tpage, id);
        self.txns.get_mut(id).next_waiting = first_waiter.unwrap_or(NO_TXN);
        if first_waiter.is_none() {
            let ppa = self.ftl.map.lookup(tlpa);
            // Only the entry is needed: one sector crosses the channel.
            self.queue_txn(TxnKind::MappingRead, NO_REQUEST, tlpa, ppa, 1);
        }
    }

    /// The translation page is in the controller: cache the entries and release the waiters.
    pub(super) fn on_mapping_read_done(&mut self, tlpa: u32) {
        let tpage = (tlpa as u64 - self.ftl.geometry.logical_pages) as u32;
        self.ftl.stats.mapping_reads += 1;
        let now = self.now();
        let mut next = self.mapping.waiting.remove(&tpage).unwrap_or(NO_TXN);
        while next != NO_TXN {
            let id = next;
            let t = self.txns.get_mut(id);
            next = t.next_waiting;
            t.next_waiting = NO_TXN;
            let waited = now - t.queued_at;
            t.queued_at = now;
            self.spent[id as usize].add(Step::CmtMissWait, waited);
            let t = self.txns.get(id);
            let (flow, lpa) = (t.flow as usize, t.lpa);
            self.cache_entry(flow, lpa);
            self.resolve_user_page(id);
        }
    }

    /// The mapping of a user page is known: queue its flash work.
    fn resolve_user_page(&mut self, id: u32) {
        let t = *self.txns.get(id);
        let spp = self.ftl.geometry.sectors_per_page as u32;
        match t.kind {
            TxnKind::UserRead => {
                if self.mapping.reads_map_unwritten && self.ftl.map.lookup(t.lpa) == UNMAPPED {
                    // MQSim maps the page the read goes to: the cached entry is now dirty.
                    self.note_host_map_update(t.flow as usize, t.lpa);
                }
                self.pin_read(id, t.lpa);
                let ppa = self.ftl.read_target(t.lpa, t.flow as usize);
                let g = &self.ftl.geometry;
                let plane = g.plane_of_block(g.block_of_ppa(ppa));
                let tx = self.txns.get_mut(id);
                tx.ppa = ppa;
                tx.plane = plane;
                self.push_to_die(id, Class::UserRead, plane);
            }
            TxnKind::UserWrite => {
                let g = &self.ftl.geometry;
                let old = self.ftl.map.lookup(t.lpa);
                if t.sectors < spp && old != UNMAPPED {
                    // A partial-page update: read the sectors it does not overwrite first.
                    self.ftl.stats.rmw_reads += 1;
                    let plane = g.plane_of_block(g.block_of_ppa(old));
                    let tx = self.txns.get_mut(id);
                    *tx = Transaction { kind: TxnKind::RmwRead, ppa: old, plane, sectors: spp - t.sectors, ..t };
                    self.push_to_die(id, Class::UserRead, plane);
                } else {
                    let plane = self.write_plane(t.flow as usize, t.lpa);
                    let tx = self.txns.get_mut(id);
                    tx.plane = plane;
                    tx.sectors = spp;
                    self.enqueue_write(id);
                }
            }
            other => unreachable!("only host pages are translated, not {other:?}"),
        }
    }

    /// Caches `lpa` for `flow`; a dirty entry pushed out is written back.
    fn cache_entry(&mut self, flow: usize, lpa: u32) {
        let m = &mut self.mapping;
        let p = m.partition_of_flow[flow];
        if let Evicted::Dirty { tpage } = m.partitions[p].insert(lpa, &m.epochs, m.per_tpage, &mut m.cached_per_tpage) {
            self.write_back_translation_page(tpage);
        }
    }

    /// A host write changed `lpa`'s mapping: its cached entry is now dirty.
    pub(super) fn note_host_map_update(&mut self, flow: usize, lpa: u32) {
        if self.mapping.ideal {
            return;
        }
        self.cache_entry(flow, lpa);
        let m = &mut self.mapping;
        let epoch = m.epochs[m.per_tpage.div_u32(lpa) as usize];
        m.partitions[m.partition_of_flow[flow]].mark_dirty(lpa, epoch);
    }

    /// GC moved `lpa`: a cached entry becomes dirty. An uncached one goes to the mapping
    /// journal (`ftl.gc_map_updates = "journal"`: one translation page written per journal page
    /// filled), or into the CMT as dirty (`cached`), written back with its translation page when
    /// evicted. Writing each touched translation page after every victim instead can cost more
    /// pages than the victim frees on a small device, and GC would never catch up.
    pub(super) fn note_gc_map_update(&mut self, lpa: u32) {
        // Translation pages themselves are tracked by the directory in DRAM.
        if self.mapping.ideal || lpa as u64 >= self.ftl.geometry.logical_pages {
            return;
        }
        let m = &mut self.mapping;
        let epoch = m.epochs[m.per_tpage.div_u32(lpa) as usize];
        if let Some(p) = m.partitions.iter_mut().find(|p| p.contains(lpa)) {
            p.mark_dirty(lpa, epoch);
            return;
        }
        if let Some(journal) = &mut m.journal {
            journal.entries += 1;
            if u64::from(journal.entries) < m.per_tpage.value() {
                return;
            }
            let tpage = journal.next_tpage;
            journal.entries = 0;
            journal.next_tpage = (tpage + 1) % m.epochs.len() as u32;
            self.write_back_translation_page(tpage);
            return;
        }
        // Not cached: partitions are per flow, and GC does not know the flow; spread by address.
        let p = lpa as usize % m.partitions.len();
        if let Evicted::Dirty { tpage } = m.partitions[p].insert(lpa, &m.epochs, m.per_tpage, &mut m.cached_per_tpage) {
            self.write_back_translation_page(tpage);
        }
        let m = &mut self.mapping;
        let epoch = m.epochs[m.per_tpage.div_u32(lpa) as usize];
        m.partitions[p].mark_dirty(lpa, epoch);
    }

    fn write_back_translation_page(&mut self, tpage: u32) {
        self.mapping.epochs[tpage as usize] += 1;
        if self.mapping.hold_in_dram {
            self.hold_translation_page(tpage);
            return;
        }
        let g = &self.ftl.geometry;
        let lpa = g.translation_lpa(tpage);
        let plane = self.ftl.home_plane(lpa as u64);
        let id = self.insert_txn(
            Transaction::new(TxnKind::MappingWrite, NO_REQUEST, lpa, g.sectors_per_page as u32, self.now())
                .at(UNMAPPED, plane),
        );
        self.enqueue_write(id);
    }

    /// `ftl.translation_write_back = "hold-in-dram"` (MQSim): the write-back reads the page to
    /// merge its clean entries (one sector crosses the channel, as for a miss), then the page
    /// stays in DRAM for good, since its program is queued where no scheduler looks.
    fn hold_translation_page(&mut self, tpage: u32) {
        let m = &mut self.mapping;
        if m.departing.is_empty() {
            m.departing = vec![false; self.ftl.geometry.translation_pages as usize];
        }
        m.departing[tpage as usize] = true;
        let tlpa = self.ftl.geometry.translation_lpa(tpage);
        let ppa = self.ftl.map.lookup(tlpa);
        if ppa != UNMAPPED {
            // Misses on the page wait for this read (they join the list of a read already
            // under way, if there is one).
            m.waiting.entry(tpage).or_insert(NO_TXN);
            // Counted with the translation-page reads when it completes, as MQSim counts it.
            self.queue_txn(TxnKind::MappingRead, NO_REQUEST, tlpa, ppa, 1);
        }
    }
}

/// Warming for steady-state preconditioning (see `precondition_path`).
impl MappingState {
    /// Draws worth making to fill flow `f`'s partition (0 with an ideal table).
    pub(super) fn warm_draws(&self, f: usize) -> u64 {
        if self.ideal {
            0
        } else {
            4 * self.partitions[self.partition_of_flow[f]].capacity() as u64
        }
    }

    pub(super) fn warm(&mut self, f: usize, lpa: u32) {
        if self.ideal {
            return;
        }
        let p = &mut self.partitions[self.partition_of_flow[f]];
        if p.len() < p.capacity() as usize && !p.contains(lpa) {
            let evicted = p.insert(lpa, &self.epochs, self.per_tpage, &mut self.cached_per_tpage);
            debug_assert!(!matches!(evicted, Evicted::Dirty { .. }));
        }
    }

    pub(super) fn fill_fraction(&self) -> f64 {
        if self.ideal {
            return 0.0;
        }
        let (used, capacity) =
            self.partitions.iter().fold((0u64, 0u64), |(u, c), p| (u + p.len() as u64, c + p.capacity() as u64));
        used as f64 / capacity.max(1) as f64
    }
}
