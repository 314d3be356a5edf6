//! Open-Channel SSD 2.0: the device exposes its geometry and the host runs the FTL.
//!
//! Geometry (OCSSD 2.0 spec, section 1.2): a *group* is a channel, a *parallel unit* (PU) a
//! die, a *chunk* a block (a die's chunks are its planes' blocks, plane by plane), and a
//! *logical block* a 512-byte sector. The device keeps a chunk table and enforces the chunk
//! rules: a chunk is free, open, closed or offline; writes go to the chunk's write pointer, in
//! units of the minimum write size (here one flash page); a chunk is reset (erased) before it is
//! written again; a chunk worn out becomes offline. [`ChunkTable`] is that device-side check: it
//! sees every program and reset in the order the dies execute them, and counts what breaks a
//! rule. [`HostFtl`] is the host's side: where it places pages and how much work it does.

use serde::{Deserialize, Serialize};

use crate::config::{GcCopy, HostPlacement, OpenChannelConfig};
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
    pub placement: HostPlacement,
    pub gc_copy: GcCopy,
    pub cpu_per_page_ps: u64,
    /// Per flow: the next position in its stripe of planes (round-robin placement).
    pub cursor: Vec<u32>,
    /// Pages the host FTL placed (user writes and cache flushes).
    pub pages_placed: u64,
    /// Bytes host GC moved over the link (both ways, data and commands).
    pub gc_link_bytes: u64,
}

impl HostFtl {
    pub fn new(config: &OpenChannelConfig, flows: usize) -> Self {
        Self {
            placement: config.placement,
            gc_copy: config.gc_copy,
            cpu_per_page_ps: config.host_cpu_per_page.value,
            cursor: vec![0; flows],
            pages_placed: 0,
            gc_link_bytes: 0,
        }
    }
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

/// The geometry the device reports (OCSSD 2.0 Geometry command).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OcGeometry {
    pub groups: u32,
    pub parallel_units_per_group: u32,
    pub chunks_per_parallel_unit: u32,
    pub logical_blocks_per_chunk: u64,
    pub logical_block_bytes: u64,
    /// Minimum write size (ws_min), in logical blocks: one flash page.
    pub min_write_logical_blocks: u64,
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
        ChunkTable::from_blocks(&g, &BlockManager::new(&g, false, 100).unwrap())
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
