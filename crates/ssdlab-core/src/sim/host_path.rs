//! The host half of a request's life: arrival, submission queue, fetch arbitration, PCIe
//! transfers and completion.

use super::{Event, Request, SimError, Simulation, Source};
use crate::device::Op;
use crate::flash::SECTOR_BYTES;
use crate::stats::breakdown::{Breakdown, Step};
use crate::time::SimTime;
use crate::workload::RequestSpec;

impl Simulation {
    /// Issues each closed-loop flow's first `queue_depth` requests and schedules the first
    /// arrival of every open-loop and trace flow.
    pub(super) fn start_flows(&mut self) -> Result<(), SimError> {
        for f in 0..self.flows.len() {
            match self.flows[f].closed_loop_depth {
                Some(depth) => {
                    for _ in 0..depth {
                        if !self.flows[f].may_issue(0) {
                            break;
                        }
                        let spec = self.generate(f)?.expect("synthetic flows never run dry");
                        self.submit(f, spec);
                    }
                }
                None => self.schedule_next_arrival(f)?,
            }
        }
        self.try_fetch();
        Ok(())
    }

    /// The flow's next request from its generator or trace, `None` at the end of a trace.
    fn generate(&mut self, f: usize) -> Result<Option<RequestSpec>, SimError> {
        let now = self.now();
        let mut ahead = None;
        let spec = match &mut self.flows[f].source {
            Source::Synthetic(s) => {
                let spec = s.next(now);
                ahead = s.upcoming().map(|u| u.start_sector);
                Some(spec)
            }
            Source::Trace(r) => {
                let spec = r.next_request()?;
                if let Some(spec) = &spec {
                    self.check_trace_placement(f, spec)?;
                }
                spec
            }
            Source::Host => None,
        };
        // A request's first page is looked up in the forward map once its command is fetched,
        // a few events from now: that random read of the map is asked for ahead. A closed-loop
        // flow's next request is already drawn (`Synthetic::upcoming`), so its entry is asked
        // for a whole request ahead (this request's was asked for when it was the upcoming one);
        // otherwise this request's. At the sector `submit` gives it: in the flow's domain.
        if let Some(start_sector) = ahead.or(spec.as_ref().map(|s| s.start_sector)) {
            let sector = self.flows[f].domain_base_sector + start_sector;
            self.ftl.map.prefetch_lookup(self.ftl.geometry.page_of_sector(sector));
        }
        Ok(spec)
    }

    /// Reads the flow's next open-loop request and schedules its arrival, unless the flow is done.
    fn schedule_next_arrival(&mut self, f: usize) -> Result<(), SimError> {
        let Some(spec) = self.generate(f)? else {
            self.note_trace_warnings(f);
            return Ok(());
        };
        if self.flows[f].may_issue(spec.arrival) {
            self.flows[f].next = Some(spec);
            self.queue.schedule(spec.arrival.max(self.now()), Event::Arrival { flow: f as u16 });
        } else {
            self.note_trace_warnings(f);
        }
        Ok(())
    }

    fn note_trace_warnings(&mut self, f: usize) {
        let flow = &self.flows[f];
        if let Source::Trace(r) = &flow.source {
            self.warnings.extend(r.warnings(&flow.name));
        }
    }

    pub(super) fn on_arrival(&mut self, f: usize) -> Result<(), SimError> {
        let spec = self.flows[f].next.take().expect("an arrival event has its request");
        self.submit(f, spec);
        self.try_fetch();
        self.schedule_next_arrival(f)
    }

    /// Puts a new request in the flow's submission queue (or its backlog if the queue is full):
    /// the one way requests enter the device, from the device's own flows and from an outside
    /// host alike. Returns the request's id.
    pub(super) fn submit(&mut self, f: usize, spec: RequestSpec) -> u32 {
        self.submit_op(f, spec, spec.op)
    }

    pub(super) fn submit_op(&mut self, f: usize, spec: RequestSpec, op: Op) -> u32 {
        let placement = self.placement_of(f, &spec);
        let flow = &mut self.flows[f];
        let request = self.requests.insert(Request {
            flow: f as u16,
            is_read: op == Op::Read,
            op,
            start_sector: flow.domain_base_sector + spec.start_sector,
            sectors: spec.sectors,
            arrival: spec.arrival,
            pending: 0,
            seq: flow.issued,
            fetched_at: 0,
            command_at: 0,
            arrived_at: 0,
            firmware_ps: 0,
            breakdown: Breakdown::default(),
            cache_bytes: 0,
            read_retries: 0,
            status: crate::device::Status::Success,
            zone_tracked: false,
            placement,
        });
        flow.issued += 1;
        if flow.sq.len() < flow.sq_depth as usize {
            flow.sq.push_back(request);
        } else {
            flow.backlog.push_back(request);
        }
        self.data_request_submitted(request);
        request
    }

    /// Fetches commands while the controller has free command slots, choosing queues by the
    /// configured arbitration among those with a command and fewer than QueueFetchSize requests
    /// inside the device.
    pub(super) fn try_fetch(&mut self) {
        // A command for an idle device in a low-power state waits for it to wake.
        if self.requests_in_device == 0
            && self.power_states.is_some()
            && self.flows.iter().any(|f| !f.sq.is_empty())
            && self.waking_from_idle()
        {
            return;
        }
        while self.requests_in_device < self.max_requests_in_device {
            let (flows, qfs) = (&self.flows, self.queue_fetch_size);
            let pick = if self.single_queue {
                // One NCQ (SATA) or UTP transfer request list (UFS) for everyone: commands enter
                // in the order the host issued them.
                let requests = &self.requests;
                (0..flows.len())
                    .filter_map(|f| flows[f].sq.front().map(|&r| (requests.get(r).arrival, f)))
                    .min()
                    .map(|(_, f)| f)
            } else {
                self.arbiter.pick(|f| !flows[f].sq.is_empty() && flows[f].in_device < qfs)
            };
            let Some(f) = pick else { break };
            let flow = &mut self.flows[f];
            let request = flow.sq.pop_front().expect("eligible queues have a command");
            flow.in_device += 1;
            if let Some(waiting) = flow.backlog.pop_front() {
                flow.sq.push_back(waiting);
            }
            if self.requests_in_device == 0 {
                self.gap_start = self.now();
                self.device_busy();
            }
            self.requests_in_device += 1;
            self.fetch(request);
        }
    }

    /// The device reads the command over the link, and for a write the data right after it. An
    /// Open-Channel host FTL first spends its CPU time on the request's pages.
    fn fetch(&mut self, request: u32) {
        if self.request_is_zoned(request) && !self.zone_command_fetched(request) {
            return;
        }
        self.transfer_command(request);
    }

    /// The command (and a write's data) crosses the link into the device.
    pub(super) fn transfer_command(&mut self, request: u32) {
        let now = self.now() + self.host_ftl_time(request);
        let command_at = self.link.send_command(now);
        let r = self.requests.get_mut(request);
        let mut arrived = command_at;
        // Only a write moves data to the device (a trim's range list is in the command here).
        if r.op.carries_data() {
            arrived = self.link.send_write_data(now, command_at, r.sectors as u64 * SECTOR_BYTES);
        }
        r.fetched_at = now;
        r.command_at = command_at;
        r.arrived_at = arrived;
        self.queue.schedule(arrived, Event::CommandArrived { request });
    }

    /// One page transaction of `request` is done (its read data, if any, queued on the link until
    /// `data_sent_at`); after the last, the completion entry is sent, behind that data. The last
    /// transaction's steps become the request's breakdown.
    pub(super) fn finish_part(&mut self, request: u32, spent: &Breakdown, data_sent_at: SimTime) {
        let now = self.queue.now();
        let r = self.requests.get_mut(request);
        r.pending -= 1;
        if r.pending == 0 {
            let posted = self.link.send_completion(now);
            r.breakdown = *spent;
            r.breakdown.add(Step::PcieData, data_sent_at - now);
            r.breakdown.add(Step::Completion, posted - data_sent_at);
            self.queue.schedule(posted, Event::RequestCompleted { request });
        }
    }

    pub(super) fn on_request_completed(&mut self, request: u32) {
        let now = self.now();
        let r = self.requests.remove(request);
        self.data_request_completed(request, &r);
        let f = r.flow as usize;
        self.series_boundary(now);
        let flow = &mut self.flows[f];
        let mut breakdown = r.breakdown;
        breakdown.add(Step::SqWait, r.fetched_at - r.arrival);
        breakdown.add(Step::CommandTransfer, r.command_at - r.fetched_at);
        breakdown.add(Step::PcieData, r.arrived_at - r.command_at);
        breakdown.add(Step::Firmware, r.firmware_ps);
        // Flushes and trims move no data: they are not reads or writes in the statistics.
        // Nor do zone management commands, or commands the device refused.
        let moves_data = !matches!(r.op, Op::Flush | Op::Trim)
            && !r.op.is_zone_management()
            && r.status == crate::device::Status::Success;
        if r.status != crate::device::Status::Success {
            flow.refused[r.status as usize] += 1;
        }
        if moves_data {
            flow.stats.record(r.is_read, r.arrival, now, r.sectors as u64 * SECTOR_BYTES, &breakdown);
            self.series.record(f, r.is_read, now, now - r.arrival, r.sectors as u64 * SECTOR_BYTES, &self.ftl.stats);
            if let Some(rel) = self.reliability.as_mut().filter(|_| r.is_read) {
                rel.note_read_latency(r.read_retries, now - r.arrival, r.sectors as u64 * SECTOR_BYTES, &breakdown);
            }
        }
        if let Some(log) = self.records.as_mut().filter(|_| moves_data) {
            log.record(
                r.flow,
                r.seq,
                r.is_read,
                r.arrival,
                now,
                r.start_sector,
                r.sectors as u64 * SECTOR_BYTES,
                &breakdown,
            );
        }
        flow.in_device -= 1;
        flow.completed += 1;
        self.last_progress = now;
        self.longest_completion_gap = self.longest_completion_gap.max(now - self.gap_start);
        self.gap_start = now;
        self.requests_in_device -= 1;
        if let Some(log) = &mut self.completion_log {
            log.push((r.flow, r.seq));
        }
        self.host_request_completed(request, &r, &breakdown);
        if r.zone_tracked {
            self.zone_request_completed(r.start_sector);
        }
        let flow = &self.flows[f];
        if flow.closed_loop_depth.is_some() && flow.may_issue(now) {
            if let Ok(Some(spec)) = self.generate(f) {
                self.submit(f, spec);
            }
        }
        self.try_fetch();
        if self.requests_in_device == 0 {
            self.device_emptied();
        }
    }

    pub(super) fn request_sectors(&self, request: u32) -> (bool, u64, u32) {
        let r = self.requests.get(request);
        (r.is_read, r.start_sector, r.sectors)
    }

    #[inline]
    pub(super) fn requests_flow(&self, request: u32) -> usize {
        self.requests.get(request).flow as usize
    }

    pub(super) fn set_cache_bytes(&mut self, request: u32, bytes: u64) {
        self.requests.get_mut(request).cache_bytes = bytes;
    }

    /// (is a read, when the command was in the device and through the front-end firmware, bytes
    /// served by the cache).
    pub(super) fn cache_view(&self, request: u32) -> (bool, SimTime, u64) {
        let r = self.requests.get(request);
        (r.is_read, r.arrived_at + r.firmware_ps, r.cache_bytes)
    }

    /// The command has arrived: the HIL parses it, the cache layer looks up each page (when the
    /// flow uses the cache) and the FTL translates each page, one step after another on their
    /// cores; then the request goes on to the cache and flash. Each step's cost follows the
    /// work it does: the interface's protocol events, each page's cache and CMT outcome (as the
    /// cache and CMT stand when the step starts), a write's page allocations.
    pub(super) fn run_front_end_firmware(&mut self, request: u32) {
        use crate::config::firmware::{FirmwareStep, WorkItem};
        let now = self.now();
        let r = *self.requests.get(request);
        let spp = self.ftl.geometry.sectors_per_page;
        // A flush names no sector: the HIL parses it, and no page is looked up or translated.
        let pages =
            if r.sectors == 0 { 0 } else { (r.start_sector + r.sectors as u64 - 1) / spp - r.start_sector / spp + 1 };
        let flow = r.flow as usize;
        let uses_cache = self.cache.mode(flow) != crate::config::CacheMode::Off;
        let hil =
            host_interface_work(self.config.host.interface, r.is_read, r.sectors as u64 * 512, pages, self.flows.len());
        let (mut cache_work, mut ftl_work) = (
            [(WorkItem::CacheMiss, 0), (WorkItem::CacheEviction, 0)],
            [
                (WorkItem::CmtMiss, 0),
                (WorkItem::CmtEntryWalked, 0),
                (WorkItem::PageAllocation, if r.is_read { 0 } else { pages }),
            ],
        );
        if pages > 0 {
            let first = (r.start_sector / spp) as u32;
            let part = &self.cache.partitions()[self.cache.partition_of(flow)];
            for lpa in first..first + pages as u32 {
                if uses_cache && !part.contains(lpa) {
                    cache_work[0].1 += 1;
                    cache_work[1].1 += (part.set_free(part.set_of_page(lpa)) == 0) as u64;
                }
                if let Some(walked) = self.mapping.miss_work(flow, lpa) {
                    ftl_work[0].1 += 1;
                    ftl_work[1].1 += walked as u64;
                }
            }
        }
        let fw = self.firmware.as_mut().expect("called only with the firmware model on");
        let mut done = fw.run_with(FirmwareStep::Hil, now, 1, hil.as_slice());
        if uses_cache {
            done = fw.run_with(FirmwareStep::Cache, done, pages, &cache_work);
        }
        done = fw.run_with(FirmwareStep::Ftl, done, pages, &ftl_work);
        self.requests.get_mut(request).firmware_ps = done - now;
        self.queue.schedule(done, Event::FirmwareDone { request });
    }

    pub(super) fn set_pending(&mut self, request: u32, pending: u32) {
        self.requests.get_mut(request).pending = pending;
    }

    /// Queues `bytes` of read data on the device-to-host link.
    pub(super) fn send_read_data(&mut self, bytes: u64) -> SimTime {
        self.link.send_to_host(self.now(), bytes)
    }
}

/// The host interface layer's protocol events for one command of `bytes` (0 for a flush) over
/// `pages` flash pages on `interface`, with `queues` submission queues (NVMe: one per flow).
/// Counts follow each protocol: NVMe 1.4 (doorbells, a 64-byte command fetched, a PRP entry per
/// 4 KiB memory page and a list page beyond two, a completion entry and an MSI-X interrupt); UFS
/// (JESD220: COMMAND, DATA IN per page or READY TO TRANSFER and DATA OUT, RESPONSE, as
/// `host::ufs` sends them); SATA NCQ (Register Host to Device, DMA Setup, a DATA FIS per 8 KiB,
/// Set Device Bits).
pub(crate) fn host_interface_work(
    interface: crate::config::HostInterface,
    is_read: bool,
    bytes: u64,
    pages: u64,
    queues: usize,
) -> HilWork {
    use crate::config::firmware::WorkItem::*;
    use crate::config::HostInterface;
    /// NVMe's memory page size (CC.MPS = 0) and PRP entries per list page.
    const MEMORY_PAGE: u64 = 4096;
    const PRP_LIST_ENTRIES: u64 = 512;
    /// The largest DATA FIS (SATA 3.x, 10.5.11).
    const DATA_FIS: u64 = 8192;
    let mut w = HilWork::default();
    match interface {
        HostInterface::Nvme | HostInterface::OpenChannel => {
            let entries = bytes.div_ceil(MEMORY_PAGE);
            // PRP1 holds the first entry; beyond two, PRP2 points to list pages of 512 entries
            // whose last entry chains to the next page.
            let list_entries = entries.saturating_sub(1);
            let lists = if entries > 2 { (list_entries - 1).div_ceil(PRP_LIST_ENTRIES - 1) } else { 0 };
            w.push(NvmeDoorbell, 2);
            w.push(NvmeCommandFetch, 1);
            w.push(NvmeQueueScanned, queues as u64);
            w.push(NvmePrpEntry, entries);
            w.push(NvmePrpList, lists);
            w.push(NvmeCompletion, 1);
            w.push(NvmeInterrupt, 1);
        }
        HostInterface::Ufs => {
            let upius = match (bytes, is_read) {
                (0, _) => 2,
                (_, true) => 2 + pages,
                (_, false) => 4,
            };
            w.push(UfsUpiu, upius);
        }
        HostInterface::Sata => {
            let fises = if bytes == 0 { 2 } else { 3 + bytes.div_ceil(DATA_FIS) };
            w.push(SataFis, fises);
        }
    }
    w
}

/// Work items of one HIL execution (at most the seven NVMe ones), on the stack.
#[derive(Default)]
pub(crate) struct HilWork {
    items: [(crate::config::firmware::WorkItem, u64); 7],
    len: usize,
}

impl HilWork {
    fn push(&mut self, item: crate::config::firmware::WorkItem, units: u64) {
        self.items[self.len] = (item, units);
        self.len += 1;
    }

    pub(crate) fn as_slice(&self) -> &[(crate::config::firmware::WorkItem, u64)] {
        &self.items[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::host_interface_work;
    use crate::config::firmware::WorkItem;
    use crate::config::HostInterface;

    fn units(w: &super::HilWork, item: WorkItem) -> u64 {
        w.as_slice().iter().find(|(i, _)| *i == item).map_or(0, |&(_, n)| n)
    }

    #[test]
    fn prp_lists_hold_511_entries_and_a_chain_pointer_except_the_last() {
        let lists = |memory_pages: u64| {
            units(&host_interface_work(HostInterface::Nvme, true, memory_pages * 4096, 1, 1), WorkItem::NvmePrpList)
        };
        // PRP1 and PRP2 hold up to two entries; beyond, PRP2 points at a list of the other ones.
        assert_eq!((lists(1), lists(2), lists(3)), (0, 0, 1));
        // 512 entries in the list (513 memory pages) fit one list page; 513 need a second.
        assert_eq!((lists(513), lists(514)), (1, 2));
        // Two pages hold 511 + 512 entries.
        assert_eq!((lists(1024), lists(1025)), (2, 3));
        // An unaligned tail still takes a whole entry; a flush takes none.
        let w = host_interface_work(HostInterface::Nvme, false, 4097, 1, 3);
        assert_eq!((units(&w, WorkItem::NvmePrpEntry), units(&w, WorkItem::NvmeQueueScanned)), (2, 3));
        assert_eq!(units(&host_interface_work(HostInterface::Nvme, false, 0, 0, 1), WorkItem::NvmePrpEntry), 0);
    }

    #[test]
    fn ufs_and_sata_count_their_protocol_units() {
        let upius = |read, bytes, pages| {
            units(&host_interface_work(HostInterface::Ufs, read, bytes, pages, 1), WorkItem::UfsUpiu)
        };
        // COMMAND, a DATA IN per page, RESPONSE; COMMAND, READY TO TRANSFER, DATA OUT, RESPONSE.
        assert_eq!((upius(true, 65536, 4), upius(false, 65536, 4), upius(false, 0, 0)), (6, 4, 2));
        let fises = |bytes| units(&host_interface_work(HostInterface::Sata, true, bytes, 1, 1), WorkItem::SataFis);
        assert_eq!((fises(4096), fises(8192), fises(8193), fises(0)), (4, 4, 5, 2));
        // Neither interface's device firmware sees a doorbell.
        let w = host_interface_work(HostInterface::Sata, true, 4096, 1, 1);
        assert_eq!(units(&w, WorkItem::NvmeDoorbell), 0);
    }
}
