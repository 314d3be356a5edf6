//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use ssdlab_core::{Results, Simulation};

/// A number from the environment (to explore past a test's defaults), else `default`.
pub fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A property test's settings: `default_cases` cases (or `PROPTEST_CASES`) from a fixed seed (or
/// `SSDLAB_PROPTEST_SEED`), so that every CI run tries the same cases and a failure there is
/// reproduced here; `make fuzz` passes fresh seeds and larger budgets.
pub fn proptest_config(default_cases: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: env_or("PROPTEST_CASES", default_cases as u64) as u32,
        rng_seed: proptest::test_runner::RngSeed::Fixed(env_or("SSDLAB_PROPTEST_SEED", 0x55D1AB)),
        ..proptest::test_runner::Config::default()
    }
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn example(name: &str) -> String {
    std::fs::read_to_string(repo_root().join("examples").join(name)).expect("example config exists")
}

/// The text of `tests/fixtures/<name>`: a device config shared by a test file's cases.
pub fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A 64 KiB write-read cache and two flows on the same addresses, `requests` each: one that
/// caches (`first_flow_keys` added to it, e.g. a hot/cold address pattern) at queue depth 4, one
/// that writes 2 KiB straight to flash at depth 2. Reads race writes: the data checks must hold.
pub fn cached_and_direct_flows(requests: u32, first_flow_keys: &str) -> String {
    format!(
        "[cache]\ncapacity = \"64KiB\"\n[[flows]]\ncache_mode = \"write-read\"\nread_fraction = 0.5\n\
         request_size = {{ mean = \"6KiB\", stdev = \"4KiB\" }}\n{first_flow_keys}\nqueue_depth = 4\n\
         requests = {requests}\n[[flows]]\nread_fraction = 0.5\nrequest_size = \"2KiB\"\nqueue_depth = 2\n\
         requests = {requests}\n"
    )
}

/// A `[flash]` table: `shape` is [channels, chips per channel, dies per chip, planes per die,
/// blocks per plane, pages per block], with pages of `page_size` (e.g. "4KiB").
pub fn flash(shape: [u32; 6], page_size: &str) -> String {
    let keys =
        ["channels", "chips_per_channel", "dies_per_chip", "planes_per_die", "blocks_per_plane", "pages_per_block"];
    let lines: Vec<String> = keys.iter().zip(shape).map(|(key, n)| format!("{key} = {n}")).collect();
    format!("[flash]\n{}\npage_size = \"{page_size}\"", lines.join("\n"))
}

/// A small device (2 channels x 2 chips x 1 die x 2 planes x 64 blocks x 64 pages of 4 KiB).
pub const SMALL_DEVICE: &str = r#"
seed = 7
[flash]
channels = 2
chips_per_channel = 2
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 64
page_size = "4KiB"
[ftl]
over_provisioning = 0.2
"#;

pub fn run(toml: &str) -> Results {
    let mut sim = Simulation::from_toml_str(toml, &repo_root()).unwrap_or_else(|e| panic!("config rejected: {e}"));
    let results = sim.run().expect("run completes");
    sim.check_invariants().expect("invariants hold at the end");
    results
}

/// Replaces the `[[flows]]` of an example with the given ones.
pub fn with_flows(example_text: &str, flows: &str) -> String {
    let base = match example_text.find("[[flows]]") {
        Some(i) => &example_text[..i],
        None => example_text,
    };
    format!("{base}\n{flows}")
}
