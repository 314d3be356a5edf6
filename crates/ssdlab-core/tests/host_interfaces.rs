//! UFS and Open-Channel 2.0 next to NVMe and SATA: link timing by hand, the one 32-slot queue,
//! the latency order of the four interfaces, and the chunk rules an Open-Channel device enforces
//! while a host FTL drives it through GC.

mod common;

use common::{run, SMALL_DEVICE};
use ssdlab_core::{Config, Results};

/// The small device, full of data, with an ideal mapping table (so only the host side differs).
fn device(host: &str) -> String {
    format!("{SMALL_DEVICE}\n[host]\n{host}\n[precondition]\nmode = \"fill\"\noccupancy = 1.0\n")
        .replace("over_provisioning = 0.2", "over_provisioning = 0.2\nideal_mapping = true")
}

const QD1_READS: &str =
    "[[flows]]\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 1\nrequests = 300\n";

fn step(r: &Results, name: &str) -> f64 {
    r.flows[0].reads.latency_breakdown_us.get(name).unwrap_or_else(|| panic!("no step {name}"))
}

#[test]
fn ufs_upius_take_the_hand_computed_time() {
    let host = "interface = \"ufs\"\n[host.ufs]\ngear = 3\nlanes = 1\nrate_series = \"B\"\nprocessing_delay = \"1us\"";
    let r = run(&format!("{}\n{QD1_READS}", device(host)));
    // HS-G3 rate B: 5.8304 Gb/s per lane x 1 lane x 8/10 (8b/10b) = 583.04 MB/s.
    let bytes_per_us = 5.8304e9 * 1.0 * 0.8 / 8.0 / 1e6;
    // COMMAND and RESPONSE: a 32-byte UPIU in one UniPro frame (+ 8 B), after 1 us processing.
    let header_only = 1.0 + (32.0 + 8.0) / bytes_per_us;
    // DATA IN: 32 + 4096 bytes in 15 frames of at most 286 B.
    let data_in = 1.0 + (32.0 + 4096.0 + 15.0 * 8.0) / bytes_per_us;
    for (name, expected) in [("command_transfer", header_only), ("completion", header_only), ("pcie_data", data_in)] {
        assert!((step(&r, name) - expected).abs() < 1e-3, "{name}: {} us, by hand {expected} us", step(&r, name));
    }
    let h = r.host_interface.as_ref().expect("host_interface is reported");
    assert_eq!(h.kind, "ufs");
    assert_eq!(h.device_queue_slots, 32);
    let ufs = h.ufs.as_ref().unwrap();
    assert_eq!((ufs.gear, ufs.lanes, ufs.upius_to_device, ufs.upius_to_host), (3, 1, 300, 600));
    assert!((h.link_bytes_per_second - 583.04e6).abs() < 1.0);
}

#[test]
fn ufs_writes_wait_for_ready_to_transfer() {
    let host = "interface = \"ufs\"\n[host.ufs]\ngear = 3\nlanes = 1\nprocessing_delay = \"1us\"";
    let writes = QD1_READS.replace("read_fraction = 1.0", "read_fraction = 0.0");
    let r = run(&format!("{}\n{writes}", device(host)));
    let bytes_per_us = 583.04;
    // READY TO TRANSFER up, then DATA OUT (4128 B in 15 frames) down.
    let expected = (1.0 + 40.0 / bytes_per_us) + (1.0 + (4128.0 + 120.0) / bytes_per_us);
    let got = r.flows[0].writes.latency_breakdown_us.get("pcie_data").unwrap();
    assert!((got - expected).abs() < 1e-3, "{got} vs {expected}");
    let ufs = r.host_interface.unwrap().ufs.unwrap();
    assert_eq!((ufs.upius_to_device, ufs.upius_to_host), (600, 600), "command + data out; ready + response");
}

#[test]
fn qd1_read_latency_orders_sata_ufs_nvme_by_their_overheads() {
    let mean = |host: &str| run(&format!("{}\n{QD1_READS}", device(host))).flows[0].reads.latency_us.mean;
    let (sata, ufs, nvme) = (mean("interface = \"sata\""), mean("interface = \"ufs\""), mean("interface = \"nvme\""));
    // SATA: three messages at 400 us each; UFS: three UPIUs at 1 us plus 4 KiB at 2.3 GB/s;
    // NVMe: 4 KiB at 4 GB/s and no per-command delay.
    assert!(sata > ufs + 1000.0, "sata {sata} us, ufs {ufs} us");
    assert!(ufs > nvme + 2.0, "ufs {ufs} us, nvme {nvme} us");
    assert!(nvme > 75.0, "a flash read is in every one: {nvme}");
}

#[test]
fn ufs_saturates_below_nvme_with_many_flows_at_high_queue_depth() {
    // 128 dies; four flows with 64 reads outstanding each. NVMe lets all 256 in; UFS holds 32,
    // so at most 32 dies work at a time.
    let base = "seed = 3\n[flash]\nchannels = 8\nchips_per_channel = 8\ndies_per_chip = 2\nplanes_per_die = 1\nblocks_per_plane = 16\npages_per_block = 32\npage_size = \"4KiB\"\n[ftl]\nover_provisioning = 0.3\nideal_mapping = true\n[precondition]\nmode = \"fill\"\noccupancy = 1.0\n";
    let flow = "[[flows]]\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 64\nduration = \"20ms\"\n";
    let flows = flow.repeat(4);
    // No per-UPIU delay: the link (2.3 GB/s each way) is not what limits UFS here, the queue is.
    let ufs = run(&format!("{base}[host]\ninterface = \"ufs\"\n[host.ufs]\nprocessing_delay = \"0ns\"\n{flows}"));
    let nvme = run(&format!("{base}[host]\ninterface = \"nvme\"\n{flows}"));
    let (u, n) = (ufs.device.reads.iops, nvme.device.reads.iops);
    assert!(u < 0.6 * n, "ufs {u:.0} IOPS, nvme {n:.0} IOPS");
    // The requests UFS cannot take wait on the host.
    assert!(step(&ufs, "sq_wait") > 5.0 * step(&nvme, "sq_wait").max(1.0));
    assert_eq!(ufs.host_interface.unwrap().device_queue_slots, 32);
}

/// The NVMe/Open-Channel comparison device: a CMT of 2 K entries, so mapping misses show.
fn oc_device() -> String {
    format!(
        "seed = 11\n{}\n[ftl]\nover_provisioning = 0.2\ncmt_capacity = \"16KiB\"\n",
        common::flash([2, 2, 1, 2, 64, 64], "4KiB")
    )
}

const RANDOM_WRITES: &str =
    "[[flows]]\nread_fraction = 0.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 16\nrequests = 20000\n";

#[test]
fn open_channel_random_writes_through_gc_keep_every_chunk_sequential() {
    let r = run(&format!("{}\n[host]\ninterface = \"open_channel\"\n{RANDOM_WRITES}", oc_device()));
    let oc = r.open_channel.as_ref().expect("open_channel is reported");
    assert!(r.device.gc.blocks_erased > 100, "the run collects: {}", r.device.gc.blocks_erased);
    assert_eq!(oc.write_pointer_violations, 0, "every program was at its chunk's write pointer");
    assert_eq!(oc.reset_violations, 0);
    assert_eq!(oc.resets, r.device.gc.blocks_erased, "each erase is a chunk reset");
    let c = &oc.chunks;
    assert_eq!(c.free + c.open + c.closed + c.offline, 2 * 2 * 2 * 64);
    assert!(c.closed > c.free && c.open >= 1);
    assert_eq!(oc.pages_written, r.device.flash.programs);
    assert_eq!(oc.geometry.groups, 2);
    assert_eq!(oc.geometry.parallel_units_per_group, 2);
    assert_eq!(oc.geometry.chunks_per_parallel_unit, 128);
    assert_eq!(oc.geometry.logical_blocks_per_chunk, 64 * 8);
    assert_eq!(oc.geometry.min_write_logical_blocks, 8);
    // The map is the host's: no translation pages on the device, every lookup hits.
    assert_eq!((r.device.flash.translation_page_reads, r.device.flash.translation_page_writes), (0, 0));
    assert_eq!(r.flows[0].cmt_hit_rate, 1.0);
    let h = &oc.host_ftl;
    assert_eq!(h.pages_placed, 20000);
    assert_eq!(h.lookups, 20000);
    assert_eq!(h.gc_pages_moved, r.device.gc.pages_moved);
    // Host GC: each moved page goes up (page + completion) and back down (command + page).
    assert_eq!(h.gc_link_bytes, h.gc_pages_moved * (2 * 4096 + 16 + 64));
    assert_eq!(h.mapping_table_bytes, r.device.logical_capacity_bytes / 4096 * 4);
    assert_eq!(r.host_interface.as_ref().unwrap().kind, "open_channel");

    // The same workload on an NVMe device FTL with a small CMT reads and writes translation pages.
    let nvme = run(&format!("{}\n{RANDOM_WRITES}", oc_device()));
    assert!(nvme.device.flash.translation_page_writes > 0 && nvme.flows[0].cmt_hit_rate < 1.0);
    assert!(nvme.open_channel.is_none());
}

#[test]
fn open_channel_vector_copy_keeps_gc_off_the_link() {
    let host = "interface = \"open_channel\"\n[host.open_channel]\ngc_copy = \"vector-copy\"";
    let copy = run(&format!("{}\n[host]\n{host}\n{RANDOM_WRITES}", oc_device()));
    let through_host = run(&format!("{}\n[host]\ninterface = \"open_channel\"\n{RANDOM_WRITES}", oc_device()));
    let (c, h) = (copy.open_channel.as_ref().unwrap(), through_host.open_channel.as_ref().unwrap());
    assert_eq!(c.host_ftl.gc_link_bytes, 0);
    assert!(c.host_ftl.gc_pages_moved > 0 && c.write_pointer_violations == 0);
    let up = |r: &Results| r.host_interface.as_ref().unwrap().bytes_to_host;
    assert!(up(&through_host) > up(&copy) + h.host_ftl.gc_pages_moved * 4096 / 2);
}

#[test]
fn open_channel_host_placement_spreads_writes_static_striping_does_not() {
    // Every address is a multiple of 8 pages: static CWDP striping over 8 planes sends all of
    // them to plane 0; the host FTL's round robin stripes them over all parallel units.
    let flow = "[[flows]]\nread_fraction = 0.0\nrequest_size = \"4KiB\"\nalignment = \"32KiB\"\nqueue_depth = 16\nrequests = 4000\n";
    let with = |placement: &str| {
        let host = format!("interface = \"open_channel\"\n[host.open_channel]\nplacement = \"{placement}\"");
        run(&format!("{}\n[host]\n{host}\n{flow}", oc_device()))
    };
    let (rr, fixed) = (with("round-robin"), with("static"));
    assert!(
        rr.device.writes.iops > 3.0 * fixed.device.writes.iops,
        "{} vs {}",
        rr.device.writes.iops,
        fixed.device.writes.iops
    );
    for r in [&rr, &fixed] {
        assert_eq!(r.open_channel.as_ref().unwrap().write_pointer_violations, 0);
    }
}

#[test]
fn open_channel_host_cpu_time_adds_to_the_queue_wait() {
    let host = "interface = \"open_channel\"\n[host.open_channel]\nhost_cpu_per_page = \"5us\"";
    let flow = "[[flows]]\nread_fraction = 1.0\nrequest_size = \"8KiB\"\nalignment = \"4KiB\"\nqueue_depth = 1\nrequests = 200\n";
    let r = run(&format!("{}\n{flow}", device(host)));
    // An aligned 8 KiB request spans two pages: 10 us of host FTL time before submission.
    assert!((step(&r, "sq_wait") - 10.0).abs() < 1e-6, "{}", step(&r, "sq_wait"));
    let oc = r.open_channel.unwrap();
    assert!((oc.host_ftl.cpu_seconds - 400.0 * 5e-6).abs() < 1e-9);
}

#[test]
fn open_channel_runs_are_deterministic_and_keep_the_invariants() {
    let text =
        format!("{}\n[host]\ninterface = \"open_channel\"\n{}", oc_device(), RANDOM_WRITES.replace("20000", "3000"));
    let a = run(&text);
    let b = run(&text);
    assert_eq!(serde_json::to_value(&a.open_channel).unwrap(), serde_json::to_value(&b.open_channel).unwrap());
    assert_eq!(a.device.writes.latency_us, b.device.writes.latency_us);
}

fn rejected(toml: &str) -> String {
    let e = Config::from_toml_str(toml).expect_err("must be rejected");
    format!("{}: {}", e.path, e.reason)
}

#[test]
fn bad_interface_settings_name_their_field() {
    let flows = "[[flows]]\nqueue_depth = 1\nrequests = 1\n";
    let e = rejected(&format!("[host]\ninterface = \"ufs\"\n[host.ufs]\ngear = 5\n{flows}"));
    assert!(e.starts_with("host.ufs.gear: ") && e.contains("got 5"), "{e}");
    let e = rejected(&format!("[host]\ninterface = \"ufs\"\n[host.ufs]\nlanes = 4\n{flows}"));
    assert!(e.starts_with("host.ufs.lanes: "), "{e}");
    let e = rejected(&format!("[host]\ninterface = \"ufs\"\n[host.ufs]\nqueue_depth = 64\n{flows}"));
    assert!(e.starts_with("host.ufs.queue_depth: "), "{e}");
    let e = rejected(&format!("[host]\ninterface = \"ufs\"\n[host.ufs]\nrate_series = \"C\"\n{flows}"));
    assert!(e.starts_with("host.ufs.rate_series: "), "{e}");
    let e = rejected(&format!("[host]\ninterface = \"nvme\"\n[host.ufs]\ngear = 3\n{flows}"));
    assert_eq!(e, "host.ufs: applies to host.interface = \"ufs\" only, not \"nvme\"");
    let e = rejected(&format!("[host.open_channel]\nplacement = \"static\"\n{flows}"));
    assert!(e.starts_with("host.open_channel: "), "{e}");
    let e = rejected(&format!("[host]\ninterface = \"open_channel\"\n[ftl]\ncopyback = true\n{flows}"));
    assert!(e.starts_with("ftl.copyback: ") && e.contains("vector-copy"), "{e}");
    let e = rejected(&format!(
        "precondition = \"none\"\n[host]\ninterface = \"open_channel\"\n[ftl]\nmapping = \"block\"\n{flows}"
    ));
    assert!(e.starts_with("ftl.mapping: ") && e.contains("host"), "{e}");
    let e = rejected(&format!("[host]\ninterface = \"open-channel\"\n{flows}"));
    assert!(e.starts_with("host.interface: "), "{e}");
    // Vector copy keeps the page in the device, so copyback is fine there.
    let ok = format!("[host]\ninterface = \"open_channel\"\n[host.open_channel]\ngc_copy = \"vector-copy\"\n[ftl]\ncopyback = true\n{flows}");
    assert!(Config::from_toml_str(&ok).is_ok());
}
