//! Page-type layouts (`flash.page_type_layout`): which page of a block has which page type, and
//! that the layout changes exactly the cell time of the requests, nothing else.

mod common;

use common::{run, SMALL_DEVICE};
use ssdlab_core::flash::timing::FlashTiming;
use ssdlab_core::{Config, ConfigError};

const FLOW: &str = "[[flows]]\nread_fraction = 1.0\nqueue_depth = 1\nrequests = 10\n";

/// The small device with `extra` lines at the top of its `[flash]` table, and one flow.
fn config(extra: &str) -> Result<Config, ConfigError> {
    config_of(SMALL_DEVICE, extra)
}

fn config_of(device: &str, extra: &str) -> Result<Config, ConfigError> {
    Config::from_toml_str(&format!("{}\n{FLOW}", device.replace("[flash]\n", &format!("[flash]\n{extra}\n"))))
}

/// The page types of one block (0 = LSB, 1 = CSB or MLC's MSB, 2 = TLC's MSB) on the small
/// device with `extra` flash settings.
fn block_types(extra: &str) -> Vec<usize> {
    let config = config(extra).unwrap_or_else(|e| panic!("config rejected: {e}"));
    let timing = FlashTiming::new(&config);
    (0..config.flash.pages_per_block).map(|p| timing.page_type(p)).collect()
}

fn counts(types: &[usize]) -> [usize; 3] {
    let mut c = [0; 3];
    for &t in types {
        c[t] += 1;
    }
    c
}

#[test]
fn slc_pages_are_all_lsb_under_both_layouts() {
    for layout in ["round-robin", "address"] {
        let types = block_types(&format!("technology = \"SLC\"\npage_type_layout = \"{layout}\""));
        assert!(types.iter().all(|&t| t == 0), "{layout}: {types:?}");
    }
}

#[test]
fn round_robin_cycles_through_the_wordline_and_is_the_default() {
    let tlc = block_types("technology = \"TLC\"");
    assert_eq!(&tlc[..7], &[0, 1, 2, 0, 1, 2, 0]);
    assert_eq!(tlc, block_types("technology = \"TLC\"\npage_type_layout = \"round-robin\""));
    let mlc = block_types("technology = \"MLC\"");
    assert_eq!(&mlc[..5], &[0, 1, 0, 1, 0]);
    assert_eq!(counts(&tlc), [22, 21, 21]);
    assert_eq!(counts(&mlc), [32, 32, 0]);
}

#[test]
fn address_layout_has_meta_pages_then_plane_wide_groups() {
    // 2 planes per die: pages 0-4 LSB, 5-7 CSB, then pairs LSB, CSB, MSB, LSB, ...
    let tlc = block_types("technology = \"TLC\"\npage_type_layout = \"address\"");
    assert_eq!(&tlc[..20], &[0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2]);
    // 56 non-meta pages = 28 pairs: 10 LSB, 9 CSB, 9 MSB; plus 5 LSB and 3 CSB meta pages.
    assert_eq!(counts(&tlc), [25, 21, 18]);
    // MLC: meta pages 0-4 LSB, 5-7 MSB; then pairs LSB, MSB.
    let mlc = block_types("technology = \"MLC\"\npage_type_layout = \"address\"");
    assert_eq!(&mlc[..16], &[0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1]);
    assert_eq!(counts(&mlc), [33, 31, 0]);
    // n_plane is the planes per die: with 4 planes the groups are 4 pages long.
    let four = SMALL_DEVICE.replace("planes_per_die = 2", "planes_per_die = 4");
    let config = config_of(&four, "technology = \"TLC\"\npage_type_layout = \"address\"").unwrap();
    let timing = FlashTiming::new(&config);
    let types: Vec<usize> = (8..24).map(|p| timing.page_type(p)).collect();
    assert_eq!(types, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0]);
}

#[test]
fn address_layout_needs_more_than_the_meta_pages() {
    let small_blocks = SMALL_DEVICE.replace("pages_per_block = 64", "pages_per_block = 8");
    let e = config_of(&small_blocks, "technology = \"TLC\"\npage_type_layout = \"address\"").unwrap_err();
    assert_eq!(e.path, "flash.page_type_layout", "{e}");
    assert!(e.reason.contains("meta pages"), "{e}");
    let e = config("page_type_layout = \"by-address\"").unwrap_err();
    assert_eq!(e.path, "flash.page_type_layout", "{e}");
    assert!(e.reason.contains("unknown variant"), "{e}");
}

const LSB_US: f64 = 500.0;
const CSB_US: f64 = 2000.0;
const MSB_US: f64 = 5000.0;
const LSB_READ_US: f64 = 50.0;
const CSB_READ_US: f64 = 70.0;
const MSB_READ_US: f64 = 100.0;

/// QD 1 over whole blocks of every plane: 1024 sequential page writes (2 blocks of each of the 8
/// planes), or reads of the same 1024 pages after a packed fill. Returns the flow's mean latency
/// and mean cell time in microseconds.
fn qd1_whole_blocks(layout: Option<&str>, reads: bool) -> (f64, f64) {
    let layout = layout.map_or(String::new(), |l| format!("page_type_layout = \"{l}\"\n"));
    let timing = format!(
        "[flash.timing]\n\
         read = {{ lsb = \"{LSB_READ_US}us\", csb = \"{CSB_READ_US}us\", msb = \"{MSB_READ_US}us\" }}\n\
         program = {{ lsb = \"{LSB_US}us\", csb = \"{CSB_US}us\", msb = \"{MSB_US}us\" }}\n"
    );
    let device = SMALL_DEVICE
        .replace("[flash]\n", &format!("[flash]\ntechnology = \"TLC\"\n{layout}"))
        .replace("[ftl]\n", &format!("{timing}[ftl]\nideal_mapping = true\n"));
    let (precondition, read_fraction) =
        if reads { ("mode = \"fill\"\noccupancy = 1.0\nlayout = \"packed\"", 1.0) } else { ("mode = \"none\"", 0.0) };
    let text = format!(
        "{device}\n[precondition]\n{precondition}\n[[flows]]\nread_fraction = {read_fraction}\nrequest_size = \"4KiB\"\n\
         alignment = \"4KiB\"\naddress = \"sequential\"\nqueue_depth = 1\nrequests = 1024\n"
    );
    let results = run(&text);
    let op = if reads { &results.flows[0].reads } else { &results.flows[0].writes };
    assert_eq!(op.count, 1024);
    (op.latency_us.mean, op.latency_breakdown_us.get("cell_operation").unwrap())
}

#[test]
fn address_layout_changes_mean_latency_by_the_page_type_mix() {
    // Per block: round robin 22 LSB, 21 CSB, 21 MSB; address 25 LSB, 21 CSB, 18 MSB. Only the cell
    // time differs: at QD 1 nothing queues, so the mean latency moves by the same amount.
    let mean = |c: [f64; 3], lat: [f64; 3]| (c[0] * lat[0] + c[1] * lat[1] + c[2] * lat[2]) / 64.0;
    let (rr, addr) = ([22.0, 21.0, 21.0], [25.0, 21.0, 18.0]);
    for (reads, lat) in [(false, [LSB_US, CSB_US, MSB_US]), (true, [LSB_READ_US, CSB_READ_US, MSB_READ_US])] {
        let (rr_latency, rr_cell) = qd1_whole_blocks(None, reads);
        let (addr_latency, addr_cell) = qd1_whole_blocks(Some("address"), reads);
        let what = if reads { "reads" } else { "writes" };
        assert!((rr_cell - mean(rr, lat)).abs() < 1e-6, "{what}: round-robin cell time {rr_cell} us");
        assert!((addr_cell - mean(addr, lat)).abs() < 1e-6, "{what}: address cell time {addr_cell} us");
        let expected_shift = mean(addr, lat) - mean(rr, lat);
        assert!(expected_shift < 0.0, "address layout has more LSB and fewer MSB pages");
        let shift = addr_latency - rr_latency;
        assert!(
            (shift - expected_shift).abs() < 1e-3,
            "{what}: mean latency moved by {shift} us, the page-type mix says {expected_shift} us"
        );
    }
}

#[test]
fn default_layout_is_round_robin_in_the_results() {
    let (default_latency, _) = qd1_whole_blocks(None, false);
    let (rr_latency, _) = qd1_whole_blocks(Some("round-robin"), false);
    assert_eq!(default_latency, rr_latency);
}

/// QLC (issue 17): four page types per wordline (lower, centre, upper, top), each with its own
/// read and program time; a latency table for QLC needs all four, and only QLC takes `tsb`.
#[test]
fn qlc_has_four_page_types_with_their_own_latencies() {
    let timing_table = "[flash.timing]\nread = { lsb = \"60us\", csb = \"80us\", msb = \"100us\", tsb = \"140us\" }\n\
                        program = { lsb = \"500us\", csb = \"1500us\", msb = \"2500us\", tsb = \"4000us\" }\n";
    let device = |technology: &str, table: &str| {
        format!("{}\n{table}", SMALL_DEVICE.replace("[flash]\n", &format!("[flash]\ntechnology = \"{technology}\"\n")))
    };
    let qlc = config_of(&device("QLC", timing_table), "").unwrap_or_else(|e| panic!("config rejected: {e}"));
    let timing = FlashTiming::new(&qlc);
    let types: Vec<usize> = (0..8).map(|p| timing.page_type(p)).collect();
    assert_eq!(types, [0, 1, 2, 3, 0, 1, 2, 3], "round robin over the four pages of a wordline");
    let us = 1_000_000;
    assert_eq!((0..4).map(|p| timing.read_ps(p) / us).collect::<Vec<_>>(), [60, 80, 100, 140]);
    assert_eq!((0..4).map(|p| timing.program_ps(p) / us).collect::<Vec<_>>(), [500, 1500, 2500, 4000]);
    // Writing whole blocks one page at a time takes the mean of the four programs.
    let written = run(&format!(
        "{}\n[[flows]]\nread_fraction = 0.0\naddress = \"sequential\"\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\nqueue_depth = 1\nrequests = 512\n",
        device("QLC", timing_table)
    ));
    let cell = written.flows[0].writes.latency_breakdown_us.get("cell_operation").unwrap();
    assert!((cell - 2125.0).abs() < 1.0, "mean program {cell:.1} us, the four types' mean 2125");
    // Shapes that do not fit the technology are refused, naming the page type.
    let missing = config_of(&device("QLC", &timing_table.replace(", tsb = \"140us\"", "")), "").unwrap_err();
    assert!(missing.to_string().contains("flash.timing.read.tsb"), "{missing}");
    let tlc = config_of(&device("TLC", timing_table), "").unwrap_err();
    assert!(tlc.to_string().contains("tsb") && tlc.to_string().contains("only in QLC"), "{tlc}");
}
