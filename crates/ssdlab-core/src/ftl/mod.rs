//! The flash translation layer: page mapping, static allocation, garbage collection and the
//! transaction scheduling unit. The simulation drives it; the FTL owns the device's logical and
//! physical state.

pub mod block_map;
pub mod blocks;
pub mod cmt;
mod collectable;
pub mod fdp;
mod fill;
mod free_pool;
pub mod gc;
pub mod implied;
mod in_plane;
pub mod mapping;
pub mod placement;
pub mod super_page;
pub mod table_memory;
pub mod transaction;
pub mod tsu;
pub mod zones;

use blocks::{BlockManager, Stream};
use gc::VictimSelector;
use mapping::{PageMap, StaticPlanes, UNMAPPED};
use placement::Placement;

use crate::config::{Config, FillLayout, MappingFamily, PreconditionMode};
use crate::engine::RandomStream;
use crate::flash::Geometry;
use crate::time::SimTime;

/// Random stream id of GC victim selection.
const STREAM_GC: u64 = 1;

/// GC progress on one plane. One victim at a time per plane.
#[derive(Clone, Copy, Debug, Default)]
pub struct PlaneGc {
    pub active: bool,
    pub victim: u32,
    /// Page moves started but not finished; the victim is erased when this reaches zero.
    pub pending_moves: u32,
    /// Paced GC: pages of the victim not yet looked at (its moves start a few at a time).
    pub next_page: u32,
    /// Paced GC: the last victim was a GC one, so static wear leveling may take the next turn.
    wear_leveling_turn: bool,
    /// Paced GC: page moves owed to the pages written on the plane while it collects, in
    /// 1/[`PACING_UNIT`] moves (negative: moves done ahead, in idle time).
    owed_moves: i64,
    /// Paced GC: moves each page written owes, in 1/[`PACING_UNIT`] moves: valid pages per page
    /// an erase gives back, over the plane's recent victims.
    moves_per_page: i64,
    /// Paced GC: valid pages of the plane's recent victims, a moving average in
    /// 1/[`PACING_UNIT`] pages (None before its first victim).
    victim_valid: Option<i64>,
}

/// Paced GC: moves of one victim under way at once (one read while the previous page's program
/// waits for the die).
const PACED_MOVES_IN_FLIGHT: u32 = 2;

/// Fixed-point unit of the paced GC's accounts (a victim's moves per freed page is a fraction).
const PACING_UNIT: i64 = 256;

/// Where GC work ranks against host writes on a die (most urgent first: a die takes the
/// smallest rank of its planes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GcRank {
    /// GC reads, programs and erases ahead of host writes.
    First,
    /// Paced GC owing moves: GC ahead of host writes, one move at a time.
    Owed,
    /// All GC work after host work (preemptible GC above its hard threshold, paced GC owing
    /// nothing): GC runs when the die has nothing else to do.
    Last,
}

/// When GC on a plane goes ahead of host writes on its die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GcUrgency {
    /// Always (MQSim without preemptible GC).
    Always,
    /// Only at or below the hard threshold (`ftl.preemptible_gc`).
    AtHardFloor(u32),
    /// At or below the hard threshold, or while moves are owed (`ftl.gc_pacing`).
    Paced(u32),
}

#[derive(Clone, Debug, Default)]
pub struct FtlStats {
    pub user_programs: u64,
    /// Programs of translation pages (CMT write-backs and their GC updates).
    pub mapping_programs: u64,
    /// Reads of translation pages after CMT misses.
    pub mapping_reads: u64,
    pub gc_programs: u64,
    pub blocks_erased: u64,
    pub gc_victims: u64,
    pub unmapped_reads: u64,
    pub rmw_reads: u64,
    /// Victims chosen by static wear leveling rather than GC.
    pub static_wl_migrations: u64,
    /// Blocks rewritten by read reclaim, and pages read again by read retries
    /// (`[flash.reliability]`).
    pub read_reclaims: u64,
    pub read_retries: u64,
    /// FDP (`[ftl.fdp]`): per reclaim unit handle, host pages written, pages programmed for it
    /// (host and GC), blocks erased and reclaim units (blocks) opened. Empty without FDP.
    pub handle_host_pages: Vec<u64>,
    pub handle_media_pages: Vec<u64>,
    pub handle_blocks_erased: Vec<u64>,
    pub handle_units_opened: Vec<u64>,
    /// SLC cache (`[flash.slc_cache]`): host pages written to SLC blocks and directly to the
    /// dense cells, SLC blocks folded and the pages their folding moved.
    pub slc_host_pages: u64,
    pub dense_host_pages: u64,
    pub slc_blocks_folded: u64,
    pub slc_pages_folded: u64,
    /// SLC blocks opened and erased so far (their difference: the blocks in use).
    pub slc_blocks_opened: u64,
    pub slc_blocks_erased: u64,
}

pub struct Ftl {
    pub geometry: Geometry,
    pub map: PageMap,
    pub blocks: BlockManager,
    pub gc: Vec<PlaneGc>,
    pub stats: FtlStats,
    pub placement: Placement,
    gc_threshold_blocks: u32,
    victims: VictimSelector,
    /// Erase-count spread that triggers static wear leveling (None when it is off).
    static_wl_threshold: Option<u32>,
    urgency: GcUrgency,
    /// Blocks whose reads came near the ECC's limit, waiting for read reclaim (few at a time).
    reclaim_queue: Vec<u32>,
    /// FDP: each flow's reclaim unit handle (empty without FDP: every write is handle 0).
    flow_handles: Vec<u8>,
    /// FDP: the reclaim unit handles offered (0 without FDP).
    reclaim_unit_handles: u32,
    /// FDP: the events log (LID 23h).
    pub fdp_events: fdp::EventLog,
    /// `[flash.slc_cache]`, when on.
    slc_cache: Option<crate::config::SlcCacheConfig>,
    /// FDP or the SLC cache count what each placed page was (`note_placement`).
    placement_stats: bool,
    /// A zoned namespace's zones (`[zns]`): where their pages go and their state.
    pub zones: Option<Box<zones::ZoneTable>>,
}

impl Ftl {
    /// Builds the FTL state and places the initial data. Fails only if the tables cannot be allocated.
    pub fn new(config: &Config, geometry: Geometry, placement: Placement) -> Result<Self, String> {
        let map = Self::page_map(config, &geometry, &placement)?;
        let handles = config.ftl.fdp.as_ref().map_or(1, |f| f.reclaim_unit_handles);
        let slc_pages = config
            .flash
            .slc_cache
            .as_ref()
            .map_or(0, |_| config.flash.pages_per_block / config.flash.technology.bits_per_cell());
        let blocks = BlockManager::new(
            &geometry,
            config.ftl.dynamic_wear_leveling,
            config.ftl.pe_cycle_limit,
            handles,
            slc_pages,
        )?;
        let fdp = config.ftl.fdp.is_some();
        let per_handle = if fdp { handles as usize } else { 0 };
        let gc = vec![PlaneGc::default(); geometry.planes as usize];
        let zones = crate::config::ZoneLayout::of(config, &geometry)
            .map_err(|e| format!("{}: {}", e.path, e.reason))?
            .map(|layout| Box::new(zones::ZoneTable::new(layout, &geometry)));
        // A zoned drive reclaims space only when the host resets zones: GC never starts.
        let conventional = config.namespaces.is_empty() && zones.is_none()
            || config.namespaces.iter().any(|n| n.command_set == crate::config::CommandSet::Conventional);
        let gc_threshold_blocks = if conventional { geometry.gc_threshold_blocks(config.ftl.gc_threshold) } else { 0 };
        let victims = VictimSelector::new(
            config.ftl.gc_policy,
            config.ftl.gc_rga_candidates,
            RandomStream::new(config.seed, STREAM_GC),
        );
        let static_wl_threshold = config.ftl.static_wear_leveling.then_some(config.ftl.static_wear_leveling_threshold);
        let mut ftl = Self {
            geometry,
            map,
            blocks,
            gc,
            stats: FtlStats {
                handle_host_pages: vec![0; per_handle],
                handle_media_pages: vec![0; per_handle],
                handle_blocks_erased: vec![0; per_handle],
                handle_units_opened: vec![0; per_handle],
                ..FtlStats::default()
            },
            placement,
            gc_threshold_blocks,
            victims,
            static_wl_threshold,
            reclaim_queue: Vec::new(),
            slc_cache: config.flash.slc_cache.clone(),
            placement_stats: fdp || config.flash.slc_cache.is_some(),
            zones,
            reclaim_unit_handles: per_handle as u32,
            fdp_events: fdp::EventLog::default(),
            flow_handles: if fdp {
                config.flows.iter().map(|f| f.placement_handle.unwrap_or(0) as u8).collect()
            } else {
                Vec::new()
            },
            urgency: {
                let hard = ((config.ftl.gc_hard_threshold * config.flash.blocks_per_plane as f64).ceil() as u32).max(1);
                if config.ftl.preemptible_gc {
                    GcUrgency::AtHardFloor(hard)
                } else if config.ftl.gc_pacing.unwrap_or(false) {
                    GcUrgency::Paced(hard)
                } else {
                    GcUrgency::Always
                }
            },
        };
        // Every erase count is zero while the drive is filled: looking for the least-erased free
        // block would scan the pool for nothing at every block opened.
        let dynamic = std::mem::replace(&mut ftl.blocks.dynamic_wear_leveling, false);
        // `steady` and `simulate` need the workload; the simulation runs them once it is built.
        // The block-mapped families fill their own way (`sim/merge_path.rs`).
        let block_mapped = matches!(config.ftl.mapping, MappingFamily::Block | MappingFamily::Hybrid);
        if config.precondition.mode == PreconditionMode::Fill && !block_mapped {
            ftl.fill(config.precondition.occupancy, config.precondition.layout.unwrap_or(FillLayout::Packed));
        }
        ftl.blocks.dynamic_wear_leveling = dynamic;
        Ok(ftl)
    }

    /// The mapping tables in the addresses `ftl.map_addresses` asks for
    /// ([`crate::config::mapping::uses_in_plane_addresses`]).
    fn page_map(config: &Config, g: &Geometry, placement: &Placement) -> Result<PageMap, String> {
        let logical = g.logical_pages + g.translation_pages;
        if !crate::config::mapping::uses_in_plane_addresses(config) {
            return PageMap::new(logical, g.physical_pages);
        }
        // Validation refused what the configuration cannot hold; the built placement must agree.
        if !placement.is_static_over(g) {
            return Err("ftl.map_addresses: in-plane addresses need every flow striped over the whole device".into());
        }
        let planes = StaticPlanes {
            plane_of_residue: (0..g.planes).map(|r| g.plane_of_residue(r)).collect(),
            residue_of_plane: g
                .residue_of_plane()
                .ok_or("ftl.map_addresses: the allocation order gives a plane two residues")?,
            pages_per_plane: g.blocks_per_plane * g.pages_per_block,
        };
        PageMap::in_plane(logical, g.physical_pages, planes)
            .map_err(|why| format!("ftl.map_addresses = \"in-plane\": {why}"))
    }

    /// Where the initial copy of `lpa` lives: on its flow's planes when flows have their own
    /// address domains, otherwise where static allocation over the whole device puts it.
    ///
    /// A translation page (an address past the logical space) belongs to the flow whose domain
    /// holds its first entry and is striped over that flow's planes by its own index: a flow
    /// confined to some channels then reads and writes its mapping there too, as MQSim places
    /// each stream's translation pages in its own domain (`allocate_plane_for_translation_write`
    /// allocates as for the stream's user writes), and as isolation (NVMe sets) needs. A flow's
    /// cached-mapping misses no longer land on another flow's channels.
    #[inline]
    pub fn home_plane(&self, lpa: u64) -> u32 {
        let g = &self.geometry;
        if lpa >= g.logical_pages {
            let tpage = lpa - g.logical_pages;
            return match self.placement.owner(tpage * g.entries_per_translation_page) {
                Some(flow) => self.placement.plane_for(flow, tpage),
                None => g.plane_of_lpa(lpa),
            };
        }
        match self.placement.owner(lpa) {
            Some(flow) => self.placement.plane_for(flow, lpa),
            None => g.plane_of_lpa(lpa),
        }
    }

    /// Whether a user write of reclaim unit handle `handle` can be placed on `plane` now
    /// (otherwise it waits for GC).
    #[inline]
    pub fn can_write(&self, plane: u32, handle: u8) -> bool {
        self.blocks.can_allocate(plane, Stream::user(handle))
    }

    /// The reclaim unit handle of flow `flow`'s writes (0 without FDP).
    #[inline]
    pub fn handle_of_flow(&self, flow: u16) -> u8 {
        self.flow_handles.get(flow as usize).copied().unwrap_or(0)
    }

    /// The handle a write of `flow` is placed by: the one it carries (a trace's or an outside
    /// host's per-request handle), else its flow's. One the device does not offer is placed by
    /// handle 0 and logged as an Invalid Placement Identifier event (TP4146). 0 without FDP.
    pub fn placement_of_write(&mut self, flow: u16, carried: Option<u16>, namespace_id: u32, now: SimTime) -> u8 {
        match carried {
            _ if self.reclaim_unit_handles == 0 => 0,
            None => self.handle_of_flow(flow),
            Some(h) if (h as u32) < self.reclaim_unit_handles => h as u8,
            Some(h) => {
                self.fdp_events.invalid_placement_identifier(now, h, namespace_id, flow);
                0
            }
        }
    }

    /// Where a host write of `handle` on `plane` goes: into the SLC cache while the plane's
    /// cache has room (its open SLC block, or another SLC block within the cache's size), else
    /// to the dense cells.
    #[inline]
    pub fn host_stream(&self, plane: u32, handle: u8) -> Stream {
        if self.slc_cache.is_some() {
            let slc = Stream::slc(handle);
            if self.blocks.frontier_has_room(plane, slc) || self.blocks.slc_in_use(plane) < self.slc_allowed(plane) {
                return slc;
            }
        }
        Stream::user(handle)
    }

    /// SLC blocks `plane` may hold now: the configured most, and under the dynamic mode no more
    /// than its SLC blocks and erased blocks beyond the GC reserve (the cache shrinks as the
    /// drive fills).
    pub fn slc_allowed(&self, plane: u32) -> u32 {
        let Some(c) = &self.slc_cache else { return 0 };
        match c.mode {
            crate::config::SlcCacheMode::Static => c.blocks_per_plane,
            crate::config::SlcCacheMode::Dynamic => {
                let room = self.blocks.free_blocks(plane).saturating_sub(self.gc_threshold_blocks + 2);
                c.blocks_per_plane.min(self.blocks.slc_in_use(plane) + room)
            }
        }
    }

    #[inline]
    pub fn slc_enabled(&self) -> bool {
        self.slc_cache.is_some()
    }

    /// Folding: once `plane`'s SLC blocks reach the fold threshold of its cache (or exceed a
    /// cache that shrank), and it collects nothing else, claim its oldest full SLC block: its
    /// valid pages move to the dense cells (GC's frontier) and it is erased.
    pub fn begin_fold(&mut self, plane: u32) -> Option<u32> {
        let c = self.slc_cache.as_ref()?;
        if self.gc[plane as usize].active {
            return None;
        }
        let in_use = self.blocks.slc_in_use(plane);
        let allowed = self.slc_allowed(plane);
        if in_use == 0 || (in_use as f64) < (c.fold_threshold * allowed as f64).ceil() {
            return None;
        }
        let victim = self.blocks.oldest_slc_block(plane)?;
        self.stats.slc_blocks_folded += 1;
        self.stats.slc_pages_folded += self.blocks.valid_pages(victim) as u64;
        // Folding frees a block as GC does: paced the same way, each host page written while
        // it runs owes its share of the fold's moves (otherwise a busy plane never folds).
        self.claim_victim(plane, victim, true);
        Some(victim)
    }

    /// The stream of a GC move on `plane`: its victim's handle, so GC keeps reclaim units apart.
    #[inline]
    pub fn gc_stream(&self, plane: u32) -> Stream {
        Stream::gc(self.blocks.handle_of(self.gc[plane as usize].victim))
    }

    /// Places a new version of `lpa` on `plane`; the previous version becomes invalid.
    #[inline]
    pub fn write(&mut self, lpa: u32, plane: u32, stream: Stream, now: SimTime) -> u32 {
        let (ppa, opened) = self.blocks.allocate(plane, stream, now);
        if let Some(old) = self.map.remap(lpa, ppa) {
            self.blocks.invalidate(old);
        }
        let host = (lpa as u64) < self.geometry.logical_pages;
        match stream.gc {
            true => self.stats.gc_programs += 1,
            false if host => self.stats.user_programs += 1,
            false => self.stats.mapping_programs += 1,
        }
        if self.placement_stats {
            self.note_placement(stream, host, opened);
        }
        ppa
    }

    /// Places a new version of zoned page `lpa` at `ppa` (which its zone allocated); the
    /// previous version, if any, becomes invalid.
    pub fn write_at(&mut self, lpa: u32, ppa: u32) {
        if let Some(old) = self.map.remap(lpa, ppa) {
            self.blocks.invalidate(old);
        }
        self.stats.user_programs += 1;
    }

    /// A zone's block has been erased (a zone reset): it goes back to its plane's pool.
    pub fn erase_zone_block(&mut self, block: u32) {
        let g = &self.geometry;
        self.map.clear_physical(block * g.pages_per_block, g.pages_per_block);
        self.blocks.erase(block);
        self.stats.blocks_erased += 1;
    }

    /// FDP's per-handle and the SLC cache's counts of a page placed (`write`), off the write
    /// path's common case.
    #[cold]
    fn note_placement(&mut self, stream: Stream, host: bool, opened: bool) {
        let s = &mut self.stats;
        s.slc_blocks_opened += u64::from(opened && stream.slc);
        if self.slc_cache.is_some() && host && !stream.gc {
            if stream.slc {
                s.slc_host_pages += 1;
            } else {
                s.dense_host_pages += 1;
            }
        }
        if !s.handle_media_pages.is_empty() {
            let h = stream.handle as usize;
            s.handle_media_pages[h] += 1;
            s.handle_host_pages[h] += u64::from(host && !stream.gc);
            s.handle_units_opened[h] += u64::from(opened);
        }
    }

    /// A trim of `lpa`: its page becomes invalid (GC no longer moves it) and reads of it are
    /// unmapped reads. Returns whether it was mapped.
    pub fn deallocate(&mut self, lpa: u32) -> bool {
        match self.map.unmap(lpa) {
            Some(old) => {
                self.blocks.invalidate(old);
                true
            }
            None => false,
        }
    }

    /// The physical page a read of `lpa` goes to. A page that was never written has no physical
    /// copy; its read is timed as a read of the page static allocation would give it (same plane,
    /// page offset from the LPA), without changing any state, and counted as an unmapped read.
    #[inline]
    pub fn read_target(&mut self, lpa: u32, flow: usize) -> u32 {
        let ppa = self.map.lookup(lpa);
        if ppa != UNMAPPED {
            return ppa;
        }
        self.stats.unmapped_reads += 1;
        let g = &self.geometry;
        let plane = if (lpa as u64) < g.logical_pages {
            self.placement.plane_for(flow, lpa as u64)
        } else {
            self.home_plane(lpa as u64)
        };
        let per_plane = lpa as u64 / g.planes as u64;
        let block =
            g.first_block_of_plane(plane) as u64 + (per_plane / g.pages_per_block as u64) % g.blocks_per_plane as u64;
        (block * g.pages_per_block as u64 + per_plane % g.pages_per_block as u64) as u32
    }

    /// Where GC on `plane` ranks against host writes: first always without pacing or
    /// preemption, at or below the hard threshold of erased blocks, and, when paced, while the
    /// plane's GC owes moves for the pages written on it.
    #[inline]
    pub fn gc_rank(&self, plane: u32) -> GcRank {
        match self.urgency {
            GcUrgency::Always => GcRank::First,
            GcUrgency::AtHardFloor(hard) if self.blocks.free_blocks(plane) <= hard => GcRank::First,
            GcUrgency::AtHardFloor(_) => GcRank::Last,
            GcUrgency::Paced(hard) => {
                let gc = &self.gc[plane as usize];
                if self.blocks.free_blocks(plane) <= hard {
                    GcRank::First
                } else if gc.active && gc.owed_moves > 0 {
                    GcRank::Owed
                } else {
                    GcRank::Last
                }
            }
        }
    }

    /// Paced GC: a host (or translation) page is being programmed on `plane`. While the plane
    /// collects, the page owes the moves that reclaim its room; a plane that collects nothing
    /// owes nothing. Charged at dispatch, not when the page is placed, so that GC's share comes
    /// between queued host writes rather than all before the first of them.
    #[inline]
    pub fn note_host_program(&mut self, plane: u32) {
        if !matches!(self.urgency, GcUrgency::Paced(_)) {
            return;
        }
        let gc = &mut self.gc[plane as usize];
        if gc.active {
            gc.owed_moves += gc.moves_per_page;
        } else {
            gc.owed_moves = 0;
        }
    }

    /// How many of a victim's moves run at once on its plane: all of them, queued when it is
    /// claimed (MQSim), or under paced GC [`PACED_MOVES_IN_FLIGHT`], the next started as one
    /// ends. A die's GC queue then holds a few moves per plane, so the moves a plane owes are not
    /// queued behind a whole victim of its neighbour's (which held host writes for 240 ms on
    /// MQSim's default drive, issue 16).
    #[inline]
    pub fn moves_in_flight(&self) -> u32 {
        if matches!(self.urgency, GcUrgency::Paced(_)) {
            PACED_MOVES_IN_FLIGHT
        } else {
            u32::MAX
        }
    }

    /// The next victim of `plane` after an erase, claimed: under paced GC a plane sits just
    /// below its GC threshold, so static wear leveling, which runs only when no GC is needed,
    /// would never run; there GC and wear leveling take turns while the plane has more erased
    /// blocks than the hard threshold. Otherwise (GC first) GC while it is needed, wear leveling
    /// when not. Returns the victim and whether it is a GC one, or None.
    pub fn next_victim_after_erase(&mut self, plane: u32, now: SimTime) -> Option<(u32, bool)> {
        if let GcUrgency::Paced(hard) = self.urgency {
            let turn = std::mem::replace(&mut self.gc[plane as usize].wear_leveling_turn, false);
            if turn && self.blocks.free_blocks(plane) > hard {
                if let Some(victim) = self.begin_static_wear_leveling(plane) {
                    return Some((victim, false));
                }
            }
        }
        if self.needs_gc(plane) {
            let victim = self.begin_gc(plane, now)?;
            self.gc[plane as usize].wear_leveling_turn = true;
            return Some((victim, true));
        }
        if let Some(victim) = self.begin_read_reclaim(plane) {
            return Some((victim, false));
        }
        if let Some(victim) = self.begin_fold(plane) {
            return Some((victim, false));
        }
        self.begin_static_wear_leveling(plane).map(|victim| (victim, false))
    }

    /// A read of `block` came near the ECC's limit: queue the block for read reclaim (once).
    pub fn request_read_reclaim(&mut self, block: u32) {
        if !self.reclaim_queue.contains(&block) {
            self.reclaim_queue.push(block);
        }
    }

    /// Read reclaim: if `plane` collects nothing now, claim its first queued block that can be
    /// collected, so its valid pages move and it is erased (it frees nothing, like a wear-leveling
    /// victim). Queued blocks of the plane that were erased or claimed meanwhile leave the queue.
    pub fn begin_read_reclaim(&mut self, plane: u32) -> Option<u32> {
        if self.reclaim_queue.is_empty() || self.gc[plane as usize].active {
            return None;
        }
        let g = &self.geometry;
        let blocks = &self.blocks;
        self.reclaim_queue.retain(|&b| g.plane_of_block(b) != plane || blocks.state(b) == blocks::BlockState::Full);
        let at = self.reclaim_queue.iter().position(|&b| g.plane_of_block(b) == plane && blocks.is_collectable(b))?;
        let victim = self.reclaim_queue.remove(at);
        self.claim_victim(plane, victim, false);
        self.stats.read_reclaims += 1;
        Some(victim)
    }

    /// Paced GC: a victim's page is being programmed on `plane`: one move paid.
    #[inline]
    pub fn note_gc_program(&mut self, plane: u32) {
        if matches!(self.urgency, GcUrgency::Paced(_)) {
            self.gc[plane as usize].owed_moves -= PACING_UNIT;
        }
    }

    /// Blocks the GC policy examines per victim (the firmware model's scan work).
    pub fn gc_blocks_examined(&self) -> u32 {
        self.victims.blocks_examined(self.geometry.blocks_per_plane)
    }

    /// Whether `plane` should start a GC: it has none running and too few erased blocks.
    #[inline]
    pub fn needs_gc(&self, plane: u32) -> bool {
        !self.gc[plane as usize].active && self.blocks.free_blocks(plane) < self.gc_threshold_blocks
    }

    /// Chooses and claims a victim on `plane`. Returns it, or `None` if no block has anything to
    /// reclaim.
    pub fn begin_gc(&mut self, plane: u32, now: SimTime) -> Option<u32> {
        let victim = self.victims.select(&self.blocks, plane, now)?;
        self.claim_victim(plane, victim, true);
        Some(victim)
    }

    /// Static wear leveling: if the plane's erase counts spread too far, claim its least-erased
    /// full block as a victim so its (cold) data moves and the block returns to service.
    pub fn begin_static_wear_leveling(&mut self, plane: u32) -> Option<u32> {
        let threshold = self.static_wl_threshold?;
        if self.gc[plane as usize].active {
            return None;
        }
        let (least, most) = self.blocks.erase_spread(plane);
        if most - least <= threshold {
            return None;
        }
        let victim = self.blocks.coldest_full_block(plane)?;
        if self.blocks.erase_count(victim) != least {
            return None;
        }
        self.claim_victim(plane, victim, false);
        self.stats.static_wl_migrations += 1;
        Some(victim)
    }

    /// Claims `victim` for collection. GC is paced: collecting a block with `valid` pages frees
    /// `pages_per_block - valid` pages for `valid` moves, so each page written meanwhile owes
    /// that ratio, taken over the plane's GC victims (`reclaims`; an average with weight 1/8
    /// for the newest): randomised victim choice sometimes takes a nearly full block, whose own
    /// ratio (255 moves per page freed) would hold a host write for a quarter second. Moves owed
    /// from the previous victim stay owed. A wear-leveling victim frees nothing; while it is
    /// collected the plane's GC waits, so host writes owe the plane's usual ratio meanwhile.
    fn claim_victim(&mut self, plane: u32, victim: u32, reclaims: bool) {
        self.blocks.mark_victim(victim);
        let valid = self.blocks.valid_pages(victim) as i64;
        let gc = &mut self.gc[plane as usize];
        gc.active = true;
        gc.victim = victim;
        gc.pending_moves = 0;
        gc.next_page = 0;
        if reclaims {
            let valid = valid * PACING_UNIT;
            let average = gc.victim_valid.map_or(valid, |a| a + (valid - a) / 8);
            gc.victim_valid = Some(average);
            let freed = (self.geometry.pages_per_block as i64 * PACING_UNIT - average).max(PACING_UNIT);
            gc.moves_per_page = average * PACING_UNIT / freed;
        }
        self.stats.gc_victims += 1;
    }

    /// Erases a victim whose valid pages have all been moved, and closes the plane's GC.
    pub fn finish_gc(&mut self, block: u32) {
        let g = &self.geometry;
        let plane = g.plane_of_block(block);
        self.map.clear_physical(block * g.pages_per_block, g.pages_per_block);
        if let Some(erased) = self.stats.handle_blocks_erased.get_mut(self.blocks.handle_of(block) as usize) {
            *erased += 1;
        }
        self.stats.slc_blocks_erased += u64::from(self.blocks.is_slc(block));
        self.blocks.erase(block);
        self.stats.blocks_erased += 1;
        self.gc[plane as usize].active = false;
    }

    /// Checks the FTL's invariants: the maps agree, block counters match the maps, and valid +
    /// invalid + free pages = total.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.map.check_agreement()?;
        if let Some(zones) = &self.zones {
            zones.check()?;
        }
        self.blocks.check(|ppa| self.map.is_valid(ppa))?;
        let (valid, invalid, free) = self.blocks.page_totals();
        if valid + invalid + free != self.geometry.physical_pages {
            return Err(format!("valid {valid} + invalid {invalid} + free {free} != {}", self.geometry.physical_pages));
        }
        if valid != self.map.mapped_pages() {
            return Err(format!("{valid} valid pages but {} mapped logical pages", self.map.mapped_pages()));
        }
        if self.blocks.out_of_order_programs > 0 {
            return Err(format!(
                "{} pages were programmed below a higher page of their block (NAND programs a block in order)",
                self.blocks.out_of_order_programs
            ));
        }
        Ok(())
    }
}

/// results.json `slc_cache` (only with `[flash.slc_cache]`).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct SlcCacheSummary {
    pub mode: crate::config::SlcCacheMode,
    /// Pages an SLC block holds (pages per block / bits per cell).
    pub slc_pages_per_block: u32,
    /// The cache's most bytes, and what the planes may hold at the end (dynamic: less on a
    /// fuller drive).
    pub max_capacity_bytes: u64,
    pub capacity_bytes_at_end: u64,
    /// Host bytes written into SLC blocks and directly to the dense cells (cache full).
    pub host_bytes_to_slc: u64,
    pub host_bytes_to_dense: u64,
    /// SLC blocks folded into the dense cells and the bytes their folding moved.
    pub blocks_folded: u64,
    pub bytes_folded: u64,
    pub blocks_in_use_at_end: u32,
}
