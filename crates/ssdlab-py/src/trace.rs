//! A trace read by the simulator's own reader, for Python (`ssdlab.read_trace`): the requests a
//! trace flow would replay, with the same format detection, filters (`device`, `ops`, `start`,
//! `end`), time scaling, decompression and errors, so a notebook sees exactly what a run gets.

use std::path::Path;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use ssdlab_core::config::FlowConfig;
use ssdlab_core::workload::trace::{OpenError, TraceOptions, TraceReader};
use ssdlab_core::workload::Op;
use ssdlab_core::Config;

use super::{ConfigError, TraceError};

/// Bytes per request in the buffer [`read_trace`] returns: arrival (u64, picoseconds), start
/// sector (u64), sectors (u32), op (u8: 0 read, 1 write), 3 bytes of padding; little-endian.
const RECORD_BYTES: usize = 24;

/// Reads every request of the trace at `path` as a trace flow with the options in `flow_json`
/// (the `[[flows]]` keys, as JSON) replays it on a device of `logical_sectors`. Returns the
/// packed records (see [`RECORD_BYTES`]), the format the file was read as and the reader's
/// warnings. Runs without the GIL.
#[pyfunction]
pub fn read_trace<'py>(
    py: Python<'py>,
    path: &str,
    flow_json: &str,
    logical_sectors: u64,
) -> PyResult<(Bound<'py, PyBytes>, String, Vec<String>)> {
    // Read as the one flow of a config, so that a bad option gets the config's own wording
    // ("format: unknown variant `x`, expected one of ...") and checks.
    let config = Config::from_json_str(&format!("{{\"flows\": [{flow_json}]}}"))
        .map_err(|e| ConfigError::new_err(e.to_string().replacen("flows[0].", "", 1)))?;
    let flow: &FlowConfig = &config.flows[0];
    let options = TraceOptions::from_flow(flow);
    let path = ssdlab_core::workload::trace::resolve_path(Path::new("."), Path::new(path));
    let outcome = py.detach(move || -> Result<_, PyErr> {
        let mut reader = TraceReader::open(&path, &options, logical_sectors).map_err(|e| match e {
            OpenError::Option { field, reason } => ConfigError::new_err(format!("{field}: {reason}")),
            OpenError::Trace(e) => TraceError::new_err(e.to_string()),
        })?;
        let mut records = Vec::new();
        while let Some(request) = reader.next_request().map_err(|e| TraceError::new_err(e.to_string()))? {
            records.extend_from_slice(&request.arrival.to_le_bytes());
            records.extend_from_slice(&request.start_sector.to_le_bytes());
            records.extend_from_slice(&request.sectors.to_le_bytes());
            records.push(u8::from(request.op == Op::Write));
            records.extend_from_slice(&[0; 3]);
        }
        debug_assert_eq!(records.len() % RECORD_BYTES, 0);
        Ok((records, reader.format().name().to_string(), reader.warnings("trace")))
    })?;
    let (records, format, warnings) = outcome;
    if records.len() % RECORD_BYTES != 0 {
        return Err(PyValueError::new_err("internal: trace records of the wrong size"));
    }
    Ok((PyBytes::new(py, &records), format, warnings))
}
