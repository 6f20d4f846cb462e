//! The floored sampler of the sampled report's whole stream ([`Sampler::floored`]) against
//! brute force: its profile is the drawn positions that pass the final thinning, each with
//! its next reference found by a scan; each position is kept with probability
//! `max(rate, 2^−D(n))`; its samples stay bounded as the stream grows.

use std::collections::HashMap;

use super::draws::SampleCursor;
use super::thinning::Thinning;
use super::*;
use crate::access::AccessKind;
use crate::analysis::Analysis;
use crate::batch::{Batch, NO_PC};

fn options(rate: f64, seed: u64) -> SamplerOptions {
    SamplerOptions {
        rate,
        seed,
        ..SamplerOptions::default()
    }
}

/// Line of reference `i` (0-based): a loop over `lines` lines, scrambled.
fn line(i: u64, lines: u64) -> u64 {
    (i * 2_654_435_761) % lines
}

fn run(
    opts: SamplerOptions,
    cap: u64,
    n: u64,
    lines: u64,
    mut each: impl FnMut(&Sampler),
) -> Profile {
    let mut s = Sampler::floored(opts, cap).unwrap();
    let mut b = Batch::new();
    let mut i = 0;
    while i < n {
        b.clear();
        for _ in 0..4096.min(n - i) {
            b.push_raw(line(i, lines) << 6, 8, AccessKind::Load, NO_PC);
            i += 1;
        }
        s.observe(&b);
        each(&s);
    }
    s.finish()
}

/// The profile by brute force: every position the floored cursor draws up to `n`, kept if it
/// passes the thinning of `n` references, with its next reference from a backward scan.
fn brute(opts: SamplerOptions, cap: u64, n: u64, lines: u64) -> Profile {
    let mut next = vec![0u64; n as usize + 1];
    let mut last: HashMap<u64, u64> = HashMap::new();
    for j in (1..=n).rev() {
        let l = line(j - 1, lines);
        next[j as usize] = last.insert(l, j).unwrap_or(0);
    }
    let thin = Thinning::floored(opts.seed, MAX_SAMPLES, cap, opts.rate);
    let level = thin.level(opts.rate, n);
    let mut cursor = SampleCursor::floored(&opts, cap);
    let mut samples = Vec::new();
    while cursor.next() <= n {
        let j = cursor.next();
        if thin.keeps(j, level) {
            let i = next[j as usize];
            samples.push(Sample {
                position: j,
                next: if i == 0 {
                    NextUse::Dangling { age: n - j }
                } else {
                    NextUse::Reuse {
                        distance: i - j - 1,
                    }
                },
            });
        }
        cursor.skip_to(j);
    }
    let rate = thin.kept_rate(opts.rate, level);
    Profile::from_sampler(SamplerOptions { rate, ..opts }, n, samples)
}

#[test]
fn the_floored_samplers_profile_is_the_brute_force_one() {
    // cap 1024 at rate 0.01: every reference drawn up to 1024, 2^−D past it, the rate from
    // 1024 · 2^7 references on.
    for (n, want_rate) in [(900, 1.0), (40_000, 1.0 / 64.0), (400_000, 0.01)] {
        for seed in 1..4 {
            let opts = options(0.01, seed);
            let p = run(opts, 1024, n, 5000, |_| {});
            assert_eq!(p.rate(), want_rate, "n {n}");
            assert_eq!(p, brute(opts, 1024, n, 5000), "n {n} seed {seed}");
        }
    }
}

#[test]
fn every_position_is_kept_with_the_final_rate() {
    // 64 seeds of 60 000 references with cap 512 at rate 0.001: q = 2^−7 (60 000 ≤ 512 · 2^7),
    // 469 expected samples a seed. Positions of each sixth of the run (drawn at rates 1 to
    // 2^−7) are kept alike.
    let (n, cap, q) = (60_000u64, 512u64, 1.0 / 128.0);
    let mut by_sixth = [0u64; 6];
    for seed in 1..=64 {
        let p = run(options(1e-3, seed), cap, n, 1 << 30, |_| {});
        assert_eq!(p.rate(), q);
        for s in p.samples() {
            by_sixth[((s.position - 1) * 6 / n) as usize] += 1;
        }
    }
    let expected = 64.0 * n as f64 / 6.0 * q;
    for (k, &c) in by_sixth.iter().enumerate() {
        let c = c as f64;
        assert!(
            (c - expected).abs() < 5.0 * expected.sqrt(),
            "sixth {k}: {c} vs {expected}"
        );
    }
}

#[test]
fn a_short_run_gets_the_floor_and_a_long_one_the_rate() {
    // The rate alone would give 20 samples of 2000 references; the floor every one.
    let short = run(options(0.01, 2), REPORT_FLOOR, 2000, 300, |_| {});
    assert_eq!(short.samples().len(), 2000);
    // Past cap / rate the rate's share, and samples held stay under twice the final count
    // (plus a batch's draws) all along.
    let (cap, rate, n) = (256u64, 0.01, 2_000_000u64);
    let mut most = 0u64;
    let p = run(options(rate, 3), cap, n, 1 << 40, |s| {
        let due = (rate * s.refs() as f64).max(cap as f64);
        most = most.max(s.samples());
        assert!(
            (s.samples() as f64) < 2.0 * due + 4096.0,
            "{} at {}",
            s.samples(),
            s.refs()
        );
    });
    assert_eq!(p.rate(), rate);
    let k = p.samples().len() as f64;
    assert!(
        (k - rate * n as f64).abs() < 5.0 * (rate * n as f64).sqrt(),
        "{k}"
    );
    assert!(most > 0);
}

/// Told the run's length ahead ([`Sampler::expect_refs`]), the sampler with its windows gives
/// the very profile it gives untold, measured distances included, on runs whose thinning
/// climbs several levels (every reference drawn up to the cap, then fewer) and whose windows'
/// counts stay within either budget (reuses of about 300 references).
#[test]
fn told_the_length_ahead_the_profile_is_the_same() {
    let line = |i: u64| (crate::rng::splitmix64(i) >> 40) % 300;
    for (n, seed) in [(3_000u64, 1u64), (50_000, 2), (400_000, 3)] {
        let opts = options(0.01, seed);
        let profile = |ahead: Option<u64>| {
            let mut s = Sampler::floored(opts, 1024).unwrap().with_windows();
            if let Some(a) = ahead {
                s.expect_refs(a);
            }
            let mut b = Batch::new();
            for start in (0..n).step_by(4096) {
                b.clear();
                for i in start..(start + 4096).min(n) {
                    b.push_raw(line(i) << 6, 8, AccessKind::Load, NO_PC);
                }
                s.observe(&b);
            }
            s.finish()
        };
        let untold = profile(None);
        assert!(untold.measured() > 100, "n {n}: {}", untold.measured());
        assert_eq!(profile(Some(n)), untold, "n {n}");
    }
}
