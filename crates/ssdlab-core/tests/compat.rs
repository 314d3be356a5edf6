//! `compat = "mqsim"` and the keys it sets: each of MQSim's behaviours alone, against the
//! default model (docs/fidelity.md).

mod common;

use common::run;
use ssdlab_core::config::{
    ChannelArbitration, Compat, Config, Destage, DieCommands, SerialAccessTime, TranslationPagesAtStart,
};

/// Random reads at `queue_depth` of a device of `shape` (`common::flash`), filled with data
/// (ideal map); `flash_keys` go into `[flash]`.
fn filled_reads(shape: [u32; 6], queue_depth: u32, requests: u64, flash_keys: &str) -> String {
    format!(
        r#"
seed = 3
{flash}
{flash_keys}
[ftl]
over_provisioning = 0.2
ideal_mapping = true
[precondition]
mode = "fill"
occupancy = 1.0
[[flows]]
read_fraction = 1.0
queue_depth = {queue_depth}
requests = {requests}
"#,
        flash = common::flash(shape, "8KiB")
    )
}

/// One channel, one chip of `dies` dies, QD 32.
fn chip(dies: u32, blocks: u32, flash_keys: &str) -> String {
    filled_reads([1, 1, dies, 1, blocks, 64], 32, 6000, flash_keys)
}

#[test]
fn one_per_chip_commands_keep_the_dies_of_a_chip_from_overlapping() {
    let independent = run(&chip(2, 64, ""));
    let one_per_chip = run(&chip(2, 64, "die_commands = \"one-per-chip\""));
    let one_die = run(&chip(1, 128, ""));
    let iops = |r: &ssdlab_core::Results| r.flows[0].iops;
    eprintln!(
        "independent {:.0}, one-per-chip {:.0}, one die {:.0} IOPS",
        iops(&independent),
        iops(&one_per_chip),
        iops(&one_die)
    );
    // The dies of a chip take turns: the chip serves as one die would.
    assert!(iops(&one_per_chip) < iops(&independent) * 0.7);
    assert!((iops(&one_per_chip) / iops(&one_die) - 1.0).abs() < 0.05);
}

#[test]
fn partial_page_transfer_moves_only_the_written_sectors() {
    let device = |flash_keys: &str| {
        format!(
            "seed = 4\n{flash}\n{flash_keys}\n[ftl]\nover_provisioning = 0.2\nideal_mapping = true\n\
             [precondition]\nmode = \"none\"\n\
             [[flows]]\nread_fraction = 0.0\nqueue_depth = 1\nrequest_size = \"4KiB\"\nrequests = 2000\ncache_mode = \"off\"\n",
            flash = common::flash([1, 1, 1, 1, 64, 64], "8KiB")
        )
    };
    let whole = run(&device(""));
    let partial = run(&device("partial_page_transfer = true"));
    // The typical write (p50: a page not written before, so no read-modify-write) saves half
    // of an 8 KiB page at 333 MT/s on a byte-wide bus, 4096 / 333e6 s = 12.3 us.
    let saved_us = whole.flows[0].writes.latency_us.p50 - partial.flows[0].writes.latency_us.p50;
    assert!((saved_us - 12.3).abs() < 0.5, "saved {saved_us:.2} us per 4 KiB write");
}

#[test]
fn compat_mqsim_fills_the_keys_left_unset_and_names_what_ran() {
    let config = Config::device_from_toml_str("compat = \"mqsim\"\n").unwrap();
    assert_eq!(config.compat, Compat::Mqsim);
    assert_eq!(config.flash.die_commands, Some(DieCommands::OnePerChip));
    assert_eq!(config.flash.partial_page_transfer, Some(true));
    assert_eq!(config.flash.channel_arbitration, Some(ChannelArbitration::DataOutFirst));
    let config = Config::device_from_toml_str("compat = \"mqsim\"\n[flash]\ndie_commands = \"independent\"\n").unwrap();
    assert_eq!(config.flash.die_commands, Some(DieCommands::Independent), "a key set wins");
    let config = Config::device_from_toml_str("").unwrap();
    assert_eq!(config.flash.die_commands, Some(DieCommands::Independent));
    assert_eq!(config.flash.partial_page_transfer, Some(false));
    assert_eq!(config.flash.channel_arbitration, Some(ChannelArbitration::InOrder));
    let text = serde_json::to_string(&config).unwrap();
    assert!(text.contains("\"compat\":\"default\"") && text.contains("\"die_commands\":\"independent\""));
    let mqsim = Config::device_from_toml_str("compat = \"mqsim\"\n").unwrap().model_summary();
    assert_eq!(mqsim.translation_pages_at_start, TranslationPagesAtStart::All);
    assert_eq!(mqsim.destage, Destage::ColdAtOnce);
    assert_eq!(mqsim.dram_serial_access_time, SerialAccessTime::Mqsim);
    let banked = Config::device_from_toml_str("compat = \"mqsim\"\n[dram]\nmodel = \"banked\"\n").unwrap();
    assert_eq!(banked.model_summary().dram_serial_access_time, SerialAccessTime::PerRow, "banked keeps its timing");
    let error =
        Config::device_from_toml_str("[dram]\nmodel = \"banked\"\nserial_access_time = \"mqsim\"\n").unwrap_err();
    assert!(error.to_string().contains("dram.serial_access_time"), "{error}");
}

#[test]
fn a_wrong_compat_value_names_the_key_and_the_choices() {
    let e = Config::device_from_toml_str("compat = \"ssdsim\"\n").unwrap_err().to_string();
    assert!(e.contains("compat") && e.contains("mqsim"), "{e}");
    let e = Config::device_from_toml_str("[flash]\ndie_commands = \"together\"\n").unwrap_err().to_string();
    assert!(e.contains("flash.die_commands") && e.contains("one-per-chip"), "{e}");
}

/// Random 4 KiB reads of a drive nobody wrote, through a small CMT.
fn unwritten_reads(ftl_keys: &str) -> String {
    format!(
        "seed = 5\n{flash}\n[ftl]\nover_provisioning = 0.2\ncmt_capacity = \"4KiB\"\n{ftl_keys}\n\
         [precondition]\nmode = \"none\"\n\
         [[flows]]\nread_fraction = 1.0\nqueue_depth = 4\nrequest_size = \"4KiB\"\nalignment = \"512B\"\nrequests = 3000\n",
        flash = common::flash([2, 2, 1, 1, 64, 64], "4KiB")
    )
}

#[test]
fn a_mapping_table_stored_at_start_makes_every_cmt_miss_read_flash() {
    let mapped = run(&unwritten_reads(""));
    let all = run(&unwritten_reads("translation_pages_at_start = \"all\""));
    let misses = |r: &ssdlab_core::Results| r.flows[0].cmt.lookups - r.flows[0].cmt.hits;
    // Nothing was written: the controller knows every range is empty and reads no translation
    // page; with the table on flash from the start every miss reads one.
    assert_eq!(mapped.device.flash.translation_page_reads, 0);
    assert!(misses(&all) > 2000, "{} misses", misses(&all));
    // Misses of one translation page while it is being read share the read.
    let reads = all.device.flash.translation_page_reads;
    assert!(reads > 2000 && reads <= misses(&all), "{reads} translation page reads");
    assert!(all.flows[0].reads.latency_us.mean > mapped.flows[0].reads.latency_us.mean * 1.3);
    // The table takes flash pages from the start but is not a user write.
    assert_eq!(all.device.flash.programs, 0);
}

/// Random 4 KiB writes into a large write cache at queue depth 16, over `working_set` of the
/// drive's 13,107 logical pages.
fn cached_writes(working_set: f64, cache_keys: &str) -> String {
    format!(
        "seed = 6\n{flash}\n[ftl]\nover_provisioning = 0.2\nideal_mapping = true\n\
         [cache]\ncapacity = \"64MiB\"\n{cache_keys}\n[precondition]\nmode = \"none\"\n\
         [[flows]]\nread_fraction = 0.0\nqueue_depth = 16\nrequest_size = \"4KiB\"\nrequests = 4000\n\
         cache_mode = \"write\"\nworking_set = {working_set}\n",
        flash = common::flash([2, 1, 1, 2, 64, 64], "4KiB")
    )
}

#[test]
fn cold_writes_go_through_at_once_under_back_pressure() {
    let when_full = run(&cached_writes(0.5, ""));
    let cold = run(&cached_writes(0.5, "destage = \"cold-at-once\""));
    // The cache holds every write: a write-back cache writes nothing to flash during the run.
    assert_eq!(when_full.device.cache.flushes, 0);
    assert_eq!(when_full.device.flash.programs, 0);
    // Cold at once: each first write of a page in the window goes to flash now, and the host
    // waits while one page per plane (4 pages here) is in flight: the flash's write rate.
    let c = &cold.device.cache;
    assert!(c.written_through > 3000, "{} written through", c.written_through);
    assert_eq!(c.flushes, c.written_through);
    assert!(c.writes_waited > 1000, "{} waited", c.writes_waited);
    assert!(cold.flows[0].writes.latency_us.mean > when_full.flows[0].writes.latency_us.mean * 10.0);
}

#[test]
fn hot_writes_stay_in_the_cache_under_cold_at_once() {
    // About 66 pages (those the working set's sectors touch) written over and over within a
    // second: only each page's first write is cold.
    let r = run(&cached_writes(0.005, "destage = \"cold-at-once\""));
    assert!(r.simulated_seconds < 1.0);
    let through = r.device.cache.written_through;
    assert!((60..=70).contains(&through), "{through} written through");
}

#[test]
fn mqsim_dram_arithmetic_halves_a_long_cached_write() {
    let write = |dram_keys: &str| {
        format!(
            "seed = 7\n{flash}\n[ftl]\nover_provisioning = 0.2\nideal_mapping = true\n[dram]\n{dram_keys}\n\
             [precondition]\nmode = \"none\"\n\
             [[flows]]\nread_fraction = 0.0\nqueue_depth = 1\nrequest_size = \"64KiB\"\nrequests = 200\ncache_mode = \"write\"\n",
            flash = common::flash([2, 1, 1, 2, 64, 64], "4KiB")
        )
    };
    let per_row = run(&write(""));
    let mqsim = run(&write("serial_access_time = \"mqsim\""));
    let dram = |r: &ssdlab_core::Results| r.flows[0].writes.latency_breakdown_us.get("cache_dram").unwrap();
    // 8 KiB rows: 327.9 us for eight rows, 164.0 us for MQSim's four.
    assert!((dram(&per_row) - 327.9).abs() < 0.5, "{}", dram(&per_row));
    assert!((dram(&mqsim) - 164.0).abs() < 0.5, "{}", dram(&mqsim));
}

#[test]
fn every_read_returns_the_last_write_in_compat_mqsim() {
    // Cached and direct writers of the same addresses, partial pages, a small CMT whose table
    // is on flash from the start, cold write-through and one command per chip, under GC.
    let flows = common::cached_and_direct_flows(4000, "");
    let text = format!(
        "compat = \"mqsim\"\nseed = 12\n{flash}\n[ftl]\nover_provisioning = 0.15\ncmt_capacity = \"256B\"\n\
         [precondition]\nmode = \"none\"\n[data]\nemulate = true\n{flows}",
        flash = common::flash([1, 2, 2, 2, 32, 16], "4KiB")
    );
    let r = run(&text);
    let d = r.data.as_ref().expect("data emulation");
    assert!(r.device.cache.written_through > 0 && r.device.gc.pages_moved > 0);
    assert!(r.device.flash.translation_page_reads > 0);
    assert_eq!(d.mismatched_sectors, 0, "{:?}", d.first_mismatch);
    assert!(d.verified_sectors > 0);
}

#[test]
fn reads_that_map_unwritten_pages_dirty_the_cmt_and_held_pages_answer_later_misses() {
    let keys = |more: &str| format!("translation_pages_at_start = \"all\"\n{more}");
    let plain = run(&unwritten_reads(&keys("")));
    let mapping = run(&unwritten_reads(&keys("reads_map_unwritten_pages = true")));
    let held =
        run(&unwritten_reads(&keys("reads_map_unwritten_pages = true\ntranslation_write_back = \"hold-in-dram\"")));
    let f = |r: &ssdlab_core::Results| (r.device.flash.translation_page_reads, r.device.flash.translation_page_writes);
    eprintln!("plain {:?}, mapping {:?}, held {:?}", f(&plain), f(&mapping), f(&held));
    // Reads change no mapping: evicted entries are clean, nothing is written back.
    assert_eq!(f(&plain).1, 0);
    // Each read maps its page: dirty entries leave the CMT and their pages are programmed.
    assert!(f(&mapping).1 > 100, "{:?}", f(&mapping));
    // Held in DRAM: never programmed, and misses on a held page read nothing from flash, so
    // fewer translation reads in all (merge reads included) than with programs.
    assert_eq!(f(&held).1, 0);
    assert_eq!(held.device.flash.programs, 0);
    assert!(f(&held).0 < f(&mapping).0, "{:?} vs {:?}", f(&held), f(&mapping));
}

#[test]
fn translation_reads_first_shortens_the_wait_for_a_cmt_miss() {
    let loaded = |controller: &str| {
        unwritten_reads("translation_pages_at_start = \"all\"").replace("queue_depth = 4", "queue_depth = 64")
            + &format!("[controller]\n{controller}\n")
    };
    let behind = run(&loaded(""));
    let first = run(&loaded("translation_reads_first = true"));
    let wait = |r: &ssdlab_core::Results| r.flows[0].reads.latency_breakdown_us.get("cmt_miss_wait").unwrap();
    eprintln!("cmt miss wait: behind user reads {:.1} us, first {:.1} us", wait(&behind), wait(&first));
    assert!(wait(&first) < wait(&behind) * 0.8);
}

#[test]
fn mqsim_entry_sizes_follow_the_device() {
    let device = |more: &str| {
        let flash = common::flash([8, 4, 2, 2, 2048, 256], "8KiB");
        Config::device_from_toml_str(&format!("{more}\n{flash}\n")).unwrap()
    };
    use ssdlab_core::config::mapping::entry_bytes;
    // 2^26 pages of 16 sectors: a CMT entry of 2 x 26 + 16 bits, a translation entry of 26 + 16.
    assert_eq!(entry_bytes(&device("compat = \"mqsim\"")), (9, 6));
    assert_eq!(entry_bytes(&device("")), (8, 4));
    let geometry = ssdlab_core::flash::Geometry::new(&device("compat = \"mqsim\""));
    assert_eq!(geometry.entries_per_translation_page, 1365);
}

/// Two channels of four chips of two dies and two planes at QD 64: the channels are busy but
/// not saturated, so who goes next changes what they carry.
fn busy_channel(flash_keys: &str) -> String {
    filled_reads([2, 4, 2, 2, 64, 64], 64, 20_000, flash_keys)
}

#[test]
fn data_out_first_arbitration_leaves_chips_idle_while_read_data_drains() {
    let in_order = run(&busy_channel(""));
    let data_out_first = run(&busy_channel("channel_arbitration = \"data-out-first\""));
    let iops = |r: &ssdlab_core::Results| r.flows[0].iops;
    let (a, b) = (iops(&in_order), iops(&data_out_first));
    eprintln!("in-order {a:.0} IOPS, data-out-first {b:.0} IOPS");
    assert_eq!(data_out_first.flows[0].requests, 20_000);
    // A chip that has sent its data waits while the other chips' data goes out: the busy
    // channels complete fewer reads (MQSim's ONFI PHY; docs/fidelity.md).
    assert!(b < a * 0.98, "{b} vs {a}");
    assert!(b > a * 0.85, "{b} vs {a}");
}
