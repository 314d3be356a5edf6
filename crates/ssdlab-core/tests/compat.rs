//! `compat = "mqsim"` and the keys it sets: each of MQSim's behaviours alone, against the
//! default model (docs/fidelity.md).

mod common;

use common::run;
use ssdlab_core::config::{Compat, Config, DieCommands};

/// One channel, one chip of `dies` dies, filled with data (ideal map); `flash_keys` go into
/// `[flash]`.
fn chip(dies: u32, blocks: u32, flash_keys: &str) -> String {
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
queue_depth = 32
requests = 6000
"#,
        flash = common::flash([1, 1, dies, 1, blocks, 64], "8KiB")
    )
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
    let config = Config::device_from_toml_str("compat = \"mqsim\"\n[flash]\ndie_commands = \"independent\"\n").unwrap();
    assert_eq!(config.flash.die_commands, Some(DieCommands::Independent), "a key set wins");
    let config = Config::device_from_toml_str("").unwrap();
    assert_eq!(config.flash.die_commands, Some(DieCommands::Independent));
    assert_eq!(config.flash.partial_page_transfer, Some(false));
    let text = serde_json::to_string(&config).unwrap();
    assert!(text.contains("\"compat\":\"default\"") && text.contains("\"die_commands\":\"independent\""));
}

#[test]
fn a_wrong_compat_value_names_the_key_and_the_choices() {
    let e = Config::device_from_toml_str("compat = \"ssdsim\"\n").unwrap_err().to_string();
    assert!(e.contains("compat") && e.contains("mqsim"), "{e}");
    let e = Config::device_from_toml_str("[flash]\ndie_commands = \"together\"\n").unwrap_err().to_string();
    assert!(e.contains("flash.die_commands") && e.contains("one-per-chip"), "{e}");
}
