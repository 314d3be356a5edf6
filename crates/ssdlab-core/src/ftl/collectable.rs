//! The blocks GC may take, one bit per block, kept as blocks change state.
//!
//! RGA (the default GC policy) draws its candidates from a plane's collectable blocks (full, every
//! page programmed: [`super::blocks::BlockManager::is_collectable`]) at every victim. Counting
//! them from the block arrays read 5 bytes per block (state, program cursor and valid count),
//! 40 KiB for a plane of 8,192 blocks, at each of a 4 TiB drive's 100,000 victims per million
//! random writes (7 % of that run's samples, perf). Kept as a bit per block, a plane's count is
//! 128 words' population counts.

/// One bit per block, each plane's bits in words of their own (a plane's first block is bit 0 of
/// its first word, whatever the plane size).
pub struct CollectableSet {
    words: Vec<u64>,
    words_per_plane: usize,
    blocks_per_plane: u32,
}

impl CollectableSet {
    /// No block collectable, for `planes` planes of `blocks_per_plane` blocks; `None` where
    /// the memory cannot be had.
    pub fn new(planes: u32, blocks_per_plane: u32) -> Option<Self> {
        let words_per_plane = (blocks_per_plane as usize).div_ceil(64);
        let mut words = Vec::new();
        words.try_reserve_exact(words_per_plane * planes as usize).ok()?;
        words.resize(words_per_plane * planes as usize, 0);
        Some(Self { words, words_per_plane, blocks_per_plane })
    }

    /// Records whether `block` is collectable.
    #[inline]
    pub fn set(&mut self, block: u32, collectable: bool) {
        let (plane, i) = (block / self.blocks_per_plane, block % self.blocks_per_plane);
        self.set_in_plane(plane, i, collectable);
    }

    /// The plane's words to write whole (see [`Self::plane`]); bits past its blocks must stay
    /// clear.
    #[inline]
    pub fn plane_mut(&mut self, plane: u32) -> &mut [u64] {
        let first = plane as usize * self.words_per_plane;
        &mut self.words[first..first + self.words_per_plane]
    }

    /// Records whether block `i` of `plane` (relative to its first) is collectable.
    #[inline]
    fn set_in_plane(&mut self, plane: u32, i: u32, collectable: bool) {
        let word = &mut self.words[plane as usize * self.words_per_plane + i as usize / 64];
        let bit = 1u64 << (i % 64);
        if collectable {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    /// Whether `block` is recorded as collectable.
    pub fn contains(&self, block: u32) -> bool {
        let (plane, i) = (block / self.blocks_per_plane, block % self.blocks_per_plane);
        self.words[plane as usize * self.words_per_plane + i as usize / 64] & (1 << (i % 64)) != 0
    }

    /// The plane's words: bit `i % 64` of word `i / 64` for its block `i` (relative to its first).
    #[inline]
    pub fn plane(&self, plane: u32) -> &[u64] {
        let first = plane as usize * self.words_per_plane;
        &self.words[first..first + self.words_per_plane]
    }
}

/// The position of the `n`-th set bit of `word` (from 0, lowest first); `n` is below its count.
#[inline]
pub fn nth_set_bit(mut word: u64, n: u32) -> u32 {
    debug_assert!(n < word.count_ones());
    // Whole bytes first: their counts, then at most seven bits cleared in the byte that holds it.
    let mut n = n;
    let mut base = 0;
    loop {
        let ones = (word & 0xff).count_ones();
        if n < ones {
            break;
        }
        n -= ones;
        word >>= 8;
        base += 8;
    }
    for _ in 0..n {
        word &= word - 1;
    }
    base + word.trailing_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_nth_set_bit_is_the_nth_of_a_scan(word in any::<u64>(), pick in any::<u32>()) {
            prop_assume!(word != 0);
            let n = pick % word.count_ones();
            let scanned = (0..64).filter(|&i| word & (1 << i) != 0).nth(n as usize).unwrap();
            prop_assert_eq!(nth_set_bit(word, n), scanned);
        }

        #[test]
        fn bits_of_planes_do_not_share_words(
            blocks_per_plane in 1u32..200,
            sets in proptest::collection::vec((any::<u32>(), any::<bool>()), 0..300),
        ) {
            let planes = 3;
            let mut set = CollectableSet::new(planes, blocks_per_plane).unwrap();
            let mut model = vec![false; (planes * blocks_per_plane) as usize];
            for (pick, on) in sets {
                let block = pick % (planes * blocks_per_plane);
                set.set(block, on);
                model[block as usize] = on;
            }
            for plane in 0..planes {
                let words = set.plane(plane);
                for i in 0..blocks_per_plane {
                    let bit = words[i as usize / 64] & (1 << (i % 64)) != 0;
                    prop_assert_eq!(bit, model[(plane * blocks_per_plane + i) as usize]);
                    prop_assert_eq!(set.contains(plane * blocks_per_plane + i), bit);
                }
                // Bits past the plane's blocks stay clear: a count of the words is the plane's.
                let counted: u32 = words.iter().map(|w| w.count_ones()).sum();
                let modelled = (0..blocks_per_plane).filter(|&i| model[(plane * blocks_per_plane + i) as usize]).count();
                prop_assert_eq!(counted as usize, modelled);
            }
        }
    }
}
