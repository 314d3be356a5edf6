//! Flow-fair scheduling evens out slowdowns between a light flow and an aggressor.

mod common;

use common::{run, SMALL_DEVICE};

fn two_flows(scheduling: &str) -> String {
    format!(
        "{}\n[controller]\nscheduling = \"{scheduling}\"\n[precondition]\nmode = \"fill\"\noccupancy = 1.0\n\
         [[flows]]\nname = \"light\"\nread_fraction = 1.0\nqueue_depth = 2\nduration = \"100ms\"\nalignment = \"512B\"\n\
         [[flows]]\nname = \"heavy\"\nread_fraction = 1.0\nqueue_depth = 64\nduration = \"100ms\"\nalignment = \"512B\"\n",
        SMALL_DEVICE.replace("over_provisioning = 0.2", "over_provisioning = 0.2\nideal_mapping = true")
    )
}

#[test]
fn the_light_flow_is_served_ahead_of_the_aggressor() {
    let ooo = run(&two_flows("out-of-order"));
    let fair = run(&two_flows("flow-fair"));
    let (o, f) = (ooo.flows[0].reads.latency_us.mean, fair.flows[0].reads.latency_us.mean);
    eprintln!("light {f:.0} vs {o:.0} us; heavy {:.0} vs {:.0} IOPS", fair.flows[1].iops, ooo.flows[1].iops);
    assert!(f < o * 0.6, "light flow: {f:.0} us flow-fair vs {o:.0} us out of order");
    // The aggressor pays a little, not a lot: the device does as much work.
    let (oh, fh) = (ooo.flows[1].iops, fair.flows[1].iops);
    assert!(fh > oh * 0.85, "heavy flow: {fh:.0} vs {oh:.0} IOPS");
}
