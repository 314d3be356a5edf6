//! The C example (examples/c/host.c) compiles against the generated header and the static
//! library with the system's `cc`, and runs clean: the C ABI works from C, not only from Rust.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The folder of this build's artifacts (the test runs from `<target>/<profile>/deps`).
fn artifacts() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows where it is");
    exe.parent().and_then(Path::parent).expect("<target>/<profile>/deps/<test>").to_path_buf()
}

/// The static library: `cargo test` links the tests against the rlib and builds no staticlib,
/// so `make test` builds it first (`cargo build -p ssdlab-capi`); run alone, the test builds it
/// into a target folder of its own (the running cargo may hold the lock on this one).
fn static_library() -> PathBuf {
    let library = artifacts().join("libssdlab.a");
    if library.exists() {
        return library;
    }
    let target = artifacts().join("c-example-target");
    let built = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", "ssdlab-capi", "--target-dir"])
        .arg(&target)
        .current_dir(repo_root())
        .status()
        .expect("cargo runs");
    assert!(built.success(), "cargo build -p ssdlab-capi failed");
    target.join("debug/libssdlab.a")
}

#[test]
fn the_c_example_compiles_and_runs() {
    let root = repo_root();
    let library = static_library();
    assert!(library.exists(), "{} was not built", library.display());
    let program = std::env::temp_dir().join(format!("ssdlab-c-host-{}", std::process::id()));
    let compiled = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(root.join("crates/ssdlab-capi/include"))
        .arg(root.join("examples/c/host.c"))
        .arg(&library)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&program)
        .output()
        .expect("cc runs");
    assert!(compiled.status.success(), "cc failed:\n{}", String::from_utf8_lossy(&compiled.stderr));
    let ran = Command::new(&program).output().expect("the program runs");
    let stdout = String::from_utf8_lossy(&ran.stdout);
    std::fs::remove_file(&program).ok();
    assert!(ran.status.success(), "exit {:?}\n{stdout}\n{}", ran.status, String::from_utf8_lossy(&ran.stderr));
    assert!(stdout.ends_with("ok\n"), "{stdout}");
    assert!(stdout.contains("refused as expected: sectors"), "{stdout}");
    assert!(stdout.contains("bad config: flash.channels"), "{stdout}");
}

#[test]
fn the_header_is_generated_and_declares_the_api() {
    let header = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("include/ssdlab.h"))
        .expect("build.rs wrote the header");
    for name in [
        "ssdlab_device_new",
        "ssdlab_device_free",
        "ssdlab_submit",
        "ssdlab_advance_to",
        "ssdlab_next_event_time",
        "ssdlab_poll_completion",
        "ssdlab_now_ps",
        "ssdlab_results_json",
        "ssdlab_last_error",
        "SSDLAB_STEPS",
    ] {
        assert!(header.contains(name), "ssdlab.h lacks {name}");
    }
}
