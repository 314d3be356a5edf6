//! Every invalid value is rejected before anything is allocated, with the field path and the
//! reason; never a panic, never a silent default.

mod common;

use common::{repo_root, SMALL_DEVICE};
use ssdlab_core::{Config, SimError, Simulation};

const FLOW: &str = "[[flows]]\nread_fraction = 1.0\nqueue_depth = 1\nrequests = 10\n";

/// Merges TOML `extra` into the small valid device (tables deep-merged, `extra` wins).
fn merged(extra: &str) -> String {
    fn merge(base: &mut toml::Table, extra: toml::Table) {
        for (key, value) in extra {
            match (base.get_mut(&key), value) {
                (Some(toml::Value::Table(b)), toml::Value::Table(e)) => merge(b, e),
                (_, value) => {
                    base.insert(key, value);
                }
            }
        }
    }
    let mut base: toml::Table = SMALL_DEVICE.parse().unwrap();
    merge(&mut base, extra.parse().expect("test TOML parses"));
    toml::to_string(&base).unwrap()
}

/// The error for `extra` merged into a small valid config, as "path: reason".
fn rejected(extra: &str) -> String {
    let text = merged(extra);
    match Config::from_toml_str(&text) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("config was accepted:\n{text}"),
    }
}

fn assert_rejects(extra: &str, path: &str, reason: &str) {
    let message = rejected(extra);
    assert!(message.starts_with(&format!("{path}:")), "expected an error at `{path}`, got: {message}");
    assert!(message.contains(reason), "expected `{reason}` in: {message}");
}

#[test]
fn a_valid_small_config_is_accepted() {
    Config::from_toml_str(&format!("{SMALL_DEVICE}\n{FLOW}")).unwrap();
}

#[test]
fn zero_channels() {
    let text = SMALL_DEVICE.replace("channels = 2", "channels = 0");
    let e = Config::from_toml_str(&format!("{text}\n{FLOW}")).unwrap_err();
    assert_eq!(e.path, "flash.channels");
    assert!(e.reason.contains("at least 1"));
}

#[test]
fn negative_latency() {
    assert_rejects(&format!("[flash.timing]\nread = \"-75us\"\n{FLOW}"), "flash.timing.read", "must not be negative");
}

#[test]
fn unit_less_latency_string_and_bare_number() {
    assert_rejects(
        &format!("[flash.timing]\nread = \"75\"\n{FLOW}"),
        "flash.timing.read",
        "expected a duration like \"75us\"",
    );
    assert_rejects(&format!("[flash.timing]\nprogram = 750\n{FLOW}"), "flash.timing.program", "bare number 750");
    assert_rejects(&format!("[flash.timing]\nerase = 3.8\n{FLOW}"), "flash.timing.erase", "add a unit");
}

#[test]
fn unknown_key_names_the_table() {
    assert_rejects(&format!("[flash.timing]\nreed = \"75us\"\n{FLOW}"), "flash.timing.reed", "unknown field `reed`");
    assert_rejects(&format!("[host]\nlanes = 4\n{FLOW}"), "host.lanes", "unknown field `lanes`");
    let message = rejected(&format!("{FLOW}queue_dept = 3\n"));
    assert!(message.contains("flows[0]") && message.contains("queue_dept"), "{message}");
}

#[test]
fn page_size_not_a_multiple_of_the_sector() {
    let text = SMALL_DEVICE.replace("page_size = \"4KiB\"", "page_size = \"1000B\"");
    let e = Config::from_toml_str(&format!("{text}\n{FLOW}")).unwrap_err();
    assert_eq!(e.path, "flash.page_size");
    assert!(e.reason.contains("multiple of the 512 B sector"), "{}", e.reason);
}

#[test]
fn queue_depth_zero() {
    assert_rejects("[[flows]]\nqueue_depth = 0\nrequests = 10\n", "flows[0].queue_depth", "at least 1");
}

#[test]
fn closed_and_open_loop_at_once() {
    assert_rejects("[[flows]]\nqueue_depth = 2\nrate = \"1000/s\"\nrequests = 10\n", "flows[0].rate", "not both");
}

#[test]
fn a_flow_without_a_stop_condition() {
    assert_rejects("[[flows]]\nqueue_depth = 2\n", "flows[0].requests", "stop condition");
}

#[test]
fn no_flows_at_all() {
    assert_rejects("", "flows", "at least one flow");
}

#[test]
fn fractions_out_of_range() {
    assert_rejects(
        &format!("[precondition]\nmode = \"fill\"\noccupancy = 1.5\n{FLOW}"),
        "precondition.occupancy",
        "fraction in [0, 1]",
    );
    assert_rejects(
        "[[flows]]\nread_fraction = -0.1\nqueue_depth = 1\nrequests = 1\n",
        "flows[0].read_fraction",
        "fraction",
    );
    let text = SMALL_DEVICE.replace("over_provisioning = 0.2", "over_provisioning = 1.0");
    assert!(Config::from_toml_str(&format!("{text}\n{FLOW}"))
        .unwrap_err()
        .to_string()
        .starts_with("ftl.over_provisioning:"));
}

#[test]
fn too_little_over_provisioning_for_gc() {
    let text = SMALL_DEVICE.replace("over_provisioning = 0.2", "over_provisioning = 0.01");
    let e = Config::from_toml_str(&format!("{text}\n{FLOW}")).unwrap_err();
    assert_eq!(e.path, "ftl.over_provisioning");
    assert!(e.reason.contains("too little spare space") && e.reason.contains("use at least"), "{}", e.reason);
}

#[test]
fn allocation_order_must_be_a_permutation() {
    assert_rejects(&format!("[ftl]\nallocation = \"CWXP\"\n{FLOW}"), "ftl.allocation", "permutation");
    // Beside a namespace, whose check builds a geometry from the order (fuzz seed 1207 config
    // #376 panicked there).
    assert_rejects(
        "[ftl]\nallocation = \"CWXP\"\n[[namespaces]]\nname = \"a\"\nsize = \"16MiB\"\n[[flows]]\nread_fraction = 1.0\nqueue_depth = 1\nrequests = 10\nnamespace = \"a\"\n",
        "ftl.allocation",
        "permutation",
    );
}

#[test]
fn page_type_latencies_must_match_the_technology() {
    assert_rejects(
        &format!("[flash]\ntechnology = \"TLC\"\n[flash.timing]\nread = {{ lsb = \"50us\", msb = \"90us\" }}\n{FLOW}"),
        "flash.timing.read.csb",
        "TLC and QLC need",
    );
    assert_rejects(&format!("[flash]\ntechnology = \"PLC\"\n{FLOW}"), "flash.technology", "unknown variant");
}

#[test]
fn options_that_belong_to_another_kind_of_flow() {
    assert_rejects(
        "[[flows]]\nqueue_depth = 1\nrequests = 1\nhot_fraction = 0.2\n",
        "flows[0].hot_fraction",
        "only valid with address = \"hotcold\"",
    );
    assert_rejects(
        "[[flows]]\nkind = \"trace\"\npath = \"x.trace\"\nqueue_depth = 4\n",
        "flows[0].queue_depth",
        "open loop",
    );
    assert_rejects("[[flows]]\nkind = \"trace\"\n", "flows[0].path", "needs the path");
    assert_rejects(
        "[[flows]]\nqueue_depth = 1\nrequests = 1\naddress = \"sequential\"\nrandom_fraction = 0.5\n",
        "flows[0].random_fraction",
        "only valid with address = \"uniform\" or \"hotcold\"",
    );
    assert_rejects(
        "[[flows]]\nqueue_depth = 1\nrequests = 1\nrandom_fraction = 1.5\n",
        "flows[0].random_fraction",
        "fraction in [0, 1]",
    );
    assert_rejects(
        "[[flows]]\nkind = \"trace\"\npath = \"x.trace\"\nrandom_fraction = 0.5\n",
        "flows[0].random_fraction",
        "only valid for synthetic flows",
    );
}

#[test]
fn malformed_units_in_sizes_and_rates() {
    assert_rejects(
        &format!("[host]\npcie_lane_rate = \"1 parsec\"\n{FLOW}"),
        "host.pcie_lane_rate",
        "expected a bandwidth",
    );
    assert_rejects(&format!("[flash]\nchannel_rate = \"333MHz\"\n{FLOW}"), "flash.channel_rate", "MT/s");
}

#[test]
fn a_toml_syntax_error_points_at_the_line() {
    let e = Config::from_toml_str("seed = 1\n[flash\nchannels = 2\n").unwrap_err();
    assert_eq!(e.path, "line 2", "{e}");
    assert!(e.reason.contains("invalid table header"), "{e}");
}

#[test]
fn a_missing_trace_file_names_the_flow_and_the_file() {
    let text = format!("{SMALL_DEVICE}\n[[flows]]\nkind = \"trace\"\npath = \"no/such/file.trace\"\n");
    let Err(SimError::Config(e)) = Simulation::from_toml_str(&text, &repo_root()) else {
        panic!("a missing trace must be a config error");
    };
    assert_eq!(e.path, "flows[0].path");
    assert!(e.reason.contains("no/such/file.trace"), "{}", e.reason);
}

#[test]
fn a_trace_line_with_four_columns_is_reported_with_file_and_line() {
    let dir = std::env::temp_dir().join(format!("ssdlab-bad-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.trace"), "0 0 0 8 1\n1000 0 8 8\n").unwrap();
    let text = format!("{SMALL_DEVICE}\n[[flows]]\nkind = \"trace\"\npath = \"bad.trace\"\n");
    let result = Simulation::from_toml_str(&text, &dir).and_then(|mut s| s.run());
    let Err(SimError::Trace(e)) = result else { panic!("a four-column line must be a trace error") };
    assert_eq!(e.line, 2);
    assert!(e.file.ends_with("bad.trace"));
    assert!(e.reason.contains("found 4 columns") && e.reason.contains("expected 5 columns"), "{}", e.reason);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn requests_larger_than_the_working_set_are_rejected() {
    // The schema accepts it; building the workload against the device's capacity refuses it.
    let text = merged("[[flows]]\nrequest_size = \"1GiB\"\nqueue_depth = 1\nrequests = 1\n");
    let Err(SimError::Config(e)) = Simulation::from_toml_str(&text, &repo_root()) else { panic!("accepted") };
    assert_eq!(e.path, "flows[0].request_size");
    assert!(e.reason.contains("larger than the working set"), "{}", e.reason);
}

#[test]
fn a_gc_threshold_that_leaves_no_room_is_blamed_on_the_threshold() {
    assert_rejects(&format!("[ftl]\ngc_threshold = 0.9\n{FLOW}"), "ftl.gc_threshold", "lower it");
}

#[test]
fn a_device_larger_than_memory_is_refused_not_aborted() {
    // 1,000,000 blocks x 4096 pages per plane is 4 G pages: over the 32-bit limit.
    assert_rejects(&format!("[flash]\nblocks_per_plane = 1000000\npages_per_block = 4096\n{FLOW}"), "flash", "32-bit");
    // 4.16 G pages fit 32 bits but need about 31 GiB of tables: more than the default memory
    // limit (3/4 of the machine's memory) allows on most machines (docs/limits.md).
    let text = merged(&format!(
        "[flash]\nchannels = 16\nchips_per_channel = 8\ndies_per_chip = 4\nplanes_per_die = 4\nblocks_per_plane = 1984\npages_per_block = 1024\n{FLOW}"
    ));
    match Simulation::from_toml_str(&text, &repo_root()) {
        Err(SimError::Config(e)) => {
            assert_eq!(e.path, "run.memory_limit");
            assert!(e.reason.contains("GiB") && e.reason.contains("flash state"), "{}", e.reason);
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => eprintln!("this machine's memory limit had room for 31 GiB of tables; nothing to check"),
    }
}

#[test]
fn a_request_size_spread_no_request_can_carry() {
    // Found by fuzzing: 2^64 bytes ran as requests of half the drive each, ending as a stall.
    assert_rejects(
        "[[flows]]\nqueue_depth = 1\nrequests = 1\n[flows.request_size]\nmean = \"8KiB\"\nstdev = \"18446744073709551616B\"\n",
        "flows[0].request_size.stdev",
        "larger than the largest request",
    );
    // Below that, a spread wider than the working set is refused when the workload is built:
    // its draws would be clipped to the whole working set or one sector.
    let wide = "[[flows]]\nqueue_depth = 1\nrequests = 1\n[flows.request_size]\nmean = \"8KiB\"\nstdev = \"1GiB\"\n";
    let Err(SimError::Config(e)) = Simulation::from_toml_str(&merged(wide), &repo_root()) else { panic!("accepted") };
    assert_eq!(e.path, "flows[0].request_size");
    assert!(e.reason.contains("stdev") && e.reason.contains("larger than the working set"), "{}", e.reason);
    let narrow = merged(&wide.replace("1GiB", "4KiB"));
    assert!(Simulation::from_toml_str(&narrow, &repo_root()).is_ok());
}
