use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// One component's random numbers. Each component draws from its own stream, derived from the
/// run's seed and a fixed stream id, so adding a draw in one component never shifts another's.
#[derive(Clone)]
pub struct RandomStream {
    rng: Xoshiro256PlusPlus,
}

/// SplitMix64 finaliser: spreads (seed, stream id) over the whole 64-bit seed space.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed derived from another and an index (a flow's default seed from the run's seed).
pub fn derive_seed(seed: u64, index: u64) -> u64 {
    mix(seed ^ mix(index.wrapping_add(0xF10E)))
}

impl RandomStream {
    pub fn new(seed: u64, stream: u64) -> Self {
        Self { rng: Xoshiro256PlusPlus::seed_from_u64(mix(seed) ^ mix(stream.wrapping_add(0x5EED))) }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n), n > 0, without modulo bias (Lemire's method).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = (self.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = (self.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as u64
    }

    /// Exponentially distributed with the given mean.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.unit()).ln()
    }

    /// Normally distributed (Box-Muller; one draw per call keeps the stream position simple).
    pub fn normal(&mut self, mean: f64, stdev: f64) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        mean + stdev * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = RandomStream::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = RandomStream::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = RandomStream::new(7, 2);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_stays_in_range_and_exponential_has_its_mean() {
        let mut r = RandomStream::new(1, 0);
        assert!((0..10_000).all(|_| r.below(7) < 7));
        let mean = (0..200_000).map(|_| r.exponential(3.0)).sum::<f64>() / 200_000.0;
        assert!((mean - 3.0).abs() < 0.05, "mean {mean}");
    }
}
