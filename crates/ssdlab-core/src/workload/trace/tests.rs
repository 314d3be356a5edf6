//! Unit tests of the reader's line handling; tests/trace_formats.rs and tests/trace_errors.rs
//! cover every format through the public API.

use super::sniff::choose;
use super::*;
use crate::time::PS_PER_NS;
use std::fs::File;
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
    assert_eq!(
        a,
        RequestSpec { arrival: 0, op: crate::device::Op::Read, start_sector: 16, sectors: 8, placement_handle: None }
    );
    let b = r.next_request().unwrap().unwrap();
    assert_eq!(
        b,
        RequestSpec {
            arrival: 2000 * PS_PER_NS,
            op: crate::device::Op::Write,
            start_sector: 32,
            sectors: 16,
            placement_handle: None
        }
    );
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
    // A bad line before the first record is found as the trace is opened.
    let open_error = |text: &str| {
        let file = TempTrace::new(text);
        let options = TraceOptions { format: TraceFormat::Mqsim, ..TraceOptions::default() };
        match TraceReader::open(&file.0, &options, 1 << 20) {
            Err(OpenError::Trace(e)) => e,
            other => panic!("{:?}", other.map(|_| ())),
        }
    };
    assert!(open_error("1000 0 16 8 2\n").reason.contains("type must be 0"));
    assert!(open_error("10x0 0 16 8 1\n").reason.contains("column 1"));
    let (_f, mut r) = mqsim("1000 0 16 8 1\n1000 0 16 8 2\n");
    r.next_request().unwrap();
    assert!(r.next_request().unwrap_err().reason.contains("type must be 0"));
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
