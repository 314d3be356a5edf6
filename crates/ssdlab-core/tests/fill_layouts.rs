//! `precondition.mode = "fill"`: both layouts leave the forward and reverse maps in agreement and
//! every block's valid count right, whichever way a page's plane is found (static allocation
//! over the whole device takes a by-residue fast path; a confined flow's pages the general one),
//! for occupancies that do not divide evenly over the planes and with translation pages.

use ssdlab_core::Simulation;

fn config(layout: &str, occupancy: f64, allocation: &str, ideal: bool, confined: bool) -> String {
    let channels = if confined { "channels = [1]\n" } else { "" };
    format!(
        "seed = 3\n[ftl]\nallocation = \"{allocation}\"\nideal_mapping = {ideal}\nover_provisioning = 0.2\n\
         [flash]\nchannels = 2\nchips_per_channel = 3\ndies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 40\npages_per_block = 32\npage_size = \"4KiB\"\n\
         [precondition]\nmode = \"fill\"\noccupancy = {occupancy}\nlayout = \"{layout}\"\n\
         [[flows]]\nread_fraction = 0.5\nrequest_size = \"4KiB\"\nqueue_depth = 4\nrequests = 200\nworking_set = 0.5\n{channels}"
    )
}

#[test]
fn filled_maps_agree_for_every_layout_allocation_and_occupancy() {
    for layout in ["packed", "spread"] {
        for allocation in ["CWDP", "PDWC", "WDPC"] {
            for occupancy in [0.013, 0.37, 0.75, 1.0] {
                for ideal in [true, false] {
                    for confined in [false, true] {
                        let text = config(layout, occupancy, allocation, ideal, confined);
                        let what =
                            format!("{layout} {allocation} occupancy {occupancy} ideal {ideal} confined {confined}");
                        let mut sim = Simulation::from_toml_str(&text, std::path::Path::new("."))
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                        sim.check_invariants().unwrap_or_else(|e| panic!("{what}: after the fill: {e}"));
                        let r = sim.run().unwrap_or_else(|e| panic!("{what}: {e}"));
                        assert!(r.precondition.mapped_pages > 0, "{what}");
                        sim.check_invariants().unwrap_or_else(|e| panic!("{what}: after the run: {e}"));
                    }
                }
            }
        }
    }
}

/// A drive large enough that the fill has a second thread fault the reverse entries in while it
/// writes the forward table (`ftl::table_memory`; 64 MiB of reverse entries, 16 M physical
/// pages): the maps still agree, in both layouts and both address forms.
#[test]
fn fills_that_fault_the_reverse_table_in_beside_them_keep_the_maps_in_agreement() {
    for layout in ["packed", "spread"] {
        for addresses in ["global", "in-plane"] {
            let text = format!(
                "seed = 3\n[ftl]\nideal_mapping = true\nmap_addresses = \"{addresses}\"\n\
                 [flash]\nchannels = 4\nchips_per_channel = 4\ndies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 2048\npages_per_block = 256\npage_size = \"4KiB\"\n\
                 [precondition]\nmode = \"fill\"\noccupancy = 0.75\nlayout = \"{layout}\"\n\
                 [[flows]]\nread_fraction = 0.5\nrequest_size = \"4KiB\"\nqueue_depth = 4\nrequests = 2000\n"
            );
            let what = format!("{layout} {addresses}");
            let mut sim =
                Simulation::from_toml_str(&text, std::path::Path::new(".")).unwrap_or_else(|e| panic!("{what}: {e}"));
            sim.check_invariants().unwrap_or_else(|e| panic!("{what}: after the fill: {e}"));
            let r = sim.run().unwrap_or_else(|e| panic!("{what}: {e}"));
            // At 3 bytes an entry (in-plane), 32 MiB of reverse entries: the fill's threshold.
            let threshold_pages = (32u64 << 20) / 3;
            assert!(r.precondition.mapped_pages > threshold_pages, "{what}: {}", r.precondition.mapped_pages);
            sim.check_invariants().unwrap_or_else(|e| panic!("{what}: after the run: {e}"));
        }
    }
}
