//! Flexible Data Placement on the write path (`[ftl.fdp]`, docs/fdp.md): which reclaim unit
//! handle each write is placed by. A write carries its handle from submission (its own, from a
//! trace or an outside host, else its flow's) to the frontier its pages are programmed at; a
//! write the data cache absorbs hands it to the cache line, whose flush is placed by it.

use super::Simulation;
use crate::cache::Writer;
use crate::ftl::blocks::Stream;
use crate::ftl::transaction::{Transaction, TxnKind, NO_REQUEST};
use crate::workload::RequestSpec;

impl Simulation {
    /// The handle a request of flow `f` is placed by (0 for anything but a write, and without
    /// FDP). An unoffered handle is logged as an event and placed by handle 0.
    pub(super) fn placement_of(&mut self, f: usize, spec: &RequestSpec) -> u8 {
        if !spec.op.writes() {
            return 0;
        }
        let namespace_id = self.flows[f].namespace as u32 + 1;
        self.ftl.placement_of_write(f as u16, spec.placement_handle, namespace_id, self.now())
    }

    /// A trace record carries a placement handle but the device has no FDP: the trace's line.
    pub(super) fn check_trace_placement(
        &self,
        f: usize,
        spec: &RequestSpec,
    ) -> Result<(), crate::workload::TraceError> {
        match &self.flows[f].source {
            super::Source::Trace(r) if spec.placement_handle.is_some() && self.config.ftl.fdp.is_none() => Err(r
                .error_here(
                    "the record carries a placement handle (column 6), but the device has no Flexible Data Placement: add [ftl.fdp] to the config or drop the column"
                        .into(),
                )),
            _ => Ok(()),
        }
    }

    /// Who writes request `request`'s data into the cache: its flow and its handle.
    pub(super) fn request_writer(&self, request: u32) -> Writer {
        let r = self.requests.get(request);
        Writer { flow: r.flow, handle: r.placement }
    }

    /// Cache flush `id` (an FTL-internal page write) is placed by `handle`.
    pub(super) fn note_flush_placement(&mut self, id: u32, handle: u8) {
        if self.config.ftl.fdp.is_none() {
            return;
        }
        let slots = &mut self.flush_placement;
        if slots.len() <= id as usize {
            slots.resize(id as usize + 1, 0);
        }
        slots[id as usize] = handle;
    }

    /// Allocation stream of write transaction `id` (`t`): GC moves keep their victim's reclaim
    /// unit handle, host writes carry their request's (a cache flush its line's), the FTL's own
    /// writes take handle 0. Without FDP every write is handle 0: no lookup on the write path.
    #[inline]
    pub(super) fn write_stream(&self, id: u32, t: &Transaction) -> Stream {
        match t.kind {
            TxnKind::GcWrite => self.ftl.gc_stream(t.plane),
            TxnKind::UserWrite => {
                let handle = if self.config.ftl.fdp.is_none() {
                    0
                } else if t.request != NO_REQUEST {
                    self.requests.get(t.request).placement
                } else {
                    self.flush_placement.get(id as usize).copied().unwrap_or(0)
                };
                self.ftl.host_stream(t.plane, handle)
            }
            _ => Stream::USER,
        }
    }
}
