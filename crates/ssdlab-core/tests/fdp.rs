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
