//! Data transfer emulation (`[data] emulate = true`, docs/data-emulation.md): the device keeps
//! the bytes the host writes where the FTL puts them, and every host read is checked against
//! what the host last wrote, so a mapping that points at the wrong page, a lost GC move or an
//! erase of live data shows as wrong bytes.
//!
//! - Flash content is keyed by physical page: a host write stores its page at the physical
//!   page the FTL allocated (merged with the page's current content when it covers part of it),
//!   a GC or wear-leveling move copies the old physical page to the new one, an erase drops
//!   the block's pages, and a host read returns what is stored at the physical page its
//!   translation gave (zeros for a page never mapped).
//! - The data cache keeps the bytes of its lines too; a read returns cached sectors over what
//!   flash holds, as a controller must, and a flush programs the line's bytes.
//! - The bytes come from `content`: a function of (seed, LBA, write version); the host side
//!   (`shadow`) keeps only a version per sector. `store` bounds the memory pages take and
//!   spills the rest to a file.
//!
//! Nothing here changes timing: the same run with and without emulation gives the same results
//! besides the `data` section.

pub mod content;
pub mod shadow;
pub mod store;

use std::path::PathBuf;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use crate::device::Op;
use content::{describe, fill_sector, sector_matches, SECTOR};
use shadow::{Shadow, AMBIGUOUS};
use store::PageStore;

/// Store keys of cache lines are apart from physical page numbers (which are below 2^32).
const CACHE_KEY: u64 = 1 << 63;

fn cache_key(partition: usize, lpa: u32) -> u64 {
    CACHE_KEY | (partition as u64) << 32 | lpa as u64
}

/// results.json `data`: what the read checks found and what the store holds at the end.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DataSummary {
    /// Sectors host reads returned that matched the host's last write to them (zeros if none).
    pub verified_sectors: u64,
    /// Sectors host reads returned that did not.
    pub mismatched_sectors: u64,
    /// Sectors host reads returned whose content the host's order leaves undefined, so they
    /// were not checked: a host write to their page was submitted or in flight while the read
    /// was, or their last writes were in flight together.
    pub skipped_sectors: u64,
    /// Pages whose bytes are stored at the end (flash pages and cache lines).
    pub stored_pages: u64,
    /// Of those, pages in the spill file (beyond `data.memory_limit`).
    pub spilled_pages: u64,
    /// Memory the stored pages take, bytes.
    pub memory_bytes: u64,
    /// The first sector that did not match, or null.
    pub first_mismatch: Option<DataMismatch>,
}

/// Where and what the first wrong sector was.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DataMismatch {
    /// The sector's address (in the device's logical space).
    pub lba: u64,
    /// Where its bytes came from: "flash" (physical page `ppa`), "cache" (a cache line) or
    /// "unmapped" (the FTL had no mapping; zeros).
    pub source: String,
    /// The physical page read ("flash" only).
    pub ppa: Option<u64>,
    /// The flow whose read it was.
    pub flow: String,
    pub expected: String,
    pub found: String,
    /// Simulated time of the read, seconds.
    pub at_seconds: f64,
}

/// Where the bytes of a page read came from.
#[derive(Clone, Copy, Debug)]
pub enum ReadSource {
    Flash(u32),
    Unmapped,
    Cache,
}

/// Where a write's bytes come from.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Content {
    /// `content::fill_sector` of the write's version: what the read checks expect.
    #[default]
    Generated,
    /// Zeros (a write-zeroes command).
    Zeros,
    /// The outside host's bytes (`payloads`): kept and returned, not checked (the host has them).
    Host,
}

#[derive(Clone, Copy, Default)]
struct RequestData {
    /// Write version of a write; the shadow's clock at submission for a read.
    version: u32,
    since: u64,
    content: Content,
    /// First sector of the request (where a read's returned bytes start).
    start_sector: u64,
    /// The sectors the shadow tracks for it (a trim: its whole pages only).
    tracked: (u64, u32),
    /// A trim the device refused: it changes nothing.
    refused: bool,
}

/// The stored bytes, the host's shadow and the check counts.
pub struct DataEmulation {
    seed: u64,
    sectors_per_page: usize,
    pub store: PageStore,
    shadow: Shadow,
    requests: Vec<RequestData>,
    /// Per cache partition, the pages whose line bytes are stored (swept for dropped lines).
    cached: Vec<FxHashSet<u32>>,
    /// Per user-read transaction in flight: the sectors of its page the cache held when the
    /// read was issued, and their bytes (see [`Self::snapshot_cached`]).
    snapshots: FxHashMap<u32, (u64, Box<[u8]>)>,
    /// Host-supplied bytes of writes in flight, by request.
    payloads: FxHashMap<u32, Box<[u8]>>,
    /// Bytes of outside hosts' reads in flight, by request, filled as their pages are read.
    read_bytes: FxHashMap<u32, Vec<u8>>,
    page: Vec<u8>,
    line: Vec<u8>,
    sector: Vec<u8>,
    verified: u64,
    mismatched: u64,
    skipped: u64,
    first_mismatch: Option<DataMismatch>,
}

impl DataEmulation {
    pub fn new(
        seed: u64,
        logical_pages: u64,
        sectors_per_page: u64,
        memory_limit_bytes: u64,
        spill_dir: PathBuf,
        cache_partitions: usize,
    ) -> Self {
        let page_bytes = sectors_per_page as usize * SECTOR;
        Self {
            seed,
            sectors_per_page: sectors_per_page as usize,
            store: PageStore::new(page_bytes, memory_limit_bytes, spill_dir),
            shadow: Shadow::new(logical_pages, sectors_per_page),
            requests: Vec::new(),
            cached: vec![FxHashSet::default(); cache_partitions],
            snapshots: FxHashMap::default(),
            payloads: FxHashMap::default(),
            read_bytes: FxHashMap::default(),
            page: vec![0; page_bytes],
            line: vec![0; page_bytes],
            sector: vec![0; SECTOR],
            verified: 0,
            mismatched: 0,
            skipped: 0,
            first_mismatch: None,
        }
    }

    pub fn summary(&self) -> DataSummary {
        DataSummary {
            verified_sectors: self.verified,
            mismatched_sectors: self.mismatched,
            skipped_sectors: self.skipped,
            stored_pages: self.store.stored_pages(),
            spilled_pages: self.store.spilled_pages(),
            memory_bytes: self.store.memory_bytes(),
            first_mismatch: self.first_mismatch.clone(),
        }
    }

    /// A host request entered its submission queue. A flush names no sector; a trim is
    /// tracked as a write of zeros to the whole pages it deallocates.
    pub fn request_submitted(&mut self, request: u32, op: Op, start_sector: u64, sectors: u32) {
        if request as usize >= self.requests.len() {
            self.requests.resize(request as usize + 1, RequestData::default());
        }
        let tracked = match op {
            Op::Trim | Op::ZoneReset => {
                let spp = self.sectors_per_page as u64;
                let first = start_sector.div_ceil(spp) * spp;
                let last = (start_sector + sectors as u64) / spp * spp;
                (first, last.saturating_sub(first) as u32)
            }
            _ => (start_sector, sectors),
        };
        let mut data = RequestData { start_sector, tracked, ..RequestData::default() };
        match op {
            Op::Read => data.since = self.shadow.now(),
            Op::Flush | Op::ZoneOpen | Op::ZoneClose | Op::ZoneFinish => data.tracked = (0, 0),
            Op::Trim | Op::ZoneReset if tracked.1 == 0 => {}
            Op::Write | Op::WriteZeroes | Op::Trim | Op::ZoneAppend | Op::ZoneReset => {
                data.version = self.shadow.write_submitted(tracked.0, tracked.1);
                if !op.carries_data() {
                    data.content = Content::Zeros;
                }
            }
        }
        self.requests[request as usize] = data;
    }

    /// A zone reset unmapped these sectors (whole pages): they read as zeros from now on. The
    /// reset takes effect when the zone applies it, not when its erases finish, so it is a
    /// write submitted and completed at once.
    pub fn zone_reset(&mut self, start_sector: u64, sectors: u32) {
        if sectors > 0 {
            self.shadow.write_submitted(start_sector, sectors);
            self.shadow.write_completed(start_sector, sectors, content::UNWRITTEN);
        }
    }

    /// A zoned namespace's request reached its zone (`sim/zone_path.rs`): it is tracked from
    /// now on at its device (dense) sectors, with `op` saying what it does there (a flush-like
    /// no-op for one the zone refused). Host bytes it carries stay with it.
    pub fn request_arrived_at_zone(&mut self, request: u32, op: Op, start_sector: u64, sectors: u32) {
        let host = self.requests[request as usize].content == Content::Host;
        self.request_submitted(request, op, start_sector, sectors);
        if host && op.carries_data() {
            self.requests[request as usize].content = Content::Host;
        }
    }

    /// Page `lpa` starts with `bytes` (a whole page from a backing file) at physical page `ppa`.
    pub fn load_page(&mut self, lpa: u32, ppa: u32, bytes: &[u8]) {
        self.store.write(ppa as u64, bytes);
        self.shadow.mark_unchecked(lpa);
    }

    /// Trim `request` was refused (the mapping has no page to unmap): its sectors keep their data.
    pub fn trim_refused(&mut self, request: u32) {
        self.requests[request as usize].refused = true;
    }

    /// An outside host's write `request` carries these bytes (its sectors x 512).
    pub fn set_host_bytes(&mut self, request: u32, bytes: &[u8]) {
        self.requests[request as usize].content = Content::Host;
        self.payloads.insert(request, bytes.into());
    }

    /// An outside host's read `request` wants its bytes back (`take_read_bytes`).
    pub fn want_read_bytes(&mut self, request: u32, sectors: u32) {
        self.read_bytes.insert(request, vec![0; sectors as usize * SECTOR]);
    }

    /// The bytes read `request` returned (with `want_read_bytes`).
    pub fn take_read_bytes(&mut self, request: u32) -> Option<Vec<u8>> {
        self.read_bytes.remove(&request)
    }

    /// A host request's completion reached the host: the sectors a write (or trim) stored now
    /// hold its version (zeros for a trim or write-zeroes; unchecked for host bytes).
    pub fn request_completed(&mut self, request: u32, op: Op) {
        let data = self.requests[request as usize];
        if matches!(op, Op::Read | Op::Flush) || op.is_zone_management() && op != Op::ZoneReset || data.tracked.1 == 0 {
            return;
        }
        if data.refused {
            self.shadow.write_abandoned(data.tracked.0, data.tracked.1);
            return;
        }
        let version = match data.content {
            Content::Generated => data.version,
            Content::Zeros => content::UNWRITTEN,
            Content::Host => AMBIGUOUS,
        };
        self.shadow.write_completed(data.tracked.0, data.tracked.1, version);
        self.payloads.remove(&request);
    }

    /// Stores at `key` the page's content there (or at `from` first, if given) with host write
    /// `request`'s sectors (`start..start + sectors`) of page `lpa` over it.
    fn store_write(&mut self, key: u64, from: Option<Option<u32>>, request: u32, lpa: u32, start: u64, sectors: u32) {
        match from {
            Some(Some(old)) => self.store.copy(old as u64, key, &mut self.line),
            Some(None) => self.store.remove(key),
            None => {}
        }
        let data = self.requests[request as usize];
        let (seed, version) = (self.seed, data.version);
        let spp = self.sectors_per_page as u64;
        let page_start = lpa as u64 * spp;
        let first = start.max(page_start);
        let last = (start + sectors as u64).min(page_start + spp);
        let payload = self.payloads.get(&request);
        self.store.update(key, &mut self.line, |page| {
            for lba in first..last {
                let at = (lba - page_start) as usize * SECTOR;
                let sector = &mut page[at..at + SECTOR];
                match (data.content, payload) {
                    (Content::Host, Some(bytes)) => {
                        let from = (lba - data.start_sector) as usize * SECTOR;
                        sector.copy_from_slice(&bytes[from..from + SECTOR]);
                    }
                    (Content::Zeros, _) => sector.fill(0),
                    // An AMBIGUOUS version (past the last) writes a valid-looking but unchecked sector.
                    _ => fill_sector(seed, lba, version, sector),
                }
            }
        });
    }

    /// A host write of page `lpa` was given physical page `new` (the page was at `old`, or
    /// nowhere if `old` is `None`): the new page holds the old content with the write's sectors.
    pub fn program_host_write(&mut self, old: Option<u32>, new: u32, lpa: u32, request: u32, start: u64, sectors: u32) {
        self.store_write(new as u64, Some(old), request, lpa, start, sectors);
    }

    /// A dirty cache line of partition `partition` was given physical page `new`: the line's
    /// sectors (`mask`) over the page's old content.
    pub fn program_cache_line(&mut self, old: Option<u32>, new: u32, partition: usize, lpa: u32, mask: u64) {
        match old {
            Some(old) => self.store.copy(old as u64, new as u64, &mut self.line),
            None => self.store.remove(new as u64),
        }
        self.store.read(cache_key(partition, lpa), &mut self.page);
        let line = &self.page;
        self.store.update(new as u64, &mut self.line, |page| overlay(page, line, mask));
    }

    /// GC or wear leveling moved the page at `old` to `new`.
    pub fn move_page(&mut self, old: u32, new: u32) {
        self.store.copy(old as u64, new as u64, &mut self.line);
    }

    /// A block was erased: its pages hold nothing.
    pub fn erase(&mut self, first_ppa: u32, pages: u32) {
        for ppa in first_ppa..first_ppa + pages {
            self.store.remove(ppa as u64);
        }
    }

    /// The page a user read got from flash, into `self.page`: what is stored at `ppa`, or
    /// zeros when the FTL had no mapping for it (`None`); returns its source.
    pub fn load_flash_read(&mut self, ppa: Option<u32>) -> ReadSource {
        match ppa {
            Some(ppa) => {
                self.store.read(ppa as u64, &mut self.page);
                ReadSource::Flash(ppa)
            }
            None => {
                self.page.fill(0);
                ReadSource::Unmapped
            }
        }
    }

    /// Lays the sectors `mask` of the cache line over the page just read (cached data is newer
    /// than flash). Returns the mask.
    pub fn overlay_cache_line(&mut self, partition: usize, lpa: u32, mask: u64) -> u64 {
        if mask != 0 {
            self.store.read(cache_key(partition, lpa), &mut self.line);
            overlay(&mut self.page, &self.line, mask);
        }
        mask
    }

    /// User read `txn` of page `lpa` goes to flash: keeps the sectors the cache lines hold now
    /// (`lines`: partition and sector mask), which the controller lays over the flash page when
    /// it arrives. Taken now, not when the page arrives: a line may be flushed and dropped while
    /// the read is in flight, and the flash page the read was translated to is then older than
    /// the flushed sectors (a host write into the cache meanwhile makes the read undefined, so
    /// nothing newer can be missed).
    pub fn snapshot_cached(&mut self, txn: u32, lpa: u32, lines: impl Iterator<Item = (usize, u64)>) {
        let mut mask = 0;
        let mut bytes: Option<Box<[u8]>> = None;
        for (p, m) in lines.filter(|&(_, m)| m != 0) {
            self.store.read(cache_key(p, lpa), &mut self.line);
            let snap = bytes.get_or_insert_with(|| vec![0; self.page.len()].into_boxed_slice());
            overlay(snap, &self.line, m);
            mask |= m;
        }
        if let Some(bytes) = bytes {
            self.snapshots.insert(txn, (mask, bytes));
        }
    }

    /// Lays the sectors [`Self::snapshot_cached`] kept for user read `txn` over the page just
    /// read (`self.page`) and forgets them. Returns their mask (0 when none were cached).
    pub fn overlay_snapshot(&mut self, txn: u32) -> u64 {
        match self.snapshots.remove(&txn) {
            Some((mask, bytes)) => {
                overlay(&mut self.page, &bytes, mask);
                mask
            }
            None => 0,
        }
    }

    /// The page read (`self.page`) went into the cache line; `read_mask` are the sectors read.
    pub fn fill_cache_line(&mut self, partition: usize, lpa: u32, read_mask: u64) {
        let page = &self.page;
        self.store.update(cache_key(partition, lpa), &mut self.line, |line| overlay(line, page, read_mask));
        self.cached[partition].insert(lpa);
    }

    /// Host write `request` put its sectors of page `lpa` into a cache line.
    pub fn cache_write(&mut self, partition: usize, lpa: u32, request: u32, start: u64, sectors: u32) {
        self.store_write(cache_key(partition, lpa), None, request, lpa, start, sectors);
        self.cached[partition].insert(lpa);
    }

    /// Loads a cache line's bytes into `self.page` (a read served from the cache).
    pub fn load_cache_line(&mut self, partition: usize, lpa: u32) -> ReadSource {
        self.store.read(cache_key(partition, lpa), &mut self.page);
        ReadSource::Cache
    }

    /// Lines of `partition` stored but perhaps dropped by the cache since; when there are
    /// clearly more than it holds, `holds` says which to keep and the rest are forgotten.
    pub fn sweep_cache_lines(&mut self, partition: usize, capacity: u32, holds: impl Fn(u32) -> bool) {
        if self.cached[partition].len() <= 2 * capacity as usize + 16 {
            return;
        }
        let mut gone: Vec<u32> = self.cached[partition].iter().copied().filter(|&l| !holds(l)).collect();
        gone.sort_unstable();
        for lpa in gone {
            self.cached[partition].remove(&lpa);
            self.store.remove(cache_key(partition, lpa));
        }
    }

    /// Checks sectors `first..first + count` of the page read (`self.page`, page `lpa`) for
    /// host read `request`. `from_cache` marks the sectors that came from a cache line.
    #[allow(clippy::too_many_arguments)]
    pub fn check(
        &mut self,
        request: u32,
        lpa: u32,
        first: usize,
        count: usize,
        source: ReadSource,
        from_cache: u64,
        flow: &str,
        at_seconds: f64,
    ) {
        let data = self.requests[request as usize];
        let spp = self.sectors_per_page as u64;
        if let Some(out) = self.read_bytes.get_mut(&request) {
            let at = (lpa as u64 * spp + first as u64 - data.start_sector) as usize * SECTOR;
            out[at..at + count * SECTOR].copy_from_slice(&self.page[first * SECTOR..(first + count) * SECTOR]);
        }
        let since = data.since;
        if !self.shadow.read_is_defined(lpa, since) {
            self.skipped += count as u64;
            return;
        }
        for s in first..first + count {
            let version = self.shadow.version(lpa, s);
            if version == AMBIGUOUS {
                self.skipped += 1;
                continue;
            }
            let lba = lpa as u64 * spp + s as u64;
            let got = &self.page[s * SECTOR..(s + 1) * SECTOR];
            if sector_matches(self.seed, lba, version, got) {
                self.verified += 1;
                continue;
            }
            self.mismatched += 1;
            if self.first_mismatch.is_none() {
                let found = describe(self.seed, got, &mut self.sector);
                let (source, ppa) = match source {
                    _ if from_cache >> s & 1 == 1 => ("cache", None),
                    ReadSource::Cache => ("cache", None),
                    ReadSource::Unmapped => ("unmapped", None),
                    ReadSource::Flash(ppa) => ("flash", Some(ppa as u64)),
                };
                let expected = if version == content::UNWRITTEN {
                    "zeros (never written)".to_string()
                } else {
                    format!("the data of LBA {lba} from write version {version}")
                };
                self.first_mismatch = Some(DataMismatch {
                    lba,
                    source: source.to_string(),
                    ppa,
                    flow: flow.to_string(),
                    expected,
                    found,
                    at_seconds,
                });
            }
        }
    }

    /// The sectors `first..first + count` of the page in `self.page` (after a load).
    pub fn page_sectors(&self, first: usize, count: usize) -> &[u8] {
        &self.page[first * SECTOR..(first + count) * SECTOR]
    }

    /// Warning text for results.json, if anything went wrong.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if let Some(m) = &self.first_mismatch {
            warnings.push(format!(
                "data emulation: {} read sectors did not hold what the host last wrote (first: LBA {} read from {}{} by {} at {:.6} s: expected {}, found {})",
                self.mismatched,
                m.lba,
                m.source,
                m.ppa.map_or(String::new(), |p| format!(" page {p}")),
                m.flow,
                m.at_seconds,
                m.expected,
                m.found
            ));
        }
        if let Some(e) = self.store.error() {
            warnings.push(format!("data.spill_dir: {e}; the data checks after it are not reliable"));
        }
        warnings
    }
}

/// Copies the sectors `mask` of `from` over `to` (both whole pages).
fn overlay(to: &mut [u8], from: &[u8], mask: u64) {
    let mut m = mask;
    while m != 0 {
        let s = m.trailing_zeros() as usize;
        to[s * SECTOR..(s + 1) * SECTOR].copy_from_slice(&from[s * SECTOR..(s + 1) * SECTOR]);
        m &= m - 1;
    }
}
