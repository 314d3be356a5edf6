//! An LSM store on a zoned namespace (`[flows.lsm]`, docs/zns.md): files placed in zones by
//! level, zones reset once their files are dead. The device moves nothing (write amplification
//! 1.0); the store's compactions are the host's write amplification; data reads back.

mod common;

use std::path::Path;

use ssdlab_core::sim::Simulation;

fn lsm_drive(lsm: &str, requests: u64) -> String {
    format!(
        "seed = 9\n{}\n[ftl]\nover_provisioning = 0.1\n[zns]\nmax_open_zones = 4\nmax_active_zones = 4\n\
         [data]\nemulate = true\n[[flows]]\nname = \"rocksdb\"\naddress = \"zoned\"\nread_fraction = 0.2\n\
         request_size = \"16KiB\"\nqueue_depth = 8\nrequests = {requests}\n[flows.lsm]\n{lsm}\n",
        common::flash([4, 1, 1, 2, 64, 16], "4KiB")
    )
}

#[test]
fn an_lsm_store_pays_its_write_amplification_on_the_host_not_the_device() {
    let r = common::run(&lsm_drive("levels = 3\nl0_files = 4\nfanout = 4", 80_000));
    let z = r.zns.as_ref().unwrap();
    assert!(z.failed.is_empty(), "every zone command by the rules: {:?}", z.failed);
    assert_eq!(z.write_amplification, Some(1.0));
    assert_eq!(r.device.gc.pages_moved, 0);
    assert!(z.resets > 20 && z.finishes == 0, "{z:?}");
    assert!(z.peak_open_zones <= 3, "one open zone per level");
    let lsm = r.flows[0].lsm.as_ref().expect("the flow's lsm summary");
    assert_eq!(lsm.levels, 3);
    assert!(lsm.compactions > 100, "{lsm:?}");
    let wa = lsm.host_write_amplification.unwrap();
    assert!(wa > 2.0, "leveled compaction rewrites data: {lsm:?}");
    // The store counts what it planned; the run ends with part of a job not yet issued.
    assert!(z.resets <= lsm.zone_resets && z.host_bytes_written <= lsm.host_bytes_written, "{lsm:?} {z:?}");
    let d = r.data.as_ref().unwrap();
    assert_eq!(d.mismatched_sectors, 0, "{:?}", d.first_mismatch);
    assert!(d.verified_sectors > 50_000, "{d:?}");
}

#[test]
fn lsm_settings_are_checked_by_name() {
    let error = |toml: &str| match Simulation::from_toml_str(toml, Path::new(".")) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    };
    let e = error(&lsm_drive("levels = 5", 10));
    assert!(e.contains("flows[0].lsm") && e.contains("zns.max_open_zones (4)"), "{e}");
    let e = error(&lsm_drive("levels = 1", 10));
    assert!(e.contains("flows[0].lsm.levels") && e.contains("2 to 16"), "{e}");
    let e = error(&lsm_drive("fanout = 1", 10));
    assert!(e.contains("flows[0].lsm.fanout"), "{e}");
    let e = error(&lsm_drive("file_size = \"6KiB\"", 10));
    assert!(e.contains("flows[0].lsm") && e.contains("file_size"), "{e}");
    let e = error(&lsm_drive("levels = 3", 10).replace("read_fraction = 0.2", "open_zones = 2"));
    assert!(e.contains("flows[0].open_zones") && e.contains("LSM"), "{e}");
    let e = error(&lsm_drive("levels = 3", 10).replace("address = \"zoned\"", "address = \"uniform\""));
    assert!(e.contains("flows[0].lsm") && e.contains("address = \"zoned\""), "{e}");
}
