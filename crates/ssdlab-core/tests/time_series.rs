//! Per-window time series, latency CDFs and per-request records agree with the run's totals.

mod common;

use common::{repo_root, run, SMALL_DEVICE};
use ssdlab_core::stats::records::{HEADER_BYTES, MAGIC, RECORD_BYTES};
use ssdlab_core::{Config, Simulation};

/// A reader and a writer with GC running (the small device, 90 % full and aged).
fn mixed(extra_run: &str) -> String {
    format!(
        r#"{SMALL_DEVICE}
[precondition]
mode = "fill"
occupancy = 0.9
layout = "spread"
[run]
{extra_run}
[[flows]]
name = "reader"
read_fraction = 1.0
queue_depth = 4
requests = 3000
[[flows]]
name = "writer"
read_fraction = 0.0
queue_depth = 2
requests = 3000
"#
    )
}

#[test]
fn time_series_completions_add_up_to_the_request_counts() {
    let r = run(&mixed(""));
    let ts = r.time_series.as_ref().expect("time series present");
    assert!(ts.adaptive);
    let n = ts.start_seconds.len();
    assert!((1..=512).contains(&n), "{n} windows");
    for (flow, series) in r.flows.iter().zip(&ts.flows) {
        assert_eq!(series.name, flow.name);
        assert_eq!(series.reads.count.iter().sum::<u64>(), flow.reads.count, "{} reads", flow.name);
        assert_eq!(series.writes.count.iter().sum::<u64>(), flow.writes.count, "{} writes", flow.name);
        assert_eq!(series.reads.bytes.iter().sum::<u64>(), flow.reads.bytes);
        assert_eq!(series.writes.count.len(), n);
    }
    assert_eq!(ts.device.reads.count.iter().sum::<u64>(), r.device.reads.count);
    assert_eq!(ts.device.writes.count.iter().sum::<u64>(), r.device.writes.count);
    // Windows tile the run.
    let covered: f64 = ts.duration_seconds.iter().sum();
    assert!((covered - r.simulated_seconds).abs() <= ts.window_seconds, "{covered} vs {}", r.simulated_seconds);
    // A window's p99 lies between its mean's neighbourhood and its max, within the stated precision.
    for (i, p99) in ts.device.reads.p99_us.iter().enumerate() {
        if let (Some(p99), Some(max)) = (p99, ts.device.reads.max_us[i]) {
            assert!(*p99 <= max + 1e-9, "window {i}: p99 {p99} above max {max}");
        }
    }
}

#[test]
fn gc_series_adds_up_to_the_run_totals() {
    let r = run(&mixed(""));
    let gc = &r.time_series.as_ref().unwrap().gc;
    assert!(r.device.gc.blocks_erased > 0, "the test needs GC");
    assert_eq!(gc.blocks_erased.iter().sum::<u64>(), r.device.gc.blocks_erased);
    assert_eq!(gc.pages_moved.iter().sum::<u64>(), r.device.gc.pages_moved);
    let host: u64 = gc.host_pages_written.iter().sum();
    let flash: u64 = gc.flash_pages_programmed.iter().sum();
    assert!((flash as f64 / host as f64 - r.device.gc.write_amplification).abs() < 1e-9);
    for (i, wa) in gc.write_amplification.iter().enumerate() {
        match wa {
            Some(wa) => assert!(*wa >= 1.0, "window {i}: write amplification {wa}"),
            None => assert_eq!(gc.host_pages_written[i], 0),
        }
    }
}

#[test]
fn an_explicit_window_is_kept() {
    let r = run(&mixed("time_series_window = \"10ms\""));
    let ts = r.time_series.as_ref().unwrap();
    assert!(!ts.adaptive);
    assert_eq!(ts.window_seconds, 0.01, "{} s, {:?}", r.simulated_seconds, r.warnings);
    assert_eq!(ts.start_seconds.len(), (r.simulated_seconds / 0.01).floor() as usize + 1);
    assert_eq!(ts.start_seconds[1], 0.01);
}

#[test]
fn a_tiny_explicit_window_is_widened_with_a_warning() {
    let r = run(&mixed("time_series_window = \"1ns\""));
    let ts = r.time_series.as_ref().unwrap();
    assert!(ts.start_seconds.len() <= 4096);
    assert!(r.warnings.iter().any(|w| w.starts_with("run.time_series_window")), "{:?}", r.warnings);
}

#[test]
fn latency_cdf_is_monotone_and_ends_at_the_maximum() {
    let r = run(&mixed(""));
    for flow in &r.flows {
        for op in [&flow.reads, &flow.writes] {
            let cdf = &op.latency_cdf;
            if op.count == 0 {
                assert!(cdf.latency_us.is_empty() && cdf.fraction.is_empty());
                continue;
            }
            assert_eq!(cdf.latency_us.len(), cdf.fraction.len());
            assert!(cdf.latency_us.windows(2).all(|w| w[0] <= w[1]), "{}: latencies not monotone", flow.name);
            assert!(cdf.fraction.windows(2).all(|w| w[0] < w[1]));
            assert_eq!(*cdf.fraction.last().unwrap(), 1.0);
            assert_eq!(*cdf.latency_us.last().unwrap(), op.latency_us.max);
            let p99 = cdf.fraction.iter().position(|&f| f == 0.99).unwrap();
            assert_eq!(cdf.latency_us[p99], op.latency_us.p99);
        }
    }
}

fn records_run(setting: &str, name: &str) -> (ssdlab_core::Results, Vec<u8>) {
    let text = mixed(&format!("request_records = {setting}"));
    let config = Config::from_toml_str(&text).unwrap();
    let echo = serde_json::to_value(&config).unwrap();
    let mut sim = Simulation::new(config, &repo_root(), echo).unwrap();
    let dir = std::env::temp_dir().join(format!("ssdlab-records-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("requests.bin");
    sim.write_request_records_to(&path).unwrap();
    let results = sim.run().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    (results, bytes)
}

#[test]
fn all_requests_are_recorded_with_their_breakdown() {
    let (r, bytes) = records_run("\"all\"", "all");
    assert_eq!(&bytes[..8], MAGIC);
    let total = r.device.reads.count + r.device.writes.count;
    assert_eq!(bytes.len(), HEADER_BYTES + total as usize * RECORD_BYTES);
    let summary = r.request_records.as_ref().unwrap();
    assert_eq!((summary.records, summary.file.as_str()), (total, "requests.bin"));
    // Every record's steps add up to its latency, and the mean latency matches the results.
    let mut sum_latency_ps: u128 = 0;
    for rec in bytes[HEADER_BYTES..].chunks(RECORD_BYTES) {
        let u64_at = |i: usize| u64::from_le_bytes(rec[i..i + 8].try_into().unwrap());
        let latency = u64_at(8);
        let steps: u64 = (0..11).map(|k| u64_at(32 + 8 * k)).sum();
        assert_eq!(steps, latency);
        sum_latency_ps += latency as u128;
    }
    let mean_us = sum_latency_ps as f64 / total as f64 / 1e6;
    let expected = (r.device.reads.latency_us.mean * r.device.reads.count as f64
        + r.device.writes.latency_us.mean * r.device.writes.count as f64)
        / total as f64;
    assert!((mean_us - expected).abs() < 1e-6 * expected, "{mean_us} vs {expected}");
}

#[test]
fn sampled_records_are_about_the_fraction_and_deterministic() {
    let (r, first) = records_run("0.25", "a");
    let (_, second) = records_run("0.25", "b");
    assert_eq!(first, second, "same config and seed, same records");
    let total = (r.device.reads.count + r.device.writes.count) as f64;
    let recorded = ((first.len() - HEADER_BYTES) / RECORD_BYTES) as f64;
    assert!((recorded / total - 0.25).abs() < 0.03, "{recorded} of {total}");
    assert_eq!(r.request_records.as_ref().unwrap().records as f64, recorded);
}

#[test]
fn records_without_a_file_are_a_warning_not_an_error() {
    let r = run(&mixed("request_records = \"all\""));
    assert!(r.request_records.is_none());
    assert!(r.warnings.iter().any(|w| w.starts_with("run.request_records")), "{:?}", r.warnings);
}

#[test]
fn bad_run_output_settings_name_the_field() {
    for (setting, path, reason) in [
        ("request_records = 1.5", "run.request_records", "fraction in (0, 1]"),
        ("request_records = 0", "run.request_records", "fraction in (0, 1]"),
        ("request_records = \"some\"", "run.request_records", "got \"some\""),
        ("time_series_window = \"0ns\"", "run.time_series_window", "at least 1ns"),
        ("time_series_window = \"10\"", "run.time_series_window", "expected a duration"),
    ] {
        let e = Config::from_toml_str(&mixed(setting)).expect_err(setting);
        assert_eq!(e.path, path, "{setting}: {e}");
        assert!(e.reason.contains(reason), "{setting}: {e}");
    }
}
