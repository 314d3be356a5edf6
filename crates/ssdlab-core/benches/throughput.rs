//! Speed and memory benchmark (not a timed test): simulated requests per wall second and peak
//! RSS on MQSim's default 512 GiB device filled to 75 %.
//!
//! `make bench` (or `cargo bench -p ssdlab-core --bench throughput`) runs every case in a child
//! process of its own, so each peak RSS is that case's alone, three times, keeping the fastest run
//! (the others are slowed by whatever else the machine does), and writes `results/bench.json`:
//! a list of {"name", "requests", "wall_seconds", "requests_per_second", "peak_rss_mib", "build", ...}.
//! `-- CASE` runs one case in this process and prints its JSON line.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use ssdlab_core::Simulation;

const REQUESTS: u64 = 1_000_000;
/// Runs per case; the fastest is reported.
const RUNS: u32 = 3;

struct Case {
    name: &'static str,
    description: &'static str,
    config: String,
}

/// Random 4 KiB writes after steady-state preconditioning of the 1 TB case.
const PRECONDITIONED_REQUESTS: u64 = 100_000;

fn cases() -> Vec<Case> {
    // The foundation rows keep the whole map in DRAM (ideal CMT, no cache), as the speed goals
    // were set that way; the last row runs MQSim's 2 MiB cached mapping table and write cache.
    // They also pin the foundation's policies (greedy GC, no wear leveling, out-of-order
    // scheduling), which were the defaults when the goals were set, so the rows measure the same
    // work as then.
    let ideal = "seed = 1\n[controller]\nscheduling = \"out-of-order\"\n[ftl]\nideal_mapping = true\ngc_policy = \"greedy\"\ndynamic_wear_leveling = false\nstatic_wear_leveling = false\n[precondition]\nmode = \"fill\"\noccupancy = 0.75\n";
    let cached = "seed = 1\n[precondition]\nmode = \"fill\"\noccupancy = 0.75\n";
    // A current 1 TB TLC-class geometry: 8 channels x 4 chips x 2 dies x 2 planes x 2048 blocks
    // x 256 pages of 16 KiB = 1 TiB raw, 1.02 TB for the user at 7 % over-provisioning.
    let one_tb = "seed = 1\n[ftl]\nover_provisioning = 0.07\n[flash]\nchannels = 8\nchips_per_channel = 4\ndies_per_chip = 2\nplanes_per_die = 2\nblocks_per_plane = 2048\npages_per_block = 256\npage_size = \"16KiB\"\n[precondition]\nmode = \"steady\"\noccupancy = 1.0\n";
    // Issue 18's 4 TiB drive: MQSim's default geometry with 16 KiB pages and 8192 blocks per
    // plane (256 M physical pages).
    let four_tib = "seed = 1\n[flash]\nblocks_per_plane = 8192\npage_size = \"16KiB\"\n[precondition]\nmode = \"steady\"\noccupancy = 1.0\n";
    let flow = |read: f64| {
        format!("[[flows]]\nread_fraction = {read}\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\naddress = \"uniform\"\nworking_set = 0.75\nqueue_depth = 64\nrequests = {REQUESTS}\n")
    };
    vec![
        Case {
            name: "start-512gib",
            description: "building MQSim's default 512 GiB device without preconditioning, then one 4 KiB read (setup_seconds: the time to the first event, issue 18's 20 ms goal)",
            config: "seed = 1\n[precondition]\nmode = \"none\"\n[[flows]]\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nqueue_depth = 1\nrequests = 1\n".to_string(),
        },
        Case {
            name: "random-read-4k-qd64",
            description: "1,000,000 random 4 KiB reads at QD 64, default device 75 % full",
            config: format!("{ideal}layout = \"packed\"\n{}", flow(1.0)),
        },
        Case {
            name: "random-write-4k-qd64-gc",
            description: "1,000,000 random 4 KiB writes at QD 64, default device 75 % full in the aged (spread) layout, GC running from the first write",
            config: format!("{ideal}layout = \"spread\"\n{}", flow(0.0)),
        },
        Case {
            name: "random-mixed-4k-qd64-cmt-cache",
            description: "1,000,000 random 4 KiB requests (70 % reads) at QD 64 through the 2 MiB cached mapping table and the 256 MiB write cache, default device 75 % full and aged",
            config: format!("{cached}layout = \"spread\"\n{}cache_mode = \"write\"\n", flow(0.7)),
        },
        Case {
            name: "precondition-1tb",
            description: "steady-state preconditioning of a 1 TB (user capacity) drive, full, for random 4 KiB writes (setup_seconds, precondition_seconds), then 100,000 of them at QD 64",
            config: format!(
                "{one_tb}[[flows]]\nread_fraction = 0.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\naddress = \"uniform\"\nqueue_depth = 64\nrequests = {PRECONDITIONED_REQUESTS}\n"
            ),
        },
        Case {
            name: "precondition-4tib",
            description: "steady-state preconditioning of a full 4 TiB drive (MQSim's default geometry, 16 KiB pages, 8192 blocks per plane) for random 4 KiB writes, then 100,000 of them at QD 64",
            config: format!(
                "{four_tib}[[flows]]\nread_fraction = 0.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\naddress = \"uniform\"\nqueue_depth = 64\nrequests = {PRECONDITIONED_REQUESTS}\n"
            ),
        },
    ]
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

fn run_case(case: &Case) -> serde_json::Value {
    let setup_start = Instant::now();
    let mut sim = Simulation::from_toml_str(&case.config, Path::new(".")).expect("benchmark config is valid");
    let setup_seconds = setup_start.elapsed().as_secs_f64();
    let start = Instant::now();
    let results = sim.run().expect("benchmark runs");
    let wall = start.elapsed().as_secs_f64();
    let requests = results.device.reads.count + results.device.writes.count;
    serde_json::json!({
        "name": case.name,
        "description": case.description,
        "requests": requests,
        "wall_seconds": wall,
        "requests_per_second": requests as f64 / wall,
        "peak_rss_mib": peak_rss_mib(),
        "setup_seconds": setup_seconds,
        "events": results.events,
        "events_per_second": results.events as f64 / wall,
        "simulated_seconds": results.simulated_seconds,
        "write_amplification": results.device.gc.write_amplification,
        "gc_blocks_erased": results.device.gc.blocks_erased,
        "user_capacity_bytes": results.device.logical_capacity_bytes,
        "precondition_mode": results.precondition.mode,
        "precondition_seconds": results.precondition.wall_seconds,
        "build": build(),
    })
}

/// Which build ran: `scripts/pgo.py bench` (`make bench`) compiles the benchmark with a profile
/// of the training runs and names it here; a plain `cargo bench` is the release build alone.
fn build() -> String {
    match option_env!("SSDLAB_PGO_PROFILE") {
        Some(profile) => format!("release, profile-guided ({profile})"),
        None => "release".to_string(),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let all = cases();
    if let Some(name) = args.first() {
        let Some(case) = all.iter().find(|c| c.name == name) else {
            eprintln!("unknown case {name}; cases: {}", all.iter().map(|c| c.name).collect::<Vec<_>>().join(", "));
            return ExitCode::from(2);
        };
        println!("{}", run_case(case));
        return ExitCode::SUCCESS;
    }
    let exe = std::env::current_exe().expect("own path");
    let mut rows = Vec::new();
    for case in &all {
        let mut best: Option<serde_json::Value> = None;
        for _ in 0..RUNS {
            let output = Command::new(&exe).arg(case.name).output().expect("child runs");
            if !output.status.success() {
                eprintln!("{} failed: {}", case.name, String::from_utf8_lossy(&output.stderr));
                return ExitCode::FAILURE;
            }
            let row: serde_json::Value = serde_json::from_slice(&output.stdout).expect("child prints JSON");
            let speed = |r: &serde_json::Value| r["requests_per_second"].as_f64().unwrap_or(0.0);
            if best.as_ref().is_none_or(|b| speed(&row) > speed(b)) {
                best = Some(row);
            }
        }
        let mut row = best.expect("at least one run");
        row["runs"] = serde_json::Value::from(RUNS);
        eprintln!(
            "{:<28} {:>9} requests {:>8.2} s {:>12.0} req/s {:>8.1} MiB peak RSS",
            case.name,
            row["requests"],
            row["wall_seconds"].as_f64().unwrap(),
            row["requests_per_second"].as_f64().unwrap(),
            row["peak_rss_mib"].as_f64().unwrap()
        );
        rows.push(row);
    }
    let out: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
    std::fs::create_dir_all(&out).expect("results directory");
    let path = out.join("bench.json");
    std::fs::write(&path, serde_json::to_string_pretty(&rows).expect("rows serialise")).expect("bench.json written");
    eprintln!("wrote {}", path.display());
    ExitCode::SUCCESS
}
