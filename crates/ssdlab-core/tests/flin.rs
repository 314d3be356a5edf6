//! FLIN (`controller.scheduling = "flin"`, Tavakkol et al., ISCA 2018): its three stages, each
//! against the schedulers without it. `validation/flin.py` runs the paper's Table 3 drive.

mod common;

use common::{run, SMALL_DEVICE};

/// A small drive (8 dies), filled, whole map in DRAM, with `flows` (TOML) and `scheduling`.
fn device(scheduling: &str, flows: &str) -> String {
    format!(
        "{}\n[controller]\nscheduling = \"{scheduling}\"\n[precondition]\nmode = \"fill\"\noccupancy = 1.0\n{flows}",
        SMALL_DEVICE.replace("over_provisioning = 0.2", "over_provisioning = 0.2\nideal_mapping = true")
    )
}

fn reader(name: &str, qd: u32, extra: &str) -> String {
    format!(
        "[[flows]]\nname = \"{name}\"\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\n\
         queue_depth = {qd}\nduration = \"100ms\"\nseed = {qd}\n{extra}\n"
    )
}

/// Fairness F = min / max slowdown of the flows of `flows`, each slowdown its mean latency
/// shared over its mean latency alone (same seed, same requests).
fn fairness(scheduling: &str, flows: &[String]) -> f64 {
    fairness_with(scheduling, "", flows)
}

/// [`fairness`] with `tables` (TOML) in every run, shared and alone.
fn fairness_with(scheduling: &str, tables: &str, flows: &[String]) -> f64 {
    let shared = run(&device(scheduling, &format!("{tables}\n{}", flows.concat())));
    let slowdowns: Vec<f64> = flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let alone = run(&device(scheduling, &format!("{tables}\n{f}")));
            shared.flows[i].reads.latency_us.mean / alone.flows[0].reads.latency_us.mean
        })
        .collect();
    let (lo, hi) = slowdowns.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    eprintln!("{scheduling}: slowdowns {slowdowns:.2?}, fairness {:.3}", lo / hi);
    lo / hi
}

#[test]
fn fairness_aware_insertion_evens_out_slowdowns() {
    let flows = [reader("light", 2, ""), reader("heavy", 64, "")];
    let ooo = fairness("out-of-order", &flows);
    let flin = fairness("flin", &flows);
    // Measured: slowdowns 17.2 and 1.03 out of order (F 0.06), 1.71 and 1.38 with FLIN (F 0.81).
    assert!(flin > 0.5 && flin > ooo * 3.0, "fairness: FLIN {flin:.3}, out of order {ooo:.3}");
}

#[test]
fn priority_classes_take_weighted_turns() {
    // An urgent light flow beside a low-priority aggressor: FLIN (like the priority scheduler)
    // serves the urgent one first; the schedulers without priorities do not.
    let flows = reader("light", 2, "priority = \"urgent\"") + &reader("heavy", 64, "priority = \"low\"");
    let light = |s: &str| run(&device(s, &flows)).flows[0].reads.latency_us.mean;
    let (ooo, flin) = (light("out-of-order"), light("flin"));
    assert!(flin < ooo * 0.7, "urgent light flow: FLIN {flin:.0} us, out of order {ooo:.0} us");
    // High and low share by their weights (host.wrr_weights: 4 to 1 by default) rather than
    // low waiting for high to run dry.
    let flows = reader("high", 32, "priority = \"high\"") + &reader("low", 32, "priority = \"low\"");
    let (strict, flin) = (run(&device("priority", &flows)), run(&device("flin", &flows)));
    let share = |r: &ssdlab_core::Results| r.flows[1].iops / (r.flows[0].iops + r.flows[1].iops);
    eprintln!("low's share: priority {:.3}, FLIN {:.3}", share(&strict), share(&flin));
    // Measured: 3.2 % under strict priority, 20.8 % under FLIN (1 / (4 + 1) = 20 %).
    assert!(
        share(&strict) < 0.1 && (0.15..0.25).contains(&share(&flin)),
        "low: {:.3} vs {:.3}",
        share(&flin),
        share(&strict)
    );
}

#[test]
fn writes_that_waited_long_go_before_reads() {
    // A heavy reader beside a writer straight to flash: out of order, every read passes every
    // write on its die; FLIN lets a write go once it has waited longer, for its service time.
    let flows = reader("reader", 32, "")
        + "[[flows]]\nname = \"writer\"\nread_fraction = 0.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\n\
           queue_depth = 4\nduration = \"100ms\"\n";
    let toml = |s: &str| device(s, &flows).replace("occupancy = 1.0", "occupancy = 0.6");
    let (ooo, flin) = (run(&toml("out-of-order")), run(&toml("flin")));
    let write = |r: &ssdlab_core::Results| r.flows[1].writes.latency_us.p99;
    eprintln!("writer p99: out of order {:.0} us, FLIN {:.0} us", write(&ooo), write(&flin));
    // Measured: 56.9 ms out of order, 17.6 ms with FLIN.
    assert!(write(&flin) < write(&ooo) * 0.5, "writer p99: FLIN {:.0}, out of order {:.0}", write(&flin), write(&ooo));
}

#[test]
fn flin_runs_are_deterministic() {
    let flows = reader("light", 2, "") + &reader("heavy", 16, "priority = \"high\"");
    let a = run(&device("flin", &flows));
    let b = run(&device("flin", &flows));
    assert_eq!(a.flows[0].reads.latency_us, b.flows[0].reads.latency_us);
    assert_eq!(a.flows[1].iops, b.flows[1].iops);
}

#[test]
fn a_misspelt_scheduler_is_refused_with_the_choices() {
    let err = ssdlab_core::Config::from_toml_str(&device("flim", &reader("r", 1, ""))).unwrap_err().to_string();
    assert!(err.contains("controller.scheduling") && err.contains("flin"), "{err}");
}

#[test]
fn flin_parameters_are_keys_of_their_own() {
    let flows = [reader("light", 2, ""), reader("heavy", 64, "")];
    let with = |keys: &str| fairness_with("flin", &format!("[controller.flin]\n{keys}"), &flows);
    let default = with("");
    // Every flow low-intensity: only the fairest-place insertion is left.
    let all_low = with("alpha_read = \"1TiB\"");
    // Never below the threshold: no flow is moved to the front of the high-intensity part.
    let no_rescue = with("fairness_threshold = 0.000001");
    eprintln!("F: default {default:.3}, all low-intensity {all_low:.3}, no rescue {no_rescue:.3}");
    // Measured: 0.806 with the defaults, 0.676 with every flow low-intensity, 0.645 without
    // moving the most slowed-down flow forward: both parts of stage 1 count.
    assert!(default > all_low && default > no_rescue, "{default:.3} vs {all_low:.3}, {no_rescue:.3}");
    let err = |keys: &str, scheduling: &str| {
        let toml = device(scheduling, &format!("[controller.flin]\n{keys}\n{}", reader("r", 1, "")));
        ssdlab_core::Config::from_toml_str(&toml).unwrap_err().to_string()
    };
    let e = err("", "priority");
    assert!(e.contains("controller.flin") && e.contains("\"flin\" only"), "{e}");
    let e = err("fairness_threshold = 1.5", "flin");
    assert!(e.contains("controller.flin.fairness_threshold"), "{e}");
    let e = err("alpha_read = \"0B\"", "flin");
    assert!(e.contains("controller.flin.alpha_read"), "{e}");
    let e = err("epoch = \"0ms\"", "flin");
    assert!(e.contains("controller.flin.epoch"), "{e}");
}
