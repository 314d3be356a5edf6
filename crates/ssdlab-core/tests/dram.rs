//! The banked DRAM model through whole runs: off by default (MQSim's serial DRAM, no `dram`
//! results), open-page against close-page on sequential cached reads, CMT lookups and data
//! buffers adding DRAM time only when the model is on, power-down and self-refresh growing
//! with idle time and lowering DRAM energy, and bad input named by its field.

mod common;

use common::{run, SMALL_DEVICE};
use ssdlab_core::{Config, Results};

/// A DDR4-2400 DRAM on a 64-bit bus (19.2 GB/s), 16-16-16 (13.3 ns), 8 KiB rows.
const DDR4: &str = "dram_data_rate = \"2400MT/s\"\ndram_burst_bytes = 8\ndram_trcd = \"13.32ns\"\ndram_tcl = \"13.32ns\"\ndram_trp = \"13.32ns\"\n";

fn device(cache: &str, dram: &str) -> String {
    format!("{SMALL_DEVICE}\n[cache]\n{DDR4}{cache}\n[dram]\n{dram}\n")
}

/// Sequential 2 KiB reads of a 2 MiB working set the 8 MiB read cache holds (warmed by the
/// steady-state precondition), one at a time (deeper queues wait for PCIe, not the DRAM).
const SEQUENTIAL_CACHED_READS: &str = "[[flows]]\nname = \"seq\"\nread_fraction = 1.0\ncache_mode = \"read\"\naddress = \"sequential\"\nrequest_size = \"2KiB\"\nalignment = \"2KiB\"\nworking_set = 0.02\nqueue_depth = 1\nrequests = 4000\n";

fn cache_dram_us(r: &Results) -> f64 {
    r.flows[0].reads.latency_breakdown_us.get("cache_dram").unwrap()
}

#[test]
fn the_serial_model_is_the_default_and_reports_no_dram_section() {
    let r = run(&format!("{}{SEQUENTIAL_CACHED_READS}", device("capacity = \"8MiB\"", "")));
    assert!(r.dram.is_none());
    assert!(serde_json::to_value(&r).unwrap().get("dram").is_none());
    // Naming the default explicitly changes nothing.
    let explicit = run(&format!("{}{SEQUENTIAL_CACHED_READS}", device("capacity = \"8MiB\"", "model = \"serial\"")));
    assert_eq!(r.flows[0].reads.latency_us, explicit.flows[0].reads.latency_us);
}

#[test]
fn open_page_hits_rows_more_and_serves_cached_reads_faster_than_close_page() {
    let open = run(&format!("{}{SEQUENTIAL_CACHED_READS}", device("capacity = \"8MiB\"", "model = \"banked\"")));
    let close = run(&format!(
        "{}{SEQUENTIAL_CACHED_READS}",
        device("capacity = \"8MiB\"", "model = \"banked\"\npage_policy = \"close-page\"")
    ));
    assert!(open.flows[0].cache_hit_rate > 0.95, "the working set is cached: {}", open.flows[0].cache_hit_rate);
    let (o, c) = (open.dram.as_ref().unwrap(), close.dram.as_ref().unwrap());
    assert_eq!((o.page_policy.as_str(), c.page_policy.as_str()), ("open-page", "close-page"));
    // Four 2 KiB reads per 8 KiB row: three of them find it open (up to 0.75).
    assert!(o.row_hit_rate > 0.6, "open-page row hit rate {}", o.row_hit_rate);
    assert_eq!(c.row_hits, 0, "close-page never finds a row open");
    assert!(o.activates * 2 < c.activates, "open {} vs close {} activates", o.activates, c.activates);
    let (od, cd) = (cache_dram_us(&open), cache_dram_us(&close));
    assert!(od < cd, "cache DRAM time: open-page {od:.4} us vs close-page {cd:.4} us");
    assert!(open.flows[0].reads.latency_us.mean < close.flows[0].reads.latency_us.mean);
    // All of it is the data cache's: read hits need no CMT lookup or data buffer.
    assert!(o.accesses.cache >= 3900 && o.accesses.cmt == 0 && o.accesses.buffer == 0, "{:?}", o.accesses);
}

#[test]
fn with_the_banked_model_cmt_lookups_and_data_buffers_use_the_dram() {
    let reads = "[[flows]]\nread_fraction = 0.5\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 4\nrequests = 2000\n";
    let serial = run(&format!("{}{reads}", device("", "")));
    let banked = run(&format!("{}{reads}", device("", "model = \"banked\"")));
    // Without the cache the serial DRAM is never used; the banked one serves every page.
    assert_eq!(serial.device.cache.dram_utilisation, 0.0);
    let serial_dram = serial.device.reads.latency_breakdown_us.get("cache_dram").unwrap();
    assert_eq!(serial_dram, 0.0);
    let d = banked.dram.as_ref().unwrap();
    let pages = banked.device.flash.reads + banked.device.flash.programs;
    assert!(d.accesses.cmt >= 2000, "one CMT lookup per host page: {:?}", d.accesses);
    assert!(d.accesses.buffer >= pages, "each flash page through a buffer: {:?} for {pages} pages", d.accesses);
    assert_eq!(d.accesses.cache, 0);
    for op in [&banked.device.reads, &banked.device.writes] {
        let dram_us = op.latency_breakdown_us.get("cache_dram").unwrap();
        // A lookup and storing a 4 KiB page each take tens to hundreds of nanoseconds.
        assert!(dram_us > 0.03 && dram_us < 2.0, "cache_dram {dram_us} us");
        let sum: f64 = op.latency_breakdown_us.0.iter().map(|(_, v)| v).sum();
        assert!(
            (sum - op.latency_us.mean).abs() < 1e-6 * op.latency_us.mean,
            "steps add up: {sum} vs {}",
            op.latency_us.mean
        );
    }
    let fractions = &d.state_residency;
    let total = fractions.active
        + fractions.active_standby
        + fractions.precharge_standby
        + fractions.power_down
        + fractions.self_refresh;
    assert!((total - 1.0).abs() < 1e-9, "{fractions:?}");
    assert!(d.refreshes > 0 && d.row_hits + d.row_misses + d.row_conflicts > 0);
}

/// A light open-loop reader: the DRAM idles between requests for about 1 / rate.
fn idle_run(rate: &str, dram: &str) -> Results {
    run(&format!(
        "{}\n[power]\nenabled = true\n[[flows]]\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nrate = \"{rate}\"\nrequests = 300\n",
        device("", &format!("model = \"banked\"\n{dram}"))
    ))
}

#[test]
fn power_down_and_self_refresh_grow_with_idle_time_and_save_dram_energy() {
    let busy = idle_run("20k/s", "");
    let idle = idle_run("500/s", "");
    let (b, i) = (&busy.dram.as_ref().unwrap().state_residency, &idle.dram.as_ref().unwrap().state_residency);
    assert!(b.power_down > 0.5, "50 us gaps are mostly powered down: {b:?}");
    assert_eq!(b.self_refresh, 0.0, "gaps shorter than 1 ms never self-refresh: {b:?}");
    assert!(i.self_refresh > 0.3, "2 ms gaps self-refresh after 1 ms: {i:?}");
    assert!(idle.dram.as_ref().unwrap().self_refresh_exits > 100);
    // The same idle run with the DRAM kept awake spends more DRAM energy per second.
    let awake = idle_run("500/s", "power_down = false\nself_refresh = false");
    let a = &awake.dram.as_ref().unwrap().state_residency;
    assert_eq!(a.power_down + a.self_refresh, 0.0);
    let watts = |r: &Results| r.energy.as_ref().unwrap().by_component.dram / r.simulated_seconds;
    // DDR4: IDD2P 25 mA plus refresh (IDD5B x tRFC / tREFI, about 10 mA) when powered down,
    // IDD6 30 mA in self-refresh, against IDD2N-IDD3N (34-47 mA) plus refresh awake.
    assert!(watts(&idle) < 0.8 * watts(&awake), "low-power states: {} W vs awake {} W", watts(&idle), watts(&awake));
    assert!(watts(&busy) < watts(&awake));
    // The breakdown adds up to the DRAM's share of the energy.
    let e = idle.energy.as_ref().unwrap();
    let parts = e.dram_breakdown_joules.as_ref().expect("breakdown with the banked model");
    assert!((parts.total() - e.by_component.dram).abs() < 1e-12);
    assert!(parts.self_refresh > 0.0 && parts.refresh > 0.0 && parts.read > 0.0 && parts.activate > 0.0);
    // Waking costs latency: self-refresh exit (tXS = 360 ns) shows in the reads' DRAM time.
    let dram_us = |r: &Results| r.device.reads.latency_breakdown_us.get("cache_dram").unwrap();
    assert!(dram_us(&idle) > dram_us(&awake) + 0.2, "{} vs {}", dram_us(&idle), dram_us(&awake));
}

#[test]
fn bad_dram_settings_are_rejected_with_the_field_named() {
    let flow = "[[flows]]\nqueue_depth = 1\nrequests = 1\n";
    for (text, path) in [
        ("[dram]\nmodel = \"fast\"\n", "dram.model"),
        ("[dram]\nchannels = 0\n", "dram.channels"),
        ("[dram]\nbanks_per_rank = 0\n", "dram.banks_per_rank"),
        ("[dram]\npage_policy = \"open\"\n", "dram.page_policy"),
        ("[dram]\ninterleave = \"3KiB\"\n", "dram.interleave"),
        ("[dram]\ntrefi = \"100ns\"\n", "dram.trefi"),
        ("[dram]\ntras = 32\n", "dram.tras"),
        ("[dram]\nself_refresh_after = \"500ns\"\n", "dram.self_refresh_after"),
        ("[dram]\npowerdown_after = \"0ns\"\n", "dram.powerdown_after"),
        ("[dram]\nrows = 4\n", "dram"),
        ("[dram]\nmodel = \"banked\"\n[cache]\ndram_burst_bytes = 0\n", "cache.dram_burst_bytes"),
        ("[power]\ndram_idd4r_ma = 10\n", "power.dram_idd4r_ma"),
        ("[power]\ndram_idd6_ma = -1\n", "power.dram_idd6_ma"),
    ] {
        let message = match Config::from_toml_str(&format!("{text}{flow}")) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {text}"),
        };
        assert!(message.starts_with(path), "expected an error at {path}, got: {message}");
    }
}
