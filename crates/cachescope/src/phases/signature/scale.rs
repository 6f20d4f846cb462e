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

    /// The magnitudes of issue 20's program (1 MiB, 16-way L2): sweep 8 lines per set, random
    /// 31, the stream saturated at 255, and intervals straddling the stream. Optimal 1-D
    /// k-means on raw magnitudes merges sweep and random; on the scale it keeps them apart.
    #[test]
    fn a_far_larger_third_phase_no_longer_merges_the_other_two() {
        use crate::phases::kmeans::kmeans_1d;
        let mut raw = vec![256.0; 24];
        raw.extend([1000.0; 36]);
        raw.extend([8160.0; 11]);
        raw.extend([2500.0, 3000.0, 4500.0, 5000.0, 6000.0, 7000.0]);
        let separated = |labels: &[usize]| labels[0] != labels[24];
        assert!(!separated(&kmeans_1d(&raw, 3).labels));
        let unit = full_magnitude(16, 1024);
        let scaled: Vec<f64> = raw.iter().map(|&m| log_scale(m, unit)).collect();
        let c = kmeans_1d(&scaled, 3);
        assert!(separated(&c.labels));
        // Three classes, one per phase; each transition joins the phase nearest by ratio.
        let (sweep, random, stream) = (c.labels[0], c.labels[24], c.labels[60]);
        assert!(stream != sweep && stream != random);
        assert!(c.labels[..24].iter().all(|&l| l == sweep));
        assert!(c.labels[24..60].iter().all(|&l| l == random));
    }
}
