//! The per-request records file is complete or absent (issue 12, F17): while the run goes on
//! the records are written under a hidden temporary name (`.requests.bin.tmp-<pid>`), renamed
//! to `requests.bin` only when the run is over; a run that never ends leaves neither file, and a
//! previous run's `requests.bin` does not survive as if it were this run's.

mod common;

use std::path::{Path, PathBuf};

use common::{repo_root, SMALL_DEVICE};
use ssdlab_core::stats::records::{HEADER_BYTES, RECORD_BYTES};
use ssdlab_core::{Config, Simulation};

fn simulation(requests: u64) -> Simulation {
    let text = format!(
        "{SMALL_DEVICE}\n[run]\nrequest_records = \"all\"\n[[flows]]\nread_fraction = 0.5\nqueue_depth = 4\nrequests = {requests}\n"
    );
    let config = Config::from_toml_str(&text).unwrap();
    let echo = serde_json::to_value(&config).unwrap();
    Simulation::new(config, &repo_root(), echo).unwrap()
}

fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ssdlab-records-files-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn records_appear_under_their_name_only_when_the_run_is_over() {
    let dir = folder("finished");
    let path = dir.join("requests.bin");
    let partial = format!(".requests.bin.tmp-{}", std::process::id());
    let mut sim = simulation(2000);
    sim.write_request_records_to(&path).unwrap();
    assert!(!sim.step(5000).unwrap(), "the run is still going");
    sim.flush_request_records();
    assert_eq!(names(&dir), vec![partial.clone()], "mid-run: only the temporary file");

    let results = sim.run().unwrap();
    assert_eq!(names(&dir), vec!["requests.bin".to_string()], "the temporary file was renamed");
    let summary = results.request_records.as_ref().unwrap();
    assert_eq!(summary.file, "requests.bin");
    assert_eq!(summary.records, 2000);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len(), HEADER_BYTES + 2000 * RECORD_BYTES, "the file is complete");
    assert!(results.warnings.iter().all(|w| !w.contains("request_records")), "{:?}", results.warnings);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_run_that_never_finishes_leaves_no_records_file() {
    let dir = folder("dropped");
    let path = dir.join("requests.bin");
    // A previous run's complete file: it must not pass for the records of this run.
    std::fs::write(&path, b"SSDLREQ1 from an earlier run").unwrap();
    let mut sim = simulation(100_000);
    sim.write_request_records_to(&path).unwrap();
    assert!(!path.exists(), "the previous run's records are removed when recording starts");
    assert!(!sim.step(20_000).unwrap());
    sim.flush_request_records();
    drop(sim); // an error, Ctrl-C or SIGTERM in the caller
    assert_eq!(names(&dir), Vec::<String>::new(), "nothing left: no partial records file");
    std::fs::remove_dir_all(&dir).ok();
}
