//! Open-Channel SSD 2.0 (and 1.2): the device exposes its geometry and the host runs the FTL.
//!
//! Geometry (OCSSD 2.0 spec, section 1.2): a *group* is a channel, a *parallel unit* (PU) a
//! die, a *chunk* a block (a die's chunks are its planes' blocks, plane by plane), and a
//! *logical block* a 512-byte sector. The device keeps a chunk table and enforces the chunk
//! rules: a chunk is free, open, closed or offline; writes go to the chunk's write pointer, in
//! units of the minimum write size (here one flash page); a chunk is reset (erased) before it is
//! written again; a chunk worn out becomes offline. [`ChunkTable`] is that device-side check: it
//! sees every program and reset in the order the dies execute them, and counts what breaks a
//! rule. [`HostFtl`] is the host's side: where it places pages and how much work it does.
//!
//! Open-Channel 1.2 (LightNVM, Bjørling et al., FAST 2017) addresses channel / LUN / plane /
//! block / page / sector in one physical page address (PPA), and a write must cover a page on
//! every plane of a LUN (the planes are programmed together): the host FTL stripes its pages LUN
//! by LUN, a LUN's planes next to each other, so each write unit becomes one multi-plane
//! program. It has no copy command. The same table checks in-order programming of each block.

use serde::{Deserialize, Serialize};

use crate::config::{GcCopy, HostPlacement, OcVersion, OpenChannelConfig};
use crate::flash::Geometry;
use crate::ftl::blocks::{BlockManager, BlockState};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ChunkState {
    Free,
    Open,
    Closed,
    Offline,
}

/// The device's chunk table: state and write pointer (in flash pages) of every chunk.
pub struct ChunkTable {
    state: Vec<ChunkState>,
    write_ptr: Vec<u16>,
    pages_per_chunk: u32,
    open: u32,
    pub max_open: u32,
    pub resets: u64,
    /// Programs that were not at the chunk's write pointer, or went to a closed or offline chunk.
    pub write_pointer_violations: u64,
    /// Resets of a chunk that was free or offline.
    pub reset_violations: u64,
    /// Pages programmed (vector write sectors / sectors per page).
    pub pages_written: u64,
}

impl ChunkTable {
    /// The device's view of a drive whose blocks are in `blocks`' state (after preconditioning):
    /// erased blocks are free, partly written ones open, full ones closed, retired ones offline.
    pub fn from_blocks(geometry: &Geometry, blocks: &BlockManager) -> Self {
        let n = geometry.blocks;
        let mut table = Self {
            state: Vec::with_capacity(n as usize),
            write_ptr: Vec::with_capacity(n as usize),
            pages_per_chunk: geometry.pages_per_block,
            open: 0,
            max_open: 0,
            resets: 0,
            write_pointer_violations: 0,
            reset_violations: 0,
            pages_written: 0,
        };
        for b in 0..n {
            let written = blocks.written_pages(b);
            let state = match blocks.state(b) {
                BlockState::Retired => ChunkState::Offline,
                _ if written == 0 => ChunkState::Free,
                _ if written < geometry.pages_per_block => ChunkState::Open,
                _ => ChunkState::Closed,
            };
            table.open += u32::from(state == ChunkState::Open);
            table.state.push(state);
            table.write_ptr.push(written as u16);
        }
        table.max_open = table.open;
        table
    }

    /// A program of `page` of `chunk` reached the die. Returns whether the chunk rules allowed it.
    #[inline]
    pub fn program(&mut self, chunk: u32, page: u32) -> bool {
        let c = chunk as usize;
        self.pages_written += 1;
        let ok = matches!(self.state[c], ChunkState::Free | ChunkState::Open) && page == self.write_ptr[c] as u32;
        if !ok {
            self.write_pointer_violations += 1;
            return false;
        }
        if self.state[c] == ChunkState::Free {
            self.state[c] = ChunkState::Open;
            self.open += 1;
            self.max_open = self.max_open.max(self.open);
        }
        self.write_ptr[c] += 1;
        if self.write_ptr[c] as u32 == self.pages_per_chunk {
            self.state[c] = ChunkState::Closed;
            self.open -= 1;
        }
        true
    }

    /// A reset (erase) of `chunk` finished; `worn_out` chunks go offline.
    pub fn reset(&mut self, chunk: u32, worn_out: bool) {
        let c = chunk as usize;
        self.resets += 1;
        match self.state[c] {
            ChunkState::Open => self.open -= 1,
            ChunkState::Closed => {}
            ChunkState::Free | ChunkState::Offline => self.reset_violations += 1,
        }
        self.state[c] = if worn_out { ChunkState::Offline } else { ChunkState::Free };
        self.write_ptr[c] = 0;
    }

    /// Chunks in each state: free, open, closed, offline.
    pub fn counts(&self) -> ChunkCounts {
        let mut n = [0u64; 4];
        for &s in &self.state {
            n[s as usize] += 1;
        }
        ChunkCounts { free: n[0], open: n[1], closed: n[2], offline: n[3] }
    }
}

/// The host-side FTL's choices and its bookkeeping.
pub struct HostFtl {
    pub version: OcVersion,
    pub placement: HostPlacement,
    pub gc_copy: GcCopy,
    pub cpu_per_page_ps: u64,
    /// Per flow: the next position in its stripe of planes (round-robin placement).
    pub cursor: Vec<u32>,
    /// Open-Channel 1.2: each flow's planes with each LUN's planes next to each other (empty
    /// under 2.0, which stripes in `ftl.allocation` order).
    pub lun_stripes: Vec<Vec<u32>>,
    /// Pages the host FTL placed (user writes and cache flushes).
    pub pages_placed: u64,
    /// Bytes host GC moved over the link (both ways, data and commands).
    pub gc_link_bytes: u64,
}

impl HostFtl {
    pub fn new(config: &OpenChannelConfig, flows: usize) -> Self {
        Self {
            version: config.version,
            lun_stripes: Vec::new(),
            placement: config.placement,
            gc_copy: config.gc_copy,
            cpu_per_page_ps: config.host_cpu_per_page.value,
            cursor: vec![0; flows],
            pages_placed: 0,
            gc_link_bytes: 0,
        }
    }
}

/// `stripe`'s planes regrouped LUN by LUN (a LUN, a die, in the order its first plane appears),
/// each LUN's planes in their stripe order: Open-Channel 1.2's write unit spans a LUN's planes.
pub fn lun_first(stripe: &[u32], planes_per_die: u32) -> Vec<u32> {
    let mut rank: Vec<(u32, usize)> = Vec::with_capacity(stripe.len());
    let mut first_seen = std::collections::HashMap::new();
    for (i, &plane) in stripe.iter().enumerate() {
        let die = plane / planes_per_die;
        let lun_rank = *first_seen.entry(die).or_insert(i);
        rank.push((plane, lun_rank));
    }
    // Stable: a LUN's planes keep their stripe order.
    rank.sort_by_key(|&(_, r)| r);
    rank.into_iter().map(|(p, _)| p).collect()
}

/// The Open-Channel device and its host FTL.
pub struct OpenChannel {
    pub chunks: ChunkTable,
    pub host: HostFtl,
}

/// Chunks in each state (results.json `open_channel.chunks`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ChunkCounts {
    pub free: u64,
    pub open: u64,
    pub closed: u64,
    pub offline: u64,
}

/// The geometry the device reports (OCSSD 2.0 Geometry command; for 1.2 the same counts in 2.0's
/// terms, plus the planes and the PPA format 1.2 reports).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OcGeometry {
    /// `"2.0"` or `"1.2"`.
    #[serde(default)]
    pub version: String,
    pub groups: u32,
    pub parallel_units_per_group: u32,
    pub chunks_per_parallel_unit: u32,
    pub logical_blocks_per_chunk: u64,
    pub logical_block_bytes: u64,
    /// Minimum write size (ws_min), in logical blocks: one flash page (2.0), or one page on
    /// every plane of a LUN (1.2).
    pub min_write_logical_blocks: u64,
    /// Open-Channel 1.2 only: planes per LUN, and the bit fields of a physical page address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planes_per_parallel_unit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ppa_format: Option<PpaFormat>,
}

/// Open-Channel 1.2's physical page address: each field's (offset, width) in bits, from the
/// least significant: sector, plane, page, block, LUN, channel (the order the 1.2 Identify
/// Geometry command's PPA format describes and pblk uses).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PpaFormat {
    pub sector: (u32, u32),
    pub plane: (u32, u32),
    pub page: (u32, u32),
    pub block: (u32, u32),
    pub lun: (u32, u32),
    pub channel: (u32, u32),
}

impl PpaFormat {
    /// The narrowest fields that hold the geometry's counts, packed from bit 0.
    pub fn for_geometry(g: &Geometry) -> Self {
        let bits = |n: u64| if n <= 1 { 0 } else { 64 - (n - 1).leading_zeros() };
        let widths = [
            bits(g.sectors_per_page),
            bits(g.planes_per_die as u64),
            bits(g.pages_per_block as u64),
            bits(g.blocks_per_plane as u64),
            bits((g.chips_per_channel * g.dies_per_chip) as u64),
            bits(g.channels as u64),
        ];
        let mut offset = 0;
        let fields: Vec<(u32, u32)> = widths
            .iter()
            .map(|&w| {
                let f = (offset, w);
                offset += w;
                f
            })
            .collect();
        Self {
            sector: fields[0],
            plane: fields[1],
            page: fields[2],
            block: fields[3],
            lun: fields[4],
            channel: fields[5],
        }
    }
}

/// The host FTL's work.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HostFtlSummary {
    /// `round-robin` or `static`.
    pub placement: String,
    /// `host` or `vector-copy`.
    pub gc_copy: String,
    /// The logical-to-physical table in host DRAM: 4 bytes per logical page.
    pub mapping_table_bytes: u64,
    /// Mapping lookups (every host page, all in host DRAM) and pages placed.
    pub lookups: u64,
    pub pages_placed: u64,
    /// Pages host GC moved, and the link bytes that took (0 with vector copy).
    pub gc_pages_moved: u64,
    pub gc_link_bytes: u64,
    /// Host CPU time of the FTL: (lookups + GC moves) x `host_cpu_per_page`.
    pub cpu_seconds: f64,
}

/// results.json `open_channel`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OpenChannelSummary {
    pub geometry: OcGeometry,
    /// Chunk states at the end of the run.
    pub chunks: ChunkCounts,
    /// Chunk resets (erases) during the run.
    pub resets: u64,
    /// Programs off the write pointer or to a closed or offline chunk (0 when the host FTL
    /// follows the rules).
    pub write_pointer_violations: u64,
    /// Resets of free or offline chunks.
    pub reset_violations: u64,
    /// Most chunks open at once.
    pub max_open_chunks: u32,
    /// Pages the device programmed (user and GC).
    pub pages_written: u64,
    pub host_ftl: HostFtlSummary,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn table() -> ChunkTable {
        let text = "[flash]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 1\nblocks_per_plane = 8\npages_per_block = 4\n[ftl]\nover_provisioning = 0.7\n[[flows]]\nqueue_depth = 1\nrequests = 1\n";
        let config = Config::from_toml_str(text).unwrap();
        let g = Geometry::new(&config);
        ChunkTable::from_blocks(&g, &BlockManager::new(&g, false, 100, 1, 0).unwrap())
    }

    #[test]
    fn lun_first_puts_a_luns_planes_together() {
        // Channel-first striping of 2 channels x 2 dies x 2 planes: planes 0, 4, 2, 6, 1, 5, 3, 7
        // (die = plane / 2).
        let stripe = [0, 4, 2, 6, 1, 5, 3, 7];
        assert_eq!(lun_first(&stripe, 2), [0, 1, 4, 5, 2, 3, 6, 7]);
        assert_eq!(lun_first(&stripe, 1), stripe);
    }

    #[test]
    fn ppa_fields_are_packed_from_the_sector_up() {
        let text = "[flash]\nchannels = 8\nchips_per_channel = 4\ndies_per_chip = 2\nplanes_per_die = 2\nblocks_per_plane = 2048\npages_per_block = 256\npage_size = \"8KiB\"\n[[flows]]\nqueue_depth = 1\nrequests = 1\n";
        let g = Geometry::new(&Config::from_toml_str(text).unwrap());
        let f = PpaFormat::for_geometry(&g);
        // 16 sectors (4 bits), 2 planes (1), 256 pages (8), 2048 blocks (11), 8 LUNs (3), 8 channels (3).
        assert_eq!(
            (f.sector, f.plane, f.page, f.block, f.lun, f.channel),
            ((0, 4), (4, 1), (5, 8), (13, 11), (24, 3), (27, 3))
        );
    }

    #[test]
    fn writes_follow_the_write_pointer_and_close_the_chunk() {
        let mut t = table();
        assert_eq!(t.counts(), ChunkCounts { free: 8, open: 0, closed: 0, offline: 0 });
        assert!(t.program(0, 0));
        assert_eq!(t.counts().open, 1);
        assert!(!t.program(0, 2), "page 1 is next");
        assert!(t.program(0, 1) && t.program(0, 2) && t.program(0, 3));
        assert_eq!(t.counts().closed, 1);
        assert!(!t.program(0, 0), "a closed chunk must be reset first");
        assert_eq!(t.write_pointer_violations, 2);
        t.reset(0, false);
        assert!(t.program(0, 0), "written again after the reset");
        t.reset(1, false);
        assert_eq!((t.resets, t.reset_violations), (2, 1), "chunk 1 was free");
        t.reset(0, true);
        assert_eq!(t.counts().offline, 1);
        assert_eq!(t.max_open, 1);
    }
}
