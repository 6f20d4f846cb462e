//! HOTL's diagnostics: the direct fill time (Appendix A, §4.4), the reuse-window hypothesis
//! check (§2.7) and footprint sampling (§3), each against brute force or the exact analysis.

use std::collections::HashSet;

use cachescope::analysis::Analysis;
use cachescope::models::hotl::{
    self, DirectFillTimeAnalysis, Filmer, Footprint, FootprintAnalysis, FootprintSampler,
    ReuseWindowAnalysis, ReuseWindowCheck, SamplingOptions,
};
use cachescope::reuse::{Options, sizes_log_range};
use cachescope::workloads::{Params, Workload};
use cachescope::{Access, Batch};
use proptest::prelude::*;

mod common;
use common::workload_batches as batches;

fn batch_of(lines: &[u64]) -> Batch {
    lines.iter().map(|&l| Access::load(l * 64, 8)).collect()
}

fn footprint_of(batches: &[Batch]) -> Footprint {
    let mut a = FootprintAnalysis::new(Options::default(), &[]).unwrap();
    batches.iter().for_each(|b| a.observe(b));
    a.finish()
}

/// (windows, total length) per footprint 1..=max, over every window.
fn brute_fill(lines: &[u64], max: usize) -> Vec<(u64, u128)> {
    let mut out = vec![(0u64, 0u128); max];
    for s in 0..lines.len() {
        let mut seen = HashSet::new();
        for (e, &line) in lines.iter().enumerate().skip(s) {
            seen.insert(line);
            if seen.len() > max {
                break;
            }
            let v = seen.len() - 1;
            out[v].0 += 1;
            out[v].1 += (e - s + 1) as u128;
        }
    }
    out
}

fn direct(lines: &[u64], max: usize) -> hotl::DirectFillTime {
    let mut a = DirectFillTimeAnalysis::new(Options::default(), max).unwrap();
    a.observe(&batch_of(lines));
    a.finish()
}

#[test]
fn the_papers_direct_fill_time_counterexample() {
    // HOTL §4.4: 100 a's, 11 b's, 1 c, 20 d's, 15 e's, 1 f, 320 g's.
    let mut lines = Vec::new();
    for (line, count) in [
        (0u64, 100),
        (1, 11),
        (2, 1),
        (3, 20),
        (4, 15),
        (5, 1),
        (6, 320),
    ] {
        lines.extend(std::iter::repeat_n(line, count));
    }
    // By the definition (all windows of footprint exactly v, HOTL §2.3) the trace has
    // vt(4) = 1348612/8566 ≈ 157.44 and vt(5) = 199423/1831 ≈ 108.91 (counted by an
    // independent enumeration of all windows); the paper prints 161.5 and 149.5, which no
    // reading we tried reproduces, but the point stands and is sharper: vt(4) > vt(5).
    let d = direct(&lines, 7);
    assert_eq!(
        (d.volumes[3].windows, d.volumes[3].total_length),
        (8566, 1_348_612)
    );
    assert_eq!(
        (d.volumes[4].windows, d.volumes[4].total_length),
        (1831, 199_423)
    );
    assert!(d.volumes[3].fill_time() > d.volumes[4].fill_time());
    assert_eq!(d.decreasing(), [2, 4, 5]);
    // The Filmer fill time of the same trace rises with the volume.
    let fp = footprint_of(&[batch_of(&lines)]);
    let points = d.compare(&Filmer::new(&fp));
    let filmer: Vec<f64> = points.iter().map(|p| p.filmer.unwrap()).collect();
    assert!(filmer.windows(2).all(|w| w[0] < w[1]), "{filmer:?}");
    // §2.3: "abbc" has vt_direct(1) = 6/5 (windows a, b, b, bb, c), vt_Filmer(1) = 1.
    let d = direct(&[0, 1, 1, 2], 3);
    assert_eq!(d.volumes[0].windows, 5);
    assert_eq!(d.volumes[0].fill_time(), Some(1.2));
    assert!(DirectFillTimeAnalysis::new(Options::default(), 0).is_err());
}

proptest! {
    #[test]
    fn direct_fill_time_equals_brute_force(
        lines in proptest::collection::vec(0u64..9, 1..120),
        max in 1usize..12,
    ) {
        let d = direct(&lines, max);
        let want = brute_fill(&lines, max);
        for (v, (w, l)) in d.volumes.iter().zip(want) {
            prop_assert_eq!((v.windows, v.total_length), (w, l), "volume {}", v.volume);
        }
    }

    /// rfp(l) is the mean reuse distance (distinct lines in j..=i) of the reuses of length l.
    #[test]
    fn reuse_windows_equal_brute_force(lines in proptest::collection::vec(0u64..15, 2..300)) {
        let b = batch_of(&lines);
        let mut a = ReuseWindowAnalysis::new(Options::default(), 1.0).unwrap();
        a.observe(&b);
        let check = a.finish().check(&footprint_of(&[b]));
        // Brute force: per length l < 64, Σ rd and count.
        let mut per = vec![(0u64, 0u64); 64];
        for i in 0..lines.len() {
            if let Some(j) = (0..i).rev().find(|&j| lines[j] == lines[i]) {
                let l = i - j + 1;
                if l < 64 {
                    let rd = lines[j..=i].iter().collect::<HashSet<_>>().len() as u64;
                    per[l].0 += rd;
                    per[l].1 += 1;
                }
            }
        }
        let exact: Vec<_> = check.points.iter().filter(|p| p.window < 64.0).collect();
        let want: Vec<_> = per.iter().enumerate().filter(|(_, c)| c.1 > 0).collect();
        prop_assert_eq!(exact.len(), want.len());
        for (p, (l, (sum, n))) in exact.iter().zip(want) {
            prop_assert_eq!(p.window, l as f64);
            prop_assert_eq!(p.reuses, *n);
            prop_assert!((p.rfp - *sum as f64 / *n as f64).abs() < 1e-9);
            prop_assert!((p.divergence - (p.rfp - p.fp)).abs() < 1e-12);
        }
    }
}

fn check(batches: &[Batch], rate: f64) -> ReuseWindowCheck {
    let mut a = ReuseWindowAnalysis::new(Options::default(), rate).unwrap();
    batches.iter().for_each(|b| a.observe(b));
    a.finish().check(&footprint_of(batches))
}

#[test]
fn reuse_window_examples_and_divergence() {
    // §2.7's table: wwwx has fp(2) = 4/3 and rfp(2) = 1; wwwwx 5/4 and 1.
    for (lines, fp2) in [
        (&[0u64, 0, 0, 1][..], 4.0 / 3.0),
        (&[0, 0, 0, 0, 1], 5.0 / 4.0),
    ] {
        let c = check(&[batch_of(lines)], 1.0);
        let p = c.points.iter().find(|p| p.window == 2.0).unwrap();
        assert_eq!((p.rfp, p.reuses), (1.0, lines.len() as u64 - 2));
        assert!((p.fp - fp2).abs() < 1e-12 && (p.divergence - (1.0 - fp2)).abs() < 1e-12);
    }
    assert!(ReuseWindowAnalysis::new(Options::default(), 0.0).is_err());
    assert!(ReuseWindowAnalysis::new(Options::default(), 1.5).is_err());
    // Uniform random reuses see typical windows: the hypothesis holds. The phases workload
    // breaks it: its loop phase's reuses (length 257) hold its 256 lines, while the average
    // window of that length holds far fewer, since the stream phase's windows of 257 loads
    // cover only 33 lines. Sampling 1 line in 8 estimates the same picture.
    let random = batches(
        Workload::Random,
        &Params {
            lines: 4096,
            refs: Some(400_000),
            ..Params::default()
        },
    );
    let phases = batches(
        Workload::Phases,
        &Params {
            lines: 4096,
            ..Params::default()
        },
    );
    let (r, p) = (check(&random, 1.0), check(&phases, 1.0));
    let (rs, ps) = (check(&random, 0.125), check(&phases, 0.125));
    println!(
        "weighted relative divergence: random {:.4} (sampled {:.4}), phases {:.4} (sampled {:.4})",
        r.weighted_relative_divergence,
        rs.weighted_relative_divergence,
        p.weighted_relative_divergence,
        ps.weighted_relative_divergence
    );
    assert!(r.weighted_relative_divergence < 0.02);
    assert!(p.weighted_relative_divergence > 0.2);
    assert!(rs.weighted_relative_divergence < 0.1);
    assert!((ps.weighted_relative_divergence - p.weighted_relative_divergence).abs() < 0.1);
    // Where phases errs: the loop phase's 256-line reuses, where rfp ≫ fp.
    let worst = p
        .points
        .iter()
        .max_by(|a, b| {
            (a.reuses as f64 * a.divergence.abs())
                .total_cmp(&(b.reuses as f64 * b.divergence.abs()))
        })
        .unwrap();
    println!(
        "phases: largest weighted divergence at l ≈ {:.0}: rfp {:.1}, fp {:.1}",
        worst.window, worst.rfp, worst.fp
    );
    assert!(worst.divergence > 50.0 && (256.0..260.0).contains(&worst.window));
}

fn sample(
    batches: &[Batch],
    fill_lines: u64,
    period: u64,
    sizes: &[u64],
) -> hotl::SampledFootprint {
    let mut s = FootprintSampler::new(SamplingOptions {
        reuse: Options::default(),
        fill_lines,
        period,
        max_sample_refs: period / 2,
        seed: 7,
        sizes_bytes: sizes.to_vec(),
    })
    .unwrap();
    batches.iter().for_each(|b| s.observe(b));
    s.finish()
}

/// Mean absolute difference of warm miss ratios in percentage points.
fn warm_error(a: &cachescope::reuse::Mrc, b: &cachescope::reuse::Mrc) -> f64 {
    let d: f64 = a
        .points
        .iter()
        .zip(&b.points)
        .map(|(p, q)| (p.miss_ratio_warm - q.miss_ratio_warm).abs())
        .sum();
    100.0 * d / a.points.len() as f64
}

#[test]
fn sampling_estimates_the_whole_trace_curve() {
    let p = Params {
        lines: 8192,
        refs: Some(4_000_000),
        ..Params::default()
    };
    let sizes = sizes_log_range(64 * 64, 64 * 6144, 16).unwrap();
    for w in [Workload::Random, Workload::Zipf] {
        let trace = batches(w, &p);
        let full = hotl::mrc(&footprint_of(&trace), &sizes);
        let s = sample(&trace, 6144, 400_000, &sizes);
        let (e1, e2) = (
            warm_error(&s.per_sample, &full),
            warm_error(&s.averaged, &full),
        );
        println!(
            "{w}: {} samples ({} filled), coverage {:.3}: per-sample curves {e1:.3} pp, averaged footprint {e2:.3} pp",
            s.samples, s.filled_samples, s.coverage
        );
        assert_eq!(s.refs, 4_000_000);
        assert_eq!(s.samples + s.skipped_starts, 10);
        assert!((s.coverage - s.sampled_refs as f64 / s.refs as f64).abs() < 1e-15);
        assert!(s.coverage < 0.5, "coverage {}", s.coverage);
        assert!(e1 < 1.0 && e2 < 1.0);
        assert!(s.per_sample.points.iter().all(|p| p.miss_ratio.is_none()));
    }
}

#[test]
fn sampling_follows_its_options() {
    let trace = batches(
        Workload::Loop,
        &Params {
            lines: 100,
            refs: Some(10_000),
            ..Params::default()
        },
    );
    // Samples fill 50 lines (64-reference granularity: the first chunk reaches them), one per
    // 1000 references.
    let s = sample(&trace, 50, 1000, &[64 * 10, 64 * 200]);
    assert_eq!((s.samples, s.filled_samples, s.refs), (10, 10, 10_000));
    assert_eq!(s.sampled_refs, 640);
    // A loop over 100 lines, seen through 64-reference windows: every reference is new to
    // its sample, so every cache misses.
    assert!(
        s.per_sample
            .points
            .iter()
            .all(|p| (p.miss_ratio_warm - 1.0).abs() < 1e-12)
    );
    let bad = |o: SamplingOptions| FootprintSampler::new(o).is_err();
    let ok = SamplingOptions {
        reuse: Options::default(),
        fill_lines: 1,
        period: 1,
        max_sample_refs: 1,
        seed: 0,
        sizes_bytes: vec![64],
    };
    assert!(!bad(ok.clone()));
    assert!(bad(SamplingOptions {
        fill_lines: 0,
        ..ok.clone()
    }));
    assert!(bad(SamplingOptions {
        period: 0,
        ..ok.clone()
    }));
    assert!(bad(SamplingOptions {
        max_sample_refs: 0,
        ..ok.clone()
    }));
    assert!(bad(SamplingOptions {
        sizes_bytes: vec![],
        ..ok
    }));
}
