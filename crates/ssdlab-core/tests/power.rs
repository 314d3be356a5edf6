//! The energy model: off by default; with `power.enabled` every component draws energy, the
//! totals add up, writes cost more NAND energy than reads, the power series integrates to about
//! the total, and bad parameters are rejected with the field named.

mod common;

use common::{run, SMALL_DEVICE};
use ssdlab_core::Config;

fn workload(read_fraction: f64) -> String {
    format!(
        "precondition = \"none\"\n{SMALL_DEVICE}\n[power]\nenabled = true\n[[flows]]\nread_fraction = {read_fraction}\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 8\nrequests = 4000\n"
    )
}

#[test]
fn energy_is_reported_only_when_enabled() {
    let r = run(&workload(0.5).replace("[power]\nenabled = true\n", ""));
    assert!(r.energy.is_none());
    let json = serde_json::to_value(&r).unwrap();
    assert!(json.get("energy").is_none(), "no energy key when the model is off");
}

#[test]
fn components_add_up_and_writes_cost_more_nand_energy_than_reads() {
    let writes = run(&workload(0.0));
    let reads = run(&workload(1.0));
    for r in [&writes, &reads] {
        let e = r.energy.as_ref().expect("energy reported");
        let c = &e.by_component;
        assert!(c.nand > 0.0 && c.dram > 0.0 && c.cpu > 0.0 && c.pcie > 0.0, "{c:?}");
        let sum = c.nand + c.dram + c.cpu + c.pcie;
        assert!((e.total_joules - sum).abs() < 1e-12 * sum.max(1.0));
        assert!((e.average_watts - e.total_joules / r.simulated_seconds).abs() < 1e-9 * e.average_watts);
        let requests = (r.device.reads.count + r.device.writes.count) as f64;
        assert!((e.energy_per_request_uj - e.total_joules / requests * 1e6).abs() < 1e-6 * e.energy_per_request_uj);
        // The series has one value per time-series window and integrates to the total: DRAM
        // and core activity are charged in their windows too (NAND reads per window are
        // estimated from the pages read, so the two differ slightly).
        let ts = r.time_series.as_ref().unwrap();
        assert_eq!(e.power_over_time.watts.len(), ts.start_seconds.len());
        let integral: f64 = e.power_over_time.watts.iter().zip(&ts.duration_seconds).map(|(w, d)| w * d).sum();
        assert!((integral - e.total_joules).abs() < 0.02 * e.total_joules, "{integral} vs {}", e.total_joules);
    }
    let nand_per_request = |r: &ssdlab_core::Results| {
        r.energy.as_ref().unwrap().by_component.nand / (r.device.reads.count + r.device.writes.count) as f64
    };
    // A program holds the die ten times longer than a read (750 us against 75 us).
    assert!(nand_per_request(&writes) > 3.0 * nand_per_request(&reads));
}

#[test]
fn power_over_time_follows_dram_and_firmware_activity() {
    // Cached writes with the firmware model, open loop at 200 per second: 1 ms windows with
    // a request and idle ones between them.
    let text = format!(
        "precondition = \"none\"\n{SMALL_DEVICE}\n[cache]\ncapacity = \"1MiB\"\ndestage = \"when-full\"\n[firmware]\nenabled = true\n[power]\nenabled = true\n[run]\ntime_series_window = \"1ms\"\n[[flows]]\ncache_mode = \"write\"\nread_fraction = 0.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nrate = \"200/s\"\nrequests = 100\n"
    );
    let r = run(&text);
    let ts = r.time_series.as_ref().unwrap();
    let c = &ts.controller;
    let fw = r.firmware.as_ref().unwrap();
    // The windows' activity adds up to the run's.
    assert_eq!(c.instructions.iter().sum::<u64>(), fw.instructions_by_class.values().sum::<u64>());
    let busy: f64 = c.cpu_busy_seconds.iter().sum();
    assert!((busy - fw.core_busy_seconds.iter().sum::<f64>()).abs() < 1e-12);
    let dram: f64 = c.dram_busy_seconds.iter().sum();
    assert!((dram - r.device.cache.dram_utilisation * r.simulated_seconds).abs() < 1e-9);
    // Windows with work draw more than the idle ones between the bursts, which draw the
    // static power only.
    let e = r.energy.as_ref().unwrap();
    let quiet = |i: usize| {
        c.instructions[i] == 0
            && c.dram_busy_seconds[i] == 0.0
            && ts.device.writes.count[i] == 0
            && ts.gc.flash_pages_programmed[i] == 0
    };
    let idle: Vec<usize> = (0..ts.start_seconds.len()).filter(|&i| quiet(i)).collect();
    let busy_windows: Vec<usize> = (0..ts.start_seconds.len()).filter(|&i| c.instructions[i] > 0).collect();
    assert!(!idle.is_empty() && !busy_windows.is_empty());
    let idle_watts = e.power_over_time.watts[idle[0]];
    assert!(busy_windows.iter().all(|&i| e.power_over_time.watts[i] > idle_watts));
    for &i in &idle {
        assert!((e.power_over_time.watts[i] - idle_watts).abs() < 1e-9 * idle_watts);
    }
}

#[test]
fn bad_power_parameters_are_rejected_with_the_field_named() {
    let flow = "[[flows]]\nqueue_depth = 1\nrequests = 1\n";
    for (text, path) in [
        ("[power]\nenabled = true\ncpu_cores = 0\n", "power.cpu_cores"),
        ("[power]\nnand_read_ma = -1\n", "power.nand_read_ma"),
        ("[power]\ncpu_active_watts = 0.05\n", "power.cpu_active_watts"),
        ("[power]\nwatts = 3\n", "power"),
    ] {
        let message = match Config::from_toml_str(&format!("{text}{flow}")) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {text}"),
        };
        assert!(message.starts_with(path), "expected an error at {path}, got: {message}");
    }
}
