//! An LSM-tree store's zone allocator on a zoned namespace (`address = "zoned"` with
//! `[flows.lsm]`), the way ZenFS places RocksDB's files (Bjørling et al., "ZNS: Avoiding the
//! Block Interface Tax for Flash-based SSDs", USENIX ATC 2021): files of one level (of one
//! expected lifetime) share zones, each level writes into its own open zone, and a zone is reset
//! once every file in it has been deleted. The host pays write amplification in compactions;
//! the device pays none.
//!
//! The store: memtable flushes write level-0 files; a level holding more files than its budget
//! (`l0_files`, then `fanout` times the level above) compacts its oldest file into the next level,
//! merging it with the `fanout` oldest files there (leveled compaction; key ranges are taken in
//! round-robin order, so the oldest files are the ones overlapped): it reads the inputs, writes as
//! many new files into the next level and deletes the inputs. The last level grows until the
//! store holds what its zones can (two zones per level kept for the open and the half-dead
//! ones), then its oldest files are dropped (keys overwritten since, or expired). Files are a
//! fixed size, a whole number of them per zone; a zone whose files leave part of its capacity
//! unused is finished.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::Op;
use crate::config::{LsmConfig, ZoneLayout};
use crate::engine::RandomStream;

/// results.json `flows[].lsm`: what the store did.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LsmSummary {
    pub levels: u32,
    pub file_bytes: u64,
    pub files_per_zone: u64,
    /// Level-0 files written by memtable flushes: the user's data.
    pub flushes: u64,
    pub compactions: u64,
    /// Files compactions wrote (as many as they read: a file of the level above and the files
    /// it overlaps below).
    pub compaction_files_written: u64,
    /// Files the last level dropped to stay within the store's zones.
    pub files_dropped: u64,
    /// Live files per level at the end.
    pub files_per_level: Vec<u64>,
    /// Bytes of the memtable flushes (the user's writes).
    pub user_bytes_written: u64,
    /// Bytes of every file written: flushes and compaction outputs.
    pub host_bytes_written: u64,
    /// host / user bytes: the store's own write amplification (null before the first flush).
    pub host_write_amplification: Option<f64>,
    /// Bytes compactions read.
    pub compaction_bytes_read: u64,
    pub zone_resets: u64,
    pub zone_finishes: u64,
}

#[derive(Clone, Copy, Debug)]
struct File {
    zone: u64,
    /// Sectors from the zone's start.
    offset: u64,
    live: bool,
    /// Index in `LsmAllocator::readable` once its writes are all issued (NO_SLOT before).
    slot: u32,
}

const NO_SLOT: u32 = u32::MAX;
/// A queued request that completes no file's writes.
const NO_FILE: u32 = u32::MAX;

pub struct LsmAllocator {
    zone_sectors: u64,
    capacity_sectors: u64,
    first_zone: u64,
    file_sectors: u64,
    files_per_zone: u64,
    fanout: u64,
    /// Per level: its files, oldest first, and the zone it writes into.
    level_files: Vec<VecDeque<u32>>,
    level_zone: Vec<Option<u64>>,
    budgets: Vec<u64>,
    files: Vec<File>,
    free_ids: Vec<u32>,
    /// Live files whose writes have all been issued (user reads pick among them).
    readable: Vec<u32>,
    /// Live files.
    live_files: u64,
    max_live: u64,
    zone_live: Vec<u32>,
    zone_written: Vec<u32>,
    empty: VecDeque<u64>,
    /// Requests planned and not yet issued, each with the file its issue completes.
    queue: VecDeque<(Op, u64, u32, u32)>,
    /// Sectors of one write (the flow's request size in whole pages).
    chunk_sectors: u64,
    stats: LsmSummary,
}

impl LsmAllocator {
    /// The store over the zones wholly inside `ws_start..ws_start + ws_sectors`, writing files
    /// in requests of `request_sectors` (rounded up to whole pages).
    pub fn new(
        layout: &ZoneLayout,
        ws_start: u64,
        ws_sectors: u64,
        request_sectors: u64,
        config: &LsmConfig,
    ) -> Result<Self, String> {
        let first_zone = ws_start.div_ceil(layout.zone_sectors);
        let end_zone = ((ws_start + ws_sectors) / layout.zone_sectors).min(layout.zones);
        let zones = end_zone.saturating_sub(first_zone);
        let levels = config.levels as u64;
        if zones < 2 * levels + 3 {
            return Err(format!(
                "levels: {levels} levels need at least {} whole zones (two per level and three spare), the working set holds {zones}",
                2 * levels + 3
            ));
        }
        if layout.max_open < config.levels {
            return Err(format!(
                "levels: {levels} levels write into {levels} open zones, more than zns.max_open_zones ({})",
                layout.max_open
            ));
        }
        let unit = layout.write_unit_sectors;
        let file_sectors = match &config.file_size {
            None => (layout.capacity_sectors / 4 / unit * unit).max(unit),
            Some(size) => {
                let sectors = size.value / 512;
                if size.value % (unit * 512) != 0 || sectors == 0 || sectors > layout.capacity_sectors {
                    return Err(format!(
                        "file_size: \"{}\" must be whole {}-byte flash pages, at most the zone capacity ({} bytes)",
                        size.text,
                        unit * 512,
                        layout.capacity_sectors * 512
                    ));
                }
                sectors
            }
        };
        let files_per_zone = layout.capacity_sectors / file_sectors;
        // Level 0 compacts past l0_files files, level 1 past l0_files x fanout, each level
        // below at fanout times the one above.
        let mut budgets = vec![config.l0_files as u64];
        for l in 1..levels as usize {
            budgets.push(budgets[l - 1].saturating_mul(config.fanout as u64));
        }
        let max_live = (zones - 2 * levels - 2) * files_per_zone;
        Ok(Self {
            zone_sectors: layout.zone_sectors,
            capacity_sectors: layout.capacity_sectors,
            first_zone,
            file_sectors,
            files_per_zone,
            fanout: config.fanout as u64,
            level_files: vec![VecDeque::new(); levels as usize],
            level_zone: vec![None; levels as usize],
            budgets,
            files: Vec::new(),
            free_ids: Vec::new(),
            readable: Vec::new(),
            live_files: 0,
            max_live,
            zone_live: vec![0; zones as usize],
            zone_written: vec![0; zones as usize],
            empty: (0..zones).collect(),
            queue: VecDeque::new(),
            chunk_sectors: request_sectors.div_ceil(unit).max(1) * unit,
            stats: LsmSummary {
                levels: levels as u32,
                file_bytes: file_sectors * 512,
                files_per_zone,
                ..LsmSummary::default()
            },
        })
    }

    fn start_of(&self, z: u64) -> u64 {
        (self.first_zone + z) * self.zone_sectors
    }

    /// The next request: a user read of live data (when `read` and there is some), else the
    /// next request of the store's flushes and compactions: (op, first host sector, sectors).
    pub fn next(&mut self, rng: &mut RandomStream, read: bool) -> (Op, u64, u32) {
        if read && !self.readable.is_empty() {
            let f = self.files[self.readable[rng.below(self.readable.len() as u64) as usize] as usize];
            let n = self.chunk_sectors.min(self.file_sectors);
            let at = rng.below(self.file_sectors / n) * n;
            return (Op::Read, self.start_of(f.zone) + f.offset + at, n as u32);
        }
        while self.queue.is_empty() {
            match (0..self.level_files.len() - 1).find(|&l| self.level_files[l].len() as u64 > self.budgets[l]) {
                Some(level) => self.compact(level),
                None => {
                    self.stats.flushes += 1;
                    self.stats.user_bytes_written += self.file_sectors * 512;
                    self.write_file(0);
                }
            }
        }
        let (op, start, sectors, completes) = self.queue.pop_front().expect("a job queues requests");
        if completes != NO_FILE && self.files[completes as usize].live {
            self.files[completes as usize].slot = self.readable.len() as u32;
            self.readable.push(completes);
        }
        (op, start, sectors)
    }

    /// Moves `level`'s oldest file into the next level, merged with the files it overlaps there.
    fn compact(&mut self, level: usize) {
        self.stats.compactions += 1;
        let mut inputs = vec![self.level_files[level].pop_front().expect("over budget: not empty")];
        for _ in 0..self.fanout {
            match self.level_files[level + 1].pop_front() {
                Some(f) => inputs.push(f),
                None => break,
            }
        }
        for &f in &inputs {
            let file = self.files[f as usize];
            let start = self.start_of(file.zone) + file.offset;
            self.queue_chunks(Op::Read, start, self.file_sectors, NO_FILE);
            self.stats.compaction_bytes_read += self.file_sectors * 512;
        }
        for _ in 0..inputs.len() {
            self.stats.compaction_files_written += 1;
            self.write_file(level + 1);
        }
        for f in inputs {
            self.delete(f);
        }
    }

    /// Writes a new file into `level`'s zone (a fresh one when it has no room).
    fn write_file(&mut self, level: usize) {
        while self.live_files >= self.max_live {
            self.drop_oldest();
        }
        let zone = match self.level_zone[level] {
            Some(z) if (self.zone_written[z as usize] as u64) < self.files_per_zone => z,
            full => {
                if let Some(z) = full {
                    self.level_zone[level] = None;
                    self.close_zone(z);
                }
                while self.empty.is_empty() {
                    self.drop_oldest();
                }
                let z = self.empty.pop_front().expect("an empty zone");
                self.level_zone[level] = Some(z);
                z
            }
        };
        let offset = self.zone_written[zone as usize] as u64 * self.file_sectors;
        self.zone_written[zone as usize] += 1;
        self.zone_live[zone as usize] += 1;
        self.stats.host_bytes_written += self.file_sectors * 512;
        let file = File { zone, offset, live: true, slot: NO_SLOT };
        let id = match self.free_ids.pop() {
            Some(id) => {
                self.files[id as usize] = file;
                id
            }
            None => {
                self.files.push(file);
                (self.files.len() - 1) as u32
            }
        };
        self.queue_chunks(Op::Write, self.start_of(zone) + offset, self.file_sectors, id);
        self.live_files += 1;
        self.level_files[level].push_back(id);
    }

    /// A level is done with zone `z` (its files fill it): finish it if capacity is left over,
    /// reset it if its files are already dead.
    fn close_zone(&mut self, z: u64) {
        if self.zone_live[z as usize] == 0 {
            self.reset(z);
        } else if self.zone_written[z as usize] as u64 * self.file_sectors < self.capacity_sectors {
            self.stats.zone_finishes += 1;
            self.queue.push_back((Op::ZoneFinish, self.start_of(z), 0, NO_FILE));
        }
    }

    fn is_open(&self, z: u64) -> bool {
        self.level_zone.contains(&Some(z))
    }

    /// Deletes file `f`; its zone is reset once none of its files is live and no level writes
    /// there.
    fn delete(&mut self, f: u32) {
        let file = self.files[f as usize];
        debug_assert!(file.live);
        self.files[f as usize].live = false;
        if file.slot != NO_SLOT {
            let last = *self.readable.last().expect("f is readable");
            self.readable.swap_remove(file.slot as usize);
            if last != f {
                self.files[last as usize].slot = file.slot;
            }
        }
        self.live_files -= 1;
        // Its id is reused only once no queued write names it.
        if !self.queue.iter().any(|q| q.3 == f) {
            self.free_ids.push(f);
        }
        self.zone_live[file.zone as usize] -= 1;
        if self.zone_live[file.zone as usize] == 0 && !self.is_open(file.zone) {
            self.reset(file.zone);
        }
    }

    fn reset(&mut self, z: u64) {
        self.stats.zone_resets += 1;
        self.zone_written[z as usize] = 0;
        self.queue.push_back((Op::ZoneReset, self.start_of(z), 0, NO_FILE));
        self.empty.push_back(z);
    }

    /// The store is full: the deepest level's oldest file goes.
    fn drop_oldest(&mut self) {
        let level = (0..self.level_files.len()).rev().find(|&l| !self.level_files[l].is_empty());
        let f = level.and_then(|l| self.level_files[l].pop_front()).expect("a full store holds files");
        self.stats.files_dropped += 1;
        self.delete(f);
    }

    /// Queues `sectors` from `start` in requests of the flow's size; issuing the last one
    /// completes file `completes` (NO_FILE: none).
    fn queue_chunks(&mut self, op: Op, start: u64, sectors: u64, completes: u32) {
        let mut at = 0;
        while at < sectors {
            let n = self.chunk_sectors.min(sectors - at);
            let last = at + n == sectors;
            self.queue.push_back((op, start + at, n as u32, if last { completes } else { NO_FILE }));
            at += n;
        }
    }

    /// What the store did so far.
    pub fn summary(&self) -> LsmSummary {
        let mut s = self.stats.clone();
        s.files_per_level = self.level_files.iter().map(|l| l.len() as u64).collect();
        s.host_write_amplification =
            (s.user_bytes_written > 0).then(|| s.host_bytes_written as f64 / s.user_bytes_written as f64);
        s
    }
}

#[cfg(test)]
mod tests;
