//! Issue 12, "wrong data read back": every fuzzing reproducer of a data mismatch (under
//! `tests/reliability/corpus/`, loaded from there so each config has one source) runs with
//! `[data] emulate = true` and must read back exactly what the host last wrote, completing
//! every request. Each test names the root cause its reproducers exposed:
//!
//! - a read that misses the cache in part reads flash, and the controller merges the sectors
//!   the cache holds; the line could be flushed and dropped while the read was in flight, and
//!   the merge then found nothing (the flash page was older than the flushed sectors). The
//!   cached sectors are now taken when the read is issued (F11a/b/c, most `inv-*`);
//! - a read of an unmapped page is timed on a stand-in page, and a write given that very page
//!   while the read was in flight made the cache keep the read's zeros (`inv-31-00196`);
//! - GC or a merge erased (and reused) a block while a read translated to it was still queued
//!   at its die: the read returned another page's data or zeros. The erase now waits for the
//!   block's reads, as MQSim's `Ongoing_user_read_count` makes it (`inv-32-01300`, ...);
//! - a read joined a read-ahead of its page after a write had replaced that page in flash, or
//!   its cached sectors were dropped before the read-ahead landed (`inv-32-01571`,
//!   `inv-32-00175`).
//! - a read that found sectors cached when issued laid them over its page for the host, and
//!   the cache then kept that page: when a write replaced those sectors (forgetting them in the
//!   cache) before the read was translated to the page the write programmed, the older cached
//!   sectors went back into the cache (campaign `data-12-000071`, `data-12-000399`).

use std::path::{Path, PathBuf};

use ssdlab_core::{Config, Results, Simulation};

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reliability/corpus").join(rel)
}

/// Runs a corpus config and checks that every read sector matched, something was verified, and
/// every flow completed all its requests.
fn assert_reads_back_what_was_written(rel: &str) -> Results {
    let path = corpus(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let config = Config::from_toml_str(&text).unwrap_or_else(|e| panic!("{rel}: config rejected: {e}"));
    let mut sim =
        Simulation::from_toml_str(&text, path.parent().expect("a folder")).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let r = sim.run().unwrap_or_else(|e| panic!("{rel}: run failed: {e}"));
    sim.check_invariants().unwrap_or_else(|e| panic!("{rel}: invariants: {e}"));
    let d = r.data.as_ref().expect("data.emulate is on in every reproducer");
    assert_eq!(
        d.mismatched_sectors, 0,
        "{rel}: {} sectors read back wrong, first: {:?}",
        d.mismatched_sectors, d.first_mismatch
    );
    assert!(d.first_mismatch.is_none());
    assert!(d.verified_sectors > 0, "{rel}: nothing was checked");
    assert!(r.warnings.iter().all(|w| !w.contains("data emulation")), "{rel}: {:?}", r.warnings);
    // Every request issued completes (the run ends only then); with no time limit, every
    // request asked for is issued.
    for (flow, want) in r.flows.iter().zip(&config.flows) {
        if let (Some(n), None, None) = (want.requests, want.duration.as_ref(), config.run.max_simulated_time.as_ref()) {
            assert_eq!(flow.requests, n, "{rel}: flow {} completed {} of {n} requests", flow.name, flow.requests);
        }
    }
    r
}

#[test]
fn partial_cache_hit_read_keeps_sectors_of_a_line_flushed_meanwhile_banked_dram() {
    // F11a: one flow, write-read cache, 4-way set-associative, banked DRAM, QD 16: 3 sectors of
    // LBA 57329 read as zeros (the line was flushed and dropped while the read waited for its
    // DRAM buffer). Also the minimised inv-32-01583.
    let r = assert_reads_back_what_was_written("findings/F11a-data-mismatch-banked-dram.toml");
    assert_eq!(r.data.as_ref().unwrap().skipped_sectors, 0, "QD 16 of one flow: every read is defined here");
    assert_reads_back_what_was_written("invariants/data_mismatch/inv-32-01583-min.toml");
}

#[test]
fn partial_cache_hit_read_keeps_flushed_sectors_under_block_mapping() {
    // F11b (= combo2-2-00651-min): block mapping, UFS, two write-caching flows: LBA 202 read as
    // zeros.
    assert_reads_back_what_was_written("findings/F11b-data-mismatch-block-mapping.toml");
    assert_reads_back_what_was_written("data_mismatch/combo2-2-00651.toml");
}

#[test]
fn partial_cache_hit_read_keeps_flushed_sectors_under_super_page_remap() {
    // F11c (= inv-32-01877-min): super-page remap, serial DRAM: 15 sectors of older versions.
    assert_reads_back_what_was_written("findings/F11c-data-mismatch-super-page-serial.toml");
    assert_reads_back_what_was_written("invariants/data_mismatch/inv-32-01877.toml");
}

#[test]
fn unmapped_read_does_not_fill_the_cache_when_a_write_takes_its_stand_in_page() {
    assert_reads_back_what_was_written("invariants/data_mismatch/inv-31-00196.toml");
}

#[test]
fn a_block_is_not_erased_while_reads_of_it_are_in_flight() {
    // Open-Channel with flow-fair scheduling: a read waited ~10 ms at its die while GC moved its
    // page, erased the block and programmed LBA 576 there.
    assert_reads_back_what_was_written("invariants/data_mismatch/inv-32-01300.toml");
    assert_reads_back_what_was_written("invariants/data_mismatch/inv-31-00221.toml");
    assert_reads_back_what_was_written("invariants/data_mismatch/inv-31-00255.toml");
    assert_reads_back_what_was_written("invariants/data_mismatch/inv-32-00407.toml");
    assert_reads_back_what_was_written("invariants/data_mismatch/inv-32-00804.toml");
}

/// More than 255 reads in flight on one block (each block's count is one byte, the rest goes
/// on in a map; `sim/read_pins.rs`): a thousand queued reads of 14 pages beside a writer of the
/// same pages, GC erasing all along. Checked when written: up to 354 reads were in flight on
/// one block, and the count went past 255 about 10,000 times.
#[test]
fn hundreds_of_reads_in_flight_on_one_block_read_back_right() {
    let flow = |name: &str, read: f64, depth: u32| {
        format!(
            "[[flows]]\nname = \"{name}\"\nread_fraction = {read}\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\naddress = \"uniform\"\nworking_set = 0.03\nqueue_depth = {depth}\nrequests = 20000\n"
        )
    };
    let text = format!(
        "seed = 3\n[flash]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 1\nblocks_per_plane = 32\npages_per_block = 16\npage_size = \"4KiB\"\n[ftl]\nover_provisioning = 0.2\n[precondition]\nmode = \"fill\"\noccupancy = 0.9\n[data]\nemulate = true\n{}{}",
        flow("reads", 1.0, 1024),
        flow("writes", 0.0, 8)
    );
    let mut sim = Simulation::from_toml_str(&text, Path::new(".")).expect("valid config");
    let r = sim.run().expect("the run completes");
    sim.check_invariants().expect("invariants hold");
    let d = r.data.as_ref().expect("data emulation is on");
    assert_eq!(d.mismatched_sectors, 0, "first mismatch: {:?}", d.first_mismatch);
    assert!(d.verified_sectors > 0);
    assert_eq!((r.flows[0].requests, r.flows[1].requests), (20_000, 20_000));
    assert!(r.device.gc.blocks_erased > 0, "GC erased blocks while the reads were queued");
}

#[test]
fn a_read_joins_only_a_current_read_ahead_and_keeps_its_cached_sectors() {
    assert_reads_back_what_was_written("invariants/data_mismatch/inv-32-01571.toml");
    assert_reads_back_what_was_written("invariants/data_mismatch/inv-32-00175.toml");
}

#[test]
fn every_other_data_mismatch_reproducer_reads_back_right() {
    for rel in [
        "data_mismatch/combo2-2-00651-min.toml",
        "invariants/data_mismatch/inv-31-00288.toml",
        "invariants/data_mismatch/inv-31-00371-min.toml",
        "invariants/data_mismatch/inv-31-00371.toml",
        "invariants/data_mismatch/inv-31-00394-min.toml",
        "invariants/data_mismatch/inv-31-00394.toml",
        "invariants/data_mismatch/inv-32-00073.toml",
        "invariants/data_mismatch/inv-32-00774.toml",
        "invariants/data_mismatch/inv-32-01256.toml",
        "invariants/data_mismatch/inv-32-01583.toml",
        "invariants/data_mismatch/inv-32-01877-min.toml",
    ] {
        assert_reads_back_what_was_written(rel);
    }
}

/// Every data-mismatch config in the corpus is listed above (a new one must get a test).
#[test]
fn every_corpus_data_mismatch_config_is_covered() {
    let this = include_str!("data_integrity_regressions.rs");
    let mut files = Vec::new();
    for dir in ["invariants/data_mismatch", "data_mismatch"] {
        for entry in std::fs::read_dir(corpus(dir)).expect("corpus folder") {
            let name = entry.expect("entry").file_name().to_string_lossy().into_owned();
            if name.ends_with(".toml") {
                files.push(format!("{dir}/{name}"));
            }
        }
    }
    let missing: Vec<_> = files.iter().filter(|f| !this.contains(&format!("\"{f}\""))).collect();
    assert!(missing.is_empty(), "reproducers without a regression test: {missing:?}");
}

#[test]
fn read_cache_fill_does_not_keep_an_older_version_super_page_remap() {
    // Campaign data-12-000071: super-page remap, per-flow domains, a read-caching flow beside
    // uncached and write-caching ones: 39 sectors of LBA 4880 read from the cache held an older
    // write version.
    assert_reads_back_what_was_written("campaign/data-12-000071-super-page-read-cache.toml");
}

#[test]
fn read_ahead_into_a_partitioned_cache_keeps_current_data() {
    // Campaign data-12-000399: page mapping, direct-mapped partitioned cache with read-ahead,
    // two read-caching flows beside a write-caching one: LBA 744 read from the cache as zeros.
    assert_reads_back_what_was_written("campaign/data-12-000399-read-ahead-partitioned.toml");
}

/// A flush finished on a page whose line a read-ahead had reserved meanwhile (the page's
/// sectors were not all cached, so the read-ahead claimed the same line): the line was removed
/// with the read-ahead still on its way, and its landing panicked ("a line being read ahead
/// stays cached"). `CachePartition::flush_done` now keeps a line with a page pending.
#[test]
fn a_flush_ending_under_a_pending_read_ahead_keeps_the_line() {
    assert_reads_back_what_was_written("campaign/data-12-002343-flush-done-with-read-ahead.toml");
}

/// A second reclaim unit handle's first write after steady-state preconditioning found its
/// plane at the GC reserve with no program under way to start GC, and the run stopped "out of
/// space" (fuzz seed 28002, run 333): a write that stalls now starts GC itself.
#[test]
fn a_stalled_write_starts_gc_when_no_program_will() {
    let r = assert_reads_back_what_was_written("campaign/data-28002-000333-fdp-handle-stall.toml");
    assert!(r.device.gc.blocks_erased > 0, "GC ran");
}
