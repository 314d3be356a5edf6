//! Chip-to-chip variation of cell latencies (`[flash.timing.spread]`): each die draws its read,
//! program and erase factors once from the run's seed (Amber, MICRO 2018: programs of 413 us to
//! 1.8 ms and reads of 57 to 94 us over 60 packages).

mod common;

use common::{flash, run};

/// 32 dies, random 4 KiB reads at queue depth 1 over a filled drive: each read lands on one die
/// and sees that die's read time.
fn reads(spread: &str, seed: u64) -> String {
    format!(
        "seed = {seed}\n{}\n{spread}\n[ftl]\nideal_mapping = true\nover_provisioning = 0.25\n[precondition]\nmode = \"fill\"\noccupancy = 0.9\n\
         [[flows]]\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 1\nrequests = 3000\n",
        flash([8, 4, 1, 1, 64, 64], "4KiB")
    )
}

/// The smallest latency: the first point of the CDF.
fn min(op: &ssdlab_core::stats::OpSummary) -> f64 {
    op.latency_cdf.latency_us[0]
}

const AMBER: &str = "[flash.timing.spread]\nread = 0.25\nprogram = 0.63";

#[test]
fn each_die_reads_at_its_own_speed() {
    let even = run(&reads("", 1));
    let spread = run(&reads(AMBER, 1));
    let (e, s) = (&even.flows[0].reads.latency_us, &spread.flows[0].reads.latency_us);
    let s_min = min(&spread.flows[0].reads);
    // Without spread every read takes the same time (75 us cell + command and transfer).
    assert!(e.max - min(&even.flows[0].reads) < 1.0, "{e:?}");
    // With it, reads on the fastest dies take about 19 us less, on the slowest about 19 us more.
    assert!(s.p50 - s_min > 8.0 && s.max - s.p50 > 8.0, "{s:?}");
    assert!(s.max - s_min < 2.0 * 0.25 * 75.0 + 1.0, "within 75 us +- 25 %: {s:?}");
    assert!((s.mean - e.mean).abs() < 5.0, "centred on the configured time: {:.1} vs {:.1}", s.mean, e.mean);
}

#[test]
fn the_factors_follow_the_seed() {
    let a = run(&reads(AMBER, 1));
    let b = run(&reads(AMBER, 1));
    let c = run(&reads(AMBER, 2));
    assert_eq!(a.flows[0].reads.latency_us, b.flows[0].reads.latency_us, "same seed, same drive");
    assert_ne!(a.flows[0].reads.latency_us, c.flows[0].reads.latency_us, "another seed, other dies");
}

#[test]
fn a_normal_spread_and_slow_programs() {
    let writes = |spread: &str| {
        reads(spread, 3)
            .replace("read_fraction = 1.0", "read_fraction = 0.0")
            .replace("occupancy = 0.9", "occupancy = 0.2")
    };
    let even = run(&writes(""));
    let spread = run(&writes("[flash.timing.spread]\ndistribution = \"normal\"\nprogram = 0.3"));
    let (e, s) = (&even.flows[0].writes, &spread.flows[0].writes);
    let (e_range, s_range) = (e.latency_us.max - min(e), s.latency_us.max - min(s));
    assert!(s_range > 4.0 * e_range.max(1.0), "ranges: even {e_range:.1} us, spread {s_range:.1} us");
}

#[test]
fn bad_spreads_are_refused_by_name() {
    let err = |spread: &str| match ssdlab_core::Config::from_toml_str(&reads(spread, 1)) {
        Ok(_) => panic!("accepted: {spread}"),
        Err(e) => e.to_string(),
    };
    let e = err("[flash.timing.spread]\nread = 1.0");
    assert!(e.contains("flash.timing.spread.read") && e.contains("below 1"), "{e}");
    let e = err("[flash.timing.spread]\ndistribution = \"normal\"\nerase = -0.1");
    assert!(e.contains("flash.timing.spread.erase"), "{e}");
    let e = err("[flash.timing.spread]\ndistribution = \"lognormal\"");
    assert!(e.contains("distribution") && e.contains("uniform"), "{e}");
}
