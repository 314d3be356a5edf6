//! Zoned namespaces (`[zns]`, NVMe ZNS 1.1) through the stepping API and batch runs: writes off
//! the write pointer are refused with the spec's status, appends say where they landed, resets
//! read back as zeros and erase the zone's blocks, finishes pad, the open and active limits hold,
//! worn-out blocks take zones offline, and a drive written by the rules never garbage collects.

mod common;

use std::path::Path;

use ssdlab_core::device::{Completion, HostRequest, Op, Status};
use ssdlab_core::{Device, Simulation};

/// 4 channels x 2 planes of 64 blocks of 16 pages of 4 KiB: zones of one block per plane
/// (8 x 64 KiB = 512 KiB, 1,024 sectors) in 1 MiB (2,048-sector) zones; 2 open, 3 active.
fn zoned(extra: &str) -> String {
    format!(
        "seed = 5\n{}\n[ftl]\nover_provisioning = 0.1\n[zns]\nzone_size = \"1MiB\"\nmax_open_zones = 2\nmax_active_zones = 3\n{extra}\n\
         [data]\nemulate = true\n[[flows]]\nname = \"host\"\nkind = \"host\"\n",
        common::flash([4, 1, 1, 2, 64, 16], "4KiB")
    )
}

const ZONE: u64 = 2048;
const CAP: u64 = 1024;

fn device(toml: &str) -> Device {
    Device::from_toml_str(toml, Path::new(".")).unwrap_or_else(|e| panic!("device rejected: {e}"))
}

struct Host {
    dev: Device,
    next_id: u64,
}

impl Host {
    fn new(toml: &str) -> Self {
        Self { dev: device(toml), next_id: 0 }
    }

    /// Submits and runs to idle; returns the completion.
    fn one(&mut self, op: Op, start_sector: u64, sectors: u32, data: Option<&[u8]>) -> Completion {
        let id = self.submit(op, start_sector, sectors, data);
        let done = self.drain();
        done.into_iter().find(|c| c.id == id).expect("completed")
    }

    fn submit(&mut self, op: Op, start_sector: u64, sectors: u32, data: Option<&[u8]>) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.dev
            .submit(&HostRequest { id, queue: 0, op, start_sector, sectors, data, placement_handle: None })
            .expect("accepted");
        id
    }

    fn drain(&mut self) -> Vec<Completion> {
        let mut done = Vec::new();
        while let Some(t) = self.dev.next_event_time() {
            self.dev.advance_to(t).expect("the device goes on");
            done.extend(self.dev.completions());
        }
        self.dev.simulation().check_state_invariants().expect("invariants");
        done
    }

    fn read(&mut self, start_sector: u64, sectors: u32) -> (Status, Vec<u8>) {
        let c = self.one(Op::Read, start_sector, sectors, None);
        (c.status, c.data.unwrap_or_default())
    }
}

fn pattern(byte: u8, sectors: u32) -> Vec<u8> {
    vec![byte; sectors as usize * 512]
}

#[test]
fn writes_off_the_write_pointer_are_refused_with_the_spec_status() {
    let mut h = Host::new(&zoned(""));
    assert_eq!(h.one(Op::Write, ZONE + 8, 8, None).status, Status::ZoneInvalidWrite);
    assert_eq!(h.one(Op::Write, ZONE, 8, None).status, Status::Success);
    assert_eq!(h.one(Op::Write, ZONE, 8, None).status, Status::ZoneInvalidWrite, "the pointer moved");
    assert_eq!(h.one(Op::Write, ZONE + 8, 8, None).status, Status::Success);
    // Past the capacity, into the gap before the next zone.
    assert_eq!(h.one(Op::Write, ZONE + 16, CAP as u32, None).status, Status::ZoneBoundaryError);
    assert_eq!(h.one(Op::Read, ZONE + CAP, 8, None).status, Status::ZoneBoundaryError);
    assert_eq!(h.one(Op::Trim, 0, 8, None).status, Status::Unsupported, "space comes back by resets");
    assert_eq!(h.one(Op::Write, ZONE + 16, 4, None).status, Status::InvalidField, "whole 4 KiB pages only");
    let zones = h.dev.zone_report(1, 1).unwrap();
    assert_eq!((zones[0].state.as_str(), zones[0].write_pointer), ("implicitly_open", ZONE + 16));
    let r = h.dev.results();
    let z = r.zns.unwrap();
    assert_eq!(z.failed["zone_invalid_write"], 2);
    assert_eq!(z.failed["zone_boundary_error"], 2);
    assert_eq!(z.failed["invalid_field"], 1);
    assert_eq!(z.writes, 2);
    // Refused requests are not counted as I/O.
    assert_eq!(r.device.writes.count, 2);
}

#[test]
fn appends_land_at_the_write_pointer_and_read_back() {
    let mut h = Host::new(&zoned(""));
    let zone = 3 * ZONE;
    let a = h.one(Op::ZoneAppend, zone, 16, Some(&pattern(0xA1, 16)));
    let b = h.one(Op::ZoneAppend, zone, 8, Some(&pattern(0xB2, 8)));
    assert_eq!((a.status, a.assigned_sector), (Status::Success, Some(zone)));
    assert_eq!(b.assigned_sector, Some(zone + 16));
    assert_eq!(h.one(Op::ZoneAppend, zone + 8, 8, None).status, Status::InvalidField, "an append names the zone");
    assert_eq!(h.read(zone + 16, 8), (Status::Success, pattern(0xB2, 8)));
    assert_eq!(h.read(zone, 16).1, pattern(0xA1, 16));
    // Unwritten sectors inside the capacity read as zeros.
    assert_eq!(h.read(zone + 64, 8).1, pattern(0, 8));
    // Several appends in flight at once all land, one after another.
    let ids: Vec<u64> = (0..6).map(|i| h.submit(Op::ZoneAppend, zone, 8, Some(&pattern(i as u8 + 1, 8)))).collect();
    let done = h.drain();
    let mut landed: Vec<u64> =
        ids.iter().map(|id| done.iter().find(|c| c.id == *id).unwrap().assigned_sector.unwrap() - zone).collect();
    landed.sort_unstable();
    assert_eq!(landed, [24, 32, 40, 48, 56, 64]);
    for c in done.iter().filter(|c| ids.contains(&c.id)) {
        let at = c.assigned_sector.unwrap();
        assert_eq!(h.read(at, 8).1, pattern(c.id as u8 - ids[0] as u8 + 1, 8));
    }
}

#[test]
fn a_reset_reads_back_zeros_and_erases_the_zones_blocks() {
    let mut h = Host::new(&zoned(""));
    for i in 0..(CAP / 64) {
        assert_eq!(h.one(Op::Write, i * 64, 64, Some(&pattern(7, 64))).status, Status::Success);
    }
    assert_eq!(h.dev.zone_report(0, 1).unwrap()[0].state, "full");
    assert_eq!(h.one(Op::Write, CAP - 8, 8, None).status, Status::ZoneIsFull);
    let reset = h.one(Op::ZoneReset, 0, 0, None);
    assert_eq!(reset.status, Status::Success);
    // Eight blocks (one per plane) erased: the reset took at least an erase time.
    assert!(reset.latency_ps() > 1_000_000_000, "{} ps", reset.latency_ps());
    assert_eq!(h.read(0, 64).1, pattern(0, 64));
    let z = h.dev.zone_report(0, 1).unwrap();
    assert_eq!((z[0].state.as_str(), z[0].write_pointer), ("empty", 0));
    // Written again from the start.
    assert_eq!(h.one(Op::Write, 0, 8, Some(&pattern(9, 8))).status, Status::Success);
    assert_eq!(h.read(0, 8).1, pattern(9, 8));
    let r = h.dev.results().zns.unwrap();
    assert_eq!((r.resets, r.blocks_erased, r.gc_bytes_moved), (1, 8, 0));
}

#[test]
fn a_reset_waits_for_the_zones_writes_and_what_follows_waits_for_it() {
    let mut h = Host::new(&zoned(""));
    // Fill a zone, reset it and write it again, all in flight at once.
    for i in 0..(CAP / 128) {
        h.submit(Op::Write, i * 128, 128, Some(&pattern(1, 128)));
    }
    let reset = h.submit(Op::ZoneReset, 0, 0, None);
    let again = h.submit(Op::Write, 0, 8, Some(&pattern(2, 8)));
    let done = h.drain();
    assert!(
        done.iter().all(|c| c.status == Status::Success),
        "{:?}",
        done.iter().map(|c| c.status).collect::<Vec<_>>()
    );
    let at = |id: u64| done.iter().position(|c| c.id == id).unwrap();
    assert!(at(again) > at(reset) || done[at(again)].completed_ps >= done[at(reset)].submitted_ps);
    assert_eq!(h.read(0, 8).1, pattern(2, 8));
    assert_eq!(h.read(8, 8).1, pattern(0, 8), "the old data is gone");
}

#[test]
fn finish_pads_the_open_blocks_and_fills_the_zone() {
    let mut pads = Host::new(&zoned(""));
    let mut marks = Host::new(&zoned("finish_pads = false"));
    for h in [&mut pads, &mut marks] {
        assert_eq!(h.one(Op::Write, 0, 64, None).status, Status::Success);
    }
    let padded = pads.one(Op::ZoneFinish, 0, 0, None);
    let marked = marks.one(Op::ZoneFinish, 0, 0, None);
    assert_eq!((padded.status, marked.status), (Status::Success, Status::Success));
    assert!(padded.latency_ps() > 10 * marked.latency_ps(), "{} vs {}", padded.latency_ps(), marked.latency_ps());
    for h in [&mut pads, &mut marks] {
        let z = h.dev.zone_report(0, 1).unwrap();
        assert_eq!((z[0].state.as_str(), z[0].write_pointer), ("full", CAP));
        assert_eq!(h.one(Op::Write, CAP - 8, 8, None).status, Status::ZoneIsFull);
    }
    // 64 sectors = 8 pages, one on each of the 8 planes: each open block padded to 16 pages.
    let r = pads.dev.results().zns.unwrap();
    assert_eq!(r.pad_bytes, 8 * 15 * 4096);
    assert_eq!(marks.dev.results().zns.unwrap().pad_bytes, 0);
}

#[test]
fn open_and_active_limits() {
    let mut h = Host::new(&zoned(""));
    assert_eq!(h.one(Op::ZoneOpen, 0, 0, None).status, Status::Success);
    assert_eq!(h.one(Op::ZoneOpen, ZONE, 0, None).status, Status::Success);
    assert_eq!(h.one(Op::Write, 2 * ZONE, 8, None).status, Status::TooManyOpenZones);
    assert_eq!(h.one(Op::ZoneClose, ZONE, 0, None).status, Status::Success);
    assert_eq!(h.one(Op::Write, 2 * ZONE, 8, None).status, Status::Success);
    // Zones 0, 1 (closed) and 2 are active: a fourth is refused.
    assert_eq!(h.one(Op::Write, 3 * ZONE, 8, None).status, Status::TooManyActiveZones);
    assert_eq!(h.one(Op::ZoneClose, 4 * ZONE, 0, None).status, Status::InvalidZoneStateTransition);
    assert_eq!(h.one(Op::ZoneOpen, 8, 0, None).status, Status::InvalidField, "not a zone's first sector");
    let states = h.dev.results().zns.unwrap().zone_states;
    assert_eq!((states["explicitly_open"], states["implicitly_open"], states["closed"]), (1, 1, 1));
}

#[test]
fn zone_commands_on_a_conventional_namespace_are_unsupported() {
    let toml =
        format!("{}\n[data]\nemulate = true\n[[flows]]\nname = \"host\"\nkind = \"host\"\n", common::SMALL_DEVICE);
    let mut h = Host::new(&toml);
    assert!(h.dev.zone_report(0, 1).is_none());
    for op in [Op::ZoneAppend, Op::ZoneOpen, Op::ZoneReset] {
        let sectors = if op == Op::ZoneAppend { 8 } else { 0 };
        assert_eq!(h.one(op, 0, sectors, None).status, Status::Unsupported);
    }
    // The refused append left the data as it was.
    assert_eq!(h.read(0, 8), (Status::Success, pattern(0, 8)));
}

#[test]
fn management_with_sectors_is_refused_at_submission() {
    let mut dev = device(&zoned(""));
    let r = HostRequest {
        id: 1,
        queue: 0,
        op: Op::ZoneReset,
        start_sector: 0,
        sectors: 8,
        data: None,
        placement_handle: None,
    };
    let e = dev.submit(&r).unwrap_err().to_string();
    assert!(e.contains("zone_reset") && e.contains("no sectors"), "{e}");
    let past = HostRequest { start_sector: 32 * ZONE * 100, sectors: 0, ..r };
    assert!(dev.submit(&past).unwrap_err().to_string().contains("not within"));
    assert_eq!(dev.logical_sectors(), dev.zone_report(0, u64::MAX).unwrap().len() as u64 * ZONE);
}

/// A log writer over the whole drive, several drive-fills: zones reset and rewritten.
fn zoned_log(requests: u64, extra_flow: &str) -> String {
    format!(
        "seed = 5\n{}\n[ftl]\nover_provisioning = 0.1\n[zns]\nmax_open_zones = 4\nmax_active_zones = 4\n\
         [data]\nemulate = true\n[[flows]]\nname = \"log\"\naddress = \"zoned\"\nopen_zones = 3\nread_fraction = 0.25\n\
         request_size = \"16KiB\"\nqueue_depth = 8\nrequests = {requests}\n{extra_flow}\n",
        common::flash([4, 1, 1, 2, 64, 16], "4KiB")
    )
}

#[test]
fn a_drive_written_by_the_rules_never_collects_garbage() {
    // 448 zones of 128 KiB... (8 planes x 57 blocks / 1 block a zone); 3 drive-fills.
    let r = common::run(&zoned_log(60_000, ""));
    let z = r.zns.as_ref().unwrap();
    assert!(z.resets > 100, "{z:?}");
    assert_eq!(z.gc_bytes_moved, 0);
    assert_eq!(z.write_amplification, Some(1.0));
    assert_eq!(r.device.gc.pages_moved, 0);
    assert!(z.failed.is_empty(), "{:?}", z.failed);
    assert_eq!(z.peak_open_zones, 3);
    let d = r.data.as_ref().unwrap();
    assert_eq!(d.mismatched_sectors, 0);
    assert!(d.verified_sectors > 100_000, "{d:?}");
    // Appends give the same: the device places them.
    let a = common::run(&zoned_log(60_000, "zone_append = true"));
    let za = a.zns.unwrap();
    assert!(za.appends > 40_000 && za.writes == 0);
    assert_eq!(za.write_amplification, Some(1.0));
    assert_eq!(a.data.unwrap().mismatched_sectors, 0);
}

#[test]
fn a_flow_unaware_of_zones_has_its_refused_writes_counted_and_warned_about() {
    // A uniform random writer on the zoned drive: most writes land off a write pointer. They
    // complete at once with a status and are neither reads nor writes; the flow counts them
    // (fuzzing found such a run reporting 87 of 300 requests without a word).
    let toml = zoned_log(2_000, "").replace("address = \"zoned\"\nopen_zones = 3\n", "address = \"uniform\"\n");
    let r = common::run(&toml);
    let flow = &r.flows[0];
    let refused: u64 = flow.refused.values().sum();
    assert!(refused > 1_000, "{:?}", flow.refused);
    assert!(flow.refused.contains_key("zone_invalid_write"), "{:?}", flow.refused);
    assert_eq!(flow.reads.count + flow.writes.count + refused, 2_000);
    let failed = &r.zns.as_ref().unwrap().failed;
    assert_eq!(&flow.refused, failed, "the flow's refusals are the zones' failed commands");
    let warning = r.warnings.iter().find(|w| w.starts_with("flow log: the device refused ")).expect("a warning");
    assert!(warning.contains(&format!("refused {refused} of its 2000 requests")), "{warning}");
    assert!(warning.contains("address = \"zoned\""), "{warning}");
    // results.json keeps the counts; a flow refused nothing has none.
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["flows"][0]["refused"]["zone_invalid_write"], flow.refused["zone_invalid_write"]);
    let clean = common::run(&zoned_log(500, ""));
    assert!(clean.flows[0].refused.is_empty());
    assert!(serde_json::to_value(&clean).unwrap()["flows"][0].get("refused").is_none());
    assert!(!clean.warnings.iter().any(|w| w.contains("refused")), "{:?}", clean.warnings);
}

#[test]
fn zones_confined_to_one_plane_are_slower_to_write_than_striped_ones() {
    // One zone written at a time, of 512 KiB: one block on each of the 8 planes, or 8 blocks
    // on one plane.
    let writer = zoned_log(4_000, "read_fraction = 0.0")
        .replace("read_fraction = 0.25\n", "")
        .replace("open_zones = 3", "open_zones = 1")
        .replace("[zns]\n", "[zns]\nzone_capacity = \"512KiB\"\n");
    let striped = common::run(&writer);
    let confined = common::run(&writer.replace("[zns]\n", "[zns]\nzone_planes = 1\n"));
    assert_eq!(confined.zns.as_ref().unwrap().zone_planes, 1);
    let bw = |r: &ssdlab_core::stats::Results| r.device.writes.bandwidth_mib_s;
    assert!(bw(&striped) > 3.0 * bw(&confined), "striped {:.1} MiB/s, confined {:.1}", bw(&striped), bw(&confined));
}

#[test]
fn worn_out_blocks_take_zones_offline() {
    // Blocks survive 3 erases: after a few drive-fills, resets find their planes short.
    let toml = zoned_log(40_000, "").replace("[ftl]\n", "[ftl]\npe_cycle_limit = 3\n");
    let mut sim = Simulation::from_toml_str(&toml, &common::repo_root()).unwrap();
    let outcome = sim.run();
    let r = match outcome {
        Ok(r) => r,
        Err(e) => panic!("the run goes on with fewer zones: {e}"),
    };
    let z = r.zns.unwrap();
    assert!(z.zone_states["offline"] > 0, "{z:?}");
    sim.check_invariants().unwrap();
}

#[test]
fn bad_zone_configs_are_refused_by_name() {
    let cases = [
        ("[zns]\nzone_capacity = \"96KiB\"", "zns.zone_capacity", "multiple of 524288"),
        ("[zns]\nzone_planes = 3", "zns.zone_planes", "divide"),
        ("[zns]\nzone_size = \"256KiB\"\nzone_capacity = \"1MiB\"", "zns.zone_size", "at least the zone capacity"),
        ("[zns]\nmax_open_zones = 5\nmax_active_zones = 4", "zns.max_open_zones", "max_active_zones"),
        ("[zns]\n[ftl.fdp]", "ftl.fdp", "zoned namespace"),
        ("[zns]\n[precondition]\noccupancy = 0.5", "precondition", "precondition.mode = \"none\""),
    ];
    for (extra, path, words) in cases {
        let toml = format!("{}\n{extra}\n[[flows]]\nkind = \"host\"\n", common::flash([4, 1, 1, 2, 64, 16], "4KiB"));
        let toml = toml.replace("[zns]\n[ftl.fdp]", "[zns]\n[ftl]\n[ftl.fdp]");
        let e = match Device::from_toml_str(&toml, Path::new(".")) {
            Ok(_) => panic!("accepted: {extra}"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(path) && e.contains(words), "{extra}: {e}");
    }
    let flow = "[[flows]]\naddress = \"zoned\"\nqueue_depth = 1\nrequests = 10\n";
    let e = Simulation::from_toml_str(&format!("{}\n{flow}", common::SMALL_DEVICE), Path::new(".")).err().unwrap();
    assert!(e.to_string().contains("flows[0].address") && e.to_string().contains("[zns]"), "{e}");
    let flow = "[[flows]]\nopen_zones = 2\nqueue_depth = 1\nrequests = 10\n";
    let e = Simulation::from_toml_str(&format!("{}\n{flow}", common::SMALL_DEVICE), Path::new(".")).err().unwrap();
    assert!(e.to_string().contains("flows[0].open_zones"), "{e}");
}

#[test]
fn a_fio_iolog_with_zone_commands_replays_on_a_zoned_drive() {
    let dir = std::env::temp_dir().join(format!("ssdlab-zns-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = "fio version 2 iolog\n/dev/nvme0n2 add\n/dev/nvme0n2 open\n\
                 /dev/nvme0n2 zone_reset 0 0\n/dev/nvme0n2 write 0 65536\n/dev/nvme0n2 zone_append 0 65536\n\
                 /dev/nvme0n2 read 0 4096\n/dev/nvme0n2 zone_finish 0 0\n/dev/nvme0n2 zone_open 1048576 0\n\
                 /dev/nvme0n2 zone_close 1048576 0\n/dev/nvme0n2 write 131072 4096\n/dev/nvme0n2 zone_reset 0 0\n";
    std::fs::write(dir.join("zoned.iolog"), trace).unwrap();
    let config = zoned("").replace(
        "[[flows]]\nname = \"host\"\nkind = \"host\"\n",
        "[[flows]]\nname = \"replay\"\nkind = \"trace\"\npath = \"zoned.iolog\"\nformat = \"fio\"\narrival_gap = \"1ms\"\n",
    );
    let mut sim = Simulation::from_toml_str(&config, &dir).unwrap();
    let r = sim.run().unwrap();
    let z = r.zns.unwrap();
    assert_eq!((z.resets, z.appends, z.writes, z.finishes, z.explicit_opens, z.closes), (2, 1, 1, 1, 1, 1));
    assert_eq!(z.failed.get("zone_is_full"), Some(&1), "{:?}", z.failed);
    assert_eq!(z.zone_states["empty"], z.zones - 1);
    assert_eq!(z.zone_states["closed"], 1);
    std::fs::write(dir.join("bad.iolog"), "fio version 2 iolog\n/dev/nvme0n2 zone_reset 0 4096\n").unwrap();
    let e = Simulation::from_toml_str(&config.replace("zoned.iolog", "bad.iolog"), &dir)
        .and_then(|mut s| s.run().map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.iolog:2") && e.contains("length must be 0"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
