//! Traces that cannot be replayed as they stand (issue 12, F12-F14 and item 5): a trace without
//! records, a trace read in the wrong format, damaged blkparse lines, times beyond the
//! simulatable range and records out of order are errors or warnings that name the file (and
//! line); a byte order mark is dropped and a trace can come through a pipe.

mod common;

use std::path::{Path, PathBuf};

use common::{repo_root, SMALL_DEVICE};
use ssdlab_core::config::{BlkparseEvent, TraceFormat, TraceOps};
use ssdlab_core::time::PS_PER_NS;
use ssdlab_core::workload::trace::{OpenError, TraceOptions, TraceReader, MAX_TRACE_TIME};
use ssdlab_core::workload::{RequestSpec, TraceError};
use ssdlab_core::{SimError, Simulation};

const BIG: u64 = 1 << 30;

fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures/traces").join(name)
}

fn options(format: TraceFormat) -> TraceOptions {
    TraceOptions { format, ..TraceOptions::default() }
}

/// A folder of its own in the temp folder, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("ssdlab-trace-errors-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn file(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn open_error(path: &Path, options: &TraceOptions) -> OpenError {
    match TraceReader::open(path, options, BIG) {
        Ok(_) => panic!("{} opened", path.display()),
        Err(e) => e,
    }
}

/// The `field: reason` of an option error.
fn option_error(path: &Path, options: &TraceOptions) -> (&'static str, String) {
    match open_error(path, options) {
        OpenError::Option { field, reason } => (field, reason),
        OpenError::Trace(e) => panic!("a line error, not an option error: {e}"),
    }
}

fn line_error(path: &Path, options: &TraceOptions) -> TraceError {
    match open_error(path, options) {
        OpenError::Trace(e) => e,
        e => panic!("an option error, not a line error: {e}"),
    }
}

fn read_all(path: &Path, options: &TraceOptions) -> (TraceReader, Vec<RequestSpec>) {
    let mut reader = TraceReader::open(path, options, BIG).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let requests = (&mut reader).collect::<Result<Vec<_>, _>>().unwrap_or_else(|e| panic!("{e}"));
    (reader, requests)
}

// ---- a trace without records (F12) ----

#[test]
fn an_empty_trace_is_an_error_naming_the_file_and_the_expected_records() {
    let dir = TempDir::new("empty");
    let path = dir.file("empty.trace", "");
    let (field, reason) = option_error(&path, &options(TraceFormat::Mqsim));
    assert_eq!(field, "path");
    assert!(reason.starts_with(&format!("trace file \"{}\" is empty;", path.display())), "{reason}");
    assert!(reason.contains("expected mqsim records like `938513000 4 264719034 16 0`"), "{reason}");
    // Sniffing cannot help either: the same error.
    assert_eq!(option_error(&path, &TraceOptions::default()).0, "path");
}

#[test]
fn a_comment_only_trace_is_an_error_that_counts_its_lines() {
    let dir = TempDir::new("comments");
    let path = dir.file("trace.csv", "# nothing\n\n# still nothing\n");
    for opts in [options(TraceFormat::Msr), TraceOptions::default()] {
        let (field, reason) = option_error(&path, &opts);
        assert_eq!(field, "path");
        assert!(reason.contains("trace.csv\" holds no records (3 lines, all blank or comments)"), "{reason}");
    }
    let (_, reason) = option_error(&path, &options(TraceFormat::Msr));
    assert!(reason.contains("expected msr records like `128166372003061629,wdev,0,Read,8192,4096,1331`"), "{reason}");
    // The finding's reproducer: one comment line, format = "mqsim".
    let f12 = repo_root().join("tests/reliability/corpus/findings/F12-empty-trace.trace");
    let (_, reason) = option_error(&f12, &options(TraceFormat::Mqsim));
    assert!(reason.contains("holds no records (1 line, all blank or comments)"), "{reason}");
}

#[test]
fn a_header_only_trace_is_an_error_quoting_the_header() {
    let dir = TempDir::new("header");
    let path = dir.file("header.csv", "Timestamp,Offset,Size,IOType,VolumeID\n");
    for format in [TraceFormat::Msr, TraceFormat::Tencent, TraceFormat::Auto] {
        let (field, reason) = option_error(&path, &options(format));
        assert_eq!(field, "path", "{}", format.name());
        assert!(
            reason.contains("holds no records, only the column header \"Timestamp,Offset,Size,IOType,VolumeID\""),
            "{}: {reason}",
            format.name()
        );
    }
}

#[test]
fn a_fio_log_of_only_its_header_is_an_error() {
    let dir = TempDir::new("fio");
    let path = dir.file("head.log", "fio version 2 iolog\n/dev/a add\n/dev/a open\n");
    let (field, reason) = option_error(&path, &TraceOptions::default());
    assert_eq!(field, "path");
    assert!(reason.contains("holds no read, write, trim or sync lines, only its header and 2 add"), "{reason}");
}

#[cfg(unix)]
#[test]
fn dev_null_is_an_empty_trace() {
    let (field, reason) = option_error(Path::new("/dev/null"), &options(TraceFormat::Spc));
    assert_eq!(field, "path");
    assert!(reason.starts_with("trace file \"/dev/null\" is empty; expected spc records"), "{reason}");
}

#[test]
fn a_trace_without_records_stops_the_run_at_the_flows_path() {
    let text = format!(
        "{SMALL_DEVICE}\n[precondition]\nmode = \"none\"\n[[flows]]\nkind = \"trace\"\npath = \"tests/reliability/corpus/findings/F12-empty-trace.trace\"\nformat = \"mqsim\"\n"
    );
    let Err(SimError::Config(e)) = Simulation::from_toml_str(&text, &repo_root()) else { panic!("accepted") };
    assert_eq!(e.path, "flows[0].path");
    assert!(e.reason.contains("F12-empty-trace.trace\" holds no records"), "{}", e.reason);
}

// ---- the wrong format ----

#[test]
fn a_trace_read_as_blkparse_names_the_format_it_looks_like() {
    for (fixture_name, looks_like) in [("mqsim.trace", "mqsim"), ("msr.csv", "msr"), ("tencent.csv", "tencent")] {
        let e = line_error(&fixture(fixture_name), &options(TraceFormat::Blkparse));
        let message = e.to_string();
        assert!(message.contains("the line looks like an event but its device is"), "{message}");
        assert!(message.contains(&format!("set format = \"{looks_like}\"")), "{message}");
    }
    // The corpus's reproducers.
    let corpus = repo_root().join("tests/reliability/corpus/trace-silent");
    let e = line_error(&corpus.join("trace-11-00121-mqsim-read_as_blkparse.trace"), &options(TraceFormat::Blkparse));
    assert_eq!(e.line, 1);
    assert!(e.reason.contains("set format = \"mqsim\""), "{e}");
    let e = line_error(&corpus.join("trace-11-00262-msr-read_as_blkparse.csv"), &options(TraceFormat::Blkparse));
    assert!(e.reason.contains("set format = \"msr\""), "{e}");
}

#[test]
fn a_file_of_text_read_as_blkparse_says_no_line_parsed() {
    let dir = TempDir::new("text");
    let path = dir.file("notes.txt", "remember the milk\nand the eggs\n");
    let (field, reason) = option_error(&path, &options(TraceFormat::Blkparse));
    assert_eq!(field, "path");
    assert!(reason.starts_with(&format!("no line of \"{}\" parsed as a blkparse record", path.display())), "{reason}");
    assert!(reason.contains("the first, line 1, is \"remember the milk\""), "{reason}");
}

#[test]
fn blkparse_without_the_replayed_action_suggests_the_other() {
    let dir = TempDir::new("q-only");
    let path = dir.file("q.txt", "  8,0 0 1 0.000001 5 Q W 8 + 8 [a]\n  8,0 0 2 0.000002 5 Q R 16 + 8 [a]\n");
    let (field, reason) = option_error(&path, &options(TraceFormat::Blkparse));
    assert_eq!(field, "path");
    assert!(reason.contains("holds no D events with data to replay"), "{reason}");
    assert!(reason.contains("it has 2 Q events: set blkparse_event = \"Q\""), "{reason}");
    let queue = TraceOptions { blkparse_event: Some(BlkparseEvent::Queue), ..options(TraceFormat::Blkparse) };
    assert_eq!(read_all(&path, &queue).1.len(), 2);
}

// ---- damaged blkparse lines and lines passed over (F13) ----

#[test]
fn damaged_blkparse_event_lines_are_errors_with_their_line() {
    let f13 = repo_root().join("tests/reliability/corpus/findings/F13-blkparse-damaged.txt");
    let mut reader = TraceReader::open(&f13, &options(TraceFormat::Blkparse), BIG).unwrap();
    reader.next_request().unwrap().unwrap();
    let e = reader.next_request().unwrap_err();
    assert_eq!(e.line, 2, "{e}");
    assert!(e.reason.contains("its device is \"0\", expected major,minor"), "{e}");
    // Line 3's device has a full-width digit.
    let dir = TempDir::new("damaged");
    let path = dir.file("d.txt", "  8,0 0 1 0.000001 5 D W 8 + 8 [a]\n  8,\u{ff10} 0 3 0.000003 5 D W 300 + 8 [a]\n");
    let mut reader = TraceReader::open(&path, &options(TraceFormat::Blkparse), BIG).unwrap();
    reader.next_request().unwrap();
    let e = reader.next_request().unwrap_err();
    assert_eq!(e.line, 2, "{e}");
    assert!(e.to_string().starts_with(&format!("{}:2: the line looks like an event", path.display())), "{e}");
}

#[test]
fn blkparse_lines_passed_over_are_counted_in_the_results_warnings() {
    let text = format!(
        "{SMALL_DEVICE}\n[precondition]\nmode = \"none\"\n[[flows]]\nname = \"blk\"\nkind = \"trace\"\npath = \"tests/fixtures/traces/blkparse.txt\"\n"
    );
    let results = Simulation::from_toml_str(&text, &repo_root()).unwrap().run().unwrap();
    let file = repo_root().join("tests/fixtures/traces/blkparse.txt").display().to_string();
    // Lines 15-19 and 21-23 are blkparse's summary; lines 1, 2, 3, 5, 6, 8, 10 and 12 are Q, G,
    // I and C events.
    let expected = [
        format!("flow blk: 8 lines of {file} are not blkparse events (summaries or other text) and were skipped; the first is line 15"),
        format!("flow blk: 8 blkparse events of actions other than D were skipped (only D events are replayed, blkparse_event); the first is {file}:1"),
    ];
    for w in expected {
        assert!(results.warnings.contains(&w), "{w}\nnot in {:?}", results.warnings);
    }
}

// ---- time (F14) ----

#[test]
fn a_timestamp_past_the_simulatable_range_is_an_error_giving_the_largest_accepted() {
    let f14 = repo_root().join("tests/reliability/corpus/findings/F14-trace-time.trace");
    let mut reader = TraceReader::open(&f14, &options(TraceFormat::Mqsim), BIG).unwrap();
    let e = loop {
        match reader.next_request() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("no error"),
            Err(e) => break e,
        }
    };
    assert_eq!(e.line, 4, "{e}");
    let largest = 1_000_000 + MAX_TRACE_TIME / PS_PER_NS;
    assert!(e.reason.contains("timestamp 2000000000000000000 is 23148.15 days after"), "{e}");
    assert!(e.reason.contains(&format!("the largest timestamp accepted in this file is {largest}")), "{e}");
    // The largest one itself is replayed.
    let dir = TempDir::new("edge");
    let path = dir.file("edge.trace", format!("1000000 0 0 8 0\n{largest} 0 8 8 0\n"));
    let (_, got) = read_all(&path, &options(TraceFormat::Mqsim));
    assert_eq!(got[1].arrival, (largest - 1_000_000) * PS_PER_NS);
}

#[test]
fn a_record_earlier_than_the_first_warns_like_any_reordering() {
    let f14 = repo_root().join("tests/reliability/corpus/findings/F14-trace-time.trace");
    let mut reader = TraceReader::open(&f14, &options(TraceFormat::Mqsim), BIG).unwrap();
    let a = reader.next_request().unwrap().unwrap();
    let b = reader.next_request().unwrap().unwrap();
    assert_eq!((a.arrival, b.arrival), (0, 0), "issued in file order, at the time of the record before");
    assert_eq!(reader.reordered, 1);
    let w = reader.warnings("t");
    let expected = format!(
        "flow t: 1 trace records had an arrival time earlier than a record before them (the first at {}:2); they were issued in file order",
        f14.display()
    );
    assert!(w.contains(&expected), "{w:?}");
}

#[test]
fn time_scale_must_be_finite_and_positive_and_keep_times_in_range() {
    for scale in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let bad = TraceOptions { time_scale: scale, ..options(TraceFormat::Mqsim) };
        let (field, reason) = option_error(&fixture("mqsim.trace"), &bad);
        assert_eq!(field, "time_scale");
        assert!(reason.contains("must be a finite number greater than zero"), "{reason}");
    }
    let huge = TraceOptions { time_scale: 1e300, ..options(TraceFormat::Mqsim) };
    let mut reader = TraceReader::open(&fixture("mqsim.trace"), &huge, BIG).unwrap();
    reader.next_request().unwrap().unwrap();
    let e = reader.next_request().unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.reason.starts_with("time_scale = 1e300 puts this record"), "{e}");
    let window = TraceOptions { start: 2, end: Some(1), ..options(TraceFormat::Mqsim) };
    assert_eq!(option_error(&fixture("mqsim.trace"), &window).0, "end");
}

#[test]
fn time_scale_errors_name_the_flows_key_in_a_config() {
    let trace = "kind = \"trace\"\npath = \"tests/fixtures/traces/mqsim.trace\"\n";
    for value in ["0.0", "-2.0", "inf"] {
        let text = format!("{SMALL_DEVICE}\n[[flows]]\n{trace}time_scale = {value}\n");
        let Err(SimError::Config(e)) = Simulation::from_toml_str(&text, &repo_root()) else { panic!("{value}") };
        assert_eq!(e.path, "flows[0].time_scale", "{value}");
    }
}

#[test]
fn a_flow_whose_filters_leave_nothing_warns() {
    // Volume 77 only reads.
    let writes = TraceOptions { ops: TraceOps::Write, device: Some("77".into()), ..options(TraceFormat::Tencent) };
    let (reader, got) = read_all(&fixture("tencent.csv"), &writes);
    assert!(got.is_empty());
    let w = reader.warnings("t");
    assert!(w.iter().any(|w| w.contains("none of the 4 records") && w.contains("1 left out by ops")), "{w:?}");
}

// ---- byte order mark, pipes, files that are not files (item 5) ----

#[test]
fn a_byte_order_mark_is_dropped_and_the_trace_replays_the_same() {
    let dir = TempDir::new("bom");
    for (name, format) in [
        ("msr.csv", TraceFormat::Msr),
        ("spc.csv", TraceFormat::Spc),
        ("alibaba.csv", TraceFormat::Alibaba),
        ("tencent.csv", TraceFormat::Tencent),
        ("mqsim.trace", TraceFormat::Mqsim),
        ("blkparse.txt", TraceFormat::Blkparse),
        ("fio-v3.log", TraceFormat::Fio),
    ] {
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend(std::fs::read(fixture(name)).unwrap());
        let with_bom = dir.file(name, bytes);
        let plain = read_all(&fixture(name), &options(format)).1;
        assert_eq!(read_all(&with_bom, &options(format)).1, plain, "{name}");
        let (reader, sniffed) = read_all(&with_bom, &TraceOptions::default());
        assert_eq!((reader.format(), sniffed), (format, plain), "{name} sniffed");
    }
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success());
}

#[cfg(unix)]
#[test]
fn a_trace_is_read_from_a_fifo() {
    let dir = TempDir::new("fifo");
    let fifo = dir.0.join("trace.fifo");
    mkfifo(&fifo);
    let text = std::fs::read(fixture("msr.csv")).unwrap();
    let writer = {
        let (fifo, text) = (fifo.clone(), text.clone());
        std::thread::spawn(move || std::fs::write(&fifo, text).unwrap())
    };
    let (reader, got) = read_all(&fifo, &TraceOptions::default());
    writer.join().unwrap();
    assert_eq!(reader.format(), TraceFormat::Msr);
    assert_eq!(reader.file_bytes, text.len() as u64);
    assert_eq!(got, read_all(&fixture("msr.csv"), &options(TraceFormat::Msr)).1);
}

#[cfg(unix)]
#[test]
fn a_run_replays_a_fifo_trace_like_the_file_even_when_preconditioning_reads_it_too() {
    let dir = TempDir::new("fifo-run");
    let fifo = dir.0.join("trace.fifo");
    mkfifo(&fifo);
    let config = |path: &Path| {
        // The default precondition mode (steady) scans the trace before the run reads it.
        format!("{SMALL_DEVICE}\n[[flows]]\nname = \"t\"\nkind = \"trace\"\npath = \"{}\"\n", path.display())
    };
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(&fifo, std::fs::read(fixture("tencent.csv")).unwrap()).unwrap())
    };
    let from_fifo = Simulation::from_toml_str(&config(&fifo), &repo_root()).unwrap().run().unwrap();
    writer.join().unwrap();
    let from_file = Simulation::from_toml_str(&config(&fixture("tencent.csv")), &repo_root()).unwrap().run().unwrap();
    assert_eq!(from_fifo.flows[0].requests, 4);
    assert_eq!(
        (from_fifo.flows[0].reads.count, from_fifo.flows[0].writes.count, from_fifo.simulated_seconds),
        (from_file.flows[0].reads.count, from_file.flows[0].writes.count, from_file.simulated_seconds)
    );
}

#[test]
fn a_missing_file_or_a_directory_is_an_error_in_plain_words() {
    let (field, reason) = option_error(&fixture("no-such.csv"), &TraceOptions::default());
    assert_eq!(field, "path");
    assert!(reason.ends_with("no-such.csv\": no such file"), "{reason}");
    let (field, reason) = option_error(&repo_root().join("tests/fixtures/traces"), &TraceOptions::default());
    assert_eq!(field, "path");
    assert!(reason.ends_with("traces\" is a directory; expected a trace file"), "{reason}");
}
