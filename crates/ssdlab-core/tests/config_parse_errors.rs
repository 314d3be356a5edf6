//! How a config reaches the schema (issue 12, items F02-F04): a section written as an array is
//! refused instead of read positionally, NaN and infinity are refused naming the key, and an enum
//! given the wrong type says which strings it takes. Both readers are checked: TOML (the Rust
//! API) and JSON (what the Python layer sends, with `json.dumps`'s `NaN`/`Infinity` tokens).

use ssdlab_core::Config;

const FLOW: &str = "[[flows]]\nqueue_depth = 1\nrequests = 10\n";
const FLOW_JSON: &str = r#""flows": [{"queue_depth": 1, "requests": 10}]"#;

fn toml_error(text: &str) -> String {
    match Config::from_toml_str(text) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted:\n{text}"),
    }
}

fn json_error(text: &str) -> String {
    match Config::from_json_str(text) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted:\n{text}"),
    }
}

fn assert_has(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "expected `{part}` in: {message}");
    }
}

// ------------------------------------------------------------------------------------------------
// F02: a section given as an array.

#[test]
fn section_as_array_is_refused_not_read_positionally() {
    let message = toml_error(&format!("flash = [1, 2]\n{FLOW}"));
    assert!(message.starts_with("flash: expected a table ([flash] and its keys"), "{message}");
    assert!(message.ends_with("got an array"), "{message}");
    let message = json_error(&format!(r#"{{"flash": [1, 2], {FLOW_JSON}}}"#));
    assert!(message.starts_with("flash: expected a table ([flash] and its keys"), "{message}");
    assert!(message.ends_with("got an array"), "{message}");
}

#[test]
fn host_as_array_is_refused() {
    let message = toml_error(&format!("host = [\"sata\"]\n{FLOW}"));
    assert_has(&message, &["host: expected a table ([host]", "got an array"]);
    let message = json_error(&format!(r#"{{"host": ["sata"], {FLOW_JSON}}}"#));
    assert_has(&message, &["host: expected a table ([host]", "got an array"]);
}

#[test]
fn array_of_tables_for_a_section_gets_a_hint() {
    let message = toml_error(&format!("[[flash]]\nchannels = 2\n{FLOW}"));
    assert_has(&message, &["flash: expected a table ([flash]", "got an array of tables", "single brackets"]);
    assert!(!message.contains("u32"), "no Rust type names: {message}");
}

#[test]
fn every_sub_table_refuses_an_array() {
    for (text, path) in [
        ("[flash]\ntiming = [1, 2]\n", "flash.timing"),
        ("[host]\nufs = [1]\n", "host.ufs"),
        ("[host]\nopen_channel = [1]\n", "host.open_channel"),
        ("[host]\nwrr_weights = [1, 2, 3]\n", "host.wrr_weights"),
        ("cache = [\"256MiB\"]\n", "cache"),
        ("ftl = [0.07]\n", "ftl"),
        ("controller = [\"0ns\"]\n", "controller"),
        ("run = [\"1ms\"]\n", "run"),
        ("dram = [1]\n", "dram"),
        ("data = [true]\n", "data"),
        ("power = [true]\n", "power"),
        ("firmware = [1]\n", "firmware"),
    ] {
        let message = toml_error(&format!("{text}{FLOW}"));
        assert!(message.starts_with(&format!("{path}: expected a table ([{path}]")), "{text}: {message}");
        assert!(message.contains("got an array"), "{text}: {message}");
    }
}

#[test]
fn a_flow_given_as_an_array_is_refused() {
    let message = json_error(r#"{"flows": [[1, 10]]}"#);
    assert_has(&message, &["flows[0]: expected a table", "got an array"]);
}

#[test]
fn a_section_given_a_number_names_what_is_expected() {
    let message = toml_error(&format!("flash = 3\n{FLOW}"));
    assert_has(&message, &["flash:", "expected a table ([flash]", "3"]);
    let message = json_error(&format!(r#"{{"flash": 3, {FLOW_JSON}}}"#));
    assert_has(&message, &["flash:", "expected a table ([flash]", "3"]);
    assert!(!message.contains("FlashConfig"), "no Rust type names: {message}");
}

#[test]
fn tables_still_read_as_before() {
    let text = format!(
        "[flash]\nchannels = 2\ntechnology = \"TLC\"\n[flash.timing]\nread = {{ lsb = \"50us\", csb = \"70us\", msb = \"90us\" }}\n[host]\ninterface = \"sata\"\n[precondition]\nmode = \"fill\"\noccupancy = 0.5\n{FLOW}"
    );
    let config = Config::from_toml_str(&text).unwrap();
    assert_eq!(config.flash.channels, 2);
    assert_eq!(config.host.interface, ssdlab_core::config::HostInterface::Sata);
    assert_eq!(config.flash.technology, ssdlab_core::config::CellTechnology::Tlc);
    // The alias of an enum value still reads.
    let config = Config::from_toml_str(&format!("[flash]\nchannels = 2\ntechnology = \"tlc\"\n{FLOW}")).unwrap();
    assert_eq!(config.flash.technology, ssdlab_core::config::CellTechnology::Tlc);
}

// ------------------------------------------------------------------------------------------------
// F03: NaN and infinity.

#[test]
fn nan_in_toml_names_the_key_and_an_example() {
    let message =
        toml_error(&format!("[flash]\nchannels = 2\nblocks_per_plane = 64\n[ftl]\nover_provisioning = nan\n{FLOW}"));
    assert_eq!(message, "ftl.over_provisioning: nan is not a number; expected a finite number like 0.07");
}

#[test]
fn nan_and_infinity_in_json_name_the_key() {
    // What Python's json.dumps writes for float("nan") and float("inf").
    let message = json_error(&format!(r#"{{"ftl": {{"over_provisioning": NaN}}, {FLOW_JSON}}}"#));
    assert_eq!(message, "ftl.over_provisioning: nan is not a number; expected a finite number like 0.07");
    let message = json_error(&format!(r#"{{"ftl": {{"gc_threshold": Infinity}}, {FLOW_JSON}}}"#));
    assert_eq!(message, "ftl.gc_threshold: inf is not a finite number; expected a finite number like 0.05");
    let message = json_error(&format!(r#"{{"precondition": {{"occupancy": -Infinity}}, {FLOW_JSON}}}"#));
    assert_has(&message, &["precondition.occupancy: -inf is not a finite number", "expected a finite number"]);
    assert!(!message.contains("line 1 column"), "{message}");
}

#[test]
fn nan_in_a_flow_option_names_the_flow() {
    let message = json_error(
        r#"{"flows": [{"queue_depth": 1, "requests": 10}, {"kind": "trace", "path": "x.trace", "time_scale": NaN}]}"#,
    );
    assert_eq!(message, "flows[1].time_scale: nan is not a number; expected a finite number");
    let message = toml_error(&format!("{FLOW}[[flows]]\nkind = \"trace\"\npath = \"x.trace\"\ntime_scale = nan\n"));
    assert_eq!(message, "flows[1].time_scale: nan is not a number; expected a finite number");
}

#[test]
fn nan_where_a_duration_belongs_shows_a_duration() {
    let message = json_error(&format!(r#"{{"flash": {{"timing": {{"erase": NaN}}}}, {FLOW_JSON}}}"#));
    assert_eq!(message, "flash.timing.erase: nan is not a number; expected a value like \"3.8ms\"");
}

#[test]
fn nan_inside_a_string_is_only_text() {
    // A flow named "NaN" and a path with "Infinity" in it are strings, not numbers.
    let config = Config::from_json_str(
        r#"{"flows": [{"name": "NaN", "queue_depth": 1, "requests": 10}], "ftl": {"over_provisioning": 0.1}}"#,
    )
    .unwrap();
    assert_eq!(config.flows[0].name.as_deref(), Some("NaN"));
}

// ------------------------------------------------------------------------------------------------
// F04: an enum given the wrong type.

#[test]
fn enum_given_an_integer_lists_its_values() {
    let expected = r#"host.interface: expected one of "nvme", "sata", "ufs", "open_channel", got the integer 3"#;
    assert_eq!(toml_error(&format!("[host]\ninterface = 3\n{FLOW}")), expected);
    assert_eq!(json_error(&format!(r#"{{"host": {{"interface": 3}}, {FLOW_JSON}}}"#)), expected);
}

#[test]
fn every_enum_given_a_wrong_type_lists_its_values() {
    for (json, path, values, got) in [
        (r#""ftl": {"gc_policy": 1}"#, "ftl.gc_policy", r#""greedy", "random""#, "the integer 1"),
        (r#""flash": {"technology": true}"#, "flash.technology", r#""SLC", "MLC", "TLC""#, "the boolean true"),
        (r#""flash": {"suspension": 0.5}"#, "flash.suspension", r#""none", "program""#, "the number 0.5"),
        (r#""controller": {"scheduling": ["fifo"]}"#, "controller.scheduling", r#""fifo""#, "an array"),
        (r#""host": {"arbitration": {"a": 1}}"#, "host.arbitration", "", "unknown variant"),
        (r#""cache": {"sharing": 2}"#, "cache.sharing", r#""shared", "partitioned""#, "the integer 2"),
    ] {
        let message = json_error(&format!("{{{json}, {FLOW_JSON}}}"));
        assert!(message.starts_with(&format!("{path}: ")), "{json}: {message}");
        assert_has(&message, &[values, got]);
        assert!(!message.contains("expected value"), "{json}: {message}");
    }
    let message = json_error(r#"{"flows": [{"queue_depth": 1, "requests": 10, "cache_mode": 1}]}"#);
    assert_has(&message, &["flows[0].cache_mode: expected one of", "\"write-read\"", "got the integer 1"]);
}

#[test]
fn an_unknown_enum_string_still_lists_the_values() {
    let message = toml_error(&format!("[host]\ninterface = \"scsi\"\n{FLOW}"));
    assert_has(&message, &["host.interface:", "unknown variant `scsi`", "`nvme`"]);
}
