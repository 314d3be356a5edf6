//! Flexible Data Placement (`[ftl.fdp]`, NVMe TP4146): each flow's writes carry a reclaim unit
//! handle, data of different handles never shares a block, GC keeps a victim's handle, and the
//! FDP statistics log counts host and media bytes. Two flows with different data lifetimes (a
//! hot random writer beside a sequential one) write amplify far less on separate handles.

mod common;

use common::{flash, repo_root, run};
use ssdlab_core::sim::{SimError, Simulation};

/// A hot random writer over 10 % of the drive beside a writer over the next 70 %, on handles
/// `hot` and `cold`, on a drive filled to 80 %.
fn two_writers(hot: u32, cold: u32, cold_address: &str) -> String {
    format!(
        "seed = 2\n{}\n[ftl]\nideal_mapping = true\nover_provisioning = 0.15\ngc_policy = \"greedy\"\n\
         [ftl.fdp]\nreclaim_unit_handles = 4\n[precondition]\nmode = \"fill\"\noccupancy = 0.8\n\
         [[flows]]\nname = \"hot\"\nread_fraction = 0.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nworking_set = 0.1\nqueue_depth = 4\nrequests = 60000\nplacement_handle = {hot}\n\
         [[flows]]\nname = \"cold\"\nread_fraction = 0.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\naddress = \"{cold_address}\"\nworking_set = 0.7\nworking_set_start = 0.1\n\
         queue_depth = 4\nrequests = 60000\nplacement_handle = {cold}\n",
        flash([2, 2, 1, 2, 128, 64], "4KiB")
    )
}

#[test]
fn separate_handles_keep_a_sequential_stream_free_of_gc() {
    let mixed = run(&two_writers(1, 1, "sequential"));
    let separate = run(&two_writers(1, 2, "sequential"));
    let (m, s) = (mixed.fdp.as_ref().unwrap(), separate.fdp.as_ref().unwrap());
    let wa = |f: &ssdlab_core::ftl::fdp::FdpSummary| f.media_bytes_written as f64 / f.host_bytes_written as f64;
    assert!(wa(s) < 1.1 && wa(m) > 1.4, "separate {:.3}, mixed {:.3}", wa(s), wa(m));
    // The sequential stream's reclaim units empty in order: nearly nothing to move.
    let cold = &s.handles[2];
    assert_eq!(cold.flows, ["cold"]);
    assert!(cold.write_amplification.unwrap() < 1.01, "{cold:?}");
    assert_eq!(m.handles[1].flows, ["hot", "cold"]);
    // The device's write amplification agrees with the log's counts.
    assert!((separate.device.gc.write_amplification - wa(s)).abs() < 1e-9);
}

#[test]
fn random_writers_of_different_lifetimes_also_gain() {
    let mixed = run(&two_writers(1, 1, "uniform"));
    let separate = run(&two_writers(1, 2, "uniform"));
    assert!(
        separate.device.gc.pages_moved < mixed.device.gc.pages_moved,
        "{} vs {}",
        separate.device.gc.pages_moved,
        mixed.device.gc.pages_moved
    );
}

#[test]
fn the_statistics_log_adds_up() {
    let r = run(&two_writers(1, 2, "uniform"));
    let f = r.fdp.unwrap();
    assert_eq!(f.reclaim_unit_handles, 4);
    assert_eq!(f.reclaim_unit_bytes, 64 * 4096);
    let host: u64 = f.handles.iter().map(|h| h.host_bytes_written).sum();
    let media: u64 = f.handles.iter().map(|h| h.media_bytes_written).sum();
    assert_eq!(host, f.host_bytes_written);
    assert_eq!(host, 120_000 * 4096);
    assert_eq!(media, f.media_bytes_written, "ideal mapping: no translation pages");
    let erased: u64 = f.handles.iter().map(|h| h.reclaim_units_erased).sum();
    assert_eq!(erased * f.reclaim_unit_bytes, f.media_bytes_erased);
    assert_eq!(f.handles[3].host_bytes_written, 0);
    assert_eq!(f.handles[3].write_amplification, None, "no host bytes: undefined, not 0");
    // The fill's data is handle 0's; GC moves some of it, the host never writes there.
    assert!(f.handles[0].flows.is_empty());
}

#[test]
fn data_reads_back_through_fdp_and_gc() {
    let text = two_writers(1, 2, "uniform").replace("requests = 60000", "requests = 20000")
        + "[[flows]]\nname = \"reader\"\nread_fraction = 1.0\nworking_set = 0.8\nqueue_depth = 2\nrequests = 20000\n"
        + "[data]\nemulate = true\n";
    let r = run(&text);
    let d = r.data.as_ref().unwrap();
    assert_eq!(d.mismatched_sectors, 0, "{:?}", d.first_mismatch);
    assert!(r.device.gc.pages_moved > 0);
}

#[test]
fn without_fdp_results_have_no_fdp_section() {
    let text = two_writers(0, 0, "uniform").replace("[ftl.fdp]\nreclaim_unit_handles = 4\n", "");
    let text = text.replace("placement_handle = 0\n", "");
    assert!(run(&text).fdp.is_none());
}

fn error(text: &str) -> String {
    match Simulation::from_toml_str(text, &repo_root()) {
        Err(SimError::Config(e)) => e.to_string(),
        Err(e) => panic!("not a config error: {e}"),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn bad_placement_is_an_error_naming_the_field() {
    let e = error(&two_writers(1, 4, "uniform"));
    assert!(e.contains("flows[1].placement_handle") && e.contains("handle 4 does not exist"), "{e}");
    let e = error(&two_writers(1, 2, "uniform").replace("[ftl.fdp]\nreclaim_unit_handles = 4\n", ""));
    assert!(e.contains("flows[0].placement_handle") && e.contains("[ftl.fdp]"), "{e}");
    let e = error(&two_writers(1, 2, "uniform").replace("reclaim_unit_handles = 4", "reclaim_unit_handles = 0"));
    assert!(e.contains("ftl.fdp.reclaim_unit_handles"), "{e}");
    let e = error(&two_writers(1, 2, "uniform").replace("gc_policy = \"greedy\"", "mapping = \"hybrid\""));
    assert!(e.contains("ftl.fdp") && e.contains("page mapping"), "{e}");
}

#[test]
fn too_many_handles_for_the_spare_blocks_is_an_error_naming_the_field() {
    // 128 blocks a plane: 109 hold the data, 9 are held back for GC and the open blocks, and
    // each handle past the first keeps two more open: 6 handles fit, 7 do not.
    let with = |n: u32| {
        two_writers(1, 2, "uniform").replace("reclaim_unit_handles = 4", &format!("reclaim_unit_handles = {n}"))
    };
    let e = error(&with(7));
    assert!(e.contains("ftl.fdp.reclaim_unit_handles") && e.contains("use at most 6 handles"), "{e}");
    assert!(Simulation::from_toml_str(&with(6), &repo_root()).is_ok());
}

/// A MQSim-format trace of the two writers of [`two_writers`] interleaved in one flow, each
/// record carrying its writer's handle in the sixth column (`hot`, `cold`), plus `strays`
/// writes carrying handle 7, which the device does not offer.
fn placed_trace(dir: &std::path::Path, hot: u32, cold: u32, strays: u32) -> std::path::PathBuf {
    use std::fmt::Write;
    // 8 planes x 128 blocks x 64 pages of 4 KiB, 15 % spare: 55,705 logical pages.
    let pages = 8 * 128 * 64 * 85 / 100;
    let (hot_pages, cold_pages) = (pages / 10, pages * 7 / 10);
    let mut rng = 12345u64;
    let mut text = String::new();
    for i in 0..120_000u64 {
        let (page, handle) = if i % 2 == 0 {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((rng >> 33) % hot_pages, hot)
        } else {
            (hot_pages + (i / 2) % cold_pages, cold)
        };
        let handle = if i < strays as u64 { 7 } else { handle };
        writeln!(text, "{} 0 {} 8 0 {handle}", i * 20_000, page * 8).unwrap();
    }
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("placed-{hot}-{cold}-{strays}.trace"));
    std::fs::write(&path, text).unwrap();
    path
}

fn trace_config(trace: &std::path::Path, fdp: bool) -> String {
    let device = two_writers(1, 2, "uniform");
    let device = device.split("[[flows]]").next().unwrap().to_string();
    let device = if fdp { device } else { device.replace("[ftl.fdp]\nreclaim_unit_handles = 4\n", "") };
    format!(
        "{device}[[flows]]\nname = \"tenants\"\nkind = \"trace\"\nformat = \"mqsim\"\npath = \"{}\"\n",
        trace.display()
    )
}

#[test]
fn a_trace_places_each_write_by_the_handle_it_carries() {
    let dir = std::env::temp_dir().join(format!("ssdlab-fdp-trace-{}", std::process::id()));
    let mixed = run(&trace_config(&placed_trace(&dir, 1, 1, 0), true));
    let separate = run(&trace_config(&placed_trace(&dir, 1, 2, 5), true));
    let (m, s) = (mixed.fdp.as_ref().unwrap(), separate.fdp.as_ref().unwrap());
    let wa = |f: &ssdlab_core::ftl::fdp::FdpSummary| f.media_bytes_written as f64 / f.host_bytes_written as f64;
    assert!(wa(s) < 1.1 && wa(m) > 1.3, "separate {:.3}, mixed {:.3}", wa(s), wa(m));
    // One flow, three handles: the records' handles, not the flow's, place the data.
    let host = |h: usize| s.handles[h].host_bytes_written / 4096;
    assert_eq!((host(0), host(1), host(2)), (5, 60_000 - 3, 60_000 - 2));
    assert_eq!(s.events.invalid_placement_identifier, 5);
    let e = &s.events.log[0];
    assert_eq!(
        (e.event.as_str(), e.placement_identifier, e.namespace_id, e.flow.as_str()),
        ("invalid_placement_identifier", 7, 1, "tenants")
    );
    assert_eq!(m.events.invalid_placement_identifier, 0);
    assert!(m.events.log.is_empty());
    // Through a write cache the handle travels with the cached line to its flush.
    let cached = run(&format!(
        "{}cache_mode = \"write\"\n[cache]\ncapacity = \"4MiB\"\n",
        trace_config(&placed_trace(&dir, 1, 2, 0), true)
    ));
    let c = cached.fdp.as_ref().unwrap();
    assert!(cached.device.cache.flushes > 50_000, "the cache flushed");
    assert_eq!(c.handles[0].host_bytes_written, 0, "{c:?}");
    assert!(c.handles[2].write_amplification.unwrap() < 1.01, "{c:?}");
    // Without FDP, a handle in the trace is an error naming the file and line.
    let e = Simulation::from_toml_str(&trace_config(&placed_trace(&dir, 1, 2, 0), false), &repo_root())
        .and_then(|mut sim| sim.run())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("placed-1-2-0.trace:1") && e.contains("[ftl.fdp]"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
