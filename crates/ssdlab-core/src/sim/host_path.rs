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
        match &mut self.flows[f].source {
            Source::Synthetic(s) => Ok(Some(s.next(now))),
            Source::Trace(r) => Ok(r.next_request()?),
            Source::Host => Ok(None),
        }
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
        let now = self.now() + self.host_ftl_time(request);
        let command_at = self.link.send_command(now);
        let r = self.requests.get_mut(request);
        let mut arrived = command_at;
        // Only a write moves data to the device (a trim's range list is in the command here).
        if r.op == Op::Write {
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
        let flow = &mut self.flows[f];
        let mut breakdown = r.breakdown;
        breakdown.add(Step::SqWait, r.fetched_at - r.arrival);
        breakdown.add(Step::CommandTransfer, r.command_at - r.fetched_at);
        breakdown.add(Step::PcieData, r.arrived_at - r.command_at);
        breakdown.add(Step::Firmware, r.firmware_ps);
        // Flushes and trims move no data: they are not reads or writes in the statistics.
        let moves_data = !matches!(r.op, Op::Flush | Op::Trim);
        if moves_data {
            flow.stats.record(r.is_read, r.arrival, now, r.sectors as u64 * SECTOR_BYTES, &breakdown);
            self.series.record(f, r.is_read, now, now - r.arrival, r.sectors as u64 * SECTOR_BYTES, &self.ftl.stats);
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
    /// cores; then the request goes on to the cache and flash.
    pub(super) fn run_front_end_firmware(&mut self, request: u32) {
        use crate::config::firmware::FirmwareStep;
        let now = self.now();
        let r = *self.requests.get(request);
        let spp = self.ftl.geometry.sectors_per_page;
        // A flush names no sector: the HIL parses it, and no page is looked up or translated.
        let pages =
            if r.sectors == 0 { 0 } else { (r.start_sector + r.sectors as u64 - 1) / spp - r.start_sector / spp + 1 };
        let uses_cache = self.cache.mode(r.flow as usize) != crate::config::CacheMode::Off;
        let fw = self.firmware.as_mut().expect("called only with the firmware model on");
        let mut done = fw.run(FirmwareStep::Hil, now, 1);
        if uses_cache {
            done = fw.run(FirmwareStep::Cache, done, pages);
        }
        done = fw.run(FirmwareStep::Ftl, done, pages);
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
