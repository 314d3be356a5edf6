//! Zoned namespaces from the simulation's side (`[zns]`; the zone table is `ftl::zones`).
//!
//! When a command reaches the device its zone checks it (ZNS 1.1 section 2.1: state, write
//! pointer, open and active limits). A write the zone takes moves to its dense device address
//! and goes on like any write, except that it skips the write cache (its pages go to the zone's
//! own blocks; the drive's write buffer is not modelled for zones). A command the zone refuses
//! completes at once with the spec's status. Zone commands take effect in the order the
//! controller fetches them: a reset or finish waits for its zone's writes in flight, and every
//! zone write and management command fetched after it waits behind it (so zone states, and the
//! open and active limits, change in the host's order). A reset unmaps what the zone held and
//! erases its blocks; a finish pads its open blocks; both complete when that flash work is done.

use super::Simulation;
use crate::config::Config;
use crate::device::{Op, Status};
use crate::ftl::blocks::BlockState;
use crate::ftl::mapping::UNMAPPED;
use crate::ftl::transaction::TxnKind;
use crate::ftl::zones::{Management, ZoneDescriptor, ZoneState};
use crate::stats::breakdown::Breakdown;

/// The configuration a zoned device runs with: its zone map is all the mapping it keeps, in
/// DRAM (no translation pages in flash), and every zone starts empty.
pub(super) fn device_config(mut config: Config) -> Config {
    if config.zns.is_some() {
        config.ftl.ideal_mapping = true;
        config.precondition.mode = crate::config::PreconditionMode::None;
    }
    config
}

impl Simulation {
    /// Sectors an outside host addresses through host queue `queue`: its namespace's (on a
    /// zoned one every zone's size) with `[[namespaces]]`, else the device's.
    pub(crate) fn host_sectors(&self, queue: usize) -> u64 {
        match self.host.flow_of_queue(queue) {
            Some(f) if !self.config.namespaces.is_empty() => self.flows[f].host_sectors,
            _ => self.ftl.zones.as_deref().map_or(self.ftl.geometry.logical_sectors(), |z| z.layout.host_sectors()),
        }
    }

    /// Whether `request` goes to a zoned namespace.
    #[inline]
    pub(super) fn request_is_zoned(&self, request: u32) -> bool {
        self.flows[self.requests.get(request).flow as usize].zoned
    }

    /// The zone's check of a write or zone management command the controller fetched (in the
    /// order the host queued them: the zone sees them before a write's data crosses the link, so
    /// a reset queued after a write cannot overtake it). Returns whether it goes on to the link;
    /// a refused command completes, a management command is served, a held one waits.
    pub(super) fn zone_command_fetched(&mut self, request: u32) -> bool {
        let zones = self.ftl.zones.as_deref_mut().expect("zoned");
        let r = self.requests.get(request);
        if !r.op.writes() && !r.op.is_zone_management() {
            return true;
        }
        let (zone, _) = zones.locate(r.start_sector);
        if zones.has_held() {
            zones.hold(zone, request);
            return false;
        }
        self.zone_dispatch(request)
    }

    /// The zone's check of a read, trim or flush that reached the device (writes and zone
    /// management were checked when fetched). Returns whether it goes on to the cache and FTL.
    pub(super) fn zone_command_arrived(&mut self, request: u32) -> bool {
        let Some(zones) = self.ftl.zones.as_deref_mut() else { return true };
        let r = self.requests.get(request);
        let (op, start, sectors) = (r.op, r.start_sector, r.sectors);
        match op {
            Op::Trim => {
                // Space on a zoned namespace comes back by zone resets, not deallocation.
                self.fail_zone_request(request, Status::Unsupported);
                false
            }
            op if op.is_zone_management() => {
                self.zone_management_arrived(request);
                false
            }
            Op::Read => {
                let (zone, offset) = zones.locate(start);
                if offset + sectors as u64 > zones.layout.capacity_sectors {
                    self.fail_zone_request(request, Status::ZoneBoundaryError);
                    return false;
                }
                if zones.state(zone) == ZoneState::Offline {
                    self.fail_zone_request(request, Status::ZoneIsOffline);
                    return false;
                }
                let dense = zones.dense_sector(zone, offset);
                self.requests.get_mut(request).start_sector = dense;
                if let Some(d) = self.data.as_deref_mut() {
                    d.request_arrived_at_zone(request, op, dense, sectors);
                }
                true
            }
            _ => true,
        }
    }

    /// Marks a command the zone handles in the controller as fetched and in the device now
    /// (a management command or a refusal has no data to move).
    fn zone_command_in_device(&mut self, request: u32) {
        let now = self.now();
        let r = self.requests.get_mut(request);
        if r.fetched_at == 0 && r.command_at == 0 {
            r.fetched_at = now;
            r.command_at = now;
            r.arrived_at = now;
        }
    }

    /// A write or zone management command's turn at its zone. Returns whether it goes on to
    /// the link. A management command changes the zone's state now and does its flash work when
    /// it reaches the device ([`Self::zone_management_arrived`]).
    fn zone_dispatch(&mut self, request: u32) -> bool {
        let zones = self.ftl.zones.as_deref_mut().expect("zoned");
        let r = self.requests.get(request);
        let (op, start, sectors) = (r.op, r.start_sector, r.sectors);
        let (zone, offset) = zones.locate(start);
        if op.is_zone_management() {
            if zones.writes_in_flight(zone) > 0 {
                zones.hold(zone, request);
                return false;
            }
            if offset != 0 {
                self.fail_zone_request(request, Status::InvalidField);
                return false;
            }
            let offline = op == Op::ZoneReset && self.zone_group_short_of_blocks(zone);
            let zones = self.ftl.zones.as_deref_mut().expect("zoned");
            return match zones.manage(zone, op, offline) {
                Err(status) => {
                    self.fail_zone_request(request, status);
                    false
                }
                Ok(work) => {
                    if !matches!(work, Management::Done) {
                        // Later management of the zone waits for this one's flash work.
                        zones.write_started(zone);
                        self.requests.get_mut(request).zone_tracked = true;
                    }
                    zones.pending.insert(request, work);
                    let dense = zones.dense_sector(zone, 0);
                    self.requests.get_mut(request).start_sector = dense;
                    true
                }
            };
        }
        match zones.accept_write(zone, offset, sectors, op == Op::ZoneAppend) {
            Ok(at) => {
                let dense = zones.dense_sector(zone, at);
                let host_sector = zone as u64 * zones.layout.zone_sectors + at;
                let r = self.requests.get_mut(request);
                r.start_sector = dense;
                r.zone_tracked = true;
                if op == Op::ZoneAppend {
                    self.host.note_assigned_sector(request, host_sector);
                }
                if let Some(d) = self.data.as_deref_mut() {
                    d.request_arrived_at_zone(request, op, dense, sectors);
                }
                true
            }
            Err(status) => {
                self.fail_zone_request(request, status);
                false
            }
        }
    }

    /// Completes `request` at once with `status` (nothing was done).
    pub(super) fn fail_zone_request(&mut self, request: u32, status: Status) {
        self.zone_command_in_device(request);
        self.requests.get_mut(request).status = status;
        if let Some(zones) = self.ftl.zones.as_deref_mut() {
            zones.counts.failed[status as usize] += 1;
        }
        if let Some(d) = self.data.as_deref_mut() {
            d.request_arrived_at_zone(request, Op::Flush, 0, 0);
        }
        self.complete_now(request);
    }

    /// A zone management command reached the device: a reset unmaps what the zone held and
    /// erases its blocks, a finish pads its open blocks; it completes when that is done.
    fn zone_management_arrived(&mut self, request: u32) {
        let zones = self.ftl.zones.as_deref_mut().expect("zoned");
        let work = zones.pending.remove(&request).expect("a management command's work waits for it");
        let dense = self.requests.get(request).start_sector;
        let zone = (dense / zones.layout.capacity_sectors) as u32;
        match work {
            Management::Done => self.complete_now(request),
            Management::Reset { written_sectors, blocks } => {
                let pages = zones.pages_covering(zone, written_sectors);
                zones.counts.blocks_erased += blocks.len() as u64;
                let spp = self.ftl.geometry.sectors_per_page;
                let sectors = (pages.end - pages.start) * spp;
                for lpa in pages {
                    self.cache.forget(lpa as u32, u64::MAX, None);
                    self.ftl.deallocate(lpa as u32);
                }
                if let Some(d) = self.data.as_deref_mut() {
                    d.zone_reset(dense, sectors as u32);
                }
                if blocks.is_empty() {
                    return self.complete_now(request);
                }
                self.set_pending(request, blocks.len() as u32);
                for block in blocks {
                    self.queue_block_erase(TxnKind::ZoneErase, request, block);
                }
            }
            Management::Finish { open_blocks } => {
                let pads = zones.layout.finish_pads;
                let ppb = self.ftl.geometry.pages_per_block;
                let now = self.now();
                let mut padded = 0u32;
                for block in open_blocks.into_iter().filter(|_| pads) {
                    while self.ftl.blocks.written_pages(block) < ppb {
                        let ppa = self.ftl.blocks.pad_page(block, now);
                        self.queue_txn(TxnKind::ZonePad, request, UNMAPPED, ppa, 0);
                        padded += 1;
                    }
                }
                let zones = self.ftl.zones.as_deref_mut().expect("zoned");
                zones.counts.pad_pages += padded as u64;
                if padded == 0 {
                    return self.complete_now(request);
                }
                self.set_pending(request, padded);
            }
        }
    }

    /// Whether worn-out blocks, counting those this reset's erases will retire, leave a plane of
    /// `zone`'s group too few to back every zone of the group still in service (the zone then
    /// goes offline at its reset).
    fn zone_group_short_of_blocks(&self, zone: u32) -> bool {
        let zones = self.ftl.zones.as_deref().expect("zoned");
        let blocks = &self.ftl.blocks;
        let retiring = |plane: u32| {
            zones
                .blocks_of(zone)
                .iter()
                .filter(|&&b| self.ftl.geometry.plane_of_block(b) == plane && blocks.retires_at_next_erase(b))
                .count() as u64
        };
        if blocks.retired_blocks == 0 && zones.blocks_of(zone).iter().all(|&b| !blocks.retires_at_next_erase(b)) {
            return false;
        }
        let in_service = zones.zones_in_group(zone).filter(|&z| zones.state(z) != ZoneState::Offline).count() as u64;
        let needed = in_service * zones.layout.blocks_per_plane as u64;
        zones.planes_of(zone).iter().any(|&plane| {
            let healthy = self
                .ftl
                .blocks
                .blocks_of_plane(plane)
                .filter(|&b| self.ftl.blocks.state(b) != BlockState::Retired)
                .count() as u64
                - retiring(plane);
            // One erased block per plane stays in reserve.
            healthy < needed + 1
        })
    }

    /// A zone's erase or padding program finished.
    pub(super) fn zone_flash_work_done(&mut self, t: &crate::ftl::transaction::Transaction) {
        if t.kind == TxnKind::ZoneErase {
            self.data_erase(t.ppa);
            let block = self.ftl.geometry.block_of_ppa(t.ppa);
            self.ftl.erase_zone_block(block);
            // Writes of other zones may wait for this plane's erased block.
            self.retry_stalled_writes(t.plane);
        }
        self.finish_part(t.request, &Breakdown::default(), self.now());
    }

    /// A request a zone counted (a write, or a reset or finish with flash work) completed:
    /// waiting zone commands may go, in order.
    pub(super) fn zone_request_completed(&mut self, start_sector: u64) {
        let zones = self.ftl.zones.as_deref_mut().expect("zoned");
        let zone = (start_sector / zones.layout.capacity_sectors) as u32;
        zones.write_done(zone);
        loop {
            let requests = &self.requests;
            let zones = self.ftl.zones.as_deref_mut().expect("zoned");
            let next = zones.next_held(|r, in_flight| in_flight == 0 || !requests.get(r).op.is_zone_management());
            let Some(next) = next else { break };
            if self.zone_dispatch(next) {
                self.transfer_command(next);
            }
        }
    }

    /// The plane the next page of zoned logical page `lpa` goes to.
    #[inline]
    pub(super) fn zone_write_plane(&mut self, lpa: u32) -> Option<u32> {
        let zones = self.ftl.zones.as_deref_mut().filter(|z| z.holds_page(lpa))?;
        let zone = zones.zone_of_page(lpa);
        Some(zones.next_plane(zone))
    }

    /// Report Zones of host queue `queue`'s namespace, in its addresses (None when it is
    /// conventional).
    pub(crate) fn zone_report(&self, queue: usize, first: u64, count: u64) -> Option<Vec<ZoneDescriptor>> {
        let zones = self.ftl.zones.as_deref()?;
        let flow = &self.flows[self.host.flow_of_queue(queue)?];
        if !flow.zoned {
            return None;
        }
        let zone_sectors = zones.layout.zone_sectors;
        let (base_zone, ns_zones) = (flow.domain_base_sector / zone_sectors, flow.host_sectors / zone_sectors);
        let count = count.min(ns_zones.saturating_sub(first));
        let mut report = zones.report(base_zone + first.min(ns_zones), count);
        for z in &mut report {
            z.zone -= base_zone;
            z.start_sector -= flow.domain_base_sector;
            z.write_pointer -= flow.domain_base_sector;
        }
        Some(report)
    }
}
