//! Program/erase suspension: reads stop waiting for whole programs and erases.

mod common;

use common::{run, SMALL_DEVICE};

fn mixed(suspension: &str) -> String {
    format!(
        "{}\n[precondition]\nmode = \"fill\"\noccupancy = 1.0\nlayout = \"spread\"\n\
         [[flows]]\nname = \"reader\"\nread_fraction = 1.0\nqueue_depth = 1\nduration = \"200ms\"\n\
         [[flows]]\nname = \"writer\"\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 8\nduration = \"200ms\"\n",
        SMALL_DEVICE.replace("page_size = \"4KiB\"", &format!("page_size = \"4KiB\"\nsuspension = \"{suspension}\""))
    )
}

#[test]
fn suspending_programs_and_erases_shortens_reads_behind_them() {
    let none = run(&mixed("none"));
    let both = run(&mixed("program-erase"));
    let (n, b) = (&none.flows[0].reads.latency_us, &both.flows[0].reads.latency_us);
    assert_eq!(none.device.flash.suspensions, 0);
    assert!(both.device.flash.suspensions > 100, "{}", both.device.flash.suspensions);
    assert!(b.mean < n.mean * 0.8, "mean read: {:.0} us with suspension, {:.0} us without", b.mean, n.mean);
    assert!(b.p99 < n.p99, "p99 read: {:.0} vs {:.0} us", b.p99, n.p99);
}

#[test]
fn erase_only_suspension_leaves_programs_alone() {
    let erase = run(&mixed("erase"));
    let both = run(&mixed("program-erase"));
    assert!(erase.device.flash.suspensions < both.device.flash.suspensions);
}

#[test]
fn a_scheduler_that_never_suspends_runs_as_without_suspension() {
    // MQSim's scheduler never suspends whatever the chips support (`compat = "mqsim"`).
    let never = run(&(mixed("program-erase") + "[controller]\nsuspend_for_reads = false\n"));
    let none = run(&mixed("none"));
    assert_eq!(never.device.flash.suspensions, 0);
    assert_eq!(never.flows[0].reads.latency_us.mean, none.flows[0].reads.latency_us.mean);
}
