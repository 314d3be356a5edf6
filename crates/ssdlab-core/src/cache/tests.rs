use super::*;

fn shaped(lines: u32, ways: u32, pages_per_line: u32, replacement: Replacement, seed: u64) -> CachePartition {
    CachePartition::new(CacheShape { lines, ways, pages_per_line, replacement }, RandomStream::new(seed, 9))
}

const NONE: std::ops::RangeInclusive<u32> = 1000..=1000;

#[test]
fn reads_hit_only_when_every_sector_is_cached() {
    let mut c = CachePartition::pages(4);
    c.write(7, 0b0011, Writer::default());
    assert_eq!(c.lookup(7, 0b0001), Lookup::Hit);
    assert_eq!(c.lookup(7, 0b0111), Lookup::Miss);
    assert_eq!(c.lookup(8, 1), Lookup::Miss);
}

#[test]
fn eviction_flushes_dirty_lines_and_frees_their_space_when_the_flush_completes() {
    let mut c = CachePartition::pages(2);
    c.write(1, 1, Writer::default());
    c.write(2, 1, Writer::default());
    assert_eq!(c.free(), 0);
    assert_eq!(c.evict_one(0, NONE), Eviction::Flush { first_lpa: 1, pages: 1, writer: Writer::default() });
    assert_eq!(c.free(), 0, "space returns only after the flush");
    assert_eq!(c.evict_one(0, NONE), Eviction::Flush { first_lpa: 2, pages: 1, writer: Writer::default() });
    assert_eq!(c.evict_one(0, NONE), Eviction::Nothing);
    c.flush_done(1);
    assert_eq!(c.free(), 1);
    // Rewritten during its flush: the line stays, dirty.
    c.write(2, 2, Writer::default());
    c.flush_done(2);
    assert!(c.contains(2));
}

#[test]
fn clean_lines_are_dropped_without_a_flush() {
    let mut c = CachePartition::pages(1);
    c.fill(5, 1, 0);
    assert_eq!(c.evict_one(0, 5..=5), Eviction::Nothing, "the pages being written are kept");
    assert_eq!(c.evict_one(0, 6..=6), Eviction::Freed);
    assert_eq!(c.free(), 1);
}

#[test]
fn lines_map_to_sets_by_line_number_modulo_sets() {
    // 8 lines of 2 pages in 4 sets of 2 ways.
    let mut c = shaped(8, 2, 2, Replacement::Lru, 1);
    assert_eq!(c.sets(), 4);
    assert_eq!((c.set_of_page(0), c.set_of_page(1)), (0, 0), "both pages of line 0");
    assert_eq!((c.set_of_page(2), c.set_of_page(7)), (1, 3));
    assert_eq!(c.set_of_page(8), 0, "line 4 wraps to set 0");
    // Set 0 full (lines 0 and 4): a write of line 8 does not fit, one of line 1 does.
    c.write(0, 1, Writer::default());
    c.write(8, 1, Writer::default());
    assert_eq!(c.set_free(0), 0);
    assert_eq!(c.free(), 6, "the other sets are empty");
    assert!(!c.fits(16..=16));
    assert!(c.fits(2..=3));
    // Consecutive lines spread over the sets: 8 lines take 2 per set, 9 would need 3 in set 0.
    assert!(!c.never_fits(0..=15));
    assert!(c.never_fits(0..=16));
}

#[test]
fn a_line_of_several_pages_is_flushed_page_by_page() {
    let mut c = shaped(2, 2, 4, Replacement::Lru, 1);
    c.write(4, 0b1, Writer::default());
    c.write(6, 0b11, Writer::default());
    assert_eq!(c.used(), 1, "pages 4 and 6 share line 1");
    assert_eq!(c.evict_one(0, NONE), Eviction::Flush { first_lpa: 4, pages: 0b101, writer: Writer::default() });
    assert_eq!(c.sectors_of(6), 0b11);
    c.flush_done(4);
    assert_eq!(c.used(), 1, "page 6 is still being flushed");
    c.flush_done(6);
    assert_eq!(c.used(), 0);
}

/// Fills lines 0, 1, 2 of a 3-line cache, reads line 0 again, then makes room for one more.
fn evicted_after_reuse(replacement: Replacement) -> u32 {
    let mut c = shaped(3, 3, 1, replacement, 1);
    for lpa in 0..3 {
        c.fill(lpa, 1, 0);
    }
    assert_eq!(c.lookup(0, 1), Lookup::Hit);
    assert_eq!(c.evict_one(0, NONE), Eviction::Freed);
    (0..3).find(|&lpa| !c.contains(lpa)).expect("one line left")
}

#[test]
fn lru_evicts_the_least_recently_used_line() {
    assert_eq!(evicted_after_reuse(Replacement::Lru), 1);
}

#[test]
fn fifo_evicts_the_oldest_insert_even_if_it_was_used() {
    assert_eq!(evicted_after_reuse(Replacement::Fifo), 0);
}

#[test]
fn random_replacement_is_deterministic_under_a_seed() {
    let victims = |seed: u64| -> Vec<u32> {
        let mut c = shaped(64, 64, 1, Replacement::Random, seed);
        let mut out = Vec::new();
        for lpa in 0..400 {
            if c.free() == 0 {
                let before: Vec<u32> = (0..lpa).filter(|&l| c.contains(l)).collect();
                assert_eq!(c.evict_one(0, NONE), Eviction::Freed);
                out.push(*before.iter().find(|&&l| !c.contains(l)).expect("one line left"));
            }
            c.fill(lpa, 1, 0);
        }
        out
    };
    let (a, b, other) = (victims(7), victims(7), victims(8));
    assert_eq!(a, b, "same seed, same victims");
    assert_ne!(a, other, "another seed, other victims");
    // Not FIFO in disguise: some victims are not the oldest line.
    assert!(a.windows(2).any(|w| w[1] < w[0]), "{a:?}");
}

#[test]
fn direct_mapped_lines_a_set_apart_evict_each_other() {
    let mut direct = shaped(4, 1, 1, Replacement::Lru, 1);
    let mut full = CachePartition::pages(4);
    let (mut direct_hits, mut full_hits) = (0, 0);
    for round in 0..10 {
        for lpa in [0, 4] {
            if round > 0 {
                direct_hits += (direct.lookup(lpa, 1) == Lookup::Hit) as u32;
                full_hits += (full.lookup(lpa, 1) == Lookup::Hit) as u32;
            }
            direct.fill(lpa, 1, 0);
            full.fill(lpa, 1, 0);
        }
    }
    assert_eq!(direct_hits, 0, "lines 0 and 4 share set 0 of a 4-set direct-mapped cache");
    assert_eq!(full_hits, 18);
    assert_eq!(direct.counts.evictions, 19);
}

#[test]
fn a_page_being_read_ahead_is_pending_then_hits_and_counts_as_used_once() {
    let mut c = CachePartition::pages(2);
    assert!(c.reserve_prefetch(3, 0xff, 0));
    assert!(!c.reserve_prefetch(3, 0xff, 0), "already coming");
    assert_eq!(c.lookup(3, 1), Lookup::Pending);
    assert_eq!(c.evict_one(0, NONE), Eviction::Nothing, "a line being filled cannot leave");
    c.prefetch_done(3, 0xff);
    assert_eq!(c.lookup(3, 0xff), Lookup::Hit);
    assert_eq!(c.counts.prefetches_used, 1);
    assert!(c.reserve_prefetch(4, 0xff, 0));
    c.prefetch_done(4, 0xff);
    assert!(!c.reserve_prefetch(4, 0xff, 0), "already cached");
    assert_eq!(c.prefetched_unused(), 1);
    // A third page needs room: the least recently used clean line (3) goes, then 4 unread.
    assert!(c.reserve_prefetch(5, 0xff, 0));
    c.prefetch_done(5, 0xff);
    assert!(c.reserve_prefetch(6, 0xff, 0));
    assert_eq!(c.counts.prefetches_evicted_unused, 1, "page 4 left unread");
}
