//! Firmware on embedded cores: off by default; when on, each step costs its instructions x CPI
//! at the clock (its fixed part plus the work it did), a slow core shows in the latency
//! breakdown, a single busy core caps the throughput, more cores pipeline the steps, the counts
//! add up, CPU energy follows the instructions, and bad parameters are rejected with the field
//! named. The work-dependent costs (protocol events per interface, cache and CMT misses, GC
//! scans) are checked in `firmware_work.rs`.

mod common;

use common::{run, SMALL_DEVICE};
use ssdlab_core::Config;

/// Random 4 KiB reads (one page each, cache off) at queue depth `depth`.
fn reads(depth: u32, firmware: &str) -> String {
    format!(
        "precondition = \"none\"\n{SMALL_DEVICE}ideal_mapping = true\n[firmware]\n{firmware}\n[[flows]]\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = {depth}\nrequests = 3000\n"
    )
}

fn step_us(r: &ssdlab_core::Results, step: &str) -> f64 {
    r.firmware.as_ref().unwrap().step_us[step]
}

/// Microseconds of core time per request (all cores), and of core 0 (the HIL's).
fn core_us_per_request(r: &ssdlab_core::Results) -> (f64, f64) {
    let fw = r.firmware.as_ref().unwrap();
    let requests = r.device.reads.count as f64;
    (fw.core_busy_seconds.iter().sum::<f64>() * 1e6 / requests, fw.core_busy_seconds[0] * 1e6 / requests)
}

#[test]
fn firmware_is_reported_only_when_enabled() {
    let r = run(&reads(1, ""));
    assert!(r.firmware.is_none());
    assert!(serde_json::to_value(&r).unwrap().get("firmware").is_none());
    let r = run(&reads(1, "enabled = true"));
    let json = serde_json::to_value(&r).unwrap();
    let fw = &json["firmware"];
    assert_eq!(fw["core_utilisation"].as_array().unwrap().len(), 3);
    for class in ["branch", "load_store", "arithmetic", "other"] {
        assert!(fw["instructions_by_class"][class].as_u64().unwrap() > 0, "{class}");
    }
}

#[test]
fn at_queue_depth_one_the_firmware_step_is_the_sum_of_the_steps_on_the_path() {
    let fast = run(&reads(1, "enabled = true"));
    // A page read runs the HIL, the FTL translation and the flash-interface dispatch, each
    // with its work; no step waits for another at queue depth 1, so the breakdown's firmware
    // step is exactly the cores' busy time per request.
    let (expected, hil) = core_us_per_request(&fast);
    let got = fast.device.reads.latency_breakdown_us.get("firmware").unwrap();
    assert!((got - expected).abs() < 1e-6, "firmware step {got} us, expected {expected} us");
    // Defaults: an NVMe 4 KiB read's HIL is its fixed part (80 cycles) plus two doorbells
    // (2 x 84), the command fetch (315), one queue scanned (34), one PRP entry (81), the
    // completion (220) and the interrupt (67): 965 cycles at 500 MHz.
    assert!((hil - 1.93).abs() < 1e-6, "{hil}");
    assert!((step_us(&fast, "hil") - 0.16).abs() < 1e-9);

    // A ten times slower clock: every step takes ten times longer, and the response time grows
    // by exactly the difference.
    let slow = run(&reads(1, "enabled = true\nclock = \"50MHz\""));
    assert!((core_us_per_request(&slow).1 - 19.3).abs() < 1e-6);
    let grown = slow.device.reads.latency_us.mean - fast.device.reads.latency_us.mean;
    assert!((grown - 9.0 * expected).abs() < 0.01 * expected, "grew {grown} us, expected {}", 9.0 * expected);
    let fw = slow.firmware.as_ref().unwrap();
    assert!(fw.latency_share > fast.firmware.as_ref().unwrap().latency_share);
    assert_eq!(fw.executions_by_step["hil"], 3000);
    assert_eq!(fw.executions_by_step["ftl"], 3000);
    assert_eq!(fw.executions_by_step["cache"], 0, "the flow does not use the cache");
    // Instructions add up the same way by class and by step.
    let by_class: u64 = fw.instructions_by_class.values().sum();
    let by_step: u64 = fw.instructions_by_step.values().sum();
    assert_eq!(by_class, by_step);
}

#[test]
fn one_busy_core_caps_the_throughput_and_more_cores_pipeline_the_steps() {
    // At 20 MHz a read needs 48.25 (HIL) + 4.5 (FTL) + 5.25 (FIL) = 58 us of core time,
    // far above what the 4 dies need per read.
    let one = run(&reads(64, "enabled = true\nclock = \"20MHz\"\ncores = 1"));
    let (per_request_us, _) = core_us_per_request(&one);
    assert!((per_request_us - 58.0).abs() < 1e-6, "{per_request_us}");
    let ceiling = 1e6 / per_request_us;
    let iops = one.device.reads.iops;
    assert!(iops <= ceiling * 1.001 && iops > ceiling * 0.9, "{iops} IOPS against a ceiling of {ceiling}");
    assert!(one.firmware.as_ref().unwrap().core_utilisation[0] > 0.9);

    // Three cores: the HIL (core 0) is the slowest stage, at 48.25 us per request; the FTL
    // and FIL run beside it on core 2, so the device reaches the HIL's ceiling (58 / 48.25 =
    // 1.2x one core's).
    let three = run(&reads(64, "enabled = true\nclock = \"20MHz\"\ncores = 3"));
    let hil_ceiling = 1e6 / core_us_per_request(&three).1;
    assert!(three.device.reads.iops > 1.15 * iops, "{} vs {iops}", three.device.reads.iops);
    assert!(three.device.reads.iops <= hil_ceiling * 1.001 && three.device.reads.iops > 0.95 * hil_ceiling);
    let u = &three.firmware.as_ref().unwrap().core_utilisation;
    assert!(u[0] > 0.9 && u[1] == 0.0 && u[2] > 0.15 && u[2] < u[0], "{u:?}");

    // A step can be moved to another core.
    let moved = run(&reads(64, "enabled = true\nclock = \"20MHz\"\ncores = 3\nftl.core = 1"));
    let u = &moved.firmware.as_ref().unwrap().core_utilisation;
    assert!(u[1] > 0.05, "{u:?}");
}

#[test]
fn gc_decisions_and_cache_lookups_run_on_their_cores() {
    let text = format!(
        "precondition = {{ mode = \"fill\", occupancy = 0.9 }}\n{SMALL_DEVICE}ideal_mapping = true\n[cache]\ncapacity = \"512KiB\"\n[firmware]\nenabled = true\n[[flows]]\nread_fraction = 0.0\ncache_mode = \"write\"\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nworking_set = 0.9\nqueue_depth = 16\nrequests = 20000\n"
    );
    let r = run(&text);
    let fw = r.firmware.as_ref().unwrap();
    assert_eq!(fw.executions_by_step["gc"], r.device.gc.victims_selected, "one victim scan per victim");
    assert!(fw.executions_by_step["gc"] > 0);
    assert_eq!(fw.executions_by_step["cache"], 20000);
    // Every flash transaction (flushes, GC moves and erases) was dispatched by the FIL.
    assert!(fw.executions_by_step["fil"] > 20000 - 128);
}

#[test]
fn cpu_energy_is_idle_power_plus_energy_per_instruction() {
    let r =
        run(&reads(8, "enabled = true\n[power]\nenabled = true\ncpu_idle_watts = 0.1\ncpu_nj_per_instruction = 2.0"));
    let fw = r.firmware.as_ref().unwrap();
    let instructions: u64 = fw.instructions_by_class.values().sum();
    let expected = 3.0 * 0.1 * r.simulated_seconds + instructions as f64 * 2e-9;
    let cpu = r.energy.as_ref().unwrap().by_component.cpu;
    assert!((cpu - expected).abs() < 1e-9 * expected, "{cpu} J vs {expected} J");
}

#[test]
fn bad_firmware_parameters_are_rejected_with_the_field_named() {
    let flow = "[[flows]]\nqueue_depth = 1\nrequests = 1\n";
    for (text, path) in [
        ("[firmware]\ncores = 0\n", "firmware.cores"),
        ("[firmware]\nenabled = true\nhil.core = 3\n", "firmware.hil.core"),
        ("[firmware]\ncpi.branch = 0\n", "firmware.cpi.branch"),
        ("[firmware]\nclock = \"fast\"\n", "firmware.clock"),
        ("[firmware]\nclock = 500\n", "firmware.clock"),
        ("[firmware]\nftl.loads = 3\n", "firmware.ftl"),
        ("[firmware.work]\nnvme_doorbel = { load_store = 1 }\n", "firmware.work"),
        ("[firmware.work]\ncmt_miss = { loads = 1 }\n", "firmware.work.cmt_miss"),
        ("[firmware.work]\ncmt_miss = { load_store = -1 }\n", "firmware.work.cmt_miss.load_store"),
        ("[power]\ncpu_nj_per_instruction = -1\n", "power.cpu_nj_per_instruction"),
    ] {
        let message = match Config::from_toml_str(&format!("{text}{flow}")) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {text}"),
        };
        assert!(message.starts_with(path), "expected an error at {path}, got: {message}");
    }
}
