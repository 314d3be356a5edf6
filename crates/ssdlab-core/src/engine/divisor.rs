/// A divisor fixed when the device is built (a geometry count, the sectors of a page, the planes
/// of a flow's stripe, the entries of a translation page): a power of two, as nearly every count
/// of a real part is, divides by a shift and takes its remainder by a mask; anything else
/// divides with `div` as before.
///
/// Why: an integer `div` takes 10-18 cycles on the machine profiled (AMD Zen 4; more on older
/// cores) against one for a shift, and in a random read it sits on the way to the addresses
/// loaded next (the page of the request's first sector, the chip and channel of a die). A random
/// 4 KiB read made twelve of them (issue 18). Callgrind counts each as one instruction, so they
/// never showed in its profiles; the executed `div`s were counted from its per-instruction costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divisor {
    value: u64,
    /// log2(value) when value is a power of two.
    shift: Option<u32>,
}

impl Divisor {
    /// `value` must not be zero (a count validated as at least one).
    pub fn new(value: u64) -> Self {
        assert!(value > 0, "a divisor of zero");
        Self { value, shift: value.is_power_of_two().then(|| value.trailing_zeros()) }
    }

    pub fn value(self) -> u64 {
        self.value
    }

    #[inline]
    pub fn div_u64(self, x: u64) -> u64 {
        match self.shift {
            Some(shift) => x >> shift,
            None => x / self.value,
        }
    }

    #[inline]
    pub fn rem_u64(self, x: u64) -> u64 {
        match self.shift {
            Some(shift) => x & ((1u64 << shift) - 1),
            None => x % self.value,
        }
    }

    #[inline]
    pub fn div_u32(self, x: u32) -> u32 {
        // In 64 bits, so that a divisor past u32::MAX (a shift past 31) gives 0.
        self.div_u64(u64::from(x)) as u32
    }

    #[inline]
    pub fn rem_u32(self, x: u32) -> u32 {
        self.rem_u64(u64::from(x)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Shift or `div`, every quotient and remainder is the plain operator's.
        #[test]
        fn quotients_and_remainders_are_the_operators(
            value in prop_oneof![1u64..=4096, (0u32..64).prop_map(|s| 1u64 << s), any::<u64>().prop_map(|v| v.max(1))],
            x in any::<u64>(),
        ) {
            let d = Divisor::new(value);
            prop_assert_eq!(d.div_u64(x), x / value);
            prop_assert_eq!(d.rem_u64(x), x % value);
            let x32 = x as u32;
            prop_assert_eq!(u64::from(d.div_u32(x32)), u64::from(x32) / value);
            prop_assert_eq!(u64::from(d.rem_u32(x32)), u64::from(x32) % value);
        }
    }

    #[test]
    fn powers_of_two_shift_and_others_divide() {
        assert_eq!(Divisor::new(16).shift, Some(4));
        assert_eq!(Divisor::new(1).shift, Some(0));
        assert_eq!(Divisor::new(384).shift, None);
        assert_eq!(Divisor::new(384).value(), 384);
    }

    #[test]
    #[should_panic(expected = "a divisor of zero")]
    fn zero_is_refused() {
        Divisor::new(0);
    }
}
