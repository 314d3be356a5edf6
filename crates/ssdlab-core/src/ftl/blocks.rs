//! Block manager: per-block state (valid pages, write pointer, erase count) in packed arrays, and
//! per plane a pool of erased blocks and one open block (write frontier) per write stream.
//!
//! User writes and GC writes go to separate frontiers so that data GC relocates (usually cold)
//! is not mixed with fresh user data. The last erased block of a plane is kept for GC: user
//! writes wait when only it is left, which guarantees that GC can always finish a victim.

use super::collectable::CollectableSet;
use super::free_pool::FreePool;

use crate::engine::Divisor;
use crate::flash::Geometry;
use crate::time::SimTime;

pub const NO_BLOCK: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BlockState {
    /// Erased, in the plane's free pool.
    Free,
    /// A write frontier: pages below the write pointer are written.
    Open,
    /// Every page written; a GC candidate.
    Full,
    /// Chosen by GC; its valid pages are being moved.
    Victim,
    /// Worn out (reached the P/E cycle limit): never used again.
    Retired,
    /// Taken by a zone of a zoned namespace (`ftl/zones.rs`): written and emptied by its zone
    /// only, never a GC victim.
    Zoned,
}

/// Which frontier a write goes to: user or GC data, of a placement handle (FDP's reclaim unit
/// handle, `[ftl.fdp]`; 0 without FDP). Each (handle, user or GC) pair has its own open block
/// per plane, so data of different handles never shares a block (a reclaim unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    pub gc: bool,
    /// Host data into the SLC cache (`[flash.slc_cache]`): blocks programmed one bit per cell.
    pub slc: bool,
    pub handle: u8,
    /// Index of the stream's frontier among a plane's (user, GC and SLC of each handle), set
    /// once when the stream is made: the write path looks it up per page.
    index: u8,
}

impl Stream {
    pub const USER: Stream = Stream::new(false, false, 0);
    pub const GC: Stream = Stream::new(true, false, 0);

    const fn new(gc: bool, slc: bool, handle: u8) -> Self {
        Stream {
            gc,
            slc,
            handle,
            index: handle * 3
                + if gc {
                    1
                } else if slc {
                    2
                } else {
                    0
                },
        }
    }

    pub fn user(handle: u8) -> Self {
        Stream::new(false, false, handle)
    }

    pub fn gc(handle: u8) -> Self {
        Stream::new(true, false, handle)
    }

    pub fn slc(handle: u8) -> Self {
        Stream::new(false, true, handle)
    }

    #[inline]
    fn index(self) -> usize {
        self.index as usize
    }
}

/// One plane's block state, block ids relative to the plane (see [`BlockManager::export_plane`]):
/// how steady-state preconditioning copies an aged sample plane to every plane.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaneImage {
    pub state: Vec<BlockState>,
    pub valid: Vec<u16>,
    pub write_ptr: Vec<u16>,
    pub erase_count: Vec<u32>,
    pub closed_at: Vec<SimTime>,
    /// The free pool in order.
    pub free: Vec<u32>,
    /// Open user and GC blocks of each placement handle (`NO_BLOCK` when none).
    pub frontier: Vec<u32>,
}

struct PlaneBlocks {
    free: FreePool,
    /// Open blocks by [`Stream::index`].
    frontier: Box<[u32]>,
    wear: Wear,
}

/// The least and most erase counts of a plane's blocks in service, and how many hold the
/// least, kept as blocks are erased: static wear leveling asks at every GC victim, and a scan
/// of the plane each time made aging a 4 TiB drive's sample plane quadratic in its blocks. The
/// plane is scanned again only when the last block of the least count is erased (the least
/// rises) or a block retires.
#[derive(Clone, Copy, Debug, Default)]
struct Wear {
    least: u32,
    at_least: u32,
    most: u32,
}

/// `n` copies of `value`, or the allocation error instead of an abort.
fn filled<T: Clone>(n: usize, value: T) -> Result<Vec<T>, std::collections::TryReserveError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)?;
    v.resize(n, value);
    Ok(v)
}

pub struct BlockManager {
    /// Open the least-erased free block (dynamic wear leveling) rather than the oldest free one.
    pub dynamic_wear_leveling: bool,
    pe_cycle_limit: u32,
    pub retired_blocks: u32,
    pages_per_block: u32,
    /// `pages_per_block` as a divisor: the program-order checks on the dispatch path and the
    /// invalidation of a rewritten page split a page address by shift and mask, not division.
    per_block: Divisor,
    blocks_per_plane: u32,
    valid: Vec<u16>,
    write_ptr: Vec<u16>,
    /// Per block: one past the highest page the controller has issued a program for. NAND
    /// programs a block's pages in order (ONFI 4.2, section 3.4: "pages within a block shall be
    /// programmed in order"), so the scheduler issues a write only when no lower page of its
    /// block still waits ([`Self::note_program`] checks it).
    next_program: Vec<u16>,
    /// Programs issued below a block's cursor (0 unless the scheduler broke the order).
    pub out_of_order_programs: u64,
    erase_count: Vec<u32>,
    /// When each block's last page was written (its data's youngest age), for FIFO and cost-benefit.
    closed_at: Vec<SimTime>,
    state: Vec<BlockState>,
    /// Which blocks are collectable ([`Self::is_collectable`]), refreshed wherever a block's
    /// state or program cursor changes.
    collectable: CollectableSet,
    /// Placement handle of each block's data (FDP; empty without it: every block is handle 0).
    handle: Vec<u8>,
    /// SLC cache: pages an SLC block holds (0 without the cache), which blocks are SLC now, and
    /// each plane's SLC blocks from opening to erase.
    slc_pages: u32,
    slc: Vec<bool>,
    slc_in_use: Vec<u32>,
    planes: Vec<PlaneBlocks>,
}

impl BlockManager {
    /// The block state of `geometry`, or an error if its memory cannot be allocated (the memory
    /// estimate refuses such a device first unless `run.memory_limit` is "unlimited").
    /// `handles` placement handles (1 without FDP) each get a user, a GC and an SLC frontier per
    /// plane; `slc_pages` is what an SLC-cache block holds (0 without the cache).
    pub fn new(
        geometry: &Geometry,
        dynamic_wear_leveling: bool,
        pe_cycle_limit: u32,
        handles: u32,
        slc_pages: u32,
    ) -> Result<Self, String> {
        let blocks = geometry.blocks as usize;
        let refused = |_| format!("the state of {blocks} flash blocks could not be allocated");
        let mut planes = Vec::new();
        planes.try_reserve_exact(geometry.planes as usize).map_err(refused)?;
        for p in 0..geometry.planes {
            let first = geometry.first_block_of_plane(p);
            let free = FreePool::fresh(first..first + geometry.blocks_per_plane).map_err(refused)?;
            let wear = Wear { least: 0, at_least: geometry.blocks_per_plane, most: 0 };
            planes.push(PlaneBlocks { free, frontier: vec![NO_BLOCK; 3 * handles as usize].into_boxed_slice(), wear });
        }
        Ok(Self {
            dynamic_wear_leveling,
            pe_cycle_limit,
            retired_blocks: 0,
            pages_per_block: geometry.pages_per_block,
            per_block: Divisor::new(geometry.pages_per_block.into()),
            blocks_per_plane: geometry.blocks_per_plane,
            valid: filled(blocks, 0).map_err(refused)?,
            write_ptr: filled(blocks, 0).map_err(refused)?,
            next_program: filled(blocks, 0).map_err(refused)?,
            out_of_order_programs: 0,
            erase_count: filled(blocks, 0).map_err(refused)?,
            closed_at: filled(blocks, 0).map_err(refused)?,
            state: filled(blocks, BlockState::Free).map_err(refused)?,
            collectable: CollectableSet::new(geometry.planes, geometry.blocks_per_plane)
                .ok_or_else(|| format!("the state of {blocks} flash blocks could not be allocated"))?,
            handle: if handles > 1 { filled(blocks, 0).map_err(refused)? } else { Vec::new() },
            slc_pages,
            slc: if slc_pages > 0 { filled(blocks, false).map_err(refused)? } else { Vec::new() },
            slc_in_use: vec![0; geometry.planes as usize],
            planes,
        })
    }

    #[inline]
    pub fn free_blocks(&self, plane: u32) -> u32 {
        self.planes[plane as usize].free.len() as u32
    }

    /// Whether a write of `stream` can be placed on `plane` now.
    #[inline]
    pub fn can_allocate(&self, plane: u32, stream: Stream) -> bool {
        let p = &self.planes[plane as usize];
        let open = p.frontier[stream.index()];
        if open != NO_BLOCK && (self.write_ptr[open as usize] as u32) < self.capacity(open) {
            return true;
        }
        let reserve = if stream.gc { 0 } else { 1 };
        p.free.len() > reserve
    }

    /// Takes the next page of the plane's frontier for `stream`, opening an erased block when the
    /// frontier is full. Returns the page and whether an erased block was consumed.
    /// Callers check [`Self::can_allocate`] first.
    #[inline]
    pub fn allocate(&mut self, plane: u32, stream: Stream, now: SimTime) -> (u32, bool) {
        let (ppa, _, opened) = self.allocate_run(plane, stream, 1, now);
        (ppa, opened)
    }

    /// Takes up to `max_pages` consecutive pages of the plane's frontier block for `stream` at
    /// once (at least one; no more than the block has left), opening an erased block when the
    /// frontier is full: the same as that many [`Self::allocate`] calls, in one step. Returns the
    /// first page, the pages taken and whether an erased block was consumed. Preconditioning
    /// places data a block at a time with it.
    #[inline]
    pub fn allocate_run(&mut self, plane: u32, stream: Stream, max_pages: u32, now: SimTime) -> (u32, u32, bool) {
        let p = &mut self.planes[plane as usize];
        let mut block = p.frontier[stream.index()];
        let mut opened = false;
        if block == NO_BLOCK {
            // The least-erased free block with dynamic wear leveling (ties go to the one freed
            // first), the oldest otherwise.
            let taken = match self.dynamic_wear_leveling {
                true => p.free.take_least_erased(&self.erase_count),
                false => p.free.pop_front(&self.erase_count),
            };
            block = taken.expect("allocate() called without can_allocate()");
            p.frontier[stream.index()] = block;
            self.state[block as usize] = BlockState::Open;
            self.refresh_collectable(block);
            if let Some(h) = self.handle.get_mut(block as usize) {
                *h = stream.handle;
            }
            if stream.slc {
                self.slc[block as usize] = true;
                self.slc_in_use[plane as usize] += 1;
            }
            opened = true;
        }
        let b = block as usize;
        let page = self.write_ptr[b] as u32;
        let pages = max_pages.clamp(1, self.capacity(block) - page);
        self.write_ptr[b] += pages as u16;
        self.valid[b] += pages as u16;
        if self.write_ptr[b] as u32 == self.capacity(block) {
            // An SLC block's other pages stay unwritten until its erase: counted as written
            // and invalid, so a full SLC block is a full block with `slc_pages` data pages.
            self.write_ptr[b] = self.pages_per_block as u16;
            self.state[b] = BlockState::Full;
            self.refresh_collectable(block);
            self.closed_at[b] = now;
            let p = &mut self.planes[plane as usize];
            p.frontier[stream.index()] = NO_BLOCK;
        }
        (block * self.pages_per_block + page, pages, opened)
    }

    /// Takes an erased block of `plane` out of the free pool for the block-mapped families (the
    /// least-erased one with dynamic wear leveling), or `None` when the pool is empty.
    pub fn open_block(&mut self, plane: u32) -> Option<u32> {
        let p = &mut self.planes[plane as usize];
        let block = match self.dynamic_wear_leveling {
            true => p.free.take_least_erased(&self.erase_count)?,
            false => p.free.pop_front(&self.erase_count)?,
        };
        self.state[block as usize] = BlockState::Open;
        self.refresh_collectable(block);
        Some(block)
    }

    /// Programs page `page` of an open block (block-mapped families: a page has a fixed offset).
    /// Pages are programmed in order, so pages skipped below `page` can no longer be written
    /// until the block is erased: they count as invalid.
    pub fn program_at(&mut self, block: u32, page: u32, now: SimTime) -> u32 {
        let b = block as usize;
        debug_assert!(page >= self.write_ptr[b] as u32 && page < self.pages_per_block);
        self.write_ptr[b] = page as u16 + 1;
        self.valid[b] += 1;
        if page + 1 == self.pages_per_block {
            if self.state[b] != BlockState::Zoned {
                self.state[b] = BlockState::Full;
            }
            self.refresh_collectable(block);
            self.closed_at[b] = now;
        }
        block * self.pages_per_block + page
    }

    /// `block` (just opened) belongs to a zone from now until its erase.
    pub fn mark_zoned(&mut self, block: u32) {
        self.state[block as usize] = BlockState::Zoned;
        self.refresh_collectable(block);
    }

    /// Takes the next page of an open block as padding (a zone finish): it is programmed but
    /// holds no data, so it counts as written and invalid.
    pub fn pad_page(&mut self, block: u32, now: SimTime) -> u32 {
        let b = block as usize;
        let page = self.write_ptr[b] as u32;
        debug_assert!(page < self.pages_per_block);
        self.write_ptr[b] += 1;
        if page + 1 == self.pages_per_block {
            if self.state[b] != BlockState::Zoned {
                self.state[b] = BlockState::Full;
            }
            self.refresh_collectable(block);
            self.closed_at[b] = now;
        }
        block * self.pages_per_block + page
    }

    /// Whether a program of `ppa` may be issued now without a doubt: it is its block's next
    /// page. (A higher page is in order too when the pages between were skipped, as block
    /// mapping does; the scheduler then checks that none of them still waits.)
    #[inline]
    pub fn is_next_program(&self, ppa: u32) -> bool {
        let (b, page) = self.split(ppa);
        page == self.next_program[b] as u32
    }

    /// (block, page in block) of a physical page.
    #[inline]
    fn split(&self, ppa: u32) -> (usize, u32) {
        (self.per_block.div_u32(ppa) as usize, self.per_block.rem_u32(ppa))
    }

    /// A program of `ppa` was issued to its die: it must not be below its block's cursor.
    #[inline]
    pub fn note_program(&mut self, ppa: u32) {
        let (b, page) = self.split(ppa);
        debug_assert!(
            page >= self.next_program[b] as u32,
            "page {page} of block {b} programmed after page {}",
            self.next_program[b] - 1
        );
        if page < self.next_program[b] as u32 {
            self.out_of_order_programs += 1;
            return;
        } else if page + 1 == self.slc_pages && self.is_slc(b as u32) {
            // An SLC block's last data page: the block is wholly programmed.
            self.next_program[b] = self.pages_per_block as u16;
        } else {
            self.next_program[b] = page as u16 + 1;
        }
        // A cursor only grows until the erase: the block can become collectable only here.
        if self.next_program[b] as u32 == self.pages_per_block {
            self.wholly_programmed(b as u32);
        }
    }

    /// Records that a page of `block` no longer holds current data.
    #[inline]
    pub fn invalidate(&mut self, ppa: u32) {
        let b = self.per_block.div_u32(ppa) as usize;
        debug_assert!(self.valid[b] > 0);
        self.valid[b] -= 1;
    }

    #[inline]
    pub fn valid_pages(&self, block: u32) -> u32 {
        self.valid[block as usize] as u32
    }

    #[inline]
    pub fn written_pages(&self, block: u32) -> u32 {
        self.write_ptr[block as usize] as u32
    }

    pub fn state(&self, block: u32) -> BlockState {
        self.state[block as usize]
    }

    /// Whether `block` is programmed one bit per cell (an SLC-cache block).
    #[inline]
    pub fn is_slc(&self, block: u32) -> bool {
        self.slc.get(block as usize).copied().unwrap_or(false)
    }

    /// Pages `block` takes before it is full: `slc_pages` for an SLC block.
    #[inline]
    fn capacity(&self, block: u32) -> u32 {
        if self.is_slc(block) {
            self.slc_pages
        } else {
            self.pages_per_block
        }
    }

    /// Whether `stream`'s open block on `plane` has a page left (no block needs opening).
    #[inline]
    pub fn frontier_has_room(&self, plane: u32, stream: Stream) -> bool {
        let open = self.planes[plane as usize].frontier[stream.index()];
        open != NO_BLOCK && (self.write_ptr[open as usize] as u32) < self.capacity(open)
    }

    /// SLC-cache blocks of `plane`, open or full, not yet erased.
    #[inline]
    pub fn slc_in_use(&self, plane: u32) -> u32 {
        self.slc_in_use[plane as usize]
    }

    /// The plane's full SLC block filled longest ago (folding takes the oldest data first).
    pub fn oldest_slc_block(&self, plane: u32) -> Option<u32> {
        self.blocks_of_plane(plane)
            .filter(|&b| self.is_slc(b) && self.is_collectable(b))
            .min_by_key(|&b| (self.closed_at[b as usize], b))
    }

    /// Placement handle of the data in `block` (0 without FDP).
    #[inline]
    pub fn handle_of(&self, block: u32) -> u8 {
        self.handle.get(block as usize).copied().unwrap_or(0)
    }

    pub fn erase_count(&self, block: u32) -> u32 {
        self.erase_count[block as usize]
    }

    pub fn closed_at(&self, block: u32) -> SimTime {
        self.closed_at[block as usize]
    }

    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }

    /// The blocks of `plane`, as a range of block ids.
    /// The plane's first block id, and the states and valid-page counts of its blocks (for
    /// scans that look at every block, without an index check per block).
    #[inline]
    pub fn plane_view(&self, plane: u32) -> (u32, &[BlockState], &[u16]) {
        let range = self.blocks_of_plane(plane);
        let (start, end) = (range.start as usize, range.end as usize);
        (range.start, &self.state[start..end], &self.valid[start..end])
    }

    /// The plane's program cursors (see [`Self::is_collectable`]), beside [`Self::plane_view`].
    pub fn plane_cursors(&self, plane: u32) -> &[u16] {
        let range = self.blocks_of_plane(plane);
        &self.next_program[range.start as usize..range.end as usize]
    }

    /// Whether GC or wear leveling may take `block`: it is full and every one of its pages has
    /// been programmed. A block whose last pages are taken but still wait in a die's queue is
    /// not: erasing it would leave those programs to land in the erased (or reused) block.
    #[inline]
    pub fn is_collectable(&self, block: u32) -> bool {
        self.state[block as usize] == BlockState::Full
            && self.next_program[block as usize] as u32 == self.pages_per_block
    }

    /// Whether a full block whose cursor says `cursor` has all its pages programmed.
    #[inline]
    pub fn all_programmed(&self, cursor: u16) -> bool {
        cursor as u32 == self.pages_per_block
    }

    /// Pages placed without the scheduler (preconditioning's fill, steady-state layout and
    /// imported planes, translation pages stored at start) count as programmed: once no program
    /// waits anywhere, each block's cursor is its write pointer.
    pub fn sync_program_cursors(&mut self) {
        self.next_program.copy_from_slice(&self.write_ptr);
        for plane in 0..self.planes.len() as u32 {
            self.refresh_plane_collectable(plane);
        }
    }

    /// [`Self::refresh_collectable`] for every block of `plane`, without a division per block.
    fn refresh_plane_collectable(&mut self, plane: u32) {
        let range = self.blocks_of_plane(plane);
        let (states, cursors) = (
            &self.state[range.start as usize..range.end as usize],
            &self.next_program[range.start as usize..range.end as usize],
        );
        let ppb = self.pages_per_block;
        for ((word, s), c) in
            self.collectable.plane_mut(plane).iter_mut().zip(states.chunks(64)).zip(cursors.chunks(64))
        {
            *word =
                s.iter().zip(c).enumerate().fold(0, |bits, (j, (&s, &c))| {
                    bits | (u64::from(s == BlockState::Full && u32::from(c) == ppb) << j)
                });
        }
    }

    /// [`Self::note_program`]'s once-a-block step, out of line so that its common path stays
    /// small enough to inline into the dispatch path.
    #[cold]
    #[inline(never)]
    fn wholly_programmed(&mut self, block: u32) {
        self.refresh_collectable(block);
    }

    /// Records whether `block` is collectable now (after a change of its state or cursor).
    #[inline]
    fn refresh_collectable(&mut self, block: u32) {
        let collectable = self.is_collectable(block);
        self.collectable.set(block, collectable);
    }

    /// The plane's collectable blocks, a bit per block (see [`super::collectable`]).
    #[inline]
    pub fn plane_collectable(&self, plane: u32) -> &[u64] {
        self.collectable.plane(plane)
    }

    pub fn blocks_of_plane(&self, plane: u32) -> std::ops::Range<u32> {
        let first = plane * self.blocks_per_plane;
        first..first + self.blocks_per_plane
    }

    pub fn mark_victim(&mut self, block: u32) {
        debug_assert_eq!(self.state[block as usize], BlockState::Full);
        self.state[block as usize] = BlockState::Victim;
        self.refresh_collectable(block);
    }

    /// Whether `block`'s next erase retires it (it reaches the P/E cycle limit).
    pub fn retires_at_next_erase(&self, block: u32) -> bool {
        self.erase_count[block as usize] + 1 >= self.pe_cycle_limit
    }

    /// Erases a block and returns it to its plane's free pool, or retires it if it has reached the
    /// P/E cycle limit. Returns whether it was retired.
    pub fn erase(&mut self, block: u32) -> bool {
        let b = block as usize;
        debug_assert_eq!(self.valid[b], 0, "erasing a block that still holds valid pages");
        self.valid[b] = 0;
        self.write_ptr[b] = 0;
        self.next_program[b] = 0;
        let erases = self.erase_count[b];
        self.erase_count[b] += 1;
        let plane = block / self.blocks_per_plane;
        if self.slc.get(b).copied().unwrap_or(false) {
            self.slc[b] = false;
            self.slc_in_use[plane as usize] -= 1;
        }
        let retires = self.erase_count[b] >= self.pe_cycle_limit;
        self.state[b] = if retires { BlockState::Retired } else { BlockState::Free };
        self.refresh_collectable(block);
        let wear = &mut self.planes[plane as usize].wear;
        if erases == wear.least {
            wear.at_least -= 1;
        }
        if !retires {
            wear.most = wear.most.max(erases + 1);
        }
        if wear.at_least == 0 || (retires && erases == wear.most) {
            self.planes[plane as usize].wear = self.scan_wear(plane);
        }
        if retires {
            self.retired_blocks += 1;
            return true;
        }
        self.planes[(block / self.blocks_per_plane) as usize].free.push_back(block, self.erase_count[b]);
        false
    }

    /// Least and most erase counts among the plane's blocks in service (`(u32::MAX, 0)` when
    /// every block has retired).
    #[inline]
    pub fn erase_spread(&self, plane: u32) -> (u32, u32) {
        let wear = self.planes[plane as usize].wear;
        debug_assert_eq!((wear.least, wear.at_least, wear.most), {
            let w = self.scan_wear(plane);
            (w.least, w.at_least, w.most)
        });
        (wear.least, wear.most)
    }

    /// The plane's [`Wear`], counted over its blocks.
    fn scan_wear(&self, plane: u32) -> Wear {
        let mut wear = Wear { least: u32::MAX, at_least: 0, most: 0 };
        for b in self.blocks_of_plane(plane).filter(|&b| self.state[b as usize] != BlockState::Retired) {
            let c = self.erase_count[b as usize];
            if c < wear.least {
                (wear.least, wear.at_least) = (c, 0);
            }
            wear.at_least += u32::from(c == wear.least);
            wear.most = wear.most.max(c);
        }
        wear
    }

    /// The full block with the fewest erases: it holds data that is never rewritten (cold), which
    /// keeps it out of circulation while the other blocks wear.
    pub fn coldest_full_block(&self, plane: u32) -> Option<u32> {
        self.blocks_of_plane(plane)
            .filter(|&b| self.is_collectable(b))
            .min_by_key(|&b| (self.erase_count[b as usize], b))
    }

    pub fn min_erase_count(&self) -> u32 {
        (0..self.erase_count.len())
            .filter(|&b| self.state[b] != BlockState::Retired)
            .map(|b| self.erase_count[b])
            .min()
            .unwrap_or(0)
    }

    /// Lays out a plane as an aged drive: `blocks` blocks taken from the free pool are marked
    /// fully written with `valid[i]` valid pages each (the rest invalid).
    pub fn place_full_blocks(&mut self, plane: u32, valid: &[u16]) {
        for &v in valid {
            let p = &mut self.planes[plane as usize];
            let block = p.free.pop_front(&self.erase_count).expect("spread layout fits the plane") as usize;
            self.valid[block] = v;
            self.write_ptr[block] = self.pages_per_block as u16;
            self.state[block] = BlockState::Full;
            // Not collectable yet (its cursor is 0 until `sync_program_cursors`): its bit stays
            // clear, as it was while the block was free.
            debug_assert!(!self.is_collectable(block as u32));
        }
    }

    /// A copy of one plane's block state, with block ids relative to the plane's first block.
    pub fn export_plane(&self, plane: u32) -> PlaneImage {
        let first = plane * self.blocks_per_plane;
        let range = first as usize..(first + self.blocks_per_plane) as usize;
        let p = &self.planes[plane as usize];
        let relative = |b: u32| if b == NO_BLOCK { NO_BLOCK } else { b - first };
        PlaneImage {
            state: self.state[range.clone()].to_vec(),
            valid: self.valid[range.clone()].to_vec(),
            write_ptr: self.write_ptr[range.clone()].to_vec(),
            erase_count: self.erase_count[range.clone()].to_vec(),
            closed_at: self.closed_at[range].to_vec(),
            free: p.free.iter().map(|&b| b - first).collect(),
            frontier: p.frontier.iter().map(|&b| relative(b)).collect(),
        }
    }

    /// Gives `plane` the block state of `image` (taken from a plane of the same size). The
    /// caller maps the pages the image counts as valid.
    pub fn import_plane(&mut self, plane: u32, image: &PlaneImage) {
        let first = plane * self.blocks_per_plane;
        let range = first as usize..(first + self.blocks_per_plane) as usize;
        let retired_before = self.state[range.clone()].iter().filter(|&&s| s == BlockState::Retired).count() as u32;
        self.state[range.clone()].copy_from_slice(&image.state);
        self.valid[range.clone()].copy_from_slice(&image.valid);
        self.write_ptr[range.clone()].copy_from_slice(&image.write_ptr);
        self.erase_count[range.clone()].copy_from_slice(&image.erase_count);
        self.closed_at[range].copy_from_slice(&image.closed_at);
        self.refresh_plane_collectable(plane);
        let retired = image.state.iter().filter(|&&s| s == BlockState::Retired).count() as u32;
        self.retired_blocks = self.retired_blocks - retired_before + retired;
        self.planes[plane as usize].wear = self.scan_wear(plane);
        let p = &mut self.planes[plane as usize];
        p.free = FreePool::new(image.free.iter().map(|&b| b + first), &self.erase_count)
            .expect("a plane's free pool fits where the plane's blocks did");
        for (f, &b) in p.frontier.iter_mut().zip(&image.frontier) {
            *f = if b == NO_BLOCK { NO_BLOCK } else { b + first };
        }
    }

    /// Replaces closing times by their order (0, 1, 2 ... picoseconds, oldest first; ties by
    /// block id): a preconditioned device's blocks were closed "before" the run, whose clock
    /// starts at zero, and FIFO and cost-benefit must still see them as older than anything the
    /// run closes.
    pub fn rebase_closed_at(&mut self) {
        let mut order: Vec<u32> = (0..self.closed_at.len() as u32).collect();
        order.sort_by_key(|&b| (self.closed_at[b as usize], b));
        for (rank, &b) in order.iter().enumerate() {
            self.closed_at[b as usize] = rank as SimTime;
        }
    }

    /// Checks the per-block counters against the mapping's view of validity.
    pub fn check(&self, is_valid: impl Fn(u32) -> bool) -> Result<(), String> {
        for (b, &v) in self.valid.iter().enumerate() {
            let wp = self.write_ptr[b] as u32;
            let first = b as u32 * self.pages_per_block;
            let counted = (first..first + wp).filter(|&ppa| is_valid(ppa)).count() as u32;
            if counted != v as u32 {
                return Err(format!("block {b}: counter says {v} valid pages, the map says {counted}"));
            }
            if (first + wp..first + self.pages_per_block).any(&is_valid) {
                return Err(format!("block {b}: a page above the write pointer is mapped"));
            }
            let invalid = wp - counted;
            let free = self.pages_per_block - wp;
            if counted + invalid + free != self.pages_per_block {
                return Err(format!("block {b}: valid + invalid + free != pages per block"));
            }
            if self.collectable.contains(b as u32) != self.is_collectable(b as u32) {
                return Err(format!("block {b}: the collectable set disagrees with its state and cursor"));
            }
            if (self.state[b] == BlockState::Free)
                != (wp == 0 && self.planes[b / self.blocks_per_plane as usize].free.contains(b as u32))
            {
                return Err(format!(
                    "block {b}: state {:?} disagrees with write pointer {wp} / free pool",
                    self.state[b]
                ));
            }
        }
        Ok(())
    }

    /// Totals over the device: (valid, invalid, free) pages.
    pub fn page_totals(&self) -> (u64, u64, u64) {
        let mut totals = (0u64, 0u64, 0u64);
        for (b, &v) in self.valid.iter().enumerate() {
            let wp = self.write_ptr[b] as u64;
            totals.0 += v as u64;
            totals.1 += wp - v as u64;
            totals.2 += self.pages_per_block as u64 - wp;
        }
        totals
    }

    pub fn max_erase_count(&self) -> u32 {
        self.erase_count.iter().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn one_plane(dynamic: bool, pe_limit: u32) -> BlockManager {
        let text = "[flash]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 1\nblocks_per_plane = 8\npages_per_block = 2\n[ftl]\nover_provisioning = 0.9\n[[flows]]\nqueue_depth = 1\nrequests = 1\n";
        let config = Config::from_toml_str(text).unwrap();
        BlockManager::new(&Geometry::new(&config), dynamic, pe_limit, 1, 0).unwrap()
    }

    fn fill_and_erase(m: &mut BlockManager) -> u32 {
        let (ppa, _) = m.allocate(0, Stream::USER, 0);
        m.allocate(0, Stream::USER, 0);
        let block = ppa / 2;
        m.invalidate(ppa);
        m.invalidate(ppa + 1);
        m.erase(block);
        block
    }

    #[test]
    fn dynamic_wear_leveling_opens_the_least_erased_block() {
        let mut m = one_plane(true, 100);
        // Wear block 0 twice; it returns to the pool behind fresher blocks.
        let b = fill_and_erase(&mut m);
        assert_eq!(b, 0);
        // The next block opened is a fresh one, never the worn block 0 while fresher ones wait.
        let next = fill_and_erase(&mut m);
        assert_ne!(next, 0);
        assert_eq!(m.erase_count(next), 1);
    }

    #[test]
    fn a_block_at_the_pe_limit_is_retired() {
        let mut m = one_plane(false, 1);
        let free_before = m.free_blocks(0);
        let b = fill_and_erase(&mut m);
        assert_eq!(m.state(b), BlockState::Retired);
        assert_eq!(m.retired_blocks, 1);
        assert_eq!(m.free_blocks(0), free_before - 1);
    }
}
