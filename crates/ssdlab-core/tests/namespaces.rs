//! Namespaces (`[[namespaces]]`): several conventional and zoned namespaces on one device, each
//! with its own address space and flows, sharing the controller and the flash. Each reads back
//! its own data; GC moves only conventional data and never takes a zone's block; bad layouts are
//! refused by name.

mod common;

use std::path::Path;

use ssdlab_core::device::{HostRequest, Op, Status};
use ssdlab_core::{Device, Simulation};

/// 4 channels x 2 planes of 64 blocks of 16 4-KiB pages (32 MiB): zones of one block a plane
/// (512 KiB), a zoned namespace of 16 zones (8 MiB) beside two conventional ones (8 and 4 MiB).
fn three(flows: &str) -> String {
    format!(
        "seed = 9\n{}\n[ftl]\nover_provisioning = 0.1\ngc_policy = \"greedy\"\n[zns]\nmax_open_zones = 4\nmax_active_zones = 4\n\
         [data]\nemulate = true\n\
         [[namespaces]]\nname = \"meta\"\nsize = \"8MiB\"\n\
         [[namespaces]]\nname = \"log\"\ncommand_set = \"zoned\"\nzones = 16\n\
         [[namespaces]]\nname = \"tmp\"\nsize = \"4MiB\"\n{flows}",
        common::flash([4, 1, 1, 2, 64, 16], "4KiB")
    )
}

#[test]
fn conventional_and_zoned_namespaces_share_the_drive() {
    let flows = "[[flows]]\nname = \"meta\"\nnamespace = \"meta\"\nread_fraction = 0.3\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 8\nrequests = 30000\n\
                 [[flows]]\nname = \"log\"\nnamespace = \"log\"\naddress = \"zoned\"\nopen_zones = 2\nread_fraction = 0.2\nrequest_size = \"16KiB\"\nqueue_depth = 8\nrequests = 30000\n\
                 [[flows]]\nname = \"tmp\"\nnamespace = \"tmp\"\nread_fraction = 0.5\nrequest_size = \"8KiB\"\nalignment = \"4KiB\"\nqueue_depth = 4\nrequests = 20000\n";
    let r = common::run(&three(flows));
    let ns = r.namespaces.as_ref().expect("namespaces in the results");
    let names: Vec<&str> = ns.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["meta", "log", "tmp"]);
    assert_eq!((ns[1].command_set.as_str(), ns[1].zones), ("zoned", 16));
    assert_eq!((ns[0].size_bytes, ns[2].size_bytes), (8 << 20, 4 << 20));
    assert_eq!(ns[1].capacity_bytes, 16 * 512 * 1024);
    assert_eq!(ns[0].flows, ["meta"]);
    assert!(ns.iter().all(|n| n.bytes_written > 0));
    // Random overwrites of the conventional namespaces need GC; the zones never do.
    let z = r.zns.as_ref().unwrap();
    assert!(r.device.gc.pages_moved > 0);
    assert!(z.resets > 10, "{z:?}");
    assert_eq!(z.write_amplification, Some(1.0));
    assert!(z.failed.is_empty(), "{:?}", z.failed);
    let d = r.data.as_ref().unwrap();
    assert_eq!(d.mismatched_sectors, 0);
    assert!(d.verified_sectors > 50_000, "{d:?}");
}

#[test]
fn each_namespace_has_its_own_address_space() {
    let flows = "[[flows]]\nname = \"q-meta\"\nkind = \"host\"\nnamespace = \"meta\"\n\
                 [[flows]]\nname = \"q-log\"\nkind = \"host\"\nnamespace = \"log\"\n\
                 [[flows]]\nname = \"q-tmp\"\nkind = \"host\"\nnamespace = \"tmp\"\n";
    let mut dev = Device::from_toml_str(&three(flows), Path::new(".")).unwrap();
    assert_eq!((dev.queue_sectors(0), dev.queue_sectors(2)), (16_384, 8_192));
    // 16 zones of 1,024 sectors in zones of 1,024 (the capacity rounded to a power of two).
    assert_eq!(dev.queue_sectors(1), 16 * 1024);
    let mut id = 0;
    let mut send = |dev: &mut Device, queue: u16, op: Op, start: u64, sectors: u32, data: Option<&[u8]>| {
        id += 1;
        dev.submit(&HostRequest { id, queue, op, start_sector: start, sectors, data, placement_handle: None }).unwrap();
        let mut done = Vec::new();
        while let Some(t) = dev.next_event_time() {
            dev.advance_to(t).unwrap();
            done.extend(dev.completions());
        }
        done.into_iter().find(|c| c.id == id).unwrap()
    };
    for (queue, byte) in [(0u16, 0xA0u8), (1, 0xB1), (2, 0xC2)] {
        let c = send(&mut dev, queue, Op::Write, 0, 8, Some(&[byte; 4096]));
        assert_eq!(c.status, Status::Success, "queue {queue}");
    }
    for (queue, byte) in [(0u16, 0xA0u8), (1, 0xB1), (2, 0xC2)] {
        let c = send(&mut dev, queue, Op::Read, 0, 8, None);
        assert_eq!(c.data.unwrap(), vec![byte; 4096], "queue {queue} reads its own sector 0");
    }
    // Zone rules hold in the zoned namespace only; zone ops elsewhere are unsupported.
    assert_eq!(send(&mut dev, 1, Op::Write, 64, 8, None).status, Status::ZoneInvalidWrite);
    assert_eq!(send(&mut dev, 0, Op::Write, 64, 8, None).status, Status::Success);
    assert_eq!(send(&mut dev, 2, Op::ZoneReset, 0, 0, None).status, Status::Unsupported);
    assert_eq!(send(&mut dev, 1, Op::ZoneReset, 0, 0, None).status, Status::Success);
    assert_eq!(send(&mut dev, 1, Op::Read, 0, 8, None).data.unwrap(), vec![0; 4096]);
    assert_eq!(send(&mut dev, 0, Op::Read, 0, 8, None).data.unwrap(), vec![0xA0; 4096], "untouched");
    let report = dev.zone_report_of_queue(1, 0, 100).unwrap();
    assert_eq!(report.len(), 16);
    assert_eq!((report[0].zone, report[0].start_sector, report[0].state.as_str()), (0, 0, "empty"));
    assert!(dev.zone_report_of_queue(0, 0, 1).is_none());
    // Past a namespace's end is refused at submission.
    let past = HostRequest {
        id: 99,
        queue: 2,
        op: Op::Read,
        start_sector: 8_192,
        sectors: 8,
        data: None,
        placement_handle: None,
    };
    assert!(dev.submit(&past).unwrap_err().to_string().contains("not within"));
    dev.simulation().check_state_invariants().unwrap();
}

#[test]
fn bad_namespace_layouts_are_refused_by_name() {
    let base = common::flash([4, 1, 1, 2, 64, 16], "4KiB");
    let flow = "[[flows]]\nkind = \"host\"\n";
    let cases = [
        ("[[namespaces]]\nsize = \"64MiB\"", "namespaces", "after over-provisioning"),
        ("[[namespaces]]\nsize = \"6KiB\"", "namespaces[0].size", "whole number"),
        (
            "[[namespaces]]\nname = \"a\"\nsize = \"1MiB\"\n[[namespaces]]\nname = \"a\"\nsize = \"1MiB\"",
            "namespaces[1].name",
            "twice",
        ),
        ("[[namespaces]]\ncommand_set = \"zoned\"\nzones = 2", "namespaces[0].command_set", "[zns]"),
        ("[zns]\n[[namespaces]]\nsize = \"1MiB\"", "zns", "no namespace is zoned"),
        ("[zns]\n[[namespaces]]\ncommand_set = \"zoned\"\nzones = 1000", "namespaces", "backs"),
        ("[[namespaces]]\ncommand_set = \"conventional\"", "namespaces[0].size", "needs its size"),
    ];
    for (extra, path, words) in cases {
        let toml = format!("{base}\n{extra}\n{flow}");
        let e = match Device::from_toml_str(&toml, Path::new(".")) {
            Ok(_) => panic!("accepted: {extra}"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(path) && e.contains(words), "{extra}: {e}");
    }
    let toml = format!(
        "{base}\n[[namespaces]]\nname = \"a\"\nsize = \"1MiB\"\n[[flows]]\nkind = \"host\"\nnamespace = \"b\"\n"
    );
    let e = Device::from_toml_str(&toml, Path::new(".")).err().unwrap().to_string();
    assert!(e.contains("flows[0].namespace") && e.contains("\"a\""), "{e}");
    let toml = format!("{}\n[[flows]]\nnamespace = \"a\"\nqueue_depth = 1\nrequests = 1\n", common::SMALL_DEVICE);
    let e = Simulation::from_toml_str(&toml, Path::new(".")).err().unwrap().to_string();
    assert!(e.contains("flows[0].namespace") && e.contains("one namespace"), "{e}");
}
