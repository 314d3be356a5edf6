//! Cache organisations (set associative, direct mapped, line size, replacement) and
//! parallelism-aware read-ahead, through TOML configs.

mod common;

use common::{repo_root, run, SMALL_DEVICE};
use ssdlab_core::{Config, Results, Simulation};

/// The small device (4 dies, 8 planes), half full, with a DDR-class DRAM (1600 MT/s x 8 B).
fn device(cache: &str) -> String {
    format!(
        "{SMALL_DEVICE}\n[precondition]\nmode = \"fill\"\noccupancy = 0.5\n[cache]\ndram_data_rate = \"1600MT/s\"\ndram_burst_bytes = 8\n{cache}\n"
    )
}

/// A 4 KiB reader at queue depth `depth` that caches what it reads.
fn reader(address: &str, depth: u32) -> String {
    format!(
        "[[flows]]\nname = \"r\"\ncache_mode = \"read\"\nread_fraction = 1.0\naddress = \"{address}\"\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nworking_set = 0.4\nqueue_depth = {depth}\nrequests = 3000\n"
    )
}

fn read_ahead_pair(address: &str, depth: u32, read_ahead: &str) -> (Results, Results) {
    let off = run(&format!("{}\n{}", device("capacity = \"1MiB\""), reader(address, depth)));
    let on = run(&format!("{}\n{}", device(&format!("capacity = \"1MiB\"\n{read_ahead}")), reader(address, depth)));
    (off, on)
}

#[test]
fn read_ahead_makes_sequential_reads_faster() {
    for depth in [1, 4] {
        let (off, on) = read_ahead_pair("sequential", depth, "read_ahead = true");
        let (a, b) = (&off.flows[0].reads, &on.flows[0].reads);
        // Measured: QD 1 165 -> 32 us and 24 -> 122 MiB/s; QD 4 176 -> 100 us, 89 -> 156 MiB/s.
        assert!(
            b.latency_us.mean < a.latency_us.mean * 0.7,
            "QD {depth}: mean {:.1} us with read-ahead vs {:.1} us without",
            b.latency_us.mean,
            a.latency_us.mean
        );
        assert!(
            b.bandwidth_mib_s > a.bandwidth_mib_s * 1.5,
            "QD {depth}: {:.1} MiB/s with read-ahead vs {:.1} without",
            b.bandwidth_mib_s,
            a.bandwidth_mib_s
        );
        let c = &on.device.cache;
        assert!(c.prefetches_issued >= 2900, "the stream is read ahead: {c:?}");
        assert!(c.prefetches_used as f64 > 0.99 * c.prefetches_issued as f64, "{c:?}");
        assert_eq!(c.prefetches_issued, c.prefetches_used + c.prefetches_wasted);
        assert!(c.prefetch_waits > 0, "some reads catch up with a read in flight and join it: {c:?}");
        assert!(on.flows[0].cache_hit_rate > 0.99);
        assert_eq!(on.flows[0].cache.prefetches_issued, c.prefetches_issued);
        assert_eq!(off.device.cache.prefetches_issued, 0);
        // A joining read's steps still add up to its latency.
        let total: f64 = b.latency_breakdown_us.0.iter().map(|(_, v)| v).sum();
        assert!((total - b.latency_us.mean).abs() < 0.01 * b.latency_us.mean, "{total} vs {}", b.latency_us.mean);
    }
}

#[test]
fn read_ahead_does_not_help_random_reads() {
    for depth in [1, 4] {
        // The detector never sees a stream: nothing is prefetched and nothing changes.
        let (off, on) = read_ahead_pair("uniform", depth, "read_ahead = true");
        let (a, b) = (&off.flows[0].reads, &on.flows[0].reads);
        assert!(b.latency_us.mean > a.latency_us.mean * 0.97, "{} vs {}", b.latency_us.mean, a.latency_us.mean);
        assert!(b.bandwidth_mib_s < a.bandwidth_mib_s * 1.03);
        assert!(on.device.cache.prefetches_issued < 30, "{:?}", on.device.cache);
        // Forced on every read (threshold 0), read-ahead only wastes flash reads on random data.
        let (off, eager) = read_ahead_pair("uniform", depth, "read_ahead = true\nread_ahead_threshold = 0");
        let c = &eager.device.cache;
        assert!(c.prefetches_issued > 20_000, "{c:?}");
        assert!(c.prefetches_wasted as f64 > 0.95 * c.prefetches_issued as f64, "mostly wasted: {c:?}");
        let (a, b) = (&off.flows[0].reads, &eager.flows[0].reads);
        assert!(b.latency_us.mean > a.latency_us.mean, "no gain: {} vs {}", b.latency_us.mean, a.latency_us.mean);
        assert!(b.bandwidth_mib_s < a.bandwidth_mib_s);
    }
}

#[test]
fn read_ahead_window_covers_the_dies_and_follows_the_config() {
    let r = |extra: &str| {
        let flow = reader("sequential", 1).replace("requests = 3000", "requests = 10");
        run(&format!(
            "{}\n{flow}",
            device(&format!("capacity = \"1MiB\"\nread_ahead = true\nread_ahead_threshold = 2\n{extra}"))
        ))
    };
    // The third read (pages 0, 1, 2) is the second to continue its predecessor: read-ahead keeps
    // 8 pages (one per plane) ahead of it, and each later read moves the window by a page. The
    // last read prefetches nothing: the flow issues no more.
    assert_eq!(r("").device.cache.prefetches_issued, 8 + 6);
    assert_eq!(r("read_ahead_pages = 20").device.cache.prefetches_issued, 20 + 6);
    // Super-page lines of 4 pages: the window ends at a line end (pages 3..8, then 8..12 after
    // read 4 and 12..16 after read 8).
    let lines = r("read_ahead_pages = 5\nline_size = \"16KiB\"").device.cache;
    assert_eq!(lines.prefetches_issued, 5 + 4 + 4, "{lines:?}");
}

fn hit_rate(workload: &str, cache: &str) -> f64 {
    run(&format!("{}\n{workload}", device(&format!("capacity = \"256KiB\"\n{cache}")))).flows[0].cache_hit_rate
}

/// Reads of 32 pages 64 pages apart: they fit a 64-line cache, but share one set of it.
const STRIDED: &str = "[[flows]]\ncache_mode = \"read\"\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"256KiB\"\nworking_set = 0.08\nqueue_depth = 1\nrequests = 3000\n";

/// 90 % of the reads go to 42 hot pages, the rest anywhere in 10,000.
const HOT: &str = "[[flows]]\ncache_mode = \"read\"\nread_fraction = 1.0\naddress = \"hotcold\"\nhot_fraction = 0.004\nhot_traffic = 0.9\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nworking_set = 0.4\nqueue_depth = 1\nrequests = 4000\n";

#[test]
fn direct_mapped_caches_suffer_conflict_misses() {
    let full = hit_rate(STRIDED, "");
    let eight_way = hit_rate(STRIDED, "organisation = \"set_associative\"\nways = 8");
    let direct = hit_rate(STRIDED, "organisation = \"direct_mapped\"");
    // Measured 0.989, 0.248, 0.031: 8 ways hold 8 of the 32 pages, one way holds one.
    assert!(full > 0.95 && eight_way < 0.35 && direct < 0.06, "{full} {eight_way} {direct}");
    assert!(direct < eight_way && eight_way < full);
    // The same on a skewed workload: a cold read evicts the hot line of its set.
    let (full, direct) = (hit_rate(HOT, ""), hit_rate(HOT, "organisation = \"direct_mapped\""));
    assert!(direct < full - 0.02, "direct mapped {direct} vs fully associative {full}");
}

#[test]
fn lru_keeps_hot_lines_that_fifo_and_random_let_go() {
    let lru = hit_rate(HOT, "");
    let fifo = hit_rate(HOT, "replacement = \"fifo\"");
    let random = hit_rate(HOT, "replacement = \"random\"");
    // Measured 0.889, 0.785, 0.789.
    assert!(fifo < lru - 0.05 && random < lru - 0.05, "lru {lru} fifo {fifo} random {random}");
}

/// Writes and sequential reads in a small set-associative cache of two-page lines with random
/// replacement and read-ahead, a 16-line partition each: flushes of super-page lines, writes
/// waiting for a set, reads joining prefetches.
const BUSY: &str = "capacity = \"256KiB\"\nsharing = \"partitioned\"\norganisation = \"set_associative\"\nways = 4\nline_size = \"8KiB\"\nreplacement = \"random\"\nread_ahead = true\n";
const BUSY_FLOWS: &str = "[[flows]]\ncache_mode = \"write-read\"\nread_fraction = 0.3\nrequest_size = \"8KiB\"\nalignment = \"4KiB\"\nworking_set = 0.05\nqueue_depth = 8\nrequests = 3000\n\
                          [[flows]]\ncache_mode = \"read\"\nread_fraction = 1.0\naddress = \"sequential\"\nrequest_size = \"16KiB\"\nqueue_depth = 2\nrequests = 1500\n";

#[test]
fn every_organisation_runs_a_mixed_workload_to_the_end_deterministically() {
    let text = format!("{}\n{BUSY_FLOWS}", device(BUSY));
    let json = |r: &Results| {
        let mut v = serde_json::to_value(r).unwrap();
        for k in ["wall_seconds", "setup_wall_seconds"] {
            v[k] = 0.into();
        }
        v["precondition"]["wall_seconds"] = 0.into();
        v.to_string()
    };
    let (a, b) = (run(&text), run(&text));
    assert_eq!(json(&a), json(&b), "same seed, same results");
    let c = &a.device.cache;
    assert_eq!((c.sets, c.ways), (4, 4));
    assert!(c.flushes > 500 && c.writes_waited > 100 && c.evictions > 500, "{c:?}");
    assert!(c.prefetches_used > 1000, "{c:?}");
    assert_eq!(c.prefetches_issued, c.prefetches_used + c.prefetches_wasted);
    assert_eq!(c.read_lookups, c.read_hits + c.read_misses);
    assert_eq!(a.flows[0].writes.count + a.flows[0].reads.count, 3000);
    let seeded = run(&text.replacen("seed = 7", "seed = 8", 1));
    assert_ne!(seeded.device.cache.evictions, 0);
    // Shared, the writes keep the reader's prefetches out most of the time (they would take the
    // room writes wait for), but everything completes.
    let shared = BUSY.replace("sharing = \"partitioned\"\n", "");
    for (from, to) in [
        ("organisation = \"set_associative\"\nways = 4", "organisation = \"direct_mapped\""),
        ("replacement = \"random\"", "replacement = \"fifo\""),
        ("line_size = \"8KiB\"", "line_size = \"64KiB\""),
    ] {
        let r = run(&format!("{}\n{BUSY_FLOWS}", device(&shared.replace(from, to))));
        assert_eq!(r.flows[1].reads.count, 1500, "{to}");
    }
}

fn rejected(cache: &str, flows: &str) -> String {
    let text = format!("{SMALL_DEVICE}\n[cache]\n{cache}\n{flows}");
    match Config::from_toml_str(&text) {
        Err(e) => e.to_string(),
        Ok(_) => match Simulation::from_toml_str(&text, &repo_root()) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted:\n{text}"),
        },
    }
}

#[test]
fn bad_cache_organisations_are_rejected_naming_the_field() {
    let flow = "[[flows]]\ncache_mode = \"read\"\nread_fraction = 1.0\nqueue_depth = 1\nrequests = 10\n";
    let cases = [
        ("organisation = \"set_associative\"", "cache.ways: organisation = \"set_associative\" needs"),
        ("organisation = \"set_associative\"\nways = 0", "cache.ways: must be at least 1"),
        ("ways = 4", "cache.ways: applies to organisation = \"set_associative\" only"),
        ("organisation = \"direct_mapped\"\nways = 2", "cache.ways: applies to"),
        ("organisation = \"two_way\"", "cache.organisation: unknown variant `two_way`"),
        ("replacement = \"mru\"", "cache.replacement: unknown variant `mru`"),
        ("line_size = \"6KiB\"", "cache.line_size: must be a positive multiple of the 4096-byte flash page"),
        ("line_size = \"512KiB\"", "cache.line_size: may span at most 64 pages"),
        (
            "capacity = \"100KiB\"\norganisation = \"set_associative\"\nways = 8",
            "cache.capacity: must be a positive multiple of ways x line size (8 x 4096 B = 32768 B)",
        ),
        ("capacity = \"20KiB\"\nline_size = \"8KiB\"", "cache.capacity: must be a positive multiple of the line size"),
        ("read_ahead = true\nread_ahead_pages = 0", "cache.read_ahead_pages: must be between 1 and"),
        (
            "capacity = \"64KiB\"\nread_ahead = true\nread_ahead_pages = 17",
            "cache.read_ahead_pages: must be between 1 and the 16 pages",
        ),
    ];
    for (cache, expected) in cases {
        let message = rejected(cache, flow);
        assert!(message.starts_with(expected), "[cache] {cache:?}: expected `{expected}`, got `{message}`");
    }
    let writer = flow.replace("\"read\"", "\"write\"");
    assert!(rejected("read_ahead = true", &writer)
        .starts_with("cache.read_ahead: read-ahead fills the cache for flows that cache reads"));
    let two = format!("{flow}{flow}");
    assert!(rejected(
        "capacity = \"32KiB\"\nsharing = \"partitioned\"\norganisation = \"set_associative\"\nways = 8",
        &two
    )
    .starts_with("cache.ways: with sharing = \"partitioned\" each of the 2 flows gets 4 lines"));
}
