//! The FTL and flash half of a request's life: splitting into page transactions, translation and
//! allocation, garbage collection, and the die / channel timeline of each flash command.

use super::{Event, Simulation};
use crate::cache::Lookup;
use crate::config::{CacheMode, Scheduling};
use crate::flash::backend::DieState;
use crate::flash::SECTOR_BYTES;
use crate::ftl::transaction::{Class, Transaction, TxnKind, CLASSES, NO_REQUEST};
use crate::ftl::GcRank;
use crate::stats::breakdown::{Breakdown, Step};

use crate::ftl::mapping::OWNER_PREFETCH_PAGES;
use crate::time::SimTime;

impl Simulation {
    /// The command is in the device. A write the flow caches goes to the data cache; otherwise
    /// the request is split into page transactions, each translated on its own, and pages of a
    /// read that the cache holds are served from DRAM.
    pub(super) fn on_command_arrived(&mut self, request: u32) {
        if self.request_is_zoned(request) && !self.zone_command_arrived(request) {
            return;
        }
        self.serve_command(request);
    }

    /// [`Self::on_command_arrived`] past the zone check (a zoned namespace's writes skip the
    /// write cache: their pages go to their zone's blocks).
    pub(super) fn serve_command(&mut self, request: u32) {
        if self.serve_host_command(request) {
            return;
        }
        let (is_read, _, _) = self.request_sectors(request);
        let mode = self.cache.mode(self.requests_flow(request));
        if !is_read && mode.caches_writes() && !self.request_is_zoned(request) && self.cache_write(request) {
            return;
        }
        if !is_read && self.dram.detailed() {
            // The write data goes into a DRAM buffer before its pages go to the FTL.
            self.buffer_write_data(request);
            return;
        }
        self.split_into_pages(request);
    }

    /// Splits the request into page transactions, each translated on its own; pages of a read
    /// that the cache holds are served from DRAM.
    pub(super) fn split_into_pages(&mut self, request: u32) {
        let (is_read, start, sectors) = self.request_sectors(request);
        let flow = self.requests_flow(request);
        let mode = self.cache.mode(flow);
        // Time since the command arrived (the data buffer, with the banked DRAM model).
        let buffered = self.now() - self.cache_view(request).1;
        let spp = self.ftl.geometry.sectors_per_page;
        let end = start + sectors as u64;
        let kind = if is_read { TxnKind::UserRead } else { TxnKind::UserWrite };
        let priority = self.flows[flow].priority as u8;
        let (mut pending, mut hit_bytes) = (0u32, 0u64);
        for lpa in self.ftl.geometry.pages_of_sectors(start, end) {
            let page_start = lpa * spp;
            let first = start.max(page_start) - page_start;
            // Sectors of this page the request covers.
            let covered = (end.min(page_start + spp) - page_start - first) as u32;
            if is_read && mode != CacheMode::Off {
                let join = self.prefetch_is_current(lpa as u32);
                match self.cache.read_lookup(flow, lpa as u32, sector_mask(first, covered), join) {
                    Lookup::Hit => {
                        hit_bytes += covered as u64 * SECTOR_BYTES;
                        self.data_cache_read(request, lpa as u32, first, covered);
                        continue;
                    }
                    Lookup::Pending => {
                        pending += 1;
                        self.wait_for_prefetch(request, flow, lpa as u32, first, covered);
                        continue;
                    }
                    Lookup::Miss => {}
                }
            }
            pending += 1;
            let id = self.insert_txn(Transaction::new(kind, request, lpa as u32, covered, self.queue.now()).serving(
                flow as u16,
                priority,
                first as u16,
            ));
            if buffered > 0 {
                self.spent[id as usize].add(Step::CacheDram, buffered);
            }
            if is_read {
                self.data_read_issued(id, lpa as u32);
            }
            self.start_user_page(id);
        }
        if hit_bytes > 0 {
            pending += 1;
            self.serve_from_cache(request, hit_bytes);
        }
        self.set_pending(request, pending);
        if is_read && self.cache.read_ahead.enabled() {
            self.read_ahead(flow, start, end);
        }
    }

    /// Puts a transaction in the slab, with an empty latency breakdown beside it (kept in its own
    /// array: the breakdown is large and only a few steps touch it). GC and translation-page
    /// work serves no request and is never charged, so its breakdown is not cleared either.
    #[inline]
    pub(super) fn insert_txn(&mut self, txn: Transaction) -> u32 {
        let serves_request = txn.request != NO_REQUEST || charged(txn.kind.class());
        let id = self.txns.insert(txn);
        if id as usize >= self.spent.len() {
            self.spent.resize(id as usize + 1, Breakdown::default());
        }
        if serves_request {
            self.spent[id as usize] = Breakdown::default();
        }
        id
    }

    /// Creates a transaction on a known physical page and queues it at its die.
    pub(super) fn queue_txn(&mut self, kind: TxnKind, request: u32, lpa: u32, ppa: u32, sectors: u32) -> u32 {
        let g = &self.ftl.geometry;
        let plane = g.plane_of_block(g.block_of_ppa(ppa));
        let queued_at = self.queue.now();
        let id = self.insert_txn(Transaction::new(kind, request, lpa, sectors, queued_at).at(ppa, plane));
        self.push_to_die(id, kind.class(), plane);
        id
    }

    #[inline]
    pub(super) fn push_to_die(&mut self, id: u32, class: Class, plane: u32) {
        let die = self.ftl.geometry.die_of_plane(plane);
        self.tsu.now = self.queue.now();
        let seq = self.tsu.push(die, class, id, &self.txns);
        self.txns.get_mut(id).seq = seq;
        self.touched_dies.push(die);
        if matches!(class, Class::UserRead | Class::MappingRead) {
            self.maybe_suspend(die);
        }
    }

    /// A host or translation-page write takes its page when it reaches the die queue, so pages of
    /// a block are programmed in order. If the plane has no room it waits until GC frees a block.
    pub(super) fn enqueue_write(&mut self, id: u32) {
        if self.family.is_some() && self.txns.get(id).kind == TxnKind::UserWrite {
            return self.family_write(id);
        }
        self.enqueue_page_write(id);
    }

    /// [`Self::enqueue_write`] under page allocation.
    pub(super) fn enqueue_page_write(&mut self, id: u32) {
        let plane = self.txns.get(id).plane;
        if self.stalled_writes[plane as usize].is_empty() && self.can_place(id) {
            self.place_write(id);
        } else {
            self.stalled_writes[plane as usize].push_back(id);
            // GC starts when a program completes on a plane short of erased blocks; a write
            // that finds no room where no program is under way (a reclaim unit handle's first
            // write after steady-state preconditioning left the plane at its GC reserve) must
            // start it itself, or the plane waits forever (fuzz seed 28002, run 333).
            if self.ftl.needs_gc(plane) {
                self.start_gc(plane);
            }
        }
    }

    fn place_write(&mut self, id: u32) {
        let t = *self.txns.get(id);
        let old = self.data.as_ref().map(|_| self.ftl.map.lookup(t.lpa));
        let ppa = match self.ftl.zones.as_deref_mut() {
            Some(zones) if t.kind == TxnKind::UserWrite && zones.holds_page(t.lpa) => {
                let ppa = zones.allocate(zones.zone_of_page(t.lpa), t.plane, &mut self.ftl.blocks, self.queue.now());
                self.ftl.write_at(t.lpa, ppa);
                ppa
            }
            _ => self.ftl.write(t.lpa, t.plane, self.write_stream(id, &t), self.queue.now()),
        };
        if let Some(old) = old {
            self.data_program(&t, old, ppa);
        }
        self.txns.get_mut(id).ppa = ppa;
        self.push_to_die(id, t.kind.class(), t.plane);
        match t.kind {
            TxnKind::UserWrite => {
                self.note_host_map_update(t.flow as usize, t.lpa);
                if t.request != NO_REQUEST {
                    // Written past the cache: cached copies of these sectors are older now.
                    let (_, start, sectors) = self.request_sectors(t.request);
                    let spp = self.ftl.geometry.sectors_per_page;
                    let page_start = t.lpa as u64 * spp;
                    let first = start.max(page_start);
                    let end = (start + sectors as u64).min(page_start + spp);
                    self.cache.forget(t.lpa, sector_mask(first - page_start, (end - first) as u32), None);
                }
            }
            // A super-page update's copy of a page it did not change: a copy, not a host page.
            TxnKind::MergeWrite => {
                self.ftl.stats.user_programs -= 1;
                self.ftl.stats.gc_programs += 1;
            }
            _ => {}
        }
        if self.ftl.needs_gc(t.plane) {
            self.start_gc(t.plane);
        } else if self.ftl.slc_enabled() && t.kind == TxnKind::UserWrite && self.ftl.begin_fold(t.plane).is_some() {
            self.begin_collecting(t.plane, false);
        }
    }

    /// Picks a victim on `plane` and starts collecting it.
    fn start_gc(&mut self, plane: u32) {
        if self.ftl.begin_gc(plane, self.queue.now()).is_some() {
            self.begin_collecting(plane, true);
        }
    }

    /// Starts moving the valid pages of the plane's claimed victim (GC or wear leveling); a GC
    /// victim's scan first occupies the FTL's core.
    pub(super) fn begin_collecting(&mut self, plane: u32, gc: bool) {
        if let Some(fw) = self.firmware.as_mut().filter(|_| gc) {
            // The victim scan and its move list occupy the FTL's core; the moves are queued at once.
            use crate::config::firmware::{FirmwareStep, WorkItem};
            let victim = self.ftl.gc[plane as usize].victim;
            let work = [
                (WorkItem::GcBlockScanned, self.ftl.gc_blocks_examined() as u64),
                (WorkItem::GcPageMoved, self.ftl.blocks.valid_pages(victim) as u64),
            ];
            fw.run_with(FirmwareStep::Gc, self.queue.now(), 1, &work);
        }
        self.continue_collecting(plane);
    }

    /// Starts the victim's next moves (a read of each valid page), up to `moves_in_flight`, from
    /// the pages not yet looked at (a page the host rewrote meanwhile is skipped); erases it after
    /// its last move.
    fn continue_collecting(&mut self, plane: u32) {
        let window = self.ftl.moves_in_flight();
        let g = &self.ftl.geometry;
        let spp = g.sectors_per_page as u32;
        let victim = self.ftl.gc[plane as usize].victim;
        let first = victim * g.pages_per_block;
        let written = self.ftl.blocks.written_pages(victim);
        loop {
            let gc = &self.ftl.gc[plane as usize];
            if gc.pending_moves >= window || gc.next_page >= written {
                break;
            }
            let next = gc.next_page;
            let ppa = first + next;
            self.ftl.gc[plane as usize].next_page += 1;
            if next + OWNER_PREFETCH_PAGES < written {
                self.ftl.map.prefetch_owner(ppa + OWNER_PREFETCH_PAGES);
            }
            if self.ftl.map.is_valid(ppa) {
                let lpa = self.ftl.map.owner(ppa);
                self.queue_txn(TxnKind::GcRead, NO_REQUEST, lpa, ppa, spp);
                self.ftl.gc[plane as usize].pending_moves += 1;
            }
        }
        let gc = &self.ftl.gc[plane as usize];
        if gc.pending_moves == 0 && gc.next_page >= written {
            self.queue_erase(plane);
        }
    }

    fn queue_erase(&mut self, plane: u32) {
        let victim = self.ftl.gc[plane as usize].victim;
        self.queue_block_erase(TxnKind::Erase, NO_REQUEST, victim);
    }

    /// Starts the die's next batch if it is idle and has work.
    pub(super) fn service_die(&mut self, die: u32) {
        if self.backend.dies[die as usize].busy
            || !self.tsu.has_work(die)
            || self.blocked_by_fifo(die)
            || self.blocked_by_chip(die)
        {
            return;
        }
        // One queue with work: the same batch in any order, without looking at the GC state of
        // the die's planes (every pick of a random-read run, 15 % of a random-write run's with
        // GC: 217,000 of 1.49 M, callgrind).
        let order = match self.tsu.one_queue_waiting(die) {
            true => self.tsu.service_order(GcRank::Last),
            false => self.service_order(die),
        };
        let reads_only = self.backend.dies[die as usize].suspended.is_some();
        self.tsu.now = self.now();
        let Some(batch) =
            self.tsu.next_batch(die, &self.txns, order, reads_only, &self.flow_last_served, &self.ftl.blocks)
        else {
            return;
        };
        if batch.class.is_write() {
            let ppb = self.ftl.geometry.pages_per_block;
            for &id in batch.ids() {
                let (ppa, plane) = (self.txns.get(id).ppa, self.txns.get(id).plane);
                self.ftl.blocks.note_program(ppa);
                // A block becomes a possible victim once its last page is programmed: a plane
                // that found no victim while it waited starts collecting now.
                if self.ftl.geometry.page_in_block(ppa) == ppb - 1 && self.family.is_none() && self.ftl.needs_gc(plane)
                {
                    self.start_gc(plane);
                }
            }
        }
        match batch.class {
            Class::UserWrite | Class::MappingWrite => {
                for &id in batch.ids() {
                    self.ftl.note_host_program(self.txns.get(id).plane);
                }
            }
            Class::GcWrite => {
                for &id in batch.ids() {
                    self.ftl.note_gc_program(self.txns.get(id).plane);
                }
            }
            _ => {}
        }
        if matches!(batch.class, Class::UserRead | Class::UserWrite) {
            self.picks += 1;
            let flow = self.txns.get(batch.txns[0]).flow as usize;
            self.flow_last_served[flow] = self.picks;
        }
        let now = self.now();
        if charged(batch.class) {
            for &id in batch.ids() {
                let queued_at = self.txns.get(id).queued_at;
                self.spent[id as usize].add(Step::ChipQueueWait, now - queued_at);
            }
        }
        let d = &mut self.backend.dies[die as usize];
        d.busy = true;
        d.batch = batch;
        d.picked_at = now;
        d.cell_start = SimTime::MAX;
        if batch.count > 1 {
            self.backend.counters.multiplane += 1;
        }
        if let Some(fw) = &mut self.firmware {
            let done = fw.run(crate::config::firmware::FirmwareStep::Fil, now, batch.count as u64);
            self.queue.schedule(done, Event::DispatchDone { die });
            return;
        }
        match self.backend.dispatch(batch.class, batch.count as u64, now) {
            Some(dispatched) => self.queue.schedule(dispatched, Event::DispatchDone { die }),
            None => self.begin_flash_operation(die),
        }
    }

    /// The order in which `die` serves its queues: GC first while one of its planes is short
    /// of space (or GC is not preemptible), user work first otherwise.
    pub(super) fn service_order(&self, die: u32) -> &'static [Class; CLASSES] {
        let g = &self.ftl.geometry;
        let first_plane = die * g.planes_per_die;
        let rank = (first_plane..first_plane + g.planes_per_die).map(|p| self.ftl.gc_rank(p)).min();
        self.tsu.service_order(rank.unwrap_or(GcRank::Last))
    }

    /// The die of `chip` that takes the next command: the one whose next transaction comes
    /// first in service order and priority, the oldest among equals (MQSim's queues are per
    /// chip: the first non-empty queue's head names the die). None while the chip is busy under
    /// one command per chip.
    pub(super) fn die_to_serve(&self, chip: u32) -> Option<u32> {
        let g = &self.ftl.geometry;
        let first = chip * g.dies_per_chip;
        let dies = first..first + g.dies_per_chip;
        let busy = |d: u32| self.backend.dies[d as usize].busy;
        if self.backend.one_command_per_chip && dies.clone().any(busy) {
            return None;
        }
        dies.filter(|&d| !busy(d))
            .filter_map(|d| self.tsu.next_pick(d, &self.txns, self.service_order(d)).map(|pick| (pick, d)))
            .min()
            .map(|(_, d)| d)
    }

    /// Under one command per chip (MQSim, `flash.die_commands`) a die may start only when no
    /// other die of its chip is busy: the dies of a chip never overlap.
    fn blocked_by_chip(&self, die: u32) -> bool {
        if !self.backend.one_command_per_chip {
            return false;
        }
        let g = &self.ftl.geometry;
        let first = g.chip_of_die(die) * g.dies_per_chip;
        (first..first + g.dies_per_chip).any(|d| d != die && self.backend.dies[d as usize].busy)
    }

    /// Under FIFO scheduling a die may not start while another die of its chip waits with an
    /// older transaction.
    fn blocked_by_fifo(&self, die: u32) -> bool {
        // A die with a suspended program or erase serves its reads out of order (that is what
        // suspension is for): it neither waits for nor holds up the other dies.
        if self.tsu.policy() != Scheduling::Fifo || self.backend.dies[die as usize].suspended.is_some() {
            return false;
        }
        let Some(mine) = self.tsu.oldest_waiting(die, &self.txns) else { return false };
        let g = &self.ftl.geometry;
        let first = g.chip_of_die(die) * g.dies_per_chip;
        (first..first + g.dies_per_chip).any(|d| {
            d != die
                && self.backend.dies[d as usize].suspended.is_none()
                && self.tsu.oldest_waiting(d, &self.txns).is_some_and(|s| s < mine)
        })
    }

    /// The channel the die is on.
    #[inline]
    pub(super) fn channel_of_die(&self, die: u32) -> usize {
        self.ftl.geometry.channel_of_chip(self.ftl.geometry.chip_of_die(die)) as usize
    }

    /// Adds the same times to steps of every transaction of the die's batch (all of an
    /// operation's steps in one pass over the batch).
    #[inline]
    fn charge_batch(&mut self, die: u32, charges: &[(Step, u64)]) {
        let batch = &self.backend.dies[die as usize].batch;
        if !charged(batch.class) {
            return;
        }
        for &id in batch.ids() {
            let spent = &mut self.spent[id as usize];
            for &(step, ps) in charges {
                spent.add(step, ps);
            }
        }
    }

    /// Command/address (and a program's data in) on the channel, then the cell operation.
    pub(super) fn begin_flash_operation(&mut self, die: u32) {
        let DieState { batch, picked_at, .. } = self.backend.dies[die as usize];
        let now = self.now();
        let firmware = (Step::Firmware, now - picked_at);
        let channel = self.channel_of_die(die);
        match batch.class {
            c if c.is_read() => {
                let pages = batch.ids().iter().map(|&id| cell_page(&self.ftl, self.txns.get(id).ppa));
                let (sent, cell) = self.backend.start_read(die, channel, now, pages);
                let cell = cell + self.decode_read_batch(die);
                self.charge_batch(die, &[firmware, (Step::CommandAddress, sent - now), (Step::CellOperation, cell)]);
                self.queue.schedule(sent + cell, Event::CellReadDone { die });
            }
            c if c.is_write() => {
                if self.open_channel.is_some() {
                    self.check_chunk_programs(die);
                }
                if self.backend.program_transfer_ps(batch.class) > 0 && self.dram.detailed() {
                    self.buffer_page_out(die);
                }
                // After the checks above, which need the simulation mutably.
                let pages = batch.ids().iter().map(|&id| cell_page(&self.ftl, self.txns.get(id).ppa));
                let sectors = batch.ids().iter().map(|&id| self.txns.get(id).written_sectors as u64).sum();
                let (start, command, data, cell) =
                    self.backend.start_program(batch.class, die, channel, now, pages, sectors);
                self.charge_batch(
                    die,
                    &[
                        firmware,
                        (Step::CommandAddress, start + command - now),
                        (Step::ChannelData, data),
                        (Step::CellOperation, cell),
                    ],
                );
                self.schedule_cell_end(die, start + command + data, cell);
            }
            _ => {
                let (sent, cell) = self.backend.start_erase(die, channel, now, batch.count as u64);
                self.charge_batch(die, &[firmware]);
                self.schedule_cell_end(die, sent, cell);
            }
        }
        self.note_channel_use(channel);
    }

    /// The read data leaves the page registers over the channel, one plane after another (or
    /// waits for its turn, `sim/channel_path.rs`).
    pub(super) fn on_cell_read_done(&mut self, die: u32) {
        let class = self.backend.dies[die as usize].batch.class;
        self.backend.dies[die as usize].data_ready_at = self.now();
        if self.data_out_or_wait(die, class) {
            self.send_data_out(die);
        }
    }

    pub(super) fn send_data_out(&mut self, die: u32) {
        let batch = self.backend.dies[die as usize].batch;
        let bytes: u64 = batch.ids().iter().map(|&id| self.txns.get(id).sectors as u64 * SECTOR_BYTES).sum();
        let now = self.now();
        let channel = self.channel_of_die(die);
        let done = self.backend.data_out(batch.class, channel, now, bytes);
        // Any wait for the channel since the data was ready counts as channel time.
        let ready = self.backend.dies[die as usize].data_ready_at;
        self.charge_batch(die, &[(Step::ChannelData, done - ready)]);
        self.note_channel_use(channel);
        let gen = self.backend.dies[die as usize].gen;
        self.queue.schedule(done, Event::DieDone { die, gen });
        if batch.class == Class::GcRead {
            // When the data is out, each moved page's forward entry is checked and rewritten
            // (`place_gc_write`): a random access to the map that its validity check brought
            // into the caches long before, since evicted. Asked for now, it is there by then.
            for &id in batch.ids() {
                self.ftl.map.prefetch_lookup(u64::from(self.txns.get(id).lpa));
            }
        }
    }

    pub(super) fn on_die_done(&mut self, die: u32) {
        if self.retry_read(die) {
            return;
        }
        let batch = self.backend.dies[die as usize].batch;
        self.backend.dies[die as usize].busy = false;
        for &id in batch.ids() {
            if self.dram.detailed() && self.buffer_page_in(id) {
                continue;
            }
            self.complete_txn(id);
        }
        if self.backend.dies[die as usize].suspended.is_some() {
            self.after_read_while_suspended(die);
        }
        self.start_read_reclaims();
        self.touched_dies.push(die);
        let g = &self.ftl.geometry;
        let (first, n) = (g.chip_of_die(die) * g.dies_per_chip, g.dies_per_chip);
        if self.backend.one_command_per_chip {
            // The chip is idle: its die that ranks first goes first (`die_to_serve`), the
            // others wait for the chip again. Dies are serviced last in, first out.
            let oldest = self.die_to_serve(g.chip_of_die(die));
            self.touched_dies.extend(first..first + n);
            self.touched_dies.extend(oldest);
        } else if self.tsu.policy() == Scheduling::Fifo {
            // Dies of this chip that waited behind this one's older work may go now.
            self.touched_dies.extend(first..first + n);
        }
    }

    pub(super) fn complete_txn(&mut self, id: u32) {
        let t = *self.txns.get(id);
        if self.family.is_some() && t.kind == TxnKind::UserWrite {
            self.family_write_done(id, &t);
        }
        match t.kind {
            TxnKind::UserRead if t.request == NO_REQUEST => {
                // A page read ahead into the cache.
                // Unpinned first: an erase it lets go must not take this id, still in use.
                let translated = self.unpin_read(id, &t);
                self.txns.remove(id);
                self.on_prefetch_done(id, t, translated);
            }
            TxnKind::UserRead => {
                let translated = self.unpin_read(id, &t);
                self.txns.remove(id);
                let sent = self.send_read_data(t.sectors as u64 * SECTOR_BYTES);
                // Checks the data (with `[data] emulate`) and lets the cache keep the page.
                self.data_flash_read_done(id, &t, translated);
                let spent = self.spent[id as usize];
                self.finish_part(t.request, &spent, sent);
            }
            TxnKind::UserWrite if t.request == NO_REQUEST => {
                // A dirty cache line reached flash.
                self.txns.remove(id);
                self.on_flush_done(t.flow as usize, t.lpa, t.written_sectors as u64);
            }
            TxnKind::UserWrite => {
                self.txns.remove(id);
                let spent = self.spent[id as usize];
                self.finish_part(t.request, &spent, self.now());
            }
            TxnKind::RmwRead => {
                // The old page is in the controller; merge and write it as a whole page.
                let plane = self.write_plane(t.flow as usize, t.lpa);
                let tx = self.txns.get_mut(id);
                tx.kind = TxnKind::UserWrite;
                tx.plane = plane;
                tx.queued_at = self.queue.now();
                self.enqueue_write(id);
            }
            TxnKind::GcRead => {
                if self.ftl.map.lookup(t.lpa) == t.ppa {
                    if self.host_gc_over_link() {
                        // Open-Channel host GC: the page goes to host memory and back first.
                        self.send_gc_page_through_host(id);
                    } else {
                        self.begin_gc_write(id);
                    }
                } else {
                    // The host rewrote this page while it was being moved: nothing left to move.
                    self.txns.remove(id);
                    self.gc_move_done(t.plane);
                }
            }
            TxnKind::GcWrite => {
                self.txns.remove(id);
                self.gc_move_done(t.plane);
            }
            TxnKind::MappingRead => {
                self.txns.remove(id);
                self.on_mapping_read_done(t.lpa);
            }
            TxnKind::MappingWrite => {
                self.txns.remove(id);
            }
            TxnKind::MergeRead | TxnKind::MergeWrite | TxnKind::MergeErase => {
                self.txns.remove(id);
                self.on_merge_txn_done(&t);
            }
            TxnKind::ZoneErase | TxnKind::ZonePad => {
                self.txns.remove(id);
                self.zone_flash_work_done(&t);
            }
            TxnKind::Erase => {
                self.txns.remove(id);
                let block = self.ftl.geometry.block_of_ppa(t.ppa);
                self.data_erase(t.ppa);
                self.series_boundary(self.now());
                self.series.sample_gc(self.now(), &self.ftl.stats);
                self.ftl.finish_gc(block);
                if self.open_channel.is_some() {
                    self.note_chunk_reset(block);
                }
                self.retry_stalled_writes(t.plane);
                if self.workload_over() {
                    // The run is over once its requests are: a plane below its threshold starts no
                    // new victim (an idle drive would go on collecting; that is not the run's work).
                } else if let Some((_, gc)) = self.ftl.next_victim_after_erase(t.plane, self.queue.now()) {
                    self.begin_collecting(t.plane, gc);
                }
            }
        }
    }

    /// A valid page of a victim is in the controller: write it into the plane's GC block, or
    /// wait for one (only worn-out, retired blocks can leave GC without an erased block).
    pub(super) fn begin_gc_write(&mut self, id: u32) {
        let tx = self.txns.get_mut(id);
        tx.kind = TxnKind::GcWrite;
        tx.queued_at = self.queue.now();
        let plane = tx.plane;
        if self.ftl.blocks.can_allocate(plane, self.ftl.gc_stream(plane)) {
            self.place_gc_write(id);
        } else {
            self.stalled_gc_writes[plane as usize].push_back(id);
        }
    }

    /// Lets the cache keep the page a user read brought in (translated to `translated`, see
    /// `unpin_read`), unless a write has remapped the page since: the data read is then older
    /// than what flash holds. An unmapped read's stand-in page says nothing (another write may
    /// be given it): the zeros it read are still right only while the page is unmapped.
    pub(super) fn fill_cache_after_read(&mut self, t: &Transaction, translated: u32) {
        // The map entry is asked for again only where the cache would keep the page: it is a
        // random access that has left the caches since the read was translated (callgrind: one
        // level-1 miss in every read of a random-read run with the cache off).
        if !self.cache.keeps_read_fills(t.flow as usize) {
            return;
        }
        let now_at = self.ftl.map.lookup(t.lpa);
        if now_at == translated {
            self.cache.fill_after_read(t.flow as usize, t.lpa, sector_mask(t.first_sector as u64, t.sectors));
        }
    }

    pub(super) fn gc_move_done(&mut self, plane: u32) {
        self.ftl.gc[plane as usize].pending_moves -= 1;
        self.continue_collecting(plane);
    }

    /// Moves a valid page of a victim into the plane's GC block (unless the host has rewritten it
    /// while the move waited).
    fn place_gc_write(&mut self, id: u32) {
        let t = *self.txns.get(id);
        if self.ftl.map.lookup(t.lpa) != t.ppa {
            self.txns.remove(id);
            self.gc_move_done(t.plane);
            return;
        }
        let ppa = self.ftl.write(t.lpa, t.plane, self.ftl.gc_stream(t.plane), self.queue.now());
        self.data_move(t.ppa, ppa);
        self.txns.get_mut(id).ppa = ppa;
        self.push_to_die(id, Class::GcWrite, t.plane);
        self.note_gc_map_update(t.lpa);
    }

    pub(super) fn retry_stalled_writes(&mut self, plane: u32) {
        while !self.stalled_gc_writes[plane as usize].is_empty()
            && self.ftl.blocks.can_allocate(plane, self.ftl.gc_stream(plane))
        {
            let id = self.stalled_gc_writes[plane as usize].pop_front().expect("non-empty");
            self.place_gc_write(id);
        }
        while let Some(&id) = self.stalled_writes[plane as usize].front() {
            if !self.can_place(id) {
                break;
            }
            self.stalled_writes[plane as usize].pop_front();
            self.place_write(id);
        }
    }

    /// Whether write `id` can take a page of its plane now (its stream has room).
    #[inline]
    fn can_place(&self, id: u32) -> bool {
        let t = self.txns.get(id);
        match self.ftl.zones.as_deref() {
            Some(zones) if t.kind == TxnKind::UserWrite && zones.holds_page(t.lpa) => {
                zones.can_allocate(zones.zone_of_page(t.lpa), t.plane, &self.ftl.blocks)
            }
            _ => self.ftl.blocks.can_allocate(t.plane, self.write_stream(id, t)),
        }
    }
}

/// Whether a class's transactions can serve a host request, and so keep a latency breakdown (a
/// read-modify-write's read is a user read).
#[inline]
pub(super) fn charged(class: Class) -> bool {
    matches!(class, Class::UserRead | Class::UserWrite)
}

/// Bit mask of `count` sectors starting at sector `first` of a page.
#[inline]
pub(super) fn sector_mask(first: u64, count: u32) -> u64 {
    let ones = if count >= 64 { u64::MAX } else { (1u64 << count) - 1 };
    ones << first
}

/// The page number the cell times go by: its page in the block, flagged for an SLC-cache block
/// ([`crate::flash::timing::SLC_PAGE`]).
#[inline]
pub(super) fn cell_page(ftl: &crate::ftl::Ftl, ppa: u32) -> u32 {
    let g = &ftl.geometry;
    let page = g.page_in_block(ppa);
    if ftl.slc_enabled() && ftl.blocks.is_slc(g.block_of_ppa(ppa)) {
        page | crate::flash::timing::SLC_PAGE
    } else {
        page
    }
}
