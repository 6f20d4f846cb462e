//! Power-of-two histograms: the exact distances' log histograms regrouped into one bin per
//! octave, the bins every histogram of the report (and its figures) shares.

use crate::reuse::LogHistogram;

use super::model::{Histogram, HistogramBin};

/// Regroups a log histogram into one bin per power of two: `[0]`, `[1]`, `[2, 3]`, `[4, 7]`…
/// Every log-histogram bin lies inside one octave, so the regrouping is exact.
pub fn octave_histogram(name: &str, h: &LogHistogram, cold: u64) -> Histogram {
    let mut counts: Vec<u64> = Vec::new();
    for bin in h.bins() {
        if bin.count == 0 {
            continue;
        }
        let i = octave_of(bin.start);
        if counts.len() <= i {
            counts.resize(i + 1, 0);
        }
        counts[i] += bin.count;
    }
    let first = counts.iter().position(|&c| c > 0).unwrap_or(counts.len());
    let bins = counts
        .iter()
        .enumerate()
        .skip(first)
        .map(|(i, &count)| {
            let (lo, hi) = octave_bounds(i);
            HistogramBin { lo, hi, count }
        })
        .collect();
    Histogram {
        distance: name.into(),
        bins,
        cold,
        total: cold + h.total(),
    }
}

/// Octave index: 0 for 0, `k + 1` for `[2^k, 2^(k+1))`.
pub(super) fn octave_of(d: u64) -> usize {
    if d == 0 { 0 } else { d.ilog2() as usize + 1 }
}

/// The distances `[lo, hi]` of octave `i`.
pub(super) fn octave_bounds(i: usize) -> (u64, u64) {
    if i == 0 {
        (0, 0)
    } else {
        let lo = 1u64 << (i - 1);
        (lo, lo.saturating_mul(2) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octaves_regroup_exactly() {
        let mut h = LogHistogram::new(crate::reuse::Layout::DEFAULT);
        for d in [0, 1, 2, 3, 3, 4, 7, 8, 100_000, 70_000] {
            h.record(d);
        }
        let o = octave_histogram("stack_distance", &h, 5);
        let got: Vec<(u64, u64, u64)> = o.bins.iter().map(|b| (b.lo, b.hi, b.count)).collect();
        assert_eq!(
            got[..5],
            [(0, 0, 1), (1, 1, 1), (2, 3, 3), (4, 7, 2), (8, 15, 1)]
        );
        // 70 000 and 100 000 both lie in [65536, 131071]; the empty octaves between are kept.
        assert_eq!(*got.last().unwrap(), (65536, 131071, 2));
        assert_eq!(got.len(), 18);
        assert_eq!(o.total, 15);
    }

    #[test]
    fn octave_bounds_cover_every_distance_once() {
        for d in [0u64, 1, 2, 3, 4, 1000, 1 << 62] {
            let (lo, hi) = octave_bounds(octave_of(d));
            assert!(lo <= d && d <= hi, "{d} not in [{lo}, {hi}]");
        }
    }
}
