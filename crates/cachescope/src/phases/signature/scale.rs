//! The axis on which setvectors are clustered: `ln(1 + x / unit)`, with `unit` the L2's ways
//! for an element (lines of one set) and the magnitude of a full cache, `ways·√sets`, for `|s|`.
//!
//! Why not the raw counts: what a footprint means to the L2 is relative, to the ways and to the
//! other footprints. 4 against 16 lines per set (a sweep that fits in the cache, random reads
//! over twice its size) decides the hit rate as much as 32 against 128. k-means on raw counts
//! weighs absolute differences, so a third phase with a far larger footprint (a stream of new
//! lines, and the intervals that straddle it) stretches the axis until the small phases' gap
//! costs less than splitting the stream's transitions off, and the sweep and random intervals
//! share a class (issue 20). Above a full cache the log axis measures ratios, the same whatever
//! else the trace does; far below it, where every line fits and the hit rate hardly depends
//! on the footprint, the axis is nearly linear and such intervals stay close together (a plain
//! `ln(1 + x)` spread them apart and lost real programs' phases: docs/accuracy/phases.md).
//! Monotone, so `setvector` phases remain ranges of the paper's `|s|`.

/// `ln(1 + x / unit)`: `x` in units of `unit`, linear well below one unit, logarithmic above.
pub fn log_scale(x: f64, unit: f64) -> f64 {
    (x / unit).ln_1p()
}

/// The magnitude of the setvector of a cache with every set full: `ways · √sets`.
pub fn full_magnitude(ways: u32, sets: usize) -> f64 {
    f64::from(ways) * (sets as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_count_above_a_full_cache_differences_below() {
        let unit = full_magnitude(16, 1024);
        assert_eq!(unit, 512.0);
        // Well above the unit, equal ratios are equal distances.
        let d = |a: f64, b: f64| log_scale(b, unit) - log_scale(a, unit);
        assert!((d(40_000.0, 160_000.0) - d(80_000.0, 320_000.0)).abs() < 0.01);
        // Well below, a 4x ratio is a short distance; across the unit it is a long one.
        assert!(d(8.0, 32.0) < 0.05 && d(256.0, 1024.0) > 0.6);
        assert_eq!(log_scale(0.0, unit), 0.0);
        // Monotone.
        assert!(d(100.0, 101.0) > 0.0 && d(1e6, 1e6 + 1.0) > 0.0);
    }
}
