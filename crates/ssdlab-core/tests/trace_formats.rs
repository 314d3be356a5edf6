//! Trace readers, one fixture per format under tests/fixtures/traces: units converted to 512 B
//! sectors and picoseconds, format sniffing, filters, the wrap rule, and errors that name the
//! file, the line and the expected layout (or the config field).

mod common;

use std::path::{Path, PathBuf};

use common::{repo_root, SMALL_DEVICE};
use ssdlab_core::config::{BlkparseEvent, TraceFormat, TraceOps};
use ssdlab_core::time::{PS_PER_MS, PS_PER_S, PS_PER_US};
use ssdlab_core::workload::trace::{OpenError, TraceOptions, TraceReader};
use ssdlab_core::workload::{Op, RequestSpec};
use ssdlab_core::{Config, SimError, Simulation};

/// 512 GiB of sectors: every fixture address fits.
const BIG: u64 = 1 << 30;

fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures/traces").join(name)
}

fn options(format: TraceFormat) -> TraceOptions {
    TraceOptions { format, ..TraceOptions::default() }
}

fn read_all(path: &Path, options: &TraceOptions) -> (TraceReader, Vec<RequestSpec>) {
    let mut reader = TraceReader::open(path, options, BIG).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let requests = (&mut reader).collect::<Result<Vec<_>, _>>().unwrap_or_else(|e| panic!("{e}"));
    (reader, requests)
}

fn requests(name: &str, options: &TraceOptions) -> Vec<RequestSpec> {
    read_all(&fixture(name), options).1
}

fn req(arrival: u64, is_read: bool, start_sector: u64, sectors: u32) -> RequestSpec {
    RequestSpec {
        arrival,
        op: if is_read { Op::Read } else { Op::Write },
        start_sector,
        sectors,
        placement_handle: None,
    }
}

/// Trims and flushes are replayed as such (issue 13).
fn trim(arrival: u64, start_sector: u64, sectors: u32) -> RequestSpec {
    RequestSpec { arrival, op: Op::Trim, start_sector, sectors, placement_handle: None }
}

fn flush(arrival: u64) -> RequestSpec {
    RequestSpec { arrival, op: Op::Flush, start_sector: 0, sectors: 0, placement_handle: None }
}

/// A trace file in the temp folder, removed when dropped.
struct Temp(PathBuf);

impl Temp {
    fn new(name: &str, text: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("ssdlab-trace-formats-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        Self(path)
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

// ---- one test per format: columns and units ----

#[test]
fn mqsim_times_are_nanoseconds_and_sizes_sectors() {
    assert_eq!(
        requests("mqsim.trace", &options(TraceFormat::Mqsim)),
        [req(0, true, 16, 8), req(2 * PS_PER_US, false, 32, 16)]
    );
}

#[test]
fn msr_offsets_and_sizes_are_bytes_and_times_filetime_ticks() {
    assert_eq!(
        requests("msr.csv", &options(TraceFormat::Msr)),
        [
            // offset 8192 B, 4096 B: sectors 16..24
            req(0, true, 16, 8),
            // 10,000 ticks of 100 ns later: 1 ms
            req(PS_PER_MS, false, 0, 1),
            req(2 * PS_PER_MS, true, 8, 8),
            // 10^7 ticks: 1 s; bytes 100..1100 touch sectors 0, 1 and 2; "write" in any case
            req(PS_PER_S, false, 0, 3),
        ]
    );
}

#[test]
fn spc_lba_is_blocks_size_bytes_and_time_seconds() {
    assert_eq!(
        requests("spc.csv", &options(TraceFormat::Spc)),
        [req(0, false, 303567, 7), req(26_214 * PS_PER_US, false, 55590, 6), req(117_964 * PS_PER_US, true, 303574, 8),]
    );
}

#[test]
fn blkparse_replays_dispatches_by_default_and_skips_summaries() {
    let (reader, got) = read_all(&fixture("blkparse.txt"), &options(TraceFormat::Blkparse));
    assert_eq!(
        got,
        [
            // times relative to the first D event (5 us)
            req(0, false, 223490, 8),
            req(997 * PS_PER_US, true, 1000, 16),
            flush(1_996 * PS_PER_US),
            trim(2_996 * PS_PER_US, 5000, 64),
            req(3_998 * PS_PER_US, true, 4096, 32),
        ]
    );
    assert_eq!(reader.skipped.zero_size, 0);
}

#[test]
fn blkparse_can_replay_queue_events() {
    let options = TraceOptions { blkparse_event: Some(BlkparseEvent::Queue), ..options(TraceFormat::Blkparse) };
    assert_eq!(
        requests("blkparse.txt", &options),
        [
            req(0, false, 223490, 8),
            req(PS_PER_MS, true, 1000, 16),
            flush(2 * PS_PER_MS),
            trim(3 * PS_PER_MS, 5000, 64),
            req(4 * PS_PER_MS, true, 4096, 32)
        ]
    );
}

#[test]
fn fio_v2_has_no_timestamps_only_waits() {
    let (reader, got) = read_all(&fixture("fio-v2.log"), &options(TraceFormat::Fio));
    // write 0..4096 B, wait 500 us, read 8192..16384 B, trim 0..4096 B, sync, write 1 MiB + 512 B
    let at = 500 * PS_PER_US;
    assert_eq!(got, [req(0, false, 0, 8), req(at, true, 16, 16), trim(at, 0, 8), flush(at), req(at, false, 2048, 1)]);
    assert_eq!(reader.skipped.zero_size, 0);
}

#[test]
fn fio_v2_requests_can_be_spaced_by_a_gap() {
    let options = TraceOptions { arrival_gap: Some(10 * PS_PER_US), ..options(TraceFormat::Fio) };
    // The gap counts every request record (trim and sync too): the last write is the fifth.
    assert_eq!(
        requests("fio-v2.log", &options),
        [
            req(0, false, 0, 8),
            req(510 * PS_PER_US, true, 16, 16),
            trim(520 * PS_PER_US, 0, 8),
            flush(530 * PS_PER_US),
            req(540 * PS_PER_US, false, 2048, 1)
        ]
    );
}

#[test]
fn fio_v3_timestamps_are_microseconds() {
    let (_, got) = read_all(&fixture("fio-v3.log"), &options(TraceFormat::Fio));
    assert_eq!(
        got,
        [
            req(0, false, 8, 8),
            req(500 * PS_PER_US, true, 0, 128),
            flush(1500 * PS_PER_US),
            req(2 * PS_PER_MS, false, 16, 8)
        ]
    );
}

#[test]
fn alibaba_offsets_are_bytes_and_times_microseconds() {
    let (reader, got) = read_all(&fixture("alibaba.csv"), &options(TraceFormat::Alibaba));
    assert_eq!(got, [req(0, false, 8792731648 / 512, 32), req(33 * PS_PER_US, true, 8, 8), req(PS_PER_MS, true, 0, 1)]);
    assert_eq!(reader.skipped.zero_size, 1);
    assert_eq!(reader.warnings("a"), ["flow a: 1 records of size zero were skipped"]);
}

#[test]
fn tencent_offsets_are_sectors_and_times_seconds() {
    assert_eq!(
        requests("tencent.csv", &options(TraceFormat::Tencent)),
        [
            req(0, false, 2289302, 8),
            req(0, true, 1000, 16),
            req(PS_PER_S, true, 64, 8),
            req(3 * PS_PER_S, false, 2289310, 8)
        ]
    );
}

// ---- sniffing ----

#[test]
fn every_format_is_recognised_from_its_first_lines() {
    for (name, format) in [
        ("mqsim.trace", TraceFormat::Mqsim),
        ("msr.csv", TraceFormat::Msr),
        ("spc.csv", TraceFormat::Spc),
        ("blkparse.txt", TraceFormat::Blkparse),
        ("fio-v2.log", TraceFormat::Fio),
        ("fio-v3.log", TraceFormat::Fio),
        ("alibaba.csv", TraceFormat::Alibaba),
        ("tencent.csv", TraceFormat::Tencent),
    ] {
        let (reader, sniffed) = read_all(&fixture(name), &TraceOptions::default());
        assert_eq!(reader.format(), format, "{name}");
        assert_eq!(sniffed, requests(name, &options(format)), "{name}: sniffed and named formats read alike");
    }
}

#[test]
fn an_unrecognised_file_is_an_error_at_format_listing_the_formats() {
    let t = Temp::new("unknown.txt", "hello world\nthis is not a trace\n");
    let Err(OpenError::Option { field, reason }) = TraceReader::open(&t.0, &TraceOptions::default(), BIG) else {
        panic!("accepted");
    };
    assert_eq!(field, "format");
    assert!(reason.contains("unknown.txt"), "{reason}");
    assert!(reason.contains("mqsim, msr, spc, blkparse, fio, alibaba, tencent"), "{reason}");
}

#[test]
fn a_malformed_line_among_the_first_is_reported_by_the_sniffed_format() {
    let t = Temp::new("early.csv", "419,W,0,4096,1000\n419,X,0,4096,2000\n");
    let mut reader = TraceReader::open(&t.0, &TraceOptions::default(), BIG).unwrap();
    assert_eq!(reader.format(), TraceFormat::Alibaba);
    reader.next_request().unwrap();
    let e = reader.next_request().unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.reason.contains("opcode is \"X\""), "{e}");
}

// ---- filters ----

#[test]
fn device_filter_keeps_one_disk() {
    let options = TraceOptions { device: Some("1".into()), ..options(TraceFormat::Msr) };
    // the kept request arrives at 0: replay starts with the first kept record
    assert_eq!(requests("msr.csv", &options), [req(0, true, 8, 8)]);
    let options = TraceOptions { device: Some("8,16".into()), ..TraceOptions::default() };
    assert_eq!(requests("blkparse.txt", &options), [req(0, true, 1000, 16)]);
    let options = TraceOptions { device: Some("27".into()), ..TraceOptions::default() };
    assert_eq!(requests("alibaba.csv", &options), [req(0, true, 0, 1)]);
}

#[test]
fn device_filter_that_matches_nothing_names_the_devices_seen() {
    let options = TraceOptions { device: Some("9".into()), ..options(TraceFormat::Tencent) };
    let mut reader = TraceReader::open(&fixture("tencent.csv"), &options, BIG).unwrap();
    let e = reader.next_request().unwrap_err();
    assert!(e.reason.contains("no record has device \"9\""), "{e}");
    assert!(e.reason.contains("\"1283\", \"77\""), "{e}");
}

#[test]
fn ops_filter_keeps_reads_or_writes() {
    let reads = TraceOptions { ops: TraceOps::Read, ..options(TraceFormat::Tencent) };
    assert_eq!(requests("tencent.csv", &reads), [req(0, true, 1000, 16), req(PS_PER_S, true, 64, 8)]);
    let writes = TraceOptions { ops: TraceOps::Write, device: Some("1283".into()), ..options(TraceFormat::Tencent) };
    assert_eq!(requests("tencent.csv", &writes), [req(0, false, 2289302, 8), req(3 * PS_PER_S, false, 2289310, 8)]);
}

#[test]
fn time_window_is_in_trace_time_and_end_is_exclusive() {
    let window = TraceOptions { start: PS_PER_S, end: Some(3 * PS_PER_S), ..options(TraceFormat::Tencent) };
    assert_eq!(requests("tencent.csv", &window), [req(0, true, 64, 8)]);
    let from = TraceOptions { start: 2 * PS_PER_MS, ..options(TraceFormat::Msr) };
    assert_eq!(requests("msr.csv", &from), [req(0, true, 8, 8), req(PS_PER_S - 2 * PS_PER_MS, false, 0, 3)]);
}

#[test]
fn time_scale_stretches_the_gaps() {
    let half = TraceOptions { time_scale: 0.5, ..options(TraceFormat::Msr) };
    let arrivals: Vec<u64> = requests("msr.csv", &half).iter().map(|r| r.arrival).collect();
    assert_eq!(arrivals, [0, PS_PER_MS / 2, PS_PER_MS, PS_PER_S / 2]);
}

// ---- addresses ----

#[test]
fn addresses_beyond_the_device_wrap_with_one_warning_that_counts_them() {
    // 1 GiB of sectors: the Alibaba request at 8.2 GB wraps, the others fit.
    let mut reader = TraceReader::open(&fixture("alibaba.csv"), &options(TraceFormat::Alibaba), 1 << 21).unwrap();
    let got = (&mut reader).collect::<Result<Vec<_>, _>>().unwrap();
    assert_eq!(got[0].start_sector, (8792731648 / 512) % (1 << 21));
    assert_eq!(reader.wrapped, 1);
    let warnings = reader.warnings("ali");
    let wraps: Vec<_> = warnings.iter().filter(|w| w.contains("wrapped")).collect();
    assert_eq!(wraps, ["flow ali: 1 requests addressed sectors beyond the 2097152 sectors the flow addresses and were wrapped modulo that capacity"]);
}

// ---- malformed lines ----

#[test]
fn a_malformed_line_names_file_line_and_the_expected_layout() {
    let cases = [
        (TraceFormat::Mqsim, "0 0 0 8 1\n1000 0 8 8\n", "found 4 columns; expected 5 columns separated by spaces"),
        (TraceFormat::Msr, "1,h,0,Read,0,512,1\n2,h,0,Erase,0,512,1\n", "Type is \"Erase\", expected Read or Write; expected 7 comma-separated columns: Timestamp(Windows filetime, 100 ns ticks)"),
        (TraceFormat::Spc, "0,1,512,r,0.1\n0,1,512,r,soon\n", "Timestamp is \"soon\", not a time in seconds like 12.345; expected at least 5 comma-separated columns: ASU,LBA(512 B blocks)"),
        (TraceFormat::Blkparse, "  8,0 0 1 0.1 5 D W 8 + 8 [a]\n  8,0 0 2 0.2 5 D W 8 8 [a]\n", "needs `sector + blocks` after RWBS, found \"8 8 [a]\"; expected blkparse's default output"),
        (TraceFormat::Fio, "fio version 3 iolog\n5 /dev/a read 0 512\n9 /dev/a wait 10 0\n", "`wait` is not allowed in a version 3 iolog"),
        (TraceFormat::Alibaba, "1,R,0,512,10\n1,R,0,512\n", "found 4 columns; expected 5 comma-separated columns: device_id,opcode(R|W)"),
        (TraceFormat::Tencent, "1,0,8,0,3\n1,0,8,2,3\n", "IOType must be 0 (read) or 1 (write), got 2; expected 5 comma-separated columns: Timestamp(seconds)"),
    ];
    for (format, text, expected) in cases {
        let t = Temp::new(&format!("bad-{}.txt", format.name()), text);
        let mut reader = TraceReader::open(&t.0, &options(format), BIG).unwrap();
        let e = loop {
            match reader.next_request() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("{}: no error", format.name()),
                Err(e) => break e,
            }
        };
        let message = e.to_string();
        let line = if format == TraceFormat::Fio { 3 } else { 2 };
        assert!(message.starts_with(&format!("{}:{line}: ", t.0.display())), "{message}");
        assert!(message.contains(expected), "{}: {message}", format.name());
        assert!(message.ends_with(&format!("({} format)", format.name())), "{message}");
    }
}

#[test]
fn a_fio_log_without_its_header_is_an_error_on_line_one() {
    let t = Temp::new("noheader.log", "/dev/a read 0 512\n");
    let Err(OpenError::Trace(e)) = TraceReader::open(&t.0, &options(TraceFormat::Fio), BIG) else { panic!() };
    assert_eq!(e.line, 1);
    assert!(e.reason.contains("the first line must be the header `fio version 2 iolog`"), "{e}");
}

// ---- options that do not apply ----

#[test]
fn options_that_do_not_fit_the_format_name_their_field() {
    let missing = TraceReader::open(&fixture("no-such.csv"), &TraceOptions::default(), BIG);
    assert!(matches!(missing, Err(OpenError::Option { field: "path", .. })));
    let gap = TraceOptions { arrival_gap: Some(PS_PER_US), ..TraceOptions::default() };
    let Err(OpenError::Option { field, reason }) = TraceReader::open(&fixture("msr.csv"), &gap, BIG) else { panic!() };
    assert_eq!(field, "arrival_gap");
    assert!(reason.contains("read as msr, which has timestamps"), "{reason}");
    let Err(OpenError::Option { field, .. }) = TraceReader::open(&fixture("fio-v3.log"), &gap, BIG) else { panic!() };
    assert_eq!(field, "arrival_gap");
    let event = TraceOptions { blkparse_event: Some(BlkparseEvent::Queue), ..TraceOptions::default() };
    let Err(OpenError::Option { field, .. }) = TraceReader::open(&fixture("spc.csv"), &event, BIG) else { panic!() };
    assert_eq!(field, "blkparse_event");
}

// ---- the config ----

fn flow_error(flow: &str) -> (String, String) {
    let text = format!("{SMALL_DEVICE}\n[[flows]]\nqueue_depth = 1\nrequests = 1\n[[flows]]\n{flow}");
    match Config::from_toml_str(&text) {
        Err(e) => (e.path, e.reason),
        Ok(_) => panic!("accepted: {flow}"),
    }
}

#[test]
fn config_errors_name_the_trace_field() {
    let trace = "kind = \"trace\"\npath = \"t.csv\"\n";
    let (path, reason) = flow_error(&format!("{trace}format = \"csv\"\n"));
    assert_eq!(path, "flows[1].format");
    assert!(
        reason.contains("unknown variant `csv`") && reason.contains("`msr`") && reason.contains("`tencent`"),
        "{reason}"
    );
    let (path, reason) = flow_error(&format!("{trace}start = \"10s\"\nend = \"5s\"\n"));
    assert_eq!(path, "flows[1].end");
    assert!(reason.contains("must be after start"), "{reason}");
    assert_eq!(flow_error(&format!("{trace}end = \"0s\"\n")).0, "flows[1].end");
    assert_eq!(flow_error(&format!("{trace}ops = \"trim\"\n")).0, "flows[1].ops");
    assert_eq!(flow_error(&format!("{trace}format = \"msr\"\narrival_gap = \"1us\"\n")).0, "flows[1].arrival_gap");
    assert_eq!(flow_error(&format!("{trace}format = \"fio\"\nblkparse_event = \"Q\"\n")).0, "flows[1].blkparse_event");
    let (path, reason) = flow_error("queue_depth = 1\nrequests = 1\ndevice = 3\n");
    assert_eq!(
        (path.as_str(), reason.as_str()),
        ("flows[1].device", "is only valid for trace flows (kind = \"trace\")")
    );
}

#[test]
fn a_trace_flow_runs_end_to_end_with_filters_and_reports_skips() {
    let text = format!(
        "{SMALL_DEVICE}\n[[flows]]\nname = \"blk\"\nkind = \"trace\"\npath = \"tests/fixtures/traces/blkparse.txt\"\ndevice = \"8,0\"\n"
    );
    let mut sim = Simulation::from_toml_str(&text, &repo_root()).unwrap();
    let results = sim.run().unwrap();
    // device 8,0 dispatches: a 4 KiB write and a 16 KiB read-ahead
    assert_eq!((results.flows[0].reads.count, results.flows[0].writes.count), (1, 1));
    assert_eq!(results.flows[0].reads.bytes + results.flows[0].writes.bytes, 20 * 1024);
    // The flush and the trim are replayed (not counted as reads or writes), and skip nothing.
    let warnings = &results.warnings;
    assert!(warnings.iter().all(|w| !w.contains("trim") && !w.contains("flush")), "{warnings:?}");
    assert_eq!(results.flows[0].requests, 4);
}

#[test]
fn an_unrecognised_trace_is_a_config_error_at_the_flows_format() {
    let t = Temp::new("mystery.dat", "a b c\n");
    let text = format!("{SMALL_DEVICE}\n[[flows]]\nkind = \"trace\"\npath = \"{}\"\n", t.0.display());
    let Err(SimError::Config(e)) = Simulation::from_toml_str(&text, &repo_root()) else { panic!("accepted") };
    assert_eq!(e.path, "flows[0].format");
    assert!(e.reason.contains("mystery.dat"), "{}", e.reason);
}
