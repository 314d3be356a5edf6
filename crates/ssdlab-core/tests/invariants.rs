//! Invariants on random small devices and workloads: every submitted request completes exactly
//! once; valid + invalid + free pages = total; the mapping and reverse map agree; the run never
//! goes back in time; the same seed gives identical results.

mod common;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use ssdlab_core::{Config, SimError, Simulation};

#[derive(Debug, Clone)]
struct Case {
    toml: String,
}

fn flow_strategy() -> impl Strategy<Value = String> {
    (
        0.0f64..=1.0,
        1u32..=40,
        prop_oneof![Just("uniform"), Just("sequential"), Just("hotcold")],
        prop_oneof![(1u32..=16).prop_map(|qd| format!("queue_depth = {qd}")), (1u32..=200).prop_map(|k| format!("rate = \"{k}k/s\""))],
        1u64..=800,
        prop::bool::ANY,
        prop::sample::select(vec!["urgent", "high", "medium", "low"]),
        prop::sample::select(vec!["off", "write", "read", "write-read"]),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(read, sectors, address, arrival, requests, aligned, priority, cache_mode, partitioned)| {
            let mut flow = format!(
                "[[flows]]\npriority = \"{priority}\"\ncache_mode = \"{cache_mode}\"\nread_fraction = {read:.3}\nrequest_size = \"{sectors}sectors\"\naddress = \"{address}\"\n{arrival}\nrequests = {requests}\n"
            );
            if address == "hotcold" {
                flow.push_str("hot_fraction = 0.2\nhot_traffic = 0.8\n");
            }
            // Unaligned flows start at any sector, as before the default became the request
            // size (issue 19): the sequences of cases proptest draws stay those validated.
            flow.push_str(if aligned { "alignment = \"4KiB\"\n" } else { "alignment = \"512B\"\n" });
            if partitioned {
                flow.push_str("channels = [0]\nplanes = [0]\n");
            }
            flow
        })
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        (1u32..=3, 1u32..=2, 1u32..=2, 1u32..=2),
        (16u32..=32, prop_oneof![Just(4u32), Just(8), Just(16), Just(32)], prop_oneof![Just("2KiB"), Just("4KiB"), Just("8KiB")]),
        (
            0.30f64..0.45,
            0.0f64..=1.0,
            prop::bool::ANY,
            prop_oneof![Just("0ns"), Just("2us")],
            prop::sample::select(vec!["greedy", "random", "random-p", "random-pp", "rga", "fifo", "cost-benefit"]),
            prop::sample::select(vec![2u32, 100]),
            prop::bool::ANY,
            prop::sample::select(vec!["fifo", "out-of-order", "priority", "flow-fair", "flin"]),
            prop::sample::select(vec!["round-robin", "weighted-round-robin"]),
            prop::bool::ANY,
            (
                prop::sample::select(vec![32u32, 64, 256]),
                prop::sample::select(vec!["shared", "partitioned"]),
                prop::sample::select(vec!["nvme", "sata", "ufs"]),
                prop::sample::select(vec!["none", "program", "erase", "program-erase"]),
                prop::sample::select(vec!["independent", "one-per-chip"]),
                prop::sample::select(vec!["in-order", "data-out-first"]),
            ),
        ),
        prop::collection::vec(flow_strategy(), 1..=3),
        any::<u64>(),
    )
        .prop_map(|((ch, chips, dies, planes), (blocks, pages, page_size), (op, occupancy, spread, dispatch, policy, wl_threshold, ideal, scheduling, arbitration, preemptible, (cache_kib, cache_sharing, interface, suspension, die_commands, channel_arbitration)), flows, seed)| {
            let layout = if spread { "spread" } else { "packed" };
            let toml = format!(
                "seed = {seed}\n[host]\ninterface = \"{interface}\"\nsata_processing_delay = \"2us\"\narbitration = \"{arbitration}\"\nmax_requests_in_device = 6\n[controller]\nscheduling = \"{scheduling}\"\ndispatch_read = \"{dispatch}\"\ndispatch_write = \"{dispatch}\"\n[ftl]\npreemptible_gc = {preemptible}\ncopyback = {preemptible}\nover_provisioning = {op:.3}\ngc_policy = \"{policy}\"\nstatic_wear_leveling_threshold = {wl_threshold}\nideal_mapping = {ideal}\ncmt_capacity = \"1KiB\"\n[flash]\nchannels = {ch}\nchips_per_channel = {chips}\ndies_per_chip = {dies}\nplanes_per_die = {planes}\nblocks_per_plane = {blocks}\npages_per_block = {pages}\npage_size = \"{page_size}\"\nsuspension = \"{suspension}\"\ndie_commands = \"{die_commands}\"\nchannel_arbitration = \"{channel_arbitration}\"\n[flash.timing]\nsuspend_program = \"10us\"\nsuspend_erase = \"20us\"\nsuspend_program_min_remaining = \"50us\"\nsuspend_erase_min_remaining = \"100us\"\n[precondition]\nmode = \"fill\"\noccupancy = {occupancy:.3}\nlayout = \"{layout}\"\n[cache]\ncapacity = \"{cache_kib}KiB\"\nsharing = \"{cache_sharing}\"\n{}",
                flows.join("\n")
            );
            Case { toml }
        })
}

fn results_without_wall_time(sim: &Simulation) -> String {
    let mut value = serde_json::to_value(sim.results()).unwrap();
    // Wall-clock times are the only fields allowed to differ between identical runs.
    value["wall_seconds"] = serde_json::Value::from(0.0);
    value["setup_wall_seconds"] = serde_json::Value::from(0.0);
    value["precondition"]["wall_seconds"] = serde_json::Value::from(0.0);
    serde_json::to_string(&value).unwrap()
}

proptest! {
    // A fixed seed keeps CI reproducible. Explore further with, for example,
    // PROPTEST_CASES=5000 SSDLAB_PROPTEST_SEED=7 cargo test --release --test invariants
    #![proptest_config(ProptestConfig {
        // About half the random geometries are (rightly) refused for too little spare space.
        max_global_rejects: 1_000_000,
        ..common::proptest_config(96)
    })]

    #[test]
    fn random_devices_and_workloads_keep_the_invariants(case in case_strategy()) {
        let config = Config::from_toml_str(&case.toml);
        // Some random geometries are too small for their over-provisioning; those must be refused
        // cleanly, which is checked elsewhere.
        prop_assume!(config.is_ok());
        let mut sim = Simulation::from_toml_str(&case.toml, &common::repo_root()).unwrap();
        sim.enable_completion_log();
        let mut last_time = 0;
        loop {
            let done = match sim.step(500) {
                Ok(done) => done,
                // A flow pinned to a few planes may fill them: a clean error, and the FTL's state
                // is still consistent.
                Err(SimError::EndOfLife(message)) if case.toml.contains("channels = [0]") && message.contains("out of space") => {
                    prop_assert!(sim.check_state_invariants().is_ok());
                    return Ok(());
                }
                Err(e) => return Err(TestCaseError::fail(format!("{e}\n{}", case.toml))),
            };
            prop_assert!(sim.simulated_time() >= last_time, "time went back");
            // Small runs end within a few million events; more means the model has stopped
            // making progress (a livelock).
            prop_assert!(sim.events() < 5_000_000, "no end after {} events:\n{}", sim.events(), case.toml);
            last_time = sim.simulated_time();
            if let Err(e) = sim.check_invariants() {
                prop_assert!(false, "invariant broken mid-run: {e}\n{}", case.toml);
            }
            if done {
                break;
            }
        }
        let results = sim.results();
        // Only flows pinned to a few planes can leave background writes without space.
        if !case.toml.contains("channels = [0]") {
            prop_assert!(results.warnings.iter().all(|w| !w.contains("background flash writes")), "{:?}", results.warnings);
        }
        let issued: u64 = results.flows.iter().map(|f| f.requests).sum();
        let mut log = sim.completion_log().to_vec();
        prop_assert_eq!(log.len() as u64, issued, "completions != submissions");
        log.sort_unstable();
        log.dedup();
        prop_assert_eq!(log.len() as u64, issued, "a request completed twice");
        for f in &results.flows {
            prop_assert_eq!(f.reads.count + f.writes.count, f.requests);
        }

        let mut again = Simulation::from_toml_str(&case.toml, &common::repo_root()).unwrap();
        again.run().unwrap();
        prop_assert_eq!(results_without_wall_time(&sim), results_without_wall_time(&again));
    }
}
