//! The laws of tests/properties.rs where real traces exercise them: past the histograms'
//! exact region, where distances are binned 256 to an octave. Real traces reach that region
//! above 64 Ki lines (the default layout); here the exact region ends at 256 lines
//! (`Layout::new(8)`), so traces of a few thousand lines cross many bins.
//!
//! - the exact LRU curve never rises with cache size, at every size from one line to past the
//!   distinct lines, bin boundaries or not;
//! - its miss counts bracket the brute-force count (a recency list) at every size: equal in
//!   the exact region and at bin boundaries, between the bin's two bounds elsewhere;
//! - HOTL's curve from binned reuse times never rises either.

use cachescope::analysis::Analysis;
use cachescope::batch::Batch;
use cachescope::models::hotl::{self, FootprintAnalysis};
use cachescope::reuse::{self, Layout, StackDistanceAnalysis};
use cachescope::{Access, LineSize};
use proptest::prelude::*;

/// Traces of 3000-8000 references over 300-3000 lines: sweeps of a span (reuses at the
/// span's distance, hundreds to thousands of lines) mixed with random references.
fn traces() -> impl Strategy<Value = Vec<u64>> {
    (300u64..3000, 3000usize..8000, any::<u64>()).prop_map(|(lines, len, seed)| {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut trace = Vec::with_capacity(len);
        while trace.len() < len {
            let span = 1 + next() % lines;
            let start = next() % lines;
            if next() % 3 == 0 {
                trace.extend((0..span.min(200)).map(|_| next() % lines));
            } else {
                trace.extend((0..span).map(|i| (start + i) % lines));
            }
        }
        trace.truncate(len);
        trace
    })
}

fn batch_of(lines: &[u64]) -> Batch {
    lines.iter().map(|&l| Access::load(l * 64, 8)).collect()
}

/// Options with the exact region ending at 256 lines.
fn binned() -> reuse::Options {
    reuse::Options {
        line_size: LineSize::new(64).unwrap(),
        layout: Layout::new(8).unwrap(),
        ..reuse::Options::default()
    }
}

/// Each reference's LRU stack distance from a recency list (most recent first); `None` for
/// a first reference.
fn brute_stack_distances(trace: &[u64]) -> Vec<Option<u64>> {
    let mut recency: Vec<u64> = Vec::new();
    trace
        .iter()
        .map(|&line| {
            let at = recency.iter().position(|&l| l == line);
            if let Some(at) = at {
                recency.remove(at);
            }
            recency.insert(0, line);
            at.map(|d| d as u64)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn binned_lru_curve_never_rises_and_brackets_brute_force(trace in traces()) {
        let mut a = StackDistanceAnalysis::new(binned());
        a.observe(&batch_of(&trace));
        let sd = a.finish();
        let brute = brute_stack_distances(&trace);
        let distinct = brute.iter().filter(|d| d.is_none()).count() as u64;
        let largest = brute.iter().flatten().max().copied().unwrap_or(0);
        prop_assume!(largest >= 1024, "no distance past the exact region's fourth octave");
        let cold = distinct;
        let mut exact_at_boundaries = 0;
        for lines in 1..=distinct + 2 {
            let want = cold + brute.iter().flatten().filter(|&&d| d >= lines).count() as u64;
            let got = sd.misses(lines);
            prop_assert!(
                got.low <= want && want <= got.high,
                "{lines} lines: brute force {want}, binned {got:?}"
            );
            prop_assert!(
                (got.low as f64..=got.high as f64).contains(&got.estimate),
                "{lines} lines: {got:?}"
            );
            if lines <= 256 {
                prop_assert!(got.low == want && got.high == want, "{lines} lines: {got:?}");
            }
            if got.low == got.high {
                prop_assert_eq!(got.low, want, "{} lines", lines);
                exact_at_boundaries += u64::from(lines > 256);
            }
        }
        // Bin boundaries above the exact region were reached, and were exact there.
        prop_assert!(exact_at_boundaries > 0);
        let sizes: Vec<u64> = (1..=distinct + 2).map(|l| l * 64).collect();
        let curve = sd.mrc(&sizes);
        for pair in curve.points.windows(2) {
            prop_assert!(
                pair[1].miss_ratio_warm <= pair[0].miss_ratio_warm,
                "{:?} then {:?}", pair[0], pair[1]
            );
            prop_assert!(pair[1].miss_ratio <= pair[0].miss_ratio);
        }
        prop_assert_eq!(curve.points.last().unwrap().miss_ratio_warm, 0.0);
    }

    #[test]
    fn binned_hotl_curve_never_rises(trace in traces()) {
        let mut a = FootprintAnalysis::new(binned(), &[]).unwrap();
        a.observe(&batch_of(&trace));
        let distinct = trace.iter().collect::<std::collections::HashSet<_>>().len() as u64;
        let sizes: Vec<u64> = (1..=distinct + 2).map(|l| l * 64).collect();
        let curve = hotl::mrc(&a.finish(), &sizes);
        for pair in curve.points.windows(2) {
            prop_assert!(
                pair[1].miss_ratio_warm <= pair[0].miss_ratio_warm + 1e-12,
                "{:?} then {:?}", pair[0], pair[1]
            );
        }
        for p in &curve.points {
            prop_assert!((0.0..=1.0 + 1e-12).contains(&p.miss_ratio_warm), "{:?}", p);
        }
    }
}
