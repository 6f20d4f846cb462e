//! The log-bucketed layout of the time-local histograms: one bin per reuse time below
//! [`EXACT`], then [`PER_OCTAVE`] bins per power of two, so a bin is at most 1/16 of its
//! values wide.

/// Values below this have a bin each.
pub(crate) const EXACT: u64 = 64;

/// Bins per power of two from [`EXACT`] up.
pub(crate) const PER_OCTAVE: u64 = 16;

/// Bins for every `u64`.
pub(crate) const BINS: usize = (EXACT + (64 - EXACT.trailing_zeros() as u64) * PER_OCTAVE) as usize;

/// Bin of `v`.
#[inline]
pub(crate) fn bin_of(v: u64) -> usize {
    if v < EXACT {
        return v as usize;
    }
    let k = u64::from(63 - v.leading_zeros());
    let sub = (v >> (k - PER_OCTAVE.trailing_zeros() as u64)) - PER_OCTAVE;
    (EXACT + (k - u64::from(EXACT.trailing_zeros())) * PER_OCTAVE + sub) as usize
}

/// First value and width of bin `b`.
#[cfg(test)]
pub(crate) fn bin_range(b: usize) -> (u64, u64) {
    let b = b as u64;
    if b < EXACT {
        return (b, 1);
    }
    let k = (b - EXACT) / PER_OCTAVE + u64::from(EXACT.trailing_zeros());
    let sub = (b - EXACT) % PER_OCTAVE;
    let len = 1u64 << (k - PER_OCTAVE.trailing_zeros() as u64);
    ((PER_OCTAVE + sub) * len, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_tile_the_values_in_order() {
        let mut next = 0u64;
        for b in 0..BINS {
            let (start, len) = bin_range(b);
            assert_eq!(start, next, "bin {b}");
            assert_eq!(bin_of(start), b);
            assert_eq!(bin_of(start + (len - 1)), b);
            next = start.wrapping_add(len);
        }
        assert_eq!(next, 0, "the last bin ends at u64::MAX");
        assert_eq!(bin_of(u64::MAX), BINS - 1);
    }
}
