//! The DRAM data cache: write-back, eviction with flushes, read hits, partial-line
//! read-modify-write, and contention between flows sharing it.

mod common;

use common::{run, SMALL_DEVICE};

fn device(cache: &str) -> String {
    format!("{SMALL_DEVICE}\n[precondition]\nmode = \"fill\"\noccupancy = 0.5\n[cache]\n{cache}\n")
}

const WRITES: &str =
    "[[flows]]\nname = \"w\"\ncache_mode = \"write\"\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 4\n";

#[test]
fn cached_writes_complete_at_dram_speed() {
    // One at a time: at queue depth 4 the writes would queue for the (slow, MQSim-default) DRAM.
    let qd1 = WRITES.replace("queue_depth = 4", "queue_depth = 1");
    let cached = run(&format!("{}\n{qd1}requests = 200\n", device("capacity = \"64MiB\"")));
    let direct = run(&format!("{}\n{}requests = 200\n", device(""), qd1.replace("\"write\"", "\"off\"")));
    let (c, d) = (cached.flows[0].writes.latency_us.mean, direct.flows[0].writes.latency_us.mean);
    // 4 KiB at MQSim's DRAM (100 MHz DDR = 200 MT/s x 1 B) is about 20.5 us; a program 750 us.
    assert!(c < 60.0 && d > 700.0, "cached {c:.1} us vs direct {d:.1} us");
    assert!((cached.flows[0].writes.latency_breakdown_us.get("cache_dram").unwrap() - 20.5).abs() < 3.0);
    assert_eq!(cached.device.flash.programs, 0, "nothing needed flushing");
}

#[test]
fn a_full_cache_makes_writes_wait_for_flushes() {
    let r = run(&format!("{}\n{WRITES}requests = 3000\n", device("capacity = \"64KiB\"")));
    let c = &r.device.cache;
    assert!(c.flushes > 2000 && c.writes_waited > 1000, "{c:?}");
    // Room is made for every waiting write at once: flushes overlap on the dies, so a full cache
    // admits writes faster than one program time each.
    assert!(r.flows[0].writes.iops > 1e6 / 750.0 * 1.5, "{}", r.flows[0].writes.iops);
    assert!(r.flows[0].writes.latency_us.mean > 300.0, "writes wait for programs once the cache is full");
    assert_eq!(r.flows[0].writes.count, 3000);
}

#[test]
fn partial_lines_are_merged_with_flash_when_flushed() {
    let flows = WRITES.replace("\"4KiB\"\nalignment = \"4KiB\"", "\"2KiB\"\nalignment = \"2KiB\"");
    let r = run(&format!("{}\n{flows}requests = 3000\n", device("capacity = \"32KiB\"")));
    assert!(r.device.flash.read_modify_writes > 100, "{:?}", r.device.flash);
}

#[test]
fn reads_hit_what_the_cache_holds() {
    let small_ws = "[[flows]]\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nworking_set = 0.01\nqueue_depth = 2\nrequests = 3000\n";
    // A DDR-class DRAM (1600 MT/s x 8 B) rather than MQSim's 100 MB/s default.
    let fast = "capacity = \"8MiB\"\ndram_data_rate = \"1600MT/s\"\ndram_burst_bytes = 8";
    let read_cache = run(&format!("{}\n{}cache_mode = \"read\"\n", device(fast), small_ws));
    let off = run(&format!("{}\n{}", device(""), small_ws));
    let f = &read_cache.flows[0];
    assert!(f.cache_hit_rate > 0.8, "repeated reads of a small working set hit: {}", f.cache_hit_rate);
    let (hit, miss) = (f.reads.latency_us.mean, off.flows[0].reads.latency_us.mean);
    assert!(hit < miss * 0.3, "read cache {hit:.1} us vs no cache {miss:.1} us");
    // Without a cache no read looked there: the hit rate is undefined (null), not 0.
    assert!(off.flows[0].cache_hit_rate.is_nan());
    // Data written through a write cache is read back from it.
    let mixed = run(&format!(
        "{}\n[[flows]]\ncache_mode = \"write\"\nread_fraction = 0.5\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nworking_set = 0.01\nqueue_depth = 2\nrequests = 3000\n",
        device("capacity = \"8MiB\"")
    ));
    assert!(mixed.flows[0].cache_hit_rate > 0.5, "{}", mixed.flows[0].cache_hit_rate);
}

#[test]
fn partitioning_protects_a_light_writer_from_a_heavy_one() {
    let flows = "[[flows]]\nname = \"heavy\"\ncache_mode = \"write\"\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 32\nduration = \"50ms\"\n\
                 [[flows]]\nname = \"light\"\ncache_mode = \"write\"\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nworking_set = 0.002\nqueue_depth = 1\nduration = \"50ms\"\n";
    let shared = run(&format!("{}\n{flows}", device("capacity = \"1MiB\"")));
    let split = run(&format!("{}\n{flows}", device("capacity = \"1MiB\"\nsharing = \"partitioned\"")));
    let (s, p) = (shared.flows[1].writes.latency_us.mean, split.flows[1].writes.latency_us.mean);
    // The light flow rewrites a few pages that fit its half: it never waits for the heavy one's flushes.
    assert!(p < s * 0.5, "light writer: shared {s:.0} us, partitioned {p:.0} us");
}
