//! Property: on random small devices under GC pressure (high occupancy, little spare space),
//! with static wear leveling at a low threshold and random read/write mixes (partial pages,
//! the data cache, the cached mapping table, several flows), every host read returns the bytes
//! the host last wrote, and every read sector is checked unless the host's order leaves it
//! undefined (a write to its page in flight with the read); with one request at a time, all are.
//! The second property runs the same cases under the block, hybrid and super-page mapping
//! families, whose merges and read-modify-writes move pages instead of GC.

mod common;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use ssdlab_core::{SimError, Simulation};

#[derive(Debug, Clone)]
struct Case {
    toml: String,
    /// One flow at queue depth 1: no read can overlap a write.
    serial: bool,
}

fn flow_strategy() -> impl Strategy<Value = (String, u32)> {
    (
        0.2f64..=0.7,
        1u32..=24,
        prop_oneof![Just("uniform"), Just("sequential"), Just("hotcold")],
        1u32..=8,
        300u64..=1500,
        prop::bool::ANY,
        prop::sample::select(vec!["off", "write", "read", "write-read"]),
    )
        .prop_map(|(read, sectors, address, qd, requests, aligned, cache_mode)| {
            let mut flow = format!(
                "[[flows]]\ncache_mode = \"{cache_mode}\"\nread_fraction = {read:.3}\nrequest_size = \"{sectors}sectors\"\naddress = \"{address}\"\nqueue_depth = {qd}\nrequests = {requests}\n"
            );
            if address == "hotcold" {
                flow.push_str("hot_fraction = 0.1\nhot_traffic = 0.9\n");
            }
            if aligned {
                flow.push_str("alignment = \"4KiB\"\n");
            }
            (flow, qd)
        })
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        (1u32..=2, 1u32..=2, 1u32..=2),
        (24u32..=40, prop_oneof![Just(8u32), Just(16)], prop_oneof![Just("2KiB"), Just("4KiB"), Just("8KiB")]),
        (
            0.15f64..0.3,
            prop::sample::select(vec!["greedy", "random-p", "rga", "fifo", "cost-benefit"]),
            2u32..=6,
            prop::bool::ANY,
            prop::bool::ANY,
            prop::bool::ANY,
            prop_oneof![Just("none"), Just("fill")],
            0.5f64..=0.95,
        ),
        (prop::bool::ANY, prop::sample::select(vec!["32KiB", "128KiB"]), prop::bool::ANY, prop::bool::ANY),
        prop::collection::vec(flow_strategy(), 1..=2),
        0u64..1 << 40,
    )
        .prop_map(
            |(
                (chips, planes, channels),
                (blocks, pages, page_size),
                (op, gc_policy, wl_threshold, ideal, preemptible, copyback, precondition, occupancy),
                (suspension, cache, partitioned, per_flow_domains),
                flows,
                seed,
            )| {
                let serial = flows.len() == 1 && flows[0].1 == 1;
                let mut toml = format!(
                    r#"
seed = {seed}
[flash]
channels = {channels}
chips_per_channel = {chips}
dies_per_chip = 1
planes_per_die = {planes}
blocks_per_plane = {blocks}
pages_per_block = {pages}
page_size = "{page_size}"
suspension = "{suspension}"
[ftl]
over_provisioning = {op:.3}
gc_policy = "{gc_policy}"
static_wear_leveling = true
static_wear_leveling_threshold = {wl_threshold}
ideal_mapping = {ideal}
cmt_capacity = "128B"
preemptible_gc = {preemptible}
copyback = {copyback}
address_domains = "{domains}"
[cache]
capacity = "{cache}"
sharing = "{sharing}"
[precondition]
mode = "{precondition}"
occupancy = {occupancy:.2}
[run]
stall_timeout = "60s"
[data]
emulate = true
memory_limit = "64KiB"
"#,
                    suspension = if suspension { "program-erase" } else { "none" },
                    domains = if per_flow_domains { "per-flow" } else { "shared" },
                    sharing = if partitioned { "partitioned" } else { "shared" },
                    occupancy = if precondition == "fill" { occupancy } else { 0.0 },
                );
                for (flow, _) in &flows {
                    toml.push_str(flow);
                }
                Case { toml, serial }
            },
        )
}

/// A case under a non-page mapping family (block-mapped families have no preemptible GC).
fn family_case_strategy() -> impl Strategy<Value = Case> {
    (
        case_strategy(),
        prop::sample::select(vec!["block", "hybrid", "super_page", "super_page remap"]),
        1u32..=4,
        prop::bool::ANY,
    )
        .prop_map(|(mut case, family, logs, span_all_planes)| {
            let mut ftl = match family {
                "super_page remap" => "[ftl]\nmapping = \"super_page\"\nsuper_page_update = \"remap\"\n".to_string(),
                "hybrid" => format!("[ftl]\nmapping = \"hybrid\"\nlog_blocks_per_data_block = {logs}\n"),
                f => format!("[ftl]\nmapping = \"{f}\"\n"),
            };
            if family.starts_with("super_page") && span_all_planes {
                // One page on every plane of the device (the default spans a die's planes).
                let planes: u32 = ["channels", "chips_per_channel", "planes_per_die"]
                    .iter()
                    .map(|key| {
                        let at = case.toml.find(&format!("\n{key} = ")).expect("key") + key.len() + 4;
                        case.toml[at..].split('\n').next().unwrap().parse::<u32>().unwrap()
                    })
                    .product();
                ftl.push_str(&format!("super_page_pages = {planes}\n"));
            }
            case.toml = case.toml.replacen("[ftl]\n", &ftl, 1);
            if !family.starts_with("super_page") {
                case.toml = case.toml.replace("preemptible_gc = true", "preemptible_gc = false");
            }
            case
        })
}

/// A page-mapped case with Flexible Data Placement (each flow on a random handle), an SLC write
/// cache that folds as the host writes, and read latency from flash reliability on an aged drive
/// with read reclaim at a low threshold: GC keeps handles apart, folding and read reclaim move
/// blocks while the host reads and writes.
fn placement_case_strategy() -> impl Strategy<Value = Case> {
    (case_strategy(), 1u32..=4, prop::collection::vec(0u32..4, 2), 0u32..=30, prop::bool::ANY, 0u32..=3).prop_map(
        |(mut case, handles, flow_handles, reclaim_bits, reliability, slc_blocks)| {
            case.toml.push_str(&format!("[ftl.fdp]\nreclaim_unit_handles = {handles}\n"));
            if slc_blocks > 0 {
                // An SLC cache (MLC: half-page SLC blocks) folded as host writes come.
                case.toml.push_str(&format!("[flash.slc_cache]\nblocks_per_plane = {slc_blocks}\n"));
            }
            if reliability {
                case.toml.push_str(&format!(
                    "[flash.reliability]\npe_cycles_at_start = 8000\ndata_age_days_at_start = 60\nread_reclaim_bits = {reclaim_bits}\n"
                ));
            }
            let mut flows = case.toml.split("[[flows]]\n");
            let mut toml = flows.next().unwrap_or_default().to_string();
            for (flow, h) in flows.zip(&flow_handles) {
                toml.push_str(&format!("[[flows]]\nplacement_handle = {}\n{flow}", h % handles));
            }
            case.toml = toml;
            case
        },
    )
}

fn check_case(case: &Case) -> Result<(), TestCaseError> {
    let mut sim = match Simulation::from_toml_str(&case.toml, &common::repo_root()) {
        Ok(sim) => sim,
        // Geometries with too little spare space for GC are refused; not this test's subject.
        Err(SimError::Config(e)) if e.path.starts_with("ftl") => return Err(TestCaseError::reject(e.to_string())),
        Err(e) => return Err(TestCaseError::fail(format!("{e}\n{}", case.toml))),
    };
    let r = match sim.run() {
        Ok(r) => r,
        // A workload pinned to too little space can run out of it; that is reported, not wrong data.
        Err(SimError::EndOfLife(_)) => return Err(TestCaseError::reject("out of space")),
        Err(e) => return Err(TestCaseError::fail(format!("{e}\n{}", case.toml))),
    };
    sim.check_invariants().map_err(TestCaseError::fail)?;
    let d = r.data.as_ref().expect("data section");
    prop_assert_eq!(d.mismatched_sectors, 0, "{:?}\n{}", d.first_mismatch, case.toml);
    let read_sectors = r.device.reads.bytes / 512;
    prop_assert_eq!(d.verified_sectors + d.skipped_sectors, read_sectors, "{}", case.toml);
    if case.serial {
        prop_assert_eq!(d.skipped_sectors, 0, "{}", case.toml);
    }
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(48))]

    #[test]
    fn reads_return_what_the_host_last_wrote(case in case_strategy()) {
        check_case(&case)?;
    }

    #[test]
    fn reads_return_what_the_host_last_wrote_under_every_mapping_family(case in family_case_strategy()) {
        check_case(&case)?;
    }

    #[test]
    fn reads_return_what_the_host_last_wrote_with_placement_handles_slc_cache_and_read_reclaim(case in placement_case_strategy()) {
        check_case(&case)?;
    }
}
