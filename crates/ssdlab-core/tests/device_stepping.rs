//! Issue 13: the device driven by an outside host through the stepping API. Host bytes written
//! through GC, wear leveling and the write cache read back identical; trims read back as zeros
//! and spare GC their pages; a flush completes only once the cache's dirty data is on flash; the
//! same requests stepped in give the batch run's results; bad requests are refused by name.

mod common;

use std::path::Path;

use proptest::prelude::*;
use ssdlab_core::device::{Completion, HostRequest, Op, Status, SubmitError};
use ssdlab_core::{Device, Simulation};

/// A small device under GC pressure: 2 planes of 24 blocks of 16 4-KiB pages, 20 % spare.
fn small_device(cache_mode: &str, extra: &str) -> String {
    format!(
        r#"
seed = 3
{flash}
[ftl]
over_provisioning = 0.2
static_wear_leveling = true
static_wear_leveling_threshold = 3
[cache]
capacity = "64KiB"
[data]
emulate = true
[[flows]]
name = "sq0"
kind = "host"
cache_mode = "{cache_mode}"
{extra}
"#,
        flash = common::flash([2, 1, 1, 1, 24, 16], "4KiB")
    )
}

fn device(toml: &str) -> Device {
    Device::from_toml_str(toml, Path::new(".")).unwrap_or_else(|e| panic!("device rejected: {e}"))
}

/// Runs the device until nothing is in flight; returns the completions.
fn drain(dev: &mut Device) -> Vec<Completion> {
    let mut done = Vec::new();
    while let Some(t) = dev.next_event_time() {
        dev.advance_to(t).expect("the device goes on");
        done.extend(dev.completions());
    }
    done
}

fn request(id: u64, op: Op, start_sector: u64, sectors: u32, data: Option<&[u8]>) -> HostRequest<'_> {
    HostRequest { id, queue: 0, op, start_sector, sectors, data, placement_handle: None }
}

/// What the host expects each sector to hold, and the requests in flight (no two overlap, so
/// every read's expected bytes are those at its submission).
struct Host {
    image: Vec<u8>,
    in_flight: Vec<(u64, u64, u64)>,
    page_sectors: u64,
}

impl Host {
    fn overlaps(&self, start: u64, end: u64) -> bool {
        self.in_flight.iter().any(|&(_, s, e)| s < end && start < e)
    }
}

type Reads = std::collections::HashMap<u64, Vec<u8>>;

#[derive(Clone, Debug)]
enum Step {
    Write { start: u64, sectors: u32, fill: u8 },
    Read { start: u64, sectors: u32 },
    Trim { start: u64, sectors: u32 },
    Zeroes { start: u64, sectors: u32 },
    Flush,
}

/// Steps within the first `sectors` (the device's logical space: a request past it is refused,
/// which `bad_requests_are_refused_by_name` checks).
fn step_strategy(sectors: u64) -> impl Strategy<Value = Step> {
    let range = (0..sectors - 64, 1u32..=64);
    prop_oneof![
        6 => (range.clone(), any::<u8>()).prop_map(|((start, sectors), fill)| Step::Write { start, sectors, fill }),
        4 => range.clone().prop_map(|(start, sectors)| Step::Read { start, sectors }),
        1 => range.clone().prop_map(|(start, sectors)| Step::Trim { start, sectors }),
        1 => range.prop_map(|(start, sectors)| Step::Zeroes { start, sectors }),
        1 => Just(Step::Flush),
    ]
}

/// Bytes of a host write: distinct per sector and per write.
fn bytes(start: u64, sectors: u32, fill: u8, id: u64) -> Vec<u8> {
    let mut out = vec![fill; sectors as usize * 512];
    for (i, sector) in out.chunks_exact_mut(512).enumerate() {
        sector[..8].copy_from_slice(&(start + i as u64).to_le_bytes());
        sector[8..16].copy_from_slice(&id.to_le_bytes());
    }
    out
}

/// Plays `steps` at up to `depth` requests in flight, checking every read against the image.
fn play(dev: &mut Device, steps: &[Step], depth: usize) -> Result<(), TestCaseError> {
    let logical = dev.logical_sectors();
    let mut host =
        Host { image: vec![0; logical as usize * 512], in_flight: Vec::new(), page_sectors: dev.page_bytes() / 512 };
    let mut expected_reads = Reads::new();
    let mut id = 0u64;
    let check = |host: &mut Host, reads: &mut Reads, done: Vec<Completion>| -> Result<(), TestCaseError> {
        for c in done {
            prop_assert_eq!(c.status, Status::Success);
            host.in_flight.retain(|&(i, _, _)| i != c.id);
            if c.op == Op::Read {
                let want = reads.remove(&c.id).expect("a read we sent");
                let got = c.data.expect("reads return data with data kept");
                prop_assert!(got == want, "read {} returned other bytes than written", c.id);
            }
        }
        Ok(())
    };
    for step in steps {
        let (start, sectors) = match *step {
            Step::Write { start, sectors, .. }
            | Step::Read { start, sectors }
            | Step::Trim { start, sectors }
            | Step::Zeroes { start, sectors } => (start, sectors),
            Step::Flush => (0, 0),
        };
        let end = start + sectors as u64;
        // Wait for room, and for requests this one overlaps (a flush waits for everything).
        while host.in_flight.len() >= depth
            || (sectors > 0 && host.overlaps(start, end))
            || (sectors == 0 && !host.in_flight.is_empty())
        {
            let t = dev.next_event_time().expect("requests in flight have events");
            dev.advance_to(t).expect("the device goes on");
            let done: Vec<Completion> = dev.completions().collect();
            check(&mut host, &mut expected_reads, done)?;
        }
        id += 1;
        let range = start as usize * 512..end as usize * 512;
        match *step {
            Step::Write { fill, .. } => {
                let data = bytes(start, sectors, fill, id);
                dev.submit(&request(id, Op::Write, start, sectors, Some(&data))).expect("accepted");
                host.image[range].copy_from_slice(&data);
            }
            Step::Read { .. } => {
                expected_reads.insert(id, host.image[range].to_vec());
                dev.submit(&request(id, Op::Read, start, sectors, None)).expect("accepted");
            }
            Step::Trim { .. } => {
                dev.submit(&request(id, Op::Trim, start, sectors, None)).expect("accepted");
                // Whole pages read back as zeros; partly covered pages keep their data.
                let spp = host.page_sectors;
                let (first, last) = (start.div_ceil(spp) * spp, end / spp * spp);
                if last > first {
                    host.image[first as usize * 512..last as usize * 512].fill(0);
                }
            }
            Step::Zeroes { .. } => {
                dev.submit(&request(id, Op::WriteZeroes, start, sectors, None)).expect("accepted");
                host.image[range].fill(0);
            }
            Step::Flush => dev.submit(&request(id, Op::Flush, 0, 0, None)).expect("accepted"),
        }
        host.in_flight.push((id, start, end.max(start + 1)));
        // Flush and trim occupy the whole device in this model of the host's order.
        if sectors == 0 {
            host.in_flight.last_mut().expect("pushed").2 = logical;
        }
    }
    let done = drain(dev);
    check(&mut host, &mut expected_reads, done)?;
    prop_assert!(expected_reads.is_empty(), "{} reads never completed", expected_reads.len());
    // Every sector reads back as the host's image, whatever GC moved since.
    for start in (0..logical).step_by(256) {
        let n = 256.min(logical - start) as u32;
        id += 1;
        dev.submit(&request(id, Op::Read, start, n, None)).expect("accepted");
        let c = drain(dev).pop().expect("the read completed");
        let got = c.data.expect("data");
        prop_assert!(got == host.image[start as usize * 512..(start + n as u64) as usize * 512], "sector {start}+");
    }
    dev.simulation().check_invariants().map_err(TestCaseError::fail)?;
    let r = dev.results();
    let d = r.data.as_ref().expect("data kept");
    prop_assert_eq!(d.mismatched_sectors, 0);
    Ok(())
}

proptest! {
    // Explore further with, for example,
    // PROPTEST_CASES=200 SSDLAB_PROPTEST_SEED=7 cargo test --release --test device_stepping
    #![proptest_config(ProptestConfig { failure_persistence: None, ..common::proptest_config(12) })]

    /// Random host bytes written several times over a small device (GC and static wear
    /// leveling at work, with and without the write cache) read back identical.
    #[test]
    fn host_bytes_read_back_identical_through_gc(
        cache in prop::sample::select(vec!["off", "write", "write-read"]),
        depth in 1usize..=4,
        steps in prop::collection::vec(step_strategy(device(&small_device("off", "")).logical_sectors()), 600..900),
    ) {
        let mut dev = device(&small_device(cache, ""));
        play(&mut dev, &steps, depth)?;
        let r = dev.results();
        prop_assert!(r.device.gc.pages_moved + r.device.gc.blocks_erased > 0, "no GC ran: the case proves little");
    }
}

#[test]
fn flush_waits_for_the_cached_writes_to_reach_flash() {
    // Written back only on demand, the dirty pages wait in the cache for the flush.
    let mut dev = device(&small_device("write", "").replace("[cache]\n", "[cache]\ndestage = \"when-full\"\n"));
    let data = vec![0xAB; 8 * 512];
    for i in 0..4u64 {
        dev.submit(&request(i, Op::Write, i * 8, 8, Some(&data))).expect("accepted");
    }
    let writes = drain(&mut dev);
    assert_eq!(writes.len(), 4);
    let programs_before = dev.results().device.flash.programs;
    dev.submit(&request(9, Op::Flush, 0, 0, None)).expect("accepted");
    let flush = drain(&mut dev).pop().expect("the flush completed");
    assert_eq!((flush.op, flush.status), (Op::Flush, Status::Success));
    let programs_after = dev.results().device.flash.programs;
    assert_eq!(programs_after - programs_before, 4, "the flush programs the 4 dirty pages");
    // A program takes hundreds of microseconds: the cached writes took far less.
    assert!(flush.latency_ps() > 100_000_000, "flush took {} ps", flush.latency_ps());
    assert!(writes.iter().all(|w| w.latency_ps() < flush.latency_ps()));
    // A second flush has nothing to wait for.
    dev.submit(&request(10, Op::Flush, 0, 0, None)).expect("accepted");
    let again = drain(&mut dev).pop().expect("completed");
    assert!(again.latency_ps() < flush.latency_ps() / 10);
}

#[test]
fn an_idle_device_writes_its_cache_back_before_the_host_flushes() {
    // Background destaging (the default): draining runs the device through its idle time, and
    // once the host has been idle for 1 ms the dirty pages go to flash; the flush finds none.
    let mut dev = device(&small_device("write", ""));
    let data = vec![0xAB; 8 * 512];
    for i in 0..4u64 {
        dev.submit(&request(i, Op::Write, i * 8, 8, Some(&data))).expect("accepted");
    }
    let writes = drain(&mut dev);
    assert_eq!(writes.len(), 4);
    let r = dev.results();
    assert_eq!((r.device.flash.programs, r.device.cache.destaged_when_idle), (4, 4));
    dev.submit(&request(9, Op::Flush, 0, 0, None)).expect("accepted");
    let flush = drain(&mut dev).pop().expect("the flush completed");
    assert!(flush.latency_ps() < 100_000_000, "nothing to wait for: {} ps", flush.latency_ps());
    assert_eq!(dev.results().device.flash.programs, 4);
}

/// Writes `rounds` passes of random 4 KiB pages over the first 80 % of a small device; with
/// `trim`, each pass first trims what it is about to rewrite. Returns the GC page moves.
fn gc_moves(trim: bool) -> u64 {
    let mut dev = device(&small_device("off", ""));
    let span = dev.logical_sectors() * 8 / 10 / 8;
    let mut rng = 12345u64;
    let mut id = 0;
    let data = vec![7u8; 4096];
    for _ in 0..4 {
        if trim {
            id += 1;
            dev.submit(&request(id, Op::Trim, 0, (span * 8) as u32, None)).expect("accepted");
            drain(&mut dev);
        }
        for _ in 0..span {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let page = (rng >> 33) % span;
            id += 1;
            dev.submit(&request(id, Op::Write, page * 8, 8, Some(&data))).expect("accepted");
            drain(&mut dev);
        }
    }
    dev.simulation().check_invariants().expect("invariants");
    dev.results().device.gc.pages_moved
}

#[test]
fn trimming_what_will_be_rewritten_spares_gc_moves() {
    let (plain, trimmed) = (gc_moves(false), gc_moves(true));
    assert!(plain > 0, "the workload must need GC");
    assert!(trimmed * 2 < plain, "with trims GC moved {trimmed} pages, without {plain}");
}

#[test]
fn trim_is_refused_where_no_page_can_be_unmapped() {
    let toml = small_device("off", "").replace("[ftl]\n", "[ftl]\nmapping = \"block\"\n");
    let toml = toml.replace("static_wear_leveling = true\nstatic_wear_leveling_threshold = 3\n", "");
    let toml = toml.replace("[data]", "[precondition]\nmode = \"none\"\n[data]");
    let mut dev = device(&toml);
    let data = vec![0x5A; 64 * 512];
    dev.submit(&request(1, Op::Write, 0, 64, Some(&data))).expect("accepted");
    dev.submit(&request(2, Op::WriteZeroes, 64, 64, None)).expect("accepted");
    drain(&mut dev);
    dev.submit(&request(3, Op::Trim, 0, 128, None)).expect("accepted");
    let c = drain(&mut dev).pop().expect("completed");
    assert_eq!(c.status, Status::Unsupported);
    // Nothing was deallocated: the data is still there, and the read checks agree.
    dev.submit(&request(4, Op::Read, 0, 128, None)).expect("accepted");
    let read = drain(&mut dev).pop().expect("completed").data.expect("data");
    assert!(read[..64 * 512] == data[..] && read[64 * 512..].iter().all(|&b| b == 0));
    let r = dev.results();
    assert_eq!(r.data.as_ref().expect("data").mismatched_sectors, 0);
    assert!(r.warnings.iter().any(|w| w.starts_with("1 trims were not served")), "{:?}", r.warnings);
}

#[test]
fn bad_requests_are_refused_by_name() {
    let mut dev = device(&small_device("off", ""));
    let logical = dev.logical_sectors();
    let cases: Vec<(HostRequest, SubmitError)> = vec![
        (
            HostRequest { queue: 3, ..request(1, Op::Read, 0, 8, None) },
            SubmitError::NoSuchQueue { queue: 3, queues: 1 },
        ),
        (request(1, Op::Read, 0, 0, None), SubmitError::NoSectors { op: "read" }),
        (request(1, Op::Flush, 8, 0, None), SubmitError::FlushWithRange { start_sector: 8, sectors: 0 }),
        (
            request(1, Op::Write, logical - 4, 8, None),
            SubmitError::OutOfRange { start_sector: logical - 4, sectors: 8, logical_sectors: logical },
        ),
        (
            request(1, Op::Write, 0, 8, Some(&[0; 100])),
            SubmitError::DataLength { sectors: 8, expected: 4096, given: 100 },
        ),
        (request(1, Op::Read, 0, 1, Some(&[0; 512])), SubmitError::DataOnNonWrite { op: "read" }),
    ];
    for (req, want) in cases {
        assert_eq!(dev.submit(&req).expect_err("refused"), want);
    }
    dev.submit(&request(1, Op::Read, 0, 8, None)).expect("accepted");
    assert_eq!(dev.submit(&request(1, Op::Read, 8, 8, None)).expect_err("refused"), SubmitError::DuplicateId { id: 1 });
    assert!(SubmitError::NoSuchQueue { queue: 3, queues: 1 }.to_string().contains("queue 3"));
    // Bytes with no data kept would be lost.
    let mut plain = device(&small_device("off", "").replace("emulate = true", "emulate = false"));
    assert_eq!(
        plain.submit(&request(1, Op::Write, 0, 1, Some(&[0; 512]))).expect_err("refused"),
        SubmitError::DataNotKept
    );
}

#[test]
fn a_batch_run_refuses_host_queues_and_a_device_without_flows_gets_one() {
    let toml = small_device("off", "");
    let err = Simulation::from_toml_str(&toml, Path::new(".")).err().expect("refused").to_string();
    assert!(err.contains("flows[0].kind") && err.contains("outside host"), "{err}");
    let bare = toml[..toml.find("[[flows]]").expect("flows")].to_string();
    let dev = device(&bare);
    assert_eq!(dev.host_queues(), vec!["host".to_string()]);
    let err = Device::from_toml_str(&format!("{bare}[[flows]]\nkind = \"host\"\nrequests = 5\n"), Path::new("."))
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("flows[0].requests"), "{err}");
}

/// The requests of a trace, stepped in at their arrival times, give the batch run's results.
#[test]
fn stepping_in_a_traces_requests_gives_the_batch_results() {
    let dir = std::env::temp_dir().join(format!("ssdlab-stepping-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut lines = String::new();
    let mut reqs = Vec::new();
    let mut rng = 99u64;
    let mut t_us = 0u64;
    for _ in 0..3000 {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        t_us += 5 + (rng >> 60);
        let lba = (rng >> 20) % 40_000;
        let sectors = 1 + (rng >> 8) % 16;
        let write = (rng >> 40).is_multiple_of(3);
        lines.push_str(&format!("{} 0 {} {} {}\n", t_us * 1000, lba, sectors, if write { 0 } else { 1 }));
        reqs.push((t_us * 1_000_000, write, lba, sectors as u32));
    }
    std::fs::write(dir.join("t.trace"), lines).expect("write trace");
    let base = common::example("mqsim-default.toml");
    let device_part = &base[..base.find("[[flows]]").expect("flows")];
    let batch_toml =
        format!("{device_part}\n[[flows]]\nname = \"app\"\nkind = \"trace\"\npath = \"t.trace\"\nformat = \"mqsim\"\n");
    // Preconditioning ages the drive by the flows' address ranges, which a host queue does not
    // declare: both runs start from a fresh drive.
    let mut config = ssdlab_core::Config::from_toml_str(&batch_toml).expect("batch config");
    config.precondition.mode = ssdlab_core::config::PreconditionMode::None;
    config.precondition.occupancy = 0.0;
    let mut sim = Simulation::new(config.clone(), &dir, serde_json::Value::Null).expect("batch config");
    let batch = sim.run().expect("batch run");
    config.flows[0] = ssdlab_core::config::FlowConfig {
        name: Some("app".into()),
        kind: ssdlab_core::config::FlowKind::Host,
        ..Default::default()
    };
    let mut dev = Device::new(config, &dir).expect("device");
    // Trace time starts at the first record.
    let first = reqs[0].0;
    for (i, &(at, write, lba, sectors)) in reqs.iter().enumerate() {
        dev.advance_to(at - first).expect("advance");
        let op = if write { Op::Write } else { Op::Read };
        dev.submit(&request(i as u64, op, lba, sectors, None)).expect("accepted");
        let _ = dev.completions().count();
    }
    drain(&mut dev);
    let stepped = dev.results();
    assert_eq!(serde_json::to_value(&stepped.flows).unwrap(), serde_json::to_value(&batch.flows).unwrap());
    let (a, b) = (serde_json::to_value(&stepped.device).unwrap(), serde_json::to_value(&batch.device).unwrap());
    for (k, v) in a.as_object().expect("object") {
        assert_eq!(v, &b[k], "device.{k} differs");
    }
    // The batch run's events include one arrival per request, which a host's submit is not.
    assert_eq!(stepped.events + reqs.len() as u64, batch.events);
    assert_eq!(stepped.simulated_seconds, batch.simulated_seconds);
    std::fs::remove_dir_all(&dir).ok();
}

/// `data.backing_file`: a device persisted and built again from the same config reads back
/// what was written (and trimmed), through GC on the way; a missing file is an empty device.
#[test]
fn a_persisted_device_reopens_with_its_contents() {
    let dir = std::env::temp_dir().join(format!("ssdlab-backing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let toml = small_device("write", "")
        .replace("[data]\nemulate = true", "[data]\nemulate = true\nbacking_file = \"disk.img\"");
    let mut dev = Device::from_toml_str(&toml, &dir).expect("device");
    let logical = dev.logical_sectors();
    let mut image = vec![0u8; logical as usize * 512];
    let mut rng = 7u64;
    for id in 0..400u64 {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let start = (rng >> 33) % (logical - 16);
        let data = bytes(start, 16, (rng >> 8) as u8, id);
        dev.submit(&request(id, Op::Write, start, 16, Some(&data))).expect("accepted");
        drain(&mut dev);
        image[start as usize * 512..(start as usize + 16) * 512].copy_from_slice(&data);
    }
    dev.submit(&request(999, Op::Trim, 0, 64, None)).expect("accepted");
    drain(&mut dev);
    image[..64 * 512].fill(0);
    let path = dev.persist().expect("persisted");
    assert_eq!(std::fs::metadata(&path).expect("file").len(), logical * 512);
    let file = std::fs::read(&path).expect("read image");
    if let Some(i) = (0..file.len()).find(|&i| file[i] != image[i]) {
        panic!("the persisted image differs first at sector {} (byte {})", i / 512, i % 512);
    }
    drop(dev);
    let mut again = Device::from_toml_str(&toml, &dir).expect("reopened");
    for start in (0..logical).step_by(128) {
        let n = 128.min(logical - start) as u32;
        again.submit(&request(start, Op::Read, start, n, None)).expect("accepted");
        let got = drain(&mut again).pop().expect("read").data.expect("data");
        let want = &image[start as usize * 512..(start + n as u64) as usize * 512];
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            let s = i / 512;
            panic!(
                "sector {} differs after reopening: got {:?}, want {:?}",
                start as usize + s,
                &got[s * 512..s * 512 + 16],
                &want[s * 512..s * 512 + 16]
            );
        }
    }
    again.simulation().check_invariants().expect("invariants");
    // The file is the logical image: an empty device's is all zeros, and a bad size is refused.
    std::fs::write(dir.join("disk.img"), vec![1u8; (logical as usize + 8) * 512]).expect("write");
    let err = Device::from_toml_str(&toml, &dir).err().expect("refused").to_string();
    assert!(err.contains("data.backing_file") && err.contains("larger device"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
    let err = Device::from_toml_str(&toml.replace("emulate = true\n", ""), &dir).err().expect("refused").to_string();
    assert!(err.contains("data.backing_file") && err.contains("emulate"), "{err}");
}
