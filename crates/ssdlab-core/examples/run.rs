//! Runs one configuration from the command line without Python:
//! `cargo run --release -p ssdlab-core --example run -- examples/mqsim-default.toml [results.json]`.
//!
//! `--requests N` (after the paths) runs every flow for N requests, as
//! `ssdlab run --set flows.I.requests=N` would: `scripts/pgo.py` trains the profile-guided build
//! of the benchmarks on the examples this way, at a size that takes seconds.

use std::path::Path;
use std::process::ExitCode;

use ssdlab_core::{summary_table, Simulation};

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let requests = match args.iter().position(|a| a == "--requests") {
        Some(i) => match args.get(i + 1).map(|n| n.parse::<i64>()) {
            Some(Ok(n)) => {
                args.drain(i..i + 2);
                Some(n)
            }
            _ => {
                eprintln!("--requests needs a whole number");
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let Some(config_path) = args.first() else {
        eprintln!("usage: run CONFIG.toml [RESULTS.json] [--requests N]");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(config_path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{config_path}: {e}");
            return ExitCode::from(2);
        }
    };
    let text = match requests {
        Some(n) => match with_requests(&text, n) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{config_path}: {e}");
                return ExitCode::from(2);
            }
        },
        None => text,
    };
    let base = Path::new(config_path).parent().unwrap_or(Path::new("."));
    let results = match Simulation::from_toml_str(&text, base).and_then(|mut sim| sim.run()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{config_path}: {e}");
            return ExitCode::from(1);
        }
    };
    print!("{}", summary_table(&results));
    if let Some(out) = args.get(1) {
        let json = serde_json::to_string_pretty(&results).expect("results serialise");
        if let Err(e) = std::fs::write(out, json) {
            eprintln!("{out}: {e}");
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}

/// The config text with `requests = n` in every `[[flows]]` table (the config's own checks
/// then apply as to any value written there).
fn with_requests(text: &str, n: i64) -> Result<String, String> {
    let mut doc: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    if let Some(toml::Value::Array(flows)) = doc.get_mut("flows") {
        for flow in flows.iter_mut().filter_map(toml::Value::as_table_mut) {
            flow.insert("requests".into(), toml::Value::Integer(n));
        }
    }
    toml::to_string(&doc).map_err(|e| e.to_string())
}
