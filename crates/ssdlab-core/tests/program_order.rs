//! NAND programs the pages of a block in order (ONFI 4.2, section 3.4). Pages are allocated
//! when a write reaches its die's queue, so a scheduler that serves a later write first (a
//! higher priority, a translation write ahead of user writes, a fairer flow) would program a
//! block out of order. The scheduler issues a write only when no lower page of its block still
//! waits; `Simulation::check_invariants` counts any program below its block's cursor (and a
//! debug build asserts at once).

mod common;

use proptest::prelude::*;
use ssdlab_core::{Config, Simulation};

/// Flows of every priority writing (and reading) at once, on a device whose dies take writes of
/// several queues: priorities split the user-write queue, translation writes have their own.
fn mixed_priorities(scheduling: &str, extra: &str, flows: &[(&str, u32)]) -> String {
    let mut toml = format!(
        "seed = 3\n[controller]\nscheduling = \"{scheduling}\"\n[ftl]\nover_provisioning = 0.25\ncmt_capacity = \"2KiB\"\n{extra}\n\
         [flash]\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 32\n\
         pages_per_block = 32\npage_size = \"4KiB\"\n[precondition]\nmode = \"fill\"\noccupancy = 0.6\n"
    );
    for (priority, qd) in flows {
        toml.push_str(&format!(
            "[[flows]]\npriority = \"{priority}\"\nread_fraction = 0.2\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\n\
             queue_depth = {qd}\nrequests = 1500\n"
        ));
    }
    toml
}

fn run_checked(toml: &str) -> ssdlab_core::Results {
    let mut sim = Simulation::from_toml_str(toml, &common::repo_root()).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    loop {
        let done = sim.step(2000).unwrap_or_else(|e| panic!("{e}\n{toml}"));
        sim.check_invariants().unwrap_or_else(|e| panic!("{e}\n{toml}"));
        if done {
            break;
        }
    }
    sim.results()
}

#[test]
fn priority_scheduling_keeps_page_order_with_mixed_priorities() {
    let flows = [("urgent", 2), ("high", 4), ("medium", 8), ("low", 8)];
    let r = run_checked(&mixed_priorities("priority", "", &flows));
    assert!(r.device.flash.programs > 4000, "{}", r.device.flash.programs);
    // Priorities still matter: the urgent flow's writes wait less than the low one's.
    let (urgent, low) = (&r.flows[0].writes.latency_us, &r.flows[3].writes.latency_us);
    assert!(urgent.mean < low.mean, "urgent {:.0} us, low {:.0} us", urgent.mean, low.mean);
}

#[test]
fn open_channel_hosts_keep_page_order_under_priority_scheduling() {
    // The case that broke it (issue 16): an Open-Channel host FTL with flows of mixed priority.
    let toml = mixed_priorities("priority", "", &[("urgent", 2), ("low", 8)])
        .replace("seed = 3\n", "seed = 3\n[host]\ninterface = \"open_channel\"\n");
    run_checked(&toml);
}

proptest! {
    #![proptest_config(ProptestConfig { max_global_rejects: 10_000, ..common::proptest_config(24) })]

    #[test]
    fn every_scheduler_keeps_page_order(
        scheduling in prop::sample::select(vec!["fifo", "out-of-order", "priority", "flow-fair", "flin"]),
        mapping in prop::sample::select(vec!["page", "page", "block", "hybrid"]),
        pacing in prop::bool::ANY,
        priorities in prop::collection::vec(
            (prop::sample::select(vec!["urgent", "high", "medium", "low"]), 1u32..=8), 1..=4),
    ) {
        let extra = match mapping {
            "page" => format!("gc_pacing = {pacing}"),
            family => format!("mapping = \"{family}\""),
        };
        let toml = mixed_priorities(scheduling, &extra, &priorities);
        prop_assume!(Config::from_toml_str(&toml).is_ok());
        let r = run_checked(&toml);
        prop_assert!(r.device.flash.programs > 0);
    }
}
