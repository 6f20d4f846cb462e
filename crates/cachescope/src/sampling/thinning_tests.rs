//! The thinned sampler: a fixed number of samples whatever the stream's length (10^8 distinct
//! lines), and the samples kept are exactly the drawn ones that pass the final level.

use super::thinning::Thinning;
use super::*;
use crate::access::AccessKind;
use crate::analysis::Analysis;
use crate::batch::{Batch, NO_PC};

/// Feeds `n` loads, the line of reference `i` given by `line(i)`, in batches of 4096; `each`
/// sees the sampler after every batch.
fn feed(s: &mut Sampler, n: u64, line: impl Fn(u64) -> u64, mut each: impl FnMut(&Sampler)) {
    let mut b = Batch::new();
    let mut i = 0;
    while i < n {
        b.clear();
        for _ in 0..4096.min(n - i) {
            b.push_raw(line(i) << 6, 8, AccessKind::Load, NO_PC);
            i += 1;
        }
        s.observe(&b);
        each(s);
    }
}

fn options(rate: f64) -> SamplerOptions {
    SamplerOptions {
        rate,
        seed: 3,
        ..SamplerOptions::default()
    }
}

#[test]
fn a_stream_of_ten_to_the_eight_distinct_lines_keeps_the_cap() {
    // 10^8 references to 10^8 distinct lines: 10^5 samples drawn at 10^-3, every one a
    // watchpoint that never fires; at most about 2048 kept.
    let cap = 2048;
    let mut s = Sampler::new(options(1e-3)).unwrap().with_max_samples(cap);
    let (mut most, mut bytes) = (0, 0);
    feed(
        &mut s,
        100_000_000,
        |i| i,
        |s| {
            most = most.max(s.samples());
            bytes = bytes.max(s.heap_bytes());
        },
    );
    assert!(most <= cap + cap / 8, "{most} samples held");
    // The filter's 64 Ki bits at least, the map, no sample list.
    assert!(bytes < 1 << 20, "{bytes} bytes");
    let p = s.finish();
    assert_eq!(p.refs(), 100_000_000);
    assert!(p.samples().len() as u64 > cap / 2 && p.samples().len() as u64 <= cap + cap / 8);
    assert_eq!(p.dangling(), p.samples().len() as u64);
    // 10^5 expected over 2048: six halvings.
    assert_eq!(p.rate(), 1e-3 / 64.0);
}

#[test]
fn the_kept_samples_are_the_drawn_ones_that_pass_the_last_level() {
    // Reuses over 5000 lines (a cyclic loop and a random walk), long enough to thin 4 times.
    let line = |i: u64| {
        if i % 3 == 0 {
            i % 5000
        } else {
            (i * 2_654_435_761) % 5000
        }
    };
    let (n, cap) = (2_000_000, 120);
    let mut all = Sampler::new(options(1e-3))
        .unwrap()
        .with_max_samples(u64::MAX);
    feed(&mut all, n, line, |_| {});
    let mut thin = Sampler::new(options(1e-3)).unwrap().with_max_samples(cap);
    feed(&mut thin, n, line, |_| {});
    let t = Thinning::new(3, cap);
    let level = t.level(1e-3, n);
    assert_eq!(level, 5);
    let whole = all.finish();
    let expected: Vec<Sample> = whole
        .samples()
        .iter()
        .copied()
        .filter(|s| t.keeps(s.position, level))
        .collect();
    let p = thin.finish();
    assert_eq!(p.samples(), expected);
    assert!(p.reuses() > 0 && p.rate() == 1e-3 / 32.0);
    // The chunked sampler's way: every sample kept, thinned at the end.
    assert_eq!(whole.thinned(cap), p);
}

#[test]
fn short_streams_are_not_thinned() {
    let line = |i: u64| (i * 7) % 300;
    let mut bounded = Sampler::new(options(1e-2)).unwrap();
    feed(&mut bounded, 200_000, line, |_| {});
    let mut free = Sampler::new(options(1e-2))
        .unwrap()
        .with_max_samples(u64::MAX);
    feed(&mut free, 200_000, line, |_| {});
    assert_eq!(bounded.finish(), free.finish());
}

/// The decaying sampler (one thread's, `Sampler::decaying`): every reference up to the cap,
/// then a uniform sample of the whole stream at `2^-L` holding between half the cap and the
/// cap, each sample's distance exact (brute force over a cyclic stream of 500 lines).
#[test]
fn a_decaying_sampler_samples_everything_then_uniformly_at_the_final_level() {
    let cap = 1000;
    let mut short = Sampler::decaying(options(0.5), cap).unwrap();
    feed(&mut short, 900, |i| i % 37, |_| {});
    let p = short.finish();
    assert_eq!((p.rate(), p.samples().len()), (1.0, 900));
    let n = 200_000u64;
    let mut s = Sampler::decaying(options(0.5), cap).unwrap();
    feed(&mut s, n, |i| i % 500, |_| {});
    let p = s.finish();
    // 200 000 over 1000 is over 2^7: level 8.
    assert_eq!(p.rate(), 1.0 / 256.0);
    let k = p.samples().len() as u64;
    assert!(k > cap / 2 && k <= cap + cap / 8, "{k} samples");
    // Uniform: as many in the first half of the stream as in the second, within 5 sigma.
    let first = p.samples().iter().filter(|s| s.position <= n / 2).count() as f64;
    assert!(
        (first - k as f64 / 2.0).abs() < 5.0 * (k as f64 / 4.0).sqrt(),
        "{first} of {k}"
    );
    for smp in p.samples() {
        match smp.next {
            NextUse::Reuse { distance } => assert_eq!(distance, 499),
            NextUse::Dangling { age } => assert!(smp.position + 500 > n && age == n - smp.position),
        }
    }
}

/// A decaying cursor's draws are the decaying sampler's positions, before its thinning: the
/// Valgrind tool is handed them (`record::tool_sampled`), so a position depends on the seed
/// alone.
#[test]
fn a_decaying_cursor_draws_the_samplers_positions() {
    let cap = 300;
    let n = 50_000u64;
    let mut s = Sampler::decaying(options(1.0), cap)
        .unwrap()
        .with_max_samples(u64::MAX);
    feed(&mut s, n, |i| i, |_| {});
    let drawn: Vec<u64> = s.finish().samples().iter().map(|s| s.position).collect();
    let mut c = SampleCursor::decaying(3, cap);
    let mut want = Vec::new();
    while c.next() <= n {
        want.push(c.next());
        c.skip_to(c.next());
    }
    assert_eq!(drawn, want);
    assert_eq!(&want[..300], &(1..=300).collect::<Vec<u64>>()[..]);
    // Level 1 (301-600) at rate 1/2, level 2 (601-1200) at 1/4: about 150 and 150.
    let l1 = want.iter().filter(|&&j| (301..=600).contains(&j)).count();
    let l2 = want.iter().filter(|&&j| (601..=1200).contains(&j)).count();
    assert!(
        (100..200).contains(&l1) && (100..200).contains(&l2),
        "{l1} {l2}"
    );
}

/// Brute force: [`super::Drops`] gives each sample the first position past it at whose level
/// it is no longer kept, for the sampled report's floored thinning and the plain one (caps
/// small enough that the level rises at least five times within the positions scanned).
#[test]
fn drops_name_the_first_position_a_sample_is_not_kept_at() {
    let n = 20_000u64;
    for (thin, rate) in [
        (Thinning::floored(3, 64, 16, 0.05), 0.05),
        (Thinning::new(7, 10), 0.01),
    ] {
        let drops = super::Drops::new(thin, rate);
        let levels: Vec<u32> = (0..=n).map(|i| thin.level(rate, i)).collect();
        let rises = (2..=n).filter(|&i| levels[i as usize] > levels[i as usize - 1]);
        assert!(rises.count() >= 5);
        let mut never = 0;
        for j in (1..n / 2).step_by(13) {
            let want = (j + 1..=n).find(|&i| !thin.keeps(j, levels[i as usize]));
            let got = drops.first_dropped(j);
            match want {
                Some(i) => assert_eq!(got, i, "j {j}"),
                None => {
                    assert!(got > n, "j {j}: {got}");
                    never += 1;
                }
            }
        }
        // Some samples outlive the positions scanned, and very few the whole count.
        assert!(never > 0);
        let kept_forever = (1..n).filter(|&j| drops.first_dropped(j) == u64::MAX);
        assert!(kept_forever.count() < 10);
    }
}
