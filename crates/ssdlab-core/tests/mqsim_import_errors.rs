//! MQSim import of damaged or absurd files (issue 12: F06, F07 and the fuzzing corpus under
//! `tests/reliability/corpus`): every one is an error naming the file, the line and the tag, and
//! saying what was expected; never an abort, a panic, or a silent import.

mod common;

use std::path::{Path, PathBuf};

use common::repo_root;
use ssdlab_core::config::mqsim::{import, import_files};
use ssdlab_core::ConfigError;

fn corpus(dir: &str) -> PathBuf {
    repo_root().join("tests/reliability/corpus").join(dir)
}

fn import_pair(dir: &Path) -> Result<usize, ConfigError> {
    import_files(&dir.join("ssdconfig.xml"), &dir.join("workload.xml")).map(|i| i.scenarios.len())
}

fn error_of(dir: &Path) -> String {
    match import_pair(dir) {
        Err(e) => e.to_string(),
        Ok(n) => panic!("{} was imported ({n} scenarios)", dir.display()),
    }
}

/// The line (1-based) of the first line of `file` containing `needle`.
fn line_of(file: &Path, needle: &[u8]) -> usize {
    let bytes = std::fs::read(file).unwrap();
    let at = bytes.windows(needle.len()).position(|w| w == needle).expect("needle in file");
    bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1
}

fn subdirs(dir: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus(dir)).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "corpus {dir} is empty");
    dirs
}

#[test]
fn f06_channel_count_beyond_32_bits_is_an_error_not_an_abort() {
    let dir = corpus("findings/F06-mqsim-abort");
    let e = error_of(&dir);
    assert!(e.contains("ssdconfig.xml:44: Flash_Channel_Count"), "{e}");
    assert!(e.ends_with("1099511627776 is more than ssdlab supports (at most 4294967295)"), "{e}");
}

#[test]
fn f07_counts_whose_product_wraps_are_an_error_not_a_panic() {
    let e = error_of(&corpus("findings/F07-mqsim-u64-wrap-panic"));
    assert!(e.contains("ssdconfig.xml:44: Flash_Channel_Count"), "{e}");
    assert!(e.contains("4294967296 is more than ssdlab supports"), "{e}");
    let e = error_of(&corpus("overflow"));
    assert!(e.contains("Flash_Channel_Count") && e.contains("is more than ssdlab supports"), "{e}");
}

#[test]
fn crash_corpus_geometry_is_refused_naming_the_tag() {
    for dir in subdirs("crash") {
        let e = error_of(&dir);
        let tag = ["Flash_Channel_Count", "Plane_No_Per_Die", "Die_No_Per_Chip"]
            .into_iter()
            .find(|t| e.contains(t))
            .unwrap_or_else(|| panic!("{}: no geometry tag named in: {e}", dir.display()));
        assert!(e.contains("ssdconfig.xml:"), "{e}");
        assert!(e.contains("is more than ssdlab supports (at most 4294967295)"), "{tag}: {e}");
    }
}

#[test]
fn a_zero_count_is_an_error() {
    let dir = corpus("findings/F06-mqsim-abort");
    let device = std::fs::read_to_string(dir.join("ssdconfig.xml")).unwrap().replace("1099511627776", "0");
    let workload = std::fs::read_to_string(dir.join("workload.xml")).unwrap();
    let e = import(&device, &workload).unwrap_err().to_string();
    assert_eq!(e, "ssdconfig.xml:44: Flash_Channel_Count: expected at least 1 channel, got \"0\"");
}

#[test]
fn a_huge_device_within_32_bits_imports_without_sizing_anything_by_it() {
    // 2^32 - 1 channels of 4 chips: tens of billions of planes. The import must neither allocate per
    // plane nor per id; ssdlab's own limits then refuse the scenario, which stays a warning that
    // names the key an override can fix.
    let dir = corpus("findings/F06-mqsim-abort");
    let device = std::fs::read_to_string(dir.join("ssdconfig.xml")).unwrap().replace("1099511627776", "4294967295");
    let workload = std::fs::read_to_string(dir.join("workload.xml")).unwrap();
    let imported = import(&device, &workload).unwrap();
    for s in &imported.scenarios {
        assert!(s.warnings.iter().any(|w| w.contains("ssdlab refuses scenario")), "{:?}", s.warnings);
    }
}

#[test]
fn nul_bytes_are_an_error_naming_file_and_line() {
    for dir in subdirs("mqsim-silent") {
        let outcome = std::fs::read_to_string(dir.join("OUTCOME.txt")).unwrap();
        let file = if outcome.contains("\"file\": \"dev\"") { "ssdconfig.xml" } else { "workload.xml" };
        let line = line_of(&dir.join(file), b"\0");
        let e = error_of(&dir);
        let at = format!(
            "{}:{line}: malformed XML: a NUL byte (character 0) is not allowed in XML",
            dir.join(file).display()
        );
        assert!(e.starts_with(&at), "expected `{at}` in: {e}");
    }
}

#[test]
fn empty_files_say_what_they_should_hold() {
    for dir in subdirs("mqsim-unclear") {
        let e = error_of(&dir);
        let expected = if dir.to_string_lossy().ends_with("empty_device") {
            "ssdconfig.xml: the file is empty: expected an MQSim device file with an <Execution_Parameter_Set> element"
        } else {
            "workload.xml: the file is empty: expected an MQSim workload file with an <MQSim_IO_Scenarios> element"
        };
        assert!(e.ends_with(expected), "expected `{expected}`, got: {e}");
    }
    let e = import("<?xml version=\"1.0\"?>\n<!-- nothing -->\n", "").unwrap_err().to_string();
    assert!(e.starts_with("ssdconfig.xml: the file holds no element"), "{e}");
    assert!(e.contains("<Execution_Parameter_Set>"), "{e}");
}

#[test]
fn a_folder_instead_of_a_file_says_so() {
    let dir = corpus("findings/F06-mqsim-abort");
    let e = import_files(&dir, &dir.join("workload.xml")).unwrap_err().to_string();
    assert!(e.ends_with("is a folder; expected an MQSim device file (ssdconfig.xml)"), "{e}");
    let e = import_files(&dir.join("ssdconfig.xml"), &dir).unwrap_err().to_string();
    assert!(e.ends_with("is a folder; expected an MQSim workload file (workload.xml)"), "{e}");
}

#[test]
fn a_control_character_other_than_nul_is_named() {
    let dir = corpus("findings/F06-mqsim-abort");
    let device = std::fs::read_to_string(dir.join("ssdconfig.xml"))
        .unwrap()
        .replace("1099511627776", "8")
        .replace("<Seed>", "\u{1}<Seed>");
    let workload = std::fs::read_to_string(dir.join("workload.xml")).unwrap();
    let e = import(&device, &workload).unwrap_err().to_string();
    assert!(e.contains("malformed XML: control character U+0001 is not allowed in XML"), "{e}");
    assert!(e.starts_with("ssdconfig.xml:"), "{e}");
}
