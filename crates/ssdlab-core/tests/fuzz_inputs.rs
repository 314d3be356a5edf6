//! The Rust half of the fuzz suite (issue 12): hostile inputs to the parsers, the config
//! validation and the trace readers must end in a value or an error that names what it is about,
//! never in a panic, an abort or an allocation the machine cannot make.
//!
//! The FTL and cache with data checks are fuzzed by `data_emulation_props.rs` and
//! `data_emulation_mapping.rs` (random devices under GC with every read checked), the device
//! invariants by `invariants.rs`. Each property here runs a fixed budget of cases in every
//! `cargo test`; `SSDLAB_FUZZ_CASES=N` raises it for a long campaign (`make fuzz`).

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use ssdlab_core::config::{Bandwidth, Duration, Frequency, Rate, Size, TransferRate};
use ssdlab_core::{SimError, Simulation};
use std::path::Path;

mod common;

/// `default` cases (or `SSDLAB_FUZZ_CASES`) from the shared fixed seed (`SSDLAB_PROPTEST_SEED`).
fn cases(default: u32) -> ProptestConfig {
    ProptestConfig {
        cases: common::env_or("SSDLAB_FUZZ_CASES", default as u64) as u32,
        failure_persistence: None,
        ..common::proptest_config(default)
    }
}

/// Numbers as people (and broken scripts) write them: signs, exponents, huge, tiny, NaN.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[-+]?[0-9]{1,25}(\\.[0-9]{0,6})?([eE][-+]?[0-9]{1,4})?",
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("-0".to_string()),
        Just("18446744073709551616".to_string()),
        Just("1e-9".to_string()),
        Just("1e30".to_string()),
        Just("".to_string()),
    ]
}

fn unit_text() -> impl Strategy<Value = String> {
    let units = prop::sample::select(vec![
        "", "ps", "ns", "us", "ms", "s", "B", "KB", "KiB", "MiB", "GiB", "TiB", "sectors", "MT/s", "T/s", "GT/s",
        "B/s", "MB/s", "GB/s", "/s", "k/s", "M/s", "Hz", "MHz", "GHz", " us", "µs", "kib",
    ]);
    prop_oneof![(number_text(), units).prop_map(|(n, u)| format!("{n}{u}")), ".{0,24}", "[ -~]{0,12}",]
}

proptest! {
    #![proptest_config(cases(512))]

    /// Every unit parser returns a value or a message, whatever the text.
    #[test]
    fn unit_parsers_never_panic(text in unit_text()) {
        for result in [
            Duration::parse(&text).map(|_| ()),
            Size::parse(&text).map(|_| ()),
            Rate::parse(&text).map(|_| ()),
            TransferRate::parse(&text).map(|_| ()),
            Bandwidth::parse(&text).map(|_| ()),
            Frequency::parse(&text).map(|_| ()),
        ] {
            if let Err(message) = result {
                prop_assert!(!message.trim().is_empty(), "empty message for {text:?}");
                prop_assert!(!message.contains("expected expected"), "{message}");
            }
        }
    }
}

/// A TOML value of any kind, biased to what breaks arithmetic and types.
fn hostile_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![0i64, 1, 2, 3, 7, 8, 64, 255, 4096, 65535, 65536, 4294967295, 4294967296, 1 << 40, i64::MAX, -1, i64::MIN])
            .prop_map(|v| v.to_string()),
        2 => prop::sample::select(vec!["0.0", "0.5", "1.0", "-0.5", "1e-300", "1e300", "nan", "inf", "-inf"]).prop_map(String::from),
        // A JSON string literal is also a TOML basic string (the same escapes).
        3 => unit_text().prop_map(|t| serde_json::to_string(&t).unwrap()),
        1 => Just("true".to_string()),
        1 => Just("[1, 2]".to_string()),
        1 => Just("{ x = 1 }".to_string()),
    ]
}

/// Keys of every section, with the sections they belong to.
const KEYS: &[(&str, &[&str])] = &[
    (
        "flash",
        &[
            "channels",
            "chips_per_channel",
            "dies_per_chip",
            "planes_per_die",
            "blocks_per_plane",
            "pages_per_block",
            "page_size",
            "channel_rate",
            "channel_width_bytes",
            "technology",
            "suspension",
        ],
    ),
    ("flash.timing", &["read", "program", "erase", "suspend_program", "suspend_erase"]),
    (
        "ftl",
        &[
            "over_provisioning",
            "gc_threshold",
            "gc_hard_threshold",
            "cmt_capacity",
            "pe_cycle_limit",
            "static_wear_leveling_threshold",
            "gc_rga_candidates",
            "mapping",
            "log_blocks_per_data_block",
        ],
    ),
    (
        "cache",
        &["capacity", "dram_data_rate", "dram_burst_bytes", "dram_row_size", "ways", "line_size", "read_ahead_pages"],
    ),
    (
        "host",
        &[
            "pcie_lane_rate",
            "pcie_lanes",
            "pcie_max_payload",
            "sata_link_rate",
            "queue_fetch_size",
            "sq_depth",
            "max_requests_in_device",
            "interface",
        ],
    ),
    ("controller", &["dispatch_read", "dispatch_write", "dispatch_erase"]),
    ("firmware", &["enabled", "cores", "clock"]),
    ("dram", &["model", "channels", "ranks_per_channel", "banks_per_rank", "trefi", "trfc"]),
    ("data", &["emulate", "memory_limit"]),
    ("run", &["max_simulated_time", "stall_timeout"]),
];

const FLOW_KEYS: &[&str] = &[
    "queue_depth",
    "rate",
    "requests",
    "duration",
    "request_size",
    "read_fraction",
    "working_set",
    "alignment",
    "sq_depth",
];

/// A valid small device and flow, then one to four keys set to hostile values.
fn hostile_config() -> impl Strategy<Value = String> {
    let section_edit = (0..KEYS.len(), any::<prop::sample::Index>(), hostile_value());
    let flow_edit = (prop::sample::select(FLOW_KEYS), hostile_value());
    (prop::collection::vec(section_edit, 0..4), prop::collection::vec(flow_edit, 0..3)).prop_map(
        |(edits, flow_edits)| {
            let mut sections: Vec<(String, Vec<(String, String)>)> = vec![
                (
                    "flash".into(),
                    vec![
                        ("channels".into(), "2".into()),
                        ("chips_per_channel".into(), "1".into()),
                        ("dies_per_chip".into(), "1".into()),
                        ("planes_per_die".into(), "2".into()),
                        ("blocks_per_plane".into(), "32".into()),
                        ("pages_per_block".into(), "32".into()),
                        ("page_size".into(), "\"4KiB\"".into()),
                    ],
                ),
                ("ftl".into(), vec![("over_provisioning".into(), "0.25".into())]),
                ("precondition".into(), vec![("mode".into(), "\"none\"".into())]),
                // Whatever the edits ask for, the run may take no more than this: a configuration
                // beyond it must be refused before anything is allocated.
                (
                    "run".into(),
                    vec![("memory_limit".into(), "\"1GiB\"".into()), ("max_simulated_time".into(), "\"20ms\"".into())],
                ),
            ];
            for (section, key, value) in edits {
                let (name, keys) = KEYS[section];
                let key = keys[key.index(keys.len())];
                let entry = match sections.iter().position(|(s, _)| s == name) {
                    Some(i) => i,
                    None => {
                        sections.push((name.to_string(), Vec::new()));
                        sections.len() - 1
                    }
                };
                let table = &mut sections[entry].1;
                table.retain(|(k, _)| k != key);
                table.push((key.to_string(), value));
            }
            let mut text = String::new();
            for (name, table) in &sections {
                text.push_str(&format!("[{name}]\n"));
                for (k, v) in table {
                    text.push_str(&format!("{k} = {v}\n"));
                }
            }
            let mut flow: Vec<(String, String)> =
                vec![("queue_depth".into(), "4".into()), ("requests".into(), "200".into())];
            for (key, value) in flow_edits {
                flow.retain(|(k, _)| k != key);
                flow.push((key.to_string(), value));
            }
            text.push_str("[[flows]]\n");
            for (k, v) in flow {
                text.push_str(&format!("{k} = {v}\n"));
            }
            text
        },
    )
}

/// Whether an error names what it is about: a dotted key path, a section, or a flow.
fn names_a_field(message: &str) -> bool {
    let head = message.split(':').next().unwrap_or("");
    let known = KEYS.iter().any(|(s, _)| head.starts_with(s.split('.').next().unwrap_or(s)));
    let line = head.strip_prefix("line ").is_some_and(|n| n.trim().parse::<u32>().is_ok());
    known || line || head.starts_with("flows") || head.starts_with("config") || head.starts_with("seed")
}

fn check_config(text: &str) -> Result<(), TestCaseError> {
    match Simulation::from_toml_str(text, Path::new(".")) {
        Ok(mut sim) => {
            // A few thousand events are enough to reach every per-request computation.
            match sim.step(20_000) {
                Ok(_) | Err(SimError::Config(_)) | Err(SimError::Trace(_)) | Err(SimError::EndOfLife(_)) => {}
            }
            prop_assert!(sim.check_state_invariants().is_ok(), "{:?}", sim.check_state_invariants());
        }
        Err(e) => {
            let message = e.to_string();
            prop_assert!(names_a_field(&message), "error names no field: {message}\n{text}");
            prop_assert!(!message.contains("expected expected"), "{message}");
            prop_assert!(!message.contains("not valid JSON"), "{message}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(160))]

    /// Hostile values in any key: refused naming the field, or a run that keeps the device's
    /// invariants (and no allocation past run.memory_limit, or the test process would die).
    #[test]
    fn hostile_configs_are_refused_by_name_or_run(text in hostile_config()) {
        check_config(&text)?;
    }
}

/// Lines of each trace format, some valid, some damaged.
fn trace_line(format: &'static str) -> BoxedStrategy<String> {
    let n = || number_text();
    match format {
        "mqsim" => (n(), n(), n(), n(), prop::sample::select(vec!["0", "1", "2", "x"]))
            .prop_map(|(t, d, s, c, op)| format!("{t} {d} {s} {c} {op}"))
            .boxed(),
        "msr" => (n(), n(), prop::sample::select(vec!["Read", "Write", "Flush", ""]), n(), n())
            .prop_map(|(t, d, op, off, size)| format!("{t},host,{d},{op},{off},{size},100"))
            .boxed(),
        "blkparse" => (
            n(),
            prop::sample::select(vec!["D", "Q", "C", "X"]),
            prop::sample::select(vec!["R", "W", "WS", "N"]),
            n(),
            n(),
        )
            .prop_map(|(t, ev, op, s, c)| format!("  8,0    1    1   {t}  100  {ev}   {op} {s} + {c} [fio]"))
            .boxed(),
        _ => (n(), prop::sample::select(vec!["read", "write", "trim", "sync", "open"]), n(), n())
            .prop_map(|(t, op, off, len)| format!("{t} /dev/sdb {op} {off} {len}"))
            .boxed(),
    }
}

fn trace_case() -> impl Strategy<Value = (&'static str, Vec<String>, bool)> {
    prop::sample::select(vec!["mqsim", "msr", "blkparse", "fio"]).prop_flat_map(|format| {
        let valid = match format {
            "mqsim" => "1000 0 16 8 1",
            "msr" => "128166372003061629,wdev,0,Read,8192,4096,1331",
            "blkparse" => "  8,0    3        4     0.000005000   697  D   W 223490 + 8 [kjournald]",
            _ => "1000 /dev/sdb write 4096 4096",
        };
        let line = prop_oneof![3 => Just(valid.to_string()), 2 => trace_line(format), 1 => ".{0,40}"];
        (Just(format), prop::collection::vec(line, 0..12), any::<bool>())
    })
}

proptest! {
    #![proptest_config(cases(256))]

    /// Damaged traces of every format: replayed, or refused naming the file (and line).
    #[test]
    fn damaged_traces_replay_or_are_refused_by_file(case in trace_case()) {
        let (format, lines, explicit) = case;
        let dir = std::env::temp_dir().join(format!("ssdlab-fuzz-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut body = lines.join("\n");
        if format == "fio" {
            body = format!("fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdb open\n{body}");
        }
        std::fs::write(dir.join("t.trace"), body).unwrap();
        let fmt = if explicit { format } else { "auto" };
        let config = format!(
            "[flash]\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 32\npages_per_block = 32\npage_size = \"4KiB\"\n[ftl]\nover_provisioning = 0.25\n[precondition]\nmode = \"none\"\n[run]\nmax_simulated_time = \"50ms\"\n[[flows]]\nkind = \"trace\"\npath = \"t.trace\"\nformat = \"{fmt}\"\n"
        );
        let outcome = Simulation::from_toml_str(&config, &dir).and_then(|mut sim| {
            while !sim.step(50_000)? {}
            sim.check_invariants().map_err(|e| SimError::Config(ssdlab_core::ConfigError::new("invariants", e)))?;
            Ok(())
        });
        if let Err(e) = outcome {
            let message = e.to_string();
            prop_assert!(message.contains("t.trace") || message.starts_with("flows[0]"), "error names no file: {message}");
            prop_assert!(!message.contains("invariants"), "{message}");
        }
    }
}
