//! Steady-state preconditioning: `steady` (a sample plane aged untimed, copied to every plane)
//! must leave the device where `simulate` (the same writes through the timed model) leaves it,
//! as seen by the run that follows; and the modes parse and reject bad input.

mod common;

use common::{repo_root, run};
use ssdlab_core::{Config, SimError, Simulation};

/// 4 planes of 96 blocks of 32 4 KiB pages, the whole map in DRAM, no wear leveling.
fn device(mode: &str, address: &str, op: f64, policy: &str) -> String {
    let hot = if address == "hotcold" { "hot_fraction = 0.2\nhot_traffic = 0.8\n" } else { "" };
    format!(
        "seed = 5\n[controller]\nscheduling = \"out-of-order\"\n\
         [ftl]\nideal_mapping = true\nover_provisioning = {op}\ngc_policy = \"{policy}\"\ndynamic_wear_leveling = false\nstatic_wear_leveling = false\ngc_threshold = 0.03\n\
         [flash]\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 96\npages_per_block = 32\npage_size = \"4KiB\"\n\
         [precondition]\nmode = \"{mode}\"\ndrive_writes = 2\n\
         [[flows]]\nread_fraction = 0.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\naddress = \"{address}\"\n{hot}queue_depth = 4\nrequests = 12000\n"
    )
}

#[test]
fn steady_matches_simulated_aging_for_uniform_and_hot_cold_writes() {
    let mut report = Vec::new();
    for address in ["uniform", "hotcold"] {
        for op in [0.07, 0.28] {
            for policy in ["greedy", "fifo"] {
                let steady = run(&device("steady", address, op, policy));
                let simulated = run(&device("simulate", address, op, policy));
                let wa = (steady.device.gc.write_amplification, simulated.device.gc.write_amplification);
                let latency = (steady.device.writes.latency_us.mean, simulated.device.writes.latency_us.mean);
                report.push(format!(
                    "{address} op {op} {policy}: WA {:.2} vs {:.2}, write latency {:.0} vs {:.0} us",
                    wa.0, wa.1, latency.0, latency.1
                ));
                assert!((wa.0 / wa.1 - 1.0).abs() < 0.10, "{}", report.join("\n"));
                assert!((latency.0 / latency.1 - 1.0).abs() < 0.10, "{}", report.join("\n"));
                // The run starts in steady state: GC from the first writes, not a fresh drive's 1.
                assert!(wa.0 > if op < 0.1 { 5.0 } else { 1.5 }, "{}", report.join("\n"));
            }
        }
    }
}

#[test]
fn no_preconditioning_starts_fresh_and_steady_starts_at_the_gc_threshold() {
    let none = run(&device("none", "uniform", 0.07, "greedy").replace("drive_writes = 2\n", ""));
    assert_eq!(none.precondition.mode, "none");
    assert_eq!(none.precondition.mapped_pages, 0);
    let mut sim = Simulation::from_toml_str(&device("steady", "uniform", 0.07, "greedy"), &repo_root()).unwrap();
    sim.check_invariants().unwrap();
    let r = sim.run().unwrap();
    let p = &r.precondition;
    assert_eq!(p.mode, "steady");
    assert_eq!(p.sample_planes, 1);
    // The whole logical space (the flow's working set) holds data.
    assert_eq!(p.mapped_pages, r.device.logical_capacity_bytes / 4096);
    // Every plane left at its GC threshold (3 % of 96 blocks: 3 erased blocks per plane).
    assert!(p.free_blocks >= 4 * 2 && p.free_blocks <= 4 * 4, "free blocks {}", p.free_blocks);
    let written: u64 = p.valid_fraction_histogram.blocks.iter().sum();
    assert_eq!(written + p.free_blocks, 4 * 96);
    assert_eq!(p.valid_fraction_histogram.edges.len(), p.valid_fraction_histogram.blocks.len() + 1);
    assert!(p.write_amplification > 5.0, "aging WA {}", p.write_amplification);
    assert!(none.device.gc.write_amplification < r.device.gc.write_amplification);
}

#[test]
fn steady_is_deterministic_for_a_seed() {
    let text = device("steady", "hotcold", 0.07, "greedy");
    let json = |text: &str| {
        let mut r = run(text);
        (r.wall_seconds, r.setup_wall_seconds, r.precondition.wall_seconds) = (0.0, 0.0, 0.0);
        serde_json::to_string(&r).unwrap()
    };
    assert_eq!(json(&text), json(&text));
    assert_ne!(json(&text), json(&text.replace("seed = 5", "seed = 6")));
}

#[test]
fn the_mode_may_be_given_alone() {
    let c = Config::from_toml_str("precondition = \"simulate\"\n[[flows]]\nqueue_depth = 1\nrequests = 1\n").unwrap();
    assert_eq!(c.precondition.mode, ssdlab_core::config::PreconditionMode::Simulate);
    let c = Config::from_toml_str("[[flows]]\nqueue_depth = 1\nrequests = 1\n").unwrap();
    assert_eq!(c.precondition.mode, ssdlab_core::config::PreconditionMode::Steady);
}

#[test]
fn bad_preconditioning_is_rejected_with_the_field_named() {
    let flow = "[[flows]]\nqueue_depth = 1\nrequests = 1\n";
    let cases = [
        ("precondition = \"aged\"\n", "precondition", "unknown variant `aged`"),
        ("precondition = 3\n", "precondition", "a mode (\"steady\", \"fill\", \"none\" or \"simulate\") or a table"),
        (
            "[precondition]\nmode = \"steady\"\nlayout = \"spread\"\n",
            "precondition.layout",
            "applies to mode \"fill\" only",
        ),
        ("[precondition]\nmode = \"none\"\noccupancy = 0.5\n", "precondition.occupancy", "not \"none\""),
        ("[precondition]\nmode = \"fill\"\ndrive_writes = 2\n", "precondition.drive_writes", "applies to mode"),
        ("[precondition]\ndrive_writes = -1\n", "precondition.drive_writes", "between 0 and 1000"),
        ("[precondition]\nwarm = true\n", "precondition", "unknown field `warm`"),
    ];
    for (text, path, reason) in cases {
        let message = match Config::from_toml_str(&format!("{text}{flow}")) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {text}"),
        };
        assert!(message.starts_with(path), "expected an error at {path}, got: {message}");
        assert!(message.contains(reason), "expected `{reason}` in: {message}");
    }
}

#[test]
fn data_that_cannot_fit_a_plane_is_an_error_not_a_hang() {
    // 100 % occupancy with 1 % over-provisioning and a 3 % GC threshold leaves GC no room.
    let text =
        device("steady", "uniform", 0.01, "greedy").replace("[precondition]\n", "[precondition]\noccupancy = 1.0\n");
    match Simulation::from_toml_str(&text, &repo_root()) {
        Err(SimError::Config(e)) => assert!(e.path.starts_with("precondition") || e.path.starts_with("ftl"), "{e}"),
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("accepted a device with no room for GC"),
    }
}

#[test]
fn a_trace_flow_is_aged_by_its_own_prescanned_writes() {
    // The bundled MSR-layout trace: steady maps exactly the pages it addresses and ages the ones
    // it writes; a small device so that its writes matter.
    let text = "seed = 3\n[ftl]\nideal_mapping = true\ngc_threshold = 0.03\n\
                [flash]\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 96\npages_per_block = 32\npage_size = \"4KiB\"\n\
                [[flows]]\nkind = \"trace\"\npath = \"examples/traces/demo-msr.csv\"\nformat = \"msr\"\n";
    let mut sim = Simulation::from_toml_str(text, &repo_root()).unwrap();
    sim.check_invariants().unwrap();
    let r = sim.run().unwrap();
    let p = &r.precondition;
    assert_eq!(p.mode, "steady");
    let logical_pages = r.device.logical_capacity_bytes / 4096;
    assert!(p.mapped_pages > 100 && p.mapped_pages < logical_pages, "the trace's pages only: {}", p.mapped_pages);
    assert_eq!(r.device.reads.count + r.device.writes.count, r.flows[0].requests);
    // Every page the trace reads was written before it: no read finds an unmapped page.
    assert_eq!(r.device.flash.unmapped_reads, 0);
}

#[test]
fn steady_fifo_agrees_with_the_analytic_model_for_uniform_writes() {
    // Desnoyers (SYSTOR 2012): FIFO under uniform writes. Spare in rotation: the blocks not held
    // back at the GC threshold.
    for op in [0.07, 0.15, 0.28] {
        let text = format!(
            "seed = 5\n[ftl]\nideal_mapping = true\nover_provisioning = {op}\ngc_policy = \"fifo\"\ndynamic_wear_leveling = false\nstatic_wear_leveling = false\ngc_threshold = 0.03\n\
             [flash]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 512\npages_per_block = 128\npage_size = \"4KiB\"\n\
             [precondition]\ndrive_writes = 8\n[[flows]]\nread_fraction = 0.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 1\nrequests = 1\n"
        );
        let r = run(&text);
        let data_per_plane = r.precondition.mapped_pages as f64 / 2.0;
        let rotating = (512.0 - (0.03f64 * 512.0).ceil()) * 128.0;
        let model = ssdlab_core::analytic::fifo_uniform_write_amplification(rotating / data_per_plane);
        let sampled = r.precondition.write_amplification;
        assert!((sampled / model - 1.0).abs() < 0.05, "OP {op}: steady's aging WA {sampled:.3}, model {model:.3}");
    }
}
