//! Limits on what a configuration implies (issue 12): slow rates whose transfers overflow the
//! picosecond clock (F01), geometries whose page count wraps (F08), and configurations whose
//! memory would abort the process (F09, F10) are refused with the field to change; the memory
//! estimate is checked against the resident memory a run really takes.

mod common;

use common::{repo_root, SMALL_DEVICE};
use ssdlab_core::sim::memory;
use ssdlab_core::{Config, Simulation};

fn corpus(path: &str) -> String {
    let file = repo_root().join("tests/reliability/corpus").join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Builds the simulation from TOML text and returns its error message (it must fail).
fn refused(toml: &str) -> String {
    match Simulation::from_toml_str(toml, &repo_root()) {
        Ok(_) => panic!("the configuration was accepted"),
        Err(e) => e.to_string(),
    }
}

fn accepted(toml: &str) {
    if let Err(e) = Simulation::from_toml_str(toml, &repo_root()) {
        panic!("the configuration was refused: {e}");
    }
}

/// Inserts `key = value` into `[section]` of the text (the section is appended if missing).
fn set(toml: &str, section: &str, line: &str) -> String {
    let header = format!("[{section}]\n");
    match toml.find(&header) {
        Some(i) => format!("{}{header}{line}\n{}", &toml[..i], &toml[i + header.len()..]),
        None => format!("[{section}]\n{line}\n{toml}"),
    }
}

/// The slowest value an error accepts, as written in its message: `the slowest accepted is "X"`.
fn slowest_accepted(message: &str) -> String {
    let start = message.find("the slowest accepted is \"").expect("the message gives the slowest value") + 25;
    message[start..].split('"').next().unwrap().to_string()
}

const F01: &str = "findings/F01-slow-rate-overflow.toml";

#[test]
fn f01_slow_channel_rate_is_refused_and_the_advised_rate_runs() {
    let message = refused(&corpus(F01));
    assert!(message.starts_with("flash.channel_rate: \"1e-9T/s\" is too slow"), "{message}");
    let slowest = slowest_accepted(&message);
    let fixed = corpus(F01).replace("channel_rate = \"1e-9T/s\"", &format!("channel_rate = \"{slowest}\""));
    accepted(&fixed);
}

#[test]
fn f01_each_slow_rate_key_is_refused_naming_it() {
    let base = corpus(F01).replace("channel_rate = \"1e-9T/s\"", "channel_rate = \"333MT/s\"");
    accepted(&base);
    let cases = [
        ("cache", "dram_data_rate = \"1e-9T/s\"", "cache.dram_data_rate"),
        ("host", "interface = \"sata\"\nsata_link_rate = \"1e-9B/s\"", "host.sata_link_rate"),
        ("host", "pcie_lane_rate = \"1e-9B/s\"", "host.pcie_lane_rate"),
        ("firmware", "enabled = true\nclock = \"1e-9Hz\"", "firmware.clock"),
    ];
    for (section, lines, field) in cases {
        let message = refused(&set(&base, section, lines));
        assert!(message.starts_with(&format!("{field}: ")), "{field}: {message}");
        assert!(message.contains("too slow") && message.contains("slowest accepted"), "{message}");
    }
    // An open-loop rate so slow that one gap overflows the clock.
    let open = base.replace("queue_depth = 1", "rate = \"1e-30/s\"");
    let message = refused(&open);
    assert!(message.starts_with("flows[0].rate: "), "{message}");
}

#[test]
fn f01_the_advised_slowest_rates_are_accepted() {
    let base = corpus(F01).replace("channel_rate = \"1e-9T/s\"", "channel_rate = \"333MT/s\"");
    for (section, key, unit) in [("host", "pcie_lane_rate", "B/s"), ("cache", "dram_data_rate", "T/s")] {
        let message = refused(&set(&base, section, &format!("{key} = \"1e-12{unit}\"")));
        let slowest = slowest_accepted(&message);
        let config = Config::from_toml_str(&set(&base, section, &format!("{key} = \"{slowest}\"")));
        assert!(config.is_ok(), "{key} = {slowest}: {:?}", config.err());
    }
}

#[test]
fn a_fuzzed_config_with_a_channel_rate_of_1e_minus_30_is_refused() {
    let message = refused(&corpus("silent_acceptance/mut-7-00984.toml"));
    assert!(message.starts_with("flash.channel_rate: \"1e-30T/s\" is too slow"), "{message}");
}

#[test]
fn dispatch_time_times_planes_must_fit_the_clock() {
    let toml = set(&corpus(F01), "controller", "dispatch_read = \"9000000s\"")
        .replace("channel_rate = \"1e-9T/s\"", "channel_rate = \"333MT/s\"");
    let message = refused(&toml);
    assert!(message.starts_with("controller.dispatch_read: "), "{message}");
}

#[test]
fn f08_a_page_count_that_wraps_64_bits_is_refused() {
    for path in ["findings/F08-geometry-u64-wrap.toml", "overflow/geometry_wrap.toml"] {
        let message = refused(&corpus(path));
        assert!(message.starts_with("flash: "), "{path}: {message}");
        // The real count (2^64 + 1024), not the wrapped 1024.
        assert!(message.contains("18446744073709552640 physical pages"), "{path}: {message}");
    }
}

#[test]
fn f08_a_device_whose_bytes_exceed_64_bits_is_refused() {
    let toml = format!("{SMALL_DEVICE}[[flows]]\nqueue_depth = 1\nrequests = 1\n")
        .replace("page_size = \"4KiB\"", "page_size = \"16000000TiB\"");
    let message = refused(&toml);
    assert!(message.starts_with("flash.page_size: "), "{message}");
}

#[test]
fn f09_sixteen_million_channels_are_refused_by_the_memory_estimate() {
    let message = refused(&corpus("findings/F09-many-channels-abort.toml"));
    assert!(message.starts_with("run.memory_limit: the configuration needs about"), "{message}");
    assert!(message.contains("TSU queues"), "{message}");
    assert!(message.contains("raise run.memory_limit"), "{message}");
}

#[test]
fn f09_the_json_reproducer_is_refused_too() {
    let config = Config::from_json_str(&corpus("overflow/channels_2e24_abort.json")).expect("valid values");
    let echo = serde_json::to_value(&config).unwrap();
    let message = Simulation::new(config, &repo_root(), echo).err().expect("refused").to_string();
    assert!(message.starts_with("run.memory_limit: "), "{message}");
}

#[test]
fn f10_a_queue_depth_of_2_to_the_32_with_a_duration_is_refused() {
    let message = refused(&corpus("findings/F10-qd-blowup.toml"));
    assert!(message.starts_with("run.memory_limit: "), "{message}");
    assert!(message.contains("requests"), "{message}");
}

#[test]
fn f10_an_open_loop_rate_of_1e30_with_1e9_requests_is_refused() {
    let toml = corpus("findings/F10-qd-blowup.toml")
        .replace("queue_depth = 4294967295\nduration = \"1000s\"", "rate = \"1e30/s\"\nrequests = 1000000000")
        .replace("[precondition]", "[run]\nmax_simulated_time = \"10ms\"\n[precondition]");
    assert!(toml.contains("1e30"), "the substitution applied");
    let message = refused(&toml);
    assert!(message.starts_with("run.memory_limit: ") && message.contains("requests"), "{message}");
}

#[test]
fn a_thousand_flows_are_estimated_near_what_they_used() {
    // The fuzzer measured 3.4 GB for this one: it runs under a limit that holds it, and is
    // refused with the estimate under a smaller one.
    let config = Config::from_toml_str(&corpus("silent_acceptance/mut-7-00713.toml")).unwrap();
    let total = memory::estimate(&config).total() as f64;
    assert!((1.7e9..6.8e9).contains(&total), "estimate {total:.3e} B vs 3.4 GB measured");
    let small = set(&corpus("silent_acceptance/mut-7-00713.toml"), "run", "memory_limit = \"1GiB\"");
    let message = refused(&small);
    assert!(message.contains("above run.memory_limit = \"1GiB\"") && message.contains("statistics"), "{message}");
}

#[test]
fn memory_limit_overrides_the_default_both_ways() {
    // 1,024 channels of a small die: about 100 MiB of state.
    let toml = corpus("findings/F09-many-channels-abort.toml").replace("channels = 16777216", "channels = 65536");
    let message = refused(&set(&toml, "run", "memory_limit = \"10MiB\""));
    assert!(message.starts_with("run.memory_limit: ") && message.contains("\"10MiB\""), "{message}");
    accepted(&set(&toml, "run", "memory_limit = \"4GiB\""));
    accepted(&set(&toml, "run", "memory_limit = \"unlimited\""));
    let message = Config::from_toml_str(&set(&toml, "run", "memory_limit = \"0B\"")).unwrap_err().to_string();
    assert!(message.starts_with("run.memory_limit: must be greater than zero"), "{message}");
    let message = Config::from_toml_str(&set(&toml, "run", "memory_limit = 8")).unwrap_err().to_string();
    assert!(message.starts_with("run.memory_limit: ") && message.contains("add a unit"), "{message}");
}

#[test]
fn memory_limit_is_left_out_of_the_echo_when_not_given() {
    let config = Config::from_toml_str(&corpus(F01).replace("1e-9T/s", "333MT/s")).unwrap();
    let echo = serde_json::to_value(&config).unwrap();
    assert!(echo["run"].get("memory_limit").is_none(), "{echo}");
}

#[test]
fn f05_the_over_provisioning_advice_is_accepted() {
    let text = corpus("findings/F05-op-advice-contradicts.toml");
    let message = Config::from_toml_str(&text).unwrap_err().to_string();
    assert!(message.starts_with("ftl.over_provisioning: 0.5 leaves too little"), "{message}");
    let advised = message.rsplit("use at least ").next().unwrap().trim().to_string();
    let value: f64 = advised.parse().unwrap_or_else(|_| panic!("a number: {message}"));
    assert!(value > 0.5, "{message}");
    accepted(&text.replace("over_provisioning = 0.5", &format!("over_provisioning = {advised}")));
    // And the advice is the smallest such value, to the 4 decimals it is given in.
    let below = format!("{:.4}", value - 0.0001);
    assert!(Config::from_toml_str(&text.replace("over_provisioning = 0.5", &format!("over_provisioning = {below}")))
        .is_err());
}

#[test]
fn unit_type_errors_say_expected_once() {
    let base = corpus(F01).replace("1e-9T/s", "333MT/s");
    for (section, line) in [
        ("flash.timing", "erase = true"),
        ("cache", "capacity = [1]"),
        ("host", "pcie_lane_rate = false"),
        ("firmware", "clock = {}"),
    ] {
        let message = Config::from_toml_str(&set(&base, section, line)).unwrap_err().to_string();
        assert!(message.contains("expected a"), "{line}: {message}");
        assert!(!message.contains("expected expected"), "{line}: {message}");
    }
}

/// Runs in a child process (see `memory_estimate_is_within_2x_of_resident_memory`): builds the
/// simulation named by the environment and prints its peak resident memory.
#[test]
fn rss_child() {
    let Ok(toml) = std::env::var("SSDLAB_RSS_CHILD") else { return };
    let mut sim = Simulation::from_toml_str(&toml, &repo_root()).expect("accepted");
    sim.step(20_000).expect("runs");
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let hwm = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).unwrap().trim().trim_end_matches("kB").trim();
    println!("VmHWM_KIB={hwm}");
}

fn peak_rss_bytes(toml: &str) -> f64 {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "rss_child", "--nocapture", "--test-threads", "1"])
        .env("SSDLAB_RSS_CHILD", toml)
        .output()
        .expect("the test binary runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let kib: f64 = text
        .lines()
        .find_map(|l| l.split("VmHWM_KIB=").nth(1))
        .unwrap_or_else(|| panic!("child printed no VmHWM: {text} {}", String::from_utf8_lossy(&out.stderr)))
        .trim()
        .parse()
        .unwrap();
    kib * 1024.0
}

#[test]
fn memory_estimate_is_within_2x_of_resident_memory() {
    if !std::path::Path::new("/proc/self/status").exists() {
        return; // no way to measure here
    }
    // A 1 TB TLC drive without preconditioning and with its cached page map (not ideal), the
    // example as it is (steady-state preconditioning, ideal mapping), and the first with 64
    // flows' statistics. The test harness's own memory (a few MiB) is small next to these.
    let tlc = common::example("tlc-nvme-1tb.toml")
        .replace("mode = \"steady\"\noccupancy = 0.75", "mode = \"none\"")
        .replace("ideal_mapping = true", "ideal_mapping = false");
    let steady = common::example("tlc-nvme-1tb.toml");
    let filled = steady.replace("mode = \"steady\"", "mode = \"fill\"");
    let flows: String = (0..64)
        .map(|i| format!("[[flows]]\nname = \"f{i}\"\nread_fraction = 0.5\nqueue_depth = 64\nrequests = 2000\n"))
        .collect();
    let many_flows = common::with_flows(&tlc, &flows);
    // The page map's tables take memory only where data is mapped (they come zeroed from the
    // OS), and the estimate counts them whole, as a drive written full needs: on a drive the run
    // barely writes it is an upper bound only (steady state keeps its placement as a rule and
    // writes no table entry); once a fill has mapped the drive it is within a factor of two.
    let cases = [
        ("tlc-nvme-1tb", &tlc, false),
        ("tlc-nvme-1tb, steady", &steady, false),
        ("tlc-nvme-1tb, 75 % filled", &filled, true),
        ("64 flows", &many_flows, false),
    ];
    for (name, toml, written) in cases {
        let config = Config::from_toml_str(toml).unwrap();
        let estimate = memory::estimate(&config);
        let rss = peak_rss_bytes(toml);
        let ratio = estimate.total() as f64 / rss;
        eprintln!("{name}: estimate {} vs peak RSS {:.1} MiB (ratio {ratio:.2})", estimate.describe(), rss / 1048576.0);
        let fits = if written { (0.5..=2.0).contains(&ratio) } else { ratio >= 0.5 };
        assert!(fits, "{name}: estimate {estimate:?} vs RSS {rss:.0} B");
    }
}
