//! The event loop: stepping a run (`step`, `run`), the one place events are handled
//! (`run_events`, also serving an outside host's `advance_to`), and the watchdog that ends a run
//! which no longer makes progress.

use std::time::Instant;

use super::{Event, SimError, Simulation};
use crate::time::SimTime;

/// Why the event loop returned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum LoopEnd {
    /// Nothing is left to happen: no event is queued (a run's loop only; an outside host's
    /// stops at an empty queue as at one with nothing due).
    Empty,
    /// The event budget is spent, no event is due by the host's time, or the watchdog ended
    /// the run.
    Stopped,
}

impl Simulation {
    /// Processes up to `max_events` events. Returns `true` when the run is over: every flow has
    /// stopped issuing and every request has completed.
    pub fn step(&mut self, max_events: u64) -> Result<bool, SimError> {
        let started = Instant::now();
        let result = self.step_inner(max_events);
        self.wall += started.elapsed();
        result
    }

    fn step_inner(&mut self, max_events: u64) -> Result<bool, SimError> {
        if self.run_events(max_events, None)? == LoopEnd::Empty {
            self.finished = true;
            if self.requests.live() > 0 {
                return Err(SimError::EndOfLife(self.stall_report()));
            }
            self.note_stalled_background_writes();
        }
        Ok(self.finished)
    }

    /// The event loop: the one place events are handled, for runs (`step`, `until` = `None`)
    /// and for an outside host (`advance_to`: the events due by `until`). One call site keeps
    /// `handle` and the handlers under it inlined in every build: with a loop per caller, the
    /// Python extension and the NBD server (which link both) kept them out of line and ran
    /// 8.5 % more instructions per read than a binary with one caller (callgrind, 200,000
    /// random reads).
    pub(super) fn run_events(&mut self, max_events: u64, until: Option<SimTime>) -> Result<LoopEnd, SimError> {
        for i in 0..max_events {
            match until {
                // A run's watchdog looks before every 4096th event (it may end the run)...
                None if i % 4096 == 0 && self.watchdog()? => return Ok(LoopEnd::Stopped),
                None => {}
                Some(time) if self.queue.peek_time().is_none_or(|t| t > time) => return Ok(LoopEnd::Stopped),
                Some(_) => {}
            }
            let Some((_, event)) = self.queue.pop() else {
                return Ok(LoopEnd::Empty);
            };
            self.handle(event)?;
            self.service_touched_dies();
            // ...an outside host's after every 4096th (and once more when the clock is set).
            if until.is_some() && (i + 1) % 4096 == 0 {
                self.host_watchdog()?;
            }
        }
        Ok(LoopEnd::Stopped)
    }

    /// Runs to the end and returns the results.
    pub fn run(&mut self) -> Result<crate::stats::Results, SimError> {
        while !self.step(1 << 20)? {}
        self.flush_request_records();
        Ok(self.results())
    }

    fn handle(&mut self, event: Event) -> Result<(), SimError> {
        match event {
            Event::Arrival { flow } => self.on_arrival(flow as usize)?,
            Event::CommandArrived { request } => match self.firmware {
                Some(_) => self.run_front_end_firmware(request),
                None => self.on_command_arrived(request),
            },
            Event::FirmwareDone { request } => self.on_command_arrived(request),
            Event::DispatchDone { die } => self.begin_flash_operation(die),
            Event::CellReadDone { die } => self.on_cell_read_done(die),
            Event::DieDone { die, gen } => {
                if gen == self.backend.dies[die as usize].gen {
                    self.on_die_done(die);
                }
            }
            Event::ChannelFree { channel } => self.on_channel_free(channel),
            Event::Suspended { die } => self.on_suspended(die),
            Event::RequestCompleted { request } => self.on_request_completed(request),
            Event::CacheAccessDone { request } => self.on_cache_access_done(request),
            Event::HostGcPage { txn } => self.on_host_gc_page(txn),
            Event::DramDone { wait, id } => self.on_dram_done(wait, id),
            Event::CacheIdleCheck => self.on_cache_idle_check(),
            Event::PowerStateExit => self.try_fetch(),
        }
        Ok(())
    }

    /// Stops a run that no longer makes progress: no host request has completed for
    /// `run.stall_timeout` of simulated time. Returns true when the run is over.
    fn watchdog(&mut self) -> Result<bool, SimError> {
        if let Some(e) = self.data_error() {
            return Err(e.into());
        }
        let quiet = self.now().saturating_sub(self.last_progress);
        if quiet <= self.stall_timeout_ps {
            return Ok(false);
        }
        let issuing = self.flows.iter().any(|f| f.next.is_some());
        if self.requests.live() > 0 || issuing {
            if self.requests.live() > 0 {
                return Err(SimError::EndOfLife(self.stall_report()));
            }
            // Only open-loop flows waiting for their next arrival: that is progress to come.
            self.last_progress = self.now();
            return Ok(false);
        }
        self.finished = true;
        self.warnings.push(format!(
            "the run was stopped at {:.3} s: every request had completed {:.3} s earlier, but background work (GC on a full plane, or flushes) never finished",
            crate::time::ps_to_seconds(self.now()),
            crate::time::ps_to_seconds(quiet)
        ));
        self.note_stalled_background_writes();
        Ok(true)
    }

    /// Why requests are still waiting when nothing more can happen: only worn-out planes (no
    /// erased block left for their writes) can bring the model there.
    pub(super) fn stall_report(&self) -> String {
        let g = &self.ftl.geometry;
        // Host writes wait for an erased block in the simulation's queues or, under block and
        // hybrid mapping, in the family's own.
        let stuck: Vec<u32> = (0..g.planes)
            .filter(|&p| {
                !self.stalled_writes[p as usize].is_empty()
                    || self.family.as_deref().is_some_and(|f| f.waits_for_blocks(p))
            })
            .collect();
        let queued: usize = (0..g.dies).map(|d| self.tsu.queued(d)).sum();
        let retired = self.ftl.blocks.retired_blocks;
        let cause = if retired > 0 {
            format!(
                "end of life: {retired} blocks were retired after {} P/E cycles (ftl.pe_cycle_limit)",
                self.config.ftl.pe_cycle_limit
            )
        } else if stuck.is_empty() && self.ftl.gc.iter().any(|gc| gc.active) {
            // Not out of space: GC is working, but gives back so little per victim (FIFO or
            // random victims with little spare space) that no write got through in time.
            format!(
                "no request completed for run.stall_timeout ({:.3} s) while GC kept moving pages that free little space (victims with few invalid pages, e.g. FIFO or random GC with little spare space); raise run.stall_timeout to let it finish, or ftl.over_provisioning",
                crate::time::ps_to_seconds(self.stall_timeout_ps)
            )
        } else {
            "out of space: the flows allowed on these planes (flows[i].channels/chips/dies/planes) wrote more distinct data than they hold".to_string()
        };
        format!(
            "{cause}; at {:.6} s {} requests were waiting and {} plane(s) (first: {}) had no erased block left for their writes [in flight: {} transactions, {} queued at dies, {} writes waiting for cache space (cache lines free/flushing/used/capacity {:?}), {} pending translation reads]",
            crate::time::ps_to_seconds(self.now()),
            self.requests.live(),
            stuck.len(),
            stuck.first().map_or("none".to_string(), |p| p.to_string()),
            self.txns.live(),
            queued,
            self.cache.waiting_writes(),
            self.cache.occupancy(),
            self.mapping.pending_reads(),
        )
    }
}
