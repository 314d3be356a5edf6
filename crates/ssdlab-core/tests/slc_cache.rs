//! The SLC write cache on QLC (`[flash.slc_cache]`): host writes land in blocks programmed one
//! bit per cell while the cache has room, then go to the QLC cells directly (the write cliff);
//! folding moves the cached data into QLC and erases the SLC blocks; the dynamic cache shrinks
//! as the drive fills, and the cliff comes sooner.

mod common;

use common::{example, repo_root, run};
use ssdlab_core::sim::{SimError, Simulation};
use ssdlab_core::stats::Results;

fn qlc(overrides: &[(&str, &str)]) -> Results {
    let mut text = example("qlc-slc-cache.toml");
    for (from, to) in overrides {
        assert!(text.contains(from), "{from}");
        text = text.replace(from, to);
    }
    run(&text)
}

/// MiB/s in the first window, MiB written before the bandwidth halves, MiB/s after that.
fn cliff(r: &Results) -> (f64, f64, f64) {
    let ts = r.time_series.as_ref().unwrap();
    let w = &ts.flows[0].writes;
    let first = w.bandwidth_mib_s[0];
    let at = w.bandwidth_mib_s.iter().position(|&b| b < 0.5 * first).expect("a cliff");
    let before: u64 = w.bytes[..at].iter().sum();
    let after_bytes: u64 = w.bytes[at + 4..].iter().sum();
    let after_seconds: f64 = ts.duration_seconds[at + 4..].iter().sum();
    (first, before as f64 / (1 << 20) as f64, after_bytes as f64 / (1 << 20) as f64 / after_seconds)
}

#[test]
fn sequential_writes_run_at_slc_speed_until_the_cache_fills_then_fall_to_qlc_speed() {
    let r = qlc(&[]);
    let (first, before, after) = cliff(&r);
    let c = r.slc_cache.as_ref().unwrap();
    assert!(first > 1000.0, "SLC speed {first:.0} MiB/s");
    assert!(after < 0.3 * first, "after the cliff {after:.0} MiB/s");
    // The cliff comes after most of the cache is written (folding starts at 75 %).
    let cache_mib = c.max_capacity_bytes as f64 / (1 << 20) as f64;
    assert!(before > 0.6 * cache_mib && before < 1.1 * cache_mib, "{before:.0} of {cache_mib:.0} MiB");
    assert!(c.host_bytes_to_dense > 0 && c.blocks_folded > 0 && c.bytes_folded > 0, "{c:?}");
    assert_eq!(c.host_bytes_to_slc + c.host_bytes_to_dense, r.device.writes.bytes);
    // Folding is flash work: it shows as moved pages.
    assert_eq!(r.device.gc.pages_moved * 16384, c.bytes_folded);
    let series = r.time_series.as_ref().unwrap().slc_cache.as_ref().unwrap();
    assert_eq!(*series.blocks_in_use.last().unwrap(), c.blocks_in_use_at_end as u64);
    assert_eq!(series.host_pages_to_slc.iter().sum::<u64>() * 16384, c.host_bytes_to_slc);
}

#[test]
fn the_dynamic_cache_shrinks_as_the_drive_fills_and_the_cliff_comes_sooner() {
    let empty = qlc(&[]);
    let full = qlc(&[("mode = \"none\"", "mode = \"fill\"\noccupancy = 0.85")]);
    let (_, before_empty, _) = cliff(&empty);
    let (_, before_full, _) = cliff(&full);
    assert!(before_full < 0.7 * before_empty, "{before_full:.0} vs {before_empty:.0} MiB");
    let (e, f) = (empty.slc_cache.unwrap(), full.slc_cache.unwrap());
    assert!(f.capacity_bytes_at_end < e.capacity_bytes_at_end, "{f:?}");
    // A static cache does not shrink.
    let fixed = qlc(&[
        ("mode = \"dynamic\"", "mode = \"static\""),
        ("blocks_per_plane = 80", "blocks_per_plane = 8"),
        ("mode = \"none\"", "mode = \"fill\"\noccupancy = 0.85"),
    ]);
    let s = fixed.slc_cache.unwrap();
    assert_eq!(s.capacity_bytes_at_end, s.max_capacity_bytes);
}

#[test]
fn slc_pages_read_and_program_at_slc_speed() {
    // Writes at QD 1 into an empty cache: each program is the SLC program time.
    let r = qlc(&[
        ("queue_depth = 32", "queue_depth = 1"),
        ("requests = 12000", "requests = 200"),
        ("request_size = \"128KiB\"", "request_size = \"16KiB\""),
        ("alignment = \"128KiB\"", "alignment = \"16KiB\""),
    ]);
    let cell = r.flows[0].writes.latency_breakdown_us.get("cell_operation").unwrap();
    assert!((cell - 150.0).abs() < 0.5, "SLC program {cell:.1} us");
    assert_eq!(r.slc_cache.unwrap().host_bytes_to_dense, 0);
}

#[test]
fn data_reads_back_through_the_cache_and_folding() {
    let text = example("qlc-slc-cache.toml")
        .replace("[precondition]\nmode = \"none\"", "[precondition]\nmode = \"fill\"\noccupancy = 0.5")
        .replace("requests = 12000", "requests = 3000")
        .replace("request_size = \"128KiB\"", "request_size = \"16KiB\"")
        .replace("alignment = \"128KiB\"", "alignment = \"16KiB\"")
        .replace("address = \"sequential\"", "address = \"uniform\"\nworking_set = 0.02")
        .replace("blocks_per_plane = 80", "blocks_per_plane = 4")
        + "[[flows]]\nread_fraction = 1.0\nrequest_size = \"16KiB\"\nalignment = \"16KiB\"\nworking_set = 0.02\nqueue_depth = 2\nrequests = 3000\n[data]\nemulate = true\n";
    let r = run(&text);
    let d = r.data.as_ref().unwrap();
    assert_eq!(d.mismatched_sectors, 0, "{:?}", d.first_mismatch);
    assert!(r.slc_cache.unwrap().blocks_folded > 0);
}

fn error(edit: (&str, &str)) -> String {
    let text = example("qlc-slc-cache.toml").replace(edit.0, edit.1);
    match Simulation::from_toml_str(&text, &repo_root()) {
        Err(SimError::Config(e)) => e.to_string(),
        Err(e) => panic!("not a config error: {e}"),
        Ok(_) => panic!("accepted: {edit:?}"),
    }
}

#[test]
fn bad_cache_settings_are_errors_naming_the_key() {
    let e = error(("blocks_per_plane = 80", "blocks_per_plane = 300"));
    assert!(e.contains("flash.slc_cache.blocks_per_plane"), "{e}");
    let e = error(("mode = \"dynamic\"", "mode = \"static\""));
    assert!(e.contains("flash.slc_cache.blocks_per_plane") && e.contains("over-provisioning"), "{e}");
    let e = error(("program = \"150us\"", "program = \"0us\""));
    assert!(e.contains("flash.slc_cache.program"), "{e}");
    let e = error(("[flash.slc_cache]\n", "[flash.slc_cache]\nfold_threshold = 1.5\n"));
    assert!(e.contains("flash.slc_cache.fold_threshold"), "{e}");
    let slc = example("qlc-slc-cache.toml")
        .replace("technology = \"QLC\"", "technology = \"SLC\"")
        .replace("read = { lsb = \"80us\", csb = \"100us\", msb = \"120us\", tsb = \"160us\" }", "read = \"25us\"")
        .replace(
            "program = { lsb = \"400us\", csb = \"600us\", msb = \"900us\", tsb = \"1400us\" }",
            "program = \"200us\"",
        );
    let e = match Simulation::from_toml_str(&slc, &repo_root()) {
        Err(SimError::Config(e)) => e.to_string(),
        _ => panic!("accepted"),
    };
    assert!(e.contains("flash.slc_cache") && e.contains("multi-bit"), "{e}");
}
