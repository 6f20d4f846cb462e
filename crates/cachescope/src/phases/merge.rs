//! Merging adjacent intervals, so that a long run keeps a bounded timeline
//! ([`PhaseOptions::max_intervals`](super::PhaseOptions::max_intervals)).
//!
//! Past the cap, the finished intervals are merged in pairs (0 and 1, 2 and 3, …) and the
//! interval length doubles, as SimPoint-style tools coarsen the intervals of long runs. The
//! merges stay aligned: a lone interval left over (an odd count), or the open one, waits for
//! its partner of the old length, and the intervals after the pair are cut at the new length,
//! so every interval of the report covers `interval · 2^m` units from the start of the run
//! (the last one fewer), `m` the merges ([`PhaseSettings::merged`](super::PhaseSettings)).
//!
//! What a merged interval holds: the sum of its halves' counts (instructions, data
//! references, the ground truth's L2 accesses and hits), exact; and the **mean** of its
//! halves' signatures, which all cover equal lengths: for the activity vectors and the
//! wavelet's image (linear in the accesses) that is the merged interval's own up to a factor
//! common to every interval; for setvectors (distinct lines per set) it is the mean over the
//! original intervals, not the distinct lines of the longer one.

/// Merges row pairs of `rows` (rows of `width` values): rows `from + 2k` and `from + 2k + 1`
/// become row `from + k` by `f`, for `k < pairs`; the rows after the pairs follow them.
pub(crate) fn merge_pairs<T: Copy>(
    rows: &mut Vec<T>,
    width: usize,
    from: usize,
    pairs: usize,
    f: impl Fn(T, T) -> T,
) {
    debug_assert!(rows.len() >= (from + 2 * pairs) * width);
    for k in 0..pairs {
        let (a, b, to) = (
            (from + 2 * k) * width,
            (from + 2 * k + 1) * width,
            (from + k) * width,
        );
        for c in 0..width {
            rows[to + c] = f(rows[a + c], rows[b + c]);
        }
    }
    let tail = (from + 2 * pairs) * width;
    rows.drain((from + pairs) * width..tail);
}

/// The mean of two `f64`s.
pub(crate) fn mean_f64(a: f64, b: f64) -> f64 {
    (a + b) / 2.0
}

/// The mean of two `f32`s.
pub(crate) fn mean_f32(a: f32, b: f32) -> f32 {
    (a + b) / 2.0
}

/// The mean of two `u32`s, rounded half up.
pub(crate) fn mean_u32(a: u32, b: u32) -> u32 {
    ((u64::from(a) + u64::from(b)).div_ceil(2)) as u32
}

/// The mean of two `u8`s, rounded half up.
pub(crate) fn mean_u8(a: u8, b: u8) -> u8 {
    (u16::from(a) + u16::from(b)).div_ceil(2) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_merge_in_place_and_the_rest_follows() {
        // Rows of two values: 0..7.
        let mut rows: Vec<u32> = (0..7).flat_map(|r| [r, 10 * r]).collect();
        merge_pairs(&mut rows, 2, 1, 2, |a, b| a + b);
        // Rows 1+2 and 3+4 merged; 0, 5 and 6 kept.
        assert_eq!(rows, [0, 0, 3, 30, 7, 70, 5, 50, 6, 60]);
        let mut one = vec![1.0, 3.0];
        merge_pairs(&mut one, 1, 0, 1, mean_f64);
        assert_eq!(one, [2.0]);
        assert_eq!(
            (mean_u32(1, 2), mean_u8(255, 255), mean_u8(0, 1)),
            (2, 255, 1)
        );
    }
}
