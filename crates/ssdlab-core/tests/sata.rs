//! The SATA interface: one 32-command queue and a half-duplex link with a per-message delay.

mod common;

use common::{run, SMALL_DEVICE};

const READS: &str = "[[flows]]\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 64\nrequests = 3000\n";

fn device(host: &str) -> String {
    format!("{SMALL_DEVICE}\n[host]\n{host}\n[precondition]\nmode = \"fill\"\noccupancy = 1.0\n")
        .replace("over_provisioning = 0.2", "over_provisioning = 0.2\nideal_mapping = true")
}

#[test]
fn sata_messages_pay_the_processing_delay() {
    let sata = run(&format!("{}\n{READS}", device("interface = \"sata\"\nsata_processing_delay = \"20us\"")));
    let nvme = run(&format!("{}\n{READS}", device("interface = \"nvme\"")));
    // Three messages per read (command, data, status) at 20 us each bound SATA below 1 / 60 us.
    assert!(sata.flows[0].iops < 1e6 / 60.0, "{}", sata.flows[0].iops);
    assert!(nvme.flows[0].iops > sata.flows[0].iops * 2.0);
    let b = &sata.flows[0].reads.latency_breakdown_us;
    assert!(b.get("command_transfer").unwrap() >= 20.0 && b.get("completion").unwrap() >= 20.0);
}

#[test]
fn sata_holds_at_most_32_commands() {
    let r = run(&format!("{}\n{READS}", device("interface = \"sata\"\nsata_processing_delay = \"0us\"")));
    // 64 outstanding, 32 inside the device: the rest wait in the host queue.
    assert!(r.flows[0].reads.latency_breakdown_us.get("sq_wait").unwrap() > 50.0);
    let nvme = run(&format!("{}\n{READS}", device("interface = \"nvme\"")));
    assert!(nvme.flows[0].reads.latency_breakdown_us.get("sq_wait").unwrap() < 1.0);
}

#[test]
fn sata_serves_flows_in_arrival_order() {
    // Two identical flows share the one queue evenly.
    let flows = "[[flows]]\nread_fraction = 1.0\nqueue_depth = 32\nduration = \"50ms\"\n[[flows]]\nread_fraction = 1.0\nqueue_depth = 32\nduration = \"50ms\"\n";
    let r = run(&format!("{}\n{flows}", device("interface = \"sata\"\nsata_processing_delay = \"1us\"")));
    let (a, b) = (r.flows[0].reads.count as f64, r.flows[1].reads.count as f64);
    assert!((a / b - 1.0).abs() < 0.05, "{a} vs {b}");
}
