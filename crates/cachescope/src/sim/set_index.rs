//! [`SetIndex`]: which set a line address maps to, for any number of sets.
//!
//! A power-of-two set count takes the line address's low bits (a mask, what most L1s and
//! Cachegrind do); any other count takes its remainder (`line mod sets`), the plain modulo
//! indexing of a cache such as a 30 MiB 12-way L3 (40,960 sets). The two agree whenever both
//! apply, so a power-of-two cache gives the same sets either way. Real sliced last-level caches
//! hash the address over slices first; that hash is undocumented and not modelled.

/// How a cache of `sets` sets picks the set of a line. Cheap to copy into hot loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SetIndex {
    sets: u64,
    /// `sets − 1`: the mask of a power-of-two count.
    mask: u64,
    pow2: bool,
}

impl SetIndex {
    /// The index of a cache of `sets ≥ 1` sets.
    pub fn new(sets: u64) -> SetIndex {
        debug_assert!(sets >= 1, "a cache has at least one set");
        SetIndex {
            sets,
            mask: sets.wrapping_sub(1),
            pow2: sets.is_power_of_two(),
        }
    }

    /// The set of `line` (a line address): `line & (sets − 1)`, or `line % sets` when the
    /// count is not a power of two. The branch is the same for every line of a cache, so it
    /// predicts perfectly and the mask stays the fast path.
    #[inline(always)]
    pub fn of(self, line: u64) -> u64 {
        if self.pow2 {
            line & self.mask
        } else {
            line % self.sets
        }
    }

    /// Number of sets.
    pub fn sets(self) -> u64 {
        self.sets
    }

    /// True when the count is a power of two (indexing by the low bits).
    pub fn is_power_of_two(self) -> bool {
        self.pow2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn is_the_remainder(sets in 1u64..100_000, line in any::<u64>()) {
            prop_assert_eq!(SetIndex::new(sets).of(line), line % sets);
        }
    }

    #[test]
    fn powers_of_two_take_the_low_bits() {
        let s = SetIndex::new(64);
        assert_eq!(s.of(0x1234_5678), 0x1234_5678 & 63);
        assert_eq!(SetIndex::new(1).of(u64::MAX - 1), 0);
        assert_eq!(SetIndex::new(40_960).of(40_961), 1);
    }
}
