//! Preemptible GC and copyback: what each changes for the host.

mod common;

use common::run;

/// A filled drive whose writer keeps GC busy beside a reader.
fn device() -> String {
    common::fixture("gc_pressure.toml")
}

#[test]
fn preemptible_gc_lets_user_writes_pass_gc_work() {
    let blocking = run(&device());
    let preemptible =
        run(&device()
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
    let normal = run(&device());
    let copyback = run(&device().replace("gc_threshold = 0.1", "gc_threshold = 0.1\ncopyback = true"));
    let busy = |r: &ssdlab_core::Results| r.device.flash.channel_utilisation[0] * r.simulated_seconds;
    assert!(normal.device.gc.pages_moved > 1000);
    // Each GC move saves a page out and a page in (about 2 x 12.3 us at 333 MT/s).
    assert!(busy(&copyback) < busy(&normal) - 0.01, "channel busy: {:.4} s vs {:.4} s", busy(&copyback), busy(&normal));
    assert!(copyback.simulated_seconds < normal.simulated_seconds);
}
