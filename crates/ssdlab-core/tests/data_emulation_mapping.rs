//! Data transfer emulation under the block, hybrid and super-page mapping families: every host
//! read returns what the host last wrote through their merges (switch, partial and full merges,
//! super-page read-modify-writes), whose copies move the stored bytes and whose erases drop them.

mod common;

use common::run;
use ssdlab_core::data::DataSummary;
use ssdlab_core::Results;

/// 1 channel x 2 chips x 2 planes x 32 blocks x 16 pages of 4 KiB, 15 % over-provisioning
/// (enough spare blocks per plane for block-mapped merges), a CMT of a few entries.
fn device(mapping: &str) -> String {
    format!(
        r#"
seed = 5
{flash}
[ftl]
over_provisioning = 0.15
cmt_capacity = "256B"
{mapping}
[precondition]
mode = "none"
[data]
emulate = true
"#,
        flash = common::flash([1, 2, 1, 2, 32, 16], "4KiB")
    )
}

fn data(r: &Results) -> &DataSummary {
    r.data.as_ref().expect("results.json has data with data.emulate")
}

fn read_sectors(r: &Results) -> u64 {
    r.device.reads.bytes / 512
}

/// One request at a time: every read sector is checked and holds the host's last write.
fn assert_all_reads_verified(r: &Results) {
    let d = data(r);
    assert_eq!(d.mismatched_sectors, 0, "{:?}", d.first_mismatch);
    assert_eq!(d.skipped_sectors, 0);
    assert_eq!(d.verified_sectors, read_sectors(r));
    assert!(d.verified_sectors > 1000, "{d:?}");
    assert!(r.warnings.iter().all(|w| !w.contains("data emulation")), "{:?}", r.warnings);
}

/// Small random writes (partial pages too) and reads, one at a time.
const RANDOM: &str = r#"
[[flows]]
read_fraction = 0.4
request_size = { mean = "6KiB", stdev = "4KiB" }
queue_depth = 1
requests = 4000
"#;

#[test]
fn block_mapping_full_merges_keep_the_data() {
    let r = run(&format!("{}{RANDOM}", device("mapping = \"block\"")));
    let m = r.mapping.as_ref().expect("mapping section");
    assert!(m.merges.full > 500, "{m:?}");
    assert!(m.pages_copied_by_merges > 1000 && m.erases_by_merges > 500, "{m:?}");
    assert!(m.host_pages_in_merges > 0 && m.host_pages_in_place > 0, "{m:?}");
    assert_all_reads_verified(&r);
}

#[test]
fn hybrid_mapping_switch_partial_and_full_merges_keep_the_data() {
    // A sequential flow fills log blocks in order (switch and partial merges), a random one
    // scatters pages over them (full merges); two log blocks per data block.
    let sequential = "[[flows]]\nread_fraction = 0.3\nrequest_size = \"16KiB\"\naddress = \"sequential\"\nqueue_depth = 1\nrequests = 3000\n";
    let flows = format!("{sequential}{}", RANDOM.replace("requests = 4000", "requests = 3000"));
    let r = run(&format!("{}{flows}", device("mapping = \"hybrid\"\nlog_blocks_per_data_block = 2")));
    let m = r.mapping.as_ref().expect("mapping section");
    assert!(m.merges.switch + m.merges.partial > 0, "{m:?}");
    assert!(m.merges.full > 100, "{m:?}");
    assert!(m.host_pages_to_log_blocks > 1000 && m.pages_copied_by_merges > 1000, "{m:?}");
    let d = data(&r);
    assert_eq!(d.mismatched_sectors, 0, "{:?}", d.first_mismatch);
    assert_eq!(d.verified_sectors + d.skipped_sectors, read_sectors(&r));
    assert!(d.verified_sectors > 9 * read_sectors(&r) / 10, "{d:?}");
}

#[test]
fn super_page_read_modify_writes_keep_the_data() {
    // Two planes per die: super-pages of 2 pages by default, 4 here (one per plane).
    let r = run(&format!("{}{RANDOM}", device("mapping = \"super_page\"\nsuper_page_pages = 4")));
    let m = r.mapping.as_ref().expect("mapping section");
    assert!(m.super_page_read_modify_writes > 1000 && m.pages_copied_by_merges > 1000, "{m:?}");
    assert!(r.device.gc.pages_moved > 0, "copies and GC both move pages");
    assert_all_reads_verified(&r);
}

#[test]
fn super_page_remapped_updates_keep_the_data() {
    let mapping = "mapping = \"super_page\"\nsuper_page_pages = 4\nsuper_page_update = \"remap\"";
    let r = run(&format!("{}{RANDOM}", device(mapping)));
    assert_eq!(r.mapping.as_ref().expect("mapping section").super_page_read_modify_writes, 0);
    assert!(r.device.gc.pages_moved > 0);
    assert_all_reads_verified(&r);
}

#[test]
fn every_family_keeps_the_data_with_a_cache_concurrent_flows_and_a_filled_drive() {
    let flows = common::cached_and_direct_flows(3000, "address = \"hotcold\"\nhot_fraction = 0.2\nhot_traffic = 0.8");
    for mapping in [
        "mapping = \"block\"",
        "mapping = \"hybrid\"",
        "mapping = \"super_page\"",
        "mapping = \"super_page\"\nsuper_page_update = \"remap\"",
    ] {
        let text = format!("{}{flows}", device(mapping)).replace("mode = \"none\"", "mode = \"fill\"\noccupancy = 0.7");
        let r = run(&text);
        let d = data(&r);
        assert_eq!(d.mismatched_sectors, 0, "{mapping}: {:?}", d.first_mismatch);
        assert_eq!(d.verified_sectors + d.skipped_sectors, read_sectors(&r), "{mapping}");
        assert!(d.verified_sectors > 8 * read_sectors(&r) / 10, "{mapping}: {d:?}");
    }
}
