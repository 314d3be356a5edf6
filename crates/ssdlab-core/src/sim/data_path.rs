//! Data transfer emulation on the request path (see `crate::data`): each hook is called where
//! the model moves data (a write placed, a GC move, an erase, a read done, a cache line written
//! or read) and does nothing unless `[data] emulate` is on. None of them changes timing.

use std::path::Path;

use super::flash_path::sector_mask;
use super::{Request, Simulation};
use crate::config::{Config, ConfigError};
use crate::data::{DataEmulation, ReadSource};
use crate::device::Op;
use crate::flash::Geometry;
use crate::ftl::mapping::UNMAPPED;
use crate::ftl::transaction::{Transaction, TxnKind, NO_REQUEST};
use crate::time::ps_to_seconds;

/// The emulation state `[data]` asks for, or `None` when it is off.
pub(super) fn build(
    config: &Config,
    geometry: &Geometry,
    base_dir: &Path,
    cache_partitions: usize,
) -> Result<Option<Box<DataEmulation>>, ConfigError> {
    let data = &config.data;
    if !data.emulate {
        return Ok(None);
    }
    let spill_dir = match &data.spill_dir {
        Some(dir) => {
            let dir = base_dir.join(dir);
            if !dir.is_dir() {
                return Err(ConfigError::new(
                    "data.spill_dir",
                    format!(
                        "{} is not a folder (create it, or leave the key out for the system's temporary folder)",
                        dir.display()
                    ),
                ));
            }
            dir
        }
        None => std::env::temp_dir(),
    };
    Ok(Some(Box::new(DataEmulation::new(
        config.seed,
        geometry.logical_pages,
        geometry.sectors_per_page,
        data.memory_limit.value,
        spill_dir,
        cache_partitions,
    ))))
}

impl Simulation {
    /// A host request entered its submission queue.
    pub(super) fn data_request_submitted(&mut self, request: u32) {
        if let Some(d) = self.data.as_deref_mut() {
            let r = self.requests.get(request);
            if self.flows[r.flow as usize].zoned {
                // Tracked once its zone has placed it (`zone_path`): an append's sectors are
                // not known before.
                d.request_submitted(request, Op::Flush, 0, 0);
            } else {
                d.request_submitted(request, r.op, r.start_sector, r.sectors);
            }
        }
    }

    /// A host request completed (`r` is the request, just removed as `request`).
    pub(super) fn data_request_completed(&mut self, request: u32, r: &Request) {
        if let Some(d) = self.data.as_deref_mut() {
            d.request_completed(request, r.op);
        }
    }

    /// A write was given physical page `new`; its logical page was at `old` (or `UNMAPPED`).
    pub(super) fn data_program(&mut self, t: &Transaction, old: u32, new: u32) {
        let Some(d) = self.data.as_deref_mut() else { return };
        let old = (old != UNMAPPED).then_some(old);
        match t.kind {
            TxnKind::UserWrite if t.request != NO_REQUEST => {
                let r = self.requests.get(t.request);
                d.program_host_write(old, new, t.lpa, t.request, r.start_sector, r.sectors);
            }
            TxnKind::UserWrite => {
                // A dirty cache line: what the line holds now (the host may have added to it
                // since the flush began; the line stays dirty then and is flushed again).
                let p = self.cache.partition_of(t.flow as usize);
                let mask = self.cache.partitions()[p].sectors_of(t.lpa);
                d.program_cache_line(old, new, p, t.lpa, mask);
            }
            // A super-page read-modify-write's copy of a page the update did not change.
            TxnKind::MergeWrite => {
                if let Some(old) = old {
                    d.move_page(old, new);
                }
            }
            // Translation pages hold the FTL's map, not host data.
            _ => {}
        }
    }

    /// GC or static wear leveling moved the page at `old` to `new`.
    pub(super) fn data_move(&mut self, old: u32, new: u32) {
        if let Some(d) = self.data.as_deref_mut() {
            d.move_page(old, new);
        }
    }

    /// The block whose first page is `first_ppa` was erased.
    pub(super) fn data_erase(&mut self, first_ppa: u32) {
        if let Some(d) = self.data.as_deref_mut() {
            d.erase(first_ppa, self.ftl.geometry.pages_per_block);
        }
    }

    /// User read `id` of page `lpa` was issued to the FTL (it missed the cache): the controller
    /// will merge the sectors cached now into the page it reads (`DataEmulation::snapshot_cached`).
    pub(super) fn data_read_issued(&mut self, id: u32, lpa: u32) {
        if let Some(d) = self.data.as_deref_mut() {
            let lines = self.cache.partitions().iter().enumerate().map(|(p, part)| (p, part.sectors_of(lpa)));
            d.snapshot_cached(id, lpa, lines);
        }
    }

    /// A user read's page came off flash: check it (with the sectors cached when it was issued
    /// laid over it: the newest data of a sector may be in a cache line, of this flow's
    /// partition or another's, and a controller must return it), then let the cache keep it as
    /// without emulation.
    /// `translated` is the page the read was translated to (`UNMAPPED`: none, it reads zeros).
    pub(super) fn data_flash_read_done(&mut self, id: u32, t: &Transaction, translated: u32) {
        let (flow, first, count) = (t.flow as usize, t.first_sector as usize, t.sectors as usize);
        let read_mask = sector_mask(first as u64, t.sectors);
        let Some(d) = self.data.as_deref_mut() else {
            self.fill_cache_after_read(t, translated);
            return;
        };
        let at = ps_to_seconds(self.queue.now());
        let p = self.cache.partition_of(flow);
        let source = d.load_flash_read((translated != UNMAPPED).then_some(translated));
        let from_cache = d.overlay_snapshot(id);
        d.check(t.request, t.lpa, first, count, source, from_cache, &self.flows[flow].name, at);
        if from_cache != 0 {
            // The cache keeps the page as flash holds it, not with the sectors cached when the
            // read was issued: a write may have replaced them since (forgetting them in the
            // cache) before the read was translated, to the page that write programmed; laid
            // over it, they would put the older data back into the cache.
            d.load_flash_read((translated != UNMAPPED).then_some(translated));
        }
        // What the cache keeps must not undo a write into it since the read was issued (the
        // read is undefined then, and not checked): the cached sectors now go over the page.
        overlay_cached_sectors(d, &self.cache, t.lpa);
        self.fill_cache_after_read(t, translated);
        let Some(d) = self.data.as_deref_mut() else { return };
        let part = &self.cache.partitions()[p];
        if part.sectors_of(t.lpa) & read_mask == read_mask {
            d.fill_cache_line(p, t.lpa, read_mask);
            d.sweep_cache_lines(p, part.capacity(), |lpa| part.contains(lpa));
        }
    }

    /// A page read ahead (translated to `translated`) came off flash: load it (zeros when the FTL
    /// had no mapping for it) and check each read that joined it (the list from
    /// `first_waiter`) with the sectors cached when it joined laid over it; then keep the page,
    /// with the sectors cached now over it (a write that arrived meanwhile is newer), as the
    /// line's bytes. Called before the cache marks the page's sectors held, so only sectors
    /// written meanwhile overlay.
    pub(super) fn data_prefetch_done(&mut self, t: &Transaction, translated: u32, first_waiter: u32, stale: bool) {
        let Some(d) = self.data.as_deref_mut() else { return };
        let at = ps_to_seconds(self.queue.now());
        let flash = (translated != UNMAPPED).then_some(translated);
        let mut next = first_waiter;
        while next != super::mapping_path::NO_TXN {
            let w = self.txns.get(next);
            let name = &self.flows[w.flow as usize].name;
            let source = d.load_flash_read(flash);
            let from_cache = d.overlay_snapshot(next);
            d.check(w.request, w.lpa, w.first_sector as usize, w.sectors as usize, source, from_cache, name, at);
            next = w.next_waiting;
        }
        if stale {
            // The cache drops the page (`CachePartition::prefetch_dropped`).
            return;
        }
        d.load_flash_read(flash);
        overlay_cached_sectors(d, &self.cache, t.lpa);
        // The line takes the whole page (`CachePartition::prefetch_done`, called next).
        let p = self.cache.partition_of(t.flow as usize);
        let part = &self.cache.partitions()[p];
        d.fill_cache_line(p, t.lpa, sector_mask(0, self.ftl.geometry.sectors_per_page as u32));
        d.sweep_cache_lines(p, part.capacity(), |lpa| part.contains(lpa));
    }

    /// A read of `count` sectors of page `lpa` from `first` on was served by the cache.
    pub(super) fn data_cache_read(&mut self, request: u32, lpa: u32, first: u64, count: u32) {
        let Some(d) = self.data.as_deref_mut() else { return };
        let at = ps_to_seconds(self.queue.now());
        let flow = self.requests.get(request).flow as usize;
        let p = self.cache.partition_of(flow);
        let source = d.load_cache_line(p, lpa);
        let all = sector_mask(first, count);
        d.check(request, lpa, first as usize, count as usize, source, all, &self.flows[flow].name, at);
    }

    /// Write `request` put its sectors of page `lpa` into a line of cache partition `p`.
    pub(super) fn data_cache_write(&mut self, request: u32, p: usize, lpa: u32) {
        let Some(d) = self.data.as_deref_mut() else { return };
        let r = self.requests.get(request);
        d.cache_write(p, lpa, request, r.start_sector, r.sectors);
        let part = &self.cache.partitions()[p];
        d.sweep_cache_lines(p, part.capacity(), |lpa| part.contains(lpa));
    }

    /// The error that makes the stored bytes unreliable (the spill file failed), if any.
    pub(super) fn data_error(&self) -> Option<ConfigError> {
        let e = self.data.as_deref()?.store.error()?;
        Some(ConfigError::new("data.spill_dir", e.to_string()))
    }

    /// What results.json `data` reports (with `[data] emulate`).
    pub(super) fn data_summary(&self) -> Option<crate::data::DataSummary> {
        self.data.as_deref().map(|d| d.summary())
    }

    pub(super) fn data_warnings(&self) -> Vec<String> {
        self.data.as_deref().map(|d| d.warnings()).unwrap_or_default()
    }

    /// The bytes a read of `sectors` sectors from `lba` would return now (only with `[data]
    /// emulate`): what the FTL maps, with cached sectors over it.
    pub fn read_back(&mut self, lba: u64, sectors: u32) -> Result<Vec<u8>, String> {
        let g = &self.ftl.geometry;
        let spp = g.sectors_per_page;
        let logical_sectors = g.logical_pages * spp;
        if sectors == 0 || lba.checked_add(sectors as u64).is_none_or(|end| end > logical_sectors) {
            return Err(format!(
                "sectors {lba}..{lba}+{sectors} are not within the device's {logical_sectors} sectors"
            ));
        }
        let Some(d) = self.data.as_deref_mut() else {
            return Err("data.emulate is off: the device keeps no bytes".to_string());
        };
        let end = lba + sectors as u64;
        let mut bytes = Vec::with_capacity(sectors as usize * crate::data::content::SECTOR);
        for lpa in lba / spp..=(end - 1) / spp {
            let ppa = self.ftl.map.lookup(lpa as u32);
            let _: ReadSource = d.load_flash_read((ppa != UNMAPPED).then_some(ppa));
            overlay_cached_sectors(d, &self.cache, lpa as u32);
            let first = lba.max(lpa * spp) - lpa * spp;
            let last = end.min((lpa + 1) * spp) - lpa * spp;
            bytes.extend_from_slice(d.page_sectors(first as usize, (last - first) as usize));
        }
        Ok(bytes)
    }

    /// Test hook: flips a byte of sector `lba` where the FTL maps it. Returns whether there was
    /// a stored page there (tests of the read check only).
    #[doc(hidden)]
    pub fn corrupt_stored_sector_for_test(&mut self, lba: u64) -> bool {
        let spp = self.ftl.geometry.sectors_per_page;
        let ppa = self.ftl.map.lookup((lba / spp) as u32);
        match self.data.as_deref_mut() {
            Some(d) if ppa != UNMAPPED => {
                d.store.corrupt(ppa as u64, (lba % spp) as usize * crate::data::content::SECTOR + 100)
            }
            _ => false,
        }
    }
}

/// Lays every cache line's sectors of page `lpa` over the page just read; returns the sectors
/// that came from the cache. Partitions agree on a sector they both hold: a write into one
/// takes the sector out of the others (`CacheState::forget`).
fn overlay_cached_sectors(d: &mut DataEmulation, cache: &super::cache_path::CacheState, lpa: u32) -> u64 {
    let mut from_cache = 0;
    for (p, part) in cache.partitions().iter().enumerate() {
        let mask = part.sectors_of(lpa);
        if mask != 0 {
            from_cache |= d.overlay_cache_line(p, lpa, mask);
        }
    }
    from_cache
}
