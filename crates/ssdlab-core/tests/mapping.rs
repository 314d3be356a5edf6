//! Mapping families (`ftl.mapping`): block, hybrid and super-page mapping against page mapping,
//! with the merges that explain the difference.

mod common;

use common::{repo_root, run};
use ssdlab_core::{Results, Simulation};

/// A small drive, filled, with the whole table in DRAM for every family (so the comparison
/// isolates the mapping, not cached-mapping-table misses).
fn device(mapping: &str, flows: &str) -> String {
    common::fixture("mapping_filled.toml").replace("[ftl]\n", &format!("[ftl]\n{mapping}\n")) + flows
}

const RANDOM_WRITES: &str = r#"
[[flows]]
name = "writer"
request_size = "4KiB"
alignment = "4KiB"
working_set = 0.8
queue_depth = 8
requests = 1500
"#;

const SEQUENTIAL_WRITES: &str = r#"
[[flows]]
name = "writer"
request_size = "16KiB"
alignment = "16KiB"
address = "sequential"
working_set = 0.8
queue_depth = 8
requests = 1500
"#;

fn mean_write_us(r: &Results) -> f64 {
    r.flows[0].writes.latency_us.mean
}

#[test]
fn block_mapping_is_much_slower_than_page_mapping_under_small_random_writes() {
    let page = run(&device("", RANDOM_WRITES));
    let block = run(&device("mapping = \"block\"", RANDOM_WRITES));
    eprintln!(
        "mean write: page {:.0} us, block {:.0} us; write amplification page {:.2}, block {:.2}",
        mean_write_us(&page),
        mean_write_us(&block),
        page.device.gc.write_amplification,
        block.device.gc.write_amplification
    );
    assert!(page.mapping.is_none(), "page mapping writes no mapping section");
    let m = block.mapping.as_ref().expect("block mapping reports its merges");
    eprintln!("{m:?}");
    assert_eq!(m.family, "block");
    assert!(
        mean_write_us(&block) > 5.0 * mean_write_us(&page),
        "block {:.0} us vs page {:.0} us",
        mean_write_us(&block),
        mean_write_us(&page)
    );
    // The merges explain it: nearly every random update copies a block's worth of pages.
    assert!(m.merges.full > 0 && m.merges.switch == 0 && m.merges.partial == 0);
    assert!(m.pages_copied_by_merges > 10 * m.merges.full, "a merge copies most of a 32-page block");
    assert_eq!(m.erases_by_merges, block.device.gc.blocks_erased);
    assert!(m.erases_by_merges > 0);
    // The copies are real flash work: programs = host pages + copies.
    let host_pages = 1500;
    assert_eq!(block.device.flash.programs, host_pages + m.pages_copied_by_merges);
    assert!(block.device.gc.write_amplification > 5.0 * page.device.gc.write_amplification.max(1.0));
}

#[test]
fn hybrid_mapping_turns_sequential_overwrites_into_switch_merges() {
    let r = run(&device("mapping = \"hybrid\"", SEQUENTIAL_WRITES));
    let m = r.mapping.as_ref().unwrap();
    eprintln!("{m:?}");
    assert_eq!(m.family, "hybrid");
    assert!(m.merges.switch > 0);
    assert!(
        m.merges.switch >= 4 * (m.merges.partial + m.merges.full),
        "sequential overwrites should mostly switch: {:?}",
        m.merges
    );
    // A switch merge copies nothing: it only erases the old data block.
    assert!(m.pages_copied_by_merges <= 32 * (m.merges.partial + m.merges.full));
}

#[test]
fn hybrid_random_updates_need_full_merges_and_beat_block_mapping() {
    let block = run(&device("mapping = \"block\"", RANDOM_WRITES));
    let hybrid = run(&device("mapping = \"hybrid\"", RANDOM_WRITES));
    let m = hybrid.mapping.as_ref().unwrap();
    eprintln!("hybrid {m:?}: {:.0} us vs block {:.0} us", mean_write_us(&hybrid), mean_write_us(&block));
    assert!(m.host_pages_to_log_blocks > 0);
    assert!(m.merges.full > 0, "random updates scatter offsets over the log blocks: full merges");
    assert!(mean_write_us(&hybrid) < mean_write_us(&block));
}

#[test]
fn reads_find_the_pages_the_families_placed() {
    for mapping in ["mapping = \"block\"", "mapping = \"hybrid\"", "mapping = \"super_page\""] {
        let flows = r#"
[[flows]]
name = "mixed"
read_fraction = 0.5
request_size = "8KiB"
alignment = "4KiB"
working_set = 0.8
queue_depth = 8
requests = 1500
"#;
        let mut sim = Simulation::from_toml_str(&device(mapping, flows), &repo_root()).unwrap();
        // Invariants (maps agree both ways, block counters match, every valid page mapped)
        // hold in the middle of merges too.
        while !sim.step(2000).unwrap() {
            sim.check_state_invariants().unwrap_or_else(|e| panic!("{mapping}: {e}"));
        }
        sim.check_invariants().unwrap_or_else(|e| panic!("{mapping}: {e}"));
        let r = sim.run().unwrap();
        // Every page read was written (by the fill or the flow): nothing read unmapped.
        assert_eq!(r.device.flash.unmapped_reads, 0, "{mapping}");
    }
}

#[test]
fn same_seed_same_results() {
    let a = run(&device("mapping = \"hybrid\"", RANDOM_WRITES));
    let b = run(&device("mapping = \"hybrid\"", RANDOM_WRITES));
    assert_eq!(a.mapping, b.mapping);
    assert_eq!(a.device.writes.latency_us, b.device.writes.latency_us);
}

#[test]
fn super_page_read_modify_write_rewrites_the_rest_of_the_super_page() {
    let page = run(&device("", RANDOM_WRITES));
    let rmw = run(&device("mapping = \"super_page\"\nsuper_page_pages = 4", RANDOM_WRITES));
    let remap =
        run(&device("mapping = \"super_page\"\nsuper_page_pages = 4\nsuper_page_update = \"remap\"", RANDOM_WRITES));
    let m = rmw.mapping.as_ref().unwrap();
    eprintln!(
        "{m:?}: page {:.0} us, rmw {:.0} us, remap {:.0} us",
        mean_write_us(&page),
        mean_write_us(&rmw),
        mean_write_us(&remap)
    );
    assert_eq!(m.family, "super_page");
    // A 4 KiB update of a filled 4-page super-page reads and rewrites the other 3 pages.
    assert!(m.super_page_read_modify_writes > 1000);
    assert!(m.pages_copied_by_merges > 2 * m.super_page_read_modify_writes);
    assert!(mean_write_us(&rmw) > 1.5 * mean_write_us(&page));
    // Remapping only the updated page costs what page mapping costs.
    let r = remap.mapping.as_ref().unwrap();
    assert_eq!(r.super_page_read_modify_writes, 0);
    assert_eq!(remap.device.flash.programs, page.device.flash.programs);
}

#[test]
fn bad_mapping_options_are_refused_with_their_field() {
    let err = |mapping: &str, extra: &str| {
        let text = device(mapping, RANDOM_WRITES).replace("mode = \"fill\"", extra);
        match Simulation::from_toml_str(&text, &repo_root()) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {mapping} {extra}"),
        }
    };
    let e = err("mapping = \"hybrid\"\nlog_blocks_per_data_block = 0", "mode = \"fill\"");
    assert!(e.starts_with("ftl.log_blocks_per_data_block:"), "{e}");
    let e = err("mapping = \"block\"\nlog_blocks_per_data_block = 4", "mode = \"fill\"");
    assert!(e.starts_with("ftl.log_blocks_per_data_block:") && e.contains("hybrid"), "{e}");
    let e = err("mapping = \"block\"", "mode = \"steady\"");
    assert!(e.starts_with("precondition:") && e.contains("steady"), "{e}");
    let e = err("mapping = \"hybrid\"", "mode = \"fill\"\nlayout = \"spread\"");
    assert!(e.starts_with("precondition.layout:"), "{e}");
    let e = err("mapping = \"hybrid\"\npreemptible_gc = true", "mode = \"fill\"");
    assert!(e.starts_with("ftl.preemptible_gc:"), "{e}");
    let e = err("mapping = \"super_page\"\nsuper_page_pages = 3", "mode = \"fill\"");
    assert!(e.starts_with("ftl.super_page_pages:"), "{e}");
    let thin =
        device("mapping = \"block\"", RANDOM_WRITES).replace("over_provisioning = 0.2", "over_provisioning = 0.01");
    let e = Simulation::from_toml_str(&thin, &repo_root()).err().expect("refused").to_string();
    assert!(e.starts_with("ftl.over_provisioning:"), "{e}");
    let e = err("mapping = \"paged\"", "mode = \"fill\"");
    assert!(e.starts_with("ftl.mapping:"), "{e}");
    let pinned =
        device("mapping = \"block\"", &RANDOM_WRITES.replace("queue_depth = 8", "queue_depth = 8\nchannels = [0]"));
    let e = Simulation::from_toml_str(&pinned, &repo_root()).err().expect("refused").to_string();
    assert!(e.starts_with("flows[0].channels:"), "{e}");
}

#[test]
fn families_survive_cache_flushes_large_requests_and_an_empty_drive() {
    let flows = r#"
[[flows]]
name = "cached"
cache_mode = "write"
request_size = { mean = "24KiB", stdev = "16KiB" }
alignment = "512B"
working_set = 0.9
queue_depth = 16
requests = 2000
[[flows]]
name = "reader"
read_fraction = 1.0
request_size = "64KiB"
working_set = 0.9
queue_depth = 4
requests = 500
"#;
    for mapping in
        ["mapping = \"block\"", "mapping = \"hybrid\"\nlog_blocks_per_data_block = 2", "mapping = \"super_page\""]
    {
        for precondition in ["mode = \"fill\"", "mode = \"none\""] {
            let text = device(mapping, flows)
                .replace("mode = \"fill\"\noccupancy = 0.8", precondition)
                .replace("[ftl]", "[cache]\ncapacity = \"256KiB\"\n[ftl]");
            let mut sim = Simulation::from_toml_str(&text, &repo_root()).unwrap();
            while !sim.step(5000).unwrap() {
                sim.check_state_invariants().unwrap_or_else(|e| panic!("{mapping} {precondition}: {e}"));
            }
            sim.check_invariants().unwrap_or_else(|e| panic!("{mapping} {precondition}: {e}"));
            let r = sim.run().unwrap();
            assert_eq!(r.flows[0].requests, 2000, "{mapping} {precondition}");
            assert!(r.device.cache.flushes > 0, "{mapping} {precondition}: the cache flushed through the family");
        }
    }
}
