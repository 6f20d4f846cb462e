//! The L2 model: hand-computed values of each equation, parameter errors, and the model
//! against the exact two-level simulation on synthetic workloads.

use cachescope::Batch;
use cachescope::analysis::Analysis;
use cachescope::models::l2::{L1Histogram, L2Model, TwoLevelAnalysis, Variant, l2_mrc};
use cachescope::reuse::{Options, StackDistanceAnalysis};
use cachescope::sampling::{Sampler, SamplerOptions};
use cachescope::sim::Policy;
use cachescope::trace::AccessReader;
use cachescope::workloads::{Params, Workload, generator};
use cachescope::{Access, Error};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// H(0) = 2, H(1) = 1, H(3) = 1, 2 cold references, L1 of 2 lines.
fn tiny() -> L1Histogram {
    L1Histogram::from_masses(64, 2.0, &[(0, 1, 2.0), (1, 1, 1.0), (3, 1, 1.0)]).unwrap()
}

#[test]
fn paper_equations_by_hand() {
    let h = tiny();
    let m = L2Model::new(&h, 2, Variant::Paper).unwrap();
    // T(1) = 2, T(2) = T(3) = 1, T(4) = 0.
    assert!(close(m.reuses_at_least(1), 2.0) && close(m.reuses_at_least(4), 0.0));
    // Eq. 3 (right side up): P_1 = T(2)/T(1) = 1/2; 1 from l = 2 on.
    assert!(close(m.p_m(1), 0.5) && close(m.p_m(2), 1.0) && close(m.p_m(7), 1.0));
    // Eq. 4: Σ P_m T(m) / Σ T(m) = (½·2 + 1 + 1) / (2 + 1 + 1) = 3/4.
    assert!(close(m.p_m_avg(), 0.75));
    // Eq. 5: the paper's example, k = 3, l = 2: 1/6.
    assert!(close(m.p_y(3), 1.0 / 6.0));
    assert!(close(m.p_y(1), 0.0));
    // Eq. 7: H(3)·(1/T(1) + 1/T(2)) = 1.5 ≥ 1, so E[x] is its limit P_y.
    assert!(close(m.p_e1(3), 1.5));
    assert!(close(m.expected_x(3), 1.0 / 6.0));
    // r | k = 3: Binomial(3, 3/4) + E[x].
    assert!(close(m.mean_misses(3), 2.25 + 1.0 / 6.0));
    // Eq. 2: one epoch at k = 3 (the only k ≥ 2): total weight T(2) = 1, mean r as above.
    let hr = m.reuse_histogram();
    let w: f64 = hr.iter().map(|&(_, w)| w).sum();
    let mean: f64 = hr.iter().map(|&(r, w)| r as f64 * w).sum();
    assert!((w - 1.0).abs() < 1e-12, "{hr:?}");
    assert!((mean - (2.25 + 1.0 / 6.0)).abs() < 1e-9, "{hr:?}");
    // Binomial(3, 3/4) shifted by 1/6: P(r = 0) = (1/4)^3·5/6.
    assert!(
        (hr[0].1 - 0.25f64.powi(3) * 5.0 / 6.0).abs() < 1e-12,
        "{hr:?}"
    );
}

#[test]
fn geometric_embedded_epochs() {
    // One mass at k = 9 wide enough that q = P_e(9, 1) < 1: H(9) = 1 among 100 at sd 0..8.
    let mut masses: Vec<(u64, u64, f64)> = (0..9).map(|k| (k, 1, 11.0)).collect();
    masses.push((9, 1, 1.0));
    let h = L1Histogram::from_masses(64, 0.0, &masses).unwrap();
    let m = L2Model::new(&h, 4, Variant::Paper).unwrap();
    // T(s) = 11·(9 − s) + 1 for s ≤ 9.
    let q: f64 = (1..9).map(|s| 1.0 / (11.0 * (9 - s) as f64 + 1.0)).sum();
    assert!((m.p_e1(9) - q).abs() < 1e-12);
    assert!(q < 1.0);
    // P_y(9) with l = 4: 5·6·7/(3·9·10) = 210/270 < 1: E[min(n, P_y)] = P_y·P(n ≥ 1) = P_y·q.
    let py = 210.0 / 270.0;
    assert!(close(m.p_y(9), py));
    assert!((m.expected_x(9) - py * q).abs() < 1e-12);
}

#[test]
fn footprint_variant_by_hand() {
    let h = tiny();
    let m = L2Model::new(&h, 2, Variant::Footprint).unwrap();
    // M(s) = cold + T(s): M(1) = 4, M(2) = M(3) = 3.
    assert!(close(m.misses_at_least(1), 4.0) && close(m.misses_at_least(3), 3.0));
    assert!(close(m.p_m(1), 0.75));
    // P̄ = P_1 = 3/4; mean r | k=3 = M(2)·(1/M(1) + 1/M(2) + 1/M(3)) = 3·(1/4 + 2/3) = 2.75.
    assert!(close(m.p_m_avg(), 0.75));
    assert!(close(m.mean_misses(3), 2.75));
    // Resident misses: Σ_{f<2} (T(f) − T(2))/M(f) = (2 − 1)/4.
    let r = L2Model::new(&h, 2, Variant::FootprintResident).unwrap();
    assert!(close(r.resident_misses(), 0.25));
    assert!(close(r.mean_misses(3), 3.0));
    assert!(close(m.resident_misses(), 0.0));
}

fn run_workload(w: Workload, p: &Params, analyses: &mut [&mut dyn Analysis]) {
    let mut g = generator(w, p).unwrap();
    let mut batch = Batch::new();
    while g.read_batch(&mut batch).unwrap() > 0 {
        for a in analyses.iter_mut() {
            a.observe(&batch);
        }
    }
}

#[test]
fn a_loop_is_modelled_exactly() {
    // A loop over 3000 lines misses a 512-line L1 every time; the L2 sees the same loop.
    let p = Params {
        lines: 3000,
        refs: Some(60_000),
        ..Params::default()
    };
    let sizes = [2048 * 64, 2999 * 64, 3000 * 64, 4096 * 64];
    let mut sd = StackDistanceAnalysis::new(Options::default());
    let mut sim = TwoLevelAnalysis::new(64, 512, &sizes, Policy::Lru).unwrap();
    run_workload(Workload::Loop, &p, &mut [&mut sd, &mut sim]);
    let truth = sim.finish();
    assert_eq!(truth.l1_misses, 60_000);
    assert_eq!(truth.cold, 3000);
    // Every L2 reuse has 2999 L2 references in between.
    assert_eq!(
        truth.l2_reuse.bins().map(|b| b.start).collect::<Vec<_>>(),
        [2999]
    );
    let h = L1Histogram::from_stack_distances(&sd.finish());
    for v in [Variant::Footprint, Variant::FootprintResident] {
        let model = l2_mrc(&h, 512, &sizes, Policy::Lru, v).unwrap();
        for (m, t) in model.points.iter().zip(&truth.mrc().points) {
            assert!((m.miss_ratio.unwrap() - t.miss_ratio.unwrap()).abs() < 1e-12);
            assert!((m.miss_ratio_warm - t.miss_ratio_warm).abs() < 1e-12);
        }
        let hr = L2Model::new(&h, 512, v).unwrap().reuse_histogram();
        assert_eq!(hr.len(), 1);
        assert_eq!(hr[0].0, 2999);
    }
    // The paper's reading adds E[x] > 0 embedded misses that a loop does not have.
    let paper = L2Model::new(&h, 512, Variant::Paper).unwrap();
    assert!(paper.mean_misses(2999) > 2999.5);
}

/// Mean absolute error of the model's `miss_ratio` against the simulation, over `sizes`.
fn mean_error(w: Workload, p: &Params, policy: Policy, variant: Variant) -> f64 {
    let sizes = [128 << 10, 256 << 10, 512 << 10, 1 << 20];
    let mut sd = StackDistanceAnalysis::new(Options::default());
    let mut sim = TwoLevelAnalysis::new(64, 512, &sizes, policy).unwrap();
    run_workload(w, p, &mut [&mut sd, &mut sim]);
    let h = L1Histogram::from_stack_distances(&sd.finish());
    let model = l2_mrc(&h, 512, &sizes, policy, variant).unwrap();
    let truth = sim.finish().mrc();
    let errs: Vec<f64> = model
        .points
        .iter()
        .zip(&truth.points)
        .map(|(m, t)| (m.miss_ratio.unwrap() - t.miss_ratio.unwrap()).abs())
        .collect();
    errs.iter().sum::<f64>() / errs.len() as f64
}

#[test]
fn corrected_model_tracks_the_two_level_simulation() {
    let zipf = Params {
        lines: 32768,
        refs: Some(500_000),
        ..Params::default()
    };
    let stencil = Params {
        n: 32,
        ..Params::default()
    };
    // Measured (tests/l2_accuracy.rs): 0.000–0.013 for the corrected variants on these.
    for (w, p) in [(Workload::Zipf, &zipf), (Workload::Stencil, &stencil)] {
        let lru = mean_error(w, p, Policy::Lru, Variant::FootprintResident);
        assert!(lru < 0.02, "{w} lru: {lru}");
        let rnd = mean_error(w, p, Policy::Random { seed: 3 }, Variant::Footprint);
        assert!(rnd < 0.03, "{w} random: {rnd}");
    }
    // On Zipf the corrected reading beats the printed one by a wide margin.
    let paper = mean_error(Workload::Zipf, &zipf, Policy::Lru, Variant::Paper);
    let fixed = mean_error(Workload::Zipf, &zipf, Policy::Lru, Variant::Footprint);
    assert!(fixed < paper / 3.0, "{fixed} vs {paper}");
}

#[test]
fn sampled_profile_gives_a_close_l1_histogram() {
    let p = Params {
        lines: 32768,
        refs: Some(1_000_000),
        ..Params::default()
    };
    let sizes = [256 << 10, 1 << 20];
    let mut sd = StackDistanceAnalysis::new(Options::default());
    let mut sampler = Sampler::new(SamplerOptions {
        rate: 0.01,
        ..SamplerOptions::default()
    })
    .unwrap();
    run_workload(Workload::Zipf, &p, &mut [&mut sd, &mut sampler]);
    let exact = L1Histogram::from_stack_distances(&sd.finish());
    let sampled = L1Histogram::from_profile(&sampler.finish()).unwrap();
    assert!(sampled.cold > 0.0 && sampled.refs > sampled.cold);
    let a = l2_mrc(&exact, 512, &sizes, Policy::Lru, Variant::Footprint).unwrap();
    let b = l2_mrc(&sampled, 512, &sizes, Policy::Lru, Variant::Footprint).unwrap();
    for (x, y) in a.points.iter().zip(&b.points) {
        assert!(
            (x.miss_ratio_warm - y.miss_ratio_warm).abs() < 0.05,
            "{x:?} vs {y:?}"
        );
    }
}

#[test]
fn parameter_errors_are_typed() {
    let h = tiny();
    let invalid = |r: Result<_, Error>| matches!(r, Err(Error::InvalidParameter { .. }));
    assert!(invalid(L2Model::new(&h, 0, Variant::Paper).map(|_| ())));
    assert!(invalid(
        l2_mrc(&h, 0, &[1 << 20], Policy::Lru, Variant::Paper).map(|_| ())
    ));
    // An L2 of less than one line.
    assert!(invalid(
        l2_mrc(&h, 2, &[32], Policy::Lru, Variant::Paper).map(|_| ())
    ));
    assert!(invalid(
        l2_mrc(&h, 2, &[0], Policy::Lru, Variant::Paper).map(|_| ())
    ));
    assert!(invalid(
        l2_mrc(&h, 2, &[4096], Policy::Fifo, Variant::Paper).map(|_| ())
    ));
    assert!(invalid(
        TwoLevelAnalysis::new(64, 0, &[4096], Policy::Lru).map(|_| ())
    ));
    assert!(invalid(
        TwoLevelAnalysis::new(64, 8, &[0], Policy::Lru).map(|_| ())
    ));
    assert!(invalid(
        TwoLevelAnalysis::new(48, 8, &[4096], Policy::Lru).map(|_| ())
    ));
    assert!(invalid(
        L1Histogram::from_masses(64, 0.0, &[(0, 2, 1.0), (1, 1, 1.0)]).map(|_| ())
    ));
    assert!(invalid(L1Histogram::from_masses(64, -1.0, &[]).map(|_| ())));
    // An L2 no larger than the L1 is accepted by both the model and the simulation.
    assert!(l2_mrc(&h, 2, &[64, 128], Policy::Lru, Variant::Footprint).is_ok());
    let mut sim = TwoLevelAnalysis::new(64, 4, &[128], Policy::Lru).unwrap();
    let batch: Batch = [0u64, 64, 128, 192, 256, 0]
        .map(|a| Access::load(a, 8))
        .into_iter()
        .collect();
    sim.observe(&batch);
    let r = sim.finish();
    // 5 lines through a 4-line L1: all 6 references miss; the 2-line L2 misses all too.
    assert_eq!((r.l1_misses, r.cold, r.l2_misses[0]), (6, 5, 6));
    assert_eq!(
        r.l2_reuse
            .bins()
            .map(|b| (b.start, b.count))
            .collect::<Vec<_>>(),
        [(4, 1)]
    );
}

#[test]
fn an_l1_that_never_misses_gives_an_empty_l2_stream() {
    // Everything at sd 0, no cold: no L2 reference at all; ratios are 0, not NaN.
    let h = L1Histogram::from_masses(64, 0.0, &[(0, 1, 10.0)]).unwrap();
    for v in Variant::ALL {
        for p in [Policy::Lru, Policy::Random { seed: 1 }] {
            let m = l2_mrc(&h, 4, &[4096], p, v).unwrap();
            assert_eq!(m.points[0].miss_ratio, Some(0.0));
            assert_eq!(m.points[0].miss_ratio_warm, 0.0);
        }
    }
}

/// With every reuse sampled (rate 1) and every window measured (a trace shorter than the
/// ring), the time-local histogram holds each reuse at its exact stack distance: at every
/// cache size its reuses at that distance or further are brute force's count, and its first
/// references the distinct lines. The whole-run estimate does not (a cliff it smooths).
#[test]
fn the_local_histogram_of_measured_windows_is_exact() {
    let mut state = 7u64;
    let mut lines = Vec::new();
    // Two working sets in turn, 24 and 48 lines, cycled: sharp cliffs.
    for phase in 0..6u64 {
        let n = if phase % 2 == 0 { 24 } else { 48 };
        for k in 0..600u64 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lines.push(if (state >> 60) == 0 {
                100 + (state >> 40) % 8
            } else {
                k % n
            });
        }
    }
    let batch: Batch = lines.iter().map(|&l| Access::load(l * 64, 4)).collect();
    let options = SamplerOptions {
        rate: 1.0,
        ..SamplerOptions::default()
    };
    let mut sampler = Sampler::new(options).unwrap().with_windows();
    sampler.observe(&batch);
    let profile = sampler.finish();
    let local = L1Histogram::from_local_profile(&profile).unwrap();
    let whole = L1Histogram::from_profile(&profile).unwrap();
    // Brute force: each reuse's distinct lines strictly between its two references.
    let mut distances = Vec::new();
    let mut last = std::collections::HashMap::new();
    for (i, &l) in lines.iter().enumerate() {
        if let Some(&j) = last.get(&l) {
            let between: std::collections::HashSet<u64> = lines[j + 1..i].iter().copied().collect();
            distances.push(between.len() as u64);
        }
        last.insert(l, i);
    }
    let at_least = |h: &L1Histogram, c: u64| -> f64 {
        h.masses
            .iter()
            .filter(|m| m.sd >= c)
            .map(|m| m.weight)
            .sum()
    };
    assert_eq!(local.cold, last.len() as f64);
    let mut whole_off = 0.0f64;
    for c in 1..=60u64 {
        let want = distances.iter().filter(|&&d| d >= c).count() as f64;
        assert_eq!(at_least(&local, c), want, "{c} lines");
        whole_off = whole_off.max((at_least(&whole, c) - want).abs());
    }
    assert!(
        whole_off >= 50.0,
        "the whole-run estimate reads {whole_off} off at most"
    );
}
