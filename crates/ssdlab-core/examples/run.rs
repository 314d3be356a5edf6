//! Runs one configuration from the command line without Python:
//! `cargo run --release -p ssdlab-core --example run -- examples/mqsim-default.toml [results.json]`.

use std::path::Path;
use std::process::ExitCode;

use ssdlab_core::{summary_table, Simulation};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let Some(config_path) = args.get(1) else {
        eprintln!("usage: run CONFIG.toml [RESULTS.json]");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(config_path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{config_path}: {e}");
            return ExitCode::from(2);
        }
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
    if let Some(out) = args.get(2) {
        let json = serde_json::to_string_pretty(&results).expect("results serialise");
        if let Err(e) = std::fs::write(out, json) {
            eprintln!("{out}: {e}");
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}
