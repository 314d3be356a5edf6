//! The latency breakdown: its steps add up to the mean response time, and each step holds the
//! time the model spends there.

mod common;

use common::{example, run, with_flows, SMALL_DEVICE};

#[test]
fn steps_add_up_to_the_mean_response_time_per_flow_and_op() {
    let results = run(&format!(
        "{SMALL_DEVICE}\n[controller]\ndispatch_read = \"3us\"\ndispatch_write = \"5us\"\n[precondition]\nmode = \"fill\"\noccupancy = 0.9\nlayout = \"spread\"\n\
         [[flows]]\nread_fraction = 0.5\nrequest_size = {{ mean = \"12KiB\", stdev = \"6KiB\" }}\nqueue_depth = 16\nrequests = 4000\n\
         [[flows]]\nread_fraction = 1.0\nrate = \"5k/s\"\nrequests = 2000\n"
    ));
    for flow in &results.flows {
        for op in [&flow.reads, &flow.writes] {
            if op.count == 0 {
                continue;
            }
            let total = op.latency_breakdown_us.total();
            assert!(
                (total - op.latency_us.mean).abs() < 1e-6 * op.latency_us.mean,
                "{}: {total} vs {}",
                flow.name,
                op.latency_us.mean
            );
        }
        // Over the ops that ran (an op without requests has an undefined, NaN, mean).
        let ran: Vec<_> = [&flow.reads, &flow.writes].into_iter().filter(|op| op.count > 0).collect();
        let all = ran.iter().map(|op| op.latency_us.mean * op.count as f64).sum::<f64>()
            / ran.iter().map(|op| op.count).sum::<u64>() as f64;
        assert!((flow.latency_breakdown_us.total() - all).abs() < 1e-6 * all);
    }
    // Busy device: requests wait for dies, and GC shows up as queue wait for writes.
    let writes = &results.flows[0].writes.latency_breakdown_us;
    assert!(writes.get("chip_queue_wait").unwrap() > 0.0);
    assert!(writes.get("pcie_data").unwrap() > 0.0, "write data crosses PCIe before the flash work");
}

#[test]
fn an_idle_x25m_read_spends_its_time_where_the_analytical_model_says() {
    let flows = "[[flows]]\nread_fraction = 1.0\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nworking_set = 0.4\nqueue_depth = 1\nrequests = 100\n";
    let results = run(&with_flows(&example("intel-x25m.toml"), flows));
    let b = &results.flows[0].reads.latency_breakdown_us;
    let close = |step: &str, us: f64| {
        let v = b.get(step).unwrap();
        assert!((v - us).abs() < 0.01, "{step}: {v} us, expected {us} us");
    };
    close("firmware", 16.0); // R_ch, the dispatch time
    close("cell_operation", 140.0); // R_cell
    close("channel_data", 81.92); // 4 KiB over a 1-byte bus at 50 MT/s
    close("command_address", 0.14); // 7 cycles at 20 ns
    close("sq_wait", 0.0);
    close("chip_queue_wait", 0.0);
    assert!(b.get("pcie_data").unwrap() > 0.4 && b.get("completion").unwrap() > 0.0);
}
