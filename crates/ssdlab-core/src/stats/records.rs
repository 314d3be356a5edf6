//! Per-request records (`run.request_records`): one fixed-size binary record per sampled
//! request, written as requests complete to a file the caller names (`ssdlab run` puts it in
//! the results folder as `requests.bin` and converts it to `requests.parquet`).
//!
//! The format (`ssdlab.requests/1`) is meant to be read with one `numpy.fromfile`: a 16-byte
//! header, the magic `SSDLREQ1` then the record size and the number of latency steps as
//! little-endian `u32`, then records in completion order, all little-endian:
//!
//! | field | type | meaning |
//! |---|---|---|
//! | `arrival_ps` | u64 | when the request arrived at the host queue |
//! | `latency_ps` | u64 | response time (arrival to completion entry) |
//! | `start_sector` | u64 | first 512 B sector (device address) |
//! | `size_bytes` | u32 | request size |
//! | `flow` | u16 | index into `results.json` `flows` |
//! | `op` | u8 | 0 read, 1 write |
//! | (padding) | u8 | 0 |
//! | `steps_ps` | 11 x u64 | the latency breakdown, in `latency_breakdown_us` order |
//!
//! Sampling is a pure function of (seed, flow, the flow's request number): the same config and
//! seed record the same requests, and the simulation's random streams are untouched.
//!
//! The file is written under a hidden temporary name in the same folder
//! (`.requests.bin.tmp-<pid>`) and renamed to its own name only when the run is over (after an
//! fsync), so a records file that exists is complete: a run that is killed leaves no partial
//! file that looks like a result (issue 12, F17), and one that fails or is dropped removes its
//! temporary file. A previous run's file of the same name is removed when recording starts.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::config::RequestRecords;

use super::breakdown::{Breakdown, STEPS};
use crate::engine::derive_seed;
use crate::time::SimTime;

pub const MAGIC: &[u8; 8] = b"SSDLREQ1";
pub const FORMAT: &str = "ssdlab.requests/1";
pub const HEADER_BYTES: usize = 16;
pub const RECORD_BYTES: usize = 32 + 8 * STEPS;

/// `results.json` `request_records`: where the records went and how many there are.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RequestRecordsSummary {
    /// `ssdlab.requests/1`.
    pub format: String,
    /// The file's name (it sits beside results.json when `ssdlab run` wrote it).
    pub file: String,
    pub fraction: f64,
    pub records: u64,
}

/// Writes sampled completions to the records file.
pub struct RequestRecorder {
    out: BufWriter<File>,
    /// Where the records end up once the run is over.
    path: PathBuf,
    /// Where they are written meanwhile: a hidden name beside `path`.
    partial: PathBuf,
    /// The run is over and `partial` was renamed to `path`.
    finished: bool,
    seed: u64,
    /// A request is recorded when its hash is below this (all when `u64::MAX` and fraction 1).
    threshold: u64,
    all: bool,
    fraction: f64,
    written: u64,
    error: Option<String>,
}

impl RequestRecorder {
    pub fn create(path: &Path, setting: RequestRecords, seed: u64) -> std::io::Result<Self> {
        let partial = partial_path(path);
        // A previous run's records must not pass for this run's if this one never finishes.
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&partial)?);
        out.write_all(MAGIC)?;
        out.write_all(&(RECORD_BYTES as u32).to_le_bytes())?;
        out.write_all(&(STEPS as u32).to_le_bytes())?;
        let fraction = setting.fraction();
        Ok(Self {
            out,
            path: path.to_path_buf(),
            partial,
            finished: false,
            seed: derive_seed(seed, 0x5EC0_4D55),
            threshold: (fraction * u64::MAX as f64) as u64,
            all: fraction >= 1.0,
            fraction,
            written: 0,
            error: None,
        })
    }

    /// Whether request `seq` of `flow` is sampled.
    #[inline]
    pub fn sampled(&self, flow: u16, seq: u64) -> bool {
        self.all || derive_seed(self.seed ^ ((flow as u64) << 48), seq) < self.threshold
    }

    /// A completed request (written if sampled). I/O errors are kept and reported at the end.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn record(
        &mut self,
        flow: u16,
        seq: u64,
        is_read: bool,
        arrival: SimTime,
        completion: SimTime,
        start_sector: u64,
        bytes: u64,
        steps: &Breakdown,
    ) {
        if !self.sampled(flow, seq) || self.error.is_some() {
            return;
        }
        let mut record = [0u8; RECORD_BYTES];
        record[0..8].copy_from_slice(&arrival.to_le_bytes());
        record[8..16].copy_from_slice(&(completion - arrival).to_le_bytes());
        record[16..24].copy_from_slice(&start_sector.to_le_bytes());
        record[24..28].copy_from_slice(&(bytes.min(u32::MAX as u64) as u32).to_le_bytes());
        record[28..30].copy_from_slice(&flow.to_le_bytes());
        record[30] = u8::from(!is_read);
        for (i, ps) in steps.0.iter().enumerate() {
            record[32 + 8 * i..40 + 8 * i].copy_from_slice(&ps.to_le_bytes());
        }
        match self.out.write_all(&record) {
            Ok(()) => self.written += 1,
            Err(e) => self.error = Some(format!("{}: {e}", self.path.display())),
        }
    }

    /// Flushes what is buffered (results may be read while the run goes on).
    pub fn flush(&mut self) {
        if let Err(e) = self.out.flush() {
            self.error.get_or_insert_with(|| format!("{}: {e}", self.path.display()));
        }
    }

    /// The run is over: flushes, syncs and renames the temporary file to its own name, so the
    /// records file appears complete or not at all. Called again, does nothing.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let done = self
            .out
            .flush()
            .and_then(|()| self.out.get_ref().sync_all())
            .and_then(|()| std::fs::rename(&self.partial, &self.path));
        if let Err(e) = done {
            self.error.get_or_insert_with(|| format!("{}: {e}", self.path.display()));
            let _ = std::fs::remove_file(&self.partial);
        }
    }

    /// The temporary file the records are written to until [`RequestRecorder::finish`].
    pub fn partial_path(&self) -> &Path {
        &self.partial
    }

    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    pub fn summary(&self) -> RequestRecordsSummary {
        RequestRecordsSummary {
            format: FORMAT.to_string(),
            file: self.path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            fraction: self.fraction,
            records: self.written,
        }
    }
}

/// A run that never finished (an error, Ctrl-C, a dropped simulation) leaves no records file.
impl Drop for RequestRecorder {
    fn drop(&mut self) {
        if !self.finished {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// `.requests.bin.tmp-<pid>` beside `requests.bin`: hidden, and named after the writing process
/// so that the next run can tell a dead run's leftover from a live one's file.
fn partial_path(path: &Path) -> PathBuf {
    let name = path.file_name().map_or_else(|| "requests.bin".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}
