//! `ftl.map_addresses`: the mapping tables in 3-byte in-plane addresses answer exactly as the
//! 4-byte global ones do, so every result is the same (only memory differs), through GC, the
//! cached mapping table, trims, wear leveling, the SLC cache, FDP and steady-state
//! preconditioning; placements the in-plane form cannot hold are refused naming the key.

mod common;

use ssdlab_core::Simulation;

/// The results document of `text` with `ftl.map_addresses = addresses` added, less wall times
/// and the config's echo of the key.
fn results(text: &str, addresses: &str) -> serde_json::Value {
    let text = if text.contains("[ftl]\n") {
        text.replacen("[ftl]\n", &format!("[ftl]\nmap_addresses = \"{addresses}\"\n"), 1)
    } else {
        format!("{text}\n[ftl]\nmap_addresses = \"{addresses}\"\n")
    };
    let mut sim = Simulation::from_toml_str(&text, std::path::Path::new("."))
        .unwrap_or_else(|e| panic!("{addresses}: {e}\n{text}"));
    let r = sim.run().unwrap_or_else(|e| panic!("{addresses}: {e}"));
    sim.check_invariants().unwrap_or_else(|e| panic!("{addresses}: {e}"));
    let mut value = serde_json::to_value(&r).unwrap();
    strip(&mut value);
    value
}

/// Takes out what may differ: wall times and the echoed key.
fn strip(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.retain(|k, _| !k.contains("wall") && k != "map_addresses");
            map.values_mut().for_each(strip);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}

/// Runs `text` in both address forms, checks the results are the same and returns them.
fn assert_same(name: &str, text: &str) -> serde_json::Value {
    let global = results(text, "global");
    let in_plane = results(text, "in-plane");
    assert!(global == in_plane, "{name}: results differ between global and in-plane addresses");
    global
}

/// A drive of 6 planes (not a power of two) with 40 blocks of 24 pages (960 pages per plane,
/// not one either), so the in-plane form divides rather than shifts.
const ODD_DEVICE: &str = "[flash]\nchannels = 3\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 40\npages_per_block = 24\npage_size = \"4KiB\"\n";

/// A fio (version 2) log of `n` writes, reads and trims at pseudo-random 4 KiB-aligned
/// offsets below `span` bytes.
fn fio_log(n: u32, span: u64) -> String {
    let mut log = String::from("fio version 2 iolog\n/dev/x add\n/dev/x open\n");
    let mut x = 12345u64;
    for _ in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let offset = (x >> 20) % (span / 4096) * 4096;
        let (op, bytes) = match (x >> 8) % 10 {
            0 => ("trim", 16384),
            1..=3 => ("read", 8192),
            _ => ("write", 4096 * (1 + (x >> 12) % 3)),
        };
        log.push_str(&format!("/dev/x {op} {offset} {bytes}\n"));
    }
    log + "/dev/x close\n"
}

#[test]
fn gc_with_the_cached_mapping_table_trims_and_data_checks() {
    let dir = std::env::temp_dir().join(format!("ssdlab-map-addresses-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("mixed.log");
    // 6 planes x 960 pages of 4 KiB; 80 % of the user space is addressed.
    std::fs::write(&trace, fio_log(12_000, 6 * 960 * 4096 * 8 / 10 * 85 / 100)).unwrap();
    let text = format!(
        "seed = 5\n{ODD_DEVICE}[ftl]\nover_provisioning = 0.2\ngc_threshold = 0.05\n[cache]\ncapacity = \"64KiB\"\n\
         [precondition]\nmode = \"fill\"\noccupancy = 0.9\nlayout = \"spread\"\n[data]\nemulate = true\n\
         [[flows]]\nkind = \"trace\"\npath = \"{}\"\nformat = \"fio\"\narrival_gap = \"20us\"\n\
         [[flows]]\nread_fraction = 0.4\nrequest_size = {{ mean = \"8KiB\", stdev = \"6KiB\" }}\nqueue_depth = 8\nrequests = 6000\n",
        trace.display()
    );
    let r = assert_same("gc + cmt + trims + data", &text);
    assert!(r["device"]["gc"]["blocks_erased"].as_u64().unwrap() > 100, "GC ran: {}", r["device"]["gc"]);
    assert!(r["data"]["verified_sectors"].as_u64().unwrap() > 10_000, "{}", r["data"]);
    assert_eq!(r["data"]["mismatched_sectors"], 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn steady_state_and_wear_leveling() {
    let text = format!(
        "seed = 9\n{ODD_DEVICE}[ftl]\nideal_mapping = true\nover_provisioning = 0.2\nstatic_wear_leveling = true\nstatic_wear_leveling_threshold = 3\ndynamic_wear_leveling = true\n\
         [precondition]\nmode = \"steady\"\noccupancy = 0.8\n\
         [[flows]]\nread_fraction = 0.2\nrequest_size = \"4KiB\"\nalignment = \"4KiB\"\naddress = \"hotcold\"\nhot_fraction = 0.1\nhot_traffic = 0.9\nqueue_depth = 16\nrequests = 8000\n"
    );
    let r = assert_same("steady + wear leveling", &text);
    assert!(r["device"]["gc"]["blocks_erased"].as_u64().unwrap() > 100, "GC ran: {}", r["device"]["gc"]);
}

#[test]
fn packed_fill_with_translation_pages_and_two_flows() {
    assert_same("feature mix", &common::fixture("feature_mix.toml"));
    assert_same("gc pressure", &common::fixture("gc_pressure.toml"));
    let filled = common::fixture("feature_mix.toml").replace("mode = \"none\"", "mode = \"fill\"\noccupancy = 0.7");
    assert_same("feature mix filled", &filled);
}

#[test]
fn slc_cache_and_fdp() {
    let slc = format!(
        "seed = 2\n{ODD_DEVICE}technology = \"tlc\"\n[flash.slc_cache]\nblocks_per_plane = 4\n[ftl]\nideal_mapping = true\nover_provisioning = 0.25\n\
         [precondition]\nmode = \"fill\"\noccupancy = 0.5\n[[flows]]\nread_fraction = 0.3\nrequest_size = \"16KiB\"\nqueue_depth = 8\nrequests = 4000\n"
    );
    assert_same("slc cache", &slc);
    let fdp = format!(
        "seed = 4\n{ODD_DEVICE}[ftl]\nideal_mapping = true\nover_provisioning = 0.2\n[ftl.fdp]\nreclaim_unit_handles = 2\n\
         [precondition]\nmode = \"fill\"\noccupancy = 0.6\n\
         [[flows]]\nplacement_handle = 0\nrequest_size = \"4KiB\"\naddress = \"uniform\"\nworking_set = 0.3\nqueue_depth = 4\nrequests = 3000\n\
         [[flows]]\nplacement_handle = 1\nrequest_size = \"4KiB\"\naddress = \"uniform\"\nworking_set_start = 0.5\nworking_set = 0.3\nqueue_depth = 4\nrequests = 3000\n"
    );
    assert_same("fdp", &fdp);
}

/// The configuration error of `text`.
fn refusal(text: &str) -> String {
    match Simulation::from_toml_str(text, std::path::Path::new(".")) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn placements_in_plane_addresses_cannot_hold_are_refused_naming_the_key() {
    let flow = "[[flows]]\nrequest_size = \"4KiB\"\nqueue_depth = 1\nrequests = 10\n";
    let cases = [
        (
            "[ftl]\nover_provisioning = 0.2\nmap_addresses = \"in-plane\"\nmapping = \"block\"\n",
            "ftl.mapping = \"page\"",
        ),
        (
            "[ftl]\nover_provisioning = 0.2\nmap_addresses = \"in-plane\"\naddress_domains = \"per-flow\"\n",
            "address_domains",
        ),
        ("[ftl]\nover_provisioning = 0.2\nmap_addresses = \"in-plane\"\n[zns]\nzone_size = \"1MiB\"\n", "[zns]"),
    ];
    for (keys, named) in cases {
        let e = refusal(&format!("{ODD_DEVICE}{keys}{flow}"));
        assert!(e.starts_with("ftl.map_addresses:") && e.contains(named), "{keys}: {e}");
    }
    let e = refusal(&format!(
        "{ODD_DEVICE}[ftl]\nover_provisioning = 0.2\nmap_addresses = \"in-plane\"\n{flow}channels = [1]\n"
    ));
    assert!(e.starts_with("ftl.map_addresses:") && e.contains("flows[0].channels"), "{e}");
    let e = refusal(&format!("{ODD_DEVICE}[ftl]\nover_provisioning = 0.2\nmap_addresses = \"in-plain\"\n{flow}"));
    assert!(e.contains("map_addresses") && e.contains("in-plane"), "{e}");
    // A plane of 2^24 pages does not fit 24 bits.
    let big = ODD_DEVICE
        .replace("blocks_per_plane = 40", "blocks_per_plane = 65536")
        .replace("pages_per_block = 24", "pages_per_block = 256");
    let e = refusal(&format!(
        "{big}[ftl]\nover_provisioning = 0.2\nmap_addresses = \"in-plane\"\n[precondition]\nmode = \"none\"\n{flow}"
    ));
    assert!(e.starts_with("ftl.map_addresses:") && e.contains("24 bits"), "{e}");
}

/// `auto` takes in-plane addresses where the global tables would pass 4 GiB and the placement
/// allows them, global ones otherwise.
#[test]
fn auto_takes_in_plane_addresses_for_large_drives_it_can_hold() {
    use ssdlab_core::config::mapping::uses_in_plane_addresses;
    use ssdlab_core::Config;
    let flow = "[[flows]]\nrequest_size = \"4KiB\"\nqueue_depth = 1\nrequests = 10\n";
    let drive_32tib =
        "[flash]\nchannels = 16\nchips_per_channel = 16\nblocks_per_plane = 8192\npage_size = \"16KiB\"\n";
    let config = |text: String| Config::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(uses_in_plane_addresses(&config(format!("{drive_32tib}{flow}"))));
    assert!(!uses_in_plane_addresses(&config(flow.to_string())), "MQSim's 512 GiB drive keeps global addresses");
    assert!(!uses_in_plane_addresses(&config(format!("{drive_32tib}[ftl]\nmap_addresses = \"global\"\n{flow}"))));
    assert!(!uses_in_plane_addresses(&config(format!("{drive_32tib}{flow}channels = [0, 3]\n"))));
    assert!(!uses_in_plane_addresses(&config(format!(
        "{drive_32tib}[ftl]\nmapping = \"hybrid\"\n[precondition]\nmode = \"none\"\n{flow}"
    ))));
    assert!(uses_in_plane_addresses(&config(format!(
        "{ODD_DEVICE}[ftl]\nover_provisioning = 0.2\nmap_addresses = \"in-plane\"\n{flow}"
    ))));
}
