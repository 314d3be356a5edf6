//! Preemptible GC and copyback: what each changes for the host.

mod common;

use common::run;

const DEVICE: &str = r#"
seed = 3
[flash]
channels = 1
chips_per_channel = 2
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 64
page_size = "4KiB"
[ftl]
over_provisioning = 0.2
ideal_mapping = true
gc_threshold = 0.1
[precondition]
mode = "fill"
occupancy = 1.0
layout = "spread"
[[flows]]
name = "reader"
read_fraction = 1.0
request_size = "4KiB"
alignment = "4KiB"
queue_depth = 2
requests = 3000
[[flows]]
name = "writer"
request_size = "4KiB"
alignment = "4KiB"
queue_depth = 4
requests = 6000
"#;

#[test]
fn preemptible_gc_lets_user_writes_pass_gc_work() {
    let blocking = run(DEVICE);
    let preemptible =
        run(&DEVICE
            .replace("gc_threshold = 0.1", "gc_threshold = 0.1\npreemptible_gc = true\ngc_hard_threshold = 0.02"));
    let w = |r: &ssdlab_core::Results| r.flows[1].writes.latency_us.mean;
    eprintln!("writes: blocking {:.0} us, preemptible {:.0} us", w(&blocking), w(&preemptible));
    assert!(
        w(&preemptible) < w(&blocking) * 0.8,
        "mean write latency: blocking {:.0} us, preemptible {:.0} us",
        w(&blocking),
        w(&preemptible)
    );
    // The work is deferred, not skipped: GC still reclaims space.
    assert!(preemptible.device.gc.blocks_erased > 0);
}

#[test]
fn copyback_keeps_gc_moves_off_the_channel() {
    let normal = run(DEVICE);
    let copyback = run(&DEVICE.replace("gc_threshold = 0.1", "gc_threshold = 0.1\ncopyback = true"));
    let busy = |r: &ssdlab_core::Results| r.device.flash.channel_utilisation[0] * r.simulated_seconds;
    assert!(normal.device.gc.pages_moved > 1000);
    // Each GC move saves a page out and a page in (about 2 x 12.3 us at 333 MT/s).
    assert!(busy(&copyback) < busy(&normal) - 0.01, "channel busy: {:.4} s vs {:.4} s", busy(&copyback), busy(&normal));
    assert!(copyback.simulated_seconds < normal.simulated_seconds);
}
