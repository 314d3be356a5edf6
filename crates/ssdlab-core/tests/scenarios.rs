//! End-to-end behaviour of whole runs.

mod common;

use common::{repo_root, run, SMALL_DEVICE};
use ssdlab_core::Simulation;

#[test]
fn sustained_random_writes_on_a_full_drive_run_gc_and_keep_invariants() {
    // A preconditioned drive, 100 % working set, writes only: GC must keep up without breaking
    // the mapping (MQSim crashes in this configuration).
    let results = run(&format!(
        "{SMALL_DEVICE}\n[precondition]\nmode = \"fill\"\noccupancy = 1.0\nlayout = \"spread\"\n[[flows]]\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 8\nrequests = 20000\n"
    ));
    let gc = &results.device.gc;
    assert!(gc.blocks_erased > 100, "GC erased only {} blocks", gc.blocks_erased);
    assert!(gc.pages_moved > 0);
    assert!(gc.write_amplification > 1.5, "WA {}", gc.write_amplification);
    assert_eq!(results.device.writes.count, 20000);
}

#[test]
fn partial_page_writes_read_the_rest_of_the_page_first() {
    let results = run(&format!(
        "{SMALL_DEVICE}\n[precondition]\nmode = \"fill\"\noccupancy = 1.0\n[[flows]]\nrequest_size = \"2KiB\"\nalignment = \"2KiB\"\nqueue_depth = 1\nrequests = 200\n"
    ));
    assert_eq!(results.device.flash.read_modify_writes, 200);
    // Every flash read is a read-modify-write read or a translation-page read after a CMT miss.
    assert_eq!(results.device.flash.reads, 200 + results.device.flash.translation_page_reads);
    let full_page = run(&format!(
        "{SMALL_DEVICE}\n[precondition]\nmode = \"fill\"\noccupancy = 1.0\n[[flows]]\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 1\nrequests = 200\n"
    ));
    assert_eq!(full_page.device.flash.read_modify_writes, 0);
    assert!(results.device.writes.latency_us.mean > full_page.device.writes.latency_us.mean + 40.0);
}

#[test]
fn the_mqsim_websearch_trace_replays_unchanged() {
    let trace = repo_root().join("../shared/mqsim/traces/wsrch-small.trace");
    if !trace.exists() {
        eprintln!("skipped: {} is not present", trace.display());
        return;
    }
    let lines = std::fs::read_to_string(&trace).unwrap().lines().filter(|l| !l.trim().is_empty()).count() as u64;
    let results = run(&format!("[[flows]]\nname = \"wsrch\"\nkind = \"trace\"\npath = \"{}\"\n", trace.display()));
    let flow = &results.flows[0];
    assert_eq!(flow.requests, lines);
    assert_eq!(flow.reads.count + flow.writes.count, lines);
    assert!(flow.reads.count > 0);
    assert!(flow.reads.latency_us.p50 > 75.0, "a flash read takes at least the cell time");
}

#[test]
fn a_run_shorter_than_a_second_reports_exact_rates() {
    let results = run(&format!("{SMALL_DEVICE}\n[[flows]]\nread_fraction = 1.0\nqueue_depth = 4\nrequests = 100\n"));
    assert!(results.simulated_seconds < 0.1);
    let flow = &results.flows[0];
    assert!(flow.iops.is_finite() && flow.iops > 0.0);
    let expected = 100.0 / flow.interval_seconds;
    assert!((flow.iops - expected).abs() < 1e-6 * expected, "{} vs {expected}", flow.iops);
    // Not divided by a whole second: 100 requests in well under a second is far above 100 IOPS.
    assert!(flow.iops > 10_000.0);
    let bytes = flow.reads.bytes as f64;
    assert!((flow.bandwidth_mib_s - bytes / 1048576.0 / flow.interval_seconds).abs() < 1e-6 * flow.bandwidth_mib_s);
}

#[test]
fn an_open_loop_flow_below_saturation_gets_its_rate() {
    let results =
        run(&format!("{SMALL_DEVICE}\n[[flows]]\nread_fraction = 1.0\nrate = \"2000/s\"\nduration = \"2s\"\n"));
    let iops = results.flows[0].iops;
    assert!((iops - 2000.0).abs() / 2000.0 < 0.05, "{iops}");
    assert!(results.flows[0].reads.latency_us.p50 < 200.0, "an idle device answers at once");
}

#[test]
fn queue_fetch_size_limits_what_a_flow_has_inside_the_device() {
    let flows = "[[flows]]\nread_fraction = 1.0\nqueue_depth = 32\nrequests = 3000\n";
    let open = run(&format!("{SMALL_DEVICE}\n{flows}"));
    let one = run(&format!("{SMALL_DEVICE}\n[host]\nqueue_fetch_size = 1\n{flows}"));
    // With one request inside the device at a time, the flow cannot use the four dies at once.
    assert!(one.flows[0].iops < open.flows[0].iops * 0.6, "{} vs {}", one.flows[0].iops, open.flows[0].iops);
    assert!(one.flows[0].reads.latency_us.mean > open.flows[0].reads.latency_us.mean);
}

#[test]
fn concurrent_flows_interfere_on_the_back_end() {
    let victim = "[[flows]]\nname = \"victim\"\nread_fraction = 1.0\nqueue_depth = 2\nrequests = 2000\n";
    let alone = run(&format!("{SMALL_DEVICE}\n{victim}"));
    let shared = run(&format!(
        "{SMALL_DEVICE}\n{victim}\n[[flows]]\nname = \"aggressor\"\nread_fraction = 1.0\nqueue_depth = 64\nrequests = 40000\n"
    ));
    let (a, s) = (alone.flows[0].reads.latency_us.mean, shared.flows[0].reads.latency_us.mean);
    assert!(s > 2.0 * a, "the victim should slow down: alone {a:.1} us, shared {s:.1} us");
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_does_not() {
    let text = |seed: u64| {
        format!(
            "{}\n[precondition]\nmode = \"fill\"\noccupancy = 0.8\nlayout = \"spread\"\n[[flows]]\nread_fraction = 0.5\nrequest_size = {{ mean = \"8KiB\", stdev = \"4KiB\" }}\nqueue_depth = 8\nrequests = 3000\n",
            SMALL_DEVICE.replace("seed = 7", &format!("seed = {seed}"))
        )
    };
    let json = |seed| {
        let mut r = run(&text(seed));
        r.wall_seconds = 0.0;
        r.setup_wall_seconds = 0.0;
        r.precondition.wall_seconds = 0.0;
        serde_json::to_string(&r).unwrap()
    };
    assert_eq!(json(3), json(3));
    assert_ne!(json(3), json(4));
}

#[test]
fn events_and_simulated_time_are_reported() {
    let mut sim = Simulation::from_toml_str(
        &format!("{SMALL_DEVICE}\n[[flows]]\nread_fraction = 1.0\nqueue_depth = 1\nrequests = 10\n"),
        &repo_root(),
    )
    .unwrap();
    assert_eq!(sim.progress(), 0.0);
    let r = sim.run().unwrap();
    assert_eq!(sim.progress(), 1.0);
    assert!(r.events >= 40, "each read is at least four events");
    assert!(r.simulated_seconds > 0.0);
    assert_eq!(r.schema, "ssdlab.results/1");
}

#[test]
fn a_flow_seed_fixes_its_requests_wherever_the_flow_stands() {
    let flow = "[[flows]]\nname = \"x\"\nread_fraction = 0.5\nqueue_depth = 2\nrequests = 500\nseed = 42\n";
    let other = "[[flows]]\nname = \"y\"\nread_fraction = 1.0\nqueue_depth = 1\nrequests = 1\nworking_set = 0.5\nworking_set_start = 0.5\n";
    let first = run(&format!("{SMALL_DEVICE}\n{flow}"));
    let second = run(&format!("{}\n{other}\n{flow}", SMALL_DEVICE.replace("seed = 7", "seed = 8")));
    assert_eq!(first.flows[0].seed, 42);
    assert_eq!(second.flows[1].seed, 42);
    // Same stream: the same mix of reads and writes, whatever the run's seed and the position.
    assert_eq!(first.flows[0].reads.count, second.flows[1].reads.count);
    // Without a seed of its own, a flow's seed derives from the run's seed and its position.
    let derived = run(&format!("{SMALL_DEVICE}\n{other}"));
    assert_eq!(derived.flows[0].seed, ssdlab_core::engine::derive_seed(7, 0));
}
