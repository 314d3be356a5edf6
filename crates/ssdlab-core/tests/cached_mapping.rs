//! The cached mapping table (DFTL): misses cost translation-page reads, dirty evictions cost
//! translation-page writes, and sharing lets one flow's footprint evict another's entries.

mod common;

use common::{repo_root, run, SMALL_DEVICE};
use ssdlab_core::Simulation;

fn device(cmt: &str) -> String {
    SMALL_DEVICE.replace("over_provisioning = 0.2", &format!("over_provisioning = 0.2\n{cmt}"))
        + "\n[precondition]\nmode = \"fill\"\noccupancy = 1.0\n"
}

const RANDOM_READS: &str = "[[flows]]\nname = \"reader\"\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 4\nrequests = 6000\n";

#[test]
fn random_reads_on_a_table_that_does_not_fit_miss_and_slow_down() {
    let small = run(&format!("{}\n{RANDOM_READS}", device("cmt_capacity = \"8KiB\"")));
    let ideal = run(&format!("{}\n{RANDOM_READS}", device("ideal_mapping = true")));
    let (s, i) = (&small.flows[0], &ideal.flows[0]);
    assert_eq!(i.cmt_hit_rate, 1.0);
    assert!(s.cmt_hit_rate < 0.2, "1024 entries over 26,000 pages: hit rate {}", s.cmt_hit_rate);
    assert!(
        s.reads.latency_us.mean > i.reads.latency_us.mean * 1.5,
        "{} vs {}",
        s.reads.latency_us.mean,
        i.reads.latency_us.mean
    );
    assert!(s.reads.latency_breakdown_us.get("cmt_miss_wait").unwrap() > 50.0);
    assert_eq!(i.reads.latency_breakdown_us.get("cmt_miss_wait").unwrap(), 0.0);
    // The counts are consistent (a known flaw elsewhere: misses != lookups - hits).
    assert_eq!(s.cmt.misses, s.cmt.lookups - s.cmt.hits);
    assert_eq!(s.cmt.lookups, 6000);
    assert!(small.device.flash.translation_page_reads <= s.cmt.misses);
    assert!(small.device.flash.translation_page_reads > 0);
}

#[test]
fn a_table_that_fits_only_misses_once_per_page() {
    let r = run(&format!("{}\n{RANDOM_READS}", device("cmt_capacity = \"2MiB\"")));
    let f = &r.flows[0];
    // Cold misses only: never more misses than distinct pages read.
    assert!(f.cmt.misses <= 6000 && f.cmt_hit_rate > 0.1, "{:?}", f.cmt);
    assert_eq!(r.device.flash.translation_page_writes, 0, "reads never dirty an entry");
}

#[test]
fn dirty_evictions_write_translation_pages_back() {
    let writes = "[[flows]]\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 4\nrequests = 6000\n";
    let r = run(&format!("{}\n{writes}", device("cmt_capacity = \"8KiB\"")));
    assert!(r.device.flash.translation_page_writes > 100, "{}", r.device.flash.translation_page_writes);
    // Translation-page writes count in the write amplification.
    assert!(r.device.gc.write_amplification > 1.0);
}

#[test]
fn partitioning_protects_a_small_flow_from_a_large_one() {
    let flows = "[[flows]]\nname = \"hot\"\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nworking_set = 0.01\nqueue_depth = 2\nrequests = 4000\n\
                 [[flows]]\nname = \"scan\"\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 16\nrequests = 30000\n";
    let shared = run(&format!("{}\n{flows}", device("cmt_capacity = \"4KiB\"")));
    let partitioned = run(&format!("{}\n{flows}", device("cmt_capacity = \"4KiB\"\ncmt_sharing = \"partitioned\"")));
    let (s, p) = (shared.flows[0].cmt_hit_rate, partitioned.flows[0].cmt_hit_rate);
    assert!(p > s + 0.2, "the hot flow keeps its entries when partitioned: shared {s:.3}, partitioned {p:.3}");
}

#[test]
fn memory_does_not_grow_with_simulated_writes() {
    // Long random writes with GC and constant CMT evictions: what is in flight stays bounded.
    let text = format!(
        "{}\n[[flows]]\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 8\nrequests = 60000\n",
        device("cmt_capacity = \"4KiB\"").replace("occupancy = 1.0", "occupancy = 1.0\nlayout = \"spread\"")
    );
    let mut sim = Simulation::from_toml_str(&text, &repo_root()).unwrap();
    let mut peak = 0;
    while !sim.step(10_000).unwrap() {
        peak = peak.max(sim.live_transactions());
    }
    // Bounded by the queue depth plus one victim's moves per plane and their write-backs.
    assert!(peak < 8 + 8 * 64 * 2, "peak of {peak} transactions in flight");
    sim.check_invariants().unwrap();
}
