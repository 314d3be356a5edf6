use super::*;
use crate::config::Size;

fn layout(zones: u64) -> ZoneLayout {
    ZoneLayout {
        zones,
        zone_sectors: 2048,
        capacity_sectors: 1024,
        zone_planes: 1,
        blocks_per_plane: 1,
        max_open: 8,
        max_active: 8,
        finish_pads: true,
        write_unit_sectors: 8,
    }
}

fn store(zones: u64, config: &LsmConfig) -> LsmAllocator {
    LsmAllocator::new(&layout(zones), 0, zones * 2048, 64, config).unwrap()
}

/// Replays `n` requests against a model of the zones: writes must land at the write pointer,
/// resets and finishes only on zones the store is done with, reads only on written data.
fn replay(s: &mut LsmAllocator, n: usize, read_every: usize) -> Vec<u64> {
    let mut rng = RandomStream::new(1, 1);
    let mut wp = vec![0u64; s.zone_live.len()];
    let mut resets = vec![0u64; s.zone_live.len()];
    for i in 0..n {
        let (op, start, sectors) = s.next(&mut rng, read_every > 0 && i % read_every == 0);
        let (z, at) = ((start / 2048) as usize, start % 2048);
        match op {
            Op::Write => {
                assert_eq!(at, wp[z], "request {i}: a write at the zone's write pointer");
                wp[z] += sectors as u64;
                assert!(wp[z] <= 1024, "within the capacity");
            }
            Op::Read => assert!(at + sectors as u64 <= wp[z], "request {i}: a read of written data"),
            Op::ZoneReset => {
                assert_eq!(at, 0);
                wp[z] = 0;
                resets[z] += 1;
            }
            Op::ZoneFinish => wp[z] = 1024,
            other => panic!("unexpected {other:?}"),
        }
    }
    resets
}

#[test]
fn writes_go_to_the_pointer_and_every_zone_is_reused() {
    let mut s = store(24, &LsmConfig { levels: 3, l0_files: 2, fanout: 2, file_size: None });
    let resets = replay(&mut s, 50_000, 5);
    let sum = s.summary();
    assert!(sum.compactions > 100 && sum.flushes > 100, "{sum:?}");
    // Leveled compaction rewrites data as it moves down: the store writes more than the user.
    let wa = sum.host_write_amplification.unwrap();
    assert!(wa > 1.5, "{sum:?}");
    assert_eq!(sum.host_bytes_written, (sum.flushes + sum.compaction_files_written) * sum.file_bytes);
    assert!(resets.iter().all(|&r| r > 0), "every zone was reset and reused: {resets:?}");
    assert!(s.live_files <= s.max_live && s.readable.len() as u64 <= s.live_files);
}

#[test]
fn a_file_size_that_leaves_capacity_over_finishes_the_zone() {
    // 1024-sector capacity, 384-sector files: two a zone, 256 sectors left over.
    let config = LsmConfig { levels: 2, l0_files: 2, fanout: 2, file_size: Some(Size::parse("192KiB").unwrap()) };
    let mut s = store(12, &config);
    replay(&mut s, 20_000, 0);
    let sum = s.summary();
    assert_eq!(sum.files_per_zone, 2);
    assert!(sum.zone_finishes > 10, "{sum:?}");
}

#[test]
fn bad_sizes_and_too_few_zones_say_why() {
    let e = LsmAllocator::new(&layout(8), 0, 8 * 2048, 64, &LsmConfig::default()).err().unwrap();
    assert!(e.starts_with("levels: 4 levels need at least 11 whole zones"), "{e}");
    let odd = LsmConfig { file_size: Some(Size::parse("6KiB").unwrap()), ..LsmConfig::default() };
    let e = LsmAllocator::new(&layout(24), 0, 24 * 2048, 64, &odd).err().unwrap();
    assert!(e.contains("file_size") && e.contains("4096-byte flash pages"), "{e}");
    let big = LsmConfig { file_size: Some(Size::parse("1MiB").unwrap()), ..LsmConfig::default() };
    assert!(LsmAllocator::new(&layout(24), 0, 24 * 2048, 64, &big).err().unwrap().contains("zone capacity"));
    let narrow = ZoneLayout { max_open: 3, ..layout(24) };
    let e = LsmAllocator::new(&narrow, 0, 24 * 2048, 64, &LsmConfig::default()).err().unwrap();
    assert!(e.contains("zns.max_open_zones (3)"), "{e}");
}
