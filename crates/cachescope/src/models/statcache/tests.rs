//! The root finder against plain bisection, the degenerate cases, slot averaging by hand, and
//! the model at rate 1 against the exact random-replacement simulation.

use proptest::prelude::*;

use super::*;
use crate::access::Access;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::reuse::{Options, RandomReplacementAnalysis};
use crate::sampling::{NextUse, Sample, Sampler, SamplerOptions};
use crate::trace::AccessReader;
use crate::workloads::{Params, Workload, generator};

/// `f(n)` straight from eq. 1.
fn f(lines: f64, n: f64) -> f64 {
    1.0 - (1.0 - 1.0 / lines).powf(n)
}

/// The reference root: the largest `R` in `(0, 1]` where `(N + D)·R ≤ Σ h f(kR) + D`, by 200
/// bisection steps on the sign of `Σ h f(kR) + D − (N + D)·R`, with `f` from [`f`].
fn bisection(hist: &[(u64, f64)], dangling: f64, lines: f64) -> f64 {
    let total: f64 = hist.iter().map(|&(_, w)| w).sum::<f64>() + dangling;
    let g = |r: f64| {
        hist.iter()
            .map(|&(k, w)| w * f(lines, k as f64 * r))
            .sum::<f64>()
            + dangling
            - total * r
    };
    if total == 0.0 || g(1.0) >= 0.0 {
        return if total == 0.0 { 0.0 } else { 1.0 };
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if g(mid) > 0.0 { lo = mid } else { hi = mid }
    }
    lo
}

proptest! {
    #[test]
    fn solver_agrees_with_bisection(
        hist in proptest::collection::vec((0u64..1_000_000, 0.0f64..10.0), 1..40),
        dangling in prop_oneof![Just(0.0), 0.0f64..20.0],
        lines in 1.0f64..100_000.0,
    ) {
        let r = miss_ratio(&hist, dangling, lines);
        let b = bisection(&hist, dangling, lines);
        prop_assert!((0.0..=1.0).contains(&r));
        // Near R = 0 the bisection's g loses precision (f(kR) ~ kR/L): compare loosely there.
        prop_assert!((r - b).abs() < 1e-7, "Illinois {r}, bisection {b}");
    }
}

#[test]
fn degenerate_cases() {
    // Nothing at all, or only cold references.
    assert_eq!(miss_ratio(&[], 0.0, 100.0), 0.0);
    assert_eq!(miss_ratio(&[(5, 0.0)], 0.0, 100.0), 0.0);
    assert_eq!(miss_ratio(&[], 5.0, 100.0), 1.0);
    // R = 0: only immediate reuses, or reuses too short to sustain misses (c·Σhk < N).
    assert_eq!(miss_ratio(&[(0, 10.0)], 0.0, 1.0), 0.0);
    assert_eq!(miss_ratio(&[(5, 1.0)], 0.0, 100.0), 0.0);
    assert_eq!(miss_ratio(&[(99, 1.0)], 0.0, 100.0), 0.0);
    // One line: every reuse with something in between misses.
    assert_eq!(miss_ratio(&[(0, 1.0), (3, 2.0), (10, 1.0)], 0.0, 1.0), 0.75);
    // Less than a line: everything misses; NaN in, NaN out.
    assert_eq!(miss_ratio(&[(0, 1.0)], 0.0, 0.5), 1.0);
    assert_eq!(miss_ratio(&[(0, 1.0)], 0.0, 0.0), 1.0);
    assert!(miss_ratio(&[(0, 1.0)], 0.0, f64::NAN).is_nan());
    // An infinite cache: only the cold references miss.
    assert_eq!(miss_ratio(&[(7, 3.0)], 0.0, f64::INFINITY), 0.0);
    assert!((miss_ratio(&[(7, 3.0)], 1.0, f64::INFINITY) - 0.25).abs() < 1e-12);
}

#[test]
fn one_distance_is_a_fixed_point_for_any_line_count() {
    // All reuses at k: R = f(k·R). Lines need not be powers of two, nor whole.
    for lines in [100.0, 100.5, 3.0, 1e6] {
        let k = (3.0 * lines) as u64;
        let r = miss_ratio(&[(k, 4.0)], 0.0, lines);
        assert!(r > 0.5, "{lines}: {r}");
        assert!((r - f(lines, k as f64 * r)).abs() < 1e-9, "{lines}: {r}");
    }
    // A larger cache misses less.
    let hist = [(50, 1.0), (500, 1.0), (5000, 1.0)];
    let rs: Vec<f64> = [16.0, 64.0, 100.0, 256.0, 1024.0]
        .iter()
        .map(|&l| miss_ratio(&hist, 0.0, l))
        .collect();
    assert!(rs.windows(2).all(|w| w[0] > w[1]), "{rs:?}");
}

/// Options of a hand-made profile.
fn hand_options(slot_refs: u64) -> SamplerOptions {
    SamplerOptions {
        rate: 0.5,
        slot_refs,
        ..SamplerOptions::default()
    }
}

#[test]
fn slots_are_solved_apart_and_summed_over_all_samples() {
    let reuse = |position, distance| Sample {
        position,
        next: NextUse::Reuse { distance },
    };
    let dangling = |position| Sample {
        position,
        next: NextUse::Dangling { age: 20 - position },
    };
    // Slots of 10: reuses ending at 5 (slot 0), 18 and 14 (slot 1); dangling 2 (slot 0).
    let samples = vec![reuse(1, 3), dangling(2), reuse(12, 5), reuse(13, 0)];
    let p = Profile::new(hand_options(10), 20, samples).unwrap();
    let sizes = [64, 128, 4 * 64, 1000 * 64];
    let m = mrc(&p, &sizes, Cold::Exclude).unwrap();
    let e = mrc(&p, &sizes, Cold::Estimate).unwrap();
    assert_eq!(
        (m.method.as_str(), m.policy.as_str()),
        ("statcache", "random")
    );
    for ((pm, pe), &size) in m.points.iter().zip(&e.points).zip(&sizes) {
        let l = (size / 64) as f64;
        let h0 = [(3, 1.0)];
        let h1 = [(0, 1.0), (5, 1.0)];
        let warm = (miss_ratio(&h0, 0.0, l) + 2.0 * miss_ratio(&h1, 0.0, l)) / 4.0;
        assert!((pm.miss_ratio_warm - warm).abs() < 1e-15);
        assert_eq!(pm.miss_ratio, None);
        assert_eq!(pm.lines, size / 64);
        let all0 = 2.0 * miss_ratio(&h0, 1.0, l);
        let all1 = 2.0 * miss_ratio(&h1, 0.0, l);
        let all = (all0 + all1) / 4.0;
        assert!((pe.miss_ratio.unwrap() - all).abs() < 1e-15);
        assert!((pe.miss_ratio_warm - (all0 - 1.0 + all1) / 4.0).abs() < 1e-15);
    }
    // One line: slot 1's reuse at distance 0 hits, the others miss.
    assert_eq!(m.points[0].miss_ratio_warm, 2.0 / 4.0);
}

#[test]
fn empty_profiles_and_all_cold_profiles() {
    let p = Profile::new(hand_options(10), 50, vec![]).unwrap();
    let e = mrc(&p, &[1024], Cold::Exclude).unwrap_err().to_string();
    assert!(e.contains("no samples in 50 references"), "{e}");
    // A stream: every sample dangles; no warm miss, and every reference is a cold miss.
    let mut s = Sampler::new(SamplerOptions {
        rate: 0.1,
        ..SamplerOptions::default()
    })
    .unwrap();
    let batch: Batch = (0..10_000u64).map(|l| Access::load(l * 64, 8)).collect();
    s.observe(&batch);
    let p = s.finish();
    assert_eq!(p.reuses(), 0);
    for point in mrc(&p, &[0, 64, 1 << 20], Cold::Estimate).unwrap().points {
        assert_eq!((point.miss_ratio, point.miss_ratio_warm), (Some(1.0), 0.0));
    }
}

/// The whole data-reference trace of a workload, as batches.
pub(crate) fn workload_batches(w: Workload, p: &Params) -> Vec<Batch> {
    let mut g = generator(w, p).unwrap();
    let mut out = Vec::new();
    loop {
        let mut b = Batch::new();
        if g.read_batch(&mut b).unwrap() == 0 {
            return out;
        }
        out.push(b);
    }
}

#[test]
fn rate_one_follows_the_exact_random_cache() {
    // Uniform random lines over 512 lines (32 KiB), 131 072 references, every one sampled:
    // the model against one seeded simulation, cold misses excluded on both sides.
    let params = Params {
        lines: 512,
        refs: Some(1 << 17),
        ..Params::default()
    };
    let batches = workload_batches(Workload::Random, &params);
    let sizes: Vec<u64> = (1..=10).map(|i| i * 4096).collect();
    let mut sampler = Sampler::new(SamplerOptions {
        rate: 1.0,
        ..SamplerOptions::default()
    })
    .unwrap();
    let mut exact = RandomReplacementAnalysis::new(Options::default(), &sizes, 3);
    for b in &batches {
        sampler.observe(b);
        exact.observe(b);
    }
    let model = mrc(&sampler.finish(), &sizes, Cold::Exclude).unwrap();
    let exact = exact.finish();
    for (m, x) in model.points.iter().zip(&exact.points) {
        // Steady state of a uniform stream: the model is within half a percentage point.
        assert!(
            (m.miss_ratio_warm - x.miss_ratio_warm).abs() < 0.005,
            "{} lines: model {}, exact {}",
            m.lines,
            m.miss_ratio_warm,
            x.miss_ratio_warm
        );
    }
}

/// The two-tangent solver against the regula falsi one it replaced (`reference`), to 10^−9
/// relative; near `R = 0` the reference's own 10^−12 bracket is the limit.
fn agrees_with_reference(hist: &[(u64, f64)], dangling: f64, lines: f64) -> Result<(), String> {
    let r = miss_ratio(hist, dangling, lines);
    let old = super::reference::miss_ratio(hist, dangling, lines);
    if (r - old).abs() <= 1e-9 * old.abs().max(r.abs()) + 1e-12 {
        Ok(())
    } else {
        Err(format!(
            "{lines} lines, {dangling} dangling: new {r}, old {old}"
        ))
    }
}

proptest! {
    #[test]
    fn solver_agrees_with_the_regula_falsi_reference(
        hist in proptest::collection::vec((0u64..10_000_000, 0.0f64..10.0), 1..200),
        dangling in prop_oneof![Just(0.0), 0.0f64..20.0],
        lines in prop_oneof![1.0f64..2.0, 1.0f64..100_000.0, 1e5f64..1e8],
    ) {
        prop_assert_eq!(agrees_with_reference(&hist, dangling, lines), Ok(()));
    }
}

#[test]
fn solver_agrees_with_the_reference_on_sampled_workloads() {
    // Real sampled histograms: every slot of two generated workloads at every size of a curve.
    for workload in [Workload::Zipf, Workload::Phases] {
        let params = Params {
            lines: 4096,
            refs: Some(1 << 18),
            ..Params::default()
        };
        let mut sampler = Sampler::new(SamplerOptions {
            rate: 0.01,
            slot_refs: 1 << 16,
            ..SamplerOptions::default()
        })
        .unwrap();
        for b in &workload_batches(workload, &params) {
            sampler.observe(b);
        }
        let p = sampler.finish();
        for slot in p.slot_histograms() {
            for lines in (0..24).map(|e| 2f64.powi(e)).chain([3.0, 100.5, 1e7]) {
                for d in [0.0, slot.dangling as f64] {
                    assert_eq!(agrees_with_reference(&slot.reuses, d, lines), Ok(()));
                }
            }
        }
    }
}
