//! Per-flow resource partitioning and address domains: flows confined to their own channels do
//! not interfere on the back end.

mod common;

use common::{repo_root, run, SMALL_DEVICE};
use ssdlab_core::{Config, SimError, Simulation};

fn device() -> String {
    format!("{SMALL_DEVICE}\n[ftl]\nover_provisioning = 0.2\nideal_mapping = true\naddress_domains = \"per-flow\"\n[precondition]\nmode = \"fill\"\noccupancy = 1.0\n")
        .replacen("[ftl]\nover_provisioning = 0.2\n", "", 1)
}

const VICTIM: &str = "[[flows]]\nname = \"victim\"\nread_fraction = 1.0\nqueue_depth = 2\nduration = \"50ms\"\n";
const AGGRESSOR: &str = "[[flows]]\nname = \"aggressor\"\nread_fraction = 1.0\nqueue_depth = 64\nduration = \"50ms\"\n";

#[test]
fn flows_on_separate_channels_do_not_slow_each_other_down() {
    let isolated = run(&format!("{}\n{VICTIM}channels = [0]\n{AGGRESSOR}channels = [1]\n", device()));
    let shared = run(&format!("{}\n{VICTIM}\n{AGGRESSOR}", device()));
    let (i, s) = (isolated.flows[0].reads.latency_us.mean, shared.flows[0].reads.latency_us.mean);
    assert!(i * 2.0 < s, "victim alone on channel 0: {i:.0} us; sharing every channel: {s:.0} us");
    // Isolated, the victim sees what it sees when the other flow is nearly idle.
    let idle = AGGRESSOR.replace("queue_depth = 64", "rate = \"10/s\"");
    let alone = run(&format!("{}\n{VICTIM}channels = [0]\n{idle}channels = [1]\n", device()));
    let a = alone.flows[0].reads.latency_us.mean;
    assert!((i / a - 1.0).abs() < 0.1, "isolated {i:.1} us vs alone {a:.1} us");
}

#[test]
fn a_partitioned_flows_writes_land_on_its_planes_only() {
    let writer = "[[flows]]\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 4\nrequests = 2000\nchannels = [1]\nplanes = [0]\n";
    // A fresh drive: in steady state this flow's whole working set would have to live on its
    // quarter of the planes.
    let text = format!("precondition = \"none\"\n{SMALL_DEVICE}\n{writer}")
        .replace("over_provisioning = 0.2", "over_provisioning = 0.2\nideal_mapping = true");
    let r = run(&text);
    let u = &r.device.flash.channel_utilisation;
    assert_eq!(u[0], 0.0, "nothing on channel 0: {u:?}");
    assert!(u[1] > 0.0);
}

#[test]
fn partition_ids_must_exist() {
    let text = format!("{SMALL_DEVICE}\n[[flows]]\nqueue_depth = 1\nrequests = 1\nchannels = [0, 5]\n");
    Config::from_toml_str(&text).unwrap();
    let Err(SimError::Config(e)) = Simulation::from_toml_str(&text, &repo_root()) else { panic!("accepted") };
    assert_eq!(e.path, "flows[0].channels");
    assert!(e.reason.contains("id 5 does not exist"), "{}", e.reason);
    let text = format!("{SMALL_DEVICE}\n[[flows]]\nqueue_depth = 1\nrequests = 1\nplanes = []\n");
    let Err(SimError::Config(e)) = Simulation::from_toml_str(&text, &repo_root()) else { panic!("accepted") };
    assert_eq!(e.path, "flows[0].planes");
}

#[test]
fn a_domain_that_cannot_fit_its_planes_is_refused() {
    let text = format!("{}\n{VICTIM}channels = [0]\nchips = [0]\nplanes = [0]\n{AGGRESSOR}", device());
    let Err(SimError::Config(e)) = Simulation::from_toml_str(&text, &repo_root()) else { panic!("accepted") };
    assert_eq!(e.path, "ftl.address_domains");
    assert!(e.reason.contains("give the flows more planes"), "{}", e.reason);
}

/// Found by the property tests: a flow pinned to planes it fills leaves GC moving nearly full
/// victims forever (FIFO picks blocks with almost no invalid page) while other writes wait. The
/// watchdog stops the run with the out-of-space report instead of letting it run forever.
#[test]
fn gc_churn_on_a_full_partition_is_stopped_by_the_watchdog() {
    let text = r#"
seed = 1393734251461175544
[host]
interface = "nvme"
sata_processing_delay = "2us"
arbitration = "round-robin"
max_requests_in_device = 6
[controller]
scheduling = "out-of-order"
dispatch_read = "0ns"
dispatch_write = "0ns"
[ftl]
preemptible_gc = false
copyback = false
over_provisioning = 0.301
gc_policy = "fifo"
static_wear_leveling_threshold = 2
ideal_mapping = false
cmt_capacity = "1KiB"
[flash]
channels = 2
chips_per_channel = 2
dies_per_chip = 2
planes_per_die = 1
blocks_per_plane = 27
pages_per_block = 32
page_size = "2KiB"
suspension = "none"
[flash.timing]
suspend_program = "10us"
suspend_erase = "20us"
suspend_program_min_remaining = "50us"
suspend_erase_min_remaining = "100us"
[precondition]
mode = "fill"
occupancy = 0.426
layout = "packed"
[cache]
capacity = "32KiB"
sharing = "partitioned"
[[flows]]
priority = "urgent"
cache_mode = "off"
read_fraction = 0.357
request_size = "26sectors"
address = "sequential"
queue_depth = 3
requests = 666
channels = [0]
planes = [0]

[[flows]]
priority = "urgent"
cache_mode = "off"
read_fraction = 0.208
request_size = "37sectors"
address = "uniform"
rate = "1k/s"
requests = 571

[[flows]]
priority = "urgent"
cache_mode = "off"
read_fraction = 0.194
request_size = "21sectors"
address = "sequential"
rate = "10k/s"
requests = 72
alignment = "4KiB"
"#;
    match Simulation::from_toml_str(text, &repo_root()).and_then(|mut s| s.run()) {
        Err(SimError::EndOfLife(message)) => assert!(message.starts_with("out of space"), "{message}"),
        Err(e) => panic!("unexpected error {e}"),
        Ok(r) => panic!("finished with {} requests", r.device.reads.count + r.device.writes.count),
    }
}

/// A flow confined to its channels reads its mapping there too: translation pages belong to the
/// flow whose address domain they describe (as MQSim places each stream's translation pages),
/// so a cached-mapping-table miss does not reach another flow's channels.
#[test]
fn a_partitioned_flows_translation_reads_stay_on_its_channels() {
    let text = device().replace("ideal_mapping = true", "ideal_mapping = false\ncmt_capacity = \"256B\"");
    let one_read = "[[flows]]\nname = \"idle\"\nread_fraction = 1.0\nqueue_depth = 1\nrequests = 1\n";
    let r = run(&format!("{text}\n{VICTIM}channels = [0]\n{one_read}channels = [1]\n"));
    let victim = &r.flows[0];
    assert!(victim.cmt_hit_rate < 0.5, "the victim misses: {}", victim.cmt_hit_rate);
    let u = &r.device.flash.channel_utilisation;
    assert!(u[0] > 0.1 && u[1] < 0.002, "victim's reads and translation reads on channel 0 only: {u:?}");
}

/// A confined flow whose working set cannot fit on its planes is preconditioned over the whole
/// device, as before flows were confined, and the results say so.
#[test]
fn a_confined_working_set_too_big_for_its_planes_is_spread_with_a_warning() {
    let text = device().replace("address_domains = \"per-flow\"", "address_domains = \"shared\"");
    let r = run(&format!("{text}\n{VICTIM}channels = [0]\n"));
    assert!(r.warnings.iter().any(|w| w.contains("do not fit there")), "{:?}", r.warnings);
    let u = &r.device.flash.channel_utilisation;
    assert!(u[0] > 0.0 && u[1] > 0.0, "its reads find data on both channels: {u:?}");
}
