//! Data transfer emulation: with `[data] emulate`, every host read returns what the host last
//! wrote, through GC, static wear leveling, the data cache and the cached mapping table, and a
//! corrupted page is caught; timing does not change.

mod common;

use common::{repo_root, run};
use ssdlab_core::{Results, SimError, Simulation};

/// A small device under GC pressure: 1 channel x 2 chips x 2 planes x 32 blocks x 16 pages of
/// 4 KiB, 15 % over-provisioning, static wear leveling at a low threshold, a CMT of a few entries.
const DEVICE: &str = r#"
seed = 11
[flash]
channels = 1
chips_per_channel = 2
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 32
pages_per_block = 16
page_size = "4KiB"
[ftl]
over_provisioning = 0.15
static_wear_leveling_threshold = 4
cmt_capacity = "256B"
[precondition]
mode = "none"
[data]
emulate = true
"#;

fn data(r: &Results) -> &ssdlab_core::data::DataSummary {
    r.data.as_ref().expect("results.json has data with data.emulate")
}

fn read_sectors(r: &Results) -> u64 {
    r.device.reads.bytes / 512
}

#[test]
fn every_read_returns_the_last_write_through_gc_and_wear_leveling() {
    let flow = r#"
[[flows]]
read_fraction = 0.4
request_size = { mean = "6KiB", stdev = "4KiB" }
queue_depth = 1
requests = 6000
"#;
    let r = run(&format!("{DEVICE}{flow}"));
    let d = data(&r);
    assert!(r.device.gc.pages_moved > 1000, "GC moved {} pages", r.device.gc.pages_moved);
    assert!(r.device.wear.static_wear_leveling_migrations > 0);
    assert_eq!(d.mismatched_sectors, 0, "{:?}", d.first_mismatch);
    assert!(d.first_mismatch.is_none());
    // One request at a time: every read is defined and checked.
    assert_eq!(d.skipped_sectors, 0);
    assert_eq!(d.verified_sectors, read_sectors(&r));
    assert!(d.stored_pages > 0 && d.spilled_pages == 0);
    assert!(r.warnings.iter().all(|w| !w.contains("data emulation")), "{:?}", r.warnings);
}

#[test]
fn cached_writes_partial_pages_and_concurrent_flows_read_back_right() {
    // A write cache smaller than the data, partial-page writes (read-modify-write of cached lines
    // and of flash pages), a second flow writing the same addresses straight to flash, and writes
    // larger than the cache that bypass it.
    let flows = common::cached_and_direct_flows(5000, "")
        + r#"
[[flows]]
cache_mode = "write"
read_fraction = 0.3
request_size = "96KiB"
queue_depth = 1
requests = 300
"#;
    let r = run(&format!("{DEVICE}{flows}"));
    let d = data(&r);
    assert!(r.flows[0].cache.read_hits > 0, "the cache served reads");
    assert!(r.device.cache.flushes > 0);
    assert_eq!(d.mismatched_sectors, 0, "{:?}", d.first_mismatch);
    assert_eq!(d.verified_sectors + d.skipped_sectors, read_sectors(&r));
    // Concurrent writes leave some reads undefined, but most are checked.
    assert!(d.verified_sectors > 9 * read_sectors(&r) / 10, "{d:?}");
}

#[test]
fn a_corrupted_page_is_reported_with_its_lba_and_physical_page() {
    // A trace: write LBAs 0..64 (8 pages), then read them back a second later.
    let dir = std::env::temp_dir().join(format!("ssdlab-data-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut trace = String::new();
    for page in 0..8u64 {
        trace.push_str(&format!("{} 0 {} 8 0\n", page * 1000, page * 8));
    }
    for page in 0..8u64 {
        trace.push_str(&format!("{} 0 {} 8 1\n", 1_000_000_000 + page * 1000, page * 8));
    }
    std::fs::write(dir.join("trace.txt"), trace).unwrap();
    let text = format!("{DEVICE}\n[[flows]]\nkind = \"trace\"\npath = \"trace.txt\"\nformat = \"mqsim\"\n");
    let clean = Simulation::from_toml_str(&text, &dir).unwrap().run().unwrap();
    assert_eq!(data(&clean).verified_sectors, 64);
    assert_eq!(data(&clean).mismatched_sectors, 0);

    let mut sim = Simulation::from_toml_str(&text, &dir).unwrap();
    while sim.simulated_time() < 500_000_000_000 {
        assert!(!sim.step(1).unwrap(), "the run ended before the reads");
    }
    // LBA 21 is sector 5 of logical page 2.
    assert!(sim.corrupt_stored_sector_for_test(21));
    let r = sim.run().unwrap();
    let d = data(&r);
    assert_eq!((d.verified_sectors, d.mismatched_sectors), (63, 1));
    let m = d.first_mismatch.as_ref().expect("the mismatch is reported");
    assert_eq!((m.lba, m.source.as_str(), m.flow.as_str()), (21, "flash", "flow-0"));
    assert!(m.ppa.is_some());
    assert_eq!(m.expected, "the data of LBA 21 from write version 3");
    assert_eq!(m.found, "the data of LBA 21 from write version 3, corrupted");
    assert!(
        r.warnings.iter().any(|w| w.contains("1 read sectors did not hold what the host last wrote")),
        "{:?}",
        r.warnings
    );
    // The bytes the device returns now: the corrupted sector differs, its neighbours do not.
    let mut sim = Simulation::from_toml_str(&text, &dir).unwrap();
    sim.run().unwrap();
    let good = sim.read_back(16, 8).unwrap();
    assert!(sim.corrupt_stored_sector_for_test(21));
    let bad = sim.read_back(16, 8).unwrap();
    assert_eq!(good.len(), 8 * 512);
    assert_eq!(good[..5 * 512], bad[..5 * 512]);
    assert_ne!(good[5 * 512..6 * 512], bad[5 * 512..6 * 512]);
    assert_eq!(good[..8], 16u64.to_le_bytes(), "a sector starts with its LBA");
    assert_eq!(sim.read_back(200, 2).unwrap(), vec![0; 1024], "never written: zeros");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn pages_beyond_the_memory_limit_spill_to_a_file_and_still_read_back() {
    // Sector-aligned 8 KiB requests (three pages at most): partial pages fill the store.
    let flow =
        "[[flows]]\nread_fraction = 0.4\nrequest_size = \"8KiB\"\nalignment = \"512B\"\nqueue_depth = 1\nrequests = 4000\n";
    let text = format!("{DEVICE}{flow}").replace("emulate = true", "emulate = true\nmemory_limit = \"64KiB\"");
    let r = run(&text);
    let d = data(&r);
    assert!(d.spilled_pages > 100, "{d:?}");
    assert_eq!(d.stored_pages - d.spilled_pages, 16, "16 pages of 4 KiB in memory");
    assert!(d.memory_bytes <= 64 * 1024);
    assert_eq!(d.mismatched_sectors, 0, "{:?}", d.first_mismatch);
    assert_eq!(d.verified_sectors, read_sectors(&r));
}

#[test]
fn emulation_changes_no_timing_and_off_reports_nothing() {
    let flow = "[[flows]]\ncache_mode = \"write\"\nread_fraction = 0.5\nrequest_size = \"6KiB\"\nqueue_depth = 8\nrequests = 3000\n";
    let on = run(&format!("{DEVICE}[cache]\ncapacity = \"32KiB\"\n{flow}"));
    let off =
        run(&format!("{DEVICE}[cache]\ncapacity = \"32KiB\"\n{flow}").replace("emulate = true", "emulate = false"));
    assert!(off.data.is_none());
    let strip = |r: &Results| {
        let mut v = serde_json::to_value(r).unwrap();
        let o = v.as_object_mut().unwrap();
        for key in ["wall_seconds", "setup_wall_seconds", "config", "data", "precondition"] {
            o.remove(key);
        }
        v
    };
    assert_eq!(strip(&on), strip(&off));
    let json = serde_json::to_value(&on).unwrap();
    for key in
        ["verified_sectors", "mismatched_sectors", "skipped_sectors", "stored_pages", "spilled_pages", "first_mismatch"]
    {
        assert!(json["data"].get(key).is_some(), "results.json data.{key}");
    }
    assert!(serde_json::to_value(&off).unwrap().get("data").is_none());
}

#[test]
fn bad_data_settings_are_rejected_naming_the_field() {
    let flow = "[[flows]]\nqueue_depth = 1\nrequests = 10\n";
    let error = |text: String| match Simulation::from_toml_str(&text, &repo_root()) {
        Err(SimError::Config(e)) => e,
        Err(e) => panic!("expected a config error, got {e}"),
        Ok(_) => panic!("accepted: {text}"),
    };
    let e = error(format!("{DEVICE}{flow}").replace("emulate = true", "emulate = true\nmemory_limit = \"1KiB\""));
    assert_eq!(e.path, "data.memory_limit");
    assert!(e.reason.contains("at least one page"), "{}", e.reason);
    let e =
        error(format!("{DEVICE}{flow}").replace("emulate = true", "emulate = true\nspill_dir = \"no/such/folder\""));
    assert_eq!(e.path, "data.spill_dir");
    assert!(e.reason.contains("is not a folder"), "{}", e.reason);
    let e = error(format!("{DEVICE}{flow}").replace("emulate = true", "emulate = \"yes\""));
    assert_eq!(e.path, "data.emulate");
    let e = error(format!("{DEVICE}{flow}").replace("emulate = true", "emulate = true\nverify = true"));
    assert!(e.path.starts_with("data"), "{e}");
    let e = error(format!("{DEVICE}{flow}").replace("emulate = true", "emulate = true\nmemory_limit = \"lots\""));
    assert_eq!(e.path, "data.memory_limit");
}
