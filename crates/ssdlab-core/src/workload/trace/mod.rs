//! Trace readers: a trace flow replays a block trace file record by record. One module per
//! format parses a line into a [`Record`] in the format's own units; this module turns records
//! into [`RequestSpec`]s the same way for every format:
//!
//! - **Time.** Trace time is the record's timestamp minus the first record's (whatever the
//!   filters keep). Records before `start` or from `end` on (trace time) are dropped; the file is
//!   read in order, so the first record at or past `end` ends the flow. The first replayed
//!   request arrives at simulated time 0 and the others keep their distance to it, multiplied by
//!   `time_scale`. A record earlier than one before it (the first record included) is issued in
//!   file order, counted, and the warning names the first such line. A trace time beyond the
//!   simulatable range ([`MAX_TRACE_TIME`], about 106.75 days) is an error at its line.
//! - **Filters.** `device` keeps one device or volume (every format carries one), `ops` keeps
//!   reads or writes. Trims and requests without data (flush, sync) are skipped and counted, so
//!   are records of size zero.
//! - **Addresses.** Requests cover whole 512 B sectors (a byte range covers every sector it
//!   touches). Addresses beyond the flow's logical space wrap modulo its capacity, as MQSim does,
//!   and the number of wrapped requests is reported once, as a warning.
//! - **Memory.** The file is read line by line through one reused buffer (lines of at most
//!   64 KiB); parsing borrows from it, so memory does not grow with the trace and reading a record
//!   allocates nothing. A stream (pipe, FIFO, `/dev/stdin`) is copied once to a temporary file
//!   ([`source`]), since a trace is read more than once.
//! - **Opening.** A UTF-8 byte order mark before the first line is dropped. The file is read up to
//!   its first record as it is opened ([`survey`]): a trace that holds none is an error that says
//!   what it holds, and a first line the format cannot read names the format it looks like.
//! - **Lines passed over.** blkparse's lines that are not events and its events of the other
//!   actions are counted and reported as warnings with the first line; in every format a line
//!   that looks like a record but does not parse is an error naming the file and line.
//!
//! The format is named in the flow (`format = "msr"`) or sniffed from the first lines
//! (`"auto"`, the default). docs/traces.md describes every format with its units.

mod alibaba;
mod blkparse;
mod fields;
mod fio;
mod mqsim;
mod msr;
mod options;
mod sniff;
mod source;
mod spc;
mod survey;
mod tencent;

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

pub use options::TraceOptions;
pub use source::resolve as resolve_path;
use source::Source;
use survey::Survey;

use super::{Op as RequestOp, RequestSpec, TraceError};
use crate::config::{BlkparseEvent, TraceFormat, TraceOps};
use crate::time::SimTime;

/// Longest line a trace may have; a longer one is reported (it is likely not a text trace).
const MAX_LINE_BYTES: usize = 64 * 1024;
/// Lines read to sniff the format.
const SNIFF_LINES: usize = 20;
/// The latest trace time a request may arrive at: 2^63 ps, about 106.75 days (the limit of
/// config durations too, `time::parse_duration_ps`), so that simulated times keep headroom below
/// `SimTime::MAX`.
pub const MAX_TRACE_TIME: SimTime = SimTime::MAX / 2;
/// The UTF-8 byte order mark some Windows tools write before the first line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

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
    /// A line that belongs to the format but carries no request (a fio header, file action or
    /// wait). It counts as evidence when sniffing.
    Meta,
    /// A CSV format's column header (its first line, when it starts with a letter).
    Header,
    /// A blkparse event of an action that is not replayed: evidence when sniffing, counted when
    /// replaying.
    OtherEvent,
    /// A line that is not a record, passed over and counted (blkparse's summaries).
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
    /// FDP placement handle of a write (the `mqsim` format's optional sixth column).
    placement_handle: Option<u16>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Read,
    Write,
    Trim,
    /// A request without data: flush, sync.
    Flush,
    /// A zoned namespace's command (fio iologs' `zone_append`, `zone_open`, `zone_close`,
    /// `zone_finish`, `zone_reset`: docs/traces.md).
    Zone(RequestOp),
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
    /// Reads and writes of zero bytes.
    pub zero_size: u64,
    /// Lines that are not records, passed over (blkparse's summaries).
    pub lines: u64,
    /// blkparse events of the action that is not replayed.
    pub other_events: u64,
}

/// Where each kind of line that warns was first seen (line numbers; 0 = none yet). Read once at
/// the end, so boxed out of the reader.
#[derive(Clone, Debug, Default)]
struct FirstLines {
    skipped: u64,
    other_event: u64,
    reordered: u64,
    /// Records read but not replayed because of `ops` or `start` (for the warning when a flow
    /// replays nothing).
    filtered_ops: u64,
    before_start: u64,
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
/// independent: scanning opens its own and leaves the run's untouched (a stream it shares with
/// the run is read from one copy, see [`source`]).
pub struct TraceReader {
    path: String,
    reader: BufReader<Source>,
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
    first: Box<FirstLines>,
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
    /// Records earlier than a record before them (issued in file order).
    pub reordered: u64,
    /// Requests returned so far.
    pub requests: u64,
    pub skipped: SkipCounts,
}

impl TraceReader {
    /// Opens a trace; with `format = Auto`, reads its first lines to tell the format. Reads the
    /// file up to its first record, so a trace without records, or whose first lines are not in
    /// its format, is an error here. Errors name the option at fault (see [`OpenError`]).
    pub fn open(path: &Path, options: &TraceOptions, logical_sectors: u64) -> Result<Self, OpenError> {
        options.check()?;
        let (source, file_bytes) = Source::open(path).map_err(|reason| OpenError::Option { field: "path", reason })?;
        let event = options.blkparse_event.unwrap_or(BlkparseEvent::Dispatch);
        let parser = Parser::new(options.format, event);
        let mut reader = Self {
            path: path.display().to_string(),
            reader: BufReader::with_capacity(1 << 16, source),
            buf: Vec::with_capacity(256),
            line_number: 0,
            content_lines: 0,
            format: options.format,
            ps_per_unit: parser.ps_per_unit(),
            parser,
            options: Box::new(options.clone()),
            device: options.device.as_ref().map(|d| {
                Box::new(DeviceFilter { text: d.clone(), number: d.parse().ok(), matched: false, seen: Vec::new() })
            }),
            first: Box::default(),
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
        let first_lines = reader.first_lines()?;
        let format = match options.format {
            // Nothing, or a lone CSV column header (which every CSV format would pass over).
            TraceFormat::Auto
                if first_lines.len() <= 1
                    && first_lines
                        .iter()
                        .all(|l| l.contains(',') && matches!(Parser::Msr.parse(l, true), Ok(Parsed::Header))) =>
            {
                let survey = Survey {
                    bytes: file_bytes,
                    lines: reader.line_number,
                    content: first_lines.len() as u64,
                    header: first_lines.first().cloned(),
                    ..Survey::default()
                };
                return Err(survey::no_records(&reader.path, TraceFormat::Auto, None, &survey, &first_lines));
            }
            TraceFormat::Auto => sniff::detect(&reader.path, &first_lines)?,
            given => given,
        };
        reader.format = format;
        reader.parser = Parser::new(format, event);
        reader.ps_per_unit = reader.parser.ps_per_unit();
        if options.blkparse_event.is_some() && format != TraceFormat::Blkparse {
            return Err(OpenError::Option {
                field: "blkparse_event",
                reason: format!("only applies to blkparse traces; \"{}\" is read as {}", reader.path, format.name()),
            });
        }
        reader.survey(&first_lines)?;
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

    /// An error about the record read last (its file and line).
    pub fn error_here(&self, reason: String) -> TraceError {
        self.error(reason)
    }

    fn error(&self, reason: String) -> TraceError {
        TraceError { file: self.path.clone(), line: self.line_number, reason }
    }

    /// A line the format cannot read: the reason, the layout, the format.
    fn parse_error(&self, reason: &str) -> TraceError {
        let (name, layout) = (self.format.name(), self.format.layout());
        self.error(format!("{reason}; expected {layout} ({name} format)"))
    }

    /// Back to the start of the file, as if just opened.
    fn rewind(&mut self) -> Result<(), OpenError> {
        self.reader.seek(SeekFrom::Start(0)).map_err(|e| OpenError::Option {
            field: "path",
            reason: format!("cannot read trace file \"{}\" again from its start: {}", self.path, source::plain(&e)),
        })?;
        (self.line_number, self.content_lines, self.bytes_read) = (0, 0, 0);
        Ok(())
    }

    /// Reads the next line into `buf`; false at the end of the file. A byte order mark before the
    /// first line is dropped.
    fn read_line(&mut self) -> Result<bool, TraceError> {
        self.buf.clear();
        let n = (&mut self.reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| self.error(format!("cannot read the trace file: {}", source::plain(&e))))?;
        if n == 0 {
            return Ok(false);
        }
        if self.bytes_read == 0 && self.buf.starts_with(BOM) {
            self.buf.drain(..BOM.len());
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
                Ok(Parsed::Meta | Parsed::Header) => continue,
                Ok(Parsed::OtherEvent) => {
                    self.skipped.other_events += 1;
                    if self.first.other_event == 0 {
                        self.first.other_event = self.line_number;
                    }
                    continue;
                }
                Ok(Parsed::Skip) => {
                    self.skipped.lines += 1;
                    if self.first.skipped == 0 {
                        self.first.skipped = self.line_number;
                    }
                    continue;
                }
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
            let Record { time, op, start_sector, sectors, placement_handle, .. } = record;
            // Trace time of this record. One earlier than the first record is at trace time 0
            // and, if replayed, is counted as out of order.
            let origin = *self.origin.get_or_insert(time);
            let early = time < origin;
            let units = time.saturating_sub(origin) as u128 * self.ps_per_unit as u128;
            let gap = if self.parser.is_timed() {
                0
            } else {
                self.records as u128 * self.options.arrival_gap.unwrap_or(0) as u128
            };
            self.records += 1;
            let trace_time = units + gap;
            if self.options.end.is_some_and(|end| trace_time >= end as u128) {
                self.done = true;
                break;
            }
            if trace_time > MAX_TRACE_TIME as u128 {
                return Err(self.time_error(time, origin, trace_time));
            }
            let trace_time = trace_time as SimTime;
            if !device_ok {
                continue;
            }
            if trace_time < self.options.start {
                self.first.before_start += 1;
                continue;
            }
            // Trims and flushes are replayed as the commands they are (docs/traces.md).
            let op = match op {
                Op::Read => RequestOp::Read,
                Op::Write => RequestOp::Write,
                Op::Trim => RequestOp::Trim,
                Op::Flush => RequestOp::Flush,
                Op::Zone(op) => op,
            };
            let wanted = match self.options.ops {
                TraceOps::All => true,
                TraceOps::Read => op == RequestOp::Read,
                TraceOps::Write => matches!(op, RequestOp::Write | RequestOp::ZoneAppend),
            };
            if !wanted {
                self.first.filtered_ops += 1;
                continue;
            }
            if op == RequestOp::Flush {
                return self.request(trace_time, early, op, 0, 0, None).map(Some);
            }
            if op.is_zone_management() {
                // Names a zone by its first sector; carries none.
                return self.request(trace_time, early, op, start_sector, 0, None).map(Some);
            }
            if sectors == 0 {
                self.skipped.zero_size += 1;
                continue;
            }
            return self.request(trace_time, early, op, start_sector, sectors, placement_handle).map(Some);
        }
        self.check_device_matched()?;
        Ok(None)
    }

    /// A record beyond the simulatable range: what its time is and the largest one accepted.
    fn time_error(&self, time: u64, origin: u64, trace_time: u128) -> TraceError {
        let days = |ps: u128| ps as f64 / (86_400.0 * crate::time::PS_PER_S as f64);
        let limit = format!("{MAX_TRACE_TIME} ps, about {:.2} days", days(MAX_TRACE_TIME as u128));
        let reason = if self.parser.is_timed() {
            let largest = origin.saturating_add(MAX_TRACE_TIME / self.ps_per_unit);
            format!(
                "timestamp {time} is {:.2} days after the trace's first record ({origin}); a trace can span at most {limit}: the largest timestamp accepted in this file is {largest}",
                days(trace_time)
            )
        } else {
            format!(
                "this request comes {:.2} days after the first (its waits plus arrival_gap for each request before it); a trace can span at most {limit}",
                days(trace_time)
            )
        };
        self.error(reason)
    }

    /// Times and places a record that passed the filters.
    fn request(
        &mut self,
        trace_time: SimTime,
        early: bool,
        op: RequestOp,
        start: u64,
        sectors: u64,
        placement_handle: Option<u16>,
    ) -> Result<RequestSpec, TraceError> {
        let first = *self.replay_origin.get_or_insert(trace_time);
        let since_first = trace_time.saturating_sub(first);
        let scale = self.options.time_scale;
        let mut arrival = if scale == 1.0 {
            since_first
        } else {
            let scaled = (since_first as f64 * scale).round();
            if scaled > MAX_TRACE_TIME as f64 {
                return Err(self.error(format!(
                    "time_scale = {} puts this record {:.3e} s after the first replayed one, past the {MAX_TRACE_TIME} ps (about 106.75 days) a run can simulate; lower time_scale or set end",
                    options::number(scale),
                    scaled / crate::time::PS_PER_S as f64
                )));
            }
            scaled as SimTime
        };
        if early || arrival < self.last_arrival {
            self.reordered += 1;
            if self.first.reordered == 0 {
                self.first.reordered = self.line_number;
            }
            arrival = arrival.max(self.last_arrival);
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
        Ok(RequestSpec { arrival, op, start_sector: start, sectors: sectors as u32, placement_handle })
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
        let path = &self.path;
        if self.wrapped > 0 {
            out.push(format!(
                "flow {flow}: {} requests addressed sectors beyond the {} sectors the flow addresses and were wrapped modulo that capacity",
                self.wrapped, self.logical_sectors
            ));
        }
        if self.reordered > 0 {
            out.push(format!(
                "flow {flow}: {} trace records had an arrival time earlier than a record before them (the first at {path}:{}); they were issued in file order",
                self.reordered, self.first.reordered
            ));
        }
        let SkipCounts { zero_size, lines, other_events } = self.skipped;
        if zero_size > 0 {
            out.push(format!("flow {flow}: {zero_size} records of size zero were skipped"));
        }
        if lines > 0 {
            out.push(format!(
                "flow {flow}: {lines} lines of {path} are not blkparse events (summaries or other text) and were skipped; the first is line {}",
                self.first.skipped
            ));
        }
        if other_events > 0 {
            let action = match &self.parser {
                Parser::Blkparse { action } => *action,
                _ => "?",
            };
            out.push(format!(
                "flow {flow}: {other_events} blkparse events of actions other than {action} were skipped (only {action} events are replayed, blkparse_event); the first is {path}:{}",
                self.first.other_event
            ));
        }
        if self.requests == 0 && self.records > 0 {
            let FirstLines { filtered_ops, before_start, .. } = *self.first;
            out.push(format!(
                "flow {flow}: none of the {} records of {path} was replayed ({filtered_ops} left out by ops, {before_start} before start, the others skipped as counted above or past end)",
                self.records
            ));
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
mod tests;
