//! Background destaging of the write cache (`cache.destage = "background"`, the default): dirty
//! lines are written back between the dirty watermarks and while the host is idle, so a burst
//! finds clean lines to take and completes at DRAM speed.

mod common;

use std::path::PathBuf;

use common::SMALL_DEVICE;
use ssdlab_core::{Results, Simulation};

/// A 4 MiB cache (1024 lines of 4 KiB) on a DDR-class DRAM (a 4 KiB access takes about 0.3 us,
/// so a burst does not queue at the DRAM), the drive half full.
fn device(destage: &str) -> String {
    format!(
        "{SMALL_DEVICE}\n[precondition]\nmode = \"fill\"\noccupancy = 0.5\n[cache]\ncapacity = \"4MiB\"\n\
         dram_data_rate = \"1600MT/s\"\ndram_burst_bytes = 8\n{destage}\n"
    )
}

/// An MQSim-format trace: `count` 4 KiB writes from `first_page` on, one every 10 us (a 100 K
/// IOPS burst) from `start_ms`. A trace's time starts at its first record: one that starts
/// later first reads a page at time 0.
fn burst(start_ms: u64, first_page: u64, count: u64) -> String {
    let lead = if start_ms > 0 { format!("0 0 {} 8 1\n", first_page * 8) } else { String::new() };
    lead + &(0..count)
        .map(|i| format!("{} 0 {} 8 0\n", start_ms * 1_000_000 + i * 10_000, (first_page + i) * 8))
        .collect::<String>()
}

/// Runs `toml` with its traces (name, text) written to a fresh folder it is read from.
fn run_with_traces(name: &str, toml: &str, traces: &[(&str, String)]) -> Results {
    // Tests run in parallel: each run has its own folder.
    let tag: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let dir: PathBuf = std::env::temp_dir().join(format!("ssdlab-destaging-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in traces {
        std::fs::write(dir.join(file), text).unwrap();
    }
    let mut sim = Simulation::from_toml_str(toml, &dir).unwrap_or_else(|e| panic!("config rejected: {e}"));
    let results = sim.run().expect("run completes");
    sim.check_invariants().expect("invariants hold at the end");
    std::fs::remove_dir_all(&dir).ok();
    results
}

const TRACE_FLOWS: &str =
    "[[flows]]\nname = \"first\"\nkind = \"trace\"\npath = \"first.trace\"\ncache_mode = \"write\"\n\
     [[flows]]\nname = \"second\"\nkind = \"trace\"\npath = \"second.trace\"\ncache_mode = \"write\"\n";

/// Two bursts of 800 writes (smaller than the 1024-line cache), 500 ms apart, to different pages
/// (writing 800 pages back takes about 150 ms on this small drive's 8 planes).
fn two_bursts(destage: &str) -> Results {
    let toml = format!("{}\n{TRACE_FLOWS}", device(destage));
    let name = format!("bursts {destage}");
    run_with_traces(&name, &toml, &[("first.trace", burst(0, 0, 800)), ("second.trace", burst(500, 2000, 800))])
}

#[test]
fn a_burst_smaller_than_the_cache_completes_at_dram_speed_after_idle_time() {
    let background = two_bursts("");
    let when_full = two_bursts("destage = \"when-full\"");
    for r in [&background, &when_full] {
        // Into an empty cache, both modes take the first burst at DRAM speed.
        let first = &r.flows[0].writes.latency_us;
        assert!(first.max < 50.0, "first burst max {:.1} us", first.max);
    }
    // The first burst's lines were written back while the host was idle: the second burst takes
    // their place at once. Without background writing it waits for their flushes (a program
    // takes 750 us).
    let (bg, wf) = (&background.flows[1].writes.latency_us, &when_full.flows[1].writes.latency_us);
    assert!(bg.max < 50.0, "background: second burst max {:.1} us", bg.max);
    assert!(wf.max > 700.0 && wf.mean > 10.0 * bg.mean, "when-full: {:.1} us mean, {:.1} max", wf.mean, wf.max);
    let c = &background.device.cache;
    assert!(c.destaged_when_idle > 0 && c.destaged >= c.destaged_when_idle, "{c:?}");
    assert_eq!(when_full.device.cache.destaged, 0);
}

#[test]
fn dirty_data_drains_while_the_host_is_idle() {
    // One burst, then one read 100 ms later that keeps the run going through the idle time.
    let reader = "[[flows]]\nname = \"first\"\nkind = \"trace\"\npath = \"first.trace\"\ncache_mode = \"write\"\n\
                  [[flows]]\nname = \"late read\"\nkind = \"trace\"\npath = \"read.trace\"\n";
    let read = "0 0 0 8 1\n100000000 0 0 8 1\n".to_string();
    let run = |destage: &str| {
        let toml = format!("{}\n{reader}", device(destage));
        let name = format!("drain {destage}");
        run_with_traces(&name, &toml, &[("first.trace", burst(0, 0, 300)), ("read.trace", read.clone())])
    };
    // 300 dirty lines stay below the high watermark (512): only idleness writes them back.
    let background = run("");
    let c = &background.device.cache;
    assert_eq!((c.dirty_lines_at_end, c.destaged, c.destaged_when_idle), (0, 300, 300), "{c:?}");
    let when_full = run("destage = \"when-full\"");
    assert_eq!(when_full.device.cache.dirty_lines_at_end, 300);
    // Every dirty line reached flash while the host was idle.
    assert!(background.device.flash.programs >= 300);
    // A longer idle threshold than the gap leaves the data dirty.
    let patient = run("idle_destage_after = \"200ms\"");
    assert_eq!(patient.device.cache.dirty_lines_at_end, 300, "{:?}", patient.device.cache);
}

#[test]
fn the_high_watermark_starts_writing_back_and_the_low_one_stops_it() {
    // One burst of 800 writes, no idle time after it (the run ends with the burst).
    let toml = format!(
        "{}\n[[flows]]\nname = \"first\"\nkind = \"trace\"\npath = \"first.trace\"\ncache_mode = \"write\"\n",
        device("")
    );
    let r = run_with_traces("marks", &toml, &[("first.trace", burst(0, 0, 800))]);
    let c = &r.device.cache;
    // Past 512 dirty lines writing starts; it goes on (flushes keep completing during the 8 ms
    // burst) until the dirty lines are back at 256.
    assert!(c.destaged > 0 && c.destaged_when_idle == 0, "{c:?}");
    assert!(c.dirty_lines_at_end >= 256 && c.dirty_lines_at_end <= 800 - c.destaged, "{c:?}");
    let tight = run_with_traces(
        "tight",
        &toml.replace("[cache]", "[cache]\ndirty_high_watermark = 0.9\ndirty_low_watermark = 0.8"),
        &[("first.trace", burst(0, 0, 800))],
    );
    assert_eq!(tight.device.cache.destaged, 0, "800 dirty lines stay below a 0.9 high mark");
}

#[test]
fn destaging_keys_are_checked() {
    let err = |destage: &str| {
        let toml = format!("{}\n[[flows]]\ncache_mode = \"write\"\nrequests = 10\n", device(destage));
        match Simulation::from_toml_str(&toml, &common::repo_root()) {
            Ok(_) => panic!("accepted: {destage}"),
            Err(e) => e.to_string(),
        }
    };
    let e = err("dirty_high_watermark = 0.3\ndirty_low_watermark = 0.4");
    assert!(e.contains("cache.dirty_low_watermark") && e.contains("below"), "{e}");
    let e = err("dirty_high_watermark = 1.5");
    assert!(e.contains("cache.dirty_high_watermark"), "{e}");
    let e = err("destage = \"when-full\"\nidle_destage_after = \"5ms\"");
    assert!(e.contains("cache.idle_destage_after") && e.contains("background"), "{e}");
    let e = err("idle_destage_after = \"0ms\"");
    assert!(e.contains("cache.idle_destage_after") && e.contains("greater than zero"), "{e}");
    let e = err("destage_pages_in_flight = 0");
    assert!(e.contains("cache.destage_pages_in_flight"), "{e}");
}
