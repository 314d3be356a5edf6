//! Open-Channel 1.2 beside 2.0: a 1.2 host writes a page on every plane of a LUN at once (its
//! minimum write), so its pages pair into multi-plane programs; the device reports the 1.2
//! geometry and PPA format; 1.2 has no vector copy; a bad version is refused by name.

mod common;

use common::run;
use ssdlab_core::Config;

fn device(version: &str) -> String {
    format!(
        "seed = 11\n{}\n[ftl]\nover_provisioning = 0.2\n[host]\ninterface = \"open_channel\"\n[host.open_channel]\nversion = {version}\n[[flows]]\nread_fraction = 0.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 16\nrequests = 20000\n",
        common::flash([2, 2, 1, 2, 64, 64], "4KiB")
    )
}

#[test]
fn a_12_host_writes_luns_whole_so_its_pages_program_in_pairs() {
    let v2 = run(&device("\"2.0\""));
    let v12 = run(&device("\"1.2\""));
    for r in [&v2, &v12] {
        let oc = r.open_channel.as_ref().unwrap();
        assert_eq!(oc.write_pointer_violations, 0);
        assert!(r.device.gc.blocks_erased > 100);
    }
    // 2.0 stripes in allocation order (channel first): a die's two planes get pages far apart
    // in time. 1.2 puts a LUN's planes next to each other, so consecutive pages pair up when the
    // planes' write frontiers are at the same page. Each plane still allocates and collects its
    // own blocks, so under GC the frontiers drift apart: measured 14 % of programs in a
    // multi-plane command against 9 % (on a fresh drive both pair nearly every write).
    let pairs = |r: &ssdlab_core::Results| r.device.flash.multiplane_commands as f64 / r.device.flash.programs as f64;
    assert!(pairs(&v12) > 1.3 * pairs(&v2), "1.2 {} vs 2.0 {}", pairs(&v12), pairs(&v2));
    assert!(v12.device.writes.iops > v2.device.writes.iops);
    let fresh = |v: &str| {
        run(&device(v)
            .replace("requests = 20000", "requests = 3000")
            .replace("seed = 11", "seed = 11\nprecondition = \"none\""))
    };
    assert!(pairs(&fresh("\"1.2\"")) > 0.45);

    let g = &v12.open_channel.as_ref().unwrap().geometry;
    assert_eq!(g.version, "1.2");
    assert_eq!(g.planes_per_parallel_unit, Some(2));
    // A page (8 sectors) on each of the LUN's 2 planes.
    assert_eq!(g.min_write_logical_blocks, 16);
    let f = g.ppa_format.as_ref().unwrap();
    // 8 sectors, 2 planes, 64 pages, 64 blocks, 2 LUNs, 2 channels.
    assert_eq!(
        (f.sector, f.plane, f.page, f.block, f.lun, f.channel),
        ((0, 3), (3, 1), (4, 6), (10, 6), (16, 1), (17, 1))
    );
    let g2 = &v2.open_channel.as_ref().unwrap().geometry;
    assert_eq!((g2.version.as_str(), g2.min_write_logical_blocks, g2.ppa_format.is_none()), ("2.0", 8, true));
}

#[test]
fn versions_are_taken_as_numbers_or_strings_and_bad_ones_are_refused() {
    for version in ["1.2", "\"1.2\"", "2.0", "2", "\"2.0\""] {
        let text = device(version);
        assert!(Config::from_toml_str(&text).is_ok(), "version = {version}");
    }
    let refused = |text: &str| match Config::from_toml_str(text) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted: {text}"),
    };
    let e = refused(&device("\"3.0\""));
    assert!(e.starts_with("host.open_channel.version") && e.contains("1.2 and 2.0"), "{e}");
    let e = refused(&device("\"1.2\"").replace("version = \"1.2\"", "version = \"1.2\"\ngc_copy = \"vector-copy\""));
    assert!(e.starts_with("host.open_channel.gc_copy") && e.contains("no copy command"), "{e}");
}
