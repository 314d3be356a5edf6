//! Host arbitration and transaction scheduling: who gets served first when flows compete.

mod common;

use common::run;

fn device() -> String {
    format!(
        r#"
seed = 9
{flash}
[ftl]
over_provisioning = 0.2
ideal_mapping = true
[precondition]
mode = "fill"
occupancy = 1.0
"#,
        flash = common::flash([2, 1, 2, 1, 64, 64], "4KiB")
    )
}

/// Two closed-loop readers that compete for the same simulated interval.
fn two_readers(first: &str, second: &str, depth: u32) -> String {
    format!(
        "[[flows]]\nname = \"a\"\npriority = \"{first}\"\nread_fraction = 1.0\nqueue_depth = {depth}\nduration = \"100ms\"\n\
         [[flows]]\nname = \"b\"\npriority = \"{second}\"\nread_fraction = 1.0\nqueue_depth = {depth}\nduration = \"100ms\"\n"
    )
}

/// How many requests flow a completed per request of flow b.
fn share(r: &ssdlab_core::Results) -> f64 {
    r.flows[0].reads.count as f64 / r.flows[1].reads.count.max(1) as f64
}

#[test]
fn weighted_round_robin_favours_the_high_priority_queue() {
    let host = "[host]\nmax_requests_in_device = 4\narbitration = \"weighted-round-robin\"\nwrr_weights = { high = 8, medium = 2, low = 1 }\n";
    let wrr = run(&format!("{}\n{host}\n{}", device(), two_readers("high", "low", 32)));
    let rr = run(&format!("{}\n[host]\nmax_requests_in_device = 4\n{}", device(), two_readers("high", "low", 32)));
    eprintln!(
        "wrr share {:.2} (iops {:.0}/{:.0}), rr share {:.2}",
        share(&wrr),
        wrr.flows[0].iops,
        wrr.flows[1].iops,
        share(&rr)
    );
    // Weights 8 : 1 for the device's command slots.
    assert!(share(&wrr) > 5.0, "high completed {:.2}x what low did", share(&wrr));
    assert!((share(&rr) - 1.0).abs() < 0.1, "round robin treats them alike: {:.2}", share(&rr));
}

#[test]
fn priority_scheduling_serves_the_urgent_flow_first_at_the_dies() {
    let prio =
        run(&format!("{}\n[controller]\nscheduling = \"priority\"\n{}", device(), two_readers("urgent", "low", 32)));
    let ooo = run(&format!(
        "{}\n[controller]\nscheduling = \"out-of-order\"\n{}",
        device(),
        two_readers("urgent", "low", 32)
    ));
    let (u, l) = (prio.flows[0].reads.latency_us.mean, prio.flows[1].reads.latency_us.mean);
    assert!(u < l * 0.5, "urgent {u:.0} us vs low {l:.0} us");
    assert!(share(&prio) > 2.0, "urgent completed {:.2}x what low did", share(&prio));
    let (u, l) = (ooo.flows[0].reads.latency_us.mean, ooo.flows[1].reads.latency_us.mean);
    assert!((u / l - 1.0).abs() < 0.2, "out of order ignores priority: {u:.0} vs {l:.0} us");
}

#[test]
fn fifo_scheduling_loses_die_parallelism_to_head_of_line_blocking() {
    let flow = "[[flows]]\nread_fraction = 1.0\nqueue_depth = 32\nrequests = 4000\n";
    let fifo = run(&format!("{}\n[controller]\nscheduling = \"fifo\"\n{flow}", device()));
    let ooo = run(&format!("{}\n[controller]\nscheduling = \"out-of-order\"\n{flow}", device()));
    assert!(
        fifo.flows[0].iops < ooo.flows[0].iops * 0.9,
        "FIFO {:.0} vs out-of-order {:.0} IOPS",
        fifo.flows[0].iops,
        ooo.flows[0].iops
    );
}
