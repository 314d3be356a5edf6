//! NVMe autonomous power state transitions (`[power.apst]`): an idle device drops into its
//! non-operational states, the first command after idle waits for the exit latency (the
//! response time shows it), the time spent there is charged at the states' power, and bad
//! tables are refused with the field named.

mod common;

use common::{run, SMALL_DEVICE};
use ssdlab_core::{Config, Results};

/// Reads at 0, 50 ms, 200 ms, 3 s and 3.2 s (MQSim trace format: ns, device, sector, sectors,
/// 1 = read).
const TRACE: &str =
    "0 0 0 8 1\n50000000 0 800 8 1\n200000000 0 1600 8 1\n3000000000 0 2400 8 1\n3200000000 0 3200 8 1\n";

fn trace_run(name: &str, extra: &str) -> Results {
    let dir = std::env::temp_dir().join(format!("ssdlab-power-states-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.trace"));
    std::fs::write(&path, TRACE).unwrap();
    run(&format!(
        "precondition = {{ mode = \"fill\", occupancy = 0.9 }}\n{SMALL_DEVICE}\n[power]\nenabled = true\n{extra}\n[run]\ntime_series_window = \"10ms\"\n[[flows]]\nkind = \"trace\"\nformat = \"mqsim\"\npath = \"{}\"\n",
        path.display()
    ))
}

#[test]
fn the_first_command_after_idle_waits_for_the_exit_latency() {
    let off = trace_run("wait-off", "");
    let on = trace_run("wait-on", "[power.apst]\nenabled = true\n");
    assert!(off.power_states.is_none());
    let ps = on.power_states.as_ref().expect("reported when enabled");
    // 50 ms of idle is below PS3's 100 ms; 150 ms reaches PS3 (exit 1.2 ms); 2.8 s goes through
    // PS3 into PS4 (exit 8 ms); the last 190 ms reaches PS3 again.
    assert_eq!(ps.wakeups, 3);
    assert_eq!((ps.states[0].name.as_str(), ps.states[0].entries), ("PS3", 3));
    assert_eq!((ps.states[1].name.as_str(), ps.states[1].entries), ("PS4", 1));
    assert!((ps.exit_wait_us_max - 8000.0).abs() < 1e-6, "{}", ps.exit_wait_us_max);
    assert!((ps.exit_wait_us_mean - (1200.0 + 8000.0 + 1200.0) / 3.0).abs() < 1e-6);
    // The device is otherwise idle: each wait adds to its request's response time exactly.
    let mean = |r: &Results| r.device.reads.latency_us.mean;
    assert!((mean(&on) - mean(&off) - 10_400.0 / 5.0).abs() < 1e-3, "{} vs {}", mean(&on), mean(&off));
    assert!(on.device.reads.latency_us.max > 8000.0);
    // Most of the 3.2 s run is spent in a low-power state.
    assert!(ps.low_power_fraction > 0.8 && ps.low_power_fraction < 1.0, "{}", ps.low_power_fraction);
    assert!(ps.states[1].residency_seconds > 0.7 && ps.states[1].residency_seconds < 0.85);
}

#[test]
fn time_in_low_power_states_is_charged_at_their_power() {
    let off = trace_run("energy-off", "");
    let on = trace_run("energy-on", "[power.apst]\nenabled = true\n");
    let (e_off, e_on) = (off.energy.as_ref().unwrap(), on.energy.as_ref().unwrap());
    let power = ssdlab_core::config::PowerConfig::default();
    // SMALL_DEVICE: 4 dies, 3 cores (no firmware model).
    let static_watts = power.static_watts(4, 3);
    let ps = on.power_states.as_ref().unwrap();
    let saved: f64 = ps.states.iter().map(|s| s.residency_seconds * (static_watts - s.watts)).sum();
    // The run with APST ends later by the last request's wait (the trace's arrival times do
    // not move), at static power; everything else is the same.
    let longer = on.simulated_seconds - off.simulated_seconds;
    assert!((longer - 0.0012).abs() < 1e-9, "{longer}");
    let expected = saved - longer * static_watts;
    let got = e_off.total_joules - e_on.total_joules;
    assert!((got - expected).abs() < 1e-9 * e_off.total_joules, "saved {got} J, expected {expected} J");
    assert!(e_on.total_joules < 0.2 * e_off.total_joules, "{} vs {}", e_on.total_joules, e_off.total_joules);
    let c = &e_on.by_component;
    assert!((c.nand + c.dram + c.cpu + c.pcie - e_on.total_joules).abs() < 1e-12);
    assert!(c.nand > 0.0 && c.dram > 0.0 && c.cpu > 0.0 && c.pcie > 0.0, "{c:?}");
    // The power series shows the low-power windows and still integrates to the total.
    let ts = on.time_series.as_ref().unwrap();
    let watts = &e_on.power_over_time.watts;
    let integral: f64 = watts.iter().zip(&ts.duration_seconds).map(|(w, d)| w * d).sum();
    assert!((integral - e_on.total_joules).abs() < 0.02 * e_on.total_joules, "{integral} vs {}", e_on.total_joules);
    let deep = watts.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!((deep - 0.005).abs() < 1e-9, "a window wholly in PS4 draws 5 mW, got {deep}");
}

#[test]
fn bad_power_state_tables_are_refused_with_the_field_named() {
    let flow = "[[flows]]\nqueue_depth = 1\nrequests = 1\n";
    for (text, path) in [
        ("[host]\ninterface = \"sata\"\n[power.apst]\nenabled = true\n", "power.apst.enabled"),
        ("[power.apst]\nenabled = true\nstates = []\n", "power.apst.states"),
        (
            "[power.apst]\nenabled = true\nstates = [{ name = \"a\", watts = -1, entry_latency = \"1us\", exit_latency = \"1us\", after_idle = \"1ms\" }]\n",
            "power.apst.states[0].watts",
        ),
        (
            "[power.apst]\nenabled = true\nstates = [{ name = \"a\", watts = 0.1, entry_latency = \"1ms\", exit_latency = \"1us\", after_idle = \"10ms\" }, { name = \"b\", watts = 0.01, entry_latency = \"1us\", exit_latency = \"1us\", after_idle = \"10500us\" }]\n",
            "power.apst.states[1].after_idle",
        ),
        ("[power.apst]\nenabled = true\nstates = [{ name = \"a\", watts = 0.1 }]\n", "power.apst.states"),
    ] {
        let message = match Config::from_toml_str(&format!("{text}{flow}")) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {text}"),
        };
        assert!(message.starts_with(path), "expected an error at {path}, got: {message}");
    }
}
