//! `ji-l2-fills`, random replacement: small cases against the generating functions written
//! out by hand, a loop that fits (no fill evicts anything), LRU unchanged, and the model
//! against the exact two-level random simulation on random synthetic workloads.

use cachescope::analysis::Analysis;
use cachescope::models::l2::{L1Histogram, TwoLevelAnalysis, Variant, l2_mrc};
use cachescope::reuse::{Options, StackDistanceAnalysis};
use cachescope::sim::Policy;
use cachescope::trace::AccessReader;
use cachescope::workloads::{Params, Workload, generator};
use cachescope::{Access, Batch};
use proptest::prelude::*;

const RANDOM: Policy = Policy::Random { seed: 7 };

fn fills(h: &L1Histogram, l1: u64, l2_lines: u64) -> f64 {
    let m = l2_mrc(h, l1, &[l2_lines * 64], RANDOM, Variant::Fills).unwrap();
    m.points[0].miss_ratio.unwrap()
}

/// The root of `R·ml = misses(z)`, `z = (1 − 1/C)^(R − min(C, cold)/ml)`, by bisection.
fn solve(ml: f64, cold: f64, c: f64, misses: impl Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..60 {
        let r = 0.5 * (lo + hi);
        let z = (1.0 - 1.0 / c).powf((r - c.min(cold) / ml).max(0.0));
        if misses(z) > r * ml { lo = r } else { hi = r }
    }
    0.5 * (lo + hi)
}

#[test]
fn one_line_l1_makes_every_epoch_a_sure_count() {
    // L1 of 1 line: M(f) = cold + w for f ≤ k, so every stage is one sure miss: r = k.
    let (cold, w, k) = (30.0, 500.0, 40u64);
    let h = L1Histogram::from_masses(64, cold, &[(k, 1, w)]).unwrap();
    for c in [8.0, 32.0, 64.0] {
        let want = solve(cold + w, cold, c, |z| cold + w * (1.0 - z.powi(k as i32)));
        let got = fills(&h, 1, c as u64);
        assert!((got - want).abs() < 1e-9, "C {c}: {got} vs {want}");
    }
}

#[test]
fn bernoulli_stages_and_the_resident_chain_by_hand() {
    // L1 of 2 lines; H(1) = a (hits the L1), H(3) = b, cold c. M(1) = c + a + b,
    // M(2) = M(3) = c + b. Epoch k = 3: stage 1 misses with q = M(2)/M(1), stages 2–3 surely.
    // Before it the line sat in the L1 through hits of distance 1, each with stage 1.
    let (a, b, c) = (300.0, 200.0, 25.0);
    let h = L1Histogram::from_masses(64, c, &[(1, 1, a), (3, 1, b)]).unwrap();
    let (n, ml) = (a + b + c, b + c);
    let q = ml / n;
    for lines in [4.0, 16.0, 40.0] {
        let want = solve(ml, c, lines, |z| {
            let stage1 = 1.0 - q + q * z;
            let before = ml / (n - a * stage1);
            ml - before * b * stage1 * z * z
        });
        let got = fills(&h, 2, lines as u64);
        assert!((got - want).abs() < 1e-9, "C {lines}: {got} vs {want}");
    }
}

#[test]
fn a_loop_that_fits_the_l2_misses_only_cold() {
    // 1000 lines, 100 times, through a 512-line L1: r = 999 always. A 1024-line random L2
    // fills its free lines and never evicts: 1000 cold misses out of 100 000 references.
    let h = L1Histogram::from_masses(64, 1000.0, &[(999, 1, 99_000.0)]).unwrap();
    assert!((fills(&h, 512, 1024) - 0.01).abs() < 1e-9);
    // StatCache counts every miss as an eviction and predicts more (the old reading).
    let old = l2_mrc(&h, 512, &[1024 * 64], RANDOM, Variant::FootprintResident).unwrap();
    assert!(old.points[0].miss_ratio.unwrap() > 0.02);
    // And the exact simulation agrees with the new one.
    let mut sim = TwoLevelAnalysis::new(64, 512, &[1024 * 64], RANDOM).unwrap();
    let batch: Batch = (0..100u64)
        .flat_map(|_| (0..1000u64).map(|x| Access::load(x * 64, 8)))
        .collect();
    sim.observe(&batch);
    assert_eq!(sim.finish().mrc().points[0].miss_ratio, Some(0.01));
}

#[test]
fn lru_is_the_resident_reading() {
    let h =
        L1Histogram::from_masses(64, 40.0, &[(1, 1, 300.0), (3, 1, 200.0), (9, 4, 80.0)]).unwrap();
    let sizes = [64 * 4, 64 * 8];
    let a = l2_mrc(&h, 2, &sizes, Policy::Lru, Variant::Fills).unwrap();
    let b = l2_mrc(&h, 2, &sizes, Policy::Lru, Variant::FootprintResident).unwrap();
    assert_eq!(a.points, b.points);
    assert_eq!(
        (a.method.as_str(), Variant::default()),
        ("ji-l2-fills", Variant::Fills)
    );
}

/// Mean absolute error of `ji-l2-fills` (and of `ji-l2-resident`) against the two-level
/// random simulation, L1 of 64 lines, L2s of 128–1024 lines.
fn errors(w: Workload, p: &Params) -> (f64, f64) {
    let sizes = [128 * 64, 256 * 64, 512 * 64, 1024 * 64];
    let mut sd = StackDistanceAnalysis::new(Options::default());
    let mut sim = TwoLevelAnalysis::new(64, 64, &sizes, RANDOM).unwrap();
    let mut g = generator(w, p).unwrap();
    let mut batch = Batch::new();
    while g.read_batch(&mut batch).unwrap() > 0 {
        sd.observe(&batch);
        sim.observe(&batch);
    }
    let h = L1Histogram::from_stack_distances(&sd.finish());
    let truth = sim.finish().mrc();
    let err = |v| {
        let m = l2_mrc(&h, 64, &sizes, RANDOM, v).unwrap();
        let d = m.points.iter().zip(&truth.points);
        d.map(|(a, b)| (a.miss_ratio.unwrap() - b.miss_ratio.unwrap()).abs())
            .sum::<f64>()
            / sizes.len() as f64
    };
    (err(Variant::Fills), err(Variant::FootprintResident))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn tracks_the_two_level_random_simulation(
        w in prop::sample::select(vec![Workload::Zipf, Workload::Random, Workload::Loop]),
        lines in 200u64..1600,
        seed in 0u64..1000,
    ) {
        let p = Params { lines, refs: Some(60_000), seed, ..Params::default() };
        let (new, old) = errors(w, &p);
        prop_assert!(new < 0.02, "{w} {lines} lines: fills {new}, resident {old}");
        // Not always below resident on streams this short (zipf, 1565 lines: 1.5 vs 0.9 pp).
        prop_assert!(new < old + 0.01, "{w} {lines} lines: fills {new}, resident {old}");
    }
}
