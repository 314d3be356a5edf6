//! An outside host's side of the model (`crate::device::Device`): its requests enter through
//! the same `submit` as the device's own flows; this file checks them, runs the clock up to the
//! time the host asks for, serves the commands only a host sends (flush, trim) and hands back
//! completions.

use rustc_hash::FxHashMap;

use super::{SimError, Simulation};
use crate::config::{Config, FlowKind};
use crate::device::{Completion, HostRequest, Op, Status, SubmitError};
use crate::flash::SECTOR_BYTES;
use crate::stats::breakdown::Breakdown;
use crate::time::SimTime;
use crate::workload::RequestSpec;

/// A flush waiting for the cache lines that held dirty data when it arrived: per (partition,
/// first page of the line), the flushes of that line still to finish (see `start_host_flush`).
struct PendingFlush {
    request: u32,
    lines: FxHashMap<(u16, u32), u8>,
}

#[derive(Default)]
pub(super) struct HostSide {
    /// The flow of each host queue, in queue order.
    queue_flows: Vec<u16>,
    /// Per flow: its host queue number (`u16::MAX`: the device's own flow).
    flow_queue: Vec<u16>,
    /// The host's id of each request in flight, indexed by request id.
    ids: Vec<u64>,
    in_flight: FxHashMap<u64, u32>,
    completions: Vec<Completion>,
    flushes: Vec<PendingFlush>,
    /// Scratch of `start_host_flush`.
    lines: Vec<(u16, u32)>,
    /// Where each zone append in flight landed (host sector), by request id.
    assigned: FxHashMap<u32, u64>,
    /// Trims the mapping could not serve (block, hybrid, super-page, Open-Channel).
    refused_trims: u64,
}

impl HostSide {
    pub(super) fn new(config: &Config) -> Self {
        let mut side = Self::default();
        for (f, flow) in config.flows.iter().enumerate() {
            if flow.kind == FlowKind::Host {
                side.flow_queue.push(side.queue_flows.len() as u16);
                side.queue_flows.push(f as u16);
            } else {
                side.flow_queue.push(u16::MAX);
            }
        }
        side
    }

    /// Whether no outside host drives any flow (a batch run).
    pub(super) fn drives_nothing(&self) -> bool {
        self.queue_flows.is_empty()
    }

    fn is_host_flow(&self, flow: u16) -> bool {
        self.flow_queue.get(flow as usize).is_some_and(|&q| q != u16::MAX)
    }

    /// The flow behind host queue `queue`.
    pub(super) fn flow_of_queue(&self, queue: usize) -> Option<usize> {
        self.queue_flows.get(queue).map(|&f| f as usize)
    }

    /// A zone append was placed at `host_sector` (kept for the outside host's completion).
    pub(super) fn note_assigned_sector(&mut self, request: u32, host_sector: u64) {
        if !self.queue_flows.is_empty() {
            self.assigned.insert(request, host_sector);
        }
    }
}

impl Simulation {
    /// Checks and queues an outside host's request at the current time.
    pub(crate) fn host_submit(&mut self, request: &HostRequest<'_>) -> Result<(), SubmitError> {
        let queues = self.host.queue_flows.len() as u16;
        let Some(&flow) = self.host.queue_flows.get(request.queue as usize) else {
            return Err(SubmitError::NoSuchQueue { queue: request.queue, queues });
        };
        let logical_sectors = self.host_sectors(request.queue as usize);
        let op = request.op;
        if op.is_zone_management() {
            if request.sectors != 0 {
                return Err(SubmitError::ZoneOpWithSectors { op: op.name(), sectors: request.sectors });
            }
            if request.start_sector >= logical_sectors {
                return Err(SubmitError::OutOfRange {
                    start_sector: request.start_sector,
                    sectors: 0,
                    logical_sectors,
                });
            }
        } else if op.has_range() {
            if request.sectors == 0 {
                return Err(SubmitError::NoSectors { op: op.name() });
            }
            let end = request.start_sector.checked_add(request.sectors as u64);
            if end.is_none_or(|end| end > logical_sectors) {
                return Err(SubmitError::OutOfRange {
                    start_sector: request.start_sector,
                    sectors: request.sectors,
                    logical_sectors,
                });
            }
        } else if request.sectors != 0 || request.start_sector != 0 {
            return Err(SubmitError::FlushWithRange { start_sector: request.start_sector, sectors: request.sectors });
        }
        if let Some(data) = request.data {
            if !op.carries_data() {
                return Err(SubmitError::DataOnNonWrite { op: op.name() });
            }
            let expected = request.sectors as u64 * SECTOR_BYTES;
            if data.len() as u64 != expected {
                return Err(SubmitError::DataLength { sectors: request.sectors, expected, given: data.len() as u64 });
            }
            if self.data.is_none() {
                return Err(SubmitError::DataNotKept);
            }
        }
        if request.placement_handle.is_some() {
            if !op.writes() {
                return Err(SubmitError::PlacementOnNonWrite { op: op.name() });
            }
            if self.config.ftl.fdp.is_none() {
                return Err(SubmitError::PlacementWithoutFdp);
            }
        }
        if self.host.in_flight.contains_key(&request.id) {
            return Err(SubmitError::DuplicateId { id: request.id });
        }
        let spec = RequestSpec {
            arrival: self.now(),
            op,
            // Without namespaces addresses are the device's (a host queue's domain starts at sector
            // 0); with them, the queue's namespace's.
            start_sector: if self.config.namespaces.is_empty() {
                request.start_sector - self.flows[flow as usize].domain_base_sector
            } else {
                request.start_sector
            },
            sectors: request.sectors,
            placement_handle: request.placement_handle,
        };
        let id = self.submit_op(flow as usize, spec, op);
        if let Some(d) = self.data.as_deref_mut() {
            match (op, request.data) {
                (Op::Write | Op::ZoneAppend, Some(bytes)) => d.set_host_bytes(id, bytes),
                (Op::Read, _) => d.want_read_bytes(id, request.sectors),
                _ => {}
            }
        }
        let side = &mut self.host;
        if side.ids.len() <= id as usize {
            side.ids.resize(id as usize + 1, 0);
        }
        side.ids[id as usize] = request.id;
        side.in_flight.insert(request.id, id);
        self.try_fetch();
        Ok(())
    }

    pub(crate) fn next_event_time(&self) -> Option<SimTime> {
        self.queue.peek_time()
    }

    /// Runs every event due at or before `time`, then sets the clock to `time`.
    pub(crate) fn advance_to(&mut self, time: SimTime) -> Result<(), SimError> {
        let started = std::time::Instant::now();
        let result = self.advance_inner(time);
        self.wall += started.elapsed();
        result
    }

    fn advance_inner(&mut self, time: SimTime) -> Result<(), SimError> {
        self.run_events(u64::MAX, Some(time))?;
        self.queue.advance_clock(time);
        self.host_watchdog()
    }

    /// The device cannot go on: its data store failed, or requests wait with nothing left to
    /// happen or without a completion for `run.stall_timeout`.
    pub(super) fn host_watchdog(&mut self) -> Result<(), SimError> {
        if let Some(e) = self.data_error() {
            return Err(e.into());
        }
        if self.requests.live() == 0 {
            self.last_progress = self.now();
            return Ok(());
        }
        let quiet = self.now().saturating_sub(self.last_progress);
        if self.queue.pending() == 0 || quiet > self.stall_timeout_ps {
            return Err(SimError::EndOfLife(self.stall_report()));
        }
        Ok(())
    }

    pub(crate) fn drain_host_completions(&mut self) -> std::vec::Drain<'_, Completion> {
        self.host.completions.drain(..)
    }

    pub(crate) fn host_in_flight(&self) -> usize {
        self.host.in_flight.len()
    }

    pub(crate) fn host_queue_names(&self) -> Vec<String> {
        self.host.queue_flows.iter().map(|&f| self.flows[f as usize].name.clone()).collect()
    }

    /// A request finished: an outside host's goes into the completions it collects.
    pub(super) fn host_request_completed(&mut self, request: u32, r: &super::Request, breakdown: &Breakdown) {
        if !self.host.is_host_flow(r.flow) {
            return;
        }
        let id = self.host.ids[request as usize];
        self.host.in_flight.remove(&id);
        let data = match (r.op, self.data.as_deref_mut()) {
            (Op::Read, Some(d)) => d.take_read_bytes(request),
            _ => None,
        };
        let status = r.status;
        let assigned_sector = self.host.assigned.remove(&request).filter(|_| status == Status::Success);
        self.host.completions.push(Completion {
            id,
            queue: self.host.flow_queue[r.flow as usize],
            op: r.op,
            status,
            submitted_ps: r.arrival,
            completed_ps: self.now(),
            breakdown: *breakdown,
            data,
            assigned_sector,
        });
    }

    /// What results.json says about the host's commands.
    pub(super) fn host_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.host.refused_trims > 0 {
            let why = if self.open_channel.is_some() {
                "an Open-Channel device leaves the mapping to the host's FTL".to_string()
            } else {
                format!(
                    "ftl.mapping = \"{}\" has no logical page to unmap",
                    crate::config::family_name(self.config.ftl.mapping)
                )
            };
            out.push(format!(
                "{} trims were not served: {why} (an outside host gets status unsupported)",
                self.host.refused_trims
            ));
        }
        out
    }

    /// A flush or a trim is through the front end: serve it (reads and writes go on to the
    /// cache and the FTL). Returns false for those.
    pub(super) fn serve_host_command(&mut self, request: u32) -> bool {
        match self.requests.get(request).op {
            Op::Flush => self.start_host_flush(request),
            Op::Trim => self.trim(request),
            Op::ZoneAppend if self.request_is_zoned(request) => return false,
            Op::ZoneAppend | Op::ZoneOpen | Op::ZoneClose | Op::ZoneFinish | Op::ZoneReset => {
                // A conventional namespace has no zones (a zoned one served these already).
                self.requests.get_mut(request).status = Status::Unsupported;
                if let Some(d) = self.data.as_deref_mut() {
                    d.trim_refused(request);
                }
                self.complete_now(request);
            }
            Op::Read | Op::Write | Op::WriteZeroes => return false,
        }
        true
    }

    /// Posts the completion of a request that needs no page transaction.
    pub(super) fn complete_now(&mut self, request: u32) {
        self.set_pending(request, 1);
        let now = self.now();
        self.finish_part(request, &Breakdown::default(), now);
    }

    /// Deallocates the whole logical pages of the range (partly covered pages keep their data:
    /// the page is the deallocation granularity, as NVMe lets a controller choose). The cache
    /// forgets the sectors, so no flush writes them back.
    fn trim(&mut self, request: u32) {
        if self.family.is_some() || self.open_channel.is_some() {
            // Block, hybrid and super-page maps and a host FTL have no page to unmap.
            self.host.refused_trims += 1;
            if let Some(d) = self.data.as_deref_mut() {
                d.trim_refused(request);
            }
            self.requests.get_mut(request).status = Status::Unsupported;
            self.complete_now(request);
            return;
        }
        let (_, start, sectors) = self.request_sectors(request);
        let spp = self.ftl.geometry.sectors_per_page;
        let end = start + sectors as u64;
        for lpa in start.div_ceil(spp)..end / spp {
            self.cache.forget(lpa as u32, u64::MAX, None);
            self.ftl.deallocate(lpa as u32);
        }
        self.complete_now(request);
    }

    /// Starts a flush: every cache line holding dirty data now must reach flash before it
    /// completes. A line not being flushed is flushed now (one round); a line already being
    /// flushed is done when that flush is, unless the host rewrote it meanwhile, in which case
    /// it is flushed once more (two rounds). Lines rewritten after the flush arrived add
    /// nothing it waits for.
    fn start_host_flush(&mut self, request: u32) {
        let mut lines = std::mem::take(&mut self.host.lines);
        lines.clear();
        for (p, part) in self.cache.partitions().iter().enumerate() {
            lines.extend(part.unflushed_lines().map(|first_lpa| (p as u16, first_lpa)));
        }
        lines.sort_unstable();
        let mut waiting = FxHashMap::default();
        for &(p, first_lpa) in &lines {
            let (dirty, flushing) = self.cache.partitions()[p as usize].line_flags(first_lpa).expect("listed");
            let rounds = if flushing == 0 {
                self.flush_cache_line(p as usize, first_lpa, self.cache.background.is_some());
                1
            } else if dirty != 0 {
                2
            } else {
                1
            };
            waiting.insert((p, first_lpa), rounds);
        }
        self.host.lines = lines;
        if waiting.is_empty() {
            self.complete_now(request);
        } else {
            self.host.flushes.push(PendingFlush { request, lines: waiting });
        }
    }

    /// A page flush of partition `p` reached flash (the cache has counted it): flushes waiting
    /// for its line move on when the line's flush is over.
    pub(super) fn host_flush_progress(&mut self, p: usize, lpa: u32) {
        if self.host.flushes.is_empty() {
            return;
        }
        let part = &self.cache.partitions()[p];
        let first_lpa = part.line_first_page(lpa);
        let flags = part.line_flags(first_lpa);
        if flags.is_some_and(|(_, flushing)| flushing != 0) {
            return;
        }
        let key = (p as u16, first_lpa);
        let mut again = false;
        let mut done = Vec::new();
        for (i, pending) in self.host.flushes.iter_mut().enumerate() {
            let Some(rounds) = pending.lines.get_mut(&key) else { continue };
            *rounds -= 1;
            if *rounds > 0 && flags.is_some_and(|(dirty, _)| dirty != 0) {
                again = true;
            } else {
                pending.lines.remove(&key);
                if pending.lines.is_empty() {
                    done.push(i);
                }
            }
        }
        if again {
            self.flush_cache_line(p, first_lpa, self.cache.background.is_some());
        }
        for i in done.into_iter().rev() {
            let pending = self.host.flushes.remove(i);
            self.complete_now(pending.request);
        }
    }
}
