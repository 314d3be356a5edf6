//! Workloads: where each flow's requests come from. Synthetic generators draw from seeded random
//! streams; trace readers stream a file record by record (memory does not grow with its length).

pub mod lsm;
pub mod synthetic;
pub mod trace;
pub mod zoned;

pub use crate::device::Op;
use crate::time::SimTime;

/// One host request as the workload issues it: a read or a write (synthetic flows and traces),
/// or a trim or flush a trace recorded (no sectors for a flush).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestSpec {
    pub arrival: SimTime,
    pub op: Op,
    pub start_sector: u64,
    pub sectors: u32,
    /// FDP: the placement handle the write carries (a trace's per-request handle); `None`
    /// takes its flow's `placement_handle`.
    pub placement_handle: Option<u16>,
}

impl RequestSpec {
    #[inline]
    pub fn is_read(&self) -> bool {
        self.op == Op::Read
    }
}

/// An error found while reading a workload, with the place it was found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {reason}")]
pub struct TraceError {
    pub file: String,
    pub line: u64,
    pub reason: String,
}
