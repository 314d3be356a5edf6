//! Tests of steady-state placement: by plane, by rule and in logical order leave the same map.

use super::*;

/// An empty FTL of `planes` planes (allocation order `order`) and a sample image per group
/// whose ranks sit at a scrambled permutation of the plane's pages.
fn setup(order: &str) -> (Ftl, Vec<SampleImage>, Vec<u32>, Vec<u32>) {
    setup_with(order, "global")
}

/// [`setup`] with the map in `addresses` (`ftl.map_addresses`).
fn setup_with(order: &str, addresses: &str) -> (Ftl, Vec<SampleImage>, Vec<u32>, Vec<u32>) {
    let text = format!(
        "[ftl]\nideal_mapping = true\nover_provisioning = 0.25\nallocation = \"{order}\"\nmap_addresses = \"{addresses}\"\n\
         [flash]\nchannels = 3\nchips_per_channel = 2\ndies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 32\npages_per_block = 16\npage_size = \"4KiB\"\n\
         [[flows]]\nqueue_depth = 1\nrequests = 1\n"
    );
    let config = Config::from_toml_str(&text).unwrap();
    let geometry = Geometry::new(&config);
    let placement = Placement::new(&config, &geometry).unwrap();
    let ftl = Ftl::new(&config, geometry, placement).unwrap();
    let g = &ftl.geometry;
    let per_plane = g.pages_per_block * g.blocks_per_plane;
    let planes = g.planes as usize;
    // Two groups (odd and even planes), each with its own permutation.
    let images: Vec<SampleImage> = (0..2u32)
        .map(|s| SampleImage {
            blocks: ftl.blocks.export_plane(0),
            page_of_rank: (0..per_plane).map(|k| (k * 37 + s * 11) % per_plane).collect(),
            host_writes: 0,
            gc_moves: 0,
        })
        .collect();
    let group_of = (0..planes as u32).map(|p| p % 2).collect();
    let first_page = (0..planes as u32).map(|p| g.first_block_of_plane(p) * g.pages_per_block).collect();
    (ftl, images, group_of, first_page)
}

#[test]
fn placing_by_plane_leaves_the_tables_placing_in_order_does() {
    for order in ["CWDP", "PDWC", "WCDP", "DPCW"] {
        for stride in [1u64, 3, 7] {
            let (mut in_order, images, group_of, first_page) = setup(order);
            let (mut by_plane, ..) = setup(order);
            let (mut by_bit, ..) = setup(order);
            let logical = in_order.geometry.logical_pages;
            let mut mapped = PageSet::new(logical);
            // A set with holes (every `stride`-th page, and a run at the end).
            (0..logical).filter(|p| p % stride == 0).for_each(|p| mapped.insert(p));
            mapped.insert_range(logical - 40, logical);
            let residue = by_plane.geometry.residue_of_plane().expect("one residue per plane");
            let walk = ByResidue::new(&mapped, residue.clone(), MAX_RUNS);
            let bit_walk = ByResidue::new(&mapped, residue, 0);
            assert!(walk.runs.is_some() && bit_walk.runs.is_none());
            for p in 0..in_order.geometry.planes as usize {
                let mut pages = Vec::new();
                mapped.for_each(|lpa| {
                    if in_order.home_plane(lpa) as usize == p {
                        pages.push(lpa)
                    }
                });
                let (mut by_runs, mut by_bits) = (Vec::new(), Vec::new());
                walk.for_each_of_plane(p, |lpa| by_runs.push(lpa));
                bit_walk.for_each_of_plane(p, |lpa| by_bits.push(lpa));
                assert_eq!(by_runs, pages, "{order} stride {stride}: plane {p}'s pages");
                assert_eq!(by_bits, pages);
                assert_eq!(walk.count_of_plane(p) as usize, pages.len());
                assert_eq!(bit_walk.count_of_plane(p) as usize, pages.len());
            }
            let a = place_in_order(&mut in_order, &mapped, &images, &group_of, &first_page);
            // The blocks are imported beside the placement (here: once, on some thread).
            let mut imported = 0;
            let b = place_by_plane(&mut by_plane, &walk, &images, &group_of, &first_page, |_| imported += 1);
            // Too many runs to walk: each page's bit is tested instead.
            let c = place_by_plane(&mut by_bit, &bit_walk, &images, &group_of, &first_page, |_| imported += 1);
            assert_eq!(imported, 2);
            assert_eq!(a, b, "{order} stride {stride}: pages per plane");
            assert_eq!(a, c, "{order} stride {stride}: pages per plane, bit by bit");
            assert_eq!(in_order.map.mapped_pages(), mapped.len());
            assert_eq!(by_plane.map.mapped_pages(), mapped.len());
            for lpa in 0..logical as u32 {
                assert_eq!(in_order.map.lookup(lpa), by_plane.map.lookup(lpa), "{order} stride {stride}: lpa {lpa}");
            }
            for ppa in 0..in_order.geometry.physical_pages as u32 {
                assert_eq!(in_order.map.owner(ppa), by_plane.map.owner(ppa), "{order} stride {stride}: ppa {ppa}");
            }
            for ppa in 0..in_order.geometry.physical_pages as u32 {
                assert_eq!(in_order.map.owner(ppa), by_bit.map.owner(ppa), "{order} stride {stride}: ppa {ppa}");
            }
            assert_eq!(by_bit.map.mapped_pages(), mapped.len());
            by_plane.map.check_agreement().unwrap();
            by_bit.map.check_agreement().unwrap();
        }
    }
}

/// The placement kept as its rule answers as the written-out one, entry for entry, right
/// after the steady state and after random remaps (each onto a page of the logical page's
/// static plane), trims and block erases applied to both, in both address forms, with a set
/// of several runs whose planes hold different counts.
#[test]
fn the_kept_placement_answers_as_the_written_one() {
    for addresses in ["global", "in-plane"] {
        let (mut written, images, group_of, first_page) = setup_with("CWDP", addresses);
        let (mut kept, ..) = setup_with("CWDP", addresses);
        let g = written.geometry.clone();
        let logical = g.logical_pages;
        let mut mapped = PageSet::new(logical);
        mapped.insert_range(0, logical / 3);
        mapped.insert_range(logical / 2 + 5, logical / 2 + 200);
        mapped.insert_range(logical - 31, logical);
        let residue = kept.geometry.residue_of_plane().expect("one residue per plane");
        let walk = ByResidue::new(&mapped, residue, MAX_RUNS);
        assert!(walk.can_imply());
        let a = place_in_order(&mut written, &mapped, &images, &group_of, &first_page);
        let b = imply_by_plane(&mut kept, &walk, &images, &group_of);
        assert_eq!(a, b, "{addresses}: pages per plane");
        assert!(kept.map.is_implied() && !written.map.is_implied());
        let (physical, ppb, per_plane) =
            (g.physical_pages as u32, g.pages_per_block, g.pages_per_block * g.blocks_per_plane);
        let same = |written: &Ftl, kept: &Ftl, when: &str| {
            assert_eq!(written.map.mapped_pages(), kept.map.mapped_pages(), "{addresses} {when}: mapped pages");
            for lpa in 0..logical as u32 {
                assert_eq!(written.map.lookup(lpa), kept.map.lookup(lpa), "{addresses} {when}: lpa {lpa}");
            }
            for ppa in 0..physical {
                assert_eq!(written.map.owner(ppa), kept.map.owner(ppa), "{addresses} {when}: owner of {ppa}");
                assert_eq!(written.map.is_valid(ppa), kept.map.is_valid(ppa), "{addresses} {when}: ppa {ppa}");
            }
        };
        same(&written, &kept, "after placing");
        kept.map.check_agreement().unwrap_or_else(|e| panic!("{addresses}: {e}"));
        // The random operations below need not keep the maps agreeing (a remap may land on
        // another page's valid copy): only that both maps answer alike.
        let mut rng = RandomStream::new(5, 0);
        for step in 0..30_000 {
            let lpa = rng.below(logical) as u32;
            match rng.below(20) {
                0 => assert_eq!(written.map.unmap(lpa), kept.map.unmap(lpa), "{addresses} step {step}: trim {lpa}"),
                1 => {
                    let block = rng.below(u64::from(physical / ppb)) as u32;
                    written.map.clear_physical(block * ppb, ppb);
                    kept.map.clear_physical(block * ppb, ppb);
                }
                _ => {
                    let ppa = written.home_plane(u64::from(lpa)) * per_plane + rng.below(u64::from(per_plane)) as u32;
                    let remapped = (written.map.remap(lpa, ppa), kept.map.remap(lpa, ppa));
                    assert_eq!(remapped.0, remapped.1, "{addresses} step {step}: remap {lpa} to {ppa}");
                }
            }
            if step % 10_000 == 9_999 {
                same(&written, &kept, &format!("at step {step}"));
            }
        }
    }
}
