//! The trace fields of a flow, as a reader takes them, and their checks.

use super::{OpenError, MAX_TRACE_TIME};
use crate::config::{BlkparseEvent, FlowConfig, TraceDevice, TraceFormat, TraceOps};
use crate::time::SimTime;

/// What a reader keeps of a trace and how it times it: the trace fields of a flow.
#[derive(Clone, Debug)]
pub struct TraceOptions {
    /// `Auto` sniffs the format from the first lines.
    pub format: TraceFormat,
    /// Keep only this device or volume (compared as text, or as a number when both are numbers).
    pub device: Option<String>,
    /// Keep records from this trace time on (picoseconds after the first record).
    pub start: SimTime,
    /// Stop at the first record at or past this trace time.
    pub end: Option<SimTime>,
    pub ops: TraceOps,
    /// Multiplies the distances between arrivals (0.5 replays twice as fast).
    pub time_scale: f64,
    /// Formats without timestamps: the time between consecutive requests.
    pub arrival_gap: Option<SimTime>,
    /// blkparse: which action is replayed.
    pub blkparse_event: Option<BlkparseEvent>,
}

impl Default for TraceOptions {
    fn default() -> Self {
        Self {
            format: TraceFormat::Auto,
            device: None,
            start: 0,
            end: None,
            ops: TraceOps::All,
            time_scale: 1.0,
            arrival_gap: None,
            blkparse_event: None,
        }
    }
}

impl TraceOptions {
    /// The options a (validated) trace flow asks for.
    pub fn from_flow(flow: &FlowConfig) -> Self {
        Self {
            format: flow.format.unwrap_or(TraceFormat::Auto),
            device: flow.device.as_ref().map(|d| match d {
                TraceDevice::Number(n) => n.to_string(),
                TraceDevice::Name(s) => s.clone(),
            }),
            start: flow.start.as_ref().map_or(0, |d| d.value),
            end: flow.end.as_ref().map(|d| d.value),
            ops: flow.ops.unwrap_or(TraceOps::All),
            time_scale: flow.time_scale.unwrap_or(1.0),
            arrival_gap: flow.arrival_gap.as_ref().map(|d| d.value),
            blkparse_event: flow.blkparse_event,
        }
    }
}

impl TraceOptions {
    /// The checks `config::validate` makes of a flow's trace options, repeated for options built
    /// in code: errors name the flow key.
    pub(super) fn check(&self) -> Result<(), OpenError> {
        let scale = self.time_scale;
        if !scale.is_finite() || scale <= 0.0 {
            return Err(OpenError::Option {
                field: "time_scale",
                reason: format!("must be a finite number greater than zero, got {}", number(scale)),
            });
        }
        if let Some(end) = self.end {
            if end <= self.start {
                return Err(OpenError::Option {
                    field: "end",
                    reason: format!("must be after start, got end = {end} ps and start = {} ps", self.start),
                });
            }
        }
        for (field, value) in [("start", Some(self.start)), ("end", self.end), ("arrival_gap", self.arrival_gap)] {
            if value.is_some_and(|v| v > MAX_TRACE_TIME) {
                return Err(OpenError::Option {
                    field,
                    reason: format!("is too long to simulate (at most {MAX_TRACE_TIME} ps, about 106.75 days)"),
                });
            }
        }
        Ok(())
    }
}

/// A number as a person would write it: `0.5`, `1e300` (not 301 digits).
pub(super) fn number(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e7).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}
