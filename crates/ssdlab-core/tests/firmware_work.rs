//! Firmware cost from the work done: each step's instructions follow what it did. The host
//! interface layer pays its protocol's events (NVMe's doorbells, command fetch, PRP entries and
//! lists, completion and interrupt; UFS's UPIUs; SATA's FISes), the cache layer and the FTL pay
//! for misses (and a dirty CMT eviction for the entries it walks), GC for the blocks it scans
//! and the pages it moves. Amber's direction holds: NVMe executes several times UFS's
//! instructions for the same requests, and loads and stores are the largest class.

mod common;

use common::{run, SMALL_DEVICE};
use ssdlab_core::Results;

/// Random reads of `size` at queue depth 1 over `interface`, firmware on, cache off.
fn reads(interface: &str, size: &str, extra: &str) -> String {
    format!(
        "precondition = {{ mode = \"fill\", occupancy = 0.9 }}\n{SMALL_DEVICE}ideal_mapping = true\n[host]\ninterface = \"{interface}\"\n[firmware]\nenabled = true\n{extra}\n[[flows]]\nread_fraction = 1.0\nrequest_size = \"{size}\"\nalignment = \"{size}\"\nworking_set = 0.9\nqueue_depth = 1\nrequests = 2000\n"
    )
}

fn units(r: &Results, item: &str) -> u64 {
    r.firmware.as_ref().unwrap().work_units[item]
}

fn instructions(r: &Results) -> u64 {
    r.firmware.as_ref().unwrap().instructions_by_class.values().sum()
}

fn per_request(r: &Results, item: &str) -> f64 {
    units(r, item) as f64 / r.device.reads.count as f64
}

#[test]
fn each_interface_pays_its_protocol_events() {
    let nvme = run(&reads("nvme", "4KiB", ""));
    for (item, expected) in [
        ("nvme_doorbell", 2.0),
        ("nvme_command_fetch", 1.0),
        ("nvme_queue_scanned", 1.0),
        ("nvme_prp_entry", 1.0),
        ("nvme_prp_list", 0.0),
        ("nvme_completion", 1.0),
        ("nvme_interrupt", 1.0),
        ("ufs_upiu", 0.0),
        ("sata_fis", 0.0),
    ] {
        assert_eq!(per_request(&nvme, item), expected, "{item}");
    }
    // UFS: COMMAND, one DATA IN (a 4 KiB page), RESPONSE.
    let ufs = run(&reads("ufs", "4KiB", ""));
    assert_eq!(per_request(&ufs, "ufs_upiu"), 3.0);
    assert_eq!(units(&ufs, "nvme_doorbell"), 0);
    // SATA: Register Host to Device, DMA Setup, one DATA FIS, Set Device Bits.
    let sata = run(&reads("sata", "4KiB", ""));
    assert_eq!(per_request(&sata, "sata_fis"), 4.0);

    // The same requests: NVMe's device-side queue and memory work costs several times UFS's
    // whole firmware path (measured 2.9x with the defaults), and SATA sits between.
    let (n, u, s) = (instructions(&nvme) as f64, instructions(&ufs) as f64, instructions(&sata) as f64);
    assert!(n > 2.5 * u, "NVMe {n} vs UFS {u} instructions");
    assert!(u < s && s < n, "UFS {u}, SATA {s}, NVMe {n}");
    let hil = |r: &Results| r.firmware.as_ref().unwrap().instructions_by_step["hil"] as f64;
    assert!(hil(&nvme) > 4.0 * hil(&ufs), "HIL: NVMe {} vs UFS {}", hil(&nvme), hil(&ufs));

    // Loads and stores are the largest class on every interface (Amber: about 60 %).
    for r in [&nvme, &ufs, &sata] {
        let by_class = &r.firmware.as_ref().unwrap().instructions_by_class;
        let load_store = by_class["load_store"] as f64 / instructions(r) as f64;
        assert!(load_store > 0.5, "load/store share {load_store}");
        assert!(by_class.iter().all(|(c, &n)| c == "load_store" || n < by_class["load_store"]));
    }
}

#[test]
fn nvme_walks_a_prp_entry_per_memory_page_and_a_list_beyond_two() {
    let two = run(&reads("nvme", "8KiB", ""));
    assert_eq!((per_request(&two, "nvme_prp_entry"), per_request(&two, "nvme_prp_list")), (2.0, 0.0));
    let sixteen = run(&reads("nvme", "64KiB", ""));
    assert_eq!((per_request(&sixteen, "nvme_prp_entry"), per_request(&sixteen, "nvme_prp_list")), (16.0, 1.0));
    // A larger request costs the HIL more; UFS sends a DATA IN per flash page instead.
    let hil = |r: &Results| r.firmware.as_ref().unwrap().instructions_by_step["hil"] as f64 / 2000.0;
    assert!(hil(&sixteen) > hil(&two) + 14.0 * 50.0);
    let ufs = run(&reads("ufs", "64KiB", ""));
    assert_eq!(per_request(&ufs, "ufs_upiu"), 2.0 + 16.0);
    // SATA: a DATA FIS per 8 KiB.
    let sata = run(&reads("sata", "64KiB", ""));
    assert_eq!(per_request(&sata, "sata_fis"), 3.0 + 8.0);
}

#[test]
fn the_ftl_pays_for_cmt_misses_and_the_entries_a_dirty_eviction_walks() {
    // A 4 KiB CMT (512 entries of 8 B) over a 13 MiB working set (3,300 pages): most random
    // reads miss. At queue depth 1 nothing changes the CMT between a request's
    // firmware step and its lookup, so the firmware's misses are the CMT's.
    let small_cmt = "ideal_mapping = false\ncmt_capacity = \"4KiB\"\n";
    let text = reads("nvme", "4KiB", "").replace("ideal_mapping = true\n", small_cmt);
    let r = run(&text);
    let misses = r.flows[0].cmt.misses;
    assert!(misses > 1000, "{misses}");
    assert_eq!(units(&r, "cmt_miss"), misses);
    // Reads dirty no entry: no write-back walks.
    assert_eq!(units(&r, "cmt_entry_walked"), 0);
    let ideal = run(&reads("nvme", "4KiB", ""));
    let ftl = |r: &Results| r.firmware.as_ref().unwrap().instructions_by_step["ftl"] as f64 / 2000.0;
    assert!(ftl(&r) > 2.5 * ftl(&ideal), "FTL instructions per read: {} vs ideal {}", ftl(&r), ftl(&ideal));

    // Writes dirty their entries: evicting one writes its translation page back, walking the
    // cached entries of that page.
    let writes = text.replace("read_fraction = 1.0", "read_fraction = 0.0");
    let w = run(&writes);
    assert!(units(&w, "cmt_miss") > 1000);
    assert_eq!(units(&w, "page_allocation"), 2000);
    let walked = units(&w, "cmt_entry_walked");
    assert!(walked > 0, "dirty evictions walk their translation pages' entries");
}

#[test]
fn the_cache_layer_pays_for_misses_and_evictions() {
    // Reads through a 64 KiB read cache over a 13 MiB working set: almost every read misses,
    // and once the cache is full each miss evicts.
    let text = reads("nvme", "4KiB", "[cache]\ncapacity = \"64KiB\"\n")
        .replace("queue_depth = 1", "queue_depth = 1\ncache_mode = \"read\"");
    let r = run(&text);
    let c = &r.flows[0].cache;
    assert_eq!(units(&r, "cache_miss"), c.read_misses);
    assert!(units(&r, "cache_eviction") > c.read_misses - 32, "{} evictions", units(&r, "cache_eviction"));
    // A working set (26 pages) that fits a 1 MiB cache: after the first pass every read hits and
    // costs no miss work.
    let fits = text.replace("working_set = 0.9", "working_set = 0.001").replace("64KiB", "1MiB");
    let f = run(&fits);
    assert_eq!(units(&f, "cache_miss"), f.flows[0].cache.read_misses);
    assert!(units(&f, "cache_miss") < 40, "{}", units(&f, "cache_miss"));
    assert_eq!(units(&f, "cache_eviction"), 0);
}

#[test]
fn gc_pays_for_the_blocks_its_policy_scans_and_the_pages_it_moves() {
    let writes = |policy: &str| {
        format!(
            "precondition = {{ mode = \"fill\", occupancy = 0.9 }}\n{SMALL_DEVICE}ideal_mapping = true\ngc_policy = \"{policy}\"\n[firmware]\nenabled = true\n[[flows]]\nread_fraction = 0.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nworking_set = 0.9\nqueue_depth = 8\nrequests = 20000\n"
        )
    };
    let greedy = run(&writes("greedy"));
    let victims = greedy.device.gc.victims_selected;
    assert!(victims > 0);
    // Greedy looks at every block of the plane (64) per victim.
    assert_eq!(units(&greedy, "gc_block_scanned"), victims * 64);
    // Pages valid when the victim was chosen; a page the host rewrote meanwhile is not moved.
    assert!(units(&greedy, "gc_page_moved") >= greedy.device.gc.pages_moved);
    assert!(units(&greedy, "gc_page_moved") < greedy.device.gc.pages_moved + victims * 64);
    // RGA draws its d (default 10) candidates.
    let rga = run(&writes("rga"));
    assert_eq!(units(&rga, "gc_block_scanned"), rga.device.gc.victims_selected * 10);
    // 12 instructions per block scanned (defaults 3 / 6 / 3 / 0).
    let scan = |r: &Results| r.firmware.as_ref().unwrap().instructions_by_work["gc_block_scanned"];
    assert_eq!(scan(&greedy), victims * 64 * 12);
    assert_eq!(scan(&rga), rga.device.gc.victims_selected * 10 * 12);
}
