//! The models of issue 5 in combination (validation/feature_combinations.py sweeps more of
//! them in release builds). In a debug build `common::run` also checks the model's invariants
//! and its debug assertions, e.g. that a read joining a page being read ahead has steps adding
//! up to its latency.

mod common;

use common::run;
use ssdlab_core::Results;

/// A small MLC-class device (8 dies of 2 planes, 64 blocks of 64 8 KiB pages) with a writer
/// that caches its writes and reads, a random reader and a sequential reader that caches reads
/// (read-ahead needs one), and `options` (TOML sections) on top.
fn device(options: &str) -> String {
    common::fixture("feature_mix.toml") + options
}

/// The config with `ftl.mapping` set.
fn with_mapping(text: &str, mapping: &str) -> String {
    text.replace("[ftl]\n", &format!("[ftl]\nmapping = \"{mapping}\"\n"))
}

/// Every request completed, every read returned the host's data (with `[data] emulate`), and
/// the latency breakdowns add up.
fn check(label: &str, r: &Results) {
    assert_eq!(r.flows.iter().map(|f| f.requests).collect::<Vec<_>>(), [3000, 2000, 600], "{label}");
    for f in &r.flows {
        assert_eq!(f.reads.count + f.writes.count, f.requests, "{label}: {}", f.name);
    }
    if let Some(d) = &r.data {
        assert_eq!(d.mismatched_sectors, 0, "{label}: {d:?}");
        assert!(d.verified_sectors > 10_000, "{label}: {d:?}");
    }
    let groups = [(&r.device.reads, "device reads"), (&r.device.writes, "device writes")];
    let flows = r.flows.iter().flat_map(|f| [(&f.reads, "flow reads"), (&f.writes, "flow writes")]);
    for (op, what) in groups.into_iter().chain(flows) {
        if op.count == 0 {
            continue;
        }
        let total: f64 = op.latency_breakdown_us.0.iter().map(|(_, v)| v).sum();
        let mean = op.latency_us.mean;
        assert!((total - mean).abs() <= 1e-6 * mean, "{label}: {what} breakdown sums to {total}, mean {mean}");
    }
}

const READ_AHEAD: &str = "[cache]\ncapacity = \"8MiB\"\norganisation = \"set_associative\"\nways = 4\nline_size = \"8KiB\"\nread_ahead = true\n";

#[test]
fn banked_dram_with_read_ahead_under_each_mapping() {
    // A read joining a prefetch takes the prefetch's steps from when it joined; with the banked
    // DRAM a page read also spends time storing its data in a DRAM buffer (cache_dram).
    for mapping in ["page", "block", "hybrid", "super_page"] {
        let options = format!("{READ_AHEAD}[dram]\nmodel = \"banked\"\n[firmware]\nenabled = true\n");
        let r = run(&with_mapping(&device(&options), mapping));
        check(&format!("banked + read-ahead, {mapping}"), &r);
        assert!(r.device.cache.prefetch_waits > 0, "{mapping}: some reads join a prefetch");
    }
}

#[test]
fn read_ahead_with_data_emulation_on_each_interface() {
    // Prefetched pages carry their bytes into the cache; before, a prefetch of an unmapped page
    // left its "reads as zeros" mark behind for the next read that reused its transaction id.
    for interface in ["nvme", "sata", "ufs", "open_channel"] {
        let options = format!(
            "{READ_AHEAD}[data]\nemulate = true\n[power]\nenabled = true\n[host]\ninterface = \"{interface}\"\n"
        );
        let r = run(&device(&options));
        check(&format!("read-ahead + data, {interface}"), &r);
        assert!(r.device.cache.prefetches_issued > 0, "{interface}");
    }
}

#[test]
fn every_model_on_together() {
    for mapping in ["page", "hybrid"] {
        let options = format!(
            "{READ_AHEAD}[dram]\nmodel = \"banked\"\n[firmware]\nenabled = true\n[data]\nemulate = true\n[power]\nenabled = true\n[host]\ninterface = \"ufs\"\n"
        );
        let r = run(&with_mapping(&device(&options), mapping));
        check(&format!("everything on, {mapping}"), &r);
        assert!(r.energy.is_some() && r.firmware.is_some() && r.dram.is_some());
    }
}

/// A write that bypasses the cache (its flow does not cache writes) lands on pages a sequential
/// reader is reading ahead: the prefetched copy is older than flash once the write is placed.
#[test]
fn a_write_past_the_cache_during_a_read_ahead_does_not_leave_stale_data_cached() {
    let text = r#"
seed = 3
[flash]
channels = 2
chips_per_channel = 2
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 32
pages_per_block = 32
page_size = "8KiB"
[ftl]
over_provisioning = 0.2
[precondition]
mode = "none"
[cache]
capacity = "2MiB"
read_ahead = true
read_ahead_threshold = 2
[data]
emulate = true
[[flows]]
name = "streamer"
read_fraction = 1.0
address = "sequential"
request_size = "8KiB"
cache_mode = "read"
working_set = 0.01
queue_depth = 1
requests = 4000
[[flows]]
name = "overwriter"
read_fraction = 0.0
request_size = "8KiB"
alignment = "8KiB"
cache_mode = "off"
working_set = 0.01
queue_depth = 1
requests = 4000
"#;
    let r = run(text);
    let d = r.data.as_ref().unwrap();
    assert!(r.device.cache.prefetches_issued > 0);
    assert_eq!(d.mismatched_sectors, 0, "{:?}", d.first_mismatch);
}
