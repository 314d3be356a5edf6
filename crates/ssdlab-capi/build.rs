//! Generates include/ssdlab.h from the crate's `extern "C"` items with cbindgen, rewriting the
//! file only when it changes (so an unchanged header does not rebuild C programs).

fn main() {
    let crate_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let config = cbindgen::Config::from_file(format!("{crate_dir}/cbindgen.toml")).expect("cbindgen.toml parses");
    let header = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads src/lib.rs");
    let mut text = Vec::new();
    header.write(&mut text);
    // Generated, not tracked: a clean clone gets it from its first build.
    std::fs::create_dir_all(format!("{crate_dir}/include")).expect("create include/");
    let path = format!("{crate_dir}/include/ssdlab.h");
    if std::fs::read(&path).ok().as_deref() != Some(&text[..]) {
        std::fs::write(&path, text).expect("write include/ssdlab.h");
    }
}
