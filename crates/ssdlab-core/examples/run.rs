//! Runs one configuration from the command line without Python:
//! `cargo run --release -p ssdlab-core --example run -- examples/mqsim-default.toml [results.json]`.
//!
//! `--requests N` runs every flow for N requests, as `ssdlab run --set flows.I.requests=N` would:
//! `scripts/pgo.py` trains the profile-guided build of the benchmark on the examples this way,
//! at a size that takes seconds.

use std::path::Path;
use std::process::ExitCode;

use ssdlab_core::{summary_table, Simulation};

const USAGE: &str = "usage: run CONFIG.toml [RESULTS.json] [--requests N]";

/// What the command line asked for.
#[derive(Debug, PartialEq)]
struct Args {
    config: String,
    out: Option<String>,
    requests: Option<u64>,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut paths = Vec::new();
    let mut requests = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--requests" {
            let n = rest.next().ok_or("--requests needs a number")?;
            match n.parse::<u64>() {
                Ok(n) if n > 0 && requests.is_none() => requests = Some(n),
                Ok(_) if requests.is_some() => return Err("--requests given twice".into()),
                _ => return Err(format!("--requests {n}: expected a whole number of at least 1")),
            }
        } else if arg.starts_with("--") {
            return Err(format!("unknown option {arg}; {USAGE}"));
        } else {
            paths.push(arg.clone());
        }
    }
    let mut paths = paths.into_iter();
    let config = paths.next().ok_or(USAGE)?;
    let out = paths.next();
    if paths.next().is_some() {
        return Err(USAGE.into());
    }
    Ok(Args { config, out, requests })
}

/// The config text with `requests = n` in every `[[flows]]` table (the config's own checks then
/// apply as to any value written there). A config without flows has nothing to cap: an error,
/// not a run of something else.
fn with_requests(text: &str, n: u64) -> Result<String, String> {
    let mut doc: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    let Some(toml::Value::Array(flows)) = doc.get_mut("flows") else {
        return Err("--requests: the config has no [[flows]] to cap".into());
    };
    let n = i64::try_from(n).map_err(|_| format!("--requests {n}: too large"))?;
    for flow in flows.iter_mut().filter_map(toml::Value::as_table_mut) {
        flow.insert("requests".into(), toml::Value::Integer(n));
    }
    toml::to_string(&doc).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let config_path = &args.config;
    let text = match std::fs::read_to_string(config_path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{config_path}: {e}");
            return ExitCode::from(2);
        }
    };
    let text = match args.requests.map(|n| with_requests(&text, n)) {
        None => text,
        Some(Ok(capped)) => capped,
        Some(Err(e)) => {
            eprintln!("{config_path}: {e}");
            return ExitCode::from(2);
        }
    };
    let base = Path::new(config_path).parent().unwrap_or(Path::new("."));
    let results = match Simulation::from_toml_str(&text, base).and_then(|mut sim| sim.run()) {
        Ok(r) => r,
        Err(e) => {
            // With --requests the text was written again: its line numbers are not the file's.
            let rewritten = if args.requests.is_some() { " (as capped by --requests)" } else { "" };
            eprintln!("{config_path}{rewritten}: {e}");
            return ExitCode::from(1);
        }
    };
    print!("{}", summary_table(&results));
    if let Some(out) = &args.out {
        let json = serde_json::to_string_pretty(&results).expect("results serialise");
        if let Err(e) = std::fs::write(out, json) {
            eprintln!("{out}: {e}");
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Result<Args, String> {
        parse_args(&line.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn the_cap_goes_before_or_after_the_paths() {
        let want = Args { config: "c.toml".into(), out: Some("o.json".into()), requests: Some(5) };
        assert_eq!(args("c.toml o.json --requests 5"), Ok(want));
        let want = Args { config: "c.toml".into(), out: None, requests: Some(7) };
        assert_eq!(args("--requests 7 c.toml"), Ok(want));
        assert_eq!(args("c.toml").unwrap().requests, None);
    }

    #[test]
    fn a_bad_cap_or_command_line_is_refused() {
        for bad in ["c.toml --requests", "c.toml --requests 0", "c.toml --requests -3", "c.toml --requests x"] {
            assert!(args(bad).unwrap_err().contains("--requests"), "{bad}");
        }
        assert!(args("c.toml --requests 1 --requests 2").unwrap_err().contains("twice"));
        assert!(args("c.toml --requests=3").unwrap_err().contains("unknown option"));
        assert!(args("").unwrap_err().contains("usage"));
        assert!(args("a b c").unwrap_err().contains("usage"));
    }

    #[test]
    fn every_flow_is_capped() {
        let text = "seed = 3\n[[flows]]\nqueue_depth = 2\nrequests = 100\n[[flows]]\nqueue_depth = 1\n";
        let capped: toml::Table = with_requests(text, 9).unwrap().parse().unwrap();
        let flows = capped["flows"].as_array().unwrap();
        assert_eq!(flows.len(), 2);
        assert!(flows.iter().all(|f| f["requests"].as_integer() == Some(9)));
        assert_eq!(capped["seed"].as_integer(), Some(3));
        let config = ssdlab_core::Config::from_toml_str(&with_requests(text, 9).unwrap()).unwrap();
        assert!(config.flows.iter().all(|f| f.requests == Some(9)));
    }

    #[test]
    fn a_config_without_flows_is_refused() {
        assert!(with_requests("seed = 1\n", 5).unwrap_err().contains("no [[flows]]"));
        assert!(with_requests("seed = \n", 5).is_err());
    }
}
