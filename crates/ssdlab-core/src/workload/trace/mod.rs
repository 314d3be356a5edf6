//! Trace readers: a trace flow replays a block trace file record by record. One module per
//! format parses a line into a [`Record`] in the format's own units; this module turns records
//! into [`RequestSpec`]s the same way for every format:
//!
//! - **Time.** Trace time is the record's timestamp minus the first record's (whatever the
//!   filters keep). Records before `start` or from `end` on (trace time) are dropped; the file is
//!   read in order, so the first record at or past `end` ends the flow. The first replayed
//!   request arrives at simulated time 0 and the others keep their distance to it, multiplied by
//!   `time_scale`. A record earlier than the one before is issued in file order (counted).
//! - **Filters.** `device` keeps one device or volume (every format carries one), `ops` keeps
//!   reads or writes. Trims and requests without data (flush, sync) are skipped and counted, so
//!   are records of size zero.
//! - **Addresses.** Requests cover whole 512 B sectors (a byte range covers every sector it
//!   touches). Addresses beyond the flow's logical space wrap modulo its capacity, as MQSim does,
//!   and the number of wrapped requests is reported once, as a warning.
//! - **Memory.** The file is read line by line through one reused buffer (lines of at most
//!   64 KiB); parsing borrows from it, so memory does not grow with the trace and reading a record
//!   allocates nothing.
//!
//! The format is named in the flow (`format = "msr"`) or sniffed from the first lines
//! (`"auto"`, the default). docs/traces.md describes every format with its units.

mod alibaba;
mod blkparse;
mod fields;
mod fio;
mod mqsim;
mod msr;
mod sniff;
mod spc;
mod tencent;

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::{RequestSpec, TraceError};
use crate::config::{BlkparseEvent, FlowConfig, TraceDevice, TraceFormat, TraceOps};
use crate::time::SimTime;

/// Longest line a trace may have; a longer one is reported (it is likely not a text trace).
const MAX_LINE_BYTES: usize = 64 * 1024;
/// Lines read to sniff the format.
const SNIFF_LINES: usize = 20;

impl TraceFormat {
    /// Every format a reader exists for (all but `Auto`), in the order the docs list them.
    pub const READERS: [TraceFormat; 7] = [
        TraceFormat::Mqsim,
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Blkparse,
        TraceFormat::Fio,
        TraceFormat::Alibaba,
        TraceFormat::Tencent,
    ];

    /// The name used in configs (`format = "msr"`).
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Auto => "auto",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Fio => "fio",
            TraceFormat::Alibaba => "alibaba",
            TraceFormat::Tencent => "tencent",
        }
    }

    /// The columns a line of this format has, with their units (quoted in parse errors).
    pub fn layout(self) -> &'static str {
        match self {
            TraceFormat::Auto => "one of the formats in docs/traces.md",
            TraceFormat::Mqsim => mqsim::LAYOUT,
            TraceFormat::Msr => msr::LAYOUT,
            TraceFormat::Spc => spc::LAYOUT,
            TraceFormat::Blkparse => blkparse::LAYOUT,
            TraceFormat::Fio => fio::LAYOUT,
            TraceFormat::Alibaba => alibaba::LAYOUT,
            TraceFormat::Tencent => tencent::LAYOUT,
        }
    }

    fn names() -> String {
        TraceFormat::READERS.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
    }
}

/// One line of a trace as its format reads it.
pub(super) enum Parsed<'a> {
    /// A request (or a trim or flush) at `time`.
    Record(Record<'a>),
    /// A line that belongs to the format but carries no request (a blkparse event of another
    /// action, a fio header or file action). It counts as evidence when sniffing.
    Meta,
    /// A line to pass over (a column header, a blkparse summary).
    Skip,
}

/// A request in the units of its format.
pub(super) struct Record<'a> {
    /// Timestamp in the format's unit (`ps_per_unit`).
    time: u64,
    device: &'a str,
    op: Op,
    start_sector: u64,
    sectors: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Read,
    Write,
    Trim,
    /// A request without data: flush, sync.
    Flush,
}

/// A format's line parser and the state it keeps between lines.
#[derive(Clone, Debug)]
enum Parser {
    Mqsim,
    Msr,
    Spc,
    Blkparse { action: &'static str },
    Fio(fio::State),
    Alibaba,
    Tencent,
}

impl Parser {
    fn new(format: TraceFormat, event: BlkparseEvent) -> Self {
        match format {
            TraceFormat::Mqsim | TraceFormat::Auto => Parser::Mqsim,
            TraceFormat::Msr => Parser::Msr,
            TraceFormat::Spc => Parser::Spc,
            TraceFormat::Blkparse => Parser::Blkparse {
                action: match event {
                    BlkparseEvent::Queue => "Q",
                    BlkparseEvent::Dispatch => "D",
                },
            },
            TraceFormat::Fio => Parser::Fio(fio::State::default()),
            TraceFormat::Alibaba => Parser::Alibaba,
            TraceFormat::Tencent => Parser::Tencent,
        }
    }

    /// `first` is true for the file's first line that is not blank or a comment.
    fn parse<'a>(&mut self, line: &'a str, first: bool) -> Result<Parsed<'a>, String> {
        match self {
            Parser::Mqsim => mqsim::parse(line),
            Parser::Msr => msr::parse(line, first),
            Parser::Spc => spc::parse(line, first),
            Parser::Blkparse { action } => blkparse::parse(line, action),
            Parser::Fio(state) => fio::parse(line, state),
            Parser::Alibaba => alibaba::parse(line, first),
            Parser::Tencent => tencent::parse(line, first),
        }
    }

    fn ps_per_unit(&self) -> u64 {
        match self {
            Parser::Mqsim => mqsim::PS_PER_UNIT,
            Parser::Msr => msr::PS_PER_UNIT,
            Parser::Spc => spc::PS_PER_UNIT,
            Parser::Blkparse { .. } => blkparse::PS_PER_UNIT,
            Parser::Fio(_) => fio::PS_PER_UNIT,
            Parser::Alibaba => alibaba::PS_PER_UNIT,
            Parser::Tencent => tencent::PS_PER_UNIT,
        }
    }

    /// False for formats without timestamps (fio version 2), whose requests are spaced by
    /// `arrival_gap`.
    fn is_timed(&self) -> bool {
        match self {
            Parser::Fio(state) => state.is_timed(),
            _ => true,
        }
    }
}

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

/// Why a trace could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// A problem with a flow option: the file (`field` = "path"), its format ("format"), or an
    /// option that does not apply to the format. `field` is the flow's key.
    #[error("{field}: {reason}")]
    Option { field: &'static str, reason: String },
    /// The file does not follow its format (found while reading the header).
    #[error(transparent)]
    Trace(#[from] TraceError),
}

/// Records that were read but not replayed, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SkipCounts {
    /// Trim, discard and secure-erase requests (the model has no trim).
    pub trims: u64,
    /// Requests without data (flush, sync, fdatasync).
    pub flushes: u64,
    /// Reads and writes of zero bytes.
    pub zero_size: u64,
}

/// A device filter, compared without allocating: as text, or as numbers when both are numbers
/// (so `device = 7` keeps `007`).
#[derive(Clone, Debug)]
struct DeviceFilter {
    text: String,
    number: Option<u64>,
    matched: bool,
    /// Up to 8 other devices seen, to name them if nothing matches.
    seen: Vec<String>,
}

impl DeviceFilter {
    fn matches(&mut self, device: &str) -> bool {
        let hit = device == self.text || (self.number.is_some() && device.parse::<u64>().ok() == self.number);
        if hit {
            self.matched = true;
        } else if !self.matched && self.seen.len() < 8 && !self.seen.iter().any(|s| s == device) {
            self.seen.push(device.to_string());
        }
        hit
    }
}

/// Streams the requests of a trace file: one line at a time through a reused buffer, so memory
/// stays bounded whatever the file's length.
///
/// Besides driving a trace flow, this is the public way to scan a trace flow's requests ahead of
/// a run (e.g. to precondition the addresses it will touch):
///
/// ```no_run
/// use ssdlab_core::workload::trace::{TraceOptions, TraceReader};
/// # fn scan(flow: &ssdlab_core::config::FlowConfig, logical_sectors: u64) -> Result<(), Box<dyn std::error::Error>> {
/// let mut reader = TraceReader::open("traces/wdev_0.csv".as_ref(), &TraceOptions::from_flow(flow), logical_sectors)?;
/// for request in &mut reader {
///     let request = request?; // a TraceError names the file, the line and the expected layout
///     println!("{} sectors from {}", request.sectors, request.start_sector);
/// }
/// # Ok(()) }
/// ```
///
/// `logical_sectors` is the space the flow addresses (its domain when `ftl.address_domains =
/// "per-flow"`); the addresses returned are relative to it, after wrapping. Each reader is
/// independent: scanning opens its own and leaves the run's untouched.
pub struct TraceReader {
    path: String,
    reader: BufReader<File>,
    buf: Vec<u8>,
    line_number: u64,
    /// Lines that were neither blank nor comments.
    content_lines: u64,
    format: TraceFormat,
    parser: Parser,
    ps_per_unit: u64,
    /// Boxed, like the device filter: read once per record, they keep the reader small enough to
    /// sit in the simulator's flow table beside the synthetic generators.
    options: Box<TraceOptions>,
    device: Option<Box<DeviceFilter>>,
    logical_sectors: u64,
    /// The first record's time (format units).
    origin: Option<u64>,
    /// Trace time of the first replayed request.
    replay_origin: Option<SimTime>,
    /// Records read so far (spaces untimed formats).
    records: u64,
    last_arrival: SimTime,
    done: bool,
    /// Size of the file and bytes read so far (progress).
    pub file_bytes: u64,
    pub bytes_read: u64,
    /// Requests whose addresses wrapped around the logical space.
    pub wrapped: u64,
    /// Records earlier than the record before them (issued in file order).
    pub reordered: u64,
    /// Requests returned so far.
    pub requests: u64,
    pub skipped: SkipCounts,
}

impl TraceReader {
    /// Opens a trace; with `format = Auto`, reads its first lines to tell the format. Errors name
    /// the option at fault (see [`OpenError`]).
    pub fn open(path: &Path, options: &TraceOptions, logical_sectors: u64) -> Result<Self, OpenError> {
        let display = path.display().to_string();
        let io_error = |e: std::io::Error| OpenError::Option {
            field: "path",
            reason: format!("cannot open trace file \"{display}\": {e}"),
        };
        let mut file = File::open(path).map_err(io_error)?;
        let file_bytes = file.metadata().map_err(io_error)?.len();
        let format = match options.format {
            TraceFormat::Auto => {
                let format = sniff::sniff(&display, BufReader::new(&mut file))?;
                file.seek(SeekFrom::Start(0)).map_err(io_error)?;
                format
            }
            given => given,
        };
        if options.blkparse_event.is_some() && format != TraceFormat::Blkparse {
            return Err(OpenError::Option {
                field: "blkparse_event",
                reason: format!("only applies to blkparse traces; \"{display}\" is read as {}", format.name()),
            });
        }
        let parser = Parser::new(format, options.blkparse_event.unwrap_or(BlkparseEvent::Dispatch));
        let mut reader = Self {
            path: display,
            reader: BufReader::with_capacity(1 << 16, file),
            buf: Vec::with_capacity(256),
            line_number: 0,
            content_lines: 0,
            format,
            ps_per_unit: parser.ps_per_unit(),
            parser,
            options: Box::new(options.clone()),
            device: options.device.as_ref().map(|d| {
                Box::new(DeviceFilter { text: d.clone(), number: d.parse().ok(), matched: false, seen: Vec::new() })
            }),
            logical_sectors,
            origin: None,
            replay_origin: None,
            records: 0,
            last_arrival: 0,
            done: false,
            file_bytes,
            bytes_read: 0,
            wrapped: 0,
            reordered: 0,
            requests: 0,
            skipped: SkipCounts::default(),
        };
        if format == TraceFormat::Fio {
            reader.read_fio_header()?;
            if reader.parser.is_timed() && options.arrival_gap.is_some() {
                return Err(OpenError::Option {
                    field: "arrival_gap",
                    reason: format!(
                        "only applies to traces without timestamps (fio iolog version 2); \"{}\" is a version 3 iolog",
                        reader.path
                    ),
                });
            }
        } else if options.arrival_gap.is_some() {
            return Err(OpenError::Option {
                field: "arrival_gap",
                reason: format!(
                    "only applies to traces without timestamps (fio iolog version 2); \"{}\" is read as {}, which has timestamps",
                    reader.path,
                    format.name()
                ),
            });
        }
        Ok(reader)
    }

    /// The format being read (the sniffed one when the options said `Auto`).
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    fn error(&self, reason: String) -> TraceError {
        TraceError { file: self.path.clone(), line: self.line_number, reason }
    }

    /// Reads the next line into `buf`; false at the end of the file.
    fn read_line(&mut self) -> Result<bool, TraceError> {
        self.buf.clear();
        let n = (&mut self.reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| self.error(format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(false);
        }
        self.bytes_read += n as u64;
        self.line_number += 1;
        if n > MAX_LINE_BYTES && self.buf.last() != Some(&b'\n') {
            return Err(self.error(format!(
                "line is longer than {MAX_LINE_BYTES} bytes; is this a text trace? expected {} ({} format)",
                self.format.layout(),
                self.format.name()
            )));
        }
        Ok(true)
    }

    fn read_fio_header(&mut self) -> Result<(), TraceError> {
        while self.read_line()? {
            let text = String::from_utf8_lossy(&self.buf);
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            self.content_lines += 1;
            return match self.parser.parse(text, true) {
                Ok(_) => Ok(()),
                Err(reason) => {
                    let reason = format!("{reason}; expected {} (fio format)", fio::LAYOUT);
                    Err(self.error(reason))
                }
            };
        }
        Err(self.error(format!("the file is empty; expected {} (fio format)", fio::LAYOUT)))
    }

    /// The next request, `None` at the end of the trace (or of the `end` window). Blank lines and
    /// lines starting with `#` are skipped in every format.
    pub fn next_request(&mut self) -> Result<Option<RequestSpec>, TraceError> {
        while !self.done {
            if !self.read_line()? {
                self.done = true;
                break;
            }
            let text = String::from_utf8_lossy(&self.buf);
            let text = text.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            self.content_lines += 1;
            let record = match self.parser.parse(text, self.content_lines == 1) {
                Ok(Parsed::Record(record)) => record,
                Ok(Parsed::Meta | Parsed::Skip) => continue,
                Err(reason) => {
                    let (name, layout) = (self.format.name(), self.format.layout());
                    return Err(TraceError {
                        file: self.path.clone(),
                        line: self.line_number,
                        reason: format!("{reason}; expected {layout} ({name} format)"),
                    });
                }
            };
            let device_ok = self.device.as_mut().is_none_or(|filter| filter.matches(record.device));
            let Record { time, op, start_sector, sectors, .. } = record;
            // Trace time of this record.
            let origin = *self.origin.get_or_insert(time);
            let units = time.saturating_sub(origin) as u128 * self.ps_per_unit as u128;
            let gap = if self.parser.is_timed() {
                0
            } else {
                self.records as u128 * self.options.arrival_gap.unwrap_or(0) as u128
            };
            self.records += 1;
            let trace_time = (units + gap).min(SimTime::MAX as u128 / 2) as SimTime;
            if self.options.end.is_some_and(|end| trace_time >= end) {
                self.done = true;
                break;
            }
            if !device_ok || trace_time < self.options.start {
                continue;
            }
            let is_read = match op {
                Op::Trim => {
                    self.skipped.trims += 1;
                    continue;
                }
                Op::Flush => {
                    self.skipped.flushes += 1;
                    continue;
                }
                Op::Read => true,
                Op::Write => false,
            };
            let wanted = match self.options.ops {
                TraceOps::All => true,
                TraceOps::Read => is_read,
                TraceOps::Write => !is_read,
            };
            if !wanted {
                continue;
            }
            if sectors == 0 {
                self.skipped.zero_size += 1;
                continue;
            }
            return self.request(trace_time, is_read, start_sector, sectors).map(Some);
        }
        self.check_device_matched()?;
        Ok(None)
    }

    /// Times and places a record that passed the filters.
    fn request(
        &mut self,
        trace_time: SimTime,
        is_read: bool,
        start: u64,
        sectors: u64,
    ) -> Result<RequestSpec, TraceError> {
        let first = *self.replay_origin.get_or_insert(trace_time);
        let since_first = trace_time.saturating_sub(first);
        let mut arrival = if self.options.time_scale == 1.0 {
            since_first
        } else {
            (since_first as f64 * self.options.time_scale).round() as SimTime
        };
        if arrival < self.last_arrival {
            self.reordered += 1;
            arrival = self.last_arrival;
        }
        self.last_arrival = arrival;
        let sectors = sectors.min(self.logical_sectors);
        if sectors > u32::MAX as u64 {
            return Err(
                self.error(format!("a request of {sectors} sectors is larger than the model allows ({})", u32::MAX))
            );
        }
        let mut start = start;
        if start.saturating_add(sectors) > self.logical_sectors {
            self.wrapped += 1;
            start %= self.logical_sectors;
            if start + sectors > self.logical_sectors {
                start = self.logical_sectors - sectors;
            }
        }
        self.requests += 1;
        Ok(RequestSpec { arrival, is_read, start_sector: start, sectors: sectors as u32 })
    }

    /// At the end of the trace: a device filter that never matched is most likely a typo.
    fn check_device_matched(&mut self) -> Result<(), TraceError> {
        match &self.device {
            Some(filter) if !filter.matched && self.records > 0 => {
                let seen = filter.seen.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>().join(", ");
                let more = if filter.seen.len() == 8 { ", ..." } else { "" };
                let reason =
                    format!("no record has device \"{}\" (the trace's devices include {seen}{more})", filter.text);
                self.device = None; // report once
                Err(self.error(reason))
            }
            _ => Ok(()),
        }
    }

    /// Warnings about what was changed or left out, one per kind, prefixed with the flow's name.
    pub fn warnings(&self, flow: &str) -> Vec<String> {
        let mut out = Vec::new();
        if self.wrapped > 0 {
            out.push(format!(
                "flow {flow}: {} requests addressed sectors beyond the {} sectors the flow addresses and were wrapped modulo that capacity",
                self.wrapped, self.logical_sectors
            ));
        }
        if self.reordered > 0 {
            out.push(format!(
                "flow {flow}: {} trace records had an arrival time earlier than the record before; they were issued in file order",
                self.reordered
            ));
        }
        let SkipCounts { trims, flushes, zero_size } = self.skipped;
        if trims > 0 {
            out.push(format!("flow {flow}: {trims} trim (discard) records were skipped; the model has no trim"));
        }
        if flushes > 0 {
            out.push(format!("flow {flow}: {flushes} records without data (flush, sync) were skipped"));
        }
        if zero_size > 0 {
            out.push(format!("flow {flow}: {zero_size} records of size zero were skipped"));
        }
        out
    }
}

impl Iterator for TraceReader {
    type Item = Result<RequestSpec, TraceError>;

    /// The next request; an error ends a scan (the reader moves on to the next line if called
    /// again).
    fn next(&mut self) -> Option<Self::Item> {
        self.next_request().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::sniff::choose;
    use super::*;
    use crate::time::PS_PER_NS;
    use std::io::Write;
    use std::path::PathBuf;

    struct TempTrace(PathBuf);

    impl TempTrace {
        fn new(text: &str) -> Self {
            static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let path = std::env::temp_dir().join(format!("ssdlab-trace-{}-{n}.trace", std::process::id()));
            File::create(&path).unwrap().write_all(text.as_bytes()).unwrap();
            Self(path)
        }
    }

    impl Drop for TempTrace {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn mqsim(text: &str) -> (TempTrace, TraceReader) {
        let file = TempTrace::new(text);
        let options = TraceOptions { format: TraceFormat::Mqsim, ..TraceOptions::default() };
        let reader = TraceReader::open(&file.0, &options, 1 << 20).unwrap();
        (file, reader)
    }

    #[test]
    fn reads_records_relative_to_the_first() {
        let (_f, mut r) = mqsim("1000 0 16 8 1\n\n# note\n3000 1 32 16 0\n");
        let a = r.next_request().unwrap().unwrap();
        assert_eq!(a, RequestSpec { arrival: 0, is_read: true, start_sector: 16, sectors: 8 });
        let b = r.next_request().unwrap().unwrap();
        assert_eq!(b, RequestSpec { arrival: 2000 * PS_PER_NS, is_read: false, start_sector: 32, sectors: 16 });
        assert!(r.next_request().unwrap().is_none());
    }

    #[test]
    fn four_columns_is_an_error_naming_the_line() {
        let (_f, mut r) = mqsim("1000 0 16 8 1\n2000 0 16 8\n");
        r.next_request().unwrap();
        let e = r.next_request().unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.reason.starts_with("found 4 columns; expected 5 columns separated by spaces"), "{}", e.reason);
        assert!(e.reason.ends_with("(mqsim format)"), "{}", e.reason);
    }

    #[test]
    fn bad_type_and_column_are_errors_and_zero_size_is_skipped() {
        let (_f, mut r) = mqsim("1000 0 16 8 2\n");
        assert!(r.next_request().unwrap_err().reason.contains("type must be 0"));
        let (_f, mut r) = mqsim("10x0 0 16 8 1\n");
        assert!(r.next_request().unwrap_err().reason.contains("column 1"));
        let (_f, mut r) = mqsim("1000 0 16 0 1\n2000 0 16 8 1\n");
        // The first replayed request arrives at 0, whatever was skipped before it.
        assert_eq!(r.next_request().unwrap().unwrap().arrival, 0);
        assert_eq!(r.skipped.zero_size, 1);
        assert!(r.warnings("t")[0].contains("1 records of size zero"));
    }

    #[test]
    fn addresses_beyond_the_device_wrap() {
        let (_f, mut r) = mqsim(&format!("0 0 {} 8 1\n", (1u64 << 20) + 40));
        assert_eq!(r.next_request().unwrap().unwrap().start_sector, 40);
        assert_eq!(r.wrapped, 1);
    }

    #[test]
    fn several_fitting_formats_are_an_error_listing_them() {
        let e = choose("t.csv", &[TraceFormat::Msr, TraceFormat::Spc], &[]).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("format: the first lines of trace file \"t.csv\" fit several formats (msr, spc)"));
    }

    #[test]
    fn every_format_has_a_distinct_name() {
        let mut names: Vec<_> = TraceFormat::READERS.iter().map(|f| f.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), TraceFormat::READERS.len());
    }
}
